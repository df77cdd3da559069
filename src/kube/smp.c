/* Strategic merge patch: k8s.io/apimachinery/pkg/util/strategicpatch, the
 * apply half (StrategicMergeMapPatch with MergeParallelList and
 * IgnoreUnmatchedNulls, as the API server and `kubectl patch --local` run it).
 *
 * The Go library finds each field's patch strategy by reflection over the
 * typed struct; here a static table per kind says the same for the fields
 * that matter. The function names below follow the Go ones (merge_map is
 * mergeMap, normalize_order is normalizeElementOrder, ...) so that a
 * difference from kubectl can be traced to its source. The whole result is
 * built in a deep copy of the target that this file owns; values taken from
 * the patch are always copied. */
#include "kube/smp.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- schema ------------------------------------------------------------------ */

/* One field of an object: its list strategy and what its value (or each
 * element of its list) holds. A field missing from a table is an object that
 * merges key by key or a list replaced whole, which is what the Go library
 * does for every field without a patchStrategy tag. */
typedef struct smp_field smp_field;
struct smp_field {
    const char *name;
    bool merge;             /* patchStrategy:"merge" */
    const char *merge_key;  /* patchMergeKey; NULL with merge: a set of scalars */
    const smp_field *child; /* fields of the value, or of each element */
};

/* The tags of k8s.io/api v0.32.0, as compiled into kubectl 1.32.4 (the struct
 * tags are strings in its binary) and checked with `kubectl patch --local`
 * (tests/cli/smp_vs_kubectl.py runs every kind's keyed lists through it):
 *
 *   ObjectMeta   finalizers merge (no key: set union); ownerReferences merge uid
 *   Container, EphemeralContainer (inline EphemeralContainerCommon)
 *                ports containerPort; env name; volumeMounts mountPath;
 *                volumeDevices devicePath
 *   PodSpec      volumes name (merge,retainKeys); initContainers, containers,
 *                ephemeralContainers name; imagePullSecrets name; hostAliases
 *                ip; topologySpreadConstraints topologyKey; schedulingGates
 *                name; resourceClaims name (merge,retainKeys)
 *   PodStatus    conditions type; podIPs ip; hostIPs ip;
 *                resourceClaimStatuses name (merge,retainKeys)
 *   NodeSpec     podCIDRs merge (no key)
 *   NodeStatus   conditions type; addresses type
 *   NamespaceStatus, DaemonSetStatus  conditions type
 *   ServiceAccount  secrets name
 *
 * Everything else in these kinds is atomic: tolerations, readinessGates,
 * command, args, envFrom, resizePolicy, containerStatuses,
 * initContainerStatuses, ephemeralContainerStatuses, the affinity terms and
 * expressions, node taints, images, volumesInUse, volumesAttached,
 * Namespace spec.finalizers, ServiceAccount imagePullSecrets, the
 * DaemonSet's selector.matchExpressions, RuntimeClass scheduling.tolerations,
 * managedFields. ConfigMap, Event, ControllerRevision, RuntimeClass and Lease
 * have no merge list outside metadata. "retainKeys" needs no entry: the
 * library applies a "$retainKeys" directive wherever one appears. */
static const smp_field object_meta[] = {
    {"finalizers", true, NULL, NULL},
    {"ownerReferences", true, "uid", NULL},
    {NULL, false, NULL, NULL},
};

static const smp_field container[] = {
    {"ports", true, "containerPort", NULL},
    {"env", true, "name", NULL},
    {"volumeMounts", true, "mountPath", NULL},
    {"volumeDevices", true, "devicePath", NULL},
    {NULL, false, NULL, NULL},
};

static const smp_field pod_spec[] = {
    {"volumes", true, "name", NULL},
    {"initContainers", true, "name", container},
    {"containers", true, "name", container},
    {"ephemeralContainers", true, "name", container},
    {"imagePullSecrets", true, "name", NULL},
    {"hostAliases", true, "ip", NULL},
    {"topologySpreadConstraints", true, "topologyKey", NULL},
    {"schedulingGates", true, "name", NULL},
    {"resourceClaims", true, "name", NULL},
    {NULL, false, NULL, NULL},
};

static const smp_field pod_status[] = {
    {"conditions", true, "type", NULL}, {"podIPs", true, "ip", NULL},
    {"hostIPs", true, "ip", NULL},      {"resourceClaimStatuses", true, "name", NULL},
    {NULL, false, NULL, NULL},
};

static const smp_field pod[] = {
    {"metadata", false, NULL, object_meta},
    {"spec", false, NULL, pod_spec},
    {"status", false, NULL, pod_status},
    {NULL, false, NULL, NULL},
};

static const smp_field pod_template_spec[] = {
    {"metadata", false, NULL, object_meta},
    {"spec", false, NULL, pod_spec},
    {NULL, false, NULL, NULL},
};

static const smp_field daemon_set_spec[] = {
    {"template", false, NULL, pod_template_spec},
    {NULL, false, NULL, NULL},
};

