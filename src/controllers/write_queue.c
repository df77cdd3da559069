#include "controllers/write_queue_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/loopback.h"
#include "util/hash.h"
#include "util/json_dump.h"

struct ctl_wq_write {
    char *method, *path, *query, *type;
    char *body;         /* serialized by the thread that made the write */
    ctl_wq_write *then; /* sent only when this one succeeded */
    ctl_wq_write_done_fn *done;
    void *done_ud;
    char *tag;
    ctl_wq_write *link; /* the worker's FIFO */
};

typedef struct worker {
    ctl_wq *q;
    pthread_t thread;
    ctl_wq_write *head, *tail;
    size_t pending; /* queued or being sent */
} worker;

struct ctl_wq {
    as_api *api;
    pthread_mutex_t lock;
    pthread_cond_t work, idle;
    worker *workers;
    size_t count, started;
    size_t failed;
    bool stopping;
};

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

ctl_wq_write *ctl_wq_write_new(const char *method, const char *path, const char *query,
                               const char *content_type, json_t *body)
{
    ctl_wq_write *w = calloc(1, sizeof *w);
    if (!w) {
        json_decref(body);
        return NULL;
    }
    w->method = strdup(method);
    w->path = strdup(path);
    w->query = dup_or_null(query);
    w->type = dup_or_null(content_type);
    w->body = body ? gp_json_dump(body, NULL) : NULL;
    bool lost = body && !w->body;
    json_decref(body);
    if (!w->method || !w->path || (query && !w->query) || (content_type && !w->type) || lost) {
        ctl_wq_write_free(w);
        return NULL;
    }
    return w;
}

void ctl_wq_write_then(ctl_wq_write *w, ctl_wq_write *next)
{
    if (!w) {
        ctl_wq_write_free(next);
        return;
    }
    ctl_wq_write **at = &w->then;
    while (*at)
        at = &(*at)->then;
    *at = next;
}

void ctl_wq_write_free(ctl_wq_write *w)
{
    while (w) {
        ctl_wq_write *next = w->then;
        free(w->method);
        free(w->path);
        free(w->query);
        free(w->type);
        free(w->body);
        free(w->tag);
        free(w);
        w = next;
    }
}

void ctl_wq_write_notify(ctl_wq_write *w, ctl_wq_write_done_fn *done, void *ud, const char *tag)
{
    if (!w) return;
    free(w->tag);
    w->tag = tag ? strdup(tag) : NULL;
    w->done = done;
    w->done_ud = ud;
}

/* Writes a worker sends before it waits for their commits: one wait
 * (as_store_sync) a batch instead of one a write lets the store commit
 * them together (store.h, group commit). */
#define BATCH 64

static size_t chain_length(const ctl_wq_write *w)
{
    size_t n = 0;
    for (; w; w = w->then)
        n++;
    return n;
}

/* Sends w and its follow-ups while they succeed; how many were not done
 * (the one that failed and those after it). With newest, the writes are
 * answered before their commits, and *newest is raised to the last rv
 * written; without, each is committed before the next is sent. A
 * follow-up needs no wait: if the write before it is undone, so is it. */
static size_t send_chain(as_api *api, ctl_wq_write *w, uint64_t *newest)
{
    for (ctl_wq_write *at = w; at; at = at->then) {
        size_t len = at->body ? strlen(at->body) : 0;
        uint64_t rv = 0;
        unsigned status = newest ? as_loopback_send_deferred(api, at->method, at->path, at->query,
                                                             at->type, at->body, len, &rv)
                                 : as_loopback_send_text(api, at->method, at->path, at->query,
                                                         at->type, at->body, len);
        if (newest && rv > *newest) *newest = rv;
        if (status < 200 || status >= 300) return chain_length(at);
    }
    return 0;
}

static void report(ctl_wq_write *w, size_t failed)
{
    if (w->done) w->done(w->done_ud, w->tag, failed == 0);
}

/* Sends a batch taken off a worker's FIFO, waits once for their commits and
 * tells their callers; how many writes were not done. If the commit
 * failed, none of the batch is counted on (some may have been committed
 * with other writers' groups: the controllers compute them again). */
