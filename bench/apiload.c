/* Load client for gpuop's API server (bench/apiserver_bench.sh builds and runs it).
 *
 *   apiload port                         print a free TCP port of 127.0.0.1
 *   apiload ready URL DATA SINCE [TIMEOUT_S]
 *       poll URL/readyz (0.5 ms apart) until it answers 200 "ok", then wait for
 *       DATA/kubeconfig; SINCE is when the server was started (bash's
 *       $EPOCHREALTIME). Prints readyz_ms, kubeconfig_ms and attempts.
 *   apiload OP URL DATA [--threads T] [--count N] [--ns NS] [--objects M]
 *                       [--nodes K] [--limit L] [--type merge|strategic]
 *       N requests in all over T threads (default 8), each thread with one
 *       curl easy handle and so one keep-alive connection, opened by an
 *       untimed GET /readyz before the threads start together. OP:
 *         namespace     POST the namespace NS
 *         create-pods   POST pods p-0 .. p-(N-1) into NS; with --nodes K,
 *                       pod i gets spec.nodeName n-(i mod K)
 *         create-nodes  POST nodes n-0 .. n-(N-1)
 *         get           GET pod p-(i mod M) of NS
 *         list          LIST the pods of NS (?limit=L when L > 0); without a
 *                       limit the list must hold exactly M pods
 *         page          walk the pods of NS with ?limit=L&continue=...; each
 *                       walk must see exactly M distinct pods
 *         patch         PATCH the label bench-seq of pod p-(thread mod M) to a
 *                       new value (merge patch, or strategic merge patch with
 *                       --type strategic)
 *
 * DATA is the server's data directory: DATA/tls.crt is the CA, DATA/token the
 * bearer token. Every answer is checked (status, and with jansson the object's
 * name, the list's length, the patched label, a resourceVersion that grows),
 * after the request's clock stopped; a list body identical to the last one
 * checked in full (same length and 64-bit FNV-1a hash) is not parsed again. Output is one line of
 * key=value pairs: op threads requests ok errors seconds rps p50_ms p90_ms p99_ms max_ms mean_ms
 * bytes (response bodies), and for page: walks walk_median_ms pages. Latency is per request (per
 * page for page), wall clock on CLOCK_MONOTONIC, nearest-rank percentiles. The first wrong answers
 * are described on stderr. Exit status: 0 every answer right, 1 some were wrong or missing, 2 usage
 * or setup errors.
 *
 * Built by apiserver_bench.sh: cc -O2 -std=c11 -pthread bench/apiload.c
 *                              -lcurl -ljansson -lpthread */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *prog = "apiload";
/* When run_load's threads started their requests (CLOCK_MONOTONIC ns): the
 * time origin of pods-running. */
static long long load_started_ns;

/* A server that died answers every request at once with "connection
 * refused": a thread gives up after this many transport errors in a row. */
#define MAX_TRANSPORT_ERRORS_IN_A_ROW 20
#define MAX_ERRORS_SHOWN              8

typedef struct config {
    const char *op, *url, *data, *ns, *patch_type, *max_unavailable;
    int threads;
    long count, objects, nodes, limit;
    long first;     /* create-pods, pods-running: the first pod is p-FIRST */
    long timeout_s; /* pods-running, daemonset, nodes-ready */
    double since;   /* nodes-ready: when the server was started */
    char token[128];
    char ca[PATH_MAX];
} config;

typedef struct buffer {
    char *data;
    size_t len, cap;
} buffer;

typedef struct worker {
    const config *cfg;
    int id;
    pthread_t thread;
    pthread_barrier_t *start;
    CURL *curl;
    struct curl_slist *headers, *json_headers, *patch_headers;
    buffer body;
    long long *lat; /* ns */
    size_t nlat, lat_cap;
    long long *walks; /* page: ns per walk */
    size_t nwalks;
    long ok, errors, pages, transport_in_a_row;
    unsigned long long last_rv;
    unsigned long long verified_hash; /* list: the last body checked in full */
    size_t verified_len;
    size_t bytes;
    char first_error[600];
} worker;

static void fail(const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(2);
}

static long long now_ns(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *xrealloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q) fail("%s", "out of memory");
    return q;
}

