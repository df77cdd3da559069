/* client-go's EventCorrelator: EventAggregator, eventLogger and
 * EventSourceObjectSpamFilter in the order EventCorrelate runs them. */
#include "controllers/event_correlator_internal.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/lru_internal.h"
#include "controllers/rate_limit_internal.h"
#include "kube/time.h"
#include "util/buf.h"

/* What the aggregator remembers of a group of similar events: the distinct
 * messages of the interval (at most CTL_EVENT_AGGREGATE_MAX) and when one
 * was last seen. */
typedef struct aggregate_record {
    char *messages[CTL_EVENT_AGGREGATE_MAX];
    size_t count;
    int64_t last_ms;
} aggregate_record;

/* eventLog: what the logger remembers of an Event it has written. */
typedef struct event_log {
    long count;
    char first[KUBE_TIME_TEXT_MAX];
    char name[320];
} event_log;

struct ctl_events {
    ctl_lru *aggregates, *logs, *spam;
    int64_t last_name_ns;
};

static void free_aggregate(void *v)
{
    aggregate_record *r = v;
    for (size_t i = 0; i < r->count; i++)
        free(r->messages[i]);
    free(r);
}

ctl_events *ctl_events_new(void)
{
    ctl_events *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->aggregates = ctl_lru_new(CTL_EVENT_CACHE_ENTRIES, free_aggregate);
    c->logs = ctl_lru_new(CTL_EVENT_CACHE_ENTRIES, free);
    c->spam = ctl_lru_new(CTL_EVENT_CACHE_ENTRIES, free);
    if (!c->aggregates || !c->logs || !c->spam) {
        ctl_events_free(c);
        return NULL;
    }
    return c;
}

void ctl_events_free(ctl_events *c)
{
    if (!c) return;
    ctl_lru_free(c->aggregates);
    ctl_lru_free(c->logs);
    ctl_lru_free(c->spam);
    free(c);
}

void ctl_event_out_free(ctl_event_out *out)
{
    json_decref(out->event);
    json_decref(out->patch);
    out->event = out->patch = NULL;
}

/* ---- keys ---- */

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

/* client-go joins the fields with nothing between them; a unit separator
 * keeps "ab"+"c" apart from "a"+"bc" and changes nothing else. */
static char *join(const char **fields, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fields[i] = or_empty(fields[i]);
    gp_buf b = {0};
    gp_buf_join(&b, fields, n, "\x1f");
    return gp_buf_take(&b);
}

/* The source and object fields every key starts with (getSpamKey's). */
#define OBJECT_FIELDS(in)                                                                          \
    (in)->component, (in)->host, (in)->kind, (in)->ns, (in)->name, (in)->uid, (in)->api_version

/* getEventKey: everything but the times (FieldPath is never set here). */
static char *event_key(const ctl_event_in *in, const char *message)
{
    const char *f[] = {OBJECT_FIELDS(in), in->type, in->reason, message};
    return join(f, sizeof f / sizeof *f);
}

/* EventAggregatorByReasonFunc's aggregate key: the message aside (the
 * reporting controller and instance are the source's). */
static char *aggregate_key(const ctl_event_in *in)
{
    const char *f[] = {OBJECT_FIELDS(in), in->type, in->reason, "aggregate"};
    return join(f, sizeof f / sizeof *f);
}

static char *spam_key(const ctl_event_in *in)
{
    const char *f[] = {OBJECT_FIELDS(in)};
    return join(f, sizeof f / sizeof *f);
}

/* ---- the aggregator ---- */

/* EventAggregate: true when the event is to be recorded as the group's
 * aggregate (its cache key then the group's). */
static bool aggregate(ctl_events *c, const char *group, const char *message, int64_t now_ms)
{
    aggregate_record *r = ctl_lru_get(c->aggregates, group);
    if (r && now_ms - r->last_ms > (int64_t)CTL_EVENT_AGGREGATE_SECONDS * 1000) {
        ctl_lru_remove(c->aggregates, group);
        r = NULL;
    }
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r || ctl_lru_put(c->aggregates, group, r) != 0) return false;
    }
    r->last_ms = now_ms;
    bool known = false;
    for (size_t i = 0; i < r->count && !known; i++)
        known = strcmp(r->messages[i], message) == 0;
    if (!known && r->count < CTL_EVENT_AGGREGATE_MAX) {
        char *copy = strdup(message);
        if (copy) r->messages[r->count++] = copy;
    }
    if (r->count < CTL_EVENT_AGGREGATE_MAX) return false;
    /* "do not grow our local key set any larger than max": PopAny */
    free(r->messages[--r->count]);
    return true;
}

/* ---- the Event ---- */

