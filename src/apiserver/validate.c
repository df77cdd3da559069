/* Field errors, value rules and object metadata, worded exactly as
 * k8s.io/apimachinery/pkg/util/validation/field/errors.go (ErrorBody) and
 * .../util/validation/validation.go, v0.32; and the 422 message. */
#include "apiserver/strategy.h"
#include "apiserver/strategy_internal.h"

#include <stdlib.h>
#include <string.h>

#include "apiserver/resources.h"

/* ---- field errors ---- */

static void add_cause(json_t *errs, const char *reason, const char *field, char *message)
{
    if (!message) return;
    json_array_append_new(
        errs, json_pack("{s:s, s:s, s:s}", "reason", reason, "message", message, "field", field));
    free(message);
}

/* "<Type>[: detail]" */
static void add_simple(json_t *errs, const char *reason, const char *type, const char *field,
                       const char *detail)
{
    gp_buf sb = {0};
    gp_buf_add(&sb, type);
    if (detail && *detail) gp_buf_addf(&sb, ": %s", detail);
    add_cause(errs, reason, field, gp_buf_take(&sb));
}

void as_required(json_t *errs, const char *field, const char *detail)
{
    add_simple(errs, "FieldValueRequired", "Required value", field, detail);
}

void as_forbidden(json_t *errs, const char *field, const char *detail)
{
    add_simple(errs, "FieldValueForbidden", "Forbidden", field, detail);
}

void as_too_long(json_t *errs, const char *field, long long max)
{
    char detail[64];
    snprintf(detail, sizeof detail, "may not be more than %lld bytes", max);
    add_simple(errs, "FieldValueTooLong", "Too long", field, detail);
}

void as_invalid_raw(json_t *errs, const char *field, const char *rendered, const char *detail)
{
    gp_buf sb = {0};
    gp_buf_addf(&sb, "Invalid value: %s", rendered);
    if (detail && *detail) gp_buf_addf(&sb, ": %s", detail);
    add_cause(errs, "FieldValueInvalid", field, gp_buf_take(&sb));
}

void as_invalid(json_t *errs, const char *field, const char *value, const char *detail)
{
    gp_buf q = {0};
    as_quote(&q, value);
    char *rendered = gp_buf_take(&q);
    if (rendered) as_invalid_raw(errs, field, rendered, detail);
    free(rendered);
}

void as_invalid_int(json_t *errs, const char *field, long long value, const char *detail)
{
    char rendered[32];
    snprintf(rendered, sizeof rendered, "%lld", value);
    as_invalid_raw(errs, field, rendered, detail);
}

void as_not_supported(json_t *errs, const char *field, const char *value, const char *const *valid)
{
    gp_buf sb = {0};
    gp_buf_add(&sb, "Unsupported value: ");
    as_quote(&sb, value);
    for (size_t i = 0; valid[i]; i++) {
        gp_buf_add(&sb, i == 0 ? ": supported values: " : ", ");
        as_quote(&sb, valid[i]);
    }
    add_cause(errs, "FieldValueNotSupported", field, gp_buf_take(&sb));
}

void as_duplicate(json_t *errs, const char *field, const char *value)
{
    gp_buf sb = {0};
    gp_buf_add(&sb, "Duplicate value: ");
    as_quote(&sb, value);
    add_cause(errs, "FieldValueDuplicate", field, gp_buf_take(&sb));
}

void as_not_found(json_t *errs, const char *field, const char *value)
{
    gp_buf sb = {0};
    gp_buf_add(&sb, "Not found: ");
    as_quote(&sb, value);
    add_cause(errs, "FieldValueNotFound", field, gp_buf_take(&sb));
}

void as_invalid_each(json_t *errs, const char *field, const char *value, char **msgs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        as_invalid(errs, field, value, msgs[i]);
}

/* ---- value rules ---- */

#define DNS1123_LABEL_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define DNS1123_LABEL_MSG                                                                          \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character"
#define DNS1123_SUBDOMAIN_FMT DNS1123_LABEL_FMT "(\\." DNS1123_LABEL_FMT ")*"
#define DNS1123_SUBDOMAIN_MSG                                                                      \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character"
#define QUALIFIED_NAME_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define QUALIFIED_NAME_MSG                                                                         \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character"
#define LABEL_VALUE_FMT "(" QUALIFIED_NAME_FMT ")?"
#define LABEL_VALUE_MSG                                                                            \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character"
#define CONFIG_MAP_KEY_FMT "[-._a-zA-Z0-9]+"
#define CONFIG_MAP_KEY_MSG                                                                         \
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"

