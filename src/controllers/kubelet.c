/* The fake kubelet's decisions: kwok's node and pod stages rendered as
 * strategic merge patches, plus what a real 1.32 kubelet writes that kwok
 * leaves out. Every builder collects into one patch and reports a failed
 * allocation once at the end, so a half-built patch never escapes. */
#include "controllers/kubelet_internal.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "kube/json.h"
#include "kube/pod.h"
#include "kube/time.h"

/* ---- reading objects ---- */

static bool nonempty(const char *s)
{
    return s && *s;
}

/* ---- building patches ---- */

/* Setters that remember a failure, so builders check once at the end. The
 * value's reference is taken even on failure (jansson's _new semantics). */
static void put(bool *ok, json_t *obj, const char *key, json_t *value)
{
    if (json_object_set_new(obj, key, value) != 0) *ok = false;
}

static void push(bool *ok, json_t *array, json_t *value)
{
    if (json_array_append_new(array, value) != 0) *ok = false;
}

/* {"status": st}, or NULL (st released) when building failed. */
static json_t *status_patch(json_t *st, bool ok)
{
    if (!ok || !st) {
        json_decref(st);
        return NULL;
    }
    json_t *patch = json_object();
    if (!patch || json_object_set_new(patch, "status", st) != 0) {
        json_decref(patch);
        return NULL;
    }
    return patch;
}

/* ---- nodes ---- */

bool ctl_kubelet_manages(const json_t *node)
{
    return kube_str_is(json_object_get(kube_obj(node, "metadata"), "annotations"),
                       CTL_KUBELET_NODE_ANNOTATION, "fake");
}

