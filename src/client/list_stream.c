#include "client/list_stream.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

/* ---- the field trie ----------------------------------------------------- */

typedef struct trie {
    char *key;
    bool all; /* the whole subtree is kept */
    struct trie **kids;
    size_t n;
} trie;

struct kc_fields {
    trie root;
};

static void trie_free(trie *t)
{
    for (size_t i = 0; i < t->n; i++) {
        trie_free(t->kids[i]);
        free(t->kids[i]);
    }
    free(t->kids);
    free(t->key);
}

static const trie *trie_child(const trie *t, const char *key, size_t len)
{
    for (size_t i = 0; i < t->n; i++)
        if (strlen(t->kids[i]->key) == len && memcmp(t->kids[i]->key, key, len) == 0)
            return t->kids[i];
    return NULL;
}

static trie *trie_add(trie *t, const char *key, size_t len)
{
    trie *k = (trie *)trie_child(t, key, len);
    if (k) return k;
    trie **kids = realloc(t->kids, (t->n + 1) * sizeof *kids);
    if (!kids) return NULL;
    t->kids = kids;
    k = calloc(1, sizeof *k);
    if (!k || !(k->key = strndup(key, len))) {
        free(k);
        return NULL;
    }
    t->kids[t->n++] = k;
    return k;
}

kc_fields *kc_fields_new(const char *const *paths)
{
    kc_fields *f = calloc(1, sizeof *f);
    for (size_t i = 0; f && paths && paths[i]; i++) {
        trie *t = &f->root;
        for (const char *p = paths[i]; t && *p;) {
            size_t len = strcspn(p, ".");
            t = trie_add(t, p, len);
            p += len + (p[len] == '.');
        }
        if (!t) {
            kc_fields_free(f);
            return NULL;
        }
        t->all = true;
    }
    return f;
}

void kc_fields_free(kc_fields *f)
{
    if (!f) return;
    trie_free(&f->root);
    free(f);
}

/* ---- the parser ----------------------------------------------------------- */

typedef enum role {
    ROLE_DOC,      /* the list object */
    ROLE_DOC_META, /* its metadata: continue */
    ROLE_ITEMS,    /* its items array */
    ROLE_ITEM,     /* one item: the value built is handed to the callback */
    ROLE_INNER,    /* a container inside an item */
    ROLE_SKIP,     /* a container nothing of which is kept */
} role;

typedef struct frame {
    role role;
    json_t *value;    /* ITEM and INNER: the container being filled */
    const trie *node; /* what of its children is kept (NULL with all) */
    bool all;
} frame;

struct kc_list_parser {
    yajl_handle h;
    const kc_fields *keep;
    kc_stream_item_fn each;
    void *ud;
    frame *stack;
    size_t depth, cap;
    char *key; /* the pending map key of the top frame */
    size_t key_len, key_cap;
    char *kind, *api_version, *cont;
    bool saw_items, stopped, oom;
    /* kc_object_parse_exact: the text is one object (the root is the
     * item); inexact stops a parse jansson would read otherwise */
    bool exact, inexact, duplicate;
};

static frame *top(kc_list_parser *p)
{
    return p->depth ? &p->stack[p->depth - 1] : NULL;
}

static bool key_is(const kc_list_parser *p, const char *s)
{
    return p->key && strlen(s) == p->key_len && memcmp(p->key, s, p->key_len) == 0;
}

static int push(kc_list_parser *p, frame f)
{
    if (p->depth == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 32;
        frame *s = realloc(p->stack, cap * sizeof *s);
        if (!s) {
            p->oom = true;
            return 0;
        }
        p->stack = s;
        p->cap = cap;
    }
    p->stack[p->depth++] = f;
    return 1;
}

/* Where a value at the current position goes: kept (with the trie node for
 * its children) or not. */
static bool kept(kc_list_parser *p, const trie **node, bool *all)
{
    frame *f = top(p);
    *node = NULL;
    *all = false;
    if (!f || (f->role != ROLE_ITEM && f->role != ROLE_INNER)) return false;
    if (f->all) {
        *all = true;
        return true;
    }
    if (json_is_array(f->value)) { /* arrays are transparent */
        *node = f->node;
        return true;
    }
    const trie *t = p->key ? trie_child(f->node, p->key, p->key_len) : NULL;
    if (!t) return false;
    *node = t;
    *all = t->all;
    return true;
}

