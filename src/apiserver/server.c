#include "apiserver/server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/routes.h"
#include "util/buf.h"

struct as_server {
    struct MHD_Daemon *daemon;
    char *token;
    uint16_t port;
    as_api *api;
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

/* kube-apiserver refuses request bodies over 3 MiB (MaxRequestBodyBytes). */
#define MAX_BODY_BYTES (3u << 20)

/* What one request accumulates across MHD's calls. */
typedef struct request_state {
    gp_buf body; /* max MAX_BODY_BYTES */
} request_state;

static void blob_done(void *cls)
{
    as_blob_unref(cls);
}

static ssize_t watch_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    size_t n = as_watch_read(cls, buf, max);
    return n ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
}

static void watch_done(void *cls)
{
    as_watch_free(cls);
}

static enum MHD_Result respond(struct MHD_Connection *c, as_response *r)
{
    struct MHD_Response *resp;
    if (r->watch) {
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, watch_reader,
                                                 r->watch, watch_done);
        /* a watch is idle by nature; its own deadline ends it */
        MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
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
    enum MHD_Result ok = MHD_queue_response(c, r->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

static const char *query_value(void *ctx, const char *key)
{
    return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, key);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls)
{
    (void)version;
    as_server *s = cls;
    /* The first call only announces the request; bodies come in later calls. */
    if (*con_cls == NULL) {
        request_state *st = calloc(1, sizeof *st);
        if (!st) return MHD_NO;
        st->body.max = MAX_BODY_BYTES;
        *con_cls = st;
        return MHD_YES;
    }
    request_state *st = *con_cls;
    if (*upload_data_size) {
        gp_buf_addn(&st->body, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    as_response r;
    if (!authorized(c, s)) {
        as_status(&r, 401, "Unauthorized", "Unauthorized");
    } else if (st->body.state == GP_BUF_TOO_LONG) {
        as_status(&r, 413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728");
    } else if (gp_buf_failed(&st->body)) {
        as_status(&r, 500, "InternalError", "out of memory");
    } else {
        as_request req = {.method = method,
                          .path = url,
                          .accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept"),
                          .host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host"),
                          .content_type =
                              MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type"),
                          .body = st->body.data,
                          .body_len = st->body.len,
                          .query = query_value,
                          .query_ctx = c};
        as_route(s->api, &req, &r);
    }
    return respond(c, &r);
}

static void request_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                              enum MHD_RequestTerminationCode why)
{
    (void)cls;
    (void)c;
    (void)why;
    request_state *st = *con_cls;
    if (!st) return;
    gp_buf_free(&st->body);
    free(st);
    *con_cls = NULL;
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
    s->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_TLS, 0, NULL,
        NULL, handle, s, MHD_OPTION_SOCK_ADDR, &addr, MHD_OPTION_HTTPS_MEM_KEY, opt->key_pem,
        MHD_OPTION_HTTPS_MEM_CERT, opt->cert_pem, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
        MHD_OPTION_NOTIFY_COMPLETED, request_completed, NULL, MHD_OPTION_END);
    if (!s->daemon) {
        gp_error_set(err, NULL, 0, 0, "cannot listen on %s:%u (in use?)", host,
                     (unsigned)opt->port);
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
    free(s->token);
    free(s);
}
