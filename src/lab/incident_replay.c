/* The incident replayed (incident.h): the healthy cluster, what breaks
 * it, and a timeline of what each simulated node does meanwhile, read from
 * its agent (/gpuop/v1/agents/NAME, what `gpuop node status` shows). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/json.h"
#include "lab/incident.h"
#include "lab/labcluster.h"
#include "util/buf.h"
#include "util/i18n.h"
#include "util/msg.h"
#include "util/yaml_json.h"

#define TOOLKIT_IMAGE "nvcr.io/nvidia/k8s/container-toolkit:v1.18.1-ubuntu20.04"
#define PLUGIN_IMAGE  "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"
#define JOB_IMAGE     "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"

/* What the timeline remembers of a node, to say what changed. */
typedef struct node_seen {
    char ready[16];
    char ready_reason[256];
    char daemon[64]; /* phase */
    char cri[512];   /* "up" or the CRI error */
    char handlers[256];
    char declared[256]; /* the handlers the files declare */
    char gpus[32];
    char kernel[128];
    bool driver;
} node_seen;

typedef struct replay {
    kc_client *c;
    lab_scenario s;
    const lab_params *p;
    lab_say_fn say;
    lab_progress_fn progress;
    void *ud;
    gp_error *err;
    struct timespec start;
    node_seen seen[LAB_NODES];
    char old_kernel[128]; /* kernel-update: what the rebooted node ran */
    int drained;          /* kernel-update: the job that ran there */
    bool told_sandbox;    /* not-restarted: the first refusal said */
} replay;

static void say(replay *r, const char *fmt, ...) GP_PRINTF(2, 3);

/* One timeline line, "[ 12s] ..." (fmt already translated). */
static void say(replay *r, const char *fmt, ...)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long secs = (long)(now.tv_sec - r->start.tv_sec);
    gp_buf line = {0};
    gp_buf_addf(&line, "[%3lds] ", secs);
    va_list ap;
    va_start(ap, fmt);
    gp_msg_buf_vaddf(&line, fmt, ap);
    va_end(ap);
    if (line.data && r->say) r->say(line.data, r->ud);
    gp_buf_free(&line);
}

/* ---- manifests ------------------------------------------------------------ */

