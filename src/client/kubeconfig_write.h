/* The kubeconfig that lets kubectl (or gpuop's own client) reach the
 * embedded API server. It holds the bearer token, so it is written 0600,
 * atomically (a reader never sees half a file). */
#ifndef GPUOP_CLIENT_KUBECONFIG_WRITE_H
#define GPUOP_CLIENT_KUBECONFIG_WRITE_H

#include "util/error.h"

/* Writes a kubeconfig with one cluster, user and context, all named `name`,
 * as JSON (which kubectl reads like YAML). */
int kc_kubeconfig_write(const char *path, const char *name, const char *server_url,
                        const char *ca_base64, const char *token, gp_error *err);

#endif
