/* gp_yaml_to_json: YAML as sigs.k8s.io/yaml (go-yaml v2) reads it.
 *
 * The expected values of the typing tables were observed with the real
 * kubectl 1.32: `kubectl create -f FILE --dry-run=client -o json` prints the
 * unstructured object, i.e. exactly what sigs.k8s.io/yaml made of each
 * scalar. Where kubectl's output cannot tell an integer from a float with
 * an integral value (it prints 1e3 as 1000), the type follows go-yaml v2's
 * resolve.go (ParseInt, then ParseUint, then the float syntax) and the test
 * says so. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/yaml_json.h"

/* ---- helpers ---- */

/* The single document of `text`; fails the test if there is not one. */
static json_t *load_one(const char *text)
{
    json_t *docs = NULL;
    gp_error err = {0};
    if (gp_yaml_to_json(text, strlen(text), "t.yaml", &docs, NULL, &err) != 0)
        print_error("unexpected error: %s\n", err.text);
    assert_non_null(docs);
    assert_int_equal(json_array_size(docs), 1);
    json_t *doc = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return doc;
}

/* `v: SCALAR` must read as the JSON `expected` (written with ' for "). */
static void expect_scalar(const char *scalar, const char *expected)
{
    char text[256];
    snprintf(text, sizeof text, "v: %s\n", scalar);
    json_t *doc = load_one(text);
    json_t *want = sq_load(expected);
    if (!json_equal(json_object_get(doc, "v"), want)) print_error("for scalar: %s\n", scalar);
    assert_json_equal(json_object_get(doc, "v"), want);
    json_decref(want);
    json_decref(doc);
}

/* Parsing must fail with exactly `message`. */
static void expect_error(const char *text, const char *message)
{
    json_t *docs = NULL, *pos = NULL;
    gp_error err = {0};
    int rc = gp_yaml_to_json(text, strlen(text), "f.yaml", &docs, &pos, &err);
    if (rc == 0) print_error("parsed, expected: %s\n", message);
    assert_int_equal(rc, -1);
    assert_null(docs);
    assert_null(pos);
    assert_string_equal(err.text, message);
}

static void expect_position(const json_t *positions, const char *pointer, unsigned line,
                            unsigned col)
{
    unsigned l = 99, c = 99;
    gp_yaml_position(positions, pointer, &l, &c);
    if (l != line || c != col)
        print_error("%s: expected %u:%u, got %u:%u\n", pointer, line, col, l, c);
    assert_int_equal(l, line);
    assert_int_equal(c, col);
}

/* ---- scalar typing ---- */

static void test_quoted_stays_string(void **state)
{
    (void)state;
    expect_scalar("\"4\"", "'4'");
    expect_scalar("'4'", "'4'");
    expect_scalar("\"yes\"", "'yes'");
    expect_scalar("!!str 4", "'4'");
    expect_scalar("'~'", "'~'");
}

static void test_integers(void **state)
{
    (void)state;
    expect_scalar("4", "4");
    expect_scalar("0x1F", "31");
    expect_scalar("-0x1F", "-31");
    expect_scalar("1_000", "1000");
    expect_scalar("017", "15"); /* Go's base-0 ParseInt: a leading 0 is octal */
    expect_scalar("0o17", "15");
    expect_scalar("0b101", "5");
    expect_scalar("+5", "5");
    expect_scalar("-9223372036854775808", "-9223372036854775808");
    expect_scalar("!!int \"4\"", "4");
}

static void test_floats(void **state)
{
    (void)state;
    expect_scalar("1.5", "1.5");
    expect_scalar(".5", "0.5");
    /* kubectl prints these as 1, 1000, 8: go-yaml v2 resolves them as
     * floats (ParseInt fails, the float syntax matches). */
    expect_scalar("1.", "1.0");
    expect_scalar("1e3", "1000.0");
    expect_scalar("08", "8.0");
    expect_scalar("!!float 1", "1.0");
    /* Beyond int64, ParseUint then float: kubectl shows 1e20 and
     * 9223372036854776000. */
    expect_scalar("99999999999999999999", "1e20");
    expect_scalar("9223372036854775808", "9223372036854775808.0");
}

