/* The TOML 1.0 parser: one pass over the bytes, building the tree in an arena.
 *
 * Every read is bounds-checked against `end`; the input need not be
 * NUL-terminated. Errors stop the parse at once and carry the position of the
 * offending byte; the arena is then released whole, so no partial tree leaks.
 *
 * Redefinition rules (the subtle part of TOML) are kept as flags on tables:
 * a [header] may define a table once, and only if no dotted key defined it;
 * dotted keys may extend a table only within the section that created it;
 * inline tables and inline arrays are closed to everything. These are the
 * rules of TOML 1.0 as tomllib and toml++ apply them (the official suite's
 * invalid/table cases pin them down). */
#include "toml/toml_internal.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"
#include "util/i18n.h"

enum {
    /* How deep tables and arrays may nest, counted from the root: code that
     * walks the tree (emitter, JSON, equality) recurses once per level. */
    MAX_DEPTH = 1000,
    /* A key cannot nest deeper than MAX_DEPTH anyway. */
    MAX_KEY_PARTS = MAX_DEPTH,
};

typedef struct key_part {
    const char *s; /* stored in the arena once per document (toml_key_store) */
    uint32_t len;
    uint32_t line, col;
} key_part;

typedef struct parser {
    const char *start; /* the first byte after a byte order mark */
    const char *p;
    const char *end;
    const char *line_start;
    uint32_t line;
    /* UTF-8 continuation bytes seen on the current line: columns count
     * characters, so they are subtracted from the byte offset. */
    uint32_t line_extra;
    gp_arena *arena;
    const char *file;
    gp_error *err;
    toml_table *root;
    toml_table *current; /* the table of the current [section] */
    uint32_t section;
    char *scratch; /* decoding buffer for strings with escapes */
    size_t scratch_len, scratch_cap;
    /* The last string scanned: in the source or in scratch. */
    const char *str;
    size_t str_len;
    /* Elements of the arrays being parsed, innermost last: an array is
     * copied to the arena at its ']' in one block of exactly its size. */
    toml_value *stack;
    size_t stack_len, stack_cap;
    /* Every key of the document, stored once: open addressing over the
     * stored texts, at most half full. */
    const char **keys_seen;
    uint32_t keys_seen_mask, keys_seen_count;
    /* Tables that dotted keys made or extended in this section: complete
     * when it ends, so they are shrunk to size then. */
    toml_table **dotted;
    size_t dotted_len, dotted_cap;
    locale_t c_locale;
    key_part keys[MAX_KEY_PARTS];
} parser;

/* ---- positions and errors ---- */

static uint32_t column_at(const parser *ps, const char *at)
{
    return (uint32_t)(at - ps->line_start) - ps->line_extra + 1;
}

static int fail_at(parser *ps, const char *at, const char *fmt, ...) GP_PRINTF(3, 4);
static int fail_at(parser *ps, const char *at, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, _(fmt), ap);
    va_end(ap);
    /* `at` may lie on an earlier line (the opening quotes of a multi-line
     * string): step back to its line. Errors are rare; a scan is fine. */
    uint32_t line = ps->line;
    const char *line_start = ps->line_start;
    while (at < line_start && line_start > ps->start) {
        line--;
        line_start--; /* onto the '\n' that ended the previous line */
        while (line_start > ps->start && line_start[-1] != '\n')
            line_start--;
    }
    /* Count characters afresh: line_extra may include bytes past `at`. */
    uint32_t col = 1;
    for (const char *q = line_start; q < at && q < ps->end; q++)
        if (((unsigned char)*q & 0xC0) != 0x80) col++;
    gp_error_set(ps->err, ps->file, line, col, "%s", msg);
    return -1;
}

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        if ((expr) != 0) return -1;                                                                \
    } while (0)

static int out_of_memory(parser *ps)
{
    return fail_at(ps, ps->p, "out of memory");
}

/* A printable description of the byte at p for error messages. */
static const char *describe_at(const parser *ps, const char *p, char buf[32])
{
    if (p >= ps->end) return _("end of file");
    unsigned char c = (unsigned char)*p;
    if (c == '\n') return _("end of line");
    if (c >= 0x21 && c < 0x7F)
        snprintf(buf, 32, "'%c'", c);
    else
        snprintf(buf, 32, _("byte 0x%02X"), c);
    return buf;
}

static void newline(parser *ps, const char *after)
{
    ps->line++;
    ps->line_start = after;
    ps->line_extra = 0;
}

/* ---- characters ---- */

/* Bytes a bare key may hold. */
static const unsigned char bare_key_char[256] = {
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1,
    ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1,
    ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
    ['Y'] = 1, ['Z'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
    ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1,
    ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1,
    ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1, ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1,
    ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1, ['_'] = 1, ['-'] = 1,
};

/* Bytes that end a fast run inside a string: quotes, backslash, control
 * characters other than tab, DEL and every non-ASCII byte (validated as UTF-8
 * one sequence at a time). Bit 1: basic strings; bit 2: literal strings. */
enum { STOP_BASIC = 1, STOP_LITERAL = 2 };
static unsigned char string_stop[256];

static void init_string_stop(void)
{
    if (string_stop[0]) return;
    for (int c = 0; c < 256; c++) {
        unsigned char v = 0;
        if ((c < 0x20 && c != '\t') || c >= 0x7F) v = STOP_BASIC | STOP_LITERAL;
        if (c == '"' || c == '\\') v |= STOP_BASIC;
        if (c == '\'') v |= STOP_LITERAL;
        string_stop[c] = v;
    }
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static int peek(const parser *ps)
{
    return ps->p < ps->end ? (unsigned char)*ps->p : -1;
}

static int peek_at(const parser *ps, size_t ahead)
{
    return (size_t)(ps->end - ps->p) > ahead ? (unsigned char)ps->p[ahead] : -1;
}

/* Length of the valid UTF-8 sequence at p (2-4), or 0 if it is not one:
 * overlong forms, surrogates and code points past U+10FFFF are rejected. */
static int utf8_sequence(const unsigned char *p, const unsigned char *end)
{
    unsigned char c = p[0];
    size_t avail = (size_t)(end - p);
    if (c >= 0xC2 && c <= 0xDF) return avail >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (avail < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && p[1] < 0xA0) return 0; /* overlong */
        if (c == 0xED && p[1] > 0x9F) return 0; /* surrogate */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (avail < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && p[1] < 0x90) return 0; /* overlong */
        if (c == 0xF4 && p[1] > 0x8F) return 0; /* past U+10FFFF */
        return 4;
    }
    return 0;
}

/* Steps over one non-ASCII character at ps->p, or fails. */
static int skip_utf8(parser *ps)
{
    int n = utf8_sequence((const unsigned char *)ps->p, (const unsigned char *)ps->end);
    if (n == 0) return fail_at(ps, ps->p, "invalid UTF-8 byte 0x%02X", (unsigned char)*ps->p);
    ps->p += n;
    ps->line_extra += (uint32_t)n - 1;
    return 0;
}

/* ---- whitespace, comments, newlines ---- */

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t'))
        ps->p++;
}

