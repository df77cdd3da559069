/* The node lifecycle controller (pkg/controller/nodelifecycle, 1.32): a
 * node's heartbeats (Ready's lastHeartbeatTime, its Lease's renewTime) and
 * the grace period; kube-controller-manager's reasons and messages once it
 * passes, as the recording (../shared/k8s-cases lifecycle-and-backoff.txt)
 * shows them; the NoSchedule taints that follow the conditions; the
 * NoExecute taints and their rate limit; no evictions when every node is
 * down; pods marked not ready.
 *
 * Nodes are made Ready by the fake kubelet's own patch (kwok's
 * node-initialize), and the controller's patches are applied with the
 * project's strategic merge patch, as the API server applies them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "json_assert.h"

#include "apiserver/table.h"
#include "controllers/kubelet_internal.h"
#include "controllers/node_lifecycle_internal.h"
#include "kube/json.h"
#include "kube/smp.h"

#define T0      ((int64_t)1735725600000) /* 2025-01-01T10:00:00Z, in ms */
#define T0_TEXT "2025-01-01T10:00:00Z"
#define SEC     1000

/* kwokctl's node template with the fake annotation and no status yet. */
#define BARE_NODE(name)                                                                            \
    "{'apiVersion':'v1','kind':'Node','metadata':{'name':'" name "','uid':'uid-" name "',"         \
    "'resourceVersion':'7','creationTimestamp':'2025-01-01T09:00:00Z',"                            \
    "'annotations':{'kwok.x-k8s.io/node':'fake'}},'spec':{},'status':{}}"

static json_t *apply(const json_t *obj, const json_t *patch)
{
    gp_error err = {0};
    json_t *out = kube_strategic_merge_patch(obj, patch, "Node", &err);
    if (!out) print_error("patch refused: %s\n", err.text);
    assert_non_null(out);
    return out;
}

/* The node as the fake kubelet leaves it at `when`: Ready, heartbeat then. */
static json_t *ready_node(const char *bare, int64_t when)
{
    json_t *node = sq_load(bare);
    json_t *patch = ctl_kubelet_node_init(node, "172.18.0.10", (time_t)(when / 1000));
    json_t *ready = apply(node, patch);
    json_decref(patch);
    json_decref(node);
    return ready;
}

/* Its heartbeat at `when` (kwok's node-heartbeat). */
static json_t *beat(json_t *node, int64_t when)
{
    json_t *patch = ctl_kubelet_node_heartbeat(node, (time_t)(when / 1000));
    json_t *next = apply(node, patch);
    json_decref(patch);
    json_decref(node);
    return next;
}

static void set_taints(json_t *node, const char *taints_sq)
{
    json_object_set_new(json_object_get(node, "spec"), "taints", sq_load(taints_sq));
}

/* The actions of `op` about `node`. */
static size_t count_actions(const json_t *actions, const char *op, const char *node)
{
    size_t n = 0, i;
    const json_t *a;
    json_array_foreach(actions, i, a) n += kube_str_is(a, "op", op) && kube_str_is(a, "node", node);
    return n;
}

static const json_t *find_action(const json_t *actions, const char *op, const char *node)
{
    size_t i;
    const json_t *a;
    json_array_foreach(actions, i,
                       a) if (kube_str_is(a, "op", op) && kube_str_is(a, "node", node)) return a;
    return NULL;
}

/* One monitor round over `nodes` (leases none) at t. */
static json_t *round_at(ctl_nlc *c, json_t **nodes, size_t n, int64_t t)
{
    ctl_nlc_node in[8] = {{0}};
    for (size_t i = 0; i < n; i++)
        in[i].node = nodes[i];
    json_t *actions = json_array();
    ctl_nlc_monitor(c, in, n, t, actions);
    return actions;
}

/* The node once a "status" action's patch is applied. */
static json_t *with_status(json_t *node, const json_t *actions)
{
    const json_t *a = find_action(actions, "status", kube_str(kube_obj(node, "metadata"), "name"));
    assert_non_null(a);
    json_t *next = apply(node, json_object_get(a, "patch"));
    json_decref(node);
    return next;
}

static char *status_cell(const json_t *node)
{
    json_t *table = as_table("", "Node", (json_t *const *)&node, 1, false, NULL, T0 / 1000);
    const json_t *cells =
        json_object_get(json_array_get(json_object_get(table, "rows"), 0), "cells");
    char *text = strdup(json_string_value(json_array_get(cells, 1)));
    json_decref(table);
    return text;
}

