/* The node agents (src/agents/agents.h) as the fake kubelet and `gpuop
 * node` drive them, without an API server: a node made on first sight,
 * a toolkit pod whose files the running daemon does not load until a
 * restart, a device plugin that registers and goes, a reboot into a kernel
 * the driver was not built for, and the /gpuop/v1/agents routes. */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "temp_dir.h"

#include "json_assert.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agents/agents.h"
#include "kube/json.h"

typedef struct fixture {
    char dir[64], nodes[96];
    ag_agents *a;
    const ctl_node_agents *view;
} fixture;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/test-agents-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->nodes, sizeof f->nodes, "%s/nodes", f->dir);
    gp_error err = {0};
    f->a = ag_agents_new(f->nodes, &err);
    assert_non_null(f->a);
    assert_int_equal(ag_agents_run(f->a, &err), 0);
    f->view = ag_agents_kubelet(f->a);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ag_agents_free(f->a);
    temp_dir_remove(f->dir);
    free(f);
    return 0;
}

static ctl_node_facts observe(fixture *f, int64_t at)
{
    ctl_node_facts facts;
    assert_int_equal(f->view->observe(f->view->ctx, "n1", at, &facts), 0);
    return facts;
}

static const ctl_node_label *label(const ctl_node_facts *facts, const char *key)
{
    for (size_t i = 0; i < facts->label_count; i++)
        if (strcmp(facts->labels[i].key, key) == 0) return &facts->labels[i];
    fail_msg("no label %s", key);
    return NULL;
}

static void expect_loaded(const ctl_node_facts *facts, const char *want)
{
    char got[256] = "";
    for (size_t i = 0; i < facts->loaded_count; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? "," : "",
                 facts->loaded[i]);
    assert_string_equal(got, want);
}

#define NODE "{'metadata':{'name':'n1','labels':{}}}"
#define TOOLKIT                                                                                    \
    "{'metadata':{'name':'tk','namespace':'gpu-operator','uid':'uid-tk'},'spec':{'containers':"    \
    "[{'name':'tk','image':'nvcr.io/nvidia/k8s/container-toolkit:v1.18.1','env':["                 \
    "{'name':'RUNTIME_RESTART_MODE','value':'none'}]}]}}"
#define PLUGIN                                                                                     \
    "{'metadata':{'name':'dp','namespace':'gpu-operator','uid':'uid-dp'},'spec':{"                 \
    "'runtimeClassName':'nvidia','containers':[{'name':'nvidia-device-plugin','image':"            \
    "'nvcr.io/nvidia/k8s-device-plugin:v0.17.0'}]}}"

static ctl_pod_start start(fixture *f, const char *pod_json, char *crashed, size_t cap)
{
    json_t *node = sq_load(NODE), *pod = sq_load(pod_json), *cms = json_array();
    ctl_pod_start how = f->view->pod_start(f->view->ctx, node, pod, cms, now_ms(), crashed, cap);
    json_decref(node);
    json_decref(pod);
    json_decref(cms);
    return how;
}

static void stop(fixture *f, const char *pod_json, int64_t at)
{
    json_t *pod = sq_load(pod_json);
    f->view->pod_stop(f->view->ctx, "n1", pod, at);
    json_decref(pod);
}

static void test_the_chain_from_files_to_advertised_gpus(void **state)
{
    fixture *f = *state;
    ctl_node_facts facts = observe(f, now_ms());
    /* a healthy lab node: containerd 1.6.20, runc, the driver, 4 GPUs */
    assert_true(facts.kubelet_running && facts.runtime_up);
    assert_false(facts.reports_handlers);
    assert_string_equal(facts.runtime_version, "containerd://1.6.20~ds1");
    expect_loaded(&facts, "runc");
    assert_true(label(&facts, "nvidia.com/gpu.present")->present);
    assert_string_equal(label(&facts, "nvidia.com/cuda.driver-version.full")->value, "550.54.15");
    assert_int_equal(facts.resource_count, 0);
    char path[200];
    snprintf(path, sizeof path, "%s/n1/etc/containerd/config.toml", f->nodes);
    assert_int_equal(access(path, F_OK), 0);

    /* restart mode none: the files say nvidia, the daemon does not */
    char crashed[64] = "";
    assert_int_equal(start(f, TOOLKIT, crashed, sizeof crashed), CTL_POD_RUNS);
    snprintf(path, sizeof path, "%s/n1/etc/containerd/conf.d/99-nvidia.toml", f->nodes);
    assert_int_equal(access(path, F_OK), 0);
    facts = observe(f, now_ms());
    expect_loaded(&facts, "runc");

    gp_error err = {0};
    assert_int_equal(ag_agents_restart_containerd(f->a, "n1", &err), 0);
    facts = observe(f, now_ms());
    expect_loaded(&facts, "nvidia,nvidia-cdi,nvidia-legacy,runc");
    assert_true(facts.sandbox_error_v2 == false);

    /* the plugin registers the physical GPUs */
    assert_int_equal(start(f, PLUGIN, crashed, sizeof crashed), CTL_POD_RUNS);
    facts = observe(f, now_ms());
    assert_int_equal(facts.resource_count, 1);
    assert_string_equal(facts.resources[0].name, "nvidia.com/gpu");
    assert_int_equal(facts.resources[0].capacity, 4);
    assert_int_equal(facts.resources[0].allocatable, 4);

    /* it goes: allocatable 0 at once, capacity after the 5-minute grace */
    int64_t gone = now_ms();
    stop(f, PLUGIN, gone);
    facts = observe(f, gone + 1000);
    assert_int_equal(facts.resources[0].capacity, 4);
    assert_int_equal(facts.resources[0].allocatable, 0);
    facts = observe(f, gone + 301 * 1000);
    assert_int_equal(facts.resources[0].capacity, 0);

    /* the toolkit's pod ends: its cleanup takes the drop-in away */
    stop(f, TOOLKIT, now_ms());
    assert_int_equal(access(path, F_OK), -1);
}

