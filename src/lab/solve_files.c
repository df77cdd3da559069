#include "lab/solve_files.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "containerd/observed.h"
#include "containerd/script.h"
#include "lab/grade_files.h"
#include "lab/workspace.h"
#include "toml/toml.h"
#include "util/file.h"

/* ---- the files ---- */

/* A TOML basic string: the root may hold quotes or backslashes. */
static char *toml_string(const char *s)
{
    toml_value v = {.type = TOML_STRING, .len = (uint32_t)strlen(s), .u.s = s};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    int rc = toml_emit_value(&v, f);
    if (fclose(f) != 0 || rc != 0) {
        free(text);
        return NULL;
    }
    return text;
}

static char *main_config(const char *root)
{
    char *dir = lab_path(root, "etc/containerd/conf.d/*.toml");
    char *quoted = dir ? toml_string(dir) : NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = quoted ? open_memstream(&text, &len) : NULL;
    if (f) {
        fprintf(f,
                "version = 2\n"
                "imports = [%s]\n"
                "\n"
                "[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
                "  default_runtime_name = \"runc\"\n"
                "\n"
                "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
                "  runtime_type = \"io.containerd.runc.v2\"\n"
                "\n"
                "  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n"
                "    SystemdCgroup = true\n",
                quoted);
        if (fclose(f) != 0) {
            free(text);
            text = NULL;
        }
    }
    free(quoted);
    free(dir);
    return text;
}

/* What the NVIDIA container toolkit writes (../shared/containerd-cases,
 * inputs/lab): no version line of its own. */
static const char dropin_text[] =
    "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia]\n"
    "  runtime_type = \"io.containerd.runc.v2\"\n"
    "  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia.options]\n"
    "    BinaryName = \"/usr/bin/nvidia-container-runtime\"\n"
    "    SystemdCgroup = true\n";

static char *merge_lines(const char *root, gp_error *err)
{
    lab_merge_facts facts;
    if (lab_merge_predict(root, &facts, err) != 0) return NULL;
    char *loaded = lab_loaded_runtimes(root, err);
    char *text = NULL;
    size_t len = 0;
    FILE *f = loaded ? open_memstream(&text, &len) : NULL;
    if (f) {
        fprintf(f,
                "MAIN_RUNTIMES=%s\nDROPIN_RUNTIMES=%s\nCONFLICT=%s\nCONFLICT_TABLE=%s\n"
                "LOADED_RUNTIMES=%s\n",
                facts.main_runtimes, facts.dropin_runtimes, facts.conflict ? "yes" : "no",
                facts.conflict_table, loaded);
        if (fclose(f) != 0) {
            free(text);
            text = NULL;
        }
    }
    free(loaded);
    lab_merge_facts_free(&facts);
    return text;
}

static int write_in(const char *root, const char *rel, const char *text, mode_t mode,
                    bool force_mode, gp_error *err)
{
    char *backup = NULL;
    int rc = lab_write_keeping(root, rel, text, strlen(text), mode, force_mode, &backup, err);
    free(backup);
    return rc;
}

int lab_solve_file_step(int step, const char *root, const lab_params *p, gp_error *err)
{
    (void)p; /* the file steps use no number that a seed changes */
    char *text = NULL;
    switch (step) {
    case 1:
        text = main_config(root);
        break;
    case 2:
        text = strdup(dropin_text);
        break;
    case 3:
        text = merge_lines(root, err);
        break;
    case 4:
        text = cd_check_script("nvidia", NULL);
        break;
    default:
        gp_error_set(err, NULL, 0, 0, "step %d is not a file step (1-4)", step);
        return -1;
    }
    if (!text) {
        if (step != 3) gp_error_set(err, root, 0, 0, "out of memory");
        return -1;
    }
    static const char *const files[] = {LAB_MAIN_CONFIG, LAB_DROPIN, LAB_MERGE_OUT,
                                        LAB_CHECK_SCRIPT};
    int rc = write_in(root, files[step - 1], text, step == 4 ? 0755 : 0644, step == 4, err);
    free(text);
    return rc;
}
