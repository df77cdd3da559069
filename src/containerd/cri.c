/* The CRI RuntimeService and the Introspection service of a running
 * containerd (see cri.h). The messages are decoded with the project's
 * schema-driven protobuf decoder (kube/protobuf.h), so the field numbers
 * below are the whole of what this file knows about the wire. */
#include "containerd/cri.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "containerd/grpc.h"
#include "kube/protobuf.h"
#include "util/buf.h"

#define CALL_TIMEOUT_MS 10000L

/* ---- k8s.io/cri-api pkg/apis/runtime/v1/api.proto (v1alpha2 numbers them
 * the same; it has no runtime_handlers) ---- */

static const kube_pb_field condition_fields[] = {
    {1, "type", KUBE_PB_STRING, 0, NULL},
    {2, "status", KUBE_PB_BOOL, 0, NULL},
    {3, "reason", KUBE_PB_STRING, 0, NULL},
    {4, "message", KUBE_PB_STRING, 0, NULL},
};
static const kube_pb_message condition = KUBE_PB_SCHEMA(condition_fields);

static const kube_pb_field runtime_status_fields[] = {
    {1, "conditions", KUBE_PB_MESSAGE, KUBE_PB_REPEATED, &condition},
};
static const kube_pb_message runtime_status = KUBE_PB_SCHEMA(runtime_status_fields);

static const kube_pb_field handler_features_fields[] = {
    {1, "recursive_read_only_mounts", KUBE_PB_BOOL, 0, NULL},
    {2, "user_namespaces", KUBE_PB_BOOL, 0, NULL},
};
static const kube_pb_message handler_features = KUBE_PB_SCHEMA(handler_features_fields);

static const kube_pb_field handler_fields[] = {
    {1, "name", KUBE_PB_STRING, KUBE_PB_ALWAYS, NULL},
    {2, "features", KUBE_PB_MESSAGE, 0, &handler_features},
};
static const kube_pb_message handler = KUBE_PB_SCHEMA(handler_fields);

static const kube_pb_field status_response_fields[] = {
    {1, "status", KUBE_PB_MESSAGE, 0, &runtime_status},
    {2, "info", KUBE_PB_STRING_MAP, 0, NULL},
    {3, "runtime_handlers", KUBE_PB_MESSAGE, KUBE_PB_REPEATED, &handler},
};
static const kube_pb_message status_response = KUBE_PB_SCHEMA(status_response_fields);

static const kube_pb_field version_response_fields[] = {
    {1, "version", KUBE_PB_STRING, 0, NULL},
    {2, "runtime_name", KUBE_PB_STRING, 0, NULL},
    {3, "runtime_version", KUBE_PB_STRING, 0, NULL},
    {4, "runtime_api_version", KUBE_PB_STRING, 0, NULL},
};
static const kube_pb_message version_response = KUBE_PB_SCHEMA(version_response_fields);

/* ---- containerd api/services/introspection/v1/introspection.proto and
 * google/rpc/status.proto ---- */

static const kube_pb_field rpc_status_fields[] = {
    {1, "code", KUBE_PB_INT64, 0, NULL},
    {2, "message", KUBE_PB_STRING, 0, NULL},
};
static const kube_pb_message rpc_status = KUBE_PB_SCHEMA(rpc_status_fields);

static const kube_pb_field plugin_fields[] = {
    {1, "type", KUBE_PB_STRING, 0, NULL},
    {2, "id", KUBE_PB_STRING, 0, NULL},
    {7, "init_err", KUBE_PB_MESSAGE, 0, &rpc_status},
};
static const kube_pb_message plugin_message = KUBE_PB_SCHEMA(plugin_fields);

static const kube_pb_field plugins_response_fields[] = {
    {1, "plugins", KUBE_PB_MESSAGE, KUBE_PB_REPEATED, &plugin_message},
};
static const kube_pb_message plugins_response = KUBE_PB_SCHEMA(plugins_response_fields);

/* ---- decoding ---- */

static void copy(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static bool condition_true(const json_t *conditions, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(conditions, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && strcmp(t, type) == 0) return json_is_true(json_object_get(c, "status"));
    }
    return false;
}

/* The handler names the daemon reports ("" is the default runtime's entry). */
static int read_handlers(const json_t *list, cd_cri_status *out)
{
    size_t i;
    json_t *h;
    json_array_foreach(list, i, h)
    {
        out->handlers_reported = true;
        const char *name = json_string_value(json_object_get(h, "name"));
        if (name && *name && !cd_names_contains(&out->handlers, name) &&
            cd_names_add(&out->handlers, name, strlen(name)) != 0)
            return -1;
    }
    return 0;
}

/* info.config: the CRI plugin's config as containerd holds it (Go JSON of
 * its Config struct: containerd.runtimes, containerd.defaultRuntimeName). */
