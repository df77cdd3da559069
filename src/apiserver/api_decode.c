/* A write's request read as kube-apiserver's handlers read it
 * (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go,
 * update.go, patch.go): its options from the query, its body decoded by
 * type with fieldValidation (decode.h), and the patched object of a patch
 * checked as the patcher checks it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/api_internal.h"
#include "apiserver/decode.h"
#include "apiserver/strategy_internal.h"
#include "client/list_stream.h"
#include "kube/protobuf.h"
#include "util/buf.h"
#include "util/yaml_json.h"

bool as_type_is(const char *content_type, const char *want)
{
    size_t n = strlen(want);
    return content_type && strncmp(content_type, want, n) == 0 &&
           (content_type[n] == '\0' || content_type[n] == ';');
}

static const char unsupported_media[] =
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json, application/yaml, application/vnd.kubernetes.protobuf";

/* The 422 of an option that is not one of its values (ValidateCreateOptions
 * and its kin): `CreateOptions.meta.k8s.io "" is invalid: fieldValidation:
 * Unsupported value: "x": supported values: ...`. */
static void options_invalid(as_response *resp, const char *options_kind, const char *field,
                            const char *rendered, const char *supported)
{
    char body[600], msg[900];
    snprintf(body, sizeof body, "Unsupported value: %s: supported values: %s", rendered, supported);
    snprintf(msg, sizeof msg, "%s.meta.k8s.io \"\" is invalid: %s: %s", options_kind, field, body);
    json_t *details =
        json_pack("{s:s, s:s, s:[{s:s, s:s, s:s}]}", "group", "meta.k8s.io", "kind", options_kind,
                  "causes", "reason", "FieldValueNotSupported", "message", body, "field", field);
    as_status_details(resp, 422, "Invalid", msg, details);
}

static void quoted(const char *s, char *out, size_t size)
{
    gp_buf b = {0};
    as_quote(&b, s);
    char *q = gp_buf_take(&b);
    snprintf(out, size, "%s", q ? q : "\"\"");
    free(q);
}

int as_write_options_read(const as_request *req, const char *options_kind, as_write_options *o,
                          as_response *resp)
{
    memset(o, 0, sizeof *o);
    char rendered[300];
    /* fieldValidation(): absent means Warn */
    const char *fv = as_query(req, "fieldValidation");
    if (!fv || !*fv || strcmp(fv, "Warn") == 0) {
        o->validation = AS_FV_WARN;
    } else if (strcmp(fv, "Strict") == 0) {
        o->validation = AS_FV_STRICT;
    } else if (strcmp(fv, "Ignore") == 0) {
        o->validation = AS_FV_IGNORE;
    } else {
        quoted(fv, rendered, sizeof rendered);
        options_invalid(resp, options_kind, "fieldValidation", rendered,
                        "\"\", \"Ignore\", \"Strict\", \"Warn\"");
        return -1;
    }
    /* isDryRun: the parameter given at all; ValidateDryRun: only All */
    const char *dry = as_query(req, "dryRun");
    if (dry) {
        if (strcmp(dry, "All") != 0) {
            char q[256];
            quoted(dry, q, sizeof q);
            snprintf(rendered, sizeof rendered, "[]string{%s}", q);
            options_invalid(resp, options_kind, "dryRun", rendered, "\"All\"");
            return -1;
        }
        o->dry_run = true;
    }
    return 0;
}

/* apiVersion and kind must be this resource's (or absent, then filled in),
 * and lead the object, as the real server prints it. */
int as_check_type(json_t *obj, const as_resource *r, as_response *resp)
{
    char want[96], msg[400];
    as_api_version(r, want, sizeof want);
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *k = json_string_value(json_object_get(obj, "kind"));
    if (av && *av && strcmp(av, want) != 0) {
        snprintf(msg, sizeof msg,
                 "the API version in the data (%s) does not match the expected API version (%s)",
                 av, want);
        as_error_bad_request(resp, msg);
        return -1;
    }
    if (k && *k && strcmp(k, r->kind) != 0) {
        snprintf(msg, sizeof msg, "the kind in the data (%s) does not match the expected kind (%s)",
                 k, r->kind);
        as_error_bad_request(resp, msg);
        return -1;
    }
    json_t *copy = json_copy(obj);
    json_object_clear(obj);
    json_object_set_new(obj, "apiVersion", json_string(want));
    json_object_set_new(obj, "kind", json_string(r->kind));
    json_object_update(obj, copy);
    json_object_set_new(obj, "apiVersion", json_string(want));
    json_object_set_new(obj, "kind", json_string(r->kind));
    json_decref(copy);
    return 0;
}

/* The Go package of a group's internal types, which every version of a
 * kind is converted to (events.k8s.io's Event is core's). */
