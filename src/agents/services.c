/* The gRPC services of a running simulated containerd (grpc_internal.h).
 *
 * Field numbers: k8s.io/cri-api pkg/apis/runtime/v1/api.proto (VersionRequest
 * {version 1}, VersionResponse {version 1, runtime_name 2, runtime_version
 * 3, runtime_api_version 4}, StatusRequest {verbose 1}, StatusResponse
 * {status 1, info 2, runtime_handlers 3}, RuntimeStatus {conditions 1},
 * RuntimeCondition {type 1, status 2, reason 3, message 4}, RuntimeHandler
 * {name 1, features 2}); containerd api/services/introspection/v1/
 * introspection.proto (PluginsRequest {filters 1}, PluginsResponse
 * {plugins 1}, Plugin {type 1, id 2, requires 3, platforms 4, exports 5,
 * capabilities 6, init_err 7}, ServerResponse {uuid 1, pid 2, pidns 3}),
 * api/types/platform.proto (Platform {os 1, architecture 2, variant 3}),
 * google/rpc/status.proto (Status {code 1, message 2}) and
 * api/services/version/v1/version.proto (VersionResponse {version 1,
 * revision 2}). The same numbers as the CRI client of the field tools
 * (containerd/cri.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agents_internal.h"
#include "agents/grpc_internal.h"

/* The kubelet's CRI API version that containerd reports
 * (pkg/cri/server/version.go: kubeAPIVersion). */
#define KUBE_API_VERSION "0.1.0"
#define GRPC_UNKNOWN     2 /* codes.Unknown: what a plugin's init error carries */

/* A failed call: grpc-status and grpc-message (the daemon's own words,
 * never translated: clients match them). */
static void fail(ag_grpc_answer *out, int status, const char *fmt, ...) GP_PRINTF(3, 4);
static void fail(ag_grpc_answer *out, int status, const char *fmt, ...)
{
    out->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->message, sizeof out->message, fmt, ap);
    va_end(ap);
}

/* A message built in `sub`, put as field `num` of `b`. */
static void put_message(gp_buf *b, uint32_t num, gp_buf *sub)
{
    kube_protobuf_put_bytes(b, num, sub->data ? sub->data : "", sub->len);
    if (gp_buf_failed(sub)) b->state = GP_BUF_NO_MEMORY;
    gp_buf_free(sub);
}

/* ---- CRI RuntimeService ---- */

static void cri_version(const ag_loaded *l, const char *api, ag_grpc_answer *out)
{
    ag_pb_string(&out->body, 1, KUBE_API_VERSION);
    ag_pb_string(&out->body, 2, "containerd");
    ag_pb_string(&out->body, 3, l->version);
    ag_pb_string(&out->body, 4, api);
}

static bool status_verbose(const uint8_t *req, size_t len, bool *verbose)
{
    kube_pb_cursor r = {req, req + len};
    kube_pb_wire f;
    int rc;
    *verbose = false;
    while ((rc = kube_protobuf_next(&r, NULL, &f, NULL)) == 1)
        if (f.num == 1 && f.wire == 0) *verbose = f.varint != 0;
    return rc == 0;
}

static void put_conditions(gp_buf *b, const json_t *conditions)
{
    gp_buf status = {0};
    size_t i;
    json_t *c;
    json_array_foreach(conditions, i, c)
    {
        gp_buf cond = {0};
        ag_pb_string(&cond, 1, json_string_value(json_object_get(c, "type")));
        ag_pb_bool(&cond, 2, json_is_true(json_object_get(c, "status")));
        ag_pb_string(&cond, 3, json_string_value(json_object_get(c, "reason")));
        ag_pb_string(&cond, 4, json_string_value(json_object_get(c, "message")));
        put_message(&status, 1, &cond);
    }
    put_message(b, 1, &status);
}

static void put_handler(gp_buf *b, const char *name)
{
    gp_buf h = {0}, features = {0};
    kube_protobuf_put_bytes(&h, 1, name,
                            strlen(name)); /* "" is the default's: written all the same */
    /* No handler supports recursive read-only mounts or user namespaces
     * here (the recorded daemon's answer): an empty features message. */
    put_message(&h, 2, &features);
    put_message(b, 3, &h);
}

