/* What the API server answers, as functions of the request: the HTTP glue
 * (server.c) stays apart, so routes are tested without sockets. */
#ifndef GPUOP_CLUSTER_ROUTES_H
#define GPUOP_CLUSTER_ROUTES_H

#include <stddef.h>

#include "cluster/store.h"

/* A watch stream: the server pulls its bytes until it ends. */
typedef struct gc_watch gc_watch;

typedef struct gc_response {
    unsigned status;
    const char *content_type;
    char *body;    /* malloc'd; or */
    gc_blob *blob; /* a stored object sent as it is (a reference the response owns); or */
    gc_watch *watch;
    size_t len;
    /* A write's resourceVersion, for a request with defer_commit: the
     * caller waits for it (gc_store_sync) before it counts on the write. */
    uint64_t commit_rv;
} gc_response;

typedef struct gc_request {
    const char *method;
    const char *path;         /* without the query string */
    const char *accept;       /* the Accept header, or NULL */
    const char *host;         /* the Host header, or NULL */
    const char *content_type; /* or NULL */
    const char *body;         /* NULL when there is none */
    size_t body_len;
    /* A query parameter, already unescaped, or NULL. */
    const char *(*query)(void *ctx, const char *key);
    void *query_ctx;
    /* An in-process writer that waits for its writes' commits itself, once
     * for a batch of them (write_queue.c): the answer comes as soon as the
     * write is made in memory, with its rv in commit_rv. */
    bool defer_commit;
} gc_request;

/* The objects the server serves. */
typedef struct gc_api {
    gc_store *store;
} gc_api;

/* Creates the namespaces a cluster starts with, when missing. */
int gc_api_bootstrap(gc_api *api, gp_error *err);

void gc_route(gc_api *api, const gc_request *req, gc_response *resp);
/* Frees what the response holds (when the server did not send it). */
void gc_response_free(gc_response *resp);

/* A Kubernetes Status object for an error: kind Status, status Failure. */
void gc_status(gc_response *resp, unsigned code, const char *reason, const char *message);

/* The object API (api.c): CRUD, LIST, WATCH under /api and /apis. False
 * when the path is not an object path. */
int gc_api_handle(gc_api *api, const gc_request *req, gc_response *resp);

/* Watch streams (watch.c). Fills buf with up to size bytes of the stream;
 * blocks until there is something to send. Returns the byte count, 0 when
 * the stream has ended. */
size_t gc_watch_read(gc_watch *w, char *buf, size_t size);
void gc_watch_free(gc_watch *w);

#endif
