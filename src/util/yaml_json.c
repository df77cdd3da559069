/* YAML to JSON the way sigs.k8s.io/yaml does it: go-yaml v2 resolution of
 * plain scalars, then the JSON conversion (keys to strings, no infinities).
 *
 * The tree is built from libyaml's events rather than from yaml_parser_load:
 * the loader fills in the default !!str tag on untagged scalars, which makes
 * `!!str 4` indistinguishable from `4`, and typing is the point here. */
#include "util/yaml_json.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util/buf.h"
#include "util/file.h"

/* Nesting deeper than this is refused: the builder recurses, and no
 * Kubernetes object comes near it. */
#define MAX_DEPTH 1000

#define TAG_PREFIX "tag:yaml.org,2002:"

/* ---- scalar resolution (go-yaml v2 resolve.go) ---- */

typedef enum { R_STR, R_NULL, R_BOOL, R_INT, R_UINT, R_FLOAT, R_MERGE } rkind;

typedef struct {
    rkind kind;
    bool b;
    int64_t i;
    uint64_t u;
    double f;
} resolved;

typedef struct {
    const char *text;
    rkind kind;
    bool b;
    double f;
} map_entry;

/* go-yaml v2's resolve map, word for word (y/Y/n/N are booleans there). */
static const map_entry resolve_map[] = {
    {"y", R_BOOL, true, 0},
    {"Y", R_BOOL, true, 0},
    {"yes", R_BOOL, true, 0},
    {"Yes", R_BOOL, true, 0},
    {"YES", R_BOOL, true, 0},
    {"true", R_BOOL, true, 0},
    {"True", R_BOOL, true, 0},
    {"TRUE", R_BOOL, true, 0},
    {"on", R_BOOL, true, 0},
    {"On", R_BOOL, true, 0},
    {"ON", R_BOOL, true, 0},
    {"n", R_BOOL, false, 0},
    {"N", R_BOOL, false, 0},
    {"no", R_BOOL, false, 0},
    {"No", R_BOOL, false, 0},
    {"NO", R_BOOL, false, 0},
    {"false", R_BOOL, false, 0},
    {"False", R_BOOL, false, 0},
    {"FALSE", R_BOOL, false, 0},
    {"off", R_BOOL, false, 0},
    {"Off", R_BOOL, false, 0},
    {"OFF", R_BOOL, false, 0},
    {"", R_NULL, false, 0},
    {"~", R_NULL, false, 0},
    {"null", R_NULL, false, 0},
    {"Null", R_NULL, false, 0},
    {"NULL", R_NULL, false, 0},
    {".nan", R_FLOAT, false, NAN},
    {".NaN", R_FLOAT, false, NAN},
    {".NAN", R_FLOAT, false, NAN},
    {".inf", R_FLOAT, false, INFINITY},
    {".Inf", R_FLOAT, false, INFINITY},
    {".INF", R_FLOAT, false, INFINITY},
    {"+.inf", R_FLOAT, false, INFINITY},
    {"+.Inf", R_FLOAT, false, INFINITY},
    {"+.INF", R_FLOAT, false, INFINITY},
    {"-.inf", R_FLOAT, false, -INFINITY},
    {"-.Inf", R_FLOAT, false, -INFINITY},
    {"-.INF", R_FLOAT, false, -INFINITY},
    {"<<", R_MERGE, false, 0},
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Go's strconv.ParseUint(s, 0, 64) on an unsigned digit string: 0x, 0o, 0b
 * prefixes and a leading 0 for octal. */
static bool parse_go_uint(const char *s, uint64_t *out)
{
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    } else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
        base = 8;
        s += 2;
    } else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
        base = 2;
        s += 2;
    } else if (s[0] == '0' && s[1]) {
        base = 8;
        s += 1;
    }
    if (!*s) return false;
    uint64_t v = 0;
    for (; *s; s++) {
        int d;
        if (is_digit(*s))
            d = *s - '0';
        else if (*s >= 'a' && *s <= 'f')
            d = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F')
            d = *s - 'A' + 10;
        else
            return false;
        if (d >= base) return false;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) return false;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *out = v;
    return true;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool is_yaml_float(const char *s)
{
    if (*s == '-' || *s == '+') s++;
    if (*s == '.') {
        s++;
        if (!is_digit(*s)) return false;
        while (is_digit(*s))
            s++;
    } else {
        if (!is_digit(*s)) return false;
        while (is_digit(*s))
            s++;
        if (*s == '.') {
            s++;
            while (is_digit(*s))
                s++;
        }
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+') s++;
        if (!is_digit(*s)) return false;
        while (is_digit(*s))
            s++;
    }
    return *s == '\0';
}

