/* an_rollout: the stalled toolkit DaemonSet of lab step 8, from a snapshot
 * the real kubectl took of the embedded cluster (tests/data/analyze/
 * README.md), and generated fleets for the budget arithmetic of
 * k8s-semantics.md 6.4. Expected values come from lab.md step 8 and from
 * the arithmetic written next to each assertion. */
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

#include "analyze/rollout.h"

#define DS_REF "gpu-operator/nvidia-container-toolkit"

static json_t *load_snapshot(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/analyze/%s", TEST_DATA_DIR, name);
    json_error_t jerr;
    json_t *list = json_load_file(path, 0, &jerr);
    if (!list) print_error("%s: %s\n", path, jerr.text);
    assert_non_null(list);
    return list;
}

static const json_t *find(const json_t *items, const char *kind, const char *ns, const char *name)
{
    size_t i;
    const json_t *it;
    json_array_foreach(items, i, it)
    {
        const json_t *meta = json_object_get(it, "metadata");
        const char *n = json_string_value(json_object_get(meta, "namespace"));
        if (strcmp(json_string_value(json_object_get(it, "kind")), kind) == 0 &&
            strcmp(n ? n : "", ns) == 0 &&
            strcmp(json_string_value(json_object_get(meta, "name")), name) == 0)
            return it;
    }
    fail_msg("%s %s/%s not in the snapshot", kind, ns, name);
    return NULL;
}

static void feed(an_rollout *b, const json_t *it)
{
    const char *kind = json_string_value(json_object_get(it, "kind"));
    if (strcmp(kind, "Node") == 0) an_rollout_add_node(b, it);
    if (strcmp(kind, "Pod") == 0) an_rollout_add_pod(b, it);
    if (strcmp(kind, "ControllerRevision") == 0) an_rollout_add_revision(b, it);
    if (strcmp(kind, "Event") == 0) an_rollout_add_event(b, it);
}

/* Feeds every item, forwards or backwards (adding order must not matter). */
static json_t *analyze(const json_t *items, const json_t *ds, int backwards)
{
    gp_error err = {0};
    an_rollout *b = an_rollout_new(ds, &err);
    assert_non_null(b);
    size_t n = json_array_size(items);
    for (size_t i = 0; i < n; i++)
        feed(b, json_array_get(items, backwards ? n - 1 - i : i));
    json_t *report = an_rollout_finish(b, &err);
    if (!report) print_error("finish: %s\n", err.text);
    assert_non_null(report);
    an_rollout_free(b);
    return report;
}

static json_t *lab_report(int backwards)
{
    json_t *list = load_snapshot("lab-step8.json");
    const json_t *items = json_object_get(list, "items");
    json_t *r = analyze(items, find(items, "DaemonSet", "gpu-operator", "nvidia-container-toolkit"),
                        backwards);
    json_decref(list);
    return r;
}

static void assert_render(const json_t *report, an_format fmt, const char *want)
{
    char *got = an_rollout_render(report, fmt);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static bool has_line(const json_t *lines, const char *want)
{
    size_t i;
    const json_t *l;
    json_array_foreach(lines, i, l)
    {
        if (strcmp(json_string_value(l), want) == 0) return true;
    }
    return false;
}

/* Image first, then the request (lab step 8's wrong order): the pods on the
 * old template already run the new image. The template-based count and the
 * image-based one part ways, and the lab's OLD_IMAGE_PODS is the second. */
static void test_old_template_pods_with_the_new_image(void **state)
{
    (void)state;
    json_t *list = load_snapshot("lab-step8.json");
    json_t *items = json_object_get(list, "items");
    const json_t *ds = find(items, "DaemonSet", "gpu-operator", "nvidia-container-toolkit");
    const char *image = json_string_value(json_object_get(
        json_array_get(
            json_object_get(
                json_object_get(json_object_get(json_object_get(ds, "spec"), "template"), "spec"),
                "containers"),
            0),
        "image"));
    assert_non_null(image);
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        if (strcmp(json_string_value(json_object_get(it, "kind")), "Pod") != 0) continue;
        json_t *c = json_array_get(json_object_get(json_object_get(it, "spec"), "containers"), 0);
        json_object_set_new(c, "image", json_string(image));
    }
    json_t *r = analyze(items, ds, 0);
    assert_int_equal(json_integer_value(json_object_get(r, "old_pods")), 2);
    assert_int_equal(json_integer_value(json_object_get(r, "old_image_pods")), 0);
    char *lab = an_rollout_render(r, AN_LAB);
    assert_non_null(strstr(lab, "\nOLD_IMAGE_PODS=0\n"));
    free(lab);
    json_decref(r);
    json_decref(list);
}

