#include "client/kubeconfig_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int kc_kubeconfig_write(const char *path, const char *name, const char *server_url,
                        const char *ca_base64, const char *token, gp_error *err)
{
    json_t *cfg =
        json_pack("{s:s, s:s, s:[{s:s, s:{s:s, s:s}}], s:[{s:s, s:{s:s}}], "
                  "s:[{s:s, s:{s:s, s:s}}], s:s, s:{}}",
                  "apiVersion", "v1", "kind", "Config", "clusters", "name", name, "cluster",
                  "server", server_url, "certificate-authority-data", ca_base64, "users", "name",
                  name, "user", "token", token, "contexts", "name", name, "context", "cluster",
                  name, "user", name, "current-context", name, "preferences");
    char *text = cfg ? json_dumps(cfg, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(cfg);
    if (!text) {
        gp_error_set(err, path, 0, 0, "out of memory");
        return -1;
    }
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    int fd = -1;
    if (tmp) {
        snprintf(tmp, n, "%s.tmp", path);
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    }
    int rc = -1;
    if (fd >= 0) {
        size_t len = strlen(text);
        bool ok = fchmod(fd, 0600) == 0 && write(fd, text, len) == (ssize_t)len &&
                  write(fd, "\n", 1) == 1 && fsync(fd) == 0;
        ok = close(fd) == 0 && ok;
        if (ok && rename(tmp, path) == 0) rc = 0;
    }
    if (rc != 0) {
        gp_error_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
        if (tmp) unlink(tmp);
    }
    free(tmp);
    free(text);
    return rc;
}
