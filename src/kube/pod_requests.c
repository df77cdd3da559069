#include "kube/pod_requests.h"

#include <stdlib.h>
#include <string.h>

#include "kube/json.h"
#include "kube/pod.h"

static int oom(gp_error *err)
{
    gp_error_set(err, NULL, 0, 0, "out of memory");
    return -1;
}

/* ---- resource lists ---- */

void kube_resource_list_free(kube_resource_list *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

kube_resource *kube_resource_list_find(const kube_resource_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0) return &l->v[i];
    return NULL;
}

static int append(kube_resource_list *l, const char *name, const kube_quantity *q, gp_error *err)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        kube_resource *v = realloc(l->v, cap * sizeof *v);
        if (!v) return oom(err);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].name = name;
    l->v[l->n].q = *q;
    l->n++;
    return 0;
}

/* addResourceList for one entry. */
int kube_resource_list_add(kube_resource_list *l, const char *name, const kube_quantity *q,
                           gp_error *err)
{
    kube_resource *e = kube_resource_list_find(l, name);
    if (!e) return append(l, name, q, err);
    return kube_quantity_add(&e->q, q, &e->q, err);
}

/* maxResourceList for one entry. */
static int list_max(kube_resource_list *l, const char *name, const kube_quantity *q, gp_error *err)
{
    kube_resource *e = kube_resource_list_find(l, name);
    if (!e) return append(l, name, q, err);
    if (kube_quantity_cmp(q, &e->q) > 0) e->q = *q;
    return 0;
}

static int add_all(kube_resource_list *dst, const kube_resource_list *src, gp_error *err)
{
    for (size_t i = 0; i < src->n; i++)
        if (kube_resource_list_add(dst, src->v[i].name, &src->v[i].q, err) < 0) return -1;
    return 0;
}

static int max_all(kube_resource_list *dst, const kube_resource_list *src, gp_error *err)
{
    for (size_t i = 0; i < src->n; i++)
        if (list_max(dst, src->v[i].name, &src->v[i].q, err) < 0) return -1;
    return 0;
}

int kube_quantity_from_json(const json_t *v, kube_quantity *q, gp_error *err)
{
    if (json_is_string(v)) return kube_quantity_parse(json_string_value(v), q, err);
    char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    if (!text) return oom(err);
    int rc = kube_quantity_parse(text, q, err);
    free(text);
    return rc;
}

int kube_resource_list_read(const json_t *list, kube_resource_list *l, gp_error *err)
{
    const char *name;
    json_t *v;
    /* The foreach macro wants a mutable object; it only reads it. */
    json_object_foreach((json_t *)(json_is_object(list) ? list : NULL), name, v)
    {
        kube_quantity q;
        if (kube_quantity_from_json(v, &q, err) < 0 || kube_resource_list_add(l, name, &q, err) < 0)
            return -1;
    }
    return 0;
}

/* ---- PodRequests ---- */

/* One container's requests, with a limit standing in for a missing request
 * (see the header) and, with `nm`, applyNonMissing's cpu and memory. */
static int container_requests(const json_t *c, const kube_non_missing *nm, kube_resource_list *l,
                              gp_error *err)
{
    const json_t *resources = kube_obj(c, "resources");
    if (kube_resource_list_read(kube_get(resources, "requests"), l, err) < 0) return -1;
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)kube_obj(resources, "limits"), name, v)
    {
        kube_quantity q;
        if (kube_resource_list_find(l, name)) continue;
        if (kube_quantity_from_json(v, &q, err) < 0 || append(l, name, &q, err) < 0) return -1;
    }
    if (!nm) return 0;
    if (!kube_resource_list_find(l, "cpu") && append(l, "cpu", &nm->cpu, err) < 0) return -1;
    if (!kube_resource_list_find(l, "memory") && append(l, "memory", &nm->memory, err) < 0)
        return -1;
    return 0;
}

/* The init containers' floor (AggregateContainerRequests): init container
 * i needs its own requests plus every sidecar started before it; sidecars
 * also run beside the regular containers, so they add to `reqs`. */
static int init_floor(const json_t *inits, const kube_non_missing *nm, kube_resource_list *reqs,
                      kube_resource_list *floor, gp_error *err)
{
    kube_resource_list sidecars = {0}, one = {0};
    int rc = 0;
    size_t i;
    const json_t *c;
    json_array_foreach(inits, i, c)
    {
        one.n = 0;
        rc = container_requests(c, nm, &one, err);
        if (rc == 0 && kube_container_is_sidecar(c)) {
            rc = add_all(reqs, &one, err);
            if (rc == 0) rc = add_all(&sidecars, &one, err);
            if (rc == 0) rc = max_all(floor, &sidecars, err);
        } else if (rc == 0) {
            rc = add_all(&one, &sidecars, err);
            if (rc == 0) rc = max_all(floor, &one, err);
        }
        if (rc < 0) break;
    }
    kube_resource_list_free(&sidecars);
    kube_resource_list_free(&one);
    return rc;
}

int kube_pod_requests(const json_t *pod, const kube_non_missing *nm, kube_resource_list *reqs,
                      gp_error *err)
{
    const json_t *spec = kube_obj(pod, "spec");
    kube_resource_list one = {0}, floor = {0};
    int rc = 0;
    size_t i;
    const json_t *c;
    json_array_foreach(kube_arr(spec, "containers"), i, c)
    {
        one.n = 0;
        rc = container_requests(c, nm, &one, err);
        if (rc == 0) rc = add_all(reqs, &one, err);
        if (rc < 0) break;
    }
    if (rc == 0) rc = init_floor(kube_arr(spec, "initContainers"), nm, reqs, &floor, err);
    if (rc == 0) rc = max_all(reqs, &floor, err);
    if (rc == 0) rc = kube_resource_list_read(kube_get(spec, "overhead"), reqs, err);
    kube_resource_list_free(&one);
    kube_resource_list_free(&floor);
    return rc;
}

int kube_pod_requests_of(const json_t *pod, const char *const *names, size_t n, kube_quantity *out,
                         gp_error *err)
{
    kube_resource_list reqs = {0};
    int rc = kube_pod_requests(pod, NULL, &reqs, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const kube_resource *e = kube_resource_list_find(&reqs, names[i]);
        out[i] = e ? e->q : (kube_quantity){0};
    }
    kube_resource_list_free(&reqs);
    return rc;
}
