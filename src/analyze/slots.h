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
    /* Override the node's labels (0 / NULL: not given): number of devices of
     * the resource (GPUs, or MIG instances for a mixed-strategy resource),
     * model (GFD product label or short name: "A100-40GB"), memory of one
     * device in MiB (default: the label, else the model's nominal size). */
    int gpus;
    const char *gpu_model;
    long gpu_memory_mib;
    /* Device plugin version, "v0.17.0" when NULL (GPU Operator v24.9). */
    const char *plugin_version;
} an_slots_input;

/* The report (new reference). Keys, all always present (null when not
 * known):
 *   node, plugin_version, config {source, name, key, selected_by},
 *   config_error {message, plugin_log} or null, warnings [text],
 *   mig_strategy, sharing_strategy ("none" | "time-slicing" | "mps"),
 *   resource (as configured), resource_served (".shared" when renamed),
 *   gpu_model, physical_gpus, replicas, advertised_computed,
 *   advertised_observed {capacity, allocatable} or null, advertised_agrees,
 *   vram_per_gpu_mib, vram_guaranteed_per_slot_mib,
 *   vram_shared_per_gpu_mib (and the same three in GiB, as reals),
 *   mps_active_thread_percentage, isolation ("none" | "memory-limit" |
 *   "hardware" | "exclusive"), sources {gpus, gpu_model, vram},
 *   request_of_2 {fail_requests_greater_than_one {configured, default,
 *   enforced}, outcome ("rejected" | "granted" | "needs-2-devices"),
 *   pod_phase, reason, message, note}, expected_labels {...},
 *   mig (see an_mig_json) or null.
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
