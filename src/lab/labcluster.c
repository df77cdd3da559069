#include "lab/labcluster.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lab/cluster_shape.h"
#include "lab/kube_ops.h"

static const char *const NODE_NAMES[LAB_NODES] = {"lab-node-0", "lab-node-1", "lab-node-2"};

const char *lab_node_name(int index)
{
    return index >= 0 && index < LAB_NODES ? NODE_NAMES[index] : NULL;
}

static json_t *node_for(const lab_params *p, int index)
{
    char cpu[16], memory[16], pods[16];
    snprintf(cpu, sizeof cpu, "%d", p->node_cpu);
    snprintf(memory, sizeof memory, "%dGi", p->node_memory_gib);
    snprintf(pods, sizeof pods, "%d", p->node_pods);
    lab_shape s;
    lab_shape_defaults(&s);
    s.prefix = "lab-node-";
    s.cpu = cpu;
    s.memory = memory;
    s.pods = pods;
    s.lab = true;
    return lab_shape_node(&s, index);
}

static bool is_lab_node(const json_t *node)
{
    const json_t *ann = json_object_get(json_object_get(node, "metadata"), "annotations");
    return json_is_string(json_object_get(ann, LAB_NODE_ANNOTATION));
}

static kc_result ensure_namespace(kc_client *c, const char *name, gp_error *err)
{
    char path[256];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s", name);
    json_t *ns = NULL;
    kc_result r = lab_kube_get_optional(c, path, &ns, err);
    if (r != KC_OK || ns) {
        json_decref(ns);
        return r;
    }
    json_t *body = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                             "metadata", "name", name);
    r = kc_create(c, "/api/v1/namespaces", body, NULL, err);
    json_decref(body);
    return r == KC_CONFLICT ? KC_OK : r;
}

/* cpu, memory and pods of a lab node's capacity and allocatable, as the
 * params say; other resources (an advertised GPU) are left alone. */
static kc_result reshape(kc_client *c, const lab_params *p, const char *name, gp_error *err)
{
    char path[128], cpu[16], memory[16], pods[16];
    snprintf(path, sizeof path, "/api/v1/nodes/%s/status", name);
    snprintf(cpu, sizeof cpu, "%d", p->node_cpu);
    snprintf(memory, sizeof memory, "%dGi", p->node_memory_gib);
    snprintf(pods, sizeof pods, "%d", p->node_pods);
    json_t *patch = json_pack("{s:{s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}}}", "status", "capacity",
                              "cpu", cpu, "memory", memory, "pods", pods, "allocatable", "cpu", cpu,
                              "memory", memory, "pods", pods);
    kc_result r = kc_patch(c, path, KC_PATCH_MERGE, patch, NULL, err);
    json_decref(patch);
    return r;
}

static const char *const STEP_OBJECTS[] = {LAB_PATH_DAEMONSET, LAB_PATH_PLUGIN_DS,
                                           LAB_PATH_CONFIGMAP, LAB_PATH_GPU_LAB_NS,
                                           LAB_PATH_RUNTIMECLASS};
#define N_STEP_OBJECTS (sizeof STEP_OBJECTS / sizeof STEP_OBJECTS[0])

/* Whether `lab up` marked this cluster as the lab's. */
static kc_result marked(kc_client *c, bool *yes, gp_error *err)
{
    json_t *m = NULL;
    kc_result r = lab_kube_get_optional(c, LAB_PATH_MARKER, &m, err);
    *yes = m != NULL;
    json_decref(m);
    return r;
}

/* The first time: no step object may exist yet (it would be someone
 * else's), then the marker. `created_ns` says whether the lab made
 * gpu-operator, so that down on another cluster takes it away again. */
static kc_result claim(kc_client *c, bool created_ns, gp_error *err)
{
    bool yes;
    kc_result r = marked(c, &yes, err);
    if (r != KC_OK || yes) return r;
    for (size_t i = 0; i < N_STEP_OBJECTS; i++) {
        json_t *obj = NULL;
        if ((r = lab_kube_get_optional(c, STEP_OBJECTS[i], &obj, err)) != KC_OK) return r;
        json_decref(obj);
        if (!obj) continue;
        gp_error_set(err, NULL, 0, 0,
                     "%s exists and was not made by the lab: the lab's steps would change and "
                     "delete it. Run the lab on a cluster of its own (kwok), or remove it",
                     STEP_OBJECTS[i]);
        return KC_CONFLICT;
    }
    json_t *cm =
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                  "metadata", "name", "gpuop-lab", "namespace", "gpu-operator", "data", "owner",
                  "gpuop lab", "created-namespace", created_ns ? "true" : "false");
    r = kc_create(c, "/api/v1/namespaces/gpu-operator/configmaps", cm, NULL, err);
    json_decref(cm);
    return r == KC_CONFLICT ? KC_OK : r;
}

