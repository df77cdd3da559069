/* kube/pod_print.h: the READY, STATUS and RESTARTS of printPod
 * (pkg/printers/internalversion/printers.go, 1.32), which the API server's
 * Table (apiserver/table.c) and the analyzers (why-pending's device plugin
 * pods, rollout's stuck pods) print. Each case names the printPod rule; the
 * analyzers' own copy lacked the sidecar, SchedulingGated, NotReady,
 * NodeLost and terminal-phase rules, and printed "Unknown" for no phase. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <string.h>

#include "analyze/why_pending.h"
#include "apiserver/table.h"
#include "kube/pod_print.h"

#define NOW ((time_t)1735732800) /* 2025-01-01T12:00:00Z */

#define META(extra)                                                                                \
    "'metadata':{'name':'nvidia-device-plugin-x','namespace':'kube-system'" extra "}"
#define SPEC(inits)                                                                                \
    "'spec':{'nodeName':'n1','initContainers':[" inits "],'containers':[{'name':'c'}]}"
#define SIDECAR "{'name':'s','restartPolicy':'Always'}"
#define RUNNING(name, ready)                                                                       \
    "{'name':'" name "','ready':" ready ",'restartCount':0,'state':{'running':{"                   \
    "'startedAt':'2025-01-01T11:00:00Z'}}"

typedef struct pod_case {
    const char *rule;
    const char *pod;
    const char *status;
} pod_case;

static const pod_case cases[] = {
    {"a started sidecar is done and counts its readiness",
     "{" META("") "," SPEC(SIDECAR) ",'status':{'phase':'Running','initContainerStatuses':"
                                    "[" RUNNING("s", "true") ",'started':true}],'containerStatuses'"
                                                             ":[" RUNNING("c", "false") "}]}}",
     "Running"},
    {"a sidecar not yet started holds the pod in Init",
     "{" META("") "," SPEC(SIDECAR) ",'status':{'phase':'Pending','initContainerStatuses':"
                                    "[" RUNNING("s", "false") ",'started':false}]}}",
     "Init:0/1"},
    {"PodScheduled reason SchedulingGated",
     "{" META("") "," SPEC("") ",'status':{'phase':'Pending','conditions':[{'type':'PodScheduled',"
                               "'status':'False','reason':'SchedulingGated'}]}}",
     "SchedulingGated"},
    {"Completed with a container running: NotReady without Ready=True",
     "{" META("") "," SPEC("") ",'status':{'phase':'Running','containerStatuses':[" RUNNING(
         "c", "true") "},{'name':'d','state':{'terminated':{'exitCode':0,'reason':"
                      "'Completed'}}}]}}",
     "NotReady"},
    {"Completed with a container running: Running with Ready=True",
     "{" META("") "," SPEC("") ",'status':{'phase':'Running','conditions':[{'type':'Ready',"
                               "'status':'True'}],'containerStatuses':[" RUNNING(
                                   "c",
                                   "true") "},{'name':'d','state':{"
                                           "'terminated':{'exitCode':0,'reason':'Completed'}}}]}}",
     "Running"},
    {"being deleted after the node was lost",
     "{" META(",'deletionTimestamp':'2025-01-01T11:59:00Z'") "," SPEC(
         "") ",'status':{'phase':"
             "'Running','reason':'NodeLost'}}",
     "Unknown"},
    {"being deleted in a terminal phase keeps the phase",
     "{" META(",'deletionTimestamp':'2025-01-01T11:59:00Z'") "," SPEC("") ",'status':{'phase':"
                                                                          "'Failed'}}",
     "Failed"},
    {"being deleted",
     "{" META(",'deletionTimestamp':'2025-01-01T11:59:00Z'") "," SPEC(
         "") ","
             "'status':{'phase':'Running'}}",
     "Terminating"},
    {"initializing, but Initialized=True: the containers decide",
     "{" META("") "," SPEC("{'name':'i'}") ",'status':{'phase':'Running','conditions':[{'type':"
                                           "'Initialized','status':'True'}],'initContainerStatuses'"
                                           ":[{'name':'i','state':{'waiting':"
                                           "{'reason':'PodInitializing'}}}],'containerStatuses':[{'"
                                           "name':'c','state':{'waiting':{"
                                           "'reason':'CrashLoopBackOff'}}}]}}",
     "CrashLoopBackOff"},
    {"no phase at all prints as it is", "{" META("") "," SPEC("") ",'status':{}}", ""},
    {"an init container that failed",
     "{" META("") "," SPEC("{'name':'i'}") ",'status':{'phase':"
                                           "'Pending','initContainerStatuses':[{'name':'i','state':"
                                           "{'terminated':{'exitCode':3}}}]}}",
     "Init:ExitCode:3"},
    {"a container killed by a signal",
     "{" META("") "," SPEC("") ",'status':{'phase':'Running',"
                               "'containerStatuses':[{'name':'c','state':{'terminated':{'exitCode':"
                               "137,'signal':9}}}]}}",
     "Signal:9"},
};

