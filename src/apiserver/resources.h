/* The resource types the API server serves: one table that discovery, routing
 * and storage all read, so they cannot disagree. */
#ifndef GPUOP_APISERVER_RESOURCES_H
#define GPUOP_APISERVER_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>

typedef struct as_subresource {
    const char *name; /* "status", "binding", "finalize" */
    const char *kind; /* the kind it answers with */
    const char *const *verbs;
    /* the kind's group and version when not the resource's (pods/eviction:
     * policy/v1 Eviction); NULL: the resource's */
    const char *group, *version;
} as_subresource;

typedef struct as_resource {
    const char *group; /* "" for the core group */
    const char *version;
    const char *resource; /* plural, lower case: "daemonsets" */
    const char *singular;
    const char *kind;
    bool namespaced;
    const char *const *verbs;
    const char *const *short_names; /* NULL-terminated, may be empty */
    const char *const *categories;
    const as_subresource *subresources; /* ended by a NULL name */
} as_resource;

/* Every served resource; *count receives their number. */
const as_resource *as_resources(size_t *count);
/* The resource for a group, version and plural name, or NULL. */
const as_resource *as_resource_find(const char *group, const char *version, const char *resource);

#endif
