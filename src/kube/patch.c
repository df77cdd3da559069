/* JSON merge patch (RFC 7386) and JSON patch (RFC 6902).
 *
 * Both work on a private deep copy and hand it back, so a caller's document is
 * never half-patched: the API server stores the result only when the whole
 * patch applied, and shares nothing with the request body. */
#include "kube/patch.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON merge patch ------------------------------------------------------ */

/* Merges `patch` into `target`, which the caller hands over (it may be NULL:
 * absent), and returns the result. Working in place on a tree we own keeps the
 * merge linear; copying at every level would copy deep subtrees once per
 * level above them. */
static json_t *merge_owned(json_t *target, const json_t *patch)
{
    if (!json_is_object(patch)) {
        json_decref(target);
        return json_deep_copy(patch);
    }
    if (!json_is_object(target)) {
        /* RFC 7386: a non-object target becomes {} before the members merge. */
        json_decref(target);
        target = json_object();
        if (!target) return NULL;
    }
    const char *key;
    size_t key_len;
    json_t *value;
    /* The foreach macro wants a mutable object; it only reads it. */
    json_object_keylen_foreach((json_t *)patch, key, key_len, value)
    {
        if (json_is_null(value)) {
            json_object_deln(target, key, key_len); /* absent already is fine */
            continue;
        }
        json_t *child = json_object_getn(target, key, key_len);
        json_t *merged = merge_owned(json_incref(child), value);
        /* An existing key keeps its place in jansson's order; a new one goes last. */
        if (!merged || json_object_setn_new(target, key, key_len, merged) != 0) {
            json_decref(target);
            return NULL;
        }
    }
    return target;
}

json_t *kube_merge_patch(const json_t *target, const json_t *patch)
{
    if (!patch) return NULL;
    if (!json_is_object(patch)) return json_deep_copy(patch);
    json_t *copy = NULL;
    if (json_is_object(target)) {
        copy = json_deep_copy(target);
        if (!copy) return NULL;
    }
    return merge_owned(copy, patch);
}

/* ---- JSON pointers (RFC 6901) ---------------------------------------------- */

typedef struct {
    const char *text; /* decoded: ~1 is '/', ~0 is '~'; NUL-terminated */
    size_t len;
    size_t raw_end; /* where this token ends in the pointer as written */
} ptr_token;

typedef struct {
    const char *raw; /* the pointer as written, for messages */
    size_t count;
    ptr_token *tokens;
    char *buf; /* storage for the decoded tokens */
} json_ptr;

/* A length for "%.*s": messages are at most 1 KiB, so clamping loses nothing. */
static int print_len(size_t n)
{
    return n > INT_MAX ? INT_MAX : (int)n;
}

static void ptr_free(json_ptr *p)
{
    free(p->tokens);
    free(p->buf);
    memset(p, 0, sizeof *p);
}

/* Decodes the token starting after the '/' at raw[*pos]; advances *pos to the
 * next '/' or the end. Returns -1 on a '~' not followed by '0' or '1': RFC
 * 6901 leaves no other escape, so "~2" or a trailing '~' is an error, not a
 * literal. */
static int ptr_decode_token(const char *raw, size_t n, size_t *pos, char **out)
{
    size_t i = *pos + 1;
    char *o = *out;
    for (; i < n && raw[i] != '/'; i++) {
        if (raw[i] != '~') {
            *o++ = raw[i];
            continue;
        }
        if (i + 1 >= n || (raw[i + 1] != '0' && raw[i + 1] != '1')) return -1;
        *o++ = raw[i + 1] == '0' ? '~' : '/';
        i++;
    }
    *o++ = '\0';
    *out = o;
    *pos = i;
    return 0;
}

