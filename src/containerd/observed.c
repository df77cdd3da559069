/* realpath() is XSI. */
#define _XOPEN_SOURCE 700
#include "containerd/observed.h"

#include <ctype.h>
#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "containerd/containerd.h"
#include "toml/toml.h"
#include "util/file.h"

/* ---- names ---- */

bool cd_runtime_name_valid(const char *name)
{
    if (!name || !*name || strlen(name) > 253) return false;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' && *p != '-') return false;
    return true;
}

void cd_names_free(cd_names *names)
{
    for (size_t i = 0; i < names->n; i++)
        free(names->items[i]);
    free(names->items);
    names->items = NULL;
    names->n = 0;
}

bool cd_names_contains(const cd_names *names, const char *name)
{
    for (size_t i = 0; i < names->n; i++)
        if (strcmp(names->items[i], name) == 0) return true;
    return false;
}

int cd_names_add(cd_names *names, const char *name, size_t len)
{
    char **items = realloc(names->items, (names->n + 1) * sizeof *items);
    if (!items) return -1;
    names->items = items;
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, name, len);
    copy[len] = '\0';
    items[names->n++] = copy;
    return 0;
}

/* ---- `containerd config dump` ---- */

#define CRI_V1_SHORT "cri"
#define CRI_V2       "io.containerd.grpc.v1.cri"
#define CRI_V3       "io.containerd.cri.v1.runtime"

static const toml_table *subtable(const toml_table *t, const char *key)
{
    const toml_value *v = t ? toml_table_get(t, key) : NULL;
    return v && v->type == TOML_TABLE ? v->u.table : NULL;
}

static const char *string_at(const toml_table *t, const char *key)
{
    const toml_value *v = t ? toml_table_get(t, key) : NULL;
    return v && v->type == TOML_STRING ? v->u.s : NULL;
}

static bool array_has_string(const toml_table *t, const char *key, const char *s)
{
    const toml_value *v = toml_table_get(t, key);
    if (!v || v->type != TOML_ARRAY) return false;
    for (size_t i = 0; i < toml_array_size(v->u.array); i++) {
        const toml_value *e = toml_array_at(v->u.array, i);
        if (e->type == TOML_STRING && strcmp(e->u.s, s) == 0) return true;
    }
    return false;
}

/* Which plugin holds the runtimes follows the dump's version, as in the
 * daemon: a 2.x binary ignores runtimes left under the v2 name. */
static const char *cri_plugin_for(int64_t version)
{
    if (version >= 3) return CRI_V3;
    if (version == 2) return CRI_V2;
    return CRI_V1_SHORT;
}

/* A CRI plugin whose ID or URI is in disabled_plugins serves no handler. In
 * 2.x the gRPC CRI service is a separate plugin: disabling it disables CRI. */
static bool cri_disabled(const toml_table *root, const char *plugin)
{
    if (array_has_string(root, "disabled_plugins", plugin)) return true;
    if (strcmp(plugin, CRI_V3) == 0) return array_has_string(root, "disabled_plugins", CRI_V2);
    return strcmp(plugin, CRI_V2) == 0 && array_has_string(root, "disabled_plugins", "cri");
}

/* A deprecated 1.x runtime (default_runtime, untrusted_workload_runtime)
 * counts when its runtime_type is set. */
static bool deprecated_runtime_set(const toml_table *containerd, const char *key)
{
    const char *type = string_at(subtable(containerd, key), "runtime_type");
    return type && *type;
}

/* containerd's own checks of the CRI runtime config, in its order and with
 * its words (1.x pkg/cri/config ValidatePluginConfig, 2.x
 * internal/cri/config ValidateRuntimeConfig). */
static int validate_cri(const toml_table *containerd, cd_dump *d)
{
    const char *name = d->default_runtime ? d->default_runtime : "";
    if (deprecated_runtime_set(containerd, "untrusted_workload_runtime")) {
        if (cd_names_contains(&d->handlers, "untrusted")) {
            snprintf(d->cri_error, sizeof d->cri_error,
                     "conflicting definitions: configuration includes both "
                     "`untrusted_workload_runtime` and `runtimes[\"untrusted\"]`");
            return 0;
        }
        if (cd_names_add(&d->handlers, "untrusted", 9) != 0) return -1;
    }
    if (deprecated_runtime_set(containerd, "default_runtime")) {
        if (!cd_names_contains(&d->handlers, "default") &&
            cd_names_add(&d->handlers, "default", 7) != 0)
            return -1;
        name = "default";
    }
    cd_cri_check_default(name, (const char *const *)d->handlers.items, d->handlers.n, d->cri_error,
                         sizeof d->cri_error);
    return 0;
}

