/* Writes the controllers have sent and not yet seen in a snapshot.
 *
 * Why: a controller pass no longer waits for its writes (write_queue.h), so
 * the next pass can list a pod before its status patch or binding has
 * landed and would act on it again: bind it twice, or hand a second
 * address to a pod that already got one. client-go's expectations and
 * kube-scheduler's assumed pods solve the same problem. An entry says which
 * version of the object the write was computed from; the object is left
 * alone until a listing shows another version, or shows the store past the
 * point where the write landed (a write that changed nothing), or the write
 * failed (then the old state is current and it is acted on again).
 *
 * Thread-safe: workers report outcomes, the controllers' thread asks. */
#ifndef GPUOP_CONTROLLERS_INFLIGHT_INTERNAL_H
#define GPUOP_CONTROLLERS_INFLIGHT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ctl_inflight ctl_inflight;

ctl_inflight *ctl_inflight_new(void);
void ctl_inflight_free(ctl_inflight *t);

/* A write about `key` (any string naming one object) computed from its
 * version `based_rv`. `node` (or NULL) is the node the write puts a pod on
 * (a binding: the scheduler counts the pod there meanwhile, as
 * kube-scheduler counts an assumed pod), and `ip` (or NULL) an address it
 * hands out on that node, so that no other pod gets it meanwhile. */
void ctl_inflight_add(ctl_inflight *t, const char *key, uint64_t based_rv, const char *node,
                      const char *ip);

/* One write about `key` is done: ok when it succeeded, and the store had
 * reached `store_rv` once it had (any version at or after the write). */
void ctl_inflight_done(ctl_inflight *t, const char *key, bool ok, uint64_t store_rv);

/* Whether the object, seen at version `rv` in a listing taken when the
 * store was at `listed_rv`, still waits for a write: true while one is
 * being sent, or when the listing may be from before it landed. */
bool ctl_inflight_pending(ctl_inflight *t, const char *key, uint64_t rv, uint64_t listed_rv);

/* Forgets entries whose writes landed at or before `listed_rv` (a listing
 * taken then shows their outcome, or that the object is gone). */
void ctl_inflight_sweep(ctl_inflight *t, uint64_t listed_rv);

/* The node of a pending write about `key`, copied into buf; false when there
 * is none. */
bool ctl_inflight_node(ctl_inflight *t, const char *key, char *buf, size_t size);

/* fn(ud, node, ip) for each address handed out by a write still pending. */
void ctl_inflight_addresses(ctl_inflight *t, void (*fn)(void *ud, const char *node, const char *ip),
                            void *ud);

#endif
