/* The simulated nodes' containerd runtime (host.h): one thread polls every
 * node's socket and connections, and wakes when a supervisor's restart is
 * due. */
#define _GNU_SOURCE /* accept4 and pipe2: sockets born non-blocking and close-on-exec */
#include "agents/host.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agents/grpc_internal.h"
#include "util/hash.h"

/* Clients of one node at once (the kubelet, crictl, ctr, a field tool). */
#define MAX_CONNS 32

typedef struct node {
    char name[64];
    char *dir;
    char socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char uuid[40];
    ag_daemon d;
    int listen_fd;
    ag_grpc_conn *conns[MAX_CONNS];
    size_t nconns;
    unsigned gen; /* bumped whenever the listener and connections go away */
} node;

struct ag_host {
    pthread_mutex_t lock;
    node **nodes;
    size_t n, cap;
    int wake[2];
    pthread_t thread;
    bool running, stopping;
    ag_host_log_fn log;
    void *log_ctx;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void wake(ag_host *h)
{
    char c = 1;
    ssize_t n = write(h->wake[1], &c, 1);
    (void)n; /* a full pipe already wakes the thread */
}

/* ---- journal ---- */

static void log_lines(ag_host *h, const node *nd, gp_buf *lines)
{
    if (h->log && lines->len && !gp_buf_failed(lines)) h->log(h->log_ctx, nd->name, lines->data);
    gp_buf_free(lines);
}

static void log_started(ag_host *h, const node *nd, bool restarted)
{
    gp_buf lines = {0};
    ag_journal_started(&nd->d, now_s(), restarted, &lines);
    log_lines(h, nd, &lines);
}

static void log_exited(ag_host *h, const node *nd)
{
    gp_buf lines = {0};
    ag_journal_exited(&nd->d, &lines);
    log_lines(h, nd, &lines);
}

static void log_text(ag_host *h, const node *nd, const char *text)
{
    gp_buf lines = {0};
    gp_buf_addf(&lines, "%s\n", text);
    log_lines(h, nd, &lines);
}

/* ---- the socket follows the daemon ---- */

/* The serving thread may be in poll() on these descriptors, which keeps
 * the sockets alive after a close until poll returns: a connect in that
 * window would still be queued. shutdown() first, so that from now on a
 * connect is refused and every peer sees the end, as when the process dies. */
static void close_all(node *nd)
{
    for (size_t i = 0; i < nd->nconns; i++) {
        shutdown(ag_grpc_conn_fd(nd->conns[i]), SHUT_RDWR);
        ag_grpc_conn_free(nd->conns[i]);
    }
    nd->nconns = 0;
    if (nd->listen_fd >= 0) {
        shutdown(nd->listen_fd, SHUT_RDWR);
        close(nd->listen_fd);
    }
    nd->listen_fd = -1;
    nd->gen++;
}

/* Removes the socket file at the path if it is one (never another file). */
static void remove_socket(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISSOCK(sb.st_mode)) unlink(path);
}

