/* The namespace controller: one pass over a snapshot for a namespace being
 * deleted, producing the requests the real one would send next. */
#include "controllers/namespace_internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/actions_internal.h"
#include "kube/json.h"
#include "kube/pod.h"
#include "kube/time.h"
#include "util/buf.h"

#define FINALIZER_NAMESPACE "kubernetes"

static bool nonempty(const char *s)
{
    return s && *s;
}

/* ---- the namespace controller ---- */

/* What is still there after this pass's deletes: objects held by finalizers
 * or deleting already, and pods that get a grace period (bound and not
 * finished; the API server removes the others at once). */
static bool survives_delete(const json_t *entry, const json_t *obj)
{
    if (kube_deleting(obj) ||
        json_array_size(json_object_get(kube_obj(obj, "metadata"), "finalizers")) > 0)
        return true;
    if (!kube_str_is(entry, "resource", "pods") || nonempty(kube_str_or_null(entry, "group")))
        return false;
    return nonempty(kube_str_or_null(json_object_get(obj, "spec"), "nodeName")) &&
           !kube_pod_terminal(obj);
}

static void count(bool *ok, json_t *counts, const char *key)
{
    json_int_t n = json_integer_value(json_object_get(counts, key));
    ctl_put(ok, counts, key, json_integer(n + 1));
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "<key><infix><n> resource instances" for each count, sorted, joined by
 * ", " (ProcessContentTotals). NULL when memory runs out. */
static char *summary(const json_t *counts, const char *infix)
{
    size_t n = json_object_size(counts), k = 0;
    char **parts = calloc(n ? n : 1, sizeof *parts);
    if (!parts) return NULL;
    const char *key;
    const json_t *v;
    bool ok = true;
    json_object_foreach((json_t *)counts, key, v)
    {
        parts[k] =
            gp_format("%s%s%lld resource instances", key, infix, (long long)json_integer_value(v));
        if (!parts[k]) {
            ok = false;
            break;
        }
        k++;
    }
    char *out = NULL;
    if (ok) {
        qsort(parts, k, sizeof *parts, compare_strings);
        gp_buf b = {0};
        gp_buf_join(&b, (const char *const *)parts, k, ", ");
        out = gp_buf_take(&b);
    }
    for (size_t i = 0; i < k; i++)
        free(parts[i]);
    free(parts);
    return out;
}

typedef struct ns_condition {
    const char *type, *status, *reason, *message;
} ns_condition;

/* The condition to send for `want`, or json_null() when the namespace shows
 * it already. A changed status gets a new lastTransitionTime; a changed text
 * alone keeps the old one (updateConditions). */
static json_t *condition_change(const json_t *ns, const ns_condition *want, const char *now)
{
    const json_t *have = NULL;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(json_object_get(ns, "status"), "conditions"), i, c)
    {
        if (kube_str_is(c, "type", want->type)) have = c;
    }
    bool same_status = have && kube_str_is(have, "status", want->status);
    if (same_status && kube_str_is(have, "reason", want->reason) &&
        kube_str_is(have, "message", want->message))
        return json_null();
    /* A null would delete the old time in the merge, so the key is left out. */
    if (same_status)
        return json_pack("{s:s, s:s, s:s, s:s}", "type", want->type, "status", want->status,
                         "reason", want->reason, "message", want->message);
    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", want->type, "status", want->status,
                     "lastTransitionTime", now, "reason", want->reason, "message", want->message);
}

/* "<prefix><summary>", or NULL when memory runs out. */
static char *message(const char *prefix, const json_t *counts, const char *infix)
{
    char *text = summary(counts, infix);
    if (!text) return NULL;
    size_t size = strlen(prefix) + strlen(text) + 1;
    char *out = malloc(size);
    if (out) snprintf(out, size, "%s%s", prefix, text);
    free(text);
    return out;
}

/* {"status": {...}} with what changed, or json_null() when nothing did. */
static json_t *ns_status_patch(const json_t *ns, const char *left_msg, const char *held_msg,
                               time_t now)
{
    const ns_condition wanted[] = {
        {"NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered",
         "All resources successfully discovered"},
        {"NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions",
         "All legacy kube types successfully parsed"},
        {"NamespaceDeletionContentFailure", "False", "ContentDeleted",
         "All content successfully deleted, may be waiting on finalization"},
        left_msg
            ? (ns_condition){"NamespaceContentRemaining", "True", "SomeResourcesRemain", left_msg}
            : (ns_condition){"NamespaceContentRemaining", "False", "ContentRemoved",
                             "All content successfully removed"},
        held_msg ? (ns_condition){"NamespaceFinalizersRemaining", "True", "SomeFinalizersRemain",
                                  held_msg}
                 : (ns_condition){"NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers",
                                  "All content-preserving finalizers finished"},
    };
    char now_s[32];
    kube_time_format(now, now_s);
    json_t *st = json_object(), *conds = json_array();
    bool ok = st && conds;
    for (size_t i = 0; ok && i < sizeof wanted / sizeof wanted[0]; i++) {
        json_t *c = condition_change(ns, &wanted[i], now_s);
        if (!json_is_null(c)) ctl_push(&ok, conds, c);
    }
    if (ok && !kube_str_is(json_object_get(ns, "status"), "phase", "Terminating"))
        ctl_put(&ok, st, "phase", json_string("Terminating"));
    if (ok && json_array_size(conds) > 0) ctl_put(&ok, st, "conditions", json_incref(conds));
    json_decref(conds);
    json_t *patch = !ok                        ? NULL
                    : json_object_size(st) > 0 ? json_pack("{s:O}", "status", st)
                                               : json_null();
    json_decref(st);
    return patch;
}