static int read_config(const char *text, cd_cri_status *out, gp_error *err)
{
    json_error_t jerr;
    json_t *cfg = json_loads(text, 0, &jerr);
    if (!cfg) {
        gp_error_set(err, NULL, 0, 0, "CRI Status: info.config is not JSON (%s, line %d)",
                     jerr.text, jerr.line);
        return -1;
    }
    json_decref(out->config);
    out->config = cfg;
    json_t *ctr = json_object_get(cfg, "containerd");
    const char *name;
    json_t *rt;
    int rc = 0;
    json_object_foreach(json_object_get(ctr, "runtimes"), name, rt)
    {
        if (rc == 0 && cd_names_add(&out->runtimes, name, strlen(name)) != 0) rc = -1;
    }
    const char *def = json_string_value(json_object_get(ctr, "defaultRuntimeName"));
    if (rc == 0 && def && !(out->default_runtime = strdup(def))) rc = -1;
    if (rc != 0) gp_error_set(err, NULL, 0, 0, "out of memory");
    return rc;
}

int cd_cri_status_decode(const void *bytes, size_t len, cd_cri_status *out, gp_error *err)
{
    json_t *answer = kube_protobuf_decode_message(bytes, len, &status_response, err);
    if (!answer) return -1;
    json_decref(out->answer);
    out->answer = answer;
    json_t *conditions = json_object_get(json_object_get(answer, "status"), "conditions");
    out->runtime_ready = condition_true(conditions, "RuntimeReady");
    if (read_handlers(json_object_get(answer, "runtime_handlers"), out) != 0) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    const char *config =
        json_string_value(json_object_get(json_object_get(answer, "info"), "config"));
    if (config && read_config(config, out, err) != 0) return -1;
    return 0;
}

int cd_cri_version_decode(const void *bytes, size_t len, cd_cri_status *out, gp_error *err)
{
    json_t *v = kube_protobuf_decode_message(bytes, len, &version_response, err);
    if (!v) return -1;
    copy(out->runtime_name, sizeof out->runtime_name,
         json_string_value(json_object_get(v, "runtime_name")));
    copy(out->runtime_version, sizeof out->runtime_version,
         json_string_value(json_object_get(v, "runtime_version")));
    json_decref(out->version);
    out->version = v;
    return 0;
}

void cd_cri_status_free(cd_cri_status *s)
{
    cd_names_free(&s->handlers);
    cd_names_free(&s->runtimes);
    free(s->default_runtime);
    s->default_runtime = NULL;
    json_decref(s->answer);
    json_decref(s->version);
    json_decref(s->config);
    s->answer = s->version = s->config = NULL;
}

bool cd_cri_status_has_handler(const cd_cri_status *s, const char *name)
{
    return s->handlers_reported ? cd_names_contains(&s->handlers, name)
                                : cd_names_contains(&s->runtimes, name);
}

/* The CRI plugins, the one owning the runtime handlers first. */
static const char *const cri_plugins[][2] = {
    {"io.containerd.cri.v1", "runtime"}, /* 2.x */
    {"io.containerd.grpc.v1", "cri"},    /* the CRI service; all of CRI in 1.x */
};

static bool is_plugin(const json_t *p, size_t which)
{
    const char *type = json_string_value(json_object_get(p, "type"));
    const char *id = json_string_value(json_object_get(p, "id"));
    return type && id && strcmp(type, cri_plugins[which][0]) == 0 &&
           strcmp(id, cri_plugins[which][1]) == 0;
}

static void set_plugin(cd_cri_plugin_error *out, size_t which, const json_t *p)
{
    out->found = true;
    snprintf(out->plugin, sizeof out->plugin, "%s.%s", cri_plugins[which][0],
             cri_plugins[which][1]);
    const json_t *e = json_object_get(p, "init_err");
    out->failed = e != NULL;
    copy(out->message, sizeof out->message, json_string_value(json_object_get(e, "message")));
}

int cd_cri_plugins_decode(const void *bytes, size_t len, cd_cri_plugin_error *out, gp_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *answer = kube_protobuf_decode_message(bytes, len, &plugins_response, err);
    if (!answer) return -1;
    json_t *list = json_object_get(answer, "plugins");
    for (size_t which = 0; which < 2 && !out->failed; which++) {
        size_t i;
        json_t *p;
        json_array_foreach(list, i, p)
        {
            if (!is_plugin(p, which)) continue;
            if (!out->found || json_object_get(p, "init_err")) set_plugin(out, which, p);
            break;
        }
    }
    json_decref(answer);
    return 0;
}

/* ---- asking ---- */

typedef enum asked { ASKED_OK, ASKED_UNIMPLEMENTED, ASKED_UNREACHABLE, ASKED_FAILED } asked;

/* One call; on ASKED_OK *reply holds the answer (the caller frees it). */
static asked call(const char *address, const char *method, const gp_buf *req, cd_grpc_reply *reply,
                  gp_error *err)
{
    const char *bytes = req->len ? req->data : "";
    cd_grpc_result r = cd_grpc_call(address, method, bytes, req->len, CALL_TIMEOUT_MS, reply, err);
    if (r == CD_GRPC_UNREACHABLE) return ASKED_UNREACHABLE;
    if (r != CD_GRPC_ANSWERED) return ASKED_FAILED;
    if (reply->status == CD_GRPC_STATUS_OK) return ASKED_OK;
    asked a = reply->status == CD_GRPC_STATUS_UNIMPLEMENTED ? ASKED_UNIMPLEMENTED : ASKED_FAILED;
    char code[32];
    gp_error_set(err, NULL, 0, 0, "%s: %s: %s", method,
                 cd_grpc_status_name(reply->status, code, sizeof code), reply->message);
    cd_grpc_reply_free(reply);
    return a;
}

