/* Deadlines on CLOCK_MONOTONIC, the clock the store's condition variables
 * wait on (as_store_wait): a watch's timeout and bookmarks, a read waiting
 * for a resourceVersion. */
#ifndef GPUOP_UTIL_DEADLINE_H
#define GPUOP_UTIL_DEADLINE_H

#include <stdbool.h>
#include <time.h>

static inline bool gp_time_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Now plus ms (not negative; callers bound it). */
static inline struct timespec gp_deadline_after_ms(long long ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    long long ns = t.tv_nsec + (ms % 1000) * 1000000LL;
    t.tv_sec += (time_t)(ms / 1000 + ns / 1000000000LL);
    t.tv_nsec = (long)(ns % 1000000000LL);
    return t;
}

static inline bool gp_deadline_past(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return !gp_time_before(&now, t);
}

#endif
