#include "kube/pod_print.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kube/json.h"
#include "kube/pod.h"
#include "util/error.h"

static void set_reason(kube_pod_print *p, const char *prefix, const char *reason)
{
    p->prefix = prefix;
    p->reason = reason;
}

static void set_number(kube_pod_print *p, const char *prefix, const char *fmt, ...) GP_PRINTF(3, 4);

static void set_number(kube_pod_print *p, const char *prefix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->number, sizeof p->number, fmt, ap);
    va_end(ap);
    p->prefix = prefix;
    p->reason = NULL;
}

/* isPodInitializedConditionTrue: the first Initialized condition decides. */
static bool initialized(const json_t *pod)
{
    return kube_str_is(kube_condition(pod, "Initialized"), "status", "True");
}

/* hasPodReadyCondition: any Ready condition that is True. */
static bool has_ready_condition(const json_t *pod)
{
    size_t i;
    const json_t *c;
    json_array_foreach(kube_arr(kube_obj(pod, "status"), "conditions"), i, c)
    {
        if (kube_str_is(c, "type", "Ready") && kube_str_is(c, "status", "True")) return true;
    }
    return false;
}

/* IsRestartableInitContainer of initContainers[name]: printPod looks the
 * spec up in a map by name, so with duplicate names the last one counts. */
static bool sidecar_named(const json_t *init_specs, const char *name)
{
    const json_t *found = NULL;
    size_t i;
    const json_t *spec;
    json_array_foreach(init_specs, i, spec)
    {
        if (!strcmp(kube_str(spec, "name"), name)) found = spec;
    }
    return kube_container_is_sidecar(found);
}

/* The restart count and the last termination time of one container status. */
static void count_restarts(const json_t *cs, long long *restarts, kube_time *last)
{
    *restarts += kube_int(cs, "restartCount");
    const json_t *term = kube_obj(kube_obj(cs, "lastState"), "terminated");
    if (!term) return;
    kube_time finished = kube_time_of(kube_get(term, "finishedAt"));
    if (kube_time_before(*last, finished)) *last = finished;
}

/* The init container loop: stops at the first init container that has not
 * completed. Returns whether the pod is still initializing. */
static bool tally_init_containers(const json_t *pod, kube_pod_print *p, long long *sidecar_restarts,
                                  kube_time *sidecar_last)
{
    const json_t *specs = kube_arr(kube_obj(pod, "spec"), "initContainers");
    size_t i;
    const json_t *cs;
    json_array_foreach(kube_arr(kube_obj(pod, "status"), "initContainerStatuses"), i, cs)
    {
        count_restarts(cs, &p->restarts, &p->last_restart);
        bool sidecar = sidecar_named(specs, kube_str(cs, "name"));
        if (sidecar) count_restarts(cs, sidecar_restarts, sidecar_last);
        const json_t *state = kube_obj(cs, "state");
        const json_t *term = kube_obj(state, "terminated");
        const char *waiting = kube_str(kube_obj(state, "waiting"), "reason");
        if (term && kube_int(term, "exitCode") == 0) continue;
        if (sidecar && kube_true(cs, "started")) {
            p->ready += kube_true(cs, "ready");
            continue;
        }
        if (term && *kube_str(term, "reason"))
            set_reason(p, "Init:", kube_str(term, "reason"));
        else if (term && kube_int(term, "signal") != 0)
            set_number(p, "Init:", "Signal:%lld", kube_int(term, "signal"));
        else if (term)
            set_number(p, "Init:", "ExitCode:%lld", kube_int(term, "exitCode"));
        else if (*waiting && strcmp(waiting, "PodInitializing") != 0)
            set_reason(p, "Init:", waiting);
        else
            set_number(p, "Init:", "%zu/%zu", i, json_array_size(specs));
        return true;
    }
    return false;
}

/* The regular containers, last to first, so the first container's state
 * has the final word on the reason. */
static void tally_containers(const json_t *pod, kube_pod_print *p)
{
    const json_t *statuses = kube_arr(kube_obj(pod, "status"), "containerStatuses");
    bool running = false;
    for (size_t i = json_array_size(statuses); i-- > 0;) {
        const json_t *cs = json_array_get(statuses, i);
        count_restarts(cs, &p->restarts, &p->last_restart);
        const json_t *state = kube_obj(cs, "state");
        const json_t *term = kube_obj(state, "terminated");
        const char *waiting = kube_str(kube_obj(state, "waiting"), "reason");
        if (*waiting)
            set_reason(p, "", waiting);
        else if (term && *kube_str(term, "reason"))
            set_reason(p, "", kube_str(term, "reason"));
        else if (term && kube_int(term, "signal") != 0)
            set_number(p, "", "Signal:%lld", kube_int(term, "signal"));
        else if (term)
            set_number(p, "", "ExitCode:%lld", kube_int(term, "exitCode"));
        else if (kube_true(cs, "ready") && kube_obj(state, "running")) {
            running = true;
            p->ready++;
        }
    }
    /* A container still running turns a "Completed" pod back. */
    if (running && !*p->prefix && p->reason && !strcmp(p->reason, "Completed"))
        set_reason(p, "", has_ready_condition(pod) ? "Running" : "NotReady");
}

/* The starting point: phase, status.reason, SchedulingGated. */
static const char *base_reason(const json_t *pod)
{
    const json_t *status = kube_obj(pod, "status");
    const char *reason = kube_str(status, "phase");
    if (*kube_str(status, "reason")) reason = kube_str(status, "reason");
    size_t i;
    const json_t *c;
    json_array_foreach(kube_arr(status, "conditions"), i, c)
    {
        if (kube_str_is(c, "type", "PodScheduled") && kube_str_is(c, "reason", "SchedulingGated"))
            reason = "SchedulingGated";
    }
    return reason;
}

static long long sidecar_count(const json_t *pod)
{
    long long n = 0;
    size_t i;
    const json_t *spec;
    json_array_foreach(kube_arr(kube_obj(pod, "spec"), "initContainers"), i, spec)
    {
        n += kube_container_is_sidecar(spec);
    }
    return n;
}

void kube_pod_print_read(const json_t *pod, kube_pod_print *p)
{
    memset(p, 0, sizeof *p);
    set_reason(p, "", base_reason(pod));
    p->total = (long long)json_array_size(kube_arr(kube_obj(pod, "spec"), "containers")) +
               sidecar_count(pod);
    long long sidecar_restarts = 0;
    kube_time sidecar_last = {0};
    bool initializing = tally_init_containers(pod, p, &sidecar_restarts, &sidecar_last);
    if (!initializing || initialized(pod)) {
        p->restarts = sidecar_restarts;
        p->last_restart = sidecar_last;
        tally_containers(pod, p);
    }
    if (kube_deleting(pod)) {
        if (kube_str_is(kube_obj(pod, "status"), "reason", "NodeLost"))
            set_reason(p, "", "Unknown");
        else if (!kube_pod_terminal(pod))
            set_reason(p, "", "Terminating");
    }
}

size_t kube_pod_print_status(const kube_pod_print *p, char *buf, size_t size)
{
    int n =
        snprintf(buf, size, "%s%s", p->prefix ? p->prefix : "", p->reason ? p->reason : p->number);
    return n < 0 ? 0 : (size_t)n;
}

size_t kube_pod_status_text(const json_t *pod, char *buf, size_t size)
{
    kube_pod_print p;
    kube_pod_print_read(pod, &p);
    return kube_pod_print_status(&p, buf, size);
}
