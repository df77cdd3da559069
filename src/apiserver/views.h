/* Resources served as a second view of another resource's objects: kube
 * stores events.k8s.io/v1 Events and core v1 Events as one (the same etcd
 * prefix, one internal type), so an Event written through either API is
 * read through both. Here the objects are stored once, in their core form,
 * and converted on the way in and out of the store. */
#ifndef GPUOP_APISERVER_VIEWS_H
#define GPUOP_APISERVER_VIEWS_H

#include <jansson.h>
#include <stdbool.h>

#include "apiserver/resources.h"
#include "apiserver/store.h"

/* The resource r's objects are stored under (r itself for most). */
const as_resource *as_storage(const as_resource *r);
/* Whether r is a view of another resource's objects. */
bool as_is_view(const as_resource *r);

/* A stored object (its reference taken) in r's form; the same object when
 * r is no view. */
json_t *as_view_from_stored(const as_resource *r, json_t *stored);
/* An object of r's form (its reference taken) in its stored form. */
json_t *as_view_to_stored(const as_resource *r, json_t *obj);
/* A stored text (its reference taken) in r's form; NULL when out of memory. */
as_blob *as_view_blob(const as_resource *r, as_blob *stored);

#endif
