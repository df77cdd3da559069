/* ctl_ds_sync and its helpers against k8s-semantics section 6: the lab
 * walk-through of 6.6 step by step (the plan of each sync is carried out by
 * hand, as the runtime would), then the rules one at a time: budgets,
 * surge, OnDelete, taints, nodeSelector, history, the hash.
 *
 * Expected objects are written out from the document (6.2, 6.3, 6.5), not
 * taken from the program. A hash cannot be predicted that way except for
 * the known-answer cases at the end, so the walk-through reads it from the
 * revision the plan creates and then checks that the pods carry the same. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/daemonset.h"
#include "kube/daemonset.h"

#define DS_NAME "nvidia-container-toolkit"
#define NOW     1767225600 /* 2026-01-01T00:00:00Z */

/* ---- fixtures ---- */

/* A lab node (7.1): kwokctl labels, no taints, 32Gi. */
static json_t *lab_node(const char *name)
{
    return sqf("{'apiVersion':'v1','kind':'Node','metadata':{'name':'%s','labels':{"
               "'beta.kubernetes.io/arch':'amd64','beta.kubernetes.io/os':'linux',"
               "'kubernetes.io/arch':'amd64','kubernetes.io/hostname':'%s',"
               "'kubernetes.io/os':'linux','type':'kwok'}},'spec':{},"
               "'status':{'allocatable':{'cpu':'32','memory':'32Gi','pods':'110'},"
               "'conditions':[{'type':'Ready','status':'True'}]}}",
               name, name);
}

static json_t *nodes_n(int n)
{
    json_t *nodes = json_array();
    char name[32];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "lab-node-%d", i);
        json_array_append_new(nodes, lab_node(name));
    }
    return nodes;
}

#define TEMPLATE_SPEC(image, memory)                                                               \
    "{'containers':[{'name':'toolkit','image':'nvcr.io/nvidia/k8s/container-toolkit:" image "',"   \
    "'resources':{'requests':{'memory':'" memory "'}},'imagePullPolicy':'IfNotPresent',"           \
    "'terminationMessagePath':'/dev/termination-log','terminationMessagePolicy':'File'}],"         \
    "'restartPolicy':'Always','terminationGracePeriodSeconds':30,'dnsPolicy':'ClusterFirst',"      \
    "'securityContext':{},'schedulerName':'default-scheduler'}"

#define SPEC_OLD TEMPLATE_SPEC("v1.16.2", "128Mi")
#define SPEC_NEW TEMPLATE_SPEC("v1.17.0", "64Gi")

/* The lab DaemonSet as stored after create (3.3): defaults, generation 1,
 * the template-generation annotation, the zeroed status. */
static json_t *lab_ds(void)
{
    return sq_load("{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'" DS_NAME "',"
                   "'namespace':'gpu-operator','uid':'0b5d1c2e-ds','generation':1,"
                   "'creationTimestamp':'2025-12-31T00:00:00Z',"
                   "'annotations':{'deprecated.daemonset.template.generation':'1'}},"
                   "'spec':{'selector':{'matchLabels':{'app':'" DS_NAME "'}},"
                   "'template':{'metadata':{'labels':{'app':'" DS_NAME "'}},'spec':" SPEC_OLD "},"
                   "'updateStrategy':{'type':'RollingUpdate',"
                   "'rollingUpdate':{'maxUnavailable':1,'maxSurge':0}},"
                   "'revisionHistoryLimit':10},"
                   "'status':{'currentNumberScheduled':0,'numberMisscheduled':0,"
                   "'desiredNumberScheduled':0,'numberReady':0}}");
}

/* `kubectl apply` of the new image and memory: one template change. */
static void change_template(json_t *ds, const char *spec_text, long long generation)
{
    json_t *tmpl = json_object_get(json_object_get(ds, "spec"), "template");
    json_object_set_new(tmpl, "spec", sq_load(spec_text));
    json_t *meta = json_object_get(ds, "metadata");
    json_object_set_new(meta, "generation", json_integer(generation));
    char g[16];
    snprintf(g, sizeof g, "%lld", generation);
    json_object_set_new(json_object_get(meta, "annotations"),
                        "deprecated.daemonset.template.generation", json_string(g));
}

static void set_path(json_t *obj, const char *a, const char *b, json_t *value_new)
{
    json_t *inner = json_object_get(obj, a);
    if (!inner) {
        inner = json_object();
        json_object_set_new(obj, a, inner);
    }
    json_object_set_new(inner, b, value_new);
}

/* An owned daemon pod as the scheduler and the fake kubelet leave it. */
static json_t *make_pod(const char *name, const char *node, const char *hash, const char *gen,
                        const char *created, bool ready)
{
    json_t *pod =
        sqf("{'apiVersion':'v1','kind':'Pod','metadata':{'name':'%s','namespace':'gpu-operator',"
            "'uid':'uid-%s','creationTimestamp':'%s','labels':{'app':'" DS_NAME "',"
            "'controller-revision-hash':'%s','pod-template-generation':'%s'},"
            "'ownerReferences':[{'apiVersion':'apps/v1','kind':'DaemonSet','name':'" DS_NAME "',"
            "'uid':'0b5d1c2e-ds','controller':true,'blockOwnerDeletion':true}]},"
            "'spec':{'nodeName':'%s','affinity':{'nodeAffinity':{"
            "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':[{'matchFields':"
            "[{'key':'metadata.name','operator':'In','values':['%s']}]}]}}}},"
            "'status':{'phase':'Running','conditions':[{'type':'Ready','status':'%s',"
            "'lastTransitionTime':'%s'}]}}",
            name, name, created, hash, gen, node, node, ready ? "True" : "False", created);
    return pod;
}

/* What the runtime, the scheduler and the kubelet make of a planned pod. */
static json_t *realize(const json_t *planned, const char *name, const char *created, bool bind)
{
    json_t *pod = json_deep_copy(planned);
    json_t *meta = json_object_get(pod, "metadata");
    json_object_del(meta, "generateName");
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "creationTimestamp", json_string(created));
    const char *node = kube_ds_target_node(pod);
    assert_non_null(node);
    if (bind) {
        set_path(pod, "spec", "nodeName", json_string(node));
        json_object_set_new(pod, "status",
                            sqf("{'phase':'Running','conditions':[{'type':'Ready',"
                                "'status':'True','lastTransitionTime':'%s'}]}",
                                created));
    } else {
        json_object_set_new(pod, "status",
                            sq_load("{'phase':'Pending','conditions':[{'type':'PodScheduled',"
                                    "'status':'False','reason':'Unschedulable'}]}"));
    }
    return pod;
}

static void sync_ok(const json_t *ds, const json_t *nodes, const json_t *pods,
                    const json_t *revisions, bool pending, ctl_ds_plan *plan)
{
    gp_error err = {0};
    int rc = ctl_ds_sync(ds, nodes, pods, revisions, NOW, pending, plan, &err);
    if (rc != 0) print_error("ctl_ds_sync: %d %s\n", rc, err.text);
    assert_int_equal(rc, 0);
}

