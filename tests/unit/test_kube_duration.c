/* Go's time.ParseDuration, as kube-controller-manager reads
 * --node-monitor-grace-period. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kube/duration.h"

static int64_t ns_of(const char *text)
{
    int64_t ns = -12345;
    gp_error err = {0};
    if (kube_duration_parse(text, &ns, &err) != 0) print_error("%s: %s\n", text, err.text);
    assert_int_not_equal(ns, -12345);
    return ns;
}

static void assert_refused(const char *text, const char *message)
{
    int64_t ns = 7;
    gp_error err = {0};
    assert_int_equal(kube_duration_parse(text, &ns, &err), -1);
    assert_int_equal(ns, 7);
    assert_string_equal(err.text, message);
}

static void durations(void **state)
{
    (void)state;
    assert_int_equal(ns_of("40s"), 40000000000LL);
    assert_int_equal(ns_of("5s"), 5000000000LL);
    assert_int_equal(ns_of("300ms"), 300000000LL);
    assert_int_equal(ns_of("1.5h"), 5400000000000LL);
    assert_int_equal(ns_of("2h45m"), 9900000000000LL);
    assert_int_equal(ns_of("1m30s"), 90000000000LL);
    assert_int_equal(ns_of(".5s"), 500000000LL);
    assert_int_equal(ns_of("10us"), 10000LL);
    assert_int_equal(ns_of("10\xc2\xb5s"), 10000LL);
    assert_int_equal(ns_of("-1.5s"), -1500000000LL);
    assert_int_equal(ns_of("+2s"), 2000000000LL);
    assert_int_equal(ns_of("0"), 0);
    assert_int_equal(ns_of("1ns"), 1);
}

static void go_errors(void **state)
{
    (void)state;
    assert_refused("", "time: invalid duration \"\"");
    assert_refused("x", "time: invalid duration \"x\"");
    assert_refused("5", "time: missing unit in duration \"5\"");
    assert_refused("5d", "time: unknown unit \"d\" in duration \"5d\"");
    assert_refused("s", "time: invalid duration \"s\"");
    assert_refused(".s", "time: invalid duration \".s\"");
    assert_refused("3000000h", "time: invalid duration \"3000000h\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(durations),
        cmocka_unit_test(go_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
