/* kube/pod.h: IsPodReady, IsPodAvailable, IsPodPhaseTerminal and
 * IsRestartableInitContainer (pkg/api/v1/pod/util.go, 1.32), and their
 * users, whose own copies used to disagree: the DaemonSet controller and
 * the rollout analyzer. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <string.h>

#include "analyze/rollout.h"
#include "controllers/daemonset.h"
#include "kube/daemonset.h"
#include "kube/pod.h"

#define NOW 1767225600 /* 2026-01-01T00:00:00Z */

/* A pod Ready (or not) since `since` ('...' JSON, or null). */
static json_t *ready_pod(const char *status, const char *since)
{
    return sqf("{'status':{'phase':'Running','conditions':[{'type':'Ready','status':'%s',"
               "'lastTransitionTime':%s}]}}",
               status, since);
}

static void test_ready_and_available(void **state)
{
    (void)state;
    json_t *p = ready_pod("True", "'2025-12-31T23:59:00Z'"); /* 60 s before NOW */
    assert_true(kube_pod_ready(p));
    assert_true(kube_pod_available(p, 0, NOW));
    assert_true(kube_pod_available(p, 59, NOW));
    assert_false(kube_pod_available(p, 60, NOW)); /* not before now: equal */
    assert_false(kube_pod_available(p, 61, NOW));
    json_decref(p);
    p = ready_pod("False", "'2025-01-01T00:00:00Z'");
    assert_false(kube_pod_ready(p));
    assert_false(kube_pod_available(p, 0, NOW));
    json_decref(p);
    /* the first Ready condition decides (GetPodCondition) */
    p = sq_load("{'status':{'conditions':[{'type':'Ready','status':'False'},"
                "{'type':'Ready','status':'True'}]}}");
    assert_false(kube_pod_ready(p));
    json_decref(p);
}

/* An unset transition time (absent, null, unreadable, or Go's zero time)
 * never satisfies minReadySeconds: !LastTransitionTime.IsZero() fails. */
static void test_unset_transition_time_is_not_available(void **state)
{
    (void)state;
    static const char *const unset[] = {"null", "'yesterday'", "'0001-01-01T00:00:00Z'",
                                        "'2025-02-30T00:00:00Z'"};
    for (size_t i = 0; i < sizeof unset / sizeof *unset; i++) {
        json_t *p = ready_pod("True", unset[i]);
        assert_true(kube_pod_ready(p));
        assert_true(kube_pod_available(p, 0, NOW));
        if (kube_pod_available(p, 30, NOW)) print_error("available with %s\n", unset[i]);
        assert_false(kube_pod_available(p, 30, NOW));
        json_decref(p);
    }
}

static void test_terminal_and_sidecar(void **state)
{
    (void)state;
    static const struct {
        const char *phase;
        bool terminal;
    } phases[] = {{"Succeeded", true}, {"Failed", true},   {"Running", false},
                  {"Pending", false},  {"Unknown", false}, {"", false}};
    for (size_t i = 0; i < sizeof phases / sizeof *phases; i++) {
        json_t *p = sqf("{'status':{'phase':'%s'}}", phases[i].phase);
        assert_int_equal(kube_pod_terminal(p), phases[i].terminal);
        json_decref(p);
    }
    json_t *c = sq_load("[{'name':'a','restartPolicy':'Always'},{'name':'b'},"
                        "{'name':'c','restartPolicy':'OnFailure'}]");
    assert_true(kube_container_is_sidecar(json_array_get(c, 0)));
    assert_false(kube_container_is_sidecar(json_array_get(c, 1)));
    assert_false(kube_container_is_sidecar(json_array_get(c, 2)));
    assert_false(kube_container_is_sidecar(NULL));
    json_decref(c);
}

