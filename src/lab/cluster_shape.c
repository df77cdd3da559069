#include "lab/cluster_shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/loopback.h"
#include "kube/duration.h"
#include "kube/quantity.h"
#include "kube/selector.h"

void lab_shape_defaults(lab_shape *s)
{
    memset(s, 0, sizeof *s);
    s->prefix = "kwok-node-";
    s->cpu = "32";
    s->memory = "256Gi";
    s->pods = "110";
    s->runtime_handlers = "runc";
}

void lab_shape_lab(lab_shape *s)
{
    s->lab = true;
    s->nodes = 3;
    s->prefix = "lab-node-";
    s->cpu = "16";
    s->memory = "32Gi";
    s->pods = "110";
    s->runtime_handlers = "runc";
    bool has = false;
    for (size_t i = 0; i < s->namespace_count; i++)
        has |= strcmp(s->namespaces[i], "gpu-operator") == 0;
    if (!has && s->namespace_count < LAB_SHAPE_MAX_ITEMS)
        s->namespaces[s->namespace_count++] = "gpu-operator";
}

static int quantity_option(const char *opt, const char *value, gp_error *err)
{
    kube_quantity q;
    if (kube_quantity_parse(value, &q, err) == 0 && q.units >= 0 && !kube_quantity_is_zero(&q))
        return 0;
    gp_error_set(err, NULL, 0, 0, "%s: '%s' is not a positive quantity", opt, value);
    return -1;
}

/* kube-controller-manager's --node-monitor-grace-period: a Go duration,
 * here from 1 s (the fake kubelet renews its Lease four times a period) to
 * 24 h. */
static int grace_option(const char *value, int64_t *ms, gp_error *err)
{
    int64_t ns;
    gp_error perr = {0};
    if (kube_duration_parse(value, &ns, &perr) != 0) {
        gp_error_set(err, NULL, 0, 0, "--node-monitor-grace-period: %s", perr.text);
        return -1;
    }
    if (ns < 1000000000LL || ns > 24 * 3600 * 1000000000LL) {
        gp_error_set(err, NULL, 0, 0, "--node-monitor-grace-period: '%s' is not between 1s and 24h",
                     value);
        return -1;
    }
    *ms = ns / 1000000;
    return 0;
}

static int label_option(const char *value, gp_error *err)
{
    const char *eq = strchr(value, '=');
    if (!eq) {
        gp_error_set(err, NULL, 0, 0, "--node-label: '%s' is not KEY=VALUE", value);
        return -1;
    }
    char key[320];
    snprintf(key, sizeof key, "%.*s", (int)(eq - value), value);
    if (kube_label_validate_key(key, err) != 0 || kube_label_validate_value(eq + 1, err) != 0)
        return -1;
    return 0;
}

/* "key=value:Effect" or "key:Effect" into a taint object. */
static json_t *parse_taint(const char *text, gp_error *err)
{
    const char *colon = strrchr(text, ':');
    const char *eq = strchr(text, '=');
    if (!colon || (eq && eq > colon)) {
        gp_error_set(err, NULL, 0, 0, "--node-taint: '%s' is not KEY[=VALUE]:EFFECT", text);
        return NULL;
    }
    const char *effect = colon + 1;
    if (strcmp(effect, "NoSchedule") && strcmp(effect, "PreferNoSchedule") &&
        strcmp(effect, "NoExecute")) {
        gp_error_set(err, NULL, 0, 0,
                     "--node-taint: effect '%s' is not NoSchedule, PreferNoSchedule or NoExecute",
                     effect);
        return NULL;
    }
    const char *key_end = eq ? eq : colon;
    char key[320], value[80];
    snprintf(key, sizeof key, "%.*s", (int)(key_end - text), text);
    snprintf(value, sizeof value, "%.*s", eq ? (int)(colon - eq - 1) : 0, eq ? eq + 1 : "");
    if (kube_label_validate_key(key, err) != 0 || kube_label_validate_value(value, err) != 0)
        return NULL;
    json_t *t = json_pack("{s:s}", "key", key);
    if (*value) json_object_set_new(t, "value", json_string(value));
    json_object_set_new(t, "effect", json_string(effect));
    return t;
}

