/* `gpuop lab incident`: the incident replayed by itself on the embedded
 * cluster's simulated nodes (src/agents/, `gpuop cluster up
 * --node-agents`), from a healthy cluster to the broken state the seeds
 * describe; the learner finds the layer that broke and repairs it with
 * kubectl and `gpuop node`, and the grader judges the live state: what the
 * nodes' containerd loaded, what the kubelet advertises, what runs.
 *
 * Scenarios (../shared/design/gpu-node-facts.md sections 3 to 6):
 *   containerd-1.6  the toolkit DaemonSet, in signal mode, writes the bare
 *                   drop-in of the seeds' step 2 (a variant no real toolkit
 *                   is: only the nvidia runtime table); containerd 1.6
 *                   replaces its whole CRI table with it, exits on SIGHUP,
 *                   comes back without CRI (runc, its default runtime, is
 *                   gone); the kubelet reports the runtime down, the nodes
 *                   go NotReady, the GPU jobs stay Pending
 *   not-restarted   the toolkit (v1.18) writes a right drop-in with restart
 *                   mode none: the files say nvidia, the running daemon does
 *                   not; the device plugin's sandbox cannot be created, no
 *                   GPU is advertised, the jobs stay Pending
 *   kernel-update   a node drained, rebooted into a new kernel and
 *                   uncordoned: the driver's module was not built for it,
 *                   the node is Ready without GPUs, its job Pending
 *
 * The learner's answer is R/out/incident.txt: LAYER=WORD and NODES=the
 * affected nodes, comma-separated (incident_grade.c says the words). */
#ifndef GPUOP_LAB_INCIDENT_H
#define GPUOP_LAB_INCIDENT_H

#include <jansson.h>
#include <stdbool.h>

#include "client/rest.h"
#include "lab/kube_ops.h"
#include "lab/lab.h"

typedef enum lab_scenario {
    LAB_SCENARIO_CONTAINERD_16,
    LAB_SCENARIO_NOT_RESTARTED,
    LAB_SCENARIO_KERNEL_UPDATE,
    LAB_SCENARIOS
} lab_scenario;

#define LAB_SCENARIO_DEFAULT LAB_SCENARIO_CONTAINERD_16

/* "containerd-1.6", "not-restarted", "kernel-update". */
const char *lab_scenario_name(lab_scenario s);
/* 0 with *out, or -1 for a name that is none of them. */
int lab_scenario_parse(const char *name, lab_scenario *out);
/* A message id: the scenario's title. */
const char *lab_scenario_title(lab_scenario s);

/* R/.gpuop-lab-incident.json: the scenario replayed and the embedded
 * cluster's data directory it runs in. */
typedef struct lab_incident {
    lab_scenario scenario;
    char data[4096];
} lab_incident;

int lab_incident_save(const char *root, const lab_incident *inc, gp_error *err);
/* 1 when there is none, 0 with *inc, -1 with err for a file that is not
 * one. */
int lab_incident_load(const char *root, lab_incident *inc, gp_error *err);

/* Makes DATA/nodes/NAME for the lab's nodes before the cluster starts, so
 * that their agents boot with the lab's GPUs (count and model); with
 * `nvidia_on_node0`, lab-node-0's containerd also loads the nvidia handler
 * (the eight steps on simulated nodes: step 6's device plugin needs it).
 * A file a node already has is kept. 0, or -1 with err. */
int lab_seed_nodes(const char *data, const lab_params *p, bool nvidia_on_node0, gp_error *err);

/* The task: what happened, what to find and fix, and what the answer file
 * holds. Translated, malloc'd. */
char *lab_incident_text(lab_scenario s, const lab_params *p, const char *root, const char *data);

/* Called with each line of the replay's timeline (translated). */
typedef void (*lab_say_fn)(const char *line, void *ud);

/* The replay on the cluster `c` (its lab nodes prepared): the healthy
 * cluster first, then what breaks it, until the broken state is reached.
 * 0, or -1 with err. */
int lab_incident_replay(kc_client *c, lab_scenario s, const lab_params *p, lab_say_fn say,
                        lab_progress_fn progress, void *ud, gp_error *err);

/* What the grader judges, read in one go:
 *   {"nodes": {NAME: Node|null}, "agents": {NAME: ag_agents_status|null},
 *    "jobs": [Pod of gpu-lab], "operator_pods": [Pod of gpu-operator],
 *    "toolkit": DaemonSet|null} */
kc_result lab_incident_snapshot(kc_client *c, json_t **snapshot, gp_error *err);

/* The grader's result (lab.h's step shape, step 0: not one of the eight;
 * titled with the scenario). */
json_t *lab_grade_incident(lab_scenario s, const char *root, const lab_params *p,
                           const json_t *snapshot);

/* The reference repair, through the REST client and the nodes' files under
 * DATA/nodes (backed up before they change), then R/out/incident.txt from
 * what the cluster showed. 0, or -1 with err. */
int lab_incident_solve(kc_client *c, lab_scenario s, const char *root, const char *data,
                       const lab_params *p, lab_progress_fn progress, void *ud, gp_error *err);

/* Names the grader and solver share. */
#define LAB_INCIDENT_FILE     "out/incident.txt"
#define LAB_INCIDENT_TOOLKIT  "nvidia-container-toolkit-daemonset"
#define LAB_INCIDENT_PLUGIN   "nvidia-device-plugin-daemonset"
#define LAB_INCIDENT_JOB      "cuda-job-" /* cuda-job-0..2, one a node */
#define LAB_INCIDENT_REBOOTED 1           /* kernel-update: lab-node-1 */
#define LAB_PATH_DAEMONSETS   "/apis/apps/v1/namespaces/gpu-operator/daemonsets"
#define LAB_PATH_AGENTS       "/gpuop/v1/agents"

#endif
