/* A bump allocator that owns every node of a parse tree.
 *
 * Parse trees have one owner and one lifetime, so they are allocated here and
 * released with a single gp_arena_free(). Growing arrays (table entries, array
 * elements) hand their old block back through gp_arena_grow(), which keeps it
 * on a per-size free list for the next array of that size: without it a tree
 * of many small tables would waste about as much memory as it uses. */
#ifndef GPUOP_UTIL_ARENA_H
#define GPUOP_UTIL_ARENA_H

#include <stddef.h>

typedef struct gp_arena gp_arena;

gp_arena *gp_arena_new(void);
void gp_arena_free(gp_arena *a);

/* Returns NULL only when memory is exhausted. Memory is 8-byte aligned. */
void *gp_arena_alloc(gp_arena *a, size_t size);
void *gp_arena_zalloc(gp_arena *a, size_t size);
char *gp_arena_strndup(gp_arena *a, const char *s, size_t len);

/* Moves `old` (old_size bytes, 0 for none) into a block of new_size bytes and
 * recycles the old block. Sizes that are powers of two recycle best. */
void *gp_arena_grow(gp_arena *a, void *old, size_t old_size, size_t new_size);

/* Bytes obtained from malloc so far (for the benchmark's memory report). */
size_t gp_arena_footprint(const gp_arena *a);

#endif
