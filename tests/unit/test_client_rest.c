/* kc_* against a real server: gpuop's embedded API server, started with
 * `gpuop cluster up --no-controllers` into a temporary directory, reached
 * through the kubeconfig that `up` writes and kc_config_load reads.
 *
 * What the client fetches is judged by the real kubectl where kubectl can
 * say: the same object from `kubectl get -o json`, the same error line that
 * kubectl prints for the same 404, 409 and 401. kubectl's comparisons are
 * skipped (with a message) when it is not installed; the rest still runs.
 *
 * $GPUOP names the gpuop binary (ctest sets it); without it the binary
 * beside this test's build directory is used. */
/* mkdtemp and nftw are XSI. */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "temp_dir.h"

#include "json_assert.h"

#include <arpa/inet.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client/kubeconfig.h"
#include "client/rest.h"
#include "util/spawn.h"

#define NS "client-test"

static struct {
    char dir[64];
    char data[96];
    char cache[96];
    char gpuop[PATH_MAX];
    bool have_kubectl;
    kc_config *cfg;
    kc_client *client;
} the;

/* ---- running programs ---- */

typedef struct {
    int status; /* exit status; -1 when the program could not run */
    char *out, *err;
} ran;

static void ran_free(ran *r)
{
    free(r->out);
    free(r->err);
}

static ran run(char *const argv[])
{
    ran r = {-1, NULL, NULL};
    size_t n;
    gp_error err;
    if (gp_spawn_capture(argv, 60000, &r.out, &n, &r.err, &n, &r.status, &err) != GP_SPAWN_OK) {
        print_error("%s\n", err.text);
        r.status = -1;
    }
    return r;
}

/* kubectl with its cache in the temporary directory; up to 8 arguments. */
static ran kubectl(const char *a, const char *b, const char *c, const char *d, const char *e,
                   const char *f, const char *g, const char *h)
{
    char *argv[] = {"kubectl", "--cache-dir", the.cache, "--request-timeout=20s",
                    (char *)a, (char *)b,     (char *)c, (char *)d,
                    (char *)e, (char *)f,     (char *)g, (char *)h,
                    NULL};
    return run(argv);
}

/* The first line kubectl printed on stderr, as the CLI shows an error. */
static void assert_kubectl_says(const ran *r, const char *ours)
{
    assert_int_not_equal(r->status, 0);
    char *nl = strchr(r->err, '\n');
    if (nl) *nl = '\0';
    assert_string_equal(ours, r->err);
}

static json_t *parse(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, 0, &jerr);
    if (!v) print_error("not JSON (%s): %s\n", jerr.text, text);
    assert_non_null(v);
    return v;
}

/* The object as kubectl get -o json shows it. */
static json_t *kubectl_get(const char *kind, const char *name)
{
    ran r = kubectl("get", kind, name, "-n", NS, "-o", "json", NULL);
    if (r.status != 0) print_error("kubectl: %s\n", r.err);
    assert_int_equal(r.status, 0);
    json_t *v = parse(r.out);
    ran_free(&r);
    return v;
}

/* ---- the server ---- */

