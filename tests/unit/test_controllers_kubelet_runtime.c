/* The fake kubelet over a simulated node (kubelet_runtime_internal.h): the
 * Ready condition a 1.32 kubelet posts from its runtime state, the node's
 * runtimeHandlers, the device manager's resources and the published labels.
 *
 * The texts are kubernetes/kubernetes': pkg/kubelet/runtime.go
 * runtimeErrors ("container runtime status check may not have completed
 * yet", "container runtime is down"), pkg/kubelet/pleg/generic.go Healthy
 * ("pleg has yet to be successful", "pleg was last seen active %v ago;
 * threshold is %v"), the "%s is not healthy: %v" of runtimeErrors, and
 * apimachinery's utilerrors aggregate ("[a, b]") that
 * pkg/kubelet/nodestatus/setters.go ReadyCondition puts in the message. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/kubelet_internal.h"
#include "controllers/kubelet_runtime_internal.h"
#include "kube/json.h"
#include "kube/smp.h"

#define NOW_MS  ((int64_t)1735725600 * 1000) /* 2025-01-01T10:00:00Z */
#define NOW_TXT "2025-01-01T10:00:00Z"

/* A Ready lab node that reports runc (as a 2.x containerd would). */
#define READY_NODE                                                                                 \
    "{'apiVersion':'v1','kind':'Node','metadata':{'name':'lab-node-1','annotations':"              \
    "{'kwok.x-k8s.io/node':'fake'},'labels':{'nvidia.com/gpu.present':'true'}},"                   \
    "'spec':{'podCIDR':'10.244.1.0/24'},'status':{'capacity':{'cpu':'16'},'allocatable':"          \
    "{'cpu':'16'},'conditions':["                                                                  \
    "{'type':'Ready','status':'True','reason':'KubeletReady','message':'kubelet is posting "       \
    "ready status','lastHeartbeatTime':'2025-01-01T09:00:00Z','lastTransitionTime':"               \
    "'2025-01-01T09:00:00Z'},"                                                                     \
    "{'type':'MemoryPressure','status':'False','reason':'KubeletHasSufficientMemory','message':"   \
    "'kubelet has sufficient memory available','lastHeartbeatTime':'2025-01-01T09:00:00Z',"        \
    "'lastTransitionTime':'2025-01-01T09:00:00Z'}],'runtimeHandlers':[{'name':'runc',"             \
    "'features':{'recursiveReadOnlyMounts':false,'userNamespaces':false}}]}}"

static ctl_node_facts healthy(void)
{
    ctl_node_facts f;
    memset(&f, 0, sizeof f);
    f.kubelet_running = true;
    f.runtime_up = true;
    f.runtime_ok_ms = f.relist_ok_ms = NOW_MS - 1000;
    return f;
}

static void test_ready_message_follows_the_runtime_state(void **state)
{
    (void)state;
    char msg[1200];
    ctl_node_facts f = healthy();
    ctl_kubelet_ready_message(&f, NOW_MS, msg, sizeof msg);
    assert_string_equal(msg, "");

    /* a Status that has not worked for 30 s: the runtime is down */
    f.runtime_ok_ms = NOW_MS - CTL_KUBELET_RUNTIME_THRESHOLD_MS;
    ctl_kubelet_ready_message(&f, NOW_MS, msg, sizeof msg);
    assert_string_equal(msg, "container runtime is down");
    f.runtime_ok_ms = NOW_MS - CTL_KUBELET_RUNTIME_THRESHOLD_MS + 1;
    ctl_kubelet_ready_message(&f, NOW_MS, msg, sizeof msg);
    assert_string_equal(msg, "");

    /* and PLEG's relist 3 minutes on, as Go prints the durations */
    f.runtime_ok_ms = NOW_MS - 200500;
    f.relist_ok_ms = NOW_MS - 200500;
    ctl_kubelet_ready_message(&f, NOW_MS, msg, sizeof msg);
    assert_string_equal(msg, "[container runtime is down, PLEG is not healthy: pleg was last "
                             "seen active 3m20.5s ago; threshold is 3m0s]");

    /* a kubelet that never got an answer */
    f.runtime_ok_ms = f.relist_ok_ms = 0;
    ctl_kubelet_ready_message(&f, NOW_MS, msg, sizeof msg);
    assert_string_equal(msg, "[container runtime status check may not have completed yet, PLEG "
                             "is not healthy: pleg has yet to be successful]");
}

