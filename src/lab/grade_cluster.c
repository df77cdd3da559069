/* Steps 5-8: manifests, output files and the live cluster.
 *
 * Each condition reads one thing and says where it looked: a manifest's
 * FILE:LINE:COL (positions from the YAML reader), an output file's line, or
 * an object's field path. Expected values come from the cluster (what the
 * scheduler recorded, what a node advertises, what the DaemonSet and its
 * revisions say) or from the learner's own files, so a copied answer that
 * disagrees with this cluster fails. A hint names the mistake found when
 * it can tell one from another. */
#include "lab/grade_cluster.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze/sched_message.h"
#include "kube/daemonset.h"
#include "kube/json.h"
#include "kube/quantity.h"
#include "lab/labcluster.h"
#include "lab/outfile_internal.h"
#include "util/i18n.h"
#include "util/msg.h"
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
    if (!text || !want || kube_quantity_parse(text, &a, &e) != 0 ||
        kube_quantity_parse(want, &b, &e) != 0)
        return false;
    return kube_quantity_cmp(&a, &b) == 0;
}

static bool same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
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

/* Loads R/rel and picks its `kind` document, the one named `name` when the
 * file has several; one `<prefix>.file` condition says whether that
 * worked. */
static bool load_manifest(grader *g, manifest *m, const char *rel, const char *kind,
                          const char *name, const char *code, const char *hint)
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
        if (!same(json_string_value(json_object_get(doc, "kind")), kind)) continue;
        bool named = same(kube_str_at(doc, "metadata.name"), name);
        if (!m->doc || named) {
            m->doc = doc;
            m->pos = json_array_get(m->positions, i);
        }
        if (named) break;
    }
    char observed[128];
    if (m->doc)
        snprintf(observed, sizeof observed, "%s", kind);
    else
        gp_msg_snprintf(observed, sizeof observed, _("no %s in the file"), kind);
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
    cond(g, code, same(t, want), where_in(m, pointer, where, sizeof where), want, obs, hint);
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
        const json_t *v = json_object_get(kube_at(c, "resources"), kind);
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

/* How a value compares to the one wanted. */
typedef bool (*value_equal_fn)(const char *seen, const char *want);

/* A whole number, written as one ("5", " 5", but not "5 GiB"). */
static bool number_equal(const char *seen, const char *want)
{
    char *end;
    if (!seen || !want || !*seen) return false;
    long a = strtol(seen, &end, 10);
    if (*end) return false;
    return a == strtol(want, NULL, 10);
}

/* A word of a vocabulary, in any case, '_' or ' ' for '-'. */
static bool word_equal(const char *seen, const char *want)
{
    if (!seen || !want || strlen(seen) != strlen(want)) return false;
    for (size_t i = 0; seen[i]; i++) {
        char c = (char)tolower((unsigned char)seen[i]);
        if (c == '_' || c == ' ') c = '-';
        if (c != want[i]) return false;
    }
    return true;
}

/* KEY=VALUE line `index` (0-based) must be KEY with `want`. `hint_for`,
 * when given, picks a hint for the value seen (NULL: the general one). */
static void out_key(grader *g, const lab_outfile *f, const char *name, size_t index,
                    const char *key, const char *want, value_equal_fn equal, const char *code,
                    const char *hint, const char *(*hint_for)(const char *seen))
{
    const lab_line *l = lab_outfile_find(f, key);
    char where[128], expected[256], observed[512];
    out_where(name, l, where, sizeof where);
    snprintf(expected, sizeof expected, "%s=%s", key, want ? want : "?");
    if (!l) {
        gp_msg_snprintf(observed, sizeof observed, _("no %s= line"), key);
        cond(g, code, false, where, expected, observed, hint);
        return;
    }
    bool in_order = index < f->count && &f->lines[index] == l;
    snprintf(observed, sizeof observed, "%s", l->text);
    if (!in_order) {
        char expected_at[300];
        gp_msg_snprintf(expected_at, sizeof expected_at, _("%s on line %zu"), expected, index + 1);
        cond(g, code, false, where, expected_at, observed,
             N_("Write the lines in the order the step lists them."));
        return;
    }
    bool ok = want && equal(l->value, want);
    const char *specific = !ok && hint_for ? hint_for(l->value) : NULL;
    cond(g, code, ok, where, expected, observed, specific ? specific : hint);
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
        const char *reason = kube_str_at(ev, "reason");
        const char *msg = kube_str_at(ev, "message");
        if (reason && strcmp(reason, "FailedScheduling") == 0 && msg)
            json_array_append_new(out, json_string(msg));
    }
    const json_t *conds = kube_at(json_object_get(g->snap, "pod"), "status.conditions");
    const json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *type = kube_str_at(c, "type"), *status = kube_str_at(c, "status");
        const char *msg = kube_str_at(c, "message");
        if (same(type, "PodScheduled") && same(status, "False") && msg)
            json_array_append_new(out, json_string(msg));
    }
    return out;
}

static const char *const HINT_GPU_POD =
    N_("The pod is what a user would submit: a GPU request through the RuntimeClass.");

