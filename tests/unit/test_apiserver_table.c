/* as_table: the Table the API server answers `kubectl get` with
 * (k8s-semantics 2.6, 2.7, 9). Expected cells follow kube-apiserver 1.32's
 * pkg/printers/internalversion/printers.go rule by rule (each case names the
 * rule), ages follow apimachinery's duration.HumanDuration, and the server
 * prints with Wide set, so rows carry the priority-1 cells too.
 *
 * Objects are JSON written with ' for " so the shapes stay readable. Every
 * case is printed at NOW = 2025-01-01T12:00:00Z. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/table.h"

#define NOW ((time_t)1735732800) /* 2025-01-01T12:00:00Z */

/* ---- helpers ---- */

/* Exact compact text, so "0" and 0 differ and member order counts. */
static void assert_dumps_as(const json_t *v, const char *squoted)
{
    json_t *expected = sq_load(squoted);
    char *want = json_dumps(expected, JSON_COMPACT | JSON_ENCODE_ANY);
    char *got = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (strcmp(want, got) != 0) print_error("expected %s\n     got %s\n", want, got);
    assert_string_equal(got, want);
    free(want);
    free(got);
    json_decref(expected);
}

static json_t *table_of(const char *group, const char *kind, const char *object_sq)
{
    json_t *obj = sq_load(object_sq);
    json_t *table = as_table(group, kind, &obj, 1, true, "7", NOW);
    json_decref(obj);
    assert_non_null(table);
    return table;
}

/* The cells of the one row `object_sq` prints as. */
static void assert_cells(const char *group, const char *kind, const char *object_sq,
                         const char *cells_sq)
{
    json_t *table = table_of(group, kind, object_sq);
    json_t *rows = json_object_get(table, "rows");
    assert_int_equal(json_array_size(rows), 1);
    assert_dumps_as(json_object_get(json_array_get(rows, 0), "cells"), cells_sq);
    json_decref(table);
}

/* [name, type, format, priority] of each column, in order; every
 * description a string. */
static void assert_columns(const char *group, const char *kind, const char *expected_sq)
{
    json_t *table = as_table(group, kind, NULL, 0, true, NULL, NOW);
    assert_non_null(table);
    json_t *got = json_array();
    size_t i;
    json_t *def;
    json_array_foreach(json_object_get(table, "columnDefinitions"), i, def)
    {
        assert_true(json_is_string(json_object_get(def, "description")));
        assert_int_equal(json_object_size(def), 5);
        json_array_append_new(got, json_pack("[O, O, O, O]", json_object_get(def, "name"),
                                             json_object_get(def, "type"),
                                             json_object_get(def, "format"),
                                             json_object_get(def, "priority")));
    }
    assert_dumps_as(got, expected_sq);
    json_decref(got);
    json_decref(table);
}

static const char *description_of(json_t *table, size_t column)
{
    json_t *defs = json_object_get(table, "columnDefinitions");
    return json_string_value(json_object_get(json_array_get(defs, column), "description"));
}

/* ---- duration.HumanDuration ---- */

struct duration_case {
    long long seconds;
    const char *text;
};

/* Each pair sits on one side of a HumanDuration boundary (duration.go):
 * seconds below 2m, "XmYs" below 10m, minutes below 3h, "XhYm" below 8h,
 * hours below 48h, "XdYh" below 8d, days below 2y, "XyYd" below 8y. */
static const struct duration_case durations[] = {
    {-5, "<invalid>"},     {-2, "<invalid>"},  {-1, "0s"},         {0, "0s"},
    {59, "59s"},           {60, "60s"},        {119, "119s"},      {120, "2m"},
    {330, "5m30s"},        {599, "9m59s"},     {600, "10m"},       {7140, "119m"},
    {7200, "120m"},        {10799, "179m"},    {10800, "3h"},      {12600, "3h30m"},
    {28799, "7h59m"},      {28800, "8h"},      {169200, "47h"},    {172799, "47h"},
    {172800, "2d"},        {180000, "2d2h"},   {259200, "3d"},     {687600, "7d23h"},
    {691200, "8d"},        {62985600, "729d"}, {63072000, "2y"},   {98496000, "3y45d"},
    {252201600, "7y364d"}, {252288000, "8y"},  {315360000, "10y"},
};

static void test_human_duration_boundaries(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof durations / sizeof *durations; i++) {
        char buf[32];
        size_t len = as_human_duration(durations[i].seconds, buf, sizeof buf);
        if (strcmp(buf, durations[i].text) != 0)
            print_error("%lld s: expected %s, got %s\n", durations[i].seconds, durations[i].text,
                        buf);
        assert_string_equal(buf, durations[i].text);
        assert_int_equal(len, strlen(durations[i].text));
    }
}

static void test_human_duration_truncates_like_snprintf(void **state)
{
    (void)state;
    char buf[3];
    assert_int_equal(as_human_duration(330, buf, sizeof buf), 5);
    assert_string_equal(buf, "5m");
}

/* ---- the Table envelope (2.6, 2.7) ---- */

#define PROBE_META                                                                                 \
    "'metadata':{'name':'cuda-probe','namespace':'default','uid':'6b1f','resourceVersion':'41',"   \
    "'creationTimestamp':'2025-01-01T11:59:50Z','labels':{'app':'cuda-probe'},"                    \
    "'annotations':{'kubectl.kubernetes.io/last-applied-configuration':'{}'}}"

