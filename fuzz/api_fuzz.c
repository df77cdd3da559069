/* libFuzzer target for the API server's request handling (src/apiserver:
 * routes, api, api_write, watch, and through them the protobuf decoder,
 * the patches, strategies and Table printing), without sockets.
 *
 * Each input is a short script of requests against a fresh in-memory store
 * that starts with the bootstrap namespaces. A request is
 *
 *     METHOD-BYTE PATH[?QUERY] '\n' CONTENT-TYPE-BYTE BODY '\0'
 *
 * so one input can create an object and then patch, get, list, watch or
 * delete it. The invariants: no crash, no leak, every answer is a JSON body
 * or stream with a status the API uses, and an error answer is a Status
 * whose code equals the HTTP status. A watch is read after the store has
 * been told to shut down, so it sends what it has and ends instead of
 * waiting for events no one will send. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "apiserver/routes.h"

#define MAX_QUERY 8

typedef struct query {
    char *keys[MAX_QUERY], *values[MAX_QUERY];
    size_t n;
} query;

static const char *lookup(void *ctx, const char *key)
{
    query *q = ctx;
    for (size_t i = 0; i < q->n; i++)
        if (strcmp(q->keys[i], key) == 0) return q->values[i];
    return NULL;
}

static void parse_query(char *text, query *q)
{
    q->n = 0;
    for (char *save = NULL, *kv = strtok_r(text, "&", &save); kv && q->n < MAX_QUERY;
         kv = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(kv, '=');
        q->keys[q->n] = kv;
        q->values[q->n] = eq ? (*eq = '\0', eq + 1) : "";
        q->n++;
    }
}

static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"};
static const char *const types[] = {NULL,
                                    "application/json",
                                    "application/vnd.kubernetes.protobuf",
                                    "application/strategic-merge-patch+json",
                                    "application/merge-patch+json",
                                    "application/json-patch+json",
                                    "application/apply-patch+yaml"};

static void check_answer(as_api *api, as_response *r)
{
    if (r->watch) {
        as_store_shutdown(api->store);
        char buf[4096];
        size_t n, total = 0;
        while ((n = as_watch_read(r->watch, buf, sizeof buf)) > 0 && total < (1u << 20))
            total += n;
        return;
    }
    if (r->status < 200 || r->status > 599) __builtin_trap();
    const char *text = r->blob ? r->blob->text : r->body;
    size_t len = r->blob ? r->blob->len : r->len;
    if (!text) {
        fprintf(stderr, "api_fuzz: HTTP %u with no body\n", r->status);
        __builtin_trap();
    }
    if (strncmp(r->content_type, "text/plain", 10) == 0) return;
    json_t *v = json_loadb(text, len, 0, NULL);
    if (!v) __builtin_trap();
    if (r->status >= 400) {
        const json_t *code = json_object_get(v, "code");
        if (!json_is_integer(code) || json_integer_value(code) != (json_int_t)r->status)
            __builtin_trap();
    }
    json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gp_error err = {0};
    as_api api = {.store = as_store_open(NULL, 64, &err)};
    if (!api.store || as_api_bootstrap(&api, &err) != 0) __builtin_trap();
    char *copy = malloc(size + 1);
    memcpy(copy, data, size);
    copy[size] = '\0';
    size_t at = 0;
    for (int requests = 0; at + 2 < size && requests < 8; requests++) {
        const char *method = methods[(unsigned char)copy[at++] % 6];
        char *path = copy + at;
        char *nl = memchr(path, '\n', size - at);
        if (!nl) break;
        *nl = '\0';
        at = (size_t)(nl - copy) + 1;
        if (at >= size) break;
        const char *type = types[(unsigned char)copy[at++] % 7];
        char *body = copy + at;
        size_t body_len = strnlen(body, size - at);
        at += body_len + 1;
        query q = {0};
        char *qs = strchr(path, '?');
        if (qs) {
            *qs = '\0';
            parse_query(qs + 1, &q);
        }
        as_request req = {.method = method,
                          .path = path,
                          .accept = (body_len & 1) ? "application/json;as=Table;v=v1;g=meta.k8s.io"
                                                   : "application/json",
                          .host = "127.0.0.1:6443",
                          .content_type = type,
                          .body = body_len ? body : NULL,
                          .body_len = body_len,
                          .query = lookup,
                          .query_ctx = &q};
        as_response r;
        as_route(&api, &req, &r);
        if (getenv("API_FUZZ_TRACE")) fprintf(stderr, "%s %s -> %u\n", method, path, r.status);
        check_answer(&api, &r);
        as_response_free(&r);
    }
    free(copy);
    as_store_close(api.store);
    return 0;
}