static int ptr_parse(const json_t *s, json_ptr *p, gp_error *why)
{
    memset(p, 0, sizeof *p);
    const char *raw = json_string_value(s);
    size_t n = json_string_length(s);
    p->raw = raw;
    /* A NUL would cut the pointer short everywhere a C string is used. */
    if (memchr(raw, '\0', n)) {
        gp_error_set(why, NULL, 0, 0, "invalid JSON pointer \"%s\": it contains a NUL character",
                     raw);
        return -1;
    }
    if (n == 0) return 0; /* "" is the whole document */
    if (raw[0] != '/') {
        gp_error_set(why, NULL, 0, 0,
                     "invalid JSON pointer \"%s\": it must be empty or start with '/'", raw);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        p->count += raw[i] == '/';
    /* Decoded tokens plus their NULs never need more bytes than the text. */
    p->tokens = calloc(p->count, sizeof *p->tokens);
    p->buf = malloc(n + 1);
    if (!p->tokens || !p->buf) {
        ptr_free(p);
        gp_error_set(why, NULL, 0, 0, "out of memory");
        return -1;
    }
    char *out = p->buf;
    size_t pos = 0;
    for (size_t t = 0; t < p->count; t++) {
        char *start = out;
        if (ptr_decode_token(raw, n, &pos, &out) != 0) {
            gp_error_set(why, NULL, 0, 0,
                         "invalid JSON pointer \"%s\": '~' must be followed by '0' or '1'", raw);
            ptr_free(p);
            return -1;
        }
        p->tokens[t] = (ptr_token){start, (size_t)(out - start) - 1, pos};
    }
    return 0;
}

/* The pointer up to and including token i, as written (i == 0: ""). */
static size_t ptr_prefix_len(const json_ptr *p, size_t tokens)
{
    return tokens == 0 ? 0 : p->tokens[tokens - 1].raw_end;
}

/* RFC 6901 array index: "0", or digits without a leading zero. "01", "1e0",
 * "-1" and " 1" name no element. */
static bool parse_index(const ptr_token *t, size_t *out)
{
    if (t->len == 0 || (t->len > 1 && t->text[0] == '0')) return false;
    size_t v = 0;
    for (size_t i = 0; i < t->len; i++) {
        unsigned char c = (unsigned char)t->text[i];
        if (c < '0' || c > '9') return false;
        if (v > (SIZE_MAX - (c - '0')) / 10) return false;
        v = v * 10 + (c - '0');
    }
    *out = v;
    return true;
}

/* The element token i names in `array`. `insert` is true for `add`, which may
 * name the slot after the last element (the size, or "-"). */
static int array_index(const json_t *array, const json_ptr *p, size_t i, bool insert, size_t *out,
                       gp_error *why)
{
    const ptr_token *t = &p->tokens[i];
    int at = print_len(t->raw_end);
    size_t size = json_array_size(array);
    if (t->len == 1 && t->text[0] == '-') {
        if (insert) {
            *out = size;
            return 0;
        }
        gp_error_set(why, NULL, 0, 0,
                     "\"%.*s\": '-' names no element, only the slot after the last", at, p->raw);
        return -1;
    }
    size_t index;
    if (!parse_index(t, &index)) {
        gp_error_set(why, NULL, 0, 0, "\"%.*s\": \"%s\" is not an array index", at, p->raw,
                     t->text);
        return -1;
    }
    if (index > size || (index == size && !insert)) {
        gp_error_set(why, NULL, 0, 0,
                     "\"%.*s\": index %zu is out of bounds (the array has %zu elements)", at,
                     p->raw, index, size);
        return -1;
    }
    *out = index;
    return 0;
}

static void not_container(const json_ptr *p, size_t tokens, gp_error *why)
{
    gp_error_set(why, NULL, 0, 0, "\"%.*s\" is neither an object nor an array",
                 print_len(ptr_prefix_len(p, tokens)), p->raw);
}

/* The member or element token i names in `parent`, or NULL with `why` set. */
static json_t *ptr_step(json_t *parent, const json_ptr *p, size_t i, gp_error *why)
{
    const ptr_token *t = &p->tokens[i];
    if (json_is_object(parent)) {
        json_t *child = json_object_getn(parent, t->text, t->len);
        if (!child)
            gp_error_set(why, NULL, 0, 0, "\"%.*s\" does not exist", print_len(t->raw_end), p->raw);
        return child;
    }
    if (json_is_array(parent)) {
        size_t index;
        if (array_index(parent, p, i, false, &index, why) != 0) return NULL;
        return json_array_get(parent, index);
    }
    not_container(p, i, why);
    return NULL;
}

/* The value the first `depth` tokens lead to, or NULL with `why` set. */
static json_t *ptr_resolve(json_t *root, const json_ptr *p, size_t depth, gp_error *why)
{
    json_t *v = root;
    for (size_t i = 0; i < depth && v; i++)
        v = ptr_step(v, p, i, why);
    return v;
}

/* ---- JSON patch operations (RFC 6902 section 4) ----------------------------- */

/* Each operation works on *root, which it may replace (path ""). Values it is
 * given are handed over: stored, or released on failure. */

static int op_add(json_t **root, const json_ptr *p, json_t *value, gp_error *why)
{
    if (p->count == 0) {
        json_decref(*root);
        *root = value;
        return 0;
    }
    size_t last = p->count - 1;
    json_t *parent = ptr_resolve(*root, p, last, why);
    int rc = -1;
    size_t index;
    if (!parent) {
        /* why is set */
    } else if (json_is_object(parent)) {
        /* add on an existing member replaces it (RFC 6902 4.1), in place. */
        const ptr_token *t = &p->tokens[last];
        rc = json_object_setn_new(parent, t->text, t->len, value);
        value = NULL; /* taken even on failure */
        if (rc != 0) gp_error_set(why, NULL, 0, 0, "out of memory");
    } else if (json_is_array(parent)) {
        if (array_index(parent, p, last, true, &index, why) == 0) {
            rc = json_array_insert_new(parent, index, value);
            value = NULL;
            if (rc != 0) gp_error_set(why, NULL, 0, 0, "out of memory");
        }
    } else {
        not_container(p, last, why);
    }
    json_decref(value);
    return rc;
}

static int op_remove(json_t **root, const json_ptr *p, gp_error *why)
{
    if (p->count == 0) {
        gp_error_set(why, NULL, 0, 0, "cannot remove the whole document");
        return -1;
    }
    size_t last = p->count - 1;
    json_t *parent = ptr_resolve(*root, p, last, why);
    if (!parent) return -1;
    if (json_is_array(parent)) {
        size_t index;
        if (array_index(parent, p, last, false, &index, why) != 0) return -1;
        return json_array_remove(parent, index);
    }
    if (!ptr_step(parent, p, last, why)) return -1; /* a missing member is an error */
    return json_object_deln(parent, p->tokens[last].text, p->tokens[last].len);
}

static int op_replace(json_t **root, const json_ptr *p, json_t *value, gp_error *why)
{
    if (p->count == 0) {
        json_decref(*root);
        *root = value;
        return 0;
    }
    size_t last = p->count - 1;
    json_t *parent = ptr_resolve(*root, p, last, why);
    /* Unlike add, the target must exist: checking it first also rules out
     * "-" and index == size. */
    if (!parent || !ptr_step(parent, p, last, why)) {
        json_decref(value);
        return -1;
    }
    const ptr_token *t = &p->tokens[last];
    int rc;
    if (json_is_object(parent)) {
        rc = json_object_setn_new(parent, t->text, t->len, value);
    } else {
        size_t index = 0;
        parse_index(t, &index); /* ptr_step accepted it */
        rc = json_array_set_new(parent, index, value);
    }
    if (rc != 0) gp_error_set(why, NULL, 0, 0, "out of memory");
    return rc;
}

/* `from` is a proper prefix of `path`, token by token: moving a value into
 * its own child would have to put it inside itself. Pointer text is canonical
 * (only ~0 and ~1 escape), so comparing the text is comparing tokens. */
static bool ptr_is_proper_prefix(const json_ptr *from, const json_ptr *path)
{
    size_t n = strlen(from->raw);
    return strlen(path->raw) > n && strncmp(path->raw, from->raw, n) == 0 && path->raw[n] == '/';
}

/* `value` is what `from` points to, already resolved. */
static int op_move(json_t **root, const json_ptr *from, json_t *value, const json_ptr *path,
                   gp_error *why)
{
    if (strcmp(from->raw, path->raw) == 0) return 0; /* RFC 6902 4.4: a no-op */
    if (ptr_is_proper_prefix(from, path)) {
        gp_error_set(why, NULL, 0, 0, "cannot move \"%s\" into its own child \"%s\"", from->raw,
                     path->raw);
        return -1;
    }
    /* Remove, then add: an array index in `path` counts after the removal,
     * as RFC 6902 A.7 shows. */
    json_incref(value);
    if (op_remove(root, from, why) != 0) {
        json_decref(value);
        return -1;
    }
    return op_add(root, path, value, why);
}

static int op_copy(json_t **root, const json_t *value, const json_ptr *path, gp_error *why)
{
    json_t *copy = json_deep_copy(value);
    if (!copy) {
        gp_error_set(why, NULL, 0, 0, "out of memory");
        return -1;
    }
    return op_add(root, path, copy, why);
}

/* An integer and a real are equal when the real is exactly that integer. The
 * range check comes first: converting an out-of-range double to an integer
 * is undefined, and converting the integer to double instead could round
 * 2^53 + 1 to 2^53 and call them equal. */
static bool real_equals_integer(double d, json_int_t n)
{
    if (!(d >= -0x1p63 && d < 0x1p63)) return false;
    json_int_t whole = (json_int_t)d;
    return (double)whole == d && whole == n;
}

static bool numbers_equal(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b))
        return json_integer_value(a) == json_integer_value(b);
    if (json_is_real(a) && json_is_real(b)) return json_real_value(a) == json_real_value(b);
    if (json_is_integer(a)) return real_equals_integer(json_real_value(b), json_integer_value(a));
    return real_equals_integer(json_real_value(a), json_integer_value(b));
}

