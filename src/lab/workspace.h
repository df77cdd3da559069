/* The lab's workspace R: the learner's files, the lab's parameters and what
 * the lab ships as incident-day evidence (lab.md, "Workspace").
 *
 * Nothing here overwrites a file a learner wrote: init only creates what is
 * missing, and lab_write_keeping() backs a differing file up first. */
#ifndef GPUOP_LAB_WORKSPACE_H
#define GPUOP_LAB_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lab/lab.h"
#include "util/error.h"

/* Paths inside R. */
#define LAB_MAIN_CONFIG   "etc/containerd/config.toml"
#define LAB_DROPIN        "etc/containerd/conf.d/99-nvidia.toml"
#define LAB_MERGE_OUT     "out/merge.txt"
#define LAB_CHECK_SCRIPT  "bin/check-runtime.sh"
#define LAB_EVIDENCE_DUMP "evidence/containerd-config-dump.toml"
#define LAB_PARAMS_FILE   ".gpuop-lab.json"

/* $HOME/gpuop (the seeds' learner is root, whose HOME is /root); malloc'd,
 * NULL when no home directory is known. */
char *lab_default_root(void);

/* Whether `root` may be the lab's workspace, and its real path (malloc'd,
 * symbolic links resolved) in *real. Never /, the user's home directory
 * itself (HOME, or the account's) or a system directory (/etc, /usr, /var,
 * /usr/local, ..., anything under /proc, /sys or /dev). A directory that
 * exists must be a workspace the lab made (it holds R/.gpuop-lab.json) or,
 * with `may_create`, an empty one; one that does not exist is accepted
 * with `may_create` only. -1 with err saying why not. */
int lab_root_check(const char *root, bool may_create, char **real, gp_error *err);

/* True when R/.gpuop-lab.json is there: init would reuse the workspace. */
bool lab_workspace_exists(const char *root);

/* Creates R (and its parents) and, beneath it, R/etc/containerd/conf.d,
 * R/bin, R/k8s, R/out and R/evidence, and writes
 * R/evidence/containerd-config-dump.toml (lab_evidence_dump) and
 * R/.gpuop-lab.json (from p) when
 * they do not exist. An existing file is never touched, so running it again
 * changes nothing. Returns 0, or -1 with err. */
int lab_workspace_init(const char *root, const lab_params *p, gp_error *err);

/* "ROOT/REL", malloc'd (NULL when out of memory). */
char *lab_path(const char *root, const char *rel);

/* The JSON text of R/.gpuop-lab.json (params.c), malloc'd. */
char *lab_params_text(const lab_params *p);

/* Every write into the workspace goes through these: REL's directories are
 * walked from ROOT one at a time without following a symbolic link
 * (gp_open_beneath), so a workspace whose out/ or etc/containerd is a link
 * never gets a file outside ROOT; REL's own name is never written through
 * a link either. */

/* R/rel replaced atomically by `text` (directories created). */
int lab_ws_write(const char *root, const char *rel, const char *text, size_t len, mode_t mode,
                 gp_error *err);
/* R/rel removed; 0 when it was not there. */
int lab_ws_remove(const char *root, const char *rel, gp_error *err);

/* Writes R/rel atomically unless it already holds exactly `text`. A
 * differing file is first copied to R/rel.gpuop-backup-<UTC time> (its mode
 * kept), whose path is returned in *backup (malloc'd; NULL when no backup
 * was needed). `mode` applies to a new file; an existing file keeps its
 * mode unless `force_mode`. A symbolic link at R/rel is refused. */
int lab_write_keeping(const char *root, const char *rel, const char *text, size_t len, mode_t mode,
                      bool force_mode, char **backup, gp_error *err);

#endif
