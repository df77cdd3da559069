/* Validation of DaemonSets (pkg/apis/apps/validation and the daemonset
 * strategy), Namespaces, Nodes, ConfigMaps (pkg/apis/core/validation) and
 * RuntimeClasses (pkg/apis/node/validation). */
#include "cluster/strategy_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- label selectors (apimachinery metav1 validation) ---- */

static bool selector_requirement(json_t *errs, const json_t *req, const char *path)
{
    size_t before = json_array_size(errs);
    char f[GCS_PATH_MAX];
    const char *op = gcs_str(req, "operator");
    const json_t *values = json_object_get(req, "values");
    if (strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0) {
        if (json_array_size(values) == 0)
            gcs_required(errs, gcs_child(f, path, "values"),
                         "must be specified when `operator` is 'In' or 'NotIn'");
    } else if (strcmp(op, "Exists") == 0 || strcmp(op, "DoesNotExist") == 0) {
        if (json_array_size(values) > 0)
            gcs_forbidden(errs, gcs_child(f, path, "values"),
                          "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    } else {
        gcs_invalid(errs, gcs_child(f, path, "operator"), op, "not a valid selector operator");
    }
    char *msgs[GCS_MSGS_MAX];
    const char *key = gcs_str(req, "key");
    size_t n = gcs_qualified_name(key, msgs);
    gcs_invalid_each(errs, gcs_child(f, path, "key"), key, msgs, n);
    gcs_msgs_free(msgs, n);
    size_t i;
    const json_t *v;
    json_array_foreach(values, i, v)
    {
        char vp[GCS_PATH_MAX];
        const char *s = json_string_value(v) ? json_string_value(v) : "";
        n = gcs_label_value(s, msgs);
        gcs_invalid_each(errs, gcs_index(vp, gcs_child(f, path, "values"), i), s, msgs, n);
        gcs_msgs_free(msgs, n);
    }
    return json_array_size(errs) == before;
}

/* ValidateLabelSelector; true when the selector also converts to a
 * labels.Selector (LabelSelectorAsSelector applies the same rules). */
static bool validate_selector(json_t *errs, const json_t *sel, const char *path)
{
    if (!json_is_object(sel)) return true;
    size_t before = json_array_size(errs);
    char f[GCS_PATH_MAX], idx[GCS_PATH_MAX];
    gcs_validate_labels(errs, json_object_get(sel, "matchLabels"),
                        gcs_child(f, path, "matchLabels"));
    bool ok = json_array_size(errs) == before;
    size_t i;
    const json_t *e;
    gcs_child(f, path, "matchExpressions");
    json_array_foreach(json_object_get(sel, "matchExpressions"), i, e)
    {
        if (!selector_requirement(errs, e, gcs_index(idx, f, i))) ok = false;
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
        const char *op = gcs_str(e, "operator");
        const json_t *have = json_object_get(labels, gcs_str(e, "key"));
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

static void render_intstr(gcs_sb *sb, const json_t *v)
{
    if (json_is_string(v)) {
        gcs_sb_add(sb, "intstr.IntOrString{Type:1, IntVal:0, StrVal:");
        gcs_sb_quote(sb, json_string_value(v));
        gcs_sb_add(sb, "}");
        return;
    }
    gcs_sb_addf(sb, "intstr.IntOrString{Type:0, IntVal:%lld, StrVal:\"\"}",
                (long long)json_integer_value(v));
}

static void invalid_intstr(json_t *errs, const char *path, const json_t *v, const char *detail)
{
    gcs_sb sb = {0};
    render_intstr(&sb, v);
    char *r = gcs_sb_take(&sb);
    if (r) gcs_invalid_raw(errs, path, r, detail);
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
        gcs_invalid_int(errs, path, json_integer_value(v), "must be greater than or equal to 0");
    }
    long p;
    if (percent_value(v, &p) && p > 100)
        invalid_intstr(errs, path, v, "must not be greater than 100%");
}

static void rolling_update(json_t *errs, const json_t *ru, const char *path)
{
    char mu_path[GCS_PATH_MAX], ms_path[GCS_PATH_MAX];
    gcs_child(mu_path, path, "maxUnavailable");
    gcs_child(ms_path, path, "maxSurge");
    const json_t *mu = json_object_get(ru, "maxUnavailable");
    const json_t *ms = json_object_get(ru, "maxSurge");
    if (json_is_string(mu) || json_is_integer(mu)) int_or_percent(errs, mu, mu_path);
    if (json_is_string(ms) || json_is_integer(ms)) int_or_percent(errs, ms, ms_path);
    bool has_unavailable = intstr_value(mu) != 0, has_surge = intstr_value(ms) != 0;
    if (has_unavailable && has_surge)
        invalid_intstr(errs, ms_path, ms, "may not be set when maxUnavailable is non-zero");
    else if (!has_unavailable && !has_surge)
        gcs_required(errs, mu_path, "cannot be 0 when maxSurge is 0");
}

static void update_strategy(json_t *errs, const json_t *us)
{
    static const char *const types[] = {"RollingUpdate", "OnDelete", NULL};
    const char *type = gcs_str(us, "type");
    if (strcmp(type, "OnDelete") == 0) return;
    if (strcmp(type, "RollingUpdate") == 0) {
        const json_t *ru = json_object_get(us, "rollingUpdate");
        if (!json_is_object(ru))
            gcs_required(errs, "spec.updateStrategy.rollingUpdate", NULL);
        else
            rolling_update(errs, ru, "spec.updateStrategy.rollingUpdate");
        return;
    }
    /* NotSupported is given the whole strategy struct */
    gcs_sb sb = {0};
    gcs_sb_add(&sb, "Unsupported value: apps.DaemonSetUpdateStrategy{Type:");
    gcs_sb_quote(&sb, type);
    gcs_sb_add(&sb, json_is_object(json_object_get(us, "rollingUpdate"))
                        ? ", RollingUpdate:(*apps.RollingUpdateDaemonSet)(0xc000000000)}"
                        : ", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}");
    for (size_t i = 0; types[i]; i++) {
        gcs_sb_add(&sb, i == 0 ? ": supported values: " : ", ");
        gcs_sb_quote(&sb, types[i]);
    }
    char *msg = gcs_sb_take(&sb);
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
        gcs_sb sb = {0};
        gcs_render_string_map(&sb, tmpl_labels);
        char *r = gcs_sb_take(&sb);
        if (r)
            gcs_invalid_raw(errs, "spec.template.metadata.labels", r,
                            "`selector` does not match template `labels`");
        free(r);
    }
    if (json_is_object(sel) && json_object_size(json_object_get(sel, "matchLabels")) +
                                       json_array_size(json_object_get(sel, "matchExpressions")) ==
                                   0) {
        gcs_sb sb = {0};
        gcs_render_label_selector(&sb, sel);
        char *r = gcs_sb_take(&sb);
        if (r) gcs_invalid_raw(errs, "spec.selector", r, "empty selector is invalid for daemonset");
        free(r);
    }
    gcs_validate_pod_template(errs, tmpl, "spec.template");
    const json_t *tspec = json_object_get(tmpl, "spec");
    const char *restart = gcs_str(tspec, "restartPolicy");
    if (strcmp(restart, "Always") != 0) {
        static const char *const always[] = {"Always", NULL};
        gcs_not_supported(errs, "spec.template.spec.restartPolicy", restart, always);
    }
    if (json_is_integer(json_object_get(tspec, "activeDeadlineSeconds")))
        gcs_forbidden(errs, "spec.template.spec.activeDeadlineSeconds",
                      "activeDeadlineSeconds in DaemonSet is not Supported");
    gcs_validate_nonnegative(errs, spec, "minReadySeconds", "spec");
    update_strategy(errs, json_object_get(spec, "updateStrategy"));
    gcs_validate_nonnegative(errs, spec, "revisionHistoryLimit", "spec");
}

void gcs_validate_daemonset(json_t *errs, const json_t *ds, const json_t *old)
{
    const json_t *meta = json_object_get(ds, "metadata");
    const json_t *spec = json_object_get(ds, "spec");
    /* ValidateDaemonSet */
    gcs_validate_meta(errs, meta, true, gcs_dns1123_subdomain);
    daemonset_spec(errs, spec);
    if (!old) return;
    /* ValidateDaemonSetUpdate validates the spec a second time */
    gcs_validate_meta_update(errs, meta);
    daemonset_spec(errs, spec);
    const json_t *sel = json_object_get(spec, "selector");
    if (!gcs_sem_equal(sel, json_object_get(json_object_get(old, "spec"), "selector"))) {
        gcs_sb sb = {0};
        if (json_is_object(sel))
            gcs_render_label_selector(&sb, sel);
        else
            gcs_sb_add(&sb, "\"null\"");
        char *r = gcs_sb_take(&sb);
        if (r) gcs_invalid_raw(errs, "spec.selector", r, "field is immutable");
        free(r);
    }
}

/* ---- Namespace ---- */

void gcs_validate_namespace(json_t *errs, const json_t *ns, const json_t *old)
{
    gcs_validate_meta(errs, json_object_get(ns, "metadata"), false, gcs_dns1123_label);
    static const char *const standard[] = {"kubernetes", "orphan", "foregroundDeletion", NULL};
    size_t i;
    const json_t *fin;
    json_array_foreach(json_object_get(json_object_get(ns, "spec"), "finalizers"), i, fin)
    {
        const char *f = json_string_value(fin) ? json_string_value(fin) : "";
        char *msgs[GCS_MSGS_MAX];
        size_t n = gcs_qualified_name(f, msgs);
        gcs_invalid_each(errs, "spec.finalizers", f, msgs, n);
        gcs_msgs_free(msgs, n);
        bool known = false;
        for (size_t s = 0; standard[s]; s++)
            if (strcmp(f, standard[s]) == 0) known = true;
        if (!strchr(f, '/') && !known)
            gcs_invalid(errs, "spec.finalizers", f,
                        "name is neither a standard finalizer name nor is it fully qualified");
    }
    if (old) gcs_validate_meta_update(errs, json_object_get(ns, "metadata"));
}

/* ---- Node ---- */

static void render_taint(gcs_sb *sb, const json_t *t)
{
    gcs_sb_add(sb, "core.Taint{Key:");
    gcs_sb_quote(sb, gcs_str(t, "key"));
    gcs_sb_add(sb, ", Value:");
    gcs_sb_quote(sb, gcs_str(t, "value"));
    gcs_sb_add(sb, ", Effect:");
    gcs_sb_quote(sb, gcs_str(t, "effect"));
    gcs_sb_add(sb, json_object_get(t, "timeAdded") ? ", TimeAdded:(*v1.Time)(0xc000000000)}"
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
        char idx[GCS_PATH_MAX], f[GCS_PATH_MAX], *msgs[GCS_MSGS_MAX];
        gcs_index(idx, "metadata.taints", i);
        const char *key = gcs_str(t, "key"), *value = gcs_str(t, "value");
        const char *effect = gcs_str(t, "effect");
        size_t n = gcs_qualified_name(key, msgs);
        gcs_invalid_each(errs, gcs_child(f, idx, "key"), key, msgs, n);
        gcs_msgs_free(msgs, n);
        n = gcs_label_value(value, msgs);
        if (n) {
            gcs_sb j = {0};
            gcs_sb_add(&j, msgs[0]);
            if (n > 1) gcs_sb_addf(&j, ";%s", msgs[1]);
            char *joined = gcs_sb_take(&j);
            gcs_invalid(errs, gcs_child(f, idx, "value"), value, joined ? joined : "");
            free(joined);
        }
        gcs_msgs_free(msgs, n);
        bool known = false;
        for (size_t e = 0; effects[e]; e++)
            if (strcmp(effect, effects[e]) == 0) known = true;
        if (!*effect)
            gcs_required(errs, gcs_child(f, idx, "effect"), NULL);
        else if (!known)
            gcs_not_supported(errs, gcs_child(f, idx, "effect"), effect, effects);
        gcs_sb id = {0};
        gcs_sb_addf(&id, "%s\n%s", effect, key);
        char *pair = gcs_sb_take(&id);
        if (pair && json_object_get(seen, pair)) {
            gcs_sb sb = {0};
            gcs_sb_add(&sb, "Duplicate value: ");
            render_taint(&sb, t);
            gcs_sb_add(&sb, ": taints must be unique by key and effect pair");
            char *msg = gcs_sb_take(&sb);
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
        char base[GCS_PATH_MAX], f[GCS_PATH_MAX];
        gcs_child(base, "status", lists[l]);
        json_object_foreach(json_object_get(status, lists[l]), name, v)
        {
            gcs_validate_quantity(errs, name, v, gcs_child(f, base, name));
        }
    }
}

void gcs_validate_node(json_t *errs, const json_t *node, const json_t *old)
{
    const json_t *spec = json_object_get(node, "spec");
    const json_t *status = json_object_get(node, "status");
    gcs_validate_meta(errs, json_object_get(node, "metadata"), false, gcs_dns1123_subdomain);
    node_taints(errs, json_object_get(spec, "taints"));
    node_resources(errs, status);
    if (!old) return;
    /* ValidateNodeUpdate */
    gcs_validate_meta_update(errs, json_object_get(node, "metadata"));
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
        char base[GCS_PATH_MAX], f[GCS_PATH_MAX], *msgs[GCS_MSGS_MAX];
        gcs_key(f, gcs_child(base, "", bag), key);
        size_t n = gcs_config_map_key(key, msgs);
        gcs_invalid_each(errs, f, key, msgs, n);
        gcs_msgs_free(msgs, n);
        const char *s = json_string_value(v) ? json_string_value(v) : "";
        if (strcmp(bag, "data") == 0) {
            if (json_object_get(other, key))
                gcs_invalid(errs, f, key, "duplicate of key present in binaryData");
            *total += strlen(s);
        } else {
            *total += base64_len(s);
        }
    }
}

void gcs_validate_configmap(json_t *errs, const json_t *cm, const json_t *old)
{
    const json_t *meta = json_object_get(cm, "metadata");
    if (old) {
        gcs_validate_meta_update(errs, meta);
        if (json_is_true(json_object_get(old, "immutable"))) {
            static const char *const msg = "field is immutable when `immutable` is set";
            if (!json_is_true(json_object_get(cm, "immutable")))
                gcs_forbidden(errs, "immutable", msg);
            if (!gcs_sem_equal(json_object_get(cm, "data"), json_object_get(old, "data")))
                gcs_forbidden(errs, "data", msg);
            if (!gcs_sem_equal(json_object_get(cm, "binaryData"),
                               json_object_get(old, "binaryData")))
                gcs_forbidden(errs, "binaryData", msg);
        }
    }
    gcs_validate_meta(errs, meta, true, gcs_dns1123_subdomain);
    size_t total = 0;
    configmap_keys(errs, cm, "data", &total);
    configmap_keys(errs, cm, "binaryData", &total);
    /* field.NewPath("") prints as "[]" */
    if (total > 1024 * 1024) gcs_too_long(errs, "[]", 1024 * 1024);
}

/* ---- RuntimeClass ---- */

void gcs_validate_runtimeclass(json_t *errs, const json_t *rc, const json_t *old)
{
    gcs_validate_meta(errs, json_object_get(rc, "metadata"), false, gcs_dns1123_subdomain);
    const char *handler = gcs_str(rc, "handler");
    char *msgs[GCS_MSGS_MAX];
    size_t n = gcs_dns1123_label(handler, msgs);
    gcs_invalid_each(errs, "handler", handler, msgs, n);
    gcs_msgs_free(msgs, n);
    const json_t *overhead = json_object_get(rc, "overhead");
    if (json_is_object(overhead))
        gcs_validate_limits_only(errs, json_object_get(overhead, "podFixed"), "overhead");
    const json_t *sched = json_object_get(rc, "scheduling");
    if (json_is_object(sched)) {
        gcs_validate_labels(errs, json_object_get(sched, "nodeSelector"),
                            "scheduling.nodeSelector");
        gcs_validate_tolerations(errs, json_object_get(sched, "tolerations"),
                                 "scheduling.tolerations");
    }
    if (!old) return;
    gcs_validate_meta_update(errs, json_object_get(rc, "metadata"));
    if (strcmp(handler, gcs_str(old, "handler")) != 0)
        gcs_invalid(errs, "handler", handler, "field is immutable");
}