/* kwok's NodeConditions, in its order. */
static const ctl_kubelet_condition NODE_CONDITIONS[] = {
    {"Ready", "True", "KubeletReady", "kubelet is posting ready status"},
    {"MemoryPressure", "False", "KubeletHasSufficientMemory",
     "kubelet has sufficient memory available"},
    {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
    {"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
    {"NetworkUnavailable", "False", "RouteCreated", "RouteController created a route"},
};

const ctl_kubelet_condition *ctl_kubelet_conditions(size_t *count)
{
    *count = sizeof NODE_CONDITIONS / sizeof NODE_CONDITIONS[0];
    return NODE_CONDITIONS;
}

static json_t *init_conditions(const char *now, const char *transition)
{
    json_t *conds = json_array();
    bool ok = conds != NULL;
    for (size_t i = 0; ok && i < sizeof NODE_CONDITIONS / sizeof NODE_CONDITIONS[0]; i++) {
        const ctl_kubelet_condition *c = &NODE_CONDITIONS[i];
        push(&ok, conds,
             json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "lastHeartbeatTime", now,
                       "lastTransitionTime", transition, "message", c->message, "reason", c->reason,
                       "status", c->status, "type", c->type));
    }
    if (ok) return conds;
    json_decref(conds);
    return NULL;
}

static json_t *init_addresses(const json_t *node, const char *ip)
{
    json_t *addrs = json_array();
    bool ok = addrs != NULL;
    if (ok && nonempty(ip))
        push(&ok, addrs, json_pack("{s:s, s:s}", "address", ip, "type", "InternalIP"));
    const char *name = kube_str_or_null(kube_obj(node, "metadata"), "name");
    if (ok && nonempty(name))
        push(&ok, addrs, json_pack("{s:s, s:s}", "address", name, "type", "Hostname"));
    if (ok) return addrs;
    json_decref(addrs);
    return NULL;
}

/* nodeInfo with kwok's default for each field that is missing or empty. */
static json_t *init_node_info(const json_t *info)
{
    static const char *const fields[][2] = {
        {"architecture", "amd64"},
        {"bootID", ""},
        {"containerRuntimeVersion", CTL_KUBELET_KWOK_VERSION},
        {"kernelVersion", CTL_KUBELET_KWOK_VERSION},
        {"kubeProxyVersion", CTL_KUBELET_KWOK_VERSION},
        {"kubeletVersion", CTL_KUBELET_KWOK_VERSION},
        {"machineID", ""},
        {"operatingSystem", "linux"},
        {"osImage", ""},
        {"systemUUID", ""},
    };
    json_t *out = json_object();
    bool ok = out != NULL;
    for (size_t i = 0; ok && i < sizeof fields / sizeof fields[0]; i++) {
        const char *have = kube_str_or_null(info, fields[i][0]);
        put(&ok, out, fields[i][0], json_string(nonempty(have) ? have : fields[i][1]));
    }
    if (ok) return out;
    json_decref(out);
    return NULL;
}

static json_t *default_resources(void)
{
    return json_pack("{s:s, s:s, s:s}", "cpu", "1k", "memory", "1Ti", "pods", "1M");
}

json_t *ctl_kubelet_node_init(const json_t *node, const char *ip, time_t now)
{
    if (!ctl_kubelet_manages(node) || kube_str_is(kube_condition(node, "Ready"), "status", "True"))
        return NULL;
    char now_s[32];
    kube_time_format(now, now_s);
    const char *created = kube_str_or_null(kube_obj(node, "metadata"), "creationTimestamp");
    const json_t *have = kube_obj(node, "status");

    json_t *st = json_object();
    bool ok = st != NULL;
    if (ok) put(&ok, st, "conditions", init_conditions(now_s, nonempty(created) ? created : now_s));
    if (ok && json_array_size(json_object_get(have, "addresses")) == 0)
        put(&ok, st, "addresses", init_addresses(node, ip));
    if (ok)
        put(&ok, st, "daemonEndpoints",
            json_pack("{s:{s:i}}", "kubeletEndpoint", "Port", CTL_KUBELET_PORT));
    if (ok && json_object_size(json_object_get(have, "allocatable")) == 0)
        put(&ok, st, "allocatable", default_resources());
    if (ok && json_object_size(json_object_get(have, "capacity")) == 0)
        put(&ok, st, "capacity", default_resources());
    const json_t *info = json_object_get(have, "nodeInfo");
    if (ok && json_is_object(info)) put(&ok, st, "nodeInfo", init_node_info(info));
    if (ok) put(&ok, st, "phase", json_string("Running"));
    return status_patch(st, ok);
}

json_t *ctl_kubelet_node_heartbeat(const json_t *node, time_t now)
{
    /* kwok's stage also wants phase Running; nodes created Ready by the lab
     * may carry no phase, as real nodes do, and still need heartbeats. */
    if (!ctl_kubelet_manages(node) || !kube_str_is(kube_condition(node, "Ready"), "status", "True"))
        return NULL;
    char now_s[32];
    kube_time_format(now, now_s);
    json_t *st = json_object(), *conds = json_array();
    bool ok = st && conds;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(kube_obj(node, "status"), "conditions"), i, c)
    {
        const char *type = kube_str_or_null(c, "type");
        if (ok && type)
            push(&ok, conds, json_pack("{s:s, s:s}", "type", type, "lastHeartbeatTime", now_s));
    }
    if (st)
        put(&ok, st, "conditions", conds);
    else
        json_decref(conds);
    return status_patch(st, ok);
}

/* ---- pods: names and addresses ---- */

/* A pod the kubelet of `node` acts on: bound to it, managed, not deleting. */
static bool pod_on_node(const json_t *pod, const json_t *node)
{
    const char *bound = kube_str_or_null(kube_obj(pod, "spec"), "nodeName");
    const char *name = kube_str_or_null(kube_obj(node, "metadata"), "name");
    return nonempty(bound) && name && strcmp(bound, name) == 0 && ctl_kubelet_manages(node) &&
           !kube_deleting(pod);
}

/* The node's InternalIP, else its first address of any type, else NULL. */
static const char *node_ip(const json_t *node)
{
    const json_t *addrs = json_object_get(kube_obj(node, "status"), "addresses");
    size_t i;
    const json_t *a;
    json_array_foreach(addrs, i, a)
    {
        if (kube_str_is(a, "type", "InternalIP") && nonempty(kube_str_or_null(a, "address")))
            return kube_str_or_null(a, "address");
    }
    const char *first = kube_str_or_null(json_array_get(addrs, 0), "address");
    return nonempty(first) ? first : NULL;
}

