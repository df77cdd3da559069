#include "apiserver/routes.h"

#include "apiserver/api_internal.h"
#include "apiserver/discovery_internal.h"
#include "apiserver/resources.h"
#include "util/hash.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kubectl 1.32 is the client; it warns on version skew, so the server says
 * it is 1.32 (k8s-semantics.md, section 1). */
#define KUBE_GIT_VERSION "v1.32.0-gpuop"

static void set_json(as_response *resp, unsigned status, json_t *body)
{
    memset(resp, 0, sizeof *resp);
    resp->status = status;
    resp->content_type = "application/json";
    resp->body = json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER);
    resp->len = resp->body ? strlen(resp->body) : 0;
    json_decref(body);
}

static void set_text(as_response *resp, unsigned status, const char *text)
{
    memset(resp, 0, sizeof *resp);
    resp->status = status;
    resp->content_type = "text/plain; charset=utf-8";
    resp->body = strdup(text);
    resp->len = resp->body ? strlen(text) : 0;
}

/* A message as a JSON string; bytes that are not UTF-8 (from a request path,
 * say) become '?', so an error answer can always be written. */
static json_t *message_string(const char *message)
{
    json_t *m = json_string(message);
    if (m) return m;
    char *copy = strdup(message);
    if (!copy) return NULL;
    for (char *c = copy; *c; c++)
        if ((unsigned char)*c >= 0x80) *c = '?';
    m = json_string(copy);
    free(copy);
    return m;
}

void as_json_response(as_response *resp, unsigned status, json_t *body)
{
    if (!body) {
        as_status(resp, 500, "InternalError", "out of memory");
        return;
    }
    set_json(resp, status, body);
}

void as_status(as_response *resp, unsigned code, const char *reason, const char *message)
{
    json_t *s = json_pack("{s:s, s:s, s:{}, s:s, s:o*, s:s, s:i}", "kind", "Status", "apiVersion",
                          "v1", "metadata", "status", "Failure", "message", message_string(message),
                          "reason", reason, "code", (int)code);
    set_json(resp, code, s);
}

static void version(as_response *resp)
{
    json_t *v = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "major", "1", "minor",
                          "32", "gitVersion", KUBE_GIT_VERSION, "gitCommit", "gpuop",
                          "gitTreeState", "clean", "buildDate", "2026-01-01T00:00:00Z", "goVersion",
                          "none (gpuop is C)", "compiler", "gc", "platform", "linux/amd64");
    set_json(resp, 200, v);
}

/* kubectl asks for the aggregated form first; plain JSON means legacy. */
static bool wants_aggregated(const as_request *req)
{
    return req->accept && strstr(req->accept, "as=APIGroupDiscoveryList") &&
           strstr(req->accept, "v=v2;");
}

static bool discovery(const as_request *req, as_response *resp)
{
    const char *p = req->path;
    if (strcmp(p, "/api") == 0 || strcmp(p, "/apis") == 0) {
        bool core = p[4] == '\0';
        if (wants_aggregated(req)) {
            set_json(resp, 200, as_discovery_aggregated(core));
            resp->content_type = AS_AGGREGATED_DISCOVERY_TYPE;
        } else {
            set_json(resp, 200,
                     core ? as_discovery_api_versions(req->host ? req->host : "127.0.0.1")
                          : as_discovery_group_list());
        }
        return true;
    }
    char group[64], version[16], extra;
    json_t *list = NULL;
    if (sscanf(p, "/api/%15[^/]%c", version, &extra) == 1)
        list = as_discovery_resource_list("", version);
    else if (sscanf(p, "/apis/%63[^/]/%15[^/]%c", group, version, &extra) == 2)
        list = as_discovery_resource_list(group, version);
    if (!list) return false;
    set_json(resp, 200, list);
    return true;
}

/* The OpenAPI v3 kubectl needs to validate on the server (section 2.4):
 * the root lists every group version; each group version's document has,
 * per kind, a PATCH operation that carries the kind and accepts
 * fieldValidation. kubectl then sends fieldValidation=Strict and leaves
 * validation to the server, which is where ours lives. */
static void gv_path(const as_resource *r, char *buf, size_t size)
{
    if (r->group[0])
        snprintf(buf, size, "apis/%s/%s", r->group, r->version);
    else
        snprintf(buf, size, "api/%s", r->version);
}

