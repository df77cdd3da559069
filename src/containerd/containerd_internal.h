/* Shared by the files of the containerd module: the configuration tree and
 * the steps of cd_predict(). Nothing outside src/containerd/ includes it. */
#ifndef GPUOP_CONTAINERD_CONTAINERD_INTERNAL_H
#define GPUOP_CONTAINERD_CONTAINERD_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "containerd/cfg_internal.h"
#include "containerd/containerd.h"
#include "util/arena.h"
#include "util/error.h"

/* The steps of cd_predict() (load.c, merge.c, analyze.c, defaults.c) and the
 * helpers they share. */
void cd_note_add(gp_arena *a, cd_notes *notes, const char *file, uint32_t line, uint32_t col,
                 const char *key, const char *code, const char *fmt, ...) GP_PRINTF(8, 9);
char *cd_strdup(gp_arena *a, const char *s);
char *cd_printf(gp_arena *a, const char *fmt, ...) GP_PRINTF(2, 3);
int cd_load(cd_prediction *p, const cd_options *opt, gp_error *err);
void cd_merge(cd_prediction *p);
void cd_analyze(cd_prediction *p);
/* The built-in defaults that matter for this version, as a config tree. */
cd_node *cd_defaults(cd_prediction *p);
/* Whether the CRI plugin of this line (1.x io.containerd.grpc.v1.cri, 2.x
 * io.containerd.cri.v1.runtime) has the setting `key`, at the top of its
 * section or (in_containerd) in its `containerd` table. */
bool cd_cri_key_known(cd_family f, bool in_containerd, const char *key, size_t len);
/* A leaf holding a value parsed from TOML text, e.g. "['/opt/cni/bin']". */
cd_node *cd_leaf_from_text(cd_prediction *p, const char *key, const char *value_toml,
                           cd_origin origin);

#endif
