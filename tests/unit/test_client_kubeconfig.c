/* kc_config_load against the real kubectl: for each setup, kubectl's own
 * resolution (`kubectl config view --minify --flatten -o json`, with the
 * same --kubeconfig, --context and KUBECONFIG) is the expected value of the
 * server, CA bytes, client certificate and key, token and namespace.
 * --flatten makes kubectl read every file it names and inline its bytes, so
 * relative paths are judged by what kubectl read, not by a path string.
 *
 * HOME and kubectl's cache point into a temporary directory. Cases that
 * need kubectl are skipped (with a message) when it is not installed. */
/* mkdtemp, nftw are XSI. */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "temp_dir.h"

#include "json_assert.h"

#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/kubeconfig.h"
#include "util/spawn.h"

typedef struct {
    char dir[64];
    char home[96];
} fixture;

/* ---- files ---- */

/* Writes `text` to DIR/name ("$D" in the text becomes DIR). */
static void put(const fixture *fx, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", fx->dir, name);
    /* The folders of `name`, made one by one. */
    for (char *p = path + strlen(fx->dir) + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        mkdir(path, 0700);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (const char *p = text; *p; p++) {
        if (p[0] == '$' && p[1] == 'D') {
            fputs(fx->dir, f);
            p++;
        } else {
            fputc(*p, f);
        }
    }
    fclose(f);
}

/* "$D" in s replaced by the directory; a static buffer. */
static const char *in_dir(const fixture *fx, const char *s)
{
    static char out[1024];
    size_t o = 0;
    for (const char *p = s; *p && o + strlen(fx->dir) + 1 < sizeof out; p++) {
        if (p[0] == '$' && p[1] == 'D') {
            o += (size_t)snprintf(out + o, sizeof out - o, "%s", fx->dir);
            p++;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
    return out;
}

static void kubeconfig_env(const fixture *fx, const char *value)
{
    if (value)
        setenv("KUBECONFIG", in_dir(fx, value), 1);
    else
        unsetenv("KUBECONFIG");
}

/* ---- kubectl ---- */

static bool have_kubectl(void)
{
    char *argv[] = {"kubectl", "version", "--client", NULL};
    char *out = NULL, *err = NULL;
    size_t n;
    int status = -1;
    gp_spawn_result r = gp_spawn_capture(argv, 30000, &out, &n, &err, &n, &status, NULL);
    free(out);
    free(err);
    return r == GP_SPAWN_OK && status == 0;
}

#define NEED_KUBECTL()                                                                             \
    do {                                                                                           \
        if (!have_kubectl()) {                                                                     \
            print_message("kubectl is not installed: skipped\n");                                  \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

/* kubectl config view --minify --flatten -o json, or NULL when kubectl
 * refuses (its stderr then in *why, which the caller frees). */
static json_t *kubectl_view(const fixture *fx, const kc_options *opt, char **why)
{
    char cache[128], kubeconfig[300];
    snprintf(cache, sizeof cache, "%s/cache", fx->dir);
    char *argv[12] = {"kubectl",  "--cache-dir", cache, "config", "view",
                      "--minify", "--flatten",   "-o",  "json"};
    int n = 9;
    if (opt->kubeconfig) {
        snprintf(kubeconfig, sizeof kubeconfig, "--kubeconfig=%s", opt->kubeconfig);
        argv[n++] = kubeconfig;
    }
    if (opt->context) {
        argv[n++] = "--context";
        argv[n++] = (char *)opt->context;
    }
    argv[n] = NULL;
    char *out = NULL, *err = NULL;
    size_t len;
    int status = -1;
    gp_error e;
    assert_int_equal(gp_spawn_capture(argv, 30000, &out, &len, &err, &len, &status, &e),
                     GP_SPAWN_OK);
    json_t *v = status == 0 ? json_loads(out, 0, NULL) : NULL;
    free(out);
    if (why)
        *why = err;
    else
        free(err);
    return v;
}

static const char *get_s(json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static void assert_str_or_null(const char *ours, const char *theirs, const char *what)
{
    if (!ours && !theirs) return;
    if (!ours || !theirs || strcmp(ours, theirs) != 0) {
        print_error("%s: kubectl %s, we %s\n", what, theirs ? theirs : "(none)",
                    ours ? ours : "(none)");
        fail();
    }
}

static char *b64(const char *data, size_t len)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc(len / 3 * 4 + 5);
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned char)data[i] << 16;
        if (i + 1 < len) v |= (unsigned char)data[i + 1] << 8;
        if (i + 2 < len) v |= (unsigned char)data[i + 2];
        out[o++] = al[v >> 18 & 63];
        out[o++] = al[v >> 12 & 63];
        out[o++] = i + 1 < len ? al[v >> 6 & 63] : '=';
        out[o++] = i + 2 < len ? al[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

/* PEM bytes compared as kubectl inlines them (base64 of the bytes). */
static void assert_bytes(const char *ours, size_t len, const char *theirs_b64, const char *what)
{
    char *enc = ours ? b64(ours, len) : NULL;
    assert_str_or_null(enc, theirs_b64, what);
    free(enc);
}

/* Loads with opt and compares every field with kubectl's resolution; returns
 * our config for more checks (the caller frees it). */
static kc_config *load_and_compare(const fixture *fx, const kc_options *opt)
{
    kc_config *c = NULL;
    gp_error err;
    if (kc_config_load(opt, &c, &err) != 0) {
        print_error("kc_config_load: %s\n", err.text);
        fail();
    }
    char *why = NULL;
    json_t *view = kubectl_view(fx, opt, &why);
    if (!view) print_error("kubectl refused: %s\n", why);
    free(why);
    assert_non_null(view);
    json_t *ctx = json_array_get(json_object_get(view, "contexts"), 0);
    json_t *cl = json_array_get(json_object_get(view, "clusters"), 0);
    json_t *user = json_object_get(json_array_get(json_object_get(view, "users"), 0), "user");
    json_t *cluster = json_object_get(cl, "cluster");
    assert_str_or_null(c->context_name, get_s(ctx, "name"), "context");
    assert_str_or_null(c->cluster_name, get_s(cl, "name"), "cluster");
    /* A trailing '/' is dropped: paths are appended as they are. */
    char server[256];
    snprintf(server, sizeof server, "%s", get_s(cluster, "server") ? get_s(cluster, "server") : "");
    for (size_t n = strlen(server); n > 0 && server[n - 1] == '/'; n--)
        server[n - 1] = '\0';
    assert_str_or_null(c->server, server, "server");
    assert_bytes(c->ca_pem, c->ca_pem_len, get_s(cluster, "certificate-authority-data"), "CA");
    assert_str_or_null(c->tls_server_name, get_s(cluster, "tls-server-name"), "tls-server-name");
    assert_int_equal(c->insecure_skip_tls_verify,
                     json_is_true(json_object_get(cluster, "insecure-skip-tls-verify")));
    const char *ns = get_s(json_object_get(ctx, "context"), "namespace");
    assert_str_or_null(c->nspace, opt->nspace ? opt->nspace : ns ? ns : "default", "namespace");
    assert_bytes(c->cert_pem, c->cert_pem_len, get_s(user, "client-certificate-data"),
                 "client certificate");
    assert_bytes(c->key_pem, c->key_pem_len, get_s(user, "client-key-data"), "client key");
    assert_str_or_null(c->username, get_s(user, "username"), "username");
    assert_str_or_null(c->password, get_s(user, "password"), "password");
    if (!get_s(user, "tokenFile")) assert_str_or_null(c->token, get_s(user, "token"), "token");
    json_decref(view);
    return c;
}

/* kc_config_load fails; err mentions each of the NULL-terminated parts. */
static void assert_load_fails(const kc_options *opt, const char *part, const char *part2)
{
    kc_config *c = NULL;
    gp_error err;
    assert_int_equal(kc_config_load(opt, &c, &err), -1);
    assert_null(c);
    if (!strstr(err.text, part) || (part2 && !strstr(err.text, part2))) {
        print_error("error \"%s\" does not say \"%s\"%s%s\n", err.text, part, part2 ? " and " : "",
                    part2 ? part2 : "");
        fail();
    }
}

/* ---- fixture ---- */

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    snprintf(fx->dir, sizeof fx->dir, "/tmp/gpuop-client-kc-XXXXXX");
    if (!mkdtemp(fx->dir)) return -1;
    snprintf(fx->home, sizeof fx->home, "%s/home", fx->dir);
    mkdir(fx->home, 0700);
    setenv("HOME", fx->home, 1);
    unsetenv("KUBECONFIG");
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    temp_dir_remove(fx->dir);
    free(fx);
    return 0;
}

/* ---- the files of the cases ---- */

/* Two files that both name context "shared", cluster "c1" and user "u";
 * a's context points at user "only-b", which only b has. */
static const char FILE_A[] = "apiVersion: v1\n"
                             "kind: Config\n"
                             "current-context: shared\n"
                             "contexts:\n"
                             "- name: shared\n"
                             "  context: {cluster: c1, user: only-b, namespace: ns-from-a}\n"
                             "- name: other\n"
                             "  context: {cluster: c2, user: u}\n"
                             "clusters:\n"
                             "- name: c1\n"
                             "  cluster:\n"
                             "    server: https://a.example:6443/\n"
                             "    certificate-authority-data: UEVNIGZyb20gYQo=\n"
                             "- name: c2\n"
                             "  cluster: {server: 'https://c2.example', insecure-skip-tls-verify: "
                             "true}\n"
                             "users:\n"
                             "- name: u\n"
                             "  user: {token: token-of-a}\n";

static const char FILE_B[] = "apiVersion: v1\n"
                             "kind: Config\n"
                             "current-context: other\n"
                             "contexts:\n"
                             "- name: shared\n"
                             "  context: {cluster: c2, user: u, namespace: ns-from-b}\n"
                             "clusters:\n"
                             "- name: c1\n"
                             "  cluster:\n"
                             "    server: https://b.example:6443\n"
                             "    tls-server-name: only-in-b\n"
                             "users:\n"
                             "- name: u\n"
                             "  user: {token: token-of-b}\n"
                             "- name: only-b\n"
                             "  user: {token: token-only-in-b}\n";

/* ---- tests ---- */

static void test_two_files_first_wins(void **state)
{
    fixture *fx = *state;
    NEED_KUBECTL();
    put(fx, "a.yaml", FILE_A);
    put(fx, "b.yaml", FILE_B);
    kubeconfig_env(fx, "$D/a.yaml:$D/b.yaml");
    kc_config *c = load_and_compare(fx, &(kc_options){0});
    /* clientcmd's rule, written down: a's current-context and a's whole c1
     * (b's tls-server-name is discarded); only-b comes from b. */
    assert_string_equal(c->context_name, "shared");
    assert_string_equal(c->server, "https://a.example:6443");
    assert_null(c->tls_server_name);
    assert_string_equal(c->token, "token-only-in-b");
    assert_string_equal(c->nspace, "ns-from-a");
    assert_string_equal(c->ca_pem, "PEM from a\n");
    kc_config_free(c);
}

static void test_order_of_the_list_matters(void **state)
{
    fixture *fx = *state;
    NEED_KUBECTL();
    put(fx, "a.yaml", FILE_A);
    put(fx, "b.yaml", FILE_B);
    kubeconfig_env(fx, "$D/b.yaml:$D/a.yaml");
    kc_config *c = load_and_compare(fx, &(kc_options){0});
    assert_string_equal(c->context_name, "other"); /* b's current-context */
    assert_string_equal(c->server, "https://c2.example");
    assert_true(c->insecure_skip_tls_verify);
    assert_string_equal(c->token, "token-of-b"); /* a's context, b's user */
    kc_config_free(c);
    c = load_and_compare(fx, &(kc_options){.context = "shared"});
    assert_string_equal(c->nspace, "ns-from-b");
    kc_config_free(c);
}

static void test_missing_and_empty_entries_are_skipped(void **state)
{
    fixture *fx = *state;
    NEED_KUBECTL();
    put(fx, "a.yaml", FILE_A);
    put(fx, "b.yaml", FILE_B);
    kubeconfig_env(fx, "$D/missing.yaml::$D/a.yaml:$D/b.yaml");
    kc_config *c = load_and_compare(fx, &(kc_options){0});
    assert_string_equal(c->server, "https://a.example:6443");
    kc_config_free(c);
}

static void test_context_and_namespace_flags(void **state)
{
    fixture *fx = *state;
    NEED_KUBECTL();
    put(fx, "a.yaml", FILE_A);
    put(fx, "b.yaml", FILE_B);
    kubeconfig_env(fx, "$D/a.yaml:$D/b.yaml");
    kc_options opt = {.context = "other"};
    kc_config *c = load_and_compare(fx, &opt);
    assert_string_equal(c->server, "https://c2.example");
    assert_string_equal(c->token, "token-of-a");
    assert_string_equal(c->nspace, "default"); /* "other" sets none */
    kc_config_free(c);
    opt.nspace = "flag-wins";
    c = load_and_compare(fx, &opt);
    assert_string_equal(c->nspace, "flag-wins");
    kc_config_free(c);
}

static void test_explicit_file_alone(void **state)
{
    fixture *fx = *state;
    NEED_KUBECTL();
    put(fx, "a.yaml", FILE_A);
    put(fx, "b.yaml", FILE_B);
    kubeconfig_env(fx, "$D/a.yaml");
    char path[128];
    snprintf(path, sizeof path, "%s/b.yaml", fx->dir);
    kc_options opt = {.kubeconfig = path, .context = "other"};
    /* b alone has no cluster c2: kubectl minifies to nothing usable, we say so. */
    assert_load_fails(&opt, "context \"other\" not found", path);
    opt.context = NULL;
    put(fx, "b.yaml",
        "current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
        "clusters: [{name: c, cluster: {server: 'https://explicit.example'}}]\n"
        "users: [{name: u, user: {token: t}}]\n");
    kc_config *c = load_and_compare(fx, &opt);
    assert_string_equal(c->server, "https://explicit.example");
    kc_config_free(c);
    snprintf(path, sizeof path, "%s/none.yaml", fx->dir);
    assert_load_fails(&opt, path, "No such file");
    char *why = NULL;
    json_t *v = kubectl_view(fx, &opt, &why);
    assert_null(v); /* kubectl refuses a missing --kubeconfig too */
    free(why);
}

static void test_home_config_when_no_kubeconfig_variable(void **state)
{
    fixture *fx = *state;
    NEED_KUBECTL();
    put(fx, "home/.kube/config", FILE_A);
    kubeconfig_env(fx, NULL);
    kc_config *c = load_and_compare(fx, &(kc_options){.context = "other"});
    assert_string_equal(c->server, "https://c2.example");
    char want[128];
    snprintf(want, sizeof want, "%s/.kube/config", fx->home);
    assert_string_equal(c->source, want);
    kc_config_free(c);
}

static void test_relative_paths_are_relative_to_their_file(void **state)
{
    fixture *fx = *state;
    NEED_KUBECTL();
    put(fx, "conf/certs/ca.pem", "-----BEGIN CERTIFICATE-----\nCA relative\n");
    put(fx, "conf/certs/client.pem", "-----BEGIN CERTIFICATE-----\nclient\n");
    put(fx, "conf/certs/client.key", "-----BEGIN EC PRIVATE KEY-----\nkey\n");
    put(fx, "conf/kubeconfig",
        "current-context: rel\n"
        "contexts: [{name: rel, context: {cluster: c, user: u, namespace: gpu-lab}}]\n"
        "clusters: [{name: c, cluster: {server: 'https://rel.example', certificate-authority: "
        "certs/ca.pem}}]\n"
        "users: [{name: u, user: {client-certificate: certs/client.pem, client-key: "
        "./certs/client.key}}]\n");
    /* A decoy beside the working directory: the wrong resolution finds it. */
    put(fx, "certs/ca.pem", "decoy\n");
    assert_int_equal(chdir(fx->dir), 0);
    kubeconfig_env(fx, "$D/conf/kubeconfig");
    kc_config *c = load_and_compare(fx, &(kc_options){0});
    assert_string_equal(c->ca_pem, "-----BEGIN CERTIFICATE-----\nCA relative\n");
    assert_string_equal(c->key_pem, "-----BEGIN EC PRIVATE KEY-----\nkey\n");
    assert_string_equal(c->nspace, "gpu-lab");
    kc_config_free(c);
    assert_int_equal(chdir("/"), 0);
}

static void test_data_and_files(void **state)
{
    fixture *fx = *state;
    NEED_KUBECTL();
    put(fx, "client.pem", "client cert from a file\n");
    put(fx, "token", "  token-from-file\n");
    /* "Y2xpZW50IGtleSBkYXRhCg==" is base64 of "client key data\n". */
    put(fx, "kc",
        "current-context: d\n"
        "contexts: [{name: d, context: {cluster: c, user: u}}]\n"
        "clusters: [{name: c, cluster: {server: 'https://data.example', "
        "certificate-authority-data: "
        "Q0EgZGF0YQo=, tls-server-name: api.internal, proxy-url: 'http://proxy:3128'}}]\n"
        "users: [{name: u, user: {client-certificate: client.pem, client-key-data: "
        "Y2xpZW50IGtleSBkYXRhCg==, tokenFile: token}}]\n");
    kubeconfig_env(fx, "$D/kc");
    kc_config *c = load_and_compare(fx, &(kc_options){0});
    assert_string_equal(c->ca_pem, "CA data\n");
    assert_int_equal(c->ca_pem_len, 8);
    assert_string_equal(c->key_pem, "client key data\n");
    assert_string_equal(c->cert_pem, "client cert from a file\n");
    assert_string_equal(c->token, "token-from-file"); /* trimmed, as client-go does */
    assert_string_equal(c->tls_server_name, "api.internal");
    kc_config_free(c);
}

/* Setups kubectl refuses: we refuse them too, naming the file and entry. */
static void test_what_kubectl_refuses(void **state)
{
    fixture *fx = *state;
    NEED_KUBECTL();
    static const struct {
        const char *text, *part, *part2;
    } cases[] = {
        {"current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
         "clusters: [{name: c, cluster: {server: 'https://s', insecure-skip-tls-verify: true, "
         "certificate-authority-data: Q0EK}}]\nusers: [{name: u, user: {token: t}}]\n",
         "insecure flag is not allowed", "kc:3:"},
        {"current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
         "clusters: [{name: c, cluster: {server: 'https://s'}}, {name: c, cluster: {server: "
         "'https://t'}}]\n",
         "duplicate name \"c\" in clusters", "kc:3:"},
        {"current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
         "clusters: [{name: c, cluster: {server: 'https://s', certificate-authority: nope.pem}}]\n"
         "users: [{name: u, user: {token: t}}]\n",
         "unable to read certificate-authority", "nope.pem"},
        {"current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
         "clusters: [{name: c, cluster: {server: 'https://s'}}]\n"
         "users: [{name: u, user: {client-certificate-data: Q0EK, client-certificate: f.pem, "
         "client-key-data: Q0EK}}]\n",
         "are both specified for user \"u\"", "kc:4:"},
        {"current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
         "clusters: [{name: c, cluster: {server: 'https://s'}}]\n"
         "users: [{name: u, user: {token: t, username: a, password: b}}]\n",
         "more than one authentication method found for u", "kc:4:"},
        {"current-context: y\n", "current-context must be a string", "kc:1:"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        put(fx, "kc", cases[i].text);
        char path[128];
        snprintf(path, sizeof path, "%s/kc", fx->dir);
        kc_options opt = {.kubeconfig = path};
        assert_load_fails(&opt, cases[i].part, cases[i].part2);
        /* kubectl refuses them when it uses the config, not in `config
         * view`: ask it for something. */
        char cache[128], kubeconfig[160];
        snprintf(cache, sizeof cache, "%s/cache", fx->dir);
        snprintf(kubeconfig, sizeof kubeconfig, "--kubeconfig=%s", path);
        char *argv[] = {"kubectl", "--cache-dir", cache,      kubeconfig, "--request-timeout=2s",
                        "get",     "--raw",       "/version", NULL};
        char *out = NULL, *err = NULL;
        size_t n;
        int status = 0;
        assert_int_equal(gp_spawn_capture(argv, 30000, &out, &n, &err, &n, &status, NULL),
                         GP_SPAWN_OK);
        if (status == 0) print_error("case %zu: kubectl accepted it\n", i);
        assert_int_not_equal(status, 0);
        assert_true(strlen(err) > 0);
        free(out);
        free(err);
    }
}

/* Plug-ins are a program to run; we do not run them, and say which user
 * asks for one. */
static void test_exec_and_auth_provider_are_refused(void **state)
{
    fixture *fx = *state;
    put(fx, "kc",
        "current-context: x\ncontexts: [{name: x, context: {cluster: c, user: eks}}]\n"
        "clusters: [{name: c, cluster: {server: 'https://s'}}]\n"
        "users:\n- name: eks\n  user:\n    exec: {apiVersion: "
        "client.authentication.k8s.io/v1beta1, command: aws}\n");
    char path[128];
    snprintf(path, sizeof path, "%s/kc", fx->dir);
    kc_options opt = {.kubeconfig = path};
    assert_load_fails(&opt, "user \"eks\" uses exec", "kc:7:"); /* the user: mapping */
    put(fx, "kc",
        "current-context: x\ncontexts: [{name: x, context: {cluster: c, user: gke}}]\n"
        "clusters: [{name: c, cluster: {server: 'https://s'}}]\n"
        "users: [{name: gke, user: {auth-provider: {name: gcp}}}]\n");
    assert_load_fails(&opt, "user \"gke\" uses auth-provider", path);
}

static void test_missing_pieces_are_named(void **state)
{
    fixture *fx = *state;
    kc_options none = {0};
    assert_load_fails(&none, "no kubeconfig", NULL); /* empty HOME, no KUBECONFIG */
    put(fx, "kc", "clusters: [{name: c, cluster: {server: 'https://s'}}]\n");
    kubeconfig_env(fx, "$D/kc");
    assert_load_fails(&none, "no current context", "kc");
    kc_options ctx = {.context = "ghost"};
    assert_load_fails(&ctx, "context \"ghost\" not found", "/kc");
    put(fx, "kc", "current-context: x\ncontexts: [{name: x, context: {cluster: gone, user: u}}]\n");
    assert_load_fails(&none, "names cluster \"gone\"", "kc:2:");
    put(fx, "kc",
        "current-context: x\ncontexts: [{name: x, context: {cluster: c, user: gone}}]\n"
        "clusters: [{name: c, cluster: {server: 'https://s'}}]\n");
    assert_load_fails(&none, "names user \"gone\"", "kc:2:");
    put(fx, "kc",
        "current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
        "clusters: [{name: c, cluster: {insecure-skip-tls-verify: true}}]\n");
    assert_load_fails(&none, "cluster \"c\" has no server", "kc:3:");
    put(fx, "kc", "current-context: x\ncontexts: [{name: x, context: {cluster: c\n");
    assert_load_fails(&none, "/kc:", NULL); /* not YAML: located by the parser */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_two_files_first_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_of_the_list_matters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_and_empty_entries_are_skipped, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_context_and_namespace_flags, setup, teardown),
        cmocka_unit_test_setup_teardown(test_explicit_file_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_home_config_when_no_kubeconfig_variable, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_relative_paths_are_relative_to_their_file, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_data_and_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_what_kubectl_refuses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exec_and_auth_provider_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_pieces_are_named, setup, teardown),
    };
    return cmocka_run_group_tests_name("client_kubeconfig", tests, NULL, NULL);
}
