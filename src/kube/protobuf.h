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
 * can-i` sends: their specs, not their status); DeleteOptions, as v1 or
 * meta.k8s.io/v1 (a typed client's DELETE body), and policy/v1 Eviction
 * (both from `kubectl drain`). The JSON follows Go's
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
#include <stdint.h>

#include "util/buf.h"
#include "util/error.h"

/* ---- schemas ----
 *
 * The decoder is driven by a table per message type, so that other
 * Kubernetes protobuf APIs read the same way: the CRI's RuntimeService
 * answers (k8s.io/cri-api runtime/v1 api.proto) are decoded with it by
 * containerd/cri.c. A field is its number, its JSON member name, its type
 * and flags; members come out in the table's order. The rules above hold
 * for every schema: an unknown number is skipped, a singular "" or 0 is
 * absent (unless KUBE_PB_ALWAYS / KUBE_PB_ZERO), false is kept, an empty
 * singular message is absent. A message has at most 16 fields, and a
 * schema may nest at most 8 messages deep. */
typedef enum kube_pb_type {
    KUBE_PB_STRING,
    KUBE_PB_INT64, /* any varint integer: int32, int64, uint32, enum */
    KUBE_PB_BOOL,
    KUBE_PB_MESSAGE,
    KUBE_PB_TIME,       /* metav1.Time: {1 seconds, 2 nanos} -> RFC 3339 */
    KUBE_PB_STRING_MAP, /* map<string, string> */
    KUBE_PB_BYTES_MAP,  /* map<string, bytes> -> base64 values */
    KUBE_PB_FIELDS_V1,  /* metav1.FieldsV1: {1 raw JSON} -> that JSON */
} kube_pb_type;

enum {
    KUBE_PB_REPEATED = 1,
    KUBE_PB_ALWAYS = 2, /* Go prints the member even when it is "" */
    KUBE_PB_ZERO = 4,   /* a Go pointer: 0 is a value, not absence */
};

typedef struct kube_pb_message kube_pb_message;

typedef struct kube_pb_field {
    uint32_t num;
    const char *name;
    kube_pb_type type;
    unsigned flags;
    const kube_pb_message *msg; /* for KUBE_PB_MESSAGE */
} kube_pb_field;

struct kube_pb_message {
    const kube_pb_field *fields;
    size_t count;
};

/* A schema from an array of fields: KUBE_PB_SCHEMA(my_fields). */
#define KUBE_PB_SCHEMA(rows)                                                                       \
    {                                                                                              \
        rows, sizeof rows / sizeof rows[0]                                                         \
    }

/* One message of type `m` (no envelope, no magic), e.g. the payload of a
 * gRPC answer. Returns a new object the caller owns ({} at least), or NULL
 * with `err` naming the field and byte offset of what is wrong. */
json_t *kube_protobuf_decode_message(const void *bytes, size_t len, const kube_pb_message *m,
                                     gp_error *err);

/* The encoder side, for the few small messages gpuop writes (a CRI
 * StatusRequest, the simulated containerd's answers in src/agents/): field
 * `num` appended to `b` in wire format, always written (what to leave out
 * at its zero value is the caller's choice). They return gp_buf's result:
 * 0, or -1 once the buffer failed. */
int kube_protobuf_put_varint(gp_buf *b, uint64_t v); /* a bare varint, no tag */
int kube_protobuf_put_bool(gp_buf *b, uint32_t num, bool value);
int kube_protobuf_put_uint(gp_buf *b, uint32_t num, uint64_t value);
/* A length-delimited field: a string, bytes or an embedded message. */
int kube_protobuf_put_bytes(gp_buf *b, uint32_t num, const void *bytes, size_t len);
int kube_protobuf_put_string(gp_buf *b, uint32_t num, const char *value, size_t len);

/* Reading a message one field at a time, in wire order, for a reader with
 * no schema (the simulated containerd reads its requests so): the cursor
 * covers the bytes left. */
typedef struct kube_pb_cursor {
    const uint8_t *p, *end;
} kube_pb_cursor;

typedef struct kube_pb_wire {
    uint32_t num;
    unsigned wire;        /* 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
    uint64_t varint;      /* wire 0 */
    const uint8_t *bytes; /* wire 2: the value's bytes, inside the cursor's */
    size_t len;
} kube_pb_wire;

/* 1 with the next field in *f (a fixed-width value is skipped), 0 at the
 * end, -1 when the bytes are not protobuf (a truncated varint or length, a
 * group, wire type 6 or 7), with `err` (may be NULL) saying what and where,
 * counted from the cursor's first use... as from `start`, the message's
 * first byte. */
int kube_protobuf_next(kube_pb_cursor *c, const uint8_t *start, kube_pb_wire *f, gp_error *err);

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
