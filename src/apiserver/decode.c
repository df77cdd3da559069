/* Request bodies against the Go types of the served kinds (decode.h): the
 * type table read from data/kube-types-1.32.txt, and the walk that finds
 * what sigs.k8s.io/json or the unstructured converter would refuse. */
#include "apiserver/decode.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/decode_internal.h"
#include "apiserver/kube_types_data.h"
#include "apiserver/strategy_internal.h"
#include "kube/json.h"
#include "util/buf.h"

/* ---- the type table ---- */

static as_gotype scalar_types[] = {
    [GT_STRING] = {GT_STRING, "string", NULL, NULL},
    [GT_BOOL] = {GT_BOOL, "bool", NULL, NULL},
    [GT_INT32] = {GT_INT32, "int32", NULL, NULL},
    [GT_INT64] = {GT_INT64, "int64", NULL, NULL},
    [GT_FLOAT64] = {GT_FLOAT64, "float64", NULL, NULL},
    [GT_BYTES] = {GT_BYTES, "[]uint8", NULL, NULL},
    [GT_QUANTITY] = {GT_QUANTITY, "resource.Quantity", NULL, NULL},
    [GT_INTSTR] = {GT_INTSTR, "intstr.IntOrString", NULL, NULL},
    [GT_TIME] = {GT_TIME, "v1.Time", NULL, NULL},
    [GT_MICROTIME] = {GT_MICROTIME, "v1.MicroTime", NULL, NULL},
    [GT_ANY] = {GT_ANY, "runtime.RawExtension", NULL, NULL},
};
static const char *const scalar_names[] = {
    [GT_STRING] = "string",       [GT_BOOL] = "bool",       [GT_INT32] = "int32",
    [GT_INT64] = "int64",         [GT_FLOAT64] = "float64", [GT_BYTES] = "bytes",
    [GT_QUANTITY] = "quantity",   [GT_INTSTR] = "intstr",   [GT_TIME] = "time",
    [GT_MICROTIME] = "microtime", [GT_ANY] = "any"};

typedef struct root {
    char *kind; /* "Pod", "events.k8s.io/Event" */
    as_gostruct *st;
} root;

static struct table {
    as_gostruct *structs;
    size_t nstructs;
    root *roots;
    size_t nroots;
    bool ok;
} table;

/* Everything the table allocates lives as long as the process: one list
 * of blocks, so that nothing is lost to a leak checker's eye. */
static void **arena;
static size_t arena_n, arena_cap;

static void *arena_keep(void *p)
{
    if (!p) return NULL;
    if (arena_n == arena_cap) {
        size_t cap = arena_cap ? arena_cap * 2 : 256;
        void **grown = realloc(arena, cap * sizeof *grown);
        if (!grown) {
            free(p);
            return NULL;
        }
        arena = grown;
        arena_cap = cap;
    }
    arena[arena_n++] = p;
    return p;
}

