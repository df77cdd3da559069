/* libFuzzer target for the TOML parser and emitter.
 *
 * For every input:
 *   - parse it as "fuzz.toml";
 *   - on success, walk the whole tree through the public accessors and check
 *     what the header promises: every key's position is where a key starts,
 *     every table's where its [header], '{' or key starts; toml_table_find
 *     and toml_table_get find each entry; strings and keys are NUL-terminated;
 *     date-time fields a kind lacks are zero; floats format and read back;
 *   - emit the tree, parse the emitted text again and require an equal tree;
 *   - look up and split a dotted key made from the input's first bytes (any
 *     answer is fine; it must not crash), and look up every key of the tree,
 *     quoted, through tables (each must find its own entry);
 *   - on failure, require "fuzz.toml:LINE:COL: message" with a position that
 *     lies inside the input.
 * Any broken promise ends in __builtin_trap() after a note on stderr, so that
 * libFuzzer saves the input. Build and run with fuzz/run.sh.
 *
 * Build with -DTOML_FUZZ_IDEMPOTENT to also require that emitting the
 * re-parsed tree gives byte-identical text (not promised by toml.h). */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml/toml.h"
#include "util/error.h"

#define FUZZ_FILE  "fuzz.toml"
#define EMIT_FILE  "emitted.toml"
#define MAX_KEYLEN 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The text a check is about, shown when it fails. */
struct source {
    const char *text;
    size_t len;
    const char *file;
};

/* The text as it is, but with control bytes other than newline and tab, and
 * bytes that are not ASCII, written as \xHH so that the report is readable
 * (a backslash stays as it is; TOML has no \x escape). */
static void dump(const char *label, const char *text, size_t len)
{
    fprintf(stderr, "---- %s (%zu bytes; other than ASCII as \\xHH) ----\n", label, len);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f))
            fputc(c, stderr);
        else
            fprintf(stderr, "\\x%02X", c);
    }
    fprintf(stderr, "\n---- end of %s ----\n", label);
}

static void fail(const struct source *src, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

static void fail(const struct source *src, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "toml_fuzz: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    if (src) dump(src->file, src->text, src->len);
    __builtin_trap();
}

#define CHECK(src, cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) fail((src), __VA_ARGS__);                                                     \
    } while (0)

/* ---- positions ---- */

/* The byte offset of the character at line:col (both from 1; columns count
 * characters, and a leading byte order mark is not one); SIZE_MAX when the
 * text has no such line or the line is shorter. One past the end of a line
 * (its '\n' or the end of the text) is a valid position. */
static size_t locate(const struct source *src, uint32_t line, uint32_t col)
{
    if (line < 1 || col < 1) return SIZE_MAX;
    size_t at = 0;
    if (src->len >= 3 && memcmp(src->text, "\xEF\xBB\xBF", 3) == 0) at = 3;
    for (uint32_t l = 1; l < line; l++) {
        const char *nl = src->len > at ? memchr(src->text + at, '\n', src->len - at) : NULL;
        if (!nl) return SIZE_MAX;
        at = (size_t)(nl - src->text) + 1;
    }
    for (uint32_t c = 1; c < col; c++) {
        if (at >= src->len || src->text[at] == '\n') return SIZE_MAX;
        at++;
        while (at < src->len && ((unsigned char)src->text[at] & 0xC0) == 0x80)
            at++;
    }
    return at;
}

/* Checks that line:col lies in the text; returns its byte offset. */
static size_t check_pos(const struct source *src, uint32_t line, uint32_t col, const char *what)
{
    CHECK(src, line >= 1 && col >= 1, "%s: position %" PRIu32 ":%" PRIu32 " is not 1-based", what,
          line, col);
    size_t at = locate(src, line, col);
    CHECK(src, at != SIZE_MAX, "%s: position %" PRIu32 ":%" PRIu32 " is outside the text", what,
          line, col);
    return at;
}

static bool is_bare_key_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

/* A key is defined where one of its parts starts; a table at its [header],
 * its '{' or the key that made it. */