/* A comment runs to the end of the line; it may hold any UTF-8 text but no
 * control character other than tab. */
static int skip_comment(parser *ps)
{
    ps->p++; /* '#' */
    while (ps->p < ps->end) {
        unsigned char c = (unsigned char)*ps->p;
        if (c >= 0x20 && c < 0x7F) {
            ps->p++;
        } else if (c == '\t') {
            ps->p++;
        } else if (c == '\n') {
            return 0;
        } else if (c == '\r') {
            if (peek_at(ps, 1) == '\n') return 0;
            return fail_at(ps, ps->p, "carriage return not followed by a line feed");
        } else if (c >= 0x80) {
            TRY(skip_utf8(ps));
        } else {
            return fail_at(ps, ps->p, "control character 0x%02X in a comment", c);
        }
    }
    return 0;
}

/* Consumes a newline (LF or CRLF) at ps->p if there is one; returns 1 if it did. */
static int eat_newline(parser *ps)
{
    if (ps->p < ps->end && *ps->p == '\n') {
        ps->p++;
        newline(ps, ps->p);
        return 1;
    }
    if (ps->p + 1 < ps->end && ps->p[0] == '\r' && ps->p[1] == '\n') {
        ps->p += 2;
        newline(ps, ps->p);
        return 1;
    }
    return 0;
}

/* After a statement: optional whitespace and comment, then a newline or the end. */
static int end_of_statement(parser *ps)
{
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '#') TRY(skip_comment(ps));
    if (ps->p >= ps->end || eat_newline(ps)) return 0;
    char buf[32];
    return fail_at(ps, ps->p, "expected a newline after the value, found %s",
                   describe_at(ps, ps->p, buf));
}

/* Whitespace, newlines and comments, as allowed between array elements. */
static int skip_ws_newlines_comments(parser *ps)
{
    for (;;) {
        skip_ws(ps);
        if (ps->p >= ps->end) return 0;
        if (*ps->p == '#') {
            TRY(skip_comment(ps));
            continue;
        }
        if (eat_newline(ps)) continue;
        if (*ps->p == '\r')
            return fail_at(ps, ps->p, "carriage return not followed by a line feed");
        return 0;
    }
}

/* ---- strings ---- */

static int scratch_append(parser *ps, const char *s, size_t n)
{
    if (n == 0) return 0;
    if (ps->scratch_len + n > ps->scratch_cap) {
        size_t cap = ps->scratch_cap ? ps->scratch_cap : 256;
        while (cap < ps->scratch_len + n)
            cap *= 2;
        char *bigger = realloc(ps->scratch, cap);
        if (!bigger) return out_of_memory(ps);
        ps->scratch = bigger;
        ps->scratch_cap = cap;
    }
    memcpy(ps->scratch + ps->scratch_len, s, n);
    ps->scratch_len += n;
    return 0;
}