/* RegexError: "msg (e.g. 'a',  or 'b', regex used for validation is 'fmt')";
 * the double space after each comma but the last is Go's. */
static char *regex_error(const char *msg, const char *fmt, const char *const *examples)
{
    gp_buf sb = {0};
    gp_buf_add(&sb, msg);
    if (!examples || !examples[0]) {
        gp_buf_addf(&sb, " (regex used for validation is '%s')", fmt);
        return gp_buf_take(&sb);
    }
    gp_buf_add(&sb, " (e.g. ");
    for (size_t i = 0; examples[i]; i++) {
        if (i > 0) gp_buf_add(&sb, " or ");
        gp_buf_addf(&sb, "'%s', ", examples[i]);
    }
    gp_buf_addf(&sb, "regex used for validation is '%s')", fmt);
    return gp_buf_take(&sb);
}

static char *max_len_error(int n)
{
    return gp_format("must be no more than %d characters", n);
}

static char *prefixed(const char *prefix, char *msg)
{
    gp_buf sb = {0};
    gp_buf_add(&sb, prefix);
    gp_buf_add(&sb, msg ? msg : "");
    free(msg);
    return gp_buf_take(&sb);
}

void as_msgs_free(char *msgs[AS_MSGS_MAX], size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(msgs[i]);
}

static bool lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool alnum(char c)
{
    return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

static bool label_span(const char *s, size_t n)
{
    if (n == 0 || !lower_alnum(s[0]) || !lower_alnum(s[n - 1])) return false;
    for (size_t i = 0; i < n; i++)
        if (!lower_alnum(s[i]) && s[i] != '-') return false;
    return true;
}

bool as_is_dns1123_label(const char *v)
{
    return label_span(v, strlen(v));
}

static bool is_subdomain(const char *v)
{
    const char *start = v;
    for (const char *c = v;; c++) {
        if (*c != '.' && *c) continue;
        if (!label_span(start, (size_t)(c - start))) return false;
        if (!*c) return true;
        start = c + 1;
    }
}

size_t as_dns1123_label(const char *v, char *msgs[AS_MSGS_MAX])
{
    static const char *const ex[] = {"my-name", "123-abc", NULL};
    size_t n = 0;
    if (strlen(v) > 63) msgs[n++] = max_len_error(63);
    if (!as_is_dns1123_label(v)) {
        /* a valid subdomain that is no label: the length was checked, so dots */
        msgs[n++] = is_subdomain(v) ? strdup("must not contain dots")
                                    : regex_error(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, ex);
    }
    return n;
}

size_t as_dns1123_subdomain(const char *v, char *msgs[AS_MSGS_MAX])
{
    static const char *const ex[] = {"example.com", NULL};
    size_t n = 0;
    if (strlen(v) > 253) msgs[n++] = max_len_error(253);
    if (!is_subdomain(v)) msgs[n++] = regex_error(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, ex);
    return n;
}

static bool qualified_span(const char *s, size_t n)
{
    if (n == 0 || !alnum(s[0]) || !alnum(s[n - 1])) return false;
    for (size_t i = 0; i < n; i++)
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') return false;
    return true;
}

/* IsQualifiedName (label keys, annotation keys, resource names) */
size_t as_qualified_name(const char *v, char *msgs[AS_MSGS_MAX])
{
    static const char *const ex[] = {"MyName", "my.name", "123-abc", NULL};
    size_t n = 0;
    const char *slash = strchr(v, '/');
    const char *name = v;
    if (slash && strchr(slash + 1, '/')) {
        char *re = regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, ex);
        gp_buf sb = {0};
        gp_buf_addf(&sb,
                    "a qualified name %s with an optional DNS subdomain prefix and '/' (e.g. "
                    "'example.com/MyName')",
                    re ? re : "");
        free(re);
        msgs[n++] = gp_buf_take(&sb);
        return n;
    }
    if (slash) {
        name = slash + 1;
        size_t plen = (size_t)(slash - v);
        char *prefix = strndup(v, plen);
        if (plen == 0) {
            msgs[n++] = strdup("prefix part must be non-empty");
        } else if (prefix) {
            char *sub[AS_MSGS_MAX];
            size_t ns = as_dns1123_subdomain(prefix, sub);
            for (size_t i = 0; i < ns; i++)
                msgs[n++] = prefixed("prefix part ", sub[i]);
        }
        free(prefix);
    }
    size_t len = strlen(name);
    if (len == 0)
        msgs[n++] = strdup("name part must be non-empty");
    else if (len > 63)
        msgs[n++] = prefixed("name part ", max_len_error(63));
    if (!qualified_span(name, len))
        msgs[n++] = prefixed("name part ", regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, ex));
    return n;
}