static void grade_step5_files(grader *g)
{
    manifest rc, pod;
    const char *h_rc = N_("A RuntimeClass maps a name pods use to a handler containerd must load.");
    if (load_manifest(g, &rc, "k8s/runtimeclass.yaml", "RuntimeClass", "nvidia",
                      "runtimeclass.file", h_rc)) {
        manifest_field(g, &rc, "runtimeclass.name", "/metadata/name", "nvidia", h_rc);
        manifest_field(g, &rc, "runtimeclass.handler", "/handler", "nvidia",
                       N_("The handler is the runtime's name in containerd's runtimes table."));
    }
    manifest_free(&rc);
    if (load_manifest(g, &pod, "k8s/gpu-pod.yaml", "Pod", "cuda-probe", "pod.file", HINT_GPU_POD)) {
        manifest_field(g, &pod, "pod.namespace", "/metadata/namespace", "gpu-lab", HINT_GPU_POD);
        manifest_field(g, &pod, "pod.name", "/metadata/name", "cuda-probe", HINT_GPU_POD);
        manifest_field(g, &pod, "pod.runtime_class", "/spec/runtimeClassName", "nvidia",
                       N_("runtimeClassName names the RuntimeClass, in the pod's spec."));
        char pointer[256], where[PATH_MAX + 32], buf[64];
        const json_t *spec = json_object_get(pod.doc, "spec");
        const json_t *v =
            container_resource(spec, "limits", "nvidia.com/gpu", pointer, sizeof pointer, "/spec");
        const char *hint = N_("The pod asks for one GPU.");
        char request_ptr[256];
        if (!v && container_resource(spec, "requests", "nvidia.com/gpu", request_ptr,
                                     sizeof request_ptr, "/spec")) {
            hint = N_("An extended resource such as nvidia.com/gpu is asked for under limits; "
                      "a request alone is refused, since it cannot be overcommitted.");
            snprintf(pointer, sizeof pointer, "%s", request_ptr);
        }
        char *obs = shown(v);
        cond(g, "pod.gpu_limit", quantity_equals(scalar_text(v, buf, sizeof buf), "1"),
             where_in(&pod, pointer, where, sizeof where), "nvidia.com/gpu: 1", obs, hint);
        free(obs);
    }
    manifest_free(&pod);
}

static void grade_step5_cluster(grader *g)
{
    const json_t *ns = json_object_get(g->snap, "namespace");
    cluster_exists(g, "cluster.namespace", "namespace/gpu-lab", ns,
                   N_("The namespace has to exist before the pod is applied: kubectl create "
                      "namespace, or a Namespace object applied first."));
    const json_t *rc = json_object_get(g->snap, "runtimeclass");
    char *obs = shown(kube_at(rc, "handler"));
    cond(g, "cluster.runtimeclass", is_object(rc) && same(kube_str_at(rc, "handler"), "nvidia"),
         "runtimeclass/nvidia .handler", "\"nvidia\"", is_object(rc) ? obs : _("not found"),
         N_("Apply the RuntimeClass file."));
    free(obs);
    const json_t *pod = json_object_get(g->snap, "pod");
    const char *rcn = kube_str_at(pod, "spec.runtimeClassName");
    char pointer[256], buf[64];
    const json_t *lim = container_resource(kube_at(pod, "spec"), "limits", "nvidia.com/gpu",
                                           pointer, sizeof pointer, "spec");
    const char *gpus = scalar_text(lim, buf, sizeof buf);
    bool ok = is_object(pod) && same(rcn, "nvidia") && quantity_equals(gpus, "1");
    char observed[256];
    if (!is_object(pod))
        snprintf(observed, sizeof observed, "%s", _("not found"));
    else
        snprintf(observed, sizeof observed, "runtimeClassName=%s, nvidia.com/gpu=%s",
                 rcn ? rcn : "-", gpus ? gpus : "-");
    cond(g, "cluster.pod", ok, "pod/gpu-lab/cuda-probe",
         "runtimeClassName=nvidia, nvidia.com/gpu=1", observed,
         is_object(pod) ? N_("The pod in the cluster is not the one the step describes: a pod's "
                             "spec cannot be changed, so delete it and apply the file again.")
                        : N_("Apply the pod file."));
}

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Equal but for case and runs of blanks. */
static bool loosely_equal(const char *a, const char *b)
{
    while (*a && *b) {
        if (isspace((unsigned char)*a) && isspace((unsigned char)*b)) {
            while (isspace((unsigned char)*a))
                a++;
            while (isspace((unsigned char)*b))
                b++;
            continue;
        }
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
        a++;
        b++;
    }
    return !*a && !*b;
}

/* What is wrong with a message line that is not the scheduler's: the hint
 * that says so, without saying the message. */
static const char *message_hint(const char *line, const json_t *record)
{
    size_t i;
    const json_t *v;
    bool prefix = false, part = false, loose = false;
    json_array_foreach(record, i, v)
    {
        const char *m = json_string_value(v);
        prefix |= *line && has_prefix(m, line);
        part |= *line && strstr(m, line) != NULL;
        loose |= loosely_equal(m, line);
    }
    if (has_prefix(line, "Warning") || strstr(line, "FailedScheduling"))
        return N_("That is a row of the event table, with its other columns: the message alone "
                  "goes on the line.");
    if (prefix)
        return N_("The line is the start of the scheduler's message, cut short: the message goes "
                  "on after it.");
    if (part) return N_("The line is a part of the scheduler's message: write all of it.");
    if (loose)
        return N_("The words are the scheduler's, but the spacing or the case differs: copy the "
                  "message as it is written, not retyped.");
    if (kube_has_string(record, line)) return NULL;
    return N_("This is not the message the scheduler wrote for this pod: read the PodScheduled "
              "condition (or the FailedScheduling event) and copy it, do not type or paraphrase "
              "it.");
}

/* A learner's line as a value: in quotes, malloc'd; NULL for NULL. */
static char *quote(const char *line)
{
    if (!line) return NULL;
    size_t n = strlen(line) + 3;
    char *q = malloc(n);
    if (q) snprintf(q, n, "\"%s\"", line);
    return q;
}