/* lab.md step 8: expected 3, 1, 2, 2, 1 and BLOCKER=insufficient-memory. */
static void test_lab_step8_lines(void **state)
{
    (void)state;
    json_t *r = lab_report(0);
    assert_render(r, AN_LAB,
                  "DESIRED=3\nUPDATED=1\nREADY=2\nOLD_IMAGE_PODS=2\nMAX_UNAVAILABLE=1\n"
                  "BLOCKER=insufficient-memory\n");
    json_decref(r);
}

static void test_lab_step8_order_does_not_matter(void **state)
{
    (void)state;
    json_t *fwd = lab_report(0), *back = lab_report(1);
    assert_json_equal(back, fwd);
    json_decref(fwd);
    json_decref(back);
}

/* The one new pod is Pending on its node; 64Gi against the 32Gi allocatable
 * of a lab node (lab.md Workspace) whose old DaemonSet pod is gone, so all
 * 32Gi are free (cuda-probe requests no memory). One node spends the whole
 * budget of 1 (6.6 step 3). */
static void test_lab_step8_fit_and_budget(void **state)
{
    (void)state;
    json_t *r = lab_report(0);
    const json_t *stuck = json_array_get(json_object_get(r, "stuck"), 0);
    assert_int_equal(json_array_size(json_object_get(r, "stuck")), 1);
    const char *node = json_string_value(json_object_get(stuck, "node"));
    assert_true(json_is_true(json_object_get(stuck, "updated")));
    assert_string_equal(json_string_value(json_object_get(stuck, "status")), "Pending");
    assert_string_equal(json_string_value(json_object_get(stuck, "detail")),
                        "requests 64Gi, node has 32Gi free");
    const json_t *budget = json_object_get(r, "budget");
    assert_int_equal(json_integer_value(json_object_get(budget, "spent")), 1);
    const json_t *spent = json_array_get(json_object_get(budget, "spent_by"), 0);
    assert_string_equal(json_string_value(json_object_get(spent, "node")), node);
    assert_string_equal(json_string_value(json_object_get(spent, "state")), "new-pod-unavailable");
    size_t i, unfit = 0;
    const json_t *row;
    json_array_foreach(json_object_get(r, "fit"), i, row)
    {
        unfit += !json_is_true(json_object_get(row, "fits"));
    }
    /* 64Gi fits on no 32Gi node: the new pod would fail wherever it goes. */
    assert_int_equal(json_array_size(json_object_get(r, "fit")), 3);
    assert_int_equal(unfit, 3);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(r, "requests"), "memory")), "64Gi");
    const char *verdict = json_string_value(json_object_get(json_object_get(r, "verdict"), "text"));
    assert_non_null(strstr(verdict, "rollout stalled: 1 of 3 updated"));
    assert_non_null(strstr(verdict, "Insufficient memory (requests 64Gi, node has 32Gi free)"));
    assert_non_null(strstr(verdict, node));
    json_decref(r);
}

static void test_lab_step8_evidence(void **state)
{
    (void)state;
    json_t *r = lab_report(0);
    const json_t *ev = json_object_get(r, "evidence");
    assert_true(has_line(ev, "daemonset " DS_REF " .status.desiredNumberScheduled = 3"));
    assert_true(has_line(ev, "daemonset " DS_REF " .status.updatedNumberScheduled = 1"));
    assert_true(has_line(ev, "daemonset " DS_REF " .status.numberReady = 2"));
    assert_true(
        has_line(ev, "daemonset " DS_REF " .spec.updateStrategy.rollingUpdate.maxUnavailable = 1"));
    assert_true(has_line(ev,
                         "daemonset " DS_REF
                         " .metadata.annotations.deprecated.daemonset.template.generation = 2"));
    /* The newest revision is number 2 (6.6 step 2). */
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(r, "current_revision"), "revision")), 2);
    char *text = an_rollout_render(r, AN_TEXT);
    assert_non_null(strstr(text, "rollout stalled"));
    assert_non_null(strstr(text, "Evidence:"));
    assert_non_null(strstr(text, "daemonset " DS_REF " .status.desiredNumberScheduled = 3\n"));
    free(text);
    json_decref(r);
}

