/* The streaming list parser (client/list_stream.c): items as jansson reads
 * them, whatever the chunking; the list's continue token and item types;
 * stopping; errors; pruning that changes no analyzer's report; and the
 * API server's stored text read as json_loadb reads it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/nodes.h"
#include "analyze/rollout.h"
#include "analyze/why_pending.h"
#include "client/list_stream.h"
#include "json_assert.h"

static int collect(json_t *item, void *ud)
{
    return json_array_append(ud, item);
}

/* Feeds `text` in chunks of `chunk` bytes; returns the items. */
static json_t *parse_in_chunks(const char *text, size_t chunk, const kc_fields *keep, char **cont)
{
    json_t *items = json_array();
    kc_list_parser *p = kc_list_parser_new(keep, collect, items);
    assert_non_null(p);
    gp_error err = {0};
    size_t len = strlen(text);
    for (size_t at = 0; at < len; at += chunk) {
        size_t n = len - at < chunk ? len - at : chunk;
        assert_int_equal(kc_list_parser_feed(p, text + at, n, &err), 0);
    }
    assert_int_equal(kc_list_parser_finish(p, cont, &err), 0);
    assert_true(kc_list_parser_saw_items(p));
    kc_list_parser_free(p);
    return items;
}

static const char *LIST =
    "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"9\","
    "\"continue\":\"9:ns/b\"},\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\","
    "\"annotations\":{\"x\":\"y\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"env\":[{\"name\":"
    "\"E\",\"value\":\"\\u00e9\\n\"}],\"resources\":{\"requests\":{\"cpu\":\"1\"}}},{\"name\":"
    "\"d\"}],\"priority\":-5,\"x\":[1.5e3,12345678901234567890,true,null,[],{}]}},"
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\"}}]}";

/* Whole items are what jansson makes of them, with the list's item type,
 * for every chunk size (a token split anywhere). */
static void test_whole_items_any_chunking(void **state)
{
    (void)state;
    /* jansson refuses an integer beyond int64; the parser reads it as a
     * real (as Go's encoding/json does): the expectation spells it so. */
    const char *big = strstr(LIST, "12345678901234567890");
    char text[2048];
    snprintf(text, sizeof text, "%.*s1.2345678901234567e19%s", (int)(big - LIST), LIST,
             big + strlen("12345678901234567890"));
    json_t *want = json_loads(text, 0, NULL);
    assert_non_null(want);
    json_t *want_items = json_object_get(want, "items");
    json_object_set_new(json_array_get(want_items, 0), "kind", json_string("Pod"));
    json_object_set_new(json_array_get(want_items, 0), "apiVersion", json_string("v1"));
    json_object_set_new(json_array_get(want_items, 1), "apiVersion", json_string("v1"));
    for (size_t chunk = 1; chunk <= strlen(LIST); chunk += chunk < 16 ? 1 : 37) {
        char *cont = NULL;
        json_t *items = parse_in_chunks(LIST, chunk, NULL, &cont);
        assert_json_equal(items, want_items);
        assert_string_equal(cont, "9:ns/b");
        free(cont);
        json_decref(items);
    }
    json_decref(want);
}

/* A path keeps its subtree; list elements on the way stay, empty if need
 * be, so counts and positions hold. */
static void test_pruning(void **state)
{
    (void)state;
    const char *paths[] = {"metadata.name", "spec.containers.resources", NULL};
    kc_fields *keep = kc_fields_new(paths);
    char *cont = NULL;
    json_t *items = parse_in_chunks(LIST, 7, keep, &cont);
    json_t *want = sq_load("[{'metadata':{'name':'a'},'spec':{'containers':[{'resources':{"
                           "'requests':{'cpu':'1'}}},{}]},'kind':'Pod','apiVersion':'v1'},"
                           "{'metadata':{'name':'b'},'kind':'Pod','apiVersion':'v1'}]");
    assert_json_equal(items, want);
    free(cont);
    json_decref(items);
    json_decref(want);
    kc_fields_free(keep);
}

static int stop_after_one(json_t *item, void *ud)
{
    (void)item;
    return ++*(int *)ud >= 1;
}

