/* Shared by the files of src/agents/ and its unit tests only. */
#ifndef GPUOP_AGENTS_AGENTS_INTERNAL_H
#define GPUOP_AGENTS_AGENTS_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "containerd/containerd.h"
#include "util/error.h"

/* What a daemon of each containerd line answers beyond its config
 * (src/agents/data/containerd-LINE.json, compiled in; its README says
 * where every value comes from):
 *   conditions   Status's RuntimeStatus conditions of a running CRI
 *   info         Status's info map, less "config" (built from the loaded
 *                config by ag_cri_config)
 *   config       info.config with no runtime: the CRI plugin's defaults,
 *                in the order the Go struct prints them where recorded
 *   runtime      one runtime's fields at their zero values
 *   runc_options 2.x: the options of the built-in runc runtime
 *   plugins      the introspection service's plugins, in load order:
 *                type, id, platforms, requires, exports, init_error
 *   cri_plugins  "type.id" of the plugins a CRI failure fails: the first
 *                with containerd's message, the others as its dependants
 * Borrowed, never NULL for a known line; parsed once (thread-safe). */
const json_t *ag_line_data(cd_family family);

/* The embedded data files (the "agents' data" block of CMakeLists.txt). */
extern const char ag_data_containerd_1_6[];
extern const size_t ag_data_containerd_1_6_len;
extern const char ag_data_containerd_1_7[];
extern const size_t ag_data_containerd_1_7_len;
extern const char ag_data_containerd_2_0[];
extern const size_t ag_data_containerd_2_0_len;
extern const char ag_data_containerd_2_1[];
extern const size_t ag_data_containerd_2_1_len;

/* The CRI plugin whose table holds the runtimes: io.containerd.grpc.v1.cri
 * in 1.x, io.containerd.cri.v1.runtime in 2.x. */
const char *ag_cri_plugin_id(cd_family family);

/* Status info.config as a daemon of this line prints it (Go's json.Marshal
 * of the CRI plugin's config, pkg/cri/config/config.go in 1.x,
 * internal/cri/config/config.go in 2.x) for `config`, the effective
 * config (predicted.config). The runtimes, the default runtime, the CNI
 * directories and the keys mapped in cri_config.c come from `config`;
 * every other key keeps the line's default. New reference, NULL when
 * memory runs out. */
json_t *ag_cri_config(cd_family family, const json_t *config);

/* The effective config of a prediction as JSON (cd_prediction_write_config):
 * a new reference, NULL when memory runs out. */
json_t *ag_prediction_config(const cd_prediction *p);

/* The dependant's message when the CRI runtime plugin failed (2.x): the
 * plugins that need it fail with "unable to load CRI runtime service
 * plugin dependency: " and its error (plugins/cri/cri.go,
 * internal/cri/server/podsandbox/controller.go). */
#define AG_CRI_DEPENDENCY_PREFIX "unable to load CRI runtime service plugin dependency: "

#endif
