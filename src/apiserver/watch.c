/* Watch streams: `{"type":"ADDED","object":{...}}\n` per change, chunked,
 * for as long as the client or the timeout allows (k8s-semantics.md 2.7).
 *
 * A watch reads the store's event history from a position; it never holds
 * the store lock while the server writes to the network. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_internal.h"
#include "apiserver/table.h"
#include "apiserver/views.h"
#include "kube/selector.h"
#include "util/deadline.h"

/* Without timeoutSeconds kube-apiserver ends a watch after
 * --min-request-timeout (1800 s) times a random factor in [1, 2). */
#define DEFAULT_WATCH_SECONDS 1800
/* With allowWatchBookmarks, a watch hears the current resourceVersion
 * about this often (kube-apiserver's cache: bookmarkFrequency). */
#define BOOKMARK_SECONDS 60

struct as_watch {
    as_api *api;
    const as_resource *resource;
    char ns[254];
    kube_label_selector *labels;
    kube_field_selector *fields;
    bool table, table_header_sent;
    as_table_include include; /* of a table's rows */
    bool bookmark_due;        /* allowWatchBookmarks, and one more is to come */
    long long pos;            /* next event in the store's history */
    uint64_t rv;              /* the last resourceVersion the client has seen */
    uint64_t from;            /* the resourceVersion the watch started from */
    struct timespec deadline, next_bookmark;
    char *out; /* bytes waiting to go out */
    size_t out_len, out_off;
    as_blob **initial; /* the synthetic ADDED events of resourceVersion=0 */
    size_t initial_count, initial_next;
    bool ended;
    atomic_bool cancelled;           /* set by another thread: as_watch_cancel */
    as_watch *live_prev, *live_next; /* under live_lock, once streaming */
    bool live;
};

/* Every watch being streamed: /metrics counts them
 * (apiserver_longrunning_requests), so a test sees one freed. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static as_watch *live_head;

static void live_add(as_watch *w)
{
    pthread_mutex_lock(&live_lock);
    w->live_next = live_head;
    if (live_head) live_head->live_prev = w;
    live_head = w;
    w->live = true;
    pthread_mutex_unlock(&live_lock);
}

static void live_remove(as_watch *w)
{
    if (!w->live) return;
    pthread_mutex_lock(&live_lock);
    if (w->live_prev)
        w->live_prev->live_next = w->live_next;
    else
        live_head = w->live_next;
    if (w->live_next) w->live_next->live_prev = w->live_prev;
    pthread_mutex_unlock(&live_lock);
}

static const char *const type_names[] = {"ADDED", "MODIFIED", "DELETED"};

static void set_out(as_watch *w, char *text, size_t len)
{
    free(w->out);
    w->out = text;
    w->out_len = len;
    w->out_off = 0;
}

/* One event line; the object is sent as stored, or as a one-row Table. */
static void emit_object(as_watch *w, const char *type, const as_blob *obj);

/* An object of a view (views.h) is sent in the view's form. */
static void emit(as_watch *w, const char *type, const as_blob *obj)
{
    if (!as_is_view(w->resource)) {
        emit_object(w, type, obj);
        return;
    }
    as_blob *v = as_view_blob(w->resource, as_blob_ref((as_blob *)obj));
    if (!v) {
        w->ended = true;
        return;
    }
    emit_object(w, type, v);
    as_blob_unref(v);
}

