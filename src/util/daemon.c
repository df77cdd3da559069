#include "util/daemon.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/file.h"

long long gp_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void gp_sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

/* ---- starting ------------------------------------------------------------ */

/* Every descriptor but 0-2 and `keep` closed: a daemon that held the
 * caller's pipes would keep them open for its whole life (a shell's $(...)
 * or bats would wait for it). */
static void close_other_fds(int keep)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) {
        for (int fd = 3; fd < 1024; fd++)
            if (fd != keep) close(fd);
        return;
    }
    int own = dirfd(d);
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        int fd = atoi(ent->d_name);
        if (fd > 2 && fd != keep && fd != own) close(fd);
    }
    closedir(d);
}

/* In the child: never returns. An exec failure's errno goes up `report`. */
static void run_detached(char *const argv[], int log_fd, int report)
{
    setsid();
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0 && null_fd != STDIN_FILENO) {
        dup2(null_fd, STDIN_FILENO);
        close(null_fd);
    }
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    close_other_fds(report);
    execv(argv[0], argv);
    int e = errno;
    ssize_t ignored = write(report, &e, sizeof e);
    (void)ignored;
    _exit(127);
}

static int read_exec_errno(int fd)
{
    int e = 0;
    ssize_t n;
    do
        n = read(fd, &e, sizeof e);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof e ? e : 0;
}

pid_t gp_daemon_spawn(char *const argv[], const char *log_path, gp_error *err)
{
    int log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd < 0) {
        gp_error_set(err, log_path, 0, 0, "cannot open: %s", strerror(errno));
        return -1;
    }
    int report[2];
    if (pipe(report) != 0 || fcntl(report[1], F_SETFD, FD_CLOEXEC) != 0) {
        gp_error_set(err, NULL, 0, 0, "cannot run %s: %s", argv[0], strerror(errno));
        close(log_fd);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(report[0]);
        run_detached(argv, log_fd, report[1]);
    }
    int fork_errno = errno;
    close(report[1]);
    close(log_fd);
    int e = pid > 0 ? read_exec_errno(report[0]) : fork_errno;
    close(report[0]);
    if (pid > 0 && e) waitpid(pid, NULL, 0);
    if (pid < 0 || e) {
        gp_error_set(err, NULL, 0, 0, "cannot run %s: %s", argv[0], strerror(e));
        return -1;
    }
    return pid;
}

/* ---- the pid file -------------------------------------------------------- */

int gp_pidfile_write(const char *path, pid_t pid, gp_error *err)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        gp_error_set(err, path, 0, 0, "path too long");
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        gp_error_set(err, tmp, 0, 0, "cannot write: %s", strerror(errno));
        return -1;
    }
    char text[32];
    int n = snprintf(text, sizeof text, "%ld\n", (long)pid);
    int ok = write(fd, text, (size_t)n) == n && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        gp_error_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int gp_pidfile_read(const char *path, pid_t *pid, gp_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT) return 0;
    size_t len;
    char *text = gp_read_file(path, &len, err);
    if (!text) return -1;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    bool valid = errno == 0 && end != text && v > 0 && v <= INT_MAX &&
                 (*end == '\0' || strcmp(end, "\n") == 0);
    free(text);
    if (!valid) {
        gp_error_set(err, path, 0, 0, "does not hold a process id");
        return -2;
    }
    *pid = (pid_t)v;
    return 1;
}

/* ---- finding it again ---------------------------------------------------- */

/* The state letter of /proc/PID/stat, or 0 when there is no such process. */
static char proc_state(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    size_t len;
    char *text = gp_read_file(path, &len, NULL);
    if (!text) return 0;
    /* "PID (COMM) S ...": COMM may hold spaces and ')', so the last one ends it. */
    char *paren = strrchr(text, ')');
    char state = paren && paren[1] == ' ' ? paren[2] : 0;
    free(text);
    return state;
}

bool gp_process_alive(pid_t pid)
{
    if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM)) return false;
    char state = proc_state(pid);
    /* Without /proc, kill's answer is all there is. */
    return state != 'Z' && state != 'X';
}

static bool exe_named(pid_t pid, const char *program)
{
    char link[64], exe[PATH_MAX];
    snprintf(link, sizeof link, "/proc/%ld/exe", (long)pid);
    ssize_t n = readlink(link, exe, sizeof exe - 1);
    if (n <= 0) return false;
    exe[n] = '\0';
    /* A binary rebuilt while it runs shows as "PATH (deleted)". */
    static const char deleted[] = " (deleted)";
    size_t dl = sizeof deleted - 1;
    if ((size_t)n > dl && strcmp(exe + n - dl, deleted) == 0) exe[n - dl] = '\0';
    const char *base = strrchr(exe, '/');
    return strcmp(base ? base + 1 : exe, program) == 0;
}

static bool started_for(pid_t pid, const char *data_dir)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
    size_t len;
    char *args = gp_read_file(path, &len, NULL);
    if (!args) return false;
    bool found = false;
    /* Arguments are NUL-separated; "--data" then the directory. */
    for (size_t i = 0; i < len && !found;) {
        const char *arg = args + i;
        size_t n = strnlen(arg, len - i);
        if (strcmp(arg, "--data") == 0 && i + n + 1 < len)
            found = strcmp(arg + n + 1, data_dir) == 0;
        i += n + 1;
    }
    free(args);
    return found;
}

bool gp_daemon_is(pid_t pid, const char *program, const char *data_dir)
{
    return gp_process_alive(pid) && exe_named(pid, program) && started_for(pid, data_dir);
}

static bool wait_gone(pid_t pid, int timeout_ms)
{
    long long deadline = gp_now_ms() + timeout_ms;
    while (gp_process_alive(pid)) {
        if (gp_now_ms() >= deadline) return false;
        gp_sleep_ms(20);
    }
    return true;
}

int gp_daemon_stop(pid_t pid, int timeout_ms)
{
    if (kill(pid, SIGTERM) != 0 && errno == ESRCH) return 0;
    if (wait_gone(pid, timeout_ms)) return 0;
    kill(pid, SIGKILL);
    return wait_gone(pid, 1000) ? 1 : -1;
}

/* ---- the network side ---------------------------------------------------- */

static struct addrinfo *resolve(const char *host, unsigned port, int flags)
{
    char service[16];
    snprintf(service, sizeof service, "%u", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = flags};
    struct addrinfo *list = NULL;
    return getaddrinfo(host, service, &hints, &list) == 0 ? list : NULL;
}

static bool connect_within(const struct addrinfo *a, int timeout_ms)
{
    int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) return false;
    int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    bool ok = connect(fd, a->ai_addr, a->ai_addrlen) == 0;
    if (!ok && errno == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        ok = poll(&p, 1, timeout_ms) == 1 &&
             getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 && soerr == 0;
    }
    close(fd);
    return ok;
}

bool gp_tcp_answers(const char *host, unsigned port, int timeout_ms)
{
    struct addrinfo *list = resolve(host, port, 0);
    bool ok = false;
    for (struct addrinfo *a = list; a && !ok; a = a->ai_next)
        ok = connect_within(a, timeout_ms);
    if (list) freeaddrinfo(list);
    return ok;
}

bool gp_port_free(const char *address, unsigned port)
{
    struct addrinfo *list = resolve(address, port, AI_NUMERICHOST | AI_PASSIVE);
    if (!list) return false;
    int fd = socket(list->ai_family, list->ai_socktype, list->ai_protocol);
    int one = 1;
    bool ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
              bind(fd, list->ai_addr, list->ai_addrlen) == 0;
    if (fd >= 0) close(fd);
    freeaddrinfo(list);
    return ok;
}
