/* unshare(), CLONE_NEWPID and prctl() are Linux's. */
#define _GNU_SOURCE
#include "util/contain.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/daemon.h"
#include "util/spawn_capture_internal.h"

/* How long past the program's time limit the caller waits for the keeper
 * to finish killing before it gives up on it. */
#define KEEPER_GRACE_MS 5000

/* What the keeper tells the caller when the program has ended. */
typedef struct keeper_report {
    int timed_out;
    int status; /* waitpid's */
    int namespaced;
} keeper_report;

static void write_fully(int fd, const void *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        p = (const char *)p + w;
        n -= (size_t)w;
    }
}

/* ---- in the keeper ------------------------------------------------------- */

static volatile sig_atomic_t keeper_stop;

static void on_term(int sig)
{
    (void)sig;
    keeper_stop = 1;
}

/* One process of /proc: its parent and whether it still runs. */
typedef struct proc_entry {
    pid_t pid, ppid;
    bool alive; /* not a zombie */
} proc_entry;

static bool read_proc(pid_t pid, proc_entry *e)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses */
    char *close_paren = strrchr(buf, ')');
    char state;
    long ppid;
    if (!close_paren || sscanf(close_paren + 1, " %c %ld", &state, &ppid) != 2) return false;
    *e = (proc_entry){pid, (pid_t)ppid, state != 'Z' && state != 'X'};
    return true;
}

/* Every process of the system, from /proc; malloc'd. */
static proc_entry *list_processes(size_t *count)
{
    *count = 0;
    DIR *d = opendir("/proc");
    if (!d) return NULL;
    size_t cap = 256;
    proc_entry *all = malloc(cap * sizeof *all);
    struct dirent *de;
    while (all && (de = readdir(d))) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 0) continue;
        if (*count == cap) {
            proc_entry *more = realloc(all, 2 * cap * sizeof *all);
            if (!more) break;
            all = more;
            cap *= 2;
        }
        if (read_proc((pid_t)pid, &all[*count])) (*count)++;
    }
    closedir(d);
    return all;
}

static bool is_marked(const pid_t *set, size_t n, pid_t pid)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == pid) return true;
    return false;
}

/* SIGKILL to every living process below `self`; returns how many. A
 * process that escaped its session is still below: its parent is, or was
 * (then it is the subreaper's own child now). */
static size_t kill_below(pid_t self)
{
    size_t n = 0, marked = 1, killed = 0;
    proc_entry *all = list_processes(&n);
    pid_t *set = all ? malloc((n + 1) * sizeof *set) : NULL;
    if (!set) {
        free(all);
        return 0;
    }
    set[0] = self;
    for (bool grew = true; grew;) {
        grew = false;
        for (size_t i = 0; i < n; i++) {
            if (!is_marked(set, marked, all[i].ppid) || is_marked(set, marked, all[i].pid))
                continue;
            set[marked++] = all[i].pid;
            grew = true;
            if (all[i].alive && kill(all[i].pid, SIGKILL) == 0) killed++;
        }
    }
    free(set);
    free(all);
    return killed;
}

/* Kills and reaps everything below the keeper until nothing is left (a
 * process that forks while it is being killed adds a round). */
static void clear_below(void)
{
    for (int round = 0; round < 200; round++) {
        size_t killed = kill_below(getpid());
        while (waitpid(-1, NULL, WNOHANG) > 0) {
        }
        if (killed == 0) break;
        gp_sleep_ms(2);
    }
    /* Whatever was killed last is reaped here; then none is left. */
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {
    }
}

/* Forks the program with the exec errno reported on report_fd. */
static pid_t start_program(char *const argv[], int report_fd)
{
    pid_t pid = fork();
    if (pid != 0) return pid;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    execvp(argv[0], argv);
    int e = errno;
    write_fully(report_fd, &e, sizeof e);
    _exit(127);
}

/* Waits for `program`, reaping every other child on the way (orphans come
 * to the subreaper). 0 when it ended (*status set), 1 at the deadline or
 * when asked to stop. */
