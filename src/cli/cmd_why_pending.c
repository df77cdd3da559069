/* gpuop why-pending NAMESPACE/POD: where the chain from device plugin to a
 * running GPU pod breaks, read top-down on any cluster. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/why_pending.h"
#include "cli/cli.h"
#include "cli/kube_cli.h"

static void why_pending_usage(FILE *out)
{
    fputs(_("Usage: gpuop why-pending [NAMESPACE/]POD [-o text|json|lab] [CLUSTER OPTIONS]\n"
            "\n"
            "Reads, top-down, the scheduler's verdict on the pod (its PodScheduled\n"
            "condition and FailedScheduling events, classified per reason), which\n"
            "nodes advertise the resource and how much is free, the device plugin\n"
            "pods, the RuntimeClass and whether nodes report its handler, and the\n"
            "kubelet's events; names the layer where the chain breaks and what to\n"
            "look at next on the node.\n"
            "  -o lab   two lines: LAYER= and BLOCKER=\n"
            "\n"
            "Exit status: 0 the pod is scheduled and nothing is wrong, 1 a layer is\n"
            "broken, 2 cannot tell (no such pod, cluster unreachable).\n"),
          out);
    kube_cli_options_help(out);
}

static int add_node(json_t *item, void *ud)
{
    an_why_pending_add_node(ud, item);
    return 0;
}

static int add_pod(json_t *item, void *ud)
{
    an_why_pending_add_pod(ud, item);
    return 0;
}

static int add_event(json_t *item, void *ud)
{
    an_why_pending_add_event(ud, item);
    return 0;
}

static int add_runtimeclass(json_t *item, void *ud)
{
    an_why_pending_add_runtimeclass(ud, item);
    return 0;
}

/* Everything the analyzer reads: nodes, every pod (reduced to sums as it
 * streams), the pod's namespace's events, the RuntimeClasses. */
static kc_result feed(kc_client *c, an_why_pending *b, const char *ns, gp_error *err)
{
    char *ens = kc_escape(ns);
    char path[512];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/events", ens);
    free(ens);
    kc_result r = kc_list(c, "/api/v1/nodes", 0, add_node, b, err);
    if (r == KC_OK) r = kube_cli_list_pods(c, add_pod, b, err);
    if (r == KC_OK) r = kc_list(c, path, 0, add_event, b, err);
    if (r == KC_OK)
        r = kc_list(c, "/apis/node.k8s.io/v1/runtimeclasses", 0, add_runtimeclass, b, err);
    return r;
}

int cmd_why_pending(int argc, char **argv)
{
    kc_options kube = {0};
    an_format fmt = AN_TEXT;
    const char *target = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) {
            why_pending_usage(stdout);
            return EXIT_HOLDS;
        }
        int k = kube_cli_option(argc, argv, &i, &kube);
        if (k < 0) return cli_usage_error("why-pending", _("%s needs a value"), arg);
        if (k > 0) continue;
        if (strcmp(arg, "-o") == 0) {
            if (i + 1 >= argc || kube_cli_format(argv[++i], true, &fmt) != 0)
                return cli_usage_error("why-pending", _("-o wants text, json or lab"));
        } else if (arg[0] != '-' && !target) {
            target = arg;
        } else {
            return cli_usage_error("why-pending", _("unexpected argument '%s'"), arg);
        }
    }
    if (!target) return cli_usage_error("why-pending", _("which pod? give NAMESPACE/POD"));
    kc_client *c = NULL;
    int rc = kube_cli_connect(&kube, &c);
    if (rc != EXIT_HOLDS) return rc;
    char ns[256], name[256];
    const char *slash = strchr(target, '/');
    if (slash) {
        snprintf(ns, sizeof ns, "%.*s", (int)(slash - target), target);
        snprintf(name, sizeof name, "%s", slash + 1);
    } else {
        snprintf(ns, sizeof ns, "%s", kc_client_config(c)->nspace);
        snprintf(name, sizeof name, "%s", target);
    }
    char *ens = kc_escape(ns), *ename = kc_escape(name);
    char path[1024];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", ens, ename);
    free(ens);
    free(ename);
    gp_error err = {0};
    json_t *pod = NULL;
    kc_result r = kc_get(c, path, &pod, &err);
    an_why_pending *b = NULL;
    if (r == KC_OK) {
        b = an_why_pending_new(pod, &err);
        r = b ? feed(c, b, ns, &err) : KC_BAD_RESPONSE;
    }
    json_decref(pod);
    kc_client_free(c);
    if (r != KC_OK) {
        an_why_pending_free(b);
        return kube_cli_fail(r, &err);
    }
    json_t *report = an_why_pending_finish(b, &err);
    an_why_pending_free(b);
    if (!report) {
        cli_report(&err);
        return EXIT_CANNOT_TELL;
    }
    rc = kube_cli_print_report(report, fmt, an_why_pending_render);
    const char *layer = json_string_value(json_object_get(report, "layer"));
    if (rc == EXIT_HOLDS && layer && strcmp(layer, "none") != 0) rc = EXIT_DOES_NOT_HOLD;
    json_decref(report);
    return rc;
}
