#include "cluster/server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/routes.h"

struct gc_server {
    struct MHD_Daemon *daemon;
    char *token;
    uint16_t port;
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

static bool authorized(struct MHD_Connection *c, const gc_server *s)
{
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!auth || strncmp(auth, "Bearer ", 7) != 0) return false;
    return same_secret(auth + 7, s->token);
}

static enum MHD_Result respond(struct MHD_Connection *c, gc_response *r)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(r->body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", r->content_type);
    MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
    enum MHD_Result ok = MHD_queue_response(c, r->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls)
{
    (void)version;
    (void)upload_data;
    gc_server *s = cls;
    /* The first call only announces the request; bodies come in later calls. */
    if (*con_cls == NULL) {
        *con_cls = s;
        return MHD_YES;
    }
    if (*upload_data_size) {
        *upload_data_size = 0; /* no route takes a body yet */
        return MHD_YES;
    }
    gc_response r;
    if (!authorized(c, s))
        gc_status(&r, 401, "Unauthorized", "Unauthorized");
    else {
        gc_request req = {method, url, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept"),
                          MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host")};
        gc_route(&req, &r);
    }
    return respond(c, &r);
}

gc_server *gc_server_start(const gc_server_options *opt, gp_error *err)
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
    gc_server *s = calloc(1, sizeof *s);
    if (!s || !(s->token = strdup(opt->token))) {
        free(s);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    s->daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_TLS, 0, NULL,
        NULL, handle, s, MHD_OPTION_SOCK_ADDR, &addr, MHD_OPTION_HTTPS_MEM_KEY, opt->key_pem,
        MHD_OPTION_HTTPS_MEM_CERT, opt->cert_pem, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
        MHD_OPTION_END);
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

uint16_t gc_server_port(const gc_server *s)
{
    return s->port;
}

void gc_server_stop(gc_server *s)
{
    if (!s) return;
    MHD_stop_daemon(s->daemon);
    free(s->token);
    free(s);
}
