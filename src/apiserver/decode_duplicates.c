/* Duplicate fields, as sigs.k8s.io/json's DisallowDuplicateFields finds
 * them: jansson keeps the last of two equal keys, as encoding/json does,
 * so the keys are read again from the text with yajl's event parser, each
 * object knowing its Go type. Only bodies jansson found duplicates in come
 * here. */
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "apiserver/decode_internal.h"

#define MAX_DEPTH 128

typedef struct frame {
    const as_gotype *type; /* NULL: not checked (unknown, free-form) */
    json_t *seen;          /* keys of an object */
    size_t path_len;       /* the path where it starts */
    size_t index;          /* the next element of an array */
    bool array;
} frame;

typedef struct scan {
    frame stack[MAX_DEPTH];
    size_t depth;
    const as_gotype *next; /* the type of the value to come */
    as_decode_path path;
    json_t *strict;
    size_t added;
} scan;

/* The value to come is an element of an array: its index joins the path. */
static void before_value(scan *s)
{
    if (s->depth == 0) return;
    frame *f = &s->stack[s->depth - 1];
    if (!f->array) return;
    as_decode_path_cut(&s->path, f->path_len);
    as_decode_path_index(&s->path, f->index++);
    s->next = f->type ? f->type->elem : NULL;
}

static void after_value(scan *s)
{
    if (s->depth == 0) return;
    frame *f = &s->stack[s->depth - 1];
    as_decode_path_cut(&s->path, f->path_len);
}

static int scalar(void *ctx)
{
    scan *s = ctx;
    before_value(s);
    after_value(s);
    return 1;
}

static int on_null(void *ctx)
{
    return scalar(ctx);
}

static int on_bool(void *ctx, int b)
{
    (void)b;
    return scalar(ctx);
}

static int on_number(void *ctx, const char *n, size_t len)
{
    (void)n;
    (void)len;
    return scalar(ctx);
}

static int on_string(void *ctx, const unsigned char *v, size_t len)
{
    (void)v;
    (void)len;
    return scalar(ctx);
}

static int push(scan *s, bool array)
{
    before_value(s);
    if (s->depth == MAX_DEPTH) return 0;
    const as_gotype *t = s->next;
    /* a struct takes an object, a slice an array; anything else is a type
     * error the walk reports, and is not looked into */
    if (t && !(array ? t->k == GT_SLICE : (t->k == GT_STRUCT || t->k == GT_MAP))) t = NULL;
    s->stack[s->depth++] = (frame){
        .type = t, .seen = array ? NULL : json_object(), .path_len = s->path.len, .array = array};
    return 1;
}

static int on_start_map(void *ctx)
{
    return push(ctx, false);
}

static int on_start_array(void *ctx)
{
    return push(ctx, true);
}

static int pop(void *ctx)
{
    scan *s = ctx;
    frame *f = &s->stack[--s->depth];
    json_decref(f->seen);
    as_decode_path_cut(&s->path, f->path_len);
    after_value(s);
    return 1;
}

static int on_key(void *ctx, const unsigned char *k, size_t len)
{
    scan *s = ctx;
    frame *f = &s->stack[s->depth - 1];
    as_decode_path_cut(&s->path, f->path_len);
    char *key = strndup((const char *)k, len);
    if (!key) return 0;
    s->next = NULL;
    if (f->type) {
        const as_gotype *ft =
            f->type->k == GT_MAP ? f->type->elem : as_gostruct_field(f->type->st, key);
        if (ft || f->type->k == GT_MAP) {
            if (json_object_get(f->seen, key)) {
                size_t before = json_array_size(s->strict);
                as_decode_strict_add(s->strict, "duplicate", &s->path, key);
                s->added += json_array_size(s->strict) - before;
            } else {
                json_object_set_new(f->seen, key, json_true());
            }
            s->next = ft;
        }
    }
    as_decode_path_key(&s->path, key);
    free(key);
    return 1;
}

static const yajl_callbacks callbacks = {
    on_null,      on_bool, NULL, NULL,           on_number, on_string,
    on_start_map, on_key,  pop,  on_start_array, pop,
};

size_t as_decode_duplicates(const char *text, size_t len, const as_gotype *t, json_t *strict)
{
    scan *s = calloc(1, sizeof *s);
    if (!s) return 0;
    s->strict = strict;
    s->next = t;
    yajl_handle h = yajl_alloc(&callbacks, NULL, s);
    if (h) {
        yajl_config(h, yajl_allow_multiple_values, 0);
        if (yajl_parse(h, (const unsigned char *)text, len) == yajl_status_ok)
            yajl_complete_parse(h);
        yajl_free(h);
    }
    while (s->depth)
        json_decref(s->stack[--s->depth].seen);
    size_t added = s->added;
    free(s);
    return added;
}
