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
            "Per node: capacity and allocatable of the resource (default\n"
            "nvidia.com/gpu), what pods on it request, the GPU Feature Discovery\n"
            "labels and readiness. Flags a Ready node whose resource reads 0 (the\n"
            "device plugin registered and is gone), GPU labels without the\n"
            "resource (never registered), and a node that still takes GPU pods\n"
            "without the driver-version label.\n"
            "  -o lab   the two-column table of lab step 6\n"
            "\n"
            "Exit status: 0 nothing flagged, 1 a node is flagged, 2 cannot tell.\n"),
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

int cli_cmd_nodes(int argc, char **argv)
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
            return cli_usage_error("nodes", _("%s needs a value"), arg);
        if (strcmp(arg, "--resource") == 0) {
            resource = argv[++i];
        } else if (strcmp(arg, "-o") == 0) {
            if (cli_kube_format(argv[++i], true, &fmt) != 0)
                return cli_usage_error("nodes", _("unknown output format '%s' (text, json or lab)"),
                                       argv[i]);
        } else {
            return cli_usage_error("nodes", _("unexpected argument '%s'"), arg);
        }
    }
    kc_client *c = NULL;
    int rc = cli_kube_connect(&kube, &c);
    if (rc != EXIT_HOLDS) return rc;
    gp_error err = {0};
    an_nodes *b = an_nodes_new(resource, &err);
    kc_result r = b ? kc_list(c, "/api/v1/nodes", 0, add_node, b, &err) : KC_API_ERROR;
    if (r == KC_OK) r = cli_kube_list_pods(c, add_pod, b, &err);
    kc_client_free(c);
    if (r != KC_OK) {
        an_nodes_free(b);
        return cli_kube_fail(r, &err);
    }
    json_t *report = an_nodes_finish(b, &err);
    an_nodes_free(b);
    if (!report) {
        cli_report(&err);
        return EXIT_CANNOT_TELL;
    }
    rc = cli_kube_print_report(report, fmt, an_nodes_render);
    if (rc == EXIT_HOLDS) {
        const json_t *summary = json_object_get(report, "summary");
        if (json_integer_value(json_object_get(summary, "flagged")) > 0) rc = EXIT_DOES_NOT_HOLD;
    }
    json_decref(report);
    return rc;
}
