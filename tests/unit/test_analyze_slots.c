/* an_slots and the device plugin config: every expected number is written
 * here from gpu-node-facts.md (sections 1.1-1.7, 2.1-2.3) and lab.md step 7,
 * with the arithmetic in the comments; error texts are the plugin's and the
 * config-manager's own, as section 1.2 and 1.5 quote them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/devplugin_config.h"
#include "analyze/mig_internal.h"
#include "analyze/slots.h"
#include "util/file.h"
#include "util/yaml_json.h"

#define DATA TEST_DATA_DIR "/slots/"

/* ---- helpers ---- */

static char *fixture(const char *name, size_t *len)
{
    gp_error err = {0};
    char path[512];
    snprintf(path, sizeof path, DATA "%s", name);
    char *text = gp_read_file(path, len, &err);
    if (!text) print_error("%s\n", err.text);
    assert_non_null(text);
    return text;
}

static json_t *configmap_fixture(const char *name)
{
    json_t *docs = NULL;
    gp_error err = {0};
    char path[512];
    snprintf(path, sizeof path, DATA "%s", name);
    if (gp_yaml_load_file(path, &docs, NULL, &err) != 0) print_error("%s\n", err.text);
    assert_non_null(docs);
    json_t *cm = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return cm;
}

/* Runs an_slots on a config fixture (file name used as config_name). */
static json_t *slots_file(const char *name, an_slots_input in)
{
    size_t len;
    char *text = fixture(name, &len);
    in.config_text = text;
    in.config_len = len;
    in.config_name = name;
    gp_error err = {0};
    json_t *r = an_slots(&in, &err);
    free(text);
    if (!r) print_error("an_slots: %s\n", err.text);
    assert_non_null(r);
    return r;
}

static long long num(const json_t *r, const char *key)
{
    const json_t *v = json_object_get(r, key);
    if (!json_is_integer(v)) print_error("%s is not an integer\n", key);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

static const char *s(const json_t *r, const char *key)
{
    const char *v = json_string_value(json_object_get(r, key));
    if (!v) print_error("%s is not a string\n", key);
    assert_non_null(v);
    return v;
}

static const char *config_error(const json_t *r)
{
    return s(json_object_get(r, "config_error"), "message");
}

static void assert_has_warning(const json_t *r, const char *text)
{
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(r, "warnings"), i, w)
    {
        if (strcmp(json_string_value(w), text) == 0) return;
    }
    char *all = json_test_dump(json_object_get(r, "warnings"));
    print_error("no warning\n  %s\namong %s\n", text, all);
    free(all);
    fail();
}

/* The lab's node: lab-node-1 advertising 20 after the change (lab.md 7). */
static const char lab_node[] = "{'metadata':{'name':'lab-node-1','labels':{}},"
                               "'status':{'capacity':{'nvidia.com/gpu':'20'},"
                               "'allocatable':{'nvidia.com/gpu':'20'}}}";

/* ---- lab step 7 ---- */

static void test_lab_configmap(void **state)
{
    (void)state;
    json_t *cm = configmap_fixture("lab-configmap.yaml");
    json_t *node = sq_load(lab_node);
    an_slots_input in = {.configmap = cm, .node = node, .gpus = 4, .gpu_model = "A100-40GB"};
    gp_error err = {0};
    json_t *r = an_slots(&in, &err);
    if (!r) print_error("%s\n", err.text);
    assert_non_null(r);
    assert_true(json_is_null(json_object_get(r, "config_error")));
    /* One key, no label, no default: the "single" fallback picks "any". */
    assert_string_equal(s(json_object_get(r, "config"), "key"), "any");
    assert_string_equal(s(json_object_get(r, "config"), "selected_by"), "single");
    assert_int_equal(num(r, "physical_gpus"), 4);
    assert_int_equal(num(r, "replicas"), 5);
    assert_int_equal(num(r, "advertised_computed"), 20); /* 4 x 5 */
    assert_int_equal(num(json_object_get(r, "advertised_observed"), "capacity"), 20);
    assert_true(json_is_true(json_object_get(r, "advertised_agrees")));
    assert_int_equal(num(r, "vram_per_gpu_mib"), 40 * 1024);
    assert_int_equal(num(r, "vram_guaranteed_per_slot_mib"), 0);
    assert_int_equal(num(r, "vram_shared_per_gpu_mib"), 40 * 1024);
    assert_string_equal(s(r, "isolation"), "none");
    assert_string_equal(s(r, "sharing_strategy"), "time-slicing");

    char *lab = an_slots_render(r, AN_LAB);
    assert_string_equal(lab, "PHYSICAL_GPUS=4\nREPLICAS=5\nADVERTISED=20\nVRAM_PER_GPU_GIB=40\n"
                             "VRAM_GUARANTEED_PER_SLOT_GIB=0\nVRAM_SHARED_PER_GPU_GIB=40\n"
                             "ISOLATION=none\n");
    free(lab);

    /* failRequestsGreaterThanOne: true, plugin v0.17.0 (>= v0.15.0): 1.3's
     * message, wrapped by kubelet. */
    const json_t *rq = json_object_get(r, "request_of_2");
    assert_string_equal(s(rq, "outcome"), "rejected");
    assert_string_equal(s(rq, "pod_phase"), "Failed");
    assert_string_equal(s(rq, "reason"), "UnexpectedAdmissionError");
    assert_string_equal(s(rq, "message"),
                        "Allocate failed due to rpc error: code = Unknown desc = invalid "
                        "allocation request for \"nvidia.com/gpu\": invalid request: maximum "
                        "request size for shared resources is 1; found 2, which is unexpected");

    char *text = an_slots_render(r, AN_TEXT);
    assert_non_null(strstr(text, "20 slots, 0 GiB guaranteed memory each"));
    assert_non_null(strstr(text, "1g.5gb"));
    assert_non_null(strstr(text, "UnexpectedAdmissionError"));
    free(text);
    char *js = an_slots_render(r, AN_JSON);
    json_t *back = json_loads(js, 0, NULL);
    assert_json_equal(back, r);
    json_decref(back);
    free(js);
    json_decref(r);
    json_decref(node);
    json_decref(cm);
}

