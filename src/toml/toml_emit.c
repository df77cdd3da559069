/* Writing a parsed tree back out as TOML.
 *
 * Only the public accessors of toml.h are used, so the emitter works on any
 * tree the parser builds and never depends on its internals. */
#include "toml/toml.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- floats ---- */

static bool same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* The fewest significant digits that read back as the same double; 17
 * always do for an IEEE double. Then the notation: like Python's repr,
 * plain decimals for exponents from -4 to 15 and e-notation outside, so
 * that 300 reads "300.0" rather than the "3e+02" %g would pick. */
static int shortest(double d, char buf[32])
{
    int prec = 1, n = 0;
    for (; prec < 17; prec++) {
        n = snprintf(buf, 32, "%.*e", prec - 1, d);
        if (n > 0 && n < 32 && same_double(strtod(buf, NULL), d)) break;
    }
    if (prec == 17) n = snprintf(buf, 32, "%.16e", d);
    const char *e = strchr(buf, 'e');
    if (!e) return n;
    long exp10 = strtol(e + 1, NULL, 10);
    if (exp10 < -4 || exp10 > 15) return n;

    int decimals = prec - 1 - (int)exp10;
    char plain[32];
    int m = snprintf(plain, sizeof plain, "%.*f", decimals > 0 ? decimals : 0, d);
    if (m <= 0 || m >= 32 || !same_double(strtod(plain, NULL), d)) return n;
    memcpy(buf, plain, (size_t)m + 1);
    return m;
}

/* Used only when no C locale can be made: the text was formatted and checked
 * in the caller's locale, whose decimal point may be "," or even several
 * bytes, so it is swapped for the '.' TOML wants. */
static int fix_decimal_point(char buf[32], int n)
{
    const char *dp = localeconv()->decimal_point;
    size_t dplen = dp ? strlen(dp) : 0;
    if (dplen == 0 || (dplen == 1 && dp[0] == '.')) return n;
    char *at = strstr(buf, dp);
    if (!at) return n;
    *at = '.';
    memmove(at + 1, at + dplen, strlen(at + dplen) + 1);
    return n - (int)(dplen - 1);
}

/* snprintf and strtod follow LC_NUMERIC, which the CLI sets from the
 * environment; a thread-local C locale keeps the output the same everywhere
 * without touching the process-wide locale other threads may be using. */
static int shortest_in_c_locale(double d, char buf[32])
{
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (c == (locale_t)0) return fix_decimal_point(buf, shortest(d, buf));
    locale_t old = uselocale(c);
    int n = shortest(d, buf);
    uselocale(old);
    freelocale(c);
    return n;
}

int toml_format_float(double d, char buf[32])
{
    if (isnan(d)) return snprintf(buf, 32, "nan");
    if (isinf(d)) return snprintf(buf, 32, d < 0 ? "-inf" : "inf");

    int n = shortest_in_c_locale(d, buf);
    /* TOML reads "1" as an integer; a float needs a fraction or exponent. */
    if (!strpbrk(buf, ".e") && n + 2 < 32) {
        memcpy(buf + n, ".0", 3);
        n += 2;
    }
    return n;
}

/* ---- date-times ---- */

static bool has_date(int type)
{
    return type == TOML_DATETIME || type == TOML_DATETIME_LOCAL || type == TOML_DATE_LOCAL;
}

static bool has_time(int type)
{
    return type == TOML_DATETIME || type == TOML_DATETIME_LOCAL || type == TOML_TIME_LOCAL;
}

/* The part before the fraction: "YYYY-MM-DD", "YYYY-MM-DDTHH:MM:SS" or
 * "HH:MM:SS". */
static int format_dt_head(int type, const toml_datetime *dt, char *buf, size_t size)
{
    int n = 0;
    if (has_date(type))
        n = snprintf(buf, size, "%04d-%02u-%02u", (int)dt->year, (unsigned)dt->month,
                     (unsigned)dt->day);
    if (n < 0 || (size_t)n >= size) return -1;
    if (!has_time(type)) return n;
    int m = snprintf(buf + n, size - (size_t)n, "%s%02u:%02u:%02u", has_date(type) ? "T" : "",
                     (unsigned)dt->hour, (unsigned)dt->minute, (unsigned)dt->second);
    if (m < 0 || (size_t)m >= size - (size_t)n) return -1;
    return n + m;
}