static void emit_object(as_watch *w, const char *type, const as_blob *obj)
{
    char *text = NULL;
    size_t len = 0;
    if (w->table) {
        json_t *parsed = json_loadb(obj->text, obj->len, 0, NULL);
        json_t *t = as_table(w->resource->group, w->resource->kind, &parsed, parsed ? 1 : 0,
                             !w->table_header_sent, NULL, time(NULL));
        w->table_header_sent = true;
        /* handlers/watch.go: each event's object goes through the same
         * transform as a list's (response.go asTable) */
        as_table_row_include(json_array_get(json_object_get(t, "rows"), 0), parsed, w->include);
        json_t *ev = json_pack("{s:s, s:o}", "type", type, "object", t ? t : json_object());
        char *body = json_dumps(ev, JSON_COMPACT);
        json_decref(ev);
        json_decref(parsed);
        if (body) {
            len = strlen(body);
            text = realloc(body, len + 2);
            if (!text) text = body, len--;
            text[len++] = '\n';
        }
    } else {
        size_t head = strlen(type) + 22;
        text = malloc(head + obj->len + 3);
        if (text) {
            len = (size_t)sprintf(text, "{\"type\":\"%s\",\"object\":", type);
            memcpy(text + len, obj->text, obj->len);
            len += obj->len;
            memcpy(text + len, "}\n", 2);
            len += 2;
        }
    }
    if (!text) {
        w->ended = true;
        return;
    }
    set_out(w, text, len);
}

static void emit_expired(as_watch *w, uint64_t asked, uint64_t oldest)
{
    char msg[128], *text = malloc(512);
    if (!text) {
        w->ended = true;
        return;
    }
    snprintf(msg, sizeof msg, "too old resource version: %llu (%llu)", (unsigned long long)asked,
             (unsigned long long)oldest);
    int n = snprintf(text, 512,
                     "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                     "\"metadata\":{},\"status\":\"Failure\",\"message\":\"%s\",\"reason\":"
                     "\"Expired\",\"code\":410}}\n",
                     msg);
    set_out(w, text, (size_t)n);
    w->ended = true; /* after this line */
}

static void emit_bookmark(as_watch *w)
{
    char av[96], *text = malloc(512);
    if (!text) return;
    as_api_version(w->resource, av, sizeof av);
    int n = snprintf(text, 512,
                     "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s\","
                     "\"metadata\":{\"resourceVersion\":\"%llu\",\"creationTimestamp\":null}}}\n",
                     w->resource->kind, av, (unsigned long long)w->rv);
    set_out(w, text, (size_t)n);
}

static bool in_scope(const as_watch *w, const char *ns, const as_blob *index)
{
    if (!index) return false;
    if (w->ns[0] && strcmp(ns, w->ns) != 0) return false;
    return as_api_matches(index, w->labels, w->fields);
}

/* What the client sees of a stored change through its selectors: an object
 * that starts matching is ADDED, one that stops matching DELETED. */
static const char *visible_type(const as_watch *w, const as_event *e)
{
    bool now = in_scope(w, e->ns, e->index);
    if (e->type != AS_MODIFIED) return now ? type_names[e->type] : NULL;
    bool before = in_scope(w, e->ns, e->old_index);
    if (now && before) return "MODIFIED";
    if (now) return "ADDED";
    if (before) return "DELETED";
    return NULL;
}

static struct timespec after_seconds(long long s)
{
    /* timeoutSeconds is the client's int64: a year is "never" for a watch,
     * and keeps the deadline's arithmetic from overflowing. */
    const long long year = 365LL * 24 * 3600;
    return gp_deadline_after_ms((s > year ? year : s) * 1000);
}

/* When the next bookmark is due, as kube-apiserver's cache watcher has it
 * (nextBookmarkTime in apiserver/pkg/storage/cacher/cache_watcher.go):
 * about a minute on, or 2 s before the watch's deadline when that comes
 * sooner (a client that starts again then starts as late as it can);
 * none once that is past. */
static void schedule_bookmark(as_watch *w)
{
    struct timespec next = after_seconds(BOOKMARK_SECONDS), before_end = w->deadline;
    before_end.tv_sec -= 2;
    if (gp_time_before(&before_end, &next)) next = before_end;
    w->next_bookmark = next;
    if (gp_deadline_past(&next)) w->bookmark_due = false;
}

/* Fills w->out with the next event, waiting for one; sets w->ended when the
 * stream is over. */
