/* Validation of DaemonSets (pkg/apis/apps/validation and the daemonset
 * strategy), Namespaces, Nodes, ConfigMaps (pkg/apis/core/validation) and
 * RuntimeClasses (pkg/apis/node/validation). */
#include "apiserver/strategy_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- label selectors (apimachinery metav1 validation) ---- */

static bool selector_requirement(json_t *errs, const json_t *req, const char *path)
{
    size_t before = json_array_size(errs);
    char f[AS_PATH_MAX];
    const char *op = as_str(req, "operator");
    const json_t *values = json_object_get(req, "values");
    if (strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0) {
        if (json_array_size(values) == 0)
            as_required(errs, as_child(f, path, "values"),
                        "must be specified when `operator` is 'In' or 'NotIn'");
    } else if (strcmp(op, "Exists") == 0 || strcmp(op, "DoesNotExist") == 0) {
        if (json_array_size(values) > 0)
            as_forbidden(errs, as_child(f, path, "values"),
                         "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    } else {
        as_invalid(errs, as_child(f, path, "operator"), op, "not a valid selector operator");
    }
    char *msgs[AS_MSGS_MAX];
    const char *key = as_str(req, "key");
    size_t n = as_qualified_name(key, msgs);
    as_invalid_each(errs, as_child(f, path, "key"), key, msgs, n);
    as_msgs_free(msgs, n);
    size_t i;
    const json_t *v;
    json_array_foreach(values, i, v)
    {
        char vp[AS_PATH_MAX];
        const char *s = json_string_value(v) ? json_string_value(v) : "";
        n = as_label_value(s, msgs);
        as_invalid_each(errs, as_index(vp, as_child(f, path, "values"), i), s, msgs, n);
        as_msgs_free(msgs, n);
    }
    return json_array_size(errs) == before;
}

/* ValidateLabelSelector; true when the selector also converts to a
 * labels.Selector (LabelSelectorAsSelector applies the same rules). */
static bool validate_selector(json_t *errs, const json_t *sel, const char *path)
{
    if (!json_is_object(sel)) return true;
    size_t before = json_array_size(errs);
    char f[AS_PATH_MAX], idx[AS_PATH_MAX];
    as_validate_labels(errs, json_object_get(sel, "matchLabels"), as_child(f, path, "matchLabels"));
    bool ok = json_array_size(errs) == before;
    size_t i;
    const json_t *e;
    as_child(f, path, "matchExpressions");
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        if (!selector_requirement(errs, e, as_index(idx, f, i))) ok = false;
    }
    return ok;
}

static bool in_values(const json_t *values, const char *s)
{
    size_t i;
    const json_t *v;
    json_array_foreach(values, i, v)
    {
        if (json_string_value(v) && strcmp(json_string_value(v), s) == 0) return true;
    }
    return false;
}

/* labels.Selector.Matches; a missing selector (labels.Nothing) matches
 * nothing. */
static bool selector_matches(const json_t *sel, const json_t *labels)
{
    if (!json_is_object(sel)) return false;
    const char *k;
    const json_t *v;
    json_object_foreach(json_object_get(sel, "matchLabels"), k, v)
    {
        const json_t *have = json_object_get(labels, k);
        if (!have || !json_equal(have, v)) return false;
    }
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        const char *op = as_str(e, "operator");
        const json_t *have = json_object_get(labels, as_str(e, "key"));
        const char *value = json_string_value(have);
        const json_t *values = json_object_get(e, "values");
        if (strcmp(op, "In") == 0 && (!value || !in_values(values, value))) return false;
        if (strcmp(op, "NotIn") == 0 && value && in_values(values, value)) return false;
        if (strcmp(op, "Exists") == 0 && !have) return false;
        if (strcmp(op, "DoesNotExist") == 0 && have) return false;
    }
    return true;
}

/* ---- DaemonSet ---- */

static void render_intstr(gp_buf *sb, const json_t *v)
{
    if (json_is_string(v)) {
        gp_buf_add(sb, "intstr.IntOrString{Type:1, IntVal:0, StrVal:");
        as_quote(sb, json_string_value(v));
        gp_buf_add(sb, "}");
        return;
    }
    gp_buf_addf(sb, "intstr.IntOrString{Type:0, IntVal:%lld, StrVal:\"\"}",
                (long long)json_integer_value(v));
}

