/* The incident's reference repair (incident.h). It diagnoses as an
 * operator would, node by node, from what `gpuop node status` shows (the
 * agents' status), not from the scenario's name: the driver's module not
 * loaded, a CRI that fails on what the files say, or files that the
 * running daemon has not loaded. Then it repairs each broken node that
 * way, waits until the cluster is healthy and writes the answer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/node.h"
#include "kube/json.h"
#include "lab/incident.h"
#include "lab/incident_files.h"
#include "lab/labcluster.h"
#include "lab/workspace.h"
#include "util/buf.h"
#include "util/i18n.h"

typedef enum broken {
    BROKEN_NOT,
    BROKEN_DRIVER,        /* nvidia-driver */
    BROKEN_CONFIG,        /* containerd-config */
    BROKEN_NOT_RESTARTED, /* containerd-not-restarted */
} broken;

static const char *const LAYER_WORDS[] = {"", "nvidia-driver", "containerd-config",
                                          "containerd-not-restarted"};

typedef struct solver {
    kc_client *c;
    const char *root, *data;
    const lab_params *p;
    lab_scenario scenario; /* what is graded; the repair is diagnosed */
    lab_progress_fn progress;
    void *ud;
    gp_error *err;
    broken found[LAB_NODES];
} solver;

static json_t *agent(solver *s, int i)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", LAB_PATH_AGENTS, lab_node_name(i));
    json_t *st = NULL;
    if (kc_get(s->c, path, &st, s->err) != KC_OK) return NULL;
    return st;
}

/* What is broken on a node, from its agent's status. */
static broken diagnose(const json_t *st)
{
    if (!json_is_true(json_object_get(st, "driver_loaded"))) return BROKEN_DRIVER;
    const json_t *loaded = json_object_get(st, "loaded");
    const json_t *declared = json_object_get(st, "declared");
    const char *phase = kube_str_at(loaded, "phase"), *cri = kube_str_at(loaded, "cri");
    bool cri_up = phase && strcmp(phase, "running") == 0 && cri && strcmp(cri, "up") == 0;
    bool declared_ok = !kube_str_at(declared, "error") && !kube_str_at(declared, "cri_error") &&
                       kube_has_string(json_object_get(declared, "handlers"), "nvidia");
    if (!declared_ok &&
        (!cri_up || !kube_has_string(json_object_get(loaded, "handlers"), "nvidia")))
        return BROKEN_CONFIG;
    if (declared_ok && !kube_has_string(json_object_get(loaded, "handlers"), "nvidia"))
        return BROKEN_NOT_RESTARTED;
    return BROKEN_NOT;
}

static int post(solver *s, int i, const char *verb, json_t *body)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s/%s", LAB_PATH_AGENTS, lab_node_name(i), verb);
    kc_result r = kc_create(s->c, path, body, NULL, s->err);
    json_decref(body);
    return r == KC_OK ? 0 : -1;
}

static char *node_dir(solver *s, int i)
{
    return gp_format("%s/nodes/%s", s->data, lab_node_name(i));
}

/* containerd-config: a drop-in that keeps runc beside nvidia (the old one
 * backed up), and a restart. */
static int repair_config(solver *s, int i)
{
    char *dir = node_dir(s, i), *backup = NULL;
    int rc = dir ? lab_write_keeping(dir, AG_NODE_CONF_D "/99-nvidia.toml", lab_fixed_dropin,
                                     lab_fixed_dropin_len, 0644, false, &backup, s->err)
                 : -1;
    free(backup);
    free(dir);
    return rc == 0 ? post(s, i, "restart-containerd", json_object()) : -1;
}

/* nvidia-driver: what DKMS does, the module built for the booted kernel,
 * then a reboot. */
static int repair_driver(solver *s, int i)
{
    char *dir = node_dir(s, i);
    ag_node_state st;
    int rc = dir ? ag_node_state_read(dir, &st, s->err) : -1;
    if (rc == 0) {
        snprintf(st.driver_kernel, sizeof st.driver_kernel, "%s", st.kernel_version);
        rc = ag_node_state_write(dir, &st, s->err);
    }
    free(dir);
    return rc == 0 ? post(s, i, "reboot", json_pack("{s:b}", "kernelUpdate", 0)) : -1;
}

/* The toolkit's DaemonSet without the variant that writes the bare
 * drop-in: its next pods write one that keeps runc. */
