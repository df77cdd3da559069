/* The map the event correlator keeps its caches in (groupcache/lru: 4096
 * entries, the least recently used out) and the lifecycle controllers their
 * memos (no capacity, swept). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controllers/lru_internal.h"

static int freed;
static void count_free(void *v)
{
    freed++;
    free(v);
}

static int *boxed(int v)
{
    int *p = malloc(sizeof *p);
    assert_non_null(p);
    *p = v;
    return p;
}

static void lru_forgets_the_least_recently_used(void **state)
{
    (void)state;
    freed = 0;
    ctl_lru *m = ctl_lru_new(3, count_free);
    assert_non_null(m);
    assert_int_equal(ctl_lru_put(m, "a", boxed(1)), 0);
    assert_int_equal(ctl_lru_put(m, "b", boxed(2)), 0);
    assert_int_equal(ctl_lru_put(m, "c", boxed(3)), 0);
    /* a is used: b is now the least recent */
    assert_int_equal(*(int *)ctl_lru_get(m, "a"), 1);
    assert_int_equal(ctl_lru_put(m, "d", boxed(4)), 0);
    assert_int_equal(ctl_lru_size(m), 3);
    assert_null(ctl_lru_peek(m, "b"));
    assert_int_equal(freed, 1);
    /* peek does not count as a use: c goes next */
    assert_int_equal(*(int *)ctl_lru_peek(m, "c"), 3);
    assert_int_equal(ctl_lru_put(m, "e", boxed(5)), 0);
    assert_null(ctl_lru_peek(m, "c"));
    assert_non_null(ctl_lru_peek(m, "a"));
    /* a new value replaces the old one, which is released */
    assert_int_equal(ctl_lru_put(m, "a", boxed(10)), 0);
    assert_int_equal(*(int *)ctl_lru_peek(m, "a"), 10);
    assert_int_equal(freed, 3);
    assert_true(ctl_lru_remove(m, "a"));
    assert_false(ctl_lru_remove(m, "a"));
    ctl_lru_free(m);
    assert_int_equal(freed, 6);
}

static bool keep_even(void *ud, const char *key, void *value)
{
    (void)key;
    (*(int *)ud)++;
    return *(int *)value % 2 == 0;
}

static void lru_without_capacity_grows_and_sweeps(void **state)
{
    (void)state;
    ctl_lru *m = ctl_lru_new(0, free);
    char key[16];
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "k%d", i);
        assert_int_equal(ctl_lru_put(m, key, boxed(i)), 0);
    }
    assert_int_equal(ctl_lru_size(m), 5000);
    assert_int_equal(*(int *)ctl_lru_peek(m, "k4321"), 4321);
    int visited = 0;
    ctl_lru_sweep(m, keep_even, &visited);
    assert_int_equal(visited, 5000);
    assert_int_equal(ctl_lru_size(m), 2500);
    assert_null(ctl_lru_peek(m, "k4321"));
    assert_int_equal(*(int *)ctl_lru_peek(m, "k4320"), 4320);
    ctl_lru_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lru_forgets_the_least_recently_used),
        cmocka_unit_test(lru_without_capacity_grows_and_sweeps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
