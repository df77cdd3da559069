/* The Kubernetes REST client over libcurl.
 *
 * One easy handle per client, reused for every request, so connections stay
 * open between them (a list of many pages costs one TLS handshake). Errors
 * are worded as kubectl words them (k8s.io/kubectl/pkg/cmd/util
 * StandardErrorMessage), so a learner who knows kubectl's messages reads the
 * same text from gpuop. */
#include "client/rest.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/i18n.h"

enum {
    DEFAULT_TIMEOUT_MS = 30000,
    CONNECT_TIMEOUT_MS = 10000,
    DEFAULT_PAGE = 500,
    /* A watch line or a page never comes near this; a body that does is an
     * answer we will not hold in memory. */
    MAX_BODY = 512u << 20,
};

struct kc_client {
    const kc_config *cfg; /* borrowed: must outlive the client */
    kc_config *owned;     /* kc_client_open's config, freed with the client */
    CURL *curl;
    char *base;     /* what paths are appended to: the server URL, or it with tls-server-name */
    char *host_hdr; /* "Host: ..." when the URL's host was swapped for tls-server-name */
    char *auth_hdr; /* "Authorization: Bearer ..." or NULL */
    struct curl_slist *connect_to;
    long last_code;
    char last_reason[64];
    char last_message[768];
    char errbuf[CURL_ERROR_SIZE];
};