/* 2.0 and later report the handlers they serve, the default also under
 * "" (internal/cri/server/status.go); 1.6 and 1.7 report none. The
 * daemon walks a Go map, so a real one's order varies; this one gives the
 * recorded order: "", then the names sorted. */
static void put_handlers(gp_buf *b, const ag_loaded *l)
{
    if (cd_is_v1(l->family)) return;
    for (size_t i = 0; i < l->nruntimes; i++)
        if (strcmp(l->runtimes[i], l->default_runtime) == 0) put_handler(b, "");
    for (size_t i = 0; i < l->nruntimes; i++)
        put_handler(b, l->runtimes[i]);
}

static void cri_status(const ag_loaded *l, const uint8_t *req, size_t len, ag_grpc_answer *out)
{
    bool verbose;
    if (!status_verbose(req, len, &verbose)) {
        fail(out, AG_GRPC_INTERNAL, "grpc: error unmarshalling request: %s", "bad protobuf");
        return;
    }
    const json_t *line = ag_line_data(l->family);
    put_conditions(&out->body, json_object_get(line, "conditions"));
    if (verbose) {
        char *config = json_dumps(l->cri_config, JSON_COMPACT);
        if (!config) {
            out->body.state = GP_BUF_NO_MEMORY;
            return;
        }
        ag_pb_map_entry(&out->body, 2, "config", config);
        free(config);
        const char *key;
        json_t *value;
        json_object_foreach((json_t *)json_object_get(line, "info"), key, value)
            ag_pb_map_entry(&out->body, 2, key, json_string_value(value));
    }
    put_handlers(&out->body, l);
}

/* ---- containerd's introspection and version services ---- */

typedef struct filter_term {
    const char *field;
    size_t field_len;
    bool equal;
    const char *value;
    size_t value_len;
} filter_term;

static bool term_matches(const json_t *plugin, const filter_term *t)
{
    char field[32];
    if (t->field_len >= sizeof field) return false;
    memcpy(field, t->field, t->field_len);
    field[t->field_len] = '\0';
    bool found = false;
    if (strcmp(field, "type") == 0 || strcmp(field, "id") == 0) {
        const char *v = json_string_value(json_object_get(plugin, field));
        found = v && strlen(v) == t->value_len && memcmp(v, t->value, t->value_len) == 0;
    } else if (strcmp(field, "platforms") == 0) {
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(plugin, "platforms"), i, p)
        {
            const char *v = json_string_value(p);
            if (v && strlen(v) == t->value_len && memcmp(v, t->value, t->value_len) == 0)
                found = true;
        }
    }
    return found == t->equal;
}

/* containerd's filter syntax, the part `ctr plugins ls` users write:
 * FIELD==VALUE or FIELD!=VALUE over type, id and platforms, joined by ","
 * (and); several filters match when any does (filters/filter.go).
 * 1 match, 0 no match, -1 when the filter is not of that form. */
static int filter_matches(const json_t *plugin, const char *filter, size_t len)
{
    const char *p = filter, *end = filter + len;
    int all = 1;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        const char *op = NULL;
        for (const char *q = p; q + 1 < stop; q++)
            if ((q[0] == '=' || q[0] == '!') && q[1] == '=') {
                op = q;
                break;
            }
        if (!op || op == p) return -1;
        filter_term t = {p, (size_t)(op - p), op[0] == '=', op + 2, (size_t)(stop - op - 2)};
        if (!term_matches(plugin, &t)) all = 0;
        p = comma ? comma + 1 : end;
    }
    return all;
}

