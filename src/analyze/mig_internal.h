/* GPU models and the MIG layouts each one offers.
 *
 * Facts: /work/shared/design/gpu-node-facts.md section 2.1 (profiles and
 * their maximum instance counts per GPU, the operator's "balanced"
 * layouts) and 2.3 (resource names). Memory sizes are the nominal ones of
 * the model's name (A100-40GB: 40 GiB); a node's nvidia.com/gpu.memory
 * label, when there is one, is more exact and wins. */
#ifndef GPUOP_ANALYZE_MIG_INTERNAL_H
#define GPUOP_ANALYZE_MIG_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "util/error.h"

typedef struct an_mig_profile {
    const char *name; /* "1g.5gb", "1g.5gb+me" */
    int max;          /* instances of this profile alone on one GPU */
    int compute;      /* compute slices (of 7; of 4 on the A30) */
    int memory;       /* memory slices (of 8; of 4 on the A30) */
    int memory_gb;    /* as the profile name says */
} an_mig_profile;

typedef struct an_mig_count {
    const char *profile;
    int count;
} an_mig_count;

typedef struct an_gpu_model {
    const char *name;               /* canonical short name: "A100-40GB" */
    const char *family;             /* "A100" */
    int memory_gib;                 /* nominal */
    int cc;                         /* compute capability x10: 80 for 8.0 */
    const an_mig_profile *profiles; /* NULL: no MIG */
    size_t nprofiles;
    const an_mig_count *balanced; /* NULL: none in the operator's config */
    size_t nbalanced;
} an_gpu_model;

/* The model a GFD product label ("NVIDIA-A100-SXM4-40GB",
 * "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED", "Tesla-T4") or a short name
 * ("A100-40GB", "a100", "H100-80GB") names. When the text does not settle
 * the memory size (a bare "A100"), memory_mib (> 0) picks the variant
 * closest to it, else the smallest. When the label carries a MIG profile,
 * it is copied to mig_profile (size bytes; "" otherwise). NULL when the
 * family is unknown. */
const an_gpu_model *an_gpu_model_find(const char *text, long memory_mib, char *mig_profile,
                                      size_t size);

/* The model's profile called `name` (with or without "+me"), or NULL. */
const an_mig_profile *an_mig_profile_find(const an_gpu_model *m, const char *name);

/* What MIG offers instead of sharing, for a report:
 *   {"model": "A100-40GB", "slices": {"compute": 7, "memory": 8},
 *    "profiles": [{"profile": "1g.5gb", "max_instances": 7, "memory_gib": 5,
 *                  "compute_slices": 1, "memory_slices": 1,
 *                  "resource_mixed": "nvidia.com/mig-1g.5gb"}, ...],
 *    "balanced": [{"profile": "1g.5gb", "count": 2}, ...] or null,
 *    "resource_single": "nvidia.com/gpu"}
 * or NULL (a new reference otherwise) when the model has no MIG. */
json_t *an_mig_json(const an_gpu_model *m);

/* "nvidia.com/mig-<profile>" with '+' turned into '.', into out. */
void an_mig_resource_name(const char *profile, char *out, size_t size);

/* ---- mig-parted layouts (NVIDIA/mig-parted pkg/mig/config; the GPU
 * Operator's default-mig-parted-config, gpu-node-facts.md 2.4) ----
 *
 *   version: v1
 *   mig-configs:
 *     all-balanced:
 *       - devices: all            (or a list of GPU indices)
 *         mig-enabled: true
 *         mig-devices: {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}
 *
 * The layout `layout` of the config text, as
 *   [{"devices": "all" | [0, 1], "mig_enabled": bool,
 *     "mig_devices": {"1g.5gb": 2}}]
 * (device-filter is not read: every group applies to the GPUs it names).
 * NULL with err located (NAME:LINE:COL) when the text is not a mig-parted
 * config or has no such layout. */
json_t *an_mig_layout_parse(const char *text, size_t len, const char *name, const char *layout,
                            gp_error *err);

/* Instances of `profile` the layout makes on `gpus` GPUs (indices 0 to
 * gpus-1; gpus < 0: unknown, and then only groups listing indices count,
 * -1 when an "all" group has the profile). *per_gpu (may be NULL) gets
 * the count one GPU of the first group with the profile holds (0: none). */
long an_mig_layout_instances(const json_t *layout, const char *profile, long gpus, long *per_gpu);

/* The GPUs the layout leaves out of MIG (groups with mig-enabled false),
 * of `gpus` GPUs: the full GPUs the mixed strategy advertises as
 * nvidia.com/gpu (2.3). */
long an_mig_layout_full_gpus(const json_t *layout, long gpus);

/* Appends a warning per group of the layout that cannot be made on one GPU
 * of model m: a profile the model does not have, more instances of one
 * profile than its maximum, or more compute or memory slices than the GPU
 * has (2.1, 2.2; placement rules beyond the slice budget are not checked). */
void an_mig_layout_check(const json_t *layout, const char *layout_name, const an_gpu_model *m,
                         json_t *warnings);

#endif