_Static_assert(CTL_KUBELET_IP_MAX == INET6_ADDRSTRLEN, "kubelet_internal.h: room for an address");

/* Address `index` of `cidr` the way the header describes kwok's pool. The
 * arithmetic runs on the low 64 bits, which hold every host bit of an IPv4
 * CIDR and of any IPv6 one a node gets (/64 or longer); wider host parts
 * only use their low 62 bits. */
static bool cidr_address(const char *cidr, unsigned index, char out[INET6_ADDRSTRLEN])
{
    const char *slash = cidr ? strchr(cidr, '/') : NULL;
    if (!slash || slash == cidr || (size_t)(slash - cidr) >= INET6_ADDRSTRLEN) return false;
    char text[INET6_ADDRSTRLEN];
    memcpy(text, cidr, (size_t)(slash - cidr));
    text[slash - cidr] = '\0';
    char *end;
    long prefix = strtol(slash + 1, &end, 10);
    if (end == slash + 1 || *end) return false;

    unsigned char bytes[16];
    int family = AF_INET;
    size_t len = 4;
    if (inet_pton(AF_INET, text, bytes) != 1) {
        if (inet_pton(AF_INET6, text, bytes) != 1) return false;
        family = AF_INET6;
        len = 16;
    }
    if (prefix < 0 || (size_t)prefix > len * 8) return false;

    unsigned host_bits = (unsigned)(len * 8 - (size_t)prefix);
    if (host_bits > 62) host_bits = 62;
    size_t low_len = len < 8 ? len : 8;
    uint64_t low = 0;
    for (size_t i = len - low_len; i < len; i++)
        low = low << 8 | bytes[i];
    uint64_t size = (uint64_t)1 << host_bits, mask = size - 1;
    /* IPv4 keeps the broadcast address out; IPv6 has none. */
    uint64_t usable = family == AF_INET ? (size >= 4 ? size - 2 : 0) : size - 1;
    if (usable > 0) {
        uint64_t start = low & mask;
        if (start == 0 || start > usable) start = 1;
        uint64_t off = 1 + (start - 1 + index) % usable;
        low = (low & ~mask) | off;
    }
    for (size_t i = len; i-- > len - low_len;) {
        bytes[i] = (unsigned char)(low & 0xff);
        low >>= 8;
    }
    return inet_ntop(family, bytes, out, INET6_ADDRSTRLEN) != NULL;
}

static bool pod_ip(const json_t *pod, const json_t *node, const char *host_ip, unsigned index,
                   char out[INET6_ADDRSTRLEN])
{
    if (json_is_true(json_object_get(kube_obj(pod, "spec"), "hostNetwork")) && host_ip) {
        snprintf(out, INET6_ADDRSTRLEN, "%s", host_ip);
        return true;
    }
    const char *cidr = kube_str_or_null(kube_obj(node, "spec"), "podCIDR");
    if (cidr_address(cidr, index, out)) return true;
    return cidr_address(CTL_KUBELET_DEFAULT_CIDR, index, out);
}

/* 64 hex digits that depend only on `text`: four FNV-1a lanes through the
 * splitmix64 finalizer. Stands in for a digest; nothing checks it. */
static void derive_hex(const char *text, char out[65])
{
    for (unsigned lane = 0; lane < 4; lane++) {
        uint64_t h = 0xcbf29ce484222325ULL ^ (lane * 0x9e3779b97f4a7c15ULL);
        for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
            h ^= *p;
            h *= 0x100000001b3ULL;
        }
        h ^= h >> 30;
        h *= 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 27;
        h *= 0x94d049bb133111ebULL;
        h ^= h >> 31;
        snprintf(out + lane * 16, 17, "%016llx", (unsigned long long)h);
    }
}