/* Names of delete_pods, joined by ',' for one comparison. */
static void assert_deletes(const ctl_ds_plan *p, const char *names)
{
    char got[1024] = "";
    size_t i;
    json_t *v;
    json_array_foreach(p->delete_pods, i, v)
    {
        if (i) strcat(got, ",");
        strcat(got, json_string_value(v));
    }
    assert_string_equal(got, names);
}

/* The target nodes of create_pods, joined by ','. */
static void assert_creates(const ctl_ds_plan *p, const char *nodes)
{
    char got[1024] = "";
    size_t i;
    json_t *v;
    json_array_foreach(p->create_pods, i, v)
    {
        if (i) strcat(got, ",");
        strcat(got, kube_ds_target_node(v));
    }
    assert_string_equal(got, nodes);
}

static void assert_status(const ctl_ds_plan *p, const char *squoted)
{
    assert_non_null(p->status);
    json_t *want = sq_load(squoted);
    assert_json_equal(p->status, want);
    json_decref(want);
}

static void assert_no_writes(const ctl_ds_plan *p)
{
    assert_int_equal(json_array_size(p->create_pods), 0);
    assert_int_equal(json_array_size(p->delete_pods), 0);
    assert_int_equal(json_array_size(p->create_revisions), 0);
    assert_int_equal(json_array_size(p->update_revisions), 0);
    assert_int_equal(json_array_size(p->delete_revisions), 0);
    assert_int_equal(json_array_size(p->patch_pods), 0);
}

static void apply_status(json_t *ds, const ctl_ds_plan *p)
{
    if (p->status) json_object_set(ds, "status", p->status);
}

/* The pod 6.2 describes for node `node`, written out in full. */
static json_t *expected_pod(const char *node, const char *hash, const char *gen,
                            const char *spec_text)
{
    json_t *pod = sqf("{'apiVersion':'v1','kind':'Pod','metadata':{"
                      "'generateName':'" DS_NAME "-','namespace':'gpu-operator',"
                      "'labels':{'app':'" DS_NAME "','controller-revision-hash':'%s',"
                      "'pod-template-generation':'%s'},"
                      "'ownerReferences':[{'apiVersion':'apps/v1','kind':'DaemonSet',"
                      "'name':'" DS_NAME "','uid':'0b5d1c2e-ds','controller':true,"
                      "'blockOwnerDeletion':true}]}}",
                      hash, gen);
    json_t *spec = sq_load(spec_text);
    json_object_set_new(
        spec, "tolerations",
        sq_load("[{'key':'node.kubernetes.io/not-ready','operator':'Exists','effect':'NoExecute'},"
                "{'key':'node.kubernetes.io/unreachable','operator':'Exists','effect':'NoExecute'},"
                "{'key':'node.kubernetes.io/disk-pressure','operator':'Exists',"
                "'effect':'NoSchedule'},"
                "{'key':'node.kubernetes.io/memory-pressure','operator':'Exists',"
                "'effect':'NoSchedule'},"
                "{'key':'node.kubernetes.io/pid-pressure','operator':'Exists',"
                "'effect':'NoSchedule'},"
                "{'key':'node.kubernetes.io/unschedulable','operator':'Exists',"
                "'effect':'NoSchedule'}]"));
    json_object_set_new(spec, "affinity",
                        sqf("{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"
                            "'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name',"
                            "'operator':'In','values':['%s']}]}]}}}",
                            node));
    json_object_set_new(pod, "spec", spec);
    return pod;
}

/* The hash of a created revision, checked against its name. */
static const char *revision_hash(const json_t *cr)
{
    const json_t *meta = json_object_get(cr, "metadata");
    const char *hash = json_string_value(
        json_object_get(json_object_get(meta, "labels"), "controller-revision-hash"));
    assert_non_null(hash);
    char name[128];
    snprintf(name, sizeof name, DS_NAME "-%s", hash);
    assert_string_equal(json_string_value(json_object_get(meta, "name")), name);
    return hash;
}

/* ---- 6.6: the lab walk-through ---- */

typedef struct lab {
    json_t *ds, *nodes, *pods, *revisions;
    char h1[16], h2[16];
} lab;

/* Step 1: a new DaemonSet on three untainted nodes. */
static void lab_step1(lab *l, ctl_ds_plan *p)
{
    sync_ok(l->ds, l->nodes, l->pods, l->revisions, false, p);
    assert_int_equal(json_array_size(p->create_revisions), 1);
    json_t *cr = json_array_get(p->create_revisions, 0);
    snprintf(l->h1, sizeof l->h1, "%s", revision_hash(cr));
    json_t *want_cr =
        sqf("{'apiVersion':'apps/v1','kind':'ControllerRevision','metadata':{"
            "'name':'" DS_NAME "-%s','namespace':'gpu-operator',"
            "'labels':{'app':'" DS_NAME "','controller-revision-hash':'%s'},"
            "'annotations':{'deprecated.daemonset.template.generation':'1'},"
            "'ownerReferences':[{'apiVersion':'apps/v1','kind':'DaemonSet','name':'" DS_NAME "',"
            "'uid':'0b5d1c2e-ds','controller':true,'blockOwnerDeletion':true}]},"
            "'data':{'spec':{'template':{'metadata':{'labels':{'app':'" DS_NAME "'}},"
            "'spec':" SPEC_OLD ",'$patch':'replace'}}},'revision':1}",
            l->h1, l->h1);
    assert_json_equal(cr, want_cr);
    json_decref(want_cr);

    assert_creates(p, "lab-node-0,lab-node-1,lab-node-2");
    for (int i = 0; i < 3; i++) {
        char node[32];
        snprintf(node, sizeof node, "lab-node-%d", i);
        json_t *want = expected_pod(node, l->h1, "1", SPEC_OLD);
        assert_json_equal(json_array_get(p->create_pods, (size_t)i), want);
        json_decref(want);
    }
    assert_deletes(p, "");
    json_t *events =
        sq_load("[{'type':'Normal','reason':'SuccessfulCreate','message':'Created pod: '},"
                "{'type':'Normal','reason':'SuccessfulCreate','message':'Created pod: '},"
                "{'type':'Normal','reason':'SuccessfulCreate','message':'Created pod: '}]");
    assert_json_equal(p->events, events);
    json_decref(events);
    /* Nothing is visible yet: 6.5 over no pods. */
    assert_status(p, "{'currentNumberScheduled':0,'numberMisscheduled':0,"
                     "'desiredNumberScheduled':3,'numberReady':0,'observedGeneration':1,"
                     "'numberUnavailable':3}");

    json_array_append(l->revisions, cr);
    /* Pod names sort against the node order on purpose: the rolling update
     * must pick by node name. */
    static const char *const names[] = {DS_NAME "-zq7xk", DS_NAME "-mb2wd", DS_NAME "-ahx4p"};
    for (size_t i = 0; i < 3; i++)
        json_array_append_new(l->pods, realize(json_array_get(p->create_pods, i), names[i],
                                               "2025-12-31T00:00:10Z", true));
    apply_status(l->ds, p);
}

