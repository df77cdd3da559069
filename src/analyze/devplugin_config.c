/* The device plugin's config, decoded in the order the plugin's
 * UnmarshalJSON methods decode it (api/config/v1/replicas.go): the first
 * error the plugin would hit is the one reported. */
#include "analyze/devplugin_config.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/json.h"
#include "kube/selector.h"
#include "util/yaml_json.h"

#define PREFIX       "nvidia.com"
#define MAX_NAME     63
#define SHOWN        200
#define LOG_PREFIX   "error starting plugins: unable to load config: unable to finalize config: "
#define LOG_PARSE    LOG_PREFIX "unable to parse config file: error parsing config file: "
#define LOG_JSON     LOG_PARSE "unmarshal error: error unmarshaling JSON: while decoding JSON: "
#define LOG_VALIDATE "error starting plugins: unable to validate flags: "

typedef struct ctx {
    const char *name;
    const json_t *pos; /* positions of the document */
    json_t *warnings;
    gp_error *err;
    const char *log_prefix; /* what the plugin logs before the message */
} ctx;

/* ---- messages ---- */

static void locate(const ctx *c, const char *ptr, unsigned *line, unsigned *col)
{
    gp_yaml_position(c->pos, ptr, line, col);
}

#define WARN(c, ptr, ...)                                                                          \
    do {                                                                                           \
        gp_error w_;                                                                               \
        unsigned l_, c_;                                                                           \
        locate((c), (ptr), &l_, &c_);                                                              \
        gp_error_set(&w_, (c)->name, l_, c_, __VA_ARGS__);                                         \
        json_array_append_new((c)->warnings, json_string(w_.text));                                \
    } while (0)

#define FAIL(c, ptr, ...)                                                                          \
    do {                                                                                           \
        unsigned l_, c_;                                                                           \
        locate((c), (ptr), &l_, &c_);                                                              \
        gp_error_set((c)->err, (c)->name, l_, c_, __VA_ARGS__);                                    \
        return -1;                                                                                 \
    } while (0)

/* A JSON pointer one level down; pointers here are short, and a cut one
 * still locates the nearest ancestor. */
static void child(char *out, size_t size, const char *ptr, const char *seg)
{
    if (snprintf(out, size, "%s/%s", ptr, seg) >= (int)size) out[size - 1] = '\0';
}

static void child_index(char *out, size_t size, const char *ptr, size_t i)
{
    if (snprintf(out, size, "%s/%zu", ptr, i) >= (int)size) out[size - 1] = '\0';
}

/* The shortest text that reads back as d, as Go's encoder writes floats. */
static void number_text(double d, char buf[40])
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, 40, "%.*g", prec, d);
        if (strtod(buf, NULL) == d) return;
    }
}

/* ---- name rules (resources.go NewResourceName) ---- */

int an_dp_resource_name(const char *name, char *out, size_t size, gp_error *err)
{
    char full[512];
    if (strncmp(name, PREFIX "/", strlen(PREFIX "/")) == 0)
        snprintf(full, sizeof full, "%s", name);
    else
        snprintf(full, sizeof full, "%s/%.400s", PREFIX, name);
    if (strlen(full) > MAX_NAME) {
        gp_error_set(err, NULL, 0, 0,
                     "fully-qualified resource name must be %d characters or less: %.*s", MAX_NAME,
                     SHOWN, full);
        return -1;
    }
    /* Split at the first '/': "nvidia.com/a/b" leaves "a/b", which fails. */
    const char *part = strchr(full, '/') + 1;
    if (!kube_is_dns1123_subdomain(part, strlen(part))) {
        gp_error_set(err, NULL, 0, 0,
                     "incorrect format for resource name '%s': [a lowercase RFC 1123 subdomain "
                     "must consist of lower case alphanumeric characters, '-' or '.', and must "
                     "start and end with an alphanumeric character (e.g. 'example.com', regex "
                     "used for validation is "
                     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]",
                     full);
        return -1;
    }
    snprintf(out, size, "%s", full);
    return 0;
}

