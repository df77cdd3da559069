/* The object API's writes: create, update, patch, delete and pod binding.
 *
 * Every write goes the way kube-apiserver's generic registry goes: decode,
 * defaults and the kind's strategy, admission, validation, then the store,
 * which assigns the resourceVersion. A write that changes nothing is not
 * stored (no new resourceVersion, no watch event), which is what lets
 * kubectl print "patched (no change)". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_internal.h"
#include "apiserver/decode.h"
#include "apiserver/strategy.h"
#include "apiserver/table.h"
#include "apiserver/views.h"
#include "client/list_stream.h"
#include "kube/patch.h"
#include "kube/protobuf.h"
#include "kube/smp.h"
#include "kube/json.h"
#include "kube/pod.h"
#include "kube/selector.h"
#include "kube/time.h"
#include "util/buf.h"
#include "util/json_dump.h"
#include "util/random.h"

/* etcd's default request limit is 1.5 MiB; kube-apiserver refuses larger
 * objects, and so do we (with 422 rather than etcd's opaque error). */
#define MAX_OBJECT_BYTES (3u << 19)

static json_t *metadata_of(json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(obj, "metadata", meta);
    }
    return meta;
}

static void new_uid(char out[37])
{
    char hex[33];
    gp_error err = {0};
    if (gp_random_hex(hex, 16, &err) != 0) memset(hex, '0', 32), hex[32] = '\0';
    hex[12] = '4'; /* a version 4 UUID */
    hex[16] = "89ab"[hex[16] % 4];
    snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
}

/* apimachinery's generateName suffix: 5 of these, base cut to 58. */
static void generate_name(const char *base, char *out, size_t size)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned char rnd[5];
    char hex[11];
    gp_error err = {0};
    if (gp_random_hex(hex, 5, &err) != 0) memset(hex, '0', 10);
    for (int i = 0; i < 5; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        rnd[i] = (unsigned char)alphabet[v % (sizeof alphabet - 1)];
    }
    snprintf(out, size, "%.58s%.5s", base, (const char *)rnd);
}

/* Read once per version of the namespace: every create in it asks. */
static const char *namespace_phase(as_api *api, const char *ns)
{
    const as_resource *nsr = as_resource_find("", "v1", "namespaces");
    as_object *o = (as_object *)as_store_get(api->store, nsr, "", ns);
    if (!o) return NULL;
    if (o->memo_rv != o->rv) {
        json_t *obj = json_loadb(o->json->text, o->json->len, 0, NULL);
        const char *phase =
            json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
        o->memo = phase && strcmp(phase, "Terminating") == 0;
        o->memo_rv = o->rv;
        json_decref(obj);
    }
    return o->memo ? "Terminating" : "Active";
}

/* NamespaceLifecycle admission: no new content in a missing or terminating
 * namespace. Needs the lock. */
static int admit_namespace(as_api *api, const as_path *p, const char *name, as_response *resp)
{
    if (!p->resource->namespaced) return 0;
    const char *phase = namespace_phase(api, p->ns);
    if (!phase) {
        as_error_not_found(resp, as_resource_find("", "v1", "namespaces"), p->ns);
        return -1;
    }
    if (strcmp(phase, "Terminating") != 0) return 0;
    char why[400], cause[300];
    snprintf(why, sizeof why,
             "unable to create new content in namespace %s because it is being terminated", p->ns);
    snprintf(cause, sizeof cause, "namespace %s is being terminated", p->ns);
    json_t *causes = json_pack("[{s:s, s:s, s:s}]", "reason", "NamespaceTerminating", "message",
                               cause, "field", "metadata.namespace");
    as_error_forbidden(resp, p->resource, name, why, causes);
    return -1;
}

/* The RuntimeClass a pod names, or NULL (also for any other kind). */
static const char *runtime_class_of(const as_path *p, const json_t *obj)
{
    if (strcmp(p->resource->kind, "Pod") != 0 || p->resource->group[0]) return NULL;
    const char *rc =
        json_string_value(json_object_get(json_object_get(obj, "spec"), "runtimeClassName"));
    return rc && *rc ? rc : NULL;
}

/* RuntimeClass admission: a pod naming a missing RuntimeClass is refused;
 * one naming a class gets its overhead and scheduling. */
static int admit_runtimeclass(as_api *api, const as_path *p, json_t *pod, const char *name,
                              as_response *resp)
{
    const char *rc = runtime_class_of(p, pod);
    if (!rc) return 0;
    const as_object *o =
        as_store_get(api->store, as_resource_find("node.k8s.io", "v1", "runtimeclasses"), "", rc);
    char why[400];
    if (!o) {
        snprintf(why, sizeof why, "pod rejected: RuntimeClass \"%s\" not found", rc);
        as_error_forbidden(resp, p->resource, name, why, NULL);
        return -1;
    }
    json_t *rcobj = json_loadb(o->json->text, o->json->len, 0, NULL);
    char *message = NULL;
    int rcode = as_strategy_runtimeclass(pod, rcobj, &message);
    json_decref(rcobj);
    if (rcode != 0) {
        as_error_forbidden(resp, p->resource, name, message ? message : "runtimeclass conflict",
                           NULL);
        free(message);
        return -1;
    }
    return 0;
}

/* Counts the bytes of the serialization without keeping them; stops at the
 * limit. */
static int count_bytes(const char *buffer, size_t size, void *data)
{
    (void)buffer;
    size_t *len = data;
    *len += size;
    return *len > MAX_OBJECT_BYTES ? -1 : 0;
}

/* An upper bound of an object's size as stored, from the request and the
 * object it changes (old_len, 0 for none); SIZE_MAX when there is none.
 * JSON text does not grow when written again (jansson drops the spaces and
 * writes UTF-8 as it is), and what the server adds is bounded: defaults at
 * most a few times the bytes of what they default (an empty probe gets four
 * numbers), metadata and conditions a few hundred bytes. A protobuf body
 * has no field names and a JSON patch can copy what it likes: no bound. */
#define DEFAULTS_GROWTH 16u
#define SERVER_ADDS     (64u << 10)
static size_t size_bound(const as_request *req, size_t old_len)
{
    if (req->content_type && !as_type_is(req->content_type, "application/json") &&
        !as_type_is(req->content_type, "application/strategic-merge-patch+json") &&
        !as_type_is(req->content_type, "application/merge-patch+json"))
        return SIZE_MAX;
    if (req->body_len > (MAX_OBJECT_BYTES + 0u) / DEFAULTS_GROWTH) return SIZE_MAX;
    return old_len + req->body_len * DEFAULTS_GROWTH + SERVER_ADDS;
}

/* The 422 of an object over the limit. Counting its bytes costs as much as
 * writing it, so it is skipped when `bound` says it cannot be over. */
