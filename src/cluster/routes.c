#include "cluster/routes.h"

#include <jansson.h>
#include <stdbool.h>
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

void gc_route(const char *method, const char *path, gc_response *resp)
{
    memset(resp, 0, sizeof *resp);
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    if (get && strcmp(path, "/version") == 0) {
        version(resp);
        return;
    }
    if (get && (strcmp(path, "/healthz") == 0 || strcmp(path, "/readyz") == 0 ||
                strcmp(path, "/livez") == 0)) {
        set_text(resp, 200, "ok");
        return;
    }
    gc_status(resp, 404, "NotFound", "the server could not find the requested resource");
}
