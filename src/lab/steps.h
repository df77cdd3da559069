/* The task text of each step (lab.md, worded after the Korean seed), with
 * the workspace's root and the lab's numbers filled in. */
#ifndef GPUOP_LAB_STEPS_H
#define GPUOP_LAB_STEPS_H

#include <stdbool.h>

#include "lab/lab.h"
#include "util/buf.h"

/* One paragraph is one message: a translator gets whole sentences and may
 * reorder the arguments (%2$s), which a sentence built from pieces forbids.
 * lab_text_para formats the translation of `fmt` (a message id; Korean
 * particles after a value chosen from it); lab_text_plain adds the
 * translation of a message that is not a format, so a '%' in it stays.
 * Paragraphs are separated by a blank line and end in a newline. */
void lab_text_para(gp_buf *out, const char *fmt, ...) GP_PRINTF(2, 3);
void lab_text_plain(gp_buf *out, const char *msg);

/* Translated paragraphs separated by blank lines, ending in a newline;
 * malloc'd. NULL for a step outside 1..LAB_STEPS or when out of memory.
 * `agents`: the cluster's nodes are simulated (`gpuop lab up
 * --node-agents`), and step 6 is the device plugin's, not a patch's. */
char *lab_step_text(int step, const lab_params *p, const char *root, bool agents);

#endif