/* "Z", "+HH:MM" or "-HH:MM" for an offset date-time, "" for the others. */
static int format_dt_tail(int type, const toml_datetime *dt, char *buf, size_t size)
{
    if (type != TOML_DATETIME) return snprintf(buf, size, "%s", "");
    if (dt->offset_is_z) return snprintf(buf, size, "Z");
    int off = dt->offset_minutes;
    char sign = off < 0 ? '-' : '+';
    if (off < 0) off = -off;
    return snprintf(buf, size, "%c%02d:%02d", sign, off / 60, off % 60);
}

/* The digits after the '.', as written when the parser kept them. A value
 * built without the text still has its nanoseconds, minus trailing zeros. */
static const char *dt_fraction(const toml_datetime *dt, char tmp[10], size_t *len)
{
    if (dt->fraction && dt->fraction_len > 0) {
        *len = dt->fraction_len;
        return dt->fraction;
    }
    *len = 0;
    if (dt->nanosecond == 0) return "";
    snprintf(tmp, 10, "%09" PRIu32, dt->nanosecond % 1000000000u);
    size_t n = 9;
    while (n > 1 && tmp[n - 1] == '0')
        n--;
    *len = n;
    return tmp;
}

static bool is_datetime_type(int type)
{
    return type == TOML_DATETIME || type == TOML_DATETIME_LOCAL || type == TOML_DATE_LOCAL ||
           type == TOML_TIME_LOCAL;
}

int toml_format_datetime(const toml_value *v, char buf[80])
{
    buf[0] = '\0';
    if (!v || !is_datetime_type(v->type) || !v->u.dt) return 0;
    const toml_datetime *dt = v->u.dt;
    char tail[16];
    int tn = format_dt_tail(v->type, dt, tail, sizeof tail);
    int n = format_dt_head(v->type, dt, buf, 80);
    if (n < 0 || tn < 0) {
        buf[0] = '\0';
        return 0;
    }

    char tmp[10];
    size_t flen = 0;
    const char *frac = has_time(v->type) ? dt_fraction(dt, tmp, &flen) : "";
    /* A fraction longer than the buffer holds (over 50 digits, far beyond
     * any clock) is cut; toml_emit_value writes it whole. */
    size_t room = 80 - (size_t)n - (size_t)tn - 2;
    if (flen > room) flen = room;
    if (flen > 0) {
        buf[n++] = '.';
        memcpy(buf + n, frac, flen);
        n += (int)flen;
    }
    memcpy(buf + n, tail, (size_t)tn + 1);
    return n + tn;
}

/* ---- writing values ---- */

static int put(FILE *out, const char *s, size_t len)
{
    if (len > 0 && fwrite(s, 1, len, out) != len) return -1;
    return 0;
}

static int puts_(FILE *out, const char *s)
{
    return put(out, s, strlen(s));
}

bool toml_key_is_bare(const char *key, size_t len)
{
    if (len == 0) return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)key[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

static const char *short_escape(unsigned char c)
{
    switch (c) {
    case '"':
        return "\\\"";
    case '\\':
        return "\\\\";
    case '\b':
        return "\\b";
    case '\t':
        return "\\t";
    case '\n':
        return "\\n";
    case '\f':
        return "\\f";
    case '\r':
        return "\\r";
    default:
        return NULL;
    }
}

/* A basic string. Bytes from 0x80 up pass through: the parser only accepts
 * valid UTF-8, so they already form valid characters. */
static int write_basic_string(FILE *out, const char *s, size_t len)
{
    if (put(out, "\"", 1) < 0) return -1;
    size_t run = 0; /* start of the bytes not yet written */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = short_escape(c);
        if (!esc && c >= 0x20 && c != 0x7f) continue;
        if (put(out, s + run, i - run) < 0) return -1;
        run = i + 1;
        char u[8];
        if (!esc) {
            snprintf(u, sizeof u, "\\u%04X", (unsigned)c);
            esc = u;
        }
        if (puts_(out, esc) < 0) return -1;
    }
    if (put(out, s + run, len - run) < 0) return -1;
    return put(out, "\"", 1);
}

