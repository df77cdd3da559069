/* What every namespace of a cluster gets from kube-controller-manager: the
 * `default` ServiceAccount (the serviceaccount controller,
 * pkg/controller/serviceaccount) and the `kube-root-ca.crt` ConfigMap with
 * the cluster's CA (the root-CA publisher,
 * pkg/controller/certificates/rootcacertpublisher). */
#ifndef GPUOP_CONTROLLERS_NAMESPACE_DEFAULTS_H
#define GPUOP_CONTROLLERS_NAMESPACE_DEFAULTS_H

#include <jansson.h>
#include <stdbool.h>

#include "apiserver/routes.h"

/* What a namespace's kube-root-ca.crt ConfigMap holds against the CA the
 * server publishes. */
typedef enum ctl_root_ca {
    CTL_ROOT_CA_MISSING, /* no such ConfigMap */
    CTL_ROOT_CA_STALE,   /* there, with another ca.crt or none */
    CTL_ROOT_CA_CURRENT, /* there, with ca_pem */
} ctl_root_ca;

/* The state of a stored ConfigMap `configmap` (NULL: missing) against
 * ca_pem. */
ctl_root_ca ctl_root_ca_state(const json_t *configmap, const char *ca_pem);

/* The decision for one namespace `ns`, given whether its `default`
 * ServiceAccount is stored and the state of its kube-root-ca.crt ConfigMap:
 * nothing for a namespace being deleted; else the account when want_account
 * and it is missing, and the ConfigMap {ca.crt: ca_pem} when ca_pem is set
 * and the ConfigMap is missing (a POST) or stale (a merge patch that puts
 * the CA back, as the publisher does). A new array of writes,
 * {"method", "path", "contentType" (absent: JSON), "body"}; NULL when out
 * of memory. */
json_t *ctl_namespace_defaults_plan(const json_t *ns, bool have_account, ctl_root_ca root_ca,
                                    const char *ca_pem, bool want_account);

/* Each pass: for every namespace of `namespaces`, the plan above, with the
 * account only when the API server admits service accounts and the CA the
 * server's. The two objects are looked up in the store (two lookups a
 * namespace; the ConfigMap is parsed once a version, its state kept in the
 * stored object's memo); the writes, a handful a namespace once in its life, go at once
 * through the in-process client. Returns how many were made. */
int ctl_namespace_defaults(as_api *api, const json_t *namespaces);

#endif
