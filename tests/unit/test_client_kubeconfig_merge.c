/* kc_kubeconfig_merge / kc_kubeconfig_unmerge: the user's kubeconfig keeps
 * everything that is not gpuop's, value for value; gpuop's entries are
 * added, replaced or removed; current-context switches and comes back; a
 * file that is not YAML is reported at its line and column and left as it
 * was; every change leaves a backup of the old bytes.
 *
 * Files are compared as values: each is read back with libyaml into JSON,
 * quoted scalars as strings and plain ones as YAML 1.1 reads them, so a
 * quoted "12345" that came back plain (a number to kubectl) fails. */
/* mkdtemp, nftw, symlink and realpath are XSI. */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "temp_dir.h"

#include <errno.h>
#include <ftw.h>
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "client/kubeconfig_write.h"
#include "client/kubeconfig_merge.h"
#include "util/file.h"

/* A kubeconfig as kubectl writes one, with what a merge must not lose: two
 * other clusters, users and contexts, preferences, an extension, a quoted
 * number, flow lists, an exec plugin. */
static const char USER_KUBECONFIG[] =
    "apiVersion: v1\n"
    "clusters:\n"
    "- cluster:\n"
    "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n"
    "    server: https://10.0.0.1:6443\n"
    "  name: prod\n"
    "- cluster:\n"
    "    insecure-skip-tls-verify: true\n"
    "    server: \"http://localhost:8080\"\n"
    "    extensions:\n"
    "    - name: client.authentication.k8s.io/exec\n"
    "      extension:\n"
    "        audience: \"12345\"\n"
    "  name: kind-lab\n"
    "contexts:\n"
    "- context:\n"
    "    cluster: prod\n"
    "    namespace: gpu-ops\n"
    "    user: admin\n"
    "  name: prod-admin\n"
    "- context:\n"
    "    cluster: kind-lab\n"
    "    user: kind-lab\n"
    "  name: kind-lab\n"
    "current-context: prod-admin\n"
    "kind: Config\n"
    "preferences:\n"
    "  colors: true\n"
    "extensions:\n"
    "- name: gpuop-test/extension\n"
    "  extension:\n"
    "    note: 'keep me: \"quoted\"'\n"
    "    list: [1, 2.5, \"3\"]\n"
    "users:\n"
    "- name: admin\n"
    "  user:\n"
    "    client-certificate-data: Q0VSVA==\n"
    "    client-key-data: S0VZ\n"
    "- name: kind-lab\n"
    "  user:\n"
    "    exec:\n"
    "      apiVersion: client.authentication.k8s.io/v1\n"
    "      command: kubelogin\n"
    "      args: [\"get-token\", \"--server-id\", \"0123\"]\n";

#define TOKEN     "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
#define SERVER    "https://127.0.0.1:41234"
#define CA_BASE64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJrVENDQVRlZ0F3SUJBZ0lVCg=="

typedef struct fixture {
    char dir[64];
    char path[128];    /* the user's kubeconfig */
    json_t *source;    /* the server's kubeconfig, as gpuop-apiserver writes it */
    const void *param; /* a table row, for table-driven tests */
} fixture;

/* ---- helpers ---- */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static char *read_text(const char *path)
{
    size_t len;
    char *text = gp_read_file(path, &len, NULL);
    assert_non_null(text);
    return text;
}

/* A plain scalar as YAML 1.1 (kubectl's reader) types it; quoted ones are
 * strings. */
static json_t *scalar_json(const yaml_node_t *n)
{
    const char *v = (const char *)n->data.scalar.value;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return json_string(v);
    if (!*v || strcmp(v, "~") == 0 || strcmp(v, "null") == 0) return json_null();
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                      "on",   "On",   "ON",   "y",   "Y"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO",
                                     "off",   "Off",   "OFF",   "n",  "N"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcmp(v, yes[i]) == 0) return json_true();
        if (strcmp(v, no[i]) == 0) return json_false();
    }
    json_t *number = json_loads(v, JSON_DECODE_ANY, NULL);
    if (json_is_number(number)) return number;
    json_decref(number);
    return json_string(v);
}

