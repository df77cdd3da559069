/* gpuop why-pending NAMESPACE/POD | --all [-w]: where the chain from device
 * plugin to a running GPU pod breaks, read top-down on any cluster. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/why_pending.h"
#include "cli/cli.h"
#include "cli/kube_cli.h"

/* How long a watch waits before reading the cluster again anyway: node
 * changes (capacity appearing) do not touch the pod until it is bound. */
#define WATCH_PERIOD_S 10

static void why_pending_usage(FILE *out)
{
    fputs(_("Usage: gpuop why-pending [NAMESPACE/]POD [-w] [-o text|json|lab] [CLUSTER OPTIONS]\n"
            "       gpuop why-pending --all [-w] [-o text|json|lab] [CLUSTER OPTIONS]\n"
            "\n"
            "Reads, top-down, the scheduler's verdict on the pod (its PodScheduled\n"
            "condition and FailedScheduling events, classified per reason), which\n"
            "nodes advertise the resource and how much is free, whether nodes serve\n"
            "it under another name (renamed, MIG), the device plugin pods and their\n"
            "events, the RuntimeClass and whether nodes report its handler, and the\n"
            "kubelet's events; names the layer where the chain breaks and what to\n"
            "look at next on the node. When the scheduler names a taint or a\n"
            "selector, shows the pod's selection against the nodes' labels and\n"
            "taints as kubectl describe does, and the change that would fit.\n"
            "  --all    every Pending pod that asks for an nvidia.com/ resource, in\n"
            "           every namespace, grouped by cause\n"
            "  -w, --watch  print the report, then wait until the verdict changes\n"
            "           and print the new one (the exit status is the new one's)\n"
            "  -o lab   two lines: LAYER= and BLOCKER= (with --all, one line per\n"
            "           cause)\n"
            "\n"
            "Exit status: 0 the pod is scheduled and nothing is wrong (--all: no\n"
            "Pending GPU pod), 1 a layer is broken, 2 cannot tell (no such pod,\n"
            "cluster unreachable; with -o json, an error object on stdout).\n"),
          out);
    cli_kube_options_help(out);
}

typedef struct args {
    kc_options kube;
    an_format fmt;
    const char *target;
    bool all, watch;
} args;

static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->fmt = AN_TEXT;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) {
            why_pending_usage(stdout);
            return EXIT_HOLDS;
        }
        int k = cli_kube_option(argc, argv, &i, &a->kube);
        if (k < 0) return cli_kube_option_error("why-pending", k, arg);
        if (k > 0) continue;
        if (strcmp(arg, "--all") == 0 || strcmp(arg, "-A") == 0) {
            a->all = true;
        } else if (strcmp(arg, "-w") == 0 || strcmp(arg, "--watch") == 0) {
            a->watch = true;
        } else if (strcmp(arg, "-o") == 0) {
            if (i + 1 >= argc || cli_kube_format(argv[++i], true, &a->fmt) != 0)
                return cli_kube_usage("why-pending", "%s", _("-o wants text, json or lab"));
        } else if (arg[0] != '-' && !a->target) {
            a->target = arg;
        } else {
            return cli_kube_usage("why-pending", _("unexpected argument '%s'"), arg);
        }
    }
    if (a->all && a->target)
        return cli_kube_usage("why-pending", "%s", _("give a pod or --all, not both"));
    if (!a->all && !a->target)
        return cli_kube_usage("why-pending", "%s", _("which pod? give NAMESPACE/POD, or --all"));
    if (a->target) {
        const char *slash = strchr(a->target, '/');
        if (slash) {
            char ns[256];
            snprintf(ns, sizeof ns, "%.*s", (int)(slash - a->target), a->target);
            if (!cli_kube_name_ok("why-pending", "namespace", ns)) return EXIT_CANNOT_TELL;
        }
        if (!cli_kube_name_ok("why-pending", "pod", slash ? slash + 1 : a->target))
            return EXIT_CANNOT_TELL;
    }
    return -1;
}

/* ---- one analysis ---- */

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

static kc_result list_events(kc_client *c, const char *ns, kc_item_fn each, void *ud, char *path,
                             size_t size, gp_error *err)
{
    char *ens = kc_escape(ns);
    snprintf(path, size, "/api/v1/namespaces/%s/events", ens ? ens : "");
    free(ens);
    return kc_list(c, path, 0, each, ud, err);
}

/* Everything the analyzer reads: nodes, every pod (reduced to sums as it
 * streams), the events of the pod's namespace and of the device plugin
 * pods' namespaces, the RuntimeClasses. `path` names what failed. */
