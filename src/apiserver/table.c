/* Server-side printing, after kube-apiserver 1.32's
 * pkg/printers/internalversion/printers.go (column definitions and print*
 * functions), apimachinery's util/duration (ages) and the generic
 * registry/rest/table.go convertor (kinds without a printer).
 *
 * The printers read the internal (converted) object; here they read the
 * stored JSON, so where a v1 field is converted on the way in (pod IPs, the
 * events.k8s.io field names) the conversion is done at the point of reading. */
#include "apiserver/table.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/label_selector.h"
#include "kube/pod_print.h"
#include "kube/selector.h"
#include "kube/time.h"
#include "util/buf.h"
#include "util/error.h"

#define NS_PER_SEC 1000000000LL

/* ---- times ---------------------------------------------------------------- */

/* time.Since: saturates instead of overflowing, as Time.Sub does. */
static long long since_ns(kube_time t, time_t now)
{
    long long ds = (long long)now - t.sec;
    if (ds > INT64_MAX / NS_PER_SEC - 1) return INT64_MAX;
    if (ds < INT64_MIN / NS_PER_SEC + 1) return INT64_MIN;
    return ds * NS_PER_SEC - t.nsec;
}

/* duration.HumanDuration, rule for rule; Go's integer conversions truncate
 * toward zero as C's division does. */
static size_t human_duration_ns(long long d, char *buf, size_t size)
{
    long long seconds = d / NS_PER_SEC;
    if (seconds < -1) return (size_t)snprintf(buf, size, "<invalid>");
    if (seconds < 0) return (size_t)snprintf(buf, size, "0s");
    if (seconds < 60 * 2) return (size_t)snprintf(buf, size, "%llds", seconds);
    long long minutes = d / (60 * NS_PER_SEC);
    if (minutes < 10) {
        long long s = seconds % 60;
        if (s == 0) return (size_t)snprintf(buf, size, "%lldm", minutes);
        return (size_t)snprintf(buf, size, "%lldm%llds", minutes, s);
    }
    if (minutes < 60 * 3) return (size_t)snprintf(buf, size, "%lldm", minutes);
    long long hours = d / (3600 * NS_PER_SEC);
    if (hours < 8) {
        long long m = minutes % 60;
        if (m == 0) return (size_t)snprintf(buf, size, "%lldh", hours);
        return (size_t)snprintf(buf, size, "%lldh%lldm", hours, m);
    }
    if (hours < 48) return (size_t)snprintf(buf, size, "%lldh", hours);
    if (hours < 24 * 8) {
        long long h = hours % 24;
        if (h == 0) return (size_t)snprintf(buf, size, "%lldd", hours / 24);
        return (size_t)snprintf(buf, size, "%lldd%lldh", hours / 24, h);
    }
    if (hours < 24 * 365 * 2) return (size_t)snprintf(buf, size, "%lldd", hours / 24);
    if (hours < 24 * 365 * 8) {
        long long dy = hours / 24 % 365;
        if (dy == 0) return (size_t)snprintf(buf, size, "%lldy", hours / 24 / 365);
        return (size_t)snprintf(buf, size, "%lldy%lldd", hours / 24 / 365, dy);
    }
    return (size_t)snprintf(buf, size, "%lldy", hours / 24 / 365);
}

size_t as_human_duration(long long seconds, char *buf, size_t size)
{
    long long d = seconds > INT64_MAX / NS_PER_SEC   ? INT64_MAX
                  : seconds < INT64_MIN / NS_PER_SEC ? INT64_MIN
                                                     : seconds * NS_PER_SEC;
    return human_duration_ns(d, buf, size);
}

/* ---- reading the stored JSON -------------------------------------------- */

static kube_time time_at(const json_t *o, const char *key)
{
    return kube_time_of(kube_get(o, key));
}

/* ---- cells ---------------------------------------------------------------- */

/* One row's cells; `oom` records a failed allocation so that the builders
 * stay straight-line and as_table answers NULL once at the end. */
typedef struct {
    json_t *cells;
    bool oom;
} row_cells;

typedef struct {
    time_t now;
} print_ctx;

static void put(row_cells *c, json_t *v)
{
    if (json_array_append_new(c->cells, v) != 0) c->oom = true;
}

static void put_str(row_cells *c, const char *s)
{
    put(c, json_string(s));
}

static void put_int(row_cells *c, long long v)
{
    put(c, json_integer(v));
}

/* Takes the string (NULL after a failed allocation). */
static void put_owned(row_cells *c, char *s)
{
    if (!s) {
        c->oom = true;
        return;
    }
    put_str(c, s);
    free(s);
}

/* translateTimestampSince / translateMicroTimestampSince. */
static char *since_text(kube_time t, time_t now)
{
    if (!t.set) return strdup("<unknown>");
    char buf[32];
    human_duration_ns(since_ns(t, now), buf, sizeof buf);
    return strdup(buf);
}

static void put_age(row_cells *c, const json_t *obj, const print_ctx *ctx)
{
    put_owned(c, since_text(time_at(kube_get(obj, "metadata"), "creationTimestamp"), ctx->now));
}

