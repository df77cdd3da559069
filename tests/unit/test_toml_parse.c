/* The parser: positions, located errors, numbers, date-times, lookups, and
 * never reading outside the input. The official suite (toml-test) checks
 * accept/reject and values; these check what it cannot see. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml/toml.h"

/* Parses text from an exactly-sized heap block, so that ASan catches any
 * read past the end. */
static toml_doc *parse(const char *text, gp_error *err)
{
    size_t len = strlen(text);
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, text, len);
    toml_doc *doc = toml_parse(copy, len, "t.toml", err);
    free(copy);
    return doc;
}

static toml_doc *parse_ok(const char *text)
{
    gp_error err = {0};
    toml_doc *doc = parse(text, &err);
    if (!doc) fail_msg("unexpected parse error: %s", err.text);
    return doc;
}

static void assert_error(const char *text, const char *expected_prefix)
{
    gp_error err = {0};
    toml_doc *doc = parse(text, &err);
    if (doc) {
        toml_free(doc);
        fail_msg("parsed, but expected error %s", expected_prefix);
    }
    if (strncmp(err.text, expected_prefix, strlen(expected_prefix)) != 0)
        fail_msg("error \"%s\" does not start with \"%s\"", err.text, expected_prefix);
}

static const toml_value *get(const toml_doc *doc, const char *key)
{
    gp_error err = {0};
    const toml_value *v = toml_lookup(toml_root(doc), key, &err);
    if (!v) fail_msg("%s: %s", key, err.text);
    return v;
}

static const toml_table *get_table(const toml_doc *doc, const char *key)
{
    const toml_value *v = get(doc, key);
    assert_int_equal(v->type, TOML_TABLE);
    return v->u.table;
}

/* ---- positions ---- */

static void test_header_positions(void **state)
{
    (void)state;
    toml_doc *doc = parse_ok("# lab\n"
                             "version = 2\n"
                             "  [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
                             "    default_runtime_name = \"runc\"\n");
    const toml_table *cri = get_table(doc, "plugins.\"io.containerd.grpc.v1.cri\".containerd");
    toml_pos p = toml_table_pos(cri);
    assert_string_equal(p.file, "t.toml");
    assert_int_equal(p.line, 3);
    assert_int_equal(p.col, 3);
    assert_false(toml_table_is_implicit(cri));

    /* The parents exist only because of the header: implicit, located there. */
    const toml_table *plugins = get_table(doc, "plugins");
    assert_true(toml_table_is_implicit(plugins));
    assert_int_equal(toml_table_pos(plugins).line, 3);

    const toml_entry *e = toml_table_find(cri, "default_runtime_name", 20);
    assert_non_null(e);
    assert_int_equal(e->line, 4);
    assert_int_equal(e->col, 5);
    const toml_entry *v = toml_table_find(toml_root(doc), "version", 7);
    assert_int_equal(v->line, 2);
    assert_int_equal(v->col, 1);
    toml_free(doc);
}

static void test_implicit_table_defined_later_moves_position(void **state)
{
    (void)state;
    toml_doc *doc = parse_ok("[a.b]\nx = 1\n\n[a]\ny = 2\n");
    const toml_table *a = get_table(doc, "a");
    assert_false(toml_table_is_implicit(a));
    assert_int_equal(toml_table_pos(a).line, 4);
    const toml_entry *e = toml_table_find(toml_root(doc), "a", 1);
    assert_int_equal(e->line, 4);
    assert_int_equal(e->col, 2);
    toml_free(doc);
}

static void test_dotted_key_positions(void **state)
{
    (void)state;
    toml_doc *doc = parse_ok("\n  a.b.c = 1\n");
    const toml_table *a = get_table(doc, "a");
    const toml_table *b = get_table(doc, "a.b");
    assert_int_equal(toml_table_pos(a).line, 2);
    assert_int_equal(toml_table_pos(a).col, 3);
    assert_int_equal(toml_table_pos(b).col, 5);
    const toml_entry *c = toml_table_find(b, "c", 1);
    assert_int_equal(c->line, 2);
    assert_int_equal(c->col, 7);
    assert_false(toml_table_is_implicit(a));
    toml_free(doc);
}

