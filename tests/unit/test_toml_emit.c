/* toml_emit and friends: emitting then parsing gives back an equal tree, and
 * floats, date-times and keys come out in the form TOML readers expect. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "toml/toml.h"

/* The number of .toml files under valid/ in the toml-test release we use; a
 * walk that silently finds fewer would test less than it claims. */
#define TOML_TEST_VALID_FILES 210

/* ---- helpers ---- */

static toml_value table_value(const toml_doc *doc)
{
    toml_value v;
    memset(&v, 0, sizeof v);
    v.type = TOML_TABLE;
    v.u.table = (toml_table *)toml_root(doc);
    return v;
}

static toml_doc *parse_text(const char *src, const char *name)
{
    gp_error err = {0};
    toml_doc *doc = toml_parse(src, strlen(src), name, &err);
    if (!doc) print_error("%s: parse failed: %s\n---\n%s\n---\n", name, err.text, src);
    return doc;
}

/* Emits into a malloc'd, NUL-terminated string; NULL when toml_emit fails. */
static char *emit_text(const toml_table *t, size_t *len)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    int rc = toml_emit(t, f);
    assert_int_equal(fclose(f), 0);
    if (rc != 0) {
        free(buf);
        return NULL;
    }
    if (len) *len = size;
    return buf;
}

static char *emit_value_text(const toml_value *v)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    assert_int_equal(toml_emit_value(v, f), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)) != NULL; p++) {
        bool starts = p == text || p[-1] == '\n';
        bool ends = p[n] == '\n' || p[n] == '\0';
        if (starts && ends) return true;
    }
    return false;
}

/* Parses `src`, emits it, parses the output and checks the trees are equal;
 * returns the emitted text for further checks (caller frees). */
static char *round_trip(const char *src)
{
    toml_doc *a = parse_text(src, "input");
    assert_non_null(a);
    char *out = emit_text(toml_root(a), NULL);
    assert_non_null(out);
    toml_doc *b = parse_text(out, "emitted");
    assert_non_null(b);
    toml_value va = table_value(a), vb = table_value(b);
    if (!toml_value_equal(&va, &vb))
        print_error("not equal after round trip\n--- input\n%s--- emitted\n%s---\n", src, out);
    assert_true(toml_value_equal(&va, &vb));
    toml_free(a);
    toml_free(b);
    return out;
}

static bool docs_equal(const char *x, const char *y)
{
    toml_doc *a = parse_text(x, "x");
    toml_doc *b = parse_text(y, "y");
    assert_non_null(a);
    assert_non_null(b);
    toml_value va = table_value(a), vb = table_value(b);
    bool eq = toml_value_equal(&va, &vb);
    assert_true(toml_value_equal(&va, &va));
    assert_int_equal(eq, toml_value_equal(&vb, &va));
    toml_free(a);
    toml_free(b);
    return eq;
}

/* ---- round trip over the toml-test suite ---- */

typedef struct walk_stats {
    int files;
    int failures;
} walk_stats;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Checks one file; prints what went wrong and returns false on failure. */
static bool round_trip_file(const char *path)
{
    gp_error err = {0};
    toml_doc *a = toml_parse_file(path, &err);
    if (!a) {
        print_error("%s: parse failed: %s\n", path, err.text);
        return false;
    }
    size_t len = 0;
    char *out = emit_text(toml_root(a), &len);
    if (!out) {
        print_error("%s: toml_emit failed\n", path);
        toml_free(a);
        return false;
    }
    bool ok = false;
    toml_doc *b = toml_parse(out, len, "emitted", &err);
    char *again = NULL;
    if (!b) {
        print_error("%s: emitted text does not parse: %s\n---\n%s---\n", path, err.text, out);
    } else {
        toml_value va = table_value(a), vb = table_value(b);
        ok = toml_value_equal(&va, &vb);
        if (!ok) print_error("%s: not equal after round trip\n---\n%s---\n", path, out);
        /* Emitting is a function of the tree alone, so the second emit
         * must be byte for byte the first. */
        again = emit_text(toml_root(b), NULL);
        if (ok && (!again || strcmp(again, out) != 0)) {
            print_error("%s: second emit differs\n--- first\n%s--- second\n%s---\n", path, out,
                        again ? again : "(failed)\n");
            ok = false;
        }
    }
    free(again);
    toml_free(b);
    free(out);
    toml_free(a);
    return ok;
}

