/* an_sched_message_parse and the blocker codes: the exact lab messages of
 * k8s-semantics.md 5.5 (as the embedded scheduler printed them into the lab
 * snapshots), the format rules of 5.3-5.4, every reason string of 5.2, and
 * messages the embedded scheduler (src/controllers/scheduler.c) writes for nodes
 * built here. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/sched_message.h"
#include "controllers/scheduler.h"

#define STEP5_MSG                                                                                  \
    "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are "           \
    "available: 3 No preemption victims found for incoming pod."
#define STEP8_MSG                                                                                  \
    "0/3 nodes are available: 1 Insufficient memory, 2 node(s) didn't satisfy plugin(s) "          \
    "[NodeAffinity]. preemption: 0/3 nodes are available: 1 No preemption victims found for "      \
    "incoming pod, 2 Preemption is not helpful for scheduling."

static json_t *parse_ok(const char *msg)
{
    gp_error err = {0};
    json_t *p = an_sched_message_parse(msg, &err);
    if (!p) print_error("parse failed: %s\n", err.text);
    assert_non_null(p);
    return p;
}

static void assert_parses_as(const char *msg, const char *squoted)
{
    json_t *p = parse_ok(msg), *want = sq_load(squoted);
    assert_json_equal(p, want);
    json_decref(p);
    json_decref(want);
}

/* The message the fixture's FailedScheduling event carries for cuda-probe
 * (lab step 5), checked against the text lab.md gives. */
static void test_lab_step5_message(void **state)
{
    (void)state;
    assert_parses_as(STEP5_MSG,
                     "{'total':3,'reasons':[{'count':3,'reason':'Insufficient nvidia.com/gpu',"
                     "'blocker':'insufficient-nvidia.com/gpu'}],"
                     "'preemption':{'total':3,'reasons':[{'count':3,'reason':'No preemption "
                     "victims found for incoming pod','blocker':'unknown'}]},"
                     "'blocker':'insufficient-nvidia.com/gpu'}");
}

/* The stalled DaemonSet pod (lab step 8): its own node says Insufficient
 * memory; the two others were never candidates (PreFilter). */
static void test_lab_step8_message(void **state)
{
    (void)state;
    assert_parses_as(
        STEP8_MSG,
        "{'total':3,'reasons':[{'count':1,'reason':'Insufficient memory','blocker':"
        "'insufficient-memory'},{'count':2,'reason':'node(s) didn\\u0027t satisfy plugin(s) "
        "[NodeAffinity]','blocker':'node-affinity'}],'preemption':{'total':3,'reasons':["
        "{'count':1,'reason':'No preemption victims found for incoming pod','blocker':'unknown'},"
        "{'count':2,'reason':'Preemption is not helpful for scheduling','blocker':'unknown'}]},"
        "'blocker':'insufficient-memory'}");
}

/* Counts sort as strings ("10 ..." before "2 ..."), so item boundaries are
 * found by ", <digits> ", never by position. */
static void test_two_digit_counts(void **state)
{
    (void)state;
    json_t *p = parse_ok("0/12 nodes are available: 10 Insufficient cpu, 2 Insufficient memory.");
    assert_int_equal(json_integer_value(json_object_get(p, "total")), 12);
    const json_t *r = json_object_get(p, "reasons");
    assert_int_equal(json_array_size(r), 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(r, 0), "count")), 10);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(r, 1), "count")), 2);
    assert_string_equal(json_string_value(json_object_get(p, "blocker")), "insufficient-cpu");
    assert_null(json_object_get(p, "preemption"));
    json_decref(p);
}

static void test_prefilter_message(void **state)
{
    (void)state;
    assert_parses_as("0/3 nodes are available: pod affinity terms conflict.",
                     "{'total':3,'prefilter':'pod affinity terms conflict','blocker':'unknown'}");
}

static void test_no_nodes(void **state)
{
    (void)state;
    assert_parses_as("no nodes available to schedule pods", "{'total':0,'blocker':'unknown'}");
}

/* preemptionPolicy Never: the suffix is not a FitError (5.4). */
static void test_preemption_text(void **state)
{
    (void)state;
    json_t *p = parse_ok("0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: "
                         "not eligible due to preemptionPolicy=Never.");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(p, "preemption"), "text")),
        "not eligible due to preemptionPolicy=Never.");
    json_decref(p);
}