/* The plugin before v0.15 words the rejection differently (1.3). */
static void test_old_plugin_message(void **state)
{
    (void)state;
    json_t *cm = configmap_fixture("lab-configmap.yaml");
    an_slots_input in = {
        .configmap = cm, .gpus = 4, .gpu_model = "A100-40GB", .plugin_version = "v0.14.5"};
    gp_error err = {0};
    json_t *r = an_slots(&in, &err);
    assert_non_null(r);
    assert_string_equal(s(json_object_get(r, "request_of_2"), "message"),
                        "Allocate failed due to rpc error: code = Unknown desc = request for "
                        "'nvidia.com/gpu: 2' too large: maximum request size for shared "
                        "resources is 1, which is unexpected");
    json_decref(r);
    json_decref(cm);
}

/* ---- sharing variants ---- */

/* renameByDefault: served as nvidia.com/gpu.shared; the docs' node shows
 * nvidia.com/gpu: 0 next to nvidia.com/gpu.shared: 16 (4 GPUs x 4). */
static void test_rename_by_default(void **state)
{
    (void)state;
    json_t *node =
        sq_load("{'metadata':{'name':'n','labels':{'nvidia.com/gpu.count':'4',"
                "'nvidia.com/gpu.product':'NVIDIA-A100-SXM4-40GB',"
                "'nvidia.com/gpu.memory':'40960'}},"
                "'status':{'capacity':{'nvidia.com/gpu':'0','nvidia.com/gpu.shared':'16'}}}");
    json_t *r = slots_file("rename.yaml", (an_slots_input){.node = node});
    assert_string_equal(s(r, "resource"), "nvidia.com/gpu");
    assert_string_equal(s(r, "resource_served"), "nvidia.com/gpu.shared");
    assert_int_equal(num(r, "advertised_computed"), 16);
    const json_t *obs = json_object_get(r, "advertised_observed");
    assert_int_equal(num(obs, "capacity"), 16);
    assert_int_equal(num(obs, "base_name_capacity"), 0);
    assert_true(json_is_true(json_object_get(r, "advertised_agrees")));
    /* Renamed: gpu.* labels kept, no -SHARED (1.6). */
    const json_t *l = json_object_get(r, "expected_labels");
    assert_string_equal(s(l, "nvidia.com/gpu.product"), "NVIDIA-A100-SXM4-40GB");
    assert_string_equal(s(l, "nvidia.com/gpu.replicas"), "4");
    assert_string_equal(s(l, "nvidia.com/gpu.count"), "4");
    assert_string_equal(s(l, "nvidia.com/gpu.sharing-strategy"), "time-slicing");
    /* Not set, time-slicing: not enforced, the request is granted. */
    assert_string_equal(s(json_object_get(r, "request_of_2"), "outcome"), "granted");
    json_decref(r);
    json_decref(node);
}

/* MPS (1.7): limit = 40960 MiB / 4 = 10240 MiB; threads 100 / 4 = 25 %;
 * failRequestsGreaterThanOne forced on up to v0.19. */
static void test_mps(void **state)
{
    (void)state;
    json_t *r = slots_file("mps.yaml", (an_slots_input){.gpus = 2, .gpu_model = "A100-40GB"});
    assert_string_equal(s(r, "sharing_strategy"), "mps");
    assert_int_equal(num(r, "advertised_computed"), 8); /* 2 x 4 */
    assert_int_equal(num(r, "vram_guaranteed_per_slot_mib"), 10240);
    assert_int_equal(num(r, "vram_shared_per_gpu_mib"), 0);
    assert_int_equal(num(r, "mps_active_thread_percentage"), 25);
    assert_string_equal(s(r, "isolation"), "memory-limit");
    assert_string_equal(s(json_object_get(r, "request_of_2"), "outcome"), "rejected");
    char *lab = an_slots_render(r, AN_LAB);
    assert_non_null(strstr(lab, "VRAM_GUARANTEED_PER_SLOT_GIB=10\n"));
    free(lab);
    json_decref(r);
}

/* Both blocks: MPS is the active one (1.2). 40960 / 3 = 13653 MiB (integer
 * division), 13653 / 1024 = 13.33 GiB; threads 100 / 3 = 33. */
static void test_mps_takes_precedence(void **state)
{
    (void)state;
    json_t *r = slots_file("both.json", (an_slots_input){.gpus = 4, .gpu_model = "A100-40GB"});
    assert_string_equal(s(r, "sharing_strategy"), "mps");
    assert_int_equal(num(r, "replicas"), 3);
    assert_int_equal(num(r, "advertised_computed"), 12);
    assert_int_equal(num(r, "vram_guaranteed_per_slot_mib"), 13653);
    assert_int_equal(num(r, "mps_active_thread_percentage"), 33);
    char *lab = an_slots_render(r, AN_LAB);
    assert_non_null(strstr(lab, "VRAM_GUARANTEED_PER_SLOT_GIB=13.3\n"));
    free(lab);
    json_decref(r);
}