static void test_a_kernel_update_leaves_the_plugin_without_a_driver(void **state)
{
    fixture *f = *state;
    ctl_node_facts facts = observe(f, now_ms());
    unsigned long boot = facts.boot;
    gp_error err = {0};
    assert_int_equal(ag_agents_reboot(f->a, "n1", true, &err), 0);
    facts = observe(f, now_ms());
    assert_true(facts.boot == boot + 1);
    assert_string_equal(facts.kernel_version, "6.1.0-19-amd64");
    assert_true(facts.kubelet_running); /* Ready: a driver is no part of it */
    assert_false(label(&facts, "nvidia.com/cuda.driver-version.full")->present);
    assert_true(label(&facts, "nvidia.com/gpu.present")->present); /* hardware */
    char crashed[64] = "";
    assert_int_equal(start(f, PLUGIN, crashed, sizeof crashed), CTL_POD_CRASHES);
    assert_string_equal(crashed, "nvidia-device-plugin");
    json_t *st = ag_agents_status(f->a, "n1", &err);
    assert_non_null(st);
    assert_false(json_is_true(json_object_get(st, "driver_loaded")));
    assert_non_null(strstr(kube_str(st, "journal"), "nvml init failed: ERROR_LIBRARY_NOT_FOUND"));
    json_decref(st);
}

/* SIGHUP: the daemon exits and its CRI is gone until systemd's restart. */
static void test_sighup_takes_cri_away(void **state)
{
    fixture *f = *state;
    observe(f, now_ms());
    gp_error err = {0};
    assert_int_equal(ag_agents_signal(f->a, "n1", SIGHUP, &err), 0);
    ctl_node_facts facts = observe(f, now_ms());
    assert_false(facts.runtime_up);
    assert_int_equal(facts.loaded_count, 0);
    assert_int_equal(ag_agents_signal(f->a, "n1", SIGHUP, &err), 1); /* nobody to take it */
    assert_int_equal(ag_agents_signal(f->a, "n9", SIGHUP, &err), -1);
    assert_non_null(strstr(err.text, "n9 has no agent"));
}

static const char *no_query(void *ctx, const char *key)
{
    (void)ctx, (void)key;
    return NULL;
}

static json_t *route(fixture *f, const char *method, const char *path, const char *body,
                     unsigned *status)
{
    as_request req = {.method = method,
                      .path = path,
                      .body = body,
                      .body_len = body ? strlen(body) : 0,
                      .query = no_query};
    as_response resp = {0};
    ag_agents_route(f->a, &req, &resp);
    *status = resp.status;
    json_t *out = resp.body ? json_loadb(resp.body, resp.len, 0, NULL) : NULL;
    as_response_free(&resp);
    return out;
}

static void test_the_routes(void **state)
{
    fixture *f = *state;
    observe(f, now_ms());
    unsigned status;
    json_t *list = route(f, "GET", "/gpuop/v1/agents", NULL, &status);
    assert_int_equal(status, 200);
    json_t *want = sq_load("{'kind':'NodeAgentList','items':['n1']}");
    assert_json_equal(list, want);
    json_decref(want);
    json_decref(list);
    json_t *st = route(f, "GET", "/gpuop/v1/agents/n1", NULL, &status);
    assert_int_equal(status, 200);
    assert_string_equal(kube_str(kube_obj(st, "loaded"), "cri"), "up");
    assert_string_equal(kube_str(kube_obj(st, "state"), "containerd_version"), "1.6.20~ds1");
    json_decref(st);
    json_t *nf = route(f, "GET", "/gpuop/v1/agents/n2", NULL, &status);
    assert_int_equal(status, 404);
    json_decref(nf);
    json_t *bad = route(f, "POST", "/gpuop/v1/agents/n1/signal", "{\"signal\":\"WINCH\"}", &status);
    assert_int_equal(status, 400);
    json_decref(bad);
    json_t *notjson = route(f, "POST", "/gpuop/v1/agents/n1/reboot", "[1]", &status);
    assert_int_equal(status, 400);
    json_decref(notjson);
    json_t *ok = route(f, "POST", "/gpuop/v1/agents/n1/restart-containerd", "{}", &status);
    assert_int_equal(status, 200);
    assert_string_equal(kube_str(ok, "status"), "Success");
    json_decref(ok);
    json_t *verb = route(f, "POST", "/gpuop/v1/agents/n1/format-disk", "{}", &status);
    assert_int_equal(status, 404);
    json_decref(verb);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_the_chain_from_files_to_advertised_gpus, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_kernel_update_leaves_the_plugin_without_a_driver,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_sighup_takes_cri_away, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_routes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