/* ---- small helpers ---------------------------------------------------------- */

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* Answers are collected into a gp_buf of at most MAX_BODY bytes. */
static size_t write_to_buffer(char *p, size_t size, size_t n, void *ud)
{
    return gp_buf_addn(ud, p, size * n) == 0 ? size * n : 0;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

/* ---- the client ------------------------------------------------------------- */

/* With tls-server-name, client-go verifies the certificate (and sends SNI)
 * for that name while connecting to the server's address. curl does both
 * for the URL's host, so the URL names tls-server-name and CONNECT_TO sends
 * the connection to the real host; the Host header keeps the server's
 * authority, as Go sends it. */
static int route_tls_server_name(kc_client *c, gp_error *err)
{
    const kc_config *cfg = c->cfg;
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL, *given_port = NULL, *url = NULL;
    int rc = -1;
    if (!u || curl_url_set(u, CURLUPART_URL, cfg->server, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
        gp_error_set(err, NULL, 0, 0, "server URL \"%s\" of cluster \"%s\" is not a valid URL",
                     cfg->server, cfg->cluster_name ? cfg->cluster_name : "");
        goto out;
    }
    if (curl_url_get(u, CURLUPART_PORT, &given_port, 0) != CURLUE_OK) given_port = NULL;
    if (curl_url_set(u, CURLUPART_HOST, cfg->tls_server_name, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK) {
        gp_error_set(err, NULL, 0, 0, "tls-server-name \"%s\" of cluster \"%s\" is not a host name",
                     cfg->tls_server_name, cfg->cluster_name ? cfg->cluster_name : "");
        goto out;
    }
    char *entry = gp_format("%s:%s:%s:%s", cfg->tls_server_name, port, host, port);
    c->base = strdup(url);
    c->host_hdr =
        given_port ? gp_format("Host: %s:%s", host, given_port) : gp_format("Host: %s", host);
    struct curl_slist *l = entry ? curl_slist_append(NULL, entry) : NULL;
    free(entry);
    if (!l || !c->base || !c->host_hdr) {
        curl_slist_free_all(l);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        goto out;
    }
    c->connect_to = l;
    /* curl_url_get gives "https://name:port/" for a bare server: paths bring their own '/'. */
    size_t n = strlen(c->base);
    while (n > 0 && c->base[n - 1] == '/')
        c->base[--n] = '\0';
    rc = 0;
out:
    curl_free(host);
    curl_free(port);
    curl_free(given_port);
    curl_free(url);
    curl_url_cleanup(u);
    return rc;
}

static CURLcode set_blob(CURL *curl, CURLoption opt, const char *data, size_t len)
{
    struct curl_blob blob = {(void *)data, len, CURL_BLOB_COPY};
    return curl_easy_setopt(curl, opt, &blob);
}

/* Options that hold for every request of this client. */
static int configure_handle(kc_client *c, gp_error *err)
{
    const kc_config *cfg = c->cfg;
    CURL *h = c->curl;
    CURLcode rc = CURLE_OK;
    rc |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); /* no SIGALRM: other threads run */
    rc |= curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
    rc |= curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_TIMEOUT_MS);
    rc |= curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    rc |= curl_easy_setopt(h, CURLOPT_USERAGENT, "gpuop");
    rc |= curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""); /* gzip, as client-go asks */
    if (cfg->ca_pem) rc |= set_blob(h, CURLOPT_CAINFO_BLOB, cfg->ca_pem, cfg->ca_pem_len);
    if (cfg->cert_pem) {
        rc |= set_blob(h, CURLOPT_SSLCERT_BLOB, cfg->cert_pem, cfg->cert_pem_len);
        rc |= curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (cfg->key_pem) {
        rc |= set_blob(h, CURLOPT_SSLKEY_BLOB, cfg->key_pem, cfg->key_pem_len);
        rc |= curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }
    /* a path is sent as given: "/pods/.." must not become "/" */
    rc |= curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
    if (cfg->insecure_skip_tls_verify) {
        rc |= curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        rc |= curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (c->connect_to) rc |= curl_easy_setopt(h, CURLOPT_CONNECT_TO, c->connect_to);
    /* client-go sends a bearer token in preference to basic auth. */
    if (!cfg->token && cfg->username) {
        rc |= curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        rc |= curl_easy_setopt(h, CURLOPT_USERNAME, cfg->username);
        rc |= curl_easy_setopt(h, CURLOPT_PASSWORD, cfg->password ? cfg->password : "");
    }
    if (rc != CURLE_OK) {
        gp_error_set(err, NULL, 0, 0,
                     "libcurl refused the TLS settings of cluster \"%s\" (does it support PEM "
                     "blobs?)",
                     cfg->cluster_name ? cfg->cluster_name : "");
        return -1;
    }
    return 0;
}

kc_result kc_client_new(const kc_config *cfg, kc_client **out, gp_error *err)
{
    *out = NULL;
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK) {
        gp_error_set(err, NULL, 0, 0, "libcurl could not start: %s", curl_easy_strerror(global_rc));
        return KC_UNREACHABLE;
    }
    if (!cfg || !cfg->server || !cfg->server[0]) {
        gp_error_set(err, NULL, 0, 0, "no server to talk to: the kubeconfig names none");
        return KC_UNREACHABLE;
    }
    /* a line break in a token would end the header and start another */
    if (cfg->token && strpbrk(cfg->token, "\r\n")) {
        gp_error_set(err, NULL, 0, 0, "the bearer token of user \"%s\" holds a line break",
                     cfg->user_name ? cfg->user_name : "");
        return KC_UNREACHABLE;
    }
    kc_client *c = calloc(1, sizeof *c);
    if (!c) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return KC_UNREACHABLE;
    }
    c->cfg = cfg;
    c->curl = curl_easy_init();
    if (cfg->tls_server_name && cfg->tls_server_name[0]) {
        if (route_tls_server_name(c, err) != 0) goto fail;
    } else {
        c->base = strdup(cfg->server);
    }
    if (cfg->token) c->auth_hdr = gp_format("Authorization: Bearer %s", cfg->token);
    if (!c->curl || !c->base || (cfg->token && !c->auth_hdr)) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        goto fail;
    }
    if (configure_handle(c, err) != 0) goto fail;
    *out = c;
    return KC_OK;
fail:
    kc_client_free(c);
    return KC_UNREACHABLE;
}

void kc_client_free(kc_client *c)
{
    if (!c) return;
    if (c->curl) curl_easy_cleanup(c->curl);
    curl_slist_free_all(c->connect_to);
    free(c->base);
    free(c->host_hdr);
    free(c->auth_hdr);
    kc_config_free(c->owned);
    free(c);
}

