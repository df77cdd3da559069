/* The fake kubelet over a simulated node (kubelet_runtime_internal.h). */
#include "controllers/kubelet_runtime_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/kubelet_internal.h"
#include "kube/json.h"
#include "kube/time.h"

static void put(bool *ok, json_t *obj, const char *key, json_t *value)
{
    if (json_object_set_new(obj, key, value) != 0) *ok = false;
}

/* ---- the Ready condition ---- */

/* Go's time.Duration String of a whole number of milliseconds: "3m0.5s",
 * "1h2m3s", "450ms". */
static void go_duration(int64_t ms, char *out, size_t cap)
{
    if (ms < 1000) {
        snprintf(out, cap, "%lldms", (long long)ms);
        return;
    }
    long long h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, frac = ms % 1000;
    char secs[32];
    if (frac) {
        snprintf(secs, sizeof secs, "%lld.%03lld", s, frac);
        size_t n = strlen(secs);
        while (secs[n - 1] == '0')
            secs[--n] = '\0';
    } else {
        snprintf(secs, sizeof secs, "%lld", s);
    }
    if (h)
        snprintf(out, cap, "%lldh%lldm%ss", h, m, secs);
    else if (m)
        snprintf(out, cap, "%lldm%ss", m, secs);
    else
        snprintf(out, cap, "%ss", secs);
}

void ctl_kubelet_ready_message(const ctl_node_facts *f, int64_t now_ms, char *out, size_t cap)
{
    char errs[2][512];
    size_t n = 0;
    if (f->runtime_ok_ms == 0)
        snprintf(errs[n++], sizeof errs[0],
                 "container runtime status check may not have completed yet");
    else if (now_ms - f->runtime_ok_ms >= CTL_KUBELET_RUNTIME_THRESHOLD_MS)
        snprintf(errs[n++], sizeof errs[0], "container runtime is down");
    if (f->relist_ok_ms == 0) {
        snprintf(errs[n++], sizeof errs[0], "PLEG is not healthy: pleg has yet to be successful");
    } else if (now_ms - f->relist_ok_ms > CTL_KUBELET_RELIST_THRESHOLD_MS) {
        char elapsed[64], threshold[64];
        go_duration(now_ms - f->relist_ok_ms, elapsed, sizeof elapsed);
        go_duration(CTL_KUBELET_RELIST_THRESHOLD_MS, threshold, sizeof threshold);
        snprintf(errs[n++], sizeof errs[0],
                 "PLEG is not healthy: pleg was last seen active %s ago; threshold is %s", elapsed,
                 threshold);
    }
    if (n == 0)
        snprintf(out, cap, "%s", "");
    else if (n == 1)
        snprintf(out, cap, "%s", errs[0]);
    else
        snprintf(out, cap, "[%s, %s]", errs[0], errs[1]);
}

static json_t *condition(const char *type, const char *status, const char *reason,
                         const char *message, const char *heartbeat, const char *transition)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "lastHeartbeatTime", heartbeat,
                     "lastTransitionTime", transition, "message", message, "reason", reason,
                     "status", status, "type", type);
}

/* The conditions to send, or NULL when they are as they should be (and
 * `heartbeat` is false): *changed says whether Ready's moved. */
static json_t *conditions(const json_t *node, const ctl_node_facts *f, int64_t now_ms,
                          bool heartbeat, bool *ok)
{
    char message[1200], now_s[32];
    ctl_kubelet_ready_message(f, now_ms, message, sizeof message);
    kube_time_format((time_t)(now_ms / 1000), now_s);
    size_t count;
    const ctl_kubelet_condition *kwok = ctl_kubelet_conditions(&count);
    json_t *out = json_array();
    bool differs = heartbeat;
    for (size_t i = 0; *ok && out && i < count; i++) {
        const json_t *have = kube_condition(node, kwok[i].type);
        const char *status = kwok[i].status, *reason = kwok[i].reason, *msg = kwok[i].message;
        if (strcmp(kwok[i].type, "Ready") == 0 && message[0]) {
            status = "False";
            reason = "KubeletNotReady";
            msg = message;
        } else if (strcmp(kwok[i].type, "Ready") != 0 && have) {
            /* the pressure conditions: what the node has (nothing here
             * moves them) */
            status = kube_str(have, "status");
            reason = kube_str(have, "reason");
            msg = kube_str(have, "message");
        }
        bool same = have && kube_str_is(have, "status", status) &&
                    kube_str_is(have, "reason", reason) && kube_str_is(have, "message", msg);
        differs |= !same;
        const char *since = have && kube_str_is(have, "status", status)
                                ? kube_str(have, "lastTransitionTime")
                                : now_s;
        if (json_array_append_new(out, condition(kwok[i].type, status, reason, msg, now_s,
                                                 since[0] ? since : now_s)) != 0)
            *ok = false;
    }
    if (!out) *ok = false;
    if (*ok && differs) return out;
    json_decref(out);
    return NULL;
}

