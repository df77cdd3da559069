/* Kubernetes protobuf bodies to JSON.
 *
 * The decoder is driven by small schema tables (one per message type, its
 * fields listed in Go's JSON order), so adding a field is one table row, and
 * recursion follows the tables, never the input: an attacker cannot nest
 * deeper than the schema does. Every read is checked against the end of the
 * message that contains it; offsets in errors count from the first byte of
 * the body, magic included. */
#include "kube/protobuf.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/time.h"

/* The longest piece of the input an error message quotes. */
#define SHOWN 64
/* Dotted field paths in messages ("metadata.ownerReferences.uid"). */
#define PATH_LEN 96
/* The most fields any schema message below has. */
#define MAX_FIELDS 16
/* Unknown > object > ObjectMeta > managedFields entry > Time is the deepest
 * chain; the guard only catches a schema table that loops. */
#define MAX_DEPTH 8

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* ---- schema ------------------------------------------------------------------ */

/* k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto */

static const kube_pb_field owner_reference_fields[] = {
    {5, "apiVersion", KUBE_PB_STRING, KUBE_PB_ALWAYS, NULL},
    {1, "kind", KUBE_PB_STRING, KUBE_PB_ALWAYS, NULL},
    {3, "name", KUBE_PB_STRING, KUBE_PB_ALWAYS, NULL},
    {4, "uid", KUBE_PB_STRING, KUBE_PB_ALWAYS, NULL},
    {6, "controller", KUBE_PB_BOOL, 0, NULL},
    {7, "blockOwnerDeletion", KUBE_PB_BOOL, 0, NULL},
};
static const kube_pb_message owner_reference = KUBE_PB_SCHEMA(owner_reference_fields);

static const kube_pb_field managed_fields_entry_fields[] = {
    {1, "manager", KUBE_PB_STRING, 0, NULL},     {2, "operation", KUBE_PB_STRING, 0, NULL},
    {3, "apiVersion", KUBE_PB_STRING, 0, NULL},  {4, "time", KUBE_PB_TIME, 0, NULL},
    {6, "fieldsType", KUBE_PB_STRING, 0, NULL},  {7, "fieldsV1", KUBE_PB_FIELDS_V1, 0, NULL},
    {8, "subresource", KUBE_PB_STRING, 0, NULL},
};
static const kube_pb_message managed_fields_entry = KUBE_PB_SCHEMA(managed_fields_entry_fields);

static const kube_pb_field object_meta_fields[] = {
    {1, "name", KUBE_PB_STRING, 0, NULL},
    {2, "generateName", KUBE_PB_STRING, 0, NULL},
    {3, "namespace", KUBE_PB_STRING, 0, NULL},
    {4, "selfLink", KUBE_PB_STRING, 0, NULL},
    {5, "uid", KUBE_PB_STRING, 0, NULL},
    {6, "resourceVersion", KUBE_PB_STRING, 0, NULL},
    {7, "generation", KUBE_PB_INT64, 0, NULL},
    {8, "creationTimestamp", KUBE_PB_TIME, 0, NULL},
    {9, "deletionTimestamp", KUBE_PB_TIME, 0, NULL},
    {10, "deletionGracePeriodSeconds", KUBE_PB_INT64, KUBE_PB_ZERO, NULL},
    {11, "labels", KUBE_PB_STRING_MAP, 0, NULL},
    {12, "annotations", KUBE_PB_STRING_MAP, 0, NULL},
    {13, "ownerReferences", KUBE_PB_MESSAGE, KUBE_PB_REPEATED, &owner_reference},
    {14, "finalizers", KUBE_PB_STRING, KUBE_PB_REPEATED, NULL},
    {17, "managedFields", KUBE_PB_MESSAGE, KUBE_PB_REPEATED, &managed_fields_entry},
};
static const kube_pb_message object_meta = KUBE_PB_SCHEMA(object_meta_fields);

/* runtime.TypeMeta (pkg/runtime/generated.proto), not metav1.TypeMeta: the
 * envelope's numbers are apiVersion 1, kind 2. */
static const kube_pb_field type_meta_fields[] = {
    {1, "apiVersion", KUBE_PB_STRING, 0, NULL},
    {2, "kind", KUBE_PB_STRING, 0, NULL},
};
static const kube_pb_message type_meta = KUBE_PB_SCHEMA(type_meta_fields);

/* k8s.io/api/core/v1/generated.proto */

static const kube_pb_field namespace_spec_fields[] = {
    {1, "finalizers", KUBE_PB_STRING, KUBE_PB_REPEATED, NULL},
};
static const kube_pb_message namespace_spec = KUBE_PB_SCHEMA(namespace_spec_fields);

static const kube_pb_field namespace_condition_fields[] = {
    {1, "type", KUBE_PB_STRING, KUBE_PB_ALWAYS, NULL},
    {2, "status", KUBE_PB_STRING, KUBE_PB_ALWAYS, NULL},
    {4, "lastTransitionTime", KUBE_PB_TIME, 0, NULL},
    {5, "reason", KUBE_PB_STRING, 0, NULL},
    {6, "message", KUBE_PB_STRING, 0, NULL},
};
static const kube_pb_message namespace_condition = KUBE_PB_SCHEMA(namespace_condition_fields);

