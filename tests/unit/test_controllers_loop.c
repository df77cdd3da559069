/* The controllers' runtime, stepped by hand (ctl_loop_step) over an API
 * server in memory: what the lifecycle-and-backoff recording
 * (../shared/k8s-cases) shows, at times the test chooses.
 *
 *   - a node whose kubelet is down (gpuop.io/not-ready=true) posts nothing:
 *     within the grace period it stays Ready, after it the node lifecycle
 *     controller makes it Unknown, taints it unreachable NoSchedule and then
 *     NoExecute, marks its pods not ready with NodeNotReady; the taint
 *     eviction controller deletes the pod that tolerates unreachable for
 *     10 s, 10 s later, with TaintManagerEviction, and it stays Terminating
 *     (nobody finishes it); the kubelet up again brings the node back and
 *     the taints go;
 *   - a DaemonSet whose pods are refused (a missing RuntimeClass) is retried
 *     with the workqueue's backoff, one create a try, not on every pass;
 *   - the taint kube-apiserver puts on a new node goes once it is Ready. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "json_assert.h"

#include "apiserver/loopback.h"
#include "apiserver/store.h"
#include "controllers/controllers.h"
#include "controllers/controllers_internal.h"
#include "kube/json.h"

#define T0  ((int64_t)1735725600000) /* 2025-01-01T10:00:00Z */
#define SEC 1000

typedef struct fixture {
    as_api api;
    ctl_loop *c;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    gp_error err = {0};
    f->api.store = as_store_open(NULL, 4096, &err);
    assert_non_null(f->api.store);
    assert_int_equal(as_api_bootstrap(&f->api, &err), 0);
    ctl_loop_options opt = {.node_monitor_grace_ms = 5 * SEC};
    f->c = ctl_loop_new(&f->api, &opt);
    assert_non_null(f->c);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ctl_loop_free(f->c);
    as_store_close(f->api.store);
    free(f);
    return 0;
}

static json_t *call(fixture *f, const char *method, const char *path, const char *type,
                    const char *body_sq, unsigned want)
{
    json_t *body = body_sq ? sq_load(body_sq) : NULL;
    as_reply r = as_loopback_call(&f->api, method, path, NULL, type, body);
    json_decref(body);
    if (r.status != want) {
        char *text = json_test_dump(r.body);
        print_error("%s %s: %u, wanted %u: %s\n", method, path, r.status, want, text);
        free(text);
    }
    assert_int_equal(r.status, want);
    return r.body;
}

static void create(fixture *f, const char *path, const char *body_sq)
{
    json_decref(call(f, "POST", path, NULL, body_sq, 201));
}

static json_t *get(fixture *f, const char *path)
{
    return call(f, "GET", path, NULL, NULL, 200);
}

/* Passes at `t` until one writes nothing. */
static void settle(fixture *f, int64_t t)
{
    for (int i = 0; i < 30 && ctl_loop_step(f->c, t) > 0; i++)
        ;
}

#define NODE(name)                                                                                 \
    "{'apiVersion':'v1','kind':'Node','metadata':{'name':'" name "',"                              \
    "'annotations':{'kwok.x-k8s.io/node':'fake'},'labels':{'kubernetes.io/hostname':'" name "',"   \
    "'pr2':'y'}},'status':{'capacity':{'cpu':'16','memory':'32Gi','pods':'110',"                   \
    "'nvidia.com/gpu':'1'}}}"

static const char *ready_status(fixture *f, const char *node)
{
    static char status[32];
    char path[128];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    json_t *n = get(f, path);
    snprintf(status, sizeof status, "%s", kube_str(kube_condition(n, "Ready"), "status"));
    json_decref(n);
    return status;
}

/* "key:effect key:effect" of the node's taints. */
static char *taints_of(fixture *f, const char *node)
{
    char path[128], *out = calloc(1, 512);
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    json_t *n = get(f, path);
    size_t i;
    const json_t *t;
    json_array_foreach(json_object_get(kube_obj(n, "spec"), "taints"), i, t)
    {
        snprintf(out + strlen(out), 512 - strlen(out), "%s%s:%s", i ? " " : "", kube_str(t, "key"),
                 kube_str(t, "effect"));
    }
    json_decref(n);
    return out;
}

static void assert_taints(fixture *f, const char *node, const char *want)
{
    char *got = taints_of(f, node);
    if (strcmp(got, want) != 0)
        print_error("taints of %s: \"%s\", wanted \"%s\"\n", node, got, want);
    assert_string_equal(got, want);
    free(got);
}