static void test_columns_count_characters(void **state)
{
    (void)state;
    /* "é" is two bytes, "한" three: columns count characters, not bytes. */
    toml_doc *doc = parse_ok("t = { \"é한\" = 1, k = 2 }\n");
    const toml_table *t = get_table(doc, "t");
    const toml_entry *k = toml_table_find(t, "k", 1);
    assert_int_equal(k->col, 17);
    toml_free(doc);
    assert_error("s = \"é한\" x\n", "t.toml:1:10: expected a newline");
}

static void test_lines_count_inside_multiline_strings_and_crlf(void **state)
{
    (void)state;
    toml_doc *doc = parse_ok("a = \"\"\"\none\r\ntwo\n\"\"\"\r\nb = '''\nx\n'''\nc = 1\r\n");
    const toml_entry *c = toml_table_find(toml_root(doc), "c", 1);
    assert_int_equal(c->line, 8);
    /* CRLF inside a multi-line string is read as LF. */
    const toml_value *a = get(doc, "a");
    assert_int_equal(a->len, 8);
    assert_memory_equal(a->u.s, "one\ntwo\n", 8);
    toml_free(doc);
    assert_error("a = \"\"\"\n\n\"\"\"\nb = 1\nb = 2\n", "t.toml:5:1: duplicate key 'b'");
}

static void test_bom_is_skipped_and_columns_start_after_it(void **state)
{
    (void)state;
    toml_doc *doc = parse_ok("\xEF\xBB\xBFk = 1\n");
    const toml_entry *k = toml_table_find(toml_root(doc), "k", 1);
    assert_int_equal(k->col, 1);
    toml_free(doc);
    assert_error("k = 1\n\xEF\xBB\xBFj = 2\n", "t.toml:2:1: ");
}

/* ---- located errors ---- */

static void test_errors_name_file_line_column(void **state)
{
    (void)state;
    assert_error("a = 1\na = 2\n", "t.toml:2:1: duplicate key 'a' (first defined at line 1)");
    assert_error("[a]\n[b]\n[a]\n", "t.toml:3:2: table [a] is defined twice");
    assert_error("x = \"abc\n", "t.toml:1:5: unterminated string");
    assert_error("x = 1\ny = tru\n", "t.toml:2:5: ");
    assert_error("x = \"\\q\"\n", "t.toml:1:6: invalid escape sequence");
    assert_error("x = \"a\xC3\x28\"\n", "t.toml:1:7: invalid UTF-8");
    assert_error("x = 1 y = 2\n", "t.toml:1:7: expected a newline");
    assert_error("[a]\nb.c = 1\n[a.b]\n",
                 "t.toml:3:4: table 'a.b' is already defined by dotted keys");
    assert_error("a = {}\n[a]\n", "t.toml:2:2: table 'a' is already defined as an inline table");
    assert_error("a = []\n[[a]]\n", "t.toml:2:3: ");
    assert_error("x = 0x\n", "t.toml:1:5: no digits after 0x");
    assert_error("x = {a = 1,}\n", "t.toml:1:12: trailing comma");
    assert_error("x = {a = 1,\n b = 2}\n", "t.toml:1:12: newline in an inline table");
}

/* An error about something that opened on an earlier line names that line. */
static void test_unterminated_multiline_string_points_at_its_opening(void **state)
{
    (void)state;
    assert_error("a = 1\nb = \"\"\"x\n\ny\n", "t.toml:2:5: unterminated multi-line string");
    assert_error("\xEF\xBB\xBF"
                 "b = '''x\n\ny\n",
                 "t.toml:1:5: unterminated multi-line string");
}

/* Numbers have no length limit (found by the fuzzer: a 511-digit number
 * followed by "e+" overflowed a fixed buffer). */
static void test_long_numbers(void **state)
{
    (void)state;
    char text[2100];
    /* 1 followed by 2000 zeros, scaled back by e-2000: exactly 1.0. */
    int n = snprintf(text, sizeof text, "a = 1");
    memset(text + n, '0', 2000);
    snprintf(text + n + 2000, sizeof text - (size_t)n - 2000, ".5e-2000\n");
    toml_doc *doc = parse_ok(text);
    assert_true(get(doc, "a")->u.f == 1.0);
    toml_free(doc);
    n = snprintf(text, sizeof text, "a = ");
    memset(text + n, '1', 511);
    snprintf(text + n + 511, sizeof text - (size_t)n - 511, "e+");
    assert_error(text, "t.toml:1:518: expected digits in the exponent");
}