/* ---- generated fleets ---- */

typedef struct fleet {
    json_t *items; /* nodes, pods, revisions */
    json_t *ds;
} fleet;

/* n nodes named n000...; each has one DS pod. The first `unavailable` pods
 * are new and Pending with `message` (or, with message NULL, old and not
 * Ready on a NotReady node); the first `updated` pods carry the new hash. */
static fleet make_fleet(size_t n, const char *max_unavailable, size_t updated, size_t unavailable,
                        const char *message)
{
    fleet f = {json_array(), NULL};
    json_error_t jerr;
    json_t *mu = json_loads(max_unavailable, JSON_DECODE_ANY, &jerr);
    assert_non_null(mu);
    f.ds = json_pack(
        "{s:s, s:{s:s, s:s, s:s, s:I, s:{s:s}}, s:{s:{s:s, s:{s:o}}, s:{s:{s:[{s:s, s:s, "
        "s:{s:{s:s}}}]}}}, s:{s:I, s:I, s:I, s:I, s:I, s:I}}",
        "kind", "DaemonSet", "metadata", "name", "ds", "namespace", "ns", "uid", "ds-uid",
        "generation", (json_int_t)2, "annotations", "deprecated.daemonset.template.generation", "2",
        "spec", "updateStrategy", "type", "RollingUpdate", "rollingUpdate", "maxUnavailable", mu,
        "template", "spec", "containers", "name", "c", "image", "new", "resources", "requests",
        "memory", "1Gi", "status", "desiredNumberScheduled", (json_int_t)n,
        "currentNumberScheduled", (json_int_t)n, "updatedNumberScheduled", (json_int_t)updated,
        "numberReady", (json_int_t)(n - unavailable), "numberAvailable",
        (json_int_t)(n - unavailable), "observedGeneration", (json_int_t)2);
    assert_non_null(f.ds);
    json_array_append_new(f.items,
                          sq_load("{'kind':'ControllerRevision','metadata':{'name':'ds-new',"
                                  "'namespace':'ns','labels':{'controller-revision-hash':"
                                  "'new'},'ownerReferences':[{'uid':'ds-uid','controller':"
                                  "true}]},'revision':2}"));
    json_array_append_new(f.items,
                          sq_load("{'kind':'ControllerRevision','metadata':{'name':'ds-old',"
                                  "'namespace':'ns','labels':{'controller-revision-hash':"
                                  "'old'},'ownerReferences':[{'uid':'ds-uid','controller':"
                                  "true}]},'revision':1}"));
    for (size_t i = 0; i < n; i++) {
        char name[32], pod[32];
        snprintf(name, sizeof name, "n%03zu", i);
        snprintf(pod, sizeof pod, "ds-%03zu", i);
        bool down = i < unavailable;
        bool node_down = down && !message;
        json_array_append_new(f.items,
                              json_pack("{s:s, s:{s:s}, s:{s:{s:s, s:s}, s:[{s:s, s:s}]}}", "kind",
                                        "Node", "metadata", "name", name, "status", "allocatable",
                                        "cpu", "16", "memory", "32Gi", "conditions", "type",
                                        "Ready", "status", node_down ? "Unknown" : "True"));
        bool is_new = i < updated;
        bool pending = down && message;
        json_t *p = json_pack(
            "{s:s, s:{s:s, s:s, s:{s:s}, s:[{s:s, s:b}]}, s:{s:s, s:[{s:s, s:s}]}, s:{s:s, "
            "s:[{s:s, "
            "s:s}]}}",
            "kind", "Pod", "metadata", "name", pod, "namespace", "ns", "labels",
            "controller-revision-hash", is_new ? "new" : "old", "ownerReferences", "uid", "ds-uid",
            "controller", 1, "spec", "nodeName", pending ? "" : name, "containers", "name", "c",
            "image", is_new ? "new" : "old", "status", "phase", pending ? "Pending" : "Running",
            "conditions", "type", "Ready", "status", down ? "False" : "True");
        if (pending) {
            json_t *aff =
                json_pack("{s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}}", "nodeAffinity",
                          "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
                          "matchFields", "key", "metadata.name", "operator", "In", "values", name);
            json_object_set_new(json_object_get(p, "spec"), "affinity", aff);
            json_array_append_new(json_object_get(json_object_get(p, "status"), "conditions"),
                                  json_pack("{s:s, s:s, s:s, s:s}", "type", "PodScheduled",
                                            "status", "False", "reason", "Unschedulable", "message",
                                            message));
        }
        json_array_append_new(f.items, p);
    }
    return f;
}

