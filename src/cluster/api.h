/* Pieces of the object API that its files share (api.c, api_write.c,
 * watch.c): request paths, Status errors, and what a stored object's
 * envelope looks like. Not a public interface. */
#ifndef GPUOP_CLUSTER_API_H
#define GPUOP_CLUSTER_API_H

#include <jansson.h>
#include <stdbool.h>
#include <time.h>

#include "cluster/resources.h"
#include "cluster/routes.h"

/* An object path: /api/v1/namespaces/NS/RESOURCE/NAME/SUB and its kin. */
typedef struct gc_path {
    const gc_resource *resource;
    char ns[254];   /* "" when the path names none */
    char name[254]; /* "" for a collection */
    char sub[32];   /* "" or "status", "binding", "finalize" */
} gc_path;

/* 0, or -1 when the path is not under /api or /apis or names no resource. */
int gc_path_parse(const char *path, gc_path *p);

/* "pods", or "daemonsets.apps" (apimachinery's qualifiedResource). */
void gc_qualified_resource(const gc_resource *r, char *buf, size_t size);

/* Status errors with the reasons and texts kube-apiserver uses. */
void gc_status_details(gc_response *resp, unsigned code, const char *reason, const char *message,
                       json_t *details);
void gc_error_not_found(gc_response *resp, const gc_resource *r, const char *name);
void gc_error_already_exists(gc_response *resp, const gc_resource *r, const char *name);
void gc_error_conflict(gc_response *resp, const gc_resource *r, const char *name);
void gc_error_forbidden(gc_response *resp, const gc_resource *r, const char *name, const char *why,
                        json_t *causes);
void gc_error_invalid(gc_response *resp, const gc_resource *r, const char *name, json_t *causes);
void gc_error_bad_request(gc_response *resp, const char *message);

/* The resourceVersion and apiVersion texts. */
void gc_api_version(const gc_resource *r, char *buf, size_t size);
/* "2025-01-01T10:00:00Z" for t. */
void gc_format_time(time_t t, char buf[32]);

/* Answers with a stored object's text (the response takes the reference). */
void gc_respond_object(gc_response *resp, unsigned status, gc_blob *blob);

/* Whether the client asked for a meta.k8s.io Table. */
bool gc_wants_table(const gc_request *req);

/* A query parameter or NULL. */
const char *gc_query(const gc_request *req, const char *key);

/* ?labelSelector= and ?fieldSelector=; answers 400 and returns -1 when one
 * is bad. */
struct kls_selector;
struct kfs_selector;
int gc_api_selectors(const gc_request *req, const gc_resource *r, struct kls_selector **ls,
                     struct kfs_selector **fs, gc_response *resp);
/* Whether a stored object's index (gc_object.index) passes both selectors;
 * the index is parsed only when a selector has terms. */
bool gc_api_matches(const gc_blob *index, const struct kls_selector *ls,
                    const struct kfs_selector *fs);

/* Writes: create, update, patch, delete (api_write.c). */
void gc_api_create(gc_api *api, const gc_request *req, const gc_path *p, gc_response *resp);
void gc_api_update(gc_api *api, const gc_request *req, const gc_path *p, gc_response *resp);
void gc_api_patch(gc_api *api, const gc_request *req, const gc_path *p, gc_response *resp);
void gc_api_delete(gc_api *api, const gc_request *req, const gc_path *p, gc_response *resp);
void gc_api_bind(gc_api *api, const gc_request *req, const gc_path *p, gc_response *resp);

/* Starts a watch (watch.c); answers errors itself. */
void gc_api_watch(gc_api *api, const gc_request *req, const gc_path *p, gc_response *resp);

#endif