/* ---- the grace period ---- */

/* The recording's words once the grace period passes without a heartbeat;
 * NetworkUnavailable is left alone; the node prints NotReady. */
static void silent_node_goes_unknown_after_the_grace_period(void **state)
{
    (void)state;
    ctl_nlc *c = ctl_nlc_new(CTL_NLC_GRACE_MS, T0);
    json_t *node = ready_node(BARE_NODE("nr-1"), T0);
    json_t *a = round_at(c, &node, 1, T0);
    assert_int_equal(count_actions(a, "status", "nr-1"), 0);
    json_decref(a);
    /* 40 s without a heartbeat is still within the grace period */
    a = round_at(c, &node, 1, T0 + 40 * SEC);
    assert_int_equal(count_actions(a, "status", "nr-1"), 0);
    assert_int_equal(count_actions(a, "event", "nr-1"), 0);
    json_decref(a);
    a = round_at(c, &node, 1, T0 + 41 * SEC);
    const json_t *st = find_action(a, "status", "nr-1");
    assert_non_null(st);
    /* the node's resourceVersion is the write's precondition */
    assert_string_equal(kube_str(st, "resourceVersion"), "7");
    assert_string_equal(kube_str(kube_obj(kube_obj(st, "patch"), "metadata"), "resourceVersion"),
                        "7");
    json_t *before = json_incref(node);
    node = with_status(node, a);
    const char *const silent[] = {"Ready", "MemoryPressure", "DiskPressure", "PIDPressure"};
    for (size_t i = 0; i < 4; i++) {
        const json_t *cond = kube_condition(node, silent[i]);
        assert_string_equal(kube_str(cond, "status"), "Unknown");
        assert_string_equal(kube_str(cond, "reason"), "NodeStatusUnknown");
        assert_string_equal(kube_str(cond, "message"), "Kubelet stopped posting node status.");
        assert_string_equal(kube_str(cond, "lastTransitionTime"), "2025-01-01T10:00:41Z");
        assert_string_equal(kube_str(cond, "lastHeartbeatTime"), T0_TEXT);
    }
    assert_json_equal(kube_condition(node, "NetworkUnavailable"),
                      kube_condition(before, "NetworkUnavailable"));
    char *cell = status_cell(node);
    assert_string_equal(cell, "NotReady");
    free(cell);
    /* the event on the node, once, and its pods marked not ready */
    const json_t *ev = find_action(a, "event", "nr-1");
    assert_non_null(ev);
    assert_string_equal(kube_str(ev, "reason"), "NodeNotReady");
    assert_string_equal(kube_str(ev, "message"), "Node nr-1 status is now: NodeNotReady");
    assert_string_equal(kube_str(ev, "uid"), "uid-nr-1");
    assert_int_equal(count_actions(a, "pods-not-ready", "nr-1"), 1);
    json_decref(a);
    /* the next round: nothing more to write, no second event, the pods are
     * looked at again (a pod bound since is marked too) */
    a = round_at(c, &node, 1, T0 + 45 * SEC);
    assert_int_equal(count_actions(a, "status", "nr-1"), 0);
    assert_int_equal(count_actions(a, "event", "nr-1"), 0);
    assert_int_equal(count_actions(a, "pods-not-ready", "nr-1"), 1);
    json_decref(a);
    json_decref(before);
    json_decref(node);
    ctl_nlc_free(c);
}

/* Heartbeats, or Lease renewals alone, keep a node healthy; the grace
 * period is the controller's (5 s here, as the recordings' test runs). */