static void test_booleans(void **state)
{
    (void)state;
    static const char *const yes[] = {"yes",  "Yes",  "YES", "y",  "Y", "true",
                                      "True", "TRUE", "on",  "On", "ON"};
    static const char *const no[] = {"no",    "No",    "NO",  "n",   "N",  "false",
                                     "False", "FALSE", "off", "Off", "OFF"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        expect_scalar(yes[i], "true");
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        expect_scalar(no[i], "false");
    /* Mixed casings outside the table are text. */
    expect_scalar("tRUE", "'tRUE'");
    expect_scalar("oN", "'oN'");
}

static void test_nulls_and_text(void **state)
{
    (void)state;
    expect_scalar("~", "null");
    expect_scalar("null", "null");
    expect_scalar("Null", "null");
    expect_scalar("NULL", "null");
    expect_scalar("", "null");
    expect_scalar("nULL", "'nULL'");
    expect_scalar("0x", "'0x'");
    expect_scalar("2001-12-14", "'2001-12-14'"); /* v2 keeps timestamps as text */
    expect_scalar("~x", "'~x'");
}

static void test_block_scalars_are_strings(void **state)
{
    (void)state;
    json_t *doc = load_one("lit: |\n  a: 1\nfold: >\n  b\nkeep: |-\n  4\n");
    json_t *want = sq_load("{'lit':'a: 1\\n','fold':'b\\n','keep':'4'}");
    assert_json_equal(doc, want);
    json_decref(want);
    json_decref(doc);
}

/* Keys as sigs.k8s.io/yaml spells them (observed with kubectl): booleans,
 * numbers and floats become text, in Go's float32 'g' form. */
static void test_keys_become_strings(void **state)
{
    (void)state;
    json_t *doc = load_one("1: a\n1.5: b\n1e3: c\ntrue: d\n0.1: e\n1e6: f\n1234567.0: g\n"
                           "0.00001: h\n3.14159265358979: i\n0.0001: j\n123456.0: k\n-0: l\n"
                           "2222222222222222222222222222222222222222222222222222222222: m\n");
    /* A number beyond float32 is strconv.FormatFloat's "+Inf". */
    json_t *want = sq_load("{'1':'a','1.5':'b','1000':'c','true':'d','0.1':'e','1e+06':'f',"
                           "'1.234567e+06':'g','1e-05':'h','3.1415927':'i','0.0001':'j',"
                           "'123456':'k','0':'l','+Inf':'m'}");
    assert_json_equal(doc, want);
    json_decref(want);
    json_decref(doc);
}

/* kubectl: `On: On` and `OFF: OFF` land under "true" and "false", the
 * last one written winning. */
static void test_boolean_keys_collide(void **state)
{
    (void)state;
    json_t *doc = load_one("yes: 1\nOn: 2\nNo: 3\nOFF: 4\n");
    json_t *want = sq_load("{'true':2,'false':4}");
    assert_json_equal(doc, want);
    json_decref(want);
    json_decref(doc);
}

static void test_null_key_refused(void **state)
{
    (void)state;
    expect_error("a: 1\nnull: 2\n", "f.yaml:2:1: unsupported map key of type null");
}

/* kubectl: "json: unsupported value: +Inf". */
static void test_infinity_refused(void **state)
{
    (void)state;
    expect_error("a:\n  b: .inf\n",
                 "f.yaml:2:6: unsupported value: +Inf (JSON has no infinity or NaN)");
    expect_error("a: -.Inf\n", "f.yaml:1:4: unsupported value: -Inf (JSON has no infinity or NaN)");
    expect_error("a: .nan\n", "f.yaml:1:4: unsupported value: NaN (JSON has no infinity or NaN)");
}

/* kubectl: "yaml: cannot decode !!str `abc` as a !!int". */
static void test_tag_mismatch(void **state)
{
    (void)state;
    expect_error("a: !!int abc\n", "f.yaml:1:4: cannot decode !!str `abc` as a !!int");
    expect_error("a: !!bool 4\n", "f.yaml:1:4: cannot decode !!int `4` as a !!bool");
    expect_error("a: !!null x\n", "f.yaml:1:4: cannot decode !!str `x` as a !!null");
}

/* A comma decimal point in the caller's locale must not change numbers. */
static void test_floats_ignore_locale(void **state)
{
    (void)state;
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "de_DE"};
    const char *found = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !found; i++)
        if (setlocale(LC_ALL, names[i]) && strcmp(localeconv()->decimal_point, ".") != 0)
            found = names[i];
    if (!found) {
        setlocale(LC_ALL, "C");
        if (getenv("LOCPATH")) fail_msg("no comma locale under LOCPATH=%s", getenv("LOCPATH"));
        skip();
    }
    json_t *docs = NULL;
    gp_error err = {0};
    const char text[] = "v: 1.5\n2.5: k\n";
    int rc = gp_yaml_to_json(text, strlen(text), "t.yaml", &docs, NULL, &err);
    setlocale(LC_ALL, "C");
    assert_int_equal(rc, 0);
    json_t *want = sq_load("[{'v':1.5,'2.5':'k'}]");
    assert_json_equal(docs, want);
    json_decref(want);
    json_decref(docs);
}

