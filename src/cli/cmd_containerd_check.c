/* gpuop containerd check [HANDLER] [--source dump|daemon] [--address SOCK] [--prometheus]
 *
 * Is a runtime handler loaded? Asked of containerd itself, never of its
 * config files: `containerd config dump` is the installed binary's reading of
 * them (what a restart loads), and the running daemon says what is loaded now
 * (`ctr plugins ls` for the CRI plugin, `crictl info` for the handlers). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "containerd/observed.h"
#include "util/spawn.h"

#define TOOL_TIMEOUT_MS (20 * 1000)

typedef enum source { SOURCE_DUMP, SOURCE_DAEMON } source;

typedef struct check_opts {
    const char *handler;
    source source;
    const char *address;
    bool prometheus;
} check_opts;

/* What was found; -1 is "unknown" in each field. */
typedef struct verdict {
    int exit;
    int loaded;
    int cri_valid;
    int restart_pending;
} verdict;

static const char *source_name(source s)
{
    return s == SOURCE_DUMP ? "dump" : "daemon";
}

static void check_usage(FILE *out)
{
    fputs(_("Usage: gpuop containerd check [HANDLER] [--source dump|daemon] [--address SOCK]\n"
            "                              [--prometheus]\n"
            "\n"
            "Is runtime HANDLER (default: nvidia) loaded? Asks containerd, never its files.\n"
            "\n"
            "  --source dump     (default) run `containerd config dump` from PATH: what the\n"
            "                    installed containerd loads from its config and imports,\n"
            "                    i.e. what a restart loads; also checks the CRI plugin's\n"
            "                    own validation of default_runtime_name\n"
            "  --source daemon   ask the running daemon with `ctr plugins ls` (CRI plugin\n"
            "                    loaded or refused) and `crictl info` (handlers), and say\n"
            "                    whether a restart is pending (config newer than the daemon)\n"
            "  --address SOCK    the daemon's socket (default /run/containerd/containerd.sock)\n"
            "  --prometheus      print node_exporter textfile metrics instead\n"
            "\n"
            "Exit status: 0 loaded, 1 not loaded, 2 cannot tell (containerd, ctr or\n"
            "crictl missing from PATH, daemon unreachable, output unreadable).\n"),
          out);
}

/* Returns EXIT_HOLDS when the options are usable; -1 for --help. */
static int parse_args(int argc, char **argv, check_opts *o)
{
    *o = (check_opts){.handler = NULL, .source = SOURCE_DUMP, .address = NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *value = NULL;
        if (cli_is_help(a)) return -1;
        if (strcmp(a, "--prometheus") == 0) {
            o->prometheus = true;
            continue;
        }
        if (strcmp(a, "--source") == 0 || strcmp(a, "--address") == 0) {
            if (i + 1 >= argc)
                return cli_usage_error("containerd check", _("an option needs a value"));
            value = argv[++i];
        } else if (strncmp(a, "--source=", 9) == 0 || strncmp(a, "--address=", 10) == 0) {
            value = strchr(a, '=') + 1;
        } else if (a[0] == '-') {
            return cli_usage_error("containerd check", _("unknown option"));
        } else if (o->handler) {
            return cli_usage_error("containerd check", _("containerd check takes one handler"));
        } else {
            o->handler = a;
            continue;
        }
        if (strncmp(a, "--address", 9) == 0) {
            o->address = value;
        } else if (strcmp(value, "dump") == 0) {
            o->source = SOURCE_DUMP;
        } else if (strcmp(value, "daemon") == 0) {
            o->source = SOURCE_DAEMON;
        } else {
            return cli_usage_error("containerd check", _("--source takes dump or daemon"));
        }
    }
    if (!o->handler) o->handler = "nvidia";
    if (!cd_runtime_name_valid(o->handler)) {
        cli_error(_("'%s' is not a runtime handler name (letters, digits, '.', '_', '-')"),
                  o->handler);
        return EXIT_CANNOT_TELL;
    }
    if (o->address && o->source != SOURCE_DAEMON)
        return cli_usage_error("containerd check", _("--address goes with --source daemon"));
    if (!o->address) o->address = CD_DEFAULT_ADDRESS;
    return EXIT_HOLDS;
}

/* ---- running the tools ---- */

typedef struct tool_output {
    char *out, *err;
    size_t out_len, err_len;
} tool_output;

static void tool_output_free(tool_output *t)
{
    free(t->out);
    free(t->err);
    t->out = t->err = NULL;
}

