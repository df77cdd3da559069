/* One gRPC connection of a simulated containerd, on libnghttp2's server
 * session (grpc_internal.h).
 *
 * gRPC over HTTP/2 (grpc/doc PROTOCOL-HTTP2.md): a call is a stream whose
 * request HEADERS name the method in :path, whose DATA carry one
 * length-prefixed message (a compressed-flag byte, then the length as 4
 * bytes big-endian); the answer is HEADERS (:status 200, content-type
 * application/grpc), DATA with the message framed the same way, then
 * trailers holding grpc-status and grpc-message. A call that fails before
 * any message is answered "trailers-only": one HEADERS frame with the
 * status and END_STREAM, as grpc-go answers an unknown service. Clients
 * on a unix socket start HTTP/2 at once (prior knowledge), without the
 * HTTP/1.1 upgrade; nghttp2 checks the connection preface. */
#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/grpc_internal.h"

/* grpc-go's default limit on a received message. */
#define MAX_REQUEST             (4u << 20)
#define GRPC_RESOURCE_EXHAUSTED 8

typedef struct stream {
    int32_t id;
    char path[256];
    bool grpc; /* content-type application/grpc[+proto] */
    gp_buf body;
    bool too_big;
    /* the answer */
    unsigned char *out;
    size_t out_len, out_pos;
    int status;
    char message[1600]; /* percent-encoded */
    struct stream *next;
} stream;

struct ag_grpc_conn {
    int fd;
    nghttp2_session *session;
    ag_grpc_handler handler;
    void *ctx;
    stream *streams;
    unsigned char *pending; /* bytes nghttp2 produced that the socket did not take */
    size_t pending_len, pending_pos;
    bool broken;
};

static stream *find(ag_grpc_conn *c, int32_t id)
{
    for (stream *s = c->streams; s; s = s->next)
        if (s->id == id) return s;
    return NULL;
}

static void drop(ag_grpc_conn *c, int32_t id)
{
    for (stream **p = &c->streams; *p; p = &(*p)->next) {
        if ((*p)->id != id) continue;
        stream *s = *p;
        *p = s->next;
        gp_buf_free(&s->body);
        free(s->out);
        free(s);
        return;
    }
}

/* grpc-message is percent-encoded: everything outside printable ASCII,
 * and '%' itself (PROTOCOL-HTTP2.md). */
static void percent_encode(const char *in, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && n + 4 < cap; p++) {
        if (*p >= 0x20 && *p <= 0x7e && *p != '%') {
            out[n++] = (char)*p;
        } else {
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        }
    }
    out[n] = '\0';
}

#define NV(name, value)                                                                            \
    {                                                                                              \
        (uint8_t *)(name), (uint8_t *)(value), sizeof(name) - 1, strlen(value),                    \
            NGHTTP2_NV_FLAG_NONE                                                                   \
    }

static int submit_trailers(nghttp2_session *session, stream *s)
{
    char code[16];
    snprintf(code, sizeof code, "%d", s->status);
    nghttp2_nv trailers[] = {NV("grpc-status", code), NV("grpc-message", s->message)};
    /* grpc-go leaves grpc-message out when it is empty. */
    return nghttp2_submit_trailer(session, s->id, trailers, s->message[0] ? 2 : 1);
}