/* Appends c to out when there is room; counts it either way. */
static void add_char(char *out, size_t cap, size_t *n, char c)
{
    if (*n + 1 < cap) out[*n] = c;
    (*n)++;
}

size_t toml_format_key(const char *key, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    bool bare = toml_key_is_bare(key, len);
    if (!bare) add_char(out, cap, &n, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)key[i];
        const char *esc = bare ? NULL : short_escape(c);
        char u[8];
        if (!bare && !esc && (c < 0x20 || c == 0x7f)) {
            snprintf(u, sizeof u, "\\u%04X", (unsigned)c);
            esc = u;
        }
        if (!esc) {
            add_char(out, cap, &n, (char)c);
            continue;
        }
        for (; *esc; esc++)
            add_char(out, cap, &n, *esc);
    }
    if (!bare) add_char(out, cap, &n, '"');
    if (cap) out[n < cap ? n : cap - 1] = '\0';
    return n;
}

int toml_emit_key(const char *key, size_t len, FILE *out)
{
    if (toml_key_is_bare(key, len)) return put(out, key, len);
    return write_basic_string(out, key, len);
}

static int write_datetime(FILE *out, const toml_value *v)
{
    const toml_datetime *dt = v->u.dt;
    if (!dt) {
        errno = EINVAL;
        return -1;
    }
    char head[40], tail[16], tmp[10];
    int hn = format_dt_head(v->type, dt, head, sizeof head);
    int tn = format_dt_tail(v->type, dt, tail, sizeof tail);
    if (hn < 0 || tn < 0) return -1;
    size_t flen = 0;
    const char *frac = has_time(v->type) ? dt_fraction(dt, tmp, &flen) : "";
    if (put(out, head, (size_t)hn) < 0) return -1;
    if (flen > 0 && (put(out, ".", 1) < 0 || put(out, frac, flen) < 0)) return -1;
    return put(out, tail, (size_t)tn);
}

static int write_inline_table(FILE *out, const toml_table *t);

static int write_inline_array(FILE *out, const toml_array *a)
{
    size_t n = toml_array_size(a);
    if (put(out, "[", 1) < 0) return -1;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && put(out, ", ", 2) < 0) return -1;
        if (toml_emit_value(toml_array_at(a, i), out) < 0) return -1;
    }
    return put(out, "]", 1);
}

static int write_key_value(FILE *out, const toml_entry *e)
{
    if (toml_emit_key(e->key, toml_entry_keylen(e), out) < 0) return -1;
    if (put(out, " = ", 3) < 0) return -1;
    return toml_emit_value(&e->value, out);
}

/* Everything inside is written inline too, whatever its own flags say: TOML
 * does not allow a [header] to reach into an inline table. */
static int write_inline_table(FILE *out, const toml_table *t)
{
    size_t n = toml_table_size(t);
    if (n == 0) return put(out, "{}", 2);
    if (put(out, "{ ", 2) < 0) return -1;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && put(out, ", ", 2) < 0) return -1;
        if (write_key_value(out, toml_table_entry(t, i)) < 0) return -1;
    }
    return put(out, " }", 2);
}

int toml_emit_value(const toml_value *v, FILE *out)
{
    char buf[32];
    switch (v->type) {
    case TOML_TABLE:
        return write_inline_table(out, v->u.table);
    case TOML_ARRAY:
        return write_inline_array(out, v->u.array);
    case TOML_STRING:
        return write_basic_string(out, v->u.s, v->len);
    case TOML_INTEGER:
        return fprintf(out, "%" PRId64, v->u.i) < 0 ? -1 : 0;
    case TOML_FLOAT:
        return put(out, buf, (size_t)toml_format_float(v->u.f, buf));
    case TOML_BOOL:
        return puts_(out, v->u.b ? "true" : "false");
    case TOML_DATETIME:
    case TOML_DATETIME_LOCAL:
    case TOML_DATE_LOCAL:
    case TOML_TIME_LOCAL:
        return write_datetime(out, v);
    default:
        errno = EINVAL;
        return -1;
    }
}

/* ---- writing documents ---- */