static void invalid_intstr(json_t *errs, const char *path, const json_t *v, const char *detail)
{
    gp_buf sb = {0};
    render_intstr(&sb, v);
    char *r = gp_buf_take(&sb);
    if (r) as_invalid_raw(errs, path, r, detail);
    free(r);
}

/* getPercentValue: a valid "N%" string */
static bool percent_value(const json_t *v, long *out)
{
    const char *s = json_string_value(v);
    if (!s) return false;
    size_t n = strlen(s);
    if (n < 2 || s[n - 1] != '%') return false;
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i] < '0' || s[i] > '9') return false;
    *out = strtol(s, NULL, 10);
    return true;
}

/* getIntOrPercentValue: the percent, else IntValue() (Atoi of a string). */
static long intstr_value(const json_t *v)
{
    long p;
    if (percent_value(v, &p)) return p;
    if (json_is_integer(v)) return (long)json_integer_value(v);
    const char *s = json_string_value(v);
    if (!s || !*s) return 0;
    char *end;
    long n = strtol(s, &end, 10);
    return *end ? 0 : n;
}

static void int_or_percent(json_t *errs, const json_t *v, const char *path)
{
    if (json_is_string(v)) {
        long p;
        if (!percent_value(v, &p))
            invalid_intstr(errs, path, v,
                           "a valid percent string must be a numeric string followed by an "
                           "ending '%' (e.g. '1%',  or '93%', regex used for validation is "
                           "'[0-9]+%')");
    } else if (json_is_integer(v) && json_integer_value(v) < 0) {
        as_invalid_int(errs, path, json_integer_value(v), "must be greater than or equal to 0");
    }
    long p;
    if (percent_value(v, &p) && p > 100)
        invalid_intstr(errs, path, v, "must not be greater than 100%");
}

static void rolling_update(json_t *errs, const json_t *ru, const char *path)
{
    char mu_path[AS_PATH_MAX], ms_path[AS_PATH_MAX];
    as_child(mu_path, path, "maxUnavailable");
    as_child(ms_path, path, "maxSurge");
    const json_t *mu = json_object_get(ru, "maxUnavailable");
    const json_t *ms = json_object_get(ru, "maxSurge");
    if (json_is_string(mu) || json_is_integer(mu)) int_or_percent(errs, mu, mu_path);
    if (json_is_string(ms) || json_is_integer(ms)) int_or_percent(errs, ms, ms_path);
    bool has_unavailable = intstr_value(mu) != 0, has_surge = intstr_value(ms) != 0;
    if (has_unavailable && has_surge)
        invalid_intstr(errs, ms_path, ms, "may not be set when maxUnavailable is non-zero");
    else if (!has_unavailable && !has_surge)
        as_required(errs, mu_path, "cannot be 0 when maxSurge is 0");
}

static void update_strategy(json_t *errs, const json_t *us)
{
    static const char *const types[] = {"RollingUpdate", "OnDelete", NULL};
    const char *type = as_str(us, "type");
    if (strcmp(type, "OnDelete") == 0) return;
    if (strcmp(type, "RollingUpdate") == 0) {
        const json_t *ru = json_object_get(us, "rollingUpdate");
        if (!json_is_object(ru))
            as_required(errs, "spec.updateStrategy.rollingUpdate", NULL);
        else
            rolling_update(errs, ru, "spec.updateStrategy.rollingUpdate");
        return;
    }
    /* NotSupported is given the whole strategy struct */
    gp_buf sb = {0};
    gp_buf_add(&sb, "Unsupported value: apps.DaemonSetUpdateStrategy{Type:");
    as_quote(&sb, type);
    gp_buf_add(&sb, json_is_object(json_object_get(us, "rollingUpdate"))
                        ? ", RollingUpdate:(*apps.RollingUpdateDaemonSet)(0xc000000000)}"
                        : ", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}");
    for (size_t i = 0; types[i]; i++) {
        gp_buf_add(&sb, i == 0 ? ": supported values: " : ", ");
        as_quote(&sb, types[i]);
    }
    char *msg = gp_buf_take(&sb);
    if (msg)
        json_array_append_new(errs, json_pack("{s:s, s:s, s:s}", "reason", "FieldValueNotSupported",
                                              "message", msg, "field", "spec.updateStrategy"));
    free(msg);
}

