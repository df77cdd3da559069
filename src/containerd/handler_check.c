/* The handler check: daemon, node, dump (see handler_check.h). */
#include "containerd/handler_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/i18n.h"
#include "util/spawn.h"

#define DUMP_TIMEOUT_MS (20 * 1000)

static const char *const source_names[] = {"auto", "daemon", "node", "dump"};

const char *cd_check_source_name(cd_check_source s)
{
    return (size_t)s < sizeof source_names / sizeof *source_names ? source_names[s] : "auto";
}

int cd_check_source_parse(const char *text, cd_check_source *out)
{
    for (size_t i = 0; i < sizeof source_names / sizeof *source_names; i++)
        if (strcmp(text, source_names[i]) == 0) {
            *out = (cd_check_source)i;
            return 0;
        }
    return -1;
}

void cd_check_command(const char *handler, char *buf, size_t cap)
{
    snprintf(buf, cap, "gpuop containerd check %s", handler);
}

/* ---- the daemon ---- */

/* Returns true when the daemon settled the verdict. */
static bool ask_daemon(const cd_check_request *req, cd_check_result *r)
{
    gp_error err = {0};
    cd_cri_answer a = cd_cri_ask(r->address, &r->cri, &r->plugin, &err);
    snprintf(r->daemon_error, sizeof r->daemon_error, "%s", a == CD_CRI_SERVED ? "" : err.text);
    switch (a) {
    case CD_CRI_SERVED:
        r->daemon = CD_DAEMON_SERVED;
        r->verdict = cd_cri_status_has_handler(&r->cri, req->handler) ? CD_HANDLER_LOADED
                                                                      : CD_HANDLER_NOT_LOADED;
        break;
    case CD_CRI_NOT_SERVED:
        /* The kubelet gets nothing from this daemon: no handler runs a pod. */
        r->daemon = CD_DAEMON_NO_CRI;
        r->verdict = CD_HANDLER_NOT_LOADED;
        break;
    case CD_CRI_UNREACHABLE:
        r->daemon = CD_DAEMON_UNREACHABLE;
        return false;
    default:
        r->daemon = CD_DAEMON_FAILED;
        return false;
    }
    r->source = CD_SOURCE_DAEMON;
    return true;
}

/* ---- the node ---- */

/* "containerd://1.6.20" -> true for a 1.x containerd. */
static bool runtime_before_2(const char *runtime)
{
    const char *v = strncmp(runtime, "containerd://", 13) == 0 ? runtime + 13 : NULL;
    if (!v) return false;
    if (*v == 'v') v++;
    return v[0] == '0' || (v[0] == '1' && v[1] == '.');
}

void cd_check_node(const json_t *node, const char *handler, cd_check_result *out)
{
    const json_t *status = json_object_get(node, "status");
    const char *name =
        json_string_value(json_object_get(json_object_get(node, "metadata"), "name"));
    const char *runtime = json_string_value(
        json_object_get(json_object_get(status, "nodeInfo"), "containerRuntimeVersion"));
    snprintf(out->node_name, sizeof out->node_name, "%s", name ? name : "");
    snprintf(out->node_runtime, sizeof out->node_runtime, "%s", runtime ? runtime : "");
    out->node_runtime_before_2 = runtime_before_2(out->node_runtime);
    const json_t *list = json_object_get(status, "runtimeHandlers");
    out->node = json_array_size(list) ? CD_NODE_REPORTS : CD_NODE_SILENT;
    size_t i;
    const json_t *h;
    json_array_foreach(list, i, h)
    {
        const char *h_name = json_string_value(json_object_get(h, "name"));
        if (h_name && *h_name && !cd_names_contains(&out->node_handlers, h_name))
            cd_names_add(&out->node_handlers, h_name, strlen(h_name));
    }
    if (out->node != CD_NODE_REPORTS) return;
    out->verdict =
        cd_names_contains(&out->node_handlers, handler) ? CD_HANDLER_LOADED : CD_HANDLER_NOT_LOADED;
    out->source = CD_SOURCE_NODE;
}

