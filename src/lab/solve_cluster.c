#include "lab/solve_cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/nodes.h"
#include "analyze/rollout.h"
#include "analyze/slots.h"
#include "lab/kube_ops.h"
#include "lab/labcluster.h"
#include "lab/workspace.h"
#include "util/buf.h"
#include "util/i18n.h"
#include "util/yaml_json.h"

typedef struct solver {
    const char *root;
    const lab_params *p;
    kc_client *c;
    lab_progress_fn progress;
    void *ud;
    gp_error *err;
} solver;

/* R/rel holds `text` now; a different learner file was backed up first. */
static int lab_write_answer(const char *root, const char *rel, const char *text, mode_t mode,
                            gp_error *err)
{
    char *backup = NULL;
    int rc = lab_write_keeping(root, rel, text, strlen(text), mode, false, &backup, err);
    free(backup);
    return rc;
}

/* ---- manifests --------------------------------------------------------- */

static char *runtimeclass_yaml(void)
{
    return strdup("apiVersion: node.k8s.io/v1\n"
                  "kind: RuntimeClass\n"
                  "metadata:\n"
                  "  name: nvidia\n"
                  "handler: nvidia\n");
}

static char *gpu_pod_yaml(void)
{
    return strdup("apiVersion: v1\n"
                  "kind: Pod\n"
                  "metadata:\n"
                  "  name: cuda-probe\n"
                  "  namespace: gpu-lab\n"
                  "spec:\n"
                  "  runtimeClassName: nvidia\n"
                  "  restartPolicy: Never\n"
                  "  containers:\n"
                  "  - name: cuda\n"
                  "    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\n"
                  "    command: [\"nvidia-smi\"]\n"
                  "    resources:\n"
                  "      limits:\n"
                  "        nvidia.com/gpu: 1\n");
}

static char *time_slicing_yaml(const lab_params *p)
{
    return gp_format("apiVersion: v1\n"
                     "kind: ConfigMap\n"
                     "metadata:\n"
                     "  name: time-slicing-config\n"
                     "  namespace: gpu-operator\n"
                     "data:\n"
                     "  any: |-\n"
                     "    version: v1\n"
                     "    flags:\n"
                     "      migStrategy: none\n"
                     "    sharing:\n"
                     "      timeSlicing:\n"
                     "        failRequestsGreaterThanOne: true\n"
                     "        resources:\n"
                     "        - name: nvidia.com/gpu\n"
                     "          replicas: %d\n",
                     p->replicas);
}

static char *toolkit_yaml(const char *image, const char *memory)
{
    return gp_format("apiVersion: apps/v1\n"
                     "kind: DaemonSet\n"
                     "metadata:\n"
                     "  name: nvidia-container-toolkit\n"
                     "  namespace: gpu-operator\n"
                     "spec:\n"
                     "  selector:\n"
                     "    matchLabels:\n"
                     "      app: nvidia-container-toolkit\n"
                     "  updateStrategy:\n"
                     "    type: RollingUpdate\n"
                     "    rollingUpdate:\n"
                     "      maxUnavailable: 1\n"
                     "  template:\n"
                     "    metadata:\n"
                     "      labels:\n"
                     "        app: nvidia-container-toolkit\n"
                     "    spec:\n"
                     "      containers:\n"
                     "      - name: nvidia-container-toolkit-ctr\n"
                     "        image: %s\n"
                     "        resources:\n"
                     "          requests:\n"
                     "            memory: %s\n",
                     image, memory);
}

/* Writes R/rel (backing up a different learner file) and returns its
 * first document as JSON. */
