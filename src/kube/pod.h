/* A pod's state as the Kubernetes 1.32 controllers read it
 * (pkg/api/v1/pod/util.go: IsPodReady, GetPodReadyCondition,
 * IsPodAvailable, IsPodPhaseTerminal, IsRestartableInitContainer), for the
 * DaemonSet controller, the scheduler, the kubelet, the API server, the
 * analyzers and the lab alike. */
#ifndef GPUOP_KUBE_POD_H
#define GPUOP_KUBE_POD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* IsPodPhaseTerminal: status.phase Succeeded or Failed. */
bool kube_pod_terminal(const json_t *pod);

/* GetPodReadyCondition: the first condition of type Ready, or NULL. */
const json_t *kube_pod_ready_condition(const json_t *pod);

/* IsPodReady: that condition's status is "True". */
bool kube_pod_ready(const json_t *pod);

/* IsPodAvailable(pod, minReadySeconds, now): ready, and either
 * minReadySeconds is 0 or the Ready condition's lastTransitionTime is set
 * and lastTransitionTime + minReadySeconds is before now. A transition time
 * that is absent, null, unreadable or Go's zero time is not set, so such a
 * pod is not available while minReadySeconds is above 0. */
bool kube_pod_available(const json_t *pod, int64_t min_ready_seconds, time_t now);

/* IsRestartableInitContainer: an init container with restartPolicy Always
 * (a sidecar). NULL is not one. */
bool kube_container_is_sidecar(const json_t *container);

#endif