static const kube_pb_field namespace_status_fields[] = {
    {1, "phase", KUBE_PB_STRING, 0, NULL},
    {2, "conditions", KUBE_PB_MESSAGE, KUBE_PB_REPEATED, &namespace_condition},
};
static const kube_pb_message namespace_status = KUBE_PB_SCHEMA(namespace_status_fields);

static const kube_pb_field namespace_fields[] = {
    {1, "metadata", KUBE_PB_MESSAGE, 0, &object_meta},
    {2, "spec", KUBE_PB_MESSAGE, 0, &namespace_spec},
    {3, "status", KUBE_PB_MESSAGE, 0, &namespace_status},
};
static const kube_pb_message namespace_kind = KUBE_PB_SCHEMA(namespace_fields);

static const kube_pb_field config_map_fields[] = {
    {1, "metadata", KUBE_PB_MESSAGE, 0, &object_meta},
    {4, "immutable", KUBE_PB_BOOL, 0, NULL},
    {2, "data", KUBE_PB_STRING_MAP, 0, NULL},
    {3, "binaryData", KUBE_PB_BYTES_MAP, 0, NULL},
};
static const kube_pb_message config_map_kind = KUBE_PB_SCHEMA(config_map_fields);

static const kube_pb_field secret_fields[] = {
    {1, "metadata", KUBE_PB_MESSAGE, 0, &object_meta},
    {5, "immutable", KUBE_PB_BOOL, 0, NULL},
    {2, "data", KUBE_PB_BYTES_MAP, 0, NULL},
    {4, "stringData", KUBE_PB_STRING_MAP, 0, NULL},
    {3, "type", KUBE_PB_STRING, 0, NULL},
};
static const kube_pb_message secret_kind = KUBE_PB_SCHEMA(secret_fields);

static const kube_pb_field object_reference_fields[] = {
    {1, "kind", KUBE_PB_STRING, 0, NULL},       {2, "namespace", KUBE_PB_STRING, 0, NULL},
    {3, "name", KUBE_PB_STRING, 0, NULL},       {4, "uid", KUBE_PB_STRING, 0, NULL},
    {5, "apiVersion", KUBE_PB_STRING, 0, NULL}, {6, "resourceVersion", KUBE_PB_STRING, 0, NULL},
    {7, "fieldPath", KUBE_PB_STRING, 0, NULL},
};
static const kube_pb_message object_reference = KUBE_PB_SCHEMA(object_reference_fields);

static const kube_pb_field local_object_reference_fields[] = {
    {1, "name", KUBE_PB_STRING, 0, NULL},
};
static const kube_pb_message local_object_reference = KUBE_PB_SCHEMA(local_object_reference_fields);

static const kube_pb_field service_account_fields[] = {
    {1, "metadata", KUBE_PB_MESSAGE, 0, &object_meta},
    {2, "secrets", KUBE_PB_MESSAGE, KUBE_PB_REPEATED, &object_reference},
    {3, "imagePullSecrets", KUBE_PB_MESSAGE, KUBE_PB_REPEATED, &local_object_reference},
    {4, "automountServiceAccountToken", KUBE_PB_BOOL, 0, NULL},
};
static const kube_pb_message service_account_kind = KUBE_PB_SCHEMA(service_account_fields);

/* authorization.k8s.io/v1: what `kubectl auth can-i` sends */
static const kube_pb_field resource_attributes_fields[] = {
    {1, "namespace", KUBE_PB_STRING, 0, NULL}, {2, "verb", KUBE_PB_STRING, 0, NULL},
    {3, "group", KUBE_PB_STRING, 0, NULL},     {4, "version", KUBE_PB_STRING, 0, NULL},
    {5, "resource", KUBE_PB_STRING, 0, NULL},  {6, "subresource", KUBE_PB_STRING, 0, NULL},
    {7, "name", KUBE_PB_STRING, 0, NULL},
};
static const kube_pb_message resource_attributes = KUBE_PB_SCHEMA(resource_attributes_fields);

static const kube_pb_field non_resource_attributes_fields[] = {
    {1, "path", KUBE_PB_STRING, 0, NULL},
    {2, "verb", KUBE_PB_STRING, 0, NULL},
};
static const kube_pb_message non_resource_attributes =
    KUBE_PB_SCHEMA(non_resource_attributes_fields);

static const kube_pb_field access_review_spec_fields[] = {
    {1, "resourceAttributes", KUBE_PB_MESSAGE, 0, &resource_attributes},
    {2, "nonResourceAttributes", KUBE_PB_MESSAGE, 0, &non_resource_attributes},
};
static const kube_pb_message access_review_spec = KUBE_PB_SCHEMA(access_review_spec_fields);

static const kube_pb_field access_review_fields[] = {
    {1, "metadata", KUBE_PB_MESSAGE, 0, &object_meta},
    {2, "spec", KUBE_PB_MESSAGE, 0, &access_review_spec},
};
static const kube_pb_message access_review_kind = KUBE_PB_SCHEMA(access_review_fields);

static const kube_pb_field rules_review_spec_fields[] = {
    {1, "namespace", KUBE_PB_STRING, 0, NULL},
};
static const kube_pb_message rules_review_spec = KUBE_PB_SCHEMA(rules_review_spec_fields);

static const kube_pb_field rules_review_fields[] = {
    {1, "metadata", KUBE_PB_MESSAGE, 0, &object_meta},
    {2, "spec", KUBE_PB_MESSAGE, 0, &rules_review_spec},
};
static const kube_pb_message rules_review_kind = KUBE_PB_SCHEMA(rules_review_fields);