static json_t *write_manifest(solver *s, const char *rel, char *text)
{
    if (!text) {
        gp_error_set(s->err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    json_t *docs = NULL;
    json_t *doc = NULL;
    if (lab_write_answer(s->root, rel, text, 0644, s->err) == 0 &&
        gp_yaml_to_json(text, strlen(text), rel, &docs, NULL, s->err) == 0)
        doc = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    free(text);
    return doc;
}

/* ---- waiting and applying -------------------------------------------- */

typedef int (*poll_fn)(solver *s, void *arg);

typedef struct poll_ctx {
    solver *s;
    poll_fn done;
    void *arg;
} poll_ctx;

static int poll_once(void *ctx)
{
    poll_ctx *p = ctx;
    return p->done(p->s, p->arg);
}

/* Polls `done` for up to `seconds` (lab_kube_wait). */
static int wait_for(solver *s, const char *what, int seconds, poll_fn done, void *arg)
{
    poll_ctx ctx = {s, done, arg};
    return lab_kube_wait(what, seconds, poll_once, &ctx, s->progress, s->ud, s->err);
}

static json_t *get_or_null(solver *s, const char *path, kc_result *r)
{
    json_t *obj = NULL;
    *r = lab_kube_get_optional(s->c, path, &obj, s->err);
    return obj;
}

static int apply_checked(solver *s, const char *collection, const char *path, const json_t *obj,
                         bool (*differs)(const json_t *live))
{
    return lab_kube_apply(s->c, collection, path, obj, differs, s->err);
}

static int apply(solver *s, const char *collection, const char *path, const json_t *obj)
{
    return lab_kube_apply(s->c, collection, path, obj, NULL, s->err);
}

static bool runtimeclass_differs(const json_t *live)
{
    const char *h = json_string_value(json_object_get(live, "handler"));
    return !h || strcmp(h, "nvidia") != 0;
}

/* The step's pod: runtimeClassName nvidia and one GPU; anything else in a
 * pod's spec cannot be patched. */
static bool pod_differs(const json_t *live)
{
    const json_t *spec = json_object_get(live, "spec");
    const char *rc = json_string_value(json_object_get(spec, "runtimeClassName"));
    const json_t *c = json_array_get(json_object_get(spec, "containers"), 0);
    const json_t *gpu = json_object_get(json_object_get(json_object_get(c, "resources"), "limits"),
                                        "nvidia.com/gpu");
    const char *g = json_string_value(gpu);
    bool one = (g && strcmp(g, "1") == 0) || (json_is_integer(gpu) && json_integer_value(gpu) == 1);
    return !rc || strcmp(rc, "nvidia") != 0 || !one ||
           json_array_size(json_object_get(spec, "containers")) != 1;
}

static int advertise(solver *s, const char *node, int count)
{
    char path[128], value[32];
    snprintf(path, sizeof path, "/api/v1/nodes/%s/status", node);
    snprintf(value, sizeof value, "%d", count);
    json_t *patch = json_pack("{s:{s:{s:s}, s:{s:s}}}", "status", "capacity", "nvidia.com/gpu",
                              value, "allocatable", "nvidia.com/gpu", value);
    kc_result r = kc_patch(s->c, path, KC_PATCH_MERGE, patch, NULL, s->err);
    json_decref(patch);
    return r == KC_OK ? 0 : -1;
}

static const char *str_at2(const json_t *v, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(v, a), b));
}

/* ---- step 5 ------------------------------------------------------------ */

/* The PodScheduled=False condition's reason and message, else the latest
 * FailedScheduling event's message with reason Unschedulable. */
static int scheduler_verdict(solver *s, char **reason, char **message)
{
    *reason = *message = NULL;
    kc_result r;
    json_t *pod = get_or_null(s, LAB_PATH_POD, &r);
    if (r != KC_OK) return -1;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        const char *status = json_string_value(json_object_get(c, "status"));
        const char *why = json_string_value(json_object_get(c, "reason"));
        const char *msg = json_string_value(json_object_get(c, "message"));
        if (type && strcmp(type, "PodScheduled") == 0 && status && strcmp(status, "False") == 0 &&
            msg) {
            free(*reason);
            free(*message);
            *reason = strdup(why ? why : "Unschedulable");
            *message = strdup(msg);
        }
    }
    char uid[128] = "";
    snprintf(uid, sizeof uid, "%s",
             str_at2(pod, "metadata", "uid") ? str_at2(pod, "metadata", "uid") : "");
    json_decref(pod);
    /* No pod, no verdict: an event of an earlier pod of the name is not
     * this pod's record. */
    if (*message || !uid[0]) return 0;
    json_t *events = NULL;
    if (kc_list_all(
            s->c,
            "/api/v1/namespaces/gpu-lab/events?fieldSelector=involvedObject.name%3Dcuda-probe",
            &events, s->err) != KC_OK)
        return -1;
    const json_t *ev;
    json_array_foreach(events, i, ev)
    {
        const char *why = json_string_value(json_object_get(ev, "reason"));
        const char *msg = json_string_value(json_object_get(ev, "message"));
        const char *of = str_at2(ev, "involvedObject", "uid");
        if (why && strcmp(why, "FailedScheduling") == 0 && msg && of && strcmp(of, uid) == 0) {
            free(*message);
            *message = strdup(msg);
        }
    }
    json_decref(events);
    if (*message) *reason = strdup("Unschedulable");
    return 0;
}

