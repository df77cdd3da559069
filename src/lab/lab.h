/* The GPU incident lab (../shared/design/lab.md): a workspace, eight steps,
 * a grader that judges parsed files, script behaviour and live cluster
 * state, and a solver built on gpuop's own field tools.
 *
 * The grader's result is JSON, the shape `gpuop lab check -o json` prints:
 *   {"step": N, "title": "...", "passed": bool,
 *    "conditions": [{"code", "passed", "where", "expected", "observed", "hint"}]}
 * Titles, hints and the fixed words of expected and observed are in the
 * reader's language (the grader translates them, as gp_error_set does);
 * codes and `where` stay the same in every language, for scripts. */
#ifndef GPUOP_LAB_LAB_H
#define GPUOP_LAB_LAB_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

#define LAB_STEPS 8

/* The numbers of one lab. Seed 0 gives exactly the seeds' story; another
 * seed draws other numbers that keep it (the new request never fits). */
typedef struct lab_params {
    uint64_t seed;
    int gpus_per_node;      /* 4 */
    int replicas;           /* 5 */
    char gpu_model[64];     /* "NVIDIA-A100-SXM4-40GB" (GFD product label form) */
    int gpu_memory_gib;     /* 40 */
    int node_cpu;           /* 16 */
    int node_memory_gib;    /* 32 */
    int node_pods;          /* 110 */
    int ds_request_gib;     /* 64: the toolkit DaemonSet's new memory request */
    char ds_old_memory[16]; /* "128Mi" */
    char ds_old_image[128]; /* nvcr.io/nvidia/k8s/container-toolkit:v1.16.2 */
    char ds_new_image[128]; /* ...:v1.17.0 */
} lab_params;

/* Seed 0 = the seeds' numbers; any other seed draws (deterministically). */
void lab_params_for_seed(uint64_t seed, lab_params *p);
/* R/.gpuop-lab.json holds the params; these read and write it. */
int lab_params_save(const char *root, const lab_params *p, gp_error *err);
int lab_params_load(const char *root, lab_params *p, gp_error *err);

/* Appends one condition to `conditions` (a JSON array). `where` is
 * FILE:LINE:COL or an object/field path; expected/observed are what the
 * learner sees, already translated; `hint` points at the lesson and at the
 * mistake found, never at the answer: a message id, translated here (a hint
 * formatted with values is formatted from a translated format, and
 * translating it again leaves it as it is). NULL strings become "". */
void lab_condition(json_t *conditions, const char *code, bool passed, const char *where,
                   const char *expected, const char *observed, const char *hint);

/* A step's result object from its conditions (passed = all passed); steals
 * `conditions`. `title` is a message id, translated here. */
json_t *lab_step_result(int step, const char *title, json_t *conditions);

/* Step titles, message ids, 1-based. */
const char *lab_step_title(int step);

#endif