/* Step 2 ends: the pods are bound and Ready. */
static void lab_step2(lab *l, ctl_ds_plan *p)
{
    sync_ok(l->ds, l->nodes, l->pods, l->revisions, false, p);
    assert_no_writes(p);
    assert_status(p, "{'currentNumberScheduled':3,'numberMisscheduled':0,"
                     "'desiredNumberScheduled':3,'numberReady':3,'observedGeneration':1,"
                     "'updatedNumberScheduled':3,'numberAvailable':3}");
    assert_null(json_object_get(p->status, "numberUnavailable"));
    apply_status(l->ds, p);
    ctl_ds_plan_free(p);
    /* Nothing differs now, so no status write either. */
    sync_ok(l->ds, l->nodes, l->pods, l->revisions, false, p);
    assert_no_writes(p);
    assert_null(p->status);
}

/* Step 3: the template change deletes one old pod, on the lowest-named
 * node, and adds revision 2. */
static void lab_step3(lab *l, ctl_ds_plan *p)
{
    change_template(l->ds, SPEC_NEW, 2);
    sync_ok(l->ds, l->nodes, l->pods, l->revisions, false, p);
    assert_int_equal(json_array_size(p->create_revisions), 1);
    json_t *cr = json_array_get(p->create_revisions, 0);
    snprintf(l->h2, sizeof l->h2, "%s", revision_hash(cr));
    assert_string_not_equal(l->h1, l->h2);
    assert_int_equal(json_integer_value(json_object_get(cr, "revision")), 2);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(cr, "metadata"), "annotations"),
                            "deprecated.daemonset.template.generation")),
                        "2");
    assert_deletes(p, DS_NAME "-zq7xk");
    assert_creates(p, "");
    json_t *events = sq_load("[{'type':'Normal','reason':'SuccessfulDelete',"
                             "'message':'Deleted pod: " DS_NAME "-zq7xk'}]");
    assert_json_equal(p->events, events);
    json_decref(events);
    assert_status(p, "{'currentNumberScheduled':3,'numberMisscheduled':0,"
                     "'desiredNumberScheduled':3,'numberReady':3,'observedGeneration':2,"
                     "'numberAvailable':3}");
    json_array_append(l->revisions, cr);
    apply_status(l->ds, p);
}

/* Between steps: the deleted pod terminates but still counts as present. */
static void lab_terminating(lab *l, ctl_ds_plan *p)
{
    json_t *old = json_array_get(l->pods, 0);
    set_path(old, "metadata", "deletionTimestamp", json_string("2025-12-31T00:01:00Z"));
    sync_ok(l->ds, l->nodes, l->pods, l->revisions, false, p);
    assert_no_writes(p);
    assert_null(p->status);
    json_array_remove(l->pods, 0);
}

/* Step 4: the old pod is gone; manage() creates the new one for that node. */
static void lab_step4(lab *l, ctl_ds_plan *p)
{
    sync_ok(l->ds, l->nodes, l->pods, l->revisions, false, p);
    assert_creates(p, "lab-node-0");
    json_t *want = expected_pod("lab-node-0", l->h2, "2", SPEC_NEW);
    assert_json_equal(json_array_get(p->create_pods, 0), want);
    json_decref(want);
    assert_deletes(p, "");
    assert_int_equal(json_array_size(p->create_revisions), 0);
    json_array_append_new(l->pods, realize(json_array_get(p->create_pods, 0), DS_NAME "-n8rtv",
                                           "2025-12-31T00:02:00Z", false));
    apply_status(l->ds, p);
}

/* Step 5: the new pod stays Pending; the rollout is stalled for good. */
static void lab_step5(lab *l, ctl_ds_plan *p)
{
    sync_ok(l->ds, l->nodes, l->pods, l->revisions, false, p);
    assert_no_writes(p);
    assert_status(p, "{'currentNumberScheduled':3,'numberMisscheduled':0,"
                     "'desiredNumberScheduled':3,'numberReady':2,'observedGeneration':2,"
                     "'updatedNumberScheduled':1,'numberAvailable':2,'numberUnavailable':1}");
    apply_status(l->ds, p);
    ctl_ds_plan_free(p);
    sync_ok(l->ds, l->nodes, l->pods, l->revisions, false, p);
    assert_no_writes(p);
    assert_null(p->status);
    assert_int_equal(json_array_size(p->events), 0);
}

static void test_lab_walkthrough(void **state)
{
    (void)state;
    lab l = {lab_ds(), nodes_n(3), json_array(), json_array(), "", ""};
    ctl_ds_plan p;
    void (*steps[])(lab *, ctl_ds_plan *) = {lab_step1,       lab_step2, lab_step3,
                                             lab_terminating, lab_step4, lab_step5};
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        steps[i](&l, &p);
        ctl_ds_plan_free(&p);
    }
    json_decref(l.ds);
    json_decref(l.nodes);
    json_decref(l.pods);
    json_decref(l.revisions);
}

/* ---- rolling-update budgets ---- */

/* A DaemonSet at generation 2 whose current revision (revision 2, hash
 * "new") is given, and `n` available old pods (hash "old", generation 1). */
typedef struct rollout {
    json_t *ds, *nodes, *pods, *revisions;
} rollout;

static json_t *revision_for(const json_t *ds, const char *hash, long long number)
{
    json_t *tmpl = json_deep_copy(json_object_get(json_object_get(ds, "spec"), "template"));
    json_object_set_new(tmpl, "$patch", json_string("replace"));
    json_t *cr = sqf("{'apiVersion':'apps/v1','kind':'ControllerRevision','metadata':{"
                     "'name':'" DS_NAME "-%s','namespace':'gpu-operator',"
                     "'labels':{'app':'" DS_NAME "','controller-revision-hash':'%s'},"
                     "'ownerReferences':[{'apiVersion':'apps/v1','kind':'DaemonSet',"
                     "'name':'" DS_NAME "','uid':'0b5d1c2e-ds','controller':true,"
                     "'blockOwnerDeletion':true}]},'revision':%lld}",
                     hash, hash, number);
    json_object_set_new(cr, "data", json_pack("{s:{s:o}}", "spec", "template", tmpl));
    return cr;
}

static rollout rollout_new(int n, const char *max_unavailable_json, const char *max_surge_json)
{
    rollout r = {lab_ds(), nodes_n(n), json_array(), json_array()};
    change_template(r.ds, SPEC_NEW, 2);
    json_t *ru = sqf("{'maxUnavailable':%s,'maxSurge':%s}", max_unavailable_json, max_surge_json);
    json_object_set_new(json_object_get(json_object_get(r.ds, "spec"), "updateStrategy"),
                        "rollingUpdate", ru);
    json_object_set_new(r.ds, "status",
                        sqf("{'currentNumberScheduled':%d,'numberMisscheduled':0,"
                            "'desiredNumberScheduled':%d,'numberReady':%d,"
                            "'observedGeneration':1,'numberAvailable':%d}",
                            n, n, n, n));
    json_array_append_new(r.revisions, revision_for(r.ds, "new", 2));
    for (int i = 0; i < n; i++) {
        char name[64], node[32];
        snprintf(name, sizeof name, DS_NAME "-old%d", i);
        snprintf(node, sizeof node, "lab-node-%d", i);
        json_array_append_new(r.pods,
                              make_pod(name, node, "old", "1", "2025-12-31T00:00:10Z", true));
    }
    return r;
}