static int verdict_ready(solver *s, void *arg)
{
    (void)arg;
    char *reason, *message;
    if (scheduler_verdict(s, &reason, &message) != 0) return -1;
    bool ok = message != NULL;
    free(reason);
    free(message);
    return ok;
}

/* Step 5's state has no GPU advertised anywhere: when the pod would land
 * at once (a later step's state), the advertisement goes first so that the
 * scheduler can write the verdict the step is about. */
static int ensure_unschedulable_record(solver *s)
{
    char *reason, *message;
    if (scheduler_verdict(s, &reason, &message) != 0) return -1;
    bool have = message != NULL;
    free(reason);
    free(message);
    if (have) return 0;
    /* The pod is (re)created where no node advertises the resource. */
    for (int i = 0; i < LAB_NODES; i++) {
        char path[128];
        snprintf(path, sizeof path, "/api/v1/nodes/%s/status", lab_node_name(i));
        json_t *patch = json_pack("{s:{s:{s:n}, s:{s:n}}}", "status", "capacity", "nvidia.com/gpu",
                                  "allocatable", "nvidia.com/gpu");
        kc_result r = kc_patch(s->c, path, KC_PATCH_MERGE, patch, NULL, s->err);
        json_decref(patch);
        if (r != KC_OK) return -1;
    }
    return lab_kube_delete_and_wait(s->c, LAB_PATH_POD, s->err) == KC_OK ? 1 : -1;
}

static int solve_step5(solver *s)
{
    json_t *rc = write_manifest(s, "k8s/runtimeclass.yaml", runtimeclass_yaml());
    json_t *pod = rc ? write_manifest(s, "k8s/gpu-pod.yaml", gpu_pod_yaml()) : NULL;
    int rc_ok = -1;
    if (!pod) goto out;
    json_t *ns = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                           "metadata", "name", "gpu-lab");
    int a = apply(s, "/api/v1/namespaces", LAB_PATH_GPU_LAB_NS, ns);
    json_decref(ns);
    if (a != 0 || apply_checked(s, "/apis/node.k8s.io/v1/runtimeclasses", LAB_PATH_RUNTIMECLASS, rc,
                                runtimeclass_differs) != 0)
        goto out;
    /* A pod of the name that is not the step's cannot be patched into it. */
    kc_result pr;
    json_t *live_pod = get_or_null(s, LAB_PATH_POD, &pr);
    if (pr != KC_OK) goto out;
    bool wrong = live_pod && pod_differs(live_pod);
    json_decref(live_pod);
    if (wrong && lab_kube_delete_and_wait(s->c, LAB_PATH_POD, s->err) != KC_OK) goto out;
    int need = ensure_unschedulable_record(s);
    if (need < 0) goto out;
    if (need == 1) {
        if (apply(s, "/api/v1/namespaces/gpu-lab/pods", LAB_PATH_POD, pod) != 0) goto out;
        if (wait_for(s, _("waiting for the scheduler's verdict on gpu-lab/cuda-probe"), 60,
                     verdict_ready, NULL) != 1)
            goto out;
    }
    char *reason, *message;
    if (scheduler_verdict(s, &reason, &message) != 0) goto out;
    if (!message) {
        gp_error_set(s->err, NULL, 0, 0, "the scheduler has not written a verdict on %s",
                     "gpu-lab/cuda-probe");
        free(reason);
        goto out;
    }
    char *text = gp_format("%s\n%s\n", reason, message);
    if (text) {
        rc_ok = lab_write_answer(s->root, "out/unscheduled.txt", text, 0644, s->err);
        free(text);
    }
    free(reason);
    free(message);