/* Go's ParseFloat on text that matched is_yaml_float. gp_yaml_to_json runs
 * in the C locale, so strtod reads '.' whatever LC_NUMERIC says. */
static double parse_float(const char *s)
{
    return strtod(s, NULL);
}

/* Numbers: ParseInt, then ParseUint, then the float syntax, after removing
 * every '_' as go-yaml does. */
static bool resolve_number(const char *in, size_t len, resolved *r)
{
    char plain[512];
    size_t n = 0;
    if (len >= sizeof plain) return false;
    for (size_t i = 0; i < len; i++)
        if (in[i] != '_') plain[n++] = in[i];
    plain[n] = '\0';
    if (memchr(in, '\0', len)) return false;
    const char *digits = plain;
    bool neg = false;
    if (*digits == '-' || *digits == '+') neg = *digits++ == '-';
    uint64_t u;
    if (parse_go_uint(digits, &u)) {
        if (!neg && u <= (uint64_t)INT64_MAX) {
            *r = (resolved){.kind = R_INT, .i = (int64_t)u};
            return true;
        }
        if (neg && u <= (uint64_t)INT64_MAX + 1) {
            *r = (resolved){.kind = R_INT,
                            .i = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u};
            return true;
        }
        if (!neg && plain[0] != '+') {
            *r = (resolved){.kind = R_UINT, .u = u};
            return true;
        }
    }
    if (is_yaml_float(plain)) {
        *r = (resolved){.kind = R_FLOAT, .f = parse_float(plain)};
        return true;
    }
    return false;
}

/* An untagged plain scalar, or one tagged with a resolvable tag. */
static void resolve_plain(const char *in, size_t len, resolved *r)
{
    *r = (resolved){.kind = R_STR};
    for (size_t i = 0; i < sizeof resolve_map / sizeof *resolve_map; i++) {
        const map_entry *m = &resolve_map[i];
        if (strlen(m->text) == len && memcmp(m->text, in, len) == 0) {
            *r = (resolved){.kind = m->kind, .b = m->b, .f = m->f};
            return;
        }
    }
    if (len == 0) return;
    char c = in[0];
    if (is_digit(c) || c == '+' || c == '-') {
        resolve_number(in, len, r);
    } else if (c == '.') {
        /* ".5", ".5e3": Go's ParseFloat, which the float syntax covers. */
        char buf[512];
        if (len < sizeof buf) {
            memcpy(buf, in, len);
            buf[len] = '\0';
            if (is_yaml_float(buf)) *r = (resolved){.kind = R_FLOAT, .f = parse_float(buf)};
        }
    }
}

/* ---- the builder ---- */

typedef struct anchor {
    char *name;
    json_t *value;
    json_t *positions; /* relative pointer -> [line, col], or NULL */
    uint64_t nodes;    /* nodes an alias of it expands to */
    json_t *keys;      /* its keys when a mapping, for merges (see builder) */
    json_t *dups;      /* the duplicate keys met while building it */
} anchor;

typedef struct builder {
    yaml_parser_t parser;
    const char *name;
    gp_error *err;
    bool want_positions;
    anchor *anchors;
    size_t nanchors, capanchors;
    uint64_t decoded, aliased;
    /* The JSON pointer of the node being built. */
    char *path;
    size_t pathlen, pathcap;
    /* With strict: go-yaml v2's UnmarshalStrict complaints, "line 5: key
     * \"name\" already set in map", as they come; NULL when unwanted. */
    json_t *dups;
    /* With strict: the keys of the node built last, for a merge of it: a
     * mapping's {Go key: line of its value}, an array of those for a
     * sequence, NULL for anything else. Owned. */
    json_t *last_keys;
} builder;

/* go-yaml v2 keeps every complaint; a document whose aliases multiply one
 * duplicate would make millions, so the list stops here. */
#define MAX_DUPLICATES 100

/* A position sink: positions of one subtree, keyed by pointer relative to
 * the subtree's root, which sits at path[base] in the builder. */
typedef struct sink {
    json_t *obj;
    size_t base;
} sink;

