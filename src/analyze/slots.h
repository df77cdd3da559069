/* The time-slicing slot calculator (lab step 7): what sharing a node's GPUs
 * through the NVIDIA device plugin really gives each pod.
 *
 * Facts: /work/shared/design/gpu-node-facts.md sections 1 and 2. A pure
 * function of its inputs: the CLI (`gpuop slots`) reads the config file or
 * fetches the ConfigMap and the Node, fills an an_slots_input, calls
 * an_slots and prints an_slots_render(report, fmt).
 *
 * Typical uses:
 *   - lab step 7: configmap = the gpu-operator/time-slicing-config object,
 *     node = lab-node-1, gpus = 4, gpu_model = "A100-40GB";
 *   - before enabling sharing: config_text = a planned config file,
 *     gpus and gpu_model given, no node;
 *   - on a live node: configmap and node only; GPU count, model and memory
 *     come from the node's GPU Feature Discovery labels. */
#ifndef GPUOP_ANALYZE_SLOTS_H
#define GPUOP_ANALYZE_SLOTS_H

#include <jansson.h>
#include <stddef.h>

#include "analyze/analyze.h"
#include "util/error.h"

typedef struct an_slots_input {
    /* The device plugin config: either a file's text (config_name names it
     * in errors; NULL = "config") or a ConfigMap object whose data keys
     * are configs. Neither: the node runs without a config (no sharing). */
    const char *config_text;
    size_t config_len;
    const char *config_name;
    const json_t *configmap;
    /* Which ConfigMap key. NULL: as the config-manager chooses, from the
     * node's nvidia.com/device-plugin.config label, then default_config,
     * then fallbacks ("named,single" when NULL; the GPU Operator uses
     * "empty"). A key given here must exist. */
    const char *key;
    const char *default_config;
    const char *fallbacks;
    /* The Node object (may be NULL): labels and status.capacity. */
    const json_t *node;
    /* The resource to report ("nvidia.com/gpu", "gpu", "mig-1g.5gb"). NULL:
     * nvidia.com/gpu when the config shares it, else the config's first. */
    const char *resource;
    /* The MIG layout (mig_internal.h): a mig-parted config's text (name for
     * errors) or a ConfigMap holding it under mig_key (NULL:
     * "config.yaml", the GPU Operator's default-mig-parted-config), and
     * which of its layouts (NULL: the node's nvidia.com/mig.config label).
     * Without one, a MIG resource's count comes from the node's
     * nvidia.com/mig-<profile>.count label, else it is an upper bound. */
    const char *mig_config_text;
    size_t mig_config_len;
    const char *mig_config_name;
    const json_t *mig_configmap;
    const char *mig_key;
    const char *mig_layout;
    /* Override the node's labels (0 / NULL: not given): number of physical
     * GPUs (a MIG resource's devices are then GPUs x the layout's instances
     * per GPU), model (GFD product label or short name: "A100-40GB"),
     * memory of one device in MiB (default: the label, else the model's
     * nominal size, or the MIG profile's). */
    int gpus;
    const char *gpu_model;
    long gpu_memory_mib;
    /* Device plugin version, "v0.17.0" when NULL (GPU Operator v24.9). */
    const char *plugin_version;
} an_slots_input;

/* The report (new reference). Keys, all always present (null when not
 * known):
 *   schema ("gpuop/slots/1"), node, plugin_version, config {source, name,
 *   key, selected_by}, config_error {stage, message, plugin_log} or null,
 *   warnings [text], mig_strategy,
 *   resources: one entry per resource reported (the one asked for, else
 *     every resource the config shares, nvidia.com/gpu first):
 *     sharing_strategy ("none" | "time-slicing" | "mps"),
 *     resource (as configured), resource_served (".shared" when renamed),
 *     gpu_model, physical_gpus (GPUs), devices (of the resource: GPUs or
 *     MIG instances), device {kind "gpu" | "mig", mig_profile, per_gpu,
 *     per_gpu_source ("mig-layout" | "profile-maximum"), compute_slices,
 *     memory_slices, max_per_gpu, slices_per_gpu}, replicas,
 *     advertised_computed (devices x replicas), advertised_observed
 *     {capacity, allocatable} or null, advertised_agrees,
 *     vram_per_gpu_mib (of one device), vram_guaranteed_per_slot_mib,
 *     vram_shared_per_gpu_mib (and the same three in GiB, as reals),
 *     mps_active_thread_percentage, isolation ("none" | "memory-limit" |
 *     "hardware" | "exclusive"), isolation_scope ("gpu" | "mig-instance":
 *     between whose slots), sources {gpus, devices, gpu_model, vram},
 *     request_of_2 {fail_requests_greater_than_one {configured, default,
 *     enforced}, outcome ("rejected" | "granted" | "needs-2-devices"),
 *     pod_phase, reason, message, note}, expected_labels {...};
 *   the first resource's keys again at the top (what the lab reads), with
 *   advertised_agrees false when any resource disagrees;
 *   mig (see an_mig_json, plus in_use: the config already uses MIG, and
 *   layout {name, groups} or null) or null.
 *
 * A config the plugin (or its config-manager) would refuse is a finding,
 * not a failure: the report carries config_error and the numbers that
 * depend on the config are null. NULL with err set only for inputs the
 * caller must fix: an unknown GPU model, a GPU count or memory that is
 * neither given nor on the node, a bad plugin version, a ConfigMap whose
 * selected key is not text. */
json_t *an_slots(const an_slots_input *in, gp_error *err);

/* The report as text (a table for operators, translated), JSON (the report
 * itself, keys sorted) or the lab's seven KEY=VALUE lines (or one
 * CONFIG_ERROR= line). malloc'd; NULL only when out of memory. */
char *an_slots_render(const json_t *report, an_format fmt);

#endif
