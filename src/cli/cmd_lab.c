/* gpuop lab: the GPU incident lab (../shared/design/lab.md).
 *
 *   init    the workspace and its evidence
 *   up      a cluster for it: the embedded control plane, or the lab's
 *           nodes on the cluster --kubeconfig/--context name
 *   steps   the task texts
 *   check   the grader: text, json or junit
 *   solve   the reference solution, built on gpuop's field tools
 *   status  where the lab stands
 *   reset   back to the start (the workspace is moved aside, never deleted)
 *   down    the cluster side stopped or removed */
/* realpath() is an X/Open function. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/kube_cli.h"
#include "cli/lab_cli.h"
#include "lab/grade_cluster.h"
#include "lab/grade_files.h"
#include "lab/incident.h"
#include "lab/kubectl.h"
#include "lab/lab.h"
#include "lab/labcluster.h"
#include "lab/solve_cluster.h"
#include "lab/solve_files.h"
#include "lab/steps.h"
#include "lab/workspace.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/json_out.h"
#include "util/msg.h"

#define CLUSTER_STATE ".gpuop-lab-cluster.json"

static void lab_usage(FILE *out)
{
    fputs(
        _("Usage: gpuop lab init [--seed S]\n"
          "       gpuop lab up [--data DIR [--node-agents] | --kubeconfig FILE [--context NAME]]\n"
          "       gpuop lab steps [N]\n"
          "       gpuop lab check [N] [-o text|json|junit]\n"
          "       gpuop lab solve [N]\n"
          "       gpuop lab status | reset | down\n"
          "       gpuop lab incident [--scenario NAME] [--data DIR]\n"
          "       gpuop lab incident steps | check [-o text|json|junit] | solve | down\n"
          "Every verb takes --root DIR, the workspace (default $HOME/gpuop): a\n"
          "directory the lab made, or a new or empty one for init; never /, a\n"
          "home directory itself or a system directory.\n"
          "\n"
          "  init    create the workspace: etc/containerd, bin, k8s, out and the\n"
          "          incident's evidence (evidence/containerd-config-dump.toml).\n"
          "          --seed S draws the lab's numbers; without it they are the\n"
          "          incident's (4 x A100 40 GiB, 5 replicas, 32Gi nodes, 64Gi).\n"
          "  up      start the embedded control plane (data in DIR, default\n"
          "          ~/.local/share/gpuop/cluster) and make kubectl use it; or,\n"
          "          with --kubeconfig/--context, add the lab's three fake nodes\n"
          "          (kwok) to that cluster, touching no other node. With\n"
          "          --node-agents the nodes are simulated (containerd, kubelet,\n"
          "          driver: gpuop node acts on them) and step 6's GPUs come from a\n"
          "          device plugin instead of a status patch.\n"
          "  steps   print the task of step N (1-8), or of every step, with the\n"
          "          format each answer file has.\n"
          "  check   grade step N, or every step: what was expected, what was\n"
          "          found and where, with a hint. The check script of step 4\n"
          "          runs with a time limit, and nothing it starts outlives it.\n"
          "  solve   bring the lab to the end of step N (default 8) from any\n"
          "          state, using gpuop's own field tools for the answers.\n"
          "  status  the workspace, the cluster and which steps pass.\n"
          "  reset   remove what the steps created on the cluster, restore the\n"
          "          nodes, move the workspace aside to ROOT.backup-TIME and\n"
          "          start a fresh one with the same numbers.\n"
          "  down    stop the embedded cluster, or remove the lab's nodes and\n"
          "          objects from the cluster it was added to.\n"
          "  incident  replay the incident by itself on simulated nodes, in a fresh\n"
          "          embedded cluster (data in DIR, default\n"
          "          ~/.local/share/gpuop/incident; an earlier one is moved aside):\n"
          "          healthy first, then broken. NAME is containerd-1.6 (the\n"
          "          default), not-restarted or kernel-update. Find the layer, repair\n"
          "          it, write out/incident.txt; 'incident check' grades the live\n"
          "          cluster, 'incident solve' repairs it, 'incident down' stops it.\n"
          "\n"
          "Exit status: 0 passes (or done), 1 a check fails (check, status),\n"
          "2 cannot tell (no workspace, cluster unreachable or stopped, usage\n"
          "error).\n"),
        out);
    cli_kube_options_help(out);
}

/* ---- arguments ----------------------------------------------------------- */

/* A step number: 0 when it is one, 1 when `s` is not a number, -1 when
 * it is a number outside 1..LAB_STEPS. */
static int parse_step(const char *s, int *step)
{
    if (!*s || strspn(s, "0123456789") != strlen(s)) return 1;
    char *end;
    long n = strtol(s, &end, 10);
    if (n < 1 || n > LAB_STEPS) return -1;
    *step = (int)n;
    return 0;
}