/* The patch applied to the node, as the API server would. */
static json_t *applied(const json_t *node, const json_t *patch)
{
    gp_error err = {0};
    json_t *out = kube_strategic_merge_patch(node, patch, "Node", &err);
    if (!out) fail_msg("patch refused: %s", err.text);
    return out;
}

static void test_runtime_down_turns_ready_false_and_keeps_the_rest(void **state)
{
    (void)state;
    json_t *node = sq_load(READY_NODE);
    ctl_node_facts f = healthy();
    f.runtime_ok_ms = f.relist_ok_ms = NOW_MS - 40000;
    f.reports_handlers = true;
    snprintf(f.handlers[0], sizeof f.handlers[0], "runc");
    f.handler_count = 1;
    json_t *patch = ctl_kubelet_runtime_node_status(node, &f, "172.18.0.11", NOW_MS, false);
    assert_non_null(patch);
    json_t *after = applied(node, patch);
    const json_t *ready = kube_condition(after, "Ready");
    assert_string_equal(kube_str(ready, "status"), "False");
    assert_string_equal(kube_str(ready, "reason"), "KubeletNotReady");
    assert_string_equal(kube_str(ready, "message"), "container runtime is down");
    assert_string_equal(kube_str(ready, "lastTransitionTime"), NOW_TXT);
    /* what the facts do not move stays */
    const json_t *mem = kube_condition(after, "MemoryPressure");
    assert_string_equal(kube_str(mem, "lastTransitionTime"), "2025-01-01T09:00:00Z");
    /* the handlers were as reported: not in the patch */
    assert_null(json_object_get(json_object_get(patch, "status"), "runtimeHandlers"));

    /* once posted, nothing more to say until a heartbeat is due */
    json_t *again = ctl_kubelet_runtime_node_status(after, &f, "172.18.0.11", NOW_MS, false);
    assert_null(again);
    json_decref(patch);
    json_decref(after);
    json_decref(node);
}

/* containerd 1.6 and 1.7 report no handlers: the field goes (setters.go
 * RuntimeHandlers); 2.x's are posted in its order. */
static void test_runtime_handlers_follow_what_the_runtime_reports(void **state)
{
    (void)state;
    json_t *node = sq_load(READY_NODE);
    ctl_node_facts f = healthy();
    json_t *patch = ctl_kubelet_runtime_node_status(node, &f, "172.18.0.11", NOW_MS, false);
    assert_non_null(patch);
    json_t *after = applied(node, patch);
    assert_null(json_object_get(kube_obj(after, "status"), "runtimeHandlers"));
    json_decref(patch);

    f.reports_handlers = true;
    const char *names[] = {"", "nvidia", "runc"};
    for (size_t i = 0; i < 3; i++)
        snprintf(f.handlers[i], sizeof f.handlers[i], "%s", names[i]);
    f.handler_count = 3;
    patch = ctl_kubelet_runtime_node_status(after, &f, "172.18.0.11", NOW_MS, false);
    assert_non_null(patch);
    json_t *later = applied(after, patch);
    const json_t *h = json_object_get(kube_obj(later, "status"), "runtimeHandlers");
    assert_int_equal(json_array_size(h), 3);
    assert_string_equal(kube_str(json_array_get(h, 1), "name"), "nvidia");
    json_decref(patch);
    json_decref(later);
    json_decref(after);
    json_decref(node);
}

/* The device manager's resource in capacity and allocatable; a plugin gone:
 * allocatable 0 while capacity stays (gpu-node-facts.md 5, 6.2). */
