/* The taint eviction controller (pkg/controller/tainteviction, 1.32): how
 * long a pod may stay on a node with NoExecute taints, and its scheduled
 * deletion: the recording's pod `short` (tolerationSeconds 10 for
 * unreachable) goes 10 s after the taint, `long` (the 300 s that
 * DefaultTolerationSeconds admission gives) stays. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "json_assert.h"

#include "controllers/taint_eviction_internal.h"
#include "kube/json.h"

#define T0  ((int64_t)1735725600000)
#define SEC 1000

#define UNREACHABLE "{'key':'node.kubernetes.io/unreachable','effect':'NoExecute'}"
#define DEFAULTS                                                                                   \
    "{'key':'node.kubernetes.io/not-ready','operator':'Exists','effect':'NoExecute',"              \
    "'tolerationSeconds':300},{'key':'node.kubernetes.io/unreachable','operator':'Exists',"        \
    "'effect':'NoExecute','tolerationSeconds':300}"

static int64_t stay_ms(const char *taints_sq, const char *tolerations_sq)
{
    json_t *taints = sq_load(taints_sq), *tols = sq_load(tolerations_sq);
    int64_t ms = ctl_te_toleration_ms(taints, tols);
    json_decref(taints);
    json_decref(tols);
    return ms;
}

static void how_long_a_pod_may_stay(void **state)
{
    (void)state;
    /* the recording's two pods */
    assert_int_equal(stay_ms("[" UNREACHABLE "]",
                             "[{'key':'node.kubernetes.io/unreachable','operator':'Exists',"
                             "'effect':'NoExecute','tolerationSeconds':10}," DEFAULTS "]"),
                     10 * SEC);
    assert_int_equal(stay_ms("[" UNREACHABLE "]", "[" DEFAULTS "]"), 300 * SEC);
    /* not tolerated: now; tolerated without a limit: for good */
    assert_int_equal(stay_ms("[{'key':'gpu','effect':'NoExecute'}]", "[" DEFAULTS "]"),
                     CTL_TE_UNTOLERATED);
    assert_int_equal(stay_ms("[" UNREACHABLE "]", "[{'operator':'Exists'}]"), CTL_TE_FOREVER);
    /* the first toleration that matches counts: the later 5 s does not */
    assert_int_equal(stay_ms("[" UNREACHABLE "]",
                             "[{'operator':'Exists'},{'key':'node.kubernetes.io/unreachable',"
                             "'operator':'Exists','tolerationSeconds':5}]"),
                     CTL_TE_FOREVER);
    /* the shortest over the taints; 0 or less is now */
    assert_int_equal(stay_ms("[" UNREACHABLE ",{'key':'x','effect':'NoExecute'}]",
                             "[{'key':'x','operator':'Exists','tolerationSeconds':20}," DEFAULTS
                             "]"),
                     20 * SEC);
    assert_int_equal(stay_ms("[" UNREACHABLE "]",
                             "[{'key':'node.kubernetes.io/unreachable','operator':'Exists',"
                             "'tolerationSeconds':-3}]"),
                     0);
}

static void only_noexecute_taints_count(void **state)
{
    (void)state;
    json_t *node =
        sq_load("{'spec':{'taints':[{'key':'node.kubernetes.io/unreachable','effect':"
                "'NoSchedule'}," UNREACHABLE ",{'key':'a','effect':'PreferNoSchedule'}]}}");
    json_t *t = ctl_te_noexecute_taints(node);
    json_t *want = sq_load("[" UNREACHABLE "]");
    assert_json_equal(t, want);
    json_decref(want);
    json_decref(t);
    json_decref(node);
}

static void a_scheduled_deletion_fires_once_and_can_be_cancelled(void **state)
{
    (void)state;
    ctl_te_work w = {0};
    assert_false(ctl_te_process(&w, 10 * SEC, T0));
    assert_true(w.pending);
    assert_false(ctl_te_due(&w, T0 + 9 * SEC));
    /* seen again later (a status change, another taint): the first
     * deletion is kept, not pushed back */
    assert_false(ctl_te_process(&w, 10 * SEC, T0 + 5 * SEC));
    assert_false(ctl_te_process(&w, 300 * SEC, T0 + 6 * SEC));
    assert_true(ctl_te_due(&w, T0 + 10 * SEC));
    /* a toleration without a limit now: cancelled (the caller says so) */
    assert_true(ctl_te_process(&w, CTL_TE_FOREVER, T0 + 7 * SEC));
    assert_false(w.pending);
    assert_false(ctl_te_due(&w, T0 + 10 * SEC));
    assert_false(ctl_te_cancel(&w)); /* nothing left to cancel */
    /* an untolerated taint: now, replacing what was scheduled */
    assert_false(ctl_te_process(&w, 300 * SEC, T0));
    assert_true(ctl_te_process(&w, CTL_TE_UNTOLERATED, T0 + 1 * SEC));
    assert_true(ctl_te_due(&w, T0 + 1 * SEC));
}

static void the_disruption_target_condition(void **state)
{
    (void)state;
    json_t *pod = sq_load("{'metadata':{'name':'short'},'status':{'conditions':[]}}");
    json_t *patch = ctl_te_disruption_patch(pod, T0);
    json_t *want = sq_load("{'status':{'conditions':[{'type':'DisruptionTarget','status':'True',"
                           "'reason':'DeletionByTaintManager','message':'Taint manager: deleting "
                           "due to NoExecute taint','lastProbeTime':null,"
                           "'lastTransitionTime':'2025-01-01T10:00:00Z'}]}}");
    assert_json_equal(patch, want);
    json_decref(want);
    json_decref(patch);
    json_decref(pod);
    pod = sq_load("{'status':{'conditions':[{'type':'DisruptionTarget','status':'True','reason':"
                  "'DeletionByTaintManager','message':'Taint manager: deleting due to NoExecute "
                  "taint'}]}}");
    assert_null(ctl_te_disruption_patch(pod, T0));
    json_decref(pod);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(how_long_a_pod_may_stay),
        cmocka_unit_test(only_noexecute_taints_count),
        cmocka_unit_test(a_scheduled_deletion_fires_once_and_can_be_cancelled),
        cmocka_unit_test(the_disruption_target_condition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