static void rollout_free(rollout *r)
{
    json_decref(r->ds);
    json_decref(r->nodes);
    json_decref(r->pods);
    json_decref(r->revisions);
}

static void test_max_unavailable_25_percent_of_3(void **state)
{
    (void)state;
    rollout r = rollout_new(3, "'25%'", "0");
    ctl_ds_plan p;
    sync_ok(r.ds, r.nodes, r.pods, r.revisions, false, &p);
    assert_deletes(&p, DS_NAME "-old0");
    assert_int_equal(json_array_size(p.create_revisions), 0);
    ctl_ds_plan_free(&p);
    rollout_free(&r);
}

static void test_max_unavailable_50_percent_of_5(void **state)
{
    (void)state;
    rollout r = rollout_new(5, "'50%'", "0");
    ctl_ds_plan p;
    sync_ok(r.ds, r.nodes, r.pods, r.revisions, false, &p);
    assert_deletes(&p, DS_NAME "-old0," DS_NAME "-old1," DS_NAME "-old2");
    ctl_ds_plan_free(&p);
    rollout_free(&r);
}

static void test_both_zero_means_one(void **state)
{
    (void)state;
    rollout r = rollout_new(3, "0", "0");
    ctl_ds_plan p;
    sync_ok(r.ds, r.nodes, r.pods, r.revisions, false, &p);
    assert_deletes(&p, DS_NAME "-old0");
    ctl_ds_plan_free(&p);
    rollout_free(&r);
}

static void test_invalid_max_unavailable_is_an_error(void **state)
{
    (void)state;
    rollout r = rollout_new(3, "'1'", "0");
    ctl_ds_plan p;
    gp_error err = {0};
    assert_int_equal(ctl_ds_sync(r.ds, r.nodes, r.pods, r.revisions, NOW, false, &p, &err), 1);
    assert_non_null(strstr(err.text, "MaxUnavailable"));
    assert_deletes(&p, "");
    ctl_ds_plan_free(&p);
    rollout_free(&r);
}

/* An unavailable old pod is replaced even with the budget used up by a new
 * pod that is not available yet. */
static void test_unavailable_old_pod_replaced_regardless(void **state)
{
    (void)state;
    rollout r = rollout_new(3, "1", "0");
    json_array_set_new(
        r.pods, 0,
        make_pod(DS_NAME "-new0", "lab-node-0", "new", "2", "2025-12-31T00:05:00Z", false));
    json_array_set_new(
        r.pods, 2,
        make_pod(DS_NAME "-old2", "lab-node-2", "old", "1", "2025-12-31T00:00:10Z", false));
    ctl_ds_plan p;
    sync_ok(r.ds, r.nodes, r.pods, r.revisions, false, &p);
    assert_deletes(&p, DS_NAME "-old2");
    ctl_ds_plan_free(&p);
    rollout_free(&r);
}

/* "updated" also holds for a pod whose pod-template-generation matches,
 * whatever its hash (6.3). */
static void test_updated_by_template_generation(void **state)
{
    (void)state;
    rollout r = rollout_new(3, "1", "0");
    json_array_set_new(
        r.pods, 0,
        make_pod(DS_NAME "-x0", "lab-node-0", "elsewhere", "2", "2025-12-31T00:05:00Z", true));
    ctl_ds_plan p;
    sync_ok(r.ds, r.nodes, r.pods, r.revisions, false, &p);
    assert_deletes(&p, DS_NAME "-old1");
    assert_int_equal(json_integer_value(json_object_get(p.status, "updatedNumberScheduled")), 1);
    ctl_ds_plan_free(&p);
    rollout_free(&r);
}

static void test_max_surge(void **state)
{
    (void)state;
    rollout r = rollout_new(3, "0", "1");
    ctl_ds_plan p;
    /* Old pods all available: one surge pod, no delete. */
    sync_ok(r.ds, r.nodes, r.pods, r.revisions, false, &p);
    assert_creates(&p, "lab-node-0");
    assert_deletes(&p, "");
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(json_array_get(p.create_pods, 0), "metadata"),
                            "labels"),
            "controller-revision-hash")),
        "new");
    ctl_ds_plan_free(&p);

    /* The surge pod is not available yet: it holds the whole surge budget. */
    json_array_append_new(
        r.pods, make_pod(DS_NAME "-new0", "lab-node-0", "new", "2", "2025-12-31T00:05:00Z", false));
    sync_ok(r.ds, r.nodes, r.pods, r.revisions, false, &p);
    assert_creates(&p, "");
    assert_deletes(&p, "");
    ctl_ds_plan_free(&p);

    /* Available: the old pod on that node goes. */
    json_array_set_new(
        r.pods, 3,
        make_pod(DS_NAME "-new0", "lab-node-0", "new", "2", "2025-12-31T00:05:00Z", true));
    sync_ok(r.ds, r.nodes, r.pods, r.revisions, false, &p);
    assert_deletes(&p, DS_NAME "-old0");
    assert_creates(&p, "");
    ctl_ds_plan_free(&p);

    /* Gone: the next node gets its surge pod. */
    json_array_remove(r.pods, 0);
    sync_ok(r.ds, r.nodes, r.pods, r.revisions, false, &p);
    assert_creates(&p, "lab-node-1");
    assert_deletes(&p, "");
    ctl_ds_plan_free(&p);
    rollout_free(&r);
}

/* With surge, an unavailable old pod gets its replacement at once, beyond
 * maxSurge. */
static void test_max_surge_unavailable_old_pod(void **state)
{
    (void)state;
    rollout r = rollout_new(3, "0", "1");
    json_array_set_new(
        r.pods, 2,
        make_pod(DS_NAME "-old2", "lab-node-2", "old", "1", "2025-12-31T00:00:10Z", false));
    ctl_ds_plan p;
    sync_ok(r.ds, r.nodes, r.pods, r.revisions, false, &p);
    assert_creates(&p, "lab-node-2,lab-node-0");
    ctl_ds_plan_free(&p);
    rollout_free(&r);
}

static void test_on_delete_does_nothing(void **state)
{
    (void)state;
    rollout r = rollout_new(3, "1", "0");
    json_object_set_new(json_object_get(r.ds, "spec"), "updateStrategy",
                        sq_load("{'type':'OnDelete'}"));
    ctl_ds_plan p;
    sync_ok(r.ds, r.nodes, r.pods, r.revisions, false, &p);
    assert_no_writes(&p);
    assert_status(&p, "{'currentNumberScheduled':3,'numberMisscheduled':0,"
                      "'desiredNumberScheduled':3,'numberReady':3,'observedGeneration':2,"
                      "'numberAvailable':3}");
    ctl_ds_plan_free(&p);
    rollout_free(&r);
}

/* ---- manage() ---- */