kc_result kc_client_open(const kc_options *opt, kc_client **out, gp_error *err)
{
    *out = NULL;
    kc_config *cfg = NULL;
    if (kc_config_load(opt, &cfg, err) != 0) return KC_UNREACHABLE;
    kc_result r = kc_client_new(cfg, out, err);
    if (r != KC_OK) {
        kc_config_free(cfg);
        return r;
    }
    (*out)->owned = cfg;
    return KC_OK;
}

const kc_config *kc_client_config(const kc_client *c)
{
    return c->cfg;
}

long kc_last_code(const kc_client *c)
{
    return c->last_code;
}

const char *kc_last_reason(const kc_client *c)
{
    return c->last_reason;
}

const char *kc_last_message(const kc_client *c)
{
    return c->last_message;
}

char *kc_escape(const char *s)
{
    pthread_once(&global_once, global_init);
    /* The handle argument is unused since curl 7.82. */
    char *e = curl_easy_escape(NULL, s, 0);
    if (!e) return NULL;
    char *copy = strdup(e);
    curl_free(e);
    return copy;
}

/* ---- errors ----------------------------------------------------------------- */

/* The reason and message client-go makes up for an error answer that is not
 * a Status (apimachinery errors.NewGenericServerResponse). */
static void generic_status(long code, const char *method, const char *body, char *reason,
                           size_t rcap, char *message, size_t mcap)
{
    static const struct {
        long code;
        const char *reason, *message;
    } table[] = {
        {400, "BadRequest", "the server rejected our request for an unknown reason"},
        {401, "Unauthorized", "the server has asked for the client to provide credentials"},
        {403, "Forbidden", "the server does not allow access to the requested resource"},
        {404, "NotFound", "the server could not find the requested resource"},
        {405, "MethodNotAllowed",
         "the server does not allow this method on the requested resource"},
        {406, "NotAcceptable",
         "the server was unable to respond with a content type that the client supports"},
        {409, "Conflict", "the server reported a conflict"},
        {415, "UnsupportedMediaType",
         "the server was unable to respond with a content type that the client supports"},
        {422, "Invalid", "the server rejected our request due to an error in our request"},
        {429, "TooManyRequests",
         "the server has received too many requests and has asked us to try again later"},
        {503, "ServiceUnavailable", "the server is currently unable to handle the request"},
        {504, "Timeout",
         "the server was unable to return a response in the time allotted, but may still be "
         "processing the request"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (table[i].code != code) continue;
        copy_str(reason, rcap,
                 code == 409 && strcmp(method, "POST") == 0 ? "AlreadyExists" : table[i].reason);
        copy_str(message, mcap, table[i].message);
        return;
    }
    if (code >= 500) {
        copy_str(reason, rcap, "InternalError");
        snprintf(message, mcap,
                 "an error on the server (\"%.200s\") has prevented the request "
                 "from succeeding",
                 body && body[0] ? body : "unknown");
        return;
    }
    copy_str(reason, rcap, "");
    snprintf(message, mcap,
             "the server responded with the status code %ld but did not return more information",
             code);
}

static kc_result result_for_code(long code)
{
    if (code == 404) return KC_NOT_FOUND;
    if (code == 409) return KC_CONFLICT;
    return KC_API_ERROR;
}

/* An error answer: records its reason and message and words err as kubectl
 * prints it. */
static kc_result status_error(kc_client *c, const char *method, const gp_buf *body, gp_error *err)
{
    json_t *st = body->data ? json_loadb(body->data, body->len, 0, NULL) : NULL;
    const char *kind = json_string_value(json_object_get(st, "kind"));
    if (kind && strcmp(kind, "Status") == 0) {
        copy_str(c->last_reason, sizeof c->last_reason,
                 json_string_value(json_object_get(st, "reason")));
        copy_str(c->last_message, sizeof c->last_message,
                 json_string_value(json_object_get(st, "message")));
    }
    if (!kind || strcmp(kind, "Status") != 0 || !c->last_message[0]) {
        char reason[64];
        generic_status(c->last_code, method, body->data, reason, sizeof reason, c->last_message,
                       sizeof c->last_message);
        if (!c->last_reason[0]) copy_str(c->last_reason, sizeof c->last_reason, reason);
    }
    json_decref(st);
    if (strcmp(c->last_reason, "Unauthorized") == 0)
        gp_error_set(err, NULL, 0, 0, "error: You must be logged in to the server (%s)",
                     c->last_message);
    else if (c->last_reason[0])
        gp_error_set(err, NULL, 0, 0, "Error from server (%s): %s", c->last_reason,
                     c->last_message);
    else
        gp_error_set(err, NULL, 0, 0, "Error from server: %s", c->last_message);
    return result_for_code(c->last_code);
}

static kc_result unreachable(kc_client *c, CURLcode rc, gp_error *err)
{
    const kc_config *cfg = c->cfg;
    long os_errno = 0;
    curl_easy_getinfo(c->curl, CURLINFO_OS_ERRNO, &os_errno);
    char why[CURL_ERROR_SIZE + 64];
    /* "Connection refused" says more than curl's "Failed to connect to ...
     * port ...: Couldn't connect to server"; a TLS failure is best in curl's
     * own words. */
    if (rc == CURLE_COULDNT_CONNECT && os_errno != 0)
        copy_str(why, sizeof why, strerror((int)os_errno));
    else if (c->errbuf[0])
        copy_str(why, sizeof why, c->errbuf);
    else
        copy_str(why, sizeof why, curl_easy_strerror(rc));
    if (cfg->context_name && cfg->source)
        gp_error_set(err, NULL, 0, 0,
                     "cannot reach the Kubernetes API server at %s (context \"%s\" in %s): %s",
                     cfg->server, cfg->context_name, cfg->source, why);
    else
        gp_error_set(err, NULL, 0, 0, "cannot reach the Kubernetes API server at %s: %s",
                     cfg->server, why);
    return KC_UNREACHABLE;
}

/* ---- one request ------------------------------------------------------------ */

typedef struct {
    const char *method;
    const char *path;
    const char *content_type; /* NULL: no body */
    const char *body;
    size_t body_len;
    long timeout_ms; /* 0: none */
    curl_write_callback write;
    void *write_ud;
} request;

static struct curl_slist *request_headers(const kc_client *c, const request *r)
{
    char ctype[96];
    struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
    /* curl waits for "100 Continue" before sending larger bodies; the API
     * server answers straight away, so the wait would be a second lost. */
    if (h) h = curl_slist_append(h, "Expect:");
    if (h && c->auth_hdr) h = curl_slist_append(h, c->auth_hdr);
    if (h && c->host_hdr) h = curl_slist_append(h, c->host_hdr);
    if (h && r->content_type) {
        snprintf(ctype, sizeof ctype, "Content-Type: %s", r->content_type);
        h = curl_slist_append(h, ctype);
    }
    return h;
}

/* Runs r; the answer's body goes to r->write. Returns the curl code and
 * sets last_code. */
static CURLcode perform(kc_client *c, const request *r, struct curl_slist **headers)
{
    CURL *h = c->curl;
    char *url = gp_format("%s%s", c->base, r->path);
    *headers = request_headers(c, r);
    if (!url || !*headers) {
        free(url);
        return CURLE_OUT_OF_MEMORY;
    }
    c->errbuf[0] = '\0';
    c->last_code = 0;
    c->last_reason[0] = c->last_message[0] = '\0';
    curl_easy_setopt(h, CURLOPT_URL, url);
    free(url); /* curl keeps its own copy */
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, *headers);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, r->timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, r->write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r->write_ud);
    if (r->content_type) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body);
    } else {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    }
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST,
                     strcmp(r->method, "GET") == 0 || strcmp(r->method, "POST") == 0 ? NULL
                                                                                     : r->method);
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &c->last_code);
    /* The body pointer is the caller's: never let a later request see it. */
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    return rc;
}

