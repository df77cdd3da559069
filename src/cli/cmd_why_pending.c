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
    cli_kube_options_help(out);
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
    if (r == KC_OK) r = cli_kube_list_pods(c, add_pod, b, err);
    if (r == KC_OK) r = kc_list(c, path, 0, add_event, b, err);
    if (r == KC_OK)
        r = kc_list(c, "/apis/node.k8s.io/v1/runtimeclasses", 0, add_runtimeclass, b, err);
    return r;
}

static int run_why_pending(int argc, char **argv)
{
    cli_kube_object o;
    int rc = cli_kube_object_args(argc, argv, "why-pending", true, why_pending_usage,
                                  _("which pod? give NAMESPACE/POD"), &o);
    if (rc >= 0) return rc;
    kc_client *c = NULL;
    if ((rc = cli_kube_connect(&o.kube, &c)) != EXIT_HOLDS) return rc;
    char path[1024], ns[256];
    cli_kube_object_path(c, o.target, "/api/v1/namespaces/%s/pods/%s", path, sizeof path, ns);
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
        return cli_kube_fail(r, &err);
    }
    json_t *report = an_why_pending_finish(b, &err);
    an_why_pending_free(b);
    if (!report) return cli_kube_report_error("out-of-memory", &err, "");
    rc = cli_kube_print_report(report, o.fmt, an_why_pending_render);
    const char *layer = json_string_value(json_object_get(report, "layer"));
    if (rc == EXIT_HOLDS && layer && strcmp(layer, "none") != 0) rc = EXIT_DOES_NOT_HOLD;
    json_decref(report);
    return rc;
}

int cli_cmd_why_pending(int argc, char **argv)
{
    cli_kube_errors_begin();
    return cli_kube_errors_end(run_why_pending(argc, argv), argc, argv, AN_SCHEMA_WHY_PENDING);
}
