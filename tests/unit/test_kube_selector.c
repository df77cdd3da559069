/* kube_label_selector_* and kube_field_selector_*: label and field selectors parse and match the
 * way the API server reads ?labelSelector= and ?fieldSelector= (k8s-semantics 2.10), and invalid
 * ones fail with a message that names the piece at fault. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "kube/selector.h"

static json_t *json(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, 0, &jerr);
    if (!v) {
        print_error("bad test JSON '%s': %s\n", text, jerr.text);
        fail();
    }
    return v;
}

/* ---- label selectors ---- */

#define PROBE "{\"app\": \"gpu-probe\", \"tier\": \"lab\", \"nvidia.com/gpu.present\": \"true\"}"

struct label_case {
    const char *selector;
    const char *labels; /* JSON, or NULL for an object without labels */
    bool match;
};

static const struct label_case label_cases[] = {
    {"", PROBE, true},
    {"", NULL, true},
    {"app=gpu-probe", PROBE, true},
    {"app==gpu-probe", PROBE, true},
    {"app=other", PROBE, false},
    {"app!=other", PROBE, true},
    {"app!=gpu-probe", PROBE, false},
    {"missing=x", PROBE, false},
    {"missing!=x", PROBE, true},
    {"app in (gpu-probe,other)", PROBE, true},
    {"app in (other,more)", PROBE, false},
    {"app notin (gpu-probe)", PROBE, false},
    {"app notin (other)", PROBE, true},
    {"missing in (a)", PROBE, false},
    {"missing notin (a)", PROBE, true},
    {"app", PROBE, true},
    {"missing", PROBE, false},
    {"!app", PROBE, false},
    {"!missing", PROBE, true},
    {"app=gpu-probe,tier=lab", PROBE, true},
    {"app=gpu-probe,tier=prod", PROBE, false},
    {"tier=prod,app=gpu-probe", PROBE, false},
    {"app,!missing,tier in (lab)", PROBE, true},
    {"  app = gpu-probe ,  tier in ( lab , prod ) ", PROBE, true},
    {"app\t==\ngpu-probe", PROBE, true},
    {"nvidia.com/gpu.present=true", PROBE, true},
    {"nvidia.com/gpu.present!=true", PROBE, false},
    /* An empty value: "k=" and empty places in a list. */
    {"tier=", "{\"tier\": \"\"}", true},
    {"tier=", PROBE, false},
    {"tier=", "{}", false},
    {"tier!=", PROBE, true},
    {"tier in ()", "{\"tier\": \"\"}", true},
    {"tier in (a,)", "{\"tier\": \"\"}", true},
    {"tier in (,a)", "{\"tier\": \"a\"}", true},
    {"tier in (a,,b)", "{\"tier\": \"\"}", true},
    {"tier in (a,b)", "{\"tier\": \"\"}", false},
    /* "in" and "notin" are plain words where a key or value goes. */
    {"in in (in)", "{\"in\": \"in\"}", true},
    {"notin notin (in)", "{\"notin\": \"in\"}", false},
    {"in=notin", "{\"in\": \"notin\"}", true},
    /* No labels at all: positive operators fail, negative ones pass. */
    {"app", NULL, false},
    {"!app", NULL, true},
    {"app=x", NULL, false},
    {"app!=x", NULL, true},
    {"app notin (x)", NULL, true},
    /* A value that is not a string counts as absent. */
    {"app", "{\"app\": 1}", false},
    {"!app", "{\"app\": null}", true},
    /* Numeric comparisons (selection.GreaterThan / LessThan). */
    {"gen>3", "{\"gen\": \"5\"}", true},
    {"gen>5", "{\"gen\": \"5\"}", false},
    {"gen<6", "{\"gen\": \"5\"}", true},
    {"gen<3", "{\"gen\": \"5\"}", false},
    {"gen>3", "{\"gen\": \"five\"}", false},
    {"gen<3", "{}", false},
};