static const char *internal_package(const char *group, const char *kind)
{
    if (strcmp(group, "events.k8s.io") == 0 && strcmp(kind, "Event") == 0) return "core";
    if (!*group) return "core";
    size_t n = strcspn(group, ".");
    if (strcmp(group, "node.k8s.io") == 0 || strcmp(group, "coordination.k8s.io") == 0 ||
        strcmp(group, "authorization.k8s.io") == 0 || n == strlen(group))
        return group;
    return NULL;
}

/* Whether kube's scheme has this kind in this group at v1, as far as the
 * served resources tell (and the Binding a pod's binding takes). */
static bool kind_known(const char *group, const char *kind)
{
    if (!*group && strcmp(kind, "Binding") == 0) return true;
    size_t n;
    const as_resource *all = as_resources(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i].group, group) == 0 && strcmp(all[i].kind, kind) == 0 &&
            strcmp(all[i].version, "v1") == 0)
            return true;
    return false;
}

/* A body whose apiVersion or kind is not the URL's, as the handlers'
 * decoder answers it (apimachinery runtime/serializer/json/json.go Decode,
 * runtime.UseOrCreateObject, the codec's conversion to the internal type,
 * then handlers/rest.go transformDecodeError): a kind the scheme does not
 * know for that version is `no kind "K" is registered for version "A" in
 * scheme "pkg/api/legacyscheme/scheme.go:30"`, a known kind of another
 * internal type fails the conversion (`converting (v1.Pod) to
 * (core.Binding): unknown conversion`, conversion/converter.go), and the
 * same internal type in another version passes to create.go's `the API
 * version in the data (A) does not match the expected API version (V)`.
 * The kinds known here are the served ones (kind_known). 0 when the
 * body is of r's type. */
static int check_body_type(const json_t *obj, const as_resource *r, as_response *resp)
{
    char want[96];
    as_api_version(r, want, sizeof want);
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *k = json_string_value(json_object_get(obj, "kind"));
    if (!av || !*av) av = want;
    if (!k || !*k) k = r->kind;
    if (strcmp(av, want) == 0 && strcmp(k, r->kind) == 0) return 0;
    const char *slash = strchr(av, '/');
    char group[96];
    snprintf(group, sizeof group, "%.*s", slash ? (int)(slash - av) : 0, av);
    const char *version = slash ? slash + 1 : av;
    bool known = strcmp(version, "v1") == 0 && kind_known(group, k);
    const char *from_pkg = known ? internal_package(group, k) : NULL;
    const char *to_pkg = internal_package(r->group, r->kind);
    char *why;
    if (!known || !from_pkg || !to_pkg)
        why = gp_format("no kind \"%s\" is registered for version \"%s\" in scheme "
                        "\"pkg/api/legacyscheme/scheme.go:30\"",
                        k, av);
    else if (strcmp(from_pkg, to_pkg) != 0 || strcmp(k, r->kind) != 0)
        why = gp_format("converting (%s.%s) to (%s.%s): unknown conversion", version, k, to_pkg,
                        r->kind);
    else
        why = NULL;
    char *msg = why ? gp_format("%s in version \"%s\" cannot be handled as a %s: %s", k, version,
                                r->kind, why)
                    : gp_format("the API version in the data (%s) does not match the expected "
                                "API version (%s)",
                                av, want);
    as_error_bad_request(resp, msg ? msg : "out of memory");
    free(msg);
    free(why);
    return -1;
}

json_t *as_parse_json(const char *text, size_t len, bool *duplicates, json_error_t *jerr)
{
    /* most bodies: the same object, built with fewer allocations */
    json_t *v = kc_object_parse_exact(text, len, duplicates);
    if (v) return v;
    *duplicates = false;
    v = json_loadb(text, len, JSON_REJECT_DUPLICATES, jerr);
    if (v || !strstr(jerr->text, "duplicate")) return v;
    /* encoding/json keeps the last of two equal keys, and so does jansson */
    *duplicates = true;
    return json_loadb(text, len, 0, jerr);
}

/* A YAML body as kube-apiserver 1.32 reads it (k8s.io/apimachinery
 * pkg/runtime/serializer/json/json.go, Decode and unmarshal): through
 * sigs.k8s.io/yaml's YAMLToJSON, then, under strict or warn field
 * validation, once more through YAMLToJSONStrict, whose error (go-yaml v2's
 * `yaml: unmarshal errors:` with a line per key given twice, v1.4.0 adds no
 * prefix) comes first among the strict errors. YAMLToJSON's JSON comes from
 * a Go map, whose keys json.Marshal sorts: the unknown fields are met in
 * that order. *yaml_dups receives the go-yaml lines (NULL under Ignore). */