/* The verbs that may make the workspace. */
static bool creates_root(const char *verb)
{
    return strcmp(verb, "init") == 0 || strcmp(verb, "up") == 0 || strcmp(verb, "incident") == 0;
}

static int parse_args(int argc, char **argv, lab_args *a)
{
    memset(a, 0, sizeof *a);
    if (argc < 2) return cli_usage_error("lab", _("a verb is needed"));
    a->verb = argv[1];
    const char *root = NULL;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        int k = cli_kube_option(argc, argv, &i, &a->kube);
        if (k < 0) return cli_kube_option_error("lab", k, arg);
        if (k > 0) {
            a->external |=
                strncmp(arg, "--kubeconfig", 12) == 0 || strncmp(arg, "--context", 9) == 0;
            continue;
        }
        bool takes = strcmp(arg, "--root") == 0 || strcmp(arg, "--seed") == 0 ||
                     strcmp(arg, "--data") == 0 || strcmp(arg, "-o") == 0 ||
                     strcmp(arg, "--scenario") == 0;
        if (takes && !next) return cli_usage_error("lab", _("%s needs a value"), arg);
        if (strcmp(arg, "--root") == 0) {
            root = argv[++i];
        } else if (strcmp(arg, "--seed") == 0) {
            char *end;
            a->seed = strtoull(argv[++i], &end, 10);
            if (*end) return cli_usage_error("lab", _("--seed wants a number, not '%s'"), argv[i]);
            a->has_seed = true;
        } else if (strcmp(arg, "--data") == 0) {
            a->data = argv[++i];
        } else if (strcmp(arg, "--scenario") == 0) {
            a->scenario = argv[++i];
        } else if (strcmp(arg, "--node-agents") == 0) {
            a->node_agents = true;
        } else if (strcmp(a->verb, "incident") == 0 && arg[0] != '-' && !a->sub) {
            a->sub = arg;
        } else if (strcmp(arg, "-o") == 0) {
            const char *o = argv[++i];
            if (strcmp(o, "text") == 0)
                a->out = OUT_TEXT;
            else if (strcmp(o, "json") == 0)
                a->out = OUT_JSON;
            else if (strcmp(o, "junit") == 0)
                a->out = OUT_JUNIT;
            else
                return cli_usage_error("lab", _("unknown output format '%s' (text, json or junit)"),
                                       o);
        } else if (arg[0] != '-' && a->step == 0 && parse_step(arg, &a->step) <= 0) {
            if (a->step == 0)
                return cli_usage_error("lab", _("there is no step %s: the steps are 1-%d"), arg,
                                       LAB_STEPS);
        } else {
            return cli_usage_error("lab", _("unexpected argument '%s'"), arg);
        }
    }
    if (root && !*root) return cli_usage_error("lab", _("--root needs a directory"));
    char *given = root ? strdup(root) : lab_default_root();
    if (!given) {
        cli_error(_("no workspace: HOME is not set; give --root DIR"));
        return EXIT_CANNOT_TELL;
    }
    /* The real path from here on: "ws/", "ws" and a link to it are one
     * workspace, and what is checked is what is written. */
    gp_error err = {0};
    int rc = lab_root_check(given, creates_root(a->verb), &a->root, &err);
    free(given);
    if (rc != 0) {
        cli_report(&err);
        return EXIT_CANNOT_TELL;
    }
    return 0;
}

/* ---- the workspace and its cluster ------------------------------------- */

int cli_lab_load_params(const lab_args *a, lab_params *p)
{
    gp_error err = {0};
    if (lab_params_load(a->root, p, &err) == 0) return 0;
    cli_error(_("%s is not a lab workspace (%s); run 'gpuop lab init --root %s' first"), a->root,
              err.text, a->root);
    return EXIT_CANNOT_TELL;
}

static char *state_path(const char *root)
{
    size_t n = strlen(root) + sizeof CLUSTER_STATE + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", root, CLUSTER_STATE);
    return p;
}

static json_t *load_cluster_state(const char *root)
{
    char *path = state_path(root);
    json_t *state = json_load_file(path, 0, NULL);
    free(path);
    return state;
}

static int save_cluster_state(const char *root, json_t *state)
{
    char *text = json_dumps(state, JSON_INDENT(2));
    gp_error err = {0};
    int rc = text ? lab_ws_write(root, CLUSTER_STATE, text, strlen(text), 0644, &err) : -1;
    if (rc != 0) cli_report(&err);
    free(text);
    return rc;
}

static void forget_cluster_state(const char *root)
{
    gp_error err = {0};
    if (lab_ws_remove(root, CLUSTER_STATE, &err) != 0) cli_report(&err);
}