static void put_name(row_cells *c, const json_t *obj)
{
    put_str(c, kube_str(kube_get(obj, "metadata"), "name"));
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* strings.Join; NULL when memory runs out. */
static char *join(const char *const *items, size_t n, const char *sep)
{
    gp_buf b = {0};
    gp_buf_join(&b, items, n, sep);
    return gp_buf_take(&b);
}

/* labels.FormatLabels: "k=v" sorted by key, joined by ","; "<none>" if empty. */
static char *format_labels(const json_t *map)
{
    size_t n = json_is_object(map) ? json_object_size(map) : 0;
    if (n == 0) return strdup("<none>");
    const char **keys = calloc(n, sizeof *keys);
    char **pairs = calloc(n, sizeof *pairs);
    char *out = NULL;
    if (!keys || !pairs) goto done;
    const char *key;
    json_t *value;
    size_t i = 0;
    json_object_foreach((json_t *)map, key, value)
    {
        keys[i++] = key;
    }
    qsort(keys, n, sizeof *keys, compare_strings);
    for (i = 0; i < n; i++)
        if (!(pairs[i] = gp_format("%s=%s", keys[i], kube_str(map, keys[i])))) goto done;
    out = join((const char *const *)pairs, n, ",");
done:
    for (i = 0; pairs && i < n; i++)
        free(pairs[i]);
    free(pairs);
    free(keys);
    return out;
}

/* ---- label selectors as metav1.FormatLabelSelector writes them ----------- */

typedef struct {
    const char *key;
    char *text;
} requirement;

/* Requirement.String of an In/NotIn expression: values sorted on output. */
static char *set_requirement_text(const char *key, const char *op, const json_t *values)
{
    size_t n = json_array_size(values);
    const char **sorted = calloc(n, sizeof *sorted);
    if (!sorted) return NULL;
    for (size_t i = 0; i < n; i++)
        sorted[i] = json_string_value(json_array_get(values, i));
    qsort(sorted, n, sizeof *sorted, compare_strings);
    char *list = join(sorted, n, ",");
    char *text = list ? gp_format("%s %s (%s)", key, op, list) : NULL;
    free(list);
    free(sorted);
    return text;
}

/* One matchExpressions entry as Requirement.String writes it; NULL with
 * *invalid set when NewRequirement would refuse it, NULL alone when memory
 * runs out. */
static char *expression_text(const json_t *expr, bool *invalid)
{
    const char *key = kube_str(expr, "key");
    const char *op = kube_str(expr, "operator");
    const json_t *values = kube_get(expr, "values");
    if (!kube_requirement_valid(expr, KUBE_REQ_LABEL_SELECTOR)) {
        *invalid = true;
        return NULL;
    }
    if (!strcmp(op, "Exists")) return strdup(key);
    if (!strcmp(op, "DoesNotExist")) return gp_format("!%s", key);
    return set_requirement_text(key, !strcmp(op, "In") ? "in" : "notin", values);
}

/* Selector.Add sorts requirements by key; stable here so that equal keys
 * keep a fixed order (Go's sort.Sort leaves it unspecified). */
static void sort_requirements(requirement *reqs, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        requirement r = reqs[i];
        size_t j = i;
        for (; j > 0 && strcmp(reqs[j - 1].key, r.key) > 0; j--)
            reqs[j] = reqs[j - 1];
        reqs[j] = r;
    }
}

/* Fills reqs from matchLabels then matchExpressions; -1 on an invalid
 * requirement (*invalid set) or a failed allocation. */
static int collect_requirements(const json_t *sel, requirement *reqs, size_t *n, bool *invalid)
{
    const json_t *labels = kube_get(sel, "matchLabels");
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)labels, key, value)
    {
        if (!json_is_string(value) || kube_label_validate_key(key, NULL) < 0 ||
            kube_label_validate_value(json_string_value(value), NULL) < 0) {
            *invalid = true;
            return -1;
        }
        reqs[*n].key = key;
        if (!(reqs[(*n)++].text = gp_format("%s=%s", key, json_string_value(value)))) return -1;
    }
    size_t i;
    json_t *expr;
    json_array_foreach(kube_get(sel, "matchExpressions"), i, expr)
    {
        reqs[*n].key = kube_str(expr, "key");
        if (!(reqs[(*n)++].text = expression_text(expr, invalid))) return -1;
    }
    return 0;
}

/* metav1.FormatLabelSelector: "<none>" for a missing or empty selector,
 * "<error>" for one LabelSelectorAsSelector refuses. */
static char *format_label_selector(const json_t *sel)
{
    const json_t *labels = kube_get(sel, "matchLabels");
    const json_t *exprs = kube_get(sel, "matchExpressions");
    size_t max = (json_is_object(labels) ? json_object_size(labels) : 0) + json_array_size(exprs);
    if (max == 0) return strdup("<none>");
    requirement *reqs = calloc(max, sizeof *reqs);
    if (!reqs) return NULL;
    size_t n = 0;
    bool invalid = false;
    char *out = NULL;
    if (collect_requirements(sel, reqs, &n, &invalid) == 0) {
        sort_requirements(reqs, n);
        const char **texts = calloc(n, sizeof *texts);
        for (size_t i = 0; texts && i < n; i++)
            texts[i] = reqs[i].text;
        out = texts ? join(texts, n, ",") : NULL;
        free(texts);
    } else if (invalid) {
        out = strdup("<error>");
    }
    for (size_t i = 0; i < n; i++)
        free(reqs[i].text);
    free(reqs);
    return out;
}

