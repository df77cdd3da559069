#include "kube/node_affinity.h"

#include <string.h>

#include "kube/json.h"
#include "kube/label_selector.h"

const json_t *kube_required_node_affinity(const json_t *pod_spec)
{
    return kube_obj(kube_path(pod_spec, "affinity", "nodeAffinity", NULL),
                    "requiredDuringSchedulingIgnoredDuringExecution");
}

/* nodeSelectorRequirementsAsFieldSelector: In and NotIn with exactly one
 * value. */
static bool field_valid(const json_t *req)
{
    const json_t *values = kube_arr(req, "values");
    if (!kube_str_is(req, "operator", "In") && !kube_str_is(req, "operator", "NotIn")) return false;
    return json_array_size(values) == 1 && json_is_string(json_array_get(values, 0));
}

static bool field_matches(const json_t *req, const char *node_name)
{
    const char *have = kube_str_is(req, "key", "metadata.name") ? node_name : "";
    bool equal = strcmp(have, json_string_value(json_array_get(kube_arr(req, "values"), 0))) == 0;
    return kube_str_is(req, "operator", "In") ? equal : !equal;
}

/* nodeSelectorTerm.match: parse errors and mismatches both mean "no". */
static bool term_matches(const json_t *term, const json_t *labels, const char *node_name)
{
    size_t i;
    const json_t *r;
    json_array_foreach(kube_arr(term, "matchExpressions"), i, r)
    {
        if (!kube_requirement_matches(r, labels, KUBE_REQ_NODE_SELECTOR)) return false;
    }
    const json_t *fields = kube_arr(term, "matchFields");
    json_array_foreach(fields, i, r)
    {
        if (!field_valid(r)) return false;
    }
    if (!*node_name) return true;
    json_array_foreach(fields, i, r)
    {
        if (!field_matches(r, node_name)) return false;
    }
    return true;
}

static bool term_empty(const json_t *term)
{
    return json_array_size(kube_arr(term, "matchExpressions")) == 0 &&
           json_array_size(kube_arr(term, "matchFields")) == 0;
}

bool kube_node_selector_matches(const json_t *node_selector, const json_t *labels,
                                const char *node_name)
{
    size_t i;
    const json_t *term;
    json_array_foreach(kube_arr(node_selector, "nodeSelectorTerms"), i, term)
    {
        if (!term_empty(term) && term_matches(term, labels, node_name ? node_name : ""))
            return true;
    }
    return false;
}

bool kube_node_affinity_matches(const json_t *node_selector, const json_t *required,
                                const json_t *labels, const char *node_name)
{
    const char *key;
    const json_t *want;
    json_object_foreach((json_t *)(json_is_object(node_selector) ? node_selector : NULL), key, want)
    {
        if (!json_is_string(want) || !kube_str_is(labels, key, json_string_value(want)))
            return false;
    }
    return !required || kube_node_selector_matches(required, labels, node_name);
}