/* ValidateDaemonSetSpec */
static void daemonset_spec(json_t *errs, const json_t *spec)
{
    const json_t *sel = json_object_get(spec, "selector");
    const json_t *tmpl = json_object_get(spec, "template");
    const json_t *tmpl_labels = json_object_get(json_object_get(tmpl, "metadata"), "labels");
    bool sel_ok = validate_selector(errs, sel, "spec.selector");
    if (sel_ok && !selector_matches(sel, tmpl_labels)) {
        gp_buf sb = {0};
        as_render_string_map(&sb, tmpl_labels);
        char *r = gp_buf_take(&sb);
        if (r)
            as_invalid_raw(errs, "spec.template.metadata.labels", r,
                           "`selector` does not match template `labels`");
        free(r);
    }
    if (json_is_object(sel) && json_object_size(json_object_get(sel, "matchLabels")) +
                                       json_array_size(json_object_get(sel, "matchExpressions")) ==
                                   0) {
        gp_buf sb = {0};
        as_render_label_selector(&sb, sel);
        char *r = gp_buf_take(&sb);
        if (r) as_invalid_raw(errs, "spec.selector", r, "empty selector is invalid for daemonset");
        free(r);
    }
    as_validate_pod_template(errs, tmpl, "spec.template");
    const json_t *tspec = json_object_get(tmpl, "spec");
    const char *restart = as_str(tspec, "restartPolicy");
    if (strcmp(restart, "Always") != 0) {
        static const char *const always[] = {"Always", NULL};
        as_not_supported(errs, "spec.template.spec.restartPolicy", restart, always);
    }
    if (json_is_integer(json_object_get(tspec, "activeDeadlineSeconds")))
        as_forbidden(errs, "spec.template.spec.activeDeadlineSeconds",
                     "activeDeadlineSeconds in DaemonSet is not Supported");
    as_validate_nonnegative(errs, spec, "minReadySeconds", "spec");
    update_strategy(errs, json_object_get(spec, "updateStrategy"));
    as_validate_nonnegative(errs, spec, "revisionHistoryLimit", "spec");
}

void as_validate_daemonset(json_t *errs, const json_t *ds, const json_t *old)
{
    const json_t *meta = json_object_get(ds, "metadata");
    const json_t *spec = json_object_get(ds, "spec");
    /* ValidateDaemonSet */
    as_validate_meta(errs, meta, true, as_dns1123_subdomain);
    daemonset_spec(errs, spec);
    if (!old) return;
    /* ValidateDaemonSetUpdate validates the spec a second time */
    as_validate_meta_update(errs, meta);
    daemonset_spec(errs, spec);
    const json_t *sel = json_object_get(spec, "selector");
    if (!as_sem_equal(sel, json_object_get(json_object_get(old, "spec"), "selector"))) {
        gp_buf sb = {0};
        if (json_is_object(sel))
            as_render_label_selector(&sb, sel);
        else
            gp_buf_add(&sb, "\"null\"");
        char *r = gp_buf_take(&sb);
        if (r) as_invalid_raw(errs, "spec.selector", r, "field is immutable");
        free(r);
    }
}

/* ---- Namespace ---- */

