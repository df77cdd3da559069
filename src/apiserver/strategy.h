/* What kube-apiserver 1.32 adds to and checks on an object before storing it:
 * defaulting (pkg/apis/core/v1/defaults.go, pkg/apis/apps/v1/defaults.go),
 * the registry strategies' PrepareForCreate/PrepareForUpdate, the admission
 * plugins that change pods without looking anything up (ServiceAccount's
 * "default", Priority, DefaultTolerationSeconds) and validation
 * (pkg/apis/{core,apps,node}/validation), as pure functions over jansson
 * objects in their v1 JSON form.
 *
 * Kinds handled: Pod, Node, Namespace, ConfigMap (core), DaemonSet (apps),
 * RuntimeClass (node.k8s.io). Every other kind passes through unchanged and
 * validates as valid.
 *
 * A create runs, in the real server's order, once decode.h has read the
 * body by type (400 BadRequest for what does not decode):
 *   as_strategy_create        (defaults, PrepareForCreate, mutating admission)
 *   as_strategy_runtimeclass  (RuntimeClass admission, for pods naming one)
 *   as_strategy_validate      (422 Invalid)
 * An update runs as_strategy_update, then as_strategy_validate with the old
 * object. */
#ifndef GPUOP_APISERVER_STRATEGY_H
#define GPUOP_APISERVER_STRATEGY_H

#include <jansson.h>
#include <stdbool.h>

/* Create: defaulting and PrepareForCreate for `kind` in `group` ("" or NULL
 * for core). `obj` is the whole object as the client sent it; it is changed
 * in place.
 *   Pod: PodSpec and container defaults, requests copied from limits,
 *     enableServiceLinks, serviceAccountName/serviceAccount "default",
 *     priority 0 and preemptionPolicy PreemptLowerPriority (when no
 *     priorityClassName), the two 300 s NoExecute tolerations unless already
 *     tolerated, status replaced by {phase: Pending, qosClass: <computed>}.
 *   DaemonSet: updateStrategy, rollingUpdate, revisionHistoryLimit and
 *     template defaults; status zeroed (the four counters that apps/v1 always
 *     serializes), generation 1, annotation
 *     deprecated.daemonset.template.generation.
 *   Namespace: label kubernetes.io/metadata.name, spec.finalizers gains
 *     "kubernetes", status {phase: Active}.
 *   Node: status.allocatable defaults to status.capacity.
 * Every ResourceList value is rounded up to milli precision and written in
 * canonical form (1 -> "1", 0.5 -> "500m", "1024Mi" -> "1Gi"); a value that
 * does not parse is left as it is for validation to report. */
void as_strategy_create(const char *group, const char *kind, json_t *obj);

/* Update of the main resource (status_subresource false) or of /status
 * (true); `old` is the stored object. Applies decode-time defaulting to obj,
 * then the strategy's PrepareForUpdate:
 *   main resource: status kept from old for Pod, Node, Namespace, DaemonSet;
 *     Namespace keeps old spec.finalizers; Pod keeps old priority and
 *     preemptionPolicy when obj has none and gets the default tolerations
 *     (DefaultTolerationSeconds also admits updates);
 *   /status: spec kept from old; Pod also keeps old ownerReferences and
 *     backfills an empty qosClass (pod status strategy).
 * DaemonSet generation: old+1 on any spec change; a template change also bumps
 * the template generation (the annotation); metadata-only and /status writes
 * keep old's. Other kinds are left without metadata.generation. The caller
 * copies uid, creationTimestamp, name and namespace. */
void as_strategy_update(const char *group, const char *kind, json_t *obj, const json_t *old,
                        bool status_subresource);

/* Validation of obj (after create/update above); old is NULL on create. Returns
 * a new JSON array of causes, empty when valid:
 *   [{"reason":"FieldValueRequired","message":"Required value",
 *     "field":"spec.containers[0].image"}, ...]
 * Messages are field.Error.ErrorBody() of the real validators, in their order
 * (Go map iteration, random in Go, follows the JSON member order here). As in
 * the real server an update repeats some checks (ValidateDaemonSet and
 * ValidateDaemonSetUpdate both validate the spec); as_strategy_invalid_message
 * drops the repeats, the causes keep them. NULL only when out of memory. */
json_t *as_strategy_validate(const char *group, const char *kind, const json_t *obj,
                             const json_t *old);
/* The same for an update of /status: for a pod, its status and metadata
 * only (ValidatePodStatusUpdate: the spec is the old one); other kinds as
 * above. */
json_t *as_strategy_validate_status(const char *group, const char *kind, const json_t *obj,
                                    const json_t *old);

/* The 422 message, as apimachinery's NewInvalid builds it:
 *   Pod "bad" is invalid: spec.containers[0].image: Required value
 *   DaemonSet.apps "x" is invalid: [e1, e2]
 * `kind` is bare ("DaemonSet": the group is looked up in the resource table)
 * or already qualified ("DaemonSet.apps"). Repeated "field: message" texts
 * appear once (ErrorList.ToAggregate). Caller frees; NULL when out of memory. */
char *as_strategy_invalid_message(const char *kind, const char *name, const json_t *causes);

/* ServiceAccount admission's change to a pod being created, given its
 * account `sa` (found by the caller; the plugin refuses the pod when it is
 * missing): unless the pod or the account turns automounting off, a
 * projected volume kube-api-access-<suffix> (the token, the kube-root-ca.crt
 * ConfigMap's ca.crt and the namespace), mounted read-only at
 * /var/run/secrets/kubernetes.io/serviceaccount in every container and init
 * container that has nothing mounted there; a volume already named
 * kube-api-access-* is used instead. The account's imagePullSecrets when
 * the pod has none. Mirror pods are left alone. */
void as_strategy_service_account(json_t *pod, const json_t *sa, const char *suffix);

/* RuntimeClass admission (plugin/pkg/admission/runtimeclass) merging the
 * RuntimeClass object into a pod being created: overhead.podFixed becomes
 * spec.overhead, scheduling.nodeSelector is merged into spec.nodeSelector,
 * scheduling.tolerations are merged (tolerations.MergeTolerations: a
 * toleration covered by another is dropped). `runtimeclass` NULL means the pod
 * names none. Returns 0, or -1 with *message (caller frees) set to the
 * Forbidden reason, e.g. "pod rejected: Pod's Overhead doesn't match
 * RuntimeClass's defined Overhead" or "conflict:
 * runtimeClass.scheduling.nodeSelector[k] = a; pod.spec.nodeSelector[k] = b".
 * The pod is unchanged on failure. */
int as_strategy_runtimeclass(json_t *pod, const json_t *runtimeclass, char **message);

#endif