/* `lab down` keeps the record, marked: status then says stopped, and
 * every verb that needs the cluster says how to start it again. */
static bool cluster_stopped(const json_t *state)
{
    return json_is_true(json_object_get(state, "stopped"));
}

char *cli_lab_embedded_data(const char *root, bool *agents)
{
    json_t *state = load_cluster_state(root);
    const char *mode = json_string_value(json_object_get(state, "mode"));
    const char *data = json_string_value(json_object_get(state, "data"));
    char *out = mode && strcmp(mode, "embedded") == 0 && data && !cluster_stopped(state)
                    ? strdup(data)
                    : NULL;
    *agents = json_is_true(json_object_get(state, "agents"));
    json_decref(state);
    return out;
}

/* The embedded cluster's data directory: --data, else cluster's default. */
static char *embedded_data_dir(const lab_args *a)
{
    if (a->data) return strdup(a->data);
    const char *home = getenv("HOME");
    if (!home) return NULL;
    size_t n = strlen(home) + 64;
    char *d = malloc(n);
    snprintf(d, n, "%s/.local/share/gpuop/cluster", home);
    return d;
}

/* Which cluster this workspace uses: options given now win; else what
 * `lab up` recorded. */
static int lab_connect(const lab_args *a, kc_client **c)
{
    kc_options o = a->kube;
    char kubeconfig[PATH_MAX];
    json_t *state = load_cluster_state(a->root);
    if (!a->external && cluster_stopped(state)) {
        cli_error(_("the lab's cluster for %s is stopped ('gpuop lab down'); 'gpuop lab up' "
                    "starts it again"),
                  a->root);
        json_decref(state);
        return EXIT_CANNOT_TELL;
    }
    if (!a->external && state) {
        const char *mode = json_string_value(json_object_get(state, "mode"));
        const char *data = json_string_value(json_object_get(state, "data"));
        if (mode && strcmp(mode, "embedded") == 0 && !data) {
            cli_error(_("%s/%s names no data directory; run 'gpuop lab up' again"), a->root,
                      CLUSTER_STATE);
            json_decref(state);
            return EXIT_CANNOT_TELL;
        }
        if (mode && strcmp(mode, "embedded") == 0) {
            snprintf(kubeconfig, sizeof kubeconfig, "%s/kubeconfig", data);
            o.kubeconfig = kubeconfig;
            o.context = NULL;
        } else {
            o.kubeconfig = json_string_value(json_object_get(state, "kubeconfig"));
            o.context = json_string_value(json_object_get(state, "context"));
        }
    } else if (!a->external) {
        json_decref(state);
        cli_error(_("no cluster for %s: run 'gpuop lab up' first"), a->root);
        return EXIT_CANNOT_TELL;
    }
    int rc = cli_kube_connect(&o, c);
    json_decref(state);
    return rc;
}

/* Steps 5-8 are done with kubectl: one line when the learner has none, or
 * one too old for them (nothing when it will do). */
void cli_lab_warn_about_kubectl(void)
{
    lab_kubectl k;
    gp_error err = {0};
    lab_kubectl_probe(&k, &err);
    switch (k.state) {
    case LAB_KUBECTL_USABLE:
        return;
    case LAB_KUBECTL_MISSING:
        cli_error(_("steps 5-8 need kubectl 1.24 or newer, and there is none on PATH: see %s "
                    "(Debian 12's kubernetes-client, 1.20, is too old)"),
                  LAB_KUBECTL_INSTALL_URL);
        return;
    case LAB_KUBECTL_TOO_OLD:
        cli_error(_("steps 5-8 need kubectl 1.24 or newer (kubectl patch --subresource), and the "
                    "one on PATH is %s: see %s"),
                  k.version, LAB_KUBECTL_INSTALL_URL);
        return;
    case LAB_KUBECTL_UNKNOWN:
        cli_error(_("steps 5-8 need kubectl 1.24 or newer, and the version of the one on PATH "
                    "cannot be read (%s): see %s"),
                  err.text, LAB_KUBECTL_INSTALL_URL);
        return;
    }
}

/* ---- verbs ----------------------------------------------------------- */