static void test_label_matching(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof label_cases / sizeof *label_cases; i++) {
        const struct label_case *c = &label_cases[i];
        gp_error err = {0};
        kube_label_selector *s = kube_label_selector_parse(c->selector, &err);
        if (!s) {
            print_error("'%s' did not parse: %s\n", c->selector, err.text);
            failures++;
            continue;
        }
        json_t *labels = c->labels ? json(c->labels) : NULL;
        if (kube_label_selector_matches(s, labels) != c->match) {
            print_error("'%s' against %s: expected %s\n", c->selector,
                        c->labels ? c->labels : "no labels", c->match ? "a match" : "no match");
            failures++;
        }
        json_decref(labels);
        kube_label_selector_free(s);
    }
    assert_int_equal(failures, 0);
}

static void test_label_empty(void **state)
{
    (void)state;
    const char *empties[] = {"", "   ", NULL};
    for (size_t i = 0; i < 3; i++) {
        kube_label_selector *s = kube_label_selector_parse(empties[i], NULL);
        assert_non_null(s);
        assert_true(kube_label_selector_is_empty(s));
        kube_label_selector_free(s);
    }
    kube_label_selector *s = kube_label_selector_parse("a", NULL);
    assert_non_null(s);
    assert_false(kube_label_selector_is_empty(s));
    kube_label_selector_free(s);
}

struct bad_case {
    const char *selector;
    const char *message; /* the whole message, or a piece of it with `partial` */
    bool partial;
};

#define KEY_CHARS                                                                                  \
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "  \
    "with an alphanumeric character"
#define VALUE_CHARS                                                                                \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character"
#define LONG63 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static const struct bad_case bad_labels[] = {
    {"app in (a", "unable to parse requirement: found '', expected: ',' or ')'", false},
    {"app in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'", false},
    {"app in a", "unable to parse requirement: found 'a', expected: '('", false},
    {"app in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier",
     false},
    {"app b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
     false},
    {"app=(x)", "unable to parse requirement: found '(', expected: identifier", false},
    {"=x", "found '=', expected: !, identifier, or 'end of string'", false},
    {"a=b,", "found '', expected: identifier after ','", false},
    {"a=b,,c", "found ',', expected: identifier after ','", false},
    {"a=b c", "found 'c', expected: ',' or 'end of string'", false},
    {"!a=b", "found '=', expected: ',' or 'end of string'", false},
    {"!", "unable to parse requirement: found '', expected: identifier", false},
    {"-bad=x", "unable to parse requirement: invalid label key '-bad': " KEY_CHARS, true},
    {"bad-=x", "invalid label key 'bad-': " KEY_CHARS, true},
    {"b@d", "invalid label key 'b@d': " KEY_CHARS, true},
    {"a=-x", "unable to parse requirement: invalid label value '-x': " VALUE_CHARS, true},
    {"a in (ok,x_)", "invalid label value 'x_': " VALUE_CHARS, true},
    {"a!=" LONG63 "a",
     "unable to parse requirement: invalid label value '" LONG63 "a': must be no more than 63 "
     "characters",
     false},
    {LONG63 "a=b",
     "unable to parse requirement: invalid label key '" LONG63 "a': name part must be no more "
     "than 63 characters",
     false},
    {"Example.com/x=y", "invalid label key 'Example.com/x': prefix part a lowercase RFC 1123",
     true},
    {"example..com/x=y", "invalid label key 'example..com/x': prefix part a lowercase RFC 1123",
     true},
    {"/x=y", "unable to parse requirement: invalid label key '/x': prefix part must be non-empty",
     false},
    {"a/=y", "unable to parse requirement: invalid label key 'a/': name part must be non-empty",
     false},
    {"a/b/c=d", "invalid label key 'a/b/c': a qualified name must consist of", true},
    {"gen>x",
     "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an "
     "integer, not 'x'",
     false},
    {"gen<", "for 'Gt', 'Lt' operators, the value must be an integer, not ''", true},
};

static void check_bad(const struct bad_case *c, const char *got, int *failures)
{
    bool ok = c->partial ? strstr(got, c->message) != NULL : strcmp(got, c->message) == 0;
    if (!ok) {
        print_error("'%s': error\n  '%s'\nexpected %s\n  '%s'\n", c->selector, got,
                    c->partial ? "it to contain" : "", c->message);
        (*failures)++;
    }
}