static void heartbeats_and_lease_renewals_keep_it_ready(void **state)
{
    (void)state;
    ctl_nlc *c = ctl_nlc_new(5 * SEC, T0);
    json_t *node = ready_node(BARE_NODE("a"), T0);
    ctl_nlc_node in = {node, "2025-01-01T10:00:00.000000Z"};
    char renew[64];
    for (int s = 0; s <= 60; s++) {
        /* the Lease is renewed every 2 s, the status never */
        if (s % 2 == 0) {
            snprintf(renew, sizeof renew, "2025-01-01T10:%02d:%02d.000000Z", s / 60, s % 60);
            in.lease_renew = renew;
        }
        json_t *a = json_array();
        ctl_nlc_monitor(c, &in, 1, T0 + s * SEC, a);
        assert_int_equal(count_actions(a, "status", "a"), 0);
        json_decref(a);
    }
    /* the status heartbeats alone, every 3 s */
    ctl_nlc *d = ctl_nlc_new(5 * SEC, T0);
    for (int s = 0; s <= 60; s++) {
        if (s % 3 == 0) node = beat(node, T0 + s * SEC);
        json_t *a = round_at(d, &node, 1, T0 + s * SEC);
        assert_int_equal(count_actions(a, "status", "a"), 0);
        json_decref(a);
    }
    /* and without either, 5 s is enough */
    json_t *a = round_at(d, &node, 1, T0 + 66 * SEC);
    assert_int_equal(count_actions(a, "status", "a"), 1);
    json_decref(a);
    json_decref(node);
    ctl_nlc_free(c);
    ctl_nlc_free(d);
}

/* A node that never posted Ready gets the startup grace period (60 s),
 * then the conditions it lacks as NodeStatusNeverUpdated. */
static void a_node_that_never_posted_gets_never_updated(void **state)
{
    (void)state;
    ctl_nlc *c = ctl_nlc_new(CTL_NLC_GRACE_MS, T0);
    json_t *node = sq_load(BARE_NODE("n"));
    /* created at 09:00: well past a minute already */
    json_t *a = round_at(c, &node, 1, T0);
    const json_t *st = find_action(a, "status", "n");
    assert_non_null(st);
    json_t *want =
        sq_load("{'metadata':{'resourceVersion':'7'},'status':{'conditions':["
                "{'type':'Ready','status':'Unknown','reason':'NodeStatusNeverUpdated',"
                "'message':'Kubelet never posted node status.','lastHeartbeatTime':"
                "'2025-01-01T09:00:00Z','lastTransitionTime':'" T0_TEXT "'},"
                "{'type':'MemoryPressure','status':'Unknown','reason':'NodeStatusNeverUpdated',"
                "'message':'Kubelet never posted node status.','lastHeartbeatTime':"
                "'2025-01-01T09:00:00Z','lastTransitionTime':'" T0_TEXT "'},"
                "{'type':'DiskPressure','status':'Unknown','reason':'NodeStatusNeverUpdated',"
                "'message':'Kubelet never posted node status.','lastHeartbeatTime':"
                "'2025-01-01T09:00:00Z','lastTransitionTime':'" T0_TEXT "'},"
                "{'type':'PIDPressure','status':'Unknown','reason':'NodeStatusNeverUpdated',"
                "'message':'Kubelet never posted node status.','lastHeartbeatTime':"
                "'2025-01-01T09:00:00Z','lastTransitionTime':'" T0_TEXT "'}]}}");
    assert_json_equal(json_object_get(st, "patch"), want);
    json_decref(want);
    json_decref(a);
    json_decref(node);
    /* one created just now waits the minute */
    ctl_nlc *d = ctl_nlc_new(CTL_NLC_GRACE_MS, T0);
    node = sq_load("{'metadata':{'name':'m','resourceVersion':'3','creationTimestamp':'" T0_TEXT
                   "'},'spec':{},'status':{}}");
    a = round_at(d, &node, 1, T0 + 59 * SEC);
    assert_int_equal(count_actions(a, "status", "m"), 0);
    json_decref(a);
    a = round_at(d, &node, 1, T0 + 61 * SEC);
    assert_int_equal(count_actions(a, "status", "m"), 1);
    json_decref(a);
    json_decref(node);
    ctl_nlc_free(c);
    ctl_nlc_free(d);
}

/* ---- NoSchedule taints ---- */

static void assert_diff(const char *node_sq, const char *add_sq, const char *remove_sq)
{
    json_t *node = sq_load(node_sq), *add, *remove;
    bool changed = ctl_nlc_noschedule_diff(node, T0, &add, &remove);
    if (!add_sq) {
        assert_false(changed);
    } else {
        assert_true(changed);
        json_t *want_add = sq_load(add_sq), *want_remove = sq_load(remove_sq);
        assert_json_equal(add, want_add);
        assert_json_equal(remove, want_remove);
        json_decref(want_add);
        json_decref(want_remove);
        json_decref(add);
        json_decref(remove);
    }
    json_decref(node);
}

#define NODE_WITH(spec, conds)                                                                     \
    "{'metadata':{'name':'n'},'spec':" spec ",'status':{'conditions':" conds "}}"
