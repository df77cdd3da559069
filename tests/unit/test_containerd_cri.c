/* What a running containerd says over CRI, decoded (containerd/cri.h), and
 * the handler check built on it (containerd/handler_check.h).
 *
 * The answers are the real ones recorded from containerd 1.6.20 and 2.1.5
 * (../shared/containerd-cases/cri-status/, written by a grpcio client with
 * stubs generated from the CRI api.proto): this file encodes them back to
 * the wire by hand, with the field numbers of k8s.io/cri-api
 * pkg/apis/runtime/v1/api.proto (StatusResponse: status 1, info 2,
 * runtime_handlers 3; RuntimeStatus: conditions 1; RuntimeCondition: type 1,
 * status 2, reason 3, message 4; RuntimeHandler: name 1, features 2;
 * VersionResponse: version 1, runtime_name 2, runtime_version 3,
 * runtime_api_version 4) and of containerd's introspection.proto (Plugin:
 * type 1, id 2, init_err 7; google.rpc.Status: code 1, message 2), so a
 * wrong number in the decoder's schemas fails here. That the bytes of a
 * real daemon decode to the same recordings is tests/cli/
 * containerd_daemon.bats's (Debian's 1.6.20 daemon). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "containerd/cri.h"
#include "containerd/handler_check.h"
#include "util/file.h"

#define CRI_STATUS TOML_TEST_DIR "/../containerd-cases/cri-status"

/* ---- a hand encoder, independent of the library's ---- */

typedef struct wire {
    unsigned char b[65536];
    size_t n;
} wire;

