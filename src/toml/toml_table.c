/* Tables and arrays: insertion-ordered entries with a hash index once a
 * table outgrows a linear scan; keys stored once per document. */
#include "toml/toml_internal.h"

#include <string.h>

/* Tables up to this capacity are scanned; bigger ones get an index. */
enum { LINEAR_SCAN_MAX = 8 };

/* FNV-1a: keys are short, so a simple byte loop beats anything fancier. */
uint32_t toml_hash(const char *key, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)key[i];
        h *= 16777619u;
    }
    return h;
}

const char *toml_key_store(gp_arena *a, const char *key, uint32_t len, uint32_t hash)
{
    toml_key_header *h = gp_arena_alloc(a, sizeof *h + (size_t)len + 1);
    if (!h) return NULL;
    h->len = len;
    h->hash = hash;
    char *text = (char *)(h + 1);
    memcpy(text, key, len);
    text[len] = '\0';
    return text;
}

uint32_t toml_entry_keylen(const toml_entry *e)
{
    return toml_key_header_of(e->key)->len;
}

toml_table *toml_table_new(gp_arena *a, const char *file, uint32_t line, uint32_t col)
{
    toml_table *t = gp_arena_zalloc(a, sizeof *t);
    if (!t) return NULL;
    t->file = file;
    t->line = line;
    t->col = col;
    return t;
}

static uint32_t index_slots(const toml_table *t)
{
    return t->cap * 2;
}

toml_entry *toml_table_lookup(const toml_table *t, const char *stored_key)
{
    if (!t->index) {
        for (uint32_t i = 0; i < t->count; i++)
            if (t->entries[i].key == stored_key) return &t->entries[i];
        return NULL;
    }
    uint32_t mask = index_slots(t) - 1;
    for (uint32_t slot = toml_key_header_of(stored_key)->hash & mask;; slot = (slot + 1) & mask) {
        uint32_t at = t->index[slot];
        if (at == 0) return NULL;
        if (t->entries[at - 1].key == stored_key) return &t->entries[at - 1];
    }
}

static void index_insert(toml_table *t, uint32_t entry_index)
{
    uint32_t mask = index_slots(t) - 1;
    uint32_t slot = toml_key_header_of(t->entries[entry_index].key)->hash & mask;
    while (t->index[slot])
        slot = (slot + 1) & mask;
    t->index[slot] = entry_index + 1;
}

/* Capacities grow through powers of two, and so do the byte sizes of the
 * entry and index blocks (32-byte entries, 2 * cap uint32 slots): the arena
 * recycles the blocks a growing table leaves behind. */
static int entries_grow(gp_arena *a, toml_table *t)
{
    uint32_t cap = 1;
    while (cap <= t->cap && cap != 0)
        cap *= 2;
    if (cap == 0) return -1;
    toml_entry *e = gp_arena_grow(a, t->entries, (size_t)t->cap * sizeof(toml_entry),
                                  (size_t)cap * sizeof(toml_entry));
    if (!e) return -1;
    size_t old_index_bytes = t->index ? (size_t)index_slots(t) * sizeof(uint32_t) : 0;
    t->entries = e;
    t->cap = cap;
    if (cap <= LINEAR_SCAN_MAX) return 0;
    size_t index_bytes = (size_t)index_slots(t) * sizeof(uint32_t);
    uint32_t *index = gp_arena_grow(a, t->index, old_index_bytes, index_bytes);
    if (!index) return -1;
    memset(index, 0, index_bytes);
    t->index = index;
    for (uint32_t i = 0; i < t->count; i++)
        index_insert(t, i);
    return 0;
}

/* Most tables are small and complete when their section or '}' ends: an
 * exact-size copy frees the unused half of their block for the next table.
 * Indexed tables keep their power-of-two capacity, which the index needs. */
void toml_table_shrink(gp_arena *a, toml_table *t)
{
    if (t->index || t->cap == t->count || t->count == 0) return;
    toml_entry *e = gp_arena_grow(a, t->entries, (size_t)t->cap * sizeof(toml_entry),
                                  (size_t)t->count * sizeof(toml_entry));
    if (!e) return; /* keeping the bigger block is fine */
    t->entries = e;
    t->cap = t->count;
}