static void find_gpuop(void)
{
    const char *env = getenv("GPUOP");
    if (env && env[0]) {
        snprintf(the.gpuop, sizeof the.gpuop, "%s", env);
        return;
    }
    char self[PATH_MAX - 16];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) *slash = '\0';
    snprintf(the.gpuop, sizeof the.gpuop, "%s/../gpuop", self);
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(the.dir, sizeof the.dir, "/tmp/gpuop-client-rest-XXXXXX");
    if (!mkdtemp(the.dir)) return -1;
    snprintf(the.data, sizeof the.data, "%s/data", the.dir);
    snprintf(the.cache, sizeof the.cache, "%s/cache", the.dir);
    char kc[128], home[96];
    snprintf(kc, sizeof kc, "%s/kubeconfig", the.dir);
    snprintf(home, sizeof home, "%s/home", the.dir);
    mkdir(home, 0700);
    /* Nothing here may read or write the user's own kubeconfig. */
    setenv("HOME", home, 1);
    setenv("KUBECONFIG", kc, 1);
    find_gpuop();
    char *up[] = {the.gpuop, "cluster", "up", "--data", the.data, "--no-controllers", NULL};
    ran r = run(up);
    if (r.status != 0)
        print_error("%s cluster up: %s%s\n", the.gpuop, r.out ? r.out : "", r.err ? r.err : "");
    int status = r.status;
    ran_free(&r);
    if (status != 0) return -1;

    gp_error err;
    if (kc_config_load(&(kc_options){0}, &the.cfg, &err) != 0) {
        print_error("kc_config_load: %s\n", err.text);
        return -1;
    }
    if (kc_client_new(the.cfg, &the.client, &err) != KC_OK) {
        print_error("kc_client_new: %s\n", err.text);
        return -1;
    }
    ran v = kubectl("version", "--client", NULL, NULL, NULL, NULL, NULL, NULL);
    the.have_kubectl = v.status == 0;
    ran_free(&v);
    if (!the.have_kubectl) print_message("kubectl is not installed: its comparisons are skipped\n");
    json_t *ns = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace", "metadata",
                           "name", NS);
    kc_result res = kc_create(the.client, "/api/v1/namespaces", ns, NULL, &err);
    json_decref(ns);
    if (res != KC_OK) print_error("create namespace: %s\n", err.text);
    return res == KC_OK ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    kc_client_free(the.client);
    kc_config_free(the.cfg);
    char *down[] = {the.gpuop, "cluster", "down", "--data", the.data, NULL};
    ran r = run(down);
    ran_free(&r);
    temp_dir_remove(the.dir);
    return 0;
}

/* ---- helpers ---- */

static json_t *configmap(const char *name, const char *key, const char *value)
{
    return json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                     "metadata", "name", name, "namespace", NS, "data", key, value);
}

static void create_configmap(kc_client *c, const char *name)
{
    json_t *cm = configmap(name, "k", "v");
    gp_error err;
    kc_result r = kc_create(c, "/api/v1/namespaces/" NS "/configmaps", cm, NULL, &err);
    if (r != KC_OK) print_error("%s\n", err.text);
    assert_int_equal(r, KC_OK);
    json_decref(cm);
}

static const char *str_at(json_t *obj, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(obj, a), b));
}

/* The string at "a/b/c" (object keys only). */
static const char *str_path(json_t *v, const char *path)
{
    char key[64];
    while (*path) {
        size_t n = strcspn(path, "/");
        snprintf(key, sizeof key, "%.*s", (int)n, path);
        v = json_object_get(v, key);
        path += n + (path[n] == '/');
    }
    return json_string_value(v);
}

/* ---- tests ---- */

static void test_version_is_what_kubectl_reads(void **state)
{
    (void)state;
    json_t *v = NULL;
    gp_error err;
    assert_int_equal(kc_get(the.client, "/version", &v, &err), KC_OK);
    assert_int_equal(kc_last_code(the.client), 200);
    /* k8s-semantics.md section 1: major "1", minor "32". */
    assert_string_equal(json_string_value(json_object_get(v, "major")), "1");
    assert_string_equal(json_string_value(json_object_get(v, "minor")), "32");
    if (the.have_kubectl) {
        ran r = kubectl("get", "--raw", "/version", NULL, NULL, NULL, NULL, NULL);
        assert_int_equal(r.status, 0);
        json_t *k = parse(r.out);
        assert_json_equal(v, k);
        json_decref(k);
        ran_free(&r);
    }
    json_decref(v);
}

static void test_the_kubeconfig_of_up_is_read(void **state)
{
    (void)state;
    /* docs/gpuop-cluster.1: up merges cluster, user and context "gpuop" and
     * makes it current; the server listens on loopback over HTTPS. */
    assert_string_equal(the.cfg->context_name, "gpuop");
    assert_string_equal(the.cfg->cluster_name, "gpuop");
    assert_string_equal(the.cfg->nspace, "default");
    assert_non_null(the.cfg->token);
    assert_non_null(the.cfg->ca_pem);
    assert_true(strncmp(the.cfg->server, "https://127.0.0.1:", 18) == 0);
}

