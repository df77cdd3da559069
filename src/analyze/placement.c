/* A pod's node selection against candidate nodes (see placement.h). */
#include "analyze/placement.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/common.h"
#include "kube/json.h"
#include "kube/label_selector.h"
#include "kube/node_affinity.h"
#include "kube/taints.h"
#include "util/buf.h"
#include "util/i18n.h"

#define LIFECYCLE_TAINT "node.kubernetes.io/"

/* ---- the pod's side ---- */

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A requirement as labels.Requirement.String() writes it: "key in (a,b)"
 * (values sorted), "key notin (a,b)", "key", "!key", "key>5", "key<5". */
static void requirement_text(const json_t *req, gp_buf *out)
{
    const char *key = kube_str(req, "key"), *op = kube_str(req, "operator");
    const json_t *values = kube_arr(req, "values");
    if (strcmp(op, "Exists") == 0) {
        gp_buf_add(out, key);
        return;
    }
    if (strcmp(op, "DoesNotExist") == 0) {
        gp_buf_addc(out, '!');
        gp_buf_add(out, key);
        return;
    }
    if (strcmp(op, "Gt") == 0 || strcmp(op, "Lt") == 0) {
        gp_buf_add(out, key);
        gp_buf_add(out, strcmp(op, "Gt") == 0 ? ">" : "<");
        gp_buf_add(out, or_empty(json_string_value(json_array_get(values, 0))));
        return;
    }
    size_t n = json_array_size(values);
    const char **v = calloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; v && i < n; i++)
        v[i] = or_empty(json_string_value(json_array_get(values, i)));
    if (v) qsort(v, n, sizeof *v, by_string);
    gp_buf_add(out, key);
    gp_buf_add(out, strcmp(op, "NotIn") == 0 ? " notin (" : " in (");
    for (size_t i = 0; v && i < n; i++) {
        if (i) gp_buf_addc(out, ',');
        gp_buf_add(out, v[i]);
    }
    gp_buf_addc(out, ')');
    free(v);
}

/* "term 1: a in (b), c" per nodeSelectorTerm of the required affinity. */
static json_t *affinity_texts(const json_t *required)
{
    json_t *out = json_array();
    size_t i, j;
    const json_t *term, *r;
    json_array_foreach(kube_arr(required, "nodeSelectorTerms"), i, term)
    {
        gp_buf b = {0};
        char head[32];
        snprintf(head, sizeof head, "term %zu: ", i + 1);
        gp_buf_add(&b, head);
        size_t k = 0;
        static const char *const parts[2] = {"matchExpressions", "matchFields"};
        for (size_t p = 0; p < 2; p++)
            json_array_foreach(kube_arr(term, parts[p]), j, r)
            {
                if (k++) gp_buf_add(&b, ", ");
                requirement_text(r, &b);
            }
        char *text = gp_buf_take(&b);
        json_array_append_new(out, json_string(text ? text : ""));
        free(text);
    }
    return out;
}

/* Tolerations sorted by key, as describe prints them. */
static int by_key(const void *a, const void *b)
{
    return strcmp(kube_str(*(json_t *const *)a, "key"), kube_str(*(json_t *const *)b, "key"));
}

static json_t *toleration_texts(const json_t *tolerations)
{
    json_t *out = json_array();
    size_t n = json_array_size(tolerations);
    const json_t **v = calloc(n ? n : 1, sizeof *v);
    if (!v) return out;
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(tolerations, i);
    /* mergesort keeps equal keys in spec order; qsort would not */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && by_key(&v[j - 1], &v[j]) > 0; j--) {
            const json_t *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        char text[800];
        an_toleration_text(v[i], text, sizeof text);
        json_array_append_new(out, json_string(text));
    }
    free(v);
    return out;
}

/* ---- each candidate ---- */

void an_placement_label_keys(const json_t *spec, json_t *keys)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)kube_obj(spec, "nodeSelector"), key, v)
    {
        json_object_set_new(keys, key, json_true());
    }
    size_t i, j;
    const json_t *term, *r;
    json_array_foreach(kube_arr(kube_required_node_affinity(spec), "nodeSelectorTerms"), i, term)
    {
        json_array_foreach(kube_arr(term, "matchExpressions"), j, r)
        {
            json_object_set_new(keys, kube_str(r, "key"), json_true());
        }
    }
}

static void add_text(json_t *list, const char *fmt, const char *a, const char *b, const char *c)
{
    char text[1200];
    snprintf(text, sizeof text, fmt, a, b, c);
    json_array_append_new(list, json_string(text));
}