static void check_defined_at(const struct source *src, uint32_t line, uint32_t col, bool table,
                             const char *what, const char *key)
{
    size_t at = check_pos(src, line, col, what);
    unsigned char c = at < src->len ? (unsigned char)src->text[at] : 0;
    bool ok = is_bare_key_char(c) || c == '"' || c == '\'' || (table && (c == '[' || c == '{'));
    CHECK(src, ok, "%s of '%s' is %" PRIu32 ":%" PRIu32 ", which is %s%c%s, not where a %s starts",
          what, key, line, col, at < src->len ? "'" : "", at < src->len ? c : '-',
          at < src->len ? "'" : " (end)", table ? "table" : "key");
}

static void check_file(const struct source *src, const char *file, const char *what)
{
    CHECK(src, file && strcmp(file, src->file) == 0, "%s: file is '%s', expected '%s'", what,
          file ? file : "(null)", src->file);
}

/* ---- values ---- */

/* `key` names the entry that holds the value (for messages). */
static void walk_table(const struct source *src, const toml_table *t, unsigned depth,
                       const char *table_key);
static void walk_value(const struct source *src, const toml_value *v, unsigned depth,
                       const char *key);

static void check_float(const struct source *src, double d)
{
    char buf[32];
    memset(buf, 0x55, sizeof buf);
    int n = toml_format_float(d, buf);
    CHECK(src, n > 0 && n < (int)sizeof buf && buf[n] == '\0' && strlen(buf) == (size_t)n,
          "toml_format_float(%a) returned %d", d, n);
    char *end = NULL;
    double back = strtod(buf, &end);
    CHECK(src, end == buf + n, "toml_format_float(%a) gave '%s', which strtod stops short of", d,
          buf);
    if (isnan(d)) {
        CHECK(src, isnan(back), "toml_format_float(nan) gave '%s'", buf);
        return;
    }
    CHECK(src, memcmp(&back, &d, sizeof d) == 0,
          "toml_format_float(%a) gave '%s', which reads back as %a", d, buf, back);
}

static void check_datetime(const struct source *src, const toml_value *v)
{
    const toml_datetime *dt = v->u.dt;
    CHECK(src, dt != NULL, "date-time value without data");
    bool has_date = v->type != TOML_TIME_LOCAL;
    bool has_time = v->type != TOML_DATE_LOCAL;
    if (has_date) {
        CHECK(src, dt->month >= 1 && dt->month <= 12 && dt->day >= 1 && dt->day <= 31,
              "date %d-%u-%u out of range", dt->year, dt->month, dt->day);
    } else {
        CHECK(src, dt->year == 0 && dt->month == 0 && dt->day == 0,
              "local time with a date %d-%u-%u", dt->year, dt->month, dt->day);
    }
    if (has_time) {
        CHECK(src, dt->hour < 24 && dt->minute < 60 && dt->second <= 60,
              "time %u:%u:%u out of range", dt->hour, dt->minute, dt->second);
        CHECK(src, dt->nanosecond < 1000000000u, "nanosecond %" PRIu32, dt->nanosecond);
        if (dt->fraction_len) {
            CHECK(src, dt->fraction && strlen(dt->fraction) == dt->fraction_len,
                  "fraction_len %" PRIu32 " does not match the fraction", dt->fraction_len);
            for (uint32_t i = 0; i < dt->fraction_len; i++)
                CHECK(src, dt->fraction[i] >= '0' && dt->fraction[i] <= '9',
                      "fraction '%s' is not all digits", dt->fraction);
        } else {
            CHECK(src, dt->nanosecond == 0, "nanosecond %" PRIu32 " without a fraction",
                  dt->nanosecond);
        }
    } else {
        CHECK(src,
              dt->hour == 0 && dt->minute == 0 && dt->second == 0 && dt->nanosecond == 0 &&
                  dt->fraction_len == 0,
              "local date with a time");
    }
    if (v->type == TOML_DATETIME) {
        CHECK(src, dt->offset_minutes > -24 * 60 && dt->offset_minutes < 24 * 60,
              "offset %d minutes", dt->offset_minutes);
        CHECK(src, !dt->offset_is_z || dt->offset_minutes == 0, "Z with offset %d",
              dt->offset_minutes);
    } else {
        CHECK(src, dt->offset_minutes == 0 && !dt->offset_is_z, "offset on a local date-time");
    }
    char buf[80];
    memset(buf, 0x55, sizeof buf);
    int n = toml_format_datetime(v, buf);
    CHECK(src, n > 0 && n < (int)sizeof buf && buf[n] == '\0', "toml_format_datetime returned %d",
          n);
}

