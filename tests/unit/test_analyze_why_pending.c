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

/* ---- the field states (tests/data/analyze/README.md) ---- */

static const json_t *step(const json_t *r, const char *code)
{
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(r, "next"), i, x)
    {
        if (strcmp(str(x, "code"), code) == 0) return x;
    }
    return NULL;
}

static const char *arg(const json_t *step, size_t i)
{
    return json_string_value(json_array_get(json_object_get(step, "args"), i));
}

/* The incident once more, with GPU Feature Discovery's count on every node:
 * the plugin never ran, so nvidia.com/gpu never appeared (absent, not 0:
 * gpu-node-facts.md 5): "never registered", never "registered and is
 * gone". The next steps are commands kubectl takes: `kubectl describe pod
 * -n NS POD` (a pod that never started has no log), and the containerd
 * check names the handler missing. */
static void test_incident_never_registered(void **state)
{
    (void)state;
    json_t *items = load_items("incident-runtime-missing.json");
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        if (strcmp(str(it, "kind"), "Node") != 0) continue;
        json_object_set_new(json_object_get(json_object_get(it, "metadata"), "labels"),
                            "nvidia.com/gpu.count", json_string("4"));
    }
    json_t *r = analyze(items, find_pod(items, "gpu-lab", "cuda-probe"), 0);
    assert_string_equal(str(r, "layer"), "runtime-handler");
    assert_non_null(step(r, "never-registered"));
    assert_null(step(r, "gpus-lost"));
    const json_t *check = step(r, "containerd-check");
    assert_string_equal(arg(check, 1), "nvidia");
    const json_t *events = step(r, "plugin-events");
    assert_string_equal(arg(events, 0), "gpu-operator");
    assert_true(strncmp(arg(events, 1), "nvidia-device-plugin-daemonset-", 31) == 0);
    char *text = an_why_pending_render(r, AN_TEXT);
    assert_non_null(strstr(text, "kubectl describe pod -n gpu-operator nvidia-device-plugin-"));
    assert_null(strstr(text, "kubectl logs gpu-operator/"));
    assert_null(strstr(text, "registered there and is gone"));
    free(text);
    json_decref(r);
    json_decref(items);
}

/* The incident on containerd 1.6: the kubelet finds the runtime down
 * (pkg/kubelet/runtime.go) and the node is NotReady; the plugin's sandbox
 * failure is older and higher up. The runtime comes first. */
static void test_runtime_down_comes_first(void **state)
{
    (void)state;
    json_t *r = generated(
        "{'kind':'Pod','metadata':{'name':'job','namespace':'ml','uid':'u1'},'spec':{"
        "'runtimeClassName':'nvidia','containers':[{'name':'c','resources':{'limits':{"
        "'nvidia.com/gpu':'1'}}}]},'status':{'phase':'Pending','conditions':[{'type':"
        "'PodScheduled','status':'False','reason':'Unschedulable','message':'0/1 nodes are "
        "available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.'}]}}",
        "[{'kind':'Node','metadata':{'name':'g0'},'status':{'conditions':[{'type':'Ready',"
        "'status':'False','reason':'KubeletNotReady','message':'container runtime is down'}]}},"
        "{'kind':'Pod','metadata':{'name':'nvidia-device-plugin-a','namespace':'gpu-operator',"
        "'uid':'p0'},'spec':{'nodeName':'g0','runtimeClassName':'nvidia','containers':[{'name':"
        "'c'}]},'status':{'phase':'Pending'}},"
        "{'kind':'Event','involvedObject':{'kind':'Pod','name':'nvidia-device-plugin-a',"
        "'namespace':'gpu-operator','uid':'p0'},'reason':'FailedCreatePodSandBox','type':"
        "'Warning','message':'Failed to create pod sandbox: rpc error: code = Unknown desc = "
        "failed to get sandbox runtime: no runtime for \\\"nvidia\\\" is configured'}]");
    assert_string_equal(str(r, "layer"), "container-runtime");
    assert_string_equal(first_next(r), "runtime-down");
    assert_non_null(strstr(str(r, "verdict"), "container runtime is down"));
    json_decref(r);
}