/* ---- unknown keys ---- */

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return 99;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t sub =
                diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            size_t best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            diag = up;
        }
    }
    return row[lb];
}

/* Warns about every key of `obj` that is not in `known`: the plugin
 * decodes non-strictly, so a misspelt field has no effect and no error.
 * With `fold`, keys matching a known one but for case are accepted, as
 * encoding/json accepts them for struct fields. */
static void warn_unknown(ctx *c, const json_t *obj, const char *ptr, const char *where,
                         const char *const *known, bool fold)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        const char *best = NULL;
        size_t best_d = 4;
        bool found = false;
        for (const char *const *k = known; *k; k++) {
            if (strcmp(key, *k) == 0 || (fold && strcasecmp(key, *k) == 0)) {
                found = true;
                break;
            }
            size_t d = edit_distance(key, *k);
            if (d < best_d) {
                best_d = d;
                best = *k;
            }
        }
        if (found) continue;
        char kptr[512];
        child(kptr, sizeof kptr, ptr, key);
        if (best)
            WARN(c, kptr,
                 "'%s' is not a field of %s and is ignored by the plugin; did you mean '%s'?", key,
                 where, best);
        else
            WARN(c, kptr, "'%s' is not a field of %s and is ignored by the plugin", key, where);
        (void)v;
    }
}

/* A struct field: exact name first, then any casing (encoding/json). */
static json_t *field(const json_t *obj, const char *name)
{
    json_t *v = json_object_get(obj, name);
    if (v) return v;
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val)
    {
        if (strcasecmp(key, name) == 0) return val;
    }
    return NULL;
}

/* ---- devices (ReplicatedDevices.UnmarshalJSON) ---- */

static bool all_digits(const char *s, size_t n)
{
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return false;
    return true;
}

/* google/uuid.Parse's usual forms: 36 characters with dashes, or 32 hex. */
static bool is_uuid(const char *s, size_t n)
{
    if (n == 32) {
        for (size_t i = 0; i < n; i++)
            if (!isxdigit((unsigned char)s[i])) return false;
        return true;
    }
    if (n != 36) return false;
    for (size_t i = 0; i < n; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i])) return false;
    }
    return true;
}

static bool is_gpu_uuid(const char *s)
{
    return strncmp(s, "GPU-", 4) == 0 && is_uuid(s + 4, strlen(s + 4));
}

static bool is_device_ref(const char *s)
{
    size_t n = strlen(s);
    if (all_digits(s, n)) return true;
    const char *colon = strchr(s, ':');
    if (colon && all_digits(s, (size_t)(colon - s)) && all_digits(colon + 1, strlen(colon + 1)))
        return true;
    if (is_gpu_uuid(s)) return true;
    if (strncmp(s, "MIG-", 4) != 0) return false;
    const char *rest = s + 4;
    if (is_uuid(rest, strlen(rest))) return true;
    /* MIG-GPU-<uuid>/<gi>/<ci> */
    const char *slash = strchr(rest, '/');
    if (!slash) return false;
    char gpu[64];
    size_t gl = (size_t)(slash - rest);
    if (gl >= sizeof gpu) return false;
    memcpy(gpu, rest, gl);
    gpu[gl] = '\0';
    const char *second = strchr(slash + 1, '/');
    return is_gpu_uuid(gpu) && second && all_digits(slash + 1, (size_t)(second - slash - 1)) &&
           all_digits(second + 1, strlen(second + 1));
}

