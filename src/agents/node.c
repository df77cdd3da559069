/* A simulated node's files and node.toml (see node.h). */
#include "agents/node.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "toml/toml.h"
#include "util/buf.h"
#include "util/file.h"

#define DEFAULT_CONTAINERD "1.6.20~ds1" /* Debian 12's package, the lab's node */
#define DEFAULT_DRIVER     "550.54.15"
#define DEFAULT_KERNEL     "6.1.0-18-amd64" /* a Debian 12 kernel release */
#define DEFAULT_GPUS       4                /* the lab's lab-node-1 */
#define DEFAULT_GPU_MODEL  "NVIDIA-A100-SXM4-40GB"
#define MAX_GPUS           64

void ag_node_state_default(ag_node_state *st)
{
    memset(st, 0, sizeof *st);
    snprintf(st->containerd_version, sizeof st->containerd_version, "%s", DEFAULT_CONTAINERD);
    st->family = CD_V1_6;
    st->restart = AG_RESTART_ALWAYS;
    st->restart_sec = AG_RESTART_SEC_DEFAULT;
    st->driver_installed = true;
    snprintf(st->driver_version, sizeof st->driver_version, "%s", DEFAULT_DRIVER);
    snprintf(st->driver_kernel, sizeof st->driver_kernel, "%s", DEFAULT_KERNEL);
    snprintf(st->kernel_version, sizeof st->kernel_version, "%s", DEFAULT_KERNEL);
    st->gpus = DEFAULT_GPUS;
    snprintf(st->gpu_model, sizeof st->gpu_model, "%s", DEFAULT_GPU_MODEL);
}

bool ag_node_driver_loads(const ag_node_state *st)
{
    return st->driver_installed && strcmp(st->driver_kernel, st->kernel_version) == 0;
}

void ag_node_next_kernel(const char *kernel, char *out, size_t cap)
{
    /* Debian's releases are UPSTREAM-ABI-FLAVOUR: 6.1.0-18-amd64. */
    const char *dash = strchr(kernel, '-');
    char *end = NULL;
    long abi = dash ? strtol(dash + 1, &end, 10) : -1;
    if (dash && end != dash + 1 && abi >= 0 && abi < 100000 && (*end == '-' || *end == '\0'))
        snprintf(out, cap, "%.*s-%ld%s", (int)(dash - kernel), kernel, abi + 1, end);
    else
        snprintf(out, cap, "%s+1", kernel);
}

/* ---- reading ---- */

typedef struct reader {
    const char *file;
    const toml_table *table;
    gp_error *err;
} reader;

/* Where an entry of the table being read was written. */
static toml_pos pos_of(const reader *r, const toml_entry *e)
{
    toml_pos pos = toml_entry_pos(r->table, e);
    if (!pos.file) pos.file = r->file;
    return pos;
}

/* Sets err at the entry and returns -1 from the caller. Named as the TOML
 * parser's fail_at, which scripts/update-po.sh reads as a message keyword
 * (its third argument). */
#define fail_at(r, e, ...)                                                                         \
    do {                                                                                           \
        toml_pos at_ = pos_of(r, e);                                                               \
        gp_error_set((r)->err, at_.file, at_.line, at_.col, __VA_ARGS__);                          \
        return -1;                                                                                 \
    } while (0)

/* A string no longer than cap - 1 bytes and without NUL or control bytes
 * (the values end up in node labels and messages). */
static int read_string(const reader *r, const toml_entry *e, const char *key, char *out, size_t cap)
{
    if (e->value.type != TOML_STRING) fail_at(r, e, "%s must be a string", key);
    if (e->value.len >= cap) fail_at(r, e, "%s is too long (at most %zu bytes)", key, cap - 1);
    for (uint32_t i = 0; i < e->value.len; i++) {
        unsigned char c = (unsigned char)e->value.u.s[i];
        if (c < 0x20 || c == 0x7f) fail_at(r, e, "%s must not hold control characters", key);
    }
    memcpy(out, e->value.u.s, e->value.len);
    out[e->value.len] = '\0';
    return 0;
}

