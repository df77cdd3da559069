/* The API server's store: resourceVersions, listing order, watch history
 * and durability across a reopen of the same SQLite file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "store_file.h"

#include "apiserver/store.h"

static const as_resource *configmaps(void)
{
    return as_resource_find("", "v1", "configmaps");
}

static json_t *configmap(const char *ns, const char *name, const char *label)
{
    json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                          "metadata", "name", name, "namespace", ns);
    if (label)
        json_object_set_new(json_object_get(o, "metadata"), "labels",
                            json_pack("{s:s}", "tier", label));
    return o;
}

static const as_object *put(as_store *s, const char *ns, const char *name, const char *label)
{
    gp_error err = {0};
    json_t *o = configmap(ns, name, label);
    const as_object *stored = as_store_put(s, configmaps(), ns, name, o, &err);
    json_decref(o);
    assert_non_null(stored);
    return stored;
}

static void resource_versions_count_up_and_are_in_the_text(void **state)
{
    (void)state;
    gp_error err = {0};
    as_store *s = as_store_open(NULL, 0, &err);
    assert_non_null(s);
    as_store_lock(s);
    uint64_t start = as_store_rv(s);
    const as_object *a = put(s, "lab", "a", NULL);
    assert_int_equal(a->rv, start + 1);
    assert_non_null(strstr(a->json->text, "\"resourceVersion\":\"1\""));
    const as_object *b = put(s, "lab", "a", "x");
    assert_int_equal(b->rv, start + 2);
    assert_int_equal(as_store_rv(s), start + 2);
    as_store_unlock(s);
    as_store_close(s);
}

static void list_is_sorted_by_namespace_then_name(void **state)
{
    (void)state;
    gp_error err = {0};
    as_store *s = as_store_open(NULL, 0, &err);
    as_store_lock(s);
    /* enough to make the hash table grow several times */
    char name[32];
    for (int i = 299; i >= 0; i--) {
        snprintf(name, sizeof name, "cm-%03d", i);
        put(s, i % 2 ? "b-ns" : "a-ns", name, NULL);
    }
    const as_object **all;
    size_t n = as_store_list(s, configmaps(), NULL, &all);
    assert_int_equal(n, 300);
    for (size_t i = 1; i < n; i++)
        assert_true(strcmp(all[i - 1]->key, all[i]->key) < 0);
    assert_string_equal(all[0]->key, "a-ns/cm-000");
    free(all);
    n = as_store_list(s, configmaps(), "b-ns", &all);
    assert_int_equal(n, 150);
    assert_string_equal(all[0]->key, "b-ns/cm-001");
    free(all);
    as_store_unlock(s);
    as_store_close(s);
}

/* Namespaces whose names share a prefix must not leak into each other. */
static void listing_one_namespace_takes_exactly_its_objects(void **state)
{
    (void)state;
    gp_error err = {0};
    as_store *s = as_store_open(NULL, 0, &err);
    as_store_lock(s);
    const char *spaces[] = {"lab", "lab-x", "lab.y", "lab2", "la", "lab0"};
    for (size_t i = 0; i < 6; i++) {
        put(s, spaces[i], "one", NULL);
        put(s, spaces[i], "two", NULL);
    }
    const as_object **v;
    size_t n = as_store_list(s, configmaps(), "lab", &v);
    assert_int_equal(n, 2);
    assert_string_equal(v[0]->key, "lab/one");
    assert_string_equal(v[1]->key, "lab/two");
    free(v);
    /* an update keeps the cached order; a delete and an insert renew it */
    put(s, "lab", "one", "x");
    json_t *last = configmap("lab", "two", NULL);
    as_blob_unref(as_store_delete(s, configmaps(), "lab", "two", last, &err));
    json_decref(last);
    put(s, "lab", "zero", NULL);
    n = as_store_list(s, configmaps(), "lab", &v);
    assert_int_equal(n, 2);
    assert_string_equal(v[0]->key, "lab/one");
    assert_string_equal(v[1]->key, "lab/zero");
    free(v);
    assert_int_equal(as_store_list(s, configmaps(), "nothing", &v), 0);
    free(v);
    as_store_unlock(s);
    as_store_close(s);
}