static long request_timeout(const kc_client *c)
{
    return c->cfg->timeout_ms > 0 ? c->cfg->timeout_ms : DEFAULT_TIMEOUT_MS;
}

/* A request whose answer is one JSON value: *out receives it (NULL: not
 * wanted). */
static kc_result call(kc_client *c, const char *method, const char *path, const char *ctype,
                      const json_t *body, json_t **out, gp_error *err)
{
    if (out) *out = NULL;
    char *text = body ? json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    if (body && !text) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return KC_BAD_RESPONSE;
    }
    gp_buf answer = {.max = MAX_BODY};
    request r = {method,
                 path,
                 body ? ctype : NULL,
                 text,
                 text ? strlen(text) : 0,
                 request_timeout(c),
                 write_to_buffer,
                 &answer};
    struct curl_slist *headers = NULL;
    CURLcode rc = perform(c, &r, &headers);
    curl_slist_free_all(headers);
    free(text);
    kc_result res = KC_OK;
    if (rc != CURLE_OK) {
        res = unreachable(c, rc, err);
    } else if (c->last_code >= 400 || c->last_code < 200) {
        res = status_error(c, method, &answer, err);
    } else if (out) {
        json_error_t jerr;
        *out = json_loadb(answer.data ? answer.data : "", answer.len, 0, &jerr);
        if (!*out) {
            gp_error_set(err, NULL, 0, 0, "%s %s: the server's answer is not JSON: %s", method,
                         path, jerr.text);
            res = KC_BAD_RESPONSE;
        }
    }
    gp_buf_free(&answer);
    return res;
}