#define NOT_READY_NS "{'key':'node.kubernetes.io/not-ready','effect':'NoSchedule'}"

static void noschedule_taints_follow_the_conditions(void **state)
{
    (void)state;
    /* Ready: nothing to do, whatever else the node has */
    assert_diff(NODE_WITH("{'taints':[{'key':'gpu','effect':'NoSchedule'}]}",
                          "[{'type':'Ready','status':'True'}]"),
                NULL, NULL);
    /* the NodeTaint admission plugin's taint goes once the node is Ready */
    assert_diff(NODE_WITH("{'taints':[" NOT_READY_NS "]}", "[{'type':'Ready','status':'True'}]"),
                "[]", "[" NOT_READY_NS "]");
    /* ... and at once on a node without conditions, as upstream's pass does */
    assert_diff(NODE_WITH("{'taints':[" NOT_READY_NS "]}", "[]"), "[]", "[" NOT_READY_NS "]");
    /* Ready False: not-ready; Unknown: unreachable in its place */
    assert_diff(NODE_WITH("{}", "[{'type':'Ready','status':'False'}]"),
                "[{'key':'node.kubernetes.io/not-ready','effect':'NoSchedule','timeAdded':'" T0_TEXT
                "'}]",
                "[]");
    assert_diff(
        NODE_WITH("{'taints':[" NOT_READY_NS ",{'key':'node.kubernetes.io/unreachable',"
                  "'effect':'NoExecute'}]}",
                  "[{'type':'Ready','status':'Unknown'}]"),
        "[{'key':'node.kubernetes.io/unreachable','effect':'NoSchedule','timeAdded':'" T0_TEXT
        "'}]",
        "[" NOT_READY_NS "]");
    /* pressure conditions and cordoning; other taints stay as they are */
    assert_diff(
        NODE_WITH("{'unschedulable':true,'taints':[{'key':'node.kubernetes.io/"
                  "disk-pressure','effect':'NoSchedule'},{'key':'x','effect':'NoSchedule'}]}",
                  "[{'type':'Ready','status':'True'},{'type':'MemoryPressure','status':"
                  "'True'},{'type':'PIDPressure','status':'False'}]"),
        "[{'key':'node.kubernetes.io/memory-pressure','effect':'NoSchedule','timeAdded':'" T0_TEXT
        "'},{'key':'node.kubernetes.io/unschedulable','effect':'NoSchedule','timeAdded':'" T0_TEXT
        "'}]",
        "[{'key':'node.kubernetes.io/disk-pressure','effect':'NoSchedule'}]");
}

static void taints_are_added_in_place_and_removed_by_key_and_effect(void **state)
{
    (void)state;
    json_t *taints = sq_load("[{'key':'a','effect':'NoSchedule'},{'key':'u','effect':'NoExecute',"
                             "'timeAdded':'old'},{'key':'b','effect':'NoSchedule'}]");
    json_t *add = sq_load("[{'key':'u','effect':'NoExecute','timeAdded':'new'},"
                          "{'key':'c','effect':'NoExecute'}]");
    json_t *remove =
        sq_load("[{'key':'a','effect':'NoSchedule'},{'key':'b','effect':'NoExecute'}]");
    json_t *out = ctl_nlc_apply_taints(taints, add, remove);
    json_t *want = sq_load("[{'key':'u','effect':'NoExecute','timeAdded':'new'},"
                           "{'key':'b','effect':'NoSchedule'},{'key':'c','effect':'NoExecute'}]");
    assert_json_equal(out, want);
    json_decref(want);
    json_decref(out);
    out = ctl_nlc_apply_taints(NULL, add, NULL);
    assert_int_equal(json_array_size(out), 2);
    json_decref(out);
    json_decref(taints);
    json_decref(add);
    json_decref(remove);
}

/* ---- NoExecute taints ---- */

static const json_t *lookup_list(void *ud, const char *name, bool *busy)
{
    json_t **nodes = ud;
    *busy = false;
    for (size_t i = 0; nodes[i]; i++)
        if (kube_str_is(kube_obj(nodes[i], "metadata"), "name", name)) return nodes[i];
    return NULL;
}

static json_t *noexecute(ctl_nlc *c, json_t **nodes, int64_t t)
{
    json_t *a = json_array();
    ctl_nlc_noexecute_pass(c, lookup_list, nodes, t, a);
    return a;
}

