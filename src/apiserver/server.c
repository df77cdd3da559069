#include "apiserver/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "apiserver/conns_internal.h"
#include "apiserver/strategy_internal.h"
#include "apiserver/routes.h"
#include "apiserver/tls.h"
#include "util/buf.h"

struct as_server {
    struct MHD_Daemon *daemon;
    char *token;
    uint16_t port;
    as_api *api;
    as_conns *conns;
    atomic_size_t buffered; /* bytes the bodies of requests in progress hold */
};

/* Connections served at once (MHD refuses more). Each is a thread. */
#define MAX_CONNECTIONS 512
/* kube-apiserver's http.Server (apiserver/pkg/server/secure_serving.go):
 * ReadHeaderTimeout 32 s, IdleTimeout 90 s; and its --request-timeout
 * (1 min) bounds a request's handler, which reads the body. Ours are
 * totals: a client that trickles a byte a second is cut off all the same. */
static const as_conns_limits conn_limits = {
    .max_unauthenticated = 128,
    .header_ms = 32000,
    .body_ms = 60000,
    .idle_ms = 90000,
};

/* Constant-time comparison: the token is the only credential. */
static bool same_secret(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char diff = (unsigned char)(la != lb);
    for (size_t i = 0; i < la && i < lb; i++)
        diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

static bool authorized(struct MHD_Connection *c, const as_server *s)
{
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!auth || strncmp(auth, "Bearer ", 7) != 0) return false;
    return same_secret(auth + 7, s->token);
}

/* kube-apiserver refuses request bodies over 3 MiB (MaxRequestBodyBytes;
 * limitedReadBody in apiserver/pkg/endpoints/handlers/rest.go). */
#define MAX_BODY_BYTES (3u << 20)
/* What the bodies of all requests in progress may hold together: past it a
 * request is refused as kube-apiserver refuses one over its in-flight
 * limit, and the client (client-go honours Retry-After) tries again. */
#define BUFFERED_BODY_BUDGET (64u << 20)
/* A body refused once it has begun is read to its end, unbuffered, to be
 * answered (MHD can answer only before a body or after it); past this
 * much more of it, the connection is closed without an answer. */
#define MAX_DISCARDED_BYTES MAX_BODY_BYTES

/* What one request accumulates across MHD's calls. */
typedef struct request_state {
    char **decoded; /* query values decoded for the handler, freed at the end */
    size_t decoded_count;
    gp_buf body;      /* max MAX_BODY_BYTES */
    size_t held;      /* what body holds of the budget (its capacity) */
    bool refused;     /* answered before its body was read */
    unsigned refusal; /* 413 or 429: the body, being read, is refused */
    size_t discarded;
} request_state;

static as_conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

static void blob_done(void *cls)
{
    as_blob_unref(cls);
}

/* A watch streamed on a connection. */
typedef struct watch_stream {
    as_server *server;
    as_watch *watch;
} watch_stream;

static ssize_t watch_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    watch_stream *ws = cls;
    size_t n = as_watch_read(ws->watch, buf, max);
    return n ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
}

static void watch_done(void *cls)
{
    watch_stream *ws = cls;
    as_conns_unwatch(ws->server->conns, ws->watch);
    as_watch_free(ws->watch);
    free(ws);
}

/* A watch's response: its bytes come from the watch as they happen; the
 * connection's monitor cancels it when the client hangs up. */
static struct MHD_Response *watch_response(as_server *s, struct MHD_Connection *c, as_watch *w)
{
    watch_stream *ws = malloc(sizeof *ws);
    struct MHD_Response *resp = ws ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024,
                                                                       watch_reader, ws, watch_done)
                                   : NULL;
    if (!resp) {
        free(ws);
        return NULL;
    }
    *ws = (watch_stream){s, w};
    /* a watch is idle by nature; its own deadline ends it */
    MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
    as_conn *conn = conn_of(c);
    if (conn) as_conns_watch(s->conns, conn, w);
    return resp;
}

/* One header a warning, as k8s.io/apimachinery/pkg/util/net's
 * NewWarningHeader writes it: 299 - "text" (the text Go-quoted). */