static const char *reason_hint(const char *reason, const json_t *record)
{
    if (same(reason, "Pending"))
        return N_("Pending is the pod's phase; the reason asked for is the PodScheduled "
                  "condition's.");
    if (same(reason, "FailedScheduling"))
        return N_("FailedScheduling is the event's reason; the reason asked for is the "
                  "PodScheduled condition's.");
    if (reason && kube_has_string(record, reason))
        return N_("That is the message: the first line is the condition's reason, one word, and "
                  "the second its message.");
    return N_("Read the reason of the pod's PodScheduled condition, one word.");
}

static void grade_step5_out(grader *g)
{
    json_t *record = scheduler_messages(g);
    size_t records = json_array_size(record);
    char seen[96];
    gp_msg_snprintf(seen, sizeof seen, _("%zu messages recorded"), records);
    /* The scheduler's words are the learner's to read, not the grader's to
     * show: neither condition prints them. */
    cond(g, "cluster.scheduler_record", records > 0,
         "events gpu-lab involvedObject.name=cuda-probe reason=FailedScheduling",
         _("the scheduler's FailedScheduling record"), records ? seen : _("none"),
         N_("The scheduler records why a pod cannot be placed; apply the pod while no node "
            "advertises a GPU and look at its events."));
    lab_outfile f;
    const char *h = N_("Two lines: the reason of the pod's PodScheduled condition, then its "
                       "message, as the scheduler wrote it.");
    if (!load_out(g, &f, "unscheduled.txt", "out.unscheduled.file", h)) {
        json_decref(record);
        return;
    }
    /* Two plain lines, or REASON=/MESSAGE= lines: both say the same. */
    const lab_line *reason = f.count > 0 ? &f.lines[0] : NULL;
    const lab_line *message = f.count > 1 ? &f.lines[1] : NULL;
    const char *reason_text = reason ? reason->text : NULL;
    const char *message_text = message ? message->text : NULL;
    if (reason && same(reason->key, "REASON")) reason_text = reason->value;
    if (message && same(message->key, "MESSAGE")) message_text = message->value;
    char where[128];
    out_where("unscheduled.txt", reason, where, sizeof where);
    bool reason_ok = same(reason_text, "Unschedulable");
    /* The learner's lines, quoted: the scheduler's words are values. */
    char *quoted = quote(reason_text);
    cond(g, "out.unscheduled.reason", reason_ok, where, "Unschedulable",
         quoted ? quoted : _("(missing)"), reason_ok ? h : reason_hint(reason_text, record));
    free(quoted);
    out_where("unscheduled.txt", message, where, sizeof where);
    bool message_ok = message_text && kube_has_string(record, message_text);
    const char *mh = message_text && !message_ok ? message_hint(message_text, record) : NULL;
    quoted = quote(message_text);
    cond(g, "out.unscheduled.message", message_ok, where,
         _("the PodScheduled condition's message, word for word as the scheduler wrote it"),
         quoted ? quoted : _("(missing)"), mh ? mh : h);
    free(quoted);
    lab_outfile_free(&f);
    json_decref(record);
}

/* ---- step 6 ------------------------------------------------------------ */

/* The first lab node other than `except` that advertises a GPU. */
static const char *other_advertiser(const grader *g, const char *except)
{
    for (int i = 0; i < LAB_NODES; i++) {
        const char *name = lab_node_name(i);
        if (!same(name, except) && advertised(snap_node(g, name), "allocatable")) return name;
    }
    return NULL;
}

/* Simulated nodes: the count in node status is the device plugin's, as
 * lab-node-0's kubelet (its agent) registered it, not a hand patch. */
static void grade_step6_plugin(grader *g, const json_t *agent, const char *want)
{
    long long registered = -1;
    size_t i;
    const json_t *d;
    json_array_foreach(json_object_get(agent, "devices"), i, d)
    {
        const char *name = json_string_value(json_object_get(d, "name"));
        if (name && strcmp(name, "nvidia.com/gpu") == 0)
            registered = json_integer_value(json_object_get(d, "allocatable"));
    }
    char observed[64];
    if (registered < 0)
        snprintf(observed, sizeof observed, "%s", _("(no plugin registered)"));
    else
        snprintf(observed, sizeof observed, "%lld", registered);
    cond(g, "cluster.node0.plugin", registered >= 0 && registered == atoll(want),
         "node/lab-node-0 kubelet device manager (gpuop node status lab-node-0)", want, observed,
         N_("On simulated nodes the GPUs are the device plugin's to advertise: its DaemonSet's "
            "pod on lab-node-0 registers them; a status patch is not a registration."));
}

