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

#include "analyze/common.h"
#include "analyze/nodes.h"
#include "kube/json.h"
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

/* The severity of the node's flag `code` ("error", "warning"), or NULL
 * when the node does not carry it. */
static const char *flag_severity(const json_t *report, const char *name, const char *code)
{
    size_t i;
    const json_t *f;
    json_array_foreach(json_object_get(node(report, name), "flags"), i, f)
    {
        if (strcmp(field(f, "code"), code) == 0) return field(f, "severity");
    }
    return NULL;
}

static long long summary_number(const json_t *report, const char *key)
{
    return (long long)json_integer_value(json_object_get(json_object_get(report, "summary"), key));
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
    /* Only a Ready node "lost" them; a NotReady one is flagged for that. */
    assert_null(flag_severity(r, "zero-notready", "gpus-lost"));
    assert_string_equal(first_flag(r, "zero-notready"), "not-ready");
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
    assert_null(flag_severity(r, "cordoned", "driver-label-missing"));
    assert_string_equal(flag_severity(r, "cordoned", "cordoned"), "warning");
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

/* ---- the field states (tests/data/analyze/README.md) ---- */

/* Items without the pod named `drop` (NULL: all). */
static json_t *items_without(const char *snapshot, const char *drop)
{
    json_t *items = load_items(snapshot), *kept = json_array();
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        const char *name = field(json_object_get(it, "metadata"), "name");
        if (drop && strcmp(field(it, "kind"), "Pod") == 0 && strcmp(name, drop) == 0) continue;
        json_array_append(kept, it);
    }
    json_decref(items);
    return kept;
}

static json_t *field_report(const char *snapshot, const char *drop)
{
    json_t *items = items_without(snapshot, drop);
    json_t *r = analyze(items, 0), *back = analyze(items, 1);
    assert_json_equal(back, r);
    json_decref(back);
    json_decref(items);
    return r;
}

/* renameByDefault: true (gpu-node-facts.md 1.4): kubelet keeps the old
 * name at 0 beside nvidia.com/gpu.shared: 16. That is the documented state,
 * not a loss: a warning, naming what plain nvidia.com/gpu pods will meet;
 * an error only while such a pod is Pending for want of it. */
static void test_renamed_is_not_lost(void **state)
{
    (void)state;
    json_t *r = field_report("field-renamed.json", NULL);
    const json_t *n0 = node(r, "lab-node-0");
    assert_null(flag_severity(r, "lab-node-0", "gpus-lost"));
    assert_null(flag_severity(r, "lab-node-0", "never-registered"));
    assert_string_equal(flag_severity(r, "lab-node-0", "renamed"), "warning");
    assert_string_equal(flag_severity(r, "lab-node-0", "plain-requests-pending"), "error");
    const json_t *shared =
        json_object_get(json_object_get(n0, "other_resources"), "nvidia.com/gpu.shared");
    assert_string_equal(field(shared, "allocatable"), "16");
    assert_string_equal(field(n0, "capacity"), "0");
    assert_int_equal(summary_number(r, "flagged"), 1);
    assert_int_equal(summary_number(r, "pending"), 1);
    char *text = an_nodes_render(r, AN_TEXT);
    assert_non_null(strstr(text, "gpu.shared=16"));
    assert_non_null(strstr(text, "pods asking for plain nvidia.com/gpu will not schedule here"));
    assert_non_null(strstr(text, "1 Pending pods ask for plain nvidia.com/gpu"));
    free(text);
    json_decref(r);
    /* Without the Pending plain pod: a warning, nothing flagged. */
    r = field_report("field-renamed.json", "cuda-probe");
    assert_string_equal(flag_severity(r, "lab-node-0", "renamed"), "warning");
    assert_null(flag_severity(r, "lab-node-0", "plain-requests-pending"));
    assert_int_equal(summary_number(r, "flagged"), 0);
    assert_int_equal(summary_number(r, "warned"), 1);
    json_decref(r);
}

/* A node whose kubelet stopped posting status (Ready Unknown,
 * NodeStatusUnknown, the unreachable taints of
 * k8s-cases/real-1.32.13/lifecycle-and-backoff.txt) and a cordoned one:
 * neither offers its GPUs to a new pod. */
