/* Which nodes a DaemonSet belongs on (NodeShouldRunDaemonPod and its
 * predicates: node name, required node affinity, taints) and the
 * tolerations its pods get. */
#include "controllers/daemonset_internal.h"

#include <stdlib.h>
#include <string.h>

#include "kube/node_affinity.h"
#include "kube/taints.h"

bool ctl_ds_streq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* ---- tolerations ---- */

/* The DaemonSet defaults, in the order AddOrUpdateDaemonPodTolerations adds
 * them; the last only for hostNetwork pods. */
static const struct {
    const char *key, *effect;
} daemon_tolerations[] = {
    {"node.kubernetes.io/not-ready", "NoExecute"},
    {"node.kubernetes.io/unreachable", "NoExecute"},
    {"node.kubernetes.io/disk-pressure", "NoSchedule"},
    {"node.kubernetes.io/memory-pressure", "NoSchedule"},
    {"node.kubernetes.io/pid-pressure", "NoSchedule"},
    {"node.kubernetes.io/unschedulable", "NoSchedule"},
    {"node.kubernetes.io/network-unavailable", "NoSchedule"},
};

/* Toleration.MatchToleration: the same key, operator, value and effect
 * (tolerationSeconds aside). */
static bool same_toleration(const json_t *a, const json_t *b)
{
    static const char *const fields[] = {"key", "operator", "value", "effect"};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        if (!ctl_ds_streq(kube_str_or_null(a, fields[i]), kube_str_or_null(b, fields[i])))
            return false;
    return true;
}

/* AddOrUpdateTolerationInPodSpec: a matching toleration is replaced in place
 * (which drops a tolerationSeconds), otherwise the new one goes last. */
static int add_or_update(json_t *tols, json_t *tol_new)
{
    size_t i;
    json_t *t;
    json_array_foreach(tols, i, t)
    {
        if (same_toleration(t, tol_new)) return json_array_set_new(tols, i, tol_new);
    }
    return json_array_append_new(tols, tol_new);
}

json_t *ctl_ds_daemon_tolerations(const json_t *pod_spec)
{
    const json_t *given = kube_arr(pod_spec, "tolerations");
    json_t *tols = given ? json_deep_copy(given) : json_array();
    if (!tols) return NULL;
    const json_t *host_network = json_object_get(pod_spec, "hostNetwork");
    size_t n = sizeof daemon_tolerations / sizeof *daemon_tolerations;
    if (!json_is_true(host_network)) n--;
    for (size_t i = 0; i < n; i++) {
        json_t *t = json_pack("{s:s,s:s,s:s}", "key", daemon_tolerations[i].key, "operator",
                              "Exists", "effect", daemon_tolerations[i].effect);
        if (!t || add_or_update(tols, t) != 0) {
            json_decref(tols);
            return NULL;
        }
    }
    return tols;
}

bool ctl_ds_should_run_spec(const json_t *pod_spec, const json_t *tolerations, const json_t *node,
                            bool *should_continue)
{
    bool cont = false, run = false;
    const json_t *meta = kube_obj(node, "metadata");
    const char *node_name = kube_str(meta, "name");
    const char *wanted = kube_str(pod_spec, "nodeName");
    const json_t *taints = kube_arr(kube_obj(node, "spec"), "taints");
    if ((!*wanted || !strcmp(wanted, node_name)) &&
        kube_node_affinity_matches(kube_obj(pod_spec, "nodeSelector"),
                                   kube_required_node_affinity(pod_spec), kube_obj(meta, "labels"),
                                   node_name)) {
        if (!kube_untolerated_taint(taints, tolerations,
                                    KUBE_TAINT_NO_SCHEDULE | KUBE_TAINT_NO_EXECUTE)) {
            run = cont = true;
        } else {
            /* Running pods may stay while only NoSchedule taints are
             * untolerated. */
            cont = !kube_untolerated_taint(taints, tolerations, KUBE_TAINT_NO_EXECUTE);
        }
    }
    if (should_continue) *should_continue = cont;
    return run;
}

bool ctl_ds_should_run(const json_t *ds, const json_t *node, bool *should_continue)
{
    const json_t *pod_spec = kube_obj(kube_obj(kube_obj(ds, "spec"), "template"), "spec");
    json_t *tols = ctl_ds_daemon_tolerations(pod_spec);
    if (!tols) {
        if (should_continue) *should_continue = false;
        return false;
    }
    bool run = ctl_ds_should_run_spec(pod_spec, tols, node, should_continue);
    json_decref(tols);
    return run;
}
