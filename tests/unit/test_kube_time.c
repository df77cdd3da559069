/* kube/time.h: metav1.Time as Go's time.Parse(time.RFC3339) reads it and
 * MarshalJSON writes it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "json_assert.h"

#include <stdio.h>
#include <string.h>

#include "kube/time.h"

static void test_parse_time(void **state)
{
    (void)state;
    time_t t = 0;
    assert_int_equal(kube_time_parse_seconds("2025-01-01T10:00:00Z", &t), 0);
    assert_int_equal(t, 1735725600);
    /* MicroTime, as events carry it (2.11): the fraction is dropped. */
    assert_int_equal(kube_time_parse_seconds("2025-01-01T10:00:00.123456Z", &t), 0);
    assert_int_equal(t, 1735725600);
    assert_int_equal(kube_time_parse_seconds("2025-01-01T19:00:00+09:00", &t), 0);
    assert_int_equal(t, 1735725600);
    assert_int_equal(kube_time_parse_seconds("2025-01-01T05:30:00-04:30", &t), 0);
    assert_int_equal(t, 1735725600);
    assert_int_equal(kube_time_parse_seconds("1970-01-01T00:00:00Z", &t), 0);
    assert_int_equal(t, 0);
    assert_int_equal(kube_time_parse_seconds("2024-02-29T00:00:00Z", &t), 0);
    assert_int_equal(t, 1709164800);
}

static void test_parse_time_refuses(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "2025-02-29T00:00:00Z", /* not a leap year */
        "2025-13-01T00:00:00Z",
        "2025-04-31T00:00:00Z",
        "2025-01-01T24:00:00Z",
        "2025-01-01T10:60:00Z",
        "2025-01-01T10:00:60Z",
        "2025-01-01 10:00:00Z",
        "2025-01-01T10:00:00",
        "2025-01-01T10:00:00Zjunk",
        "2025-01-01T10:00:00+0900",
        "2025-1-01T10:00:00Z",
        "2025-01-01T10:00:00.Z",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        time_t t = 42;
        if (kube_time_parse_seconds(bad[i], &t) != -1) print_error("accepted '%s'\n", bad[i]);
        assert_int_equal(kube_time_parse_seconds(bad[i], &t), -1);
        assert_int_equal(t, 42);
    }
}

/* The zero time (0001-01-01T00:00:00Z), null, absent and unreadable values
 * are all IsZero once decoded: unset, and before every set time. */
static void test_time_of_json(void **state)
{
    (void)state;
    json_t *v = json_string("2025-01-01T10:00:00.5Z");
    kube_time t = kube_time_of(v);
    assert_true(t.set);
    assert_int_equal(t.sec, 1735725600);
    assert_int_equal(t.nsec, 500000000);
    json_decref(v);
    static const char *const zero[] = {"0001-01-01T00:00:00Z", "yesterday", ""};
    for (size_t i = 0; i < sizeof zero / sizeof *zero; i++) {
        v = json_string(zero[i]);
        assert_false(kube_time_of(v).set);
        json_decref(v);
    }
    v = json_null();
    assert_false(kube_time_of(v).set);
    assert_false(kube_time_of(NULL).set);
    json_decref(v);
    kube_time zero_time = {0};
    assert_true(kube_time_before(zero_time, t));
    assert_false(kube_time_before(t, zero_time));
    assert_false(kube_time_before(t, t));
    kube_time later = t;
    later.nsec++;
    assert_true(kube_time_before(t, later));
}

/* UTC to the second, proleptic Gregorian both sides of the epoch. */
static void test_format(void **state)
{
    (void)state;
    static const struct {
        int64_t sec;
        const char *text;
    } cases[] = {
        {0, "1970-01-01T00:00:00Z"},
        {1735725600, "2025-01-01T10:00:00Z"},
        {1709164800, "2024-02-29T00:00:00Z"},
        {-1, "1969-12-31T23:59:59Z"},
        {-62135596800, "0001-01-01T00:00:00Z"},
        {253402300799, "9999-12-31T23:59:59Z"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[KUBE_TIME_TEXT_MAX];
        kube_time_format(cases[i].sec, buf);
        assert_string_equal(buf, cases[i].text);
        kube_time back;
        assert_true(kube_time_parse(buf, &back));
        assert_int_equal(back.sec, cases[i].sec);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_parse_time_refuses),
        cmocka_unit_test(test_time_of_json),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