static void test_not_ready_and_cordoned(void **state)
{
    (void)state;
    json_t *r = field_report("field-nodes-down.json", NULL);
    const json_t *down = node(r, "lab-node-2"), *cordoned = node(r, "lab-node-1");
    assert_string_equal(flag_severity(r, "lab-node-2", "not-ready"), "error");
    assert_string_equal(field(down, "status"), "NotReady");
    assert_string_equal(field(down, "ready_reason"), "NodeStatusUnknown");
    const json_t *taints = json_object_get(down, "taints");
    assert_true(kube_has_string(taints, "node.kubernetes.io/unreachable:NoSchedule"));
    assert_string_equal(field(down, "free"), "0");
    assert_string_equal(flag_severity(r, "lab-node-1", "cordoned"), "warning");
    assert_string_equal(field(cordoned, "status"), "Ready,SchedulingDisabled");
    assert_string_equal(field(cordoned, "free"), "0");
    assert_string_equal(field(cordoned, "idle"), "4");
    /* 12 allocatable, 1 requested; only lab-node-0's 3 are free. */
    const json_t *s = json_object_get(r, "summary");
    assert_string_equal(field(s, "allocatable"), "12");
    assert_string_equal(field(s, "free"), "3");
    assert_int_equal(summary_number(r, "flagged"), 1);
    char *text = an_nodes_render(r, AN_TEXT);
    assert_non_null(strstr(text, "Ready,SchedulingDisabled"));
    assert_non_null(strstr(text, "lab-node-2: not-ready (error): NotReady (Ready=Unknown "
                                 "NodeStatusUnknown: Kubelet stopped posting node status.)"));
    free(text);
    json_decref(r);
}

/* GPU Operator gates (gpu-node-facts.md 5 and 2.4): a pause the MIG manager
 * left after a failed layout keeps the device plugin off lab-node-1; the
 * driver gate off on lab-node-2 is a warning (a preinstalled driver), its
 * failed driver upgrade an error. */
static void test_operator_gates(void **state)
{
    (void)state;
    json_t *r = field_report("field-operator-gates.json", NULL);
    assert_string_equal(flag_severity(r, "lab-node-1", "gate-paused"), "error");
    assert_string_equal(flag_severity(r, "lab-node-1", "mig-config-failed"), "error");
    assert_null(flag_severity(r, "lab-node-1", "no-device-plugin")); /* the gate says why */
    assert_string_equal(flag_severity(r, "lab-node-2", "gate-off"), "warning");
    assert_string_equal(flag_severity(r, "lab-node-2", "driver-upgrade"), "error");
    assert_int_equal(json_array_size(json_object_get(node(r, "lab-node-0"), "flags")), 0);
    const json_t *op = json_object_get(node(r, "lab-node-1"), "operator");
    assert_string_equal(field(op, "mig_config_state"), "failed");
    assert_true(json_is_null(json_object_get(op, "device_plugin")));
    const json_t *dp =
        json_object_get(json_object_get(node(r, "lab-node-0"), "operator"), "device_plugin");
    assert_string_equal(field(dp, "status"), "Running");
    char *text = an_nodes_render(r, AN_TEXT);
    assert_non_null(strstr(text, "  lab-node-1: gpu.deploy.device-plugin=paused-for-mig-change"));
    assert_non_null(strstr(text, "lab-node-2: gate-off (warning): GPU Operator gate "
                                 "nvidia.com/gpu.deploy.driver=false"));
    free(text);
    json_decref(r);
}

/* MIG mixed (2.3): the node serves mig-* resources; plain nvidia.com/gpu is
 * absent there, which is not a plugin that never registered. */
static void test_mig_node_is_not_unregistered(void **state)
{
    (void)state;
    json_t *r = field_report("field-mig.json", NULL);
    assert_null(flag_severity(r, "lab-node-0", "never-registered"));
    assert_string_equal(flag_severity(r, "lab-node-0", "mig-resources"), "warning");
    const json_t *others = json_object_get(node(r, "lab-node-0"), "other_resources");
    assert_int_equal(json_object_size(others), 3);
    json_decref(r);
}

/* A flag's message is formatted by an_format_args, whose Korean formats
 * write both forms of a particle after a value: the form must come from the
 * value ("lab-node-0" ends in 영, "nvidia.com/gpu" in 유), not stay doubled. */
static void test_flag_particles_follow_the_value(void **state)
{
    (void)state;
    char out[128];
    json_t *args = json_pack("[s]", "lab-node-0");
    an_format_args(out, sizeof out, "%s을(를) 비웁니다", args);
    assert_string_equal(out, "lab-node-0을 비웁니다");
    json_decref(args);
    args = json_pack("[s, s]", "nvidia.com/gpu", "nvidia.com/gpu.shared");
    an_format_args(out, sizeof out, "%s이(가) 0, %s(으)로 제공", args);
    assert_string_equal(out, "nvidia.com/gpu가 0, nvidia.com/gpu.shared로 제공");
    json_decref(args);
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
        cmocka_unit_test(test_renamed_is_not_lost),
        cmocka_unit_test(test_not_ready_and_cordoned),
        cmocka_unit_test(test_operator_gates),
        cmocka_unit_test(test_mig_node_is_not_unregistered),
        cmocka_unit_test(test_flag_particles_follow_the_value),
    };
    return cmocka_run_group_tests_name("analyze_nodes", tests, NULL, NULL);
}
