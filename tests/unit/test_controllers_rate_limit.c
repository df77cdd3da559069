/* The controllers' rate limiters: the token bucket of client-go's
 * flowcontrol (golang.org/x/time/rate) and the workqueue's
 * DefaultControllerRateLimiter (exponential 5 ms .. 1000 s, and an overall
 * bucket of 10 a second with a burst of 100). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controllers/rate_limit_internal.h"

static void token_bucket_bursts_then_refills(void **state)
{
    (void)state;
    ctl_token_bucket b;
    ctl_tb_init(&b, 1.0 / 300.0, 25, 0);
    for (int i = 0; i < 25; i++)
        assert_true(ctl_tb_try(&b, 1000));
    assert_false(ctl_tb_try(&b, 1000));
    assert_false(ctl_tb_try(&b, 299 * 1000));
    /* one token five minutes after the burst */
    assert_true(ctl_tb_try(&b, 301 * 1000));
    assert_false(ctl_tb_try(&b, 302 * 1000));
    /* never more than the burst however long it waits */
    for (int i = 0; i < 25; i++)
        assert_true(ctl_tb_try(&b, 1000000 * 1000LL));
    assert_false(ctl_tb_try(&b, 1000000 * 1000LL));
    /* a rate of 0 never gives a token */
    ctl_tb_init(&b, 0, 1, 0);
    assert_false(ctl_tb_try(&b, 0));
    assert_false(ctl_tb_try(&b, 1000000));
}

static void token_bucket_reservations_are_owed(void **state)
{
    (void)state;
    ctl_token_bucket b;
    ctl_tb_init(&b, 10, 2, 0);
    assert_int_equal(ctl_tb_reserve(&b, 0), 0);
    assert_int_equal(ctl_tb_reserve(&b, 0), 0);
    assert_int_equal(ctl_tb_reserve(&b, 0), 100); /* one owed at 10 a second */
    assert_int_equal(ctl_tb_reserve(&b, 0), 200);
    /* 300 ms later 3 have come back: 2 paid what was owed, 1 is there */
    assert_int_equal(ctl_tb_reserve(&b, 300), 0);
    assert_int_equal(ctl_tb_reserve(&b, 300), 100);
}

static void backoff_doubles_per_item_and_is_forgotten(void **state)
{
    (void)state;
    ctl_backoff *b = ctl_backoff_new(0);
    assert_non_null(b);
    const int64_t want[] = {5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120};
    int64_t t = 0;
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        int64_t d = ctl_backoff_when(b, "pr2/dsrc", t);
        assert_int_equal(d, want[i]);
        t += d;
    }
    /* the 11 tries of the recording's 10 s: at 0, 5, 15, ... 5115 ms, the
     * next only at 10235 ms */
    assert_int_equal(t, 10235);
    assert_int_equal(ctl_backoff_requeues(b, "pr2/dsrc"), 11);
    /* other items have their own count */
    assert_int_equal(ctl_backoff_when(b, "pr2/other", t), 5);
    ctl_backoff_forget(b, "pr2/dsrc");
    assert_int_equal(ctl_backoff_requeues(b, "pr2/dsrc"), 0);
    assert_int_equal(ctl_backoff_when(b, "pr2/dsrc", t), 5);
    /* capped at 1000 s */
    for (int i = 0; i < 40; i++)
        ctl_backoff_when(b, "capped", t);
    assert_int_equal(ctl_backoff_when(b, "capped", t), CTL_BACKOFF_MAX_MS);
    ctl_backoff_free(b);
}

static void backoff_overall_bucket_spreads_many_items(void **state)
{
    (void)state;
    ctl_backoff *b = ctl_backoff_new(0);
    char key[16];
    /* 100 first failures at once pass on the per-item delay; the 101st waits
     * for the bucket's refill (10 a second: 100 ms) */
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof key, "ds-%d", i);
        assert_int_equal(ctl_backoff_when(b, key, 0), 5);
    }
    assert_int_equal(ctl_backoff_when(b, "ds-100", 0), 100);
    assert_int_equal(ctl_backoff_when(b, "ds-101", 0), 200);
    ctl_backoff_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(token_bucket_bursts_then_refills),
        cmocka_unit_test(token_bucket_reservations_are_owed),
        cmocka_unit_test(backoff_doubles_per_item_and_is_forgotten),
        cmocka_unit_test(backoff_overall_bucket_spreads_many_items),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
