/* Pieces of the object API that its files share (api.c, api_write.c,
 * watch.c): request paths, Status errors, and what a stored object's
 * envelope looks like. Not a public interface. */
#ifndef GPUOP_APISERVER_API_INTERNAL_H
#define GPUOP_APISERVER_API_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <time.h>

#include "apiserver/resources.h"
#include "apiserver/routes.h"

/* An object path: /api/v1/namespaces/NS/RESOURCE/NAME/SUB and its kin. */
typedef struct as_path {
    const as_resource *resource;
    char ns[254];   /* "" when the path names none */
    char name[254]; /* "" for a collection */
    char sub[32];   /* "" or "status", "binding", "finalize" */
} as_path;

/* 0, or -1 when the path is not under /api or /apis or names no resource. */
int as_path_parse(const char *path, as_path *p);

/* "pods", or "daemonsets.apps" (apimachinery's qualifiedResource). */
void as_qualified_resource(const as_resource *r, char *buf, size_t size);

/* Status errors with the reasons and texts kube-apiserver uses. */
void as_status_details(as_response *resp, unsigned code, const char *reason, const char *message,
                       json_t *details);
void as_error_not_found(as_response *resp, const as_resource *r, const char *name);
void as_error_already_exists(as_response *resp, const as_resource *r, const char *name);
void as_error_conflict(as_response *resp, const as_resource *r, const char *name);
void as_error_forbidden(as_response *resp, const as_resource *r, const char *name, const char *why,
                        json_t *causes);
void as_error_invalid(as_response *resp, const as_resource *r, const char *name, json_t *causes);
void as_error_bad_request(as_response *resp, const char *message);

/* The resourceVersion and apiVersion texts. */
void as_api_version(const as_resource *r, char *buf, size_t size);

/* Answers with a stored object's text (the response takes the reference). */
void as_respond_object(as_response *resp, unsigned status, as_blob *blob);

/* Whether the client asked for a meta.k8s.io Table. */
bool as_wants_table(const as_request *req);

/* A query parameter or NULL. */
const char *as_query(const as_request *req, const char *key);

/* ?labelSelector= and ?fieldSelector=; answers 400 and returns -1 when one
 * is bad. */
struct kube_label_selector;
struct kube_field_selector;
int as_api_selectors(const as_request *req, const as_resource *r, struct kube_label_selector **ls,
                     struct kube_field_selector **fs, as_response *resp);
/* Whether a stored object's index (as_object.index) passes both selectors;
 * the index is parsed only when a selector has terms. */
bool as_api_matches(const as_blob *index, const struct kube_label_selector *ls,
                    const struct kube_field_selector *fs);

/* Writes: create, update, patch, delete (api_write.c). */
void as_api_create(as_api *api, const as_request *req, const as_path *p, as_response *resp);
void as_api_update(as_api *api, const as_request *req, const as_path *p, as_response *resp);
void as_api_patch(as_api *api, const as_request *req, const as_path *p, as_response *resp);
void as_api_delete(as_api *api, const as_request *req, const as_path *p, as_response *resp);
void as_api_bind(as_api *api, const as_request *req, const as_path *p, as_response *resp);

/* Starts a watch (watch.c); answers errors itself. */
void as_api_watch(as_api *api, const as_request *req, const as_path *p, as_response *resp);

#endif
