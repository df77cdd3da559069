/* Kubeconfig resolution, following client-go's clientcmd (loader.go,
 * client_config.go, validation.go) rule for rule:
 *
 * - The first file to set current-context wins; for a named cluster, user
 *   or context the whole entry of the first file that has the name wins
 *   (a later file's entry of that name is discarded, even its other keys).
 * - A name twice in one file's list makes that file unreadable, as the
 *   v1 -> internal conversion refuses it.
 * - Relative paths are resolved against the directory of the file that
 *   holds them, before any merging.
 * - Validation as ConfirmUsable does it: a file and inline data for the same
 *   certificate, insecure-skip-tls-verify with a CA, or a token with basic
 *   auth are errors.
 *
 * Where kubectl would fall back to http://localhost:8080 (no context, no
 * cluster, no server) we say what is missing instead. */
#include "client/kubeconfig.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/buf.h"
#include "util/file.h"
#include "util/i18n.h"
#include "util/yaml_json.h"

typedef struct {
    char *path;    /* as named */
    json_t *doc;   /* the document: an object, or NULL for an empty file */
    json_t *where; /* its positions */
} kc_file;

typedef struct {
    kc_file *files;
    size_t count;
    char *names; /* the files read, ':'-separated, for messages */
} kc_files;

/* A named entry's body (the "cluster", "user" or "context" object) and
 * where it is, for messages. */
typedef struct {
    const kc_file *file;
    json_t *body;
    char pointer[96]; /* "/clusters/2/cluster" */
} kc_entry;

/* ---- messages --------------------------------------------------------------- */

static void fail_at(gp_error *err, const kc_entry *at, const char *fmt, ...) GP_PRINTF(3, 4);
static void fail_at(gp_error *err, const kc_entry *at, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, _(fmt), ap);
    va_end(ap);
    unsigned line = 0, col = 0;
    if (at->file->where) gp_yaml_position(at->file->where, at->pointer, &line, &col);
    gp_error_set(err, at->file->path, line, col, "%s", msg);
}

static char *str_dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* ---- reading the files ------------------------------------------------------ */