static void emit_ns_status(bool *ok, json_t *actions, const json_t *ns_entry, const json_t *left,
                           const json_t *held, time_t now)
{
    char *left_msg = NULL, *held_msg = NULL;
    if (json_object_size(left) > 0)
        left_msg = message("Some resources are remaining: ", left, " has ");
    if (json_object_size(held) > 0)
        held_msg =
            message("Some content in the namespace has finalizers remaining: ", held, " in ");
    json_t *patch = NULL;
    if ((left_msg || json_object_size(left) == 0) && (held_msg || json_object_size(held) == 0))
        patch = ns_status_patch(ctl_action_object(ns_entry), left_msg, held_msg, now);
    if (!patch)
        *ok = false;
    else if (!json_is_null(patch))
        ctl_action_patch(ok, actions, "patch-status", ns_entry, CTL_PATCH_STRATEGIC, patch);
    free(left_msg);
    free(held_msg);
}

/* The body finalizeNamespace PUTs: the namespace with spec.finalizers as a
 * sorted set (sets.String.List) without "kubernetes". */
static json_t *finalize_body(const json_t *ns)
{
    const json_t *have = json_object_get(json_object_get(ns, "spec"), "finalizers");
    size_t n = 0, i;
    const char **names = calloc(json_array_size(have) + 1, sizeof *names);
    json_t *body = json_deep_copy(ns), *rest = json_array();
    bool ok = names && body && rest;
    const json_t *f;
    json_array_foreach(have, i, f)
    {
        const char *name = json_string_value(f);
        if (ok && name && strcmp(name, FINALIZER_NAMESPACE) != 0) names[n++] = name;
    }
    if (ok) qsort(names, n, sizeof *names, compare_strings);
    for (i = 0; ok && i < n; i++)
        if (i == 0 || strcmp(names[i - 1], names[i]) != 0)
            ctl_push(&ok, rest, json_string(names[i]));
    free(names);
    json_t *spec = json_object_get(body, "spec");
    if (ok && !json_is_object(spec)) {
        spec = json_object();
        ctl_put(&ok, body, "spec", spec);
    }
    if (ok)
        ctl_put(&ok, spec, "finalizers", rest);
    else
        json_decref(rest);
    if (ok) return body;
    json_decref(body);
    return NULL;
}

json_t *ctl_ns_actions(const json_t *ns, const json_t *snapshot, time_t now)
{
    json_t *actions = json_array();
    if (!actions) return NULL;
    const char *name = kube_str_or_null(kube_obj(ns, "metadata"), "name");
    bool deleting =
        kube_deleting(ns) || kube_str_is(json_object_get(ns, "status"), "phase", "Terminating");
    if (!nonempty(name) || !deleting) return actions;

    json_t *ns_entry =
        json_pack("{s:s, s:s, s:O}", "resource", "namespaces", "group", "", "object", ns);
    json_t *left = json_object(), *held = json_object();
    bool ok = ns_entry && left && held;
    size_t contents = 0, i;
    const json_t *entry;
    json_array_foreach(snapshot, i, entry)
    {
        const json_t *obj = ctl_action_object(entry);
        if (!ok || !obj || !kube_str_is(kube_obj(obj, "metadata"), "namespace", name)) continue;
        contents++;
        if (!kube_deleting(obj)) ctl_action_delete(&ok, actions, entry, "Background");
        if (!survives_delete(entry, obj)) continue;
        char key[512];
        snprintf(key, sizeof key, "%s.%s", kube_str(entry, "resource"), kube_str(entry, "group"));
        count(&ok, left, key);
        size_t j;
        const json_t *f;
        json_array_foreach(json_object_get(kube_obj(obj, "metadata"), "finalizers"), j, f)
        {
            if (json_is_string(f)) count(&ok, held, json_string_value(f));
        }
    }
    if (ok) emit_ns_status(&ok, actions, ns_entry, left, held, now);
    const json_t *finalizers = json_object_get(json_object_get(ns, "spec"), "finalizers");
    if (ok && contents == 0 && kube_has_string(finalizers, FINALIZER_NAMESPACE)) {
        json_t *a = ctl_action("finalize", ns_entry);
        if (a) ctl_put(&ok, a, "body", finalize_body(ns));
        ctl_push(&ok, actions, a);
    }
    json_decref(ns_entry);
    json_decref(left);
    json_decref(held);
    if (ok) return actions;
    json_decref(actions);
    return NULL;
}
