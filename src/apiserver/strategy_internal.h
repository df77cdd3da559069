/* Shared by strategy*.c and validate*.c: the kinds, Go's string quoting, field
 * errors in apimachinery's wording, field paths, and quantity handling. */
#ifndef GPUOP_APISERVER_STRATEGY_INTERNAL_H
#define GPUOP_APISERVER_STRATEGY_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/json.h"
#include "util/buf.h"
#include "util/error.h"

typedef enum as_kind {
    AS_OTHER = 0,
    AS_POD,
    AS_NODE,
    AS_NAMESPACE,
    AS_CONFIGMAP,
    AS_DAEMONSET,
    AS_RUNTIMECLASS,
} as_kind;

as_kind as_kind_of(const char *group, const char *kind);

/* Go's strconv.Quote, which %q and %#v use for strings, appended to b. */
void as_quote(gp_buf *b, const char *s);

/* ---- field paths (field.Path.String()) ---- */

#define AS_PATH_MAX 1024

/* out = parent + "." + child, or child alone when parent is empty. */
const char *as_child(char out[AS_PATH_MAX], const char *parent, const char *child);
/* out = parent + "[i]" */
const char *as_index(char out[AS_PATH_MAX], const char *parent, size_t i);
/* out = parent + "[key]" (Path.Key writes the key as it is) */
const char *as_key(char out[AS_PATH_MAX], const char *parent, const char *key);

/* ---- field errors (k8s.io/apimachinery/pkg/util/validation/field) ---- */

/* Required value[: detail] */
void as_required(json_t *errs, const char *field, const char *detail);
/* Forbidden: detail */
void as_forbidden(json_t *errs, const char *field, const char *detail);
/* Invalid value: "value": detail (a Go string, quoted) */
void as_invalid(json_t *errs, const char *field, const char *value, const char *detail);
/* Invalid value: <rendered>: detail (value already rendered, e.g. 70000 or
 * map[string]string{...}) */
void as_invalid_raw(json_t *errs, const char *field, const char *rendered, const char *detail);
void as_invalid_int(json_t *errs, const char *field, long long value, const char *detail);
/* Unsupported value: "value": supported values: "a", "b" (valid NULL-ended) */
void as_not_supported(json_t *errs, const char *field, const char *value, const char *const *valid);
/* Duplicate value: "value" */
void as_duplicate(json_t *errs, const char *field, const char *value);
/* Too long: may not be more than N bytes */
void as_too_long(json_t *errs, const char *field, long long max);
/* Not found: "value" */
void as_not_found(json_t *errs, const char *field, const char *value);

/* ---- value rules (k8s.io/apimachinery/pkg/util/validation) ---- */

/* Each returns the number of messages written into msgs (at most 4), each
 * owned by the caller. */
#define AS_MSGS_MAX 4
size_t as_dns1123_label(const char *v, char *msgs[AS_MSGS_MAX]);
size_t as_dns1123_subdomain(const char *v, char *msgs[AS_MSGS_MAX]);
size_t as_qualified_name(const char *v, char *msgs[AS_MSGS_MAX]);
size_t as_label_value(const char *v, char *msgs[AS_MSGS_MAX]);
size_t as_config_map_key(const char *v, char *msgs[AS_MSGS_MAX]);
void as_msgs_free(char *msgs[AS_MSGS_MAX], size_t n);
bool as_is_dns1123_label(const char *v);

/* field.Invalid(path, value, msg) for each message of a rule. */
void as_invalid_each(json_t *errs, const char *field, const char *value, char **msgs, size_t n);

/* NameIsDNSSubdomain / NameIsDNSLabel with ValidateObjectMeta's prefix rule. */
typedef size_t (*as_name_rule)(const char *v, char *msgs[AS_MSGS_MAX]);

/* ValidateObjectMeta (create): generateName, name, namespace, labels,
 * annotations, finalizers. */
void as_validate_meta(json_t *errs, const json_t *meta, bool namespaced, as_name_rule rule);
/* The parts of ValidateObjectMetaUpdate that the caller does not settle by
 * copying old values: labels and annotations. */
void as_validate_meta_update(json_t *errs, const json_t *meta);
/* ValidateLabels(labels, path) */
void as_validate_labels(json_t *errs, const json_t *labels, const char *path);
void as_validate_annotations(json_t *errs, const json_t *annotations, const char *path);
/* ValidateNonnegativeField on an integer member, when present. */
void as_validate_nonnegative(json_t *errs, const json_t *obj, const char *member, const char *path);

