/* The node lifecycle controller's decisions (node_lifecycle_internal.h):
 * tryUpdateNodeHealth, processTaintBaseEviction, handleDisruption,
 * doNoScheduleTaintingPass and doNoExecuteTaintingPass of
 * pkg/controller/nodelifecycle/node_lifecycle_controller.go, the zone queues
 * of scheduler/rate_limited_queue.go, and SwapNodeControllerTaint,
 * MarkPodsNotReady of pkg/controller/util/node/controller_utils.go. */
#include "controllers/node_lifecycle_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/lru_internal.h"
#include "controllers/rate_limit_internal.h"
#include "kube/json.h"
#include "kube/time.h"

#define TAINT_UNSCHEDULABLE     "node.kubernetes.io/unschedulable"
#define LABEL_EXCLUDE_DISRUPTED "node.kubernetes.io/exclude-disruption"

/* nodeConditionToTaintKeyStatusMap */
static const struct {
    const char *type, *status, *taint;
} CONDITION_TAINTS[] = {
    {"Ready", "False", CTL_TAINT_NOT_READY},
    {"Ready", "Unknown", CTL_TAINT_UNREACHABLE},
    {"MemoryPressure", "True", "node.kubernetes.io/memory-pressure"},
    {"DiskPressure", "True", "node.kubernetes.io/disk-pressure"},
    {"NetworkUnavailable", "True", "node.kubernetes.io/network-unavailable"},
    {"PIDPressure", "True", "node.kubernetes.io/pid-pressure"},
};

/* The conditions a silent kubelet's node gets as Unknown; NetworkUnavailable
 * is the route controller's. */
static const char *const KUBELET_CONDITIONS[] = {"Ready", "MemoryPressure", "DiskPressure",
                                                 "PIDPressure"};

typedef enum zone_state { ZONE_INITIAL, ZONE_NORMAL, ZONE_PARTIAL, ZONE_FULL } zone_state;

/* nodeHealthData: what the controller saw of a node and when. */
typedef struct health {
    bool has_ready; /* the saved status had a Ready condition */
    char heartbeat[48], transition[48];
    bool has_lease;
    char lease[48];
    int64_t probe_ms, ready_transition_ms;
    bool known; /* knownNodeSet */
    unsigned long long round;
} health;

/* A RateLimitedTimedQueue entry. */
typedef struct queued {
    char *name;
    int64_t process_at, added_at;
} queued;

typedef struct zone {
    char key[256];
    zone_state state;
    bool in_states; /* zoneStates has it */
    ctl_token_bucket limiter;
    queued *items; /* by process_at, then by arrival */
    size_t count, cap;
    ctl_lru *set; /* UniqueQueue.set: queued, or processed and not Removed */
} zone;

struct ctl_nlc {
    int64_t grace_ms;
    ctl_lru *health;
    zone *zones;
    size_t zone_count, zone_cap;
    unsigned long long round;
};

/* ---- small readers ---- */

static const char *node_name(const json_t *node)
{
    return kube_str_or_null(kube_obj(node, "metadata"), "name");
}

static int64_t parse_ms(const char *text)
{
    kube_time t;
    if (!kube_time_parse(text, &t)) return 0;
    return t.sec * 1000 + t.nsec / 1000000;
}

static void format_ms(int64_t ms, char buf[KUBE_TIME_TEXT_MAX])
{
    kube_time_format(ms / 1000, buf);
}

static bool taint_is(const json_t *t, const char *key, const char *effect)
{
    return kube_str_is(t, "key", key) && kube_str_is(t, "effect", effect);
}

/* TaintExists: a taint of that key and effect. */
static bool has_taint(const json_t *taints, const char *key, const char *effect)
{
    size_t i;
    const json_t *t;
    json_array_foreach(taints, i, t) if (taint_is(t, key, effect)) return true;
    return false;
}