static void files_free(kc_files *fs)
{
    for (size_t i = 0; i < fs->count; i++) {
        free(fs->files[i].path);
        json_decref(fs->files[i].doc);
        json_decref(fs->files[i].where);
    }
    free(fs->files);
    free(fs->names);
    memset(fs, 0, sizeof *fs);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The v1 lists as client-go converts them into maps: every entry an object
 * with a string name, no name twice. */
static int check_list(const kc_file *f, const char *list, gp_error *err)
{
    json_t *entries = json_object_get(f->doc, list);
    kc_entry at = {.file = f};
    snprintf(at.pointer, sizeof at.pointer, "/%s", list);
    if (!entries || json_is_null(entries)) return 0;
    if (!json_is_array(entries)) {
        fail_at(err, &at, "%s must be a list", list);
        return -1;
    }
    size_t i, j;
    json_t *e, *prior;
    json_array_foreach(entries, i, e)
    {
        snprintf(at.pointer, sizeof at.pointer, "/%s/%zu", list, i);
        const char *name = json_string_value(json_object_get(e, "name"));
        if (!json_is_object(e) || !name) {
            fail_at(err, &at, "every entry of %s must be a mapping with a name", list);
            return -1;
        }
        json_array_foreach(entries, j, prior)
        {
            if (j >= i) break;
            if (strcmp(json_string_value(json_object_get(prior, "name")), name) == 0) {
                fail_at(err, &at, "duplicate name \"%s\" in %s", name, list);
                return -1;
            }
        }
    }
    return 0;
}

static int load_one(kc_file *f, gp_error *err)
{
    json_t *docs = NULL, *where = NULL;
    if (gp_yaml_load_file(f->path, &docs, &where, err) != 0) return -1;
    json_t *doc = json_array_get(docs, 0);
    if (doc && !json_is_null(doc)) {
        f->doc = json_incref(doc);
        f->where = json_incref(json_array_get(where, 0));
    }
    json_decref(docs);
    json_decref(where);
    kc_entry at = {.file = f, .pointer = ""};
    if (f->doc && !json_is_object(f->doc)) {
        fail_at(err, &at, "not a kubeconfig: the document is not a mapping");
        return -1;
    }
    json_t *cc = json_object_get(f->doc, "current-context");
    if (cc && !json_is_string(cc) && !json_is_null(cc)) {
        snprintf(at.pointer, sizeof at.pointer, "/current-context");
        fail_at(err, &at, "current-context must be a string (quote it)");
        return -1;
    }
    if (check_list(f, "clusters", err) || check_list(f, "users", err) ||
        check_list(f, "contexts", err))
        return -1;
    return 0;
}

static int add_file(kc_files *fs, const char *path, size_t len, gp_error *err)
{
    for (size_t i = 0; i < fs->count; i++) /* client-go deduplicates the list */
        if (strlen(fs->files[i].path) == len && strncmp(fs->files[i].path, path, len) == 0)
            return 0;
    kc_file *grown = realloc(fs->files, (fs->count + 1) * sizeof *grown);
    if (!grown) goto oom;
    fs->files = grown;
    kc_file *f = &fs->files[fs->count];
    memset(f, 0, sizeof *f);
    if (!(f->path = str_dup_n(path, len))) goto oom;
    fs->count++;
    return load_one(f, err);
oom:
    gp_error_set(err, NULL, 0, 0, "out of memory");
    return -1;
}

/* Which files, in order of precedence. */
static int read_files(const kc_options *opt, kc_files *fs, gp_error *err)
{
    if (opt && opt->kubeconfig) {
        if (!exists(opt->kubeconfig)) {
            gp_error_set(err, opt->kubeconfig, 0, 0, "cannot read the kubeconfig: %s",
                         strerror(errno));
            return -1;
        }
        return add_file(fs, opt->kubeconfig, strlen(opt->kubeconfig), err);
    }
    const char *env = getenv("KUBECONFIG");
    if (env && env[0]) {
        for (const char *p = env; *p;) {
            size_t n = strcspn(p, ":");
            char *one = str_dup_n(p, n);
            if (!one) {
                gp_error_set(err, NULL, 0, 0, "out of memory");
                return -1;
            }
            int rc = n > 0 && exists(one) ? add_file(fs, p, n, err) : 0; /* missing: skipped */
            free(one);
            if (rc != 0) return -1;
            p += n + (p[n] == ':');
        }
        return 0;
    }
    const char *home = getenv("HOME");
    if (!home || !home[0]) return 0;
    size_t n = strlen(home) + sizeof "/.kube/config";
    char *path = malloc(n);
    if (!path) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    snprintf(path, n, "%s/.kube/config", home);
    int rc = exists(path) ? add_file(fs, path, strlen(path), err) : 0;
    free(path);
    return rc;
}

static int join_names(kc_files *fs)
{
    gp_buf b = {0};
    for (size_t i = 0; i < fs->count; i++) {
        if (i) gp_buf_addc(&b, ':');
        gp_buf_add(&b, fs->files[i].path);
    }
    fs->names = gp_buf_take(&b);
    return fs->names ? 0 : -1;
}

/* ---- finding entries -------------------------------------------------------- */

/* The first file's entry named `name` in `list`; its body is the `field`
 * member (an absent one reads as empty). */
static bool find_entry(const kc_files *fs, const char *list, const char *field, const char *name,
                       kc_entry *out)
{
    for (size_t f = 0; f < fs->count; f++) {
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(fs->files[f].doc, list), i, e)
        {
            if (strcmp(json_string_value(json_object_get(e, "name")), name) != 0) continue;
            out->file = &fs->files[f];
            out->body = json_object_get(e, field);
            snprintf(out->pointer, sizeof out->pointer, "/%s/%zu/%s", list, i, field);
            return true;
        }
    }
    return false;
}