static void test_stop_and_errors(void **state)
{
    (void)state;
    int seen = 0;
    kc_list_parser *p = kc_list_parser_new(NULL, stop_after_one, &seen);
    gp_error err = {0};
    assert_int_equal(kc_list_parser_feed(p, LIST, strlen(LIST), &err), 1);
    assert_int_equal(seen, 1);
    kc_list_parser_free(p);

    p = kc_list_parser_new(NULL, collect, NULL);
    const char *bad = "{\"items\":[{\"a\":1,}]}";
    assert_int_equal(kc_list_parser_feed(p, bad, strlen(bad), &err), -1);
    assert_non_null(strstr(err.text, "not JSON"));
    kc_list_parser_free(p);

    /* Cut short: the end says so. */
    json_t *items = json_array();
    p = kc_list_parser_new(NULL, collect, items);
    assert_int_equal(kc_list_parser_feed(p, LIST, 40, &err), 0);
    char *cont = NULL;
    assert_int_equal(kc_list_parser_finish(p, &cont, &err), -1);
    assert_null(cont);
    kc_list_parser_free(p);
    json_decref(items);

    /* Not a list: no items array. */
    p = kc_list_parser_new(NULL, collect, NULL);
    const char *status = "{\"kind\":\"Status\",\"code\":404}";
    assert_int_equal(kc_list_parser_feed(p, status, strlen(status), &err), 0);
    assert_int_equal(kc_list_parser_finish(p, &cont, &err), 0);
    assert_false(kc_list_parser_saw_items(p));
    kc_list_parser_free(p);
}

/* ---- pruning changes no report ---- */

static json_t *load_items(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/analyze/%s", TEST_DATA_DIR, name);
    json_t *list = json_load_file(path, 0, NULL);
    assert_non_null(list);
    json_t *items = json_incref(json_object_get(list, "items"));
    json_decref(list);
    return items;
}

static const char *kind_of(const json_t *o)
{
    return json_string_value(json_object_get(o, "kind"));
}

/* Each pod pruned to an_pod_fields, everything else as it was. */
static json_t *pruned(const json_t *items)
{
    kc_fields *keep = kc_fields_new(an_pod_fields);
    json_t *out = json_array();
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        if (strcmp(kind_of(it), "Pod") == 0) {
            json_t *p = kc_fields_prune(keep, it);
            assert_non_null(p);
            assert_true(json_object_size(p) <= json_object_size(it));
            json_array_append_new(out, p);
        } else {
            json_array_append(out, it);
        }
    }
    kc_fields_free(keep);
    return out;
}

static json_t *nodes_report(const json_t *items)
{
    gp_error err;
    an_nodes *b = an_nodes_new(NULL, &err);
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        if (strcmp(kind_of(it), "Node") == 0) an_nodes_add_node(b, it);
        if (strcmp(kind_of(it), "Pod") == 0) an_nodes_add_pod(b, it);
    }
    json_t *r = an_nodes_finish(b, &err);
    an_nodes_free(b);
    return r;
}

static json_t *why_report(const json_t *items, const json_t *pod)
{
    gp_error err;
    an_why_pending *b = an_why_pending_new(pod, &err);
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        const char *k = kind_of(it);
        if (strcmp(k, "Node") == 0) an_why_pending_add_node(b, it);
        if (strcmp(k, "Pod") == 0) an_why_pending_add_pod(b, it);
        if (strcmp(k, "Event") == 0) an_why_pending_add_event(b, it);
        if (strcmp(k, "RuntimeClass") == 0) an_why_pending_add_runtimeclass(b, it);
    }
    json_t *r = an_why_pending_finish(b, &err);
    an_why_pending_free(b);
    return r;
}

static json_t *rollout_report(const json_t *items, const json_t *ds)
{
    gp_error err;
    an_rollout *b = an_rollout_new(ds, &err);
    an_rollout_set_now(b, 1900000000);
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        const char *k = kind_of(it);
        if (strcmp(k, "Node") == 0) an_rollout_add_node(b, it);
        if (strcmp(k, "Pod") == 0) an_rollout_add_pod(b, it);
        if (strcmp(k, "Event") == 0) an_rollout_add_event(b, it);
        if (strcmp(k, "ControllerRevision") == 0) an_rollout_add_revision(b, it);
    }
    json_t *r = an_rollout_finish(b, &err);
    an_rollout_free(b);
    return r;
}

