/* The incident's grader (incident.h): the learner's answer, then the live
 * state of every node and job, judged by what the nodes' containerd loaded
 * and what their kubelet advertises, never by what the files say. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/json.h"
#include "lab/incident.h"
#include "lab/labcluster.h"
#include "lab/outfile_internal.h"
#include "util/buf.h"
#include "util/i18n.h"
#include "util/msg.h"

typedef struct grader {
    lab_scenario s;
    const char *root;
    const lab_params *p;
    const json_t *snap;
    json_t *conds;
} grader;

static void cond(grader *g, const char *code, bool passed, const char *where, const char *expected,
                 const char *observed, const char *hint)
{
    lab_condition(g->conds, code, passed, where, expected, observed, hint);
}

/* ---- the answer ---------------------------------------------------------- */

/* The layer words the task lists, and what a wrong one is told. */
static const struct {
    const char *word;
    const char *hint; /* when it is not the answer */
} LAYERS[] = {
    {"containerd-config",
     N_("Compare what a restart would load with what is loaded (`gpuop node status NODE`: "
        "declared and loaded): where the two agree, the files are not what broke.")},
    {"containerd-not-restarted",
     N_("Look at when containerd started and what it loaded (`gpuop node status NODE`): a daemon "
        "that restarted after the files changed has read them.")},
    {"nvidia-driver",
     N_("`gpuop node status NODE` says whether the driver's module loaded on each node.")},
    {"device-plugin",
     N_("The device plugin is where the symptom shows (no nvidia.com/gpu), not where it starts: "
        "ask why its pod does not run or does not register.")},
    {"kubelet",
     N_("The kubelet reports what it finds below it: read the Ready condition's message and "
        "the node's events for the layer it names.")},
    {"scheduler",
     N_("The scheduler is right to refuse the jobs: no node offers the GPUs they ask for. Ask "
        "why nothing is advertised.")},
};

static const char *expected_layer(lab_scenario s)
{
    switch (s) {
    case LAB_SCENARIO_CONTAINERD_16:
        return "containerd-config";
    case LAB_SCENARIO_NOT_RESTARTED:
        return "containerd-not-restarted";
    default:
        return "nvidia-driver";
    }
}

/* Whether node i is one the scenario broke. */
static bool affected(lab_scenario s, int i)
{
    return s != LAB_SCENARIO_KERNEL_UPDATE || i == LAB_INCIDENT_REBOOTED;
}

static void where_line(const lab_line *l, char *out, size_t cap)
{
    if (l)
        snprintf(out, cap, "%s:%u", LAB_INCIDENT_FILE, l->number);
    else
        snprintf(out, cap, "%s", LAB_INCIDENT_FILE);
}

static void grade_layer(grader *g, const lab_outfile *f)
{
    const lab_line *l = lab_outfile_find(f, "LAYER");
    const char *seen = l ? l->value : NULL;
    const char *want = expected_layer(g->s);
    bool ok = seen && strcasecmp(seen, want) == 0;
    const char *hint = N_("LAYER= takes one of the words the task lists "
                          "(`gpuop lab incident steps`).");
    for (size_t i = 0; seen && !ok && i < sizeof LAYERS / sizeof LAYERS[0]; i++)
        if (strcasecmp(seen, LAYERS[i].word) == 0) hint = LAYERS[i].hint;
    if (ok) hint = NULL;
    char where[PATH_MAX];
    where_line(l, where, sizeof where);
    cond(g, "incident.answer.layer", ok, where, _("the layer that broke"),
         seen ? seen : _("(missing)"), hint);
}

/* NODES=: the same set of lab nodes, in any order, blanks allowed. */
static bool same_nodes(const char *seen, lab_scenario s)
{
    bool named[LAB_NODES] = {false};
    char *copy = strdup(seen);
    if (!copy) return false;
    bool ok = true;
    for (char *save = NULL, *tok = strtok_r(copy, ", \t", &save); tok;
         tok = strtok_r(NULL, ", \t", &save)) {
        int found = -1;
        for (int i = 0; i < LAB_NODES; i++)
            if (strcasecmp(tok, lab_node_name(i)) == 0) found = i;
        if (found < 0)
            ok = false;
        else
            named[found] = true;
    }
    free(copy);
    for (int i = 0; i < LAB_NODES; i++)
        if (named[i] != affected(s, i)) ok = false;
    return ok;
}