static void delete_removes_and_records_the_last_state(void **state)
{
    (void)state;
    gp_error err = {0};
    as_store *s = as_store_open(NULL, 0, &err);
    as_store_lock(s);
    for (int i = 0; i < 100; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", i);
        put(s, "lab", name, NULL);
    }
    json_t *last = configmap("lab", "n50", NULL);
    as_blob *b = as_store_delete(s, configmaps(), "lab", "n50", last, &err);
    json_decref(last);
    assert_non_null(b);
    assert_non_null(strstr(b->text, "\"resourceVersion\":\"101\""));
    as_blob_unref(b);
    assert_null(as_store_get(s, configmaps(), "lab", "n50"));
    /* backward-shift deletion must keep every other key reachable */
    for (int i = 0; i < 100; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", i);
        if (i != 50) assert_non_null(as_store_get(s, configmaps(), "lab", name));
    }
    const as_event *e = as_store_event_at(s, as_store_events_since(s, 100));
    assert_non_null(e);
    assert_int_equal(e->type, AS_DELETED);
    assert_int_equal(e->rv, 101);
    last = configmap("lab", "n50", NULL);
    assert_null(as_store_delete(s, configmaps(), "lab", "n50", last, &err));
    json_decref(last);
    as_store_unlock(s);
    as_store_close(s);
}

static void history_is_bounded_and_reports_expired_versions(void **state)
{
    (void)state;
    gp_error err = {0};
    as_store *s = as_store_open(NULL, 8, &err);
    as_store_lock(s);
    for (int i = 0; i < 20; i++)
        put(s, "lab", "same", NULL);
    /* 20 events, 8 kept: rv 13..20; a watch may resume from 12 on */
    assert_int_equal(as_store_oldest_rv(s), 12);
    assert_int_equal(as_store_events_since(s, 5), -1);
    long long pos = as_store_events_since(s, 12);
    assert_true(pos >= 0);
    const as_event *e = as_store_event_at(s, pos);
    assert_int_equal(e->rv, 13);
    assert_int_equal(e->type, AS_MODIFIED);
    assert_null(as_store_event_at(s, as_store_events_since(s, 20)));
    put(s, "lab", "same", NULL);
    assert_true(as_store_event_gone(s, pos));
    as_store_unlock(s);
    as_store_close(s);
}

/* A store on a fresh file (path: its mkstemp template). */
static as_store *open_on_new_file(char *path)
{
    store_file_new(path);
    gp_error err = {0};
    as_store *s = as_store_open(path, 0, &err);
    assert_non_null(s);
    return s;
}

static void everything_written_is_back_after_reopening(void **state)
{
    (void)state;
    char path[] = "/tmp/gpuop-store-XXXXXX";
    gp_error err = {0};
    as_store *s = open_on_new_file(path);
    as_store_lock(s);
    put(s, "lab", "kept", "gpu");
    put(s, "lab", "gone", NULL);
    json_t *last = configmap("lab", "gone", NULL);
    as_blob_unref(as_store_delete(s, configmaps(), "lab", "gone", last, &err));
    json_decref(last);
    as_store_unlock(s);
    as_store_close(s);

    s = as_store_open(path, 0, &err);
    assert_non_null(s);
    as_store_lock(s);
    assert_int_equal(as_store_rv(s), 3); /* the counter survives the deletion too */
    const as_object *o = as_store_get(s, configmaps(), "lab", "kept");
    assert_non_null(o);
    assert_int_equal(o->rv, 1);
    json_t *idx = as_index_parse(o->index);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(idx, "metadata"), "labels"), "tier")),
                        "gpu");
    json_decref(idx);
    assert_null(as_store_get(s, configmaps(), "lab", "gone"));
    /* no history survives: a watch from before the restart must relist */
    assert_int_equal(as_store_events_since(s, 1), -1);
    as_store_unlock(s);
    as_store_close(s);
    store_file_remove(path);
}

/* The counter is written by deletions only; after puts, a reopened store
 * takes it from the newest object, and never hands out a version twice. */
static void the_counter_after_reopening_is_the_newest_write(void **state)
{
    (void)state;
    char path[] = "/tmp/gpuop-store-XXXXXX";
    gp_error err = {0};
    as_store *s = open_on_new_file(path);
    as_store_lock(s);
    put(s, "lab", "a", NULL);
    put(s, "lab", "b", NULL);
    json_t *last = configmap("lab", "b", NULL);
    as_blob_unref(as_store_delete(s, configmaps(), "lab", "b", last, &err)); /* rv 3 */
    json_decref(last);
    put(s, "lab", "a", "gpu"); /* rv 4: newer than the deletion */
    put(s, "lab", "c", NULL);  /* rv 5 */
    as_store_unlock(s);
    as_store_close(s);

    s = as_store_open(path, 0, &err);
    assert_non_null(s);
    as_store_lock(s);
    assert_int_equal(as_store_rv(s), 5);
    const as_object *o = put(s, "lab", "d", NULL);
    assert_int_equal(o->rv, 6);
    as_store_unlock(s);
    as_store_close(s);
    store_file_remove(path);
}