static void test_envelope_of_a_list(void **state)
{
    (void)state;
    json_t *objs[2] = {
        sq_load("{'apiVersion':'v1','kind':'Namespace'," PROBE_META
                ",'status':{'phase':'Active'}}"),
        sq_load("{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'kube-system',"
                "'creationTimestamp':'2024-12-27T12:00:00Z'},'status':{'phase':'Active'}}"),
    };
    json_t *table = as_table("", "Namespace", objs, 2, true, "42", NOW);
    assert_non_null(table);
    /* Member order as metav1.Table marshals: TypeMeta, ListMeta, columns, rows. */
    const char *order[] = {"kind", "apiVersion", "metadata", "columnDefinitions", "rows"};
    size_t i = 0;
    const char *key;
    json_t *value;
    json_object_foreach(table, key, value) assert_string_equal(key, order[i++]);
    assert_int_equal(i, 5);
    assert_string_equal(json_string_value(json_object_get(table, "kind")), "Table");
    assert_string_equal(json_string_value(json_object_get(table, "apiVersion")), "meta.k8s.io/v1");
    assert_dumps_as(json_object_get(table, "metadata"), "{'resourceVersion':'42'}");
    json_t *rows = json_object_get(table, "rows");
    assert_int_equal(json_array_size(rows), 2);
    /* -A and --show-labels read the row's object metadata (2.6): all of it. */
    json_t *row = json_array_get(rows, 0);
    json_object_foreach(row, key, value)
    {
        assert_true(!strcmp(key, "cells") || !strcmp(key, "object"));
    }
    json_t *object = json_object_get(row, "object");
    assert_string_equal(json_string_value(json_object_get(object, "kind")),
                        "PartialObjectMetadata");
    assert_string_equal(json_string_value(json_object_get(object, "apiVersion")), "meta.k8s.io/v1");
    assert_true(
        json_equal(json_object_get(object, "metadata"), json_object_get(objs[0], "metadata")));
    assert_ptr_not_equal(json_object_get(object, "metadata"), json_object_get(objs[0], "metadata"));
    assert_dumps_as(json_object_get(row, "cells"), "['cuda-probe','Active','10s']");
    assert_dumps_as(json_object_get(json_array_get(rows, 1), "cells"),
                    "['kube-system','Active','5d']");
    json_decref(table);
    json_decref(objs[0]);
    json_decref(objs[1]);
}

/* Watch events after the first omit the definitions: the Go slice stays nil
 * and marshals as null (apiserver watch encoder sets NoHeaders). */
static void test_envelope_of_a_later_watch_event(void **state)
{
    (void)state;
    json_t *obj = sq_load("{'apiVersion':'v1','kind':'ConfigMap'," PROBE_META "}");
    json_t *table = as_table("", "ConfigMap", &obj, 1, false, NULL, NOW);
    assert_non_null(table);
    assert_true(json_is_null(json_object_get(table, "columnDefinitions")));
    assert_dumps_as(json_object_get(table, "metadata"), "{}");
    assert_int_equal(json_array_size(json_object_get(table, "rows")), 1);
    json_decref(table);
    json_decref(obj);
}

static void test_empty_list_has_rows_array(void **state)
{
    (void)state;
    json_t *table = as_table("", "Pod", NULL, 0, true, "3", NOW);
    assert_non_null(table);
    assert_dumps_as(json_object_get(table, "rows"), "[]");
    json_decref(table);
}

/* ---- Pod ---- */

static void test_pod_columns(void **state)
{
    (void)state;
    /* podColumnDefinitions: Restarts is a "string" column since the "(Xm ago)"
     * suffix; IP, Node, Nominated Node, Readiness Gates are wide. */
    assert_columns("", "Pod",
                   "[['Name','string','name',0],['Ready','string','',0],['Status','string','',0],"
                   "['Restarts','string','',0],['Age','string','',0],['IP','string','',1],"
                   "['Node','string','',1],['Nominated Node','string','',1],"
                   "['Readiness Gates','string','',1]]");
    json_t *table = as_table("", "Pod", NULL, 0, true, NULL, NOW);
    assert_string_equal(description_of(table, 0),
                        "Name must be unique within a namespace. Is required when creating "
                        "resources, although some resources may allow a client to request the "
                        "generation of an appropriate name automatically. Name is primarily "
                        "intended for creation idempotence and configuration definition. Cannot "
                        "be updated. More info: https://kubernetes.io/docs/concepts/overview/"
                        "working-with-objects/names#names");
    assert_string_equal(description_of(table, 1),
                        "The aggregate readiness state of this pod for accepting traffic.");
    json_decref(table);
}

#define PROBE_SPEC                                                                                 \
    "'spec':{'containers':[{'name':'cuda','image':'nvidia/cuda:12.4.1-base-ubuntu22.04',"          \
    "'resources':{'limits':{'nvidia.com/gpu':'1'}}}],'runtimeClassName':'nvidia',"                 \
    "'restartPolicy':'Always','schedulerName':'default-scheduler'"

/* Section 9: `cuda-probe   0/1   Pending   0   10s` right after create; the
 * wide cells are <none> for an unset IP, node and nominated node, and for no
 * readiness gates. */
static void test_pod_pending_unschedulable(void **state)
{
    (void)state;
    assert_cells("", "Pod",
                 "{'apiVersion':'v1','kind':'Pod'," PROBE_META "," PROBE_SPEC "},"
                 "'status':{'phase':'Pending','qosClass':'BestEffort','conditions':[{"
                 "'type':'PodScheduled','status':'False','reason':'Unschedulable',"
                 "'message':'0/3 nodes are available','lastProbeTime':null,"
                 "'lastTransitionTime':'2025-01-01T11:59:51Z'}]}}",
                 "['cuda-probe','0/1','Pending','0','10s','<none>','<none>','<none>','<none>']");
}

/* Section 9 after binding and the fake kubelet: ready and running counts,
 * podIP, nodeName. Three minutes old prints "3m" (under 10m, no seconds). */
static void test_pod_running(void **state)
{
    (void)state;
    assert_cells(
        "", "Pod",
        "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'cuda-probe','namespace':'default',"
        "'creationTimestamp':'2025-01-01T11:57:00Z'}," PROBE_SPEC ",'nodeName':'lab-node-0'},"
        "'status':{'phase':'Running','hostIP':'10.0.0.10','podIP':'10.244.1.5',"
        "'podIPs':[{'ip':'10.244.1.5'}],'startTime':'2025-01-01T11:57:01Z','conditions':["
        "{'type':'Initialized','status':'True'},{'type':'Ready','status':'True'},"
        "{'type':'ContainersReady','status':'True'},{'type':'PodScheduled','status':'True'}],"
        "'containerStatuses':[{'name':'cuda','ready':true,'restartCount':0,'started':true,"
        "'state':{'running':{'startedAt':'2025-01-01T11:57:03Z'}}}]}}",
        "['cuda-probe','1/1','Running','0','3m','10.244.1.5','lab-node-0','<none>','<none>']");
}

