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
/* 0 when obj names no namespace or the request's; else the 400 of
 * rest.EnsureObjectNamespaceMatchesRequestNamespace, answered (api_write.c). */
int as_check_object_namespace(const json_t *obj, const as_path *p, as_response *resp);
/* obj (borrowed) serialized as the answer (api_write.c). */
void as_respond_json(as_response *resp, unsigned status, json_t *obj);

/* Whether the client asked for a meta.k8s.io Table. */
bool as_wants_table(const as_request *req);

/* What a Table row carries of its object (TableOptions' includeObject):
 * its metadata (the default), the whole object, or nothing. */
typedef enum as_table_include {
    AS_INCLUDE_METADATA,
    AS_INCLUDE_OBJECT,
    AS_INCLUDE_NONE,
} as_table_include;

/* ?includeObject= of a Table request; -1 after answering kube-apiserver's
 * 400 for another value. */
int as_table_include_read(const as_request *req, as_table_include *include, as_response *resp);

/* Gives a row made by as_table (which carries the metadata) what `include`
 * asks: the object itself, or null. */
void as_table_row_include(json_t *row, json_t *object, as_table_include include);

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

/* ---- reading a write's request (api_decode.c) ---- */

typedef enum as_field_validation { AS_FV_IGNORE, AS_FV_WARN, AS_FV_STRICT } as_field_validation;

typedef struct as_write_options {
    as_field_validation validation; /* ?fieldValidation=, Warn when absent */
    bool dry_run;                   /* ?dryRun=All */
} as_write_options;

/* The options of a write from its query, checked as ValidateCreateOptions
 * (and Update, Patch) checks them; options_kind is "CreateOptions",
 * "UpdateOptions" or "PatchOptions". -1 after answering 422. */
int as_write_options_read(const as_request *req, const char *options_kind, as_write_options *o,
                          as_response *resp);

/* Whether a Content-Type is `want`, parameters aside. */
bool as_type_is(const char *content_type, const char *want);

/* jansson's parse (through kc_object_parse_exact when that can promise the
 * same value), telling whether the text had duplicate keys (the last of
 * them is kept, as encoding/json keeps it). */
json_t *as_parse_json(const char *text, size_t len, bool *duplicates, json_error_t *jerr);

/* apiVersion and kind must be r's or absent; they are set, first. -1 after
 * answering 400. */
int as_check_type(json_t *obj, const as_resource *r, as_response *resp);

/* A create's or an update's body as an object of r: JSON, YAML or protobuf,
 * decoded by type (decode.h) with the 400s kube-apiserver gives; strict
 * errors refuse it under Strict and are appended to `warnings` under
 * Warn, and the fields no Go struct has are dropped. NULL after
 * answering. */
json_t *as_decode_request(const as_request *req, const as_resource *r, as_field_validation fv,
                          json_t *warnings, as_response *resp);

typedef enum as_patch_type { AS_PATCH_JSON, AS_PATCH_MERGE, AS_PATCH_STRATEGIC } as_patch_type;

/* The strict errors of a patch's own text (its duplicate keys), for
 * as_decode_patched; `duplicates` says whether jansson found any. */
json_t *as_decode_patch_strict(const char *text, size_t len, as_patch_type type, bool duplicates);

/* The patched object checked by type as the patcher checks it: a 422
 * `patch: Invalid value: ...` for a type error, and for strict errors (the
 * patch's, in patch_strict, then the object's) under Strict; what no Go
 * struct has is dropped from `patched` otherwise. -1 after answering. */
int as_decode_patched(const as_resource *r, as_patch_type type, const json_t *patch,
                      json_t *patch_strict, json_t *patched, as_field_validation fv,
                      json_t *warnings, as_response *resp);

/* The warnings go out as Warning headers with the answer. */
void as_attach_warnings(as_response *resp, const json_t *warnings);

/* Writes: create, update, patch, delete (api_write.c). */
void as_api_create(as_api *api, const as_request *req, const as_path *p, as_response *resp);
void as_api_update(as_api *api, const as_request *req, const as_path *p, as_response *resp);
void as_api_patch(as_api *api, const as_request *req, const as_path *p, as_response *resp);
void as_api_delete(as_api *api, const as_request *req, const as_path *p, as_response *resp);
void as_api_bind(as_api *api, const as_request *req, const as_path *p, as_response *resp);

/* Deletes the objects a collection's selectors pick, each as a DELETE of
 * it would, and answers the list of them (api_write.c). */
void as_api_delete_collection(as_api *api, const as_request *req, const as_path *p,
                              as_response *resp);

/* pods/eviction (api_evict.c). */
void as_api_evict(as_api *api, const as_request *req, const as_path *p, as_response *resp);

/* pods/log, exec, attach and portforward (api_connect.c). */
void as_api_pod_connect(as_api *api, const as_request *req, const as_path *p, as_response *resp);

/* SelfSubjectAccessReview and SelfSubjectRulesReview (api_review.c). */
void as_api_review(as_api *api, const as_request *req, const as_path *p, as_response *resp);

/* Starts a watch (watch.c); answers errors itself. */
void as_api_watch(as_api *api, const as_request *req, const as_path *p, as_response *resp);

#endif
