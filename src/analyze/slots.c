/* The slot calculator: config + node (+ options) -> what each slot gets. */
#include "analyze/slots.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/devplugin_config.h"
#include "analyze/mig_internal.h"
#include "analyze/common.h"
#include "kube/json.h"
#include "kube/quantity.h"
#include "util/i18n.h"

#define DEFAULT_PLUGIN  "v0.17.0"
#define CONFIG_LABEL    "nvidia.com/device-plugin.config"
#define GPU_RESOURCE    "nvidia.com/gpu"
#define MIG_PREFIX      "nvidia.com/mig-"
#define GPU_COUNT_LABEL "nvidia.com/gpu.count"
#define MPS_MAX_CLIENTS 48 /* compute capability >= 7.5 */
#define MPS_MAX_OLD     16

typedef struct version {
    int major, minor, patch;
} version;

static int parse_version(const char *text, version *v)
{
    const char *s = text[0] == 'v' ? text + 1 : text;
    char extra;
    int n = sscanf(s, "%d.%d.%d%c", &v->major, &v->minor, &v->patch, &extra);
    if (n == 2) v->patch = 0;
    return n == 2 || n == 3 || (n == 4 && (extra == '-' || extra == '+')) ? 0 : -1;
}

static bool at_least(const version *v, int major, int minor)
{
    return v->major > major || (v->major == major && v->minor >= minor);
}

/* A whole-number label ("4"), or -1. */
static long label_number(const json_t *node, const char *key)
{
    const char *s = kube_str_or_null(kube_path(node, "metadata", "labels", NULL), key);
    if (!s || !*s) return -1;
    char *end;
    long v = strtol(s, &end, 10);
    return *end || v < 0 ? -1 : v;
}

/* status.<field>[name] as a whole number, or -1 when absent. */
static long long status_count(const json_t *node, const char *field, const char *name)
{
    const json_t *q =
        json_object_get(json_object_get(json_object_get(node, "status"), field), name);
    if (!json_is_string(q)) return -1;
    kube_quantity k;
    if (kube_quantity_parse(json_string_value(q), &k, NULL) != 0) return -1;
    return k.units;
}

static json_t *mib_to_gib(long long mib)
{
    /* Two decimals are what a person reads; the MiB keys stay exact. */
    return json_real((double)((mib * 100 + 512) / 1024) / 100.0);
}

/* ---- the config ---- */

typedef struct config_pick {
    const char *text;
    size_t len;
    char name[512];
    json_t *info; /* report.config */
} config_pick;

/* Chooses the config text. Returns 1 when the choice itself failed (a
 * config-manager error, set in *cfg_error), 0 when chosen, -1 on an input
 * error. */
static int pick_config(const an_slots_input *in, config_pick *p, json_t **cfg_error, gp_error *err)
{
    p->text = "";
    p->len = 0;
    snprintf(p->name, sizeof p->name, "%s", in->config_name ? in->config_name : "config");
    if (!in->configmap) {
        const char *source = in->config_text ? "file" : "none";
        if (in->config_text) {
            p->text = in->config_text;
            p->len = in->config_len;
        }
        p->info = json_pack("{s:s, s:s?, s:n, s:n}", "source", source, "name",
                            in->config_text ? p->name : NULL, "key", "selected_by");
        return 0;
    }
    const json_t *meta = json_object_get(in->configmap, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *cm = json_string_value(json_object_get(meta, "name"));
    const char *key = NULL, *how = NULL;
    gp_error e = {0};
    int rc = 0;
    if (in->key) {
        if (json_object_get(json_object_get(in->configmap, "data"), in->key) ||
            json_object_get(json_object_get(in->configmap, "binaryData"), in->key)) {
            key = in->key;
            how = "option";
        } else {
            gp_error_set(&e, NULL, 0, 0, "specified config %s does not exist", in->key);
            rc = -1;
        }
    } else {
        rc = an_dp_config_select(
            in->configmap,
            kube_str_or_null(kube_path(in->node, "metadata", "labels", NULL), CONFIG_LABEL),
            in->default_config, in->fallbacks, &key, &how, &e);
    }
    p->info = json_pack("{s:s, s:s?, s:s?, s:s?, s:s?}", "source", "configmap", "name", cm,
                        "namespace", ns, "key", key, "selected_by", how);
    if (rc != 0) {
        *cfg_error = json_pack("{s:s, s:s, s:n}", "stage", "config-manager", "message", e.text,
                               "plugin_log");
        return 1;
    }
    if (!key) return 0; /* the empty config */
    if (snprintf(p->name, sizeof p->name, "%s%s%s/%s", ns ? ns : "", ns ? "/" : "",
                 cm ? cm : "configmap", key) >= (int)sizeof p->name)
        p->name[sizeof p->name - 1] = '\0';
    if (in->config_name) snprintf(p->name, sizeof p->name, "%s", in->config_name);
    const json_t *text = json_object_get(json_object_get(in->configmap, "data"), key);
    if (!json_is_string(text)) {
        gp_error_set(err, NULL, 0, 0,
                     "ConfigMap key '%s' is not in data (binaryData is not read): pass the config "
                     "as a file",
                     key);
        return -1;
    }
    p->text = json_string_value(text);
    p->len = json_string_length(text);
    return 0;
}

/* The resource the report is about: its configured entry, or NULL when
 * the config does not share it. */
static const json_t *pick_resource(const json_t *cfg, const char *want, char *name, size_t size,
                                   gp_error *err)
{
    const json_t *list = json_object_get(json_object_get(cfg, "sharing"), "resources");
    if (want) {
        if (an_dp_resource_name(want, name, size, err) != 0) return NULL;
    } else {
        snprintf(name, size, "%s", GPU_RESOURCE);
        if (json_array_size(list) > 0) {
            bool has_gpu = false;
            size_t i;
            json_t *r;
            json_array_foreach(list, i, r)
            {
                if (strcmp(json_string_value(json_object_get(r, "name")), GPU_RESOURCE) == 0)
                    has_gpu = true;
            }
            if (!has_gpu)
                snprintf(name, size, "%s",
                         json_string_value(json_object_get(json_array_get(list, 0), "name")));
        }
    }
    size_t i;
    json_t *r;
    json_array_foreach(list, i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "name")), name) == 0) return r;
    }
    return NULL;
}