/* ---- config errors and warnings ---- */

static void test_replicas_one(void **state)
{
    (void)state;
    json_t *r = slots_file("replicas-1.yaml", (an_slots_input){.gpus = 4, .gpu_model = "A100"});
    /* "      replicas: 1" is line 6; the value starts at column 17. */
    assert_string_equal(config_error(r), "replicas-1.yaml:6:17: number of replicas must be >= 2");
    assert_string_equal(s(json_object_get(r, "config_error"), "plugin_log"),
                        "error starting plugins: unable to load config: unable to finalize "
                        "config: unable to parse config file: error parsing config file: "
                        "unmarshal error: error unmarshaling JSON: while decoding JSON: number of "
                        "replicas must be >= 2");
    assert_true(json_is_null(json_object_get(r, "advertised_computed")));
    char *lab = an_slots_render(r, AN_LAB);
    assert_string_equal(lab,
                        "CONFIG_ERROR=replicas-1.yaml:6:17: number of replicas must be >= 2\n");
    free(lab);
    json_decref(r);
}

/* The classic: the plugin ignores it silently (1.1), so the default
 * (not enforced) applies and a request for 2 is granted. */
static void test_misspelt_key(void **state)
{
    (void)state;
    json_t *r = slots_file("misspelt.yaml", (an_slots_input){.gpus = 4, .gpu_model = "A100"});
    assert_true(json_is_null(json_object_get(r, "config_error")));
    assert_has_warning(r, "misspelt.yaml:4:32: 'failRequestGreaterThanOne' is not a field of "
                          "sharing.timeSlicing and is ignored by the plugin; did you mean "
                          "'failRequestsGreaterThanOne'?");
    assert_string_equal(s(json_object_get(r, "request_of_2"), "outcome"), "granted");
    json_decref(r);
}

static void test_devices_and_rename_ignored(void **state)
{
    (void)state;
    json_t *r = slots_file("devices-rename.yaml", (an_slots_input){.gpus = 4, .gpu_model = "A100"});
    assert_has_warning(r, "devices-rename.yaml:5:5: Setting the 'rename' field in "
                          "sharing.timeSlicing.resources is not yet supported in the config. "
                          "Ignoring...");
    assert_has_warning(r, "devices-rename.yaml:5:5: Customizing the 'devices' field in "
                          "sharing.timeSlicing.resources is not yet supported in the config. "
                          "Ignoring...");
    /* Devices are forced to all and the name is prefixed: 4 x 3 = 12 of
     * nvidia.com/gpu, not nvidia.com/gpu-small on 2 GPUs. */
    assert_string_equal(s(r, "resource_served"), "nvidia.com/gpu");
    assert_int_equal(num(r, "advertised_computed"), 12);
    json_decref(r);
}

static void test_config_errors(void **state)
{
    (void)state;
    an_slots_input hw = {.gpus = 4, .gpu_model = "A100"};
    json_t *r = slots_file("no-resources.yaml", hw);
    assert_string_equal(config_error(r), "no-resources.yaml:4:5: no resources specified");
    json_decref(r);
    r = slots_file("bad-version.yaml", hw);
    assert_string_equal(config_error(r), "bad-version.yaml:1:10: unknown version: v2");
    assert_string_equal(s(json_object_get(r, "config_error"), "plugin_log"),
                        "error starting plugins: unable to load config: unable to finalize "
                        "config: unable to parse config file: error parsing config file: unknown "
                        "version: v2");
    json_decref(r);
    r = slots_file("mps-mixed.yaml", hw);
    assert_string_equal(config_error(r),
                        "mps-mixed.yaml:6:5: using --mig-strategy=mixed is not supported with MPS");
    json_decref(r);
}

typedef struct {
    const char *config;
    const char *error; /* NULL: valid */
} config_case;

/* Rules of 1.2, one per line, through an_dp_config_parse directly. */
/* Columns of the one-line flow cases are where the value token starts
 * (counted with str.index(token) + 1). */