kc_result kc_get(kc_client *c, const char *path, json_t **out, gp_error *err)
{
    return call(c, "GET", path, NULL, NULL, out, err);
}

kc_result kc_create(kc_client *c, const char *path, const json_t *obj, json_t **out, gp_error *err)
{
    return call(c, "POST", path, "application/json", obj, out, err);
}

kc_result kc_update(kc_client *c, const char *path, const json_t *obj, json_t **out, gp_error *err)
{
    return call(c, "PUT", path, "application/json", obj, out, err);
}

kc_result kc_patch(kc_client *c, const char *path, kc_patch_type type, const json_t *patch,
                   json_t **out, gp_error *err)
{
    static const char *const types[] = {
        [KC_PATCH_MERGE] = "application/merge-patch+json",
        [KC_PATCH_STRATEGIC] = "application/strategic-merge-patch+json",
        [KC_PATCH_JSON] = "application/json-patch+json",
    };
    return call(c, "PATCH", path, types[type], patch, out, err);
}

kc_result kc_delete(kc_client *c, const char *path, const char *propagation, gp_error *err)
{
    if (!propagation) return call(c, "DELETE", path, NULL, NULL, NULL, err);
    /* DeleteOptions in the body, as kubectl sends them. */
    json_t *opts = json_pack("{s:s, s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "v1",
                             "propagationPolicy", propagation);
    kc_result r = call(c, "DELETE", path, "application/json", opts, NULL, err);
    json_decref(opts);
    return r;
}

/* ---- lists ------------------------------------------------------------------ */

static char *page_path(const char *path, long limit, const char *cont)
{
    const char *sep = strchr(path, '?') ? "&" : "?";
    if (!cont) return gp_format("%s%slimit=%ld", path, sep, limit);
    char *esc = kc_escape(cont);
    char *p = esc ? gp_format("%s%slimit=%ld&continue=%s", path, sep, limit, esc) : NULL;
    free(esc);
    return p;
}

/* Where a page's bytes go: into the list parser while the answer is a
 * success, else into a buffer for the Status. */
typedef struct page_sink {
    CURL *curl;
    kc_list_parser *parser;
    gp_buf error_body; /* max MAX_BODY */
    int parse;         /* 0 fine, 1 stopped by the callback, -1 not a list */
    gp_error parse_err;
} page_sink;

static size_t write_page(char *data, size_t size, size_t n, void *ud)
{
    page_sink *s = ud;
    long code = 0;
    curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &code);
    if (code < 200 || code >= 300)
        return gp_buf_addn(&s->error_body, data, size * n) == 0 ? size * n : 0;
    if (s->parse != 0) return 0;
    s->parse = kc_list_parser_feed(s->parser, data, size * n, &s->parse_err);
    return s->parse == 0 ? size * n : 0;
}