static void test_create_then_get_matches_kubectl(void **state)
{
    (void)state;
    json_t *cm = configmap("one", "greeting", "hello world"), *created = NULL, *got = NULL;
    gp_error err;
    assert_int_equal(
        kc_create(the.client, "/api/v1/namespaces/" NS "/configmaps", cm, &created, &err), KC_OK);
    assert_int_equal(kc_last_code(the.client), 201);
    assert_string_equal(str_at(created, "data", "greeting"), "hello world");
    assert_int_equal(kc_get(the.client, "/api/v1/namespaces/" NS "/configmaps/one", &got, &err),
                     KC_OK);
    assert_string_equal(str_at(got, "metadata", "uid"), str_at(created, "metadata", "uid"));
    if (the.have_kubectl) {
        json_t *k = kubectl_get("configmap", "one");
        assert_json_equal(got, k);
        json_decref(k);
    }
    json_decref(cm);
    json_decref(created);
    json_decref(got);
}

typedef struct {
    json_t *seen; /* name -> times */
    json_t *items;
} list_seen;

static int note_item(json_t *item, void *ud)
{
    list_seen *s = ud;
    const char *name = str_at(item, "metadata", "name");
    json_int_t times = json_integer_value(json_object_get(s->seen, name));
    json_object_set_new(s->seen, name, json_integer(times + 1));
    json_array_append(s->items, item);
    return 0;
}

static void test_list_follows_continue_one_item_a_page(void **state)
{
    (void)state;
    const char *path = "/api/v1/namespaces/" NS "/configmaps?labelSelector=set%3Dpaged";
    gp_error err;
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "paged-%d", i);
        json_t *cm = configmap(name, "k", "v");
        json_object_set_new(json_object_get(cm, "metadata"), "labels",
                            json_pack("{s:s}", "set", "paged"));
        assert_int_equal(
            kc_create(the.client, "/api/v1/namespaces/" NS "/configmaps", cm, NULL, &err), KC_OK);
        json_decref(cm);
    }
    /* The server really pages: a first page of one has a continue token, so
     * seeing all three needs it followed. */
    json_t *first = NULL;
    assert_int_equal(
        kc_get(the.client, "/api/v1/namespaces/" NS "/configmaps?labelSelector=set%3Dpaged&limit=1",
               &first, &err),
        KC_OK);
    assert_int_equal(json_array_size(json_object_get(first, "items")), 1);
    assert_non_null(str_at(first, "metadata", "continue"));
    json_decref(first);

    list_seen s = {json_object(), json_array()};
    assert_int_equal(kc_list(the.client, path, 1, note_item, &s, &err), KC_OK);
    assert_int_equal(json_object_size(s.seen), 3);
    const char *name;
    json_t *times;
    json_object_foreach(s.seen, name, times)
    {
        assert_true(strncmp(name, "paged-", 6) == 0);
        assert_int_equal(json_integer_value(times), 1);
    }
    if (the.have_kubectl) {
        ran r = kubectl("get", "configmaps", "-n", NS, "-l", "set=paged", "-o", "json");
        assert_int_equal(r.status, 0);
        json_t *k = parse(r.out);
        /* kubectl fills in each item's kind and apiVersion; so does kc_list. */
        assert_json_equal(s.items, json_object_get(k, "items"));
        json_decref(k);
        ran_free(&r);
    }
    json_t *all = NULL;
    assert_int_equal(kc_list_all(the.client, path, &all, &err), KC_OK);
    assert_json_equal(all, s.items);
    json_decref(all);
    json_decref(s.seen);
    json_decref(s.items);
}

static int stop_after_one(json_t *item, void *ud)
{
    (void)item;
    (*(int *)ud)++;
    return 1;
}