static const char *current_context(const kc_files *fs)
{
    for (size_t f = 0; f < fs->count; f++) {
        const char *cc = json_string_value(json_object_get(fs->files[f].doc, "current-context"));
        if (cc && cc[0]) return cc;
    }
    return NULL;
}

/* ---- reading one entry's fields --------------------------------------------- */

/* `at` names e's member `key` (or e itself, should the pointer not fit). */
static void point_at(kc_entry *at, const kc_entry *e, const char *key)
{
    *at = *e;
    int n = snprintf(at->pointer, sizeof at->pointer, "%s/%s", e->pointer, key);
    if (n < 0 || (size_t)n >= sizeof at->pointer) *at = *e;
}

/* A string member: *out is it, or NULL when absent, null or "". A value of
 * another type is an error at that member. */
static int get_str(const kc_entry *e, const char *key, const char **out, gp_error *err)
{
    json_t *v = json_object_get(e->body, key);
    *out = NULL;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_string(v)) {
        kc_entry at;
        point_at(&at, e, key);
        fail_at(err, &at, "%s must be a string", key);
        return -1;
    }
    if (json_string_length(v) > 0) *out = json_string_value(v);
    return 0;
}

static int get_bool(const kc_entry *e, const char *key, bool *out, gp_error *err)
{
    json_t *v = json_object_get(e->body, key);
    *out = false;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_boolean(v)) {
        kc_entry at;
        point_at(&at, e, key);
        fail_at(err, &at, "%s must be true or false", key);
        return -1;
    }
    *out = json_is_true(v);
    return 0;
}

/* Standard base64 as Go's encoding/json reads []byte: padding required,
 * line breaks ignored. */