/* containerd's imageID: the fully qualified repository and a digest
 * ("nginx:1.25" -> "docker.io/library/nginx@sha256:..."); an image pinned by
 * digest keeps its own. The caller frees the result. */
static char *image_id(const char *image)
{
    const char *at = strchr(image, '@');
    size_t repo_len = at ? (size_t)(at - image) : strlen(image);
    const char *last_slash = NULL;
    for (const char *p = image; p < image + repo_len; p++)
        if (*p == '/') last_slash = p;
    const char *colon = memchr(last_slash ? last_slash : image, ':',
                               repo_len - (size_t)((last_slash ? last_slash : image) - image));
    if (colon) repo_len = (size_t)(colon - image); /* the tag goes; a digest stays */

    const char *first_slash = memchr(image, '/', repo_len);
    const char *prefix = "";
    if (!first_slash) {
        prefix = "docker.io/library/";
    } else {
        size_t host_len = (size_t)(first_slash - image);
        bool is_host = memchr(image, '.', host_len) || memchr(image, ':', host_len) ||
                       (host_len == 9 && strncmp(image, "localhost", 9) == 0);
        if (!is_host) prefix = "docker.io/";
    }
    char hex[65];
    derive_hex(image, hex);
    size_t size = strlen(prefix) + repo_len + strlen(at ? at : "") + sizeof "@sha256:" + 64;
    char *out = malloc(size);
    if (!out) return NULL;
    if (at)
        snprintf(out, size, "%s%.*s%s", prefix, (int)repo_len, image, at);
    else
        snprintf(out, size, "%s%.*s@sha256:%s", prefix, (int)repo_len, image, hex);
    return out;
}

static void container_id(const json_t *pod, const char *container, char out[80])
{
    const char *uid = kube_str_or_null(kube_obj(pod, "metadata"), "uid");
    char key[1024];
    if (nonempty(uid))
        snprintf(key, sizeof key, "%s/%s", uid, container);
    else
        snprintf(key, sizeof key, "%s/%s/%s", kube_str(kube_obj(pod, "metadata"), "namespace"),
                 kube_str(kube_obj(pod, "metadata"), "name"), container);
    char hex[65];
    derive_hex(key, hex);
    snprintf(out, 80, "containerd://%s", hex);
}

/* ---- pods: statuses ---- */

typedef enum { RUNS, COMPLETED } run_state;

/* A container status in the field order the API server writes. */
static json_t *started_status(const json_t *pod, const json_t *c, run_state how, const char *now)
{
    const char *name = kube_str_or_null(c, "name"), *image = kube_str_or_null(c, "image");
    if (!name) name = "";
    if (!image) image = "";
    char cid[80];
    container_id(pod, name, cid);
    char *iid = image_id(image);
    if (!iid) return NULL;
    json_t *state = how == RUNS ? json_pack("{s:{s:s}}", "running", "startedAt", now)
                                : json_pack("{s:{s:s, s:i, s:s, s:s, s:s}}", "terminated",
                                            "containerID", cid, "exitCode", 0, "finishedAt", now,
                                            "reason", "Completed", "startedAt", now);
    json_t *st = json_pack("{s:s, s:o, s:{}, s:b, s:i, s:s, s:s, s:s, s:b}", "name", name, "state",
                           state, "lastState", "ready", 1, "restartCount", 0, "image", image,
                           "imageID", iid, "containerID", cid, "started", how == RUNS);
    free(iid);
    return st;
}

static json_t *ready_condition(const char *type, const char *now)
{
    return json_pack("{s:s, s:s, s:n, s:s, s:n, s:n}", "type", type, "status", "True",
                     "lastProbeTime", "lastTransitionTime", now, "reason", "message");
}