/* meta/v1 (apimachinery pkg/apis/meta/v1/generated.proto): what a typed
 * client's DELETE sends as its body, in the client's own group version
 * (`kubectl drain` deleting pods where eviction is not served). */
static const kube_pb_field preconditions_fields[] = {
    {1, "uid", KUBE_PB_STRING, 0, NULL},
    {2, "resourceVersion", KUBE_PB_STRING, 0, NULL},
};
static const kube_pb_message preconditions = KUBE_PB_SCHEMA(preconditions_fields);

static const kube_pb_field delete_options_fields[] = {
    {1, "gracePeriodSeconds", KUBE_PB_INT64, KUBE_PB_ZERO, NULL},
    {2, "preconditions", KUBE_PB_MESSAGE, 0, &preconditions},
    {3, "orphanDependents", KUBE_PB_BOOL, 0, NULL},
    {4, "propagationPolicy", KUBE_PB_STRING, 0, NULL},
    {5, "dryRun", KUBE_PB_STRING, KUBE_PB_REPEATED, NULL},
    {6, "ignoreStoreReadErrorWithClusterBreakingPotential", KUBE_PB_BOOL, 0, NULL},
};
static const kube_pb_message delete_options_kind = KUBE_PB_SCHEMA(delete_options_fields);

/* policy/v1 (k8s.io/api/policy/v1/generated.proto): what `kubectl drain`
 * POSTs to pods/eviction. */
static const kube_pb_field eviction_fields[] = {
    {1, "metadata", KUBE_PB_MESSAGE, 0, &object_meta},
    {2, "deleteOptions", KUBE_PB_MESSAGE, 0, &delete_options_kind},
};
static const kube_pb_message eviction_kind = KUBE_PB_SCHEMA(eviction_fields);

static const struct {
    const char *api_version, *kind;
    const kube_pb_message *msg;
} kinds[] = {
    {"policy/v1", "Eviction", &eviction_kind},
    {"v1", "DeleteOptions", &delete_options_kind},
    {"meta.k8s.io/v1", "DeleteOptions", &delete_options_kind},
    {"v1", "Namespace", &namespace_kind},
    {"v1", "ConfigMap", &config_map_kind},
    {"v1", "Secret", &secret_kind},
    {"v1", "ServiceAccount", &service_account_kind},
    {"authorization.k8s.io/v1", "SelfSubjectAccessReview", &access_review_kind},
    {"authorization.k8s.io/v1", "SelfSubjectRulesReview", &rules_review_kind},
};

/* ---- reading the wire format ------------------------------------------------ */

typedef struct {
    const uint8_t *p;
    const uint8_t *end;
} span;

typedef struct {
    const uint8_t *base; /* the body's first byte: offsets count from here */
    gp_error *err;
} ctx;

static size_t at(const ctx *c, const uint8_t *p)
{
    return (size_t)(p - c->base);
}

static size_t span_len(span s)
{
    return (size_t)(s.end - s.p);
}

static int out_of_memory(const ctx *c)
{
    gp_error_set(c->err, NULL, 0, 0, "protobuf: out of memory");
    return -1;
}

/* At most 10 bytes, and the 10th may only carry the 64th bit. */
static int read_varint(const ctx *c, span *s, uint64_t *out)
{
    const uint8_t *start = s->p;
    uint64_t v = 0;
    for (unsigned i = 0;; i++) {
        if (s->p == s->end) {
            gp_error_set(c->err, NULL, 0, 0, "protobuf: truncated varint at byte %zu",
                         at(c, start));
            return -1;
        }
        uint8_t b = *s->p++;
        if (i == 9 && b > 1) {
            gp_error_set(c->err, NULL, 0, 0, "protobuf: varint at byte %zu is longer than 64 bits",
                         at(c, start));
            return -1;
        }
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
}

/* Groups (3, 4) are refused outright: no Kubernetes type uses them, and
 * skipping one would take a nested scan for its end tag. */
static int read_tag(const ctx *c, span *s, uint32_t *num, unsigned *wt)
{
    const uint8_t *start = s->p;
    uint64_t key;
    if (read_varint(c, s, &key) < 0) return -1;
    uint64_t n = key >> 3;
    unsigned w = (unsigned)(key & 7);
    if (n == 0 || n > 0x1fffffff) {
        gp_error_set(c->err, NULL, 0, 0, "protobuf: invalid field number %" PRIu64 " at byte %zu",
                     n, at(c, start));
        return -1;
    }
    if (w == 3 || w == 4) {
        gp_error_set(c->err, NULL, 0, 0,
                     "protobuf: field %" PRIu64 " at byte %zu is a group (wire type %u); groups "
                     "are not supported",
                     n, at(c, start), w);
        return -1;
    }
    if (w == 6 || w == 7) {
        gp_error_set(c->err, NULL, 0, 0, "protobuf: invalid wire type %u at byte %zu", w,
                     at(c, start));
        return -1;
    }
    *num = (uint32_t)n;
    *wt = w;
    return 0;
}

/* A length-delimited value: its length, then that many bytes of `s`. */
static int read_len(const ctx *c, span *s, const char *what, span *out)
{
    const uint8_t *start = s->p;
    uint64_t n;
    if (read_varint(c, s, &n) < 0) return -1;
    size_t left = span_len(*s);
    if (n > left) {
        gp_error_set(c->err, NULL, 0, 0,
                     "protobuf: %s: length %" PRIu64 " at byte %zu runs past the end of its "
                     "message (%zu bytes left)",
                     what, n, at(c, start), left);
        return -1;
    }
    out->p = s->p;
    out->end = s->p + n;
    s->p = out->end;
    return 0;
}

static int skip_fixed(const ctx *c, span *s, size_t n)
{
    if (span_len(*s) < n) {
        gp_error_set(c->err, NULL, 0, 0, "protobuf: truncated %zu-byte value at byte %zu", n,
                     at(c, s->p));
        return -1;
    }
    s->p += n;
    return 0;
}

/* An unknown field: a newer kubectl may send fields this decoder predates. */
static int skip_value(const ctx *c, span *s, unsigned wt)
{
    uint64_t ignored;
    span value;
    switch (wt) {
    case WT_VARINT:
        return read_varint(c, s, &ignored);
    case WT_I64:
        return skip_fixed(c, s, 8);
    case WT_LEN:
        return read_len(c, s, "unknown field", &value);
    default: /* WT_I32; read_tag let nothing else through */
        return skip_fixed(c, s, 4);
    }
}

static int wrong_wire_type(const ctx *c, const char *path, unsigned got, unsigned want,
                           const uint8_t *tag_at)
{
    gp_error_set(c->err, NULL, 0, 0, "protobuf: %s at byte %zu has wire type %u, expected %u", path,
                 at(c, tag_at), got, want);
    return -1;
}

/* ---- values ------------------------------------------------------------------- */

/* RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF; the same
 * rule jansson applies, checked here so that the error can say where. */
static bool utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t b = s[i];
        if (b < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint32_t cp, min;
        if ((b & 0xe0) == 0xc0) {
            len = 2, cp = b & 0x1f, min = 0x80;
        } else if ((b & 0xf0) == 0xe0) {
            len = 3, cp = b & 0x0f, min = 0x800;
        } else if ((b & 0xf8) == 0xf0) {
            len = 4, cp = b & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if (n - i < len) return false;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80) return false;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
        i += len;
    }
    return true;
}