static void varint(wire *w, uint64_t v)
{
    do {
        assert_true(w->n < sizeof w->b);
        w->b[w->n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

static void field_bytes(wire *w, unsigned num, const void *bytes, size_t len)
{
    varint(w, (uint64_t)num << 3 | 2);
    varint(w, len);
    assert_true(w->n + len <= sizeof w->b);
    memcpy(w->b + w->n, bytes, len);
    w->n += len;
}

static void field_string(wire *w, unsigned num, const char *s)
{
    field_bytes(w, num, s, strlen(s));
}

static void field_message(wire *w, unsigned num, const wire *m)
{
    field_bytes(w, num, m->b, m->n);
}

static void field_bool(wire *w, unsigned num, bool v)
{
    varint(w, (uint64_t)num << 3 | 0);
    varint(w, v);
}

/* ---- the recordings, back to the wire ---- */

static json_t *recording(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", CRI_STATUS, name);
    json_error_t jerr;
    json_t *v = json_load_file(path, 0, &jerr);
    if (!v) fail_msg("%s: %s", path, jerr.text);
    return v;
}

/* The StatusResponse the daemon sent for a recording: its conditions, its
 * runtime_handlers and its info.config (the other info keys are not
 * recorded but for their names; they hold "{}" here). */
static void encode_status(const json_t *rec, wire *out)
{
    memset(out, 0, sizeof *out);
    wire status = {.n = 0};
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(rec, "conditions"), i, c)
    {
        wire cond = {.n = 0};
        field_string(&cond, 1, json_string_value(json_object_get(c, "type")));
        if (json_is_true(json_object_get(c, "status"))) field_bool(&cond, 2, true);
        const char *reason = json_string_value(json_object_get(c, "reason"));
        const char *message = json_string_value(json_object_get(c, "message"));
        if (*reason) field_string(&cond, 3, reason);
        if (*message) field_string(&cond, 4, message);
        field_message(&status, 1, &cond);
    }
    field_message(out, 1, &status);
    char *config = json_dumps(json_object_get(rec, "config_raw"), JSON_COMPACT);
    json_t *key;
    json_array_foreach(json_object_get(rec, "info_keys"), i, key)
    {
        wire entry = {.n = 0};
        const char *k = json_string_value(key);
        field_string(&entry, 1, k);
        field_string(&entry, 2, strcmp(k, "config") == 0 ? config : "{}");
        field_message(out, 2, &entry);
    }
    free(config);
    json_t *h;
    json_array_foreach(json_object_get(rec, "runtime_handlers"), i, h)
    {
        wire handler = {.n = 0}, features = {.n = 0};
        const char *name = json_string_value(json_object_get(h, "name"));
        if (*name) field_string(&handler, 1, name);
        field_message(&handler, 2, &features);
        field_message(out, 3, &handler);
    }
}

static void decode_recording(const char *name, cd_cri_status *s)
{
    json_t *rec = recording(name);
    wire w;
    encode_status(rec, &w);
    wire v = {.n = 0};
    json_t *version = json_object_get(rec, "version");
    field_string(&v, 1, "v1");
    field_string(&v, 2, json_string_value(json_object_get(version, "runtime_name")));
    field_string(&v, 3, json_string_value(json_object_get(version, "runtime_version")));
    field_string(&v, 4, json_string_value(json_object_get(version, "runtime_api_version")));
    memset(s, 0, sizeof *s);
    gp_error err = {0};
    if (cd_cri_version_decode(v.b, v.n, s, &err) != 0) fail_msg("%s", err.text);
    if (cd_cri_status_decode(w.b, w.n, s, &err) != 0) fail_msg("%s: %s", name, err.text);
    json_decref(rec);
}

static void assert_json_equal_sq(const json_t *actual, const char *squoted)
{
    json_t *expected = sq_load(squoted);
    assert_json_equal(actual, expected);
    json_decref(expected);
}

static void assert_names(const cd_names *n, const char *expected)
{
    char got[512] = "";
    for (size_t i = 0; i < n->n; i++) {
        if (i) strcat(got, ",");
        strcat(got, n->items[i]);
    }
    assert_string_equal(got, expected);
}

/* ---- Status ---- */

static void test_status_1_6_20(void **state)
{
    (void)state;
    cd_cri_status s;
    decode_recording("status-1.6.20-none.json", &s);
    assert_string_equal(s.runtime_version, "1.6.20~ds1");
    assert_string_equal(s.runtime_name, "containerd");
    assert_true(s.runtime_ready);
    /* 1.6 reports no handlers: the loaded runtimes are the config's. */
    assert_false(s.handlers_reported);
    assert_names(&s.runtimes, "runc");
    assert_string_equal(s.default_runtime, "runc");
    assert_true(cd_cri_status_has_handler(&s, "runc"));
    assert_false(cd_cri_status_has_handler(&s, "nvidia"));
    /* The conditions as decoded, in order, with NetworkReady's false kept
     * absent (proto3 does not send it) and its reason. */
    json_t *conds = json_object_get(json_object_get(s.answer, "status"), "conditions");
    assert_int_equal(json_array_size(conds), 2);
    assert_json_equal_sq(json_array_get(conds, 1),
                         "{'type': 'NetworkReady', 'reason': 'NetworkPluginNotReady', 'message': "
                         "'Network plugin returns error: cni plugin not initialized'}");
    cd_cri_status_free(&s);
}

static void test_status_1_7_29(void **state)
{
    (void)state;
    cd_cri_status s;
    decode_recording("status-1.7.29-none.json", &s);
    assert_string_equal(s.runtime_version, "1.7.29+unknown");
    assert_false(s.handlers_reported);
    assert_names(&s.runtimes, "runc");
    assert_false(cd_cri_status_has_handler(&s, "nvidia"));
    cd_cri_status_free(&s);
}

static void test_status_2_1_5_handlers(void **state)
{
    (void)state;
    cd_cri_status s;
    decode_recording("status-2.1.5-bare.json", &s);
    assert_true(s.handlers_reported);
    /* "" is the default runtime's entry, not a handler a RuntimeClass names. */
    assert_names(&s.handlers, "nvidia,runc");
    assert_names(&s.runtimes, "nvidia,runc");
    assert_true(cd_cri_status_has_handler(&s, "nvidia"));
    assert_false(cd_cri_status_has_handler(&s, "nvidia-cdi"));
    json_t *handlers = json_object_get(s.answer, "runtime_handlers");
    assert_int_equal(json_array_size(handlers), 3);
    assert_json_equal_sq(json_array_get(handlers, 0), "{'name': ''}");
    cd_cri_status_free(&s);
}

/* Where a daemon reports handlers, they are what loads, not the config. */
static void test_handlers_win_over_config(void **state)
{
    (void)state;
    wire w = {.n = 0}, entry = {.n = 0}, handler = {.n = 0};
    field_string(&entry, 1, "config");
    field_string(&entry, 2,
                 "{\"containerd\": {\"defaultRuntimeName\": \"runc\", \"runtimes\": "
                 "{\"runc\": {}, \"nvidia\": {}}}}");
    field_message(&w, 2, &entry);
    field_string(&handler, 1, "runc");
    field_message(&w, 3, &handler);
    cd_cri_status s = {0};
    gp_error err = {0};
    assert_int_equal(cd_cri_status_decode(w.b, w.n, &s, &err), 0);
    assert_false(s.runtime_ready); /* no condition at all */
    assert_false(cd_cri_status_has_handler(&s, "nvidia"));
    assert_true(cd_cri_status_has_handler(&s, "runc"));
    cd_cri_status_free(&s);
}

static void test_status_bad(void **state)
{
    (void)state;
    cd_cri_status s = {0};
    gp_error err = {0};
    /* Field 2 (info) says 9 bytes, 1 follows. */
    const unsigned char truncated[] = {0x12, 0x09, 0x0a};
    assert_int_equal(cd_cri_status_decode(truncated, sizeof truncated, &s, &err), -1);
    assert_non_null(strstr(err.text, "runs past the end"));
    cd_cri_status_free(&s);
    wire w = {.n = 0}, entry = {.n = 0};
    field_string(&entry, 1, "config");
    field_string(&entry, 2, "{not json");
    field_message(&w, 2, &entry);
    memset(&s, 0, sizeof s);
    assert_int_equal(cd_cri_status_decode(w.b, w.n, &s, &err), -1);
    assert_non_null(strstr(err.text, "info.config is not JSON"));
    cd_cri_status_free(&s);
    /* An empty answer is a valid, empty Status: nothing loaded. */
    memset(&s, 0, sizeof s);
    assert_int_equal(cd_cri_status_decode("", 0, &s, &err), 0);
    assert_int_equal(s.runtimes.n, 0);
    cd_cri_status_free(&s);
}

/* ---- Introspection ---- */

static void plugin(wire *out, const char *type, const char *id, const char *init_error)
{
    wire p = {.n = 0};
    field_string(&p, 1, type);
    field_string(&p, 2, id);
    if (init_error) {
        wire st = {.n = 0};
        varint(&st, 1 << 3 | 0);
        varint(&st, 2); /* UNKNOWN, as ctr shows "Code: Unknown" */
        field_string(&st, 2, init_error);
        field_message(&p, 7, &st);
    }
    field_message(out, 1, &p);
}

static void test_plugins_1x_failed(void **state)
{
    (void)state;
    /* What 1.6.20 lists for the lab's files (containerd-merge.md, "Daemon runs"). */
    const char *msg = "invalid plugin config: no corresponding runtime configured in "
                      "`containerd.runtimes` for `containerd` `default_runtime_name = \"runc\"";
    wire w = {.n = 0};
    plugin(&w, "io.containerd.grpc.v1", "cri", msg);
    cd_cri_plugin_error p;
    gp_error err = {0};
    assert_int_equal(cd_cri_plugins_decode(w.b, w.n, &p, &err), 0);
    assert_true(p.found);
    assert_true(p.failed);
    assert_string_equal(p.plugin, "io.containerd.grpc.v1.cri");
    assert_string_equal(p.message, msg);
}

/* 2.x: the runtime plugin's failure is the cause (the gRPC service only
 * depends on it); it is reported whatever the order of the list. */
static void test_plugins_2x_runtime_first(void **state)
{
    (void)state;
    wire w = {.n = 0};
    plugin(&w, "io.containerd.grpc.v1", "cri", "dependency failed");
    plugin(&w, "io.containerd.cri.v1", "runtime", "invalid plugin config: x");
    cd_cri_plugin_error p;
    gp_error err = {0};
    assert_int_equal(cd_cri_plugins_decode(w.b, w.n, &p, &err), 0);
    assert_string_equal(p.plugin, "io.containerd.cri.v1.runtime");
    assert_string_equal(p.message, "invalid plugin config: x");
    /* Both fine: found, not failed. */
    wire ok = {.n = 0};
    plugin(&ok, "io.containerd.cri.v1", "runtime", NULL);
    plugin(&ok, "io.containerd.grpc.v1", "cri", NULL);
    assert_int_equal(cd_cri_plugins_decode(ok.b, ok.n, &p, &err), 0);
    assert_true(p.found);
    assert_false(p.failed);
    /* Only other plugins: not found (CRI disabled). */
    wire none = {.n = 0};
    plugin(&none, "io.containerd.grpc.v1", "version", NULL);
    assert_int_equal(cd_cri_plugins_decode(none.b, none.n, &p, &err), 0);
    assert_false(p.found);
}

/* ---- the node ---- */

static json_t *node_fixture(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/containerd/%s", TEST_DATA_DIR, name);
    json_error_t jerr;
    json_t *v = json_load_file(path, 0, &jerr);
    if (!v) fail_msg("%s: %s", path, jerr.text);
    return v;
}

static void test_node_2x_reports(void **state)
{
    (void)state;
    json_t *node = node_fixture("node-containerd-2.1.5.json");
    cd_check_result r = {0};
    r.verdict = CD_HANDLER_UNKNOWN;
    cd_check_node(node, "nvidia", &r);
    assert_int_equal(r.node, CD_NODE_REPORTS);
    assert_int_equal(r.verdict, CD_HANDLER_LOADED);
    assert_int_equal(r.source, CD_SOURCE_NODE);
    assert_string_equal(r.node_name, "gpu-node-2");
    assert_names(&r.node_handlers, "nvidia,runc");
    cd_check_result_free(&r);
    /* Case 5's handler: the node lists it not. */
    memset(&r, 0, sizeof r);
    r.verdict = CD_HANDLER_UNKNOWN;
    cd_check_node(node, "nvidia-cdi", &r);
    assert_int_equal(r.verdict, CD_HANDLER_NOT_LOADED);
    cd_check_request req = {.handler = "nvidia-cdi", .source = CD_SOURCE_NODE};
    json_t *j = cd_check_json(&req, &r);
    assert_string_equal(json_string_value(json_object_get(j, "schema")), CD_CHECK_SCHEMA);
    assert_string_equal(json_string_value(json_object_get(j, "verdict")), "not-loaded");
    assert_int_equal(json_integer_value(json_object_get(j, "exit")), 1);
    assert_null(json_object_get(j, "error"));
    json_decref(j);
    cd_check_result_free(&r);
    json_decref(node);
}

/* 1.6 and 1.7 never fill runtimeHandlers: absent proves nothing. */
static void test_node_1x_proves_nothing(void **state)
{
    (void)state;
    json_t *node = node_fixture("node-containerd-1.6.20.json");
    cd_check_result r = {0};
    r.verdict = CD_HANDLER_UNKNOWN;
    cd_check_node(node, "nvidia", &r);
    assert_int_equal(r.node, CD_NODE_SILENT);
    assert_true(r.node_runtime_before_2);
    assert_int_equal(r.verdict, CD_HANDLER_UNKNOWN);
    assert_string_equal(r.node_runtime, "containerd://1.6.20");
    cd_check_request req = {.handler = "nvidia", .source = CD_SOURCE_NODE};
    json_t *j = cd_check_json(&req, &r);
    json_t *e = json_object_get(j, "error");
    assert_string_equal(json_string_value(json_object_get(e, "code")), "node-reports-no-handlers");
    assert_string_equal(json_string_value(json_object_get(e, "where")), "gpu-node-1");
    assert_non_null(strstr(json_string_value(json_object_get(e, "message")),
                           "containerd 1.x never reports them"));
    json_decref(j);
    cd_check_result_free(&r);
    json_decref(node);
}

/* ---- the check ---- */

/* The daemon alone, at a socket that does not exist: cannot tell, and the
 * JSON error names the socket. */
static void test_check_daemon_unreachable(void **state)
{
    (void)state;
    cd_check_request req = {.handler = "nvidia",
                            .source = CD_SOURCE_DAEMON,
                            .address = "unix:///nonexistent/gpuop-test.sock"};
    cd_check_result r;
    cd_handler_check(&req, &r);
    assert_int_equal(r.verdict, CD_HANDLER_UNKNOWN);
    assert_int_equal(r.daemon, CD_DAEMON_UNREACHABLE);
    assert_false(r.dump_ran);
    assert_string_equal(r.address, "/nonexistent/gpuop-test.sock");
    json_t *j = cd_check_json(&req, &r);
    json_t *e = json_object_get(j, "error");
    assert_string_equal(json_string_value(json_object_get(e, "code")), "daemon-unreachable");
    assert_string_equal(json_string_value(json_object_get(e, "where")),
                        "/nonexistent/gpuop-test.sock");
    assert_string_equal(json_string_value(json_object_get(e, "message")),
                        "cannot connect to /nonexistent/gpuop-test.sock: No such file or "
                        "directory");
    json_decref(j);
    cd_check_result_free(&r);
}

static void test_check_command(void **state)
{
    (void)state;
    char cmd[128];
    cd_check_command("nvidia-cdi", cmd, sizeof cmd);
    assert_string_equal(cmd, "gpuop containerd check nvidia-cdi");
    cd_check_source s;
    assert_int_equal(cd_check_source_parse("node", &s), 0);
    assert_int_equal(s, CD_SOURCE_NODE);
    assert_int_equal(cd_check_source_parse("ctr", &s), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_1_6_20),
        cmocka_unit_test(test_status_1_7_29),
        cmocka_unit_test(test_status_2_1_5_handlers),
        cmocka_unit_test(test_handlers_win_over_config),
        cmocka_unit_test(test_status_bad),
        cmocka_unit_test(test_plugins_1x_failed),
        cmocka_unit_test(test_plugins_2x_runtime_first),
        cmocka_unit_test(test_node_2x_reports),
        cmocka_unit_test(test_node_1x_proves_nothing),
        cmocka_unit_test(test_check_daemon_unreachable),
        cmocka_unit_test(test_check_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
