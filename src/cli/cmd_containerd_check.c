/* gpuop containerd check [HANDLER] [--source auto|daemon|node|dump] [--address SOCK]
 *                        [--node NAME [CLUSTER OPTIONS]] [-o text|json] [--prometheus]
 *
 * Is a runtime handler loaded? Asked of containerd itself, never of its
 * config files, from the most truthful witness that answers
 * (containerd/handler_check.h): the running daemon's CRI Status, the node's
 * status.runtimeHandlers, or `containerd config dump`, which only predicts
 * what a restart would load. Runs in gpuop-kube: the CRI call is HTTP/2
 * through libcurl, and --node reads the cluster. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/kube_cli.h"
#include "containerd/handler_check.h"
#include "util/msg.h"

typedef struct check_opts {
    cd_check_request req;
    const char *node;
    kc_options kube;
    bool json;
    bool prometheus;
} check_opts;

static void check_usage(FILE *out)
{
    fputs(_("Usage: gpuop containerd check [HANDLER] [--source auto|daemon|node|dump]\n"
            "                              [--address SOCK] [--node NAME [CLUSTER OPTIONS]]\n"
            "                              [-o text|json] [--prometheus]\n"
            "\n"
            "Is runtime HANDLER (default: nvidia) loaded? Asks containerd, never its files,\n"
            "and says which witness answered.\n"
            "\n"
            "  --source auto     (default) the first that can tell: daemon, then node (with\n"
            "                    --node), then dump\n"
            "  --source daemon   the running daemon's CRI Status over its socket (runtime.v1,\n"
            "                    else v1alpha2): the runtimes the kubelet can use now\n"
            "  --source node     the node's status.runtimeHandlers; containerd 2.0 and later\n"
            "                    report them, 1.6 and 1.7 do not (absent proves nothing)\n"
            "  --source dump     `containerd config dump` from PATH: what a restart would load,\n"
            "                    not what is loaded, so the verdict is \"cannot tell\" (exit 2)\n"
            "                    with the prediction\n"
            "  --address SOCK    the daemon's socket (default /run/containerd/containerd.sock)\n"
            "  --node NAME       the Node to read; with the cluster options below\n"
            "  -o json           the verdict and every witness as JSON\n"
            "  --prometheus      print node_exporter textfile metrics instead\n"
            "\n"
            "Also says whether a restart is pending: a config file newer than the daemon's\n"
            "start (/proc of the containerd process serving SOCK).\n"
            "\n"
            "Exit status: 0 loaded, 1 not loaded (a daemon without CRI loads none),\n"
            "2 cannot tell (no witness could, or only the dump could predict).\n"),
          out);
    cli_kube_options_help(out);
}

static int usage_error(const char *fmt, const char *arg)
{
    return cli_usage_error("containerd check", fmt, arg);
}

/* argv[*i] is option `name`, as `NAME VALUE` or `NAME=VALUE`: 1 with *value
 * set (and *i past a separate value), -1 when the value is missing, 0 when
 * argv[*i] is another argument. */
static int option(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n] != '\0') return 0;
    if (*i + 1 >= argc) return -1;
    *value = argv[++*i];
    return 1;
}

