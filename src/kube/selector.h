/* Label and field selectors, as the API server reads ?labelSelector= and
 * ?fieldSelector= (k8s.io/apimachinery/pkg/labels and .../fields).
 *
 * Label selectors: requirements joined by ',' (AND), each one of
 *   k=v  k==v  k!=v  k in (a,b)  k notin (a,b)  k  !k  k>5  k<5
 * with whitespace allowed between tokens as in the real lexer ("k in ( a , b )").
 * Keys are qualified names (an optional DNS-subdomain prefix and '/', then a
 * name of at most 63 characters of [A-Za-z0-9_.-] that starts and ends
 * alphanumeric); values are label values (the same, but may be empty).
 * "k=" selects an empty value; "k in ()" and "k in (a,)" include "".
 * A label absent from the object fails =, in, exists, > and <, and passes
 * !=, notin and !k (apimachinery's Requirement.Matches).
 *
 * Field selectors: terms joined by ',' (AND), each f=v, f==v or f!=v, with
 * '\' escaping ',', '=' and '\' in the value (fields.ParseSelector). The field
 * is a dotted path into the whole object (metadata.name, spec.nodeName,
 * involvedObject.kind); a missing field reads as "" so that
 * "involvedObject.namespace=" matches cluster-scoped objects. No whitespace is
 * trimmed, as in apimachinery.
 *
 * The empty selector (or NULL text) matches everything. */
#ifndef GPUOP_KUBE_SELECTOR_H
#define GPUOP_KUBE_SELECTOR_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

typedef struct kube_label_selector kube_label_selector;
typedef struct kube_field_selector kube_field_selector;

/* NULL with `err` set on a syntax error or an invalid key or value. */
kube_label_selector *kube_label_selector_parse(const char *text, gp_error *err);

/* `labels` is the object's metadata.labels: an object of strings, or NULL
 * when it has none. A label whose value is not a string counts as absent. */
bool kube_label_selector_matches(const kube_label_selector *s, const json_t *labels);

/* True when the selector has no requirement and so matches everything. */
bool kube_label_selector_is_empty(const kube_label_selector *s);

void kube_label_selector_free(kube_label_selector *s);

/* `supported` lists the field labels this resource accepts (NULL-terminated);
 * any other gives "field label not supported: <label>". NULL accepts any
 * field (for tools that filter snapshots locally). */
kube_field_selector *kube_field_selector_parse(const char *text, const char *const *supported,
                                               gp_error *err);

/* As kube_field_selector_parse, with each field label renamed as a
 * scheme's field label conversion renames it (ListOptions' FieldSelector
 * Transform): `labels` holds pairs {label, field}, ended by {NULL, NULL};
 * a label it lacks is "field label not supported: <label>". */
kube_field_selector *kube_field_selector_parse_converted(const char *text,
                                                         const char *const (*labels)[2],
                                                         gp_error *err);

/* `object` is the whole object (kind, metadata, spec, status...). */
bool kube_field_selector_matches(const kube_field_selector *s, const json_t *object);

bool kube_field_selector_is_empty(const kube_field_selector *s);

void kube_field_selector_free(kube_field_selector *s);

/* The field at a dotted path as a field selector sees it: a string as it is,
 * true/false, an integer in decimal; "" when the field is missing, null, an
 * object, an array or a real. Writes at most `size` bytes (NUL included);
 * returns the full length, like snprintf. */
size_t kube_field_text(const json_t *object, const char *path, char *buf, size_t size);

/* Label key and value rules, for callers that validate labels themselves
 * (metadata.labels, nodeSelector). -1 with `err` naming the key or value. */
int kube_label_validate_key(const char *key, gp_error *err);
int kube_label_validate_value(const char *value, gp_error *err);

/* IsDNS1123Subdomain (apimachinery util/validation): 1 to 253 characters,
 * dot-separated labels of [a-z0-9-] that start and end alphanumeric, as
 * label key prefixes and resource name prefixes are. */
bool kube_is_dns1123_subdomain(const char *s, size_t len);

#endif