static json_t *node_json(yaml_document_t *d, int index)
{
    yaml_node_t *n = yaml_document_get_node(d, index);
    if (n->type == YAML_SCALAR_NODE) return scalar_json(n);
    if (n->type == YAML_SEQUENCE_NODE) {
        json_t *a = json_array();
        for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top;
             i++)
            json_array_append_new(a, node_json(d, *i));
        return a;
    }
    json_t *o = json_object();
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(d, p->key);
        json_object_set_new(o, (const char *)k->data.scalar.value, node_json(d, p->value));
    }
    return o;
}

/* The file's value, read by libyaml independently of the code under test. */
static json_t *load_value(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    yaml_parser_t p;
    yaml_document_t doc;
    assert_int_equal(yaml_parser_initialize(&p), 1);
    yaml_parser_set_input_file(&p, f);
    assert_int_equal(yaml_parser_load(&p, &doc), 1);
    assert_non_null(yaml_document_get_root_node(&doc));
    json_t *v = node_json(&doc, 1);
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    fclose(f);
    return v;
}

static void assert_json_equal(const json_t *actual, const json_t *expected)
{
    if (json_equal(actual, expected)) return;
    char *a = json_dumps(actual, JSON_COMPACT | JSON_ENCODE_ANY);
    char *e = json_dumps(expected, JSON_COMPACT | JSON_ENCODE_ANY);
    print_error("expected %s\n     got %s\n", e, a);
    free(a);
    free(e);
    fail();
}

/* The list `section` without the entries named `name`. */
static json_t *without(const json_t *config, const char *section, const char *name)
{
    json_t *out = json_array();
    size_t i;
    json_t *entry;
    json_array_foreach(json_object_get(config, section), i, entry)
    {
        const char *n = json_string_value(json_object_get(entry, "name"));
        if (!n || strcmp(n, name) != 0) json_array_append(out, entry);
    }
    return out;
}

static json_t *entry_named(const json_t *config, const char *section, const char *name)
{
    size_t i;
    json_t *entry;
    json_array_foreach(json_object_get(config, section), i, entry)
    {
        const char *n = json_string_value(json_object_get(entry, "name"));
        if (n && strcmp(n, name) == 0) return entry;
    }
    return NULL;
}

static size_t count_named(const json_t *config, const char *section, const char *name)
{
    size_t n = 0, i;
    json_t *entry;
    json_array_foreach(json_object_get(config, section), i, entry)
    {
        const char *s = json_string_value(json_object_get(entry, "name"));
        n += s && strcmp(s, name) == 0;
    }
    return n;
}

/* Everything but gpuop's entries and current-context is the same value. */
static void assert_others_kept(const json_t *before, const json_t *after)
{
    static const char *const sections[] = {"clusters", "users", "contexts"};
    for (size_t s = 0; s < 3; s++) {
        json_t *a = without(after, sections[s], "gpuop");
        json_t *b = without(before, sections[s], "gpuop");
        assert_json_equal(a, b);
        json_decref(a);
        json_decref(b);
    }
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)before, key, value)
    {
        bool list = strcmp(key, "clusters") == 0 || strcmp(key, "users") == 0 ||
                    strcmp(key, "contexts") == 0;
        if (list || strcmp(key, "current-context") == 0) continue;
        assert_json_equal(json_object_get(after, key), value);
    }
}

static size_t count_backups(fixture *fx, char *first, size_t size)
{
    char pattern[200];
    snprintf(pattern, sizeof pattern, "%s.gpuop-backup-*", fx->path);
    glob_t g;
    size_t n = glob(pattern, 0, NULL, &g) == 0 ? g.gl_pathc : 0;
    if (n && first) snprintf(first, size, "%s", g.gl_pathv[0]);
    if (n) globfree(&g);
    return n;
}

static unsigned mode_of(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (unsigned)(st.st_mode & 07777);
}

static int merge(fixture *fx, kc_merge_result *r, gp_error *err)
{
    return kc_kubeconfig_merge(fx->path, "gpuop", fx->source, r, err);
}