/* Returns EXIT_HOLDS when the options are usable; -1 for --help. */
static int parse_args(int argc, char **argv, check_opts *o)
{
    o->req.source = CD_SOURCE_AUTO;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *source = NULL, *format = NULL;
        if (cli_is_help(a)) return -1;
        int k = cli_kube_option(argc, argv, &i, &o->kube);
        if (k == 0) k = option(argc, argv, &i, "--source", &source);
        if (k == 0) k = option(argc, argv, &i, "--address", &o->req.address);
        if (k == 0) k = option(argc, argv, &i, "--node", &o->node);
        if (k == 0) k = option(argc, argv, &i, "-o", &format);
        if (k < 0) return cli_kube_option_error("containerd check", k, a);
        if (source && cd_check_source_parse(source, &o->req.source) != 0)
            return usage_error(_("--source takes auto, daemon, node or dump, not '%s'"), source);
        if (format && strcmp(format, "json") != 0 && strcmp(format, "text") != 0)
            return usage_error(_("unknown output format '%s' (text or json)"), format);
        if (format) o->json = strcmp(format, "json") == 0;
        if (k > 0) continue;
        if (strcmp(a, "--prometheus") == 0)
            o->prometheus = true;
        else if (a[0] == '-')
            return usage_error(_("unknown option '%s'"), a);
        else if (o->req.handler)
            return usage_error("%s", _("containerd check takes one handler"));
        else
            o->req.handler = a;
    }
    if (!o->req.handler) o->req.handler = "nvidia";
    if (!cd_runtime_name_valid(o->req.handler)) {
        cli_error(_("'%s' is not a runtime handler name (letters, digits, '.', '_', '-')"),
                  o->req.handler);
        return EXIT_CANNOT_TELL;
    }
    if (o->req.source == CD_SOURCE_NODE && !o->node)
        return usage_error("%s", _("--source node needs --node NAME"));
    if (o->json && o->prometheus)
        return usage_error("%s", _("-o json and --prometheus exclude each other"));
    return EXIT_HOLDS;
}

/* ---- the node ---- */

/* Reads the Node; prints why not and returns NULL when it cannot. */
static json_t *read_node(const check_opts *o, gp_error *err)
{
    kc_client *c = NULL;
    kc_result r = kc_client_open(&o->kube, &c, err);
    json_t *node = NULL;
    if (r == KC_OK) {
        char path[600];
        char *escaped = kc_escape(o->node);
        snprintf(path, sizeof path, "/api/v1/nodes/%s", escaped ? escaped : "");
        free(escaped);
        r = kc_get(c, path, &node, err);
    }
    kc_client_free(c);
    return r == KC_OK ? node : NULL;
}

/* The socket of NAME's daemon when the cluster is gpuop's embedded one
 * with node agents (`gpuop cluster up --node-agents`): its simulated
 * containerd is served there, not on this machine's default socket.
 * malloc'd, or NULL (a real cluster, or no agent for NAME). */
static char *simulated_socket(const check_opts *o)
{
    kc_client *c = NULL;
    gp_error err = {0};
    char *socket = NULL;
    if (kc_client_open(&o->kube, &c, &err) == KC_OK) {
        char path[600];
        char *escaped = kc_escape(o->node);
        snprintf(path, sizeof path, "/gpuop/v1/agents/%s", escaped ? escaped : "");
        free(escaped);
        json_t *agent = NULL;
        if (kc_get(c, path, &agent, &err) == KC_OK) {
            const char *s = json_string_value(json_object_get(agent, "socket"));
            if (s) socket = strdup(s);
        }
        json_decref(agent);
    }
    kc_client_free(c);
    return socket;
}

/* ---- text ---- */

/* "nvidia, runc" or "none". */
static void join_names(const cd_names *names, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < names->n && n < cap; i++) {
        int w = snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", names->items[i]);
        if (w < 0) break;
        n += (size_t)w;
    }
    if (!names->n) snprintf(buf, cap, "%s", _("none"));
}

static void format_time(double t, char *buf, size_t cap)
{
    time_t s = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&s, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, cap, "?");
}

