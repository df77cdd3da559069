/* Writes in flight: an object is left alone while its write is being sent,
 * and while a listing may be from before the write landed; the listing
 * that shows the outcome (another version, or a store past the write), a
 * failure, or a sweep forgets it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controllers/inflight_internal.h"

static void pending_until_a_listing_shows_the_outcome(void **state)
{
    (void)state;
    ctl_inflight *t = ctl_inflight_new();
    assert_non_null(t);
    assert_false(ctl_inflight_pending(t, "pods|lab/p", 10, 10)); /* nothing sent */
    ctl_inflight_add(t, "pods|lab/p", 10, NULL, NULL);
    /* being sent: even a listing showing a new version waits for it */
    assert_true(ctl_inflight_pending(t, "pods|lab/p", 10, 12));
    ctl_inflight_done(t, "pods|lab/p", true, 15);
    /* a listing from before the store reached 15 may not show it yet */
    assert_true(ctl_inflight_pending(t, "pods|lab/p", 10, 14));
    /* one after it shows the outcome, even at the same version (a write that
     * changed nothing); then the entry is gone */
    assert_false(ctl_inflight_pending(t, "pods|lab/p", 10, 15));
    assert_false(ctl_inflight_pending(t, "pods|lab/p", 10, 3));
    /* another version shows the outcome too */
    ctl_inflight_add(t, "pods|lab/q", 20, NULL, NULL);
    ctl_inflight_done(t, "pods|lab/q", true, 25);
    assert_false(ctl_inflight_pending(t, "pods|lab/q", 24, 21));
    ctl_inflight_free(t);
}

static void a_failed_write_is_forgotten_at_once(void **state)
{
    (void)state;
    ctl_inflight *t = ctl_inflight_new();
    ctl_inflight_add(t, "pods|lab/p", 10, NULL, NULL);
    ctl_inflight_add(t, "pods|lab/p", 10, NULL, NULL); /* two writes about it */
    ctl_inflight_done(t, "pods|lab/p", false, 11);
    assert_true(ctl_inflight_pending(t, "pods|lab/p", 10, 30)); /* one still out */
    ctl_inflight_done(t, "pods|lab/p", true, 12);
    /* one of them failed: the object is as it was, act on it again */
    assert_false(ctl_inflight_pending(t, "pods|lab/p", 10, 11));
    ctl_inflight_free(t);
}

typedef struct seen {
    int n;
    char node[32], ip[32];
} seen;

static void note_address(void *ud, const char *node, const char *ip)
{
    seen *s = ud;
    s->n++;
    snprintf(s->node, sizeof s->node, "%s", node);
    snprintf(s->ip, sizeof s->ip, "%s", ip);
}

static void addresses_and_nodes_while_pending_then_swept(void **state)
{
    (void)state;
    ctl_inflight *t = ctl_inflight_new();
    ctl_inflight_add(t, "pods|lab/ready", 5, "lab-node-0", "10.0.0.7");
    ctl_inflight_add(t, "pods|lab/bound", 6, "lab-node-1", NULL);
    seen s = {0};
    ctl_inflight_addresses(t, note_address, &s);
    assert_int_equal(s.n, 1); /* a binding hands out no address */
    assert_string_equal(s.node, "lab-node-0");
    assert_string_equal(s.ip, "10.0.0.7");
    char node[64];
    assert_true(ctl_inflight_node(t, "pods|lab/bound", node, sizeof node));
    assert_string_equal(node, "lab-node-1");
    assert_false(ctl_inflight_node(t, "pods|lab/none", node, sizeof node));
    ctl_inflight_done(t, "pods|lab/ready", true, 40);
    ctl_inflight_done(t, "pods|lab/bound", true, 41);
    /* a listing taken at 40 shows the first: swept; the second stays */
    ctl_inflight_sweep(t, 40);
    memset(&s, 0, sizeof s);
    ctl_inflight_addresses(t, note_address, &s);
    assert_int_equal(s.n, 0);
    assert_true(ctl_inflight_node(t, "pods|lab/bound", node, sizeof node));
    ctl_inflight_sweep(t, 41);
    assert_false(ctl_inflight_node(t, "pods|lab/bound", node, sizeof node));
    ctl_inflight_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pending_until_a_listing_shows_the_outcome),
        cmocka_unit_test(a_failed_write_is_forgotten_at_once),
        cmocka_unit_test(addresses_and_nodes_while_pending_then_swept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
