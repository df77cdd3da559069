/* libFuzzer target for the kube module's text parsers: quantities, label
 * selectors and field selectors.
 *
 * For every input (cut at its first NUL, as the C API sees text):
 *   - kube_quantity_parse; when it parses, kube_quantity_format must write a NUL-terminated text
 *     shorter than KUBE_QUANTITY_FORMAT_MAX that parses again to an equal quantity and
 *     formats to the same text (the canonical form is a fixed point); the
 *     milli and unit values and the rounded-up milli value must agree with
 *     the value's sign; q + q and q - q must be exact when they succeed;
 *     when it fails, the error must say something;
 *   - kube_label_selector_parse, then match against a few label sets; a failure must say
 *     something;
 *   - kube_field_selector_parse with and without a list of supported fields, then match
 *     against a pod; same rule for failures.
 * A broken promise ends in __builtin_trap() after a note on stderr, so that
 * libFuzzer saves the input. Build and run with fuzz/run.sh. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kube/quantity.h"
#include "kube/selector.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *text, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

static void fail(const char *text, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kube_fuzz: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n---- input (%zu bytes) ----\n%s\n---- end of input ----\n", strlen(text),
            text);
    va_end(ap);
    __builtin_trap();
}

#define CHECK(text, cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) fail((text), __VA_ARGS__);                                                    \
    } while (0)

static void check_error(const char *text, const gp_error *err, const char *what)
{
    size_t len = strnlen(err->text, sizeof err->text);
    CHECK(text, len > 0, "%s failed with an empty error", what);
    CHECK(text, len < sizeof err->text, "%s: error text is not NUL-terminated", what);
}

static int sign_of(const kube_quantity *q)
{
    kube_quantity zero = {0};
    int c = kube_quantity_cmp(q, &zero);
    return (c > 0) - (c < 0);
}

static void check_quantity_arithmetic(const char *text, const kube_quantity *q)
{
    gp_error err = {0};
    kube_quantity sum, diff;
    if (kube_quantity_add(q, q, &sum, &err) == 0) {
        CHECK(text, sign_of(&sum) == sign_of(q), "q + q has another sign than q");
        CHECK(text,
              kube_quantity_sub(&sum, q, &diff, &err) == 0 && kube_quantity_cmp(&diff, q) == 0,
              "(q + q) - q != q");
        kube_quantity twice;
        CHECK(text,
              kube_quantity_mul_int(q, 2, &twice, &err) == 0 &&
                  kube_quantity_cmp(&twice, &sum) == 0,
              "q * 2 != q + q");
    } else {
        check_error(text, &err, "kube_quantity_add");
    }
    CHECK(text, kube_quantity_sub(q, q, &diff, &err) == 0 && kube_quantity_is_zero(&diff),
          "q - q != 0");

    int64_t milli = 0;
    if (kube_quantity_to_milli(q, &milli, &err) == 0)
        CHECK(text, (milli > 0) - (milli < 0) == sign_of(q), "milli %" PRId64 " has the wrong sign",
              milli);
    int64_t units = kube_quantity_to_units(q);
    CHECK(text, (units > 0) - (units < 0) == sign_of(q), "units %" PRId64 " has the wrong sign",
          units);
    kube_quantity rounded = *q;
    kube_quantity_round_up_milli(&rounded);
    int c = kube_quantity_cmp(&rounded, q);
    CHECK(text, sign_of(q) >= 0 ? c >= 0 : c <= 0, "rounding up to 1m moved toward zero");
}

static void fuzz_quantity(const char *text)
{
    kube_quantity q;
    gp_error err = {0};
    if (kube_quantity_parse(text, &q, &err) != 0) {
        check_error(text, &err, "kube_quantity_parse");
        return;
    }
    char buf[KUBE_QUANTITY_FORMAT_MAX + 1];
    memset(buf, 0x55, sizeof buf);
    int n = kube_quantity_format(&q, buf);
    CHECK(text, n > 0 && n < KUBE_QUANTITY_FORMAT_MAX && buf[n] == '\0' && strlen(buf) == (size_t)n,
          "kube_quantity_format returned %d", n);
    kube_quantity back;
    CHECK(text, kube_quantity_parse(buf, &back, &err) == 0, "canonical '%s' does not parse: %s",
          buf, err.text);
    CHECK(text, kube_quantity_cmp(&q, &back) == 0, "canonical '%s' reads back as another value",
          buf);
    char again[KUBE_QUANTITY_FORMAT_MAX];
    kube_quantity_format(&back, again);
    CHECK(text, strcmp(buf, again) == 0, "canonical '%s' formats again as '%s'", buf, again);
    check_quantity_arithmetic(text, &q);
}

static json_t *label_sets[3];
static json_t *pod;

static void load_fixtures(void)
{
    if (pod) return;
    label_sets[0] = json_pack("{s:s, s:s, s:s}", "app", "gpu-probe", "tier", "", "gen", "5");
    label_sets[1] = json_object();
    label_sets[2] = NULL;
    pod = json_loads("{\"metadata\": {\"name\": \"p\", \"namespace\": \"default\"},"
                     " \"spec\": {\"nodeName\": \"lab-node-0\", \"hostNetwork\": true},"
                     " \"status\": {\"phase\": \"Running\"}}",
                     0, NULL);
    if (!label_sets[0] || !label_sets[1] || !pod) abort();
}

static void fuzz_label_selector(const char *text)
{
    gp_error err = {0};
    kube_label_selector *s = kube_label_selector_parse(text, &err);
    if (!s) {
        check_error(text, &err, "kube_label_selector_parse");
        return;
    }
    bool empty = kube_label_selector_is_empty(s);
    for (size_t i = 0; i < 3; i++) {
        bool m = kube_label_selector_matches(s, label_sets[i]);
        CHECK(text, !empty || m, "an empty label selector did not match");
    }
    kube_label_selector_free(s);
}

static const char *const pod_fields[] = {"metadata.name", "metadata.namespace", "spec.nodeName",
                                         "status.phase", NULL};

static void fuzz_field_selector(const char *text)
{
    gp_error err = {0};
    kube_field_selector *any = kube_field_selector_parse(text, NULL, &err);
    if (!any) check_error(text, &err, "kube_field_selector_parse");
    kube_field_selector *pods = kube_field_selector_parse(text, pod_fields, &err);
    if (!pods) check_error(text, &err, "kube_field_selector_parse(pod fields)");
    CHECK(text, any || !pods, "parses with a field list but not without one");
    if (any) {
        bool m = kube_field_selector_matches(any, pod);
        CHECK(text, !kube_field_selector_is_empty(any) || m,
              "an empty field selector did not match");
    }
    if (pods)
        CHECK(text, kube_field_selector_matches(pods, pod) == kube_field_selector_matches(any, pod),
              "the two parses differ");
    kube_field_selector_free(any);
    kube_field_selector_free(pods);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load_fixtures();
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    fuzz_quantity(text);
    fuzz_label_selector(text);
    fuzz_field_selector(text);
    free(text);
    return 0;
}