/* restartsStr: "N (HumanDuration since the last lastState.terminated.finishedAt ago)". */
static void test_pod_restarts_with_last_restart(void **state)
{
    (void)state;
    assert_cells("", "Pod",
                 "{'metadata':{'name':'gpu-burn','creationTimestamp':'2024-12-30T12:00:00Z'},"
                 "'spec':{'containers':[{'name':'burn'}],'nodeName':'lab-node-1'},"
                 "'status':{'phase':'Running','podIPs':[{'ip':'10.244.2.9'}],"
                 "'containerStatuses':[{'name':'burn','ready':true,'restartCount':2,"
                 "'lastState':{'terminated':{'exitCode':1,'reason':'Error',"
                 "'finishedAt':'2025-01-01T11:55:00Z'}},"
                 "'state':{'running':{'startedAt':'2025-01-01T11:55:01Z'}}}]}}",
                 "['gpu-burn','1/1','Running','2 (5m ago)','2d','10.244.2.9','lab-node-1',"
                 "'<none>','<none>']");
}

/* A waiting container's reason replaces the phase (2.6; printPod's reverse
 * container loop). */
static void test_pod_container_creating(void **state)
{
    (void)state;
    assert_cells("", "Pod",
                 "{'metadata':{'name':'cuda-probe','creationTimestamp':'2025-01-01T11:59:50Z'},"
                 "'spec':{'containers':[{'name':'cuda'}],'nodeName':'lab-node-0'},"
                 "'status':{'phase':'Pending','containerStatuses':[{'name':'cuda','ready':false,"
                 "'restartCount':0,'state':{'waiting':{'reason':'ContainerCreating'}}}]}}",
                 "['cuda-probe','0/1','ContainerCreating','0','10s','<none>','lab-node-0',"
                 "'<none>','<none>']");
    /* The loop runs from the last container to the first: the first wins. */
    assert_cells("", "Pod",
                 "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'a'},{'name':'b'}]},"
                 "'status':{'phase':'Pending','containerStatuses':["
                 "{'name':'a','state':{'waiting':{'reason':'ErrImagePull'}}},"
                 "{'name':'b','state':{'waiting':{'reason':'ContainerCreating'}}}]}}",
                 "['p','0/2','ErrImagePull','0','<unknown>','<none>','<none>','<none>','<none>']");
}

/* Two containers: the first one's waiting reason wins, the second still
 * counts as ready, and its restart time comes from the first. */
static void test_pod_crash_loop(void **state)
{
    (void)state;
    assert_cells("", "Pod",
                 "{'metadata':{'name':'toolkit','creationTimestamp':'2025-01-01T11:00:00Z'},"
                 "'spec':{'containers':[{'name':'a'},{'name':'b'}]},"
                 "'status':{'phase':'Running','containerStatuses':["
                 "{'name':'a','ready':false,'restartCount':5,'lastState':{'terminated':{"
                 "'exitCode':2,'finishedAt':'2025-01-01T11:59:20Z'}},"
                 "'state':{'waiting':{'reason':'CrashLoopBackOff'}}},"
                 "{'name':'b','ready':true,'restartCount':0,'state':{'running':{}}}]}}",
                 "['toolkit','1/2','CrashLoopBackOff','5 (40s ago)','60m','<none>','<none>',"
                 "'<none>','<none>']");
}

/* deletionTimestamp on a non-terminal pod: "Terminating" (2.6). */
static void test_pod_terminating(void **state)
{
    (void)state;
    assert_cells("", "Pod",
                 "{'metadata':{'name':'cuda-probe','creationTimestamp':'2025-01-01T11:57:00Z',"
                 "'deletionTimestamp':'2025-01-01T12:00:30Z','deletionGracePeriodSeconds':30},"
                 "'spec':{'containers':[{'name':'cuda'}],'nodeName':'lab-node-0'},"
                 "'status':{'phase':'Running','podIP':'10.244.1.5','containerStatuses':[{"
                 "'name':'cuda','ready':true,'state':{'running':{}}}]}}",
                 "['cuda-probe','1/1','Terminating','0','3m','10.244.1.5','lab-node-0',"
                 "'<none>','<none>']");
}

/* deletionTimestamp with status.reason NodeLost (node.NodeUnreachablePodReason): "Unknown". */
static void test_pod_node_lost(void **state)
{
    (void)state;
    assert_cells("", "Pod",
                 "{'metadata':{'name':'p','creationTimestamp':'2025-01-01T11:57:00Z',"
                 "'deletionTimestamp':'2025-01-01T11:59:00Z'},'spec':{'containers':[{'name':'c'}]},"
                 "'status':{'phase':'Running','reason':'NodeLost'}}",
                 "['p','0/1','Unknown','0','3m','<none>','<none>','<none>','<none>']");
}

/* A Succeeded pod shows its container's terminated reason, stays so while
 * being deleted (terminal phase), and its row carries podSuccessConditions. */
static void test_pod_completed(void **state)
{
    (void)state;
    json_t *table = table_of("", "Pod",
                             "{'metadata':{'name':'smi','creationTimestamp':'2025-01-01T11:57:00Z',"
                             "'deletionTimestamp':'2025-01-01T11:59:00Z'},"
                             "'spec':{'containers':[{'name':'smi'}]},'status':{'phase':'Succeeded',"
                             "'containerStatuses':[{'name':'smi','ready':false,'state':{"
                             "'terminated':{'exitCode':0,'reason':'Completed'}}}]}}");
    json_t *row = json_array_get(json_object_get(table, "rows"), 0);
    assert_dumps_as(json_object_get(row, "cells"),
                    "['smi','0/1','Completed','0','3m','<none>','<none>','<none>','<none>']");
    assert_dumps_as(json_object_get(row, "conditions"),
                    "[{'type':'Completed','status':'True','reason':'Succeeded',"
                    "'message':'The pod has completed successfully.'}]");
    const char *order[] = {"cells", "conditions", "object"};
    size_t i = 0;
    const char *key;
    json_t *value;
    json_object_foreach(row, key, value) assert_string_equal(key, order[i++]);
    json_decref(table);
}

