/* The default ServiceAccount and the kube-root-ca.crt ConfigMap of every
 * namespace (namespace_defaults.h). */
#include "controllers/namespace_defaults.h"

#include <stdio.h>
#include <string.h>

#include "apiserver/loopback.h"
#include "apiserver/resources.h"
#include "apiserver/store.h"
#include "kube/json.h"

#define ROOT_CA "kube-root-ca.crt"

/* The annotation the publisher sets on its ConfigMap. */
#define ROOT_CA_DESCRIPTION                                                                        \
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "      \
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "      \
    "guaranteed across distributions of Kubernetes clusters."

static json_t *write_of(const char *method, const char *path, const char *content_type,
                        json_t *body)
{
    json_t *w = json_pack("{s:s, s:s, s:o}", "method", method, "path", path, "body", body);
    if (w && content_type) json_object_set_new(w, "contentType", json_string(content_type));
    return w;
}

ctl_root_ca ctl_root_ca_state(const json_t *configmap, const char *ca_pem)
{
    if (!configmap) return CTL_ROOT_CA_MISSING;
    const char *have = kube_str_or_null(json_object_get(configmap, "data"), "ca.crt");
    return have && ca_pem && strcmp(have, ca_pem) == 0 ? CTL_ROOT_CA_CURRENT : CTL_ROOT_CA_STALE;
}

json_t *ctl_namespace_defaults_plan(const json_t *ns, bool have_account, ctl_root_ca root_ca,
                                    const char *ca_pem, bool want_account)
{
    json_t *plan = json_array();
    const json_t *meta = json_object_get(ns, "metadata");
    const char *name = kube_str_or_null(meta, "name");
    const char *phase = kube_str_or_null(json_object_get(ns, "status"), "phase");
    if (!plan || !name || json_object_get(meta, "deletionTimestamp") ||
        (phase && strcmp(phase, "Terminating") == 0))
        return plan;
    char path[400];
    if (want_account && !have_account) {
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/serviceaccounts", name);
        json_array_append_new(plan,
                              write_of("POST", path, NULL,
                                       json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind",
                                                 "ServiceAccount", "metadata", "name", "default")));
    }
    if (!ca_pem || root_ca == CTL_ROOT_CA_CURRENT) return plan;
    if (root_ca == CTL_ROOT_CA_STALE) {
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps/%s", name, ROOT_CA);
        json_array_append_new(plan, write_of("PATCH", path, "application/merge-patch+json",
                                             json_pack("{s:{s:s}}", "data", "ca.crt", ca_pem)));
    } else {
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps", name);
        json_array_append_new(
            plan, write_of("POST", path, NULL,
                           json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:s}}", "apiVersion", "v1",
                                     "kind", "ConfigMap", "metadata", "name", ROOT_CA,
                                     "annotations", "kubernetes.io/description",
                                     ROOT_CA_DESCRIPTION, "data", "ca.crt", ca_pem)));
    }
    return plan;
}

static bool account_stored(as_api *api, const char *ns)
{
    as_store_lock(api->store);
    bool have = as_store_get(api->store, as_resource_find("", "v1", "serviceaccounts"), ns,
                             "default") != NULL;
    as_store_unlock(api->store);
    return have;
}

/* The namespace's ConfigMap against the server's CA. Every pass asks for
 * every namespace, and the CA is a kilobyte or two of PEM, so the stored
 * version is parsed once: its state is kept in the object's memo (the only
 * one configmaps have) until the next version. */
static ctl_root_ca root_ca_stored(as_api *api, const char *ns)
{
    as_store_lock(api->store);
    as_object *o = (as_object *)as_store_get(api->store, as_resource_find("", "v1", "configmaps"),
                                             ns, ROOT_CA);
    ctl_root_ca state = CTL_ROOT_CA_MISSING;
    if (o && o->memo_rv == o->rv) {
        state = (ctl_root_ca)o->memo;
    } else if (o) {
        json_t *cm = json_loadb(o->json->text, o->json->len, 0, NULL);
        state = cm ? ctl_root_ca_state(cm, api->root_ca_pem) : CTL_ROOT_CA_STALE;
        json_decref(cm);
        o->memo = (int)state;
        o->memo_rv = o->rv;
    }
    as_store_unlock(api->store);
    return state;
}

int ctl_namespace_defaults(as_api *api, const json_t *namespaces)
{
    if (!api->admit_service_accounts && !api->root_ca_pem) return 0;
    int writes = 0;
    size_t i;
    const json_t *ns;
    json_array_foreach((json_t *)namespaces, i, ns)
    {
        const char *name = kube_str_or_null(json_object_get(ns, "metadata"), "name");
        if (!name) continue;
        bool account = api->admit_service_accounts && account_stored(api, name);
        ctl_root_ca root_ca = api->root_ca_pem ? root_ca_stored(api, name) : CTL_ROOT_CA_MISSING;
        json_t *plan = ctl_namespace_defaults_plan(ns, account, root_ca, api->root_ca_pem,
                                                   api->admit_service_accounts);
        size_t k;
        json_t *w;
        json_array_foreach(plan, k, w)
        {
            unsigned status =
                as_loopback_send(api, kube_str(w, "method"), kube_str(w, "path"), NULL,
                                 kube_str_or_null(w, "contentType"), json_object_get(w, "body"));
            writes += status == 200 || status == 201;
        }
        json_decref(plan);
    }
    return writes;
}
