/* The small REST moves the lab's cluster code shares (labcluster.c, the
 * solver, the incident): a GET that may find nothing, a delete that waits
 * until the object is gone, an apply, and a wait that tells its progress. */
#ifndef GPUOP_LAB_KUBE_OPS_H
#define GPUOP_LAB_KUBE_OPS_H

#include <jansson.h>
#include <stdbool.h>

#include "client/rest.h"

/* Called about once a second while something waits for the cluster:
 * `what` is a translated sentence, `seconds` how long it has waited. */
typedef void (*lab_progress_fn)(const char *what, int seconds, void *ud);

void lab_sleep_ms(long ms);

/* GET; KC_OK with *out NULL when the object does not exist. */
kc_result lab_kube_get_optional(kc_client *c, const char *path, json_t **out, gp_error *err);

/* Deletes (background propagation) and waits, up to a minute, until the
 * object is gone: a reset followed by a solve never meets a Terminating
 * namespace. KC_OK when it is gone or never was. */
kc_result lab_kube_delete_and_wait(kc_client *c, const char *path, gp_error *err);

/* Creates obj at `collection`, or, when it exists, merges it over the live
 * object (what `kubectl apply` amounts to for these small objects). A live
 * object that `differs` (may be NULL) says cannot be patched into shape (a
 * RuntimeClass's handler, a pod's spec are immutable) is deleted and
 * created again. 0, or -1 with err. */
int lab_kube_apply(kc_client *c, const char *collection, const char *path, const json_t *obj,
                   bool (*differs)(const json_t *live), gp_error *err);

/* Polls `done` every 200 ms for up to `seconds`, telling `progress` (may be
 * NULL) once a second. 1 when done, 0 on a timeout (err says what timed
 * out), -1 when `done` failed (it set err). */
typedef int (*lab_poll_fn)(void *ctx);
int lab_kube_wait(const char *what, int seconds, lab_poll_fn done, void *ctx,
                  lab_progress_fn progress, void *ud, gp_error *err);

#endif