static char *base64_decode(const char *in, size_t *len)
{
    size_t n = strlen(in);
    char *out = malloc(n / 4 * 3 + 4);
    if (!out) return NULL;
    unsigned acc = 0, bits = 0, seen = 0, pad = 0;
    size_t o = 0;
    for (const char *p = in; *p; p++) {
        if (*p == '\r' || *p == '\n') continue;
        seen++;
        if (*p == '=') {
            pad++;
            continue;
        }
        const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const char *hit = strchr(alphabet, *p);
        if (!hit || pad) goto bad;
        acc = (acc << 6) | (unsigned)(hit - alphabet);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    if (seen % 4 != 0 || pad > 2) goto bad;
    out[o] = '\0';
    *len = o;
    return out;
bad:
    free(out);
    return NULL;
}

/* A path as the file that names it means it: relative to its directory. */
static char *resolve_path(const kc_file *f, const char *path)
{
    if (path[0] == '/') return strdup(path);
    const char *slash = strrchr(f->path, '/');
    if (!slash) return strdup(path);
    size_t dir = (size_t)(slash - f->path);
    size_t n = dir + 1 + strlen(path) + 1;
    char *full = malloc(n);
    if (full) snprintf(full, n, "%.*s/%s", (int)dir, f->path, path);
    return full;
}

/* One PEM (or token) from `file_key` (a path) or `data_key` (base64). Both
 * set is an error, as client-go's validation makes it. */
static int read_material(const kc_entry *e, const char *file_key, const char *data_key,
                         const char *owner, char **out, size_t *len, gp_error *err)
{
    const char *path, *data;
    *out = NULL;
    *len = 0;
    if (get_str(e, file_key, &path, err) || get_str(e, data_key, &data, err)) return -1;
    if (path && data) {
        fail_at(err, e, "%s and %s are both specified for %s", data_key, file_key, owner);
        return -1;
    }
    if (data) {
        if ((*out = base64_decode(data, len))) return 0;
        kc_entry at;
        point_at(&at, e, data_key);
        fail_at(err, &at, "%s of %s is not valid base64", data_key, owner);
        return -1;
    }
    if (!path) return 0;
    char *full = resolve_path(e->file, path);
    gp_error why;
    *out = full ? gp_read_file(full, len, &why) : NULL;
    if (!*out) {
        kc_entry at;
        point_at(&at, e, file_key);
        fail_at(err, &at, "unable to read %s %s for %s: %s", file_key, full ? full : path, owner,
                full ? why.text : "out of memory");
    }
    free(full);
    return *out ? 0 : -1;
}

/* ---- the cluster and the user ----------------------------------------------- */

static int load_cluster(const kc_entry *e, const char *name, kc_config *c, gp_error *err)
{
    const char *server, *sni;
    char owner[300];
    snprintf(owner, sizeof owner, "cluster \"%s\"", name);
    if (get_str(e, "server", &server, err) || get_str(e, "tls-server-name", &sni, err) ||
        get_bool(e, "insecure-skip-tls-verify", &c->insecure_skip_tls_verify, err))
        return -1;
    if (!server) {
        fail_at(err, e, "cluster \"%s\" has no server", name);
        return -1;
    }
    /* proxy-url is read by kubectl; we connect directly (or through curl's
     * https_proxy) and do not fail a config that names one. */
    if (read_material(e, "certificate-authority", "certificate-authority-data", owner, &c->ca_pem,
                      &c->ca_pem_len, err) != 0)
        return -1;
    if (c->insecure_skip_tls_verify && c->ca_pem) {
        fail_at(err, e,
                "cluster \"%s\": specifying a root certificates file with the insecure flag is "
                "not allowed",
                name);
        return -1;
    }
    size_t n = strlen(server);
    while (n > 0 && server[n - 1] == '/')
        n--;
    c->server = str_dup_n(server, n);
    if (sni) c->tls_server_name = strdup(sni);
    return 0;
}

/* tokenFile, when readable, wins over token: client-go reads the file for
 * each request and falls back to token only when it cannot. */
static int load_token(const kc_entry *e, const char *owner, kc_config *c, gp_error *err)
{
    const char *token, *file;
    if (get_str(e, "token", &token, err) || get_str(e, "tokenFile", &file, err)) return -1;
    if (file) {
        char *full = resolve_path(e->file, file);
        gp_error why;
        size_t len = 0;
        char *text = full ? gp_read_file(full, &len, &why) : NULL;
        if (!text && !token) {
            kc_entry at;
            point_at(&at, e, "tokenFile");
            fail_at(err, &at, "unable to read tokenFile %s for %s: %s", full ? full : file, owner,
                    full ? why.text : "out of memory");
            free(full);
            return -1;
        }
        free(full);
        if (text) {
            const char *s = text;
            while (len > 0 && strchr(" \t\r\n", text[len - 1]))
                len--;
            while (len > 0 && strchr(" \t\r\n", *s))
                s++, len--;
            c->token = str_dup_n(s, len);
            free(text);
            return 0;
        }
    }
    if (token) c->token = strdup(token);
    return 0;
}

static int load_user(const kc_entry *e, const char *name, kc_config *c, gp_error *err)
{
    char owner[300];
    snprintf(owner, sizeof owner, "user \"%s\"", name);
    static const char *const unsupported[] = {"exec",      "auth-provider", "as",
                                              "as-groups", "as-uid",        "as-user-extra"};
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        json_t *v = json_object_get(e->body, unsupported[i]);
        if (!v || json_is_null(v)) continue;
        fail_at(err, e,
                "user \"%s\" uses %s, which gpuop does not support: give it a token or a client "
                "certificate, or use kubectl",
                name, unsupported[i]);
        return -1;
    }
    if (load_token(e, owner, c, err) != 0) return -1;
    const char *user, *password;
    if (get_str(e, "username", &user, err) || get_str(e, "password", &password, err)) return -1;
    if (c->token && (user || password)) {
        fail_at(err, e,
                "more than one authentication method found for %s; found [token basicAuth], only "
                "one is allowed",
                name);
        return -1;
    }
    if (user) c->username = strdup(user);
    if (password) c->password = strdup(password);
    if (read_material(e, "client-certificate", "client-certificate-data", owner, &c->cert_pem,
                      &c->cert_pem_len, err) ||
        read_material(e, "client-key", "client-key-data", owner, &c->key_pem, &c->key_pem_len, err))
        return -1;
    if (c->cert_pem && !c->key_pem) {
        fail_at(err, e,
                "client-key-data or client-key must be specified for %s to use the clientCert "
                "authentication method",
                name);
        return -1;
    }
    return 0;
}