/* What of the selection the node fails: nodeSelector pairs, and for a
 * pod whose every affinity term fails, each requirement of its terms that
 * the node does not meet. */
static json_t *mismatches(const json_t *spec, const an_placement_node *n)
{
    json_t *out = json_array();
    const char *key;
    json_t *want;
    json_object_foreach((json_t *)kube_obj(spec, "nodeSelector"), key, want)
    {
        const char *have = kube_str_or_null(n->labels, key);
        const char *w = or_empty(json_string_value(want));
        if (have && strcmp(have, w) == 0) continue;
        if (have)
            add_text(out, "nodeSelector %s=%s: the node has %s", key, w, have);
        else
            add_text(out, "nodeSelector %s=%s: the node has no such label%s", key, w, "");
    }
    const json_t *required = kube_required_node_affinity(spec);
    if (!required || kube_node_selector_matches(required, n->labels, n->name)) return out;
    size_t i, j;
    const json_t *term, *r;
    json_array_foreach(kube_arr(required, "nodeSelectorTerms"), i, term)
    {
        json_array_foreach(kube_arr(term, "matchExpressions"), j, r)
        {
            if (kube_requirement_matches(r, n->labels, KUBE_REQ_NODE_SELECTOR)) continue;
            gp_buf b = {0};
            requirement_text(r, &b);
            char *req = gp_buf_take(&b);
            const char *have = kube_str_or_null(n->labels, kube_str(r, "key"));
            char term_no[24];
            snprintf(term_no, sizeof term_no, "%zu", i + 1);
            if (have)
                add_text(out, "affinity term %s, %s: the node has %s", term_no, req ? req : "",
                         have);
            else
                add_text(out, "affinity term %s, %s: the node has no such label%s", term_no,
                         req ? req : "", "");
            free(req);
        }
    }
    return out;
}

/* Every taint of the node the pod does not tolerate (NoSchedule, NoExecute). */
static json_t *untolerated(const json_t *tolerations, const json_t *taints)
{
    json_t *out = json_array();
    size_t i;
    const json_t *t;
    json_array_foreach(taints, i, t)
    {
        json_t *one = json_pack("[O]", t);
        if (kube_untolerated_taint(one, tolerations,
                                   KUBE_TAINT_NO_SCHEDULE | KUBE_TAINT_NO_EXECUTE)) {
            char text[700];
            an_taint_text(t, text, sizeof text);
            json_array_append_new(out, json_string(text));
        }
        json_decref(one);
    }
    return out;
}

static json_t *node_section(const json_t *spec, const json_t *keys, const an_placement_node *n)
{
    json_t *labels = json_object();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)keys, key, v)
    {
        const char *have = kube_str_or_null(n->labels, key);
        json_object_set_new(labels, key, have ? json_string(have) : json_null());
    }
    json_t *taints = json_array();
    size_t i;
    const json_t *t;
    json_array_foreach(n->taints, i, t)
    {
        char text[700];
        an_taint_text(t, text, sizeof text);
        json_array_append_new(taints, json_string(text));
    }
    bool matches = kube_node_affinity_matches(
        kube_obj(spec, "nodeSelector"), kube_required_node_affinity(spec), n->labels, n->name);
    return json_pack("{s:s, s:o, s:o, s:b, s:b, s:o, s:o}", "name", n->name, "labels", labels,
                     "taints", taints, "unschedulable", n->unschedulable, "selector_matches",
                     matches, "mismatches", mismatches(spec, n), "untolerated",
                     untolerated(kube_arr(spec, "tolerations"), n->taints));
}

/* ---- the fix ---- */

static void yaml_toleration(gp_buf *y, const json_t *taint)
{
    const char *value = kube_str(taint, "value");
    gp_buf_add(y, "- key: ");
    gp_buf_add(y, kube_str(taint, "key"));
    gp_buf_add(y, *value ? "\n  operator: Equal\n  value: \"" : "\n  operator: Exists");
    if (*value) {
        gp_buf_add(y, value);
        gp_buf_addc(y, '"');
    }
    gp_buf_add(y, "\n  effect: ");
    gp_buf_add(y, kube_str(taint, "effect"));
    gp_buf_addc(y, '\n');
}

