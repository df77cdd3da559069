/* gpuop lab incident: the incident replayed by itself on simulated nodes
 * (src/lab/incident.h).
 *
 *   (none)  a fresh embedded cluster with node agents in DATA (default
 *           ~/.local/share/gpuop/incident; a previous one is moved aside),
 *           healthy first, then broken as the scenario says
 *   steps   the task again
 *   check   the grader, on the live cluster and R/out/incident.txt
 *   solve   the reference repair
 *   down    the incident's cluster stopped (its data kept) */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/lab_cli.h"
#include "lab/incident.h"
#include "lab/labcluster.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/msg.h"

static char *default_data(void)
{
    const char *home = getenv("HOME");
    if (!home) return NULL;
    return gp_format("%s/.local/share/gpuop/incident", home);
}

static int run_cluster(const char *verb, const char *data, bool agents)
{
    char *argv[] = {"cluster", (char *)verb, "--data", (char *)data, "--node-agents", NULL};
    return cli_cmd_cluster(agents ? 5 : 4, argv);
}

static int connect_to(const char *data, kc_client **c)
{
    char *kubeconfig = gp_format("%s/kubeconfig", data);
    if (!kubeconfig) return EXIT_CANNOT_TELL;
    kc_options o = {0};
    o.kubeconfig = kubeconfig;
    int rc = cli_kube_connect(&o, c);
    free(kubeconfig);
    return rc;
}

/* The record of the incident in R, or a message saying how to start one. */
static int load_incident(const lab_args *a, lab_incident *inc)
{
    gp_error err = {0};
    int rc = lab_incident_load(a->root, inc, &err);
    if (rc < 0) {
        cli_report(&err);
        return EXIT_CANNOT_TELL;
    }
    if (rc > 0) {
        cli_error(_("no incident in %s yet: 'gpuop lab incident --root %s' replays one"), a->root,
                  a->root);
        return EXIT_CANNOT_TELL;
    }
    return EXIT_HOLDS;
}

static void say_line(const char *line, void *ud)
{
    (void)ud;
    if (isatty(STDERR_FILENO)) fputs("\r\033[K", stderr);
    puts(line);
    fflush(stdout);
}

static void print_task(const lab_incident *inc, const lab_params *p, const char *root)
{
    char *text = lab_incident_text(inc->scenario, p, root, inc->data);
    gp_msg_fprintf(stdout, _("Incident %s: %s\n"), lab_scenario_name(inc->scenario),
                   _(lab_scenario_title(inc->scenario)));
    fputs(text ? text : "", stdout);
    free(text);
}

/* PATH renamed to PATH.SUFFIX-<UTC time>; its new name into backup. 0
 * when it was not there (backup ""), -1 when it cannot be moved. */
static int move_aside(const char *path, const char *suffix, char *backup, size_t cap)
{
    struct stat st;
    backup[0] = '\0';
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    if (snprintf(backup, cap, "%s.%s-%s", path, suffix, stamp) >= (int)cap ||
        rename(path, backup) != 0) {
        cli_error(_("cannot move %s aside to %s: %s"), path, backup, strerror(errno));
        return -1;
    }
    return 0;
}

/* A data directory that held an earlier incident (`data`; NULL when
 * there is none) goes aside, whole (the nodes' files the learner edited
 * are in it), and so does the answer to it. */
/* What DIR is to the replay: absent or empty (used as it is), a gpuop
 * cluster's data directory (an earlier incident: moved aside), or neither
 * (refused: --data names someone else's directory). */
typedef enum data_kind { DATA_NEW, DATA_CLUSTER, DATA_OTHER } data_kind;

static data_kind data_kind_of(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? DATA_NEW : DATA_OTHER;
    bool empty = true, cluster = false;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        empty = false;
        /* what `gpuop cluster up` leaves in every data directory */
        cluster |= strcmp(e->d_name, "store.db") == 0 || strcmp(e->d_name, "apiserver.log") == 0;
    }
    closedir(d);
    return empty ? DATA_NEW : cluster ? DATA_CLUSTER : DATA_OTHER;
}

