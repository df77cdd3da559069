/* The fake kubelet's patches (k8s-semantics 7, 9): kwok's node-initialize,
 * node-heartbeat, pod-ready and pod-delete stages, and a sandbox that
 * containerd refuses (the node lifecycle controller's NodeStatusUnknown is
 * test_controllers_node_lifecycle.c's).
 *
 * Expected bodies come from the design document's tables and kwok's stage
 * files; where a patch meets the rest of the control plane it is applied
 * with the project's strategic merge patch (what the API server does with
 * it) and printed with the API server's Table code, so the test reads what
 * `kubectl get` would: "1/1 Running", "Ready", "ContainerCreating".
 *
 * Objects are JSON written with ' for ". Every case runs at NOW. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/kubelet_internal.h"
#include "apiserver/table.h"
#include "kube/patch.h"
#include "kube/smp.h"

#define NOW      ((time_t)1735725600) /* 2025-01-01T10:00:00Z */
#define NOW_TEXT "2025-01-01T10:00:00Z"
#define LATER    ((time_t)1735725630) /* 30 s later */

/* ---- fixtures ---- */

/* kwokctl's node template (7.1): labels, the fake annotation, a pod CIDR, no
 * status yet. */
#define BARE_NODE                                                                                  \
    "{'apiVersion':'v1','kind':'Node','metadata':{'name':'lab-node-0','uid':'node-uid-0',"         \
    "'creationTimestamp':'2025-01-01T09:00:00Z','labels':{'beta.kubernetes.io/arch':'amd64',"      \
    "'beta.kubernetes.io/os':'linux','kubernetes.io/arch':'amd64','kubernetes.io/hostname':"       \
    "'lab-node-0','kubernetes.io/os':'linux','kubernetes.io/role':'agent',"                        \
    "'node-role.kubernetes.io/agent':'','type':'kwok'},'annotations':{'kwok.x-k8s.io/node':"       \
    "'fake','node.alpha.kubernetes.io/ttl':'0'}},'spec':{'podCIDR':'10.244.0.0/24'},'status':{}}"

/* The recommended lab node (7.1): capacity = allocatable, addresses and a
 * kubeletVersion of its own, not yet Ready. */
#define LAB_NODE                                                                                   \
    "{'apiVersion':'v1','kind':'Node','metadata':{'name':'lab-node-1','uid':'node-uid-1',"         \
    "'creationTimestamp':'2025-01-01T09:00:00Z','annotations':{'kwok.x-k8s.io/node':'fake'}},"     \
    "'spec':{'podCIDR':'10.244.1.0/24'},'status':{'capacity':{'cpu':'32','memory':'32Gi',"         \
    "'pods':'110'},'allocatable':{'cpu':'32','memory':'32Gi','pods':'110'},'addresses':["          \
    "{'type':'InternalIP','address':'172.18.0.11'},{'type':'Hostname','address':'lab-node-1'}],"   \
    "'nodeInfo':{'kubeletVersion':'v1.32.0-kwok','architecture':'amd64',"                          \
    "'operatingSystem':'linux'}}}"

/* cuda-probe after binding (9): PodScheduled True, phase Pending. */
#define CUDA_PROBE                                                                                 \
    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'cuda-probe','namespace':'gpu-lab',"       \
    "'uid':'pod-uid-1','creationTimestamp':'2025-01-01T09:59:00Z'},'spec':{'containers':[{"        \
    "'name':'cuda-probe','image':'nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04',"                   \
    "'resources':{'limits':{'nvidia.com/gpu':'1'},'requests':{'nvidia.com/gpu':'1'}}}],"           \
    "'nodeName':'lab-node-1','runtimeClassName':'nvidia','restartPolicy':'Always'},"               \
    "'status':{'phase':'Pending','qosClass':'BestEffort','conditions':[{'type':'PodScheduled',"    \
    "'status':'True','lastProbeTime':null,'lastTransitionTime':'2025-01-01T09:59:30Z'}]}}"

#define NVIDIA_RC                                                                                  \
    "{'apiVersion':'node.k8s.io/v1','kind':'RuntimeClass','metadata':{'name':'nvidia'},"           \
    "'handler':'nvidia'}"

/* ---- helpers ---- */

static json_t *apply(const json_t *obj, const json_t *patch, const char *kind)
{
    assert_non_null(patch);
    gp_error err = {0};
    json_t *out = kube_strategic_merge_patch(obj, patch, kind, &err);
    if (!out) print_error("patch refused: %s\n", err.text);
    assert_non_null(out);
    return out;
}

/* Cell `col` of the Table row `kubectl get` prints for obj. */
static char *cell(const char *kind, const json_t *obj, size_t col)
{
    json_t *table = as_table("", kind, (json_t *const *)&obj, 1, false, NULL, NOW);
    assert_non_null(table);
    const json_t *cells =
        json_object_get(json_array_get(json_object_get(table, "rows"), 0), "cells");
    const char *text = json_string_value(json_array_get(cells, col));
    assert_non_null(text);
    char *copy = strdup(text);
    json_decref(table);
    return copy;
}