static void walk(const char *dir, walk_stats *st)
{
    DIR *d = opendir(dir);
    if (!d) {
        print_error("%s: %s\n", dir, strerror(errno));
        st->failures++;
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        size_t n = strlen(dir) + strlen(de->d_name) + 2;
        char *path = malloc(n);
        assert_non_null(path);
        snprintf(path, n, "%s/%s", dir, de->d_name);
        struct stat sb;
        if (lstat(path, &sb) != 0) {
            print_error("%s: %s\n", path, strerror(errno));
            st->failures++;
        } else if (S_ISDIR(sb.st_mode)) {
            walk(path, st);
        } else if (S_ISREG(sb.st_mode) && ends_with(de->d_name, ".toml")) {
            st->files++;
            if (!round_trip_file(path)) st->failures++;
        }
        free(path);
    }
    closedir(d);
}

static void test_round_trip_toml_test_suite(void **state)
{
    (void)state;
    walk_stats st = {0, 0};
    walk(TOML_TEST_DIR "/valid", &st);
    if (st.failures) print_error("%d of %d files failed the round trip\n", st.failures, st.files);
    assert_int_equal(st.failures, 0);
    assert_int_equal(st.files, TOML_TEST_VALID_FILES);
}

/* ---- floats ---- */

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* The digits of the mantissa without leading or trailing zeros. */
static int significant_digits(const char *text)
{
    const char *first = NULL, *last = NULL;
    for (const char *p = text; *p && *p != 'e' && *p != 'E'; p++) {
        if (*p < '0' || *p > '9') continue;
        if (!first && *p != '0') first = p;
        if (*p != '0') last = p;
    }
    if (!first) return 0;
    int n = 0;
    for (const char *p = first; p <= last; p++)
        n += *p >= '0' && *p <= '9';
    return n;
}

/* The text reads back as the same double, both through strtod and through
 * the TOML parser, and no shorter text would. */
static void check_float_text(double d, const char *text)
{
    char *end = NULL;
    double back = strtod(text, &end);
    assert_int_equal(*end, '\0');
    assert_true(isnan(d) ? isnan(back) : same_bits(back, d));

    char src[64];
    snprintf(src, sizeof src, "x = %s\n", text);
    toml_doc *doc = parse_text(src, "float");
    assert_non_null(doc);
    const toml_value *v = toml_table_get(toml_root(doc), "x");
    assert_non_null(v);
    assert_int_equal(v->type, TOML_FLOAT);
    assert_true(isnan(d) ? isnan(v->u.f) : same_bits(v->u.f, d));
    toml_free(doc);

    int digits = significant_digits(text);
    if (!isfinite(d) || digits <= 1) return;
    char shorter[512];
    snprintf(shorter, sizeof shorter, "%.*g", digits - 1, d);
    if (same_bits(strtod(shorter, NULL), d))
        print_error("%s is not the shortest form: %s reads back too\n", text, shorter);
    assert_false(same_bits(strtod(shorter, NULL), d));
}

static void expect_float(double d, const char *expected)
{
    char buf[32];
    int n = toml_format_float(d, buf);
    assert_int_equal(n, (int)strlen(buf));
    if (expected) assert_string_equal(buf, expected);
    check_float_text(d, buf);
}

/* The expected strings are Python's repr() of the same doubles, an
 * independent shortest-round-trip implementation (David Gay's). */
static void test_format_float(void **state)
{
    (void)state;
    expect_float(0.1, "0.1");
    expect_float(1.0, "1.0");
    expect_float(-0.0, "-0.0");
    expect_float(0.0, "0.0");
    expect_float(1e300, "1e+300");
    expect_float(INFINITY, "inf");
    expect_float(-INFINITY, "-inf");
    expect_float(NAN, "nan");
    expect_float(-NAN, "nan");
    expect_float(5e-324, "5e-324");
    expect_float(1 / 3.0, "0.3333333333333333");
    expect_float(123456789012345678.0, "1.2345678901234568e+17");
    expect_float(-2.5, "-2.5");
    expect_float(300.0, "300.0");
    expect_float(100000.0, "100000.0");
    expect_float(1e15, "1000000000000000.0");
    expect_float(1e16, "1e+16");
    expect_float(1e-4, "0.0001");
    expect_float(1e-5, "1e-05");
    expect_float(1.7976931348623157e308, "1.7976931348623157e+308");
    expect_float(2.2250738585072014e-308, "2.2250738585072014e-308");
}