/* ---- structure ---- */

static void test_nested(void **state)
{
    (void)state;
    json_t *doc = load_one("spec:\n  containers:\n  - name: a\n    args: [x, 1, {k: v}]\n"
                           "  - name: b\n  empty: {}\n  none: []\n");
    json_t *want = sq_load("{'spec':{'containers':[{'name':'a','args':['x',1,{'k':'v'}]},"
                           "{'name':'b'}],'empty':{},'none':[]}}");
    assert_json_equal(doc, want);
    json_decref(want);
    json_decref(doc);
}

static void test_multi_document(void **state)
{
    (void)state;
    const char text[] = "a: 1\n---\nb: 2\n---\n--- x\n";
    json_t *docs = NULL, *pos = NULL;
    gp_error err = {0};
    assert_int_equal(gp_yaml_to_json(text, strlen(text), "m.yaml", &docs, &pos, &err), 0);
    json_t *want = sq_load("[{'a':1},{'b':2},null,'x']");
    assert_json_equal(docs, want);
    assert_int_equal(json_array_size(pos), 4);
    expect_position(json_array_get(pos, 1), "/b", 3, 4);
    expect_position(json_array_get(pos, 3), "", 5, 5);
    json_decref(want);
    json_decref(docs);
    json_decref(pos);
}

static void test_empty_stream_is_one_null(void **state)
{
    (void)state;
    static const char *const texts[] = {"", "# only a comment\n", "\n\n"};
    for (size_t i = 0; i < 3; i++) {
        json_t *docs = NULL;
        gp_error err = {0};
        assert_int_equal(gp_yaml_to_json(texts[i], strlen(texts[i]), "e", &docs, NULL, &err), 0);
        json_t *want = sq_load("[null]");
        assert_json_equal(docs, want);
        json_decref(want);
        json_decref(docs);
    }
}

/* Observed with kubectl: `merged: {<<: *A, y: 2}` gives {"true":2,"x":1};
 * a merge overwrites keys written before it (go-yaml v2, unlike the YAML
 * merge spec), and in a list of merged mappings the first one wins. */
static void test_anchors_and_aliases(void **state)
{
    (void)state;
    json_t *doc = load_one("anchors: &A {x: 1}\nalias: *A\nmerged: {<<: *A, y: 2}\n"
                           "s: &s one\nl: &l [*s, *A]\nll: *l\n"
                           "both: {<<: [{p: 1}, {p: 2, q: 2}], q: 3}\n"
                           "pre: {q: 0, <<: {q: 5, r: 6}}\n");
    json_t *want = sq_load("{'anchors':{'x':1},'alias':{'x':1},'merged':{'true':2,'x':1},"
                           "'s':'one','l':['one',{'x':1}],'ll':['one',{'x':1}],"
                           "'both':{'p':1,'q':3},'pre':{'q':5,'r':6}}");
    assert_json_equal(doc, want);
    /* Aliases are copies: changing one leaves the anchor alone. */
    json_object_set_new(json_object_get(doc, "alias"), "x", json_integer(2));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "anchors"), "x")), 1);
    json_decref(want);
    json_decref(doc);
}

