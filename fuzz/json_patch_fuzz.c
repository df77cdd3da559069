/* libFuzzer target for kube_merge_patch and kube_json_patch (src/kube/patch.c).
 *
 * The input is two JSON texts, a document and a patch, split at the first
 * NUL or newline byte (so one-line JSON seeds read naturally). Either text
 * failing to parse skips the input. Then:
 *
 * - merge patch: the inputs are unchanged; the result is idempotent
 *   (merging the patch again changes nothing); a non-object patch comes back
 *   equal; an object patch leaves none of its null members in the result;
 *   merging an object with itself gives it back without nulls.
 * - JSON patch (when the patch is an array): the inputs are unchanged; a
 *   failure comes with a message naming the operation; and patches built
 *   from the document itself must succeed: test of the whole document, and
 *   for each top-level member test, remove, add back, test, copy and move,
 *   which exercises pointer escaping on whatever keys the fuzzer invents;
 *   for each leading array element the same plus an append with "-".
 *
 * A broken invariant prints both texts and traps, so libFuzzer keeps the
 * input as a crash. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kube/patch.h"

/* Keys to build pointer patches from; more adds time, not coverage. */
#define MAX_MEMBER_CHECKS 8

static void print_value(const char *what, const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    fprintf(stderr, "%s: %s\n", what, text ? text : "(null)");
    free(text);
}

static void check(bool ok, const char *what, const json_t *doc, const json_t *patch)
{
    if (ok) return;
    fprintf(stderr, "json_patch_fuzz: invariant broken: %s\n", what);
    print_value("document", doc);
    print_value("patch", patch);
    __builtin_trap();
}

/* ---- merge patch ---- */

/* `v` with every null object member removed, recursively through objects
 * only: RFC 7386 never looks inside arrays. */
static json_t *without_nulls(const json_t *v)
{
    if (!json_is_object(v)) return json_deep_copy(v);
    json_t *out = json_object();
    const char *key;
    size_t key_len;
    json_t *member;
    json_object_keylen_foreach((json_t *)v, key, key_len, member)
    {
        if (json_is_null(member)) continue;
        json_object_setn_new(out, key, key_len, without_nulls(member));
    }
    return out;
}

static bool has_null_member_of(const json_t *result, const json_t *patch)
{
    if (!json_is_object(result)) return false;
    const char *key;
    size_t key_len;
    json_t *member;
    json_object_keylen_foreach((json_t *)patch, key, key_len, member)
    {
        const json_t *got = json_object_getn(result, key, key_len);
        if (json_is_null(member) && got) return true;
        if (json_is_object(member) && got && has_null_member_of(got, member)) return true;
    }
    return false;
}

static void fuzz_merge(const json_t *doc, const json_t *patch)
{
    json_t *doc_copy = json_deep_copy(doc), *patch_copy = json_deep_copy(patch);
    json_t *result = kube_merge_patch(doc, patch);
    check(result != NULL, "kube_merge_patch returned NULL", doc, patch);
    check(json_equal(doc, doc_copy), "merge patch changed the target", doc, patch);
    check(json_equal(patch, patch_copy), "merge patch changed the patch", doc, patch);

    json_t *again = kube_merge_patch(result, patch);
    check(json_equal(again, result), "merge patch is not idempotent", doc, patch);
    if (!json_is_object(patch))
        check(json_equal(result, patch), "a non-object patch did not replace", doc, patch);
    else
        check(!has_null_member_of(result, patch), "a null member survived", doc, patch);

    if (json_is_object(doc)) {
        json_t *self = kube_merge_patch(doc, doc);
        json_t *expected = without_nulls(doc);
        check(json_equal(self, expected), "merge(x, x) is not x without nulls", doc, doc);
        json_decref(self);
        json_decref(expected);
    }
    json_decref(again);
    json_decref(result);
    json_decref(doc_copy);
    json_decref(patch_copy);
}

/* ---- JSON patch ---- */

/* "/" + the key with ~ as ~0 and / as ~1 (RFC 6901). */
static json_t *pointer_to(const char *key, size_t len)
{
    char *buf = malloc(2 * len + 2);
    if (!buf) return NULL;
    size_t n = 0;
    buf[n++] = '/';
    for (size_t i = 0; i < len; i++) {
        if (key[i] == '~' || key[i] == '/') {
            buf[n++] = '~';
            buf[n++] = key[i] == '~' ? '0' : '1';
        } else {
            buf[n++] = key[i];
        }
    }
    json_t *s = json_stringn(buf, n);
    free(buf);
    return s;
}

static json_t *op(const char *name, const char *from, json_t *path, const json_t *value)
{
    json_t *o = json_object();
    json_object_set_new(o, "op", json_string(name));
    if (from) json_object_set_new(o, "from", json_string(from));
    json_object_set(o, "path", path);
    if (value) json_object_set(o, "value", (json_t *)value);
    return o;
}

/* Applies ops that must succeed and give `expected`. */
static void must_give(const json_t *doc, json_t *ops, const json_t *expected, const char *what)
{
    gp_error err = {0};
    json_t *result = kube_json_patch(doc, ops, &err);
    if (!result) fprintf(stderr, "json_patch_fuzz: %s\n", err.text);
    check(result && json_equal(result, expected), what, doc, ops);
    json_decref(result);
}