static void print_daemon(const check_opts *o, const cd_check_result *r)
{
    const char *h = o->req.handler;
    bool loaded = r->verdict == CD_HANDLER_LOADED;
    if (r->daemon == CD_DAEMON_NO_CRI) {
        if (r->plugin.failed)
            printf(_("%s: NOT loaded (the daemon at %s serves no CRI: its plugin %s failed to "
                     "load)\n"),
                   h, r->address, r->plugin.plugin);
        else
            printf(_("%s: NOT loaded (the daemon at %s serves no CRI: %s)\n"), h, r->address,
                   r->daemon_error);
        if (r->plugin.failed && r->plugin.message[0])
            printf(_("CRI plugin error: %s\n"), r->plugin.message);
        return;
    }
    const cd_cri_status *s = &r->cri;
    char names[2048];
    join_names(s->handlers_reported ? &s->handlers : &s->runtimes, names, sizeof names);
    const char *def = s->default_runtime ? s->default_runtime : _("none");
    const char *version = s->runtime_version[0] ? s->runtime_version : "?";
    if (s->handlers_reported)
        printf(loaded
                   ? _("%s: loaded (daemon containerd %s at %s, CRI runtime.%s Status: runtime "
                       "handlers %s; default %s)\n")
                   : _("%s: NOT loaded (daemon containerd %s at %s, CRI runtime.%s Status: runtime "
                       "handlers %s; default %s)\n"),
               h, version, r->address, s->api, names, def);
    else
        printf(
            loaded
                ? _("%s: loaded (daemon containerd %s at %s, CRI runtime.%s Status: runtimes %s; "
                    "default %s)\n")
                : _("%s: NOT loaded (daemon containerd %s at %s, CRI runtime.%s Status: runtimes "
                    "%s; default %s)\n"),
            h, version, r->address, s->api, names, def);
    if (!s->runtime_ready)
        printf("%s\n", _("warning: the runtime is not ready (condition RuntimeReady is not "
                         "true): the kubelet reports the node NotReady"));
}

static void print_node(const check_opts *o, const cd_check_result *r)
{
    char names[2048];
    join_names(&r->node_handlers, names, sizeof names);
    printf(r->verdict == CD_HANDLER_LOADED
               ? _("%s: loaded (node %s, %s: status.runtimeHandlers %s)\n")
               : _("%s: NOT loaded (node %s, %s: status.runtimeHandlers %s)\n"),
           o->req.handler, r->node_name, r->node_runtime[0] ? r->node_runtime : "?", names);
}

static void print_dump(const check_opts *o, const cd_check_result *r)
{
    const char *h = o->req.handler;
    const cd_dump *d = &r->dump;
    char names[2048];
    join_names(&d->handlers, names, sizeof names);
    const char *def = d->default_runtime ? d->default_runtime : _("none");
    if (d->cri == CD_CRI_ABSENT)
        printf(_("%s: cannot tell (containerd config dump has no %s runtimes table)\n"), h,
               d->cri_plugin);
    else if (d->cri == CD_CRI_DISABLED)
        printf(_("%s: cannot tell; would NOT load after a restart (containerd config dump: the "
                 "CRI plugin %s is disabled)\n"),
               h, d->cri_plugin);
    else if (d->cri == CD_CRI_INVALID)
        printf(_("%s: cannot tell; would NOT load after a restart (containerd config dump: "
                 "runtimes %s; default %s; the CRI plugin would refuse this config)\n"),
               h, names, def);
    else
        printf(r->would_load
                   ? _("%s: cannot tell; would load after a restart (containerd config dump: "
                       "runtimes %s; default %s)\n")
                   : _("%s: cannot tell; would NOT load after a restart (containerd config "
                       "dump: runtimes %s; default %s)\n"),
               h, names, def);
    if (d->cri == CD_CRI_INVALID)
        printf(_("CRI plugin would fail to load: invalid plugin config: %s\n"), d->cri_error);
}

