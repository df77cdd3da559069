/* libFuzzer target for kube_protobuf_decode, the Kubernetes protobuf body decoder.
 *
 * The input is a request body; when it does not start with "k8s\0" the magic
 * is put in front, so that mutations reach the envelope and object decoders
 * instead of dying at the first check. The body is copied to a buffer of
 * exactly its size, so ASan sees any read past it.
 *
 * For every input:
 *   - a failure must come with a message that starts "protobuf: " and is
 *     NUL-terminated inside the error buffer;
 *   - a success must be an object whose apiVersion and kind are strings and
 *     whose metadata is an object; json_dumps must encode it (so every
 *     string in it is valid UTF-8), and the text must load back to an equal
 *     value.
 * A broken promise ends in __builtin_trap() after a note on stderr, so that
 * libFuzzer saves the input. Seeds: fuzz/seeds-protobuf/, bodies recorded
 * from kubectl 1.32.4 (see tests/unit/test_kube_protobuf.c). Build and run
 * with fuzz/run.sh. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kube/protobuf.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "protobuf_fuzz: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    __builtin_trap();
}

static void check_error(const gp_error *err)
{
    size_t len = strnlen(err->text, sizeof err->text);
    if (len == sizeof err->text) fail("error text is not NUL-terminated");
    if (strncmp(err->text, "protobuf: ", 10) != 0 || len <= 10)
        fail("error without the protobuf prefix or a reason: '%s'", err->text);
}

static void check_object(json_t *v)
{
    if (!json_is_object(v)) fail("the result is not an object");
    if (!json_is_string(json_object_get(v, "apiVersion"))) fail("apiVersion is not a string");
    if (!json_is_string(json_object_get(v, "kind"))) fail("kind is not a string");
    if (!json_is_object(json_object_get(v, "metadata"))) fail("metadata is not an object");
    char *text = json_dumps(v, JSON_COMPACT);
    if (!text) fail("json_dumps failed on a decoded object");
    json_error_t jerr;
    /* Strings may hold NUL (valid UTF-8, kept as kubectl sends it). */
    json_t *back = json_loads(text, JSON_ALLOW_NUL, &jerr);
    if (!back) fail("the dump does not load back: %s\n%s", jerr.text, text);
    if (!json_equal(back, v)) fail("the dump loads back as another value:\n%s", text);
    json_decref(back);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t prefix = kube_is_protobuf(data, size) ? 0 : KUBE_PROTOBUF_MAGIC_LEN;
    uint8_t *body = malloc(prefix + size ? prefix + size : 1);
    if (!body) return 0;
    memcpy(body, KUBE_PROTOBUF_MAGIC, prefix);
    if (size) memcpy(body + prefix, data, size);
    gp_error err = {0};
    json_t *v = kube_protobuf_decode(body, prefix + size, &err);
    if (v)
        check_object(v);
    else
        check_error(&err);
    json_decref(v);
    free(body);
    return 0;
}