static int check_size(const json_t *obj, const as_resource *r, const char *name, size_t bound,
                      as_response *resp)
{
    if (bound <= MAX_OBJECT_BYTES) return 0;
    size_t len = 0;
    json_dump_callback(obj, count_bytes, &len, JSON_COMPACT);
    if (len <= MAX_OBJECT_BYTES) return 0;
    char msg[200];
    snprintf(msg, sizeof msg, "Too long: may not be more than %u bytes", MAX_OBJECT_BYTES);
    as_error_invalid(resp, r, name,
                     json_pack("[{s:s, s:s, s:s}]", "reason", "FieldValueTooLong", "message", msg,
                               "field", "metadata"));
    return -1;
}

int as_check_object_namespace(const json_t *obj, const as_path *p, as_response *resp)
{
    const char *ns = kube_str_or_null(json_object_get(obj, "metadata"), "namespace");
    if (!ns || !*ns || strcmp(ns, p->ns) == 0) return 0;
    as_error_bad_request(resp, "the namespace of the provided object does not match the "
                               "namespace sent on the request");
    return -1;
}

void as_respond_json(as_response *resp, unsigned status, json_t *obj)
{
    size_t len;
    char *text = gp_json_dump(obj, &len);
    as_blob *b = text ? as_blob_new(text, len) : NULL;
    free(text);
    if (!b) {
        as_status(resp, 500, "InternalError", "out of memory");
        return;
    }
    as_respond_object(resp, status, b);
}

/* A stored object's text parsed: the store wrote it as json_dumps would
 * (util/json_dump.h), and the builder reads that as json_loadb would, with
 * fewer allocations (a patch and a binding each read the version they
 * change). */
static json_t *parse_stored(const as_blob *b)
{
    return kc_object_parse_dumped(b->text, b->len);
}

/* A stored object in the form of r (views.h). */
static json_t *load_stored(const as_resource *r, const as_object *o)
{
    return as_view_from_stored(r, parse_stored(o->json));
}

/* as_store_put and as_store_delete of an object in r's form. Need the lock. */
static const as_object *put_object(as_api *api, const as_resource *r, const char *ns,
                                   const char *name, const json_t *obj, gp_error *err)
{
    if (!as_is_view(r)) return as_store_put(api->store, r, ns, name, (json_t *)obj, err);
    json_t *stored = as_view_to_stored(r, json_incref((json_t *)obj));
    const as_object *o = as_store_put(api->store, as_storage(r), ns, name, stored, err);
    json_decref(stored);
    return o;
}

static as_blob *delete_object(as_api *api, const as_resource *r, const char *ns, const char *name,
                              const json_t *obj, gp_error *err)
{
    if (!as_is_view(r)) return as_store_delete(api->store, r, ns, name, (json_t *)obj, err);
    json_t *stored = as_view_to_stored(r, json_incref((json_t *)obj));
    as_blob *b = as_store_delete(api->store, as_storage(r), ns, name, stored, err);
    json_decref(stored);
    return b;
}

static void store_failed(as_response *resp, const gp_error *err)
{
    as_status(resp, 500, "InternalError", err->text);
}

/* After the store's lock is let go: the answer waits for the write of rv
 * (0: none) to be committed, and becomes the store's error if it could not
 * be (store.h, group commit). A request with defer_commit gets the rv to
 * wait for itself. */
static void await_commit(as_api *api, const as_request *req, uint64_t rv, as_response *resp)
{
    gp_error err = {0};
    if (req->defer_commit) {
        resp->commit_rv = rv;
        return;
    }
    if (!rv || as_store_sync(api->store, rv, &err) == 0) return;
    as_response_free(resp);
    store_failed(resp, &err);
}

/* ObjectMeta's lists and maps are omitempty in Go: once a patch empties
 * them (the last owner reference or finalizer removed), a real server
 * stores them absent, not as [] or {}. */
static void drop_empty_metadata(json_t *obj)
{
    static const char *const keys[] = {"labels", "annotations", "ownerReferences", "finalizers",
                                       NULL};
    json_t *meta = json_object_get(obj, "metadata");
    for (size_t i = 0; keys[i]; i++) {
        json_t *v = json_object_get(meta, keys[i]);
        if (json_is_null(v) || (json_is_array(v) && json_array_size(v) == 0) ||
            (json_is_object(v) && json_object_size(v) == 0))
            json_object_del(meta, keys[i]);
    }
}

/* Server-set metadata on create; client values for these are dropped. */
static int prepare_metadata(json_t *obj, const as_path *p, as_response *resp, char *name,
                            size_t size)
{
    json_t *meta = metadata_of(obj);
    const char *given = json_string_value(json_object_get(meta, "name"));
    const char *gen = json_string_value(json_object_get(meta, "generateName"));
    if ((!given || !*given) && gen && *gen) {
        generate_name(gen, name, size);
        json_object_set_new(meta, "name", json_string(name));
    } else {
        snprintf(name, size, "%s", given ? given : "");
    }
    if (p->resource->namespaced) {
        if (as_check_object_namespace(obj, p, resp) != 0) return -1;
        json_object_set_new(meta, "namespace", json_string(p->ns));
    } else {
        json_object_del(meta, "namespace");
    }
    static const char *const server_set[] = {"uid",
                                             "resourceVersion",
                                             "selfLink",
                                             "deletionTimestamp",
                                             "deletionGracePeriodSeconds",
                                             "generation",
                                             "managedFields",
                                             "creationTimestamp",
                                             NULL};
    for (size_t i = 0; server_set[i]; i++)
        json_object_del(meta, server_set[i]);
    char uid[37], now[32];
    new_uid(uid);
    kube_time_format(time(NULL), now);
    json_object_set_new(meta, "uid", json_string(uid));
    json_object_set_new(meta, "creationTimestamp", json_string(now));
    return 0;
}

/* Validation with the real 422; consumes nothing. */
static int validate(const as_path *p, const json_t *obj, const json_t *old, const char *name,
                    as_response *resp)
{
    const as_resource *r = p->resource;
    json_t *causes = old && strcmp(p->sub, "status") == 0
                         ? as_strategy_validate_status(r->group, r->kind, obj, old)
                         : as_strategy_validate(r->group, r->kind, obj, old);
    if (!causes || json_array_size(causes) == 0) {
        json_decref(causes);
        return 0;
    }
    as_error_invalid(resp, p->resource, name, causes);
    return -1;
}

/* What ServiceAccount admission reads of an account, kept with its stored
 * version (as_object.memo) so that a create parses no account: */
enum {
    SA_AUTOMOUNT_TRUE = 1,  /* automountServiceAccountToken: true */
    SA_AUTOMOUNT_FALSE = 2, /* ... false (neither: not set) */
    SA_PULL_SECRETS = 4,    /* it has imagePullSecrets: read it whole */
};

/* The account a pod runs as, as admission needs it (NULL: missing). Needs
 * the lock. */