/* The incident's kernel update: g0 advertises its GPUs and is full, g1
 * registered them (capacity, no GFD count label) and reads 0, its plugin in
 * CrashLoopBackOff; g0's plugin runs, with a sandbox failure from before it
 * started. The scheduler counts right: the capacity went with g1's plugin. */
static void test_shortfall_is_the_lost_node(void **state)
{
    (void)state;
    json_t *r = generated(
        GPU_POD,
        "[{'kind':'Node','metadata':{'name':'g0'},'status':{'conditions':[{'type':'Ready',"
        "'status':'True'}],'capacity':{'nvidia.com/gpu':'4'},'allocatable':{'nvidia.com/gpu':"
        "'4'}}},"
        "{'kind':'Node','metadata':{'name':'g1'},'status':{'conditions':[{'type':'Ready',"
        "'status':'True'}],'capacity':{'nvidia.com/gpu':'0'},'allocatable':{'nvidia.com/gpu':"
        "'0'}}},"
        "{'kind':'Pod','metadata':{'name':'other','namespace':'ml'},'spec':{'nodeName':'g0',"
        "'containers':[{'name':'c','resources':{'requests':{'nvidia.com/gpu':'4'}}}]},"
        "'status':{'phase':'Running'}},"
        "{'kind':'Pod','metadata':{'name':'nvidia-device-plugin-a','namespace':'gpu-operator',"
        "'uid':'p0'},'spec':{'nodeName':'g0','containers':[{'name':'c'}]},'status':{'phase':"
        "'Running','conditions':[{'type':'Ready','status':'True'}],'containerStatuses':[{"
        "'name':'c','ready':true,'state':{'running':{}}}]}},"
        "{'kind':'Event','involvedObject':{'kind':'Pod','name':'nvidia-device-plugin-a',"
        "'namespace':'gpu-operator','uid':'p0'},'reason':'FailedCreatePodSandBox','type':"
        "'Warning','message':'Failed to create pod sandbox: rpc error: code = Unknown desc = "
        "failed to get sandbox runtime: no runtime for \\\"nvidia\\\" is configured'},"
        "{'kind':'Pod','metadata':{'name':'nvidia-device-plugin-b','namespace':'gpu-operator',"
        "'uid':'p1'},'spec':{'nodeName':'g1','containers':[{'name':'c'}]},'status':{'phase':"
        "'Running','conditions':[{'type':'Ready','status':'False'}],'containerStatuses':[{"
        "'name':'c','ready':false,'state':{'waiting':{'reason':'CrashLoopBackOff'}}}]}}]");
    assert_string_equal(str(r, "layer"), "device-plugin");
    const json_t *gone = step(r, "gpus-gone");
    assert_non_null(gone);
    assert_string_equal(str(gone, "target"), "g1");
    assert_string_equal(str(step(r, "plugin-log"), "target"),
                        "gpu-operator/nvidia-device-plugin-b");
    assert_null(step(r, "containerd-check"));
    json_decref(r);
}

/* CDI on (gpu-node-facts.md 3.4): the plugin's RuntimeClass nvidia-cdi names
 * a handler the nodes' containerd does not load; the sandbox event says so,
 * and the check to run is for that handler, not for nvidia. */