/* "reason:message reason:message" of the events about `name` in pr2. */
static char *events_of(fixture *f, const char *name)
{
    json_t *list = get(f, "/api/v1/namespaces/pr2/events");
    char *out = calloc(1, 2048);
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(list, "items"), i, e)
    {
        if (!kube_str_is(kube_obj(e, "involvedObject"), "name", name)) continue;
        snprintf(out + strlen(out), 2048 - strlen(out), "%s%s:%s", *out ? " " : "",
                 kube_str(e, "reason"), kube_str(e, "message"));
    }
    json_decref(list);
    return out;
}

static void assert_events(fixture *f, const char *name, const char *want)
{
    char *got = events_of(f, name);
    if (strcmp(got, want) != 0)
        print_error("events of %s: \"%s\", wanted \"%s\"\n", name, got, want);
    assert_string_equal(got, want);
    free(got);
}

static json_t *pod(fixture *f, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "/api/v1/namespaces/pr2/pods/%s", name);
    return get(f, path);
}

static void assert_pod(fixture *f, const char *name, const char *ready, bool deleting)
{
    json_t *p = pod(f, name);
    assert_string_equal(kube_str(kube_condition(p, "Ready"), "status"), ready);
    assert_string_equal(kube_str(kube_obj(p, "status"), "phase"), "Running");
    assert_int_equal(kube_deleting(p), deleting);
    json_decref(p);
}

static void annotate(fixture *f, const char *node, const char *value_json)
{
    char path[128], body[200];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    snprintf(body, sizeof body, "{'metadata':{'annotations':{'gpuop.io/not-ready':%s}}}",
             value_json);
    json_decref(call(f, "PATCH", path, "application/merge-patch+json", body, 200));
}

static void a_node_whose_kubelet_stops(void **state)
{
    fixture *f = *state;
    create(f, "/api/v1/namespaces", "{'metadata':{'name':'pr2'}}");
    create(f, "/api/v1/nodes", NODE("nr-0"));
    create(f, "/api/v1/nodes", NODE("nr-1"));
    /* the NodeTaint admission plugin's taint, until the node is Ready */
    assert_taints(f, "nr-1", "node.kubernetes.io/not-ready:NoSchedule");
    int64_t t = T0;
    settle(f, t);
    assert_string_equal(ready_status(f, "nr-1"), "True");
    assert_taints(f, "nr-1", "");
    create(f, "/api/v1/namespaces/pr2/pods",
           "{'metadata':{'name':'short'},'spec':{'nodeName':'nr-1','tolerations':[{'key':"
           "'node.kubernetes.io/unreachable','operator':'Exists','effect':'NoExecute',"
           "'tolerationSeconds':10}],'containers':[{'name':'c','image':'busybox'}]}}");
    create(f, "/api/v1/namespaces/pr2/pods",
           "{'metadata':{'name':'long'},'spec':{'nodeName':'nr-1','containers':[{'name':'c',"
           "'image':'busybox'}]}}");
    /* the nodes were not Ready at the first look, all of them: the
     * controller leaves "full disruption" at its next look with an empty
     * NoExecute limiter, which takes 10 s to refill (the recording's script
     * waits 12 s) */
    settle(f, t += 2 * SEC);
    settle(f, t += 13 * SEC);
    assert_pod(f, "short", "True", false);
    assert_pod(f, "long", "True", false);

    /* the kubelet of nr-1 stops; nr-0's goes on */
    annotate(f, "nr-1", "'true'");
    int64_t down = t;
    for (t += 500; t < down + 5 * SEC; t += 500)
        settle(f, t);
    /* within the grace period: still Ready, nothing tainted */
    assert_string_equal(ready_status(f, "nr-1"), "True");
    assert_taints(f, "nr-1", "");
    /* the controller notes a heartbeat when it looks (every 1.25 s, a
     * quarter of the grace period): Unknown 5 to 7.5 s after the last */
    for (; t < down + 8 * SEC; t += 500)
        settle(f, t);
    assert_string_equal(ready_status(f, "nr-1"), "Unknown");
    assert_string_equal(ready_status(f, "nr-0"), "True");
    /* one monitor period later the NoExecute taint follows the NoSchedule one */
    for (; t < down + 10 * SEC; t += 500)
        settle(f, t);
    assert_taints(
        f, "nr-1",
        "node.kubernetes.io/unreachable:NoSchedule node.kubernetes.io/unreachable:NoExecute");
    assert_pod(f, "short", "False", false);
    assert_pod(f, "long", "False", false);
    assert_events(f, "short", "NodeNotReady:Node is not ready");
    int64_t tainted = t;
    /* short tolerates unreachable for 10 s */
    for (; t < tainted + 9 * SEC; t += 500)
        settle(f, t);
    assert_pod(f, "short", "False", false);
    for (; t < tainted + 12 * SEC; t += 500)
        settle(f, t);
    assert_events(
        f, "short",
        "NodeNotReady:Node is not ready TaintManagerEviction:Marking for deletion Pod pr2/short");
    json_t *p = pod(f, "short");
    assert_string_equal(kube_str(kube_condition(p, "DisruptionTarget"), "reason"),
                        "DeletionByTaintManager");
    json_decref(p);
    /* nobody finishes the delete on a node whose kubelet is down; long
     * (300 s) stays */
    for (; t < tainted + 20 * SEC; t += SEC)
        settle(f, t);
    assert_pod(f, "short", "False", true);
    assert_pod(f, "long", "False", false);

    /* the kubelet back: Ready, taints gone, the delete finished */
    annotate(f, "nr-1", "null");
    for (int i = 0; i < 4; i++)
        settle(f, t += SEC);
    assert_string_equal(ready_status(f, "nr-1"), "True");
    assert_taints(f, "nr-1", "");
    json_decref(call(f, "GET", "/api/v1/namespaces/pr2/pods/short", NULL, NULL, 404));
    /* the pod it kept running is Ready again */
    assert_pod(f, "long", "True", false);
}