static const config_case config_cases[] = {
    {"", NULL},
    {"version: v1\n", NULL},
    /* An empty value sits right after its key: line 2, column 15. */
    {"sharing:\n  timeSlicing:\n", "c:2:15: no resources specified"},
    {"sharing:\n  mps:\n", NULL},
    {"sharing:\n  timeSlicing:\n    resources: []\n", "c:3:16: no resources specified"},
    {"sharing:\n  timeSlicing:\n    resources:\n    - replicas: 2\n",
     "c:4:7: no resource name specified"},
    {"sharing:\n  timeSlicing:\n    resources:\n    - name: gpu\n", "c:4:7: no replicas specified"},
    {"sharing: {timeSlicing: {resources: [{name: gpu, replicas: \"2\"}]}}",
     "c:1:59: json: cannot unmarshal string into Go value of type int"},
    {"sharing: {timeSlicing: {resources: [{name: gpu, replicas: 2.5}]}}",
     "c:1:59: json: cannot unmarshal number 2.5 into Go value of type int"},
    {"sharing: {timeSlicing: {resources: [{name: gpu, replicas: 2, devices: foo}]}}",
     "c:1:71: devices set as 'foo' but the only valid string input is 'all'"},
    {"sharing: {timeSlicing: {resources: [{name: gpu, replicas: 2, devices: 0}]}}",
     "c:1:71: devices set as '0' but a count of devices must be > 0"},
    {"sharing: {timeSlicing: {resources: [{name: gpu, replicas: 2, devices: [x]}]}}",
     "c:1:72: unsupported type for device in devices list: x, string"},
    {"sharing: {timeSlicing: {resources: [{name: gpu, replicas: 2, devices: [0, '1:0', "
     "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763]}]}}",
     NULL},
    {"sharing: {timeSlicing: {resources: [{name: Bad_Name, replicas: 2}]}}",
     "c:1:44: incorrect format for resource name 'nvidia.com/Bad_Name': [a lowercase RFC 1123 "
     "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
     "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]"},
    /* 11 + 53 = 64 characters > 63. */
    {"sharing: {timeSlicing: {resources: [{name: "
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, replicas: 2}]}}",
     "c:1:44: fully-qualified resource name must be 63 characters or less: "
     "nvidia.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
    /* 11 + 52 = 63: accepted. */
    {"sharing: {timeSlicing: {resources: [{name: "
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, replicas: 2}]}}",
     NULL},
    {"sharing: {timeSlicing: {failRequestsGreaterThanOne: \"true\", resources: []}}",
     "c:1:53: json: cannot unmarshal string into Go value of type bool"},
    {"version: 1\n", "c:1:10: unknown version: 1"},
    {"a: [1\n", "c:2:1: did not find expected ',' or ']'"},
};

static void test_config_rules(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof config_cases / sizeof *config_cases; i++) {
        const config_case *c = &config_cases[i];
        gp_error err = {0};
        json_t *cfg = an_dp_config_parse(c->config, strlen(c->config), "c", NULL, &err);
        if (c->error) {
            if (cfg || strcmp(err.text, c->error) != 0)
                print_error("case %zu: %s\n  want %s\n   got %s\n", i, c->config, c->error,
                            cfg ? "(valid)" : err.text);
            assert_null(cfg);
            assert_string_equal(err.text, c->error);
        } else {
            if (!cfg) print_error("case %zu: %s\n  %s\n", i, c->config, err.text);
            assert_non_null(cfg);
            json_decref(cfg);
        }
    }
}

/* yes is a boolean in YAML 1.1; a bare resource name gets the prefix. */
static void test_config_normalised(void **state)
{
    (void)state;
    const char text[] = "sharing:\n  timeSlicing:\n    renameByDefault: yes\n    resources:\n"
                        "    - name: gpu\n      replicas: 0x4\n";
    gp_error err = {0};
    json_t *cfg = an_dp_config_parse(text, strlen(text), "c", NULL, &err);
    assert_non_null(cfg);
    json_t *want = sq_load("{'strategy':'time-slicing','block':'sharing.timeSlicing',"
                           "'renameByDefault':true,'failRequestsGreaterThanOne':null,"
                           "'resources':[{'name':'nvidia.com/gpu','replicas':4,"
                           "'served':'nvidia.com/gpu.shared','line':5,'col':7}]}");
    assert_json_equal(json_object_get(cfg, "sharing"), want);
    json_decref(want);
    json_decref(cfg);
}

/* ---- MIG ---- */

/* single: MIG devices are nvidia.com/gpu; GFD's count is the MIG device
 * count (4 GPUs x 7 x 1g.5gb = 28) and its product <model>-MIG-<profile>,
 * -SHARED when shared. 28 x 2 replicas = 56. The count says nothing of the
 * physical GPUs. */
static void test_mig_single(void **state)
{
    (void)state;
    json_t *node = sq_load("{'metadata':{'name':'m','labels':{'nvidia.com/gpu.count':'28',"
                           "'nvidia.com/gpu.product':'NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED',"
                           "'nvidia.com/gpu.memory':'4864','nvidia.com/mig.strategy':'single'}},"
                           "'status':{'capacity':{'nvidia.com/gpu':'56'}}}");
    json_t *r = slots_file("mig-single.yaml", (an_slots_input){.node = node});
    assert_string_equal(s(r, "mig_strategy"), "single");
    assert_string_equal(s(r, "resource_served"), "nvidia.com/gpu");
    assert_string_equal(s(r, "gpu_model"), "A100-40GB");
    assert_int_equal(num(r, "devices"), 28);
    assert_true(json_is_null(json_object_get(r, "physical_gpus")));
    assert_int_equal(num(r, "advertised_computed"), 56);
    assert_true(json_is_true(json_object_get(r, "advertised_agrees")));
    assert_int_equal(num(r, "vram_per_gpu_mib"), 4864);
    assert_string_equal(s(json_object_get(r, "expected_labels"), "nvidia.com/gpu.product"),
                        "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED");
    json_decref(r);
    json_decref(node);
}

/* mixed: the resource is nvidia.com/mig-1g.5gb, its labels
 * nvidia.com/mig-1g.5gb.*; 14 instances x 2 = 28. Without a memory label
 * the profile's name gives 5 GiB. */
