/* Unary gRPC over a unix socket with libcurl (see grpc.h for the wire). */
#include "containerd/grpc.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <curl/curl.h>

#include "util/buf.h"

/* A CRI Status answer is a few KiB (its verbose config); this bounds a
 * misbehaving server. */
#define MAX_ANSWER      (16u << 20)
#define CONNECT_TIMEOUT 5000L

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

typedef struct call {
    gp_buf body;
    bool has_status;
    int status;
    char message[1024];
} call;

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    call *c = ud;
    return gp_buf_addn(&c->body, p, size * n) == 0 ? size * n : 0;
}

static int hex_value(int ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    ch = tolower(ch);
    return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* grpc-message is percent-encoded UTF-8 (gRPC over HTTP/2, "Responses");
 * a malformed escape is kept as written, as grpc-go does. */
static void percent_decode(const char *s, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < cap; i++) {
        int hi = i + 2 < len ? hex_value((unsigned char)s[i + 1]) : -1;
        int lo = i + 2 < len ? hex_value((unsigned char)s[i + 2]) : -1;
        if (s[i] == '%' && hi >= 0 && lo >= 0) {
            out[n++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            out[n++] = s[i];
        }
    }
    out[n] = '\0';
}

/* The value of header `name` in a "Name: value\r\n" line, trimmed. */
static bool header_value(const char *line, size_t len, const char *name, const char **value,
                         size_t *vlen)
{
    size_t nl = strlen(name);
    if (len <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':') return false;
    const char *v = line + nl + 1;
    size_t rest = len - nl - 1;
    while (rest && (*v == ' ' || *v == '\t')) {
        v++;
        rest--;
    }
    while (rest && (v[rest - 1] == '\r' || v[rest - 1] == '\n' || v[rest - 1] == ' '))
        rest--;
    *value = v;
    *vlen = rest;
    return true;
}

/* Headers and trailers alike come here: HTTP/2 trailers go to libcurl's
 * header callback. */
static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    call *c = ud;
    size_t len = size * n;
    const char *v;
    size_t vlen;
    if (header_value(p, len, "grpc-status", &v, &vlen)) {
        char digits[16];
        snprintf(digits, sizeof digits, "%.*s", (int)(vlen < 15 ? vlen : 15), v);
        char *end;
        long status = strtol(digits, &end, 10);
        if (end != digits && *end == '\0' && status >= 0 && status < 1000) {
            c->has_status = true;
            c->status = (int)status;
        }
    } else if (header_value(p, len, "grpc-message", &v, &vlen)) {
        percent_decode(v, vlen, c->message, sizeof c->message);
    }
    return len;
}

/* The request body: flag 0 (not compressed), the length, the message. */
static int frame(gp_buf *b, const void *request, size_t len)
{
    uint8_t prefix[5] = {0, (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
                         (uint8_t)len};
    gp_buf_addn(b, prefix, sizeof prefix);
    return gp_buf_addn(b, request, len);
}

/* The answer's one message, unframed. */
static cd_grpc_result unframe(const call *c, const char *where, cd_grpc_reply *out, gp_error *err)
{
    const uint8_t *p = (const uint8_t *)gp_buf_str(&c->body);
    size_t len = c->body.len;
    if (len == 0 && c->status != CD_GRPC_STATUS_OK) return CD_GRPC_ANSWERED;
    if (len < 5) {
        gp_error_set(err, NULL, 0, 0, "%s: the gRPC answer has no message (%zu bytes)", where, len);
        return CD_GRPC_NOT_GRPC;
    }
    size_t n = ((size_t)p[1] << 24) | ((size_t)p[2] << 16) | ((size_t)p[3] << 8) | p[4];
    if (p[0] != 0) {
        gp_error_set(err, NULL, 0, 0, "%s: the gRPC answer is compressed, which was not asked for",
                     where);
        return CD_GRPC_NOT_GRPC;
    }
    if (n != len - 5) {
        gp_error_set(err, NULL, 0, 0,
                     "%s: the gRPC answer frames %zu bytes but %zu followed (one message "
                     "expected)",
                     where, n, len - 5);
        return CD_GRPC_NOT_GRPC;
    }
    out->body = malloc(n ? n : 1);
    if (!out->body) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return CD_GRPC_NOT_GRPC;
    }
    memcpy(out->body, p + 5, n);
    out->len = n;
    return CD_GRPC_ANSWERED;
}

/* A transfer that failed before an answer: unreachable, or not HTTP/2. */
static cd_grpc_result transfer_failed(CURL *h, CURLcode rc, const char *errbuf, const char *where,
                                      gp_error *err)
{
    long os_errno = 0;
    curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
    const char *why = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    if (rc == CURLE_COULDNT_CONNECT && os_errno) {
        gp_error_set(err, NULL, 0, 0, "cannot connect to %s: %s", where, strerror((int)os_errno));
        return CD_GRPC_UNREACHABLE;
    }
    if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_OPERATION_TIMEDOUT) {
        gp_error_set(err, NULL, 0, 0, "cannot connect to %s: %s", where, why);
        return CD_GRPC_UNREACHABLE;
    }
    gp_error_set(err, NULL, 0, 0, "%s does not answer gRPC over HTTP/2: %s", where, why);
    return CD_GRPC_NOT_GRPC;
}