void as_validate_namespace(json_t *errs, const json_t *ns, const json_t *old)
{
    as_validate_meta(errs, json_object_get(ns, "metadata"), false, as_dns1123_label);
    static const char *const standard[] = {"kubernetes", "orphan", "foregroundDeletion", NULL};
    size_t i;
    const json_t *fin;
    json_array_foreach(json_object_get(json_object_get(ns, "spec"), "finalizers"), i, fin)
    {
        const char *f = json_string_value(fin) ? json_string_value(fin) : "";
        char *msgs[AS_MSGS_MAX];
        size_t n = as_qualified_name(f, msgs);
        as_invalid_each(errs, "spec.finalizers", f, msgs, n);
        as_msgs_free(msgs, n);
        bool known = false;
        for (size_t s = 0; standard[s]; s++)
            if (strcmp(f, standard[s]) == 0) known = true;
        if (!strchr(f, '/') && !known)
            as_invalid(errs, "spec.finalizers", f,
                       "name is neither a standard finalizer name nor is it fully qualified");
    }
    if (old) as_validate_meta_update(errs, json_object_get(ns, "metadata"));
}

/* ---- Node ---- */

static void render_taint(gp_buf *sb, const json_t *t)
{
    gp_buf_add(sb, "core.Taint{Key:");
    as_quote(sb, as_str(t, "key"));
    gp_buf_add(sb, ", Value:");
    as_quote(sb, as_str(t, "value"));
    gp_buf_add(sb, ", Effect:");
    as_quote(sb, as_str(t, "effect"));
    gp_buf_add(sb, json_object_get(t, "timeAdded") ? ", TimeAdded:(*v1.Time)(0xc000000000)}"
                                                   : ", TimeAdded:(*v1.Time)(nil)}");
}

/* validateNodeTaints; ValidateNode hands it "metadata.taints" for
 * spec.taints, and that path is what clients see. */
static void node_taints(json_t *errs, const json_t *taints)
{
    static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", NULL};
    json_t *seen = json_object();
    size_t i;
    const json_t *t;
    json_array_foreach(taints, i, t)
    {
        char idx[AS_PATH_MAX], f[AS_PATH_MAX], *msgs[AS_MSGS_MAX];
        as_index(idx, "metadata.taints", i);
        const char *key = as_str(t, "key"), *value = as_str(t, "value");
        const char *effect = as_str(t, "effect");
        size_t n = as_qualified_name(key, msgs);
        as_invalid_each(errs, as_child(f, idx, "key"), key, msgs, n);
        as_msgs_free(msgs, n);
        n = as_label_value(value, msgs);
        if (n) {
            gp_buf j = {0};
            gp_buf_add(&j, msgs[0]);
            if (n > 1) gp_buf_addf(&j, ";%s", msgs[1]);
            char *joined = gp_buf_take(&j);
            as_invalid(errs, as_child(f, idx, "value"), value, joined ? joined : "");
            free(joined);
        }
        as_msgs_free(msgs, n);
        bool known = false;
        for (size_t e = 0; effects[e]; e++)
            if (strcmp(effect, effects[e]) == 0) known = true;
        if (!*effect)
            as_required(errs, as_child(f, idx, "effect"), NULL);
        else if (!known)
            as_not_supported(errs, as_child(f, idx, "effect"), effect, effects);
        char *pair = gp_format("%s\n%s", effect, key);
        if (pair && json_object_get(seen, pair)) {
            gp_buf sb = {0};
            gp_buf_add(&sb, "Duplicate value: ");
            render_taint(&sb, t);
            gp_buf_add(&sb, ": taints must be unique by key and effect pair");
            char *msg = gp_buf_take(&sb);
            if (msg)
                json_array_append_new(errs,
                                      json_pack("{s:s, s:s, s:s}", "reason", "FieldValueDuplicate",
                                                "message", msg, "field", idx));
            free(msg);
        } else if (pair) {
            json_object_set_new(seen, pair, json_true());
        }
        free(pair);
    }
    json_decref(seen);
}

/* ValidateNodeResources: the path is built with Child, so
 * status.capacity.nvidia.com/gpu. */
static void node_resources(json_t *errs, const json_t *status)
{
    static const char *const lists[] = {"capacity", "allocatable"};
    for (size_t l = 0; l < 2; l++) {
        const char *name;
        const json_t *v;
        char base[AS_PATH_MAX], f[AS_PATH_MAX];
        as_child(base, "status", lists[l]);
        json_object_foreach(json_object_get(status, lists[l]), name, v)
        {
            as_validate_quantity(errs, name, v, as_child(f, base, name));
        }
    }
}

