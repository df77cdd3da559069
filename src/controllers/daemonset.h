/* The decisions of the Kubernetes 1.32 DaemonSet controller
 * (pkg/controller/daemon: daemon_controller.go, update.go,
 * util/daemonset_util.go; k8s-semantics section 6), as pure functions over
 * jansson objects in their v1 JSON form.
 *
 * Nothing here talks to a store, the network or a clock: a runtime hands in
 * snapshots (the DaemonSet, all nodes, the pods and ControllerRevisions of
 * its namespace, the time), carries out the returned plan through the API
 * server, and calls ctl_ds_sync again after the resulting watch events.
 *
 * Where the real controller ranges over a Go map (effectively random order),
 * this code goes through nodes in ascending name order (strcmp), so the
 * rolling update always picks the lowest-named candidate first and every plan
 * is reproducible. */
#ifndef GPUOP_CONTROLLERS_DAEMONSET_H
#define GPUOP_CONTROLLERS_DAEMONSET_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "util/error.h"

/* The real controller's BurstReplicas: at most this many creates and this
 * many deletes come out of one sync. */
#define CTL_DS_BURST_REPLICAS 250

/* What one sync wants done, in the order the real controller does it:
 * revisions first, then pod patches, creates, deletes, revision cleanup and
 * finally the status. Every member is an array (possibly empty) owned by the
 * plan, except status, which is NULL when nothing needs writing.
 *
 * Creates are meant to be sent in the controller's "slow start" batches of
 * 1, 2, 4, 8, ... pods, stopping after the first batch in which one failed
 * (the rest are retried by a later sync); deletes use default DeleteOptions. */
typedef struct ctl_ds_plan {
    /* ControllerRevision bodies to POST (apps/v1). */
    json_t *create_revisions;
    /* {"name": <revision>, "revision": N}: renumber an existing revision
     * (a rollback makes an old template current again). */
    json_t *update_revisions;
    /* {"name": <pod>, "patchType": "application/strategic-merge-patch+json"
     * or "application/merge-patch+json", "patch": {...}}: adoption of
     * orphans that match the selector, release of owned pods that no longer
     * do, and relabelling when duplicate current revisions are merged. */
    json_t *patch_pods;
    /* Pod bodies to POST, in node name order: generateName "<ds>-", the
     * template's labels plus pod-template-generation and
     * controller-revision-hash, the controller ownerReference, the template
     * spec with the DaemonSet tolerations and a required node affinity of
     * matchFields metadata.name In [<node>]. spec.nodeName stays empty. */
    json_t *create_pods;
    /* Pod names to DELETE. */
    json_t *delete_pods;
    /* Revision names to DELETE (history beyond revisionHistoryLimit, and
     * duplicates of the current revision). */
    json_t *delete_revisions;
    /* The whole new .status to PUT through /status, or NULL. */
    json_t *status;
    /* Events on the DaemonSet, {"type","reason","message"}, in order. Each
     * create has one {"Normal","SuccessfulCreate","Created pod: "} whose
     * message the runtime completes with the generated name, each delete one
     * {"Normal","SuccessfulDelete","Deleted pod: <name>"}, in the order of
     * create_pods and delete_pods; when a request fails the runtime records
     * "Warning FailedCreate Error creating: <err>" (or FailedDelete "Error
     * deleting: <err>") in its place. Other events (FailedDaemonPod,
     * SucceededDaemonPod, SelectingAll) are complete as they are. */
    json_t *events;
} ctl_ds_plan;

/* One sync of one DaemonSet (syncDaemonSet).
 *   ds: the stored DaemonSet, after apiserver defaulting.
 *   nodes: array of every Node.
 *   pods: array of the pods in the DaemonSet's namespace; the function picks
 *     those it owns (controller ownerReference with its uid, and the
 *     selector) and adopts orphans that match the selector.
 *   revisions: array of the ControllerRevisions in the namespace.
 *   now: the clock for minReadySeconds.
 *   expectations_pending: the runtime's record that creates or deletes of an
 *     earlier plan have not all shown up in its watch yet. Then only the
 *     revisions and the status are worked out, and observedGeneration stays
 *     where it was. The runtime should consider a planned delete observed
 *     once the pod has a deletionTimestamp, as the real controller does.
 * The rolling update only runs in a sync whose own manage step had nothing
 * to create or delete (the creates and deletes it issues leave the real
 * controller's expectations unsatisfied); history cleanup runs in every
 * full sync.
 *
 * Returns 0 with the plan filled in. Returns 1 with the plan filled in and
 * err set when the real controller would return an error after doing part
 * of the work (an invalid maxUnavailable or maxSurge, a hash collision, an
 * invalid selector, a surge rollout with an old pod on a vanished node):
 * the runtime carries out the plan and retries later with backoff. Returns
 * -1 with err set and an empty plan when `ds` is not a usable DaemonSet or
 * memory runs out. ctl_ds_plan_free is safe after any return. */
int ctl_ds_sync(const json_t *ds, const json_t *nodes, const json_t *pods, const json_t *revisions,
                time_t now, bool expectations_pending, ctl_ds_plan *plan, gp_error *err);

void ctl_ds_plan_free(ctl_ds_plan *plan);

/* syncNodes' slow start: the size of the next batch of creates once `sent`
 * of `total` have been sent, the last batch `last` long (0 before the
 * first): 1 (SlowStartInitialBatchSize), then twice the last, never more
 * than what is left. The runtime stops after a batch in which a create
 * failed. */
size_t ctl_ds_next_batch(size_t sent, size_t last, size_t total);

/* NodeShouldRunDaemonPod: whether a new daemon pod belongs on `node`
 * (template nodeName, nodeSelector and required node affinity match, and
 * every NoSchedule/NoExecute taint is tolerated by the template's
 * tolerations plus the DaemonSet defaults), and in *should_continue (may be
 * NULL) whether an existing one may stay: true as well when only
 * NoSchedule taints are untolerated. Resources are not considered. */
bool ctl_ds_should_run(const json_t *ds, const json_t *node, bool *should_continue);

/* The revision hash of a pod template (controller.ComputeHash's role): FNV-32a
 * over the template's canonical JSON (compact, keys sorted), followed, when
 * collision_count >= 0, by the count as 4 little-endian bytes and 4 zero
 * bytes (Go hashes a non-nil collisionCount, even 0). Its decimal digits are
 * then mapped through "bcdfghjklmnpqrstvwxz2456789" by character code modulo
 * 27 (rand.SafeEncodeString), '0' -> '4' ... '9' -> 'f'. Pass -1 for a
 * DaemonSet without status.collisionCount. `out` gets at most 10 characters
 * and the NUL; it is "" if the template cannot be serialised. */
void ctl_ds_hash(const json_t *template_, long long collision_count, char out[16]);

#endif