static struct curl_slist *grpc_headers(long timeout_ms)
{
    char deadline[48];
    /* grpc-timeout: the server gives up too (at most 8 digits, "m" = ms). */
    snprintf(deadline, sizeof deadline, "grpc-timeout: %ldm", timeout_ms % 100000000L);
    static const char *const fixed[] = {"Content-Type: application/grpc", "TE: trailers",
                                        "Expect:", "Accept:"};
    struct curl_slist *list = NULL, *next;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        if (!(next = curl_slist_append(list, fixed[i]))) goto fail;
        list = next;
    }
    if ((next = curl_slist_append(list, deadline))) return next;
fail:
    curl_slist_free_all(list);
    return NULL;
}

static cd_grpc_result perform(CURL *h, const char *path, const char *method, const gp_buf *req,
                              long timeout_ms, call *c, gp_error *err)
{
    char url[512], errbuf[CURL_ERROR_SIZE] = "";
    snprintf(url, sizeof url, "http://localhost%s", method);
    struct curl_slist *headers = grpc_headers(timeout_ms);
    if (!headers) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return CD_GRPC_NOT_GRPC;
    }
    CURLcode rc = CURLE_OK;
    rc |= curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, path);
    rc |= curl_easy_setopt(h, CURLOPT_URL, url);
    rc |= curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    rc |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    rc |= curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    rc |= curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT);
    rc |= curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    rc |= curl_easy_setopt(h, CURLOPT_USERAGENT, "grpc-c gpuop");
    rc |= curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    rc |= curl_easy_setopt(h, CURLOPT_POSTFIELDS, gp_buf_str(req));
    rc |= curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->len);
    rc |= curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    rc |= curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
    rc |= curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    rc |= curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
    cd_grpc_result result = CD_GRPC_ANSWERED;
    if (rc != CURLE_OK) {
        gp_error_set(err, NULL, 0, 0,
                     "libcurl refuses the HTTP/2 over unix socket options "
                     "(built without nghttp2?)");
        result = CD_GRPC_NOT_GRPC;
    } else if ((rc = curl_easy_perform(h)) == CURLE_HTTP2_STREAM && c->has_status) {
        /* A complete answer, then RST_STREAM(NO_ERROR): what a server may
         * send when it answers before the request body is all read (RFC
         * 9113 section 8.1; grpc-go does, for the trailers-only UNIMPLEMENTED
         * of an unknown service). libcurl 7.88 reports it as a stream
         * error, though the answer had arrived whole. */
        result = CD_GRPC_ANSWERED;
    } else if (rc != CURLE_OK) {
        result = transfer_failed(h, rc, errbuf, path, err);
    }
    curl_slist_free_all(headers);
    return result;
}

cd_grpc_result cd_grpc_call(const char *socket_path, const char *method, const void *request,
                            size_t request_len, long timeout_ms, cd_grpc_reply *out, gp_error *err)
{
    memset(out, 0, sizeof *out);
    const char *path = strncmp(socket_path, "unix://", 7) == 0 ? socket_path + 7 : socket_path;
    struct stat st;
    if (stat(path, &st) != 0) {
        gp_error_set(err, NULL, 0, 0, "cannot connect to %s: %s", path, strerror(errno));
        return CD_GRPC_UNREACHABLE;
    }
    pthread_once(&global_once, global_init);
    CURL *h = global_rc == CURLE_OK ? curl_easy_init() : NULL;
    if (!h) {
        gp_error_set(err, NULL, 0, 0, "libcurl cannot start");
        return CD_GRPC_NOT_GRPC;
    }
    call c = {.body.max = MAX_ANSWER};
    gp_buf req = {0};
    cd_grpc_result result = CD_GRPC_NOT_GRPC;
    if (frame(&req, request, request_len) != 0)
        gp_error_set(err, NULL, 0, 0, "out of memory");
    else
        result = perform(h, path, method, &req, timeout_ms, &c, err);
    long http = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http);
    curl_easy_cleanup(h);
    if (result == CD_GRPC_ANSWERED && gp_buf_failed(&c.body)) {
        gp_error_set(err, NULL, 0, 0, "%s: the answer to %s is larger than %u bytes", path, method,
                     MAX_ANSWER);
        result = CD_GRPC_NOT_GRPC;
    } else if (result == CD_GRPC_ANSWERED && (http != 200 || !c.has_status)) {
        gp_error_set(err, NULL, 0, 0, "%s: %s got HTTP %ld%s, not a gRPC answer", path, method,
                     http, c.has_status ? "" : " without grpc-status");
        result = CD_GRPC_NOT_GRPC;
    }
    if (result == CD_GRPC_ANSWERED) {
        out->status = c.status;
        snprintf(out->message, sizeof out->message, "%s", c.message);
        result = unframe(&c, path, out, err);
    }
    gp_buf_free(&c.body);
    gp_buf_free(&req);
    if (result != CD_GRPC_ANSWERED) cd_grpc_reply_free(out);
    return result;
}

void cd_grpc_reply_free(cd_grpc_reply *r)
{
    free(r->body);
    r->body = NULL;
    r->len = 0;
}

const char *cd_grpc_status_name(int status, char *buf, size_t cap)
{
    /* grpc/codes: the canonical names, in code order. */
    static const char *const names[] = {
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    };
    if (status >= 0 && (size_t)status < sizeof names / sizeof *names) return names[status];
    snprintf(buf, cap, "code %d", status);
    return buf;
}
