/* gpuop cluster serve | up | down | status: the embedded API server in the
 * foreground (serve execs the gpuop-apiserver helper) or in the background.
 *
 * A background server is found through its data directory:
 *   apiserver.pid    the helper's pid (written atomically)
 *   apiserver.log    its output, appended run after run
 *   port             the port of the last run, reused when free: kubectl
 *                    caches discovery per host:port, so a stable port keeps
 *                    its cache valid
 *   previous-context the user's current-context before `up` switched it
 *   merged-into      the user kubeconfig `up` merged into, for `down`
 *   lock             held (fcntl) while up or down works */
/* realpath() is XSI. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/daemon.h"
#include "lab/cluster_shape.h"
#include "client/kubeconfig_merge.h"
#include "util/file.h"
#include "util/msg.h"

#define HELPER         "gpuop-apiserver"
#define CONTEXT_NAME   "gpuop"
#define START_WAIT_MS  10000
#define STOP_WAIT_MS   10000
#define LOG_TAIL_LINES 20

static void cluster_usage(FILE *out)
{
    fputs(_("Usage: gpuop cluster serve [--data DIR] [--address ADDR] [--port N]\n"
            "                           [--watch-history EVENTS] [SHAPE...]\n"
            "       gpuop cluster up [--data DIR] [--address ADDR] [--port N]\n"
            "                        [--kubeconfig FILE] [--no-kubeconfig-merge] [SHAPE...]\n"
            "       gpuop cluster down [--data DIR] [--kubeconfig FILE] [--no-kubeconfig-merge]\n"
            "       gpuop cluster status [--data DIR]\n"
            "\n"
            "  serve   run the embedded Kubernetes API server in the foreground until\n"
            "          interrupted. It listens on ADDR (default 127.0.0.1) and PORT\n"
            "          (default: a free one), and writes DIR/kubeconfig (mode 0600)\n"
            "          with the bearer token every request must carry. EVENTS is how\n"
            "          many changes it keeps for watches (default 16384).\n"
            "  up      start the server in the background and wait until it answers;\n"
            "          nothing happens when it already runs. PORT defaults to the last\n"
            "          run's when it is free. Then add the context \"gpuop\" to your\n"
            "          kubeconfig (FILE, else the first file of $KUBECONFIG, else\n"
            "          ~/.kube/config; backed up first) and make it current.\n"
            "  down    stop the server, remove the context and switch back to the\n"
            "          previous one. DIR keeps the data: up brings it all back.\n"
            "  status  whether the server runs and answers: pid, URL, kubeconfig.\n"
            "\n"
            "SHAPE: what the cluster starts with (created when missing):\n"
            "  --lab                    the lab: lab-node-0..2 (cpu 16, memory 32Gi,\n"
            "                           pods 110, untainted) and namespace gpu-operator\n"
            "  --nodes N                N fake nodes (kwok's node template)\n"
            "  --node-prefix P          node names P0, P1, ... (default kwok-node-)\n"
            "  --node-cpu Q, --node-memory Q, --node-pods N\n"
            "                           capacity and allocatable (default 32, 256Gi, 110)\n"
            "  --node-label K=V         a label on every node (repeatable)\n"
            "  --node-taint K[=V]:EFFECT  a taint on every node (repeatable)\n"
            "  --node-runtime-handlers A,B  the runtime handlers nodes report (runc)\n"
            "  --namespace NS           a namespace (repeatable)\n"
            "  --kubelet-runtime-check  hold a pod in ContainerCreating when its node\n"
            "                           lacks its RuntimeClass handler, as a kubelet does\n"
            "  --node-agents            simulate each fake node: its containerd (files\n"
            "                           under DIR/nodes/NAME), kubelet, NVIDIA driver, and\n"
            "                           the toolkit and device-plugin pods it runs\n"
            "                           (gpuop node acts on them)\n"
            "  --node-monitor-grace-period D\n"
            "                           how long a node may post no heartbeat before the\n"
            "                           node lifecycle controller marks it Unknown and\n"
            "                           taints it (a duration such as 5s; default 40s)\n"
            "  --no-controllers         the API server alone: no scheduler, DaemonSet\n"
            "                           controller, fake kubelet or garbage collector\n"
            "\n"
            "DIR defaults to ~/.local/share/gpuop/cluster; it holds apiserver.pid and\n"
            "apiserver.log.\n"
            "Exit status: 0 ok (status: running), 1 status: stopped, 2 could not start\n"
            "or stop, unreadable kubeconfig, usage error (status: cannot tell).\n"),
          out);
}

static int run_apiserver(char **argv)
{
    return cli_exec_helper(HELPER, argv);
}

/* ---- options ------------------------------------------------------------- */

