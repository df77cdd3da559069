/* Which nodes a DaemonSet belongs on (NodeShouldRunDaemonPod and its
 * predicates: node name, required node affinity, taints), and the label
 * selector of spec.selector. */
#include "controllers/daemonset_internal.h"

#include <stdlib.h>
#include <string.h>

#include "kube/intstr.h"
#include "kube/selector.h"

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

/* Toleration.ToleratesTaint. */
static bool tolerates(const json_t *tol, const json_t *taint)
{
    const char *effect = kube_str(tol, "effect"), *key = kube_str(tol, "key");
    if (*effect && strcmp(effect, kube_str(taint, "effect")) != 0) return false;
    if (*key && strcmp(key, kube_str(taint, "key")) != 0) return false;
    const char *op = kube_str(tol, "operator");
    if (!*op || !strcmp(op, "Equal"))
        return !strcmp(kube_str(tol, "value"), kube_str(taint, "value"));
    return !strcmp(op, "Exists");
}

/* FindMatchingUntoleratedTaint over the taints whose effect is NoExecute, or
 * also NoSchedule when `no_schedule_too`. */
static bool has_untolerated_taint(const json_t *node, const json_t *tolerations,
                                  bool no_schedule_too)
{
    const json_t *taints = kube_arr(kube_obj(node, "spec"), "taints");
    size_t i, j;
    const json_t *taint, *tol;
    json_array_foreach(taints, i, taint)
    {
        const char *effect = kube_str(taint, "effect");
        if (strcmp(effect, "NoExecute") != 0 && !(no_schedule_too && !strcmp(effect, "NoSchedule")))
            continue;
        bool tolerated = false;
        json_array_foreach(tolerations, j, tol)
        {
            if (tolerates(tol, taint)) {
                tolerated = true;
                break;
            }
        }
        if (!tolerated) return true;
    }
    return false;
}

/* ---- label requirements ---- */

typedef enum { OP_IN, OP_NOT_IN, OP_EXISTS, OP_NOT_EXISTS, OP_GT, OP_LT, OP_BAD } label_op;

static label_op op_of(const char *op, bool numeric_allowed)
{
    if (!op) return OP_BAD;
    if (!strcmp(op, "In")) return OP_IN;
    if (!strcmp(op, "NotIn")) return OP_NOT_IN;
    if (!strcmp(op, "Exists")) return OP_EXISTS;
    if (!strcmp(op, "DoesNotExist")) return OP_NOT_EXISTS;
    if (numeric_allowed && !strcmp(op, "Gt")) return OP_GT;
    if (numeric_allowed && !strcmp(op, "Lt")) return OP_LT;
    return OP_BAD;
}

/* labels.NewRequirement's checks: a valid key, values that are label
 * values, none for the existence operators, exactly one integer for Gt/Lt. */
static bool requirement_valid(const char *key, label_op op, const json_t *values)
{
    if (!key || kube_label_validate_key(key, NULL) != 0) return false;
    size_t n = json_is_array(values) ? json_array_size(values) : 0;
    if ((op == OP_IN || op == OP_NOT_IN) && n == 0) return false;
    if ((op == OP_EXISTS || op == OP_NOT_EXISTS) && n != 0) return false;
    if ((op == OP_GT || op == OP_LT) && n != 1) return false;
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(values, i);
        int64_t ignored;
        if (!json_is_string(v)) return false;
        if ((op == OP_GT || op == OP_LT) && !kube_parse_int64(json_string_value(v), &ignored))
            return false;
        if (op != OP_GT && op != OP_LT &&
            kube_label_validate_value(json_string_value(v), NULL) != 0)
            return false;
    }
    return true;
}

static bool value_in(const char *value, const json_t *values)
{
    size_t i;
    const json_t *v;
    json_array_foreach(values, i, v)
    {
        if (json_is_string(v) && !strcmp(json_string_value(v), value)) return true;
    }
    return false;
}

/* Requirement.Matches against a label set. */
static bool requirement_matches(const char *key, label_op op, const json_t *values,
                                const json_t *labels)
{
    const char *have = kube_str_or_null(labels, key);
    int64_t a, b;
    switch (op) {
    case OP_IN:
        return have && value_in(have, values);
    case OP_NOT_IN:
        return !have || !value_in(have, values);
    case OP_EXISTS:
        return have != NULL;
    case OP_NOT_EXISTS:
        return have == NULL;
    case OP_GT:
    case OP_LT:
        if (!have || !kube_parse_int64(have, &a) ||
            !kube_parse_int64(json_string_value(json_array_get(values, 0)), &b))
            return false;
        return op == OP_GT ? a > b : a < b;
    default:
        return false;
    }
}

