/* kube/node_affinity.h, kube/label_selector.h and kube/taints.h:
 * nodeaffinity.RequiredNodeAffinity.Match, labels.NewRequirement and
 * Requirement.Matches, LabelSelectorAsSelector, Toleration.ToleratesTaint
 * and FindMatchingUntoleratedTaint, which the scheduler and the DaemonSet
 * controller share; their own copies used to disagree. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <string.h>

#include "controllers/daemonset.h"
#include "controllers/scheduler.h"
#include "kube/label_selector.h"
#include "kube/node_affinity.h"
#include "kube/taints.h"

/* ---- requirements ---- */

static bool req_matches(const char *req, const char *labels, kube_requirement_kind kind)
{
    json_t *r = sq_load(req), *l = sq_load(labels);
    bool m = kube_requirement_matches(r, l, kind);
    json_decref(r);
    json_decref(l);
    return m;
}

static void test_requirements(void **state)
{
    (void)state;
    const kube_requirement_kind N = KUBE_REQ_NODE_SELECTOR, L = KUBE_REQ_LABEL_SELECTOR;
    const char *labels = "{'zone':'a','gpus':'4','neg':'-3'}";
    assert_true(req_matches("{'key':'zone','operator':'In','values':['a','b']}", labels, L));
    assert_false(req_matches("{'key':'zone','operator':'In','values':['b']}", labels, L));
    assert_true(req_matches("{'key':'rack','operator':'NotIn','values':['b']}", labels, L));
    assert_false(req_matches("{'key':'zone','operator':'NotIn','values':['a']}", labels, L));
    assert_true(req_matches("{'key':'zone','operator':'Exists'}", labels, L));
    assert_true(req_matches("{'key':'rack','operator':'DoesNotExist'}", labels, L));
    assert_true(req_matches("{'key':'gpus','operator':'Gt','values':['3']}", labels, N));
    assert_false(req_matches("{'key':'gpus','operator':'Gt','values':['4']}", labels, N));
    assert_true(req_matches("{'key':'neg','operator':'Lt','values':['0']}", labels, N));
    assert_false(req_matches("{'key':'zone','operator':'Lt','values':['9']}", labels, N));
    /* a LabelSelector has no Gt */
    assert_false(req_matches("{'key':'gpus','operator':'Gt','values':['3']}", labels, L));
    /* NewRequirement refuses these, so they match nothing */
    static const char *const invalid[] = {
        "{'key':'zone','operator':'In','values':[]}",
        "{'key':'zone','operator':'Exists','values':['a']}",
        "{'key':'bad key','operator':'Exists'}",
        "{'key':'zone','operator':'In','values':['not valid!']}",
        "{'key':'gpus','operator':'Gt','values':['3','4']}",
        "{'key':'gpus','operator':'Gt','values':['three']}",
        /* a value must be a label value too: '-1' starts with '-' */
        "{'key':'gpus','operator':'Gt','values':['-1']}",
        "{'key':'zone','operator':'Equals','values':['a']}",
    };
    for (size_t i = 0; i < sizeof invalid / sizeof *invalid; i++) {
        json_t *r = sq_load(invalid[i]);
        assert_false(kube_requirement_valid(r, N));
        json_decref(r);
        assert_false(req_matches(invalid[i], labels, N));
    }
}

