#include "util/json_dump.h"

#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

static int write_value(yajl_gen g, const json_t *v);

/* A scalar in jansson's spelling (reals with its precision and ".0"),
 * handed to yajl verbatim. */
static int write_as_jansson(yajl_gen g, const json_t *v)
{
    char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    if (!text) return -1;
    int rc = yajl_gen_number(g, text, strlen(text)) == yajl_gen_status_ok ? 0 : -1;
    free(text);
    return rc;
}

static int write_object(yajl_gen g, const json_t *v)
{
    if (yajl_gen_map_open(g) != yajl_gen_status_ok) return -1;
    const char *key;
    size_t key_len;
    json_t *member;
    json_object_keylen_foreach((json_t *)v, key, key_len, member)
    {
        if (yajl_gen_string(g, (const unsigned char *)key, key_len) != yajl_gen_status_ok ||
            write_value(g, member) != 0)
            return -1;
    }
    return yajl_gen_map_close(g) == yajl_gen_status_ok ? 0 : -1;
}

static int write_array(yajl_gen g, const json_t *v)
{
    if (yajl_gen_array_open(g) != yajl_gen_status_ok) return -1;
    size_t i;
    json_t *item;
    json_array_foreach(v, i, item)
    {
        if (write_value(g, item) != 0) return -1;
    }
    return yajl_gen_array_close(g) == yajl_gen_status_ok ? 0 : -1;
}

static int write_value(yajl_gen g, const json_t *v)
{
    yajl_gen_status st;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return write_object(g, v);
    case JSON_ARRAY:
        return write_array(g, v);
    case JSON_STRING:
        st = yajl_gen_string(g, (const unsigned char *)json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        st = yajl_gen_integer(g, (long long)json_integer_value(v));
        break;
    case JSON_REAL:
        return write_as_jansson(g, v);
    case JSON_TRUE:
        st = yajl_gen_bool(g, 1);
        break;
    case JSON_FALSE:
        st = yajl_gen_bool(g, 0);
        break;
    default:
        st = yajl_gen_null(g);
        break;
    }
    return st == yajl_gen_status_ok ? 0 : -1;
}

/* json_dumps' answer, with its length. */
static char *dump_with_jansson(const json_t *v, size_t *len)
{
    char *text = json_dumps(v, JSON_COMPACT);
    if (text && len) *len = strlen(text);
    return text;
}

char *gp_json_dump(const json_t *v, size_t *len)
{
    if (len) *len = 0;
    if (!json_is_object(v) && !json_is_array(v)) return NULL;
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g) return NULL;
    char *text = NULL;
    const unsigned char *buf;
    size_t n;
    if (write_value(g, v) == 0 && yajl_gen_get_buf(g, &buf, &n) == yajl_gen_status_ok) {
        text = malloc(n + 1);
        if (text) {
            memcpy(text, buf, n);
            text[n] = '\0';
            if (len) *len = n;
        }
        yajl_gen_free(g);
        return text;
    }
    /* deeper than yajl's limit (or a loop, which json_dumps refuses) */
    yajl_gen_free(g);
    return dump_with_jansson(v, len);
}