static const json_t *node_taints(const json_t *node)
{
    return json_object_get(kube_obj(node, "spec"), "taints");
}

static json_t *taint(const char *key, const char *effect, const char *time_added)
{
    json_t *t = json_pack("{s:s, s:s}", "key", key, "effect", effect);
    if (t && time_added) json_object_set_new(t, "timeAdded", json_string(time_added));
    return t;
}

static void copy_text(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

/* ---- the state ---- */

static void free_zone(zone *z)
{
    for (size_t i = 0; i < z->count; i++)
        free(z->items[i].name);
    free(z->items);
    ctl_lru_free(z->set);
}

ctl_nlc *ctl_nlc_new(int64_t grace_ms, int64_t now_ms)
{
    (void)now_ms;
    ctl_nlc *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->grace_ms = grace_ms > 0 ? grace_ms : CTL_NLC_GRACE_MS;
    c->health = ctl_lru_new(0, free);
    if (!c->health) {
        free(c);
        return NULL;
    }
    return c;
}

void ctl_nlc_free(ctl_nlc *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->zone_count; i++)
        free_zone(&c->zones[i]);
    free(c->zones);
    ctl_lru_free(c->health);
    free(c);
}

int64_t ctl_nlc_monitor_period_ms(const ctl_nlc *c)
{
    int64_t quarter = c->grace_ms / 4;
    int64_t p = quarter < CTL_NLC_MONITOR_PERIOD_MS ? quarter : CTL_NLC_MONITOR_PERIOD_MS;
    return p < 250 ? 250 : p;
}

void ctl_nlc_zone_key(const json_t *node, char *buf, size_t size)
{
    const json_t *labels = json_object_get(kube_obj(node, "metadata"), "labels");
    const char *region = kube_str_or_null(labels, "topology.kubernetes.io/region");
    if (!region) region = kube_str_or_null(labels, "failure-domain.beta.kubernetes.io/region");
    const char *z = kube_str_or_null(labels, "topology.kubernetes.io/zone");
    if (!z) z = kube_str_or_null(labels, "failure-domain.beta.kubernetes.io/zone");
    if ((!region || !*region) && (!z || !*z)) {
        if (size) buf[0] = '\0';
        return;
    }
    snprintf(buf, size, "%s:\x1f:%s", region ? region : "", z ? z : "");
}

/* ---- RateLimitedTimedQueue ---- */

static zone *find_zone(ctl_nlc *c, const char *key)
{
    for (size_t i = 0; i < c->zone_count; i++)
        if (strcmp(c->zones[i].key, key) == 0) return &c->zones[i];
    return NULL;
}

/* addPodEvictorForNewZone: a zone not in zoneStates gets state Initial and
 * a new queue with a full limiter. */
static zone *zone_for(ctl_nlc *c, const char *key, int64_t now_ms)
{
    zone *z = find_zone(c, key);
    if (z && z->in_states) return z;
    if (!z) {
        if (c->zone_count == c->zone_cap) {
            size_t cap = c->zone_cap ? c->zone_cap * 2 : 4;
            zone *grown = realloc(c->zones, cap * sizeof *grown);
            if (!grown) return NULL;
            c->zones = grown;
            c->zone_cap = cap;
        }
        z = &c->zones[c->zone_count++];
        memset(z, 0, sizeof *z);
        copy_text(z->key, sizeof z->key, key);
    } else {
        free_zone(z);
        char saved[256];
        copy_text(saved, sizeof saved, z->key);
        memset(z, 0, sizeof *z);
        copy_text(z->key, sizeof z->key, saved);
    }
    z->set = ctl_lru_new(0, NULL);
    if (!z->set) {
        c->zone_count--;
        return NULL;
    }
    z->state = ZONE_INITIAL;
    z->in_states = true;
    ctl_tb_init(&z->limiter, CTL_NLC_EVICTION_QPS, CTL_NLC_EVICTION_BURST, now_ms);
    return z;
}

