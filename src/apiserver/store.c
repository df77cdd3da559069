#include "apiserver/store_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/json_dump.h"

/* kube-apiserver's watch cache keeps about 100 events per resource type and
 * grows it with load; one shared window of this size covers the lab and a
 * bench of thousands of pods while keeping memory bounded. */
#define DEFAULT_HISTORY 16384

as_blob *as_blob_new(const char *text, size_t len)
{
    as_blob *b = malloc(sizeof *b + len + 1);
    if (!b) return NULL;
    atomic_init(&b->refs, 1);
    b->len = len;
    memcpy(b->text, text, len);
    b->text[len] = '\0';
    return b;
}

as_blob *as_blob_ref(as_blob *b)
{
    if (b) atomic_fetch_add(&b->refs, 1);
    return b;
}

void as_blob_unref(as_blob *b)
{
    if (b && atomic_fetch_sub(&b->refs, 1) == 1) free(b);
}

static size_t hash_key(const char *k)
{
    return (size_t)gp_hash_str(GP_HASH_SEED, k);
}

as_object **as_store_table_slot(object_table *t, const char *key)
{
    size_t mask = t->cap - 1, i = hash_key(key) & mask;
    while (t->slots[i] && strcmp(t->slots[i]->key, key) != 0)
        i = (i + 1) & mask;
    return &t->slots[i];
}

int as_store_table_grow(object_table *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    as_object **old = t->slots;
    size_t old_cap = t->cap;
    t->slots = calloc(cap, sizeof *t->slots);
    if (!t->slots) {
        t->slots = old;
        return -1;
    }
    t->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i]) *as_store_table_slot(t, old[i]->key) = old[i];
    free(old);
    return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void table_remove(object_table *t, as_object **slot)
{
    size_t mask = t->cap - 1, i = (size_t)(slot - t->slots);
    t->slots[i] = NULL;
    t->count--;
    t->sorted_valid = false;
    for (size_t j = (i + 1) & mask; t->slots[j]; j = (j + 1) & mask) {
        as_object *o = t->slots[j];
        t->slots[j] = NULL;
        *as_store_table_slot(t, o->key) = o;
    }
}

void as_store_object_free(as_object *o)
{
    if (!o) return;
    free(o->key);
    as_blob_unref(o->json);
    as_blob_unref(o->index);
    free(o);
}

static char *make_key(const char *ns, const char *name)
{
    size_t a = strlen(ns), b = strlen(name);
    char *k = malloc(a + b + 2);
    if (!k) return NULL;
    memcpy(k, ns, a);
    k[a] = '/';
    memcpy(k + a + 1, name, b + 1);
    return k;
}

object_table *as_store_table_of(as_store *s, const as_resource *r)
{
    return &s->tables[r - s->resources];
}

as_store *as_store_open(const char *path, size_t history, gp_error *err)
{
    as_store *s = calloc(1, sizeof *s);
    if (!s) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->checkpointing, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&s->changed, &attr);
    pthread_cond_init(&s->stop, &attr);
    pthread_condattr_destroy(&attr);
    pthread_cond_init(&s->committed, NULL);
    s->resources = as_resources(&s->resource_count);
    s->tables = calloc(s->resource_count, sizeof *s->tables);
    s->history_cap = history ? history : DEFAULT_HISTORY;
    s->history = calloc(s->history_cap, sizeof *s->history);
    if (!s->tables || !s->history) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        as_store_close(s);
        return NULL;
    }
    if (path && as_store_db_open(s, path, err) != 0) {
        as_store_close(s);
        return NULL;
    }
    s->oldest_rv = s->published_rv = s->durable_rv = s->rv;
    return s;
}

static void commit_pending(as_store *s);
static void pending_clear(pending_write *w);

static void event_clear(as_event *e)
{
    as_blob_unref(e->json);
    as_blob_unref(e->index);
    as_blob_unref(e->old_index);
    memset(e, 0, sizeof *e);
}

void as_store_close(as_store *s)
{
    if (!s) return;
    as_store_db_stop_checkpointer(s);
    if (s->db && s->pending_count > 0) { /* written without a sync: commit them now */
        pthread_mutex_lock(&s->lock);
        commit_pending(s);
        pthread_mutex_unlock(&s->lock);
    }
    for (size_t i = 0; i < s->pending_count; i++)
        pending_clear(&s->pending[i]);
    free(s->pending);
    as_store_db_close(s);
    for (size_t i = 0; s->tables && i < s->resource_count; i++) {
        for (size_t j = 0; j < s->tables[i].cap; j++)
            as_store_object_free(s->tables[i].slots[j]);
        free(s->tables[i].slots);
        free(s->tables[i].sorted);
    }
    free(s->tables);
    for (long long p = s->history_first; s->history && p < s->history_next; p++)
        event_clear(&s->history[p % (long long)s->history_cap]);
    free(s->history);
    pthread_cond_destroy(&s->changed);
    pthread_cond_destroy(&s->stop);
    pthread_cond_destroy(&s->committed);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->checkpointing);
    free(s);
}