/* Terminated without a reason: "Signal:N", else "ExitCode:N". */
static void test_pod_exit_code_and_signal(void **state)
{
    (void)state;
    assert_cells("", "Pod",
                 "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c'}]},"
                 "'status':{'phase':'Failed','containerStatuses':[{'name':'c','state':{"
                 "'terminated':{'exitCode':137}}}]}}",
                 "['p','0/1','ExitCode:137','0','<unknown>','<none>','<none>','<none>','<none>']");
    assert_cells("", "Pod",
                 "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c'}]},"
                 "'status':{'phase':'Failed','containerStatuses':[{'name':'c','state':{"
                 "'terminated':{'exitCode':137,'signal':9}}}]}}",
                 "['p','0/1','Signal:9','0','<unknown>','<none>','<none>','<none>','<none>']");
}

/* "Completed" with another container still running becomes "Running" with a
 * Ready condition and "NotReady" without. */
static void test_pod_completed_with_running_sibling(void **state)
{
    (void)state;
    const char *pod = "{'metadata':{'name':'p','creationTimestamp':'2025-01-01T11:59:00Z'},"
                      "'spec':{'containers':[{'name':'a'},{'name':'b'}]},'status':{"
                      "'phase':'Running','conditions':[{'type':'Ready','status':'%s'}],"
                      "'containerStatuses':[{'name':'a','state':{'terminated':{'exitCode':0,"
                      "'reason':'Completed'}}},{'name':'b','ready':true,'state':{'running':{}}}]}}";
    char buf[512];
    snprintf(buf, sizeof buf, pod, "True");
    assert_cells("", "Pod", buf,
                 "['p','1/2','Running','0','60s','<none>','<none>','<none>','<none>']");
    snprintf(buf, sizeof buf, pod, "False");
    assert_cells("", "Pod", buf,
                 "['p','1/2','NotReady','0','60s','<none>','<none>','<none>','<none>']");
}

/* Init containers: "Init:i/n" while one runs, "Init:<reason>" when one
 * waits or fails; a sidecar (restartPolicy Always) counts in the total. */
static void test_pod_init_containers(void **state)
{
    (void)state;
    assert_cells(
        "", "Pod",
        "{'metadata':{'name':'p'},'spec':{'initContainers':[{'name':'i0'},{'name':'i1'}],"
        "'containers':[{'name':'c'}]},'status':{'phase':'Pending',"
        "'initContainerStatuses':[{'name':'i0','state':{'terminated':{'exitCode':0}}},"
        "{'name':'i1','state':{'running':{}}}],"
        "'containerStatuses':[{'name':'c','state':{'waiting':{'reason':'PodInitializing'}}}]}}",
        "['p','0/1','Init:1/2','0','<unknown>','<none>','<none>','<none>','<none>']");
    assert_cells("", "Pod",
                 "{'metadata':{'name':'p'},'spec':{'initContainers':[{'name':'i0'}],"
                 "'containers':[{'name':'c'}]},'status':{'phase':'Pending',"
                 "'initContainerStatuses':[{'name':'i0','restartCount':3,'state':{'terminated':{"
                 "'exitCode':1,'reason':'Error'}}}]}}",
                 "['p','0/1','Init:Error','3','<unknown>','<none>','<none>','<none>','<none>']");
    assert_cells("", "Pod",
                 "{'metadata':{'name':'p'},'spec':{'initContainers':[{'name':'i0'}],"
                 "'containers':[{'name':'c'}]},'status':{'phase':'Pending',"
                 "'initContainerStatuses':[{'name':'i0','state':{'waiting':{"
                 "'reason':'ImagePullBackOff'}}}]}}",
                 "['p','0/1','Init:ImagePullBackOff','0','<unknown>','<none>','<none>','<none>',"
                 "'<none>']");
    assert_cells("", "Pod",
                 "{'metadata':{'name':'p'},'spec':{'initContainers':[{'name':'proxy',"
                 "'restartPolicy':'Always'}],'containers':[{'name':'c'}]},'status':{"
                 "'phase':'Running','conditions':[{'type':'Initialized','status':'True'}],"
                 "'initContainerStatuses':[{'name':'proxy','ready':true,'started':true,"
                 "'restartCount':1,'state':{'running':{}}}],"
                 "'containerStatuses':[{'name':'c','ready':true,'state':{'running':{}}}]}}",
                 "['p','2/2','Running','1','<unknown>','<none>','<none>','<none>','<none>']");
}

/* A PodScheduled condition with reason SchedulingGated names the status. */
static void test_pod_scheduling_gated(void **state)
{
    (void)state;
    assert_cells("", "Pod",
                 "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'a'},{'name':'b'}],"
                 "'schedulingGates':[{'name':'g'}]},'status':{'phase':'Pending','conditions':[{"
                 "'type':'PodScheduled','status':'False','reason':'SchedulingGated'}]}}",
                 "['p','0/2','SchedulingGated','0','<unknown>','<none>','<none>','<none>',"
                 "'<none>']");
}

/* Readiness Gates: "true/total" over spec.readinessGates; the nominated
 * node; podIPs[0] when podIP is unset (v1 conversion). */
static void test_pod_wide_cells(void **state)
{
    (void)state;
    assert_cells("", "Pod",
                 "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c'}],"
                 "'readinessGates':[{'conditionType':'example.com/lb'},"
                 "{'conditionType':'example.com/dns'}]},'status':{'phase':'Pending',"
                 "'nominatedNodeName':'lab-node-2','podIPs':[{'ip':'fd00::5'}],'conditions':["
                 "{'type':'example.com/lb','status':'True'},"
                 "{'type':'example.com/dns','status':'False'}]}}",
                 "['p','0/1','Pending','0','<unknown>','fd00::5','<none>','lab-node-2','1/2']");
}

