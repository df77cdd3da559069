/* What the DaemonSet controller's helpers decide, for the controller itself
 * (controllers/daemonset*.c), the rollout analyzer and the lab's grader
 * (pkg/controller/daemon/util/daemonset_util.go and update.go,
 * Kubernetes 1.32). */
#ifndef GPUOP_KUBE_DAEMONSET_H
#define GPUOP_KUBE_DAEMONSET_H

#include <jansson.h>
#include <stdint.h>

#include "util/error.h"

/* util.GetTargetNodeName: spec.nodeName, else the single value of the first
 * matchFields metadata.name In requirement (over every term) of the pod's
 * required node affinity, which is how the controller pins a pod not yet
 * bound. NULL when neither names one node (more than one value is an error
 * to the controller). The string belongs to `pod`. */
const char *kube_ds_target_node(const json_t *pod);

/* util.UnavailableCount and util.SurgeCount of a DaemonSet spec for
 * `desired` nodes: 0 unless updateStrategy.type is RollingUpdate with
 * rollingUpdate set (and, for the surge, maxSurge set); then the value
 * scaled against `desired`, rounding up. A missing maxUnavailable is a nil
 * IntOrString, an error. -1 with `err` holding the IntOrString error. */
int kube_ds_unavailable_count(const json_t *ds_spec, int64_t desired, int64_t *out, gp_error *err);
int kube_ds_surge_count(const json_t *ds_spec, int64_t desired, int64_t *out, gp_error *err);

/* updatedDesiredNodeCounts' two numbers: the counts above, and when desired
 * is above 0 and both are 0 (which validation refuses, but a stored object
 * may hold) maxUnavailable 1. -1 with `err` "invalid value for
 * MaxUnavailable: ..." or "invalid value for MaxSurge: ...". */
int kube_ds_update_limits(const json_t *ds_spec, int64_t desired, int64_t *max_unavailable,
                          int64_t *max_surge, gp_error *err);

#endif
