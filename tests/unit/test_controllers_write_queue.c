/* The controllers' write queue: writes to one object in the order pushed,
 * follow-ups only after a success, failures counted by the drain, and the
 * outcome reported to the caller; against a real in-memory API server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "store_file.h"

#include "apiserver/loopback.h"
#include "apiserver/routes.h"
#include "apiserver/store.h"
#include "controllers/write_queue_internal.h"

#define CM_PATH "/api/v1/namespaces/default/configmaps"

static as_api *api_new(void)
{
    as_api *api = calloc(1, sizeof *api);
    assert_non_null(api);
    gp_error err = {0};
    api->store = as_store_open(NULL, 0, &err);
    assert_non_null(api->store);
    assert_int_equal(as_api_bootstrap(api, &err), 0);
    return api;
}

static void api_free(as_api *api)
{
    as_store_close(api->store);
    free(api);
}

static json_t *configmap(const char *name, const char *last)
{
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                     "metadata", "name", name, "data", "last", last);
}

/* data.last of a ConfigMap, or NULL when it does not exist (malloc'd). */
static char *last_of(as_api *api, const char *name)
{
    char path[200];
    snprintf(path, sizeof path, "%s/%s", CM_PATH, name);
    as_reply r = as_loopback_call(api, "GET", path, NULL, NULL, NULL);
    const char *v = json_string_value(json_object_get(json_object_get(r.body, "data"), "last"));
    char *out = r.status == 200 && v ? strdup(v) : NULL;
    as_reply_free(&r);
    return out;
}

/* A JSON patch that applies only to the value before it: out of order, its
 * test operation fails and the API answers 422. */
static ctl_wq_write *step_patch(const char *name, int i)
{
    char path[200], before[16], after[16];
    snprintf(path, sizeof path, "%s/%s", CM_PATH, name);
    snprintf(before, sizeof before, "%d", i - 1);
    snprintf(after, sizeof after, "%d", i);
    json_t *ops =
        json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}]", "op", "test", "path", "/data/last", "value",
                  before, "op", "replace", "path", "/data/last", "value", after);
    return ctl_wq_write_new("PATCH", path, NULL, "application/json-patch+json", ops);
}

static void writes_to_one_object_keep_their_order(void **state)
{
    (void)state;
    as_api *api = api_new();
    ctl_wq *q = ctl_wq_new(api, 2);
    assert_non_null(q);
    const char *names[] = {"a", "b", "c"};
    for (size_t k = 0; k < 3; k++)
        ctl_wq_push(q, ctl_wq_write_new("POST", CM_PATH, NULL, NULL, configmap(names[k], "0")));
    assert_int_equal(ctl_wq_drain(q), 0);
    /* interleaved over three objects and two workers; /status-less paths of
     * one object always land on one worker */
    for (int i = 1; i <= 60; i++)
        for (size_t k = 0; k < 3; k++)
            ctl_wq_push(q, step_patch(names[k], i));
    assert_int_equal(ctl_wq_drain(q), 0);
    for (size_t k = 0; k < 3; k++) {
        char *last = last_of(api, names[k]);
        assert_string_equal(last, "60");
        free(last);
    }
    ctl_wq_free(q);
    api_free(api);
}

typedef struct outcome {
    int calls;
    bool ok;
    char tag[32];
} outcome;

static void note_outcome(void *ud, const char *tag, bool ok)
{
    outcome *o = ud;
    o->calls++;
    o->ok = ok;
    snprintf(o->tag, sizeof o->tag, "%s", tag ? tag : "");
}