static json_t *from_yaml(replay *r, char *text)
{
    json_t *docs = NULL, *doc = NULL;
    if (!text) {
        gp_error_set(r->err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    if (gp_yaml_to_json(text, strlen(text), "incident manifest", &docs, NULL, r->err) == 0)
        doc = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    free(text);
    return doc;
}

/* A DaemonSet of gpu-operator on the nodes with GPUs; `pod_spec` is the
 * rest of its pod template's spec, indented under it. */
static json_t *gpu_daemonset(replay *r, const char *name, const char *pod_spec)
{
    return from_yaml(r, gp_format("apiVersion: apps/v1\n"
                                  "kind: DaemonSet\n"
                                  "metadata: {name: %s, namespace: gpu-operator}\n"
                                  "spec:\n"
                                  "  selector: {matchLabels: {app: %s}}\n"
                                  "  template:\n"
                                  "    metadata: {labels: {app: %s}}\n"
                                  "    spec:\n"
                                  "      nodeSelector: {nvidia.com/gpu.present: \"true\"}\n"
                                  "%s",
                                  name, name, name, pod_spec));
}

static json_t *toolkit_ds(replay *r, const char *restart_mode, bool bare)
{
    char *spec =
        gp_format("      containers:\n"
                  "      - name: nvidia-container-toolkit-ctr\n"
                  "        image: %s\n"
                  "        env:\n"
                  "        - {name: RUNTIME, value: containerd}\n"
                  "        - {name: RUNTIME_RESTART_MODE, value: %s}\n"
                  "%s",
                  TOOLKIT_IMAGE, restart_mode,
                  bare ? "        - {name: GPUOP_TOOLKIT_VARIANT, value: bare-dropin}\n" : "");
    json_t *ds = spec ? gpu_daemonset(r, LAB_INCIDENT_TOOLKIT, spec) : NULL;
    free(spec);
    return ds;
}

static json_t *plugin_ds(replay *r)
{
    return gpu_daemonset(r, LAB_INCIDENT_PLUGIN,
                         "      runtimeClassName: nvidia\n"
                         "      containers:\n"
                         "      - name: nvidia-device-plugin-ctr\n"
                         "        image: " PLUGIN_IMAGE "\n");
}

/* A job that takes every GPU of a node, so the three land one a node. */
static json_t *job_pod(replay *r, int i)
{
    return from_yaml(r, gp_format("apiVersion: v1\n"
                                  "kind: Pod\n"
                                  "metadata: {name: %s%d, namespace: gpu-lab}\n"
                                  "spec:\n"
                                  "  runtimeClassName: nvidia\n"
                                  "  containers:\n"
                                  "  - name: cuda\n"
                                  "    image: %s\n"
                                  "    command: [sleep, infinity]\n"
                                  "    resources:\n"
                                  "      limits: {nvidia.com/gpu: %d}\n",
                                  LAB_INCIDENT_JOB, i, JOB_IMAGE, r->p->gpus_per_node));
}

static int apply(replay *r, const char *collection, const char *path, json_t *obj)
{
    if (!obj) return -1;
    int rc = lab_kube_apply(r->c, collection, path, obj, NULL, r->err);
    json_decref(obj);
    return rc;
}

static int apply_toolkit(replay *r, const char *restart_mode, bool bare)
{
    return apply(r, LAB_PATH_DAEMONSETS, LAB_PATH_DAEMONSETS "/" LAB_INCIDENT_TOOLKIT,
                 toolkit_ds(r, restart_mode, bare));
}

static int apply_plugin(replay *r)
{
    return apply(r, LAB_PATH_DAEMONSETS, LAB_PATH_DAEMONSETS "/" LAB_INCIDENT_PLUGIN, plugin_ds(r));
}

static int apply_job(replay *r, int i)
{
    char path[128];
    snprintf(path, sizeof path, "/api/v1/namespaces/gpu-lab/pods/%s%d", LAB_INCIDENT_JOB, i);
    return apply(r, "/api/v1/namespaces/gpu-lab/pods", path, job_pod(r, i));
}

static int apply_base(replay *r)
{
    json_t *rc = from_yaml(r, strdup("apiVersion: node.k8s.io/v1\n"
                                     "kind: RuntimeClass\n"
                                     "metadata: {name: nvidia}\n"
                                     "handler: nvidia\n"));
    json_t *ns = from_yaml(r, strdup("apiVersion: v1\n"
                                     "kind: Namespace\n"
                                     "metadata: {name: gpu-lab}\n"));
    int a = apply(r, "/apis/node.k8s.io/v1/runtimeclasses", LAB_PATH_RUNTIMECLASS, rc);
    int b =
        a == 0 ? apply(r, "/api/v1/namespaces", LAB_PATH_GPU_LAB_NS, ns) : (json_decref(ns), -1);
    return b;
}

/* ---- the timeline ---------------------------------------------------------- */

/* A node's agent status; *st NULL while the node has none yet (its agent
 * is made the first time the fake kubelet looks at it). */
static kc_result agent_status(replay *r, const char *node, json_t **st)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", LAB_PATH_AGENTS, node);
    return lab_kube_get_optional(r->c, path, st, r->err);
}

static void copy(char *out, size_t cap, const char *s)
{
    snprintf(out, cap, "%s", s ? s : "");
}

static void handlers_of(const json_t *loaded, char *out, size_t cap)
{
    gp_buf b = {0};
    size_t i;
    const json_t *h;
    json_array_foreach(json_object_get(loaded, "handlers"), i, h)
    {
        if (b.len) gp_buf_add(&b, ", ");
        gp_buf_add(&b, json_string_value(h) ? json_string_value(h) : "?");
    }
    copy(out, cap, b.data);
    gp_buf_free(&b);
}

/* What a node shows now, from its agent's status and its Node object. */
static void observe(const json_t *st, const json_t *node, node_seen *n)
{
    memset(n, 0, sizeof *n);
    const json_t *loaded = json_object_get(st, "loaded");
    const json_t *ready = kube_condition(node, "Ready");
    copy(n->ready, sizeof n->ready, kube_str_at(ready, "status"));
    copy(n->ready_reason, sizeof n->ready_reason, kube_str_at(ready, "message"));
    copy(n->daemon, sizeof n->daemon, kube_str_at(loaded, "phase"));
    const char *cri = kube_str_at(loaded, "cri");
    if (cri && strcmp(cri, "up") != 0 && kube_str_at(loaded, "cri_error"))
        cri = kube_str_at(loaded, "cri_error");
    copy(n->cri, sizeof n->cri, cri);
    handlers_of(loaded, n->handlers, sizeof n->handlers);
    handlers_of(json_object_get(st, "declared"), n->declared, sizeof n->declared);
    const json_t *alloc = kube_at(node, "status.allocatable");
    copy(n->gpus, sizeof n->gpus, json_string_value(json_object_get(alloc, "nvidia.com/gpu")));
    copy(n->kernel, sizeof n->kernel, kube_str_at(node, "status.nodeInfo.kernelVersion"));
    n->driver = json_is_true(json_object_get(st, "driver_loaded"));
}

/* Says what changed on a node since it was last seen. */
static void tell_changes(replay *r, const char *name, const node_seen *was, const node_seen *now,
                         const json_t *st)
{
    const json_t *loaded = json_object_get(st, "loaded");
    if (strcmp(was->daemon, now->daemon) != 0 && strcmp(now->daemon, "running") != 0) {
        const char *why = kube_str_at(loaded, "last_exit");
        say(r, _("%s: containerd is %s (%s)"), name, now->daemon, why && *why ? why : "-");
    }
    if (strcmp(now->daemon, "running") == 0 &&
        (strcmp(was->daemon, now->daemon) != 0 || strcmp(was->cri, now->cri) != 0 ||
         strcmp(was->handlers, now->handlers) != 0)) {
        if (strcmp(now->cri, "up") == 0)
            say(r, _("%s: containerd running, CRI up, handlers: %s"), name,
                *now->handlers ? now->handlers : "-");
        else
            say(r, _("%s: containerd running, CRI failed: %s"), name, now->cri);
    }
    /* while the daemon is down it has no handlers to compare with: the
     * line after its start says what it loaded */
    if (strcmp(was->declared, now->declared) != 0 && *was->declared &&
        strcmp(now->daemon, "running") == 0 && strcmp(now->declared, now->handlers) != 0)
        say(r, _("%s: the files now declare the handlers %s; the running containerd has %s"), name,
            *now->declared ? now->declared : "-", *now->handlers ? now->handlers : "-");
    if (strcmp(was->kernel, now->kernel) != 0 && *was->kernel && *was->ready)
        say(r, _("%s: booted kernel %s, NVIDIA driver %s"), name, now->kernel,
            now->driver ? _("loaded") : _("not loaded"));
    if (strcmp(was->ready, now->ready) != 0)
        say(r, _("%s: Ready %s (%s)"), name, *now->ready ? now->ready : "-", now->ready_reason);
    if (strcmp(was->gpus, now->gpus) != 0)
        say(r, _("%s: nvidia.com/gpu allocatable %s"), name, *now->gpus ? now->gpus : "-");
}

/* One look at every node: the changes told. -1 when an agent cannot be
 * read. */
static int look(replay *r)
{
    for (int i = 0; i < LAB_NODES; i++) {
        char path[128];
        snprintf(path, sizeof path, "/api/v1/nodes/%s", lab_node_name(i));
        json_t *node = NULL, *st = NULL;
        if (lab_kube_get_optional(r->c, path, &node, r->err) != KC_OK) return -1;
        if (agent_status(r, lab_node_name(i), &st) != KC_OK) {
            json_decref(node);
            return -1;
        }
        if (!node || !st) {
            /* not there yet: seen as nothing, so it is not Ready */
            json_decref(node);
            json_decref(st);
            memset(&r->seen[i], 0, sizeof r->seen[i]);
            continue;
        }
        node_seen now;
        observe(st, node, &now);
        tell_changes(r, lab_node_name(i), &r->seen[i], &now, st);
        r->seen[i] = now;
        json_decref(st);
        json_decref(node);
    }
    return 0;
}

/* ---- what is waited for ---------------------------------------------------- */

static json_t *get(replay *r, const char *path, bool *failed)
{
    json_t *obj = NULL;
    *failed = lab_kube_get_optional(r->c, path, &obj, r->err) != KC_OK;
    return obj;
}

/* Whether job i is in `phase`; for "Pending", refused by the scheduler. */
static bool job_is(replay *r, int i, const char *phase, bool *failed)
{
    char path[128];
    snprintf(path, sizeof path, "/api/v1/namespaces/gpu-lab/pods/%s%d", LAB_INCIDENT_JOB, i);
    json_t *pod = get(r, path, failed);
    const char *now = kube_str_at(pod, "status.phase");
    bool is = now && strcmp(now, phase) == 0;
    if (is && strcmp(phase, "Pending") == 0) {
        const json_t *sched = kube_condition(pod, "PodScheduled");
        is = sched &&
             strcmp(kube_str_at(sched, "status") ? kube_str_at(sched, "status") : "", "False") == 0;
    }
    json_decref(pod);
    return is;
}

static int all_jobs(replay *r, const char *phase)
{
    bool failed = false;
    for (int i = 0; i < LAB_NODES; i++) {
        if (!job_is(r, i, phase, &failed)) return failed ? -1 : 0;
    }
    return 1;
}

static int healthy(void *ctx)
{
    replay *r = ctx;
    if (look(r) != 0) return -1;
    char want[16];
    snprintf(want, sizeof want, "%d", r->p->gpus_per_node);
    for (int i = 0; i < LAB_NODES; i++)
        if (strcmp(r->seen[i].ready, "True") != 0 || strcmp(r->seen[i].gpus, want) != 0) return 0;
    return all_jobs(r, "Running");
}

static int nodes_up(void *ctx)
{
    replay *r = ctx;
    if (look(r) != 0) return -1;
    for (int i = 0; i < LAB_NODES; i++)
        if (strcmp(r->seen[i].ready, "True") != 0) return 0;
    return 1;
}

/* containerd-1.6: every node NotReady and the jobs refused. */
static int all_not_ready(void *ctx)
{
    replay *r = ctx;
    if (look(r) != 0) return -1;
    for (int i = 0; i < LAB_NODES; i++)
        if (strcmp(r->seen[i].ready, "True") == 0 || !*r->seen[i].ready) return 0;
    return all_jobs(r, "Pending");
}

/* not-restarted: a plugin pod's sandbox refused, the jobs refused. */
static int sandboxes_refused(void *ctx)
{
    replay *r = ctx;
    if (look(r) != 0) return -1;
    json_t *events = NULL;
    if (kc_list_all(r->c,
                    "/api/v1/namespaces/gpu-operator/events?fieldSelector=reason%3D"
                    "FailedCreatePodSandBox",
                    &events, r->err) != KC_OK)
        return -1;
    const json_t *first = json_array_get(events, 0);
    if (first && !r->told_sandbox) {
        say(r, "pod/gpu-operator/%s: FailedCreatePodSandBox: %s",
            kube_str_at(first, "involvedObject.name") ? kube_str_at(first, "involvedObject.name")
                                                      : "?",
            kube_str_at(first, "message") ? kube_str_at(first, "message") : "");
        r->told_sandbox = true;
    }
    json_decref(events);
    if (!r->told_sandbox) return 0;
    return all_jobs(r, "Pending");
}

/* The job submitted again, refused for want of GPUs: a verdict that still
 * counts the node cordoned (the scheduler's view of it before the
 * uncordon) is not the one waited for; the scheduler tries again when the
 * node changes. */
static int job1_refused(void *ctx)
{
    replay *r = ctx;
    if (look(r) != 0) return -1;
    bool failed = false;
    if (!job_is(r, r->drained, "Pending", &failed)) return failed ? -1 : 0;
    char path[128];
    snprintf(path, sizeof path, "/api/v1/namespaces/gpu-lab/pods/%s%d", LAB_INCIDENT_JOB,
             r->drained);
    json_t *pod = get(r, path, &failed);
    const char *msg = kube_str_at(kube_condition(pod, "PodScheduled"), "message");
    bool for_gpus = msg && !strstr(msg, "unschedulable");
    json_decref(pod);
    return failed ? -1 : for_gpus;
}

/* The rebooted node back: Ready on its new kernel, its kubelet's device
 * manager without GPUs (nothing registered since the boot). */
static int node1_back(void *ctx)
{
    replay *r = ctx;
    if (look(r) != 0) return -1;
    const node_seen *n = &r->seen[LAB_INCIDENT_REBOOTED];
    return strcmp(n->ready, "True") == 0 && strcmp(n->kernel, r->old_kernel) != 0 &&
           (!*n->gpus || strcmp(n->gpus, "0") == 0);
}

static int job1_gone(void *ctx)
{
    replay *r = ctx;
    char path[128];
    snprintf(path, sizeof path, "/api/v1/namespaces/gpu-lab/pods/%s%d", LAB_INCIDENT_JOB,
             r->drained);
    bool failed = false;
    json_t *pod = get(r, path, &failed);
    json_decref(pod);
    return failed ? -1 : !pod;
}

static int wait_until(replay *r, const char *what, int seconds, lab_poll_fn done)
{
    int w = lab_kube_wait(what, seconds, done, r, r->progress, r->ud, r->err);
    return w == 1 ? 0 : -1;
}

/* ---- the scenarios ---------------------------------------------------------- */

static int cordon(replay *r, const char *node, bool on)
{
    char path[128];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    json_t *patch = json_pack("{s:{s:b}}", "spec", "unschedulable", on);
    kc_result k = kc_patch(r->c, path, KC_PATCH_MERGE, patch, NULL, r->err);
    json_decref(patch);
    return k == KC_OK ? 0 : -1;
}

static int agent_post(replay *r, const char *node, const char *verb, json_t *body)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s/%s", LAB_PATH_AGENTS, node, verb);
    kc_result k = kc_create(r->c, path, body, NULL, r->err);
    json_decref(body);
    return k == KC_OK ? 0 : -1;
}

