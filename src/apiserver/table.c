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

#include "kube/selector.h"
#include "util/buf.h"
#include "util/error.h"

#define NS_PER_SEC 1000000000LL

/* ---- times ---------------------------------------------------------------- */

/* A metav1.Time or MicroTime; `set` is false for Go's zero time (absent, null
 * or unreadable), which the printers show as "<unknown>". */
typedef struct {
    bool set;
    long long sec; /* since the epoch, UTC */
    long nsec;
} ktime;

/* Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's
 * days_from_civil), so that no time_t range or timezone is involved. */
static long long days_from_civil(long long y, int m, int d)
{
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    long long yoe = y - era * 400;
    long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(long long z, long long *y, int *m, int *d)
{
    z += 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    long long doe = z - era * 146097;
    long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long long mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static bool fixed_digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

static int days_in_month(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/* ".123" or ",123" after the seconds: Go's time.Parse takes any number of
 * digits there and keeps the first nine. Returns the characters read. */
static size_t parse_fraction(const char *s, long *nsec)
{
    *nsec = 0;
    if ((s[0] != '.' && s[0] != ',') || s[1] < '0' || s[1] > '9') return 0;
    size_t i = 1;
    long scale = 100000000;
    for (; s[i] >= '0' && s[i] <= '9'; i++) {
        *nsec += (s[i] - '0') * scale;
        scale /= 10;
    }
    return i;
}

/* "Z" or "+hh:mm" / "-hh:mm", and nothing after it. */
static bool parse_zone(const char *s, int *offset_sec)
{
    *offset_sec = 0;
    if (s[0] == 'Z') return s[1] == '\0';
    if (s[0] != '+' && s[0] != '-') return false;
    int hh, mm;
    if (!fixed_digits(s + 1, 2, &hh) || s[3] != ':' || !fixed_digits(s + 4, 2, &mm) ||
        s[6] != '\0' || hh > 23 || mm > 59)
        return false;
    *offset_sec = (hh * 3600 + mm * 60) * (s[0] == '-' ? -1 : 1);
    return true;
}

/* time.Parse(time.RFC3339, text), which is how metav1.Time reads JSON. */
static bool parse_rfc3339(const char *s, ktime *t)
{
    int y, mo, d, h, mi, se, offset;
    if (strlen(s) < 20 || !fixed_digits(s, 4, &y) || s[4] != '-' || !fixed_digits(s + 5, 2, &mo) ||
        s[7] != '-' || !fixed_digits(s + 8, 2, &d) || s[10] != 'T' ||
        !fixed_digits(s + 11, 2, &h) || s[13] != ':' || !fixed_digits(s + 14, 2, &mi) ||
        s[16] != ':' || !fixed_digits(s + 17, 2, &se))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 59)
        return false;
    long nsec;
    size_t frac = parse_fraction(s + 19, &nsec);
    if (!parse_zone(s + 19 + frac, &offset)) return false;
    t->sec = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offset;
    t->nsec = nsec;
    t->set = true;
    return true;
}

int as_parse_time(const char *text, time_t *out)
{
    ktime t;
    if (!text || !parse_rfc3339(text, &t)) return -1;
    *out = (time_t)t.sec;
    return 0;
}

/* 0001-01-01T00:00:00Z is Go's zero time: IsZero, so "<unknown>" too. */
static ktime time_of(const json_t *v)
{
    ktime t = {0};
    if (!json_is_string(v) || !parse_rfc3339(json_string_value(v), &t)) return (ktime){0};
    if (t.sec == days_from_civil(1, 1, 1) * 86400 && t.nsec == 0) return (ktime){0};
    return t;
}

/* Time.Before, with the zero time earlier than every other. */
static bool time_before(ktime a, ktime b)
{
    if (!b.set) return false;
    if (!a.set) return true;
    return a.sec < b.sec || (a.sec == b.sec && a.nsec < b.nsec);
}

/* time.Since: saturates instead of overflowing, as Time.Sub does. */
static long long since_ns(ktime t, time_t now)
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

static json_t *field(const json_t *o, const char *key)
{
    return json_is_object(o) ? json_object_get(o, key) : NULL;
}

/* "" for a missing or non-string field: Go's zero string. */
static const char *str_at(const json_t *o, const char *key)
{
    const char *s = json_string_value(field(o, key));
    return s ? s : "";
}

static long long int_at(const json_t *o, const char *key)
{
    return json_integer_value(field(o, key));
}

static bool true_at(const json_t *o, const char *key)
{
    return json_is_true(field(o, key));
}

static ktime time_at(const json_t *o, const char *key)
{
    return time_of(field(o, key));
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
static char *since_text(ktime t, time_t now)
{
    if (!t.set) return strdup("<unknown>");
    char buf[32];
    human_duration_ns(since_ns(t, now), buf, sizeof buf);
    return strdup(buf);
}

static void put_age(row_cells *c, const json_t *obj, const print_ctx *ctx)
{
    put_owned(c, since_text(time_at(field(obj, "metadata"), "creationTimestamp"), ctx->now));
}

static void put_name(row_cells *c, const json_t *obj)
{
    put_str(c, str_at(field(obj, "metadata"), "name"));
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
        if (!(pairs[i] = gp_format("%s=%s", keys[i], str_at(map, keys[i])))) goto done;
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

/* NewRequirement's checks on the key and each value. */
static bool valid_requirement(const char *key, const json_t *values)
{
    if (kube_label_validate_key(key, NULL) < 0) return false;
    size_t i;
    json_t *v;
    json_array_foreach(values, i, v)
    {
        if (!json_is_string(v) || kube_label_validate_value(json_string_value(v), NULL) < 0)
            return false;
    }
    return true;
}

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
    const char *key = str_at(expr, "key");
    const char *op = str_at(expr, "operator");
    const json_t *values = field(expr, "values");
    size_t nvalues = json_array_size(values);
    bool set_op = !strcmp(op, "In") || !strcmp(op, "NotIn");
    bool exists_op = !strcmp(op, "Exists") || !strcmp(op, "DoesNotExist");
    if ((!set_op && !exists_op) || (set_op && nvalues == 0) || (exists_op && nvalues != 0) ||
        !valid_requirement(key, values)) {
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
    const json_t *labels = field(sel, "matchLabels");
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
    json_array_foreach(field(sel, "matchExpressions"), i, expr)
    {
        reqs[*n].key = str_at(expr, "key");
        if (!(reqs[(*n)++].text = expression_text(expr, invalid))) return -1;
    }
    return 0;
}

/* metav1.FormatLabelSelector: "<none>" for a missing or empty selector,
 * "<error>" for one LabelSelectorAsSelector refuses. */
static char *format_label_selector(const json_t *sel)
{
    const json_t *labels = field(sel, "matchLabels");
    const json_t *exprs = field(sel, "matchExpressions");
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

static bool terminal_phase(const char *phase)
{
    return !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
}

/* isPodInitializedConditionTrue: the first Initialized condition decides. */
static bool initialized(const json_t *conditions)
{
    size_t i;
    json_t *c;
    json_array_foreach(conditions, i, c)
    {
        if (!strcmp(str_at(c, "type"), "Initialized")) return !strcmp(str_at(c, "status"), "True");
    }
    return false;
}

/* hasPodReadyCondition. */
static bool ready_condition(const json_t *conditions)
{
    size_t i;
    json_t *c;
    json_array_foreach(conditions, i, c)
    {
        if (!strcmp(str_at(c, "type"), "Ready") && !strcmp(str_at(c, "status"), "True"))
            return true;
    }
    return false;
}

/* podutil.IsRestartableInitContainer, looked up by status name: a sidecar. */
static bool restartable_init(const json_t *init_specs, const char *name)
{
    const json_t *found = NULL;
    size_t i;
    json_t *spec;
    json_array_foreach(init_specs, i, spec)
    {
        if (!strcmp(str_at(spec, "name"), name)) found = spec;
    }
    return found && !strcmp(str_at(found, "restartPolicy"), "Always");
}

typedef struct {
    char *reason; /* owned; NULL after a failed allocation */
    long long restarts;
    long long ready;
    long long total;
    ktime last_restart;
} pod_tally;

static void set_reason(pod_tally *t, char *reason)
{
    free(t->reason);
    t->reason = reason;
}

/* The restart count and the last termination time of one container status. */
static void count_restarts(const json_t *cs, long long *restarts, ktime *last)
{
    *restarts += int_at(cs, "restartCount");
    const json_t *term = field(field(cs, "lastState"), "terminated");
    if (!json_is_object(term)) return;
    ktime finished = time_at(term, "finishedAt");
    if (time_before(*last, finished)) *last = finished;
}

/* The init container loop of printPod: stops at the first init container
 * that has not completed. Returns whether the pod is still initializing. */
static bool tally_init_containers(const json_t *pod, pod_tally *t, long long *sidecar_restarts,
                                  ktime *sidecar_last)
{
    const json_t *specs = field(field(pod, "spec"), "initContainers");
    size_t i;
    json_t *cs;
    json_array_foreach(field(field(pod, "status"), "initContainerStatuses"), i, cs)
    {
        count_restarts(cs, &t->restarts, &t->last_restart);
        bool sidecar = restartable_init(specs, str_at(cs, "name"));
        if (sidecar) count_restarts(cs, sidecar_restarts, sidecar_last);
        const json_t *state = field(cs, "state");
        const json_t *term = field(state, "terminated");
        const json_t *wait = field(state, "waiting");
        if (json_is_object(term) && int_at(term, "exitCode") == 0) continue;
        if (sidecar && true_at(cs, "started")) {
            t->ready += true_at(cs, "ready");
            continue;
        }
        if (json_is_object(term)) {
            const char *why = str_at(term, "reason");
            if (*why)
                set_reason(t, gp_format("Init:%s", why));
            else if (int_at(term, "signal") != 0)
                set_reason(t, gp_format("Init:Signal:%lld", int_at(term, "signal")));
            else
                set_reason(t, gp_format("Init:ExitCode:%lld", int_at(term, "exitCode")));
        } else if (json_is_object(wait) && *str_at(wait, "reason") &&
                   strcmp(str_at(wait, "reason"), "PodInitializing") != 0) {
            set_reason(t, gp_format("Init:%s", str_at(wait, "reason")));
        } else {
            set_reason(t, gp_format("Init:%zu/%zu", i, json_array_size(specs)));
        }
        return true;
    }
    return false;
}

/* The regular containers, last to first, so the first container's state
 * has the final word on the reason. */
static void tally_containers(const json_t *pod, pod_tally *t)
{
    const json_t *statuses = field(field(pod, "status"), "containerStatuses");
    bool running = false;
    for (size_t i = json_array_size(statuses); i-- > 0;) {
        const json_t *cs = json_array_get(statuses, i);
        count_restarts(cs, &t->restarts, &t->last_restart);
        const json_t *state = field(cs, "state");
        const json_t *term = field(state, "terminated");
        const json_t *wait = field(state, "waiting");
        if (json_is_object(wait) && *str_at(wait, "reason")) {
            set_reason(t, strdup(str_at(wait, "reason")));
        } else if (json_is_object(term) && *str_at(term, "reason")) {
            set_reason(t, strdup(str_at(term, "reason")));
        } else if (json_is_object(term)) {
            if (int_at(term, "signal") != 0)
                set_reason(t, gp_format("Signal:%lld", int_at(term, "signal")));
            else
                set_reason(t, gp_format("ExitCode:%lld", int_at(term, "exitCode")));
        } else if (true_at(cs, "ready") && json_is_object(field(state, "running"))) {
            running = true;
            t->ready++;
        }
    }
    /* A container still running turns a "Completed" pod back. */
    if (t->reason && !strcmp(t->reason, "Completed") && running)
        set_reason(t,
                   strdup(ready_condition(field(field(pod, "status"), "conditions")) ? "Running"
                                                                                     : "NotReady"));
}

/* The Status cell's starting point: phase, status.reason, SchedulingGated. */
static char *pod_base_reason(const json_t *status)
{
    const char *reason = str_at(status, "phase");
    if (*str_at(status, "reason")) reason = str_at(status, "reason");
    size_t i;
    json_t *c;
    json_array_foreach(field(status, "conditions"), i, c)
    {
        if (!strcmp(str_at(c, "type"), "PodScheduled") &&
            !strcmp(str_at(c, "reason"), "SchedulingGated"))
            reason = "SchedulingGated";
    }
    return strdup(reason);
}

static long long restartable_init_count(const json_t *pod)
{
    long long n = 0;
    size_t i;
    json_t *spec;
    json_array_foreach(field(field(pod, "spec"), "initContainers"), i, spec)
    {
        n += !strcmp(str_at(spec, "restartPolicy"), "Always");
    }
    return n;
}

static void pod_tally_run(const json_t *pod, pod_tally *t)
{
    const json_t *status = field(pod, "status");
    t->reason = pod_base_reason(status);
    t->total = (long long)json_array_size(field(field(pod, "spec"), "containers")) +
               restartable_init_count(pod);
    long long sidecar_restarts = 0;
    ktime sidecar_last = {0};
    bool initializing = tally_init_containers(pod, t, &sidecar_restarts, &sidecar_last);
    if (!initializing || initialized(field(status, "conditions"))) {
        t->restarts = sidecar_restarts;
        t->last_restart = sidecar_last;
        tally_containers(pod, t);
    }
    const char *phase = str_at(status, "phase");
    if (json_is_string(field(field(pod, "metadata"), "deletionTimestamp"))) {
        if (!strcmp(str_at(status, "reason"), "NodeLost"))
            set_reason(t, strdup("Unknown"));
        else if (!terminal_phase(phase))
            set_reason(t, strdup("Terminating"));
    }
}

/* v1 to internal conversion: podIP wins over podIPs[0] when set. */
static const char *pod_ip(const json_t *status)
{
    const char *ip = str_at(status, "podIP");
    if (*ip) return ip;
    return str_at(json_array_get(field(status, "podIPs"), 0), "ip");
}

static const char *or_none(const char *s)
{
    return *s ? s : "<none>";
}

static char *readiness_gates(const json_t *pod)
{
    const json_t *gates = field(field(pod, "spec"), "readinessGates");
    if (json_array_size(gates) == 0) return strdup("<none>");
    const json_t *conditions = field(field(pod, "status"), "conditions");
    size_t true_count = 0, i, j;
    json_t *gate, *c;
    json_array_foreach(gates, i, gate)
    {
        json_array_foreach(conditions, j, c)
        {
            if (strcmp(str_at(c, "type"), str_at(gate, "conditionType")) != 0) continue;
            true_count += !strcmp(str_at(c, "status"), "True");
            break;
        }
    }
    return gp_format("%zu/%zu", true_count, json_array_size(gates));
}

static void pod_cells(row_cells *c, const json_t *pod, const print_ctx *ctx)
{
    pod_tally t = {0};
    pod_tally_run(pod, &t);
    put_name(c, pod);
    put_owned(c, gp_format("%lld/%lld", t.ready, t.total));
    put_owned(c, t.reason);
    if (t.restarts != 0 && t.last_restart.set) {
        char *ago = since_text(t.last_restart, ctx->now);
        put_owned(c, ago ? gp_format("%lld (%s ago)", t.restarts, ago) : NULL);
        free(ago);
    } else {
        put_owned(c, gp_format("%lld", t.restarts));
    }
    put_age(c, pod, ctx);
    const json_t *status = field(pod, "status");
    put_str(c, or_none(pod_ip(status)));
    put_str(c, or_none(str_at(field(pod, "spec"), "nodeName")));
    put_str(c, or_none(str_at(status, "nominatedNodeName")));
    put_owned(c, readiness_gates(pod));
}

/* podSuccessConditions / podFailedConditions: kubectl dims these rows. */
static json_t *pod_row_conditions(const json_t *pod)
{
    const char *phase = str_at(field(pod, "status"), "phase");
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
    json_array_foreach(field(field(node, "status"), "conditions"), i, c)
    {
        if (!strcmp(str_at(c, "type"), "Ready")) ready = c;
    }
    const char *status = !ready                                     ? "Unknown"
                         : !strcmp(str_at(ready, "status"), "True") ? "Ready"
                                                                    : "NotReady";
    bool cordoned = true_at(field(node, "spec"), "unschedulable");
    return gp_format("%s%s", status, cordoned ? ",SchedulingDisabled" : "");
}

#define ROLE_PREFIX "node-role.kubernetes.io/"

/* findNodeRoles: node-role.kubernetes.io/<role> keys and kubernetes.io/role
 * values, as a sorted set. */
static char *node_roles(const json_t *node)
{
    const json_t *labels = field(field(node, "metadata"), "labels");
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
    json_array_foreach(field(field(node, "status"), "addresses"), i, a)
    {
        if (!strcmp(str_at(a, "type"), type)) return str_at(a, "address");
    }
    return "<none>";
}

static const char *or_unknown(const char *s)
{
    return *s ? s : "<unknown>";
}

static void node_cells(row_cells *c, const json_t *node, const print_ctx *ctx)
{
    const json_t *info = field(field(node, "status"), "nodeInfo");
    put_name(c, node);
    put_owned(c, node_status(node));
    put_owned(c, node_roles(node));
    put_age(c, node, ctx);
    put_str(c, str_at(info, "kubeletVersion"));
    put_str(c, node_address(node, "InternalIP"));
    put_str(c, node_address(node, "ExternalIP"));
    put_str(c, or_unknown(str_at(info, "osImage")));
    put_str(c, or_unknown(str_at(info, "kernelVersion")));
    put_str(c, or_unknown(str_at(info, "containerRuntimeVersion")));
}

/* ---- DaemonSet ------------------------------------------------------------ */

/* layoutContainerCells: one of "name" or "image" per container, by ",". */
static char *container_list(const json_t *containers, const char *member)
{
    size_t n = json_array_size(containers);
    const char **items = calloc(n + 1, sizeof *items);
    if (!items) return NULL;
    for (size_t i = 0; i < n; i++)
        items[i] = str_at(json_array_get(containers, i), member);
    char *out = join(items, n, ",");
    free(items);
    return out;
}

static void daemonset_cells(row_cells *c, const json_t *ds, const print_ctx *ctx)
{
    const json_t *status = field(ds, "status");
    const json_t *pod_spec = field(field(field(ds, "spec"), "template"), "spec");
    put_name(c, ds);
    put_int(c, int_at(status, "desiredNumberScheduled"));
    put_int(c, int_at(status, "currentNumberScheduled"));
    put_int(c, int_at(status, "numberReady"));
    put_int(c, int_at(status, "updatedNumberScheduled"));
    put_int(c, int_at(status, "numberAvailable"));
    put_owned(c, format_labels(field(pod_spec, "nodeSelector")));
    put_age(c, ds, ctx);
    put_owned(c, container_list(field(pod_spec, "containers"), "name"));
    put_owned(c, container_list(field(pod_spec, "containers"), "image"));
    put_owned(c, format_label_selector(field(field(ds, "spec"), "selector")));
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
    char *kind = strdup(str_at(ref, "kind"));
    if (!kind) return NULL;
    for (char *p = kind; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    const char *name = str_at(ref, "name");
    char *out = *name ? gp_format("%s/%s", kind, name) : strdup(kind);
    free(kind);
    return out;
}

/* formatEventSource: component (or reportingController), then ", host"
 * (or reportingInstance) when there is one. */
static char *event_source(const json_t *ev, const event_fields *f)
{
    const json_t *src = field(ev, f->source);
    const char *component = str_at(src, "component");
    const char *instance = str_at(src, "host");
    if (!*component) component = str_at(ev, "reportingController");
    if (!*instance) instance = str_at(ev, "reportingInstance");
    return *instance ? gp_format("%s, %s", component, instance) : strdup(component);
}

static void event_cells(row_cells *c, const json_t *ev, const print_ctx *ctx, const event_fields *f)
{
    ktime first = time_at(ev, f->first);
    if (!first.set) first = time_at(ev, "eventTime");
    ktime last = time_at(ev, f->last);
    if (!last.set) last = first;
    long long count = int_at(ev, f->count);
    const json_t *series = field(ev, "series");
    if (json_is_object(series)) {
        last = time_at(series, "lastObservedTime");
        count = int_at(series, "count");
    } else if (count == 0) {
        count = 1; /* singleton events of the new API carry no count */
    }
    const json_t *ref = field(ev, f->involved);
    put_owned(c, since_text(last, ctx->now));
    put_str(c, str_at(ev, "type"));
    put_str(c, str_at(ev, "reason"));
    put_owned(c, event_target(ref));
    put_str(c, str_at(ref, "fieldPath"));
    put_owned(c, event_source(ev, f));
    put_owned(c, trim_space(str_at(ev, f->message)));
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
    put_str(c, str_at(field(ns, "status"), "phase"));
    put_age(c, ns, ctx);
}

static size_t member_count(const json_t *o)
{
    return json_is_object(o) ? json_object_size(o) : 0;
}

static void configmap_cells(row_cells *c, const json_t *cm, const print_ctx *ctx)
{
    put_name(c, cm);
    put_int(c,
            (long long)(member_count(field(cm, "data")) + member_count(field(cm, "binaryData"))));
    put_age(c, cm, ctx);
}

static void serviceaccount_cells(row_cells *c, const json_t *sa, const print_ctx *ctx)
{
    put_name(c, sa);
    put_int(c, (long long)json_array_size(field(sa, "secrets")));
    put_age(c, sa, ctx);
}

static void runtimeclass_cells(row_cells *c, const json_t *rc, const print_ctx *ctx)
{
    put_name(c, rc);
    put_str(c, str_at(rc, "handler"));
    put_age(c, rc, ctx);
}

/* The controller owner as "kind.group/name" (GroupKind, lower-cased), or
 * "<none>"; an apiVersion with two slashes does not parse and is shown as
 * having no controller. */
static char *controller_name(const json_t *obj)
{
    const json_t *ref = NULL;
    size_t i;
    json_t *r;
    json_array_foreach(field(field(obj, "metadata"), "ownerReferences"), i, r)
    {
        if (true_at(r, "controller")) {
            ref = r;
            break;
        }
    }
    if (!ref) return strdup("<none>");
    const char *api_version = str_at(ref, "apiVersion");
    const char *slash = strchr(api_version, '/');
    if (slash && strchr(slash + 1, '/')) return strdup("<none>");
    int group_len = slash && strcmp(api_version, "/") != 0 ? (int)(slash - api_version) : 0;
    const char *kind = str_at(ref, "kind");
    const char *name = str_at(ref, "name");
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
    put_int(c, int_at(cr, "revision"));
    put_age(c, cr, ctx);
}

static void lease_cells(row_cells *c, const json_t *lease, const print_ctx *ctx)
{
    put_name(c, lease);
    put_str(c, str_at(field(lease, "spec"), "holderIdentity"));
    put_age(c, lease, ctx);
}

/* The generic convertor: creationTimestamp.UTC().Format(time.RFC3339),
 * which writes Go's zero time for an object without one. */
static void default_cells(row_cells *c, const json_t *obj, const print_ctx *ctx)
{
    (void)ctx;
    ktime t = time_at(field(obj, "metadata"), "creationTimestamp");
    long long sec = t.set ? t.sec : days_from_civil(1, 1, 1) * 86400;
    long long days = sec >= 0 ? sec / 86400 : -((-sec + 86399) / 86400);
    long long rem = sec - days * 86400, year;
    int month, day;
    civil_from_days(days, &year, &month, &day);
    put_name(c, obj);
    put_owned(c, gp_format("%04lld-%02d-%02dT%02lld:%02lld:%02lldZ", year, month, day, rem / 3600,
                           rem / 60 % 60, rem % 60));
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
    const json_t *meta = field(obj, "metadata");
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
