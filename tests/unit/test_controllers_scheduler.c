/* ctl_sched_*: kube-scheduler 1.32's choice of node and its FitError text.
 *
 * Expected messages come from /work/shared/design/k8s-semantics.md (cited as
 * "doc 5.5" etc.) or are assembled from the Kubernetes v1.32 source texts:
 * framework/types.go FitError.Error() ("0/%v nodes are available", " %v.",
 * sort.Strings of "%v %v"), noderesources/fit.go ("Insufficient %v",
 * "Too many pods"), tainttoleration ("node(s) had untolerated taint {%s: %s}"),
 * nodeaffinity (ErrReasonPod, errReasonConflict), nodeunschedulable,
 * nodename, nodeports ErrReason, schedule_one.go ("node(s) didn't satisfy
 * plugin(s) %v", ErrNoNodesAvailable), preemption.go ("Preemption is not
 * helpful for scheduling", "No preemption victims found for incoming pod"),
 * default_preemption.go ("not eligible due to preemptionPolicy=Never.").
 * JSON is written with ' for ". */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/scheduler.h"

/* ---- fixtures ---- */

#define MAX_NODES 16
#define MAX_PODS  8

typedef struct fixture {
    json_t *nodes[MAX_NODES];
    json_t *pods[MAX_NODES][MAX_PODS];
    size_t npods[MAX_NODES];
    ctl_sched_node view[MAX_NODES];
    size_t n;
    ctl_sched_result r;
} fixture;

static fixture *fixture_new(void)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->r.chosen = -1;
    f->r.nominated = -1;
    return f;
}

static void fixture_free(fixture *f)
{
    for (size_t i = 0; i < f->n; i++) {
        json_decref(f->nodes[i]);
        for (size_t j = 0; j < f->npods[i]; j++)
            json_decref(f->pods[i][j]);
    }
    ctl_sched_result_free(&f->r);
    free(f);
}

static size_t add_node(fixture *f, const char *squoted)
{
    assert_true(f->n < MAX_NODES);
    f->nodes[f->n] = sq_load(squoted);
    return f->n++;
}

/* A lab node (doc 6.6): 16 cpu, 32Gi, 110 pods, untainted; `alloc` adds
 * allocatable entries (",'nvidia.com/gpu':'4'"), `spec` fills spec. */
static size_t lab_node(fixture *f, const char *name, const char *alloc, const char *spec)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{'apiVersion':'v1','kind':'Node','metadata':{'name':'%s','labels':{"
             "'kubernetes.io/hostname':'%s','kubernetes.io/os':'linux'}},'spec':{%s},"
             "'status':{'allocatable':{'cpu':'16','memory':'32Gi','pods':'110',"
             "'ephemeral-storage':'100Gi'%s}}}",
             name, name, spec ? spec : "", alloc ? alloc : "");
    return add_node(f, text);
}

static void lab_nodes(fixture *f, size_t count, const char *spec)
{
    for (size_t i = 0; i < count; i++) {
        char name[32];
        snprintf(name, sizeof name, "lab-node-%zu", i);
        lab_node(f, name, NULL, spec);
    }
}

static const json_t *bind_pod(fixture *f, size_t node, const char *squoted)
{
    assert_true(f->npods[node] < MAX_PODS);
    json_t *p = sq_load(squoted);
    f->pods[node][f->npods[node]++] = p;
    return p;
}

/* A bound pod with one container: priority, requests as a fragment
 * ("'memory':'8Gi'"), and an optional start time. */
static const json_t *bind_simple(fixture *f, size_t node, const char *name, int priority,
                                 const char *requests)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{'metadata':{'name':'%s','namespace':'default'},'spec':{'nodeName':'x',"
             "'priority':%d,'containers':[{'name':'c','image':'i','resources':{'requests':{%s}}}]},"
             "'status':{'phase':'Running'}}",
             name, priority, requests);
    return bind_pod(f, node, text);
}

static int schedule_sq(fixture *f, const char *pod_squoted, unsigned tie_break)
{
    for (size_t i = 0; i < f->n; i++) {
        f->view[i].node = f->nodes[i];
        f->view[i].pods = (const json_t *const *)f->pods[i];
        f->view[i].pod_count = f->npods[i];
    }
    ctl_sched_result_free(&f->r);
    json_t *pod = sq_load(pod_squoted);
    int rc = ctl_sched_schedule(pod, f->view, f->n, tie_break, &f->r);
    json_decref(pod);
    return rc;
}

static void expect_unschedulable(const fixture *f, const char *message)
{
    assert_false(f->r.error);
    assert_int_equal(f->r.chosen, -1);
    assert_non_null(f->r.message);
    if (strcmp(f->r.message, message) != 0)
        print_error("expected %s\n     got %s\n", message, f->r.message);
    assert_string_equal(f->r.message, message);
}

static void expect_chosen(const fixture *f, int node)
{
    if (f->r.message) print_error("unexpected message: %s\n", f->r.message);
    assert_false(f->r.error);
    assert_null(f->r.message);
    assert_int_equal(f->r.chosen, node);
}

/* cuda-probe as the API server stores it (doc 9, doc 3.2 defaults). */
#define CUDA_PROBE_SPEC(extra)                                                                     \
    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'cuda-probe','namespace':'gpu-lab',"       \
    "'uid':'0b1c'},'spec':{'containers':[{'name':'cuda','image':'nvidia/cuda:12.4.1-base',"        \
    "'imagePullPolicy':'IfNotPresent','resources':{'limits':{'nvidia.com/gpu':'1'},"               \
    "'requests':{'nvidia.com/gpu':'1'}}}],'dnsPolicy':'ClusterFirst','enableServiceLinks':true,"   \
    "'priority':0,'restartPolicy':'Always','runtimeClassName':'nvidia',"                           \
    "'schedulerName':'default-scheduler','securityContext':{},'serviceAccountName':'default',"     \
    "'terminationGracePeriodSeconds':30,'tolerations':["                                           \
    "{'key':'node.kubernetes.io/not-ready','operator':'Exists','effect':'NoExecute',"              \
    "'tolerationSeconds':300},{'key':'node.kubernetes.io/unreachable','operator':'Exists',"        \
    "'effect':'NoExecute','tolerationSeconds':300}]" extra "},"                                    \
    "'status':{'phase':'Pending','qosClass':'BestEffort'}}"

#define CUDA_PROBE CUDA_PROBE_SPEC(",'preemptionPolicy':'PreemptLowerPriority'")

/* A DaemonSet pod targeted at one node (doc 6.2: matchFields metadata.name),
 * with the DaemonSet's default tolerations. */
