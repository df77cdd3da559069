/* The taint eviction controller's decisions (taint_eviction_internal.h):
 * getNoExecuteTaints, GetMatchingTolerations (pkg/apis/core/v1/helper),
 * getMinTolerationTime, processPodOnNode and addConditionAndDeletePod. */
#include "controllers/taint_eviction_internal.h"

#include "kube/json.h"
#include "kube/taints.h"
#include "kube/time.h"

json_t *ctl_te_noexecute_taints(const json_t *node)
{
    json_t *out = json_array();
    size_t i;
    const json_t *t;
    json_array_foreach(json_object_get(kube_obj(node, "spec"), "taints"), i, t)
    {
        if (out && kube_str_is(t, "effect", "NoExecute")) json_array_append(out, (json_t *)t);
    }
    return out;
}

/* The first toleration that tolerates the taint, or NULL. */
static const json_t *matching(const json_t *tolerations, const json_t *taint)
{
    size_t i;
    const json_t *tol;
    json_array_foreach(tolerations, i, tol)
    {
        if (kube_toleration_tolerates(tol, kube_str(taint, "key"), kube_str(taint, "value"),
                                      kube_str(taint, "effect")))
            return tol;
    }
    return NULL;
}

int64_t ctl_te_toleration_ms(const json_t *taints, const json_t *tolerations)
{
    int64_t least = CTL_TE_FOREVER;
    size_t i;
    const json_t *taint;
    json_array_foreach(taints, i, taint)
    {
        const json_t *tol = matching(tolerations, taint);
        if (!tol) return CTL_TE_UNTOLERATED;
        const json_t *seconds = json_object_get(tol, "tolerationSeconds");
        if (!json_is_integer(seconds)) continue;
        json_int_t s = json_integer_value(seconds);
        if (s <= 0) return 0;
        if (s < least / 1000) least = (int64_t)s * 1000;
    }
    return least;
}

bool ctl_te_cancel(ctl_te_work *w)
{
    bool was = w->pending;
    w->pending = false;
    w->done = false;
    return was;
}

bool ctl_te_process(ctl_te_work *w, int64_t toleration_ms, int64_t now_ms)
{
    if (toleration_ms == CTL_TE_UNTOLERATED) {
        bool cancelled = ctl_te_cancel(w);
        *w = (ctl_te_work){.pending = true, .created_ms = now_ms, .fire_ms = now_ms};
        return cancelled;
    }
    if (toleration_ms == CTL_TE_FOREVER) return ctl_te_cancel(w);
    /* a deletion scheduled before is kept: it was created earlier, so it
     * fires no later than one made now would (processPodOnNode's
     * startTime.Add(minTolerationTime).Before(triggerTime)) */
    if (w->pending) return false;
    *w = (ctl_te_work){.pending = true, .created_ms = now_ms, .fire_ms = now_ms + toleration_ms};
    return false;
}

bool ctl_te_due(const ctl_te_work *w, int64_t now_ms)
{
    return w->pending && now_ms >= w->fire_ms;
}

json_t *ctl_te_disruption_patch(const json_t *pod, int64_t now_ms)
{
    static const char *const REASON = "DeletionByTaintManager",
                             *const MESSAGE = "Taint manager: deleting due to NoExecute taint";
    const json_t *have = kube_condition(pod, "DisruptionTarget");
    if (have && kube_str_is(have, "status", "True") && kube_str_is(have, "reason", REASON) &&
        kube_str_is(have, "message", MESSAGE))
        return NULL;
    char now[KUBE_TIME_TEXT_MAX];
    kube_time_format(now_ms / 1000, now);
    /* UpdatePodCondition keeps the transition time while the status stays */
    const char *since =
        have && kube_str_is(have, "status", "True") ? kube_str(have, "lastTransitionTime") : now;
    return json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:n, s:s}]}}", "status", "conditions", "type",
                     "DisruptionTarget", "status", "True", "reason", REASON, "message", MESSAGE,
                     "lastProbeTime", "lastTransitionTime", since);
}