/* A locale whose decimal point is not '.' must not leak into the output. */
static void test_format_float_ignores_locale(void **state)
{
    (void)state;
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8",
                                        "ru_RU.UTF-8", "de_DE",      "fr_FR"};
    const char *found = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !found; i++)
        if (setlocale(LC_ALL, names[i]) && strcmp(localeconv()->decimal_point, ".") != 0)
            found = names[i];
    if (!found) {
        setlocale(LC_ALL, "C");
        /* ctest compiles de_DE under LOCPATH; without it, run anyway. */
        if (getenv("LOCPATH")) fail_msg("no comma locale under LOCPATH=%s", getenv("LOCPATH"));
        skip();
    }
    char buf[32];
    toml_format_float(0.5, buf);
    char *out = NULL;
    toml_value v;
    memset(&v, 0, sizeof v);
    v.type = TOML_FLOAT;
    v.u.f = 1.25;
    out = emit_value_text(&v);
    setlocale(LC_ALL, "C");
    assert_string_equal(buf, "0.5");
    assert_string_equal(out, "1.25");
    free(out);
}

/* ---- documents ---- */

static const char containerd[] =
    "version = 2\n"
    "imports = [\"/etc/containerd/conf.d/*.toml\"]\n"
    "[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
    "  default_runtime_name = \"runc\"\n"
    "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
    "  runtime_type = \"io.containerd.runc.v2\"\n"
    "  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n"
    "    SystemdCgroup = true\n";

static void test_containerd_config(void **state)
{
    (void)state;
    char *out = round_trip(containerd);
    assert_true(has_line(out, "version = 2"));
    assert_true(has_line(out, "imports = [\"/etc/containerd/conf.d/*.toml\"]"));
    assert_true(
        has_line(out, "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]"));
    assert_true(has_line(out, "[plugins.\"io.containerd.grpc.v1.cri\".containerd]"));
    /* Tables that only hold tables get no header of their own. */
    assert_false(has_line(out, "[plugins]"));
    assert_false(has_line(out, "[plugins.\"io.containerd.grpc.v1.cri\"]"));
    assert_false(has_line(out, "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes]"));
    /* Plain keys come before any header, and the text starts without a
     * blank line. */
    assert_true(strncmp(out, "version = 2\n", 12) == 0);
    free(out);
}

static void test_empty_tables_survive(void **state)
{
    (void)state;
    char *out = round_trip("a = 1\n[empty]\n[x.y]\n[z]\n[z.w]\nk = 1\n");
    assert_true(has_line(out, "[empty]"));
    assert_true(has_line(out, "[x.y]"));
    assert_true(has_line(out, "[z.w]"));
    free(out);
}

static void test_key_quoting(void **state)
{
    (void)state;
    char *out = round_trip("\"a.b\" = 1\n"
                           "\"\" = 2\n"
                           "\"c\\u0001d\" = 3\n"
                           "\"tab\\tkey\" = 4\n"
                           "bare-Key_09 = 5\n"
                           "\"sp ace\" = 6\n"
                           "\"q\\\"uote\" = 7\n"
                           "[x.\"a.b\"]\n"
                           "k = 1\n");
    assert_true(has_line(out, "\"a.b\" = 1"));
    assert_true(has_line(out, "\"\" = 2"));
    assert_true(has_line(out, "\"c\\u0001d\" = 3"));
    assert_true(has_line(out, "\"tab\\tkey\" = 4"));
    assert_true(has_line(out, "bare-Key_09 = 5"));
    assert_true(has_line(out, "\"sp ace\" = 6"));
    assert_true(has_line(out, "\"q\\\"uote\" = 7"));
    assert_true(has_line(out, "[x.\"a.b\"]"));
    free(out);
}

static void test_string_escapes(void **state)
{
    (void)state;
    char *out = round_trip("s = \"q\\\"b\\\\s\\u0001\\u007F\\b\\f\\r\\n\\t é😀\"\n"
                           "nul = \"a\\u0000b\"\n"
                           "lit = 'C:\\path'\n"
                           "ml = \"\"\"\nline1\nline2\"\"\"\n");
    assert_true(has_line(out, "s = \"q\\\"b\\\\s\\u0001\\u007F\\b\\f\\r\\n\\t é😀\""));
    assert_true(has_line(out, "nul = \"a\\u0000b\""));
    assert_true(has_line(out, "lit = \"C:\\\\path\""));
    assert_true(has_line(out, "ml = \"line1\\nline2\""));
    free(out);
}