/* Go's proto code would take any bytes and its JSON encoder would turn bad
 * ones into U+FFFD; refusing is plainer, and kubectl puts non-UTF-8 data in
 * binaryData anyway. NUL is valid UTF-8 and kept (a file with one goes to
 * ConfigMap data). */
static int make_string(const ctx *c, span s, const char *path, json_t **out)
{
    if (!utf8_valid(s.p, span_len(s))) {
        gp_error_set(c->err, NULL, 0, 0, "protobuf: %s at byte %zu is not valid UTF-8", path,
                     at(c, s.p));
        return -1;
    }
    *out = json_stringn_nocheck((const char *)s.p, span_len(s));
    return *out ? 0 : out_of_memory(c);
}

/* Standard alphabet with padding, as Go's encoding/json writes []byte. */
static int make_base64(const ctx *c, span s, json_t **out)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = span_len(s);
    char *text = malloc(n / 3 * 4 + 5);
    if (!text) return out_of_memory(c);
    size_t o = 0, i = 0;
    for (; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)s.p[i] << 16 | (uint32_t)s.p[i + 1] << 8 | s.p[i + 2];
        text[o++] = alphabet[v >> 18];
        text[o++] = alphabet[(v >> 12) & 63];
        text[o++] = alphabet[(v >> 6) & 63];
        text[o++] = alphabet[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)s.p[i] << 16 | (i + 1 < n ? (uint32_t)s.p[i + 1] << 8 : 0);
        text[o++] = alphabet[v >> 18];
        text[o++] = alphabet[(v >> 12) & 63];
        text[o++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
        text[o++] = '=';
    }
    *out = json_stringn_nocheck(text, o);
    free(text);
    return *out ? 0 : out_of_memory(c);
}

/* ---- times -------------------------------------------------------------------- */

/* 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the range Time's own proto
 * comment allows, and what RFC 3339's four-digit year can show. */
#define FIRST_SECOND INT64_C(-62135596800)
#define LAST_SECOND  INT64_C(253402300799)

/* metav1.Time prints UTC to the second; the nanoseconds only move the second
 * when they are outside 0..999999999 (Go's time.Unix normalises them). */
static int format_time(const ctx *c, int64_t sec, int32_t nanos, const char *path,
                       const uint8_t *where, json_t **out)
{
    *out = NULL;
    int64_t carry = nanos / 1000000000, rest = nanos % 1000000000;
    if (rest < 0) carry--, rest += 1000000000;
    if (sec < FIRST_SECOND - 3 || sec > LAST_SECOND + 3 || sec + carry < FIRST_SECOND ||
        sec + carry > LAST_SECOND) {
        gp_error_set(c->err, NULL, 0, 0,
                     "protobuf: %s at byte %zu is outside 0001-01-01..9999-12-31 (seconds %" PRId64
                     ")",
                     path, at(c, where), sec);
        return -1;
    }
    sec += carry;
    /* Go's zero time: IsZero, printed null, so absent here. */
    if (sec == FIRST_SECOND && rest == 0) return 0;
    char text[KUBE_TIME_TEXT_MAX];
    kube_time_format(sec, text);
    *out = json_string(text);
    return *out ? 0 : out_of_memory(c);
}