void cd_cri_check_default(const char *name, const char *const *runtimes, size_t n, char *msg,
                          size_t cap)
{
    msg[0] = '\0';
    if (!name || !*name) {
        snprintf(msg, cap, "`default_runtime_name` is empty");
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (strcmp(runtimes[i], name) == 0) return;
    /* Sic: containerd's message has no closing backtick. */
    snprintf(msg, cap,
             "no corresponding runtime configured in `containerd.runtimes` for `containerd` "
             "`default_runtime_name = \"%s\"",
             name);
}

static int read_cri(const toml_table *cri, cd_dump *d)
{
    const toml_table *containerd = subtable(cri, "containerd");
    if (!containerd) {
        d->cri = CD_CRI_ABSENT;
        return 0;
    }
    const toml_table *runtimes = subtable(containerd, "runtimes");
    for (size_t i = 0; runtimes && i < toml_table_size(runtimes); i++) {
        const toml_entry *e = toml_table_entry(runtimes, i);
        if (e->value.type != TOML_TABLE) continue;
        if (cd_names_add(&d->handlers, e->key, toml_entry_keylen(e)) != 0) return -1;
    }
    const char *def = string_at(containerd, "default_runtime_name");
    if (def && !(d->default_runtime = strdup(def))) return -1;
    if (validate_cri(containerd, d) != 0) return -1;
    d->cri = d->cri_error[0] ? CD_CRI_INVALID : CD_CRI_VALID;
    return 0;
}

int cd_dump_parse(const char *text, size_t len, const char *name, cd_dump *out, gp_error *err)
{
    memset(out, 0, sizeof *out);
    toml_doc *doc = toml_parse(text, len, name, err);
    if (!doc) return -1;
    const toml_table *root = toml_root(doc);
    const toml_value *v = toml_table_get(root, "version");
    if (v && v->type == TOML_INTEGER) out->version = v->u.i;
    out->cri_plugin = cri_plugin_for(out->version);
    const toml_table *cri = subtable(subtable(root, "plugins"), out->cri_plugin);
    int rc = 0;
    if (cri_disabled(root, out->cri_plugin))
        out->cri = CD_CRI_DISABLED;
    else if (!cri)
        out->cri = CD_CRI_ABSENT;
    else
        rc = read_cri(cri, out);
    toml_free(doc);
    if (rc != 0) {
        cd_dump_free(out);
        gp_error_set(err, name, 0, 0, "out of memory");
    }
    return rc;
}

void cd_dump_free(cd_dump *d)
{
    cd_names_free(&d->handlers);
    free(d->default_runtime);
    d->default_runtime = NULL;
}

bool cd_dump_handler_loaded(const cd_dump *d, const char *handler)
{
    return d->cri == CD_CRI_VALID && cd_names_contains(&d->handlers, handler);
}

/* ---- the daemon process and its config files ---- */

int cd_proc_parse_starttime(const char *stat_text, unsigned long long *ticks)
{
    /* "PID (comm) S ppid ...": fields after the last ')' start at field 3. */
    const char *p = strrchr(stat_text, ')');
    if (!p) return -1;
    p++;
    for (int field = 3; field < 22; field++) {
        while (*p == ' ')
            p++;
        while (*p && *p != ' ')
            p++;
        if (!*p) return -1;
    }
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (end == p) return -1;
    *ticks = v;
    return 0;
}

int cd_proc_parse_btime(const char *proc_stat, long long *btime)
{
    for (const char *p = proc_stat; p; p = strchr(p, '\n')) {
        if (*p == '\n') p++;
        if (strncmp(p, "btime ", 6) == 0) {
            char *end;
            long long v = strtoll(p + 6, &end, 10);
            if (end == p + 6) return -1;
            *btime = v;
            return 0;
        }
    }
    return -1;
}

int cd_proc_parse_uptime(const char *uptime_text, double *uptime)
{
    /* strtod would follow the locale's decimal point; /proc always writes '.'. */
    char *end;
    unsigned long long whole = strtoull(uptime_text, &end, 10);
    if (end == uptime_text || *end != '.') return -1;
    const char *frac = end + 1;
    unsigned long long hundredths = strtoull(frac, &end, 10);
    if (end - frac != 2) return -1;
    *uptime = (double)whole + (double)hundredths / 100.0;
    return 0;
}

/* The value of an option in one of its forms at args[i]; advances i past a
 * separate value. NULL when args[i] is not that option. */
static const char *option_value(char **args, size_t n, size_t *i, const char *lng, const char *shrt)
{
    const char *a = args[*i];
    size_t ll = strlen(lng);
    if (strncmp(a, lng, ll) == 0 && a[ll] == '=') return a + ll + 1;
    if (strcmp(a, lng) != 0 && strcmp(a, shrt) != 0) return NULL;
    if (*i + 1 >= n) return NULL;
    return args[++*i];
}

void cd_proc_parse_cmdline(const char *cmdline, size_t len, char *address, size_t address_cap,
                           char *config, size_t config_cap)
{
    address[0] = config[0] = '\0';
    char *args[256];
    size_t n = 0;
    for (size_t i = 0; i < len && n < 256; i += strlen(cmdline + i) + 1)
        args[n++] = (char *)cmdline + i;
    for (size_t i = 1; i < n; i++) {
        const char *v;
        if ((v = option_value(args, n, &i, "--address", "-a")))
            snprintf(address, address_cap, "%s", v);
        else if ((v = option_value(args, n, &i, "--config", "-c")))
            snprintf(config, config_cap, "%s", v);
    }
}

static const char *strip_unix(const char *address)
{
    return strncmp(address, "unix://", 7) == 0 ? address + 7 : address;
}

/* Two socket paths name the same socket (same file, or same text). */
static bool same_socket(const char *a, const char *b)
{
    a = strip_unix(a);
    b = strip_unix(b);
    if (strcmp(a, b) == 0) return true;
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

static char *read_proc(pid_t pid, const char *what, size_t *len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, what);
    size_t ignored;
    return gp_read_file(path, len ? len : &ignored, NULL);
}

/* The address the daemon listens on when its command line does not say:
 * [grpc] address of its main config, else the default. */
static void address_from_config(const char *config, char *address, size_t cap)
{
    snprintf(address, cap, "%s", CD_DEFAULT_ADDRESS);
    toml_doc *doc = toml_parse_file(config, NULL);
    if (!doc) return;
    const char *a = string_at(subtable(toml_root(doc), "grpc"), "address");
    if (a && *a) snprintf(address, cap, "%s", a);
    toml_free(doc);
}

/* A relative --config is relative to the daemon's working directory. */
static void absolute_config(pid_t pid, const char *config, char *out, size_t cap)
{
    if (!*config) config = CD_DEFAULT_CONFIG;
    char cwd_link[64], cwd[PATH_MAX];
    snprintf(cwd_link, sizeof cwd_link, "/proc/%ld/cwd", (long)pid);
    ssize_t n = config[0] == '/' ? -1 : readlink(cwd_link, cwd, sizeof cwd - 1);
    if (n <= 0) {
        snprintf(out, cap, "%s", config);
        return;
    }
    cwd[n] = '\0';
    if ((size_t)snprintf(out, cap, "%s/%s", cwd, config) >= cap) snprintf(out, cap, "%s", config);
}

/* The boot time to 1/100 s: now minus the uptime; else /proc/stat's btime. */
static int boot_time(double *boot)
{
    char *uptime_text = gp_read_file("/proc/uptime", &(size_t){0}, NULL);
    struct timespec now;
    double uptime;
    int rc = -1;
    if (uptime_text && cd_proc_parse_uptime(uptime_text, &uptime) == 0 &&
        clock_gettime(CLOCK_REALTIME, &now) == 0) {
        *boot = (double)now.tv_sec + (double)now.tv_nsec / 1e9 - uptime;
        rc = 0;
    }
    free(uptime_text);
    if (rc == 0) return 0;
    char *proc_stat = gp_read_file("/proc/stat", &(size_t){0}, NULL);
    long long btime;
    if (proc_stat && cd_proc_parse_btime(proc_stat, &btime) == 0) {
        *boot = (double)btime;
        rc = 0;
    }
    free(proc_stat);
    return rc;
}

static int process_start(pid_t pid, double *started)
{
    char *stat_text = read_proc(pid, "stat", NULL);
    unsigned long long ticks;
    double boot;
    int rc = -1;
    if (stat_text && cd_proc_parse_starttime(stat_text, &ticks) == 0 && boot_time(&boot) == 0) {
        *started = boot + (double)ticks / (double)sysconf(_SC_CLK_TCK);
        rc = 0;
    }
    free(stat_text);
    return rc;
}

/* Fills out when process pid is a containerd serving `address`. */
static bool daemon_matches(pid_t pid, const char *address, cd_daemon_proc *out)
{
    char *comm = read_proc(pid, "comm", NULL);
    bool named = comm && strcmp(comm, "containerd\n") == 0;
    free(comm);
    if (!named) return false;
    size_t len;
    char *cmdline = read_proc(pid, "cmdline", &len);
    if (!cmdline) return false;
    char served[4096], config[4096];
    cd_proc_parse_cmdline(cmdline, len, served, sizeof served, config, sizeof config);
    free(cmdline);
    absolute_config(pid, config, out->config, sizeof out->config);
    if (!*served) address_from_config(out->config, served, sizeof served);
    if (!same_socket(served, address)) return false;
    out->pid = pid;
    return process_start(pid, &out->started) == 0;
}

int cd_daemon_find(const char *address, cd_daemon_proc *out, gp_error *err)
{
    DIR *proc = opendir("/proc");
    if (!proc) {
        gp_error_set(err, "/proc", 0, 0, "cannot read the process list");
        return -1;
    }
    memset(out, 0, sizeof *out);
    int rc = 1;
    struct dirent *e;
    while (rc == 1 && (e = readdir(proc))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0) continue;
        if (daemon_matches((pid_t)pid, address, out)) rc = 0;
    }
    closedir(proc);
    return rc;
}

