/* Request bodies read as kube-apiserver 1.32 reads them: into the Go types
 * of the served kinds, with their error texts.
 *
 * kube-apiserver decodes a body with sigs.k8s.io/json (encoding/json, case
 * sensitive): a value of the wrong JSON type is `json: cannot unmarshal
 * number into Go struct field ConfigMap.data of type string` (the first
 * such error; decoding goes on), a type with its own UnmarshalJSON
 * (resource.Quantity, intstr.IntOrString, metav1.Time) stops it with its
 * own error, and with fieldValidation Strict or Warn the fields no Go
 * struct has and the fields given twice are strict errors (`unknown field
 * "spec.containers[0].bogus"`, `duplicate field "metadata.name"`),
 * reported only when nothing else failed. A strategic merge patch is
 * turned into the object by runtime.DefaultUnstructuredConverter instead,
 * which words type errors its own way (`cannot convert int64 to string`).
 *
 * The Go types come from Kubernetes' OpenAPI v1.32.0
 * (data/kube-types-1.32.txt, made by scripts/gen-kube-types.py and
 * compiled in); a body is checked in one walk of its parsed JSON. */
#ifndef GPUOP_APISERVER_DECODE_H
#define GPUOP_APISERVER_DECODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The Go type a kind decodes into (opaque). */
typedef struct as_gotype as_gotype;

/* The type of `kind` ("Pod", "DaemonSet") in `group` ("" for core; events
 * of events.k8s.io are their own type), of the bodies "Binding",
 * "DeleteOptions", "SelfSubjectAccessReview" and "SelfSubjectRulesReview",
 * "patch" for the map[string]interface{} a patch is first read into, or
 * NULL for a kind the table does not have. */
const as_gotype *as_gotype_find(const char *group, const char *kind);

typedef enum as_decoder {
    AS_DECODE_JSON,        /* a body: encoding/json's texts */
    AS_DECODE_UNSTRUCTURED /* a patched map: the unstructured converter's */
} as_decoder;

typedef struct as_decode_result {
    /* The error that fails the decoding (caller frees), or NULL. */
    char *error;
    /* With strict: the strict errors, in the order met, each once (at most
     * 100, as sigs.k8s.io/json keeps), e.g. "unknown field \"spec.bogus\"";
     * an array (caller decrefs), empty when there are none. */
    json_t *strict;
    /* How many fields no Go struct has were met (strict or not). */
    size_t unknown;
} as_decode_result;

/* Checks obj against type t. strict collects unknown fields. Returns 0
 * when obj decodes (strict errors aside), -1 with r->error set. r->strict
 * is always set (NULL only when out of memory). */
int as_decode_check(const json_t *obj, const as_gotype *t, as_decoder decoder, bool strict,
                    as_decode_result *r);

/* Drops from obj the fields no Go struct of t has, as decoding it into the
 * structs and writing it out again drops them (what Warn and Ignore store). */
void as_decode_prune(json_t *obj, const as_gotype *t);

/* Adds to `strict` the duplicate fields of the JSON text (len bytes) read
 * as type t ("duplicate field \"metadata.name\""), as sigs.k8s.io/json
 * finds them: in structs and maps, not in the values of unknown fields or
 * of free-form ones. For a text jansson refused with JSON_REJECT_DUPLICATES
 * (the slow path: other bodies have none). Returns how many it added. */
size_t as_decode_duplicates(const char *text, size_t len, const as_gotype *t, json_t *strict);

/* "strict decoding error: e1, e2" (runtime.NewStrictDecodingError), for a
 * non-empty list of strict errors; caller frees. */
char *as_decode_strict_message(const json_t *strict);

/* Go's fmt %+v of a value decoded into map[string]interface{} (what a
 * strategic merge patch's error shows): map[a:1 b:map[c:x]] with sorted
 * keys, [x y] for lists, <nil> for null; caller frees. */
char *as_decode_go_value(const json_t *v);

void as_decode_result_clear(as_decode_result *r);

#endif