static void test_cdi_handler_missing(void **state)
{
    (void)state;
    json_t *r = snapshot_report("field-cdi-handler-missing.json", "gpu-lab", "cuda-probe");
    assert_string_equal(str(r, "layer"), "runtime-handler");
    const json_t *check = step(r, "containerd-check");
    assert_non_null(check);
    assert_string_equal(arg(check, 1), "nvidia-cdi");
    assert_non_null(strstr(str(r, "verdict"), "no runtime for \"nvidia-cdi\" is configured"));
    json_decref(r);
    /* The event's word wins: a RuntimeClass "gpu" that was not read, whose
     * handler the sandbox event names. */
    r = generated(
        GPU_POD,
        "[{'kind':'Node','metadata':{'name':'g0'},'status':{}},"
        "{'kind':'Pod','metadata':{'name':'nvidia-device-plugin-x','namespace':'gpu-operator',"
        "'uid':'p1'},'spec':{'nodeName':'g0','runtimeClassName':'gpu','containers':[{'name':"
        "'c'}]},'status':{'phase':'Pending'}},"
        "{'kind':'Event','involvedObject':{'kind':'Pod','name':'nvidia-device-plugin-x',"
        "'namespace':'gpu-operator','uid':'p1'},'reason':'FailedCreatePodSandBox','type':"
        "'Warning','message':'Failed to create pod sandbox: rpc error: code = Unknown desc = "
        "failed to get sandbox runtime: no runtime for \\\"nvidia-cdi\\\" is configured'}]");
    assert_string_equal(arg(step(r, "containerd-check"), 1), "nvidia-cdi");
    json_decref(r);
}

/* renameByDefault (1.4): the pod asks for plain nvidia.com/gpu, the node
 * serves nvidia.com/gpu.shared: the name, not a lost plugin. */
static void test_renamed_resource(void **state)
{
    (void)state;
    json_t *r = snapshot_report("field-renamed.json", "gpu-lab", "cuda-probe");
    assert_string_equal(str(r, "layer"), "resource-name");
    const json_t *s = step(r, "resource-renamed");
    assert_string_equal(arg(s, 0), "lab-node-0");
    assert_string_equal(arg(s, 2), "nvidia.com/gpu.shared");
    assert_null(step(r, "gpus-lost"));
    const json_t *n0 = json_array_get(json_object_get(r, "nodes"), 0);
    assert_string_equal(str(json_object_get(n0, "other_resources"), "nvidia.com/gpu.shared"), "16");
    /* the pod that asks for the shared name is scheduled there */
    json_t *shared = snapshot_report("field-renamed.json", "gpu-lab", "shared-probe");
    assert_string_equal(str(shared, "layer"), "none");
    json_decref(shared);
    json_decref(r);
}

/* MIG mixed (2.3): plain nvidia.com/gpu is not served by a MIG node. */
static void test_mig_resource_name(void **state)
{
    (void)state;
    json_t *items = load_items("field-mig.json");
    json_t *pod = sq_load(GPU_POD);
    json_t *r = analyze(items, pod, 0);
    assert_string_equal(str(r, "layer"), "resource-name");
    const json_t *s = step(r, "resource-mig");
    assert_non_null(strstr(arg(s, 1), "nvidia.com/mig-3g.20gb=12"));
    json_decref(r);
    json_decref(pod);
    json_decref(items);
}

#define SCHEDULED_FALSE(msg)                                                                       \
    "'status':{'phase':'Pending','conditions':[{'type':'PodScheduled','status':'False',"           \
    "'reason':'Unschedulable','message':'" msg "'}]}"

/* k8s-cases/real-1.32.13 "gpu-wrong-toleration-effect": the pod tolerates
 * nvidia.com/gpu for NoExecute, the node's taint is NoSchedule. The
 * placement shows both as kubectl describe prints them, and the fix is the
 * toleration that matches, added to the live pod with kubectl patch. */