void as_store_lock(as_store *s)
{
    pthread_mutex_lock(&s->lock);
}

void as_store_unlock(as_store *s)
{
    pthread_mutex_unlock(&s->lock);
}

uint64_t as_store_rv(const as_store *s)
{
    return s->rv;
}

uint64_t as_store_deletions(const as_store *s)
{
    return s->deletions;
}

uint64_t as_store_oldest_rv(const as_store *s)
{
    return s->oldest_rv;
}

const as_object *as_store_get(as_store *s, const as_resource *r, const char *ns, const char *name)
{
    object_table *t = as_store_table_of(s, r);
    if (!t->cap) return NULL;
    char *key = make_key(ns ? ns : "", name);
    if (!key) return NULL;
    as_object *o = *as_store_table_slot(t, key);
    free(key);
    return o;
}

/* The namespace part of a key ("ns/name", "/name") into e->ns. */
static void set_event_namespace(as_event *e, const char *key)
{
    size_t n = strcspn(key, "/");
    if (n >= sizeof e->ns) n = 0; /* not a namespace name: never matches one */
    memcpy(e->ns, key, n);
    e->ns[n] = '\0';
}

/* Moves e (its references) into the watch history. */
static void publish(as_store *s, as_event *e)
{
    if (s->history_next - s->history_first == (long long)s->history_cap) {
        as_event *gone = &s->history[s->history_first % (long long)s->history_cap];
        s->oldest_rv = gone->rv;
        event_clear(gone);
        s->history_first++;
    }
    s->history[s->history_next % (long long)s->history_cap] = *e;
    memset(e, 0, sizeof *e);
    s->history_next++;
    s->published_rv = s->history[(s->history_next - 1) % (long long)s->history_cap].rv;
    pthread_cond_broadcast(&s->changed);
}

/* What is left of a write once it is published or undone. */
static void pending_clear(pending_write *w)
{
    event_clear(&w->event);
    free(w->key);
    as_blob_unref(w->was_json);
    as_blob_unref(w->was_index);
    as_store_object_free(w->removed);
    memset(w, 0, sizeof *w);
}

/* Puts the state before w back in memory. */
static void undo(as_store *s, pending_write *w)
{
    object_table *t = as_store_table_of(s, w->event.resource);
    as_object **slot = as_store_table_slot(t, w->key);
    as_object *o = *slot;
    if (w->event.type == AS_DELETED) {
        o = w->removed;
        w->removed = NULL;
        as_blob_unref(o->json);
        o->json = w->was_json;
        o->rv = w->was_rv;
        w->was_json = NULL;
        *slot = o;
        t->count++;
        t->sorted_valid = false;
        s->deletions--;
    } else if (!w->was_json) { /* created */
        table_remove(t, slot);
        as_store_object_free(o);
    } else {
        as_blob_unref(o->json);
        as_blob_unref(o->index);
        o->json = w->was_json;
        o->index = w->was_index;
        o->rv = w->was_rv;
        w->was_json = w->was_index = NULL;
    }
    pending_clear(w);
}

static bool was_undone(const as_store *s, uint64_t rv)
{
    size_t kept = s->undone_count < UNDONE_KEPT ? s->undone_count : UNDONE_KEPT;
    for (size_t i = 0; i < kept; i++)
        if (rv >= s->undone[i].lo && rv <= s->undone[i].hi) return true;
    return false;
}

/* Commits every pending write; needs the lock, which it lets go of while
 * SQLite writes. On failure every write not committed (the group, and those
 * made meanwhile, which may have read it) is undone, newest first, and their
 * writers are told. */
