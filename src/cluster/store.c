#include "cluster/store.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kube/selector.h"
#include "util/hash.h"

/* kube-apiserver's watch cache keeps about 100 events per resource type and
 * grows it with load; one shared window of this size covers the lab and a
 * bench of thousands of pods while keeping memory bounded. */
#define DEFAULT_HISTORY 16384

gc_blob *gc_blob_new(const char *text, size_t len)
{
    gc_blob *b = malloc(sizeof *b + len + 1);
    if (!b) return NULL;
    atomic_init(&b->refs, 1);
    b->len = len;
    memcpy(b->text, text, len);
    b->text[len] = '\0';
    return b;
}

gc_blob *gc_blob_ref(gc_blob *b)
{
    if (b) atomic_fetch_add(&b->refs, 1);
    return b;
}

void gc_blob_unref(gc_blob *b)
{
    if (b && atomic_fetch_sub(&b->refs, 1) == 1) free(b);
}

/* A write made in memory, not yet committed: its event is published once
 * it is, and it is undone if the commit fails. */
typedef struct pending_write {
    gc_event event; /* the row: event.json, or a deletion of key */
    char *key;      /* a copy: the object may be gone before the commit */
    /* the state before, to undo (was_json NULL: there was no object) */
    gc_blob *was_json, *was_index;
    uint64_t was_rv;
    struct gc_object *removed; /* a deletion's object, freed once committed */
} pending_write;

typedef struct rv_range {
    uint64_t lo, hi;
} rv_range;

/* One open-addressing hash table of objects per resource type. */
typedef struct object_table {
    gc_object **slots;
    size_t cap, count;
    /* Every object in key order, rebuilt only after an insert or a delete
     * (an update changes an object in place), so paging through a long
     * list and listing one namespace do not sort the whole table. */
    gc_object **sorted;
    bool sorted_valid;
} object_table;

struct gc_store {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool shutting_down;
    uint64_t rv;
    sqlite3 *db;
    sqlite3_stmt *upsert, *remove, *set_rv, *begin, *commit;
    const gc_resource *resources;
    size_t resource_count;
    object_table *tables; /* one per resource, same order as gc_resources() */
    gc_event *history;    /* ring */
    size_t history_cap;
    long long history_first; /* position of the oldest kept event */
    long long history_next;  /* position the next event gets */
    uint64_t oldest_rv;      /* a watch may start from this rv or later */
    uint64_t published_rv;   /* the newest event in the history */
    uint64_t deletions;      /* objects removed since the store opened */
    /* Group commit (see gc_store_sync): writes made in memory, oldest
     * first, waiting for the next commit; a writer is committing them. */
    pending_write *pending;
    size_t pending_count, pending_cap;
    bool committing;
    uint64_t durable_rv; /* every write up to it is committed or undone */
    pthread_cond_t committed;
    rv_range *undone; /* writes undone after a failed commit */
    size_t undone_count;
    char commit_error[sizeof(((gp_error *)0)->text)];
    /* WAL checkpoints (and their fsyncs) run on a thread of their own with
     * its own connection, never inside a client's request. */
    char *path;
    pthread_t checkpointer;
    bool checkpointer_running, stopping;
    pthread_cond_t stop;
};

static size_t hash_key(const char *k)
{
    return (size_t)gp_hash_str(GP_HASH_SEED, k);
}

static gc_object **table_slot(object_table *t, const char *key)
{
    size_t mask = t->cap - 1, i = hash_key(key) & mask;
    while (t->slots[i] && strcmp(t->slots[i]->key, key) != 0)
        i = (i + 1) & mask;
    return &t->slots[i];
}

static int table_grow(object_table *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    gc_object **old = t->slots;
    size_t old_cap = t->cap;
    t->slots = calloc(cap, sizeof *t->slots);
    if (!t->slots) {
        t->slots = old;
        return -1;
    }
    t->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i]) *table_slot(t, old[i]->key) = old[i];
    free(old);
    return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void table_remove(object_table *t, gc_object **slot)
{
    size_t mask = t->cap - 1, i = (size_t)(slot - t->slots);
    t->slots[i] = NULL;
    t->count--;
    t->sorted_valid = false;
    for (size_t j = (i + 1) & mask; t->slots[j]; j = (j + 1) & mask) {
        gc_object *o = t->slots[j];
        t->slots[j] = NULL;
        *table_slot(t, o->key) = o;
    }
}