out:
    json_decref(rc);
    json_decref(pod);
    return rc_ok;
}

/* ---- step 6 ------------------------------------------------------------ */

static int pod_running(solver *s, void *arg)
{
    (void)arg;
    kc_result r;
    json_t *pod = get_or_null(s, LAB_PATH_POD, &r);
    if (r != KC_OK) return -1;
    const char *phase = str_at2(pod, "status", "phase");
    bool ok = phase && strcmp(phase, "Running") == 0;
    json_decref(pod);
    return ok;
}

/* `gpuop nodes -o lab` over the lab's nodes, into R/out/node-gpu.txt. */
static int write_node_table(solver *s)
{
    an_nodes *b = an_nodes_new("nvidia.com/gpu", s->err);
    if (!b) return -1;
    int rc = -1;
    json_t *report = NULL;
    for (int i = 0; i < LAB_NODES; i++) {
        char path[128];
        snprintf(path, sizeof path, "/api/v1/nodes/%s", lab_node_name(i));
        json_t *node = NULL;
        if (kc_get(s->c, path, &node, s->err) != KC_OK) goto out;
        an_nodes_add_node(b, node);
        json_decref(node);
    }
    report = an_nodes_finish(b, s->err);
    if (!report) goto out;
    char *table = an_nodes_render(report, AN_LAB);
    rc = table ? lab_write_answer(s->root, "out/node-gpu.txt", table, 0644, s->err) : -1;
    free(table);
out:
    json_decref(report);
    an_nodes_free(b);
    return rc;
}

static char *device_plugin_yaml(void)
{
    return strdup("apiVersion: apps/v1\n"
                  "kind: DaemonSet\n"
                  "metadata:\n"
                  "  name: nvidia-device-plugin-daemonset\n"
                  "  namespace: gpu-operator\n"
                  "spec:\n"
                  "  selector:\n"
                  "    matchLabels:\n"
                  "      name: nvidia-device-plugin-ds\n"
                  "  template:\n"
                  "    metadata:\n"
                  "      labels:\n"
                  "        name: nvidia-device-plugin-ds\n"
                  "    spec:\n"
                  "      nodeSelector:\n"
                  "        kubernetes.io/hostname: lab-node-0\n"
                  "      runtimeClassName: nvidia\n"
                  "      containers:\n"
                  "      - name: nvidia-device-plugin-ctr\n"
                  "        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0\n");
}

/* Whether lab-node-0 is simulated: its agent answers. */
static bool node0_simulated(solver *s)
{
    json_t *agent = NULL;
    bool yes = lab_kube_get_optional(s->c, LAB_PATH_NODE0_AGENT, &agent, NULL) == KC_OK && agent;
    json_decref(agent);
    return yes;
}

/* On simulated nodes the device plugin advertises; elsewhere the status
 * patch stands for it. */
static int advertise_node0(solver *s)
{
    if (!node0_simulated(s)) return advertise(s, "lab-node-0", s->p->gpus_per_node);
    json_t *ds = write_manifest(s, "k8s/device-plugin.yaml", device_plugin_yaml());
    int a =
        ds ? apply(s, "/apis/apps/v1/namespaces/gpu-operator/daemonsets", LAB_PATH_PLUGIN_DS, ds)
           : -1;
    json_decref(ds);
    return a;
}

static int solve_step6(solver *s)
{
    if (advertise_node0(s) != 0) return -1;
    if (wait_for(s, _("waiting for gpu-lab/cuda-probe to run"), 60, pod_running, NULL) != 1)
        return -1;
    return write_node_table(s);
}

/* ---- step 7 ------------------------------------------------------------ */