int cli_lab_init(lab_args *a)
{
    lab_params p, existing;
    gp_error err = {0};
    lab_params_for_seed(a->has_seed ? a->seed : 0, &p);
    bool reused = lab_workspace_exists(a->root);
    if (reused && lab_params_load(a->root, &existing, &err) != 0) {
        cli_report(&err);
        return EXIT_CANNOT_TELL;
    }
    if (reused) {
        if (a->has_seed && existing.seed != p.seed) {
            cli_error(_("%s is a lab with seed %llu; 'gpuop lab reset' keeps it, or choose "
                        "another --root for seed %llu"),
                      a->root, (unsigned long long)existing.seed, (unsigned long long)p.seed);
            return EXIT_CANNOT_TELL;
        }
        p = existing;
    }
    if (lab_workspace_init(a->root, &p, &err) != 0 || lab_params_save(a->root, &p, &err) != 0) {
        cli_report(&err);
        return EXIT_CANNOT_TELL;
    }
    if (reused)
        gp_msg_fprintf(stdout,
                       _("Reused the workspace %s (seed %llu): the files already there are kept, "
                         "what was missing is back.\n"),
                       a->root, (unsigned long long)p.seed);
    else
        gp_msg_fprintf(stdout, _("New workspace: %s (seed %llu)\n"), a->root,
                       (unsigned long long)p.seed);
    /* the incident goes on by itself: its next step is its own */
    if (strcmp(a->verb, "incident") != 0)
        gp_msg_fprintf(stdout, "%s", _("Next: 'gpuop lab up', then 'gpuop lab steps'.\n"));
    return EXIT_HOLDS;
}

static int prepare_nodes(lab_args *a, const lab_params *p)
{
    kc_client *c = NULL;
    int rc = lab_connect(a, &c);
    if (rc != EXIT_HOLDS) return rc;
    gp_error err = {0};
    kc_result r = lab_cluster_prepare(c, p, &err);
    kc_client_free(c);
    if (r != KC_OK) return cli_kube_fail(r, &err);
    return EXIT_HOLDS;
}

/* Whether the cluster answers the node agents' route. */
static bool has_agents(const char *data)
{
    char *kubeconfig = gp_format("%s/kubeconfig", data);
    kc_options o = {0};
    o.kubeconfig = kubeconfig;
    kc_client *c = NULL;
    gp_error err = {0};
    bool yes = false;
    if (kubeconfig && kc_client_open(&o, &c, &err) == KC_OK) {
        json_t *list = NULL;
        yes = kc_get(c, "/gpuop/v1/agents", &list, &err) == KC_OK;
        json_decref(list);
    }
    kc_client_free(c);
    free(kubeconfig);
    return yes;
}

/* The embedded cluster in DATA, with node agents when asked (lab-node-0's
 * containerd seeded with the nvidia handler, the nodes with the lab's
 * GPUs). A cluster already running in the other mode is not restarted
 * behind the learner's back: they are told how. */
static int up_embedded(lab_args *a, const lab_params *p, const char *data)
{
    gp_error err = {0};
    if (a->node_agents &&
        (gp_mkdirs(data, 0700, &err) != 0 || lab_seed_nodes(data, p, true, &err) != 0)) {
        cli_report(&err);
        return EXIT_CANNOT_TELL;
    }
    char *argv[] = {"cluster", "up", "--data", (char *)data, "--node-agents", NULL};
    int rc = cli_cmd_cluster(a->node_agents ? 5 : 4, argv);
    if (rc != EXIT_HOLDS) return rc;
    if (has_agents(data) == a->node_agents) return EXIT_HOLDS;
    cli_error(a->node_agents ? _("the cluster in %s already runs without node agents; 'gpuop lab "
                                 "down' first, then 'gpuop lab up --node-agents'")
                             : _("the cluster in %s already runs with node agents; 'gpuop lab "
                                 "down' first, then 'gpuop lab up'"),
              data);
    return EXIT_CANNOT_TELL;
}

static int lab_up(lab_args *a)
{
    lab_params p;
    gp_error ignored;
    int rc;
    if (lab_params_load(a->root, &p, &ignored) != 0) {
        /* up on a fresh root: init first, as a learner would expect. */
        rc = cli_lab_init(a);
        if (rc != 0 || (rc = cli_lab_load_params(a, &p)) != 0) return rc;
    }
    json_t *state = load_cluster_state(a->root);
    /* `lab up` again keeps the mode the lab was brought up in */
    if (json_is_true(json_object_get(state, "agents"))) a->node_agents = true;
    json_decref(state);
    if (a->external && a->node_agents) {
        cli_error("%s", _("--node-agents simulates the nodes of gpuop's embedded cluster; it "
                          "does not go with --kubeconfig/--context"));
        return EXIT_CANNOT_TELL;
    }
    if (a->external) {
        state = json_pack("{s:s}", "mode", "external");
        if (a->kube.kubeconfig) {
            char abs[PATH_MAX];
            json_object_set_new(
                state, "kubeconfig",
                json_string(realpath(a->kube.kubeconfig, abs) ? abs : a->kube.kubeconfig));
        }
        if (a->kube.context) json_object_set_new(state, "context", json_string(a->kube.context));
    } else {
        char *data = embedded_data_dir(a);
        if (!data) {
            cli_error(_("HOME is not set; give --data DIR"));
            return EXIT_CANNOT_TELL;
        }
        rc = up_embedded(a, &p, data);
        if (rc != EXIT_HOLDS) {
            free(data);
            return rc;
        }
        char abs[PATH_MAX];
        state = json_pack("{s:s, s:s, s:b}", "mode", "embedded", "data",
                          realpath(data, abs) ? abs : data, "agents", a->node_agents);
        free(data);
    }
    rc = save_cluster_state(a->root, state);
    json_decref(state);
    if (rc != 0) return EXIT_CANNOT_TELL;
    a->external = false; /* from now on, what was recorded */
    rc = prepare_nodes(a, &p);
    if (rc != EXIT_HOLDS) {
        /* a cluster the lab could not take is not this workspace's */
        forget_cluster_state(a->root);
        return rc;
    }
    gp_msg_fprintf(stdout, "%s",
                   _("The lab's cluster is up: nodes lab-node-0..2, namespace gpu-operator.\n"
                     "Try 'kubectl get nodes', then 'gpuop lab steps'.\n"));
    fflush(stdout);
    cli_lab_warn_about_kubectl();
    return EXIT_HOLDS;
}