/* An empty Time message is Go's zero time (absent); otherwise seconds and
 * nanos, each a varint, the last of each winning. */
static int decode_time(const ctx *c, span s, const char *path, json_t **out)
{
    *out = NULL;
    if (s.p == s.end) return 0;
    const uint8_t *start = s.p;
    int64_t sec = 0;
    int32_t nanos = 0;
    while (s.p < s.end) {
        const uint8_t *tag_at = s.p;
        uint32_t num;
        unsigned wt;
        if (read_tag(c, &s, &num, &wt) < 0) return -1;
        if (num != 1 && num != 2) {
            if (skip_value(c, &s, wt) < 0) return -1;
            continue;
        }
        if (wt != WT_VARINT) return wrong_wire_type(c, path, wt, WT_VARINT, tag_at);
        uint64_t v;
        if (read_varint(c, &s, &v) < 0) return -1;
        if (num == 1)
            sec = (int64_t)v;
        else
            nanos = (int32_t)(uint32_t)v; /* int32 on the wire: the low 32 bits */
    }
    return format_time(c, sec, nanos, path, start, out);
}

/* ---- message decoding ------------------------------------------------------------ */

typedef struct {
    span *v;
    size_t n, cap;
} span_list;

static int span_push(const ctx *c, span_list *l, span s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 2;
        span *v = realloc(l->v, cap * sizeof *v);
        if (!v) return out_of_memory(c);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = s;
    return 0;
}

/* One message being decoded: a value per schema field, and for singular
 * embedded messages every occurrence, decoded together at the end because
 * protobuf merges them (two metadata fields are one ObjectMeta). */
typedef struct {
    const kube_pb_message *m;
    json_t *slot[MAX_FIELDS];
    span_list parts[MAX_FIELDS];
} frame;

static void frame_clear(frame *f)
{
    for (size_t i = 0; i < f->m->count; i++) {
        json_decref(f->slot[i]);
        free(f->parts[i].v);
    }
}

static void join_path(char *buf, const char *parent, const char *name)
{
    if (parent[0])
        snprintf(buf, PATH_LEN, "%s.%s", parent, name);
    else
        snprintf(buf, PATH_LEN, "%s", name);
}

static json_t *decode_message(const ctx *c, const span *parts, size_t nparts,
                              const kube_pb_message *m, const char *path, unsigned depth);

static void set_slot(json_t **slot, json_t *v)
{
    json_decref(*slot);
    *slot = v;
}

/* Appends to the array in *slot, creating it on first use. Takes `v`. */
static int append(const ctx *c, json_t **slot, json_t *v)
{
    if (!*slot) *slot = json_array();
    if (!*slot) {
        json_decref(v);
        return out_of_memory(c);
    }
    /* jansson's *_new calls take the reference even when they fail. */
    return json_array_append_new(*slot, v) == 0 ? 0 : out_of_memory(c);
}

/* A map entry is a message {1 key, 2 value}; either may be missing (""). */
static int decode_map_entry(const ctx *c, span s, const kube_pb_field *fd, const char *path,
                            json_t **slot)
{
    span key = {s.p, s.p}, value = {s.p, s.p};
    while (s.p < s.end) {
        const uint8_t *tag_at = s.p;
        uint32_t num;
        unsigned wt;
        if (read_tag(c, &s, &num, &wt) < 0) return -1;
        if (num != 1 && num != 2) {
            if (skip_value(c, &s, wt) < 0) return -1;
            continue;
        }
        if (wt != WT_LEN) return wrong_wire_type(c, path, wt, WT_LEN, tag_at);
        if (read_len(c, &s, path, num == 1 ? &key : &value) < 0) return -1;
    }
    if (!utf8_valid(key.p, span_len(key))) {
        gp_error_set(c->err, NULL, 0, 0, "protobuf: %s key at byte %zu is not valid UTF-8", path,
                     at(c, key.p));
        return -1;
    }
    /* jansson keys are C strings to most readers: "a\0b" would pass for "a". */
    if (memchr(key.p, 0, span_len(key))) {
        gp_error_set(c->err, NULL, 0, 0, "protobuf: %s key at byte %zu contains a NUL byte", path,
                     at(c, key.p));
        return -1;
    }
    json_t *v;
    int rc =
        fd->type == KUBE_PB_BYTES_MAP ? make_base64(c, value, &v) : make_string(c, value, path, &v);
    if (rc < 0) return -1;
    if (!*slot) *slot = json_object();
    if (!*slot || json_object_setn_new_nocheck(*slot, (const char *)key.p, span_len(key), v) != 0) {
        if (!*slot) json_decref(v);
        return out_of_memory(c);
    }
    return 0;
}

/* FieldsV1 {1 raw}: the raw bytes are a JSON document, printed as is. An
 * occurrence without raw leaves the earlier one (Go merges into the same
 * struct); an empty raw is absent (Go would print nothing valid). */