kc_result lab_cluster_prepare(kc_client *c, const lab_params *p, gp_error *err)
{
    json_t *ns = NULL;
    kc_result r = lab_kube_get_optional(c, LAB_PATH_OPERATOR_NS, &ns, err);
    bool had_ns = ns != NULL;
    json_decref(ns);
    if (r != KC_OK || (r = ensure_namespace(c, "gpu-operator", err)) != KC_OK ||
        (r = claim(c, !had_ns, err)) != KC_OK)
        return r;
    for (int i = 0; i < LAB_NODES; i++) {
        char path[128];
        snprintf(path, sizeof path, "/api/v1/nodes/%s", NODE_NAMES[i]);
        json_t *node = NULL;
        r = lab_kube_get_optional(c, path, &node, err);
        if (r != KC_OK) return r;
        if (node) {
            bool ours = is_lab_node(node);
            json_decref(node);
            if (ours) {
                /* A node left by another lab (another seed) takes this
                 * lab's shape. */
                r = reshape(c, p, NODE_NAMES[i], err);
                if (r != KC_OK) return r;
                continue;
            }
            gp_error_set(err, NULL, 0, 0,
                         "node %s exists and was not created by the lab (no %s annotation); "
                         "the lab never takes over a node: use another cluster or remove it",
                         NODE_NAMES[i], LAB_NODE_ANNOTATION);
            return KC_CONFLICT;
        }
        json_t *body = node_for(p, i);
        r = kc_create(c, "/api/v1/nodes", body, NULL, err);
        json_decref(body);
        if (r != KC_OK && r != KC_CONFLICT) return r;
    }
    return KC_OK;
}

/* Removes nvidia.com/gpu (and the renamed .shared) from a lab node's status. */
static kc_result unadvertise(kc_client *c, const char *node, gp_error *err)
{
    char path[128];
    snprintf(path, sizeof path, "/api/v1/nodes/%s/status", node);
    json_t *patch = json_pack("{s:{s:{s:n, s:n}, s:{s:n, s:n}}}", "status", "capacity",
                              "nvidia.com/gpu", "nvidia.com/gpu.shared", "allocatable",
                              "nvidia.com/gpu", "nvidia.com/gpu.shared");
    kc_result r = kc_patch(c, path, KC_PATCH_MERGE, patch, NULL, err);
    json_decref(patch);
    return r == KC_NOT_FOUND ? KC_OK : r;
}

kc_result lab_cluster_reset(kc_client *c, const lab_params *p, gp_error *err)
{
    (void)p;
    bool yes;
    kc_result r = marked(c, &yes, err);
    if (r != KC_OK) return r;
    if (!yes) {
        gp_error_set(err, NULL, 0, 0,
                     "this cluster has no %s: 'gpuop lab up' did not prepare it, so the lab "
                     "deletes nothing there",
                     "configmap gpu-operator/gpuop-lab");
        return KC_CONFLICT;
    }
    for (size_t i = 0; i < N_STEP_OBJECTS; i++) {
        r = lab_kube_delete_and_wait(c, STEP_OBJECTS[i], err);
        if (r != KC_OK) return r;
    }
    for (int i = 0; i < LAB_NODES; i++) {
        char path[128];
        snprintf(path, sizeof path, "/api/v1/nodes/%s", NODE_NAMES[i]);
        json_t *node = NULL;
        r = lab_kube_get_optional(c, path, &node, err);
        if (r != KC_OK) return r;
        bool ours = node && is_lab_node(node);
        json_decref(node);
        if (!ours) continue;
        r = unadvertise(c, NODE_NAMES[i], err);
        if (r != KC_OK) return r;
    }
    return KC_OK;
}

kc_result lab_cluster_remove(kc_client *c, const lab_params *p, gp_error *err)
{
    json_t *marker = NULL;
    kc_result r = lab_kube_get_optional(c, LAB_PATH_MARKER, &marker, err);
    if (r != KC_OK) return r;
    const char *made =
        json_string_value(json_object_get(json_object_get(marker, "data"), "created-namespace"));
    bool created_ns = made && strcmp(made, "true") == 0;
    json_decref(marker);
    if ((r = lab_cluster_reset(c, p, err)) != KC_OK) return r;
    for (int i = 0; i < LAB_NODES; i++) {
        char path[128];
        snprintf(path, sizeof path, "/api/v1/nodes/%s", NODE_NAMES[i]);
        json_t *node = NULL;
        r = lab_kube_get_optional(c, path, &node, err);
        if (r != KC_OK) return r;
        bool ours = node && is_lab_node(node);
        json_decref(node);
        if (!ours) continue;
        r = kc_delete(c, path, NULL, err);
        if (r != KC_OK && r != KC_NOT_FOUND) return r;
    }
    r = lab_kube_delete_and_wait(c, created_ns ? LAB_PATH_OPERATOR_NS : LAB_PATH_MARKER, err);
    if (r != KC_OK) return r;
    return KC_OK;
}

static const char *uid_of(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
}