static void walk_array(const struct source *src, const toml_array *a, unsigned depth,
                       const char *key)
{
    CHECK(src, a != NULL, "array value without an array");
    size_t n = toml_array_size(a);
    bool table_array = toml_array_is_table_array(a);
    for (size_t i = 0; i < n; i++) {
        const toml_value *v = toml_array_at(a, i);
        CHECK(src, v != NULL, "toml_array_at(%zu) of %zu is NULL", i, n);
        if (table_array)
            CHECK(src, v->type == TOML_TABLE, "element %zu of an array of tables has type %u", i,
                  v->type);
        walk_value(src, v, depth + 1, key);
    }
}

static void walk_value(const struct source *src, const toml_value *v, unsigned depth,
                       const char *key)
{
    switch ((toml_type)v->type) {
    case TOML_TABLE:
        CHECK(src, v->u.table != NULL, "table value without a table");
        walk_table(src, v->u.table, depth + 1, key);
        break;
    case TOML_ARRAY:
        walk_array(src, v->u.array, depth, key);
        break;
    case TOML_STRING:
        CHECK(src, v->u.s != NULL && v->u.s[v->len] == '\0',
              "string of %" PRIu32 " bytes is not NUL-terminated", v->len);
        break;
    case TOML_INTEGER:
        break;
    case TOML_FLOAT:
        check_float(src, v->u.f);
        break;
    case TOML_BOOL:
        CHECK(src, v->u.b == true || v->u.b == false, "bool");
        break;
    case TOML_DATETIME:
    case TOML_DATETIME_LOCAL:
    case TOML_DATE_LOCAL:
    case TOML_TIME_LOCAL:
        check_datetime(src, v);
        break;
    default:
        fail(src, "value of unknown type %u", v->type);
    }
}

static void walk_table(const struct source *src, const toml_table *t, unsigned depth,
                       const char *table_key)
{
    toml_pos tp = toml_table_pos(t);
    check_file(src, tp.file, "toml_table_pos");
    /* An implicit root or a table made by a dotted key may sit at 0:0 only if
     * it is the root; everything else was defined somewhere. */
    if (depth > 0) check_defined_at(src, tp.line, tp.col, true, "toml_table_pos", table_key);
    (void)toml_table_is_inline(t);
    (void)toml_table_is_implicit(t);

    size_t n = toml_table_size(t);
    for (size_t i = 0; i < n; i++) {
        const toml_entry *e = toml_table_entry(t, i);
        CHECK(src, e != NULL, "toml_table_entry(%zu) of %zu is NULL", i, n);
        CHECK(src, e->key != NULL, "key %zu is NULL", i);
        uint32_t keylen = toml_entry_keylen(e);
        CHECK(src, e->key[keylen] == '\0', "key %zu (%" PRIu32 " bytes) is not NUL-terminated", i,
              keylen);

        toml_pos ep = toml_entry_pos(t, e);
        check_file(src, ep.file, "toml_entry_pos");
        check_defined_at(src, ep.line, ep.col, false, "toml_entry_pos", e->key);
        CHECK(src, ep.line == e->line && ep.col == e->col,
              "toml_entry_pos %" PRIu32 ":%" PRIu32 " differs from the entry's %" PRIu32
              ":%" PRIu32,
              ep.line, ep.col, e->line, e->col);

        const toml_entry *found = toml_table_find(t, e->key, keylen);
        CHECK(src, found == e, "toml_table_find('%s') returned %p, expected entry %zu at %p",
              e->key, (const void *)found, i, (const void *)e);
        if (strlen(e->key) == keylen) {
            const toml_value *got = toml_table_get(t, e->key);
            CHECK(src, got == &e->value, "toml_table_get('%s') returned %p, expected %p", e->key,
                  (const void *)got, (const void *)&e->value);
        }
        walk_value(src, &e->value, depth, e->key);
    }
    /* A key that differs from every key by its last byte must be absent. */
    if (n > 0) {
        const toml_entry *e = toml_table_entry(t, 0);
        char probe[MAX_KEYLEN + 2];
        uint32_t keylen = toml_entry_keylen(e);
        size_t len = keylen < MAX_KEYLEN ? keylen : MAX_KEYLEN;
        memcpy(probe, e->key, len);
        probe[len] = '\x01';
        probe[len + 1] = '\0';
        const toml_entry *found = toml_table_find(t, probe, len + 1);
        CHECK(src,
              !found ||
                  (toml_entry_keylen(found) == len + 1 && memcmp(found->key, probe, len + 1) == 0),
              "toml_table_find returned the wrong entry '%s'", found->key);
    }
}

