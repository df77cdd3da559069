/* kube/pod_requests.h: resourcehelper.PodRequests (component-helpers
 * v0.32), which the scheduler and the analyzers (gpuop nodes, why-pending,
 * rollout) share. Expected values are worked out next to each case. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <string.h>

#include "kube/pod_requests.h"

/* The pod's request of `name` in canonical text, "" when it asks none. */
static void assert_request(const char *pod_json, const char *name, const char *want)
{
    json_t *pod = sq_load(pod_json);
    kube_quantity q;
    gp_error err = {0};
    const char *names[] = {name};
    if (kube_pod_requests_of(pod, names, 1, &q, &err) != 0) print_error("%s\n", err.text);
    char buf[KUBE_QUANTITY_FORMAT_MAX];
    kube_quantity_format(&q, buf);
    if (strcmp(buf, want) != 0) print_error("%s: %s\n", name, pod_json);
    assert_string_equal(buf, want);
    json_decref(pod);
}

#define C(cpu) "{'name':'c','resources':{'requests':{'cpu':'" cpu "'}}}"
#define SIDECAR(cpu)                                                                               \
    "{'name':'s','restartPolicy':'Always','resources':{'requests':{'cpu':'" cpu "'}}}"

static void test_containers_sum_and_overhead(void **state)
{
    (void)state;
    assert_request("{'spec':{'containers':[" C("1") "," C("500m") "]}}", "cpu", "1500m");
    assert_request("{'spec':{'containers':[" C("1") "],'overhead':{'cpu':'250m'}}}", "cpu",
                   "1250m");
    assert_request("{'spec':{'containers':[" C("1") "]}}", "memory", "0");
    assert_request("{'spec':{}}", "cpu", "0");
}

/* A regular init container is a floor: max(sum of containers, each init). */
static void test_init_containers_are_a_floor(void **state)
{
    (void)state;
    assert_request(
        "{'spec':{'initContainers':[" C("2") "," C("500m") "],'containers':[" C("1") "]}}", "cpu",
        "2");
    assert_request("{'spec':{'initContainers':[" C("500m") "],'containers':[" C("1") "]}}", "cpu",
                   "1");
}

/* Sidecars: sidecar 1, init 2, sidecar 3, container 1. The containers sum
 * to 1 + 1 + 3 = 5 with both sidecars; init 2 runs beside sidecar 1: 3;
 * the sidecars together are 4. max(5, 3, 4) = 5; with 250m overhead 5250m. */
static void test_sidecars(void **state)
{
    (void)state;
    assert_request("{'spec':{'initContainers':[" SIDECAR("1") "," C("2") "," SIDECAR(
                       "3") "],"
                            "'containers':[" C("1") "],'overhead':{'cpu':'250m'}}}",
                   "cpu", "5250m");
    /* init 8 after sidecar 1: 9 is the floor, above the containers' 2 */
    assert_request(
        "{'spec':{'initContainers':[" SIDECAR("1") "," C("8") "],'containers':[" C("1") "]}}",
        "cpu", "9");
    /* before the sidecar starts, init 8 runs alone */
    assert_request(
        "{'spec':{'initContainers':[" C("8") "," SIDECAR("1") "],'containers':[" C("1") "]}}",
        "cpu", "8");
}

/* A limit without a request is the request, as defaulting writes it. */
static void test_limit_stands_in_for_request(void **state)
{
    (void)state;
    assert_request("{'spec':{'containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpu':"
                   "'2','memory':'1Gi'},'requests':{'memory':'512Mi'}}}]}}",
                   "nvidia.com/gpu", "2");
    assert_request("{'spec':{'containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpu':"
                   "'2','memory':'1Gi'},'requests':{'memory':'512Mi'}}}]}}",
                   "memory", "512Mi");
}

/* NonMissingContainerRequests: a container without a cpu or memory request
 * counts as the defaults, per container. */
static void test_non_missing(void **state)
{
    (void)state;
    json_t *pod = sq_load("{'spec':{'containers':[" C("1") ",{'name':'d'}]}}");
    kube_non_missing nm;
    gp_error err = {0};
    assert_int_equal(kube_quantity_parse("100m", &nm.cpu, &err), 0);
    assert_int_equal(kube_quantity_parse("200Mi", &nm.memory, &err), 0);
    kube_resource_list l = {0};
    assert_int_equal(kube_pod_requests(pod, &nm, &l, &err), 0);
    char buf[KUBE_QUANTITY_FORMAT_MAX];
    kube_quantity_format(&kube_resource_list_find(&l, "cpu")->q, buf);
    assert_string_equal(buf, "1100m");
    kube_quantity_format(&kube_resource_list_find(&l, "memory")->q, buf);
    assert_string_equal(buf, "400Mi");
    kube_resource_list_free(&l);
    json_decref(pod);
}

static void test_bad_quantity(void **state)
{
    (void)state;
    json_t *pod = sq_load("{'spec':{'containers':[{'name':'c','resources':{'requests':"
                          "{'memory':'64 Gi'}}}]}}");
    kube_quantity q;
    gp_error err = {0};
    const char *names[] = {"memory"};
    assert_int_equal(kube_pod_requests_of(pod, names, 1, &q, &err), -1);
    assert_non_null(strstr(err.text, "64 Gi"));
    json_decref(pod);
    /* a bare JSON number is a quantity (Quantity.UnmarshalJSON) */
    assert_request("{'spec':{'containers':[{'name':'c','resources':{'requests':{'cpu':2}}}]}}",
                   "cpu", "2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_containers_sum_and_overhead),
        cmocka_unit_test(test_init_containers_are_a_floor),
        cmocka_unit_test(test_sidecars),
        cmocka_unit_test(test_limit_stands_in_for_request),
        cmocka_unit_test(test_non_missing),
        cmocka_unit_test(test_bad_quantity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