static int start_afresh(const char *root, const char *data)
{
    char backup[PATH_MAX] = "";
    if (data && move_aside(data, "backup", backup, sizeof backup) != 0) return -1;
    if (backup[0])
        gp_msg_fprintf(stdout, _("The previous incident's cluster data is kept in %s.\n"), backup);
    char *answer = gp_format("%s/%s", root, LAB_INCIDENT_FILE);
    int rc = answer ? move_aside(answer, "gpuop-backup", backup, sizeof backup) : -1;
    free(answer);
    if (rc == 0 && backup[0])
        gp_msg_fprintf(stdout, _("The previous answer is kept in %s.\n"), backup);
    return rc;
}

static int start_cluster(const lab_params *p, const char *data)
{
    gp_error err = {0};
    if (gp_mkdirs(data, 0700, &err) != 0 || lab_seed_nodes(data, p, false, &err) != 0) {
        cli_report(&err);
        return EXIT_CANNOT_TELL;
    }
    int rc = run_cluster("up", data, true);
    if (rc != EXIT_HOLDS) return rc;
    kc_client *c = NULL;
    if ((rc = connect_to(data, &c)) != EXIT_HOLDS) return rc;
    kc_result r = lab_cluster_prepare(c, p, &err);
    kc_client_free(c);
    return r == KC_OK ? EXIT_HOLDS : cli_kube_fail(r, &err);
}

static int incident_replay(lab_args *a)
{
    lab_incident inc = {.scenario = LAB_SCENARIO_DEFAULT};
    if (a->scenario && lab_scenario_parse(a->scenario, &inc.scenario) != 0)
        return cli_usage_error("lab",
                               _("there is no scenario '%s': containerd-1.6, "
                                 "not-restarted or kernel-update"),
                               a->scenario);
    if (a->external) {
        cli_error("%s", _("the incident runs on gpuop's embedded cluster, whose nodes are "
                          "simulated; it cannot run on the cluster --kubeconfig/--context "
                          "names"));
        return EXIT_CANNOT_TELL;
    }
    lab_params p;
    gp_error ignored;
    int rc;
    if (lab_params_load(a->root, &p, &ignored) != 0 &&
        ((rc = cli_lab_init(a)) != 0 || (rc = cli_lab_load_params(a, &p)) != 0))
        return rc;
    char *data = a->data ? strdup(a->data) : default_data();
    if (!data) {
        cli_error(_("HOME is not set; give --data DIR"));
        return EXIT_CANNOT_TELL;
    }
    /* from the start: a cluster that ran an incident before is stopped and
     * its data moved aside; a directory that is none is not touched */
    data_kind kind = data_kind_of(data);
    if (kind == DATA_OTHER) {
        cli_error(_("%s is not a gpuop cluster's data directory, and not empty: the incident "
                    "moves an earlier cluster's data aside and would take it; give --data a new "
                    "or empty directory"),
                  data);
        rc = EXIT_CANNOT_TELL;
        goto out;
    }
    if (kind == DATA_CLUSTER && (rc = run_cluster("down", data, false)) != EXIT_HOLDS) goto out;
    rc = EXIT_CANNOT_TELL;
    if (start_afresh(a->root, kind == DATA_CLUSTER ? data : NULL) != 0) goto out;
    if ((rc = start_cluster(&p, data)) != EXIT_HOLDS) goto out;
    char abs[PATH_MAX];
    snprintf(inc.data, sizeof inc.data, "%s", realpath(data, abs) ? abs : data);
    gp_error err = {0};
    rc = EXIT_CANNOT_TELL;
    if (lab_incident_save(a->root, &inc, &err) != 0) {
        cli_report(&err);
        goto out;
    }
    kc_client *c = NULL;
    if ((rc = connect_to(inc.data, &c)) != EXIT_HOLDS) goto out;
    int r = lab_incident_replay(c, inc.scenario, &p, say_line, cli_lab_show_progress, NULL, &err);
    kc_client_free(c);
    if (isatty(STDERR_FILENO)) fputs("\r\033[K", stderr);
    if (r != 0) {
        cli_report(&err);
        rc = EXIT_CANNOT_TELL;
        goto out;
    }
    putchar('\n');
    print_task(&inc, &p, a->root);
    fflush(stdout);
    cli_lab_warn_about_kubectl();
    rc = EXIT_HOLDS;
out:
    free(data);
    return rc;
}