static void test_list_stops_when_asked(void **state)
{
    (void)state;
    int calls = 0;
    gp_error err;
    kc_result r =
        kc_list(the.client, "/api/v1/namespaces/" NS "/configmaps?labelSelector=set%3Dpaged", 1,
                stop_after_one, &calls, &err);
    assert_int_equal(r, KC_API_ERROR);
    assert_int_equal(calls, 1);
}

/* Each patch type changes what it says; the object returned is the one
 * kubectl then reads. */
static void patch_and_check(kc_patch_type type, const char *patch_sq, const char *path,
                            const char *want)
{
    json_t *patch = sq_load(patch_sq), *out = NULL;
    gp_error err;
    kc_result r = kc_patch(the.client, "/api/v1/namespaces/" NS "/configmaps/patched", type, patch,
                           &out, &err);
    if (r != KC_OK) print_error("%s\n", err.text);
    assert_int_equal(r, KC_OK);
    assert_int_equal(kc_last_code(the.client), 200);
    if (!str_path(out, path)) print_error("%s missing\n", path);
    assert_string_equal(str_path(out, path), want);
    if (the.have_kubectl) {
        json_t *k = kubectl_get("configmap", "patched");
        assert_json_equal(out, k);
        json_decref(k);
    }
    json_decref(patch);
    json_decref(out);
}

static void test_patches_of_each_type(void **state)
{
    (void)state;
    create_configmap(the.client, "patched");
    patch_and_check(KC_PATCH_MERGE, "{'data':{'k':'merged'}}", "data/k", "merged");
    patch_and_check(KC_PATCH_STRATEGIC, "{'metadata':{'labels':{'tier':'gpu'}}}",
                    "metadata/labels/tier", "gpu");
    patch_and_check(KC_PATCH_JSON, "[{'op':'add','path':'/data/added','value':'by json patch'}]",
                    "data/added", "by json patch");
    /* The earlier patches' changes are still there. */
    patch_and_check(KC_PATCH_JSON, "[{'op':'test','path':'/data/k','value':'merged'}]",
                    "metadata/labels/tier", "gpu");
}

static void test_update_replaces(void **state)
{
    (void)state;
    create_configmap(the.client, "updated");
    json_t *got = NULL, *out = NULL;
    gp_error err;
    const char *path = "/api/v1/namespaces/" NS "/configmaps/updated";
    assert_int_equal(kc_get(the.client, path, &got, &err), KC_OK);
    json_object_set_new(got, "data", json_pack("{s:s}", "only", "this"));
    assert_int_equal(kc_update(the.client, path, got, &out, &err), KC_OK);
    assert_json_equal(json_object_get(out, "data"), json_object_get(got, "data"));
    json_decref(got);
    json_decref(out);
}

static void test_not_found_reads_as_kubectl_prints_it(void **state)
{
    (void)state;
    json_t *got = NULL;
    gp_error err;
    kc_result r = kc_get(the.client, "/api/v1/namespaces/" NS "/configmaps/nope", &got, &err);
    assert_int_equal(r, KC_NOT_FOUND);
    assert_null(got);
    assert_int_equal(kc_last_code(the.client), 404);
    assert_string_equal(kc_last_reason(the.client), "NotFound");
    /* k8s-semantics.md: `Error from server (NotFound): pods "x" not found`. */
    assert_string_equal(err.text, "Error from server (NotFound): configmaps \"nope\" not found");
    assert_string_equal(kc_last_message(the.client), "configmaps \"nope\" not found");
    if (the.have_kubectl) {
        ran k = kubectl("get", "configmap", "nope", "-n", NS, NULL, NULL, NULL);
        assert_kubectl_says(&k, err.text);
        ran_free(&k);
    }
}