static char *arena_strndup(const char *s, size_t n)
{
    char *c = arena_keep(malloc(n + 1));
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

static as_gotype *new_type(gt_kind k, const char *go, const as_gotype *elem, as_gostruct *st)
{
    as_gotype *t = arena_keep(malloc(sizeof *t));
    if (t) *t = (as_gotype){k, go, elem, st};
    return t;
}

static as_gostruct *struct_by_id(const char *id, size_t len)
{
    for (size_t i = 0; i < table.nstructs; i++)
        if (strlen(table.structs[i].id) == len && strncmp(table.structs[i].id, id, len) == 0)
            return &table.structs[i];
    return NULL;
}

/* A TYPE of the data file; `go` (NULL: the default) is the Go name of the
 * whole, from which an element's is derived ("[]v1.FinalizerName" makes
 * its elements v1.FinalizerName). */
static const as_gotype *parse_type(const char *s, size_t len, const char *go)
{
    if (go && *go == '*') go++; /* a pointer's error names what it points to */
    if (len > 2 && strncmp(s, "[]", 2) == 0) {
        const char *elem_go = go && strncmp(go, "[]", 2) == 0 ? go + 2 : NULL;
        const as_gotype *e = parse_type(s + 2, len - 2, elem_go);
        if (!e) return NULL;
        return new_type(GT_SLICE, go ? go : arena_keep(gp_format("[]%s", e->go)), e, NULL);
    }
    if (len > 11 && strncmp(s, "map[string]", 11) == 0) {
        const char *elem_go = go && strncmp(go, "map[string]", 11) == 0 ? go + 11 : NULL;
        const as_gotype *e = parse_type(s + 11, len - 11, elem_go);
        if (!e) return NULL;
        return new_type(GT_MAP, go ? go : arena_keep(gp_format("map[string]%s", e->go)), e, NULL);
    }
    for (int k = 0; k <= GT_ANY; k++)
        if (strlen(scalar_names[k]) == len && strncmp(s, scalar_names[k], len) == 0)
            return go ? new_type((gt_kind)k, go, NULL, NULL) : &scalar_types[k];
    as_gostruct *st = struct_by_id(s, len);
    if (!st) return NULL;
    return go ? new_type(GT_STRUCT, go, NULL, st) : &st->self;
}

static int field_cmp(const void *a, const void *b)
{
    return strcmp(((const as_gofield *)a)->name, ((const as_gofield *)b)->name);
}

/* The words of a line, at most 4. */
static size_t words(const char *line, size_t len, const char *w[4], size_t wl[4])
{
    size_t n = 0, i = 0;
    while (i < len && n < 4) {
        while (i < len && line[i] == ' ')
            i++;
        if (i == len) break;
        size_t start = i;
        while (i < len && line[i] != ' ')
            i++;
        w[n] = line + start;
        wl[n++] = i - start;
    }
    return n;
}

static bool word_is(const char *w, size_t len, const char *lit)
{
    return strlen(lit) == len && strncmp(w, lit, len) == 0;
}

/* Two passes over the text: the structs' names first (fields refer to
 * structs defined later), then their fields and the roots. */
static void load_table(void)
{
    const char *text = as_kube_types;
    size_t n = as_kube_types_len;
    size_t count = 0;
    for (size_t i = 0; i + 7 < n; i++)
        if ((i == 0 || text[i - 1] == '\n') && strncmp(text + i, "struct ", 7) == 0) count++;
    table.structs = arena_keep(calloc(count ? count : 1, sizeof *table.structs));
    table.roots = arena_keep(calloc(32, sizeof *table.roots));
    if (!table.structs || !table.roots) return;
    for (int pass = 0; pass < 2; pass++) {
        as_gostruct *cur = NULL;
        for (size_t at = 0; at < n;) {
            const char *line = text + at;
            const char *end = memchr(line, '\n', n - at);
            size_t len = end ? (size_t)(end - line) : n - at;
            at += len + 1;
            const char *w[4];
            size_t wl[4];
            size_t nw = words(line, len, w, wl);
            if (nw == 0 || w[0][0] == '#') continue;
            if (word_is(w[0], wl[0], "struct") && nw >= 2) {
                if (pass == 0) {
                    as_gostruct *s = &table.structs[table.nstructs++];
                    s->id = arena_strndup(w[1], wl[1]);
                    s->go_name = nw >= 3 ? arena_strndup(w[2], wl[2]) : s->id;
                    s->self =
                        (as_gotype){GT_STRUCT, arena_keep(gp_format("v1.%s", s->go_name)), NULL, s};
                    /* its fields: the lines up to the next blank one */
                    size_t lines = 0;
                    for (size_t i = at; i < n && text[i] != '\n'; lines++) {
                        const char *nl = memchr(text + i, '\n', n - i);
                        i = nl ? (size_t)(nl - text) + 1 : n;
                    }
                    s->fields = arena_keep(calloc(lines ? lines : 1, sizeof *s->fields));
                    if (!s->id || !s->go_name || !s->self.go || !s->fields) return;
                } else {
                    cur = struct_by_id(w[1], wl[1]);
                }
                continue;
            }
            if (pass == 0) continue;
            if (word_is(w[0], wl[0], "root") && nw == 3) {
                if (table.nroots < 32) {
                    root *r = &table.roots[table.nroots++];
                    r->kind = arena_strndup(w[1], wl[1]);
                    r->st = struct_by_id(w[2], wl[2]);
                }
                continue;
            }
            if (!cur || nw < 2) continue;
            char *go = nw >= 3 ? arena_strndup(w[2], wl[2]) : NULL;
            const as_gotype *t = parse_type(w[1], wl[1], go);
            char *name = arena_strndup(w[0], wl[0]);
            if (!t || !name) return;
            cur->fields[cur->nfields++] = (as_gofield){name, t};
        }
    }
    for (size_t i = 0; i < table.nstructs; i++)
        qsort(table.structs[i].fields, table.structs[i].nfields, sizeof(as_gofield), field_cmp);
    table.ok = true;
}

static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* What sigs.k8s.io/json decodes a merge or strategic merge patch into. */
static const as_gotype patch_map = {GT_MAP, "map[string]interface {}", &scalar_types[GT_ANY], NULL};

const as_gotype *as_gotype_find(const char *group, const char *kind)
{
    if (kind && strcmp(kind, "patch") == 0) return &patch_map;
    pthread_once(&table_once, load_table);
    if (!table.ok || !kind) return NULL;
    char key[128];
    if (group && *group && strcmp(group, "events.k8s.io") == 0)
        snprintf(key, sizeof key, "%s/%s", group, kind);
    else
        snprintf(key, sizeof key, "%s", kind);
    for (size_t i = 0; i < table.nroots; i++)
        if (strcmp(table.roots[i].kind, key) == 0 && table.roots[i].st)
            return &table.roots[i].st->self;
    return NULL;
}

const as_gotype *as_gostruct_field(const as_gostruct *st, const char *name)
{
    size_t lo = 0, hi = st->nfields;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(st->fields[mid].name, name);
        if (c == 0) return st->fields[mid].type;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ---- paths ---- */

/* Appends n bytes, cut at the buffer's end (a path that long is only ever
 * an error's text). Every field of every body passes here: no printf. */
static void path_add(as_decode_path *p, const char *s, size_t n)
{
    size_t room = sizeof p->text - 1 - p->len;
    if (n > room) n = room;
    memcpy(p->text + p->len, s, n);
    p->len += n;
    p->text[p->len] = '\0';
}

void as_decode_path_key(as_decode_path *p, const char *key)
{
    if (p->len) path_add(p, ".", 1);
    path_add(p, key, strlen(key));
}

void as_decode_path_index(as_decode_path *p, size_t i)
{
    char num[24];
    int n = snprintf(num, sizeof num, "[%zu]", i);
    path_add(p, num, n > 0 ? (size_t)n : 0);
}

void as_decode_path_cut(as_decode_path *p, size_t len)
{
    p->len = len;
    p->text[len] = '\0';
}

/* sigs.k8s.io/json keeps each strict error once, and at most 100. */
void as_decode_strict_add(json_t *strict, const char *what, const as_decode_path *path,
                          const char *key)
{
    if (!strict || json_array_size(strict) >= 100) return;
    gp_buf b = {0};
    gp_buf_addf(&b, "%s field \"%s%s%s\"", what, path->text, path->len ? "." : "", key);
    char *msg = gp_buf_take(&b);
    if (!msg) return;
    size_t i;
    json_t *v;
    json_array_foreach(strict, i, v) if (strcmp(json_string_value(v), msg) == 0)
    {
        free(msg);
        return;
    }
    json_array_append_new(strict, json_string(msg));
    free(msg);
}

/* ---- the walk ---- */

typedef struct walker {
    as_decoder decoder;
    json_t *strict; /* NULL unless strict */
    as_decode_path path;
    /* encoding/json's error context: the struct of the field being read and
     * the JSON names of the fields from the root, "." joined */
    const char *context_struct;
    as_decode_path fields;
    char *error;    /* the first type error (encoding/json goes on after it) */
    char *fatal;    /* an error that stopped the decoding */
    size_t unknown; /* fields no struct has, strict or not */
} walker;

/* A number as its JSON text (a real in the shortest form that reads back). */
static void number_text(const json_t *v, char *buf, size_t size)
{
    if (json_is_integer(v)) {
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return;
    }
    double d = json_real_value(v);
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, d);
        if (strtod(buf, NULL) == d) return;
    }
}