static json_t *openapi_group_version(const char *want)
{
    size_t n;
    const as_resource *rs = as_resources(&n);
    json_t *paths = json_object();
    for (size_t i = 0; i < n; i++) {
        const as_resource *r = &rs[i];
        char gv[128], path[256];
        gv_path(r, gv, sizeof gv);
        if (strcmp(gv, want) != 0) continue;
        snprintf(path, sizeof path, "/%s/%s%s/{name}", gv,
                 r->namespaced ? "namespaces/{namespace}/" : "", r->resource);
        json_t *op =
            json_pack("{s:s, s:{s:s, s:s, s:s}, s:[{s:s, s:s, s:{s:s}}], s:{}}", "operationId",
                      r->kind, "x-kubernetes-group-version-kind", "group", r->group, "version",
                      r->version, "kind", r->kind, "parameters", "name", "fieldValidation", "in",
                      "query", "schema", "type", "string", "responses");
        json_object_set_new(paths, path, json_pack("{s:o}", "patch", op));
    }
    if (json_object_size(paths) == 0) {
        json_decref(paths);
        return NULL;
    }
    return json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:{}}}", "openapi", "3.0.0", "info", "title",
                     "Kubernetes", "version", KUBE_GIT_VERSION, "paths", paths, "components",
                     "schemas");
}

/* kubectl caches each document by its hash: the hash of its content. */
static void content_hash(const json_t *doc, char out[17])
{
    char *text = json_dumps(doc, JSON_COMPACT);
    unsigned long long h = gp_hash_str(GP_HASH_SEED, text);
    free(text);
    snprintf(out, 17, "%016llX", h);
}

static json_t *openapi_root(void)
{
    size_t n;
    const as_resource *rs = as_resources(&n);
    json_t *paths = json_object();
    for (size_t i = 0; i < n; i++) {
        char gv[128], url[256], hash[17];
        gv_path(&rs[i], gv, sizeof gv);
        if (json_object_get(paths, gv)) continue;
        json_t *doc = openapi_group_version(gv);
        content_hash(doc, hash);
        json_decref(doc);
        snprintf(url, sizeof url, "/openapi/v3/%s?hash=%s", gv, hash);
        json_object_set_new(paths, gv, json_pack("{s:s}", "serverRelativeURL", url));
    }
    return json_pack("{s:o}", "paths", paths);
}

/* /openapi/v2, which kubectl reads only to validate a List on the client
 * (kubectl's query-param verifier never sends fieldValidation for
 * kind List, so each item is checked against the v2 schemas): a document
 * with no definitions, in which kubectl finds no schema and so checks
 * nothing itself, and then sends each item with fieldValidation=Strict to
 * the server, whose decoder is the one that judges. kubectl's apply, which
 * also looks here, finds no schema either and uses its compiled-in types,
 * as it does when this answers 404. Protobuf (gnostic openapi_v2.Document:
 * 1 swagger, 2 info {1 title, 2 version}) unless JSON is asked for. */
static void openapi_v2(const as_request *req, as_response *resp)
{
    if (req->accept && strstr(req->accept, "protobuf")) {
        static const char title[] = "Kubernetes", version[] = KUBE_GIT_VERSION;
        char doc[128];
        size_t n = 0, tl = sizeof title - 1, vl = sizeof version - 1;
        doc[n++] = 0x0a, doc[n++] = 3, memcpy(doc + n, "2.0", 3), n += 3;
        doc[n++] = 0x12, doc[n++] = (char)(2 + tl + 2 + vl);
        doc[n++] = 0x0a, doc[n++] = (char)tl, memcpy(doc + n, title, tl), n += tl;
        doc[n++] = 0x12, doc[n++] = (char)vl, memcpy(doc + n, version, vl), n += vl;
        memset(resp, 0, sizeof *resp);
        resp->status = 200;
        resp->content_type = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
        resp->body = malloc(n);
        if (resp->body) memcpy(resp->body, doc, n);
        resp->len = resp->body ? n : 0;
        return;
    }
    set_json(resp, 200,
             json_pack("{s:s, s:{s:s, s:s}, s:{}, s:{}}", "swagger", "2.0", "info", "title",
                       "Kubernetes", "version", KUBE_GIT_VERSION, "paths", "definitions"));
}

static bool openapi(const as_request *req, as_response *resp)
{
    if (strcmp(req->path, "/openapi/v2") == 0) {
        openapi_v2(req, resp);
        return true;
    }
    if (strcmp(req->path, "/openapi/v3") == 0) {
        set_json(resp, 200, openapi_root());
        return true;
    }
    if (strncmp(req->path, "/openapi/v3/", 12) != 0) return false;
    json_t *doc = openapi_group_version(req->path + 12);
    if (!doc) return false;
    set_json(resp, 200, doc);
    return true;
}

/* kube-apiserver's /metrics, of what the limits need seen: the watches
 * being streamed. */