static int wait_program(pid_t program, long long deadline, int *status)
{
    for (;;) {
        int st = 0;
        pid_t r = waitpid(-1, &st, WNOHANG);
        if (r == program) {
            *status = st;
            return 0;
        }
        if (r > 0) continue;
        if (r < 0 && errno == ECHILD) return 1;
        if (keeper_stop || gp_now_ms() >= deadline) return 1;
        gp_sleep_ms(2);
    }
}

/* Standard output and error become /dev/null: the keeper must not hold the
 * caller's pipes open once the program's processes are gone. */
static void drop_output(void)
{
    int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd < 0) return;
    dup2(null_fd, STDOUT_FILENO);
    dup2(null_fd, STDERR_FILENO);
    close(null_fd);
}

/* The first process of a new PID namespace: when it exits, the kernel
 * kills every other process of the namespace. It runs the program and
 * reports on it. */
static _Noreturn void namespace_init(char *const argv[], long long deadline, int exec_fd,
                                     int status_fd)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    pid_t program = start_program(argv, exec_fd);
    drop_output();
    close(exec_fd);
    keeper_report rep = {1, 0, 1};
    if (program > 0) rep.timed_out = wait_program(program, deadline, &rep.status);
    write_fully(status_fd, &rep, sizeof rep);
    _exit(0);
}

/* The keeper: fds are the caller's four pipes (output, error, exec report,
 * keeper report). */
static _Noreturn void keeper(char *const argv[], const gp_contain_options *opt, int fds[4][2],
                             pid_t caller)
{
    int exec_fd = fds[2][1], status_fd = fds[3][1];
    setsid();
    /* The caller gone (killed, interrupted): clean up all the same. */
    struct sigaction sa = {0};
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != caller) _exit(1);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0) {
        dup2(null_fd, STDIN_FILENO);
        close(null_fd);
    }
    /* dup2 clears close-on-exec: the program writes to these */
    dup2(fds[0][1], STDOUT_FILENO);
    dup2(fds[1][1], STDERR_FILENO);
    for (int i = 0; i < 4; i++)
        close(fds[i][0]);
    close(fds[0][1]);
    close(fds[1][1]);
    long long deadline = gp_now_ms() + opt->timeout_ms;
    keeper_report rep = {1, 0, 0};
    bool ns = !opt->no_pid_namespace && unshare(CLONE_NEWPID) == 0;
    if (ns) {
        pid_t init = fork();
        if (init == 0) namespace_init(argv, deadline, exec_fd, status_fd);
        drop_output();
        close(exec_fd);
        int st;
        while (init > 0 && waitpid(init, &st, WNOHANG) == 0) {
            /* the namespace's init keeps the time; this is the caller's stop */
            if (keeper_stop) kill(init, SIGKILL);
            gp_sleep_ms(2);
        }
        if (init < 0) _exit(1); /* no report: the caller says it could not run */
    } else {
        pid_t program = start_program(argv, exec_fd);
        drop_output();
        close(exec_fd);
        if (program > 0) rep.timed_out = wait_program(program, deadline, &rep.status);
        clear_below();
        write_fully(status_fd, &rep, sizeof rep);
    }
    clear_below();
    _exit(0);
}

/* ---- in the caller --------------------------------------------------------- */

static int make_pipe(int fds[2])
{
    fds[0] = fds[1] = -1;
    if (pipe(fds) != 0) return -1;
    return fcntl(fds[0], F_SETFD, FD_CLOEXEC) == 0 && fcntl(fds[1], F_SETFD, FD_CLOEXEC) == 0 ? 0
                                                                                              : -1;
}

/* The exec errno the program reported, 0 when it started. */
static int read_exec_errno(int fd)
{
    int e = 0;
    ssize_t n;
    do
        n = read(fd, &e, sizeof e);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof e ? e : 0;
}

static bool read_report(int fd, keeper_report *rep)
{
    ssize_t n;
    do
        n = read(fd, rep, sizeof *rep);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof *rep;
}