void as_validate_node(json_t *errs, const json_t *node, const json_t *old)
{
    const json_t *spec = json_object_get(node, "spec");
    const json_t *status = json_object_get(node, "status");
    as_validate_meta(errs, json_object_get(node, "metadata"), false, as_dns1123_subdomain);
    node_taints(errs, json_object_get(spec, "taints"));
    node_resources(errs, status);
    if (!old) return;
    /* ValidateNodeUpdate */
    as_validate_meta_update(errs, json_object_get(node, "metadata"));
    node_resources(errs, status);
    node_taints(errs, json_object_get(spec, "taints"));
}

/* ---- ConfigMap ---- */

static size_t base64_len(const char *s)
{
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '=')
        n--;
    return n * 3 / 4;
}

static void configmap_keys(json_t *errs, const json_t *cm, const char *bag, size_t *total)
{
    const char *key;
    const json_t *v;
    const json_t *other = json_object_get(cm, "binaryData");
    json_object_foreach(json_object_get(cm, bag), key, v)
    {
        char base[AS_PATH_MAX], f[AS_PATH_MAX], *msgs[AS_MSGS_MAX];
        as_key(f, as_child(base, "", bag), key);
        size_t n = as_config_map_key(key, msgs);
        as_invalid_each(errs, f, key, msgs, n);
        as_msgs_free(msgs, n);
        const char *s = json_string_value(v) ? json_string_value(v) : "";
        if (strcmp(bag, "data") == 0) {
            if (json_object_get(other, key))
                as_invalid(errs, f, key, "duplicate of key present in binaryData");
            *total += strlen(s);
        } else {
            *total += base64_len(s);
        }
    }
}

void as_validate_configmap(json_t *errs, const json_t *cm, const json_t *old)
{
    const json_t *meta = json_object_get(cm, "metadata");
    if (old) {
        as_validate_meta_update(errs, meta);
        if (json_is_true(json_object_get(old, "immutable"))) {
            static const char *const msg = "field is immutable when `immutable` is set";
            if (!json_is_true(json_object_get(cm, "immutable")))
                as_forbidden(errs, "immutable", msg);
            if (!as_sem_equal(json_object_get(cm, "data"), json_object_get(old, "data")))
                as_forbidden(errs, "data", msg);
            if (!as_sem_equal(json_object_get(cm, "binaryData"),
                              json_object_get(old, "binaryData")))
                as_forbidden(errs, "binaryData", msg);
        }
    }
    as_validate_meta(errs, meta, true, as_dns1123_subdomain);
    size_t total = 0;
    configmap_keys(errs, cm, "data", &total);
    configmap_keys(errs, cm, "binaryData", &total);
    /* field.NewPath("") prints as "[]" */
    if (total > 1024 * 1024) as_too_long(errs, "[]", 1024 * 1024);
}

/* ---- RuntimeClass ---- */

void as_validate_runtimeclass(json_t *errs, const json_t *rc, const json_t *old)
{
    as_validate_meta(errs, json_object_get(rc, "metadata"), false, as_dns1123_subdomain);
    const char *handler = as_str(rc, "handler");
    char *msgs[AS_MSGS_MAX];
    size_t n = as_dns1123_label(handler, msgs);
    as_invalid_each(errs, "handler", handler, msgs, n);
    as_msgs_free(msgs, n);
    const json_t *overhead = json_object_get(rc, "overhead");
    if (json_is_object(overhead))
        as_validate_limits_only(errs, json_object_get(overhead, "podFixed"), "overhead");
    const json_t *sched = json_object_get(rc, "scheduling");
    if (json_is_object(sched)) {
        as_validate_labels(errs, json_object_get(sched, "nodeSelector"), "scheduling.nodeSelector");
        as_validate_tolerations(errs, json_object_get(sched, "tolerations"),
                                "scheduling.tolerations");
    }
    if (!old) return;
    as_validate_meta_update(errs, json_object_get(rc, "metadata"));
    if (strcmp(handler, as_str(old, "handler")) != 0)
        as_invalid(errs, "handler", handler, "field is immutable");
}
