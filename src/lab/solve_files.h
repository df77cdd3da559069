/* The reference answers of the file steps 1-4, written into the workspace
 * the way a careful learner would, and nothing of the learner's lost: a
 * differing file is backed up first (FILE.gpuop-backup-<UTC time>). */
#ifndef GPUOP_LAB_SOLVE_FILES_H
#define GPUOP_LAB_SOLVE_FILES_H

#include "lab/lab.h"
#include "util/error.h"

/* Step 1: the main config (imports naming R's conf.d by absolute path, so
 * the file also reads right outside the lab); 2: the toolkit's drop-in as
 * the toolkit writes it; 3: the five lines of `gpuop containerd merge -o lab
 * --observed R/evidence/...`, from the learner's own step 1 and 2 files and
 * the evidence (fails when those cannot be read); 4: the script `gpuop
 * containerd script nvidia` prints, mode 0755. Returns 0, or -1 with err
 * (also for a step outside 1-4). */
int lab_solve_file_step(int step, const char *root, const lab_params *p, gp_error *err);

#endif