static const smp_field conditions_status[] = {
    {"conditions", true, "type", NULL},
    {NULL, false, NULL, NULL},
};

static const smp_field daemon_set[] = {
    {"metadata", false, NULL, object_meta},
    {"spec", false, NULL, daemon_set_spec},
    {"status", false, NULL, conditions_status},
    {NULL, false, NULL, NULL},
};

static const smp_field node_spec[] = {
    {"podCIDRs", true, NULL, NULL},
    {NULL, false, NULL, NULL},
};

static const smp_field node_status[] = {
    {"conditions", true, "type", NULL},
    {"addresses", true, "type", NULL},
    {NULL, false, NULL, NULL},
};

static const smp_field node[] = {
    {"metadata", false, NULL, object_meta},
    {"spec", false, NULL, node_spec},
    {"status", false, NULL, node_status},
    {NULL, false, NULL, NULL},
};

static const smp_field namespace_[] = {
    {"metadata", false, NULL, object_meta},
    {"status", false, NULL, conditions_status},
    {NULL, false, NULL, NULL},
};

static const smp_field service_account[] = {
    {"metadata", false, NULL, object_meta},
    {"secrets", true, "name", NULL},
    {NULL, false, NULL, NULL},
};

/* ConfigMap, Event, ControllerRevision, RuntimeClass, Lease. */
static const smp_field metadata_only[] = {
    {"metadata", false, NULL, object_meta},
    {NULL, false, NULL, NULL},
};

static const struct {
    const char *kind;
    const smp_field *fields;
} kinds[] = {
    {"Pod", pod},
    {"Node", node},
    {"Namespace", namespace_},
    {"ConfigMap", metadata_only},
    {"Event", metadata_only},
    {"ServiceAccount", service_account},
    {"DaemonSet", daemon_set},
    {"ControllerRevision", metadata_only},
    {"RuntimeClass", metadata_only},
    {"Lease", metadata_only},
};

static const smp_field *schema_of(const char *kind)
{
    if (!kind) return NULL;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].kind, kind) == 0) return kinds[i].fields;
    return NULL;
}

static const smp_field *field_of(const smp_field *fields, const char *name, size_t len)
{
    for (const smp_field *f = fields; f && f->name; f++)
        if (strlen(f->name) == len && memcmp(f->name, name, len) == 0) return f;
    return NULL;
}

/* ---- directives and errors ----------------------------------------------------- */

#define DIRECTIVE         "$patch"
#define RETAIN_KEYS       "$retainKeys"
#define SET_ORDER         "$setElementOrder"
#define DELETE_PRIMITIVES "$deleteFromPrimitiveList"

static bool has_prefix(const char *key, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(key, prefix, n) == 0;
}

/* "PREFIX/field" names the field; anything else after the prefix is refused,
 * as Go's extractKey does. */
static bool directive_field(const char *key, size_t len, const char *prefix, const char **field,
                            size_t *field_len)
{
    size_t n = strlen(prefix);
    if (len <= n || key[n] != '/') return false;
    *field = key + n + 1;
    *field_len = len - n - 1;
    return true;
}

static bool is_string(const json_t *v, const char *s)
{
    return json_is_string(v) && strcmp(json_string_value(v), s) == 0 &&
           json_string_length(v) == strlen(s);
}

/* A short JSON rendering of a value for a message. */
static void describe(const json_t *v, char *buf, size_t size)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text) {
        snprintf(buf, size, "(a value)");
        return;
    }
    if ((size_t)snprintf(buf, size, "%s", text) >= size) strcpy(buf + size - 4, "...");
    free(text);
}

static void oom(gp_error *err)
{
    gp_error_set(err, NULL, 0, 0, "out of memory");
}

static void no_merge_key(gp_error *err, const json_t *element, const char *key)
{
    char what[200];
    describe(element, what, sizeof what);
    gp_error_set(err, NULL, 0, 0, "%s does not contain declared merge key: %s", what, key);
}

static void bad_patch_type(gp_error *err, const json_t *directive, const json_t *where)
{
    char type[64], what[200];
    describe(directive, type, sizeof type);
    describe(where, what, sizeof what);
    gp_error_set(err, NULL, 0, 0, "unknown patch type %s in %s", type, what);
}

/* ---- copies of patch values ------------------------------------------------------ */

/* A patch value the library copies through as it is (an atomic list, a new
 * element of a keyed list, a "$patch": "replace" object), as the API server
 * stores it once decoded into the typed object: the "$..." members and the
 * null ones are gone, everything else is kept. */
