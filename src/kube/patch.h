/* JSON merge patch (RFC 7386) and JSON patch (RFC 6902) over jansson values.
 *
 * The two patch types `kubectl patch --type=merge` and `--type=json` send
 * (and `kubectl label` / `annotate`, which send merge patches). Both are pure:
 * they never modify their inputs and return a new value the caller owns.
 * Object keys keep jansson's insertion order: a replaced member stays where it
 * was, a new member is appended, so a patched object prints in the order a
 * reader expects. */
#ifndef GPUOP_KUBE_PATCH_H
#define GPUOP_KUBE_PATCH_H

#include <jansson.h>

#include "util/error.h"

/* RFC 7386: objects merge recursively, a null member deletes the key, and any
 * other patch (array, string, number, null itself) replaces the target whole.
 * A NULL target is treated as absent. Returns a new reference, NULL only when
 * memory runs out. */
json_t *kube_merge_patch(const json_t *target, const json_t *patch);

/* RFC 6902: applies the operations in `ops` (an array) to a copy of `doc`, in
 * order. Pointers follow RFC 6901 (~0 is '~', ~1 is '/'; "-" is the end of an
 * array, only valid where a new element goes). `test` compares numbers by
 * value, so 1 equals 1.0. Returns the patched document, or NULL with `err`
 * naming the failed operation (its 0-based index, op and path) and why; the
 * whole patch fails or none of it applies, and `doc` is never touched. */
json_t *kube_json_patch(const json_t *doc, const json_t *ops, gp_error *err);

#endif