static size_t on_body(char *data, size_t size, size_t n, void *user)
{
    buffer *b = user;
    size_t add = size * n;
    if (b->len + add + 1 > b->cap) {
        b->cap = (b->len + add + 1) * 2;
        b->data = xrealloc(b->data, b->cap);
    }
    memcpy(b->data + b->len, data, add);
    b->len += add;
    b->data[b->len] = '\0';
    return add;
}

/* ---- setup ------------------------------------------------------------- */

/* The token file, trimmed; false while it does not exist yet. */
static bool read_token(const char *data, char *token, size_t size)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/token", data);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    bool ok = fgets(token, (int)size, f) != NULL;
    fclose(f);
    if (!ok) return false;
    token[strcspn(token, "\r\n")] = '\0';
    return token[0] != '\0';
}

static struct curl_slist *header_list(const config *cfg, const char *content_type)
{
    char auth[160];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", cfg->token);
    struct curl_slist *h = curl_slist_append(NULL, auth);
    h = curl_slist_append(h, "Accept: application/json");
    /* curl would otherwise wait for "100 Continue" before larger bodies. */
    h = curl_slist_append(h, "Expect:");
    if (content_type) h = curl_slist_append(h, content_type);
    if (!h) fail("%s", "out of memory");
    return h;
}

static CURL *new_handle(const config *cfg, buffer *body)
{
    CURL *c = curl_easy_init();
    if (!c) fail("%s", "curl_easy_init failed");
    curl_easy_setopt(c, CURLOPT_CAINFO, cfg->ca);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    return c;
}

/* ---- one request ---------------------------------------------------------- */

/* Counts a wrong answer; the first one of each thread is kept for stderr. */
__attribute__((format(printf, 2, 3))) static void note_error(worker *w, const char *fmt, ...)
{
    w->errors++;
    if (w->first_error[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->first_error, sizeof w->first_error, fmt, ap);
    va_end(ap);
}

/* Sends one request; returns the HTTP status, or -1 after a transport error
 * (counted). The latency of every answered request is recorded. */
static long perform(worker *w, const char *method, const char *url, const char *body,
                    struct curl_slist *headers, bool timed)
{
    CURL *c = w->curl;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    } else {
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, NULL);
    }
    w->body.len = 0;
    if (w->body.data) w->body.data[0] = '\0';
    long long t0 = now_ns(CLOCK_MONOTONIC);
    CURLcode rc = curl_easy_perform(c);
    long long t1 = now_ns(CLOCK_MONOTONIC);
    if (rc != CURLE_OK) {
        note_error(w, "%s %s: %s", method, url, curl_easy_strerror(rc));
        w->transport_in_a_row++;
        return -1;
    }
    w->transport_in_a_row = 0;
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    w->bytes += w->body.len;
    if (timed) {
        if (w->nlat == w->lat_cap) {
            w->lat_cap = w->lat_cap ? w->lat_cap * 2 : 1024;
            w->lat = xrealloc(w->lat, w->lat_cap * sizeof *w->lat);
        }
        w->lat[w->nlat++] = t1 - t0;
    }
    return status;
}

/* Records a wrong status with the start of the body. False when wrong. */
static bool expect_status(worker *w, const char *what, long status, long want)
{
    if (status == want) return true;
    if (status < 0) return false; /* already counted */
    note_error(w, "%s: HTTP %ld (want %ld): %.300s", what, status, want,
               w->body.data ? w->body.data : "");
    return false;
}

static json_t *parse_body(worker *w, const char *what)
{
    json_error_t jerr;
    json_t *doc = json_loadb(w->body.data ? w->body.data : "", w->body.len, 0, &jerr);
    if (!doc) {
        note_error(w, "%s: the body is not JSON: %s", what, jerr.text);
    }
    return doc;
}

static const char *meta_string(json_t *obj, const char *key)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), key));
}

/* The answer must be the object NAME. */
static bool check_named(worker *w, const char *what, const char *name)
{
    json_t *doc = parse_body(w, what);
    if (!doc) return false;
    const char *got = meta_string(doc, "name");
    bool ok = got && strcmp(got, name) == 0 && meta_string(doc, "resourceVersion");
    if (!ok) {
        note_error(w, "%s: metadata.name %s (want %s) or no resourceVersion", what,
                   got ? got : "missing", name);
    }
    json_decref(doc);
    return ok;
}

/* ---- operations ------------------------------------------------------------ */