/* ---- the hardware ---- */

typedef struct hardware {
    long devices; /* of the resource: GPUs, or MIG instances */
    const char *devices_source;
    long gpus; /* physical GPUs, -1 when not known */
    const char *gpus_source;
    const an_gpu_model *model;
    const char *model_source;
    char product[256];    /* GFD product without -SHARED, or the model's name */
    char mig_profile[64]; /* the MIG profile a device of the resource is */
    long per_gpu;         /* MIG instances of it per GPU (0: not MIG or unknown) */
    const char *per_gpu_source;
    long memory_mib;
    const char *memory_source;
} hardware;

static void warn(json_t *warnings, const char *fmt, const char *a, const char *b, long n)
{
    char text[700];
    snprintf(text, sizeof text, fmt, a, b, n);
    json_array_append_new(warnings, json_string(text));
}

/* The model, from the option or the node's product label. */
static int find_model(const an_slots_input *in, hardware *hw, gp_error *err)
{
    const char *product =
        kube_str_or_null(kube_path(in->node, "metadata", "labels", NULL), "nvidia.com/gpu.product");
    if (in->gpu_model) {
        hw->model = an_gpu_model_find(in->gpu_model, in->gpu_memory_mib, hw->mig_profile,
                                      sizeof hw->mig_profile);
        if (!hw->model) {
            gp_error_set(err, NULL, 0, 0,
                         "unknown GPU model '%s': give a GPU Feature Discovery product name "
                         "(NVIDIA-A100-SXM4-40GB) or a short name (A100-40GB, H100-80GB, T4)",
                         in->gpu_model);
            return -1;
        }
        hw->model_source = "option";
        snprintf(hw->product, sizeof hw->product, "%s", in->gpu_model);
    } else if (product) {
        long label_mib = label_number(in->node, "nvidia.com/gpu.memory");
        hw->model = an_gpu_model_find(product, label_mib, hw->mig_profile, sizeof hw->mig_profile);
        hw->model_source = "node-label";
        snprintf(hw->product, sizeof hw->product, "%s", product);
    }
    size_t plen = strlen(hw->product);
    if (plen > 7 && strcmp(hw->product + plen - 7, "-SHARED") == 0) hw->product[plen - 7] = '\0';
    if (!hw->product[0] && hw->model)
        snprintf(hw->product, sizeof hw->product, "%s", hw->model->name);
    return 0;
}

/* How many MIG devices of the resource: the node's GFD count (what is
 * there) unless GPUs are given, else GPUs x the layout's instances per
 * GPU, else an upper bound: GPUs x the profile's maximum (2.1), with a
 * warning that the count depends on the layout. */
static int mig_devices(const an_slots_input *in, const char *resource, const json_t *layout,
                       const char *count_key, bool need, hardware *hw, json_t *warnings,
                       gp_error *err)
{
    long label = label_number(in->node, count_key);
    long per = 0;
    if (layout) {
        an_mig_layout_instances(layout, hw->mig_profile, 1, &per);
        hw->per_gpu = per;
        hw->per_gpu_source = "mig-layout";
    }
    if (label >= 0 && in->gpus <= 0) {
        hw->devices = label;
        hw->devices_source = "node-label";
        if (layout && hw->gpus >= 0) {
            long want = an_mig_layout_instances(layout, hw->mig_profile, hw->gpus, NULL);
            if (want != label) {
                char text[700];
                snprintf(text, sizeof text,
                         "the node's %s label says %ld, the MIG layout makes %ld: the layout is "
                         "not applied (see nvidia.com/mig.config.state)",
                         count_key, label, want);
                json_array_append_new(warnings, json_string(text));
            }
        }
        return 0;
    }
    if (hw->gpus < 0) {
        if (!need) return 0;
        gp_error_set(err, NULL, 0, 0,
                     "the number of %s devices is not known: pass the GPU count with a MIG "
                     "layout (--mig-config), or a Node that has the %s label",
                     resource, count_key);
        return -1;
    }
    if (layout) {
        hw->devices = an_mig_layout_instances(layout, hw->mig_profile, hw->gpus, NULL);
        hw->devices_source = "mig-layout";
        return 0;
    }
    const an_mig_profile *p = an_mig_profile_find(hw->model, hw->mig_profile);
    if (!p) {
        if (!need) return 0;
        gp_error_set(err, NULL, 0, 0,
                     "the number of %s devices is not known: pass a MIG layout (--mig-config) "
                     "or the GPU model, or a Node that has the %s label",
                     resource, count_key);
        return -1;
    }
    hw->per_gpu = p->max;
    hw->per_gpu_source = "profile-maximum";
    hw->devices = hw->gpus * p->max;
    hw->devices_source = "profile-maximum";
    warn(warnings,
         "the MIG layout is not known: %s counts the most %s instances one GPU holds (%ld); the "
         "real number depends on the layout: pass --mig-config, or a node with the MIG count "
         "labels",
         resource, hw->mig_profile, (long)p->max);
    return 0;
}

