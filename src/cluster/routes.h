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

/* Fills resp for METHOD PATH (the query string already removed). */
void gc_route(const char *method, const char *path, gc_response *resp);

/* A Kubernetes Status object for an error: kind Status, status Failure. */
void gc_status(gc_response *resp, unsigned code, const char *reason, const char *message);

#endif