/* ---- fixture ---- */

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    fx->param = *state; /* cmocka's initial_state */
    snprintf(fx->dir, sizeof fx->dir, "/tmp/gpuop-kcmerge-XXXXXX");
    if (!mkdtemp(fx->dir)) return -1;
    snprintf(fx->path, sizeof fx->path, "%s/config", fx->dir);
    char server_kc[160];
    snprintf(server_kc, sizeof server_kc, "%s/server-kubeconfig", fx->dir);
    if (kc_kubeconfig_write(server_kc, "gpuop", SERVER, CA_BASE64, TOKEN, NULL) != 0) return -1;
    fx->source = json_load_file(server_kc, 0, NULL);
    unlink(server_kc);
    *state = fx;
    return fx->source ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    temp_dir_remove(fx->dir);
    json_decref(fx->source);
    free(fx);
    return 0;
}

/* ---- merge ---- */

static void test_merge_keeps_every_other_entry(void **state)
{
    fixture *fx = *state;
    write_text(fx->path, USER_KUBECONFIG);
    json_t *before = load_value(fx->path);
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(merge(fx, &r, &err), 0);
    assert_int_equal(r.outcome, KC_MERGE_WRITTEN);
    assert_string_equal(r.previous_context, "prod-admin");
    json_t *after = load_value(fx->path);
    assert_others_kept(before, after);
    assert_string_equal(json_string_value(json_object_get(after, "current-context")), "gpuop");
    /* gpuop's entries are the server's, value for value. */
    static const char *const sections[] = {"clusters", "users", "contexts"};
    for (size_t s = 0; s < 3; s++) {
        assert_int_equal(count_named(after, sections[s], "gpuop"), 1);
        assert_json_equal(entry_named(after, sections[s], "gpuop"),
                          entry_named(fx->source, sections[s], "gpuop"));
    }
    assert_int_equal(mode_of(fx->path), 0600);
    kc_merge_result_free(&r);
    json_decref(before);
    json_decref(after);
}

static void test_merge_backs_up_the_old_bytes(void **state)
{
    fixture *fx = *state;
    write_text(fx->path, USER_KUBECONFIG);
    chmod(fx->path, 0644);
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(merge(fx, &r, &err), 0);
    char backup[PATH_MAX];
    assert_int_equal(count_backups(fx, backup, sizeof backup), 1);
    assert_non_null(r.backup);
    assert_string_equal(r.backup, backup);
    char *saved = read_text(backup);
    assert_string_equal(saved, USER_KUBECONFIG);
    assert_int_equal(mode_of(backup), 0600);
    assert_int_equal(mode_of(fx->path), 0600);
    /* The lock kubectl also honours is gone again. */
    char lock[200];
    snprintf(lock, sizeof lock, "%s.lock", fx->path);
    assert_int_equal(access(lock, F_OK), -1);
    free(saved);
    kc_merge_result_free(&r);
}

static void test_merge_replaces_an_old_gpuop_entry_in_place(void **state)
{
    fixture *fx = *state;
    write_text(fx->path, "apiVersion: v1\n"
                         "kind: Config\n"
                         "clusters:\n"
                         "- name: a\n"
                         "  cluster: {server: 'https://a:1'}\n"
                         "- name: gpuop\n"
                         "  cluster: {server: 'https://127.0.0.1:1', proxy-url: 'http://p'}\n"
                         "- name: b\n"
                         "  cluster: {server: 'https://b:1'}\n"
                         "- name: gpuop\n"
                         "  cluster: {server: 'https://127.0.0.1:2'}\n"
                         "users: []\n"
                         "contexts: null\n"
                         "current-context: a\n");
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(merge(fx, &r, &err), 0);
    json_t *after = load_value(fx->path);
    json_t *clusters = json_object_get(after, "clusters");
    assert_int_equal(json_array_size(clusters), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(clusters, 1), "name")),
                        "gpuop");
    assert_json_equal(json_array_get(clusters, 1), entry_named(fx->source, "clusters", "gpuop"));
    assert_string_equal(json_string_value(json_object_get(json_array_get(clusters, 2), "name")),
                        "b");
    assert_int_equal(count_named(after, "users", "gpuop"), 1);
    assert_int_equal(count_named(after, "contexts", "gpuop"), 1);
    json_decref(after);
    kc_merge_result_free(&r);
}

