/* an_nodes: the lab's advertisement table (lab step 6) against what the real
 * kubectl printed for the same cluster (custom-columns files saved beside
 * the snapshots, tests/data/analyze/README.md), the per-node arithmetic of
 * gpu-node-facts.md 6.1, and the flags of section 5 (0 versus absent, the
 * driver-version label). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/nodes.h"
#include "util/file.h"

static json_t *load_items(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/analyze/%s", TEST_DATA_DIR, name);
    json_error_t jerr;
    json_t *list = json_load_file(path, 0, &jerr);
    if (!list) print_error("%s: %s\n", path, jerr.text);
    assert_non_null(list);
    json_t *items = json_incref(json_object_get(list, "items"));
    json_decref(list);
    return items;
}

static char *read_data(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/analyze/%s", TEST_DATA_DIR, name);
    size_t len;
    gp_error err = {0};
    char *text = gp_read_file(path, &len, &err);
    if (!text) print_error("%s\n", err.text);
    assert_non_null(text);
    return text;
}

/* Pods first when backwards: a pod may name a node not seen yet. */
static json_t *analyze(const json_t *items, int backwards)
{
    gp_error err = {0};
    an_nodes *b = an_nodes_new(NULL, &err);
    assert_non_null(b);
    size_t n = json_array_size(items);
    for (size_t i = 0; i < n; i++) {
        const json_t *it = json_array_get(items, backwards ? n - 1 - i : i);
        const char *kind = json_string_value(json_object_get(it, "kind"));
        if (strcmp(kind, "Node") == 0) an_nodes_add_node(b, it);
        if (strcmp(kind, "Pod") == 0) an_nodes_add_pod(b, it);
    }
    json_t *r = an_nodes_finish(b, &err);
    if (!r) print_error("%s\n", err.text);
    assert_non_null(r);
    an_nodes_free(b);
    return r;
}

static const json_t *node(const json_t *report, const char *name)
{
    size_t i;
    const json_t *n;
    json_array_foreach(json_object_get(report, "nodes"), i, n)
    {
        if (strcmp(json_string_value(json_object_get(n, "name")), name) == 0) return n;
    }
    fail_msg("node %s not in the report", name);
    return NULL;
}

