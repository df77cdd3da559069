/* Helpers for the strategies and validators: kinds, Go string quoting, field
 * paths, JSON semantics and quantities. */
#include "apiserver/strategy_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/quantity.h"

as_kind as_kind_of(const char *group, const char *kind)
{
    static const struct {
        const char *group, *kind;
        as_kind k;
    } table[] = {
        {"", "Pod", AS_POD},
        {"", "Node", AS_NODE},
        {"", "Namespace", AS_NAMESPACE},
        {"", "ConfigMap", AS_CONFIGMAP},
        {"apps", "DaemonSet", AS_DAEMONSET},
        {"node.k8s.io", "RuntimeClass", AS_RUNTIMECLASS},
    };
    if (!kind) return AS_OTHER;
    if (!group) group = "";
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].group, group) == 0 && strcmp(table[i].kind, kind) == 0)
            return table[i].k;
    return AS_OTHER;
}

/* ---- Go string quoting ---- */

void as_quote(gp_buf *sb, const char *s)
{
    gp_buf_add_go_quoted(sb, s, strlen(s));
}

/* ---- paths ---- */

const char *as_child(char out[AS_PATH_MAX], const char *parent, const char *child)
{
    if (!parent || !*parent)
        snprintf(out, AS_PATH_MAX, "%s", child);
    else
        snprintf(out, AS_PATH_MAX, "%s.%s", parent, child);
    return out;
}

const char *as_index(char out[AS_PATH_MAX], const char *parent, size_t i)
{
    snprintf(out, AS_PATH_MAX, "%s[%zu]", parent, i);
    return out;
}

const char *as_key(char out[AS_PATH_MAX], const char *parent, const char *key)
{
    snprintf(out, AS_PATH_MAX, "%s[%s]", parent, key);
    return out;
}

/* ---- JSON helpers ---- */

bool as_str_unset(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return !v || json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0);
}

json_t *as_obj(json_t *obj, const char *key)
{
    if (!json_is_object(obj)) return NULL;
    json_t *v = json_object_get(obj, key);
    if (json_is_object(v)) return v;
    v = json_object();
    if (!v || json_object_set_new(obj, key, v) != 0) return NULL;
    return v;
}

bool as_is_empty(const json_t *v)
{
    return !v || json_is_null(v) || (json_is_object(v) && json_object_size(v) == 0) ||
           (json_is_array(v) && json_array_size(v) == 0);
}

/* Go's zero values: what an omitempty member that is absent decodes to. */
static bool zeroish(const json_t *v)
{
    if (as_is_empty(v)) return true;
    if (json_is_false(v)) return true;
    if (json_is_string(v)) return json_string_length(v) == 0;
    if (json_is_number(v)) return json_number_value(v) == 0;
    return false;
}

bool as_sem_equal(const json_t *a, const json_t *b)
{
    if (zeroish(a) && zeroish(b)) return true;
    if (!a || !b) return false;
    if (json_is_number(a) && json_is_number(b)) return json_number_value(a) == json_number_value(b);
    if (json_typeof(a) != json_typeof(b)) return false;
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b)) return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!as_sem_equal(json_array_get(a, i), json_array_get(b, i))) return false;
        return true;
    }
    if (json_is_object(a)) {
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)a, k, v)
        {
            if (!as_sem_equal(v, json_object_get(b, k))) return false;
        }
        json_object_foreach((json_t *)b, k, v)
        {
            if (!json_object_get(a, k) && !zeroish(v)) return false;
        }
        return true;
    }
    return json_equal(a, b);
}

/* ---- quantities ---- */

/* "1.5e-05" -> "0.000015": Go reads what the client wrote, which was almost
 * certainly not exponent notation, and the notation decides the format
 * (DecimalExponent vs DecimalSI). */
static void expand_exponent(const char *in, char *out, size_t size)
{
    const char *e = strpbrk(in, "eE");
    if (!e) {
        snprintf(out, size, "%s", in);
        return;
    }
    char digits[64];
    size_t nd = 0, before = 0;
    bool seen_point = false, neg = false;
    for (const char *c = in; c < e && nd + 1 < sizeof digits; c++) {
        if (*c == '-') {
            neg = true;
        } else if (*c == '.') {
            seen_point = true;
        } else if (*c >= '0' && *c <= '9') {
            digits[nd++] = *c;
            if (!seen_point) before++;
        }
    }
    long pos = (long)before + strtol(e + 1, NULL, 10);
    char buf[512];
    size_t n = 0;
    if (neg) buf[n++] = '-';
    if (pos <= 0) {
        buf[n++] = '0';
        buf[n++] = '.';
        for (long i = 0; i < -pos && n + 1 < sizeof buf; i++)
            buf[n++] = '0';
        for (size_t i = 0; i < nd && n + 1 < sizeof buf; i++)
            buf[n++] = digits[i];
    } else {
        for (long i = 0; i < pos && n + 2 < sizeof buf; i++)
            buf[n++] = (size_t)i < nd ? digits[i] : '0';
        if ((size_t)pos < nd) {
            buf[n++] = '.';
            for (size_t i = (size_t)pos; i < nd && n + 1 < sizeof buf; i++)
                buf[n++] = digits[i];
        }
    }
    buf[n] = '\0';
    snprintf(out, size, "%s", buf);
}

