/* Pods: v1 defaulting (pkg/apis/core/v1/defaults.go and the generated
 * zz_generated.defaults.go), the pod strategy (pkg/registry/core/pod), the
 * admission plugins that change pods on their own (ServiceAccount's
 * "default", Priority, DefaultTolerationSeconds). */
#include "apiserver/strategy.h"
#include "apiserver/strategy_internal.h"

#include <stdlib.h>
#include <string.h>

#include "kube/quantity.h"

/* ---- image pull policy ---- */

static bool ref_path_ok(const char *s, size_t n)
{
    /* path components: lowercase alphanumerics joined by '.', '_', '__' or
     * dashes (distribution/reference), so any uppercase makes it invalid */
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                  c == '-' || c == '/';
        if (!ok) return false;
    }
    return true;
}

static bool ref_tag_ok(const char *s, size_t n)
{
    if (n == 0 || n > 128) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool word =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (!word && (i == 0 || (c != '.' && c != '-'))) return false;
    }
    return true;
}

/* The tag parsers.ParseImageName finds: "latest" when there is neither a tag
 * nor a digest, "" for a digest alone or a reference that does not parse. */
static void image_tag(const char *image, char *tag, size_t size)
{
    snprintf(tag, size, "%s", "");
    const char *at = strchr(image, '@');
    size_t name_len = at ? (size_t)(at - image) : strlen(image);
    const char *slash = NULL;
    for (size_t i = 0; i < name_len; i++)
        if (image[i] == '/') slash = image + i;
    const char *colon = NULL;
    for (const char *c = slash ? slash : image; c < image + name_len; c++)
        if (*c == ':') colon = c;
    size_t repo_len = colon ? (size_t)(colon - image) : name_len;
    /* the domain (a first component with '.' or ':' or "localhost") may hold
     * uppercase and a port; the rest must be lowercase */
    const char *first_slash = memchr(image, '/', repo_len);
    const char *remote = image;
    if (first_slash) {
        size_t dl = (size_t)(first_slash - image);
        if (memchr(image, '.', dl) || memchr(image, ':', dl) ||
            (dl == 9 && strncmp(image, "localhost", 9) == 0))
            remote = first_slash + 1;
    }
    if (!ref_path_ok(remote, repo_len - (size_t)(remote - image))) return;
    if (colon) {
        size_t tl = name_len - (size_t)(colon + 1 - image);
        if (!ref_tag_ok(colon + 1, tl)) return;
        snprintf(tag, size, "%.*s", (int)tl, colon + 1);
        return;
    }
    if (!at) snprintf(tag, size, "latest");
}

/* ---- container and pod spec defaults ---- */

static void probe_defaults(json_t *probe);

static void http_get_defaults(json_t *handler)
{
    json_t *get = json_object_get(handler, "httpGet");
    if (!json_is_object(get)) return;
    if (as_str_unset(get, "path")) json_object_set_new(get, "path", json_string("/"));
    if (as_str_unset(get, "scheme")) json_object_set_new(get, "scheme", json_string("HTTP"));
}

static void default_int(json_t *obj, const char *key, json_int_t value)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v) || (json_is_integer(v) && json_integer_value(v) == 0))
        json_object_set_new(obj, key, json_integer(value));
}

static void probe_defaults(json_t *probe)
{
    if (!json_is_object(probe)) return;
    default_int(probe, "timeoutSeconds", 1);
    default_int(probe, "periodSeconds", 10);
    default_int(probe, "successThreshold", 1);
    default_int(probe, "failureThreshold", 3);
    http_get_defaults(probe);
}

static void field_ref_defaults(json_t *holder)
{
    json_t *ref = json_object_get(holder, "fieldRef");
    if (json_is_object(ref) && as_str_unset(ref, "apiVersion"))
        json_object_set_new(ref, "apiVersion", json_string("v1"));
}