enum { OPT_ADDRESS = 1, OPT_PORT = 2, OPT_KUBECONFIG = 4, OPT_NO_MERGE = 8, OPT_SHAPE = 16 };

/* The cluster's shape (--nodes, --lab, ...) goes to the server as given;
 * it is checked here first so that `up` fails before starting anything. */
#define MAX_SHAPE_ARGS (2 * 4 * LAB_SHAPE_MAX_ITEMS)

typedef struct cluster_opts {
    const char *data;
    const char *address;
    const char *kubeconfig; /* NULL: $KUBECONFIG's first file, else ~/.kube/config */
    long port;              /* -1: not given */
    bool no_merge;
    char *shape[MAX_SHAPE_ARGS];
    int shape_count;
} cluster_opts;

static int parse_opts(int argc, char **argv, unsigned allowed, cluster_opts *o)
{
    *o = (cluster_opts){.address = "127.0.0.1", .port = -1};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--data") == 0 && next) {
            o->data = argv[++i];
        } else if (strcmp(arg, "--address") == 0 && next && (allowed & OPT_ADDRESS)) {
            o->address = argv[++i];
        } else if (strcmp(arg, "--kubeconfig") == 0 && next && (allowed & OPT_KUBECONFIG)) {
            o->kubeconfig = argv[++i];
        } else if (strcmp(arg, "--no-kubeconfig-merge") == 0 && (allowed & OPT_NO_MERGE)) {
            o->no_merge = true;
        } else if (strcmp(arg, "--port") == 0 && next && (allowed & OPT_PORT)) {
            char *end;
            o->port = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || o->port < 0 || o->port > 65535)
                return cli_usage_error("cluster", _("--port takes 0 to 65535"));
        } else if (allowed & OPT_SHAPE) {
            lab_shape seed;
            lab_shape_defaults(&seed);
            gp_error err = {0};
            int used = lab_shape_option(&seed, argc - i, argv + i, &err);
            if (used < 0) return cli_usage_error("cluster", "%s", err.text);
            if (used == 0 || o->shape_count + used > MAX_SHAPE_ARGS)
                return cli_usage_error("cluster", _("unexpected argument '%s'"), arg);
            for (int k = 0; k < used; k++)
                o->shape[o->shape_count++] = argv[i + k];
            i += used - 1;
        } else {
            return cli_usage_error("cluster", _("unexpected argument '%s'"), arg);
        }
    }
    return EXIT_HOLDS;
}

/* ---- the data directory -------------------------------------------------- */

typedef struct data_dir {
    char path[PATH_MAX]; /* absolute, symlinks resolved: the helper's --data */
    int lock_fd;
} data_dir;

/* DIR/name, or "" when that is too long (no file has such a name). */
static const char *dir_file(const data_dir *d, const char *name, char *buf, size_t size)
{
    if (snprintf(buf, size, "%s/%s", d->path, name) >= (int)size) buf[0] = '\0';
    return buf;
}

/* mkdir -p with mode 0700: the directory holds the token. */
static int make_private_dir(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        cli_error(_("%s: path too long"), dir);
        return -1;
    }
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            cli_error(_("cannot create %s: %s"), path, strerror(errno));
            return -1;
        }
        *p = c;
        if (!c) return 0;
    }
}