/* ---- group commit ---- */

static void sync_ok(as_store *s, uint64_t rv)
{
    gp_error err = {0};
    assert_int_equal(as_store_sync(s, rv, &err), 0);
}

/* A write is in memory at once, and its watch event appears only when it
 * is committed; one commit takes every write made before it. */
static void watchers_see_a_write_once_committed(void **state)
{
    (void)state;
    char path[] = "/tmp/gpuop-store-XXXXXX";
    as_store *s = open_on_new_file(path);
    as_store_lock(s);
    long long pos = as_store_events_since(s, as_store_rv(s));
    uint64_t a = put(s, "lab", "a", NULL)->rv;
    uint64_t b = put(s, "lab", "b", NULL)->rv;
    assert_non_null(as_store_get(s, configmaps(), "lab", "b"));
    assert_null(as_store_event_at(s, pos));
    assert_int_equal(as_store_published_rv(s), a - 1);
    as_store_unlock(s);
    sync_ok(s, b);
    as_store_lock(s);
    assert_int_equal(as_store_event_at(s, pos)->rv, a);
    assert_int_equal(as_store_event_at(s, pos + 1)->rv, b);
    assert_int_equal(as_store_published_rv(s), b);
    as_store_unlock(s);
    sync_ok(s, a);       /* committed already */
    sync_ok(s, b + 100); /* never written: nothing to wait for */
    as_store_close(s);
    store_file_remove(path);
}

/* The row of "lab/boom" cannot be written (a trigger says no): the commit
 * that carries it fails, and every write not committed is undone, newest
 * first: a change, a creation and a deletion, with their events. The
 * versions are not handed out again, and later writes commit. */
static void a_failed_commit_undoes_every_write_not_committed(void **state)
{
    (void)state;
    char path[] = "/tmp/gpuop-store-XXXXXX";
    gp_error err = {0};
    as_store *s = open_on_new_file(path);
    as_store_lock(s);
    put(s, "lab", "a", "x");
    uint64_t d = put(s, "lab", "d", NULL)->rv;
    as_store_unlock(s);
    sync_ok(s, d);
    store_file_sql(path, "CREATE TRIGGER boom BEFORE INSERT ON objects WHEN NEW.key = 'lab/boom' "
                         "BEGIN SELECT RAISE(ABORT, 'injected failure'); END;");

    as_store_lock(s);
    long long pos = as_store_events_since(s, as_store_rv(s));
    put(s, "lab", "a", "y");
    uint64_t b = put(s, "lab", "b", NULL)->rv;
    json_t *last = configmap("lab", "d", NULL);
    as_blob_unref(as_store_delete(s, configmaps(), "lab", "d", last, &err));
    json_decref(last);
    assert_int_equal(as_store_deletions(s), 1);
    uint64_t boom = put(s, "lab", "boom", NULL)->rv;
    as_store_unlock(s);
    assert_int_equal(as_store_sync(s, boom, &err), -1);
    assert_non_null(strstr(err.text, "injected failure"));
    assert_int_equal(as_store_sync(s, b, &err), -1);

    as_store_lock(s);
    const as_object *o = as_store_get(s, configmaps(), "lab", "a");
    assert_int_equal(o->rv, 1);
    assert_non_null(strstr(o->index->text, "\"tier\":\"x\""));
    assert_non_null(strstr(o->json->text, "\"resourceVersion\":\"1\""));
    assert_int_equal(as_store_get(s, configmaps(), "lab", "d")->rv, d);
    assert_null(as_store_get(s, configmaps(), "lab", "b"));
    assert_null(as_store_get(s, configmaps(), "lab", "boom"));
    assert_int_equal(as_store_deletions(s), 0);
    const as_object **all;
    size_t n = as_store_list(s, configmaps(), "lab", &all);
    free(all);
    assert_int_equal(n, 2);
    assert_null(as_store_event_at(s, pos)); /* no watcher saw any of them */
    assert_int_equal(as_store_rv(s), boom);
    as_store_unlock(s);

    store_file_sql(path, "DROP TRIGGER boom;");
    as_store_lock(s);
    uint64_t c = put(s, "lab", "c", NULL)->rv;
    as_store_unlock(s);
    assert_int_equal(c, boom + 1);
    sync_ok(s, c);
    as_store_close(s);

    s = as_store_open(path, 0, &err);
    assert_non_null(s);
    as_store_lock(s);
    assert_int_equal(as_store_rv(s), c);
    assert_int_equal(as_store_get(s, configmaps(), "lab", "a")->rv, 1);
    assert_non_null(as_store_get(s, configmaps(), "lab", "d"));
    assert_null(as_store_get(s, configmaps(), "lab", "b"));
    assert_int_equal(as_store_get(s, configmaps(), "lab", "c")->rv, c);
    as_store_unlock(s);
    as_store_close(s);
    store_file_remove(path);
}

