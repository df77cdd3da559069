#include "util/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    FIRST_CHUNK = 16 * 1024,
    MAX_CHUNK = 1024 * 1024,
    /* Free lists for recycled blocks of 2^3 .. 2^(3+FREE_CLASSES-1) bytes. */
    FREE_CLASSES = 24,
};

typedef struct chunk {
    struct chunk *next;
    size_t size;
    /* Payload follows, aligned by the 16-byte header. */
} chunk;

typedef struct free_block {
    struct free_block *next;
} free_block;

struct gp_arena {
    chunk *chunks;
    char *cur;
    char *end;
    size_t next_size;
    size_t footprint;
    free_block *free_lists[FREE_CLASSES];
};

gp_arena *gp_arena_new(void)
{
    gp_arena *a = calloc(1, sizeof *a);
    if (a) a->next_size = FIRST_CHUNK;
    return a;
}

void gp_arena_free(gp_arena *a)
{
    if (!a) return;
    chunk *c = a->chunks;
    while (c) {
        chunk *next = c->next;
        free(c);
        c = next;
    }
    free(a);
}

static chunk *add_chunk(gp_arena *a, size_t payload)
{
    chunk *c = malloc(sizeof(chunk) + payload);
    if (!c) return NULL;
    c->size = payload;
    a->footprint += sizeof(chunk) + payload;
    return c;
}

/* Large requests get a chunk of their own, linked behind the current one so
 * that the remaining space of the current chunk is not abandoned. */
static void *alloc_slow(gp_arena *a, size_t size)
{
    if (size > a->next_size / 4) {
        chunk *c = add_chunk(a, size);
        if (!c) return NULL;
        if (a->chunks) {
            c->next = a->chunks->next;
            a->chunks->next = c;
        } else {
            c->next = NULL;
            a->chunks = c;
        }
        return c + 1;
    }
    chunk *c = add_chunk(a, a->next_size);
    if (!c) return NULL;
    c->next = a->chunks;
    a->chunks = c;
    a->cur = (char *)(c + 1);
    a->end = a->cur + c->size;
    if (a->next_size < MAX_CHUNK) a->next_size *= 2;
    void *p = a->cur;
    a->cur += size;
    return p;
}

void *gp_arena_alloc(gp_arena *a, size_t size)
{
    if (size == 0) size = 1;
    if (size > SIZE_MAX - 16) return NULL;
    size = (size + 7) & ~(size_t)7;
    if ((size_t)(a->end - a->cur) >= size) {
        void *p = a->cur;
        a->cur += size;
        return p;
    }
    return alloc_slow(a, size);
}

void *gp_arena_zalloc(gp_arena *a, size_t size)
{
    void *p = gp_arena_alloc(a, size);
    if (p) memset(p, 0, size);
    return p;
}

char *gp_arena_strndup(gp_arena *a, const char *s, size_t len)
{
    char *p = gp_arena_alloc(a, len + 1);
    if (!p) return NULL;
    if (len) memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

/* The free-list class of an exact power of two >= 8, or -1. */
static int size_class(size_t size)
{
    if (size < 8 || (size & (size - 1)) != 0) return -1;
    int cls = __builtin_ctzll((unsigned long long)size) - 3;
    return cls < FREE_CLASSES ? cls : -1;
}

void *gp_arena_grow(gp_arena *a, void *old, size_t old_size, size_t new_size)
{
    void *p = NULL;
    int cls = size_class(new_size);
    if (cls >= 0 && a->free_lists[cls]) {
        p = a->free_lists[cls];
        a->free_lists[cls] = a->free_lists[cls]->next;
    } else {
        p = gp_arena_alloc(a, new_size);
        if (!p) return NULL;
    }
    if (old && old_size) {
        memcpy(p, old, old_size < new_size ? old_size : new_size);
        int old_cls = size_class(old_size);
        if (old_cls >= 0) {
            free_block *b = old;
            b->next = a->free_lists[old_cls];
            a->free_lists[old_cls] = b;
        }
    }
    return p;
}

size_t gp_arena_footprint(const gp_arena *a)
{
    return a->footprint;
}
