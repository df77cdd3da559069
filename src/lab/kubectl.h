/* The kubectl a learner needs for steps 5-8: on PATH, and new enough for
 * `kubectl patch --subresource=status` (step 6), which kubectl 1.24 added.
 * Debian 12's kubernetes-client is 1.20, so a learner may well have none or
 * one too old; the lab says so rather than let step 6 fail. */
#ifndef GPUOP_LAB_KUBECTL_H
#define GPUOP_LAB_KUBECTL_H

#include <stddef.h>

#include "util/error.h"

/* The oldest kubectl the steps work with: 1.24. */
#define LAB_KUBECTL_MIN_MAJOR 1
#define LAB_KUBECTL_MIN_MINOR 24
/* Where to get one (the Kubernetes project's own instructions). */
#define LAB_KUBECTL_INSTALL_URL "https://kubernetes.io/docs/tasks/tools/"

typedef enum lab_kubectl_state {
    LAB_KUBECTL_USABLE,  /* 1.24 or newer */
    LAB_KUBECTL_MISSING, /* no kubectl on PATH */
    LAB_KUBECTL_TOO_OLD, /* older than 1.24 */
    LAB_KUBECTL_UNKNOWN, /* there, but its version could not be read (err says why) */
} lab_kubectl_state;

typedef struct lab_kubectl {
    lab_kubectl_state state;
    int major, minor;
    char version[64]; /* clientVersion.gitVersion ("v1.32.4"), "" when unknown */
} lab_kubectl;

/* Reads the output of `kubectl version --client -o json`: the version from
 * clientVersion.gitVersion ("v1.20.15"), else from clientVersion.major and
 * .minor ("1", "32+"). Sets k->state to USABLE, TOO_OLD or UNKNOWN (err
 * then says what was wrong). */
void lab_kubectl_parse(const char *json, size_t len, lab_kubectl *k, gp_error *err);

/* Runs `kubectl version --client -o json` (kubectl found through PATH, with
 * a time limit) and reads it; any state, err set for UNKNOWN. */
void lab_kubectl_probe(lab_kubectl *k, gp_error *err);

#endif
