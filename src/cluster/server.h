/* The embedded Kubernetes API server: HTTP, authentication, routing.
 *
 * Loopback only unless told otherwise, and every request must carry the
 * bearer token of the kubeconfig the server wrote: the lab runs on shared
 * machines. The real kubectl is the client it is judged by. */
#ifndef GPUOP_CLUSTER_SERVER_H
#define GPUOP_CLUSTER_SERVER_H

#include <stdint.h>

#include "cluster/routes.h"
#include "util/error.h"

typedef struct gc_server gc_server;

typedef struct gc_server_options {
    const char *address;  /* default 127.0.0.1 */
    uint16_t port;        /* 0: a free port */
    const char *token;    /* required on every request */
    const char *cert_pem; /* the server speaks HTTPS with these */
    const char *key_pem;
    gc_api *api; /* the objects served; NULL serves only discovery */
} gc_server_options;

gc_server *gc_server_start(const gc_server_options *opt, gp_error *err);
uint16_t gc_server_port(const gc_server *s);
void gc_server_stop(gc_server *s);

#endif