/* ---- Node ---- */

static void test_node_columns(void **state)
{
    (void)state;
    assert_columns("", "Node",
                   "[['Name','string','name',0],['Status','string','',0],['Roles','string','',0],"
                   "['Age','string','',0],['Version','string','',0],['Internal-IP','string','',1],"
                   "['External-IP','string','',1],['OS-Image','string','',1],"
                   "['Kernel-Version','string','',1],['Container-Runtime','string','',1]]");
}

#define NODE_INFO                                                                                  \
    "'nodeInfo':{'kubeletVersion':'v1.32.0','osImage':'Ubuntu 22.04.4 LTS',"                       \
    "'kernelVersion':'5.15.0-105-generic','containerRuntimeVersion':'containerd://1.7.29'}"

/* Status from the Ready condition; roles from node-role.kubernetes.io/<role>
 * keys and kubernetes.io/role values, sorted (findNodeRoles); first
 * InternalIP, "<none>" for no ExternalIP. */
static void test_node_ready_with_roles(void **state)
{
    (void)state;
    assert_cells("", "Node",
                 "{'apiVersion':'v1','kind':'Node','metadata':{'name':'lab-node-0',"
                 "'creationTimestamp':'2024-12-27T12:00:00Z','labels':{"
                 "'node-role.kubernetes.io/worker':'','kubernetes.io/role':'gpu',"
                 "'node-role.kubernetes.io/':'','kubernetes.io/hostname':'lab-node-0'}},"
                 "'spec':{},'status':{'conditions':[{'type':'MemoryPressure','status':'False'},"
                 "{'type':'Ready','status':'True','reason':'KubeletReady'}],'addresses':["
                 "{'type':'Hostname','address':'lab-node-0'},"
                 "{'type':'InternalIP','address':'10.0.0.10'}]," NODE_INFO "}}",
                 "['lab-node-0','Ready','gpu,worker','5d','v1.32.0','10.0.0.10','<none>',"
                 "'Ubuntu 22.04.4 LTS','5.15.0-105-generic','containerd://1.7.29']");
}

/* Any Ready status but True prints "NotReady"; no Ready condition at all
 * prints "Unknown"; missing nodeInfo fields print "<unknown>" in the wide
 * cells but an empty Version. */
static void test_node_not_ready_and_unknown(void **state)
{
    (void)state;
    assert_cells("", "Node",
                 "{'metadata':{'name':'n','creationTimestamp':'2025-01-01T09:00:00Z'},"
                 "'status':{'conditions':[{'type':'Ready','status':'Unknown',"
                 "'reason':'NodeStatusUnknown'}],'addresses':[{'type':'ExternalIP',"
                 "'address':'203.0.113.7'}]}}",
                 "['n','NotReady','<none>','3h','','<none>','203.0.113.7','<unknown>',"
                 "'<unknown>','<unknown>']");
    assert_cells("", "Node", "{'metadata':{'name':'n'},'status':{}}",
                 "['n','Unknown','<none>','<unknown>','','<none>','<none>','<unknown>',"
                 "'<unknown>','<unknown>']");
}

/* spec.unschedulable adds ",SchedulingDisabled" (kubectl cordon). */
static void test_node_cordoned(void **state)
{
    (void)state;
    assert_cells("", "Node",
                 "{'metadata':{'name':'lab-node-1','creationTimestamp':'2024-12-30T13:00:00Z',"
                 "'labels':{'node-role.kubernetes.io/control-plane':''}},"
                 "'spec':{'unschedulable':true,'taints':[{'key':'node.kubernetes.io/unschedulable',"
                 "'effect':'NoSchedule'}]},'status':{'conditions':[{'type':'Ready',"
                 "'status':'True'}]," NODE_INFO "}}",
                 "['lab-node-1','Ready,SchedulingDisabled','control-plane','47h','v1.32.0',"
                 "'<none>','<none>','Ubuntu 22.04.4 LTS','5.15.0-105-generic',"
                 "'containerd://1.7.29']");
    assert_cells("", "Node",
                 "{'metadata':{'name':'n'},'spec':{'unschedulable':true},'status':{'conditions':["
                 "{'type':'Ready','status':'False'}]}}",
                 "['n','NotReady,SchedulingDisabled','<none>','<unknown>','','<none>','<none>',"
                 "'<unknown>','<unknown>','<unknown>']");
}

/* ---- DaemonSet ---- */

static void test_daemonset_columns(void **state)
{
    (void)state;
    assert_columns("apps", "DaemonSet",
                   "[['Name','string','name',0],['Desired','integer','',0],"
                   "['Current','integer','',0],['Ready','integer','',0],"
                   "['Up-to-date','integer','',0],['Available','integer','',0],"
                   "['Node Selector','string','',0],['Age','string','',0],"
                   "['Containers','string','',1],['Images','string','',1],"
                   "['Selector','string','',1]]");
}

/* Desired..Available are the status counters as integer cells; Node
 * Selector is labels.FormatLabels of the template's nodeSelector, sorted by
 * key; Selector is FormatLabelSelector of spec.selector. */
static void test_daemonset_stalled_rollout(void **state)
{
    (void)state;
    assert_cells(
        "apps", "DaemonSet",
        "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'nvidia-container-toolkit',"
        "'namespace':'gpu-operator','creationTimestamp':'2024-12-31T12:00:00Z','generation':2},"
        "'spec':{'selector':{'matchLabels':{'app':'nvidia-container-toolkit'}},'template':{"
        "'metadata':{'labels':{'app':'nvidia-container-toolkit'}},'spec':{'nodeSelector':{"
        "'nvidia.com/gpu.present':'true','kubernetes.io/os':'linux'},'containers':["
        "{'name':'toolkit','image':'nvcr.io/nvidia/k8s/container-toolkit:v1.17.0'},"
        "{'name':'pause','image':'registry.k8s.io/pause:3.10'}]}}},"
        "'status':{'currentNumberScheduled':3,'numberMisscheduled':0,'desiredNumberScheduled':3,"
        "'numberReady':2,'observedGeneration':2,'updatedNumberScheduled':1,'numberAvailable':2,"
        "'numberUnavailable':1}}",
        "['nvidia-container-toolkit',3,3,2,1,2,'kubernetes.io/os=linux,nvidia.com/"
        "gpu.present=true',"
        "'24h','toolkit,pause','nvcr.io/nvidia/k8s/container-toolkit:v1.17.0,"
        "registry.k8s.io/pause:3.10','app=nvidia-container-toolkit']");
}

