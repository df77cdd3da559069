/* What the API server answers, without sockets: the shapes kubectl reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/routes.h"

static json_t *body_json(const gc_response *r)
{
    json_error_t err;
    json_t *j = json_loadb(r->body, r->len, 0, &err);
    if (!j) fail_msg("not JSON (%s): %.*s", err.text, (int)r->len, r->body);
    return j;
}

static void test_version_is_kubernetes_1_32(void **state)
{
    (void)state;
    gc_response r;
    gc_route("GET", "/version", &r);
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
        gc_response r;
        gc_route("GET", paths[i], &r);
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
        gc_response r;
        gc_route(cases[i][0], cases[i][1], &r);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_is_kubernetes_1_32),
        cmocka_unit_test(test_health_endpoints),
        cmocka_unit_test(test_unknown_paths_and_methods_are_status_not_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
