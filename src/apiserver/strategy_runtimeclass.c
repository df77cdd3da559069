/* RuntimeClass admission's merge into a pod being created
 * (plugin/pkg/admission/runtimeclass/admission.go, with MergeTolerations from
 * pkg/util/tolerations). Looking the RuntimeClass up is the caller's. */
#include "apiserver/strategy.h"
#include "apiserver/strategy_internal.h"

#include <stdlib.h>
#include <string.h>

/* Semantic.DeepEqual of two ResourceLists: same names, equal quantities. */
static bool lists_equal(const json_t *a, const json_t *b)
{
    if (json_object_size(a) != json_object_size(b)) return false;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)a, k, v)
    {
        const json_t *w = json_object_get(b, k);
        bool ok;
        if (!w || as_quantity_cmp(v, w, &ok) != 0 || !ok) return false;
    }
    return true;
}

static bool toleration_seconds(const json_t *t, json_int_t *out)
{
    const json_t *v = json_object_get(t, "tolerationSeconds");
    if (!json_is_integer(v)) return false;
    *out = json_integer_value(v);
    return true;
}

/* isSuperset(ss, t): ss tolerates everything t does (pkg/util/tolerations). */
static bool is_superset(const json_t *ss, const json_t *t)
{
    if (as_sem_equal(t, ss)) return true;
    const char *ss_key = as_str(ss, "key"), *ss_op = as_str(ss, "operator");
    if (strcmp(as_str(t, "key"), ss_key) != 0 && (*ss_key || strcmp(ss_op, "Exists") != 0))
        return false;
    const char *ss_eff = as_str(ss, "effect");
    if (strcmp(as_str(t, "effect"), ss_eff) != 0 && *ss_eff) return false;
    json_int_t ss_secs, t_secs;
    if (strcmp(ss_eff, "NoExecute") == 0 && toleration_seconds(ss, &ss_secs)) {
        if (!toleration_seconds(t, &t_secs) || t_secs > ss_secs) return false;
    }
    if (!*ss_op || strcmp(ss_op, "Equal") == 0)
        return strcmp(as_str(t, "operator"), "Equal") == 0 &&
               strcmp(as_str(t, "value"), as_str(ss, "value")) == 0;
    return strcmp(ss_op, "Exists") == 0;
}

/* MergeTolerations: keeps a toleration unless an earlier kept one or a later
 * different one covers it. */
static json_t *merge_tolerations(const json_t *first, const json_t *second)
{
    json_t *all = json_array(), *merged = json_array();
    json_array_extend(all, (json_t *)(json_is_array(first) ? first : NULL));
    json_array_extend(all, (json_t *)(json_is_array(second) ? second : NULL));
    size_t n = json_array_size(all);
    for (size_t i = 0; i < n; i++) {
        const json_t *t = json_array_get(all, i);
        bool redundant = false;
        for (size_t j = 0; j < json_array_size(merged) && !redundant; j++)
            redundant = is_superset(json_array_get(merged, j), t);
        for (size_t j = i + 1; j < n && !redundant; j++) {
            const json_t *t2 = json_array_get(all, j);
            redundant = !as_sem_equal(t, t2) && is_superset(t2, t);
        }
        if (!redundant) json_array_append_new(merged, json_deep_copy(t));
    }
    json_decref(all);
    return merged;
}

static int forbid(char **message, const char *text)
{
    if (message) *message = strdup(text);
    return -1;
}

static int merge_overhead(json_t *spec, const json_t *rc, char **message)
{
    const json_t *overhead = json_object_get(rc, "overhead");
    const json_t *pod_over = json_object_get(spec, "overhead");
    bool pod_has = pod_over && !json_is_null(pod_over);
    if (!overhead || json_is_null(overhead)) {
        if (pod_has)
            return forbid(message,
                          "pod rejected: Pod Overhead set without corresponding RuntimeClass "
                          "defined Overhead");
        return 0;
    }
    json_t *fixed = json_deep_copy(json_object_get(overhead, "podFixed"));
    as_canonical_list(fixed, true);
    if (pod_has && !lists_equal(fixed, pod_over)) {
        json_decref(fixed);
        return forbid(message,
                      "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
    }
    if (json_object_size(fixed) > 0)
        json_object_set_new(spec, "overhead", fixed);
    else {
        json_decref(fixed);
        json_object_del(spec, "overhead");
    }
    return 0;
}

static int merge_scheduling(json_t *spec, const json_t *rc, char **message)
{
    const json_t *sched = json_object_get(rc, "scheduling");
    if (!json_is_object(sched)) return 0;
    const json_t *rc_sel = json_object_get(sched, "nodeSelector");
    json_t *sel = json_object_get(spec, "nodeSelector");
    const char *k;
    const json_t *v;
    if (!json_is_object(sel) && json_is_object(rc_sel)) {
        json_object_set_new(spec, "nodeSelector", json_deep_copy(rc_sel));
    } else if (json_is_object(rc_sel)) {
        json_object_foreach((json_t *)rc_sel, k, v)
        {
            const json_t *pv = json_object_get(sel, k);
            if (pv && strcmp(as_str(sel, k), json_string_value(v) ? json_string_value(v) : "")) {
                if (message)
                    *message = gp_format("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; "
                                         "pod.spec.nodeSelector[%s] = %s",
                                         k, as_str(rc_sel, k), k, as_str(sel, k));
                return -1;
            }
            json_object_set(sel, k, (json_t *)v);
        }
    }
    json_t *merged = merge_tolerations(json_object_get(spec, "tolerations"),
                                       json_object_get(sched, "tolerations"));
    if (json_array_size(merged) > 0)
        json_object_set_new(spec, "tolerations", merged);
    else {
        json_decref(merged);
        json_object_del(spec, "tolerations");
    }
    return 0;
}

int as_strategy_runtimeclass(json_t *pod, const json_t *runtimeclass, char **message)
{
    if (message) *message = NULL;
    if (!json_is_object(pod)) return 0;
    json_t *spec = json_deep_copy(json_object_get(pod, "spec"));
    if (!json_is_object(spec)) {
        json_decref(spec);
        spec = json_object();
    }
    /* Admit (setOverhead, setScheduling) then Validate (validateOverhead),
     * which after setOverhead can only object to an overhead the class lacks */
    if (merge_overhead(spec, runtimeclass, message) != 0 ||
        merge_scheduling(spec, runtimeclass, message) != 0) {
        json_decref(spec);
        return -1;
    }
    json_object_set_new(pod, "spec", spec);
    return 0;
}