static bool values_equal(const json_t *a, const json_t *b);

static bool objects_equal(const json_t *a, const json_t *b)
{
    if (json_object_size(a) != json_object_size(b)) return false;
    const char *key;
    size_t key_len;
    json_t *value;
    json_object_keylen_foreach((json_t *)a, key, key_len, value)
    {
        const json_t *other = json_object_getn(b, key, key_len);
        if (!other || !values_equal(value, other)) return false;
    }
    return true;
}

static bool arrays_equal(const json_t *a, const json_t *b)
{
    size_t n = json_array_size(a);
    if (n != json_array_size(b)) return false;
    for (size_t i = 0; i < n; i++)
        if (!values_equal(json_array_get(a, i), json_array_get(b, i))) return false;
    return true;
}

/* RFC 6902 4.6: equal types and values, members in any order, numbers by
 * value. json_equal() would call 1 and 1.0 different. */
static bool values_equal(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b)) return numbers_equal(a, b);
    if (json_typeof(a) != json_typeof(b)) return false;
    switch (json_typeof(a)) {
    case JSON_OBJECT:
        return objects_equal(a, b);
    case JSON_ARRAY:
        return arrays_equal(a, b);
    case JSON_STRING:
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
    default: /* true, false, null: the type is the value */
        return true;
    }
}

