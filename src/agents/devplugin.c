/* The NVIDIA device plugin's container on a simulated node (devplugin.h). */
#include "agents/devplugin.h"

#include <stdio.h>
#include <string.h>

#include "analyze/slots.h"
#include "kube/json.h"

static bool has_image(const json_t *c)
{
    const char *image = kube_str(c, "image");
    size_t n = strlen(AG_DEVPLUGIN_IMAGE);
    return strncmp(image, AG_DEVPLUGIN_IMAGE, n) == 0 && (image[n] == ':' || image[n] == '@');
}

static const json_t *plugin_container(const json_t *pod)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(kube_obj(pod, "spec"), "containers"), i,
                       c) if (has_image(c)) return c;
    return NULL;
}

bool ag_devplugin_in_pod(const json_t *pod, char *container, size_t cap)
{
    const json_t *c = plugin_container(pod);
    if (c) snprintf(container, cap, "%s", kube_str(c, "name"));
    return c != NULL;
}

static const char *env_of(const json_t *container, const char *name)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(container, "env"), i,
                       e) if (kube_str_is(e, "name", name)) return kube_str_or_null(e, "value");
    return NULL;
}

/* --config-file PATH or --config-file=PATH among command and args. */
static const char *config_arg(const json_t *c)
{
    static const char *const lists[] = {"command", "args"};
    for (size_t l = 0; l < 2; l++) {
        const json_t *list = json_object_get(c, lists[l]);
        for (size_t i = 0; i < json_array_size(list); i++) {
            const char *a = json_string_value(json_array_get(list, i));
            if (!a) continue;
            if (strncmp(a, "--config-file=", 14) == 0) return a + 14;
            if (strcmp(a, "--config-file") == 0)
                return json_string_value(json_array_get(list, i + 1));
        }
    }
    const char *env = env_of(c, "CONFIG_FILE");
    return env && *env ? env : NULL;
}

static const json_t *volume_named(const json_t *pod, const char *name)
{
    const json_t *volumes = json_object_get(kube_obj(pod, "spec"), "volumes");
    return kube_find(volumes, "name", name);
}

static const json_t *configmap_named(const json_t *configmaps, const char *ns, const char *name)
{
    size_t i;
    const json_t *cm;
    json_array_foreach(configmaps, i, cm)
    {
        const json_t *m = kube_obj(cm, "metadata");
        if (kube_str_is(m, "name", name) && kube_str_is(m, "namespace", ns)) return cm;
    }
    return NULL;
}

/* The ConfigMap volume mounted by `c` at `dir` (exactly) or above `path`
 * (*rel then the rest of the path); NULL when none. */
static const json_t *mounted(const json_t *pod, const json_t *c, const char *dir, const char *path,
                             const char **rel)
{
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(c, "volumeMounts"), i, m)
    {
        const char *at = kube_str(m, "mountPath");
        size_t n = strlen(at);
        while (n > 1 && at[n - 1] == '/')
            n--;
        bool hit = dir ? strncmp(at, dir, n) == 0 && (dir[n] == '\0' || strcmp(dir + n, "/") == 0)
                       : strncmp(path, at, n) == 0 && path[n] == '/';
        if (!hit) continue;
        const json_t *v = volume_named(pod, kube_str(m, "name"));
        if (!json_object_get(v, "configMap")) continue;
        if (rel) *rel = path + n + 1;
        return v;
    }
    return NULL;
}

/* The ConfigMap a volume names, or an error as the kubelet's mount says. */
static const json_t *volume_configmap(const json_t *pod, const json_t *volume,
                                      const json_t *configmaps, gp_error *err)
{
    const char *name = kube_str(kube_obj(volume, "configMap"), "name");
    const char *ns = kube_str(kube_obj(pod, "metadata"), "namespace");
    const json_t *cm = configmap_named(configmaps, ns, name);
    if (!cm)
        gp_error_set(err, NULL, 0, 0,
                     "MountVolume.SetUp failed for volume \"%s\" : configmap \"%s\" not found",
                     kube_str(volume, "name"), name);
    return cm;
}

/* The key of an items entry mapped to `rel`, else rel itself. */
static const char *item_key(const json_t *volume, const char *rel)
{
    size_t i;
    const json_t *item;
    json_array_foreach(json_object_get(kube_obj(volume, "configMap"), "items"), i, item)
    {
        if (kube_str_is(item, "path", rel)) return kube_str(item, "key");
    }
    return rel;
}

/* Which config the plugin reads, into `in`. -1 with err. */
static int choose_config(const json_t *pod, const json_t *plugin, const json_t *configmaps,
                         an_slots_input *in, gp_error *err)
{
    static const char *const lists[] = {"containers", "initContainers"};
    for (size_t l = 0; l < 2; l++) {
        size_t i;
        const json_t *c;
        json_array_foreach(json_object_get(kube_obj(pod, "spec"), lists[l]), i, c)
        {
            const char *srcdir = env_of(c, "CONFIG_FILE_SRCDIR");
            if (!srcdir || !*srcdir) continue;
            const json_t *v = mounted(pod, c, srcdir, NULL, NULL);
            if (!v) {
                gp_error_set(err, NULL, 0, 0,
                             "container %s: no ConfigMap is mounted at CONFIG_FILE_SRCDIR %s",
                             kube_str(c, "name"), srcdir);
                return -1;
            }
            in->configmap = volume_configmap(pod, v, configmaps, err);
            in->default_config = env_of(c, "DEFAULT_CONFIG");
            in->fallbacks = env_of(c, "FALLBACK_STRATEGIES");
            return in->configmap ? 0 : -1;
        }
    }
    const char *path = config_arg(plugin);
    if (!path) return 0;
    const char *rel = NULL;
    const json_t *v = mounted(pod, plugin, NULL, path, &rel);
    if (!v) {
        gp_error_set(err, NULL, 0, 0,
                     "unable to load config: unable to read config file %s: no ConfigMap of the "
                     "pod holds it",
                     path);
        return -1;
    }
    in->configmap = volume_configmap(pod, v, configmaps, err);
    in->key = item_key(v, rel);
    return in->configmap ? 0 : -1;
}

int ag_devplugin_resources(const json_t *pod, const json_t *node, const json_t *configmaps,
                           int gpus, const char *model, ag_resource *out, size_t cap, size_t *n,
                           gp_error *err)
{
    *n = 0;
    const json_t *plugin = plugin_container(pod);
    if (!plugin) {
        gp_error_set(err, NULL, 0, 0, "the pod runs no device plugin");
        return -1;
    }
    if (gpus == 0) return 0; /* NVML finds no device: it registers nothing */
    an_slots_input in = {.node = node, .gpus = gpus, .gpu_model = model};
    if (choose_config(pod, plugin, configmaps, &in, err) != 0) return -1;
    json_t *report = an_slots(&in, err);
    if (!report) return -1;
    const json_t *cfg_err = json_object_get(report, "config_error");
    if (json_is_object(cfg_err)) {
        const char *log = kube_str_or_null(cfg_err, "plugin_log");
        gp_error_set(err, NULL, 0, 0, "%s", log ? log : kube_str(cfg_err, "message"));
        json_decref(report);
        return -1;
    }
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(report, "resources"), i, r)
    {
        const char *name = kube_str_or_null(r, "resource_served");
        const json_t *count = json_object_get(r, "advertised_computed");
        if (!name || !json_is_integer(count) || *n == cap) continue;
        snprintf(out[*n].name, sizeof out[*n].name, "%s", name);
        out[*n].count = json_integer_value(count);
        (*n)++;
    }
    json_decref(report);
    return 0;
}