static json_t *parse_yaml_body(const as_request *req, bool strict, json_t **yaml_dups,
                               as_response *resp)
{
    json_t *docs = NULL;
    gp_error err = {0};
    int rc = strict
                 ? gp_yaml_to_json_strict(req->body, req->body_len, "body", &docs, yaml_dups, &err)
                 : gp_yaml_to_json(req->body, req->body_len, "body", &docs, NULL, &err);
    if (rc != 0) {
        as_error_bad_request(resp, err.text);
        return NULL;
    }
    char *sorted =
        json_dumps(json_array_get(docs, 0), JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    json_decref(docs);
    json_t *obj = sorted ? json_loads(sorted, JSON_DECODE_ANY, NULL) : NULL;
    free(sorted);
    if (!obj) as_status(resp, 500, "InternalError", "out of memory");
    return obj;
}

/* The body as JSON. *duplicates: a JSON body has keys given twice (for the
 * scan of its text); *yaml_dups: what go-yaml said of a YAML body's. */
static json_t *parse_body(const as_request *req, bool strict, bool *duplicates, json_t **yaml_dups,
                          as_response *resp)
{
    *duplicates = false;
    *yaml_dups = NULL;
    if (!req->body || req->body_len == 0) {
        as_error_bad_request(resp, "the request body is empty");
        return NULL;
    }
    gp_error err = {0};
    if (as_type_is(req->content_type, "application/vnd.kubernetes.protobuf")) {
        json_t *obj = kube_protobuf_decode(req->body, req->body_len, &err);
        if (!obj) as_error_bad_request(resp, err.text);
        return obj;
    }
    json_t *obj = NULL;
    if (as_type_is(req->content_type, "application/yaml")) {
        obj = parse_yaml_body(req, strict, yaml_dups, resp);
        if (!obj) return NULL;
    } else if (req->content_type && !as_type_is(req->content_type, "application/json")) {
        as_status(resp, 415, "UnsupportedMediaType", unsupported_media);
        return NULL;
    } else {
        json_error_t jerr;
        obj = as_parse_json(req->body, req->body_len, duplicates, &jerr);
        if (!obj) {
            char msg[400];
            snprintf(msg, sizeof msg, "the request body is not valid JSON: line %d, column %d: %s",
                     jerr.line, jerr.column, jerr.text);
            as_error_bad_request(resp, msg);
            return NULL;
        }
    }
    if (!json_is_object(obj)) {
        json_decref(obj);
        json_decref(*yaml_dups);
        *yaml_dups = NULL;
        as_error_bad_request(resp, "the request body is not a JSON object");
        return NULL;
    }
    return obj;
}

/* go-yaml's complaints as kube-apiserver passes them on: one strict error
 * `yaml: unmarshal errors:\n  line 4: key "a" already set in map\n  ...`
 * first under Strict; under Warn one warning a line, first
 * (handlers/rest.go, addStrictDecodingWarnings and parseYAMLWarnings). */
static void add_yaml_strict(const json_t *yaml_dups, as_field_validation fv, json_t *strict,
                            json_t *warnings)
{
    if (json_array_size(yaml_dups) == 0) return;
    if (fv != AS_FV_STRICT) {
        json_array_extend(warnings, (json_t *)yaml_dups);
        return;
    }
    gp_buf b = {0};
    gp_buf_add(&b, "yaml: unmarshal errors:");
    size_t i;
    const json_t *line;
    json_array_foreach((json_t *)yaml_dups, i, line)
    {
        gp_buf_addf(&b, "\n  %s", json_string_value(line));
    }
    char *text = gp_buf_take(&b);
    if (text) json_array_insert_new(strict, 0, json_string(text));
    free(text);
}

/* The strict errors as the options say: Strict refuses (-1, *error set),
 * Warn keeps them as warnings, Ignore never collected them. */
static int settle_strict(json_t *strict, as_field_validation fv, json_t *warnings)
{
    if (json_array_size(strict) == 0) return 0;
    if (fv == AS_FV_STRICT) return -1;
    json_array_extend(warnings, strict);
    return 0;
}

json_t *as_decode_request(const as_request *req, const as_resource *r, as_field_validation fv,
                          json_t *warnings, as_response *resp)
{
    bool duplicates;
    json_t *yaml_dups;
    json_t *obj = parse_body(req, fv != AS_FV_IGNORE, &duplicates, &yaml_dups, resp);
    if (!obj) return NULL;
    if (check_body_type(obj, r, resp) != 0 || as_check_type(obj, r, resp) != 0) {
        json_decref(yaml_dups);
        json_decref(obj);
        return NULL;
    }
    const as_gotype *t = as_gotype_find(r->group, r->kind);
    if (!t) {
        json_decref(yaml_dups);
        return obj;
    }
    /* a protobuf body has no names to be unknown */
    bool protobuf = as_type_is(req->content_type, "application/vnd.kubernetes.protobuf");
    as_decode_result res;
    as_decode_check(obj, t, AS_DECODE_JSON, fv != AS_FV_IGNORE && !protobuf, &res);
    if (!res.error && duplicates && fv != AS_FV_IGNORE)
        as_decode_duplicates(req->body, req->body_len, t, res.strict);
    if (!res.error) add_yaml_strict(yaml_dups, fv, res.strict, warnings);
    json_decref(yaml_dups);
    char *why = res.error;
    char *strict_msg = NULL;
    if (!why && settle_strict(res.strict, fv, warnings) != 0)
        why = strict_msg = as_decode_strict_message(res.strict);
    if (!why && res.unknown) as_decode_prune(obj, t);
    if (why) {
        char *msg = gp_format("%s in version \"%s\" cannot be handled as a %s: %s", r->kind,
                              r->version, r->kind, why);
        as_error_bad_request(resp, msg ? msg : why);
        free(msg);
        json_decref(obj);
        obj = NULL;
    }
    free(strict_msg);
    as_decode_result_clear(&res);
    return obj;
}

/* The patcher's 422: ` "" is invalid: patch: Invalid value: "VALUE": WHY`
 * (errors.NewInvalid with no kind and no name). */
static void patch_invalid(as_response *resp, const char *value, const char *why)
{
    gp_buf b = {0};
    gp_buf_add(&b, "Invalid value: ");
    as_quote(&b, value);
    gp_buf_addf(&b, ": %s", why);
    char *body = gp_buf_take(&b);
    char *msg = body ? gp_format(" \"\" is invalid: patch: %s", body) : NULL;
    if (!body || !msg) {
        free(body);
        as_status(resp, 500, "InternalError", "out of memory");
        return;
    }
    json_t *details = json_pack("{s:[{s:s, s:s, s:s}]}", "causes", "reason", "FieldValueInvalid",
                                "message", body, "field", "patch");
    as_status_details(resp, 422, "Invalid", msg, details);
    free(body);
    free(msg);
}

int as_decode_patched(const as_resource *r, as_patch_type type, const json_t *patch,
                      json_t *patch_strict, json_t *patched, as_field_validation fv,
                      json_t *warnings, as_response *resp)
{
    const as_gotype *t = as_gotype_find(r->group, r->kind);
    if (!t) return 0;
    /* a strategic merge patch becomes the object through the unstructured
     * converter, the others through the JSON decoder */
    as_decoder decoder = type == AS_PATCH_STRATEGIC ? AS_DECODE_UNSTRUCTURED : AS_DECODE_JSON;
    as_decode_result res;
    as_decode_check(patched, t, decoder, fv != AS_FV_IGNORE, &res);
    json_t *strict = json_array();
    if (patch_strict) json_array_extend(strict, patch_strict);
    json_array_extend(strict, res.strict);
    char *why = res.error, *strict_msg = NULL;
    if (!why && settle_strict(strict, fv, warnings) != 0)
        why = strict_msg = as_decode_strict_message(strict);
    int rc = 0;
    if (!why && res.unknown) as_decode_prune((json_t *)patched, t);
    if (why) {
        /* what the error shows: the patch as Go prints the map it decoded,
         * or the patched object's JSON */
        char *value = type == AS_PATCH_STRATEGIC
                          ? as_decode_go_value(patch)
                          : json_dumps(patched, JSON_COMPACT | JSON_SORT_KEYS);
        patch_invalid(resp, value ? value : "", why);
        free(value);
        rc = -1;
    }
    free(strict_msg);
    json_decref(strict);
    as_decode_result_clear(&res);
    return rc;
}

json_t *as_decode_patch_strict(const char *text, size_t len, as_patch_type type, bool duplicates)
{
    json_t *strict = json_array();
    if (!duplicates || !strict) return strict;
    /* sigs.k8s.io/json decodes the patch into map[string]interface{} (a
     * JSON patch into []jsonPatchOp): only the top level is checked */
    as_decode_duplicates(text, len, as_gotype_find("", "patch"), strict);
    if (type == AS_PATCH_JSON) {
        size_t i;
        json_t *v;
        json_array_foreach(strict, i, v)
        {
            char *m = gp_format("json patch %s", json_string_value(v));
            if (m) json_array_set_new(strict, i, json_string(m));
            free(m);
        }
    }
    return strict;
}

void as_attach_warnings(as_response *resp, const json_t *warnings)
{
    if (json_array_size(warnings) == 0) return;
    gp_buf b = {0};
    size_t i;
    const json_t *v;
    json_array_foreach((json_t *)warnings, i, v)
    {
        if (i) gp_buf_addc(&b, '\n');
        gp_buf_add(&b, json_string_value(v));
    }
    free(resp->warnings);
    resp->warnings = gp_buf_take(&b);
}
