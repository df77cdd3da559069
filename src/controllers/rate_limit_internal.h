/* The rate limiters of client-go that keep a controller from flooding the
 * API server, on a clock the caller hands in (milliseconds):
 *
 *   - a token bucket (util/flowcontrol NewTokenBucketRateLimiter, over
 *     golang.org/x/time/rate): `burst` tokens to begin with, refilled at
 *     `qps` a second up to `burst`. The event correlator's spam filter takes
 *     one per event about an object (25, one every 5 minutes), the node
 *     lifecycle controller one per node it taints NoExecute (1, 0.1 a second);
 *   - the workqueue's default controller rate limiter
 *     (util/workqueue default_rate_limiters.go DefaultControllerRateLimiter):
 *     the larger of a per-item exponential backoff, 5 ms doubling on every
 *     failure up to 1000 s, and an overall bucket of 10 a second with a
 *     burst of 100. A controller asks it how long to wait before it retries
 *     an item whose sync failed (AddRateLimited), and forgets the item once
 *     a sync succeeds (Forget).
 *
 * Not thread-safe: the controllers' thread owns them. */
#ifndef GPUOP_CONTROLLERS_RATE_LIMIT_INTERNAL_H
#define GPUOP_CONTROLLERS_RATE_LIMIT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ctl_token_bucket {
    double qps, burst, tokens;
    int64_t last_ms;
} ctl_token_bucket;

/* A full bucket at now_ms. A qps of 0 or less never gives a token
 * (flowcontrol's NewFakeNeverRateLimiter, what a zone in disruption gets). */
void ctl_tb_init(ctl_token_bucket *b, double qps, int burst, int64_t now_ms);
/* TryAccept: takes a token when there is one. */
bool ctl_tb_try(ctl_token_bucket *b, int64_t now_ms);
/* Reserve().Delay(): takes a token, owing it when there is none, and returns
 * how long until it is there (0 when it was). */
int64_t ctl_tb_reserve(ctl_token_bucket *b, int64_t now_ms);
/* Whole tokens there are at now_ms (nothing taken). */
double ctl_tb_tokens(const ctl_token_bucket *b, int64_t now_ms);

/* DefaultControllerRateLimiter's numbers. */
#define CTL_BACKOFF_BASE_MS 5
#define CTL_BACKOFF_MAX_MS  (1000 * 1000)
#define CTL_BACKOFF_QPS     10.0
#define CTL_BACKOFF_BURST   100

typedef struct ctl_backoff ctl_backoff;

ctl_backoff *ctl_backoff_new(int64_t now_ms);
void ctl_backoff_free(ctl_backoff *b);
/* When(item): counts a failure of `item` and returns the delay before its
 * retry in milliseconds: 5 ms after the first failure, then 10, 20, ...,
 * never more than 1000 s, and at least what the overall bucket asks. */
int64_t ctl_backoff_when(ctl_backoff *b, const char *item, int64_t now_ms);
/* Forget(item): its failures start over. */
void ctl_backoff_forget(ctl_backoff *b, const char *item);
/* NumRequeues(item): the failures counted since it was last forgotten. */
int ctl_backoff_requeues(ctl_backoff *b, const char *item);

#endif