/* ---- the write-ahead log ---- */

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

/* Writes that never stop (each committed before the next, as a steady
 * load keeps the log busy): the log must stay bounded. SQLite rewinds it
 * only when a writer begins after a checkpoint that caught up with it,
 * which a checkpoint beside steady writes never does: it reached 435 MB
 * in a minute. */
static void the_log_stays_bounded_under_steady_writes(void **state)
{
    (void)state;
    char path[] = "/tmp/gpuop-store-XXXXXX", wal[64];
    as_store *s = open_on_new_file(path);
    snprintf(wal, sizeof wal, "%s-wal", path);
    const size_t limit = 128 << 10;
    as_store_set_wal_limit(s, limit);
    char value[4096];
    memset(value, 'v', sizeof value - 1);
    value[sizeof value - 1] = '\0';
    long long largest = 0, written = 0;
    gp_error err = {0};
    for (int i = 0; i < 1500; i++) {
        char name[16];
        snprintf(name, sizeof name, "cm-%d", i % 40);
        json_t *o = configmap("lab", name, NULL);
        json_object_set_new(o, "data", json_pack("{s:s}", "v", value));
        as_store_lock(s);
        const as_object *stored = as_store_put(s, configmaps(), "lab", name, o, &err);
        assert_non_null(stored);
        uint64_t rv = stored->rv;
        as_store_unlock(s);
        json_decref(o);
        sync_ok(s, rv);
        written += (long long)sizeof value;
        long long now = file_size(wal);
        if (now > largest) largest = now;
    }
    /* the limit, plus what one commit adds before the writer folds it
     * back (a few pages here) */
    assert_true(written > 40 * (long long)limit);
    if (largest > 2 * (long long)limit)
        fail_msg("the log reached %lld bytes (limit %zu)", largest, limit);
    as_store_close(s);
    store_file_remove(path);
}

static void index_keeps_selectable_fields_only(void **state)
{
    (void)state;
    gp_error err = {0};
    as_store *s = as_store_open(NULL, 0, &err);
    const as_resource *pods = as_resource_find("", "v1", "pods");
    json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:[]}, s:{s:s}}", "apiVersion", "v1",
                            "kind", "Pod", "metadata", "name", "p", "namespace", "lab", "spec",
                            "nodeName", "lab-node-0", "containers", "status", "phase", "Pending");
    as_store_lock(s);
    const as_object *o = as_store_put(s, pods, "lab", "p", pod, &err);
    assert_non_null(o);
    json_t *idx = as_index_parse(o->index);
    const json_t *spec = json_object_get(idx, "spec");
    assert_string_equal(json_string_value(json_object_get(spec, "nodeName")), "lab-node-0");
    assert_null(json_object_get(spec, "containers"));
    json_decref(idx);
    as_store_unlock(s);
    json_decref(pod);
    as_store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resource_versions_count_up_and_are_in_the_text),
        cmocka_unit_test(list_is_sorted_by_namespace_then_name),
        cmocka_unit_test(listing_one_namespace_takes_exactly_its_objects),
        cmocka_unit_test(delete_removes_and_records_the_last_state),
        cmocka_unit_test(history_is_bounded_and_reports_expired_versions),
        cmocka_unit_test(everything_written_is_back_after_reopening),
        cmocka_unit_test(the_counter_after_reopening_is_the_newest_write),
        cmocka_unit_test(index_keeps_selectable_fields_only),
        cmocka_unit_test(watchers_see_a_write_once_committed),
        cmocka_unit_test(a_failed_commit_undoes_every_write_not_committed),
        cmocka_unit_test(the_log_stays_bounded_under_steady_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
