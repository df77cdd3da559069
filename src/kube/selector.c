#include "kube/selector.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/intstr.h"
#include "kube/json.h"

/* Error texts quote the piece at fault; a fuzzer's long noise is cut short. */
#define SHOWN 256

/* ---- label keys and values (apimachinery util/validation) ---- */

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* (([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?: a label value, or a key's
 * name part once it is known not to be empty. */
static bool is_label_name(const char *s, size_t len)
{
    if (len == 0) return true;
    if (!is_alnum(s[0]) || !is_alnum(s[len - 1])) return false;
    for (size_t i = 0; i < len; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') return false;
    return true;
}

static bool is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool kube_is_dns1123_subdomain(const char *s, size_t len)
{
    if (len == 0 || len > 253) return false;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '.') {
            if (!is_lower_alnum(s[i]) && s[i] != '-') return false;
            continue;
        }
        if (i == start || !is_lower_alnum(s[start]) || !is_lower_alnum(s[i - 1])) return false;
        start = i + 1;
    }
    return true;
}

static int validate_prefix(const char *key, size_t len, gp_error *err)
{
    if (len == 0) {
        gp_error_set(err, NULL, 0, 0, "invalid label key '%.*s': prefix part must be non-empty",
                     SHOWN, key);
        return -1;
    }
    if (len > 253) {
        gp_error_set(err, NULL, 0, 0,
                     "invalid label key '%.*s': prefix part must be no more than 253 characters",
                     SHOWN, key);
        return -1;
    }
    if (!kube_is_dns1123_subdomain(key, len)) {
        gp_error_set(err, NULL, 0, 0,
                     "invalid label key '%.*s': prefix part a lowercase RFC 1123 subdomain must "
                     "consist of lower case alphanumeric characters, '-' or '.', and must start "
                     "and end with an alphanumeric character (e.g. 'example.com')",
                     SHOWN, key);
        return -1;
    }
    return 0;
}

int kube_label_validate_key(const char *key, gp_error *err)
{
    const char *slash = strchr(key, '/');
    if (slash && strchr(slash + 1, '/')) {
        gp_error_set(err, NULL, 0, 0,
                     "invalid label key '%.*s': a qualified name must consist of alphanumeric "
                     "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                     "character (e.g. 'MyName', or 'my.name', or '123-abc') with an optional DNS "
                     "subdomain prefix and '/' (e.g. 'example.com/MyName')",
                     SHOWN, key);
        return -1;
    }
    if (slash && validate_prefix(key, (size_t)(slash - key), err) < 0) return -1;
    const char *name = slash ? slash + 1 : key;
    size_t len = strlen(name);
    if (len == 0) {
        gp_error_set(err, NULL, 0, 0, "invalid label key '%.*s': name part must be non-empty",
                     SHOWN, key);
        return -1;
    }
    if (len > 63) {
        gp_error_set(err, NULL, 0, 0,
                     "invalid label key '%.*s': name part must be no more than 63 characters",
                     SHOWN, key);
        return -1;
    }
    if (!is_label_name(name, len)) {
        gp_error_set(err, NULL, 0, 0,
                     "invalid label key '%.*s': name part must consist of alphanumeric "
                     "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                     "character (e.g. 'MyName', or 'my.name', or '123-abc')",
                     SHOWN, key);
        return -1;
    }
    return 0;
}

int kube_label_validate_value(const char *value, gp_error *err)
{
    size_t len = strlen(value);
    if (len > 63) {
        gp_error_set(err, NULL, 0, 0,
                     "invalid label value '%.*s': must be no more than 63 characters", SHOWN,
                     value);
        return -1;
    }
    if (!is_label_name(value, len)) {
        gp_error_set(err, NULL, 0, 0,
                     "invalid label value '%.*s': a valid label must be an empty string or "
                     "consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                     "with an alphanumeric character (e.g. 'MyValue', or 'my_value', or '12345')",
                     SHOWN, value);
        return -1;
    }
    return 0;
}

/* ---- label selector lexer (labels/selector.go Lexer) ---- */

enum tok {
    T_ERROR,
    T_EOS,
    T_IDENT,
    T_NOT,   /* ! */
    T_NE,    /* != */
    T_EQ,    /* = */
    T_DEQ,   /* == */
    T_GT,    /* > */
    T_LT,    /* < */
    T_OPEN,  /* ( */
    T_CLOSE, /* ) */
    T_COMMA,
    T_IN,
    T_NOTIN,
};

struct token {
    enum tok t;
    const char *s;
    size_t len;
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_special(char c)
{
    return c != '\0' && strchr("=!(),><", c) != NULL;
}

static enum tok symbol(const char *p, size_t *len)
{
    *len = 2;
    if (p[0] == '!' && p[1] == '=') return T_NE;
    if (p[0] == '=' && p[1] == '=') return T_DEQ;
    *len = 1;
    switch (p[0]) {
    case '!':
        return T_NOT;
    case '=':
        return T_EQ;
    case '>':
        return T_GT;
    case '<':
        return T_LT;
    case '(':
        return T_OPEN;
    case ')':
        return T_CLOSE;
    default:
        return T_COMMA;
    }
}

/* The token at *p, moving *p past it. In a value position ("values" true)
 * "in" and "notin" are plain identifiers, as in the real parser's Values
 * context: "in in (in)" is a valid selector. */
static struct token lex(const char **p, bool values)
{
    const char *s = *p;
    while (is_space(*s))
        s++;
    struct token t = {T_EOS, s, 0};
    if (*s == '\0') {
        *p = s;
        return t;
    }
    if (is_special(*s)) {
        t.t = symbol(s, &t.len);
    } else {
        while (s[t.len] && !is_space(s[t.len]) && !is_special(s[t.len]))
            t.len++;
        t.t = T_IDENT;
        if (!values && t.len == 2 && memcmp(s, "in", 2) == 0) t.t = T_IN;
        if (!values && t.len == 5 && memcmp(s, "notin", 5) == 0) t.t = T_NOTIN;
    }
    *p = s + t.len;
    return t;
}

static struct token peek(const char *p, bool values)
{
    return lex(&p, values);
}

/* ---- label selector ---- */

enum op { OP_EQ, OP_NE, OP_IN, OP_NOTIN, OP_EXISTS, OP_NOT_EXISTS, OP_GT, OP_LT };

struct requirement {
    char *key;
    enum op op;
    char **values;
    size_t nvalues;
    int64_t number; /* the value of > and < */
};

struct kube_label_selector {
    struct requirement *reqs;
    size_t n;
};

struct lparser {
    const char *p;
    gp_error *err;
    struct requirement req; /* the one being parsed */
};

static void free_requirement(struct requirement *r)
{
    free(r->key);
    for (size_t i = 0; i < r->nvalues; i++)
        free(r->values[i]);
    free(r->values);
    memset(r, 0, sizeof *r);
}

void kube_label_selector_free(kube_label_selector *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++)
        free_requirement(&s->reqs[i]);
    free(s->reqs);
    free(s);
}

static int oom(gp_error *err)
{
    gp_error_set(err, NULL, 0, 0, "out of memory");
    return -1;
}

static int found_error(gp_error *err, struct token t, const char *expected)
{
    gp_error_set(err, NULL, 0, 0, "found '%.*s', expected: %s",
                 (int)(t.len < SHOWN ? t.len : SHOWN), t.s, expected);
    return -1;
}

static int add_value(struct lparser *ps, const char *s, size_t len)
{
    struct requirement *r = &ps->req;
    char **grown = realloc(r->values, (r->nvalues + 1) * sizeof *grown);
    if (!grown) return oom(ps->err);
    r->values = grown;
    r->values[r->nvalues] = strndup(s, len);
    if (!r->values[r->nvalues]) return oom(ps->err);
    r->nvalues++;
    return 0;
}

/* "(a,b)", "()", "(a,)", "(,a)": an empty place is the empty value, as
 * parseValues and parseIdentifiersList read it. */
static int parse_value_list(struct lparser *ps)
{
    struct token t = lex(&ps->p, true);
    if (t.t != T_OPEN) return found_error(ps->err, t, "'('");
    bool want_value = true; /* at the start, or right after a comma */
    for (;;) {
        t = lex(&ps->p, true);
        if (t.t == T_IDENT && want_value) {
            if (add_value(ps, t.s, t.len) < 0) return -1;
            want_value = false;
        } else if (t.t == T_COMMA || t.t == T_CLOSE) {
            if (want_value && add_value(ps, "", 0) < 0) return -1;
            if (t.t == T_CLOSE) return 0;
            want_value = true;
        } else {
            return found_error(ps->err, t, want_value ? "',', ')' or identifier" : "',' or ')'");
        }
    }
}

/* The value after =, ==, !=, > or <; nothing before ',' or the end is "". */
static int parse_exact_value(struct lparser *ps)
{
    struct token t = peek(ps->p, true);
    if (t.t == T_EOS || t.t == T_COMMA) return add_value(ps, "", 0);
    t = lex(&ps->p, true);
    if (t.t != T_IDENT) return found_error(ps->err, t, "identifier");
    return add_value(ps, t.s, t.len);
}

static int parse_operator(struct lparser *ps)
{
    struct token t = lex(&ps->p, false);
    switch (t.t) {
    case T_EQ:
    case T_DEQ:
        ps->req.op = OP_EQ;
        return parse_exact_value(ps);
    case T_NE:
        ps->req.op = OP_NE;
        return parse_exact_value(ps);
    case T_GT:
    case T_LT:
        ps->req.op = t.t == T_GT ? OP_GT : OP_LT;
        return parse_exact_value(ps);
    case T_IN:
    case T_NOTIN:
        ps->req.op = t.t == T_IN ? OP_IN : OP_NOTIN;
        return parse_value_list(ps);
    default:
        return found_error(ps->err, t, "in, notin, =, ==, !=, gt, lt");
    }
}

/* What NewRequirement checks once the pieces are read. */
static int check_requirement(struct lparser *ps)
{
    struct requirement *r = &ps->req;
    if (kube_label_validate_key(r->key, ps->err) < 0) return -1;
    for (size_t i = 0; i < r->nvalues; i++)
        if (kube_label_validate_value(r->values[i], ps->err) < 0) return -1;
    if ((r->op == OP_GT || r->op == OP_LT) && !kube_parse_int64(r->values[0], &r->number)) {
        gp_error_set(ps->err, NULL, 0, 0,
                     "for 'Gt', 'Lt' operators, the value must be an integer, not '%.*s'", SHOWN,
                     r->values[0]);
        return -1;
    }
    return 0;
}

/* "!k", "k", or "k <op> <values>" (parseRequirement). */
static int parse_requirement(struct lparser *ps)
{
    struct token t = lex(&ps->p, true);
    bool negated = t.t == T_NOT;
    if (negated) t = lex(&ps->p, true);
    if (t.t != T_IDENT) return found_error(ps->err, t, "identifier");
    ps->req.key = strndup(t.s, t.len);
    if (!ps->req.key) return oom(ps->err);
    struct token next = peek(ps->p, true);
    if (negated || next.t == T_EOS || next.t == T_COMMA) {
        ps->req.op = negated ? OP_NOT_EXISTS : OP_EXISTS;
        /* "!k=v" is not a thing: the real parser stops at "=" after "!k". */
        return check_requirement(ps);
    }
    if (parse_operator(ps) < 0) return -1;
    return check_requirement(ps);
}

/* The parser's messages for a requirement start with what failed. */
static void wrap_requirement_error(gp_error *err)
{
    if (!err) return;
    char inner[sizeof err->text];
    memcpy(inner, err->text, sizeof inner);
    gp_error_set(err, NULL, 0, 0, "unable to parse requirement: %s", inner);
}

static int append_requirement(kube_label_selector *s, struct lparser *ps)
{
    struct requirement *grown = realloc(s->reqs, (s->n + 1) * sizeof *grown);
    if (!grown) return oom(ps->err);
    s->reqs = grown;
    s->reqs[s->n++] = ps->req;
    memset(&ps->req, 0, sizeof ps->req);
    return 0;
}

static int parse_label_selector(kube_label_selector *s, struct lparser *ps)
{
    for (;;) {
        struct token t = peek(ps->p, true);
        if (t.t == T_EOS) return 0;
        if (t.t != T_IDENT && t.t != T_NOT)
            return found_error(ps->err, t, "!, identifier, or 'end of string'");
        if (parse_requirement(ps) < 0) {
            wrap_requirement_error(ps->err);
            return -1;
        }
        if (append_requirement(s, ps) < 0) return -1;
        t = lex(&ps->p, true);
        if (t.t == T_EOS) return 0;
        if (t.t != T_COMMA) return found_error(ps->err, t, "',' or 'end of string'");
        t = peek(ps->p, true);
        if (t.t != T_IDENT && t.t != T_NOT) return found_error(ps->err, t, "identifier after ','");
    }
}

kube_label_selector *kube_label_selector_parse(const char *text, gp_error *err)
{
    kube_label_selector *s = calloc(1, sizeof *s);
    if (!s) {
        oom(err);
        return NULL;
    }
    struct lparser ps = {.p = text ? text : "", .err = err};
    if (parse_label_selector(s, &ps) < 0) {
        free_requirement(&ps.req);
        kube_label_selector_free(s);
        return NULL;
    }
    return s;
}

static bool has_value(const struct requirement *r, const char *v)
{
    for (size_t i = 0; i < r->nvalues; i++)
        if (strcmp(r->values[i], v) == 0) return true;
    return false;
}

/* Requirement.Matches: a missing label fails the positive operators and
 * passes the negative ones. */
static bool requirement_matches(const struct requirement *r, const json_t *labels)
{
    const json_t *v = json_is_object(labels) ? json_object_get(labels, r->key) : NULL;
    const char *value = json_is_string(v) ? json_string_value(v) : NULL;
    int64_t n = 0;
    switch (r->op) {
    case OP_EQ:
    case OP_IN:
        return value && has_value(r, value);
    case OP_NE:
    case OP_NOTIN:
        return !value || !has_value(r, value);
    case OP_EXISTS:
        return value != NULL;
    case OP_NOT_EXISTS:
        return value == NULL;
    case OP_GT:
        return value && kube_parse_int64(value, &n) && n > r->number;
    case OP_LT:
        return value && kube_parse_int64(value, &n) && n < r->number;
    }
    return false;
}

bool kube_label_selector_matches(const kube_label_selector *s, const json_t *labels)
{
    for (size_t i = 0; i < s->n; i++)
        if (!requirement_matches(&s->reqs[i], labels)) return false;
    return true;
}

bool kube_label_selector_is_empty(const kube_label_selector *s)
{
    return s->n == 0;
}

/* ---- field selector (fields/selector.go) ---- */

struct term {
    char *field;
    char *value;
    bool negated;
};

struct kube_field_selector {
    struct term *terms;
    size_t n;
};

void kube_field_selector_free(kube_field_selector *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->terms[i].field);
        free(s->terms[i].value);
    }
    free(s->terms);
    free(s);
}