static json_t *copy_raw(const json_t *v)
{
    if (json_is_array(v)) {
        json_t *out = json_array();
        size_t i;
        json_t *e;
        if (!out) return NULL;
        json_array_foreach((json_t *)v, i, e)
        {
            if (json_array_append_new(out, copy_raw(e)) != 0) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    if (!json_is_object(v)) return json_deep_copy(v);
    json_t *out = json_object();
    const char *key;
    size_t len;
    json_t *m;
    if (!out) return NULL;
    json_object_keylen_foreach((json_t *)v, key, len, m)
    {
        if ((len > 0 && key[0] == '$') || json_is_null(m)) continue;
        if (json_object_setn_new(out, key, len, copy_raw(m)) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

/* A patch value for a field the target lacks (or holds with another type):
 * Go's discardNullValuesFromPatch and removeDirectives drop null members and
 * every object that carries "$patch", whatever its value; the other "$..."
 * members go as in copy_raw. *keep is false when `v` itself is dropped; a
 * NULL return with *keep true means out of memory. */
static json_t *copy_new(const json_t *v, bool *keep)
{
    *keep = true;
    if (json_is_array(v)) {
        json_t *out = json_array();
        size_t i;
        json_t *e;
        if (!out) return NULL;
        json_array_foreach((json_t *)v, i, e)
        {
            bool k;
            json_t *c = copy_new(e, &k);
            if (!k) continue;
            if (json_array_append_new(out, c) != 0) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    if (!json_is_object(v)) return json_deep_copy(v);
    if (json_object_get(v, DIRECTIVE)) {
        *keep = false;
        return NULL;
    }
    json_t *out = json_object();
    const char *key;
    size_t len;
    json_t *m;
    if (!out) return NULL;
    json_object_keylen_foreach((json_t *)v, key, len, m)
    {
        if ((len > 0 && key[0] == '$') || json_is_null(m)) continue;
        bool k;
        json_t *c = copy_new(m, &k);
        if (!k) continue;
        if (json_object_setn_new(out, key, len, c) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

/* Sets orig[key] to a copy_new of `v`, or leaves it out when `v` is dropped. */
static int set_new_value(json_t *orig, const char *key, size_t len, const json_t *v, gp_error *err)
{
    bool keep;
    json_t *c = copy_new(v, &keep);
    if (!keep) return 0;
    if (json_object_setn_new(orig, key, len, c) != 0) {
        oom(err);
        return -1;
    }
    return 0;
}

/* ---- list helpers ----------------------------------------------------------------- */

/* Borrowed pointers to list elements. */
typedef struct {
    json_t **v;
    size_t n;
} view;

static int view_alloc(view *l, size_t cap)
{
    l->n = 0;
    l->v = cap ? malloc(cap * sizeof *l->v) : NULL;
    return cap && !l->v ? -1 : 0;
}

static int view_of(const json_t *array, view *l)
{
    size_t n = json_array_size(array);
    if (view_alloc(l, n) != 0) return -1;
    for (size_t i = 0; i < n; i++)
        l->v[l->n++] = json_array_get(array, i);
    return 0;
}

static void view_free(view *l)
{
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* The element's merge key value, NULL when it has none (or is no object). */
static const json_t *key_of(const json_t *e, const char *key)
{
    return json_is_object(e) ? json_object_get(e, key) : NULL;
}

/* Go compares merge key values with ==, so an absent key equals an absent
 * key, and 1 (int64) is not 1.0 (float64): json_equal draws the same line. */
static bool same_item(const json_t *a, const json_t *b, const char *key, bool maps)
{
    if (!maps) return json_equal(a, b);
    const json_t *ka = key_of(a, key), *kb = key_of(b, key);
    if (!ka || !kb) return !ka && !kb;
    return json_equal(ka, kb);
}

static size_t index_in(const view *order, const json_t *v, const char *key, bool maps)
{
    for (size_t i = 0; i < order->n; i++)
        if (same_item(v, order->v[i], key, maps)) return i;
    return SIZE_MAX;
}

/* The Go type the elements of both lists share (sliceElementType): objects,
 * or one scalar type; integers and reals are different types there, and true
 * and false the same. */
typedef enum { EL_OBJECT, EL_ARRAY, EL_STRING, EL_INTEGER, EL_REAL, EL_BOOL } element_type;

static int element_type_of(const json_t *a, const json_t *b, element_type *out, gp_error *err)
{
    const json_t *lists[2] = {a, b};
    bool found = false;
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *e;
        json_array_foreach((json_t *)lists[l], i, e)
        {
            element_type t;
            switch (json_typeof(e)) {
            case JSON_OBJECT:
                t = EL_OBJECT;
                break;
            case JSON_ARRAY:
                t = EL_ARRAY;
                break;
            case JSON_STRING:
                t = EL_STRING;
                break;
            case JSON_INTEGER:
                t = EL_INTEGER;
                break;
            case JSON_REAL:
                t = EL_REAL;
                break;
            case JSON_TRUE:
            case JSON_FALSE:
                t = EL_BOOL;
                break;
            default:
                /* Go dereferences a nil type here and panics (or reports a
                 * type mismatch when the null is not first). */
                gp_error_set(err, NULL, 0, 0, "a merged list holds a null element");
                return -1;
            }
            if (found && t != *out) {
                char what[200];
                describe(lists[l], what, sizeof what);
                gp_error_set(err, NULL, 0, 0, "list element types are not identical: %s", what);
                return -1;
            }
            if (t == EL_ARRAY) {
                gp_error_set(err, NULL, 0, 0, "lists of lists are not supported");
                return -1;
            }
            *out = t;
            found = true;
        }
    }
    if (!found) {
        gp_error_set(err, NULL, 0, 0, "no elements in any of the given lists");
        return -1;
    }
    return 0;
}

/* ---- order (normalizeElementOrder) ----------------------------------------------------- */

/* Every element of a list of objects being ordered must carry the merge key
 * (validateMergeKeyInLists). */
static int check_keys(const view *l, const char *key, gp_error *err)
{
    for (size_t i = 0; i < l->n; i++) {
        if (!key_of(l->v[i], key)) {
            no_merge_key(err, l->v[i], key);
            return -1;
        }
    }
    return 0;
}

/* normalizeSliceOrder: `items` stably sorted by where each stands in
 * `order`; "$patch": "delete" elements go last. Every item is in `order` on
 * the paths that get here (patch items in the patch, server-only items in
 * the server list); one that is not sorts last. */
static int sort_by_order(view *items, const view *order, const char *key, bool maps, gp_error *err)
{
    if (maps && (check_keys(items, key, err) != 0 || check_keys(order, key, err) != 0)) return -1;
    size_t *rank = items->n ? malloc(items->n * sizeof *rank) : NULL;
    json_t **deleted = items->n ? malloc(items->n * sizeof *deleted) : NULL;
    if (items->n && (!rank || !deleted)) {
        free(rank);
        free(deleted);
        oom(err);
        return -1;
    }
    size_t kept = 0, n_deleted = 0;
    for (size_t i = 0; i < items->n; i++) {
        json_t *e = items->v[i];
        if (maps && is_string(json_object_get(e, DIRECTIVE), "delete")) {
            deleted[n_deleted++] = e;
            continue;
        }
        rank[kept] = index_in(order, e, key, maps);
        items->v[kept++] = e;
    }
    /* Insertion sort: stable, and the lists are short. */
    for (size_t i = 1; i < kept; i++) {
        json_t *e = items->v[i];
        size_t r = rank[i], j = i;
        for (; j > 0 && rank[j - 1] > r; j--) {
            items->v[j] = items->v[j - 1];
            rank[j] = rank[j - 1];
        }
        items->v[j] = e;
        rank[j] = r;
    }
    if (n_deleted) memcpy(items->v + kept, deleted, n_deleted * sizeof *deleted);
    free(rank);
    free(deleted);
    return 0;
}

/* mergeSortedSlice: interleaves the server-only items (left) into the patch
 * items (right), keeping the order within each. A server item goes first only
 * when both it and the next patch item are in the server list and it stood
 * before; so a new patch item is taken as soon as it comes up, which puts new
 * elements at the head of the patch at the front. */
static json_t *merge_sorted(const view *left, const view *right, const view *server,
                            const char *key, bool maps, gp_error *err)
{
    json_t *out = json_array();
    size_t *li = left->n ? malloc(left->n * sizeof *li) : NULL;
    size_t *ri = right->n ? malloc(right->n * sizeof *ri) : NULL;
    if (!out || (left->n && !li) || (right->n && !ri)) {
        json_decref(out);
        free(li);
        free(ri);
        oom(err);
        return NULL;
    }
    for (size_t i = 0; i < left->n; i++)
        li[i] = index_in(server, left->v[i], key, maps);
    for (size_t j = 0; j < right->n; j++)
        ri[j] = index_in(server, right->v[j], key, maps);
    size_t i = 0, j = 0;
    int rc = 0;
    while (rc == 0 && (i < left->n || j < right->n)) {
        bool take_left;
        if (j >= right->n)
            take_left = true;
        else if (i >= left->n)
            take_left = false;
        else
            take_left = li[i] != SIZE_MAX && ri[j] != SIZE_MAX && li[i] < ri[j];
        rc = json_array_append(out, take_left ? left->v[i++] : right->v[j++]);
    }
    free(li);
    free(ri);
    if (rc != 0) {
        json_decref(out);
        oom(err);
        return NULL;
    }
    return out;
}

/* Splits `merged` into the elements present in `by` and the rest
 * (partitionMapsByPresentInList / partitionPrimitivesByPresentInList). */
static int partition(const json_t *merged, const view *by, const char *key, view *in, view *out,
                     gp_error *err)
{
    size_t n = json_array_size(merged);
    if (view_alloc(in, n) != 0 || view_alloc(out, n) != 0) {
        view_free(in);
        oom(err);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(merged, i);
        if (key && !key_of(e, key)) {
            no_merge_key(err, e, key);
            view_free(in);
            view_free(out);
            return -1;
        }
        bool found = index_in(by, e, key, key != NULL) != SIZE_MAX;
        if (found)
            in->v[in->n++] = e;
        else
            out->v[out->n++] = e;
    }
    return 0;
}

/* The elements of `merged` in their final order: those present in `order`
 * (the patch list, or a $setElementOrder list) sorted by it, the others by
 * `server` (the target's list), then the two interleaved. */
static json_t *normalize_order(const json_t *merged, const view *order, const view *server,
                               const char *key, bool maps, gp_error *err)
{
    view in, rest;
    if (partition(merged, order, key, &in, &rest, err) != 0) return NULL;
    json_t *out = NULL;
    const char *k = key ? key : "";
    if (sort_by_order(&in, order, k, maps, err) == 0 &&
        sort_by_order(&rest, server, k, maps, err) == 0)
        out = merge_sorted(&rest, &in, server, k, maps, err);
    view_free(&in);
    view_free(&rest);
    return out;
}

/* ---- merging lists (mergeSlice) ---------------------------------------------------------- */

static json_t *merge_map(json_t *orig, const json_t *patch, const smp_field *fields, gp_error *err);

static bool list_has(const json_t *list, const json_t *v)
{
    for (size_t i = 0; i < json_array_size(list); i++)
        if (json_equal(json_array_get(list, i), v)) return true;
    return false;
}

/* deleteFromSlice: the scalars of `orig` not named in `patch`. */
static json_t *delete_from_list(json_t *orig, const json_t *patch, gp_error *err)
{
    json_t *out = json_array();
    size_t i;
    json_t *e;
    if (!out) goto fail;
    json_array_foreach(orig, i, e)
    {
        if (!list_has(patch, e) && json_array_append(out, e) != 0) goto fail;
    }
    json_decref(orig);
    return out;
fail:
    json_decref(out);
    json_decref(orig);
    oom(err);
    return NULL;
}

/* The union of two scalar lists without repeats; normalize_order orders it. */
static json_t *union_of(json_t *orig, const json_t *patch, gp_error *err)
{
    json_t *out = json_array();
    const json_t *lists[2] = {orig, patch};
    if (!out) goto fail;
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *e;
        json_array_foreach((json_t *)lists[l], i, e)
        {
            if (!list_has(out, e) && json_array_append_new(out, json_deep_copy(e)) != 0) goto fail;
        }
    }
    json_decref(orig);
    return out;
fail:
    json_decref(out);
    json_decref(orig);
    oom(err);
    return NULL;
}

/* Removes every element of `list` whose merge key equals `value`, first
 * match first (deleteMatchingEntries). `shadow`, when not NULL, is the Go
 * backing array behind the caller's view of the list: each removal shifts
 * the elements after it left within the list's current length and leaves the
 * last slot as it was. */
static int delete_matching(json_t *list, const char *key, const json_t *value, json_t *shadow)
{
    for (;;) {
        size_t n = json_array_size(list), at = SIZE_MAX;
        for (size_t i = 0; i < n && at == SIZE_MAX; i++) {
            const json_t *k = key_of(json_array_get(list, i), key);
            if (k && json_equal(k, value)) at = i;
        }
        if (at == SIZE_MAX) return 0;
        for (size_t j = at; shadow && j + 1 < n; j++)
            if (json_array_set(shadow, j, json_array_get(shadow, j + 1)) != 0) return -1;
        json_array_remove(list, at);
    }
}

/* mergeSliceWithSpecialElements: applies the "$patch" elements of a keyed
 * list's patch to `*orig` and fills `plain` with the other elements.
 * "$patch": "replace" turns *orig into (copies of) those elements and
 * empties `plain`. */
static int special_elements(json_t **orig, const json_t *patch, const char *key, view *plain,
                            json_t *shadow, gp_error *err)
{
    bool replace = false;
    size_t i;
    json_t *p;
    if (view_alloc(plain, json_array_size(patch)) != 0) {
        oom(err);
        return -1;
    }
    json_array_foreach((json_t *)patch, i, p)
    {
        const json_t *d = json_object_get(p, DIRECTIVE);
        if (!d) {
            plain->v[plain->n++] = p;
        } else if (is_string(d, "delete")) {
            const json_t *value = json_object_get(p, key);
            if (!value) {
                no_merge_key(err, p, key);
                return -1;
            }
            if (delete_matching(*orig, key, value, shadow) != 0) {
                oom(err);
                return -1;
            }
        } else if (is_string(d, "replace")) {
            replace = true; /* the other "$patch" elements still apply or fail */
        } else if (is_string(d, "merge")) {
            gp_error_set(err, NULL, 0, 0, "merging lists cannot yet be specified in the patch");
            return -1;
        } else {
            bad_patch_type(err, d, p);
            return -1;
        }
    }
    if (!replace) return 0;
    json_t *list = json_array();
    if (!list) {
        oom(err);
        return -1;
    }
    for (size_t j = 0; j < plain->n; j++) {
        if (json_array_append_new(list, copy_raw(plain->v[j])) != 0) {
            json_decref(list);
            oom(err);
            return -1;
        }
    }
    json_decref(*orig);
    *orig = list;
    plain->n = 0;
    return 0;
}

/* mergeSliceWithoutSpecialElements: each plain element merges into the first
 * element of `orig` with the same key, or is appended. Both land in `shadow`
 * too, when given, where Go's slice writes them: an append only while the
 * list is shorter than the backing array, i.e. into a slot a deletion freed. */
static int merge_elements(json_t *orig, const view *plain, const char *key, const smp_field *child,
                          json_t *shadow, gp_error *err)
{
    for (size_t i = 0; i < plain->n; i++) {
        const json_t *p = plain->v[i];
        const json_t *value = json_object_get(p, key);
        if (!value) {
            no_merge_key(err, p, key);
            return -1;
        }
        size_t at = SIZE_MAX;
        for (size_t j = 0; j < json_array_size(orig) && at == SIZE_MAX; j++) {
            const json_t *k = key_of(json_array_get(orig, j), key);
            if (k && json_equal(k, value)) at = j;
        }
        json_t *e;
        if (at == SIZE_MAX) {
            at = json_array_size(orig);
            e = copy_raw(p);
            if (json_array_append_new(orig, e) != 0) {
                oom(err);
                return -1;
            }
        } else {
            e = merge_map(json_incref(json_array_get(orig, at)), p, child, err);
            if (!e) return -1;
            if (json_array_set_new(orig, at, e) != 0) {
                oom(err);
                return -1;
            }
        }
        if (shadow && at < json_array_size(shadow) && json_array_set(shadow, at, e) != 0) {
            oom(err);
            return -1;
        }
    }
    return 0;
}

/* mergeSlice for a field with patch strategy merge, or any field under
 * "$deleteFromPrimitiveList/". Takes `orig`. When `server` is not NULL it
 * receives what mergePatchIntoOriginal then orders the server-only elements
 * by: Go's originalFieldValue, the slice of the target's list whose backing
 * array this merge shifted and appended into (see delete_matching). */
static json_t *merge_list(json_t *orig, const json_t *patch, const smp_field *f, bool delete_list,
                          json_t **server, gp_error *err)
{
    const char *key = f && f->merge ? f->merge_key : NULL;
    const smp_field *child = f ? f->child : NULL;
    if (json_array_size(orig) == 0 && json_array_size(patch) == 0) {
        if (server) *server = json_incref(orig);
        return orig;
    }
    element_type type;
    if (element_type_of(orig, patch, &type, err) != 0) {
        json_decref(orig);
        return NULL;
    }
    view plain = {0};
    json_t *merged = NULL, *order_from = NULL, *shadow = NULL;
    if (type != EL_OBJECT) {
        if (delete_list) return delete_from_list(orig, patch, err);
        if (view_of(patch, &plain) != 0) {
            json_decref(orig);
            oom(err);
            return NULL;
        }
        order_from = json_incref(orig);
        merged = union_of(orig, patch, err);
    } else if (!key) {
        char what[100];
        snprintf(what, sizeof what, "%s", f ? f->name : "a field without a schema");
        gp_error_set(err, NULL, 0, 0, "cannot merge lists without merge key for %s", what);
        json_decref(orig);
        return NULL;
    } else {
        if (server && !(shadow = json_copy(orig))) {
            oom(err);
            goto fail;
        }
        if (special_elements(&orig, patch, key, &plain, shadow, err) != 0) goto fail;
        order_from = json_copy(orig); /* the elements, before they merge */
        if (!order_from) {
            oom(err);
            goto fail;
        }
        if (merge_elements(orig, &plain, key, child, shadow, err) != 0) goto fail;
        merged = orig;
        orig = NULL;
    }
    json_t *out = NULL;
    view server_view = {0};
    if (merged && view_of(order_from, &server_view) == 0)
        out = normalize_order(merged, &plain, &server_view, key, type == EL_OBJECT, err);
    else if (merged)
        oom(err);
    view_free(&server_view);
    view_free(&plain);
    json_decref(merged);
    if (out && server) {
        *server = shadow ? shadow : json_incref(order_from);
        shadow = NULL;
    }
    json_decref(shadow);
    json_decref(order_from);
    return out;
fail:
    view_free(&plain);
    json_decref(orig);
    json_decref(order_from);
    json_decref(shadow);
    return NULL;
}

/* mergeSliceHandler: merge lists merge, the others take the patch. */
static json_t *merge_list_field(json_t *orig, const json_t *patch, const smp_field *f,
                                bool delete_list, json_t **server, gp_error *err)
{
    if ((f && f->merge) || delete_list) return merge_list(orig, patch, f, delete_list, server, err);
    json_t *out = copy_raw(patch);
    if (!out) oom(err);
    if (out && server)
        *server = orig;
    else
        json_decref(orig);
    return out;
}

/* ---- merging objects (mergeMap) ------------------------------------------------------------ */

static bool retained(const json_t *retain, const char *key, size_t len)
{
    for (size_t i = 0; i < json_array_size(retain); i++) {
        const json_t *r = json_array_get(retain, i);
        if (json_is_string(r) && json_string_length(r) == len &&
            memcmp(json_string_value(r), key, len) == 0)
            return true;
    }
    return false;
}

/* applyRetainKeysDirective: every member the patch sets must be listed, and
 * the target keeps only listed members. */
static int retain_keys(json_t *orig, const json_t *patch, const json_t *retain, gp_error *err)
{
    if (!json_is_array(retain)) {
        gp_error_set(err, NULL, 0, 0, "invalid patch format of retainKeys");
        return -1;
    }
    const char *key;
    size_t len;
    json_t *v;
    json_object_keylen_foreach((json_t *)patch, key, len, v)
    {
        bool directive = (len == strlen(RETAIN_KEYS) && memcmp(key, RETAIN_KEYS, len) == 0) ||
                         has_prefix(key, len, DELETE_PRIMITIVES) || has_prefix(key, len, SET_ORDER);
        if (json_is_null(v) || directive) continue;
        if (!retained(retain, key, len)) {
            gp_error_set(err, NULL, 0, 0, "invalid patch format of retainKeys");
            return -1;
        }
    }
    void *tmp;
    json_object_keylen_foreach_safe(orig, tmp, key, len, v)
    {
        if (!retained(retain, key, len)) json_object_deln(orig, key, len);
    }
    return 0;
}

/* validatePatchWithSetOrderList: the patch list's elements (less "$patch"
 * ones) must appear in the $setElementOrder list, in the same order. */
static int check_order(const json_t *patch_list, const json_t *order, const char *key,
                       gp_error *err)
{
    size_t n = json_array_size(patch_list), m = json_array_size(order);
    if (n == 0 || m == 0) return 0;
    view plain;
    if (view_alloc(&plain, n) != 0) {
        oom(err);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *p = json_array_get(patch_list, i);
        if (key && !json_is_object(p)) {
            char what[200];
            describe(p, what, sizeof what);
            gp_error_set(err, NULL, 0, 0, "expected an object in a keyed list, got %s", what);
            view_free(&plain);
            return -1;
        }
        if (!key || !is_string(json_object_get(p, DIRECTIVE), "delete")) plain.v[plain.n++] = p;
    }
    size_t pi = 0, si = 0;
    int rc = 0;
    while (rc == 0 && pi < plain.n && si < m) {
        const json_t *p = plain.v[pi], *s = json_array_get(order, si);
        if (json_is_object(p) && json_object_get(p, DIRECTIVE)) {
            pi++;
            continue;
        }
        if (key && !key_of(p, key)) {
            no_merge_key(err, p, key);
            rc = -1;
        } else if (key && !key_of(s, key)) {
            no_merge_key(err, s, key);
            rc = -1;
        } else {
            if (same_item(p, s, key, key != NULL)) pi++;
            si++;
        }
    }
    if (rc == 0 && pi < plain.n) {
        char list[300], want[300];
        describe(patch_list, list, sizeof list);
        describe(order, want, sizeof want);
        gp_error_set(err, NULL, 0, 0,
                     "the order in patch list %s doesn't match $setElementOrder list %s", list,
                     want);
        rc = -1;
    }
    view_free(&plain);
    return rc;
}

/* One "$setElementOrder/<field>" (mergePatchIntoOriginal): merges the field's
 * patch list, if any, and orders the result by the directive. `done` records
 * the field so that the main loop skips its patch list. */
static int set_element_order(json_t *orig, const json_t *patch, const char *dkey, size_t dlen,
                             const json_t *order, const smp_field *fields, json_t *done,
                             gp_error *err)
{
    const char *name;
    size_t len;
    if (!json_is_array(order) || !directive_field(dkey, dlen, SET_ORDER, &name, &len)) {
        gp_error_set(err, NULL, 0, 0, "invalid patch format of setElementOrder list");
        return -1;
    }
    json_t *orig_list = json_object_getn(orig, name, len);
    const json_t *patch_list = json_object_getn(patch, name, len);
    if ((orig_list && !json_is_array(orig_list)) || (patch_list && !json_is_array(patch_list))) {
        gp_error_set(err, NULL, 0, 0, "%s needs a list for its $setElementOrder directive", name);
        return -1;
    }
    const smp_field *f = field_of(fields, name, len);
    const char *key = f && f->merge ? f->merge_key : NULL;
    if (check_order(patch_list, order, key, err) != 0) return -1;
    if (!orig_list && !patch_list) return 0;
    element_type type; /* a NULL list is empty to jansson */
    if (element_type_of(orig_list, patch_list, &type, err) != 0) return -1;

    json_t *merged, *server = NULL;
    if (orig_list && !patch_list) {
        merged = json_incref(orig_list);
        server = json_incref(orig_list);
    } else if (!orig_list) {
        bool keep;
        merged = copy_new(patch_list, &keep);
        server = json_array();
    } else {
        merged = merge_list_field(json_incref(orig_list), patch_list, f, false, &server, err);
        if (!merged) return -1;
    }
    view order_view = {0}, server_view = {0};
    json_t *out = NULL;
    if (merged && server && view_of(order, &order_view) == 0 && view_of(server, &server_view) == 0)
        out = normalize_order(merged, &order_view, &server_view, key, type == EL_OBJECT, err);
    else
        oom(err);
    view_free(&order_view);
    view_free(&server_view);
    json_decref(merged);
    json_decref(server);
    if (!out) return -1;
    if (json_object_setn_new(orig, name, len, out) != 0 ||
        json_object_setn_new(done, name, len, json_true()) != 0) {
        oom(err);
        return -1;
    }
    return 0;
}

/* A "$patch" member of an object: "replace" takes the rest of the object,
 * "delete" leaves an empty one (handleDirectiveInMergeMap). */
static json_t *object_directive(const json_t *d, const json_t *patch, gp_error *err)
{
    json_t *out = NULL;
    if (is_string(d, "replace"))
        out = copy_raw(patch);
    else if (is_string(d, "delete"))
        out = json_object();
    else {
        bad_patch_type(err, d, patch);
        return NULL;
    }
    if (!out) oom(err);
    return out;
}

/* One member of the patch, other than the directives handled before. */
static int merge_member(json_t *orig, const char *key, size_t len, const json_t *value,
                        const smp_field *fields, gp_error *err)
{
    bool delete_list = false;
    const char *name = key;
    size_t name_len = len;
    if (has_prefix(key, len, DELETE_PRIMITIVES)) {
        if (!directive_field(key, len, DELETE_PRIMITIVES, &name, &name_len)) {
            gp_error_set(err, NULL, 0, 0, "invalid patch format of primitive list");
            return -1;
        }
        delete_list = true;
    } else if (len > 0 && key[0] == '$') {
        return 0; /* not a directive: the typed decode drops an unknown "$..." field */
    }
    if (json_is_null(value)) {
        json_object_deln(orig, name, name_len);
        return 0;
    }
    json_t *cur = json_object_getn(orig, name, name_len);
    bool objects = json_is_object(cur) && json_is_object(value);
    bool lists = json_is_array(cur) && json_is_array(value);
    bool scalars = cur && !json_is_object(cur) && !json_is_array(cur) &&
                   (json_typeof(cur) == json_typeof(value) ||
                    (json_is_boolean(cur) && json_is_boolean(value)));
    if (!objects && !lists && !scalars)
        return delete_list ? 0 : set_new_value(orig, name, name_len, value, err);

    const smp_field *f = field_of(fields, name, name_len);
    json_t *out;
    if (objects)
        out = merge_map(json_incref(cur), value, f ? f->child : NULL, err);
    else if (lists)
        out = merge_list_field(json_incref(cur), value, f, delete_list, NULL, err);
    else if (!(out = json_deep_copy(value)))
        oom(err);
    if (!out) return -1;
    if (json_object_setn_new(orig, name, name_len, out) != 0) {
        oom(err);
        return -1;
    }
    return 0;
}

/* mergeMap: takes `orig` (an object, or NULL for none) and returns the
 * merged object, or NULL with `err` set. */
static json_t *merge_map(json_t *orig, const json_t *patch, const smp_field *fields, gp_error *err)
{
    const json_t *d = json_object_get(patch, DIRECTIVE);
    if (d) {
        json_decref(orig);
        return object_directive(d, patch, err);
    }
    if (!orig && !(orig = json_object())) {
        oom(err);
        return NULL;
    }
    const json_t *retain = json_object_get(patch, RETAIN_KEYS);
    if (retain && retain_keys(orig, patch, retain, err) != 0) goto fail;

    json_t *done = json_object();
    if (!done) {
        oom(err);
        goto fail;
    }
    const char *key;
    size_t len;
    json_t *value;
    json_object_keylen_foreach((json_t *)patch, key, len, value)
    {
        if (has_prefix(key, len, SET_ORDER) &&
            set_element_order(orig, patch, key, len, value, fields, done, err) != 0)
            goto fail_done;
    }
    /* Go visits the members in map order, which is random: a list and its
     * "$deleteFromPrimitiveList" in one patch come out either way. The
     * deletions go last here, as they do in what `kubectl apply` sends,
     * where "$setElementOrder" merges the list first. */
    for (int deletions = 0; deletions < 2; deletions++) {
        json_object_keylen_foreach((json_t *)patch, key, len, value)
        {
            if (has_prefix(key, len, SET_ORDER) || json_object_getn(done, key, len) ||
                has_prefix(key, len, DELETE_PRIMITIVES) != deletions)
                continue;
            if (merge_member(orig, key, len, value, fields, err) != 0) goto fail_done;
        }
    }
    json_decref(done);
    return orig;
fail_done:
    json_decref(done);
fail:
    json_decref(orig);
    return NULL;
}

json_t *kube_strategic_merge_patch(const json_t *target, const json_t *patch, const char *kind,
                                   gp_error *err)
{
    if (!json_is_object(patch)) {
        gp_error_set(err, NULL, 0, 0, "a strategic merge patch must be a JSON object");
        return NULL;
    }
    if (target && !json_is_object(target)) {
        gp_error_set(err, NULL, 0, 0, "a strategic merge patch applies to a JSON object");
        return NULL;
    }
    json_t *copy = target ? json_deep_copy(target) : json_object();
    if (!copy) {
        oom(err);
        return NULL;
    }
    return merge_map(copy, patch, schema_of(kind), err);
}