static void assert_cell(const char *kind, const json_t *obj, size_t col, const char *want)
{
    char *got = cell(kind, obj, col);
    assert_string_equal(got, want);
    free(got);
}

enum { POD_READY = 1, POD_STATUS = 2, POD_IP = 5, POD_NODE = 6 };
enum { NODE_STATUS = 1, NODE_VERSION = 4, NODE_INTERNAL_IP = 5 };

static const json_t *at(const json_t *v, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *tok = strtok(buf, "."); tok && v; tok = strtok(NULL, ".")) {
        char *end;
        long i = strtol(tok, &end, 10);
        v = *end == '\0' && json_is_array(v) ? json_array_get(v, (size_t)i)
                                             : json_object_get(v, tok);
    }
    return v;
}

static const char *str_at(const json_t *v, const char *path)
{
    return json_string_value(at(v, path));
}

static void assert_str_at(const json_t *v, const char *path, const char *want)
{
    const char *got = str_at(v, path);
    if (!got || strcmp(got, want) != 0)
        print_error("%s: expected \"%s\", got \"%s\"\n", path, want, got ? got : "(none)");
    assert_non_null(got);
    assert_string_equal(got, want);
}

static void assert_condition_types(const json_t *obj, const char *const *types, size_t n)
{
    const json_t *conds = at(obj, "status.conditions");
    assert_int_equal(json_array_size(conds), n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(conds, i), "type")),
                            types[i]);
}

static const json_t *condition(const json_t *obj, const char *type)
{
    size_t i;
    const json_t *c;
    json_array_foreach(at(obj, "status.conditions"), i, c)
    {
        if (!strcmp(json_string_value(json_object_get(c, "type")), type)) return c;
    }
    return NULL;
}

static bool is_hex64(const char *s)
{
    if (strlen(s) != 64) return false;
    for (; *s; s++)
        if (!strchr("0123456789abcdef", *s)) return false;
    return true;
}

/* "<prefix><64 hex>" */
static void assert_digest_ref(const char *got, const char *prefix)
{
    assert_non_null(got);
    size_t n = strlen(prefix);
    if (strncmp(got, prefix, n) != 0) print_error("expected %s<hex>, got %s\n", prefix, got);
    assert_int_equal(strncmp(got, prefix, n), 0);
    assert_true(is_hex64(got + n));
}

/* ---- nodes ---- */

static void test_manages_only_fake_nodes(void **state)
{
    (void)state;
    json_t *fake = sq_load(BARE_NODE);
    json_t *real = sq_load("{'metadata':{'name':'n','annotations':{'kwok.x-k8s.io/node':'real'}}}");
    json_t *plain = sq_load("{'metadata':{'name':'n'}}");
    assert_true(ctl_kubelet_manages(fake));
    assert_false(ctl_kubelet_manages(real));
    assert_false(ctl_kubelet_manages(plain));
    assert_false(ctl_kubelet_manages(NULL));
    json_decref(fake);
    json_decref(real);
    json_decref(plain);
}

/* 7.1: the five conditions in kwok's order and words, heartbeat now,
 * transition at creation; kwok's addresses and resource defaults; no
 * nodeInfo when the node has none. */
static void test_node_init_on_bare_node(void **state)
{
    (void)state;
    json_t *node = sq_load(BARE_NODE);
    json_t *patch = ctl_kubelet_node_init(node, "172.18.0.10", NOW);
    json_t *want = sq_load(
        "{'status':{'conditions':["
        "{'lastHeartbeatTime':'" NOW_TEXT "','lastTransitionTime':'2025-01-01T09:00:00Z',"
        "'message':'kubelet is posting ready status','reason':'KubeletReady','status':'True',"
        "'type':'Ready'},"
        "{'lastHeartbeatTime':'" NOW_TEXT "','lastTransitionTime':'2025-01-01T09:00:00Z',"
        "'message':'kubelet has sufficient memory available','reason':'KubeletHasSufficientMemory',"
        "'status':'False','type':'MemoryPressure'},"
        "{'lastHeartbeatTime':'" NOW_TEXT "','lastTransitionTime':'2025-01-01T09:00:00Z',"
        "'message':'kubelet has no disk pressure','reason':'KubeletHasNoDiskPressure',"
        "'status':'False','type':'DiskPressure'},"
        "{'lastHeartbeatTime':'" NOW_TEXT "','lastTransitionTime':'2025-01-01T09:00:00Z',"
        "'message':'kubelet has sufficient PID available','reason':'KubeletHasSufficientPID',"
        "'status':'False','type':'PIDPressure'},"
        "{'lastHeartbeatTime':'" NOW_TEXT "','lastTransitionTime':'2025-01-01T09:00:00Z',"
        "'message':'RouteController created a route','reason':'RouteCreated','status':'False',"
        "'type':'NetworkUnavailable'}],"
        "'addresses':[{'address':'172.18.0.10','type':'InternalIP'},"
        "{'address':'lab-node-0','type':'Hostname'}],"
        "'daemonEndpoints':{'kubeletEndpoint':{'Port':10250}},"
        "'allocatable':{'cpu':'1k','memory':'1Ti','pods':'1M'},"
        "'capacity':{'cpu':'1k','memory':'1Ti','pods':'1M'},"
        "'phase':'Running'}}");
    assert_json_equal(patch, want);

    json_t *ready = apply(node, patch, "Node");
    assert_cell("Node", ready, NODE_STATUS, "Ready");
    assert_cell("Node", ready, NODE_INTERNAL_IP, "172.18.0.10");
    assert_null(ctl_kubelet_node_init(ready, "172.18.0.10", LATER)); /* Ready: nothing to do */
    json_decref(ready);
    json_decref(want);
    json_decref(patch);
    json_decref(node);
}