static char *ds_pod(const char *node, const char *requests, int priority)
{
    static char text[2048];
    snprintf(text, sizeof text,
             "{'metadata':{'name':'toolkit-x','namespace':'gpu-operator'},'spec':{"
             "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"
             "'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name','operator':'In',"
             "'values':['%s']}]}]}}},"
             "'containers':[{'name':'toolkit','image':'t','resources':{'requests':{%s}}}],"
             "'priority':%d,'preemptionPolicy':'PreemptLowerPriority',"
             "'schedulerName':'default-scheduler','tolerations':["
             "{'key':'node.kubernetes.io/not-ready','operator':'Exists','effect':'NoExecute'},"
             "{'key':'node.kubernetes.io/unreachable','operator':'Exists','effect':'NoExecute'},"
             "{'key':'node.kubernetes.io/disk-pressure','operator':'Exists','effect':'NoSchedule'},"
             "{'key':'node.kubernetes.io/memory-pressure','operator':'Exists',"
             "'effect':'NoSchedule'},"
             "{'key':'node.kubernetes.io/pid-pressure','operator':'Exists','effect':'NoSchedule'},"
             "{'key':'node.kubernetes.io/unschedulable','operator':'Exists',"
             "'effect':'NoSchedule'}]},'status':{'phase':'Pending'}}",
             node, requests, priority);
    return text;
}

/* A plain pending pod: `spec` is spliced into spec after the containers. */
static char *plain_pod(const char *requests, const char *spec)
{
    static char text[4096];
    snprintf(text, sizeof text,
             "{'metadata':{'name':'p','namespace':'default'},'spec':{'containers':[{'name':'c',"
             "'image':'i','resources':{'requests':{%s}}}]%s%s},'status':{'phase':'Pending'}}",
             requests, spec && *spec ? "," : "", spec ? spec : "");
    return text;
}

/* ---- the lab's messages (doc 5.5) ---- */

static void test_lab_cuda_probe_no_gpu(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 3, NULL);
    assert_int_equal(schedule_sq(f, CUDA_PROBE, 0), 0);
    expect_unschedulable(f, "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: "
                            "0/3 nodes are available: 3 No preemption victims found for incoming "
                            "pod.");
    assert_int_equal(f->r.nominated, -1);
    assert_int_equal(f->r.victim_count, 0);
    assert_true(f->r.clear_nominated);
    /* doc 5.5: the same text is the event note. */
    char *note = ctl_sched_event_note(f->r.message);
    assert_string_equal(note, f->r.message);
    free(note);
    fixture_free(f);
}

static void test_lab_cuda_probe_after_gpu_patch(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_node(f, "lab-node-0", NULL, NULL);
    lab_node(f, "lab-node-1", ",'nvidia.com/gpu':'4'", NULL);
    lab_node(f, "lab-node-2", NULL, NULL);
    for (unsigned tie = 0; tie < 3; tie++) {
        assert_int_equal(schedule_sq(f, CUDA_PROBE, tie), 0);
        expect_chosen(f, 1);
    }
    fixture_free(f);
}

/* One parsed cluster for many decisions: a pod assumed on a node counts
 * against it for the next decision, as kube-scheduler's assumed pods do. */
static void test_cluster_reused_with_assumed_pods(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_node(f, "lab-node-0", ",'nvidia.com/gpu':'1'", NULL);
    lab_node(f, "lab-node-1", NULL, NULL);
    for (size_t i = 0; i < f->n; i++) {
        f->view[i].node = f->nodes[i];
        f->view[i].pods = (const json_t *const *)f->pods[i];
        f->view[i].pod_count = f->npods[i];
    }
    gp_error err = {0};
    ctl_sched_cluster *c = ctl_sched_cluster_new(f->view, f->n, &err);
    assert_non_null(c);
    json_t *first = sq_load(CUDA_PROBE), *second = sq_load(CUDA_PROBE);
    ctl_sched_result r;
    assert_int_equal(ctl_sched_schedule_in(c, first, 0, &r), 0);
    assert_int_equal(r.chosen, 0);
    ctl_sched_result_free(&r);
    assert_int_equal(ctl_sched_cluster_assume(c, 0, first, &err), 0);
    /* the only GPU is taken by the assumed pod */
    assert_int_equal(ctl_sched_schedule_in(c, second, 0, &r), 0);
    assert_int_equal(r.chosen, -1);
    assert_string_equal(r.message, "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. "
                                   "preemption: 0/2 nodes are available: 2 No preemption victims "
                                   "found for incoming pod.");
    ctl_sched_result_free(&r);
    json_decref(first);
    json_decref(second);
    ctl_sched_cluster_free(c);
    fixture_free(f);
}

/* A settled pod is kept stripped of what the scheduler reads, which the
 * memo was told when it was primed: builds with the stripped pods decide
 * as builds with whole ones; a stripped pod the memo does not know would
 * count as asking for nothing. */
static int memo_choice(ctl_sched_memo *m, fixture *f, const char *pod_squoted)
{
    for (size_t i = 0; i < f->n; i++) {
        f->view[i].node = f->nodes[i];
        f->view[i].pods = (const json_t *const *)f->pods[i];
        f->view[i].pod_count = f->npods[i];
    }
    gp_error err = {0};
    ctl_sched_cluster *c = ctl_sched_cluster_new_memo(f->view, f->n, m, &err);
    assert_non_null(c);
    json_t *pod = sq_load(pod_squoted);
    ctl_sched_result r;
    assert_int_equal(ctl_sched_schedule_in(c, pod, 0, &r), 0);
    int chosen = r.chosen;
    ctl_sched_result_free(&r);
    json_decref(pod);
    ctl_sched_cluster_free(c);
    return chosen;
}

/* Binds a pod asking for `cpu` on `node` as the controllers keep it once
 * settled: primed into the memo, then stripped of its containers. */
static void bind_settled(ctl_sched_memo *m, fixture *f, size_t node, const char *name,
                         const char *cpu)
{
    char requests[64];
    snprintf(requests, sizeof requests, "'cpu':'%s'", cpu);
    json_t *pod = (json_t *)bind_simple(f, node, name, 0, requests);
    gp_error err = {0};
    assert_int_equal(ctl_sched_memo_prime(m, pod, pod, &err), 0);
    json_object_del(json_object_get(pod, "spec"), "containers");
}

/* A pod the memo tests place: 10 of the 16 cpu of a lab node. */
#define WANTS_10_CPU                                                                               \
    "{'metadata':{'name':'w','namespace':'default','uid':'w'},'spec':{'containers':[{'name':'c',"  \
    "'image':'i','resources':{'requests':{'cpu':'10'}}}]}}"

static fixture *two_lab_nodes(void)
{
    fixture *f = fixture_new();
    lab_node(f, "lab-node-0", NULL, NULL);
    lab_node(f, "lab-node-1", NULL, NULL);
    return f;
}

static void test_memo_keeps_what_stripped_pods_request(void **state)
{
    (void)state;
    ctl_sched_memo *m = ctl_sched_memo_new();
    assert_non_null(m);
    fixture *f = two_lab_nodes();
    bind_settled(m, f, 0, "big", "12");
    /* 16 cpu each: 10 fits only on node 1 */
    assert_int_equal(memo_choice(m, f, WANTS_10_CPU), 1);
    assert_int_equal(memo_choice(m, f, WANTS_10_CPU), 1); /* again */
    /* the pod on node 0 is gone, one on node 1 came: node 0 now */
    json_decref(f->pods[0][0]);
    f->npods[0] = 0;
    bind_settled(m, f, 1, "other", "12");
    assert_int_equal(memo_choice(m, f, WANTS_10_CPU), 0);
    /* the pod on node 1 changed (a new object asking for 1 cpu), and one
     * asking for 7 came on node 0: both fit, node 1 has more free */
    json_decref(f->pods[1][0]);
    f->npods[1] = 0;
    bind_settled(m, f, 1, "other", "1");
    bind_settled(m, f, 0, "third", "7");
    assert_int_equal(memo_choice(m, f, WANTS_10_CPU), 1);
    /* a pod the memo was never told of is parsed for the build */
    bind_simple(f, 1, "whole", 0, "'cpu':'14'");
    assert_int_equal(memo_choice(m, f, WANTS_10_CPU), -1);
    fixture_free(f);
    ctl_sched_memo_trim(m, 0);
    ctl_sched_memo_free(m);
}

