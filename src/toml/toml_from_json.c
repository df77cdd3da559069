/* JSON objects written as TOML documents (toml_json.h): how the simulated
 * nodes' NVIDIA toolkit writes containerd's files after editing them as
 * JSON, as the real toolkit re-serialises them. */
#include <errno.h>
#include <string.h>

#include "toml/toml_json.h"

typedef struct path {
    const char *keys[64];
    size_t n;
} path;

static int fail(const path *at, const char *key, const char *why, gp_error *err)
{
    char where[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < at->n && len < sizeof where; i++)
        len += (size_t)snprintf(where + len, sizeof where - len, "%s.", at->keys[i]);
    gp_error_set(err, NULL, 0, 0, "%s%s: %s", where, key, why);
    return -1;
}

static bool is_table(const json_t *v)
{
    return json_is_object(v);
}

static bool is_table_array(const json_t *v)
{
    if (!json_is_array(v) || json_array_size(v) == 0) return false;
    size_t i;
    const json_t *item;
    json_array_foreach(v, i, item) if (!json_is_object(item)) return false;
    return true;
}

static int emit_scalar(const json_t *v, const path *at, const char *key, FILE *out, gp_error *err);

static int emit_inline(const json_t *v, const path *at, const char *key, FILE *out, gp_error *err)
{
    if (json_is_array(v)) {
        fputc('[', out);
        size_t i;
        const json_t *item;
        json_array_foreach(v, i, item)
        {
            if (i) fputs(", ", out);
            if (emit_inline(item, at, key, out, err) != 0) return -1;
        }
        fputc(']', out);
        return 0;
    }
    if (json_is_object(v)) {
        fputc('{', out);
        const char *k;
        const json_t *item;
        bool first = true;
        json_object_foreach((json_t *)v, k, item)
        {
            fputs(first ? "" : ", ", out);
            first = false;
            toml_emit_key(k, strlen(k), out);
            fputs(" = ", out);
            if (emit_inline(item, at, key, out, err) != 0) return -1;
        }
        fputc('}', out);
        return 0;
    }
    return emit_scalar(v, at, key, out, err);
}

static int emit_scalar(const json_t *v, const path *at, const char *key, FILE *out, gp_error *err)
{
    toml_value tv = {0};
    if (json_is_string(v)) {
        tv.type = TOML_STRING;
        tv.u.s = json_string_value(v);
        tv.len = (uint32_t)json_string_length(v);
    } else if (json_is_integer(v)) {
        tv.type = TOML_INTEGER;
        tv.u.i = json_integer_value(v);
    } else if (json_is_real(v)) {
        tv.type = TOML_FLOAT;
        tv.u.f = json_real_value(v);
    } else if (json_is_boolean(v)) {
        tv.type = TOML_BOOL;
        tv.u.b = json_is_true(v);
    } else {
        return fail(at, key, "null has no TOML form", err);
    }
    return toml_emit_value(&tv, out) == 0 ? 0 : -1;
}

static void emit_header(const path *at, const char *key, bool array, FILE *out)
{
    fputs(array ? "[[" : "[", out);
    for (size_t i = 0; i < at->n; i++) {
        toml_emit_key(at->keys[i], strlen(at->keys[i]), out);
        fputc('.', out);
    }
    toml_emit_key(key, strlen(key), out);
    fputs(array ? "]]\n" : "]\n", out);
}

static int emit_table(const json_t *t, path *at, FILE *out, gp_error *err)
{
    const char *key;
    const json_t *v;
    /* The keys of this table first: a header would take them. */
    json_object_foreach((json_t *)t, key, v)
    {
        if (is_table(v) || is_table_array(v)) continue;
        if (json_is_array(v)) {
            size_t i;
            const json_t *item;
            json_array_foreach(v, i, item) if (json_is_object(item)) return fail(
                at, key, "an array mixing tables and values has no TOML form", err);
        }
        toml_emit_key(key, strlen(key), out);
        fputs(" = ", out);
        if (emit_inline(v, at, key, out, err) != 0) return -1;
        fputc('\n', out);
    }
    json_object_foreach((json_t *)t, key, v)
    {
        if (!is_table(v) && !is_table_array(v)) continue;
        if (at->n == sizeof at->keys / sizeof at->keys[0])
            return fail(at, key, "tables nested too deep", err);
        if (is_table(v)) {
            /* A table holding only tables needs no header of its own. */
            bool plain = false;
            const char *k;
            const json_t *item;
            json_object_foreach((json_t *)v, k, item) plain |=
                !is_table(item) && !is_table_array(item);
            if (plain || json_object_size(v) == 0) emit_header(at, key, false, out);
            at->keys[at->n++] = key;
            int rc = emit_table(v, at, out, err);
            at->n--;
            if (rc != 0) return -1;
        } else {
            size_t i;
            const json_t *item;
            json_array_foreach(v, i, item)
            {
                emit_header(at, key, true, out);
                at->keys[at->n++] = key;
                int rc = emit_table(item, at, out, err);
                at->n--;
                if (rc != 0) return -1;
            }
        }
    }
    return 0;
}

int toml_emit_json(const json_t *table, FILE *out, gp_error *err)
{
    if (!json_is_object(table)) {
        gp_error_set(err, NULL, 0, 0, "a TOML document is a table");
        return -1;
    }
    path at = {.n = 0};
    if (emit_table(table, &at, out, err) != 0) return -1;
    if (ferror(out)) {
        gp_error_set(err, NULL, 0, 0, "cannot write: %s", strerror(errno));
        return -1;
    }
    return 0;
}
