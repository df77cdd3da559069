/* kube_quantity_*: Kubernetes resource quantities parse, compare, add up and print the
 * way apimachinery's resource.Quantity does (cases from quantity_test.go and
 * from the lab: 64Gi requested on 32Gi nodes, 4 GPUs * 5 time-slicing
 * replicas). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "kube/quantity.h"

/* ---- helpers ---- */

static kube_quantity parse_ok(const char *text)
{
    kube_quantity q;
    gp_error err = {0};
    memset(&q, 0x5a, sizeof q);
    if (kube_quantity_parse(text, &q, &err) != 0) {
        print_error("kube_quantity_parse('%s') failed: %s\n", text, err.text);
        fail();
    }
    return q;
}

static const char *format(const kube_quantity *q, char buf[KUBE_QUANTITY_FORMAT_MAX])
{
    memset(buf, 0x5a, KUBE_QUANTITY_FORMAT_MAX);
    int n = kube_quantity_format(q, buf);
    assert_true(n > 0 && n < KUBE_QUANTITY_FORMAT_MAX);
    assert_int_equal((size_t)n, strlen(buf));
    return buf;
}

/* ---- canonical form ---- */

struct canonical_case {
    const char *in;
    const char *out;
};

/* What the API server writes back for what a client sent. */
static const struct canonical_case canonical_cases[] = {
    /* k8s-semantics 3.2 and the lab's numbers */
    {"128Mi", "128Mi"},
    {"0.5", "500m"},
    {"1024Mi", "1Gi"},
    {"1", "1"},
    {"64Gi", "64Gi"},
    {"32Gi", "32Gi"},
    {"16", "16"},
    {"500m", "500m"},
    {"256Gi", "256Gi"},
    {"1Ti", "1Ti"},
    {"1M", "1M"},
    {"110", "110"},
    /* TestQuantityParseEmit / TestQuantityString */
    {"1Ki", "1Ki"},
    {"1Mi", "1Mi"},
    {"1Gi", "1Gi"},
    {"1000M", "1G"},
    {"1000m", "1"},
    {"0.1", "100m"},
    {".001Ki", "1024m"},
    {".000001Ki", "1024u"},
    {".000000001Ki", "1024n"},
    {".000000000001Ki", "2n"},
    {"1.5Gi", "1536Mi"},
    {"300Mi", "300Mi"},
    {"307200Ki", "300Mi"},
    {"1025024Mi", "1001Gi"},
    {"5", "5"},
    {"1080m", "1080m"},
    {"1.08", "1080m"},
    {"1080000000n", "1080m"},
    {"1025", "1025"},
    {"1025Ki", "1025Ki"},
    {"0", "0"},
    {"00", "0"},
    {"0Gi", "0"},
    {"-0", "0"},
    {"1e3", "1e3"}, /* DecimalExponent stays an exponent: "1e3", not "1k" */
    {"1k", "1k"},
    {"1e9", "1e9"},
    {".001e12", "1e9"},
    {"1e-3", "1e-3"},
    {"0.001e0", "1e-3"},
    {"1000e-12", "1e-9"},
    {"80e-3", "80e-3"},
    {"300e6", "300e6"},
    {"1e0", "1"},
    {"0.5e0", "500e-3"},
    {"1.2e3", "1200"},
    {"1.3E+6", "1300e3"},
    {"1E", "1E"},
    {"9E", "9E"},
    {"1.01E", "1010P"},
    {"5n", "5n"},
    {"4u", "4u"},
    {"3m", "3m"},
    {"8k", "8k"},
    {"50k", "50k"},
    {"40T", "40T"},
    {"100.035k", "100035"},
    {"10.035M", "10035k"},
    {"1.", "1"},
    {"1.G", "1G"},
    {".0001k", "100m"},
    {"+1", "1"},
    {"-1", "-1"},
    {"-1Gi", "-1Gi"},
    {"-0.5", "-500m"},
    {"-1.5Gi", "-1536Mi"},
    /* binary that would need rounding is written as DecimalSI */
    {"0.5Ki", "512"},
    {"0.9Gi", "966367641600m"},
    {"1.5Ki", "1536"},
    /* below 1024 a whole binary value is DecimalSI too: 1000 is "1k" */
    {"0.9765625Ki", "1k"},
    {"-0.9765625Ki", "-1k"},
    /* rounding up (away from zero) to 1n */
    {"3.001n", "4n"},
    {"1.1E-9", "2e-9"},
    {"0.0000000001", "1n"},
    {"0.00000012345", "124n"},
    {"-0.0000000001", "-1n"},
    {"0.30000000000000004", "300000001n"},
    /* the edges of the range */
    {"9223372036854775807", "9223372036854775807"},
    {"-9223372036854775807", "-9223372036854775807"},
    {"7Ei", "7Ei"},
    {"9223372036854775806.999999999", "9223372036854775806999999999n"},
    {"9.223372036854775807E", "9223372036854775807"},
};