/* The end of the term at `s`: the first ',' that no '\' escapes. */
static const char *term_end(const char *s)
{
    bool escaped = false;
    for (; *s; s++) {
        if (escaped)
            escaped = false;
        else if (*s == '\\')
            escaped = true;
        else if (*s == ',')
            break;
    }
    return s;
}

/* The first "!=", "==" or "=" from the left (splitTerm); NULL when none. */
static const char *term_operator(const char *s, size_t len, size_t *oplen)
{
    for (size_t i = 0; i < len; i++) {
        *oplen = 2;
        if (i + 1 < len && (s[i] == '!' || s[i] == '=') && s[i + 1] == '=') return s + i;
        *oplen = 1;
        if (s[i] == '=') return s + i;
    }
    return NULL;
}

/* UnescapeValue: "\\", "\," and "\=" stand for themselves; any other escape,
 * a lone trailing '\', or a bare ',' or '=' is an error. */
static char *unescape_value(const char *s, size_t len, gp_error *err)
{
    char *out = malloc(len + 1);
    if (!out) {
        oom(err);
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '\\') {
            if (i + 1 == len || !strchr("\\,=", s[i + 1])) {
                gp_error_set(err, NULL, 0, 0,
                             "invalid field selector: invalid escape sequence: \\%.1s",
                             i + 1 == len ? "" : s + i + 1);
                free(out);
                return NULL;
            }
            c = s[++i];
        } else if (c == ',' || c == '=') {
            gp_error_set(err, NULL, 0, 0,
                         "invalid field selector: unescaped character in value: %c", c);
            free(out);
            return NULL;
        }
        out[n++] = c;
    }
    out[n] = '\0';
    return out;
}

