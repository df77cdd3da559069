/* Resource requirements and tolerations, as pkg/apis/core/validation
 * validates them (validateResourceRequirements, ValidateResourceQuantityValue,
 * validateContainerResourceName, ValidateTolerations), with the resource-name
 * rules of pkg/apis/core/helper. */
#include "apiserver/strategy_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/quantity.h"

/* ---- resource names (pkg/apis/core/helper) ---- */

bool as_in_list(const char *s, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(s, list[i]) == 0) return true;
    return false;
}

static bool is_hugepages(const char *name)
{
    return strncmp(name, "hugepages-", 10) == 0;
}

static bool is_native(const char *name)
{
    return !strchr(name, '/') || strstr(name, "kubernetes.io/");
}

static bool is_extended(const char *name)
{
    if (is_native(name) || strncmp(name, "requests.", 9) == 0) return false;
    char *quota = gp_format("requests.%s", name);
    char *msgs[AS_MSGS_MAX];
    size_t n = quota ? as_qualified_name(quota, msgs) : 1;
    if (quota) as_msgs_free(msgs, n);
    free(quota);
    return n == 0;
}

static bool overcommit_allowed(const char *name)
{
    return is_native(name) && !is_hugepages(name);
}

static bool is_integer_resource(const char *name)
{
    static const char *const integer[] = {"pods",
                                          "resourcequotas",
                                          "services",
                                          "replicationcontrollers",
                                          "secrets",
                                          "configmaps",
                                          "persistentvolumeclaims",
                                          "services.nodeports",
                                          "services.loadbalancers",
                                          NULL};
    return as_in_list(name, integer) || is_extended(name);
}

static bool is_standard_resource(const char *name)
{
    static const char *const standard[] = {"cpu",
                                           "memory",
                                           "ephemeral-storage",
                                           "requests.cpu",
                                           "requests.memory",
                                           "requests.ephemeral-storage",
                                           "limits.cpu",
                                           "limits.memory",
                                           "limits.ephemeral-storage",
                                           "pods",
                                           "resourcequotas",
                                           "services",
                                           "replicationcontrollers",
                                           "secrets",
                                           "configmaps",
                                           "persistentvolumeclaims",
                                           "storage",
                                           "requests.storage",
                                           "services.nodeports",
                                           "services.loadbalancers",
                                           NULL};
    return as_in_list(name, standard) || is_hugepages(name) ||
           strncmp(name, "requests.hugepages-", 19) == 0;
}

/* validateContainerResourceName. A ResourceName prints through its String()
 * method, so unquoted. */
static void validate_resource_name(json_t *errs, const char *name, const char *path)
{
    char *msgs[AS_MSGS_MAX];
    size_t n = as_qualified_name(name, msgs);
    for (size_t i = 0; i < n; i++)
        as_invalid_raw(errs, path, name, msgs[i]);
    as_msgs_free(msgs, n);
    bool slash = strchr(name, '/') != NULL;
    if (n == 0 && !slash && !is_standard_resource(name))
        as_invalid_raw(errs, path, name, "must be a standard resource type or fully qualified");
    if (!slash) {
        static const char *const container[] = {"cpu", "memory", "ephemeral-storage", NULL};
        if (!as_in_list(name, container) && !is_hugepages(name))
            as_invalid_raw(errs, path, name, "must be a standard resource for containers");
    } else if (!is_native(name) && !is_extended(name)) {
        as_invalid_raw(errs, path, name, "doesn't follow extended resource name standard");
    }
}

/* ---- quantities ---- */

static bool quantity(const json_t *v, kube_quantity *q, char text[256])
{
    as_quantity_text(v, text, 256);
    return kube_quantity_parse(text, q, NULL) == 0;
}

/* ValidateResourceQuantityValue, plus what the real server rejects earlier
 * with 400: a value that is no quantity at all. */
bool as_validate_quantity(json_t *errs, const char *name, const json_t *v, const char *path)
{
    char text[256];
    kube_quantity q;
    if (!quantity(v, &q, text)) {
        const char *why = as_quantity_error(text);
        as_invalid(errs, path, text, why ? why : "unable to parse numeric part of quantity");
        return false;
    }
    char canon[KUBE_QUANTITY_FORMAT_MAX];
    kube_quantity_format(&q, canon);
    if (q.units < 0 || (q.units == 0 && q.nanos < 0))
        as_invalid(errs, path, canon, "must be greater than or equal to 0");
    int64_t milli;
    /* 1.32 prints Go's %#v of the resource.Quantity here (its internal
     * int64Amount, which depends on how the client wrote the number and is
     * gone once create has canonicalised it); the canonical text, unquoted as
     * a Stringer would print, is the closest stable rendering */
    if (is_integer_resource(name) && kube_quantity_to_milli(&q, &milli, NULL) == 0 &&
        milli % 1000 != 0)
        as_invalid_raw(errs, path, canon, "must be an integer");
    return true;
}

