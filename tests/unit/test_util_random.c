/* gp_random_hex: the uids of every object and the server's token. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "util/random.h"

static void assert_hex(const char *s, size_t digits)
{
    assert_int_equal(strlen(s), digits);
    assert_int_equal(strspn(s, "0123456789abcdef"), digits);
}

static void test_writes_two_digits_a_byte(void **state)
{
    (void)state;
    char out[2 * 100 + 1];
    gp_error err = {0};
    /* 100 bytes: more than one read of the kernel's source */
    for (size_t n = 0; n <= 100; n += 25) {
        memset(out, 'x', sizeof out);
        assert_int_equal(gp_random_hex(out, n, &err), 0);
        assert_hex(out, 2 * n);
    }
}

/* 16 random bytes twice alike would be one chance in 2^128: a source that
 * repeats (an unseeded generator, a buffer not refilled) shows here. */
static void test_two_draws_differ(void **state)
{
    (void)state;
    char a[33], b[33], c[2 * 100 + 1];
    gp_error err = {0};
    assert_int_equal(gp_random_hex(a, 16, &err), 0);
    assert_int_equal(gp_random_hex(b, 16, &err), 0);
    assert_string_not_equal(a, b);
    assert_int_equal(gp_random_hex(c, 100, &err), 0);
    assert_memory_not_equal(c, c + 128, 64); /* the second read is fresh */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_two_digits_a_byte),
        cmocka_unit_test(test_two_draws_differ),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