/* ---- the dump ---- */

static void trim_end(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
}

static void run_dump(const cd_check_request *req, cd_check_result *r)
{
    char *argv[] = {"containerd", "config", "dump", NULL};
    char *out = NULL, *errtext = NULL;
    size_t out_len, err_len;
    int status = 0;
    gp_error err = {0};
    r->dump_ran = true;
    r->would_load = -1;
    gp_spawn_result s =
        gp_spawn_capture(argv, DUMP_TIMEOUT_MS, &out, &out_len, &errtext, &err_len, &status, &err);
    if (s != GP_SPAWN_OK) {
        snprintf(r->dump_error, sizeof r->dump_error, "%s", err.text);
    } else if (status != 0) {
        trim_end(errtext);
        gp_error_set(&err, NULL, 0, 0, "`containerd config dump` failed (exit %d): %s", status,
                     errtext);
        snprintf(r->dump_error, sizeof r->dump_error, "%s", err.text);
    } else if (cd_dump_parse(out, out_len, "<containerd config dump>", &r->dump, &err) != 0) {
        snprintf(r->dump_error, sizeof r->dump_error, "%s", err.text);
    } else {
        /* The dump is the witness, though it can only predict. */
        r->source = CD_SOURCE_DUMP;
        if (r->dump.cri != CD_CRI_ABSENT)
            r->would_load = cd_dump_handler_loaded(&r->dump, req->handler);
    }
    free(out);
    free(errtext);
}

/* ---- restart pending ---- */

/* The config files to compare with the daemon's start: its config and the
 * imports it names; when those cannot be read, the usual places. */
static void restart_files(const char *config, cd_names *files, cd_check_result *r)
{
    gp_error err = {0};
    if (cd_config_files(config, files, &err) == 0 && files->n) return;
    snprintf(r->restart_note, sizeof r->restart_note,
             _("could not resolve the imports of %s (%s), so compared with "
               "/etc/containerd/config.toml and /etc/containerd/conf.d/*.toml"),
             config, err.text[0] ? err.text : _("file not found"));
    cd_default_config_files(files);
}

static void check_restart(cd_check_result *r)
{
    cd_daemon_proc proc;
    gp_error err = {0};
    r->restart_checked = true;
    r->restart_pending = -1;
    if (cd_daemon_find(r->address, &proc, &err) != 0) {
        snprintf(r->restart_note, sizeof r->restart_note,
                 _("no containerd process serving %s is visible here"), r->address);
        return;
    }
    r->daemon_pid = proc.pid;
    r->daemon_started = proc.started;
    cd_names files = {0};
    restart_files(proc.config, &files, r);
    const char *newest = NULL;
    if (cd_newest_mtime(&files, &r->newest_mtime, &newest) != 0) {
        snprintf(r->restart_note, sizeof r->restart_note, _("cannot read %s"), proc.config);
    } else {
        snprintf(r->newest_file, sizeof r->newest_file, "%s", newest);
        /* A process start is known to 1/100 s (clock ticks after boot). */
        r->restart_pending = r->newest_mtime > proc.started + 0.05;
    }
    cd_names_free(&files);
}

/* ---- the check ---- */

void cd_handler_check(const cd_check_request *req, cd_check_result *r)
{
    memset(r, 0, sizeof *r);
    r->verdict = CD_HANDLER_UNKNOWN;
    r->source = CD_SOURCE_AUTO;
    r->would_load = -1;
    r->restart_pending = -1;
    const char *address = req->address ? req->address : CD_DEFAULT_ADDRESS;
    snprintf(r->address, sizeof r->address, "%s",
             strncmp(address, "unix://", 7) == 0 ? address + 7 : address);
    cd_check_source want = req->source;
    bool settled = false;
    if (want == CD_SOURCE_AUTO || want == CD_SOURCE_DAEMON) settled = ask_daemon(req, r);
    if (!settled && req->node && (want == CD_SOURCE_AUTO || want == CD_SOURCE_NODE)) {
        cd_check_node(req->node, req->handler, r);
        settled = r->node == CD_NODE_REPORTS;
    }
    if (!settled && (want == CD_SOURCE_AUTO || want == CD_SOURCE_DUMP)) run_dump(req, r);
    /* The daemon's start is read here, on this machine: not for a node
     * asked through the cluster. */
    if (r->source != CD_SOURCE_NODE && want != CD_SOURCE_NODE) check_restart(r);
}

