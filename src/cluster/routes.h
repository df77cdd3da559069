/* What the API server answers, as pure functions of the request: the HTTP
 * glue (server.c) stays apart, so routes are tested without sockets. */
#ifndef GPUOP_CLUSTER_ROUTES_H
#define GPUOP_CLUSTER_ROUTES_H

#include <stddef.h>

typedef struct gc_response {
    unsigned status;
    const char *content_type;
    char *body; /* malloc'd */
    size_t len;
} gc_response;

typedef struct gc_request {
    const char *method;
    const char *path;   /* without the query string */
    const char *accept; /* the Accept header, or NULL */
    const char *host;   /* the Host header, or NULL */
} gc_request;

void gc_route(const gc_request *req, gc_response *resp);

/* A Kubernetes Status object for an error: kind Status, status Failure. */
void gc_status(gc_response *resp, unsigned code, const char *reason, const char *message);

#endif