/* Returns 1 when devices is "all", 0 when it selects devices, -1 on error. */
static int parse_devices(ctx *c, const json_t *d, const char *ptr)
{
    if (json_is_string(d) || json_is_null(d)) {
        const char *s = json_is_string(d) ? json_string_value(d) : "";
        if (strcmp(s, "all") != 0)
            FAIL(c, ptr, "devices set as '%.*s' but the only valid string input is 'all'", SHOWN,
                 s);
        return 1;
    }
    if (json_is_integer(d) ||
        (json_is_real(d) && json_real_value(d) == floor(json_real_value(d)))) {
        long long n = json_is_integer(d) ? json_integer_value(d) : (long long)json_real_value(d);
        if (n <= 0) FAIL(c, ptr, "devices set as '%lld' but a count of devices must be > 0", n);
        return 0;
    }
    if (json_is_array(d)) {
        size_t i;
        json_t *item;
        json_array_foreach(d, i, item)
        {
            char iptr[512];
            child_index(iptr, sizeof iptr, ptr, i);
            if (json_is_integer(item) && json_integer_value(item) >= 0) continue;
            if (json_is_string(item) && is_device_ref(json_string_value(item))) continue;
            /* Go prints the string it failed to decode, "" for a non-string. */
            FAIL(c, iptr, "unsupported type for device in devices list: %.*s, string", SHOWN,
                 json_is_string(item) ? json_string_value(item) : "");
        }
        return 0;
    }
    char *raw = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    unsigned line, col;
    locate(c, ptr, &line, &col);
    gp_error_set(c->err, c->name, line, col, "unrecognized type for devices spec: %.*s", SHOWN,
                 raw ? raw : "");
    free(raw);
    return -1;
}

/* ---- one replicated resource (ReplicatedResource.UnmarshalJSON) ---- */

static int parse_name(ctx *c, const json_t *v, const char *ptr, char *out, size_t size)
{
    if (!json_is_string(v) && !json_is_null(v))
        FAIL(c, ptr, "json: cannot unmarshal %s into Go value of type string",
             kube_json_go_kind(v));
    gp_error e;
    if (an_dp_resource_name(json_is_string(v) ? json_string_value(v) : "", out, size, &e) != 0)
        FAIL(c, ptr, "%s", e.text);
    return 0;
}

static int parse_resource(ctx *c, const json_t *r, const char *ptr, const char *block,
                          bool rename_by_default, bool *warn_rename, bool *warn_devices,
                          json_t *out)
{
    if (!json_is_object(r))
        FAIL(c, ptr, "json: cannot unmarshal %s into Go value of type map[string]json.RawMessage",
             kube_json_go_kind(r));
    static const char *const known[] = {"name", "rename", "devices", "replicas", NULL};
    char where[128];
    snprintf(where, sizeof where, "%s.resources[]", block);
    warn_unknown(c, r, ptr, where, known, false);

    char p[512], name[512], rename[512] = "";
    const json_t *v = json_object_get(r, "name");
    if (!v) FAIL(c, ptr, "%s", "no resource name specified");
    child(p, sizeof p, ptr, "name");
    if (parse_name(c, v, p, name, sizeof name) != 0) return -1;

    int all = 1;
    if ((v = json_object_get(r, "devices"))) {
        child(p, sizeof p, ptr, "devices");
        if ((all = parse_devices(c, v, p)) < 0) return -1;
    }

    v = json_object_get(r, "replicas");
    if (!v) FAIL(c, ptr, "%s", "no replicas specified");
    child(p, sizeof p, ptr, "replicas");
    long long replicas = 0;
    if (json_is_integer(v)) {
        replicas = json_integer_value(v);
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        char text[40];
        number_text(d, text);
        if (d != floor(d) || fabs(d) > 9.2e18)
            FAIL(c, p, "json: cannot unmarshal number %s into Go value of type int", text);
        replicas = (long long)d;
    } else if (!json_is_null(v)) {
        FAIL(c, p, "json: cannot unmarshal %s into Go value of type int", kube_json_go_kind(v));
    }
    if (replicas < 2) FAIL(c, p, "%s", "number of replicas must be >= 2");

    bool has_rename = false;
    if ((v = json_object_get(r, "rename"))) {
        child(p, sizeof p, ptr, "rename");
        if (parse_name(c, v, p, rename, sizeof rename) != 0) return -1;
        has_rename = true;
    }

    /* DisableResourceNamingInConfig: the only renaming that survives is
     * renameByDefault's "<name>.shared", and every GPU is shared. */
    char shared[560];
    snprintf(shared, sizeof shared, "%s.shared", name);
    if (has_rename && (rename_by_default ? strcmp(rename, shared) != 0 : true)) *warn_rename = true;
    if (!all) *warn_devices = true;

    unsigned line, col;
    locate(c, ptr, &line, &col);
    json_array_append_new(out, json_pack("{s:s, s:I, s:s, s:I, s:I}", "name", name, "replicas",
                                         (json_int_t)replicas, "served",
                                         rename_by_default ? shared : name, "line",
                                         (json_int_t)line, "col", (json_int_t)col));
    return 0;
}

