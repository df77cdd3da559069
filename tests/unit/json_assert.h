/* JSON helpers the unit tests share: test documents written with single
 * quotes (so they read cleanly inside C strings) and a value comparison that
 * prints both sides when it fails. Include after <cmocka.h>. */
#ifndef GPUOP_TESTS_JSON_ASSERT_H
#define GPUOP_TESTS_JSON_ASSERT_H

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

/* Parses JSON whose strings use ' for ", failing the test on bad input. */
static inline json_t *sq_load(const char *squoted)
{
    char *text = strdup(squoted);
    assert_non_null(text);
    for (char *c = text; *c; c++)
        if (*c == '\'') *c = '"';
    json_error_t jerr;
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    if (!v) print_error("bad test JSON: %s\n%s\n", jerr.text, text);
    free(text);
    assert_non_null(v);
    return v;
}

/* sq_load of a printf-formatted text (at most 8 KiB). */
static inline json_t *sqf(const char *fmt, ...) GP_PRINTF(1, 2);
static inline json_t *sqf(const char *fmt, ...)
{
    char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof buf);
    return sq_load(buf);
}

/* Compact text with sorted keys, for messages. */
static inline char *json_test_dump(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
}

/* Equal as values (member order aside); prints both when not. */
static inline void assert_json_equal(const json_t *actual, const json_t *expected)
{
    if (json_equal(actual, expected)) return;
    char *a = json_test_dump(actual), *e = json_test_dump(expected);
    print_error("expected %s\n     got %s\n", e, a);
    free(a);
    free(e);
    fail();
}

#endif
