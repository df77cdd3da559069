/* Chained hash table (a power of two of buckets, grown at one entry a
 * bucket) whose entries are also on a list in order of use, most recent at
 * the head. */
#include "controllers/lru_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

typedef struct entry {
    char *key;
    uint64_t hash;
    void *value;
    struct entry *chain;         /* next in the bucket */
    struct entry *newer, *older; /* the list in order of use */
} entry;

struct ctl_lru {
    size_t capacity, size, bucket_count;
    entry **buckets;
    entry *newest, *oldest;
    void (*free_value)(void *);
};

#define FIRST_BUCKETS 16

ctl_lru *ctl_lru_new(size_t capacity, void (*free_value)(void *value))
{
    ctl_lru *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->buckets = calloc(FIRST_BUCKETS, sizeof *m->buckets);
    if (!m->buckets) {
        free(m);
        return NULL;
    }
    m->bucket_count = FIRST_BUCKETS;
    m->capacity = capacity;
    m->free_value = free_value;
    return m;
}

static void release(ctl_lru *m, entry *e)
{
    if (m->free_value && e->value) m->free_value(e->value);
    free(e->key);
    free(e);
}

void ctl_lru_free(ctl_lru *m)
{
    if (!m) return;
    for (entry *e = m->newest, *next; e; e = next) {
        next = e->older;
        release(m, e);
    }
    free(m->buckets);
    free(m);
}

static entry **slot(const ctl_lru *m, const char *key, uint64_t hash)
{
    entry **at = &m->buckets[hash & (m->bucket_count - 1)];
    while (*at && ((*at)->hash != hash || strcmp((*at)->key, key) != 0))
        at = &(*at)->chain;
    return at;
}

static void unlink_use(ctl_lru *m, entry *e)
{
    if (e->newer)
        e->newer->older = e->older;
    else
        m->newest = e->older;
    if (e->older)
        e->older->newer = e->newer;
    else
        m->oldest = e->newer;
    e->newer = e->older = NULL;
}

static void push_newest(ctl_lru *m, entry *e)
{
    e->older = m->newest;
    e->newer = NULL;
    if (m->newest) m->newest->newer = e;
    m->newest = e;
    if (!m->oldest) m->oldest = e;
}

void *ctl_lru_peek(const ctl_lru *m, const char *key)
{
    entry *e = *slot(m, key, gp_hash_str(GP_HASH_SEED, key));
    return e ? e->value : NULL;
}

void *ctl_lru_get(ctl_lru *m, const char *key)
{
    entry *e = *slot(m, key, gp_hash_str(GP_HASH_SEED, key));
    if (!e) return NULL;
    unlink_use(m, e);
    push_newest(m, e);
    return e->value;
}

/* Doubles the buckets; staying at the old size is harmless when memory
 * runs out (chains only get longer). */
static void grow(ctl_lru *m)
{
    size_t count = m->bucket_count * 2;
    entry **buckets = calloc(count, sizeof *buckets);
    if (!buckets) return;
    for (size_t i = 0; i < m->bucket_count; i++) {
        for (entry *e = m->buckets[i], *next; e; e = next) {
            next = e->chain;
            entry **head = &buckets[e->hash & (count - 1)];
            e->chain = *head;
            *head = e;
        }
    }
    free(m->buckets);
    m->buckets = buckets;
    m->bucket_count = count;
}

static void remove_entry(ctl_lru *m, entry **at)
{
    entry *e = *at;
    *at = e->chain;
    unlink_use(m, e);
    m->size--;
    release(m, e);
}

int ctl_lru_put(ctl_lru *m, const char *key, void *value)
{
    uint64_t hash = gp_hash_str(GP_HASH_SEED, key);
    entry **at = slot(m, key, hash);
    if (*at) {
        entry *e = *at;
        if (m->free_value && e->value && e->value != value) m->free_value(e->value);
        e->value = value;
        unlink_use(m, e);
        push_newest(m, e);
        return 0;
    }
    entry *e = calloc(1, sizeof *e);
    char *copy = e ? strdup(key) : NULL;
    if (!copy) {
        free(e);
        if (m->free_value && value) m->free_value(value);
        return -1;
    }
    e->key = copy;
    e->hash = hash;
    e->value = value;
    e->chain = *at;
    *at = e;
    push_newest(m, e);
    m->size++;
    if (m->capacity && m->size > m->capacity) {
        entry *old = m->oldest;
        remove_entry(m, slot(m, old->key, old->hash));
    }
    if (m->size > m->bucket_count) grow(m);
    return 0;
}

bool ctl_lru_remove(ctl_lru *m, const char *key)
{
    entry **at = slot(m, key, gp_hash_str(GP_HASH_SEED, key));
    if (!*at) return false;
    remove_entry(m, at);
    return true;
}

size_t ctl_lru_size(const ctl_lru *m)
{
    return m->size;
}

void ctl_lru_sweep(ctl_lru *m, bool (*keep)(void *ud, const char *key, void *value), void *ud)
{
    for (entry *e = m->oldest, *next; e; e = next) {
        next = e->newer;
        if (!keep(ud, e->key, e->value)) remove_entry(m, slot(m, e->key, e->hash));
    }
}
