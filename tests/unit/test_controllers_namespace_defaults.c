/* ctl_namespace_defaults_plan: the serviceaccount controller's `default`
 * account and the root-CA publisher's kube-root-ca.crt for one namespace
 * (pkg/controller/serviceaccount/serviceaccounts_controller.go syncNamespace,
 * pkg/controller/certificates/rootcacertpublisher/publisher.go syncNamespace).
 * JSON is written with ' for ". */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include "controllers/namespace_defaults.h"
#include "kube/json.h"

/* one line, to sit inside the test JSON as it is */
#define CA "-----BEGIN CERTIFICATE----- MIIB -----END CERTIFICATE-----"

/* the plan for namespace ns, with the ConfigMap cm as stored (NULL:
 * missing) judged by ctl_root_ca_state */
static json_t *plan_for(const char *ns, bool have_account, const char *cm, bool want)
{
    json_t *n = sq_load(ns), *c = cm ? sq_load(cm) : NULL;
    json_t *plan = ctl_namespace_defaults_plan(n, have_account, ctl_root_ca_state(c, CA), CA, want);
    json_decref(n);
    json_decref(c);
    assert_non_null(plan);
    return plan;
}

static const char *field(const json_t *plan, size_t i, const char *key)
{
    return json_string_value(json_object_get(json_array_get(plan, i), key));
}

/* a new namespace: its account, then its ConfigMap */
static void test_new_namespace(void **state)
{
    (void)state;
    json_t *plan =
        plan_for("{'metadata':{'name':'lab'},'status':{'phase':'Active'}}", false, NULL, true);
    assert_int_equal(json_array_size(plan), 2);
    assert_string_equal(field(plan, 0, "method"), "POST");
    assert_string_equal(field(plan, 0, "path"), "/api/v1/namespaces/lab/serviceaccounts");
    json_t *sa = json_object_get(json_array_get(plan, 0), "body");
    assert_string_equal(kube_str(kube_obj(sa, "metadata"), "name"), "default");
    assert_string_equal(field(plan, 1, "path"), "/api/v1/namespaces/lab/configmaps");
    json_t *cm = json_object_get(json_array_get(plan, 1), "body");
    assert_string_equal(kube_str(kube_obj(cm, "metadata"), "name"), "kube-root-ca.crt");
    assert_string_equal(kube_str(kube_obj(cm, "data"), "ca.crt"), CA);
    json_decref(plan);
}

/* what is there and right is left alone; another CA is put back */
static void test_existing_objects(void **state)
{
    (void)state;
    json_t *plan =
        plan_for("{'metadata':{'name':'lab'}}", true, "{'data':{'ca.crt':'" CA "'}}", true);
    assert_int_equal(json_array_size(plan), 0);
    json_decref(plan);
    plan = plan_for("{'metadata':{'name':'lab'}}", true, "{'data':{'ca.crt':'tampered'}}", true);
    assert_int_equal(json_array_size(plan), 1);
    assert_string_equal(field(plan, 0, "method"), "PATCH");
    assert_string_equal(field(plan, 0, "path"),
                        "/api/v1/namespaces/lab/configmaps/kube-root-ca.crt");
    assert_string_equal(field(plan, 0, "contentType"), "application/merge-patch+json");
    json_decref(plan);
    /* a ConfigMap emptied of its data is stale too */
    plan = plan_for("{'metadata':{'name':'lab'}}", true, "{'metadata':{'name':'x'}}", true);
    assert_int_equal(json_array_size(plan), 1);
    assert_string_equal(field(plan, 0, "method"), "PATCH");
    json_decref(plan);
    assert_int_equal(ctl_root_ca_state(NULL, CA), CTL_ROOT_CA_MISSING);
    /* without ServiceAccount admission, no account */
    plan = plan_for("{'metadata':{'name':'lab'}}", false, "{'data':{'ca.crt':'" CA "'}}", false);
    assert_int_equal(json_array_size(plan), 0);
    json_decref(plan);
}

/* nothing new in a namespace being deleted (its creates would be refused) */
static void test_terminating_namespace(void **state)
{
    (void)state;
    json_t *plan =
        plan_for("{'metadata':{'name':'gone','deletionTimestamp':'2025-01-01T00:00:00Z'},"
                 "'status':{'phase':'Terminating'}}",
                 false, NULL, true);
    assert_int_equal(json_array_size(plan), 0);
    json_decref(plan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_namespace),
        cmocka_unit_test(test_existing_objects),
        cmocka_unit_test(test_terminating_namespace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
