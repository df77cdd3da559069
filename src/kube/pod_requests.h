/* What a pod requests: resourcehelper.PodRequests
 * (k8s.io/component-helpers/resource/helpers.go, v0.32: PodRequests and
 * AggregateContainerRequests), which kube-scheduler's NodeResourcesFit, the
 * kubelet's admission and `kubectl describe node` use, for the embedded
 * scheduler and the field tools alike.
 *
 * The sum over spec.containers, maxed with the init containers' floor, plus
 * spec.overhead. Init container i needs its own requests plus those of every
 * sidecar (restartPolicy Always) started before it; a sidecar also runs
 * beside the regular containers, so it adds to the sum. Sums and maxima are
 * exact quantities (addResourceList, maxResourceList); a resource keeps the
 * order in which the pod first names it.
 *
 * One addition: a container's limit without a request of the same name
 * counts as the request. The API server's defaulting writes it so into
 * every stored pod (SetDefaults_Pod); a snapshot written by hand, or by a
 * tool that skips defaulting, may lack it. Pod-level resources (alpha in
 * 1.32, off by default) are not read. */
#ifndef GPUOP_KUBE_POD_REQUESTS_H
#define GPUOP_KUBE_POD_REQUESTS_H

#include <jansson.h>
#include <stddef.h>

#include "kube/quantity.h"
#include "util/error.h"

/* A v1.ResourceList as exact quantities. Names are borrowed from the JSON
 * they were read from. A zeroed list is empty; free it with
 * kube_resource_list_free, or reset it for reuse with `n = 0`. */
typedef struct kube_resource {
    const char *name;
    kube_quantity q;
} kube_resource;

typedef struct kube_resource_list {
    kube_resource *v;
    size_t n, cap;
} kube_resource_list;

void kube_resource_list_free(kube_resource_list *l);
kube_resource *kube_resource_list_find(const kube_resource_list *l, const char *name);
/* Adds q to the entry `name` (appended when the list has none). -1 with err
 * when memory runs out or the sum leaves the quantity range. */
int kube_resource_list_add(kube_resource_list *l, const char *name, const kube_quantity *q,
                           gp_error *err);
/* Adds every member of a ResourceList object (requests, overhead,
 * allocatable; NULL and non-objects are empty). -1 with err for a value that
 * is not a quantity. */
int kube_resource_list_read(const json_t *list, kube_resource_list *l, gp_error *err);

/* Quantity.UnmarshalJSON: a string, or a bare JSON number; anything else is
 * parsed as its JSON text so that the error names what was there. */
int kube_quantity_from_json(const json_t *v, kube_quantity *q, gp_error *err);

/* PodResourcesOptions.NonMissingContainerRequests: what a container that
 * requests no cpu or no memory counts as (the scheduler's scoring uses
 * 100m and 200Mi). */
typedef struct kube_non_missing {
    kube_quantity cpu, memory;
} kube_non_missing;

/* PodRequests(pod) into `out` (added to what it holds; pass an empty list),
 * with `non_missing` NULL or the defaults above. -1 with err for a quantity
 * that does not parse or memory that runs out. */
int kube_pod_requests(const json_t *pod, const kube_non_missing *non_missing,
                      kube_resource_list *out, gp_error *err);

/* The same for the resources `names` (n of them): out[i] is names[i]'s
 * request, zero for one the pod does not ask for. */
int kube_pod_requests_of(const json_t *pod, const char *const *names, size_t n, kube_quantity *out,
                         gp_error *err);

#endif
