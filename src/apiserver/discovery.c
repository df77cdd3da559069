#include "apiserver/discovery_internal.h"

#include <stdio.h>
#include <string.h>

#include "apiserver/resources.h"

static json_t *string_array(const char *const *items)
{
    json_t *a = json_array();
    for (size_t i = 0; items && items[i]; i++)
        json_array_append_new(a, json_string(items[i]));
    return a;
}

static json_t *response_kind(const as_resource *r, const char *kind)
{
    return json_pack("{s:s, s:s, s:s}", "group", r->group, "version", r->version, "kind", kind);
}

/* A subresource's kind, in its own group when it has one. */
static json_t *subresource_kind(const as_resource *r, const as_subresource *s)
{
    if (!s->group) return response_kind(r, s->kind);
    return json_pack("{s:s, s:s, s:s}", "group", s->group, "version", s->version, "kind", s->kind);
}

static json_t *aggregated_resource(const as_resource *r)
{
    json_t *res =
        json_pack("{s:s, s:o, s:s, s:s, s:o}", "resource", r->resource, "responseKind",
                  response_kind(r, r->kind), "scope", r->namespaced ? "Namespaced" : "Cluster",
                  "singularResource", r->singular, "verbs", string_array(r->verbs));
    if (r->short_names[0]) json_object_set_new(res, "shortNames", string_array(r->short_names));
    if (r->categories[0]) json_object_set_new(res, "categories", string_array(r->categories));
    json_t *subs = json_array();
    for (const as_subresource *s = r->subresources; s->name; s++)
        json_array_append_new(subs,
                              json_pack("{s:s, s:o, s:o}", "subresource", s->name, "responseKind",
                                        subresource_kind(r, s), "verbs", string_array(s->verbs)));
    if (json_array_size(subs))
        json_object_set_new(res, "subresources", subs);
    else
        json_decref(subs);
    return res;
}

/* The groups in table order, each once. */
static size_t group_names(const char **names, size_t cap)
{
    size_t count, n = 0;
    const as_resource *all = as_resources(&count);
    for (size_t i = 0; i < count; i++) {
        if (!*all[i].group) continue;
        bool seen = false;
        for (size_t j = 0; j < n; j++)
            seen |= strcmp(names[j], all[i].group) == 0;
        if (!seen && n < cap) names[n++] = all[i].group;
    }
    return n;
}

static json_t *group_versions_aggregated(const char *group)
{
    size_t count;
    const as_resource *all = as_resources(&count);
    json_t *resources = json_array();
    for (size_t i = 0; i < count; i++)
        if (strcmp(all[i].group, group) == 0)
            json_array_append_new(resources, aggregated_resource(&all[i]));
    return json_pack("[{s:s, s:s, s:o}]", "version", "v1", "freshness", "Current", "resources",
                     resources);
}

json_t *as_discovery_aggregated(bool core)
{
    json_t *items = json_array();
    if (core) {
        json_array_append_new(
            items, json_pack("{s:{}, s:o}", "metadata", "versions", group_versions_aggregated("")));
    } else {
        const char *groups[16];
        size_t n = group_names(groups, 16);
        for (size_t i = 0; i < n; i++)
            json_array_append_new(items,
                                  json_pack("{s:{s:s}, s:o}", "metadata", "name", groups[i],
                                            "versions", group_versions_aggregated(groups[i])));
    }
    return json_pack("{s:s, s:s, s:{}, s:o}", "kind", "APIGroupDiscoveryList", "apiVersion",
                     "apidiscovery.k8s.io/v2", "metadata", "items", items);
}

json_t *as_discovery_api_versions(const char *server_address)
{
    return json_pack("{s:s, s:[s], s:[{s:s, s:s}]}", "kind", "APIVersions", "versions", "v1",
                     "serverAddressByClientCIDRs", "clientCIDR", "0.0.0.0/0", "serverAddress",
                     server_address);
}

json_t *as_discovery_group_list(void)
{
    const char *groups[16];
    size_t n = group_names(groups, 16);
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        char gv[128];
        snprintf(gv, sizeof gv, "%s/v1", groups[i]);
        json_array_append_new(list,
                              json_pack("{s:s, s:[{s:s, s:s}], s:{s:s, s:s}}", "name", groups[i],
                                        "versions", "groupVersion", gv, "version", "v1",
                                        "preferredVersion", "groupVersion", gv, "version", "v1"));
    }
    return json_pack("{s:s, s:s, s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups", list);
}

/* One entry of /api/v1 or /apis/G/V, in APIResource's member order; a
 * subresource whose kind is in another group names it (group, version). */
static json_t *legacy_resource(const as_resource *r, const char *name, const char *kind,
                               const char *const *verbs, const as_subresource *sub)
{
    json_t *res = json_pack("{s:s, s:s, s:b}", "name", name, "singularName",
                            strchr(name, '/') ? "" : r->singular, "namespaced", r->namespaced);
    if (sub && sub->group) {
        json_object_set_new(res, "group", json_string(sub->group));
        json_object_set_new(res, "version", json_string(sub->version));
    }
    json_object_set_new(res, "kind", json_string(kind));
    json_object_set_new(res, "verbs", string_array(verbs));
    if (!strchr(name, '/') && r->short_names[0])
        json_object_set_new(res, "shortNames", string_array(r->short_names));
    if (!strchr(name, '/') && r->categories[0])
        json_object_set_new(res, "categories", string_array(r->categories));
    return res;
}

json_t *as_discovery_resource_list(const char *group, const char *version)
{
    size_t count;
    const as_resource *all = as_resources(&count);
    json_t *resources = json_array();
    for (size_t i = 0; i < count; i++) {
        const as_resource *r = &all[i];
        if (strcmp(r->group, group) != 0 || strcmp(r->version, version) != 0) continue;
        json_array_append_new(resources, legacy_resource(r, r->resource, r->kind, r->verbs, NULL));
        for (const as_subresource *s = r->subresources; s->name; s++) {
            char name[128];
            snprintf(name, sizeof name, "%s/%s", r->resource, s->name);
            json_array_append_new(resources, legacy_resource(r, name, s->kind, s->verbs, s));
        }
    }
    if (json_array_size(resources) == 0) {
        json_decref(resources);
        return NULL;
    }
    char gv[128];
    snprintf(gv, sizeof gv, "%s%s%s", group, *group ? "/" : "", version);
    return json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList", "apiVersion", "v1",
                     "groupVersion", gv, "resources", resources);
}