static void test_label_selector_objects(void **state)
{
    (void)state;
    json_t *labels = sq_load("{'app':'ds','tier':'gpu'}");
    static const struct {
        const char *sel;
        bool matches, invalid;
    } cases[] = {
        {"{}", true, false},
        {"null", false, false},
        {"{'matchLabels':{'app':'ds'}}", true, false},
        {"{'matchLabels':{'app':'other'}}", false, false},
        {"{'matchLabels':{'app':'ds'},'matchExpressions':[{'key':'tier','operator':'In',"
         "'values':['gpu']}]}",
         true, false},
        {"{'matchExpressions':[{'key':'tier','operator':'Gt','values':['1']}]}", false, true},
        {"{'matchLabels':{'app':'not valid!'}}", false, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *sel = sq_load(cases[i].sel);
        bool invalid = false;
        assert_int_equal(kube_label_selector_object_matches(sel, labels, &invalid),
                         cases[i].matches);
        assert_int_equal(invalid, cases[i].invalid);
        json_decref(sel);
    }
    json_decref(labels);
}

/* ---- node selectors ---- */

static bool affinity(const char *spec, const char *labels, const char *name)
{
    json_t *s = sq_load(spec), *l = sq_load(labels);
    bool m = kube_node_affinity_matches(json_object_get(s, "nodeSelector"),
                                        kube_required_node_affinity(s), l, name);
    json_decref(s);
    json_decref(l);
    return m;
}

#define TERMS(t)                                                                                   \
    "{'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{'"             \
    "nodeSelectorTerms':" t "}}}}"

static void test_node_affinity(void **state)
{
    (void)state;
    const char *labels = "{'zone':'a','gpus':'4'}";
    assert_true(affinity("{}", labels, "n1"));
    assert_true(affinity("{'nodeSelector':{'zone':'a'}}", labels, "n1"));
    assert_false(affinity("{'nodeSelector':{'zone':'a','gpus':'8'}}", labels, "n1"));
    /* terms are ORed; a term's requirements ANDed */
    assert_true(
        affinity(TERMS("[{'matchExpressions':[{'key':'zone','operator':'In','values':['b']}]},"
                       "{'matchExpressions':[{'key':'gpus','operator':'Gt','values':['2']}]}]"),
                 labels, "n1"));
    assert_false(
        affinity(TERMS("[{'matchExpressions':[{'key':'zone','operator':'In','values':['a']},"
                       "{'key':'gpus','operator':'Lt','values':['2']}]}]"),
                 labels, "n1"));
    /* an empty term selects nothing, and no terms nothing either */
    assert_false(affinity(TERMS("[{}]"), labels, "n1"));
    assert_false(affinity(TERMS("[]"), labels, "n1"));
    /* a term that does not parse is skipped */
    assert_true(affinity(TERMS("[{'matchExpressions':[{'key':'zone','operator':'Bogus'}]},"
                               "{'matchExpressions':[{'key':'zone','operator':'Exists'}]}]"),
                         labels, "n1"));
    /* matchFields: metadata.name, In or NotIn with one value */
    assert_true(affinity(
        TERMS("[{'matchFields':[{'key':'metadata.name','operator':'In','values':['n1']}]}]"),
        labels, "n1"));
    assert_false(affinity(
        TERMS("[{'matchFields':[{'key':'metadata.name','operator':'In','values':['n2']}]}]"),
        labels, "n1"));
    assert_true(affinity(
        TERMS("[{'matchFields':[{'key':'metadata.name','operator':'NotIn','values':['n2']}]}]"),
        labels, "n1"));
    assert_false(affinity(
        TERMS("[{'matchFields':[{'key':'metadata.name','operator':'In','values':['n1','n2']}]}]"),
        labels, "n1"));
    /* another field reads as "" */
    assert_true(affinity(
        TERMS("[{'matchFields':[{'key':'spec.x','operator':'In','values':['']}]}]"), labels, "n1"));
    /* a node without a name has no fields: they are not checked */
    assert_true(affinity(
        TERMS("[{'matchFields':[{'key':'metadata.name','operator':'In','values':['n2']}]}]"),
        labels, ""));
}

/* ---- taints ---- */

static void test_tolerations(void **state)
{
    (void)state;
    json_t *tols = sq_load("[{'key':'gpu','operator':'Equal','value':'yes','effect':'NoSchedule'},"
                           "{'key':'dedicated','operator':'Exists'},{'operator':'Exists',"
                           "'effect':'NoExecute'},{'key':'x','operator':'Gt','value':'1'}]");
    assert_true(kube_tolerations_tolerate(tols, "gpu", "yes", "NoSchedule"));
    assert_false(kube_tolerations_tolerate(tols, "gpu", "no", "NoSchedule"));
    assert_false(kube_tolerations_tolerate(tols, "gpu", "yes", "PreferNoSchedule"));
    assert_true(kube_tolerations_tolerate(tols, "dedicated", "any", "NoSchedule"));
    assert_true(kube_tolerations_tolerate(tols, "anything", "v", "NoExecute"));
    /* 1.32 knows no Gt for tolerations: it tolerates nothing */
    assert_false(kube_tolerations_tolerate(tols, "x", "2", "NoSchedule"));
    json_t *taints = sq_load("[{'key':'soft','effect':'PreferNoSchedule'},{'key':'gpu','value':"
                             "'yes','effect':'NoSchedule'},{'key':'hard','effect':'NoSchedule'},"
                             "{'key':'evict','effect':'NoExecute'}]");
    const json_t *t =
        kube_untolerated_taint(taints, tols, KUBE_TAINT_NO_SCHEDULE | KUBE_TAINT_NO_EXECUTE);
    assert_non_null(t);
    assert_string_equal(json_string_value(json_object_get(t, "key")), "hard");
    assert_null(kube_untolerated_taint(taints, tols, KUBE_TAINT_NO_EXECUTE));
    assert_null(kube_untolerated_taint(taints, NULL, 0));
    assert_ptr_equal(kube_untolerated_taint(taints, NULL, KUBE_TAINT_PREFER_NO_SCHEDULE),
                     json_array_get(taints, 0));
    json_decref(tols);
    json_decref(taints);
}

/* ---- the users ---- */

#define AFFINITY                                                                                   \
    "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"               \
    "'nodeSelectorTerms':%s}}}"

/* NodeShouldRunDaemonPod for a template with these terms. */
static bool ds_runs(const char *terms, const json_t *node)
{
    json_t *ds = sqf("{'kind':'DaemonSet','metadata':{'name':'ds'},'spec':{'template':{'spec':{"
                     "'containers':[{'name':'c'}]," AFFINITY "}}}}",
                     terms);
    bool cont, run = ctl_ds_should_run(ds, node, &cont);
    if (!run) assert_false(cont);
    json_decref(ds);
    return run;
}

/* The scheduler's choice (the node's index, or -1) for a pod with them. */
static int scheduler_choice(const char *terms, const json_t *node)
{
    json_t *pod = sqf("{'kind':'Pod','metadata':{'name':'p','namespace':'d'},'spec':{"
                      "'containers':[{'name':'c'}]," AFFINITY "}}",
                      terms);
    ctl_sched_node nodes[1] = {{node, NULL, 0}};
    ctl_sched_result r;
    assert_int_equal(ctl_sched_schedule(pod, nodes, 1, 0, &r), 0);
    int chosen = r.chosen;
    if (chosen < 0) assert_non_null(strstr(r.message, "didn't match Pod's node affinity/selector"));
    ctl_sched_result_free(&r);
    json_decref(pod);
    return chosen;
}

/* Disagreement: the DaemonSet controller read Gt/Lt values without
 * NewRequirement's label value check, so Gt ["-1"] matched a node with
 * gpus=4 there, while the scheduler (and the real code) refuse the term. */
static void test_gt_value_must_be_a_label_value(void **state)
{
    (void)state;
    json_t *node = sq_load("{'kind':'Node','metadata':{'name':'n1','labels':{'gpus':'4'}},"
                           "'spec':{},'status':{'allocatable':{'cpu':'4','memory':'8Gi',"
                           "'pods':'110'},'conditions':[{'type':'Ready','status':'True'}]}}");
    const char *minus_one =
        "[{'matchExpressions':[{'key':'gpus','operator':'Gt','values':['-1']}]}]";
    const char *one = "[{'matchExpressions':[{'key':'gpus','operator':'Gt','values':['1']}]}]";
    assert_false(ds_runs(minus_one, node));
    assert_int_equal(scheduler_choice(minus_one, node), -1);
    assert_true(ds_runs(one, node));
    assert_int_equal(scheduler_choice(one, node), 0);
    json_decref(node);
}

/* Disagreement: for a node without a name the controller matched
 * matchFields against "", where extractNodeFields leaves the field set
 * empty and the fields go unchecked (as the scheduler did). */
static void test_nameless_node_has_no_fields(void **state)
{
    (void)state;
    json_t *node = sq_load("{'kind':'Node','metadata':{},'spec':{}}");
    json_t *ds = sq_load("{'kind':'DaemonSet','metadata':{'name':'ds'},'spec':{'template':{"
                         "'spec':{'containers':[{'name':'c'}],'affinity':{'nodeAffinity':{"
                         "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':"
                         "[{'matchFields':[{'key':'metadata.name','operator':'In','values':"
                         "['n1']}]}]}}}}}}}");
    assert_true(ctl_ds_should_run(ds, node, NULL));
    json_decref(ds);
    json_decref(node);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requirements),
        cmocka_unit_test(test_label_selector_objects),
        cmocka_unit_test(test_node_affinity),
        cmocka_unit_test(test_tolerations),
        cmocka_unit_test(test_gt_value_must_be_a_label_value),
        cmocka_unit_test(test_nameless_node_has_no_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
