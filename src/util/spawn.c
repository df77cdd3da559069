#include "util/spawn.h"
#include "util/daemon.h"
#include "util/spawn_capture_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void gp_close_fd(int *fd)
{
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

static int set_cloexec(int fd)
{
    int flags = fcntl(fd, F_GETFD);
    return flags < 0 ? -1 : fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

/* In the child: wire the pipes to stdout/stderr and exec. On failure the
 * errno goes up the close-on-exec report pipe, so the parent can tell "not on
 * PATH" from a program that itself exits 127. */
static void run_child(char *const argv[], int out_fd, int err_fd, int report_fd)
{
    setpgid(0, 0);
    signal(SIGPIPE, SIG_DFL);
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0 && null_fd != STDIN_FILENO) {
        dup2(null_fd, STDIN_FILENO);
        close(null_fd);
    }
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    if (out_fd > STDERR_FILENO) close(out_fd);
    if (err_fd > STDERR_FILENO && err_fd != out_fd) close(err_fd);
    execvp(argv[0], argv);
    int e = errno;
    ssize_t ignored = write(report_fd, &e, sizeof e);
    (void)ignored;
    _exit(127);
}

/* Reads what is available on one pipe; returns -1 on a read error or when
 * the output grows past the limit. */
static int drain(gp_capture *c)
{
    if (c->cap - c->len < 4096) {
        size_t cap = c->cap ? c->cap * 2 : 16384;
        if (cap > GP_CAPTURE_MAX) return -1;
        char *buf = realloc(c->buf, cap + 1);
        if (!buf) return -1;
        c->buf = buf;
        c->cap = cap;
    }
    ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len);
    if (n < 0) return errno == EINTR || errno == EAGAIN ? 0 : -1;
    if (n == 0) gp_close_fd(&c->fd);
    c->len += (size_t)n;
    return 0;
}

int gp_capture_collect(gp_capture *cs, long long deadline)
{
    while (cs[0].fd >= 0 || cs[1].fd >= 0) {
        long long left = deadline - gp_now_ms();
        if (left <= 0) return 1;
        struct pollfd p[2] = {{.fd = cs[0].fd, .events = POLLIN},
                              {.fd = cs[1].fd, .events = POLLIN}};
        int n = poll(p, 2, left > 1000 ? 1000 : (int)left);
        if (n < 0 && errno != EINTR) return -1;
        for (int i = 0; i < 2 && n > 0; i++)
            if (cs[i].fd >= 0 && p[i].revents && drain(&cs[i]) != 0) return -1;
    }
    return 0;
}

/* Waits for the program to end (it may close its output before exiting).
 * Returns 0 with its status, 1 on timeout, -1 on error. */