static void container_defaults(json_t *c)
{
    if (!json_is_object(c)) return;
    if (as_str_unset(c, "imagePullPolicy")) {
        char tag[160];
        image_tag(kube_str(c, "image"), tag, sizeof tag);
        json_object_set_new(c, "imagePullPolicy",
                            json_string(strcmp(tag, "latest") == 0 ? "Always" : "IfNotPresent"));
    }
    if (as_str_unset(c, "terminationMessagePath"))
        json_object_set_new(c, "terminationMessagePath", json_string("/dev/termination-log"));
    if (as_str_unset(c, "terminationMessagePolicy"))
        json_object_set_new(c, "terminationMessagePolicy", json_string("File"));
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(c, "ports"), i, v)
    {
        if (json_is_object(v) && as_str_unset(v, "protocol"))
            json_object_set_new(v, "protocol", json_string("TCP"));
    }
    json_array_foreach(json_object_get(c, "env"), i, v)
    {
        field_ref_defaults(json_object_get(v, "valueFrom"));
    }
    probe_defaults(json_object_get(c, "livenessProbe"));
    probe_defaults(json_object_get(c, "readinessProbe"));
    probe_defaults(json_object_get(c, "startupProbe"));
    json_t *lc = json_object_get(c, "lifecycle");
    http_get_defaults(json_object_get(lc, "postStart"));
    http_get_defaults(json_object_get(lc, "preStop"));
    json_t *res = json_object_get(c, "resources");
    as_canonical_list(json_object_get(res, "limits"), true);
    as_canonical_list(json_object_get(res, "requests"), true);
}

static const char *const volume_sources[] = {"hostPath",
                                             "emptyDir",
                                             "gcePersistentDisk",
                                             "awsElasticBlockStore",
                                             "gitRepo",
                                             "secret",
                                             "nfs",
                                             "iscsi",
                                             "glusterfs",
                                             "persistentVolumeClaim",
                                             "rbd",
                                             "flexVolume",
                                             "cinder",
                                             "cephfs",
                                             "flocker",
                                             "downwardAPI",
                                             "fc",
                                             "azureFile",
                                             "configMap",
                                             "vsphereVolume",
                                             "quobyte",
                                             "azureDisk",
                                             "photonPersistentDisk",
                                             "projected",
                                             "portworxVolume",
                                             "scaleIO",
                                             "storageos",
                                             "csi",
                                             "ephemeral",
                                             "image",
                                             NULL};

static void default_mode(json_t *src)
{
    if (json_is_object(src) && !json_is_integer(json_object_get(src, "defaultMode")))
        json_object_set_new(src, "defaultMode", json_integer(420)); /* 0644 */
}

static void downward_items(json_t *src)
{
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(src, "items"), i, item)
    {
        field_ref_defaults(item);
    }
}

static void volume_defaults(json_t *vol)
{
    if (!json_is_object(vol)) return;
    bool any = false;
    for (size_t i = 0; volume_sources[i]; i++) {
        const json_t *s = json_object_get(vol, volume_sources[i]);
        if (s && !json_is_null(s)) any = true;
    }
    if (!any) json_object_set_new(vol, "emptyDir", json_object());
    default_mode(json_object_get(vol, "secret"));
    default_mode(json_object_get(vol, "configMap"));
    json_t *dapi = json_object_get(vol, "downwardAPI");
    default_mode(dapi);
    downward_items(dapi);
    json_t *proj = json_object_get(vol, "projected");
    default_mode(proj);
    size_t i;
    json_t *src;
    json_array_foreach(json_object_get(proj, "sources"), i, src)
    {
        json_t *tok = json_object_get(src, "serviceAccountToken");
        if (json_is_object(tok) && !json_is_integer(json_object_get(tok, "expirationSeconds")))
            json_object_set_new(tok, "expirationSeconds", json_integer(3600));
        downward_items(json_object_get(src, "downwardAPI"));
    }
    json_t *hp = json_object_get(vol, "hostPath");
    if (json_is_object(hp) && !json_object_get(hp, "type"))
        json_object_set_new(hp, "type", json_string(""));
    as_canonical_member(json_object_get(vol, "emptyDir"), "sizeLimit", false);
}

/* SetDefaults_Pod: requests default to limits, for pods only (not templates). */
static void requests_from_limits(json_t *c)
{
    json_t *res = json_object_get(c, "resources");
    json_t *limits = json_object_get(res, "limits");
    if (!json_is_object(limits)) return;
    json_t *requests = as_obj(res, "requests");
    const char *k;
    json_t *v;
    json_object_foreach(limits, k, v)
    {
        if (requests && !json_object_get(requests, k)) json_object_set(requests, k, v);
    }
}

static void host_network_ports(json_t *c)
{
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(c, "ports"), i, p)
    {
        const json_t *hp = json_object_get(p, "hostPort");
        if (!hp || (json_is_integer(hp) && json_integer_value(hp) == 0))
            json_object_set(p, "hostPort", json_object_get(p, "containerPort"));
    }
}

static void each_container(json_t *spec, void (*fn)(json_t *c), bool with_ephemeral)
{
    static const char *const lists[] = {"initContainers", "containers", "ephemeralContainers"};
    for (size_t l = 0; l < (with_ephemeral ? 3u : 2u); l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(spec, lists[l]), i, c)
        {
            fn(c);
        }
    }
}