/* validateResourceRequirements for a container's resources at `path`. */
void as_validate_resources(json_t *errs, const json_t *res, const char *path)
{
    char lim_path[AS_PATH_MAX], req_path[AS_PATH_MAX], key[AS_PATH_MAX];
    as_child(lim_path, path, "limits");
    as_child(req_path, path, "requests");
    const json_t *limits = json_object_get(res, "limits");
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)limits, name, v)
    {
        as_key(key, lim_path, name);
        validate_resource_name(errs, name, key);
        as_validate_quantity(errs, name, v, key);
    }
    json_object_foreach(json_object_get(res, "requests"), name, v)
    {
        as_key(key, req_path, name);
        validate_resource_name(errs, name, key);
        if (!as_validate_quantity(errs, name, v, key)) continue;
        const json_t *lim = json_object_get(limits, name);
        if (!lim) {
            if (!overcommit_allowed(name))
                as_required(errs, lim_path, "Limit must be set for non overcommitable resources");
            continue;
        }
        char rt[256], lt[256];
        kube_quantity rq, lq;
        if (!quantity(v, &rq, rt) || !quantity(lim, &lq, lt)) continue;
        char rc[KUBE_QUANTITY_FORMAT_MAX], lc[KUBE_QUANTITY_FORMAT_MAX], detail[512];
        kube_quantity_format(&rq, rc);
        kube_quantity_format(&lq, lc);
        int cmp = kube_quantity_cmp(&rq, &lq);
        if (cmp != 0 && !overcommit_allowed(name)) {
            snprintf(detail, sizeof detail, "must be equal to %s limit of %s", name, lc);
            as_invalid(errs, req_path, rc, detail);
        } else if (cmp > 0) {
            snprintf(detail, sizeof detail, "must be less than or equal to %s limit of %s", name,
                     lc);
            as_invalid(errs, req_path, rc, detail);
        }
    }
}

void as_validate_limits_only(json_t *errs, const json_t *list, const char *path)
{
    json_t *res = json_pack("{s:O}", "limits", (json_t *)list);
    if (res) as_validate_resources(errs, res, path);
    json_decref(res);
}

/* ---- tolerations ---- */

static void render_toleration(gp_buf *sb, const json_t *t)
{
    gp_buf_add(sb, "core.Toleration{Key:");
    as_quote(sb, as_str(t, "key"));
    gp_buf_add(sb, ", Operator:");
    as_quote(sb, as_str(t, "operator"));
    gp_buf_add(sb, ", Value:");
    as_quote(sb, as_str(t, "value"));
    gp_buf_add(sb, ", Effect:");
    as_quote(sb, as_str(t, "effect"));
    /* a set pointer prints as its address in Go: not reproducible */
    gp_buf_add(sb, json_is_integer(json_object_get(t, "tolerationSeconds"))
                       ? ", TolerationSeconds:(*int64)(0xc000000000)}"
                       : ", TolerationSeconds:(*int64)(nil)}");
}

void as_validate_tolerations(json_t *errs, const json_t *tolerations, const char *path)
{
    static const char *const ops[] = {"Equal", "Exists", NULL};
    static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", NULL};
    size_t i;
    const json_t *t;
    json_array_foreach(tolerations, i, t)
    {
        char idx[AS_PATH_MAX], f[AS_PATH_MAX];
        as_index(idx, path, i);
        const char *key = as_str(t, "key"), *op = as_str(t, "operator");
        const char *value = as_str(t, "value"), *effect = as_str(t, "effect");
        char *msgs[AS_MSGS_MAX];
        size_t n;
        if (*key) {
            n = as_qualified_name(key, msgs);
            as_invalid_each(errs, as_child(f, idx, "key"), key, msgs, n);
            as_msgs_free(msgs, n);
        }
        if (!*key && strcmp(op, "Exists") != 0)
            as_invalid(errs, as_child(f, idx, "operator"), op,
                       "operator must be Exists when `key` is empty, which means \"match all "
                       "values and all keys\"");
        if (json_is_integer(json_object_get(t, "tolerationSeconds")) &&
            strcmp(effect, "NoExecute") != 0)
            as_invalid(errs, as_child(f, idx, "effect"), effect,
                       "effect must be 'NoExecute' when `tolerationSeconds` is set");
        if (!*op || strcmp(op, "Equal") == 0) {
            n = as_label_value(value, msgs);
            if (n == 2) { /* strings.Join(errs, ";") */
                gp_buf j = {0};
                gp_buf_addf(&j, "%s;%s", msgs[0], msgs[1]);
                char *joined = gp_buf_take(&j);
                as_invalid(errs, as_child(f, idx, "operator"), value, joined);
                free(joined);
            } else if (n == 1) {
                as_invalid(errs, as_child(f, idx, "operator"), value, msgs[0]);
            }
            as_msgs_free(msgs, n);
        } else if (strcmp(op, "Exists") == 0) {
            if (*value) {
                gp_buf sb = {0};
                render_toleration(&sb, t);
                char *r = gp_buf_take(&sb);
                if (r)
                    as_invalid_raw(errs, as_child(f, idx, "operator"), r,
                                   "value must be empty when `operator` is 'Exists'");
                free(r);
            }
        } else {
            as_not_supported(errs, as_child(f, idx, "operator"), op, ops);
        }
        if (*effect && !as_in_list(effect, effects))
            as_not_supported(errs, as_child(f, idx, "effect"), effect, effects);
    }
}
