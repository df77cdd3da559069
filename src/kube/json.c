#include "kube/json.h"

#include <stdarg.h>

const json_t *kube_path(const json_t *obj, ...)
{
    va_list ap;
    va_start(ap, obj);
    for (const char *key = va_arg(ap, const char *); key && obj; key = va_arg(ap, const char *))
        obj = kube_get(obj, key);
    va_end(ap);
    return obj;
}

const json_t *kube_at(const json_t *obj, const char *path)
{
    for (;;) {
        const char *dot = strchr(path, '.');
        size_t len = dot ? (size_t)(dot - path) : strlen(path);
        if (!json_is_object(obj)) return NULL;
        obj = json_object_getn(obj, path, len);
        if (!obj || !dot) return obj;
        path = dot + 1;
    }
}

const json_t *kube_find(const json_t *array, const char *key, const char *value)
{
    size_t i;
    const json_t *e;
    json_array_foreach(array, i, e)
    {
        if (kube_str_is(e, key, value)) return e;
    }
    return NULL;
}

bool kube_has_string(const json_t *array, const char *value)
{
    size_t i;
    const json_t *v;
    json_array_foreach(array, i, v)
    {
        if (value && json_is_string(v) && strcmp(json_string_value(v), value) == 0) return true;
    }
    return false;
}

const json_t *kube_condition(const json_t *obj, const char *type)
{
    return kube_find(kube_arr(kube_obj(obj, "status"), "conditions"), "type", type);
}

const json_t *kube_controller_of(const json_t *obj)
{
    size_t i;
    const json_t *ref;
    json_array_foreach(kube_arr(kube_obj(obj, "metadata"), "ownerReferences"), i, ref)
    {
        if (kube_true(ref, "controller")) return ref;
    }
    return NULL;
}

bool kube_deleting(const json_t *obj)
{
    const json_t *ts = kube_get(kube_obj(obj, "metadata"), "deletionTimestamp");
    return ts && !json_is_null(ts);
}

const char *kube_json_go_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_TRUE:
    case JSON_FALSE:
        return "bool";
    case JSON_NULL:
        return "null";
    default:
        return "number";
    }
}