static void test_tainted_node_gets_no_pod(void **state)
{
    (void)state;
    json_t *ds = lab_ds(), *nodes = nodes_n(3), *pods = json_array(), *revs = json_array();
    json_t *tainted = json_array_get(nodes, 1);
    set_path(tainted, "spec", "taints",
             sq_load("[{'key':'dedicated','value':'gpu','effect':'NoSchedule'}]"));
    bool cont = false;
    assert_false(ctl_ds_should_run(ds, tainted, &cont));
    assert_true(cont);
    assert_true(ctl_ds_should_run(ds, json_array_get(nodes, 0), &cont));

    ctl_ds_plan p;
    sync_ok(ds, nodes, pods, revs, false, &p);
    assert_creates(&p, "lab-node-0,lab-node-2");
    assert_int_equal(json_integer_value(json_object_get(p.status, "desiredNumberScheduled")), 2);
    ctl_ds_plan_free(&p);
    json_decref(ds);
    json_decref(nodes);
    json_decref(pods);
    json_decref(revs);
}

static void test_taint_rules(void **state)
{
    (void)state;
    json_t *ds = lab_ds(), *node = lab_node("lab-node-0");
    bool cont = true;
    set_path(node, "spec", "taints", sq_load("[{'key':'k','effect':'NoExecute'}]"));
    assert_false(ctl_ds_should_run(ds, node, &cont));
    assert_false(cont);
    /* A cordoned node: the DaemonSet tolerates unschedulable:NoSchedule. */
    set_path(node, "spec", "taints",
             sq_load("[{'key':'node.kubernetes.io/unschedulable','effect':'NoSchedule'}]"));
    assert_true(ctl_ds_should_run(ds, node, &cont));
    /* A template toleration. */
    set_path(node, "spec", "taints",
             sq_load("[{'key':'kwok.x-k8s.io/node','value':'fake','effect':'NoSchedule'}]"));
    assert_false(ctl_ds_should_run(ds, node, NULL));
    json_t *tspec =
        json_object_get(json_object_get(json_object_get(ds, "spec"), "template"), "spec");
    json_object_set_new(tspec, "tolerations",
                        sq_load("[{'key':'kwok.x-k8s.io/node','operator':'Equal','value':'fake',"
                                "'effect':'NoSchedule'}]"));
    assert_true(ctl_ds_should_run(ds, node, NULL));
    /* PreferNoSchedule is not a predicate. */
    set_path(node, "spec", "taints", sq_load("[{'key':'x','effect':'PreferNoSchedule'}]"));
    assert_true(ctl_ds_should_run(ds, node, NULL));
    json_decref(ds);
    json_decref(node);
}

/* The template's matching toleration is replaced in place; others stay
 * first, the defaults follow in the 6.2 order. */
static void test_template_tolerations_merge(void **state)
{
    (void)state;
    json_t *ds = lab_ds(), *nodes = nodes_n(1), *pods = json_array(), *revs = json_array();
    json_t *tspec =
        json_object_get(json_object_get(json_object_get(ds, "spec"), "template"), "spec");
    json_object_set_new(tspec, "hostNetwork", json_true());
    json_object_set_new(tspec, "tolerations",
                        sq_load("[{'key':'a','operator':'Exists'},"
                                "{'key':'node.kubernetes.io/unreachable','operator':'Exists',"
                                "'effect':'NoExecute','tolerationSeconds':300}]"));
    ctl_ds_plan p;
    sync_ok(ds, nodes, pods, revs, false, &p);
    json_t *want = sq_load(
        "[{'key':'a','operator':'Exists'},"
        "{'key':'node.kubernetes.io/unreachable','operator':'Exists','effect':'NoExecute'},"
        "{'key':'node.kubernetes.io/not-ready','operator':'Exists','effect':'NoExecute'},"
        "{'key':'node.kubernetes.io/disk-pressure','operator':'Exists','effect':'NoSchedule'},"
        "{'key':'node.kubernetes.io/memory-pressure','operator':'Exists','effect':'NoSchedule'},"
        "{'key':'node.kubernetes.io/pid-pressure','operator':'Exists','effect':'NoSchedule'},"
        "{'key':'node.kubernetes.io/unschedulable','operator':'Exists','effect':'NoSchedule'},"
        "{'key':'node.kubernetes.io/network-unavailable','operator':'Exists',"
        "'effect':'NoSchedule'}]");
    assert_json_equal(
        json_object_get(json_object_get(json_array_get(p.create_pods, 0), "spec"), "tolerations"),
        want);
    json_decref(want);
    ctl_ds_plan_free(&p);
    json_decref(ds);
    json_decref(nodes);
    json_decref(pods);
    json_decref(revs);
}

/* nodeSelector: only the labelled node runs a pod; a pod left on another
 * node is misscheduled and deleted. */
static void test_node_selector(void **state)
{
    (void)state;
    json_t *ds = lab_ds(), *nodes = nodes_n(3), *pods = json_array(), *revs = json_array();
    json_t *tspec =
        json_object_get(json_object_get(json_object_get(ds, "spec"), "template"), "spec");
    json_object_set_new(tspec, "nodeSelector", sq_load("{'nvidia.com/gpu.present':'true'}"));
    set_path(json_array_get(nodes, 1), "metadata", "labels",
             sq_load("{'nvidia.com/gpu.present':'true'}"));
    json_array_append_new(
        pods, make_pod(DS_NAME "-stray", "lab-node-0", "x", "1", "2025-12-31T00:00:10Z", true));
    ctl_ds_plan p;
    sync_ok(ds, nodes, pods, revs, false, &p);
    assert_creates(&p, "lab-node-1");
    assert_deletes(&p, DS_NAME "-stray");
    assert_status(&p, "{'currentNumberScheduled':0,'numberMisscheduled':1,"
                      "'desiredNumberScheduled':1,'numberReady':0,'observedGeneration':1,"
                      "'numberUnavailable':1}");
    ctl_ds_plan_free(&p);
    json_decref(ds);
    json_decref(nodes);
    json_decref(pods);
    json_decref(revs);
}

/* Required node affinity from the template: expressions on labels, Gt. */
static void test_required_node_affinity(void **state)
{
    (void)state;
    json_t *ds = lab_ds(), *node = lab_node("lab-node-0");
    json_t *tspec =
        json_object_get(json_object_get(json_object_get(ds, "spec"), "template"), "spec");
    json_object_set_new(tspec, "affinity",
                        sq_load("{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
                                "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'gpus',"
                                "'operator':'Gt','values':['2']}]},{'matchExpressions':[{'key':"
                                "'type','operator':'In','values':['real']}]}]}}}"));
    assert_false(ctl_ds_should_run(ds, node, NULL));
    set_path(node, "metadata", "labels", sq_load("{'gpus':'4'}"));
    assert_true(ctl_ds_should_run(ds, node, NULL));
    set_path(node, "metadata", "labels", sq_load("{'gpus':'2','type':'real'}"));
    assert_true(ctl_ds_should_run(ds, node, NULL));
    json_decref(ds);
    json_decref(node);
}