/* GetTargetNodeName: the first metadata.name In of any term, one value. */
static void test_target_node(void **state)
{
    (void)state;
    static const struct {
        const char *terms;
        const char *node;
    } cases[] = {
        {"[{'matchFields':[{'key':'metadata.name','operator':'In','values':['n1']}]}]", "n1"},
        {"[{'matchFields':[{'key':'metadata.name','operator':'NotIn','values':['n9']},"
         "{'key':'metadata.name','operator':'In','values':['n1']}]}]",
         "n1"},
        {"[{'matchExpressions':[{'key':'a','operator':'Exists'}]},"
         "{'matchFields':[{'key':'metadata.name','operator':'In','values':['n2']}]}]",
         "n2"},
        {"[{'matchFields':[{'key':'metadata.name','operator':'In','values':['n1','n2']}]}]", NULL},
        {"[]", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *pod = sqf("{'spec':{'affinity':{'nodeAffinity':{"
                          "'requiredDuringSchedulingIgnoredDuringExecution':{"
                          "'nodeSelectorTerms':%s}}}}}",
                          cases[i].terms);
        const char *got = kube_ds_target_node(pod);
        if (cases[i].node)
            assert_string_equal(got, cases[i].node);
        else
            assert_null(got);
        json_decref(pod);
    }
    json_t *bound = sq_load("{'spec':{'nodeName':'n7'}}");
    assert_string_equal(kube_ds_target_node(bound), "n7");
    json_decref(bound);
}

/* ---- the DaemonSet controller ---- */

#define DS_META                                                                                    \
    "'metadata':{'name':'ds','namespace':'ns','uid':'ds-uid','generation':1,"                      \
    "'annotations':{'deprecated.daemonset.template.generation':'1'}}"
#define DS_SPEC                                                                                    \
    "'spec':{'minReadySeconds':30,'selector':{'matchLabels':{'app':'ds'}},"                        \
    "'template':{'metadata':{'labels':{'app':'ds'}},'spec':{'containers':[{'name':'c',"            \
    "'image':'i'}]}},'updateStrategy':{'type':'RollingUpdate','rollingUpdate':{"                   \
    "'maxUnavailable':1,'maxSurge':0}}}"
#define OWNER                                                                                      \
    "'ownerReferences':[{'kind':'DaemonSet','name':'ds','uid':'ds-uid','controller':true}]"

/* One node, one daemon pod on it, Ready since `since`: the numberAvailable
 * the controller writes. */
static long long controller_available(const char *since)
{
    json_t *ds = sq_load("{'apiVersion':'apps/v1','kind':'DaemonSet'," DS_META "," DS_SPEC ","
                         "'status':{}}");
    json_t *nodes = sq_load("[{'kind':'Node','metadata':{'name':'n0'},'spec':{},"
                            "'status':{'conditions':[{'type':'Ready','status':'True'}]}}]");
    json_t *pods = sqf("[{'kind':'Pod','metadata':{'name':'ds-a','namespace':'ns','uid':'p',"
                       "'creationTimestamp':'2025-12-01T00:00:00Z','labels':{'app':'ds',"
                       "'pod-template-generation':'1'}," OWNER "},'spec':{'nodeName':'n0'},"
                       "'status':{'phase':'Running','conditions':[{'type':'Ready','status':"
                       "'True','lastTransitionTime':%s}]}}]",
                       since);
    json_t *revs = json_array();
    ctl_ds_plan plan;
    gp_error err = {0};
    int rc = ctl_ds_sync(ds, nodes, pods, revs, NOW, false, &plan, &err);
    if (rc != 0) print_error("%s\n", err.text);
    assert_int_equal(rc, 0);
    assert_non_null(plan.status);
    long long n = json_integer_value(json_object_get(plan.status, "numberAvailable"));
    assert_int_equal(json_integer_value(json_object_get(plan.status, "numberReady")), 1);
    ctl_ds_plan_free(&plan);
    json_decref(ds);
    json_decref(nodes);
    json_decref(pods);
    json_decref(revs);
    return n;
}

/* Disagreement: Go's zero time as lastTransitionTime was a time long past
 * to the controller, so the pod counted available; IsZero says it is not. */
static void test_controller_zero_time_is_not_available(void **state)
{
    (void)state;
    assert_int_equal(controller_available("'2025-12-31T23:59:00Z'"), 1);
    assert_int_equal(controller_available("'2025-12-31T23:59:40Z'"), 0);
    assert_int_equal(controller_available("'0001-01-01T00:00:00Z'"), 0);
    assert_int_equal(controller_available("'not a time'"), 0);
}

/* ---- the rollout analyzer ---- */

/* The analyzer's report over one DaemonSet, one node and the given pods
 * (JSON array text), clocked at NOW. */
static json_t *rollout_report(const char *pods_json)
{
    json_t *ds = sq_load("{'apiVersion':'apps/v1','kind':'DaemonSet'," DS_META "," DS_SPEC ","
                         "'status':{'desiredNumberScheduled':1,'observedGeneration':1}}");
    json_t *node = sq_load("{'kind':'Node','metadata':{'name':'n1'},'status':{'allocatable':{"
                           "'cpu':'4','memory':'8Gi'},'conditions':[{'type':'Ready',"
                           "'status':'True'}]}}");
    json_t *pods = sq_load(pods_json);
    gp_error err = {0};
    an_rollout *b = an_rollout_new(ds, &err);
    assert_non_null(b);
    an_rollout_set_now(b, NOW);
    an_rollout_add_node(b, node);
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p) an_rollout_add_pod(b, p);
    json_t *report = an_rollout_finish(b, &err);
    assert_non_null(report);
    an_rollout_free(b);
    json_decref(ds);
    json_decref(node);
    json_decref(pods);
    return report;
}