/* The sum of the FailedCreate events' counts: how many creates were tried. */
static long failed_creates(fixture *f)
{
    json_t *list = get(f, "/api/v1/namespaces/pr2/events");
    long sum = 0;
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(list, "items"), i,
                       e) if (kube_str_is(e, "reason", "FailedCreate")) sum += kube_int(e, "count");
    json_decref(list);
    return sum;
}

static void a_refused_daemonset_backs_off(void **state)
{
    fixture *f = *state;
    create(f, "/api/v1/namespaces", "{'metadata':{'name':'pr2'}}");
    create(f, "/api/v1/nodes", NODE("nr-0"));
    create(f, "/api/v1/nodes", NODE("nr-1"));
    int64_t t = T0;
    settle(f, t);
    create(f, "/apis/apps/v1/namespaces/pr2/daemonsets",
           "{'metadata':{'name':'dsrc'},'spec':{'selector':{'matchLabels':{'app':'dsrc'}},"
           "'template':{'metadata':{'labels':{'app':'dsrc'}},'spec':{'runtimeClassName':"
           "'missing','nodeSelector':{'pr2':'y'},'containers':[{'name':'c','image':"
           "'busybox'}]}}}}");
    /* the first try: slow start's batch of 1 fails, the rest wait */
    settle(f, t);
    assert_int_equal(failed_creates(f), 1);
    /* passes at the same time do not try again... */
    for (int i = 0; i < 20; i++)
        ctl_loop_step(f->c, t);
    assert_int_equal(failed_creates(f), 1);
    /* ...5 ms later they do, then 10 ms after that, then 20 */
    settle(f, t + 5);
    assert_int_equal(failed_creates(f), 2);
    settle(f, t + 14);
    assert_int_equal(failed_creates(f), 2);
    settle(f, t + 15);
    assert_int_equal(failed_creates(f), 3);
    settle(f, t + 35);
    assert_int_equal(failed_creates(f), 4);
    /* 10 s of passes every 5 ms try 11 times, as the recording's controller */
    for (int64_t at = t; at <= t + 10 * SEC; at += 5)
        ctl_loop_step(f->c, at);
    assert_int_equal(failed_creates(f), 11);
    json_t *ds = get(f, "/apis/apps/v1/namespaces/pr2/daemonsets/dsrc");
    assert_int_equal(kube_int(kube_obj(ds, "status"), "desiredNumberScheduled"), 2);
    assert_int_equal(kube_int(kube_obj(ds, "status"), "currentNumberScheduled"), 0);
    json_decref(ds);
    /* a new spec is tried at once */
    json_decref(call(f, "PATCH", "/apis/apps/v1/namespaces/pr2/daemonsets/dsrc",
                     "application/merge-patch+json",
                     "{'spec':{'template':{'spec':{'runtimeClassName':null}}}}", 200));
    settle(f, t + 10 * SEC + 1);
    json_t *pods = get(f, "/api/v1/namespaces/pr2/pods");
    assert_int_equal(json_array_size(json_object_get(pods, "items")), 2);
    json_decref(pods);
}

/* The position of pod `name` in the snapshot's pods. */
static const json_t *snapshot_pod(const snapshot *s, const char *name)
{
    size_t i;
    const json_t *pod;
    json_array_foreach(s->pods, i,
                       pod) if (strcmp(kube_str_at(pod, "metadata.name"), name) == 0) return pod;
    fail_msg("pod %s is not in the snapshot", name);
    return NULL;
}