static int write_slots(solver *s)
{
    json_t *cm = NULL, *node = NULL;
    int rc = -1;
    if (kc_get(s->c, LAB_PATH_CONFIGMAP, &cm, s->err) != KC_OK ||
        kc_get(s->c, "/api/v1/nodes/lab-node-1", &node, s->err) != KC_OK)
        goto out;
    an_slots_input in = {0};
    in.configmap = cm;
    in.key = "any";
    in.node = node;
    in.gpus = s->p->gpus_per_node;
    in.gpu_model = s->p->gpu_model;
    in.gpu_memory_mib = (long)s->p->gpu_memory_gib * 1024;
    json_t *report = an_slots(&in, s->err);
    if (!report) goto out;
    char *lines = an_slots_render(report, AN_LAB);
    json_decref(report);
    rc = lines ? lab_write_answer(s->root, "out/slots.txt", lines, 0644, s->err) : -1;
    free(lines);
out:
    json_decref(cm);
    json_decref(node);
    return rc;
}

static int solve_step7(solver *s)
{
    json_t *cm = write_manifest(s, "k8s/time-slicing.yaml", time_slicing_yaml(s->p));
    if (!cm) return -1;
    int a = apply(s, "/api/v1/namespaces/gpu-operator/configmaps", LAB_PATH_CONFIGMAP, cm);
    json_decref(cm);
    if (a != 0) return -1;
    if (advertise(s, "lab-node-1", s->p->gpus_per_node * s->p->replicas) != 0) return -1;
    return write_slots(s);
}

/* ---- step 8 ------------------------------------------------------------ */

static long status_number(const json_t *ds, const char *field)
{
    return (long)json_integer_value(json_object_get(json_object_get(ds, "status"), field));
}

static int ds_rolled_out(solver *s, void *arg)
{
    (void)arg;
    kc_result r;
    json_t *ds = get_or_null(s, LAB_PATH_DAEMONSET, &r);
    if (r != KC_OK) return -1;
    long gen =
        (long)json_integer_value(json_object_get(json_object_get(ds, "metadata"), "generation"));
    long desired = status_number(ds, "desiredNumberScheduled");
    bool ok = ds && status_number(ds, "observedGeneration") == gen && desired > 0 &&
              status_number(ds, "updatedNumberScheduled") == desired &&
              status_number(ds, "numberReady") == desired;
    json_decref(ds);
    return ok;
}

/* The rollout has stopped: generation observed, fewer updated than desired,
 * and an updated pod that the scheduler refused. */
static int ds_stalled(solver *s, void *arg)
{
    (void)arg;
    kc_result r;
    json_t *ds = get_or_null(s, LAB_PATH_DAEMONSET, &r);
    if (r != KC_OK) return -1;
    long gen =
        (long)json_integer_value(json_object_get(json_object_get(ds, "metadata"), "generation"));
    bool ok =
        ds && status_number(ds, "observedGeneration") == gen &&
        status_number(ds, "updatedNumberScheduled") >= 1 &&
        status_number(ds, "updatedNumberScheduled") < status_number(ds, "desiredNumberScheduled");
    json_decref(ds);
    if (!ok) return 0;
    json_t *pods = NULL;
    if (kc_list_all(
            s->c,
            "/api/v1/namespaces/gpu-operator/pods?labelSelector=app%3Dnvidia-container-toolkit",
            &pods, s->err) != KC_OK)
        return -1;
    bool refused = false;
    size_t i, j;
    const json_t *pod, *c;
    json_array_foreach(pods, i, pod)
    {
        json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), j, c)
        {
            const char *type = json_string_value(json_object_get(c, "type"));
            const char *st = json_string_value(json_object_get(c, "status"));
            refused |= type && strcmp(type, "PodScheduled") == 0 && st && strcmp(st, "False") == 0;
        }
    }
    json_decref(pods);
    return refused;
}

static const char *template_image(const json_t *ds)
{
    const json_t *spec =
        json_object_get(json_object_get(json_object_get(ds, "spec"), "template"), "spec");
    return json_string_value(
        json_object_get(json_array_get(json_object_get(spec, "containers"), 0), "image"));
}