static void test_inline_and_table_arrays(void **state)
{
    (void)state;
    char *out = round_trip("a = { x = 1, y = { z = 2 }, e = {} }\n"
                           "arr = [{ x = 1 }, { y = [1, 2] }]\n"
                           "nested = [[1, 2], [\"a\"], []]\n"
                           "[[p]]\n"
                           "n = 1\n"
                           "[p.q]\n"
                           "m = 2\n"
                           "[[p.r]]\n"
                           "o = 3\n"
                           "[[p]]\n"
                           "[[p]]\n"
                           "n = 3\n");
    assert_true(has_line(out, "a = { x = 1, y = { z = 2 }, e = {} }"));
    assert_true(has_line(out, "arr = [{ x = 1 }, { y = [1, 2] }]"));
    assert_true(has_line(out, "nested = [[1, 2], [\"a\"], []]"));
    assert_true(has_line(out, "[p.q]"));
    assert_true(has_line(out, "[[p.r]]"));
    int headers = 0;
    for (const char *p = out; (p = strstr(p, "[[p]]\n")) != NULL; p++)
        headers++;
    assert_int_equal(headers, 3);
    free(out);
}

static void test_one_blank_line_before_headers(void **state)
{
    (void)state;
    char *out = round_trip("[a]\nx = 1\n[b]\ny = 2\n");
    assert_string_equal(out, "[a]\nx = 1\n\n[b]\ny = 2\n");
    free(out);
}

static void expect_emit_fails(const toml_table *t, bool buffered)
{
    FILE *f = fopen("/dev/full", "w");
    if (!f) skip();
    if (!buffered) setvbuf(f, NULL, _IONBF, 0);
    errno = 0;
    assert_int_equal(toml_emit(t, f), -1);
    assert_int_not_equal(errno, 0);
    fclose(f);
}

static void test_emit_reports_write_errors(void **state)
{
    (void)state;
    toml_doc *doc = parse_text(containerd, "containerd");
    assert_non_null(doc);
    expect_emit_fails(toml_root(doc), false);
    toml_free(doc);

    /* Buffered, the failure only shows when the buffer is flushed midway:
     * write more than any stdio buffer holds. */
    size_t size = 256 * 1024;
    char *src = malloc(size);
    assert_non_null(src);
    size_t n = 0;
    for (int i = 0; n + 64 < size; i++)
        n += (size_t)snprintf(src + n, size - n, "key%d = \"some text to fill the buffer\"\n", i);
    doc = parse_text(src, "big");
    assert_non_null(doc);
    expect_emit_fails(toml_root(doc), true);
    toml_free(doc);
    free(src);
}

/* ---- date-times ---- */

static void expect_datetime(const char *text)
{
    char src[128];
    snprintf(src, sizeof src, "t = %s\n", text);
    toml_doc *doc = parse_text(src, "datetime");
    assert_non_null(doc);
    const toml_value *v = toml_table_get(toml_root(doc), "t");
    assert_non_null(v);
    char buf[80];
    int n = toml_format_datetime(v, buf);
    assert_string_equal(buf, text);
    assert_int_equal(n, (int)strlen(text));
    char *emitted = emit_value_text(v);
    assert_string_equal(emitted, text);
    free(emitted);
    toml_free(doc);
}

static void test_datetime_forms(void **state)
{
    (void)state;
    expect_datetime("1979-05-27T00:32:00.123456789123Z");
    expect_datetime("1979-05-27T07:32:00Z");
    expect_datetime("1979-05-27T00:32:00.999999-07:00");
    expect_datetime("1979-05-27T00:32:00+05:30");
    expect_datetime("1979-05-27T07:32:00");
    expect_datetime("1979-05-27T07:32:00.5");
    expect_datetime("1979-05-27");
    expect_datetime("07:32:00");
    expect_datetime("00:32:00.123456789123");
    expect_datetime("0001-01-01T00:00:00.000Z");
}

static void test_datetime_fraction_round_trip(void **state)
{
    (void)state;
    char *out = round_trip("t = 1979-05-27T00:32:00.123456789123Z\n");
    assert_true(has_line(out, "t = 1979-05-27T00:32:00.123456789123Z"));
    free(out);
    /* Digits past the ninth are kept apart too, not just nanoseconds. */
    assert_false(docs_equal("t = 1979-05-27T00:32:00.123456789123Z",
                            "t = 1979-05-27T00:32:00.123456789124Z"));
}

/* ---- equality ---- */