static int lab_steps(lab_args *a)
{
    lab_params p;
    int rc = cli_lab_load_params(a, &p);
    if (rc != 0) return rc;
    json_t *state = load_cluster_state(a->root);
    bool agents = json_is_true(json_object_get(state, "agents"));
    json_decref(state);
    for (int s = 1; s <= LAB_STEPS; s++) {
        if (a->step && s != a->step) continue;
        char *text = lab_step_text(s, &p, a->root, agents);
        gp_msg_fprintf(stdout, _("Step %d: %s\n"), s, _(lab_step_title(s)));
        fputs(text ? text : "", stdout);
        if (s < LAB_STEPS && !a->step) putchar('\n');
        free(text);
    }
    if (!a->step || a->step >= 5) {
        fflush(stdout);
        cli_lab_warn_about_kubectl();
    }
    return EXIT_HOLDS;
}

/* ---- check --------------------------------------------------------------- */

char *cli_lab_self_exe(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return NULL;
    buf[n] = '\0';
    return strdup(buf);
}

/* Grades the steps asked for; *cannot_tell is set when a step could not be
 * judged (cluster unreachable). */
static json_t *grade(const lab_args *a, const lab_params *p, bool *cannot_tell)
{
    json_t *steps = json_array();
    char *exe = cli_lab_self_exe();
    json_t *snap = NULL;
    *cannot_tell = false;
    /* step -N: steps 1..N only (status before `lab up`). */
    int last = a->step < 0 ? -a->step : LAB_STEPS;
    int only = a->step > 0 ? a->step : 0;
    bool need_cluster = (only == 0 && last >= 5) || only >= 5;
    if (need_cluster) {
        kc_client *c = NULL;
        if (lab_connect(a, &c) == EXIT_HOLDS) {
            gp_error err = {0};
            kc_result r = lab_cluster_snapshot(c, &snap, &err);
            if (r != KC_OK) cli_kube_fail(r, &err);
        }
        kc_client_free(c);
    }
    for (int s = 1; s <= last; s++) {
        if (only && s != only) continue;
        json_t *result = NULL;
        gp_error err = {0};
        if (s <= 4) {
            result = lab_grade_file_step(s, a->root, p, exe, &err);
        } else if (snap) {
            result = lab_grade_cluster_step(s, a->root, p, snap);
        } else {
            *cannot_tell = true;
            continue;
        }
        if (!result) {
            cli_report(&err);
            *cannot_tell = true;
            continue;
        }
        json_array_append_new(steps, result);
    }
    json_decref(snap);
    free(exe);
    return steps;
}

size_t cli_lab_passed_count(const json_t *list)
{
    size_t n = 0, i;
    const json_t *v;
    json_array_foreach(list, i, v) n += json_is_true(json_object_get(v, "passed"));
    return n;
}