static void queue_insert(zone *z, queued item)
{
    if (z->count == z->cap) {
        size_t cap = z->cap ? z->cap * 2 : 8;
        queued *grown = realloc(z->items, cap * sizeof *grown);
        if (!grown) {
            free(item.name);
            return;
        }
        z->items = grown;
        z->cap = cap;
    }
    size_t at = z->count;
    while (at > 0 && z->items[at - 1].process_at > item.process_at)
        at--;
    memmove(&z->items[at + 1], &z->items[at], (z->count - at) * sizeof *z->items);
    z->items[at] = item;
    z->count++;
}

/* The queue entry of `name` taken out (its name released); false when none. */
static bool queue_take(zone *z, const char *name)
{
    for (size_t i = 0; i < z->count; i++) {
        if (strcmp(z->items[i].name, name) != 0) continue;
        free(z->items[i].name);
        memmove(&z->items[i], &z->items[i + 1], (z->count - i - 1) * sizeof *z->items);
        z->count--;
        return true;
    }
    return false;
}

/* UniqueQueue.Add: false when the name is in the set already. */
static bool queue_add(zone *z, const char *name, int64_t now_ms)
{
    if (!z || ctl_lru_peek(z->set, name)) return false;
    char *copy = strdup(name);
    if (!copy || ctl_lru_put(z->set, name, (void *)1) != 0) {
        free(copy);
        return false;
    }
    queue_insert(z, (queued){copy, now_ms, now_ms});
    return true;
}

/* UniqueQueue.Remove: out of the queue and the set. */
static void queue_remove(zone *z, const char *name)
{
    if (!z || !ctl_lru_remove(z->set, name)) return;
    queue_take(z, name);
}

/* SwapLimiter: a new bucket for a new rate; when the old one was empty,
 * the new one starts empty too. */
static void swap_limiter(zone *z, double qps, int64_t now_ms)
{
    if (z->limiter.qps == qps) return;
    bool saturated = ctl_tb_tokens(&z->limiter, now_ms) < 1;
    ctl_tb_init(&z->limiter, qps, CTL_NLC_EVICTION_BURST, now_ms);
    if (saturated) ctl_tb_try(&z->limiter, now_ms);
}

/* ---- actions ---- */

static void push_taints(json_t *actions, const char *node, json_t *add, json_t *remove)
{
    if (json_array_size(add) == 0 && json_array_size(remove) == 0) {
        json_decref(add);
        json_decref(remove);
        return;
    }
    json_array_append_new(actions, json_pack("{s:s, s:s, s:o, s:o}", "op", "taints", "node", node,
                                             "add", add ? add : json_array(), "remove",
                                             remove ? remove : json_array()));
}

/* SwapNodeControllerTaint(add key, remove key), NoExecute. */
static void swap_taint(json_t *actions, const char *node, const char *add_key,
                       const char *remove_key, int64_t now_ms)
{
    char now[KUBE_TIME_TEXT_MAX];
    format_ms(now_ms, now);
    push_taints(actions, node, json_pack("[o]", taint(add_key, "NoExecute", now)),
                json_pack("[o]", taint(remove_key, "NoExecute", NULL)));
}

/* markNodeAsReachable: neither NoExecute taint of this controller, and out
 * of its zone's queue. */
static void mark_reachable(ctl_nlc *c, const json_t *node, json_t *actions)
{
    const char *name = node_name(node);
    json_t *remove = json_array();
    const char *keys[] = {CTL_TAINT_UNREACHABLE, CTL_TAINT_NOT_READY};
    for (size_t i = 0; i < 2; i++)
        if (has_taint(node_taints(node), keys[i], "NoExecute"))
            json_array_append_new(remove, taint(keys[i], "NoExecute", NULL));
    push_taints(actions, name, json_array(), remove);
    char key[256];
    ctl_nlc_zone_key(node, key, sizeof key);
    queue_remove(find_zone(c, key), name);
}

