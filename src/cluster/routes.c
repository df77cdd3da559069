#include "cluster/routes.h"

#include "cluster/discovery.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kubectl 1.32 is the client; it warns on version skew, so the server says
 * it is 1.32 (k8s-semantics.md, section 1). */
#define KUBE_GIT_VERSION "v1.32.0-gpuop"

static void set_json(gc_response *resp, unsigned status, json_t *body)
{
    resp->status = status;
    resp->content_type = "application/json";
    resp->body = json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER);
    resp->len = resp->body ? strlen(resp->body) : 0;
    json_decref(body);
}

static void set_text(gc_response *resp, unsigned status, const char *text)
{
    resp->status = status;
    resp->content_type = "text/plain; charset=utf-8";
    resp->body = strdup(text);
    resp->len = resp->body ? strlen(text) : 0;
}

void gc_status(gc_response *resp, unsigned code, const char *reason, const char *message)
{
    json_t *s = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion",
                          "v1", "metadata", "status", "Failure", "message", message, "reason",
                          reason, "code", (int)code);
    set_json(resp, code, s);
}

static void version(gc_response *resp)
{
    json_t *v = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "major", "1", "minor",
                          "32", "gitVersion", KUBE_GIT_VERSION, "gitCommit", "gpuop",
                          "gitTreeState", "clean", "buildDate", "2026-01-01T00:00:00Z", "goVersion",
                          "none (gpuop is C)", "compiler", "gc", "platform", "linux/amd64");
    set_json(resp, 200, v);
}

/* kubectl asks for the aggregated form first; plain JSON means legacy. */
static bool wants_aggregated(const gc_request *req)
{
    return req->accept && strstr(req->accept, "as=APIGroupDiscoveryList") &&
           strstr(req->accept, "v=v2;");
}

static bool discovery(const gc_request *req, gc_response *resp)
{
    const char *p = req->path;
    if (strcmp(p, "/api") == 0 || strcmp(p, "/apis") == 0) {
        bool core = p[4] == '\0';
        if (wants_aggregated(req)) {
            set_json(resp, 200, gc_discovery_aggregated(core));
            resp->content_type = GC_AGGREGATED_DISCOVERY_TYPE;
        } else {
            set_json(resp, 200,
                     core ? gc_discovery_api_versions(req->host ? req->host : "127.0.0.1")
                          : gc_discovery_group_list());
        }
        return true;
    }
    char group[64], version[16], extra;
    json_t *list = NULL;
    if (sscanf(p, "/api/%15[^/]%c", version, &extra) == 1)
        list = gc_discovery_resource_list("", version);
    else if (sscanf(p, "/apis/%63[^/]/%15[^/]%c", group, version, &extra) == 2)
        list = gc_discovery_resource_list(group, version);
    if (!list) return false;
    set_json(resp, 200, list);
    return true;
}

void gc_route(const gc_request *req, gc_response *resp)
{
    memset(resp, 0, sizeof *resp);
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
    if (get && discovery(req, resp)) return;
    gc_status(resp, 404, "NotFound", "the server could not find the requested resource");
}
