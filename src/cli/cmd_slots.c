/* gpuop slots: what time-slicing or MPS turns a node's GPUs into: slots,
 * guaranteed and shared memory, isolation, and the MIG layouts instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/slots.h"
#include "cli/cli.h"
#include "cli/kube_cli.h"
#include "util/file.h"

typedef struct slots_args {
    kc_options kube;
    an_format fmt;
    const char *config, *configmap, *node, *mig_config, *mig_configmap;
    an_slots_input in;
} slots_args;

static void slots_usage(FILE *out)
{
    fputs(_("Usage: gpuop slots [--config FILE | --configmap NS/NAME[:KEY]] [--node NAME]\n"
            "                   [--gpus N] [--gpu-model MODEL] [--gpu-memory MIB]\n"
            "                   [--resource NAME] [--plugin-version V] [-o text|json|lab]\n"
            "                   [--default-config KEY] [--fallbacks named,single,empty]\n"
            "                   [--mig-config FILE | --mig-configmap NS/NAME[:KEY]]\n"
            "                   [--mig-layout NAME] [CLUSTER OPTIONS]\n"
            "\n"
            "Reads the NVIDIA device plugin's sharing config (a file, or a ConfigMap\n"
            "key chosen as the config-manager chooses it), validates it as the\n"
            "plugin does, and prints for every resource it shares (or the one\n"
            "--resource names): devices, replicas, advertised slots, VRAM per device,\n"
            "VRAM guaranteed per slot (0 for time-slicing), shared VRAM, isolation,\n"
            "what happens to a pod asking for 2, and the model's MIG profiles. GPUs\n"
            "and model come from --gpus/--gpu-model, else the node's GPU Feature\n"
            "Discovery labels. Without :KEY the ConfigMap key is the node's\n"
            "nvidia.com/device-plugin.config label, else --default-config, else the\n"
            "fallbacks (default named,single, as the device plugin's Helm chart; the\n"
            "GPU Operator uses empty).\n"
            "A MIG resource (nvidia.com/mig-<profile>, or nvidia.com/gpu under the\n"
            "single strategy) counts MIG instances: the node's\n"
            "nvidia.com/mig-<profile>.count label, else --gpus times the instances\n"
            "per GPU of the MIG layout (a mig-parted config, the GPU Operator's\n"
            "default-mig-parted-config with key config.yaml; the layout is\n"
            "--mig-layout, else the node's nvidia.com/mig.config label), else at\n"
            "most --gpus times the profile's maximum.\n"
            "  -o lab   the seven lines of lab step 7 (the first resource)\n"
            "\n"
            "Exit status: 0 the config is valid (and the node agrees), 1 it is not\n"
            "or the node advertises another count, 2 cannot tell (with -o json, an\n"
            "error object on stdout).\n"),
          out);
    cli_kube_options_help(out);
}

static int parse_args(int argc, char **argv, slots_args *a)
{
    static const char *const valued[] = {
        "--config",     "--configmap",  "--node",           "--gpus",           "--gpu-model",
        "--gpu-memory", "--resource",   "--plugin-version", "--default-config", "--fallbacks",
        "-o",           "--mig-config", "--mig-configmap",  "--mig-layout",     NULL};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int k = cli_kube_option(argc, argv, &i, &a->kube);
        if (k < 0) return cli_kube_option_error("slots", k, arg);
        if (k > 0) continue;
        bool takes = false;
        for (size_t v = 0; valued[v]; v++)
            takes |= strcmp(arg, valued[v]) == 0;
        if (!takes) return cli_kube_usage("slots", _("unexpected argument '%s'"), arg);
        if (i + 1 >= argc) return cli_kube_usage("slots", _("%s needs a value"), arg);
        const char *value = argv[++i];
        if (strcmp(arg, "--config") == 0) {
            a->config = value;
        } else if (strcmp(arg, "--configmap") == 0) {
            a->configmap = value;
        } else if (strcmp(arg, "--node") == 0) {
            a->node = value;
        } else if (strcmp(arg, "--gpus") == 0) {
            a->in.gpus = atoi(value);
            if (a->in.gpus <= 0)
                return cli_kube_usage("slots", _("--gpus wants a positive number"));
        } else if (strcmp(arg, "--gpu-model") == 0) {
            a->in.gpu_model = value;
        } else if (strcmp(arg, "--gpu-memory") == 0) {
            a->in.gpu_memory_mib = atol(value);
            if (a->in.gpu_memory_mib <= 0)
                return cli_kube_usage("slots", _("--gpu-memory wants MiB, a positive number"));
        } else if (strcmp(arg, "--resource") == 0) {
            a->in.resource = value;
        } else if (strcmp(arg, "--plugin-version") == 0) {
            a->in.plugin_version = value;
        } else if (strcmp(arg, "--default-config") == 0) {
            a->in.default_config = value;
        } else if (strcmp(arg, "--fallbacks") == 0) {
            a->in.fallbacks = value;
        } else if (strcmp(arg, "--mig-config") == 0) {
            a->mig_config = value;
        } else if (strcmp(arg, "--mig-configmap") == 0) {
            a->mig_configmap = value;
        } else if (strcmp(arg, "--mig-layout") == 0) {
            a->in.mig_layout = value;
        } else if (cli_kube_format(value, true, &a->fmt) != 0) {
            return cli_kube_usage("slots", _("-o wants text, json or lab"));
        }
    }
    if (a->config && a->configmap)
        return cli_kube_usage("slots", _("--config and --configmap exclude each other"));
    if (a->mig_config && a->mig_configmap)
        return cli_kube_usage("slots", _("--mig-config and --mig-configmap exclude each other"));
    if (a->node && !cli_kube_name_ok("slots", "node", a->node)) return EXIT_CANNOT_TELL;
    if (a->configmap) {
        char name[512];
        snprintf(name, sizeof name, "%s", a->configmap);
        name[strcspn(name, ":")] = '\0';
        const char *slash = strchr(name, '/');
        if (slash && (size_t)(slash - name) == 0)
            return cli_kube_usage("slots", _("'%s' is not a valid %s name"), "", "namespace");
        if (!cli_kube_name_ok("slots", "ConfigMap", slash ? slash + 1 : name))
            return EXIT_CANNOT_TELL;
    }
    return 0;
}

/* NS/NAME[:KEY] -> the ConfigMap object, and the key when given. */
static kc_result fetch_configmap(kc_client *c, const char *spec, json_t **cm, char *key,
                                 size_t key_size, gp_error *err)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    char *colon = strchr(buf, ':');
    if (colon) {
        *colon = '\0';
        snprintf(key, key_size, "%s", colon + 1);
    }
    char *slash = strchr(buf, '/');
    const char *ns = slash ? buf : kc_client_config(c)->nspace;
    if (slash) *slash = '\0';
    char *ens = kc_escape(ns), *ename = kc_escape(slash ? slash + 1 : buf);
    char path[1024];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps/%s", ens, ename);
    free(ens);
    free(ename);
    return kc_get(c, path, cm, err);
}