static void test_already_exists_is_a_conflict(void **state)
{
    (void)state;
    json_t *ns = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace", "metadata",
                           "name", NS);
    gp_error err;
    assert_int_equal(kc_create(the.client, "/api/v1/namespaces", ns, NULL, &err), KC_CONFLICT);
    json_decref(ns);
    assert_int_equal(kc_last_code(the.client), 409);
    assert_string_equal(kc_last_reason(the.client), "AlreadyExists");
    assert_string_equal(err.text,
                        "Error from server (AlreadyExists): namespaces \"" NS "\" already exists");
    if (the.have_kubectl) {
        ran k = kubectl("create", "namespace", NS, NULL, NULL, NULL, NULL, NULL);
        assert_kubectl_says(&k, err.text);
        ran_free(&k);
    }
}

static void test_delete_then_gone(void **state)
{
    (void)state;
    create_configmap(the.client, "doomed");
    create_configmap(the.client, "doomed-too");
    gp_error err;
    const char *path = "/api/v1/namespaces/" NS "/configmaps/doomed";
    assert_int_equal(kc_delete(the.client, path, NULL, &err), KC_OK);
    assert_int_equal(kc_get(the.client, path, NULL, &err), KC_NOT_FOUND);
    assert_int_equal(kc_delete(the.client, "/api/v1/namespaces/" NS "/configmaps/doomed-too",
                               "Background", &err),
                     KC_OK);
    assert_int_equal(kc_delete(the.client, path, NULL, &err), KC_NOT_FOUND);
    if (the.have_kubectl) {
        ran k = kubectl("get", "configmap", "doomed-too", "-n", NS, NULL, NULL, NULL);
        assert_int_not_equal(k.status, 0);
        assert_non_null(strstr(k.err, "(NotFound)"));
        ran_free(&k);
    }
}

/* ---- watch ---- */

typedef struct {
    const char *want; /* the name whose ADDED ends the watch */
    int events;
    bool added;
} watch_seen;

static int on_event(const char *type, json_t *object, void *ud)
{
    watch_seen *w = ud;
    w->events++;
    const char *name = str_at(object, "metadata", "name");
    if (strcmp(type, "ADDED") == 0 && name && strcmp(name, w->want) == 0) w->added = true;
    return w->added;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void test_watch_from_a_resource_version(void **state)
{
    (void)state;
    json_t *list = NULL;
    gp_error err;
    assert_int_equal(
        kc_get(the.client, "/api/v1/namespaces/" NS "/configmaps?limit=1", &list, &err), KC_OK);
    char path[160];
    snprintf(path, sizeof path, "/api/v1/namespaces/" NS "/configmaps?resourceVersion=%s",
             str_at(list, "metadata", "resourceVersion"));
    json_decref(list);
    create_configmap(the.client, "watched-before");
    watch_seen w = {"watched-before", 0, false};
    double t0 = now();
    assert_int_equal(kc_watch(the.client, path, 20, on_event, &w, &err), KC_OK);
    assert_true(w.added);
    assert_int_equal(w.events, 1); /* nothing changed in NS after that resourceVersion but it */
    assert_true(now() - t0 < 10);  /* ended by the callback, not by the timeout */
}

typedef struct {
    size_t value_len;
} big_seen;

static int on_big(const char *type, json_t *object, void *ud)
{
    big_seen *b = ud;
    if (strcmp(type, "ADDED") != 0) return 0;
    b->value_len = json_string_length(json_object_get(json_object_get(object, "data"), "big"));
    return 1;
}

/* An event far larger than one read (curl hands over at most 16 KiB at a
 * time): the line must be put together across chunks. */
static void test_watch_event_spanning_chunks(void **state)
{
    (void)state;
    enum { BIG = 300000 };
    json_t *list = NULL;
    gp_error err;
    assert_int_equal(
        kc_get(the.client, "/api/v1/namespaces/" NS "/configmaps?limit=1", &list, &err), KC_OK);
    char path[200];
    snprintf(path, sizeof path,
             "/api/v1/namespaces/" NS
             "/configmaps?resourceVersion=%s&fieldSelector=metadata.name%%3Dbig",
             str_at(list, "metadata", "resourceVersion"));
    json_decref(list);
    char *value = malloc(BIG + 1);
    memset(value, 'x', BIG);
    value[BIG] = '\0';
    json_t *cm = configmap("big", "big", value);
    free(value);
    assert_int_equal(kc_create(the.client, "/api/v1/namespaces/" NS "/configmaps", cm, NULL, &err),
                     KC_OK);
    json_decref(cm);
    big_seen b = {0};
    assert_int_equal(kc_watch(the.client, path, 20, on_big, &b, &err), KC_OK);
    assert_int_equal(b.value_len, BIG);
}

static void *create_later(void *arg)
{
    (void)arg;
    kc_client *c = NULL;
    gp_error err;
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    if (kc_client_new(the.cfg, &c, &err) != KC_OK) return "client";
    json_t *cm = configmap("watched-live", "k", "v");
    kc_result r = kc_create(c, "/api/v1/namespaces/" NS "/configmaps", cm, NULL, &err);
    json_decref(cm);
    kc_client_free(c);
    return r == KC_OK ? NULL : "create";
}

static void test_watch_sees_a_live_create(void **state)
{
    (void)state;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, create_later, NULL), 0);
    watch_seen w = {"watched-live", 0, false};
    gp_error err;
    /* Without a resourceVersion the watch starts with ADDED for what exists. */
    kc_result r =
        kc_watch(the.client, "/api/v1/namespaces/" NS "/configmaps", 20, on_event, &w, &err);
    void *thread_failed = NULL;
    pthread_join(t, &thread_failed);
    assert_null(thread_failed);
    assert_int_equal(r, KC_OK);
    assert_true(w.added);
}

