/* SelfSubjectAccessReview and SelfSubjectRulesReview
 * (authorization.k8s.io/v1), which `kubectl auth can-i` asks. gpuop's API
 * server has one user, the admin of its token, whom kube-apiserver's RBAC
 * would allow everything (system:masters is bound to cluster-admin): every
 * review answers yes, with RBAC's reason for that user. Nothing is stored;
 * the answer is the review with its status, 201 Created, as the real
 * server's create of a review answers. */
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_internal.h"
#include "apiserver/decode.h"

static json_t *access_status(void)
{
    return json_pack("{s:b, s:s}", "allowed", 1, "reason",
                     "RBAC: allowed by ClusterRoleBinding \"cluster-admin\" of ClusterRole "
                     "\"cluster-admin\" to Group \"system:masters\"");
}

/* cluster-admin's rules, then system:basic-user's and
 * system:public-info-viewer's, as RBAC lists them for the admin. */
static json_t *rules_status(void)
{
    return json_pack("{s:[{s:[s], s:[s], s:[s]}, {s:[s], s:[s], s:[s, s]}], "
                     "s:[{s:[s], s:[s]}, {s:[s], s:[s, s, s, s, s, s, s, s, s, s, s]}], s:b}",
                     "resourceRules", "verbs", "*", "apiGroups", "*", "resources", "*", "verbs",
                     "create", "apiGroups", "authorization.k8s.io", "resources",
                     "selfsubjectaccessreviews", "selfsubjectrulesreviews", "nonResourceRules",
                     "verbs", "*", "nonResourceURLs", "*", "verbs", "get", "nonResourceURLs",
                     "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                     "/openapi/*", "/readyz", "/version", "/version/", "incomplete", 0);
}

void as_api_review(as_api *api, const as_request *req, const as_path *p, as_response *resp)
{
    (void)api;
    if (strcmp(req->method, "POST") != 0 || p->name[0]) {
        as_status(resp, 405, "MethodNotAllowed",
                  "the server does not allow this method on the requested resource");
        return;
    }
    as_write_options opt;
    if (as_write_options_read(req, "CreateOptions", &opt, resp) != 0) return;
    json_t *warnings = json_array();
    json_t *review = as_decode_request(req, p->resource, opt.validation, warnings, resp);
    if (review) {
        json_t *meta = json_object_get(review, "metadata");
        if (!json_is_object(meta)) json_object_set_new(review, "metadata", meta = json_object());
        json_object_set_new(meta, "creationTimestamp", json_null());
        bool rules = strcmp(p->resource->resource, "selfsubjectrulesreviews") == 0;
        json_object_set_new(review, "status", rules ? rules_status() : access_status());
        char *text = json_dumps(review, JSON_COMPACT);
        as_blob *b = text ? as_blob_new(text, strlen(text)) : NULL;
        free(text);
        if (b)
            as_respond_object(resp, 201, b);
        else
            as_status(resp, 500, "InternalError", "out of memory");
        json_decref(review);
    }
    as_attach_warnings(resp, warnings);
    json_decref(warnings);
}