/* Puts v (stolen) into the top frame's container. */
static int attach(kc_list_parser *p, json_t *v)
{
    frame *f = top(p);
    if (!v) {
        p->oom = true;
        return 0;
    }
    if (p->exact && !json_is_array(f->value) && json_object_getn(f->value, p->key, p->key_len))
        p->duplicate = true;
    int rc = json_is_array(f->value) ? json_array_append_new(f->value, v)
                                     : json_object_setn_new(f->value, p->key, p->key_len, v);
    if (rc != 0) p->oom = true;
    return rc == 0;
}

static void set_text(char **dst, const unsigned char *s, size_t len)
{
    free(*dst);
    *dst = strndup((const char *)s, len);
}

static int scalar(kc_list_parser *p, json_t *v)
{
    frame *f = top(p);
    const trie *node;
    bool all;
    if (f && f->role == ROLE_DOC && json_is_string(v)) {
        if (key_is(p, "kind"))
            set_text(&p->kind, (const unsigned char *)json_string_value(v), json_string_length(v));
        if (key_is(p, "apiVersion"))
            set_text(&p->api_version, (const unsigned char *)json_string_value(v),
                     json_string_length(v));
    } else if (f && f->role == ROLE_DOC_META && json_is_string(v) && key_is(p, "continue")) {
        set_text(&p->cont, (const unsigned char *)json_string_value(v), json_string_length(v));
    } else if (kept(p, &node, &all)) {
        return attach(p, v);
    }
    json_decref(v);
    return 1;
}

static int on_null(void *ctx)
{
    return scalar(ctx, json_null());
}

static int on_boolean(void *ctx, int b)
{
    return scalar(ctx, json_boolean(b));
}

/* Integers that fit, else reals, as jansson reads JSON numbers. */
static int on_number(void *ctx, const char *s, size_t len)
{
    kc_list_parser *p = ctx;
    char buf[64];
    /* jansson reads reals through the locale's decimal point and refuses
     * integers out of range: left to it */
    if (p->exact &&
        (len >= sizeof buf || memchr(s, '.', len) || memchr(s, 'e', len) || memchr(s, 'E', len))) {
        p->inexact = true;
        return 0;
    }
    if (len >= sizeof buf) return scalar(ctx, json_real(0));
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (!strpbrk(buf, ".eE")) {
        errno = 0;
        long long v = strtoll(buf, NULL, 10);
        if (errno != ERANGE) return scalar(ctx, json_integer(v));
        if (p->exact) {
            p->inexact = true;
            return 0;
        }
    }
    return scalar(ctx, json_real(strtod(buf, NULL)));
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
    kc_list_parser *p = ctx;
    frame *f = top(p);
    /* Most strings are dropped: test before building them. */
    const trie *node;
    bool all;
    if (f && (f->role == ROLE_ITEM || f->role == ROLE_INNER) && !kept(p, &node, &all)) return 1;
    if (f && f->role == ROLE_SKIP) return 1;
    return scalar(p, json_stringn((const char *)s, len));
}

static int on_key(void *ctx, const unsigned char *s, size_t len)
{
    kc_list_parser *p = ctx;
    if (top(p) && top(p)->role == ROLE_SKIP) return 1;
    if (len + 1 > p->key_cap) {
        char *k = realloc(p->key, len + 1);
        if (!k) {
            p->oom = true;
            return 0;
        }
        p->key = k;
        p->key_cap = len + 1;
    }
    memcpy(p->key, s, len);
    p->key[len] = '\0';
    p->key_len = len;
    return 1;
}

/* jansson's JSON_PARSER_MAX_DEPTH is 2048: deeper is its error */
#define EXACT_MAX_DEPTH 2000

