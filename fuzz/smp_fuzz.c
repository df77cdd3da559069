/* libFuzzer target for kube_strategic_merge_patch (src/kube/smp.c).
 *
 * The input is one byte that picks the kind, then two JSON texts, a target
 * and a patch, split at the first NUL or newline byte. The byte is taken
 * modulo 12: '0'..'9' are Pod, Node, Namespace, ConfigMap, Event,
 * ServiceAccount, DaemonSet, ControllerRevision, RuntimeClass, Lease; ':' is
 * a kind without a schema and ';' no kind at all. Either text failing to
 * parse skips the input. Then:
 *
 * - the inputs are unchanged, and a refusal comes with a message;
 * - a result is an object with no "$..." key (when the target has none);
 * - the same call gives the same answer twice;
 * - the empty patch {} gives back a value equal to the target;
 * - without a schema, a patch with no "$..." key and no null inside a list
 *   gives what the JSON merge patch gives (kube_merge_patch): lists replace,
 *   objects merge, null deletes.
 *
 * A broken invariant prints the texts and traps, so libFuzzer keeps the
 * input as a crash. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kube/patch.h"
#include "kube/smp.h"

static const char *const kinds[] = {
    "Pod",          "Node",           "Namespace", "ConfigMap",
    "Event",        "ServiceAccount", "DaemonSet", "ControllerRevision",
    "RuntimeClass", "Lease",          "Widget",    NULL,
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

static void print_value(const char *what, const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    fprintf(stderr, "%s: %s\n", what, text ? text : "(null)");
    free(text);
}

static void check(bool ok, const char *what, const char *kind, const json_t *target,
                  const json_t *patch, const json_t *result)
{
    if (ok) return;
    fprintf(stderr, "smp_fuzz: invariant broken: %s (kind %s)\n", what, kind ? kind : "NULL");
    print_value("target", target);
    print_value("patch", patch);
    print_value("result", result);
    __builtin_trap();
}

static bool has_dollar_key(const json_t *v)
{
    const char *key;
    json_t *m;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, m)
        {
            if (key[0] == '$' || has_dollar_key(m)) return true;
        }
    } else if (json_is_array(v)) {
        json_array_foreach((json_t *)v, i, m)
        {
            if (has_dollar_key(m)) return true;
        }
    }
    return false;
}

/* A null anywhere inside a list (at any depth below it). */
static bool has_null_in_list(const json_t *v, bool in_list)
{
    const char *key;
    json_t *m;
    size_t i;
    if (json_is_null(v)) return in_list;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, m)
        {
            if (has_null_in_list(m, in_list)) return true;
        }
    } else if (json_is_array(v)) {
        json_array_foreach((json_t *)v, i, m)
        {
            if (has_null_in_list(m, true)) return true;
        }
    }
    return false;
}

static char *dump(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
}

static void fuzz_smp(const json_t *target, const json_t *patch, const char *kind)
{
    char *target_before = dump(target), *patch_before = dump(patch);
    gp_error err = {0};
    json_t *out = kube_strategic_merge_patch(target, patch, kind, &err);
    char *target_after = dump(target), *patch_after = dump(patch);
    check(strcmp(target_before, target_after) == 0, "the target changed", kind, target, patch, out);
    check(strcmp(patch_before, patch_after) == 0, "the patch changed", kind, target, patch, out);
    free(target_before);
    free(patch_before);
    free(target_after);
    free(patch_after);

    bool objects = json_is_object(target) && json_is_object(patch);
    check(!objects || out || err.text[0], "a refusal without a message", kind, target, patch, out);
    check(objects || !out, "a non-object input accepted", kind, target, patch, out);
    if (out) {
        check(json_is_object(out), "the result is not an object", kind, target, patch, out);
        check(has_dollar_key(target) || !has_dollar_key(out), "a $ key in the result", kind, target,
              patch, out);
    }

    gp_error again_err = {0};
    json_t *again = kube_strategic_merge_patch(target, patch, kind, &again_err);
    check(out ? again && json_equal(out, again) : !again && strcmp(err.text, again_err.text) == 0,
          "a second call answered differently", kind, target, patch, again);
    json_decref(again);

    if (json_is_object(target)) {
        json_t *empty = json_object();
        json_t *same = kube_strategic_merge_patch(target, empty, kind, NULL);
        check(same && json_equal(same, target), "{} changed the target", kind, target, empty, same);
        json_decref(same);
        json_decref(empty);
    }

    bool schemaless = !kind || strcmp(kind, "Widget") == 0;
    if (schemaless && objects && !has_dollar_key(patch) && !has_null_in_list(patch, false)) {
        json_t *merged = kube_merge_patch(target, patch);
        check(out && merged && json_equal(out, merged), "differs from the JSON merge patch", kind,
              target, patch, out);
        json_decref(merged);
    }
    json_decref(out);
}

static json_t *load(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    return json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const char *kind = kinds[data[0] % N_KINDS];
    data++;
    size--;
    size_t cut = 0;
    while (cut < size && data[cut] != '\0' && data[cut] != '\n')
        cut++;
    if (cut == size) return 0;
    json_t *target = load(data, cut);
    json_t *patch = target ? load(data + cut + 1, size - cut - 1) : NULL;
    if (target && patch) fuzz_smp(target, patch, kind);
    json_decref(target);
    json_decref(patch);
    return 0;
}