/* The taints of the candidates worth tolerating, each once. */
static json_t *taints_to_tolerate(const json_t *tolerations, const an_placement_node *nodes,
                                  size_t n)
{
    json_t *out = json_array(), *seen = json_object();
    for (size_t k = 0; k < n; k++) {
        size_t i;
        const json_t *t;
        json_array_foreach(nodes[k].taints, i, t)
        {
            if (strncmp(kube_str(t, "key"), LIFECYCLE_TAINT, strlen(LIFECYCLE_TAINT)) == 0)
                continue;
            json_t *one = json_pack("[O]", t);
            bool untol = kube_untolerated_taint(one, tolerations,
                                                KUBE_TAINT_NO_SCHEDULE | KUBE_TAINT_NO_EXECUTE);
            json_decref(one);
            char text[700];
            an_taint_text(t, text, sizeof text);
            if (!untol || json_object_get(seen, text)) continue;
            json_object_set_new(seen, text, json_true());
            json_array_append(out, (json_t *)t);
        }
    }
    json_decref(seen);
    return out;
}

/* The nodeSelector keys no candidate satisfies, with the first
 * candidate's value (null: the first candidate has no such label). */
static json_t *selector_changes(const json_t *spec, const an_placement_node *nodes, size_t n)
{
    json_t *out = json_object();
    const char *key;
    json_t *want;
    json_object_foreach((json_t *)kube_obj(spec, "nodeSelector"), key, want)
    {
        bool someone = false;
        for (size_t k = 0; k < n && !someone; k++)
            someone = kube_str_is(nodes[k].labels, key, or_empty(json_string_value(want)));
        if (someone || !n) continue;
        const char *have = kube_str_or_null(nodes[0].labels, key);
        json_object_set_new(out, key, have ? json_string(have) : json_null());
    }
    return out;
}

static json_t *fix(const json_t *pod, const an_placement_node *nodes, size_t n)
{
    const json_t *spec = kube_obj(pod, "spec");
    json_t *tolerate = taints_to_tolerate(kube_arr(spec, "tolerations"), nodes, n);
    json_t *changes = selector_changes(spec, nodes, n);
    if (!json_array_size(tolerate) && !json_object_size(changes)) {
        json_decref(tolerate);
        json_decref(changes);
        return json_null();
    }
    gp_buf y = {0};
    size_t i;
    const json_t *t;
    if (json_array_size(tolerate)) gp_buf_add(&y, "tolerations:\n");
    json_array_foreach(tolerate, i, t) yaml_toleration(&y, t);
    const char *key;
    json_t *v;
    if (json_object_size(changes)) gp_buf_add(&y, "nodeSelector:\n");
    json_object_foreach(changes, key, v)
    {
        gp_buf_add(&y, "  ");
        gp_buf_add(&y, key);
        gp_buf_add(&y, json_is_string(v) ? ": \"" : ": null  # no GPU node has this label\n");
        if (json_is_string(v)) {
            gp_buf_add(&y, json_string_value(v));
            gp_buf_add(&y, "\"\n");
        }
    }
    char *yaml = gp_buf_take(&y);
    const json_t *owner = kube_controller_of(pod);
    const json_t *meta = kube_obj(pod, "metadata");
    char where[700], command[2048] = "";
    if (owner) {
        snprintf(where, sizeof where, "the pod template (spec.template.spec) of %s %s/%s",
                 kube_str(owner, "kind"), kube_str(meta, "namespace"), kube_str(owner, "name"));
    } else if (!json_object_size(changes)) {
        snprintf(where, sizeof where, "the pod itself: tolerations can be added to a live pod");
        gp_buf c = {0};
        gp_buf_add(&c, "kubectl patch pod -n ");
        gp_buf_add(&c, kube_str(meta, "namespace"));
        gp_buf_addc(&c, ' ');
        gp_buf_add(&c, kube_str(meta, "name"));
        gp_buf_add(&c, " --type=json -p '[");
        json_array_foreach(tolerate, i, t)
        {
            const char *value = kube_str(t, "value");
            char op[1200];
            snprintf(op, sizeof op,
                     "%s{\"op\":\"add\",\"path\":\"/spec/tolerations/-\",\"value\":{\"key\":"
                     "\"%s\",\"operator\":\"%s\"%s%s%s,\"effect\":\"%s\"}}",
                     i ? "," : "", kube_str(t, "key"), *value ? "Equal" : "Exists",
                     *value ? ",\"value\":\"" : "", value, *value ? "\"" : "",
                     kube_str(t, "effect"));
            gp_buf_add(&c, op);
        }
        gp_buf_add(&c, "]'");
        char *text = gp_buf_take(&c);
        snprintf(command, sizeof command, "%s", text ? text : "");
        free(text);
    } else {
        snprintf(where, sizeof where,
                 "a new pod: a live pod's nodeSelector cannot change; delete %s/%s and create "
                 "it again with the fix",
                 kube_str(meta, "namespace"), kube_str(meta, "name"));
    }
    json_t *out = json_pack("{s:s, s:s, s:s?}", "yaml", yaml ? yaml : "", "where", where, "command",
                            *command ? command : NULL);
    free(yaml);
    json_decref(tolerate);
    json_decref(changes);
    return out;
}

