/* FitError text back into counts (see sched_message.h). The grammar is
 * FitError.Error() of pkg/scheduler/framework/types.go, v1.31+: every reason
 * item starts with its count, so items are split at ", <digits> " and a
 * reason that itself holds ", " (a plugin list) stays whole. */
#include "analyze/sched_message.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_NODES       "no nodes available to schedule pods"
#define PREEMPTION     " preemption: "
#define TRUNCATED      " ..."
#define ABSENT_AFFINTY "node(s) didn't satisfy plugin(s) [NodeAffinity]"

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Length of the run of digits at s. */
static size_t digits(const char *s, size_t len)
{
    size_t n = 0;
    while (n < len && isdigit((unsigned char)s[n]))
        n++;
    return n;
}

/* True when s[0..len) starts an item: digits then a space. */
static bool item_starts(const char *s, size_t len)
{
    size_t d = digits(s, len);
    return d > 0 && d < len && s[d] == ' ';
}

static json_t *reason_item(const char *s, size_t len)
{
    size_t d = digits(s, len);
    char *text = strndup(s + d + 1, len - d - 1);
    if (!text) return NULL;
    char code[AN_BLOCKER_MAX];
    json_t *item = json_pack("{s:I, s:s, s:s}", "count", (json_int_t)strtoll(s, NULL, 10), "reason",
                             text, "blocker", an_sched_blocker(text, code));
    free(text);
    return item;
}

/* The items of "1 a, 2 b, 10 c" (no final period). */
static json_t *reason_items(const char *s, size_t len)
{
    json_t *items = json_array();
    size_t start = 0;
    for (size_t i = 0; items && i <= len; i++) {
        bool at_end = i == len;
        bool split = !at_end && i + 2 <= len && s[i] == ',' && s[i + 1] == ' ' &&
                     item_starts(s + i + 2, len - i - 2);
        if (!at_end && !split) continue;
        if (json_array_append_new(items, reason_item(s + start, i - start)) < 0) {
            json_decref(items);
            return NULL;
        }
        start = i + 2;
        i++;
    }
    return items;
}

/* "0/<N> nodes are available: <items or prefilter text>." into `out`. */
static int parse_fit(const char *s, size_t len, json_t *out)
{
    unsigned long total;
    int used = 0;
    char head[64];
    snprintf(head, sizeof head, "%.*s", (int)(len < 63 ? len : 63), s);
    if (sscanf(head, "0/%lu nodes are available:%n", &total, &used) != 1 || used == 0) return -1;
    s += used;
    len -= (size_t)used;
    if (len > 0 && s[0] == ' ') s++, len--;
    if (len > 0 && s[len - 1] == '.') len--;
    json_object_set_new(out, "total", json_integer((json_int_t)total));
    if (len == 0) return 0;
    if (!item_starts(s, len)) {
        json_object_set_new(out, "prefilter", json_stringn(s, len));
        return 0;
    }
    json_t *items = reason_items(s, len);
    if (!items) return -1;
    json_object_set_new(out, "reasons", items);
    return 0;
}

static json_t *parse_preemption(const char *s, size_t len)
{
    json_t *p = json_object();
    if (!p) return NULL;
    if (starts_with(s, "0/") && parse_fit(s, len, p) == 0) return p;
    json_object_clear(p);
    json_object_set_new(p, "text", json_stringn(s, len));
    return p;
}

json_t *an_sched_message_parse(const char *message, gp_error *err)
{
    if (!message) message = "";
    size_t len = strlen(message);
    json_t *out = json_object();
    if (!out) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    bool truncated =
        len >= strlen(TRUNCATED) && strcmp(message + len - strlen(TRUNCATED), TRUNCATED) == 0;
    if (truncated) len -= strlen(TRUNCATED);
    if (strcmp(message, NO_NODES) == 0) {
        json_object_set_new(out, "total", json_integer(0));
        json_object_set_new(out, "blocker", json_string("unknown"));
        return out;
    }
    const char *pre = strstr(message, PREEMPTION);
    if (pre && (size_t)(pre - message) >= len) pre = NULL;
    size_t main_len = pre ? (size_t)(pre - message) : len;
    if (parse_fit(message, main_len, out) < 0) {
        json_decref(out);
        gp_error_set(err, NULL, 0, 0, "not a scheduler FitError message: %s", message);
        return NULL;
    }
    if (pre) {
        const char *p = pre + strlen(PREEMPTION);
        json_object_set_new(out, "preemption", parse_preemption(p, len - (size_t)(p - message)));
    }
    if (truncated) json_object_set_new(out, "truncated", json_true());
    json_object_set_new(out, "blocker", json_string(an_sched_primary_blocker(out)));
    return out;
}