static void test_mig_mixed(void **state)
{
    (void)state;
    json_t *node = sq_load("{'metadata':{'name':'m','labels':{'nvidia.com/mig-1g.5gb.count':'14',"
                           "'nvidia.com/gpu.product':'NVIDIA-A100-SXM4-40GB',"
                           "'nvidia.com/mig.strategy':'mixed'}},"
                           "'status':{'capacity':{'nvidia.com/mig-1g.5gb':'28'}}}");
    json_t *r = slots_file("mig-mixed.yaml", (an_slots_input){.node = node});
    assert_string_equal(s(r, "resource"), "nvidia.com/mig-1g.5gb");
    assert_string_equal(s(r, "resource_served"), "nvidia.com/mig-1g.5gb");
    assert_int_equal(num(r, "devices"), 14);
    assert_string_equal(s(json_object_get(r, "sources"), "devices"), "node-label");
    assert_int_equal(num(r, "advertised_computed"), 28);
    assert_int_equal(num(r, "vram_per_gpu_mib"), 5 * 1024);
    assert_string_equal(s(json_object_get(r, "sources"), "vram"), "mig-profile");
    const json_t *l = json_object_get(r, "expected_labels");
    assert_string_equal(s(l, "nvidia.com/mig-1g.5gb.replicas"), "2");
    assert_string_equal(s(l, "nvidia.com/mig-1g.5gb.count"), "14");
    json_decref(r);
    json_decref(node);
}

/* 2.1: A100-40GB profiles and the balanced layout; 2.3 mixed names. */
static void test_mig_table(void **state)
{
    (void)state;
    char profile[32];
    const an_gpu_model *m = an_gpu_model_find("NVIDIA-A100-SXM4-40GB", 0, profile, sizeof profile);
    assert_non_null(m);
    json_t *j = an_mig_json(m);
    json_t *want = sq_load(
        "{'model':'A100-40GB','slices':{'compute':7,'memory':8},'resource_single':'nvidia.com/gpu',"
        "'balanced':[{'profile':'1g.5gb','count':2},{'profile':'2g.10gb','count':1},"
        "{'profile':'3g.20gb','count':1}],'profiles':["
        "{'profile':'1g.5gb','max_instances':7,'memory_gib':5,'compute_slices':1,'memory_slices':1,"
        "'resource_mixed':'nvidia.com/mig-1g.5gb'},"
        "{'profile':'1g.5gb+me','max_instances':1,'memory_gib':5,'compute_slices':1,"
        "'memory_slices':1,'resource_mixed':'nvidia.com/mig-1g.5gb.me'},"
        "{'profile':'1g.10gb','max_instances':4,'memory_gib':10,'compute_slices':1,"
        "'memory_slices':2,'resource_mixed':'nvidia.com/mig-1g.10gb'},"
        "{'profile':'2g.10gb','max_instances':3,'memory_gib':10,'compute_slices':2,"
        "'memory_slices':2,'resource_mixed':'nvidia.com/mig-2g.10gb'},"
        "{'profile':'3g.20gb','max_instances':2,'memory_gib':20,'compute_slices':3,"
        "'memory_slices':4,'resource_mixed':'nvidia.com/mig-3g.20gb'},"
        "{'profile':'4g.20gb','max_instances':1,'memory_gib':20,'compute_slices':4,"
        "'memory_slices':4,'resource_mixed':'nvidia.com/mig-4g.20gb'},"
        "{'profile':'7g.40gb','max_instances':1,'memory_gib':40,'compute_slices':7,"
        "'memory_slices':8,'resource_mixed':'nvidia.com/mig-7g.40gb'}]}");
    assert_json_equal(j, want);
    json_decref(want);
    json_decref(j);
    /* Names: GFD labels, short names, memory picking the variant. */
    assert_string_equal(an_gpu_model_find("A100-80GB", 0, NULL, 0)->name, "A100-80GB");
    assert_string_equal(an_gpu_model_find("a100", 0, NULL, 0)->name, "A100-40GB");
    assert_string_equal(an_gpu_model_find("A100", 81920, NULL, 0)->name, "A100-80GB");
    assert_string_equal(an_gpu_model_find("NVIDIA-H100-80GB-HBM3", 81559, NULL, 0)->name,
                        "H100-80GB");
    assert_string_equal(an_gpu_model_find("NVIDIA-H100-NVL", 0, NULL, 0)->name, "H100-NVL-94GB");
    assert_string_equal(an_gpu_model_find("Tesla-T4", 0, NULL, 0)->name, "T4-16GB");
    assert_string_equal(an_gpu_model_find("NVIDIA-A10", 0, NULL, 0)->name, "A10-24GB");
    assert_string_equal(an_gpu_model_find("NVIDIA-H200", 0, NULL, 0)->name, "H200-141GB");
    assert_non_null(
        an_gpu_model_find("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED", 0, profile, sizeof profile));
    assert_string_equal(profile, "1g.5gb");
    assert_null(an_gpu_model_find("RTX-9999", 0, NULL, 0));
    assert_null(an_mig_json(an_gpu_model_find("T4", 0, NULL, 0)));
}

/* ---- ConfigMap key selection (1.5) ---- */

typedef struct {
    const char *configmap;
    const char *label;
    const char *default_config;
    const char *fallbacks;
    const char *key; /* expected; NULL: the empty config */
    const char *how; /* NULL: an error */
    const char *error;
} select_case;