static void test_placement_taint(void **state)
{
    (void)state;
    json_t *r = generated(
        "{'kind':'Pod','metadata':{'name':'p','namespace':'ml'},'spec':{'tolerations':[{'key':"
        "'nvidia.com/gpu','operator':'Exists','effect':'NoExecute'},{'key':"
        "'node.kubernetes.io/not-ready','operator':'Exists','effect':'NoExecute',"
        "'tolerationSeconds':300}],'containers':[{'name':'c','resources':{'limits':{"
        "'nvidia.com/gpu':'1'}}}]}," SCHEDULED_FALSE(
            "0/1 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}. "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.") "}",
        "[{'kind':'Node','metadata':{'name':'a','labels':{'kubernetes.io/hostname':'a'}},'spec':{"
        "'taints':[{'key':'nvidia.com/gpu','value':'present','effect':'NoSchedule'}]},'status':{"
        "'allocatable':{'nvidia.com/gpu':'8'}}}]");
    assert_string_equal(str(r, "layer"), "scheduler");
    const json_t *p = json_object_get(r, "placement");
    const json_t *tols = json_object_get(json_object_get(p, "pod"), "tolerations");
    assert_string_equal(json_string_value(json_array_get(tols, 0)),
                        "node.kubernetes.io/not-ready:NoExecute op=Exists for 300s");
    assert_string_equal(json_string_value(json_array_get(tols, 1)),
                        "nvidia.com/gpu:NoExecute op=Exists");
    const json_t *a = json_array_get(json_object_get(p, "nodes"), 0);
    assert_string_equal(json_string_value(json_array_get(json_object_get(a, "untolerated"), 0)),
                        "nvidia.com/gpu=present:NoSchedule");
    const json_t *fix = json_object_get(p, "fix");
    assert_string_equal(str(fix, "yaml"), "tolerations:\n- key: nvidia.com/gpu\n  operator: "
                                          "Equal\n  value: \"present\"\n  effect: NoSchedule\n");
    assert_non_null(strstr(str(fix, "command"), "kubectl patch pod -n ml p --type=json"));
    assert_non_null(step(r, "fix-spec"));
    char *text = an_why_pending_render(r, AN_TEXT);
    assert_non_null(strstr(text, "    Taints:         nvidia.com/gpu=present:NoSchedule\n"));
    assert_non_null(strstr(text, "Suggested fix, in the pod itself"));
    free(text);
    json_decref(r);
}

/* A Pending pod (written with single quotes) whose PodScheduled condition
 * says `message` (written as it is: the scheduler's words hold quotes). */
static json_t *pending_with(const char *pod, const char *message)
{
    json_t *p = sq_load(pod);
    json_object_set_new(p, "status",
                        json_pack("{s:s, s:[{s:s, s:s, s:s, s:s}]}", "phase", "Pending",
                                  "conditions", "type", "PodScheduled", "status", "False", "reason",
                                  "Unschedulable", "message", message));
    return p;
}

static json_t *generated_pod(json_t *pod, const char *items)
{
    json_t *it = sq_load(items);
    json_t *r = analyze(it, pod, 0);
    json_decref(pod);
    json_decref(it);
    return r;
}

#define JOB_POD(gpus)                                                                              \
    "{'kind':'Pod','metadata':{'name':'p','namespace':'ml','ownerReferences':[{'kind':'Job',"      \
    "'name':'train','controller':true,'uid':'j1'}]},'spec':{'nodeSelector':{"                      \
    "'nvidia.com/gpu.product':'NVIDIA-H100-80GB-HBM3'},'containers':[{'name':'c','resources':{"    \
    "'limits':{'nvidia.com/gpu':'" gpus "'}}}]}}"

/* A node that is down carries node.kubernetes.io/unreachable: the fix
 * tolerates the GPU taint, never the lifecycle one (the node is what needs
 * fixing then). */
static void test_placement_skips_lifecycle_taints(void **state)
{
    (void)state;
    json_t *r = generated_pod(
        pending_with("{'kind':'Pod','metadata':{'name':'p','namespace':'ml'},'spec':{"
                     "'containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpu':'1'}}}]}}",
                     "0/1 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: "
                     "present}."),
        "[{'kind':'Node','metadata':{'name':'a'},'spec':{'taints':[{'key':'nvidia.com/gpu',"
        "'value':'present','effect':'NoSchedule'},{'key':'node.kubernetes.io/unreachable',"
        "'effect':'NoSchedule'}]},'status':{'allocatable':{'nvidia.com/gpu':'8'}}}]");
    const json_t *p = json_object_get(r, "placement");
    const json_t *a = json_array_get(json_object_get(p, "nodes"), 0);
    assert_int_equal(json_array_size(json_object_get(a, "untolerated")), 2);
    const char *yaml = str(json_object_get(p, "fix"), "yaml");
    assert_non_null(strstr(yaml, "- key: nvidia.com/gpu\n"));
    assert_null(strstr(yaml, "unreachable"));
    json_decref(r);
}