static int op_test(json_t **root, const json_ptr *p, const json_t *expected, gp_error *why)
{
    json_t *actual = ptr_resolve(*root, p, p->count, why);
    if (!actual) return -1;
    if (values_equal(actual, expected)) return 0;
    gp_error_set(why, NULL, 0, 0, "test failed: the value differs");
    return -1;
}

/* ---- decoding one operation -------------------------------------------------- */

typedef enum { OP_ADD, OP_REMOVE, OP_REPLACE, OP_MOVE, OP_COPY, OP_TEST, OP_UNKNOWN } op_kind;

static const char *const op_names[] = {"add", "remove", "replace", "move", "copy", "test"};

/* By length too: a string with a NUL inside must not pass for "add". */
static op_kind op_kind_of(const json_t *name)
{
    size_t len = json_string_length(name);
    for (int k = OP_ADD; k < OP_UNKNOWN; k++)
        if (len == strlen(op_names[k]) && memcmp(json_string_value(name), op_names[k], len) == 0)
            return (op_kind)k;
    return OP_UNKNOWN;
}

/* A copy of the operation's "value"; absent is an error, null is a value. */
static json_t *op_value(const json_t *op, gp_error *why)
{
    const json_t *value = json_object_get(op, "value");
    if (!value) {
        gp_error_set(why, NULL, 0, 0, "\"value\" is missing");
        return NULL;
    }
    /* A copy: the result must share nothing with the request. */
    json_t *copy = json_deep_copy(value);
    if (!copy) gp_error_set(why, NULL, 0, 0, "out of memory");
    return copy;
}