/* Resolves --data (default ~/.local/share/gpuop/cluster), creating it when
 * `create`. Returns 0, 1 when it does not exist (and !create), -1 on error. */
static int open_data_dir(const char *given, bool create, data_dir *d)
{
    char fallback[PATH_MAX];
    d->lock_fd = -1;
    if (!given) {
        const char *home = getenv("HOME");
        if (!home || !*home) {
            cli_error(_("$HOME is not set; name the data directory with --data"));
            return -1;
        }
        snprintf(fallback, sizeof fallback, "%s/.local/share/gpuop/cluster", home);
        given = fallback;
    }
    if (create && make_private_dir(given) != 0) return -1;
    if (realpath(given, d->path)) return 0;
    if (errno == ENOENT && !create) {
        snprintf(d->path, sizeof d->path, "%s", given); /* for messages */
        return 1;
    }
    cli_error("%s: %s", given, strerror(errno));
    return -1;
}

/* One `up` or `down` at a time per directory; a second one waits. The
 * descriptor is close-on-exec so the server never inherits the lock. */
static int lock_data_dir(data_dir *d)
{
    char path[PATH_MAX + 16];
    d->lock_fd = open(dir_file(d, "lock", path, sizeof path), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    int rc;
    do
        rc = d->lock_fd >= 0 ? fcntl(d->lock_fd, F_SETLKW, &fl) : -1;
    while (rc != 0 && errno == EINTR);
    if (rc == 0) return 0;
    cli_error(_("cannot lock %s: %s"), path, strerror(errno));
    return -1;
}

static void close_data_dir(data_dir *d)
{
    if (d->lock_fd >= 0) close(d->lock_fd);
    d->lock_fd = -1;
}

/* A small state file's text without its final newline, or NULL. */
static char *read_state(const data_dir *d, const char *name)
{
    char path[PATH_MAX + 32];
    size_t len;
    char *text = gp_read_file(dir_file(d, name, path, sizeof path), &len, NULL);
    if (text && len > 0 && text[len - 1] == '\n') text[len - 1] = '\0';
    return text;
}

/* Written beside and renamed over, 0600, like every file in DIR. */
static int write_state(const data_dir *d, const char *name, const char *text)
{
    char path[PATH_MAX + 32], tmp[PATH_MAX + 48];
    dir_file(d, name, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && dprintf(fd, "%s\n", text) >= 0;
    ok = fd >= 0 && close(fd) == 0 && ok;
    if (ok && rename(tmp, path) == 0) return 0;
    cli_error(_("cannot write %s: %s"), path, strerror(errno));
    unlink(tmp);
    return -1;
}

static void remove_state(const data_dir *d, const char *name)
{
    char path[PATH_MAX + 32];
    unlink(dir_file(d, name, path, sizeof path));
}

/* ---- the server's kubeconfig --------------------------------------------- */

/* clusters[gpuop].cluster.server of a kubeconfig the helper wrote, or NULL. */
static char *server_url_in(const char *kubeconfig)
{
    json_t *kc = json_load_file(kubeconfig, 0, NULL);
    size_t i;
    json_t *entry;
    char *url = NULL;
    json_array_foreach(json_object_get(kc, "clusters"), i, entry)
    {
        const char *name = json_string_value(json_object_get(entry, "name"));
        const char *server =
            json_string_value(json_object_get(json_object_get(entry, "cluster"), "server"));
        if (name && server && strcmp(name, CONTEXT_NAME) == 0 && !url) url = strdup(server);
    }
    json_decref(kc);
    return url;
}

static char *server_url(const data_dir *d)
{
    char path[PATH_MAX + 32];
    return server_url_in(dir_file(d, "kubeconfig", path, sizeof path));
}

/* "https://HOST:PORT" or "https://[V6]:PORT" into its host and port. */
static bool split_url(const char *url, char *host, size_t host_size, unsigned *port)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    const char *colon = strrchr(p, ':');
    if (!colon || colon == p) return false;
    char *end;
    long v = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || (*end && *end != '/') || v <= 0 || v > 65535) return false;
    size_t n = (size_t)(colon - p);
    if (n >= 2 && p[0] == '[' && p[n - 1] == ']') p++, n -= 2;
    if (n >= host_size) return false;
    memcpy(host, p, n);
    host[n] = '\0';
    *port = (unsigned)v;
    return true;
}