static void test_merge_again_changes_nothing(void **state)
{
    fixture *fx = *state;
    write_text(fx->path, USER_KUBECONFIG);
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(merge(fx, &r, &err), 0);
    kc_merge_result_free(&r);
    char *first = read_text(fx->path);
    assert_int_equal(merge(fx, &r, &err), 0);
    assert_int_equal(r.outcome, KC_MERGE_UNCHANGED);
    assert_null(r.backup);
    assert_string_equal(r.previous_context, "gpuop");
    assert_int_equal(count_backups(fx, NULL, 0), 1);
    char *second = read_text(fx->path);
    assert_string_equal(second, first);
    free(first);
    free(second);
    kc_merge_result_free(&r);
}

static void test_merge_creates_a_missing_file(void **state)
{
    fixture *fx = *state;
    snprintf(fx->path, sizeof fx->path, "%s/home/.kube/config", fx->dir);
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(merge(fx, &r, &err), 0);
    assert_int_equal(r.outcome, KC_MERGE_WRITTEN);
    assert_null(r.backup);
    assert_null(r.previous_context);
    json_t *after = load_value(fx->path);
    assert_string_equal(json_string_value(json_object_get(after, "apiVersion")), "v1");
    assert_string_equal(json_string_value(json_object_get(after, "kind")), "Config");
    assert_string_equal(json_string_value(json_object_get(after, "current-context")), "gpuop");
    assert_json_equal(entry_named(after, "users", "gpuop"),
                      entry_named(fx->source, "users", "gpuop"));
    assert_int_equal(mode_of(fx->path), 0600);
    json_decref(after);
    kc_merge_result_free(&r);
}

static void test_merge_into_json_kubeconfig(void **state)
{
    fixture *fx = *state;
    /* JSON is YAML: a kubeconfig written as JSON (gpuop-apiserver's own form). */
    const char *text =
        "{\"apiVersion\": \"v1\", \"kind\": \"Config\",\n"
        " \"clusters\": [{\"name\": \"x\", \"cluster\": {\"server\": \"https://x\"}}],\n"
        " \"users\": [{\"name\": \"x\", \"user\": {\"token\": \"123\"}}],\n"
        " \"contexts\": [{\"name\": \"x\", \"context\": {\"cluster\": \"x\", "
        "\"user\": \"x\"}}],\n"
        " \"current-context\": \"x\", \"preferences\": {}}\n";
    write_text(fx->path, text);
    json_t *before = load_value(fx->path);
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(merge(fx, &r, &err), 0);
    json_t *after = load_value(fx->path);
    assert_others_kept(before, after);
    assert_string_equal(r.previous_context, "x");
    /* "123" was quoted: it must stay a string. */
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(entry_named(after, "users", "x"), "user"), "token")),
                        "123");
    json_decref(before);
    json_decref(after);
    kc_merge_result_free(&r);
}

/* Strings of the server's kubeconfig that YAML 1.1 would read as something
 * else come back as the same strings. */
static void test_merge_quotes_strings_that_look_like_other_types(void **state)
{
    fixture *fx = *state;
    json_t *source = json_pack(
        "{s:[{s:s, s:{s:s, s:s}}], s:[{s:s, s:{s:s}}], s:[{s:s, s:{s:s, s:s, s:s}}]}", "clusters",
        "name", "gpuop", "cluster", "server", "https://127.0.0.1:1", "tls-server-name", "null",
        "users", "name", "gpuop", "user", "token", "1234567890", "contexts", "name", "gpuop",
        "context", "cluster", "gpuop", "user", "gpuop", "namespace", "no");
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(kc_kubeconfig_merge(fx->path, "gpuop", source, &r, &err), 0);
    json_t *after = load_value(fx->path);
    static const char *const sections[] = {"clusters", "users", "contexts"};
    for (size_t s = 0; s < 3; s++)
        assert_json_equal(entry_named(after, sections[s], "gpuop"),
                          entry_named(source, sections[s], "gpuop"));
    json_decref(after);
    json_decref(source);
    kc_merge_result_free(&r);
}