static json_t *ready_conditions(const json_t *pod, const char *now)
{
    static const char *const types[] = {"PodReadyToStartContainers", "Initialized", "Ready",
                                        "ContainersReady"};
    json_t *conds = json_array();
    bool ok = conds != NULL;
    for (size_t i = 0; ok && i < sizeof types / sizeof types[0]; i++)
        push(&ok, conds, ready_condition(types[i], now));
    size_t i;
    const json_t *gate;
    json_array_foreach(json_object_get(kube_obj(pod, "spec"), "readinessGates"), i, gate)
    {
        const char *type = kube_str_or_null(gate, "conditionType");
        if (ok && nonempty(type)) push(&ok, conds, ready_condition(type, now));
    }
    if (ok) return conds;
    json_decref(conds);
    return NULL;
}

static json_t *ready_statuses(const json_t *pod, const char *list, bool init, const char *now)
{
    json_t *out = json_array();
    bool ok = out != NULL;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(kube_obj(pod, "spec"), list), i, c)
    {
        run_state how = !init || kube_container_is_sidecar(c) ? RUNS : COMPLETED;
        if (ok) push(&ok, out, started_status(pod, c, how, now));
    }
    if (ok) return out;
    json_decref(out);
    return NULL;
}

/* "<field>": ip and "<field>s": [{"ip": ip}] (hostIP/hostIPs, podIP/podIPs). */
static void put_ips(bool *ok, json_t *st, const char *field, const char *ip)
{
    char list[16];
    snprintf(list, sizeof list, "%ss", field);
    put(ok, st, field, json_string(ip));
    put(ok, st, list, json_pack("[{s:s}]", "ip", ip));
}

bool ctl_kubelet_pod_address(const json_t *pod, const json_t *node, unsigned ip_index,
                             char out[CTL_KUBELET_IP_MAX])
{
    return pod_ip(pod, node, node_ip(node), ip_index, out);
}

/* The status of a container that exits at once with code 1 and waits for
 * its restart (kuberuntime_manager.go doBackOff: "back-off %s restarting
 * failed container=%s pod=%s" with format.Pod's NAME_NAMESPACE(UID); the
 * first back-off is 10 s, backOffPeriod in kubelet.go). */
static json_t *crashed_status(const json_t *pod, const json_t *c, const char *now)
{
    const char *name = kube_str_or_null(c, "name"), *image = kube_str_or_null(c, "image");
    if (!name) name = "";
    if (!image) image = "";
    const json_t *meta = kube_obj(pod, "metadata");
    char cid[80], message[900];
    container_id(pod, name, cid);
    snprintf(message, sizeof message, "back-off 10s restarting failed container=%s pod=%s_%s(%s)",
             name, kube_str(meta, "name"), kube_str(meta, "namespace"), kube_str(meta, "uid"));
    char *iid = image_id(image);
    if (!iid) return NULL;
    json_t *st = json_pack(
        "{s:s, s:{s:{s:s, s:s}}, s:{s:{s:s, s:i, s:s, s:s, s:s}}, s:b, s:i, s:s, s:s, s:s, s:b}",
        "name", name, "state", "waiting", "reason", "CrashLoopBackOff", "message", message,
        "lastState", "terminated", "containerID", cid, "exitCode", 1, "finishedAt", now, "reason",
        "Error", "startedAt", now, "ready", 0, "restartCount", 1, "image", image, "imageID", iid,
        "containerID", cid, "started", 0);
    free(iid);
    return st;
}

static json_t *started_conditions(const json_t *pod, const char *crashed, const char *now);

