/* gp_json_dump: every text the same bytes as json_dumps(v, JSON_COMPACT),
 * which is what the store wrote before and what stored objects are parsed
 * back from (kc_object_parse_dumped). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/json_dump.h"

static void assert_same_as_jansson(const json_t *v)
{
    char *want = json_dumps(v, JSON_COMPACT);
    size_t len = 0;
    char *got = gp_json_dump(v, &len);
    assert_non_null(want);
    assert_non_null(got);
    if (strcmp(got, want) != 0) print_error("json_dumps:\n%s\ngp_json_dump:\n%s\n", want, got);
    assert_string_equal(got, want);
    assert_int_equal(len, strlen(want));
    free(want);
    free(got);
}

/* Every byte a string can hold, one string a byte and all in one. */
static void test_strings_escaped_as_jansson(void **state)
{
    (void)state;
    json_t *obj = json_object();
    char all[256];
    for (int c = 0; c < 256; c++) {
        all[c] = (char)(c < 128 ? c : 'x'); /* jansson strings are UTF-8 */
        char one = (char)c;
        char key[8];
        snprintf(key, sizeof key, "k%d", c);
        if (c < 128) json_object_set_new(obj, key, json_stringn(&one, 1));
    }
    json_object_set_new(obj, "all", json_stringn(all, sizeof all));
    json_object_set_new(obj, "utf8",
                        json_string("\xea\xb0\x80 \xe3\x81\x82 \xf0\x9f\x98\x80 \xe2\x80\xa8"));
    json_object_set_new(obj, "slash</script>", json_string("a/b\\c\"d"));
    json_object_set_new(obj, "with\nnewline key", json_string(""));
    assert_same_as_jansson(obj);
    json_decref(obj);
}

static void test_numbers_and_constants(void **state)
{
    (void)state;
    json_t *arr = json_pack("[I,I,I,i,f,f,f,f,f,f,b,b,n,{},[],[{}],{s:[]}]", (json_int_t)INT64_MAX,
                            (json_int_t)INT64_MIN, (json_int_t)0, -1, 0.1, 1e300, -0.0, 1.0,
                            3.141592653589793, 1e-7, 1, 0, "e");
    assert_non_null(arr);
    assert_same_as_jansson(arr);
    json_decref(arr);
}

/* Deeper than yajl writes: json_dumps' text all the same. */
static void test_deep_nesting(void **state)
{
    (void)state;
    json_t *root = json_array(), *cur = root;
    for (int i = 0; i < 300; i++) {
        json_t *next = i % 2 ? json_array() : json_object();
        if (json_is_array(cur))
            json_array_append_new(cur, next);
        else
            json_object_set_new(cur, "d", next);
        cur = next;
    }
    assert_same_as_jansson(root);
    json_decref(root);
}

/* A value that holds itself: no text, as json_dumps. */
static void test_reference_loop(void **state)
{
    (void)state;
    json_t *a = json_array(), *b = json_object();
    assert_int_equal(json_array_append(a, b), 0);
    assert_int_equal(json_object_set(b, "a", a), 0);
    assert_null(gp_json_dump(a, NULL));
    assert_null(json_dumps(a, JSON_COMPACT));
    json_object_clear(b);
    json_decref(b);
    json_decref(a);
    json_t *s = json_string("x");
    assert_null(gp_json_dump(s, NULL)); /* objects and arrays only */
    json_decref(s);
}

static size_t compared;

/* Every JSON document under dir (the test data, toml-test's answers). */
static void compare_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            compare_tree(path);
            continue;
        }
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
        json_t *v = json_load_file(path, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        if (json_is_object(v) || json_is_array(v)) {
            assert_same_as_jansson(v);
            compared++;
        }
        json_decref(v);
    }
    closedir(d);
}

static void test_corpus(void **state)
{
    (void)state;
    compared = 0;
    compare_tree(TEST_DATA_DIR);
    compare_tree(TOML_TEST_DIR);
    print_message("compared %zu documents\n", compared);
    assert_true(compared > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings_escaped_as_jansson),
        cmocka_unit_test(test_numbers_and_constants),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_reference_loop),
        cmocka_unit_test(test_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
