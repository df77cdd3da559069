/* The garbage collector and the namespace controller (k8s-semantics 2.12):
 * the actions one pass over a snapshot asks for, and the end state a
 * runtime reaches by applying them and asking again.
 *
 * Expected bodies follow pkg/controller/garbagecollector (attemptToDeleteItem,
 * classifyReferences, processDeletingDependentsItem, attemptToOrphan,
 * patch.go's deleteOwnerRefStrategicMergePatch, removeFinalizer's merge
 * patch) and pkg/controller/namespace/deletion (deleteEachItem's Background
 * deletes, status_condition_utils.go's reasons and messages, finalizeNamespace).
 * The simulated runtime applies patches with the project's own merge and
 * strategic merge patch, as the API server does.
 *
 * Objects are JSON written with ' for ". */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/garbage_collector_internal.h"
#include "controllers/namespace_internal.h"
#include "kube/patch.h"
#include "kube/smp.h"

#define NOW      ((time_t)1735725600) /* 2025-01-01T10:00:00Z */
#define NOW_TEXT "2025-01-01T10:00:00Z"

/* ---- fixtures: a DaemonSet with two pods and a revision ---- */

#define DS_REF                                                                                     \
    "{'apiVersion':'apps/v1','kind':'DaemonSet','name':'gpu-agent','uid':'ds-uid',"                \
    "'controller':true,'blockOwnerDeletion':true}"

#define DS(meta_extra)                                                                             \
    "{'resource':'daemonsets','group':'apps','object':{'apiVersion':'apps/v1','kind':"             \
    "'DaemonSet','metadata':{'name':'gpu-agent','namespace':'gpu-lab','uid':'ds-uid',"             \
    "'resourceVersion':'7'" meta_extra "}}}"

#define POD(name, meta_extra)                                                                      \
    "{'resource':'pods','group':'','object':{'apiVersion':'v1','kind':'Pod','metadata':{"          \
    "'name':'" name "','namespace':'gpu-lab','uid':'" name "-uid','ownerReferences':[" DS_REF      \
    "]" meta_extra "},'spec':{'nodeName':'lab-node-0'},'status':{'phase':'Running'}}}"

#define REVISION                                                                                   \
    "{'resource':'controllerrevisions','group':'apps','object':{'apiVersion':'apps/v1',"           \
    "'kind':'ControllerRevision','metadata':{'name':'gpu-agent-5d4b7c9f8','namespace':"            \
    "'gpu-lab','uid':'cr-uid','ownerReferences':[" DS_REF "]},'revision':1}}"

#define CONFIGMAP(name, ns, meta_extra)                                                            \
    "{'resource':'configmaps','group':'','object':{'apiVersion':'v1','kind':'ConfigMap',"          \
    "'metadata':{'name':'" name "','namespace':'" ns "','uid':'" name "-uid'" meta_extra "}}}"

#define DELETING ",'deletionTimestamp':'2025-01-01T09:59:00Z'"

/* ---- helpers ---- */

static json_t *actions_for(const char *snapshot_sq)
{
    json_t *snapshot = sq_load(snapshot_sq);
    json_t *actions = ctl_gc_collect(snapshot);
    assert_non_null(actions);
    json_decref(snapshot);
    return actions;
}

static void assert_actions(const json_t *actions, const char *want_sq)
{
    json_t *want = sq_load(want_sq);
    assert_json_equal(actions, want);
    json_decref(want);
}

