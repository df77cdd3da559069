/* client-go's event correlator (tools/record/events_cache.go): a repeat is
 * the same Event with its count one higher, similar events are combined
 * after 10 messages in 10 minutes, and a source may say 25 things about an
 * object, then one every 5 minutes. The recording's DaemonSet whose
 * RuntimeClass is missing: one FailedCreate Event whose count grows to 11
 * over the backoff's tries in 10 s. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "json_assert.h"

#include "controllers/event_correlator_internal.h"
#include "controllers/rate_limit_internal.h"

#define T0    ((int64_t)1735725600000) /* 2025-01-01T10:00:00Z, in ms */
#define T0_NS ((int64_t)1735725600000000000)

static ctl_event_in failed_create(const char *message)
{
    return (ctl_event_in){.kind = "DaemonSet",
                          .api_version = "apps/v1",
                          .ns = "pr2",
                          .name = "dsrc",
                          .uid = "ds-uid",
                          .resource_version = "42",
                          .type = "Warning",
                          .reason = "FailedCreate",
                          .message = message,
                          .component = "daemonset-controller"};
}

#define RC_MISSING                                                                                 \
    "Error creating: pods \"dsrc-\" is forbidden: pod rejected: RuntimeClass \"missing\" not "     \
    "found"

static void a_new_event_is_makeEvents(void **state)
{
    (void)state;
    ctl_events *c = ctl_events_new();
    ctl_event_in in = failed_create(RC_MISSING);
    ctl_event_out out;
    assert_int_equal(ctl_events_correlate(c, &in, T0, T0_NS, &out), 0);
    assert_int_equal(out.action, CTL_EVENT_CREATE);
    assert_null(out.patch);
    json_t *want =
        sqf("{'apiVersion':'v1','kind':'Event','metadata':{'name':'dsrc.%llx',"
            "'namespace':'pr2'},'involvedObject':{'kind':'DaemonSet','namespace':'pr2',"
            "'name':'dsrc','uid':'ds-uid','apiVersion':'apps/v1','resourceVersion':'42'},"
            "'reason':'FailedCreate','message':'%s','type':'Warning',"
            "'source':{'component':'daemonset-controller'},"
            "'firstTimestamp':'2025-01-01T10:00:00Z',"
            "'lastTimestamp':'2025-01-01T10:00:00Z','count':1,"
            "'reportingComponent':'daemonset-controller',"
            "'reportingInstance':'daemonset-controller'}",
            (unsigned long long)T0_NS,
            "Error creating: pods \\\"dsrc-\\\" is forbidden: pod rejected: "
            "RuntimeClass \\\"missing\\\" not found");
    assert_json_equal(out.event, want);
    assert_string_equal(out.ns, "pr2");
    json_decref(want);
    ctl_event_out_free(&out);
    /* an object without a namespace has its events in "default" */
    in = (ctl_event_in){.kind = "Node",
                        .api_version = "v1",
                        .name = "nr-1",
                        .type = "Normal",
                        .reason = "NodeNotReady",
                        .message = "Node nr-1 status is now: NodeNotReady",
                        .component = "node-controller"};
    assert_int_equal(ctl_events_correlate(c, &in, T0, T0_NS, &out), 0);
    assert_string_equal(out.ns, "default");
    /* two events in the same nanosecond still get names of their own */
    assert_string_equal(out.name, "nr-1.1816893ca78d4001");
    ctl_event_out_free(&out);
    ctl_events_free(c);
}

/* The recording: the DaemonSet controller's tries at 0, 5, 15, ... 5115 ms
 * (its backoff) in 10 s make one Event whose count reaches 11. */
static void the_recordings_failed_creates_are_one_event(void **state)
{
    (void)state;
    ctl_events *c = ctl_events_new();
    ctl_backoff *b = ctl_backoff_new(T0);
    ctl_event_in in = failed_create(RC_MISSING);
    int64_t t = T0;
    char first[300] = "";
    int creates = 0, patches = 0;
    for (int try = 1; t < T0 + 10000; try++) {
        ctl_event_out out;
        assert_int_equal(ctl_events_correlate(c, &in, t, T0_NS + (t - T0) * 1000000, &out), 0);
        if (out.action == CTL_EVENT_CREATE) {
            creates++;
            snprintf(first, sizeof first, "%s", out.name);
        } else {
            assert_int_equal(out.action, CTL_EVENT_PATCH);
            patches++;
            /* the same Event, its count and lastTimestamp moving on */
            assert_string_equal(out.name, first);
            assert_int_equal(json_integer_value(json_object_get(out.patch, "count")), try);
            assert_string_equal(json_string_value(json_object_get(out.patch, "message")),
                                RC_MISSING);
            assert_non_null(json_object_get(out.patch, "lastTimestamp"));
            assert_string_equal(json_string_value(json_object_get(out.event, "firstTimestamp")),
                                "2025-01-01T10:00:00Z");
        }
        ctl_event_out_free(&out);
        t += ctl_backoff_when(b, "pr2/dsrc", t);
    }
    assert_int_equal(creates, 1);
    assert_int_equal(patches, 10);
    ctl_backoff_free(b);
    ctl_events_free(c);
}

/* Messages that differ (a pod name in each) are counted apart, and from the
 * tenth on combined into one Event. */