static void test_merge_keeps_aliases_and_null_lists(void **state)
{
    fixture *fx = *state;
    write_text(fx->path, "clusters:\n"
                         "- name: a\n"
                         "  cluster: &shared {server: 'https://a:1'}\n"
                         "- name: b\n"
                         "  cluster: *shared\n"
                         "users:\n"
                         "contexts: ~\n");
    json_t *before = load_value(fx->path);
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(merge(fx, &r, &err), 0);
    json_t *after = load_value(fx->path);
    assert_others_kept(before, after);
    assert_int_equal(json_array_size(json_object_get(after, "users")), 1);
    assert_int_equal(json_array_size(json_object_get(after, "contexts")), 1);
    json_decref(before);
    json_decref(after);
    kc_merge_result_free(&r);
}

static void test_merge_through_a_symlink(void **state)
{
    fixture *fx = *state;
    char real[160];
    snprintf(real, sizeof real, "%s/real-config", fx->dir);
    write_text(real, USER_KUBECONFIG);
    assert_int_equal(symlink("real-config", fx->path), 0);
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(merge(fx, &r, &err), 0);
    struct stat st;
    assert_int_equal(lstat(fx->path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    json_t *after = load_value(real);
    assert_non_null(entry_named(after, "clusters", "gpuop"));
    json_decref(after);
    kc_merge_result_free(&r);
}

/* ---- unmerge ---- */

static void test_unmerge_restores_the_file(void **state)
{
    fixture *fx = *state;
    write_text(fx->path, USER_KUBECONFIG);
    json_t *before = load_value(fx->path);
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(merge(fx, &r, &err), 0);
    char *previous = r.previous_context;
    r.previous_context = NULL;
    kc_merge_result_free(&r);
    assert_int_equal(kc_kubeconfig_unmerge(fx->path, "gpuop", TOKEN, previous, &r, &err), 0);
    assert_int_equal(r.outcome, KC_MERGE_WRITTEN);
    assert_non_null(r.backup);
    json_t *after = load_value(fx->path);
    assert_json_equal(after, before);
    assert_int_equal(count_backups(fx, NULL, 0), 2);
    json_decref(before);
    json_decref(after);
    free(previous);
    kc_merge_result_free(&r);
}

static void test_unmerge_leaves_a_context_the_user_chose(void **state)
{
    fixture *fx = *state;
    write_text(fx->path, USER_KUBECONFIG);
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(merge(fx, &r, &err), 0);
    kc_merge_result_free(&r);
    /* The user switched away (kubectl config use-context kind-lab). */
    char *text = read_text(fx->path);
    char *cc = strstr(text, "current-context: gpuop");
    assert_non_null(cc);
    char *edited = malloc(strlen(text) + 16);
    sprintf(edited, "%.*scurrent-context: kind-lab%s", (int)(cc - text), text,
            cc + strlen("current-context: gpuop"));
    write_text(fx->path, edited);
    assert_int_equal(kc_kubeconfig_unmerge(fx->path, "gpuop", TOKEN, "prod-admin", &r, &err), 0);
    json_t *after = load_value(fx->path);
    assert_string_equal(json_string_value(json_object_get(after, "current-context")), "kind-lab");
    assert_null(entry_named(after, "clusters", "gpuop"));
    assert_null(entry_named(after, "users", "gpuop"));
    assert_null(entry_named(after, "contexts", "gpuop"));
    json_decref(after);
    free(text);
    free(edited);
    kc_merge_result_free(&r);
}

static void test_unmerge_drops_current_when_previous_is_gone(void **state)
{
    fixture *fx = *state;
    write_text(fx->path, USER_KUBECONFIG);
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(merge(fx, &r, &err), 0);
    kc_merge_result_free(&r);
    assert_int_equal(kc_kubeconfig_unmerge(fx->path, "gpuop", TOKEN, "deleted-meanwhile", &r, &err),
                     0);
    json_t *after = load_value(fx->path);
    assert_null(json_object_get(after, "current-context"));
    json_decref(after);
    kc_merge_result_free(&r);
}

static void test_unmerge_leaves_another_clusters_entries(void **state)
{
    fixture *fx = *state;
    write_text(fx->path, USER_KUBECONFIG);
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(merge(fx, &r, &err), 0);
    kc_merge_result_free(&r);
    char *before = read_text(fx->path);
    assert_int_equal(
        kc_kubeconfig_unmerge(fx->path, "gpuop", "another-token", "prod-admin", &r, &err), 0);
    assert_int_equal(r.outcome, KC_MERGE_NOT_OURS);
    char *after = read_text(fx->path);
    assert_string_equal(after, before);
    assert_int_equal(count_backups(fx, NULL, 0), 1);
    free(before);
    free(after);
    kc_merge_result_free(&r);
}

static void test_unmerge_of_a_missing_file_is_nothing(void **state)
{
    fixture *fx = *state;
    snprintf(fx->path, sizeof fx->path, "%s/nowhere/config", fx->dir);
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(kc_kubeconfig_unmerge(fx->path, "gpuop", TOKEN, NULL, &r, &err), 0);
    assert_int_equal(r.outcome, KC_MERGE_UNCHANGED);
    char dir[160];
    snprintf(dir, sizeof dir, "%s/nowhere", fx->dir);
    assert_int_equal(access(dir, F_OK), -1);
}

/* ---- bad files: an error at FILE:LINE:COL, nothing written ---- */

typedef struct bad_case {
    const char *name;
    const char *text;
    unsigned line, col;
    const char *message; /* a part of it */
} bad_case;

/* Positions of YAML errors as PyYAML, an independent parser, reports them
 * (kubectl names the same line for the first); the others counted by hand. */
static const bad_case bad_cases[] = {
    {"bad: a second ': ' in a plain value", "apiVersion: v1\nkind: Config\ncurrent-context: a: b\n",
     3, 19, "mapping values are not allowed"},
    {"bad: an unclosed flow list", "apiVersion: v1\nclusters: [\n  {name: a}\nusers: []\n", 4, 1,
     "did not find expected ',' or ']'"},
    {"bad: invalid UTF-8", "apiVersion: v1\ncurrent-context: \xff\n", 2, 18, "UTF-8"},
    {"bad: clusters is a string", "apiVersion: v1\nclusters: foo\n", 2, 11,
     "'clusters' is not a list"},
    {"bad: users is a map", "users:\n  a: b\n", 2, 3, "'users' is not a list"},
    {"bad: the top level is a list", "- a\n- b\n", 1, 1, "not a kubeconfig"},
    /* kubectl would read only the first; writing back only that would lose the rest. */
    {"bad: two documents", "apiVersion: v1\n---\nkind: Config\n", 2, 1, "one YAML document"},
};
#define N_BAD (sizeof bad_cases / sizeof bad_cases[0])

static void check_bad(fixture *fx, const bad_case *c, bool merging)
{
    write_text(fx->path, c->text);
    kc_merge_result r;
    gp_error err = {0};
    int rc = merging ? merge(fx, &r, &err)
                     : kc_kubeconfig_unmerge(fx->path, "gpuop", TOKEN, "x", &r, &err);
    assert_int_equal(rc, -1);
    char where[200];
    snprintf(where, sizeof where, "%s:%u:%u: ", fx->path, c->line, c->col);
    if (strncmp(err.text, where, strlen(where)) != 0)
        print_error("expected it at %s\n     got %s\n", where, err.text);
    assert_int_equal(strncmp(err.text, where, strlen(where)), 0);
    if (!strstr(err.text, c->message)) print_error("expected \"%s\" in %s\n", c->message, err.text);
    assert_non_null(strstr(err.text, c->message));
    char *after = read_text(fx->path);
    assert_string_equal(after, c->text);
    assert_int_equal(count_backups(fx, NULL, 0), 0);
    free(after);
}

/* Merge and unmerge alike: both read the whole file before they edit. */
static void run_bad_case(void **state)
{
    fixture *fx = *state;
    check_bad(fx, fx->param, true);
    check_bad(fx, fx->param, false);
}

static void test_too_deep_is_an_error_not_a_crash(void **state)
{
    fixture *fx = *state;
    /* Past the limit, yet cheap: libyaml's parser is quadratic in nesting
     * (measured: 51 s for 100 000 levels, 0.1 s for 5 000). */
    size_t depth = 5000;
    char *text = malloc(depth * 2 + 64);
    size_t n = (size_t)sprintf(text, "preferences: ");
    for (size_t i = 0; i < depth; i++)
        text[n++] = '[';
    for (size_t i = 0; i < depth; i++)
        text[n++] = ']';
    text[n++] = '\n';
    text[n] = '\0';
    write_text(fx->path, text);
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(merge(fx, &r, &err), -1);
    assert_non_null(strstr(err.text, "nested"));
    char *after = read_text(fx->path);
    assert_string_equal(after, text);
    free(after);
    free(text);
}

static void test_a_held_lock_is_an_error(void **state)
{
    fixture *fx = *state;
    write_text(fx->path, USER_KUBECONFIG);
    char lock[200];
    snprintf(lock, sizeof lock, "%s.lock", fx->path);
    write_text(lock, "");
    kc_merge_result r;
    gp_error err = {0};
    assert_int_equal(merge(fx, &r, &err), -1);
    assert_non_null(strstr(err.text, lock));
    char *after = read_text(fx->path);
    assert_string_equal(after, USER_KUBECONFIG);
    assert_int_equal(access(lock, F_OK), 0); /* not ours to remove */
    free(after);
}

/* ---- which file ---- */

static void test_user_path(void **state)
{
    (void)state;
    char *p;
    setenv("HOME", "/home/someone", 1);
    unsetenv("KUBECONFIG");
    p = kc_kubeconfig_user_path(NULL, NULL);
    assert_string_equal(p, "/home/someone/.kube/config");
    free(p);
    setenv("KUBECONFIG", "/a/one:/b/two", 1);
    p = kc_kubeconfig_user_path(NULL, NULL);
    assert_string_equal(p, "/a/one");
    free(p);
    setenv("KUBECONFIG", "::/c/three:/d", 1);
    p = kc_kubeconfig_user_path(NULL, NULL);
    assert_string_equal(p, "/c/three");
    free(p);
    setenv("KUBECONFIG", "", 1);
    p = kc_kubeconfig_user_path(NULL, NULL);
    assert_string_equal(p, "/home/someone/.kube/config");
    free(p);
    p = kc_kubeconfig_user_path("/explicit", NULL);
    assert_string_equal(p, "/explicit");
    free(p);
    unsetenv("KUBECONFIG");
}

int main(void)
{
    static const struct CMUnitTest singles[] = {
        cmocka_unit_test_setup_teardown(test_merge_keeps_every_other_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge_backs_up_the_old_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge_replaces_an_old_gpuop_entry_in_place, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_merge_again_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge_creates_a_missing_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge_into_json_kubeconfig, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge_quotes_strings_that_look_like_other_types, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_merge_keeps_aliases_and_null_lists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge_through_a_symlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unmerge_restores_the_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unmerge_leaves_a_context_the_user_chose, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unmerge_drops_current_when_previous_is_gone, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unmerge_leaves_another_clusters_entries, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_unmerge_of_a_missing_file_is_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_deep_is_an_error_not_a_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_held_lock_is_an_error, setup, teardown),
        cmocka_unit_test(test_user_path),
    };
    size_t n_singles = sizeof singles / sizeof singles[0];
    /* One cmocka test per bad file, named after it, so a failure says which. */
    static struct CMUnitTest tests[N_BAD + sizeof singles / sizeof singles[0]];
    size_t n = 0;
    for (size_t i = 0; i < n_singles; i++)
        tests[n++] = singles[i];
    for (size_t i = 0; i < N_BAD; i++)
        tests[n++] = (struct CMUnitTest){bad_cases[i].name, run_bad_case, setup, teardown,
                                         (void *)&bad_cases[i]};
    return _cmocka_run_group_tests("cluster_kubeconfig_merge", tests, n, NULL, NULL);
}