static int read_containerd(const reader *r, ag_node_state *st)
{
    for (size_t i = 0; i < toml_table_size(r->table); i++) {
        const toml_entry *e = toml_table_entry(r->table, i);
        if (strcmp(e->key, "version") == 0) {
            if (read_string(r, e, "containerd.version", st->containerd_version,
                            sizeof st->containerd_version) != 0)
                return -1;
            if (cd_family_parse(st->containerd_version, &st->family) != 0)
                fail_at(r, e,
                        "containerd.version: '%s' is not a containerd line gpuop models "
                        "(1.6, 1.7, 2.0, 2.1)",
                        st->containerd_version);
        } else if (strcmp(e->key, "restart") == 0) {
            char policy[16];
            if (read_string(r, e, "containerd.restart", policy, sizeof policy) != 0) return -1;
            if (strcmp(policy, "always") == 0) {
                st->restart = AG_RESTART_ALWAYS;
            } else if (strcmp(policy, "no") == 0) {
                st->restart = AG_RESTART_NO;
            } else {
                fail_at(r, e, "containerd.restart must be \"always\" or \"no\", not '%s'", policy);
            }
        } else if (strcmp(e->key, "restart_sec") == 0) {
            if (e->value.type != TOML_INTEGER || e->value.u.i < 0 || e->value.u.i > 3600)
                fail_at(r, e,
                        "containerd.restart_sec must be a whole number of seconds from 0 "
                        "to 3600");
            st->restart_sec = (int)e->value.u.i;
        } else {
            fail_at(r, e, "unknown key '%s' in [%s]", e->key, "containerd");
        }
    }
    return 0;
}

static int read_driver(const reader *r, ag_node_state *st)
{
    for (size_t i = 0; i < toml_table_size(r->table); i++) {
        const toml_entry *e = toml_table_entry(r->table, i);
        if (strcmp(e->key, "installed") == 0) {
            if (e->value.type != TOML_BOOL)
                fail_at(r, e, "%s must be true or false", "driver.installed");
            st->driver_installed = e->value.u.b;
        } else if (strcmp(e->key, "version") == 0) {
            if (read_string(r, e, "driver.version", st->driver_version,
                            sizeof st->driver_version) != 0)
                return -1;
        } else if (strcmp(e->key, "kernel") == 0) {
            if (read_string(r, e, "driver.kernel", st->driver_kernel, sizeof st->driver_kernel) !=
                0)
                return -1;
        } else {
            fail_at(r, e, "unknown key '%s' in [%s]", e->key, "driver");
        }
    }
    return 0;
}

static int read_kernel(const reader *r, ag_node_state *st)
{
    for (size_t i = 0; i < toml_table_size(r->table); i++) {
        const toml_entry *e = toml_table_entry(r->table, i);
        if (strcmp(e->key, "version") == 0) {
            if (read_string(r, e, "kernel.version", st->kernel_version,
                            sizeof st->kernel_version) != 0)
                return -1;
            if (!st->kernel_version[0]) fail_at(r, e, "%s must not be empty", "kernel.version");
        } else {
            fail_at(r, e, "unknown key '%s' in [%s]", e->key, "kernel");
        }
    }
    return 0;
}

static int read_gpu(const reader *r, ag_node_state *st)
{
    for (size_t i = 0; i < toml_table_size(r->table); i++) {
        const toml_entry *e = toml_table_entry(r->table, i);
        if (strcmp(e->key, "count") == 0) {
            if (e->value.type != TOML_INTEGER || e->value.u.i < 0 || e->value.u.i > MAX_GPUS)
                fail_at(r, e, "gpu.count must be a whole number from 0 to %d", MAX_GPUS);
            st->gpus = (int)e->value.u.i;
        } else if (strcmp(e->key, "model") == 0) {
            if (read_string(r, e, "gpu.model", st->gpu_model, sizeof st->gpu_model) != 0) return -1;
            if (!st->gpu_model[0]) fail_at(r, e, "%s must not be empty", "gpu.model");
        } else {
            fail_at(r, e, "unknown key '%s' in [%s]", e->key, "gpu");
        }
    }
    return 0;
}

static int read_state(const char *file, const toml_table *root, ag_node_state *st, gp_error *err)
{
    for (size_t i = 0; i < toml_table_size(root); i++) {
        const toml_entry *e = toml_table_entry(root, i);
        reader top = {file, root, err};
        int (*section)(const reader *, ag_node_state *) = NULL;
        if (strcmp(e->key, "containerd") == 0)
            section = read_containerd;
        else if (strcmp(e->key, "driver") == 0)
            section = read_driver;
        else if (strcmp(e->key, "kernel") == 0)
            section = read_kernel;
        else if (strcmp(e->key, "gpu") == 0)
            section = read_gpu;
        if (!section) fail_at(&top, e, "unknown key '%s'", e->key);
        if (e->value.type != TOML_TABLE) fail_at(&top, e, "%s must be a table", e->key);
        reader r = {file, e->value.u.table, err};
        if (section(&r, st) != 0) return -1;
    }
    return 0;
}

static char *join(const char *dir, const char *rel)
{
    return gp_format("%s/%s", dir, rel);
}