/* Several pods on one node: all but the oldest go (scheduled first). */
static void test_keeps_oldest_pod(void **state)
{
    (void)state;
    json_t *ds = lab_ds(), *nodes = nodes_n(1), *pods = json_array(), *revs = json_array();
    json_array_append_new(
        pods, make_pod(DS_NAME "-b", "lab-node-0", "x", "1", "2025-12-31T00:00:20Z", true));
    json_array_append_new(
        pods, make_pod(DS_NAME "-a", "lab-node-0", "x", "1", "2025-12-31T00:00:10Z", true));
    json_t *unbound = make_pod(DS_NAME "-c", "lab-node-0", "x", "1", "2025-12-31T00:00:01Z", false);
    json_object_del(json_object_get(unbound, "spec"), "nodeName");
    json_array_append_new(pods, unbound);
    ctl_ds_plan p;
    sync_ok(ds, nodes, pods, revs, false, &p);
    assert_deletes(&p, DS_NAME "-b," DS_NAME "-c");
    ctl_ds_plan_free(&p);
    json_decref(ds);
    json_decref(nodes);
    json_decref(pods);
    json_decref(revs);
}

static void test_failed_and_succeeded_pods_deleted(void **state)
{
    (void)state;
    json_t *ds = lab_ds(), *nodes = nodes_n(2), *pods = json_array(), *revs = json_array();
    json_t *failed = make_pod(DS_NAME "-f", "lab-node-0", "x", "1", "2025-12-31T00:00:10Z", false);
    set_path(failed, "status", "phase", json_string("Failed"));
    json_t *done = make_pod(DS_NAME "-s", "lab-node-1", "x", "1", "2025-12-31T00:00:10Z", false);
    set_path(done, "status", "phase", json_string("Succeeded"));
    json_array_append_new(pods, failed);
    json_array_append_new(pods, done);
    ctl_ds_plan p;
    sync_ok(ds, nodes, pods, revs, false, &p);
    assert_deletes(&p, DS_NAME "-f," DS_NAME "-s");
    assert_creates(&p, "");
    json_t *events = sq_load(
        "[{'type':'Warning','reason':'FailedDaemonPod','message':'Found failed daemon pod "
        "gpu-operator/" DS_NAME "-f on node lab-node-0, will try to kill it'},"
        "{'type':'Normal','reason':'SucceededDaemonPod','message':'Found succeeded daemon pod "
        "gpu-operator/" DS_NAME "-s on node lab-node-1, will try to delete it'},"
        "{'type':'Normal','reason':'SuccessfulDelete','message':'Deleted pod: " DS_NAME "-f'},"
        "{'type':'Normal','reason':'SuccessfulDelete','message':'Deleted pod: " DS_NAME "-s'}]");
    assert_json_equal(p.events, events);
    json_decref(events);
    ctl_ds_plan_free(&p);

    /* Once they are terminating the nodes count as empty and get new pods. */
    set_path(failed, "metadata", "deletionTimestamp", json_string("2025-12-31T00:01:00Z"));
    set_path(done, "metadata", "deletionTimestamp", json_string("2025-12-31T00:01:00Z"));
    sync_ok(ds, nodes, pods, revs, false, &p);
    assert_creates(&p, "lab-node-0,lab-node-1");
    assert_deletes(&p, "");
    ctl_ds_plan_free(&p);
    json_decref(ds);
    json_decref(nodes);
    json_decref(pods);
    json_decref(revs);
}

static void test_unscheduled_pod_of_vanished_node(void **state)
{
    (void)state;
    json_t *ds = lab_ds(), *nodes = nodes_n(1), *pods = json_array(), *revs = json_array();
    json_array_append_new(
        pods, make_pod(DS_NAME "-a", "lab-node-0", "x", "1", "2025-12-31T00:00:10Z", true));
    json_t *orphaned =
        make_pod(DS_NAME "-gone", "lab-node-9", "x", "1", "2025-12-31T00:00:10Z", false);
    json_object_del(json_object_get(orphaned, "spec"), "nodeName");
    json_array_append_new(pods, orphaned);
    /* A bound pod of a vanished node is the pod GC's, not ours. */
    json_array_append_new(
        pods, make_pod(DS_NAME "-bound", "lab-node-8", "x", "1", "2025-12-31T00:00:10Z", true));
    ctl_ds_plan p;
    sync_ok(ds, nodes, pods, revs, false, &p);
    assert_deletes(&p, DS_NAME "-gone");
    ctl_ds_plan_free(&p);
    json_decref(ds);
    json_decref(nodes);
    json_decref(pods);
    json_decref(revs);
}

/* An orphan that matches the selector is adopted with the controller's
 * strategic merge patch and counts at once; a pod of another owner never. */
static void test_adoption(void **state)
{
    (void)state;
    json_t *ds = lab_ds(), *nodes = nodes_n(2), *pods = json_array(), *revs = json_array();
    json_t *orphan = make_pod(DS_NAME "-o", "lab-node-0", "x", "1", "2025-12-31T00:00:10Z", true);
    json_object_del(json_object_get(orphan, "metadata"), "ownerReferences");
    json_t *foreign = make_pod(DS_NAME "-f", "lab-node-1", "x", "1", "2025-12-31T00:00:10Z", true);
    json_object_set_new(
        json_array_get(json_object_get(json_object_get(foreign, "metadata"), "ownerReferences"), 0),
        "uid", json_string("someone-else"));
    json_array_append_new(pods, orphan);
    json_array_append_new(pods, foreign);
    ctl_ds_plan p;
    sync_ok(ds, nodes, pods, revs, false, &p);
    json_t *want = sq_load(
        "[{'name':'" DS_NAME "-o','patchType':'application/strategic-merge-patch+json',"
        "'patch':{'metadata':{'ownerReferences':[{'apiVersion':'apps/v1','kind':'DaemonSet',"
        "'name':'" DS_NAME "','uid':'0b5d1c2e-ds','controller':true,'blockOwnerDeletion':true}],"
        "'uid':'uid-" DS_NAME "-o'}}}]");
    assert_json_equal(p.patch_pods, want);
    json_decref(want);
    assert_creates(&p, "lab-node-1");
    ctl_ds_plan_free(&p);

    /* Ours, relabelled out of the selector: released, and replaced. */
    json_t *relabelled =
        make_pod(DS_NAME "-r", "lab-node-1", "x", "1", "2025-12-31T00:00:10Z", true);
    json_object_set_new(json_object_get(relabelled, "metadata"), "labels",
                        sq_load("{'app':'debugging'}"));
    json_array_set_new(pods, 1, relabelled);
    sync_ok(ds, nodes, pods, revs, false, &p);
    want = sq_load(
        "[{'name':'" DS_NAME "-o','patchType':'application/strategic-merge-patch+json',"
        "'patch':{'metadata':{'ownerReferences':[{'apiVersion':'apps/v1','kind':'DaemonSet',"
        "'name':'" DS_NAME "','uid':'0b5d1c2e-ds','controller':true,'blockOwnerDeletion':true}],"
        "'uid':'uid-" DS_NAME "-o'}}},"
        "{'name':'" DS_NAME "-r','patchType':'application/strategic-merge-patch+json',"
        "'patch':{'metadata':{'ownerReferences':[{'$patch':'delete','uid':'0b5d1c2e-ds'}],"
        "'uid':'uid-" DS_NAME "-r'}}}]");
    assert_json_equal(p.patch_pods, want);
    json_decref(want);
    assert_creates(&p, "lab-node-1");
    ctl_ds_plan_free(&p);
    json_decref(ds);
    json_decref(nodes);
    json_decref(pods);
    json_decref(revs);
}