static int start_gpu_stack(replay *r, const char *restart_mode, bool bare)
{
    if (apply_toolkit(r, restart_mode, bare) != 0 || apply_plugin(r) != 0) return -1;
    for (int i = 0; i < LAB_NODES; i++)
        if (apply_job(r, i) != 0) return -1;
    return 0;
}

static int replay_containerd16(replay *r)
{
    say(r, "%s",
        _("Installing the toolkit (signal mode, the bare drop-in), the device plugin and the "
          "jobs."));
    if (start_gpu_stack(r, "signal", true) != 0) return -1;
    return wait_until(r, _("waiting for the nodes to go NotReady"), 150, all_not_ready);
}

static int replay_not_restarted(replay *r)
{
    say(r, "%s",
        _("Installing the toolkit v1.18.1 (restart mode none), the device plugin and the jobs."));
    if (start_gpu_stack(r, "none", false) != 0) return -1;
    return wait_until(r, _("waiting for the device plugin's sandbox to be refused"), 90,
                      sandboxes_refused);
}

/* Which job runs on `node` (the scheduler chose): its index, or -1 with
 * err. */
static int job_on(replay *r, const char *node)
{
    for (int i = 0; i < LAB_NODES; i++) {
        char path[128];
        snprintf(path, sizeof path, "/api/v1/namespaces/gpu-lab/pods/%s%d", LAB_INCIDENT_JOB, i);
        bool failed = false;
        json_t *pod = get(r, path, &failed);
        const char *on = kube_str_at(pod, "spec.nodeName");
        bool here = on && strcmp(on, node) == 0;
        json_decref(pod);
        if (failed) return -1;
        if (here) return i;
    }
    gp_error_set(r->err, NULL, 0, 0, "no job runs on %s", node);
    return -1;
}