/* ---- doNoScheduleTaintingPass ---- */

static bool condition_taint_key(const char *key)
{
    if (strcmp(key, TAINT_UNSCHEDULABLE) == 0) return true;
    for (size_t i = 0; i < sizeof CONDITION_TAINTS / sizeof *CONDITION_TAINTS; i++)
        if (strcmp(CONDITION_TAINTS[i].taint, key) == 0) return true;
    return false;
}

bool ctl_nlc_noschedule_diff(const json_t *node, int64_t now_ms, json_t **add, json_t **remove)
{
    *add = *remove = NULL;
    json_t *want = json_array();
    if (!want) return false;
    size_t i;
    const json_t *cond;
    json_array_foreach(json_object_get(kube_obj(node, "status"), "conditions"), i, cond)
    {
        for (size_t k = 0; k < sizeof CONDITION_TAINTS / sizeof *CONDITION_TAINTS; k++)
            if (kube_str_is(cond, "type", CONDITION_TAINTS[k].type) &&
                kube_str_is(cond, "status", CONDITION_TAINTS[k].status))
                json_array_append_new(want, taint(CONDITION_TAINTS[k].taint, "NoSchedule", NULL));
    }
    if (json_is_true(json_object_get(kube_obj(node, "spec"), "unschedulable")))
        json_array_append_new(want, taint(TAINT_UNSCHEDULABLE, "NoSchedule", NULL));

    char now[KUBE_TIME_TEXT_MAX];
    format_ms(now_ms, now);
    json_t *to_add = json_array(), *to_remove = json_array();
    const json_t *t;
    json_array_foreach(want, i, t)
    {
        const char *key = kube_str(t, "key");
        if (!has_taint(node_taints(node), key, "NoSchedule"))
            json_array_append_new(to_add, taint(key, "NoSchedule", now));
    }
    json_array_foreach(node_taints(node), i, t)
    {
        const char *key = kube_str(t, "key");
        if (kube_str_is(t, "effect", "NoSchedule") && condition_taint_key(key) &&
            !has_taint(want, key, "NoSchedule"))
            json_array_append_new(to_remove, taint(key, "NoSchedule", NULL));
    }
    json_decref(want);
    if (json_array_size(to_add) == 0 && json_array_size(to_remove) == 0) {
        json_decref(to_add);
        json_decref(to_remove);
        return false;
    }
    *add = to_add;
    *remove = to_remove;
    return true;
}

json_t *ctl_nlc_apply_taints(const json_t *taints, const json_t *add, const json_t *remove)
{
    json_t *out = json_is_array(taints) ? json_deep_copy(taints) : json_array();
    if (!out) return NULL;
    size_t i, k;
    const json_t *a;
    json_array_foreach(add, i, a)
    {
        bool placed = false;
        json_t *t;
        json_array_foreach(out, k, t)
        {
            if (!taint_is(t, kube_str(a, "key"), kube_str(a, "effect"))) continue;
            if (!json_equal(t, a)) json_array_set_new(out, k, json_deep_copy(a));
            placed = true;
            break;
        }
        if (!placed) json_array_append_new(out, json_deep_copy(a));
    }
    const json_t *r;
    json_array_foreach(remove, i, r)
    {
        for (k = json_array_size(out); k-- > 0;)
            if (taint_is(json_array_get(out, k), kube_str(r, "key"), kube_str(r, "effect")))
                json_array_remove(out, k);
    }
    return out;
}

/* ---- tryUpdateNodeHealth ---- */

typedef enum ready { READY_NONE, READY_TRUE, READY_FALSE, READY_UNKNOWN } ready;

static ready ready_of(const json_t *cond)
{
    if (!cond) return READY_NONE;
    if (kube_str_is(cond, "status", "True")) return READY_TRUE;
    if (kube_str_is(cond, "status", "False")) return READY_FALSE;
    return READY_UNKNOWN;
}