static void assert_adds(const json_t *actions, const char *node, const char *key,
                        const char *removed_key)
{
    const json_t *a = find_action(actions, "taints", node);
    assert_non_null(a);
    const json_t *added = json_array_get(json_object_get(a, "add"), 0);
    assert_string_equal(kube_str(added, "key"), key);
    assert_string_equal(kube_str(added, "effect"), "NoExecute");
    assert_true(*kube_str(added, "timeAdded"));
    const json_t *removed = json_array_get(json_object_get(a, "remove"), 0);
    assert_string_equal(kube_str(removed, "key"), removed_key);
}

/* A node seen Unknown is queued, and tainted unreachable NoExecute as its
 * zone's limiter allows: the first at once, the next 10 s later (0.1 a
 * second); a node queued once is not queued again while it has the taint. */
static void unknown_nodes_are_tainted_noexecute_one_per_ten_seconds(void **state)
{
    (void)state;
    ctl_nlc *c = ctl_nlc_new(CTL_NLC_GRACE_MS, T0);
    json_t *nodes[5] = {ready_node(BARE_NODE("a"), T0), ready_node(BARE_NODE("b"), T0),
                        ready_node(BARE_NODE("c"), T0), ready_node(BARE_NODE("d"), T0), NULL};
    json_decref(round_at(c, nodes, 4, T0));
    /* c and d keep beating; a and b go silent */
    for (int s = 10; s <= 40; s += 10) {
        nodes[2] = beat(nodes[2], T0 + s * SEC);
        nodes[3] = beat(nodes[3], T0 + s * SEC);
    }
    json_t *a = round_at(c, nodes, 4, T0 + 41 * SEC);
    nodes[0] = with_status(nodes[0], a);
    nodes[1] = with_status(nodes[1], a);
    json_decref(a);
    /* the round that sees them Unknown queues them */
    nodes[2] = beat(nodes[2], T0 + 45 * SEC);
    nodes[3] = beat(nodes[3], T0 + 45 * SEC);
    a = round_at(c, nodes, 4, T0 + 46 * SEC);
    assert_int_equal(count_actions(a, "status", "a"), 0);
    json_decref(a);
    a = noexecute(c, nodes, T0 + 46 * SEC);
    assert_int_equal(json_array_size(a), 1);
    assert_adds(a, "a", CTL_TAINT_UNREACHABLE, CTL_TAINT_NOT_READY);
    json_decref(a);
    assert_true(ctl_nlc_noexecute_pending(c));
    a = noexecute(c, nodes, T0 + 55 * SEC);
    assert_int_equal(json_array_size(a), 0);
    json_decref(a);
    a = noexecute(c, nodes, T0 + 57 * SEC);
    assert_adds(a, "b", CTL_TAINT_UNREACHABLE, CTL_TAINT_NOT_READY);
    json_decref(a);
    assert_false(ctl_nlc_noexecute_pending(c));
    /* tainted: the next rounds queue neither again */
    set_taints(nodes[0], "[{'key':'node.kubernetes.io/unreachable','effect':'NoExecute'}]");
    set_taints(nodes[1], "[{'key':'node.kubernetes.io/unreachable','effect':'NoExecute'}]");
    nodes[2] = beat(nodes[2], T0 + 60 * SEC);
    nodes[3] = beat(nodes[3], T0 + 60 * SEC);
    json_decref(round_at(c, nodes, 4, T0 + 61 * SEC));
    assert_false(ctl_nlc_noexecute_pending(c));
    for (size_t i = 0; i < 4; i++)
        json_decref(nodes[i]);
    ctl_nlc_free(c);
}

/* Ready False with the unreachable taint swaps it for not-ready at once;
 * Ready again takes both NoExecute taints off. */