static void grade_nodes_answer(grader *g, const lab_outfile *f)
{
    const lab_line *l = lab_outfile_find(f, "NODES");
    const char *seen = l ? l->value : NULL;
    bool ok = seen && same_nodes(seen, g->s);
    char where[PATH_MAX];
    where_line(l, where, sizeof where);
    cond(g, "incident.answer.nodes", ok, where, _("the nodes the layer broke, comma-separated"),
         seen ? seen : _("(missing)"),
         ok ? NULL
            : N_("Look at every node, not only the first: which of them shows the broken "
                 "layer (`gpuop node status NODE`, `kubectl get nodes`)?"));
}

static void grade_answer(grader *g)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", g->root, LAB_INCIDENT_FILE);
    lab_outfile f;
    gp_error err = {0};
    if (lab_outfile_read(path, &f, &err) != 0) {
        cond(g, "incident.answer.file", false, LAB_INCIDENT_FILE, _("the file"), _("(missing)"),
             N_("Two lines, LAYER= and NODES=, as the task says (`gpuop lab incident "
                "steps`)."));
        return;
    }
    grade_layer(g, &f);
    grade_nodes_answer(g, &f);
    lab_outfile_free(&f);
}

/* ---- the nodes ------------------------------------------------------------ */

static bool has(const json_t *array, const char *s)
{
    return kube_has_string(array, s);
}

static void join(const json_t *array, char *out, size_t cap)
{
    gp_buf b = {0};
    size_t i;
    const json_t *v;
    json_array_foreach(array, i, v)
    {
        if (b.len) gp_buf_add(&b, ", ");
        gp_buf_add(&b, json_string_value(v) ? json_string_value(v) : "?");
    }
    snprintf(out, cap, "%s", b.data && *b.data ? b.data : "-");
    gp_buf_free(&b);
}

static void grade_ready(grader *g, const char *name, const json_t *node)
{
    const json_t *ready = kube_condition(node, "Ready");
    const char *status = kube_str_at(ready, "status");
    bool ok = status && strcmp(status, "True") == 0;
    char code[96], where[128], observed[600];
    snprintf(code, sizeof code, "incident.%s.ready", name);
    snprintf(where, sizeof where, "node/%s .status.conditions[Ready]", name);
    if (!node)
        snprintf(observed, sizeof observed, "%s", _("(no such node)"));
    else
        snprintf(observed, sizeof observed, "%s: %s", status ? status : "-",
                 kube_str_at(ready, "message") ? kube_str_at(ready, "message") : "");
    cond(g, code, ok, where, "True", observed,
         ok ? NULL
            : N_("The Ready condition's message names what the kubelet misses; `gpuop node "
                 "status NODE` shows the containerd and kubelet below it."));
}

/* What the running daemon loaded: CRI up with the nvidia handler. */
static void grade_loaded(grader *g, const char *name, const json_t *agent)
{
    const json_t *loaded = json_object_get(agent, "loaded");
    const char *phase = kube_str_at(loaded, "phase");
    const char *cri = kube_str_at(loaded, "cri");
    const json_t *handlers = json_object_get(loaded, "handlers");
    bool running = phase && strcmp(phase, "running") == 0;
    bool cri_up = running && cri && strcmp(cri, "up") == 0;
    bool ok = cri_up && has(handlers, "nvidia");
    char code[96], where[128], observed[700], list[256];
    snprintf(code, sizeof code, "incident.%s.loaded", name);
    snprintf(where, sizeof where, "node/%s containerd (CRI status)", name);
    join(handlers, list, sizeof list);
    if (!agent)
        snprintf(observed, sizeof observed, "%s", _("(no simulated node)"));
    else if (!running)
        gp_msg_snprintf(observed, sizeof observed, _("containerd is %s"), phase ? phase : "-");
    else if (!cri_up)
        gp_msg_snprintf(observed, sizeof observed, _("CRI failed: %s"),
                        kube_str_at(loaded, "cri_error") ? kube_str_at(loaded, "cri_error") : "");
    else
        gp_msg_snprintf(observed, sizeof observed, _("CRI up, handlers: %s"), list);
    cond(g, code, ok, where, _("CRI up, handlers include nvidia"), observed,
         ok ? NULL
            : N_("Ask the daemon, not its files: containerd reads them when it starts, and only "
                 "then (`gpuop node status NODE`, `gpuop containerd check nvidia --source "
                 "daemon`)."));
}