static void pod_body(const config *cfg, long i, char *out, size_t size)
{
    char node[48] = "";
    if (cfg->nodes > 0) snprintf(node, sizeof node, ",\"nodeName\":\"n-%ld\"", i % cfg->nodes);
    snprintf(out, size,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-%ld\","
             "\"namespace\":\"%s\",\"labels\":{\"app\":\"bench\",\"shard\":\"s%ld\"}},"
             "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"registry.k8s.io/pause:3.10\","
             "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}]%s}}",
             i, cfg->ns, i % 10, node);
}

static void node_body(long i, char *out, size_t size)
{
    snprintf(out, size,
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n-%ld\","
             "\"labels\":{\"kubernetes.io/hostname\":\"n-%ld\",\"kubernetes.io/os\":\"linux\","
             "\"kubernetes.io/arch\":\"amd64\",\"topology.kubernetes.io/zone\":\"zone-%ld\","
             "\"nvidia.com/gpu.present\":\"%s\"}},"
             "\"status\":{\"capacity\":{\"cpu\":\"16\",\"memory\":\"32Gi\",\"pods\":\"110\"},"
             "\"allocatable\":{\"cpu\":\"15\",\"memory\":\"31Gi\",\"pods\":\"110\"},"
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
             i, i, i % 3, i % 4 == 0 ? "true" : "false");
}

static void op_create(worker *w, long i)
{
    const config *cfg = w->cfg;
    char url[512], body[1024], name[32], what[80];
    if (strcmp(cfg->op, "namespace") == 0) {
        snprintf(url, sizeof url, "%s/api/v1/namespaces", cfg->url);
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
                 cfg->ns);
        snprintf(name, sizeof name, "%.31s", cfg->ns);
    } else if (strcmp(cfg->op, "create-nodes") == 0) {
        snprintf(url, sizeof url, "%s/api/v1/nodes", cfg->url);
        node_body(i, body, sizeof body);
        snprintf(name, sizeof name, "n-%ld", i);
    } else {
        snprintf(url, sizeof url, "%s/api/v1/namespaces/%s/pods", cfg->url, cfg->ns);
        pod_body(cfg, i, body, sizeof body);
        snprintf(name, sizeof name, "p-%ld", i);
    }
    snprintf(what, sizeof what, "POST %s", name);
    long status = perform(w, "POST", url, body, w->json_headers, true);
    if (expect_status(w, what, status, 201) && check_named(w, what, name)) w->ok++;
}

static void op_get(worker *w, long i)
{
    const config *cfg = w->cfg;
    char url[512], name[32], what[80];
    snprintf(name, sizeof name, "p-%ld", i % cfg->objects);
    snprintf(url, sizeof url, "%s/api/v1/namespaces/%s/pods/%s", cfg->url, cfg->ns, name);
    snprintf(what, sizeof what, "GET pod %s", name);
    long status = perform(w, "GET", url, NULL, w->headers, true);
    if (expect_status(w, what, status, 200) && check_named(w, what, name)) w->ok++;
}

/* A list answer: the items, or NULL after recording why not. */
static json_t *list_items(worker *w, json_t *doc, const char *what)
{
    json_t *items = json_object_get(doc, "items");
    if (!json_is_array(items)) {
        note_error(w, "%s: no items array", what);
        return NULL;
    }
    return items;
}

/* FNV-1a: a body byte for byte identical to one checked in full is right
 * too, and hashing it costs a small part of parsing it (parsing 100 pods with
 * jansson took ~1 ms of the 2 CPUs the server needs). */
static unsigned long long hash_body(const buffer *b)
{
    unsigned long long h = 14695981039346656037ULL;
    for (size_t k = 0; k < b->len; k++)
        h = (h ^ (unsigned char)b->data[k]) * 1099511628211ULL;
    return h;
}