/* ---- Go %#v renderings used in messages ---- */

/* map[string]string{"a":"b", "c":"d"} (keys sorted), map[string]string(nil) */
void as_render_string_map(gp_buf *sb, const json_t *map);
/* v1.LabelSelector{MatchLabels:..., MatchExpressions:...} */
void as_render_label_selector(gp_buf *sb, const json_t *selector);

/* ---- quantities ---- */

/* The text a client sent for a quantity: a string as it is, a JSON integer in
 * decimal, a real in the shortest form that reads back the same (what a YAML
 * "0.1" became), null as "0" (Quantity.UnmarshalJSON), anything else as its
 * JSON text. Surrounding spaces are trimmed, as UnmarshalJSON does. */
void as_quantity_text(const json_t *v, char *buf, size_t size);
/* NULL when the text is a quantity, else ParseQuantity's error text
 * (ErrFormatWrong, ErrNumeric or ErrSuffix). */
const char *as_quantity_error(const char *text);
/* Canonical form of every value of a ResourceList object; round_milli for
 * ResourceLists (SetDefaults_ResourceList), not for lone Quantities. Values
 * that do not parse are left alone. */
void as_canonical_list(json_t *list, bool round_milli);
/* Canonical form of one quantity member, when it parses. */
void as_canonical_member(json_t *obj, const char *member, bool round_milli);
/* <0, 0, >0 comparing two quantity JSON values; 0 with *ok false when either
 * does not parse. */
int as_quantity_cmp(const json_t *a, const json_t *b, bool *ok);

/* ---- JSON helpers ---- */

/* True when the member is absent, null or "" (Go's zero string). */
bool as_str_unset(const json_t *obj, const char *key);
/* The member object, created (replacing a non-object) when missing; NULL only
 * if obj is not an object or memory runs out. */
json_t *as_obj(json_t *obj, const char *key);
/* apiequality.Semantic.DeepEqual on the JSON form: an absent member equals
 * null, {} and []; numbers compare by value. */
bool as_sem_equal(const json_t *a, const json_t *b);
/* True for null, {}, [] and absent (NULL). */
bool as_is_empty(const json_t *v);

/* ---- pod helpers shared by strategy_pod.c and strategy.c ---- */

void as_pod_spec_defaults(json_t *spec, bool is_pod);
void as_pod_create(json_t *pod);
void as_pod_update(json_t *pod, const json_t *old, bool status_subresource);
/* BestEffort, Burstable or Guaranteed (qos.GetPodQOS) */
const char *as_pod_qos(const json_t *spec);
/* DefaultTolerationSeconds admission */
void as_default_tolerations(json_t *spec);

/* ---- validation entry points per kind ---- */

void as_validate_pod(json_t *errs, const json_t *pod, const json_t *old);
void as_validate_pod_status(json_t *errs, const json_t *pod, const json_t *old);
/* ValidatePodTemplateSpec at `path` (spec.template) */
void as_validate_pod_template(json_t *errs, const json_t *tmpl, const char *path);
/* ValidateResourceRequirements-style checks of one ResourceList used as limits
 * (overhead, podFixed) */
void as_validate_limits_only(json_t *errs, const json_t *list, const char *path);
bool as_in_list(const char *s, const char *const *list);
/* validateResourceRequirements of a container's resources at `path` */
void as_validate_resources(json_t *errs, const json_t *res, const char *path);
/* ValidateResourceQuantityValue (and a value that is no quantity); false
 * when it does not parse. */
bool as_validate_quantity(json_t *errs, const char *name, const json_t *v, const char *path);
/* ValidateTolerations */
void as_validate_tolerations(json_t *errs, const json_t *tolerations, const char *path);
void as_validate_daemonset(json_t *errs, const json_t *ds, const json_t *old);
void as_validate_namespace(json_t *errs, const json_t *ns, const json_t *old);
void as_validate_node(json_t *errs, const json_t *node, const json_t *old);
void as_validate_configmap(json_t *errs, const json_t *cm, const json_t *old);
void as_validate_runtimeclass(json_t *errs, const json_t *rc, const json_t *old);

#endif
