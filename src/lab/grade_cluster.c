/* Steps 5-8: manifests, output files and the live cluster.
 *
 * Each condition reads one thing and says where it looked: a manifest's
 * FILE:LINE:COL (positions from the YAML reader), an output file's line, or
 * an object's field path. Expected values come from the cluster (what the
 * scheduler recorded, what a node advertises, what the DaemonSet reports)
 * or from the learner's own files, so a copied answer that disagrees with
 * this cluster fails. */
#include "lab/grade_cluster.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/sched_message.h"
#include "kube/daemonset.h"
#include "kube/json.h"
#include "kube/quantity.h"
#include "lab/labcluster.h"
#include "lab/outfile_internal.h"
#include "util/i18n.h"
#include "util/yaml_json.h"

typedef struct grader {
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

/* ---- values ---------------------------------------------------------- */

/* A scalar as text ("4" for both 4 and "4"); NULL for missing or null. */
static const char *scalar_text(const json_t *v, char *buf, size_t size)
{
    if (json_is_string(v)) return json_string_value(v);
    if (json_is_integer(v)) {
        snprintf(buf, size, "%lld", (long long)json_integer_value(v));
        return buf;
    }
    if (json_is_real(v)) {
        snprintf(buf, size, "%g", json_real_value(v));
        return buf;
    }
    if (json_is_boolean(v)) return json_is_true(v) ? "true" : "false";
    return NULL;
}

/* What a learner sees for a value: its text, its JSON, or "(missing)". */
static char *shown(const json_t *v)
{
    char buf[64];
    const char *t = scalar_text(v, buf, sizeof buf);
    if (t && json_is_string(v)) {
        size_t n = strlen(t) + 3;
        char *q = malloc(n);
        snprintf(q, n, "\"%s\"", t);
        return q;
    }
    if (t) return strdup(t);
    if (!v || json_is_null(v)) return strdup(_("(missing)"));
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static bool quantity_equals(const char *text, const char *want)
{
    kube_quantity a, b;
    gp_error e;
    if (!text || kube_quantity_parse(text, &a, &e) != 0 || kube_quantity_parse(want, &b, &e) != 0)
        return false;
    return kube_quantity_cmp(&a, &b) == 0;
}

/* ---- manifests --------------------------------------------------------- */

typedef struct manifest {
    char path[PATH_MAX];
    const char *rel;
    json_t *docs, *positions;
    const json_t *doc; /* the document of the wanted kind */
    const json_t *pos;
} manifest;

static void manifest_free(manifest *m)
{
    json_decref(m->docs);
    json_decref(m->positions);
}

/* Loads R/rel and picks its `kind` document; one `<prefix>.file` condition
 * says whether that worked. */
static bool load_manifest(grader *g, manifest *m, const char *rel, const char *kind,
                          const char *code, const char *hint)
{
    memset(m, 0, sizeof *m);
    m->rel = rel;
    snprintf(m->path, sizeof m->path, "%s/%s", g->root, rel);
    gp_error err = {0};
    if (gp_yaml_load_file(m->path, &m->docs, &m->positions, &err) != 0) {
        cond(g, code, false, rel, kind, err.text, hint);
        return false;
    }
    size_t i;
    const json_t *doc;
    json_array_foreach(m->docs, i, doc)
    {
        const char *k = json_string_value(json_object_get(doc, "kind"));
        if (k && strcmp(k, kind) == 0) {
            m->doc = doc;
            m->pos = json_array_get(m->positions, i);
            break;
        }
    }
    char observed[128];
    snprintf(observed, sizeof observed, m->doc ? "%s" : _("no %s in the file"), kind);
    cond(g, code, m->doc != NULL, rel, kind, observed, hint);
    return m->doc != NULL;
}

/* "k8s/gpu-pod.yaml:12:9" for a JSON pointer in the manifest's document. */
static const char *where_in(const manifest *m, const char *pointer, char *buf, size_t size)
{
    unsigned line = 0, col = 0;
    gp_yaml_position(m->pos, pointer, &line, &col);
    if (line)
        snprintf(buf, size, "%s:%u:%u", m->rel, line, col);
    else
        snprintf(buf, size, "%s", m->rel);
    return buf;
}

static const json_t *at_pointer(const json_t *v, const char *pointer)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", pointer);
    char *save = NULL;
    for (char *k = strtok_r(buf, "/", &save); k && v; k = strtok_r(NULL, "/", &save)) {
        if (json_is_array(v)) {
            char *end;
            long idx = strtol(k, &end, 10);
            v = *end ? NULL : json_array_get(v, (size_t)idx);
        } else {
            v = json_object_get(v, k);
        }
    }
    return v;
}

/* One condition: the manifest's field at `pointer` is the string `want`. */
static void manifest_field(grader *g, const manifest *m, const char *code, const char *pointer,
                           const char *want, const char *hint)
{
    char where[PATH_MAX + 32], buf[64];
    const json_t *v = at_pointer(m->doc, pointer);
    const char *t = scalar_text(v, buf, sizeof buf);
    char *obs = shown(v);
    cond(g, code, t && strcmp(t, want) == 0, where_in(m, pointer, where, sizeof where), want, obs,
         hint);
    free(obs);
}

/* The first container limit or request for `resource`, and its pointer. */
static const json_t *container_resource(const json_t *podspec, const char *kind,
                                        const char *resource, char *pointer, size_t size,
                                        const char *base)
{
    const json_t *cs = json_object_get(podspec, "containers");
    size_t i;
    const json_t *c;
    json_array_foreach(cs, i, c)
    {
        const json_t *v = json_object_get(kube_get(c, "resources"), kind);
        v = json_object_get(v, resource);
        if (v) {
            snprintf(pointer, size, "%s/containers/%zu/resources/%s/%s", base, i, kind, resource);
            return v;
        }
    }
    snprintf(pointer, size, "%s/containers", base);
    return NULL;
}

/* ---- output files ------------------------------------------------------ */

/* Reads R/out/NAME; one `<code>` condition when it is missing. */
static bool load_out(grader *g, lab_outfile *f, const char *name, const char *code,
                     const char *hint)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/out/%s", g->root, name);
    gp_error err = {0};
    char rel[64];
    snprintf(rel, sizeof rel, "out/%s", name);
    if (lab_outfile_read(path, f, &err) != 0) {
        cond(g, code, false, rel, _("the file"), _("(missing)"), hint);
        return false;
    }
    return true;
}