static int open_container(kc_list_parser *p, bool array)
{
    frame *f = top(p);
    if (p->exact && (p->depth >= EXACT_MAX_DEPTH || (!f && array))) {
        p->inexact = true;
        return 0;
    }
    if (!f && p->exact) {
        json_t *item = json_object();
        if (!item) {
            p->oom = true;
            return 0;
        }
        return push(p, (frame){ROLE_ITEM, item, NULL, true});
    }
    if (!f)
        return array ? push(p, (frame){ROLE_SKIP, NULL, NULL, false})
                     : push(p, (frame){ROLE_DOC, NULL, NULL, false});
    switch (f->role) {
    case ROLE_DOC:
        if (!array && key_is(p, "metadata"))
            return push(p, (frame){ROLE_DOC_META, NULL, NULL, false});
        if (array && key_is(p, "items")) {
            p->saw_items = true;
            return push(p, (frame){ROLE_ITEMS, NULL, NULL, false});
        }
        return push(p, (frame){ROLE_SKIP, NULL, NULL, false});
    case ROLE_ITEMS: {
        if (array) return push(p, (frame){ROLE_SKIP, NULL, NULL, false});
        json_t *item = json_object();
        if (!item) {
            p->oom = true;
            return 0;
        }
        const trie *root = p->keep ? &p->keep->root : NULL;
        return push(p, (frame){ROLE_ITEM, item, root, root == NULL});
    }
    case ROLE_ITEM:
    case ROLE_INNER: {
        const trie *node;
        bool all;
        if (!kept(p, &node, &all)) return push(p, (frame){ROLE_SKIP, NULL, NULL, false});
        json_t *v = array ? json_array() : json_object();
        if (!attach(p, v)) return 0;
        return push(p, (frame){ROLE_INNER, v, node, all});
    }
    default:
        return push(p, (frame){ROLE_SKIP, NULL, NULL, false});
    }
}

static int on_start_map(void *ctx)
{
    return open_container(ctx, false);
}

static int on_start_array(void *ctx)
{
    return open_container(ctx, true);
}

/* Typed list items carry no kind or apiVersion: they come from the list's
 * ("PodList" -> "Pod"), as kubectl fills them in before printing. */
static void fill_item_type(const kc_list_parser *p, json_t *item)
{
    if (p->api_version && !json_object_get(item, "apiVersion"))
        json_object_set_new(item, "apiVersion", json_string(p->api_version));
    size_t n = p->kind ? strlen(p->kind) : 0;
    if (n > 4 && strcmp(p->kind + n - 4, "List") == 0 && !json_object_get(item, "kind"))
        json_object_set_new(item, "kind", json_stringn(p->kind, n - 4));
}

static int close_container(void *ctx)
{
    kc_list_parser *p = ctx;
    frame f = p->stack[--p->depth];
    if (f.role != ROLE_ITEM) return 1;
    fill_item_type(p, f.value);
    int stop = p->each ? p->each(f.value, p->ud) : 0;
    json_decref(f.value);
    if (stop) p->stopped = true;
    return !stop;
}

static const yajl_callbacks callbacks = {
    on_null,        on_boolean,      NULL,
    NULL,           on_number,       on_string,
    on_start_map,   on_key,          close_container,
    on_start_array, close_container,
};

kc_list_parser *kc_list_parser_new(const kc_fields *keep, kc_stream_item_fn each, void *ud)
{
    kc_list_parser *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->keep = keep;
    p->each = each;
    p->ud = ud;
    p->h = yajl_alloc(&callbacks, NULL, p);
    if (!p->h) {
        free(p);
        return NULL;
    }
    return p;
}

static void parse_error(kc_list_parser *p, const char *data, size_t len, gp_error *err)
{
    if (p->oom) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return;
    }
    unsigned char *text = yajl_get_error(p->h, 0, (const unsigned char *)data, len);
    gp_error_set(err, NULL, 0, 0, "the answer is not JSON: %s",
                 text ? (const char *)text : "parse error");
    if (text) yajl_free_error(p->h, text);
}

int kc_list_parser_feed(kc_list_parser *p, const char *data, size_t len, gp_error *err)
{
    yajl_status st = yajl_parse(p->h, (const unsigned char *)data, len);
    if (st == yajl_status_ok) return 0;
    if (p->stopped) return 1;
    parse_error(p, data, len, err);
    return -1;
}

int kc_list_parser_finish(kc_list_parser *p, char **continue_token, gp_error *err)
{
    *continue_token = NULL;
    if (yajl_complete_parse(p->h) != yajl_status_ok) {
        parse_error(p, NULL, 0, err);
        return -1;
    }
    if (p->cont && *p->cont) *continue_token = strdup(p->cont);
    return 0;
}

