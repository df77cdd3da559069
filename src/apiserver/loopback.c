#include "apiserver/loopback.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_dump.h"

#define MAX_PARAMS 8

typedef struct params {
    char *keys[MAX_PARAMS], *values[MAX_PARAMS];
    char *text;
} params;

static const char *param(void *ctx, const char *key)
{
    params *p = ctx;
    for (size_t i = 0; i < MAX_PARAMS && p->keys[i]; i++)
        if (strcmp(p->keys[i], key) == 0) return p->values[i];
    return NULL;
}

static void split_query(const char *query, params *p)
{
    memset(p, 0, sizeof *p);
    if (!query || !(p->text = strdup(query))) return;
    size_t n = 0;
    for (char *save = NULL, *kv = strtok_r(p->text, "&", &save); kv && n < MAX_PARAMS;
         kv = strtok_r(NULL, "&", &save), n++) {
        char *eq = strchr(kv, '=');
        p->keys[n] = kv;
        p->values[n] = eq ? (*eq = '\0', eq + 1) : "";
    }
}

/* commit_rv NULL: the write is committed before the answer; else the
 * answer comes once it is made, with the rv to wait for in *commit_rv. */
static as_reply call_text(as_api *api, const char *method, const char *path, const char *query,
                          const char *content_type, const char *text, size_t len, bool want_body,
                          uint64_t *commit_rv)
{
    as_reply reply = {0};
    params p;
    split_query(query, &p);
    as_request req = {.method = method,
                      .path = path,
                      .accept = "application/json",
                      .host = "127.0.0.1",
                      .content_type = content_type ? content_type : "application/json",
                      .body = text,
                      .body_len = text ? len : 0,
                      .query = param,
                      .query_ctx = &p,
                      .defer_commit = commit_rv != NULL};
    as_response resp;
    as_route(api, &req, &resp);
    reply.status = resp.status;
    if (commit_rv) *commit_rv = resp.commit_rv;
    if (!want_body)
        ; /* a controller's write: the answer's object is not read, so not parsed */
    else if (resp.blob)
        reply.body = json_loadb(resp.blob->text, resp.blob->len, 0, NULL);
    else if (resp.body)
        reply.body = json_loadb(resp.body, resp.len, 0, NULL);
    /* a watch is not something a controller asks this way */
    as_response_free(&resp);
    free(p.text);
    return reply;
}

static as_reply call(as_api *api, const char *method, const char *path, const char *query,
                     const char *content_type, const json_t *body, bool want_body)
{
    size_t len = 0;
    char *text = body ? gp_json_dump(body, &len) : NULL;
    as_reply reply = call_text(api, method, path, query, content_type, text, len, want_body, NULL);
    free(text);
    return reply;
}

unsigned as_loopback_send_text(as_api *api, const char *method, const char *path, const char *query,
                               const char *content_type, const char *body, size_t len)
{
    return call_text(api, method, path, query, content_type, body, len, false, NULL).status;
}

unsigned as_loopback_send_deferred(as_api *api, const char *method, const char *path,
                                   const char *query, const char *content_type, const char *body,
                                   size_t len, uint64_t *commit_rv)
{
    *commit_rv = 0;
    return call_text(api, method, path, query, content_type, body, len, false, commit_rv).status;
}

as_reply as_loopback_call(as_api *api, const char *method, const char *path, const char *query,
                          const char *content_type, const json_t *body)
{
    return call(api, method, path, query, content_type, body, true);
}

unsigned as_loopback_send(as_api *api, const char *method, const char *path, const char *query,
                          const char *content_type, const json_t *body)
{
    return call(api, method, path, query, content_type, body, false).status;
}

void as_reply_free(as_reply *r)
{
    json_decref(r->body);
    r->body = NULL;
}

const char *as_reply_message(const as_reply *r)
{
    const char *m = json_string_value(json_object_get(r->body, "message"));
    return m ? m : "";
}