static json_t *fleet_report(fleet *f)
{
    json_t *r = analyze(f->items, f->ds, 0);
    json_decref(f->items);
    json_decref(f->ds);
    return r;
}

/* 288 desired, maxUnavailable 5%: k8s-semantics.md 6.4 scales it rounding
 * up, ceil(288 * 5 / 100) = ceil(14.4) = 15 (not 14). 20 new pods Pending
 * on Insufficient cpu: 20 nodes spend budget, more than the 15 allowed. */
static void test_288_nodes_five_percent(void **state)
{
    (void)state;
    fleet f = make_fleet(288, "\"5%\"", 20, 20,
                         "0/288 nodes are available: 1 Insufficient cpu, 287 node(s) didn't "
                         "satisfy plugin(s) [NodeAffinity]. preemption: 0/288 nodes are "
                         "available: 1 No preemption victims found for incoming pod, 287 "
                         "Preemption is not helpful for scheduling.");
    json_t *r = fleet_report(&f);
    const json_t *budget = json_object_get(r, "budget");
    assert_int_equal(json_integer_value(json_object_get(budget, "max_unavailable")), 15);
    assert_int_equal(json_integer_value(json_object_get(budget, "spent")), 20);
    assert_int_equal(json_array_size(json_object_get(budget, "spent_by")), 20);
    /* 288 - 20 updated = 268 old pods. */
    assert_int_equal(json_integer_value(json_object_get(r, "old_pods")), 268);
    assert_string_equal(json_string_value(json_object_get(r, "blocker")), "insufficient-cpu");
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "verdict"), "state")),
                        "stalled");
    char *lab = an_rollout_render(r, AN_LAB);
    assert_non_null(strstr(lab, "MAX_UNAVAILABLE=15\n"));
    free(lab);
    json_decref(r);
}

/* Three nodes went Unknown with their (old) pods not Ready; maxUnavailable
 * 1 is overspent three times, and each is a node-not-ready blocker. */
static void test_three_unknown_nodes(void **state)
{
    (void)state;
    fleet f = make_fleet(5, "1", 0, 3, NULL);
    json_t *r = fleet_report(&f);
    const json_t *budget = json_object_get(r, "budget");
    assert_int_equal(json_integer_value(json_object_get(budget, "max_unavailable")), 1);
    assert_int_equal(json_integer_value(json_object_get(budget, "spent")), 3);
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(budget, "spent_by"), i, s)
    {
        assert_string_equal(json_string_value(json_object_get(s, "state")), "old-pod-unavailable");
    }
    assert_int_equal(json_array_size(json_object_get(r, "stuck")), 3);
    json_array_foreach(json_object_get(r, "stuck"), i, s)
    {
        assert_string_equal(json_string_value(json_object_get(s, "blocker")), "node-not-ready");
    }
    json_decref(r);
}

static void test_complete_rollout(void **state)
{
    (void)state;
    fleet f = make_fleet(4, "\"25%\"", 4, 0, "");
    json_t *r = fleet_report(&f);
    assert_render(r, AN_LAB,
                  "DESIRED=4\nUPDATED=4\nREADY=4\nOLD_IMAGE_PODS=0\nMAX_UNAVAILABLE=1\n"
                  "BLOCKER=none\n");
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "verdict"), "state")),
                        "complete");
    json_decref(r);
}

