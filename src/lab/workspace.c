#include "lab/workspace.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab/incident_files.h"
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

int lab_write_keeping(const char *path, const char *text, size_t len, mode_t mode, bool force_mode,
                      char **backup, gp_error *err)
{
    *backup = NULL;
    struct stat st;
    if (stat(path, &st) != 0) return gp_write_atomic(path, text, len, mode, err);
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
        *backup = gp_write_backup(path, old, old_len, old_mode, err);
        rc = *backup ? gp_write_atomic(path, text, len, new_mode, err) : -1;
    }
    free(old);
    return rc;
}

static int create_in(const char *root, const char *rel, const char *text, size_t len, gp_error *err)
{
    char *path = lab_path(root, rel);
    if (!path) {
        gp_error_set(err, root, 0, 0, "out of memory");
        return -1;
    }
    int rc = gp_create_new(path, text, len, 0644, err);
    free(path);
    return rc < 0 ? -1 : 0;
}

int lab_workspace_init(const char *root, const lab_params *p, gp_error *err)
{
    static const char *const dirs[] = {"etc/containerd/conf.d", "bin", "k8s", "out", "evidence"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char *dir = lab_path(root, dirs[i]);
        int rc = dir ? gp_mkdirs(dir, 0755, err) : -1;
        if (!dir) gp_error_set(err, root, 0, 0, "out of memory");
        free(dir);
        if (rc != 0) return -1;
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