/* A bound pod not primed (waiting for its kubelet) is parsed at its first
 * build and read from the memo while it is unchanged: an edit made in
 * place, which callers must never do, shows that the second build did not
 * parse it again. A new version (a new object) is parsed; the old entry
 * lets go of its object once builds stop reading it. */
static void test_memo_keeps_bound_pods_between_builds(void **state)
{
    (void)state;
    ctl_sched_memo *m = ctl_sched_memo_new();
    assert_non_null(m);
    fixture *f = two_lab_nodes();
    json_t *bound = (json_t *)bind_simple(f, 0, "bound", 0, "'cpu':'12'");
    bind_simple(f, 1, "other", 0, "'cpu':'5'");
    /* 16 cpu each: 10 fits only on node 1 */
    assert_int_equal(memo_choice(m, f, WANTS_10_CPU), 1);
    assert_true(bound->refcount > 1); /* the memo holds it */
    json_t *c0 = json_array_get(json_object_get(json_object_get(bound, "spec"), "containers"), 0);
    json_t *req = json_object_get(json_object_get(c0, "resources"), "requests");
    json_object_set_new(req, "cpu", json_string("1"));
    /* parsed again, node 0 would have 15 free and node 1 11 */
    assert_int_equal(memo_choice(m, f, WANTS_10_CPU), 1);
    /* the pod's next version asks for 1 cpu: node 0 has more free now */
    json_incref(bound); /* to see when the memo lets go */
    json_decref(f->pods[0][0]);
    f->npods[0] = 0;
    json_t *next = (json_t *)bind_simple(f, 0, "bound", 0, "'cpu':'1'");
    assert_int_equal(memo_choice(m, f, WANTS_10_CPU), 0);
    /* builds that no longer read the old version sweep it: at most a few
     * hundred kept past their last build */
    for (int i = 0; i < 300; i++) {
        char name[32];
        snprintf(name, sizeof name, "p%d", i);
        json_decref(f->pods[1][f->npods[1] - 1]);
        f->npods[1]--;
        bind_simple(f, 1, name, 0, "'cpu':'2'");
        memo_choice(m, f, WANTS_10_CPU);
    }
    assert_int_equal(memo_choice(m, f, WANTS_10_CPU), 0);
    assert_int_equal(bound->refcount, 1);
    assert_true(next->refcount > 1);
    json_decref(bound);
    fixture_free(f);
    ctl_sched_memo_free(m);
}

/* A node's own part (allocatable, labels, taints) is read once per
 * version of its object: an edit made in place, which callers must never
 * do, shows that the second build did not read it again. A new version (a
 * new object) is read; the old one is let go once builds stop reading it. */
static void test_memo_keeps_nodes_between_builds(void **state)
{
    (void)state;
    ctl_sched_memo *m = ctl_sched_memo_new();
    assert_non_null(m);
    fixture *f = two_lab_nodes();
    bind_simple(f, 1, "other", 0, "'cpu':'5'");
    /* 16 cpu each, 11 free on node 1: node 0 */
    assert_int_equal(memo_choice(m, f, WANTS_10_CPU), 0);
    json_t *old = f->nodes[0];
    assert_true(old->refcount > 1); /* the memo holds it */
    json_t *alloc = json_object_get(json_object_get(old, "status"), "allocatable");
    json_object_set_new(alloc, "cpu", json_string("4"));
    /* read again, 10 cpu would not fit on node 0 */
    assert_int_equal(memo_choice(m, f, WANTS_10_CPU), 0);
    /* the node's next version has those 4 cpu: node 1 */
    f->nodes[0] = json_deep_copy(old);
    assert_int_equal(memo_choice(m, f, WANTS_10_CPU), 1);
    /* builds that no longer read the old version sweep it: at most a few
     * hundred kept past their last build */
    for (int i = 0; i < 300; i++) {
        json_t *next = json_deep_copy(f->nodes[1]);
        json_decref(f->nodes[1]);
        f->nodes[1] = next;
        assert_int_equal(memo_choice(m, f, WANTS_10_CPU), 1);
    }
    assert_int_equal(old->refcount, 1);
    json_decref(old);
    fixture_free(f);
    ctl_sched_memo_free(m);
}

static void test_lab_daemonset_64gi(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 3, NULL);
    /* The old DS pod on the target has the same priority: not a victim. */
    bind_simple(f, 1, "toolkit-old", 0, "'memory':'1Gi'");
    assert_int_equal(schedule_sq(f, ds_pod("lab-node-1", "'memory':'64Gi'", 0), 0), 0);
    expect_unschedulable(
        f, "0/3 nodes are available: 1 Insufficient memory, 2 node(s) didn't satisfy plugin(s) "
           "[NodeAffinity]. preemption: 0/3 nodes are available: 1 No preemption victims found "
           "for incoming pod, 2 Preemption is not helpful for scheduling.");
    fixture_free(f);
}

static void test_lab_daemonset_high_priority_victims_not_enough(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 3, NULL);
    bind_simple(f, 1, "batch", 0, "'memory':'8Gi'");
    assert_int_equal(schedule_sq(f, ds_pod("lab-node-1", "'memory':'64Gi'", 2000001000), 0), 0);
    expect_unschedulable(
        f, "0/3 nodes are available: 1 Insufficient memory, 2 node(s) didn't satisfy plugin(s) "
           "[NodeAffinity]. preemption: 0/3 nodes are available: 1 Insufficient memory, 2 "
           "Preemption is not helpful for scheduling.");
    assert_int_equal(f->r.nominated, -1);
    fixture_free(f);
}

static void test_lab_untolerated_taint(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 3, "'taints':[{'key':'k','value':'v','effect':'NoSchedule'}]");
    assert_int_equal(schedule_sq(f, CUDA_PROBE, 0), 0);
    expect_unschedulable(f, "0/3 nodes are available: 3 node(s) had untolerated taint {k: v}. "
                            "preemption: 0/3 nodes are available: 3 Preemption is not helpful "
                            "for scheduling.");
    fixture_free(f);

    /* doc 5.2 "Lab consequence": the kwok taint hides the GPU shortage. */
    f = fixture_new();
    lab_nodes(f, 3, "'taints':[{'key':'kwok.x-k8s.io/node','value':'fake','effect':'NoSchedule'}]");
    assert_int_equal(schedule_sq(f, CUDA_PROBE, 0), 0);
    expect_unschedulable(f, "0/3 nodes are available: 3 node(s) had untolerated taint "
                            "{kwok.x-k8s.io/node: fake}. preemption: 0/3 nodes are available: 3 "
                            "Preemption is not helpful for scheduling.");
    fixture_free(f);
}

/* ---- message assembly ---- */

