/* The NVIDIA device plugin's container on a simulated node
 * (src/agents/devplugin.h): which config it reads, and what it registers,
 * counted by an_slots (the code of `gpuop slots`): the incident's 4 GPUs
 * with 5 replicas are 20 nvidia.com/gpu (gpu-node-facts.md 1.4, 1.5). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <string.h>

#include "agents/devplugin.h"

#define NODE "{'metadata':{'name':'lab-node-1','labels':{}}}"

/* The lab's step 7 ConfigMap, and a renaming one with an odd key. */
#define CONFIGMAPS                                                                                 \
    "[{'metadata':{'name':'time-slicing-config','namespace':'gpu-operator'},'data':{'any':"        \
    "'version: v1\\nsharing:\\n  timeSlicing:\\n    failRequestsGreaterThanOne: true\\n    "       \
    "resources:\\n    - name: nvidia.com/gpu\\n      replicas: 5\\n'}},"                           \
    "{'metadata':{'name':'shared','namespace':'gpu-operator'},'data':{'cfg':"                      \
    "'version: v1\\nsharing:\\n  timeSlicing:\\n    renameByDefault: true\\n    resources:\\n"     \
    "    - name: nvidia.com/gpu\\n      replicas: 4\\n'}},"                                        \
    "{'metadata':{'name':'bad','namespace':'gpu-operator'},'data':{'any':"                         \
    "'version: v1\\nsharing:\\n  timeSlicing:\\n    resources:\\n    - name: nvidia.com/gpu\\n"    \
    "      replicas: 1\\n'}}]"

#define PLUGIN "{'name':'nvidia-device-plugin','image':'nvcr.io/nvidia/k8s-device-plugin:v0.17.0'"

static int resources(const char *pod_json, int gpus, ag_resource *out, size_t *n, gp_error *err)
{
    json_t *pod = sq_load(pod_json), *node = sq_load(NODE), *cms = sq_load(CONFIGMAPS);
    int rc = ag_devplugin_resources(pod, node, cms, gpus, "NVIDIA-A100-SXM4-40GB", out, 8, n, err);
    json_decref(pod);
    json_decref(node);
    json_decref(cms);
    return rc;
}

static void test_without_a_config_every_gpu_once(void **state)
{
    (void)state;
    const char *pod =
        "{'metadata':{'namespace':'gpu-operator'},'spec':{'containers':[" PLUGIN "}]}}";
    json_t *p = sq_load(pod);
    char container[64];
    assert_true(ag_devplugin_in_pod(p, container, sizeof container));
    assert_string_equal(container, "nvidia-device-plugin");
    json_decref(p);
    ag_resource r[8];
    size_t n;
    gp_error err = {0};
    assert_int_equal(resources(pod, 4, r, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(r[0].name, "nvidia.com/gpu");
    assert_int_equal(r[0].count, 4);
    /* NVML finds no device: nothing registers */
    assert_int_equal(resources(pod, 0, r, &n, &err), 0);
    assert_int_equal(n, 0);
}

/* The GPU Operator's config-manager: CONFIG_FILE_SRCDIR holds the mounted
 * ConfigMap, DEFAULT_CONFIG picks its key. */
static void test_the_operators_time_slicing_config_makes_20_of_4(void **state)
{
    (void)state;
    const char *pod =
        "{'metadata':{'namespace':'gpu-operator'},'spec':{'containers':[" PLUGIN "},"
        "{'name':'config-manager','image':'nvcr.io/nvidia/k8s-device-plugin:v0.17.0-cm','env':["
        "{'name':'CONFIG_FILE_SRCDIR','value':'/available-configs'},"
        "{'name':'DEFAULT_CONFIG','value':'any'}],'volumeMounts':[{'name':'cfgs','mountPath':"
        "'/available-configs'}]}],'volumes':[{'name':'cfgs','configMap':{'name':"
        "'time-slicing-config'}}]}}";
    ag_resource r[8];
    size_t n;
    gp_error err = {0};
    if (resources(pod, 4, r, &n, &err) != 0) fail_msg("%s", err.text);
    assert_int_equal(n, 1);
    assert_string_equal(r[0].name, "nvidia.com/gpu");
    assert_int_equal(r[0].count, 20);
}

/* --config-file on a ConfigMap volume whose items map the key to the path:
 * renameByDefault serves nvidia.com/gpu.shared. */
static void test_a_config_file_from_an_items_mapping_renames(void **state)
{
    (void)state;
    const char *pod = "{'metadata':{'namespace':'gpu-operator'},'spec':{'containers':[" PLUGIN
                      ",'args':['--config-file=/etc/dp/config.yaml'],'volumeMounts':[{'name':"
                      "'c','mountPath':'/etc/dp'}]}],'volumes':[{'name':'c','configMap':{'name':"
                      "'shared','items':[{'key':'cfg','path':'config.yaml'}]}}]}}";
    ag_resource r[8];
    size_t n;
    gp_error err = {0};
    if (resources(pod, 4, r, &n, &err) != 0) fail_msg("%s", err.text);
    assert_int_equal(n, 1);
    assert_string_equal(r[0].name, "nvidia.com/gpu.shared");
    assert_int_equal(r[0].count, 16);
}

static void test_a_config_it_cannot_read_stops_the_plugin(void **state)
{
    (void)state;
    ag_resource r[8];
    size_t n;
    gp_error err = {0};
    const char *missing = "{'metadata':{'namespace':'gpu-operator'},'spec':{'containers':[" PLUGIN
                          ",'env':[{'name':'CONFIG_FILE','value':'/etc/dp/any'}],'volumeMounts':"
                          "[{'name':'c','mountPath':'/etc/dp'}]}],'volumes':[{'name':'c',"
                          "'configMap':{'name':'nope'}}]}}";
    assert_int_equal(resources(missing, 4, r, &n, &err), -1);
    assert_string_equal(err.text,
                        "MountVolume.SetUp failed for volume \"c\" : configmap \"nope\" not found");
    memset(&err, 0, sizeof err);
    const char *bad = "{'metadata':{'namespace':'gpu-operator'},'spec':{'containers':[" PLUGIN
                      ",'env':[{'name':'CONFIG_FILE','value':'/etc/dp/any'}],'volumeMounts':"
                      "[{'name':'c','mountPath':'/etc/dp'}]}],'volumes':[{'name':'c',"
                      "'configMap':{'name':'bad'}}]}}";
    assert_int_equal(resources(bad, 4, r, &n, &err), -1);
    /* the plugin's own validation (replicas.go, gpu-node-facts.md 1.2) */
    if (!strstr(err.text, "number of replicas must be >= 2")) fail_msg("got '%s'", err.text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_without_a_config_every_gpu_once),
        cmocka_unit_test(test_the_operators_time_slicing_config_makes_20_of_4),
        cmocka_unit_test(test_a_config_file_from_an_items_mapping_renames),
        cmocka_unit_test(test_a_config_it_cannot_read_stops_the_plugin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