int lab_shape_option(lab_shape *s, int argc, char **argv, gp_error *err)
{
    const char *opt = argv[0], *value = argc > 1 ? argv[1] : NULL;
    if (strcmp(opt, "--lab") == 0) {
        lab_shape_lab(s);
        return 1;
    }
    if (strcmp(opt, "--no-controllers") == 0) {
        s->no_controllers = true;
        return 1;
    }
    if (strcmp(opt, "--kubelet-runtime-check") == 0) {
        s->runtime_check = true;
        return 1;
    }
    if (strcmp(opt, "--node-agents") == 0) {
        s->node_agents = true;
        return 1;
    }
    static const char *const valued[] = {"--nodes",
                                         "--node-cpu",
                                         "--node-memory",
                                         "--node-pods",
                                         "--node-prefix",
                                         "--node-label",
                                         "--node-taint",
                                         "--node-runtime-handlers",
                                         "--namespace",
                                         "--node-monitor-grace-period",
                                         NULL};
    bool known = false;
    for (size_t i = 0; valued[i]; i++)
        known |= strcmp(opt, valued[i]) == 0;
    if (!known) return 0;
    if (!value) {
        gp_error_set(err, NULL, 0, 0, "%s needs a value", opt);
        return -1;
    }
    if (strcmp(opt, "--nodes") == 0) {
        char *end;
        long n = strtol(value, &end, 10);
        if (*end || end == value || n < 0 || n > 100000) {
            gp_error_set(err, NULL, 0, 0, "--nodes takes 0 to 100000");
            return -1;
        }
        s->nodes = (int)n;
    } else if (strcmp(opt, "--node-cpu") == 0) {
        if (quantity_option(opt, value, err) != 0) return -1;
        s->cpu = value;
    } else if (strcmp(opt, "--node-memory") == 0) {
        if (quantity_option(opt, value, err) != 0) return -1;
        s->memory = value;
    } else if (strcmp(opt, "--node-pods") == 0) {
        if (quantity_option(opt, value, err) != 0) return -1;
        s->pods = value;
    } else if (strcmp(opt, "--node-prefix") == 0) {
        s->prefix = value;
    } else if (strcmp(opt, "--node-runtime-handlers") == 0) {
        s->runtime_handlers = value;
    } else if (strcmp(opt, "--node-monitor-grace-period") == 0) {
        if (grace_option(value, &s->node_monitor_grace_ms, err) != 0) return -1;
    } else {
        const char **list = strcmp(opt, "--node-label") == 0   ? s->labels
                            : strcmp(opt, "--node-taint") == 0 ? s->taints
                                                               : s->namespaces;
        size_t *count = list == s->labels   ? &s->label_count
                        : list == s->taints ? &s->taint_count
                                            : &s->namespace_count;
        if (*count == LAB_SHAPE_MAX_ITEMS) {
            gp_error_set(err, NULL, 0, 0, "%s: at most %d", opt, LAB_SHAPE_MAX_ITEMS);
            return -1;
        }
        if (list == s->labels && label_option(value, err) != 0) return -1;
        if (list == s->taints) {
            json_t *t = parse_taint(value, err);
            if (!t) return -1;
            json_decref(t);
        }
        list[(*count)++] = value;
    }
    return 2;
}

static json_t *resource_list(const lab_shape *s)
{
    return json_pack("{s:s, s:s, s:s}", "cpu", s->cpu, "memory", s->memory, "pods", s->pods);
}

static json_t *runtime_handlers(const char *names)
{
    json_t *list = json_array();
    char *copy = strdup(names ? names : "");
    for (char *save = NULL, *n = strtok_r(copy, ",", &save); n; n = strtok_r(NULL, ",", &save))
        json_array_append_new(list, json_pack("{s:s, s:{s:b, s:b}}", "name", n, "features",
                                              "recursiveReadOnlyMounts", 1, "userNamespaces", 0));
    free(copy);
    return list;
}

/* kwokctl's node template (k8s-semantics.md 7.1) with this cluster's sizes;
 * the fake kubelet fills in the conditions once it sees the node. */
