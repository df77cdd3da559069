/* The API server's certificate. kubectl (client-go) sends a bearer token
 * only over TLS (kubernetes/kubectl#744: over plain http it silently drops
 * the Authorization header), so the embedded server speaks HTTPS with a
 * self-signed certificate that its kubeconfig trusts. */
#ifndef GPUOP_APISERVER_TLS_H
#define GPUOP_APISERVER_TLS_H

#include "util/error.h"

typedef struct as_tls {
    char *cert_pem;    /* malloc'd, NUL-terminated */
    char *key_pem;     /* malloc'd, NUL-terminated; never leaves DIR (0600) */
    char *cert_base64; /* the PEM in base64, for certificate-authority-data */
} as_tls;

/* Loads DIR/tls.crt and DIR/tls.key, or makes a new ECDSA P-256 key and a
 * self-signed certificate (CA, server auth, 10 years) for 127.0.0.1,
 * localhost and `address`, and stores them there (key 0600). */
int as_tls_ensure(const char *dir, const char *address, as_tls *out, gp_error *err);
void as_tls_free(as_tls *t);

/* The protocol versions the server speaks, as a GnuTLS priority string:
 * TLS 1.2 and 1.3, as kube-apiserver (its secure serving sets MinVersion
 * tls.VersionTLS12: apiserver/pkg/server/secure_serving.go). GnuTLS's
 * NORMAL alone still offers TLS 1.0 and 1.1. */
#define AS_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

#endif
