/* What `gpuop lab`'s verbs share (cmd_lab.c) with `gpuop lab incident`
 * (cmd_lab_incident.c). */
#ifndef GPUOP_CLI_LAB_CLI_H
#define GPUOP_CLI_LAB_CLI_H

#include <jansson.h>
#include <stdbool.h>

#include "cli/kube_cli.h"
#include "lab/lab.h"

typedef enum out_format { OUT_TEXT, OUT_JSON, OUT_JUNIT } out_format;

typedef struct lab_args {
    const char *verb;
    char *root; /* malloc'd */
    int step;   /* 0 = all */
    bool has_seed;
    unsigned long long seed;
    const char *data; /* embedded cluster's data directory */
    kc_options kube;
    bool external; /* --kubeconfig or --context given */
    out_format out;
    bool node_agents;     /* up: simulated nodes (src/agents/) */
    const char *sub;      /* incident: steps, check, solve, down (NULL: replay) */
    const char *scenario; /* incident --scenario */
} lab_args;

/* R's params, or a message saying to run `gpuop lab init`; an exit code. */
int cli_lab_load_params(const lab_args *a, lab_params *p);
/* `gpuop lab init`: the workspace made or reused. An exit code. */
int cli_lab_init(lab_args *a);
/* One line on stderr when kubectl is missing or too old for the lab. */
void cli_lab_warn_about_kubectl(void);
/* The grader's results, as `lab check` prints them. */
size_t cli_lab_passed_count(const json_t *list);
void cli_lab_print_text(const json_t *steps);
void cli_lab_print_junit(const json_t *steps);
/* Prints the grader's `steps` as -o says (`doc`, the whole JSON report,
 * for -o json) and returns the exit code: 2 when `cannot_tell` or the
 * report cannot be written, else 0 when every step passed, else 1. Steals
 * both (either may be NULL). */
int cli_lab_report(const lab_args *a, json_t *doc, json_t *steps, bool cannot_tell);
/* The progress callback of waits (lab_progress_fn). */
void cli_lab_show_progress(const char *what, int seconds, void *ud);
/* /proc/self/exe, malloc'd (NULL when unknown). */
char *cli_lab_self_exe(void);

/* The data directory of the eight steps' embedded cluster that `lab up`
 * recorded in R and `lab down` did not stop (malloc'd), or NULL; *agents
 * says whether it has node agents. */
char *cli_lab_embedded_data(const char *root, bool *agents);

/* `gpuop lab incident [steps|check|solve|down] [--scenario NAME]`. */
int cli_lab_incident(lab_args *a);

#endif