json_t *ctl_kubelet_pod_started(const json_t *pod, const json_t *node, const char *ip,
                                const char *crashed, time_t now)
{
    if (!pod_on_node(pod, node) || !nonempty(ip)) return NULL;
    char now_s[32];
    kube_time_format(now, now_s);
    const char *host = node_ip(node);

    json_t *st = json_object();
    bool ok = st != NULL;
    if (ok)
        put(&ok, st, "conditions",
            crashed ? started_conditions(pod, crashed, now_s) : ready_conditions(pod, now_s));
    json_t *containers = ok ? ready_statuses(pod, "containers", false, now_s) : NULL;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(kube_obj(pod, "spec"), "containers"), i, c)
    {
        if (ok && containers && crashed && kube_str_is(c, "name", crashed))
            if (json_array_set_new(containers, i, crashed_status(pod, c, now_s)) != 0) ok = false;
    }
    if (ok) put(&ok, st, "containerStatuses", containers);
    if (ok && json_array_size(json_object_get(kube_obj(pod, "spec"), "initContainers")) > 0)
        put(&ok, st, "initContainerStatuses", ready_statuses(pod, "initContainers", true, now_s));
    if (ok && host) put_ips(&ok, st, "hostIP", host);
    if (ok) put_ips(&ok, st, "podIP", ip);
    if (ok) put(&ok, st, "phase", json_string("Running"));
    if (ok) put(&ok, st, "startTime", json_string(now_s));
    return status_patch(st, ok);
}

json_t *ctl_kubelet_pod_ready(const json_t *pod, const json_t *node, unsigned ip_index, time_t now)
{
    if (!pod_on_node(pod, node) || nonempty(kube_str_or_null(kube_obj(pod, "status"), "podIP")))
        return NULL;
    char ip[INET6_ADDRSTRLEN];
    if (!ctl_kubelet_pod_address(pod, node, ip_index, ip)) return NULL;
    return ctl_kubelet_pod_started(pod, node, ip, NULL, now);
}

/* ---- pods: a sandbox that cannot be created ---- */

/* Go's fmt "%s" of a []string: "[a b]". The caller frees the result. */
static char *go_string_list(const json_t *names)
{
    size_t size = 3, i;
    const json_t *n;
    json_array_foreach(names, i, n) size += json_string_length(n) + 1;
    char *out = malloc(size);
    if (!out) return NULL;
    size_t at = 0;
    out[at++] = '[';
    json_array_foreach(names, i, n)
    {
        if (i > 0) out[at++] = ' ';
        memcpy(out + at, json_string_value(n), json_string_length(n));
        at += json_string_length(n);
    }
    out[at++] = ']';
    out[at] = '\0';
    return out;
}

static void add_names(bool *ok, json_t *names, const json_t *containers, bool sidecars_only)
{
    size_t i;
    const json_t *c;
    json_array_foreach(containers, i, c)
    {
        if (!sidecars_only || kube_container_is_sidecar(c))
            push(ok, names, json_string(kube_str(c, "name")));
    }
}

/* The containers the kubelet's readiness walk finds unready (sidecars first,
 * as it visits them first) or, for `init`, the init containers that have not
 * completed: every one, while no sandbox exists. */
static char *stuck_names(const json_t *pod, bool init)
{
    json_t *names = json_array();
    bool ok = names != NULL;
    const json_t *inits = json_object_get(kube_obj(pod, "spec"), "initContainers");
    if (ok) add_names(&ok, names, inits, !init);
    if (ok && !init)
        add_names(&ok, names, json_object_get(kube_obj(pod, "spec"), "containers"), false);
    char *out = ok ? go_string_list(names) : NULL;
    json_decref(names);
    return out;
}

static json_t *false_condition(const char *type, const char *reason, const char *what,
                               const char *names, const char *now)
{
    if (!reason)
        return json_pack("{s:s, s:s, s:n, s:s}", "type", type, "status", "False", "lastProbeTime",
                         "lastTransitionTime", now);
    size_t size = strlen(what) + strlen(names) + 32;
    char *message = malloc(size);
    if (!message) return NULL;
    snprintf(message, size, "containers with %s status: %s", what, names);
    json_t *c =
        json_pack("{s:s, s:s, s:n, s:s, s:s, s:s}", "type", type, "status", "False",
                  "lastProbeTime", "lastTransitionTime", now, "reason", reason, "message", message);
    free(message);
    return c;
}