void as_pod_spec_defaults(json_t *spec, bool is_pod)
{
    if (!json_is_object(spec)) return;
    if (as_str_unset(spec, "dnsPolicy"))
        json_object_set_new(spec, "dnsPolicy", json_string("ClusterFirst"));
    if (as_str_unset(spec, "restartPolicy"))
        json_object_set_new(spec, "restartPolicy", json_string("Always"));
    const json_t *sc = json_object_get(spec, "securityContext");
    if (!sc || json_is_null(sc)) json_object_set_new(spec, "securityContext", json_object());
    const json_t *tgps = json_object_get(spec, "terminationGracePeriodSeconds");
    if (!tgps || json_is_null(tgps))
        json_object_set_new(spec, "terminationGracePeriodSeconds", json_integer(30));
    if (as_str_unset(spec, "schedulerName"))
        json_object_set_new(spec, "schedulerName", json_string("default-scheduler"));
    each_container(spec, container_defaults, true);
    size_t i;
    json_t *vol;
    json_array_foreach(json_object_get(spec, "volumes"), i, vol)
    {
        volume_defaults(vol);
    }
    as_canonical_list(json_object_get(spec, "overhead"), true);
    if (!is_pod) return;
    each_container(spec, requests_from_limits, false);
    const json_t *esl = json_object_get(spec, "enableServiceLinks");
    if (!esl || json_is_null(esl)) json_object_set_new(spec, "enableServiceLinks", json_true());
    if (json_is_true(json_object_get(spec, "hostNetwork")))
        each_container(spec, host_network_ports, false);
}

/* ---- QoS (pkg/apis/core/helper/qos) ---- */

static bool parse_q(const json_t *v, kube_quantity *q)
{
    char text[256];
    as_quantity_text(v, text, sizeof text);
    return kube_quantity_parse(text, q, NULL) == 0;
}

typedef struct {
    kube_quantity sum[2]; /* cpu, memory */
    bool has[2];
} qos_totals;

static const char *const qos_names[2] = {"cpu", "memory"};

/* Adds the positive cpu/memory values of one list; returns which were found. */
static unsigned qos_add(qos_totals *t, const json_t *list)
{
    unsigned found = 0;
    for (int r = 0; r < 2; r++) {
        kube_quantity q;
        const json_t *v = json_object_get(list, qos_names[r]);
        if (!v || !parse_q(v, &q) || q.units < 0 || (q.units == 0 && q.nanos <= 0)) continue;
        found |= 1u << r;
        if (!t->has[r]) {
            t->sum[r] = q;
            t->has[r] = true;
        } else {
            kube_quantity_add(&t->sum[r], &q, &t->sum[r], NULL);
        }
    }
    return found;
}

const char *as_pod_qos(const json_t *spec)
{
    qos_totals req = {0}, lim = {0};
    bool guaranteed = true;
    static const char *const lists[] = {"containers", "initContainers"};
    for (size_t l = 0; l < 2; l++) {
        size_t i;
        const json_t *c;
        json_array_foreach(json_object_get(spec, lists[l]), i, c)
        {
            const json_t *res = json_object_get(c, "resources");
            qos_add(&req, json_object_get(res, "requests"));
            if (qos_add(&lim, json_object_get(res, "limits")) != 3u) guaranteed = false;
        }
    }
    if (!req.has[0] && !req.has[1] && !lim.has[0] && !lim.has[1]) return "BestEffort";
    for (int r = 0; r < 2 && guaranteed; r++) {
        if (!req.has[r]) continue;
        if (!lim.has[r] || kube_quantity_cmp(&lim.sum[r], &req.sum[r]) != 0) guaranteed = false;
    }
    if (guaranteed && req.has[0] + req.has[1] == lim.has[0] + lim.has[1]) return "Guaranteed";
    return "Burstable";
}

/* ---- admission ---- */

void as_default_tolerations(json_t *spec)
{
    bool not_ready = false, unreachable = false;
    json_t *tols = json_object_get(spec, "tolerations");
    size_t i;
    const json_t *t;
    json_array_foreach(tols, i, t)
    {
        const char *key = kube_str(t, "key"), *effect = kube_str(t, "effect");
        bool effect_ok = !*effect || strcmp(effect, "NoExecute") == 0;
        if (effect_ok && (!*key || strcmp(key, "node.kubernetes.io/not-ready") == 0))
            not_ready = true;
        if (effect_ok && (!*key || strcmp(key, "node.kubernetes.io/unreachable") == 0))
            unreachable = true;
    }
    if (not_ready && unreachable) return;
    if (!json_is_array(tols)) {
        tols = json_array();
        json_object_set_new(spec, "tolerations", tols);
    }
    static const char *const keys[2] = {"node.kubernetes.io/not-ready",
                                        "node.kubernetes.io/unreachable"};
    bool have[2] = {not_ready, unreachable};
    for (int k = 0; k < 2; k++)
        if (!have[k])
            json_array_append_new(tols, json_pack("{s:s, s:s, s:s, s:i}", "key", keys[k],
                                                  "operator", "Exists", "effect", "NoExecute",
                                                  "tolerationSeconds", 300));
}