/* The witnesses asked before the one that answered, and why they could not. */
static void print_source(const cd_check_result *r)
{
    static const char *const meaning[] = {
        N_("none of the witnesses could tell"),
        N_("what the running containerd serves to the kubelet"),
        N_("what the kubelet read from containerd's CRI Status"),
        N_("what a restart would load, not what is loaded"),
    };
    printf(_("source: %s (%s)\n"), cd_check_source_name(r->source), _(meaning[r->source]));
    if (r->source != CD_SOURCE_DAEMON &&
        (r->daemon == CD_DAEMON_UNREACHABLE || r->daemon == CD_DAEMON_FAILED))
        printf(_("daemon not asked: %s\n"), r->daemon_error);
    if (r->source != CD_SOURCE_NODE && r->node == CD_NODE_SILENT)
        printf(r->node_runtime_before_2
                   ? _("node %s (%s) lists no runtimeHandlers: containerd 1.x never reports "
                       "them, so their absence proves nothing\n")
                   : _("node %s (%s) lists no runtimeHandlers: their absence proves nothing\n"),
               r->node_name, r->node_runtime[0] ? r->node_runtime : "?");
}

static void print_restart(const cd_check_result *r)
{
    if (!r->restart_checked) return;
    if (r->restart_pending < 0) {
        printf(_("restart pending: cannot tell (%s)\n"), r->restart_note);
        return;
    }
    char started[40], modified[40];
    format_time(r->daemon_started, started, sizeof started);
    format_time(r->newest_mtime, modified, sizeof modified);
    if (r->restart_pending)
        printf(_("restart pending: yes (containerd pid %ld started %s; %s modified %s, after "
                 "the start%s%s)\n"),
               (long)r->daemon_pid, started, r->newest_file, modified,
               r->restart_note[0] ? "; " : "", r->restart_note);
    if (r->restart_pending && r->source == CD_SOURCE_DAEMON)
        printf("%s\n", _("what a restart would load: gpuop containerd check --source dump; "
                         "why, key by key: gpuop containerd merge"));
    if (!r->restart_pending)
        printf(_("restart pending: no (containerd pid %ld started %s; newest config file %s "
                 "modified %s%s%s)\n"),
               (long)r->daemon_pid, started, r->newest_file, modified,
               r->restart_note[0] ? "; " : "", r->restart_note);
}

static void print_text(const check_opts *o, const cd_check_result *r)
{
    if (r->source == CD_SOURCE_DAEMON)
        print_daemon(o, r);
    else if (r->source == CD_SOURCE_NODE)
        print_node(o, r);
    else if (r->source == CD_SOURCE_DUMP)
        print_dump(o, r);
    else if (r->dump_ran)
        printf(_("%s: cannot tell (%s)\n"), o->req.handler, r->dump_error);
    else if (r->node == CD_NODE_SILENT)
        printf(_("%s: cannot tell (the node's status proves nothing)\n"), o->req.handler);
    else
        printf(_("%s: cannot tell (%s)\n"), o->req.handler, r->daemon_error);
    print_source(r);
    print_restart(r);
}

/* ---- Prometheus ---- */

static void metric(const char *name, const char *help, const char *labels, int value)
{
    if (value < 0) return;
    printf("# HELP %s %s\n# TYPE %s gauge\n%s{%s} %d\n", name, help, name, name, labels, value);
}

/* node_exporter textfile lines. A gauge whose value is unknown is left out
 * (absent means unknown); check_success says whether the check could tell. */