/* ---- putting it together ---------------------------------------------------- */

static int resolve(const kc_options *opt, const kc_files *fs, kc_config *c, gp_error *err)
{
    const char *ctx = opt && opt->context ? opt->context : current_context(fs);
    if (!ctx) {
        gp_error_set(err, NULL, 0, 0,
                     "no current context in %s: use --context or set current-context", fs->names);
        return -1;
    }
    kc_entry ce;
    if (!find_entry(fs, "contexts", "context", ctx, &ce)) {
        gp_error_set(err, NULL, 0, 0, "context \"%s\" not found in %s", ctx, fs->names);
        return -1;
    }
    c->context_name = strdup(ctx);
    c->source = strdup(ce.file->path);
    const char *cluster, *user, *ns;
    if (get_str(&ce, "cluster", &cluster, err) || get_str(&ce, "user", &user, err) ||
        get_str(&ce, "namespace", &ns, err))
        return -1;
    if (!cluster) {
        fail_at(err, &ce, "context \"%s\" names no cluster", ctx);
        return -1;
    }
    kc_entry e;
    if (!find_entry(fs, "clusters", "cluster", cluster, &e)) {
        fail_at(err, &ce, "context \"%s\" names cluster \"%s\", which is not in %s", ctx, cluster,
                fs->names);
        return -1;
    }
    c->cluster_name = strdup(cluster);
    if (load_cluster(&e, cluster, c, err) != 0) return -1;
    if (user) {
        if (!find_entry(fs, "users", "user", user, &e)) {
            fail_at(err, &ce, "context \"%s\" names user \"%s\", which is not in %s", ctx, user,
                    fs->names);
            return -1;
        }
        c->user_name = strdup(user);
        if (load_user(&e, user, c, err) != 0) return -1;
    }
    const char *chosen = opt && opt->nspace ? opt->nspace : ns ? ns : "default";
    c->nspace = strdup(chosen);
    c->timeout_ms = opt && opt->timeout_ms > 0 ? opt->timeout_ms : 30000;
    return 0;
}

int kc_config_load(const kc_options *opt, kc_config **out, gp_error *err)
{
    *out = NULL;
    kc_files fs = {0};
    kc_config *c = calloc(1, sizeof *c);
    int rc = -1;
    if (!c) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    if (read_files(opt, &fs, err) != 0) goto out;
    if (fs.count == 0) {
        gp_error_set(err, NULL, 0, 0,
                     "no kubeconfig: set --kubeconfig or KUBECONFIG, or create ~/.kube/config");
        goto out;
    }
    if (join_names(&fs) != 0) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        goto out;
    }
    if (resolve(opt, &fs, c, err) != 0) goto out;
    if (!c->context_name || !c->source || !c->cluster_name || !c->server || !c->nspace) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        goto out;
    }
    *out = c;
    c = NULL;
    rc = 0;
out:
    kc_config_free(c);
    files_free(&fs);
    return rc;
}

void kc_config_free(kc_config *c)
{
    if (!c) return;
    free(c->context_name);
    free(c->cluster_name);
    free(c->user_name);
    free(c->server);
    free(c->nspace);
    free(c->ca_pem);
    free(c->cert_pem);
    free(c->key_pem);
    free(c->token);
    free(c->username);
    free(c->password);
    free(c->tls_server_name);
    free(c->source);
    free(c);
}
