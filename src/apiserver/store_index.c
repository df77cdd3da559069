/* The fields a field selector may name on each resource type, and the
 * small index the store keeps beside each object so that selectors never
 * parse the whole object. */
#include "apiserver/store_internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/json_dump.h"

static const char *const common_fields[] = {"metadata.name", "metadata.namespace", NULL};
static const char *const pod_fields[] = {"metadata.name",
                                         "metadata.namespace",
                                         "spec.nodeName",
                                         "spec.restartPolicy",
                                         "spec.schedulerName",
                                         "spec.serviceAccountName",
                                         "spec.hostNetwork",
                                         "status.phase",
                                         "status.podIP",
                                         "status.nominatedNodeName",
                                         NULL};
static const char *const event_fields[] = {"metadata.name",
                                           "metadata.namespace",
                                           "involvedObject.kind",
                                           "involvedObject.namespace",
                                           "involvedObject.name",
                                           "involvedObject.uid",
                                           "involvedObject.apiVersion",
                                           "involvedObject.resourceVersion",
                                           "involvedObject.fieldPath",
                                           "reason",
                                           "reportingComponent",
                                           "source",
                                           "type",
                                           NULL};
/* events.k8s.io/v1 Events are core Events in the store, and so in the
 * index: their field labels are converted to core's, as
 * pkg/apis/events/v1/conversion.go AddFieldLabelConversionsForEvent does
 * (any other label is "field label not supported"). */
static const char *const events_v1_labels[][2] = {
    {"metadata.name", "metadata.name"},
    {"metadata.namespace", "metadata.namespace"},
    {"reason", "reason"},
    {"regarding.kind", "involvedObject.kind"},
    {"regarding.namespace", "involvedObject.namespace"},
    {"regarding.name", "involvedObject.name"},
    {"regarding.uid", "involvedObject.uid"},
    {"regarding.apiVersion", "involvedObject.apiVersion"},
    {"regarding.resourceVersion", "involvedObject.resourceVersion"},
    {"regarding.fieldPath", "involvedObject.fieldPath"},
    {"reportingController", "reportingComponent"},
    {"source", "source"},
    {"type", "type"},
    {NULL, NULL},
};
static const char *const node_fields[] = {"metadata.name", "spec.unschedulable", NULL};
static const char *const namespace_fields[] = {"metadata.name", "status.phase", NULL};

const char *const *as_store_selectable_fields(const as_resource *r)
{
    if (strcmp(r->group, "") == 0) {
        if (strcmp(r->resource, "pods") == 0) return pod_fields;
        if (strcmp(r->resource, "events") == 0) return event_fields;
        if (strcmp(r->resource, "nodes") == 0) return node_fields;
        if (strcmp(r->resource, "namespaces") == 0) return namespace_fields;
    }
    return common_fields;
}

const char *const (*as_store_field_labels(const as_resource *r))[2]
{
    if (strcmp(r->group, "events.k8s.io") == 0 && strcmp(r->resource, "events") == 0)
        return events_v1_labels;
    return NULL;
}

/* Copies one dotted path of obj into idx, creating the parents. */
static void index_copy(json_t *idx, const json_t *obj, const char *path)
{
    char buf[128];
    if (strlen(path) >= sizeof buf) return;
    strcpy(buf, path);
    const json_t *from = obj;
    json_t *to = idx;
    char *save = NULL;
    for (char *part = strtok_r(buf, ".", &save); part; part = strtok_r(NULL, ".", &save)) {
        bool last = save == NULL || *save == '\0';
        from = json_is_object(from) ? json_object_get(from, part) : NULL;
        if (!from) return;
        if (last) {
            json_object_set(to, part, (json_t *)from);
            return;
        }
        json_t *next = json_object_get(to, part);
        if (!next) {
            next = json_object();
            json_object_set_new(to, part, next);
        }
        to = next;
    }
}

/* "source" in an event's field selector is source.component, or the
 * reportingController when that is empty (pkg/registry/core/event/
 * strategy.go ToSelectableFields). */
static json_t *build_index(const as_resource *r, const json_t *obj)
{
    json_t *idx = json_object();
    const char *const *fields = as_store_selectable_fields(r);
    for (size_t i = 0; fields[i]; i++)
        index_copy(idx, obj, fields[i]);
    index_copy(idx, obj, "metadata.labels");
    index_copy(idx, obj, "metadata.uid");
    if (fields == event_fields) {
        const json_t *src = json_object_get(json_object_get(obj, "source"), "component");
        if (!json_is_string(src) || !*json_string_value(src))
            src = json_object_get(obj, "reportingComponent");
        if (json_is_string(src)) json_object_set(idx, "source", (json_t *)src);
    }
    return idx;
}

as_blob *as_store_index_blob(const as_resource *r, const json_t *obj)
{
    json_t *idx = build_index(r, obj);
    size_t len;
    char *text = idx ? gp_json_dump(idx, &len) : NULL;
    json_decref(idx);
    as_blob *b = text ? as_blob_new(text, len) : NULL;
    free(text);
    return b;
}

json_t *as_index_parse(const as_blob *index)
{
    return index ? json_loadb(index->text, index->len, 0, NULL) : NULL;
}
