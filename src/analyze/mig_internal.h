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

#endif