/* What the node has is kept; nodeInfo is filled field by field. */
static void test_node_init_keeps_what_is_set(void **state)
{
    (void)state;
    json_t *node = sq_load(LAB_NODE);
    json_t *patch = ctl_kubelet_node_init(node, "10.9.9.9", NOW);
    assert_non_null(patch);
    const json_t *st = json_object_get(patch, "status");
    assert_null(json_object_get(st, "addresses"));
    assert_null(json_object_get(st, "capacity"));
    assert_null(json_object_get(st, "allocatable"));
    json_t *info = sq_load("{'architecture':'amd64','bootID':'','containerRuntimeVersion':"
                           "'kwok-v0.6.1','kernelVersion':'kwok-v0.6.1','kubeProxyVersion':"
                           "'kwok-v0.6.1','kubeletVersion':'v1.32.0-kwok','machineID':'',"
                           "'operatingSystem':'linux','osImage':'','systemUUID':''}");
    assert_json_equal(json_object_get(st, "nodeInfo"), info);

    json_t *ready = apply(node, patch, "Node");
    assert_cell("Node", ready, NODE_STATUS, "Ready");
    assert_cell("Node", ready, NODE_VERSION, "v1.32.0-kwok");
    assert_cell("Node", ready, NODE_INTERNAL_IP, "172.18.0.11");
    assert_str_at(ready, "status.capacity.memory", "32Gi");
    json_decref(ready);
    json_decref(info);
    json_decref(patch);
    json_decref(node);
}

static void test_node_init_skips_unmanaged(void **state)
{
    (void)state;
    json_t *node = sq_load("{'metadata':{'name':'real-node'},'status':{}}");
    assert_null(ctl_kubelet_node_init(node, "10.0.0.1", NOW));
    assert_null(ctl_kubelet_node_heartbeat(node, NOW));
    json_decref(node);
}

static json_t *ready_node(const char *node_sq)
{
    json_t *node = sq_load(node_sq);
    json_t *patch = ctl_kubelet_node_init(node, "172.18.0.10", NOW);
    json_t *ready = apply(node, patch, "Node");
    json_decref(patch);
    json_decref(node);
    return ready;
}

/* 7.1 node-heartbeat: only lastHeartbeatTime moves. */
static void test_heartbeat_keeps_transition_times(void **state)
{
    (void)state;
    json_t *node = ready_node(BARE_NODE);
    json_t *patch = ctl_kubelet_node_heartbeat(node, LATER);
    json_t *beat = apply(node, patch, "Node");
    const json_t *before = at(node, "status.conditions"), *after = at(beat, "status.conditions");
    assert_int_equal(json_array_size(after), 5);
    for (size_t i = 0; i < 5; i++) {
        json_t *c = json_deep_copy(json_array_get(before, i));
        json_object_set_new(c, "lastHeartbeatTime", json_string("2025-01-01T10:00:30Z"));
        assert_json_equal(json_array_get(after, i), c);
        json_decref(c);
    }
    assert_cell("Node", beat, NODE_STATUS, "Ready");
    json_decref(beat);
    json_decref(patch);
    json_decref(node);
}

/* ---- pods: ready ---- */