static const select_case select_cases[] = {
    {"{'data':{'a':'','b':''}}", "b", "a", NULL, "b", "label", NULL},
    {"{'data':{'a':'','b':''}}", NULL, "a", NULL, "a", "default", NULL},
    {"{'data':{'a':'','default':''}}", NULL, NULL, NULL, "default", "named", NULL},
    {"{'data':{'any':''}}", NULL, NULL, NULL, "any", "single", NULL},
    {"{'binaryData':{'only':''}}", NULL, NULL, NULL, "only", "single", NULL},
    {"{'data':{'a':'','b':''}}", NULL, NULL, "empty", NULL, "empty", NULL},
    {"{'data':{'a':'','b':''}}", "c", NULL, NULL, NULL, NULL, "specified config c does not exist"},
    /* The config-manager prints the (empty) label, not the default. */
    {"{'data':{'a':''}}", NULL, "c", NULL, NULL, NULL, "specified config  does not exist"},
    {"{'data':{}}", NULL, NULL, NULL, NULL, NULL, "no configuration files available"},
    {"{}", "a", NULL, NULL, NULL, NULL, "no configuration files available"},
    {"{'data':{'a':'','b':''}}", NULL, NULL, "named,single", NULL, NULL,
     "no config was set, no default was provided, and all fallbacks failed"},
    {"{'data':{'a':'','b':''}}", NULL, NULL, "named,bogus", NULL, NULL,
     "unknown fallback strategy: bogus"},
};

static void test_configmap_key_selection(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof select_cases / sizeof *select_cases; i++) {
        const select_case *c = &select_cases[i];
        json_t *cm = sq_load(c->configmap);
        const char *key = "unset", *how = "unset";
        gp_error err = {0};
        int rc =
            an_dp_config_select(cm, c->label, c->default_config, c->fallbacks, &key, &how, &err);
        if (c->how) {
            if (rc != 0) print_error("case %zu: %s\n", i, err.text);
            assert_int_equal(rc, 0);
            assert_string_equal(how, c->how);
            if (c->key)
                assert_string_equal(key, c->key);
            else
                assert_null(key);
        } else {
            assert_int_equal(rc, -1);
            assert_string_equal(err.text, c->error);
        }
        json_decref(cm);
    }
}

/* A label naming a missing key is a config finding in the report. */
static void test_configmap_label_missing_key(void **state)
{
    (void)state;
    json_t *cm = configmap_fixture("lab-configmap.yaml");
    json_t *node = sq_load("{'metadata':{'name':'n','labels':"
                           "{'nvidia.com/device-plugin.config':'a100-small'}}}");
    an_slots_input in = {.configmap = cm, .node = node, .gpus = 4, .gpu_model = "A100"};
    gp_error err = {0};
    json_t *r = an_slots(&in, &err);
    assert_non_null(r);
    assert_string_equal(config_error(r), "specified config a100-small does not exist");
    assert_string_equal(s(json_object_get(r, "config_error"), "stage"), "config-manager");
    json_decref(r);
    /* The GPU Operator's fallback: the empty config, nothing shared. */
    json_object_del(json_object_get(json_object_get(node, "metadata"), "labels"),
                    "nvidia.com/device-plugin.config");
    in.fallbacks = "empty";
    r = an_slots(&in, &err);
    assert_non_null(r);
    assert_true(json_is_null(json_object_get(r, "config_error")));
    assert_string_equal(s(r, "sharing_strategy"), "none");
    assert_int_equal(num(r, "replicas"), 1);
    assert_int_equal(num(r, "advertised_computed"), 4);
    assert_string_equal(s(r, "isolation"), "exclusive");
    json_decref(r);
    json_decref(node);
    json_decref(cm);
}

/* ---- where the hardware comes from ---- */

static void test_node_labels_vs_options(void **state)
{
    (void)state;
    json_t *node = sq_load("{'metadata':{'name':'h','labels':{'nvidia.com/gpu.count':'8',"
                           "'nvidia.com/gpu.product':'NVIDIA-H100-80GB-HBM3-SHARED',"
                           "'nvidia.com/gpu.memory':'81559'}},"
                           "'status':{'capacity':{'nvidia.com/gpu':'40'}}}");
    json_t *r = slots_file("misspelt.yaml", (an_slots_input){.node = node});
    assert_int_equal(num(r, "physical_gpus"), 8);
    assert_string_equal(s(r, "gpu_model"), "H100-80GB");
    assert_int_equal(num(r, "vram_per_gpu_mib"), 81559);
    assert_string_equal(s(json_object_get(r, "sources"), "gpus"), "node-label");
    assert_int_equal(num(r, "advertised_computed"), 40); /* 8 x 5 */
    /* Shared and not renamed: -SHARED (1.6). */
    assert_string_equal(s(json_object_get(r, "expected_labels"), "nvidia.com/gpu.product"),
                        "NVIDIA-H100-80GB-HBM3-SHARED");
    json_decref(r);
    /* Options win over labels. */
    r = slots_file("misspelt.yaml",
                   (an_slots_input){.node = node, .gpus = 4, .gpu_memory_mib = 1000});
    assert_int_equal(num(r, "physical_gpus"), 4);
    assert_int_equal(num(r, "vram_per_gpu_mib"), 1000);
    assert_string_equal(s(json_object_get(r, "sources"), "gpus"), "option");
    /* 4 x 5 = 20, but the node says 40: they disagree. */
    assert_true(json_is_false(json_object_get(r, "advertised_agrees")));
    char *text = an_slots_render(r, AN_TEXT);
    assert_non_null(strstr(text, "DISAGREES"));
    free(text);
    json_decref(r);
    json_decref(node);
}

