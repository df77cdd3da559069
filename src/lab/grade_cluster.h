/* Grading of the cluster steps 5-8 (lab.md): the learner's manifests and
 * output files against a snapshot of the live cluster
 * (lab_cluster_snapshot). Pure apart from reading the workspace's files:
 * every expected value comes from the cluster or the learner's own files,
 * never from a stored answer. */
#ifndef GPUOP_LAB_GRADE_CLUSTER_H
#define GPUOP_LAB_GRADE_CLUSTER_H

#include <jansson.h>

#include "lab/lab.h"

/* The step's result (lab_step_result's shape), or NULL for a step outside 5-8. */
json_t *lab_grade_cluster_step(int step, const char *root, const lab_params *p,
                               const json_t *snapshot);

#endif
