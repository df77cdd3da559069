/* The NVIDIA device plugin's config file (k8s-device-plugin api/config/v1),
 * read and judged the way the plugin reads it, and the choice of which
 * ConfigMap key a node's config-manager links to.
 *
 * Facts: /work/shared/design/gpu-node-facts.md sections 1.1, 1.2 and 1.5.
 * Error texts are the plugin's own, so an operator can grep its log for
 * them; every error and warning is located NAME:LINE:COL in the config text
 * when a position is known. */
#ifndef GPUOP_ANALYZE_DEVPLUGIN_CONFIG_H
#define GPUOP_ANALYZE_DEVPLUGIN_CONFIG_H

#include <jansson.h>
#include <stddef.h>

#include "util/error.h"

/* Parses and validates one config (YAML or JSON; only the first YAML
 * document is read, as sigs.k8s.io/yaml does). An empty text is the empty
 * config the config-manager links to /dev/null: valid, nothing shared.
 *
 * Returns the config as the plugin would run it (new reference):
 *
 *   {"version": "v1",
 *    "migStrategy": "none" | "single" | "mixed",
 *    "mpsRoot": "" ,
 *    "sharing": {
 *      "strategy": "none" | "time-slicing" | "mps",
 *      "block": "sharing.timeSlicing" | "sharing.mps" | null,
 *      "renameByDefault": false,
 *      "failRequestsGreaterThanOne": true | false | null (not written),
 *      "resources": [{"name": "nvidia.com/gpu", "replicas": 5,
 *                     "served": "nvidia.com/gpu" or "<name>.shared",
 *                     "line": 7, "col": 9}]},
 *    "warnings": ["NAME:LINE:COL: text", ...]}
 *
 * `rename` and `devices` are not in a resource: the plugin overrides them at
 * startup (served = name, or name.shared with renameByDefault), which the
 * warnings say. On a config the plugin would refuse, returns NULL with err
 * set to "NAME:LINE:COL: <the plugin's message>"; when `plugin_log` is not
 * NULL it receives (malloc'd) the whole line the plugin logs before it exits,
 * or NULL when the error is raised later than config parsing. */
json_t *an_dp_config_parse(const char *text, size_t len, const char *name, char **plugin_log,
                           gp_error *err);

/* Which key of a ConfigMap (an object as the API returns it; keys of data
 * and binaryData count, as files of the mounted volume) the config-manager
 * selects, in its order: `label` (the node's nvidia.com/device-plugin.config
 * value; NULL or "" = unset), then `default_config` (DEFAULT_CONFIG), then
 * `fallbacks`, a comma-separated FALLBACK_STRATEGIES list of "named" (a key
 * called "default"), "single" (the only key) and "empty" (no config). NULL
 * fallbacks means "named,single", the standalone Helm chart's; the GPU
 * Operator always uses "empty".
 *
 * On success returns 0, *key is the key (pointing into `configmap`), or NULL
 * for the empty config, and *how one of "label", "default", "named",
 * "single", "empty". Otherwise -1 with the config-manager's own error text:
 * "no configuration files available", "specified config X does not exist",
 * "unknown fallback strategy: X", "no config was set, no default was
 * provided, and all fallbacks failed". */
int an_dp_config_select(const json_t *configmap, const char *label, const char *default_config,
                        const char *fallbacks, const char **key, const char **how, gp_error *err);

/* "nvidia.com/" + name unless name already has that prefix, checked like
 * the plugin's NewResourceName: writes the full name into out (size bytes)
 * and returns 0, or -1 with the plugin's message in err (no position). */
int an_dp_resource_name(const char *name, char *out, size_t size, gp_error *err);

#endif
