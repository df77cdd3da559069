/* Status info.config: the CRI plugin's in-memory config as the daemon
 * prints it (gpu-node-facts.md 4.4), built from what a start loaded.
 *
 * The shape is the line's (agents_internal.h: the recorded config of
 * each line with its runtimes taken out); the values that decide which
 * handlers serve and how come from the effective config. The TOML keys
 * map to Go's json tags as the CRI config structs name them (1.7
 * pkg/cri/config/config.go, 2.x internal/cri/config/config.go): a key this
 * line's struct does not have is not invented, since the template lacks
 * it. What containerd fills in when it validates the config (1.7
 * sandboxMode and 2.x sandboxer "podsandbox" for a runtime that sets
 * none: ValidatePluginConfig / ValidateRuntimeConfig) is filled here too,
 * so the loaded runtimes print as in ../shared/containerd-cases/cri-status/. */
#include <string.h>

#include "agents/agents_internal.h"

typedef struct key_map {
    const char *toml;
    const char *json;
} key_map;

/* A runtime table (containerd.runtimes.NAME). */
static const key_map runtime_keys[] = {
    {"runtime_type", "runtimeType"},
    {"runtime_path", "runtimePath"},
    {"runtime_engine", "runtimeEngine"},
    {"runtime_root", "runtimeRoot"},
    {"pod_annotations", "PodAnnotations"},
    {"container_annotations", "ContainerAnnotations"},
    {"privileged_without_host_devices", "privileged_without_host_devices"},
    {"privileged_without_host_devices_all_devices_allowed",
     "privileged_without_host_devices_all_devices_allowed"},
    {"base_runtime_spec", "baseRuntimeSpec"},
    {"cni_conf_dir", "cniConfDir"},
    {"cni_max_conf_num", "cniMaxConfNum"},
    {"snapshotter", "snapshotter"},
    {"sandbox_mode", "sandboxMode"},
    {"sandboxer", "sandboxer"},
    {"io_type", "io_type"},
    {"cgroup_writable", "cgroupWritable"},
};

/* The CRI plugin's own table. */
static const key_map plugin_keys[] = {
    {"enable_cdi", "enableCDI"},
    {"cdi_spec_dirs", "cdiSpecDirs"},
    {"enable_selinux", "enableSelinux"},
    {"sandbox_image", "sandboxImage"},
    {"systemd_cgroup", "systemdCgroup"},
    {"disable_apparmor", "disableApparmor"},
    {"enable_unprivileged_ports", "enableUnprivilegedPorts"},
    {"enable_unprivileged_icmp", "enableUnprivilegedICMP"},
    {"device_ownership_from_security_context", "device_ownership_from_security_context"},
};

static const key_map cni_keys[] = {
    {"bin_dir", "binDir"},          {"bin_dirs", "binDirs"},           {"conf_dir", "confDir"},
    {"max_conf_num", "maxConfNum"}, {"conf_template", "confTemplate"}, {"ip_pref", "ipPref"},
};

/* Copies the mapped keys `src` sets into `dst`, where dst has them. */
static void map_keys(json_t *dst, const json_t *src, const key_map *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_object_get(src, keys[i].toml);
        if (v && json_object_get(dst, keys[i].json))
            json_object_set_new(dst, keys[i].json, json_deep_copy(v));
    }
}

static void fill_empty(json_t *rt, const char *key, const char *value)
{
    const char *s = json_string_value(json_object_get(rt, key));
    if (s && !*s) json_object_set_new(rt, key, json_string(value));
}

static json_t *runtime_json(const json_t *line, cd_family family, const char *name,
                            const json_t *toml_rt)
{
    json_t *rt = json_deep_copy(json_object_get(line, "runtime"));
    if (!rt) return NULL;
    map_keys(rt, toml_rt, runtime_keys, sizeof runtime_keys / sizeof runtime_keys[0]);
    /* Options are a map the runtime's shim decodes; containerd keeps what
     * the files wrote. In 2.x the files merge into the built-in runc
     * entry, whose options hold every runc option (4.2). */
    const json_t *written = json_object_get(toml_rt, "options");
    json_t *options = NULL;
    const json_t *builtin = json_object_get(line, "runc_options");
    if (builtin && strcmp(name, "runc") == 0) {
        options = json_deep_copy(builtin);
        if (json_is_object(written)) json_object_update(options, (json_t *)written);
    } else if (json_is_object(written)) {
        options = json_deep_copy(written);
    }
    json_object_set_new(rt, "options", options ? options : json_null());
    if (family == CD_V1_7) fill_empty(rt, "sandboxMode", "podsandbox");
    if (!cd_is_v1(family)) fill_empty(rt, "sandboxer", "podsandbox");
    return rt;
}

static json_t *object_at(const json_t *o, const char *a, const char *b)
{
    json_t *x = json_object_get(o, a);
    return b ? json_object_get(x, b) : x;
}

static void set_path(json_t *cfg, const char *key, const char *dir, const char *plugin)
{
    if (!dir || !json_object_get(cfg, key)) return;
    json_t *v = plugin ? json_sprintf("%s/%s", dir, plugin) : json_string(dir);
    if (v) json_object_set_new(cfg, key, v);
}

json_t *ag_cri_config(cd_family family, const json_t *config)
{
    const json_t *line = ag_line_data(family);
    json_t *out = line ? json_deep_copy(json_object_get(line, "config")) : NULL;
    if (!out) return NULL;
    const char *plugin = ag_cri_plugin_id(family);
    const json_t *table = object_at(json_object_get(config, "plugins"), plugin, NULL);
    const json_t *ctd = json_object_get(table, "containerd");
    json_t *out_ctd = json_object_get(out, "containerd");

    map_keys(out, table, plugin_keys, sizeof plugin_keys / sizeof plugin_keys[0]);
    map_keys(json_object_get(out, "cni"), json_object_get(table, "cni"), cni_keys,
             sizeof cni_keys / sizeof cni_keys[0]);
    json_t *def = json_object_get(ctd, "default_runtime_name");
    if (json_is_string(def)) json_object_set_new(out_ctd, "defaultRuntimeName", json_copy(def));
    json_t *snap = json_object_get(ctd, "snapshotter");
    if (json_is_string(snap) && json_object_get(out_ctd, "snapshotter"))
        json_object_set_new(out_ctd, "snapshotter", json_copy(snap));

    json_t *runtimes = json_object();
    const char *name;
    json_t *rt;
    json_object_foreach((json_t *)json_object_get(ctd, "runtimes"), name, rt)
    {
        json_t *r = json_is_object(rt) ? runtime_json(line, family, name, rt) : NULL;
        if (r) json_object_set_new(runtimes, name, r);
    }
    json_object_set_new(out_ctd, "runtimes", runtimes);

    /* Where the daemon keeps its state, seen from the node (the plugin's
     * root and state directories are the daemon's, joined with its ID). */
    const char *root = json_string_value(json_object_get(config, "root"));
    const char *state = json_string_value(json_object_get(config, "state"));
    const char *address = json_string_value(object_at(config, "grpc", "address"));
    set_path(out, "containerdRootDir", root, NULL);
    set_path(out, "containerdEndpoint", address, NULL);
    set_path(out, "rootDir", root, plugin);
    set_path(out, "stateDir", state, plugin);
    return out;
}