static void test_watch_ends_at_its_timeout(void **state)
{
    (void)state;
    watch_seen w = {"never-created", 0, false};
    gp_error err;
    double t0 = now();
    assert_int_equal(kc_watch(the.client,
                              "/api/v1/namespaces/" NS "/configmaps?labelSelector=none%3Dhere", 1,
                              on_event, &w, &err),
                     KC_OK);
    double took = now() - t0;
    assert_false(w.added);
    assert_true(took >= 0.9 && took < 10);
}

static void test_watch_error_answer(void **state)
{
    (void)state;
    watch_seen w = {"x", 0, false};
    gp_error err;
    assert_int_equal(
        kc_watch(the.client, "/api/v1/namespaces/" NS "/nosuchthings", 5, on_event, &w, &err),
        KC_NOT_FOUND);
    assert_int_equal(w.events, 0);
    assert_non_null(strstr(err.text, "Error from server (NotFound)"));
}

/* ---- failures before or around the API ---- */

static void test_bad_token_is_unauthorized(void **state)
{
    (void)state;
    kc_config bad = *the.cfg;
    bad.token = "not-the-token";
    kc_client *c = NULL;
    gp_error err;
    assert_int_equal(kc_client_new(&bad, &c, &err), KC_OK);
    kc_result r = kc_get(c, "/api/v1/namespaces", NULL, &err);
    assert_int_equal(r, KC_API_ERROR);
    assert_int_equal(kc_last_code(c), 401);
    assert_string_equal(kc_last_reason(c), "Unauthorized");
    if (the.have_kubectl) {
        ran k = kubectl("get", "namespaces", "--token", "not-the-token", NULL, NULL, NULL, NULL);
        assert_kubectl_says(&k, err.text);
        ran_free(&k);
    } else {
        assert_string_equal(err.text, "error: You must be logged in to the server (Unauthorized)");
    }
    kc_client_free(c);
}

/* A port nothing listens on: bound, then closed. */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void test_closed_port_is_unreachable(void **state)
{
    (void)state;
    char server[64];
    snprintf(server, sizeof server, "https://127.0.0.1:%d", closed_port());
    kc_config off = *the.cfg;
    off.server = server;
    kc_client *c = NULL;
    gp_error err;
    assert_int_equal(kc_client_new(&off, &c, &err), KC_OK);
    assert_int_equal(kc_get(c, "/version", NULL, &err), KC_UNREACHABLE);
    assert_int_equal(kc_last_code(c), 0);
    char want[512];
    snprintf(want, sizeof want,
             "cannot reach the Kubernetes API server at %s (context \"gpuop\" in %s): "
             "Connection refused",
             server, the.cfg->source);
    assert_string_equal(err.text, want);
    kc_client_free(c);
}

