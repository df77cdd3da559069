/* The NVIDIA Container Toolkit's container on a simulated node (toolkit.h). */
#define _GNU_SOURCE /* O_NOFOLLOW, unlinkat */
#include "agents/toolkit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/agents_internal.h"
#include "agents/daemon.h"
#include "kube/json.h"
#include "toml/toml.h"
#include "toml/toml_json.h"
#include "util/file.h"

#define MAIN_DIR     "etc/containerd"
#define MAIN_NAME    "config.toml"
#define DROPIN_DIR   "etc/containerd/conf.d"
#define DROPIN_GLOB  "/etc/containerd/conf.d/*.toml"
#define DROPIN_SHOWN "/etc/containerd/conf.d/" AG_TOOLKIT_DROPIN
#define MAIN_SHOWN   "/etc/containerd/config.toml"

/* ---- the container ---- */

static const char *env_of(const json_t *container, const char *name)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(container, "env"), i, e)
    {
        if (kube_str_is(e, "name", name)) return kube_str_or_null(e, "value");
    }
    return NULL;
}

static bool version_at_least(const ag_toolkit *t, int major, int minor, int patch)
{
    const int want[3] = {major, minor, patch};
    for (int i = 0; i < 3; i++)
        if (t->version[i] != want[i]) return t->version[i] > want[i];
    return true;
}

bool ag_toolkit_edits_main(const ag_toolkit *t)
{
    return !version_at_least(t, 1, 18, 0);
}

/* "v1.17.0", "1.16.2-ubi8", "v1.18.0-rc.5": the first three numbers. */
static int parse_tag(const char *tag, int version[3])
{
    const char *p = tag[0] == 'v' ? tag + 1 : tag;
    for (int i = 0; i < 3; i++) {
        char *end;
        long n = strtol(p, &end, 10);
        if (end == p || n < 0 || n > 9999 || (i < 2 && *end != '.')) return -1;
        version[i] = (int)n;
        p = end + (i < 2);
    }
    return 0;
}

static bool truthy(const char *v, bool fallback)
{
    if (!v || !*v) return fallback;
    return strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcmp(v, "True") == 0;
}

static int read_container(const json_t *c, const char *tag, ag_toolkit *t, gp_error *err)
{
    memset(t, 0, sizeof *t);
    snprintf(t->container, sizeof t->container, "%s", kube_str(c, "name"));
    snprintf(t->tag, sizeof t->tag, "%s", tag);
    if (parse_tag(tag, t->version) != 0) {
        gp_error_set(err, NULL, 0, 0,
                     "container %s: image tag '%s' names no toolkit version (vMAJOR.MINOR.PATCH)",
                     t->container, tag);
        return -1;
    }
    const char *variant = env_of(c, AG_TOOLKIT_VARIANT_ENV);
    if (variant && *variant) {
        if (strcmp(variant, "bare-dropin") != 0) {
            gp_error_set(err, NULL, 0, 0,
                         "container %s: %s='%s' is not a variant gpuop knows (bare-dropin)",
                         t->container, AG_TOOLKIT_VARIANT_ENV, variant);
            return -1;
        }
        t->bare_dropin = true;
    }
    const char *mode = env_of(c, "RUNTIME_RESTART_MODE");
    if (!mode && !version_at_least(t, 1, 17, 0)) mode = env_of(c, "CONTAINERD_RESTART_MODE");
    if (!mode || !*mode || strcmp(mode, "signal") == 0) {
        t->restart = AG_TOOLKIT_RESTART_SIGNAL;
    } else if (strcmp(mode, "systemd") == 0) {
        t->restart = AG_TOOLKIT_RESTART_SYSTEMD;
    } else if (strcmp(mode, "none") == 0) {
        t->restart = AG_TOOLKIT_RESTART_NONE;
    } else {
        gp_error_set(err, NULL, 0, 0,
                     "container %s: RUNTIME_RESTART_MODE '%s' is not signal, systemd or none",
                     t->container, mode);
        return -1;
    }
    const char *name = env_of(c, "NVIDIA_RUNTIME_NAME");
    if (!name || !*name) name = env_of(c, "CONTAINERD_RUNTIME_CLASS");
    snprintf(t->runtime, sizeof t->runtime, "%s", name && *name ? name : "nvidia");
    const char *def = env_of(c, "NVIDIA_RUNTIME_SET_AS_DEFAULT");
    if (!def || !*def) def = env_of(c, "CONTAINERD_SET_AS_DEFAULT");
    t->set_as_default = truthy(def, true);
    t->cdi = truthy(env_of(c, "CDI_ENABLED"), false);
    const char *source = env_of(c, "RUNTIME_CONFIG_SOURCE");
    t->from_command = !source || !*source || strncmp(source, "command", 7) == 0;
    const char *root = env_of(c, "TOOLKIT_INSTALL_DIR");
    snprintf(t->root, sizeof t->root, "%s/toolkit", root && *root ? root : "/usr/local/nvidia");
    return 0;
}