/* The shortest text that reads back as the same double; jansson's own
 * conversions are used because they ignore the locale's decimal point. */
static void real_text(const json_t *v, char *buf, size_t size)
{
    for (int p = 1; p <= 17; p++) {
        char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(p));
        if (!t) break;
        json_t *back = json_loads(t, JSON_DECODE_ANY, NULL);
        bool same = back && json_number_value(back) == json_real_value(v);
        json_decref(back);
        if (same || p == 17) {
            expand_exponent(t, buf, size);
            free(t);
            return;
        }
        free(t);
    }
    snprintf(buf, size, "0");
}

void as_quantity_text(const json_t *v, char *buf, size_t size)
{
    if (size == 0) return;
    buf[0] = '\0';
    if (!v || json_is_null(v)) {
        snprintf(buf, size, "0");
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\v' || *s == '\f')
            s++;
        size_t n = strlen(s);
        while (n > 0 && strchr(" \t\n\r\v\f", s[n - 1]))
            n--;
        snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), s);
    } else if (json_is_integer(v)) {
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    } else if (json_is_real(v)) {
        real_text(v, buf, size);
    } else {
        char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        snprintf(buf, size, "%s", t ? t : "");
        free(t);
    }
}

#define ERR_FORMAT                                                                                 \
    "quantities must match the regular expression "                                                \
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
#define ERR_NUMERIC "unable to parse numeric part of quantity"
#define ERR_SUFFIX  "unable to parse quantity's suffix"

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* quantitySuffixer.interpret */
static bool suffix_known(const char *s)
{
    static const char *const known[] = {"",  "n",  "u",  "m",  "k",  "M",  "G",  "T", "P",
                                        "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", NULL};
    for (size_t i = 0; known[i]; i++)
        if (strcmp(s, known[i]) == 0) return true;
    if ((s[0] != 'e' && s[0] != 'E') || !s[1]) return false;
    const char *d = s + 1;
    if (*d == '+' || *d == '-') d++;
    if (!*d || strlen(d) > 18) return false;
    for (; *d; d++)
        if (!is_digit(*d)) return false;
    return true;
}

/* parseQuantityString, reduced to finding where the suffix starts and whether
 * the text has the right shape at all. NULL on ErrFormatWrong. */
static const char *split_suffix(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-') p++;
    while (is_digit(*p))
        p++;
    if (*p == '.') {
        p++;
        while (is_digit(*p))
            p++;
    }
    const char *suffix = p;
    while (*p && strchr("eEinumkKMGTP", *p))
        p++;
    if (*p == '+' || *p == '-') p++;
    while (is_digit(*p))
        p++;
    return *p ? NULL : suffix;
}

const char *as_quantity_error(const char *text)
{
    if (!*text) return ERR_FORMAT;
    kube_quantity q;
    if (kube_quantity_parse(text, &q, NULL) == 0) return NULL;
    const char *suffix = split_suffix(text);
    if (!suffix) return ERR_FORMAT;
    if (!suffix_known(suffix)) return ERR_SUFFIX;
    return ERR_NUMERIC;
}

static bool canonical_text(const json_t *v, bool round_milli, char out[KUBE_QUANTITY_FORMAT_MAX])
{
    char text[256];
    as_quantity_text(v, text, sizeof text);
    kube_quantity q;
    if (kube_quantity_parse(text, &q, NULL) != 0) return false;
    if (round_milli) kube_quantity_round_up_milli(&q);
    kube_quantity_format(&q, out);
    return true;
}

void as_canonical_member(json_t *obj, const char *member, bool round_milli)
{
    json_t *v = json_object_get(obj, member);
    char out[KUBE_QUANTITY_FORMAT_MAX];
    if (v && canonical_text(v, round_milli, out))
        json_object_set_new(obj, member, json_string(out));
}

void as_canonical_list(json_t *list, bool round_milli)
{
    if (!json_is_object(list)) return;
    const char *k;
    json_t *v;
    json_object_foreach(list, k, v)
    {
        char out[KUBE_QUANTITY_FORMAT_MAX];
        if (canonical_text(v, round_milli, out)) json_object_set_new(list, k, json_string(out));
    }
}

int as_quantity_cmp(const json_t *a, const json_t *b, bool *ok)
{
    char ta[256], tb[256];
    kube_quantity qa, qb;
    as_quantity_text(a, ta, sizeof ta);
    as_quantity_text(b, tb, sizeof tb);
    *ok = kube_quantity_parse(ta, &qa, NULL) == 0 && kube_quantity_parse(tb, &qb, NULL) == 0;
    return *ok ? kube_quantity_cmp(&qa, &qb) : 0;
}
