/* TOML 1.0: parse with positions, look up, emit.
 *
 * A parsed document owns every node in one arena; toml_free() releases it
 * all. Nodes are read-only to callers. Every table and every key records the
 * file, line and column where it was defined: an explicit [header], a dotted
 * key, or the first header or key that created it implicitly.
 *
 * Lines count from 1; columns count characters (not bytes) from 1. */
#ifndef GPUOP_TOML_TOML_H
#define GPUOP_TOML_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"

typedef enum toml_type {
    TOML_TABLE = 1,
    TOML_ARRAY,
    TOML_STRING,
    TOML_INTEGER,
    TOML_FLOAT,
    TOML_BOOL,
    TOML_DATETIME,       /* offset date-time: 1979-05-27T07:32:00Z */
    TOML_DATETIME_LOCAL, /* 1979-05-27T07:32:00 */
    TOML_DATE_LOCAL,     /* 1979-05-27 */
    TOML_TIME_LOCAL,     /* 07:32:00 */
} toml_type;

typedef struct toml_doc toml_doc;
typedef struct toml_table toml_table;
typedef struct toml_array toml_array;

typedef struct toml_pos {
    const char *file;
    uint32_t line;
    uint32_t col;
} toml_pos;

/* Fields that a kind does not have are zero: a local date has no time, a
 * local time no date, only TOML_DATETIME has an offset. */
typedef struct toml_datetime {
    int16_t year;
    uint8_t month, day;
    uint8_t hour, minute, second;
    bool offset_is_z;       /* written as Z rather than +00:00 */
    int16_t offset_minutes; /* east of UTC */
    uint32_t nanosecond;    /* the fraction truncated to 9 digits */
    const char *fraction;   /* every fractional digit as written, NUL-terminated */
    uint32_t fraction_len;  /* 0 when the time had no fraction */
} toml_datetime;

typedef struct toml_value {
    uint8_t type;  /* toml_type */
    uint8_t flags; /* private to the parser */
    uint32_t len;  /* TOML_STRING: length in bytes (the text may hold NUL) */
    union {
        const char *s; /* TOML_STRING: UTF-8, NUL-terminated after len bytes */
        int64_t i;
        double f;
        bool b;
        const toml_datetime *dt;
        toml_table *table;
        toml_array *array;
    } u;
} toml_value;

/* One key of a table, in the order the document defined them. 32 bytes:
 * a document holds hundreds of thousands of these. */
typedef struct toml_entry {
    const char *key;    /* NUL-terminated; toml_entry_keylen() bytes (may hold NUL) */
    uint32_t line, col; /* where the key was defined; the file is the table's */
    toml_value value;
} toml_entry;

/* The length of an entry's key. Keys are stored once per document, with
 * their length and hash just before the text. */
uint32_t toml_entry_keylen(const toml_entry *e);

/* ---- parsing ---- */

/* Parses `len` bytes at `src`; reads nothing outside them. `filename` is
 * copied and used in positions and errors. Returns NULL and fills err
 * ("FILE:LINE:COL: message") when the input is not valid TOML 1.0. A leading
 * UTF-8 byte order mark is skipped. */
toml_doc *toml_parse(const char *src, size_t len, const char *filename, gp_error *err);

/* Reads and parses a file ("-" for standard input). */
toml_doc *toml_parse_file(const char *path, gp_error *err);

void toml_free(toml_doc *doc);

const toml_table *toml_root(const toml_doc *doc);
const char *toml_doc_file(const toml_doc *doc);
/* Bytes the document's arena took from malloc. */
size_t toml_doc_footprint(const toml_doc *doc);

/* ---- reading tables and arrays ---- */

size_t toml_table_size(const toml_table *t);
/* Entries in definition order; i < toml_table_size(t). */
const toml_entry *toml_table_entry(const toml_table *t, size_t i);
/* NULL when the key is absent. */
const toml_entry *toml_table_find(const toml_table *t, const char *key, size_t keylen);
const toml_value *toml_table_get(const toml_table *t, const char *key);
toml_pos toml_table_pos(const toml_table *t);
toml_pos toml_entry_pos(const toml_table *t, const toml_entry *e);
/* True for tables written inline: { a = 1 }. */
bool toml_table_is_inline(const toml_table *t);
/* True when the table was only created as the parent of a [header], e.g.
 * `a` for [a.b], and never defined itself. */
bool toml_table_is_implicit(const toml_table *t);
/* True when a [header] (or [[header]]) defined the table. */
bool toml_table_has_header(const toml_table *t);

size_t toml_array_size(const toml_array *a);
const toml_value *toml_array_at(const toml_array *a, size_t i);
/* True for arrays built by [[header]] sections. */
bool toml_array_is_table_array(const toml_array *a);

/* ---- keys written as text ---- */

/* Splits a dotted key in TOML syntax (bare, "basic" and 'literal' parts,
 * whitespace around dots allowed), e.g. plugins."io.containerd.grpc.v1.cri".x,
 * into parts allocated in a malloc'd block the caller frees with free().
 * parts[i] points into that block; lens[i] gives each length. Returns the
 * number of parts, or -1 and err. */
int toml_key_split(const char *text, char ***parts, size_t **lens, gp_error *err);

/* Looks a dotted key up from `t`, descending through tables (and into the
 * last element of an array of tables). NULL when any part is absent. */
const toml_value *toml_lookup(const toml_table *t, const char *dotted_key, gp_error *err);

/* ---- writing ---- */

/* Writes `t` as a TOML document: plain keys first, then sub-tables as
 * [dotted.headers] and arrays of tables as [[headers]]; inline tables stay
 * inline. Parsing the output gives back an equal tree. Returns 0, or -1 with
 * errno set when the stream fails. */
int toml_emit(const toml_table *t, FILE *out);

/* Writes a key as TOML: bare when it can be, else a quoted basic string. */
int toml_emit_key(const char *key, size_t len, FILE *out);
bool toml_key_is_bare(const char *key, size_t len);
/* The same into a buffer, snprintf-style: returns the full length, writes at
 * most cap - 1 bytes and a NUL. */
size_t toml_format_key(const char *key, size_t len, char *out, size_t cap);

/* Writes one value in TOML syntax (a string quoted and escaped, a float in the
 * shortest form that reads back the same double, a date-time in RFC 3339 with
 * all its fractional digits). */
int toml_emit_value(const toml_value *v, FILE *out);

/* Formats a double in the shortest decimal form that reads back to the same
 * double, TOML-style ("1.0", "1e+300", "inf", "-inf", "nan"); returns length. */
int toml_format_float(double d, char buf[32]);

/* Formats a date-time value of any of the four kinds in RFC 3339 / TOML form,
 * with every fractional digit; returns length. */
int toml_format_datetime(const toml_value *v, char buf[80]);

/* Equality of two values (tables by key set, arrays in order; NaN equals NaN;
 * floats by bits otherwise so that 0.0 and -0.0 differ). */
bool toml_value_equal(const toml_value *a, const toml_value *b);

#endif
