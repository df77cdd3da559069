/* Watches through as_route, without sockets: what the server counts of
 * them (/metrics) and how one ends when its client is gone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apiserver/routes.h"

/* The query of a request: "k=v&k=v", split in place. */
typedef struct query {
    char text[256];
    const char *keys[8], *values[8];
} query;

static const char *lookup(void *ctx, const char *key)
{
    query *q = ctx;
    for (size_t i = 0; i < 8 && q->keys[i]; i++)
        if (strcmp(q->keys[i], key) == 0) return q->values[i];
    return NULL;
}

static void split(query *q, const char *text)
{
    memset(q, 0, sizeof *q);
    snprintf(q->text, sizeof q->text, "%s", text);
    size_t n = 0;
    for (char *save = NULL, *kv = strtok_r(q->text, "&", &save); kv && n < 8;
         kv = strtok_r(NULL, "&", &save), n++) {
        char *eq = strchr(kv, '=');
        *eq = '\0';
        q->keys[n] = kv;
        q->values[n] = eq + 1;
    }
}

static as_response get(as_api *api, const char *path, const char *query_text)
{
    query q;
    split(&q, query_text ? query_text : "");
    as_request req = {.method = "GET",
                      .path = path,
                      .accept = "application/json",
                      .query = lookup,
                      .query_ctx = &q};
    as_response r;
    as_route(api, &req, &r);
    return r;
}

static uint64_t create_configmap(as_api *api, const char *ns, const char *name)
{
    char path[128], body[256];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps", ns);
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"}}", name);
    as_request req = {.method = "POST",
                      .path = path,
                      .accept = "application/json",
                      .content_type = "application/json",
                      .body = body,
                      .body_len = strlen(body)};
    as_response r;
    as_route(api, &req, &r);
    assert_int_equal(r.status, 201);
    as_response_free(&r);
    as_store_lock(api->store);
    uint64_t rv = as_store_rv(api->store);
    as_store_unlock(api->store);
    return rv;
}

/* Everything a watch sends until it ends (its timeout, or the store shut
 * down). */
static char *read_all(as_watch *w)
{
    size_t cap = 1 << 16, len = 0, n;
    char *out = malloc(cap);
    while ((n = as_watch_read(w, out + len, cap - len - 1)) > 0)
        len += n;
    out[len] = '\0';
    return out;
}

static size_t count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)); p++)
        n++;
    return n;
}

static int setup(void **state)
{
    gp_error err = {0};
    as_api *api = calloc(1, sizeof *api);
    api->store = as_store_open(NULL, 32, &err);
    assert_non_null(api->store);
    assert_int_equal(as_api_bootstrap(api, &err), 0);
    *state = api;
    return 0;
}

static int teardown(void **state)
{
    as_api *api = *state;
    as_store_close(api->store);
    free(api);
    return 0;
}

static char *metrics(as_api *api)
{
    as_response r = get(api, "/metrics", NULL);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
    char *text = strndup(r.body, r.len);
    as_response_free(&r);
    return text;
}

#define GAUGE "apiserver_longrunning_requests"
#define CM_NAMESPACED                                                                              \
    GAUGE "{component=\"apiserver\",group=\"\",resource=\"configmaps\",scope=\"namespace\","       \
          "subresource=\"\",verb=\"WATCH\",version=\"v1\"} "
#define DS_CLUSTER                                                                                 \
    GAUGE "{component=\"apiserver\",group=\"apps\",resource=\"daemonsets\",scope=\"cluster\","     \
          "subresource=\"\",verb=\"WATCH\",version=\"v1\"} "

static void metrics_count_watches_until_they_are_freed(void **state)
{
    as_api *api = *state;
    char *before = metrics(api);
    assert_non_null(strstr(before, "# TYPE " GAUGE " gauge\n"));
    assert_null(strstr(before, GAUGE "{"));
    free(before);

    as_response a = get(api, "/api/v1/namespaces/default/configmaps", "watch=true");
    as_response b = get(api, "/api/v1/namespaces/kube-system/configmaps", "watch=true");
    as_response c = get(api, "/apis/apps/v1/daemonsets", "watch=true&resourceVersion=0");
    assert_non_null(a.watch);
    assert_non_null(b.watch);
    assert_non_null(c.watch);
    char *during = metrics(api);
    assert_non_null(strstr(during, CM_NAMESPACED "2\n"));
    assert_non_null(strstr(during, DS_CLUSTER "1\n"));
    free(during);

    as_response_free(&a);
    as_response_free(&c);
    char *after = metrics(api);
    assert_non_null(strstr(after, CM_NAMESPACED "1\n"));
    assert_null(strstr(after, "daemonsets"));
    free(after);
    as_response_free(&b);
}