static json_t *stuck_conditions(const json_t *pod, bool has_init, const char *now)
{
    char *unready = stuck_names(pod, false);
    char *incomplete = stuck_names(pod, true);
    json_t *conds = json_array();
    bool ok = conds && unready && incomplete;
    if (ok) push(&ok, conds, false_condition("PodReadyToStartContainers", NULL, NULL, NULL, now));
    if (ok && has_init)
        push(&ok, conds,
             false_condition("Initialized", "ContainersNotInitialized", "incomplete", incomplete,
                             now));
    else if (ok)
        push(&ok, conds,
             json_pack("{s:s, s:s, s:n, s:s}", "type", "Initialized", "status", "True",
                       "lastProbeTime", "lastTransitionTime", now));
    if (ok)
        push(&ok, conds, false_condition("Ready", "ContainersNotReady", "unready", unready, now));
    if (ok)
        push(&ok, conds,
             false_condition("ContainersReady", "ContainersNotReady", "unready", unready, now));
    free(unready);
    free(incomplete);
    if (ok) return conds;
    json_decref(conds);
    return NULL;
}

/* A pod whose sandbox runs and one container does not: ready to start
 * containers and initialized, not Ready, naming that container. */
static json_t *started_conditions(const json_t *pod, const char *crashed, const char *now)
{
    json_t *names = json_pack("[s]", crashed);
    char *unready = names ? go_string_list(names) : NULL;
    json_decref(names);
    json_t *conds = json_array();
    bool ok = conds && unready;
    if (ok) push(&ok, conds, ready_condition("PodReadyToStartContainers", now));
    if (ok) push(&ok, conds, ready_condition("Initialized", now));
    if (ok)
        push(&ok, conds, false_condition("Ready", "ContainersNotReady", "unready", unready, now));
    if (ok)
        push(&ok, conds,
             false_condition("ContainersReady", "ContainersNotReady", "unready", unready, now));
    (void)pod;
    free(unready);
    if (ok) return conds;
    json_decref(conds);
    return NULL;
}

static json_t *waiting_statuses(const json_t *pod, const char *list, const char *reason)
{
    json_t *out = json_array();
    bool ok = out != NULL;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(kube_obj(pod, "spec"), list), i, c)
    {
        const char *name = kube_str_or_null(c, "name"), *image = kube_str_or_null(c, "image");
        if (ok)
            push(&ok, out,
                 json_pack("{s:s, s:{s:{s:s}}, s:{}, s:b, s:i, s:s, s:s, s:b}", "name",
                           name ? name : "", "state", "waiting", "reason", reason, "lastState",
                           "ready", 0, "restartCount", 0, "image", image ? image : "", "imageID",
                           "", "started", 0));
    }
    if (ok) return out;
    json_decref(out);
    return NULL;
}

static json_t *stuck_status(const json_t *pod, const json_t *node, const char *now)
{
    bool has_init = json_array_size(json_object_get(kube_obj(pod, "spec"), "initContainers")) > 0;
    const char *host = node_ip(node);
    json_t *st = json_object();
    bool ok = st != NULL;
    if (ok) put(&ok, st, "conditions", stuck_conditions(pod, has_init, now));
    if (ok)
        put(&ok, st, "containerStatuses",
            waiting_statuses(pod, "containers",
                             has_init ? "PodInitializing" : "ContainerCreating"));
    if (ok && has_init)
        put(&ok, st, "initContainerStatuses",
            waiting_statuses(pod, "initContainers", "PodInitializing"));
    if (ok && host) put_ips(&ok, st, "hostIP", host);
    if (ok) put(&ok, st, "phase", json_string("Pending"));
    if (ok) put(&ok, st, "startTime", json_string(now));
    return status_patch(st, ok);
}

/* The pod shows the failure already: the kubelet retries, the status holds. */
static bool shows_stuck(const json_t *pod)
{
    return kube_str_is(kube_condition(pod, "PodReadyToStartContainers"), "status", "False") &&
           json_array_size(json_object_get(kube_obj(pod, "status"), "containerStatuses")) ==
               json_array_size(json_object_get(kube_obj(pod, "spec"), "containers"));
}

