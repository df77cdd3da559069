/* Object metadata (apimachinery api/validation/objectmeta.go and
 * meta/v1/validation: ValidateObjectMeta, ValidateLabels, ValidateAnnotations)
 * and the Go %#v renderings that validation messages carry. */
#include "cluster/strategy_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- metadata ---- */

void gcs_validate_labels(json_t *errs, const json_t *labels, const char *path)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)labels, k, v)
    {
        char *msgs[GCS_MSGS_MAX];
        size_t n = gcs_qualified_name(k, msgs);
        gcs_invalid_each(errs, path, k, msgs, n);
        gcs_msgs_free(msgs, n);
        const char *value = json_string_value(v) ? json_string_value(v) : "";
        n = gcs_label_value(value, msgs);
        gcs_invalid_each(errs, path, value, msgs, n);
        gcs_msgs_free(msgs, n);
    }
}

void gcs_validate_annotations(json_t *errs, const json_t *annotations, const char *path)
{
    const char *k;
    const json_t *v;
    size_t total = 0;
    json_object_foreach((json_t *)annotations, k, v)
    {
        /* the rule is QualifiedName but case does not matter */
        char *lower = strdup(k);
        for (char *c = lower; c && *c; c++)
            if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
        char *msgs[GCS_MSGS_MAX];
        size_t n = lower ? gcs_qualified_name(lower, msgs) : 0;
        gcs_invalid_each(errs, path, k, msgs, n);
        gcs_msgs_free(msgs, n);
        free(lower);
        total += strlen(k) + strlen(json_string_value(v) ? json_string_value(v) : "");
    }
    if (total > 256 * 1024) gcs_too_long(errs, path, 256 * 1024);
}

/* maskTrailingDash: a generateName may end in '-' since characters follow. Go
 * drops one more character than it means to (name[:len-2]+"a"); kept. */
static char *mask_trailing_dash(const char *name)
{
    size_t n = strlen(name);
    if (n > 1 && name[n - 1] == '-') {
        char *m = malloc(n);
        if (!m) return NULL;
        memcpy(m, name, n - 2);
        m[n - 2] = 'a';
        m[n - 1] = '\0';
        return m;
    }
    return strdup(name);
}

void gcs_validate_meta(json_t *errs, const json_t *meta, bool namespaced, gcs_name_rule rule)
{
    char *msgs[GCS_MSGS_MAX];
    size_t n;
    const char *gen = gcs_str(meta, "generateName");
    if (*gen) {
        char *masked = mask_trailing_dash(gen);
        n = masked ? rule(masked, msgs) : 0;
        gcs_invalid_each(errs, "metadata.generateName", gen, msgs, n);
        gcs_msgs_free(msgs, n);
        free(masked);
    }
    const char *name = gcs_str(meta, "name");
    if (!*name) {
        gcs_required(errs, "metadata.name", "name or generateName is required");
    } else {
        n = rule(name, msgs);
        gcs_invalid_each(errs, "metadata.name", name, msgs, n);
        gcs_msgs_free(msgs, n);
    }
    if (namespaced) {
        const char *ns = gcs_str(meta, "namespace");
        if (!*ns) {
            gcs_required(errs, "metadata.namespace", NULL);
        } else {
            n = gcs_dns1123_label(ns, msgs);
            gcs_invalid_each(errs, "metadata.namespace", ns, msgs, n);
            gcs_msgs_free(msgs, n);
        }
    }
    const json_t *g = json_object_get(meta, "generation");
    if (json_is_integer(g) && json_integer_value(g) < 0)
        gcs_invalid_int(errs, "metadata.generation", json_integer_value(g),
                        "must be greater than or equal to 0");
    gcs_validate_labels(errs, json_object_get(meta, "labels"), "metadata.labels");
    gcs_validate_annotations(errs, json_object_get(meta, "annotations"), "metadata.annotations");
    const json_t *fin;
    size_t i;
    json_array_foreach(json_object_get(meta, "finalizers"), i, fin)
    {
        const char *f = json_string_value(fin) ? json_string_value(fin) : "";
        n = gcs_qualified_name(f, msgs);
        gcs_invalid_each(errs, "metadata.finalizers", f, msgs, n);
        gcs_msgs_free(msgs, n);
    }
}

void gcs_validate_meta_update(json_t *errs, const json_t *meta)
{
    gcs_validate_labels(errs, json_object_get(meta, "labels"), "metadata.labels");
    gcs_validate_annotations(errs, json_object_get(meta, "annotations"), "metadata.annotations");
}

void gcs_validate_nonnegative(json_t *errs, const json_t *obj, const char *member, const char *path)
{
    const json_t *v = json_object_get(obj, member);
    if (!json_is_integer(v) || json_integer_value(v) >= 0) return;
    char field[GCS_PATH_MAX];
    gcs_invalid_int(errs, gcs_child(field, path, member), json_integer_value(v),
                    "must be greater than or equal to 0");
}

/* ---- Go %#v ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void gcs_render_string_map(gcs_sb *sb, const json_t *map)
{
    if (!json_is_object(map)) {
        gcs_sb_add(sb, "map[string]string(nil)");
        return;
    }
    size_t n = json_object_size(map), i = 0;
    const char **keys = calloc(n ? n : 1, sizeof *keys);
    if (!keys) {
        sb->oom = true;
        return;
    }
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)map, k, v)
    {
        keys[i++] = k;
    }
    qsort(keys, n, sizeof *keys, cmp_str); /* fmt prints maps sorted by key */
    gcs_sb_add(sb, "map[string]string{");
    for (i = 0; i < n; i++) {
        if (i) gcs_sb_add(sb, ", ");
        gcs_sb_quote(sb, keys[i]);
        gcs_sb_add(sb, ":");
        gcs_sb_quote(sb, gcs_str(map, keys[i]));
    }
    gcs_sb_add(sb, "}");
    free(keys);
}

static void render_strings(gcs_sb *sb, const json_t *arr)
{
    if (!json_is_array(arr)) {
        gcs_sb_add(sb, "[]string(nil)");
        return;
    }
    gcs_sb_add(sb, "[]string{");
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (i) gcs_sb_add(sb, ", ");
        gcs_sb_quote(sb, json_string_value(v) ? json_string_value(v) : "");
    }
    gcs_sb_add(sb, "}");
}

void gcs_render_label_selector(gcs_sb *sb, const json_t *sel)
{
    gcs_sb_add(sb, "v1.LabelSelector{MatchLabels:");
    gcs_render_string_map(sb, json_object_get(sel, "matchLabels"));
    gcs_sb_add(sb, ", MatchExpressions:");
    const json_t *exprs = json_object_get(sel, "matchExpressions");
    if (!json_is_array(exprs)) {
        gcs_sb_add(sb, "[]v1.LabelSelectorRequirement(nil)}");
        return;
    }
    gcs_sb_add(sb, "[]v1.LabelSelectorRequirement{");
    size_t i;
    const json_t *e;
    json_array_foreach(exprs, i, e)
    {
        if (i) gcs_sb_add(sb, ", ");
        gcs_sb_add(sb, "v1.LabelSelectorRequirement{Key:");
        gcs_sb_quote(sb, gcs_str(e, "key"));
        gcs_sb_add(sb, ", Operator:");
        gcs_sb_quote(sb, gcs_str(e, "operator"));
        gcs_sb_add(sb, ", Values:");
        render_strings(sb, json_object_get(e, "values"));
        gcs_sb_add(sb, "}");
    }
    gcs_sb_add(sb, "}}");
}
