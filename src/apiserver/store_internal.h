/* The store's private side, shared by its three files; nothing outside
 * them includes it (callers use store.h):
 *   store.c        objects in memory (blobs, the hash tables, sorted lists),
 *                  open and close, writes and their group commit, and the
 *                  watch history;
 *   store_index.c  the fields a field selector may name, and each object's
 *                  index;
 *   store_db.c     everything SQLite: the schema, loading the file at open,
 *                  committing a group of writes, the checkpointer thread. */
#ifndef GPUOP_APISERVER_STORE_INTERNAL_H
#define GPUOP_APISERVER_STORE_INTERNAL_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apiserver/store.h"

/* A write made in memory, not yet committed: its event is published once
 * it is, and it is undone if the commit fails. */
typedef struct pending_write {
    as_event event; /* the row: event.json, or a deletion of key */
    char *key;      /* a copy: the object may be gone before the commit */
    /* the state before, to undo (was_json NULL: there was no object) */
    as_blob *was_json, *was_index;
    uint64_t was_rv;
    struct as_object *removed; /* a deletion's object, freed once committed */
} pending_write;

typedef struct rv_range {
    uint64_t lo, hi;
} rv_range;

#define UNDONE_KEPT 64

/* One open-addressing hash table of objects per resource type. */
typedef struct object_table {
    as_object **slots;
    size_t cap, count;
    /* Every object in key order, rebuilt only after an insert or a delete
     * (an update changes an object in place), so paging through a long
     * list and listing one namespace do not sort the whole table. */
    as_object **sorted;
    bool sorted_valid;
} object_table;

struct as_store {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool shutting_down;
    uint64_t rv;
    sqlite3 *db;
    sqlite3_stmt *upsert, *remove, *set_rv, *begin, *commit;
    const as_resource *resources;
    size_t resource_count;
    object_table *tables; /* one per resource, same order as as_resources() */
    as_event *history;    /* ring */
    size_t history_cap;
    long long history_first; /* position of the oldest kept event */
    long long history_next;  /* position the next event gets */
    uint64_t oldest_rv;      /* a watch may start from this rv or later */
    uint64_t published_rv;   /* the newest event in the history */
    uint64_t deletions;      /* objects removed since the store opened */
    /* Group commit (see as_store_sync): writes made in memory, oldest
     * first, waiting for the next commit; a writer is committing them. */
    pending_write *pending;
    size_t pending_count, pending_cap;
    bool committing;
    uint64_t durable_rv; /* every write up to it is committed or undone */
    pthread_cond_t committed;
    /* the writes undone by the last failed commits (a ring: their writers
     * look as soon as the commit ends, so a few are plenty, and recording
     * one needs no memory when memory may be what failed) */
    rv_range undone[UNDONE_KEPT];
    size_t undone_count; /* ever recorded; the ring holds the last ones */
    char commit_error[sizeof(((gp_error *)0)->text)];
    /* WAL checkpoints (and their fsyncs) run on a thread of their own with
     * its own connection, not inside a client's request; only a log past
     * wal_limit is folded back by the writer itself (store_db.c). */
    char *path;
    size_t page_size, wal_limit;   /* the writer folds a log past wal_limit back */
    bool wal_over_limit;           /* the last commit left it past: fold it */
    pthread_mutex_t checkpointing; /* held by whichever connection checkpoints */
    pthread_t checkpointer;
    bool checkpointer_running, stopping;
    pthread_cond_t stop;
};

/* store.c: the object tables. */
object_table *as_store_table_of(as_store *s, const as_resource *r);
as_object **as_store_table_slot(object_table *t, const char *key);
int as_store_table_grow(object_table *t);
void as_store_object_free(as_object *o);

/* store_index.c: the index kept beside an object (NULL: out of memory). */
as_blob *as_store_index_blob(const as_resource *r, const json_t *obj);

/* store_db.c: the store's file, for a store opened with a path. Opens (or
 * creates) the database, loads every object and starts the checkpointer. */
int as_store_db_open(as_store *s, const char *path, gp_error *err);
/* Stops the checkpointer thread, if it runs, and frees the path it opens. */
void as_store_db_stop_checkpointer(as_store *s);
/* Commits the writes w[0..n) in one transaction. */
int as_store_db_write(as_store *s, const pending_write *w, size_t n, gp_error *err);
/* After a commit that left the log past wal_limit: folds it back into the
 * database and truncates it. By the committing writer, without the lock,
 * once the commit's writers have their answer. */
void as_store_db_fold_wal(as_store *s);
/* Folds the log into the database and closes the connection, if open. */
void as_store_db_close(as_store *s);

#endif