static int reap(pid_t pid, long long deadline, int *status)
{
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid) return 0;
        if (r < 0 && errno != EINTR) return -1;
        if (gp_now_ms() >= deadline) return 1;
        struct timespec pause = {0, 5 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

static void kill_and_reap(pid_t pid)
{
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
}

/* The errno the child reported, or 0 when exec succeeded (the pipe closed). */
static int exec_errno(int report_fd)
{
    int e = 0;
    ssize_t n;
    do
        n = read(report_fd, &e, sizeof e);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof e ? e : 0;
}

static int open_pipes(int out[2], int err[2], int report[2])
{
    out[0] = out[1] = err[0] = err[1] = report[0] = report[1] = -1;
    if (pipe(out) != 0 || pipe(err) != 0 || pipe(report) != 0) return -1;
    if (set_cloexec(out[0]) || set_cloexec(err[0]) || set_cloexec(report[0]) ||
        set_cloexec(report[1]))
        return -1;
    return 0;
}

static void close_pipes(int out[2], int err[2], int report[2])
{
    for (int i = 0; i < 2; i++) {
        gp_close_fd(&out[i]);
        gp_close_fd(&err[i]);
        gp_close_fd(&report[i]);
    }
}

static gp_spawn_result exec_failure(const char *prog, int e, gp_error *err)
{
    if (e == ENOENT) {
        gp_error_set(err, NULL, 0, 0, "%s not found on PATH", prog);
        return GP_SPAWN_NOT_FOUND;
    }
    gp_error_set(err, NULL, 0, 0, "cannot run %s: %s", prog, strerror(e));
    return GP_SPAWN_EXEC_FAILED;
}

/* Runs the program with the pipes open; fills the captures. */
static gp_spawn_result run(char *const argv[], int timeout_ms, gp_capture cs[2], int *exit_status,
                           gp_error *err)
{
    int out[2], errp[2], report[2];
    if (open_pipes(out, errp, report) != 0) {
        close_pipes(out, errp, report);
        gp_error_set(err, NULL, 0, 0, "cannot run %s: %s", argv[0], strerror(errno));
        return GP_SPAWN_ERROR;
    }
    long long deadline = gp_now_ms() + timeout_ms;
    pid_t pid = fork();
    if (pid == 0) run_child(argv, out[1], errp[1], report[1]);
    int fork_errno = errno;
    gp_close_fd(&out[1]);
    gp_close_fd(&errp[1]);
    gp_close_fd(&report[1]);
    if (pid < 0) {
        close_pipes(out, errp, report);
        gp_error_set(err, NULL, 0, 0, "cannot run %s: %s", argv[0], strerror(fork_errno));
        return GP_SPAWN_ERROR;
    }
    setpgid(pid, pid); /* also in the child: whichever runs first */
    int e = exec_errno(report[0]);
    cs[0].fd = out[0];
    cs[1].fd = errp[0];
    out[0] = errp[0] = -1;
    close_pipes(out, errp, report);
    if (e) {
        kill_and_reap(pid);
        return exec_failure(argv[0], e, err);
    }
    int status = 0;
    int rc = gp_capture_collect(cs, deadline);
    if (rc == 0) rc = reap(pid, deadline, &status);
    if (rc != 0) {
        kill_and_reap(pid);
        if (rc > 0)
            gp_error_set(err, NULL, 0, 0, "%s did not finish within %d seconds; stopped it",
                         argv[0], (timeout_ms + 999) / 1000);
        else
            gp_error_set(err, NULL, 0, 0, "cannot read the output of %s", argv[0]);
        return rc > 0 ? GP_SPAWN_TIMEOUT : GP_SPAWN_ERROR;
    }
    *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return GP_SPAWN_OK;
}

char *gp_capture_finish(gp_capture *c, size_t *len)
{
    if (!c->buf) c->buf = malloc(1);
    if (c->buf) c->buf[c->len] = '\0';
    if (len) *len = c->len;
    char *buf = c->buf;
    c->buf = NULL;
    return buf;
}

gp_spawn_result gp_spawn_capture(char *const argv[], int timeout_ms, char **stdout_buf,
                                 size_t *stdout_len, char **stderr_buf, size_t *stderr_len,
                                 int *exit_status, gp_error *err)
{
    *stdout_buf = *stderr_buf = NULL;
    gp_capture cs[2] = {{.fd = -1}, {.fd = -1}};
    gp_spawn_result r = run(argv, timeout_ms, cs, exit_status, err);
    gp_close_fd(&cs[0].fd);
    gp_close_fd(&cs[1].fd);
    if (r == GP_SPAWN_OK) {
        *stdout_buf = gp_capture_finish(&cs[0], stdout_len);
        *stderr_buf = gp_capture_finish(&cs[1], stderr_len);
        if (!*stdout_buf || !*stderr_buf) {
            free(*stdout_buf);
            free(*stderr_buf);
            *stdout_buf = *stderr_buf = NULL;
            gp_error_set(err, NULL, 0, 0, "out of memory");
            r = GP_SPAWN_ERROR;
        }
    }
    free(cs[0].buf);
    free(cs[1].buf);
    return r;
}