/* ---- column definitions ------------------------------------------------- */

typedef struct {
    const char *name;
    const char *type;
    const char *format;
    const char *description;
    int priority;
} column;

/* SwaggerDoc texts of k8s.io/api and apimachinery v0.32, which the printers
 * use as descriptions. */
#define DOC_NAME                                                                                   \
    "Name must be unique within a namespace. Is required when creating resources, although "       \
    "some resources may allow a client to request the generation of an appropriate name "          \
    "automatically. Name is primarily intended for creation idempotence and configuration "        \
    "definition. Cannot be updated. More info: "                                                   \
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
#define DOC_CREATED                                                                                \
    "CreationTimestamp is a timestamp representing the server time when this object was "          \
    "created. It is not guaranteed to be set in happens-before order across separate "             \
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "     \
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "                      \
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"                            \
    "api-conventions.md#metadata"
#define DOC_POD_IP                                                                                 \
    "podIP address allocated to the pod. Routable at least within the cluster. Empty if not "      \
    "yet allocated."
#define DOC_NODE_NAME                                                                              \
    "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate "   \
    "for scheduling by the scheduler defined in schedulerName. Once this field is set, the "       \
    "kubelet for this node becomes responsible for the lifecycle of this pod. This field should "  \
    "not be used to express a desire for the pod to be scheduled on a specific node. "             \
    "https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename"
#define DOC_NOMINATED                                                                              \
    "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot "  \
    "be scheduled right away as preemption victims receive their graceful termination periods. "   \
    "This field does not guarantee that the pod will be scheduled on this node. Scheduler may "    \
    "decide to place the pod elsewhere if other nodes become available sooner. Scheduler may "     \
    "also decide to give the resources on this node to a higher priority pod that is created "     \
    "after preemption. As a result, this field may be different than PodSpec.nodeName when the "   \
    "pod is scheduled."
#define DOC_READINESS_GATES                                                                        \
    "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when "  \
    "all its containers are ready AND all conditions specified in the readiness gates have "       \
    "status equal to \"True\" More info: "                                                         \
    "https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates"
#define DOC_NODE_SELECTOR                                                                          \
    "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which "  \
    "must match a node's labels for the pod to be scheduled on that node. More info: "             \
    "https://kubernetes.io/docs/concepts/configuration/assign-pod-node/"
#define DOC_DS_MORE                                                                                \
    "More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/"
#define DOC_ADDRESSES                                                                              \
    "List of addresses reachable to the node. Queried from cloud provider, if available. More "    \
    "info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is "  \
    "declared as mergeable, but the merge key is not sufficiently unique, which can cause data "   \
    "corruption when it is merged. Callers should instead use a full-replacement patch. See "      \
    "https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change "   \
    "during the lifetime of a Node. However, there are some exceptions where this may not be "     \
    "possible, such as Pods that inherit a Node's address in its own status or consumers of the "  \
    "downward API (status.hostIP)."
#define DOC_FIELD_PATH                                                                             \
    "If referring to a piece of an object instead of an entire object, this string should "        \
    "contain a valid JSON/Go field access statement, such as "                                     \
    "desiredState.manifest.containers[2]. For example, if the object reference is to a "           \
    "container within a pod, this would take on a value like: \"spec.containers{name}\" (where "   \
    "\"name\" refers to the name of the container that triggered the event) or if no container "   \
    "name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax "  \
    "is chosen only to have some well-defined way of referencing a part of an object."
#define DOC_SA_SECRETS                                                                             \
    "Secrets is a list of the secrets in the same namespace that pods running using this "         \
    "ServiceAccount are allowed to use. Pods are only limited to this list if this service "       \
    "account has a \"kubernetes.io/enforce-mountable-secrets\" annotation set to \"true\". The "   \
    "\"kubernetes.io/enforce-mountable-secrets\" annotation is deprecated since v1.32. Prefer "    \
    "separate namespaces to isolate access to mounted secrets. This field should not be used to "  \
    "find auto-generated service account token secrets for use outside of pods. Instead, tokens "  \
    "can be requested directly using the TokenRequest API, or service account token secrets "      \
    "can be manually created. More info: "                                                         \
    "https://kubernetes.io/docs/concepts/configuration/secret"
#define DOC_CONFIGMAP_DATA                                                                         \
    "Data contains the configuration data. Each key must consist of alphanumeric characters, "     \
    "'-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The "    \
    "keys stored in Data must not overlap with the keys in the BinaryData field, this is "         \
    "enforced during validation process."
#define DOC_HOLDER                                                                                 \
    "holderIdentity contains the identity of the holder of a current lease. If Coordinated "       \
    "Leader Election is used, the holder identity must be equal to the elected "                   \
    "LeaseCandidate.metadata.name field."