/* ---- a replicated-resources block (ReplicatedResources.UnmarshalJSON) ---- */

static int parse_bool(ctx *c, const json_t *b, const char *ptr, const char *key, int *out)
{
    const json_t *v = json_object_get(b, key);
    if (!v || json_is_null(v)) return 0;
    char p[512];
    child(p, sizeof p, ptr, key);
    if (!json_is_boolean(v))
        FAIL(c, p, "json: cannot unmarshal %s into Go value of type bool", kube_json_go_kind(v));
    *out = json_is_true(v);
    return 0;
}

static json_t *parse_block(ctx *c, const json_t *b, const char *ptr, const char *block)
{
    if (!json_is_object(b) && !json_is_null(b)) {
        unsigned line, col;
        locate(c, ptr, &line, &col);
        gp_error_set(c->err, c->name, line, col,
                     "json: cannot unmarshal %s into Go value of type map[string]json.RawMessage",
                     kube_json_go_kind(b));
        return NULL;
    }
    static const char *const known[] = {"renameByDefault", "failRequestsGreaterThanOne",
                                        "resources", NULL};
    if (json_is_object(b)) warn_unknown(c, b, ptr, block, known, false);
    int rename_by_default = 0, fail_gt_one = -1;
    if (parse_bool(c, b, ptr, "renameByDefault", &rename_by_default) != 0) return NULL;
    if (parse_bool(c, b, ptr, "failRequestsGreaterThanOne", &fail_gt_one) != 0) return NULL;
    const json_t *res = json_object_get(b, "resources");
    unsigned line, col;
    if (!res) {
        locate(c, ptr, &line, &col);
        gp_error_set(c->err, c->name, line, col, "%s", "no resources specified");
        return NULL;
    }
    char rptr[512];
    child(rptr, sizeof rptr, ptr, "resources");
    if (!json_is_array(res) && !json_is_null(res)) {
        locate(c, rptr, &line, &col);
        gp_error_set(c->err, c->name, line, col,
                     "json: cannot unmarshal %s into Go value of type []v1.ReplicatedResource",
                     kube_json_go_kind(res));
        return NULL;
    }
    json_t *list = json_array();
    bool warn_rename = false, warn_devices = false;
    size_t i;
    json_t *r;
    json_array_foreach(res, i, r)
    {
        char p[512];
        child_index(p, sizeof p, rptr, i);
        if (parse_resource(c, r, p, block, rename_by_default, &warn_rename, &warn_devices, list) !=
            0) {
            json_decref(list);
            return NULL;
        }
    }
    if (json_array_size(list) == 0) {
        json_decref(list);
        locate(c, rptr, &line, &col);
        gp_error_set(c->err, c->name, line, col, "%s", "no resources specified");
        return NULL;
    }
    if (warn_rename)
        WARN(c, rptr,
             "Setting the 'rename' field in %s.resources is not yet supported in the config. "
             "Ignoring...",
             block);
    if (warn_devices)
        WARN(c, rptr,
             "Customizing the 'devices' field in %s.resources is not yet supported in the "
             "config. Ignoring...",
             block);
    return json_pack("{s:b, s:o, s:o}", "renameByDefault", rename_by_default,
                     "failRequestsGreaterThanOne",
                     fail_gt_one < 0 ? json_null() : json_boolean(fail_gt_one), "resources", list);
}

/* ---- the whole config ---- */

