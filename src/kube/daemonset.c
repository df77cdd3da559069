#include "kube/daemonset.h"

#include <stdbool.h>
#include <string.h>

#include "kube/intstr.h"
#include "kube/json.h"

const char *kube_ds_target_node(const json_t *pod)
{
    const json_t *spec = kube_obj(pod, "spec");
    const char *bound = kube_str(spec, "nodeName");
    if (*bound) return bound;
    const json_t *terms =
        kube_arr(kube_path(spec, "affinity", "nodeAffinity",
                           "requiredDuringSchedulingIgnoredDuringExecution", NULL),
                 "nodeSelectorTerms");
    size_t i, j;
    const json_t *term, *req;
    json_array_foreach(terms, i, term)
    {
        json_array_foreach(kube_arr(term, "matchFields"), j, req)
        {
            if (!kube_str_is(req, "key", "metadata.name") || !kube_str_is(req, "operator", "In"))
                continue;
            const json_t *values = kube_arr(req, "values");
            if (json_array_size(values) != 1) return NULL;
            return json_string_value(json_array_get(values, 0));
        }
    }
    return NULL;
}

/* spec.updateStrategy.rollingUpdate of a RollingUpdate DaemonSet, else NULL. */
static const json_t *rolling_update(const json_t *ds_spec)
{
    const json_t *strategy = kube_obj(ds_spec, "updateStrategy");
    if (!kube_str_is(strategy, "type", "RollingUpdate")) return NULL;
    return kube_obj(strategy, "rollingUpdate");
}

int kube_ds_unavailable_count(const json_t *ds_spec, int64_t desired, int64_t *out, gp_error *err)
{
    const json_t *r = rolling_update(ds_spec);
    *out = 0;
    if (!r) return 0;
    return kube_intstr_scaled(kube_get(r, "maxUnavailable"), desired, true, out, err);
}

int kube_ds_surge_count(const json_t *ds_spec, int64_t desired, int64_t *out, gp_error *err)
{
    const json_t *surge = kube_get(rolling_update(ds_spec), "maxSurge");
    *out = 0;
    if (!surge || json_is_null(surge)) return 0;
    return kube_intstr_scaled(surge, desired, true, out, err);
}

/* The IntOrString error wrapped as fmt.Errorf("invalid value for
 * MaxUnavailable: %v", err) does; surge says MaxSurge. */
static int wrapped(gp_error *err, bool surge)
{
    if (!err) return -1;
    char inner[sizeof err->text];
    memcpy(inner, err->text, sizeof inner);
    if (surge)
        gp_error_set(err, NULL, 0, 0, "invalid value for MaxSurge: %s", inner);
    else
        gp_error_set(err, NULL, 0, 0, "invalid value for MaxUnavailable: %s", inner);
    return -1;
}

int kube_ds_update_limits(const json_t *ds_spec, int64_t desired, int64_t *max_unavailable,
                          int64_t *max_surge, gp_error *err)
{
    if (kube_ds_unavailable_count(ds_spec, desired, max_unavailable, err) < 0)
        return wrapped(err, false);
    if (kube_ds_surge_count(ds_spec, desired, max_surge, err) < 0) return wrapped(err, true);
    if (desired > 0 && *max_unavailable == 0 && *max_surge == 0) *max_unavailable = 1;
    return 0;
}