#define COL_NAME                                                                                   \
    {                                                                                              \
        "Name", "string", "name", DOC_NAME, 0                                                      \
    }
#define COL_AGE                                                                                    \
    {                                                                                              \
        "Age", "string", "", DOC_CREATED, 0                                                        \
    }

static const column pod_columns[] = {
    COL_NAME,
    {"Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0},
    {"Status", "string", "", "The aggregate status of the containers in this pod.", 0},
    {"Restarts", "string", "",
     "The number of times the containers in this pod have been restarted and when the last "
     "container in this pod has restarted.",
     0},
    COL_AGE,
    {"IP", "string", "", DOC_POD_IP, 1},
    {"Node", "string", "", DOC_NODE_NAME, 1},
    {"Nominated Node", "string", "", DOC_NOMINATED, 1},
    {"Readiness Gates", "string", "", DOC_READINESS_GATES, 1},
};

static const column node_columns[] = {
    COL_NAME,
    {"Status", "string", "", "The status of the node", 0},
    {"Roles", "string", "", "The roles of the node", 0},
    COL_AGE,
    {"Version", "string", "", "Kubelet Version reported by the node.", 0},
    {"Internal-IP", "string", "", DOC_ADDRESSES, 1},
    {"External-IP", "string", "", DOC_ADDRESSES, 1},
    {"OS-Image", "string", "",
     "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).", 1},
    {"Kernel-Version", "string", "",
     "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", 1},
    {"Container-Runtime", "string", "",
     "ContainerRuntime Version reported by the node through runtime remote API (e.g. "
     "containerd://1.4.2).",
     1},
};

/* The DaemonSet docs are extensions/v1beta1's, as printers.go names them. */
static const column daemonset_columns[] = {
    COL_NAME,
    {"Desired", "integer", "",
     "The total number of nodes that should be running the daemon pod (including nodes "
     "correctly running the daemon pod). " DOC_DS_MORE,
     0},
    {"Current", "integer", "",
     "The number of nodes that are running at least 1 daemon pod and are supposed to run the "
     "daemon pod. " DOC_DS_MORE,
     0},
    {"Ready", "integer", "",
     "The number of nodes that should be running the daemon pod and have one or more of the "
     "daemon pod running and ready.",
     0},
    {"Up-to-date", "integer", "", "The total number of nodes that are running updated daemon pod",
     0},
    {"Available", "integer", "",
     "The number of nodes that should be running the daemon pod and have one or more of the "
     "daemon pod running and available (ready for at least spec.minReadySeconds)",
     0},
    {"Node Selector", "string", "", DOC_NODE_SELECTOR, 0},
    COL_AGE,
    {"Containers", "string", "", "Names of each container in the template.", 1},
    {"Images", "string", "", "Images referenced by each container in the template.", 1},
    {"Selector", "string", "",
     "A label query over pods that are managed by the daemon set. Must match in order to be "
     "controlled. If empty, defaulted to labels on Pod template. More info: "
     "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
     1},
};

static const column event_columns[] = {
    {"Last Seen", "string", "",
     "The time at which the most recent occurrence of this event was "
     "recorded.",
     0},
    {"Type", "string", "",
     "Type of this event (Normal, Warning), new types could be added in the "
     "future",
     0},
    {"Reason", "string", "",
     "This should be a short, machine understandable string that gives the reason for the "
     "transition into the object's current status.",
     0},
    {"Object", "string", "", "The object that this event is about.", 0},
    {"Subobject", "string", "", DOC_FIELD_PATH, 1},
    {"Source", "string", "",
     "The component reporting this event. Should be a short machine understandable string.", 1},
    {"Message", "string", "", "A human-readable description of the status of this operation.", 0},
    {"First Seen", "string", "",
     "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)", 1},
    {"Count", "string", "", "The number of times this event has occurred.", 1},
    {"Name", "string", "name", DOC_NAME, 1},
};

static const column namespace_columns[] = {
    COL_NAME,
    {"Status", "string", "", "The status of the namespace", 0},
    COL_AGE,
};

static const column configmap_columns[] = {
    COL_NAME,
    {"Data", "string", "", DOC_CONFIGMAP_DATA, 0},
    COL_AGE,
};

static const column serviceaccount_columns[] = {
    COL_NAME,
    {"Secrets", "string", "", DOC_SA_SECRETS, 0},
    COL_AGE,
};

/* printers.go asks ObjectMeta's docs for "handler", which has none. */
static const column runtimeclass_columns[] = {
    COL_NAME,
    {"Handler", "string", "", "", 0},
    COL_AGE,
};

static const column controllerrevision_columns[] = {
    COL_NAME,
    {"Controller", "string", "", "Controller of the object", 0},
    {"Revision", "string", "", "Revision indicates the revision of the state represented by Data.",
     0},
    COL_AGE,
};

static const column lease_columns[] = {
    COL_NAME,
    {"Holder", "string", "", DOC_HOLDER, 0},
    COL_AGE,
};

static const column default_columns[] = {
    COL_NAME,
    {"Created At", "date", "", DOC_CREATED, 0},
};

/* ---- Pod ------------------------------------------------------------------ */

/* The STATUS cell: printPod's reason, NULL when memory runs out. */
static char *status_cell(const kube_pod_print *p)
{
    size_t len = kube_pod_print_status(p, NULL, 0);
    char *s = malloc(len + 1);
    if (s) kube_pod_print_status(p, s, len + 1);
    return s;
}

/* v1 to internal conversion: podIP wins over podIPs[0] when set. */
static const char *pod_ip(const json_t *status)
{
    const char *ip = kube_str(status, "podIP");
    if (*ip) return ip;
    return kube_str(json_array_get(kube_get(status, "podIPs"), 0), "ip");
}

static const char *or_none(const char *s)
{
    return *s ? s : "<none>";
}

static char *readiness_gates(const json_t *pod)
{
    const json_t *gates = kube_get(kube_get(pod, "spec"), "readinessGates");
    if (json_array_size(gates) == 0) return strdup("<none>");
    const json_t *conditions = kube_get(kube_get(pod, "status"), "conditions");
    size_t true_count = 0, i, j;
    json_t *gate, *c;
    json_array_foreach(gates, i, gate)
    {
        json_array_foreach(conditions, j, c)
        {
            if (strcmp(kube_str(c, "type"), kube_str(gate, "conditionType")) != 0) continue;
            true_count += !strcmp(kube_str(c, "status"), "True");
            break;
        }
    }
    return gp_format("%zu/%zu", true_count, json_array_size(gates));
}

static void pod_cells(row_cells *c, const json_t *pod, const print_ctx *ctx)
{
    kube_pod_print t;
    kube_pod_print_read(pod, &t);
    put_name(c, pod);
    put_owned(c, gp_format("%lld/%lld", t.ready, t.total));
    put_owned(c, status_cell(&t));
    if (t.restarts != 0 && t.last_restart.set) {
        char *ago = since_text(t.last_restart, ctx->now);
        put_owned(c, ago ? gp_format("%lld (%s ago)", t.restarts, ago) : NULL);
        free(ago);
    } else {
        put_owned(c, gp_format("%lld", t.restarts));
    }
    put_age(c, pod, ctx);
    const json_t *status = kube_get(pod, "status");
    put_str(c, or_none(pod_ip(status)));
    put_str(c, or_none(kube_str(kube_get(pod, "spec"), "nodeName")));
    put_str(c, or_none(kube_str(status, "nominatedNodeName")));
    put_owned(c, readiness_gates(pod));
}

/* podSuccessConditions / podFailedConditions: kubectl dims these rows. */
static json_t *pod_row_conditions(const json_t *pod)
{
    const char *phase = kube_str(kube_get(pod, "status"), "phase");
    const char *message = !strcmp(phase, "Succeeded") ? "The pod has completed successfully."
                          : !strcmp(phase, "Failed")  ? "The pod failed."
                                                      : NULL;
    if (!message) return NULL;
    return json_pack("[{s:s, s:s, s:s, s:s}]", "type", "Completed", "status", "True", "reason",
                     phase, "message", message);
}

/* ---- Node ----------------------------------------------------------------- */

/* "Ready" / "NotReady" from the last Ready condition, else "Unknown";
 * ",SchedulingDisabled" when cordoned. */
static char *node_status(const json_t *node)
{
    const json_t *ready = NULL;
    size_t i;
    json_t *c;
    json_array_foreach(kube_get(kube_get(node, "status"), "conditions"), i, c)
    {
        if (!strcmp(kube_str(c, "type"), "Ready")) ready = c;
    }
    const char *status = !ready                                       ? "Unknown"
                         : !strcmp(kube_str(ready, "status"), "True") ? "Ready"
                                                                      : "NotReady";
    bool cordoned = kube_true(kube_get(node, "spec"), "unschedulable");
    return gp_format("%s%s", status, cordoned ? ",SchedulingDisabled" : "");
}

#define ROLE_PREFIX "node-role.kubernetes.io/"

/* findNodeRoles: node-role.kubernetes.io/<role> keys and kubernetes.io/role
 * values, as a sorted set. */
static char *node_roles(const json_t *node)
{
    const json_t *labels = kube_get(kube_get(node, "metadata"), "labels");
    size_t n = json_is_object(labels) ? json_object_size(labels) : 0;
    const char **roles = calloc(n + 1, sizeof *roles);
    if (!roles) return NULL;
    size_t count = 0;
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)labels, key, value)
    {
        const char *v = json_string_value(value);
        if (!strncmp(key, ROLE_PREFIX, strlen(ROLE_PREFIX)) && key[strlen(ROLE_PREFIX)])
            roles[count++] = key + strlen(ROLE_PREFIX);
        else if (!strcmp(key, "kubernetes.io/role") && v && *v)
            roles[count++] = v;
    }
    qsort(roles, count, sizeof *roles, compare_strings);
    size_t unique = 0;
    for (size_t i = 0; i < count; i++)
        if (unique == 0 || strcmp(roles[unique - 1], roles[i]) != 0) roles[unique++] = roles[i];
    char *out = unique ? join(roles, unique, ",") : strdup("<none>");
    free(roles);
    return out;
}