static void similar_events_are_combined_after_ten(void **state)
{
    (void)state;
    ctl_events *c = ctl_events_new();
    char msg[64];
    char combined_name[300] = "";
    for (int i = 1; i <= 14; i++) {
        snprintf(msg, sizeof msg, "Created pod: ds-%05d", i);
        ctl_event_in in = failed_create(msg);
        in.type = "Normal";
        in.reason = "SuccessfulCreate";
        ctl_event_out out;
        assert_int_equal(ctl_events_correlate(c, &in, T0 + i, T0_NS + i, &out), 0);
        const char *said = json_string_value(json_object_get(out.event, "message"));
        if (i < 10) {
            assert_int_equal(out.action, CTL_EVENT_CREATE);
            assert_string_equal(said, msg);
        } else {
            char want[128];
            snprintf(want, sizeof want, "(combined from similar events): %s", msg);
            assert_string_equal(said, want);
            /* the aggregate is the aggregator's own copy: no reporting fields */
            assert_null(json_object_get(out.event, "reportingComponent"));
            if (i == 10) {
                assert_int_equal(out.action, CTL_EVENT_CREATE);
                snprintf(combined_name, sizeof combined_name, "%s", out.name);
            } else {
                assert_int_equal(out.action, CTL_EVENT_PATCH);
                assert_string_equal(out.name, combined_name);
                assert_int_equal(json_integer_value(json_object_get(out.patch, "count")), i - 9);
                assert_string_equal(json_string_value(json_object_get(out.patch, "message")), want);
            }
        }
        ctl_event_out_free(&out);
    }
    /* ten minutes without one and the group starts over */
    ctl_event_in in = failed_create("Created pod: ds-99999");
    in.type = "Normal";
    in.reason = "SuccessfulCreate";
    ctl_event_out out;
    assert_int_equal(ctl_events_correlate(c, &in, T0 + 14 + 600001, T0_NS + 99, &out), 0);
    assert_string_equal(json_string_value(json_object_get(out.event, "message")),
                        "Created pod: ds-99999");
    ctl_event_out_free(&out);
    ctl_events_free(c);
}

/* 25 events about one object from one source, then one every 5 minutes;
 * the held back are still counted. */
static void the_spam_filter_holds_a_source_to_25(void **state)
{
    (void)state;
    ctl_events *c = ctl_events_new();
    ctl_event_in in = failed_create(RC_MISSING);
    ctl_event_out out;
    for (int i = 1; i <= 25; i++) {
        assert_int_equal(ctl_events_correlate(c, &in, T0 + i, T0_NS + i, &out), 0);
        assert_int_not_equal(out.action, CTL_EVENT_DROP);
        ctl_event_out_free(&out);
    }
    for (int i = 26; i <= 40; i++) {
        assert_int_equal(ctl_events_correlate(c, &in, T0 + i, T0_NS + i, &out), 0);
        assert_int_equal(out.action, CTL_EVENT_DROP);
        ctl_event_out_free(&out);
    }
    /* another object of the same source, and the same object from another
     * source, have their own 25 */
    ctl_event_in other = in;
    other.name = "other";
    other.uid = "other-uid";
    assert_int_equal(ctl_events_correlate(c, &other, T0 + 50, T0_NS + 50, &out), 0);
    assert_int_equal(out.action, CTL_EVENT_CREATE);
    ctl_event_out_free(&out);
    ctl_event_in kubelet = in;
    kubelet.component = "kubelet";
    assert_int_equal(ctl_events_correlate(c, &kubelet, T0 + 50, T0_NS + 51, &out), 0);
    assert_int_equal(out.action, CTL_EVENT_CREATE);
    ctl_event_out_free(&out);
    /* five minutes later one more passes, with every try counted */
    assert_int_equal(ctl_events_correlate(c, &in, T0 + 25 + 300000, T0_NS + 60, &out), 0);
    assert_int_equal(out.action, CTL_EVENT_PATCH);
    assert_int_equal(json_integer_value(json_object_get(out.patch, "count")), 41);
    ctl_event_out_free(&out);
    assert_int_equal(ctl_events_correlate(c, &in, T0 + 25 + 300001, T0_NS + 61, &out), 0);
    assert_int_equal(out.action, CTL_EVENT_DROP);
    ctl_event_out_free(&out);
    ctl_events_free(c);
}

/* Each cache holds 4096 entries: an event older than that many others is
 * new again. */
static void the_caches_forget_the_least_recent(void **state)
{
    (void)state;
    ctl_events *c = ctl_events_new();
    char name[32];
    ctl_event_out out;
    for (int i = 0; i <= CTL_EVENT_CACHE_ENTRIES; i++) {
        snprintf(name, sizeof name, "p-%d", i);
        ctl_event_in in = {.kind = "Pod",
                           .api_version = "v1",
                           .ns = "lab",
                           .name = name,
                           .type = "Normal",
                           .reason = "Scheduled",
                           .message = "assigned",
                           .component = "default-scheduler"};
        assert_int_equal(ctl_events_correlate(c, &in, T0, T0_NS + i, &out), 0);
        assert_int_equal(out.action, CTL_EVENT_CREATE);
        ctl_event_out_free(&out);
    }
    ctl_event_in again = {.kind = "Pod",
                          .api_version = "v1",
                          .ns = "lab",
                          .name = "p-0",
                          .type = "Normal",
                          .reason = "Scheduled",
                          .message = "assigned",
                          .component = "default-scheduler"};
    assert_int_equal(ctl_events_correlate(c, &again, T0, T0_NS + 9999, &out), 0);
    assert_int_equal(out.action, CTL_EVENT_CREATE);
    ctl_event_out_free(&out);
    ctl_events_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_new_event_is_makeEvents),
        cmocka_unit_test(the_recordings_failed_creates_are_one_event),
        cmocka_unit_test(similar_events_are_combined_after_ten),
        cmocka_unit_test(the_spam_filter_holds_a_source_to_25),
        cmocka_unit_test(the_caches_forget_the_least_recent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