static void add_warnings(struct MHD_Response *resp, const char *warnings)
{
    for (const char *w = warnings; w && *w;) {
        const char *end = strchr(w, '\n');
        size_t len = end ? (size_t)(end - w) : strlen(w);
        char *text = strndup(w, len);
        gp_buf b = {0};
        gp_buf_add(&b, "299 - ");
        if (text) as_quote(&b, text);
        char *value = gp_buf_take(&b);
        if (value) MHD_add_response_header(resp, "Warning", value);
        free(value);
        free(text);
        w = end ? end + 1 : w + len;
    }
}

static enum MHD_Result respond(as_server *s, struct MHD_Connection *c, as_response *r)
{
    struct MHD_Response *resp;
    if (r->watch) {
        resp = watch_response(s, c, r->watch);
    } else if (r->blob) {
        resp = MHD_create_response_from_buffer_with_free_callback_cls(r->blob->len, r->blob->text,
                                                                      blob_done, r->blob);
    } else {
        resp = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
    }
    if (!resp) {
        as_response_free(r);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", r->content_type);
    MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
    add_warnings(resp, r->warnings);
    free(r->warnings);
    r->warnings = NULL;
    enum MHD_Result ok = MHD_queue_response(c, r->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

/* MHD decodes %XX itself, and a %00 ends the C string it hands over:
 * .../configmaps/foo%00bar would reach the handler as .../configmaps/foo,
 * another object. So MHD keeps the text as it came (this changes nothing)
 * and the server decodes it, where a NUL byte is seen. */
static size_t keep_escaped(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    return strlen(s);
}

/* text decoded (its %XX), malloc'd; *len its bytes, NUL ones included */
static char *decoded(const char *text, size_t *len)
{
    char *d = strdup(text);
    if (d) *len = MHD_http_unescape(d);
    return d;
}

typedef struct query_ctx {
    struct MHD_Connection *c;
    request_state *st;
} query_ctx;

/* A query parameter, decoded (none holds a NUL: refused before). */
static const char *query_value(void *ctx, const char *key)
{
    query_ctx *q = ctx;
    const char *raw = MHD_lookup_connection_value(q->c, MHD_GET_ARGUMENT_KIND, key);
    if (!raw || !strchr(raw, '%')) return raw;
    request_state *st = q->st;
    char **more = realloc(st->decoded, (st->decoded_count + 1) * sizeof *more);
    if (!more) return NULL;
    st->decoded = more;
    size_t len;
    return st->decoded[st->decoded_count++] = decoded(raw, &len);
}

static enum MHD_Result find_nul(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    (void)kind;
    const char **found = cls;
    const char *texts[] = {key, value};
    for (size_t i = 0; i < 2; i++) {
        size_t len;
        char *d = texts[i] ? decoded(texts[i], &len) : NULL;
        bool nul = d && strlen(d) != len;
        free(d);
        if (nul) {
            *found = key;
            return MHD_NO;
        }
    }
    return MHD_YES;
}

/* The query parameter whose name or value holds a NUL byte, or NULL. */
static const char *query_with_nul(struct MHD_Connection *c)
{
    const char *found = NULL;
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, find_nul, &found);
    return found;
}

/* Room for `more` bytes of body, within the server's budget for bodies;
 * false when that is spent (or memory is: the body then says so). The
 * budget is charged what the buffer allocates, checked against what it
 * needs. */
static bool reserve_body(as_server *s, request_state *st, size_t more)
{
    size_t need = st->body.len + more + 1;
    if (need <= st->body.cap) return true;
    if (atomic_load(&s->buffered) + (need - st->held) > BUFFERED_BODY_BUDGET) return false;
    if (gp_buf_reserve(&st->body, more) != 0) return false;
    atomic_fetch_add(&s->buffered, st->body.cap - st->held);
    st->held = st->body.cap;
    return true;
}

/* Frees the body and gives its room back to the budget. */
static void drop_body(as_server *s, request_state *st)
{
    atomic_fetch_sub(&s->buffered, st->held);
    st->held = 0;
    gp_buf_free(&st->body);
}

/* Whether the request announced a body (which may still be coming). */
static bool has_body(struct MHD_Connection *c)
{
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    return (cl && strcmp(cl, "0") != 0) ||
           MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding");
}

/* A request answered before its body is read. MHD sends the answer at once
 * and closes the connection after it (nothing can follow an unread body);
 * the close lingers so that the client, still sending, gets the answer. */
static void refusing(as_server *s, struct MHD_Connection *c, request_state *st)
{
    st->refused = true;
    as_conn *conn = conn_of(c);
    if (conn && has_body(c)) as_conns_linger(s->conns, conn);
}

static enum MHD_Result refuse(as_server *s, struct MHD_Connection *c, request_state *st,
                              unsigned code, const char *reason, const char *message)
{
    as_response r;
    as_status(&r, code, reason, message);
    refusing(s, c, st);
    return respond(s, c, &r);
}

/* NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit)) */
static enum MHD_Result refuse_too_large(as_server *s, struct MHD_Connection *c, request_state *st)
{
    char msg[64];
    snprintf(msg, sizeof msg, "Request entity too large: limit is %u", MAX_BODY_BYTES);
    return refuse(s, c, st, 413, "RequestEntityTooLarge", msg);
}

/* What kube-apiserver's max-in-flight and priority-and-fairness filters
 * answer (tooManyRequests: http.Error's text, not a Status). */
static enum MHD_Result refuse_busy(as_server *s, struct MHD_Connection *c, request_state *st)
{
    static const char text[] = "Too many requests, please try again later.\n";
    refusing(s, c, st);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(sizeof text - 1, (void *)text, MHD_RESPMEM_PERSISTENT);
    if (!resp) return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", "text/plain; charset=utf-8");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Retry-After", "1");
    enum MHD_Result ok = MHD_queue_response(c, 429, resp);
    MHD_destroy_response(resp);
    return ok;
}

/* The announced body, refused before a byte of it is read when it is over
 * the limit or the budget; room for it reserved otherwise. */
static enum MHD_Result expect_body(struct MHD_Connection *c, as_server *s, request_state *st)
{
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (!cl) return MHD_YES; /* chunked, or none: checked as it comes */
    char *end;
    errno = 0;
    unsigned long long n = strtoull(cl, &end, 10);
    if (errno || *end || n > MAX_BODY_BYTES) return refuse_too_large(s, c, st);
    if (n && !reserve_body(s, st, (size_t)n) && !gp_buf_failed(&st->body))
        return refuse_busy(s, c, st);
    return MHD_YES;
}

/* The whole request is in: the API answers. */
static enum MHD_Result answer(as_server *s, struct MHD_Connection *c, request_state *st,
                              const char *url, const char *method)
{
    as_response r;
    if (gp_buf_failed(&st->body)) {
        as_status(&r, 500, "InternalError", "out of memory");
        return respond(s, c, &r);
    }
    const char *bad = query_with_nul(c);
    if (bad) {
        char msg[160];
        snprintf(msg, sizeof msg, "query parameter %.64s: a NUL byte (%%00) is not allowed", bad);
        as_status(&r, 400, "BadRequest", msg);
        return respond(s, c, &r);
    }
    size_t path_len;
    char *path = decoded(url, &path_len);
    if (!path) return MHD_NO;
    query_ctx q = {c, st};
    as_request req = {.method = method,
                      .path = path,
                      .path_len = strlen(path) != path_len ? path_len : 0,
                      .accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept"),
                      .host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host"),
                      .content_type =
                          MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type"),
                      .body = st->body.data,
                      .body_len = st->body.len,
                      .query = query_value,
                      .query_ctx = &q};
    as_route(s->api, &req, &r);
    free(path);
    return respond(s, c, &r);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls)
{
    (void)version;
    as_server *s = cls;
    /* The first call comes with the headers, before any of the body: the
     * token is checked here, so a client without it never has a byte of
     * its body read or buffered (kube-apiserver authenticates in its filter
     * chain, before a handler reads the body). */
    if (*con_cls == NULL) {
        request_state *st = calloc(1, sizeof *st);
        if (!st) return MHD_NO;
        st->body.max = MAX_BODY_BYTES;
        *con_cls = st;
        if (!authorized(c, s)) return refuse(s, c, st, 401, "Unauthorized", "Unauthorized");
        as_conn *conn = conn_of(c);
        if (conn) {
            as_conns_authenticated(s->conns, conn);
            as_conns_phase(s->conns, conn, AS_CONN_BODY);
        }
        return expect_body(c, s, st);
    }
    request_state *st = *con_cls;
    if (st->refused) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (!st->refusal && st->body.len + n > MAX_BODY_BYTES) st->refusal = 413;
        if (!st->refusal && !reserve_body(s, st, n) && !gp_buf_failed(&st->body)) st->refusal = 429;
        if (!st->refusal) {
            gp_buf_addn(&st->body, upload_data, n); /* a failure is answered at the end */
            return MHD_YES;
        }
        drop_body(s, st);
        st->discarded += n;
        return st->discarded > MAX_DISCARDED_BYTES ? MHD_NO : MHD_YES;
    }
    if (st->refusal == 413) return refuse_too_large(s, c, st);
    if (st->refusal == 429) return refuse_busy(s, c, st);
    as_conn *conn = conn_of(c);
    if (conn) as_conns_phase(s->conns, conn, AS_CONN_ANSWERING);
    return answer(s, c, st, url, method);
}
static void request_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                              enum MHD_RequestTerminationCode why)
{
    as_server *s = cls;
    (void)why;
    as_conn *conn = conn_of(c);
    if (conn) as_conns_phase(s->conns, conn, AS_CONN_IDLE);
    request_state *st = *con_cls;
    if (!st) return;
    drop_body(s, st);
    for (size_t i = 0; i < st->decoded_count; i++)
        free(st->decoded[i]);
    free(st->decoded);
    free(st);
    *con_cls = NULL;
}