/* Ends text at its last non-space character. */
static char *trim_end(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

/* Runs a tool found through PATH. EXIT_HOLDS when it ran and exited 0;
 * otherwise says why (named by `what`, e.g. "containerd config dump") and
 * returns EXIT_CANNOT_TELL. */
static int run_tool(char **argv, const char *what, tool_output *t)
{
    gp_error err = {0};
    int status = 0;
    *t = (tool_output){0};
    gp_spawn_result r = gp_spawn_capture(argv, TOOL_TIMEOUT_MS, &t->out, &t->out_len, &t->err,
                                         &t->err_len, &status, &err);
    if (r != GP_SPAWN_OK) {
        cli_error("%s", err.text);
        return EXIT_CANNOT_TELL;
    }
    if (status == 0) return EXIT_HOLDS;
    cli_error(_("`%s` failed (exit %d): %s"), what, status, trim_end(t->err));
    tool_output_free(t);
    return EXIT_CANNOT_TELL;
}

/* ---- output ---- */

/* "nvidia, runc" or "none". */
static void join_names(const cd_names *names, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < names->n && n < cap; i++) {
        int w = snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", names->items[i]);
        if (w < 0) break;
        n += (size_t)w;
    }
    if (!names->n) snprintf(buf, cap, "%s", _("none"));
}

static void metric(const char *name, const char *help, const char *labels, int value)
{
    if (value < 0) return;
    printf("# HELP %s %s\n# TYPE %s gauge\n%s{%s} %d\n", name, help, name, name, labels, value);
}

/* node_exporter textfile lines. A gauge whose value is unknown is left out
 * (absent means unknown); check_success says whether the check could tell. */
static void print_prometheus(const check_opts *o, const verdict *v)
{
    char both[300], src[64];
    snprintf(both, sizeof both, "handler=\"%s\",source=\"%s\"", o->handler, source_name(o->source));
    snprintf(src, sizeof src, "source=\"%s\"", source_name(o->source));
    metric("gpuop_containerd_runtime_handler_loaded",
           "Whether containerd loads the runtime handler (1) or not (0), as the source says.", both,
           v->loaded);
    metric("gpuop_containerd_cri_config_valid",
           "Whether the CRI plugin accepts its runtime config (1) or refuses it (0).", src,
           v->cri_valid);
    metric("gpuop_containerd_restart_pending",
           "Whether a containerd config file is newer than the running daemon (1) or not (0).", src,
           v->restart_pending);
    metric("gpuop_containerd_check_success",
           "Whether gpuop could tell if the handler is loaded (1) or not (0).", both,
           v->exit != EXIT_CANNOT_TELL);
}

static void print_verdict_line(const check_opts *o, int loaded, const char *why)
{
    if (loaded > 0)
        printf(_("%s: loaded (%s)\n"), o->handler, why);
    else if (loaded == 0)
        printf(_("%s: NOT loaded (%s)\n"), o->handler, why);
    else
        printf(_("%s: cannot tell (%s)\n"), o->handler, why);
}

static int finish(const check_opts *o, const verdict *v)
{
    if (o->prometheus) print_prometheus(o, v);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(_("cannot write the output"));
        return EXIT_CANNOT_TELL;
    }
    return v->exit;
}

/* ---- --source dump ---- */

static void judge_dump(const cd_dump *d, const char *handler, verdict *v)
{
    v->cri_valid = d->cri == CD_CRI_VALID ? 1 : d->cri == CD_CRI_INVALID ? 0 : -1;
    if (d->cri == CD_CRI_ABSENT) {
        v->exit = EXIT_CANNOT_TELL;
        return;
    }
    v->loaded = cd_dump_handler_loaded(d, handler);
    v->exit = v->loaded ? EXIT_HOLDS : EXIT_DOES_NOT_HOLD;
}

static void print_dump(const check_opts *o, const cd_dump *d, const verdict *v)
{
    char names[1024], why[1500];
    join_names(&d->handlers, names, sizeof names);
    const char *def = d->default_runtime ? d->default_runtime : _("none");
    if (d->cri == CD_CRI_DISABLED)
        snprintf(why, sizeof why, _("containerd config dump: the CRI plugin %s is disabled"),
                 d->cri_plugin);
    else if (d->cri == CD_CRI_ABSENT)
        snprintf(why, sizeof why, _("containerd config dump has no %s runtimes table"),
                 d->cri_plugin);
    else if (d->cri == CD_CRI_INVALID)
        snprintf(why, sizeof why,
                 _("containerd config dump: runtimes %s; default %s; the CRI plugin would "
                   "refuse this config"),
                 names, def);
    else
        snprintf(why, sizeof why, _("containerd config dump: runtimes %s; default %s"), names, def);
    print_verdict_line(o, v->loaded, why);
    if (d->cri == CD_CRI_INVALID)
        printf(_("CRI plugin would fail to load: invalid plugin config: %s\n"), d->cri_error);
}