size_t as_label_value(const char *v, char *msgs[AS_MSGS_MAX])
{
    static const char *const ex[] = {"MyValue", "my_value", "12345", NULL};
    size_t n = 0;
    size_t len = strlen(v);
    if (len > 63) msgs[n++] = max_len_error(63);
    if (len > 0 && !qualified_span(v, len))
        msgs[n++] = regex_error(LABEL_VALUE_MSG, LABEL_VALUE_FMT, ex);
    return n;
}

size_t as_config_map_key(const char *v, char *msgs[AS_MSGS_MAX])
{
    static const char *const ex[] = {"key.name", "KEY_NAME", "key-name", NULL};
    size_t n = 0;
    size_t len = strlen(v);
    if (len > 253) msgs[n++] = max_len_error(253);
    bool ok = len > 0;
    for (size_t i = 0; i < len; i++)
        if (!alnum(v[i]) && v[i] != '-' && v[i] != '.' && v[i] != '_') ok = false;
    if (!ok) msgs[n++] = regex_error(CONFIG_MAP_KEY_MSG, CONFIG_MAP_KEY_FMT, ex);
    if (strcmp(v, ".") == 0)
        msgs[n++] = strdup("must not be '.'");
    else if (strcmp(v, "..") == 0)
        msgs[n++] = strdup("must not be '..'");
    else if (strncmp(v, "..", 2) == 0)
        msgs[n++] = strdup("must not start with '..'");
    return n;
}

/* ---- entry points ---- */

json_t *as_strategy_validate(const char *group, const char *kind, const json_t *obj,
                             const json_t *old)
{
    json_t *errs = json_array();
    if (!errs || !json_is_object(obj)) return errs;
    switch (as_kind_of(group, kind)) {
    case AS_POD:
        as_validate_pod(errs, obj, old);
        break;
    case AS_DAEMONSET:
        as_validate_daemonset(errs, obj, old);
        break;
    case AS_NAMESPACE:
        as_validate_namespace(errs, obj, old);
        break;
    case AS_NODE:
        as_validate_node(errs, obj, old);
        break;
    case AS_CONFIGMAP:
        as_validate_configmap(errs, obj, old);
        break;
    case AS_RUNTIMECLASS:
        as_validate_runtimeclass(errs, obj, old);
        break;
    case AS_OTHER:
        break;
    }
    return errs;
}

json_t *as_strategy_validate_status(const char *group, const char *kind, const json_t *obj,
                                    const json_t *old)
{
    if (as_kind_of(group, kind) != AS_POD || !json_is_object(obj))
        return as_strategy_validate(group, kind, obj, old);
    json_t *errs = json_array();
    if (errs) as_validate_pod_status(errs, obj, old);
    return errs;
}

/* GroupKind.String(): "DaemonSet.apps", "Pod" */
static void qualified_kind(gp_buf *sb, const char *kind)
{
    gp_buf_add(sb, kind);
    if (strchr(kind, '.')) return;
    size_t count = 0;
    const as_resource *rs = as_resources(&count);
    for (size_t i = 0; i < count; i++) {
        if (strcmp(rs[i].kind, kind) != 0) continue;
        if (rs[i].group[0]) gp_buf_addf(sb, ".%s", rs[i].group);
        return;
    }
}

char *as_strategy_invalid_message(const char *kind, const char *name, const json_t *causes)
{
    gp_buf sb = {0};
    qualified_kind(&sb, kind ? kind : "");
    gp_buf_add(&sb, " ");
    as_quote(&sb, name ? name : "");
    gp_buf_add(&sb, " is invalid: ");
    /* ToAggregate drops errors whose "field: body" text was already seen */
    size_t n = json_array_size(causes), shown = 0;
    gp_buf body = {0};
    json_t *seen = json_object();
    for (size_t i = 0; i < n && seen; i++) {
        const json_t *c = json_array_get(causes, i);
        char *text = gp_format("%s: %s", kube_str(c, "field"), kube_str(c, "message"));
        if (!text || json_object_get(seen, text)) {
            free(text);
            continue;
        }
        json_object_set_new(seen, text, json_true());
        if (shown++) gp_buf_add(&body, ", ");
        gp_buf_add(&body, text);
        free(text);
    }
    json_decref(seen);
    char *joined = gp_buf_take(&body);
    if (shown > 1) gp_buf_add(&sb, "[");
    gp_buf_add(&sb, joined ? joined : "");
    if (shown > 1) gp_buf_add(&sb, "]");
    free(joined);
    return gp_buf_take(&sb);
}
