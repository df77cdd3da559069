/* kube/intstr.h and kube/daemonset.h's budget: strconv.ParseInt and
 * intstr.GetScaledValueFromIntOrPercent (apimachinery v0.32), and
 * UnavailableCount / SurgeCount / updatedDesiredNodeCounts of the 1.32
 * DaemonSet controller, with every user checked against them: the
 * controller, the rollout analyzer and the lab's grader, whose own copies
 * used to disagree. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/rollout.h"
#include "controllers/daemonset.h"
#include "kube/daemonset.h"
#include "kube/intstr.h"
#include "lab/grade_cluster.h"

/* ---- strconv.ParseInt(s, 10, 64) ---- */

static void test_parse_int64(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t value;
    } good[] = {
        {"0", 0},
        {"+5", 5},
        {"-5", -5},
        {"007", 7},
        {"9223372036854775807", INT64_MAX},
        {"-9223372036854775808", INT64_MIN},
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        int64_t v = 1;
        assert_true(kube_parse_int64(good[i].text, &v));
        assert_int_equal(v, good[i].value);
    }
    static const char *const bad[] = {"",
                                      "+",
                                      "-",
                                      " 5",
                                      "5 ",
                                      "0x10",
                                      "1e3",
                                      "5.0",
                                      "9223372036854775808",
                                      "-9223372036854775809"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int64_t v = 42;
        if (kube_parse_int64(bad[i], &v)) print_error("accepted '%s'\n", bad[i]);
        assert_false(kube_parse_int64(bad[i], &v));
        assert_int_equal(v, 42);
    }
    assert_false(kube_parse_int64(NULL, &(int64_t){0}));
}

/* ---- GetScaledValueFromIntOrPercent ---- */

static int64_t scaled(const char *json, int64_t total, bool round_up)
{
    json_t *v = sq_load(json);
    int64_t out = -12345;
    gp_error err = {0};
    if (kube_intstr_scaled(v, total, round_up, &out, &err) != 0) print_error("%s\n", err.text);
    json_decref(v);
    return out;
}

static void test_scaled(void **state)
{
    (void)state;
    assert_int_equal(scaled("'25%'", 3, true), 1); /* k8s-semantics 6.4: "25%" of 3 */
    assert_int_equal(scaled("'25%'", 3, false), 0);
    assert_int_equal(scaled("'5%'", 288, true), 15); /* 14.4 */
    assert_int_equal(scaled("'5%'", 288, false), 14);
    assert_int_equal(scaled("'100%'", 7, true), 7);
    assert_int_equal(scaled("'0%'", 7, true), 0);
    assert_int_equal(scaled("10", 3, true), 10);
    assert_int_equal(scaled("-2", 3, true), -2);
    /* Atoi takes a sign: math.Ceil(-0.4) is 0, math.Floor(-0.4) is -1. */
    assert_int_equal(scaled("'-10%'", 4, true), 0);
    assert_int_equal(scaled("'-10%'", 4, false), -1);
    assert_int_equal(scaled("'+50%'", 3, true), 2);
}

static void assert_scaled_error(const char *json, const char *want)
{
    json_t *v = json ? sq_load(json) : NULL;
    int64_t out = 7;
    gp_error err = {0};
    assert_int_equal(kube_intstr_scaled(v, 10, true, &out, &err), -1);
    assert_string_equal(err.text, want);
    assert_int_equal(out, 7);
    json_decref(v);
}

/* The Go texts, word for word. */
static void test_scaled_errors(void **state)
{
    (void)state;
    assert_scaled_error(NULL, "nil value for IntOrString");
    assert_scaled_error("null", "nil value for IntOrString");
    assert_scaled_error("'5'", "invalid value for IntOrString: invalid type: string is not a "
                               "percentage");
    assert_scaled_error("true", "invalid value for IntOrString: invalid type: neither int nor "
                                "percentage");
    assert_scaled_error("'five%'", "invalid value for IntOrString: invalid value \"five%\": "
                                   "strconv.Atoi: parsing \"five\": invalid syntax");
    /* Atoi skips no space: strtol would have read " 10" as 10. */
    assert_scaled_error("' 10%'", "invalid value for IntOrString: invalid value \" 10%\": "
                                  "strconv.Atoi: parsing \" 10\": invalid syntax");
    assert_scaled_error("'99999999999999999999%'",
                        "invalid value for IntOrString: invalid value \"99999999999999999999%\": "
                        "strconv.Atoi: parsing \"99999999999999999999\": value out of range");
}

/* ---- UnavailableCount, SurgeCount and the 0/0 rule ---- */

static void limits(const char *spec_json, int64_t desired, int64_t want_unavailable,
                   int64_t want_surge)
{
    json_t *spec = sq_load(spec_json);
    int64_t mu = -1, ms = -1;
    gp_error err = {0};
    if (kube_ds_update_limits(spec, desired, &mu, &ms, &err) != 0) print_error("%s\n", err.text);
    assert_int_equal(mu, want_unavailable);
    assert_int_equal(ms, want_surge);
    json_decref(spec);
}