/* v1 <-> internal conversion: serviceAccount is the deprecated twin of
 * serviceAccountName and always mirrors it on the way out. */
static void service_account_mirror(json_t *spec)
{
    if (as_str_unset(spec, "serviceAccountName") && !as_str_unset(spec, "serviceAccount"))
        json_object_set(spec, "serviceAccountName", json_object_get(spec, "serviceAccount"));
    if (as_str_unset(spec, "serviceAccountName")) {
        json_object_del(spec, "serviceAccount");
        return;
    }
    json_object_set(spec, "serviceAccount", json_object_get(spec, "serviceAccountName"));
}

/* Priority admission. With no PriorityClass objects only the default (0) and
 * the two built-in classes (pkg/apis/scheduling: system-cluster-critical
 * 2000000000, system-node-critical 2000001000) are known; a pod naming
 * another class is left alone (the real plugin refuses it). */
static void priority_defaults(json_t *spec)
{
    static const struct {
        const char *name;
        json_int_t value;
    } classes[] = {
        {"", 0}, {"system-cluster-critical", 2000000000}, {"system-node-critical", 2000001000}};
    const char *name = kube_str(spec, "priorityClassName");
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        if (strcmp(name, classes[i].name) != 0) continue;
        if (!json_is_integer(json_object_get(spec, "priority")))
            json_object_set_new(spec, "priority", json_integer(classes[i].value));
        if (as_str_unset(spec, "preemptionPolicy"))
            json_object_set_new(spec, "preemptionPolicy", json_string("PreemptLowerPriority"));
        return;
    }
}

void as_pod_create(json_t *pod)
{
    json_t *spec = as_obj(pod, "spec");
    if (!spec) return;
    as_pod_spec_defaults(spec, true);
    /* ServiceAccount admission (the token volume is left out: only describe
     * shows it) */
    service_account_mirror(spec);
    if (as_str_unset(spec, "serviceAccountName")) {
        json_object_set_new(spec, "serviceAccountName", json_string("default"));
        json_object_set_new(spec, "serviceAccount", json_string("default"));
    }
    priority_defaults(spec);
    as_default_tolerations(spec);
    json_object_set_new(pod, "status",
                        json_pack("{s:s, s:s}", "phase", "Pending", "qosClass", as_pod_qos(spec)));
}

static void set_copy_or_del(json_t *obj, const char *key, const json_t *from)
{
    if (from)
        json_object_set_new(obj, key, json_deep_copy(from));
    else
        json_object_del(obj, key);
}

void as_pod_update(json_t *pod, const json_t *old, bool status_subresource)
{
    json_t *spec = as_obj(pod, "spec");
    if (!spec) return;
    const json_t *old_spec = json_object_get(old, "spec");
    if (status_subresource) {
        /* the old spec as it is, not defaulted again: it was at its own
         * write. Shared, not copied: nothing changes a spec after this
         * (a status write is most of a busy cluster's writes). */
        if (old_spec)
            json_object_set(pod, "spec", (json_t *)old_spec);
        else
            json_object_del(pod, "spec");
        json_t *meta = as_obj(pod, "metadata");
        set_copy_or_del(meta, "ownerReferences",
                        json_object_get(json_object_get(old, "metadata"), "ownerReferences"));
        json_t *status = as_obj(pod, "status");
        const json_t *old_qos = json_object_get(json_object_get(old, "status"), "qosClass");
        if (status && as_str_unset(status, "qosClass") && old_qos)
            json_object_set(status, "qosClass", (json_t *)old_qos);
        return;
    }
    as_pod_spec_defaults(spec, true);
    service_account_mirror(spec);
    /* Priority admission keeps what it set at create */
    static const char *const kept[] = {"priority", "preemptionPolicy"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *was = json_object_get(old_spec, kept[i]);
        const json_t *now = json_object_get(spec, kept[i]);
        if ((!now || json_is_null(now)) && was)
            json_object_set_new(spec, kept[i], json_deep_copy(was));
    }
    as_default_tolerations(spec);
    set_copy_or_del(pod, "status", json_object_get(old, "status"));
}