static void test_label_errors(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof bad_labels / sizeof *bad_labels; i++) {
        const struct bad_case *c = &bad_labels[i];
        gp_error err = {0};
        kube_label_selector *s = kube_label_selector_parse(c->selector, &err);
        if (s) {
            print_error("'%s' parsed\n", c->selector);
            kube_label_selector_free(s);
            failures++;
            continue;
        }
        check_bad(c, err.text, &failures);
    }
    assert_int_equal(failures, 0);
}

static void test_label_key_and_value_rules(void **state)
{
    (void)state;
    const char *good_keys[] = {"a",        "app",  "A.b-c_d9",     "nvidia.com/gpu",
                               "k8s.io/a", LONG63, "x.y.z/" LONG63};
    for (size_t i = 0; i < sizeof good_keys / sizeof *good_keys; i++)
        assert_int_equal(kube_label_validate_key(good_keys[i], NULL), 0);
    const char *bad_keys[] = {"",   "-a",      "a-",       "a b",      "a/b/c",   "/a",
                              "a/", "A.com/b", LONG63 "a", "-a.com/b", "a.com-/b"};
    for (size_t i = 0; i < sizeof bad_keys / sizeof *bad_keys; i++) {
        gp_error err = {0};
        assert_int_equal(kube_label_validate_key(bad_keys[i], &err), -1);
        assert_non_null(strstr(err.text, "invalid label key"));
    }
    const char *good_values[] = {"", "a", "1", "v1.17.0", "a_b-c.d", LONG63};
    for (size_t i = 0; i < sizeof good_values / sizeof *good_values; i++)
        assert_int_equal(kube_label_validate_value(good_values[i], NULL), 0);
    const char *bad_values[] = {"-", "a-", "_a", "a b", "a/b", LONG63 "a"};
    for (size_t i = 0; i < sizeof bad_values / sizeof *bad_values; i++) {
        gp_error err = {0};
        assert_int_equal(kube_label_validate_value(bad_values[i], &err), -1);
        assert_non_null(strstr(err.text, "invalid label value"));
    }
}

/* ---- field selectors ---- */

static const char *const pod_fields[] = {
    "metadata.name", "metadata.namespace",       "spec.nodeName",      "spec.schedulerName",
    "status.phase",  "status.nominatedNodeName", "spec.restartPolicy", NULL};

static const char *const event_fields[] = {"metadata.name",
                                           "metadata.namespace",
                                           "involvedObject.kind",
                                           "involvedObject.name",
                                           "involvedObject.namespace",
                                           "involvedObject.uid",
                                           "reason",
                                           "type",
                                           "source",
                                           "reportingComponent",
                                           NULL};

#define POD(name, node, phase)                                                                     \
    "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"" name "\", \"namespace\": \"default\"}, "     \
    "\"spec\": {" node                                                                             \
    "\"schedulerName\": \"default-scheduler\"}, \"status\": {\"phase\": \"" phase "\"}}"

static const char *const pods[] = {
    POD("runs-on-0", "\"nodeName\": \"lab-node-0\", ", "Running"),
    POD("done-on-0", "\"nodeName\": \"lab-node-0\", ", "Succeeded"),
    POD("failed-on-0", "\"nodeName\": \"lab-node-0\", ", "Failed"),
    POD("runs-on-1", "\"nodeName\": \"lab-node-1\", ", "Running"),
    POD("pending", "", "Pending"),
};

struct field_case {
    const char *selector;
    const char *matches; /* one letter per pod: y or n */
};

static const struct field_case pod_cases[] = {
    /* what `kubectl describe node lab-node-0` sends */
    {"spec.nodeName=lab-node-0,status.phase!=Succeeded,status.phase!=Failed", "ynnnn"},
    {"", "yyyyy"},
    {"spec.nodeName=lab-node-0", "yyynn"},
    {"spec.nodeName==lab-node-1", "nnnyn"},
    {"spec.nodeName!=lab-node-0", "nnnyy"},
    {"spec.nodeName=", "nnnny"}, /* a missing field reads as "" */
    {"spec.nodeName!=", "yyyyn"},
    {"status.phase=Pending", "nnnny"},
    {"metadata.name=runs-on-1", "nnnyn"},
    {"metadata.namespace=default,metadata.name!=pending", "yyyyn"},
    {"spec.schedulerName=default-scheduler", "yyyyy"},
    {"status.nominatedNodeName=", "yyyyy"},
    {"spec.restartPolicy=Always", "nnnnn"},
    {",spec.nodeName=lab-node-1,", "nnnyn"}, /* empty terms are skipped */
};

