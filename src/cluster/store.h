/* The API server's store: every object, one resourceVersion counter, and a
 * bounded history of changes for watches. Durable in SQLite (WAL), so a
 * write acknowledged to a client survives `cluster down` and kill -9.
 *
 * Objects are kept as their serialized JSON (a shared, reference-counted
 * blob): GET, LIST and WATCH send those bytes as they are, without decoding
 * and re-encoding unchanged objects. Beside each blob the store keeps a
 * small "index" object (metadata name, namespace, labels and the fields a
 * field selector may name), so selectors never parse the whole object.
 *
 * Locking: one mutex. Callers hold it (gc_store_lock) across a
 * read-modify-write so that a PUT's resourceVersion check and its write are
 * one step; watchers sleep on the store's condition variable.
 *
 * Group commit: a write changes memory under the lock and is committed to
 * SQLite after the lock is let go, in one transaction with the writes made
 * meanwhile (gc_store_sync). A writer answers its client only once its
 * write is committed, and watchers see its event only then. Readers of the
 * store may see a write a moment before it is committed; if the commit
 * fails, it is undone (with every later write not yet committed) and its
 * writer gets the error. */
#ifndef GPUOP_CLUSTER_STORE_H
#define GPUOP_CLUSTER_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <time.h>

#include "cluster/resources.h"
#include "util/error.h"

/* Immutable JSON text shared by the store, watch history and responses. */
typedef struct gc_blob gc_blob;
struct gc_blob {
    atomic_int refs;
    size_t len;
    char text[];
};
gc_blob *gc_blob_new(const char *text, size_t len);
gc_blob *gc_blob_ref(gc_blob *b);
void gc_blob_unref(gc_blob *b);

typedef struct gc_object {
    const gc_resource *resource;
    char *key; /* "namespace/name", or "/name" for cluster-scoped objects */
    uint64_t rv;
    gc_blob *json;
    /* {"metadata":{name,namespace,labels,uid}, selectable fields...} as
     * compact text: parsed only by a selector or a namespaced watch. A
     * parsed index costs 2-3 KB, its text a tenth of that, and at 150,000
     * pods plus their events that is most of the server's memory. */
    gc_blob *index;
    /* One value a caller derives from this version (admission: whether a
     * namespace is terminating), kept under the lock; valid while memo_rv
     * is rv (versions are never handed out twice). */
    uint64_t memo_rv;
    int memo;
} gc_object;

/* An index's text parsed (new reference; NULL for NULL or bad text). */
json_t *gc_index_parse(const gc_blob *index);

typedef enum gc_event_type { GC_ADDED, GC_MODIFIED, GC_DELETED } gc_event_type;

typedef struct gc_event {
    uint64_t rv;
    gc_event_type type;
    const gc_resource *resource;
    gc_blob *json;
    gc_blob *index;     /* of the new state (of the last state for DELETED) */
    gc_blob *old_index; /* of the state before, for MODIFIED; NULL otherwise */
    /* the object's namespace ("" when cluster-scoped): a namespaced watch
     * tells its events without parsing an index (63 bytes at most: a DNS
     * label) */
    char ns[64];
} gc_event;

typedef struct gc_store gc_store;

/* path NULL keeps everything in memory (tests). history: events kept for
 * watches (0 picks the default). */
gc_store *gc_store_open(const char *path, size_t history, gp_error *err);
void gc_store_close(gc_store *s);

void gc_store_lock(gc_store *s);
void gc_store_unlock(gc_store *s);

/* Everything below needs the lock. */

uint64_t gc_store_rv(const gc_store *s);

const gc_object *gc_store_get(gc_store *s, const gc_resource *r, const char *ns, const char *name);

/* Writes obj as the new state of (r, ns, name): sets metadata.resourceVersion
 * to the next counter value, persists it and records an ADDED or MODIFIED
 * event. On success returns the stored object (owned by the store). */
const gc_object *gc_store_put(gc_store *s, const gc_resource *r, const char *ns, const char *name,
                              json_t *obj, gp_error *err);

/* Removes the object. Its last state (obj, whose resourceVersion is set to
 * the next value) goes into the DELETED event; the returned blob is that
 * state, with a reference for the caller. */
gc_blob *gc_store_delete(gc_store *s, const gc_resource *r, const char *ns, const char *name,
                         json_t *obj, gp_error *err);

/* Waits, without the lock, until the write of resourceVersion rv is
 * committed (made durable with the writes around it, by this thread or
 * another), or at once when no write has that rv; -1 with err when the
 * commit failed and the write was undone.
 * Every gc_store_put and gc_store_delete is to be followed by one before
 * its writer answers (gc_store_close commits what is left). */
int gc_store_sync(gc_store *s, uint64_t rv, gp_error *err);

/* The resourceVersion of the newest event watchers can see (a bookmark's):
 * writes after it may still be on their way to the disk. Needs the lock. */
uint64_t gc_store_published_rv(const gc_store *s);

/* The objects of r (in namespace ns, or all when ns is NULL), sorted by
 * key, as kube-apiserver lists them. *out is malloc'd; the objects stay
 * owned by the store and are valid while the lock is held. */
size_t gc_store_list(gc_store *s, const gc_resource *r, const char *ns, const gc_object ***out);

/* Watch history. gc_store_events_since finds the first event with rv > after;
 * returns its position, or -1 when events after `after` are no longer kept
 * (410 Expired). gc_store_event_at gives the event at a position, NULL when
 * none has happened yet. */
long long gc_store_events_since(gc_store *s, uint64_t after);
const gc_event *gc_store_event_at(gc_store *s, long long pos);
/* True when the event at pos has already left the history (a watcher that
 * fell that far behind must start again: 410 Expired). */
bool gc_store_event_gone(const gc_store *s, long long pos);
/* How many objects have been removed since the store opened: the garbage
 * collector has work only after a removal (or while something is being
 * deleted). */
uint64_t gc_store_deletions(const gc_store *s);
/* The oldest rv a watch may start from. */
uint64_t gc_store_oldest_rv(const gc_store *s);

/* Sleeps until a new event, gc_store_shutdown or the deadline. Returns false
 * once the store is shutting down. */
bool gc_store_wait(gc_store *s, const struct timespec *deadline);
/* Wakes every watcher for good (server stopping). */
void gc_store_shutdown(gc_store *s);

/* The field-selector fields of a resource, NULL-terminated. */
const char *const *gc_store_selectable_fields(const gc_resource *r);

#endif