/* Every connection is in the table (conns.c) from its start to its end. */
static void connection_event(void *cls, struct MHD_Connection *c, void **socket_context,
                             enum MHD_ConnectionNotificationCode what)
{
    as_server *s = cls;
    if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
        as_conns_remove(s->conns, *socket_context);
        *socket_context = NULL;
        return;
    }
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!info) return;
    *socket_context = as_conns_add(s->conns, info->connect_fd);
    /* no room to track it: it cannot be served within the limits */
    if (!*socket_context) shutdown(info->connect_fd, SHUT_RDWR);
}

/* A request line has come (its headers follow). */
static void *request_started(void *cls, const char *uri, struct MHD_Connection *c)
{
    as_server *s = cls;
    (void)uri;
    as_conn *conn = conn_of(c);
    if (conn) as_conns_phase(s->conns, conn, AS_CONN_HEADERS);
    return NULL;
}

as_server *as_server_start(const as_server_options *opt, gp_error *err)
{
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(opt->port);
    const char *host = opt->address ? opt->address : "127.0.0.1";
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        gp_error_set(err, NULL, 0, 0, "not an IPv4 address: %s", host);
        return NULL;
    }
    if (!opt->token || !*opt->token || !opt->cert_pem || !opt->key_pem) {
        gp_error_set(err, NULL, 0, 0, "the API server needs a token and a TLS certificate");
        return NULL;
    }
    as_server *s = calloc(1, sizeof *s);
    if (s) s->api = opt->api;
    if (!s || !(s->token = strdup(opt->token))) {
        free(s);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    if (!(s->conns = as_conns_start(&conn_limits, err))) {
        free(s->token);
        free(s);
        return NULL;
    }
    /* poll(), not select(): a socket numbered past FD_SETSIZE is served too */
    s->daemon = MHD_start_daemon(
        MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_TLS, 0, NULL, NULL,
        handle, s, MHD_OPTION_SOCK_ADDR, &addr, MHD_OPTION_HTTPS_MEM_KEY, opt->key_pem,
        MHD_OPTION_HTTPS_MEM_CERT, opt->cert_pem, MHD_OPTION_HTTPS_PRIORITIES, AS_TLS_PRIORITIES,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)(conn_limits.idle_ms / 1000), MHD_OPTION_NOTIFY_CONNECTION, connection_event, s,
        MHD_OPTION_URI_LOG_CALLBACK, request_started, s, MHD_OPTION_UNESCAPE_CALLBACK, keep_escaped,
        NULL, MHD_OPTION_NOTIFY_COMPLETED, request_completed, s, MHD_OPTION_END);
    if (!s->daemon) {
        gp_error_set(err, NULL, 0, 0, "cannot listen on %s:%u (in use?)", host,
                     (unsigned)opt->port);
        as_conns_stop(s->conns);
        free(s->token);
        free(s);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : opt->port;
    return s;
}

uint16_t as_server_port(const as_server *s)
{
    return s->port;
}

void as_server_stop(as_server *s)
{
    if (!s) return;
    if (s->api && s->api->store) as_store_shutdown(s->api->store);
    MHD_stop_daemon(s->daemon);
    as_conns_stop(s->conns);
    free(s->token);
    free(s);
}