static const char *node_address(const json_t *node, const char *type)
{
    size_t i;
    json_t *a;
    json_array_foreach(kube_get(kube_get(node, "status"), "addresses"), i, a)
    {
        if (!strcmp(kube_str(a, "type"), type)) return kube_str(a, "address");
    }
    return "<none>";
}

static const char *or_unknown(const char *s)
{
    return *s ? s : "<unknown>";
}

static void node_cells(row_cells *c, const json_t *node, const print_ctx *ctx)
{
    const json_t *info = kube_get(kube_get(node, "status"), "nodeInfo");
    put_name(c, node);
    put_owned(c, node_status(node));
    put_owned(c, node_roles(node));
    put_age(c, node, ctx);
    put_str(c, kube_str(info, "kubeletVersion"));
    put_str(c, node_address(node, "InternalIP"));
    put_str(c, node_address(node, "ExternalIP"));
    put_str(c, or_unknown(kube_str(info, "osImage")));
    put_str(c, or_unknown(kube_str(info, "kernelVersion")));
    put_str(c, or_unknown(kube_str(info, "containerRuntimeVersion")));
}

/* ---- DaemonSet ------------------------------------------------------------ */

/* layoutContainerCells: one of "name" or "image" per container, by ",". */
static char *container_list(const json_t *containers, const char *member)
{
    size_t n = json_array_size(containers);
    const char **items = calloc(n + 1, sizeof *items);
    if (!items) return NULL;
    for (size_t i = 0; i < n; i++)
        items[i] = kube_str(json_array_get(containers, i), member);
    char *out = join(items, n, ",");
    free(items);
    return out;
}