/* Adds a file once (by its resolved path); missing files are skipped. */
static int add_file(cd_names *files, const char *path)
{
    char real[PATH_MAX];
    if (!realpath(path, real)) return 0;
    if (cd_names_contains(files, real)) return 0;
    return cd_names_add(files, real, strlen(real));
}

/* The files containerd's own walk reads (cd_predict's loader), with imports
 * resolved against the declaring file as 1.7 and 2.x do. */
int cd_config_files(const char *main_path, cd_names *files, gp_error *err)
{
    memset(files, 0, sizeof *files);
    cd_options opt = {main_path, NULL, CD_V2_1};
    cd_prediction *p = cd_predict(&opt, err);
    if (!p) return -1;
    int rc = 0;
    if (p->error) {
        /* The located parse error when there is one, else containerd's. */
        const char *why = p->error;
        for (size_t i = 0; i < p->lints.count; i++)
            if (strcmp(p->lints.items[i].code, "syntax-error") == 0) why = p->lints.items[i].text;
        gp_error_set(err, NULL, 0, 0, "%s", why);
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < p->nfiles; i++)
        rc = add_file(files, p->files[i].read_path);
    cd_prediction_free(p);
    if (rc != 0) cd_names_free(files);
    return rc;
}

void cd_default_config_files(cd_names *files)
{
    *files = (cd_names){0};
    if (add_file(files, CD_DEFAULT_CONFIG) != 0) return;
    glob_t g;
    if (glob("/etc/containerd/conf.d/*.toml", 0, NULL, &g) != 0) return;
    for (size_t i = 0; i < g.gl_pathc; i++)
        if (add_file(files, g.gl_pathv[i]) != 0) break;
    globfree(&g);
}

int cd_newest_mtime(const cd_names *files, double *mtime, const char **which)
{
    int rc = -1;
    for (size_t i = 0; i < files->n; i++) {
        struct stat st;
        if (stat(files->items[i], &st) != 0) continue;
        double t = (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
        if (rc == 0 && t <= *mtime) continue;
        *mtime = t;
        *which = files->items[i];
        rc = 0;
    }
    return rc;
}
