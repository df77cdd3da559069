/* gp_buf: the growable buffer every module builds its text with.
 *
 * Linked with -Wl,--wrap=realloc (tests/CMakeLists.txt): the library's calls
 * to realloc come here first, so a test can make the Nth one fail and see
 * what a buffer does when memory runs out. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

/* ---- realloc that fails on demand ---- */

void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);

static int reallocs;        /* calls that reached the real realloc */
static int fail_after = -1; /* that many more succeed, then every call fails; -1 never */

void *__wrap_realloc(void *p, size_t n)
{
    if (fail_after == 0) return NULL;
    if (fail_after > 0) fail_after--;
    reallocs++;
    return __real_realloc(p, n);
}

static int reset_realloc(void **state)
{
    (void)state;
    reallocs = 0;
    fail_after = -1;
    return 0;
}

/* ---- building text ---- */

static void test_appends_build_the_text(void **state)
{
    (void)state;
    gp_buf b = {0};
    assert_string_equal(gp_buf_str(&b), "");
    assert_int_equal(gp_buf_add(&b, "MAIN_RUNTIMES="), 0);
    assert_int_equal(gp_buf_addc(&b, 'r'), 0);
    assert_int_equal(gp_buf_addn(&b, "uncXXX", 3), 0);
    assert_int_equal(gp_buf_addf(&b, "\nCONFLICT=%s %d%%", "yes", 7), 0);
    assert_string_equal(gp_buf_str(&b), "MAIN_RUNTIMES=runc\nCONFLICT=yes 7%");
    assert_int_equal(b.len, strlen("MAIN_RUNTIMES=runc\nCONFLICT=yes 7%"));
    assert_false(gp_buf_failed(&b));
    gp_buf_free(&b);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
}

static void test_bytes_may_hold_nuls(void **state)
{
    (void)state;
    gp_buf b = {0};
    assert_int_equal(gp_buf_addn(&b, "a\0b", 3), 0);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.data, "a\0b\0", 4); /* and a NUL after them */
    gp_buf_free(&b);
}

static void test_join(void **state)
{
    (void)state;
    const char *names[] = {"nvidia", "runc", "kata"};
    gp_buf b = {0};
    assert_int_equal(gp_buf_join(&b, names, 0, ","), 0);
    assert_string_equal(gp_buf_str(&b), "");
    assert_int_equal(gp_buf_join(&b, names, 1, ","), 0);
    gp_buf_add(&b, "|");
    assert_int_equal(gp_buf_join(&b, names, 3, ", "), 0);
    assert_string_equal(gp_buf_str(&b), "nvidia|nvidia, runc, kata");
    gp_buf_free(&b);
}

/* Many small appends and one that is larger than everything before it: the
 * text survives every growth, the NUL stays after the last byte. */
static void test_growth_keeps_the_text(void **state)
{
    (void)state;
    gp_buf b = {0};
    char expected[20001];
    for (size_t i = 0; i < 10000; i++) {
        expected[i] = (char)('a' + i % 26);
        assert_int_equal(gp_buf_addc(&b, expected[i]), 0);
    }
    char big[10001];
    memset(big, 'Z', 10000);
    big[10000] = '\0';
    assert_int_equal(gp_buf_addf(&b, "%s", big), 0);
    memcpy(expected + 10000, big, 10001);
    assert_int_equal(b.len, 20000);
    assert_string_equal(gp_buf_str(&b), expected);
    assert_true(b.cap > b.len);
    gp_buf_free(&b);
}

/* Room made up front: the pieces that fit it allocate nothing more. */
static void test_reserve_allocates_once(void **state)
{
    (void)state;
    gp_buf b = {0};
    assert_int_equal(gp_buf_reserve(&b, 10000), 0);
    assert_int_equal(reallocs, 1);
    assert_true(b.cap >= 10001);
    assert_string_equal(gp_buf_str(&b), "");
    for (int i = 0; i < 1000; i++)
        gp_buf_add(&b, "0123456789");
    assert_int_equal(reallocs, 1);
    assert_int_equal(b.len, 10000);
    while (b.len + 1 < b.cap) /* whatever room the buffer rounded up to */
        gp_buf_addc(&b, '.');
    assert_int_equal(reallocs, 1);
    gp_buf_addc(&b, '!'); /* past the room: a growth */
    assert_int_equal(reallocs, 2);
    gp_buf_free(&b);
    fail_after = 0;
    assert_int_equal(gp_buf_reserve(&b, 10), -1);
    assert_null(gp_buf_take(&b));
}

static void test_take_hands_the_text_over(void **state)
{
    (void)state;
    gp_buf b = {0};
    char *empty = gp_buf_take(&b); /* nothing added: "", still the caller's to free */
    assert_non_null(empty);
    assert_string_equal(empty, "");
    free(empty);

    gp_buf_addf(&b, "%s=%d", "DESIRED", 4);
    char *text = gp_buf_take(&b);
    assert_string_equal(text, "DESIRED=4");
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    /* usable again, and independent of the text taken */
    gp_buf_add(&b, "again");
    assert_string_equal(gp_buf_str(&b), "again");
    assert_string_equal(text, "DESIRED=4");
    free(text);
    gp_buf_free(&b);
}