static void test_canonical_form(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof canonical_cases / sizeof *canonical_cases; i++) {
        const struct canonical_case *c = &canonical_cases[i];
        kube_quantity q = parse_ok(c->in);
        char buf[KUBE_QUANTITY_FORMAT_MAX];
        format(&q, buf);
        if (strcmp(buf, c->out) != 0) {
            print_error("'%s' formats as '%s', expected '%s'\n", c->in, buf, c->out);
            failures++;
            continue;
        }
        /* The canonical text reads back as the same value. */
        kube_quantity back = parse_ok(buf);
        if (kube_quantity_cmp(&q, &back) != 0) {
            print_error("'%s' -> '%s' reads back as a different value\n", c->in, buf);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

/* ---- comparison ---- */

struct cmp_case {
    const char *a, *b;
    int cmp;
};

static const struct cmp_case cmp_cases[] = {
    {"1Gi", "1024Mi", 0},
    {"0.1", "100m", 0},
    {"1e3", "1k", 0},
    {"1000m", "1", 0},
    {"1.5Gi", "1536Mi", 0},
    {"0.5", "500m", 0},
    {"1Ki", "1024", 0},
    {"1E", "1e18", 0},
    {"1M", "1e6", 0},
    {"100M", "1e8", 0},
    {"0", "0Gi", 0},
    {"-0", "0", 0},
    {"64Gi", "32Gi", 1}, /* the toolkit's request against a lab node */
    {"128Mi", "32Gi", -1},
    {"500m", "1", -1},
    {"16", "15999m", 1},
    {"-1", "0", -1},
    {"1n", "0", 1},
    {"1Mi", "1M", 1},
    {"1Gi", "1G", 1},
    {"9223372036854775807", "9223372036854775806.999999999", 1},
    {"-9223372036854775807", "9223372036854775807", -1},
};

static void test_compare(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof cmp_cases / sizeof *cmp_cases; i++) {
        const struct cmp_case *c = &cmp_cases[i];
        kube_quantity a = parse_ok(c->a), b = parse_ok(c->b);
        int ab = kube_quantity_cmp(&a, &b), ba = kube_quantity_cmp(&b, &a);
        int sign_ab = (ab > 0) - (ab < 0), sign_ba = (ba > 0) - (ba < 0);
        if (sign_ab != c->cmp || sign_ba != -c->cmp) {
            print_error("cmp('%s', '%s') = %d (reversed %d), expected %d\n", c->a, c->b, ab, ba,
                        c->cmp);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

static void test_is_zero(void **state)
{
    (void)state;
    kube_quantity zero = {0};
    assert_true(kube_quantity_is_zero(&zero));
    const char *zeros[] = {"0", "0Gi", "-0", "0.0", "0e5", "0n"};
    for (size_t i = 0; i < sizeof zeros / sizeof *zeros; i++) {
        kube_quantity q = parse_ok(zeros[i]);
        assert_true(kube_quantity_is_zero(&q));
    }
    kube_quantity tiny = parse_ok("1n");
    assert_false(kube_quantity_is_zero(&tiny));
    kube_quantity rounded = parse_ok("0.0000000001");
    assert_false(kube_quantity_is_zero(&rounded));
}

/* ---- rejected texts ---- */

struct bad_case {
    const char *in;
    const char *why; /* a piece of the message */
};

#define REGEX  "quantities must match the regular expression"
#define SUFFIX "unable to parse quantity's suffix"
#define RANGE  "out of range"

static const struct bad_case bad_cases[] = {
    {"", REGEX},
    {"1.1.1", REGEX},
    {"1Gix", REGEX},
    {"1.1.M", REGEX},
    {"1+1.0M", REGEX},
    {"aoeu", REGEX},
    {" 1", REGEX},
    {"1 ", REGEX},
    {"1Gi ", REGEX},
    {"-", REGEX}, /* apimachinery reads these as 0; see quantity.h */
    {"+", REGEX},
    {".", REGEX},
    {"-.", REGEX},
    {"Gi", REGEX},
    {"--1", REGEX},
    {"0.1mi", SUFFIX},
    {"0.1am", REGEX},
    {".5i", SUFFIX},
    {"1i", SUFFIX},
    {"-3.01i", SUFFIX},
    {"-3.01e-", SUFFIX},
    {"1K", SUFFIX},
    {"1KiB", REGEX},
    {"1e", SUFFIX},
    {"1ee3", SUFFIX},
    {"1m3", SUFFIX},
    {"1-3", SUFFIX},
    {"1e2147483648", SUFFIX},
    {"1e-2147483649", SUFFIX},
    {"8Ei", RANGE}, /* apimachinery caps these at 2^63-1; see quantity.h */
    {"9Ei", RANGE},
    {"9223372036854775808", RANGE},
    {"-9223372036854775808", RANGE},
    {"9223372036854775807.000000001", RANGE},
    {"1e19", RANGE},
    {"10E", RANGE},
    {"12E", RANGE},
    {"1e2147483647", RANGE},
};

static void test_rejected(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
        const struct bad_case *c = &bad_cases[i];
        kube_quantity q = {0};
        gp_error err = {0};
        if (kube_quantity_parse(c->in, &q, &err) == 0) {
            print_error("'%s' parsed\n", c->in);
            failures++;
            continue;
        }
        char quoted[64];
        snprintf(quoted, sizeof quoted, "'%s'", c->in);
        if (!strstr(err.text, c->why) || !strstr(err.text, quoted)) {
            print_error("'%s': error '%s' should name it and say '%s'\n", c->in, err.text, c->why);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

/* Tiny values far below 1n and exponents far out still parse exactly. */
static void test_extreme_exponents(void **state)
{
    (void)state;
    char buf[KUBE_QUANTITY_FORMAT_MAX];
    kube_quantity q = parse_ok("1e-2147483648");
    assert_string_equal(format(&q, buf), "1e-9");
    q = parse_ok("0e2147483647");
    assert_true(kube_quantity_is_zero(&q));
    /* 10^-43 * 2^60 is about 1.2 * 10^-25: rounds up to 1n */
    q = parse_ok("0.0000000000000000000000000000000000000000001Ei");
    assert_string_equal(format(&q, buf), "1n");
    /* 10^-12 * 1024 = 1.024n: rounds up after the multiplication, to 2n */
    q = parse_ok("0.000000000001Ki");
    assert_string_equal(format(&q, buf), "2n");
    q = parse_ok("1.000000000000000000000000000000000000000000001");
    assert_string_equal(format(&q, buf), "1000000001n");
    q = parse_ok("0000000000000000000000000000000000000000000064Gi");
    assert_string_equal(format(&q, buf), "64Gi");
}

/* ---- arithmetic ---- */

static void test_time_slicing_slots(void **state)
{
    (void)state;
    /* 4 GPUs, each advertised 5 times. */
    kube_quantity gpus = parse_ok("4"), slots;
    gp_error err = {0};
    assert_int_equal(kube_quantity_mul_int(&gpus, 5, &slots, &err), 0);
    kube_quantity twenty = parse_ok("20");
    assert_int_equal(kube_quantity_cmp(&slots, &twenty), 0);
    char buf[KUBE_QUANTITY_FORMAT_MAX];
    assert_string_equal(format(&slots, buf), "20");
    assert_int_equal(kube_quantity_to_units(&slots), 20);
}

static void test_add_sub(void **state)
{
    (void)state;
    gp_error err = {0};
    char buf[KUBE_QUANTITY_FORMAT_MAX];
    kube_quantity a = parse_ok("32Gi"), b = parse_ok("32Gi"), sum;
    assert_int_equal(kube_quantity_add(&a, &b, &sum, &err), 0);
    kube_quantity want = parse_ok("64Gi");
    assert_int_equal(kube_quantity_cmp(&sum, &want), 0);
    assert_string_equal(format(&sum, buf), "64Gi");

    /* 32Gi allocatable minus a 64Gi request leaves -32Gi: it does not fit. */
    kube_quantity left;
    assert_int_equal(kube_quantity_sub(&a, &want, &left, &err), 0);
    assert_string_equal(format(&left, buf), "-32Gi");

    kube_quantity one = parse_ok("1"), half = parse_ok("500m"), diff;
    assert_int_equal(kube_quantity_sub(&one, &half, &diff, &err), 0);
    assert_string_equal(format(&diff, buf), "500m");

    /* A zero left operand takes the other's format (apimachinery's Add). */
    kube_quantity zero = {0}, gi = parse_ok("1Gi"), total;
    assert_int_equal(kube_quantity_add(&zero, &gi, &total, &err), 0);
    assert_string_equal(format(&total, buf), "1Gi");
    assert_int_equal(kube_quantity_add(&one, &gi, &total, &err), 0);
    assert_string_equal(format(&total, buf), "1073741825");

    /* The result may be written over an operand. */
    assert_int_equal(kube_quantity_add(&a, &a, &a, &err), 0);
    assert_string_equal(format(&a, buf), "64Gi");
}

static void test_mul(void **state)
{
    (void)state;
    gp_error err = {0};
    char buf[KUBE_QUANTITY_FORMAT_MAX];
    kube_quantity q = parse_ok("128Mi"), out;
    assert_int_equal(kube_quantity_mul_int(&q, 8, &out, &err), 0);
    assert_string_equal(format(&out, buf), "1Gi");
    q = parse_ok("250m");
    assert_int_equal(kube_quantity_mul_int(&q, 4, &out, &err), 0);
    assert_string_equal(format(&out, buf), "1");
    assert_int_equal(kube_quantity_mul_int(&q, -4, &out, &err), 0);
    assert_string_equal(format(&out, buf), "-1");
    assert_int_equal(kube_quantity_mul_int(&q, 0, &out, &err), 0);
    assert_true(kube_quantity_is_zero(&out));
    q = parse_ok("1Ei");
    assert_int_equal(kube_quantity_mul_int(&q, 7, &out, &err), 0);
    assert_string_equal(format(&out, buf), "7Ei");
}

static void test_overflow_is_an_error(void **state)
{
    (void)state;
    kube_quantity max = parse_ok("9223372036854775807"), min = parse_ok("-9223372036854775807");
    kube_quantity one = parse_ok("1"), tiny = parse_ok("1n"), ei = parse_ok("1Ei"), out = {0};
    gp_error err = {0};
    assert_int_equal(kube_quantity_add(&max, &one, &out, &err), -1);
    assert_non_null(strstr(err.text, "out of range"));
    assert_int_equal(kube_quantity_add(&max, &tiny, &out, &err), -1);
    assert_int_equal(kube_quantity_sub(&min, &one, &out, &err), -1);
    assert_int_equal(kube_quantity_mul_int(&ei, 8, &out, &err), -1);
    assert_int_equal(kube_quantity_mul_int(&max, INT64_MIN, &out, &err), -1);
    assert_int_equal(kube_quantity_mul_int(&max, -1, &out, &err), 0);
    assert_int_equal(kube_quantity_cmp(&out, &min), 0);
    /* Right at the edge is fine. */
    kube_quantity almost = parse_ok("9223372036854775806");
    assert_int_equal(kube_quantity_add(&almost, &one, &out, &err), 0);
    assert_int_equal(kube_quantity_cmp(&out, &max), 0);
}

/* ---- conversions ---- */

struct milli_case {
    const char *in;
    int64_t milli;
    int64_t units;
};

static const struct milli_case milli_cases[] = {
    {"500m", 500, 1},
    {"1", 1000, 1},
    {"0.5", 500, 1},
    {"16", 16000, 16},
    {"1500m", 1500, 2},
    {"-1500m", -1500, -2},
    {"1n", 1, 1}, /* rounded away from zero, like ScaledValue */
    {"-1n", -1, -1},
    {"1Gi", 1073741824000, 1073741824},
    {"64Gi", 68719476736000, 68719476736},
    {"0", 0, 0},
    {"9223372036854775m", 9223372036854775, 9223372036855},
};

static void test_milli_and_units(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof milli_cases / sizeof *milli_cases; i++) {
        const struct milli_case *c = &milli_cases[i];
        kube_quantity q = parse_ok(c->in);
        int64_t milli = 0;
        gp_error err = {0};
        if (kube_quantity_to_milli(&q, &milli, &err) != 0 || milli != c->milli ||
            kube_quantity_to_units(&q) != c->units) {
            print_error("'%s': milli %lld units %lld, expected %lld and %lld (%s)\n", c->in,
                        (long long)milli, (long long)kube_quantity_to_units(&q),
                        (long long)c->milli, (long long)c->units, err.text);
            failures++;
        }
    }
    assert_int_equal(failures, 0);

    /* 2^63-1 units do not fit in milli-units. */
    kube_quantity big = parse_ok("9223372036854775807");
    int64_t milli = 0;
    gp_error err = {0};
    assert_int_equal(kube_quantity_to_milli(&big, &milli, &err), -1);
    assert_true(err.text[0] != '\0');
    assert_int_equal(kube_quantity_to_units(&big), INT64_MAX);
    big = parse_ok("9223372036854775807m");
    assert_int_equal(kube_quantity_to_milli(&big, &milli, &err), 0);
    assert_int_equal(milli, INT64_MAX);
}

static void test_round_up_milli(void **state)
{
    (void)state;
    char buf[KUBE_QUANTITY_FORMAT_MAX];
    kube_quantity q = parse_ok("0.30000000000000004");
    kube_quantity_round_up_milli(&q);
    assert_string_equal(format(&q, buf), "301m");
    q = parse_ok("-1n");
    kube_quantity_round_up_milli(&q);
    assert_string_equal(format(&q, buf), "-1m");
    q = parse_ok("128Mi");
    kube_quantity_round_up_milli(&q);
    assert_string_equal(format(&q, buf), "128Mi");
    q = parse_ok("9223372036854775807");
    kube_quantity_round_up_milli(&q);
    assert_string_equal(format(&q, buf), "9223372036854775807");
}

static void test_format_class_kept(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("1Gi").format, KUBE_QUANTITY_BINARY_SI);
    assert_int_equal(parse_ok("1G").format, KUBE_QUANTITY_DECIMAL_SI);
    assert_int_equal(parse_ok("1").format, KUBE_QUANTITY_DECIMAL_SI);
    assert_int_equal(parse_ok("1e3").format, KUBE_QUANTITY_DECIMAL_EXPONENT);
    assert_int_equal(parse_ok("1E3").format, KUBE_QUANTITY_DECIMAL_EXPONENT);
    assert_int_equal(parse_ok("1E").format, KUBE_QUANTITY_DECIMAL_SI);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_form),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_is_zero),
        cmocka_unit_test(test_rejected),
        cmocka_unit_test(test_extreme_exponents),
        cmocka_unit_test(test_time_slicing_slots),
        cmocka_unit_test(test_add_sub),
        cmocka_unit_test(test_mul),
        cmocka_unit_test(test_overflow_is_an_error),
        cmocka_unit_test(test_milli_and_units),
        cmocka_unit_test(test_round_up_milli),
        cmocka_unit_test(test_format_class_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
