/* Reading Kubernetes objects in their JSON form, as Go's decoder reads them
 * into the typed structs: a member that is absent, null or of another type
 * is the field's zero value ("" for a string, 0 for a number, false, no
 * object, no list). Every reader takes NULL or a non-object for `obj`, so
 * reads chain without checks: kube_str(kube_obj(pod, "spec"), "nodeName").
 *
 * The one set of readers the control plane (apiserver/, controllers/), the
 * analyzers and the lab share. The small ones are inline: the scheduler
 * calls them for every pod on every node. */
#ifndef GPUOP_KUBE_JSON_H
#define GPUOP_KUBE_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <string.h>

/* The member `key` whatever its type, or NULL. */
static inline const json_t *kube_get(const json_t *obj, const char *key)
{
    return json_is_object(obj) ? json_object_get(obj, key) : NULL;
}

/* The member when it is an object, else NULL. */
static inline const json_t *kube_obj(const json_t *obj, const char *key)
{
    const json_t *v = kube_get(obj, key);
    return json_is_object(v) ? v : NULL;
}

/* The member when it is an array, else NULL (json_array_foreach and
 * json_array_size take NULL as the empty list). */
static inline const json_t *kube_arr(const json_t *obj, const char *key)
{
    const json_t *v = kube_get(obj, key);
    return json_is_array(v) ? v : NULL;
}

/* The member when it is a string, else "": Go's zero string. */
static inline const char *kube_str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(kube_get(obj, key));
    return s ? s : "";
}

/* The member when it is a string, else NULL: for the few places where an
 * absent string and "" differ (a label that is not there). */
static inline const char *kube_str_or_null(const json_t *obj, const char *key)
{
    return json_string_value(kube_get(obj, key));
}

/* True when the member is a string equal to `want`. */
static inline bool kube_str_is(const json_t *obj, const char *key, const char *want)
{
    const char *s = kube_str_or_null(obj, key);
    return s && strcmp(s, want) == 0;
}

/* The member when it is an integer, else 0. */
static inline long long kube_int(const json_t *obj, const char *key)
{
    return (long long)json_integer_value(kube_get(obj, key));
}

/* The member is true (a boolean; anything else is false). */
static inline bool kube_true(const json_t *obj, const char *key)
{
    return json_is_true(kube_get(obj, key));
}

/* obj.a.b... for the NULL-terminated keys; NULL when a step is missing. */
const json_t *kube_path(const json_t *obj, ...);

/* The member at a dotted path ("status.phase", "spec.template.spec"), NULL
 * when a step is missing; the path is not copied or limited in length. */
const json_t *kube_at(const json_t *obj, const char *dotted);

/* The string at a dotted path, or NULL when it is absent or not a string. */
static inline const char *kube_str_at(const json_t *obj, const char *dotted)
{
    return json_string_value(kube_at(obj, dotted));
}

/* The first element of `array` that is an object whose string member `key`
 * equals `value` (a condition by type, an owner reference by kind), or
 * NULL. */
const json_t *kube_find(const json_t *array, const char *key, const char *value);

/* Some element of `array` is a string equal to `value` (a value of a
 * requirement, a finalizer); false for a NULL value. */
bool kube_has_string(const json_t *array, const char *value);

/* status.conditions[type]: the first condition of that type, as
 * GetPodCondition and GetNodeCondition take it; NULL when there is none. */
const json_t *kube_condition(const json_t *obj, const char *type);

/* metav1.GetControllerOf: the first ownerReference with controller true,
 * or NULL. */
const json_t *kube_controller_of(const json_t *obj);

/* metadata.deletionTimestamp is set: Go reads null as unset. */
bool kube_deleting(const json_t *obj);

/* What Go's encoding/json calls a JSON value in "json: cannot unmarshal X
 * into Go ... of type T" (UnmarshalTypeError.Value: "object", "array",
 * "string", "bool", "number"; "null", which Go never reports since null
 * unmarshals into anything, for completeness). The API server's decoder
 * and the device plugin's config reader both quote it. */
const char *kube_json_go_kind(const json_t *v);

#endif