static void set_error_at(builder *b, const yaml_mark_t *m, const char *fmt, const char *arg)
{
    gp_error_set(b->err, b->name, (unsigned)m->line + 1, (unsigned)m->column + 1, fmt, arg);
}

static void set_parser_error(builder *b)
{
    const yaml_parser_t *p = &b->parser;
    const char *problem = p->problem ? p->problem : "invalid YAML";
    if (p->error == YAML_SCANNER_ERROR || p->error == YAML_PARSER_ERROR) {
        set_error_at(b, &p->problem_mark, "%s", problem);
        return;
    }
    /* Reader errors (bad UTF-8) carry a byte offset, not a mark. */
    gp_error_set(b->err, b->name, (unsigned)p->mark.line + 1, (unsigned)p->mark.column + 1, "%s",
                 problem);
}

static bool next_event(builder *b, yaml_event_t *ev)
{
    if (yaml_parser_parse(&b->parser, ev)) return true;
    set_parser_error(b);
    return false;
}

static bool path_push(builder *b, const char *seg, size_t len)
{
    size_t need = b->pathlen + 1 + 2 * len + 1;
    if (need > b->pathcap) {
        size_t cap = b->pathcap ? b->pathcap : 64;
        while (cap < need)
            cap *= 2;
        char *p = realloc(b->path, cap);
        if (!p) return false;
        b->path = p;
        b->pathcap = cap;
    }
    b->path[b->pathlen++] = '/';
    for (size_t i = 0; i < len; i++) {
        if (seg[i] == '~' || seg[i] == '/') {
            b->path[b->pathlen++] = '~';
            b->path[b->pathlen++] = seg[i] == '~' ? '0' : '1';
        } else {
            b->path[b->pathlen++] = seg[i];
        }
    }
    b->path[b->pathlen] = '\0';
    return true;
}

static void record(builder *b, const sink *s, const yaml_mark_t *m)
{
    if (!s->obj) return;
    json_t *pos = json_pack("[II]", (json_int_t)m->line + 1, (json_int_t)m->column + 1);
    json_object_setn_new(s->obj, b->path + s->base, b->pathlen - s->base, pos);
}

/* strconv.FormatFloat(d, 'g', -1, 32 or 64): the fewest digits that read
 * back as the same float32 (what sigs.k8s.io/yaml spells a float key with)
 * or float64 (what Go's %v prints); the shortest form switches to an
 * exponent below 1e-4 and from 1e+06 on. */
static void format_go_float(double d, bool single, char buf[64])
{
    double f = single ? (double)(float)d : d;
    /* a key too large for a float32 (a 54-digit number) is Go's +Inf */
    if (isinf(f) || isnan(f)) {
        snprintf(buf, 64, "%s", isnan(f) ? "NaN" : f > 0 ? "+Inf" : "-Inf");
        return;
    }
    int digits = 1;
    for (; digits < (single ? 9 : 17); digits++) {
        snprintf(buf, 64, "%.*e", digits - 1, f);
        double back = strtod(buf, NULL);
        if (single ? (float)back == (float)f : back == f) break;
    }
    snprintf(buf, 64, "%.*e", digits - 1, f);
    int exp = atoi(strchr(buf, 'e') + 1);
    if (exp < -4 || exp >= 6) return;
    int decimals = digits - 1 - exp;
    snprintf(buf, 64, "%.*f", decimals > 0 ? decimals : 0, f);
}

/* A key as go-yaml v2 holds it in a map[interface{}]interface{}: its Go
 * type (s, b, i, u, f) then its %#v, which the strict complaint prints:
 * "name" quoted, 1, true, 0xffffffffffffffff for a uint64, 1.5. */
static void go_key(const resolved *r, const char *text, size_t len, gp_buf *out)
{
    char buf[64];
    switch (r->kind) {
    case R_BOOL:
        gp_buf_add(out, r->b ? "btrue" : "bfalse");
        return;
    case R_INT:
        gp_buf_addf(out, "i%" PRId64, r->i);
        return;
    case R_UINT:
        gp_buf_addf(out, "u0x%" PRIx64, r->u);
        return;
    case R_FLOAT:
        format_go_float(r->f, false, buf);
        gp_buf_addf(out, "f%s", buf);
        return;
    default:
        gp_buf_addc(out, 's');
        gp_buf_add_go_quoted(out, text, len);
    }
}

/* A scalar's JSON value. For a key, with `key_id` not NULL, also the key
 * as go-yaml v2 holds it (go_key). */