/* encoding/json's UnmarshalTypeError, with the context it has. */
static char *type_error(const walker *w, const char *value, const char *go)
{
    if (w->context_struct)
        return gp_format("json: cannot unmarshal %s into Go struct field %s.%s of type %s", value,
                         w->context_struct, w->fields.text, go);
    return gp_format("json: cannot unmarshal %s into Go value of type %s", value, go);
}

static void save_error(walker *w, char *msg)
{
    if (!w->error)
        w->error = msg;
    else
        free(msg);
}

/* The unstructured converter's kinds of a decoded value. */
static const char *unstructured_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "map";
    case JSON_ARRAY:
        return "slice";
    case JSON_STRING:
        return "string";
    case JSON_TRUE:
    case JSON_FALSE:
        return "bool";
    case JSON_INTEGER:
        return "int64";
    default:
        return "float64";
    }
}

/* runtime.DefaultUnstructuredConverter's error for a value that does not
 * go into t (converter.go fromUnstructured): NULL when it converts. */
static char *converter_error(const json_t *v, const as_gotype *t)
{
    const char *kind = unstructured_kind(v);
    if (t->k == GT_MAP) return gp_format("cannot restore map from %s", kind);
    if (t->k == GT_SLICE) return gp_format("cannot restore slice from %s", kind);
    if (t->k == GT_STRUCT) return gp_format("cannot restore struct from: %s", kind);
    bool num = json_is_number(v), str = json_is_string(v);
    bool dest_num = t->k == GT_INT32 || t->k == GT_INT64 || t->k == GT_FLOAT64;
    /* Go's ConvertibleTo among the JSON kinds: numbers to numbers, an
     * integer to a string (a rune), strings to strings, bools to bools */
    bool convertible = (num && dest_num) || (json_is_integer(v) && t->k == GT_STRING) ||
                       (str && t->k == GT_STRING) || (json_is_boolean(v) && t->k == GT_BOOL);
    if (!convertible) {
        static const char *const kind_names[] = {[GT_STRING] = "string",
                                                 [GT_BOOL] = "bool",
                                                 [GT_INT32] = "int32",
                                                 [GT_INT64] = "int64",
                                                 [GT_FLOAT64] = "float64"};
        return gp_format("unrecognized type: %s", kind_names[t->k]);
    }
    if (json_is_integer(v) && dest_num) return NULL;
    if (json_is_real(v) && dest_num) {
        double d = json_real_value(v);
        if (t->k == GT_FLOAT64 || d == (double)(long long)d) return NULL;
        return gp_format("cannot convert float64 to %s", t->go);
    }
    return gp_format("cannot convert %s to %s", unstructured_kind(v), t->go);
}

