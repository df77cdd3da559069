/* The resource types the API server serves: one table that discovery, routing
 * and storage all read, so they cannot disagree. */
#ifndef GPUOP_CLUSTER_RESOURCES_H
#define GPUOP_CLUSTER_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>

typedef struct gc_subresource {
    const char *name; /* "status", "binding", "finalize" */
    const char *kind; /* the kind it answers with */
    const char *const *verbs;
} gc_subresource;

typedef struct gc_resource {
    const char *group; /* "" for the core group */
    const char *version;
    const char *resource; /* plural, lower case: "daemonsets" */
    const char *singular;
    const char *kind;
    bool namespaced;
    const char *const *verbs;
    const char *const *short_names; /* NULL-terminated, may be empty */
    const char *const *categories;
    const gc_subresource *subresources; /* ended by a NULL name */
} gc_resource;

/* Every served resource; *count receives their number. */
const gc_resource *gc_resources(size_t *count);
/* The resource for a group, version and plural name, or NULL. */
const gc_resource *gc_resource_find(const char *group, const char *version, const char *resource);

#endif