static void object_free(gc_object *o)
{
    if (!o) return;
    free(o->key);
    gc_blob_unref(o->json);
    gc_blob_unref(o->index);
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

static object_table *table_of(gc_store *s, const gc_resource *r)
{
    return &s->tables[r - s->resources];
}

static const char *const common_fields[] = {"metadata.name", "metadata.namespace", NULL};
static const char *const pod_fields[] = {"metadata.name",
                                         "metadata.namespace",
                                         "spec.nodeName",
                                         "spec.restartPolicy",
                                         "spec.schedulerName",
                                         "spec.serviceAccountName",
                                         "spec.hostNetwork",
                                         "status.phase",
                                         "status.podIP",
                                         "status.nominatedNodeName",
                                         NULL};
static const char *const event_fields[] = {"metadata.name",
                                           "metadata.namespace",
                                           "involvedObject.kind",
                                           "involvedObject.namespace",
                                           "involvedObject.name",
                                           "involvedObject.uid",
                                           "involvedObject.apiVersion",
                                           "involvedObject.resourceVersion",
                                           "involvedObject.fieldPath",
                                           "reason",
                                           "reportingComponent",
                                           "source",
                                           "type",
                                           NULL};
static const char *const events_v1_fields[] = {"metadata.name",  "metadata.namespace",
                                               "regarding.kind", "regarding.namespace",
                                               "regarding.name", "regarding.uid",
                                               "reason",         "reportingController",
                                               "type",           NULL};
static const char *const node_fields[] = {"metadata.name", "spec.unschedulable", NULL};
static const char *const namespace_fields[] = {"metadata.name", "status.phase", NULL};

const char *const *gc_store_selectable_fields(const gc_resource *r)
{
    if (strcmp(r->group, "") == 0) {
        if (strcmp(r->resource, "pods") == 0) return pod_fields;
        if (strcmp(r->resource, "events") == 0) return event_fields;
        if (strcmp(r->resource, "nodes") == 0) return node_fields;
        if (strcmp(r->resource, "namespaces") == 0) return namespace_fields;
    }
    if (strcmp(r->group, "events.k8s.io") == 0) return events_v1_fields;
    return common_fields;
}

/* Copies one dotted path of obj into idx, creating the parents. */
static void index_copy(json_t *idx, const json_t *obj, const char *path)
{
    char buf[128];
    if (strlen(path) >= sizeof buf) return;
    strcpy(buf, path);
    const json_t *from = obj;
    json_t *to = idx;
    char *save = NULL;
    for (char *part = strtok_r(buf, ".", &save); part; part = strtok_r(NULL, ".", &save)) {
        bool last = save == NULL || *save == '\0';
        from = json_is_object(from) ? json_object_get(from, part) : NULL;
        if (!from) return;
        if (last) {
            json_object_set(to, part, (json_t *)from);
            return;
        }
        json_t *next = json_object_get(to, part);
        if (!next) {
            next = json_object();
            json_object_set_new(to, part, next);
        }
        to = next;
    }
}

/* "source" in an event's field selector is source.component. */
static json_t *build_index(const gc_resource *r, const json_t *obj)
{
    json_t *idx = json_object();
    const char *const *fields = gc_store_selectable_fields(r);
    for (size_t i = 0; fields[i]; i++)
        index_copy(idx, obj, fields[i]);
    index_copy(idx, obj, "metadata.labels");
    index_copy(idx, obj, "metadata.uid");
    if (fields == event_fields) {
        const json_t *src = json_object_get(json_object_get(obj, "source"), "component");
        if (json_is_string(src)) json_object_set(idx, "source", (json_t *)src);
    }
    return idx;
}

static gc_blob *index_blob(const gc_resource *r, const json_t *obj)
{
    json_t *idx = build_index(r, obj);
    char *text = idx ? json_dumps(idx, JSON_COMPACT) : NULL;
    json_decref(idx);
    gc_blob *b = text ? gc_blob_new(text, strlen(text)) : NULL;
    free(text);
    return b;
}

json_t *gc_index_parse(const gc_blob *index)
{
    return index ? json_loadb(index->text, index->len, 0, NULL) : NULL;
}

static int fail_sql(gc_store *s, gp_error *err, const char *what)
{
    gp_error_set(err, NULL, 0, 0, "store: %s: %s", what, sqlite3_errmsg(s->db));
    return -1;
}

static int exec_sql(gc_store *s, const char *sql, gp_error *err)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK) return fail_sql(s, err, sql);
    return 0;
}