static void test_sort_mixed_reasons(void **state)
{
    (void)state;
    /* doc 5.2's DaemonSet example. */
    fixture *f = fixture_new();
    lab_nodes(f, 3, NULL);
    assert_int_equal(schedule_sq(f, ds_pod("lab-node-2", "'cpu':'17'", 0), 0), 0);
    expect_unschedulable(f, "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't "
                            "satisfy plugin(s) [NodeAffinity]. preemption: 0/3 nodes are "
                            "available: 1 No preemption victims found for incoming pod, 2 "
                            "Preemption is not helpful for scheduling.");
    fixture_free(f);

    /* The same counts with explicit NodeAffinity failures (nodeSelector). */
    f = fixture_new();
    lab_node(f, "a", NULL, NULL);
    lab_node(f, "b", NULL, NULL);
    add_node(f, "{'metadata':{'name':'c','labels':{'gpu':'yes'}},"
                "'status':{'allocatable':{'cpu':'16','memory':'32Gi','pods':'110'}}}");
    assert_int_equal(schedule_sq(f, plain_pod("'cpu':'17'", "'nodeSelector':{'gpu':'yes'}"), 0), 0);
    expect_unschedulable(f, "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match "
                            "Pod's node affinity/selector. preemption: 0/3 nodes are available: 1 "
                            "No preemption victims found for incoming pod, 2 Preemption is not "
                            "helpful for scheduling.");
    fixture_free(f);
}

static void test_sort_is_byte_order(void **state)
{
    (void)state;
    /* 10 tainted nodes, 2 short of memory: sort.Strings puts "10 n..." before
     * "2 I...", which neither a numeric nor a by-reason order would. */
    fixture *f = fixture_new();
    for (int i = 0; i < 12; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%02d", i);
        lab_node(f, name, NULL,
                 i < 10 ? "'taints':[{'key':'a','value':'b','effect':'NoExecute'}]" : NULL);
    }
    assert_int_equal(schedule_sq(f, plain_pod("'memory':'40Gi'", NULL), 0), 0);
    expect_unschedulable(f, "0/12 nodes are available: 10 node(s) had untolerated taint {a: b}, 2 "
                            "Insufficient memory. preemption: 0/12 nodes are available: 10 "
                            "Preemption is not helpful for scheduling, 2 No preemption victims "
                            "found for incoming pod.");
    fixture_free(f);
}

static void test_no_nodes(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    assert_int_equal(schedule_sq(f, CUDA_PROBE, 0), 0);
    expect_unschedulable(f, "no nodes available to schedule pods");
    assert_true(f->r.clear_nominated);
    fixture_free(f);
}

static void test_scheduler_error(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 1, NULL);
    assert_int_equal(schedule_sq(f, plain_pod("'cpu':'lots'", NULL), 0), -1);
    assert_true(f->r.error);
    assert_int_equal(f->r.chosen, -1);
    assert_non_null(f->r.message);
    assert_non_null(strstr(f->r.message, "lots"));
    fixture_free(f);
}

/* ---- NodeResourcesFit ---- */

static void test_too_many_pods(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    add_node(f, "{'metadata':{'name':'small'},"
                "'status':{'allocatable':{'cpu':'16','memory':'4Gi','pods':'2'}}}");
    bind_simple(f, 0, "a", 0, "'memory':'1Gi'");
    bind_simple(f, 0, "b", 0, "'memory':'1Gi'");
    assert_int_equal(schedule_sq(f, plain_pod("'memory':'3Gi'", NULL), 0), 0);
    /* fitsRequest keeps every reason of the node. */
    expect_unschedulable(f, "0/1 nodes are available: 1 Insufficient memory, 1 Too many pods. "
                            "preemption: 0/1 nodes are available: 1 No preemption victims found "
                            "for incoming pod.");
    /* A pod with no requests at all is still counted. */
    assert_int_equal(schedule_sq(f, plain_pod("", NULL), 0), 0);
    expect_unschedulable(f, "0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are "
                            "available: 1 No preemption victims found for incoming pod.");
    fixture_free(f);
}

static void test_ephemeral_storage(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 1, NULL); /* 100Gi */
    bind_simple(f, 0, "a", 0, "'ephemeral-storage':'95Gi'");
    assert_int_equal(schedule_sq(f, plain_pod("'ephemeral-storage':'6Gi'", NULL), 0), 0);
    expect_unschedulable(f, "0/1 nodes are available: 1 Insufficient ephemeral-storage. "
                            "preemption: 0/1 nodes are available: 1 No preemption victims found "
                            "for incoming pod.");
    assert_int_equal(schedule_sq(f, plain_pod("'ephemeral-storage':'5Gi'", NULL), 0), 0);
    expect_chosen(f, 0);
    fixture_free(f);
}

/* Regular containers 2+2 cpu, an init container of 10: the pod needs 10. */
#define INIT_POD(init)                                                                             \
    "{'metadata':{'name':'p'},'spec':{'initContainers':[" init "],'containers':["                  \
    "{'name':'a','image':'i','resources':{'requests':{'cpu':'2'}}},"                               \
    "{'name':'b','image':'i','resources':{'requests':{'cpu':'2'}}}]}}"

static void test_init_containers_max(void **state)
{
    (void)state;
    const char *pod = INIT_POD("{'name':'init','image':'i','resources':{'requests':{'cpu':'10'}}}");
    fixture *f = fixture_new();
    lab_nodes(f, 1, NULL);
    bind_simple(f, 0, "used", 0, "'cpu':'8'"); /* 8 free: less than the init container */
    assert_int_equal(schedule_sq(f, pod, 0), 0);
    expect_unschedulable(f, "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes "
                            "are available: 1 No preemption victims found for incoming pod.");
    fixture_free(f);

    f = fixture_new();
    lab_nodes(f, 1, NULL);
    bind_simple(f, 0, "used", 0, "'cpu':'6'"); /* 10 free: max, not the sum of 14 */
    assert_int_equal(schedule_sq(f, pod, 0), 0);
    expect_chosen(f, 0);
    fixture_free(f);
}

static void test_init_sidecar_rules(void **state)
{
    (void)state;
    /* KEP-753: a sidecar (restartPolicy Always) adds to the regular
     * containers (4+1) and to every later init container (10+1 = 11). */
    const char *pod = INIT_POD(
        "{'name':'side','image':'i','restartPolicy':'Always','resources':{'requests':{'cpu':'1'}}},"
        "{'name':'init','image':'i','resources':{'requests':{'cpu':'10'}}}");
    fixture *f = fixture_new();
    lab_nodes(f, 1, NULL);
    bind_simple(f, 0, "used", 0, "'cpu':'5500m'"); /* 10.5 free */
    assert_int_equal(schedule_sq(f, pod, 0), 0);
    expect_unschedulable(f, "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes "
                            "are available: 1 No preemption victims found for incoming pod.");
    fixture_free(f);

    f = fixture_new();
    lab_nodes(f, 1, NULL);
    bind_simple(f, 0, "used", 0, "'cpu':'5'"); /* 11 free */
    assert_int_equal(schedule_sq(f, pod, 0), 0);
    expect_chosen(f, 0);
    fixture_free(f);

    /* A sidecar declared after the init container does not add to it: the
     * pod needs max(10, 4+1). */
    pod = INIT_POD("{'name':'init','image':'i','resources':{'requests':{'cpu':'10'}}},"
                   "{'name':'side','image':'i','restartPolicy':'Always','resources':{'requests':{'"
                   "cpu':'1'}}}");
    f = fixture_new();
    lab_nodes(f, 1, NULL);
    bind_simple(f, 0, "used", 0, "'cpu':'6'"); /* 10 free */
    assert_int_equal(schedule_sq(f, pod, 0), 0);
    expect_chosen(f, 0);
    fixture_free(f);
}