static const char *str_of(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static const json_t *meta(const json_t *obj)
{
    return json_object_get(obj, "metadata");
}

/* The position of the entry whose object has `uid`, or -1. */
static long find_uid(const json_t *snapshot, const char *uid)
{
    size_t i;
    const json_t *e;
    json_array_foreach(snapshot, i, e)
    {
        const char *u = str_of(meta(json_object_get(e, "object")), "uid");
        if (u && uid && !strcmp(u, uid)) return (long)i;
    }
    return -1;
}

static const char *kind_of(const json_t *entry)
{
    const char *r = str_of(entry, "resource");
    return !strcmp(r, "pods")                  ? "Pod"
           : !strcmp(r, "daemonsets")          ? "DaemonSet"
           : !strcmp(r, "controllerrevisions") ? "ControllerRevision"
           : !strcmp(r, "namespaces")          ? "Namespace"
                                               : "ConfigMap";
}

static bool has_deletion(const json_t *obj)
{
    const json_t *ts = json_object_get(meta(obj), "deletionTimestamp");
    return ts && !json_is_null(ts);
}

/* What the API server does once an object's finalizers are gone while it
 * is being deleted: removes it. */
static void settle(json_t *snapshot, size_t at)
{
    const json_t *obj = json_object_get(json_array_get(snapshot, at), "object");
    if (has_deletion(obj) && json_array_size(json_object_get(meta(obj), "finalizers")) == 0)
        json_array_remove(snapshot, at);
}

/* The API server's DELETE: propagation Foreground and Orphan add their
 * finalizer and set deletionTimestamp; an object with finalizers only gets
 * deletionTimestamp; a bound pod waits for its kubelet (which then removes
 * it: `kubelet_pods` says so); anything else goes at once. */
static void server_delete(json_t *snapshot, size_t at, const char *policy, bool kubelet_pods)
{
    json_t *obj = json_object_get(json_array_get(snapshot, at), "object");
    json_t *m = json_object_get(obj, "metadata");
    bool graceful =
        !strcmp(str_of(json_array_get(snapshot, at), "resource"), "pods") && !kubelet_pods;
    const char *finalizer = !strcmp(policy, "Foreground") ? "foregroundDeletion"
                            : !strcmp(policy, "Orphan")   ? "orphan"
                                                          : NULL;
    if (finalizer) {
        json_t *f = json_object_get(m, "finalizers");
        if (!f) json_object_set_new(m, "finalizers", f = json_array());
        json_array_append_new(f, json_string(finalizer));
    }
    if (!finalizer && !graceful && json_array_size(json_object_get(m, "finalizers")) == 0) {
        json_array_remove(snapshot, at);
        return;
    }
    json_object_set_new(m, "deletionTimestamp", json_string(NOW_TEXT));
}

static void server_patch(json_t *snapshot, size_t at, const json_t *action)
{
    json_t *entry = json_array_get(snapshot, at);
    const json_t *patch = json_object_get(action, "patch");
    const char *type = str_of(action, "patchType");
    gp_error err = {0};
    json_t *obj = json_object_get(entry, "object");
    json_t *out = !strcmp(type, "application/merge-patch+json")
                      ? kube_merge_patch(obj, patch)
                      : kube_strategic_merge_patch(obj, patch, kind_of(entry), &err);
    if (!out) print_error("patch refused: %s\n", err.text);
    assert_non_null(out);
    json_object_set_new(entry, "object", out);
    settle(snapshot, at);
}

/* Runs the collector against the snapshot until it asks for nothing;
 * returns how many passes that took. */
static int run_to_rest(json_t *snapshot, bool kubelet_pods)
{
    for (int pass = 1; pass < 20; pass++) {
        json_t *actions = ctl_gc_collect(snapshot);
        assert_non_null(actions);
        if (json_array_size(actions) == 0) {
            json_decref(actions);
            return pass;
        }
        size_t i;
        const json_t *a;
        json_array_foreach(actions, i, a)
        {
            long at = find_uid(snapshot, str_of(a, "uid"));
            if (at < 0) continue; /* gone meanwhile: the real one gets 404 */
            if (!strcmp(str_of(a, "op"), "delete"))
                server_delete(snapshot, (size_t)at, str_of(a, "propagationPolicy"), kubelet_pods);
            else
                server_patch(snapshot, (size_t)at, a);
        }
        json_decref(actions);
        /* The fake kubelet finishes pods that are being deleted. */
        for (size_t k = json_array_size(snapshot); kubelet_pods && k-- > 0;) {
            const json_t *e = json_array_get(snapshot, k);
            if (!strcmp(str_of(e, "resource"), "pods") &&
                has_deletion(json_object_get(e, "object")))
                json_array_remove(snapshot, k);
        }
    }
    fail_msg("the collector did not come to rest");
    return -1;
}

static bool present(const json_t *snapshot, const char *uid)
{
    return find_uid(snapshot, uid) >= 0;
}

/* ---- background ---- */

/* 2.12: deleting a DaemonSet must delete its pods and ControllerRevisions;
 * nothing else is touched. */
static void test_background_deletes_dependents_of_a_gone_owner(void **state)
{
    (void)state;
    json_t *actions = actions_for("[" POD("gpu-agent-x7k2p", "") "," POD(
        "gpu-agent-b9zq4", "") "," REVISION "," CONFIGMAP("settings", "gpu-lab", "") "]");
    assert_actions(actions, "[{'op':'delete','resource':'pods','group':'','namespace':'gpu-lab',"
                            "'name':'gpu-agent-x7k2p','uid':'gpu-agent-x7k2p-uid',"
                            "'propagationPolicy':'Background'},"
                            "{'op':'delete','resource':'pods','group':'','namespace':'gpu-lab',"
                            "'name':'gpu-agent-b9zq4','uid':'gpu-agent-b9zq4-uid',"
                            "'propagationPolicy':'Background'},"
                            "{'op':'delete','resource':'controllerrevisions','group':'apps',"
                            "'namespace':'gpu-lab','name':'gpu-agent-5d4b7c9f8','uid':'cr-uid',"
                            "'propagationPolicy':'Background'}]");
    json_decref(actions);
}

/* An owner the snapshot leaves out is asked for: kept when it is there,
 * its dependents collected when it is not. */
static bool ask_owner(void *ud, const json_t *dependent, const json_t *ref)
{
    int *asked = ud;
    (*asked)++;
    assert_string_equal(json_string_value(json_object_get(ref, "uid")), "ds-uid");
    assert_non_null(json_object_get(dependent, "metadata"));
    return *asked < 100; /* the owner exists while asked < 100 */
}

static void test_owner_left_out_is_looked_up(void **state)
{
    (void)state;
    json_t *snapshot = sq_load("[" POD("gpu-agent-x7k2p", "") "]");
    int asked = 0;
    json_t *actions = ctl_gc_collect_with(snapshot, ask_owner, &asked);
    assert_int_equal(asked, 1);
    assert_int_equal(json_array_size(actions), 0); /* there: nothing to do */
    json_decref(actions);
    asked = 100; /* gone */
    actions = ctl_gc_collect_with(snapshot, ask_owner, &asked);
    assert_actions(actions, "[{'op':'delete','resource':'pods','group':'','namespace':'gpu-lab',"
                            "'name':'gpu-agent-x7k2p','uid':'gpu-agent-x7k2p-uid',"
                            "'propagationPolicy':'Background'}]");
    json_decref(actions);
    json_decref(snapshot);
}

static void test_owner_present_nothing_to_do(void **state)
{
    (void)state;
    json_t *actions = actions_for("[" DS("") "," POD("gpu-agent-x7k2p", "") "," REVISION "]");
    assert_int_equal(json_array_size(actions), 0);
    json_decref(actions);
    json_t *empty = actions_for("[]");
    assert_int_equal(json_array_size(empty), 0);
    json_decref(empty);
}

/* A dependent already on its way out gets no second DELETE. */
static void test_deleting_dependent_left_alone(void **state)
{
    (void)state;
    json_t *actions = actions_for("[" POD("gpu-agent-x7k2p", DELETING) "]");
    assert_int_equal(json_array_size(actions), 0);
    json_decref(actions);
}

/* A dependent with a live owner besides the gone one keeps living; the
 * dangling reference goes, by patch.go's strategic merge patch. */
static void test_other_solid_owner_drops_dangling_reference(void **state)
{
    (void)state;
    json_t *snapshot = sq_load("[" CONFIGMAP(
        "settings", "gpu-lab",
        "") ","
            "{'resource':'pods','group':'','object':{'metadata':{'name':'p','namespace':'gpu-lab',"
            "'uid':'p-uid','ownerReferences':[" DS_REF ",{'apiVersion':'v1','kind':'ConfigMap',"
            "'name':'settings','uid':'settings-uid'}]}}}]");
    json_t *actions = ctl_gc_collect(snapshot);
    assert_actions(actions,
                   "[{'op':'patch-owner-references','resource':'pods','group':'',"
                   "'namespace':'gpu-lab','name':'p','uid':'p-uid','patchType':"
                   "'application/strategic-merge-patch+json','patch':{'metadata':{"
                   "'ownerReferences':[{'$patch':'delete','uid':'ds-uid'}],'uid':'p-uid'}}}]");
    assert_int_equal(run_to_rest(snapshot, true), 2);
    const json_t *pod = json_object_get(json_array_get(snapshot, 1), "object");
    const json_t *refs = json_object_get(meta(pod), "ownerReferences");
    assert_int_equal(json_array_size(refs), 1);
    assert_string_equal(str_of(json_array_get(refs, 0), "uid"), "settings-uid");
    json_decref(actions);
    json_decref(snapshot);
}

/* An owner with the same uid in another namespace is no owner
 * (OwnerRefInvalidNamespace). */
static void test_owner_in_other_namespace_counts_as_absent(void **state)
{
    (void)state;
    json_t *actions = actions_for(
        "[{'resource':'daemonsets','group':'apps','object':{'metadata':{'name':'gpu-agent',"
        "'namespace':'elsewhere','uid':'ds-uid'}}}," POD("gpu-agent-x7k2p", "") "]");
    assert_int_equal(json_array_size(actions), 1);
    assert_string_equal(str_of(json_array_get(actions, 0), "op"), "delete");
    assert_string_equal(str_of(json_array_get(actions, 0), "name"), "gpu-agent-x7k2p");
    json_decref(actions);
}

/* A dependent's own finalizers pick the policy it is deleted with. */
static void test_dependent_policy_from_its_finalizers(void **state)
{
    (void)state;
    json_t *actions = actions_for("[" POD("a", ",'finalizers':['orphan']") "," POD(
        "b", ",'finalizers':['foregroundDeletion']") "]");
    assert_string_equal(str_of(json_array_get(actions, 0), "propagationPolicy"), "Orphan");
    assert_string_equal(str_of(json_array_get(actions, 1), "propagationPolicy"), "Foreground");
    json_decref(actions);
}

/* The whole background story: only the unrelated ConfigMap is left. */
static void test_background_comes_to_rest(void **state)
{
    (void)state;
    json_t *snapshot = sq_load("[" POD("gpu-agent-x7k2p", "") "," POD(
        "gpu-agent-b9zq4", "") "," REVISION "," CONFIGMAP("settings", "gpu-lab", "") "]");
    run_to_rest(snapshot, true);
    assert_int_equal(json_array_size(snapshot), 1);
    assert_true(present(snapshot, "settings-uid"));
    json_decref(snapshot);
}

/* ---- foreground ---- */

/* The owner waits with its foregroundDeletion finalizer while its blocking
 * dependents are deleted; only when they are gone is the finalizer removed
 * (removeFinalizer: merge patch with the resourceVersion read). */
static void test_foreground_order(void **state)
{
    (void)state;
    json_t *snapshot = sq_load("[" DS(DELETING ",'finalizers':['foregroundDeletion']") "," POD(
        "gpu-agent-x7k2p", "") "," REVISION "]");
    json_t *first = ctl_gc_collect(snapshot);
    assert_actions(first, "[{'op':'delete','resource':'pods','group':'','namespace':'gpu-lab',"
                          "'name':'gpu-agent-x7k2p','uid':'gpu-agent-x7k2p-uid',"
                          "'propagationPolicy':'Background'},"
                          "{'op':'delete','resource':'controllerrevisions','group':'apps',"
                          "'namespace':'gpu-lab','name':'gpu-agent-5d4b7c9f8','uid':'cr-uid',"
                          "'propagationPolicy':'Background'}]");

    /* The pod is terminating (its kubelet has not finished it): still blocks. */
    json_t *terminating = sq_load("[" DS(DELETING ",'finalizers':['foregroundDeletion']") "," POD(
        "gpu-agent-x7k2p", DELETING) "]");
    json_t *second = ctl_gc_collect(terminating);
    assert_int_equal(json_array_size(second), 0);

    /* Gone: the owner's finalizer goes. */
    json_t *alone = sq_load("[" DS(DELETING ",'finalizers':['foregroundDeletion']") "]");
    json_t *third = ctl_gc_collect(alone);
    assert_actions(third, "[{'op':'patch-finalizers','resource':'daemonsets','group':'apps',"
                          "'namespace':'gpu-lab','name':'gpu-agent','uid':'ds-uid','patchType':"
                          "'application/merge-patch+json','patch':{'metadata':{"
                          "'resourceVersion':'7','finalizers':null}}}]");
    json_decref(third);
    json_decref(alone);
    json_decref(second);
    json_decref(terminating);
    json_decref(first);
    json_decref(snapshot);
}

/* Other finalizers stay; a dependent without blockOwnerDeletion does not
 * hold the owner. */
static void test_foreground_keeps_other_finalizers(void **state)
{
    (void)state;
    json_t *actions = actions_for("[" DS(
        DELETING
        ",'finalizers':['example.com/keep','foregroundDeletion']") ","
                                                                   "{'resource':'configmaps','"
                                                                   "group':'','object':{'metadata':"
                                                                   "{'name':'loose','namespace':"
                                                                   "'gpu-lab','uid':'loose-uid','"
                                                                   "ownerReferences':[{'apiVersion'"
                                                                   ":'apps/v1','kind':"
                                                                   "'DaemonSet','name':'gpu-agent',"
                                                                   "'uid':'ds-uid'}]}}}]");
    assert_actions(actions,
                   "[{'op':'patch-finalizers','resource':'daemonsets','group':'apps',"
                   "'namespace':'gpu-lab','name':'gpu-agent','uid':'ds-uid','patchType':"
                   "'application/merge-patch+json','patch':{'metadata':{'resourceVersion':'7',"
                   "'finalizers':['example.com/keep']}}},"
                   "{'op':'delete','resource':'configmaps','group':'','namespace':'gpu-lab',"
                   "'name':'loose','uid':'loose-uid','propagationPolicy':'Background'}]");
    json_decref(actions);
}

/* A dependent that has dependents of its own is deleted in the foreground
 * too, so the chain empties from the leaves. */
static void test_foreground_cascades(void **state)
{
    (void)state;
    json_t *actions = actions_for("[" DS(
        DELETING
        ",'finalizers':['foregroundDeletion']") ","
                                                "{'resource':'configmaps','group':'','object':{'"
                                                "metadata':{'name':'mid','namespace':"
                                                "'gpu-lab','uid':'mid-uid','ownerReferences':"
                                                "[" DS_REF "]}}},"
                                                "{'resource':'configmaps','group':'','object':{'"
                                                "metadata':{'name':'leaf','namespace':"
                                                "'gpu-lab','uid':'leaf-uid','ownerReferences':[{'"
                                                "apiVersion':'v1','kind':'ConfigMap',"
                                                "'name':'mid','uid':'mid-uid','blockOwnerDeletion':"
                                                "true}]}}}]");
    assert_int_equal(json_array_size(actions), 1);
    assert_string_equal(str_of(json_array_get(actions, 0), "name"), "mid");
    assert_string_equal(str_of(json_array_get(actions, 0), "propagationPolicy"), "Foreground");
    json_decref(actions);
}

static void test_foreground_comes_to_rest(void **state)
{
    (void)state;
    json_t *snapshot = sq_load("[" DS(DELETING ",'finalizers':['foregroundDeletion']") "," POD(
        "gpu-agent-x7k2p", "") "," POD("gpu-agent-b9zq4", "") "," REVISION
                                                              "," CONFIGMAP("settings", "gpu-lab",
                                                                            "") "]");
    run_to_rest(snapshot, true);
    assert_int_equal(json_array_size(snapshot), 1);
    assert_true(present(snapshot, "settings-uid"));
    json_decref(snapshot);
}

/* ---- orphan ---- */

/* attemptToOrphan: each dependent loses its reference to the owner (and
 * lives on); then the owner's orphan finalizer goes and it disappears. */
static void test_orphan(void **state)
{
    (void)state;
    json_t *snapshot = sq_load("[" DS(DELETING ",'finalizers':['orphan']") "," POD(
        "gpu-agent-x7k2p", "") "," REVISION "]");
    json_t *first = ctl_gc_collect(snapshot);
    assert_actions(first, "[{'op':'patch-owner-references','resource':'pods','group':'',"
                          "'namespace':'gpu-lab','name':'gpu-agent-x7k2p','uid':"
                          "'gpu-agent-x7k2p-uid','patchType':"
                          "'application/strategic-merge-patch+json','patch':{'metadata':{"
                          "'ownerReferences':[{'$patch':'delete','uid':'ds-uid'}],'uid':"
                          "'gpu-agent-x7k2p-uid'}}},"
                          "{'op':'patch-owner-references','resource':'controllerrevisions',"
                          "'group':'apps','namespace':'gpu-lab','name':'gpu-agent-5d4b7c9f8',"
                          "'uid':'cr-uid','patchType':'application/strategic-merge-patch+json',"
                          "'patch':{'metadata':{'ownerReferences':[{'$patch':'delete','uid':"
                          "'ds-uid'}],'uid':'cr-uid'}}}]");
    run_to_rest(snapshot, true);
    assert_false(present(snapshot, "ds-uid"));
    assert_true(present(snapshot, "gpu-agent-x7k2p-uid"));
    assert_true(present(snapshot, "cr-uid"));
    const json_t *pod = json_object_get(json_array_get(snapshot, 0), "object");
    assert_int_equal(json_array_size(json_object_get(meta(pod), "ownerReferences")), 0);
    json_decref(first);
    json_decref(snapshot);
}

/* ---- namespace controller ---- */

#define NS(extra_meta, spec_status)                                                                \
    "{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'gpu-lab','uid':'ns-uid',"           \
    "'labels':{'kubernetes.io/metadata.name':'gpu-lab'}" extra_meta "}," spec_status "}"

#define NS_TERMINATING                                                                             \
    NS(DELETING, "'spec':{'finalizers':['kubernetes']},'status':{'phase':'Terminating'}")

#define BOUND_POD                                                                                  \
    "{'resource':'pods','group':'','object':{'metadata':{'name':'cuda-probe','namespace':"         \
    "'gpu-lab','uid':'probe-uid'},'spec':{'nodeName':'lab-node-0'},'status':{'phase':"             \
    "'Running'}}}"

static json_t *ns_actions(const char *ns_sq, const char *snapshot_sq)
{
    json_t *ns = sq_load(ns_sq), *snapshot = sq_load(snapshot_sq);
    json_t *actions = ctl_ns_actions(ns, snapshot, NOW);
    assert_non_null(actions);
    json_decref(snapshot);
    json_decref(ns);
    return actions;
}

static const json_t *find_op(const json_t *actions, const char *op)
{
    size_t i;
    const json_t *a;
    json_array_foreach(actions, i, a)
    {
        if (!strcmp(str_of(a, "op"), op)) return a;
    }
    return NULL;
}

static void test_namespace_active_untouched(void **state)
{
    (void)state;
    json_t *actions =
        ns_actions(NS("", "'spec':{'finalizers':['kubernetes']},'status':{'phase':'Active'}"),
                   "[" BOUND_POD "]");
    assert_int_equal(json_array_size(actions), 0);
    json_decref(actions);
}

/* The contents go with Background deletes; objects elsewhere stay; the
 * status tells what remains in the controller's words. */
static void test_namespace_deletes_contents(void **state)
{
    (void)state;
    json_t *actions =
        ns_actions(NS_TERMINATING, "[" BOUND_POD "," CONFIGMAP("settings", "gpu-lab", "") "," DS(
                                       "") "," CONFIGMAP("other", "default", "") "]");
    json_t *deletes = json_array();
    size_t i;
    const json_t *a;
    json_array_foreach(actions, i, a)
    {
        if (!strcmp(str_of(a, "op"), "delete")) json_array_append(deletes, (json_t *)a);
    }
    assert_actions(deletes, "[{'op':'delete','resource':'pods','group':'','namespace':'gpu-lab',"
                            "'name':'cuda-probe','uid':'probe-uid','propagationPolicy':"
                            "'Background'},"
                            "{'op':'delete','resource':'configmaps','group':'','namespace':"
                            "'gpu-lab','name':'settings','uid':'settings-uid',"
                            "'propagationPolicy':'Background'},"
                            "{'op':'delete','resource':'daemonsets','group':'apps','namespace':"
                            "'gpu-lab','name':'gpu-agent','uid':'ds-uid','propagationPolicy':"
                            "'Background'}]");
    const json_t *status = find_op(actions, "patch-status");
    assert_non_null(status);
    assert_string_equal(str_of(status, "resource"), "namespaces");
    assert_string_equal(str_of(status, "name"), "gpu-lab");
    assert_string_equal(str_of(status, "patchType"), "application/strategic-merge-patch+json");
    assert_actions(json_object_get(status, "patch"),
                   "{'status':{'conditions':["
                   "{'type':'NamespaceDeletionDiscoveryFailure','status':'False',"
                   "'lastTransitionTime':'" NOW_TEXT "','reason':'ResourcesDiscovered',"
                   "'message':'All resources successfully discovered'},"
                   "{'type':'NamespaceDeletionGroupVersionParsingFailure','status':'False',"
                   "'lastTransitionTime':'" NOW_TEXT "','reason':'ParsedGroupVersions',"
                   "'message':'All legacy kube types successfully parsed'},"
                   "{'type':'NamespaceDeletionContentFailure','status':'False',"
                   "'lastTransitionTime':'" NOW_TEXT "','reason':'ContentDeleted',"
                   "'message':'All content successfully deleted, may be waiting on "
                   "finalization'},"
                   "{'type':'NamespaceContentRemaining','status':'True',"
                   "'lastTransitionTime':'" NOW_TEXT "','reason':'SomeResourcesRemain',"
                   "'message':'Some resources are remaining: pods. has 1 resource instances'},"
                   "{'type':'NamespaceFinalizersRemaining','status':'False',"
                   "'lastTransitionTime':'" NOW_TEXT "','reason':'ContentHasNoFinalizers',"
                   "'message':'All content-preserving finalizers finished'}]}}");
    assert_null(find_op(actions, "finalize"));
    json_decref(deletes);
    json_decref(actions);
}

/* Remaining content held by finalizers, counted and sorted as
 * ProcessContentTotals writes it. */
#define HOLD ",'finalizers':['example.com/hold']"

static void test_namespace_finalizers_remaining(void **state)
{
    (void)state;
    /* Listed out of order: the messages sort. */
    static const char snapshot[] = "[" DS(",'finalizers':['example.com/other']") "," CONFIGMAP(
        "a", "gpu-lab", HOLD) "," CONFIGMAP("b", "gpu-lab", DELETING HOLD) "]";
    json_t *actions = ns_actions(NS_TERMINATING, snapshot);
    const json_t *conds = json_object_get(
        json_object_get(json_object_get(find_op(actions, "patch-status"), "patch"), "status"),
        "conditions");
    const json_t *left = json_array_get(conds, 3), *held = json_array_get(conds, 4);
    assert_string_equal(str_of(left, "message"), "Some resources are remaining: configmaps. has 2 "
                                                 "resource instances, daemonsets.apps has 1 "
                                                 "resource instances");
    assert_string_equal(str_of(held, "reason"), "SomeFinalizersRemain");
    assert_string_equal(str_of(held, "message"),
                        "Some content in the namespace has finalizers remaining: "
                        "example.com/hold in 2 resource instances, example.com/other in 1 "
                        "resource instances");
    /* b is deleting already: two deletes, not three. */
    size_t deletes = 0, i;
    const json_t *a;
    json_array_foreach(actions, i, a)
    {
        deletes += !strcmp(str_of(a, "op"), "delete");
    }
    assert_int_equal(deletes, 2);
    json_decref(actions);
}

/* A status already showing the same conditions is not sent again; a
 * changed status gets a new transition time, a changed text keeps it. */
static void test_namespace_status_only_when_changed(void **state)
{
    (void)state;
    json_t *ns = sq_load(NS_TERMINATING);
    json_t *pod_left = sq_load("[" BOUND_POD "]");
    json_t *first = ctl_ns_actions(ns, pod_left, NOW);
    gp_error err = {0};
    json_t *ns2 = kube_strategic_merge_patch(
        ns, json_object_get(find_op(first, "patch-status"), "patch"), "Namespace", &err);
    assert_non_null(ns2);
    json_t *again = ctl_ns_actions(ns2, pod_left, NOW + 5);
    assert_null(find_op(again, "patch-status"));

    json_t *empty = json_array();
    json_t *done = ctl_ns_actions(ns2, empty, NOW + 10);
    assert_actions(json_object_get(find_op(done, "patch-status"), "patch"),
                   "{'status':{'conditions':[{'type':'NamespaceContentRemaining','status':"
                   "'False','lastTransitionTime':'2025-01-01T10:00:10Z','reason':"
                   "'ContentRemoved','message':'All content successfully removed'}]}}");

    json_t *two = sq_load("[" BOUND_POD "," CONFIGMAP("x", "gpu-lab", ",'finalizers':['f']") "]");
    json_t *more = ctl_ns_actions(ns2, two, NOW + 20);
    const json_t *conds = json_object_get(
        json_object_get(json_object_get(find_op(more, "patch-status"), "patch"), "status"),
        "conditions");
    const json_t *changed = json_array_get(conds, 0);
    assert_string_equal(str_of(changed, "type"), "NamespaceContentRemaining");
    assert_null(json_object_get(changed, "lastTransitionTime")); /* status unchanged */
    assert_string_equal(str_of(json_array_get(conds, 1), "lastTransitionTime"),
                        "2025-01-01T10:00:20Z"); /* FinalizersRemaining turned True */

    json_decref(more);
    json_decref(two);
    json_decref(done);
    json_decref(empty);
    json_decref(again);
    json_decref(ns2);
    json_decref(first);
    json_decref(pod_left);
    json_decref(ns);
}

/* Once nothing is left: PUT /finalize with spec.finalizers as a sorted set
 * without "kubernetes". */
static void test_namespace_finalize(void **state)
{
    (void)state;
    json_t *actions = ns_actions(
        NS(DELETING, "'spec':{'finalizers':['kubernetes','example.com/z','example.com/a']},"
                     "'status':{'phase':'Terminating'}"),
        "[" CONFIGMAP("other", "default", "") "]");
    const json_t *fin = find_op(actions, "finalize");
    assert_non_null(fin);
    assert_string_equal(str_of(fin, "resource"), "namespaces");
    assert_string_equal(str_of(fin, "name"), "gpu-lab");
    assert_string_equal(str_of(fin, "uid"), "ns-uid");
    json_t *want = sq_load(NS(DELETING, "'spec':{'finalizers':['example.com/a','example.com/z']},"
                                        "'status':{'phase':'Terminating'}"));
    assert_json_equal(json_object_get(fin, "body"), want);
    assert_int_equal(json_array_size(actions), 2); /* the status patch and the finalize */
    json_decref(want);
    json_decref(actions);

    json_t *plain = ns_actions(NS_TERMINATING, "[]");
    assert_actions(json_object_get(find_op(plain, "finalize"), "body"),
                   NS(DELETING, "'spec':{'finalizers':[]},'status':{'phase':'Terminating'}"));
    json_decref(plain);

    /* Finalized already: nothing more to PUT. */
    json_t *finalized =
        ns_actions(NS(DELETING, "'spec':{},'status':{'phase':'Terminating'}"), "[]");
    assert_null(find_op(finalized, "finalize"));
    json_decref(finalized);
}

/* A namespace marked for deletion but not yet Terminating is moved there. */
static void test_namespace_phase_terminating(void **state)
{
    (void)state;
    json_t *actions =
        ns_actions(NS(DELETING, "'spec':{'finalizers':['kubernetes']},'status':{'phase':'Active'}"),
                   "[" BOUND_POD "]");
    const json_t *st =
        json_object_get(json_object_get(find_op(actions, "patch-status"), "patch"), "status");
    assert_string_equal(str_of(st, "phase"), "Terminating");
    json_decref(actions);
}

/* Contents, then finalize: a bound pod lingers until its kubelet finishes
 * it, a ConfigMap goes at once, then the namespace is finalized. */
static void test_namespace_contents_then_finalize(void **state)
{
    (void)state;
    json_t *ns = sq_load(NS_TERMINATING);
    json_t *snapshot = sq_load("[" BOUND_POD "," CONFIGMAP("settings", "gpu-lab", "") "]");
    int passes = 0;
    bool finalized = false;
    while (!finalized && passes++ < 10) {
        json_t *actions = ctl_ns_actions(ns, snapshot, NOW + passes);
        size_t i;
        const json_t *a;
        json_array_foreach(actions, i, a)
        {
            const char *op = str_of(a, "op");
            if (!strcmp(op, "finalize")) {
                assert_int_equal(json_array_size(snapshot), 0);
                finalized = true;
            } else if (!strcmp(op, "delete")) {
                long at = find_uid(snapshot, str_of(a, "uid"));
                assert_true(at >= 0);
                server_delete(snapshot, (size_t)at, "Background", false);
            }
        }
        json_decref(actions);
        /* the kubelet finishes terminating pods one pass later */
        for (size_t k = json_array_size(snapshot); k-- > 0;)
            if (has_deletion(json_object_get(json_array_get(snapshot, k), "object")))
                json_array_remove(snapshot, k);
    }
    assert_true(finalized);
    assert_int_equal(passes, 2);
    json_decref(snapshot);
    json_decref(ns);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_background_deletes_dependents_of_a_gone_owner),
        cmocka_unit_test(test_owner_present_nothing_to_do),
        cmocka_unit_test(test_owner_left_out_is_looked_up),
        cmocka_unit_test(test_deleting_dependent_left_alone),
        cmocka_unit_test(test_other_solid_owner_drops_dangling_reference),
        cmocka_unit_test(test_owner_in_other_namespace_counts_as_absent),
        cmocka_unit_test(test_dependent_policy_from_its_finalizers),
        cmocka_unit_test(test_background_comes_to_rest),
        cmocka_unit_test(test_foreground_order),
        cmocka_unit_test(test_foreground_keeps_other_finalizers),
        cmocka_unit_test(test_foreground_cascades),
        cmocka_unit_test(test_foreground_comes_to_rest),
        cmocka_unit_test(test_orphan),
        cmocka_unit_test(test_namespace_active_untouched),
        cmocka_unit_test(test_namespace_deletes_contents),
        cmocka_unit_test(test_namespace_finalizers_remaining),
        cmocka_unit_test(test_namespace_status_only_when_changed),
        cmocka_unit_test(test_namespace_finalize),
        cmocka_unit_test(test_namespace_phase_terminating),
        cmocka_unit_test(test_namespace_contents_then_finalize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