static const char *const top_known[] = {"version", "flags", "resources", "sharing", "imex", NULL};
static const char *const flags_known[] = {"migStrategy",
                                          "failOnInitError",
                                          "mpsRoot",
                                          "nvidiaDriverRoot",
                                          "nvidiaDevRoot",
                                          "gdrcopyEnabled",
                                          "gdsEnabled",
                                          "mofedEnabled",
                                          "useNodeFeatureAPI",
                                          "deviceDiscoveryStrategy",
                                          "plugin",
                                          "gfd",
                                          NULL};
static const char *const plugin_known[] = {"passDeviceSpecs",
                                           "deviceListStrategy",
                                           "deviceIDStrategy",
                                           "cdiAnnotationPrefix",
                                           "nvidiaCTKPath",
                                           "containerDriverRoot",
                                           "sharedDevicesAllocationPolicy",
                                           NULL};
static const char *const gfd_known[] = {"oneshot",    "noTimestamp",     "sleepInterval",
                                        "outputFile", "machineTypeFile", NULL};
static const char *const sharing_known[] = {"timeSlicing", "mps", NULL};

/* sigs.k8s.io/yaml hands a string field the text of a plain scalar, so
 * `version: 1` is "1"; the plugin then judges that text. */
static const char *scalar_text(const json_t *v, char buf[40])
{
    if (json_is_string(v)) return json_string_value(v);
    if (json_is_integer(v)) {
        snprintf(buf, 40, "%lld", (long long)json_integer_value(v));
        return buf;
    }
    if (json_is_real(v)) {
        number_text(json_real_value(v), buf);
        return buf;
    }
    if (json_is_boolean(v)) return json_is_true(v) ? "true" : "false";
    return "";
}

static int parse_flags(ctx *c, const json_t *flags, json_t *out)
{
    if (!flags || json_is_null(flags)) return 0;
    if (!json_is_object(flags))
        FAIL(c, "/flags",
             "json: cannot unmarshal %s into Go struct field Config.flags of type v1.Flags",
             kube_json_go_kind(flags));
    warn_unknown(c, flags, "/flags", "flags", flags_known, true);
    const json_t *p = field(flags, "plugin");
    if (json_is_object(p)) warn_unknown(c, p, "/flags/plugin", "flags.plugin", plugin_known, true);
    const json_t *g = field(flags, "gfd");
    if (json_is_object(g)) warn_unknown(c, g, "/flags/gfd", "flags.gfd", gfd_known, true);
    char buf[40];
    /* Any text decodes; the plugin judges it only once the config is
     * loaded (validateFlags, below). */
    const json_t *mig = field(flags, "migStrategy");
    if (mig && !json_is_null(mig))
        json_object_set_new(out, "migStrategy", json_string(scalar_text(mig, buf)));
    const json_t *root = field(flags, "mpsRoot");
    if (root && !json_is_null(root))
        json_object_set_new(out, "mpsRoot", json_string(scalar_text(root, buf)));
    return 0;
}

static int parse_sharing(ctx *c, const json_t *sharing, json_t *out)
{
    json_t *result = json_pack("{s:s, s:n, s:b, s:n, s:[]}", "strategy", "none", "block",
                               "renameByDefault", 0, "failRequestsGreaterThanOne", "resources");
    json_object_set_new(out, "sharing", result);
    if (!sharing || json_is_null(sharing)) return 0;
    if (!json_is_object(sharing))
        FAIL(c, "/sharing",
             "json: cannot unmarshal %s into Go struct field Config.sharing of type v1.Sharing",
             kube_json_go_kind(sharing));
    warn_unknown(c, sharing, "/sharing", "sharing", sharing_known, true);
    /* timeSlicing is a value, so an empty `timeSlicing:` still runs its
     * decoder (and fails); mps is a pointer, and null leaves it unset. */
    const json_t *ts = field(sharing, "timeSlicing");
    const json_t *mps = field(sharing, "mps");
    json_t *tsb = NULL, *mpsb = NULL;
    if (ts && !(tsb = parse_block(c, ts, "/sharing/timeSlicing", "sharing.timeSlicing"))) return -1;
    if (mps && !json_is_null(mps) && !(mpsb = parse_block(c, mps, "/sharing/mps", "sharing.mps"))) {
        json_decref(tsb);
        return -1;
    }
    json_t *active = mpsb ? mpsb : tsb;
    if (mpsb && tsb)
        WARN(c, "/sharing/timeSlicing", "%s",
             "sharing.timeSlicing is ignored: sharing.mps is set and the plugin uses only one "
             "sharing strategy, MPS");
    if (active) {
        json_object_set_new(result, "strategy", json_string(mpsb ? "mps" : "time-slicing"));
        json_object_set_new(result, "block",
                            json_string(mpsb ? "sharing.mps" : "sharing.timeSlicing"));
        json_object_update(result, active);
    }
    json_decref(tsb);
    json_decref(mpsb);
    return 0;
}