static kc_result feed_one(kc_client *c, an_why_pending *b, const char *ns, char *path, size_t size,
                          gp_error *err)
{
    snprintf(path, size, "/api/v1/nodes");
    kc_result r = kc_list(c, path, 0, add_node, b, err);
    if (r == KC_OK)
        snprintf(path, size, "/api/v1/pods"), r = cli_kube_list_pods(c, add_pod, b, err);
    if (r == KC_OK) r = list_events(c, ns, add_event, b, path, size, err);
    json_t *plugin_ns = r == KC_OK ? an_why_pending_plugin_namespaces(b) : NULL;
    size_t i;
    json_t *v;
    json_array_foreach(plugin_ns, i, v)
    {
        if (r != KC_OK) break;
        if (strcmp(json_string_value(v), ns) != 0)
            r = list_events(c, json_string_value(v), add_event, b, path, size, err);
    }
    json_decref(plugin_ns);
    if (r == KC_OK) {
        snprintf(path, size, "/apis/node.k8s.io/v1/runtimeclasses");
        r = kc_list(c, path, 0, add_runtimeclass, b, err);
    }
    return r;
}

static int all_node(json_t *item, void *ud)
{
    an_pending_all_add_node(ud, item);
    return 0;
}

static int all_pod(json_t *item, void *ud)
{
    an_pending_all_add_pod(ud, item);
    return 0;
}

static int all_event(json_t *item, void *ud)
{
    an_pending_all_add_event(ud, item);
    return 0;
}

static int all_runtimeclass(json_t *item, void *ud)
{
    an_pending_all_add_runtimeclass(ud, item);
    return 0;
}

static kc_result feed_all(kc_client *c, an_pending_all *b, char *path, size_t size, gp_error *err)
{
    snprintf(path, size, "/api/v1/nodes");
    kc_result r = kc_list(c, path, 0, all_node, b, err);
    if (r == KC_OK)
        snprintf(path, size, "/api/v1/pods"), r = cli_kube_list_pods(c, all_pod, b, err);
    if (r == KC_OK)
        snprintf(path, size, "/api/v1/events"), r = kc_list(c, path, 0, all_event, b, err);
    if (r == KC_OK) {
        snprintf(path, size, "/apis/node.k8s.io/v1/runtimeclasses");
        r = kc_list(c, path, 0, all_runtimeclass, b, err);
    }
    return r;
}

/* The report now, or NULL with the error reported (exit 2). *rv gets the
 * pod's resourceVersion (one pod), for the watch to start after it. */
static json_t *analyze(kc_client *c, const args *a, char rv[64])
{
    gp_error err = {0};
    char path[1024], ns[256];
    kc_result r;
    json_t *report = NULL;
    rv[0] = '\0';
    if (a->all) {
        an_pending_all *b = an_pending_all_new(&err);
        r = b ? feed_all(c, b, path, sizeof path, &err) : KC_BAD_RESPONSE;
        if (r == KC_OK) report = an_pending_all_finish(b, &err);
        an_pending_all_free(b);
    } else {
        cli_kube_object_path(c, a->target, "/api/v1/namespaces/%s/pods/%s", path, sizeof path, ns);
        json_t *pod = NULL;
        an_why_pending *b = NULL;
        r = kc_get(c, path, &pod, &err);
        if (r == KC_OK) {
            const char *v = json_string_value(
                json_object_get(json_object_get(pod, "metadata"), "resourceVersion"));
            snprintf(rv, 64, "%s", v ? v : "");
            b = an_why_pending_new(pod, &err);
            r = b ? feed_one(c, b, ns, path, sizeof path, &err) : KC_BAD_RESPONSE;
        }
        if (r == KC_OK) report = an_why_pending_finish(b, &err);
        json_decref(pod);
        an_why_pending_free(b);
    }
    if (r != KC_OK) {
        cli_kube_fail_at(r, &err, path);
        return NULL;
    }
    if (!report) cli_kube_report_error("out-of-memory", &err, "");
    return report;
}

static int exit_code(const args *a, const json_t *report)
{
    if (a->all)
        return json_array_size(json_object_get(report, "groups")) ? EXIT_DOES_NOT_HOLD : EXIT_HOLDS;
    const char *layer = json_string_value(json_object_get(report, "layer"));
    return layer && strcmp(layer, "none") != 0 ? EXIT_DOES_NOT_HOLD : EXIT_HOLDS;
}

/* What "the verdict changes" compares: the layer, the blocker and the
 * verdict (one pod); each cause and its count (--all). */