static int bind_socket(const char *path, char *why, size_t cap)
{
    struct stat sb;
    if (lstat(path, &sb) == 0 && !S_ISSOCK(sb.st_mode)) {
        snprintf(why, cap, "%s exists and is not a socket", path);
        return -1;
    }
    remove_socket(path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, cap, "socket: %s", strerror(errno));
        return -1;
    }
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 64) != 0) {
        snprintf(why, cap, "bind: %s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Makes the socket agree with the daemon: served while it runs, closed
 * (and removed after a clean shutdown) when it does not. */
static void sync_socket(ag_host *h, node *nd)
{
    if (!nd->socket[0]) return;
    bool running = nd->d.phase == AG_DAEMON_RUNNING;
    if (!running && nd->listen_fd >= 0) {
        close_all(nd);
        if (nd->d.exit_clean) remove_socket(nd->socket);
    } else if (running && nd->listen_fd < 0) {
        char why[300];
        nd->listen_fd = bind_socket(nd->socket, why, sizeof why);
        if (nd->listen_fd < 0) {
            char line[512];
            snprintf(line, sizeof line,
                     "containerd: failed to get listener for main endpoint: listen unix %s: %s",
                     nd->socket, why);
            log_text(h, nd, line);
        }
    }
}

/* ---- serving ---- */

static void serve_call(void *ctx, const char *path, const uint8_t *req, size_t len,
                       ag_grpc_answer *out)
{
    node *nd = ctx;
    ag_service_node sn = {&nd->d, nd->uuid};
    ag_grpc_serve(&sn, path, req, len, out);
}

static void accept_all(node *nd)
{
    for (;;) {
        int fd = accept4(nd->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return; /* EAGAIN, or the peer gave up */
        if (nd->nconns == MAX_CONNS) {
            close(fd);
            continue;
        }
        ag_grpc_conn *c = ag_grpc_conn_new(fd, serve_call, nd);
        if (c) {
            nd->conns[nd->nconns++] = c;
            ag_grpc_conn_write(c); /* the server's SETTINGS */
        }
    }
}

static void drop_closed(node *nd)
{
    size_t k = 0;
    for (size_t i = 0; i < nd->nconns; i++)
        if (nd->conns[i]) nd->conns[k++] = nd->conns[i];
    nd->nconns = k;
}

typedef struct watch {
    node *nd;
    unsigned gen;
    int conn; /* index into nd->conns, -1 for the listener */
} watch;

/* Restarts that are due; the soonest one still to come, or 0. */
static double run_timers(ag_host *h, double now)
{
    double next = 0;
    for (size_t i = 0; i < h->n; i++) {
        node *nd = h->nodes[i];
        double due = ag_daemon_next_event(&nd->d);
        if (due && due <= now) {
            gp_error err = {0};
            if (ag_daemon_tick(&nd->d, nd->dir, now, &err) < 0)
                log_text(h, nd, err.text);
            else
                log_started(h, nd, true);
            sync_socket(h, nd);
            due = ag_daemon_next_event(&nd->d);
        }
        if (due && (!next || due < next)) next = due;
    }
    return next;
}

static void *loop(void *arg)
{
    ag_host *h = arg;
    struct pollfd *fds = NULL;
    watch *watches = NULL;
    size_t cap = 0;
    pthread_mutex_lock(&h->lock);
    while (!h->stopping) {
        double now = now_s();
        double next = run_timers(h, now);
        size_t want = 1;
        for (size_t i = 0; i < h->n; i++)
            want += 1 + h->nodes[i]->nconns;
        if (want > cap) {
            struct pollfd *f = realloc(fds, want * sizeof *f);
            watch *w = f ? realloc(watches, want * sizeof *w) : NULL;
            if (f) fds = f;
            if (w) watches = w;
            if (!f || !w) break;
            cap = want;
        }
        size_t n = 0;
        fds[n++] = (struct pollfd){.fd = h->wake[0], .events = POLLIN};
        for (size_t i = 0; i < h->n; i++) {
            node *nd = h->nodes[i];
            if (nd->listen_fd < 0) continue;
            watches[n] = (watch){nd, nd->gen, -1};
            fds[n++] = (struct pollfd){.fd = nd->listen_fd, .events = POLLIN};
            for (size_t k = 0; k < nd->nconns; k++) {
                short ev = POLLIN | (ag_grpc_conn_wants_write(nd->conns[k]) ? POLLOUT : 0);
                watches[n] = (watch){nd, nd->gen, (int)k};
                fds[n++] = (struct pollfd){.fd = ag_grpc_conn_fd(nd->conns[k]), .events = ev};
            }
        }
        int timeout = -1;
        if (next) {
            double ms = (next - now) * 1000.0 + 1;
            timeout = ms < 0 ? 0 : ms > 60000 ? 60000 : (int)ms;
        }
        pthread_mutex_unlock(&h->lock);
        int ready = poll(fds, n, timeout);
        pthread_mutex_lock(&h->lock);
        if (ready <= 0) continue;
        if (fds[0].revents) {
            char buf[64];
            while (read(h->wake[0], buf, sizeof buf) > 0) {
            }
        }
        for (size_t i = 1; i < n; i++) {
            watch *w = &watches[i];
            /* The node's socket went away meanwhile (a signal, a stop). */
            if (!fds[i].revents || w->gen != w->nd->gen) continue;
            if (w->conn < 0) {
                accept_all(w->nd);
                continue;
            }
            ag_grpc_conn **c = &w->nd->conns[w->conn];
            if (!*c) continue;
            int rc = 0;
            if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) rc = ag_grpc_conn_read(*c);
            if (rc == 0 && (fds[i].revents & POLLOUT)) rc = ag_grpc_conn_write(*c);
            if (rc != 0 || ag_grpc_conn_finished(*c)) {
                ag_grpc_conn_free(*c);
                *c = NULL;
            }
        }
        for (size_t i = 0; i < h->n; i++)
            drop_closed(h->nodes[i]);
    }
    pthread_mutex_unlock(&h->lock);
    free(fds);
    free(watches);
    return NULL;
}

/* ---- the interface ---- */

ag_host *ag_host_new(ag_host_log_fn log, void *log_ctx, gp_error *err)
{
    ag_host *h = calloc(1, sizeof *h);
    if (!h) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    if (pipe2(h->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        gp_error_set(err, NULL, 0, 0, "cannot make a pipe: %s", strerror(errno));
        free(h);
        return NULL;
    }
    pthread_mutex_init(&h->lock, NULL);
    h->log = log;
    h->log_ctx = log_ctx;
    return h;
}

static node *find(ag_host *h, const char *name)
{
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->nodes[i]->name, name) == 0) return h->nodes[i];
    return NULL;
}

static bool name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= sizeof(((node *)0)->name)) return false;
    for (const char *p = name; *p; p++)
        if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') && !(*p >= '0' && *p <= '9') &&
            *p != '.' && *p != '_' && *p != '-')
            return false;
    return true;
}