static void op_list(worker *w)
{
    const config *cfg = w->cfg;
    char url[512], what[600];
    snprintf(url, sizeof url, "%s/api/v1/namespaces/%s/pods", cfg->url, cfg->ns);
    if (cfg->limit > 0)
        snprintf(url + strlen(url), sizeof url - strlen(url), "?limit=%ld", cfg->limit);
    snprintf(what, sizeof what, "LIST %s", url + strlen(cfg->url));
    long status = perform(w, "GET", url, NULL, w->headers, true);
    if (!expect_status(w, what, status, 200)) return;
    unsigned long long h = hash_body(&w->body);
    if (w->verified_len && w->body.len == w->verified_len && h == w->verified_hash) {
        w->ok++;
        return;
    }
    json_t *doc = parse_body(w, what);
    json_t *items = doc ? list_items(w, doc, what) : NULL;
    long want = cfg->limit > 0 && cfg->limit < cfg->objects ? cfg->limit : cfg->objects;
    if (items && (long)json_array_size(items) != want) {
        note_error(w, "%s: %zu items (want %ld)", what, json_array_size(items), want);
    } else if (items) {
        w->ok++;
        w->verified_len = w->body.len;
        w->verified_hash = h;
    }
    json_decref(doc);
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names seen by one walk must be exactly M distinct ones. */
static bool check_walk(worker *w, char **names, size_t n)
{
    if ((long)n != w->cfg->objects) {
        note_error(w, "paged LIST: %zu items in all (want %ld)", n, w->cfg->objects);
        return false;
    }
    qsort(names, n, sizeof *names, compare_strings);
    for (size_t k = 1; k < n; k++) {
        if (strcmp(names[k - 1], names[k]) == 0) {
            note_error(w, "paged LIST: pod %.60s twice", names[k]);
            return false;
        }
    }
    return true;
}

/* Appends the page's pod names to *names; returns the continue token (to
 * free), "" at the end, NULL on a wrong answer. */
static char *take_page(worker *w, const char *what, char ***names, size_t *n, size_t *cap)
{
    json_t *doc = parse_body(w, what);
    json_t *items = doc ? list_items(w, doc, what) : NULL;
    if (!items) {
        json_decref(doc);
        return NULL;
    }
    size_t k;
    json_t *item;
    json_array_foreach(items, k, item)
    {
        const char *name = meta_string(item, "name");
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 1024;
            *names = xrealloc(*names, *cap * sizeof **names);
        }
        (*names)[(*n)++] = strdup(name ? name : "");
    }
    const char *next =
        json_string_value(json_object_get(json_object_get(doc, "metadata"), "continue"));
    char *token = strdup(next ? next : "");
    json_decref(doc);
    return token;
}

static void op_page(worker *w)
{
    const config *cfg = w->cfg;
    char **names = NULL;
    size_t n = 0, cap = 0;
    char *token = strdup("");
    long long t0 = now_ns(CLOCK_MONOTONIC);
    bool ok = true;
    for (;;) {
        char url[1024], what[1100];
        char *escaped = curl_easy_escape(w->curl, token, 0);
        snprintf(url, sizeof url, "%s/api/v1/namespaces/%s/pods?limit=%ld%s%s", cfg->url, cfg->ns,
                 cfg->limit, token[0] ? "&continue=" : "", token[0] ? escaped : "");
        curl_free(escaped);
        free(token);
        token = NULL;
        snprintf(what, sizeof what, "paged LIST %s", url + strlen(cfg->url));
        long status = perform(w, "GET", url, NULL, w->headers, true);
        w->pages++;
        if (!expect_status(w, what, status, 200)) {
            ok = false;
            break;
        }
        token = take_page(w, what, &names, &n, &cap);
        if (!token) {
            ok = false;
            break;
        }
        if (!token[0]) break;
        if ((long)n > cfg->objects) { /* a continue token that never ends */
            note_error(w, "paged LIST: more items than pods, still a continue token");
            ok = false;
            break;
        }
    }
    long long t1 = now_ns(CLOCK_MONOTONIC);
    free(token);
    if (ok && check_walk(w, names, n)) w->ok++;
    w->walks = xrealloc(w->walks, (w->nwalks + 1) * sizeof *w->walks);
    w->walks[w->nwalks++] = t1 - t0;
    for (size_t k = 0; k < n; k++)
        free(names[k]);
    free(names);
}