static void grade_step6_cluster(grader *g)
{
    const json_t *agent = json_object_get(g->snap, "node0_agent");
    bool agents = agent && !json_is_null(agent);
    char want[32];
    snprintf(want, sizeof want, "%d", g->p->gpus_per_node);
    const json_t *node = snap_node(g, "lab-node-0");
    const char *cap = advertised(node, "capacity"), *alloc = advertised(node, "allocatable");
    bool cap_ok = quantity_equals(cap, want), alloc_ok = quantity_equals(alloc, want);
    char hint[512];
    const char *elsewhere = other_advertiser(g, "lab-node-0");
    if (cap_ok && !alloc_ok)
        snprintf(hint, sizeof hint, "%s",
                 _("capacity says what the node has; the scheduler places pods by allocatable, "
                   "which does not say it: put the count in both, in one status patch."));
    else if (!cap_ok && alloc_ok)
        snprintf(hint, sizeof hint, "%s",
                 _("allocatable says it but capacity does not: a node never has more allocatable "
                   "than capacity, so put the count in both."));
    else if (!cap && !alloc && elsewhere)
        gp_msg_snprintf(hint, sizeof hint,
                        _("lab-node-0 advertises nothing, but %s does: patch the node the step "
                          "names."),
                        elsewhere);
    else if (!cap && !alloc && agents)
        snprintf(hint, sizeof hint, "%s",
                 _("On simulated nodes the device plugin's pod registers the GPUs: is it Running "
                   "on lab-node-0 (kubectl get pods -n gpu-operator -o wide)? Its events say "
                   "why not."));
    else if (!cap && !alloc)
        snprintf(hint, sizeof hint, "%s",
                 _("The device plugin's registration ends as numbers in node status: patch the "
                   "status subresource (--subresource=status); a patch of the node itself leaves "
                   "its status as it was."));
    else
        snprintf(hint, sizeof hint, "%s",
                 _("The step gives the count to advertise, the GPUs the node has."));
    const char *fields[] = {"capacity", "allocatable"};
    const char *values[] = {cap, alloc};
    bool oks[] = {cap_ok, alloc_ok};
    for (int i = 0; i < 2; i++) {
        char code[64], where[96];
        snprintf(code, sizeof code, "cluster.node0.%s", fields[i]);
        snprintf(where, sizeof where, "node/lab-node-0 .status.%s[nvidia.com/gpu]", fields[i]);
        cond(g, code, oks[i], where, want, values[i] ? values[i] : _("(absent)"), hint);
    }
    const json_t *pod = json_object_get(g->snap, "pod");
    const char *phase = kube_str_at(pod, "status.phase"), *on = kube_str_at(pod, "spec.nodeName");
    char observed[160];
    snprintf(observed, sizeof observed, "phase=%s, node=%s", phase ? phase : "-", on ? on : "-");
    if (agents) grade_step6_plugin(g, agent, want);
    cond(g, "cluster.pod_running", same(phase, "Running") && same(on, "lab-node-0"),
         "pod/gpu-lab/cuda-probe .status.phase", "phase=Running, node=lab-node-0", observed,
         N_("Once a node advertises the resource, the scheduler places the waiting pod."));
}

/* "0", "<none>", "" and absence all mean no advertisement. */
static bool means_none(const char *v)
{
    return !v || !*v || strcmp(v, "0") == 0 || strcmp(v, "<none>") == 0;
}

/* A row of node-gpu.txt: the node it names and its value ("" when the
 * row has one column). */
typedef struct node_row {
    const lab_line *line;
    char value[64];
} node_row;

/* The node-gpu.txt table, read: whitespace-separated columns, an optional
 * header as the first line. `problem` says what is not such a table. */
typedef struct node_table {
    node_row rows[LAB_NODES];
    char problem[256];
    unsigned problem_line;
} node_table;

static int node_index(const char *name, size_t len)
{
    for (int i = 0; i < LAB_NODES; i++)
        if (strlen(lab_node_name(i)) == len && memcmp(lab_node_name(i), name, len) == 0) return i;
    return -1;
}

/* The lab node a token starts with, glued to what follows ("lab-node-0,4"). */
static int glued_node(const char *token, size_t len, char *sep)
{
    for (int i = 0; i < LAB_NODES; i++) {
        size_t n = strlen(lab_node_name(i));
        if (len > n && memcmp(token, lab_node_name(i), n) == 0 &&
            !isalnum((unsigned char)token[n])) {
            *sep = token[n];
            return i;
        }
    }
    return -1;
}

static void table_problem(node_table *t, const lab_line *l, const char *fmt, const char *arg)
{
    if (t->problem[0]) return;
    gp_msg_snprintf(t->problem, sizeof t->problem, fmt, arg);
    t->problem_line = l->number;
}

static void read_node_table(const lab_outfile *f, node_table *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < f->count; i++) {
        const lab_line *l = &f->lines[i];
        const char *cols[4];
        size_t lens[4], n = 0;
        for (const char *p = l->text; *p && n < 4;) {
            p += strspn(p, " \t");
            if (!*p) break;
            size_t len = strcspn(p, " \t");
            cols[n] = p;
            lens[n++] = len;
            p += len;
        }
        int node = n ? node_index(cols[0], lens[0]) : -1;
        char sep = 0;
        if (node < 0 && n && glued_node(cols[0], lens[0], &sep) >= 0) {
            char s[2] = {sep, '\0'};
            table_problem(t, l, _("the columns are joined by '%s', not separated by spaces"), s);
            continue;
        }
        if (node < 0) {
            /* The first line may be a header; any other is not a row. */
            if (i != 0) table_problem(t, l, _("a line that is not a node's row: %s"), l->text);
            continue;
        }
        if (n > 2) {
            table_problem(t, l, _("a row of more than two columns: %s"), l->text);
            continue;
        }
        if (t->rows[node].line) {
            table_problem(t, l, _("a second row for %s"), lab_node_name(node));
            continue;
        }
        t->rows[node].line = l;
        if (n == 2)
            snprintf(t->rows[node].value, sizeof t->rows[node].value, "%.*s", (int)lens[1],
                     cols[1]);
    }
}