static json_t *scalar_json(builder *b, const yaml_event_t *ev, bool is_key, bool *is_merge,
                           gp_buf *key_id)
{
    const char *text = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    bool plain = ev->data.scalar.plain_implicit && !tag;
    *is_merge = false;
    resolved r = {.kind = R_STR};
    if (plain) {
        resolve_plain(text, len, &r);
    } else if (tag && strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) == 0) {
        const char *t = tag + strlen(TAG_PREFIX);
        if (strcmp(t, "int") == 0 || strcmp(t, "bool") == 0 || strcmp(t, "float") == 0 ||
            strcmp(t, "null") == 0) {
            resolve_plain(text, len, &r);
            if (r.kind == R_MERGE) r.kind = R_STR;
            bool ok = (strcmp(t, "int") == 0 && (r.kind == R_INT || r.kind == R_UINT)) ||
                      (strcmp(t, "bool") == 0 && r.kind == R_BOOL) ||
                      (strcmp(t, "null") == 0 && r.kind == R_NULL) ||
                      (strcmp(t, "float") == 0 && r.kind == R_FLOAT);
            if (strcmp(t, "float") == 0 && r.kind == R_INT) {
                r = (resolved){.kind = R_FLOAT, .f = (double)r.i};
                ok = true;
            }
            if (!ok) {
                static const char *const names[] = {"!!str", "!!null",  "!!bool", "!!int",
                                                    "!!int", "!!float", "!!merge"};
                gp_error_set(b->err, b->name, (unsigned)ev->start_mark.line + 1,
                             (unsigned)ev->start_mark.column + 1,
                             "cannot decode %s `%.*s` as a !!%s", names[r.kind],
                             (int)(len > 200 ? 200 : len), text, t);
                return NULL;
            }
        }
        /* !!str, !!binary, !!timestamp and the rest stay text, as go-yaml
         * leaves them when decoding into interface{}. */
    }
    if (r.kind == R_MERGE) {
        if (is_key) {
            *is_merge = true;
            return json_string("<<");
        }
        r.kind = R_STR;
    }
    if (r.kind == R_FLOAT && !isfinite(r.f)) {
        set_error_at(b, &ev->start_mark, "unsupported value: %s (JSON has no infinity or NaN)",
                     isnan(r.f) ? "NaN"
                     : r.f > 0  ? "+Inf"
                                : "-Inf");
        return NULL;
    }
    if (is_key) {
        if (key_id && r.kind != R_NULL) go_key(&r, text, len, key_id);
        /* sigs.k8s.io/yaml turns non-string keys into their Go spelling. */
        char buf[64];
        switch (r.kind) {
        case R_STR:
            return json_stringn(text, len);
        case R_NULL:
            set_error_at(b, &ev->start_mark, "unsupported map key of type %s", "null");
            return NULL;
        case R_BOOL:
            return json_string(r.b ? "true" : "false");
        case R_INT:
            snprintf(buf, sizeof buf, "%" PRId64, r.i);
            return json_string(buf);
        case R_UINT:
            snprintf(buf, sizeof buf, "%" PRIu64, r.u);
            return json_string(buf);
        default:
            format_go_float(r.f, true, buf);
            return json_string(buf);
        }
    }
    switch (r.kind) {
    case R_NULL:
        return json_null();
    case R_BOOL:
        return json_boolean(r.b);
    case R_INT:
        return json_integer((json_int_t)r.i);
    case R_UINT:
        return json_real((double)r.u);
    case R_FLOAT:
        return json_real(r.f);
    default:
        return json_stringn(text, len);
    }
}

static json_t *build_node(builder *b, yaml_event_t *ev, const sink *s, int depth, uint64_t *nodes);

/* Copies positions keyed relative to the current node into sink `to`,
 * except the node's own ("") when skip_root is set. */
static void copy_positions(builder *b, const json_t *from, const sink *to, bool skip_root)
{
    const char *prefix = b->path + to->base;
    size_t plen = b->pathlen - to->base;
    const char *rel;
    json_t *pos;
    json_object_foreach((json_t *)from, rel, pos)
    {
        if (skip_root && !*rel) continue;
        size_t rl = strlen(rel);
        char *key = malloc(plen + rl + 1);
        if (!key) return;
        memcpy(key, prefix, plen);
        memcpy(key + plen, rel, rl + 1);
        json_object_set(to->obj, key, pos);
        free(key);
    }
}