static int repair_toolkit(solver *s)
{
    const char *path = LAB_PATH_DAEMONSETS "/" LAB_INCIDENT_TOOLKIT;
    json_t *ds = NULL;
    if (lab_kube_get_optional(s->c, path, &ds, s->err) != KC_OK) return -1;
    if (!ds) return 0;
    bool changed = false;
    size_t i, j;
    json_t *c, *e;
    /* kube_at looks, it does not change: the array is ds's own */
    json_t *containers = (json_t *)kube_at(ds, "spec.template.spec.containers");
    json_array_foreach(containers, i, c)
    {
        json_t *env = json_object_get(c, "env");
        for (j = json_array_size(env); j-- > 0;) {
            e = json_array_get(env, j);
            const char *n = kube_str_at(e, "name");
            if (n && strcmp(n, "GPUOP_TOOLKIT_VARIANT") == 0) {
                json_array_remove(env, j);
                changed = true;
            }
        }
    }
    kc_result r = changed ? kc_update(s->c, path, ds, NULL, s->err) : KC_OK;
    json_decref(ds);
    return r == KC_OK ? 0 : -1;
}

/* Healthy: every condition the grader judges on the cluster holds (the
 * answer is written after), and the toolkit has rolled out. */
static int healthy(void *ctx)
{
    solver *s = ctx;
    json_t *snap = NULL;
    if (lab_incident_snapshot(s->c, &snap, s->err) != KC_OK) return -1;
    json_t *report = lab_grade_incident(s->scenario, s->root, s->p, snap);
    bool ok = true;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(report, "conditions"), i, c)
    {
        const char *code = kube_str_at(c, "code");
        /* the answer is written after; here only the cluster counts */
        if (code && strncmp(code, "incident.answer.", 16) == 0) continue;
        ok = ok && json_is_true(json_object_get(c, "passed"));
    }
    const json_t *ds = json_object_get(snap, "toolkit");
    if (ds && !json_is_null(ds)) {
        long long gen = json_integer_value(kube_at(ds, "metadata.generation"));
        long long seen = json_integer_value(kube_at(ds, "status.observedGeneration"));
        long long want = json_integer_value(kube_at(ds, "status.desiredNumberScheduled"));
        long long updated = json_integer_value(kube_at(ds, "status.updatedNumberScheduled"));
        long long ready = json_integer_value(kube_at(ds, "status.numberReady"));
        ok = ok && gen == seen && updated == want && ready == want;
    }
    json_decref(report);
    json_decref(snap);
    return ok;
}

static int write_answer(solver *s)
{
    broken layer = BROKEN_NOT;
    gp_buf nodes = {0};
    for (int i = 0; i < LAB_NODES; i++) {
        if (s->found[i] == BROKEN_NOT) continue;
        if (layer == BROKEN_NOT) layer = s->found[i];
        if (nodes.len) gp_buf_addc(&nodes, ',');
        gp_buf_add(&nodes, lab_node_name(i));
    }
    if (layer == BROKEN_NOT) {
        gp_buf_free(&nodes);
        gp_error_set(s->err, NULL, 0, 0,
                     "no node shows a broken layer: nothing to repair (was the incident "
                     "replayed?)");
        return -1;
    }
    char *text = gp_format("LAYER=%s\nNODES=%s\n", LAYER_WORDS[layer], nodes.data);
    gp_buf_free(&nodes);
    char *backup = NULL;
    int rc = text ? lab_write_keeping(s->root, LAB_INCIDENT_FILE, text, strlen(text), 0644, false,
                                      &backup, s->err)
                  : -1;
    free(backup);
    free(text);
    return rc;
}

int lab_incident_solve(kc_client *c, lab_scenario scenario, const char *root, const char *data,
                       const lab_params *p, lab_progress_fn progress, void *ud, gp_error *err)
{
    solver s = {c, root, data, p, scenario, progress, ud, err, {BROKEN_NOT}};
    bool config = false;
    for (int i = 0; i < LAB_NODES; i++) {
        json_t *st = agent(&s, i);
        if (!st) return -1;
        s.found[i] = diagnose(st);
        json_decref(st);
    }
    if (write_answer(&s) != 0) return -1;
    for (int i = 0; i < LAB_NODES; i++) {
        int rc = 0;
        switch (s.found[i]) {
        case BROKEN_DRIVER:
            rc = repair_driver(&s, i);
            break;
        case BROKEN_CONFIG:
            rc = repair_config(&s, i);
            config = true;
            break;
        case BROKEN_NOT_RESTARTED:
            rc = post(&s, i, "restart-containerd", json_object());
            break;
        case BROKEN_NOT:
            break;
        }
        if (rc != 0) return -1;
    }
    if (config && repair_toolkit(&s) != 0) return -1;
    int w = lab_kube_wait(_("waiting for the cluster to be healthy again"), 180, healthy, &s,
                          progress, ud, err);
    return w == 1 ? 0 : -1;
}