/* 7.2 and 9: the pod-ready patch, then what the API server stores. */
static void test_pod_ready_patch(void **state)
{
    (void)state;
    json_t *node = ready_node(LAB_NODE);
    json_t *pod = sq_load(CUDA_PROBE);
    json_t *patch = ctl_kubelet_pod_ready(pod, node, 0, NOW);
    assert_non_null(patch);
    const char *const kubelet_types[] = {"PodReadyToStartContainers", "Initialized", "Ready",
                                         "ContainersReady"};
    assert_condition_types(patch, kubelet_types, 4);
    for (size_t i = 0; i < 4; i++) {
        const json_t *c = json_array_get(at(patch, "status.conditions"), i);
        assert_str_at(c, "status", "True");
        assert_str_at(c, "lastTransitionTime", NOW_TEXT);
        assert_true(json_is_null(json_object_get(c, "lastProbeTime")));
    }
    const json_t *cs = at(patch, "status.containerStatuses");
    assert_int_equal(json_array_size(cs), 1);
    const json_t *c0 = json_array_get(cs, 0);
    assert_str_at(c0, "name", "cuda-probe");
    assert_str_at(c0, "image", "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04");
    assert_digest_ref(str_at(c0, "imageID"), "nvcr.io/nvidia/cuda@sha256:");
    assert_digest_ref(str_at(c0, "containerID"), "containerd://");
    assert_true(json_is_true(json_object_get(c0, "ready")));
    assert_true(json_is_true(json_object_get(c0, "started")));
    assert_int_equal(json_integer_value(json_object_get(c0, "restartCount")), 0);
    assert_int_equal(json_object_size(json_object_get(c0, "lastState")), 0);
    assert_true(json_is_object(json_object_get(c0, "lastState")));
    assert_str_at(c0, "state.running.startedAt", NOW_TEXT);
    assert_null(at(patch, "status.initContainerStatuses"));
    assert_str_at(patch, "status.hostIP", "172.18.0.11");
    assert_str_at(patch, "status.hostIPs.0.ip", "172.18.0.11");
    assert_str_at(patch, "status.podIP", "10.244.1.1");
    assert_str_at(patch, "status.podIPs.0.ip", "10.244.1.1");
    assert_str_at(patch, "status.phase", "Running");
    assert_str_at(patch, "status.startTime", NOW_TEXT);
    json_decref(patch);
    json_decref(pod);
    json_decref(node);
}

/* Applied with SMP, PodScheduled stays (merge by type) and kubectl reads
 * "1/1 Running" (9). */
static void test_pod_ready_applied_keeps_pod_scheduled(void **state)
{
    (void)state;
    json_t *node = ready_node(LAB_NODE);
    json_t *pod = sq_load(CUDA_PROBE);
    assert_cell("Pod", pod, POD_READY, "0/1");
    assert_cell("Pod", pod, POD_STATUS, "Pending");
    json_t *patch = ctl_kubelet_pod_ready(pod, node, 0, NOW);
    json_t *running = apply(pod, patch, "Pod");
    const char *const types[] = {"PodReadyToStartContainers", "Initialized", "Ready",
                                 "ContainersReady", "PodScheduled"};
    assert_condition_types(running, types, 5);
    for (size_t i = 0; i < 5; i++)
        assert_str_at(condition(running, types[i]), "status", "True");
    assert_str_at(condition(running, "PodScheduled"), "lastTransitionTime", "2025-01-01T09:59:30Z");
    assert_cell("Pod", running, POD_READY, "1/1");
    assert_cell("Pod", running, POD_STATUS, "Running");
    assert_cell("Pod", running, POD_IP, "10.244.1.1");
    assert_cell("Pod", running, POD_NODE, "lab-node-1");
    assert_str_at(running, "status.qosClass", "BestEffort");
    /* It has a podIP now: pod-ready does not fire twice. */
    assert_null(ctl_kubelet_pod_ready(running, node, 1, LATER));
    json_decref(running);
    json_decref(patch);
    json_decref(pod);
    json_decref(node);
}

static void test_pod_ready_not_applicable(void **state)
{
    (void)state;
    json_t *node = ready_node(LAB_NODE);
    json_t *deleting = sq_load(CUDA_PROBE);
    json_object_set_new(json_object_get(deleting, "metadata"), "deletionTimestamp",
                        json_string(NOW_TEXT));
    json_t *unbound = sq_load(CUDA_PROBE);
    json_object_del(json_object_get(unbound, "spec"), "nodeName");
    json_t *elsewhere = sq_load(CUDA_PROBE);
    json_object_set_new(json_object_get(elsewhere, "spec"), "nodeName", json_string("lab-node-2"));
    json_t *pod = sq_load(CUDA_PROBE);
    json_t *unmanaged = json_deep_copy(node);
    json_object_del(json_object_get(unmanaged, "metadata"), "annotations");

    assert_null(ctl_kubelet_pod_ready(deleting, node, 0, NOW));
    assert_null(ctl_kubelet_pod_ready(unbound, node, 0, NOW));
    assert_null(ctl_kubelet_pod_ready(elsewhere, node, 0, NOW));
    assert_null(ctl_kubelet_pod_ready(pod, unmanaged, 0, NOW));
    json_decref(unmanaged);
    json_decref(pod);
    json_decref(elsewhere);
    json_decref(unbound);
    json_decref(deleting);
    json_decref(node);
}

static char *pod_ip_for(const char *node_sq, const char *pod_sq, unsigned index)
{
    json_t *node = sq_load(node_sq), *pod = sq_load(pod_sq);
    json_t *patch = ctl_kubelet_pod_ready(pod, node, index, NOW);
    assert_non_null(patch);
    char *ip = strdup(str_at(patch, "status.podIP"));
    json_decref(patch);
    json_decref(pod);
    json_decref(node);
    return ip;
}