static const gc_resource *resource_by_id(gc_store *s, const char *id)
{
    for (size_t i = 0; i < s->resource_count; i++) {
        const gc_resource *r = &s->resources[i];
        size_t g = strlen(r->group);
        if (strncmp(id, r->group, g) == 0 && id[g] == '/' && strcmp(id + g + 1, r->resource) == 0)
            return r;
    }
    return NULL;
}

static void resource_id(const gc_resource *r, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", r->group, r->resource);
}

/* A stored row back in memory. The index was stored beside the object, so
 * a start reads only that small text, not every object (30,000 pods start
 * in a fraction of the time); a row without one is indexed from the object. */
static int insert_loaded(gc_store *s, const gc_resource *r, const char *key, uint64_t rv,
                         const char *text, size_t len, const char *idx_text)
{
    gc_blob *index = idx_text ? gc_blob_new(idx_text, strlen(idx_text)) : NULL;
    if (!index) {
        json_t *obj = json_loadb(text, len, 0, NULL);
        if (!obj) return 0; /* a row we cannot read is skipped, never fatal */
        index = index_blob(r, obj);
        json_decref(obj);
        if (!index) return -1;
    }
    object_table *t = table_of(s, r);
    gc_object *o = NULL;
    if (((t->count + 1) * 4 > t->cap * 3 && table_grow(t) != 0) || !(o = calloc(1, sizeof *o))) {
        gc_blob_unref(index);
        return -1;
    }
    o->resource = r;
    o->key = strdup(key);
    o->rv = rv;
    o->json = gc_blob_new(text, len);
    o->index = index;
    if (rv > s->rv) s->rv = rv; /* the counter is the newest write (persist) */
    gc_object **slot = table_slot(t, key);
    if (*slot) {
        object_free(*slot);
        t->count--;
    }
    *slot = o;
    t->count++;
    t->sorted_valid = false;
    return 0;
}

/* Bumped whenever build_index keeps other fields: stored indexes of another
 * version are ignored and rebuilt from the objects. */
#define INDEX_VERSION 1

static int load_all(gc_store *s, gp_error *err)
{
    sqlite3_stmt *st;
    bool index_usable = false;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key='index'", -1, &st, NULL) !=
        SQLITE_OK)
        return fail_sql(s, err, "reading the index version");
    if (sqlite3_step(st) == SQLITE_ROW) index_usable = sqlite3_column_int64(st, 0) == INDEX_VERSION;
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key='rv'", -1, &st, NULL) !=
        SQLITE_OK)
        return fail_sql(s, err, "reading the counter");
    if (sqlite3_step(st) == SQLITE_ROW) s->rv = (uint64_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(s->db, "SELECT resource, key, rv, json, idx FROM objects", -1, &st,
                           NULL) != SQLITE_OK)
        return fail_sql(s, err, "reading objects");
    while (sqlite3_step(st) == SQLITE_ROW) {
        const gc_resource *r = resource_by_id(s, (const char *)sqlite3_column_text(st, 0));
        if (!r) continue; /* a resource type this build no longer serves */
        const char *text = (const char *)sqlite3_column_text(st, 3);
        if (insert_loaded(s, r, (const char *)sqlite3_column_text(st, 1),
                          (uint64_t)sqlite3_column_int64(st, 2), text,
                          (size_t)sqlite3_column_bytes(st, 3),
                          index_usable ? (const char *)sqlite3_column_text(st, 4) : NULL) != 0) {
            sqlite3_finalize(st);
            gp_error_set(err, NULL, 0, 0, "store: out of memory");
            return -1;
        }
    }
    sqlite3_finalize(st);
    char sql[160];
    snprintf(sql, sizeof sql,
             "UPDATE objects SET idx = NULL;"
             "INSERT OR REPLACE INTO meta (key, value) VALUES ('index', %d)",
             INDEX_VERSION);
    return index_usable ? 0 : exec_sql(s, sql, err);
}