int ag_toolkit_from_pod(const json_t *pod, ag_toolkit *t, gp_error *err)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(kube_obj(pod, "spec"), "containers"), i, c)
    {
        const char *image = kube_str(c, "image");
        size_t n = strlen(AG_TOOLKIT_IMAGE);
        if (strncmp(image, AG_TOOLKIT_IMAGE, n) != 0 || (image[n] != ':' && image[n] != '@'))
            continue;
        if (image[n] == '@') {
            gp_error_set(err, NULL, 0, 0,
                         "container %s: image %s has no tag naming the toolkit's version",
                         kube_str(c, "name"), image);
            return -1;
        }
        return read_container(c, image + n + 1, t, err) == 0 ? 1 : -1;
    }
    return 0;
}

/* ---- files beneath the node's root ---- */

/* The file's text (NULL with *exists false when it is not there). */
static char *read_at(int dirfd, const char *name, const char *shown, size_t *len, bool *exists,
                     gp_error *err)
{
    *exists = false;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return NULL;
        gp_error_set(err, shown, 0, 0, "cannot open: %s", strerror(errno));
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        gp_error_set(err, shown, 0, 0, "cannot open: %s", strerror(errno));
        return NULL;
    }
    char *text = gp_read_stream(f, shown, len, err);
    fclose(f);
    *exists = text != NULL;
    return text;
}

/* A TOML file's text as JSON ({} when empty). */
static json_t *toml_as_json(const char *text, size_t len, const char *shown, gp_error *err)
{
    toml_doc *doc = toml_parse(text ? text : "", text ? len : 0, shown, err);
    if (!doc) return NULL;
    toml_value root = {.type = TOML_TABLE, .u.table = (toml_table *)toml_root(doc)};
    char *out = NULL;
    size_t out_len = 0;
    FILE *f = open_memstream(&out, &out_len);
    int rc = f ? toml_write_json(&root, TOML_JSON_PLAIN, f) : -1;
    if (f && fclose(f) != 0) rc = -1;
    toml_free(doc);
    json_error_t jerr;
    json_t *j = rc == 0 ? json_loadb(out, out_len, 0, &jerr) : NULL;
    free(out);
    if (!j) gp_error_set(err, shown, 0, 0, "out of memory");
    return j;
}

static char *as_toml(const json_t *doc, size_t *len, gp_error *err)
{
    char *out = NULL;
    *len = 0;
    FILE *f = open_memstream(&out, len);
    if (!f) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    int rc = toml_emit_json(doc, f, err);
    if (fclose(f) != 0 && rc == 0) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        rc = -1;
    }
    if (rc == 0) return out;
    free(out);
    return NULL;
}

/* Replaces (or creates) the file with text, keeping a backup of different
 * old bytes. 0 when it already held them, 1 when written, -1 with err. */
static int replace_at(int dirfd, const char *name, const char *shown, const char *text, size_t len,
                      gp_error *err)
{
    size_t old_len;
    bool exists;
    gp_error rerr = {0};
    char *old = read_at(dirfd, name, shown, &old_len, &exists, &rerr);
    if (!exists && rerr.text[0]) {
        *err = rerr;
        return -1;
    }
    if (exists && old_len == len && memcmp(old, text, len) == 0) {
        free(old);
        return 0;
    }
    if (exists) {
        char *backup = gp_write_backup_at(dirfd, name, shown, old, old_len, 0644, err);
        free(old);
        if (!backup) return -1;
        free(backup);
    }
    return gp_write_atomic_at(dirfd, name, shown, text, len, 0644, err) == 0 ? 1 : -1;
}

