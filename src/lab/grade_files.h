/* Grading of the file steps 1-4 (lab.md): the learner's containerd files
 * parsed by the TOML parser, the step 3 verdict against what gpuop's
 * containerd module computes from those same files and what the evidence
 * dump shows, and the step 4 script run against a stand-in containerd. */
#ifndef GPUOP_LAB_GRADE_FILES_H
#define GPUOP_LAB_GRADE_FILES_H

#include <jansson.h>
#include <stdbool.h>

#include "containerd/containerd.h"
#include "lab/lab.h"
#include "util/error.h"

/* How long one run of the learner's check script may take. */
#define LAB_SCRIPT_TIMEOUT_MS 5000

/* The step's result (lab_step_result's shape). Each condition has a stable
 * code (main.version, dropin.nvidia.binary_name, merge.loaded_runtimes,
 * script.without_nvidia, ...); all are evaluated, except that a missing or
 * unparsable file gives its one *.exists or *.parse condition. gpuop_exe
 * (step 4 only) is the gpuop binary, run as the stand-in containerd.
 * NULL with err for a step outside 1-4 or when grading itself cannot run
 * (no temporary directory, no stand-in). */
json_t *lab_grade_file_step(int step, const char *root, const lab_params *p, const char *gpuop_exe,
                            gp_error *err);

/* Step 3's computed lines, from R's config.toml and the drop-in it imports,
 * read by containerd 1.7's rules (the same merge analysis as `gpuop
 * containerd merge -o lab`). 1.7 rather than the incident node's 1.6: it
 * reads a relative imports glob against the main file's directory, as a
 * learner means it, where 1.6 reads it against the daemon's working
 * directory; the lines do not differ otherwise. */
typedef struct lab_merge_facts {
    char *main_runtimes; /* comma-separated, sorted */
    char *dropin_runtimes;
    bool conflict;
    char *conflict_table; /* "" without a conflict */
} lab_merge_facts;

/* -1 with err when a file cannot be read or parsed, or the main config's
 * imports do not reach R/etc/containerd/conf.d/99-nvidia.toml. */
int lab_merge_predict(const char *root, lab_merge_facts *out, gp_error *err);
/* The prediction those lines come from (the solver renders it as `gpuop
 * containerd merge -o lab` does); NULL with err as above. */
cd_prediction *lab_merge_prediction(const char *root, gp_error *err);
void lab_merge_facts_free(lab_merge_facts *f);

/* LOADED_RUNTIMES: the runtime handlers of R's evidence dump, comma-separated
 * and sorted; malloc'd, or NULL with err. */
char *lab_loaded_runtimes(const char *root, gp_error *err);

#endif