static void test_field_matching_pods(void **state)
{
    (void)state;
    json_t *objects[5];
    for (size_t i = 0; i < 5; i++)
        objects[i] = json(pods[i]);
    int failures = 0;
    for (size_t i = 0; i < sizeof pod_cases / sizeof *pod_cases; i++) {
        const struct field_case *c = &pod_cases[i];
        gp_error err = {0};
        kube_field_selector *s = kube_field_selector_parse(c->selector, pod_fields, &err);
        if (!s) {
            print_error("'%s' did not parse: %s\n", c->selector, err.text);
            failures++;
            continue;
        }
        for (size_t p = 0; p < 5; p++) {
            bool want = c->matches[p] == 'y';
            if (kube_field_selector_matches(s, objects[p]) != want) {
                print_error("'%s' against pod %zu: expected %s\n", c->selector, p,
                            want ? "a match" : "no match");
                failures++;
            }
        }
        kube_field_selector_free(s);
    }
    for (size_t i = 0; i < 5; i++)
        json_decref(objects[i]);
    assert_int_equal(failures, 0);
}

static void test_field_matching_events(void **state)
{
    (void)state;
    json_t *ev = json("{\"kind\": \"Event\", \"metadata\": {\"name\": \"e1\", \"namespace\": "
                      "\"default\"}, \"involvedObject\": {\"kind\": \"Node\", \"name\": "
                      "\"lab-node-0\", \"uid\": \"u-1\"}, \"reason\": \"NodeReady\", \"type\": "
                      "\"Normal\"}");
    struct {
        const char *selector;
        bool match;
    } cases[] = {
        {"involvedObject.kind=Node,involvedObject.name=lab-node-0,involvedObject.namespace=,"
         "involvedObject.uid=u-1",
         true},
        {"involvedObject.namespace=default", false},
        {"reason=NodeReady,type=Normal", true},
        {"type=Warning", false},
        {"source=", true},
        {"reportingComponent!=", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gp_error err = {0};
        kube_field_selector *s = kube_field_selector_parse(cases[i].selector, event_fields, &err);
        if (!s) print_error("'%s': %s\n", cases[i].selector, err.text);
        assert_non_null(s);
        if (kube_field_selector_matches(s, ev) != cases[i].match) {
            print_error("'%s': expected %s\n", cases[i].selector,
                        cases[i].match ? "a match" : "no match");
            fail();
        }
        kube_field_selector_free(s);
    }
    json_decref(ev);
}

/* A scheme's field label conversion (fields.Selector Transform, as for
 * events.k8s.io/v1's regarding.* onto core's involvedObject.*): terms are
 * matched under the converted name, a label the table lacks is refused
 * with the conversion func's "field label not supported: LABEL". */
static void test_field_converted(void **state)
{
    (void)state;
    static const char *const labels[][2] = {
        {"regarding.name", "involvedObject.name"}, {"reason", "reason"}, {NULL, NULL}};
    json_t *ev = json("{\"involvedObject\": {\"name\": \"p\"}, \"reason\": \"Failed\"}");
    gp_error err = {0};
    kube_field_selector *s =
        kube_field_selector_parse_converted("regarding.name=p,reason!=Other", labels, &err);
    assert_non_null(s);
    assert_true(kube_field_selector_matches(s, ev));
    kube_field_selector_free(s);
    s = kube_field_selector_parse_converted("regarding.name=q", labels, &err);
    assert_false(kube_field_selector_matches(s, ev));
    kube_field_selector_free(s);
    s = kube_field_selector_parse_converted("reason=Failed,involvedObject.name=p", labels, &err);
    assert_null(s);
    assert_string_equal(err.text, "field label not supported: involvedObject.name");
    json_decref(ev);
}

/* '\' escapes ',', '=' and '\' in values. */
static void test_field_escapes(void **state)
{
    (void)state;
    json_t *obj = json("{\"metadata\": {\"name\": \"a,b=c\\\\d\"}}"); /* a,b=c\d */
    kube_field_selector *s =
        kube_field_selector_parse("metadata.name=a\\,b\\=c\\\\d", pod_fields, NULL);
    assert_non_null(s);
    assert_true(kube_field_selector_matches(s, obj));
    kube_field_selector_free(s);
    s = kube_field_selector_parse("metadata.name!=a\\,b\\=c\\\\d,metadata.name=x", pod_fields,
                                  NULL);
    assert_non_null(s);
    assert_false(kube_field_selector_matches(s, obj));
    kube_field_selector_free(s);
    json_decref(obj);
}

static const struct bad_case bad_fields[] = {
    {"spec.foo=bar", "field label not supported: spec.foo", false},
    {"status.phase=Running,spec.hostNetwork=true", "field label not supported: spec.hostNetwork",
     false},
    {"metadata.name = x", "field label not supported: metadata.name ", false},
    {"spec.nodeName", "invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'", false},
    {"a=b,spec.nodeName", "invalid selector: 'a=b,spec.nodeName'; can't understand 'spec.nodeName'",
     false},
    {"metadata.name=a=b", "invalid field selector: unescaped character in value: =", false},
    {"metadata.name===b", "invalid field selector: unescaped character in value: =", false},
    {"metadata.name=a\\x", "invalid field selector: invalid escape sequence: \\x", false},
    {"metadata.name=a\\", "invalid field selector: invalid escape sequence: \\", false},
};

static void test_field_errors(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof bad_fields / sizeof *bad_fields; i++) {
        const struct bad_case *c = &bad_fields[i];
        gp_error err = {0};
        kube_field_selector *s = kube_field_selector_parse(c->selector, pod_fields, &err);
        if (s) {
            print_error("'%s' parsed\n", c->selector);
            kube_field_selector_free(s);
            failures++;
            continue;
        }
        check_bad(c, err.text, &failures);
    }
    assert_int_equal(failures, 0);
}