static const char *sget(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

void cli_lab_print_text(const json_t *steps)
{
    bool color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    const char *ok = color ? "\033[32m" : "", *bad = color ? "\033[31m" : "",
               *off = color ? "\033[0m" : "";
    size_t i, j;
    const json_t *step, *c;
    json_array_foreach(steps, i, step)
    {
        const json_t *conds = json_object_get(step, "conditions");
        bool passed = json_is_true(json_object_get(step, "passed"));
        int n = (int)json_integer_value(json_object_get(step, "step"));
        if (n > 0)
            gp_msg_fprintf(stdout, _("Step %d: %s"), n, sget(step, "title"));
        else
            gp_msg_fprintf(stdout, _("Incident: %s"), sget(step, "title"));
        printf("  %s%s%s (%zu/%zu)\n", passed ? ok : bad, passed ? _("PASS") : _("FAIL"), off,
               cli_lab_passed_count(conds), json_array_size(conds));
        json_array_foreach(conds, j, c)
        {
            if (json_is_true(json_object_get(c, "passed"))) continue;
            printf("  %s\u2717%s %s  %s\n", bad, off, sget(c, "code"), sget(c, "where"));
            gp_msg_fprintf(stdout, _("      expected: %s\n"), sget(c, "expected"));
            gp_msg_fprintf(stdout, _("      found:    %s\n"), sget(c, "observed"));
            if (*sget(c, "hint"))
                gp_msg_fprintf(stdout, _("      hint:     %s\n"), sget(c, "hint"));
        }
    }
    gp_msg_fprintf(stdout, _("Result: %zu/%zu steps passed\n"), cli_lab_passed_count(steps),
                   json_array_size(steps));
}

static void xml_text(const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", stdout);
            break;
        case '<':
            fputs("&lt;", stdout);
            break;
        case '>':
            fputs("&gt;", stdout);
            break;
        case '"':
            fputs("&quot;", stdout);
            break;
        default:
            /* XML 1.0 has no place for other control bytes (a learner's
             * file may hold any) */
            putchar((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n' ? '?' : *s);
        }
    }
}

void cli_lab_print_junit(const json_t *steps)
{
    size_t total = 0, failures = 0, i, j;
    const json_t *step, *c;
    json_array_foreach(steps, i, step)
    {
        const json_t *conds = json_object_get(step, "conditions");
        total += json_array_size(conds);
        failures += json_array_size(conds) - cli_lab_passed_count(conds);
    }
    printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    printf("<testsuites name=\"gpuop-lab\" tests=\"%zu\" failures=\"%zu\">\n", total, failures);
    json_array_foreach(steps, i, step)
    {
        const json_t *conds = json_object_get(step, "conditions");
        int n = (int)json_integer_value(json_object_get(step, "step"));
        if (n > 0)
            printf("  <testsuite name=\"step%d: ", n);
        else
            printf("  <testsuite name=\"incident: ");
        xml_text(sget(step, "title"));
        printf("\" tests=\"%zu\" failures=\"%zu\">\n", json_array_size(conds),
               json_array_size(conds) - cli_lab_passed_count(conds));
        json_array_foreach(conds, j, c)
        {
            if (n > 0)
                printf("    <testcase classname=\"step%d\" name=\"", n);
            else
                printf("    <testcase classname=\"incident\" name=\"");
            xml_text(sget(c, "code"));
            if (json_is_true(json_object_get(c, "passed"))) {
                printf("\"/>\n");
                continue;
            }
            printf("\">\n      <failure message=\"");
            xml_text(sget(c, "where"));
            printf("\">");
            char line[4096];
            gp_msg_snprintf(line, sizeof line, _("expected: %s; found: %s; hint: %s"),
                            sget(c, "expected"), sget(c, "observed"), sget(c, "hint"));
            xml_text(line);
            printf("</failure>\n    </testcase>\n");
        }
        printf("  </testsuite>\n");
    }
    printf("</testsuites>\n");
}

int cli_lab_report(const lab_args *a, json_t *doc, json_t *steps, bool cannot_tell)
{
    int rc = EXIT_HOLDS;
    if (a->out == OUT_JSON) {
        char *text = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
        if (text) {
            printf("%s\n", text);
        } else {
            /* a root that is not UTF-8 cannot be a JSON string */
            cli_error(_("cannot write the report as JSON (is --root valid UTF-8?)"));
            rc = EXIT_CANNOT_TELL;
        }
        free(text);
    } else if (a->out == OUT_JUNIT) {
        cli_lab_print_junit(steps);
    } else {
        cli_lab_print_text(steps);
    }
    bool all = cli_lab_passed_count(steps) == json_array_size(steps);
    json_decref(doc);
    json_decref(steps);
    if (rc != EXIT_HOLDS || cannot_tell) return EXIT_CANNOT_TELL;
    return all ? EXIT_HOLDS : EXIT_DOES_NOT_HOLD;
}

static int lab_check(lab_args *a)
{
    lab_params p;
    int rc = cli_lab_load_params(a, &p);
    if (rc != 0) return rc;
    bool cannot_tell;
    json_t *steps = grade(a, &p, &cannot_tell);
    json_t *doc = json_pack("{s:s, s:I, s:I, s:I, s:O}", "root", a->root, "seed",
                            (json_int_t)p.seed, "passed", (json_int_t)cli_lab_passed_count(steps),
                            "total", (json_int_t)json_array_size(steps), "steps", steps);
    return cli_lab_report(a, doc, steps, cannot_tell);
}

/* ---- solve --------------------------------------------------------------- */

void cli_lab_show_progress(const char *what, int seconds, void *ud)
{
    (void)ud;
    /* Quick waits stay silent; a long one says what it waits for. */
    if (seconds < 1) return;
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\r  %s... %ds ", what, seconds);
    else if (seconds % 5 == 1)
        fprintf(stderr, "  %s... %ds\n", what, seconds);
}

static int lab_solve(lab_args *a)
{
    lab_params p;
    int rc = cli_lab_load_params(a, &p);
    if (rc != 0) return rc;
    int last = a->step ? a->step : LAB_STEPS;
    kc_client *c = NULL;
    for (int s = 1; s <= last; s++) {
        gp_msg_fprintf(stdout, _("Step %d: %s\n"), s, _(lab_step_title(s)));
        fflush(stdout);
        gp_error err = {0};
        int r;
        if (s <= 4) {
            r = lab_solve_file_step(s, a->root, &p, &err);
        } else {
            if (!c && (rc = lab_connect(a, &c)) != EXIT_HOLDS) return rc;
            r = lab_solve_cluster_step(s, a->root, &p, c, cli_lab_show_progress, NULL, &err);
            if (isatty(STDERR_FILENO)) fputs("\r\033[K", stderr);
        }
        if (r != 0) {
            cli_report(&err);
            kc_client_free(c);
            return EXIT_CANNOT_TELL;
        }
    }
    kc_client_free(c);
    gp_msg_fprintf(stdout, _("Solved through step %d. 'gpuop lab check' grades it.\n"), last);
    return EXIT_HOLDS;
}

/* ---- status, reset, down ----------------------------------------------- */

/* The cluster line of `lab status`. */
static void print_cluster(const json_t *state)
{
    const char *mode = json_string_value(json_object_get(state, "mode"));
    bool stopped = cluster_stopped(state);
    if (!mode)
        gp_msg_fprintf(stdout, "%s", _("Cluster:   none yet ('gpuop lab up')\n"));
    else if (strcmp(mode, "embedded") == 0 && stopped)
        gp_msg_fprintf(stdout,
                       _("Cluster:   stopped (embedded, data in %s); 'gpuop lab up' starts it "
                         "again\n"),
                       sget(state, "data"));
    else if (strcmp(mode, "embedded") == 0)
        gp_msg_fprintf(stdout, _("Cluster:   embedded, data in %s\n"), sget(state, "data"));
    else if (stopped)
        gp_msg_fprintf(stdout,
                       _("Cluster:   stopped: the lab's nodes are removed from %s, context %s; "
                         "'gpuop lab up' with it adds them again\n"),
                       *sget(state, "kubeconfig") ? sget(state, "kubeconfig")
                                                  : _("default kubeconfig"),
                       *sget(state, "context") ? sget(state, "context") : _("current"));
    else
        gp_msg_fprintf(stdout, _("Cluster:   %s, context %s\n"),
                       *sget(state, "kubeconfig") ? sget(state, "kubeconfig")
                                                  : _("default kubeconfig"),
                       *sget(state, "context") ? sget(state, "context") : _("current"));
}

static int lab_status(lab_args *a)
{
    lab_params p;
    int rc = cli_lab_load_params(a, &p);
    if (rc != 0) return rc;
    gp_msg_fprintf(stdout, _("Workspace: %s (seed %llu)\n"), a->root, (unsigned long long)p.seed);
    gp_msg_fprintf(
        stdout,
        _("Numbers:   %d x %s (%d GiB), %d replicas; nodes %d CPU, %dGi; new request %dGi\n"),
        p.gpus_per_node, p.gpu_model, p.gpu_memory_gib, p.replicas, p.node_cpu, p.node_memory_gib,
        p.ds_request_gib);
    json_t *state = load_cluster_state(a->root);
    print_cluster(state);
    lab_incident inc;
    gp_error ignored;
    if (lab_incident_load(a->root, &inc, &ignored) == 0)
        gp_msg_fprintf(stdout, _("Incident:  %s, data in %s ('gpuop lab incident check')\n"),
                       lab_scenario_name(inc.scenario), inc.data);
    /* Without a cluster, the file steps are what can be judged. */
    bool no_cluster = !json_object_get(state, "mode") || cluster_stopped(state);
    if (no_cluster && !a->external && a->step == 0) a->step = -4;
    json_decref(state);
    bool cannot_tell;
    json_t *steps = grade(a, &p, &cannot_tell);
    size_t i;
    const json_t *step;
    json_array_foreach(steps, i, step)
    {
        bool passed = json_is_true(json_object_get(step, "passed"));
        printf("  %d %-4s %s\n", (int)json_integer_value(json_object_get(step, "step")),
               passed ? _("PASS") : _("FAIL"), sget(step, "title"));
    }
    gp_msg_fprintf(stdout, _("Result: %zu/%zu steps passed\n"), cli_lab_passed_count(steps),
                   json_array_size(steps));
    bool all = cli_lab_passed_count(steps) == json_array_size(steps);
    json_decref(steps);
    if (cannot_tell) return EXIT_CANNOT_TELL;
    return all ? EXIT_HOLDS : EXIT_DOES_NOT_HOLD;
}

static int lab_reset(lab_args *a)
{
    lab_params p;
    int rc = cli_lab_load_params(a, &p);
    if (rc != 0) return rc;
    json_t *state = load_cluster_state(a->root);
    /* A stopped cluster has nothing of the lab's running: only the
     * workspace is reset, and the record stays for 'lab up'. */
    if ((state && !cluster_stopped(state)) || a->external) {
        kc_client *c = NULL;
        if ((rc = lab_connect(a, &c)) != EXIT_HOLDS) {
            json_decref(state);
            return rc;
        }
        gp_error err = {0};
        kc_result r = lab_cluster_reset(c, &p, &err);
        if (r == KC_OK) r = lab_cluster_prepare(c, &p, &err);
        kc_client_free(c);
        if (r != KC_OK) {
            json_decref(state);
            return cli_kube_fail(r, &err);
        }
    }
    char stamp[32], backup[PATH_MAX];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(backup, sizeof backup, "%s.backup-%s", a->root, stamp);
    if (rename(a->root, backup) != 0) {
        cli_error(_("cannot move %s aside to %s: %s"), a->root, backup, strerror(errno));
        json_decref(state);
        return EXIT_CANNOT_TELL;
    }
    gp_error err = {0};
    if (lab_workspace_init(a->root, &p, &err) != 0 || lab_params_save(a->root, &p, &err) != 0 ||
        (state && save_cluster_state(a->root, state) != 0)) {
        if (err.text[0]) cli_report(&err);
        json_decref(state);
        return EXIT_CANNOT_TELL;
    }
    json_decref(state);
    gp_msg_fprintf(stdout, _("Reset: the old workspace is in %s; a fresh one is in %s.\n"), backup,
                   a->root);
    return EXIT_HOLDS;
}

static int lab_down(lab_args *a)
{
    json_t *state = load_cluster_state(a->root);
    const char *mode = json_string_value(json_object_get(state, "mode"));
    int rc = EXIT_HOLDS;
    if (!mode) {
        gp_msg_fprintf(stdout, _("No cluster recorded for %s; nothing to stop.\n"), a->root);
    } else if (cluster_stopped(state)) {
        gp_msg_fprintf(stdout, _("The lab's cluster for %s is already stopped.\n"), a->root);
        mode = NULL;
    } else if (strcmp(mode, "embedded") == 0) {
        char *data = strdup(sget(state, "data"));
        char *argv[] = {"cluster", "down", "--data", data, NULL};
        rc = cli_cmd_cluster(4, argv);
        free(data);
    } else {
        lab_params p;
        kc_client *c = NULL;
        if ((rc = cli_lab_load_params(a, &p)) == 0 && (rc = lab_connect(a, &c)) == EXIT_HOLDS) {
            gp_error err = {0};
            kc_result r = lab_cluster_remove(c, &p, &err);
            if (r != KC_OK)
                rc = cli_kube_fail(r, &err);
            else
                gp_msg_fprintf(stdout, "%s",
                               _("The lab's nodes and objects are removed from the cluster.\n"));
        }
        kc_client_free(c);
    }
    if (rc == EXIT_HOLDS && mode) {
        json_object_set_new(state, "stopped", json_true());
        if (save_cluster_state(a->root, state) != 0) rc = EXIT_CANNOT_TELL;
    }
    json_decref(state);
    return rc;
}

int cli_cmd_lab(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i])) {
            lab_usage(stdout);
            return EXIT_HOLDS;
        }
    lab_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != 0) {
        free(a.root);
        return rc;
    }
    static const struct {
        const char *verb;
        int (*run)(lab_args *);
    } verbs[] = {
        {"init", cli_lab_init}, {"up", lab_up},       {"steps", lab_steps},
        {"check", lab_check},   {"solve", lab_solve}, {"status", lab_status},
        {"reset", lab_reset},   {"down", lab_down},   {"incident", cli_lab_incident},
    };
    rc = -1;
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (strcmp(a.verb, verbs[i].verb) == 0) rc = verbs[i].run(&a);
    if (rc < 0) rc = cli_usage_error("lab", _("unknown verb '%s'"), a.verb);
    free(a.root);
    return rc;
}