static void test_overhead(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 1, NULL);
    bind_simple(f, 0, "used", 0, "'cpu':'14800m'"); /* 1.2 free */
    assert_int_equal(schedule_sq(f, plain_pod("'cpu':'1'", "'overhead':{'cpu':'500m'}"), 0), 0);
    expect_unschedulable(f, "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes "
                            "are available: 1 No preemption victims found for incoming pod.");
    assert_int_equal(schedule_sq(f, plain_pod("'cpu':'1'", "'overhead':{'cpu':'200m'}"), 0), 0);
    expect_chosen(f, 0);
    fixture_free(f);
}

static void test_zero_requests_skipped(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    add_node(f, "{'metadata':{'name':'bare'},'status':{'allocatable':{'pods':'10'}}}");
    assert_int_equal(
        schedule_sq(f, plain_pod("'cpu':'0','memory':'0','nvidia.com/gpu':'0'", NULL), 0), 0);
    expect_chosen(f, 0);
    fixture_free(f);
}

static void test_absent_resource_counts_zero(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    add_node(f, "{'metadata':{'name':'bare'},'status':{'allocatable':{'pods':'10'}}}");
    assert_int_equal(schedule_sq(f, plain_pod("'cpu':'1m','example.com/dongle':'1'", NULL), 0), 0);
    expect_unschedulable(f, "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient "
                            "example.com/dongle. preemption: 0/1 nodes are available: 1 No "
                            "preemption victims found for incoming pod.");
    fixture_free(f);

    /* No pods entry at all: allowed pod number 0. */
    f = fixture_new();
    add_node(f, "{'metadata':{'name':'bare'},'status':{'allocatable':{'cpu':'4'}}}");
    assert_int_equal(schedule_sq(f, plain_pod("", NULL), 0), 0);
    expect_unschedulable(f, "0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are "
                            "available: 1 No preemption victims found for incoming pod.");
    fixture_free(f);
}

static void test_extended_resource_used_by_others(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_node(f, "gpu", ",'nvidia.com/gpu':'4'", NULL);
    bind_simple(f, 0, "g1", 0, "'nvidia.com/gpu':'3'");
    assert_int_equal(schedule_sq(f, plain_pod("'nvidia.com/gpu':'2'", NULL), 0), 0);
    expect_unschedulable(f, "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: "
                            "0/1 nodes are available: 1 No preemption victims found for incoming "
                            "pod.");
    assert_int_equal(schedule_sq(f, plain_pod("'nvidia.com/gpu':'1'", NULL), 0), 0);
    expect_chosen(f, 0);
    fixture_free(f);
}

/* ---- the other filters ---- */

static void test_node_unschedulable(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 1, "'unschedulable':true");
    assert_int_equal(schedule_sq(f, CUDA_PROBE, 0), 0);
    /* Checked before resources: the GPU shortage is not mentioned. */
    expect_unschedulable(f, "0/1 nodes are available: 1 node(s) were unschedulable. preemption: "
                            "0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
    /* A DaemonSet pod tolerates node.kubernetes.io/unschedulable. */
    assert_int_equal(schedule_sq(f, ds_pod("lab-node-0", "'memory':'1Gi'", 0), 0), 0);
    expect_chosen(f, 0);
    fixture_free(f);
}

static void test_node_name(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 3, NULL);
    assert_int_equal(schedule_sq(f, plain_pod("", "'nodeName':'elsewhere'"), 0), 0);
    expect_unschedulable(f, "0/3 nodes are available: 3 node(s) didn't match the requested node "
                            "name. preemption: 0/3 nodes are available: 3 Preemption is not "
                            "helpful for scheduling.");
    assert_int_equal(schedule_sq(f, plain_pod("", "'nodeName':'lab-node-2'"), 0), 0);
    expect_chosen(f, 2);
    fixture_free(f);
}

/* Schedules `tolerations` (a JSON array) against one node with `taints`. */
static const char *taint_result(const char *taints, const char *tolerations)
{
    static char message[1024];
    char spec[512], podspec[512];
    snprintf(spec, sizeof spec, "'taints':%s", taints);
    snprintf(podspec, sizeof podspec, "'tolerations':%s", tolerations);
    fixture *f = fixture_new();
    lab_node(f, "n", NULL, spec);
    assert_int_equal(schedule_sq(f, plain_pod("", podspec), 0), 0);
    snprintf(message, sizeof message, "%s", f->r.chosen == 0 ? "fits" : f->r.message);
    fixture_free(f);
    return message;
}

#define TAINT_MSG(kv)                                                                              \
    "0/1 nodes are available: 1 node(s) had untolerated taint {" kv "}. preemption: 0/1 nodes "    \
    "are available: 1 Preemption is not helpful for scheduling."

static void test_taint_toleration(void **state)
{
    (void)state;
    const char *ns = "[{'key':'k','value':'v','effect':'NoSchedule'}]";
    /* PreferNoSchedule is only a scoring hint. */
    assert_string_equal(taint_result("[{'key':'k','value':'v','effect':'PreferNoSchedule'}]", "[]"),
                        "fits");
    assert_string_equal(taint_result(ns, "[]"), TAINT_MSG("k: v"));
    assert_string_equal(taint_result("[{'key':'k','value':'v','effect':'NoExecute'}]", "[]"),
                        TAINT_MSG("k: v"));
    /* Equal (also when the operator is left out) needs the same value. */
    assert_string_equal(taint_result(ns, "[{'key':'k','operator':'Equal','value':'v'}]"), "fits");
    assert_string_equal(taint_result(ns, "[{'key':'k','value':'v'}]"), "fits");
    assert_string_equal(taint_result(ns, "[{'key':'k','operator':'Equal','value':'w'}]"),
                        TAINT_MSG("k: v"));
    assert_string_equal(taint_result(ns, "[{'key':'k','operator':'Exists'}]"), "fits");
    /* An empty key with Exists tolerates everything. */
    assert_string_equal(taint_result(ns, "[{'operator':'Exists'}]"), "fits");
    /* The effect must match when given. */
    assert_string_equal(taint_result(ns, "[{'key':'k','operator':'Exists','effect':'NoExecute'}]"),
                        TAINT_MSG("k: v"));
    assert_string_equal(taint_result(ns, "[{'key':'k','operator':'Exists','effect':'NoSchedule'}]"),
                        "fits");
    /* An empty value prints as "{key: }" (doc 3.4). */
    assert_string_equal(
        taint_result("[{'key':'node.kubernetes.io/not-ready','effect':'NoSchedule'}]", "[]"),
        TAINT_MSG("node.kubernetes.io/not-ready: "));
    /* The first untolerated taint in the node's order is named. */
    assert_string_equal(taint_result("[{'key':'a','value':'1','effect':'NoSchedule'},"
                                     "{'key':'b','value':'2','effect':'NoSchedule'}]",
                                     "[{'key':'a','operator':'Exists'}]"),
                        TAINT_MSG("b: 2"));
}