static void grade_step6_out(grader *g)
{
    lab_outfile f;
    const char *h =
        N_("Read what each node advertises from the cluster, not from what you expect.");
    if (!load_out(g, &f, "node-gpu.txt", "out.node_gpu.file", h)) return;
    node_table t;
    read_node_table(&f, &t);
    char where[128];
    if (t.problem_line)
        snprintf(where, sizeof where, "out/node-gpu.txt:%u", t.problem_line);
    else
        snprintf(where, sizeof where, "out/node-gpu.txt");
    const char *format = _("two columns separated by spaces or tabs: the node's name, then its "
                           "nvidia.com/gpu (0, <none> or nothing for none); one row per node; a "
                           "header line first, if any");
    cond(g, "out.node_gpu.format", !t.problem[0], where, format,
         t.problem[0] ? t.problem : _("a two-column table"),
         N_("The table is what kubectl prints with custom columns: NAME and a value, separated "
            "by blanks, not by commas or other characters."));
    char time_sliced[32];
    snprintf(time_sliced, sizeof time_sliced, "%d", g->p->gpus_per_node * g->p->replicas);
    for (int i = 0; i < LAB_NODES; i++) {
        const char *name = lab_node_name(i);
        const char *now = advertised(snap_node(g, name), "allocatable");
        const node_row *row = &t.rows[i];
        char code[64], expected[160];
        snprintf(code, sizeof code, "out.node_gpu.%s", name);
        out_where("node-gpu.txt", row->line, where, sizeof where);
        const char *value = row->value;
        bool ok = row->line && (means_none(now) ? means_none(value) : quantity_equals(value, now));
        /* Step 7 raises lab-node-1 later: its step-6 value (none) stays right. */
        bool raised = i == 1 && same(now, time_sliced);
        if (!ok && row->line && raised && means_none(value)) ok = true;
        if (raised)
            gp_msg_snprintf(expected, sizeof expected,
                            _("%s %s, or none (its value at step 6, before step 7 raised it)"),
                            name, now);
        else
            snprintf(expected, sizeof expected, "%s %s", name, now ? now : "<none>");
        cond(g, code, ok, where, expected, row->line ? row->line->text : _("(no row)"), h);
    }
    lab_outfile_free(&f);
}

/* ---- step 7 ------------------------------------------------------------ */

/* A YAML string of a ConfigMap's data, parsed. */
static json_t *parse_data(const char *text)
{
    if (!text) return NULL;
    json_t *docs = NULL;
    gp_error err;
    if (gp_yaml_to_json(text, strlen(text), "data", &docs, NULL, &err) != 0) return NULL;
    json_t *doc = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return doc;
}

/* The sharing config inside a ConfigMap's data.any, parsed. */
static json_t *sharing_config(const json_t *configmap)
{
    return parse_data(kube_str_at(configmap, "data.any"));
}

static const json_t *first_resource(const json_t *config)
{
    return json_array_get(kube_at(config, "sharing.timeSlicing.resources"), 0);
}

/* Depth-first: the dotted path of the first object key `name` in `v`,
 * into `path` ("" for the top level); false when there is none. */
static bool find_json_key(const json_t *v, const char *name, char *path, size_t cap, size_t used)
{
    if (json_is_object(v)) {
        if (json_object_get(v, name)) {
            path[used] = '\0';
            return true;
        }
        const char *k;
        const json_t *child;
        json_object_foreach((json_t *)v, k, child)
        {
            int n = snprintf(path + used, cap - used, "%s%s", used ? "." : "", k);
            if (n > 0 && used + (size_t)n < cap &&
                find_json_key(child, name, path, cap, used + (size_t)n))
                return true;
        }
    } else if (json_is_array(v)) {
        size_t i;
        const json_t *item;
        json_array_foreach(v, i, item)
        {
            int n = snprintf(path + used, cap - used, "[%zu]", i);
            if (n > 0 && used + (size_t)n < cap &&
                find_json_key(item, name, path, cap, used + (size_t)n))
                return true;
        }
    }
    path[used] = '\0';
    return false;
}

/* When the sharing config lacks `dotted`, a hint that names where its last
 * key is written instead (a key at the wrong level), or NULL. */
static const char *level_hint(const json_t *config, const char *dotted, char *buf, size_t cap)
{
    if (!config || kube_at(config, dotted)) return NULL;
    const char *name = strrchr(dotted, '.');
    name = name ? name + 1 : dotted;
    char found[256];
    if (!find_json_key(config, name, found, sizeof found, 0)) return NULL;
    char parent[256];
    snprintf(parent, sizeof parent, "%.*s", (int)(name - dotted - (name > dotted)), dotted);
    if (found[0])
        gp_msg_snprintf(buf, cap,
                        _("%s is written under %s; the device plugin reads it only under %s."),
                        name, found, parent);
    else
        gp_msg_snprintf(buf, cap,
                        _("%s is written at the top level; the device plugin reads it only under "
                          "%s."),
                        name, parent);
    return buf;
}