static ssize_t read_answer(nghttp2_session *session, int32_t id, uint8_t *buf, size_t length,
                           uint32_t *flags, nghttp2_data_source *source, void *user)
{
    (void)user;
    stream *s = source->ptr;
    size_t n = s->out_len - s->out_pos;
    if (n > length) n = length;
    memcpy(buf, s->out + s->out_pos, n);
    s->out_pos += n;
    if (s->out_pos == s->out_len) {
        *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
        (void)id;
        if (submit_trailers(session, s) != 0) return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    return (ssize_t)n;
}

static int answer(ag_grpc_conn *c, stream *s)
{
    ag_grpc_answer a = {0};
    const unsigned char *body = (const unsigned char *)(s->body.data ? s->body.data : "");
    if (!s->grpc) {
        /* Not gRPC: HTTP's own refusal (grpc-go answers 415). */
        nghttp2_nv h[] = {NV(":status", "415"), NV("content-type", "text/plain")};
        return nghttp2_submit_response(c->session, s->id, h, 2, NULL);
    }
    if (s->too_big) {
        a.status = GRPC_RESOURCE_EXHAUSTED;
        snprintf(a.message, sizeof a.message, "grpc: received message larger than max (%u)",
                 MAX_REQUEST);
    } else if (s->body.len < 5 || body[0] != 0 ||
               ((size_t)body[1] << 24 | (size_t)body[2] << 16 | (size_t)body[3] << 8 | body[4]) !=
                   s->body.len - 5) {
        /* One uncompressed message is all a unary call carries. */
        a.status = AG_GRPC_INTERNAL;
        snprintf(a.message, sizeof a.message,
                 body[0] && s->body.len >= 5
                     ? "grpc: Decompressor is not installed for grpc-encoding"
                     : "grpc: the request is not one length-prefixed message");
    } else {
        c->handler(c->ctx, s->path, body + 5, s->body.len - 5, &a);
    }
    s->status = a.status;
    percent_encode(a.message, s->message, sizeof s->message);
    if (a.status != AG_GRPC_OK) {
        gp_buf_free(&a.body);
        char code[16];
        snprintf(code, sizeof code, "%d", a.status);
        nghttp2_nv h[] = {NV(":status", "200"), NV("content-type", "application/grpc"),
                          NV("grpc-status", code), NV("grpc-message", s->message)};
        return nghttp2_submit_response(c->session, s->id, h, s->message[0] ? 4 : 3, NULL);
    }
    size_t len = a.body.len;
    s->out = malloc(len + 5);
    if (!s->out) {
        gp_buf_free(&a.body);
        return -1;
    }
    s->out[0] = 0;
    s->out[1] = (unsigned char)(len >> 24);
    s->out[2] = (unsigned char)(len >> 16);
    s->out[3] = (unsigned char)(len >> 8);
    s->out[4] = (unsigned char)len;
    if (len) memcpy(s->out + 5, a.body.data, len);
    s->out_len = len + 5;
    gp_buf_free(&a.body);
    nghttp2_nv h[] = {NV(":status", "200"), NV("content-type", "application/grpc")};
    nghttp2_data_provider data = {.source.ptr = s, .read_callback = read_answer};
    return nghttp2_submit_response(c->session, s->id, h, 2, &data);
}

/* ---- nghttp2's callbacks ---- */

static int on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
    (void)session;
    ag_grpc_conn *c = user;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    stream *s = calloc(1, sizeof *s);
    if (!s) return NGHTTP2_ERR_CALLBACK_FAILURE;
    s->id = frame->hd.stream_id;
    s->body.max = MAX_REQUEST + 5;
    s->next = c->streams;
    c->streams = s;
    return 0;
}

static int on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user)
{
    (void)session, (void)flags;
    stream *s = find(user, frame->hd.stream_id);
    if (!s) return 0;
    if (namelen == 5 && memcmp(name, ":path", 5) == 0) {
        snprintf(s->path, sizeof s->path, "%.*s", (int)valuelen, (const char *)value);
    } else if (namelen == 12 && memcmp(name, "content-type", 12) == 0) {
        s->grpc = valuelen >= 16 && memcmp(value, "application/grpc", 16) == 0 &&
                  (valuelen == 16 || value[16] == '+' || value[16] == ';');
    }
    return 0;
}

static int on_data(nghttp2_session *session, uint8_t flags, int32_t id, const uint8_t *data,
                   size_t len, void *user)
{
    (void)session, (void)flags;
    stream *s = find(user, id);
    if (!s || s->too_big) return 0;
    if (gp_buf_addn(&s->body, data, len) != 0) {
        if (s->body.state == GP_BUF_NO_MEMORY) return NGHTTP2_ERR_CALLBACK_FAILURE;
        s->too_big = true;
    }
    return 0;
}