json_t *an_placement(const json_t *pod, const an_placement_node *nodes, size_t n)
{
    const json_t *spec = kube_obj(pod, "spec");
    json_t *keys = json_object();
    an_placement_label_keys(spec, keys);
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, node_section(spec, keys, &nodes[i]));
    json_decref(keys);
    const json_t *selector = kube_obj(spec, "nodeSelector");
    return json_pack("{s:{s:o, s:o, s:o}, s:o, s:o}", "pod", "node_selector",
                     selector ? json_deep_copy(selector) : json_object(), "affinity",
                     affinity_texts(kube_required_node_affinity(spec)), "tolerations",
                     toleration_texts(kube_arr(spec, "tolerations")), "nodes", list, "fix",
                     fix(pod, nodes, n));
}

/* ---- text ---- */

/* "Title:  first\n        second" with the continuation lines aligned. */
static void multiline(FILE *out, const char *title, const json_t *list)
{
    fprintf(out, "    %-16s", title);
    if (!json_array_size(list)) {
        fputs("<none>\n", out);
        return;
    }
    size_t i;
    const json_t *v;
    json_array_foreach(list, i, v)
    {
        if (i) fprintf(out, "    %-16s", "");
        fprintf(out, "%s\n", json_string_value(v));
    }
}

static json_t *pairs(const json_t *obj)
{
    json_t *out = json_array();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        char text[800];
        snprintf(text, sizeof text, "%s=%s", key, json_is_string(v) ? json_string_value(v) : "");
        if (json_is_string(v)) json_array_append_new(out, json_string(text));
    }
    size_t n = json_array_size(out);
    const char **s = calloc(n ? n : 1, sizeof *s);
    for (size_t i = 0; s && i < n; i++)
        s[i] = json_string_value(json_array_get(out, i));
    if (s) qsort(s, n, sizeof *s, by_string);
    json_t *sorted = json_array();
    for (size_t i = 0; s && i < n; i++)
        json_array_append_new(sorted, json_string(s[i]));
    free(s);
    json_decref(out);
    return sorted;
}

void an_placement_render(const json_t *p, FILE *out)
{
    const json_t *pod = json_object_get(p, "pod");
    fprintf(out, "\n%s\n", _("Placement (as kubectl describe shows it):"));
    fprintf(out, "  %s\n", _("Pod:"));
    json_t *sel = pairs(json_object_get(pod, "node_selector"));
    multiline(out, "Node-Selectors:", sel);
    json_decref(sel);
    multiline(out, "Affinity:", json_object_get(pod, "affinity"));
    multiline(out, "Tolerations:", json_object_get(pod, "tolerations"));
    size_t i;
    const json_t *n;
    json_array_foreach(json_object_get(p, "nodes"), i, n)
    {
        fprintf(out, "  %s %s:\n", _("Node"), kube_str(n, "name"));
        json_t *labels = pairs(json_object_get(n, "labels"));
        multiline(out, "Labels:", labels);
        json_decref(labels);
        multiline(out, "Taints:", json_object_get(n, "taints"));
        fprintf(out, "    %-16s%s\n", "Unschedulable:",
                json_is_true(json_object_get(n, "unschedulable")) ? "true" : "false");
        size_t j;
        const json_t *m;
        json_array_foreach(json_object_get(n, "mismatches"), j, m)
        {
            fprintf(out, "    %s %s\n", _("does not match:"), json_string_value(m));
        }
        json_array_foreach(json_object_get(n, "untolerated"), j, m)
        {
            fprintf(out, "    %s %s\n", _("untolerated taint:"), json_string_value(m));
        }
    }
    const json_t *f = json_object_get(p, "fix");
    if (!json_is_object(f)) return;
    fprintf(out, "\n%s %s:\n", _("Suggested fix, in"), kube_str(f, "where"));
    const char *yaml = kube_str(f, "yaml");
    for (const char *line = yaml; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        fprintf(out, "  %.*s\n", (int)len, line);
        line += len + (nl ? 1 : 0);
    }
    if (*kube_str(f, "command")) fprintf(out, "  %s\n", kube_str(f, "command"));
}
