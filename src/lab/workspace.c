#include "lab/workspace.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/file.h"

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

char *lab_default_root(void)
{
    /* The seeds' learner is root and works in /root/gpuop, whatever $HOME
     * a sudo session left behind. */
    if (geteuid() == 0) return strdup("/root/gpuop");
    const char *home = getenv("HOME");
    if (!home || !*home) {
        struct passwd *pw = getpwuid(geteuid());
        home = pw ? pw->pw_dir : NULL;
    }
    if (!home || !*home) return NULL;
    return lab_path(home, "gpuop");
}

int lab_mkdirs(const char *dir, gp_error *err)
{
    char *copy = strdup(dir);
    if (!copy) {
        gp_error_set(err, dir, 0, 0, "out of memory");
        return -1;
    }
    int rc = 0;
    for (char *p = copy + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(copy, 0755) != 0 && errno != EEXIST) {
            gp_error_set(err, copy, 0, 0, "cannot create the directory: %s", strerror(errno));
            rc = -1;
            break;
        }
        *p = saved;
        if (saved == '\0') break;
    }
    struct stat st;
    if (rc == 0 && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        gp_error_set(err, dir, 0, 0, "not a directory");
        rc = -1;
    }
    free(copy);
    return rc;
}

static bool write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

int lab_write_atomic(const char *path, const char *text, size_t len, mode_t mode, gp_error *err)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp) {
        gp_error_set(err, path, 0, 0, "out of memory");
        return -1;
    }
    snprintf(tmp, n, "%s.gpuop-tmp-XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        gp_error_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
        free(tmp);
        return -1;
    }
    bool ok = fchmod(fd, mode) == 0 && write_all(fd, text, len) && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    ok = ok && rename(tmp, path) == 0;
    if (!ok) {
        gp_error_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return ok ? 0 : -1;
}

/* FILE.gpuop-backup-20261130T120000Z (-2, -3, ... when two writes fall in
 * the same second), as `gpuop cluster` backs up a kubeconfig. */
static char *write_backup(const char *path, const char *text, size_t len, mode_t mode,
                          gp_error *err)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
    size_t cap = strlen(path) + 64;
    char *name = malloc(cap);
    for (int i = 1; name && i < 1000; i++) {
        if (i == 1)
            snprintf(name, cap, "%s.gpuop-backup-%s", path, stamp);
        else
            snprintf(name, cap, "%s.gpuop-backup-%s-%d", path, stamp, i);
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd < 0 && errno == EEXIST) continue;
        if (fd < 0) break;
        bool ok = write_all(fd, text, len) && fsync(fd) == 0;
        ok = close(fd) == 0 && ok;
        if (ok) return name;
        unlink(name);
        break;
    }
    gp_error_set(err, name ? name : path, 0, 0, "cannot write the backup: %s", strerror(errno));
    free(name);
    return NULL;
}

int lab_write_keeping(const char *path, const char *text, size_t len, mode_t mode, bool force_mode,
                      char **backup, gp_error *err)
{
    *backup = NULL;
    struct stat st;
    if (stat(path, &st) != 0) return lab_write_atomic(path, text, len, mode, err);
    mode_t old_mode = st.st_mode & 07777;
    mode_t new_mode = force_mode ? mode : old_mode;
    size_t old_len = 0;
    char *old = gp_read_file(path, &old_len, err);
    if (!old) return -1;
    int rc = 0;
    if (old_len == len && memcmp(old, text, len) == 0) {
        if (new_mode != old_mode && chmod(path, new_mode) != 0) {
            gp_error_set(err, path, 0, 0, "cannot change the mode: %s", strerror(errno));
            rc = -1;
        }
    } else {
        *backup = write_backup(path, old, old_len, old_mode, err);
        rc = *backup ? lab_write_atomic(path, text, len, new_mode, err) : -1;
    }
    free(old);
    return rc;
}

int lab_create_new(const char *path, const char *text, size_t len, mode_t mode, gp_error *err)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp) {
        gp_error_set(err, path, 0, 0, "out of memory");
        return -1;
    }
    snprintf(tmp, n, "%s.gpuop-tmp-XXXXXX", path);
    int fd = mkstemp(tmp);
    bool ok = fd >= 0 && fchmod(fd, mode) == 0 && write_all(fd, text, len) && fsync(fd) == 0;
    if (fd >= 0) ok = close(fd) == 0 && ok;
    /* link() never replaces: a file that appeared meanwhile stays. */
    int rc = ok && link(tmp, path) == 0 ? 0 : -1;
    if (rc != 0 && ok && errno == EEXIST) rc = 1;
    if (rc < 0) gp_error_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
    if (fd >= 0) unlink(tmp);
    free(tmp);
    return rc;
}

static int create_in(const char *root, const char *rel, const char *text, gp_error *err)
{
    char *path = lab_path(root, rel);
    if (!path) {
        gp_error_set(err, root, 0, 0, "out of memory");
        return -1;
    }
    int rc = lab_create_new(path, text, strlen(text), 0644, err);
    free(path);
    return rc < 0 ? -1 : 0;
}

int lab_workspace_init(const char *root, const lab_params *p, gp_error *err)
{
    static const char *const dirs[] = {"etc/containerd/conf.d", "bin", "k8s", "out", "evidence"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char *dir = lab_path(root, dirs[i]);
        int rc = dir ? lab_mkdirs(dir, err) : -1;
        if (!dir) gp_error_set(err, root, 0, 0, "out of memory");
        free(dir);
        if (rc != 0) return -1;
    }
    if (create_in(root, LAB_EVIDENCE_DUMP, lab_evidence_dump, err) != 0) return -1;
    char *params = lab_params_text(p);
    if (!params) {
        gp_error_set(err, root, 0, 0, "out of memory");
        return -1;
    }
    int rc = create_in(root, LAB_PARAMS_FILE, params, err);
    free(params);
    return rc;
}