static void daemonset_cells(row_cells *c, const json_t *ds, const print_ctx *ctx)
{
    const json_t *status = kube_get(ds, "status");
    const json_t *pod_spec = kube_get(kube_get(kube_get(ds, "spec"), "template"), "spec");
    put_name(c, ds);
    put_int(c, kube_int(status, "desiredNumberScheduled"));
    put_int(c, kube_int(status, "currentNumberScheduled"));
    put_int(c, kube_int(status, "numberReady"));
    put_int(c, kube_int(status, "updatedNumberScheduled"));
    put_int(c, kube_int(status, "numberAvailable"));
    put_owned(c, format_labels(kube_get(pod_spec, "nodeSelector")));
    put_age(c, ds, ctx);
    put_owned(c, container_list(kube_get(pod_spec, "containers"), "name"));
    put_owned(c, container_list(kube_get(pod_spec, "containers"), "image"));
    put_owned(c, format_label_selector(kube_get(kube_get(ds, "spec"), "selector")));
}

/* ---- Event (core v1 and events.k8s.io/v1) -------------------------------- */

/* Where each internal Event field lives in a stored object of either API
 * (events.k8s.io/v1 conversion: regarding, note, deprecated*). */
typedef struct {
    const char *involved;
    const char *message;
    const char *source;
    const char *first;
    const char *last;
    const char *count;
} event_fields;

static const event_fields core_event = {"involvedObject", "message",       "source",
                                        "firstTimestamp", "lastTimestamp", "count"};
static const event_fields events_api_event = {"regarding",
                                              "note",
                                              "deprecatedSource",
                                              "deprecatedFirstTimestamp",
                                              "deprecatedLastTimestamp",
                                              "deprecatedCount"};

/* The UTF-8 length of a Unicode White_Space character at s, or 0: what
 * strings.TrimSpace strips. */
static size_t space_len(const unsigned char *s)
{
    if (*s == ' ' || (*s >= '\t' && *s <= '\r')) return 1;
    if (s[0] == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0)) return 2;
    if (s[0] == 0xE1 && s[1] == 0x9A && s[2] == 0x80) return 3;
    if (s[0] == 0xE3 && s[1] == 0x80 && s[2] == 0x80) return 3;
    if (s[0] != 0xE2) return 0;
    if (s[1] == 0x80 && s[2] >= 0x80 &&
        (s[2] <= 0x8A || s[2] == 0xA8 || s[2] == 0xA9 || s[2] == 0xAF))
        return 3;
    if (s[1] == 0x81 && s[2] == 0x9F) return 3;
    return 0;
}

static char *trim_space(const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t len;
    while ((len = space_len(s)) != 0)
        s += len;
    /* A UTF-8 continuation byte never starts a match, so stepping over
     * other characters a byte at a time is safe. */
    const unsigned char *end = s;
    for (const unsigned char *p = s; *p;) {
        len = space_len(p);
        p += len ? len : 1;
        if (!len) end = p;
    }
    return gp_format("%.*s", (int)(end - s), (const char *)s);
}