toml_entry *toml_table_add(gp_arena *a, toml_table *t, const char *stored_key)
{
    if (t->count == t->cap && entries_grow(a, t) != 0) return NULL;
    toml_entry *e = &t->entries[t->count];
    memset(e, 0, sizeof *e);
    e->key = stored_key;
    t->count++;
    if (t->index) index_insert(t, t->count - 1);
    return e;
}

/* ---- the public, read-only view ---- */

size_t toml_table_size(const toml_table *t)
{
    return t->count;
}

const toml_entry *toml_table_entry(const toml_table *t, size_t i)
{
    return i < t->count ? &t->entries[i] : NULL;
}

static bool key_equals(const toml_entry *e, const char *key, uint32_t len, uint32_t hash)
{
    const toml_key_header *h = toml_key_header_of(e->key);
    return h->hash == hash && h->len == len && memcmp(e->key, key, len) == 0;
}

/* Lookup by any text: compares hashes and bytes, not pointers. */
const toml_entry *toml_table_find(const toml_table *t, const char *key, size_t keylen)
{
    if (keylen > UINT32_MAX) return NULL;
    uint32_t len = (uint32_t)keylen, hash = toml_hash(key, keylen);
    if (!t->index) {
        for (uint32_t i = 0; i < t->count; i++)
            if (key_equals(&t->entries[i], key, len, hash)) return &t->entries[i];
        return NULL;
    }
    uint32_t mask = index_slots(t) - 1;
    for (uint32_t slot = hash & mask;; slot = (slot + 1) & mask) {
        uint32_t at = t->index[slot];
        if (at == 0) return NULL;
        if (key_equals(&t->entries[at - 1], key, len, hash)) return &t->entries[at - 1];
    }
}

const toml_value *toml_table_get(const toml_table *t, const char *key)
{
    const toml_entry *e = toml_table_find(t, key, strlen(key));
    return e ? &e->value : NULL;
}

toml_pos toml_table_pos(const toml_table *t)
{
    return (toml_pos){t->file, t->line, t->col};
}

toml_pos toml_entry_pos(const toml_table *t, const toml_entry *e)
{
    return (toml_pos){t->file, e->line, e->col};
}

bool toml_table_is_inline(const toml_table *t)
{
    return (t->flags & TABLE_INLINE) != 0;
}

bool toml_table_is_implicit(const toml_table *t)
{
    return (t->flags & TABLE_IMPLICIT) != 0;
}

bool toml_table_has_header(const toml_table *t)
{
    return (t->flags & TABLE_HEADER) != 0;
}

size_t toml_array_size(const toml_array *a)
{
    return a->count;
}

const toml_value *toml_array_at(const toml_array *a, size_t i)
{
    return i < a->count ? &a->items[i] : NULL;
}

bool toml_array_is_table_array(const toml_array *a)
{
    return a->table_array;
}

const toml_table *toml_root(const toml_doc *doc)
{
    return doc->root;
}

const char *toml_doc_file(const toml_doc *doc)
{
    return doc->file;
}

size_t toml_doc_footprint(const toml_doc *doc)
{
    return gp_arena_footprint(doc->arena);
}

void toml_free(toml_doc *doc)
{
    if (!doc) return;
    gp_arena_free(doc->arena);
}

/* Arrays of tables grow one [[header]] at a time; inline arrays are built
 * whole by the parser and never pushed to. */
toml_value *toml_array_push(gp_arena *a, toml_array *arr)
{
    if (arr->count == arr->cap) {
        uint32_t cap = arr->cap ? arr->cap * 2 : 1;
        toml_value *items = gp_arena_grow(a, arr->items, (size_t)arr->cap * sizeof(toml_value),
                                          (size_t)cap * sizeof(toml_value));
        if (!items) return NULL;
        arr->items = items;
        arr->cap = cap;
    }
    toml_value *v = &arr->items[arr->count++];
    memset(v, 0, sizeof *v);
    return v;
}