/* Tables and arrays nest at most 1000 deep, however the nesting is written;
 * whatever parses can be emitted and parsed again (found by the fuzzer). */
static void test_nesting_limit_counts_headers_dotted_keys_and_inline_values(void **state)
{
    (void)state;
    size_t cap = 8192, len;
    char *text = malloc(cap);
    assert_non_null(text);
    /* A 600-part header plus 399 dotted tables: the deepest table sits 999
     * deep; a scalar under it is no level of its own. */
    len = (size_t)snprintf(text, cap, "[h");
    for (int i = 1; i < 600; i++)
        len += (size_t)snprintf(text + len, cap - len, ".h");
    len += (size_t)snprintf(text + len, cap - len, "]\nk");
    for (int i = 1; i < 400; i++)
        len += (size_t)snprintf(text + len, cap - len, ".k");
    snprintf(text + len, cap - len, " = 1\n");
    toml_free(parse_ok(text));
    /* 1000 deep is the limit; 1001 is refused. */
    snprintf(text + len, cap - len, ".k = 1\n");
    toml_free(parse_ok(text));
    snprintf(text + len, cap - len, ".k.k = 1\n");
    assert_error(text, "t.toml:2:");
    /* 999 arrays around an inline table with a dotted key: 1001 deep. */
    len = (size_t)snprintf(text, cap, "x = ");
    memset(text + len, '[', 999);
    len += 999;
    len += (size_t)snprintf(text + len, cap - len, "{a.b = 1}");
    memset(text + len, ']', 999);
    text[len + 999] = '\0';
    assert_error(text, "t.toml:1:");
    free(text);
}

static void test_error_in_key_with_quotes_is_readable(void **state)
{
    (void)state;
    assert_error("[p.\"io.containerd.grpc.v1.cri\"]\nx = 1\n[p.\"io.containerd.grpc.v1.cri\"]\n",
                 "t.toml:3:4: table [p.\"io.containerd.grpc.v1.cri\"] is defined twice (first "
                 "defined at line 1)");
}

static void test_redefinition_rules(void **state)
{
    (void)state;
    /* Allowed: a super-table after its sub-table, sub-tables of dotted tables,
     * dotted keys through a table that a header made implicitly. */
    toml_free(parse_ok("[a.b]\n[a]\n"));
    toml_free(parse_ok("[fruit]\napple.color = 1\n[fruit.apple.texture]\nsmooth = true\n"));
    toml_free(parse_ok("[a.b.c]\n[a]\nb.d = 1\n"));
    toml_free(parse_ok("[[a]]\nb.c = 1\n[[a]]\nb.c = 2\n"));
    toml_free(parse_ok("[[a.b]]\n[[a.b]]\n[a.b.c]\n"));
    /* Refused. */
    assert_error("[a]\n[a]\n", "t.toml:2:2: ");
    assert_error("a.b = 1\n[a]\n", "t.toml:2:2: ");
    assert_error("[x]\na.b = 1\n[y]\n[x]\n", "t.toml:4:2: ");
    assert_error("[a.b.c]\nz = 9\n[a]\nb.c.t = 1\n", "t.toml:4:3: ");
    assert_error("a = {b = 1}\na.c = 2\n", "t.toml:2:1: ");
    assert_error("a = {b = {c = 1}}\n[a.b]\n", "t.toml:2:2: ");
    assert_error("a = [{b = 1}]\n[[a]]\n", "t.toml:2:3: ");
    assert_error("[[a]]\n[a]\n", "t.toml:2:2: ");
    assert_error("[a]\n[[a]]\n", "t.toml:2:3: ");
    assert_error("a = {b.c = 1, b = 2}\n", "t.toml:1:15: duplicate key 'b'");
    assert_error("a = 1\n[a.b]\n", "t.toml:2:2: ");
}

/* ---- values ---- */

