/* A map from strings to values that remembers which entries were used last,
 * and forgets the least recent one past its capacity: what client-go's event
 * correlator keeps its three caches in (github.com/golang/groupcache/lru, 4096
 * entries each), and, without a capacity, what the node lifecycle controller
 * and the taint eviction controller remember per node and per pod.
 *
 * Values are the map's: free_value (may be NULL) releases one when it is
 * replaced, removed, evicted or the map is freed. Lookups and updates take
 * constant time (a hash table beside a list in order of use).
 *
 * Not thread-safe: the controllers' thread owns every map. */
#ifndef GPUOP_CONTROLLERS_LRU_INTERNAL_H
#define GPUOP_CONTROLLERS_LRU_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ctl_lru ctl_lru;

/* capacity 0: no limit. NULL when out of memory. */
ctl_lru *ctl_lru_new(size_t capacity, void (*free_value)(void *value));
void ctl_lru_free(ctl_lru *m);

/* The value of `key`, which becomes the most recently used; NULL when none. */
void *ctl_lru_get(ctl_lru *m, const char *key);
/* The same without touching the order of use. */
void *ctl_lru_peek(const ctl_lru *m, const char *key);
/* Sets key's value (taken over; an old one is released) and makes it the
 * most recent; past the capacity the least recent entry goes. -1 when out of
 * memory (value released then too). */
int ctl_lru_put(ctl_lru *m, const char *key, void *value);
/* Removes key; false when it was not there. */
bool ctl_lru_remove(ctl_lru *m, const char *key);
size_t ctl_lru_size(const ctl_lru *m);

/* Calls keep(ud, key, value) for every entry, least recent first, and
 * removes those it returns false for. keep must not change the map. */
void ctl_lru_sweep(ctl_lru *m, bool (*keep)(void *ud, const char *key, void *value), void *ud);

#endif