static bool oom(builder *b)
{
    gp_error_set(b->err, b->name, 0, 0, "%s", "out of memory");
    return false;
}

static void set_last_keys(builder *b, json_t *keys)
{
    json_decref(b->last_keys);
    b->last_keys = keys;
}

static void add_duplicate(builder *b, json_t *complaint)
{
    if (json_array_size(b->dups) < MAX_DUPLICATES) json_array_append(b->dups, complaint);
    json_decref(complaint);
}

/* go-yaml v2's setMapIndex in strict mode: a key the map already holds is
 * a complaint naming the line of the value given for it the second time
 * (sigs.k8s.io/yaml goyaml.v2/decode.go, which is yaml.v2 v2.4.0). */
static void note_key(builder *b, json_t *keys, const char *id, json_int_t value_line)
{
    if (!json_object_get(keys, id)) {
        json_object_set_new(keys, id, json_integer(value_line));
        return;
    }
    add_duplicate(b, json_sprintf("line %" JSON_INTEGER_FORMAT ": key %s already set in map",
                                  value_line, id + 1));
}

/* A merge decodes the merged mappings into the map again, so each of their
 * keys is checked against it; a list of mappings is merged last first. */
static void note_merged_keys(builder *b, json_t *keys, const json_t *merged)
{
    if (json_is_array(merged)) {
        for (size_t i = json_array_size(merged); i-- > 0;)
            note_merged_keys(b, keys, json_array_get(merged, i));
        return;
    }
    const char *id;
    json_t *line;
    json_object_foreach((json_t *)merged, id, line)
    {
        note_key(b, keys, id, json_integer_value(line));
    }
}

/* go-yaml v2's guard against "billion laughs": once a document is past a
 * few hundred nodes, alias expansion may make only a shrinking share of it. */
static bool aliasing_ok(const builder *b)
{
    if (b->aliased <= 100 || b->decoded <= 1000) return true;
    double ratio;
    if (b->decoded <= 400000)
        ratio = 0.99;
    else if (b->decoded >= 4000000)
        ratio = 0.10;
    else
        ratio = 0.99 - 0.89 * ((double)(b->decoded - 400000) / 3600000.0);
    return (double)b->aliased / (double)b->decoded <= ratio;
}

static anchor *find_anchor(builder *b, const char *name)
{
    for (size_t i = b->nanchors; i-- > 0;)
        if (strcmp(b->anchors[i].name, name) == 0) return &b->anchors[i];
    return NULL;
}

static json_t *build_alias(builder *b, const yaml_event_t *ev, const sink *s, uint64_t *nodes)
{
    const char *name = (const char *)ev->data.alias.anchor;
    anchor *a = find_anchor(b, name);
    if (!a) {
        set_error_at(b, &ev->start_mark, "unknown anchor '%s' referenced", name);
        return NULL;
    }
    if (!a->value) {
        set_error_at(b, &ev->start_mark, "anchor '%s' value contains itself", name);
        return NULL;
    }
    b->decoded += 1 + a->nodes;
    b->aliased += a->nodes;
    if (!aliasing_ok(b)) {
        set_error_at(b, &ev->start_mark, "%s", "document contains excessive aliasing");
        return NULL;
    }
    *nodes = a->nodes;
    if (b->dups) {
        /* go-yaml decodes the anchored node again at each alias */
        size_t i;
        json_t *d;
        json_array_foreach(a->dups, i, d)
        {
            add_duplicate(b, json_incref(d));
        }
        set_last_keys(b, json_incref(a->keys));
    }
    if (s->obj && a->positions) {
        /* The alias itself is where it is used; what it expands to is
         * where the anchor wrote it. */
        copy_positions(b, a->positions, s, true);
        record(b, s, &ev->start_mark);
    }
    return json_deep_copy(a->value);
}

static json_t *build_sequence(builder *b, const sink *s, int depth, uint64_t *nodes)
{
    json_t *arr = json_array();
    json_t *keys = b->dups ? json_array() : NULL; /* each item's, for a merge */
    size_t keep = b->pathlen;
    for (size_t i = 0;; i++) {
        yaml_event_t ev;
        if (!next_event(b, &ev)) goto fail;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            set_last_keys(b, keys);
            return arr;
        }
        char idx[32];
        int n = snprintf(idx, sizeof idx, "%zu", i);
        if (!path_push(b, idx, (size_t)n)) {
            yaml_event_delete(&ev);
            oom(b);
            goto fail;
        }
        uint64_t sub = 0;
        json_t *v = build_node(b, &ev, s, depth + 1, &sub);
        b->pathlen = keep;
        b->path[keep] = '\0';
        if (!v) goto fail;
        *nodes += sub;
        json_array_append_new(arr, v);
        if (keys) json_array_append(keys, b->last_keys ? b->last_keys : json_null());
    }
