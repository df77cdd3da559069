/* The store's SQLite file: its schema, loading it at open, committing a
 * group of writes in one transaction, and keeping the write-ahead log
 * short (a checkpointer thread, and the writer past a limit). */
#include "apiserver/store_internal.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What the write-ahead log may hold before the writer folds it back. */
#define DEFAULT_WAL_LIMIT ((size_t)32 << 20)

static int fail_sql(as_store *s, gp_error *err, const char *what)
{
    gp_error_set(err, NULL, 0, 0, "store: %s: %s", what, sqlite3_errmsg(s->db));
    return -1;
}

static int exec_sql(as_store *s, const char *sql, gp_error *err)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK) return fail_sql(s, err, sql);
    return 0;
}

static const as_resource *resource_by_id(as_store *s, const char *id)
{
    for (size_t i = 0; i < s->resource_count; i++) {
        const as_resource *r = &s->resources[i];
        size_t g = strlen(r->group);
        if (strncmp(id, r->group, g) == 0 && id[g] == '/' && strcmp(id + g + 1, r->resource) == 0)
            return r;
    }
    return NULL;
}

static void resource_id(const as_resource *r, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", r->group, r->resource);
}

/* A stored row back in memory. The index was stored beside the object, so
 * a start reads only that small text, not every object (30,000 pods start
 * in a fraction of the time); a row without one is indexed from the object. */
static int insert_loaded(as_store *s, const as_resource *r, const char *key, uint64_t rv,
                         const char *text, size_t len, const char *idx_text)
{
    as_blob *index = idx_text ? as_blob_new(idx_text, strlen(idx_text)) : NULL;
    if (!index) {
        json_t *obj = json_loadb(text, len, 0, NULL);
        if (!obj) return 0; /* a row we cannot read is skipped, never fatal */
        index = as_store_index_blob(r, obj);
        json_decref(obj);
        if (!index) return -1;
    }
    object_table *t = as_store_table_of(s, r);
    as_object *o = NULL;
    if (((t->count + 1) * 4 > t->cap * 3 && as_store_table_grow(t) != 0) ||
        !(o = calloc(1, sizeof *o))) {
        as_blob_unref(index);
        return -1;
    }
    o->resource = r;
    o->key = strdup(key);
    o->rv = rv;
    o->json = as_blob_new(text, len);
    o->index = index;
    if (rv > s->rv) s->rv = rv; /* the counter is the newest write (persist) */
    as_object **slot = as_store_table_slot(t, key);
    if (*slot) {
        as_store_object_free(*slot);
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

static int load_all(as_store *s, gp_error *err)
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
        const as_resource *r = resource_by_id(s, (const char *)sqlite3_column_text(st, 0));
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
    as_store *s = arg;
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
        pthread_mutex_lock(&s->checkpointing);
        sqlite3_exec(db, "PRAGMA wal_checkpoint(PASSIVE)", NULL, NULL, NULL);
        pthread_mutex_unlock(&s->checkpointing);
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    sqlite3_close(db);
    return NULL;
}

/* After each commit, on the writer's connection (SQLite's WAL hook, called
 * with the write lock let go): a log over the limit is to be folded back
 * and truncated, between two of the writer's transactions
 * (as_store_db_fold_wal). The checkpointer's PASSIVE copies most of it
 * meanwhile, off the write path, but cannot bound it: SQLite rewinds the
 * log only for a writer that begins after a checkpoint caught up with it,
 * which never happens while writes keep coming (the log grew by hundreds
 * of megabytes a minute). */
static int wal_committed(void *arg, sqlite3 *db, const char *name, int frames)
{
    (void)db, (void)name;
    as_store *s = arg;
    if ((size_t)frames * s->page_size > s->wal_limit) s->wal_over_limit = true;
    return SQLITE_OK;
}

/* One checkpoint runs at a time (SQLite would answer the second one busy,
 * at once): this one waits for the checkpointer's to end. The fold copies
 * and syncs what the log holds, which takes long next to a commit; it runs
 * after the commit's writers were answered, not inside the commit they
 * wait for. */
void as_store_db_fold_wal(as_store *s)
{
    if (!s->wal_over_limit) return;
    s->wal_over_limit = false;
    pthread_mutex_lock(&s->checkpointing);
    sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    pthread_mutex_unlock(&s->checkpointing);
}

static int page_size(as_store *s, gp_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "PRAGMA page_size", -1, &st, NULL) != SQLITE_OK)
        return fail_sql(s, err, "reading the page size");
    s->page_size = sqlite3_step(st) == SQLITE_ROW ? (size_t)sqlite3_column_int64(st, 0) : 4096;
    sqlite3_finalize(st);
    return 0;
}

static int open_db(as_store *s, const char *path, gp_error *err)
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
    if (page_size(s, err) != 0) return -1;
    if (!s->wal_limit) s->wal_limit = DEFAULT_WAL_LIMIT;
    sqlite3_wal_hook(s->db, wal_committed, s);
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

int as_store_db_open(as_store *s, const char *path, gp_error *err)
{
    if (!(s->path = strdup(path))) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    if (open_db(s, path, err) != 0) return -1;
    s->checkpointer_running = pthread_create(&s->checkpointer, NULL, checkpoint_loop, s) == 0;
    return 0;
}

void as_store_db_stop_checkpointer(as_store *s)
{
    if (s->checkpointer_running) {
        pthread_mutex_lock(&s->lock);
        s->stopping = true;
        pthread_cond_broadcast(&s->stop);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->checkpointer, NULL);
    }
    free(s->path);
}

void as_store_db_close(as_store *s)
{
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
}

/* Runs a prepared statement that returns no rows (BEGIN, COMMIT: compiled
 * once, not for every write). */
static int step_once(as_store *s, sqlite3_stmt *st, gp_error *err)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : fail_sql(s, err, sqlite3_sql(st));
}

/* One row of a commit: the object's, or its removal. */
static int write_row(as_store *s, const pending_write *w)
{
    char id[128];
    resource_id(w->event.resource, id, sizeof id);
    bool removal = w->event.type == AS_DELETED;
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
int as_store_db_write(as_store *s, const pending_write *w, size_t n, gp_error *err)
{
    if (step_once(s, s->begin, err) != 0) return -1;
    uint64_t removed_at = 0;
    for (size_t i = 0; i < n; i++) {
        if (write_row(s, &w[i]) != 0) {
            fail_sql(s, err, "writing");
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
        if (w[i].event.type == AS_DELETED) removed_at = w[i].event.rv;
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

void as_store_set_wal_limit(as_store *s, size_t bytes)
{
    s->wal_limit = bytes;
}