static json_t *service_account(as_api *api, const char *ns, const char *name)
{
    as_object *o = (as_object *)as_store_get(
        api->store, as_resource_find("", "v1", "serviceaccounts"), ns, name);
    if (!o) return NULL;
    if (o->memo_rv != o->rv) {
        json_t *sa = json_loadb(o->json->text, o->json->len, 0, NULL);
        const json_t *a = json_object_get(sa, "automountServiceAccountToken");
        o->memo = (json_is_true(a) ? SA_AUTOMOUNT_TRUE : 0) |
                  (json_is_false(a) ? SA_AUTOMOUNT_FALSE : 0) |
                  (json_array_size(json_object_get(sa, "imagePullSecrets")) ? SA_PULL_SECRETS : 0);
        o->memo_rv = o->rv;
        json_decref(sa);
    }
    if (o->memo & SA_PULL_SECRETS) return json_loadb(o->json->text, o->json->len, 0, NULL);
    json_t *sa = json_object();
    if (o->memo & (SA_AUTOMOUNT_TRUE | SA_AUTOMOUNT_FALSE))
        json_object_set_new(sa, "automountServiceAccountToken",
                            json_boolean(o->memo & SA_AUTOMOUNT_TRUE));
    return sa;
}

static bool admits_service_accounts(as_api *api, const as_path *p)
{
    return api->admit_service_accounts && strcmp(p->resource->resource, "pods") == 0 &&
           !p->resource->group[0];
}

static void mount_service_account(json_t *pod, const json_t *sa)
{
    char suffix[8];
    generate_name("", suffix, sizeof suffix);
    as_strategy_service_account(pod, sa, suffix);
}

/* ServiceAccount admission, when the account has to be waited for: the
 * default one is made by a controller right after its namespace, so it is
 * looked for again for a while, as the plugin's getServiceAccount does (10
 * tries, 100-200 ms apart). Takes the lock itself, never across a wait. */
static int admit_service_account_slowly(as_api *api, const as_path *p, json_t *pod,
                                        const char *name, as_response *resp)
{
    const char *sa_name = kube_str(json_object_get(pod, "spec"), "serviceAccountName");
    int tries = strcmp(sa_name, "default") == 0 ? 10 : 1;
    json_t *sa = NULL;
    for (int i = 1; i < tries && !sa; i++) {
        char hex[3] = "00";
        gp_error err = {0};
        gp_random_hex(hex, 1, &err);
        struct timespec wait = {0, (100 + strtol(hex, NULL, 16) % 100) * 1000000L};
        nanosleep(&wait, NULL);
        as_store_lock(api->store);
        sa = service_account(api, p->ns, sa_name);
        as_store_unlock(api->store);
    }
    if (!sa) {
        char why[700];
        snprintf(why, sizeof why,
                 "error looking up service account %s/%s: serviceaccount \"%s\" not found", p->ns,
                 sa_name, sa_name);
        as_error_forbidden(resp, p->resource, name, why, NULL);
        return -1;
    }
    mount_service_account(pod, sa);
    json_decref(sa);
    return 0;
}

/* A create once its body is decoded. */
static void create_object(as_api *api, const as_request *req, const as_path *p,
                          const as_write_options *opt, json_t *obj, as_response *resp)
{
    char name[254], asked[254];
    /* admission's errors name what the client asked for: a name not yet
     * generated is its generateName (admission's extractResourceName) */
    const json_t *meta = json_object_get(obj, "metadata");
    const char *given = kube_str(meta, "name");
    snprintf(asked, sizeof asked, "%s", *given ? given : kube_str(meta, "generateName"));
    if (prepare_metadata(obj, p, resp, name, sizeof name) != 0) return;
    drop_empty_metadata(obj);
    as_strategy_create(p->resource->group, p->resource->kind, obj);
    /* Admission in kube-apiserver's order of plugins (NamespaceLifecycle,
     * ServiceAccount, ..., RuntimeClass: a pod in a missing namespace is
     * refused for its namespace before its RuntimeClass is looked at; the
     * RuntimeClass gives it its overhead and scheduling), then validation
     * and the size of what admission made, then the write. Validation reads
     * the object alone and runs without the lock, as kube-apiserver holds
     * none across the three. A class's scheduling can be of any size: a pod
     * naming one has no bound. */
    as_store_lock(api->store);
    bool admitted = admit_namespace(api, p, asked, resp) == 0;
    bool waited = false;
    if (admitted && admits_service_accounts(api, p)) {
        json_t *sa =
            service_account(api, p->ns, kube_str(kube_obj(obj, "spec"), "serviceAccountName"));
        if (sa) mount_service_account(obj, sa);
        waited = !sa;
        json_decref(sa);
    }
    if (waited) {
        as_store_unlock(api->store);
        admitted = admit_service_account_slowly(api, p, obj, asked, resp) == 0;
        as_store_lock(api->store);
    }
    admitted = admitted && admit_runtimeclass(api, p, obj, asked, resp) == 0;
    as_store_unlock(api->store);
    size_t bound = runtime_class_of(p, obj) ? SIZE_MAX : size_bound(req, 0);
    if (!admitted || validate(p, obj, NULL, name, resp) != 0 ||
        check_size(obj, p->resource, name, bound, resp) != 0)
        return;
    as_store_lock(api->store);
    gp_error err = {0};
    const as_object *stored;
    uint64_t written = 0;
    if (as_store_get(api->store, as_storage(p->resource), p->ns, name)) {
        as_error_already_exists(resp, p->resource, name);
        goto done;
    }
    if (opt->dry_run) {
        as_respond_json(resp, 201, obj);
        goto done;
    }
    if (!(stored = put_object(api, p->resource, p->ns, name, obj, &err))) {
        store_failed(resp, &err);
    } else {
        written = stored->rv;
        as_respond_object(resp, 201, as_view_blob(p->resource, as_blob_ref(stored->json)));
    }
done:
    as_store_unlock(api->store);
    await_commit(api, req, written, resp);
}

void as_api_create(as_api *api, const as_request *req, const as_path *p, as_response *resp)
{
    as_write_options opt;
    if (as_write_options_read(req, "CreateOptions", &opt, resp) != 0) return;
    json_t *warnings = json_array();
    json_t *obj = as_decode_request(req, p->resource, opt.validation, warnings, resp);
    if (obj) create_object(api, req, p, &opt, obj, resp);
    json_decref(obj);
    as_attach_warnings(resp, warnings);
    json_decref(warnings);
}

/* Equal ignoring metadata.resourceVersion: a write that would change
 * nothing else is not a change. Both are ours to modify: the versions are
 * taken out for the comparison and put back. */
static bool same_object(json_t *a, json_t *b)
{
    json_t *ma = json_object_get(a, "metadata"), *mb = json_object_get(b, "metadata");
    json_t *ra = json_incref(json_object_get(ma, "resourceVersion"));
    json_t *rb = json_incref(json_object_get(mb, "resourceVersion"));
    json_object_del(ma, "resourceVersion");
    json_object_del(mb, "resourceVersion");
    bool same = json_equal(a, b);
    if (ra) json_object_set_new(ma, "resourceVersion", ra);
    if (rb) json_object_set_new(mb, "resourceVersion", rb);
    return same;
}

