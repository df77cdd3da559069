/* an_why_pending: the layer where a GPU pod's chain breaks (gpu-node-facts.md
 * 6), on snapshots of the embedded cluster driven by the real kubectl (lab
 * steps 5 and 6, and the incident: kubelets that check RuntimeClass
 * handlers on nodes reporting only runc; tests/data/analyze/README.md) and
 * on generated states for the layers the fake kubelet cannot show. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/why_pending.h"

static json_t *load_items(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/analyze/%s", TEST_DATA_DIR, name);
    json_error_t jerr;
    json_t *list = json_load_file(path, 0, &jerr);
    if (!list) print_error("%s: %s\n", path, jerr.text);
    assert_non_null(list);
    json_t *items = json_incref(json_object_get(list, "items"));
    json_decref(list);
    return items;
}

static const json_t *find_pod(const json_t *items, const char *ns, const char *name)
{
    size_t i;
    const json_t *it;
    json_array_foreach(items, i, it)
    {
        const json_t *meta = json_object_get(it, "metadata");
        if (strcmp(json_string_value(json_object_get(it, "kind")), "Pod") == 0 &&
            strcmp(json_string_value(json_object_get(meta, "namespace")), ns) == 0 &&
            strcmp(json_string_value(json_object_get(meta, "name")), name) == 0)
            return it;
    }
    fail_msg("pod %s/%s not found", ns, name);
    return NULL;
}

static json_t *analyze(const json_t *items, const json_t *pod, int backwards)
{
    gp_error err = {0};
    an_why_pending *b = an_why_pending_new(pod, &err);
    if (!b) print_error("%s\n", err.text);
    assert_non_null(b);
    size_t n = json_array_size(items);
    for (size_t i = 0; i < n; i++) {
        const json_t *it = json_array_get(items, backwards ? n - 1 - i : i);
        const char *kind = json_string_value(json_object_get(it, "kind"));
        if (strcmp(kind, "Node") == 0) an_why_pending_add_node(b, it);
        if (strcmp(kind, "Pod") == 0) an_why_pending_add_pod(b, it);
        if (strcmp(kind, "Event") == 0) an_why_pending_add_event(b, it);
        if (strcmp(kind, "RuntimeClass") == 0) an_why_pending_add_runtimeclass(b, it);
    }
    json_t *r = an_why_pending_finish(b, &err);
    if (!r) print_error("%s\n", err.text);
    assert_non_null(r);
    an_why_pending_free(b);
    return r;
}

static json_t *snapshot_report(const char *file, const char *ns, const char *pod)
{
    json_t *items = load_items(file);
    json_t *r = analyze(items, find_pod(items, ns, pod), 0);
    json_t *back = analyze(items, find_pod(items, ns, pod), 1);
    assert_json_equal(back, r); /* adding order must not matter */
    json_decref(back);
    json_decref(items);
    return r;
}

static const char *str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static const char *first_next(const json_t *r)
{
    return str(json_array_get(json_object_get(r, "next"), 0), "code");
}

/* Lab step 5: the scheduler's exact words (lab.md), no node advertises the
 * GPU and there is no device plugin pod in the lab: the break is node
 * advertisement, and the next place to look is the kubelet (6.2). */
static void test_lab_step5(void **state)
{
    (void)state;
    json_t *r = snapshot_report("lab-step5.json", "gpu-lab", "cuda-probe");
    const json_t *s = json_object_get(r, "scheduler");
    assert_string_equal(str(json_object_get(s, "condition"), "reason"), "Unschedulable");
    assert_string_equal(str(json_object_get(s, "condition"), "message"),
                        "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 "
                        "nodes are available: 3 No preemption victims found for incoming pod.");
    assert_string_equal(str(s, "blocker"), "insufficient-nvidia.com/gpu");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(s, "parsed"), "total")), 3);
    assert_string_equal(str(r, "resource"), "nvidia.com/gpu");
    assert_int_equal(json_integer_value(json_object_get(r, "advertising")), 0);
    assert_int_equal(json_array_size(json_object_get(r, "device_plugin_pods")), 0);
    assert_string_equal(str(r, "layer"), "node-advertisement");
    assert_string_equal(first_next(r), "kubelet-log");
    /* The lab's RuntimeClass nvidia exists; nodes report only runc. */
    const json_t *rc = json_object_get(r, "runtime_class");
    assert_string_equal(str(rc, "handler"), "nvidia");
    assert_int_equal(json_array_size(json_object_get(rc, "nodes_without")), 3);
    char *lab = an_why_pending_render(r, AN_LAB);
    assert_string_equal(lab, "LAYER=node-advertisement\nBLOCKER=insufficient-nvidia.com/gpu\n");
    free(lab);
    json_decref(r);
}