static const char *field(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static void assert_lab_table(const char *snapshot, const char *kubectl_output)
{
    json_t *items = load_items(snapshot);
    json_t *r = analyze(items, 0);
    char *got = an_nodes_render(r, AN_LAB), *want = read_data(kubectl_output);
    assert_string_equal(got, want);
    free(got);
    free(want);
    json_decref(r);
    json_decref(items);
}

/* Byte for byte what `kubectl get nodes -o custom-columns=NAME:...,GPU:...`
 * printed on the same cluster, header and <none> included. */
static void test_lab_step6_table_matches_kubectl(void **state)
{
    (void)state;
    assert_lab_table("lab-step6.json", "lab-step6-custom-columns.txt");
}

static void test_lab_step8_table_matches_kubectl(void **state)
{
    (void)state;
    assert_lab_table("lab-step8.json", "lab-step8-custom-columns.txt");
}

/* Step 6: lab-node-0 advertises 4 and runs cuda-probe (1 GPU): 3 free; the
 * other two never registered a plugin (absent, no GPU labels: no flag).
 * lab-node-0 has no driver-version label and still takes GPU pods. */
static void test_lab_step6_numbers(void **state)
{
    (void)state;
    json_t *items = load_items("lab-step6.json");
    json_t *r = analyze(items, 0), *back = analyze(items, 1);
    assert_json_equal(back, r);
    const json_t *n0 = node(r, "lab-node-0"), *n1 = node(r, "lab-node-1");
    assert_string_equal(field(n0, "allocatable"), "4");
    assert_string_equal(field(n0, "requested"), "1");
    assert_string_equal(field(n0, "free"), "3");
    assert_string_equal(field(n0, "advertisement"), "advertised");
    assert_string_equal(field(n0, "ready"), "True");
    const json_t *flags = json_object_get(n0, "flags");
    assert_int_equal(json_array_size(flags), 1);
    assert_string_equal(field(json_array_get(flags, 0), "code"), "driver-label-missing");
    assert_true(json_is_null(json_object_get(n1, "allocatable")));
    assert_string_equal(field(n1, "advertisement"), "absent");
    assert_int_equal(json_array_size(json_object_get(n1, "flags")), 0);
    const json_t *s = json_object_get(r, "summary");
    assert_int_equal(json_integer_value(json_object_get(s, "advertising")), 1);
    assert_string_equal(field(s, "free"), "3");
    json_decref(back);
    json_decref(r);
    json_decref(items);
}

static json_t *report_of(const char *squoted_items)
{
    json_t *items = sq_load(squoted_items);
    json_t *r = analyze(items, 0);
    json_decref(items);
    return r;
}

static const char *first_flag(const json_t *report, const char *name)
{
    return field(json_array_get(json_object_get(node(report, name), "flags"), 0), "code");
}

/* gpu-node-facts.md 5: 0 = was registered, plugin gone; absent = never. */
static void test_zero_versus_absent(void **state)
{
    (void)state;
    json_t *r = report_of(
        "[{'kind':'Node','metadata':{'name':'zero','labels':{'nvidia.com/gpu.present':'true',"
        "'nvidia.com/cuda.driver-version.full':'550.54.15'}},'status':{'capacity':"
        "{'nvidia.com/gpu':'0'},'allocatable':{'nvidia.com/gpu':'0'},'conditions':[{'type':"
        "'Ready','status':'True'}]}},"
        "{'kind':'Node','metadata':{'name':'absent','labels':{'nvidia.com/gpu.present':'true'}},"
        "'status':{'conditions':[{'type':'Ready','status':'True'}]}},"
        "{'kind':'Node','metadata':{'name':'cpu-only'},'status':{'conditions':[{'type':'Ready',"
        "'status':'True'}]}},"
        "{'kind':'Node','metadata':{'name':'zero-notready'},'status':{'allocatable':"
        "{'nvidia.com/gpu':'0'},'conditions':[{'type':'Ready','status':'Unknown'}]}}]");
    assert_string_equal(first_flag(r, "zero"), "gpus-lost");
    assert_string_equal(field(node(r, "zero"), "advertisement"), "zero");
    assert_string_equal(first_flag(r, "absent"), "never-registered");
    assert_null(first_flag(r, "cpu-only"));
    assert_null(first_flag(r, "zero-notready")); /* only a Ready node "lost" them */
    char *lab = an_nodes_render(r, AN_LAB);
    assert_non_null(strstr(lab, "\nzero            0\n"));
    assert_non_null(strstr(lab, "\nabsent          <none>\n"));
    free(lab);
    json_decref(r);
}

/* The driver label matters only where GPU pods can still land. */
static void test_driver_label(void **state)
{
    (void)state;
    json_t *r = report_of(
        "[{'kind':'Node','metadata':{'name':'labelled','labels':{"
        "'nvidia.com/cuda.driver-version.full':'550.54.15','nvidia.com/gpu.product':"
        "'NVIDIA-A100-SXM4-40GB','nvidia.com/gpu.memory':'40960','nvidia.com/gpu.count':'4',"
        "'nvidia.com/gpu.replicas':'5','nvidia.com/gpu.sharing-strategy':'time-slicing'}},"
        "'status':{'allocatable':{'nvidia.com/gpu':'20'},'capacity':{'nvidia.com/gpu':'20'},"
        "'conditions':[{'type':'Ready','status':'True'}]}},"
        "{'kind':'Node','metadata':{'name':'unlabelled'},'status':{'allocatable':"
        "{'nvidia.com/gpu':'4'},'conditions':[{'type':'Ready','status':'True'}]}},"
        "{'kind':'Node','metadata':{'name':'cordoned'},'spec':{'unschedulable':true},'status':"
        "{'allocatable':{'nvidia.com/gpu':'4'},'conditions':[{'type':'Ready','status':'True'}]}}]");
    assert_null(first_flag(r, "labelled"));
    assert_string_equal(first_flag(r, "unlabelled"), "driver-label-missing");
    assert_null(first_flag(r, "cordoned"));
    json_t *want = sq_load("{'product':'NVIDIA-A100-SXM4-40GB','memory':'40960','count':'4',"
                           "'replicas':'5','sharing_strategy':'time-slicing','driver_version':"
                           "'550.54.15'}");
    assert_json_equal(json_object_get(node(r, "labelled"), "labels"), want);
    json_decref(want);
    json_decref(r);
}

/* Requests: terminated pods do not count; init containers raise the floor
 * (max(sum of containers = 1, init = 2) = 2); limits stand in for missing
 * requests; unbound pods count nowhere. 8 - 2 - 3 = 3 free. */
static void test_requested_arithmetic(void **state)
{
    (void)state;
    json_t *r = report_of(
        "[{'kind':'Pod','metadata':{'name':'a','namespace':'x'},'spec':{'nodeName':'g',"
        "'initContainers':[{'name':'i','resources':{'requests':{'nvidia.com/gpu':'2'}}}],"
        "'containers':[{'name':'c','resources':{'requests':{'nvidia.com/gpu':'1'}}}]},"
        "'status':{'phase':'Running'}},"
        "{'kind':'Pod','metadata':{'name':'b','namespace':'x'},'spec':{'nodeName':'g',"
        "'containers':[{'name':'c','resources':{'limits':{'nvidia.com/gpu':'3'}}}]},"
        "'status':{'phase':'Pending'}},"
        "{'kind':'Pod','metadata':{'name':'done','namespace':'x'},'spec':{'nodeName':'g',"
        "'containers':[{'name':'c','resources':{'requests':{'nvidia.com/gpu':'4'}}}]},"
        "'status':{'phase':'Succeeded'}},"
        "{'kind':'Pod','metadata':{'name':'failed','namespace':'x'},'spec':{'nodeName':'g',"
        "'containers':[{'name':'c','resources':{'requests':{'nvidia.com/gpu':'4'}}}]},"
        "'status':{'phase':'Failed'}},"
        "{'kind':'Pod','metadata':{'name':'unbound','namespace':'x'},'spec':{"
        "'containers':[{'name':'c','resources':{'requests':{'nvidia.com/gpu':'4'}}}]},"
        "'status':{'phase':'Pending'}},"
        "{'kind':'Node','metadata':{'name':'g'},'status':{'allocatable':{'nvidia.com/gpu':'8'},"
        "'conditions':[{'type':'Ready','status':'True'}]}}]");
    const json_t *g = node(r, "g");
    assert_string_equal(field(g, "requested"), "5");
    assert_string_equal(field(g, "free"), "3");
    assert_int_equal(json_integer_value(json_object_get(g, "pods")), 2);
    json_decref(r);
}

static void test_text_rendering(void **state)
{
    (void)state;
    json_t *items = load_items("lab-step6.json");
    json_t *r = analyze(items, 0);
    char *text = an_nodes_render(r, AN_TEXT);
    const char *verdict = "1 of 3 nodes advertise nvidia.com/gpu: 4 allocatable, 1 requested, "
                          "3 free; 1 flagged\n";
    assert_true(strncmp(text, verdict, strlen(verdict)) == 0);
    assert_non_null(strstr(text, "node lab-node-0 .status.allocatable.nvidia.com/gpu = 4\n"));
    free(text);
    text = an_nodes_render(r, AN_JSON);
    json_t *back = json_loads(text, 0, NULL);
    assert_json_equal(back, r);
    json_decref(back);
    free(text);
    json_decref(r);
    json_decref(items);
}

int main(void)
{
    static const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lab_step6_table_matches_kubectl),
        cmocka_unit_test(test_lab_step8_table_matches_kubectl),
        cmocka_unit_test(test_lab_step6_numbers),
        cmocka_unit_test(test_zero_versus_absent),
        cmocka_unit_test(test_driver_label),
        cmocka_unit_test(test_requested_arithmetic),
        cmocka_unit_test(test_text_rendering),
    };
    return cmocka_run_group_tests_name("analyze_nodes", tests, NULL, NULL);
}