static int find_hardware(const an_slots_input *in, const char *resource, const json_t *layout,
                         bool mixed, bool need, hardware *hw, json_t *warnings, gp_error *err)
{
    memset(hw, 0, sizeof *hw);
    hw->gpus = -1;
    bool mig_resource = strncmp(resource, MIG_PREFIX, strlen(MIG_PREFIX)) == 0;
    /* GFD keeps nvidia.com/gpu.* for the full-GPU resource (renamed or not)
     * and nvidia.com/mig-<profile>.* for mixed-strategy MIG resources. */
    char count_key[160], memory_key[160];
    const char *base = mig_resource ? resource : GPU_RESOURCE;
    if (snprintf(count_key, sizeof count_key, "%s.count", base) >= (int)sizeof count_key ||
        snprintf(memory_key, sizeof memory_key, "%s.memory", base) >= (int)sizeof memory_key)
        count_key[0] = memory_key[0] = '\0';
    if (find_model(in, hw, err) < 0) return -1;
    if (mig_resource && snprintf(hw->mig_profile, sizeof hw->mig_profile, "%s",
                                 resource + strlen(MIG_PREFIX)) >= (int)sizeof hw->mig_profile)
        hw->mig_profile[0] = '\0';
    bool mig = hw->mig_profile[0] != '\0';

    /* Physical GPUs: the option, else GFD's gpu.count, which counts MIG
     * devices instead under the single strategy (2.3). */
    long n;
    if (in->gpus > 0) {
        hw->gpus = in->gpus;
        hw->gpus_source = "option";
    } else if (!(mig && !mig_resource) && (n = label_number(in->node, GPU_COUNT_LABEL)) >= 0) {
        hw->gpus = n;
        hw->gpus_source = "node-label";
    }
    if (mig) {
        if (mig_devices(in, resource, layout, count_key, need, hw, warnings, err) < 0) return -1;
    } else if (hw->gpus >= 0 && layout && mixed) {
        /* Mixed: nvidia.com/gpu is the GPUs the layout leaves out of MIG. */
        hw->devices = an_mig_layout_full_gpus(layout, hw->gpus);
        hw->devices_source = "mig-layout";
    } else if (hw->gpus >= 0) {
        hw->devices = hw->gpus;
        hw->devices_source = hw->gpus_source;
    } else if (need) {
        gp_error_set(err, NULL, 0, 0,
                     "the number of %s devices is not known: pass the GPU count, or a Node "
                     "that has the %s label",
                     resource, count_key);
        return -1;
    }

    const an_mig_profile *prof = an_mig_profile_find(hw->model, hw->mig_profile);
    if (in->gpu_memory_mib > 0) {
        hw->memory_mib = in->gpu_memory_mib;
        hw->memory_source = "option";
    } else if ((n = label_number(in->node, memory_key)) > 0) {
        hw->memory_mib = n;
        hw->memory_source = "node-label";
    } else if (mig && prof) {
        hw->memory_mib = (long)prof->memory_gb * 1024;
        hw->memory_source = "mig-profile";
    } else if (hw->model && !mig) {
        hw->memory_mib = (long)hw->model->memory_gib * 1024;
        hw->memory_source = "model";
    } else if (need) {
        gp_error_set(err, NULL, 0, 0,
                     "the memory of one %s device is not known: pass the GPU model or its "
                     "memory in MiB, or a Node that has the %s label",
                     resource, memory_key);
        return -1;
    }
    return 0;
}

/* ---- the MIG layout ---- */

/* The mig-parted config text: a file, or a ConfigMap key (default
 * config.yaml, the GPU Operator's). NULL when none was given. */
static const char *mig_config_text(const an_slots_input *in, size_t *len, char *name, size_t size,
                                   gp_error *err)
{
    if (in->mig_config_text) {
        *len = in->mig_config_len;
        snprintf(name, size, "%s", in->mig_config_name ? in->mig_config_name : "mig-config");
        return in->mig_config_text;
    }
    if (!in->mig_configmap) return NULL;
    const char *key = in->mig_key ? in->mig_key : "config.yaml";
    const json_t *meta = json_object_get(in->mig_configmap, "metadata");
    snprintf(name, size, "%s/%s/%s", kube_str(meta, "namespace"), kube_str(meta, "name"), key);
    const json_t *text = json_object_get(json_object_get(in->mig_configmap, "data"), key);
    if (!json_is_string(text)) {
        gp_error_set(err, NULL, 0, 0, "ConfigMap %s/%s has no data key '%s'",
                     kube_str(meta, "namespace"), kube_str(meta, "name"), key);
        return NULL;
    }
    *len = json_string_length(text);
    return json_string_value(text);
}

/* The layout to read: the option, else the node's nvidia.com/mig.config
 * label (what the MIG manager applies, 2.4). *layout is NULL when there is
 * no config; -1 with err for a config that does not hold the layout. */
static int pick_layout(const an_slots_input *in, json_t **layout, const char **name, gp_error *err)
{
    *layout = NULL;
    *name = NULL;
    char cname[600];
    size_t len = 0;
    gp_error e = {0};
    const char *text = mig_config_text(in, &len, cname, sizeof cname, &e);
    if (!text) {
        if (!e.text[0]) return 0;
        *err = e;
        return -1;
    }
    *name = in->mig_layout ? in->mig_layout
                           : kube_str_or_null(kube_path(in->node, "metadata", "labels", NULL),
                                              "nvidia.com/mig.config");
    if (!*name) {
        gp_error_set(err, NULL, 0, 0,
                     "which MIG layout of %s? pass --mig-layout, or a Node that has the "
                     "nvidia.com/mig.config label",
                     cname);
        return -1;
    }
    *layout = an_mig_layout_parse(text, len, cname, *name, err);
    return *layout ? 0 : -1;
}

/* ---- a pod asking for 2 ---- */

static json_t *request_of_2(const char *strategy, const json_t *configured, const version *v,
                            const char *served)
{
    bool ts = strcmp(strategy, "time-slicing") == 0, mps = strcmp(strategy, "mps") == 0;
    bool v20 = at_least(v, 0, 20);
    json_t *fr = json_pack("{s:O, s:n, s:b}", "configured", configured, "default", "enforced", 0);
    if (!ts && !mps) {
        json_object_set_new(fr, "enforced", json_false());
        return json_pack("{s:o, s:s, s:n, s:n, s:n, s:s}", "fail_requests_greater_than_one", fr,
                         "outcome", "needs-2-devices", "pod_phase", "reason", "message", "note",
                         "nothing is shared: the pod needs two whole devices free on one node");
    }
    bool enforced;
    if (ts) {
        json_object_set_new(fr, "default", json_false());
        enforced = json_is_true(configured);
    } else {
        /* Up to v0.19 the plugin forces it on for MPS; v0.20 defaults it on. */
        json_object_set_new(fr, "default", json_true());
        enforced = v20 ? !json_is_false(configured) : true;
    }
    json_object_set_new(fr, "enforced", json_boolean(enforced));
    if (!enforced)
        return json_pack(
            "{s:o, s:s, s:n, s:n, s:n, s:s}", "fail_requests_greater_than_one", fr, "outcome",
            "granted", "pod_phase", "reason", "message", "note",
            "granted: two slots, usually on two different GPUs (the plugin prefers the least "
            "used), sometimes both on one GPU (the container then sees one GPU); never twice "
            "the "
            "compute of one GPU");
    char err[512], msg[700];
    if (at_least(v, 0, 15))
        snprintf(err, sizeof err,
                 "rpc error: code = Unknown desc = invalid allocation request for \"%s\": invalid "
                 "request: maximum request size for shared resources is 1; found 2",
                 served);
    else
        snprintf(err, sizeof err,
                 "rpc error: code = Unknown desc = request for '%s: 2' too large: maximum request "
                 "size for shared resources is 1",
                 served);
    snprintf(msg, sizeof msg, "Allocate failed due to %s, which is unexpected", err);
    return json_pack("{s:o, s:s, s:s, s:s, s:s, s:s}", "fail_requests_greater_than_one", fr,
                     "outcome", "rejected", "pod_phase", "Failed", "reason",
                     "UnexpectedAdmissionError", "message", msg, "note",
                     "the scheduler binds the pod, then kubelet admission fails it; it is not "
                     "retried: delete it and ask for 1");
}