/* Every index below the CIDR's host count gets its own address inside it;
 * never the network or broadcast address. */
static void test_pod_ips_distinct_inside_cidr(void **state)
{
    (void)state;
    char *seen[254];
    for (unsigned i = 0; i < 254; i++) {
        seen[i] = pod_ip_for(LAB_NODE, CUDA_PROBE, i);
        struct in_addr a;
        assert_int_equal(inet_pton(AF_INET, seen[i], &a), 1);
        uint32_t host = ntohl(a.s_addr);
        assert_int_equal(host >> 8, (10u << 16) | (244u << 8) | 1u); /* 10.244.1.0/24 */
        assert_true((host & 0xff) != 0 && (host & 0xff) != 255);
        for (unsigned j = 0; j < i; j++)
            assert_string_not_equal(seen[i], seen[j]);
    }
    assert_string_equal(seen[0], "10.244.1.1");
    assert_string_equal(seen[253], "10.244.1.254");
    char *wrapped = pod_ip_for(LAB_NODE, CUDA_PROBE, 254);
    assert_string_equal(wrapped, seen[0]);
    free(wrapped);
    for (unsigned i = 0; i < 254; i++)
        free(seen[i]);
}

/* kwok's pool starts at the address the CIDR is written with: 10.0.0.1 for
 * its default "10.0.0.1/24" (utils.go addIP(cidr.IP, index)). */
static void test_pod_ip_default_cidr_and_ipv6(void **state)
{
    (void)state;
    const char *no_cidr = "{'metadata':{'name':'lab-node-1','annotations':{'kwok.x-k8s.io/node':"
                          "'fake'}},'status':{'addresses':[{'type':'InternalIP','address':"
                          "'172.18.0.11'}]}}";
    const char *v6 = "{'metadata':{'name':'lab-node-1','annotations':{'kwok.x-k8s.io/node':"
                     "'fake'}},'spec':{'podCIDR':'fd00:10:244:1::/64'}}";
    char *a = pod_ip_for(no_cidr, CUDA_PROBE, 0), *b = pod_ip_for(no_cidr, CUDA_PROBE, 1);
    char *c = pod_ip_for(v6, CUDA_PROBE, 0), *d = pod_ip_for(v6, CUDA_PROBE, 1);
    assert_string_equal(a, "10.0.0.1");
    assert_string_equal(b, "10.0.0.2");
    assert_string_equal(c, "fd00:10:244:1::1");
    assert_string_equal(d, "fd00:10:244:1::2");
    free(a);
    free(b);
    free(c);
    free(d);
}

static void test_host_network_pod_gets_node_ip(void **state)
{
    (void)state;
    json_t *pod = sq_load(CUDA_PROBE);
    json_object_set_new(json_object_get(pod, "spec"), "hostNetwork", json_true());
    char *text = json_dumps(pod, JSON_COMPACT);
    for (char *p = text; *p; p++)
        if (*p == '"') *p = '\'';
    char *ip = pod_ip_for(LAB_NODE, text, 5);
    assert_string_equal(ip, "172.18.0.11");
    free(ip);
    free(text);
    json_decref(pod);
}

/* imageID names the repository as containerd resolves it (docker.io and
 * library/ added to short names, the tag dropped, a digest kept); the same
 * image gets the same ID, another image another. */