/* The node still advertises the unshared 4: computed 20 disagrees. */
static void test_advertised_disagreement(void **state)
{
    (void)state;
    json_t *cm = configmap_fixture("lab-configmap.yaml");
    json_t *node = sq_load("{'metadata':{'name':'lab-node-1'},"
                           "'status':{'capacity':{'nvidia.com/gpu':'4'}}}");
    an_slots_input in = {.configmap = cm, .node = node, .gpus = 4, .gpu_model = "A100-40GB"};
    gp_error err = {0};
    json_t *r = an_slots(&in, &err);
    assert_non_null(r);
    assert_int_equal(num(r, "advertised_computed"), 20);
    assert_int_equal(num(json_object_get(r, "advertised_observed"), "capacity"), 4);
    assert_true(json_is_false(json_object_get(r, "advertised_agrees")));
    json_decref(r);
    json_decref(node);
    json_decref(cm);
}

static void test_input_errors(void **state)
{
    (void)state;
    const char cfg[] = "version: v1\n";
    an_slots_input in = {.config_text = cfg, .config_len = strlen(cfg)};
    gp_error err = {0};
    assert_null(an_slots(&in, &err));
    assert_string_equal(err.text, "the number of nvidia.com/gpu devices is not known: pass the "
                                  "GPU count, or a Node that has the nvidia.com/gpu.count label");
    in.gpus = 2;
    assert_null(an_slots(&in, &err));
    assert_non_null(strstr(err.text, "the memory of one nvidia.com/gpu device is not known"));
    in.gpu_model = "RTX-9999";
    assert_null(an_slots(&in, &err));
    assert_non_null(strstr(err.text, "unknown GPU model 'RTX-9999'"));
    in.gpu_model = "T4";
    in.plugin_version = "latest";
    assert_null(an_slots(&in, &err));
    assert_non_null(strstr(err.text, "invalid device plugin version 'latest'"));
}

/* ---- MIG from the layout (issue 16, case 7) ---- */

static json_t *slots_with_layout(const char *config, const char *layout, an_slots_input in)
{
    size_t len = 0;
    char *text = layout ? fixture("mig-parted.yaml", &len) : NULL;
    in.mig_config_text = text;
    in.mig_config_len = len;
    in.mig_config_name = "mig-parted.yaml";
    in.mig_layout = layout;
    json_t *r = slots_file(config, in);
    free(text);
    return r;
}

static const json_t *resource_at(const json_t *r, size_t i)
{
    return json_array_get(json_object_get(r, "resources"), i);
}

/* mig-3g.20gb x 3 replicas on 4 A100-40GB. A GPU holds at most two 3g.20gb
 * (2.1), so without a layout the count is a bound: 4 x 2 = 8 devices, 24
 * slots at most, with a warning; the layout decides: all-3g.20gb 4 x 2 = 8
 * (24 slots), all-balanced 4 x 1 = 4 (12), half-3g 2 x 2 = 4 (12); never
 * 4 x 1 "as if each GPU held one instance" by accident of the GPU count. */
static void test_mig_count_from_layout(void **state)
{
    (void)state;
    an_slots_input hw = {.gpus = 4, .gpu_model = "A100-40GB"};
    json_t *r = slots_with_layout("mig-3g.yaml", NULL, hw);
    assert_int_equal(num(r, "devices"), 8);
    assert_int_equal(num(r, "physical_gpus"), 4);
    assert_int_equal(num(r, "advertised_computed"), 24);
    const json_t *d = json_object_get(r, "device");
    assert_string_equal(s(d, "per_gpu_source"), "profile-maximum");
    assert_int_equal(num(d, "per_gpu"), 2);
    assert_int_equal(num(d, "compute_slices"), 3);
    assert_int_equal(num(d, "memory_slices"), 4);
    assert_int_equal(num(r, "vram_per_gpu_mib"), 20 * 1024);
    assert_has_warning(r, "the MIG layout is not known: nvidia.com/mig-3g.20gb counts the most "
                          "3g.20gb instances one GPU holds (2); the real number depends on the "
                          "layout: pass --mig-config, or a node with the MIG count labels");
    json_decref(r);
    static const struct {
        const char *layout;
        long long devices, slots;
    } layouts[] = {{"all-3g.20gb", 8, 24}, {"all-balanced", 4, 12}, {"half-3g", 4, 12}};
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++) {
        r = slots_with_layout("mig-3g.yaml", layouts[i].layout, hw);
        assert_int_equal(num(r, "devices"), layouts[i].devices);
        assert_int_equal(num(r, "advertised_computed"), layouts[i].slots);
        assert_string_equal(s(json_object_get(r, "sources"), "devices"), "mig-layout");
        json_decref(r);
    }
    /* half-3g leaves GPUs 0 and 1 out of MIG: under the mixed strategy they
     * are the nvidia.com/gpu devices (2.3), 2 and not 4. */
    r = slots_with_layout(
        "mig-3g.yaml", "half-3g",
        (an_slots_input){.gpus = 4, .gpu_model = "A100-40GB", .resource = "nvidia.com/gpu"});
    assert_int_equal(num(r, "devices"), 2);
    json_decref(r);
    /* A layout the GPU cannot hold is said so (2.1, 2.2). */
    r = slots_with_layout("mig-3g.yaml", "too-many", hw);
    assert_has_warning(r, "MIG layout too-many: 3 x 3g.20gb on one A100-40GB, at most 2 fit "
                          "(gpu-node-facts.md 2.1)");
    json_decref(r);
}

/* Time-slicing a MIG instance: its slots share the instance's memory, not
 * the GPU's; the instances are isolated in hardware. And a config that is
 * already MIG is not offered "MIG instead". */