/* ---- the report ---- */

static json_t *expected_labels(const char *resource, const char *strategy, long devices,
                               long replicas, bool renamed, const hardware *hw, long memory_mib,
                               const char *mig_strategy)
{
    bool mig_resource = strncmp(resource, MIG_PREFIX, strlen(MIG_PREFIX)) == 0;
    const char *base = mig_resource ? resource : GPU_RESOURCE;
    char k[160];
    json_t *l = json_object();
    snprintf(k, sizeof k, "%s.count", base);
    json_object_set_new(l, k, json_sprintf("%ld", devices));
    snprintf(k, sizeof k, "%s.replicas", base);
    json_object_set_new(l, k, json_sprintf("%ld", replicas));
    snprintf(k, sizeof k, "%s.sharing-strategy", base);
    json_object_set_new(l, k, json_string(replicas > 1 ? strategy : "none"));
    snprintf(k, sizeof k, "%s.memory", base);
    json_object_set_new(l, k, json_sprintf("%ld", memory_mib));
    if (!mig_resource && hw->product[0]) {
        /* single: <model>-MIG-<profile>; -SHARED when shared and not renamed. */
        char product[400];
        const char *mig = strstr(hw->product, "-MIG-");
        int model_len = mig ? (int)(mig - hw->product) : (int)strlen(hw->product);
        if (strcmp(mig_strategy, "single") == 0 && hw->mig_profile[0])
            snprintf(product, sizeof product, "%.*s-MIG-%s%s", model_len, hw->product,
                     hw->mig_profile, replicas > 1 && !renamed ? "-SHARED" : "");
        else
            snprintf(product, sizeof product, "%.*s%s", model_len, hw->product,
                     replicas > 1 && !renamed ? "-SHARED" : "");
        json_object_set_new(l, "nvidia.com/gpu.product", json_string(product));
    }
    return l;
}

static void add_observed(json_t *r, const json_t *node, const char *served, const char *configured,
                         long long computed)
{
    long long cap = status_count(node, "capacity", served);
    long long alloc = status_count(node, "allocatable", served);
    if (!node || (cap < 0 && alloc < 0)) {
        json_object_set_new(r, "advertised_observed", json_null());
        json_object_set_new(r, "advertised_agrees", json_null());
        return;
    }
    json_t *obs = json_object();
    json_object_set_new(obs, "capacity", cap >= 0 ? json_integer(cap) : json_null());
    json_object_set_new(obs, "allocatable", alloc >= 0 ? json_integer(alloc) : json_null());
    if (strcmp(served, configured) != 0) {
        long long base = status_count(node, "capacity", configured);
        json_object_set_new(obs, "base_name_capacity",
                            base >= 0 ? json_integer(base) : json_null());
    }
    json_object_set_new(r, "advertised_observed", obs);
    long long seen = cap >= 0 ? cap : alloc;
    json_object_set_new(r, "advertised_agrees",
                        computed >= 0 ? json_boolean(seen == computed) : json_null());
}

static void set_numbers_null(json_t *r)
{
    static const char *const keys[] = {"replicas",
                                       "advertised_computed",
                                       "vram_guaranteed_per_slot_mib",
                                       "vram_guaranteed_per_slot_gib",
                                       "vram_shared_per_gpu_mib",
                                       "vram_shared_per_gpu_gib",
                                       "mps_active_thread_percentage",
                                       "isolation",
                                       "isolation_scope",
                                       "request_of_2",
                                       "expected_labels",
                                       NULL};
    for (const char *const *k = keys; *k; k++)
        json_object_set_new(r, *k, json_null());
}

/* What one device of the resource is: a whole GPU, or a MIG instance with
 * its share of the GPU (2.1). */
static json_t *device_json(const hardware *hw)
{
    const an_mig_profile *p = an_mig_profile_find(hw->model, hw->mig_profile);
    if (!hw->mig_profile[0]) return json_pack("{s:s}", "kind", "gpu");
    bool a30 = hw->model && strcmp(hw->model->family, "A30") == 0;
    json_t *d = json_pack("{s:s, s:s, s:o, s:s?}", "kind", "mig", "mig_profile", hw->mig_profile,
                          "per_gpu", hw->per_gpu ? json_integer(hw->per_gpu) : json_null(),
                          "per_gpu_source", hw->per_gpu_source);
    if (p) {
        json_object_set_new(d, "compute_slices", json_integer(p->compute));
        json_object_set_new(d, "memory_slices", json_integer(p->memory));
        json_object_set_new(d, "max_per_gpu", json_integer(p->max));
        json_object_set_new(d, "slices_per_gpu",
                            json_pack("{s:i, s:i}", "compute", a30 ? 4 : 7, "memory", a30 ? 4 : 8));
    }
    return d;
}

/* The numbers of one resource of the config (entry NULL: not shared; cfg
 * NULL: the config is refused). NULL with err set on an input error;
 * *cfg_error receives the MPS daemon's refusal. */