static int decode_fields_v1(const ctx *c, span s, const char *path, json_t **slot)
{
    span raw = {NULL, NULL};
    bool seen = false;
    while (s.p < s.end) {
        const uint8_t *tag_at = s.p;
        uint32_t num;
        unsigned wt;
        if (read_tag(c, &s, &num, &wt) < 0) return -1;
        if (num != 1) {
            if (skip_value(c, &s, wt) < 0) return -1;
            continue;
        }
        if (wt != WT_LEN) return wrong_wire_type(c, path, wt, WT_LEN, tag_at);
        if (read_len(c, &s, path, &raw) < 0) return -1;
        seen = true;
    }
    if (!seen) return 0;
    set_slot(slot, NULL);
    if (raw.p == raw.end) return 0;
    json_error_t jerr;
    json_t *v = json_loadb((const char *)raw.p, span_len(raw), JSON_DECODE_ANY, &jerr);
    if (!v) {
        /* jerr.text may quote input bytes that are not UTF-8: give the place only. */
        gp_error_set(c->err, NULL, 0, 0, "protobuf: %s at byte %zu is not valid JSON", path,
                     at(c, raw.p));
        return -1;
    }
    *slot = v;
    return 0;
}

static int decode_scalar(const ctx *c, span *s, const kube_pb_field *fd, json_t **slot)
{
    uint64_t v;
    if (read_varint(c, s, &v) < 0) return -1;
    json_t *j;
    if (fd->type == KUBE_PB_BOOL) {
        j = json_boolean(v != 0);
    } else {
        if (v == 0 && !(fd->flags & KUBE_PB_ZERO)) {
            set_slot(slot, NULL);
            return 0;
        }
        j = json_integer((json_int_t)(int64_t)v);
    }
    if (!j) return out_of_memory(c);
    set_slot(slot, j);
    return 0;
}

static int decode_string(const ctx *c, span v, const kube_pb_field *fd, const char *path,
                         json_t **slot)
{
    json_t *j;
    /* A singular "" is how kubectl writes "unset"; inside a list it is a value. */
    if (v.p == v.end && !(fd->flags & KUBE_PB_REPEATED)) {
        set_slot(slot, NULL);
        return 0;
    }
    if (make_string(c, v, path, &j) < 0) return -1;
    if (fd->flags & KUBE_PB_REPEATED) return append(c, slot, j);
    set_slot(slot, j);
    return 0;
}

static int decode_len_field(const ctx *c, span *s, frame *f, size_t i, const char *path,
                            unsigned depth)
{
    const kube_pb_field *fd = &f->m->fields[i];
    json_t **slot = &f->slot[i];
    span v;
    if (read_len(c, s, path, &v) < 0) return -1;
    switch (fd->type) {
    case KUBE_PB_STRING:
        return decode_string(c, v, fd, path, slot);
    case KUBE_PB_MESSAGE: {
        if (!(fd->flags & KUBE_PB_REPEATED)) return span_push(c, &f->parts[i], v);
        json_t *item = decode_message(c, &v, 1, fd->msg, path, depth + 1);
        return item ? append(c, slot, item) : -1;
    }
    case KUBE_PB_TIME: {
        json_t *t;
        if (decode_time(c, v, path, &t) < 0) return -1;
        set_slot(slot, t);
        return 0;
    }
    case KUBE_PB_STRING_MAP:
    case KUBE_PB_BYTES_MAP:
        return decode_map_entry(c, v, fd, path, slot);
    case KUBE_PB_FIELDS_V1:
        return decode_fields_v1(c, v, path, slot);
    default: /* KUBE_PB_INT64, KUBE_PB_BOOL: varints, never here */
        return -1;
    }
}

static const kube_pb_field *find_field(const kube_pb_message *m, uint32_t num, size_t *index)
{
    for (size_t i = 0; i < m->count; i++) {
        if (m->fields[i].num == num) {
            *index = i;
            return &m->fields[i];
        }
    }
    return NULL;
}

static int decode_fields(const ctx *c, span s, frame *f, const char *path, unsigned depth)
{
    while (s.p < s.end) {
        const uint8_t *tag_at = s.p;
        uint32_t num;
        unsigned wt;
        if (read_tag(c, &s, &num, &wt) < 0) return -1;
        size_t i;
        const kube_pb_field *fd = find_field(f->m, num, &i);
        if (!fd) {
            if (skip_value(c, &s, wt) < 0) return -1;
            continue;
        }
        char sub[PATH_LEN];
        join_path(sub, path, fd->name);
        unsigned want = fd->type == KUBE_PB_INT64 || fd->type == KUBE_PB_BOOL ? WT_VARINT : WT_LEN;
        if (wt != want) return wrong_wire_type(c, sub, wt, want, tag_at);
        int rc = want == WT_VARINT ? decode_scalar(c, &s, fd, &f->slot[i])
                                   : decode_len_field(c, &s, f, i, sub, depth);
        if (rc < 0) return -1;
    }
    return 0;
}

/* The singular embedded messages, each from all of its occurrences; one that
 * comes out empty ({}, or only "" and zeros) is absent. */
static int decode_pending(const ctx *c, frame *f, const char *path, unsigned depth)
{
    for (size_t i = 0; i < f->m->count; i++) {
        if (f->parts[i].n == 0) continue;
        char sub[PATH_LEN];
        join_path(sub, path, f->m->fields[i].name);
        json_t *v =
            decode_message(c, f->parts[i].v, f->parts[i].n, f->m->fields[i].msg, sub, depth + 1);
        if (!v) return -1;
        if (json_object_size(v) == 0) {
            json_decref(v);
            v = NULL;
        }
        set_slot(&f->slot[i], v);
    }
    return 0;
}

static int compare_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Go's encoding/json writes map keys sorted by their bytes (strcmp's order;
 * map keys never hold a NUL). Takes `map`; NULL when memory runs out. */