static void test_equality_edge_cases(void **state)
{
    (void)state;
    toml_value a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.type = b.type = TOML_FLOAT;
    a.u.f = 0.0;
    b.u.f = -0.0;
    assert_false(toml_value_equal(&a, &b));
    a.u.f = NAN;
    b.u.f = NAN;
    assert_true(toml_value_equal(&a, &b));
    b.u.f = 1.0;
    assert_false(toml_value_equal(&a, &b));

    assert_false(docs_equal("x = 0.0", "x = -0.0"));
    assert_true(docs_equal("x = nan", "x = nan"));
    assert_true(docs_equal("x = nan", "x = -nan"));
    assert_false(docs_equal("[t]\nc = 3", "[t]\nc = 3\n[u]"));
    assert_true(docs_equal("a = 1\nb = 2\n[t]\nc = 3\nd = 4", "b = 2\na = 1\n[t]\nd = 4\nc = 3"));
    assert_false(docs_equal("a = 1\nb = 2", "a = 1\nc = 2"));
    assert_false(docs_equal("a = 1\nb = 2", "a = 1"));
    assert_false(docs_equal("x = [1, 2]", "x = [2, 1]"));
    assert_true(docs_equal("x = [1, 2]", "x = [1, 2]"));
    assert_false(docs_equal("x = [1, 2]", "x = [1, 2, 3]"));
    assert_false(docs_equal("x = 1", "x = 1.0"));
    assert_false(docs_equal("x = 'ab'", "x = 'abc'"));
    assert_false(docs_equal("x = \"a\\u0000b\"", "x = \"a\\u0000c\""));
    assert_false(docs_equal("[[x]]\na = 1", "x = [{ a = 1 }]"));
    assert_true(docs_equal("[x]\na = 1", "x = { a = 1 }"));
    assert_true(docs_equal("t = 1979-05-27T00:32:00.5Z", "t = 1979-05-27T00:32:00.500Z"));
    assert_false(docs_equal("t = 1979-05-27T00:32:00.5Z", "t = 1979-05-27T00:32:00.6Z"));
    assert_false(docs_equal("t = 1979-05-27T00:32:00Z", "t = 1979-05-27T00:32:00+00:01"));
    assert_false(docs_equal("t = 1979-05-27T00:32:00", "t = 1979-05-27T00:32:00Z"));
    assert_false(docs_equal("t = 1979-05-27", "t = 1979-05-28"));
}

/* toml_format_key writes exactly what toml_emit_key writes, and reports
 * the full length when the buffer is short. */
static void test_format_key_matches_emit_key(void **state)
{
    (void)state;
    char long_key[600];
    memset(long_key, 'k', sizeof long_key);
    const struct {
        const char *key;
        size_t len;
    } keys[] = {{"a", 1},
                {"io.containerd.grpc.v1.cri", 25},
                {"", 0},
                {"tab\there", 8},
                {"\x01\x7f\"\\", 4},
                {"\xc3\xa9", 2},
                {long_key, sizeof long_key}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char *emitted = NULL;
        size_t emitted_len = 0;
        FILE *f = open_memstream(&emitted, &emitted_len);
        assert_non_null(f);
        assert_int_equal(toml_emit_key(keys[i].key, keys[i].len, f), 0);
        fclose(f);
        char buf[1024];
        size_t n = toml_format_key(keys[i].key, keys[i].len, buf, sizeof buf);
        assert_int_equal(n, emitted_len);
        assert_string_equal(buf, emitted);
        char tiny[4];
        assert_int_equal(toml_format_key(keys[i].key, keys[i].len, tiny, sizeof tiny), emitted_len);
        assert_true(strlen(tiny) <= 3);
        assert_memory_equal(tiny, emitted, strlen(tiny));
        free(emitted);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_toml_test_suite),
        cmocka_unit_test(test_format_float),
        cmocka_unit_test(test_format_float_ignores_locale),
        cmocka_unit_test(test_containerd_config),
        cmocka_unit_test(test_empty_tables_survive),
        cmocka_unit_test(test_key_quoting),
        cmocka_unit_test(test_string_escapes),
        cmocka_unit_test(test_inline_and_table_arrays),
        cmocka_unit_test(test_one_blank_line_before_headers),
        cmocka_unit_test(test_emit_reports_write_errors),
        cmocka_unit_test(test_datetime_forms),
        cmocka_unit_test(test_datetime_fraction_round_trip),
        cmocka_unit_test(test_equality_edge_cases),
        cmocka_unit_test(test_format_key_matches_emit_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
