/* Unary gRPC calls to containerd over its unix socket.
 *
 * gRPC is HTTP/2 with a framing of its own: the request is a POST to
 * /PACKAGE.SERVICE/METHOD with content-type application/grpc and
 * `te: trailers`, its body one message behind a 5-byte prefix (a
 * compression flag, then the length, big-endian); the answer is framed the
 * same way and its outcome is the grpc-status (and grpc-message) header,
 * sent in the trailers, or alone in the headers when the call failed at
 * once ("trailers-only", as containerd answers an unknown service).
 * libcurl speaks the HTTP/2 (nghttp2), over the socket with
 * CURLOPT_UNIX_SOCKET_PATH and without the HTTP/1.1 upgrade
 * (CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE, as gRPC clients do).
 *
 * This file loads libcurl: only gpuop-kube links it (the start-up block of
 * CMakeLists.txt), so only code that gpuop-kube runs may call it. */
#ifndef GPUOP_CONTAINERD_GRPC_H
#define GPUOP_CONTAINERD_GRPC_H

#include <stddef.h>

#include "util/error.h"

/* gRPC status codes (grpc/codes) that gpuop acts on. */
enum {
    CD_GRPC_STATUS_OK = 0,
    CD_GRPC_STATUS_UNIMPLEMENTED = 12,
};

typedef enum cd_grpc_result {
    CD_GRPC_ANSWERED,    /* the server answered: see status (0 is OK) */
    CD_GRPC_UNREACHABLE, /* no socket, connection refused or denied, timed out */
    CD_GRPC_NOT_GRPC,    /* it answered, but not gRPC (HTTP error, bad framing) */
} cd_grpc_result;

typedef struct cd_grpc_reply {
    int status;          /* grpc-status */
    char message[1024];  /* grpc-message, percent-decoded; "" when none */
    unsigned char *body; /* the answer's message, without its prefix; malloc'd */
    size_t len;          /* its length (0 for an empty message, and on failure) */
} cd_grpc_reply;

/* Calls `method` ("/runtime.v1.RuntimeService/Status") with the encoded
 * request message on the socket at `socket_path` (a path, or unix://PATH)
 * and waits at most timeout_ms. On CD_GRPC_ANSWERED *out is filled (free
 * it with cd_grpc_reply_free); otherwise err says why, naming the socket. */
cd_grpc_result cd_grpc_call(const char *socket_path, const char *method, const void *request,
                            size_t request_len, long timeout_ms, cd_grpc_reply *out, gp_error *err);
void cd_grpc_reply_free(cd_grpc_reply *r);

/* "UNIMPLEMENTED" for 12, and so on; "code N" for a number gRPC does not define. */
const char *cd_grpc_status_name(int status, char *buf, size_t cap);

#endif
