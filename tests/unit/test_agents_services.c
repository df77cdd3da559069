/* The simulated containerd's gRPC answers (src/agents/services.c, pb.c),
 * decoded field by field with the CRI's and containerd's field numbers:
 * what a running daemon of each line sends, and what it refuses. The wire
 * itself is test_agents_host.c's; the recorded answers, compared whole
 * through the real clients, tests/agents/agent_test.py's. */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "temp_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/agents_internal.h"
#include "agents/daemon.h"
#include "agents/grpc_internal.h"
#include "agents/node.h"

typedef struct fixture {
    char dir[64];
    ag_daemon d;
    ag_grpc_answer a;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/test-agents-services-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    gp_error err = {0};
    assert_int_equal(ag_node_create(f->dir, NULL, &err), 0);
    ag_daemon_init(&f->d);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    gp_buf_free(&f->a.body);
    ag_daemon_free(&f->d);
    temp_dir_remove(f->dir);
    free(f);
    return 0;
}

static void write_file(const fixture *f, const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", f->dir, rel);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs(text, out);
    assert_int_equal(fclose(out), 0);
}

static void boot(fixture *f, const char *version, const char *dropin)
{
    char state_text[128];
    snprintf(state_text, sizeof state_text, "[containerd]\nversion = \"%s\"\n", version);
    write_file(f, AG_NODE_STATE_FILE, state_text);
    if (dropin) write_file(f, AG_NODE_CONF_D "/99-nvidia.toml", dropin);
    gp_error err = {0};
    if (ag_daemon_start(&f->d, f->dir, 1700000000.0, &err) != 0) fail_msg("%s", err.text);
}

static void call(fixture *f, const char *path, const void *req, size_t len)
{
    gp_buf_free(&f->a.body);
    memset(&f->a, 0, sizeof f->a);
    ag_service_node node = {&f->d, "c9b93d52-893b-4c01-97dc-ff336543d4cd"};
    ag_grpc_serve(&node, path, req, len, &f->a);
}

/* The fields numbered `num` of a message, in order. */
static size_t fields(const void *msg, size_t len, uint32_t num, kube_pb_wire *out, size_t cap)
{
    kube_pb_cursor r = {msg, (const uint8_t *)msg + len};
    kube_pb_wire fld;
    size_t n = 0;
    int rc;
    while ((rc = kube_protobuf_next(&r, NULL, &fld, NULL)) == 1)
        if (fld.num == num && n < cap) out[n++] = fld;
    assert_int_equal(rc, 0);
    return n;
}

static char *text_of(const kube_pb_wire *f)
{
    static char buf[8][4096];
    static int next;
    char *b = buf[next++ % 8];
    snprintf(b, sizeof buf[0], "%.*s", (int)f->len, (const char *)f->bytes);
    return b;
}

/* ---- CRI ---- */

static const uint8_t verbose_req[] = {0x08, 0x01}; /* StatusRequest{verbose: true} */

static void test_version_of_each_line(void **state)
{
    fixture *f = *state;
    boot(f, "2.1.5+unknown", NULL);
    call(f, "/runtime.v1.RuntimeService/Version", NULL, 0);
    assert_int_equal(f->a.status, AG_GRPC_OK);
    kube_pb_wire v[4];
    const char *want[] = {"0.1.0", "containerd", "2.1.5+unknown", "v1"};
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(fields(f->a.body.data, f->a.body.len, i + 1, &v[i], 1), 1);
        assert_string_equal(text_of(&v[i]), want[i]);
    }
    /* 2.0 removed CRI v1alpha2. */
    call(f, "/runtime.v1alpha2.RuntimeService/Version", NULL, 0);
    assert_int_equal(f->a.status, AG_GRPC_UNIMPLEMENTED);
    assert_string_equal(f->a.message, "unknown service runtime.v1alpha2.RuntimeService");
}