/* What a restart would load now: the files' CRI valid, with nvidia. */
static void grade_restart_safe(grader *g, const char *name, const json_t *agent)
{
    const json_t *declared = json_object_get(agent, "declared");
    const char *error = kube_str_at(declared, "error");
    const char *cri_error = kube_str_at(declared, "cri_error");
    const json_t *handlers = json_object_get(declared, "handlers");
    bool ok = agent && !error && !cri_error && has(handlers, "nvidia");
    char code[96], where[128], observed[700], list[256];
    snprintf(code, sizeof code, "incident.%s.restart", name);
    snprintf(where, sizeof where, "node/%s /etc/containerd (what a restart loads)", name);
    join(handlers, list, sizeof list);
    if (!agent)
        snprintf(observed, sizeof observed, "%s", _("(no simulated node)"));
    else if (error || cri_error)
        gp_msg_snprintf(observed, sizeof observed, _("a restart would fail: %s"),
                        error ? error : cri_error);
    else
        gp_msg_snprintf(observed, sizeof observed, _("a restart would load: %s"), list);
    cond(g, code, ok, where, _("a valid CRI config with the nvidia handler"), observed,
         ok ? NULL
            : N_("The files are what the next restart loads: `gpuop containerd merge --root "
                 "DIR` (DIR from `gpuop node files NODE`) predicts it key by key."));
}

static void grade_driver(grader *g, const char *name, const json_t *agent)
{
    const json_t *st = json_object_get(agent, "state");
    bool ok = json_is_true(json_object_get(agent, "driver_loaded"));
    char code[96], where[128], observed[400];
    snprintf(code, sizeof code, "incident.%s.driver", name);
    snprintf(where, sizeof where, "node/%s nvidia kernel module", name);
    const char *built = kube_str_at(st, "driver_kernel"), *booted = kube_str_at(st, "kernel");
    if (ok)
        gp_msg_snprintf(observed, sizeof observed, _("loaded (kernel %s)"), booted ? booted : "-");
    else
        gp_msg_snprintf(observed, sizeof observed, _("not loaded: built for %s, booted %s"),
                        built ? built : "-", booted ? booted : "-");
    cond(g, code, ok, where, _("loaded"), agent ? observed : _("(no simulated node)"),
         ok ? NULL
            : N_("A module loads only into the kernel it was built for; the node boots what "
                 "node.toml says, and reads it at each boot."));
}

/* What the device plugin registered with the node's kubelet: its
 * allocatable count, -1 when none registered nvidia.com/gpu. */
static long long registered(const json_t *agent)
{
    size_t i;
    const json_t *d;
    json_array_foreach(json_object_get(agent, "devices"), i, d)
    {
        const char *n = kube_str_at(d, "name");
        if (n && strcmp(n, "nvidia.com/gpu") == 0)
            return json_integer_value(json_object_get(d, "allocatable"));
    }
    return -1;
}

/* The count in node status, and that it is the device plugin's: a status
 * patch puts numbers there without any plugin behind them. */
static void grade_gpus(grader *g, const char *name, const json_t *node, const json_t *agent)
{
    char want[16], code[96], where[128], observed[256];
    snprintf(want, sizeof want, "%d", g->p->gpus_per_node);
    const char *now =
        json_string_value(json_object_get(kube_at(node, "status.allocatable"), "nvidia.com/gpu"));
    bool advertised = now && strcmp(now, want) == 0;
    bool by_plugin = registered(agent) == g->p->gpus_per_node;
    bool ok = advertised && by_plugin;
    snprintf(observed, sizeof observed, "%s", now ? now : _("(absent)"));
    if (advertised && !by_plugin)
        gp_msg_snprintf(observed, sizeof observed,
                        _("%s in node status, but no device plugin registered them"), now);
    snprintf(code, sizeof code, "incident.%s.gpus", name);
    snprintf(where, sizeof where, "node/%s .status.allocatable[nvidia.com/gpu]", name);
    cond(g, code, ok, where, want, observed,
         ok ? NULL
            : N_("The device plugin registers the GPUs once its pod runs, which needs the "
                 "nvidia handler loaded and the driver's module: see its pod's events, "
                 "`gpuop nodes`."));
}