/* Lab step 6: bound to lab-node-0 and Running. */
static void test_lab_step6_scheduled(void **state)
{
    (void)state;
    json_t *r = snapshot_report("lab-step6.json", "gpu-lab", "cuda-probe");
    assert_string_equal(str(r, "layer"), "none");
    assert_string_equal(str(r, "node"), "lab-node-0");
    assert_int_equal(json_integer_value(json_object_get(r, "advertising")), 1);
    char *text = an_why_pending_render(r, AN_TEXT);
    assert_true(strncmp(text, "gpu-lab/cuda-probe is scheduled", 31) == 0);
    assert_non_null(strstr(text, "Evidence:\n"));
    free(text);
    json_decref(r);
}

/* The incident: the device plugin's sandbox cannot start (no runtime for
 * "nvidia"), so nothing is advertised and the GPU pod stays Pending: the
 * break is the runtime handler, not the scheduler. */
static void test_incident_gpu_pod(void **state)
{
    (void)state;
    json_t *r = snapshot_report("incident-runtime-missing.json", "gpu-lab", "cuda-probe");
    assert_string_equal(str(r, "layer"), "runtime-handler");
    assert_string_equal(first_next(r), "containerd-check");
    const json_t *plugins = json_object_get(r, "device_plugin_pods");
    assert_int_equal(json_array_size(plugins), 3);
    assert_string_equal(str(json_array_get(plugins, 0), "status"), "ContainerCreating");
    assert_non_null(strstr(str(json_array_get(plugins, 0), "event"),
                           "no runtime for \"nvidia\" is configured"));
    json_decref(r);
}

/* A scheduled pod whose sandbox fails: the FailedCreatePodSandBox event on
 * the pod itself, and its node reports runtimeHandlers without nvidia. */
static void test_incident_scheduled_pod(void **state)
{
    (void)state;
    json_t *r = snapshot_report("incident-runtime-missing.json", "gpu-lab", "cpu-probe");
    assert_string_equal(str(r, "layer"), "runtime-handler");
    const json_t *ev = json_array_get(json_object_get(r, "kubelet_events"), 0);
    assert_string_equal(str(ev, "reason"), "FailedCreatePodSandBox");
    const json_t *rc = json_object_get(r, "runtime_class");
    assert_int_equal(json_array_size(json_object_get(rc, "nodes_without")), 1);
    assert_string_equal(json_string_value(json_array_get(json_object_get(rc, "nodes_without"), 0)),
                        str(r, "node"));
    json_decref(r);
}

/* ---- generated states ---- */

#define GPU_POD                                                                                    \
    "{'kind':'Pod','metadata':{'name':'job','namespace':'ml','uid':'u1'},'spec':{"                 \
    "'runtimeClassName':'nvidia','containers':[{'name':'c','resources':{'limits':{"                \
    "'nvidia.com/gpu':'1'}}}]},'status':{'phase':'Pending','conditions':[{'type':"                 \
    "'PodScheduled','status':'False','reason':'Unschedulable','message':'0/1 nodes are "           \
    "available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No "         \
    "preemption victims found for incoming pod.'}]}}"

static json_t *generated(const char *pod, const char *items)
{
    json_t *p = sq_load(pod), *it = sq_load(items);
    json_t *r = analyze(it, p, 0);
    json_decref(p);
    json_decref(it);
    return r;
}