static void copy_key(json_t *to, const json_t *from, const char *key)
{
    json_t *v = json_object_get(from, key);
    if (v)
        json_object_set(to, key, v);
    else
        json_object_del(to, key);
}

/* Whether r is the core (group "") resource named `resource`. */
static bool is_core(const as_resource *r, const char *resource)
{
    return !r->group[0] && strcmp(r->resource, resource) == 0;
}

/* An object whose deletion was waiting only for its finalizers goes once
 * they are gone (for a pod: once its grace period has been cut to 0). A
 * namespace also waits for spec.finalizers, which the namespace controller
 * empties through /finalize once its content is gone
 * (ShouldDeleteNamespaceDuringUpdate, pkg/registry/core/namespace/storage):
 * a status or metadata update of a Terminating namespace does not remove
 * it. */
static bool deletion_complete(const as_resource *r, const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    if (!json_object_get(meta, "deletionTimestamp")) return false;
    if (json_array_size(json_object_get(meta, "finalizers")) > 0) return false;
    if (is_core(r, "namespaces") &&
        json_array_size(json_object_get(json_object_get(obj, "spec"), "finalizers")) > 0)
        return false;
    const json_t *grace = json_object_get(meta, "deletionGracePeriodSeconds");
    return !grace || json_integer_value(grace) == 0;
}

/* What an update does before the store sees it, without the lock: server
 * fields kept from the old object, the kind's strategy, validation and the
 * size bound. obj becomes the state to store. */
static int prepare_update(const as_path *p, json_t *obj, const json_t *old, size_t bound,
                          as_response *resp)
{
    const as_resource *r = p->resource;
    json_t *meta = metadata_of(obj);
    const json_t *old_meta = json_object_get(old, "metadata");
    static const char *const kept[] = {
        "uid",       "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
        "namespace", "generation",        "selfLink",          NULL};
    for (size_t i = 0; kept[i]; i++)
        copy_key(meta, old_meta, kept[i]);
    json_object_del(meta, "managedFields");
    drop_empty_metadata(obj);
    if (strcmp(p->sub, "finalize") == 0) {
        /* /finalize changes spec.finalizers and nothing else */
        json_t *next = json_deep_copy(old);
        json_t *spec = json_object_get(next, "spec");
        json_t *fin = json_object_get(json_object_get(obj, "spec"), "finalizers");
        if (json_is_object(spec)) {
            if (fin)
                json_object_set(spec, "finalizers", fin);
            else
                json_object_del(spec, "finalizers");
        }
        json_object_clear(obj);
        json_object_update(obj, next);
        json_decref(next);
    } else {
        as_strategy_update(r->group, r->kind, obj, old, strcmp(p->sub, "status") == 0);
    }
    if (validate(p, obj, old, p->name, resp) != 0) return -1;
    return check_size(obj, r, p->name, bound, resp);
}

enum { STORED, RETRY };

/* The locked step of an update: the object must still be at the version
 * the update was computed from (else RETRY, and the caller computes it
 * again on the new state, as kube-apiserver's GuaranteedUpdate does). */
static int store_update(as_api *api, const as_request *req, const as_path *p, json_t *obj,
                        json_t *old, uint64_t from_rv, bool dry_run, as_response *resp)
{
    const as_resource *r = p->resource;
    gp_error err = {0};
    bool unchanged = same_object(obj, old); /* both are ours: no lock needed */
    uint64_t written = 0;
    as_store_lock(api->store);
    const as_object *o = as_store_get(api->store, as_storage(r), p->ns, p->name);
    if (!o) {
        as_store_unlock(api->store);
        as_error_not_found(resp, r, p->name);
        return STORED;
    }
    if (o->rv != from_rv) {
        as_store_unlock(api->store);
        return RETRY;
    }
    if (unchanged) {
        as_respond_object(resp, 200, as_view_blob(p->resource, as_blob_ref(o->json)));
    } else if (dry_run) {
        as_respond_json(resp, 200, obj);
    } else if (deletion_complete(r, obj)) {
        as_blob *last = delete_object(api, r, p->ns, p->name, obj, &err);
        if (!last) {
            store_failed(resp, &err);
        } else {
            written = as_store_rv(api->store);
            as_respond_object(resp, 200, as_view_blob(p->resource, last));
        }
    } else {
        const as_object *stored = put_object(api, r, p->ns, p->name, obj, &err);
        if (!stored) {
            store_failed(resp, &err);
        } else {
            written = stored->rv;
            as_respond_object(resp, 200, as_view_blob(p->resource, as_blob_ref(stored->json)));
        }
    }
    as_store_unlock(api->store);
    await_commit(api, req, written, resp);
    return STORED;
}

/* The stored object as it is now, parsed, with its version and its length;
 * NULL after answering 404. */
static json_t *read_current(as_api *api, const as_path *p, uint64_t *rv, size_t *len,
                            as_response *resp)
{
    as_store_lock(api->store);
    const as_object *o = as_store_get(api->store, as_storage(p->resource), p->ns, p->name);
    as_blob *b = o ? as_blob_ref(o->json) : NULL;
    *rv = o ? o->rv : 0;
    *len = b ? b->len : 0;
    as_store_unlock(api->store);
    if (!b) {
        as_error_not_found(resp, p->resource, p->name);
        return NULL;
    }
    json_t *obj = as_view_from_stored(p->resource, parse_stored(b));
    as_blob_unref(b);
    if (!obj) as_status(resp, 500, "InternalError", "a stored object does not parse");
    return obj;
}

/* Concurrent writers to one object retry; this many rounds means a client
 * is hammering it, and it gets the 409 a real server would give. */
#define MAX_UPDATE_ATTEMPTS 16

/* read_current for round `attempt` of a read-modify-write: NULL after
 * answering 404, or the 409 of too many rounds. */
static json_t *read_for_update(as_api *api, const as_path *p, int attempt, uint64_t *rv,
                               size_t *len, as_response *resp)
{
    json_t *cur = read_current(api, p, rv, len, resp);
    if (cur && attempt == MAX_UPDATE_ATTEMPTS) {
        json_decref(cur);
        as_error_conflict(resp, p->resource, p->name);
        return NULL;
    }
    return cur;
}

static int check_name(const json_t *obj, const as_path *p, as_response *resp)
{
    const char *name = kube_str_or_null(kube_obj(obj, "metadata"), "name");
    if (!name || strcmp(name, p->name) == 0) return 0;
    char msg[700];
    snprintf(msg, sizeof msg, "the name of the object (%s) does not match the name on the URL (%s)",
             name, p->name);
    as_error_bad_request(resp, msg);
    return -1;
}