static void test_mig_isolation_words(void **state)
{
    (void)state;
    json_t *r = slots_with_layout("mig-3g.yaml", "all-3g.20gb",
                                  (an_slots_input){.gpus = 4, .gpu_model = "A100-40GB"});
    assert_string_equal(s(r, "isolation"), "none");
    assert_string_equal(s(r, "isolation_scope"), "mig-instance");
    assert_true(json_is_true(json_object_get(json_object_get(r, "mig"), "in_use")));
    char *text = an_slots_render(r, AN_TEXT);
    assert_null(strstr(text, "every slot can use all of the GPU's memory"));
    assert_null(strstr(text, "MIG instead"));
    assert_non_null(strstr(text, "each can use all of its 20 GiB"));
    free(text);
    json_decref(r);
    /* A plain time-slicing config still gets both. */
    r = slots_file("misspelt.yaml", (an_slots_input){.gpus = 4, .gpu_model = "A100-40GB"});
    text = an_slots_render(r, AN_TEXT);
    assert_non_null(strstr(text, "every slot can use all of the GPU's memory"));
    assert_non_null(strstr(text, "MIG instead (A100-40GB)"));
    free(text);
    json_decref(r);
}

/* The snapshot of a MIG node (tests/data/analyze/field-mig.json): the
 * ConfigMap shares two resources; both are reported, their counts from
 * GFD's per-profile labels, the per-GPU count from the node's layout. */
static void test_mig_two_resources_on_node(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/analyze/field-mig.json", TEST_DATA_DIR);
    json_t *list = json_load_file(path, 0, NULL);
    assert_non_null(list);
    const json_t *node = NULL, *ts = NULL, *parted = NULL;
    size_t i;
    const json_t *it;
    json_array_foreach(json_object_get(list, "items"), i, it)
    {
        const char *kind = s(it, "kind"), *name = s(json_object_get(it, "metadata"), "name");
        if (!strcmp(kind, "Node") && !strcmp(name, "lab-node-0")) node = it;
        if (!strcmp(kind, "ConfigMap") && !strcmp(name, "time-slicing-config")) ts = it;
        if (!strcmp(kind, "ConfigMap") && !strcmp(name, "default-mig-parted-config")) parted = it;
    }
    assert_non_null(node);
    an_slots_input in = {.configmap = ts, .node = node, .mig_configmap = parted};
    gp_error err = {0};
    json_t *r = an_slots(&in, &err);
    if (!r) print_error("%s\n", err.text);
    assert_non_null(r);
    assert_int_equal(json_array_size(json_object_get(r, "resources")), 2);
    const json_t *a = resource_at(r, 0), *b = resource_at(r, 1);
    assert_string_equal(s(a, "resource"), "nvidia.com/mig-1g.5gb");
    assert_int_equal(num(a, "devices"), 8);
    assert_int_equal(num(a, "advertised_computed"), 16);
    assert_string_equal(s(b, "resource"), "nvidia.com/mig-3g.20gb");
    assert_int_equal(num(b, "devices"), 4);
    assert_int_equal(num(b, "advertised_computed"), 12);
    assert_int_equal(num(json_object_get(b, "device"), "per_gpu"), 1);
    assert_true(json_is_true(json_object_get(b, "advertised_agrees")));
    assert_true(json_is_true(json_object_get(r, "advertised_agrees")));
    assert_string_equal(s(json_object_get(json_object_get(r, "mig"), "layout"), "name"),
                        "all-balanced");
    char *text = an_slots_render(r, AN_TEXT);
    assert_non_null(strstr(text, "Sharing nvidia.com/mig-1g.5gb (time-slicing)"));
    assert_non_null(strstr(text, "Sharing nvidia.com/mig-3g.20gb (time-slicing)"));
    free(text);
    json_decref(r);
    json_decref(list);
}

/* The plugin compares the MIG strategy as written, once the config is
 * loaded (cmd/nvidia-device-plugin/main.go validateFlags, v0.17.0): Mixed
 * is `unknown MIG strategy: Mixed`, logged under "unable to validate
 * flags". */
static void test_mig_strategy_case(void **state)
{
    (void)state;
    json_t *r =
        slots_file("mig-strategy-case.yaml", (an_slots_input){.gpus = 4, .gpu_model = "A100-40GB"});
    assert_string_equal(config_error(r),
                        "mig-strategy-case.yaml:3:16: unknown MIG strategy: Mixed");
    assert_string_equal(s(json_object_get(r, "config_error"), "plugin_log"),
                        "error starting plugins: unable to validate flags: unknown MIG strategy: "
                        "Mixed");
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lab_configmap),
        cmocka_unit_test(test_old_plugin_message),
        cmocka_unit_test(test_rename_by_default),
        cmocka_unit_test(test_mps),
        cmocka_unit_test(test_mps_takes_precedence),
        cmocka_unit_test(test_replicas_one),
        cmocka_unit_test(test_misspelt_key),
        cmocka_unit_test(test_devices_and_rename_ignored),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_config_rules),
        cmocka_unit_test(test_config_normalised),
        cmocka_unit_test(test_mig_single),
        cmocka_unit_test(test_mig_mixed),
        cmocka_unit_test(test_mig_table),
        cmocka_unit_test(test_configmap_key_selection),
        cmocka_unit_test(test_configmap_label_missing_key),
        cmocka_unit_test(test_node_labels_vs_options),
        cmocka_unit_test(test_advertised_disagreement),
        cmocka_unit_test(test_input_errors),
        cmocka_unit_test(test_mig_count_from_layout),
        cmocka_unit_test(test_mig_isolation_words),
        cmocka_unit_test(test_mig_two_resources_on_node),
        cmocka_unit_test(test_mig_strategy_case),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