static void a_refused_watch_is_not_counted(void **state)
{
    as_api *api = *state;
    as_response bad = get(api, "/api/v1/pods", "watch=true&labelSelector=!!");
    assert_int_equal(bad.status, 400);
    assert_null(bad.watch);
    as_response_free(&bad);
    char *text = metrics(api);
    assert_null(strstr(text, GAUGE "{"));
    free(text);
}

typedef struct reader {
    as_watch *watch;
    size_t got;
} reader;

static void *read_to_end(void *arg)
{
    reader *r = arg;
    char buf[4096];
    size_t n;
    while ((n = as_watch_read(r->watch, buf, sizeof buf)) > 0)
        r->got += n;
    return NULL;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* A reader waiting for events that will not come (none are written, the
 * watch's own timeout is a minute away) ends as soon as the watch is
 * cancelled: what the server does when the client hangs up. */
static void cancel_ends_a_waiting_reader(void **state)
{
    as_api *api = *state;
    as_response w =
        get(api, "/api/v1/namespaces/default/configmaps", "watch=true&timeoutSeconds=60");
    assert_non_null(w.watch);
    reader r = {w.watch, 0};
    pthread_t t;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(pthread_create(&t, NULL, read_to_end, &r), 0);
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL); /* let it wait (a cancel before the wait ends it too) */
    as_watch_cancel(w.watch);
    pthread_join(t, NULL);
    assert_int_equal(r.got, 0);
    assert_true(seconds_since(&t0) < 30); /* well before its timeout */
    as_response_free(&w);
}

static void a_cancelled_watch_sends_nothing_more(void **state)
{
    as_api *api = *state;
    as_response w = get(api, "/api/v1/namespaces", "watch=true");
    assert_non_null(w.watch);
    as_watch_cancel(w.watch);
    char buf[256];
    assert_int_equal(as_watch_read(w.watch, buf, sizeof buf), 0);
    as_response_free(&w);
}

/* A watch from a version the store has not reached: kube-apiserver 1.32
 * serves it as any other, skipping the events up to that version. */
static void a_watch_from_the_future_skips_events_up_to_it(void **state)
{
    as_api *api = *state;
    uint64_t now = create_configmap(api, "default", "before");
    char q[96];
    snprintf(q, sizeof q, "watch=true&resourceVersion=%llu", (unsigned long long)now + 2);
    as_response w = get(api, "/api/v1/namespaces/default/configmaps", q);
    assert_int_equal(w.status, 200);
    assert_non_null(w.watch);
    create_configmap(api, "default", "one");
    create_configmap(api, "default", "two");
    create_configmap(api, "default", "three");
    as_store_shutdown(api->store);
    char *text = read_all(w.watch);
    assert_int_equal(count(text, "\"type\":\"ADDED\""), 1);
    assert_non_null(strstr(text, "\"name\":\"three\""));
    free(text);
    as_response_free(&w);
}

/* A bookmark tells the client how far the store has gone; kube-apiserver
 * sends one 2 s before a watch's deadline, but only past what the watch
 * has seen: a watch of one namespace hears of a write in another. */
static void a_bookmark_before_the_deadline_moves_the_client_on(void **state)
{
    as_api *api = *state;
    as_response w = get(api, "/api/v1/namespaces/default/configmaps",
                        "watch=true&allowWatchBookmarks=true&timeoutSeconds=3");
    assert_non_null(w.watch);
    uint64_t elsewhere = create_configmap(api, "kube-system", "elsewhere");
    char *text = read_all(w.watch);
    assert_int_equal(count(text, "\"type\":\"BOOKMARK\""), 1);
    char want[64];
    snprintf(want, sizeof want, "\"resourceVersion\":\"%llu\"", (unsigned long long)elsewhere);
    assert_non_null(strstr(text, want));
    assert_null(strstr(text, "ADDED"));
    free(text);
    as_response_free(&w);
}

/* ... and none to a watch from a version the store has not reached: the
 * store's version is behind it, a bookmark would take the client back. */
static void no_bookmark_for_a_version_not_reached(void **state)
{
    as_api *api = *state;
    uint64_t now = create_configmap(api, "default", "before");
    char q[128];
    snprintf(q, sizeof q,
             "watch=true&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion=%llu",
             (unsigned long long)now + 100);
    as_response w = get(api, "/api/v1/namespaces/default/configmaps", q);
    assert_int_equal(w.status, 200);
    create_configmap(api, "kube-system", "elsewhere");
    char *text = read_all(w.watch);
    assert_string_equal(text, "");
    free(text);
    as_response_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(metrics_count_watches_until_they_are_freed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_refused_watch_is_not_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(cancel_ends_a_waiting_reader, setup, teardown),
        cmocka_unit_test_setup_teardown(a_cancelled_watch_sends_nothing_more, setup, teardown),
        cmocka_unit_test_setup_teardown(a_watch_from_the_future_skips_events_up_to_it, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_bookmark_before_the_deadline_moves_the_client_on, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(no_bookmark_for_a_version_not_reached, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
