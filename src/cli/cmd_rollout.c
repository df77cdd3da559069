/* gpuop rollout NAMESPACE/DAEMONSET: why a DaemonSet rolling update is
 * where it is, with the fields read as evidence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/rollout.h"
#include "cli/cli.h"
#include "cli/kube_cli.h"

static void rollout_usage(FILE *out)
{
    fputs(_("Usage: gpuop rollout [NAMESPACE/]DAEMONSET [-o text|json|lab] [CLUSTER OPTIONS]\n"
            "\n"
            "Desired, updated, ready and available pods, the pods still on the old\n"
            "template, the maxUnavailable budget and who spends it, a per-node fit\n"
            "table for the new pod, each stuck pod's scheduler message or kubelet\n"
            "event classified into a blocker (insufficient-memory, untolerated-taint,\n"
            "runtime-handler-missing, ...), the controller's FailedCreate when it\n"
            "cannot create pods (runtimeclass-missing, pod-create-forbidden, ...),\n"
            "and every field read, with its value.\n"
            "  -o lab   the six lines of lab step 8\n"
            "\n"
            "Exit status: 0 rolled out, 1 stalled or still progressing, 2 cannot tell\n"
            "(with -o json, an error object on stdout).\n"),
          out);
    cli_kube_options_help(out);
}

static int add_node(json_t *item, void *ud)
{
    an_rollout_add_node(ud, item);
    return 0;
}

static int add_pod(json_t *item, void *ud)
{
    an_rollout_add_pod(ud, item);
    return 0;
}

static int add_event(json_t *item, void *ud)
{
    an_rollout_add_event(ud, item);
    return 0;
}

static int add_revision(json_t *item, void *ud)
{
    an_rollout_add_revision(ud, item);
    return 0;
}

static kc_result feed(kc_client *c, an_rollout *b, const char *ns, gp_error *err)
{
    char *ens = kc_escape(ns);
    char revisions[512], events[512];
    snprintf(revisions, sizeof revisions, "/apis/apps/v1/namespaces/%s/controllerrevisions", ens);
    snprintf(events, sizeof events, "/api/v1/namespaces/%s/events", ens);
    free(ens);
    kc_result r = kc_list(c, revisions, 0, add_revision, b, err);
    if (r == KC_OK) r = kc_list(c, "/api/v1/nodes", 0, add_node, b, err);
    if (r == KC_OK) r = cli_kube_list_pods(c, add_pod, b, err);
    if (r == KC_OK) r = kc_list(c, events, 0, add_event, b, err);
    return r;
}

static int run_rollout(int argc, char **argv)
{
    cli_kube_object o;
    int rc = cli_kube_object_args(argc, argv, "rollout", true, rollout_usage,
                                  _("which DaemonSet? give NAMESPACE/NAME"), &o);
    if (rc >= 0) return rc;
    kc_client *c = NULL;
    if ((rc = cli_kube_connect(&o.kube, &c)) != EXIT_HOLDS) return rc;
    char path[1024], ns[256];
    cli_kube_object_path(c, o.target, "/apis/apps/v1/namespaces/%s/daemonsets/%s", path,
                         sizeof path, ns);
    gp_error err = {0};
    json_t *ds = NULL;
    an_rollout *b = NULL;
    kc_result r = kc_get(c, path, &ds, &err);
    if (r == KC_OK) {
        b = an_rollout_new(ds, &err);
        /* minReadySeconds counts from now, as the controller counts it */
        if (b) an_rollout_set_now(b, time(NULL));
        r = b ? feed(c, b, ns, &err) : KC_BAD_RESPONSE;
    }
    json_decref(ds);
    kc_client_free(c);
    if (r != KC_OK) {
        an_rollout_free(b);
        return cli_kube_fail(r, &err);
    }
    json_t *report = an_rollout_finish(b, &err);
    an_rollout_free(b);
    if (!report) return cli_kube_report_error("out-of-memory", &err, "");
    rc = cli_kube_print_report(report, o.fmt, an_rollout_render);
    const char *state =
        json_string_value(json_object_get(json_object_get(report, "verdict"), "state"));
    if (rc == EXIT_HOLDS && state && strcmp(state, "complete") != 0) rc = EXIT_DOES_NOT_HOLD;
    json_decref(report);
    return rc;
}

int cli_cmd_rollout(int argc, char **argv)
{
    cli_kube_errors_begin();
    return cli_kube_errors_end(run_rollout(argc, argv), argc, argv, AN_SCHEMA_ROLLOUT);
}