static void test_integers(void **state)
{
    (void)state;
    toml_doc *doc = parse_ok("max = 9223372036854775807\nmin = -9223372036854775808\n"
                             "hex = 0xDEAD_beef\noct = 0o755\nbin = 0b1101\nplus = +17\n"
                             "hexmax = 0x7FFFFFFFFFFFFFFF\n");
    assert_true(get(doc, "max")->u.i == INT64_MAX);
    assert_true(get(doc, "min")->u.i == INT64_MIN);
    assert_int_equal(get(doc, "hex")->u.i, 0xDEADBEEF);
    assert_int_equal(get(doc, "oct")->u.i, 0755);
    assert_int_equal(get(doc, "bin")->u.i, 13);
    assert_int_equal(get(doc, "plus")->u.i, 17);
    assert_true(get(doc, "hexmax")->u.i == INT64_MAX);
    toml_free(doc);
    assert_error("x = 9223372036854775808\n", "t.toml:1:5: integer does not fit in 64 bits");
    assert_error("x = -9223372036854775809\n", "t.toml:1:5: integer does not fit");
    assert_error("x = 0x8000000000000000\n", "t.toml:1:5: integer does not fit");
    assert_error("x = 012\n", "t.toml:1:5: leading zeros");
    assert_error("x = -0x1\n", "t.toml:1:");
}

static uint64_t bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static void test_floats_are_correctly_rounded(void **state)
{
    (void)state;
    toml_doc *doc =
        parse_ok("a = 0.1\nb = 9007199254740993.0\nc = 2.2250738585072011e-308\n"
                 "d = 5e-324\ne = -0.0\nf = 1_000.5e-1_0\n"
                 "h = 0.30000000000000000000000000000000000000000000000000000000000000001\n");
    assert_true(bits(get(doc, "a")->u.f) == bits(0.1));
    /* Halfway between two doubles: rounds to the even one. */
    assert_true(bits(get(doc, "b")->u.f) == bits(9007199254740992.0));
    assert_true(bits(get(doc, "c")->u.f) == bits(2.2250738585072011e-308));
    assert_true(bits(get(doc, "d")->u.f) == bits(5e-324));
    assert_true(signbit(get(doc, "e")->u.f));
    assert_true(bits(get(doc, "f")->u.f) == bits(1000.5e-10));
    /* 0.3 + 1e-65: far below half an ulp, so it rounds to 0.3 exactly. */
    assert_true(bits(get(doc, "h")->u.f) == bits(0.3));
    toml_free(doc);
}

/* The CLI takes LC_ALL from the environment; a ',' decimal point must not
 * change how "1.5" reads. ctest compiles de_DE into the build (LOCPATH). */
static void test_floats_read_the_same_in_a_comma_locale(void **state)
{
    (void)state;
    if (!setlocale(LC_ALL, "de_DE.UTF-8")) {
        if (getenv("LOCPATH")) fail_msg("de_DE.UTF-8 missing under LOCPATH=%s", getenv("LOCPATH"));
        skip();
    }
    assert_string_equal(localeconv()->decimal_point, ",");
    toml_doc *doc = parse_ok("x = 1.5\ny = 2e-3\n");
    double x = get(doc, "x")->u.f, y = get(doc, "y")->u.f;
    toml_free(doc);
    setlocale(LC_ALL, "C");
    assert_true(bits(x) == bits(1.5));
    assert_true(bits(y) == bits(2e-3));
}

static void test_float_overflow_is_an_error(void **state)
{
    (void)state;
    assert_error("x = 1e400\n", "t.toml:1:5: float out of range");
    assert_error("x = 1.\n", "t.toml:1:");
    assert_error("x = .5\n", "t.toml:1:");
    assert_error("x = 1e_5\n", "t.toml:1:");
    assert_error("x = 03.14\n", "t.toml:1:5: leading zeros");
}

