/* The object API's read side and dispatch: paths, errors, GET and LIST.
 * Writes are in api_write.c, watches in watch.c. */
#include "apiserver/api_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apiserver/strategy.h"
#include "apiserver/table.h"
#include "apiserver/views.h"
#include "kube/selector.h"
#include "util/buf.h"
#include "util/deadline.h"

static bool copy_segment(char *dst, size_t size, const char *src, size_t len)
{
    if (len == 0 || len >= size) return false;
    memcpy(dst, src, len);
    dst[len] = '\0';
    return true;
}

/* Splits path into at most 8 segments. */
static size_t split(const char *path, const char *seg[8], size_t len[8])
{
    size_t n = 0;
    const char *p = path;
    while (*p == '/')
        p++;
    while (*p && n < 8) {
        const char *end = strchr(p, '/');
        size_t l = end ? (size_t)(end - p) : strlen(p);
        seg[n] = p;
        len[n++] = l;
        p += l;
        while (*p == '/')
            p++;
    }
    return *p ? 9 : n;
}

static bool seg_is(const char *seg, size_t len, const char *word)
{
    return strlen(word) == len && strncmp(seg, word, len) == 0;
}

int as_path_parse(const char *path, as_path *p)
{
    memset(p, 0, sizeof *p);
    const char *seg[8];
    size_t len[8];
    size_t n = split(path, seg, len);
    if (n > 8 || n < 3) return -1;
    char group[64] = "", version[16];
    size_t at;
    if (seg_is(seg[0], len[0], "api")) {
        if (!copy_segment(version, sizeof version, seg[1], len[1])) return -1;
        at = 2;
    } else if (seg_is(seg[0], len[0], "apis") && n >= 4) {
        if (!copy_segment(group, sizeof group, seg[1], len[1]) ||
            !copy_segment(version, sizeof version, seg[2], len[2]))
            return -1;
        at = 3;
    } else {
        return -1;
    }
    char resource[64];
    /* namespaces/NS/RESOURCE...: a namespaced path, unless what follows the
     * namespace is a subresource of the namespace itself. */
    if (n >= at + 3 && seg_is(seg[at], len[at], "namespaces")) {
        if (!copy_segment(resource, sizeof resource, seg[at + 2], len[at + 2])) return -1;
        const as_resource *r = as_resource_find(group, version, resource);
        if (r && r->namespaced) {
            if (!copy_segment(p->ns, sizeof p->ns, seg[at + 1], len[at + 1])) return -1;
            p->resource = r;
            at += 3;
            goto name;
        }
    }
    if (!copy_segment(resource, sizeof resource, seg[at], len[at])) return -1;
    p->resource = as_resource_find(group, version, resource);
    if (!p->resource) return -1;
    at++;
name:
    if (at < n && !copy_segment(p->name, sizeof p->name, seg[at], len[at])) return -1;
    if (at + 1 < n && !copy_segment(p->sub, sizeof p->sub, seg[at + 1], len[at + 1])) return -1;
    if (at + 2 < n) return -1;
    if (p->sub[0]) {
        bool known = false;
        for (const as_subresource *s = p->resource->subresources; s->name; s++)
            known |= strcmp(s->name, p->sub) == 0;
        if (!known) return -1;
    }
    return 0;
}

void as_qualified_resource(const as_resource *r, char *buf, size_t size)
{
    if (r->group[0])
        snprintf(buf, size, "%s.%s", r->resource, r->group);
    else
        snprintf(buf, size, "%s", r->resource);
}

void as_api_version(const as_resource *r, char *buf, size_t size)
{
    if (r->group[0])
        snprintf(buf, size, "%s/%s", r->group, r->version);
    else
        snprintf(buf, size, "%s", r->version);
}

const char *as_query(const as_request *req, const char *key)
{
    return req->query ? req->query(req->query_ctx, key) : NULL;
}