static void test_1_x_also_serves_v1alpha2(void **state)
{
    fixture *f = *state;
    boot(f, "1.6.20~ds1", NULL);
    call(f, "/runtime.v1alpha2.RuntimeService/Version", NULL, 0);
    assert_int_equal(f->a.status, AG_GRPC_OK);
    kube_pb_wire v;
    assert_int_equal(fields(f->a.body.data, f->a.body.len, 4, &v, 1), 1);
    assert_string_equal(text_of(&v), "v1alpha2");
}

static void test_status_of_2_1_with_the_bare_dropin(void **state)
{
    fixture *f = *state;
    boot(f, "2.1.5+unknown", ag_bare_dropin);
    call(f, "/runtime.v1.RuntimeService/Status", verbose_req, sizeof verbose_req);
    assert_int_equal(f->a.status, AG_GRPC_OK);
    const char *msg = f->a.body.data;
    size_t len = f->a.body.len;
    /* status {conditions...}: RuntimeReady true, NetworkReady false. */
    kube_pb_wire status, conds[4];
    assert_int_equal(fields(msg, len, 1, &status, 1), 1);
    assert_int_equal(fields(status.bytes, status.len, 1, conds, 4), 3);
    kube_pb_wire type, ok;
    assert_int_equal(fields(conds[0].bytes, conds[0].len, 1, &type, 1), 1);
    assert_string_equal(text_of(&type), "RuntimeReady");
    assert_int_equal(fields(conds[0].bytes, conds[0].len, 2, &ok, 1), 1);
    assert_int_equal(ok.varint, 1);
    assert_int_equal(fields(conds[1].bytes, conds[1].len, 2, &ok, 1), 0); /* false: not sent */
    /* info: config and the line's keys. */
    kube_pb_wire info[8];
    size_t ninfo = fields(msg, len, 2, info, 8);
    assert_int_equal(ninfo, 5);
    kube_pb_wire key, value;
    assert_int_equal(fields(info[0].bytes, info[0].len, 1, &key, 1), 1);
    assert_string_equal(text_of(&key), "config");
    assert_int_equal(fields(info[0].bytes, info[0].len, 2, &value, 1), 1);
    json_error_t jerr;
    json_t *config = json_loadb((const char *)value.bytes, value.len, 0, &jerr);
    assert_non_null(config);
    json_t *runtimes = json_object_get(json_object_get(config, "containerd"), "runtimes");
    assert_int_equal(json_object_size(runtimes), 2);
    assert_non_null(json_object_get(runtimes, "nvidia"));
    json_decref(config);
    /* runtime_handlers: "", nvidia, runc, each with an empty features message. */
    kube_pb_wire handlers[4];
    assert_int_equal(fields(msg, len, 3, handlers, 4), 3);
    const char *names[] = {"", "nvidia", "runc"};
    for (size_t i = 0; i < 3; i++) {
        kube_pb_wire name, features;
        assert_int_equal(fields(handlers[i].bytes, handlers[i].len, 1, &name, 1), 1);
        assert_string_equal(text_of(&name), names[i]);
        assert_int_equal(fields(handlers[i].bytes, handlers[i].len, 2, &features, 1), 1);
        assert_int_equal(features.len, 0);
    }
    /* Without verbose, no info. */
    call(f, "/runtime.v1.RuntimeService/Status", NULL, 0);
    assert_int_equal(fields(f->a.body.data, f->a.body.len, 2, info, 8), 0);
}

static void test_1_6_reports_no_handlers(void **state)
{
    fixture *f = *state;
    boot(f, "1.6.20~ds1", NULL);
    call(f, "/runtime.v1.RuntimeService/Status", verbose_req, sizeof verbose_req);
    kube_pb_wire handlers[4];
    assert_int_equal(fields(f->a.body.data, f->a.body.len, 3, handlers, 4), 0);
}

static void test_failed_cri_is_an_unknown_service(void **state)
{
    fixture *f = *state;
    boot(f, "1.6.20~ds1", ag_bare_dropin);
    call(f, "/runtime.v1.RuntimeService/Status", verbose_req, sizeof verbose_req);
    assert_int_equal(f->a.status, AG_GRPC_UNIMPLEMENTED);
    assert_string_equal(f->a.message, "unknown service runtime.v1.RuntimeService");
    call(f, "/runtime.v1.ImageService/ListImages", NULL, 0);
    assert_string_equal(f->a.message, "unknown service runtime.v1.ImageService");
}

