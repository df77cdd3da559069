#include "kube/pod.h"

#include <string.h>

#include "kube/json.h"
#include "kube/time.h"

bool kube_pod_terminal(const json_t *pod)
{
    const char *phase = kube_str(kube_obj(pod, "status"), "phase");
    return strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0;
}

const json_t *kube_pod_ready_condition(const json_t *pod)
{
    return kube_condition(pod, "Ready");
}

bool kube_pod_ready(const json_t *pod)
{
    return kube_str_is(kube_pod_ready_condition(pod), "status", "True");
}

bool kube_pod_available(const json_t *pod, int64_t min_ready_seconds, time_t now)
{
    if (!kube_pod_ready(pod)) return false;
    if (min_ready_seconds == 0) return true;
    kube_time since = kube_time_of(kube_get(kube_pod_ready_condition(pod), "lastTransitionTime"));
    if (!since.set) return false;
    /* now is whole seconds: a fraction of the transition time only makes
     * the sum later, so Before(now) is the seconds compared. */
    return since.sec + min_ready_seconds < (int64_t)now;
}

bool kube_container_is_sidecar(const json_t *container)
{
    return kube_str_is(container, "restartPolicy", "Always");
}