/* No nodeSelector prints "<none>"; a fresh DaemonSet without status prints
 * zeros. */
static void test_daemonset_without_node_selector(void **state)
{
    (void)state;
    assert_cells("apps", "DaemonSet",
                 "{'metadata':{'name':'dp','creationTimestamp':'2025-01-01T11:59:58Z'},"
                 "'spec':{'selector':{'matchLabels':{'name':'dp','tier':'gpu'}},'template':{"
                 "'spec':{'containers':[{'name':'dp','image':'dp:1'}]}}}}",
                 "['dp',0,0,0,0,0,'<none>','2s','dp','dp:1','name=dp,tier=gpu']");
}

/* matchExpressions in Requirement.String form, sorted by key, values
 * sorted; an unknown operator makes FormatLabelSelector print "<error>". */
static void test_daemonset_selector_expressions(void **state)
{
    (void)state;
    assert_cells("apps", "DaemonSet",
                 "{'metadata':{'name':'d'},'spec':{'selector':{'matchLabels':{'zone':'a'},"
                 "'matchExpressions':[{'key':'tier','operator':'In','values':['web','db']},"
                 "{'key':'gpu','operator':'Exists'},{'key':'legacy','operator':'DoesNotExist'},"
                 "{'key':'arch','operator':'NotIn','values':['arm64']}]},'template':{'spec':{}}}}",
                 "['d',0,0,0,0,0,'<none>','<unknown>','','',"
                 "'arch notin (arm64),gpu,!legacy,tier in (db,web),zone=a']");
    assert_cells("apps", "DaemonSet",
                 "{'metadata':{'name':'d'},'spec':{'selector':{'matchExpressions':[{'key':'a',"
                 "'operator':'Gt','values':['1']}]}}}",
                 "['d',0,0,0,0,0,'<none>','<unknown>','','','<error>']");
    assert_cells("apps", "DaemonSet",
                 "{'metadata':{'name':'d'},'spec':{'selector':{'matchExpressions':[{'key':'a',"
                 "'operator':'In','values':[]}]}}}",
                 "['d',0,0,0,0,0,'<none>','<unknown>','','','<error>']");
    assert_cells("apps", "DaemonSet", "{'metadata':{'name':'d'},'spec':{'selector':{}}}",
                 "['d',0,0,0,0,0,'<none>','<unknown>','','','<none>']");
}

/* ---- the small printers ---- */

static void test_namespace(void **state)
{
    (void)state;
    assert_columns("", "Namespace",
                   "[['Name','string','name',0],['Status','string','',0],['Age','string','',0]]");
    assert_cells("", "Namespace",
                 "{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'gpu-operator',"
                 "'creationTimestamp':'2024-12-27T12:00:00Z','deletionTimestamp':"
                 "'2025-01-01T11:00:00Z'},'spec':{'finalizers':['kubernetes']},"
                 "'status':{'phase':'Terminating'}}",
                 "['gpu-operator','Terminating','5d']");
}

/* Data counts data plus binaryData keys, as an integer. */
static void test_configmap(void **state)
{
    (void)state;
    assert_columns("", "ConfigMap",
                   "[['Name','string','name',0],['Data','string','',0],['Age','string','',0]]");
    assert_cells("", "ConfigMap",
                 "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'time-slicing-config',"
                 "'namespace':'gpu-operator','creationTimestamp':'2025-01-01T08:30:00Z'},"
                 "'data':{'any':'version: v1','a100':'x'},'binaryData':{'blob':'AAE='}}",
                 "['time-slicing-config',3,'3h30m']");
    assert_cells("", "ConfigMap", "{'metadata':{'name':'kube-root-ca.crt'}}",
                 "['kube-root-ca.crt',0,'<unknown>']");
}

/* Secrets is len(secrets) as an integer: 0 for today's service accounts. */
static void test_serviceaccount(void **state)
{
    (void)state;
    assert_columns("", "ServiceAccount",
                   "[['Name','string','name',0],['Secrets','string','',0],['Age','string','',0]]");
    assert_cells("", "ServiceAccount",
                 "{'apiVersion':'v1','kind':'ServiceAccount','metadata':{'name':'default',"
                 "'namespace':'default','creationTimestamp':'2024-12-27T12:00:00Z'}}",
                 "['default',0,'5d']");
    assert_cells("", "ServiceAccount",
                 "{'metadata':{'name':'old','creationTimestamp':'2024-12-27T12:00:00Z'},"
                 "'secrets':[{'name':'old-token-abcde'}]}",
                 "['old',1,'5d']");
}

/* Handler's description is ObjectMeta's doc for "handler": there is none. */
static void test_runtimeclass(void **state)
{
    (void)state;
    assert_columns("node.k8s.io", "RuntimeClass",
                   "[['Name','string','name',0],['Handler','string','',0],['Age','string','',0]]");
    json_t *table = table_of("node.k8s.io", "RuntimeClass",
                             "{'apiVersion':'node.k8s.io/v1','kind':'RuntimeClass','metadata':{"
                             "'name':'nvidia','creationTimestamp':'2024-12-30T12:00:00Z'},"
                             "'handler':'nvidia'}");
    assert_string_equal(description_of(table, 1), "");
    assert_dumps_as(json_object_get(json_array_get(json_object_get(table, "rows"), 0), "cells"),
                    "['nvidia','nvidia','2d']");
    json_decref(table);
}