/* The taint key of "node(s) had untolerated taint {key: value}". */
static bool taint_is(const char *reason, const char *key)
{
    const char *brace = strchr(reason, '{');
    size_t n = strlen(key);
    return brace && strncmp(brace + 1, key, n) == 0 && brace[1 + n] == ':';
}

const char *an_sched_blocker(const char *reason, char buf[AN_BLOCKER_MAX])
{
    const char *code = "unknown";
    if (starts_with(reason, "Insufficient ")) {
        snprintf(buf, AN_BLOCKER_MAX, "insufficient-%s", reason + strlen("Insufficient "));
        return buf;
    }
    if (strcmp(reason, "Too many pods") == 0)
        code = "insufficient-pods";
    else if (starts_with(reason, "node(s) had untolerated taint")) {
        if (taint_is(reason, "node.kubernetes.io/not-ready") ||
            taint_is(reason, "node.kubernetes.io/unreachable"))
            code = "node-not-ready";
        else if (taint_is(reason, "node.kubernetes.io/unschedulable"))
            code = "unschedulable-node";
        else
            code = "untolerated-taint";
    } else if (strcmp(reason, "node(s) didn't match Pod's node affinity/selector") == 0 ||
               strcmp(reason, ABSENT_AFFINTY) == 0)
        code = "node-affinity";
    else if (strcmp(reason, "node(s) were unschedulable") == 0)
        code = "unschedulable-node";
    snprintf(buf, AN_BLOCKER_MAX, "%s", code);
    return buf;
}

/* Position of the filter that writes a blocker (k8s-semantics.md 5.2). */
static int filter_rank(const char *blocker)
{
    if (strcmp(blocker, "unschedulable-node") == 0) return 1;
    if (strcmp(blocker, "node-not-ready") == 0 || strcmp(blocker, "untolerated-taint") == 0)
        return 3;
    if (strcmp(blocker, "node-affinity") == 0) return 4;
    if (starts_with(blocker, "insufficient-")) return 6;
    return 7;
}

const char *an_sched_primary_blocker(const json_t *parsed)
{
    const char *best = NULL, *absent = NULL;
    json_int_t best_count = 0;
    size_t i;
    const json_t *item;
    json_array_foreach(json_object_get(parsed, "reasons"), i, item)
    {
        const char *reason = json_string_value(json_object_get(item, "reason"));
        const char *blocker = json_string_value(json_object_get(item, "blocker"));
        json_int_t count = json_integer_value(json_object_get(item, "count"));
        if (!reason || !blocker) continue;
        if (strcmp(reason, ABSENT_AFFINTY) == 0) {
            absent = blocker;
            continue;
        }
        if (!best || count > best_count ||
            (count == best_count && filter_rank(blocker) < filter_rank(best))) {
            best = blocker;
            best_count = count;
        }
    }
    if (best) return best;
    return absent ? absent : "unknown";
}

const char *an_waiting_blocker(const char *waiting_reason)
{
    static const char *const pulls[] = {"ErrImagePull", "ImagePullBackOff", "InvalidImageName",
                                        "ErrImageNeverPull"};
    if (!waiting_reason) return NULL;
    for (size_t i = 0; i < sizeof pulls / sizeof *pulls; i++)
        if (strcmp(waiting_reason, pulls[i]) == 0) return "image-pull";
    if (strcmp(waiting_reason, "CrashLoopBackOff") == 0) return "crash-loop";
    return NULL;
}

/* The text between `open` and the next '"' after it, into out. */
static bool quoted_after(const char *message, const char *open, char *out, size_t size)
{
    const char *at = strstr(message, open);
    if (!at) return false;
    at += strlen(open);
    const char *end = strchr(at, '"');
    if (!end) return false;
    if (out && size) snprintf(out, size, "%.*s", (int)(end - at), at);
    return true;
}

const char *an_event_blocker(const char *reason, const char *message, char *name, size_t size)
{
    if (name && size) name[0] = '\0';
    if (!reason || !message) return NULL;
    if (strcmp(reason, "FailedCreatePodSandBox") == 0)
        return quoted_after(message, "no runtime for \"", name, size) ? "runtime-handler-missing"
                                                                      : "sandbox-failed";
    if (strcmp(reason, "FailedCreate") != 0) return NULL;
    if (strstr(message, "is forbidden")) {
        if (strstr(message, "not found") && quoted_after(message, "RuntimeClass \"", name, size))
            return "runtimeclass-missing";
        return "pod-create-forbidden";
    }
    return "pod-create-failed";
}