static char *signature(const args *a, const json_t *report)
{
    json_t *sig = json_array();
    if (a->all) {
        size_t i;
        const json_t *g;
        json_array_foreach(json_object_get(report, "groups"), i, g)
        {
            json_array_append_new(sig, json_pack("[O, O, O]", json_object_get(g, "layer"),
                                                 json_object_get(g, "blocker"),
                                                 json_object_get(g, "count")));
        }
    } else {
        json_array_append(sig, json_object_get(report, "layer"));
        json_array_append(sig, json_object_get(json_object_get(report, "scheduler"), "blocker"));
        json_array_append(sig, json_object_get(report, "verdict"));
    }
    char *text = json_dumps(sig, JSON_COMPACT);
    json_decref(sig);
    return text;
}

/* ---- watching ---- */

/* Wakes on any change of a watched pod; the ADDED events a watch opens
 * with are the state already read. */
static int on_change(const char *type, json_t *object, void *ud)
{
    (void)object, (void)ud;
    return strcmp(type, "MODIFIED") == 0 || strcmp(type, "DELETED") == 0 ||
           strcmp(type, "ERROR") == 0;
}

static kc_result wait_for_change(kc_client *c, const args *a, const char *rv, gp_error *err)
{
    char path[1024];
    if (a->all) {
        snprintf(path, sizeof path, "/api/v1/pods");
    } else {
        const char *slash = strchr(a->target, '/');
        char ns[256];
        if (slash)
            snprintf(ns, sizeof ns, "%.*s", (int)(slash - a->target), a->target);
        else
            snprintf(ns, sizeof ns, "%s", kc_client_config(c)->nspace);
        char *ens = kc_escape(ns), *ename = kc_escape(slash ? slash + 1 : a->target);
        snprintf(path, sizeof path,
                 "/api/v1/namespaces/%s/pods?fieldSelector=metadata.name%%3D%s%s%s", ens ? ens : "",
                 ename ? ename : "", *rv ? "&resourceVersion=" : "", rv);
        free(ens);
        free(ename);
    }
    return kc_watch(c, path, WATCH_PERIOD_S, on_change, NULL, err);
}

static int print(const json_t *report, const args *a)
{
    return cli_kube_print_report(report, a->fmt,
                                 a->all ? an_pending_all_render : an_why_pending_render);
}

static int watch(kc_client *c, const args *a, json_t *report, const char *rv0)
{
    char rv[64];
    snprintf(rv, sizeof rv, "%s", rv0);
    char *before = signature(a, report);
    json_decref(report);
    for (;;) {
        fflush(stdout);
        gp_error err = {0};
        kc_result r = wait_for_change(c, a, rv, &err);
        if (r != KC_OK) {
            free(before);
            return cli_kube_fail_at(r, &err, "watch");
        }
        report = analyze(c, a, rv);
        if (!report) {
            free(before);
            return EXIT_CANNOT_TELL;
        }
        char *now = signature(a, report);
        if (!before || !now || strcmp(before, now) != 0) {
            if (a->fmt == AN_TEXT) fprintf(stdout, "\n%s\n\n", _("--- the verdict changed ---"));
            int rc = print(report, a);
            if (rc == EXIT_HOLDS) rc = exit_code(a, report);
            free(before);
            free(now);
            json_decref(report);
            return rc;
        }
        free(now);
        json_decref(report);
    }
}

static int run_why_pending(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    kc_client *c = NULL;
    if ((rc = cli_kube_connect(&a.kube, &c)) != EXIT_HOLDS) return rc;
    char rv[64];
    json_t *report = analyze(c, &a, rv);
    if (!report) {
        kc_client_free(c);
        return EXIT_CANNOT_TELL;
    }
    rc = print(report, &a);
    if (rc == EXIT_HOLDS) rc = exit_code(&a, report);
    if (rc != EXIT_CANNOT_TELL && a.watch) {
        rc = watch(c, &a, report, rv);
        report = NULL;
    }
    json_decref(report);
    kc_client_free(c);
    return rc;
}

int cli_cmd_why_pending(int argc, char **argv)
{
    bool all = false;
    for (int i = 1; i < argc; i++)
        all = all || strcmp(argv[i], "--all") == 0 || strcmp(argv[i], "-A") == 0;
    cli_kube_errors_begin();
    return cli_kube_errors_end(run_why_pending(argc, argv), argc, argv,
                               all ? AN_SCHEMA_PENDING_ALL : AN_SCHEMA_WHY_PENDING);
}