/* An event note cut at 1024 bytes ends in " ..." (5.3). */
static void test_truncated_note(void **state)
{
    (void)state;
    json_t *p = parse_ok("0/300 nodes are available: 100 Insufficient cpu, 200 node(s) had "
                         "untolerated taint {dedicated: gpu} ...");
    assert_true(json_is_true(json_object_get(p, "truncated")));
    const json_t *r = json_object_get(p, "reasons");
    assert_string_equal(json_string_value(json_object_get(json_array_get(r, 1), "reason")),
                        "node(s) had untolerated taint {dedicated: gpu}");
    assert_string_equal(json_string_value(json_object_get(p, "blocker")), "untolerated-taint");
    json_decref(p);
}

static void test_not_a_fit_error(void **state)
{
    (void)state;
    gp_error err = {0};
    assert_null(an_sched_message_parse("pod has unbound immediate PersistentVolumeClaims", &err));
    assert_non_null(strstr(err.text, "not a scheduler FitError"));
    assert_null(an_sched_message_parse(NULL, NULL));
}

/* Every reason string of k8s-semantics.md 5.2 and its code. */
static void test_blocker_codes(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"node(s) were unschedulable", "unschedulable-node"},
        {"node(s) didn't match the requested node name", "unknown"},
        {"node(s) had untolerated taint {kwok.x-k8s.io/node: fake}", "untolerated-taint"},
        {"node(s) had untolerated taint {node.kubernetes.io/not-ready: }", "node-not-ready"},
        {"node(s) had untolerated taint {node.kubernetes.io/unreachable: }", "node-not-ready"},
        {"node(s) had untolerated taint {node.kubernetes.io/unschedulable: }",
         "unschedulable-node"},
        {"node(s) didn't match Pod's node affinity/selector", "node-affinity"},
        {"node(s) didn't satisfy plugin(s) [NodeAffinity]", "node-affinity"},
        {"node(s) didn't have free ports for the requested pod ports", "unknown"},
        {"Too many pods", "insufficient-pods"},
        {"Insufficient cpu", "insufficient-cpu"},
        {"Insufficient memory", "insufficient-memory"},
        {"Insufficient ephemeral-storage", "insufficient-ephemeral-storage"},
        {"Insufficient nvidia.com/gpu", "insufficient-nvidia.com/gpu"},
    };
    char buf[AN_BLOCKER_MAX];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        assert_string_equal(an_sched_blocker(cases[i][0], buf), cases[i][1]);
    assert_string_equal(an_waiting_blocker("CrashLoopBackOff"), "crash-loop");
    assert_string_equal(an_waiting_blocker("ImagePullBackOff"), "image-pull");
    assert_string_equal(an_waiting_blocker("ErrImagePull"), "image-pull");
    assert_null(an_waiting_blocker("ContainerCreating"));
    assert_null(an_waiting_blocker(NULL));
}

/* The absent-node reason decides only when nothing else is said. */
static void test_primary_ignores_absent_nodes(void **state)
{
    (void)state;
    json_t *p = parse_ok("0/5 nodes are available: 1 node(s) had untolerated taint "
                         "{node.kubernetes.io/not-ready: }, 4 node(s) didn't satisfy plugin(s) "
                         "[NodeAffinity].");
    assert_string_equal(json_string_value(json_object_get(p, "blocker")), "node-not-ready");
    json_decref(p);
    p = parse_ok("0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity].");
    assert_string_equal(json_string_value(json_object_get(p, "blocker")), "node-affinity");
    json_decref(p);
}

/* Messages written by the embedded scheduler read back: one node cordoned,
 * one tainted, one too small for the 64Gi request. */