static void grade_step7_file(grader *g)
{
    manifest m;
    const char *h = N_("The device plugin reads its sharing config as a YAML string inside the "
                       "ConfigMap, under the key it is told (any).");
    if (!load_manifest(g, &m, "k8s/time-slicing.yaml", "ConfigMap", "time-slicing-config",
                       "timeslicing.file", h)) {
        manifest_free(&m);
        return;
    }
    manifest_field(g, &m, "timeslicing.namespace", "/metadata/namespace", "gpu-operator", h);
    manifest_field(g, &m, "timeslicing.name", "/metadata/name", "time-slicing-config", h);
    char where[PATH_MAX + 32], want[32], hint[512];
    where_in(&m, "/data/any", where, sizeof where);
    json_t *config = sharing_config(m.doc);
    const char *config_hint = h;
    const char *other_key = NULL;
    const json_t *data = json_object_get(m.doc, "data");
    if (!config && json_is_object(data)) {
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)data, k, v)
        {
            json_t *parsed = parse_data(json_string_value(v));
            if (kube_at(parsed, "sharing") && !other_key) other_key = k;
            json_decref(parsed);
        }
    }
    if (other_key) {
        gp_msg_snprintf(hint, sizeof hint,
                        _("The sharing config is under the key %s; the device plugin is told to "
                          "read the key any."),
                        other_key);
        config_hint = hint;
    } else if (!config && json_is_object(kube_at(m.doc, "data.any")))
        config_hint = N_("data.any holds YAML as a string (a block scalar, any: |), not as nested "
                         "YAML: a ConfigMap's values are strings.");
    cond(g, "timeslicing.config", config != NULL, where, _("a YAML string in data.any"),
         config ? _("parsed") : _("missing or not YAML"), config_hint);
    const json_t *fail = kube_at(config, "sharing.timeSlicing.failRequestsGreaterThanOne");
    char *obs = shown(fail);
    const char *fh =
        level_hint(config, "sharing.timeSlicing.failRequestsGreaterThanOne", hint, sizeof hint);
    if (!fh && json_is_string(fail))
        fh = N_("A quoted \"true\" is a string; the plugin wants a boolean, true without quotes.");
    if (!fh)
        fh = N_("failRequestsGreaterThanOne: true makes a pod that asks for two slices fail "
                "rather than believe it got two GPUs.");
    cond(g, "timeslicing.fail_requests", json_is_true(fail), where, "true (boolean)", obs, fh);
    free(obs);
    const json_t *res = first_resource(config);
    const char *rh = level_hint(config, "sharing.timeSlicing.resources", hint, sizeof hint);
    obs = shown(kube_at(res, "name"));
    cond(g, "timeslicing.resource", same(kube_str_at(res, "name"), "nvidia.com/gpu"), where,
         "\"nvidia.com/gpu\"", obs,
         rh ? rh
            : N_("The resource to share is the one the device plugin advertises, "
                 "nvidia.com/gpu."));
    free(obs);
    snprintf(want, sizeof want, "%d", g->p->replicas);
    obs = shown(kube_at(res, "replicas"));
    const char *ph = rh;
    if (!ph && res && !kube_at(res, "replicas"))
        ph = level_hint(config, "sharing.timeSlicing.resources.replicas", hint, sizeof hint);
    if (!ph && json_is_string(kube_at(res, "replicas")))
        ph = N_("replicas is a number, without quotes.");
    cond(g, "timeslicing.replicas",
         json_is_integer(kube_at(res, "replicas")) &&
             json_integer_value(kube_at(res, "replicas")) == g->p->replicas,
         where, want, obs,
         ph ? ph : N_("replicas is how many slots each GPU becomes: the step gives it."));
    free(obs);
    json_decref(config);
    manifest_free(&m);
}

/* The replicas the cluster's ConfigMap sets, 0 when unreadable. */
static int cluster_replicas(const grader *g)
{
    json_t *config = sharing_config(json_object_get(g->snap, "configmap"));
    int r = (int)json_integer_value(kube_at(first_resource(config), "replicas"));
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
        cond(g, code, quantity_equals(v, want), where, want, v ? v : _("(absent)"),
             N_("With time-slicing each physical GPU is advertised replicas times; the device "
                "plugin would patch both capacity and allocatable."));
    }
}

/* ISOLATION's words, as `gpuop slots` uses them. */
static const char *const ISOLATION_WORDS[] = {"none", "memory-limit", "exclusive", "hardware"};

static const char *isolation_hint(const char *seen)
{
    if (word_equal(seen, "hardware"))
        return N_("Hardware isolation is what MIG partitions give; time-slicing shares one GPU's "
                  "memory and faults among all its slots.");
    if (word_equal(seen, "memory-limit"))
        return N_("A memory limit per client is what MPS sets; time-slicing sets none.");
    if (word_equal(seen, "exclusive"))
        return N_("Exclusive is one pod per GPU, without sharing; here each GPU is shared by "
                  "its replicas.");
    for (size_t i = 0; i < sizeof ISOLATION_WORDS / sizeof *ISOLATION_WORDS; i++)
        if (word_equal(seen, ISOLATION_WORDS[i])) return NULL;
    return N_("ISOLATION is one of none, memory-limit, exclusive or hardware.");
}

static const char *guaranteed_hint(const char *seen)
{
    (void)seen;
    return N_("Time-slicing guarantees a slot no memory at all: every slot of a GPU can use all "
              "of its memory, and so can take it from the others.");
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
        value_equal_fn equal;
        const char *(*hint_for)(const char *);
    } rows[] = {
        {"PHYSICAL_GPUS", physical, "out.slots.physical_gpus", number_equal, NULL},
        {"REPLICAS", replicas ? reps : NULL, "out.slots.replicas", number_equal, NULL},
        {"ADVERTISED", adv, "out.slots.advertised", number_equal, NULL},
        {"VRAM_PER_GPU_GIB", vram, "out.slots.vram_per_gpu", number_equal, NULL},
        {"VRAM_GUARANTEED_PER_SLOT_GIB", "0", "out.slots.vram_guaranteed", number_equal,
         guaranteed_hint},
        {"VRAM_SHARED_PER_GPU_GIB", vram, "out.slots.vram_shared", number_equal, NULL},
        {"ISOLATION", "none", "out.slots.isolation", word_equal, isolation_hint},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        out_key(g, &f, "slots.txt", i, rows[i].key, rows[i].want, rows[i].equal, rows[i].code, h,
                rows[i].hint_for);
    /* The learner's own numbers must agree with each other too. */
    const lab_line *lp = lab_outfile_find(&f, "PHYSICAL_GPUS");
    const lab_line *lr = lab_outfile_find(&f, "REPLICAS");
    const lab_line *la = lab_outfile_find(&f, "ADVERTISED");
    if (lp && lr && la) {
        long p = atol(lp->value), r = atol(lr->value), a = atol(la->value);
        char expected[64], observed[64];
        snprintf(expected, sizeof expected, "ADVERTISED = %ld x %ld = %ld", p, r, p * r);
        snprintf(observed, sizeof observed, "ADVERTISED=%ld", a);
        cond(g, "out.slots.arithmetic", p * r == a, "out/slots.txt", expected, observed,
             N_("Each physical GPU becomes replicas slots: the advertised count is their "
                "product."));
    }
    lab_outfile_free(&f);
}

