/* What the API server answers, without sockets: the shapes kubectl reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/routes.h"

static json_t *body_json(const as_response *r)
{
    json_error_t err;
    json_t *j = json_loadb(r->body, r->len, 0, &err);
    if (!j) fail_msg("not JSON (%s): %.*s", err.text, (int)r->len, r->body);
    return j;
}

static void test_version_is_kubernetes_1_32(void **state)
{
    (void)state;
    as_response r;
    as_route(NULL, &(as_request){.method = "GET", .path = "/version"}, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.content_type, "application/json");
    json_t *v = body_json(&r);
    assert_string_equal(json_string_value(json_object_get(v, "major")), "1");
    assert_string_equal(json_string_value(json_object_get(v, "minor")), "32");
    assert_non_null(strstr(json_string_value(json_object_get(v, "gitVersion")), "v1.32."));
    json_decref(v);
    free(r.body);
}

static void test_health_endpoints(void **state)
{
    (void)state;
    const char *paths[] = {"/healthz", "/readyz", "/livez"};
    for (size_t i = 0; i < 3; i++) {
        as_response r;
        as_route(NULL, &(as_request){.method = "GET", .path = paths[i]}, &r);
        assert_int_equal(r.status, 200);
        assert_int_equal(r.len, 2);
        assert_memory_equal(r.body, "ok", 2);
        free(r.body);
    }
}

/* kubectl prints these as "Error from server (NotFound): <message>". */
static void test_unknown_paths_and_methods_are_status_not_found(void **state)
{
    (void)state;
    const char *cases[][2] = {{"GET", "/nope"}, {"DELETE", "/version"}, {"GET", "/versions"}};
    for (size_t i = 0; i < 3; i++) {
        as_response r;
        as_route(NULL, &(as_request){.method = cases[i][0], .path = cases[i][1]}, &r);
        assert_int_equal(r.status, 404);
        json_t *s = body_json(&r);
        assert_string_equal(json_string_value(json_object_get(s, "kind")), "Status");
        assert_string_equal(json_string_value(json_object_get(s, "apiVersion")), "v1");
        assert_string_equal(json_string_value(json_object_get(s, "status")), "Failure");
        assert_string_equal(json_string_value(json_object_get(s, "reason")), "NotFound");
        assert_string_equal(json_string_value(json_object_get(s, "message")),
                            "the server could not find the requested resource");
        assert_int_equal(json_integer_value(json_object_get(s, "code")), 404);
        assert_true(json_is_object(json_object_get(s, "metadata")));
        json_decref(s);
        free(r.body);
    }
}

static json_t *get_json(const char *path, const char *accept, const char **content_type)
{
    as_response r;
    as_route(
        NULL,
        &(as_request){.method = "GET", .path = path, .accept = accept, .host = "127.0.0.1:6443"},
        &r);
    assert_int_equal(r.status, 200);
    if (content_type) *content_type = r.content_type;
    json_t *j = body_json(&r);
    free(r.body);
    return j;
}

static const char kubectl_accept[] =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;"
    "g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

/* The answer to what kubectl 1.32 sends first: two documents for everything. */
static void test_aggregated_discovery(void **state)
{
    (void)state;
    const char *type;
    json_t *core = get_json("/api", kubectl_accept, &type);
    assert_string_equal(type,
                        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
    assert_string_equal(json_string_value(json_object_get(core, "kind")), "APIGroupDiscoveryList");
    json_t *resources = json_object_get(
        json_array_get(
            json_object_get(json_array_get(json_object_get(core, "items"), 0), "versions"), 0),
        "resources");
    bool found_pods = false;
    size_t i;
    json_t *r;
    json_array_foreach(resources, i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "resource")), "pods") != 0) continue;
        found_pods = true;
        assert_string_equal(json_string_value(json_object_get(r, "scope")), "Namespaced");
        assert_string_equal(json_string_value(json_array_get(json_object_get(r, "shortNames"), 0)),
                            "po");
        /* attach, binding, eviction, exec, log, portforward, status */
        json_t *subs = json_object_get(r, "subresources");
        assert_int_equal(json_array_size(subs), 7);
        /* eviction's kind is policy/v1 Eviction (what kubectl drain looks for) */
        json_t *kind = json_object_get(json_array_get(subs, 2), "responseKind");
        assert_string_equal(
            json_string_value(json_object_get(json_array_get(subs, 2), "subresource")), "eviction");
        assert_string_equal(json_string_value(json_object_get(kind, "group")), "policy");
        assert_string_equal(json_string_value(json_object_get(kind, "kind")), "Eviction");
    }
    assert_true(found_pods);
    json_decref(core);
    json_t *groups = get_json("/apis", kubectl_accept, NULL);
    /* apps, node.k8s.io, events.k8s.io, coordination.k8s.io, authorization.k8s.io */
    assert_int_equal(json_array_size(json_object_get(groups, "items")), 5);
    json_decref(groups);
}