/* "gpu-product-selector": the selector wants the H100 node, which has too
 * few GPUs; the A100 node has another product. No selector change is
 * right (a node satisfies it), so no fix; the mismatch is shown. */
static void test_placement_selector(void **state)
{
    (void)state;
    json_t *r = generated_pod(
        pending_with(JOB_POD("8"),
                     "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't "
                     "match Pod's node affinity/selector. preemption: 0/2 nodes are available: 1 "
                     "No preemption victims found for incoming pod, 1 Preemption is not helpful "
                     "for scheduling."),
        "[{'kind':'Node','metadata':{'name':'a','labels':{'nvidia.com/gpu.product':"
        "'NVIDIA-A100-SXM4-40GB'}},'status':{'allocatable':{'nvidia.com/gpu':'4'}}},"
        "{'kind':'Node','metadata':{'name':'b','labels':{'nvidia.com/gpu.product':"
        "'NVIDIA-H100-80GB-HBM3'}},'status':{'allocatable':{'nvidia.com/gpu':'4'}}}]");
    const json_t *p = json_object_get(r, "placement");
    assert_non_null(p);
    const json_t *a = json_array_get(json_object_get(p, "nodes"), 0);
    assert_string_equal(json_string_value(json_array_get(json_object_get(a, "mismatches"), 0)),
                        "nodeSelector nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3: the node has "
                        "NVIDIA-A100-SXM4-40GB");
    assert_true(json_is_true(
        json_object_get(json_array_get(json_object_get(p, "nodes"), 1), "selector_matches")));
    assert_true(json_is_null(json_object_get(p, "fix")));
    json_decref(r);
    /* With only the A100 node, the selector is the mismatch: set it to the
     * node's product, in the Job's pod template. */
    r = generated_pod(
        pending_with(JOB_POD("1"), "0/1 nodes are available: 1 node(s) didn't match Pod's node "
                                   "affinity/selector. preemption: 0/1 nodes are available: 1 "
                                   "Preemption is not helpful for scheduling."),
        "[{'kind':'Node','metadata':{'name':'a','labels':{'nvidia.com/gpu.product':"
        "'NVIDIA-A100-SXM4-40GB'}},'status':{'allocatable':{'nvidia.com/gpu':'4'}}}]");
    const json_t *fix = json_object_get(json_object_get(r, "placement"), "fix");
    assert_string_equal(str(fix, "yaml"),
                        "nodeSelector:\n  nvidia.com/gpu.product: \"NVIDIA-A100-SXM4-40GB\"\n");
    assert_string_equal(str(fix, "where"), "the pod template (spec.template.spec) of Job ml/train");
    json_decref(r);
}

/* `--all`: every Pending GPU pod, grouped by cause, each with the layer a
 * one-pod report gives it. */