json_t *lab_shape_node(const lab_shape *s, int index)
{
    char name[256], cidr[32], ip[32];
    snprintf(name, sizeof name, "%s%d", s->prefix, index);
    snprintf(cidr, sizeof cidr, "10.0.%d.0/24", index % 256);
    snprintf(ip, sizeof ip, "10.89.%d.%d", index / 250, index % 250 + 2);
    json_t *labels =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "beta.kubernetes.io/arch", "amd64",
                  "beta.kubernetes.io/os", "linux", "kubernetes.io/arch", "amd64",
                  "kubernetes.io/hostname", name, "kubernetes.io/os", "linux", "kubernetes.io/role",
                  "agent", "node-role.kubernetes.io/agent", "", "type", "kwok");
    for (size_t i = 0; i < s->label_count; i++) {
        const char *eq = strchr(s->labels[i], '=');
        char key[320];
        snprintf(key, sizeof key, "%.*s", (int)(eq - s->labels[i]), s->labels[i]);
        json_object_set_new(labels, key, json_string(eq + 1));
    }
    json_t *spec = json_pack("{s:s}", "podCIDR", cidr);
    if (s->taint_count) {
        json_t *taints = json_array();
        gp_error err = {0};
        for (size_t i = 0; i < s->taint_count; i++)
            json_array_append_new(taints, parse_taint(s->taints[i], &err));
        json_object_set_new(spec, "taints", taints);
    }
    json_t *status = json_pack(
        "{s:o, s:o, s:[{s:s, s:s}, {s:s, s:s}], s:{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}, "
        "s:o}",
        "capacity", resource_list(s), "allocatable", resource_list(s), "addresses", "type",
        "InternalIP", "address", ip, "type", "Hostname", "address", name, "nodeInfo",
        "architecture", "amd64", "operatingSystem", "linux", "kubeletVersion", "v1.32.0-kwok",
        "kubeProxyVersion", "v1.32.0-kwok", "containerRuntimeVersion", "containerd://1.7.24",
        "kernelVersion", "6.1.0-kwok", "osImage", "Debian GNU/Linux 12 (bookworm)", "machineID", "",
        "runtimeHandlers", runtime_handlers(s->runtime_handlers));
    json_t *node = json_pack("{s:s, s:s, s:{s:s, s:o, s:{s:s, s:s}}, s:o, s:o}", "apiVersion", "v1",
                             "kind", "Node", "metadata", "name", name, "labels", labels,
                             "annotations", "kwok.x-k8s.io/node", "fake",
                             "node.alpha.kubernetes.io/ttl", "0", "spec", spec, "status", status);
    if (node && s->lab)
        json_object_set_new(json_object_get(json_object_get(node, "metadata"), "annotations"),
                            LAB_NODE_ANNOTATION, json_string("true"));
    return node;
}

/* POST unless it exists: 201 and 409 both mean it is there now. */
static int ensure(as_api *api, const char *collection, const char *path, json_t *body,
                  gp_error *err)
{
    as_reply r = as_loopback_call(api, "GET", path, NULL, NULL, NULL);
    unsigned status = r.status;
    as_reply_free(&r);
    if (status == 200) {
        json_decref(body);
        return 0;
    }
    r = as_loopback_call(api, "POST", collection, NULL, NULL, body);
    json_decref(body);
    int rc = 0;
    if (r.status != 201 && r.status != 409) {
        gp_error_set(err, NULL, 0, 0, "cannot create %s: %s", path, as_reply_message(&r));
        rc = -1;
    }
    as_reply_free(&r);
    return rc;
}

int lab_shape_apply(as_api *api, const lab_shape *s, gp_error *err)
{
    char path[512];
    for (size_t i = 0; i < s->namespace_count; i++) {
        snprintf(path, sizeof path, "/api/v1/namespaces/%s", s->namespaces[i]);
        json_t *ns = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                               "metadata", "name", s->namespaces[i]);
        if (ensure(api, "/api/v1/namespaces", path, ns, err) != 0) return -1;
    }
    for (int i = 0; i < s->nodes; i++) {
        snprintf(path, sizeof path, "/api/v1/nodes/%s%d", s->prefix, i);
        if (ensure(api, "/api/v1/nodes", path, lab_shape_node(s, i), err) != 0) return -1;
    }
    return 0;
}