static json_t *resource_report(const an_slots_input *in, const json_t *cfg, const json_t *entry,
                               const char *resource, const json_t *layout, const version *v,
                               json_t *warnings, json_t **cfg_error, gp_error *err)
{
    const json_t *sharing = json_object_get(cfg, "sharing");
    const char *strategy = entry ? json_string_value(json_object_get(sharing, "strategy")) : "none";
    const char *mig_strategy = cfg ? json_string_value(json_object_get(cfg, "migStrategy")) : NULL;
    const char *served = entry ? json_string_value(json_object_get(entry, "served")) : resource;
    long replicas = entry ? (long)json_integer_value(json_object_get(entry, "replicas")) : 1;
    hardware hw;
    bool mixed = mig_strategy && strcmp(mig_strategy, "mixed") == 0;
    if (find_hardware(in, resource, layout, mixed, cfg != NULL, &hw, warnings, err) != 0)
        return NULL;
    json_t *r = json_object();
    json_object_set_new(r, "resource", json_string(resource));
    json_object_set_new(r, "resource_served", json_string(served));
    json_object_set_new(r, "sharing_strategy", cfg ? json_string(strategy) : json_null());
    json_object_set_new(r, "gpu_model",
                        hw.model        ? json_string(hw.model->name)
                        : hw.product[0] ? json_string(hw.product)
                                        : json_null());
    json_object_set_new(r, "physical_gpus", hw.gpus >= 0 ? json_integer(hw.gpus) : json_null());
    json_object_set_new(r, "devices", hw.devices_source ? json_integer(hw.devices) : json_null());
    json_object_set_new(r, "device", device_json(&hw));
    json_object_set_new(r, "vram_per_gpu_mib",
                        hw.memory_source ? json_integer(hw.memory_mib) : json_null());
    json_object_set_new(r, "vram_per_gpu_gib",
                        hw.memory_source ? mib_to_gib(hw.memory_mib) : json_null());
    json_object_set_new(r, "sources",
                        json_pack("{s:s?, s:s?, s:s?, s:s?}", "gpus", hw.gpus_source, "devices",
                                  hw.devices_source, "gpu_model", hw.model_source, "vram",
                                  hw.memory_source));
    if (!cfg) {
        set_numbers_null(r);
        add_observed(r, in->node, served, resource, -1);
        return r;
    }
    bool is_mps = strcmp(strategy, "mps") == 0;
    int mps_cap = hw.model && hw.model->cc < 75 ? MPS_MAX_OLD : MPS_MAX_CLIENTS;
    if (is_mps && hw.model && replicas > mps_cap && !*cfg_error) {
        /* The MPS control daemon refuses to start: a config finding. */
        char msg[160];
        snprintf(msg, sizeof msg, "invalid device maximum allowed replicas exceeded: %ld > %d",
                 replicas, mps_cap);
        *cfg_error = json_pack("{s:s, s:s, s:n}", "stage", "mps-control-daemon", "message", msg,
                               "plugin_log");
    }
    long long advertised = (long long)hw.devices * replicas;
    long guaranteed, percentage = 0;
    const char *isolation;
    bool on_mig = hw.mig_profile[0] != '\0';
    if (strcmp(strategy, "time-slicing") == 0 && entry) {
        guaranteed = 0;
        isolation = "none";
    } else if (is_mps && entry) {
        /* set_default_device_pinned_mem_limit: total bytes / replicas, in
         * whole MiB; set_default_active_thread_percentage: 100 / replicas. */
        guaranteed = hw.memory_mib / replicas;
        percentage = 100 / replicas;
        isolation = "memory-limit";
    } else {
        guaranteed = hw.memory_mib;
        isolation = on_mig ? "hardware" : "exclusive";
    }
    long shared = hw.memory_mib - replicas * guaranteed;
    json_object_set_new(r, "replicas", json_integer(replicas));
    json_object_set_new(r, "advertised_computed", json_integer(advertised));
    json_object_set_new(r, "vram_guaranteed_per_slot_mib", json_integer(guaranteed));
    json_object_set_new(r, "vram_guaranteed_per_slot_gib", mib_to_gib(guaranteed));
    json_object_set_new(r, "vram_shared_per_gpu_mib", json_integer(shared));
    json_object_set_new(r, "vram_shared_per_gpu_gib", mib_to_gib(shared));
    json_object_set_new(r, "mps_active_thread_percentage",
                        is_mps && entry ? json_integer(percentage) : json_null());
    json_object_set_new(r, "isolation", json_string(isolation));
    /* What the isolation is between: the slots of one GPU, or of one MIG
     * instance (instances are isolated from one another in hardware). */
    json_object_set_new(r, "isolation_scope", json_string(on_mig ? "mig-instance" : "gpu"));
    json_object_set_new(r, "request_of_2",
                        request_of_2(entry ? strategy : "none",
                                     json_object_get(sharing, "failRequestsGreaterThanOne"), v,
                                     served));
    json_object_set_new(r, "expected_labels",
                        expected_labels(resource, strategy, hw.devices, replicas,
                                        strcmp(served, resource) != 0, &hw, hw.memory_mib,
                                        mig_strategy));
    add_observed(r, in->node, served, resource, advertised);
    return r;
}

/* The resources to report: the one asked for, else every one the config
 * shares (nvidia.com/gpu first), else nvidia.com/gpu. Each entry is
 * [name, config entry or null]. */
static json_t *resources_to_report(const json_t *cfg, const an_slots_input *in, gp_error *err)
{
    json_t *out = json_array();
    char name[128];
    const json_t *list = json_object_get(json_object_get(cfg, "sharing"), "resources");
    if (in->resource || !json_array_size(list)) {
        const json_t *entry = cfg ? pick_resource(cfg, in->resource, name, sizeof name, err) : NULL;
        if (err->text[0]) {
            json_decref(out);
            return NULL;
        }
        if (!cfg) snprintf(name, sizeof name, "%s", in->resource ? in->resource : GPU_RESOURCE);
        json_array_append_new(out, json_pack("[s, O?]", name, entry));
        return out;
    }
    const json_t *primary = pick_resource(cfg, NULL, name, sizeof name, err);
    json_array_append_new(out, json_pack("[s, O]", name, primary));
    size_t i;
    const json_t *e;
    json_array_foreach(list, i, e)
    {
        if (e != primary)
            json_array_append_new(out, json_pack("[O, O]", json_object_get(e, "name"), e));
    }
    return out;
}