#define DS_POD(extra_meta, spec, status)                                                           \
    "[{'kind':'Pod','metadata':{'name':'ds-a','namespace':'ns','labels':{'app':'ds',"              \
    "'pod-template-generation':'1'}," OWNER extra_meta "},'spec':" spec ",'status':" status "}]"

/* Disagreement: a Ready pod whose lastTransitionTime does not parse (or is
 * Go's zero time) was available to the analyzer; to the controller it is
 * not while minReadySeconds is above 0, so it is stuck. */
static void test_analyzer_unset_transition_time_is_not_available(void **state)
{
    (void)state;
    static const char *const unset[] = {
        DS_POD("", "{'nodeName':'n1'}",
               "{'phase':'Running','conditions':[{'type':'Ready','status':'True',"
               "'lastTransitionTime':'not a time'}]}"),
        DS_POD("", "{'nodeName':'n1'}",
               "{'phase':'Running','conditions':[{'type':'Ready','status':'True',"
               "'lastTransitionTime':'0001-01-01T00:00:00Z'}]}"),
    };
    for (size_t i = 0; i < sizeof unset / sizeof *unset; i++) {
        json_t *r = rollout_report(unset[i]);
        const json_t *stuck = json_object_get(r, "stuck");
        assert_int_equal(json_array_size(stuck), 1);
        assert_string_equal(json_string_value(json_object_get(json_array_get(stuck, 0), "pod")),
                            "ds-a");
        json_decref(r);
    }
    json_t *r = rollout_report(DS_POD("", "{'nodeName':'n1'}",
                                      "{'phase':'Running','conditions':[{'type':'Ready',"
                                      "'status':'True','lastTransitionTime':"
                                      "'2025-12-31T23:00:00Z'}]}"));
    assert_int_equal(json_array_size(json_object_get(r, "stuck")), 0);
    json_decref(r);
}

/* Disagreement: the analyzer took a pending daemon pod's node only from the
 * first matchFields requirement of the first term, where
 * GetTargetNodeName looks at every one. */
static void test_analyzer_target_node_as_the_controller(void **state)
{
    (void)state;
    json_t *r = rollout_report(
        DS_POD("",
               "{'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"
               "'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name','operator':'NotIn',"
               "'values':['n9']},{'key':'metadata.name','operator':'In','values':['n1']}]}]}}}}",
               "{'phase':'Pending','conditions':[{'type':'PodScheduled','status':'False',"
               "'reason':'Unschedulable','message':'0/1 nodes are available: 1 Insufficient "
               "memory.'}]}"));
    const json_t *stuck = json_array_get(json_object_get(r, "stuck"), 0);
    assert_non_null(stuck);
    assert_string_equal(json_string_value(json_object_get(stuck, "node")), "n1");
    json_decref(r);
}

/* Disagreement: deletionTimestamp null was a deletion to the analyzer (it
 * tested the member's presence); Go decodes null to nil, so the pod is
 * live: not Ready, it is stuck. */
static void test_analyzer_null_deletion_timestamp_is_live(void **state)
{
    (void)state;
    json_t *r =
        rollout_report(DS_POD(",'deletionTimestamp':null", "{'nodeName':'n1'}",
                              "{'phase':'Running','conditions':[{'type':'Ready','status':'False',"
                              "'lastTransitionTime':'2025-12-31T23:00:00Z'}]}"));
    const json_t *stuck = json_object_get(r, "stuck");
    assert_int_equal(json_array_size(stuck), 1);
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ready_and_available),
        cmocka_unit_test(test_unset_transition_time_is_not_available),
        cmocka_unit_test(test_terminal_and_sidecar),
        cmocka_unit_test(test_target_node),
        cmocka_unit_test(test_controller_zero_time_is_not_available),
        cmocka_unit_test(test_analyzer_unset_transition_time_is_not_available),
        cmocka_unit_test(test_analyzer_target_node_as_the_controller),
        cmocka_unit_test(test_analyzer_null_deletion_timestamp_is_live),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