static void update_object(as_api *api, const as_request *req, const as_path *p,
                          const as_write_options *opt, json_t *body, as_response *resp)
{
    if (check_name(body, p, resp) != 0) return;
    json_object_set_new(metadata_of(body), "name", json_string(p->name));
    const char *want = kube_str_or_null(kube_obj(body, "metadata"), "resourceVersion");
    for (int attempt = 0;; attempt++) {
        uint64_t rv;
        size_t old_len;
        json_t *old = read_current(api, p, &rv, &old_len, resp);
        if (!old) break;
        char current[24];
        snprintf(current, sizeof current, "%llu", (unsigned long long)rv);
        if ((want && *want && strcmp(want, current) != 0) || attempt == MAX_UPDATE_ATTEMPTS) {
            json_decref(old);
            as_error_conflict(resp, p->resource, p->name);
            break;
        }
        json_t *obj = json_deep_copy(body);
        int done = prepare_update(p, obj, old, size_bound(req, old_len), resp) != 0 ||
                   store_update(api, req, p, obj, old, rv, opt->dry_run, resp) == STORED;
        json_decref(obj);
        json_decref(old);
        if (done) break;
    }
}

void as_api_update(as_api *api, const as_request *req, const as_path *p, as_response *resp)
{
    as_write_options opt;
    if (as_write_options_read(req, "UpdateOptions", &opt, resp) != 0) return;
    json_t *warnings = json_array();
    json_t *body = as_decode_request(req, p->resource, opt.validation, warnings, resp);
    if (body) update_object(api, req, p, &opt, body, resp);
    json_decref(body);
    as_attach_warnings(resp, warnings);
    json_decref(warnings);
}

/* A patch as its request gives it. */
typedef struct patch_request {
    as_patch_type type;
    json_t *patch;
    json_t *strict; /* the patch's own strict errors (its duplicate keys) */
} patch_request;

/* The patch from the body, or -1 after answering. */
static int read_patch(const as_request *req, const as_write_options *opt, patch_request *pr,
                      as_response *resp)
{
    const char *ct = req->content_type;
    if (as_type_is(ct, "application/strategic-merge-patch+json"))
        pr->type = AS_PATCH_STRATEGIC;
    else if (as_type_is(ct, "application/merge-patch+json"))
        pr->type = AS_PATCH_MERGE;
    else if (as_type_is(ct, "application/json-patch+json"))
        pr->type = AS_PATCH_JSON;
    else {
        as_status(resp, 415, "UnsupportedMediaType",
                  "the body of the request was in an unknown format - accepted media types "
                  "include: application/json-patch+json, application/merge-patch+json, "
                  "application/strategic-merge-patch+json");
        return -1;
    }
    json_error_t jerr;
    bool duplicates = false;
    pr->patch = req->body ? as_parse_json(req->body, req->body_len, &duplicates, &jerr) : NULL;
    if (!pr->patch) {
        as_error_bad_request(resp, "the patch is not valid JSON");
        return -1;
    }
    if (pr->type == AS_PATCH_JSON && !json_is_array(pr->patch)) {
        as_error_bad_request(resp, "json: cannot unmarshal object into Go value of type "
                                   "jsonpatch.Patch");
        return -1;
    }
    if (pr->type != AS_PATCH_JSON && !json_is_object(pr->patch)) {
        as_error_bad_request(resp, "the patch is not a JSON object");
        return -1;
    }
    pr->strict = opt->validation == AS_FV_IGNORE
                     ? json_array()
                     : as_decode_patch_strict(req->body, req->body_len, pr->type, duplicates);
    return 0;
}

/* The patched object, or NULL after answering the error. */
static json_t *apply_patch(const patch_request *pr, const as_path *p, const json_t *old,
                           as_response *resp)
{
    gp_error err = {0};
    json_t *out = NULL;
    if (pr->type == AS_PATCH_JSON) {
        if (!(out = kube_json_patch(old, pr->patch, &err)))
            /* kube-apiserver drops the jsonpatch text for this generic one */
            as_status(resp, 422, "Invalid",
                      "the server rejected our request due to an error in our request");
    } else if (pr->type == AS_PATCH_MERGE) {
        out = kube_merge_patch(old, pr->patch);
    } else if (!(out = kube_strategic_merge_patch(old, pr->patch, p->resource->kind, &err))) {
        as_error_bad_request(resp, err.text);
    }
    if (out && !json_is_object(out)) {
        json_decref(out);
        as_error_bad_request(resp, "the patch does not leave an object");
        return NULL;
    }
    return out;
}

static void patch_object(as_api *api, const as_request *req, const as_path *p,
                         const as_write_options *opt, const patch_request *pr, json_t *warnings,
                         as_response *resp)
{
    for (int attempt = 0;; attempt++) {
        uint64_t rv;
        size_t old_len;
        json_t *old = read_for_update(api, p, attempt, &rv, &old_len, resp);
        if (!old) return;
        json_t *obj = apply_patch(pr, p, old, resp);
        int done = 1;
        /* warnings of an earlier round are of a state that is gone */
        json_t *round_warnings = json_array();
        if (obj) {
            /* a resourceVersion the patch sets is a precondition */
            const char *want = kube_str_or_null(kube_obj(obj, "metadata"), "resourceVersion");
            const char *old_rv = kube_str_or_null(kube_obj(old, "metadata"), "resourceVersion");
            const char *name = kube_str_or_null(kube_obj(obj, "metadata"), "name");
            if (want && old_rv && strcmp(want, old_rv) != 0)
                as_error_conflict(resp, p->resource, p->name);
            else if (name && strcmp(name, p->name) != 0)
                as_error_bad_request(resp, "metadata.name cannot be changed by a patch");
            else if (as_decode_patched(p->resource, pr->type, pr->patch, pr->strict, obj,
                                       opt->validation, round_warnings, resp) == 0 &&
                     as_check_type(obj, p->resource, resp) == 0 &&
                     prepare_update(p, obj, old, size_bound(req, old_len), resp) == 0)
                done = store_update(api, req, p, obj, old, rv, opt->dry_run, resp) == STORED;
        }
        json_decref(obj);
        json_decref(old);
        if (done) json_array_extend(warnings, round_warnings);
        json_decref(round_warnings);
        if (done) return;
    }
}

void as_api_patch(as_api *api, const as_request *req, const as_path *p, as_response *resp)
{
    as_write_options opt;
    if (as_write_options_read(req, "PatchOptions", &opt, resp) != 0) return;
    patch_request pr = {0};
    json_t *warnings = json_array();
    if (read_patch(req, &opt, &pr, resp) == 0) patch_object(api, req, p, &opt, &pr, warnings, resp);
    json_decref(pr.patch);
    json_decref(pr.strict);
    as_attach_warnings(resp, warnings);
    json_decref(warnings);
}

/* DeleteOptions: from the body when there is one, else from the query
 * (the delete handler reads one or the other). */