/* Every pod of every recorded snapshot through every analyzer that takes
 * it: the reports from pruned pods equal those from whole pods. */
static void test_pruned_pods_same_reports(void **state)
{
    (void)state;
    const char *files[] = {"lab-step5.json", "lab-step6.json", "lab-step8.json",
                           "incident-runtime-missing.json"};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        json_t *whole = load_items(files[f]), *small = pruned(whole);
        json_t *a = nodes_report(whole), *b = nodes_report(small);
        assert_json_equal(a, b);
        json_decref(a);
        json_decref(b);
        size_t i;
        json_t *it;
        size_t whys = 0, rollouts = 0;
        json_array_foreach(whole, i, it)
        {
            if (strcmp(kind_of(it), "Pod") == 0) {
                /* the pod itself comes whole: the command GETs it */
                a = why_report(whole, it);
                b = why_report(small, it);
                assert_json_equal(a, b);
                json_decref(a);
                json_decref(b);
                whys++;
            }
            if (strcmp(kind_of(it), "DaemonSet") == 0) {
                a = rollout_report(whole, it);
                b = rollout_report(small, it);
                assert_json_equal(a, b);
                json_decref(a);
                json_decref(b);
                rollouts++;
            }
        }
        assert_true(whys > 0);
        if (strstr(files[f], "step8")) assert_true(rollouts > 0);
        json_decref(whole);
        json_decref(small);
    }
}

/* What the API server stores is json_dumps' text: read by the builder it
 * is what json_loadb reads, value for value and type for type (written
 * again, the same bytes), and a NUL byte is refused as json_loadb refuses
 * it. */
static void expect_read_as_jansson(const json_t *obj, size_t flags)
{
    char *text = json_dumps(obj, flags);
    assert_non_null(text);
    json_t *fast = kc_object_parse_dumped(text, strlen(text));
    json_t *slow = json_loadb(text, strlen(text), 0, NULL);
    assert_non_null(fast);
    assert_non_null(slow);
    char *again = json_dumps(fast, flags), *jansson = json_dumps(slow, flags);
    assert_string_equal(again, jansson);
    assert_string_equal(again, text);
    free(again);
    free(jansson);
    json_decref(fast);
    json_decref(slow);
    free(text);
}

static void test_dumped_text_reads_as_jansson(void **state)
{
    (void)state;
    json_t *obj = json_pack(
        "{s:s, s:{s:s, s:s, s:s, s:{s:s, s:s}}, s:{s:I, s:I, s:I, s:i, s:f, s:f, s:f, s:f, s:f, "
        "s:[[], {}, [[i, [i]], {s:n}], b, b, n]}}",
        "kind", "Pod", "metadata", "name", "caf\xc3\xa9-\xe6\x97\xa5\xf0\x9f\x98\x80", "namespace",
        "tab\there \"quoted\" back\\slash / \x01\x1f\x7f", "", "empty key", "annotations", "a\nb",
        "\\n as text", "k\\", "x", "spec", "max", (json_int_t)INT64_MAX, "min",
        (json_int_t)INT64_MIN, "big", (json_int_t)1 << 53, "zero", 0, "half", 0.5, "negative zero",
        -0.0, "tiny", 1e-300, "exponent only", 1e22, "huge", 1.7976931348623157e308, "nested", 1, 2,
        "none", 1, 0);
    assert_non_null(obj);
    expect_read_as_jansson(obj, JSON_COMPACT);
    expect_read_as_jansson(obj, JSON_INDENT(2));
    json_decref(obj);

    /* a backslash and "u0000" is no NUL byte */
    json_t *lookalike = json_pack("{s:s}", "data", "\\u0000");
    expect_read_as_jansson(lookalike, JSON_COMPACT);
    json_decref(lookalike);

    json_t *nul = json_pack("{s:s%}", "data", "a\0b", (size_t)3);
    char *text = json_dumps(nul, JSON_COMPACT);
    assert_non_null(strstr(text, "\\u0000"));
    assert_null(json_loadb(text, strlen(text), 0, NULL));
    assert_null(kc_object_parse_dumped(text, strlen(text)));
    free(text);
    json_decref(nul);
}

/* What json_loadb reads of text: its compact text (members in order), or
 * NULL; *dup: whether JSON_REJECT_DUPLICATES refuses it for a duplicate. */