/* One page: its items to `each`, *cont to the next page's token. */
static kc_result list_page(kc_client *c, const char *list_path, const char *page,
                           const kc_fields *keep, kc_item_fn each, void *ud, char **cont,
                           gp_error *err)
{
    *cont = NULL;
    page_sink sink = {.curl = c->curl,
                      .parser = kc_list_parser_new(keep, each, ud),
                      .error_body = {.max = MAX_BODY}};
    if (!sink.parser) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return KC_BAD_RESPONSE;
    }
    request r = {"GET", page, NULL, NULL, 0, request_timeout(c), write_page, &sink};
    struct curl_slist *headers = NULL;
    CURLcode rc = perform(c, &r, &headers);
    curl_slist_free_all(headers);
    kc_result res = KC_OK;
    if (sink.parse == 1) {
        res = KC_API_ERROR; /* the callback said stop; err is its business */
    } else if (sink.parse < 0) {
        gp_error_set(err, NULL, 0, 0, "GET %s: %s", list_path, sink.parse_err.text);
        res = KC_BAD_RESPONSE;
    } else if (rc != CURLE_OK) {
        res = unreachable(c, rc, err);
    } else if (c->last_code >= 400 || c->last_code < 200) {
        res = status_error(c, "GET", &sink.error_body, err);
    } else if (kc_list_parser_finish(sink.parser, cont, &sink.parse_err) != 0) {
        gp_error_set(err, NULL, 0, 0, "GET %s: %s", list_path, sink.parse_err.text);
        res = KC_BAD_RESPONSE;
    } else if (!kc_list_parser_saw_items(sink.parser)) {
        gp_error_set(err, NULL, 0, 0, "GET %s: the answer is not a list (no \"items\")", list_path);
        res = KC_BAD_RESPONSE;
    }
    if (res != KC_OK) {
        free(*cont);
        *cont = NULL;
    }
    gp_buf_free(&sink.error_body);
    kc_list_parser_free(sink.parser);
    return res;
}

kc_result kc_list_fields(kc_client *c, const char *path, long limit, const kc_fields *keep,
                         kc_item_fn each, void *ud, gp_error *err)
{
    char *cont = NULL;
    do {
        char *page = page_path(path, limit > 0 ? limit : DEFAULT_PAGE, cont);
        free(cont);
        cont = NULL;
        if (!page) {
            gp_error_set(err, NULL, 0, 0, "out of memory");
            return KC_BAD_RESPONSE;
        }
        kc_result r = list_page(c, path, page, keep, each, ud, &cont, err);
        free(page);
        if (r != KC_OK) return r;
    } while (cont);
    return KC_OK;
}

kc_result kc_list(kc_client *c, const char *path, long limit, kc_item_fn each, void *ud,
                  gp_error *err)
{
    return kc_list_fields(c, path, limit, NULL, each, ud, err);
}

static int append_item(json_t *item, void *ud)
{
    return json_array_append(ud, item);
}

kc_result kc_list_all(kc_client *c, const char *path, json_t **items, gp_error *err)
{
    *items = json_array();
    if (!*items) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return KC_BAD_RESPONSE;
    }
    kc_result r = kc_list(c, path, 0, append_item, *items, err);
    if (r == KC_API_ERROR && kc_last_code(c) < 400)
        gp_error_set(err, NULL, 0, 0, "out of memory"); /* only append_item stops a list */
    if (r != KC_OK) {
        json_decref(*items);
        *items = NULL;
    }
    return r;
}

/* ---- watch ------------------------------------------------------------------ */

typedef struct {
    kc_client *c;
    kc_event_fn on_event;
    void *ud;
    gp_buf line;    /* the event being received (max MAX_BODY, as failure) */
    gp_buf failure; /* the body of an error answer */
    bool stopped;   /* on_event asked to stop */
    bool bad;       /* a line that is not an event; err says why */
    gp_error *err;
} watch_state;

