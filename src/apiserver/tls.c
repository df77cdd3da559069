#include "apiserver/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/file.h"

static char *dup_datum(const gnutls_datum_t *d)
{
    char *s = malloc(d->size + 1);
    if (!s) return NULL;
    memcpy(s, d->data, d->size);
    s[d->size] = '\0';
    return s;
}

static int write_private(const char *path, const char *text, gp_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    size_t len = strlen(text);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) != 0) {
        gp_error_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    return 0;
}

static int add_ip_san(gnutls_x509_crt_t crt, const char *address)
{
    unsigned char ip[16];
    if (inet_pton(AF_INET, address, ip) == 1)
        return gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, 4,
                                                    GNUTLS_FSAN_APPEND);
    return 0;
}

/* A fresh key and self-signed certificate, as PEM. */
static int generate(const char *address, as_tls *out)
{
    gnutls_x509_privkey_t key = NULL;
    gnutls_x509_crt_t crt = NULL;
    gnutls_datum_t cert_pem = {0}, key_pem = {0};
    unsigned char serial[16];
    int rc = gnutls_x509_privkey_init(&key);
    if (rc == 0)
        rc = gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
                                          GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0);
    if (rc == 0) rc = gnutls_x509_crt_init(&crt);
    if (rc == 0) rc = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof serial);
    serial[0] &= 0x7F; /* a positive serial */
    time_t now = time(NULL);
    if (rc == 0) rc = gnutls_x509_crt_set_version(crt, 3);
    if (rc == 0) rc = gnutls_x509_crt_set_serial(crt, serial, sizeof serial);
    if (rc == 0) rc = gnutls_x509_crt_set_activation_time(crt, now - 3600);
    if (rc == 0) rc = gnutls_x509_crt_set_expiration_time(crt, now + 10L * 365 * 86400);
    if (rc == 0)
        rc = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, "gpuop", 5);
    if (rc == 0) rc = gnutls_x509_crt_set_key(crt, key);
    if (rc == 0) rc = gnutls_x509_crt_set_basic_constraints(crt, 1, -1);
    if (rc == 0)
        rc = gnutls_x509_crt_set_key_usage(crt,
                                           GNUTLS_KEY_DIGITAL_SIGNATURE | GNUTLS_KEY_KEY_CERT_SIGN);
    if (rc == 0) rc = gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0);
    if (rc == 0)
        rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, "localhost", 9,
                                                  GNUTLS_FSAN_APPEND);
    if (rc == 0) rc = add_ip_san(crt, "127.0.0.1");
    if (rc == 0 && strcmp(address, "127.0.0.1") != 0) rc = add_ip_san(crt, address);
    if (rc == 0) rc = gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0);
    if (rc == 0) rc = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &cert_pem);
    if (rc == 0) rc = gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &key_pem);
    if (rc == 0) {
        out->cert_pem = dup_datum(&cert_pem);
        out->key_pem = dup_datum(&key_pem);
        if (!out->cert_pem || !out->key_pem) rc = GNUTLS_E_MEMORY_ERROR;
    }
    gnutls_free(cert_pem.data);
    gnutls_free(key_pem.data);
    gnutls_x509_crt_deinit(crt);
    gnutls_x509_privkey_deinit(key);
    return rc;
}

int as_tls_ensure(const char *dir, const char *address, as_tls *out, gp_error *err)
{
    memset(out, 0, sizeof *out);
    char cert_path[PATH_MAX + 16], key_path[PATH_MAX + 16];
    snprintf(cert_path, sizeof cert_path, "%s/tls.crt", dir);
    snprintf(key_path, sizeof key_path, "%s/tls.key", dir);
    size_t len;
    gp_error ignored = {0};
    out->cert_pem = gp_read_file(cert_path, &len, &ignored);
    out->key_pem = out->cert_pem ? gp_read_file(key_path, &len, &ignored) : NULL;
    if (!out->cert_pem || !out->key_pem) {
        as_tls_free(out);
        int rc = generate(address, out);
        if (rc != 0) {
            gp_error_set(err, NULL, 0, 0, "cannot make a TLS certificate: %s", gnutls_strerror(rc));
            as_tls_free(out);
            return -1;
        }
        if (write_private(key_path, out->key_pem, err) != 0 ||
            write_private(cert_path, out->cert_pem, err) != 0) {
            as_tls_free(out);
            return -1;
        }
    }
    gnutls_datum_t in = {(unsigned char *)out->cert_pem, (unsigned)strlen(out->cert_pem)};
    gnutls_datum_t b64 = {0};
    if (gnutls_base64_encode2(&in, &b64) != 0 || !(out->cert_base64 = dup_datum(&b64))) {
        gnutls_free(b64.data);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        as_tls_free(out);
        return -1;
    }
    gnutls_free(b64.data);
    return 0;
}

void as_tls_free(as_tls *t)
{
    free(t->cert_pem);
    free(t->key_pem);
    free(t->cert_base64);
    memset(t, 0, sizeof *t);
}