bool as_wants_table(const as_request *req)
{
    return req->accept && strstr(req->accept, "as=Table") && strstr(req->accept, "g=meta.k8s.io");
}

/* handlers/response.go asTable and optionsForTransform: Object, Metadata
 * or "" (metadata), None; any other value is refused before anything. */
int as_table_include_read(const as_request *req, as_table_include *include, as_response *resp)
{
    const char *v = as_query(req, "includeObject");
    *include = AS_INCLUDE_METADATA;
    if (!v || !*v || strcmp(v, "Metadata") == 0) return 0;
    if (strcmp(v, "Object") == 0) {
        *include = AS_INCLUDE_OBJECT;
        return 0;
    }
    if (strcmp(v, "None") == 0) {
        *include = AS_INCLUDE_NONE;
        return 0;
    }
    gp_buf b = {0};
    gp_buf_add(&b, "unrecognized includeObject value: ");
    gp_buf_add_go_quoted(&b, v, strlen(v));
    char *msg = gp_buf_take(&b);
    as_error_bad_request(resp, msg ? msg : "unrecognized includeObject value");
    free(msg);
    return -1;
}

/* None leaves the row's runtime.RawExtension empty, which encodes as null
 * (TableRow's omitempty does nothing for a struct). */
void as_table_row_include(json_t *row, json_t *object, as_table_include include)
{
    if (include == AS_INCLUDE_OBJECT) json_object_set(row, "object", object);
    if (include == AS_INCLUDE_NONE) json_object_set_new(row, "object", json_null());
}

void as_status_details(as_response *resp, unsigned code, const char *reason, const char *message,
                       json_t *details)
{
    as_status(resp, code, reason, message);
    if (!details) return;
    json_t *s = json_loadb(resp->body, resp->len, 0, NULL);
    free(resp->body);
    /* details goes before code, where apimachinery puts it */
    json_t *c = json_incref(json_object_get(s, "code"));
    json_object_del(s, "code");
    json_object_set_new(s, "details", details);
    json_object_set_new(s, "code", c);
    resp->body = json_dumps(s, JSON_COMPACT);
    resp->len = resp->body ? strlen(resp->body) : 0;
    json_decref(s);
}

static json_t *name_details(const as_resource *r, const char *name, bool kind_is_kind)
{
    json_t *d = json_object();
    if (name && *name) json_object_set_new(d, "name", json_string(name));
    if (r->group[0]) json_object_set_new(d, "group", json_string(r->group));
    json_object_set_new(d, "kind", json_string(kind_is_kind ? r->kind : r->resource));
    return d;
}

void as_error_not_found(as_response *resp, const as_resource *r, const char *name)
{
    char q[128], msg[512];
    as_qualified_resource(r, q, sizeof q);
    snprintf(msg, sizeof msg, "%s \"%s\" not found", q, name);
    as_status_details(resp, 404, "NotFound", msg, name_details(r, name, false));
}

void as_error_already_exists(as_response *resp, const as_resource *r, const char *name)
{
    char q[128], msg[512];
    as_qualified_resource(r, q, sizeof q);
    snprintf(msg, sizeof msg, "%s \"%s\" already exists", q, name);
    as_status_details(resp, 409, "AlreadyExists", msg, name_details(r, name, false));
}

void as_error_conflict(as_response *resp, const as_resource *r, const char *name)
{
    char q[128], msg[640];
    as_qualified_resource(r, q, sizeof q);
    snprintf(msg, sizeof msg,
             "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please "
             "apply your changes to the latest version and try again",
             q, name);
    as_status_details(resp, 409, "Conflict", msg, name_details(r, name, false));
}

void as_error_forbidden(as_response *resp, const as_resource *r, const char *name, const char *why,
                        json_t *causes)
{
    char q[128], msg[1024];
    as_qualified_resource(r, q, sizeof q);
    snprintf(msg, sizeof msg, "%s \"%s\" is forbidden: %s", q, name, why);
    json_t *d = name_details(r, name, false);
    if (causes) json_object_set_new(d, "causes", causes);
    as_status_details(resp, 403, "Forbidden", msg, d);
}