/* Whether a pod with `spec` fits the one labelled node named "node-a". */
static bool fits_labels(const char *labels, const char *spec)
{
    char node[512];
    snprintf(node, sizeof node,
             "{'metadata':{'name':'node-a','labels':%s},"
             "'status':{'allocatable':{'cpu':'4','memory':'8Gi','pods':'10'}}}",
             labels);
    fixture *f = fixture_new();
    add_node(f, node);
    assert_int_equal(schedule_sq(f, plain_pod("", spec), 0), 0);
    bool fits = f->r.chosen == 0;
    if (!fits)
        assert_string_equal(f->r.message,
                            "0/1 nodes are available: 1 node(s) didn't match Pod's node "
                            "affinity/selector. preemption: 0/1 nodes are available: 1 Preemption "
                            "is not helpful for scheduling.");
    fixture_free(f);
    return fits;
}

/* One required term with one matchExpressions requirement. */
static bool fits_expr(const char *labels, const char *requirement)
{
    char spec[512];
    snprintf(spec, sizeof spec,
             "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"
             "'nodeSelectorTerms':[{'matchExpressions':[%s]}]}}}",
             requirement);
    return fits_labels(labels, spec);
}

static void test_node_selector(void **state)
{
    (void)state;
    const char *labels = "{'gpu':'yes','zone':'a'}";
    assert_true(fits_labels(labels, "'nodeSelector':{'gpu':'yes'}"));
    assert_true(fits_labels(labels, "'nodeSelector':{'gpu':'yes','zone':'a'}"));
    assert_false(fits_labels(labels, "'nodeSelector':{'gpu':'no'}"));
    assert_false(fits_labels(labels, "'nodeSelector':{'gpu':'yes','zone':'b'}"));
    assert_false(fits_labels(labels, "'nodeSelector':{'missing':''}"));
    assert_true(fits_labels(labels, "'nodeSelector':{}"));
}

static void test_affinity_operators(void **state)
{
    (void)state;
    const char *labels = "{'gpu':'yes','count':'8'}";
    assert_true(fits_expr(labels, "{'key':'gpu','operator':'In','values':['no','yes']}"));
    assert_false(fits_expr(labels, "{'key':'gpu','operator':'In','values':['no']}"));
    assert_false(fits_expr(labels, "{'key':'absent','operator':'In','values':['x']}"));
    assert_true(fits_expr(labels, "{'key':'gpu','operator':'NotIn','values':['no']}"));
    assert_false(fits_expr(labels, "{'key':'gpu','operator':'NotIn','values':['yes']}"));
    assert_true(fits_expr(labels, "{'key':'absent','operator':'NotIn','values':['x']}"));
    assert_true(fits_expr(labels, "{'key':'gpu','operator':'Exists'}"));
    assert_false(fits_expr(labels, "{'key':'absent','operator':'Exists'}"));
    assert_true(fits_expr(labels, "{'key':'absent','operator':'DoesNotExist'}"));
    assert_false(fits_expr(labels, "{'key':'gpu','operator':'DoesNotExist'}"));
    assert_true(fits_expr(labels, "{'key':'count','operator':'Gt','values':['7']}"));
    assert_false(fits_expr(labels, "{'key':'count','operator':'Gt','values':['8']}"));
    assert_true(fits_expr(labels, "{'key':'count','operator':'Lt','values':['9']}"));
    assert_false(fits_expr(labels, "{'key':'count','operator':'Lt','values':['8']}"));
    /* Gt on a label that is not a number, or on a missing label, fails. */
    assert_false(fits_expr(labels, "{'key':'gpu','operator':'Gt','values':['1']}"));
    assert_false(fits_expr(labels, "{'key':'absent','operator':'Lt','values':['1']}"));
    /* Invalid requirements make the term match nothing. */
    assert_false(fits_expr(labels, "{'key':'gpu','operator':'In','values':[]}"));
    assert_false(fits_expr(labels, "{'key':'gpu','operator':'Exists','values':['yes']}"));
    assert_false(fits_expr(labels, "{'key':'count','operator':'Gt','values':['x']}"));
    assert_false(fits_expr(labels, "{'key':'gpu','operator':'Like','values':['yes']}"));
    /* Requirements of a term are ANDed. */
    assert_false(fits_expr(labels, "{'key':'gpu','operator':'Exists'},"
                                   "{'key':'absent','operator':'Exists'}"));
}

static void test_affinity_terms_and_fields(void **state)
{
    (void)state;
    const char *labels = "{'gpu':'yes'}";
    /* Terms are ORed. */
    assert_true(fits_labels(labels,
                            "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuring"
                            "Execution':{'nodeSelectorTerms':[{'matchExpressions':[{'key':'gpu',"
                            "'operator':'In','values':['no']}]},{'matchExpressions':[{'key':'gpu',"
                            "'operator':'Exists'}]}]}}}"));
    /* An empty term matches nothing. */
    assert_false(fits_labels(labels, "'affinity':{'nodeAffinity':{'requiredDuringScheduling"
                                     "IgnoredDuringExecution':{'nodeSelectorTerms':[{}]}}}"));
    /* matchFields NotIn does not pin nodes, so the node is filtered. */
    assert_false(fits_labels(labels, "'affinity':{'nodeAffinity':{'requiredDuringScheduling"
                                     "IgnoredDuringExecution':{'nodeSelectorTerms':[{'matchFields':"
                                     "[{'key':'metadata.name','operator':'NotIn','values':"
                                     "['node-a']}]}]}}}"));
    assert_true(fits_labels(labels, "'affinity':{'nodeAffinity':{'requiredDuringScheduling"
                                    "IgnoredDuringExecution':{'nodeSelectorTerms':[{'matchFields':"
                                    "[{'key':'metadata.name','operator':'NotIn','values':"
                                    "['node-b']}]}]}}}"));
    /* A matchFields requirement takes exactly one value (a parse error
     * otherwise), even when PreFilter let the node through. */
    assert_false(fits_labels(labels, "'affinity':{'nodeAffinity':{'requiredDuringScheduling"
                                     "IgnoredDuringExecution':{'nodeSelectorTerms':[{'matchFields':"
                                     "[{'key':'metadata.name','operator':'In','values':"
                                     "['node-a','node-b']}]}]}}}"));
    /* nodeSelector and affinity must both hold. */
    assert_false(fits_labels(labels, "'nodeSelector':{'gpu':'no'},'affinity':{'nodeAffinity':{"
                                     "'requiredDuringSchedulingIgnoredDuringExecution':{"
                                     "'nodeSelectorTerms':[{'matchExpressions':[{'key':'gpu',"
                                     "'operator':'Exists'}]}]}}}"));
}

