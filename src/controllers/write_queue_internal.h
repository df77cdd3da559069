/* Writes of the controllers, sent on worker threads while the controllers
 * go on deciding.
 *
 * Why: a write costs the API server a parse of the stored object, the
 * patch, validation, a serialization and a SQLite row, and the scheduler
 * and the kubelet make three of them a pod. Done in line they kept one core
 * busy and left the other idle; the API server already takes concurrent
 * writers (an update is computed outside the store lock and stored only if
 * the object has not moved, as kube-apiserver's GuaranteedUpdate does).
 *
 * Order: writes to one object go to one worker, in the order pushed
 * (a finalizer patch before the delete); a write can carry a follow-up that
 * is sent only when it succeeded (the Scheduled event after its binding).
 * ctl_wq_drain waits for everything pushed, so a controller pass ends with
 * its writes done, as when they were sent in line.
 *
 * Commits: a worker sends up to 64 writes, each answered as soon as the
 * store has it in memory, then waits once for their commit (store.h, group
 * commit); only then are they reported done. If that commit fails, the
 * whole batch is reported failed. */
#ifndef GPUOP_CONTROLLERS_WRITE_QUEUE_INTERNAL_H
#define GPUOP_CONTROLLERS_WRITE_QUEUE_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "apiserver/routes.h"

typedef struct ctl_wq_write ctl_wq_write;
typedef struct ctl_wq ctl_wq;

/* A request; body is taken over (may be NULL) and serialized now, on the
 * caller's thread: a JSON object shared with a worker would have its
 * reference counts raced (jansson's decrement has no acquire). NULL when
 * out of memory (the body is released then too). */
ctl_wq_write *ctl_wq_write_new(const char *method, const char *path, const char *query,
                               const char *content_type, json_t *body);
/* `next` is sent after `w`, and only when `w` got a 2xx. */
void ctl_wq_write_then(ctl_wq_write *w, ctl_wq_write *next);
void ctl_wq_write_free(ctl_wq_write *w);
/* done(ud, tag, ok) once w and its follow-ups are sent and committed (ok:
 * all of them succeeded), on the worker's thread. tag is copied. */
typedef void ctl_wq_write_done_fn(void *ud, const char *tag, bool ok);
void ctl_wq_write_notify(ctl_wq_write *w, ctl_wq_write_done_fn *done, void *ud, const char *tag);

/* workers 0 sends every write in line, on the caller's thread. */
ctl_wq *ctl_wq_new(as_api *api, size_t workers);
/* Sends or queues `w` (taken over). */
void ctl_wq_push(ctl_wq *q, ctl_wq_write *w);
/* Returns once every write pushed so far has been sent; how many of them
 * (follow-ups included) failed or were skipped since the last drain. */
size_t ctl_wq_drain(ctl_wq *q);
/* Drains, then stops the workers. */
void ctl_wq_free(ctl_wq *q);

#endif
