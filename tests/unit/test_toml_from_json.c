/* toml_emit_json: a JSON object written as TOML reads back (toml_parse then
 * toml_write_json, TOML_JSON_PLAIN) as the same JSON, and what has no TOML
 * form is refused with the key that holds it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml/toml.h"
#include "toml/toml_json.h"

/* JSON -> TOML text (caller frees), NULL with err. */
static char *emit(const json_t *doc, gp_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    int rc = toml_emit_json(doc, out, err);
    fclose(out);
    if (rc == 0) return text;
    free(text);
    return NULL;
}

/* TOML text -> JSON, as the toolkit's model reads a file back. */
static json_t *read_back(const char *text)
{
    gp_error err = {0};
    toml_doc *doc = toml_parse(text, strlen(text), "emitted.toml", &err);
    if (!doc) fail_msg("emitted TOML does not parse: %s\n---\n%s", err.text, text);
    toml_value v = {.type = TOML_TABLE, .u.table = (toml_table *)toml_root(doc)};
    char *json = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&json, &len);
    assert_int_equal(toml_write_json(&v, TOML_JSON_PLAIN, out), 0);
    fclose(out);
    toml_free(doc);
    json_t *back = json_loads(json, 0, NULL);
    free(json);
    assert_non_null(back);
    return back;
}

static void round_trips(const char *json)
{
    json_t *doc = json_loads(json, 0, NULL);
    assert_non_null(doc);
    gp_error err = {0};
    char *text = emit(doc, &err);
    if (!text) fail_msg("refused %s: %s", json, err.text);
    json_t *back = read_back(text);
    if (!json_equal(doc, back)) {
        char *got = json_dumps(back, JSON_SORT_KEYS);
        fail_msg("%s\nbecame\n%s\nthrough\n%s", json, got, text);
    }
    json_decref(back);
    json_decref(doc);
    free(text);
}

/* What the toolkit writes: a containerd config with quoted dotted plugin
 * IDs, nested runtime tables, booleans, arrays and an empty table. */
static void test_containerd_config_round_trips(void **state)
{
    (void)state;
    round_trips("{\"version\": 2, \"imports\": [\"/etc/containerd/conf.d/*.toml\"],"
                " \"plugins\": {\"io.containerd.grpc.v1.cri\": {\"sandbox_image\": \"pause:3.9\","
                " \"containerd\": {\"default_runtime_name\": \"nvidia\", \"runtimes\": {"
                "\"runc\": {\"runtime_type\": \"io.containerd.runc.v2\","
                " \"options\": {\"SystemdCgroup\": true}},"
                " \"nvidia\": {\"runtime_type\": \"io.containerd.runc.v2\", \"options\": "
                "{\"BinaryName\": \"/usr/local/nvidia/toolkit/nvidia-container-runtime\"}}}}}},"
                " \"proxy_plugins\": {}}");
}

static void test_odd_keys_floats_and_table_arrays_round_trip(void **state)
{
    (void)state;
    round_trips("{\"a b\": \"x\\\"y\\n\", \"\": 1, \"f\": 1.5, \"neg\": -3,"
                " \"list\": [[1, 2], [\"a\"]], \"inline\": [{\"k\": 1}, {\"k\": 2}],"
                " \"t\": {\"u.v\": {\"w\": false}}}");
}

static void test_what_toml_cannot_hold_is_refused_by_key(void **state)
{
    (void)state;
    json_t *doc = json_loads("{\"plugins\": {\"cri\": {\"x\": null}}}", 0, NULL);
    gp_error err = {0};
    assert_null(emit(doc, &err));
    assert_non_null(strstr(err.text, "plugins.cri.x"));
    json_decref(doc);
    doc = json_loads("{\"mixed\": [1, {\"a\": 1}]}", 0, NULL);
    memset(&err, 0, sizeof err);
    assert_null(emit(doc, &err));
    assert_non_null(strstr(err.text, "mixed"));
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_containerd_config_round_trips),
        cmocka_unit_test(test_odd_keys_floats_and_table_arrays_round_trip),
        cmocka_unit_test(test_what_toml_cannot_hold_is_refused_by_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