/* ---- step 8 ------------------------------------------------------------ */

static const json_t *first_container(const json_t *podspec)
{
    return json_array_get(json_object_get(podspec, "containers"), 0);
}

/* The two fields step 8 changes, of a pod template's first container. */
typedef struct ds_pair {
    const char *image;
    char memory[64]; /* "" when there is no memory request */
} ds_pair;

static ds_pair template_pair(const json_t *podspec)
{
    ds_pair p = {0};
    const json_t *c = first_container(podspec);
    p.image = kube_str_at(c, "image");
    char buf[64];
    const char *mem = scalar_text(kube_at(c, "resources.requests.memory"), buf, sizeof buf);
    snprintf(p.memory, sizeof p.memory, "%s", mem ? mem : "");
    return p;
}

static bool image_is(const ds_pair *p, const char *image)
{
    return same(p->image, image);
}

static bool memory_is(const ds_pair *p, const char *memory)
{
    return quantity_equals(p->memory, memory);
}

static void new_memory(const grader *g, char *buf, size_t cap)
{
    snprintf(buf, cap, "%dGi", g->p->ds_request_gib);
}

static bool is_old_pair(const grader *g, const ds_pair *p)
{
    return image_is(p, g->p->ds_old_image) && memory_is(p, g->p->ds_old_memory);
}

static bool is_new_pair(const grader *g, const ds_pair *p)
{
    char mem[16];
    new_memory(g, mem, sizeof mem);
    return image_is(p, g->p->ds_new_image) && memory_is(p, mem);
}

static void pair_text(const ds_pair *p, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s + %s", p->image ? p->image : "-", p->memory[0] ? p->memory : "-");
}

static void grade_step8_file(grader *g)
{
    manifest m;
    const char *h =
        N_("The toolkit DaemonSet, with a rolling update of at most one node at a time.");
    if (!load_manifest(g, &m, "k8s/toolkit-ds.yaml", "DaemonSet", "nvidia-container-toolkit",
                       "toolkit.file", h)) {
        manifest_free(&m);
        return;
    }
    manifest_field(g, &m, "toolkit.namespace", "/metadata/namespace", "gpu-operator", h);
    manifest_field(g, &m, "toolkit.name", "/metadata/name", "nvidia-container-toolkit", h);
    manifest_field(g, &m, "toolkit.max_unavailable",
                   "/spec/updateStrategy/rollingUpdate/maxUnavailable", "1",
                   N_("maxUnavailable: 1 lets the update take one node's pod down at a time."));
    /* Before or after the update: old image with the old request, or both new. */
    ds_pair p = template_pair(kube_at(m.doc, "spec.template.spec"));
    char where[PATH_MAX + 32], new_mem[16], expected[512], observed[512];
    new_memory(g, new_mem, sizeof new_mem);
    gp_msg_snprintf(expected, sizeof expected, _("%s + %s, or %s + %s"), g->p->ds_old_image,
                    g->p->ds_old_memory, g->p->ds_new_image, new_mem);
    pair_text(&p, observed, sizeof observed);
    cond(g, "toolkit.template", is_old_pair(g, &p) || is_new_pair(g, &p),
         where_in(&m, "/spec/template/spec/containers/0", where, sizeof where), expected, observed,
         N_("The file holds the first version (old image, old request) or the updated one (both "
            "new), never half of the update."));
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
    const char *image = kube_str_at(first_container(kube_at(ds, "spec.template.spec")), "image");
    long n = 0;
    size_t i;
    const json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        if (kube_deleting(pod)) continue;
        const char *pi = kube_str_at(first_container(kube_at(pod, "spec")), "image");
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
            if (same(kube_str_at(c, "type"), "PodScheduled") &&
                same(kube_str_at(c, "status"), "False"))
                return kube_str_at(c, "message");
        }
    }
    return NULL;
}

static int by_revision(const void *a, const void *b)
{
    json_int_t ra = json_integer_value(json_object_get(*(json_t *const *)a, "revision"));
    json_int_t rb = json_integer_value(json_object_get(*(json_t *const *)b, "revision"));
    return ra < rb ? -1 : ra > rb;
}

/* The one-update rule, judged from the DaemonSet's history: its
 * ControllerRevisions in revision order (the controller numbers each new
 * template one past the highest, and renumbers a template it returns to).
 * After the last revision with the first version's template, no revision
 * may change only one of the image and the request: then the two changes
 * were separate updates, and the pods of the half-changed template ran
 * (the false pass: every pod on the new image, nothing split). */