static void test_create_burst_limit(void **state)
{
    (void)state;
    json_t *ds = lab_ds(), *nodes = nodes_n(300), *pods = json_array(), *revs = json_array();
    ctl_ds_plan p;
    sync_ok(ds, nodes, pods, revs, false, &p);
    assert_int_equal(json_array_size(p.create_pods), 250);
    assert_int_equal(json_array_size(p.events), 250);
    assert_int_equal(json_integer_value(json_object_get(p.status, "desiredNumberScheduled")), 300);
    ctl_ds_plan_free(&p);
    json_decref(ds);
    json_decref(nodes);
    json_decref(pods);
    json_decref(revs);
}

/* While earlier creates/deletes are unseen: status only, and
 * observedGeneration stays (6.2 Expectations). */
static void test_expectations_pending(void **state)
{
    (void)state;
    rollout r = rollout_new(3, "1", "0");
    json_array_remove(r.pods, 0);
    ctl_ds_plan p;
    sync_ok(r.ds, r.nodes, r.pods, r.revisions, true, &p);
    assert_no_writes(&p);
    assert_status(&p, "{'currentNumberScheduled':2,'numberMisscheduled':0,"
                      "'desiredNumberScheduled':3,'numberReady':2,'observedGeneration':1,"
                      "'numberAvailable':2,'numberUnavailable':1}");
    ctl_ds_plan_free(&p);
    rollout_free(&r);
}

static void test_min_ready_seconds(void **state)
{
    (void)state;
    rollout r = rollout_new(2, "1", "0");
    json_object_set_new(json_object_get(r.ds, "spec"), "minReadySeconds", json_integer(30));
    /* Ready 20 s before NOW, so not available for 10 s more. */
    json_array_set_new(
        r.pods, 0,
        make_pod(DS_NAME "-old0", "lab-node-0", "old", "1", "2025-12-31T23:59:40Z", true));
    ctl_ds_plan p;
    sync_ok(r.ds, r.nodes, r.pods, r.revisions, false, &p);
    /* old0 is unavailable, so it is replaced and old1 waits. */
    assert_deletes(&p, DS_NAME "-old0");
    assert_int_equal(json_integer_value(json_object_get(p.status, "numberReady")), 2);
    assert_int_equal(json_integer_value(json_object_get(p.status, "numberAvailable")), 1);
    ctl_ds_plan_free(&p);
    rollout_free(&r);
}

/* ---- history ---- */

/* Rolling back to the first template: its revision becomes number 3 and its
 * hash current again (6.6 step 5). */
static void test_rollback_renumbers(void **state)
{
    (void)state;
    json_t *ds = lab_ds(), *nodes = nodes_n(1), *pods = json_array(), *revs = json_array();
    json_array_append_new(revs, revision_for(ds, "h1", 1));
    change_template(ds, SPEC_NEW, 2);
    json_array_append_new(revs, revision_for(ds, "h2", 2));
    change_template(ds, SPEC_OLD, 3);
    ctl_ds_plan p;
    sync_ok(ds, nodes, pods, revs, false, &p);
    json_t *want = sq_load("[{'name':'" DS_NAME "-h1','revision':3}]");
    assert_json_equal(p.update_revisions, want);
    json_decref(want);
    assert_int_equal(json_array_size(p.create_revisions), 0);
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(json_array_get(p.create_pods, 0), "metadata"),
                            "labels"),
            "controller-revision-hash")),
        "h1");
    ctl_ds_plan_free(&p);
    json_decref(ds);
    json_decref(nodes);
    json_decref(pods);
    json_decref(revs);
}

/* 12 old revisions and the current one: the two oldest go, but never one
 * whose hash a pod still carries. */
static void test_history_cleanup(void **state)
{
    (void)state;
    json_t *ds = lab_ds(), *nodes = nodes_n(1), *pods = json_array(), *revs = json_array();
    char hash[16];
    for (int i = 1; i <= 12; i++) {
        char image[32];
        snprintf(image, sizeof image, "v0.%d", i);
        json_t *tspec =
            json_object_get(json_object_get(json_object_get(ds, "spec"), "template"), "spec");
        json_object_set_new(json_array_get(json_object_get(tspec, "containers"), 0), "image",
                            json_string(image));
        snprintf(hash, sizeof hash, "r%d", i);
        json_array_append_new(revs, revision_for(ds, hash, i));
    }
    change_template(ds, SPEC_NEW, 13);
    json_array_append_new(revs, revision_for(ds, "r13", 13));
    json_array_append_new(
        pods, make_pod(DS_NAME "-a", "lab-node-0", "r13", "13", "2025-12-31T00:00:10Z", true));
    ctl_ds_plan p;
    sync_ok(ds, nodes, pods, revs, false, &p);
    json_t *want = sq_load("['" DS_NAME "-r1','" DS_NAME "-r2']");
    assert_json_equal(p.delete_revisions, want);
    json_decref(want);
    ctl_ds_plan_free(&p);

    json_array_append_new(
        pods, make_pod(DS_NAME "-b", "lab-node-9", "r1", "1", "2025-12-31T00:00:10Z", true));
    sync_ok(ds, nodes, pods, revs, false, &p);
    want = sq_load("['" DS_NAME "-r2','" DS_NAME "-r3']");
    assert_json_equal(p.delete_revisions, want);
    json_decref(want);
    ctl_ds_plan_free(&p);
    json_decref(ds);
    json_decref(nodes);
    json_decref(pods);
    json_decref(revs);
}

/* A revision already holds the name with other content: collisionCount
 * goes up and nothing else happens; the next sync hashes with the count
 * (6.3). */
static void test_hash_collision(void **state)
{
    (void)state;
    json_t *ds = lab_ds(), *nodes = nodes_n(1), *pods = json_array(), *revs = json_array();
    const json_t *tmpl = json_object_get(json_object_get(ds, "spec"), "template");
    char h[16], h1[16];
    ctl_ds_hash(tmpl, -1, h);
    ctl_ds_hash(tmpl, 1, h1);
    json_t *other = revision_for(ds, h, 1);
    json_object_set_new(other, "data", sq_load("{'spec':{'template':{'$patch':'replace'}}}"));
    json_array_append_new(revs, other);
    ctl_ds_plan p;
    gp_error err = {0};
    assert_int_equal(ctl_ds_sync(ds, nodes, pods, revs, NOW, false, &p, &err), 1);
    assert_no_writes(&p);
    assert_int_equal(json_array_size(p.create_pods), 0);
    assert_int_equal(json_integer_value(json_object_get(p.status, "collisionCount")), 1);
    apply_status(ds, &p);
    ctl_ds_plan_free(&p);

    sync_ok(ds, nodes, pods, revs, false, &p);
    assert_int_equal(json_array_size(p.create_revisions), 1);
    assert_string_equal(revision_hash(json_array_get(p.create_revisions, 0)), h1);
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(p.create_revisions, 0), "revision")), 2);
    /* collisionCount is kept through the status the sync writes. */
    assert_int_equal(json_integer_value(json_object_get(p.status, "collisionCount")), 1);
    ctl_ds_plan_free(&p);
    json_decref(ds);
    json_decref(nodes);
    json_decref(pods);
    json_decref(revs);
}

