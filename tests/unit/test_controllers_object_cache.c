/* The controllers' object cache: a version parsed in one listing is found
 * in the next; one a listing neither finds nor puts is forgotten, and its
 * blob and object released. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controllers/object_cache_internal.h"

static void found_in_the_next_listing_forgotten_after_one_without(void **state)
{
    (void)state;
    ctl_object_cache *c = ctl_ocache_new();
    assert_non_null(c);
    as_blob *b1 = as_blob_new("{\"a\":1}", 7), *b2 = as_blob_new("{\"b\":2}", 7);
    json_t *o1 = json_pack("{s:i}", "a", 1), *o2 = json_pack("{s:i}", "b", 2);

    assert_int_equal(ctl_ocache_begin(c, 2), 0);
    assert_null(ctl_ocache_find(c, b1, NULL)); /* nothing yet */
    ctl_ocache_put(c, as_blob_ref(b1), json_incref(o1), strdup("aux of b1"));
    ctl_ocache_put(c, as_blob_ref(b2), json_incref(o2), NULL);
    ctl_ocache_end(c);
    assert_int_equal(b1->refs, 2);
    assert_int_equal(o2->refcount, 2);

    /* the next listing has b1 only */
    assert_int_equal(ctl_ocache_begin(c, 1), 0);
    void *aux = NULL;
    assert_ptr_equal(ctl_ocache_find(c, b1, &aux), o1);
    assert_string_equal(aux, "aux of b1");
    assert_ptr_equal(ctl_ocache_find(c, b1, NULL), o1); /* twice in one listing */
    ctl_ocache_end(c);
    assert_int_equal(b2->refs, 1); /* forgotten: released */
    assert_int_equal(o2->refcount, 1);

    assert_int_equal(ctl_ocache_begin(c, 2), 0);
    assert_null(ctl_ocache_find(c, b2, NULL));
    assert_ptr_equal(ctl_ocache_find(c, b1, NULL), o1);
    ctl_ocache_end(c);
    assert_int_equal(b1->refs, 2);

    ctl_ocache_free(c);
    assert_int_equal(b1->refs, 1);
    assert_int_equal(o1->refcount, 1);
    as_blob_unref(b1);
    as_blob_unref(b2);
    json_decref(o1);
    json_decref(o2);
}

/* Many versions, as a pass at scale lists them: every one found again. */
static void thousands_of_versions_are_all_found(void **state)
{
    (void)state;
    enum { N = 5000 };
    ctl_object_cache *c = ctl_ocache_new();
    as_blob **b = calloc(N, sizeof *b);
    assert_int_equal(ctl_ocache_begin(c, N), 0);
    for (int i = 0; i < N; i++) {
        b[i] = as_blob_new("{}", 2);
        ctl_ocache_put(c, as_blob_ref(b[i]), json_integer(i), NULL);
    }
    ctl_ocache_end(c);
    assert_int_equal(ctl_ocache_begin(c, N), 0);
    for (int i = 0; i < N; i++)
        assert_int_equal(json_integer_value(ctl_ocache_find(c, b[i], NULL)), i);
    ctl_ocache_end(c);
    ctl_ocache_free(c);
    for (int i = 0; i < N; i++) {
        assert_int_equal(b[i]->refs, 1);
        as_blob_unref(b[i]);
    }
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(found_in_the_next_listing_forgotten_after_one_without),
        cmocka_unit_test(thousands_of_versions_are_all_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
