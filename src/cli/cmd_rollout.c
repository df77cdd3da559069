/* gpuop rollout NAMESPACE/DAEMONSET: why a DaemonSet rolling update is
 * where it is, with the fields read as evidence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/rollout.h"
#include "cli/cli.h"
#include "cli/kube_cli.h"

static void rollout_usage(FILE *out)
{
    fputs(_("Usage: gpuop rollout [NAMESPACE/]DAEMONSET [-o text|json|lab] [CLUSTER OPTIONS]\n"
            "\n"
            "Desired, updated, ready and available pods, the pods still on the old\n"
            "template, the maxUnavailable budget and who spends it, a per-node fit\n"
            "table for the new pod, each stuck pod's scheduler message classified\n"
            "into a blocker (insufficient-memory, untolerated-taint, ...), and every\n"
            "field read, with its value.\n"
            "  -o lab   the six lines of lab step 8\n"
            "\n"
            "Exit status: 0 rolled out, 1 stalled or still progressing, 2 cannot tell.\n"),
          out);
    kube_cli_options_help(out);
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

static kc_result feed(kc_client *c, an_rollout *b, const char *ens, gp_error *err)
{
    char revisions[512], events[512];
    snprintf(revisions, sizeof revisions, "/apis/apps/v1/namespaces/%s/controllerrevisions", ens);
    snprintf(events, sizeof events, "/api/v1/namespaces/%s/events", ens);
    kc_result r = kc_list(c, revisions, 0, add_revision, b, err);
    if (r == KC_OK) r = kc_list(c, "/api/v1/nodes", 0, add_node, b, err);
    if (r == KC_OK) r = kube_cli_list_pods(c, add_pod, b, err);
    if (r == KC_OK) r = kc_list(c, events, 0, add_event, b, err);
    return r;
}

int cmd_rollout(int argc, char **argv)
{
    kc_options kube = {0};
    an_format fmt = AN_TEXT;
    const char *target = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) {
            rollout_usage(stdout);
            return EXIT_HOLDS;
        }
        int k = kube_cli_option(argc, argv, &i, &kube);
        if (k < 0) return cli_usage_error("rollout", _("%s needs a value"), arg);
        if (k > 0) continue;
        if (strcmp(arg, "-o") == 0) {
            if (i + 1 >= argc || kube_cli_format(argv[++i], true, &fmt) != 0)
                return cli_usage_error("rollout", _("-o wants text, json or lab"));
        } else if (arg[0] != '-' && !target) {
            target = arg;
        } else {
            return cli_usage_error("rollout", _("unexpected argument '%s'"), arg);
        }
    }
    if (!target) return cli_usage_error("rollout", _("which DaemonSet? give NAMESPACE/NAME"));
    kc_client *c = NULL;
    int rc = kube_cli_connect(&kube, &c);
    if (rc != EXIT_HOLDS) return rc;
    const char *slash = strchr(target, '/');
    char ns[256];
    snprintf(ns, sizeof ns, "%.*s", slash ? (int)(slash - target) : 255,
             slash ? target : kc_client_config(c)->nspace);
    char *ens = kc_escape(ns), *ename = kc_escape(slash ? slash + 1 : target);
    char path[1024];
    snprintf(path, sizeof path, "/apis/apps/v1/namespaces/%s/daemonsets/%s", ens, ename);
    gp_error err = {0};
    json_t *ds = NULL;
    an_rollout *b = NULL;
    kc_result r = kc_get(c, path, &ds, &err);
    if (r == KC_OK) {
        b = an_rollout_new(ds, &err);
        r = b ? feed(c, b, ens, &err) : KC_BAD_RESPONSE;
    }
    free(ens);
    free(ename);
    json_decref(ds);
    kc_client_free(c);
    if (r != KC_OK) {
        an_rollout_free(b);
        return kube_cli_fail(r, &err);
    }
    json_t *report = an_rollout_finish(b, &err);
    an_rollout_free(b);
    if (!report) {
        cli_report(&err);
        return EXIT_CANNOT_TELL;
    }
    rc = kube_cli_print_report(report, fmt, an_rollout_render);
    const char *state =
        json_string_value(json_object_get(json_object_get(report, "verdict"), "state"));
    if (rc == EXIT_HOLDS && state && strcmp(state, "complete") != 0) rc = EXIT_DOES_NOT_HOLD;
    json_decref(report);
    return rc;
}
