/* The task text of each step (lab.md, worded after the Korean seed), with
 * the workspace's root and the lab's numbers filled in. */
#ifndef GPUOP_LAB_STEPS_H
#define GPUOP_LAB_STEPS_H

#include "lab/lab.h"

/* Translated paragraphs separated by blank lines, ending in a newline;
 * malloc'd. NULL for a step outside 1..LAB_STEPS or when out of memory. */
char *lab_step_text(int step, const lab_params *p, const char *root);

#endif
