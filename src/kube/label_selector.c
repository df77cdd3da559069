#include "kube/label_selector.h"

#include <stdint.h>
#include <string.h>

#include "kube/intstr.h"
#include "kube/json.h"
#include "kube/selector.h"

typedef enum op { OP_IN, OP_NOT_IN, OP_EXISTS, OP_NOT_EXISTS, OP_GT, OP_LT, OP_BAD } op;

static op op_of(const char *name, kube_requirement_kind kind)
{
    if (!strcmp(name, "In")) return OP_IN;
    if (!strcmp(name, "NotIn")) return OP_NOT_IN;
    if (!strcmp(name, "Exists")) return OP_EXISTS;
    if (!strcmp(name, "DoesNotExist")) return OP_NOT_EXISTS;
    if (kind == KUBE_REQ_NODE_SELECTOR && !strcmp(name, "Gt")) return OP_GT;
    if (kind == KUBE_REQ_NODE_SELECTOR && !strcmp(name, "Lt")) return OP_LT;
    return OP_BAD;
}

/* labels.NewRequirement's checks. */
static bool valid(const char *key, op o, const json_t *values)
{
    if (o == OP_BAD || kube_label_validate_key(key, NULL) < 0) return false;
    size_t count = json_array_size(values), i;
    const json_t *v;
    json_array_foreach(values, i, v)
    {
        if (!json_is_string(v) || kube_label_validate_value(json_string_value(v), NULL) < 0)
            return false;
    }
    switch (o) {
    case OP_IN:
    case OP_NOT_IN:
        return count > 0;
    case OP_EXISTS:
    case OP_NOT_EXISTS:
        return count == 0;
    case OP_GT:
    case OP_LT: {
        int64_t n;
        return count == 1 && kube_parse_int64(json_string_value(json_array_get(values, 0)), &n);
    }
    default:
        return false;
    }
}

bool kube_requirement_valid(const json_t *req, kube_requirement_kind kind)
{
    return valid(kube_str(req, "key"), op_of(kube_str(req, "operator"), kind),
                 kube_arr(req, "values"));
}

bool kube_requirement_matches(const json_t *req, const json_t *labels, kube_requirement_kind kind)
{
    const char *key = kube_str(req, "key");
    op o = op_of(kube_str(req, "operator"), kind);
    const json_t *values = kube_arr(req, "values");
    if (!valid(key, o, values)) return false;
    const char *have = kube_str_or_null(labels, key);
    int64_t a, b;
    switch (o) {
    case OP_IN:
        return have && kube_has_string(values, have);
    case OP_NOT_IN:
        return !have || !kube_has_string(values, have);
    case OP_EXISTS:
        return have != NULL;
    case OP_NOT_EXISTS:
        return have == NULL;
    case OP_GT:
    case OP_LT:
        if (!have || !kube_parse_int64(have, &a)) return false;
        kube_parse_int64(json_string_value(json_array_get(values, 0)), &b);
        return o == OP_GT ? a > b : a < b;
    default:
        return false;
    }
}

bool kube_label_selector_object_matches(const json_t *selector, const json_t *labels, bool *invalid)
{
    if (!json_is_object(selector)) return false;
    bool all = true;
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)kube_obj(selector, "matchLabels"), key, value)
    {
        /* NewRequirement(key, Equals, [value]) */
        if (!json_is_string(value) || kube_label_validate_key(key, NULL) != 0 ||
            kube_label_validate_value(json_string_value(value), NULL) != 0) {
            *invalid = true;
            return false;
        }
        if (!kube_str_is(labels, key, json_string_value(value))) all = false;
    }
    size_t i;
    const json_t *req;
    json_array_foreach(kube_arr(selector, "matchExpressions"), i, req)
    {
        if (!kube_requirement_valid(req, KUBE_REQ_LABEL_SELECTOR)) {
            *invalid = true;
            return false;
        }
        if (!kube_requirement_matches(req, labels, KUBE_REQ_LABEL_SELECTOR)) all = false;
    }
    return all;
}
