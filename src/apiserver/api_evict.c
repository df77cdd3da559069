/* pods/eviction: the policy/v1 Eviction that `kubectl drain` POSTs for each
 * pod once discovery lists the subresource (EvictionREST.Create,
 * pkg/registry/core/pod/storage/eviction.go, read with `search`; no
 * recording covers an eviction).
 *
 * PodDisruptionBudgets are not served, so every eviction is allowed, which
 * is what the real subresource does for a pod no budget selects: the pod
 * gets the DisruptionTarget condition through its status
 * (addConditionAndDeletePod; PodDisruptionConditions is on in 1.32) and is
 * then deleted with the Eviction's deleteOptions. Both go through the
 * in-process client, so grace periods, finalizers, preconditions and dry
 * runs are exactly a DELETE's. The answer is a Status Success, 201. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "apiserver/api_internal.h"
#include "apiserver/loopback.h"
#include "kube/json.h"
#include "kube/protobuf.h"
#include "kube/time.h"

/* The body, JSON or protobuf (kubectl's typed client), as an Eviction.
 * NULL, answered, when it is not one. */
static json_t *read_eviction(const as_request *req, as_response *resp)
{
    json_t *ev = NULL;
    if (as_type_is(req->content_type, "application/vnd.kubernetes.protobuf")) {
        gp_error err = {0};
        if (!(ev = kube_protobuf_decode(req->body, req->body_len, &err))) {
            as_error_bad_request(resp, err.text);
            return NULL;
        }
    } else {
        json_error_t jerr;
        bool duplicates;
        ev = req->body_len ? as_parse_json(req->body, req->body_len, &duplicates, &jerr) : NULL;
    }
    if (!json_is_object(ev) || !kube_str_is(ev, "kind", "Eviction")) {
        json_decref(ev);
        as_error_bad_request(resp, "the body of an eviction must be a policy/v1 Eviction");
        return NULL;
    }
    return ev;
}

static bool is_text(const json_t *v, const char *want)
{
    return json_is_string(v) && strcmp(json_string_value(v), want) == 0;
}

static bool dry_run_all(const json_t *dry_run)
{
    size_t i;
    const json_t *v;
    json_array_foreach(dry_run, i, v) if (is_text(v, "All")) return true;
    return false;
}

/* The Eviction's deleteOptions (a new object) with the request's dryRun
 * when the body names none (propagateDryRun); NULL, answered, when both
 * name one and they differ. */
static json_t *delete_options_of(const as_request *req, const json_t *ev, as_response *resp)
{
    const json_t *given = json_object_get(ev, "deleteOptions");
    json_t *opt = json_is_object(given) ? json_deep_copy(given) : json_object();
    const char *query = as_query(req, "dryRun");
    const json_t *body = json_object_get(opt, "dryRun");
    if (!query || !*query) return opt;
    if (json_array_size(body) == 0) {
        json_object_set_new(opt, "dryRun", json_pack("[s]", query));
        return opt;
    }
    if (json_array_size(body) == 1 && is_text(json_array_get(body, 0), query)) return opt;
    char msg[256];
    snprintf(msg, sizeof msg,
             "Non-matching dry-run options in request and content: [%.60s] and [%.60s]", query,
             json_string_value(json_array_get(body, 0)) ? json_string_value(json_array_get(body, 0))
                                                        : "");
    as_error_bad_request(resp, msg);
    json_decref(opt);
    return NULL;
}

/* A reply's Status (or answer) passed on as this request's answer. */
static void forward(as_response *resp, as_reply *r)
{
    if (r->body)
        as_respond_json(resp, r->status, r->body);
    else
        as_status(resp, r->status ? r->status : 500, "InternalError", "eviction failed");
}

/* The DisruptionTarget condition, through pods/status (a strategic merge
 * keyed by type). A precondition the pod no longer meets is left to the
 * DELETE to refuse; a resourceVersion precondition moves to the version
 * this write made, as addConditionAndDeletePod moves it. */
static int add_condition(as_api *api, const char *path, const json_t *pod, json_t *opt,
                         as_response *resp)
{
    json_t *pre = json_object_get(opt, "preconditions");
    const char *uid = kube_str_or_null(pre, "uid");
    const char *rv = kube_str_or_null(pre, "resourceVersion");
    const json_t *meta = json_object_get(pod, "metadata");
    if ((uid && *uid && !kube_str_is(meta, "uid", uid)) ||
        (rv && *rv && !kube_str_is(meta, "resourceVersion", rv)))
        return 0;
    char now[KUBE_TIME_TEXT_MAX], status_path[660];
    kube_time_format((int64_t)time(NULL), now);
    snprintf(status_path, sizeof status_path, "%s/status", path);
    json_t *patch =
        json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:s}]}}", "status", "conditions", "type",
                  "DisruptionTarget", "status", "True", "lastTransitionTime", now, "reason",
                  "EvictionByEvictionAPI", "message", "Eviction API: evicting");
    as_reply r = as_loopback_call(api, "PATCH", status_path, NULL,
                                  "application/strategic-merge-patch+json", patch);
    json_decref(patch);
    int rc = 0;
    if (r.status != 200) {
        forward(resp, &r);
        rc = -1;
    } else if (rv && *rv) {
        const char *now_rv =
            kube_str_or_null(json_object_get(r.body, "metadata"), "resourceVersion");
        if (now_rv) json_object_set_new(pre, "resourceVersion", json_string(now_rv));
    }
    as_reply_free(&r);
    return rc;
}

void as_api_evict(as_api *api, const as_request *req, const as_path *p, as_response *resp)
{
    json_t *ev = read_eviction(req, resp);
    if (!ev) return;
    json_t *opt = NULL;
    if (as_check_object_namespace(ev, p, resp) != 0) goto done;
    if (!kube_str_is(json_object_get(ev, "metadata"), "name", p->name)) {
        as_error_bad_request(resp, "name in URL does not match name in Eviction object");
        goto done;
    }
    if (!(opt = delete_options_of(req, ev, resp))) goto done;
    char path[640];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", p->ns, p->name);
    as_reply pod = as_loopback_call(api, "GET", path, NULL, NULL, NULL);
    if (pod.status != 200) {
        forward(resp, &pod);
        as_reply_free(&pod);
        goto done;
    }
    int rc = dry_run_all(json_object_get(opt, "dryRun"))
                 ? 0
                 : add_condition(api, path, pod.body, opt, resp);
    as_reply_free(&pod);
    if (rc != 0) goto done;
    as_reply del = as_loopback_call(api, "DELETE", path, NULL, NULL, opt);
    if (del.status != 200) {
        forward(resp, &del);
    } else {
        json_t *ok = json_pack("{s:s, s:s, s:{}, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
                               "metadata", "status", "Success", "code", 201);
        as_respond_json(resp, 201, ok);
        json_decref(ok);
    }
    as_reply_free(&del);
done:
    json_decref(opt);
    json_decref(ev);
}