/* Removes the file, its bytes kept as a backup first. 0 when it was not
 * there, 1 when removed. */
static int remove_at(int dirfd, const char *name, const char *shown, gp_error *err)
{
    size_t len;
    bool exists;
    char *old = read_at(dirfd, name, shown, &len, &exists, err);
    if (!exists) return err->text[0] ? -1 : 0;
    char *backup = gp_write_backup_at(dirfd, name, shown, old, len, 0644, err);
    free(old);
    if (!backup) return -1;
    free(backup);
    if (unlinkat(dirfd, name, 0) != 0) {
        gp_error_set(err, shown, 0, 0, "cannot remove: %s", strerror(errno));
        return -1;
    }
    return 1;
}

/* ---- the config ---- */

static const char *cri_id(json_int_t version)
{
    return version <= 1   ? "cri"
           : version == 2 ? "io.containerd.grpc.v1.cri"
                          : "io.containerd.cri.v1.runtime";
}

/* A config's version as the toolkit reads it: the key, else 1 for a file
 * with anything in it, 2 for an empty one (3.2). */
static json_int_t config_version(const json_t *config)
{
    const json_t *v = json_object_get(config, "version");
    if (json_is_integer(v)) return json_integer_value(v);
    return json_object_size(config) ? 1 : 2;
}

static json_t *child(json_t *obj, const char *key)
{
    json_t *c = json_object_get(obj, key);
    if (json_is_object(c)) return c;
    c = json_object();
    if (json_object_set_new(obj, key, c) != 0) return NULL;
    return c;
}

/* The runtime table the nvidia ones are copied from (3.2). */
static json_t *base_runtime(const json_t *runtimes, const char *def, gp_buf *log)
{
    const char *order[3] = {def && strncmp(def, "nvidia", 6) != 0 ? def : NULL, "runc", "crun"};
    for (int i = 0; i < 3; i++) {
        const json_t *rt = order[i] ? json_object_get(runtimes, order[i]) : NULL;
        if (json_is_object(rt)) return json_deep_copy(rt);
    }
    gp_buf_addf(log, "Could not infer options from runtimes [%s runc crun]; using defaults\n",
                def ? def : "");
    return json_pack("{s:s, s:s, s:s, s:b}", "runtime_type", "io.containerd.runc.v2",
                     "runtime_root", "", "runtime_engine", "", "privileged_without_host_devices",
                     0);
}

static int add_runtimes(json_t *cri, const ag_toolkit *t, json_int_t version, gp_buf *log)
{
    json_t *containerd = child(cri, "containerd");
    json_t *runtimes = containerd ? child(containerd, "runtimes") : NULL;
    if (!runtimes) return -1;
    const char *def = kube_str_or_null(containerd, "default_runtime_name");
    static const char *const suffixes[][2] = {{"", ""}, {"-cdi", ".cdi"}, {"-legacy", ".legacy"}};
    for (size_t i = 0; i < 3; i++) {
        json_t *rt = base_runtime(runtimes, def, log);
        json_t *options = rt ? child(rt, "options") : NULL;
        if (!options) {
            json_decref(rt);
            return -1;
        }
        char name[128], binary[400];
        snprintf(name, sizeof name, "%s%s", t->runtime, suffixes[i][0]);
        snprintf(binary, sizeof binary, "%s/nvidia-container-runtime%s", t->root, suffixes[i][1]);
        json_object_set_new(options, "BinaryName", json_string(binary));
        if (version == 1) json_object_set_new(options, "Runtime", json_string(binary));
        if (json_object_set_new(runtimes, name, rt) != 0) return -1;
    }
    if (t->set_as_default)
        json_object_set_new(containerd, "default_runtime_name", json_string(t->runtime));
    else if (def && strcmp(def, t->runtime) == 0 && version_at_least(t, 1, 18, 0))
        json_object_del(containerd, "default_runtime_name");
    if (t->cdi) json_object_set_new(cri, "enable_cdi", json_true());
    return 0;
}

