/* What a new embedded cluster starts with besides the four namespaces:
 * fake nodes (kwok's node template, managed by the fake kubelet) and extra
 * namespaces, from `gpuop cluster up --nodes N ...` or the `--lab` preset.
 * Everything is created through the API like a client would, and only when
 * missing, so a restart with the same options changes nothing. */
#ifndef GPUOP_LAB_CLUSTER_SHAPE_H
#define GPUOP_LAB_CLUSTER_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "apiserver/routes.h"
#include "util/error.h"

#define LAB_SHAPE_MAX_ITEMS 16

/* Marks a node as one of the lab's three (gpuop lab owns and reshapes it). */
#define LAB_NODE_ANNOTATION "gpuop.io/lab-node"

typedef struct lab_shape {
    int nodes;          /* how many fake nodes; 0 for none */
    const char *prefix; /* node names: PREFIX0, PREFIX1, ... */
    const char *cpu, *memory, *pods;
    const char *labels[LAB_SHAPE_MAX_ITEMS]; /* "key=value" */
    size_t label_count;
    const char *taints[LAB_SHAPE_MAX_ITEMS]; /* "key=value:Effect" or "key:Effect" */
    size_t taint_count;
    const char *runtime_handlers; /* comma-separated names the nodes report; default "runc" */
    const char *namespaces[LAB_SHAPE_MAX_ITEMS];
    size_t namespace_count;
    /* How the cluster behaves, passed the same way: */
    bool no_controllers; /* --no-controllers: the API server alone */
    bool runtime_check;  /* --kubelet-runtime-check: see controllers.h */
    bool lab;            /* --lab: nodes carry LAB_NODE_ANNOTATION */
    /* --node-agents: a simulated node behind every fake node (src/agents/
     * agents.h), under the data directory's nodes/ */
    bool node_agents;
    /* --node-monitor-grace-period: see controllers.h (0: the default) */
    int64_t node_monitor_grace_ms;
} lab_shape;

/* The defaults: no nodes; a node would be kwok-node-N with cpu 32, memory
 * 256Gi, pods 110 (kwokctl's template). */
void lab_shape_defaults(lab_shape *s);

/* The lab preset (lab.md): lab-node-0..2, cpu 16, memory 32Gi, pods 110,
 * untainted, handler runc only, namespace gpu-operator. */
void lab_shape_lab(lab_shape *s);

/* Parses one option of the cluster's shape (--nodes N, --node-cpu Q,
 * --node-memory Q, --node-pods N, --node-prefix P, --node-label K=V,
 * --node-taint K=V:EFFECT, --node-runtime-handlers A,B, --namespace NS,
 * --lab, --no-controllers, --kubelet-runtime-check, --node-agents, --node-monitor-grace-period D).
 * Returns how many arguments it used (1 or 2), 0 when argv[0] is not such an option, -1 with err
 * set when its value is bad. */
int lab_shape_option(lab_shape *s, int argc, char **argv, gp_error *err);

/* Node `index` of the shape as kwokctl's node template (k8s-semantics.md
 * 7.1), annotated kwok.x-k8s.io/node: fake; the caller owns it. The lab
 * creates its nodes on any cluster from the same template. */
json_t *lab_shape_node(const lab_shape *s, int index);

/* Creates what is missing. */
int lab_shape_apply(as_api *api, const lab_shape *s, gp_error *err);

#endif
