#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

char *gp_read_stream(FILE *f, const char *name, size_t *len, gp_error *err)
{
    size_t cap = 64 * 1024;
    struct stat st;
    /* A regular file tells its size: read it in one allocation. */
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        cap = (size_t)st.st_size + 1;
    char *buf = malloc(cap);
    if (!buf) {
        gp_error_set(err, name, 0, 0, "out of memory");
        return NULL;
    }
    size_t n = 0;
    for (;;) {
        if (n + 1 >= cap) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                gp_error_set(err, name, 0, 0, "out of memory");
                return NULL;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        int e = errno;
        free(buf);
        gp_error_set(err, name, 0, 0, "cannot read: %s", strerror(e));
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

char *gp_read_file(const char *path, size_t *len, gp_error *err)
{
    if (strcmp(path, "-") == 0) return gp_read_stream(stdin, "<stdin>", len, err);
    FILE *f = fopen(path, "rb");
    if (!f) {
        gp_error_set(err, path, 0, 0, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        gp_error_set(err, path, 0, 0, "is a directory");
        return NULL;
    }
    char *buf = gp_read_stream(f, path, len, err);
    fclose(f);
    return buf;
}

/* ---- writing ------------------------------------------------------------- */

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

int gp_mkdirs(const char *dir, mode_t mode, gp_error *err)
{
    if (!*dir) {
        gp_error_set(err, NULL, 0, 0, "no directory named");
        return -1;
    }
    char *copy = strdup(dir);
    if (!copy) {
        gp_error_set(err, dir, 0, 0, "out of memory");
        return -1;
    }
    int rc = 0;
    for (char *p = copy + 1; rc == 0; p++) {
        if (*p != '/' && *p != '\0') continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(copy, mode) != 0 && errno != EEXIST) {
            gp_error_set(err, copy, 0, 0, "cannot create the directory: %s", strerror(errno));
            rc = -1;
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

static void fsync_dir_of(const char *path)
{
    char *dir = strdup(path);
    if (!dir) return;
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        strcpy(dir, ".");
    int fd = open(dir, O_RDONLY | O_CLOEXEC);
    free(dir);
    if (fd < 0) return;
    fsync(fd); /* the rename is done; a failed directory sync loses nothing now */
    close(fd);
}

/* PATH.gpuop-tmp-XXXXXX holding `text` with `mode`, fsync'd: its name
 * (malloc'd), or NULL with err (nothing left behind). */
static char *write_temp(const char *path, const char *text, size_t len, mode_t mode, gp_error *err)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp) {
        gp_error_set(err, path, 0, 0, "out of memory");
        return NULL;
    }
    snprintf(tmp, n, "%s.gpuop-tmp-XXXXXX", path);
    int fd = mkstemp(tmp);
    bool ok = fd >= 0 && fchmod(fd, mode) == 0 && write_all(fd, text, len) && fsync(fd) == 0;
    if (fd >= 0) ok = close(fd) == 0 && ok;
    if (ok) return tmp;
    gp_error_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
    if (fd >= 0) unlink(tmp);
    free(tmp);
    return NULL;
}

int gp_write_atomic(const char *path, const char *text, size_t len, mode_t mode, gp_error *err)
{
    char *tmp = write_temp(path, text, len, mode, err);
    if (!tmp) return -1;
    int rc = rename(tmp, path);
    if (rc != 0) {
        gp_error_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    if (rc == 0) fsync_dir_of(path);
    return rc == 0 ? 0 : -1;
}

int gp_create_new(const char *path, const char *text, size_t len, mode_t mode, gp_error *err)
{
    char *tmp = write_temp(path, text, len, mode, err);
    if (!tmp) return -1;
    /* link() never replaces: a file that appeared meanwhile stays. */
    int rc = link(tmp, path) == 0 ? 0 : errno == EEXIST ? 1 : -1;
    unlink(tmp);
    if (rc < 0 && (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP)) {
        /* a file system without hard links: exclusive create, then write */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd < 0 && errno == EEXIST) {
            rc = 1;
        } else if (fd >= 0) {
            bool ok = write_all(fd, text, len) && fsync(fd) == 0;
            rc = close(fd) == 0 && ok ? 0 : -1;
            if (rc < 0) unlink(path);
        }
    }
    if (rc < 0) gp_error_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
    free(tmp);
    if (rc == 0) fsync_dir_of(path);
    return rc;
}

char *gp_write_backup(const char *path, const char *text, size_t len, mode_t mode, gp_error *err)
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