static void test_tls_is_verified(void **state)
{
    (void)state;
    kc_config other = *the.cfg;
    kc_client *c = NULL;
    gp_error err;
    /* The system's CAs do not know the server's self-signed certificate. */
    other.ca_pem = NULL;
    other.ca_pem_len = 0;
    assert_int_equal(kc_client_new(&other, &c, &err), KC_OK);
    assert_int_equal(kc_get(c, "/version", NULL, &err), KC_UNREACHABLE);
    assert_non_null(strstr(err.text, the.cfg->server));
    kc_client_free(c);
    /* ... unless verification is off. */
    other.insecure_skip_tls_verify = true;
    assert_int_equal(kc_client_new(&other, &c, &err), KC_OK);
    assert_int_equal(kc_get(c, "/version", NULL, &err), KC_OK);
    kc_client_free(c);
}

static void test_tls_server_name(void **state)
{
    (void)state;
    kc_config named = *the.cfg;
    kc_client *c = NULL;
    gp_error err;
    /* The certificate names localhost and 127.0.0.1 (tls.c). */
    named.tls_server_name = "localhost";
    assert_int_equal(kc_client_new(&named, &c, &err), KC_OK);
    assert_int_equal(kc_get(c, "/version", NULL, &err), KC_OK);
    kc_client_free(c);
    named.tls_server_name = "elsewhere.example";
    assert_int_equal(kc_client_new(&named, &c, &err), KC_OK);
    assert_int_equal(kc_get(c, "/version", NULL, &err), KC_UNREACHABLE);
    kc_client_free(c);
    if (the.have_kubectl) {
        ran k = kubectl("get", "--raw", "/version", "--tls-server-name", "elsewhere.example", NULL,
                        NULL, NULL);
        assert_int_not_equal(k.status, 0); /* kubectl refuses it too */
        ran_free(&k);
        k = kubectl("get", "--raw", "/version", "--tls-server-name", "localhost", NULL, NULL, NULL);
        assert_int_equal(k.status, 0);
        ran_free(&k);
    }
}

static void test_escape(void **state)
{
    (void)state;
    char *e = kc_escape("a b/c=d&e~f");
    assert_string_equal(e, "a%20b%2Fc%3Dd%26e~f");
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_kubeconfig_of_up_is_read),
        cmocka_unit_test(test_version_is_what_kubectl_reads),
        cmocka_unit_test(test_create_then_get_matches_kubectl),
        cmocka_unit_test(test_list_follows_continue_one_item_a_page),
        cmocka_unit_test(test_list_stops_when_asked),
        cmocka_unit_test(test_patches_of_each_type),
        cmocka_unit_test(test_update_replaces),
        cmocka_unit_test(test_not_found_reads_as_kubectl_prints_it),
        cmocka_unit_test(test_already_exists_is_a_conflict),
        cmocka_unit_test(test_delete_then_gone),
        cmocka_unit_test(test_watch_from_a_resource_version),
        cmocka_unit_test(test_watch_sees_a_live_create),
        cmocka_unit_test(test_watch_event_spanning_chunks),
        cmocka_unit_test(test_watch_ends_at_its_timeout),
        cmocka_unit_test(test_watch_error_answer),
        cmocka_unit_test(test_bad_token_is_unauthorized),
        cmocka_unit_test(test_closed_port_is_unreachable),
        cmocka_unit_test(test_tls_is_verified),
        cmocka_unit_test(test_tls_server_name),
        cmocka_unit_test(test_escape),
    };
    return cmocka_run_group_tests_name("client_rest", tests, group_setup, group_teardown);
}
