/* What client-go's event recorder does with an event before it reaches the
 * API server (tools/record/events_cache.go EventCorrelate, and event.go's
 * makeEvent and recordToSink), so that no controller can flood the store:
 *
 *   1. aggregation: events that differ only in their message (same source,
 *      object, type and reason) are counted by message over a rolling 10
 *      minutes; from the 10th distinct message on, they are recorded as one
 *      event "(combined from similar events): MESSAGE";
 *   2. counting: an event seen before (same source, object, type, reason and
 *      message, or the same aggregate) is the same Event object again, its
 *      count one higher and its lastTimestamp now (a patch), firstTimestamp
 *      and name those of its first occurrence;
 *   3. the spam filter: a source may write 25 events about one object, then
 *      one more every 5 minutes (a token bucket per source and object); an
 *      event past that is dropped, though step 2 has counted it.
 * Each of the three keeps at most 4096 entries, least recently used out.
 *
 * The runtime sends what comes out: a new Event to POST, or the patch of an
 * existing one (and, should the patch find it gone, the whole Event to
 * create again, as recordEvent does).
 *
 * Not thread-safe: the controllers' thread owns it. */
#ifndef GPUOP_CONTROLLERS_EVENT_CORRELATOR_INTERNAL_H
#define GPUOP_CONTROLLERS_EVENT_CORRELATOR_INTERNAL_H

#include <jansson.h>
#include <stdint.h>

#define CTL_EVENT_CACHE_ENTRIES     4096
#define CTL_EVENT_AGGREGATE_MAX     10
#define CTL_EVENT_AGGREGATE_SECONDS 600
#define CTL_EVENT_SPAM_BURST        25
#define CTL_EVENT_SPAM_QPS          (1.0 / 300.0)
#define CTL_EVENT_AGGREGATE_PREFIX  "(combined from similar events): "

/* An event as EventRecorder.Event gets it: the involved object's reference
 * (NULL members are left out of it) and what is said about it. */
typedef struct ctl_event_in {
    const char *kind, *api_version, *ns, *name, *uid, *resource_version;
    const char *type, *reason, *message;
    const char *component; /* the source, e.g. "daemonset-controller" */
    const char *host;      /* the source's host (a kubelet's node), or NULL */
} ctl_event_in;

typedef enum ctl_event_action {
    CTL_EVENT_DROP,   /* the spam filter held it back */
    CTL_EVENT_CREATE, /* POST `event` to the events of its namespace */
    CTL_EVENT_PATCH,  /* PATCH `patch` (merge patch) onto ns/name; when that
                         finds no such event, POST `event` */
} ctl_event_action;

typedef struct ctl_event_out {
    ctl_event_action action;
    json_t *event;         /* the whole Event (both CREATE and PATCH), owned */
    json_t *patch;         /* {count, lastTimestamp, message} for PATCH, owned */
    const char *ns, *name; /* the Event's, pointing into `event` */
} ctl_event_out;

typedef struct ctl_events ctl_events;

ctl_events *ctl_events_new(void);
void ctl_events_free(ctl_events *c);

/* EventCorrelate of one event at now_ms. A new Event is named after the
 * object and name_ns, a UnixNano (made unique here should two events come
 * in the same nanosecond), as makeEvent names it. Returns 0 with *out filled
 * (free with ctl_event_out_free), -1 when out of memory or the event has no
 * object name. */
int ctl_events_correlate(ctl_events *c, const ctl_event_in *in, int64_t now_ms, int64_t name_ns,
                         ctl_event_out *out);
void ctl_event_out_free(ctl_event_out *out);

#endif