/* For one member: test it, remove it, add it back, test again: the document
 * comes back equal (json_equal ignores member order). Then copy it to a new
 * key and move that copy back over it, which must also give the document. */
static void check_member_roundtrip(const json_t *doc, const char *key, size_t key_len,
                                   const json_t *value)
{
    json_t *path = pointer_to(key, key_len);
    if (!path) return;
    json_t *ops = json_array();
    json_array_append_new(ops, op("test", NULL, path, value));
    json_array_append_new(ops, op("remove", NULL, path, NULL));
    json_array_append_new(ops, op("add", NULL, path, value));
    json_array_append_new(ops, op("test", NULL, path, value));
    must_give(doc, ops, doc, "test/remove/add/test of a member did not round-trip");
    json_decref(ops);

    /* A key the document lacks: its own key plus a suffix. */
    char *spare = malloc(key_len + 8);
    if (spare) {
        memcpy(spare, key, key_len);
        memcpy(spare + key_len, "~/spare", 8);
        json_t *spare_path = pointer_to(spare, key_len + 7);
        if (spare_path && !json_object_getn(doc, spare, key_len + 7)) {
            ops = json_array();
            json_array_append_new(ops, op("copy", json_string_value(path), spare_path, NULL));
            json_array_append_new(ops, op("move", json_string_value(spare_path), path, NULL));
            must_give(doc, ops, doc, "copy then move back did not round-trip");
            json_decref(ops);
        }
        json_decref(spare_path);
        free(spare);
    }
    json_decref(path);
}

/* For one element: test, remove, add back at the same index, test; then
 * append a copy with "-" and remove the last element again. */
static void check_element_roundtrip(const json_t *doc, size_t index, const json_t *value)
{
    char text[32];
    snprintf(text, sizeof text, "/%zu", index);
    json_t *path = json_string(text);
    json_t *ops = json_array();
    json_array_append_new(ops, op("test", NULL, path, value));
    json_array_append_new(ops, op("remove", NULL, path, NULL));
    json_array_append_new(ops, op("add", NULL, path, value));
    json_array_append_new(ops, op("test", NULL, path, value));
    json_t *end = json_string("/-");
    snprintf(text, sizeof text, "/%zu", json_array_size(doc));
    json_t *last = json_string(text);
    json_array_append_new(ops, op("add", NULL, end, value));
    json_array_append_new(ops, op("test", NULL, last, value));
    json_array_append_new(ops, op("remove", NULL, last, NULL));
    must_give(doc, ops, doc, "test/remove/add/append/remove of an element did not round-trip");
    json_decref(ops);
    json_decref(last);
    json_decref(end);
    json_decref(path);
}

static void check_patches_from_document(const json_t *doc)
{
    json_t *root = json_string("");
    json_t *ops = json_array();
    json_array_append_new(ops, op("test", NULL, root, doc));
    must_give(doc, ops, doc, "test of the whole document failed");
    json_decref(ops);
    json_decref(root);
    if (json_is_array(doc)) {
        for (size_t i = 0; i < json_array_size(doc) && i < MAX_MEMBER_CHECKS; i++)
            check_element_roundtrip(doc, i, json_array_get(doc, i));
        return;
    }
    if (!json_is_object(doc)) return;

    int checked = 0;
    const char *key;
    size_t key_len;
    json_t *member;
    json_object_keylen_foreach((json_t *)doc, key, key_len, member)
    {
        /* A key with a NUL cannot be named by a pointer; jansson refuses them. */
        if (memchr(key, '\0', key_len)) continue;
        check_member_roundtrip(doc, key, key_len, member);
        if (++checked == MAX_MEMBER_CHECKS) break;
    }
}

static void fuzz_json_patch(const json_t *doc, const json_t *ops)
{
    json_t *doc_copy = json_deep_copy(doc), *ops_copy = json_deep_copy(ops);
    gp_error err = {0};
    json_t *result = kube_json_patch(doc, ops, &err);
    check(json_equal(doc, doc_copy), "JSON patch changed the document", doc, ops);
    check(json_equal(ops, ops_copy), "JSON patch changed the patch", doc, ops);
    if (!result)
        check(strncmp(err.text, "JSON patch operation ", 21) == 0,
              "a failure without an operation in its message", doc, ops);
    else /* true, false and null are jansson singletons: copies are the same pointer */
        check(result != doc || json_is_boolean(doc) || json_is_null(doc),
              "JSON patch returned its input", doc, ops);
    json_decref(result);
    json_decref(doc_copy);
    json_decref(ops_copy);
}

static json_t *load(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    return json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t cut = 0;
    while (cut < size && data[cut] != '\0' && data[cut] != '\n')
        cut++;
    if (cut == size) return 0;
    json_t *doc = load(data, cut);
    json_t *patch = doc ? load(data + cut + 1, size - cut - 1) : NULL;
    if (doc && patch) {
        fuzz_merge(doc, patch);
        if (json_is_array(patch)) fuzz_json_patch(doc, patch);
        check_patches_from_document(doc);
    }
    json_decref(doc);
    json_decref(patch);
    return 0;
}