static void test_affinity_prefilter(void **state)
{
    (void)state;
    /* A DaemonSet pod for a node that is not in the snapshot. */
    fixture *f = fixture_new();
    lab_nodes(f, 3, NULL);
    assert_int_equal(schedule_sq(f, ds_pod("gone", "'memory':'1Gi'", 0), 0), 0);
    expect_unschedulable(f, "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) "
                            "[NodeAffinity]. preemption: 0/3 nodes are available: 3 Preemption is "
                            "not helpful for scheduling.");
    /* The targeted node is chosen even when another is emptier. */
    bind_simple(f, 2, "load", 0, "'cpu':'8'");
    assert_int_equal(schedule_sq(f, ds_pod("lab-node-2", "'memory':'1Gi'", 0), 0), 0);
    expect_chosen(f, 2);
    /* Two names ANDed in one term leave none: the PreFilter rejects. */
    assert_int_equal(
        schedule_sq(f,
                    plain_pod("", "'affinity':{'nodeAffinity':{'requiredDuringScheduling"
                                  "IgnoredDuringExecution':{'nodeSelectorTerms':[{'matchFields':["
                                  "{'key':'metadata.name','operator':'In','values':['lab-node-0']},"
                                  "{'key':'metadata.name','operator':'In','values':['lab-node-1']}"
                                  "]}]}}}"),
                    0),
        0);
    expect_unschedulable(f, "0/3 nodes are available: pod affinity terms conflict. preemption: "
                            "0/3 nodes are available: 3 Preemption is not helpful for scheduling.");
    fixture_free(f);
}

#define PORT_POD(port)                                                                             \
    "{'metadata':{'name':'web'},'spec':{'containers':[{'name':'c','image':'i','ports':[" port      \
    "]}]}}"

static void test_node_ports(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 1, NULL);
    bind_pod(f, 0,
             PORT_POD("{'containerPort':80,'hostPort':8080,'protocol':'TCP'},"
                      "{'containerPort':53,'hostPort':5353,'hostIP':'10.0.0.1','protocol':'UDP'}"));
    const char *conflict = "0/1 nodes are available: 1 node(s) didn't have free ports for the "
                           "requested pod ports. preemption: 0/1 nodes are available: 1 No "
                           "preemption victims found for incoming pod.";
    assert_int_equal(schedule_sq(f, PORT_POD("{'containerPort':80,'hostPort':8080}"), 0), 0);
    expect_unschedulable(f, conflict);
    /* 0.0.0.0 against a specific IP clashes both ways. */
    assert_int_equal(
        schedule_sq(f, PORT_POD("{'containerPort':1,'hostPort':8080,'hostIP':'10.0.0.9'}"), 0), 0);
    expect_unschedulable(f, conflict);
    assert_int_equal(
        schedule_sq(f, PORT_POD("{'containerPort':1,'hostPort':5353,'protocol':'UDP'}"), 0), 0);
    expect_unschedulable(f, conflict);
    /* Another protocol, another IP or only a containerPort is free. */
    assert_int_equal(
        schedule_sq(f, PORT_POD("{'containerPort':80,'hostPort':8080,'protocol':'UDP'}"), 0), 0);
    expect_chosen(f, 0);
    assert_int_equal(schedule_sq(f,
                                 PORT_POD("{'containerPort':1,'hostPort':5353,'hostIP':'10.0.0.2',"
                                          "'protocol':'UDP'}"),
                                 0),
                     0);
    expect_chosen(f, 0);
    assert_int_equal(schedule_sq(f, PORT_POD("{'containerPort':8080}"), 0), 0);
    expect_chosen(f, 0);
    fixture_free(f);
}

/* ---- preemption ---- */

static void test_preemption_policy_never(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 3, NULL);
    bind_simple(f, 0, "low", -5, "'memory':'1Gi'");
    assert_int_equal(schedule_sq(f, CUDA_PROBE_SPEC(",'preemptionPolicy':'Never'"), 0), 0);
    expect_unschedulable(f, "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: "
                            "not eligible due to preemptionPolicy=Never.");
    assert_false(f->r.clear_nominated);
    assert_int_equal(f->r.nominated, -1);
    fixture_free(f);
}

static void test_preemption_nominates_with_reprieve(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 1, NULL); /* 32Gi */
    const json_t *low = bind_simple(f, 0, "low", 0, "'memory':'8Gi'");
    bind_simple(f, 0, "mid", 10, "'memory':'8Gi'");
    bind_simple(f, 0, "high", 2000, "'memory':'8Gi'");
    /* 8Gi free; 16Gi wanted. Removing low and mid frees 24Gi; putting mid
     * back (more important, tried first) still leaves 16Gi: only low goes. */
    assert_int_equal(schedule_sq(f, plain_pod("'memory':'16Gi'", "'priority':1000"), 0), 0);
    expect_unschedulable(f, "0/1 nodes are available: 1 Insufficient memory.");
    assert_int_equal(f->r.nominated, 0);
    assert_int_equal(f->r.victim_count, 1);
    assert_ptr_equal(f->r.victims[0], low);
    assert_false(f->r.clear_nominated);
    fixture_free(f);
}

static void test_preemption_picks_lowest_victims(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 3, NULL);
    bind_simple(f, 0, "a", 100, "'memory':'30Gi'");
    const json_t *b = bind_simple(f, 1, "b", 50, "'memory':'30Gi'");
    bind_simple(f, 2, "c", 100, "'memory':'30Gi'");
    assert_int_equal(schedule_sq(f, plain_pod("'memory':'8Gi'", "'priority':1000"), 0), 0);
    expect_unschedulable(f, "0/3 nodes are available: 3 Insufficient memory.");
    assert_int_equal(f->r.nominated, 1);
    assert_int_equal(f->r.victim_count, 1);
    assert_ptr_equal(f->r.victims[0], b);
    fixture_free(f);
}

static void test_preemption_mixed_statuses(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 2, NULL);
    lab_node(f, "tainted", NULL, "'taints':[{'key':'k','value':'v','effect':'NoSchedule'}]");
    bind_simple(f, 0, "low", 0, "'memory':'4Gi'");  /* a victim, but not enough */
    bind_simple(f, 1, "peer", 7, "'memory':'4Gi'"); /* same priority: none */
    assert_int_equal(schedule_sq(f, plain_pod("'memory':'40Gi'", "'priority':7"), 0), 0);
    expect_unschedulable(f, "0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 "
                            "Insufficient memory. preemption: 0/3 nodes are available: 1 "
                            "Insufficient memory, 1 No preemption victims found for incoming pod, "
                            "1 Preemption is not helpful for scheduling.");
    assert_true(f->r.clear_nominated);
    fixture_free(f);
}

static void test_nominated_node_first(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 3, NULL);
    bind_simple(f, 2, "load", 0, "'cpu':'8','memory':'16Gi'");
    const char *pod =
        "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'i','resources':{"
        "'requests':{'cpu':'1'}}}]},'status':{'phase':'Pending','nominatedNodeName':'lab-node-2'}}";
    assert_int_equal(schedule_sq(f, pod, 0), 0);
    expect_chosen(f, 2);
    fixture_free(f);
}

