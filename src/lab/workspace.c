/* realpath() is an X/Open function. */
#define _XOPEN_SOURCE 700
#include "lab/workspace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab/incident_files.h"
#include "util/file.h"
#include "util/i18n.h"

char *lab_path(const char *root, const char *rel)
{
    size_t n = strlen(root) + strlen(rel) + 2;
    char *s = malloc(n);
    if (!s) return NULL;
    /* "/" as the root must not give "//etc/...". */
    bool slash = root[0] && root[strlen(root) - 1] == '/';
    snprintf(s, n, "%s%s%s", root, slash ? "" : "/", rel);
    return s;
}

static const char *home_of_account(void)
{
    struct passwd *pw = getpwuid(geteuid());
    return pw && pw->pw_dir && *pw->pw_dir ? pw->pw_dir : NULL;
}

char *lab_default_root(void)
{
    const char *home = getenv("HOME");
    if (!home || !*home) home = home_of_account();
    if (!home) return NULL;
    return lab_path(home, "gpuop");
}

/* ---- which directory may be the root ---------------------------------- */

/* The real path of `path`, which need not exist: its nearest existing
 * ancestor resolved, the rest appended. malloc'd, NULL with err. */
static char *real_path_of(const char *path, gp_error *err)
{
    char *copy = strdup(path);
    if (!copy) {
        gp_error_set(err, path, 0, 0, "out of memory");
        return NULL;
    }
    char resolved[PATH_MAX];
    for (;;) {
        if (realpath(copy[0] ? copy : ".", resolved)) break;
        if (errno != ENOENT) {
            gp_error_set(err, path, 0, 0, "%s", strerror(errno));
            free(copy);
            return NULL;
        }
        char *slash = strrchr(copy, '/');
        if (!slash) {
            copy[0] = '\0';
            continue;
        }
        *slash = '\0';
        if (slash == copy) {
            strcpy(resolved, "/");
            break;
        }
    }
    size_t kept = strlen(copy);
    const char *rest = path + kept;
    while (*rest == '/')
        rest++;
    size_t len = strlen(resolved) + strlen(rest) + 2;
    char *out = malloc(len);
    if (out) {
        bool slash = strcmp(resolved, "/") == 0 || !*rest;
        snprintf(out, len, "%s%s%s", resolved, slash ? "" : "/", rest);
        /* no trailing slash: "ws/" and "ws" are one workspace */
        for (size_t m = strlen(out); m > 1 && out[m - 1] == '/'; m--)
            out[m - 1] = '\0';
    }
    free(copy);
    return out;
}

static bool same_dir(const char *real, const char *other)
{
    if (!other || !*other) return false;
    char resolved[PATH_MAX];
    return realpath(other, resolved) && strcmp(real, resolved) == 0;
}

/* The file system's own directories: a workspace there would mix the
 * lab's etc/, bin/ and out/ with the machine's. */
static bool is_system_dir(const char *real)
{
    static const char *const dirs[] = {
        "/",      "/bin",    "/boot",  "/dev", "/etc", "/home", "/lib",  "/lib32",
        "/lib64", "/libx32", "/media", "/mnt", "/opt", "/proc", "/root", "/run",
        "/sbin",  "/srv",    "/sys",   "/tmp", "/usr", "/var",
    };
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        if (strcmp(real, dirs[i]) == 0) return true;
    static const char *const parents[] = {"/usr/", "/var/"};
    for (size_t i = 0; i < sizeof parents / sizeof *parents; i++) {
        size_t n = strlen(parents[i]);
        if (strncmp(real, parents[i], n) == 0 && !strchr(real + n, '/')) return true;
    }
    static const char *const pseudo[] = {"/proc/", "/sys/", "/dev/"};
    for (size_t i = 0; i < sizeof pseudo / sizeof *pseudo; i++)
        if (strncmp(real, pseudo[i], strlen(pseudo[i])) == 0) return true;
    return false;
}

static bool is_empty_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    struct dirent *de;
    bool empty = true;
    while (empty && (de = readdir(d)))
        empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
    closedir(d);
    return empty;
}

bool lab_workspace_exists(const char *root)
{
    char *marker = lab_path(root, LAB_PARAMS_FILE);
    struct stat st;
    bool yes = marker && lstat(marker, &st) == 0 && S_ISREG(st.st_mode);
    free(marker);
    return yes;
}

int lab_root_check(const char *root, bool may_create, char **real, gp_error *err)
{
    *real = real_path_of(root, err);
    if (!*real) return -1;
    const char *r = *real;
    const char *why = NULL;
    if (is_system_dir(r))
        why = _("a system directory");
    else if (same_dir(r, getenv("HOME")) || same_dir(r, home_of_account()))
        why = _("a home directory itself");
    if (why) {
        gp_error_set(err, root, 0, 0,
                     "the lab will not use %s (%s) as its workspace: it writes etc/, bin/ and "
                     "out/ there; give --root a directory of its own, e.g. ~/gpuop",
                     r, why);
        goto refuse;
    }
    struct stat st;
    if (stat(r, &st) != 0) {
        if (errno == ENOENT && may_create) return 0;
        if (errno == ENOENT)
            gp_error_set(err, root, 0, 0,
                         "no lab workspace here; 'gpuop lab init --root %s' makes one", root);
        else
            gp_error_set(err, root, 0, 0, "%s", strerror(errno));
        goto refuse;
    }
    if (!S_ISDIR(st.st_mode)) {
        gp_error_set(err, root, 0, 0, "not a directory");
        goto refuse;
    }
    if (lab_workspace_exists(r) || (may_create && is_empty_dir(r))) return 0;
    if (may_create)
        gp_error_set(err, root, 0, 0,
                     "not empty and not a lab workspace (no %s): the lab makes its workspace "
                     "only in a new or empty directory",
                     LAB_PARAMS_FILE);
    else
        gp_error_set(err, root, 0, 0,
                     "not a lab workspace (no %s); 'gpuop lab init' makes one in a new or empty "
                     "directory",
                     LAB_PARAMS_FILE);
refuse:
    free(*real);
    *real = NULL;
    return -1;
}