/* The plugin crash-loops (6.3): no advertisement, and the plugin's logs
 * and socket mount are next. */
static void test_plugin_crash_loop(void **state)
{
    (void)state;
    json_t *r = generated(
        GPU_POD,
        "[{'kind':'Node','metadata':{'name':'g0'},'status':{'conditions':[{'type':'Ready',"
        "'status':'True'}],'runtimeHandlers':[{'name':'runc'},{'name':'nvidia'}]}},"
        "{'kind':'Pod','metadata':{'name':'nvidia-device-plugin-daemonset-x1','namespace':"
        "'gpu-operator','labels':{'app':'nvidia-device-plugin-daemonset'}},'spec':{'nodeName':"
        "'g0','containers':[{'name':'nvidia-device-plugin'}]},'status':{'phase':'Running',"
        "'conditions':[{'type':'Ready','status':'False'}],'containerStatuses':[{'name':"
        "'nvidia-device-plugin','ready':false,'state':{'waiting':{'reason':"
        "'CrashLoopBackOff'}}}]}},"
        "{'kind':'RuntimeClass','metadata':{'name':'nvidia'},'handler':'nvidia'}]");
    assert_string_equal(str(r, "layer"), "device-plugin");
    assert_string_equal(first_next(r), "plugin-log");
    assert_string_equal(str(json_array_get(json_object_get(r, "device_plugin_pods"), 0), "status"),
                        "CrashLoopBackOff");
    const json_t *rc = json_object_get(r, "runtime_class");
    assert_int_equal(json_array_size(json_object_get(rc, "nodes_with")), 1);
    json_decref(r);
}

/* Plugin pod label only (name without the mark), waiting in Init:0/2. */
static void test_plugin_init_by_label(void **state)
{
    (void)state;
    json_t *r = generated(
        GPU_POD, "[{'kind':'Pod','metadata':{'name':'dp-abc','namespace':'kube-system','labels':{"
                 "'app.kubernetes.io/name':'nvidia-device-plugin'}},'spec':{'nodeName':'g0',"
                 "'initContainers':[{'name':'a'},{'name':'b'}],'containers':[{'name':'c'}]},"
                 "'status':{'phase':'Pending','initContainerStatuses':[{'name':'a','state':{"
                 "'running':{}}},{'name':'b','state':{'waiting':{'reason':'PodInitializing'}}}]}},"
                 "{'kind':'Node','metadata':{'name':'g0'},'status':{}}]");
    assert_string_equal(str(r, "layer"), "device-plugin");
    assert_string_equal(str(json_array_get(json_object_get(r, "device_plugin_pods"), 0), "status"),
                        "Init:0/2");
    /* No status.runtimeHandlers: cannot tell. */
    const json_t *rc = json_object_get(r, "runtime_class");
    assert_true(json_is_null(json_object_get(rc, "handler"))); /* RuntimeClass not given */
    json_decref(r);
}

/* Admission refused on the node (6.2). */
static void test_kubelet_admission(void **state)
{
    (void)state;
    json_t *r = generated(
        "{'kind':'Pod','metadata':{'name':'job','namespace':'ml','uid':'u1'},'spec':{'nodeName':"
        "'g0','containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpu':'1'}}}]},"
        "'status':{'phase':'Failed','reason':'UnexpectedAdmissionError','message':'Pod was "
        "rejected: Allocate failed due to no healthy devices present; cannot allocate unhealthy "
        "devices nvidia.com/gpu, which is unexpected'}}",
        "[{'kind':'Node','metadata':{'name':'g0'},'status':{'allocatable':{'nvidia.com/gpu':'0'}}},"
        "{'kind':'Event','involvedObject':{'kind':'Pod','name':'job','namespace':'ml','uid':'u1'},"
        "'reason':'UnexpectedAdmissionError','type':'Warning','message':'Allocate failed due to no "
        "healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu, which is "
        "unexpected','lastTimestamp':'2025-01-01T00:00:00Z'}]");
    assert_string_equal(str(r, "layer"), "kubelet-admission");
    assert_string_equal(first_next(r), "admission");
    assert_non_null(strstr(str(r, "verdict"), "cannot allocate unhealthy devices"));
    json_decref(r);
}

