#include "apiserver/resources.h"

#include <string.h>

/* Verbs as kube-apiserver 1.32 lists them in discovery. */
static const char *const all_verbs[] = {
    "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch", NULL};
static const char *const namespace_verbs[] = {"create", "delete", "get",   "list",
                                              "patch",  "update", "watch", NULL};
static const char *const status_verbs[] = {"get", "patch", "update", NULL};
static const char *const create_only[] = {"create", NULL};
static const char *const update_only[] = {"update", NULL};
static const char *const get_only[] = {"get", NULL};
static const char *const create_get[] = {"create", "get", NULL};

static const char *const none[] = {NULL};
static const char *const all_category[] = {"all", NULL};

static const as_subresource no_subresources[] = {{NULL, NULL, NULL, NULL, NULL}};
/* exec, attach, log and portforward: api_connect.c */
static const as_subresource pod_subresources[] = {
    {"attach", "PodAttachOptions", create_get, NULL, NULL},
    {"binding", "Binding", create_only, NULL, NULL},
    {"eviction", "Eviction", create_only, "policy", "v1"},
    {"exec", "PodExecOptions", create_get, NULL, NULL},
    {"log", "Pod", get_only, NULL, NULL},
    {"portforward", "PodPortForwardOptions", create_get, NULL, NULL},
    {"status", "Pod", status_verbs, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};
static const as_subresource node_subresources[] = {{"status", "Node", status_verbs, NULL, NULL},
                                                   {NULL, NULL, NULL, NULL, NULL}};
static const as_subresource namespace_subresources[] = {
    {"finalize", "Namespace", update_only, NULL, NULL},
    {"status", "Namespace", status_verbs, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};
static const as_subresource daemonset_subresources[] = {
    {"status", "DaemonSet", status_verbs, NULL, NULL}, {NULL, NULL, NULL, NULL, NULL}};

#define SHORT(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The lab's resources (k8s-semantics.md, section 2.3). */
static const as_resource table[] = {
    {"", "v1", "namespaces", "namespace", "Namespace", false, namespace_verbs, SHORT("ns"), none,
     namespace_subresources},
    {"", "v1", "nodes", "node", "Node", false, all_verbs, SHORT("no"), none, node_subresources},
    {"", "v1", "pods", "pod", "Pod", true, all_verbs, SHORT("po"), all_category, pod_subresources},
    {"", "v1", "configmaps", "configmap", "ConfigMap", true, all_verbs, SHORT("cm"), none,
     no_subresources},
    {"", "v1", "events", "event", "Event", true, all_verbs, SHORT("ev"), none, no_subresources},
    {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true, all_verbs, SHORT("sa"),
     none, no_subresources},
    {"apps", "v1", "daemonsets", "daemonset", "DaemonSet", true, all_verbs, SHORT("ds"),
     all_category, daemonset_subresources},
    {"apps", "v1", "controllerrevisions", "controllerrevision", "ControllerRevision", true,
     all_verbs, none, none, no_subresources},
    {"node.k8s.io", "v1", "runtimeclasses", "runtimeclass", "RuntimeClass", false, all_verbs, none,
     none, no_subresources},
    {"events.k8s.io", "v1", "events", "event", "Event", true, all_verbs, SHORT("ev"), none,
     no_subresources},
    {"coordination.k8s.io", "v1", "leases", "lease", "Lease", true, all_verbs, none, none,
     no_subresources},
    /* reviews, answered and not stored (api_review.c) */
    {"authorization.k8s.io", "v1", "selfsubjectaccessreviews", "selfsubjectaccessreview",
     "SelfSubjectAccessReview", false, create_only, none, none, no_subresources},
    {"authorization.k8s.io", "v1", "selfsubjectrulesreviews", "selfsubjectrulesreview",
     "SelfSubjectRulesReview", false, create_only, none, none, no_subresources},
};

const as_resource *as_resources(size_t *count)
{
    *count = sizeof table / sizeof table[0];
    return table;
}

const as_resource *as_resource_find(const char *group, const char *version, const char *resource)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].group, group) == 0 && strcmp(table[i].version, version) == 0 &&
            strcmp(table[i].resource, resource) == 0)
            return &table[i];
    return NULL;
}