static int parse_config(ctx *c, const json_t *doc, json_t *out)
{
    if (json_is_null(doc)) return 0;
    if (!json_is_object(doc))
        FAIL(c, "", "json: cannot unmarshal %s into Go value of type v1.Config",
             kube_json_go_kind(doc));
    warn_unknown(c, doc, "", "the config", top_known, true);
    if (parse_flags(c, field(doc, "flags"), out) != 0) return -1;
    const json_t *res = field(doc, "resources");
    if (json_is_object(res) &&
        (json_array_size(field(res, "gpus")) > 0 || json_array_size(field(res, "mig")) > 0))
        WARN(c, "/resources", "%s",
             "Customizing the 'resources' field is not yet supported in the config. Ignoring...");
    if (parse_sharing(c, field(doc, "sharing"), out) != 0) return -1;

    c->log_prefix = LOG_PARSE;
    const json_t *version = field(doc, "version");
    char buf[40];
    const char *v = version && !json_is_null(version) ? scalar_text(version, buf) : "";
    if (*v && strcmp(v, "v1") != 0) FAIL(c, "/version", "unknown version: %.*s", SHOWN, v);

    /* validateFlags (cmd/nvidia-device-plugin/main.go, v0.15 to v0.20), in
     * its order, once the config is loaded: MPS with mixed, then the MIG
     * strategy, compared as written ("Mixed" is not "mixed"). */
    c->log_prefix = LOG_VALIDATE;
    const json_t *sharing = json_object_get(out, "sharing");
    const char *mig = json_string_value(json_object_get(out, "migStrategy"));
    if (strcmp(json_string_value(json_object_get(sharing, "strategy")), "mps") == 0 &&
        strcmp(mig, "mixed") == 0)
        FAIL(c, "/sharing/mps", "%s", "using --mig-strategy=mixed is not supported with MPS");
    if (strcmp(mig, "none") != 0 && strcmp(mig, "single") != 0 && strcmp(mig, "mixed") != 0)
        FAIL(c, "/flags/migStrategy", "unknown MIG strategy: %.*s", SHOWN, mig);
    return 0;
}

/* The message without its NAME:LINE:COL, as the plugin logs it. */
static const char *bare_message(const char *text, const char *name)
{
    size_t skip = strlen(name);
    if (strncmp(text, name, skip) != 0 || text[skip] != ':') return text;
    const char *msg = text + skip + 1;
    const char *space = strchr(msg, ' ');
    return space ? space + 1 : msg;
}

static char *log_line(const char *prefix, const char *msg)
{
    size_t n = strlen(prefix) + strlen(msg) + 1;
    char *line = malloc(n);
    if (line) snprintf(line, n, "%s%s", prefix, msg);
    return line;
}

