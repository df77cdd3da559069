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
 *         pods-running  create-pods p-F .. p-(F+N-1) (--first F, no nodeName)
 *                       while a watch on NS (LIST, watch, re-LIST on 410)
 *                       notes when each pod was first seen, bound and Running,
 *                       until all N run or --timeout S (default 120) passed;
 *                       then a LIST with fieldSelector status.phase=Running
 *                       must hold F+N pods, each bound, addressed and Ready.
 *                       A second line: counts, scheduled_/running_seconds
 *                       and _rate (from the creates' start to the last pod),
 *                       per-pod bind_ and e2e_ (created -> Running) ms.
 *         daemonset     create DaemonSet ds-bench in NS (RollingUpdate,
 *                       --max-unavailable U, default 10%), poll its status
 *                       every 20 ms until observedGeneration, desired,
 *                       current, ready, updated and available say K nodes
 *                       (--nodes K); check its K pods (one a node, Running,
 *                       Ready); change the image and wait and check again.
 *                       Prints rollout_ and update_seconds, the most
 *                       desired - available seen, and the number of distinct
 *                       updatedNumberScheduled values (the update's steps).
 *         nodes-ready   LIST nodes every 0.1 s until N have Ready True and
 *                       no node.kubernetes.io/not-ready taint (schedulable);
 *                       ready_seconds counts from --since SINCE.
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
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

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
    long first;     /* creates: the first object is p-FIRST (n-FIRST) */
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

/* ---- a few fields of a document ---- */

/* The scalars at a few dotted paths of a JSON document ("object.spec.
 * nodeName"; nothing inside an array), read with yajl's event parser and
 * no tree: the answers to the creates and the watch's events are read for
 * a name, a node and a phase, and building whole trees of every one of
 * them was most of what the client spent, on the CPUs the server under
 * test shares. */
#define PICK_MAX   8
#define PICK_DEPTH 64

typedef struct picker {
    const char *const *paths; /* NULL-terminated, at most PICK_MAX */
    char *values[PICK_MAX];   /* malloc'd text (numbers as written), NULL: absent */
    char path[512];
    size_t len, at[PICK_DEPTH]; /* the path's length at each open object */
    int depth, in_array;        /* open objects, arrays */
} picker;

static int pick_value(picker *k, const char *text, size_t len)
{
    if (k->in_array) return 1;
    for (size_t i = 0; k->paths[i] && i < PICK_MAX; i++)
        if (strlen(k->paths[i]) == k->len && memcmp(k->paths[i], k->path, k->len) == 0 &&
            !k->values[i])
            k->values[i] = strndup(text, len);
    return 1;
}

static int pick_string(void *ctx, const unsigned char *s, size_t len)
{
    return pick_value(ctx, (const char *)s, len);
}

static int pick_number(void *ctx, const char *s, size_t len)
{
    return pick_value(ctx, s, len);
}

static int pick_boolean(void *ctx, int b)
{
    return pick_value(ctx, b ? "true" : "false", b ? 4 : 5);
}

static int pick_null(void *ctx)
{
    (void)ctx;
    return 1;
}

static int pick_key(void *ctx, const unsigned char *key, size_t len)
{
    picker *k = ctx;
    size_t base = k->depth ? k->at[k->depth - 1] : 0;
    size_t dot = base ? 1 : 0;
    if (base + dot + len >= sizeof k->path) len = 0; /* too deep to be one we pick */
    if (dot) k->path[base] = '.';
    memcpy(k->path + base + dot, key, len);
    k->len = base + dot + len;
    return 1;
}

static int pick_start_map(void *ctx)
{
    picker *k = ctx;
    if (k->depth == PICK_DEPTH) return 0;
    k->at[k->depth++] = k->len;
    return 1;
}

static int pick_end_map(void *ctx)
{
    picker *k = ctx;
    k->len = --k->depth ? k->at[k->depth - 1] : 0;
    return 1;
}

static int pick_start_array(void *ctx)
{
    ((picker *)ctx)->in_array++;
    return 1;
}

static int pick_end_array(void *ctx)
{
    ((picker *)ctx)->in_array--;
    return 1;
}

static const yajl_callbacks pick_callbacks = {
    pick_null,    pick_boolean,     NULL,           NULL,
    pick_number,  pick_string,      pick_start_map, pick_key,
    pick_end_map, pick_start_array, pick_end_array,
};

static void picker_free(picker *k)
{
    for (size_t i = 0; i < PICK_MAX; i++)
        free(k->values[i]);
}

/* Reads the fields of `paths` from text into k; false (and the parser's
 * words in why) when the text is not one JSON document. */
static bool pick(picker *k, const char *const *paths, const char *text, size_t len, char *why,
                 size_t why_size)
{
    memset(k, 0, sizeof *k);
    k->paths = paths;
    yajl_handle h = yajl_alloc(&pick_callbacks, NULL, k);
    if (!h) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    bool ok = yajl_parse(h, (const unsigned char *)text, len) == yajl_status_ok &&
              yajl_complete_parse(h) == yajl_status_ok;
    if (!ok) {
        unsigned char *e = yajl_get_error(h, 0, (const unsigned char *)text, len);
        snprintf(why, why_size, "%s", e ? (const char *)e : "parse error");
        if (e) yajl_free_error(h, e);
    }
    yajl_free(h);
    return ok;
}

/* The answer must be the object NAME. */
static bool check_named(worker *w, const char *what, const char *name)
{
    static const char *const paths[] = {"metadata.name", "metadata.resourceVersion", NULL};
    picker k;
    char why[256];
    if (!pick(&k, paths, w->body.data ? w->body.data : "", w->body.len, why, sizeof why)) {
        note_error(w, "%s: the body is not JSON: %s", what, why);
        picker_free(&k);
        return false;
    }
    const char *got = k.values[0];
    bool ok = got && strcmp(got, name) == 0 && k.values[1];
    if (!ok) {
        note_error(w, "%s: metadata.name %s (want %s) or no resourceVersion", what,
                   got ? got : "missing", name);
    }
    picker_free(&k);
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

/* ---- controllers: pods-running, daemonset, nodes-ready ---------------------- */

/* Consecutive failed watch connections before the watcher gives up. */
#define MAX_WATCH_FAILURES 20
/* The DaemonSet status is polled this often (a GET costs the server ~0.1 ms). */
#define DS_POLL_NS 20000000LL
#define DS_NAME    "ds-bench"
#define DS_IMAGE_1 "registry.k8s.io/pause:3.10"
#define DS_IMAGE_2 "registry.k8s.io/pause:3.9"

/* When the watch first saw a pod created, bound to a node, Running
 * (CLOCK_MONOTONIC ns; 0 not yet). */
typedef struct pod_times {
    long long added, scheduled, running;
} pod_times;

/* A reflector on the pods of NS: LIST, then watch from the list's
 * resourceVersion, re-LIST after "410 Expired", re-watch when a stream ends. */
typedef struct watcher {
    const config *cfg;
    worker w;     /* LISTs; its first_error and errors are the watcher's */
    CURL *stream; /* the watch */
    buffer line;  /* the unfinished event line */
    pod_times *pods;
    long added, scheduled, running, events, relists, watches, failures;
    long long started, deadline, last_scheduled, last_running, next_progress;
    char rv[32];
    bool expired;
    atomic_bool stop; /* the creates failed: nothing more will come */
} watcher;

static const json_t *path_get(const json_t *obj, const char *a, const char *b)
{
    return json_object_get(json_object_get(obj, a), b);
}

/* Index of pod p-K among this run's pods, or -1. */
static long pod_index(const watcher *wt, const char *name)
{
    if (!name || strncmp(name, "p-", 2) != 0) return -1;
    char *end;
    long k = strtol(name + 2, &end, 10);
    if (*end || k < wt->cfg->first || k >= wt->cfg->first + wt->cfg->count) return -1;
    return k - wt->cfg->first;
}

static bool has_text(const json_t *v)
{
    const char *s = json_string_value(v);
    return s && *s;
}

/* The Ready condition (of a pod or a node) is True. */
static bool ready_condition(const json_t *obj)
{
    size_t i;
    json_t *cond;
    json_array_foreach(path_get(obj, "status", "conditions"), i, cond)
    {
        const char *type = json_string_value(json_object_get(cond, "type"));
        const char *status = json_string_value(json_object_get(cond, "status"));
        if (type && strcmp(type, "Ready") == 0) return status && strcmp(status, "True") == 0;
    }
    return false;
}

static bool phase_is(const json_t *obj, const char *phase)
{
    const char *p = json_string_value(path_get(obj, "status", "phase"));
    return p && strcmp(p, phase) == 0;
}

/* A pod seen with its name, its spec.nodeName and its status.phase (NULL
 * when absent). */
static void see_pod_fields(watcher *wt, const char *name, const char *node, const char *phase,
                           long long t)
{
    long k = pod_index(wt, name);
    if (k < 0) return;
    pod_times *p = &wt->pods[k];
    if (!p->added) {
        p->added = t;
        wt->added++;
    }
    if (!p->scheduled && node && *node) {
        p->scheduled = wt->last_scheduled = t;
        wt->scheduled++;
    }
    if (!p->running && phase && strcmp(phase, "Running") == 0) {
        p->running = wt->last_running = t;
        wt->running++;
    }
}

static void see_pod(watcher *wt, const json_t *pod, long long t)
{
    see_pod_fields(wt, meta_string((json_t *)pod, "name"),
                   json_string_value(path_get(pod, "spec", "nodeName")),
                   json_string_value(path_get(pod, "status", "phase")), t);
}

static bool watch_done(watcher *wt, long long t)
{
    return wt->running == wt->cfg->count || t >= wt->deadline || atomic_load(&wt->stop) ||
           wt->failures >= MAX_WATCH_FAILURES;
}

static void progress(watcher *wt, long long t)
{
    if (t < wt->next_progress) return;
    wt->next_progress = t + 1000000000LL;
    fprintf(stderr, "%s: pods-running t=%.1f s added=%ld scheduled=%ld running=%ld\n", prog,
            (double)(t - wt->started) / 1e9, wt->added, wt->scheduled, wt->running);
}

static void watch_event(watcher *wt, const char *text, size_t len, long long t)
{
    enum { TYPE, NAME, RV, NODE, PHASE, CODE };
    static const char *const paths[] = {"type",
                                        "object.metadata.name",
                                        "object.metadata.resourceVersion",
                                        "object.spec.nodeName",
                                        "object.status.phase",
                                        "object.code",
                                        NULL};
    picker k;
    char why[256];
    if (!pick(&k, paths, text, len, why, sizeof why)) {
        note_error(&wt->w, "watch: an event is not JSON: %s", why);
        picker_free(&k);
        return;
    }
    wt->events++;
    const char *type = k.values[TYPE], *name = k.values[NAME], *rv = k.values[RV];
    if (!type) {
        note_error(&wt->w, "watch: an event without a type: %.300s", text);
    } else if (strcmp(type, "ERROR") == 0) {
        if (k.values[CODE] && strcmp(k.values[CODE], "410") == 0)
            wt->expired = true;
        else
            note_error(&wt->w, "watch: ERROR event: %.300s", text);
    } else if (strcmp(type, "DELETED") == 0) {
        if (pod_index(wt, name) >= 0) note_error(&wt->w, "watch: pod %.60s was deleted", name);
    } else if (strcmp(type, "ADDED") == 0 || strcmp(type, "MODIFIED") == 0) {
        see_pod_fields(wt, name, k.values[NODE], k.values[PHASE], t);
    } else if (strcmp(type, "BOOKMARK") != 0) {
        note_error(&wt->w, "watch: unknown event type %.40s", type);
    }
    if (rv && !wt->expired) snprintf(wt->rv, sizeof wt->rv, "%s", rv);
    picker_free(&k);
}

static size_t on_watch_bytes(char *data, size_t size, size_t n, void *user)
{
    watcher *wt = user;
    size_t len = size * n;
    on_body(data, 1, len, &wt->line);
    long status = 0;
    curl_easy_getinfo(wt->stream, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) return len; /* a Status object: reported when it ends */
    long long t = now_ns(CLOCK_MONOTONIC);
    char *start = wt->line.data, *end = wt->line.data + wt->line.len, *nl;
    while ((nl = memchr(start, '\n', (size_t)(end - start)))) {
        if (nl > start) watch_event(wt, start, (size_t)(nl - start), t);
        start = nl + 1;
    }
    wt->line.len = (size_t)(end - start);
    memmove(wt->line.data, start, wt->line.len);
    progress(wt, t);
    return watch_done(wt, t) ? 0 : len;
}

static int on_watch_tick(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                         curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    watcher *wt = user;
    long long t = now_ns(CLOCK_MONOTONIC);
    progress(wt, t);
    return watch_done(wt, t) ? 1 : 0;
}

/* LISTs the pods of NS: sees each, and takes the list's resourceVersion. */
static int relist(watcher *wt)
{
    char url[512];
    snprintf(url, sizeof url, "%s/api/v1/namespaces/%s/pods", wt->cfg->url, wt->cfg->ns);
    long status = perform(&wt->w, "GET", url, NULL, wt->w.headers, false);
    if (!expect_status(&wt->w, "LIST pods (watch start)", status, 200)) return -1;
    json_t *doc = parse_body(&wt->w, "LIST pods (watch start)");
    json_t *items = doc ? list_items(&wt->w, doc, "LIST pods (watch start)") : NULL;
    const char *rv = json_string_value(path_get(doc, "metadata", "resourceVersion"));
    if (items && !rv) note_error(&wt->w, "LIST pods: no metadata.resourceVersion");
    if (!items || !rv) {
        json_decref(doc);
        return -1;
    }
    long long t = now_ns(CLOCK_MONOTONIC);
    size_t i;
    json_t *pod;
    json_array_foreach(items, i, pod) see_pod(wt, pod, t);
    snprintf(wt->rv, sizeof wt->rv, "%s", rv);
    wt->expired = false;
    wt->relists++;
    json_decref(doc);
    return 0;
}

/* One watch connection, until the stream ends or the run is done. */
static void watch_once(watcher *wt)
{
    const config *cfg = wt->cfg;
    char url[700];
    long long left = (wt->deadline - now_ns(CLOCK_MONOTONIC)) / 1000000000LL + 1;
    snprintf(url, sizeof url,
             "%s/api/v1/namespaces/%s/pods?watch=1&resourceVersion=%s&timeoutSeconds=%lld",
             cfg->url, cfg->ns, wt->rv, left);
    CURL *c = wt->stream;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, wt->w.headers);
    wt->line.len = 0;
    wt->watches++;
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc == CURLE_OK && status == 200) {
        wt->failures = 0;
    } else if (rc == CURLE_OK && status == 410) {
        wt->expired = true;
    } else if (rc == CURLE_OK) {
        note_error(&wt->w, "watch: HTTP %ld: %.300s", status, wt->line.data ? wt->line.data : "");
        wt->failures++;
    } else if (!watch_done(wt, now_ns(CLOCK_MONOTONIC))) {
        note_error(&wt->w, "watch: %s", curl_easy_strerror(rc));
        wt->failures++;
    }
}

static void *run_watcher(void *arg)
{
    watcher *wt = arg;
    struct timespec pause = {0, 100000000};
    while (!watch_done(wt, now_ns(CLOCK_MONOTONIC))) {
        if (wt->expired) {
            if (relist(wt) != 0) {
                wt->failures++;
                nanosleep(&pause, NULL);
            }
            continue;
        }
        long failures = wt->failures;
        watch_once(wt);
        if (wt->failures > failures) nanosleep(&pause, NULL);
    }
    return NULL;
}

static void watcher_init(watcher *wt, const config *cfg)
{
    wt->cfg = cfg;
    wt->w.cfg = cfg;
    wt->w.curl = new_handle(cfg, &wt->w.body);
    wt->w.headers = header_list(cfg, NULL);
    wt->stream = new_handle(cfg, &wt->line);
    curl_easy_setopt(wt->stream, CURLOPT_TIMEOUT, 0L);
    curl_easy_setopt(wt->stream, CURLOPT_WRITEFUNCTION, on_watch_bytes);
    curl_easy_setopt(wt->stream, CURLOPT_WRITEDATA, wt);
    curl_easy_setopt(wt->stream, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(wt->stream, CURLOPT_XFERINFOFUNCTION, on_watch_tick);
    curl_easy_setopt(wt->stream, CURLOPT_XFERINFODATA, wt);
    wt->pods = calloc((size_t)cfg->count, sizeof *wt->pods);
    if (!wt->pods) fail("%s", "out of memory");
    atomic_init(&wt->stop, false);
    wt->started = now_ns(CLOCK_MONOTONIC);
    wt->deadline = wt->started + cfg->timeout_s * 1000000000LL;
}

static void watcher_free(watcher *wt)
{
    curl_easy_cleanup(wt->w.curl);
    curl_easy_cleanup(wt->stream);
    curl_slist_free_all(wt->w.headers);
    free(wt->w.body.data);
    free(wt->line.data);
    free(wt->pods);
}

/* The server's own count: every pod of NS Running (field selector), bound,
 * with an address and Ready; FIRST + COUNT of them. */
static void check_running(watcher *wt, double *list_ms)
{
    const config *cfg = wt->cfg;
    char url[512];
    snprintf(url, sizeof url, "%s/api/v1/namespaces/%s/pods?fieldSelector=status.phase%%3DRunning",
             cfg->url, cfg->ns);
    long long t0 = now_ns(CLOCK_MONOTONIC);
    long status = perform(&wt->w, "GET", url, NULL, wt->w.headers, false);
    *list_ms = (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e6;
    const char *what = "LIST pods fieldSelector=status.phase=Running";
    if (!expect_status(&wt->w, what, status, 200)) return;
    json_t *doc = parse_body(&wt->w, what);
    json_t *items = doc ? list_items(&wt->w, doc, what) : NULL;
    long want = cfg->first + cfg->count;
    if (items && (long)json_array_size(items) != want)
        note_error(&wt->w, "%s: %zu pods (want %ld)", what, json_array_size(items), want);
    size_t i;
    json_t *pod;
    json_array_foreach(items, i, pod)
    {
        if (phase_is(pod, "Running") && has_text(path_get(pod, "spec", "nodeName")) &&
            has_text(path_get(pod, "status", "podIP")) && ready_condition(pod))
            continue;
        note_error(&wt->w, "%s: pod %.60s is not Running, bound, addressed and Ready", what,
                   meta_string(pod, "name"));
        break;
    }
    json_decref(doc);
}

/* Milliseconds from a to b over the pods that have both, nearest rank p. */
static double pod_ms(const watcher *wt, size_t from, size_t to, double p)
{
    long long *d = xrealloc(NULL, (size_t)wt->cfg->count * sizeof *d);
    size_t n = 0;
    for (long k = 0; k < wt->cfg->count; k++) {
        const long long *t = &wt->pods[k].added;
        if (t[from] && t[to]) d[n++] = t[to] - t[from];
    }
    qsort(d, n, sizeof *d, compare_ll);
    double v = rank_ms(d, n, p);
    free(d);
    return v;
}

static double rate(long n, long long from, long long to)
{
    return to > from ? (double)n / ((double)(to - from) / 1e9) : 0;
}

static int run_pods_running(config *cfg)
{
    if (!read_token(cfg->data, cfg->token, sizeof cfg->token))
        fail("cannot read %s/token", cfg->data);
    watcher wt = {0};
    watcher_init(&wt, cfg);
    if (relist(&wt) != 0) {
        fprintf(stderr, "%s: %s\n", prog, wt.w.first_error);
        watcher_free(&wt);
        return 1;
    }
    pthread_t thread;
    if (pthread_create(&thread, NULL, run_watcher, &wt) != 0) fail("%s", "cannot start a thread");
    int rc = run_load(cfg); /* prints the creates' line */
    if (rc != 0) atomic_store(&wt.stop, true);
    pthread_join(thread, NULL);
    long long t0 = load_started_ns;
    bool finished = wt.running == cfg->count;
    double list_ms = 0;
    if (finished) check_running(&wt, &list_ms);
    printf("finished=%d timeout_s=%ld added=%ld scheduled=%ld running=%ld "
           "scheduled_seconds=%.3f scheduled_rate=%.1f running_seconds=%.3f running_rate=%.1f "
           "bind_p50_ms=%.1f bind_p99_ms=%.1f e2e_p50_ms=%.1f e2e_p99_ms=%.1f e2e_max_ms=%.1f "
           "watch_events=%ld watches=%ld relists=%ld check_list_ms=%.1f check_errors=%ld\n",
           finished, cfg->timeout_s, wt.added, wt.scheduled, wt.running,
           wt.last_scheduled > t0 ? (double)(wt.last_scheduled - t0) / 1e9 : 0,
           rate(wt.scheduled, t0, wt.last_scheduled),
           wt.last_running > t0 ? (double)(wt.last_running - t0) / 1e9 : 0,
           rate(wt.running, t0, wt.last_running), pod_ms(&wt, 0, 1, 0.5), pod_ms(&wt, 0, 1, 0.99),
           pod_ms(&wt, 0, 2, 0.5), pod_ms(&wt, 0, 2, 0.99), pod_ms(&wt, 0, 2, 1.0), wt.events,
           wt.watches, wt.relists, list_ms, wt.w.errors);
    if (wt.w.first_error[0])
        fprintf(stderr, "%s: pods-running: %ld wrong; first: %s\n", prog, wt.w.errors,
                wt.w.first_error);
    if (wt.w.errors) rc = 1;
    watcher_free(&wt);
    return rc;
}

/* ---- daemonset ---- */

typedef struct ds_status {
    long long generation, observed, desired, current, ready, available, updated;
} ds_status;

static long long int_at(const json_t *obj, const char *a, const char *b)
{
    return json_integer_value(path_get(obj, a, b));
}

/* GET the DaemonSet; false (noted) on a wrong answer. */
static bool ds_get(worker *w, ds_status *st)
{
    const config *cfg = w->cfg;
    char url[512];
    snprintf(url, sizeof url, "%s/apis/apps/v1/namespaces/%s/daemonsets/" DS_NAME, cfg->url,
             cfg->ns);
    long status = perform(w, "GET", url, NULL, w->headers, true);
    if (!expect_status(w, "GET daemonset", status, 200)) return false;
    json_t *doc = parse_body(w, "GET daemonset");
    if (!doc) return false;
    *st = (ds_status){int_at(doc, "metadata", "generation"),
                      int_at(doc, "status", "observedGeneration"),
                      int_at(doc, "status", "desiredNumberScheduled"),
                      int_at(doc, "status", "currentNumberScheduled"),
                      int_at(doc, "status", "numberReady"),
                      int_at(doc, "status", "numberAvailable"),
                      int_at(doc, "status", "updatedNumberScheduled")};
    json_decref(doc);
    return true;
}

static int compare_cstrings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The DaemonSet's pods: N, one a node, each Running and Ready with IMAGE.
 * NULL when so, else why not (in WHY). */
static const char *ds_pods_wrong(worker *w, const char *image, char *why, size_t size)
{
    const config *cfg = w->cfg;
    char url[512];
    snprintf(url, sizeof url, "%s/api/v1/namespaces/%s/pods?labelSelector=app%%3D" DS_NAME,
             cfg->url, cfg->ns);
    long status = perform(w, "GET", url, NULL, w->headers, false);
    if (status != 200) {
        snprintf(why, size, "LIST of its pods: HTTP %ld", status);
        return why;
    }
    json_t *doc = json_loadb(w->body.data, w->body.len, 0, NULL);
    json_t *items = json_object_get(doc, "items");
    size_t n = json_array_size(items), i;
    const char **nodes = xrealloc(NULL, (n ? n : 1) * sizeof *nodes);
    json_t *pod;
    why[0] = '\0';
    if ((long)n != cfg->nodes) snprintf(why, size, "%zu pods (want %ld)", n, cfg->nodes);
    json_array_foreach(items, i, pod)
    {
        const json_t *c = json_array_get(path_get(pod, "spec", "containers"), 0);
        const char *img = json_string_value(json_object_get(c, "image"));
        nodes[i] = json_string_value(path_get(pod, "spec", "nodeName"));
        if (why[0]) break;
        if (!img || strcmp(img, image) != 0 || !phase_is(pod, "Running") || !ready_condition(pod) ||
            !nodes[i] || meta_string(pod, "deletionTimestamp"))
            snprintf(why, size, "pod %.60s: image %.60s, not Running/Ready, unbound or deleted",
                     meta_string(pod, "name"), img ? img : "none");
    }
    if (!why[0]) {
        qsort(nodes, n, sizeof *nodes, compare_cstrings);
        for (i = 1; i < n && !why[0]; i++)
            if (strcmp(nodes[i - 1], nodes[i]) == 0)
                snprintf(why, size, "two pods on node %.60s", nodes[i]);
    }
    free(nodes);
    json_decref(doc);
    return why[0] ? why : NULL;
}

/* What a wait for the rollout saw. */
typedef struct ds_wait {
    double seconds;            /* until done; -1 when the timeout came first */
    double claimed_ms;         /* the status said done, the pods did not; -1 never */
    double spec_seen_ms;       /* until observedGeneration reached the generation */
    long long max_unavailable; /* desired - available, the most seen */
    long steps;                /* distinct updatedNumberScheduled values seen */
    long polls;
    ds_status last;
} ds_wait;

/* Polls until the DaemonSet's status shows GENERATION rolled out on all N
 * nodes (what `kubectl rollout status` waits for, and ready == current ==
 * N) and its pods agree: N, one a node, Running, Ready, with IMAGE. A status
 * that says done and then takes it back, or says done while the pods do not
 * for more than 5 s, is a wrong answer; the wait goes on until both agree. */
static void ds_wait_rollout(worker *w, long long generation, const char *image, long long t0,
                            ds_wait *out)
{
    const config *cfg = w->cfg;
    long long n = cfg->nodes, deadline = t0 + cfg->timeout_s * 1000000000LL, last_updated = -1;
    long long claim = 0; /* when the status began to say done, the pods not yet */
    bool noted = false;
    struct timespec pause = {0, DS_POLL_NS}, pods_pause = {0, 250000000};
    *out = (ds_wait){.seconds = -1, .claimed_ms = -1, .spec_seen_ms = -1};
    while (now_ns(CLOCK_MONOTONIC) < deadline) {
        ds_status st;
        if (!ds_get(w, &st)) {
            if (w->transport_in_a_row >= MAX_TRANSPORT_ERRORS_IN_A_ROW) return;
            nanosleep(&pause, NULL);
            continue;
        }
        long long t = now_ns(CLOCK_MONOTONIC);
        out->polls++;
        out->last = st;
        bool observed = st.observed >= generation;
        if (observed && out->spec_seen_ms < 0) out->spec_seen_ms = (double)(t - t0) / 1e6;
        if (observed && st.desired > 0 && st.desired - st.available > out->max_unavailable)
            out->max_unavailable = st.desired - st.available;
        if (observed && st.updated != last_updated) {
            out->steps++;
            last_updated = st.updated;
        }
        bool done = observed && st.desired == n && st.current == n && st.updated == n &&
                    st.ready == n && st.available == n;
        if (!done) {
            if (claim && !noted)
                note_error(w,
                           "the status said generation %lld rolled out on all %lld nodes at "
                           "%.0f ms while the pods had not, then took it back (updated %lld, "
                           "available %lld)",
                           generation, n, (double)(claim - t0) / 1e6, st.updated, st.available);
            noted |= claim != 0;
            claim = 0;
            nanosleep(&pause, NULL);
            continue;
        }
        char why[300];
        const char *wrong = ds_pods_wrong(w, image, why, sizeof why);
        if (!wrong) {
            out->seconds = (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
            return;
        }
        if (!claim) claim = t;
        if (out->claimed_ms < 0) out->claimed_ms = (double)(t - t0) / 1e6;
        if (t - claim > 5000000000LL && !noted) {
            note_error(w,
                       "the status says generation %lld rolled out on all %lld nodes since "
                       "%.0f ms, but: %s",
                       generation, n, (double)(claim - t0) / 1e6, wrong);
            noted = true;
        }
        nanosleep(&pods_pause, NULL);
    }
}

/* maxUnavailable of N: an integer, or a percentage rounded up. */
static long long scaled(const char *value, long long n)
{
    char *end;
    long long v = strtoll(value, &end, 10);
    return *end == '%' ? (v * n + 99) / 100 : v;
}

static json_t *ds_object(const config *cfg)
{
    json_t *mu = strchr(cfg->max_unavailable, '%')
                     ? json_string(cfg->max_unavailable)
                     : json_integer(strtoll(cfg->max_unavailable, NULL, 10));
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:s}}, s:{s:s, s:{s:o}}, "
                     "s:{s:{s:{s:s}}, s:{s:[{s:s, s:s, s:{s:{s:s, s:s}}}]}}}}",
                     "apiVersion", "apps/v1", "kind", "DaemonSet", "metadata", "name", DS_NAME,
                     "namespace", cfg->ns, "spec", "selector", "matchLabels", "app", DS_NAME,
                     "updateStrategy", "type", "RollingUpdate", "rollingUpdate", "maxUnavailable",
                     mu, "template", "metadata", "labels", "app", DS_NAME, "spec", "containers",
                     "name", "c", "image", DS_IMAGE_1, "resources", "requests", "cpu", "100m",
                     "memory", "64Mi");
}

/* POST or PATCH the DaemonSet; its generation, or -1 (noted). */
static long long ds_write(worker *w, const char *method, const char *url, const json_t *body,
                          struct curl_slist *headers, long want)
{
    char *text = json_dumps(body, JSON_COMPACT);
    if (!text) fail("%s", "out of memory");
    char what[80];
    snprintf(what, sizeof what, "%s daemonset", method);
    long status = perform(w, method, url, text, headers, false);
    free(text);
    if (!expect_status(w, what, status, want)) return -1;
    json_t *doc = parse_body(w, what);
    long long g = int_at(doc, "metadata", "generation");
    json_decref(doc);
    if (g < 1) note_error(w, "%s: no metadata.generation", what);
    return g < 1 ? -1 : g;
}

static void print_wait(const char *prefix, const ds_wait *r, long nodes)
{
    printf(" %s_seconds=%.3f %s_rate=%.1f %s_claimed_ms=%.1f %s_spec_seen_ms=%.1f"
           " %s_max_unavailable=%lld %s_steps=%ld %s_polls=%ld %s_desired=%lld %s_updated=%lld"
           " %s_available=%lld",
           prefix, r->seconds, prefix, r->seconds > 0 ? (double)nodes / r->seconds : 0, prefix,
           r->claimed_ms, prefix, r->spec_seen_ms, prefix, r->max_unavailable, prefix, r->steps,
           prefix, r->polls, prefix, r->last.desired, prefix, r->last.updated, prefix,
           r->last.available);
}

static int run_daemonset(config *cfg)
{
    if (!read_token(cfg->data, cfg->token, sizeof cfg->token))
        fail("cannot read %s/token", cfg->data);
    worker w = {.cfg = cfg};
    w.curl = new_handle(cfg, &w.body);
    w.headers = header_list(cfg, NULL);
    w.json_headers = header_list(cfg, "Content-Type: application/json");
    w.patch_headers = header_list(cfg, "Content-Type: application/strategic-merge-patch+json");
    char url[512];
    snprintf(url, sizeof url, "%s/apis/apps/v1/namespaces/%s/daemonsets", cfg->url, cfg->ns);
    ds_wait rollout = {.seconds = -1}, update = {.seconds = -1};
    json_t *ds = ds_object(cfg);
    long long t0 = now_ns(CLOCK_MONOTONIC);
    long long g = ds_write(&w, "POST", url, ds, w.json_headers, 201);
    json_decref(ds);
    if (g > 0) ds_wait_rollout(&w, g, DS_IMAGE_1, t0, &rollout);
    if (rollout.seconds > 0) {
        snprintf(url + strlen(url), sizeof url - strlen(url), "/" DS_NAME);
        json_t *patch = json_pack("{s:{s:{s:{s:[{s:s, s:s}]}}}}", "spec", "template", "spec",
                                  "containers", "name", "c", "image", DS_IMAGE_2);
        t0 = now_ns(CLOCK_MONOTONIC);
        g = ds_write(&w, "PATCH", url, patch, w.patch_headers, 200);
        json_decref(patch);
        if (g > 0) ds_wait_rollout(&w, g, DS_IMAGE_2, t0, &update);
    }
    printf("nodes=%ld max_unavailable=%s max_unavailable_allowed=%lld", cfg->nodes,
           cfg->max_unavailable, scaled(cfg->max_unavailable, cfg->nodes));
    print_wait("rollout", &rollout, cfg->nodes);
    print_wait("update", &update, cfg->nodes);
    printf(" timeout_s=%ld check_errors=%ld\n", cfg->timeout_s, w.errors);
    if (w.first_error[0])
        fprintf(stderr, "%s: daemonset: %ld wrong; first: %s\n", prog, w.errors, w.first_error);
    curl_easy_cleanup(w.curl);
    curl_slist_free_all(w.headers);
    curl_slist_free_all(w.json_headers);
    curl_slist_free_all(w.patch_headers);
    free(w.body.data);
    free(w.lat);
    return w.errors ? 1 : 0;
}

/* ---- nodes-ready ---- */

/* Whether the node still has the node lifecycle controller's not-ready
 * taint: until it goes (about a second after Ready), no pod without a
 * toleration of it can be scheduled there. */
static bool not_ready_tainted(const json_t *node)
{
    size_t i;
    json_t *taint;
    json_array_foreach(path_get(node, "spec", "taints"), i, taint)
    {
        const char *key = json_string_value(json_object_get(taint, "key"));
        if (key && strcmp(key, "node.kubernetes.io/not-ready") == 0) return true;
    }
    return false;
}

static long ready_nodes(worker *w, long *total)
{
    char url[512];
    snprintf(url, sizeof url, "%s/api/v1/nodes", w->cfg->url);
    long status = perform(w, "GET", url, NULL, w->headers, false);
    if (!expect_status(w, "LIST nodes", status, 200)) return -1;
    json_t *doc = parse_body(w, "LIST nodes");
    json_t *items = doc ? list_items(w, doc, "LIST nodes") : NULL;
    long ready = 0;
    size_t i;
    json_t *node;
    json_array_foreach(items, i, node) ready += ready_condition(node) && !not_ready_tainted(node);
    *total = (long)json_array_size(items);
    json_decref(doc);
    return items ? ready : -1;
}

static int run_nodes_ready(config *cfg)
{
    if (!read_token(cfg->data, cfg->token, sizeof cfg->token))
        fail("cannot read %s/token", cfg->data);
    worker w = {.cfg = cfg};
    w.curl = new_handle(cfg, &w.body);
    w.headers = header_list(cfg, NULL);
    long long start = (long long)(cfg->since * 1e9);
    long long deadline = now_ns(CLOCK_MONOTONIC) + cfg->timeout_s * 1000000000LL;
    struct timespec pause = {0, 100000000};
    long ready = 0, total = 0, polls = 0;
    double seconds = -1;
    while (now_ns(CLOCK_MONOTONIC) < deadline) {
        polls++;
        long r = ready_nodes(&w, &total);
        if (r < 0 && w.transport_in_a_row >= MAX_TRANSPORT_ERRORS_IN_A_ROW) break;
        if (r >= 0) ready = r;
        if (ready >= cfg->count) {
            seconds = (double)(now_ns(CLOCK_REALTIME) - start) / 1e9;
            break;
        }
        nanosleep(&pause, NULL);
    }
    printf("nodes=%ld listed=%ld ready=%ld ready_seconds=%.3f polls=%ld errors=%ld\n", cfg->count,
           total, ready, seconds, polls, w.errors);
    if (w.first_error[0])
        fprintf(stderr, "%s: nodes-ready: %ld wrong; first: %s\n", prog, w.errors, w.first_error);
    curl_easy_cleanup(w.curl);
    curl_slist_free_all(w.headers);
    free(w.body.data);
    return w.errors ? 1 : 0;
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

static double seconds_since_epoch(const char *text)
{
    char *end;
    double v = strtod(text, &end);
    if (*end || v <= 0) fail("SINCE takes seconds since the epoch, got '%s'", text);
    return v;
}

static void usage(void)
{
    fputs("usage: apiload port\n"
          "       apiload ready URL DATA SINCE [TIMEOUT_S]\n"
          "       apiload OP URL DATA [--threads T] [--count N] [--ns NS] [--objects M]\n"
          "                           [--nodes K] [--limit L] [--type merge|strategic]\n"
          "                           [--first F] [--timeout S] [--max-unavailable U]\n"
          "                           [--since SINCE]\n"
          "  OP: namespace create-pods create-nodes get list page patch\n"
          "      pods-running daemonset nodes-ready\n",
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
        else if (strcmp(opt, "--first") == 0)
            cfg->first = number(val, opt);
        else if (strcmp(opt, "--timeout") == 0)
            cfg->timeout_s = number(val, opt);
        else if (strcmp(opt, "--max-unavailable") == 0)
            cfg->max_unavailable = val;
        else if (strcmp(opt, "--since") == 0)
            cfg->since = seconds_since_epoch(val);
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
    if (strcmp(cfg->op, "daemonset") == 0 && cfg->nodes < 1)
        fail("%s", "daemonset needs --nodes >= 1");
    if ((strcmp(cfg->op, "pods-running") == 0 || strcmp(cfg->op, "nodes-ready") == 0) &&
        cfg->count < 1)
        fail("%s", "--count must be >= 1 for this operation");
    if (strcmp(cfg->op, "nodes-ready") == 0 && cfg->since <= 0)
        fail("%s", "nodes-ready needs --since");
    if (cfg->timeout_s < 1) fail("%s", "--timeout takes a number >= 1");
    char *end;
    strtoll(cfg->max_unavailable, &end, 10);
    if (end == cfg->max_unavailable || (*end && strcmp(end, "%") != 0))
        fail("--max-unavailable takes N or N%%, got '%s'", cfg->max_unavailable);
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
                  .max_unavailable = "10%",
                  .threads = 8,
                  .count = 1000,
                  .timeout_s = 120};
    snprintf(cfg.ca, sizeof cfg.ca, "%s/tls.crt", cfg.data);
    static const char *ops[] = {"ready",        "namespace", "create-pods", "create-nodes",
                                "get",          "list",      "page",        "patch",
                                "pods-running", "daemonset", "nodes-ready"};
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
        if (strcmp(cfg.op, "pods-running") == 0)
            rc = run_pods_running(&cfg);
        else if (strcmp(cfg.op, "daemonset") == 0)
            rc = run_daemonset(&cfg);
        else if (strcmp(cfg.op, "nodes-ready") == 0)
            rc = run_nodes_ready(&cfg);
        else
            rc = run_load(&cfg);
    }
    curl_global_cleanup();
    return rc;
}