static void test_invalid_selector(void **state)
{
    (void)state;
    json_t *ds = lab_ds(), *nodes = nodes_n(1), *pods = json_array(), *revs = json_array();
    json_object_set_new(json_object_get(ds, "spec"), "selector",
                        sq_load("{'matchExpressions':[{'key':'app','operator':'Bogus'}]}"));
    ctl_ds_plan p;
    gp_error err = {0};
    assert_int_equal(ctl_ds_sync(ds, nodes, pods, revs, NOW, false, &p, &err), 1);
    assert_no_writes(&p);
    assert_null(p.status);
    ctl_ds_plan_free(&p);
    json_decref(ds);
    json_decref(nodes);
    json_decref(pods);
    json_decref(revs);
}

/* ---- hash and helpers ---- */

/* FNV-32a of the canonical text, digits through the 6.3 alphabet: values
 * computed independently (Python) from the FNV definition. */
static void test_hash_known_answers(void **state)
{
    (void)state;
    char out[16];
    json_t *empty = json_object();
    ctl_ds_hash(empty, -1, out);
    assert_string_equal(out, "5859f96865"); /* FNV("{}") = 1415952421 */
    ctl_ds_hash(empty, 0, out);
    assert_string_equal(out, "7b58f74dd9"); /* plus 8 bytes of count 0 */
    ctl_ds_hash(empty, 1, out);
    assert_string_equal(out, "648d6bd896");
    json_decref(empty);
    /* Key order does not matter: the text is canonical. */
    json_t *a = sq_load("{'b':[true,null],'a':1}");
    ctl_ds_hash(a, -1, out);
    assert_string_equal(out, "64694bbfd"); /* FNV("{\"a\":1,\"b\":[true,null]}") */
    json_decref(a);
}

static void test_hash_alphabet_and_stability(void **state)
{
    (void)state;
    json_t *ds = lab_ds();
    const json_t *tmpl = json_object_get(json_object_get(ds, "spec"), "template");
    char h1[16], h2[16], h3[16];
    ctl_ds_hash(tmpl, -1, h1);
    ctl_ds_hash(tmpl, -1, h2);
    assert_string_equal(h1, h2);
    size_t len = strlen(h1);
    assert_true(len >= 1 && len <= 10);
    assert_int_equal(strspn(h1, "456789bcdf"), len);
    change_template(ds, SPEC_NEW, 2);
    ctl_ds_hash(json_object_get(json_object_get(ds, "spec"), "template"), -1, h3);
    assert_string_not_equal(h1, h3);
    json_decref(ds);
}

static void test_pod_node(void **state)
{
    (void)state;
    json_t *pod = make_pod("p", "lab-node-1", "x", "1", "2025-12-31T00:00:10Z", true);
    assert_string_equal(kube_ds_target_node(pod), "lab-node-1");
    json_object_set_new(json_object_get(pod, "spec"), "nodeName", json_string(""));
    assert_string_equal(kube_ds_target_node(pod), "lab-node-1");
    json_object_del(json_object_get(pod, "spec"), "affinity");
    assert_null(kube_ds_target_node(pod));
    json_decref(pod);
}

static void test_selecting_all(void **state)
{
    (void)state;
    json_t *ds = lab_ds(), *nodes = nodes_n(1), *pods = json_array(), *revs = json_array();
    json_object_set_new(json_object_get(ds, "spec"), "selector", json_object());
    ctl_ds_plan p;
    sync_ok(ds, nodes, pods, revs, false, &p);
    assert_no_writes(&p);
    assert_null(p.status);
    json_t *want = sq_load("[{'type':'Warning','reason':'SelectingAll','message':'This daemon set "
                           "is selecting all pods. A non-empty selector is required.'}]");
    assert_json_equal(p.events, want);
    json_decref(want);
    ctl_ds_plan_free(&p);
    json_decref(ds);
    json_decref(nodes);
    json_decref(pods);
    json_decref(revs);
}

/* syncNodes' slow start: batches of 1, 2, 4, ... up to what is left. */
static void test_slow_start_batches(void **state)
{
    (void)state;
    const size_t want[] = {1, 2, 4, 8, 16, 32, 64, 123};
    size_t sent = 0, last = 0, n = 0;
    while ((last = ctl_ds_next_batch(sent, last, 250)) > 0) {
        assert_true(n < sizeof want / sizeof *want);
        assert_int_equal(last, want[n++]);
        sent += last;
    }
    assert_int_equal(n, 8);
    assert_int_equal(sent, 250);
    assert_int_equal(ctl_ds_next_batch(0, 0, 0), 0);
    assert_int_equal(ctl_ds_next_batch(0, 0, 1), 1);
    assert_int_equal(ctl_ds_next_batch(3, 2, 5), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lab_walkthrough),
        cmocka_unit_test(test_max_unavailable_25_percent_of_3),
        cmocka_unit_test(test_max_unavailable_50_percent_of_5),
        cmocka_unit_test(test_both_zero_means_one),
        cmocka_unit_test(test_invalid_max_unavailable_is_an_error),
        cmocka_unit_test(test_unavailable_old_pod_replaced_regardless),
        cmocka_unit_test(test_updated_by_template_generation),
        cmocka_unit_test(test_max_surge),
        cmocka_unit_test(test_max_surge_unavailable_old_pod),
        cmocka_unit_test(test_on_delete_does_nothing),
        cmocka_unit_test(test_tainted_node_gets_no_pod),
        cmocka_unit_test(test_taint_rules),
        cmocka_unit_test(test_template_tolerations_merge),
        cmocka_unit_test(test_node_selector),
        cmocka_unit_test(test_required_node_affinity),
        cmocka_unit_test(test_keeps_oldest_pod),
        cmocka_unit_test(test_failed_and_succeeded_pods_deleted),
        cmocka_unit_test(test_unscheduled_pod_of_vanished_node),
        cmocka_unit_test(test_adoption),
        cmocka_unit_test(test_create_burst_limit),
        cmocka_unit_test(test_expectations_pending),
        cmocka_unit_test(test_min_ready_seconds),
        cmocka_unit_test(test_rollback_renumbers),
        cmocka_unit_test(test_history_cleanup),
        cmocka_unit_test(test_hash_collision),
        cmocka_unit_test(test_invalid_selector),
        cmocka_unit_test(test_hash_known_answers),
        cmocka_unit_test(test_hash_alphabet_and_stability),
        cmocka_unit_test(test_pod_node),
        cmocka_unit_test(test_selecting_all),
        cmocka_unit_test(test_slow_start_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