json_t *ctl_kubelet_pod_sandbox_failed(const json_t *pod, const json_t *node, const char *error,
                                       time_t now, char **event_note)
{
    if (event_note) *event_note = NULL;
    /* A pod with an address has its sandbox: losing the handler later (a
     * containerd restart) does not stop it. */
    if (!pod_on_node(pod, node) || nonempty(kube_str_or_null(kube_obj(pod, "status"), "podIP")))
        return NULL;
    /* kuberuntime_manager.go: "Failed to create pod sandbox: %v". */
    static const char fmt[] = "Failed to create pod sandbox: %s";
    size_t size = sizeof fmt + strlen(error);
    char *note = malloc(size);
    if (!note) return NULL;
    snprintf(note, size, fmt, error);

    char now_s[32];
    kube_time_format(now, now_s);
    json_t *patch = shows_stuck(pod) ? json_object() : stuck_status(pod, node, now_s);
    if (!patch) {
        free(note);
        return NULL;
    }
    if (event_note)
        *event_note = note;
    else
        free(note);
    return patch;
}

void ctl_kubelet_no_runtime_error(const json_t *pod, const char *handler, bool v2, char *out,
                                  size_t cap)
{
    /* Handlers are DNS labels (RuntimeClass validation), so Go's %q is the
     * name between plain double quotes. */
    if (!v2) {
        snprintf(out, cap,
                 "rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "
                 "\"%s\" is configured",
                 handler);
        return;
    }
    /* 2.x: RunPodSandbox names the sandbox id it generated (64 hex digits,
     * new at every try; here one a pod). */
    char key[600], id[65];
    snprintf(key, sizeof key, "%s/sandbox", kube_str(kube_obj(pod, "metadata"), "uid"));
    derive_hex(key, id);
    snprintf(out, cap,
             "rpc error: code = Unknown desc = unable to get OCI runtime for sandbox \"%s\": no "
             "runtime for \"%s\" is configured",
             id, handler);
}

json_t *ctl_kubelet_pod_runtime_missing(const json_t *pod, const json_t *node,
                                        const json_t *runtimeclass, time_t now, char **event_note)
{
    if (event_note) *event_note = NULL;
    if (!runtimeclass) return NULL;
    const char *name = kube_str_or_null(kube_obj(pod, "spec"), "runtimeClassName");
    const char *handler = kube_str_or_null(runtimeclass, "handler");
    if (!nonempty(name) || !kube_str_is(kube_obj(runtimeclass, "metadata"), "name", name) ||
        !handler)
        return NULL;
    const json_t *handlers = json_object_get(kube_obj(node, "status"), "runtimeHandlers");
    if (!json_is_array(handlers) || kube_find(handlers, "name", handler)) return NULL;
    char error[512];
    ctl_kubelet_no_runtime_error(pod, handler, false, error, sizeof error);
    return ctl_kubelet_pod_sandbox_failed(pod, node, error, now, event_note);
}

/* ---- pods: back from a node that was down ---- */

json_t *ctl_kubelet_pod_ready_again(const json_t *pod, const json_t *node, time_t now)
{
    if (!pod_on_node(pod, node) || !kube_str_is(kube_condition(node, "Ready"), "status", "True") ||
        !kube_str_is(kube_obj(pod, "status"), "phase", "Running") ||
        !kube_str_is(kube_condition(pod, "Ready"), "status", "False"))
        return NULL;
    char now_s[32];
    kube_time_format(now, now_s);
    return json_pack("{s:{s:[{s:s, s:s, s:s}]}}", "status", "conditions", "type", "Ready", "status",
                     "True", "lastTransitionTime", now_s);
}

/* ---- pods: deletion ---- */

bool ctl_kubelet_should_finish_delete(const json_t *pod)
{
    return kube_deleting(pod) && nonempty(kube_str_or_null(kube_obj(pod, "spec"), "nodeName"));
}

json_t *ctl_kubelet_pod_finalizers_patch(const json_t *pod)
{
    if (json_array_size(json_object_get(kube_obj(pod, "metadata"), "finalizers")) == 0) return NULL;
    return json_pack("{s:{s:n}}", "metadata", "finalizers");
}
