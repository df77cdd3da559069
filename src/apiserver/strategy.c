/* Registry strategies (PrepareForCreate/PrepareForUpdate) and defaulting for
 * DaemonSets (pkg/registry/apps/daemonset/strategy.go, apps/v1 defaults and
 * conversion), Namespaces, Nodes and RuntimeClasses; pods are in
 * strategy_pod.c. */
#include "apiserver/strategy.h"
#include "apiserver/strategy_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/intstr.h"

#define TEMPLATE_GENERATION "deprecated.daemonset.template.generation"

static void set_copy_or_del(json_t *obj, const char *key, const json_t *from)
{
    if (from)
        json_object_set_new(obj, key, json_deep_copy(from));
    else
        json_object_del(obj, key);
}

/* ---- DaemonSet ---- */

/* SetDefaults_DaemonSet plus the template's PodSpec defaults. */
static void daemonset_defaults(json_t *ds)
{
    json_t *spec = as_obj(ds, "spec");
    if (!spec) return;
    json_t *us = as_obj(spec, "updateStrategy");
    if (us && as_str_unset(us, "type"))
        json_object_set_new(us, "type", json_string("RollingUpdate"));
    if (us && strcmp(kube_str(us, "type"), "RollingUpdate") == 0) {
        json_t *ru = as_obj(us, "rollingUpdate");
        const json_t *mu = json_object_get(ru, "maxUnavailable");
        const json_t *ms = json_object_get(ru, "maxSurge");
        if (ru && (!mu || json_is_null(mu)))
            json_object_set_new(ru, "maxUnavailable", json_integer(1));
        if (ru && (!ms || json_is_null(ms))) json_object_set_new(ru, "maxSurge", json_integer(0));
    }
    const json_t *rhl = json_object_get(spec, "revisionHistoryLimit");
    if (!rhl || json_is_null(rhl))
        json_object_set_new(spec, "revisionHistoryLimit", json_integer(10));
    as_pod_spec_defaults(json_object_get(json_object_get(spec, "template"), "spec"), false);
}

/* The internal Spec.TemplateGeneration travels in apps/v1 as this annotation
 * (Convert_v1_DaemonSet_To_apps_DaemonSet); 0 when absent or unreadable. */
static json_int_t template_generation(const json_t *ds)
{
    const char *v = kube_str(json_object_get(json_object_get(ds, "metadata"), "annotations"),
                             TEMPLATE_GENERATION);
    int64_t n;
    return kube_parse_int64(v, &n) ? (json_int_t)n : 0;
}

static void set_template_generation(json_t *ds, json_int_t gen)
{
    json_t *ann = as_obj(as_obj(ds, "metadata"), "annotations");
    char text[32];
    snprintf(text, sizeof text, "%" JSON_INTEGER_FORMAT, gen);
    if (ann) json_object_set_new(ann, TEMPLATE_GENERATION, json_string(text));
}

static void daemonset_create(json_t *ds)
{
    daemonset_defaults(ds);
    /* the zero DaemonSetStatus: these four counters have no omitempty */
    json_object_set_new(ds, "status",
                        json_pack("{s:i, s:i, s:i, s:i}", "currentNumberScheduled", 0,
                                  "numberMisscheduled", 0, "desiredNumberScheduled", 0,
                                  "numberReady", 0));
    json_t *meta = as_obj(ds, "metadata");
    if (meta) json_object_set_new(meta, "generation", json_integer(1));
    json_int_t tg = template_generation(ds);
    set_template_generation(ds, tg < 1 ? 1 : tg);
}

static json_int_t generation(const json_t *obj)
{
    return json_integer_value(json_object_get(json_object_get(obj, "metadata"), "generation"));
}

static void daemonset_update(json_t *ds, const json_t *old, bool status_subresource)
{
    daemonset_defaults(ds);
    json_t *meta = as_obj(ds, "metadata");
    json_int_t old_gen = generation(old), old_tg = template_generation(old);
    if (status_subresource) {
        set_copy_or_del(ds, "spec", json_object_get(old, "spec"));
    } else {
        const json_t *spec = json_object_get(ds, "spec");
        const json_t *old_spec = json_object_get(old, "spec");
        set_copy_or_del(ds, "status", json_object_get(old, "status"));
        if (!as_sem_equal(json_object_get(spec, "template"),
                          json_object_get(old_spec, "template"))) {
            old_tg++;
            old_gen++;
        } else if (!as_sem_equal(spec, old_spec)) {
            old_gen++;
        }
    }
    if (meta) json_object_set_new(meta, "generation", json_integer(old_gen));
    set_template_generation(ds, old_tg);
}

/* ---- Namespace ---- */

/* SetDefaults_Namespace and the strategy's Canonicalize */
static void namespace_label(json_t *ns)
{
    json_t *meta = as_obj(ns, "metadata");
    const char *name = kube_str(meta, "name");
    if (!*name) return;
    json_t *labels = as_obj(meta, "labels");
    if (labels) json_object_set_new(labels, "kubernetes.io/metadata.name", json_string(name));
}