static void noexecute_taints_swap_and_go(void **state)
{
    (void)state;
    ctl_nlc *c = ctl_nlc_new(CTL_NLC_GRACE_MS, T0);
    json_t *nodes[3] = {ready_node(BARE_NODE("a"), T0), ready_node(BARE_NODE("b"), T0), NULL};
    json_decref(round_at(c, nodes, 2, T0));
    json_t *down = json_deep_copy(nodes[0]);
    json_t *cond = (json_t *)kube_condition(down, "Ready");
    json_object_set_new(cond, "status", json_string("False"));
    json_object_set_new(cond, "lastHeartbeatTime", json_string("2025-01-01T10:00:05Z"));
    set_taints(down, "[{'key':'node.kubernetes.io/unreachable','effect':'NoExecute'}]");
    json_t *pair[2] = {down, nodes[1]};
    json_t *a = round_at(c, pair, 2, T0 + 6 * SEC);
    assert_adds(a, "a", CTL_TAINT_NOT_READY, CTL_TAINT_UNREACHABLE);
    json_decref(a);
    /* Ready again with a NoExecute taint left: it goes */
    set_taints(nodes[0], "[{'key':'x','effect':'NoSchedule'},{'key':'node.kubernetes.io/not-ready',"
                         "'effect':'NoExecute'}]");
    a = round_at(c, nodes, 2, T0 + 7 * SEC);
    const json_t *t = find_action(a, "taints", "a");
    assert_non_null(t);
    json_t *want = sq_load("[{'key':'node.kubernetes.io/not-ready','effect':'NoExecute'}]");
    assert_json_equal(json_object_get(t, "remove"), want);
    assert_int_equal(json_array_size(json_object_get(t, "add")), 0);
    json_decref(want);
    json_decref(a);
    json_decref(down);
    json_decref(nodes[0]);
    json_decref(nodes[1]);
    ctl_nlc_free(c);
}

/* When no node of any zone is Ready the controller suspects itself: the
 * NoExecute taints go, and none is added (full disruption). */
static void no_noexecute_taints_when_every_node_is_down(void **state)
{
    (void)state;
    ctl_nlc *c = ctl_nlc_new(CTL_NLC_GRACE_MS, T0);
    json_t *nodes[3] = {ready_node(BARE_NODE("a"), T0), ready_node(BARE_NODE("b"), T0), NULL};
    json_decref(round_at(c, nodes, 2, T0));
    /* a goes silent first and is tainted */
    for (int s = 10; s <= 40; s += 10)
        nodes[1] = beat(nodes[1], T0 + s * SEC);
    json_t *a = round_at(c, nodes, 2, T0 + 41 * SEC);
    nodes[0] = with_status(nodes[0], a);
    json_decref(a);
    nodes[1] = beat(nodes[1], T0 + 45 * SEC);
    json_decref(round_at(c, nodes, 2, T0 + 46 * SEC));
    a = noexecute(c, nodes, T0 + 46 * SEC);
    assert_adds(a, "a", CTL_TAINT_UNREACHABLE, CTL_TAINT_NOT_READY);
    json_decref(a);
    set_taints(nodes[0], "[{'key':'node.kubernetes.io/unreachable','effect':'NoSchedule'},"
                         "{'key':'node.kubernetes.io/unreachable','effect':'NoExecute'}]");
    /* then b: no node is Ready, and a's NoExecute taint goes (NoSchedule stays) */
    a = round_at(c, nodes, 2, T0 + 87 * SEC);
    nodes[1] = with_status(nodes[1], a);
    const json_t *t = find_action(a, "taints", "a");
    assert_non_null(t);
    json_t *want = sq_load("[{'key':'node.kubernetes.io/unreachable','effect':'NoExecute'}]");
    assert_json_equal(json_object_get(t, "remove"), want);
    json_decref(want);
    json_decref(a);
    json_object_del(json_object_get(nodes[0], "spec"), "taints");
    for (int s = 90; s < 150; s += 5) {
        a = round_at(c, nodes, 2, T0 + s * SEC);
        assert_int_equal(count_actions(a, "taints", "a") + count_actions(a, "taints", "b"), 0);
        json_decref(a);
        a = noexecute(c, nodes, T0 + s * SEC);
        assert_int_equal(json_array_size(a), 0);
        json_decref(a);
    }
    json_decref(nodes[0]);
    json_decref(nodes[1]);
    ctl_nlc_free(c);
}

/* In a small cluster where more than 2 nodes and 55 % are down, evictions
 * stop too (partial disruption, ReducedQPSFunc: 0 at 50 nodes or fewer). */
