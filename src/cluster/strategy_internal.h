/* Shared by strategy*.c and validate*.c: the kinds, a string builder, field
 * errors in apimachinery's wording, field paths, and quantity handling. */
#ifndef GPUOP_CLUSTER_STRATEGY_INTERNAL_H
#define GPUOP_CLUSTER_STRATEGY_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef enum gcs_kind {
    GCS_OTHER = 0,
    GCS_POD,
    GCS_NODE,
    GCS_NAMESPACE,
    GCS_CONFIGMAP,
    GCS_DAEMONSET,
    GCS_RUNTIMECLASS,
} gcs_kind;

gcs_kind gcs_kind_of(const char *group, const char *kind);

/* ---- growable string (an out-of-memory builder yields NULL at the end) ---- */

typedef struct gcs_sb {
    char *p;
    size_t len, cap;
    bool oom;
} gcs_sb;

void gcs_sb_add(gcs_sb *sb, const char *s);
void gcs_sb_addn(gcs_sb *sb, const char *s, size_t n);
void gcs_sb_addf(gcs_sb *sb, const char *fmt, ...) GP_PRINTF(2, 3);
/* Go's strconv.Quote, which %q and %#v use for strings. */
void gcs_sb_quote(gcs_sb *sb, const char *s);
/* The text, owned by the caller (NULL if out of memory); sb is reset. */
char *gcs_sb_take(gcs_sb *sb);
void gcs_sb_free(gcs_sb *sb);

/* ---- field paths (field.Path.String()) ---- */

#define GCS_PATH_MAX 1024

/* out = parent + "." + child, or child alone when parent is empty. */
const char *gcs_child(char out[GCS_PATH_MAX], const char *parent, const char *child);
/* out = parent + "[i]" */
const char *gcs_index(char out[GCS_PATH_MAX], const char *parent, size_t i);
/* out = parent + "[key]" (Path.Key writes the key as it is) */
const char *gcs_key(char out[GCS_PATH_MAX], const char *parent, const char *key);

/* ---- field errors (k8s.io/apimachinery/pkg/util/validation/field) ---- */

/* Required value[: detail] */
void gcs_required(json_t *errs, const char *field, const char *detail);
/* Forbidden: detail */
void gcs_forbidden(json_t *errs, const char *field, const char *detail);
/* Invalid value: "value": detail (a Go string, quoted) */
void gcs_invalid(json_t *errs, const char *field, const char *value, const char *detail);
/* Invalid value: <rendered>: detail (value already rendered, e.g. 70000 or
 * map[string]string{...}) */
void gcs_invalid_raw(json_t *errs, const char *field, const char *rendered, const char *detail);
void gcs_invalid_int(json_t *errs, const char *field, long long value, const char *detail);
/* Unsupported value: "value": supported values: "a", "b" (valid NULL-ended) */
void gcs_not_supported(json_t *errs, const char *field, const char *value,
                       const char *const *valid);
/* Duplicate value: "value" */
void gcs_duplicate(json_t *errs, const char *field, const char *value);
/* Too long: may not be more than N bytes */
void gcs_too_long(json_t *errs, const char *field, long long max);
/* Not found: "value" */
void gcs_not_found(json_t *errs, const char *field, const char *value);

/* ---- value rules (k8s.io/apimachinery/pkg/util/validation) ---- */

/* Each returns the number of messages written into msgs (at most 4), each
 * owned by the caller. */
#define GCS_MSGS_MAX 4
size_t gcs_dns1123_label(const char *v, char *msgs[GCS_MSGS_MAX]);
size_t gcs_dns1123_subdomain(const char *v, char *msgs[GCS_MSGS_MAX]);
size_t gcs_qualified_name(const char *v, char *msgs[GCS_MSGS_MAX]);
size_t gcs_label_value(const char *v, char *msgs[GCS_MSGS_MAX]);
size_t gcs_config_map_key(const char *v, char *msgs[GCS_MSGS_MAX]);
void gcs_msgs_free(char *msgs[GCS_MSGS_MAX], size_t n);
bool gcs_is_dns1123_label(const char *v);

/* field.Invalid(path, value, msg) for each message of a rule. */
void gcs_invalid_each(json_t *errs, const char *field, const char *value, char **msgs, size_t n);

/* NameIsDNSSubdomain / NameIsDNSLabel with ValidateObjectMeta's prefix rule. */
typedef size_t (*gcs_name_rule)(const char *v, char *msgs[GCS_MSGS_MAX]);

/* ValidateObjectMeta (create): generateName, name, namespace, labels,
 * annotations, finalizers. */
void gcs_validate_meta(json_t *errs, const json_t *meta, bool namespaced, gcs_name_rule rule);
/* The parts of ValidateObjectMetaUpdate that the caller does not settle by
 * copying old values: labels and annotations. */