int ag_node_state_read(const char *dir, ag_node_state *st, gp_error *err)
{
    char *path = join(dir, AG_NODE_STATE_FILE);
    if (!path) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    ag_node_state read;
    ag_node_state_default(&read);
    struct stat sb;
    if (lstat(path, &sb) != 0) {
        int e = errno;
        int rc = 0;
        if (e == ENOENT)
            *st = read; /* no file: the default node */
        else
            gp_error_set(err, path, 0, 0, "cannot open: %s", strerror(e)), rc = -1;
        free(path);
        return rc;
    }
    if (!S_ISREG(sb.st_mode)) {
        gp_error_set(err, path, 0, 0, "not a regular file");
        free(path);
        return -1;
    }
    toml_doc *doc = toml_parse_file(path, err);
    int rc = doc ? read_state(path, toml_root(doc), &read, err) : -1;
    toml_free(doc);
    free(path);
    if (rc == 0) *st = read;
    return rc;
}

/* ---- writing ---- */

/* A TOML basic string of a value read_string accepted (no control bytes). */
static void put_quoted(gp_buf *b, const char *s)
{
    gp_buf_addc(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') gp_buf_addc(b, '\\');
        gp_buf_addc(b, *s);
    }
    gp_buf_addc(b, '"');
}

char *ag_node_state_format(const ag_node_state *st)
{
    gp_buf b = {0};
    gp_buf_add(&b, "# A node of gpuop's embedded cluster (man gpuop-node, NODE.TOML, says what\n"
                   "# each key means). Edit it, then restart the node's containerd or reboot it.\n"
                   "[containerd]\nversion = ");
    put_quoted(&b, st->containerd_version);
    gp_buf_addf(&b, "\nrestart = \"%s\"\nrestart_sec = %d\n",
                st->restart == AG_RESTART_ALWAYS ? "always" : "no", st->restart_sec);
    gp_buf_addf(&b,
                "\n[driver]\ninstalled = %s\nversion = ", st->driver_installed ? "true" : "false");
    put_quoted(&b, st->driver_version);
    gp_buf_add(&b, "\nkernel = ");
    put_quoted(&b, st->driver_kernel);
    gp_buf_add(&b, "\n\n[kernel]\nversion = ");
    put_quoted(&b, st->kernel_version);
    gp_buf_addf(&b, "\n\n[gpu]\ncount = %d\nmodel = ", st->gpus);
    put_quoted(&b, st->gpu_model);
    gp_buf_addc(&b, '\n');
    return gp_buf_take(&b);
}

int ag_node_state_write(const char *dir, const ag_node_state *st, gp_error *err)
{
    char *text = ag_node_state_format(st);
    if (!text) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    int fd = gp_open_beneath(dir, "", false, 0755, err);
    int rc = -1;
    if (fd >= 0) {
        char *shown = join(dir, AG_NODE_STATE_FILE);
        rc = gp_write_atomic_at(fd, AG_NODE_STATE_FILE, shown ? shown : AG_NODE_STATE_FILE, text,
                                strlen(text), 0644, err);
        free(shown);
        close(fd);
    }
    free(text);
    return rc;
}

/* ---- creating ---- */

/* Creates DIR/REL/NAME holding text unless it exists. */
static int create_file(const char *dir, const char *rel, const char *name, const char *text,
                       size_t len, gp_error *err)
{
    int fd = gp_open_beneath(dir, rel, true, 0755, err);
    if (fd < 0) return -1;
    char *shown = *rel ? gp_format("%s/%s/%s", dir, rel, name) : gp_format("%s/%s", dir, name);
    int rc = gp_create_new_at(fd, name, shown ? shown : name, text, len, 0644, err);
    free(shown);
    close(fd);
    return rc < 0 ? -1 : 0;
}

int ag_node_create(const char *dir, const ag_node_state *st, gp_error *err)
{
    if (gp_mkdirs(dir, 0755, err) != 0) return -1;
    ag_node_state fallback;
    if (!st) {
        ag_node_state_default(&fallback);
        st = &fallback;
    }
    if (create_file(dir, "etc/containerd", "config.toml", ag_default_main_config,
                    ag_default_main_config_len, err) != 0)
        return -1;
    int fd = gp_open_beneath(dir, AG_NODE_CONF_D, true, 0755, err);
    if (fd < 0) return -1;
    close(fd);
    fd = gp_open_beneath(dir, "run/containerd", true, 0755, err);
    if (fd < 0) return -1;
    close(fd);
    char *text = ag_node_state_format(st);
    if (!text) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    int rc = create_file(dir, "", AG_NODE_STATE_FILE, text, strlen(text), err);
    free(text);
    return rc;
}