static void print_prometheus(const check_opts *o, const cd_check_result *r)
{
    char both[300], src[64], dump[300];
    const char *source = cd_check_source_name(r->source);
    snprintf(both, sizeof both, "handler=\"%s\",source=\"%s\"", o->req.handler, source);
    snprintf(src, sizeof src, "source=\"%s\"", source);
    snprintf(dump, sizeof dump, "handler=\"%s\",source=\"dump\"", o->req.handler);
    int cri_valid = -1;
    if (r->source == CD_SOURCE_DAEMON)
        cri_valid = r->daemon == CD_DAEMON_SERVED ? 1 : r->plugin.failed ? 0 : -1;
    else if (r->dump_ran && !r->dump_error[0] && r->dump.cri != CD_CRI_ABSENT &&
             r->dump.cri != CD_CRI_DISABLED)
        cri_valid = r->dump.cri == CD_CRI_VALID;
    metric("gpuop_containerd_runtime_handler_loaded",
           "Whether containerd has loaded the runtime handler (1) or not (0), as the source says.",
           both, r->verdict == CD_HANDLER_UNKNOWN ? -1 : r->verdict == CD_HANDLER_LOADED);
    metric("gpuop_containerd_runtime_handler_would_load",
           "Whether containerd config dump says a restart would load the handler (1) or not (0).",
           dump, r->would_load);
    metric("gpuop_containerd_cri_config_valid",
           "Whether the CRI plugin accepts its runtime config (1) or refuses it (0).", src,
           cri_valid);
    metric("gpuop_containerd_restart_pending",
           "Whether a containerd config file is newer than the running daemon (1) or not (0).", src,
           r->restart_pending);
    metric("gpuop_containerd_check_success",
           "Whether gpuop could tell if the handler is loaded (1) or not (0).", both,
           r->verdict != CD_HANDLER_UNKNOWN);
}

/* ---- the command ---- */

static int finish(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(_("cannot write the output"));
        return EXIT_CANNOT_TELL;
    }
    return EXIT_HOLDS;
}

static int print_json(json_t *report)
{
    if (!report) {
        cli_error(_("out of memory"));
        return EXIT_CANNOT_TELL;
    }
    int rc = json_dumpf(report, stdout, JSON_INDENT(2)) == 0 ? EXIT_HOLDS : EXIT_CANNOT_TELL;
    putchar('\n');
    json_decref(report);
    return rc;
}

/* --source node without the node: the error, as text on stderr and as the
 * JSON error object on stdout. */
static int node_unreadable(const check_opts *o, const gp_error *err)
{
    cli_report(err);
    if (!o->json) return EXIT_CANNOT_TELL;
    print_json(json_pack("{s:s, s:s, s:s, s:i, s:{s:s, s:s, s:s}}", "schema", CD_CHECK_SCHEMA,
                         "handler", o->req.handler, "verdict", "cannot-tell", "exit",
                         EXIT_CANNOT_TELL, "error", "code", "node-unreadable", "message", err->text,
                         "where", o->node));
    finish();
    return EXIT_CANNOT_TELL;
}

int cli_cmd_containerd_check(int argc, char **argv)
{
    check_opts o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc < 0) {
        check_usage(stdout);
        return EXIT_HOLDS;
    }
    if (rc != EXIT_HOLDS) return rc;
    json_t *node = NULL;
    gp_error err = {0};
    bool want_node = o.req.source == CD_SOURCE_AUTO || o.req.source == CD_SOURCE_NODE;
    if (o.node && want_node && !(node = read_node(&o, &err))) {
        if (o.req.source == CD_SOURCE_NODE) return node_unreadable(&o, &err);
        cli_report(&err); /* auto: the other witnesses may still tell */
    }
    o.req.node = node;
    char *socket = NULL;
    bool want_daemon = o.req.source == CD_SOURCE_AUTO || o.req.source == CD_SOURCE_DAEMON;
    if (o.node && !o.req.address && want_daemon && (socket = simulated_socket(&o)) != NULL) {
        o.req.address = socket;
        if (!o.json && !o.prometheus)
            gp_msg_fprintf(stdout, _("node %s is simulated: asking its containerd at %s\n"), o.node,
                           socket);
    }
    cd_check_result r;
    cd_handler_check(&o.req, &r);
    json_decref(node);
    rc = EXIT_HOLDS;
    if (o.json)
        rc = print_json(cd_check_json(&o.req, &r));
    else if (o.prometheus)
        print_prometheus(&o, &r);
    else
        print_text(&o, &r);
    int verdict = (int)r.verdict;
    cd_check_result_free(&r);
    free(socket);
    if (rc == EXIT_HOLDS) rc = finish();
    return rc == EXIT_HOLDS ? verdict : rc;
}