static void op_patch(worker *w, long i)
{
    const config *cfg = w->cfg;
    char url[512], body[160], value[48], name[32], what[100];
    snprintf(name, sizeof name, "p-%ld", (long)w->id % cfg->objects);
    snprintf(url, sizeof url, "%s/api/v1/namespaces/%s/pods/%s", cfg->url, cfg->ns, name);
    snprintf(value, sizeof value, "t%d-%ld", w->id, i);
    snprintf(body, sizeof body, "{\"metadata\":{\"labels\":{\"bench-seq\":\"%s\"}}}", value);
    snprintf(what, sizeof what, "PATCH pod %s", name);
    long status = perform(w, "PATCH", url, body, w->patch_headers, true);
    if (!expect_status(w, what, status, 200)) return;
    json_t *doc = parse_body(w, what);
    if (!doc) return;
    json_t *labels = json_object_get(json_object_get(doc, "metadata"), "labels");
    const char *got = json_string_value(json_object_get(labels, "bench-seq"));
    const char *rv_text = meta_string(doc, "resourceVersion");
    unsigned long long rv = rv_text ? strtoull(rv_text, NULL, 10) : 0;
    if (!got || strcmp(got, value) != 0) {
        note_error(w, "%s: label bench-seq is %s (want %s)", what, got ? got : "missing", value);
    } else if (cfg->threads <= cfg->objects && rv <= w->last_rv) {
        /* This thread alone writes its pod: every write must raise the RV. */
        note_error(w, "%s: resourceVersion %s after %llu", what, rv_text ? rv_text : "missing",
                   w->last_rv);
    } else {
        w->ok++;
    }
    w->last_rv = rv;
    json_decref(doc);
}

static void *run_worker(void *arg)
{
    worker *w = arg;
    const config *cfg = w->cfg;
    char url[512];
    snprintf(url, sizeof url, "%s/readyz", cfg->url);
    long status = perform(w, "GET", url, NULL, w->headers, false); /* opens the connection */
    expect_status(w, "warm-up GET /readyz", status, 200);
    pthread_barrier_wait(w->start);
    for (long i = w->id; i < cfg->count; i += cfg->threads) {
        if (w->transport_in_a_row >= MAX_TRANSPORT_ERRORS_IN_A_ROW) {
            w->errors += (cfg->count - i + cfg->threads - 1) / cfg->threads;
            break;
        }
        if (strcmp(cfg->op, "get") == 0)
            op_get(w, i);
        else if (strcmp(cfg->op, "list") == 0)
            op_list(w);
        else if (strcmp(cfg->op, "page") == 0)
            op_page(w);
        else if (strcmp(cfg->op, "patch") == 0)
            op_patch(w, i);
        else
            op_create(w, cfg->first + i);
    }
    pthread_barrier_wait(w->start);
    return NULL;
}

/* ---- results ----------------------------------------------------------- */

static int compare_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static double rank_ms(const long long *sorted, size_t n, double p)
{
    if (n == 0) return 0;
    size_t k = (size_t)(p * (double)n + 0.999999);
    if (k < 1) k = 1;
    if (k > n) k = n;
    return (double)sorted[k - 1] / 1e6;
}

static int report(const config *cfg, worker *ws, double seconds)
{
    size_t n = 0, nwalks = 0, bytes = 0;
    long ok = 0, errors = 0, pages = 0;
    for (int t = 0; t < cfg->threads; t++) {
        n += ws[t].nlat;
        nwalks += ws[t].nwalks;
        ok += ws[t].ok;
        errors += ws[t].errors;
        pages += ws[t].pages;
        bytes += ws[t].bytes;
    }
    long long *all = xrealloc(NULL, n * sizeof *all);
    long long *walks = xrealloc(NULL, nwalks * sizeof *walks);
    size_t at = 0, wat = 0;
    double sum = 0;
    for (int t = 0; t < cfg->threads; t++) {
        for (size_t k = 0; k < ws[t].nlat; k++)
            sum += (double)(all[at++] = ws[t].lat[k]);
        for (size_t k = 0; k < ws[t].nwalks; k++)
            walks[wat++] = ws[t].walks[k];
    }
    qsort(all, n, sizeof *all, compare_ll);
    qsort(walks, nwalks, sizeof *walks, compare_ll);
    printf("op=%s threads=%d requests=%zu ok=%ld errors=%ld seconds=%.4f rps=%.1f p50_ms=%.3f "
           "p90_ms=%.3f p99_ms=%.3f max_ms=%.3f mean_ms=%.3f bytes=%zu",
           cfg->op, cfg->threads, n, ok, errors, seconds, seconds > 0 ? (double)ok / seconds : 0,
           rank_ms(all, n, 0.50), rank_ms(all, n, 0.90), rank_ms(all, n, 0.99),
           n ? (double)all[n - 1] / 1e6 : 0, n ? sum / (double)n / 1e6 : 0, bytes);
    if (strcmp(cfg->op, "page") == 0)
        printf(" walks=%zu walk_median_ms=%.3f pages=%ld", nwalks, rank_ms(walks, nwalks, 0.5),
               pages);
    putchar('\n');
    int shown = 0;
    for (int t = 0; t < cfg->threads && shown < MAX_ERRORS_SHOWN; t++) {
        if (!ws[t].first_error[0]) continue;
        fprintf(stderr, "%s: %s: thread %d, %ld wrong; first: %s\n", prog, cfg->op, t, ws[t].errors,
                ws[t].first_error);
        shown++;
    }
    free(all);
    free(walks);
    return errors == 0 && ok == cfg->count ? 0 : 1;
}