static void test_embedded_scheduler_round_trip(void **state)
{
    (void)state;
    json_t *nodes[3] = {
        sq_load("{'metadata':{'name':'a'},'spec':{'unschedulable':true},'status':{'allocatable':"
                "{'cpu':'16','memory':'32Gi','pods':'110'}}}"),
        sq_load("{'metadata':{'name':'b'},'spec':{'taints':[{'key':'dedicated','value':'gpu',"
                "'effect':'NoSchedule'}]},'status':{'allocatable':{'cpu':'16','memory':'32Gi',"
                "'pods':'110'}}}"),
        sq_load("{'metadata':{'name':'c'},'status':{'allocatable':{'cpu':'16','memory':'32Gi',"
                "'pods':'110'}}}"),
    };
    json_t *pod = sq_load("{'metadata':{'name':'p','namespace':'x'},'spec':{'containers':[{"
                          "'name':'c','resources':{'requests':{'memory':'64Gi'}}}]}}");
    ctl_sched_node in[3];
    for (size_t i = 0; i < 3; i++)
        in[i] = (ctl_sched_node){nodes[i], NULL, 0};
    ctl_sched_result res = {0};
    assert_int_equal(ctl_sched_schedule(pod, in, 3, 0, &res), 0);
    assert_int_equal(res.chosen, -1);
    json_t *p = parse_ok(res.message);
    assert_int_equal(json_integer_value(json_object_get(p, "total")), 3);
    json_t *want =
        sq_load("[{'count':1,'reason':'Insufficient memory','blocker':'insufficient-memory'},"
                "{'count':1,'reason':'node(s) had untolerated taint {dedicated: gpu}','blocker':"
                "'untolerated-taint'},{'count':1,'reason':'node(s) were unschedulable','blocker':"
                "'unschedulable-node'}]");
    assert_json_equal(json_object_get(p, "reasons"), want);
    /* Equal counts: the earliest filter in 5.2's order wins. */
    assert_string_equal(json_string_value(json_object_get(p, "blocker")), "unschedulable-node");
    json_decref(want);
    json_decref(p);
    ctl_sched_result_free(&res);
    json_decref(pod);
    for (size_t i = 0; i < 3; i++)
        json_decref(nodes[i]);
}

/* The events' blockers, on the recorded texts: the real control plane's
 * FailedCreate (k8s-cases/real-1.32.13/lifecycle-and-backoff.txt) and the
 * kubelet's FailedCreatePodSandBox of gpu-node-facts.md 6.3. */
static void test_event_blockers(void **state)
{
    (void)state;
    char name[64];
    assert_string_equal(an_event_blocker("FailedCreate",
                                         "Error creating: pods \"dsrc-\" is forbidden: pod "
                                         "rejected: RuntimeClass \"missing\" not found",
                                         name, sizeof name),
                        "runtimeclass-missing");
    assert_string_equal(name, "missing");
    assert_string_equal(an_event_blocker("FailedCreatePodSandBox",
                                         "Failed to create pod sandbox: rpc error: code = Unknown "
                                         "desc = failed to get sandbox runtime: no runtime for "
                                         "\"nvidia-cdi\" is configured",
                                         name, sizeof name),
                        "runtime-handler-missing");
    assert_string_equal(name, "nvidia-cdi");
    assert_string_equal(an_event_blocker("FailedCreatePodSandBox",
                                         "Failed to create pod sandbox: "
                                         "rpc error: code = DeadlineExceeded",
                                         name, sizeof name),
                        "sandbox-failed");
    assert_string_equal(
        an_event_blocker("FailedCreate",
                         "Error creating: pods \"tk-\" is forbidden: exceeded "
                         "quota: q, requested: pods=1, used: pods=1, limited: pods=1",
                         NULL, 0),
        "pod-create-forbidden");
    assert_string_equal(an_event_blocker("FailedCreate",
                                         "Error creating: etcdserver: request "
                                         "timed out",
                                         NULL, 0),
                        "pod-create-failed");
    assert_null(an_event_blocker("FailedScheduling", "0/3 nodes are available", NULL, 0));
}

int main(void)
{
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lab_step5_message),
        cmocka_unit_test(test_lab_step8_message),
        cmocka_unit_test(test_two_digit_counts),
        cmocka_unit_test(test_prefilter_message),
        cmocka_unit_test(test_no_nodes),
        cmocka_unit_test(test_preemption_text),
        cmocka_unit_test(test_truncated_note),
        cmocka_unit_test(test_not_a_fit_error),
        cmocka_unit_test(test_blocker_codes),
        cmocka_unit_test(test_primary_ignores_absent_nodes),
        cmocka_unit_test(test_embedded_scheduler_round_trip),
        cmocka_unit_test(test_event_blockers),
    };
    return cmocka_run_group_tests_name("analyze_sched_message", tests, NULL, NULL);
}