fail:
    json_decref(keys);
    json_decref(arr);
    return NULL;
}

/* `<<: *a` or `<<: [*a, *b]` as go-yaml v2 does it (and kubectl shows):
 * the merged keys overwrite keys written before the `<<`, keys written
 * after it overwrite them, and in a list the first mapping wins. */
static void merge_one(json_t *obj, json_t *merged)
{
    const char *k;
    json_t *v;
    json_object_foreach(merged, k, v)
    {
        json_object_set(obj, k, v);
    }
}

static bool merge_into(builder *b, json_t *obj, json_t *merged, const yaml_mark_t *m)
{
    if (json_is_object(merged)) {
        merge_one(obj, merged);
        return true;
    }
    size_t i;
    json_t *item;
    bool all_maps = json_is_array(merged);
    json_array_foreach(merged, i, item)
    {
        if (!json_is_object(item)) all_maps = false;
    }
    if (!all_maps) {
        set_error_at(b, m, "%s", "map merge requires map or sequence of maps as the value");
        return false;
    }
    for (i = json_array_size(merged); i-- > 0;)
        merge_one(obj, json_array_get(merged, i));
    return true;
}

static json_t *build_mapping(builder *b, const sink *s, int depth, uint64_t *nodes)
{
    json_t *obj = json_object();
    json_t *keys = b->dups ? json_object() : NULL; /* Go key -> line of its value */
    gp_buf key_id = {0};
    size_t keep = b->pathlen;
    for (;;) {
        yaml_event_t kev;
        if (!next_event(b, &kev)) goto fail;
        if (kev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&kev);
            gp_buf_free(&key_id);
            set_last_keys(b, keys);
            return obj;
        }
        json_t *key = NULL;
        bool is_merge = false;
        yaml_mark_t kmark = kev.start_mark;
        gp_buf_clear(&key_id);
        if (kev.type == YAML_SCALAR_EVENT) {
            key = scalar_json(b, &kev, true, &is_merge, keys ? &key_id : NULL);
        } else if (kev.type == YAML_ALIAS_EVENT) {
            uint64_t sub = 0;
            sink none = {NULL, 0};
            key = build_alias(b, &kev, &none, &sub);
            if (key && !json_is_string(key)) {
                json_decref(key);
                key = NULL;
                set_error_at(b, &kmark, "unsupported map key of type %s", "alias");
            }
            if (key && keys) {
                gp_buf_addc(&key_id, 's');
                gp_buf_add_go_quoted(&key_id, json_string_value(key), json_string_length(key));
            }
        } else {
            set_error_at(b, &kmark, "unsupported map key of type %s",
                         kev.type == YAML_MAPPING_START_EVENT ? "map" : "sequence");
        }
        yaml_event_delete(&kev);
        if (!key) goto fail;
        *nodes += 1;
        b->decoded++;
        yaml_event_t vev;
        if (!next_event(b, &vev)) {
            json_decref(key);
            goto fail;
        }
        const char *k = json_string_value(key);
        if (!path_push(b, k, json_string_length(key))) {
            yaml_event_delete(&vev);
            json_decref(key);
            oom(b);
            goto fail;
        }
        uint64_t sub = 0;
        sink vs = *s;
        if (is_merge) vs.obj = NULL;
        json_int_t value_line = (json_int_t)vev.start_mark.line + 1;
        json_t *v = build_node(b, &vev, &vs, depth + 1, &sub);
        b->pathlen = keep;
        b->path[keep] = '\0';
        *nodes += sub;
        if (!v) {
            json_decref(key);
            goto fail;
        }
        bool ok = true;
        if (is_merge) {
            ok = merge_into(b, obj, v, &kmark);
            json_decref(v);
            if (ok && keys && b->last_keys) note_merged_keys(b, keys, b->last_keys);
        } else {
            json_object_set_new(obj, k, v);
            if (keys) {
                if (gp_buf_failed(&key_id)) {
                    json_decref(key);
                    oom(b);
                    goto fail;
                }
                note_key(b, keys, gp_buf_str(&key_id), value_line);
            }
        }
        json_decref(key);
        if (!ok) goto fail;
    }