typedef struct delete_options {
    long long grace; /* -1: not given */
    char policy[32]; /* "", Background, Foreground, Orphan */
    char uid[64], rv[32];
    bool dry_run;
} delete_options;

/* The body as JSON: a typed client (kubectl drain's pod deletes) sends
 * protobuf. NULL, answered, when it cannot be read. */
static json_t *delete_options_body(const as_request *req, as_response *resp)
{
    if (as_type_is(req->content_type, "application/vnd.kubernetes.protobuf")) {
        gp_error err = {0};
        json_t *b = kube_protobuf_decode(req->body, req->body_len, &err);
        if (b && !kube_str_is(b, "kind", "DeleteOptions")) {
            json_decref(b);
            b = NULL;
            snprintf(err.text, sizeof err.text, "the body of a DELETE must be a DeleteOptions");
        }
        json_object_del(b, "metadata"); /* the decoder's, for every kind */
        if (!b) as_error_bad_request(resp, err.text);
        return b;
    }
    json_error_t jerr;
    bool duplicates;
    json_t *b = as_parse_json(req->body, req->body_len, &duplicates, &jerr);
    if (!json_is_object(b)) {
        json_decref(b);
        as_error_bad_request(resp, "the DeleteOptions body is not a JSON object");
        return NULL;
    }
    return b;
}

static int delete_options_from_body(const as_request *req, delete_options *o, as_response *resp)
{
    json_t *b = delete_options_body(req, resp);
    if (!b) return -1;
    as_decode_result res;
    if (as_decode_check(b, as_gotype_find("", "DeleteOptions"), AS_DECODE_JSON, false, &res) != 0) {
        char *msg = gp_format("DeleteOptions in version \"v1\" cannot be handled as a "
                              "DeleteOptions: %s",
                              res.error);
        as_error_bad_request(resp, msg ? msg : res.error);
        free(msg);
        as_decode_result_clear(&res);
        json_decref(b);
        return -1;
    }
    as_decode_result_clear(&res);
    json_t *v = json_object_get(b, "gracePeriodSeconds");
    if (json_is_integer(v)) o->grace = json_integer_value(v);
    const char *s = json_string_value(json_object_get(b, "propagationPolicy"));
    if (s) snprintf(o->policy, sizeof o->policy, "%s", s);
    if (json_is_true(json_object_get(b, "orphanDependents"))) snprintf(o->policy, 32, "Orphan");
    json_t *pre = json_object_get(b, "preconditions");
    s = json_string_value(json_object_get(pre, "uid"));
    if (s) snprintf(o->uid, sizeof o->uid, "%s", s);
    s = json_string_value(json_object_get(pre, "resourceVersion"));
    if (s) snprintf(o->rv, sizeof o->rv, "%s", s);
    size_t i;
    json_t *d;
    int rc = 0;
    json_array_foreach(json_object_get(b, "dryRun"), i, d)
    {
        if (json_is_string(d) && strcmp(json_string_value(d), "All") == 0) {
            o->dry_run = true;
            continue;
        }
        as_error_bad_request(resp, "dryRun: Unsupported value: supported values: \"All\"");
        rc = -1;
        break;
    }
    json_decref(b);
    return rc;
}

static int read_delete_options(const as_request *req, delete_options *o, as_response *resp)
{
    memset(o, 0, sizeof *o);
    o->grace = -1;
    if (req->body && req->body_len > 0) {
        if (delete_options_from_body(req, o, resp) != 0) return -1;
    } else {
        as_write_options wo;
        if (as_write_options_read(req, "DeleteOptions", &wo, resp) != 0) return -1;
        o->dry_run = wo.dry_run;
        const char *q = as_query(req, "gracePeriodSeconds");
        if (q) o->grace = strtoll(q, NULL, 10);
        q = as_query(req, "propagationPolicy");
        if (q) snprintf(o->policy, sizeof o->policy, "%s", q);
    }
    const char *pol = o->policy;
    if (*pol && strcmp(pol, "Background") && strcmp(pol, "Foreground") && strcmp(pol, "Orphan")) {
        as_error_bad_request(resp, "propagationPolicy: Unsupported value");
        return -1;
    }
    return 0;
}

static void add_finalizer(json_t *meta, const char *name)
{
    json_t *f = json_object_get(meta, "finalizers");
    if (!json_is_array(f)) {
        f = json_array();
        json_object_set_new(meta, "finalizers", f);
    }
    size_t i;
    json_t *v;
    json_array_foreach(f, i,
                       v) if (json_is_string(v) && strcmp(json_string_value(v), name) == 0) return;
    json_array_append_new(f, json_string(name));
}

/* The grace period a pod gets: unbound or finished pods go at once (the
 * pod registry's CheckGracefulDelete). */
static long long pod_grace(const json_t *pod, long long asked)
{
    const json_t *spec = json_object_get(pod, "spec");
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    if (!node || !*node) return 0;
    if (kube_pod_terminal(pod)) return 0;
    if (asked >= 0) return asked;
    const json_t *g = json_object_get(spec, "terminationGracePeriodSeconds");
    return json_is_integer(g) ? json_integer_value(g) : 30;
}

/* The namespaces NamespaceLifecycle admission never lets go (the
 * apiserver's immortal namespaces: default, kube-system, kube-public;
 * kube-node-lease may be deleted). Refused after the lookup and the
 * preconditions, as the namespace registry's delete validation is. */
static bool immortal_namespace(const char *name)
{
    return strcmp(name, "default") == 0 || strcmp(name, "kube-system") == 0 ||
           strcmp(name, "kube-public") == 0;
}