static char *jansson_reading(const char *text, bool *dup)
{
    json_error_t e;
    json_t *strict = json_loadb(text, strlen(text), JSON_REJECT_DUPLICATES, &e);
    *dup = !strict && strstr(e.text, "duplicate");
    json_decref(strict);
    json_t *v = json_loadb(text, strlen(text), 0, NULL);
    char *out = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    return out;
}

/* kc_object_parse_exact reads text as json_loadb does, or declines. */
static void expect_exact(const char *text, bool declines)
{
    bool dup = true, want_dup;
    json_t *got = kc_object_parse_exact(text, strlen(text), &dup);
    char *want = jansson_reading(text, &want_dup);
    if (declines) {
        if (got) print_error("read, not declined: %s\n", text);
        assert_null(got);
    } else {
        if (!got) print_error("declined: %s\n", text);
        assert_non_null(got);
        char *g = json_dumps(got, JSON_COMPACT);
        assert_non_null(want);
        assert_string_equal(g, want);
        assert_int_equal(dup, want_dup);
        free(g);
    }
    json_decref(got);
    free(want);
}

static void test_exact_reads_as_jansson(void **state)
{
    (void)state;
    /* read, the same value as jansson's */
    expect_exact("{}", false);
    expect_exact(" \t\r\n{\"a\":1} \n", false);
    expect_exact("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"b\"}},"
                 "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"args\":[]}]}}",
                 false);
    expect_exact("{\"n\":null,\"t\":true,\"f\":false,\"i\":-0,\"m\":-9223372036854775808,"
                 "\"x\":9223372036854775807,\"a\":[1,[2,{\"b\":[]}]]}",
                 false);
    expect_exact("{\"s\":\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t\"}", false);
    expect_exact("{\"a\":1,\"b\":2,\"a\":3}", false); /* the last kept, in the first's place */
    expect_exact("{\"o\":{\"k\":1,\"k\":{}},\"p\":[{\"k\":1,\"k\":2}]}", false);
    expect_exact("{\"\":\"empty key\"}", false);
    /* declined: what only jansson may judge, and what is no object */
    const char *const declined[] = {
        "",
        "   ",
        "[]",
        "[{}]",
        "5",
        "\"s\"",
        "null",
        "{} {}",
        "{}]",
        "{},{}",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{'a':1}",
        "{\"a\":01}",
        "{\"a\":1.5}",
        "{\"a\":1e3}",
        "{\"a\":9223372036854775808}",
        "{\"a\":-9223372036854775809}",
        "{\"a\":\"\\u0041\"}",
        "{\"a\":\"\\ud800\"}",
        "{\"a\":\"\\u0000\"}",
        "{\"a\":\"caf\xc3\xa9\"}",
        "{\"a\":\"\xc0\x80\"}",
        "{\"a\":\"\xed\xa0\x80\"}",
        "\xef\xbb\xbf{}",
        "{\f\"a\":1}",
        "{\v\"a\":1}",
        "{\"a\":\"raw\ttab\"}",
        "{\"a\":1} // comment",
        "{/* c */}",
        "{\"a\":tru}",
        "{\"a\":[1,2}",
        "{} \"",
        "{\"kd\":\"x]}];\"}\"",
        "{} \"abc}",
        "{}x",
        "{\"a\":\"}\"} ]",
    };
    for (size_t i = 0; i < sizeof declined / sizeof declined[0]; i++)
        expect_exact(declined[i], true);
    /* deeper than jansson reads: declined; a little less: read */
    for (int depth = 1990; depth <= 2100; depth += 110) {
        char *deep = malloc((size_t)depth * 6 + 16);
        assert_non_null(deep);
        char *at = deep;
        for (int i = 0; i < depth; i++)
            at += sprintf(at, "{\"a\":");
        at += sprintf(at, "1");
        for (int i = 0; i < depth; i++)
            *at++ = '}';
        *at = '\0';
        expect_exact(deep, depth > 2000);
        free(deep);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_items_any_chunking),
        cmocka_unit_test(test_pruning),
        cmocka_unit_test(test_stop_and_errors),
        cmocka_unit_test(test_pruned_pods_same_reports),
        cmocka_unit_test(test_dumped_text_reads_as_jansson),
        cmocka_unit_test(test_exact_reads_as_jansson),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
