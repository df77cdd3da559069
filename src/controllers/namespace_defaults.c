/* The default ServiceAccount and the kube-root-ca.crt ConfigMap of every
 * namespace (namespace_defaults.h). Each pass looks each namespace's two
 * objects up in the store (two lookups a namespace) and writes only what
 * is missing or out of date. */
#include "controllers/namespace_defaults.h"

#include <stdio.h>
#include <string.h>

#include "apiserver/loopback.h"
#include "apiserver/resources.h"
#include "apiserver/store.h"
#include "kube/json.h"

#define ROOT_CA "kube-root-ca.crt"

/* The stored object, parsed, or NULL. */
static json_t *stored(as_api *api, const char *resource, const char *ns, const char *name)
{
    as_store_lock(api->store);
    const as_object *o = as_store_get(api->store, as_resource_find("", "v1", resource), ns, name);
    json_t *obj = o ? json_loadb(o->json->text, o->json->len, 0, NULL) : NULL;
    as_store_unlock(api->store);
    return obj;
}

static int default_service_account(as_api *api, const char *ns)
{
    json_t *sa = stored(api, "serviceaccounts", ns, "default");
    if (sa) {
        json_decref(sa);
        return 0;
    }
    char path[400];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/serviceaccounts", ns);
    json_t *body = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "ServiceAccount",
                             "metadata", "name", "default");
    unsigned status = as_loopback_send(api, "POST", path, NULL, NULL, body);
    json_decref(body);
    return status == 201;
}

/* The publisher's ConfigMap: ca.crt, and the annotation it sets on it
 * (kubernetes.io/description). */
static json_t *root_ca_configmap(const char *pem)
{
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:s}}", "apiVersion", "v1", "kind",
                     "ConfigMap", "metadata", "name", ROOT_CA, "annotations",
                     "kubernetes.io/description",
                     "Contains a CA bundle that can be used to verify the kube-apiserver when "
                     "using internal endpoints such as the internal service IP or "
                     "kubernetes.default.svc. No other usage is guaranteed across distributions "
                     "of Kubernetes clusters.",
                     "data", "ca.crt", pem);
}

static int root_ca(as_api *api, const char *ns)
{
    json_t *cm = stored(api, "configmaps", ns, ROOT_CA);
    const char *have = kube_str_or_null(json_object_get(cm, "data"), "ca.crt");
    bool current = have && strcmp(have, api->root_ca_pem) == 0, exists = cm != NULL;
    json_decref(cm);
    if (current) return 0;
    char path[400];
    json_t *body = root_ca_configmap(api->root_ca_pem);
    unsigned status;
    if (exists) {
        /* changed by someone: the publisher puts its data back */
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps/%s", ns, ROOT_CA);
        json_t *patch = json_pack("{s:O}", "data", json_object_get(body, "data"));
        status = as_loopback_send(api, "PATCH", path, NULL, "application/merge-patch+json", patch);
        json_decref(patch);
    } else {
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps", ns);
        status = as_loopback_send(api, "POST", path, NULL, NULL, body);
    }
    json_decref(body);
    return status == 200 || status == 201;
}

int ctl_namespace_defaults(as_api *api, const json_t *namespaces)
{
    int writes = 0;
    size_t i;
    const json_t *ns;
    json_array_foreach((json_t *)namespaces, i, ns)
    {
        const json_t *meta = json_object_get(ns, "metadata");
        const char *name = kube_str_or_null(meta, "name");
        if (!name || json_object_get(meta, "deletionTimestamp")) continue;
        const char *phase = kube_str_or_null(json_object_get(ns, "status"), "phase");
        if (phase && strcmp(phase, "Terminating") == 0) continue;
        if (api->admit_service_accounts) writes += default_service_account(api, name);
        if (api->root_ca_pem) writes += root_ca(api, name);
    }
    return writes;
}