static void walk_doc(const struct source *src, const toml_doc *doc)
{
    check_file(src, toml_doc_file(doc), "toml_doc_file");
    (void)toml_doc_footprint(doc);
    const toml_table *root = toml_root(doc);
    CHECK(src, root != NULL, "toml_root is NULL");
    walk_table(src, root, 0, "(root)");
}

/* ---- errors ---- */

static const char *skip_digits(const char *p, unsigned long *out)
{
    if (*p < '0' || *p > '9') return NULL;
    char *end = NULL;
    *out = strtoul(p, &end, 10);
    return end;
}

static void check_error(const struct source *src, const gp_error *err)
{
    size_t tlen = strnlen(err->text, sizeof err->text);
    CHECK(src, tlen > 0, "parse failed with an empty error text");
    CHECK(src, tlen < sizeof err->text, "error text is not NUL-terminated");
    size_t flen = strlen(FUZZ_FILE);
    CHECK(src, strncmp(err->text, FUZZ_FILE ":", flen + 1) == 0,
          "error text '%s' does not start with '" FUZZ_FILE ":'", err->text);
    unsigned long line = 0, col = 0;
    const char *p = skip_digits(err->text + flen + 1, &line);
    CHECK(src, p && *p == ':', "error text '%s' has no line", err->text);
    p = skip_digits(p + 1, &col);
    CHECK(src, p && *p == ':', "error text '%s' has no column", err->text);
    CHECK(src, p[1] == ' ' && p[2] != '\0', "error text '%s' has no message", err->text);
    CHECK(src, line == err->line && col == err->col,
          "error text '%s' differs from err.line %u, err.col %u", err->text, err->line, err->col);
    CHECK(src, line <= UINT32_MAX && col <= UINT32_MAX, "error position overflows");
    (void)check_pos(src, (uint32_t)line, (uint32_t)col, err->text);
}

/* ---- emitting ---- */

static char *emit(const struct source *src, const toml_table *root, size_t *len)
{
    char *buf = NULL;
    FILE *out = open_memstream(&buf, len);
    if (!out) abort();
    int rc = toml_emit(root, out);
    if (fclose(out) != 0) abort();
    if (rc != 0) {
        free(buf);
        fail(src, "toml_emit returned %d", rc);
    }
    return buf;
}

static void round_trip(const struct source *src, const toml_doc *doc)
{
    const toml_table *root = toml_root(doc);
    size_t len = 0;
    char *text = emit(src, root, &len);

    struct source emitted = {text, len, EMIT_FILE};
    gp_error err;
    memset(&err, 0, sizeof err);
    toml_doc *again = toml_parse(text, len, EMIT_FILE, &err);
    if (!again) {
        dump("emitted text", text, len);
        fail(src, "the emitted text does not parse: %s", err.text);
    }
    walk_doc(&emitted, again);

    toml_value a = {.type = TOML_TABLE, .u.table = (toml_table *)root};
    toml_value b = {.type = TOML_TABLE, .u.table = (toml_table *)toml_root(again)};
    if (!toml_value_equal(&a, &b) || !toml_value_equal(&b, &a)) {
        dump("emitted text", text, len);
        fail(src, "the emitted text parses to a different tree");
    }

#ifdef TOML_FUZZ_IDEMPOTENT
    size_t len2 = 0;
    char *text2 = emit(&emitted, toml_root(again), &len2);
    if (len2 != len || memcmp(text, text2, len) != 0) {
        dump("emitted text", text, len);
        dump("emitted again", text2, len2);
        fail(src, "emitting the re-parsed tree gives different text");
    }
    free(text2);
#endif

    toml_free(again);
    free(text);
}

/* ---- lookups ---- */

/* Splits `key` and frees the parts; any answer is fine, but the parts must be
 * NUL-terminated at their lengths. */
static void split(const struct source *src, const char *key)
{
    char **parts = NULL;
    size_t *lens = NULL;
    gp_error err;
    memset(&err, 0, sizeof err);
    int n = toml_key_split(key, &parts, &lens, &err);
    if (n < 0) {
        CHECK(src, err.text[0] != '\0', "toml_key_split('%s') failed without an error", key);
        return;
    }
    CHECK(src, n > 0, "toml_key_split('%s') returned no parts", key);
    for (int i = 0; i < n; i++)
        CHECK(src, parts[i] && parts[i][lens[i]] == '\0', "toml_key_split('%s'): part %d", key, i);
    free(parts);
}

