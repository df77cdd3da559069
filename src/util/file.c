#include "util/file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