/* A value of the wrong JSON type for t: encoding/json saves the first and
 * goes on; the converter stops. */
static void mismatch(walker *w, const json_t *v, const as_gotype *t)
{
    if (w->decoder == AS_DECODE_UNSTRUCTURED) {
        if (!w->fatal) w->fatal = converter_error(v, t);
        return;
    }
    char value[80];
    if (json_is_number(v) && (t->k == GT_INT32 || t->k == GT_INT64)) {
        char num[64];
        number_text(v, num, sizeof num);
        snprintf(value, sizeof value, "number %s", num);
    } else {
        snprintf(value, sizeof value, "%s", kube_json_go_kind(v));
    }
    save_error(w, type_error(w, value, t->go));
}

static bool fits_int(const json_t *v, gt_kind k)
{
    if (!json_is_integer(v)) return false;
    json_int_t n = json_integer_value(v);
    return k == GT_INT64 || (n >= INT32_MIN && n <= INT32_MAX);
}

/* base64.StdEncoding.Decode's error for s, or NULL. */
static char *base64_error(const char *s, size_t len)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i = 0, in_quantum = 0;
    for (; i < len; i++) {
        char c = s[i];
        if (c == '\r' || c == '\n') continue;
        if (c == '=') break;
        if (!strchr(alphabet, c) || c == '\0')
            return gp_format("illegal base64 data at input byte %zu", i);
        in_quantum = (in_quantum + 1) % 4;
    }
    if (i == len) {
        if (in_quantum == 0) return NULL;
        return gp_format("illegal base64 data at input byte %zu", len);
    }
    /* padding: 4 - in_quantum of them, then the end */
    size_t pad_at = i;
    if (in_quantum < 2) return gp_format("illegal base64 data at input byte %zu", pad_at);
    size_t want = 4 - in_quantum, got = 0;
    for (; i < len && s[i] == '='; i++)
        got++;
    if (got != want)
        return gp_format("illegal base64 data at input byte %zu",
                         pad_at + (got < want ? got : want));
    if (i != len) return gp_format("illegal base64 data at input byte %zu", i);
    return NULL;
}