void as_error_invalid(as_response *resp, const as_resource *r, const char *name, json_t *causes)
{
    char *msg = as_strategy_invalid_message(r->kind, name, causes);
    json_t *d = name_details(r, name, true);
    json_object_set_new(d, "causes", causes);
    as_status_details(resp, 422, "Invalid", msg ? msg : "invalid", d);
    free(msg);
}

void as_error_bad_request(as_response *resp, const char *message)
{
    as_status(resp, 400, "BadRequest", message);
}

void as_respond_object(as_response *resp, unsigned status, as_blob *blob)
{
    resp->status = status;
    resp->content_type = "application/json";
    resp->blob = blob;
    resp->len = blob->len;
}

/* A Table of stored objects. Rows are made one object at a time and
 * written out at once, so a table of 30,000 pods never holds 30,000 parsed
 * pods (nor their row objects) in memory together. */
static void respond_table(as_response *resp, const as_request *req, const as_resource *r,
                          as_blob *const *blobs, size_t n, const char *list_rv,
                          const char *continue_token)
{
    /* Object: kubectl get --sort-by sorts on the objects */
    as_table_include include;
    if (as_table_include_read(req, &include, resp) != 0) return;
    time_t now = time(NULL);
    json_t *table = as_table(r->group, r->kind, NULL, 0, true, list_rv, now);
    if (continue_token && table) {
        json_t *meta = json_object_get(table, "metadata");
        if (json_is_object(meta))
            json_object_set_new(meta, "continue", json_string(continue_token));
    }
    /* the envelope with "rows" last, so the rows can follow its text */
    json_object_del(table, "rows");
    char *head = table ? json_dumps(table, JSON_COMPACT) : NULL;
    json_decref(table);
    gp_buf b = {.state = head ? GP_BUF_OK : GP_BUF_NO_MEMORY};
    if (head) {
        gp_buf_addn(&b, head, strlen(head) - 1);
        gp_buf_add(&b, ",\"rows\":[");
    }
    free(head);
    size_t written = 0;
    for (size_t i = 0; i < n && !gp_buf_failed(&b); i++) {
        json_t *o = json_loadb(blobs[i]->text, blobs[i]->len, 0, NULL);
        if (!o) continue;
        json_t *one = as_table(r->group, r->kind, &o, 1, false, NULL, now);
        json_t *first = json_array_get(json_object_get(one, "rows"), 0);
        as_table_row_include(first, o, include);
        json_decref(o);
        char *row = json_dumps(first, JSON_COMPACT);
        json_decref(one);
        if (!row) continue;
        if (written++) gp_buf_addc(&b, ',');
        gp_buf_add(&b, row);
        free(row);
    }
    gp_buf_add(&b, "]}");
    size_t len = b.len;
    char *body = gp_buf_take(&b);
    if (!body) {
        as_status(resp, 500, "InternalError", "out of memory");
        return;
    }
    resp->status = 200;
    resp->content_type = "application/json;as=Table;v=v1;g=meta.k8s.io";
    resp->body = body;
    resp->len = len;
}

/* The retry kube-apiserver advises after its watch cache waited in vain
 * (resourceVersionTooHighRetrySeconds). */
#define TOO_LARGE_RETRY_SECONDS 1

static void too_large_version(as_response *resp, unsigned long long want, uint64_t current,
                              int retry)
{
    char msg[160];
    snprintf(msg, sizeof msg, "Timeout: Too large resource version: %llu, current: %llu", want,
             (unsigned long long)current);
    json_t *details = json_pack("{s:[{s:s, s:s}]}", "causes", "reason", "ResourceVersionTooLarge",
                                "message", "Too large resource version");
    if (details && retry) json_object_set_new(details, "retryAfterSeconds", json_integer(retry));
    as_status_details(resp, 504, "Timeout", msg, details);
}