/* The keys from the root down to the table being written, kept on the C
 * stack as a chain so that deep trees need no allocation. */
typedef struct key_path {
    const struct key_path *parent;
    const char *key;
    size_t len;
} key_path;

typedef struct emitter {
    FILE *out;
    bool wrote_something; /* no blank line before the very first header */
} emitter;

static bool is_section_table(const toml_value *v)
{
    return v->type == TOML_TABLE && !toml_table_is_inline(v->u.table);
}

/* An empty [[x]] array cannot come from a parse; should one be built by
 * hand, it is kept as `x = []` rather than silently dropped. */
static bool is_section_array(const toml_value *v)
{
    return v->type == TOML_ARRAY && toml_array_is_table_array(v->u.array) &&
           toml_array_size(v->u.array) > 0;
}

static bool is_plain(const toml_value *v)
{
    return !is_section_table(v) && !is_section_array(v);
}

static bool has_plain_keys(const toml_table *t)
{
    for (size_t i = 0; i < toml_table_size(t); i++)
        if (is_plain(&toml_table_entry(t, i)->value)) return true;
    return false;
}

static int write_path(FILE *out, const key_path *p)
{
    if (p->parent && p->parent->key) {
        if (write_path(out, p->parent) < 0) return -1;
        if (put(out, ".", 1) < 0) return -1;
    }
    return toml_emit_key(p->key, p->len, out);
}

static int write_header(emitter *em, const key_path *p, bool array)
{
    if (em->wrote_something && put(em->out, "\n", 1) < 0) return -1;
    em->wrote_something = true;
    if (puts_(em->out, array ? "[[" : "[") < 0) return -1;
    if (write_path(em->out, p) < 0) return -1;
    return puts_(em->out, array ? "]]\n" : "]\n");
}

static int write_plain_keys(emitter *em, const toml_table *t)
{
    for (size_t i = 0; i < toml_table_size(t); i++) {
        const toml_entry *e = toml_table_entry(t, i);
        if (!is_plain(&e->value)) continue;
        if (write_key_value(em->out, e) < 0 || put(em->out, "\n", 1) < 0) return -1;
        em->wrote_something = true;
    }
    return 0;
}

static int write_sections(emitter *em, const toml_table *t, const key_path *path);

/* The plain keys of `t`, then its sub-tables in definition order. */
static int write_body(emitter *em, const toml_table *t, const key_path *path)
{
    if (write_plain_keys(em, t) < 0) return -1;
    return write_sections(em, t, path);
}

static int write_table_array(emitter *em, const toml_array *a, const key_path *path)
{
    for (size_t i = 0; i < toml_array_size(a); i++) {
        const toml_value *el = toml_array_at(a, i);
        if (write_header(em, path, true) < 0) return -1;
        if (el->type != TOML_TABLE) {
            errno = EINVAL;
            return -1;
        }
        if (write_body(em, el->u.table, path) < 0) return -1;
    }
    return 0;
}

static int write_sections(emitter *em, const toml_table *t, const key_path *path)
{
    for (size_t i = 0; i < toml_table_size(t); i++) {
        const toml_entry *e = toml_table_entry(t, i);
        if (is_plain(&e->value)) continue;
        key_path sub = {path, e->key, toml_entry_keylen(e)};
        if (is_section_array(&e->value)) {
            if (write_table_array(em, e->value.u.array, &sub) < 0) return -1;
            continue;
        }
        const toml_table *st = e->value.u.table;
        /* A table holding only other sections is created by their headers;
         * an empty one has nothing else to bring it back, so it keeps its
         * own. */
        bool needs_header = has_plain_keys(st) || toml_table_size(st) == 0;
        if (needs_header && write_header(em, &sub, false) < 0) return -1;
        if (write_body(em, st, &sub) < 0) return -1;
    }
    return 0;
}

int toml_emit(const toml_table *t, FILE *out)
{
    int saved = errno;
    errno = 0;
    emitter em = {out, false};
    key_path root = {NULL, NULL, 0};
    int rc = write_body(&em, t, &root);
    if (rc == 0 && ferror(out)) rc = -1;
    if (rc < 0) {
        if (errno == 0) errno = EIO;
        return -1;
    }
    errno = saved;
    return 0;
}