/* Takes out what add_runtimes put in (RemoveRuntime), then tables it left
 * empty. */
static void remove_runtimes(json_t *config, json_int_t version, const ag_toolkit *t)
{
    json_t *plugins = json_object_get(config, "plugins");
    json_t *cri = json_object_get(plugins, cri_id(version));
    json_t *containerd = json_object_get(cri, "containerd");
    json_t *runtimes = json_object_get(containerd, "runtimes");
    static const char *const suffixes[] = {"", "-cdi", "-legacy"};
    for (size_t i = 0; i < 3; i++) {
        char name[128];
        snprintf(name, sizeof name, "%s%s", t->runtime, suffixes[i]);
        json_object_del(runtimes, name);
    }
    if (kube_str_is(containerd, "default_runtime_name", t->runtime))
        json_object_del(containerd, "default_runtime_name");
    if (runtimes && json_object_size(runtimes) == 0) json_object_del(containerd, "runtimes");
    if (containerd && json_object_size(containerd) == 0) json_object_del(cri, "containerd");
    if (cri && json_object_size(cri) == 0) json_object_del(plugins, cri_id(version));
    if (plugins && json_object_size(plugins) == 0) json_object_del(config, "plugins");
}

static int write_json(int dirfd, const char *name, const char *shown, const json_t *doc,
                      gp_buf *log, gp_error *err)
{
    size_t len;
    char *text = as_toml(doc, &len, err);
    if (!text) return -1;
    int rc = replace_at(dirfd, name, shown, text, len, err);
    free(text);
    if (rc > 0) gp_buf_addf(log, "Wrote updated config to %s\n", shown);
    return rc < 0 ? -1 : 0;
}

/* The drop-in's source: `containerd config dump` (the prediction) or the
 * main file; *version its version. A new reference. */
static json_t *source_config(const char *dir, const ag_toolkit *t, const ag_node_state *st,
                             const json_t *main_config, json_int_t *version, gp_error *err)
{
    if (!t->from_command) {
        *version = config_version(main_config);
        return json_deep_copy(main_config);
    }
    cd_prediction *p = ag_node_predict(dir, st, err);
    if (!p) return NULL;
    json_t *dump = ag_prediction_config(p);
    cd_prediction_free(p);
    if (!dump) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    /* the dump prints the binary's highest version (4.4) */
    *version = cd_is_v1(st->family) ? 2 : 3;
    return dump;
}

static bool has_string(const json_t *array, const char *s)
{
    size_t i;
    const json_t *v;
    json_array_foreach(array, i, v) if (json_is_string(v) &&
                                        strcmp(json_string_value(v), s) == 0) return true;
    return false;
}