static void *checkpoint_loop(void *arg)
{
    gc_store *s = arg;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(s->path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 1000);
    pthread_mutex_lock(&s->lock);
    while (!s->stopping) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        t.tv_sec += 1;
        pthread_cond_timedwait(&s->stop, &s->lock, &t);
        if (s->stopping) break;
        pthread_mutex_unlock(&s->lock);
        /* PASSIVE: copies what it can without waiting for (or blocking)
         * the writer; the fsync happens here, outside the store lock. A
         * pragma, not sqlite3_wal_checkpoint_v2: a connection that has not
         * read the database yet does not know it is in WAL mode, and the
         * call would silently do nothing (the log grew without bound). */
        sqlite3_exec(db, "PRAGMA wal_checkpoint(PASSIVE)", NULL, NULL, NULL);
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    sqlite3_close(db);
    return NULL;
}

static int open_db(gc_store *s, const char *path, gp_error *err)
{
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK)
        return fail_sql(s, err, path);
    sqlite3_busy_timeout(s->db, 5000);
    /* objects include secrets' kin (tokens in ConfigMaps); the log files
     * SQLite creates next take this mode too */
    chmod(path, 0600);
    /* WAL with synchronous=NORMAL: a commit is in the log before the client
     * hears of it, so a killed process loses nothing acknowledged (only a
     * power cut could lose the last commits, which the lab accepts). */
    if (exec_sql(s,
                 "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                 "PRAGMA wal_autocheckpoint=0; PRAGMA journal_size_limit=8388608;",
                 err) != 0 ||
        exec_sql(s,
                 "CREATE TABLE IF NOT EXISTS objects (resource TEXT NOT NULL, key TEXT NOT NULL,"
                 " rv INTEGER NOT NULL, json TEXT NOT NULL, idx TEXT,"
                 " PRIMARY KEY (resource, key));"
                 "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER);",
                 err) != 0)
        return -1;
    /* a store from before the index column: add it (an error just means it
     * is there already) */
    sqlite3_exec(s->db, "ALTER TABLE objects ADD COLUMN idx TEXT", NULL, NULL, NULL);
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO objects (resource, key, rv, json, idx)"
                           " VALUES (?1, ?2, ?3, ?4, ?5)"
                           " ON CONFLICT (resource, key) DO UPDATE SET rv=?3, json=?4, idx=?5",
                           -1, &s->upsert, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "DELETE FROM objects WHERE resource=?1 AND key=?2", -1,
                           &s->remove, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO meta (key, value) VALUES ('rv', ?1)", -1,
                           &s->set_rv, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "BEGIN", -1, &s->begin, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "COMMIT", -1, &s->commit, NULL) != SQLITE_OK)
        return fail_sql(s, err, "preparing statements");
    return load_all(s, err);
}

gc_store *gc_store_open(const char *path, size_t history, gp_error *err)
{
    gc_store *s = calloc(1, sizeof *s);
    if (!s) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&s->changed, &attr);
    pthread_cond_init(&s->stop, &attr);
    pthread_condattr_destroy(&attr);
    pthread_cond_init(&s->committed, NULL);
    s->resources = gc_resources(&s->resource_count);
    s->tables = calloc(s->resource_count, sizeof *s->tables);
    s->history_cap = history ? history : DEFAULT_HISTORY;
    s->history = calloc(s->history_cap, sizeof *s->history);
    if (!s->tables || !s->history) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        gc_store_close(s);
        return NULL;
    }
    if (path && (!(s->path = strdup(path)) || open_db(s, path, err) != 0)) {
        if (!s->path) gp_error_set(err, NULL, 0, 0, "out of memory");
        gc_store_close(s);
        return NULL;
    }
    if (path)
        s->checkpointer_running = pthread_create(&s->checkpointer, NULL, checkpoint_loop, s) == 0;
    s->oldest_rv = s->published_rv = s->durable_rv = s->rv;
    return s;
}

static void commit_pending(gc_store *s);
static void pending_clear(pending_write *w);