static void out_where(const char *name, const lab_line *l, char *buf, size_t size)
{
    if (l)
        snprintf(buf, size, "out/%s:%u", name, l->number);
    else
        snprintf(buf, size, "out/%s", name);
}

/* KEY=VALUE line `index` (0-based) must be KEY with `want`. */
static void out_key(grader *g, const lab_outfile *f, const char *name, size_t index,
                    const char *key, const char *want, const char *code, const char *hint)
{
    const lab_line *l = lab_outfile_find(f, key);
    char where[128], expected[256], observed[512];
    out_where(name, l, where, sizeof where);
    snprintf(expected, sizeof expected, "%s=%s", key, want ? want : "?");
    if (!l) {
        snprintf(observed, sizeof observed, _("no %s= line"), key);
        cond(g, code, false, where, expected, observed, hint);
        return;
    }
    bool in_order = index < f->count && &f->lines[index] == l;
    snprintf(observed, sizeof observed, "%s", l->text);
    if (!in_order) {
        char expected_at[300];
        snprintf(expected_at, sizeof expected_at, _("%s on line %zu"), expected, index + 1);
        cond(g, code, false, where, expected_at, observed,
             N_("Write the lines in the order the step lists them."));
        return;
    }
    cond(g, code, want && strcmp(l->value, want) == 0, where, expected, observed, hint);
}

/* ---- cluster ----------------------------------------------------------- */

static const json_t *snap_node(const grader *g, const char *name)
{
    const json_t *n = json_object_get(json_object_get(g->snap, "nodes"), name);
    return json_is_object(n) ? n : NULL;
}

/* A node's nvidia.com/gpu in status.<field> ("capacity"/"allocatable"). */
static const char *advertised(const json_t *node, const char *field)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(node, "status"), field), "nvidia.com/gpu"));
}

static bool is_object(const json_t *v)
{
    return json_is_object(v);
}

static void cluster_exists(grader *g, const char *code, const char *what, const json_t *obj,
                           const char *hint)
{
    cond(g, code, is_object(obj), what, _("exists"), is_object(obj) ? _("exists") : _("not found"),
         hint);
}

/* ---- step 5 ------------------------------------------------------------ */

/* The scheduler's record for cuda-probe: every FailedScheduling message,
 * newest last, plus the PodScheduled=False condition when it is there. */
