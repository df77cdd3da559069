/* The NVIDIA device plugin's container (image nvcr.io/nvidia/k8s-device-
 * plugin:TAG) on a simulated node: which config it reads and what it then
 * registers with the kubelet's device manager. The counts are `gpuop
 * slots`' (an_slots in src/analyze/slots.h, with the plugin's own config
 * rules): one resource per shared or renamed name, GPUs x replicas.
 *
 * Which config (../shared/design/gpu-node-facts.md 1.5):
 * - the GPU Operator's way: a config-manager container (any container of
 *   the pod with env CONFIG_FILE_SRCDIR) links one key of the ConfigMap
 *   mounted at CONFIG_FILE_SRCDIR, chosen by the node's
 *   nvidia.com/device-plugin.config label, then DEFAULT_CONFIG, then
 *   FALLBACK_STRATEGIES (an_dp_config_select);
 * - else the plugin's --config-file PATH (or env CONFIG_FILE), a file of a
 *   ConfigMap volume mounted above PATH (its key, or the key an `items`
 *   entry maps to that path);
 * - else none: every GPU once.
 * The plugin starts only where its driver works: on a node whose driver
 * module did not load, NVML's init fails and the plugin exits (5:
 * "nvml init failed: ..." with failOnInitError, the operator's default);
 * that is the agent's to decide (agents.c), not this file's. */
#ifndef GPUOP_AGENTS_DEVPLUGIN_H
#define GPUOP_AGENTS_DEVPLUGIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#define AG_DEVPLUGIN_IMAGE "nvcr.io/nvidia/k8s-device-plugin"

typedef struct ag_resource {
    char name[96]; /* nvidia.com/gpu, nvidia.com/gpu.shared */
    long long count;
} ag_resource;

/* Whether `pod` runs the device plugin: its container's name into
 * container (cap bytes) and true. */
bool ag_devplugin_in_pod(const json_t *pod, char *container, size_t cap);

/* What the plugin of `pod` registers on `node` (the Node object: its
 * labels) with `gpus` physical GPUs of `model`, reading its config from
 * `configmaps` (every ConfigMap: the pod's namespace's are looked at). 0
 * with out[0..*n), or -1 with err: the plugin's own error, or the kubelet's
 * for a ConfigMap it cannot mount; the plugin does not run then. */
int ag_devplugin_resources(const json_t *pod, const json_t *node, const json_t *configmaps,
                           int gpus, const char *model, ag_resource *out, size_t cap, size_t *n,
                           gp_error *err);

#endif
