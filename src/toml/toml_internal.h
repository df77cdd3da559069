/* The tree's internals, shared by the parser and the table code. */
#ifndef GPUOP_TOML_INTERNAL_H
#define GPUOP_TOML_INTERNAL_H

#include "toml/toml.h"
#include "util/arena.h"

enum table_flags {
    TABLE_IMPLICIT = 1 << 0, /* created as the parent of a [header] only */
    TABLE_HEADER = 1 << 1,   /* defined by [header] (or an element of [[header]]) */
    TABLE_INLINE = 1 << 2,   /* { ... }: closed to every later addition */
};

struct toml_table {
    toml_entry *entries;
    /* Open addressing over entries, 2 * cap slots holding entry index + 1;
     * NULL while the table is small enough for a linear scan. */
    uint32_t *index;
    const char *file;
    uint32_t count, cap;
    /* The section (counted from 1 at the document's top) in which dotted keys
     * created or went through this table; 0 if none. Dotted keys may only
     * extend a table within that section, and no [header] may define it. */
    uint32_t dotted_section;
    uint32_t line, col;
    uint8_t flags;
    uint16_t depth; /* levels below the root, at most MAX_DEPTH (1000) */
};

struct toml_array {
    toml_value *items;
    uint32_t count, cap;
    bool table_array; /* built by [[header]] */
};

struct toml_doc {
    gp_arena *arena;
    toml_table *root;
    char *file;
};

/* Every key of a document is stored once, in the arena, behind this header;
 * entries point at the text, so two keys are equal when their pointers are. */
typedef struct toml_key_header {
    uint32_t len;
    uint32_t hash;
} toml_key_header;

static inline const toml_key_header *toml_key_header_of(const char *key)
{
    return (const toml_key_header *)(const void *)key - 1;
}

uint32_t toml_hash(const char *key, size_t len);
/* Stores a key with its header in the arena; returns the text. */
const char *toml_key_store(gp_arena *a, const char *key, uint32_t len, uint32_t hash);
toml_table *toml_table_new(gp_arena *a, const char *file, uint32_t line, uint32_t col);
/* Appends an entry for a stored key (toml_key_store). Returns NULL when out
 * of memory. The caller has checked that the key is absent. */
toml_entry *toml_table_add(gp_arena *a, toml_table *t, const char *stored_key);
/* Lookup by a stored key of the same document: pointer comparison. */
toml_entry *toml_table_lookup(const toml_table *t, const char *stored_key);
void toml_table_shrink(gp_arena *a, toml_table *t);
toml_value *toml_array_push(gp_arena *a, toml_array *arr);

#endif
