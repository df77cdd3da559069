/* Which cluster, user and namespace a command talks to, resolved from
 * kubeconfig files exactly as kubectl resolves them.
 *
 * Files: --kubeconfig FILE alone when given (it must exist); else every
 * file of $KUBECONFIG (':'-separated, missing files skipped, empty entries
 * ignored) merged so that the first file to set a map key or a named entry
 * wins; else ~/.kube/config. Context: --context, else current-context.
 * Namespace: --namespace, else the context's, else "default".
 * Relative paths in a file (certificate-authority, client-certificate,
 * client-key, tokenFile) are relative to the file that holds them. */
#ifndef GPUOP_CLIENT_KUBECONFIG_H
#define GPUOP_CLIENT_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

typedef struct kc_options {
    const char *kubeconfig; /* --kubeconfig, or NULL */
    const char *context;    /* --context, or NULL */
    const char *nspace;     /* --namespace, or NULL */
    long timeout_ms;        /* per request; 0 = 30 s. A watch's own timeout is separate */
} kc_options;

/* A resolved connection: everything is a copy owned by the config (free
 * it with kc_config_free; it shares nothing with the files). PEM blobs hold
 * the bytes (from *-data, base64-decoded, or read from the named file), each
 * with a '\0' after them that the length does not count. Strings that the
 * kubeconfig did not set are NULL; server, nspace and the names of the
 * context and cluster are always set. */
typedef struct kc_config {
    char *context_name;
    char *cluster_name;
    char *user_name;
    char *server; /* "https://127.0.0.1:6443", no trailing '/' */
    char *nspace;
    char *ca_pem;
    size_t ca_pem_len;
    char *cert_pem;
    size_t cert_pem_len;
    char *key_pem;
    size_t key_pem_len;
    char *token;               /* bearer token (token, or tokenFile's content trimmed) */
    char *username, *password; /* basic auth, when the user entry has them */
    char *tls_server_name;
    bool insecure_skip_tls_verify;
    long timeout_ms;
    char *source; /* the file that holds the context, for messages */
} kc_config;

/* exec and auth-provider users, and impersonation, are refused with an
 * error naming the user entry; proxy-url is ignored.
 * Fills *out; returns 0, or -1 with err saying what is missing and where
 * (e.g. `context "lab" not found in /root/.kube/config`, `no kubeconfig:
 * set --kubeconfig or KUBECONFIG, or create ~/.kube/config`). */
int kc_config_load(const kc_options *opt, kc_config **out, gp_error *err);
void kc_config_free(kc_config *c);

#endif