static void commit_pending(as_store *s)
{
    pending_write *group = s->pending;
    size_t n = s->pending_count;
    s->pending = NULL;
    s->pending_count = s->pending_cap = 0;
    s->committing = true;
    pthread_mutex_unlock(&s->lock);
    gp_error err = {0};
    int rc = as_store_db_write(s, group, n, &err);
    pthread_mutex_lock(&s->lock);
    if (rc == 0) {
        s->durable_rv = group[n - 1].event.rv;
        for (size_t i = 0; i < n; i++) {
            publish(s, &group[i].event);
            pending_clear(&group[i]);
        }
    } else {
        s->undone[s->undone_count++ % UNDONE_KEPT] = (rv_range){group[0].event.rv, s->rv};
        memcpy(s->commit_error, err.text, sizeof s->commit_error);
        for (size_t i = s->pending_count; i-- > 0;)
            undo(s, &s->pending[i]);
        s->pending_count = 0;
        for (size_t i = n; i-- > 0;)
            undo(s, &group[i]);
        s->durable_rv = s->rv; /* every write so far: committed or undone */
    }
    free(group);
    if (s->wal_over_limit) {
        /* the group's writers may answer now; the next commit waits */
        pthread_cond_broadcast(&s->committed);
        pthread_mutex_unlock(&s->lock);
        as_store_db_fold_wal(s);
        pthread_mutex_lock(&s->lock);
    }
    s->committing = false;
    pthread_cond_broadcast(&s->committed);
}

int as_store_sync(as_store *s, uint64_t rv, gp_error *err)
{
    pthread_mutex_lock(&s->lock);
    int rc = 0;
    for (;;) {
        if (was_undone(s, rv)) {
            gp_error_set(err, NULL, 0, 0, "%s", s->commit_error);
            rc = -1;
            break;
        }
        if (s->durable_rv >= rv) break;
        if (!s->committing && s->pending_count == 0) break; /* no such write */
        if (!s->committing)
            commit_pending(s);
        else
            pthread_cond_wait(&s->committed, &s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

uint64_t as_store_published_rv(const as_store *s)
{
    return s->published_rv;
}

static void set_rv(json_t *obj, uint64_t rv)
{
    json_t *meta = json_object_get(obj, "metadata");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(obj, "metadata", meta);
    }
    char text[24];
    snprintf(text, sizeof text, "%llu", (unsigned long long)rv);
    json_object_set_new(meta, "resourceVersion", json_string(text));
}

static as_blob *serialize(json_t *obj)
{
    size_t len;
    char *text = gp_json_dump(obj, &len);
    if (!text) return NULL;
    as_blob *b = as_blob_new(text, len);
    free(text);
    return b;
}

/* Room for one more pending write, made before memory changes so that
 * running out of it changes nothing. */
static int reserve_pending(as_store *s)
{
    if (s->pending_count < s->pending_cap) return 0;
    size_t cap = s->pending_cap ? s->pending_cap * 2 : 64;
    pending_write *v = realloc(s->pending, cap * sizeof *v);
    if (!v) return -1;
    s->pending = v;
    s->pending_cap = cap;
    return 0;
}

/* A write made in memory: published now for a store without a file, else
 * left for the next commit. */
static void made(as_store *s, pending_write *w)
{
    if (!s->db) {
        publish(s, &w->event);
        pending_clear(w);
        s->durable_rv = s->rv;
        return;
    }
    s->pending[s->pending_count++] = *w;
}

const as_object *as_store_put(as_store *s, const as_resource *r, const char *ns, const char *name,
                              json_t *obj, gp_error *err)
{
    object_table *t = as_store_table_of(s, r);
    if ((t->count + 1) * 4 > t->cap * 3 && as_store_table_grow(t) != 0) goto oom;
    if (reserve_pending(s) != 0) goto oom;
    char *key = make_key(ns ? ns : "", name);
    if (!key) goto oom;
    uint64_t rv = s->rv + 1;
    set_rv(obj, rv);
    as_blob *json = serialize(obj);
    as_blob *index = as_store_index_blob(r, obj);
    as_object **slot = as_store_table_slot(t, key);
    as_object *o = *slot;
    if (!o && json && index) {
        o = calloc(1, sizeof *o);
        if (o && !(o->key = strdup(key))) {
            free(o);
            o = NULL;
        }
        if (o) {
            o->resource = r;
            *slot = o;
            t->count++;
            t->sorted_valid = false;
        }
    }
    if (!json || !index || !o) {
        free(key);
        as_blob_unref(json);
        as_blob_unref(index);
        goto oom;
    }
    pending_write w = {.key = key, .was_json = o->json, .was_index = o->index, .was_rv = o->rv};
    w.event = (as_event){.rv = rv,
                         .type = o->json ? AS_MODIFIED : AS_ADDED,
                         .resource = r,
                         .json = as_blob_ref(json),
                         .index = as_blob_ref(index),
                         .old_index = as_blob_ref(o->index)};
    set_event_namespace(&w.event, key);
    o->rv = rv;
    o->json = json;
    o->index = index;
    s->rv = rv;
    made(s, &w);
    return o;
oom:
    gp_error_set(err, NULL, 0, 0, "store: out of memory");
    return NULL;
}

as_blob *as_store_delete(as_store *s, const as_resource *r, const char *ns, const char *name,
                         json_t *obj, gp_error *err)
{
    object_table *t = as_store_table_of(s, r);
    char *key = t->cap ? make_key(ns ? ns : "", name) : NULL;
    as_object **slot = key ? as_store_table_slot(t, key) : NULL;
    if (!slot || !*slot) {
        free(key);
        gp_error_set(err, NULL, 0, 0, "store: %s not found", name);
        return NULL;
    }
    uint64_t rv = s->rv + 1;
    set_rv(obj, rv);
    as_blob *json = serialize(obj);
    if (!json || reserve_pending(s) != 0) {
        gp_error_set(err, NULL, 0, 0, "store: out of memory");
        free(key);
        as_blob_unref(json);
        return NULL;
    }
    as_object *o = *slot;
    table_remove(t, slot);
    pending_write w = {.key = key, .was_json = o->json, .was_rv = o->rv, .removed = o};
    w.event = (as_event){.rv = rv,
                         .type = AS_DELETED,
                         .resource = r,
                         .json = as_blob_ref(json),
                         .index = as_blob_ref(o->index)};
    set_event_namespace(&w.event, key);
    o->json = as_blob_ref(json);
    o->rv = rv;
    s->rv = rv;
    s->deletions++;
    made(s, &w);
    return json;
}

static int compare_keys(const void *a, const void *b)
{
    const as_object *x = *(const as_object *const *)a, *y = *(const as_object *const *)b;
    return strcmp(x->key, y->key);
}

static int sort_table(object_table *t)
{
    if (t->sorted_valid) return 0;
    as_object **v = realloc(t->sorted, (t->count ? t->count : 1) * sizeof *v);
    if (!v) return -1;
    size_t n = 0;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i]) v[n++] = t->slots[i];
    qsort(v, n, sizeof *v, compare_keys);
    t->sorted = v;
    t->sorted_valid = true;
    return 0;
}

