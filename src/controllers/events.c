/* The controllers' events, through client-go's correlator
 * (event_correlator_internal.h): a repeat is a patch of the Event it
 * repeats, sent at once (should the Event be gone, deleted with its
 * namespace, it is created again, as recordEvent does), a new one a POST
 * queued with the other writes, and what the spam filter holds back is not
 * sent at all. */
#include <time.h>

#include "controllers/controllers_internal.h"

ctl_wq_write *ctl_event_write_in(ctl_loop *c, const ctl_event_in *in, int64_t now_ms, bool *sent)
{
    *sent = false;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ctl_event_out out;
    if (ctl_events_correlate(c->events, in, now_ms,
                             (int64_t)ts.tv_sec * 1000000000 + (int64_t)ts.tv_nsec, &out) != 0)
        return NULL;
    ctl_wq_write *w = NULL;
    char path[700];
    if (out.action == CTL_EVENT_PATCH) {
        ctl_object_path(path, sizeof path, "", "events", out.ns, out.name, NULL);
        *sent = ctl_send_now(c, "PATCH", path, NULL, CTL_MERGE, out.patch);
    }
    if (out.action == CTL_EVENT_CREATE || (out.action == CTL_EVENT_PATCH && !*sent)) {
        ctl_object_path(path, sizeof path, "", "events", out.ns, NULL, NULL);
        w = ctl_wq_write_new("POST", path, NULL, NULL, json_incref(out.event));
    }
    ctl_event_out_free(&out);
    return w;
}

/* reference.GetReference of a stored object. */
static ctl_event_in reference_of(const json_t *obj, const char *kind, const char *api_version)
{
    const json_t *m = kube_obj(obj, "metadata");
    return (ctl_event_in){.kind = kind,
                          .api_version = api_version,
                          .ns = kube_str_or_null(m, "namespace"),
                          .name = kube_str_or_null(m, "name"),
                          .uid = kube_str_or_null(m, "uid"),
                          .resource_version = kube_str_or_null(m, "resourceVersion")};
}

ctl_wq_write *ctl_event_write(ctl_loop *c, const json_t *obj, const char *kind,
                              const char *api_version, const char *type, const char *reason,
                              const char *message, const char *component, int64_t now_ms,
                              bool *sent)
{
    ctl_event_in in = reference_of(obj, kind, api_version);
    in.type = type;
    in.reason = reason;
    in.message = message;
    in.component = component;
    return ctl_event_write_in(c, &in, now_ms, sent);
}

int ctl_record(ctl_loop *c, const ctl_event_in *in, int64_t now_ms)
{
    bool sent;
    ctl_wq_write *w = ctl_event_write_in(c, in, now_ms, &sent);
    if (sent) return 1;
    if (!w) return 0;
    ctl_wq_push(c->wq, w);
    return 1;
}

int ctl_record_event(ctl_loop *c, const json_t *obj, const char *kind, const char *api_version,
                     const char *type, const char *reason, const char *message,
                     const char *component, int64_t now_ms)
{
    bool sent;
    ctl_wq_write *w =
        ctl_event_write(c, obj, kind, api_version, type, reason, message, component, now_ms, &sent);
    if (sent) return 1;
    if (!w) return 0;
    ctl_wq_push(c->wq, w);
    return 1;
}