/* With no list of supported fields any path goes; booleans and integers read
 * as their JSON text. */
static void test_field_any_path(void **state)
{
    (void)state;
    json_t *obj = json("{\"spec\": {\"hostNetwork\": true, \"priority\": 0, \"nodeName\": "
                       "\"lab-node-2\", \"list\": [1], \"ratio\": 0.5}}");
    struct {
        const char *selector;
        bool match;
    } cases[] = {
        {"spec.hostNetwork=true", true},
        {"spec.hostNetwork=false", false},
        {"spec.priority=0", true},
        {"spec.list=", true},
        {"spec.ratio=", true},
        {"spec.nodeName.deeper=", true},
        {"spec=", true},
        {"nothing.here=", true},
        {"spec.nodeName=lab-node-2", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gp_error err = {0};
        kube_field_selector *s = kube_field_selector_parse(cases[i].selector, NULL, &err);
        assert_non_null(s);
        if (kube_field_selector_matches(s, obj) != cases[i].match) {
            print_error("'%s': expected %s\n", cases[i].selector,
                        cases[i].match ? "a match" : "no match");
            fail();
        }
        kube_field_selector_free(s);
    }
    char buf[6];
    assert_int_equal(kube_field_text(obj, "spec.nodeName", buf, sizeof buf), 10);
    assert_string_equal(buf, "lab-n");
    assert_int_equal(kube_field_text(obj, "spec.hostNetwork", buf, sizeof buf), 4);
    assert_string_equal(buf, "true");
    assert_int_equal(kube_field_text(obj, "spec.missing", buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(kube_field_text(NULL, "spec", buf, sizeof buf), 0);
    json_decref(obj);

    kube_field_selector *s = kube_field_selector_parse(NULL, NULL, NULL);
    assert_non_null(s);
    assert_true(kube_field_selector_is_empty(s));
    assert_true(kube_field_selector_matches(s, NULL));
    kube_field_selector_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_matching),
        cmocka_unit_test(test_label_empty),
        cmocka_unit_test(test_label_errors),
        cmocka_unit_test(test_label_key_and_value_rules),
        cmocka_unit_test(test_field_matching_pods),
        cmocka_unit_test(test_field_matching_events),
        cmocka_unit_test(test_field_escapes),
        cmocka_unit_test(test_field_converted),
        cmocka_unit_test(test_field_errors),
        cmocka_unit_test(test_field_any_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