/* Both 0 with desired > 0: maxUnavailable is forced to 1 (6.4). */
static void test_zero_budget_forced_to_one(void **state)
{
    (void)state;
    fleet f = make_fleet(3, "0", 3, 0, "");
    json_t *r = fleet_report(&f);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(r, "budget"), "max_unavailable")), 1);
    json_decref(r);
}

static void test_not_a_daemonset(void **state)
{
    (void)state;
    json_t *pod = sq_load("{'kind':'Pod','metadata':{'name':'x'}}");
    gp_error err = {0};
    assert_null(an_rollout_new(pod, &err));
    assert_non_null(strstr(err.text, "DaemonSet"));
    json_decref(pod);
}

/* ---- the field states (tests/data/analyze/README.md) ---- */

static json_t *snapshot_report(const char *file, const char *ns, const char *name)
{
    json_t *list = load_snapshot(file);
    const json_t *items = json_object_get(list, "items");
    const json_t *ds = find(items, "DaemonSet", ns, name);
    json_t *r = analyze(items, ds, 0), *back = analyze(items, ds, 1);
    assert_json_equal(back, r);
    json_decref(back);
    json_decref(list);
    return r;
}

static const char *field(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* The incident's device plugin DaemonSet: its pods are bound and wait in
 * ContainerCreating, and the kubelet's FailedCreatePodSandBox says why
 * (no runtime for "nvidia"): a named blocker, not unknown. */
static void test_sandbox_blocker(void **state)
{
    (void)state;
    json_t *r = snapshot_report("incident-runtime-missing.json", "gpu-operator",
                                "nvidia-device-plugin-daemonset");
    assert_string_equal(field(r, "blocker"), "runtime-handler-missing");
    const json_t *first = json_array_get(json_object_get(r, "stuck"), 0);
    assert_string_equal(field(first, "blocker"), "runtime-handler-missing");
    assert_non_null(strstr(field(first, "message"), "no runtime for \"nvidia\" is configured"));
    assert_non_null(strstr(field(first, "detail"), "has no handler nvidia"));
    char *lab = an_rollout_render(r, AN_LAB);
    assert_non_null(strstr(lab, "BLOCKER=runtime-handler-missing\n"));
    free(lab);
    json_decref(r);
}

/* A RuntimeClass that does not exist: the API server refuses every pod
 * (k8s-cases/real-1.32.13/lifecycle-and-backoff.txt: one FailedCreate
 * `pods "dsrc-" is forbidden: pod rejected: RuntimeClass "missing" not
 * found` whose count grows). There is no pod to wait for; the verdict and
 * the blocker come from the controller's event. */
static void test_create_failure(void **state)
{
    (void)state;
    json_t *r = snapshot_report("field-ds-runtimeclass-missing.json", "gpu-operator",
                                "nvidia-device-plugin-daemonset");
    assert_string_equal(field(r, "blocker"), "runtimeclass-missing");
    const json_t *f = json_object_get(r, "create_failure");
    assert_string_equal(field(f, "runtime_class"), "nvidia");
    assert_true(json_integer_value(json_object_get(f, "count")) > 1);
    const json_t *v = json_object_get(r, "verdict");
    assert_string_equal(field(v, "state"), "stalled");
    assert_non_null(strstr(field(v, "text"), "cannot create pods for 3 nodes"));
    assert_non_null(strstr(field(v, "text"), "RuntimeClass \"nvidia\" not found"));
    json_decref(r);
}

int main(void)
{
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lab_step8_lines),
        cmocka_unit_test(test_old_template_pods_with_the_new_image),
        cmocka_unit_test(test_lab_step8_order_does_not_matter),
        cmocka_unit_test(test_lab_step8_fit_and_budget),
        cmocka_unit_test(test_lab_step8_evidence),
        cmocka_unit_test(test_288_nodes_five_percent),
        cmocka_unit_test(test_three_unknown_nodes),
        cmocka_unit_test(test_complete_rollout),
        cmocka_unit_test(test_zero_budget_forced_to_one),
        cmocka_unit_test(test_not_a_daemonset),
        cmocka_unit_test(test_sandbox_blocker),
        cmocka_unit_test(test_create_failure),
    };
    return cmocka_run_group_tests_name("analyze_rollout", tests, NULL, NULL);
}
