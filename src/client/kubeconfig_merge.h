/* Putting gpuop's context into the user's own kubeconfig, and taking it out
 * again, as kind and kwokctl do: `gpuop cluster up` makes plain `kubectl`
 * talk to the embedded server, `gpuop cluster down` undoes it.
 *
 * The user's file is theirs: only the clusters, users and contexts entries
 * with gpuop's name are added, replaced or removed, and current-context is
 * switched. Every other entry and every key gpuop does not know
 * (preferences, extensions) is kept with its value and order; comments are
 * not (libyaml does not keep them, and kubectl itself drops them too).
 * Before a changed file is replaced, its old bytes are copied to
 * FILE.gpuop-backup-<UTC time>; the new file is written atomically, 0600.
 * While it works, FILE.lock is held, the lock file kubectl itself uses, so
 * a concurrent `kubectl config` cannot lose either write. */
#ifndef GPUOP_CLIENT_KUBECONFIG_MERGE_H
#define GPUOP_CLIENT_KUBECONFIG_MERGE_H

#include <jansson.h>

#include "util/error.h"

typedef enum kc_merge_outcome {
    KC_MERGE_UNCHANGED = 0, /* the file already said so: nothing written, no backup */
    KC_MERGE_WRITTEN,       /* the file was written (after a backup if it existed) */
    KC_MERGE_NOT_OURS,      /* unmerge: the user entry holds another token; left alone */
} kc_merge_outcome;

typedef struct kc_merge_result {
    kc_merge_outcome outcome;
    char *previous_context; /* merge: current-context before it, NULL if none */
    char *backup;           /* the backup's path when one was written, else NULL */
} kc_merge_result;

void kc_merge_result_free(kc_merge_result *r);

/* The file a merge goes to: `explicit_path` when not NULL, else the first
 * entry of $KUBECONFIG (split on ':'), else ~/.kube/config. A malloc'd
 * path, or NULL with err filled when none can be named ($HOME unset). */
char *kc_kubeconfig_user_path(const char *explicit_path, gp_error *err);

/* Copies the clusters, users and contexts entries named `name` from
 * `source` (a kubeconfig as JSON, e.g. the one gpuop-apiserver wrote) into
 * the kubeconfig at `path`, replacing any entries of that name in place (or
 * appending them), and sets current-context to `name`. A missing or empty
 * file is created with apiVersion v1 and kind Config. A file that is not
 * YAML, or whose clusters, users or contexts is not a list, is an error
 * located at FILE:LINE:COL, and nothing is written. */
int kc_kubeconfig_merge(const char *path, const char *name, const json_t *source,
                        kc_merge_result *out, gp_error *err);

/* Removes the entries named `name` from the kubeconfig at `path`. When
 * `owner_token` is not NULL and the user entry `name` carries another token,
 * the entries belong to another gpuop cluster and are left alone
 * (KC_MERGE_NOT_OURS). When current-context is `name`, it becomes
 * `restore_context` if that context exists in the file, and is removed
 * otherwise; any other current-context is left as it is. A missing file is
 * KC_MERGE_UNCHANGED. */
int kc_kubeconfig_unmerge(const char *path, const char *name, const char *owner_token,
                          const char *restore_context, kc_merge_result *out, gp_error *err);

#endif