static void put_plugin(gp_buf *b, const json_t *row, const ag_loaded *l, const json_t *cri_rows)
{
    gp_buf p = {0};
    const char *type = json_string_value(json_object_get(row, "type"));
    const char *id = json_string_value(json_object_get(row, "id"));
    ag_pb_string(&p, 1, type);
    ag_pb_string(&p, 2, id);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(row, "requires"), i, v)
    {
        const char *s = json_string_value(v);
        kube_protobuf_put_bytes(&p, 3, s, strlen(s));
    }
    json_array_foreach(json_object_get(row, "platforms"), i, v)
    {
        const char *s = json_string_value(v);
        const char *slash = strchr(s, '/');
        gp_buf plat = {0};
        if (slash) {
            kube_protobuf_put_bytes(&plat, 1, s, (size_t)(slash - s));
            ag_pb_string(&plat, 2, slash + 1);
        } else {
            ag_pb_string(&plat, 1, s);
        }
        put_message(&p, 4, &plat);
    }
    const char *key;
    json_object_foreach((json_t *)json_object_get(row, "exports"), key, v)
        ag_pb_map_entry(&p, 5, key, json_string_value(v));
    /* The init error: the line's for host-probing plugins, the loaded
     * config's for the CRI plugins. */
    char full[256], message[1200] = "";
    snprintf(full, sizeof full, "%s.%s", type, id);
    const char *error = json_string_value(json_object_get(row, "init_error"));
    json_array_foreach(cri_rows, i, v)
    {
        if (l->cri != AG_CRI_FAILED || strcmp(json_string_value(v), full) != 0) continue;
        snprintf(message, sizeof message, "%s%s", i == 0 ? "" : AG_CRI_DEPENDENCY_PREFIX,
                 l->cri_error);
        error = message;
    }
    if (error) {
        gp_buf status = {0};
        ag_pb_uint(&status, 1, GRPC_UNKNOWN);
        ag_pb_string(&status, 2, error);
        put_message(&p, 7, &status);
    }
    put_message(b, 1, &p);
}

static bool is_cri_row(const json_t *row, const json_t *cri_rows)
{
    char full[256];
    snprintf(full, sizeof full, "%s.%s", json_string_value(json_object_get(row, "type")),
             json_string_value(json_object_get(row, "id")));
    size_t i;
    json_t *v;
    json_array_foreach(cri_rows, i, v) if (strcmp(json_string_value(v), full) == 0) return true;
    return false;
}

static void introspection_plugins(const ag_loaded *l, const uint8_t *req, size_t len,
                                  ag_grpc_answer *out)
{
    /* The filters, as slices of the request. */
    const uint8_t *filters[32];
    size_t lens[32], nfilters = 0;
    kube_pb_cursor r = {req, req + len};
    kube_pb_wire f;
    int rc;
    while ((rc = kube_protobuf_next(&r, NULL, &f, NULL)) == 1) {
        if (f.num != 1 || f.wire != 2) continue;
        if (nfilters == 32) {
            fail(out, AG_GRPC_INVALID_ARGUMENT, "too many filters");
            return;
        }
        filters[nfilters] = f.bytes;
        lens[nfilters++] = f.len;
    }
    if (rc < 0) {
        fail(out, AG_GRPC_INTERNAL, "grpc: error unmarshalling request: %s", "bad protobuf");
        return;
    }
    const json_t *line = ag_line_data(l->family);
    const json_t *cri_rows = json_object_get(line, "cri_plugins");
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(line, "plugins"), i, row)
    {
        /* A disabled plugin is never registered, so never listed. */
        if (l->cri == AG_CRI_DISABLED && is_cri_row(row, cri_rows)) continue;
        bool keep = nfilters == 0;
        for (size_t k = 0; k < nfilters && !keep; k++) {
            int m = filter_matches(row, (const char *)filters[k], lens[k]);
            if (m < 0) {
                char shown[128];
                snprintf(shown, sizeof shown, "%.*s", (int)lens[k], (const char *)filters[k]);
                gp_buf_free(&out->body);
                fail(out, AG_GRPC_INVALID_ARGUMENT,
                     "filters: %s: gpuop's simulated containerd reads FIELD==VALUE and "
                     "FIELD!=VALUE of type, id and platforms",
                     shown);
                return;
            }
            keep = m == 1;
        }
        if (keep) put_plugin(&out->body, row, l, cri_rows);
    }
}