/* A list of {key, operator, values} requirements, ANDed. */
static bool requirements_match(const json_t *reqs, const json_t *labels, bool numeric_allowed,
                               bool *invalid)
{
    size_t i;
    const json_t *r;
    bool all = true;
    json_array_foreach(reqs, i, r)
    {
        const char *key = kube_str_or_null(r, "key");
        label_op op = op_of(kube_str_or_null(r, "operator"), numeric_allowed);
        const json_t *values = json_object_get(r, "values");
        if (op == OP_BAD || !requirement_valid(key, op, values)) {
            *invalid = true;
            return false;
        }
        if (!requirement_matches(key, op, values, labels)) all = false;
    }
    return all;
}

bool ctl_ds_selector_matches(const json_t *selector, const json_t *labels, bool *invalid)
{
    if (!json_is_object(selector)) return false;
    const json_t *match_labels = kube_obj(selector, "matchLabels");
    const char *key;
    const json_t *value;
    bool all = true;
    json_object_foreach((json_t *)match_labels, key, value)
    {
        if (!json_is_string(value) || kube_label_validate_key(key, NULL) != 0 ||
            kube_label_validate_value(json_string_value(value), NULL) != 0) {
            *invalid = true;
            return false;
        }
        const char *have = kube_str_or_null(labels, key);
        if (!have || strcmp(have, json_string_value(value)) != 0) all = false;
    }
    bool bad = false;
    bool exprs = requirements_match(kube_arr(selector, "matchExpressions"), labels, false, &bad);
    if (bad) {
        *invalid = true;
        return false;
    }
    return all && exprs;
}

/* ---- required node affinity ---- */

/* The node's field set holds only metadata.name; matchFields supports In
 * and NotIn with exactly one value. Returns -1 for a term the real parser
 * refuses, which then matches nothing. */
static int fields_match(const json_t *reqs, const json_t *node)
{
    const char *name = kube_str(kube_obj(node, "metadata"), "name");
    size_t i;
    const json_t *r;
    int all = 1;
    json_array_foreach(reqs, i, r)
    {
        const char *op = kube_str(r, "operator");
        const json_t *values = kube_arr(r, "values");
        if ((strcmp(op, "In") != 0 && strcmp(op, "NotIn") != 0) || !values ||
            json_array_size(values) != 1 || !json_is_string(json_array_get(values, 0)))
            return -1;
        const char *field = !strcmp(kube_str(r, "key"), "metadata.name") ? name : "";
        bool equal = !strcmp(field, json_string_value(json_array_get(values, 0)));
        if (equal != !strcmp(op, "In")) all = 0;
    }
    return all;
}

static bool term_matches(const json_t *term, const json_t *node)
{
    const json_t *exprs = kube_arr(term, "matchExpressions");
    const json_t *fields = kube_arr(term, "matchFields");
    const json_t *labels = kube_obj(kube_obj(node, "metadata"), "labels");
    bool invalid = false;
    bool labels_ok = requirements_match(exprs, labels, true, &invalid);
    int fields_ok = fields_match(fields, node);
    return !invalid && fields_ok >= 0 && labels_ok && fields_ok;
}

/* LazyErrorNodeSelector.Match: terms are ORed; an empty term selects nothing
 * and a term that does not parse is skipped. */
static bool node_selector_matches(const json_t *selector, const json_t *node)
{
    size_t i;
    const json_t *term;
    json_array_foreach(kube_arr(selector, "nodeSelectorTerms"), i, term)
    {
        size_t n = json_array_size(kube_arr(term, "matchExpressions")) +
                   json_array_size(kube_arr(term, "matchFields"));
        if (n == 0) continue;
        if (term_matches(term, node)) return true;
    }
    return false;
}

/* nodeaffinity.GetRequiredNodeAffinity(pod).Match(node): spec.nodeSelector
 * (exact label values), then the required node affinity when present. */
static bool required_affinity_matches(const json_t *pod_spec, const json_t *node)
{
    const json_t *labels = kube_obj(kube_obj(node, "metadata"), "labels");
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)kube_obj(pod_spec, "nodeSelector"), key, value)
    {
        const char *have = kube_str_or_null(labels, key);
        if (!json_is_string(value) || !have || strcmp(have, json_string_value(value)) != 0)
            return false;
    }
    const json_t *required = kube_obj(kube_obj(kube_obj(pod_spec, "affinity"), "nodeAffinity"),
                                      "requiredDuringSchedulingIgnoredDuringExecution");
    return !required || node_selector_matches(required, node);
}

bool ctl_ds_should_run_spec(const json_t *pod_spec, const json_t *tolerations, const json_t *node,
                            bool *should_continue)
{
    bool cont = false, run = false;
    const char *node_name = kube_str(kube_obj(node, "metadata"), "name");
    const char *wanted = kube_str(pod_spec, "nodeName");
    if ((!*wanted || !strcmp(wanted, node_name)) && required_affinity_matches(pod_spec, node)) {
        if (!has_untolerated_taint(node, tolerations, true)) {
            run = cont = true;
        } else {
            /* Running pods may stay while only NoSchedule taints are
             * untolerated. */
            cont = !has_untolerated_taint(node, tolerations, false);
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