static void save_ready(health *h, const json_t *cond)
{
    h->has_ready = cond != NULL;
    copy_text(h->heartbeat, sizeof h->heartbeat, kube_str_or_null(cond, "lastHeartbeatTime"));
    copy_text(h->transition, sizeof h->transition, kube_str_or_null(cond, "lastTransitionTime"));
}

static void fresh_health(health *h, const json_t *cond, int64_t probe_ms, int64_t transition_ms)
{
    bool known = h->known;
    unsigned long long round = h->round;
    memset(h, 0, sizeof *h);
    h->known = known;
    h->round = round;
    save_ready(h, cond);
    h->probe_ms = probe_ms;
    h->ready_transition_ms = transition_ms;
}

/* The strategic merge patch of nodes/N/status that makes the kubelet's
 * conditions Unknown, or NULL when Ready is Unknown already (the real
 * controller writes only when the Ready condition changes). */
static json_t *silent_patch(const json_t *node, int64_t now_ms)
{
    const json_t *ready_cond = kube_condition(node, "Ready");
    if (ready_cond && kube_str_is(ready_cond, "status", "Unknown")) return NULL;
    char now[KUBE_TIME_TEXT_MAX];
    format_ms(now_ms, now);
    const char *created = kube_str_or_null(kube_obj(node, "metadata"), "creationTimestamp");
    json_t *conds = json_array();
    for (size_t i = 0; conds && i < sizeof KUBELET_CONDITIONS / sizeof *KUBELET_CONDITIONS; i++) {
        const char *type = KUBELET_CONDITIONS[i];
        const json_t *have = kube_condition(node, type);
        if (have && kube_str_is(have, "status", "Unknown")) continue;
        json_t *c =
            have ? json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type, "status", "Unknown",
                             "reason", "NodeStatusUnknown", "message",
                             "Kubelet stopped posting node status.", "lastTransitionTime", now)
                 : json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type, "status", "Unknown",
                             "reason", "NodeStatusNeverUpdated", "message",
                             "Kubelet never posted node status.", "lastTransitionTime", now);
        if (c && !have && created && *created)
            json_object_set_new(c, "lastHeartbeatTime", json_string(created));
        json_array_append_new(conds, c);
    }
    return json_pack("{s:{s:s}, s:{s:o}}", "metadata", "resourceVersion",
                     kube_str(kube_obj(node, "metadata"), "resourceVersion"), "status",
                     "conditions", conds);
}

/* One node's health at now_ms: what its Ready status was seen as (the
 * observed one) and is once this round's write lands (current). */