static void introspection_server(const ag_service_node *node, ag_grpc_answer *out)
{
    const ag_loaded *l = node->daemon->loaded;
    ag_pb_string(&out->body, 1, node->uuid);
    /* 1.7 added the daemon's pid and pid namespace (introspection.proto). */
    if (l->family != CD_V1_6) {
        ag_pb_uint(&out->body, 2, l->pid);
        ag_pb_uint(&out->body, 3, 4026531836u); /* the host's pid namespace inode */
    }
}

/* The package's revision: Debian's for its build, else unknown (upstream
 * binaries print the git commit, which a simulation does not have). */
static const char *revision_of(const char *version)
{
    if (strcmp(version, "1.6.20~ds1") == 0) return "1.6.20~ds1-1+deb12u3";
    return "";
}

static void version_version(const ag_loaded *l, ag_grpc_answer *out)
{
    ag_pb_string(&out->body, 1, l->version);
    ag_pb_string(&out->body, 2, revision_of(l->version));
}

/* ---- dispatch ---- */

/* "/SERVICE/METHOD" split; false when the path is not of that form. */
static bool split_path(const char *path, char *service, size_t scap, const char **method)
{
    if (path[0] != '/') return false;
    const char *slash = strchr(path + 1, '/');
    if (!slash || slash == path + 1 || !slash[1] || strchr(slash + 1, '/')) return false;
    size_t n = (size_t)(slash - path - 1);
    if (n >= scap) return false;
    memcpy(service, path + 1, n);
    service[n] = '\0';
    *method = slash + 1;
    return true;
}

void ag_grpc_serve(const ag_service_node *node, const char *path, const uint8_t *req, size_t len,
                   ag_grpc_answer *out)
{
    const ag_loaded *l = node->daemon->loaded;
    char service[160];
    const char *method;
    out->status = AG_GRPC_OK;
    if (!l || !split_path(path, service, sizeof service, &method)) {
        /* grpc-go: "malformed method name" for a path without two parts. */
        fail(out, AG_GRPC_UNIMPLEMENTED, "malformed method name: \"%s\"", path);
        return;
    }
    bool cri = l->cri == AG_CRI_UP;
    bool alpha = cri && cd_is_v1(l->family); /* v1alpha2 went away in 2.0 */
    bool runtime_v1 = cri && strcmp(service, "runtime.v1.RuntimeService") == 0;
    bool runtime_alpha = alpha && strcmp(service, "runtime.v1alpha2.RuntimeService") == 0;
    if (runtime_v1 || runtime_alpha) {
        if (strcmp(method, "Version") == 0)
            cri_version(l, runtime_v1 ? "v1" : "v1alpha2", out);
        else if (strcmp(method, "Status") == 0)
            cri_status(l, req, len, out);
        else
            fail(out, AG_GRPC_UNIMPLEMENTED, "unknown method %s for service %s", method, service);
    } else if ((cri && strcmp(service, "runtime.v1.ImageService") == 0) ||
               (alpha && strcmp(service, "runtime.v1alpha2.ImageService") == 0)) {
        fail(out, AG_GRPC_UNIMPLEMENTED, "unknown method %s for service %s", method, service);
    } else if (strcmp(service, "containerd.services.introspection.v1.Introspection") == 0) {
        if (strcmp(method, "Plugins") == 0)
            introspection_plugins(l, req, len, out);
        else if (strcmp(method, "Server") == 0)
            introspection_server(node, out);
        else
            fail(out, AG_GRPC_UNIMPLEMENTED, "unknown method %s for service %s", method, service);
    } else if (strcmp(service, "containerd.services.version.v1.Version") == 0 &&
               strcmp(method, "Version") == 0) {
        version_version(l, out);
    } else {
        /* grpc-go server.go handleStream: the recorded answer of a 1.6.20
         * daemon whose CRI plugin failed to load. */
        fail(out, AG_GRPC_UNIMPLEMENTED, "unknown service %s", service);
    }
    if (out->status == AG_GRPC_OK && gp_buf_failed(&out->body))
        fail(out, AG_GRPC_INTERNAL, "out of memory");
}