static bool is_supported(const char *field, const char *const *supported)
{
    if (!supported) return true;
    for (; *supported; supported++)
        if (strcmp(field, *supported) == 0) return true;
    return false;
}

static int parse_term(kube_field_selector *s, const char *whole, const char *t, size_t len,
                      gp_error *err)
{
    size_t oplen = 0;
    const char *op = term_operator(t, len, &oplen);
    if (!op) {
        gp_error_set(err, NULL, 0, 0, "invalid selector: '%.*s'; can't understand '%.*s'", SHOWN,
                     whole, (int)(len < SHOWN ? len : SHOWN), t);
        return -1;
    }
    struct term term = {.negated = op[0] == '!'};
    size_t vlen = len - (size_t)(op - t) - oplen;
    term.value = unescape_value(op + oplen, vlen, err);
    if (!term.value) return -1;
    term.field = strndup(t, (size_t)(op - t));
    if (!term.field) {
        free(term.value);
        return oom(err);
    }
    struct term *grown = realloc(s->terms, (s->n + 1) * sizeof *grown);
    if (!grown) {
        free(term.field);
        free(term.value);
        return oom(err);
    }
    s->terms = grown;
    s->terms[s->n++] = term;
    return 0;
}

kube_field_selector *kube_field_selector_parse(const char *text, const char *const *supported,
                                               gp_error *err)
{
    kube_field_selector *s = calloc(1, sizeof *s);
    if (!s) {
        oom(err);
        return NULL;
    }
    const char *p = text ? text : "";
    while (*p) {
        const char *end = term_end(p);
        /* Empty terms ("a=b,", ",a=b") are skipped, as apimachinery does. */
        if (end > p && parse_term(s, text, p, (size_t)(end - p), err) < 0) {
            kube_field_selector_free(s);
            return NULL;
        }
        p = *end ? end + 1 : end;
    }
    /* Like the API server: the whole text parses before any field is
     * checked against the resource's list. */
    for (size_t i = 0; i < s->n; i++) {
        if (!is_supported(s->terms[i].field, supported)) {
            gp_error_set(err, NULL, 0, 0, "field label not supported: %.*s", SHOWN,
                         s->terms[i].field);
            kube_field_selector_free(s);
            return NULL;
        }
    }
    return s;
}

