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
 * Locking: one mutex. Callers hold it (as_store_lock) across a
 * read-modify-write so that a PUT's resourceVersion check and its write are
 * one step; watchers sleep on the store's condition variable.
 *
 * Group commit: a write changes memory under the lock and is committed to
 * SQLite after the lock is let go, in one transaction with the writes made
 * meanwhile (as_store_sync). A writer answers its client only once its
 * write is committed, and watchers see its event only then. Readers of the
 * store may see a write a moment before it is committed; if the commit
 * fails, it is undone (with every later write not yet committed) and its
 * writer gets the error. */
#ifndef GPUOP_APISERVER_STORE_H
#define GPUOP_APISERVER_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <time.h>

#include "apiserver/resources.h"
#include "util/error.h"

/* Immutable JSON text shared by the store, watch history and responses. */
typedef struct as_blob as_blob;
struct as_blob {
    atomic_int refs;
    size_t len;
    char text[];
};
as_blob *as_blob_new(const char *text, size_t len);
as_blob *as_blob_ref(as_blob *b);
void as_blob_unref(as_blob *b);

typedef struct as_object {
    const as_resource *resource;
    char *key; /* "namespace/name", or "/name" for cluster-scoped objects */
    uint64_t rv;
    as_blob *json;
    /* {"metadata":{name,namespace,labels,uid}, selectable fields...} as
     * compact text: parsed only by a selector or a namespaced watch. A
     * parsed index costs 2-3 KB, its text a tenth of that, and at 150,000
     * pods plus their events that is most of the server's memory. */
    as_blob *index;
    /* One value a caller derives from this version, kept under the lock;
     * valid while memo_rv is rv (versions are never handed out twice). One
     * caller a resource: a namespace's phase and a service account's
     * automount and pull secrets (admission, api_write.c), the root-CA
     * ConfigMap's state (controllers/namespace_defaults.c). */
    uint64_t memo_rv;
    int memo;
} as_object;

/* An index's text parsed (new reference; NULL for NULL or bad text). */
json_t *as_index_parse(const as_blob *index);

typedef enum as_event_type { AS_ADDED, AS_MODIFIED, AS_DELETED } as_event_type;

typedef struct as_event {
    uint64_t rv;
    as_event_type type;
    const as_resource *resource;
    as_blob *json;
    as_blob *index;     /* of the new state (of the last state for DELETED) */
    as_blob *old_index; /* of the state before, for MODIFIED; NULL otherwise */
    /* the object's namespace ("" when cluster-scoped): a namespaced watch
     * tells its events without parsing an index (63 bytes at most: a DNS
     * label) */
    char ns[64];
} as_event;

typedef struct as_store as_store;

/* path NULL keeps everything in memory (tests). history: events kept for
 * watches (0 picks the default). */
as_store *as_store_open(const char *path, size_t history, gp_error *err);
void as_store_close(as_store *s);
/* The write-ahead log is folded back into the database, and truncated, as
 * soon as it holds more than this (default 32 MiB), by the writer between
 * two commits: it stays bounded however steady the writes. Tests set a
 * small one. Before any write. */
void as_store_set_wal_limit(as_store *s, size_t bytes);

void as_store_lock(as_store *s);
void as_store_unlock(as_store *s);

/* Everything below needs the lock. */

uint64_t as_store_rv(const as_store *s);

const as_object *as_store_get(as_store *s, const as_resource *r, const char *ns, const char *name);

/* Writes obj as the new state of (r, ns, name): sets metadata.resourceVersion
 * to the next counter value, persists it and records an ADDED or MODIFIED
 * event. On success returns the stored object (owned by the store). */
const as_object *as_store_put(as_store *s, const as_resource *r, const char *ns, const char *name,
                              json_t *obj, gp_error *err);

/* Removes the object. Its last state (obj, whose resourceVersion is set to
 * the next value) goes into the DELETED event; the returned blob is that
 * state, with a reference for the caller. */
as_blob *as_store_delete(as_store *s, const as_resource *r, const char *ns, const char *name,
                         json_t *obj, gp_error *err);

/* Waits, without the lock, until the write of resourceVersion rv is
 * committed (made durable with the writes around it, by this thread or
 * another), or at once when no write has that rv; -1 with err when the
 * commit failed and the write was undone.
 * Every as_store_put and as_store_delete is to be followed by one before
 * its writer answers (as_store_close commits what is left). */
int as_store_sync(as_store *s, uint64_t rv, gp_error *err);

/* The resourceVersion of the newest event watchers can see (a bookmark's):
 * writes after it may still be on their way to the disk. Needs the lock. */
uint64_t as_store_published_rv(const as_store *s);

/* The objects of r (in namespace ns, or all when ns is NULL), sorted by
 * key, as kube-apiserver lists them. *out is malloc'd; the objects stay
 * owned by the store and are valid while the lock is held. */
size_t as_store_list(as_store *s, const as_resource *r, const char *ns, const as_object ***out);

/* Watch history. as_store_events_since finds the first event with rv > after;
 * returns its position, or -1 when events after `after` are no longer kept
 * (410 Expired). as_store_event_at gives the event at a position, NULL when
 * none has happened yet. */
long long as_store_events_since(as_store *s, uint64_t after);
const as_event *as_store_event_at(as_store *s, long long pos);
/* True when the event at pos has already left the history (a watcher that
 * fell that far behind must start again: 410 Expired). */
bool as_store_event_gone(const as_store *s, long long pos);
/* How many objects have been removed since the store opened: the garbage
 * collector has work only after a removal (or while something is being
 * deleted). */
uint64_t as_store_deletions(const as_store *s);
/* The oldest rv a watch may start from. */
uint64_t as_store_oldest_rv(const as_store *s);

/* Sleeps until a new event, as_store_shutdown or the deadline. Returns false
 * once the store is shutting down. */
bool as_store_wait(as_store *s, const struct timespec *deadline);
/* Wakes every watcher for good (server stopping). */
void as_store_shutdown(as_store *s);
/* Wakes every watcher, to look again at its own state (one was cancelled).
 * Needs the lock. */
void as_store_wake_watchers(as_store *s);

/* The field-selector fields of a resource, NULL-terminated. */
const char *const *as_store_selectable_fields(const as_resource *r);
/* For a resource whose field labels are not the stored object's fields
 * (events.k8s.io's Events, stored as core's): the pairs {label, field},
 * ended by {NULL, NULL}, for kube_field_selector_parse_converted; NULL for
 * the others. */
const char *const (*as_store_field_labels(const as_resource *r))[2];

#endif