static size_t send_batch(as_api *api, ctl_wq_write **batch, size_t n)
{
    size_t failed[BATCH], total = 0;
    uint64_t newest = 0;
    for (size_t i = 0; i < n; i++)
        failed[i] = send_chain(api, batch[i], &newest);
    gp_error err = {0};
    bool lost = newest && as_store_sync(api->store, newest, &err) != 0;
    for (size_t i = 0; i < n; i++) {
        if (lost) failed[i] = chain_length(batch[i]);
        report(batch[i], failed[i]);
        total += failed[i];
        ctl_wq_write_free(batch[i]);
    }
    return total;
}

static void *work(void *arg)
{
    worker *me = arg;
    ctl_wq *q = me->q;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (!me->head && !q->stopping)
            pthread_cond_wait(&q->work, &q->lock);
        if (!me->head) break; /* stopping, and nothing left */
        ctl_wq_write *batch[BATCH];
        size_t n = 0;
        for (; me->head && n < BATCH; n++) {
            batch[n] = me->head;
            me->head = me->head->link;
        }
        if (!me->head) me->tail = NULL;
        pthread_mutex_unlock(&q->lock);
        size_t failed = send_batch(q->api, batch, n);
        pthread_mutex_lock(&q->lock);
        q->failed += failed;
        me->pending -= n;
        if (me->pending == 0) pthread_cond_broadcast(&q->idle);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

ctl_wq *ctl_wq_new(as_api *api, size_t workers)
{
    ctl_wq *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->api = api;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->idle, NULL);
    q->workers = calloc(workers ? workers : 1, sizeof *q->workers);
    if (!q->workers) {
        ctl_wq_free(q);
        return NULL;
    }
    q->count = workers;
    for (; q->started < workers; q->started++) {
        worker *w = &q->workers[q->started];
        w->q = q;
        if (pthread_create(&w->thread, NULL, work, w) != 0) break;
    }
    q->count = q->started; /* fewer workers than asked is still correct */
    return q;
}

/* The object a request is about: the path without a subresource, so that
 * /pods/x, /pods/x/status and /pods/x/binding go to the same worker. */
static size_t route(const ctl_wq *q, const char *path)
{
    static const char *const subresources[] = {"/status", "/binding", "/finalize", "/scale"};
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof subresources / sizeof subresources[0]; i++) {
        size_t k = strlen(subresources[i]);
        if (n > k && strcmp(path + n - k, subresources[i]) == 0) {
            n -= k;
            break;
        }
    }
    return (size_t)(gp_hash_bytes(GP_HASH_SEED, path, n) % q->count);
}

void ctl_wq_push(ctl_wq *q, ctl_wq_write *w)
{
    if (!w) return;
    if (q->count == 0) {
        size_t failed = send_chain(q->api, w, NULL);
        report(w, failed);
        ctl_wq_write_free(w);
        pthread_mutex_lock(&q->lock);
        q->failed += failed;
        pthread_mutex_unlock(&q->lock);
        return;
    }
    worker *to = &q->workers[route(q, w->path)];
    pthread_mutex_lock(&q->lock);
    w->link = NULL;
    if (to->tail)
        to->tail->link = w;
    else
        to->head = w;
    to->tail = w;
    to->pending++;
    pthread_cond_broadcast(&q->work);
    pthread_mutex_unlock(&q->lock);
}

static bool all_idle(const ctl_wq *q)
{
    for (size_t i = 0; i < q->count; i++)
        if (q->workers[i].pending) return false;
    return true;
}

size_t ctl_wq_drain(ctl_wq *q)
{
    pthread_mutex_lock(&q->lock);
    while (!all_idle(q))
        pthread_cond_wait(&q->idle, &q->lock);
    size_t failed = q->failed;
    q->failed = 0;
    pthread_mutex_unlock(&q->lock);
    return failed;
}

void ctl_wq_free(ctl_wq *q)
{
    if (!q) return;
    if (q->workers) {
        ctl_wq_drain(q);
        pthread_mutex_lock(&q->lock);
        q->stopping = true;
        pthread_cond_broadcast(&q->work);
        pthread_mutex_unlock(&q->lock);
        for (size_t i = 0; i < q->started; i++)
            pthread_join(q->workers[i].thread, NULL);
    }
    free(q->workers);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->idle);
    pthread_mutex_destroy(&q->lock);
    free(q);
}
