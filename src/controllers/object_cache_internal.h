/* The controllers' parsed objects, by stored version.
 *
 * Every pass of the controllers lists whole resources; an object is parsed
 * only when its stored version is new since the last listing. A stored
 * version is one blob (store.h): the cache is keyed by the blob's address,
 * and holds a reference to it, so an address cannot be reused by another
 * version while its entry lives. Lookups are pointer hashes, done outside
 * the store's lock; a listing's table replaces the last one, so versions
 * that are gone are forgotten without a search. Per object its two tables
 * (this listing's and the last, at most half full) cost 128 to 256 bytes;
 * a JSON object keyed by name cost 270 and was searched under the lock.
 *
 * Not thread-safe: one listing at a time, on the controllers' thread. */
#ifndef GPUOP_CONTROLLERS_OBJECT_CACHE_INTERNAL_H
#define GPUOP_CONTROLLERS_OBJECT_CACHE_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "apiserver/store.h"

typedef struct ctl_object_cache ctl_object_cache;

ctl_object_cache *ctl_ocache_new(void);
void ctl_ocache_free(ctl_object_cache *c);

/* Starts a listing of at most n versions. -1 when out of memory. */
int ctl_ocache_begin(ctl_object_cache *c, size_t n);
/* What was kept for `blob` by the last listing (borrowed; it lives until
 * the end of the next listing), now kept for this one too; NULL when
 * nothing was. *aux (when aux is not NULL) is what was put beside it. */
json_t *ctl_ocache_find(ctl_object_cache *c, const as_blob *blob, void **aux);
/* Keeps obj (the reference is taken over) for `blob` in this listing, and
 * aux (malloc'd or NULL; freed with the entry): what the caller read of
 * the object once, to read it again without looking it up. */
void ctl_ocache_put(ctl_object_cache *c, as_blob *blob, json_t *obj, void *aux);
/* Ends the listing: what it did not find or put is forgotten. */
void ctl_ocache_end(ctl_object_cache *c);

#endif