static void test_image_and_container_ids(void **state)
{
    (void)state;
    json_t *node = ready_node(LAB_NODE);
    json_t *pod = sq_load(
        "{'metadata':{'name':'p','namespace':'gpu-lab','uid':'pod-uid-2'},'spec':{'nodeName':"
        "'lab-node-1','containers':[{'name':'a','image':'nginx:1.25'},{'name':'b','image':"
        "'nginx:1.25'},{'name':'c','image':'registry.k8s.io/pause:3.10'},{'name':'d','image':"
        "'nvidia/k8s-device-plugin:v0.17.0'},{'name':'e','image':'localhost:5000/tool'},"
        "{'name':'f','image':'busybox:1.36@sha256:"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'}]},'status':{}}");
    json_t *patch = ctl_kubelet_pod_ready(pod, node, 0, NOW);
    assert_non_null(patch);
    const json_t *cs = at(patch, "status.containerStatuses");
    assert_int_equal(json_array_size(cs), 6);
    const char *names[] = {"a", "b", "c", "d", "e", "f"};
    for (size_t i = 0; i < 6; i++)
        assert_str_at(json_array_get(cs, i), "name", names[i]); /* spec order */
    assert_digest_ref(str_at(cs, "0.imageID"), "docker.io/library/nginx@sha256:");
    assert_string_equal(str_at(cs, "0.imageID"), str_at(cs, "1.imageID"));
    assert_digest_ref(str_at(cs, "2.imageID"), "registry.k8s.io/pause@sha256:");
    assert_digest_ref(str_at(cs, "3.imageID"), "docker.io/nvidia/k8s-device-plugin@sha256:");
    assert_digest_ref(str_at(cs, "4.imageID"), "localhost:5000/tool@sha256:");
    assert_string_equal(str_at(cs, "5.imageID"),
                        "docker.io/library/busybox@sha256:"
                        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    assert_string_not_equal(strrchr(str_at(cs, "0.imageID"), ':'),
                            strrchr(str_at(cs, "2.imageID"), ':'));
    /* Container IDs differ per container and per pod. */
    assert_string_not_equal(str_at(cs, "0.containerID"), str_at(cs, "1.containerID"));
    json_t *other = json_deep_copy(pod);
    json_object_set_new(json_object_get(other, "metadata"), "uid", json_string("pod-uid-3"));
    json_t *patch2 = ctl_kubelet_pod_ready(other, node, 1, NOW);
    assert_string_not_equal(str_at(cs, "0.containerID"),
                            str_at(patch2, "status.containerStatuses.0.containerID"));
    json_decref(patch2);
    json_decref(other);
    json_decref(patch);
    json_decref(pod);
    json_decref(node);
}

/* kwok pod-ready: a sidecar (restartPolicy Always) runs, any other init
 * container has completed; readiness gates are set True. */
static void test_init_containers_and_readiness_gates(void **state)
{
    (void)state;
    json_t *node = ready_node(LAB_NODE);
    json_t *pod = sq_load(
        "{'metadata':{'name':'p','namespace':'gpu-lab','uid':'pod-uid-4'},'spec':{'nodeName':"
        "'lab-node-1','initContainers':[{'name':'setup','image':'busybox:1.36'},{'name':'proxy',"
        "'image':'envoy:1.30','restartPolicy':'Always'}],'containers':[{'name':'main','image':"
        "'app:1'}],'readinessGates':[{'conditionType':'example.com/gate'}]},'status':{"
        "'phase':'Pending'}}");
    json_t *patch = ctl_kubelet_pod_ready(pod, node, 0, NOW);
    const json_t *init = at(patch, "status.initContainerStatuses");
    assert_int_equal(json_array_size(init), 2);
    assert_str_at(init, "0.name", "setup");
    assert_str_at(init, "0.state.terminated.reason", "Completed");
    assert_int_equal(json_integer_value(at(init, "0.state.terminated.exitCode")), 0);
    assert_str_at(init, "0.state.terminated.startedAt", NOW_TEXT);
    assert_str_at(init, "0.state.terminated.finishedAt", NOW_TEXT);
    assert_str_at(init, "1.name", "proxy");
    assert_str_at(init, "1.state.running.startedAt", NOW_TEXT);
    assert_true(json_is_true(at(init, "1.started")));
    assert_str_at(condition(patch, "example.com/gate"), "status", "True");

    json_t *running = apply(pod, patch, "Pod");
    assert_cell("Pod", running, POD_READY, "2/2"); /* the sidecar counts */
    assert_cell("Pod", running, POD_STATUS, "Running");
    json_decref(running);
    json_decref(patch);
    json_decref(pod);
    json_decref(node);
}

/* ---- pods: a missing runtime handler ---- */

static json_t *node_with_handlers(const char *handlers_sq)
{
    json_t *node = ready_node(LAB_NODE);
    json_object_set_new(json_object_get(node, "status"), "runtimeHandlers", sq_load(handlers_sq));
    return node;
}

static void test_runtime_missing(void **state)
{
    (void)state;
    json_t *node = node_with_handlers("[{'name':''},{'name':'runc'}]");
    json_t *pod = sq_load(CUDA_PROBE), *rc = sq_load(NVIDIA_RC);
    char *note = NULL;
    json_t *patch = ctl_kubelet_pod_runtime_missing(pod, node, rc, NOW, &note);
    assert_non_null(patch);
    assert_non_null(note);
    assert_string_equal(note, "Failed to create pod sandbox: rpc error: code = Unknown desc = "
                              "failed to get sandbox runtime: no runtime for \"nvidia\" is "
                              "configured");
    assert_string_equal(CTL_KUBELET_SANDBOX_EVENT_REASON, "FailedCreatePodSandBox");
    assert_string_equal(CTL_KUBELET_SANDBOX_EVENT_TYPE, "Warning");
    free(note);

    json_t *stuck = apply(pod, patch, "Pod");
    assert_cell("Pod", stuck, POD_READY, "0/1");
    assert_cell("Pod", stuck, POD_STATUS, "ContainerCreating");
    assert_cell("Pod", stuck, POD_IP, "<none>");
    assert_str_at(stuck, "status.phase", "Pending");
    assert_str_at(stuck, "status.hostIP", "172.18.0.11");
    assert_str_at(condition(stuck, "PodScheduled"), "status", "True");
    assert_str_at(condition(stuck, "PodReadyToStartContainers"), "status", "False");
    assert_str_at(condition(stuck, "Initialized"), "status", "True");
    const json_t *ready = condition(stuck, "Ready");
    assert_str_at(ready, "status", "False");
    assert_str_at(ready, "reason", "ContainersNotReady");
    assert_str_at(ready, "message", "containers with unready status: [cuda-probe]");
    assert_str_at(condition(stuck, "ContainersReady"), "message",
                  "containers with unready status: [cuda-probe]");
    assert_str_at(stuck, "status.containerStatuses.0.state.waiting.reason", "ContainerCreating");

    /* The kubelet retries: the status holds, the event repeats. */
    json_t *again = ctl_kubelet_pod_runtime_missing(stuck, node, rc, LATER, &note);
    assert_non_null(again);
    assert_int_equal(json_object_size(again), 0);
    assert_non_null(note);
    free(note);
    json_decref(again);

    /* containerd restarted with the nvidia runtime: the pod comes up, and
     * no stale reason or message is left on its conditions. */
    json_t *fixed = node_with_handlers("[{'name':''},{'name':'nvidia'},{'name':'runc'}]");
    assert_null(ctl_kubelet_pod_runtime_missing(stuck, fixed, rc, LATER, &note));
    assert_null(note);
    json_t *ready_patch = ctl_kubelet_pod_ready(stuck, fixed, 0, LATER);
    json_t *running = apply(stuck, ready_patch, "Pod");
    assert_cell("Pod", running, POD_READY, "1/1");
    assert_cell("Pod", running, POD_STATUS, "Running");
    assert_null(json_object_get(condition(running, "Ready"), "reason"));
    assert_null(json_object_get(condition(running, "Ready"), "message"));
    assert_str_at(condition(running, "PodScheduled"), "status", "True");

    json_decref(running);
    json_decref(ready_patch);
    json_decref(fixed);
    json_decref(stuck);
    json_decref(patch);
    json_decref(rc);
    json_decref(pod);
    json_decref(node);
}

static void test_runtime_missing_behind_init_containers(void **state)
{
    (void)state;
    json_t *node = node_with_handlers("[{'name':'runc'}]");
    json_t *rc = sq_load(NVIDIA_RC);
    json_t *pod = sq_load(
        "{'metadata':{'name':'p','namespace':'gpu-lab','uid':'pod-uid-5'},'spec':{'nodeName':"
        "'lab-node-1','runtimeClassName':'nvidia','initContainers':[{'name':'setup','image':"
        "'busybox:1.36'}],'containers':[{'name':'main','image':'app:1'}]},'status':{'phase':"
        "'Pending'}}");
    char *note = NULL;
    json_t *patch = ctl_kubelet_pod_runtime_missing(pod, node, rc, NOW, &note);
    json_t *stuck = apply(pod, patch, "Pod");
    assert_cell("Pod", stuck, POD_STATUS, "Init:0/1");
    assert_str_at(condition(stuck, "Initialized"), "reason", "ContainersNotInitialized");
    assert_str_at(condition(stuck, "Initialized"), "message",
                  "containers with incomplete status: [setup]");
    assert_str_at(stuck, "status.containerStatuses.0.state.waiting.reason", "PodInitializing");
    assert_str_at(stuck, "status.initContainerStatuses.0.state.waiting.reason", "PodInitializing");
    free(note);
    json_decref(stuck);
    json_decref(patch);
    json_decref(pod);
    json_decref(rc);
    json_decref(node);
}

static void test_runtime_missing_not_applicable(void **state)
{
    (void)state;
    json_t *with = node_with_handlers("[{'name':'nvidia'},{'name':'runc'}]");
    json_t *silent = ready_node(LAB_NODE); /* no status.runtimeHandlers */
    json_t *without = node_with_handlers("[{'name':'runc'}]");
    json_t *pod = sq_load(CUDA_PROBE), *rc = sq_load(NVIDIA_RC);
    json_t *other_rc = sq_load("{'metadata':{'name':'kata'},'handler':'kata'}");
    json_t *no_rc_pod = sq_load(CUDA_PROBE);
    json_object_del(json_object_get(no_rc_pod, "spec"), "runtimeClassName");
    char *note = (char *)"untouched";

    assert_null(ctl_kubelet_pod_runtime_missing(pod, with, rc, NOW, &note));
    assert_null(note);
    note = (char *)"untouched";
    assert_null(ctl_kubelet_pod_runtime_missing(pod, silent, rc, NOW, &note));
    assert_null(note);
    assert_null(ctl_kubelet_pod_runtime_missing(pod, without, NULL, NOW, &note));
    assert_null(ctl_kubelet_pod_runtime_missing(pod, without, other_rc, NOW, &note));
    assert_null(ctl_kubelet_pod_runtime_missing(no_rc_pod, without, rc, NOW, &note));
    assert_null(note);
    /* Running already (it has an address): it keeps running. */
    json_t *ready_patch = ctl_kubelet_pod_ready(pod, with, 0, NOW);
    json_t *running = apply(pod, ready_patch, "Pod");
    assert_null(ctl_kubelet_pod_runtime_missing(running, without, rc, LATER, &note));
    assert_null(note);
    json_decref(running);
    json_decref(ready_patch);
    json_decref(no_rc_pod);
    json_decref(other_rc);
    json_decref(rc);
    json_decref(pod);
    json_decref(without);
    json_decref(silent);
    json_decref(with);
}

/* ---- pods: delete ---- */

static void test_should_finish_delete(void **state)
{
    (void)state;
    json_t *deleting = sq_load("{'metadata':{'name':'p','deletionTimestamp':'2025-01-01T10:00:30Z',"
                               "'deletionGracePeriodSeconds':30,'finalizers':['example.com/hold']},"
                               "'spec':{'nodeName':'lab-node-1'}}");
    json_t *alive = sq_load("{'metadata':{'name':'p'},'spec':{'nodeName':'lab-node-1'}}");
    json_t *unbound = sq_load("{'metadata':{'name':'p','deletionTimestamp':"
                              "'2025-01-01T10:00:30Z'},'spec':{}}");
    json_t *null_ts = sq_load("{'metadata':{'name':'p','deletionTimestamp':null},"
                              "'spec':{'nodeName':'lab-node-1'}}");
    assert_true(ctl_kubelet_should_finish_delete(deleting));
    assert_false(ctl_kubelet_should_finish_delete(alive));
    assert_false(ctl_kubelet_should_finish_delete(unbound));
    assert_false(ctl_kubelet_should_finish_delete(null_ts));

    json_t *patch = ctl_kubelet_pod_finalizers_patch(deleting);
    json_t *want = sq_load("{'metadata':{'finalizers':null}}");
    assert_json_equal(patch, want);
    json_t *emptied = kube_merge_patch(deleting, patch);
    assert_null(json_object_get(json_object_get(emptied, "metadata"), "finalizers"));
    assert_str_at(emptied, "metadata.deletionTimestamp", "2025-01-01T10:00:30Z");
    json_decref(emptied);
    assert_null(ctl_kubelet_pod_finalizers_patch(alive));
    json_decref(want);
    json_decref(patch);
    json_decref(null_ts);
    json_decref(unbound);
    json_decref(alive);
    json_decref(deleting);
}

/* A kubelet back after being down: a pod marked not ready by the node
 * lifecycle controller is Ready again; nothing for anything else. */
static void test_pod_ready_again(void **state)
{
    (void)state;
    json_t *node = ready_node(LAB_NODE);
    json_t *pod = sq_load(CUDA_PROBE);
    json_t *patch = ctl_kubelet_pod_ready(pod, node, 0, NOW);
    json_t *running = apply(pod, patch, "Pod");
    json_decref(patch);
    assert_null(ctl_kubelet_pod_ready_again(running, node, LATER)); /* Ready already */
    json_t *marked = json_deep_copy(running);
    json_object_set_new((json_t *)condition(marked, "Ready"), "status", json_string("False"));
    patch = ctl_kubelet_pod_ready_again(marked, node, LATER);
    json_t *again = apply(marked, patch, "Pod");
    assert_str_at(condition(again, "Ready"), "status", "True");
    assert_str_at(condition(again, "Ready"), "lastTransitionTime", "2025-01-01T10:00:30Z");
    assert_cell("Pod", again, POD_READY, "1/1");
    json_decref(patch);
    /* not while its node is down or it is being deleted */
    json_t *down = json_deep_copy(node);
    json_object_set_new((json_t *)condition(down, "Ready"), "status", json_string("Unknown"));
    assert_null(ctl_kubelet_pod_ready_again(marked, down, LATER));
    json_object_set_new(json_object_get(marked, "metadata"), "deletionTimestamp",
                        json_string(NOW_TEXT));
    assert_null(ctl_kubelet_pod_ready_again(marked, node, LATER));
    json_decref(down);
    json_decref(again);
    json_decref(marked);
    json_decref(running);
    json_decref(pod);
    json_decref(node);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manages_only_fake_nodes),
        cmocka_unit_test(test_pod_ready_again),
        cmocka_unit_test(test_node_init_on_bare_node),
        cmocka_unit_test(test_node_init_keeps_what_is_set),
        cmocka_unit_test(test_node_init_skips_unmanaged),
        cmocka_unit_test(test_heartbeat_keeps_transition_times),
        cmocka_unit_test(test_pod_ready_patch),
        cmocka_unit_test(test_pod_ready_applied_keeps_pod_scheduled),
        cmocka_unit_test(test_pod_ready_not_applicable),
        cmocka_unit_test(test_pod_ips_distinct_inside_cidr),
        cmocka_unit_test(test_pod_ip_default_cidr_and_ipv6),
        cmocka_unit_test(test_host_network_pod_gets_node_ip),
        cmocka_unit_test(test_image_and_container_ids),
        cmocka_unit_test(test_init_containers_and_readiness_gates),
        cmocka_unit_test(test_runtime_missing),
        cmocka_unit_test(test_runtime_missing_behind_init_containers),
        cmocka_unit_test(test_runtime_missing_not_applicable),
        cmocka_unit_test(test_should_finish_delete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