static json_t *scheduler_messages(const grader *g)
{
    json_t *out = json_array();
    size_t i;
    const json_t *ev;
    json_array_foreach(json_object_get(g->snap, "pod_events"), i, ev)
    {
        const char *reason = kube_str_or_null(ev, "reason");
        const char *msg = kube_str_or_null(ev, "message");
        if (reason && strcmp(reason, "FailedScheduling") == 0 && msg)
            json_array_append_new(out, json_string(msg));
    }
    const json_t *conds = kube_at(json_object_get(g->snap, "pod"), "status.conditions");
    const json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *type = kube_str_or_null(c, "type"), *status = kube_str_or_null(c, "status");
        const char *msg = kube_str_or_null(c, "message");
        if (type && strcmp(type, "PodScheduled") == 0 && status && strcmp(status, "False") == 0 &&
            msg)
            json_array_append_new(out, json_string(msg));
    }
    return out;
}

static void grade_step5_files(grader *g)
{
    manifest rc, pod;
    const char *h_rc = N_("A RuntimeClass maps a name pods use to a handler containerd must load.");
    if (load_manifest(g, &rc, "k8s/runtimeclass.yaml", "RuntimeClass", "runtimeclass.file", h_rc)) {
        manifest_field(g, &rc, "runtimeclass.name", "/metadata/name", "nvidia", h_rc);
        manifest_field(g, &rc, "runtimeclass.handler", "/handler", "nvidia",
                       N_("The handler is the runtime name in containerd's runtimes table."));
    }
    manifest_free(&rc);
    const char *h_pod =
        N_("The pod is what the learner's users would submit: a GPU request through "
           "the RuntimeClass.");
    if (load_manifest(g, &pod, "k8s/gpu-pod.yaml", "Pod", "pod.file", h_pod)) {
        manifest_field(g, &pod, "pod.namespace", "/metadata/namespace", "gpu-lab", h_pod);
        manifest_field(g, &pod, "pod.name", "/metadata/name", "cuda-probe", h_pod);
        manifest_field(g, &pod, "pod.runtime_class", "/spec/runtimeClassName", "nvidia", h_pod);
        char pointer[256], where[PATH_MAX + 32], buf[64];
        const json_t *v = container_resource(json_object_get(pod.doc, "spec"), "limits",
                                             "nvidia.com/gpu", pointer, sizeof pointer, "/spec");
        char *obs = shown(v);
        cond(g, "pod.gpu_limit", quantity_equals(scalar_text(v, buf, sizeof buf), "1"),
             where_in(&pod, pointer, where, sizeof where), "nvidia.com/gpu: 1", obs,
             N_("Extended resources such as GPUs are requested under limits."));
        free(obs);
    }
    manifest_free(&pod);
}

static void grade_step5_cluster(grader *g)
{
    const json_t *ns = json_object_get(g->snap, "namespace");
    cluster_exists(g, "cluster.namespace", "namespace/gpu-lab", ns,
                   N_("The namespace has to exist before the pod is applied."));
    const json_t *rc = json_object_get(g->snap, "runtimeclass");
    char *obs = shown(kube_get(rc, "handler"));
    cond(g, "cluster.runtimeclass",
         is_object(rc) && kube_str_or_null(rc, "handler") &&
             strcmp(kube_str_or_null(rc, "handler"), "nvidia") == 0,
         "runtimeclass/nvidia .handler", "\"nvidia\"", is_object(rc) ? obs : _("not found"),
         N_("Apply the RuntimeClass file."));
    free(obs);
    const json_t *pod = json_object_get(g->snap, "pod");
    const char *rcn = json_string_value(kube_at(pod, "spec.runtimeClassName"));
    char pointer[256], buf[64];
    const json_t *lim = container_resource(kube_get(pod, "spec"), "limits", "nvidia.com/gpu",
                                           pointer, sizeof pointer, "spec");
    const char *gpus = scalar_text(lim, buf, sizeof buf);
    bool ok = is_object(pod) && rcn && strcmp(rcn, "nvidia") == 0 && quantity_equals(gpus, "1");
    char observed[256];
    if (!is_object(pod))
        snprintf(observed, sizeof observed, "%s", _("not found"));
    else
        snprintf(observed, sizeof observed, "runtimeClassName=%s, nvidia.com/gpu=%s",
                 rcn ? rcn : "-", gpus ? gpus : "-");
    cond(g, "cluster.pod", ok, "pod/gpu-lab/cuda-probe",
         "runtimeClassName=nvidia, nvidia.com/gpu=1", observed, N_("Apply the pod file."));
}