static void test_status_text(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *pod = sq_load(cases[i].pod);
        char buf[64];
        size_t len = kube_pod_status_text(pod, buf, sizeof buf);
        if (strcmp(buf, cases[i].status) != 0)
            print_error("%s: expected '%s', got '%s'\n", cases[i].rule, cases[i].status, buf);
        assert_string_equal(buf, cases[i].status);
        assert_int_equal(len, strlen(cases[i].status));
        json_decref(pod);
    }
}

/* The API server's Table prints the same STATUS cell. */
static void test_table_cell(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *pod = sq_load(cases[i].pod);
        json_t *table = as_table("", "Pod", &pod, 1, true, NULL, NOW);
        assert_non_null(table);
        const json_t *cells =
            json_object_get(json_array_get(json_object_get(table, "rows"), 0), "cells");
        assert_string_equal(json_string_value(json_array_get(cells, 2)), cases[i].status);
        json_decref(table);
        json_decref(pod);
    }
}

/* Disagreement: why-pending shows a device plugin pod's STATUS as kubectl
 * does; its own printPod lacked the rules named above. */
static void test_why_pending_plugin_pod_status(void **state)
{
    (void)state;
    json_t *pending = sq_load("{'kind':'Pod','metadata':{'name':'cuda','namespace':'gpu-lab'},"
                              "'spec':{'containers':[{'name':'c','resources':{'limits':{"
                              "'nvidia.com/gpu':'1'}}}]},'status':{'phase':'Pending'}}");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gp_error err = {0};
        an_why_pending *b = an_why_pending_new(pending, &err);
        assert_non_null(b);
        json_t *pod = sq_load(cases[i].pod);
        an_why_pending_add_pod(b, pod);
        json_t *report = an_why_pending_finish(b, &err);
        assert_non_null(report);
        const json_t *plugin = json_array_get(json_object_get(report, "device_plugin_pods"), 0);
        const char *got = json_string_value(json_object_get(plugin, "status"));
        if (strcmp(got, cases[i].status) != 0)
            print_error("%s: expected '%s', got '%s'\n", cases[i].rule, cases[i].status, got);
        assert_string_equal(got, cases[i].status);
        json_decref(report);
        json_decref(pod);
        an_why_pending_free(b);
    }
    json_decref(pending);
}

/* READY and RESTARTS: the started sidecar counts in both; restarts sum the
 * sidecar's and the containers' with the latest termination. */
static void test_ready_and_restarts(void **state)
{
    (void)state;
    json_t *pod = sq_load(
        "{'spec':{'initContainers':[{'name':'s','restartPolicy':'Always'},{'name':'i'}],"
        "'containers':[{'name':'c'},{'name':'d'}]},'status':{'phase':'Running',"
        "'initContainerStatuses':[{'name':'s','ready':true,'started':true,'restartCount':2,"
        "'state':{'running':{}},'lastState':{'terminated':{'exitCode':1,"
        "'finishedAt':'2025-01-01T10:00:00Z'}}},{'name':'i','restartCount':5,'state':{"
        "'terminated':{'exitCode':0}}}],'containerStatuses':[{'name':'c','ready':true,"
        "'restartCount':1,'state':{'running':{}},'lastState':{'terminated':{'exitCode':1,"
        "'finishedAt':'2025-01-01T11:00:00Z'}}},{'name':'d','ready':false,'state':{'running':"
        "{}}}]}}");
    kube_pod_print p;
    kube_pod_print_read(pod, &p);
    assert_int_equal(p.ready, 2);    /* s and c */
    assert_int_equal(p.total, 3);    /* c, d and the sidecar */
    assert_int_equal(p.restarts, 3); /* s's 2 and c's 1; i's 5 only while initializing */
    assert_true(p.last_restart.set);
    assert_int_equal(p.last_restart.sec, 1735729200); /* 11:00 */
    char buf[8];
    assert_int_equal(kube_pod_print_status(&p, buf, sizeof buf), 7);
    assert_string_equal(buf, "Running");
    json_decref(pod);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_text),
        cmocka_unit_test(test_table_cell),
        cmocka_unit_test(test_why_pending_plugin_pod_status),
        cmocka_unit_test(test_ready_and_restarts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