fail:
    gp_buf_free(&key_id);
    json_decref(keys);
    json_decref(obj);
    return NULL;
}

static bool add_anchor(builder *b, const char *name)
{
    if (b->nanchors == b->capanchors) {
        size_t cap = b->capanchors ? 2 * b->capanchors : 8;
        anchor *p = realloc(b->anchors, cap * sizeof *p);
        if (!p) return false;
        b->anchors = p;
        b->capanchors = cap;
    }
    anchor *a = &b->anchors[b->nanchors];
    *a = (anchor){.name = strdup(name)};
    if (!a->name) return false;
    b->nanchors++;
    return true;
}

/* Builds the node that starts with `ev` (which it consumes). */
static json_t *build_node(builder *b, yaml_event_t *ev, const sink *s, int depth, uint64_t *nodes)
{
    if (depth > MAX_DEPTH) {
        set_error_at(b, &ev->start_mark, "%s", "nesting too deep");
        yaml_event_delete(ev);
        return NULL;
    }
    const char *anchor_name = NULL;
    if (ev->type == YAML_SCALAR_EVENT) anchor_name = (const char *)ev->data.scalar.anchor;
    if (ev->type == YAML_SEQUENCE_START_EVENT)
        anchor_name = (const char *)ev->data.sequence_start.anchor;
    if (ev->type == YAML_MAPPING_START_EVENT)
        anchor_name = (const char *)ev->data.mapping_start.anchor;
    size_t anchor_index = 0;
    sink own = *s;
    if (anchor_name) {
        if (!add_anchor(b, anchor_name)) {
            yaml_event_delete(ev);
            oom(b);
            return NULL;
        }
        anchor_index = b->nanchors - 1;
        /* An anchored subtree keeps its own positions, for its aliases. */
        if (s->obj) own = (sink){json_object(), b->pathlen};
    }
    json_t *v = NULL;
    *nodes = 1;
    if (ev->type != YAML_ALIAS_EVENT) b->decoded++;
    record(b, &own, &ev->start_mark);
    size_t dups_before = json_array_size(b->dups);
    set_last_keys(b, NULL);
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        bool is_merge;
        v = scalar_json(b, ev, false, &is_merge, NULL);
        break;
    }
    case YAML_ALIAS_EVENT:
        v = build_alias(b, ev, &own, nodes);
        break;
    case YAML_SEQUENCE_START_EVENT:
        v = build_sequence(b, &own, depth, nodes);
        break;
    case YAML_MAPPING_START_EVENT:
        v = build_mapping(b, &own, depth, nodes);
        break;
    default:
        set_error_at(b, &ev->start_mark, "%s", "unexpected YAML event");
        break;
    }
    yaml_event_delete(ev);
    if (anchor_name) {
        anchor *a = &b->anchors[anchor_index];
        if (own.obj && v) copy_positions(b, own.obj, s, false);
        a->positions = own.obj;
        if (v) {
            a->value = json_incref(v);
            a->nodes = *nodes;
        }
        if (v && b->dups) {
            a->keys = json_is_object(b->last_keys) ? json_incref(b->last_keys) : NULL;
            a->dups = json_array();
            for (size_t i = dups_before; i < json_array_size(b->dups); i++)
                json_array_append(a->dups, json_array_get(b->dups, i));
        }
    }
    return v;
}

static void builder_reset_anchors(builder *b)
{
    for (size_t i = 0; i < b->nanchors; i++) {
        free(b->anchors[i].name);
        json_decref(b->anchors[i].value);
        json_decref(b->anchors[i].positions);
        json_decref(b->anchors[i].keys);
        json_decref(b->anchors[i].dups);
    }
    b->nanchors = 0;
    set_last_keys(b, NULL);
}