static void grade_step5_out(grader *g)
{
    json_t *record = scheduler_messages(g);
    const char *latest = json_string_value(json_array_get(record, json_array_size(record) - 1));
    cond(g, "cluster.scheduler_record", latest != NULL,
         "events gpu-lab involvedObject.name=cuda-probe reason=FailedScheduling",
         _("the scheduler's FailedScheduling record"), latest ? latest : _("none"),
         N_("The scheduler records why a pod cannot be placed; look at the pod's events."));
    lab_outfile f;
    const char *h = N_("Read the PodScheduled condition as the scheduler wrote it; do not type or "
                       "paraphrase it.");
    if (!load_out(g, &f, "unscheduled.txt", "out.unscheduled.file", h)) {
        json_decref(record);
        return;
    }
    /* Two plain lines, or REASON=/MESSAGE= lines: both say the same. */
    const lab_line *reason = f.count > 0 ? &f.lines[0] : NULL;
    const lab_line *message = f.count > 1 ? &f.lines[1] : NULL;
    const char *reason_text = reason ? reason->text : NULL;
    const char *message_text = message ? message->text : NULL;
    if (reason && reason->key && strcmp(reason->key, "REASON") == 0) reason_text = reason->value;
    if (message && message->key && strcmp(message->key, "MESSAGE") == 0)
        message_text = message->value;
    char where[128];
    out_where("unscheduled.txt", reason, where, sizeof where);
    cond(g, "out.unscheduled.reason", reason_text && strcmp(reason_text, "Unschedulable") == 0,
         where, "Unschedulable", reason_text ? reason_text : _("(missing)"), h);
    out_where("unscheduled.txt", message, where, sizeof where);
    cond(g, "out.unscheduled.message", message_text && kube_has_string(record, message_text), where,
         latest ? latest : _("the scheduler's message"),
         message_text ? message_text : _("(missing)"), h);
    lab_outfile_free(&f);
    json_decref(record);
}

/* ---- step 6 ------------------------------------------------------------ */

static void grade_step6_cluster(grader *g)
{
    char want[32];
    snprintf(want, sizeof want, "%d", g->p->gpus_per_node);
    const json_t *node = snap_node(g, "lab-node-0");
    const char *h = N_("The device plugin's registration ends as numbers in node status; patch the "
                       "status subresource.");
    const char *fields[] = {"capacity", "allocatable"};
    for (int i = 0; i < 2; i++) {
        char code[64], where[96];
        snprintf(code, sizeof code, "cluster.node0.%s", fields[i]);
        snprintf(where, sizeof where, "node/lab-node-0 .status.%s[nvidia.com/gpu]", fields[i]);
        const char *v = advertised(node, fields[i]);
        cond(g, code, v && strcmp(v, want) == 0, where, want, v ? v : _("(absent)"), h);
    }
    const json_t *pod = json_object_get(g->snap, "pod");
    const char *phase = json_string_value(kube_at(pod, "status.phase")),
               *on = json_string_value(kube_at(pod, "spec.nodeName"));
    char observed[160];
    snprintf(observed, sizeof observed, "phase=%s, node=%s", phase ? phase : "-", on ? on : "-");
    cond(g, "cluster.pod_running",
         phase && strcmp(phase, "Running") == 0 && on && strcmp(on, "lab-node-0") == 0,
         "pod/gpu-lab/cuda-probe .status.phase", "phase=Running, node=lab-node-0", observed,
         N_("Once a node advertises the resource, the scheduler places the waiting pod."));
}

/* "0", "<none>", "" and absence all mean no advertisement. */
static bool means_none(const char *v)
{
    return !v || !*v || strcmp(v, "0") == 0 || strcmp(v, "<none>") == 0;
}

/* The value on a node-gpu.txt row: the second column, or NULL. */
static const char *row_value(const lab_line *l, char *buf, size_t size)
{
    char name[128];
    int n = sscanf(l->text, "%127s %63s", name, buf);
    (void)size;
    return n == 2 ? buf : NULL;
}

static const lab_line *row_of(const lab_outfile *f, const char *node)
{
    for (size_t i = 0; i < f->count; i++) {
        char name[128];
        if (sscanf(f->lines[i].text, "%127s", name) == 1 && strcmp(name, node) == 0)
            return &f->lines[i];
    }
    return NULL;
}