/* The first position whose key is not below `key`. */
static size_t lower_bound(as_object *const *v, size_t n, const char *key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(v[mid]->key, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t as_store_list(as_store *s, const as_resource *r, const char *ns, const as_object ***out)
{
    object_table *t = as_store_table_of(s, r);
    *out = NULL;
    if (!t->count || sort_table(t) != 0) return 0;
    size_t from = 0, to = t->count;
    if (ns) {
        /* "ns/" up to "ns0": '0' is the byte after '/' */
        size_t len = strlen(ns);
        char *lo = malloc(len + 2);
        if (!lo) return 0;
        memcpy(lo, ns, len);
        memcpy(lo + len, "/", 2);
        from = lower_bound(t->sorted, t->count, lo);
        lo[len] = '0';
        to = lower_bound(t->sorted, t->count, lo);
        free(lo);
    }
    const as_object **v = malloc((to > from ? to - from : 1) * sizeof *v);
    if (!v) return 0;
    memcpy(v, t->sorted + from, (to - from) * sizeof *v);
    *out = v;
    return to - from;
}

long long as_store_events_since(as_store *s, uint64_t after)
{
    if (after < s->oldest_rv) return -1;
    /* Binary search: rvs increase along the ring. */
    long long lo = s->history_first, hi = s->history_next;
    while (lo < hi) {
        long long mid = lo + (hi - lo) / 2;
        if (s->history[mid % (long long)s->history_cap].rv <= after)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const as_event *as_store_event_at(as_store *s, long long pos)
{
    if (pos < s->history_first || pos >= s->history_next) return NULL;
    return &s->history[pos % (long long)s->history_cap];
}

bool as_store_event_gone(const as_store *s, long long pos)
{
    return pos < s->history_first;
}

bool as_store_wait(as_store *s, const struct timespec *deadline)
{
    if (s->shutting_down) return false;
    pthread_cond_timedwait(&s->changed, &s->lock, deadline);
    return !s->shutting_down;
}

void as_store_wake_watchers(as_store *s)
{
    pthread_cond_broadcast(&s->changed);
}

void as_store_shutdown(as_store *s)
{
    pthread_mutex_lock(&s->lock);
    s->shutting_down = true;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
}