static int run_load(config *cfg)
{
    if (!read_token(cfg->data, cfg->token, sizeof cfg->token))
        fail("cannot read %s/token", cfg->data);
    worker *ws = calloc((size_t)cfg->threads, sizeof *ws);
    if (!ws) fail("%s", "out of memory");
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)cfg->threads + 1);
    const char *patch_type = strcmp(cfg->patch_type, "strategic") == 0
                                 ? "Content-Type: application/strategic-merge-patch+json"
                                 : "Content-Type: application/merge-patch+json";
    for (int t = 0; t < cfg->threads; t++) {
        worker *w = &ws[t];
        w->cfg = cfg;
        w->id = t;
        w->start = &start;
        w->curl = new_handle(cfg, &w->body);
        w->headers = header_list(cfg, NULL);
        w->json_headers = header_list(cfg, "Content-Type: application/json");
        w->patch_headers = header_list(cfg, patch_type);
        if (pthread_create(&w->thread, NULL, run_worker, w) != 0)
            fail("%s", "cannot start a thread");
    }
    pthread_barrier_wait(&start);
    long long t0 = now_ns(CLOCK_MONOTONIC);
    load_started_ns = t0;
    pthread_barrier_wait(&start);
    long long t1 = now_ns(CLOCK_MONOTONIC);
    for (int t = 0; t < cfg->threads; t++)
        pthread_join(ws[t].thread, NULL);
    int rc = report(cfg, ws, (double)(t1 - t0) / 1e9);
    for (int t = 0; t < cfg->threads; t++) {
        curl_easy_cleanup(ws[t].curl);
        curl_slist_free_all(ws[t].headers);
        curl_slist_free_all(ws[t].json_headers);
        curl_slist_free_all(ws[t].patch_headers);
        free(ws[t].body.data);
        free(ws[t].lat);
        free(ws[t].walks);
    }
    pthread_barrier_destroy(&start);
    free(ws);
    return rc;
}

/* ---- ready and port ----------------------------------------------------- */

static int run_ready(config *cfg, double since, double timeout_s)
{
    long long start = (long long)(since * 1e9);
    long long deadline = now_ns(CLOCK_REALTIME) + (long long)(timeout_s * 1e9);
    char url[512], kubeconfig[PATH_MAX + 16];
    snprintf(url, sizeof url, "%s/readyz", cfg->url);
    snprintf(kubeconfig, sizeof kubeconfig, "%s/kubeconfig", cfg->data);
    worker w = {.cfg = cfg};
    w.curl = new_handle(cfg, &w.body);
    curl_easy_setopt(w.curl, CURLOPT_CONNECTTIMEOUT_MS, 200L);
    curl_easy_setopt(w.curl, CURLOPT_TIMEOUT_MS, 2000L);
    long attempts = 0;
    double readyz_ms = -1, kubeconfig_ms = -1;
    struct timespec pause = {0, 500000};
    while (now_ns(CLOCK_REALTIME) < deadline) {
        struct stat sb;
        if (readyz_ms < 0 && read_token(cfg->data, cfg->token, sizeof cfg->token) &&
            access(cfg->ca, R_OK) == 0) {
            if (!w.headers) w.headers = header_list(cfg, NULL);
            attempts++;
            long status = perform(&w, "GET", url, NULL, w.headers, false);
            if (status == 200 && w.body.data && strcmp(w.body.data, "ok") == 0)
                readyz_ms = (double)(now_ns(CLOCK_REALTIME) - start) / 1e6;
        }
        if (kubeconfig_ms < 0 && stat(kubeconfig, &sb) == 0)
            kubeconfig_ms = (double)(now_ns(CLOCK_REALTIME) - start) / 1e6;
        if (readyz_ms >= 0 && kubeconfig_ms >= 0) break;
        nanosleep(&pause, NULL);
    }
    curl_easy_cleanup(w.curl);
    curl_slist_free_all(w.headers);
    free(w.body.data);
    free(w.lat);
    if (readyz_ms < 0 || kubeconfig_ms < 0) {
        fprintf(stderr, "%s: %s did not become ready within %.0f s (%ld attempts; last: %s)\n",
                prog, url, timeout_s, attempts, w.first_error[0] ? w.first_error : "none");
        return 1;
    }
    printf("readyz_ms=%.3f kubeconfig_ms=%.3f attempts=%ld\n", readyz_ms, kubeconfig_ms, attempts);
    return 0;
}