/* A dotted key from the first bytes: "[a.b]" and "a.b = 1" both give "a.b".
 * Then the raw first bytes, whatever they are. */
static void lookup_first_bytes(const struct source *src, const toml_doc *doc)
{
    const char *data = src->text;
    size_t size = src->len;
    char key[MAX_KEYLEN + 1];
    size_t i = 0, n = 0;
    while (i < size && (data[i] == '[' || data[i] == ' ' || data[i] == '\t'))
        i++;
    while (i < size && n < MAX_KEYLEN && data[i] != '\n' && data[i] != '\0' && data[i] != '=' &&
           data[i] != ']')
        key[n++] = data[i++];
    while (n > 0 && (key[n - 1] == ' ' || key[n - 1] == '\t'))
        n--;
    key[n] = '\0';

    gp_error err;
    memset(&err, 0, sizeof err);
    const toml_value *v = toml_lookup(toml_root(doc), key, &err);
    if (v) CHECK(src, v->type >= TOML_TABLE && v->type <= TOML_TIME_LOCAL, "toml_lookup type");
    split(src, key);

    n = size < MAX_KEYLEN ? size : MAX_KEYLEN;
    memcpy(key, data, n);
    key[n] = '\0';
    v = toml_lookup(toml_root(doc), key, &err);
    if (v) CHECK(src, v->type >= TOML_TABLE && v->type <= TOML_TIME_LOCAL, "toml_lookup type");
    split(src, key);
}

/* Every key, quoted as a basic string, joined by dots from the root through
 * tables, must look up to its own entry. */
enum { PATH_MAX_BYTES = 16384, PATH_MAX_DEPTH = 16 };

static size_t quote_key(char *out, size_t at, const char *key, uint32_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    if (at + 2 >= PATH_MAX_BYTES) return SIZE_MAX;
    out[at++] = '"';
    for (uint32_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)key[i];
        if (at + 8 >= PATH_MAX_BYTES) return SIZE_MAX;
        if (c == '"' || c == '\\') {
            out[at++] = '\\';
            out[at++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            memcpy(out + at, "\\u00", 4);
            out[at + 4] = hex[c >> 4];
            out[at + 5] = hex[c & 15];
            at += 6;
        } else {
            out[at++] = (char)c;
        }
    }
    out[at++] = '"';
    out[at] = '\0';
    return at;
}

static void lookup_keys(const struct source *src, const toml_table *root, const toml_table *t,
                        char *path, size_t at, unsigned depth)
{
    for (size_t i = 0; i < toml_table_size(t); i++) {
        const toml_entry *e = toml_table_entry(t, i);
        size_t start = at;
        if (depth > 0) path[start++] = '.';
        size_t end = quote_key(path, start, e->key, toml_entry_keylen(e));
        if (end == SIZE_MAX) continue;
        gp_error err;
        memset(&err, 0, sizeof err);
        const toml_value *v = toml_lookup(root, path, &err);
        CHECK(src, v == &e->value, "toml_lookup('%s') returned %p, expected %p (%s)", path,
              (const void *)v, (const void *)&e->value, v ? "" : err.text);
        if (e->value.type == TOML_TABLE && depth + 1 < PATH_MAX_DEPTH)
            lookup_keys(src, root, e->value.u.table, path, end, depth + 1);
    }
}

static void lookup(const struct source *src, const toml_doc *doc)
{
    lookup_first_bytes(src, doc);
    char *path = malloc(PATH_MAX_BYTES);
    if (!path) abort();
    lookup_keys(src, toml_root(doc), toml_root(doc), path, 0, 0);
    free(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct source src = {(const char *)data, size, FUZZ_FILE};
    gp_error err;
    memset(&err, 0, sizeof err);
    toml_doc *doc = toml_parse((const char *)data, size, FUZZ_FILE, &err);
    if (!doc) {
        check_error(&src, &err);
        return 0;
    }
    walk_doc(&src, doc);
    round_trip(&src, doc);
    lookup(&src, doc);
    toml_free(doc);
    return 0;
}
