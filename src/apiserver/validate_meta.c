/* Object metadata (apimachinery api/validation/objectmeta.go and
 * meta/v1/validation: ValidateObjectMeta, ValidateLabels, ValidateAnnotations)
 * and the Go %#v renderings that validation messages carry. */
#include "apiserver/strategy_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- metadata ---- */

void as_validate_labels(json_t *errs, const json_t *labels, const char *path)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)labels, k, v)
    {
        char *msgs[AS_MSGS_MAX];
        size_t n = as_qualified_name(k, msgs);
        as_invalid_each(errs, path, k, msgs, n);
        as_msgs_free(msgs, n);
        const char *value = json_string_value(v) ? json_string_value(v) : "";
        n = as_label_value(value, msgs);
        as_invalid_each(errs, path, value, msgs, n);
        as_msgs_free(msgs, n);
    }
}

void as_validate_annotations(json_t *errs, const json_t *annotations, const char *path)
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
        char *msgs[AS_MSGS_MAX];
        size_t n = lower ? as_qualified_name(lower, msgs) : 0;
        as_invalid_each(errs, path, k, msgs, n);
        as_msgs_free(msgs, n);
        free(lower);
        total += strlen(k) + strlen(json_string_value(v) ? json_string_value(v) : "");
    }
    if (total > 256 * 1024) as_too_long(errs, path, 256 * 1024);
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

void as_validate_meta(json_t *errs, const json_t *meta, bool namespaced, as_name_rule rule)
{
    char *msgs[AS_MSGS_MAX];
    size_t n;
    const char *gen = as_str(meta, "generateName");
    if (*gen) {
        char *masked = mask_trailing_dash(gen);
        n = masked ? rule(masked, msgs) : 0;
        as_invalid_each(errs, "metadata.generateName", gen, msgs, n);
        as_msgs_free(msgs, n);
        free(masked);
    }
    const char *name = as_str(meta, "name");
    if (!*name) {
        as_required(errs, "metadata.name", "name or generateName is required");
    } else {
        n = rule(name, msgs);
        as_invalid_each(errs, "metadata.name", name, msgs, n);
        as_msgs_free(msgs, n);
    }
    if (namespaced) {
        const char *ns = as_str(meta, "namespace");
        if (!*ns) {
            as_required(errs, "metadata.namespace", NULL);
        } else {
            n = as_dns1123_label(ns, msgs);
            as_invalid_each(errs, "metadata.namespace", ns, msgs, n);
            as_msgs_free(msgs, n);
        }
    }
    const json_t *g = json_object_get(meta, "generation");
    if (json_is_integer(g) && json_integer_value(g) < 0)
        as_invalid_int(errs, "metadata.generation", json_integer_value(g),
                       "must be greater than or equal to 0");
    as_validate_labels(errs, json_object_get(meta, "labels"), "metadata.labels");
    as_validate_annotations(errs, json_object_get(meta, "annotations"), "metadata.annotations");
    const json_t *fin;
    size_t i;
    json_array_foreach(json_object_get(meta, "finalizers"), i, fin)
    {
        const char *f = json_string_value(fin) ? json_string_value(fin) : "";
        n = as_qualified_name(f, msgs);
        as_invalid_each(errs, "metadata.finalizers", f, msgs, n);
        as_msgs_free(msgs, n);
    }
}

void as_validate_meta_update(json_t *errs, const json_t *meta)
{
    as_validate_labels(errs, json_object_get(meta, "labels"), "metadata.labels");
    as_validate_annotations(errs, json_object_get(meta, "annotations"), "metadata.annotations");
}

void as_validate_nonnegative(json_t *errs, const json_t *obj, const char *member, const char *path)
{
    const json_t *v = json_object_get(obj, member);
    if (!json_is_integer(v) || json_integer_value(v) >= 0) return;
    char field[AS_PATH_MAX];
    as_invalid_int(errs, as_child(field, path, member), json_integer_value(v),
                   "must be greater than or equal to 0");
}

/* ---- Go %#v ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void as_render_string_map(gp_buf *sb, const json_t *map)
{
    if (!json_is_object(map)) {
        gp_buf_add(sb, "map[string]string(nil)");
        return;
    }
    size_t n = json_object_size(map), i = 0;
    const char **keys = calloc(n ? n : 1, sizeof *keys);
    if (!keys) {
        sb->state = GP_BUF_NO_MEMORY;
        return;
    }
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)map, k, v)
    {
        keys[i++] = k;
    }
    qsort(keys, n, sizeof *keys, cmp_str); /* fmt prints maps sorted by key */
    gp_buf_add(sb, "map[string]string{");
    for (i = 0; i < n; i++) {
        if (i) gp_buf_add(sb, ", ");
        as_quote(sb, keys[i]);
        gp_buf_add(sb, ":");
        as_quote(sb, as_str(map, keys[i]));
    }
    gp_buf_add(sb, "}");
    free(keys);
}

static void render_strings(gp_buf *sb, const json_t *arr)
{
    if (!json_is_array(arr)) {
        gp_buf_add(sb, "[]string(nil)");
        return;
    }
    gp_buf_add(sb, "[]string{");
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (i) gp_buf_add(sb, ", ");
        as_quote(sb, json_string_value(v) ? json_string_value(v) : "");
    }
    gp_buf_add(sb, "}");
}

void as_render_label_selector(gp_buf *sb, const json_t *sel)
{
    gp_buf_add(sb, "v1.LabelSelector{MatchLabels:");
    as_render_string_map(sb, json_object_get(sel, "matchLabels"));
    gp_buf_add(sb, ", MatchExpressions:");
    const json_t *exprs = json_object_get(sel, "matchExpressions");
    if (!json_is_array(exprs)) {
        gp_buf_add(sb, "[]v1.LabelSelectorRequirement(nil)}");
        return;
    }
    gp_buf_add(sb, "[]v1.LabelSelectorRequirement{");
    size_t i;
    const json_t *e;
    json_array_foreach(exprs, i, e)
    {
        if (i) gp_buf_add(sb, ", ");
        gp_buf_add(sb, "v1.LabelSelectorRequirement{Key:");
        as_quote(sb, as_str(e, "key"));
        gp_buf_add(sb, ", Operator:");
        as_quote(sb, as_str(e, "operator"));
        gp_buf_add(sb, ", Values:");
        render_strings(sb, json_object_get(e, "values"));
        gp_buf_add(sb, "}");
    }
    gp_buf_add(sb, "}}");
}
