/* gpuop node files|restart-containerd|signal|reboot|status NODE: act on a
 * simulated node of gpuop's embedded cluster (`gpuop cluster up
 * --node-agents`) as an operator would on a real one, through the API
 * server's /gpuop/v1/agents routes (src/agents/control.c). A cluster that
 * does not serve them (a real one, or the embedded one without agents) is
 * refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/kube_cli.h"
#include "kube/json.h"
#include "util/buf.h"

#define AGENTS "/gpuop/v1/agents"

static void node_usage(FILE *out)
{
    fputs(_("Usage: gpuop node files NODE\n"
            "       gpuop node status NODE [-o text|json]\n"
            "       gpuop node restart-containerd NODE\n"
            "       gpuop node signal NODE HUP\n"
            "       gpuop node reboot NODE [--kernel-update]\n"
            "\n"
            "Acts on a simulated node of gpuop's embedded cluster (gpuop cluster up\n"
            "--node-agents) as an operator would on a real node; any other cluster is\n"
            "refused.\n"
            "\n"
            "  files               where the node's containerd files, node.toml (its\n"
            "                      containerd version, driver, kernel, GPUs) and its\n"
            "                      daemon's socket are: edit them as on a real node\n"
            "  status              what the files declare, what the running containerd\n"
            "                      loaded and what the node advertises, with the evidence\n"
            "  restart-containerd  systemctl restart containerd\n"
            "  signal NODE SIG     kill -SIG $(pidof containerd); containerd does not\n"
            "                      handle SIGHUP and exits, and systemd starts it again\n"
            "                      after RestartSec\n"
            "  reboot              reboot the node; --kernel-update boots a newer kernel\n"
            "                      than the NVIDIA driver's module was built for\n"
            "\n"),
          out);
    cli_kube_options_help(out);
    fputs(_("\nExit status: 0 done (status: declared, loaded and advertised agree), 1\n"
            "status: they do not, 2 cannot tell (not gpuop's cluster with node agents, no\n"
            "such node, usage error).\n"),
          out);
}

/* The agents' answer for `path`, or exit 2 with the reason printed. */
static int agents_get(kc_client *c, const char *path, json_t **out)
{
    gp_error err = {0};
    kc_result r = kc_get(c, path, out, &err);
    if (r == KC_OK) return -1;
    if (kc_last_code(c) == 404 && strcmp(path, AGENTS) == 0) {
        fprintf(stderr, "%s\n",
                _("gpuop node: this cluster has no simulated nodes: gpuop node acts only on "
                  "gpuop's embedded cluster started with --node-agents"));
        return EXIT_CANNOT_TELL;
    }
    return cli_kube_fail(r, &err);
}

/* Connects and checks that the cluster serves node agents with `node`. */
static int open_node(const kc_options *kube, const char *node, kc_client **c)
{
    int rc = cli_kube_connect(kube, c);
    if (rc != EXIT_HOLDS) return rc;
    json_t *list = NULL;
    rc = agents_get(*c, AGENTS, &list);
    if (rc >= 0) return rc;
    bool found = false;
    size_t i;
    const json_t *item;
    json_array_foreach(json_object_get(list, "items"), i, item) found |=
        json_is_string(item) && strcmp(json_string_value(item), node) == 0;
    json_decref(list);
    if (!found) {
        fprintf(stderr,
                _("gpuop node: node %s has no agent: it is not a fake node of this "
                  "cluster, or the fake kubelet has not seen it yet\n"),
                node);
        return EXIT_CANNOT_TELL;
    }
    return -1;
}

static int post(kc_client *c, const char *node, const char *verb, json_t *body)
{
    char *esc = kc_escape(node);
    char path[600];
    snprintf(path, sizeof path, "%s/%s/%s", AGENTS, esc ? esc : node, verb);
    free(esc);
    json_t *out = NULL;
    gp_error err = {0};
    kc_result r = kc_create(c, path, body, &out, &err);
    json_decref(body);
    if (r != KC_OK) return cli_kube_fail(r, &err);
    printf("%s: %s\n", node, kube_str(out, "message"));
    json_decref(out);
    return EXIT_HOLDS;
}

