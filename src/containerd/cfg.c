#include "containerd/cfg_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "toml/toml_json.h"
#include "util/json_out.h"

cd_node *cd_table_new(gp_arena *a, const char *key, size_t keylen, cd_origin origin)
{
    cd_node *n = gp_arena_zalloc(a, sizeof *n);
    if (!n) return NULL;
    n->key = key;
    n->keylen = keylen;
    n->is_table = true;
    n->origin = origin;
    return n;
}

static void append(cd_node *table, cd_node *child)
{
    child->next = NULL;
    if (table->last)
        table->last->next = child;
    else
        table->first = child;
    table->last = child;
}

cd_node *cd_from_toml(gp_arena *a, const toml_table *t, const char *key, size_t keylen,
                      const char *file)
{
    toml_pos p = toml_table_pos(t);
    cd_node *n = cd_table_new(a, key, keylen, (cd_origin){file, p.line, p.col});
    if (!n) return NULL;
    for (size_t i = 0; i < toml_table_size(t); i++) {
        const toml_entry *e = toml_table_entry(t, i);
        cd_node *child;
        if (e->value.type == TOML_TABLE) {
            child = cd_from_toml(a, e->value.u.table, e->key, toml_entry_keylen(e), file);
            if (!child) return NULL;
            /* A table's origin is where its key was written. */
            child->origin = (cd_origin){file, e->line, e->col};
        } else {
            child = gp_arena_zalloc(a, sizeof *child);
            if (!child) return NULL;
            child->key = e->key;
            child->keylen = toml_entry_keylen(e);
            child->value = &e->value;
            child->origin = (cd_origin){file, e->line, e->col};
        }
        append(n, child);
    }
    return n;
}

cd_node *cd_clone(gp_arena *a, const cd_node *n)
{
    cd_node *c = gp_arena_alloc(a, sizeof *c);
    if (!c) return NULL;
    *c = *n;
    c->first = c->last = c->next = NULL;
    for (const cd_node *k = n->first; k; k = k->next) {
        cd_node *kc = cd_clone(a, k);
        if (!kc) return NULL;
        append(c, kc);
    }
    return c;
}

cd_node *cd_childn(const cd_node *table, const char *key, size_t keylen)
{
    if (!table || !table->is_table) return NULL;
    for (cd_node *k = table->first; k; k = k->next)
        if (k->keylen == keylen && memcmp(k->key, key, keylen) == 0) return k;
    return NULL;
}

cd_node *cd_child(const cd_node *table, const char *key)
{
    return cd_childn(table, key, strlen(key));
}

cd_node *cd_path(const cd_node *table, ...)
{
    va_list ap;
    va_start(ap, table);
    const cd_node *n = table;
    for (const char *key = va_arg(ap, const char *); key && n; key = va_arg(ap, const char *))
        n = cd_child(n, key);
    va_end(ap);
    return (cd_node *)n;
}

void cd_set(cd_node *table, cd_node *child)
{
    for (cd_node **at = &table->first; *at; at = &(*at)->next) {
        cd_node *old = *at;
        if (old->keylen != child->keylen || memcmp(old->key, child->key, child->keylen) != 0)
            continue;
        child->next = old->next;
        *at = child;
        if (table->last == old) table->last = child;
        return;
    }
    append(table, child);
}

cd_node *cd_take(cd_node *table, const char *key)
{
    size_t keylen = strlen(key);
    cd_node *prev = NULL;
    for (cd_node *k = table->first; k; prev = k, k = k->next) {
        if (k->keylen != keylen || memcmp(k->key, key, keylen) != 0) continue;
        if (prev)
            prev->next = k->next;
        else
            table->first = k->next;
        if (table->last == k) table->last = prev;
        k->next = NULL;
        return k;
    }
    return NULL;
}

cd_node *cd_table_at(gp_arena *a, cd_node *table, const char *key, cd_origin origin)
{
    cd_node *n = cd_child(table, key);
    if (n) return n->is_table ? n : NULL;
    n = cd_table_new(a, key, strlen(key), origin);
    if (n) append(table, n);
    return n;
}

void cd_merge_deep(gp_arena *a, cd_node *dst, const cd_node *src)
{
    for (const cd_node *s = src->first; s; s = s->next) {
        cd_node *d = cd_childn(dst, s->key, s->keylen);
        if (d && d->is_table && s->is_table) {
            cd_merge_deep(a, d, s);
            continue;
        }
        cd_node *copy = cd_clone(a, s);
        if (copy) cd_set(dst, copy);
    }
}

size_t cd_count_children(const cd_node *table)
{
    size_t n = 0;
    for (const cd_node *k = table ? table->first : NULL; k; k = k->next)
        n++;
    return n;
}

enum { MAX_WALK_DEPTH = 1024 };

static void walk(const cd_node *n, const cd_node **path, size_t depth, cd_leaf_fn fn, void *ctx)
{
    if (depth >= MAX_WALK_DEPTH) return;
    path[depth] = n;
    if (!n->is_table) {
        fn(n, path + 1, depth, ctx);
        return;
    }
    for (const cd_node *k = n->first; k; k = k->next)
        walk(k, path, depth + 1, fn, ctx);
}

void cd_walk_leaves(const cd_node *n, cd_leaf_fn fn, void *ctx)
{
    /* On the heap: a zeroed 8 KiB array per walk was most of a merge's time. */
    const cd_node **path = malloc((MAX_WALK_DEPTH + 1) * sizeof *path);
    if (!path) return;
    walk(n, path, 0, fn, ctx);
    free(path);
}

/* Writes the dotted path into out (snprintf-style); returns its length. */
static size_t format_path(const cd_node *const *path, size_t depth, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < depth; i++) {
        if (i) {
            if (n + 1 < cap) out[n] = '.';
            n++;
        }
        n += toml_format_key(path[i]->key, path[i]->keylen, n < cap ? out + n : NULL,
                             n < cap ? cap - n : 0);
    }
    if (cap) out[n < cap ? n : cap - 1] = '\0';
    return n;
}

char *cd_path_text(const cd_node *const *path, size_t depth)
{
    char small[512];
    size_t n = format_path(path, depth, small, sizeof small);
    if (n < sizeof small) return strdup(small);
    char *big = malloc(n + 1);
    if (big) format_path(path, depth, big, n + 1);
    return big;
}

void cd_write_json(const cd_node *n, FILE *out)
{
    if (!n->is_table) {
        toml_write_json(n->value, TOML_JSON_PLAIN, out);
        return;
    }
    putc('{', out);
    for (const cd_node *k = n->first; k; k = k->next) {
        if (k != n->first) putc(',', out);
        gp_json_string(out, k->key, k->keylen);
        putc(':', out);
        cd_write_json(k, out);
    }
    putc('}', out);
}
