/* gp_spawn_contained: a program's every process ends with the run, whether
 * it left its process group (setsid), double-forked, or kept the output
 * pipe open; the program's own exit status is the result. Checked in a PID
 * namespace where this test may make one (root) and with the subreaper
 * alone. Survivors are looked for in /proc by their arguments: each sleep
 * here has a duration no other process uses. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procs.h"
#include "util/contain.h"

typedef struct run {
    gp_contain_result res;
    char *out, *err;
    gp_error e;
} run;

static void run_sh(run *r, const char *script, int timeout_ms, bool no_ns)
{
    char *argv[] = {"sh", "-c", (char *)script, NULL};
    gp_contain_options opt = {.timeout_ms = timeout_ms, .no_pid_namespace = no_ns};
    size_t ol, el;
    memset(r, 0, sizeof *r);
    gp_spawn_contained(argv, &opt, &r->out, &ol, &r->err, &el, &r->res, &r->e);
}

static void run_free(run *r)
{
    free(r->out);
    free(r->err);
}

static void plain_exit_status_and_output(bool no_ns)
{
    run r;
    run_sh(&r, "echo out; echo err >&2; exit 3", 20000, no_ns);
    assert_int_equal(r.res.r, GP_SPAWN_OK);
    assert_int_equal(r.res.exit_status, 3);
    assert_string_equal(r.out, "out\n");
    assert_string_equal(r.err, "err\n");
    if (no_ns) assert_false(r.res.namespaced);
    run_free(&r);
    run_sh(&r, "kill -9 $$", 20000, no_ns);
    assert_int_equal(r.res.r, GP_SPAWN_OK);
    assert_int_equal(r.res.exit_status, 128 + 9);
    run_free(&r);
}

/* The escapes: a new session, a double fork, a job holding the
 * pipe. The program ends at once; so must everything it left. */
static void escapes_end_with_the_program(bool no_ns, const char *tag)
{
    char script[512], a[32], b[32], c[32];
    snprintf(a, sizeof a, "4242.%s1", tag);
    snprintf(b, sizeof b, "4242.%s2", tag);
    snprintf(c, sizeof c, "4242.%s3", tag);
    snprintf(script, sizeof script,
             "setsid sleep %s & (sleep %s &) ; (setsid sh -c 'sleep %s' &) ; echo started", a, b,
             c);
    run r;
    run_sh(&r, script, 20000, no_ns);
    /* Not a timeout: the keeper did not wait for the jobs holding the pipe. */
    assert_int_equal(r.res.r, GP_SPAWN_OK);
    assert_int_equal(r.res.exit_status, 0);
    assert_string_equal(r.out, "started\n");
    assert_false(test_sleep_running(a));
    assert_false(test_sleep_running(b));
    assert_false(test_sleep_running(c));
    run_free(&r);
}

static void time_limit_kills_everything(bool no_ns, const char *tag)
{
    char script[256], a[32], b[32];
    snprintf(a, sizeof a, "4243.%s1", tag);
    snprintf(b, sizeof b, "4243.%s2", tag);
    snprintf(script, sizeof script, "setsid sleep %s & echo waiting; sleep %s", a, b);
    run r;
    run_sh(&r, script, 300, no_ns);
    assert_int_equal(r.res.r, GP_SPAWN_TIMEOUT);
    assert_non_null(strstr(r.e.text, "did not finish"));
    assert_string_equal(r.out, "waiting\n");
    assert_false(test_sleep_running(a));
    assert_false(test_sleep_running(b));
    run_free(&r);
}

static void test_in_namespace_where_allowed(void **state)
{
    (void)state;
    plain_exit_status_and_output(false);
    escapes_end_with_the_program(false, "1");
    time_limit_kills_everything(false, "1");
}

static void test_subreaper_alone(void **state)
{
    (void)state;
    plain_exit_status_and_output(true);
    escapes_end_with_the_program(true, "2");
    time_limit_kills_everything(true, "2");
}

/* As root the kernel lets the keeper make the namespace: say so when it
 * does not, rather than test the fallback twice unnoticed. */
static void test_namespace_used_as_root(void **state)
{
    (void)state;
    if (geteuid() != 0) skip();
    run r;
    run_sh(&r, "exit 0", 20000, false);
    assert_int_equal(r.res.r, GP_SPAWN_OK);
    if (!r.res.namespaced) print_message("no PID namespace here, even as root\n");
    run_free(&r);
}

static void test_not_found(void **state)
{
    (void)state;
    char *argv[] = {"gpuop-no-such-program", NULL};
    gp_contain_options opt = {.timeout_ms = 2000};
    gp_contain_result res;
    char *out, *err;
    size_t ol, el;
    gp_error e = {0};
    gp_spawn_contained(argv, &opt, &out, &ol, &err, &el, &res, &e);
    assert_int_equal(res.r, GP_SPAWN_NOT_FOUND);
    assert_null(out);
    assert_non_null(strstr(e.text, "gpuop-no-such-program"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_namespace_where_allowed),
        cmocka_unit_test(test_subreaper_alone),
        cmocka_unit_test(test_namespace_used_as_root),
        cmocka_unit_test(test_not_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