/* Waits, the lock let go meanwhile, until the store reaches `want` or ms
 * have passed. Whether it reached it. */
static bool wait_until_fresh(as_store *s, uint64_t want, int ms)
{
    struct timespec deadline = gp_deadline_after_ms(ms > 0 ? ms : 0);
    while (as_store_rv(s) < want && !gp_deadline_past(&deadline) && as_store_wait(s, &deadline))
        continue;
    return as_store_rv(s) >= want;
}

/* A GET or LIST at resourceVersion N (not "0"; match unset or
 * NotOlderThan) wants a state at least as new as N. kube-apiserver 1.32
 * serves it from the watch cache, which waits up to 3 s for N
 * (api->fresh_wait_ms here) and then answers Timeout "Too large resource
 * version" with a retry of 1 s (cacher waitUntilFreshAndBlock,
 * storage.NewTooLargeResourceVersionError); a LIST with a limit goes to
 * etcd instead (cacher shouldDelegateList), which refuses a future N at
 * once, without a retry (etcd3 store validateMinimumResourceVersion). An
 * Exact match is left as before: no recording says what 1.32 answers for a
 * future one. Needs the lock (the wait lets it go); -1 when answered. */
static int wait_for_version(as_api *api, const as_request *req, bool to_etcd, as_response *resp)
{
    const char *text = as_query(req, "resourceVersion");
    const char *match = as_query(req, "resourceVersionMatch");
    if (!text || !*text || strcmp(text, "0") == 0 || (match && strcmp(match, "Exact") == 0))
        return 0;
    char *end;
    errno = 0;
    unsigned long long want = strtoull(text, &end, 10);
    if (*end || errno || text[0] == '-') return 0; /* the store's versions are numbers */
    if (want <= as_store_rv(api->store)) return 0;
    if (!to_etcd && wait_until_fresh(api->store, want, api->fresh_wait_ms)) return 0;
    too_large_version(resp, want, as_store_rv(api->store), to_etcd ? 0 : TOO_LARGE_RETRY_SECONDS);
    return -1;
}

static void get_object(as_api *api, const as_request *req, const as_path *p, as_response *resp)
{
    as_store_lock(api->store);
    if (wait_for_version(api, req, false, resp) != 0) {
        as_store_unlock(api->store);
        return;
    }
    const as_object *o = as_store_get(api->store, as_storage(p->resource), p->ns, p->name);
    if (!o) {
        as_store_unlock(api->store);
        as_error_not_found(resp, p->resource, p->name);
        return;
    }
    as_blob *b = as_blob_ref(o->json);
    as_store_unlock(api->store);
    if (!(b = as_view_blob(p->resource, b))) {
        as_status(resp, 500, "InternalError", "out of memory");
        return;
    }
    if (as_wants_table(req)) {
        respond_table(resp, req, p->resource, &b, 1, NULL, NULL);
        as_blob_unref(b);
    } else {
        as_respond_object(resp, 200, b);
    }
}

/* Selectors from the query; answers 400 and returns -1 when one is bad. */
int as_api_selectors(const as_request *req, const as_resource *r, kube_label_selector **ls,
                     kube_field_selector **fs, as_response *resp)
{
    gp_error err = {0};
    *ls = kube_label_selector_parse(as_query(req, "labelSelector"), &err);
    if (!*ls) {
        as_error_bad_request(resp, err.text);
        return -1;
    }
    const char *text = as_query(req, "fieldSelector");
    const char *const(*labels)[2] = as_store_field_labels(r);
    *fs = labels ? kube_field_selector_parse_converted(text, labels, &err)
                 : kube_field_selector_parse(text, as_store_selectable_fields(r), &err);
    if (!*fs) {
        kube_label_selector_free(*ls);
        *ls = NULL;
        as_error_bad_request(resp, err.text);
        return -1;
    }
    return 0;
}