static void test_methods_not_simulated(void **state)
{
    fixture *f = *state;
    boot(f, "1.7.29+unknown", NULL);
    call(f, "/runtime.v1.RuntimeService/RunPodSandbox", NULL, 0);
    assert_int_equal(f->a.status, AG_GRPC_UNIMPLEMENTED);
    assert_string_equal(f->a.message,
                        "unknown method RunPodSandbox for service runtime.v1.RuntimeService");
    call(f, "no-slash", NULL, 0);
    assert_int_equal(f->a.status, AG_GRPC_UNIMPLEMENTED);
    call(f, "/runtime.v1.RuntimeService/Status", (const uint8_t *)"\x08", 1);
    assert_int_equal(f->a.status, AG_GRPC_INTERNAL);
}

/* ---- introspection ---- */

static void put_filter(gp_buf *b, const char *filter)
{
    kube_protobuf_put_bytes(b, 1, filter, strlen(filter));
}

/* The plugins of a PluginsResponse whose filters select `filter`. */
static size_t plugins(fixture *f, const char *filter, kube_pb_wire *out, size_t cap)
{
    gp_buf req = {0};
    if (filter) put_filter(&req, filter);
    call(f, "/containerd.services.introspection.v1.Introspection/Plugins", req.data, req.len);
    gp_buf_free(&req);
    assert_int_equal(f->a.status, AG_GRPC_OK);
    return fields(f->a.body.data, f->a.body.len, 1, out, cap);
}

static char *init_error(const kube_pb_wire *plugin, uint64_t *code)
{
    kube_pb_wire err, c, m;
    if (fields(plugin->bytes, plugin->len, 7, &err, 1) != 1) return NULL;
    assert_int_equal(fields(err.bytes, err.len, 1, &c, 1), 1);
    *code = c.varint;
    assert_int_equal(fields(err.bytes, err.len, 2, &m, 1), 1);
    return text_of(&m);
}

static void test_plugins_name_the_cri_failure(void **state)
{
    fixture *f = *state;
    boot(f, "1.6.20~ds1", ag_bare_dropin);
    kube_pb_wire all[64], one[4];
    assert_int_equal(plugins(f, NULL, all, 64), 38);
    assert_int_equal(plugins(f, "id==cri", one, 4), 1);
    uint64_t code = 0;
    char *msg = init_error(&one[0], &code);
    assert_non_null(msg);
    assert_int_equal(code, 2); /* codes.Unknown, as ctr prints "Code: Unknown" */
    assert_string_equal(msg, f->d.loaded->cri_error);
    /* Platforms as messages {os, architecture}. */
    kube_pb_wire plat, os_, arch;
    assert_int_equal(fields(one[0].bytes, one[0].len, 4, &plat, 1), 1);
    assert_int_equal(fields(plat.bytes, plat.len, 1, &os_, 1), 1);
    assert_int_equal(fields(plat.bytes, plat.len, 2, &arch, 1), 1);
    assert_string_equal(text_of(&os_), "linux");
    assert_string_equal(text_of(&arch), "amd64");
    /* The same node healthy: no error on the CRI plugin. */
    gp_error err = {0};
    char path[256];
    snprintf(path, sizeof path, "%s/%s/99-nvidia.toml", f->dir, AG_NODE_CONF_D);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(ag_daemon_restart(&f->d, f->dir, 1700000100.0, &err), 0);
    assert_int_equal(plugins(f, "type==io.containerd.grpc.v1,id==cri", one, 4), 1);
    assert_null(init_error(&one[0], &code));
    /* Filters: any of several; != excludes. */
    assert_int_equal(plugins(f, "id!=cri", all, 64), 37);
    gp_buf req = {0};
    put_filter(&req, "id==cri");
    put_filter(&req, "id==bolt");
    call(f, "/containerd.services.introspection.v1.Introspection/Plugins", req.data, req.len);
    gp_buf_free(&req);
    assert_int_equal(fields(f->a.body.data, f->a.body.len, 1, all, 64), 2);
}