static void namespace_create(json_t *ns)
{
    namespace_label(ns);
    json_t *spec = as_obj(ns, "spec");
    json_t *fin = json_object_get(spec, "finalizers");
    bool has = false;
    size_t i;
    json_t *f;
    json_array_foreach(fin, i, f)
    {
        if (json_string_value(f) && strcmp(json_string_value(f), "kubernetes") == 0) has = true;
    }
    if (!has && spec) {
        if (!json_is_array(fin)) {
            fin = json_array();
            json_object_set_new(spec, "finalizers", fin);
        }
        json_array_append_new(fin, json_string("kubernetes"));
    }
    json_object_set_new(ns, "status", json_pack("{s:s}", "phase", "Active"));
}

static void namespace_update(json_t *ns, const json_t *old, bool status_subresource)
{
    namespace_label(ns);
    const json_t *old_spec = json_object_get(old, "spec");
    if (status_subresource) {
        set_copy_or_del(ns, "spec", old_spec);
        json_t *status = as_obj(ns, "status");
        if (status && as_str_unset(status, "phase"))
            json_object_set_new(status, "phase", json_string("Active"));
        return;
    }
    json_t *spec = as_obj(ns, "spec");
    if (spec) set_copy_or_del(spec, "finalizers", json_object_get(old_spec, "finalizers"));
    set_copy_or_del(ns, "status", json_object_get(old, "status"));
}

/* ---- Node ---- */

/* SetDefaults_NodeStatus, after the ResourceLists are canonical */
static void node_defaults(json_t *node)
{
    json_t *status = json_object_get(node, "status");
    if (!json_is_object(status)) return;
    json_t *cap = json_object_get(status, "capacity");
    as_canonical_list(cap, true);
    const json_t *alloc = json_object_get(status, "allocatable");
    if ((!alloc || json_is_null(alloc)) && json_is_object(cap))
        json_object_set_new(status, "allocatable", json_deep_copy(cap));
    as_canonical_list(json_object_get(status, "allocatable"), true);
}

/* The NodeTaint admission plugin (plugin/pkg/admission/nodetaint): a new
 * Node is tainted node.kubernetes.io/not-ready NoSchedule, so that nothing
 * is scheduled onto it before it is Ready; the node lifecycle controller
 * takes the taint off once its conditions say so. */
static void node_create(json_t *node)
{
    node_defaults(node);
    json_t *spec = json_object_get(node, "spec");
    if (!json_is_object(spec)) {
        spec = json_object();
        if (!spec || json_object_set_new(node, "spec", spec) != 0) return;
    }
    json_t *taints = json_object_get(spec, "taints");
    size_t i;
    json_t *t;
    json_array_foreach(taints, i, t) if (kube_str_is(t, "key", "node.kubernetes.io/not-ready") &&
                                         kube_str_is(t, "effect", "NoSchedule")) return;
    if (!json_is_array(taints)) {
        taints = json_array();
        if (!taints || json_object_set_new(spec, "taints", taints) != 0) return;
    }
    json_array_append_new(taints, json_pack("{s:s, s:s}", "key", "node.kubernetes.io/not-ready",
                                            "effect", "NoSchedule"));
}

static void node_update(json_t *node, const json_t *old, bool status_subresource)
{
    node_defaults(node);
    if (status_subresource)
        set_copy_or_del(node, "spec", json_object_get(old, "spec"));
    else
        set_copy_or_del(node, "status", json_object_get(old, "status"));
}

/* ---- RuntimeClass ---- */

static void runtimeclass_defaults(json_t *rc)
{
    as_canonical_list(json_object_get(json_object_get(rc, "overhead"), "podFixed"), true);
}

/* ---- entry points ---- */

void as_strategy_create(const char *group, const char *kind, json_t *obj)
{
    if (!json_is_object(obj)) return;
    switch (as_kind_of(group, kind)) {
    case AS_POD:
        as_pod_create(obj);
        break;
    case AS_DAEMONSET:
        daemonset_create(obj);
        break;
    case AS_NAMESPACE:
        namespace_create(obj);
        break;
    case AS_NODE:
        node_create(obj);
        break;
    case AS_RUNTIMECLASS:
        runtimeclass_defaults(obj);
        break;
    case AS_CONFIGMAP:
    case AS_OTHER:
        break;
    }
}

void as_strategy_update(const char *group, const char *kind, json_t *obj, const json_t *old,
                        bool status_subresource)
{
    if (!json_is_object(obj)) return;
    as_kind k = as_kind_of(group, kind);
    if (k != AS_OTHER && k != AS_DAEMONSET) json_object_del(as_obj(obj, "metadata"), "generation");
    switch (k) {
    case AS_POD:
        as_pod_update(obj, old, status_subresource);
        break;
    case AS_DAEMONSET:
        daemonset_update(obj, old, status_subresource);
        break;
    case AS_NAMESPACE:
        namespace_update(obj, old, status_subresource);
        break;
    case AS_NODE:
        node_update(obj, old, status_subresource);
        break;
    case AS_RUNTIMECLASS:
        runtimeclass_defaults(obj);
        break;
    case AS_CONFIGMAP:
    case AS_OTHER:
        break;
    }
}