static int on_frame(nghttp2_session *session, const nghttp2_frame *frame, void *user)
{
    (void)session;
    ag_grpc_conn *c = user;
    bool request_ends = (frame->hd.type == NGHTTP2_DATA || frame->hd.type == NGHTTP2_HEADERS) &&
                        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM);
    if (!request_ends) return 0;
    stream *s = find(c, frame->hd.stream_id);
    if (s && answer(c, s) != 0) return NGHTTP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int on_close(nghttp2_session *session, int32_t id, uint32_t error, void *user)
{
    (void)session, (void)error;
    drop(user, id);
    return 0;
}

/* ---- the connection ---- */

ag_grpc_conn *ag_grpc_conn_new(int fd, ag_grpc_handler handler, void *ctx)
{
    ag_grpc_conn *c = calloc(1, sizeof *c);
    nghttp2_session_callbacks *cbs = NULL;
    if (!c || nghttp2_session_callbacks_new(&cbs) != 0) {
        free(c);
        close(fd);
        return NULL;
    }
    c->fd = fd;
    c->handler = handler;
    c->ctx = ctx;
    nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_close);
    int rc = nghttp2_session_server_new(&c->session, cbs, c);
    nghttp2_session_callbacks_del(cbs);
    /* grpc-go's server settings: at most 100 streams at once... enough for
     * a CRI client, which makes one call at a time. */
    nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100}};
    if (rc != 0 || nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, settings, 1) != 0) {
        ag_grpc_conn_free(c);
        return NULL;
    }
    return c;
}

void ag_grpc_conn_free(ag_grpc_conn *c)
{
    if (!c) return;
    nghttp2_session_del(c->session); /* closes the streams: on_close frees them */
    while (c->streams)
        drop(c, c->streams->id);
    free(c->pending);
    close(c->fd);
    free(c);
}

int ag_grpc_conn_fd(const ag_grpc_conn *c)
{
    return c->fd;
}

/* Writes bytes[0..len) as far as the socket takes them; keeps the rest. */
static int send_or_keep(ag_grpc_conn *c, const unsigned char *bytes, size_t len)
{
    while (len) {
        ssize_t n = write(c->fd, bytes, len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            unsigned char *kept = malloc(len);
            if (!kept) return -1;
            memcpy(kept, bytes, len);
            c->pending = kept;
            c->pending_len = len;
            c->pending_pos = 0;
            return 0;
        }
        if (n <= 0) return -1;
        bytes += n;
        len -= (size_t)n;
    }
    return 0;
}

int ag_grpc_conn_write(ag_grpc_conn *c)
{
    if (c->broken) return -1;
    while (c->pending) {
        ssize_t n = write(c->fd, c->pending + c->pending_pos, c->pending_len - c->pending_pos);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        if (n <= 0) return -1;
        c->pending_pos += (size_t)n;
        if (c->pending_pos == c->pending_len) {
            free(c->pending);
            c->pending = NULL;
        }
    }
    for (;;) {
        const uint8_t *data;
        ssize_t n = nghttp2_session_mem_send(c->session, &data);
        if (n < 0) return -1;
        if (n == 0) return 0;
        if (send_or_keep(c, data, (size_t)n) != 0) return -1;
        if (c->pending) return 0;
    }
}

int ag_grpc_conn_read(ag_grpc_conn *c)
{
    unsigned char buf[16384];
    for (;;) {
        ssize_t n = read(c->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (n <= 0) return -1; /* closed by the peer, or reset */
        ssize_t used = nghttp2_session_mem_recv(c->session, buf, (size_t)n);
        if (used < 0) {
            /* A protocol error: nghttp2 has queued a GOAWAY; send it. */
            ag_grpc_conn_write(c);
            c->broken = true;
            return -1;
        }
    }
    return ag_grpc_conn_write(c);
}

bool ag_grpc_conn_wants_write(const ag_grpc_conn *c)
{
    return c->pending || nghttp2_session_want_write(c->session);
}

bool ag_grpc_conn_finished(const ag_grpc_conn *c)
{
    return !c->pending && !nghttp2_session_want_read(c->session) &&
           !nghttp2_session_want_write(c->session);
}
