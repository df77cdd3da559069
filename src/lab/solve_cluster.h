/* The reference solution of the cluster steps 5-8, through the REST client.
 *
 * Each step is brought to its end state from wherever the lab is: what is
 * already there and right is left alone, files the learner wrote are
 * backed up before they are replaced, and the answers in R/out come from
 * gpuop's own field tools (the nodes, slots and rollout analyzers) over
 * what the cluster shows, never from constants. */
#ifndef GPUOP_LAB_SOLVE_CLUSTER_H
#define GPUOP_LAB_SOLVE_CLUSTER_H

#include "client/rest.h"
#include "lab/kube_ops.h"
#include "lab/lab.h"

/* 0, or -1 with err. */
int lab_solve_cluster_step(int step, const char *root, const lab_params *p, kc_client *c,
                           lab_progress_fn progress, void *ud, gp_error *err);

#endif