static void no_noexecute_taints_in_a_partly_down_small_cluster(void **state)
{
    (void)state;
    ctl_nlc *c = ctl_nlc_new(CTL_NLC_GRACE_MS, T0);
    json_t *nodes[6] = {ready_node(BARE_NODE("a"), T0), ready_node(BARE_NODE("b"), T0),
                        ready_node(BARE_NODE("c"), T0), ready_node(BARE_NODE("d"), T0),
                        ready_node(BARE_NODE("e"), T0), NULL};
    json_decref(round_at(c, nodes, 5, T0));
    for (int s = 10; s <= 40; s += 10) {
        nodes[3] = beat(nodes[3], T0 + s * SEC);
        nodes[4] = beat(nodes[4], T0 + s * SEC);
    }
    json_t *a = round_at(c, nodes, 5, T0 + 41 * SEC);
    for (int i = 0; i < 3; i++)
        nodes[i] = with_status(nodes[i], a);
    json_decref(a);
    nodes[3] = beat(nodes[3], T0 + 45 * SEC);
    nodes[4] = beat(nodes[4], T0 + 45 * SEC);
    json_decref(round_at(c, nodes, 5, T0 + 46 * SEC));
    a = noexecute(c, nodes, T0 + 46 * SEC);
    assert_int_equal(json_array_size(a), 0);
    json_decref(a);
    for (int i = 0; i < 5; i++)
        json_decref(nodes[i]);
    ctl_nlc_free(c);
}

/* ---- pods ---- */

static void pods_are_marked_not_ready_once(void **state)
{
    (void)state;
    json_t *pod = sq_load("{'metadata':{'name':'short','namespace':'pr2','resourceVersion':'30'},"
                          "'status':{'phase':'Running','conditions':[{'type':'Ready',"
                          "'status':'True','lastProbeTime':null,'lastTransitionTime':"
                          "'2025-01-01T09:59:00Z'},{'type':'PodScheduled','status':'True'}]}}");
    json_t *patch = ctl_nlc_pod_not_ready_patch(pod, T0);
    json_t *want = sq_load("{'metadata':{'resourceVersion':'30'},'status':{'conditions':[{'type':"
                           "'Ready','status':'False','lastTransitionTime':'" T0_TEXT "'}]}}");
    assert_json_equal(patch, want);
    gp_error err = {0};
    json_t *marked = kube_strategic_merge_patch(pod, patch, "Pod", &err);
    assert_non_null(marked);
    assert_string_equal(kube_str(kube_condition(marked, "Ready"), "status"), "False");
    assert_string_equal(kube_str(kube_condition(marked, "PodScheduled"), "status"), "True");
    /* False already: nothing written, no event */
    assert_null(ctl_nlc_pod_not_ready_patch(marked, T0));
    /* no Ready condition (a pod its kubelet never started): nothing */
    json_t *fresh = sq_load("{'metadata':{'name':'p'},'status':{'phase':'Pending'}}");
    assert_null(ctl_nlc_pod_not_ready_patch(fresh, T0));
    json_decref(fresh);
    json_decref(marked);
    json_decref(want);
    json_decref(patch);
    json_decref(pod);
}

static void zone_keys(void **state)
{
    (void)state;
    char key[64];
    json_t *n = sq_load("{'metadata':{'labels':{'topology.kubernetes.io/region':'r',"
                        "'topology.kubernetes.io/zone':'z'}}}");
    ctl_nlc_zone_key(n, key, sizeof key);
    assert_string_equal(key, "r:\x1f:z");
    json_decref(n);
    n = sq_load("{'metadata':{'labels':{'failure-domain.beta.kubernetes.io/zone':'z'}}}");
    ctl_nlc_zone_key(n, key, sizeof key);
    assert_string_equal(key, ":\x1f:z");
    json_decref(n);
    n = sq_load("{'metadata':{}}");
    ctl_nlc_zone_key(n, key, sizeof key);
    assert_string_equal(key, "");
    json_decref(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(silent_node_goes_unknown_after_the_grace_period),
        cmocka_unit_test(heartbeats_and_lease_renewals_keep_it_ready),
        cmocka_unit_test(a_node_that_never_posted_gets_never_updated),
        cmocka_unit_test(noschedule_taints_follow_the_conditions),
        cmocka_unit_test(taints_are_added_in_place_and_removed_by_key_and_effect),
        cmocka_unit_test(unknown_nodes_are_tainted_noexecute_one_per_ten_seconds),
        cmocka_unit_test(noexecute_taints_swap_and_go),
        cmocka_unit_test(no_noexecute_taints_when_every_node_is_down),
        cmocka_unit_test(no_noexecute_taints_in_a_partly_down_small_cluster),
        cmocka_unit_test(pods_are_marked_not_ready_once),
        cmocka_unit_test(zone_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