static int parse_member_pointer(const json_t *op, const char *member, json_ptr *p, gp_error *why)
{
    const json_t *s = json_object_get(op, member);
    if (!json_is_string(s)) {
        gp_error_set(why, NULL, 0, 0, "\"%s\" is missing or not a string", member);
        return -1;
    }
    return ptr_parse(s, p, why);
}

static int apply_with_value(json_t **root, op_kind kind, const json_t *op, const json_ptr *path,
                            gp_error *why)
{
    if (kind == OP_TEST) {
        const json_t *expected = json_object_get(op, "value");
        if (!expected) {
            gp_error_set(why, NULL, 0, 0, "\"value\" is missing");
            return -1;
        }
        return op_test(root, path, expected, why);
    }
    json_t *value = op_value(op, why);
    if (!value) return -1;
    return kind == OP_ADD ? op_add(root, path, value, why) : op_replace(root, path, value, why);
}

static int apply_with_from(json_t **root, op_kind kind, const json_t *op, const json_ptr *path,
                           gp_error *why)
{
    json_ptr from;
    if (parse_member_pointer(op, "from", &from, why) != 0) return -1;
    gp_error inner = {0};
    json_t *value = ptr_resolve(*root, &from, from.count, &inner);
    int rc = -1;
    if (!value) /* name the pointer: the caller's message shows only "path" */
        gp_error_set(why, NULL, 0, 0, "from \"%s\": %s", from.raw, inner.text);
    else if (kind == OP_MOVE)
        rc = op_move(root, &from, value, path, why);
    else
        rc = op_copy(root, value, path, why);
    ptr_free(&from);
    return rc;
}

static int apply_one(json_t **root, const json_t *op, gp_error *why)
{
    if (!json_is_object(op)) {
        gp_error_set(why, NULL, 0, 0, "the operation is not a JSON object");
        return -1;
    }
    const json_t *name = json_object_get(op, "op");
    if (!json_is_string(name)) {
        gp_error_set(why, NULL, 0, 0, "\"op\" is missing or not a string");
        return -1;
    }
    op_kind kind = op_kind_of(name);
    if (kind == OP_UNKNOWN) {
        gp_error_set(why, NULL, 0, 0,
                     "unknown op (expected add, remove, replace, move, copy or test)");
        return -1;
    }
    json_ptr path;
    if (parse_member_pointer(op, "path", &path, why) != 0) return -1;
    int rc;
    switch (kind) {
    case OP_REMOVE:
        rc = op_remove(root, &path, why);
        break;
    case OP_MOVE:
    case OP_COPY:
        rc = apply_with_from(root, kind, op, &path, why);
        break;
    default:
        rc = apply_with_value(root, kind, op, &path, why);
        break;
    }
    ptr_free(&path);
    return rc;
}

/* The op and path as the operation wrote them, for the message; "" when they
 * are missing or not strings. */
static const char *member_text(const json_t *op, const char *member)
{
    const char *s = json_string_value(json_object_get(op, member));
    return s ? s : "";
}

json_t *kube_json_patch(const json_t *doc, const json_t *ops, gp_error *err)
{
    if (!doc) {
        gp_error_set(err, NULL, 0, 0, "JSON patch: no document to patch");
        return NULL;
    }
    if (!json_is_array(ops)) {
        gp_error_set(err, NULL, 0, 0, "JSON patch: the patch is not an array of operations");
        return NULL;
    }
    json_t *root = json_deep_copy(doc);
    if (!root) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < json_array_size(ops); i++) {
        const json_t *op = json_array_get(ops, i);
        gp_error why = {0};
        if (apply_one(&root, op, &why) != 0) {
            gp_error_set(err, NULL, 0, 0, "JSON patch operation %zu (op \"%s\", path \"%s\"): %s",
                         i, member_text(op, "op"), member_text(op, "path"), why.text);
            json_decref(root);
            return NULL;
        }
    }
    return root;
}