static void walk_value(walker *w, const json_t *v, const as_gotype *t);

static void walk_struct(walker *w, const json_t *obj, const as_gostruct *st)
{
    const char *outer = w->context_struct;
    size_t path_len = w->path.len, fields_len = w->fields.len;
    const char *key;
    const json_t *member;
    json_object_foreach((json_t *)obj, key, member)
    {
        const as_gotype *ft = as_gostruct_field(st, key);
        if (!ft) {
            w->unknown++;
            if (w->strict) as_decode_strict_add(w->strict, "unknown", &w->path, key);
            continue;
        }
        w->context_struct = st->go_name;
        as_decode_path_key(&w->fields, key);
        as_decode_path_key(&w->path, key);
        walk_value(w, member, ft);
        as_decode_path_cut(&w->path, path_len);
        as_decode_path_cut(&w->fields, fields_len);
        w->context_struct = outer;
        if (w->fatal) return;
    }
}

/* What a type with its own UnmarshalJSON refuses stops the decoding. */
static void walk_custom(walker *w, const json_t *v, const as_gotype *t)
{
    if (t->k == GT_QUANTITY) {
        char text[256];
        as_quantity_text(v, text, sizeof text);
        const char *why = as_quantity_error(text);
        if (why) w->fatal = strdup(why);
        return;
    }
    /* the others unmarshal into a Go string or int32 first: their error
     * gets the context of the field (encoding/json adds it at the top);
     * the converter marshals the value and calls them, with no context */
    bool unstructured = w->decoder == AS_DECODE_UNSTRUCTURED;
    const char *ctx = w->context_struct;
    if (unstructured) w->context_struct = NULL;
    if (t->k == GT_INTSTR) {
        if (!json_is_string(v) && !fits_int(v, GT_INT32)) {
            char value[80], num[64];
            if (json_is_number(v)) {
                number_text(v, num, sizeof num);
                snprintf(value, sizeof value, "number %s", num);
            } else {
                snprintf(value, sizeof value, "%s", kube_json_go_kind(v));
            }
            w->fatal = type_error(w, value, "int32");
        }
    } else if (!json_is_string(v)) {
        w->fatal = type_error(w, kube_json_go_kind(v), "string");
    } else {
        w->fatal = as_decode_time_error(json_string_value(v), t->k == GT_MICROTIME);
    }
    w->context_struct = ctx;
}

static void walk_value(walker *w, const json_t *v, const as_gotype *t)
{
    if (json_is_null(v) || w->fatal) return; /* null leaves any Go value as it is */
    switch (t->k) {
    case GT_STRING:
        if (!json_is_string(v)) mismatch(w, v, t);
        return;
    case GT_BOOL:
        if (!json_is_boolean(v)) mismatch(w, v, t);
        return;
    case GT_INT32:
    case GT_INT64:
        if (fits_int(v, t->k)) return;
        if (w->decoder == AS_DECODE_UNSTRUCTURED && json_is_real(v) &&
            json_real_value(v) == (double)(long long)json_real_value(v))
            return;
        mismatch(w, v, t);
        return;
    case GT_FLOAT64:
        if (!json_is_number(v)) mismatch(w, v, t);
        return;
    case GT_BYTES:
        if (json_is_array(v)) return; /* a []byte also takes a list of numbers */
        if (!json_is_string(v)) {
            mismatch(w, v, t);
            return;
        }
        char *bad = base64_error(json_string_value(v), json_string_length(v));
        if (!bad) return;
        if (w->decoder == AS_DECODE_UNSTRUCTURED) {
            w->fatal = gp_format("error decoding from json: %s", bad);
            free(bad);
        } else {
            save_error(w, bad);
        }
        return;
    case GT_QUANTITY:
    case GT_INTSTR:
    case GT_TIME:
    case GT_MICROTIME:
        walk_custom(w, v, t);
        return;
    case GT_ANY:
        return;
    case GT_STRUCT:
        if (!json_is_object(v))
            mismatch(w, v, t);
        else
            walk_struct(w, v, t->st);
        return;
    case GT_SLICE: {
        if (!json_is_array(v)) {
            mismatch(w, v, t);
            return;
        }
        size_t path_len = w->path.len, i;
        const json_t *e;
        json_array_foreach((json_t *)v, i, e)
        {
            as_decode_path_index(&w->path, i);
            walk_value(w, e, t->elem);
            as_decode_path_cut(&w->path, path_len);
            if (w->fatal) return;
        }
        return;
    }
    case GT_MAP: {
        if (!json_is_object(v)) {
            mismatch(w, v, t);
            return;
        }
        size_t path_len = w->path.len;
        const char *key;
        const json_t *e;
        json_object_foreach((json_t *)v, key, e)
        {
            as_decode_path_key(&w->path, key);
            walk_value(w, e, t->elem);
            as_decode_path_cut(&w->path, path_len);
            if (w->fatal) return;
        }
        return;
    }
    }
}