/* Everything `gpuop rollout -o lab` reads, fed to the rollout analyzer. */
static int write_rollout(solver *s)
{
    json_t *ds = NULL, *pods = NULL, *revs = NULL, *events = NULL, *nodes = NULL;
    an_rollout *b = NULL;
    int rc = -1;
    if (kc_get(s->c, LAB_PATH_DAEMONSET, &ds, s->err) != KC_OK ||
        kc_list_all(s->c, "/api/v1/pods", &pods, s->err) != KC_OK ||
        kc_list_all(s->c, "/apis/apps/v1/namespaces/gpu-operator/controllerrevisions", &revs,
                    s->err) != KC_OK ||
        kc_list_all(s->c, "/api/v1/namespaces/gpu-operator/events", &events, s->err) != KC_OK ||
        kc_list_all(s->c, "/api/v1/nodes", &nodes, s->err) != KC_OK)
        goto out;
    b = an_rollout_new(ds, s->err);
    if (!b) goto out;
    an_rollout_set_now(b, time(NULL));
    size_t i;
    json_t *item;
    json_array_foreach(revs, i, item) an_rollout_add_revision(b, item);
    json_array_foreach(nodes, i, item) an_rollout_add_node(b, item);
    json_array_foreach(pods, i, item) an_rollout_add_pod(b, item);
    json_array_foreach(events, i, item) an_rollout_add_event(b, item);
    json_t *report = an_rollout_finish(b, s->err);
    char *lines = report ? an_rollout_render(report, AN_LAB) : NULL;
    json_decref(report);
    rc = lines ? lab_write_answer(s->root, "out/rollout.txt", lines, 0644, s->err) : -1;
    free(lines);
out:
    an_rollout_free(b);
    json_decref(ds);
    json_decref(pods);
    json_decref(revs);
    json_decref(events);
    json_decref(nodes);
    return rc;
}

static int solve_step8(solver *s)
{
    char new_mem[16];
    snprintf(new_mem, sizeof new_mem, "%dGi", s->p->ds_request_gib);
    kc_result r;
    json_t *live = get_or_null(s, LAB_PATH_DAEMONSET, &r);
    if (r != KC_OK) return -1;
    const char *image = template_image(live);
    bool updated = image && strcmp(image, s->p->ds_new_image) == 0;
    json_decref(live);
    if (!updated) {
        /* First the old version, fully rolled out... */
        json_t *ds = write_manifest(s, "k8s/toolkit-ds.yaml",
                                    toolkit_yaml(s->p->ds_old_image, s->p->ds_old_memory));
        int a = ds ? apply(s, "/apis/apps/v1/namespaces/gpu-operator/daemonsets",
                           LAB_PATH_DAEMONSET, ds)
                   : -1;
        json_decref(ds);
        if (a != 0) return -1;
        if (wait_for(s, _("waiting for the toolkit DaemonSet's three pods to be ready"), 90,
                     ds_rolled_out, NULL) != 1)
            return -1;
    }
    /* ...then the image and the request in one change. */
    json_t *ds =
        write_manifest(s, "k8s/toolkit-ds.yaml", toolkit_yaml(s->p->ds_new_image, new_mem));
    int a =
        ds ? apply(s, "/apis/apps/v1/namespaces/gpu-operator/daemonsets", LAB_PATH_DAEMONSET, ds)
           : -1;
    json_decref(ds);
    if (a != 0) return -1;
    if (wait_for(s, _("waiting for the rollout to stop"), 90, ds_stalled, NULL) != 1) return -1;
    return write_rollout(s);
}

int lab_solve_cluster_step(int step, const char *root, const lab_params *p, kc_client *c,
                           lab_progress_fn progress, void *ud, gp_error *err)
{
    solver s = {root, p, c, progress, ud, err};
    switch (step) {
    case 5:
        return solve_step5(&s);
    case 6:
        return solve_step6(&s);
    case 7:
        return solve_step7(&s);
    case 8:
        return solve_step8(&s);
    default:
        gp_error_set(err, NULL, 0, 0, "step %d is not a cluster step", step);
        return -1;
    }
}