static void grade_step6_out(grader *g)
{
    lab_outfile f;
    const char *h =
        N_("Read what each node advertises from the cluster, not from what you expect.");
    if (!load_out(g, &f, "node-gpu.txt", "out.node_gpu.file", h)) return;
    char time_sliced[32];
    snprintf(time_sliced, sizeof time_sliced, "%d", g->p->gpus_per_node * g->p->replicas);
    for (int i = 0; i < LAB_NODES; i++) {
        const char *name = lab_node_name(i);
        const char *now = advertised(snap_node(g, name), "allocatable");
        const lab_line *row = row_of(&f, name);
        char code[64], where[128], buf[64], expected[96];
        snprintf(code, sizeof code, "out.node_gpu.%s", name);
        out_where("node-gpu.txt", row, where, sizeof where);
        const char *value = row ? row_value(row, buf, sizeof buf) : NULL;
        bool ok = row && (means_none(now) ? means_none(value) : value && strcmp(value, now) == 0);
        /* Step 7 raises lab-node-1 later: its step-6 value (none) stays right. */
        if (!ok && row && i == 1 && now && strcmp(now, time_sliced) == 0 && means_none(value))
            ok = true;
        if (i == 1 && now && strcmp(now, time_sliced) == 0)
            snprintf(expected, sizeof expected, "%s %s (or <none>, before step 7)", name, now);
        else
            snprintf(expected, sizeof expected, "%s %s", name, now ? now : "<none>");
        cond(g, code, ok, where, expected, row ? row->text : _("(no row)"), h);
    }
    lab_outfile_free(&f);
}

/* ---- step 7 ------------------------------------------------------------ */

/* The sharing config inside a ConfigMap's data.any, parsed. */
static json_t *sharing_config(const json_t *configmap)
{
    const char *text = json_string_value(kube_at(configmap, "data.any"));
    if (!text) return NULL;
    json_t *docs = NULL;
    gp_error err;
    if (gp_yaml_to_json(text, strlen(text), "data.any", &docs, NULL, &err) != 0) return NULL;
    json_t *doc = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return doc;
}

static const json_t *first_resource(const json_t *config)
{
    return json_array_get(kube_at(config, "sharing.timeSlicing.resources"), 0);
}

static void grade_step7_file(grader *g)
{
    manifest m;
    const char *h = N_("The device plugin reads its sharing config as a YAML string inside the "
                       "ConfigMap.");
    if (!load_manifest(g, &m, "k8s/time-slicing.yaml", "ConfigMap", "timeslicing.file", h)) {
        manifest_free(&m);
        return;
    }
    manifest_field(g, &m, "timeslicing.namespace", "/metadata/namespace", "gpu-operator", h);
    manifest_field(g, &m, "timeslicing.name", "/metadata/name", "time-slicing-config", h);
    char where[PATH_MAX + 32], want[32];
    where_in(&m, "/data/any", where, sizeof where);
    json_t *config = sharing_config(m.doc);
    cond(g, "timeslicing.config", config != NULL, where, _("a YAML string in data.any"),
         config ? _("parsed") : _("missing or not YAML"), h);
    const json_t *fail = kube_at(config, "sharing.timeSlicing.failRequestsGreaterThanOne");
    char *obs = shown(fail);
    cond(g, "timeslicing.fail_requests", json_is_true(fail), where, "true (boolean)", obs,
         N_("A quoted \"true\" is a string; the plugin wants a boolean."));
    free(obs);
    const json_t *res = first_resource(config);
    obs = shown(kube_get(res, "name"));
    cond(g, "timeslicing.resource",
         kube_str_or_null(res, "name") &&
             strcmp(kube_str_or_null(res, "name"), "nvidia.com/gpu") == 0,
         where, "\"nvidia.com/gpu\"", obs, h);
    free(obs);
    snprintf(want, sizeof want, "%d", g->p->replicas);
    obs = shown(kube_get(res, "replicas"));
    cond(g, "timeslicing.replicas", json_integer_value(kube_get(res, "replicas")) == g->p->replicas,
         where, want, obs, h);
    free(obs);
    json_decref(config);
    manifest_free(&m);
}