static void test_update_limits(void **state)
{
    (void)state;
    limits("{'updateStrategy':{'type':'RollingUpdate','rollingUpdate':{'maxUnavailable':'25%',"
           "'maxSurge':0}}}",
           10, 3, 0);
    limits("{'updateStrategy':{'type':'RollingUpdate','rollingUpdate':{'maxUnavailable':0,"
           "'maxSurge':'10%'}}}",
           10, 0, 1);
    /* both 0: maxUnavailable 1, but only with a node to run on */
    limits("{'updateStrategy':{'type':'RollingUpdate','rollingUpdate':{'maxUnavailable':0,"
           "'maxSurge':0}}}",
           10, 1, 0);
    limits("{'updateStrategy':{'type':'RollingUpdate','rollingUpdate':{'maxUnavailable':0,"
           "'maxSurge':0}}}",
           0, 0, 0);
    /* OnDelete counts nothing, whatever rollingUpdate says; then 0/0 → 1 */
    limits("{'updateStrategy':{'type':'OnDelete','rollingUpdate':{'maxUnavailable':3}}}", 4, 1, 0);
    /* a missing maxSurge is 0; a missing rollingUpdate is 0 for both */
    limits("{'updateStrategy':{'type':'RollingUpdate','rollingUpdate':{'maxUnavailable':2}}}", 4, 2,
           0);
    limits("{'updateStrategy':{'type':'RollingUpdate'}}", 4, 1, 0);

    json_t *spec = sq_load("{'updateStrategy':{'type':'RollingUpdate','rollingUpdate':{}}}");
    int64_t mu, ms;
    gp_error err = {0};
    assert_int_equal(kube_ds_update_limits(spec, 4, &mu, &ms, &err), -1);
    assert_string_equal(err.text, "invalid value for MaxUnavailable: nil value for IntOrString");
    json_decref(spec);
    spec = sq_load("{'updateStrategy':{'type':'RollingUpdate','rollingUpdate':{'maxUnavailable':1,"
                   "'maxSurge':'x'}}}");
    assert_int_equal(kube_ds_update_limits(spec, 4, &mu, &ms, &err), -1);
    assert_string_equal(err.text, "invalid value for MaxSurge: invalid value for IntOrString: "
                                  "invalid type: string is not a percentage");
    json_decref(spec);
}

/* ---- the users ---- */

/* A DaemonSet of `desired` nodes with `strategy` as its updateStrategy and
 * no pods: the rollout analyzer's budget. */
static json_t *rollout_budget(const char *strategy, int desired, json_t **warnings)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{'kind':'DaemonSet','metadata':{'name':'ds','namespace':'ns','uid':'u'},"
             "'spec':{'updateStrategy':%s,'template':{'spec':{'containers':[{'name':'c'}]}}},"
             "'status':{'desiredNumberScheduled':%d}}",
             strategy, desired);
    json_t *ds = sq_load(text);
    gp_error err = {0};
    an_rollout *b = an_rollout_new(ds, &err);
    assert_non_null(b);
    json_t *report = an_rollout_finish(b, &err);
    assert_non_null(report);
    an_rollout_free(b);
    json_decref(ds);
    json_t *budget = json_incref(json_object_get(report, "budget"));
    *warnings = json_incref(json_object_get(report, "warnings"));
    json_decref(report);
    return budget;
}

/* Disagreement: the analyzer refused a negative percentage (and read
 * " 50%" with strtol), where the controller takes what strconv.Atoi takes.
 * maxUnavailable "-10%" of 4 is 0 and maxSurge "50%" is 2: the controller
 * surges two nodes at a time; the analyzer used to warn and report 1 and 0. */
static void test_rollout_analyzer_scales_as_the_controller(void **state)
{
    (void)state;
    json_t *warnings;
    json_t *budget = rollout_budget("{'type':'RollingUpdate','rollingUpdate':{'maxUnavailable':"
                                    "'-10%','maxSurge':'50%'}}",
                                    4, &warnings);
    assert_int_equal(json_integer_value(json_object_get(budget, "max_unavailable")), 0);
    assert_int_equal(json_integer_value(json_object_get(budget, "max_surge")), 2);
    assert_int_equal(json_array_size(warnings), 0);
    json_decref(budget);
    json_decref(warnings);

    /* " 50%" is no percentage to Atoi: the controller stops with an error. */
    budget = rollout_budget("{'type':'RollingUpdate','rollingUpdate':{'maxUnavailable':' 50%'}}", 4,
                            &warnings);
    assert_int_equal(json_array_size(warnings), 1);
    assert_non_null(strstr(json_string_value(json_array_get(warnings, 0)),
                           "invalid value for MaxUnavailable: invalid value for IntOrString"));
    json_decref(budget);
    json_decref(warnings);
}