/* Controller: the controller ownerReference as lower("Kind.group")/name;
 * Revision: an integer cell in a "string" column. One hour is "60m". */
static void test_controllerrevision(void **state)
{
    (void)state;
    assert_columns("apps", "ControllerRevision",
                   "[['Name','string','name',0],['Controller','string','',0],"
                   "['Revision','string','',0],['Age','string','',0]]");
    assert_cells("apps", "ControllerRevision",
                 "{'apiVersion':'apps/v1','kind':'ControllerRevision','metadata':{"
                 "'name':'nvidia-container-toolkit-6d9c7b8f5','namespace':'gpu-operator',"
                 "'creationTimestamp':'2025-01-01T11:00:00Z','ownerReferences':[{"
                 "'apiVersion':'apps/v1','kind':'DaemonSet','name':'nvidia-container-toolkit',"
                 "'uid':'1','controller':true,'blockOwnerDeletion':true}]},"
                 "'data':{'spec':{}},'revision':2}",
                 "['nvidia-container-toolkit-6d9c7b8f5','daemonset.apps/nvidia-container-toolkit',"
                 "2,'60m']");
    /* Only a controller reference counts; a core-group owner has no ".group". */
    assert_cells("apps", "ControllerRevision",
                 "{'metadata':{'name':'r','ownerReferences':[{'apiVersion':'apps/v1',"
                 "'kind':'DaemonSet','name':'x'},{'apiVersion':'v1','kind':'Pod','name':'p',"
                 "'controller':true}]},'revision':1}",
                 "['r','pod/p',1,'<unknown>']");
    assert_cells("apps", "ControllerRevision", "{'metadata':{'name':'r'},'revision':1}",
                 "['r','<none>',1,'<unknown>']");
}

static void test_lease(void **state)
{
    (void)state;
    assert_columns("coordination.k8s.io", "Lease",
                   "[['Name','string','name',0],['Holder','string','',0],['Age','string','',0]]");
    assert_cells("coordination.k8s.io", "Lease",
                 "{'apiVersion':'coordination.k8s.io/v1','kind':'Lease','metadata':{"
                 "'name':'lab-node-0','namespace':'kube-node-lease','creationTimestamp':"
                 "'2024-12-30T13:00:00Z'},'spec':{'holderIdentity':'lab-node-0',"
                 "'leaseDurationSeconds':40,'renewTime':'2025-01-01T11:59:55.000000Z'}}",
                 "['lab-node-0','lab-node-0','47h']");
    assert_cells("coordination.k8s.io", "Lease",
                 "{'metadata':{'name':'kube-scheduler','creationTimestamp':'2024-12-31T04:00:00Z'},"
                 "'spec':{}}",
                 "['kube-scheduler','','32h']");
}

/* ---- Event ---- */

static void test_event_columns(void **state)
{
    (void)state;
    static const char *cols =
        "[['Last Seen','string','',0],['Type','string','',0],['Reason','string','',0],"
        "['Object','string','',0],['Subobject','string','',1],['Source','string','',1],"
        "['Message','string','',0],['First Seen','string','',1],['Count','string','',1],"
        "['Name','string','name',1]]";
    assert_columns("", "Event", cols);
    assert_columns("events.k8s.io", "Event", cols);
}

/* A core Event as a v1.32 kubelet records it: lastTimestamp for Last Seen,
 * firstTimestamp for First Seen, involvedObject as "pod/name", source
 * "component, host", count as an integer, the message trimmed. */
static void test_core_event(void **state)
{
    (void)state;
    assert_cells(
        "", "Event",
        "{'apiVersion':'v1','kind':'Event','metadata':{'name':'cuda-probe.181a2b3c4d5e6f70',"
        "'namespace':'default','creationTimestamp':'2025-01-01T11:55:00Z'},"
        "'involvedObject':{'kind':'Pod','namespace':'default','name':'cuda-probe',"
        "'uid':'6b1f','apiVersion':'v1','fieldPath':'spec.containers{cuda}'},"
        "'reason':'BackOff','message':'Back-off restarting failed container cuda\\n',"
        "'source':{'component':'kubelet','host':'lab-node-0'},"
        "'firstTimestamp':'2025-01-01T11:55:00Z','lastTimestamp':'2025-01-01T11:59:25Z',"
        "'count':7,'type':'Warning','eventTime':null,'reportingComponent':'kubelet',"
        "'reportingInstance':'lab-node-0'}",
        "['35s','Warning','BackOff','pod/cuda-probe','spec.containers{cuda}',"
        "'kubelet, lab-node-0','Back-off restarting failed container cuda','5m',7,"
        "'cuda-probe.181a2b3c4d5e6f70']");
}

/* The scheduler writes through the new API: no first/last timestamps, so
 * both fall back to eventTime; no source, so reportingController and
 * reportingInstance; no count, so 1. */
static void test_core_event_from_the_scheduler(void **state)
{
    (void)state;
    assert_cells(
        "", "Event",
        "{'metadata':{'name':'cuda-probe.181a2b3c00000000','namespace':'default'},"
        "'involvedObject':{'kind':'Pod','namespace':'default','name':'cuda-probe'},"
        "'reason':'FailedScheduling','message':'0/3 nodes are available: 3 Insufficient "
        "nvidia.com/gpu.','source':{},'firstTimestamp':null,'lastTimestamp':null,"
        "'type':'Warning','eventTime':'2025-01-01T11:59:50.123456Z','action':'Scheduling',"
        "'reportingComponent':'default-scheduler','reportingController':'default-scheduler',"
        "'reportingInstance':'default-scheduler-lab'}",
        "['9s','Warning','FailedScheduling','pod/cuda-probe','',"
        "'default-scheduler, default-scheduler-lab',"
        "'0/3 nodes are available: 3 Insufficient nvidia.com/gpu.','9s',1,"
        "'cuda-probe.181a2b3c00000000']");
}

/* A series overrides Last Seen and Count; an object without a name prints
 * the lower-cased kind alone; no time at all prints "<unknown>". */