static int replay_kernel_update(replay *r)
{
    say(r, "%s",
        _("Installing the toolkit v1.18.1 (signal mode), the device plugin and the jobs."));
    if (start_gpu_stack(r, "signal", false) != 0) return -1;
    if (wait_until(r, _("waiting for the GPUs to be advertised and the jobs to run"), 120,
                   healthy) != 0)
        return -1;
    const char *node = lab_node_name(LAB_INCIDENT_REBOOTED);
    say(r,
        _("Healthy. Now the kernel update of %s: drain, reboot into the new kernel, "
          "uncordon, the job submitted again."),
        node);
    char path[128];
    if ((r->drained = job_on(r, node)) < 0) return -1;
    snprintf(path, sizeof path, "/api/v1/namespaces/gpu-lab/pods/%s%d", LAB_INCIDENT_JOB,
             r->drained);
    if (cordon(r, node, true) != 0) return -1;
    if (kc_delete(r->c, path, NULL, r->err) != KC_OK) return -1;
    if (wait_until(r, _("waiting for the drained job to go"), 60, job1_gone) != 0) return -1;
    snprintf(r->old_kernel, sizeof r->old_kernel, "%s", r->seen[LAB_INCIDENT_REBOOTED].kernel);
    if (agent_post(r, node, "reboot", json_pack("{s:b}", "kernelUpdate", 1)) != 0) return -1;
    if (wait_until(r, _("waiting for the node to come back"), 60, node1_back) != 0) return -1;
    if (cordon(r, node, false) != 0 || apply_job(r, r->drained) != 0) return -1;
    return wait_until(r, _("waiting for the scheduler's verdict on the job"), 60, job1_refused);
}