/* A UUID that stays the node's across restarts, as containerd keeps its
 * own in its root (io.containerd.grpc.v1.introspection/uuid). */
static void make_uuid(node *nd)
{
    uint64_t a = gp_hash_str(gp_hash_str(GP_HASH_SEED, nd->name), nd->dir);
    uint64_t b = gp_hash_str(a ^ 0x9e3779b97f4a7c15ULL, nd->name);
    snprintf(nd->uuid, sizeof nd->uuid, "%08x-%04x-4%03x-%04x-%012llx", (unsigned)(a >> 32),
             (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xfff,
             (unsigned)(0x8000 | ((b >> 48) & 0x3fff)),
             (unsigned long long)(b & 0xffffffffffffULL));
}

static int grow(ag_host *h)
{
    if (h->n < h->cap) return 0;
    size_t cap = h->cap ? h->cap * 2 : 8;
    node **nodes = realloc(h->nodes, cap * sizeof *nodes);
    if (!nodes) return -1;
    h->nodes = nodes;
    h->cap = cap;
    return 0;
}

int ag_host_add(ag_host *h, const char *name, const char *dir, const char *socket, gp_error *err)
{
    if (!name_ok(name)) {
        gp_error_set(err, NULL, 0, 0, "node name '%s' is not [A-Za-z0-9._-]+ (at most 63)", name);
        return -1;
    }
    char path[sizeof(((node *)0)->socket) + 1];
    int len = socket ? snprintf(path, sizeof path, "%s", socket)
                     : snprintf(path, sizeof path, "%s/%s", dir, AG_NODE_SOCKET);
    if (len < 0 || (size_t)len >= sizeof(((node *)0)->socket)) {
        gp_error_set(err, NULL, 0, 0,
                     "node %s: the socket path is longer than a unix socket's %zu bytes", name,
                     sizeof(((node *)0)->socket) - 1);
        return -1;
    }
    node *nd = calloc(1, sizeof *nd);
    char *dir_copy = strdup(dir);
    if (!nd || !dir_copy) {
        free(nd);
        free(dir_copy);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    snprintf(nd->name, sizeof nd->name, "%s", name);
    memcpy(nd->socket, path, (size_t)len + 1);
    nd->dir = dir_copy;
    nd->listen_fd = -1;
    ag_daemon_init(&nd->d);
    make_uuid(nd);
    pthread_mutex_lock(&h->lock);
    int rc = -1;
    if (find(h, name)) {
        gp_error_set(err, NULL, 0, 0, "node %s is already there", name);
    } else if (grow(h) != 0) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
    } else if (ag_daemon_start(&nd->d, nd->dir, now_s(), err) >= 0) {
        h->nodes[h->n++] = nd;
        log_started(h, nd, false);
        sync_socket(h, nd);
        wake(h);
        rc = 0;
    }
    pthread_mutex_unlock(&h->lock);
    if (rc != 0) {
        ag_daemon_free(&nd->d);
        free(nd->dir);
        free(nd);
    }
    return rc;
}

int ag_host_run(ag_host *h, gp_error *err)
{
    pthread_mutex_lock(&h->lock);
    int rc = h->running ? 0 : pthread_create(&h->thread, NULL, loop, h);
    if (rc == 0) h->running = true;
    pthread_mutex_unlock(&h->lock);
    if (rc != 0) gp_error_set(err, NULL, 0, 0, "cannot start a thread: %s", strerror(rc));
    return rc == 0 ? 0 : -1;
}

void ag_host_free(ag_host *h)
{
    if (!h) return;
    pthread_mutex_lock(&h->lock);
    h->stopping = true;
    bool running = h->running;
    wake(h);
    pthread_mutex_unlock(&h->lock);
    if (running) pthread_join(h->thread, NULL);
    double now = now_s();
    for (size_t i = 0; i < h->n; i++) {
        node *nd = h->nodes[i];
        ag_daemon_stop(&nd->d, now);
        sync_socket(h, nd);
        ag_daemon_free(&nd->d);
        free(nd->dir);
        free(nd);
    }
    free(h->nodes);
    close(h->wake[0]);
    close(h->wake[1]);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

typedef enum action { ACT_SIGNAL, ACT_RESTART, ACT_START, ACT_STOP } action;

static int act(ag_host *h, const char *name, action what, int sig, gp_error *err)
{
    pthread_mutex_lock(&h->lock);
    node *nd = find(h, name);
    int rc = 0;
    if (!nd) {
        gp_error_set(err, NULL, 0, 0, "no simulated node named %s", name);
        rc = -1;
    } else {
        bool was_running = nd->d.phase == AG_DAEMON_RUNNING;
        double now = now_s();
        switch (what) {
        case ACT_SIGNAL:
            if (!was_running)
                rc = 1;
            else if (ag_daemon_signal(&nd->d, sig, now))
                log_exited(h, nd);
            break;
        case ACT_STOP:
            ag_daemon_stop(&nd->d, now);
            if (was_running) log_exited(h, nd);
            break;
        case ACT_RESTART:
        case ACT_START:
            if (what == ACT_START && was_running) break;
            /* systemctl restart stops the old process first: its socket goes. */
            if (was_running) {
                ag_daemon_stop(&nd->d, now);
                log_exited(h, nd);
                sync_socket(h, nd);
            }
            rc = ag_daemon_start(&nd->d, nd->dir, now, err) < 0 ? -1 : 0;
            if (rc == 0) log_started(h, nd, false);
            break;
        }
        sync_socket(h, nd);
        wake(h);
    }
    pthread_mutex_unlock(&h->lock);
    return rc;
}

int ag_host_signal(ag_host *h, const char *name, int sig, gp_error *err)
{
    return act(h, name, ACT_SIGNAL, sig, err);
}

int ag_host_restart(ag_host *h, const char *name, gp_error *err)
{
    return act(h, name, ACT_RESTART, 0, err);
}

int ag_host_start(ag_host *h, const char *name, gp_error *err)
{
    return act(h, name, ACT_START, 0, err);
}

int ag_host_stop(ag_host *h, const char *name, gp_error *err)
{
    return act(h, name, ACT_STOP, 0, err);
}

void ag_host_signal_all(ag_host *h, int sig)
{
    pthread_mutex_lock(&h->lock);
    double now = now_s();
    for (size_t i = 0; i < h->n; i++) {
        node *nd = h->nodes[i];
        if (ag_daemon_signal(&nd->d, sig, now)) log_exited(h, nd);
        sync_socket(h, nd);
    }
    wake(h);
    pthread_mutex_unlock(&h->lock);
}

int ag_host_with_daemon(ag_host *h, const char *name,
                        void (*fn)(const ag_daemon *d, const char *dir, void *ctx), void *ctx,
                        gp_error *err)
{
    pthread_mutex_lock(&h->lock);
    node *nd = find(h, name);
    if (nd) fn(&nd->d, nd->dir, ctx);
    pthread_mutex_unlock(&h->lock);
    if (!nd) gp_error_set(err, NULL, 0, 0, "no simulated node named %s", name);
    return nd ? 0 : -1;
}