/* R's params and its incident record, or an exit code. */
static int load_both(const lab_args *a, lab_params *p, lab_incident *inc)
{
    int rc = cli_lab_load_params(a, p);
    return rc != 0 ? rc : load_incident(a, inc);
}

/* load_both, then a client of the incident's cluster (*c, the caller's). */
static int open_incident(const lab_args *a, lab_params *p, lab_incident *inc, kc_client **c)
{
    int rc = load_both(a, p, inc);
    return rc != 0 ? rc : connect_to(inc->data, c);
}

static int incident_steps(lab_args *a)
{
    lab_params p;
    lab_incident inc;
    int rc;
    if ((rc = load_both(a, &p, &inc)) != 0) return rc;
    print_task(&inc, &p, a->root);
    return EXIT_HOLDS;
}

static int incident_check(lab_args *a)
{
    lab_params p;
    lab_incident inc;
    kc_client *c = NULL;
    int rc = open_incident(a, &p, &inc, &c);
    if (rc != EXIT_HOLDS) return rc;
    json_t *snap = NULL;
    gp_error err = {0};
    kc_result r = lab_incident_snapshot(c, &snap, &err);
    kc_client_free(c);
    if (r != KC_OK) return cli_kube_fail(r, &err);
    json_t *steps = json_array();
    json_array_append_new(steps, lab_grade_incident(inc.scenario, a->root, &p, snap));
    json_decref(snap);
    json_t *doc = json_pack("{s:s, s:s, s:O}", "root", a->root, "scenario",
                            lab_scenario_name(inc.scenario), "steps", steps);
    return cli_lab_report(a, doc, steps, false);
}

static int incident_solve(lab_args *a)
{
    lab_params p;
    lab_incident inc;
    kc_client *c = NULL;
    int rc = open_incident(a, &p, &inc, &c);
    if (rc != EXIT_HOLDS) return rc;
    gp_error err = {0};
    int r = lab_incident_solve(c, inc.scenario, a->root, inc.data, &p, cli_lab_show_progress, NULL,
                               &err);
    kc_client_free(c);
    if (isatty(STDERR_FILENO)) fputs("\r\033[K", stderr);
    if (r != 0) {
        cli_report(&err);
        return EXIT_CANNOT_TELL;
    }
    gp_msg_fprintf(stdout, "%s",
                   _("Repaired, and the answer written. 'gpuop lab incident check' grades it.\n"));
    return EXIT_HOLDS;
}

static int incident_down(lab_args *a)
{
    lab_incident inc;
    int rc = load_incident(a, &inc);
    if (rc != 0) return rc;
    if ((rc = run_cluster("down", inc.data, false)) != EXIT_HOLDS) return rc;
    /* Both clusters are kubectl's context "gpuop": the incident's took it
     * over, so the eight steps' cluster, still running, gets it back. */
    bool agents;
    char *lab_data = cli_lab_embedded_data(a->root, &agents);
    if (lab_data) rc = run_cluster("up", lab_data, agents);
    free(lab_data);
    return rc;
}

int cli_lab_incident(lab_args *a)
{
    if (a->step)
        return cli_usage_error("lab", "%s", _("the incident is one task: it takes no step number"));
    if (!a->sub) return incident_replay(a);
    if (a->scenario)
        return cli_usage_error("lab", _("--scenario goes with 'gpuop lab incident' alone"));
    if (strcmp(a->sub, "steps") == 0) return incident_steps(a);
    if (strcmp(a->sub, "check") == 0) return incident_check(a);
    if (strcmp(a->sub, "solve") == 0) return incident_solve(a);
    if (strcmp(a->sub, "down") == 0) return incident_down(a);
    return cli_usage_error("lab", _("unknown incident verb '%s' (steps, check, solve or down)"),
                           a->sub);
}