int lab_incident_replay(kc_client *c, lab_scenario s, const lab_params *p, lab_say_fn say_fn,
                        lab_progress_fn progress, void *ud, gp_error *err)
{
    replay r = {.c = c, .s = s, .p = p, .say = say_fn, .progress = progress, .ud = ud, .err = err};
    clock_gettime(CLOCK_MONOTONIC, &r.start);
    say(&r, _("Scenario %s: %s"), lab_scenario_name(s), _(lab_scenario_title(s)));
    if (apply_base(&r) != 0) return -1;
    if (wait_until(&r, _("waiting for the nodes to be Ready"), 60, nodes_up) != 0) return -1;
    int rc;
    switch (s) {
    case LAB_SCENARIO_CONTAINERD_16:
        rc = replay_containerd16(&r);
        break;
    case LAB_SCENARIO_NOT_RESTARTED:
        rc = replay_not_restarted(&r);
        break;
    default:
        rc = replay_kernel_update(&r);
        break;
    }
    if (rc == 0)
        say(&r, "%s",
            _("The incident has happened: the cluster is as the operators found it on the day."));
    return rc;
}

/* ---- the grader's snapshot ---------------------------------------------- */

kc_result lab_incident_snapshot(kc_client *c, json_t **snapshot, gp_error *err)
{
    json_t *snap = json_object(), *nodes = json_object(), *agents = json_object();
    json_object_set_new(snap, "nodes", nodes);
    json_object_set_new(snap, "agents", agents);
    kc_result k = KC_OK;
    for (int i = 0; i < LAB_NODES && k == KC_OK; i++) {
        const char *name = lab_node_name(i);
        char path[256];
        json_t *obj = NULL;
        snprintf(path, sizeof path, "/api/v1/nodes/%s", name);
        k = lab_kube_get_optional(c, path, &obj, err);
        json_object_set_new(nodes, name, obj ? obj : json_null());
        snprintf(path, sizeof path, "%s/%s", LAB_PATH_AGENTS, name);
        obj = NULL;
        if (k == KC_OK) k = lab_kube_get_optional(c, path, &obj, err);
        json_object_set_new(agents, name, obj ? obj : json_null());
    }
    json_t *list = NULL, *ds = NULL;
    if (k == KC_OK) k = kc_list_all(c, "/api/v1/namespaces/gpu-lab/pods", &list, err);
    if (k == KC_OK) json_object_set_new(snap, "jobs", list), list = NULL;
    if (k == KC_OK) k = kc_list_all(c, "/api/v1/namespaces/gpu-operator/pods", &list, err);
    if (k == KC_OK) json_object_set_new(snap, "operator_pods", list);
    if (k == KC_OK)
        k = lab_kube_get_optional(c, LAB_PATH_DAEMONSETS "/" LAB_INCIDENT_TOOLKIT, &ds, err);
    if (k == KC_OK) json_object_set_new(snap, "toolkit", ds ? ds : json_null());
    if (k != KC_OK) {
        json_decref(snap);
        return k;
    }
    *snapshot = snap;
    return KC_OK;
}
