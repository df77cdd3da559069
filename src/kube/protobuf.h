/* Kubernetes protobuf request bodies, decoded to the JSON object the API
 * server would have read.
 *
 * kubectl 1.32's typed generators (`kubectl create namespace|configmap|
 * secret|serviceaccount`) POST `application/vnd.kubernetes.protobuf` and
 * never fall back to JSON, so the embedded API server must read this one
 * shape: the magic "k8s\0", then a runtime.Unknown envelope (typeMeta
 * {apiVersion, kind}, raw object bytes, contentEncoding, contentType), with
 * field numbers from k8s.io/api and apimachinery generated.proto (v0.32.0).
 *
 * Kinds: v1 Namespace, ConfigMap, Secret and ServiceAccount, every field of
 * theirs and of ObjectMeta (managedFields included); authorization.k8s.io/v1
 * SelfSubjectAccessReview and SelfSubjectRulesReview (what `kubectl auth
 * can-i` sends: their specs, not their status). The JSON follows Go's
 * encoding of the same object, with one difference: kubectl writes empty
 * strings, zero generations and empty messages explicitly, and they come out
 * absent rather than as "" / 0 / {} / null. Kept as written: false booleans
 * (they are pointers in Go), empty strings inside arrays and map values (a
 * label may be ""), and the members Go always prints (an ownerReference's
 * apiVersion, kind, name and uid; a namespace condition's type and status).
 * `metadata` is always there, {} at worst. Map keys are sorted (Go's
 * encoding/json order); bytes fields (Secret data, ConfigMap binaryData)
 * become standard base64 with padding; times become RFC 3339 in UTC to the
 * second, as metav1.Time prints them. Strings may hold NUL (valid UTF-8; a
 * ConfigMap file with one goes to data): read them with json_string_length.
 *
 * Protobuf rules kept: unknown field numbers are skipped by wire type (a newer
 * kubectl may add fields); a singular field written twice keeps its last
 * value, except an embedded message (metadata, spec...), whose occurrences
 * merge; maps keep the last value of a key. contentEncoding and contentType
 * are ignored, as the API server's protobuf serializer ignores them.
 * Refused: groups (wire types 3 and 4), wire types 6 and 7, a known field
 * with the wrong wire type, field number 0, varints over 10 bytes or 64 bits,
 * a length past the end of its message, strings that are not UTF-8, map keys
 * with a NUL byte, times outside 0001..9999, a managedFields fieldsV1 that is
 * not JSON, and an envelope without typeMeta (both apiVersion and kind) or
 * without raw (an empty raw is an empty object).
 *
 * Decoding never recurses deeper than the schema (at most 5 messages) and
 * never reads outside `body`. */
#ifndef GPUOP_KUBE_PROTOBUF_H
#define GPUOP_KUBE_PROTOBUF_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* The four bytes every Kubernetes protobuf body starts with. */
#define KUBE_PROTOBUF_MAGIC     "k8s\0"
#define KUBE_PROTOBUF_MAGIC_LEN 4

/* `body` is the whole request body, magic included. Returns a new object
 * {"apiVersion":..,"kind":..,"metadata":{..},...} the caller owns, or NULL
 * with `err` saying what is wrong and at which byte offset of `body`
 * ("protobuf: truncated varint at byte 17", "protobuf: kind Pod is not
 * supported; send JSON"). */
json_t *kube_protobuf_decode(const void *body, size_t len, gp_error *err);

/* True when `body` starts with the protobuf magic. */
bool kube_is_protobuf(const void *body, size_t len);

#endif