/* false when a resource disagrees with the node, true when all agree,
 * null when a resource cannot tell. */
static json_t *all_agree(const json_t *resources)
{
    bool unknown = false;
    size_t i;
    const json_t *r;
    json_array_foreach(resources, i, r)
    {
        const json_t *a = json_object_get(r, "advertised_agrees");
        if (json_is_false(a)) return json_false();
        unknown = unknown || !json_is_true(a);
    }
    return unknown ? json_null() : json_true();
}

json_t *an_slots(const an_slots_input *in, gp_error *err)
{
    version v;
    const char *vtext = in->plugin_version ? in->plugin_version : DEFAULT_PLUGIN;
    if (parse_version(vtext, &v) != 0) {
        gp_error_set(err, NULL, 0, 0, "invalid device plugin version '%s' (expected e.g. v0.17.0)",
                     vtext);
        return NULL;
    }
    config_pick pick = {0};
    json_t *cfg_error = NULL;
    int rc = pick_config(in, &pick, &cfg_error, err);
    if (rc < 0) {
        json_decref(pick.info);
        return NULL;
    }
    json_t *cfg = NULL, *layout = NULL, *resources = NULL, *todo = NULL;
    const char *layout_name = NULL;
    if (rc == 0) {
        char *log = NULL;
        gp_error e = {0};
        cfg = an_dp_config_parse(pick.text, pick.len, pick.name, &log, &e);
        if (!cfg)
            cfg_error = json_pack("{s:s, s:s, s:s?}", "stage", "device-plugin", "message", e.text,
                                  "plugin_log", log);
        free(log);
    }

    json_t *r = json_object();
    const char *node_name =
        json_string_value(json_object_get(json_object_get(in->node, "metadata"), "name"));
    json_object_set_new(r, "schema", json_string(AN_SCHEMA_SLOTS));
    json_object_set_new(r, "node", node_name ? json_string(node_name) : json_null());
    json_object_set_new(r, "plugin_version", json_string(vtext));
    json_object_set_new(r, "config", pick.info);
    json_t *warnings = cfg ? json_incref(json_object_get(cfg, "warnings")) : json_array();
    json_object_set_new(r, "warnings", warnings);
    if (pick_layout(in, &layout, &layout_name, err) < 0) goto fail;

    const char *mig_strategy = cfg ? json_string_value(json_object_get(cfg, "migStrategy")) : NULL;
    json_object_set_new(r, "mig_strategy", mig_strategy ? json_string(mig_strategy) : json_null());
    const char *node_mig = kube_str_or_null(kube_path(in->node, "metadata", "labels", NULL),
                                            "nvidia.com/mig.strategy");
    if (mig_strategy && node_mig && strcmp(node_mig, mig_strategy) != 0) {
        gp_error w;
        gp_error_set(&w, NULL, 0, 0,
                     "the node's nvidia.com/mig.strategy label is '%s' but the config says '%s'",
                     node_mig, mig_strategy);
        json_array_append_new(warnings, json_string(w.text));
    }
    gp_error rerr = {0};
    if (!(todo = resources_to_report(cfg, in, &rerr))) {
        gp_error_set(err, NULL, 0, 0, "%s", rerr.text);
        goto fail;
    }
    resources = json_array();
    size_t i;
    const json_t *t;
    json_array_foreach(todo, i, t)
    {
        const json_t *entry = json_array_get(t, 1);
        json_t *one = resource_report(in, cfg, json_is_null(entry) ? NULL : entry,
                                      json_string_value(json_array_get(t, 0)), layout, &v, warnings,
                                      &cfg_error, err);
        if (!one) goto fail;
        json_array_append_new(resources, one);
    }
    json_object_set_new(r, "config_error", cfg_error ? cfg_error : json_null());
    cfg_error = NULL;
    /* The first resource's numbers at the top, as the lab reads them. */
    json_object_update(r, json_array_get(resources, 0));
    json_object_set_new(r, "advertised_agrees", all_agree(resources));
    json_object_set_new(r, "resources", resources);
    resources = NULL;

    const an_gpu_model *model = NULL;
    bool in_use = false;
    json_array_foreach(json_object_get(r, "resources"), i, t)
    {
        in_use = in_use || kube_str_is(kube_obj(t, "device"), "kind", "mig");
    }
    const char *gpu_model = json_string_value(json_object_get(r, "gpu_model"));
    model = gpu_model ? an_gpu_model_find(gpu_model, 0, NULL, 0) : NULL;
    if (layout) an_mig_layout_check(layout, layout_name, model, warnings);
    json_t *mig = an_mig_json(model);
    if (mig) {
        json_object_set_new(mig, "in_use", json_boolean(in_use));
        json_object_set_new(mig, "layout",
                            layout ? json_pack("{s:s, s:O}", "name", layout_name, "groups", layout)
                                   : json_null());
    }
    json_object_set_new(r, "mig", mig ? mig : json_null());
    json_decref(todo);
    json_decref(layout);
    json_decref(cfg);
    return r;
fail:
    json_decref(cfg_error);
    json_decref(todo);
    json_decref(resources);
    json_decref(layout);
    json_decref(cfg);
    json_decref(r);
    return NULL;
}

/* ---- rendering ---- */

/* MiB as GiB for people and the lab: whole when exact, else one decimal,
 * whatever the locale's decimal point. */
static void gib_text(const json_t *mib, char buf[32])
{
    if (!json_is_integer(mib)) {
        snprintf(buf, 32, "?");
        return;
    }
    long long m = json_integer_value(mib);
    if (m % 1024 == 0) {
        snprintf(buf, 32, "%lld", m / 1024);
        return;
    }
    long long tenths = (m * 10 + 512) / 1024;
    snprintf(buf, 32, "%lld.%lld", tenths / 10, tenths % 10);
}

static void int_text(const json_t *v, char buf[32])
{
    if (json_is_integer(v))
        snprintf(buf, 32, "%lld", (long long)json_integer_value(v));
    else
        snprintf(buf, 32, "?");
}