static void test_2_x_failure_fails_the_dependants(void **state)
{
    fixture *f = *state;
    boot(f, "2.1.5+unknown",
         "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
         "default_runtime_name = \"crun\"\n");
    assert_int_equal(f->d.loaded->cri, AG_CRI_FAILED);
    kube_pb_wire one[2];
    uint64_t code;
    assert_int_equal(plugins(f, "type==io.containerd.cri.v1,id==runtime", one, 2), 1);
    assert_string_equal(init_error(&one[0], &code), f->d.loaded->cri_error);
    assert_int_equal(plugins(f, "type==io.containerd.grpc.v1,id==cri", one, 2), 1);
    char want[1400];
    snprintf(want, sizeof want, "%s%s", AG_CRI_DEPENDENCY_PREFIX, f->d.loaded->cri_error);
    assert_string_equal(init_error(&one[0], &code), want);
    assert_int_equal(plugins(f, "id==podsandbox", one, 2), 1);
    assert_string_equal(init_error(&one[0], &code), want);
}

static void test_bad_filter_is_refused(void **state)
{
    fixture *f = *state;
    boot(f, "1.6.20~ds1", NULL);
    gp_buf req = {0};
    put_filter(&req, "id~=c.i");
    call(f, "/containerd.services.introspection.v1.Introspection/Plugins", req.data, req.len);
    gp_buf_free(&req);
    assert_int_equal(f->a.status, AG_GRPC_INVALID_ARGUMENT);
    assert_non_null(strstr(f->a.message, "id~=c.i"));
}

static void test_server_and_version_services(void **state)
{
    fixture *f = *state;
    boot(f, "1.6.20~ds1", NULL);
    call(f, "/containerd.services.version.v1.Version/Version", NULL, 0);
    kube_pb_wire v;
    assert_int_equal(fields(f->a.body.data, f->a.body.len, 2, &v, 1), 1);
    assert_string_equal(text_of(&v), "1.6.20~ds1-1+deb12u3");
    call(f, "/containerd.services.introspection.v1.Introspection/Server", NULL, 0);
    assert_int_equal(fields(f->a.body.data, f->a.body.len, 1, &v, 1), 1);
    assert_string_equal(text_of(&v), "c9b93d52-893b-4c01-97dc-ff336543d4cd");
    /* 1.6 has no pid in ServerResponse; 1.7 does. */
    assert_int_equal(fields(f->a.body.data, f->a.body.len, 2, &v, 1), 0);
}

/* ---- the encoder's edges ---- */

static void test_pb_reader_refuses_truncated_input(void **state)
{
    (void)state;
    const uint8_t cases[][3] = {{0x0a, 0x05, 'x'}, {0x08, 0x80, 0x80}, {0x0b, 0, 0}, {0x00, 0, 0}};
    for (size_t i = 0; i < 4; i++) {
        kube_pb_cursor r = {cases[i], cases[i] + 3};
        kube_pb_wire f;
        assert_int_equal(kube_protobuf_next(&r, NULL, &f, NULL), -1);
    }
    gp_buf b = {0};
    kube_protobuf_put_varint(&b, 300);
    assert_int_equal(b.len, 2);
    assert_memory_equal(b.data, "\xac\x02", 2);
    gp_buf_free(&b);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_version_of_each_line),
        T(test_1_x_also_serves_v1alpha2),
        T(test_status_of_2_1_with_the_bare_dropin),
        T(test_1_6_reports_no_handlers),
        T(test_failed_cri_is_an_unknown_service),
        T(test_methods_not_simulated),
        T(test_plugins_name_the_cri_failure),
        T(test_2_x_failure_fails_the_dependants),
        T(test_bad_filter_is_refused),
        T(test_server_and_version_services),
        cmocka_unit_test(test_pb_reader_refuses_truncated_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
#undef T
}
