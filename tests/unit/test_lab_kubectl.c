/* lab_kubectl_parse: the kubectl version that steps 5-8 need, read from
 * `kubectl version --client -o json` as real builds print it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "lab/kubectl.h"

static lab_kubectl parse(const char *json, gp_error *err)
{
    lab_kubectl k;
    lab_kubectl_parse(json, strlen(json), &k, err);
    return k;
}

/* Debian 12's kubernetes-client: older than `kubectl patch --subresource`. */
static void test_debian_12_kubectl_is_too_old(void **state)
{
    (void)state;
    gp_error err = {0};
    lab_kubectl k = parse("{\"clientVersion\": {\"major\": \"1\", \"minor\": \"20\", "
                          "\"gitVersion\": \"v1.20.15\", \"platform\": \"linux/amd64\"}}",
                          &err);
    assert_int_equal(k.state, LAB_KUBECTL_TOO_OLD);
    assert_int_equal(k.major, 1);
    assert_int_equal(k.minor, 20);
    assert_string_equal(k.version, "v1.20.15");
}

/* 1.24 is the first that will do; 1.23 is not; a major 2 would be. */
static void test_the_line_is_1_24(void **state)
{
    (void)state;
    gp_error err = {0};
    assert_int_equal(parse("{\"clientVersion\": {\"gitVersion\": \"v1.24.0\"}}", &err).state,
                     LAB_KUBECTL_USABLE);
    assert_int_equal(parse("{\"clientVersion\": {\"gitVersion\": \"v1.23.17\"}}", &err).state,
                     LAB_KUBECTL_TOO_OLD);
    assert_int_equal(parse("{\"clientVersion\": {\"gitVersion\": \"v2.0.0\"}}", &err).state,
                     LAB_KUBECTL_USABLE);
    assert_int_equal(parse("{\"clientVersion\": {\"gitVersion\": \"v0.99.0\"}}", &err).state,
                     LAB_KUBECTL_TOO_OLD);
}

/* A vendor's build: a suffix after the patch number, minor "32+"
 * (this machine's kubectl prints exactly that). */
static void test_a_vendor_build_reads_from_git_version(void **state)
{
    (void)state;
    gp_error err = {0};
    lab_kubectl k =
        parse("{\"clientVersion\": {\"major\": \"1\", \"minor\": \"32+\", \"gitVersion\": "
              "\"v1.32.4-dispatcher\"}, \"kustomizeVersion\": \"v5.5.0\"}",
              &err);
    assert_int_equal(k.state, LAB_KUBECTL_USABLE);
    assert_int_equal(k.minor, 32);
    assert_string_equal(k.version, "v1.32.4-dispatcher");
}

/* Without a usable gitVersion, major and minor ("23+") decide. */
static void test_major_and_minor_when_git_version_says_nothing(void **state)
{
    (void)state;
    gp_error err = {0};
    lab_kubectl k = parse("{\"clientVersion\": {\"major\": \"1\", \"minor\": \"23+\"}}", &err);
    assert_int_equal(k.state, LAB_KUBECTL_TOO_OLD);
    assert_string_equal(k.version, "v1.23");
}

static void test_what_is_not_a_version_is_unknown(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "kubectl: unknown flag: --output",
        "{}",
        "{\"clientVersion\": \"v1.32.0\"}",
        "{\"clientVersion\": {\"gitVersion\": \"vx.y\"}}",
        "{\"clientVersion\": {\"major\": \"one\", \"minor\": \"32\"}}",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gp_error err = {0};
        lab_kubectl k = parse(bad[i], &err);
        assert_int_equal(k.state, LAB_KUBECTL_UNKNOWN);
        assert_true(strstr(err.text, "kubectl version --client -o json") != NULL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_debian_12_kubectl_is_too_old),
        cmocka_unit_test(test_the_line_is_1_24),
        cmocka_unit_test(test_a_vendor_build_reads_from_git_version),
        cmocka_unit_test(test_major_and_minor_when_git_version_says_nothing),
        cmocka_unit_test(test_what_is_not_a_version_is_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