static void event_clear(gc_event *e)
{
    gc_blob_unref(e->json);
    gc_blob_unref(e->index);
    gc_blob_unref(e->old_index);
    memset(e, 0, sizeof *e);
}

void gc_store_close(gc_store *s)
{
    if (!s) return;
    if (s->checkpointer_running) {
        pthread_mutex_lock(&s->lock);
        s->stopping = true;
        pthread_cond_broadcast(&s->stop);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->checkpointer, NULL);
    }
    free(s->path);
    if (s->db && s->pending_count > 0) { /* written without a sync: commit them now */
        pthread_mutex_lock(&s->lock);
        commit_pending(s);
        pthread_mutex_unlock(&s->lock);
    }
    for (size_t i = 0; i < s->pending_count; i++)
        pending_clear(&s->pending[i]);
    free(s->pending);
    free(s->undone);
    if (s->db) {
        /* fold the log into the database so the next start reads less */
        sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
        sqlite3_finalize(s->upsert);
        sqlite3_finalize(s->remove);
        sqlite3_finalize(s->set_rv);
        sqlite3_finalize(s->begin);
        sqlite3_finalize(s->commit);
        sqlite3_close(s->db);
    }
    for (size_t i = 0; s->tables && i < s->resource_count; i++) {
        for (size_t j = 0; j < s->tables[i].cap; j++)
            object_free(s->tables[i].slots[j]);
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
    free(s);
}

void gc_store_lock(gc_store *s)
{
    pthread_mutex_lock(&s->lock);
}

void gc_store_unlock(gc_store *s)
{
    pthread_mutex_unlock(&s->lock);
}

uint64_t gc_store_rv(const gc_store *s)
{
    return s->rv;
}

uint64_t gc_store_deletions(const gc_store *s)
{
    return s->deletions;
}

uint64_t gc_store_oldest_rv(const gc_store *s)
{
    return s->oldest_rv;
}

const gc_object *gc_store_get(gc_store *s, const gc_resource *r, const char *ns, const char *name)
{
    object_table *t = table_of(s, r);
    if (!t->cap) return NULL;
    char *key = make_key(ns ? ns : "", name);
    if (!key) return NULL;
    gc_object *o = *table_slot(t, key);
    free(key);
    return o;
}

/* Runs a prepared statement that returns no rows (BEGIN, COMMIT: compiled
 * once, not for every write). */
static int step_once(gc_store *s, sqlite3_stmt *st, gp_error *err)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : fail_sql(s, err, sqlite3_sql(st));
}

/* One row of a commit: the object's, or its removal. */
static int write_row(gc_store *s, const pending_write *w)
{
    char id[128];
    resource_id(w->event.resource, id, sizeof id);
    bool removal = w->event.type == GC_DELETED;
    sqlite3_stmt *st = removal ? s->remove : s->upsert;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, w->key, -1, SQLITE_STATIC);
    if (!removal) {
        sqlite3_bind_int64(st, 3, (sqlite3_int64)w->event.rv);
        sqlite3_bind_text(st, 4, w->event.json->text, (int)w->event.json->len, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, w->event.index->text, (int)w->event.index->len, SQLITE_STATIC);
    }
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* One transaction for the writes of a group. The counter's row is written
 * only when the group removes an object: a put's rv is in its own row, so
 * at load the counter is the larger of the two (load_all). Called by the
 * committing writer without the lock: nobody else touches the connection. */