/* One document, from after DOCUMENT_START to DOCUMENT_END included. */
static bool build_document(builder *b, json_t *docs, json_t *positions)
{
    /* The root's pointer is "": the path buffer must exist before it. */
    b->pathlen = 0;
    if (!b->path && !path_push(b, "", 0)) return oom(b);
    b->pathlen = 0;
    json_t *pos = b->want_positions ? json_object() : NULL;
    sink s = {pos, 0};
    b->path[0] = '\0';
    b->decoded = b->aliased = 0;
    yaml_event_t ev;
    if (!next_event(b, &ev)) goto fail;
    json_t *v;
    if (ev.type == YAML_DOCUMENT_END_EVENT) {
        yaml_event_delete(&ev);
        v = json_null();
    } else {
        uint64_t nodes = 0;
        v = build_node(b, &ev, &s, 0, &nodes);
        if (!v) goto fail;
        yaml_event_t end;
        if (!next_event(b, &end)) {
            json_decref(v);
            goto fail;
        }
        yaml_event_delete(&end);
    }
    builder_reset_anchors(b);
    json_array_append_new(docs, v);
    if (positions) json_array_append_new(positions, pos);
    return true;
fail:
    builder_reset_anchors(b);
    json_decref(pos);
    return false;
}

static int parse_stream(const char *text, size_t len, const char *name, json_t **docs,
                        json_t **positions, json_t **duplicates, gp_error *err)
{
    builder b = {.name = name, .err = err, .want_positions = positions != NULL};
    json_t *dups = duplicates ? json_array() : NULL;
    if (!yaml_parser_initialize(&b.parser)) {
        gp_error_set(err, name, 0, 0, "%s", "out of memory");
        return -1;
    }
    yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, len);
    /* Numbers are read and float keys spelt in the C locale, per thread so
     * that other threads' LC_NUMERIC is left alone. */
    locale_t c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    locale_t old_locale = c_locale ? uselocale(c_locale) : (locale_t)0;
    json_t *out = json_array(), *outpos = positions ? json_array() : NULL;
    bool ok = true;
    for (;;) {
        yaml_event_t ev;
        if (!next_event(&b, &ev)) {
            ok = false;
            break;
        }
        yaml_event_type_t t = ev.type;
        yaml_event_delete(&ev);
        if (t == YAML_STREAM_END_EVENT) break;
        if (t != YAML_DOCUMENT_START_EVENT) continue;
        /* go-yaml's Unmarshal decodes the first document only */
        b.dups = json_array_size(out) == 0 ? dups : NULL;
        if (!build_document(&b, out, outpos)) {
            ok = false;
            break;
        }
    }
    if (c_locale) {
        uselocale(old_locale);
        freelocale(c_locale);
    }
    yaml_parser_delete(&b.parser);
    free(b.anchors);
    free(b.path);
    json_decref(b.last_keys);
    if (!ok) {
        json_decref(out);
        json_decref(outpos);
        json_decref(dups);
        return -1;
    }
    /* A stream with no document at all reads as one null document, as
     * sigs.k8s.io/yaml reads an empty file. */
    if (json_array_size(out) == 0) {
        json_array_append_new(out, json_null());
        if (outpos) json_array_append_new(outpos, json_object());
    }
    *docs = out;
    if (positions) *positions = outpos;
    if (duplicates) *duplicates = dups;
    return 0;
}

int gp_yaml_to_json(const char *text, size_t len, const char *name, json_t **docs,
                    json_t **positions, gp_error *err)
{
    return parse_stream(text, len, name, docs, positions, NULL, err);
}

int gp_yaml_to_json_strict(const char *text, size_t len, const char *name, json_t **docs,
                           json_t **duplicates, gp_error *err)
{
    return parse_stream(text, len, name, docs, NULL, duplicates, err);
}

int gp_yaml_load_file(const char *path, json_t **docs, json_t **positions, gp_error *err)
{
    size_t len;
    char *text = gp_read_file(path, &len, err);
    if (!text) return -1;
    int rc = gp_yaml_to_json(text, len, path, docs, positions, err);
    free(text);
    return rc;
}

void gp_yaml_position(const gp_yaml_positions *positions, const char *pointer, unsigned *line,
                      unsigned *col)
{
    *line = *col = 0;
    if (!positions || !pointer) return;
    size_t n = strlen(pointer);
    char *p = malloc(n + 1);
    if (!p) return;
    memcpy(p, pointer, n + 1);
    for (;;) {
        json_t *pos = json_object_get(positions, p);
        if (json_is_array(pos)) {
            *line = (unsigned)json_integer_value(json_array_get(pos, 0));
            *col = (unsigned)json_integer_value(json_array_get(pos, 1));
            break;
        }
        char *slash = strrchr(p, '/');
        if (!slash) break;
        *slash = '\0';
    }
    free(p);
}
