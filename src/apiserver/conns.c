/* The API server's connections and their monitor thread (conns_internal.h). */
#define _GNU_SOURCE /* POLLRDHUP: a peer that hung up, told from one that sent data */
#include "apiserver/conns_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The monitor looks at least this often; a deadline set in between is
 * honoured at the next look (a deadline is seconds, the look 1 s at most)
 * unless it comes sooner, when the monitor is woken for it. */
#define TICK_MS 1000
/* A lingering close: how long the client has to read an early answer. Go's
 * net/http waits as long (rstAvoidanceDelay) before closing a connection
 * whose request body it did not read. */
#define LINGER_MS 500

struct as_conn {
    as_conn *prev, *next; /* oldest first */
    unsigned long long id;
    int fd;
    long long deadline; /* monotonic ms; 0: none */
    as_conn_phase phase;
    bool authenticated;
    bool closing; /* shut down by us: past its deadline, or evicted */
    bool linger;
    as_watch *watch;
    bool watch_cancelled;
};

struct as_conns {
    as_conns_limits limits;
    pthread_mutex_t lock;
    pthread_t thread;
    bool stopping;
    int wake[2]; /* the monitor's pipe: a byte wakes it */
    as_conn *head, *tail;
    size_t count, unauthenticated;
    unsigned long long next_id;
    long long next_look; /* when the monitor looks next (ms) */
};

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void wake_monitor(as_conns *t)
{
    char b = 0;
    /* a full pipe already has the monitor's attention */
    while (write(t->wake[1], &b, 1) < 0 && errno == EINTR)
        ;
}

/* Ends the connection from under its thread, which then sees the end of
 * its socket and lets the connection go. Needs the lock. */
static void close_conn(as_conns *t, as_conn *c)
{
    if (c->closing) return;
    shutdown(c->fd, SHUT_RDWR);
    c->closing = true;
    if (!c->authenticated) t->unauthenticated--;
}

static void set_deadline(as_conns *t, as_conn *c, long long deadline)
{
    c->deadline = deadline;
    if (deadline && deadline < t->next_look) wake_monitor(t);
}

static as_conn *find(as_conns *t, unsigned long long id)
{
    for (as_conn *c = t->head; c; c = c->next)
        if (c->id == id) return c;
    return NULL;
}

/* Past-deadline connections closed; returns when the next deadline is. */
static long long expire(as_conns *t, long long now)
{
    long long next = now + TICK_MS;
    for (as_conn *c = t->head; c; c = c->next) {
        if (!c->deadline || c->closing) continue;
        if (c->deadline <= now)
            close_conn(t, c);
        else if (c->deadline < next)
            next = c->deadline;
    }
    return next;
}

typedef struct poll_set {
    struct pollfd *fds;
    unsigned long long *ids;
    size_t n, cap;
} poll_set;

/* The wake pipe, then the socket of every watch still streaming. Needs
 * the lock. */
static int collect(as_conns *t, poll_set *p)
{
    size_t want = 1;
    for (as_conn *c = t->head; c; c = c->next)
        want += c->watch && !c->watch_cancelled;
    if (want > p->cap) {
        struct pollfd *fds = realloc(p->fds, want * sizeof *fds);
        if (fds) p->fds = fds;
        unsigned long long *ids = realloc(p->ids, want * sizeof *ids);
        if (ids) p->ids = ids;
        if (!fds || !ids) return -1;
        p->cap = want;
    }
    p->fds[0] = (struct pollfd){.fd = t->wake[0], .events = POLLIN};
    p->n = 1;
    for (as_conn *c = t->head; c; c = c->next) {
        if (!c->watch || c->watch_cancelled) continue;
        /* only a hang-up: a watch's client sends nothing we would read */
        p->fds[p->n] = (struct pollfd){.fd = c->fd, .events = POLLRDHUP};
        p->ids[p->n++] = c->id;
    }
    return 0;
}

/* Watches whose clients hung up are cancelled. Needs the lock. A
 * connection gone meanwhile is not in the table any more: its socket
 * number may be another's by now, and is left alone. */
static void hang_ups(as_conns *t, const poll_set *p)
{
    for (size_t i = 1; i < p->n; i++) {
        if (!(p->fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR))) continue;
        as_conn *c = find(t, p->ids[i]);
        if (!c || !c->watch || c->watch_cancelled) continue;
        c->watch_cancelled = true;
        as_watch_cancel(c->watch);
    }
}

static void *monitor(void *arg)
{
    as_conns *t = arg;
    poll_set p = {0};
    pthread_mutex_lock(&t->lock);
    while (!t->stopping) {
        long long now = now_ms();
        t->next_look = expire(t, now);
        if (collect(t, &p) != 0) p.n = 1;
        int timeout = (int)(t->next_look - now);
        pthread_mutex_unlock(&t->lock);
        int ready = poll(p.fds, p.n, timeout < 0 ? 0 : timeout);
        pthread_mutex_lock(&t->lock);
        if (ready <= 0) continue;
        if (p.fds[0].revents & POLLIN) {
            char buf[64];
            while (read(t->wake[0], buf, sizeof buf) > 0)
                ;
        }
        hang_ups(t, &p);
    }
    pthread_mutex_unlock(&t->lock);
    free(p.fds);
    free(p.ids);
    return NULL;
}