static json_t *involved_object(const ctl_event_in *in)
{
    json_t *o = json_object();
    const struct {
        const char *key, *value;
    } f[] = {{"kind", in->kind},
             {"namespace", in->ns},
             {"name", in->name},
             {"uid", in->uid},
             {"apiVersion", in->api_version},
             {"resourceVersion", in->resource_version}};
    for (size_t i = 0; o && i < sizeof f / sizeof *f; i++)
        if (f[i].value && *f[i].value) json_object_set_new(o, f[i].key, json_string(f[i].value));
    return o;
}

/* makeEvent's Event (the aggregate's is the aggregator's copy: no
 * reporting fields). */
static json_t *new_event(const ctl_event_in *in, const char *name, const char *ns,
                         const char *message, const char *first, const char *now, long count,
                         bool reporting)
{
    json_t *source = json_pack("{s:s}", "component", or_empty(in->component));
    if (source && in->host && *in->host) json_object_set_new(source, "host", json_string(in->host));
    json_t *ev =
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:o, s:s, s:s, s:s, s:o, s:s, s:s, s:I}", "apiVersion",
                  "v1", "kind", "Event", "metadata", "name", name, "namespace", ns,
                  "involvedObject", involved_object(in), "reason", or_empty(in->reason), "message",
                  message, "type", or_empty(in->type), "source", source, "firstTimestamp", first,
                  "lastTimestamp", now, "count", (json_int_t)count);
    if (ev && reporting) {
        const char *instance = in->host && *in->host ? in->host : or_empty(in->component);
        json_object_set_new(ev, "reportingComponent", json_string(or_empty(in->component)));
        json_object_set_new(ev, "reportingInstance", json_string(instance));
    }
    return ev;
}

/* ---- EventCorrelate ---- */

/* The spam filter's verdict: true when the source may not say more about
 * the object now. */
static bool spam(ctl_events *c, const ctl_event_in *in, int64_t now_ms)
{
    char *key = spam_key(in);
    if (!key) return false;
    ctl_token_bucket *b = ctl_lru_get(c->spam, key);
    if (!b) {
        b = malloc(sizeof *b);
        if (b) ctl_tb_init(b, CTL_EVENT_SPAM_QPS, CTL_EVENT_SPAM_BURST, now_ms);
        if (!b || ctl_lru_put(c->spam, key, b) != 0) b = NULL;
    }
    free(key);
    return b && !ctl_tb_try(b, now_ms);
}

int ctl_events_correlate(ctl_events *c, const ctl_event_in *in, int64_t now_ms, int64_t name_ns,
                         ctl_event_out *out)
{
    memset(out, 0, sizeof *out);
    if (!in->name || !*in->name) return -1;
    const char *message = or_empty(in->message);
    const char *ns = in->ns && *in->ns ? in->ns : "default";
    char now[KUBE_TIME_TEXT_MAX];
    kube_time_format(now_ms / 1000, now);
    if (name_ns <= c->last_name_ns) name_ns = c->last_name_ns + 1;
    c->last_name_ns = name_ns;

    char *group = aggregate_key(in);
    if (!group) return -1;
    bool aggregated = aggregate(c, group, message, now_ms);
    char *combined = aggregated ? gp_format("%s%s", CTL_EVENT_AGGREGATE_PREFIX, message) : NULL;
    const char *said = aggregated ? combined : message;
    char *key = aggregated ? group : event_key(in, message);
    if (!said || !key) {
        free(combined);
        if (key != group) free(key);
        free(group);
        return -1;
    }

    /* eventObserve: the same Event again, or a new one */
    event_log *log = ctl_lru_get(c->logs, key);
    bool repeat = log != NULL;
    if (!log) {
        log = calloc(1, sizeof *log);
        if (log) {
            snprintf(log->name, sizeof log->name, "%.240s.%" PRIx64, in->name, (uint64_t)name_ns);
            snprintf(log->first, sizeof log->first, "%s", now);
        }
        if (!log || ctl_lru_put(c->logs, key, log) != 0) log = NULL;
    }
    if (key != group) free(key);
    free(group);
    if (!log) {
        free(combined);
        return -1;
    }
    log->count++;
    out->event = new_event(in, log->name, ns, said, log->first, now, log->count, !aggregated);
    if (repeat && out->event)
        out->patch = json_pack("{s:I, s:s, s:s}", "count", (json_int_t)log->count, "lastTimestamp",
                               now, "message", said);
    free(combined);
    if (!out->event || (repeat && !out->patch)) {
        ctl_event_out_free(out);
        return -1;
    }
    out->ns =
        json_string_value(json_object_get(json_object_get(out->event, "metadata"), "namespace"));
    out->name = json_string_value(json_object_get(json_object_get(out->event, "metadata"), "name"));
    out->action = spam(c, in, now_ms) ? CTL_EVENT_DROP
                  : repeat            ? CTL_EVENT_PATCH
                                      : CTL_EVENT_CREATE;
    return 0;
}