static json_t *sorted(json_t *map)
{
    size_t n = json_object_size(map), i = 0;
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    json_t *out = keys ? json_object() : NULL;
    const char *key;
    json_t *value;
    json_object_foreach(map, key, value)
    {
        if (keys) keys[i++] = key;
    }
    if (keys) qsort(keys, n, sizeof *keys, compare_keys);
    for (i = 0; out && i < n; i++) {
        if (json_object_set_nocheck(out, keys[i], json_object_get(map, keys[i])) != 0) {
            json_decref(out);
            out = NULL;
        }
    }
    free(keys);
    json_decref(map);
    return out;
}

/* The members in schema (Go JSON) order, whatever order they came in. */
static json_t *assemble(const ctx *c, frame *f)
{
    json_t *obj = json_object();
    for (size_t i = 0; obj && i < f->m->count; i++) {
        json_t *v = f->slot[i];
        f->slot[i] = NULL;
        kube_pb_type type = f->m->fields[i].type;
        if (!v) {
            if (!(f->m->fields[i].flags & KUBE_PB_ALWAYS)) continue;
            v = json_string("");
        } else if (type == KUBE_PB_STRING_MAP || type == KUBE_PB_BYTES_MAP) {
            v = sorted(v);
        }
        if (!v || json_object_set_new_nocheck(obj, f->m->fields[i].name, v) != 0) {
            json_decref(obj);
            obj = NULL;
        }
    }
    if (!obj) out_of_memory(c);
    return obj;
}

/* Decodes the concatenation of `parts` as one message `m`; `path` names it in
 * errors. Returns an object (maybe empty) or NULL with the error set. */
static json_t *decode_message(const ctx *c, const span *parts, size_t nparts,
                              const kube_pb_message *m, const char *path, unsigned depth)
{
    if (depth > MAX_DEPTH || m->count > MAX_FIELDS) {
        gp_error_set(c->err, NULL, 0, 0, "protobuf: %s is nested too deeply", path);
        return NULL;
    }
    frame f = {.m = m};
    int rc = 0;
    for (size_t i = 0; i < nparts && rc == 0; i++)
        rc = decode_fields(c, parts[i], &f, path, depth);
    if (rc == 0) rc = decode_pending(c, &f, path, depth);
    json_t *obj = rc == 0 ? assemble(c, &f) : NULL;
    frame_clear(&f);
    return obj;
}

/* ---- the runtime.Unknown envelope ------------------------------------------------ */

typedef struct {
    span_list type_meta; /* 1: merged like any embedded message */
    span raw;            /* 2: the object; the last one wins */
    bool has_raw;
} envelope;

/* contentEncoding (3) and contentType (4) are read for their wire type only:
 * the API server's protobuf serializer ignores both. */
static int read_envelope(const ctx *c, span s, envelope *e)
{
    static const char *const names[] = {"", "typeMeta", "raw", "contentEncoding", "contentType"};
    while (s.p < s.end) {
        const uint8_t *tag_at = s.p;
        uint32_t num;
        unsigned wt;
        if (read_tag(c, &s, &num, &wt) < 0) return -1;
        if (num > 4) {
            if (skip_value(c, &s, wt) < 0) return -1;
            continue;
        }
        if (wt != WT_LEN) return wrong_wire_type(c, names[num], wt, WT_LEN, tag_at);
        span v;
        if (read_len(c, &s, names[num], &v) < 0) return -1;
        if (num == 1 && span_push(c, &e->type_meta, v) < 0) return -1;
        if (num == 2) {
            e->raw = v;
            e->has_raw = true;
        }
    }
    return 0;
}

/* How much of `s` an error may quote without cutting a UTF-8 sequence. */
static int shown(const char *s)
{
    size_t n = strlen(s);
    if (n <= SHOWN) return (int)n;
    n = SHOWN;
    while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
        n--;
    return (int)n;
}

/* Whole-string equality: a decoded string may hold a NUL ("Secret\0x"). */
static bool is(const json_t *s, const char *text)
{
    size_t n = strlen(text);
    return json_string_length(s) == n && memcmp(json_string_value(s), text, n) == 0;
}

static const kube_pb_message *find_kind(const ctx *c, const json_t *type)
{
    const json_t *v = json_object_get(type, "apiVersion"), *k = json_object_get(type, "kind");
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (is(v, kinds[i].api_version) && is(k, kinds[i].kind)) return kinds[i].msg;
    const char *api_version = json_string_value(v), *kind = json_string_value(k);
    if (is(v, "v1"))
        gp_error_set(c->err, NULL, 0, 0, "protobuf: kind %.*s is not supported; send JSON",
                     shown(kind), kind);
    else
        gp_error_set(c->err, NULL, 0, 0, "protobuf: kind %.*s of %.*s is not supported; send JSON",
                     shown(kind), kind, shown(api_version), api_version);
    return NULL;
}

/* apiVersion, kind, metadata (always), then the kind's own members. */
static json_t *wrap(const ctx *c, json_t *type, json_t *obj)
{
    json_t *out = json_object();
    json_t *meta = json_object_get(obj, "metadata");
    if (!out || json_object_set(out, "apiVersion", json_object_get(type, "apiVersion")) != 0 ||
        json_object_set(out, "kind", json_object_get(type, "kind")) != 0 ||
        json_object_set_new(out, "metadata", meta ? json_incref(meta) : json_object()) != 0 ||
        json_object_update(out, obj) != 0) {
        json_decref(out);
        out_of_memory(c);
        return NULL;
    }
    return out;
}

