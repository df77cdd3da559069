#include "lab/solve_files.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "containerd/render.h"
#include "containerd/script.h"
#include "lab/grade_files.h"
#include "lab/incident_files.h"
#include "lab/workspace.h"
#include "toml/toml.h"
#include "util/buf.h"
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

/* The line of `text` that starts with `prefix`, or NULL. */
static const char *line_starting(const char *text, const char *prefix)
{
    const char *line = text;
    while (line && strncmp(line, prefix, strlen(prefix)) != 0) {
        line = strchr(line, '\n');
        if (line) line++;
    }
    return line;
}

/* The incident's main config with its imports naming R's conf.d by absolute
 * path, so that the file also reads right outside the lab. */
static char *main_config(const char *root, gp_error *err)
{
    char *dir = lab_path(root, "etc/containerd/conf.d/*.toml");
    const char *imports = line_starting(lab_main_config, "imports = ");
    if (!imports) {
        gp_error_set(err, "examples/incident/" LAB_MAIN_CONFIG, 0, 0,
                     "the imports of the main config do not reach %s", dir ? dir : root);
        free(dir);
        return NULL;
    }
    char *quoted = dir ? toml_string(dir) : NULL;
    free(dir);
    char *text = NULL;
    if (quoted) {
        const char *rest = strchr(imports, '\n');
        gp_buf out = {0};
        gp_buf_addn(&out, lab_main_config, (size_t)(imports - lab_main_config));
        gp_buf_addf(&out, "imports = [%s]\n", quoted);
        gp_buf_add(&out, rest ? rest + 1 : "");
        text = gp_buf_take(&out);
        free(quoted);
    }
    if (!text) gp_error_set(err, root, 0, 0, "out of memory");
    return text;
}

/* The five lines of `gpuop containerd merge -o lab --observed
 * R/evidence/...`, from the same prediction the grader uses and the same
 * renderer. */
static char *merge_lines(const char *root, gp_error *err)
{
    cd_prediction *p = lab_merge_prediction(root, err);
    char *dump = p ? lab_path(root, LAB_EVIDENCE_DUMP) : NULL;
    cd_observed o;
    if (!p || !dump || cd_observed_read(dump, &o, err) != 0) {
        if (p && !dump) gp_error_set(err, root, 0, 0, "out of memory");
        cd_prediction_free(p);
        free(dump);
        return NULL;
    }
    /* The renderer streams (the command prints it); the file's writer needs
     * the text itself. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    int rc = f ? cd_render_merge(f, p, &o, "--containerd", CD_RENDER_LAB) : -1;
    if (f && fclose(f) != 0) rc = -1;
    if (rc != 0) {
        free(text);
        text = NULL;
        gp_error_set(err, root, 0, 0, "out of memory");
    }
    cd_observed_free(&o);
    cd_prediction_free(p);
    free(dump);
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
        text = main_config(root, err);
        break;
    case 2:
        text = strdup(lab_dropin);
        if (!text) gp_error_set(err, root, 0, 0, "out of memory");
        break;
    case 3:
        text = merge_lines(root, err);
        break;
    case 4:
        text = cd_check_script("nvidia", NULL);
        if (!text) gp_error_set(err, root, 0, 0, "out of memory");
        break;
    default:
        gp_error_set(err, NULL, 0, 0, "step %d is not a file step (1-4)", step);
        return -1;
    }
    if (!text) return -1;
    static const char *const files[] = {LAB_MAIN_CONFIG, LAB_DROPIN, LAB_MERGE_OUT,
                                        LAB_CHECK_SCRIPT};
    int rc = write_in(root, files[step - 1], text, step == 4 ? 0755 : 0644, step == 4, err);
    free(text);
    return rc;
}
