#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/random.h"

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

/* ---- writing in a directory held open ------------------------------------ */

/* The directory part of `path` open (O_PATH would not do: fsync and
 * renameat need a real descriptor), and its last part in *name. */
static int open_parent(const char *path, const char **name, gp_error *err)
{
    const char *slash = strrchr(path, '/');
    *name = slash ? slash + 1 : path;
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) {
        gp_error_set(err, path, 0, 0, "out of memory");
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) gp_error_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
    free(dir);
    return fd;
}

/* NAME.gpuop-tmp-XXXXXX in dirfd holding `text` with `mode`, fsync'd: its
 * name (malloc'd), or NULL with err (nothing left behind). Created with
 * O_EXCL and O_NOFOLLOW: never through a link someone left there. */
static char *write_temp_at(int dirfd, const char *name, const char *shown, const char *text,
                           size_t len, mode_t mode, gp_error *err)
{
    size_t n = strlen(name) + 32;
    char *tmp = malloc(n);
    if (!tmp) {
        gp_error_set(err, shown, 0, 0, "out of memory");
        return NULL;
    }
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        char suffix[16];
        if (gp_random_hex(suffix, 4, NULL) != 0) break;
        snprintf(tmp, n, "%s.gpuop-tmp-%s", name, suffix);
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) break;
    }
    bool ok = fd >= 0 && fchmod(fd, mode) == 0 && write_all(fd, text, len) && fsync(fd) == 0;
    if (fd >= 0) ok = close(fd) == 0 && ok;
    if (ok) return tmp;
    gp_error_set(err, shown, 0, 0, "cannot write: %s", strerror(errno));
    if (fd >= 0) unlinkat(dirfd, tmp, 0);
    free(tmp);
    return NULL;
}

int gp_write_atomic_at(int dirfd, const char *name, const char *shown, const char *text, size_t len,
                       mode_t mode, gp_error *err)
{
    char *tmp = write_temp_at(dirfd, name, shown, text, len, mode, err);
    if (!tmp) return -1;
    /* renameat replaces a link named `name` itself, never what it names */
    int rc = renameat(dirfd, tmp, dirfd, name);
    if (rc != 0) {
        gp_error_set(err, shown, 0, 0, "cannot write: %s", strerror(errno));
        unlinkat(dirfd, tmp, 0);
    }
    free(tmp);
    if (rc == 0) fsync(dirfd); /* the rename is done; a failed sync loses nothing now */
    return rc == 0 ? 0 : -1;
}

int gp_create_new_at(int dirfd, const char *name, const char *shown, const char *text, size_t len,
                     mode_t mode, gp_error *err)
{
    char *tmp = write_temp_at(dirfd, name, shown, text, len, mode, err);
    if (!tmp) return -1;
    /* linkat() never replaces: a file that appeared meanwhile stays. */
    int rc = linkat(dirfd, tmp, dirfd, name, 0) == 0 ? 0 : errno == EEXIST ? 1 : -1;
    int link_errno = errno;
    unlinkat(dirfd, tmp, 0);
    if (rc < 0 && (link_errno == EPERM || link_errno == ENOTSUP || link_errno == EOPNOTSUPP)) {
        /* a file system without hard links: exclusive create, then write */
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0 && errno == EEXIST) {
            rc = 1;
        } else if (fd >= 0) {
            bool ok = write_all(fd, text, len) && fsync(fd) == 0;
            rc = close(fd) == 0 && ok ? 0 : -1;
            if (rc < 0) unlinkat(dirfd, name, 0);
        }
        link_errno = errno;
    }
    if (rc < 0) gp_error_set(err, shown, 0, 0, "cannot write: %s", strerror(link_errno));
    free(tmp);
    if (rc == 0) fsync(dirfd);
    return rc;
}

char *gp_write_backup_at(int dirfd, const char *name, const char *shown, const char *text,
                         size_t len, mode_t mode, gp_error *err)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
    size_t cap = strlen(name) + 64, shown_cap = strlen(shown) + 64;
    char *backup = malloc(cap), *shown_backup = malloc(shown_cap);
    for (int i = 1; backup && shown_backup && i < 1000; i++) {
        char suffix[64];
        if (i == 1)
            snprintf(suffix, sizeof suffix, ".gpuop-backup-%s", stamp);
        else
            snprintf(suffix, sizeof suffix, ".gpuop-backup-%s-%d", stamp, i);
        snprintf(backup, cap, "%s%s", name, suffix);
        snprintf(shown_backup, shown_cap, "%s%s", shown, suffix);
        int fd = openat(dirfd, backup, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0 && errno == EEXIST) continue;
        if (fd < 0) break;
        bool ok = write_all(fd, text, len) && fsync(fd) == 0;
        ok = close(fd) == 0 && ok;
        if (ok) {
            free(backup);
            return shown_backup;
        }
        unlinkat(dirfd, backup, 0);
        break;
    }
    gp_error_set(err, shown_backup ? shown_backup : shown, 0, 0, "cannot write the backup: %s",
                 strerror(errno));
    free(backup);
    free(shown_backup);
    return NULL;
}

/* ---- writing by path ------------------------------------------------------- */

int gp_write_atomic(const char *path, const char *text, size_t len, mode_t mode, gp_error *err)
{
    const char *name;
    int dirfd = open_parent(path, &name, err);
    if (dirfd < 0) return -1;
    int rc = gp_write_atomic_at(dirfd, name, path, text, len, mode, err);
    close(dirfd);
    return rc;
}

int gp_create_new(const char *path, const char *text, size_t len, mode_t mode, gp_error *err)
{
    const char *name;
    int dirfd = open_parent(path, &name, err);
    if (dirfd < 0) return -1;
    int rc = gp_create_new_at(dirfd, name, path, text, len, mode, err);
    close(dirfd);
    return rc;
}

char *gp_write_backup(const char *path, const char *text, size_t len, mode_t mode, gp_error *err)
{
    const char *name;
    int dirfd = open_parent(path, &name, err);
    if (dirfd < 0) return NULL;
    char *backup = gp_write_backup_at(dirfd, name, path, text, len, mode, err);
    close(dirfd);
    return backup;
}

/* ---- directories beneath a root --------------------------------------------- */

int gp_open_beneath(const char *root, const char *rel, bool create, mode_t mode, gp_error *err)
{
    int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        gp_error_set(err, root, 0, 0, "cannot open the directory: %s", strerror(errno));
        return -1;
    }
    char *copy = strdup(rel);
    if (!copy) {
        close(fd);
        gp_error_set(err, root, 0, 0, "out of memory");
        return -1;
    }
    char *save = NULL;
    for (char *part = strtok_r(copy, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
        if (strcmp(part, ".") == 0 || strcmp(part, "..") == 0) {
            gp_error_set(err, root, 0, 0, "'%s' leaves the directory", rel);
            goto fail;
        }
        int next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && errno == ENOENT && create) {
            if (mkdirat(fd, part, mode) != 0 && errno != EEXIST) {
                gp_error_set(err, root, 0, 0, "cannot create the directory %s: %s", rel,
                             strerror(errno));
                goto fail;
            }
            next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            struct stat st;
            bool link = fstatat(fd, part, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
            if (link)
                gp_error_set(err, root, 0, 0,
                             "%s: '%s' is a symbolic link; nothing is written through one", rel,
                             part);
            else
                gp_error_set(err, root, 0, 0, "%s: cannot open '%s': %s", rel, part,
                             strerror(errno));
            goto fail;
        }
        close(fd);
        fd = next;
    }
    free(copy);
    return fd;
fail:
    free(copy);
    close(fd);
    return -1;
}