/* "kind/name" with the kind lower-cased, or just the kind. */
static char *event_target(const json_t *ref)
{
    char *kind = strdup(kube_str(ref, "kind"));
    if (!kind) return NULL;
    for (char *p = kind; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    const char *name = kube_str(ref, "name");
    char *out = *name ? gp_format("%s/%s", kind, name) : strdup(kind);
    free(kind);
    return out;
}

/* formatEventSource: component (or reportingController), then ", host"
 * (or reportingInstance) when there is one. */
static char *event_source(const json_t *ev, const event_fields *f)
{
    const json_t *src = kube_get(ev, f->source);
    const char *component = kube_str(src, "component");
    const char *instance = kube_str(src, "host");
    if (!*component) component = kube_str(ev, "reportingController");
    if (!*instance) instance = kube_str(ev, "reportingInstance");
    return *instance ? gp_format("%s, %s", component, instance) : strdup(component);
}

static void event_cells(row_cells *c, const json_t *ev, const print_ctx *ctx, const event_fields *f)
{
    kube_time first = time_at(ev, f->first);
    if (!first.set) first = time_at(ev, "eventTime");
    kube_time last = time_at(ev, f->last);
    if (!last.set) last = first;
    long long count = kube_int(ev, f->count);
    const json_t *series = kube_get(ev, "series");
    if (json_is_object(series)) {
        last = time_at(series, "lastObservedTime");
        count = kube_int(series, "count");
    } else if (count == 0) {
        count = 1; /* singleton events of the new API carry no count */
    }
    const json_t *ref = kube_get(ev, f->involved);
    put_owned(c, since_text(last, ctx->now));
    put_str(c, kube_str(ev, "type"));
    put_str(c, kube_str(ev, "reason"));
    put_owned(c, event_target(ref));
    put_str(c, kube_str(ref, "fieldPath"));
    put_owned(c, event_source(ev, f));
    put_owned(c, trim_space(kube_str(ev, f->message)));
    put_owned(c, since_text(first, ctx->now));
    put_int(c, count);
    put_name(c, ev);
}

static void core_event_cells(row_cells *c, const json_t *ev, const print_ctx *ctx)
{
    event_cells(c, ev, ctx, &core_event);
}

static void events_api_event_cells(row_cells *c, const json_t *ev, const print_ctx *ctx)
{
    event_cells(c, ev, ctx, &events_api_event);
}

/* ---- the small printers --------------------------------------------------- */

static void namespace_cells(row_cells *c, const json_t *ns, const print_ctx *ctx)
{
    put_name(c, ns);
    put_str(c, kube_str(kube_get(ns, "status"), "phase"));
    put_age(c, ns, ctx);
}

static size_t member_count(const json_t *o)
{
    return json_is_object(o) ? json_object_size(o) : 0;
}

static void configmap_cells(row_cells *c, const json_t *cm, const print_ctx *ctx)
{
    put_name(c, cm);
    put_int(c, (long long)(member_count(kube_get(cm, "data")) +
                           member_count(kube_get(cm, "binaryData"))));
    put_age(c, cm, ctx);
}

static void serviceaccount_cells(row_cells *c, const json_t *sa, const print_ctx *ctx)
{
    put_name(c, sa);
    put_int(c, (long long)json_array_size(kube_get(sa, "secrets")));
    put_age(c, sa, ctx);
}

static void runtimeclass_cells(row_cells *c, const json_t *rc, const print_ctx *ctx)
{
    put_name(c, rc);
    put_str(c, kube_str(rc, "handler"));
    put_age(c, rc, ctx);
}

/* The controller owner as "kind.group/name" (GroupKind, lower-cased), or
 * "<none>"; an apiVersion with two slashes does not parse and is shown as
 * having no controller. */
static char *controller_name(const json_t *obj)
{
    const json_t *ref = kube_controller_of(obj);
    if (!ref) return strdup("<none>");
    const char *api_version = kube_str(ref, "apiVersion");
    const char *slash = strchr(api_version, '/');
    if (slash && strchr(slash + 1, '/')) return strdup("<none>");
    int group_len = slash && strcmp(api_version, "/") != 0 ? (int)(slash - api_version) : 0;
    const char *kind = kube_str(ref, "kind");
    const char *name = kube_str(ref, "name");
    if (group_len == 0 && !*kind) return strdup(name);
    char *text = group_len ? gp_format("%s.%.*s", kind, group_len, api_version) : strdup(kind);
    if (!text) return NULL;
    for (char *p = text; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    char *out = gp_format("%s/%s", text, name);
    free(text);
    return out;
}

static void controllerrevision_cells(row_cells *c, const json_t *cr, const print_ctx *ctx)
{
    put_name(c, cr);
    put_owned(c, controller_name(cr));
    put_int(c, kube_int(cr, "revision"));
    put_age(c, cr, ctx);
}

static void lease_cells(row_cells *c, const json_t *lease, const print_ctx *ctx)
{
    put_name(c, lease);
    put_str(c, kube_str(kube_get(lease, "spec"), "holderIdentity"));
    put_age(c, lease, ctx);
}

/* The generic convertor: creationTimestamp.UTC().Format(time.RFC3339),
 * which writes Go's zero time for an object without one. */
static void default_cells(row_cells *c, const json_t *obj, const print_ctx *ctx)
{
    (void)ctx;
    kube_time t = time_at(kube_get(obj, "metadata"), "creationTimestamp");
    char text[KUBE_TIME_TEXT_MAX];
    kube_time_format(t.set ? t.sec : kube_days_from_civil(1, 1, 1) * 86400, text);
    put_name(c, obj);
    put_str(c, text);
}

/* ---- the table ------------------------------------------------------------ */

typedef struct {
    const char *group;
    const char *kind;
    const column *columns;
    size_t ncolumns;
    void (*cells)(row_cells *c, const json_t *obj, const print_ctx *ctx);
    json_t *(*conditions)(const json_t *obj); /* NULL: rows have none */
} printer;

#define PRINTER(group, kind, cols, fn, conds)                                                      \
    {                                                                                              \
        group, kind, cols, sizeof cols / sizeof *cols, fn, conds                                   \
    }

static const printer printers[] = {
    PRINTER("", "Pod", pod_columns, pod_cells, pod_row_conditions),
    PRINTER("", "Node", node_columns, node_cells, NULL),
    PRINTER("", "Namespace", namespace_columns, namespace_cells, NULL),
    PRINTER("", "ConfigMap", configmap_columns, configmap_cells, NULL),
    PRINTER("", "ServiceAccount", serviceaccount_columns, serviceaccount_cells, NULL),
    PRINTER("", "Event", event_columns, core_event_cells, NULL),
    PRINTER("events.k8s.io", "Event", event_columns, events_api_event_cells, NULL),
    PRINTER("apps", "DaemonSet", daemonset_columns, daemonset_cells, NULL),
    PRINTER("apps", "ControllerRevision", controllerrevision_columns, controllerrevision_cells,
            NULL),
    PRINTER("node.k8s.io", "RuntimeClass", runtimeclass_columns, runtimeclass_cells, NULL),
    PRINTER("coordination.k8s.io", "Lease", lease_columns, lease_cells, NULL),
};

static const printer default_printer = PRINTER("", "", default_columns, default_cells, NULL);

static const printer *find_printer(const char *group, const char *kind)
{
    for (size_t i = 0; i < sizeof printers / sizeof *printers; i++)
        if (!strcmp(printers[i].group, group) && !strcmp(printers[i].kind, kind))
            return &printers[i];
    return &default_printer;
}

static json_t *column_definitions(const printer *p)
{
    json_t *defs = json_array();
    for (size_t i = 0; defs && i < p->ncolumns; i++) {
        const column *col = &p->columns[i];
        if (json_array_append_new(defs,
                                  json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", col->name, "type",
                                            col->type, "format", col->format, "description",
                                            col->description, "priority", col->priority)) != 0) {
            json_decref(defs);
            return NULL;
        }
    }
    return defs;
}

/* meta.AsPartialObjectMetadata: the whole ObjectMeta, under its own kind. */
static json_t *partial_metadata(const json_t *obj)
{
    const json_t *meta = kube_get(obj, "metadata");
    json_t *copy = json_is_object(meta) ? json_deep_copy(meta) : json_object();
    if (!copy) return NULL;
    return json_pack("{s:s, s:s, s:o}", "kind", "PartialObjectMetadata", "apiVersion",
                     "meta.k8s.io/v1", "metadata", copy);
}

static json_t *table_row(const printer *p, const json_t *obj, const print_ctx *ctx)
{
    row_cells c = {json_array(), false};
    if (!c.cells) return NULL;
    p->cells(&c, obj, ctx);
    json_t *row = json_object();
    json_t *object = partial_metadata(obj);
    if (c.oom || !row || !object || json_object_set_new(row, "cells", c.cells) != 0) {
        json_decref(c.cells);
        json_decref(object);
        json_decref(row);
        return NULL;
    }
    json_t *conditions = p->conditions ? p->conditions(obj) : NULL;
    if (conditions) json_object_set_new(row, "conditions", conditions);
    if (json_object_set_new(row, "object", object) != 0) {
        json_decref(row);
        return NULL;
    }
    return row;
}

static json_t *table_rows(const printer *p, json_t *const *objects, size_t n, time_t now)
{
    print_ctx ctx = {now};
    json_t *rows = json_array();
    for (size_t i = 0; rows && i < n; i++) {
        if (json_array_append_new(rows, table_row(p, objects[i], &ctx)) != 0) {
            json_decref(rows);
            return NULL;
        }
    }
    return rows;
}

json_t *as_table(const char *group, const char *kind, json_t *const *objects, size_t n,
                 bool with_definitions, const char *list_rv, time_t now)
{
    const printer *p = find_printer(group ? group : "", kind ? kind : "");
    json_t *meta =
        list_rv && *list_rv ? json_pack("{s:s}", "resourceVersion", list_rv) : json_object();
    /* Without definitions the Go field stays nil and is written as null. */
    json_t *defs = with_definitions ? column_definitions(p) : json_null();
    json_t *rows = table_rows(p, objects, n, now);
    if (!meta || !defs || !rows) {
        json_decref(meta);
        json_decref(defs);
        json_decref(rows);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:o, s:o, s:o}", "kind", "Table", "apiVersion", "meta.k8s.io/v1",
                     "metadata", meta, "columnDefinitions", defs, "rows", rows);
}