/* Version then Status (verbose) of one RuntimeService version. */
static asked ask_runtime_service(const char *address, const char *api, cd_cri_status *status,
                                 gp_error *err)
{
    char method[96];
    cd_grpc_reply reply;
    gp_buf req = {0};
    snprintf(method, sizeof method, "/runtime.%s.RuntimeService/Version", api);
    asked a = call(address, method, &req, &reply, err);
    if (a != ASKED_OK) return a;
    int rc = cd_cri_version_decode(reply.body, reply.len, status, err);
    cd_grpc_reply_free(&reply);
    if (rc != 0) return ASKED_FAILED;
    snprintf(status->api, sizeof status->api, "%s", api);

    snprintf(method, sizeof method, "/runtime.%s.RuntimeService/Status", api);
    if (kube_protobuf_put_bool(&req, 1, true) != 0) { /* StatusRequest.verbose */
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return ASKED_FAILED;
    }
    a = call(address, method, &req, &reply, err);
    gp_buf_free(&req);
    if (a != ASKED_OK) return a;
    rc = cd_cri_status_decode(reply.body, reply.len, status, err);
    cd_grpc_reply_free(&reply);
    return rc == 0 ? ASKED_OK : ASKED_FAILED;
}

/* The CRI plugins as the daemon lists them, with their init errors. */
static asked ask_plugins(const char *address, cd_cri_plugin_error *plugin, gp_error *err)
{
    gp_buf req = {0};
    for (size_t i = 0; i < 2; i++) {
        char filter[128];
        int n = snprintf(filter, sizeof filter, "type==%s,id==%s", cri_plugins[i][0],
                         cri_plugins[i][1]);
        kube_protobuf_put_string(&req, 1, filter, (size_t)n); /* PluginsRequest.filters */
    }
    cd_grpc_reply reply;
    memset(plugin, 0, sizeof *plugin);
    asked a = ASKED_FAILED;
    if (gp_buf_failed(&req))
        gp_error_set(err, NULL, 0, 0, "out of memory");
    else
        a = call(address, "/containerd.services.introspection.v1.Introspection/Plugins", &req,
                 &reply, err);
    gp_buf_free(&req);
    if (a != ASKED_OK) return a;
    int rc = cd_cri_plugins_decode(reply.body, reply.len, plugin, err);
    cd_grpc_reply_free(&reply);
    return rc == 0 ? ASKED_OK : ASKED_FAILED;
}

/* The daemon's plugin list settles it when its CRI plugin failed or is not
 * there. It is asked first: a call to the CRI of a daemon that does not
 * serve it gets a trailers-only UNIMPLEMENTED and a stream reset that can
 * overtake the answer, while Introspection always answers whole. */
cd_cri_answer cd_cri_ask(const char *address, cd_cri_status *status, cd_cri_plugin_error *plugin,
                         gp_error *err)
{
    memset(status, 0, sizeof *status);
    gp_error ignored = {0};
    asked listed = ask_plugins(address, plugin, &ignored);
    if (listed == ASKED_UNREACHABLE) {
        if (err) *err = ignored;
        return CD_CRI_UNREACHABLE;
    }
    if (listed == ASKED_OK && plugin->found && plugin->failed) {
        gp_error_set(err, NULL, 0, 0, "plugin %s failed to load: %s", plugin->plugin,
                     plugin->message);
        return CD_CRI_NOT_SERVED;
    }
    if (listed == ASKED_OK && !plugin->found) {
        gp_error_set(err, NULL, 0, 0,
                     "the daemon has no CRI plugin (io.containerd.grpc.v1.cri disabled?)");
        return CD_CRI_NOT_SERVED;
    }
    asked a = ask_runtime_service(address, "v1", status, err);
    if (a == ASKED_UNIMPLEMENTED || a == ASKED_FAILED) {
        /* v1's refusal is the one to show: v1alpha2 is only the fallback,
         * for a daemon older than 1.6. */
        gp_error v1_refusal = err ? *err : (gp_error){0};
        asked v1 = a;
        cd_cri_status_free(status);
        memset(status, 0, sizeof *status);
        a = ask_runtime_service(address, "v1alpha2", status, err);
        if (a != ASKED_OK) {
            if (err) *err = v1_refusal;
            a = v1;
        }
    }
    if (a == ASKED_OK) return CD_CRI_SERVED;
    cd_cri_status_free(status);
    memset(status, 0, sizeof *status);
    if (a == ASKED_UNREACHABLE) return CD_CRI_UNREACHABLE;
    return a == ASKED_UNIMPLEMENTED ? CD_CRI_NOT_SERVED : CD_CRI_FAILED;
}