/* ---- the jobs and the toolkit --------------------------------------------- */

static const json_t *job(const grader *g, int i)
{
    char name[64];
    snprintf(name, sizeof name, "%s%d", LAB_INCIDENT_JOB, i);
    size_t k;
    const json_t *pod;
    json_array_foreach(json_object_get(g->snap, "jobs"), k, pod)
    {
        const char *n = kube_str_at(pod, "metadata.name");
        if (n && strcmp(n, name) == 0) return pod;
    }
    return NULL;
}

static void grade_jobs(grader *g)
{
    for (int i = 0; i < LAB_NODES; i++) {
        const json_t *pod = job(g, i);
        const char *phase = kube_str_at(pod, "status.phase");
        bool ok = phase && strcmp(phase, "Running") == 0;
        char code[96], where[128];
        snprintf(code, sizeof code, "incident.job.%s%d", LAB_INCIDENT_JOB, i);
        snprintf(where, sizeof where, "pod/gpu-lab/%s%d .status.phase", LAB_INCIDENT_JOB, i);
        cond(g, code, ok, where, "Running", pod ? (phase ? phase : "-") : _("(no such pod)"),
             ok ? NULL
                : N_("A job runs once a node advertises the GPUs it asks for (`gpuop "
                     "why-pending`); a job that was deleted is submitted again with the same "
                     "spec."));
    }
}

/* containerd-1.6: the toolkit will not write the bare drop-in again. */
static void grade_toolkit(grader *g)
{
    const json_t *ds = json_object_get(g->snap, "toolkit");
    bool bare = false;
    size_t i, j;
    const json_t *c, *e;
    json_array_foreach(kube_at(ds, "spec.template.spec.containers"), i, c)
    {
        json_array_foreach(json_object_get(c, "env"), j, e)
        {
            const char *n = kube_str_at(e, "name"), *v = kube_str_at(e, "value");
            if (n && strcmp(n, "GPUOP_TOOLKIT_VARIANT") == 0 && v && strcmp(v, "bare-dropin") == 0)
                bare = true;
        }
    }
    char where[160];
    snprintf(where, sizeof where, "daemonset/gpu-operator/%s .spec.template", LAB_INCIDENT_TOOLKIT);
    cond(g, "incident.toolkit.durable", !bare, where, _("a toolkit that keeps runc"),
         bare ? _("still writes the bare drop-in (GPUOP_TOOLKIT_VARIANT=bare-dropin)")
              : (ds && !json_is_null(ds) ? _("writes a drop-in that keeps runc")
                                         : _("no toolkit DaemonSet")),
         bare ? N_("The toolkit writes its drop-in each time its pod starts (a reboot, a "
                   "rollout): while it writes the bare one, the next start takes runc away "
                   "again.")
              : NULL);
}

json_t *lab_grade_incident(lab_scenario s, const char *root, const lab_params *p,
                           const json_t *snapshot)
{
    grader g = {s, root, p, snapshot, json_array()};
    grade_answer(&g);
    for (int i = 0; i < LAB_NODES; i++) {
        const char *name = lab_node_name(i);
        const json_t *node = json_object_get(json_object_get(snapshot, "nodes"), name);
        const json_t *agent = json_object_get(json_object_get(snapshot, "agents"), name);
        if (json_is_null(node)) node = NULL;
        if (json_is_null(agent)) agent = NULL;
        grade_ready(&g, name, node);
        grade_loaded(&g, name, agent);
        grade_restart_safe(&g, name, agent);
        grade_driver(&g, name, agent);
        grade_gpus(&g, name, node, agent);
    }
    grade_jobs(&g);
    if (s == LAB_SCENARIO_CONTAINERD_16) grade_toolkit(&g);
    return lab_step_result(0, lab_scenario_title(s), g.conds);
}
