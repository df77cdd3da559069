/* Resources that are a second view of another's objects (views.h): the
 * events.k8s.io/v1 Events are the core Events, converted on the way in
 * and out as kube-apiserver's events registry converts them through the
 * internal type (pkg/apis/events/v1/conversion.go). */
#include "apiserver/views.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"

static bool is_events_view(const as_resource *r)
{
    return strcmp(r->group, "events.k8s.io") == 0 && strcmp(r->resource, "events") == 0;
}

const as_resource *as_storage(const as_resource *r)
{
    if (is_events_view(r)) return as_resource_find("", "v1", "events");
    return r;
}

bool as_is_view(const as_resource *r)
{
    return as_storage(r) != r;
}

static void move(json_t *to, const char *to_key, const json_t *from, const char *from_key)
{
    json_t *v = json_object_get(from, from_key);
    if (v) json_object_set(to, to_key, v);
}

/* An empty EventSource is written as {} (a struct: omitempty leaves it). */
static json_t *source_or_empty(const json_t *v)
{
    return json_is_object(v) ? json_deep_copy(v) : json_object();
}

/* A zero metav1.Time or MicroTime is written as null. */
static json_t *time_or_null(const json_t *v)
{
    return json_is_string(v) ? json_incref((json_t *)v) : json_null();
}

/* core/v1 -> events.k8s.io/v1, in the Go struct's field order. */
static json_t *event_to_v1(const json_t *core)
{
    json_t *e = json_object();
    json_object_set_new(e, "apiVersion", json_string("events.k8s.io/v1"));
    json_object_set_new(e, "kind", json_string("Event"));
    move(e, "metadata", core, "metadata");
    json_object_set_new(e, "eventTime", time_or_null(json_object_get(core, "eventTime")));
    move(e, "series", core, "series");
    move(e, "reportingController", core, "reportingComponent");
    move(e, "reportingInstance", core, "reportingInstance");
    move(e, "action", core, "action");
    move(e, "reason", core, "reason");
    move(e, "regarding", core, "involvedObject");
    move(e, "related", core, "related");
    move(e, "note", core, "message");
    move(e, "type", core, "type");
    json_object_set_new(e, "deprecatedSource", source_or_empty(json_object_get(core, "source")));
    json_object_set_new(e, "deprecatedFirstTimestamp",
                        time_or_null(json_object_get(core, "firstTimestamp")));
    json_object_set_new(e, "deprecatedLastTimestamp",
                        time_or_null(json_object_get(core, "lastTimestamp")));
    const json_t *count = json_object_get(core, "count");
    if (json_integer_value(count) != 0) json_object_set(e, "deprecatedCount", (json_t *)count);
    return e;
}

/* events.k8s.io/v1 -> core/v1, in the Go struct's field order. */
static json_t *event_to_core(const json_t *v1)
{
    json_t *e = json_object();
    json_object_set_new(e, "apiVersion", json_string("v1"));
    json_object_set_new(e, "kind", json_string("Event"));
    move(e, "metadata", v1, "metadata");
    json_t *involved = json_object_get(v1, "regarding");
    json_object_set_new(e, "involvedObject",
                        json_is_object(involved) ? json_deep_copy(involved) : json_object());
    move(e, "reason", v1, "reason");
    move(e, "message", v1, "note");
    json_object_set_new(e, "source", source_or_empty(json_object_get(v1, "deprecatedSource")));
    json_object_set_new(e, "firstTimestamp",
                        time_or_null(json_object_get(v1, "deprecatedFirstTimestamp")));
    json_object_set_new(e, "lastTimestamp",
                        time_or_null(json_object_get(v1, "deprecatedLastTimestamp")));
    const json_t *count = json_object_get(v1, "deprecatedCount");
    if (json_integer_value(count) != 0) json_object_set(e, "count", (json_t *)count);
    move(e, "type", v1, "type");
    json_object_set_new(e, "eventTime", time_or_null(json_object_get(v1, "eventTime")));
    move(e, "series", v1, "series");
    move(e, "action", v1, "action");
    move(e, "related", v1, "related");
    move(e, "reportingComponent", v1, "reportingController");
    move(e, "reportingInstance", v1, "reportingInstance");
    return e;
}

json_t *as_view_from_stored(const as_resource *r, json_t *stored)
{
    if (!stored || !is_events_view(r)) return stored;
    json_t *v = event_to_v1(stored);
    json_decref(stored);
    return v;
}

json_t *as_view_to_stored(const as_resource *r, json_t *obj)
{
    if (!obj || !is_events_view(r)) return obj;
    json_t *c = event_to_core(obj);
    json_decref(obj);
    return c;
}

as_blob *as_view_blob(const as_resource *r, as_blob *stored)
{
    if (!stored || !is_events_view(r)) return stored;
    json_t *obj = json_loadb(stored->text, stored->len, 0, NULL);
    as_blob_unref(stored);
    json_t *v = as_view_from_stored(r, obj);
    char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    as_blob *b = text ? as_blob_new(text, strlen(text)) : NULL;
    free(text);
    return b;
}