/* The replicas the cluster's ConfigMap sets, 0 when unreadable. */
static int cluster_replicas(const grader *g)
{
    json_t *config = sharing_config(json_object_get(g->snap, "configmap"));
    int r = (int)json_integer_value(kube_get(first_resource(config), "replicas"));
    json_decref(config);
    return r;
}

static void grade_step7_cluster(grader *g)
{
    int replicas = cluster_replicas(g);
    char obs[64], want[64];
    if (replicas)
        snprintf(obs, sizeof obs, "replicas=%d", replicas);
    else
        snprintf(obs, sizeof obs, "%s", _("not found"));
    snprintf(want, sizeof want, "replicas=%d", g->p->replicas);
    cond(g, "cluster.configmap", replicas == g->p->replicas,
         "configmap/gpu-operator/time-slicing-config .data.any", want, obs,
         N_("Apply the ConfigMap file."));
    snprintf(want, sizeof want, "%d", g->p->gpus_per_node * (replicas ? replicas : g->p->replicas));
    const json_t *node = snap_node(g, "lab-node-1");
    const char *fields[] = {"capacity", "allocatable"};
    for (int i = 0; i < 2; i++) {
        char code[64], where[96];
        snprintf(code, sizeof code, "cluster.node1.%s", fields[i]);
        snprintf(where, sizeof where, "node/lab-node-1 .status.%s[nvidia.com/gpu]", fields[i]);
        const char *v = advertised(node, fields[i]);
        cond(g, code, v && strcmp(v, want) == 0, where, want, v ? v : _("(absent)"),
             N_("With time-slicing each physical GPU is advertised replicas times."));
    }
}

