/* ServiceAccount admission's change to a pod being created
 * (plugin/pkg/admission/serviceaccount/admission.go, 1.32: Admit,
 * shouldAutomount, mountServiceAccountToken, TokenVolumeSource). The
 * account's lookup is the caller's (api_write.c), which needs the store. */
#include <stdio.h>
#include <string.h>

#include "apiserver/strategy.h"
#include "apiserver/strategy_internal.h"

#define VOLUME_PREFIX "kube-api-access-"
#define MOUNT_PATH    "/var/run/secrets/kubernetes.io/serviceaccount"

/* The pod's preference, then the account's, then true. */
static bool should_automount(const json_t *spec, const json_t *sa)
{
    const json_t *p = json_object_get(spec, "automountServiceAccountToken");
    if (json_is_boolean(p)) return json_is_true(p);
    const json_t *s = json_object_get(sa, "automountServiceAccountToken");
    if (json_is_boolean(s)) return json_is_true(s);
    return true;
}

/* The projected volume of the bound token, the cluster's CA and the
 * namespace (TokenVolumeSource: defaultMode set explicitly, 0644). */
static json_t *token_volume(const char *name)
{
    return json_pack(
        "{s:s, s:{s:[{s:{s:i, s:s}}, {s:{s:s, s:[{s:s, s:s}]}}, {s:{s:[{s:s, s:{s:s, s:s}}]}}], "
        "s:i}}",
        "name", name, "projected", "sources", "serviceAccountToken", "expirationSeconds", 3607,
        "path", "token", "configMap", "name", "kube-root-ca.crt", "items", "key", "ca.crt", "path",
        "ca.crt", "downwardAPI", "items", "path", "namespace", "fieldRef", "apiVersion", "v1",
        "fieldPath", "metadata.namespace", "defaultMode", 420);
}

/* Every container without a mount at the token's path gets one; true when
 * one did. */
static bool mount_in(json_t *containers, const char *volume)
{
    bool added = false;
    size_t i;
    json_t *c;
    json_array_foreach(containers, i, c)
    {
        json_t *mounts = json_object_get(c, "volumeMounts");
        bool has = false;
        size_t j;
        json_t *m;
        json_array_foreach(mounts, j, m) has |= strcmp(kube_str(m, "mountPath"), MOUNT_PATH) == 0;
        if (has) continue;
        if (!json_is_array(mounts)) json_object_set_new(c, "volumeMounts", mounts = json_array());
        json_array_append_new(mounts, json_pack("{s:s, s:b, s:s}", "name", volume, "readOnly", 1,
                                                "mountPath", MOUNT_PATH));
        added = true;
    }
    return added;
}

void as_strategy_service_account(json_t *pod, const json_t *sa, const char *suffix)
{
    json_t *spec = json_object_get(pod, "spec");
    if (!json_is_object(spec)) return;
    /* a mirror pod is the kubelet's: left as it is */
    const json_t *ann = json_object_get(json_object_get(pod, "metadata"), "annotations");
    if (json_object_get(ann, "kubernetes.io/config.mirror")) return;
    if (should_automount(spec, sa)) {
        char name[64] = "";
        json_t *volumes = json_object_get(spec, "volumes");
        size_t i;
        json_t *v;
        json_array_foreach(volumes, i, v)
        {
            const char *n = kube_str(v, "name");
            if (strncmp(n, VOLUME_PREFIX, strlen(VOLUME_PREFIX)) == 0) {
                snprintf(name, sizeof name, "%s", n);
                break;
            }
        }
        bool has_volume = name[0] != '\0';
        if (!has_volume) snprintf(name, sizeof name, VOLUME_PREFIX "%s", suffix);
        bool needed = mount_in(json_object_get(spec, "initContainers"), name);
        needed |= mount_in(json_object_get(spec, "containers"), name);
        if (needed && !has_volume) {
            if (!json_is_array(volumes))
                json_object_set_new(spec, "volumes", volumes = json_array());
            json_array_append_new(volumes, token_volume(name));
        }
    }
    const json_t *pull = json_object_get(sa, "imagePullSecrets");
    if (json_array_size(json_object_get(spec, "imagePullSecrets")) == 0 &&
        json_array_size(pull) > 0) {
        json_t *names = json_array();
        size_t i;
        json_t *s;
        json_array_foreach(pull, i, s)
            json_array_append_new(names, json_pack("{s:s}", "name", kube_str(s, "name")));
        json_object_set_new(spec, "imagePullSecrets", names);
    }
}