static bool owned_by(const json_t *obj, const char *uid)
{
    const json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
    size_t i;
    const json_t *ref;
    json_array_foreach(refs, i, ref)
    {
        const char *u = json_string_value(json_object_get(ref, "uid"));
        if (u && uid && strcmp(u, uid) == 0) return true;
    }
    return false;
}

/* The items of `list` owned by `uid`, as a new array. */
static json_t *owned_items(const json_t *list, const char *uid)
{
    json_t *out = json_array();
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item)
    {
        if (owned_by(item, uid)) json_array_append(out, item);
    }
    return out;
}

static kc_result list_into(kc_client *c, const char *path, json_t *snap, const char *key,
                           gp_error *err)
{
    json_t *items = NULL;
    kc_result r = kc_list_all(c, path, &items, err);
    if (r == KC_NOT_FOUND) {
        items = json_array();
        r = KC_OK;
    }
    if (r != KC_OK) return r;
    json_object_set_new(snap, key, items);
    return KC_OK;
}

static kc_result get_into(kc_client *c, const char *path, json_t *snap, const char *key,
                          gp_error *err)
{
    json_t *obj = NULL;
    kc_result r = lab_kube_get_optional(c, path, &obj, err);
    if (r != KC_OK) return r;
    json_object_set_new(snap, key, obj ? obj : json_null());
    return KC_OK;
}

static kc_result snapshot_nodes(kc_client *c, json_t *snap, gp_error *err)
{
    json_t *nodes = json_object();
    json_t *node_pods = json_array();
    json_object_set_new(snap, "nodes", nodes);
    json_object_set_new(snap, "node_pods", node_pods);
    for (int i = 0; i < LAB_NODES; i++) {
        char path[256];
        snprintf(path, sizeof path, "/api/v1/nodes/%s", NODE_NAMES[i]);
        json_t *node = NULL;
        kc_result r = lab_kube_get_optional(c, path, &node, err);
        if (r != KC_OK) return r;
        json_object_set_new(nodes, NODE_NAMES[i], node ? node : json_null());
        snprintf(path, sizeof path, "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s",
                 NODE_NAMES[i]);
        json_t *pods = NULL;
        r = kc_list_all(c, path, &pods, err);
        if (r != KC_OK) return r;
        json_array_extend(node_pods, pods);
        json_decref(pods);
    }
    return KC_OK;
}

static kc_result snapshot_daemonset(kc_client *c, json_t *snap, gp_error *err)
{
    kc_result r = get_into(c, LAB_PATH_DAEMONSET, snap, "daemonset", err);
    if (r != KC_OK) return r;
    const char *uid = uid_of(json_object_get(snap, "daemonset"));
    json_t *tmp = json_object();
    if ((r = list_into(c, "/api/v1/namespaces/gpu-operator/pods", tmp, "pods", err)) != KC_OK ||
        (r = list_into(c, "/apis/apps/v1/namespaces/gpu-operator/controllerrevisions", tmp,
                       "revisions", err)) != KC_OK ||
        (r = list_into(c, "/api/v1/namespaces/gpu-operator/events", tmp, "events", err)) != KC_OK) {
        json_decref(tmp);
        return r;
    }
    json_object_set_new(snap, "ds_pods", owned_items(json_object_get(tmp, "pods"), uid));
    json_object_set_new(snap, "revisions", owned_items(json_object_get(tmp, "revisions"), uid));
    json_object_set(snap, "ds_events", json_object_get(tmp, "events"));
    json_decref(tmp);
    return KC_OK;
}

kc_result lab_cluster_snapshot(kc_client *c, json_t **snapshot, gp_error *err)
{
    json_t *snap = json_object();
    kc_result r;
    if ((r = snapshot_nodes(c, snap, err)) != KC_OK ||
        (r = get_into(c, LAB_PATH_GPU_LAB_NS, snap, "namespace", err)) != KC_OK ||
        (r = get_into(c, LAB_PATH_RUNTIMECLASS, snap, "runtimeclass", err)) != KC_OK ||
        (r = get_into(c, LAB_PATH_POD, snap, "pod", err)) != KC_OK ||
        (r = list_into(c,
                       "/api/v1/namespaces/gpu-lab/events?fieldSelector=involvedObject.name%3D"
                       "cuda-probe",
                       snap, "pod_events", err)) != KC_OK ||
        (r = get_into(c, LAB_PATH_CONFIGMAP, snap, "configmap", err)) != KC_OK ||
        (r = snapshot_daemonset(c, snap, err)) != KC_OK) {
        json_decref(snap);
        return r;
    }
    /* only gpuop's embedded cluster has the route: any other answer (404,
     * a real cluster's 403) means no simulated node */
    json_t *agent = NULL;
    if (lab_kube_get_optional(c, LAB_PATH_NODE0_AGENT, &agent, NULL) != KC_OK) agent = NULL;
    json_object_set_new(snap, "node0_agent", agent ? agent : json_null());
    *snapshot = snap;
    return KC_OK;
}