void cd_check_result_free(cd_check_result *r)
{
    cd_cri_status_free(&r->cri);
    cd_names_free(&r->node_handlers);
    if (r->dump_ran && !r->dump_error[0]) cd_dump_free(&r->dump);
    r->dump_ran = false;
}

/* ---- JSON ---- */

static json_t *names_json(const cd_names *n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n->n; i++)
        json_array_append_new(a, json_string(n->items[i]));
    return a;
}

static json_t *string_or_null(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

static json_t *tristate(int v)
{
    return v < 0 ? json_null() : json_boolean(v);
}

static const char *daemon_state_name(cd_daemon_state s)
{
    static const char *const n[] = {"not-asked", "served", "no-cri", "unreachable", "failed"};
    return n[s];
}

static json_t *daemon_json(const cd_check_result *r)
{
    json_t *d =
        json_pack("{s:s, s:s}", "address", r->address, "state", daemon_state_name(r->daemon));
    if (!d) return NULL;
    if (r->daemon_error[0]) json_object_set_new(d, "error", json_string(r->daemon_error));
    if (r->daemon == CD_DAEMON_SERVED) {
        const cd_cri_status *s = &r->cri;
        json_object_set_new(d, "cri_api", json_string(s->api));
        json_object_set_new(d, "runtime_name", string_or_null(s->runtime_name));
        json_object_set_new(d, "runtime_version", string_or_null(s->runtime_version));
        json_object_set_new(
            d, "runtime_api_version",
            string_or_null(json_string_value(json_object_get(s->version, "runtime_api_version"))));
        json_object_set_new(d, "runtime_ready", json_boolean(s->runtime_ready));
        json_object_set_new(d, "runtimes", names_json(&s->runtimes));
        json_object_set_new(d, "default_runtime", string_or_null(s->default_runtime));
        json_object_set_new(d, "runtime_handlers",
                            s->handlers_reported ? names_json(&s->handlers) : json_null());
        json_t *conditions = json_object_get(json_object_get(s->answer, "status"), "conditions");
        json_object_set_new(d, "conditions", conditions ? json_incref(conditions) : json_array());
        json_t *keys = json_array();
        const char *key;
        json_t *value;
        json_object_foreach(json_object_get(s->answer, "info"), key, value)
        {
            json_array_append_new(keys, json_string(key));
        }
        json_object_set_new(d, "info_keys", keys);
        /* The CRI plugin's config as the daemon holds it: the evidence. */
        json_object_set_new(d, "config", s->config ? json_incref(s->config) : json_null());
    }
    if (r->daemon == CD_DAEMON_NO_CRI && r->plugin.found)
        json_object_set_new(d, "cri_plugin",
                            json_pack("{s:s, s:b, s:o}", "plugin", r->plugin.plugin, "failed",
                                      r->plugin.failed, "error",
                                      string_or_null(r->plugin.message)));
    return d;
}

static json_t *node_json(const cd_check_result *r)
{
    if (r->node == CD_NODE_NOT_ASKED) return json_null();
    return json_pack("{s:s, s:o, s:b, s:o}", "name", r->node_name, "container_runtime",
                     string_or_null(r->node_runtime), "reports_handlers",
                     r->node == CD_NODE_REPORTS, "runtime_handlers",
                     r->node == CD_NODE_REPORTS ? names_json(&r->node_handlers) : json_null());
}

static const char *cri_state_name(cd_cri_state s)
{
    static const char *const n[] = {"valid", "invalid", "disabled", "absent"};
    return n[s];
}

static json_t *dump_json(const cd_check_result *r)
{
    if (!r->dump_ran) return json_null();
    if (r->dump_error[0]) return json_pack("{s:s}", "error", r->dump_error);
    const cd_dump *d = &r->dump;
    return json_pack("{s:s, s:o, s:o, s:s, s:o, s:o}", "cri_plugin", d->cri_plugin, "runtimes",
                     names_json(&d->handlers), "default_runtime",
                     string_or_null(d->default_runtime), "cri", cri_state_name(d->cri), "cri_error",
                     string_or_null(d->cri_error), "would_load_after_restart",
                     tristate(r->would_load));
}

static json_t *restart_json(const cd_check_result *r)
{
    if (!r->restart_checked) return json_null();
    json_t *o = json_pack("{s:o}", "pending", tristate(r->restart_pending));
    if (!o) return NULL;
    if (r->daemon_pid) {
        json_object_set_new(o, "daemon_pid", json_integer(r->daemon_pid));
        json_object_set_new(o, "daemon_started", json_real(r->daemon_started));
    }
    if (r->newest_file[0]) {
        json_object_set_new(o, "newest_file", json_string(r->newest_file));
        json_object_set_new(o, "newest_mtime", json_real(r->newest_mtime));
    }
    if (r->restart_note[0]) json_object_set_new(o, "note", json_string(r->restart_note));
    return o;
}

/* Why the verdict is "cannot tell": the last witness asked that could not. */
static json_t *error_json(const cd_check_request *req, const cd_check_result *r)
{
    const char *code, *where;
    char message[1600];
    if (r->dump_ran && r->dump_error[0]) {
        code = "dump-failed";
        where = "containerd config dump";
        snprintf(message, sizeof message, "%s", r->dump_error);
    } else if (r->dump_ran && r->would_load < 0) {
        code = "dump-without-cri";
        where = "containerd config dump";
        snprintf(message, sizeof message, "the dump has no %s runtimes table", r->dump.cri_plugin);
    } else if (r->dump_ran) {
        code = "prediction-only";
        where = "containerd config dump";
        snprintf(message, sizeof message,
                 "only `containerd config dump` could be read: it shows what a restart would "
                 "load (%s %s), not what the running daemon loaded",
                 req->handler, r->would_load ? "would load" : "would not load");
    } else if (r->node == CD_NODE_SILENT) {
        code = "node-reports-no-handlers";
        where = r->node_name;
        snprintf(message, sizeof message, "node %s lists no runtimeHandlers (%s): %s", r->node_name,
                 r->node_runtime[0] ? r->node_runtime : "runtime unknown",
                 r->node_runtime_before_2 ? "containerd 1.x never reports them, which proves "
                                            "nothing"
                                          : "which proves nothing");
    } else {
        code = r->daemon == CD_DAEMON_FAILED ? "daemon-failed" : "daemon-unreachable";
        where = r->address;
        snprintf(message, sizeof message, "%s", r->daemon_error);
    }
    return json_pack("{s:s, s:s, s:s}", "code", code, "message", message, "where", where);
}

json_t *cd_check_json(const cd_check_request *req, const cd_check_result *r)
{
    static const char *const verdicts[] = {"loaded", "not-loaded", "cannot-tell"};
    json_t *o =
        json_pack("{s:s, s:s, s:s, s:i, s:s, s:s}", "schema", CD_CHECK_SCHEMA, "handler",
                  req->handler, "verdict", verdicts[r->verdict], "exit", (int)r->verdict, "source",
                  cd_check_source_name(r->source), "asked", cd_check_source_name(req->source));
    if (!o) return NULL;
    json_object_set_new(o, "daemon",
                        r->daemon == CD_DAEMON_NOT_ASKED ? json_null() : daemon_json(r));
    json_object_set_new(o, "node", node_json(r));
    json_object_set_new(o, "dump", dump_json(r));
    json_object_set_new(o, "restart", restart_json(r));
    if (r->verdict == CD_HANDLER_UNKNOWN) json_object_set_new(o, "error", error_json(req, r));
    return o;
}