static void update_health(ctl_nlc *c, health *h, bool is_new, const json_t *node,
                          const char *lease_renew, int64_t now_ms, json_t *actions, ready *observed,
                          ready *current)
{
    const json_t *cond = kube_condition(node, "Ready");
    int64_t grace = c->grace_ms;
    if (!cond) {
        /* the kubelet never posted: a fake Unknown condition as of the
         * node's creation, and the startup grace period */
        *observed = READY_UNKNOWN;
        grace = CTL_NLC_STARTUP_GRACE_MS;
        if (is_new) {
            int64_t created =
                parse_ms(kube_str_or_null(kube_obj(node, "metadata"), "creationTimestamp"));
            fresh_health(h, NULL, created, created);
        } else {
            save_ready(h, NULL);
        }
    } else {
        *observed = ready_of(cond);
        if (is_new || !h->has_ready) {
            fresh_health(h, cond, now_ms, now_ms);
        } else if (strcmp(h->heartbeat, kube_str(cond, "lastHeartbeatTime")) != 0) {
            /* a heartbeat: the transition time moves only when Ready changed */
            int64_t transition = strcmp(h->transition, kube_str(cond, "lastTransitionTime")) != 0
                                     ? now_ms
                                     : h->ready_transition_ms;
            fresh_health(h, cond, now_ms, transition);
        }
    }
    /* Always update the probe time if the node lease is renewed. */
    if (lease_renew && (!h->has_lease || strcmp(h->lease, lease_renew) < 0)) {
        h->has_lease = true;
        copy_text(h->lease, sizeof h->lease, lease_renew);
        h->probe_ms = now_ms;
    }
    *current = ready_of(cond);
    if (now_ms <= h->probe_ms + grace) return;
    json_t *patch = silent_patch(node, now_ms);
    if (!patch) return;
    json_array_append_new(actions,
                          json_pack("{s:s, s:s, s:s, s:o}", "op", "status", "node", node_name(node),
                                    "resourceVersion",
                                    kube_str(kube_obj(node, "metadata"), "resourceVersion"),
                                    "patch", patch));
    *current = READY_UNKNOWN;
    char now[KUBE_TIME_TEXT_MAX];
    format_ms(now_ms, now);
    h->has_ready = true;
    if (!cond) {
        copy_text(h->heartbeat, sizeof h->heartbeat,
                  kube_str_or_null(kube_obj(node, "metadata"), "creationTimestamp"));
    }
    copy_text(h->transition, sizeof h->transition, now);
    h->ready_transition_ms = now_ms;
}

/* ---- processTaintBaseEviction ---- */

static void taint_base_eviction(ctl_nlc *c, const json_t *node, ready observed, int64_t now_ms,
                                json_t *actions)
{
    const char *name = node_name(node);
    const json_t *taints = node_taints(node);
    char key[256];
    ctl_nlc_zone_key(node, key, sizeof key);
    zone *z = find_zone(c, key);
    if (observed == READY_FALSE || observed == READY_UNKNOWN) {
        const char *want = observed == READY_FALSE ? CTL_TAINT_NOT_READY : CTL_TAINT_UNREACHABLE;
        const char *other = observed == READY_FALSE ? CTL_TAINT_UNREACHABLE : CTL_TAINT_NOT_READY;
        if (has_taint(taints, other, "NoExecute")) {
            swap_taint(actions, name, want, other, now_ms);
            return;
        }
        /* markNodeForTainting */
        if (!has_taint(taints, want, "NoExecute")) queue_remove(z, name);
        queue_add(z, name, now_ms);
        return;
    }
    if (observed == READY_TRUE) mark_reachable(c, node, actions);
}

/* ---- handleDisruption ---- */

typedef struct zone_tally {
    char key[256];
    size_t ready, not_ready;
} zone_tally;

static zone_state compute_zone_state(const zone_tally *t)
{
    if (t->ready == 0 && t->not_ready > 0) return ZONE_FULL;
    if (t->not_ready > 2 &&
        (double)t->not_ready / (double)(t->not_ready + t->ready) >= CTL_NLC_UNHEALTHY_ZONE)
        return ZONE_PARTIAL;
    return ZONE_NORMAL;
}

static void set_limiter(zone *z, size_t size, zone_state state, int64_t now_ms)
{
    switch (state) {
    case ZONE_NORMAL:
    case ZONE_FULL: /* HealthyQPSFunc */
        swap_limiter(z, CTL_NLC_EVICTION_QPS, now_ms);
        break;
    case ZONE_PARTIAL: /* ReducedQPSFunc */
        swap_limiter(z, size > CTL_NLC_LARGE_CLUSTER ? CTL_NLC_SECONDARY_QPS : 0, now_ms);
        break;
    case ZONE_INITIAL:
        break;
    }
}

static const zone_tally *tally_of(const zone_tally *t, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].key, key) == 0) return &t[i];
    return NULL;
}