static void next_event(as_watch *w)
{
    if (w->initial_next < w->initial_count) {
        as_blob *b = w->initial[w->initial_next++];
        emit(w, "ADDED", b);
        as_blob_unref(b);
        return;
    }
    as_store *s = w->api->store;
    as_store_lock(s);
    for (;;) {
        if (atomic_load(&w->cancelled)) break;
        if (as_store_event_gone(s, w->pos)) {
            uint64_t oldest = as_store_oldest_rv(s);
            as_store_unlock(s);
            emit_expired(w, w->rv, oldest);
            return;
        }
        const as_event *e = as_store_event_at(s, w->pos);
        if (e) {
            w->pos++;
            /* committed after the watch began but not newer than what it
             * began from: a LIST can include writes a moment before their
             * commit publishes them (store.h) */
            if (e->rv <= w->rv) continue;
            w->rv = e->rv;
            if (e->resource != as_storage(w->resource)) continue;
            const char *type = visible_type(w, e);
            if (!type) continue;
            as_blob *b = as_blob_ref(e->json);
            as_store_unlock(s);
            emit(w, type, b);
            as_blob_unref(b);
            return;
        }
        if (gp_deadline_past(&w->deadline)) break;
        if (w->bookmark_due && gp_deadline_past(&w->next_bookmark)) {
            /* every event up to here has been seen: none is on its way
             * to the disk with a smaller rv */
            uint64_t published = as_store_published_rv(s);
            schedule_bookmark(w);
            /* only a bookmark past the version the watch started from (the
             * cache watcher's process() sends none at or below it): none
             * while a watch from a version in the future waits for the
             * store to reach it */
            if (published <= w->from) continue;
            if (published > w->rv) w->rv = published;
            as_store_unlock(s);
            emit_bookmark(w);
            return;
        }
        const struct timespec *until = &w->deadline;
        if (w->bookmark_due && gp_time_before(&w->next_bookmark, until)) until = &w->next_bookmark;
        if (!as_store_wait(s, until)) break;
    }
    as_store_unlock(s);
    w->ended = true;
}

size_t as_watch_read(as_watch *w, char *buf, size_t size)
{
    if (atomic_load(&w->cancelled)) return 0; /* nobody reads it any more */
    while (w->out_off == w->out_len) {
        if (w->ended) return 0;
        next_event(w);
        if (w->ended && w->out_off == w->out_len) return 0;
    }
    size_t n = w->out_len - w->out_off;
    if (n > size) n = size;
    memcpy(buf, w->out + w->out_off, n);
    w->out_off += n;
    return n;
}

void as_watch_cancel(as_watch *w)
{
    as_store *s = w->api->store;
    as_store_lock(s); /* so that a reader about to wait sees it first */
    atomic_store(&w->cancelled, true);
    as_store_wake_watchers(s);
    as_store_unlock(s);
}

void as_watch_free(as_watch *w)
{
    if (!w) return;
    live_remove(w);
    kube_label_selector_free(w->labels);
    kube_field_selector_free(w->fields);
    for (size_t i = w->initial_next; i < w->initial_count; i++)
        as_blob_unref(w->initial[i]);
    free(w->initial);
    free(w->out);
    free(w);
}

/* resourceVersion absent or "0": the current matching objects first, as
 * synthetic ADDED events, then every change after them. */
static void snapshot(as_watch *w, as_store *s)
{
    const as_object **objs;
    size_t n = as_store_list(s, as_storage(w->resource), w->ns[0] ? w->ns : NULL, &objs);
    w->initial = calloc(n ? n : 1, sizeof *w->initial);
    for (size_t i = 0; w->initial && i < n; i++)
        /* listed by namespace already: only the selectors are left */
        if (as_api_matches(objs[i]->index, w->labels, w->fields))
            w->initial[w->initial_count++] = as_blob_ref(objs[i]->json);
    free(objs);
}