/* ---- the rest of the status ---- */

static json_t *handlers(const ctl_node_facts *f)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < f->handler_count; i++)
        json_array_append_new(list,
                              json_pack("{s:s, s:{s:b, s:b}}", "name", f->handlers[i], "features",
                                        "recursiveReadOnlyMounts", 0, "userNamespaces", 0));
    return list;
}

static void node_info(json_t *st, const json_t *node, const ctl_node_facts *f, bool *ok)
{
    const json_t *info = json_object_get(kube_obj(node, "status"), "nodeInfo");
    static const char *const keys[] = {"containerRuntimeVersion", "kernelVersion", "bootID"};
    const char *want[] = {f->runtime_version, f->kernel_version, f->boot_id};
    json_t *patch = NULL;
    for (size_t i = 0; i < 3; i++) {
        if (!want[i][0] || kube_str_is(info, keys[i], want[i])) continue;
        if (!patch) patch = json_object();
        if (patch) json_object_set_new(patch, keys[i], json_string(want[i]));
    }
    if (patch) put(ok, st, "nodeInfo", patch);
}

static void resources(json_t *st, const json_t *node, const ctl_node_facts *f, bool *ok)
{
    const json_t *status = kube_obj(node, "status");
    json_t *cap = NULL, *alloc = NULL;
    for (size_t i = 0; i < f->resource_count; i++) {
        const ctl_node_resource *r = &f->resources[i];
        char c[32], a[32];
        snprintf(c, sizeof c, "%lld", r->capacity);
        snprintf(a, sizeof a, "%lld", r->allocatable);
        if (!kube_str_is(json_object_get(status, "capacity"), r->name, c)) {
            if (!cap) cap = json_object();
            if (cap) json_object_set_new(cap, r->name, json_string(c));
        }
        if (!kube_str_is(json_object_get(status, "allocatable"), r->name, a)) {
            if (!alloc) alloc = json_object();
            if (alloc) json_object_set_new(alloc, r->name, json_string(a));
        }
    }
    if (cap) put(ok, st, "capacity", cap);
    if (alloc) put(ok, st, "allocatable", alloc);
}

json_t *ctl_kubelet_runtime_node_status(const json_t *node, const ctl_node_facts *f, const char *ip,
                                        int64_t now_ms, bool heartbeat)
{
    if (!ctl_kubelet_manages(node)) return NULL;
    bool ok = true;
    json_t *st = NULL;
    if (!kube_condition(node, "Ready")) {
        /* the kubelet's first status: node-initialize's, its conditions
         * replaced below */
        json_t *init = ctl_kubelet_node_init(node, ip, (time_t)(now_ms / 1000));
        st = init ? json_incref(json_object_get(init, "status")) : NULL;
        json_decref(init);
        heartbeat = true;
    } else {
        st = json_object();
    }
    if (!st) return NULL;
    json_t *conds = conditions(node, f, now_ms, heartbeat, &ok);
    if (conds) put(&ok, st, "conditions", conds);
    node_info(st, node, f, &ok);
    const json_t *have = json_object_get(kube_obj(node, "status"), "runtimeHandlers");
    json_t *want = f->reports_handlers ? handlers(f) : NULL;
    if (f->reports_handlers && !want) ok = false;
    if (want && !json_equal(want, have))
        put(&ok, st, "runtimeHandlers", json_incref(want));
    else if (!f->reports_handlers && have)
        put(&ok, st, "runtimeHandlers", json_null());
    json_decref(want);
    resources(st, node, f, &ok);
    if (!ok || json_object_size(st) == 0) {
        json_decref(st);
        return NULL;
    }
    json_t *patch = json_pack("{s:o}", "status", st);
    return patch;
}

json_t *ctl_kubelet_runtime_labels(const json_t *node, const ctl_node_facts *f)
{
    const json_t *labels = json_object_get(kube_obj(node, "metadata"), "labels");
    json_t *set = NULL;
    for (size_t i = 0; i < f->label_count; i++) {
        const ctl_node_label *l = &f->labels[i];
        const json_t *have = json_object_get(labels, l->key);
        bool same = l->present ? kube_str_is(labels, l->key, l->value) : !have;
        if (same) continue;
        if (!set) set = json_object();
        if (!set) return NULL;
        json_object_set_new(set, l->key, l->present ? json_string(l->value) : json_null());
    }
    return set ? json_pack("{s:{s:o}}", "metadata", "labels", set) : NULL;
}