static int run_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        fail("cannot bind a port: %s", strerror(errno));
    printf("%u\n", (unsigned)ntohs(a.sin_port));
    close(fd);
    return 0;
}

/* ---- arguments ------------------------------------------------------------ */

static long number(const char *text, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || v < 0) fail("%s takes a number >= 0", what);
    return v;
}

static void usage(void)
{
    fputs("usage: apiload port\n"
          "       apiload ready URL DATA SINCE [TIMEOUT_S]\n"
          "       apiload OP URL DATA [--threads T] [--count N] [--ns NS] [--objects M]\n"
          "                           [--nodes K] [--limit L] [--type merge|strategic]\n"
          "  OP: namespace create-pods create-nodes get list page patch\n",
          stderr);
    exit(2);
}

static void parse_options(config *cfg, int argc, char **argv)
{
    for (int i = 4; i < argc; i += 2) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!val) usage();
        if (strcmp(opt, "--threads") == 0)
            cfg->threads = (int)number(val, opt);
        else if (strcmp(opt, "--count") == 0)
            cfg->count = number(val, opt);
        else if (strcmp(opt, "--ns") == 0)
            cfg->ns = val;
        else if (strcmp(opt, "--objects") == 0)
            cfg->objects = number(val, opt);
        else if (strcmp(opt, "--nodes") == 0)
            cfg->nodes = number(val, opt);
        else if (strcmp(opt, "--limit") == 0)
            cfg->limit = number(val, opt);
        else if (strcmp(opt, "--type") == 0)
            cfg->patch_type = val;
        else
            usage();
    }
    if (cfg->threads < 1 || cfg->threads > 256) fail("%s", "--threads takes 1 to 256");
    if (strcmp(cfg->patch_type, "merge") != 0 && strcmp(cfg->patch_type, "strategic") != 0) usage();
    bool reads = strcmp(cfg->op, "get") == 0 || strcmp(cfg->op, "list") == 0 ||
                 strcmp(cfg->op, "page") == 0 || strcmp(cfg->op, "patch") == 0;
    if (reads && cfg->objects < 1) fail("%s", "--objects must be >= 1 for this operation");
    if (strcmp(cfg->op, "page") == 0 && cfg->limit < 1) fail("%s", "page needs --limit >= 1");
    if (strcmp(cfg->op, "namespace") == 0) cfg->count = 1, cfg->threads = 1;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "port") == 0) return run_port();
    if (argc < 4) usage();
    config cfg = {.op = argv[1],
                  .url = argv[2],
                  .data = argv[3],
                  .ns = "bench",
                  .patch_type = "merge",
                  .threads = 8,
                  .count = 1000};
    snprintf(cfg.ca, sizeof cfg.ca, "%s/tls.crt", cfg.data);
    static const char *ops[] = {"ready", "namespace", "create-pods", "create-nodes",
                                "get",   "list",      "page",        "patch"};
    bool known = false;
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
        known |= strcmp(cfg.op, ops[k]) == 0;
    if (!known) usage();
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) fail("%s", "curl_global_init failed");
    int rc;
    if (strcmp(cfg.op, "ready") == 0) {
        if (argc < 5 || argc > 6) usage();
        char *end;
        double since = strtod(argv[4], &end);
        if (*end) fail("SINCE takes seconds since the epoch, got '%s'", argv[4]);
        rc = run_ready(&cfg, since, argc == 6 ? (double)number(argv[5], "TIMEOUT_S") : 10.0);
    } else {
        parse_options(&cfg, argc, argv);
        rc = run_load(&cfg);
    }
    curl_global_cleanup();
    return rc;
}