void as_api_delete(as_api *api, const as_request *req, const as_path *p, as_response *resp)
{
    delete_options opt;
    if (read_delete_options(req, &opt, resp) != 0) return;
    gp_error err = {0};
    uint64_t written = 0;
    as_store_lock(api->store);
    const as_object *o = as_store_get(api->store, as_storage(p->resource), p->ns, p->name);
    if (!o) {
        as_store_unlock(api->store);
        as_error_not_found(resp, p->resource, p->name);
        return;
    }
    json_t *obj = load_stored(p->resource, o);
    json_t *meta = metadata_of(obj);
    char rv[24];
    snprintf(rv, sizeof rv, "%llu", (unsigned long long)o->rv);
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    if ((opt.uid[0] && (!uid || strcmp(uid, opt.uid) != 0)) || (opt.rv[0] && strcmp(rv, opt.rv))) {
        as_error_conflict(resp, p->resource, p->name);
        goto done;
    }
    bool is_pod = is_core(p->resource, "pods");
    bool is_namespace = is_core(p->resource, "namespaces");
    if (is_namespace && immortal_namespace(p->name)) {
        as_error_forbidden(resp, p->resource, p->name, "this namespace may not be deleted", NULL);
        goto done;
    }
    long long grace = is_pod ? pod_grace(obj, opt.grace) : 0;
    if (strcmp(opt.policy, "Foreground") == 0) add_finalizer(meta, "foregroundDeletion");
    if (strcmp(opt.policy, "Orphan") == 0) add_finalizer(meta, "orphan");
    if (is_namespace) {
        json_t *status = json_object_get(obj, "status");
        if (!json_is_object(status)) json_object_set_new(obj, "status", status = json_object());
        json_object_set_new(status, "phase", json_string("Terminating"));
    }
    bool finalizers = json_array_size(json_object_get(meta, "finalizers")) > 0 ||
                      json_array_size(json_object_get(json_object_get(obj, "spec"), "finalizers"));
    if (grace > 0 || finalizers) {
        json_t *prev = json_object_get(meta, "deletionGracePeriodSeconds");
        if (!json_object_get(meta, "deletionTimestamp") ||
            (json_is_integer(prev) && grace < json_integer_value(prev))) {
            char when[32];
            kube_time_format(time(NULL) + grace, when);
            json_object_set_new(meta, "deletionTimestamp", json_string(when));
            json_object_set_new(meta, "deletionGracePeriodSeconds", json_integer(grace));
        }
        if (!finalizers && grace == 0) goto remove;
        json_t *old = load_stored(p->resource, o);
        if (opt.dry_run) {
            as_respond_json(resp, 200, obj);
        } else if (same_object(obj, old)) {
            as_respond_object(resp, 200, as_view_blob(p->resource, as_blob_ref(o->json)));
        } else {
            const as_object *stored = put_object(api, p->resource, p->ns, p->name, obj, &err);
            if (!stored) {
                store_failed(resp, &err);
            } else {
                written = stored->rv;
                as_respond_object(resp, 200, as_view_blob(p->resource, as_blob_ref(stored->json)));
            }
        }
        json_decref(old);
        goto done;
    }
remove:
    if (opt.dry_run) {
        as_respond_json(resp, 200, obj);
        goto done;
    }
    as_blob *last = delete_object(api, p->resource, p->ns, p->name, obj, &err);
    if (!last) {
        store_failed(resp, &err);
    } else {
        written = as_store_rv(api->store);
        as_respond_object(resp, 200, as_view_blob(p->resource, last));
    }
done:
    as_store_unlock(api->store);
    await_commit(api, req, written, resp);
    json_decref(obj);
}

static void set_condition(json_t *pod, const char *type, const char *status)
{
    json_t *st = json_object_get(pod, "status");
    if (!json_is_object(st)) json_object_set_new(pod, "status", st = json_object());
    json_t *conds = json_object_get(st, "conditions");
    if (!json_is_array(conds)) json_object_set_new(st, "conditions", conds = json_array());
    char now[32];
    kube_time_format(time(NULL), now);
    json_t *c = json_pack("{s:s, s:s, s:n, s:s}", "type", type, "status", status, "lastProbeTime",
                          "lastTransitionTime", now);
    size_t i;
    json_t *v;
    json_array_foreach(conds, i, v)
    {
        const char *t = json_string_value(json_object_get(v, "type"));
        if (t && strcmp(t, type) == 0) {
            json_array_set_new(conds, i, c);
            return;
        }
    }
    json_array_append_new(conds, c);
}

/* What a pods/binding POST decodes into: the core v1 Binding. */
static const as_resource binding_type = {
    .group = "", .version = "v1", .resource = "bindings", .kind = "Binding"};

/* The Binding as BindingREST.Create checks it (pkg/registry/core/pod/
 * storage/storage.go), after create.go's namespace check
 * (rest.EnsureObjectNamespaceMatchesRequestNamespace): its name must be
 * the URL's, then ValidatePodBinding (pkg/apis/core/validation): a
 * target.kind other than Node, an empty target.name. Those come back as
 * field.ErrorList.ToAggregate(), no API status, so kube-apiserver answers
 * 500 with the aggregate's text and no reason. 0 when it may bind. */
static int check_binding(const json_t *b, const as_path *p, as_response *resp)
{
    const json_t *meta = json_object_get(b, "metadata");
    if (as_check_object_namespace(b, p, resp) != 0) return -1;
    const char *name = kube_str_or_null(meta, "name");
    if (!name || strcmp(name, p->name) != 0) {
        as_error_bad_request(resp, "name in URL does not match name in Binding object");
        return -1;
    }
    const json_t *target = json_object_get(b, "target");
    const char *kind = kube_str_or_null(target, "kind");
    const char *node = kube_str_or_null(target, "name");
    gp_buf errs = {0};
    size_t n = 0;
    if (kind && *kind && strcmp(kind, "Node") != 0) {
        gp_buf_add(&errs, "target.kind: Unsupported value: ");
        gp_buf_add_go_quoted(&errs, kind, strlen(kind));
        gp_buf_add(&errs, ": supported values: \"Node\", \"<empty>\"");
        n++;
    }
    if (!node || !*node) {
        gp_buf_add(&errs, n ? ", target.name: Required value" : "target.name: Required value");
        n++;
    }
    if (n == 0) return 0;
    char *list = gp_buf_take(&errs);
    char *msg = list && n > 1 ? gp_format("[%s]", list) : NULL;
    as_json_response(resp, 500,
                     json_pack("{s:s, s:s, s:{}, s:s, s:s, s:i}", "kind", "Status", "apiVersion",
                               "v1", "metadata", "status", "Failure", "message",
                               msg    ? msg
                               : list ? list
                                      : "out of memory",
                               "code", 500));
    free(msg);
    free(list);
    return -1;
}

/* The binding's change to the pod; 0 when `pod` is to be stored, -1
 * after answering. */
static int bind_pod(json_t *pod, const as_path *p, const char *node, const char *want_uid,
                    as_response *resp)
{
    json_t *spec = json_object_get(pod, "spec");
    const char *assigned = json_string_value(json_object_get(spec, "nodeName"));
    if (want_uid && *want_uid &&
        strcmp(want_uid, kube_str_or_null(kube_obj(pod, "metadata"), "uid")) != 0) {
        as_error_conflict(resp, p->resource, p->name);
        return -1;
    }
    if (kube_str_or_null(kube_obj(pod, "metadata"), "deletionTimestamp") ||
        (assigned && *assigned)) {
        char msg[600], full[1100];
        if (assigned && *assigned)
            snprintf(msg, sizeof msg, "pod %s is already assigned to node \"%s\"", p->name,
                     assigned);
        else
            snprintf(msg, sizeof msg, "pod %s is being deleted, cannot be assigned to a host",
                     p->name);
        snprintf(full, sizeof full, "Operation cannot be fulfilled on pods/binding \"%s\": %s",
                 p->name, msg);
        as_status_details(resp, 409, "Conflict", full,
                          json_pack("{s:s, s:s}", "name", p->name, "kind", "pods/binding"));
        return -1;
    }
    json_object_set_new(spec, "nodeName", json_string(node));
    set_condition(pod, "PodScheduled", "True");
    return 0;
}