static bool url_answers(const char *url, int timeout_ms)
{
    char host[256];
    unsigned port;
    return url && split_url(url, host, sizeof host, &port) &&
           gp_tcp_answers(host, port, timeout_ms);
}

/* ---- starting the server ------------------------------------------------- */

/* The lines the helper logged since `from` (this run's), on stderr. */
static void print_log_tail(const char *log, off_t from)
{
    size_t len;
    char *text = gp_read_file(log, &len, NULL);
    if (!text) return;
    size_t start = from >= 0 && (size_t)from <= len ? (size_t)from : 0;
    /* Back from the end (its own newline aside) to the start of the last lines. */
    size_t at = len > start && text[len - 1] == '\n' ? len - 1 : len;
    for (int lines = 0; at > start; at--)
        if (text[at - 1] == '\n' && ++lines == LOG_TAIL_LINES) break;
    if (at < len) fprintf(stderr, _("the end of %s:\n"), log);
    for (char *line = text + at; line < text + len;) {
        char *nl = memchr(line, '\n', (size_t)(text + len - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
        fprintf(stderr, "  %.*s\n", (int)n, line);
        line += n + 1;
    }
    free(text);
}

/* The port for a new run: --port, else the last run's if it is free now,
 * else 0 (the server picks one). */
static unsigned choose_port(const cluster_opts *o, const data_dir *d)
{
    if (o->port >= 0) return (unsigned)o->port;
    char *last = read_state(d, "port");
    long port = last ? strtol(last, NULL, 10) : 0;
    free(last);
    if (port > 0 && port <= 65535 && gp_port_free(o->address, (unsigned)port))
        return (unsigned)port;
    return 0;
}

/* The helper rewrites DIR/kubeconfig through a rename once it listens, so a
 * new inode or time means this run's file, not the last run's. */
static bool file_renewed(const char *path, const struct stat *before, bool existed)
{
    struct stat now;
    if (stat(path, &now) != 0) return false;
    if (!existed) return true;
    return now.st_ino != before->st_ino || now.st_dev != before->st_dev ||
           now.st_mtim.tv_sec != before->st_mtim.tv_sec ||
           now.st_mtim.tv_nsec != before->st_mtim.tv_nsec;
}

typedef struct start_state {
    pid_t pid;
    char kubeconfig[PATH_MAX + 32];
    char log[PATH_MAX + 32];
    char pidfile[PATH_MAX + 32];
    struct stat kc_before;
    bool kc_existed;
    off_t log_from;
} start_state;

/* Polls until the helper's kubeconfig is new and its port answers; returns
 * the server URL, or NULL after saying why (the helper is stopped then). */
static char *wait_until_up(start_state *s)
{
    long long deadline = gp_now_ms() + START_WAIT_MS;
    for (;;) {
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            cli_error(_("%s exited with status %d before it answered"), HELPER, code);
            return NULL;
        }
        if (file_renewed(s->kubeconfig, &s->kc_before, s->kc_existed)) {
            char *url = server_url_in(s->kubeconfig);
            if (url_answers(url, 200)) return url;
            free(url);
        }
        if (gp_now_ms() >= deadline) {
            cli_error(_("%s did not answer within %d seconds; stopped it"), HELPER,
                      START_WAIT_MS / 1000);
            gp_daemon_stop(s->pid, 2000);
            waitpid(s->pid, NULL, WNOHANG);
            return NULL;
        }
        gp_sleep_ms(20);
    }
}

/* Starts the helper detached and waits for it. Returns the URL, or NULL
 * after printing why and the end of its log. */
static char *start_server(const cluster_opts *o, const data_dir *d, unsigned port, pid_t *pid)
{
    start_state s = {0};
    dir_file(d, "kubeconfig", s.kubeconfig, sizeof s.kubeconfig);
    dir_file(d, "apiserver.log", s.log, sizeof s.log);
    dir_file(d, "apiserver.pid", s.pidfile, sizeof s.pidfile);
    s.kc_existed = stat(s.kubeconfig, &s.kc_before) == 0;
    struct stat log_st;
    s.log_from = stat(s.log, &log_st) == 0 ? log_st.st_size : 0;

    char helper[PATH_MAX + 64], port_text[16];
    cli_helper_path(HELPER, helper, sizeof helper);
    snprintf(port_text, sizeof port_text, "%u", port);
    char *argv[8 + MAX_SHAPE_ARGS] = {
        helper, "--data", (char *)d->path, "--address", (char *)o->address, "--port", port_text};
    for (int i = 0; i < o->shape_count; i++)
        argv[7 + i] = o->shape[i];
    gp_error err = {0};
    s.pid = gp_daemon_spawn(argv, s.log, &err);
    if (s.pid < 0) {
        cli_report(&err);
        return NULL;
    }
    if (gp_pidfile_write(s.pidfile, s.pid, &err) != 0) {
        cli_report(&err);
        gp_daemon_stop(s.pid, 2000);
        waitpid(s.pid, NULL, 0);
        return NULL;
    }
    char *url = wait_until_up(&s);
    if (!url) {
        unlink(s.pidfile);
        print_log_tail(s.log, s.log_from);
        return NULL;
    }
    *pid = s.pid;
    return url;
}

/* ---- the user's kubeconfig ----------------------------------------------- */

/* True when `path` is DIR/kubeconfig itself ($KUBECONFIG may name it):
 * merging into it, or removing gpuop from it, would break it. */
static bool is_servers_own(const char *path, const data_dir *d)
{
    char own[PATH_MAX + 32];
    struct stat a, b;
    return stat(path, &a) == 0 && stat(dir_file(d, "kubeconfig", own, sizeof own), &b) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void print_backup(const kc_merge_result *r)
{
    if (r->backup) gp_msg_fprintf(stdout, _("  (the old file is kept as %s)\n"), r->backup);
}

/* Adds the context to the user's kubeconfig and says how to use it. */
static int merge_into_user(const cluster_opts *o, const data_dir *d, const char *url)
{
    char own[PATH_MAX + 32];
    dir_file(d, "kubeconfig", own, sizeof own);
    gp_error err = {0};
    char *target = o->no_merge ? NULL : kc_kubeconfig_user_path(o->kubeconfig, &err);
    if (o->no_merge || (target && is_servers_own(target, d))) {
        printf(_("gpuop cluster is up on %s\n"
                 "use it with: kubectl --kubeconfig %s api-resources\n"),
               url, own);
        free(target);
        return EXIT_HOLDS;
    }
    json_t *source = target ? json_load_file(own, 0, NULL) : NULL;
    if (target && !source) gp_error_set(&err, own, 0, 0, "cannot read the server's kubeconfig");
    kc_merge_result r = {0};
    if (!source || kc_kubeconfig_merge(target, CONTEXT_NAME, source, &r, &err) != 0) {
        cli_report(&err);
        cli_error(_("the server runs, but the context was not added; run 'gpuop cluster up' "
                    "again once the file is fixed, or use --kubeconfig %s"),
                  own);
        json_decref(source);
        free(target);
        return EXIT_CANNOT_TELL;
    }
    json_decref(source);
    /* A second `up` finds gpuop already current: keep the first one's answer. */
    int rc = 0;
    if (!r.previous_context || strcmp(r.previous_context, CONTEXT_NAME) != 0)
        rc = write_state(d, "previous-context", r.previous_context ? r.previous_context : "");
    char *absolute = realpath(target, NULL);
    if (rc == 0) rc = write_state(d, "merged-into", absolute ? absolute : target);
    printf(_("gpuop cluster is up on %s (kubectl context \"%s\" in %s)\n"), url, CONTEXT_NAME,
           target);
    print_backup(&r);
    free(absolute);
    free(target);
    kc_merge_result_free(&r);
    return rc == 0 ? EXIT_HOLDS : EXIT_CANNOT_TELL;
}

/* Takes the context out again, if it is this directory's (its token). */
static int remove_from_user(const cluster_opts *o, const data_dir *d)
{
    char *token = read_state(d, "token");
    if (!token) return EXIT_HOLDS; /* never served: nothing of ours anywhere */
    char *merged = o->kubeconfig ? NULL : read_state(d, "merged-into");
    gp_error err = {0};
    char *target = kc_kubeconfig_user_path(o->kubeconfig ? o->kubeconfig : merged, &err);
    char *previous = read_state(d, "previous-context");
    kc_merge_result r = {0};
    int rc = EXIT_HOLDS;
    if (!target) {
        rc = EXIT_CANNOT_TELL;
    } else if (!is_servers_own(target, d)) {
        rc = kc_kubeconfig_unmerge(target, CONTEXT_NAME, token, previous, &r, &err) == 0
                 ? EXIT_HOLDS
                 : EXIT_CANNOT_TELL;
    }
    if (rc != EXIT_HOLDS) {
        cli_report(&err);
    } else if (r.outcome == KC_MERGE_NOT_OURS) {
        gp_msg_fprintf(stdout,
                       _("left context \"%s\" in %s: it belongs to another gpuop cluster\n"),
                       CONTEXT_NAME, target);
    } else {
        if (r.outcome == KC_MERGE_WRITTEN)
            gp_msg_fprintf(stdout, _("removed context \"%s\" from %s\n"), CONTEXT_NAME, target);
        print_backup(&r);
        remove_state(d, "previous-context");
        remove_state(d, "merged-into");
    }
    kc_merge_result_free(&r);
    free(previous);
    free(target);
    free(merged);
    free(token);
    return rc;
}

/* ---- up, down, status ---------------------------------------------------- */

/* The running server of DIR: 1 with *pid, 0 none, -1 when the pid file
 * cannot be read (printed). When `tidy` (up, down), a pid file that names
 * no server, or holds no pid, is removed: it would stop every later `up`. */
static int find_server(const data_dir *d, bool tidy, pid_t *pid)
{
    char path[PATH_MAX + 32];
    gp_error err = {0};
    int found = gp_pidfile_read(dir_file(d, "apiserver.pid", path, sizeof path), pid, &err);
    if (found == -2 && tidy) {
        unlink(path);
        return 0;
    }
    if (found < 0) {
        cli_report(&err);
        return -1;
    }
    if (found && gp_daemon_is(*pid, HELPER, d->path)) return 1;
    if (found && tidy) unlink(path);
    return 0;
}

static int cluster_up(int argc, char **argv)
{
    cluster_opts o;
    data_dir d;
    int rc = parse_opts(argc, argv,
                        OPT_ADDRESS | OPT_PORT | OPT_KUBECONFIG | OPT_NO_MERGE | OPT_SHAPE, &o);
    if (rc != EXIT_HOLDS) return rc;
    if (open_data_dir(o.data, true, &d) != 0 || lock_data_dir(&d) != 0) {
        close_data_dir(&d);
        return EXIT_CANNOT_TELL;
    }
    pid_t pid = 0;
    int found = find_server(&d, true, &pid);
    char *url = NULL;
    if (found > 0) {
        url = server_url(&d);
        printf(_("gpuop cluster is already running (pid %ld)\n"), (long)pid);
    } else if (found == 0) {
        url = start_server(&o, &d, choose_port(&o, &d), &pid);
    }
    char host[256], port_text[16];
    unsigned port;
    if (url && found == 0 && split_url(url, host, sizeof host, &port)) {
        snprintf(port_text, sizeof port_text, "%u", port);
        write_state(&d, "port", port_text);
    }
    if (found > 0 && !url) cli_error(_("%s: cannot read the server's kubeconfig"), d.path);
    rc = url ? merge_into_user(&o, &d, url) : EXIT_CANNOT_TELL;
    free(url);
    close_data_dir(&d);
    return rc;
}

static int cluster_down(int argc, char **argv)
{
    cluster_opts o;
    data_dir d;
    int rc = parse_opts(argc, argv, OPT_KUBECONFIG | OPT_NO_MERGE, &o);
    if (rc != EXIT_HOLDS) return rc;
    int opened = open_data_dir(o.data, false, &d);
    if (opened == 1) printf(_("gpuop cluster is not running\n"));
    if (opened != 0) return opened > 0 ? EXIT_HOLDS : EXIT_CANNOT_TELL;
    if (lock_data_dir(&d) != 0) {
        close_data_dir(&d);
        return EXIT_CANNOT_TELL;
    }
    pid_t pid = 0;
    int found = find_server(&d, true, &pid);
    if (found < 0) rc = EXIT_CANNOT_TELL;
    if (found == 0) printf(_("gpuop cluster is not running\n"));
    if (found > 0 && gp_daemon_stop(pid, STOP_WAIT_MS) < 0) {
        cli_error(_("%s (pid %ld) did not stop, even on SIGKILL"), HELPER, (long)pid);
        rc = EXIT_CANNOT_TELL;
    } else if (found > 0) {
        char path[PATH_MAX + 32];
        unlink(dir_file(&d, "apiserver.pid", path, sizeof path));
        printf(_("stopped gpuop cluster (pid %ld)\n"), (long)pid);
    }
    if (rc == EXIT_HOLDS && !o.no_merge) rc = remove_from_user(&o, &d);
    close_data_dir(&d);
    return rc;
}

static void status_line(const char *label, const char *value)
{
    printf("%-11s %s\n", label, value ? value : "-");
}

/* Field names and states stay English: scripts read them. */
static int cluster_status(int argc, char **argv)
{
    cluster_opts o;
    data_dir d;
    int rc = parse_opts(argc, argv, 0, &o);
    if (rc != EXIT_HOLDS) return rc;
    int opened = open_data_dir(o.data, false, &d);
    if (opened < 0) return EXIT_CANNOT_TELL;
    pid_t pid = 0;
    int found = opened == 0 ? find_server(&d, false, &pid) : 0;
    char *url = found >= 0 && opened == 0 ? server_url(&d) : NULL;
    bool answers = found > 0 && url_answers(url, 1000);
    const char *state = found < 0 ? "unknown"
                        : !found  ? "stopped"
                        : answers ? "running"
                                  : "not answering";
    char pid_text[32], file[PATH_MAX + 32];
    snprintf(pid_text, sizeof pid_text, "%ld", (long)pid);
    status_line("status:", state);
    status_line("pid:", found > 0 ? pid_text : NULL);
    status_line("server:", url);
    status_line("kubeconfig:", opened == 0 ? dir_file(&d, "kubeconfig", file, sizeof file) : NULL);
    status_line("data:", d.path);
    free(url);
    if (found > 0) return answers ? EXIT_HOLDS : EXIT_CANNOT_TELL;
    return found < 0 ? EXIT_CANNOT_TELL : EXIT_DOES_NOT_HOLD;
}

int cli_cmd_cluster(int argc, char **argv)
{
    if (argc < 2) {
        cluster_usage(stderr);
        return EXIT_CANNOT_TELL;
    }
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i])) {
            cluster_usage(stdout);
            return EXIT_HOLDS;
        }
    const char *sub = argv[1];
    if (strcmp(sub, "serve") == 0) return run_apiserver(argv + 1);
    if (strcmp(sub, "up") == 0) return cluster_up(argc - 1, argv + 1);
    if (strcmp(sub, "down") == 0) return cluster_down(argc - 1, argv + 1);
    if (strcmp(sub, "status") == 0) return cluster_status(argc - 1, argv + 1);
    return cli_usage_error("cluster", _("unknown cluster command '%s'"), sub);
}