static void test_datetimes_keep_every_fraction_digit(void **state)
{
    (void)state;
    toml_doc *doc = parse_ok("odt = 1979-05-27T00:32:00.123456789123-07:30\n"
                             "ldt = 1979-05-27 07:32:00\nld = 2000-02-29\nlt = 23:59:60.5\n"
                             "z = 1979-05-27t07:32:00z\n");
    const toml_value *odt = get(doc, "odt");
    assert_int_equal(odt->type, TOML_DATETIME);
    assert_int_equal(odt->u.dt->offset_minutes, -(7 * 60 + 30));
    assert_int_equal(odt->u.dt->nanosecond, 123456789);
    assert_int_equal(odt->u.dt->fraction_len, 12);
    assert_string_equal(odt->u.dt->fraction, "123456789123");
    assert_int_equal(get(doc, "ldt")->type, TOML_DATETIME_LOCAL);
    assert_int_equal(get(doc, "ld")->type, TOML_DATE_LOCAL);
    assert_int_equal(get(doc, "lt")->type, TOML_TIME_LOCAL);
    assert_int_equal(get(doc, "lt")->u.dt->nanosecond, 500000000);
    assert_true(get(doc, "z")->u.dt->offset_is_z);
    toml_free(doc);
    assert_error("x = 2001-02-29\n", "t.toml:1:5: day 29 out of range");
    assert_error("x = 1979-13-01\n", "t.toml:1:5: month 13 out of range");
    assert_error("x = 07:32\n", "t.toml:1:5: invalid time");
    assert_error("x = 1979-05-27T07:32:00+24:00\n", "t.toml:1:5: time offset");
}

static void test_strings(void **state)
{
    (void)state;
    toml_doc *doc = parse_ok("a = \"tab\\there \\u00E9 \\U0001F600 nul\\u0000!\"\n"
                             "b = '''\nC:\\path ''quoted'' '''\n"
                             "c = \"\"\"\\\n   joined \\\n  text\"\"\"\n"
                             "d = \"\"\"\"\"quotes\"\"\"\"\"\n");
    const toml_value *a = get(doc, "a");
    const char want[] = "tab\there \xC3\xA9 \xF0\x9F\x98\x80 nul\0!";
    assert_int_equal(a->len, sizeof want - 1);
    assert_memory_equal(a->u.s, want, sizeof want - 1);
    assert_string_equal(get(doc, "b")->u.s, "C:\\path ''quoted'' ");
    assert_string_equal(get(doc, "c")->u.s, "joined text");
    assert_string_equal(get(doc, "d")->u.s, "\"\"quotes\"\"");
    toml_free(doc);
    assert_error("x = \"\\uD800\"\n", "t.toml:1:6: \\uD800 is not a Unicode scalar value");
    assert_error("x = \"a\x01\"\n", "t.toml:1:7: control character 0x01");
    assert_error("x = 'a\x7F'\n", "t.toml:1:7: control character 0x7F");
    assert_error("x = \"\xED\xA0\x80\"\n", "t.toml:1:6: invalid UTF-8");
    assert_error("x = \"\xF4\x90\x80\x80\"\n", "t.toml:1:6: invalid UTF-8");
    assert_error("x = \"\xC0\xAF\"\n", "t.toml:1:6: invalid UTF-8");
    assert_error("# \xFF\n", "t.toml:1:3: invalid UTF-8");
}

/* ---- structure and lookups ---- */

static void test_entries_keep_definition_order_and_large_tables_index(void **state)
{
    (void)state;
    size_t cap = 64 * 1024, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int i = 999; i >= 0; i--)
        len += (size_t)snprintf(text + len, cap - len, "k%d = %d\n", i, i);
    toml_doc *doc = parse_ok(text);
    const toml_table *root = toml_root(doc);
    assert_int_equal(toml_table_size(root), 1000);
    for (int i = 0; i < 1000; i++) {
        char key[16];
        int n = snprintf(key, sizeof key, "k%d", i);
        const toml_entry *e = toml_table_find(root, key, (size_t)n);
        assert_non_null(e);
        assert_int_equal(e->value.u.i, i);
        assert_int_equal(e->line, 1000 - i);
        assert_ptr_equal(toml_table_entry(root, (size_t)(999 - i)), e);
    }
    assert_null(toml_table_find(root, "k1000", 5));
    toml_free(doc);
    free(text);
    assert_error("a=1\nb=1\nc=1\nd=1\ne=1\nf=1\ng=1\nh=1\ni=1\nj=1\nk=1\nl=1\na=2\n",
                 "t.toml:13:1: duplicate key 'a'");
}