static int check_dump(const check_opts *o)
{
    verdict v = {EXIT_CANNOT_TELL, -1, -1, -1};
    char *argv[] = {"containerd", "config", "dump", NULL};
    tool_output t;
    if (run_tool(argv, "containerd config dump", &t) != EXIT_HOLDS) return finish(o, &v);
    cd_dump d;
    gp_error err = {0};
    int rc = cd_dump_parse(t.out, t.out_len, "<containerd config dump>", &d, &err);
    tool_output_free(&t);
    if (rc != 0) {
        cli_error(_("cannot read the output of `containerd config dump`: %s"), err.text);
        return finish(o, &v);
    }
    judge_dump(&d, o->handler, &v);
    if (!o->prometheus) print_dump(o, &d, &v);
    cd_dump_free(&d);
    return finish(o, &v);
}

/* ---- --source daemon ---- */

/* Runs `ctr --address SOCK plugins ls ARGS...` and parses its output. */
static int ctr_plugins(const char *address, const char *filter, cd_plugins *out)
{
    char *argv[] = {
        "ctr", "--address", (char *)address, "--connect-timeout", "5s", "plugins", "ls", NULL,
        NULL,  NULL};
    if (filter) {
        argv[7] = "-d";
        argv[8] = (char *)filter;
    }
    tool_output t;
    if (run_tool(argv, filter ? "ctr plugins ls -d" : "ctr plugins ls", &t) != EXIT_HOLDS)
        return EXIT_CANNOT_TELL;
    int rc = filter ? cd_ctr_parse_details(t.out, out) : cd_ctr_parse_table(t.out, out);
    tool_output_free(&t);
    if (rc != 0) {
        cli_error(_("out of memory"));
        return EXIT_CANNOT_TELL;
    }
    return EXIT_HOLDS;
}

static int cri_status(const char *address, cd_cri_daemon *cri)
{
    cd_plugins table = {0}, details = {0};
    int rc = ctr_plugins(address, NULL, &table);
    if (rc == EXIT_HOLDS) rc = ctr_plugins(address, "id==cri", &details);
    if (rc == EXIT_HOLDS) rc = ctr_plugins(address, "id==runtime", &details);
    if (rc == EXIT_HOLDS) cd_cri_daemon_status(&table, &details, cri);
    cd_plugins_free(&table);
    cd_plugins_free(&details);
    return rc;
}

/* The handlers the running CRI plugin serves, from `crictl info` when
 * crictl is on PATH. Returns 0, or -1 with the reason in `why`. */
static int crictl_handlers(const char *address, cd_crictl_info *info, char *why, size_t cap)
{
    char endpoint[4200];
    const char *path = strncmp(address, "unix://", 7) == 0 ? address + 7 : address;
    snprintf(endpoint, sizeof endpoint, "unix://%s", path);
    char *argv[] = {"crictl", "--runtime-endpoint", endpoint, "--timeout", "10s", "info", NULL};
    gp_error err = {0};
    char *out, *errtext;
    size_t out_len, err_len;
    int status;
    gp_spawn_result r =
        gp_spawn_capture(argv, TOOL_TIMEOUT_MS, &out, &out_len, &errtext, &err_len, &status, &err);
    if (r == GP_SPAWN_NOT_FOUND) {
        snprintf(why, cap, "%s", _("crictl not on PATH"));
        return -1;
    }
    if (r != GP_SPAWN_OK) {
        snprintf(why, cap, "%s", err.text);
        return -1;
    }
    int rc = -1;
    if (status != 0)
        snprintf(why, cap, _("crictl info failed: %s"), trim_end(errtext));
    else if ((rc = cd_crictl_info_parse(out, out_len, info, &err)) != 0)
        snprintf(why, cap, "%s", err.text);
    free(out);
    free(errtext);
    return rc;
}

static void format_time(double t, char *buf, size_t cap)
{
    time_t s = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&s, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, cap, "?");
}

/* The config files to compare with the daemon's start: its config and the
 * imports it names; when those cannot be read, the usual places. */
static void restart_files(const char *config, cd_names *files, char *note, size_t cap)
{
    gp_error err = {0};
    note[0] = '\0';
    if (cd_config_files(config, files, &err) == 0 && files->n) return;
    snprintf(note, cap,
             _("; could not resolve the imports of %s (%s), so compared with "
               "/etc/containerd/config.toml and /etc/containerd/conf.d/*.toml"),
             config, err.text[0] ? err.text : _("file not found"));
    cd_default_config_files(files);
}