/* A line buffer reused: the memory stays, the text starts again. */
static void test_clear_keeps_the_memory(void **state)
{
    (void)state;
    gp_buf b = {0};
    gp_buf_clear(&b); /* nothing yet: still "" */
    assert_string_equal(gp_buf_str(&b), "");
    gp_buf_add(&b, "{\"type\":\"ADDED\"}");
    int before = reallocs;
    gp_buf_clear(&b);
    assert_int_equal(b.len, 0);
    assert_string_equal(gp_buf_str(&b), "");
    gp_buf_add(&b, "{}");
    assert_string_equal(gp_buf_str(&b), "{}");
    assert_int_equal(reallocs, before);
    gp_buf_free(&b);
    /* a failure outlives clear */
    fail_after = 0;
    gp_buf_add(&b, "x");
    fail_after = -1;
    gp_buf_clear(&b);
    assert_true(gp_buf_failed(&b));
    assert_int_equal(gp_buf_add(&b, "y"), -1);
    assert_null(gp_buf_take(&b));
}

/* ---- limits ---- */

static void test_max_is_a_limit(void **state)
{
    (void)state;
    gp_buf b = {.max = 8};
    assert_int_equal(gp_buf_add(&b, "12345678"), 0); /* exactly max fits */
    assert_int_equal(gp_buf_addc(&b, '9'), -1);
    assert_int_equal(b.state, GP_BUF_TOO_LONG);
    assert_true(gp_buf_failed(&b));
    /* the text is not cut short: it stays what it was, and take refuses it */
    assert_string_equal(gp_buf_str(&b), "12345678");
    assert_null(gp_buf_take(&b));
    /* the limit outlives take; the failure does not */
    assert_int_equal(b.max, 8);
    assert_false(gp_buf_failed(&b));
    assert_int_equal(gp_buf_addf(&b, "%d", 123456789), -1);
    assert_int_equal(b.len, 0);
    gp_buf_free(&b);
}

/* A length that would overflow size_t fails before asking for memory. */
static void test_overflowing_length_fails_without_allocating(void **state)
{
    (void)state;
    gp_buf b = {0};
    gp_buf_add(&b, "x");
    int before = reallocs;
    assert_int_equal(gp_buf_addn(&b, "y", SIZE_MAX), -1);
    assert_int_equal(reallocs, before);
    assert_int_equal(b.state, GP_BUF_NO_MEMORY);
    assert_null(gp_buf_take(&b));
}

/* ---- out of memory ---- */

/* The first allocation fails: the append says so, every later one is
 * ignored even once memory is back, and take yields NULL. */
static void test_first_allocation_fails(void **state)
{
    (void)state;
    gp_buf b = {0};
    fail_after = 0;
    assert_int_equal(gp_buf_add(&b, "MAIN_RUNTIMES="), -1);
    assert_int_equal(b.state, GP_BUF_NO_MEMORY);
    fail_after = -1;
    assert_int_equal(gp_buf_add(&b, "runc"), -1);
    assert_int_equal(gp_buf_addf(&b, "%d", 1), -1);
    assert_int_equal(gp_buf_addc(&b, '\n'), -1);
    assert_int_equal(reallocs, 0); /* a failed buffer asks for nothing more */
    assert_string_equal(gp_buf_str(&b), "");
    assert_null(gp_buf_take(&b));
}

/* A growth fails midway: what was built is released by take (the leak
 * checkers of make test see it), and the caller is told only NULL. */
static void test_growth_fails_midway(void **state)
{
    (void)state;
    gp_buf b = {0};
    fail_after = 1; /* the first allocation works, the first growth fails */
    char line[40];
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = '\0';
    assert_int_equal(gp_buf_add(&b, line), 0);
    assert_int_equal(gp_buf_add(&b, line), -1); /* 78 bytes: past the first 64 */
    assert_true(gp_buf_failed(&b));
    assert_string_equal(gp_buf_str(&b), line); /* unchanged by the failed append */
    fail_after = -1;
    assert_int_equal(gp_buf_addf(&b, "%s", "more"), -1);
    assert_null(gp_buf_take(&b));
    /* after take the buffer works again */
    assert_int_equal(gp_buf_add(&b, "ok"), 0);
    char *text = gp_buf_take(&b);
    assert_string_equal(text, "ok");
    free(text);
}

/* Memory that runs out at take itself, when nothing was ever added. */
static void test_take_of_empty_buffer_without_memory(void **state)
{
    (void)state;
    gp_buf b = {0};
    fail_after = 0;
    assert_null(gp_buf_take(&b));
    fail_after = -1;
}

static void test_format(void **state)
{
    (void)state;
    char *s = gp_format("%s in version \"v1\" cannot be handled as a %s", "Pod", "Pod");
    assert_string_equal(s, "Pod in version \"v1\" cannot be handled as a Pod");
    free(s);
    s = gp_format("%s", "");
    assert_string_equal(s, "");
    free(s);
    fail_after = 0;
    assert_null(gp_format("%d", 42));
    fail_after = -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_appends_build_the_text, reset_realloc),
        cmocka_unit_test_setup(test_bytes_may_hold_nuls, reset_realloc),
        cmocka_unit_test_setup(test_join, reset_realloc),
        cmocka_unit_test_setup(test_growth_keeps_the_text, reset_realloc),
        cmocka_unit_test_setup(test_reserve_allocates_once, reset_realloc),
        cmocka_unit_test_setup(test_take_hands_the_text_over, reset_realloc),
        cmocka_unit_test_setup(test_clear_keeps_the_memory, reset_realloc),
        cmocka_unit_test_setup(test_max_is_a_limit, reset_realloc),
        cmocka_unit_test_setup(test_overflowing_length_fails_without_allocating, reset_realloc),
        cmocka_unit_test_setup(test_first_allocation_fails, reset_realloc),
        cmocka_unit_test_setup(test_growth_fails_midway, reset_realloc),
        cmocka_unit_test_setup(test_take_of_empty_buffer_without_memory, reset_realloc),
        cmocka_unit_test_setup(test_format, reset_realloc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