/* Disagreement: for an OnDelete DaemonSet, UnavailableCount is 0 whatever
 * rollingUpdate holds (then 0/0 gives 1); the analyzer and the lab's grader
 * scaled rollingUpdate.maxUnavailable anyway (3). */
static void test_on_delete_counts_no_rolling_update(void **state)
{
    (void)state;
    json_t *warnings;
    json_t *budget =
        rollout_budget("{'type':'OnDelete','rollingUpdate':{'maxUnavailable':3}}", 4, &warnings);
    assert_int_equal(json_integer_value(json_object_get(budget, "max_unavailable")), 1);
    json_decref(budget);
    json_decref(warnings);
}

/* Disagreement: the controller's errors left out Go's "invalid value for
 * IntOrString:" for a string that is not a percentage. */
static void test_controller_error_text(void **state)
{
    (void)state;
    json_t *ds = sq_load(
        "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'ds','namespace':'ns',"
        "'uid':'u','generation':1},'spec':{'selector':{'matchLabels':{'app':'ds'}},"
        "'template':{'metadata':{'labels':{'app':'ds'}},'spec':{'containers':[{'name':'c',"
        "'image':'i'}]}},'updateStrategy':{'type':'RollingUpdate','rollingUpdate':{"
        "'maxUnavailable':'5','maxSurge':0}}},'status':{}}");
    json_t *nodes = sq_load("[{'kind':'Node','metadata':{'name':'n0'},'spec':{},"
                            "'status':{'conditions':[{'type':'Ready','status':'True'}]}}]");
    json_t *pods =
        sq_load("[{'kind':'Pod','metadata':{'name':'ds-a','namespace':'ns','uid':'p','labels':{"
                "'app':'ds'},'ownerReferences':[{'kind':'DaemonSet','name':'ds','uid':'u',"
                "'controller':true}]},'spec':{'nodeName':'n0'},'status':{'phase':'Running'}}]");
    json_t *none = json_array();
    ctl_ds_plan plan;
    gp_error err = {0};
    /* the pod on the one node leaves manage() nothing to do: the rolling
     * update runs, and stops at maxUnavailable */
    assert_int_equal(ctl_ds_sync(ds, nodes, pods, none, 1767225600, false, &plan, &err), 1);
    assert_string_equal(err.text, "invalid value for MaxUnavailable: invalid value for "
                                  "IntOrString: invalid type: string is not a percentage");
    ctl_ds_plan_free(&plan);
    json_decref(ds);
    json_decref(nodes);
    json_decref(pods);
    json_decref(none);
}

static const json_t *condition_of(const json_t *result, const char *code)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(result, "conditions"), i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "code")), code) == 0) return c;
    }
    fail_msg("no condition %s", code);
    return NULL;
}

/* The lab's grader expects in out/rollout.txt the MAX_UNAVAILABLE the
 * controller works with. */
static void test_lab_grader_expects_the_controllers_budget(void **state)
{
    (void)state;
    char root[] = "/tmp/gpuop-test-intstr-XXXXXX";
    assert_non_null(mkdtemp(root));
    char dir[PATH_MAX], file[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/out", root);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(file, sizeof file, "%s/rollout.txt", dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("DESIRED=4\nUPDATED=0\nREADY=4\nOLD_IMAGE_PODS=0\nMAX_UNAVAILABLE=1\nBLOCKER=none\n", f);
    fclose(f);
    json_t *snapshot = sq_load(
        "{'daemonset':{'kind':'DaemonSet','metadata':{'name':'nvidia-container-toolkit',"
        "'namespace':'gpu-operator'},'spec':{'updateStrategy':{'type':'OnDelete',"
        "'rollingUpdate':{'maxUnavailable':3}},'template':{'spec':{'containers':[{'name':'c',"
        "'image':'i'}]}}},'status':{'desiredNumberScheduled':4}},'ds_pods':[],'revisions':[]}");
    lab_params p;
    lab_params_for_seed(0, &p);
    json_t *result = lab_grade_cluster_step(8, root, &p, snapshot);
    assert_non_null(result);
    const json_t *c = condition_of(result, "out.rollout.max_unavailable");
    assert_string_equal(json_string_value(json_object_get(c, "expected")), "MAX_UNAVAILABLE=1");
    assert_true(json_is_true(json_object_get(c, "passed")));
    json_decref(result);
    json_decref(snapshot);
    unlink(file);
    rmdir(dir);
    rmdir(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_int64),
        cmocka_unit_test(test_scaled),
        cmocka_unit_test(test_scaled_errors),
        cmocka_unit_test(test_update_limits),
        cmocka_unit_test(test_rollout_analyzer_scales_as_the_controller),
        cmocka_unit_test(test_on_delete_counts_no_rolling_update),
        cmocka_unit_test(test_controller_error_text),
        cmocka_unit_test(test_lab_grader_expects_the_controllers_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
