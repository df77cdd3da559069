/* The embedded Kubernetes API server: HTTP, authentication, routing.
 *
 * Loopback only unless told otherwise, and every request must carry the
 * bearer token of the kubeconfig the server wrote: the lab runs on shared
 * machines. The real kubectl is the client it is judged by. */
#ifndef GPUOP_APISERVER_SERVER_H
#define GPUOP_APISERVER_SERVER_H

#include <stdint.h>

#include "apiserver/routes.h"
#include "util/error.h"

typedef struct as_server as_server;

typedef struct as_server_options {
    const char *address;  /* default 127.0.0.1 */
    uint16_t port;        /* 0: a free port */
    const char *token;    /* required on every request */
    const char *cert_pem; /* the server speaks HTTPS with these */
    const char *key_pem;
    as_api *api; /* the objects served; NULL serves only discovery */
} as_server_options;

as_server *as_server_start(const as_server_options *opt, gp_error *err);
uint16_t as_server_port(const as_server *s);
void as_server_stop(as_server *s);

#endif