static void grade_history(grader *g)
{
    const json_t *revs = json_object_get(g->snap, "revisions");
    size_t n = json_array_size(revs);
    const json_t **sorted = calloc(n + 1, sizeof *sorted);
    if (!sorted) return;
    for (size_t i = 0; i < n; i++)
        sorted[i] = json_array_get(revs, i);
    qsort(sorted, n, sizeof *sorted, by_revision);
    size_t last_old = n;
    for (size_t i = 0; i < n; i++) {
        ds_pair p = template_pair(kube_at(sorted[i], "data.spec.template.spec"));
        if (is_old_pair(g, &p)) last_old = i;
    }
    char observed[1024] = "", hint[512], expected[512];
    const json_t *half = NULL;
    size_t used = 0;
    for (size_t i = last_old < n ? last_old : 0; i < n && used < sizeof observed - 1; i++) {
        ds_pair p = template_pair(kube_at(sorted[i], "data.spec.template.spec"));
        bool image_changed = !image_is(&p, g->p->ds_old_image);
        bool memory_changed = !memory_is(&p, g->p->ds_old_memory);
        if (last_old < n && i > last_old && image_changed != memory_changed && !half)
            half = sorted[i];
        char pair[300];
        pair_text(&p, pair, sizeof pair);
        int w =
            snprintf(observed + used, sizeof observed - used, "%s%lld: %s", used ? "; " : "",
                     (long long)json_integer_value(json_object_get(sorted[i], "revision")), pair);
        if (w > 0) used += (size_t)w;
    }
    if (!n) snprintf(observed, sizeof observed, "%s", _("no revision"));
    gp_msg_snprintf(expected, sizeof expected,
                    _("a revision with %s + %s, then none that changes only one of the two"),
                    g->p->ds_old_image, g->p->ds_old_memory);
    if (last_old == n)
        snprintf(hint, sizeof hint, "%s",
                 _("No revision holds the first version (old image and old request): roll it "
                   "out to every node before the update."));
    else if (half)
        gp_msg_snprintf(hint, sizeof hint,
                        _("Revision %lld changed only one of the image and the request: the two "
                          "changes were separate updates, and pods of that half-changed "
                          "template ran, so no old/new split is left to report. Put the first "
                          "version back, let it roll out, then change both in one update."),
                        (long long)json_integer_value(json_object_get(half, "revision")));
    else
        snprintf(hint, sizeof hint, "%s", _("Change the image and the request in one update."));
    cond(g, "cluster.daemonset.history", last_old < n && !half,
         "controllerrevisions gpu-operator (nvidia-container-toolkit)", expected, observed, hint);
    free(sorted);
}

static void grade_step8_cluster(grader *g)
{
    const json_t *ds = json_object_get(g->snap, "daemonset");
    cluster_exists(g, "cluster.daemonset", "daemonset/gpu-operator/nvidia-container-toolkit", ds,
                   N_("Apply the DaemonSet file."));
    if (!is_object(ds)) return;
    ds_pair p = template_pair(kube_at(ds, "spec.template.spec"));
    char new_mem[16], expected[256], observed[256];
    new_memory(g, new_mem, sizeof new_mem);
    snprintf(expected, sizeof expected, "%s + %s", g->p->ds_new_image, new_mem);
    pair_text(&p, observed, sizeof observed);
    const char *h = N_("Change the image and the memory request in one update.");
    if (image_is(&p, g->p->ds_new_image) && !memory_is(&p, new_mem))
        h = N_("The image is the new one, but the memory request is not: the step changes "
               "both.");
    else if (!image_is(&p, g->p->ds_new_image) && memory_is(&p, new_mem))
        h = N_("The memory request is the new one, but the image is not: the step changes both.");
    cond(g, "cluster.daemonset.updated", is_new_pair(g, &p),
         "daemonset/gpu-operator/nvidia-container-toolkit .spec.template", expected, observed, h);
    grade_history(g);
    long desired = (long)json_integer_value(kube_at(ds, "status.desiredNumberScheduled"));
    long updated = (long)json_integer_value(kube_at(ds, "status.updatedNumberScheduled"));
    gp_msg_snprintf(expected, sizeof expected, _("fewer than %ld of %ld updated"), desired,
                    desired);
    snprintf(observed, sizeof observed, "%ld/%ld", updated, desired);
    cond(g, "cluster.daemonset.stalled", desired > 0 && updated < desired,
         "daemonset .status.updatedNumberScheduled", expected, observed,
         N_("A request no node can satisfy stops a rolling update after the first node."));
}

/* BLOCKER's words, as `gpuop rollout` and `gpuop why-pending` use them. */
static bool blocker_word_known(const char *w)
{
    static const char *const words[] = {
        "untolerated-taint", "node-not-ready", "unschedulable-node", "node-affinity", "image-pull",
        "crash-loop",        "unknown"};
    char lower[64];
    snprintf(lower, sizeof lower, "%s", w);
    for (char *c = lower; *c; c++)
        *c = (char)(*c == '_' || *c == ' ' ? '-' : tolower((unsigned char)*c));
    if (has_prefix(lower, "insufficient-")) return true;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strcmp(lower, words[i]) == 0) return true;
    return false;
}

static const char *blocker_hint(const char *seen)
{
    if (!blocker_word_known(seen))
        return N_("BLOCKER is a word of the scheduler's reasons: insufficient-<resource> (memory, "
                  "cpu, pods, ...), untolerated-taint, node-affinity, node-not-ready, "
                  "unschedulable-node, image-pull or crash-loop.");
    return N_("Read the waiting pod's PodScheduled message: which resource does no node have "
              "enough of?");
}

static const char *old_pods_hint(const char *seen)
{
    (void)seen;
    return N_("Count the DaemonSet's pods whose image is not the template's: the pods the update "
              "has not replaced.");
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
        value_equal_fn equal;
        const char *(*hint_for)(const char *);
    } rows[] = {
        {"DESIRED", desired, "out.rollout.desired", number_equal, NULL},
        {"UPDATED", updated, "out.rollout.updated", number_equal, NULL},
        {"READY", ready, "out.rollout.ready", number_equal, NULL},
        {"OLD_IMAGE_PODS", old, "out.rollout.old_image_pods", number_equal, old_pods_hint},
        {"MAX_UNAVAILABLE", maxu, "out.rollout.max_unavailable", number_equal, NULL},
        {"BLOCKER", blocker, "out.rollout.blocker", word_equal, blocker_hint},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        out_key(g, &f, "rollout.txt", i, rows[i].key, rows[i].want, rows[i].equal, rows[i].code, h,
                rows[i].hint_for);
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