static void handle_disruption(ctl_nlc *c, const zone_tally *tallies, size_t tally_count,
                              const ctl_nlc_node *nodes, size_t n, int64_t now_ms, json_t *actions)
{
    bool all_are_full = true;
    for (size_t i = 0; i < tally_count; i++)
        if (compute_zone_state(&tallies[i]) != ZONE_FULL) all_are_full = false;
    bool all_were_full = true;
    for (size_t i = 0; i < c->zone_count; i++) {
        zone *z = &c->zones[i];
        if (!z->in_states) continue;
        if (!tally_of(tallies, tally_count, z->key)) {
            z->in_states = false; /* no node of it was counted: out of zoneStates */
            continue;
        }
        if (z->state != ZONE_FULL) all_were_full = false;
    }
    if (all_are_full && all_were_full) return;
    if (all_are_full) {
        /* every node is not Ready: the control plane is more likely cut off
         * than the nodes gone, so no NoExecute taints, no evictions */
        for (size_t i = 0; i < n; i++)
            mark_reachable(c, nodes[i].node, actions);
        for (size_t i = 0; i < c->zone_count; i++) {
            if (!c->zones[i].in_states) continue;
            swap_limiter(&c->zones[i], 0, now_ms);
            c->zones[i].state = ZONE_FULL;
        }
        return;
    }
    if (all_were_full) {
        /* leaving it: every node gets its grace period again */
        for (size_t i = 0; i < n; i++) {
            health *h = ctl_lru_peek(c->health, node_name(nodes[i].node));
            if (h) h->probe_ms = h->ready_transition_ms = now_ms;
        }
    }
    for (size_t i = 0; i < c->zone_count; i++) {
        zone *z = &c->zones[i];
        const zone_tally *t = z->in_states ? tally_of(tallies, tally_count, z->key) : NULL;
        if (!t) continue;
        zone_state s = compute_zone_state(t);
        if (!all_were_full && z->state == s) continue;
        set_limiter(z, t->ready + t->not_ready, s, now_ms);
        z->state = s;
    }
}

/* ---- monitorNodeHealth ---- */

static bool forget_unseen(void *ud, const char *key, void *value)
{
    (void)key;
    const ctl_nlc *c = ud;
    const health *h = value;
    return h->round == c->round;
}

static void tally(zone_tally **tallies, size_t *count, const char *key, ready current)
{
    zone_tally *t = NULL;
    for (size_t i = 0; i < *count && !t; i++)
        if (strcmp((*tallies)[i].key, key) == 0) t = &(*tallies)[i];
    if (!t) {
        zone_tally *grown = realloc(*tallies, (*count + 1) * sizeof *grown);
        if (!grown) return;
        *tallies = grown;
        t = &grown[(*count)++];
        memset(t, 0, sizeof *t);
        copy_text(t->key, sizeof t->key, key);
    }
    if (current == READY_TRUE)
        t->ready++;
    else
        t->not_ready++;
}

void ctl_nlc_monitor(ctl_nlc *c, const ctl_nlc_node *nodes, size_t n, int64_t now_ms,
                     json_t *actions)
{
    c->round++;
    zone_tally *tallies = NULL;
    size_t tally_count = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *node = nodes[i].node;
        const char *name = node_name(node);
        if (!name) continue;
        char key[256];
        ctl_nlc_zone_key(node, key, sizeof key);
        health *h = ctl_lru_peek(c->health, name);
        bool is_new = h == NULL;
        if (!h) {
            h = calloc(1, sizeof *h);
            if (!h || ctl_lru_put(c->health, name, h) != 0) continue;
        }
        h->round = c->round;
        zone_for(c, key, now_ms);
        if (!h->known) {
            /* classifyNodes: a node seen for the first time */
            h->known = true;
            mark_reachable(c, node, actions);
        }
        ready observed, current;
        update_health(c, h, is_new, node, nodes[i].lease_renew, now_ms, actions, &observed,
                      &current);
        const json_t *labels = json_object_get(kube_obj(node, "metadata"), "labels");
        if (!json_object_get(labels, LABEL_EXCLUDE_DISRUPTED))
            tally(&tallies, &tally_count, key, current);
        if (current == READY_NONE) continue;
        taint_base_eviction(c, node, observed, now_ms, actions);
        if (current != READY_TRUE && observed == READY_TRUE) {
            char message[400];
            snprintf(message, sizeof message, "Node %s status is now: NodeNotReady", name);
            json_array_append_new(
                actions, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "op", "event", "node", name,
                                   "uid", kube_str(kube_obj(node, "metadata"), "uid"), "type",
                                   "Normal", "reason", "NodeNotReady", "message", message));
        }
        if (current != READY_TRUE)
            json_array_append_new(actions,
                                  json_pack("{s:s, s:s}", "op", "pods-not-ready", "node", name));
    }
    ctl_lru_sweep(c->health, forget_unseen, c);
    handle_disruption(c, tallies, tally_count, nodes, n, now_ms, actions);
    free(tallies);
}