int kc_list_parser_saw_items(const kc_list_parser *p)
{
    return p->saw_items;
}

void kc_list_parser_free(kc_list_parser *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->depth; i++)
        if (p->stack[i].role == ROLE_ITEM) json_decref(p->stack[i].value);
    yajl_free(p->h);
    free(p->stack);
    free(p->key);
    free(p->kind);
    free(p->api_version);
    free(p->cont);
    free(p);
}

static int keep_one(json_t *item, void *ud)
{
    json_t **out = ud;
    if (!*out) *out = json_incref(item);
    return 0;
}

json_t *kc_object_parse(const kc_fields *keep, const char *text, size_t len)
{
    /* one object is a list of one: the same builder, with no copy of the
     * text (three feeds) */
    static const char head[] = "{\"items\":[", tail[] = "]}";
    json_t *out = NULL;
    kc_list_parser *p = kc_list_parser_new(keep, keep_one, &out);
    gp_error err;
    char *cont = NULL;
    if (!p || kc_list_parser_feed(p, head, sizeof head - 1, &err) < 0 ||
        kc_list_parser_feed(p, text, len, &err) < 0 ||
        kc_list_parser_feed(p, tail, sizeof tail - 1, &err) < 0 ||
        kc_list_parser_finish(p, &cont, &err) != 0 || !kc_list_parser_saw_items(p)) {
        json_decref(out);
        out = NULL;
    }
    free(cont);
    kc_list_parser_free(p);
    return out;
}

/* Whether the text holds a \u0000 escape (a backslash escapes the
 * character after it: \\u0000 is a backslash and "u0000"). */
static bool has_nul_escape(const char *text, size_t len)
{
    const char *end = text + len;
    for (const char *p = memchr(text, '\\', len); p; p = memchr(p, '\\', (size_t)(end - p))) {
        if (end - p >= 6 && memcmp(p + 1, "u0000", 5) == 0) return true;
        p += 2; /* past the escaped character */
        if (p >= end) break;
    }
    return false;
}

json_t *kc_object_parse_dumped(const char *text, size_t len)
{
    if (has_nul_escape(text, len)) return json_loadb(text, len, 0, NULL);
    return kc_object_parse(NULL, text, len);
}

/* Whether the builder reads text as jansson would: ASCII only (yajl lets
 * overlong and surrogate UTF-8 through, jansson does not), no \u escape
 * (yajl makes '?' of a lone surrogate, jansson refuses it), no form feed
 * or vertical tab (whitespace to yajl, not to JSON), and nothing but
 * whitespace after the object closes (yajl lets a token cut short at the
 * end pass, `{} "`): braces are counted outside strings. */
static bool exact_candidate(const char *text, size_t len)
{
    size_t depth = 0;
    bool in_string = false, closed = false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x80 || c == '\f' || c == '\v') return false;
        if (closed && c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
        if (in_string) {
            if (c == '\\') {
                if (i + 1 < len && text[i + 1] == 'u') return false;
                i++; /* the escaped character */
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if ((c == '}' || c == ']') && depth > 0 && --depth == 0) {
            closed = true;
        }
    }
    return closed;
}

json_t *kc_object_parse_exact(const char *text, size_t len, bool *duplicates)
{
    *duplicates = false;
    if (!exact_candidate(text, len)) return NULL;
    json_t *out = NULL;
    kc_list_parser *p = kc_list_parser_new(NULL, keep_one, &out);
    if (!p) return NULL;
    p->exact = true;
    gp_error err;
    char *cont = NULL;
    bool ok = kc_list_parser_feed(p, text, len, &err) == 0 &&
              kc_list_parser_finish(p, &cont, &err) == 0 && !p->inexact && out;
    free(cont);
    if (ok) *duplicates = p->duplicate;
    kc_list_parser_free(p);
    if (!ok) {
        json_decref(out);
        out = NULL;
    }
    return out;
}

json_t *kc_fields_prune(const kc_fields *keep, const json_t *obj)
{
    char *text = json_dumps(obj, JSON_COMPACT);
    if (!text) return NULL;
    json_t *out = kc_object_parse(keep, text, strlen(text));
    free(text);
    return out;
}
