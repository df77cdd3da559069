/* Watch streams: `{"type":"ADDED","object":{...}}\n` per change, chunked,
 * for as long as the client or the timeout allows (k8s-semantics.md 2.7).
 *
 * A watch reads the store's event history from a position; it never holds
 * the store lock while the server writes to the network. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_internal.h"
#include "apiserver/table.h"
#include "kube/selector.h"

/* Without timeoutSeconds kube-apiserver ends a watch after
 * --min-request-timeout (1800 s) times a random factor in [1, 2). */
#define DEFAULT_WATCH_SECONDS 1800
/* With allowWatchBookmarks, an idle watch hears the current
 * resourceVersion this often (the real cache sends one about every minute). */
#define BOOKMARK_SECONDS 60

struct as_watch {
    as_api *api;
    const as_resource *resource;
    char ns[254];
    kube_label_selector *labels;
    kube_field_selector *fields;
    bool table, table_header_sent, bookmarks;
    long long pos; /* next event in the store's history */
    uint64_t rv;   /* the last resourceVersion the client has seen */
    struct timespec deadline, next_bookmark;
    char *out; /* bytes waiting to go out */
    size_t out_len, out_off;
    as_blob **initial; /* the synthetic ADDED events of resourceVersion=0 */
    size_t initial_count, initial_next;
    bool ended;
};

static const char *const type_names[] = {"ADDED", "MODIFIED", "DELETED"};

static void set_out(as_watch *w, char *text, size_t len)
{
    free(w->out);
    w->out = text;
    w->out_len = len;
    w->out_off = 0;
}

/* One event line; the object is sent as stored, or as a one-row Table. */
static void emit(as_watch *w, const char *type, const as_blob *obj)
{
    char *text = NULL;
    size_t len = 0;
    if (w->table) {
        json_t *parsed = json_loadb(obj->text, obj->len, 0, NULL);
        json_t *t = as_table(w->resource->group, w->resource->kind, &parsed, parsed ? 1 : 0,
                             !w->table_header_sent, NULL, time(NULL));
        w->table_header_sent = true;
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

static bool past(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static struct timespec after_seconds(long long s)
{
    /* timeoutSeconds is the client's int64: a year is "never" for a watch,
     * and keeps the deadline's arithmetic from overflowing. */
    const long long year = 365LL * 24 * 3600;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += (time_t)(s > year ? year : s);
    return t;
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
            if (e->resource != w->resource) continue;
            const char *type = visible_type(w, e);
            if (!type) continue;
            as_blob *b = as_blob_ref(e->json);
            as_store_unlock(s);
            emit(w, type, b);
            as_blob_unref(b);
            return;
        }
        if (past(&w->deadline)) break;
        if (w->bookmarks && past(&w->next_bookmark)) {
            /* every event up to here has been seen: none is on its way
             * to the disk with a smaller rv */
            uint64_t published = as_store_published_rv(s);
            if (published > w->rv) w->rv = published;
            w->next_bookmark = after_seconds(BOOKMARK_SECONDS);
            as_store_unlock(s);
            emit_bookmark(w);
            return;
        }
        const struct timespec *until = &w->deadline;
        if (w->bookmarks && (w->next_bookmark.tv_sec < until->tv_sec)) until = &w->next_bookmark;
        if (!as_store_wait(s, until)) break;
    }
    as_store_unlock(s);
    w->ended = true;
}

size_t as_watch_read(as_watch *w, char *buf, size_t size)
{
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

void as_watch_free(as_watch *w)
{
    if (!w) return;
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
    size_t n = as_store_list(s, w->resource, w->ns[0] ? w->ns : NULL, &objs);
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
    const char *bm = as_query(req, "allowWatchBookmarks");
    w->bookmarks = bm && strcmp(bm, "true") == 0;
    const char *timeout = as_query(req, "timeoutSeconds");
    long long seconds = timeout ? strtoll(timeout, NULL, 10) : 0;
    w->deadline = after_seconds(seconds > 0 ? seconds : DEFAULT_WATCH_SECONDS);
    w->next_bookmark = after_seconds(BOOKMARK_SECONDS);
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
        w->rv = rv;
        w->pos = as_store_events_since(s, rv);
        if (w->pos < 0) emit_expired(w, rv, as_store_oldest_rv(s));
    }
    as_store_unlock(s);
    resp->status = 200;
    resp->content_type = "application/json";
    resp->watch = w;
}