int ag_toolkit_setup(const char *dir, const ag_toolkit *t, const ag_node_state *st, gp_buf *log,
                     gp_error *err)
{
    int main_fd = gp_open_beneath(dir, MAIN_DIR, true, 0755, err);
    if (main_fd < 0) return -1;
    int dropin_fd = gp_open_beneath(dir, DROPIN_DIR, true, 0755, err);
    if (dropin_fd < 0) {
        close(main_fd);
        return -1;
    }
    int rc = -1;
    json_t *config = NULL, *source = NULL, *dropin = NULL;
    if (t->bare_dropin) {
        rc = replace_at(dropin_fd, AG_TOOLKIT_DROPIN, DROPIN_SHOWN, ag_bare_dropin,
                        ag_bare_dropin_len, err);
        if (rc > 0) gp_buf_addf(log, "Wrote updated config to %s\n", DROPIN_SHOWN);
        rc = rc < 0 ? -1 : 0;
        goto done;
    }
    size_t len;
    bool exists;
    char *text = read_at(main_fd, MAIN_NAME, MAIN_SHOWN, &len, &exists, err);
    if (!exists && err->text[0]) goto done;
    config = toml_as_json(text, len, MAIN_SHOWN, err);
    free(text);
    if (!config) goto done;
    json_int_t version = config_version(config);
    if (version == 3 && !version_at_least(t, 1, 17, 4)) {
        gp_error_set(err, NULL, 0, 0, "unable to load config: unsupported config version: 3");
        goto done;
    }
    if (ag_toolkit_edits_main(t) || version == 1) {
        json_t *plugins = child(config, "plugins");
        json_t *cri = plugins ? child(plugins, cri_id(version)) : NULL;
        if (!cri || add_runtimes(cri, t, version, log) != 0) goto oom;
        rc = ag_toolkit_edits_main(t)
                 ? write_json(main_fd, MAIN_NAME, MAIN_SHOWN, config, log, err)
                 : write_json(dropin_fd, AG_TOOLKIT_DROPIN, DROPIN_SHOWN, config, log, err);
        goto done;
    }
    json_int_t src_version;
    source = source_config(dir, t, st, config, &src_version, err);
    if (!source) goto done;
    json_t *cri = json_object_get(json_object_get(source, "plugins"), cri_id(src_version));
    cri = json_is_object(cri) ? json_deep_copy(cri) : json_object();
    dropin =
        json_pack("{s:I, s:{s:o}}", "version", src_version, "plugins", cri_id(src_version), cri);
    if (!dropin || add_runtimes(cri, t, src_version, log) != 0) goto oom;
    if (write_json(dropin_fd, AG_TOOLKIT_DROPIN, DROPIN_SHOWN, dropin, log, err) != 0) goto done;
    /* the main file imports the drop-ins (v1.18.0 replaced what it had) */
    bool created = !json_object_size(config);
    json_t *imports = json_object_get(config, "imports");
    if (!version_at_least(t, 1, 18, 1) || !json_is_array(imports)) {
        imports = json_array();
        json_object_set_new(config, "imports", imports);
    }
    if (!has_string(imports, DROPIN_GLOB)) json_array_append_new(imports, json_string(DROPIN_GLOB));
    if (created) json_object_set_new(config, "version", json_integer(src_version));
    rc = write_json(main_fd, MAIN_NAME, MAIN_SHOWN, config, log, err);
    goto done;
oom:
    gp_error_set(err, NULL, 0, 0, "out of memory");
done:
    json_decref(config);
    json_decref(source);
    json_decref(dropin);
    close(main_fd);
    close(dropin_fd);
    return rc;
}

int ag_toolkit_cleanup(const char *dir, const ag_toolkit *t, gp_buf *log, gp_error *err)
{
    int main_fd = gp_open_beneath(dir, MAIN_DIR, true, 0755, err);
    if (main_fd < 0) return -1;
    int dropin_fd = gp_open_beneath(dir, DROPIN_DIR, true, 0755, err);
    if (dropin_fd < 0) {
        close(main_fd);
        return -1;
    }
    int rc = -1;
    size_t len;
    bool exists;
    char *text = read_at(main_fd, MAIN_NAME, MAIN_SHOWN, &len, &exists, err);
    json_t *config = NULL;
    if (!exists && err->text[0]) goto done;
    config = toml_as_json(text, len, MAIN_SHOWN, err);
    free(text);
    if (!config) goto done;
    json_int_t version = config_version(config);
    if (!t->bare_dropin && ag_toolkit_edits_main(t)) {
        remove_runtimes(config, version, t);
        rc = exists ? write_json(main_fd, MAIN_NAME, MAIN_SHOWN, config, log, err) : 0;
        goto done;
    }
    int removed = remove_at(dropin_fd, AG_TOOLKIT_DROPIN, DROPIN_SHOWN, err);
    if (removed < 0) goto done;
    if (removed) gp_buf_addf(log, "Removed %s\n", DROPIN_SHOWN);
    rc = 0;
    if (t->bare_dropin) goto done;
    /* the imports line goes only with a file that holds nothing else */
    const json_t *imports = json_object_get(config, "imports");
    bool only = json_array_size(imports) == 1 && has_string(imports, DROPIN_GLOB) &&
                json_object_size(config) == (json_object_get(config, "version") ? 2u : 1u);
    if (only) {
        int r = remove_at(main_fd, MAIN_NAME, MAIN_SHOWN, err);
        if (r < 0) rc = -1;
        if (r > 0) gp_buf_addf(log, "Removed %s\n", MAIN_SHOWN);
    }
done:
    json_decref(config);
    close(main_fd);
    close(dropin_fd);
    return rc;
}
