/* Taints and tolerations as kube-scheduler's TaintToleration and
 * NodeUnschedulable filters and the DaemonSet controller read them:
 * Toleration.ToleratesTaint (k8s.io/api/core/v1/toleration.go, v0.32),
 * TolerationsTolerateTaint and FindMatchingUntoleratedTaint
 * (k8s.io/component-helpers/scheduling/corev1/helpers.go).
 *
 * A toleration with an effect tolerates only taints of that effect, one
 * with a key only taints of that key; operator Exists tolerates any value,
 * Equal (or none) only the same value, and any other operator nothing
 * (1.32 has no Gt or Lt for tolerations). tolerationSeconds plays no part.
 *
 * Tolerations and taints are read in their JSON form (arrays of objects,
 * NULL as empty), with nothing parsed ahead: the scheduler looks a pod's
 * tolerations up once per decision and hands them in. */
#ifndef GPUOP_KUBE_TAINTS_H
#define GPUOP_KUBE_TAINTS_H

#include <jansson.h>
#include <stdbool.h>

/* Effects for kube_untolerated_taint's filter. */
#define KUBE_TAINT_NO_SCHEDULE        1u
#define KUBE_TAINT_PREFER_NO_SCHEDULE 2u
#define KUBE_TAINT_NO_EXECUTE         4u

/* Toleration.ToleratesTaint for the taint {key, value, effect}. */
bool kube_toleration_tolerates(const json_t *toleration, const char *key, const char *value,
                               const char *effect);

/* TolerationsTolerateTaint: some toleration of the array tolerates it. */
bool kube_tolerations_tolerate(const json_t *tolerations, const char *key, const char *value,
                               const char *effect);

/* FindMatchingUntoleratedTaint: the first taint of `taints`, in their
 * order, whose effect is one of `effects` and which no toleration
 * tolerates; NULL when there is none. */
const json_t *kube_untolerated_taint(const json_t *taints, const json_t *tolerations,
                                     unsigned effects);

#endif
