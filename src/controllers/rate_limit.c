/* golang.org/x/time/rate's arithmetic (tokens accrue continuously, capped
 * at the burst; a reservation may take the count below zero) and
 * client-go's ItemExponentialFailureRateLimiter and MaxOfRateLimiter. */
#include "controllers/rate_limit_internal.h"

#include <stdlib.h>

#include "controllers/lru_internal.h"

static void advance(const ctl_token_bucket *b, int64_t now_ms, double *tokens)
{
    int64_t elapsed = now_ms > b->last_ms ? now_ms - b->last_ms : 0;
    double t = b->tokens + (double)elapsed * b->qps / 1000.0;
    *tokens = t > b->burst ? b->burst : t;
}

void ctl_tb_init(ctl_token_bucket *b, double qps, int burst, int64_t now_ms)
{
    b->qps = qps;
    b->burst = burst;
    b->tokens = burst;
    b->last_ms = now_ms;
}

double ctl_tb_tokens(const ctl_token_bucket *b, int64_t now_ms)
{
    if (b->qps <= 0) return 0;
    double t;
    advance(b, now_ms, &t);
    return t;
}

bool ctl_tb_try(ctl_token_bucket *b, int64_t now_ms)
{
    if (b->qps <= 0) return false;
    double t;
    advance(b, now_ms, &t);
    if (now_ms > b->last_ms) b->last_ms = now_ms;
    b->tokens = t;
    if (t < 1) return false;
    b->tokens = t - 1;
    return true;
}

int64_t ctl_tb_reserve(ctl_token_bucket *b, int64_t now_ms)
{
    if (b->qps <= 0) return CTL_BACKOFF_MAX_MS;
    double t;
    advance(b, now_ms, &t);
    if (now_ms > b->last_ms) b->last_ms = now_ms;
    b->tokens = t - 1;
    if (b->tokens >= 0) return 0;
    /* rate's durationFromTokens: what is owed, at the refill rate */
    double wait_ms = -b->tokens * 1000.0 / b->qps;
    int64_t ms = (int64_t)wait_ms;
    return (double)ms < wait_ms ? ms + 1 : ms;
}

/* ---- the workqueue's default controller rate limiter ---- */

struct ctl_backoff {
    ctl_lru *failures; /* item -> int (malloc'd) */
    ctl_token_bucket overall;
};

ctl_backoff *ctl_backoff_new(int64_t now_ms)
{
    ctl_backoff *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->failures = ctl_lru_new(0, free);
    if (!b->failures) {
        free(b);
        return NULL;
    }
    ctl_tb_init(&b->overall, CTL_BACKOFF_QPS, CTL_BACKOFF_BURST, now_ms);
    return b;
}

void ctl_backoff_free(ctl_backoff *b)
{
    if (!b) return;
    ctl_lru_free(b->failures);
    free(b);
}

/* ItemExponentialFailureRateLimiter.When: base * 2^failures-so-far. */
static int64_t exponential(ctl_backoff *b, const char *item)
{
    int *n = ctl_lru_get(b->failures, item);
    int exp = n ? *n : 0;
    if (!n && (n = malloc(sizeof *n)) != NULL && ctl_lru_put(b->failures, item, n) != 0) n = NULL;
    if (n) *n = exp + 1;
    if (exp >= 30) return CTL_BACKOFF_MAX_MS; /* 5 ms * 2^30 is past the maximum already */
    int64_t delay = (int64_t)CTL_BACKOFF_BASE_MS << exp;
    return delay > CTL_BACKOFF_MAX_MS ? CTL_BACKOFF_MAX_MS : delay;
}

int64_t ctl_backoff_when(ctl_backoff *b, const char *item, int64_t now_ms)
{
    int64_t item_delay = exponential(b, item);
    int64_t bucket_delay = ctl_tb_reserve(&b->overall, now_ms);
    return item_delay > bucket_delay ? item_delay : bucket_delay;
}

void ctl_backoff_forget(ctl_backoff *b, const char *item)
{
    ctl_lru_remove(b->failures, item);
}

int ctl_backoff_requeues(ctl_backoff *b, const char *item)
{
    const int *n = ctl_lru_peek(b->failures, item);
    return n ? *n : 0;
}
