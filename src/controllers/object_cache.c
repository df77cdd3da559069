#include "controllers/object_cache_internal.h"
#include "util/hash.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    as_blob *blob; /* NULL: a free slot */
    json_t *obj;
    void *aux;
    int moved; /* found by the listing after: owned by its table now */
} entry;

typedef struct table {
    entry *slots;
    size_t cap; /* a power of two, or 0 */
} table;

struct ctl_object_cache {
    table last, cur;
};

ctl_object_cache *ctl_ocache_new(void)
{
    return calloc(1, sizeof(ctl_object_cache));
}

static void table_clear(table *t)
{
    for (size_t i = 0; i < t->cap; i++) {
        entry *e = &t->slots[i];
        if (e->blob && !e->moved) {
            as_blob_unref(e->blob);
            json_decref(e->obj);
            free(e->aux);
        }
    }
    if (t->cap) memset(t->slots, 0, t->cap * sizeof *t->slots);
}

void ctl_ocache_free(ctl_object_cache *c)
{
    if (!c) return;
    table_clear(&c->last);
    table_clear(&c->cur);
    free(c->last.slots);
    free(c->cur.slots);
    free(c);
}

static entry *slot(const table *t, const as_blob *blob)
{
    size_t i = gp_hash_ptr(blob, t->cap);
    while (t->slots[i].blob && t->slots[i].blob != blob)
        i = (i + 1) & (t->cap - 1);
    return &t->slots[i];
}

int ctl_ocache_begin(ctl_object_cache *c, size_t n)
{
    table_clear(&c->cur); /* a listing that did not end */
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    if (c->cur.cap != cap) {
        entry *slots = calloc(cap, sizeof *slots);
        if (!slots) return -1;
        free(c->cur.slots);
        c->cur.slots = slots;
        c->cur.cap = cap;
    }
    return 0;
}

json_t *ctl_ocache_find(ctl_object_cache *c, const as_blob *blob, void **aux)
{
    if (aux) *aux = NULL;
    if (!c->last.cap || !c->cur.cap) return NULL;
    entry *e = slot(&c->last, blob);
    if (!e->blob) return NULL;
    entry *to = slot(&c->cur, blob);
    if (!e->moved) {
        *to = *e;
        e->moved = 1;
    }
    if (aux) *aux = to->aux;
    return to->obj;
}

void ctl_ocache_put(ctl_object_cache *c, as_blob *blob, json_t *obj, void *aux)
{
    if (!c->cur.cap) {
        as_blob_unref(blob);
        json_decref(obj);
        free(aux);
        return;
    }
    entry *e = slot(&c->cur, blob);
    if (e->blob) { /* put twice in one listing: the later wins */
        as_blob_unref(e->blob);
        json_decref(e->obj);
        free(e->aux);
    }
    e->blob = blob;
    e->obj = obj;
    e->aux = aux;
    e->moved = 0;
}

void ctl_ocache_end(ctl_object_cache *c)
{
    table_clear(&c->last);
    table t = c->last;
    c->last = c->cur;
    c->cur = t;
}