static kc_result fetch_node(kc_client *c, const char *name, json_t **node, gp_error *err)
{
    char *e = kc_escape(name);
    char path[512];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", e);
    free(e);
    return kc_get(c, path, node, err);
}

static int run_slots(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i])) {
            slots_usage(stdout);
            return EXIT_HOLDS;
        }
    slots_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc != 0) return rc;
    gp_error err = {0};
    char *text = NULL, *mig_text = NULL, key[256] = "", mig_key[256] = "";
    json_t *cm = NULL, *mig_cm = NULL, *node = NULL;
    kc_client *c = NULL;
    if (a.config) {
        text = gp_read_file(a.config, &a.in.config_len, &err);
        if (!text) return cli_kube_report_error("input", &err, a.config);
        a.in.config_text = text;
        a.in.config_name = a.config;
    }
    if (a.mig_config) {
        mig_text = gp_read_file(a.mig_config, &a.in.mig_config_len, &err);
        if (!mig_text) {
            rc = cli_kube_report_error("input", &err, a.mig_config);
            goto out;
        }
        a.in.mig_config_text = mig_text;
        a.in.mig_config_name = a.mig_config;
    }
    if (a.configmap || a.mig_configmap || a.node) {
        if ((rc = cli_kube_connect(&a.kube, &c)) != EXIT_HOLDS) goto out;
        kc_result r = KC_OK;
        const char *what = a.configmap;
        if (a.configmap) r = fetch_configmap(c, a.configmap, &cm, key, sizeof key, &err);
        if (r == KC_OK && a.mig_configmap)
            what = a.mig_configmap,
            r = fetch_configmap(c, a.mig_configmap, &mig_cm, mig_key, sizeof mig_key, &err);
        if (r == KC_OK && a.node) what = a.node, r = fetch_node(c, a.node, &node, &err);
        if (r != KC_OK) {
            rc = cli_kube_fail_at(r, &err, what);
            goto out;
        }
        a.in.configmap = cm;
        a.in.mig_configmap = mig_cm;
        a.in.node = node;
        if (*key) a.in.key = key;
        if (*mig_key) a.in.mig_key = mig_key;
    }
    json_t *report = an_slots(&a.in, &err);
    if (!report) {
        rc = cli_kube_report_error("input", &err, "");
        goto out;
    }
    rc = cli_kube_print_report(report, a.fmt, an_slots_render);
    bool bad = !json_is_null(json_object_get(report, "config_error")) ||
               json_is_false(json_object_get(report, "advertised_agrees"));
    if (rc == EXIT_HOLDS && bad) rc = EXIT_DOES_NOT_HOLD;
    json_decref(report);
out:
    kc_client_free(c);
    json_decref(cm);
    json_decref(mig_cm);
    json_decref(node);
    free(text);
    free(mig_text);
    return rc;
}

int cli_cmd_slots(int argc, char **argv)
{
    cli_kube_errors_begin();
    return cli_kube_errors_end(run_slots(argc, argv), argc, argv, AN_SCHEMA_SLOTS);
}