/* The keeper is stuck: stop it the hard way. */
static void stop_keeper(pid_t keeper_pid)
{
    kill(keeper_pid, SIGTERM);
    for (int i = 0; i < 500 && waitpid(keeper_pid, NULL, WNOHANG) == 0; i++)
        gp_sleep_ms(2);
    kill(keeper_pid, SIGKILL);
    while (waitpid(keeper_pid, NULL, 0) < 0 && errno == EINTR) {
    }
}

static void close_all(int (*fds)[2], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        gp_close_fd(&fds[i][0]);
        gp_close_fd(&fds[i][1]);
    }
}

void gp_spawn_contained(char *const argv[], const gp_contain_options *opt, char **stdout_buf,
                        size_t *stdout_len, char **stderr_buf, size_t *stderr_len,
                        gp_contain_result *res, gp_error *err)
{
    *stdout_buf = *stderr_buf = NULL;
    memset(res, 0, sizeof *res);
    res->r = GP_SPAWN_ERROR;
    int fds[4][2] = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}}; /* out, err, exec, status */
    for (int i = 0; i < 4; i++)
        if (make_pipe(fds[i]) != 0) {
            gp_error_set(err, NULL, 0, 0, "cannot run %s: %s", argv[0], strerror(errno));
            close_all(fds, 4);
            return;
        }
    pid_t caller = getpid();
    pid_t pid = fork();
    if (pid == 0) keeper(argv, opt, fds, caller);
    int fork_errno = errno;
    for (int i = 0; i < 4; i++)
        gp_close_fd(&fds[i][1]);
    if (pid < 0) {
        gp_error_set(err, NULL, 0, 0, "cannot run %s: %s", argv[0], strerror(fork_errno));
        close_all(fds, 4);
        return;
    }
    int exec_errno = read_exec_errno(fds[2][0]);
    gp_capture cs[2] = {{.fd = fds[0][0]}, {.fd = fds[1][0]}};
    fds[0][0] = fds[1][0] = -1;
    long long deadline = gp_now_ms() + opt->timeout_ms + KEEPER_GRACE_MS;
    int collected = gp_capture_collect(cs, deadline);
    keeper_report rep = {0};
    bool reported = collected == 0 && read_report(fds[3][0], &rep);
    if (collected != 0 || !reported)
        stop_keeper(pid);
    else
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
    gp_close_fd(&cs[0].fd);
    gp_close_fd(&cs[1].fd);
    close_all(fds, 4);
    res->namespaced = rep.namespaced != 0;
    if (exec_errno == ENOENT) {
        res->r = GP_SPAWN_NOT_FOUND;
        gp_error_set(err, NULL, 0, 0, "%s not found on PATH", argv[0]);
    } else if (exec_errno) {
        res->r = GP_SPAWN_EXEC_FAILED;
        gp_error_set(err, NULL, 0, 0, "cannot run %s: %s", argv[0], strerror(exec_errno));
    } else if (collected < 0 || (collected == 0 && !reported)) {
        gp_error_set(err, NULL, 0, 0, "cannot read the output of %s", argv[0]);
    } else if (collected > 0 || rep.timed_out) {
        res->r = GP_SPAWN_TIMEOUT;
        gp_error_set(err, NULL, 0, 0, "%s did not finish within %d seconds; stopped it", argv[0],
                     (opt->timeout_ms + 999) / 1000);
    } else {
        res->r = GP_SPAWN_OK;
        res->exit_status =
            WIFEXITED(rep.status) ? WEXITSTATUS(rep.status) : 128 + WTERMSIG(rep.status);
    }
    if (res->r == GP_SPAWN_OK || res->r == GP_SPAWN_TIMEOUT) {
        *stdout_buf = gp_capture_finish(&cs[0], stdout_len);
        *stderr_buf = gp_capture_finish(&cs[1], stderr_len);
    }
    free(cs[0].buf);
    free(cs[1].buf);
}
