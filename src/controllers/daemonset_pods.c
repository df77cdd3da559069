/* Pods as the DaemonSet controller reads them (readiness, age order, target
 * node), claiming them (ControllerRefManager), and the revision hash. */
#include "controllers/daemonset_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/time.h"

/* ---- hash ---- */

void ctl_ds_hash(const json_t *template_, long long collision_count, char out[16])
{
    static const char alphanums[] = "bcdfghjklmnpqrstvwxz2456789";
    out[0] = '\0';
    char *text = json_dumps(template_, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!text) return;
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 16777619u;
    free(text);
    if (collision_count >= 0) {
        /* Go writes an 8-byte buffer of which PutUint32 fills the first 4. */
        uint32_t cc = (uint32_t)collision_count;
        for (int i = 0; i < 8; i++)
            h = (h ^ (i < 4 ? (cc >> (8 * i)) & 0xff : 0)) * 16777619u;
    }
    char digits[16];
    snprintf(digits, sizeof digits, "%u", (unsigned)h);
    size_t i = 0;
    for (; digits[i]; i++)
        out[i] = alphanums[(unsigned char)digits[i] % (sizeof alphanums - 1)];
    out[i] = '\0';
}

/* ---- pods ---- */

const char *ctl_ds_pod_label(const json_t *pod, const char *key)
{
    return kube_str_or_null(kube_obj(kube_obj(pod, "metadata"), "labels"), key);
}

bool ctl_ds_pod_updated(const ctl_ds_ctx *c, const json_t *pod)
{
    const char *hash = ctl_ds_pod_label(pod, CTL_DS_HASH_LABEL);
    if (c->hash && *c->hash && hash && !strcmp(hash, c->hash)) return true;
    if (!c->has_template_generation) return false;
    char want[32];
    snprintf(want, sizeof want, "%lld", c->template_generation);
    return ctl_ds_streq(ctl_ds_pod_label(pod, CTL_DS_GENERATION_LABEL), want);
}

/* A creationTimestamp that does not parse reads as Go's zero time, which is
 * before every other. */
static long long created_at(const json_t *pod)
{
    time_t t;
    if (kube_time_parse_seconds(kube_str_or_null(kube_obj(pod, "metadata"), "creationTimestamp"),
                                &t) != 0)
        return INT64_MIN;
    return (long long)t;
}

static int pod_order(const void *pa, const void *pb)
{
    const json_t *a = *(const json_t *const *)pa, *b = *(const json_t *const *)pb;
    bool sa = *kube_str(kube_obj(a, "spec"), "nodeName") != '\0';
    bool sb = *kube_str(kube_obj(b, "spec"), "nodeName") != '\0';
    if (sa != sb) return sa ? -1 : 1;
    long long ta = created_at(a), tb = created_at(b);
    if (ta != tb) return ta < tb ? -1 : 1;
    return strcmp(kube_str(kube_obj(a, "metadata"), "name"),
                  kube_str(kube_obj(b, "metadata"), "name"));
}

void ctl_ds_sort_pods(const json_t **pods, size_t n)
{
    if (n > 1) qsort(pods, n, sizeof *pods, pod_order);
}

const char *ctl_ds_pod_name(const json_t *pod)
{
    return kube_str(kube_obj(pod, "metadata"), "name");
}

/* ---- claiming pods (ControllerRefManager.ClaimPods) ---- */

static void add_pod_patch(ctl_ds_ctx *c, const json_t *pod, const char *type, json_t *patch_new)
{
    ctl_ds_append(c, c->plan->patch_pods,
                  patch_new ? json_pack("{s:s,s:s,s:o}", "name", ctl_ds_pod_name(pod), "patchType",
                                        type, "patch", patch_new)
                            : NULL);
}

static void claim(ctl_ds_ctx *c, const json_t *pod)
{
    const json_t **grown = c->claimed;
    if (c->nclaimed == c->claimed_cap) {
        size_t cap = c->claimed_cap ? 2 * c->claimed_cap : 16;
        grown = realloc(c->claimed, cap * sizeof *grown);
        if (!grown) {
            c->oom = true;
            return;
        }
        c->claimed = grown;
        c->claimed_cap = cap;
    }
    c->claimed[c->nclaimed++] = pod;
}

/* ClaimObject: ours and matching is claimed; ours but no longer matching is
 * released; an orphan that matches (and is not being deleted) is adopted
 * with the patches the real ControllerRefManager sends. */
void ctl_ds_claim_pods(ctl_ds_ctx *c, const json_t *pods, bool *invalid)
{
    static const char smp[] = "application/strategic-merge-patch+json";
    const json_t *selector = kube_obj(c->spec, "selector");
    size_t i;
    const json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        const json_t *meta = kube_obj(pod, "metadata");
        const char *ns = kube_str_or_null(meta, "namespace");
        if (ns && c->ns && strcmp(ns, c->ns) != 0) continue;
        const json_t *ref = kube_controller_of(pod);
        bool matches =
            kube_label_selector_object_matches(selector, kube_obj(meta, "labels"), invalid);
        if (*invalid) return;
        if (ref && !ctl_ds_streq(kube_str_or_null(ref, "uid"), c->uid)) continue;
        if (ref && matches) {
            claim(c, pod);
        } else if (ref) {
            add_pod_patch(c, pod, smp,
                          json_pack("{s:{s:[{s:s,s:s}],s:s}}", "metadata", "ownerReferences",
                                    "$patch", "delete", "uid", c->uid, "uid",
                                    kube_str(meta, "uid")));
        } else if (matches && !kube_deleting(pod)) {
            add_pod_patch(c, pod, smp,
                          json_pack("{s:{s:[o],s:s}}", "metadata", "ownerReferences",
                                    ctl_ds_controller_ref(c), "uid", kube_str(meta, "uid")));
            claim(c, pod);
        }
    }
}
