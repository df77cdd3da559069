/* The READY, STATUS and RESTARTS columns of `kubectl get pods`: printPod of
 * pkg/printers/internalversion/printers.go (Kubernetes 1.32), which the API
 * server runs for a Table request, rule for rule. The embedded API server
 * prints its Table cells with it and the analyzers show the same STATUS
 * text (gpuop rollout, why-pending).
 *
 * STATUS starts as status.reason, else status.phase, and becomes
 * SchedulingGated when a PodScheduled condition says so. The init
 * containers come first, in status order: one that exited 0 is done, a
 * sidecar (restartPolicy Always) that has started is done and counts its
 * readiness; the first other one decides (Init:<terminated reason>,
 * Init:Signal:N, Init:ExitCode:N, Init:<waiting reason> unless
 * PodInitializing, else Init:i/n) and the pod is initializing. Unless it
 * is (or its Initialized condition is True anyway), the regular containers
 * are read last to first, so the first one has the last word: a waiting
 * reason, a terminated reason, Signal:N or ExitCode:N; a "Completed" pod
 * with a container still running and ready is Running (NotReady without a
 * Ready=True condition). Last, a pod being deleted is Unknown when the node
 * was lost (reason NodeLost) and Terminating unless its phase is terminal.
 *
 * READY is ready/total: the ready running containers and started ready
 * sidecars, over spec.containers plus the sidecars. RESTARTS sums
 * restartCount (of every init container while the pod initializes, else of
 * the sidecars and the regular containers) with the latest
 * lastState.terminated.finishedAt among those counted. */
#ifndef GPUOP_KUBE_POD_PRINT_H
#define GPUOP_KUBE_POD_PRINT_H

#include <jansson.h>
#include <stddef.h>

#include "kube/time.h"

typedef struct kube_pod_print {
    long long ready, total;
    long long restarts;
    kube_time last_restart; /* unset when no counted container restarted */
    /* STATUS is `prefix` followed by `reason`, or by `number` when reason is
     * NULL; read it with kube_pod_print_status. reason points into the pod
     * or is a literal. */
    const char *prefix; /* "" or "Init:" */
    const char *reason;
    char number[64]; /* "Signal:9", "ExitCode:137", "0/2" */
} kube_pod_print;

/* Reads `pod` (which must outlive `out`). */
void kube_pod_print_read(const json_t *pod, kube_pod_print *out);

/* The STATUS text into buf (at most `size` bytes, NUL included); returns
 * its full length, like snprintf. */
size_t kube_pod_print_status(const kube_pod_print *p, char *buf, size_t size);

/* Both at once: the STATUS text of `pod`. */
size_t kube_pod_status_text(const json_t *pod, char *buf, size_t size);

#endif
