/* What every namespace of a cluster gets from kube-controller-manager: the
 * `default` ServiceAccount (the serviceaccount controller) and the
 * `kube-root-ca.crt` ConfigMap with the cluster's CA (the root-CA
 * publisher, pkg/controller/certificates/rootcacertpublisher). */
#ifndef GPUOP_CONTROLLERS_NAMESPACE_DEFAULTS_H
#define GPUOP_CONTROLLERS_NAMESPACE_DEFAULTS_H

#include <jansson.h>

#include "apiserver/routes.h"

/* For each namespace of `namespaces` (objects) that is not being deleted:
 * creates ServiceAccount default when the API server admits service
 * accounts, and ConfigMap kube-root-ca.crt {ca.crt: api->root_ca_pem} when
 * the server has a CA, putting it back when it was changed or deleted, as
 * the publisher does. Writes through the in-process client; returns how
 * many it made. */
int ctl_namespace_defaults(as_api *api, const json_t *namespaces);

#endif
