/* gpuop nodes: GPU advertisement per node, on any cluster a kubeconfig
 * reaches. Nodes and pods are streamed page by page into the analyzer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/nodes.h"
#include "cli/cli.h"
#include "cli/kube_cli.h"

static void nodes_usage(FILE *out)
{
    fputs(_("Usage: gpuop nodes [--resource NAME] [-o text|json|lab] [CLUSTER OPTIONS]\n"
            "\n"
            "Per node: its status as kubectl shows it (NotReady, SchedulingDisabled),\n"
            "capacity and allocatable of the resource (default nvidia.com/gpu),\n"
            "what pods on it request, what is free (nothing on a cordoned or\n"
            "NotReady node), every other GPU resource it advertises (gpu.shared,\n"
            "mig-*), the GPU Feature Discovery labels, its device plugin pod and\n"
            "the GPU Operator's gates and MIG and driver upgrade states.\n"
            "Errors: a NotReady GPU node, a Ready node whose resource reads 0 (the\n"
            "device plugin registered and is gone), GPU labels without the resource\n"
            "(never registered), unhealthy devices, a node that still takes GPU\n"
            "pods without the driver-version label, an operator gate that keeps the\n"
            "device plugin away or a failed MIG layout or driver upgrade, and Pending\n"
            "pods asking for a resource the nodes serve under another name.\n"
            "Warnings: a cordoned node, a renamed resource (renameByDefault) or MIG\n"
            "devices, the driver gate off, a GPU node without a device plugin pod.\n"
            "  -o lab   the two-column table of lab step 6\n"
            "\n"
            "Exit status: 0 no error (warnings aside), 1 a node has an error, 2\n"
            "cannot tell (with -o json, an error object on stdout).\n"),
          out);
    cli_kube_options_help(out);
}

static int add_node(json_t *item, void *ud)
{
    an_nodes_add_node(ud, item);
    return 0;
}

static int add_pod(json_t *item, void *ud)
{
    an_nodes_add_pod(ud, item);
    return 0;
}

static int run_nodes(int argc, char **argv)
{
    kc_options kube = {0};
    const char *resource = "nvidia.com/gpu";
    an_format fmt = AN_TEXT;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) {
            nodes_usage(stdout);
            return EXIT_HOLDS;
        }
        int k = cli_kube_option(argc, argv, &i, &kube);
        if (k < 0) return cli_kube_option_error("nodes", k, arg);
        if (k > 0) continue;
        if ((strcmp(arg, "--resource") == 0 || strcmp(arg, "-o") == 0) && i + 1 >= argc)
            return cli_kube_usage("nodes", _("%s needs a value"), arg);
        if (strcmp(arg, "--resource") == 0) {
            resource = argv[++i];
        } else if (strcmp(arg, "-o") == 0) {
            if (cli_kube_format(argv[++i], true, &fmt) != 0)
                return cli_kube_usage("nodes", _("unknown output format '%s' (text, json or lab)"),
                                      argv[i]);
        } else {
            return cli_kube_usage("nodes", _("unexpected argument '%s'"), arg);
        }
    }
    kc_client *c = NULL;
    int rc = cli_kube_connect(&kube, &c);
    if (rc != EXIT_HOLDS) return rc;
    gp_error err = {0};
    an_nodes *b = an_nodes_new(resource, &err);
    const char *path = "/api/v1/nodes";
    kc_result r = b ? kc_list(c, path, 0, add_node, b, &err) : KC_BAD_RESPONSE;
    if (r == KC_OK) r = cli_kube_list_pods(c, add_pod, b, &err), path = "/api/v1/pods";
    kc_client_free(c);
    if (r != KC_OK) {
        an_nodes_free(b);
        return cli_kube_fail_at(r, &err, path);
    }
    json_t *report = an_nodes_finish(b, &err);
    an_nodes_free(b);
    if (!report) return cli_kube_report_error("out-of-memory", &err, "");
    rc = cli_kube_print_report(report, fmt, an_nodes_render);
    if (rc == EXIT_HOLDS) {
        const json_t *summary = json_object_get(report, "summary");
        if (json_integer_value(json_object_get(summary, "flagged")) > 0) rc = EXIT_DOES_NOT_HOLD;
    }
    json_decref(report);
    return rc;
}

int cli_cmd_nodes(int argc, char **argv)
{
    cli_kube_errors_begin();
    return cli_kube_errors_end(run_nodes(argc, argv), argc, argv, AN_SCHEMA_NODES);
}