bool as_api_matches(const as_blob *index, const kube_label_selector *ls,
                    const kube_field_selector *fs)
{
    if (kube_label_selector_is_empty(ls) && kube_field_selector_is_empty(fs)) return true;
    json_t *idx = as_index_parse(index);
    if (!idx) return false;
    const json_t *labels = json_object_get(json_object_get(idx, "metadata"), "labels");
    bool match = kube_label_selector_matches(ls, labels) && kube_field_selector_matches(fs, idx);
    json_decref(idx);
    return match;
}

/* "Pod" -> "PodList" envelope text up to the items. */
static void list_head(const as_resource *r, uint64_t rv, const char *cont, gp_buf *b)
{
    char av[96];
    as_api_version(r, av, sizeof av);
    gp_buf_addf(b,
                "{\"kind\":\"%sList\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":"
                "\"%llu\"",
                r->kind, av, (unsigned long long)rv);
    if (cont) gp_buf_addf(b, ",\"continue\":\"%s\"", cont);
    gp_buf_add(b, "},\"items\":[");
}

/* The LIST body without re-encoding: stored texts joined. */
static void respond_list(as_response *resp, const as_resource *r, uint64_t rv, const char *cont,
                         as_blob *const *blobs, size_t n)
{
    gp_buf b = {0};
    size_t total = 600 + (cont ? strlen(cont) : 0);
    for (size_t i = 0; i < n; i++)
        total += blobs[i]->len + 1;
    gp_buf_reserve(&b, total); /* one allocation for a list of any size */
    list_head(r, rv, cont, &b);
    for (size_t i = 0; i < n; i++) {
        if (i) gp_buf_addc(&b, ',');
        gp_buf_addn(&b, blobs[i]->text, blobs[i]->len);
    }
    gp_buf_add(&b, "]}");
    size_t len = b.len;
    char *body = gp_buf_take(&b);
    if (!body) {
        as_status(resp, 500, "InternalError", "out of memory");
        return;
    }
    resp->status = 200;
    resp->content_type = "application/json";
    resp->body = body;
    resp->len = len;
}

/* The continue token is opaque to clients: "RV:KEY" of the last item sent.
 * The matching objects are picked under the lock (their texts referenced);
 * the answer is written after it is released. */
static void list_objects(as_api *api, const as_request *req, const as_path *p, as_response *resp)
{
    kube_label_selector *ls;
    kube_field_selector *fs;
    if (as_api_selectors(req, p->resource, &ls, &fs, resp) != 0) return;
    const char *limit_text = as_query(req, "limit"), *cont = as_query(req, "continue");
    long limit = limit_text ? strtol(limit_text, NULL, 10) : 0;
    const char *after = NULL;
    if (cont && *cont) {
        after = strchr(cont, ':');
        if (!after) {
            kube_label_selector_free(ls);
            kube_field_selector_free(fs);
            as_status(resp, 400, "BadRequest", "continue key is not valid");
            return;
        }
        after++;
    }
    as_store_lock(api->store);
    if (wait_for_version(api, req, limit > 0, resp) != 0) {
        as_store_unlock(api->store);
        kube_label_selector_free(ls);
        kube_field_selector_free(fs);
        return;
    }
    const as_object **all;
    size_t n = as_store_list(api->store, as_storage(p->resource), p->ns[0] ? p->ns : NULL, &all),
           kept = 0;
    as_blob **blobs = malloc((n ? n : 1) * sizeof *blobs);
    char *next = NULL;
    const char *last_key = NULL;
    /* The listing is sorted by key: a page starts after a binary search,
     * so reading a list of N objects in pages costs N log N, not N^2. */
    size_t start = 0;
    for (size_t hi = n; after && start < hi;) {
        size_t mid = start + (hi - start) / 2;
        if (strcmp(all[mid]->key, after) <= 0)
            start = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = start; blobs && i < n; i++) {
        if (!as_api_matches(all[i]->index, ls, fs)) continue;
        if (limit > 0 && kept == (size_t)limit) {
            size_t size = strlen(last_key) + 32;
            if ((next = malloc(size)))
                snprintf(next, size, "%llu:%s", (unsigned long long)as_store_rv(api->store),
                         last_key);
            break;
        }
        last_key = all[i]->key;
        blobs[kept++] = as_blob_ref(all[i]->json);
    }
    uint64_t rv = as_store_rv(api->store);
    as_store_unlock(api->store);
    free(all);
    for (size_t i = 0; blobs && i < kept; i++)
        if (!(blobs[i] = as_view_blob(p->resource, blobs[i]))) blobs[i] = as_blob_new("{}", 2);
    char rv_text[24];
    snprintf(rv_text, sizeof rv_text, "%llu", (unsigned long long)rv);
    if (!blobs)
        as_status(resp, 500, "InternalError", "out of memory");
    else if (as_wants_table(req))
        respond_table(resp, req, p->resource, blobs, kept, rv_text, next);
    else
        respond_list(resp, p->resource, rv, next, blobs, kept);
    for (size_t i = 0; i < kept; i++)
        as_blob_unref(blobs[i]);
    free(blobs);
    free(next);
    kube_label_selector_free(ls);
    kube_field_selector_free(fs);
}