/* ---- status ---- */

static void print_time(double t, char out[32])
{
    time_t s = (time_t)t;
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static char *joined(const json_t *list)
{
    gp_buf b = {0};
    size_t i;
    const json_t *item;
    json_array_foreach(list, i, item)
    {
        gp_buf_add(&b, i ? ", " : "");
        const char *s = json_string_value(item);
        gp_buf_add(&b, s && *s ? s : "\"\"");
    }
    if (!b.len) gp_buf_add(&b, _("(none)"));
    return gp_buf_take(&b);
}

static bool same_strings(const json_t *a, const json_t *b)
{
    return json_is_array(a) && json_is_array(b) && json_equal(a, b);
}

/* The files, the running containerd and its CRI agree: it runs, the files
 * start and load as written, and it serves the handlers they declare. */
static bool layers_agree(const json_t *s)
{
    const json_t *decl = json_object_get(s, "declared"), *loaded = json_object_get(s, "loaded");
    return kube_str_is(loaded, "phase", "running") && !kube_str_or_null(decl, "error") &&
           !kube_str_or_null(decl, "cri_error") && kube_str_is(loaded, "cri", "up") &&
           same_strings(json_object_get(decl, "handlers"), json_object_get(loaded, "handlers"));
}

static const char *gpu_resource_line(const json_t *node, char *out, size_t cap)
{
    const json_t *st = kube_obj(node, "status");
    const char *c = kube_str_or_null(json_object_get(st, "capacity"), "nvidia.com/gpu");
    const char *a = kube_str_or_null(json_object_get(st, "allocatable"), "nvidia.com/gpu");
    if (!c)
        snprintf(out, cap, "%s", _("not advertised (no plugin ever registered it here)"));
    else
        snprintf(out, cap, _("capacity %s, allocatable %s"), c, a ? a : "0");
    return out;
}

/* Prints the three layers and returns 0 when they agree, else 1. */
static int print_status(const json_t *s, const json_t *node)
{
    const json_t *decl = json_object_get(s, "declared"), *loaded = json_object_get(s, "loaded");
    const json_t *state = json_object_get(s, "state");
    printf(_("node %s (simulated under %s)\n"), kube_str(s, "node"), kube_str(s, "dir"));
    printf("%s\n", _("declared (the files, as `containerd config dump` reads them now):"));
    size_t i;
    const json_t *f;
    json_array_foreach(json_object_get(decl, "files"), i, f)
    {
        char t[32];
        print_time(json_real_value(json_object_get(f, "mtime")), t);
        char *h = joined(json_object_get(f, "handlers"));
        printf(_("  %s  modified %s  handlers: %s\n"), kube_str(f, "path"), t, h);
        free(h);
    }
    char *dh = joined(json_object_get(decl, "handlers"));
    printf(_("  handlers: %s\n"), dh);
    free(dh);
    const char *derr = kube_str_or_null(decl, "error");
    const char *dcri = kube_str_or_null(decl, "cri_error");
    if (derr) printf(_("  containerd would refuse to start: %s\n"), derr);
    if (dcri) printf(_("  the CRI plugin would fail: %s\n"), dcri);

    bool running = kube_str_is(loaded, "phase", "running");
    const json_t *lh = json_object_get(loaded, "handlers");
    if (running) {
        char t[32];
        print_time(json_real_value(json_object_get(loaded, "started")), t);
        printf(_("loaded (the running containerd %s, pid %lld, started %s):\n"),
               kube_str(loaded, "version"),
               (long long)json_integer_value(json_object_get(loaded, "pid")), t);
        char *h = joined(lh);
        printf(_("  CRI: %s  handlers: %s\n"), kube_str(loaded, "cri"), h);
        free(h);
        const char *cerr = kube_str(loaded, "cri_error");
        if (*cerr) printf(_("  CRI error: %s\n"), cerr);
    } else {
        printf(_("loaded: containerd is not running (%s): %s\n"), kube_str(loaded, "phase"),
               kube_str(loaded, "last_exit"));
        const char *lerr = kube_str(loaded, "last_error");
        if (*lerr) printf(_("  its last words: %s\n"), lerr);
    }

    printf("%s\n", _("advertised (the Node object):"));
    const json_t *ready = kube_condition(node, "Ready");
    printf(_("  Ready: %s (%s) %s\n"), ready ? kube_str(ready, "status") : "?",
           ready ? kube_str(ready, "reason") : "", ready ? kube_str(ready, "message") : "");
    const json_t *rh = json_object_get(kube_obj(node, "status"), "runtimeHandlers");
    if (json_is_array(rh)) {
        gp_buf b = {0};
        size_t k;
        const json_t *h;
        json_array_foreach(rh, k, h)
        {
            const char *name = kube_str(h, "name");
            gp_buf_addf(&b, "%s%s", k ? ", " : "", *name ? name : "\"\"");
        }
        printf(_("  runtimeHandlers: %s\n"), b.len ? b.data : _("(none)"));
        gp_buf_free(&b);
    } else {
        printf("%s\n", _("  runtimeHandlers: none reported (containerd 1.6 and 1.7 report none)"));
    }
    char gpu[200];
    printf(_("  nvidia.com/gpu: %s\n"), gpu_resource_line(node, gpu, sizeof gpu));
    printf(_("driver: %s %s, built for kernel %s; booted kernel %s: %s\n"),
           kube_str(state, "driver_version"),
           json_is_true(json_object_get(state, "driver_installed")) ? _("installed")
                                                                    : _("not installed"),
           kube_str(state, "driver_kernel"), kube_str(state, "kernel"),
           json_is_true(json_object_get(s, "driver_loaded")) ? _("loaded") : _("not loaded"));

    /* the evidence: files newer than the daemon, layers that disagree */
    bool agree = layers_agree(s);
    printf("%s\n", _("evidence:"));
    double started = json_real_value(json_object_get(loaded, "started"));
    bool changed = false;
    json_array_foreach(json_object_get(decl, "files"), i, f)
    {
        if (running && json_real_value(json_object_get(f, "mtime")) > started) {
            printf(_("  %s changed after containerd started: a restart would load it\n"),
                   kube_str(f, "path"));
            changed = true;
        }
    }
    /* the daemon read the files as they are, and they break CRI: the
     * layer to change is the files, and a restart alone changes nothing */
    bool files_break_cri = running && dcri && !changed && !kube_str_is(loaded, "cri", "up");
    if (agree)
        printf("%s\n", _("  the running containerd loaded what the files declare"));
    else if (files_break_cri)
        printf("%s\n", _("  the files make the CRI plugin fail, and the running containerd loaded "
                         "them as they are: a restart loads the same until the files change"));
    else if (running)
        printf("%s\n", _("  what the files declare is not what the running containerd loaded"));
    else
        printf("%s\n", _("  containerd is not running: nothing of the files is loaded"));
    return agree ? EXIT_HOLDS : EXIT_DOES_NOT_HOLD;
}

static int node_status(kc_client *c, const char *node, bool json)
{
    char *esc = kc_escape(node);
    char path[600], npath[600];
    snprintf(path, sizeof path, "%s/%s", AGENTS, esc ? esc : node);
    snprintf(npath, sizeof npath, "/api/v1/nodes/%s", esc ? esc : node);
    free(esc);
    json_t *s = NULL, *obj = NULL;
    int rc = agents_get(c, path, &s);
    if (rc >= 0) return rc;
    gp_error err = {0};
    kc_result r = kc_get(c, npath, &obj, &err);
    if (r != KC_OK) {
        json_decref(s);
        return cli_kube_fail(r, &err);
    }
    if (json) {
        json_object_set(s, "advertised", obj);
        json_object_del(s, "journal");
        char *text = json_dumps(s, JSON_INDENT(2));
        puts(text ? text : "{}");
        free(text);
        rc = layers_agree(s) ? EXIT_HOLDS : EXIT_DOES_NOT_HOLD;
    } else {
        rc = print_status(s, obj);
    }
    json_decref(s);
    json_decref(obj);
    return rc;
}

static int node_files(kc_client *c, const char *node)
{
    char *esc = kc_escape(node);
    char path[600];
    snprintf(path, sizeof path, "%s/%s", AGENTS, esc ? esc : node);
    free(esc);
    json_t *s = NULL;
    int rc = agents_get(c, path, &s);
    if (rc >= 0) return rc;
    const char *dir = kube_str(s, "dir");
    printf(_("root of node %s: %s\n"), node, dir);
    printf("  /etc/containerd/config.toml        %s/etc/containerd/config.toml\n", dir);
    printf("  /etc/containerd/conf.d/            %s/etc/containerd/conf.d/\n", dir);
    printf(_("  node.toml (containerd version, driver, kernel, GPUs)  %s/node.toml\n"), dir);
    /* `containerd config dump` reads the files: gpuop's prediction of it */
    printf(_("  what `containerd config dump` would print  gpuop containerd merge --root %s "
             "--containerd %s\n"),
           dir, kube_str(kube_obj(s, "state"), "containerd_version"));
    const char *sock = kube_str_or_null(s, "socket");
    if (sock)
        printf(_("  containerd's socket (gpuop containerd check --source daemon --address)  %s\n"),
               sock);
    else
        printf("%s\n", _("  containerd's socket: none (the path is too long for a unix socket)"));
    json_decref(s);
    return EXIT_HOLDS;
}

int cli_cmd_node(int argc, char **argv)
{
    kc_options kube = {0};
    const char *args[3] = {NULL, NULL, NULL};
    int nargs = 0;
    bool kernel_update = false, json = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) {
            node_usage(stdout);
            return EXIT_HOLDS;
        }
        int k = cli_kube_option(argc, argv, &i, &kube);
        if (k < 0) return cli_kube_option_error("node", k, arg);
        if (k > 0) continue;
        if (strcmp(arg, "--kernel-update") == 0) {
            kernel_update = true;
        } else if (strcmp(arg, "-o") == 0 && i + 1 < argc) {
            const char *fmt = argv[++i];
            if (strcmp(fmt, "json") != 0 && strcmp(fmt, "text") != 0)
                return cli_kube_usage("node", _("unknown output format '%s' (text or json)"), fmt);
            json = strcmp(fmt, "json") == 0;
        } else if (arg[0] == '-' || nargs == 3) {
            return cli_kube_usage("node", _("unexpected argument '%s'"), arg);
        } else {
            args[nargs++] = arg;
        }
    }
    const char *verb = args[0], *node = args[1];
    static const char *const verbs[] = {"files", "status", "restart-containerd", "signal",
                                        "reboot"};
    bool known = false;
    for (size_t v = 0; verb && v < sizeof verbs / sizeof verbs[0]; v++)
        known |= strcmp(verb, verbs[v]) == 0;
    if (!verb)
        return cli_kube_usage("node", "%s",
                              _("which action? (files, status, "
                                "restart-containerd, signal, reboot)"));
    if (!known) return cli_kube_usage("node", _("unknown action '%s'"), verb);
    if (!node) return cli_kube_usage("node", "%s", _("which node?"));
    bool is_signal = strcmp(verb, "signal") == 0;
    if (is_signal != (nargs == 3))
        return cli_kube_usage("node", "%s",
                              is_signal ? _("which signal? (HUP, TERM, INT, KILL, USR1)")
                                        : _("too many arguments"));
    if (kernel_update && strcmp(verb, "reboot") != 0)
        return cli_kube_usage("node", "%s", _("--kernel-update goes with reboot only"));
    if (!cli_kube_name_ok("node", "node", node)) return EXIT_CANNOT_TELL;
    kc_client *c = NULL;
    int rc = open_node(&kube, node, &c);
    if (rc >= 0) {
        kc_client_free(c);
        return rc;
    }
    if (strcmp(verb, "files") == 0)
        rc = node_files(c, node);
    else if (strcmp(verb, "status") == 0)
        rc = node_status(c, node, json);
    else if (strcmp(verb, "restart-containerd") == 0)
        rc = post(c, node, verb, json_object());
    else if (is_signal)
        rc = post(c, node, verb, json_pack("{s:s}", "signal", args[2]));
    else
        rc = post(c, node, verb, json_pack("{s:b}", "kernelUpdate", kernel_update));
    kc_client_free(c);
    return rc;
}