static const char *str(const json_t *r, const char *key)
{
    const char *s = json_string_value(json_object_get(r, key));
    return s ? s : "?";
}

static void render_lab(const json_t *r, FILE *f)
{
    const json_t *ce = json_object_get(r, "config_error");
    if (json_is_object(ce)) {
        fprintf(f, "CONFIG_ERROR=%s\n", str(ce, "message"));
        return;
    }
    char gpus[32], replicas[32], adv[32], vram[32], guaranteed[32], shared[32];
    int_text(json_object_get(r, "physical_gpus"), gpus);
    int_text(json_object_get(r, "replicas"), replicas);
    /* The lab reads the advertisement from the node when there is one. */
    const json_t *obs = json_object_get(r, "advertised_observed");
    const json_t *cap = json_object_get(obs, "capacity");
    int_text(json_is_integer(cap) ? cap : json_object_get(r, "advertised_computed"), adv);
    gib_text(json_object_get(r, "vram_per_gpu_mib"), vram);
    gib_text(json_object_get(r, "vram_guaranteed_per_slot_mib"), guaranteed);
    gib_text(json_object_get(r, "vram_shared_per_gpu_mib"), shared);
    fprintf(f,
            "PHYSICAL_GPUS=%s\nREPLICAS=%s\nADVERTISED=%s\nVRAM_PER_GPU_GIB=%s\n"
            "VRAM_GUARANTEED_PER_SLOT_GIB=%s\nVRAM_SHARED_PER_GPU_GIB=%s\nISOLATION=%s\n",
            gpus, replicas, adv, vram, guaranteed, shared, str(r, "isolation"));
}

static void row(FILE *f, const char *label, const char *value)
{
    fprintf(f, "  %-30s %s\n", label, value);
}

static const char *isolation_text(const char *iso)
{
    if (strcmp(iso, "none") == 0)
        return _("none: every slot can use all of the GPU's memory, one crash can take down the "
                 "others");
    if (strcmp(iso, "memory-limit") == 0)
        return _("memory limit and compute share per client (MPS), no fault isolation");
    if (strcmp(iso, "hardware") == 0) return _("hardware (MIG instance)");
    if (strcmp(iso, "exclusive") == 0) return _("exclusive: one container per device");
    return iso;
}

/* A MIG device: what share of its GPU it is (2.1), and how the slots of
 * one instance share it. */
static void render_mig_device(FILE *f, const json_t *r)
{
    const json_t *d = json_object_get(r, "device");
    char buf[512], mem[32];
    gib_text(json_object_get(r, "vram_per_gpu_mib"), mem);
    snprintf(
        buf, sizeof buf, _("%s: %lld of %lld compute slices, %lld of %lld memory slices (%s GiB)"),
        str(d, "mig_profile"), (long long)json_integer_value(json_object_get(d, "compute_slices")),
        (long long)json_integer_value(
            json_object_get(json_object_get(d, "slices_per_gpu"), "compute")),
        (long long)json_integer_value(json_object_get(d, "memory_slices")),
        (long long)json_integer_value(
            json_object_get(json_object_get(d, "slices_per_gpu"), "memory")),
        mem);
    row(f, _("MIG instance"), buf);
    const json_t *per = json_object_get(d, "per_gpu");
    if (json_is_integer(per)) {
        snprintf(buf, sizeof buf,
                 strcmp(str(d, "per_gpu_source"), "profile-maximum") == 0
                     ? _("at most %lld (the profile's maximum; the layout decides)")
                     : _("%lld (the MIG layout)"),
                 (long long)json_integer_value(per));
        row(f, _("Instances per GPU"), buf);
    }
}

static void render_isolation(FILE *f, const json_t *r)
{
    const char *iso = str(r, "isolation");
    if (strcmp(str(r, "isolation_scope"), "mig-instance") == 0 && strcmp(iso, "none") == 0) {
        char mem[32], buf[512];
        gib_text(json_object_get(r, "vram_per_gpu_mib"), mem);
        snprintf(buf, sizeof buf,
                 _("none between the slots of one MIG instance: each can use all of its %s GiB, "
                   "one crash can take down the others; instances are isolated from one another "
                   "in hardware"),
                 mem);
        row(f, _("Isolation"), buf);
        return;
    }
    row(f, _("Isolation"), isolation_text(iso));
}

static void render_request_of_2(FILE *f, const json_t *r)
{
    const json_t *rq = json_object_get(r, "request_of_2");
    fprintf(f, _("\nA pod asking for %s: 2\n"), str(r, "resource_served"));
    const json_t *fr = json_object_get(rq, "fail_requests_greater_than_one");
    const json_t *conf = json_object_get(fr, "configured");
    fprintf(f, _("  failRequestsGreaterThanOne: %s (%s), %s\n"),
            json_is_null(conf)   ? _("not set")
            : json_is_true(conf) ? "true"
                                 : "false",
            json_is_true(json_object_get(fr, "enforced")) ? _("enforced") : _("not enforced"),
            str(r, "plugin_version"));
    if (strcmp(str(rq, "outcome"), "rejected") == 0) {
        fprintf(f, _("  rejected: pod %s, reason %s:\n    %s\n"), str(rq, "pod_phase"),
                str(rq, "reason"), str(rq, "message"));
        fprintf(f, "  %s\n", _("The pod is not retried: delete it and ask for 1."));
    } else if (strcmp(str(rq, "outcome"), "granted") == 0) {
        fprintf(f, "  %s\n",
                _("Granted: two slots, usually on two different devices, never twice the "
                  "compute of one device."));
    } else {
        fprintf(f, "  %s\n", _("Nothing is shared: the pod needs two whole devices."));
    }
}

/* One resource's slots; `top` holds what all resources share (node,
 * plugin version). */
