/* The configuration tree containerd would load, with where each key came from.
 *
 * Parsed files stay read-only (toml_doc); the merge builds this tree out of
 * them, pointing at their values, so every effective key keeps the file,
 * line and column that set it, or says it is a built-in default. All nodes
 * live in one arena owned by the caller. */
#ifndef GPUOP_CONTAINERD_CFG_INTERNAL_H
#define GPUOP_CONTAINERD_CFG_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>

#include "toml/toml.h"
#include "util/arena.h"

typedef struct cd_origin {
    const char *file; /* NULL: containerd's built-in default */
    uint32_t line, col;
} cd_origin;

typedef struct cd_node cd_node;
struct cd_node {
    const char *key;
    size_t keylen;
    bool is_table;
    const toml_value *value; /* leaves: a scalar or an array, owned by a parsed doc */
    cd_origin origin;
    cd_node *first, *last; /* a table's children, in definition order */
    cd_node *next;
};

cd_node *cd_table_new(gp_arena *a, const char *key, size_t keylen, cd_origin origin);
/* A tree for a parsed table; inline tables become tables too. */
cd_node *cd_from_toml(gp_arena *a, const toml_table *t, const char *key, size_t keylen,
                      const char *file);
cd_node *cd_clone(gp_arena *a, const cd_node *n);

cd_node *cd_child(const cd_node *table, const char *key);
cd_node *cd_childn(const cd_node *table, const char *key, size_t keylen);
/* The node at a path of keys (NULL-terminated), or NULL. */
cd_node *cd_path(const cd_node *table, ...);
/* Puts `child` under `table`, replacing a child of the same key in place. */
void cd_set(cd_node *table, cd_node *child);
/* Removes and returns the child with this key, or NULL. */
cd_node *cd_take(cd_node *table, const char *key);
/* The child table `key`, created (with origin) when absent; NULL if a leaf
 * is in the way. */
cd_node *cd_table_at(gp_arena *a, cd_node *table, const char *key, cd_origin origin);

/* containerd 2.x's deep merge: tables merge key by key at every depth, any
 * other value from `src` replaces the one in `dst`. */
void cd_merge_deep(gp_arena *a, cd_node *dst, const cd_node *src);

size_t cd_count_children(const cd_node *table);

/* Calls fn for every leaf under n, with its path (parts[0..depth)). */
typedef void (*cd_leaf_fn)(const cd_node *leaf, const cd_node *const *path, size_t depth,
                           void *ctx);
void cd_walk_leaves(const cd_node *n, cd_leaf_fn fn, void *ctx);

/* A dotted key in TOML syntax for path parts, e.g. plugins."io.containerd.grpc.v1.cri".x,
 * malloc'd. */
char *cd_path_text(const cd_node *const *path, size_t depth);

/* The tree as a JSON object (plain values, as `gpuop toml json`). */
void cd_write_json(const cd_node *n, FILE *out);

#endif