static void test_all_pending_grouped(void **state)
{
    (void)state;
    json_t *items = load_items("field-renamed.json");
    json_t *extra = sq_load(
        "[{'kind':'Pod','metadata':{'name':'cuda-probe-2','namespace':'gpu-lab','uid':'x2'},"
        "'spec':{'containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpu':'1'}}}]},"
        "'status':{'phase':'Pending','conditions':[{'type':'PodScheduled','status':'False',"
        "'reason':'Unschedulable','message':'0/3 nodes are available: 3 Insufficient "
        "nvidia.com/gpu.'}]}},"
        "{'kind':'Pod','metadata':{'name':'big','namespace':'gpu-lab','uid':'x3'},"
        "'spec':{'containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpu.shared':"
        "'20'}}}]},'status':{'phase':'Pending','conditions':[{'type':'PodScheduled','status':"
        "'False','reason':'Unschedulable','message':'0/3 nodes are available: 1 Insufficient "
        "nvidia.com/gpu.shared, 2 Insufficient nvidia.com/gpu.shared.'}]}}]");
    json_array_extend(items, extra);
    json_decref(extra);
    /* The same layer for another reason: a selector no node matches. */
    json_t *picky = pending_with(
        "{'kind':'Pod','metadata':{'name':'picky','namespace':'gpu-lab','uid':'x4'},'spec':{"
        "'nodeSelector':{'pool':'h100'},'containers':[{'name':'c','resources':{'limits':{"
        "'nvidia.com/gpu.shared':'1'}}}]}}",
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.");
    json_array_append_new(items, picky);
    gp_error err = {0};
    json_t *r[2];
    for (int backwards = 0; backwards < 2; backwards++) {
        an_pending_all *b = an_pending_all_new(&err);
        assert_non_null(b);
        size_t n = json_array_size(items);
        for (size_t i = 0; i < n; i++) {
            const json_t *it = json_array_get(items, backwards ? n - 1 - i : i);
            const char *kind = str(it, "kind");
            if (strcmp(kind, "Node") == 0) an_pending_all_add_node(b, it);
            if (strcmp(kind, "Pod") == 0) an_pending_all_add_pod(b, it);
            if (strcmp(kind, "Event") == 0) an_pending_all_add_event(b, it);
        }
        r[backwards] = an_pending_all_finish(b, &err);
        assert_non_null(r[backwards]);
        an_pending_all_free(b);
    }
    assert_json_equal(r[1], r[0]);
    assert_int_equal(json_integer_value(json_object_get(r[0], "pods")), 4);
    const json_t *groups = json_object_get(r[0], "groups");
    assert_int_equal(json_array_size(groups), 3);
    const json_t *g0 = json_array_get(groups, 0), *g1 = json_array_get(groups, 1);
    assert_string_equal(str(g0, "layer"), "resource-name");
    assert_int_equal(json_integer_value(json_object_get(g0, "count")), 2);
    assert_string_equal(json_string_value(json_array_get(json_object_get(g0, "pods"), 0)),
                        "gpu-lab/cuda-probe");
    assert_string_equal(str(g1, "layer"), "scheduler");
    assert_string_equal(str(g1, "blocker"), "insufficient-nvidia.com/gpu.shared");
    const json_t *g2 = json_array_get(groups, 2);
    assert_string_equal(str(g2, "blocker"), "node-affinity");
    /* the one-pod report says the same of each */
    json_t *one = analyze(items, find_pod(items, "gpu-lab", "big"), 0);
    assert_string_equal(str(one, "layer"), "scheduler");
    json_decref(one);
    char *lab = an_pending_all_render(r[0], AN_LAB);
    assert_string_equal(lab, "LAYER=resource-name BLOCKER=insufficient-nvidia.com/gpu PODS=2\n"
                             "LAYER=scheduler BLOCKER=insufficient-nvidia.com/gpu.shared PODS=1\n"
                             "LAYER=scheduler BLOCKER=node-affinity PODS=1\n");
    free(lab);
    json_decref(r[0]);
    json_decref(r[1]);
    json_decref(items);
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
        cmocka_unit_test(test_shortfall_is_the_lost_node),
        cmocka_unit_test(test_runtime_down_comes_first),
        cmocka_unit_test(test_not_a_pod),
        cmocka_unit_test(test_incident_never_registered),
        cmocka_unit_test(test_cdi_handler_missing),
        cmocka_unit_test(test_renamed_resource),
        cmocka_unit_test(test_mig_resource_name),
        cmocka_unit_test(test_placement_taint),
        cmocka_unit_test(test_placement_selector),
        cmocka_unit_test(test_placement_skips_lifecycle_taints),
        cmocka_unit_test(test_all_pending_grouped),
    };
    return cmocka_run_group_tests_name("analyze_why_pending", tests, NULL, NULL);
}