int as_decode_check(const json_t *obj, const as_gotype *t, as_decoder decoder, bool strict,
                    as_decode_result *r)
{
    memset(r, 0, sizeof *r);
    r->strict = json_array();
    walker w = {.decoder = decoder, .strict = strict ? r->strict : NULL};
    walk_value(&w, obj, t);
    r->unknown = w.unknown;
    if (w.fatal) {
        free(w.error);
        r->error = w.fatal;
    } else {
        r->error = w.error;
    }
    return r->error ? -1 : 0;
}

/* Drops what no Go struct has, as decoding into the structs drops it. */
static void prune(json_t *v, const as_gotype *t)
{
    if (!v || !t) return;
    if (t->k == GT_STRUCT && json_is_object(v)) {
        const char *key;
        json_t *member;
        void *tmp;
        json_object_foreach_safe(v, tmp, key, member)
        {
            const as_gotype *ft = as_gostruct_field(t->st, key);
            if (!ft)
                json_object_del(v, key);
            else
                prune(member, ft);
        }
    } else if (t->k == GT_SLICE && json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) prune(e, t->elem);
    } else if (t->k == GT_MAP && json_is_object(v)) {
        const char *key;
        json_t *e;
        json_object_foreach(v, key, e) prune(e, t->elem);
    }
}

void as_decode_prune(json_t *obj, const as_gotype *t)
{
    prune(obj, t);
}

void as_decode_result_clear(as_decode_result *r)
{
    free(r->error);
    json_decref(r->strict);
    memset(r, 0, sizeof *r);
}

char *as_decode_strict_message(const json_t *strict)
{
    gp_buf b = {0};
    gp_buf_add(&b, "strict decoding error: ");
    size_t i;
    const json_t *v;
    json_array_foreach((json_t *)strict, i, v)
    {
        if (i) gp_buf_add(&b, ", ");
        gp_buf_add(&b, json_string_value(v));
    }
    return gp_buf_take(&b);
}

/* ---- Go's %+v of map[string]interface{} ---- */

static int key_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void go_value(gp_buf *b, const json_t *v)
{
    char num[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v), i = 0;
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        if (!keys) {
            b->state = GP_BUF_NO_MEMORY;
            return;
        }
        const char *k;
        const json_t *e;
        json_object_foreach((json_t *)v, k, e) keys[i++] = k;
        qsort(keys, n, sizeof *keys, key_cmp);
        gp_buf_add(b, "map[");
        for (i = 0; i < n; i++) {
            if (i) gp_buf_addc(b, ' ');
            gp_buf_addf(b, "%s:", keys[i]);
            go_value(b, json_object_get(v, keys[i]));
        }
        gp_buf_addc(b, ']');
        free(keys);
        return;
    }
    case JSON_ARRAY: {
        size_t i;
        const json_t *e;
        gp_buf_addc(b, '[');
        json_array_foreach((json_t *)v, i, e)
        {
            if (i) gp_buf_addc(b, ' ');
            go_value(b, e);
        }
        gp_buf_addc(b, ']');
        return;
    }
    case JSON_STRING:
        gp_buf_addn(b, json_string_value(v), json_string_length(v));
        return;
    case JSON_TRUE:
        gp_buf_add(b, "true");
        return;
    case JSON_FALSE:
        gp_buf_add(b, "false");
        return;
    case JSON_NULL:
        gp_buf_add(b, "<nil>");
        return;
    default:
        number_text(v, num, sizeof num);
        gp_buf_add(b, num);
        return;
    }
}

char *as_decode_go_value(const json_t *v)
{
    gp_buf b = {0};
    go_value(&b, v);
    return gp_buf_take(&b);
}