static void test_not_eligible_terminating_victim(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 1, NULL);
    bind_pod(f, 0,
             "{'metadata':{'name':'leaving','deletionTimestamp':'2025-01-01T00:00:00Z'},"
             "'spec':{'priority':0,'containers':[{'name':'c','image':'i','resources':{'requests':{"
             "'memory':'30Gi'}}}]},'status':{'phase':'Running','conditions':[{'type':"
             "'DisruptionTarget','status':'True','reason':'PreemptionByScheduler'}]}}");
    const char *pod = "{'metadata':{'name':'p'},'spec':{'priority':100,'containers':[{'name':'c',"
                      "'image':'i','resources':{'requests':{'memory':'8Gi'}}}]},"
                      "'status':{'nominatedNodeName':'lab-node-0'}}";
    assert_int_equal(schedule_sq(f, pod, 0), 0);
    expect_unschedulable(f, "0/1 nodes are available: 1 Insufficient memory. preemption: not "
                            "eligible due to a terminating pod on the nominated node.");
    fixture_free(f);
}

/* ---- scoring ---- */

static void test_least_allocated(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 2, NULL);
    bind_simple(f, 0, "busy", 0, "'cpu':'8','memory':'16Gi'");
    for (unsigned tie = 0; tie < 4; tie++) {
        assert_int_equal(schedule_sq(f, plain_pod("'cpu':'1','memory':'1Gi'", NULL), tie), 0);
        expect_chosen(f, 1);
    }
    fixture_free(f);

    /* A pod without requests still weighs 100m/200Mi for scoring. */
    f = fixture_new();
    lab_nodes(f, 2, NULL);
    bind_simple(f, 0, "besteffort", 0, "");
    for (unsigned tie = 0; tie < 2; tie++) {
        assert_int_equal(schedule_sq(f, plain_pod("", NULL), tie), 0);
        expect_chosen(f, 1);
    }
    fixture_free(f);
}

static void test_tie_break_rotates(void **state)
{
    (void)state;
    fixture *f = fixture_new();
    lab_nodes(f, 3, NULL);
    bind_simple(f, 1, "busy", 0, "'cpu':'8'");
    /* Nodes 0 and 2 tie; the search starts at tie_break % 3. */
    const int want[] = {0, 2, 2, 0, 2};
    for (unsigned tie = 0; tie < 5; tie++) {
        assert_int_equal(schedule_sq(f, plain_pod("'cpu':'1'", NULL), tie), 0);
        expect_chosen(f, want[tie]);
    }
    fixture_free(f);
}

/* ---- wants, condition, note ---- */

static bool wants_sq(const char *squoted)
{
    json_t *pod = sq_load(squoted);
    bool w = ctl_sched_wants(pod);
    json_decref(pod);
    return w;
}

static void test_wants(void **state)
{
    (void)state;
    assert_true(wants_sq(CUDA_PROBE));
    assert_true(wants_sq("{'spec':{'containers':[]},'status':{'phase':'Pending'}}"));
    assert_false(wants_sq("{'spec':{'nodeName':'lab-node-0'}}"));
    assert_false(wants_sq("{'spec':{'schedulerName':'other'}}"));
    assert_false(wants_sq("{'metadata':{'deletionTimestamp':'2025-01-01T00:00:00Z'},'spec':{}}"));
    assert_false(wants_sq("{'spec':{'schedulingGates':[{'name':'wait'}]}}"));
    assert_true(wants_sq("{'spec':{'schedulingGates':[]}}"));
    assert_false(wants_sq("{'spec':{},'status':{'phase':'Succeeded'}}"));
    assert_false(wants_sq("{'spec':{},'status':{'phase':'Failed'}}"));
}

static void test_condition(void **state)
{
    (void)state;
    json_t *c =
        ctl_sched_unschedulable_condition("0/3 nodes are available: x.", "2025-05-01T10:00:00Z");
    char *text = json_dumps(c, JSON_COMPACT);
    /* doc 5.6, in the API's member order (PodCondition field order). */
    assert_string_equal(text, "{\"type\":\"PodScheduled\",\"status\":\"False\","
                              "\"lastProbeTime\":null,\"lastTransitionTime\":"
                              "\"2025-05-01T10:00:00Z\",\"reason\":\"Unschedulable\","
                              "\"message\":\"0/3 nodes are available: x.\"}");
    free(text);
    json_decref(c);
    c = ctl_sched_error_condition("boom", "2025-05-01T10:00:00Z");
    assert_string_equal(json_string_value(json_object_get(c, "reason")), "SchedulerError");
    json_decref(c);
}

static void test_event_note_truncated(void **state)
{
    (void)state;
    char message[2001];
    for (size_t i = 0; i < 2000; i++)
        message[i] = (char)('a' + i % 26);
    message[2000] = '\0';
    char *note = ctl_sched_event_note(message);
    assert_int_equal(strlen(note), 1024);
    assert_memory_equal(note, message, 1020);
    assert_string_equal(note + 1020, " ...");
    free(note);
    message[1024] = '\0'; /* exactly the limit: kept whole */
    note = ctl_sched_event_note(message);
    assert_string_equal(note, message);
    free(note);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lab_cuda_probe_no_gpu),
        cmocka_unit_test(test_lab_cuda_probe_after_gpu_patch),
        cmocka_unit_test(test_memo_keeps_what_stripped_pods_request),
        cmocka_unit_test(test_memo_keeps_bound_pods_between_builds),
        cmocka_unit_test(test_memo_keeps_nodes_between_builds),
        cmocka_unit_test(test_lab_daemonset_64gi),
        cmocka_unit_test(test_cluster_reused_with_assumed_pods),
        cmocka_unit_test(test_lab_daemonset_high_priority_victims_not_enough),
        cmocka_unit_test(test_lab_untolerated_taint),
        cmocka_unit_test(test_sort_mixed_reasons),
        cmocka_unit_test(test_sort_is_byte_order),
        cmocka_unit_test(test_no_nodes),
        cmocka_unit_test(test_scheduler_error),
        cmocka_unit_test(test_too_many_pods),
        cmocka_unit_test(test_ephemeral_storage),
        cmocka_unit_test(test_init_containers_max),
        cmocka_unit_test(test_init_sidecar_rules),
        cmocka_unit_test(test_overhead),
        cmocka_unit_test(test_zero_requests_skipped),
        cmocka_unit_test(test_absent_resource_counts_zero),
        cmocka_unit_test(test_extended_resource_used_by_others),
        cmocka_unit_test(test_node_unschedulable),
        cmocka_unit_test(test_node_name),
        cmocka_unit_test(test_taint_toleration),
        cmocka_unit_test(test_node_selector),
        cmocka_unit_test(test_affinity_operators),
        cmocka_unit_test(test_affinity_terms_and_fields),
        cmocka_unit_test(test_affinity_prefilter),
        cmocka_unit_test(test_node_ports),
        cmocka_unit_test(test_preemption_policy_never),
        cmocka_unit_test(test_preemption_nominates_with_reprieve),
        cmocka_unit_test(test_preemption_picks_lowest_victims),
        cmocka_unit_test(test_preemption_mixed_statuses),
        cmocka_unit_test(test_nominated_node_first),
        cmocka_unit_test(test_not_eligible_terminating_victim),
        cmocka_unit_test(test_least_allocated),
        cmocka_unit_test(test_tie_break_rotates),
        cmocka_unit_test(test_wants),
        cmocka_unit_test(test_condition),
        cmocka_unit_test(test_event_note_truncated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