static void test_device_plugin_resources_reach_capacity_and_allocatable(void **state)
{
    (void)state;
    json_t *node = sq_load(READY_NODE);
    ctl_node_facts f = healthy();
    snprintf(f.resources[0].name, sizeof f.resources[0].name, "nvidia.com/gpu");
    f.resources[0].capacity = f.resources[0].allocatable = 4;
    f.resource_count = 1;
    json_t *patch = ctl_kubelet_runtime_node_status(node, &f, "172.18.0.11", NOW_MS, false);
    json_t *after = applied(node, patch);
    const json_t *st = kube_obj(after, "status");
    assert_string_equal(kube_str(json_object_get(st, "capacity"), "nvidia.com/gpu"), "4");
    assert_string_equal(kube_str(json_object_get(st, "allocatable"), "nvidia.com/gpu"), "4");
    assert_string_equal(kube_str(json_object_get(st, "capacity"), "cpu"), "16");
    json_decref(patch);

    f.resources[0].allocatable = 0;
    patch = ctl_kubelet_runtime_node_status(after, &f, "172.18.0.11", NOW_MS, false);
    json_t *gone = applied(after, patch);
    st = kube_obj(gone, "status");
    assert_string_equal(kube_str(json_object_get(st, "capacity"), "nvidia.com/gpu"), "4");
    assert_string_equal(kube_str(json_object_get(st, "allocatable"), "nvidia.com/gpu"), "0");
    json_decref(patch);
    json_decref(gone);
    json_decref(after);
    json_decref(node);
}

static void test_labels_are_set_and_taken_away(void **state)
{
    (void)state;
    json_t *node = sq_load(READY_NODE);
    ctl_node_facts f = healthy();
    snprintf(f.labels[0].key, sizeof f.labels[0].key, "nvidia.com/gpu.present");
    snprintf(f.labels[0].value, sizeof f.labels[0].value, "true");
    f.labels[0].present = true;
    snprintf(f.labels[1].key, sizeof f.labels[1].key, "nvidia.com/cuda.driver-version.full");
    f.labels[1].present = false;
    f.label_count = 2;
    assert_null(ctl_kubelet_runtime_labels(node, &f)); /* as they should be */
    f.labels[1].present = true;
    snprintf(f.labels[1].value, sizeof f.labels[1].value, "550.54.15");
    f.labels[0].present = false;
    json_t *patch = ctl_kubelet_runtime_labels(node, &f);
    json_t *want = sq_load("{'metadata':{'labels':{'nvidia.com/gpu.present':null,"
                           "'nvidia.com/cuda.driver-version.full':'550.54.15'}}}");
    assert_json_equal(patch, want);
    json_decref(want);
    json_decref(patch);
    json_decref(node);
}

/* containerd's answer for a handler its CRI does not serve, behind gRPC's
 * "rpc error: code = Unknown desc = ": 1.x pkg/cri/server/sandbox_run.go
 * "failed to get sandbox runtime: %w", 2.x internal/cri/server/
 * sandbox_run.go "unable to get OCI runtime for sandbox %q: %w", both
 * around config.go's "no runtime for %q is configured". */
static void test_sandbox_error_is_containerds_per_line(void **state)
{
    (void)state;
    json_t *pod = sq_load("{'metadata':{'name':'p','namespace':'n','uid':'u-1'}}");
    char v1[600], v2[600], again[600];
    ctl_kubelet_no_runtime_error(pod, "nvidia", false, v1, sizeof v1);
    assert_string_equal(v1, "rpc error: code = Unknown desc = failed to get sandbox runtime: no "
                            "runtime for \"nvidia\" is configured");
    ctl_kubelet_no_runtime_error(pod, "nvidia", true, v2, sizeof v2);
    const char *head = "rpc error: code = Unknown desc = unable to get OCI runtime for sandbox \"";
    assert_int_equal(strncmp(v2, head, strlen(head)), 0);
    const char *id = v2 + strlen(head);
    assert_int_equal(strspn(id, "0123456789abcdef"), 64);
    assert_string_equal(id + 64, "\": no runtime for \"nvidia\" is configured");
    ctl_kubelet_no_runtime_error(pod, "nvidia", true, again, sizeof again);
    assert_string_equal(v2, again); /* one id a pod */
    json_decref(pod);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ready_message_follows_the_runtime_state),
        cmocka_unit_test(test_runtime_down_turns_ready_false_and_keeps_the_rest),
        cmocka_unit_test(test_runtime_handlers_follow_what_the_runtime_reports),
        cmocka_unit_test(test_device_plugin_resources_reach_capacity_and_allocatable),
        cmocka_unit_test(test_labels_are_set_and_taken_away),
        cmocka_unit_test(test_sandbox_error_is_containerds_per_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