void as_api_watch(as_api *api, const as_request *req, const as_path *p, as_response *resp)
{
    if (p->name[0]) {
        as_status(resp, 405, "MethodNotAllowed",
                  "watch a single object with a fieldSelector on metadata.name");
        return;
    }
    as_watch *w = calloc(1, sizeof *w);
    if (!w) {
        as_status(resp, 500, "InternalError", "out of memory");
        return;
    }
    if (as_api_selectors(req, p->resource, &w->labels, &w->fields, resp) != 0) {
        free(w);
        return;
    }
    w->api = api;
    w->resource = p->resource;
    snprintf(w->ns, sizeof w->ns, "%s", p->ns);
    w->table = as_wants_table(req);
    if (w->table && as_table_include_read(req, &w->include, resp) != 0) {
        kube_label_selector_free(w->labels);
        kube_field_selector_free(w->fields);
        free(w);
        return;
    }
    const char *bm = as_query(req, "allowWatchBookmarks");
    w->bookmark_due = bm && strcmp(bm, "true") == 0;
    const char *timeout = as_query(req, "timeoutSeconds");
    long long seconds = timeout ? strtoll(timeout, NULL, 10) : 0;
    w->deadline = after_seconds(seconds > 0 ? seconds : DEFAULT_WATCH_SECONDS);
    if (w->bookmark_due) schedule_bookmark(w);
    const char *rv_text = as_query(req, "resourceVersion");
    as_store *s = api->store;
    as_store_lock(s);
    if (!rv_text || !*rv_text || strcmp(rv_text, "0") == 0) {
        snapshot(w, s);
        w->rv = as_store_rv(s);
        w->pos = as_store_events_since(s, w->rv);
    } else {
        char *end;
        unsigned long long rv = strtoull(rv_text, &end, 10);
        if (*end) {
            as_store_unlock(s);
            as_watch_free(w);
            as_error_bad_request(resp, "resourceVersion: Invalid value: not a number");
            return;
        }
        /* A version the store has not reached is served as any other:
         * the events up to it are skipped, and the watch waits. So does
         * kube-apiserver 1.32's watch cache (getAllEventsSinceLocked checks
         * for too old only); only a watch with sendInitialEvents waits for
         * the version, 3 s, then ends in "Too large resource version". */
        w->rv = rv;
        w->pos = as_store_events_since(s, rv);
        if (w->pos < 0) emit_expired(w, rv, as_store_oldest_rv(s));
    }
    w->from = w->rv;
    as_store_unlock(s);
    resp->status = 200;
    resp->content_type = "application/json";
    resp->watch = w;
    live_add(w);
}

/* The watches being streamed, per resource and scope, as kube-apiserver's
 * gauge (apiserver/pkg/endpoints/metrics: apiserver_longrunning_requests,
 * labels sorted as Prometheus writes them). */
char *as_watch_metrics(void)
{
    size_t n;
    const as_resource *rs = as_resources(&n);
    size_t *counts = calloc(2 * n + 1, sizeof *counts); /* [resource][cluster, namespace] */
    char *text = NULL;
    size_t len = 0;
    FILE *out = counts ? open_memstream(&text, &len) : NULL;
    if (!out) {
        free(counts);
        return NULL;
    }
    pthread_mutex_lock(&live_lock);
    for (const as_watch *w = live_head; w; w = w->live_next)
        counts[2 * (size_t)(w->resource - rs) + (w->ns[0] != '\0')]++;
    pthread_mutex_unlock(&live_lock);
    fputs("# HELP apiserver_longrunning_requests [STABLE] Gauge of all active long-running "
          "apiserver requests broken out by verb, group, version, resource, scope and component. "
          "Not all requests are tracked this way.\n"
          "# TYPE apiserver_longrunning_requests gauge\n",
          out);
    static const char *const scopes[] = {"cluster", "namespace"};
    for (size_t i = 0; i < 2 * n; i++)
        if (counts[i])
            fprintf(out,
                    "apiserver_longrunning_requests{component=\"apiserver\",group=\"%s\","
                    "resource=\"%s\",scope=\"%s\",subresource=\"\",verb=\"WATCH\","
                    "version=\"%s\"} %zu\n",
                    rs[i / 2].group, rs[i / 2].resource, scopes[i % 2], rs[i / 2].version,
                    counts[i]);
    free(counts);
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