static void test_core_event_series_and_bare_object(void **state)
{
    (void)state;
    assert_cells("", "Event",
                 "{'metadata':{'name':'e'},'involvedObject':{'kind':'DaemonSet',"
                 "'name':'nvidia-container-toolkit'},'reason':'FailedCreate','message':'m',"
                 "'type':'Warning','eventTime':'2025-01-01T11:50:00.000000Z','count':2,"
                 "'series':{'count':4,'lastObservedTime':'2025-01-01T11:59:40.000000Z'},"
                 "'reportingController':'daemonset-controller'}",
                 "['20s','Warning','FailedCreate','daemonset/nvidia-container-toolkit','',"
                 "'daemonset-controller','m','10m',4,'e']");
    assert_cells("", "Event",
                 "{'metadata':{'name':'e'},'involvedObject':{'kind':'Node'},'reason':'Starting',"
                 "'message':' \\t kubelet\\u00a0 ','type':'Normal'}",
                 "['<unknown>','Normal','Starting','node','','','kubelet','<unknown>',1,'e']");
}

/* events.k8s.io/v1 shapes print after conversion to the internal Event:
 * regarding, note, deprecatedSource/FirstTimestamp/LastTimestamp/Count. */
static void test_events_api_event(void **state)
{
    (void)state;
    assert_cells(
        "events.k8s.io", "Event",
        "{'apiVersion':'events.k8s.io/v1','kind':'Event','metadata':{"
        "'name':'cuda-probe.181a2b3c4d5e6f70','namespace':'default'},"
        "'eventTime':null,'reportingController':'kubelet','reportingInstance':'lab-node-0',"
        "'action':'','reason':'Pulled','regarding':{'kind':'Pod','namespace':'default',"
        "'name':'cuda-probe','fieldPath':'spec.containers{cuda}'},"
        "'note':'Container image already present on machine','type':'Normal',"
        "'deprecatedSource':{'component':'kubelet','host':'lab-node-0'},"
        "'deprecatedFirstTimestamp':'2025-01-01T11:57:00Z',"
        "'deprecatedLastTimestamp':'2025-01-01T11:58:30Z','deprecatedCount':2}",
        "['90s','Normal','Pulled','pod/cuda-probe','spec.containers{cuda}',"
        "'kubelet, lab-node-0','Container image already present on machine','3m',2,"
        "'cuda-probe.181a2b3c4d5e6f70']");
    assert_cells("events.k8s.io", "Event",
                 "{'metadata':{'name':'e'},'eventTime':'2025-01-01T11:59:00.000001Z',"
                 "'reportingController':'default-scheduler','reportingInstance':'s-1',"
                 "'reason':'Scheduled','regarding':{'kind':'Pod','name':'p'},"
                 "'note':'Successfully assigned default/p to lab-node-0','type':'Normal'}",
                 "['59s','Normal','Scheduled','pod/p','','default-scheduler, s-1',"
                 "'Successfully assigned default/p to lab-node-0','59s',1,'e']");
}

/* ---- kinds without a printer ---- */

/* registry/rest/table.go: Name and "Created At" (type date), the time in
 * UTC RFC 3339; Go's zero time for an object without one. */
static void test_default_convertor(void **state)
{
    (void)state;
    assert_columns("example.com", "Widget",
                   "[['Name','string','name',0],['Created At','date','',0]]");
    assert_cells("example.com", "Widget",
                 "{'metadata':{'name':'w','creationTimestamp':'2025-01-01T10:00:00+09:00'}}",
                 "['w','2025-01-01T01:00:00Z']");
    assert_cells("example.com", "Widget", "{'metadata':{'name':'w'}}",
                 "['w','0001-01-01T00:00:00Z']");
    /* Printers are per group: a Pod of another group is not printed as one. */
    assert_columns("example.com", "Pod", "[['Name','string','name',0],['Created At','date','',0]]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_human_duration_boundaries),
        cmocka_unit_test(test_human_duration_truncates_like_snprintf),
        cmocka_unit_test(test_envelope_of_a_list),
        cmocka_unit_test(test_envelope_of_a_later_watch_event),
        cmocka_unit_test(test_empty_list_has_rows_array),
        cmocka_unit_test(test_pod_columns),
        cmocka_unit_test(test_pod_pending_unschedulable),
        cmocka_unit_test(test_pod_running),
        cmocka_unit_test(test_pod_restarts_with_last_restart),
        cmocka_unit_test(test_pod_container_creating),
        cmocka_unit_test(test_pod_crash_loop),
        cmocka_unit_test(test_pod_terminating),
        cmocka_unit_test(test_pod_node_lost),
        cmocka_unit_test(test_pod_completed),
        cmocka_unit_test(test_pod_exit_code_and_signal),
        cmocka_unit_test(test_pod_completed_with_running_sibling),
        cmocka_unit_test(test_pod_init_containers),
        cmocka_unit_test(test_pod_scheduling_gated),
        cmocka_unit_test(test_pod_wide_cells),
        cmocka_unit_test(test_node_columns),
        cmocka_unit_test(test_node_ready_with_roles),
        cmocka_unit_test(test_node_not_ready_and_unknown),
        cmocka_unit_test(test_node_cordoned),
        cmocka_unit_test(test_daemonset_columns),
        cmocka_unit_test(test_daemonset_stalled_rollout),
        cmocka_unit_test(test_daemonset_without_node_selector),
        cmocka_unit_test(test_daemonset_selector_expressions),
        cmocka_unit_test(test_namespace),
        cmocka_unit_test(test_configmap),
        cmocka_unit_test(test_serviceaccount),
        cmocka_unit_test(test_runtimeclass),
        cmocka_unit_test(test_controllerrevision),
        cmocka_unit_test(test_lease),
        cmocka_unit_test(test_event_columns),
        cmocka_unit_test(test_core_event),
        cmocka_unit_test(test_core_event_from_the_scheduler),
        cmocka_unit_test(test_core_event_series_and_bare_object),
        cmocka_unit_test(test_events_api_event),
        cmocka_unit_test(test_default_convertor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