static void grade_step7_out(grader *g)
{
    lab_outfile f;
    const char *h = N_("Replicas come from the ConfigMap, the advertised count from the node; "
                       "time-slicing shares memory without guaranteeing any.");
    if (!load_out(g, &f, "slots.txt", "out.slots.file", h)) return;
    int replicas = cluster_replicas(g);
    const char *adv = advertised(snap_node(g, "lab-node-1"), "allocatable");
    char physical[16], reps[16], vram[16];
    snprintf(physical, sizeof physical, "%d", g->p->gpus_per_node);
    snprintf(reps, sizeof reps, "%d", replicas);
    snprintf(vram, sizeof vram, "%d", g->p->gpu_memory_gib);
    const struct {
        const char *key, *want, *code;
    } rows[] = {
        {"PHYSICAL_GPUS", physical, "out.slots.physical_gpus"},
        {"REPLICAS", replicas ? reps : NULL, "out.slots.replicas"},
        {"ADVERTISED", adv, "out.slots.advertised"},
        {"VRAM_PER_GPU_GIB", vram, "out.slots.vram_per_gpu"},
        {"VRAM_GUARANTEED_PER_SLOT_GIB", "0", "out.slots.vram_guaranteed"},
        {"VRAM_SHARED_PER_GPU_GIB", vram, "out.slots.vram_shared"},
        {"ISOLATION", "none", "out.slots.isolation"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        out_key(g, &f, "slots.txt", i, rows[i].key, rows[i].want, rows[i].code, h);
    /* The learner's own numbers must agree with each other too. */
    const lab_line *lp = lab_outfile_find(&f, "PHYSICAL_GPUS");
    const lab_line *lr = lab_outfile_find(&f, "REPLICAS");
    const lab_line *la = lab_outfile_find(&f, "ADVERTISED");
    if (lp && lr && la) {
        long p = atol(lp->value), r = atol(lr->value), a = atol(la->value);
        char expected[64], observed[64];
        snprintf(expected, sizeof expected, "ADVERTISED = %ld x %ld = %ld", p, r, p * r);
        snprintf(observed, sizeof observed, "ADVERTISED=%ld", a);
        cond(g, "out.slots.arithmetic", p * r == a, "out/slots.txt", expected, observed, h);
    }
    lab_outfile_free(&f);
}

/* ---- step 8 ------------------------------------------------------------ */

static const json_t *first_container(const json_t *podspec)
{
    return json_array_get(json_object_get(podspec, "containers"), 0);
}

static void grade_step8_file(grader *g)
{
    manifest m;
    const char *h =
        N_("The toolkit DaemonSet, with a rolling update of at most one node at a time.");
    if (!load_manifest(g, &m, "k8s/toolkit-ds.yaml", "DaemonSet", "toolkit.file", h)) {
        manifest_free(&m);
        return;
    }
    manifest_field(g, &m, "toolkit.namespace", "/metadata/namespace", "gpu-operator", h);
    manifest_field(g, &m, "toolkit.name", "/metadata/name", "nvidia-container-toolkit", h);
    manifest_field(g, &m, "toolkit.max_unavailable",
                   "/spec/updateStrategy/rollingUpdate/maxUnavailable", "1", h);
    /* Before or after the update: old image with the old request, or both new. */
    const json_t *c = first_container(kube_at(m.doc, "spec.template.spec"));
    const char *image = kube_str_or_null(c, "image");
    char buf[64], where[PATH_MAX + 32];
    const char *mem = scalar_text(kube_at(c, "resources.requests.memory"), buf, sizeof buf);
    char new_mem[16], expected[512], observed[512];
    snprintf(new_mem, sizeof new_mem, "%dGi", g->p->ds_request_gib);
    bool old_pair = image && strcmp(image, g->p->ds_old_image) == 0 &&
                    quantity_equals(mem, g->p->ds_old_memory);
    bool new_pair =
        image && strcmp(image, g->p->ds_new_image) == 0 && quantity_equals(mem, new_mem);
    snprintf(expected, sizeof expected, "%s + %s, or %s + %s", g->p->ds_old_image,
             g->p->ds_old_memory, g->p->ds_new_image, new_mem);
    snprintf(observed, sizeof observed, "%s + %s", image ? image : "-", mem ? mem : "-");
    cond(g, "toolkit.template", old_pair || new_pair,
         where_in(&m, "/spec/template/spec/containers/0", where, sizeof where), expected, observed,
         h);
    manifest_free(&m);
}

/* maxUnavailable resolved against desired as the DaemonSet controller's
 * rolling update resolves it; -1 when the controller would refuse it. */
static long resolved_max_unavailable(const json_t *ds)
{
    int64_t desired = kube_int(kube_obj(ds, "status"), "desiredNumberScheduled");
    int64_t max_unavailable, max_surge;
    if (kube_ds_update_limits(kube_obj(ds, "spec"), desired, &max_unavailable, &max_surge, NULL) <
        0)
        return -1;
    return (long)max_unavailable;
}

/* The DaemonSet's pods whose image is not the template's. */
static long old_image_pods(const json_t *ds, const json_t *pods)
{
    const char *image =
        kube_str_or_null(first_container(kube_at(ds, "spec.template.spec")), "image");
    long n = 0;
    size_t i;
    const json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        if (kube_deleting(pod)) continue;
        const char *pi = kube_str_or_null(first_container(kube_get(pod, "spec")), "image");
        if (image && pi && strcmp(image, pi) != 0) n++;
    }
    return n;
}

/* The scheduler's words for the DaemonSet's pod that waits: its
 * PodScheduled=False message. */
static const char *stuck_message(const json_t *pods)
{
    size_t i, j;
    const json_t *pod, *c;
    json_array_foreach(pods, i, pod)
    {
        json_array_foreach(kube_at(pod, "status.conditions"), j, c)
        {
            const char *type = kube_str_or_null(c, "type"), *status = kube_str_or_null(c, "status");
            if (type && strcmp(type, "PodScheduled") == 0 && status && strcmp(status, "False") == 0)
                return kube_str_or_null(c, "message");
        }
    }
    return NULL;
}

static void grade_step8_cluster(grader *g)
{
    const json_t *ds = json_object_get(g->snap, "daemonset");
    cluster_exists(g, "cluster.daemonset", "daemonset/gpu-operator/nvidia-container-toolkit", ds,
                   N_("Apply the DaemonSet file."));
    if (!is_object(ds)) return;
    const json_t *c = first_container(kube_at(ds, "spec.template.spec"));
    const char *image = kube_str_or_null(c, "image");
    char buf[64], new_mem[16], expected[256], observed[256];
    const char *mem = scalar_text(kube_at(c, "resources.requests.memory"), buf, sizeof buf);
    snprintf(new_mem, sizeof new_mem, "%dGi", g->p->ds_request_gib);
    snprintf(expected, sizeof expected, "%s + %s", g->p->ds_new_image, new_mem);
    snprintf(observed, sizeof observed, "%s + %s", image ? image : "-", mem ? mem : "-");
    cond(g, "cluster.daemonset.updated",
         image && strcmp(image, g->p->ds_new_image) == 0 && quantity_equals(mem, new_mem),
         "daemonset/gpu-operator/nvidia-container-toolkit .spec.template", expected, observed,
         N_("Change the image and the memory request in one update."));
    /* The first version must have rolled out: a revision with the old image. */
    bool had_old = false;
    size_t i;
    const json_t *rev;
    json_array_foreach(json_object_get(g->snap, "revisions"), i, rev)
    {
        const char *ri =
            kube_str_or_null(first_container(kube_at(rev, "data.spec.template.spec")), "image");
        had_old |= ri && strcmp(ri, g->p->ds_old_image) == 0;
    }
    cond(g, "cluster.daemonset.history", had_old, "controllerrevisions gpu-operator",
         g->p->ds_old_image, had_old ? g->p->ds_old_image : _("no revision with it"),
         N_("Roll out the first version before the update."));
    long desired = (long)json_integer_value(kube_at(ds, "status.desiredNumberScheduled"));
    long updated = (long)json_integer_value(kube_at(ds, "status.updatedNumberScheduled"));
    snprintf(expected, sizeof expected, _("fewer than %ld of %ld updated"), desired, desired);
    snprintf(observed, sizeof observed, "%ld/%ld", updated, desired);
    cond(g, "cluster.daemonset.stalled", desired > 0 && updated < desired,
         "daemonset .status.updatedNumberScheduled", expected, observed,
         N_("A request no node can satisfy stops a rolling update after the first node."));
}

static void grade_step8_out(grader *g)
{
    const json_t *ds = json_object_get(g->snap, "daemonset");
    lab_outfile f;
    const char *h =
        N_("Read each number from the live DaemonSet and its pods, and the blocker from "
           "the waiting pod's scheduler message.");
    if (!load_out(g, &f, "rollout.txt", "out.rollout.file", h)) return;
    char desired[24] = "?", updated[24] = "?", ready[24] = "?", old[24] = "?", maxu[24] = "?";
    char *blocker = NULL;
    if (is_object(ds)) {
        const json_t *pods = json_object_get(g->snap, "ds_pods");
        snprintf(desired, sizeof desired, "%lld",
                 (long long)json_integer_value(kube_at(ds, "status.desiredNumberScheduled")));
        snprintf(updated, sizeof updated, "%lld",
                 (long long)json_integer_value(kube_at(ds, "status.updatedNumberScheduled")));
        snprintf(ready, sizeof ready, "%lld",
                 (long long)json_integer_value(kube_at(ds, "status.numberReady")));
        snprintf(old, sizeof old, "%ld", old_image_pods(ds, pods));
        snprintf(maxu, sizeof maxu, "%ld", resolved_max_unavailable(ds));
        const char *msg = stuck_message(pods);
        gp_error e;
        json_t *parsed = msg ? an_sched_message_parse(msg, &e) : NULL;
        const char *b = parsed ? an_sched_primary_blocker(parsed) : NULL;
        if (b) blocker = strdup(b);
        json_decref(parsed);
    }
    const struct {
        const char *key, *want, *code;
    } rows[] = {
        {"DESIRED", desired, "out.rollout.desired"},
        {"UPDATED", updated, "out.rollout.updated"},
        {"READY", ready, "out.rollout.ready"},
        {"OLD_IMAGE_PODS", old, "out.rollout.old_image_pods"},
        {"MAX_UNAVAILABLE", maxu, "out.rollout.max_unavailable"},
        {"BLOCKER", blocker, "out.rollout.blocker"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        out_key(g, &f, "rollout.txt", i, rows[i].key, rows[i].want, rows[i].code, h);
    free(blocker);
    lab_outfile_free(&f);
}

/* ---- steps ------------------------------------------------------------- */

json_t *lab_grade_cluster_step(int step, const char *root, const lab_params *p,
                               const json_t *snapshot)
{
    if (step < 5 || step > 8) return NULL;
    grader g = {root, p, snapshot, json_array()};
    switch (step) {
    case 5:
        grade_step5_files(&g);
        grade_step5_cluster(&g);
        grade_step5_out(&g);
        break;
    case 6:
        grade_step6_cluster(&g);
        grade_step6_out(&g);
        break;
    case 7:
        grade_step7_file(&g);
        grade_step7_cluster(&g);
        grade_step7_out(&g);
        break;
    case 8:
        grade_step8_file(&g);
        grade_step8_cluster(&g);
        grade_step8_out(&g);
        break;
    }
    return lab_step_result(step, lab_step_title(step), g.conds);
}