/* The controllers keep a settled pod (bound, with an address) cut to what
 * they read, and a pod they may still act on whole: a Running pod loses
 * its containers in the snapshot, an unschedulable one keeps them. */
static void settled_pods_are_cut(void **state)
{
    fixture *f = *state;
    create(f, "/api/v1/namespaces", "{'metadata':{'name':'pr2'}}");
    create(f, "/api/v1/nodes", NODE("nr-0"));
    int64_t t = T0;
    settle(f, t);
    create(f, "/api/v1/namespaces/pr2/pods",
           "{'metadata':{'name':'runs'},'spec':{'nodeName':'nr-0','containers':[{'name':'c',"
           "'image':'busybox'}]}}");
    create(f, "/api/v1/namespaces/pr2/pods",
           "{'metadata':{'name':'waits'},'spec':{'nodeSelector':{'none':'here'},"
           "'containers':[{'name':'c','image':'busybox'}]}}");
    settle(f, t += SEC);
    json_t *pod = get(f, "/api/v1/namespaces/pr2/pods/runs");
    assert_string_equal(kube_str_at(pod, "status.phase"), "Running");
    json_decref(pod);
    snapshot s = {0};
    ctl_take_snapshot(f->c, &s);
    assert_null(kube_at(snapshot_pod(&s, "runs"), "spec.containers"));
    assert_string_equal(kube_str_at(snapshot_pod(&s, "runs"), "spec.nodeName"), "nr-0");
    assert_non_null(kube_at(snapshot_pod(&s, "waits"), "spec.containers"));
    ctl_free_snapshot(&s);
}

/* Takes a snapshot in which the node and Lease indexes name each node of
 * `names` (NULL-terminated) and its Lease, and nothing else. */
static void expect_indexes(fixture *f, const char *const *names)
{
    snapshot s = {0};
    ctl_take_snapshot(f->c, &s);
    size_t n = 0;
    for (; names[n]; n++) {
        assert_string_equal(kube_str_at(ctl_node_named(&s, names[n]), "metadata.name"), names[n]);
        const json_t *lease = ctl_node_lease(&s, names[n]);
        assert_string_equal(kube_str_at(lease, "metadata.name"), names[n]);
        assert_string_equal(kube_str_at(lease, "metadata.namespace"), "kube-node-lease");
    }
    assert_int_equal(json_object_size(s.node_index), n);
    assert_int_equal(json_array_size(s.nodes), n);
    ctl_free_snapshot(&s);
}

/* A pass reuses the last pass's node and Lease indexes while they still
 * hold: when nodes come and go, even as many as before at other places,
 * each name still finds its own node and Lease. */
static void indexes_follow_the_nodes(void **state)
{
    fixture *f = *state;
    int64_t t = T0;
    create(f, "/api/v1/nodes", NODE("ix-b"));
    create(f, "/api/v1/nodes", NODE("ix-d"));
    settle(f, t);
    expect_indexes(f, (const char *[]){"ix-b", "ix-d", NULL});
    expect_indexes(f, (const char *[]){"ix-b", "ix-d", NULL});
    create(f, "/api/v1/nodes", NODE("ix-a"));
    create(f, "/api/v1/nodes", NODE("ix-c"));
    settle(f, t += SEC);
    expect_indexes(f, (const char *[]){"ix-a", "ix-b", "ix-c", "ix-d", NULL});
    /* as many nodes as before, each at another place */
    json_decref(call(f, "DELETE", "/api/v1/nodes/ix-d", NULL, NULL, 200));
    json_decref(call(f, "DELETE",
                     "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/ix-d", NULL,
                     NULL, 200));
    create(f, "/api/v1/nodes", NODE("ix-0"));
    settle(f, t += SEC);
    expect_indexes(f, (const char *[]){"ix-0", "ix-a", "ix-b", "ix-c", NULL});
    snapshot s = {0};
    ctl_take_snapshot(f->c, &s);
    assert_null(ctl_node_named(&s, "ix-d"));
    assert_null(ctl_node_lease(&s, "ix-d"));
    ctl_free_snapshot(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_node_whose_kubelet_stops, setup, teardown),
        cmocka_unit_test_setup_teardown(a_refused_daemonset_backs_off, setup, teardown),
        cmocka_unit_test_setup_teardown(settled_pods_are_cut, setup, teardown),
        cmocka_unit_test_setup_teardown(indexes_follow_the_nodes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