static void test_lookup_through_quoted_keys_and_table_arrays(void **state)
{
    (void)state;
    toml_doc *doc = parse_ok("[[srv]]\nname = \"a\"\n[[srv]]\nname = \"b\"\n"
                             "[\"a.b\".'c d']\n\"\" = 5\n");
    assert_string_equal(get(doc, "srv.name")->u.s, "b");
    assert_int_equal(get(doc, "\"a.b\" . 'c d' . \"\"")->u.i, 5);
    const toml_value *srv = get(doc, "srv");
    assert_int_equal(srv->type, TOML_ARRAY);
    assert_true(toml_array_is_table_array(srv->u.array));
    assert_int_equal(toml_array_size(srv->u.array), 2);
    gp_error err = {0};
    assert_null(toml_lookup(toml_root(doc), "srv.port", &err));
    assert_null(toml_lookup(toml_root(doc), "a.b", &err));
    assert_null(toml_lookup(toml_root(doc), "bad..key", &err));
    toml_free(doc);
}

static void test_key_split(void **state)
{
    (void)state;
    char **parts;
    size_t *lens;
    gp_error err = {0};
    int n = toml_key_split("plugins.\"io.containerd.grpc.v1.cri\".containerd", &parts, &lens, &err);
    assert_int_equal(n, 3);
    assert_string_equal(parts[0], "plugins");
    assert_string_equal(parts[1], "io.containerd.grpc.v1.cri");
    assert_int_equal(lens[1], 25);
    assert_string_equal(parts[2], "containerd");
    free(parts);
    assert_int_equal(toml_key_split("a.", &parts, &lens, &err), -1);
    assert_int_equal(toml_key_split("", &parts, &lens, &err), -1);
    assert_int_equal(toml_key_split("a b", &parts, &lens, &err), -1);
    assert_int_equal(toml_key_split("\"open", &parts, &lens, &err), -1);
}

static void test_deep_nesting_is_refused_not_crashed(void **state)
{
    (void)state;
    size_t depth = 100000;
    char *text = malloc(depth * 2 + 8);
    assert_non_null(text);
    memcpy(text, "x = ", 4);
    memset(text + 4, '[', depth);
    memset(text + 4 + depth, ']', depth);
    text[4 + 2 * depth] = '\0';
    assert_error(text, "t.toml:1:");
    free(text);
}

/* Every prefix of a document is parsed from an exact-size buffer: an
 * unterminated construct must be an error, never a read past the end. */
static void test_truncated_inputs_never_read_past_the_end(void **state)
{
    (void)state;
    const char *doc = "a = \"\"\"x\\u00E9\"\"\"\nb = 1979-05-27T07:32:00.5+01:00\n"
                      "[t.'q']\nc = [1, {d = 0x1F}, 'e', 1e5, inf]\n# c\xC3\xA9\n";
    size_t len = strlen(doc);
    for (size_t n = 0; n <= len; n++) {
        char *copy = malloc(n ? n : 1);
        assert_non_null(copy);
        memcpy(copy, doc, n);
        gp_error err = {0};
        toml_doc *d = toml_parse(copy, n, "t.toml", &err);
        if (!d) assert_true(strncmp(err.text, "t.toml:", 7) == 0);
        toml_free(d);
        free(copy);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_positions),
        cmocka_unit_test(test_implicit_table_defined_later_moves_position),
        cmocka_unit_test(test_dotted_key_positions),
        cmocka_unit_test(test_columns_count_characters),
        cmocka_unit_test(test_lines_count_inside_multiline_strings_and_crlf),
        cmocka_unit_test(test_bom_is_skipped_and_columns_start_after_it),
        cmocka_unit_test(test_errors_name_file_line_column),
        cmocka_unit_test(test_unterminated_multiline_string_points_at_its_opening),
        cmocka_unit_test(test_long_numbers),
        cmocka_unit_test(test_nesting_limit_counts_headers_dotted_keys_and_inline_values),
        cmocka_unit_test(test_error_in_key_with_quotes_is_readable),
        cmocka_unit_test(test_redefinition_rules),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_floats_are_correctly_rounded),
        cmocka_unit_test(test_floats_read_the_same_in_a_comma_locale),
        cmocka_unit_test(test_float_overflow_is_an_error),
        cmocka_unit_test(test_datetimes_keep_every_fraction_digit),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_entries_keep_definition_order_and_large_tables_index),
        cmocka_unit_test(test_lookup_through_quoted_keys_and_table_arrays),
        cmocka_unit_test(test_key_split),
        cmocka_unit_test(test_deep_nesting_is_refused_not_crashed),
        cmocka_unit_test(test_truncated_inputs_never_read_past_the_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