as_conns *as_conns_start(const as_conns_limits *limits, gp_error *err)
{
    as_conns *t = calloc(1, sizeof *t);
    if (!t) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    t->limits = *limits;
    t->wake[0] = t->wake[1] = -1;
    if (pipe(t->wake) != 0 || fcntl(t->wake[0], F_SETFL, O_NONBLOCK) != 0 ||
        fcntl(t->wake[1], F_SETFL, O_NONBLOCK) != 0 || fcntl(t->wake[0], F_SETFD, FD_CLOEXEC) ||
        fcntl(t->wake[1], F_SETFD, FD_CLOEXEC)) {
        gp_error_set(err, NULL, 0, 0, "cannot make a pipe: %s", strerror(errno));
        if (t->wake[0] >= 0) close(t->wake[0]);
        if (t->wake[1] >= 0) close(t->wake[1]);
        free(t);
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    if (pthread_create(&t->thread, NULL, monitor, t) != 0) {
        gp_error_set(err, NULL, 0, 0, "cannot start the connection monitor");
        pthread_mutex_destroy(&t->lock);
        close(t->wake[0]);
        close(t->wake[1]);
        free(t);
        return NULL;
    }
    return t;
}

void as_conns_stop(as_conns *t)
{
    if (!t) return;
    pthread_mutex_lock(&t->lock);
    t->stopping = true;
    wake_monitor(t);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    pthread_mutex_destroy(&t->lock);
    close(t->wake[0]);
    close(t->wake[1]);
    free(t);
}

/* Makes room for one more connection without the token: the one of them
 * that has waited longest goes. Needs the lock. */
static void evict_unauthenticated(as_conns *t)
{
    if (t->unauthenticated < t->limits.max_unauthenticated) return;
    for (as_conn *c = t->head; c; c = c->next) {
        if (c->authenticated || c->closing) continue;
        close_conn(t, c);
        return;
    }
}

as_conn *as_conns_add(as_conns *t, int fd)
{
    as_conn *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->fd = fd;
    c->phase = AS_CONN_HEADERS;
    pthread_mutex_lock(&t->lock);
    evict_unauthenticated(t);
    c->id = ++t->next_id;
    c->prev = t->tail;
    if (t->tail)
        t->tail->next = c;
    else
        t->head = c;
    t->tail = c;
    t->count++;
    t->unauthenticated++;
    set_deadline(t, c, now_ms() + t->limits.header_ms);
    pthread_mutex_unlock(&t->lock);
    return c;
}

/* Stops sending, and reads what comes for a moment, so that closing does
 * not reset the connection under an answer the client has not read. */
static void linger(int fd)
{
    shutdown(fd, SHUT_WR);
    long long until = now_ms() + LINGER_MS;
    char buf[16384];
    for (long long now = now_ms(); now < until; now = now_ms()) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)(until - now)) <= 0) return;
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return;
    }
}

void as_conns_remove(as_conns *t, as_conn *c)
{
    if (!c) return;
    pthread_mutex_lock(&t->lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        t->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        t->tail = c->prev;
    t->count--;
    if (!c->authenticated && !c->closing) t->unauthenticated--;
    bool gently = c->linger && !c->closing;
    pthread_mutex_unlock(&t->lock);
    if (gently) linger(c->fd);
    free(c);
}

void as_conns_linger(as_conns *t, as_conn *c)
{
    pthread_mutex_lock(&t->lock);
    c->linger = true;
    pthread_mutex_unlock(&t->lock);
}

void as_conns_phase(as_conns *t, as_conn *c, as_conn_phase phase)
{
    pthread_mutex_lock(&t->lock);
    long long now = now_ms();
    switch (phase) {
    case AS_CONN_HEADERS:
        /* a new connection's first request line: its deadline runs from
         * the connection (the TLS handshake counts) */
        if (c->phase != AS_CONN_HEADERS) set_deadline(t, c, now + t->limits.header_ms);
        break;
    case AS_CONN_BODY:
        set_deadline(t, c, now + t->limits.body_ms);
        break;
    case AS_CONN_ANSWERING:
        c->deadline = 0;
        break;
    case AS_CONN_IDLE:
        set_deadline(t, c, now + t->limits.idle_ms);
        break;
    }
    c->phase = phase;
    pthread_mutex_unlock(&t->lock);
}

void as_conns_authenticated(as_conns *t, as_conn *c)
{
    pthread_mutex_lock(&t->lock);
    if (!c->authenticated && !c->closing) t->unauthenticated--;
    c->authenticated = true;
    pthread_mutex_unlock(&t->lock);
}

void as_conns_watch(as_conns *t, as_conn *c, as_watch *w)
{
    pthread_mutex_lock(&t->lock);
    c->watch = w;
    c->watch_cancelled = false;
    wake_monitor(t); /* to poll its socket */
    pthread_mutex_unlock(&t->lock);
}

void as_conns_unwatch(as_conns *t, const as_watch *w)
{
    pthread_mutex_lock(&t->lock);
    for (as_conn *c = t->head; c; c = c->next)
        if (c->watch == w) c->watch = NULL;
    pthread_mutex_unlock(&t->lock);
}

size_t as_conns_count(as_conns *t, size_t *unauthenticated)
{
    pthread_mutex_lock(&t->lock);
    size_t n = t->count;
    if (unauthenticated) *unauthenticated = t->unauthenticated;
    pthread_mutex_unlock(&t->lock);
    return n;
}