json_t *an_dp_config_parse(const char *text, size_t len, const char *name, char **plugin_log,
                           gp_error *err)
{
    if (plugin_log) *plugin_log = NULL;
    gp_error local = {0};
    json_t *docs = NULL, *positions = NULL;
    if (gp_yaml_to_json(text, len, name, &docs, &positions, &local) != 0) {
        if (plugin_log)
            *plugin_log =
                log_line(LOG_PARSE "unmarshal error: error converting YAML to JSON: yaml: ",
                         bare_message(local.text, name));
        if (err) *err = local;
        return NULL;
    }
    json_t *out = json_pack("{s:s, s:s, s:s, s:[]}", "version", "v1", "migStrategy", "none",
                            "mpsRoot", "", "warnings");
    ctx c = {.name = name,
             .pos = json_array_get(positions, 0),
             .warnings = json_object_get(out, "warnings"),
             .err = &local,
             .log_prefix = LOG_JSON};
    int rc = parse_config(&c, json_array_get(docs, 0), out);
    json_decref(docs);
    json_decref(positions);
    if (rc == 0) return out;
    if (plugin_log && c.log_prefix)
        *plugin_log = log_line(c.log_prefix, bare_message(local.text, name));
    if (err) *err = local;
    json_decref(out);
    return NULL;
}

/* ---- which key (cmd/config-manager/main.go updateConfigName) ---- */

static bool has_key(const json_t *cm, const char *key)
{
    return json_object_get(json_object_get(cm, "data"), key) ||
           json_object_get(json_object_get(cm, "binaryData"), key);
}

/* The only key of data and binaryData together, or NULL. */
static const char *single_key(const json_t *cm, size_t *count)
{
    const char *only = NULL;
    *count = 0;
    static const char *const parts[] = {"data", "binaryData"};
    for (size_t i = 0; i < 2; i++) {
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(cm, parts[i]), k, v)
        {
            (void)v;
            /* A mounted ConfigMap's "..data" entries are not configs. */
            if (strncmp(k, "..", 2) == 0) continue;
            if (!only || strcmp(only, k) != 0) (*count)++;
            only = k;
        }
    }
    return *count == 1 ? only : NULL;
}

static const char *key_in(const json_t *cm, const char *key)
{
    json_t *data = json_object_get(cm, "data");
    void *iter = json_object_iter_at(data, key);
    if (!iter) iter = json_object_iter_at(json_object_get(cm, "binaryData"), key);
    return iter ? json_object_iter_key(iter) : NULL;
}

int an_dp_config_select(const json_t *configmap, const char *label, const char *default_config,
                        const char *fallbacks, const char **key, const char **how, gp_error *err)
{
    *key = NULL;
    *how = NULL;
    size_t count;
    const char *only = single_key(configmap, &count);
    if (count == 0) {
        gp_error_set(err, NULL, 0, 0, "%s", "no configuration files available");
        return -1;
    }
    if (label && *label) {
        if (!has_key(configmap, label)) {
            gp_error_set(err, NULL, 0, 0, "specified config %.*s does not exist", SHOWN, label);
            return -1;
        }
        *key = key_in(configmap, label);
        *how = "label";
        return 0;
    }
    if (default_config && *default_config) {
        if (!has_key(configmap, default_config)) {
            /* The config-manager prints the (empty) label value here, not
             * the default's name: its message really reads "config  does". */
            gp_error_set(err, NULL, 0, 0, "specified config %s does not exist", "");
            return -1;
        }
        *key = key_in(configmap, default_config);
        *how = "default";
        return 0;
    }
    const char *list = fallbacks ? fallbacks : "named,single";
    while (*list) {
        size_t n = strcspn(list, ",");
        if (n == 5 && strncmp(list, "named", 5) == 0 && has_key(configmap, "default")) {
            *key = key_in(configmap, "default");
            *how = "named";
            return 0;
        } else if (n == 6 && strncmp(list, "single", 6) == 0 && only) {
            *key = only;
            *how = "single";
            return 0;
        } else if (n == 5 && strncmp(list, "empty", 5) == 0) {
            *how = "empty";
            return 0;
        } else if (!(n == 5 && strncmp(list, "named", 5) == 0) &&
                   !(n == 6 && strncmp(list, "single", 6) == 0) && n > 0) {
            gp_error_set(err, NULL, 0, 0, "unknown fallback strategy: %.*s", (int)n, list);
            return -1;
        }
        list += n;
        if (*list == ',') list++;
    }
    gp_error_set(err, NULL, 0, 0, "%s",
                 "no config was set, no default was provided, and all fallbacks failed");
    return -1;
}