static json_t *decode_object(const ctx *c, const envelope *e, const uint8_t *start)
{
    if (e->type_meta.n == 0) {
        gp_error_set(c->err, NULL, 0, 0,
                     "protobuf: the envelope at byte %zu has no typeMeta (apiVersion and kind)",
                     at(c, start));
        return NULL;
    }
    json_t *type = decode_message(c, e->type_meta.v, e->type_meta.n, &type_meta, "typeMeta", 1);
    if (!type) return NULL;
    const char *api_version = json_string_value(json_object_get(type, "apiVersion"));
    const char *kind = json_string_value(json_object_get(type, "kind"));
    const kube_pb_message *m = NULL;
    if (!api_version || !kind)
        gp_error_set(c->err, NULL, 0, 0, "protobuf: the envelope's typeMeta has no %s",
                     kind ? "apiVersion" : "kind");
    else if (!e->has_raw)
        gp_error_set(c->err, NULL, 0, 0,
                     "protobuf: the envelope at byte %zu has no object (raw field)", at(c, start));
    else
        m = find_kind(c, type);
    json_t *out = NULL;
    if (m) {
        json_t *obj = decode_message(c, &e->raw, 1, m, "", 1);
        if (obj) out = wrap(c, type, obj);
        json_decref(obj);
    }
    json_decref(type);
    return out;
}

bool kube_is_protobuf(const void *body, size_t len)
{
    return body && len >= KUBE_PROTOBUF_MAGIC_LEN &&
           memcmp(body, KUBE_PROTOBUF_MAGIC, KUBE_PROTOBUF_MAGIC_LEN) == 0;
}

json_t *kube_protobuf_decode(const void *body, size_t len, gp_error *err)
{
    if (!kube_is_protobuf(body, len)) {
        gp_error_set(err, NULL, 0, 0,
                     "protobuf: the body does not start with the magic bytes 6b 38 73 00 "
                     "(\"k8s\\0\")");
        return NULL;
    }
    const uint8_t *base = body;
    ctx c = {base, err};
    span s = {base + KUBE_PROTOBUF_MAGIC_LEN, base + len};
    envelope e = {0};
    json_t *out = NULL;
    if (read_envelope(&c, s, &e) == 0) out = decode_object(&c, &e, s.p);
    free(e.type_meta.v);
    return out;
}

/* ---- one message, by schema ---------------------------------------------------- */

json_t *kube_protobuf_decode_message(const void *bytes, size_t len, const kube_pb_message *m,
                                     gp_error *err)
{
    static const uint8_t none[1];
    const uint8_t *base = len ? bytes : none;
    ctx c = {base, err};
    span s = {base, base + len};
    return decode_message(&c, &s, 1, m, "", 1);
}

/* ---- encoding ------------------------------------------------------------------- */

static int put_varint(gp_buf *b, uint64_t v)
{
    uint8_t out[10];
    size_t n = 0;
    do {
        out[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) out[n] |= 0x80;
        n++;
    } while (v);
    return gp_buf_addn(b, out, n);
}

static int put_tag(gp_buf *b, uint32_t num, unsigned wt)
{
    return put_varint(b, ((uint64_t)num << 3) | wt);
}

int kube_protobuf_put_varint(gp_buf *b, uint64_t v)
{
    return put_varint(b, v);
}

int kube_protobuf_put_bool(gp_buf *b, uint32_t num, bool value)
{
    if (put_tag(b, num, WT_VARINT) < 0) return -1;
    return put_varint(b, value ? 1 : 0);
}

int kube_protobuf_put_uint(gp_buf *b, uint32_t num, uint64_t value)
{
    if (put_tag(b, num, WT_VARINT) < 0) return -1;
    return put_varint(b, value);
}

int kube_protobuf_put_bytes(gp_buf *b, uint32_t num, const void *bytes, size_t len)
{
    if (put_tag(b, num, WT_LEN) < 0 || put_varint(b, len) < 0) return -1;
    return len ? gp_buf_addn(b, bytes, len) : 0;
}

int kube_protobuf_put_string(gp_buf *b, uint32_t num, const char *value, size_t len)
{
    return kube_protobuf_put_bytes(b, num, value, len);
}

int kube_protobuf_next(kube_pb_cursor *cur, const uint8_t *start, kube_pb_wire *f, gp_error *err)
{
    if (cur->p >= cur->end) return 0;
    ctx c = {.base = start ? start : cur->p, .err = err};
    span s = {cur->p, cur->end};
    memset(f, 0, sizeof *f);
    if (read_tag(&c, &s, &f->num, &f->wire) < 0) return -1;
    int rc;
    span value = {NULL, NULL};
    switch (f->wire) {
    case WT_VARINT:
        rc = read_varint(&c, &s, &f->varint);
        break;
    case WT_LEN:
        rc = read_len(&c, &s, "field", &value);
        f->bytes = value.p;
        f->len = rc == 0 ? span_len(value) : 0;
        break;
    default: /* WT_I64, WT_I32: read_tag let nothing else through */
        rc = skip_fixed(&c, &s, f->wire == WT_I64 ? 8 : 4);
        break;
    }
    if (rc < 0) return -1;
    cur->p = s.p;
    return 1;
}