void gcs_validate_meta_update(json_t *errs, const json_t *meta);
/* ValidateLabels(labels, path) */
void gcs_validate_labels(json_t *errs, const json_t *labels, const char *path);
void gcs_validate_annotations(json_t *errs, const json_t *annotations, const char *path);
/* ValidateNonnegativeField on an integer member, when present. */
void gcs_validate_nonnegative(json_t *errs, const json_t *obj, const char *member,
                              const char *path);

/* ---- Go %#v renderings used in messages ---- */

/* map[string]string{"a":"b", "c":"d"} (keys sorted), map[string]string(nil) */
void gcs_render_string_map(gcs_sb *sb, const json_t *map);
/* v1.LabelSelector{MatchLabels:..., MatchExpressions:...} */
void gcs_render_label_selector(gcs_sb *sb, const json_t *selector);

/* ---- quantities ---- */

/* The text a client sent for a quantity: a string as it is, a JSON integer in
 * decimal, a real in the shortest form that reads back the same (what a YAML
 * "0.1" became), null as "0" (Quantity.UnmarshalJSON), anything else as its
 * JSON text. Surrounding spaces are trimmed, as UnmarshalJSON does. */
void gcs_quantity_text(const json_t *v, char *buf, size_t size);
/* NULL when the text is a quantity, else ParseQuantity's error text
 * (ErrFormatWrong, ErrNumeric or ErrSuffix). */
const char *gcs_quantity_error(const char *text);
/* Canonical form of every value of a ResourceList object; round_milli for
 * ResourceLists (SetDefaults_ResourceList), not for lone Quantities. Values
 * that do not parse are left alone. */
void gcs_canonical_list(json_t *list, bool round_milli);
/* Canonical form of one quantity member, when it parses. */
void gcs_canonical_member(json_t *obj, const char *member, bool round_milli);
/* <0, 0, >0 comparing two quantity JSON values; 0 with *ok false when either
 * does not parse. */
int gcs_quantity_cmp(const json_t *a, const json_t *b, bool *ok);

/* ---- JSON helpers ---- */

/* The member as a string, "" when absent, null or not a string. */
const char *gcs_str(const json_t *obj, const char *key);
/* True when the member is absent, null or "" (Go's zero string). */
bool gcs_str_unset(const json_t *obj, const char *key);
/* The member object, created (replacing a non-object) when missing; NULL only
 * if obj is not an object or memory runs out. */
json_t *gcs_obj(json_t *obj, const char *key);
/* apiequality.Semantic.DeepEqual on the JSON form: an absent member equals
 * null, {} and []; numbers compare by value. */
bool gcs_sem_equal(const json_t *a, const json_t *b);
/* True for null, {}, [] and absent (NULL). */
bool gcs_is_empty(const json_t *v);

/* ---- pod helpers shared by strategy_pod.c and strategy.c ---- */

void gcs_pod_spec_defaults(json_t *spec, bool is_pod);
void gcs_pod_create(json_t *pod);
void gcs_pod_update(json_t *pod, const json_t *old, bool status_subresource);
/* BestEffort, Burstable or Guaranteed (qos.GetPodQOS) */
const char *gcs_pod_qos(const json_t *spec);
/* DefaultTolerationSeconds admission */
void gcs_default_tolerations(json_t *spec);

/* ---- validation entry points per kind ---- */

void gcs_validate_pod(json_t *errs, const json_t *pod, const json_t *old);
/* ValidatePodTemplateSpec at `path` (spec.template) */
void gcs_validate_pod_template(json_t *errs, const json_t *tmpl, const char *path);
/* ValidateResourceRequirements-style checks of one ResourceList used as limits
 * (overhead, podFixed) */
void gcs_validate_limits_only(json_t *errs, const json_t *list, const char *path);
bool gcs_in_list(const char *s, const char *const *list);
/* validateResourceRequirements of a container's resources at `path` */
void gcs_validate_resources(json_t *errs, const json_t *res, const char *path);
/* ValidateResourceQuantityValue (and a value that is no quantity); false
 * when it does not parse. */
bool gcs_validate_quantity(json_t *errs, const char *name, const json_t *v, const char *path);
/* ValidateTolerations */
void gcs_validate_tolerations(json_t *errs, const json_t *tolerations, const char *path);
void gcs_validate_daemonset(json_t *errs, const json_t *ds, const json_t *old);
void gcs_validate_namespace(json_t *errs, const json_t *ns, const json_t *old);
void gcs_validate_node(json_t *errs, const json_t *node, const json_t *old);
void gcs_validate_configmap(json_t *errs, const json_t *cm, const json_t *old);
void gcs_validate_runtimeclass(json_t *errs, const json_t *rc, const json_t *old);

#endif