/* One line of the stream: {"type": ..., "object": {...}}. */
static int watch_event(watch_state *w, const char *text, size_t len)
{
    while (len > 0 && (text[len - 1] == '\r' || text[len - 1] == ' '))
        len--;
    if (len == 0) return 0;
    json_error_t jerr;
    json_t *ev = json_loadb(text, len, 0, &jerr);
    const char *type = json_string_value(json_object_get(ev, "type"));
    json_t *obj = json_object_get(ev, "object");
    if (!type || !obj) {
        gp_error_set(w->err, NULL, 0, 0, "the watch stream holds a line that is not an event: %s",
                     ev ? "no \"type\" or \"object\"" : jerr.text);
        w->bad = true;
        json_decref(ev);
        return -1;
    }
    int stop = w->on_event(type, obj, w->ud);
    json_decref(ev);
    if (stop) w->stopped = true;
    return stop ? -1 : 0;
}

static size_t watch_too_big(watch_state *w)
{
    gp_error_set(w->err, NULL, 0, 0, "a watch event is larger than %u MiB, or memory ran out",
                 (unsigned)(MAX_BODY >> 20));
    w->bad = true;
    return 0;
}

/* Events arrive in chunks that need not end on a line: complete lines are
 * handed on as they arrive, the rest waits for the next chunk. Returning
 * less than was given makes curl end the transfer (CURLE_WRITE_ERROR). */
static size_t write_watch(char *data, size_t size, size_t n, void *ud)
{
    watch_state *w = ud;
    size_t total = size * n;
    long code = 0;
    curl_easy_getinfo(w->c->curl, CURLINFO_RESPONSE_CODE, &code);
    if (code >= 300) return gp_buf_addn(&w->failure, data, total) == 0 ? total : 0;
    const char *p = data, *end = data + total;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return gp_buf_addn(&w->line, p, (size_t)(end - p)) == 0 ? total : watch_too_big(w);
        int rc;
        if (w->line.len == 0) {
            rc = watch_event(w, p, (size_t)(nl - p));
        } else {
            if (gp_buf_addn(&w->line, p, (size_t)(nl - p)) != 0) return watch_too_big(w);
            rc = watch_event(w, w->line.data, w->line.len);
            gp_buf_clear(&w->line);
        }
        if (rc != 0) return 0;
        p = nl + 1;
    }
    return total;
}

kc_result kc_watch(kc_client *c, const char *path, long timeout_seconds, kc_event_fn on_event,
                   void *ud, gp_error *err)
{
    const char *sep = strchr(path, '?') ? "&" : "?";
    char *p = timeout_seconds > 0
                  ? gp_format("%s%swatch=1&timeoutSeconds=%ld", path, sep, timeout_seconds)
                  : gp_format("%s%swatch=1", path, sep);
    if (!p) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return KC_BAD_RESPONSE;
    }
    watch_state w = {.c = c,
                     .on_event = on_event,
                     .ud = ud,
                     .line = {.max = MAX_BODY},
                     .failure = {.max = MAX_BODY},
                     .err = err};
    /* The server ends the watch at timeoutSeconds; our own limit is only a
     * backstop for a server that does not. */
    long limit_ms = timeout_seconds > 0 ? (timeout_seconds + 15) * 1000 : 0;
    request r = {"GET", p, NULL, NULL, 0, limit_ms, write_watch, &w};
    struct curl_slist *headers = NULL;
    CURLcode rc = perform(c, &r, &headers);
    curl_slist_free_all(headers);
    free(p);
    kc_result res = KC_OK;
    if (w.bad)
        res = KC_BAD_RESPONSE;
    else if (c->last_code >= 300)
        res = status_error(c, "GET", &w.failure, err);
    else if (w.stopped)
        res = KC_OK; /* on_event ended it: curl reports that as a write error */
    else if (rc == CURLE_OPERATION_TIMEDOUT && c->last_code >= 200 && timeout_seconds > 0)
        res = KC_OK; /* the watch lasted as long as it was asked to */
    else if (rc != CURLE_OK)
        res = unreachable(c, rc, err);
    gp_buf_free(&w.line);
    gp_buf_free(&w.failure);
    return res;
}
