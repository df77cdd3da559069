/* kube/json.h: the readers every module reads objects with, Go's zero value
 * for whatever is absent, null or of another type. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include "kube/json.h"

static void test_zero_values(void **state)
{
    (void)state;
    json_t *pod = sq_load("{'metadata':{'name':'p','labels':{'a':'1'},'generation':3},"
                          "'spec':{'nodeName':7,'containers':[{'name':'c'}],'hostNetwork':true},"
                          "'status':null}");
    assert_string_equal(kube_str(kube_obj(pod, "metadata"), "name"), "p");
    /* a number where a string belongs reads as "", or NULL where absent counts */
    assert_string_equal(kube_str(kube_obj(pod, "spec"), "nodeName"), "");
    assert_null(kube_str_or_null(kube_obj(pod, "spec"), "nodeName"));
    assert_null(kube_str_or_null(kube_obj(pod, "metadata"), "uid"));
    assert_true(kube_str_is(kube_path(pod, "metadata", "labels", NULL), "a", "1"));
    assert_false(kube_str_is(kube_path(pod, "metadata", "labels", NULL), "b", "1"));
    assert_int_equal(kube_int(kube_obj(pod, "metadata"), "generation"), 3);
    assert_int_equal(kube_int(kube_obj(pod, "metadata"), "name"), 0);
    assert_true(kube_true(kube_obj(pod, "spec"), "hostNetwork"));
    assert_false(kube_true(kube_obj(pod, "spec"), "hostPID"));
    /* null and non-objects chain through */
    assert_null(kube_obj(pod, "status"));
    assert_string_equal(kube_str(kube_obj(pod, "status"), "phase"), "");
    assert_null(kube_arr(pod, "spec"));
    assert_non_null(kube_arr(kube_obj(pod, "spec"), "containers"));
    assert_null(kube_get(kube_arr(kube_obj(pod, "spec"), "containers"), "name"));
    assert_string_equal(kube_str(NULL, "x"), "");
    json_decref(pod);
}

static void test_paths(void **state)
{
    (void)state;
    json_t *ds = sq_load("{'spec':{'template':{'spec':{'containers':[]}},"
                         "'updateStrategy':{'rollingUpdate':{'maxUnavailable':'25%'}}}}");
    assert_true(json_is_array(kube_at(ds, "spec.template.spec.containers")));
    assert_ptr_equal(kube_at(ds, "spec.template.spec.containers"),
                     kube_path(ds, "spec", "template", "spec", "containers", NULL));
    assert_string_equal(
        json_string_value(kube_at(ds, "spec.updateStrategy.rollingUpdate.maxUnavailable")), "25%");
    assert_null(kube_at(ds, "spec.template.spec.containers.name"));
    assert_null(kube_at(ds, "spec.nothing.here"));
    assert_null(kube_path(ds, "spec", "nothing", "here", NULL));
    json_decref(ds);
}

/* The first condition of a type counts, as GetPodCondition takes it. */
static void test_conditions(void **state)
{
    (void)state;
    json_t *pod = sq_load("{'status':{'conditions':[{'type':'PodScheduled','status':'True'},"
                          "{'type':'Ready','status':'False'},{'type':'Ready','status':'True'}]}}");
    assert_string_equal(kube_str(kube_condition(pod, "Ready"), "status"), "False");
    assert_null(kube_condition(pod, "Initialized"));
    json_t *conds = (json_t *)kube_at(pod, "status.conditions");
    assert_ptr_equal(kube_find(conds, "type", "PodScheduled"), json_array_get(conds, 0));
    json_decref(pod);
}

static void test_has_string(void **state)
{
    (void)state;
    json_t *a = sq_load("['orphan',7,null,'kubernetes']");
    assert_true(kube_has_string(a, "kubernetes"));
    assert_false(kube_has_string(a, "7"));
    assert_false(kube_has_string(a, NULL));
    assert_false(kube_has_string(NULL, "orphan"));
    json_decref(a);
}

/* GetControllerOf: the first owner marked controller. */
static void test_controller_of(void **state)
{
    (void)state;
    json_t *pod = sq_load("{'metadata':{'ownerReferences':[{'kind':'Node','name':'n'},"
                          "{'kind':'DaemonSet','name':'a','controller':true},"
                          "{'kind':'DaemonSet','name':'b','controller':true}]}}");
    assert_string_equal(kube_str(kube_controller_of(pod), "name"), "a");
    json_t *orphan = sq_load("{'metadata':{'ownerReferences':[{'kind':'Node','name':'n',"
                             "'controller':false}]}}");
    assert_null(kube_controller_of(orphan));
    json_decref(pod);
    json_decref(orphan);
}

/* deletionTimestamp null is no deletion: Go decodes it to a nil pointer. */
static void test_deleting(void **state)
{
    (void)state;
    json_t *deleting = sq_load("{'metadata':{'deletionTimestamp':'2025-01-01T10:00:00Z'}}");
    json_t *null_ts = sq_load("{'metadata':{'deletionTimestamp':null}}");
    json_t *live = sq_load("{'metadata':{}}");
    assert_true(kube_deleting(deleting));
    assert_false(kube_deleting(null_ts));
    assert_false(kube_deleting(live));
    assert_false(kube_deleting(NULL));
    json_decref(deleting);
    json_decref(null_ts);
    json_decref(live);
}

/* Go's encoding/json words for a value (decode.go's literalStore and
 * UnmarshalTypeError: "cannot unmarshal number into Go struct field ...",
 * as recorded in ../shared/k8s-cases/ kubectl-probes for `data: {a: 5}`). */
static void test_go_kind(void **state)
{
    (void)state;
    json_t *doc = sq_load("[{}, [], 'x', true, false, 5, 1.5, null]");
    const char *want[] = {"object", "array", "string", "bool", "bool", "number", "number", "null"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_string_equal(kube_json_go_kind(json_array_get(doc, i)), want[i]);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_values),   cmocka_unit_test(test_paths),
        cmocka_unit_test(test_conditions),    cmocka_unit_test(test_has_string),
        cmocka_unit_test(test_controller_of), cmocka_unit_test(test_deleting),
        cmocka_unit_test(test_go_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