static void a_follow_up_goes_only_after_a_success(void **state)
{
    (void)state;
    as_api *api = api_new();
    ctl_wq *q = ctl_wq_new(api, 2);
    /* the first fails (no such object): the follow-up is skipped, both counted */
    ctl_wq_write *w = step_patch("missing", 1);
    ctl_wq_write_then(
        w, ctl_wq_write_new("POST", CM_PATH, NULL, NULL, configmap("after-failure", "x")));
    outcome o = {0};
    ctl_wq_write_notify(w, note_outcome, &o, "first");
    ctl_wq_push(q, w);
    assert_int_equal(ctl_wq_drain(q), 2);
    assert_null(last_of(api, "after-failure"));
    assert_int_equal(o.calls, 1);
    assert_false(o.ok);
    assert_string_equal(o.tag, "first");
    /* the first succeeds: the follow-up is sent */
    w = ctl_wq_write_new("POST", CM_PATH, NULL, NULL, configmap("first", "1"));
    ctl_wq_write_then(w, ctl_wq_write_new("POST", CM_PATH, NULL, NULL, configmap("second", "2")));
    ctl_wq_write_notify(w, note_outcome, &o, "second");
    ctl_wq_push(q, w);
    assert_int_equal(ctl_wq_drain(q), 0);
    char *v = last_of(api, "second");
    assert_string_equal(v, "2");
    free(v);
    assert_int_equal(o.calls, 2);
    assert_true(o.ok);
    ctl_wq_free(q);
    api_free(api);
}

static void without_workers_writes_go_in_line(void **state)
{
    (void)state;
    as_api *api = api_new();
    ctl_wq *q = ctl_wq_new(api, 0);
    assert_non_null(q);
    ctl_wq_push(q, ctl_wq_write_new("POST", CM_PATH, NULL, NULL, configmap("inline", "0")));
    char *v = last_of(api, "inline"); /* no drain: already there */
    assert_string_equal(v, "0");
    free(v);
    ctl_wq_push(q, step_patch("inline", 5)); /* 4 is not there: fails */
    assert_int_equal(ctl_wq_drain(q), 1);
    ctl_wq_free(q);
    api_free(api);
}

/* Writes are answered before their commit and a worker waits once for a
 * batch (store.h, group commit). A commit that fails undoes the writes
 * (here: the row of default/boom cannot be written, a trigger says no):
 * what the worker reports as done must be what the store kept, and a
 * follow-up of an undone write is undone with it. */
static void what_a_worker_reports_is_what_was_committed(void **state)
{
    (void)state;
    char path[] = "/tmp/gpuop-wq-XXXXXX";
    store_file_new(path);
    gp_error err = {0};
    as_api api = {.store = as_store_open(path, 0, &err)};
    assert_non_null(api.store);
    assert_int_equal(as_api_bootstrap(&api, &err), 0);
    store_file_sql(path, "CREATE TRIGGER boom BEFORE INSERT ON objects WHEN NEW.key = "
                         "'default/boom' BEGIN SELECT RAISE(ABORT, 'injected'); END;");
    ctl_wq *q = ctl_wq_new(&api, 1);
    const char *names[] = {"one", "boom", "two"};
    outcome o[3] = {{0}};
    for (size_t i = 0; i < 3; i++) {
        ctl_wq_write *w = ctl_wq_write_new("POST", CM_PATH, NULL, NULL, configmap(names[i], "0"));
        if (i == 1) /* its follow-up is made in memory, then undone with it */
            ctl_wq_write_then(
                w, ctl_wq_write_new("POST", CM_PATH, NULL, NULL, configmap("next", "0")));
        ctl_wq_write_notify(w, note_outcome, &o[i], names[i]);
        ctl_wq_push(q, w);
    }
    assert_true(ctl_wq_drain(q) >= 2);
    for (size_t i = 0; i < 3; i++) {
        char *v = last_of(&api, names[i]);
        assert_int_equal(o[i].calls, 1);
        assert_int_equal(o[i].ok, v != NULL);
        free(v);
    }
    assert_false(o[1].ok);
    assert_null(last_of(&api, "next"));
    ctl_wq_free(q);
    as_store_close(api.store);
    store_file_remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(writes_to_one_object_keep_their_order),
        cmocka_unit_test(a_follow_up_goes_only_after_a_success),
        cmocka_unit_test(without_workers_writes_go_in_line),
        cmocka_unit_test(what_a_worker_reports_is_what_was_committed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