/* Sets v->restart_pending and prints a line about it (unless prometheus). */
static void restart_check(const check_opts *o, verdict *v)
{
    cd_daemon_proc proc;
    gp_error err = {0};
    if (cd_daemon_find(o->address, &proc, &err) != 0) {
        if (!o->prometheus)
            printf(_("restart pending: cannot tell (no containerd process serving %s is visible "
                     "here)\n"),
                   o->address);
        return;
    }
    cd_names files = {0};
    char note[4500], started[40], modified[40];
    restart_files(proc.config, &files, note, sizeof note);
    double mtime = 0;
    const char *newest = NULL;
    if (cd_newest_mtime(&files, &mtime, &newest) != 0) {
        if (!o->prometheus)
            printf(_("restart pending: cannot tell (cannot read %s%s)\n"), proc.config, note);
        cd_names_free(&files);
        return;
    }
    /* A process start is known to 1/100 s (clock ticks after boot). */
    v->restart_pending = mtime > proc.started + 0.05;
    format_time(proc.started, started, sizeof started);
    format_time(mtime, modified, sizeof modified);
    if (!o->prometheus && v->restart_pending)
        printf(_("restart pending: yes (containerd pid %ld started %s; %s modified %s, after "
                 "the start%s)\n"),
               (long)proc.pid, started, newest, modified, note);
    else if (!o->prometheus)
        printf(_("restart pending: no (containerd pid %ld started %s; newest config file %s "
                 "modified %s%s)\n"),
               (long)proc.pid, started, newest, modified, note);
    cd_names_free(&files);
}

/* The CRI plugin is up: which handlers it serves, if crictl can say. */
static void judge_handlers(const check_opts *o, verdict *v)
{
    cd_crictl_info info;
    char why[1500], names[1024];
    if (crictl_handlers(o->address, &info, why, sizeof why) != 0) {
        v->exit = EXIT_CANNOT_TELL;
        if (!o->prometheus)
            printf(_("%s: cannot tell which handlers are loaded; CRI plugin ok (daemon at %s; "
                     "%s)\n"),
                   o->handler, o->address, why);
        return;
    }
    v->loaded = cd_names_contains(&info.handlers, o->handler);
    v->exit = v->loaded ? EXIT_HOLDS : EXIT_DOES_NOT_HOLD;
    join_names(&info.handlers, names, sizeof names);
    snprintf(why, sizeof why, _("daemon at %s, crictl info: runtimes %s; default %s"), o->address,
             names, info.default_runtime ? info.default_runtime : _("none"));
    if (!o->prometheus) print_verdict_line(o, v->loaded, why);
    cd_crictl_info_free(&info);
}

static void judge_cri(const check_opts *o, const cd_cri_daemon *cri, verdict *v)
{
    char why[1500];
    if (cri->state == CD_CRI_DAEMON_OK) {
        v->cri_valid = 1;
        judge_handlers(o, v);
        return;
    }
    v->loaded = 0;
    v->exit = EXIT_DOES_NOT_HOLD;
    if (cri->state == CD_CRI_DAEMON_ERROR) {
        v->cri_valid = 0;
        snprintf(why, sizeof why, _("daemon at %s: CRI plugin %s failed to load"), o->address,
                 cri->plugin);
    } else if (cri->state == CD_CRI_DAEMON_SKIPPED) {
        snprintf(why, sizeof why, _("daemon at %s: CRI plugin %s was skipped"), o->address,
                 cri->plugin);
    } else {
        snprintf(why, sizeof why, _("daemon at %s: no CRI plugin (disabled?)"), o->address);
    }
    if (o->prometheus) return;
    print_verdict_line(o, 0, why);
    if (cri->message[0]) printf(_("CRI plugin error: %s\n"), cri->message);
}

static int check_daemon(const check_opts *o)
{
    verdict v = {EXIT_CANNOT_TELL, -1, -1, -1};
    const char *path = strncmp(o->address, "unix://", 7) == 0 ? o->address + 7 : o->address;
    struct stat st;
    if (stat(path, &st) != 0) {
        cli_error(_("containerd is not reachable at %s: %s"), o->address, strerror(errno));
        return finish(o, &v);
    }
    cd_cri_daemon cri;
    if (cri_status(o->address, &cri) != EXIT_HOLDS) return finish(o, &v);
    judge_cri(o, &cri, &v);
    restart_check(o, &v);
    return finish(o, &v);
}

int cli_cmd_containerd_check(int argc, char **argv)
{
    check_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc < 0) {
        check_usage(stdout);
        return EXIT_HOLDS;
    }
    if (rc != EXIT_HOLDS) return rc;
    return o.source == SOURCE_DUMP ? check_dump(&o) : check_daemon(&o);
}