/* Plain JSON asks for the legacy documents, one per group version. */
static void test_legacy_discovery(void **state)
{
    (void)state;
    const char *type;
    json_t *versions = get_json("/api", "application/json", &type);
    assert_string_equal(type, "application/json");
    assert_string_equal(json_string_value(json_object_get(versions, "kind")), "APIVersions");
    json_decref(versions);
    json_t *groups = get_json("/apis", "application/json, */*", NULL);
    assert_string_equal(json_string_value(json_object_get(groups, "kind")), "APIGroupList");
    assert_int_equal(json_array_size(json_object_get(groups, "groups")), 5);
    json_decref(groups);
    json_t *v1 = get_json("/api/v1", NULL, NULL);
    assert_string_equal(json_string_value(json_object_get(v1, "groupVersion")), "v1");
    bool binding = false, eviction = false;
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(v1, "resources"), i, r)
    {
        const char *name = json_string_value(json_object_get(r, "name"));
        if (strcmp(name, "pods/eviction") == 0) {
            /* kubectl drain's CheckEvictionSupport reads group and version */
            eviction = true;
            assert_string_equal(json_string_value(json_object_get(r, "group")), "policy");
            assert_string_equal(json_string_value(json_object_get(r, "version")), "v1");
            assert_string_equal(json_string_value(json_object_get(r, "kind")), "Eviction");
        }
        if (strcmp(name, "pods/binding") != 0) continue;
        binding = true;
        assert_string_equal(json_string_value(json_object_get(r, "kind")), "Binding");
        assert_null(json_object_get(r, "group"));
        assert_int_equal(json_array_size(json_object_get(r, "verbs")), 1);
    }
    assert_true(binding);
    assert_true(eviction);
    json_decref(v1);
    json_t *apps = get_json("/apis/apps/v1", NULL, NULL);
    assert_string_equal(json_string_value(json_object_get(apps, "groupVersion")), "apps/v1");
    json_decref(apps);
    as_response resp;
    as_route(NULL, &(as_request){.method = "GET", .path = "/apis/batch/v1"}, &resp);
    assert_int_equal(resp.status, 404);
    free(resp.body);
}

/* A NUL byte in a path (a %00, decoded): never the path cut at it, which
 * would name another object; kube-apiserver's NotFound for the name, quoted
 * as Go quotes it. No store is needed: nothing is looked up. */
static void test_a_nul_in_a_name_is_not_found_never_cut(void **state)
{
    (void)state;
    static const char path[] = "/api/v1/namespaces/default/configmaps/foo\0bar";
    as_response r;
    as_route(NULL, &(as_request){.method = "DELETE", .path = path, .path_len = sizeof path - 1},
             &r);
    assert_int_equal(r.status, 404);
    json_t *s = json_loadb(r.body, r.len, JSON_ALLOW_NUL, NULL); /* the name has one */
    assert_non_null(s);
    assert_string_equal(json_string_value(json_object_get(s, "message")),
                        "configmaps \"foo\\x00bar\" not found");
    assert_string_equal(json_string_value(json_object_get(s, "reason")), "NotFound");
    json_t *name = json_object_get(json_object_get(s, "details"), "name");
    assert_int_equal(json_string_length(name), 7);
    assert_memory_equal(json_string_value(name), "foo\0bar", 7);
    json_decref(s);
    free(r.body);

    static const char status[] = "/apis/apps/v1/namespaces/lab/daemonsets/\0ds/status";
    as_route(NULL, &(as_request){.method = "GET", .path = status, .path_len = sizeof status - 1},
             &r);
    assert_int_equal(r.status, 404);
    s = json_loadb(r.body, r.len, JSON_ALLOW_NUL, NULL);
    assert_non_null(s);
    assert_string_equal(json_string_value(json_object_get(s, "message")),
                        "daemonsets.apps \"\\x00ds\" not found");
    assert_string_equal(json_string_value(json_object_get(json_object_get(s, "details"), "group")),
                        "apps");
    json_decref(s);
    free(r.body);

    static const char collection[] = "/api/v1/namespaces/de\0fault/configmaps";
    as_route(NULL,
             &(as_request){.method = "POST", .path = collection, .path_len = sizeof collection - 1},
             &r);
    assert_int_equal(r.status, 404);
    free(r.body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_is_kubernetes_1_32),
        cmocka_unit_test(test_health_endpoints),
        cmocka_unit_test(test_unknown_paths_and_methods_are_status_not_found),
        cmocka_unit_test(test_aggregated_discovery),
        cmocka_unit_test(test_legacy_discovery),
        cmocka_unit_test(test_a_nul_in_a_name_is_not_found_never_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