static int scratch_append_utf8(parser *ps, uint32_t cp)
{
    char buf[4];
    size_t n;
    if (cp < 0x80) {
        buf[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        buf[0] = (char)(0xC0 | (cp >> 6));
        buf[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        buf[0] = (char)(0xE0 | (cp >> 12));
        buf[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        buf[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        buf[0] = (char)(0xF0 | (cp >> 18));
        buf[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        buf[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        buf[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return scratch_append(ps, buf, n);
}

static int hex_value(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* An escape at ps->p (the backslash), appended decoded to the scratch buffer. */
static int decode_escape(parser *ps)
{
    const char *at = ps->p;
    int c = peek_at(ps, 1);
    const char *simple = NULL;
    switch (c) {
    case 'b':
        simple = "\b";
        break;
    case 't':
        simple = "\t";
        break;
    case 'n':
        simple = "\n";
        break;
    case 'f':
        simple = "\f";
        break;
    case 'r':
        simple = "\r";
        break;
    case '"':
        simple = "\"";
        break;
    case '\\':
        simple = "\\";
        break;
    case 'u':
    case 'U':
        break;
    case -1:
        return fail_at(ps, at, "unterminated string");
    default: {
        char buf[32];
        return fail_at(ps, at, "invalid escape sequence: backslash followed by %s",
                       describe_at(ps, at + 1, buf));
    }
    }
    if (simple) {
        ps->p += 2;
        return scratch_append(ps, simple, 1);
    }
    int digits = c == 'u' ? 4 : 8;
    uint32_t cp = 0;
    for (int i = 0; i < digits; i++) {
        int h = hex_value(peek_at(ps, 2 + (size_t)i));
        if (h < 0) return fail_at(ps, at, "\\%c escape needs %d hexadecimal digits", c, digits);
        cp = cp * 16 + (uint32_t)h;
    }
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return fail_at(ps, at, "\\%c%.*s is not a Unicode scalar value", c, digits, at + 2);
    ps->p += 2 + digits;
    return scratch_append_utf8(ps, cp);
}

/* Leaves the decoded string in ps->str: straight in the source when it
 * needed no decoding, else in the scratch buffer. */
static int finish_string(parser *ps, const char *run, size_t run_len, bool decoded)
{
    ps->str = run;
    ps->str_len = run_len;
    if (decoded) {
        TRY(scratch_append(ps, run, run_len));
        ps->str = ps->scratch;
        ps->str_len = ps->scratch_len;
    }
    if (ps->str_len > UINT32_MAX) return fail_at(ps, ps->p, "string longer than 4 GiB");
    return 0;
}

static int store_string(parser *ps, toml_value *v)
{
    char *s = gp_arena_strndup(ps->arena, ps->str, ps->str_len);
    if (!s) return out_of_memory(ps);
    v->type = TOML_STRING;
    v->u.s = s;
    v->len = (uint32_t)ps->str_len;
    return 0;
}

/* Scans bytes that need no attention; returns the first byte that does. */
static const char *scan_plain(const char *p, const char *end, unsigned char stop_mask)
{
    while (p < end && !(string_stop[(unsigned char)*p] & stop_mask))
        p++;
    return p;
}

/* "basic" or 'literal', on one line, into ps->str. */
static int scan_single_line_string(parser *ps, bool literal)
{
    const char *open = ps->p;
    char quote = literal ? '\'' : '"';
    unsigned char mask = literal ? STOP_LITERAL : STOP_BASIC;
    ps->p++;
    ps->scratch_len = 0;
    bool decoded = false;
    const char *run = ps->p;
    for (;;) {
        ps->p = scan_plain(ps->p, ps->end, mask);
        if (ps->p >= ps->end) return fail_at(ps, open, "unterminated string");
        unsigned char c = (unsigned char)*ps->p;
        if (c == (unsigned char)quote) {
            TRY(finish_string(ps, run, (size_t)(ps->p - run), decoded));
            ps->p++;
            return 0;
        }
        if (c == '\\') {
            TRY(scratch_append(ps, run, (size_t)(ps->p - run)));
            TRY(decode_escape(ps));
            decoded = true;
            run = ps->p;
        } else if (c >= 0x80) {
            TRY(skip_utf8(ps));
        } else if (c == '\n' || c == '\r') {
            return fail_at(ps, open, "unterminated string: newline before the closing %c", quote);
        } else {
            return fail_at(ps, ps->p, "control character 0x%02X in a string; write it as an escape",
                           c);
        }
    }
}

/* A backslash at the end of a line in a """string""" removes the newline and
 * all whitespace and newlines after it. Returns 1 if ps->p starts one. */
static int line_ending_backslash(parser *ps)
{
    const char *q = ps->p + 1;
    while (q < ps->end && (*q == ' ' || *q == '\t'))
        q++;
    if (q < ps->end && *q == '\n') return 1;
    if (q + 1 < ps->end && q[0] == '\r' && q[1] == '\n') return 1;
    return 0;
}

static int skip_trimmed_whitespace(parser *ps)
{
    for (;;) {
        skip_ws(ps);
        if (eat_newline(ps)) continue;
        if (ps->p < ps->end && *ps->p == '\r')
            return fail_at(ps, ps->p, "carriage return not followed by a line feed");
        return 0;
    }
}

/* """multi-line basic""" or '''multi-line literal'''. Newlines inside are
 * stored as LF, whatever the file uses. */
static int scan_multiline_string(parser *ps, bool literal)
{
    const char *open = ps->p;
    const char quote = literal ? '\'' : '"';
    unsigned char mask = literal ? STOP_LITERAL : STOP_BASIC;
    ps->p += 3;
    eat_newline(ps); /* a newline right after the opening delimiter is trimmed */
    ps->scratch_len = 0;
    bool decoded = false;
    const char *run = ps->p;
    for (;;) {
        ps->p = scan_plain(ps->p, ps->end, mask);
        if (ps->p >= ps->end) return fail_at(ps, open, "unterminated multi-line string");
        unsigned char c = (unsigned char)*ps->p;
        if (c == (unsigned char)quote) {
            size_t n = 0;
            while (ps->p + n < ps->end && ps->p[n] == quote)
                n++;
            if (n < 3) {
                ps->p += n;
                continue;
            }
            if (n > 5)
                return fail_at(ps, ps->p + 5, "too many quotes at the end of a multi-line string");
            /* Up to two quotes before the closing three belong to the text. */
            ps->p += n - 3;
            TRY(finish_string(ps, run, (size_t)(ps->p - run), decoded));
            ps->p += 3;
            return 0;
        }
        if (c == '\n') {
            ps->p++;
            newline(ps, ps->p);
        } else if (c == '\r') {
            if (peek_at(ps, 1) != '\n')
                return fail_at(ps, ps->p, "carriage return not followed by a line feed");
            TRY(scratch_append(ps, run, (size_t)(ps->p - run)));
            TRY(scratch_append(ps, "\n", 1));
            decoded = true;
            ps->p += 2;
            newline(ps, ps->p);
            run = ps->p;
        } else if (c == '\\') {
            TRY(scratch_append(ps, run, (size_t)(ps->p - run)));
            decoded = true;
            if (line_ending_backslash(ps)) {
                ps->p++;
                TRY(skip_trimmed_whitespace(ps));
            } else {
                TRY(decode_escape(ps));
            }
            run = ps->p;
        } else if (c >= 0x80) {
            TRY(skip_utf8(ps));
        } else {
            return fail_at(ps, ps->p, "control character 0x%02X in a string; write it as an escape",
                           c);
        }
    }
}

static int parse_string(parser *ps, toml_value *v)
{
    char q = *ps->p;
    if (peek_at(ps, 1) == q && peek_at(ps, 2) == q)
        TRY(scan_multiline_string(ps, q == '\''));
    else
        TRY(scan_single_line_string(ps, q == '\''));
    return store_string(ps, v);
}

/* ---- keys ---- */

/* The stored copy of a key, made on first sight. */
static const char *intern_key(parser *ps, const char *text, uint32_t len)
{
    if (ps->keys_seen_count * 2 >= ps->keys_seen_mask) {
        uint32_t slots = ps->keys_seen_mask ? (ps->keys_seen_mask + 1) * 2 : 256;
        const char **seen = calloc(slots, sizeof *seen);
        if (!seen) return NULL;
        for (uint32_t i = 0; ps->keys_seen_mask && i <= ps->keys_seen_mask; i++) {
            const char *k = ps->keys_seen[i];
            if (!k) continue;
            uint32_t slot = toml_key_header_of(k)->hash & (slots - 1);
            while (seen[slot])
                slot = (slot + 1) & (slots - 1);
            seen[slot] = k;
        }
        free(ps->keys_seen);
        ps->keys_seen = seen;
        ps->keys_seen_mask = slots - 1;
    }
    uint32_t hash = toml_hash(text, len);
    uint32_t slot = hash & ps->keys_seen_mask;
    for (;; slot = (slot + 1) & ps->keys_seen_mask) {
        const char *k = ps->keys_seen[slot];
        if (!k) break;
        const toml_key_header *h = toml_key_header_of(k);
        if (h->hash == hash && h->len == len && memcmp(k, text, len) == 0) return k;
    }
    const char *stored = toml_key_store(ps->arena, text, len, hash);
    if (!stored) return NULL;
    ps->keys_seen[slot] = stored;
    ps->keys_seen_count++;
    return stored;
}

static int parse_simple_key(parser *ps, key_part *k)
{
    k->line = ps->line;
    k->col = column_at(ps, ps->p);
    int c = peek(ps);
    if (c == '"' || c == '\'') {
        if (peek_at(ps, 1) == c && peek_at(ps, 2) == c)
            return fail_at(ps, ps->p, "a key cannot be a multi-line string");
        TRY(scan_single_line_string(ps, c == '\''));
    } else {
        const char *start = ps->p;
        while (ps->p < ps->end && bare_key_char[(unsigned char)*ps->p])
            ps->p++;
        if (ps->p == start) {
            char buf[32];
            return fail_at(ps, ps->p, "expected a key, found %s", describe_at(ps, ps->p, buf));
        }
        ps->str = start;
        ps->str_len = (size_t)(ps->p - start);
    }
    k->len = (uint32_t)ps->str_len;
    k->s = intern_key(ps, ps->str, k->len);
    if (!k->s) return out_of_memory(ps);
    return 0;
}

/* A dotted key into ps->keys; returns the number of parts or -1. */
static int parse_key(parser *ps)
{
    int n = 0;
    for (;;) {
        if (n == MAX_KEY_PARTS) return fail_at(ps, ps->p, "key has too many dotted parts");
        TRY(parse_simple_key(ps, &ps->keys[n]));
        n++;
        skip_ws(ps);
        if (peek(ps) != '.') return n;
        ps->p++;
        skip_ws(ps);
    }
}

static toml_entry *add_entry(parser *ps, toml_table *t, const key_part *k)
{
    toml_entry *e = toml_table_add(ps->arena, t, k->s);
    if (!e) return NULL;
    e->line = k->line;
    e->col = k->col;
    return e;
}

/* A dotted key's first n parts for messages, written as TOML would write
 * them, e.g. plugins."io.containerd.grpc.v1.cri"; cut short if long. */
static const char *key_for_message(const key_part *parts, int n, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fmemopen(buf, size, "w");
    if (!f) return buf;
    for (int i = 0; i < n; i++) {
        if (i) fputc('.', f);
        toml_emit_key(parts[i].s, parts[i].len, f);
    }
    fclose(f);
    buf[size - 1] = '\0';
    return buf;
}

/* ---- values ---- */

static int parse_value(parser *ps, toml_value *v, uint32_t depth);

static int parse_bool(parser *ps, toml_value *v)
{
    size_t left = (size_t)(ps->end - ps->p);
    if (left >= 4 && memcmp(ps->p, "true", 4) == 0) {
        ps->p += 4;
        v->type = TOML_BOOL;
        v->u.b = true;
        return 0;
    }
    if (left >= 5 && memcmp(ps->p, "false", 5) == 0) {
        ps->p += 5;
        v->type = TOML_BOOL;
        v->u.b = false;
        return 0;
    }
    return fail_at(ps, ps->p, "invalid value; strings must be quoted");
}

/* inf and nan, after an optional sign. */
static int parse_special_float(parser *ps, toml_value *v, const char *start, bool negative)
{
    size_t left = (size_t)(ps->end - ps->p);
    if (left >= 3 && memcmp(ps->p, "inf", 3) == 0) {
        v->u.f = negative ? -INFINITY : INFINITY;
    } else if (left >= 3 && memcmp(ps->p, "nan", 3) == 0) {
        v->u.f = negative ? -NAN : NAN;
    } else {
        return fail_at(ps, start, "invalid value; strings must be quoted");
    }
    ps->p += 3;
    v->type = TOML_FLOAT;
    return 0;
}

/* Appends one byte to the scratch buffer (numbers are built there). */
static int scratch_push(parser *ps, char c)
{
    if (ps->scratch_len < ps->scratch_cap) {
        ps->scratch[ps->scratch_len++] = c;
        return 0;
    }
    return scratch_append(ps, &c, 1);
}

/* Digits with single underscores between them, appended to the scratch
 * buffer without the underscores. Returns the number of digits, or -1. */
static int scan_digits(parser *ps, int (*digit_value)(int))
{
    int count = 0;
    for (;;) {
        int c = peek(ps);
        if (c >= 0 && digit_value(c) >= 0) {
            TRY(scratch_push(ps, (char)c));
            count++;
            ps->p++;
        } else if (c == '_') {
            if (count == 0 || ps->p + 1 >= ps->end || digit_value((unsigned char)ps->p[1]) < 0)
                return fail_at(ps, ps->p, "an underscore in a number must stand between digits");
            ps->p++;
        } else {
            return count;
        }
    }
}

static int dec_digit(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : -1;
}

static int oct_digit(int c)
{
    return c >= '0' && c <= '7' ? c - '0' : -1;
}

static int bin_digit(int c)
{
    return c == '0' || c == '1' ? c - '0' : -1;
}

/* 0x, 0o, 0b integers: unsigned, no sign allowed, leading zeros allowed. */
static int parse_prefixed_integer(parser *ps, toml_value *v)
{
    const char *start = ps->p;
    char kind = ps->p[1];
    int base = kind == 'x' ? 16 : kind == 'o' ? 8 : 2;
    int (*digit)(int) = kind == 'x' ? hex_value : kind == 'o' ? oct_digit : bin_digit;
    ps->p += 2;
    ps->scratch_len = 0;
    int count = scan_digits(ps, digit);
    if (count < 0) return -1;
    if (count == 0) return fail_at(ps, start, "no digits after 0%c", kind);
    uint64_t acc = 0;
    for (size_t i = 0; i < ps->scratch_len; i++) {
        uint64_t d = (uint64_t)digit((unsigned char)ps->scratch[i]);
        if (acc > ((uint64_t)INT64_MAX - d) / (uint64_t)base)
            return fail_at(ps, start, "integer does not fit in 64 bits");
        acc = acc * (uint64_t)base + d;
    }
    v->type = TOML_INTEGER;
    v->u.i = (int64_t)acc;
    return 0;
}

/* Parses the cleaned decimal text of a float in the C locale: strtod is
 * correctly rounded, but reads the decimal point of the current locale. */
static int float_from_text(parser *ps, const char *start, const char *text, double *out)
{
    if (!ps->c_locale) {
        ps->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
        if (!ps->c_locale) return out_of_memory(ps);
    }
    locale_t old = uselocale(ps->c_locale);
    errno = 0;
    char *stop;
    *out = strtod(text, &stop);
    uselocale(old);
    if (*stop != '\0') return fail_at(ps, start, "invalid float");
    /* Overflow to infinity is an error; underflow to zero or a subnormal is a
     * correct rounding of the literal. */
    if (errno == ERANGE && isinf(*out)) return fail_at(ps, start, "float out of range");
    return 0;
}

/* Decimal integers and floats, with an optional sign. */
static int parse_number(parser *ps, toml_value *v)
{
    const char *start = ps->p;
    bool negative = false;
    if (*ps->p == '+' || *ps->p == '-') {
        negative = *ps->p == '-';
        ps->p++;
        int c = peek(ps);
        if (c == 'i' || c == 'n') return parse_special_float(ps, v, start, negative);
        if (!is_digit(c)) return fail_at(ps, start, "expected digits after the sign");
    } else if (*ps->p == '0' &&
               (peek_at(ps, 1) == 'x' || peek_at(ps, 1) == 'o' || peek_at(ps, 1) == 'b')) {
        return parse_prefixed_integer(ps, v);
    }
    /* The literal without underscores goes to the scratch buffer: strtod
     * needs it as one string, and its length has no limit. */
    ps->scratch_len = 0;
    if (negative) TRY(scratch_push(ps, '-'));
    const char *int_start = ps->p;
    int int_digits = scan_digits(ps, dec_digit);
    if (int_digits < 0) return -1;
    if (int_digits > 1 && *int_start == '0')
        return fail_at(ps, int_start, "leading zeros are not allowed in a decimal number");
    bool is_float = false;
    if (peek(ps) == '.') {
        is_float = true;
        ps->p++;
        TRY(scratch_push(ps, '.'));
        int count = scan_digits(ps, dec_digit);
        if (count < 0) return -1;
        if (count == 0) return fail_at(ps, ps->p, "expected digits after the decimal point");
    }
    if (peek(ps) == 'e' || peek(ps) == 'E') {
        is_float = true;
        ps->p++;
        TRY(scratch_push(ps, 'e'));
        if (peek(ps) == '+' || peek(ps) == '-') TRY(scratch_push(ps, *ps->p++));
        int count = scan_digits(ps, dec_digit);
        if (count < 0) return -1;
        if (count == 0) return fail_at(ps, ps->p, "expected digits in the exponent");
    }
    TRY(scratch_push(ps, '\0'));
    const char *text = ps->scratch;
    if (is_float) {
        v->type = TOML_FLOAT;
        return float_from_text(ps, start, text, &v->u.f);
    }
    /* Accumulate as a negative number so that INT64_MIN fits. */
    int64_t acc = 0;
    for (const char *d = text + (negative ? 1 : 0); *d; d++) {
        int digit = *d - '0';
        if (acc < (INT64_MIN + digit) / 10)
            return fail_at(ps, start, "integer does not fit in 64 bits");
        acc = acc * 10 - digit;
    }
    if (!negative) {
        if (acc == INT64_MIN) return fail_at(ps, start, "integer does not fit in 64 bits");
        acc = -acc;
    }
    v->type = TOML_INTEGER;
    v->u.i = acc;
    return 0;
}

/* ---- dates and times ---- */

/* Exactly `count` decimal digits at ps->p. */
static int fixed_digits(parser *ps, int count, int *out)
{
    int value = 0;
    for (int i = 0; i < count; i++) {
        int c = peek_at(ps, (size_t)i);
        if (!is_digit(c)) return -1;
        value = value * 10 + (c - '0');
    }
    ps->p += count;
    *out = value;
    return 0;
}

static bool is_leap_year(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap_year(y) ? 29 : days[m - 1];
}

static int parse_date(parser *ps, toml_datetime *dt, const char *start)
{
    int y, m, d;
    if (fixed_digits(ps, 4, &y) || peek(ps) != '-') goto bad;
    ps->p++;
    if (fixed_digits(ps, 2, &m) || peek(ps) != '-') goto bad;
    ps->p++;
    if (fixed_digits(ps, 2, &d)) goto bad;
    if (m < 1 || m > 12) return fail_at(ps, start, "month %02d out of range", m);
    if (d < 1 || d > days_in_month(y, m))
        return fail_at(ps, start, "day %02d out of range for %04d-%02d", d, y, m);
    dt->year = (int16_t)y;
    dt->month = (uint8_t)m;
    dt->day = (uint8_t)d;
    return 0;
bad:
    return fail_at(ps, start, "invalid date; expected YYYY-MM-DD");
}

static int parse_time(parser *ps, toml_datetime *dt, const char *start)
{
    int h, mi, s;
    if (fixed_digits(ps, 2, &h) || peek(ps) != ':') goto bad;
    ps->p++;
    if (fixed_digits(ps, 2, &mi) || peek(ps) != ':') goto bad;
    ps->p++;
    if (fixed_digits(ps, 2, &s)) goto bad;
    if (h > 23 || mi > 59 || s > 60)
        return fail_at(ps, start, "time %02d:%02d:%02d out of range", h, mi, s);
    dt->hour = (uint8_t)h;
    dt->minute = (uint8_t)mi;
    dt->second = (uint8_t)s;
    if (peek(ps) != '.') return 0;
    ps->p++;
    const char *digits = ps->p;
    while (ps->p < ps->end && is_digit((unsigned char)*ps->p))
        ps->p++;
    size_t len = (size_t)(ps->p - digits);
    if (len == 0) return fail_at(ps, ps->p, "expected digits after the decimal point");
    if (len > UINT32_MAX) return fail_at(ps, digits, "fraction too long");
    uint32_t nanos = 0;
    for (size_t i = 0; i < 9; i++)
        nanos = nanos * 10 + (i < len ? (uint32_t)(digits[i] - '0') : 0);
    dt->nanosecond = nanos;
    dt->fraction = gp_arena_strndup(ps->arena, digits, len);
    if (!dt->fraction) return out_of_memory(ps);
    dt->fraction_len = (uint32_t)len;
    return 0;
bad:
    return fail_at(ps, start, "invalid time; expected HH:MM:SS");
}

static int parse_offset(parser *ps, toml_datetime *dt, const char *start)
{
    int c = peek(ps);
    if (c == 'Z' || c == 'z') {
        ps->p++;
        dt->offset_is_z = true;
        return 1;
    }
    if (c != '+' && c != '-') return 0;
    ps->p++;
    int h, m;
    if (fixed_digits(ps, 2, &h) || peek(ps) != ':' || (ps->p++, fixed_digits(ps, 2, &m)))
        return fail_at(ps, start, "invalid time offset; expected +HH:MM or -HH:MM");
    if (h > 23 || m > 59) return fail_at(ps, start, "time offset %02d:%02d out of range", h, m);
    dt->offset_minutes = (int16_t)((c == '-' ? -1 : 1) * (h * 60 + m));
    return 1;
}

static int parse_datetime(parser *ps, toml_value *v)
{
    const char *start = ps->p;
    toml_datetime *dt = gp_arena_zalloc(ps->arena, sizeof *dt);
    if (!dt) return out_of_memory(ps);
    v->u.dt = dt;
    if (peek_at(ps, 2) == ':') {
        TRY(parse_time(ps, dt, start));
        v->type = TOML_TIME_LOCAL;
        return 0;
    }
    TRY(parse_date(ps, dt, start));
    v->type = TOML_DATE_LOCAL;
    /* A space separates date and time only when a time follows it. */
    int sep = peek(ps);
    if (!(sep == 'T' || sep == 't' || (sep == ' ' && is_digit(peek_at(ps, 1))))) return 0;
    ps->p++;
    TRY(parse_time(ps, dt, start));
    v->type = TOML_DATETIME_LOCAL;
    int has_offset = parse_offset(ps, dt, start);
    if (has_offset < 0) return -1;
    if (has_offset) v->type = TOML_DATETIME;
    return 0;
}

/* Does the text at ps->p start a date or a time rather than a number? */
static bool looks_like_datetime(const parser *ps)
{
    for (int i = 0; i < 4; i++)
        if (!is_digit(peek_at(ps, (size_t)i))) return i == 2 && peek_at(ps, 2) == ':';
    return peek_at(ps, 4) == '-';
}

/* ---- arrays and inline tables ---- */

static int check_depth(parser *ps, uint32_t depth)
{
    if (depth > MAX_DEPTH)
        return fail_at(ps, ps->p, "tables and arrays nested deeper than %d levels", MAX_DEPTH);
    return 0;
}

static int stack_push(parser *ps, const toml_value *v)
{
    if (ps->stack_len == ps->stack_cap) {
        size_t cap = ps->stack_cap ? ps->stack_cap * 2 : 64;
        toml_value *bigger = realloc(ps->stack, cap * sizeof *bigger);
        if (!bigger) return out_of_memory(ps);
        ps->stack = bigger;
        ps->stack_cap = cap;
    }
    ps->stack[ps->stack_len++] = *v;
    return 0;
}

/* The elements above `base` on the stack become one arena block. */
static int pop_array(parser *ps, size_t base, toml_value *v)
{
    size_t count = ps->stack_len - base;
    if (count > UINT32_MAX) return fail_at(ps, ps->p, "array too long");
    toml_array *arr = gp_arena_alloc(ps->arena, sizeof *arr + count * sizeof(toml_value));
    if (!arr) return out_of_memory(ps);
    arr->items = (toml_value *)(arr + 1);
    arr->count = arr->cap = (uint32_t)count;
    arr->table_array = false;
    if (count) memcpy(arr->items, ps->stack + base, count * sizeof(toml_value));
    ps->stack_len = base;
    v->type = TOML_ARRAY;
    v->u.array = arr;
    return 0;
}

/* `depth`: how deep this value sits in the document. */
static int parse_array(parser *ps, toml_value *v, uint32_t depth)
{
    TRY(check_depth(ps, depth));
    size_t base = ps->stack_len;
    ps->p++; /* '[' */
    for (;;) {
        TRY(skip_ws_newlines_comments(ps));
        if (peek(ps) == ']') break;
        toml_value item = {0};
        TRY(parse_value(ps, &item, depth + 1));
        TRY(stack_push(ps, &item));
        TRY(skip_ws_newlines_comments(ps));
        int c = peek(ps);
        if (c == ',') {
            ps->p++;
            continue;
        }
        if (c == ']') break;
        char buf[32];
        return fail_at(ps, ps->p, "expected ',' or ']' in an array, found %s",
                       describe_at(ps, ps->p, buf));
    }
    ps->p++;
    return pop_array(ps, base, v);
}

static int insert_dotted(parser *ps, toml_table *t, int nkeys, toml_value **slot,
                         uint32_t *slot_depth);

/* key = value, placed in table t (a section's table or an inline table). */
static int parse_keyval_in(parser *ps, toml_table *t)
{
    int nkeys = parse_key(ps);
    if (nkeys < 0) return -1;
    if (peek(ps) != '=') {
        char buf[32];
        return fail_at(ps, ps->p, "expected '=' after the key, found %s",
                       describe_at(ps, ps->p, buf));
    }
    ps->p++;
    skip_ws(ps);
    toml_value *slot = NULL;
    uint32_t slot_depth = 0;
    TRY(insert_dotted(ps, t, nkeys, &slot, &slot_depth));
    return parse_value(ps, slot, slot_depth);
}

/* Tables that dotted keys made inside an inline table close with it. */
static void close_inline(parser *ps, toml_table *t)
{
    t->flags |= TABLE_INLINE;
    toml_table_shrink(ps->arena, t);
    for (uint32_t i = 0; i < t->count; i++) {
        toml_value *v = &t->entries[i].value;
        if (v->type == TOML_TABLE && !(v->u.table->flags & TABLE_INLINE))
            close_inline(ps, v->u.table);
    }
}

/* { key = value, ... } on one line; no trailing comma (TOML 1.0). */
static int parse_inline_table(parser *ps, toml_value *v, uint32_t depth)
{
    TRY(check_depth(ps, depth));
    toml_table *t = toml_table_new(ps->arena, ps->file, ps->line, column_at(ps, ps->p));
    if (!t) return out_of_memory(ps);
    t->depth = (uint16_t)depth;
    v->type = TOML_TABLE;
    v->u.table = t;
    ps->p++; /* '{' */
    skip_ws(ps);
    if (peek(ps) == '}') {
        ps->p++;
        t->flags |= TABLE_INLINE;
        return 0;
    }
    for (;;) {
        skip_ws(ps);
        TRY(parse_keyval_in(ps, t));
        skip_ws(ps);
        int c = peek(ps);
        if (c == ',') {
            ps->p++;
            skip_ws(ps);
            if (peek(ps) == '\n' || peek(ps) == '\r')
                return fail_at(ps, ps->p, "newline in an inline table (not allowed in TOML 1.0)");
            if (peek(ps) == '}')
                return fail_at(ps, ps->p,
                               "trailing comma in an inline table (not allowed in TOML 1.0)");
            continue;
        }
        if (c == '}') break;
        char buf[32];
        if (c == '\n' || c == '\r')
            return fail_at(ps, ps->p, "newline in an inline table (not allowed in TOML 1.0)");
        return fail_at(ps, ps->p, "expected ',' or '}' in an inline table, found %s",
                       describe_at(ps, ps->p, buf));
    }
    ps->p++;
    close_inline(ps, t);
    return 0;
}

static int parse_value(parser *ps, toml_value *v, uint32_t depth)
{
    int c = peek(ps);
    switch (c) {
    case '"':
    case '\'':
        return parse_string(ps, v);
    case 't':
    case 'f':
        return parse_bool(ps, v);
    case '[':
        return parse_array(ps, v, depth);
    case '{':
        return parse_inline_table(ps, v, depth);
    case 'i':
    case 'n':
        return parse_special_float(ps, v, ps->p, false);
    case '+':
    case '-':
        return parse_number(ps, v);
    case -1:
        return fail_at(ps, ps->p, "expected a value, found end of file");
    default:
        if (is_digit(c))
            return looks_like_datetime(ps) ? parse_datetime(ps, v) : parse_number(ps, v);
        if (c == '\n' || c == '\r' || c == '#')
            return fail_at(ps, ps->p, "expected a value after '='");
        return fail_at(ps, ps->p, "invalid value; strings must be quoted");
    }
}

/* ---- placing keys in tables ---- */

/* A new table under `parent`'s entry e; NULL with the error set when it
 * would nest too deep or memory is out. */
static toml_table *new_child_table(parser *ps, const toml_table *parent, toml_entry *e,
                                   const key_part *k)
{
    if (check_depth(ps, parent->depth + 1u) != 0) return NULL;
    toml_table *t = toml_table_new(ps->arena, ps->file, k->line, k->col);
    if (!t) {
        out_of_memory(ps);
        return NULL;
    }
    t->depth = (uint16_t)(parent->depth + 1);
    e->value.type = TOML_TABLE;
    e->value.u.table = t;
    return t;
}

/* An error about the key ps->keys[0..i], located at its part i; `earlier`
 * is the entry it collides with, if any, whose line the message names. */
static int key_error(parser *ps, int i, const toml_entry *earlier, const char *fmt)
{
    char name[256], msg[512];
    key_for_message(ps->keys, i + 1, name, sizeof name);
    snprintf(msg, sizeof msg, _(fmt), name);
    const key_part *k = &ps->keys[i];
    if (earlier)
        gp_error_set(ps->err, ps->file, k->line, k->col, _("%s (first defined at line %u)"), msg,
                     earlier->line);
    else
        gp_error_set(ps->err, ps->file, k->line, k->col, "%s", msg);
    return -1;
}

static int note_dotted(parser *ps, toml_table *t)
{
    t->dotted_section = ps->section;
    if (ps->dotted_len == ps->dotted_cap) {
        size_t cap = ps->dotted_cap ? ps->dotted_cap * 2 : 16;
        toml_table **bigger = realloc(ps->dotted, cap * sizeof *bigger);
        if (!bigger) return out_of_memory(ps);
        ps->dotted = bigger;
        ps->dotted_cap = cap;
    }
    ps->dotted[ps->dotted_len++] = t;
    return 0;
}

/* The section's tables are complete (later sections may still add
 * sub-tables to them; they then grow again). */
static void end_section(parser *ps)
{
    toml_table_shrink(ps->arena, ps->current);
    for (size_t i = 0; i < ps->dotted_len; i++)
        toml_table_shrink(ps->arena, ps->dotted[i]);
    ps->dotted_len = 0;
}

/* Walks the first nkeys-1 parts of a dotted key from t, creating tables, and
 * returns the slot for the value under the last part. Each table on the way
 * must be one that dotted keys may extend in this section. */
static int insert_dotted(parser *ps, toml_table *t, int nkeys, toml_value **slot,
                         uint32_t *slot_depth)
{
    for (int i = 0; i < nkeys - 1; i++) {
        const key_part *k = &ps->keys[i];
        toml_entry *e = toml_table_lookup(t, k->s);
        if (!e) {
            if (!(e = add_entry(ps, t, k))) return out_of_memory(ps);
            if (!(t = new_child_table(ps, t, e, k))) return -1;
            TRY(note_dotted(ps, t));
            continue;
        }
        if (e->value.type != TOML_TABLE)
            return key_error(ps, i, e, "key '%s' is already defined as a value, not a table");
        t = e->value.u.table;
        if (t->flags & TABLE_INLINE)
            return key_error(ps, i, e, "cannot add keys to inline table '%s' after it is closed");
        if (t->flags & TABLE_HEADER)
            return key_error(ps, i, e,
                             "table '%s' is defined by a [header]; add keys in its section");
        if (t->dotted_section && t->dotted_section != ps->section)
            return key_error(ps, i, e, "table '%s' was defined by dotted keys in another section");
        if (t->dotted_section != ps->section) TRY(note_dotted(ps, t));
    }
    const key_part *last = &ps->keys[nkeys - 1];
    toml_entry *dup = toml_table_lookup(t, last->s);
    if (dup) return key_error(ps, nkeys - 1, dup, "duplicate key '%s'");
    toml_entry *e = add_entry(ps, t, last);
    if (!e) return out_of_memory(ps);
    *slot = &e->value;
    *slot_depth = t->depth + 1u;
    return 0;
}

/* Steps into `t`'s child for one part of a [header]: an existing table, the
 * last element of an array of tables, or a new implicit table. */
static toml_table *header_step(parser *ps, toml_table *t, int i, uint32_t line, uint32_t col)
{
    const key_part *k = &ps->keys[i];
    toml_entry *e = toml_table_lookup(t, k->s);
    if (!e) {
        if (!(e = add_entry(ps, t, k))) {
            out_of_memory(ps);
            return NULL;
        }
        toml_table *child = new_child_table(ps, t, e, k);
        if (!child) return NULL;
        child->flags |= TABLE_IMPLICIT;
        child->line = line;
        child->col = col;
        return child;
    }
    toml_value *v = &e->value;
    if (v->type == TOML_ARRAY && v->u.array->table_array)
        v = &v->u.array->items[v->u.array->count - 1];
    if (v->type != TOML_TABLE) {
        key_error(ps, i, e, "key '%s' is already defined as a value, not a table");
        return NULL;
    }
    if (v->u.table->flags & TABLE_INLINE) {
        key_error(ps, i, e, "cannot extend inline table '%s' with a [header]");
        return NULL;
    }
    return v->u.table;
}

/* [a.b.c] and [[a.b.c]] */
static int parse_header(parser *ps)
{
    const char *open = ps->p;
    uint32_t line = ps->line, col = column_at(ps, open);
    bool array = peek_at(ps, 1) == '[';
    ps->p += array ? 2 : 1;
    skip_ws(ps);
    int nkeys = parse_key(ps);
    if (nkeys < 0) return -1;
    if (peek(ps) != ']' || (array && peek_at(ps, 1) != ']')) {
        char buf[32];
        return fail_at(ps, ps->p, "expected '%s' to close the table header, found %s",
                       array ? "]]" : "]", describe_at(ps, ps->p, buf));
    }
    ps->p += array ? 2 : 1;
    end_section(ps);
    ps->section++;

    toml_table *t = ps->root;
    for (int i = 0; i < nkeys - 1; i++)
        if (!(t = header_step(ps, t, i, line, col))) return -1;

    int i = nkeys - 1;
    const key_part *k = &ps->keys[i];
    toml_entry *e = toml_table_lookup(t, k->s);
    if (array) {
        if (!e) {
            if (!(e = add_entry(ps, t, k))) return out_of_memory(ps);
            toml_array *arr = gp_arena_zalloc(ps->arena, sizeof *arr);
            if (!arr) return out_of_memory(ps);
            arr->table_array = true;
            e->value.type = TOML_ARRAY;
            e->value.u.array = arr;
        } else if (e->value.type != TOML_ARRAY || !e->value.u.array->table_array) {
            return key_error(ps, i, e, "key '%s' is already defined and is not an array of tables");
        }
        /* The array sits one level below t, its tables two. */
        TRY(check_depth(ps, t->depth + 2u));
        toml_value *item = toml_array_push(ps->arena, e->value.u.array);
        toml_table *elem = toml_table_new(ps->arena, ps->file, line, col);
        if (!item || !elem) return out_of_memory(ps);
        elem->depth = (uint16_t)(t->depth + 2);
        elem->flags = TABLE_HEADER;
        item->type = TOML_TABLE;
        item->u.table = elem;
        ps->current = elem;
        return 0;
    }
    if (!e) {
        if (!(e = add_entry(ps, t, k))) return out_of_memory(ps);
        toml_table *child = new_child_table(ps, t, e, k);
        if (!child) return -1;
        child->flags = TABLE_HEADER;
        child->line = line;
        child->col = col;
        ps->current = child;
        return 0;
    }
    if (e->value.type == TOML_ARRAY && e->value.u.array->table_array)
        return key_error(ps, i, e, "[%s] cannot define a table: it is an array of tables");
    if (e->value.type != TOML_TABLE)
        return key_error(ps, i, e, "key '%s' is already defined and is not a table");
    toml_table *existing = e->value.u.table;
    if (existing->flags & TABLE_INLINE)
        return key_error(ps, i, e, "table '%s' is already defined as an inline table");
    if (existing->flags & TABLE_HEADER) return key_error(ps, i, e, "table [%s] is defined twice");
    if (existing->dotted_section)
        return key_error(ps, i, e, "table '%s' is already defined by dotted keys");
    /* A table made implicitly by an earlier header is defined here now. */
    existing->flags = TABLE_HEADER;
    existing->line = line;
    existing->col = col;
    e->line = k->line;
    e->col = k->col;
    ps->current = existing;
    return 0;
}

static int parse_document(parser *ps)
{
    if (ps->end - ps->p >= 3 && memcmp(ps->p, "\xEF\xBB\xBF", 3) == 0) {
        ps->p += 3;
        ps->line_start = ps->start = ps->p;
    }
    while (ps->p < ps->end) {
        skip_ws(ps);
        if (ps->p >= ps->end) break;
        char c = *ps->p;
        if (c == '#') {
            TRY(skip_comment(ps));
        } else if (c == '\n' || c == '\r') {
            if (!eat_newline(ps))
                return fail_at(ps, ps->p, "carriage return not followed by a line feed");
            continue;
        } else if (c == '[') {
            TRY(parse_header(ps));
        } else {
            TRY(parse_keyval_in(ps, ps->current));
        }
        TRY(end_of_statement(ps));
    }
    return 0;
}

/* ---- entry points ---- */

static void parser_init(parser *ps, const char *src, size_t len, gp_arena *arena, const char *file,
                        gp_error *err)
{
    init_string_stop();
    memset(ps, 0, offsetof(parser, keys));
    ps->start = ps->p = src;
    ps->end = src + len;
    ps->line_start = src;
    ps->line = 1;
    ps->arena = arena;
    ps->file = file;
    ps->err = err;
    ps->section = 1;
}

static void parser_release(parser *ps)
{
    free(ps->scratch);
    free(ps->dotted);
    free(ps->stack);
    free(ps->keys_seen);
    if (ps->c_locale) freelocale(ps->c_locale);
}

toml_doc *toml_parse(const char *src, size_t len, const char *filename, gp_error *err)
{
    if (!filename) filename = "<input>";
    gp_arena *arena = gp_arena_new();
    toml_doc *doc = arena ? gp_arena_zalloc(arena, sizeof *doc) : NULL;
    char *file = doc ? gp_arena_strndup(arena, filename, strlen(filename)) : NULL;
    toml_table *root = file ? toml_table_new(arena, file, 1, 1) : NULL;
    if (!root) {
        gp_arena_free(arena);
        gp_error_set(err, filename, 0, 0, "out of memory");
        return NULL;
    }
    doc->arena = arena;
    doc->root = root;
    doc->file = file;

    parser *ps = malloc(sizeof *ps);
    if (!ps) {
        gp_arena_free(arena);
        gp_error_set(err, filename, 0, 0, "out of memory");
        return NULL;
    }
    parser_init(ps, src, len, arena, file, err);
    ps->root = ps->current = root;
    int rc = parse_document(ps);
    if (rc == 0) end_section(ps);
    parser_release(ps);
    free(ps);
    if (rc != 0) {
        gp_arena_free(arena);
        return NULL;
    }
    return doc;
}

toml_doc *toml_parse_file(const char *path, gp_error *err)
{
    size_t len;
    char *buf = gp_read_file(path, &len, err);
    if (!buf) return NULL;
    toml_doc *doc = toml_parse(buf, len, strcmp(path, "-") == 0 ? "<stdin>" : path, err);
    free(buf);
    return doc;
}

/* ---- keys given as text (gpuop toml get) ---- */

int toml_key_split(const char *text, char ***parts_out, size_t **lens_out, gp_error *err)
{
    size_t len = strlen(text);
    gp_arena *arena = gp_arena_new();
    parser *ps = malloc(sizeof *ps);
    if (!arena || !ps) {
        gp_arena_free(arena);
        free(ps);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    parser_init(ps, text, len, arena, "key", err);
    skip_ws(ps);
    int n = ps->p < ps->end ? parse_key(ps) : fail_at(ps, ps->p, "empty key");
    if (n > 0 && ps->p < ps->end) {
        char buf[32];
        n = fail_at(ps, ps->p, "unexpected %s in key", describe_at(ps, ps->p, buf));
    }
    int result = -1;
    if (n > 0) {
        size_t bytes = (size_t)n * (sizeof(char *) + sizeof(size_t));
        for (int i = 0; i < n; i++)
            bytes += ps->keys[i].len + 1;
        char *block = malloc(bytes);
        if (block) {
            char **parts = (char **)block;
            size_t *lens = (size_t *)(block + (size_t)n * sizeof(char *));
            char *text_at = block + (size_t)n * (sizeof(char *) + sizeof(size_t));
            for (int i = 0; i < n; i++) {
                memcpy(text_at, ps->keys[i].s, ps->keys[i].len);
                text_at[ps->keys[i].len] = '\0';
                parts[i] = text_at;
                lens[i] = ps->keys[i].len;
                text_at += ps->keys[i].len + 1;
            }
            *parts_out = parts;
            *lens_out = lens;
            result = n;
        } else {
            gp_error_set(err, NULL, 0, 0, "out of memory");
        }
    }
    parser_release(ps);
    free(ps);
    gp_arena_free(arena);
    return result;
}

const toml_value *toml_lookup(const toml_table *t, const char *dotted_key, gp_error *err)
{
    char **parts;
    size_t *lens;
    int n = toml_key_split(dotted_key, &parts, &lens, err);
    if (n < 0) return NULL;
    const toml_value *v = NULL;
    for (int i = 0; i < n; i++) {
        const toml_entry *e = toml_table_find(t, parts[i], lens[i]);
        if (!e) {
            v = NULL;
            break;
        }
        v = &e->value;
        if (v->type == TOML_ARRAY && v->u.array->table_array && v->u.array->count && i + 1 < n)
            v = &v->u.array->items[v->u.array->count - 1];
        if (i + 1 < n && v->type != TOML_TABLE) {
            v = NULL;
            break;
        }
        if (v->type == TOML_TABLE) t = v->u.table;
    }
    free(parts);
    if (!v) gp_error_set(err, NULL, 0, 0, "key %s not found", dotted_key);
    return v;
}