/* ---- writing beneath the root ------------------------------------------ */

/* REL's directory open beneath ROOT (created), and REL's last part. */
static int open_parent(const char *root, const char *rel, const char **name, gp_error *err)
{
    const char *slash = strrchr(rel, '/');
    *name = slash ? slash + 1 : rel;
    char *dir = slash ? strndup(rel, (size_t)(slash - rel)) : strdup("");
    if (!dir) {
        gp_error_set(err, root, 0, 0, "out of memory");
        return -1;
    }
    int fd = gp_open_beneath(root, dir, true, 0755, err);
    free(dir);
    return fd;
}

int lab_ws_write(const char *root, const char *rel, const char *text, size_t len, mode_t mode,
                 gp_error *err)
{
    const char *name;
    int dirfd = open_parent(root, rel, &name, err);
    if (dirfd < 0) return -1;
    char *shown = lab_path(root, rel);
    int rc = gp_write_atomic_at(dirfd, name, shown ? shown : rel, text, len, mode, err);
    free(shown);
    close(dirfd);
    return rc;
}

int lab_ws_remove(const char *root, const char *rel, gp_error *err)
{
    const char *name;
    int dirfd = open_parent(root, rel, &name, err);
    if (dirfd < 0) return -1;
    int rc = unlinkat(dirfd, name, 0) == 0 || errno == ENOENT ? 0 : -1;
    if (rc != 0) gp_error_set(err, rel, 0, 0, "cannot remove: %s", strerror(errno));
    close(dirfd);
    return rc;
}

/* The bytes of `name` in dirfd, never through a link; NULL with err. */
static char *read_at(int dirfd, const char *name, const char *shown, size_t *len, gp_error *err)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        gp_error_set(err, shown, 0, 0, "cannot open: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    char *text = gp_read_stream(f, shown, len, err);
    fclose(f);
    return text;
}

static int keep_at(int dirfd, const char *name, const char *shown, const char *text, size_t len,
                   mode_t mode, bool force_mode, char **backup, gp_error *err)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT) {
            gp_error_set(err, shown, 0, 0, "%s", strerror(errno));
            return -1;
        }
        return gp_write_atomic_at(dirfd, name, shown, text, len, mode, err);
    }
    if (S_ISLNK(st.st_mode)) {
        gp_error_set(err, shown, 0, 0,
                     "a symbolic link: the lab writes only files of its own workspace, never "
                     "through a link");
        return -1;
    }
    mode_t old_mode = st.st_mode & 07777;
    mode_t new_mode = force_mode ? mode : old_mode;
    size_t old_len = 0;
    char *old = read_at(dirfd, name, shown, &old_len, err);
    if (!old) return -1;
    int rc = 0;
    if (old_len == len && memcmp(old, text, len) == 0) {
        if (new_mode != old_mode && fchmodat(dirfd, name, new_mode, 0) != 0) {
            gp_error_set(err, shown, 0, 0, "cannot change the mode: %s", strerror(errno));
            rc = -1;
        }
    } else {
        *backup = gp_write_backup_at(dirfd, name, shown, old, old_len, old_mode, err);
        rc = *backup ? gp_write_atomic_at(dirfd, name, shown, text, len, new_mode, err) : -1;
    }
    free(old);
    return rc;
}

int lab_write_keeping(const char *root, const char *rel, const char *text, size_t len, mode_t mode,
                      bool force_mode, char **backup, gp_error *err)
{
    *backup = NULL;
    const char *name;
    int dirfd = open_parent(root, rel, &name, err);
    if (dirfd < 0) return -1;
    char *shown = lab_path(root, rel);
    int rc = keep_at(dirfd, name, shown ? shown : rel, text, len, mode, force_mode, backup, err);
    free(shown);
    close(dirfd);
    return rc;
}

static int create_in(const char *root, const char *rel, const char *text, size_t len, gp_error *err)
{
    const char *name;
    int dirfd = open_parent(root, rel, &name, err);
    if (dirfd < 0) return -1;
    char *shown = lab_path(root, rel);
    int rc = gp_create_new_at(dirfd, name, shown ? shown : rel, text, len, 0644, err);
    free(shown);
    close(dirfd);
    return rc < 0 ? -1 : 0;
}

int lab_workspace_init(const char *root, const lab_params *p, gp_error *err)
{
    if (gp_mkdirs(root, 0755, err) != 0) return -1;
    static const char *const dirs[] = {"etc/containerd/conf.d", "bin", "k8s", "out", "evidence"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        int fd = gp_open_beneath(root, dirs[i], true, 0755, err);
        if (fd < 0) return -1;
        close(fd);
    }
    if (create_in(root, LAB_EVIDENCE_DUMP, lab_evidence_dump, lab_evidence_dump_len, err) != 0)
        return -1;
    char *params = lab_params_text(p);
    if (!params) {
        gp_error_set(err, root, 0, 0, "out of memory");
        return -1;
    }
    int rc = create_in(root, LAB_PARAMS_FILE, params, strlen(params), err);
    free(params);
    return rc;
}