kube_field_selector *
kube_field_selector_parse_converted(const char *text, const char *const (*labels)[2], gp_error *err)
{
    kube_field_selector *s = kube_field_selector_parse(text, NULL, err);
    if (!s) return NULL;
    for (size_t i = 0; i < s->n; i++) {
        size_t j = 0;
        while (labels[j][0] && strcmp(labels[j][0], s->terms[i].field) != 0)
            j++;
        char *field = labels[j][0] ? strdup(labels[j][1]) : NULL;
        if (!field) {
            if (labels[j][0])
                oom(err);
            else
                gp_error_set(err, NULL, 0, 0, "field label not supported: %.*s", SHOWN,
                             s->terms[i].field);
            kube_field_selector_free(s);
            return NULL;
        }
        free(s->terms[i].field);
        s->terms[i].field = field;
    }
    return s;
}

/* The field's text in `buf` (for numbers and booleans) or in the object. */
static const char *field_string(const json_t *object, const char *path, char buf[32])
{
    const json_t *v = kube_at(object, path);
    if (json_is_string(v)) return json_string_value(v);
    if (json_is_true(v)) return "true";
    if (json_is_false(v)) return "false";
    if (json_is_integer(v)) {
        snprintf(buf, 32, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    }
    return "";
}

size_t kube_field_text(const json_t *object, const char *path, char *buf, size_t size)
{
    char num[32];
    const char *s = field_string(object, path, num);
    size_t len = strlen(s);
    if (size > 0) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(buf, s, n);
        buf[n] = '\0';
    }
    return len;
}

bool kube_field_selector_matches(const kube_field_selector *s, const json_t *object)
{
    for (size_t i = 0; i < s->n; i++) {
        char num[32];
        const char *v = field_string(object, s->terms[i].field, num);
        bool equal = strcmp(v, s->terms[i].value) == 0;
        if (equal == s->terms[i].negated) return false;
    }
    return true;
}

bool kube_field_selector_is_empty(const kube_field_selector *s)
{
    return s->n == 0;
}