static void render_resource(FILE *f, const json_t *top, const json_t *r)
{
    const json_t *node = json_object_get(top, "node");
    char buf[512], a[32], b[32], c[32];
    fprintf(f, _("Sharing %s (%s)%s%s\n"), str(r, "resource_served"), str(r, "sharing_strategy"),
            json_is_string(node) ? _(" on node ") : "",
            json_is_string(node) ? json_string_value(node) : "");
    bool mig = kube_str_is(kube_obj(r, "device"), "kind", "mig");
    int_text(json_object_get(r, "devices"), a);
    gib_text(json_object_get(r, "vram_per_gpu_mib"), b);
    if (mig) {
        int_text(json_object_get(r, "physical_gpus"), c);
        snprintf(buf, sizeof buf, _("%s MIG instances on %s x %s, %s GiB each"), a, c,
                 str(r, "gpu_model"), b);
    } else {
        snprintf(buf, sizeof buf, _("%s x %s, %s GiB each"), a, str(r, "gpu_model"), b);
    }
    row(f, _("Devices"), buf);
    if (mig) render_mig_device(f, r);
    int_text(json_object_get(r, "replicas"), a);
    row(f, _("Replicas per device"), a);
    int_text(json_object_get(r, "advertised_computed"), a);
    snprintf(buf, sizeof buf, "%s", a);
    const json_t *obs = json_object_get(r, "advertised_observed");
    if (json_is_object(obs)) {
        int_text(json_object_get(obs, "capacity"), b);
        snprintf(buf, sizeof buf,
                 json_is_true(json_object_get(r, "advertised_agrees"))
                     ? _("%s; the node advertises %s: agrees")
                     : _("%s; the node advertises %s: DISAGREES"),
                 a, b);
    }
    row(f, _("Advertised slots"), buf);
    gib_text(json_object_get(r, "vram_guaranteed_per_slot_mib"), a);
    snprintf(buf, sizeof buf, _("%s GiB"), a);
    row(f, _("Guaranteed memory per slot"), buf);
    gib_text(json_object_get(r, "vram_shared_per_gpu_mib"), b);
    snprintf(buf, sizeof buf, _("%s GiB"), b);
    row(f, _("Memory shared per device"), buf);
    render_isolation(f, r);
    int_text(json_object_get(r, "advertised_computed"), c);
    fprintf(f, _("  => %s slots, %s GiB guaranteed memory each\n"), c, a);
    json_t *with_version = json_deep_copy(r);
    json_object_set(with_version, "plugin_version", json_object_get(top, "plugin_version"));
    render_request_of_2(f, with_version);
    json_decref(with_version);
}

static void render_mig(FILE *f, const json_t *mig)
{
    if (!json_is_object(mig)) return;
    /* A config already on MIG gets its model's table, not an alternative. */
    if (json_is_true(json_object_get(mig, "in_use")))
        fprintf(f,
                _("\nMIG profiles of %s (the config uses MIG; each profile's share of one "
                  "GPU):\n"),
                str(mig, "model"));
    else
        fprintf(f,
                _("\nMIG instead (%s): hardware isolation, fixed profiles, a node drain to "
                  "change\n"),
                str(mig, "model"));
    fprintf(f, "  %-12s %-14s %-10s %s\n", _("PROFILE"), _("MAX PER GPU"), _("MEMORY"),
            _("RESOURCE (mixed strategy)"));
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(mig, "profiles"), i, p)
    {
        char mem[32];
        snprintf(mem, sizeof mem, "%lld GiB",
                 (long long)json_integer_value(json_object_get(p, "memory_gib")));
        fprintf(f, "  %-12s %-14lld %-10s %s\n", str(p, "profile"),
                (long long)json_integer_value(json_object_get(p, "max_instances")), mem,
                str(p, "resource_mixed"));
    }
    const json_t *layout = json_object_get(mig, "layout");
    const json_t *bal = json_object_get(mig, "balanced");
    if (json_is_object(layout)) {
        fprintf(f, _("  layout %s:"), str(layout, "name"));
        json_array_foreach(json_object_get(layout, "groups"), i, p)
        {
            char *devices = json_dumps(json_object_get(p, "devices"), JSON_ENCODE_ANY);
            fprintf(f, "%s %s", i ? ";" : "", devices ? devices : "?");
            free(devices);
            const char *key;
            json_t *n;
            size_t k = 0;
            json_object_foreach(json_object_get(p, "mig_devices"), key, n)
            {
                fprintf(f, "%s %lldx %s", k++ ? " +" : "", (long long)json_integer_value(n), key);
            }
            if (!k) fprintf(f, " %s", _("MIG off"));
        }
        fputc('\n', f);
    } else if (json_array_size(bal) > 0) {
        fprintf(f, "  %s", _("balanced layout:"));
        json_array_foreach(bal, i, p)
        {
            fprintf(f, "%s %lldx %s", i ? " +" : "",
                    (long long)json_integer_value(json_object_get(p, "count")), str(p, "profile"));
        }
        fputc('\n', f);
    }
}

static void render_text(const json_t *r, FILE *f)
{
    const json_t *ce = json_object_get(r, "config_error");
    if (json_is_object(ce)) {
        fprintf(f, _("The config is refused (%s): %s\n"), str(ce, "stage"), str(ce, "message"));
        if (json_is_string(json_object_get(ce, "plugin_log")))
            fprintf(f, _("  the plugin logs: %s\n"), str(ce, "plugin_log"));
        fprintf(f, "%s\n", _("  The pod restarts in a loop and the node advertises nothing new."));
    } else {
        size_t i;
        const json_t *res;
        json_array_foreach(json_object_get(r, "resources"), i, res)
        {
            if (i) fputc('\n', f);
            render_resource(f, r, res);
        }
    }
    render_mig(f, json_object_get(r, "mig"));
    const json_t *w = json_object_get(r, "warnings");
    if (json_array_size(w) > 0) {
        fprintf(f, "\n%s\n", _("Warnings:"));
        size_t i;
        json_t *t;
        json_array_foreach(w, i, t)
        {
            fprintf(f, "  %s\n", json_string_value(t));
        }
    }
}

char *an_slots_render(const json_t *report, an_format fmt)
{
    if (fmt == AN_JSON) {
        char *s = json_dumps(report, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
        if (!s) return NULL;
        size_t n = strlen(s);
        char *out = realloc(s, n + 2);
        if (!out) {
            free(s);
            return NULL;
        }
        memcpy(out + n, "\n", 2);
        return out;
    }
    return an_render(report, fmt, render_text, render_lab);
}