static void metrics(as_response *resp)
{
    char *text = as_watch_metrics();
    if (!text) {
        as_status(resp, 500, "InternalError", "out of memory");
        return;
    }
    set_text(resp, 200, text);
    free(text);
    resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

void as_response_free(as_response *resp)
{
    free(resp->body);
    free(resp->warnings);
    as_blob_unref(resp->blob);
    as_watch_free(resp->watch);
    memset(resp, 0, sizeof *resp);
}

/* s (n bytes) quoted as Go's %q quotes a string (strconv.Quote), which is
 * how kube-apiserver's messages show a name: a NUL byte is \x00. Bytes
 * from 0x80 on are kept (message_string makes bad UTF-8 '?'). */
static void go_quote(const char *s, size_t n, char *out, size_t size)
{
    size_t o = 0;
    out[o++] = '"';
    for (size_t i = 0; i < n && o + 6 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = c == '"'    ? "\\\""
                          : c == '\\' ? "\\\\"
                          : c == '\a' ? "\\a"
                          : c == '\b' ? "\\b"
                          : c == '\f' ? "\\f"
                          : c == '\n' ? "\\n"
                          : c == '\r' ? "\\r"
                          : c == '\t' ? "\\t"
                          : c == '\v' ? "\\v"
                                      : NULL;
        if (esc)
            o += (size_t)snprintf(out + o, size - o, "%s", esc);
        else if (c < 0x20 || c == 0x7f)
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    out[o++] = '"';
    out[o] = '\0';
}

/* The last segment of a path of n bytes (the one before it with skip 1). */
static const char *segment_from_end(const char *path, size_t n, size_t skip, size_t *len)
{
    size_t end = n;
    for (;;) {
        while (end > 0 && path[end - 1] == '/')
            end--;
        size_t start = end;
        while (start > 0 && path[start - 1] != '/')
            start--;
        if (skip-- == 0 || start == 0) {
            *len = end - start;
            return path + start;
        }
        end = start;
    }
}

/* A path with a NUL byte (a %00): nothing stored has one in its name or
 * namespace (names are validated), so an object path answers NotFound as
 * kube-apiserver answers it, having looked the name up: the name quoted
 * as Go quotes it, the details with the name as it is. Other paths are
 * not found either. Never the path cut at the NUL, which would name
 * another object. */
static void path_with_nul(const as_request *req, as_response *resp)
{
    char *plain = malloc(req->path_len + 1);
    if (!plain) {
        as_status(resp, 500, "InternalError", "out of memory");
        return;
    }
    for (size_t i = 0; i < req->path_len; i++)
        plain[i] = req->path[i] ? req->path[i] : '\x01'; /* where the segments are */
    plain[req->path_len] = '\0';
    as_path p;
    bool object = as_path_parse(plain, &p) == 0 && p.name[0];
    free(plain);
    if (!object) {
        as_status(resp, 404, "NotFound", "the server could not find the requested resource");
        return;
    }
    size_t len;
    const char *name = segment_from_end(req->path, req->path_len, p.sub[0] ? 1 : 0, &len);
    char q[128], quoted[1024], msg[1200];
    as_qualified_resource(p.resource, q, sizeof q);
    go_quote(name, len, quoted, sizeof quoted);
    snprintf(msg, sizeof msg, "%s %s not found", q, quoted);
    json_t *details = json_object();
    json_object_set_new(details, "name", json_stringn(name, len));
    if (p.resource->group[0]) json_object_set_new(details, "group", json_string(p.resource->group));
    json_object_set_new(details, "kind", json_string(p.resource->resource));
    as_status_details(resp, 404, "NotFound", msg, details);
}

void as_route(as_api *api, const as_request *req, as_response *resp)
{
    memset(resp, 0, sizeof *resp);
    if (req->path_len && memchr(req->path, '\0', req->path_len)) {
        path_with_nul(req, resp);
        return;
    }
    bool get = strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0;
    if (get && strcmp(req->path, "/version") == 0) {
        version(resp);
        return;
    }
    if (get && (strcmp(req->path, "/healthz") == 0 || strcmp(req->path, "/readyz") == 0 ||
                strcmp(req->path, "/livez") == 0)) {
        set_text(resp, 200, "ok");
        return;
    }
    if (get && strcmp(req->path, "/metrics") == 0) {
        metrics(resp);
        return;
    }
    if (get && discovery(req, resp)) return;
    if (get && openapi(req, resp)) return;
    if (api && api->extension && strncmp(req->path, "/gpuop/", 7) == 0) {
        api->extension(api->extension_ctx, req, resp);
        return;
    }
    if (api && as_api_handle(api, req, resp)) return;
    as_status(resp, 404, "NotFound", "the server could not find the requested resource");
}
