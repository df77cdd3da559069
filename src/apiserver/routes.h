/* What the API server answers, as functions of the request: the HTTP glue
 * (server.c) stays apart, so routes are tested without sockets. */
#ifndef GPUOP_APISERVER_ROUTES_H
#define GPUOP_APISERVER_ROUTES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "apiserver/store.h"
#include "util/buf.h"

/* A watch stream: the server pulls its bytes until it ends. */
typedef struct as_watch as_watch;

typedef struct as_response {
    unsigned status;
    const char *content_type;
    char *body;    /* malloc'd; or */
    as_blob *blob; /* a stored object sent as it is (a reference the response owns); or */
    as_watch *watch;
    size_t len;
    /* A write's resourceVersion, for a request with defer_commit: the
     * caller waits for it (as_store_sync) before it counts on the write. */
    uint64_t commit_rv;
    /* Warnings for the client, one a line (malloc'd, or NULL): each goes out
     * as a `Warning: 299 - "..."` header, which kubectl prints as
     * `Warning: ...`. */
    char *warnings;
} as_response;

typedef struct as_request {
    const char *method;
    const char *path; /* without the query string, decoded */
    /* The bytes of path when it holds a NUL byte (a %00 decoded): path is
     * then not a C string. 0 otherwise. */
    size_t path_len;
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
} as_request;

/* The objects the server serves. */
/* kube-apiserver's watch cache waits 3 s for a version it has not seen
 * (blockTimeout, apiserver/pkg/storage/cacher/watch_cache.go). */
#define AS_FRESH_WAIT_MS 3000

typedef struct as_api {
    as_store *store;
    /* The ServiceAccount admission plugin: a pod's account must exist, and
     * the pod gets the projected kube-api-access-* volume. Off in a bare
     * API server (unit tests), as kube-apiserver's
     * --disable-admission-plugins=ServiceAccount leaves it. */
    bool admit_service_accounts;
    /* The cluster's CA certificate (PEM), which the root-CA publisher puts
     * in every namespace's kube-root-ca.crt ConfigMap; NULL: none. */
    const char *root_ca_pem;
    /* How long a GET or LIST at a resourceVersion the store has not reached
     * waits for it: AS_FRESH_WAIT_MS in a server, as kube-apiserver's watch
     * cache; 0 answers at once (unit tests, fuzzing, where a wait would
     * only slow every such input down). */
    int fresh_wait_ms;
    /* Routes under /gpuop/ that the program serving the API adds (the node
     * agents of gpuop-apiserver, src/agents/agents.h); NULL: none, and such
     * a path is 404 as any unknown one. Called on the server's threads
     * after the request's token was checked. */
    void (*extension)(void *ctx, const as_request *req, as_response *resp);
    void *extension_ctx;
    /* The log of a container that the program serving the API runs for
     * real on a simulated node (the agents' toolkit and device plugin):
     * 1 with its text appended to out, 0 when it has none (the answer is
     * then kwok's for an unconfigured pod). NULL: none. Same ctx. */
    int (*pod_log)(void *ctx, const char *node, const char *pod_uid, const char *container,
                   gp_buf *out);
} as_api;

/* Creates the namespaces a cluster starts with, when missing. */
int as_api_bootstrap(as_api *api, gp_error *err);

void as_route(as_api *api, const as_request *req, as_response *resp);
/* Frees what the response holds (when the server did not send it). */
void as_response_free(as_response *resp);

/* A JSON answer (steals body; a 500 when it is NULL). */
void as_json_response(as_response *resp, unsigned status, json_t *body);

/* A Kubernetes Status object for an error: kind Status, status Failure. */
void as_status(as_response *resp, unsigned code, const char *reason, const char *message);

/* The object API (api.c): CRUD, LIST, WATCH under /api and /apis. False
 * when the path is not an object path. */
int as_api_handle(as_api *api, const as_request *req, as_response *resp);

/* Watch streams (watch.c). Fills buf with up to size bytes of the stream;
 * blocks until there is something to send. Returns the byte count, 0 when
 * the stream has ended. */
size_t as_watch_read(as_watch *w, char *buf, size_t size);
void as_watch_free(as_watch *w);
/* The Prometheus text of /metrics: the watches being streamed. */
char *as_watch_metrics(void);
/* Ends the stream from another thread (its client has hung up): a reader
 * blocked in as_watch_read returns 0 at once. */
void as_watch_cancel(as_watch *w);

#endif