/* Advertised but taken: 4 allocatable, 4 requested by a running pod. The
 * scheduler layer, with the free count 0 in the node table. */
static void test_advertised_but_full(void **state)
{
    (void)state;
    json_t *r =
        generated(GPU_POD, "[{'kind':'Node','metadata':{'name':'g0'},'status':{'allocatable':{"
                           "'nvidia.com/gpu':'4'}}},"
                           "{'kind':'Pod','metadata':{'name':'other','namespace':'ml'},'spec':{"
                           "'nodeName':'g0','containers':[{'name':'c','resources':{'requests':{"
                           "'nvidia.com/gpu':'4'}}}]},'status':{'phase':'Running'}}]");
    assert_string_equal(str(r, "layer"), "scheduler");
    const json_t *n = json_array_get(json_object_get(r, "nodes"), 0);
    assert_string_equal(str(n, "requested"), "4");
    assert_string_equal(str(n, "free"), "0");
    json_decref(r);
}

/* The cluster is full, and a node whose GFD labels count 8 GPUs advertises
 * 0 (gpu-node-facts.md 5: the plugin registered and is gone): that lost
 * capacity is the first thing to look at, before the full nodes. */
static void test_lost_gpus_come_first(void **state)
{
    (void)state;
    json_t *r = generated(
        GPU_POD,
        "[{'kind':'Node','metadata':{'name':'g0','labels':{'nvidia.com/gpu.count':'4'}},"
        "'status':{'allocatable':{'nvidia.com/gpu':'4'}}},"
        "{'kind':'Node','metadata':{'name':'g1','labels':{'nvidia.com/gpu.count':'8'}},"
        "'status':{'capacity':{'nvidia.com/gpu':'0'},'allocatable':{'nvidia.com/gpu':'0'}}},"
        "{'kind':'Node','metadata':{'name':'cpu0'},'status':{}},"
        "{'kind':'Pod','metadata':{'name':'other','namespace':'ml'},'spec':{'nodeName':'g0',"
        "'containers':[{'name':'c','resources':{'requests':{'nvidia.com/gpu':'4'}}}]},"
        "'status':{'phase':'Running'}}]");
    assert_string_equal(str(r, "layer"), "scheduler");
    const json_t *first = json_array_get(json_object_get(r, "next"), 0);
    assert_string_equal(str(first, "code"), "gpus-lost");
    assert_string_equal(str(first, "target"), "g1");
    /* Only g1: g0 advertises what it counts, cpu0 has no GPU labels. */
    size_t lost = 0, i;
    const json_t *x;
    json_array_foreach(json_object_get(r, "next"), i, x) lost +=
        strcmp(str(x, "code"), "gpus-lost") == 0;
    assert_int_equal(lost, 1);
    json_decref(r);
}

static void test_not_a_pod(void **state)
{
    (void)state;
    json_t *node = sq_load("{'kind':'Node','metadata':{'name':'x'}}");
    gp_error err = {0};
    assert_null(an_why_pending_new(node, &err));
    assert_non_null(strstr(err.text, "Pod"));
    json_decref(node);
}

int main(void)
{
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lab_step5),
        cmocka_unit_test(test_lab_step6_scheduled),
        cmocka_unit_test(test_incident_gpu_pod),
        cmocka_unit_test(test_incident_scheduled_pod),
        cmocka_unit_test(test_plugin_crash_loop),
        cmocka_unit_test(test_plugin_init_by_label),
        cmocka_unit_test(test_kubelet_admission),
        cmocka_unit_test(test_advertised_but_full),
        cmocka_unit_test(test_lost_gpus_come_first),
        cmocka_unit_test(test_not_a_pod),
    };
    return cmocka_run_group_tests_name("analyze_why_pending", tests, NULL, NULL);
}