static bool method_is(const as_request *req, const char *m)
{
    return strcmp(req->method, m) == 0;
}

static bool has_verb(const as_resource *r, const char *verb)
{
    for (const char *const *v = r->verbs; *v; v++)
        if (strcmp(*v, verb) == 0) return true;
    return false;
}

static void method_not_allowed(as_response *resp)
{
    as_status(resp, 405, "MethodNotAllowed",
              "the server does not allow this method on the requested resource");
}

int as_api_handle(as_api *api, const as_request *req, as_response *resp)
{
    as_path p;
    if (as_path_parse(req->path, &p) != 0) return 0;
    bool collection = p.name[0] == '\0';
    if (p.resource->namespaced && !collection && !p.ns[0]) return 0;
    if (!p.resource->namespaced && p.ns[0]) return 0;
    if (strcmp(p.resource->group, "authorization.k8s.io") == 0) {
        as_api_review(api, req, &p, resp);
        return 1;
    }
    if (strcmp(p.sub, "log") == 0 || strcmp(p.sub, "exec") == 0 || strcmp(p.sub, "attach") == 0 ||
        strcmp(p.sub, "portforward") == 0) {
        as_api_pod_connect(api, req, &p, resp);
        return 1;
    }
    if (method_is(req, "GET") || method_is(req, "HEAD")) {
        const char *watch = as_query(req, "watch");
        if (watch && (strcmp(watch, "true") == 0 || strcmp(watch, "1") == 0))
            as_api_watch(api, req, &p, resp);
        else if (collection)
            list_objects(api, req, &p, resp);
        else
            get_object(api, req, &p, resp);
        return 1;
    }
    if (method_is(req, "POST")) {
        if (collection)
            as_api_create(api, req, &p, resp);
        else if (strcmp(p.sub, "binding") == 0)
            as_api_bind(api, req, &p, resp);
        else if (strcmp(p.sub, "eviction") == 0)
            as_api_evict(api, req, &p, resp);
        else
            method_not_allowed(resp);
        return 1;
    }
    if (collection && method_is(req, "DELETE") && has_verb(p.resource, "deletecollection")) {
        as_api_delete_collection(api, req, &p, resp);
        return 1;
    }
    if (collection || strcmp(p.sub, "binding") == 0 || strcmp(p.sub, "eviction") == 0) {
        method_not_allowed(resp);
        return 1;
    }
    if (method_is(req, "PUT"))
        as_api_update(api, req, &p, resp);
    else if (method_is(req, "PATCH") && strcmp(p.sub, "finalize") != 0)
        as_api_patch(api, req, &p, resp);
    else if (method_is(req, "DELETE") && !p.sub[0])
        as_api_delete(api, req, &p, resp);
    else
        method_not_allowed(resp);
    return 1;
}