/* kubectl: "yaml: unknown anchor 'nope' referenced". */
static void test_unknown_anchor(void **state)
{
    (void)state;
    expect_error("a: 1\nb: *nope\n", "f.yaml:2:4: unknown anchor 'nope' referenced");
}

static void test_billion_laughs(void **state)
{
    (void)state;
    const char text[] = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
                        "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                        "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                        "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                        "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                        "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
                        "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
                        "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n";
    json_t *docs = NULL;
    gp_error err = {0};
    assert_int_equal(gp_yaml_to_json(text, strlen(text), "lol.yaml", &docs, NULL, &err), -1);
    assert_null(docs);
    assert_non_null(strstr(err.text, "document contains excessive aliasing"));
    assert_int_equal(strncmp(err.text, "lol.yaml:", 9), 0);
    assert_true(err.line >= 3 && err.line <= 9);
}

/* Many aliases in a document mostly written out are fine. */
static void test_moderate_aliasing_allowed(void **state)
{
    (void)state;
    size_t cap = 200000, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    n += (size_t)snprintf(text + n, cap - n, "base: &b {cpu: 1, mem: 2}\nitems:\n");
    for (int i = 0; i < 2000; i++)
        n += (size_t)snprintf(text + n, cap - n, "- {name: n%d, v: %d, r: *b}\n", i, i);
    json_t *docs = NULL;
    gp_error err = {0};
    int rc = gp_yaml_to_json(text, n, "many.yaml", &docs, NULL, &err);
    free(text);
    if (rc != 0) print_error("%s\n", err.text);
    assert_int_equal(rc, 0);
    json_t *items = json_object_get(json_array_get(docs, 0), "items");
    assert_int_equal(json_array_size(items), 2000);
    json_decref(docs);
}

static void test_too_deep(void **state)
{
    (void)state;
    char text[3000];
    memset(text, '[', 2000);
    text[2000] = '\0';
    json_t *docs = NULL;
    gp_error err = {0};
    assert_int_equal(gp_yaml_to_json(text, 2000, "deep", &docs, NULL, &err), -1);
    assert_non_null(strstr(err.text, "deep:1:"));
}

/* ---- errors and positions ---- */

/* kubectl: "yaml: line 6: mapping values are not allowed in this context";
 * PyYAML puts the same fault at column 7. */
static void test_invalid_yaml_located(void **state)
{
    (void)state;
    expect_error("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b: c\n",
                 "f.yaml:6:7: mapping values are not allowed in this context");
    expect_error("a: [1, 2\n", "f.yaml:2:1: did not find expected ',' or ']'");
}

static const char configmap[] = "apiVersion: v1\n"                  /* 1 */
                                "kind: ConfigMap\n"                 /* 2 */
                                "metadata:\n"                       /* 3 */
                                "  name: time-slicing-config\n"     /* 4 */
                                "  labels:\n"                       /* 5 */
                                "    nvidia.com/gpu.count: \"4\"\n" /* 6 */
                                "data:\n"                           /* 7 */
                                "  any: |-\n"                       /* 8 */
                                "    version: v1\n"                 /* 9 */
                                "    sharing:\n"                    /* 10 */
                                "      timeSlicing:\n"              /* 11 */
                                "        resources:\n"              /* 12 */
                                "        - name: nvidia.com/gpu\n"  /* 13 */
                                "          replicas: 5\n"           /* 14 */
                                "list:\n"                           /* 15 */
                                "- a\n"                             /* 16 */
                                "- {k: &x [1, 2]}\n"                /* 17 */
                                "- *x\n";                           /* 18 */

static void test_positions(void **state)
{
    (void)state;
    json_t *docs = NULL, *pos = NULL;
    gp_error err = {0};
    assert_int_equal(gp_yaml_to_json(configmap, strlen(configmap), "cm.yaml", &docs, &pos, &err),
                     0);
    const json_t *p = json_array_get(pos, 0);
    expect_position(p, "", 1, 1);
    expect_position(p, "/kind", 2, 7);
    expect_position(p, "/metadata", 4, 3);
    expect_position(p, "/metadata/name", 4, 9);
    expect_position(p, "/metadata/labels/nvidia.com~1gpu.count", 6, 27);
    /* The block literal's position is its indicator. */
    expect_position(p, "/data/any", 8, 8);
    /* Inside the string there are no pointers: the nearest ancestor. */
    expect_position(p, "/data/any/sharing", 8, 8);
    expect_position(p, "/metadata/missing", 4, 3);
    expect_position(p, "/list", 16, 1);
    expect_position(p, "/list/0", 16, 3);
    expect_position(p, "/list/1/k", 17, 7);
    expect_position(p, "/list/1/k/1", 17, 14);
    /* An alias: itself where it is used, its content where the anchor is. */
    expect_position(p, "/list/2", 18, 3);
    expect_position(p, "/list/2/1", 17, 14);
    expect_position(p, "/nothing/at/all", 1, 1);
    json_decref(docs);
    json_decref(pos);
}