static int write_group(gc_store *s, const pending_write *w, size_t n, gp_error *err)
{
    if (step_once(s, s->begin, err) != 0) return -1;
    uint64_t removed_at = 0;
    for (size_t i = 0; i < n; i++) {
        if (write_row(s, &w[i]) != 0) {
            fail_sql(s, err, "writing");
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
        if (w[i].event.type == GC_DELETED) removed_at = w[i].event.rv;
    }
    if (removed_at) {
        sqlite3_bind_int64(s->set_rv, 1, (sqlite3_int64)removed_at);
        int rc = sqlite3_step(s->set_rv);
        sqlite3_reset(s->set_rv);
        if (rc != SQLITE_DONE) {
            fail_sql(s, err, "writing the counter");
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
    }
    if (step_once(s, s->commit, err) == 0) return 0;
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

/* The namespace part of a key ("ns/name", "/name") into e->ns. */
static void set_event_namespace(gc_event *e, const char *key)
{
    size_t n = strcspn(key, "/");
    if (n >= sizeof e->ns) n = 0; /* not a namespace name: never matches one */
    memcpy(e->ns, key, n);
    e->ns[n] = '\0';
}

/* Moves e (its references) into the watch history. */
static void publish(gc_store *s, gc_event *e)
{
    if (s->history_next - s->history_first == (long long)s->history_cap) {
        gc_event *gone = &s->history[s->history_first % (long long)s->history_cap];
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
    gc_blob_unref(w->was_json);
    gc_blob_unref(w->was_index);
    object_free(w->removed);
    memset(w, 0, sizeof *w);
}

/* Puts the state before w back in memory. */
static void undo(gc_store *s, pending_write *w)
{
    object_table *t = table_of(s, w->event.resource);
    gc_object **slot = table_slot(t, w->key);
    gc_object *o = *slot;
    if (w->event.type == GC_DELETED) {
        o = w->removed;
        w->removed = NULL;
        gc_blob_unref(o->json);
        o->json = w->was_json;
        o->rv = w->was_rv;
        w->was_json = NULL;
        *slot = o;
        t->count++;
        t->sorted_valid = false;
        s->deletions--;
    } else if (!w->was_json) { /* created */
        table_remove(t, slot);
        object_free(o);
    } else {
        gc_blob_unref(o->json);
        gc_blob_unref(o->index);
        o->json = w->was_json;
        o->index = w->was_index;
        o->rv = w->was_rv;
        w->was_json = w->was_index = NULL;
    }
    pending_clear(w);
}

static bool was_undone(const gc_store *s, uint64_t rv)
{
    for (size_t i = 0; i < s->undone_count; i++)
        if (rv >= s->undone[i].lo && rv <= s->undone[i].hi) return true;
    return false;
}

/* Commits every pending write; needs the lock, which it lets go of while
 * SQLite writes. On failure every write not committed (the group, and those
 * made meanwhile, which may have read it) is undone, newest first, and their
 * writers are told. */
static void commit_pending(gc_store *s)
{
    pending_write *group = s->pending;
    size_t n = s->pending_count;
    s->pending = NULL;
    s->pending_count = s->pending_cap = 0;
    s->committing = true;
    pthread_mutex_unlock(&s->lock);
    gp_error err = {0};
    int rc = write_group(s, group, n, &err);
    pthread_mutex_lock(&s->lock);
    if (rc == 0) {
        s->durable_rv = group[n - 1].event.rv;
        for (size_t i = 0; i < n; i++) {
            publish(s, &group[i].event);
            pending_clear(&group[i]);
        }
    } else {
        rv_range *u = realloc(s->undone, (s->undone_count + 1) * sizeof *u);
        if (u) {
            s->undone = u;
            u[s->undone_count++] = (rv_range){group[0].event.rv, s->rv};
        }
        memcpy(s->commit_error, err.text, sizeof s->commit_error);
        for (size_t i = s->pending_count; i-- > 0;)
            undo(s, &s->pending[i]);
        s->pending_count = 0;
        for (size_t i = n; i-- > 0;)
            undo(s, &group[i]);
        s->durable_rv = s->rv; /* every write so far: committed or undone */
    }
    free(group);
    s->committing = false;
    pthread_cond_broadcast(&s->committed);
}

int gc_store_sync(gc_store *s, uint64_t rv, gp_error *err)
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
        if (!s->committing)
            commit_pending(s);
        else
            pthread_cond_wait(&s->committed, &s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

uint64_t gc_store_published_rv(const gc_store *s)
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

static gc_blob *serialize(json_t *obj)
{
    char *text = json_dumps(obj, JSON_COMPACT);
    if (!text) return NULL;
    gc_blob *b = gc_blob_new(text, strlen(text));
    free(text);
    return b;
}

/* Room for one more pending write, made before memory changes so that
 * running out of it changes nothing. */
static int reserve_pending(gc_store *s)
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
static void made(gc_store *s, pending_write *w)
{
    if (!s->db) {
        publish(s, &w->event);
        pending_clear(w);
        s->durable_rv = s->rv;
        return;
    }
    s->pending[s->pending_count++] = *w;
}

const gc_object *gc_store_put(gc_store *s, const gc_resource *r, const char *ns, const char *name,
                              json_t *obj, gp_error *err)
{
    object_table *t = table_of(s, r);
    if ((t->count + 1) * 4 > t->cap * 3 && table_grow(t) != 0) goto oom;
    if (reserve_pending(s) != 0) goto oom;
    char *key = make_key(ns ? ns : "", name);
    if (!key) goto oom;
    uint64_t rv = s->rv + 1;
    set_rv(obj, rv);
    gc_blob *json = serialize(obj);
    gc_blob *index = index_blob(r, obj);
    gc_object **slot = table_slot(t, key);
    gc_object *o = *slot;
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
        gc_blob_unref(json);
        gc_blob_unref(index);
        goto oom;
    }
    pending_write w = {.key = key, .was_json = o->json, .was_index = o->index, .was_rv = o->rv};
    w.event = (gc_event){.rv = rv,
                         .type = o->json ? GC_MODIFIED : GC_ADDED,
                         .resource = r,
                         .json = gc_blob_ref(json),
                         .index = gc_blob_ref(index),
                         .old_index = gc_blob_ref(o->index)};
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

gc_blob *gc_store_delete(gc_store *s, const gc_resource *r, const char *ns, const char *name,
                         json_t *obj, gp_error *err)
{
    object_table *t = table_of(s, r);
    char *key = t->cap ? make_key(ns ? ns : "", name) : NULL;
    gc_object **slot = key ? table_slot(t, key) : NULL;
    if (!slot || !*slot) {
        free(key);
        gp_error_set(err, NULL, 0, 0, "store: %s not found", name);
        return NULL;
    }
    uint64_t rv = s->rv + 1;
    set_rv(obj, rv);
    gc_blob *json = serialize(obj);
    if (!json || reserve_pending(s) != 0) {
        gp_error_set(err, NULL, 0, 0, "store: out of memory");
        free(key);
        gc_blob_unref(json);
        return NULL;
    }
    gc_object *o = *slot;
    table_remove(t, slot);
    pending_write w = {.key = key, .was_json = o->json, .was_rv = o->rv, .removed = o};
    w.event = (gc_event){.rv = rv,
                         .type = GC_DELETED,
                         .resource = r,
                         .json = gc_blob_ref(json),
                         .index = gc_blob_ref(o->index)};
    set_event_namespace(&w.event, key);
    o->json = gc_blob_ref(json);
    o->rv = rv;
    s->rv = rv;
    s->deletions++;
    made(s, &w);
    return json;
}

static int compare_keys(const void *a, const void *b)
{
    const gc_object *x = *(const gc_object *const *)a, *y = *(const gc_object *const *)b;
    return strcmp(x->key, y->key);
}

static int sort_table(object_table *t)
{
    if (t->sorted_valid) return 0;
    gc_object **v = realloc(t->sorted, (t->count ? t->count : 1) * sizeof *v);
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
static size_t lower_bound(gc_object *const *v, size_t n, const char *key)
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

size_t gc_store_list(gc_store *s, const gc_resource *r, const char *ns, const gc_object ***out)
{
    object_table *t = table_of(s, r);
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
    const gc_object **v = malloc((to > from ? to - from : 1) * sizeof *v);
    if (!v) return 0;
    memcpy(v, t->sorted + from, (to - from) * sizeof *v);
    *out = v;
    return to - from;
}

long long gc_store_events_since(gc_store *s, uint64_t after)
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

const gc_event *gc_store_event_at(gc_store *s, long long pos)
{
    if (pos < s->history_first || pos >= s->history_next) return NULL;
    return &s->history[pos % (long long)s->history_cap];
}

bool gc_store_event_gone(const gc_store *s, long long pos)
{
    return pos < s->history_first;
}

bool gc_store_wait(gc_store *s, const struct timespec *deadline)
{
    if (s->shutting_down) return false;
    pthread_cond_timedwait(&s->changed, &s->lock, deadline);
    return !s->shutting_down;
}

void gc_store_shutdown(gc_store *s)
{
    pthread_mutex_lock(&s->lock);
    s->shutting_down = true;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
}