/* The pod is read and changed without the lock, and stored if it is still
 * at the version read (else read again), as an update is. */
static void bind_to_node(as_api *api, const as_request *req, const as_path *p, const json_t *b,
                         as_response *resp)
{
    const char *node = json_string_value(json_object_get(json_object_get(b, "target"), "name"));
    const char *want_uid = kube_str_or_null(kube_obj(b, "metadata"), "uid");
    for (int attempt = 0;; attempt++) {
        uint64_t rv;
        size_t len;
        json_t *pod = read_for_update(api, p, attempt, &rv, &len, resp);
        if (!pod) break;
        if (bind_pod(pod, p, node, want_uid, resp) != 0) {
            json_decref(pod);
            break;
        }
        gp_error err = {0};
        as_store_lock(api->store);
        const as_object *o = as_store_get(api->store, as_storage(p->resource), p->ns, p->name);
        const as_object *stored = NULL;
        if (!o) {
            as_error_not_found(resp, p->resource, p->name);
        } else if (o->rv == rv) {
            stored = put_object(api, p->resource, p->ns, p->name, pod, &err);
            if (!stored) store_failed(resp, &err);
        }
        bool retry = o && !stored && o->rv != rv;
        uint64_t written = stored ? stored->rv : 0;
        as_store_unlock(api->store);
        json_decref(pod);
        if (retry) continue;
        if (stored) {
            resp->status = 201;
            resp->content_type = "application/json";
            resp->body = strdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                                "\"status\":\"Success\",\"code\":201}");
            resp->len = resp->body ? strlen(resp->body) : 0;
            await_commit(api, req, written, resp);
        }
        break;
    }
}

void as_api_bind(as_api *api, const as_request *req, const as_path *p, as_response *resp)
{
    as_write_options opt;
    if (as_write_options_read(req, "CreateOptions", &opt, resp) != 0) return;
    json_t *warnings = json_array();
    json_t *b = as_decode_request(req, &binding_type, opt.validation, warnings, resp);
    if (b && check_binding(b, p, resp) == 0) bind_to_node(api, req, p, b, resp);
    json_decref(b);
    as_attach_warnings(resp, warnings);
    json_decref(warnings);
}

static const char *request_query_none(void *ctx, const char *key)
{
    (void)ctx;
    (void)key;
    return NULL;
}

/* The namespaces every cluster starts with, created through the same path
 * as a client's (so they get the same defaults). */
int as_api_bootstrap(as_api *api, gp_error *err)
{
    static const char *const names[] = {"default", "kube-system", "kube-public", "kube-node-lease",
                                        NULL};
    as_path p = {.resource = as_resource_find("", "v1", "namespaces")};
    for (size_t i = 0; names[i]; i++) {
        as_store_lock(api->store);
        bool exists = as_store_get(api->store, p.resource, "", names[i]) != NULL;
        as_store_unlock(api->store);
        if (exists) continue;
        char body[256];
        int n = snprintf(body, sizeof body,
                         "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
                         "\"%s\"}}",
                         names[i]);
        as_request req = {.method = "POST",
                          .path = "/api/v1/namespaces",
                          .content_type = "application/json",
                          .body = body,
                          .body_len = (size_t)n,
                          .query = request_query_none};
        as_response resp = {0};
        as_api_create(api, &req, &p, &resp);
        unsigned status = resp.status;
        as_response_free(&resp);
        if (status != 201) {
            gp_error_set(err, NULL, 0, 0, "cannot create namespace %s (HTTP %u)", names[i], status);
            return -1;
        }
    }
    return 0;
}

/* The names a deletecollection deletes, picked under the lock. */
typedef struct picked {
    char ns[254], name[254];
} picked;

static picked *pick(as_api *api, const as_request *req, const as_path *p, size_t *count,
                    as_response *resp)
{
    kube_label_selector *ls;
    kube_field_selector *fs;
    if (as_api_selectors(req, p->resource, &ls, &fs, resp) != 0) return NULL;
    as_store_lock(api->store);
    const as_object **all;
    size_t n = as_store_list(api->store, as_storage(p->resource), p->ns[0] ? p->ns : NULL, &all);
    picked *out = calloc(n ? n : 1, sizeof *out);
    *count = 0;
    for (size_t i = 0; out && i < n; i++) {
        if (!as_api_matches(all[i]->index, ls, fs)) continue;
        picked *k = &out[*count];
        json_t *parsed = json_loadb(all[i]->json->text, all[i]->json->len, 0, NULL);
        const json_t *m = json_object_get(parsed, "metadata");
        snprintf(k->ns, sizeof k->ns, "%s", kube_str(m, "namespace"));
        snprintf(k->name, sizeof k->name, "%s", kube_str(m, "name"));
        json_decref(parsed);
        if (k->name[0]) (*count)++;
    }
    as_store_unlock(api->store);
    free(all);
    kube_label_selector_free(ls);
    kube_field_selector_free(fs);
    if (!out) as_status(resp, 500, "InternalError", "out of memory");
    return out;
}

/* The registry's DeleteCollection: every object the selectors pick is
 * deleted as a DELETE of it with the same options would delete it (graceful
 * for pods), and the answer is the list of what was deleted, each in its
 * last state; one already gone is passed over, another error ends it. */
void as_api_delete_collection(as_api *api, const as_request *req, const as_path *p,
                              as_response *resp)
{
    delete_options opt;
    if (read_delete_options(req, &opt, resp) != 0) return;
    size_t n;
    picked *names = pick(api, req, p, &n, resp);
    if (!names) return;
    char av[96];
    as_api_version(p->resource, av, sizeof av);
    gp_buf b = {0};
    gp_buf_addf(&b, "{\"kind\":\"%sList\",\"apiVersion\":\"%s\",\"metadata\":{},\"items\":[",
                p->resource->kind, av);
    size_t items = 0;
    for (size_t i = 0; i < n; i++) {
        as_path one = *p;
        snprintf(one.ns, sizeof one.ns, "%s", names[i].ns);
        snprintf(one.name, sizeof one.name, "%s", names[i].name);
        as_response r = {0};
        as_api_delete(api, req, &one, &r);
        if (r.status == 200) {
            if (items++) gp_buf_addc(&b, ',');
            if (r.blob)
                gp_buf_addn(&b, r.blob->text, r.blob->len);
            else
                gp_buf_addn(&b, r.body, r.len);
        } else if (r.status != 404) {
            as_response_free(resp);
            *resp = r;
            gp_buf_free(&b);
            free(names);
            return;
        }
        as_response_free(&r);
    }
    free(names);
    gp_buf_add(&b, "]}");
    size_t len = b.len;
    char *body = gp_buf_take(&b);
    if (!body) {
        as_status(resp, 500, "InternalError", "out of memory");
        return;
    }
    memset(resp, 0, sizeof *resp);
    resp->status = 200;
    resp->content_type = "application/json";
    resp->body = body;
    resp->len = len;
}