static void test_position_without_table(void **state)
{
    (void)state;
    unsigned l = 7, c = 7;
    gp_yaml_position(NULL, "/a", &l, &c);
    assert_int_equal(l, 0);
    assert_int_equal(c, 0);
}

static void test_load_file(void **state)
{
    (void)state;
    json_t *docs = NULL;
    gp_error err = {0};
    assert_int_equal(gp_yaml_load_file("/nonexistent/x.yaml", &docs, NULL, &err), -1);
    assert_non_null(strstr(err.text, "/nonexistent/x.yaml"));
    char path[] = "/tmp/yaml_json_testXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("a: [1,\n", f);
    fclose(f);
    assert_int_equal(gp_yaml_load_file(path, &docs, NULL, &err), -1);
    remove(path);
    char want[128];
    snprintf(want, sizeof want, "%s:2:1: ", path);
    assert_int_equal(strncmp(err.text, want, strlen(want)), 0);
}

/* ---- keys given twice (gp_yaml_to_json_strict) ---- */

/* go-yaml v2's strict complaints about `text`, one a line ("" for none);
 * the document itself must read as without strictness. */
static char *duplicates_of(const char *text)
{
    json_t *docs = NULL, *dups = NULL, *plain = NULL;
    gp_error err = {0};
    if (gp_yaml_to_json_strict(text, strlen(text), "t.yaml", &docs, &dups, &err) != 0)
        print_error("unexpected error: %s\n", err.text);
    assert_non_null(dups);
    assert_int_equal(gp_yaml_to_json(text, strlen(text), "t.yaml", &plain, NULL, &err), 0);
    assert_json_equal(docs, plain);
    char *joined = calloc(1, 4096);
    size_t i;
    json_t *d;
    json_array_foreach(dups, i, d)
    {
        if (i) strcat(joined, "\n");
        strncat(joined, json_string_value(d), 4096 - strlen(joined) - 2);
    }
    json_decref(docs);
    json_decref(plain);
    json_decref(dups);
    return joined;
}

static void expect_duplicates(const char *text, const char *expected)
{
    char *got = duplicates_of(text);
    if (strcmp(got, expected) != 0) print_error("for:\n%s\n", text);
    assert_string_equal(got, expected);
    free(got);
}

/* sigs.k8s.io/yaml yaml_test.go TestUnmarshalStrict: `key "a" already set
 * in map`, `key true already set in map` (the key as Go's %#v prints it);
 * go-yaml v2 decode_test.go unmarshalStrictTests: `line 4: key 9 already
 * set in map` for "a: 1\n9: 2\nnull: 3\n9: 4" (the null key left out here:
 * sigs.k8s.io/yaml refuses it before any strict reading). */
static void test_duplicate_keys_as_go_yaml(void **state)
{
    (void)state;
    expect_duplicates("a: 1\n", "");
    expect_duplicates("a: 1\na: 2", "line 2: key \"a\" already set in map");
    expect_duplicates("a: [1,2,3]\na: value-of-a", "line 2: key \"a\" already set in map");
    expect_duplicates("true: string-value-of-yes\ntrue: 1", "line 2: key true already set in map");
    expect_duplicates("a: 1\n9: 2\n9: 4", "line 3: key 9 already set in map");
}

/* kubernetes test/integration/apiserver/field_validation_test.go,
 * invalidBodyYAML: kube-apiserver warns `line 10: key "unknownDupe" already
 * set in map`, `line 12: key "paused" ...`, `line 26: key
 * "imagePullPolicy" ...`; and handlers/rest_test.go (parseYAMLWarnings):
 * lines 9 and 14 for a document that starts with `---`. */
static void test_duplicate_keys_as_kube_apiserver(void **state)
{
    (void)state;
    expect_duplicates("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  labels:\n"
                      "    app: nginx\nspec:\n  unknown1: val1\n  unknownDupe: valDupe\n"
                      "  unknownDupe: valDupe2\n  paused: true\n  paused: false\n  selector:\n"
                      "    matchLabels:\n      app: nginx\n  template:\n    metadata:\n"
                      "      labels:\n        app: nginx\n    spec:\n      containers:\n"
                      "      - name: nginx\n        image: nginx:latest\n"
                      "        unknownNested: val1\n        imagePullPolicy: Always\n"
                      "        imagePullPolicy: Never",
                      "line 10: key \"unknownDupe\" already set in map\n"
                      "line 12: key \"paused\" already set in map\n"
                      "line 26: key \"imagePullPolicy\" already set in map");
    expect_duplicates("---\napiVersion: foo\nkind: bar\nmetadata:\n  name: no-errors\nspec:\n"
                      "  field1: val1\n  field2: val2\n  field2: val3\n  nested:\n"
                      "  - name: nestedName\n    nestedField1: val1\n    nestedField2: val2\n"
                      "    nestedField2: val3",
                      "line 9: key \"field2\" already set in map\n"
                      "line 14: key \"nestedField2\" already set in map");
}

/* go-yaml v2 (decode.go, mapping and setMapIndex): the line is that of the
 * second value; a value's own duplicates come before its key's; keys are
 * Go values, so "1" and 1 differ while yes and true do not; a merge puts
 * its keys into the map again, so a key the mapping also sets is a
 * complaint (as yaml.v2 strict users report: `key "system" already set in
 * map` for a key written after `<<: *labels`); an anchored mapping is
 * decoded again at each alias; only the first document is read. */
static void test_duplicate_keys_go_yaml_rules(void **state)
{
    (void)state;
    expect_duplicates("a:\n  x: 1\na:\n  b: 1\n  b: 2\n",
                      "line 5: key \"b\" already set in map\nline 4: key \"a\" already set in map");
    expect_duplicates("\"1\": a\n1: b\n", "");
    expect_duplicates("yes: a\ntrue: b\n", "line 2: key true already set in map");
    expect_duplicates("{a: 1, b: 2, a: 3}", "line 1: key \"a\" already set in map");
    expect_duplicates("base: &labels\n  system: billing\nlabels:\n  <<: *labels\n"
                      "  system: payments\n",
                      "line 5: key \"system\" already set in map");
    expect_duplicates("base: &b\n  k: 1\n  k: 2\nuse: *b\n",
                      "line 3: key \"k\" already set in map\n"
                      "line 3: key \"k\" already set in map");
    expect_duplicates("a: 1\n---\na: 1\na: 2\n", "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quoted_stays_string),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_floats),
        cmocka_unit_test(test_booleans),
        cmocka_unit_test(test_nulls_and_text),
        cmocka_unit_test(test_block_scalars_are_strings),
        cmocka_unit_test(test_keys_become_strings),
        cmocka_unit_test(test_boolean_keys_collide),
        cmocka_unit_test(test_null_key_refused),
        cmocka_unit_test(test_infinity_refused),
        cmocka_unit_test(test_tag_mismatch),
        cmocka_unit_test(test_floats_ignore_locale),
        cmocka_unit_test(test_nested),
        cmocka_unit_test(test_multi_document),
        cmocka_unit_test(test_empty_stream_is_one_null),
        cmocka_unit_test(test_anchors_and_aliases),
        cmocka_unit_test(test_unknown_anchor),
        cmocka_unit_test(test_billion_laughs),
        cmocka_unit_test(test_moderate_aliasing_allowed),
        cmocka_unit_test(test_too_deep),
        cmocka_unit_test(test_invalid_yaml_located),
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_position_without_table),
        cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_duplicate_keys_as_go_yaml),
        cmocka_unit_test(test_duplicate_keys_as_kube_apiserver),
        cmocka_unit_test(test_duplicate_keys_go_yaml_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