/* ---- doNoExecuteTaintingPass ---- */

/* The queue's head, tried again CTL_NLC_RETRY_MS from now (Replace). */
static void retry_head(zone *z, int64_t now_ms)
{
    queued head = z->items[0];
    head.name = strdup(head.name);
    queue_take(z, z->items[0].name);
    if (!head.name) return;
    head.process_at = now_ms + CTL_NLC_RETRY_MS;
    queue_insert(z, head);
}

void ctl_nlc_noexecute_pass(ctl_nlc *c, ctl_nlc_lookup_fn *lookup, void *ud, int64_t now_ms,
                            json_t *actions)
{
    for (size_t zi = 0; zi < c->zone_count; zi++) {
        zone *z = &c->zones[zi];
        while (z->count > 0) {
            queued head = z->items[0];
            bool busy = false;
            const json_t *node = lookup(ud, head.name, &busy);
            if (busy) {
                /* our own write of it is on its way (the real controller's
                 * taint call would still be running): no token is spent */
                retry_head(z, now_ms);
                break;
            }
            if (!ctl_tb_try(&z->limiter, now_ms)) break;
            if (now_ms < head.process_at) break;
            const json_t *cond = node ? kube_condition(node, "Ready") : NULL;
            if (node && !cond) {
                /* try again later */
                retry_head(z, now_ms);
                continue;
            }
            if (node) {
                ready r = ready_of(cond);
                if (r == READY_FALSE)
                    swap_taint(actions, head.name, CTL_TAINT_NOT_READY, CTL_TAINT_UNREACHABLE,
                               now_ms);
                else if (r == READY_UNKNOWN)
                    swap_taint(actions, head.name, CTL_TAINT_UNREACHABLE, CTL_TAINT_NOT_READY,
                               now_ms);
            }
            /* RemoveFromQueue: done, but kept in the set */
            queue_take(z, head.name);
        }
    }
}

bool ctl_nlc_noexecute_pending(const ctl_nlc *c)
{
    for (size_t i = 0; i < c->zone_count; i++)
        if (c->zones[i].count > 0) return true;
    return false;
}

/* ---- MarkPodsNotReady ---- */

json_t *ctl_nlc_pod_not_ready_patch(const json_t *pod, int64_t now_ms)
{
    const json_t *conds = json_object_get(kube_obj(pod, "status"), "conditions");
    const json_t *ready_cond = kube_find(conds, "type", "Ready");
    if (!ready_cond || kube_str_is(ready_cond, "status", "False")) return NULL;
    char now[KUBE_TIME_TEXT_MAX];
    format_ms(now_ms, now);
    return json_pack("{s:{s:s}, s:{s:[{s:s, s:s, s:s}]}}", "metadata", "resourceVersion",
                     kube_str(kube_obj(pod, "metadata"), "resourceVersion"), "status", "conditions",
                     "type", "Ready", "status", "False", "lastTransitionTime", now);
}
