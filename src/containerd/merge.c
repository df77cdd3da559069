/* Merging a loaded config set by the rules of one containerd line, then
 * decoding the CRI plugin over its defaults. Every rule here was measured on
 * the real binaries (../shared/design/containerd-merge.md names the cases). */
#include <stdlib.h>
#include <string.h>

#include "containerd/containerd_internal.h"
#include "util/i18n.h"

#define CRI_V2      "io.containerd.grpc.v1.cri"
#define CRI_RUNTIME "io.containerd.cri.v1.runtime"
#define CRI_IMAGES  "io.containerd.cri.v1.images"

/* Top-level settings merged with mergo's WithOverride: a later zero value
 * (0, "", false) never clears an earlier one (cases c, c2). */
static const char *const zero_rule_scalars[] = {"root",       "state",     "temp",
                                                "plugin_dir", "oom_score", NULL};
static const char *const zero_rule_tables[] = {"grpc", "ttrpc", "debug", "metrics", "cgroup", NULL};
/* Replaced per key: a later entry replaces the whole entry (cases n, n2). */
static const char *const per_key_tables[] = {"proxy_plugins", "stream_processors", "timeouts",
                                             NULL};
static const char *const list_keys[] = {"disabled_plugins", "required_plugins", NULL};

/* Keys the 2.x CRI gRPC plugin keeps after the split (streaming server). */
static const char *const streaming_keys[] = {"disable_tcp_service",
                                             "stream_server_address",
                                             "stream_server_port",
                                             "stream_idle_timeout",
                                             "enable_tls_streaming",
                                             "x509_key_pair_streaming",
                                             NULL};
/* Keys the v2 -> v3 migration moves to the images plugin, overwriting. */
static const char *const image_keys[] = {"registry",
                                         "image_decryption",
                                         "max_concurrent_downloads",
                                         "image_pull_progress_timeout",
                                         "image_pull_with_sync_fs",
                                         "stats_collect_period",
                                         NULL};
static const char *const image_keys_under_containerd[] = {
    "snapshotter", "disable_snapshot_annotations", "discard_unpacked_layers", NULL};

static bool in_list(const char *const *list, const char *key, size_t keylen)
{
    for (; *list; list++)
        if (strlen(*list) == keylen && memcmp(*list, key, keylen) == 0) return true;
    return false;
}

static bool is_zero(const toml_value *v)
{
    switch (v->type) {
    case TOML_INTEGER:
        return v->u.i == 0;
    case TOML_FLOAT:
        return v->u.f == 0;
    case TOML_BOOL:
        return !v->u.b;
    case TOML_STRING:
        return v->len == 0;
    case TOML_ARRAY:
        return toml_array_size(v->u.array) == 0;
    default:
        return false;
    }
}

static cd_origin origin_of_default(void)
{
    return (cd_origin){NULL, 0, 0};
}

/* ---- lost keys ---- */

typedef struct lost_ctx {
    cd_prediction *p;
    const cd_node *kept; /* leaves also present here are not lost */
    const char *prefix;  /* the path above the walked node, TOML syntax */
    const char *code;
    const char *reason;
} lost_ctx;

static bool has_path(const cd_node *root, const cd_node *const *path, size_t depth)
{
    const cd_node *n = root;
    for (size_t i = 0; i < depth && n; i++)
        n = cd_childn(n, path[i]->key, path[i]->keylen);
    return n != NULL;
}

static void note_lost_leaf(const cd_node *leaf, const cd_node *const *path, size_t depth, void *ctx)
{
    lost_ctx *lc = ctx;
    if (!leaf->origin.file) return; /* defaults are not "written in a file" */
    if (lc->kept && has_path(lc->kept, path, depth)) return;
    char *tail = depth ? cd_path_text(path, depth) : NULL;
    char *key = cd_printf(lc->p->arena, "%s%s%s", lc->prefix, depth ? "." : "", tail ? tail : "");
    free(tail);
    cd_note_add(lc->p->arena, &lc->p->lost, leaf->origin.file, leaf->origin.line, leaf->origin.col,
                key, lc->code, "%s", lc->reason);
}

/* Every leaf of `gone` (found at `prefix`) not also in `kept` is lost for
 * `reason`. */
static void lose(cd_prediction *p, const cd_node *gone, const cd_node *kept, const char *prefix,
                 const char *code, const char *reason)
{
    lost_ctx lc = {p, kept, prefix, code, reason};
    if (gone->is_table) {
        cd_walk_leaves(gone, note_lost_leaf, &lc);
    } else if (!kept) {
        note_lost_leaf(gone, NULL, 0, &lc);
    }
}

/* ---- top level, common to every version ---- */

static void merge_zero_rule(cd_prediction *p, cd_node *dst_table, const cd_node *src,
                            const char *table_name)
{
    cd_node *old = cd_childn(dst_table, src->key, src->keylen);
    if (!is_zero(src->value) || !old || is_zero(old->value)) {
        if (!old || !is_zero(src->value)) cd_set(dst_table, cd_clone(p->arena, src));
        return;
    }
    char *key = table_name ? cd_printf(p->arena, "%s.%.*s", table_name, (int)src->keylen, src->key)
                           : cd_printf(p->arena, "%.*s", (int)src->keylen, src->key);
    cd_note_add(p->arena, &p->lost, src->origin.file, src->origin.line, src->origin.col, key,
                "zero-value-ignored",
                "a zero value (0, \"\" or false) never overrides an earlier top-level setting; "
                "%s:%u keeps its value",
                old->origin.file ? old->origin.file : "default", old->origin.line);
}

/* Arrays at the top level: 1.x appends, 2.x appends what is not there yet. */
static void merge_list(cd_prediction *p, cd_node *m, const cd_node *src)
{
    cd_node *old = cd_childn(m, src->key, src->keylen);
    if (!old || old->is_table || old->value->type != TOML_ARRAY || src->value->type != TOML_ARRAY) {
        cd_set(m, cd_clone(p->arena, src));
        return;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return;
    fputc('[', f);
    const toml_array *a = old->value->u.array, *b = src->value->u.array;
    size_t n = 0;
    for (size_t i = 0; i < toml_array_size(a); i++, n++) {
        if (n) fputs(", ", f);
        toml_emit_value(toml_array_at(a, i), f);
    }
    for (size_t i = 0; i < toml_array_size(b); i++) {
        const toml_value *v = toml_array_at(b, i);
        bool seen = false;
        for (size_t j = 0; !cd_is_v1(p->family) && j < toml_array_size(a) && !seen; j++)
            seen = toml_value_equal(toml_array_at(a, j), v);
        for (size_t j = 0; !cd_is_v1(p->family) && j < i && !seen; j++)
            seen = toml_value_equal(toml_array_at(b, j), v);
        if (seen) continue;
        if (n++) fputs(", ", f);
        toml_emit_value(v, f);
    }
    fputc(']', f);
    fclose(f);
    char *key = gp_arena_strndup(p->arena, src->key, src->keylen);
    cd_node *leaf = cd_leaf_from_text(p, key, buf, src->origin);
    free(buf);
    if (leaf) cd_set(m, leaf);
}

static void merge_per_key(cd_prediction *p, cd_node *m, const cd_node *src)
{
    cd_node *dst =
        cd_table_at(p->arena, m, gp_arena_strndup(p->arena, src->key, src->keylen), src->origin);
    if (!dst || !src->is_table) return;
    for (const cd_node *e = src->first; e; e = e->next) {
        cd_node *old = cd_childn(dst, e->key, e->keylen);
        if (old) {
            const cd_node *one[1] = {e};
            char *name = cd_path_text(one, 1);
            char *prefix = cd_printf(p->arena, "%.*s.%s", (int)src->keylen, src->key, name);
            free(name);
            char *why = cd_printf(p->arena,
                                  _("entry replaced whole by %s:%u: containerd replaces each "
                                    "%.*s entry, it does not merge them"),
                                  e->origin.file, e->origin.line, (int)src->keylen, src->key);
            lose(p, old, e, prefix, "entry-replaced", why);
        }
        cd_set(dst, cd_clone(p->arena, e));
    }
}

/* ---- types of the top-level settings ---- */

typedef enum want { WANT_INT, WANT_STRING, WANT_STRINGS, WANT_TABLE } want;

static const struct {
    const char *key;
    want want;
    const char *go_type; /* as containerd 1.x names it in the error */
} typed_keys[] = {
    {"version", WANT_INT, "int"},
    {"oom_score", WANT_INT, "int"},
    {"root", WANT_STRING, "string"},
    {"state", WANT_STRING, "string"},
    {"temp", WANT_STRING, "string"},
    {"plugin_dir", WANT_STRING, "string"},
    {"imports", WANT_STRINGS, "[]string(slice)"},
    {"disabled_plugins", WANT_STRINGS, "[]string(slice)"},
    {"required_plugins", WANT_STRINGS, "[]string(slice)"},
    {"grpc", WANT_TABLE, "config.GRPCConfig"},
    {"ttrpc", WANT_TABLE, "config.TTRPCConfig"},
    {"debug", WANT_TABLE, "config.Debug"},
    {"metrics", WANT_TABLE, "config.MetricsConfig"},
    {"cgroup", WANT_TABLE, "config.CgroupConfig"},
    {"plugins", WANT_TABLE, "map[string]toml.Tree"},
    {"proxy_plugins", WANT_TABLE, "map[string]config.ProxyPlugin"},
    {"timeouts", WANT_TABLE, "map[string]string"},
};

static bool has_type(const cd_node *n, want w)
{
    if (w == WANT_TABLE) return n->is_table;
    if (n->is_table) return false;
    const toml_value *v = n->value;
    if (w == WANT_INT) return v->type == TOML_INTEGER;
    if (w == WANT_STRING) return v->type == TOML_STRING;
    if (v->type != TOML_ARRAY) return false;
    for (size_t i = 0; i < toml_array_size(v->u.array); i++)
        if (toml_array_at(v->u.array, i)->type != TOML_STRING) return false;
    return true;
}

/* Go's name for the value's type and its %v text, as in containerd's
 * "Can't convert 5(float64) to int". */
static const char *go_value(cd_prediction *p, const cd_node *n)
{
    if (n->is_table) return "(*toml.Tree)";
    const toml_value *v = n->value;
    char buf[80];
    switch (v->type) {
    case TOML_INTEGER:
        return cd_printf(p->arena, "%lld(int64)", (long long)v->u.i);
    case TOML_FLOAT:
        toml_format_float(v->u.f, buf);
        if (strcmp(buf + strlen(buf) - 2, ".0") == 0) buf[strlen(buf) - 2] = '\0';
        return cd_printf(p->arena, "%s(float64)", buf);
    case TOML_BOOL:
        return v->u.b ? "true(bool)" : "false(bool)";
    case TOML_STRING:
        return cd_printf(p->arena, "%s(string)", v->u.s);
    case TOML_ARRAY:
        return "([]interface {})";
    default:
        toml_format_datetime(v, buf);
        return cd_printf(p->arena, "%s(time.Time)", buf);
    }
}

/* A setting of the wrong type stops the load of that file (and so the
 * start) in every version; the message is 1.x's, measured on 1.6.20. */
static void check_types(cd_prediction *p, const cd_node *file_tree)
{
    for (size_t i = 0; i < sizeof typed_keys / sizeof *typed_keys && !p->error; i++) {
        const cd_node *n = cd_child(file_tree, typed_keys[i].key);
        if (!n || has_type(n, typed_keys[i].want)) continue;
        p->error = cd_printf(p->arena, "failed to unmarshal TOML: (%u, %u): Can't convert %s to %s",
                             n->origin.line, n->origin.col, go_value(p, n), typed_keys[i].go_type);
        cd_note_add(p->arena, &p->lints, n->origin.file, n->origin.line, n->origin.col,
                    typed_keys[i].key, "wrong-type",
                    "%s has the wrong type for containerd (%s expected): containerd refuses to "
                    "start",
                    typed_keys[i].key, typed_keys[i].go_type);
    }
}

/* The top-level keys of one file, except `plugins`, `version`, `imports`. */
static void merge_top_level(cd_prediction *p, cd_node *m, const cd_node *file_tree)
{
    check_types(p, file_tree);
    for (const cd_node *c = file_tree->first; c; c = c->next) {
        if (c->keylen == 7 && memcmp(c->key, "plugins", 7) == 0) continue;
        if (c->keylen == 7 && memcmp(c->key, "version", 7) == 0) continue;
        if (c->keylen == 7 && memcmp(c->key, "imports", 7) == 0) continue;
        if (!c->is_table && in_list(zero_rule_scalars, c->key, c->keylen)) {
            merge_zero_rule(p, m, c, NULL);
        } else if (c->is_table && in_list(zero_rule_tables, c->key, c->keylen)) {
            char *name = gp_arena_strndup(p->arena, c->key, c->keylen);
            cd_node *dst = cd_table_at(p->arena, m, name, c->origin);
            for (const cd_node *f = c->first; dst && f; f = f->next)
                if (!f->is_table) merge_zero_rule(p, dst, f, name);
        } else if (in_list(per_key_tables, c->key, c->keylen)) {
            merge_per_key(p, m, c);
        } else if (!c->is_table && in_list(list_keys, c->key, c->keylen)) {
            merge_list(p, m, c);
        } else {
            const cd_node *one[1] = {c};
            char *key = cd_path_text(one, 1);
            cd_note_add(p->arena, &p->lost, c->origin.file, c->origin.line, c->origin.col, key,
                        "unknown-key",
                        cd_is_v1(p->family)
                            ? N_("not a containerd setting: ignored silently")
                            : N_("not a containerd setting: ignored (\"Ignoring unknown key in "
                                 "TOML\")"));
            free(key);
        }
    }
}

/* `imports` as `config dump` shows it: 1.x the files loaded, 2.x the
 * import strings as written, deduplicated, in walk order. */
static void set_imports(cd_prediction *p, cd_node *m)
{
    char *buf = NULL;
    size_t len = 0, n = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return;
    fputc('[', f);
    for (size_t i = 0; i < p->nfiles; i++) {
        if (cd_is_v1(p->family)) {
            if (n++) fputs(", ", f);
            toml_value v = {.type = TOML_STRING,
                            .len = (uint32_t)strlen(p->files[i].path),
                            .u.s = p->files[i].path};
            toml_emit_value(&v, f);
            continue;
        }
        const toml_value *imports = toml_table_get(toml_root(p->files[i].doc), "imports");
        if (!imports || imports->type != TOML_ARRAY) continue;
        for (size_t j = 0; j < toml_array_size(imports->u.array); j++) {
            const toml_value *v = toml_array_at(imports->u.array, j);
            bool seen = false;
            for (size_t a = 0; a <= i && !seen; a++) {
                const toml_value *earlier = toml_table_get(toml_root(p->files[a].doc), "imports");
                if (!earlier || earlier->type != TOML_ARRAY) continue;
                size_t upto = a == i ? j : toml_array_size(earlier->u.array);
                for (size_t b = 0; b < upto && !seen; b++)
                    seen = toml_value_equal(toml_array_at(earlier->u.array, b), v);
            }
            if (seen) continue;
            if (n++) fputs(", ", f);
            toml_emit_value(v, f);
        }
    }
    fputc(']', f);
    fclose(f);
    cd_node *leaf = cd_leaf_from_text(p, "imports", buf, (cd_origin){p->files[0].path, 0, 0});
    free(buf);
    if (leaf) cd_set(m, leaf);
}

/* ---- 1.6 and 1.7 ---- */

static bool is_full_plugin_name(const char *key, size_t len)
{
    return len > 14 && memcmp(key, "io.containerd.", 14) == 0;
}

static bool is_v3_cri_name(const char *key, size_t len)
{
    return len >= 20 && memcmp(key, "io.containerd.cri.v1", 20) == 0;
}

/* Removes from `table` the keys that are no field of this line's CRI
 * config, each noted as lost under `prefix`. */
static void drop_unknown_keys(cd_prediction *p, cd_node *table, bool in_containerd,
                              const char *prefix, const char *why)
{
    for (cd_node *k = table->first, *next; k; k = next) {
        next = k->next;
        if (cd_cri_key_known(p->family, in_containerd, k->key, k->keylen)) continue;
        const cd_node *one[1] = {k};
        char *name = cd_path_text(one, 1);
        char *key = cd_printf(p->arena, "%s.%s", prefix, name);
        free(name);
        lose(p, k, NULL, key, "unknown-plugin-key", why);
        cd_take(table, gp_arena_strndup(p->arena, k->key, k->keylen));
    }
}

/* go-toml decodes the section into the plugin's struct, so a key that is no
 * field of it is dropped without a word: 1.6.20 has no enable_cdi (its dump
 * leaves it out; issue 16, case 9). Checked at the two levels people write
 * settings at, the section and its `containerd` table; runtime tables hold
 * free-form options. */
static cd_node *known_cri_keys_v1(cd_prediction *p, const cd_node *section)
{
    cd_node *copy = cd_clone(p->arena, section);
    if (!copy) return NULL;
    const cd_node *one[1] = {section};
    char *name = cd_path_text(one, 1);
    char *prefix = cd_printf(p->arena, "plugins.%s", name);
    free(name);
    char *why =
        cd_printf(p->arena, _("not a setting of the containerd %s CRI plugin: ignored silently"),
                  cd_family_name(p->family));
    drop_unknown_keys(p, copy, false, prefix, why);
    cd_node *ctr = cd_child(copy, "containerd");
    if (ctr && ctr->is_table)
        drop_unknown_keys(p, ctr, true, cd_printf(p->arena, "%s.containerd", prefix), why);
    return copy;
}

/* Go-toml v1 decodes the section into the plugin's default struct: fields
 * the section sets win, and a map it gives (runtimes) replaces the default
 * map, so the built-in runc exists only if a file defines it. Every runtime
 * is a struct: runtime_type reads "" when no file set it. */
static cd_node *decode_cri_v1(cd_prediction *p, const cd_node *defaults, const cd_node *section)
{
    cd_node *cri = cd_clone(p->arena, defaults);
    if (!section) return cri;
    cd_node *runtimes = cd_path(section, "containerd", "runtimes", NULL);
    if (runtimes) {
        cd_node *ctr = cd_child(cri, "containerd");
        if (ctr) cd_take(ctr, "runtimes");
    }
    cd_merge_deep(p->arena, cri, section);
    cd_node *rts = cd_path(cri, "containerd", "runtimes", NULL);
    for (cd_node *rt = rts ? rts->first : NULL; rt; rt = rt->next)
        if (rt->is_table && !cd_child(rt, "runtime_type")) {
            cd_node *empty = cd_leaf_from_text(p, "runtime_type", "\"\"", origin_of_default());
            if (empty) cd_set(rt, empty);
        }
    return cri;
}

/* With version 2, containerd 1.x refuses plugin names that are not URIs of
 * four parts or more (io.containerd.x.vx), naming the last file loaded. */
static bool is_plugin_uri(const char *s, size_t len)
{
    size_t dots = 0;
    for (size_t i = 0; i < len; i++)
        dots += s[i] == '.';
    return dots >= 3;
}

static void refuse_uri(cd_prediction *p, const char *what, const char *name, size_t len)
{
    if (p->error) return;
    p->error = cd_printf(p->arena,
                         "failed to load TOML from %s: invalid %s URI \"%.*s\" expect "
                         "io.containerd.x.vx",
                         p->files[p->nfiles - 1].path, what, (int)len, name);
}

static void check_plugin_uris(cd_prediction *p, const cd_node *plugins, const cd_node *m)
{
    for (const cd_node *s = plugins->first; s; s = s->next)
        if (!is_plugin_uri(s->key, s->keylen)) refuse_uri(p, "plugin key", s->key, s->keylen);
    static const char *const lists[][2] = {{"disabled_plugins", "disabled plugin"},
                                           {"required_plugins", "required plugin"}};
    for (size_t l = 0; l < 2; l++) {
        const cd_node *list = cd_child(m, lists[l][0]);
        if (!list || list->is_table || list->value->type != TOML_ARRAY) continue;
        for (size_t i = 0; i < toml_array_size(list->value->u.array); i++) {
            const toml_value *v = toml_array_at(list->value->u.array, i);
            if (v->type == TOML_STRING && !is_plugin_uri(v->u.s, v->len))
                refuse_uri(p, lists[l][1], v->u.s, v->len);
        }
    }
}

static void merge_v1(cd_prediction *p, cd_node *defaults, cd_node *m)
{
    cd_node *plugins = cd_table_new(p->arena, "plugins", 7, origin_of_default());
    int64_t version = 0;
    for (size_t i = 0; i < p->nfiles; i++) {
        cd_file *f = &p->files[i];
        const cd_node *t = f->tree;
        if (f->version) version = f->version;
        merge_top_level(p, m, t);
        cd_node *fp = cd_child(t, "plugins");
        for (cd_node *s = fp && fp->is_table ? fp->first : NULL; s; s = s->next) {
            cd_node *old = cd_childn(plugins, s->key, s->keylen);
            if (old) {
                const cd_node *one[1] = {s};
                char *name = cd_path_text(one, 1);
                char *prefix = cd_printf(p->arena, "plugins.%s", name);
                free(name);
                char *why =
                    cd_printf(p->arena,
                              _("section replaced by %s:%u: containerd < 2.0 replaces whole "
                                "plugin sections"),
                              s->origin.file, s->origin.line);
                lose(p, old, s, prefix, "section-replaced", why);
            }
            cd_set(plugins, cd_clone(p->arena, s));
        }
    }
    p->version = version ? version : 1;
    if (p->family == CD_V1_7 && p->version > 2 && !p->error)
        p->error =
            cd_printf(p->arena, "failed to load TOML from %s: unsupported config version `%lld`",
                      p->files[p->nfiles - 1].path, (long long)p->version);

    if (p->version >= 2) check_plugin_uris(p, plugins, m);
    /* Version 1 looks plugins up by short ID (`cri`), any other version by
     * full URI; sections named the other way are ignored (cases k, k2, k3). */
    bool short_names = p->version == 1;
    const char *cri_name = short_names ? "cri" : CRI_V2;
    cd_node *out_plugins = cd_table_new(p->arena, "plugins", 7, origin_of_default());
    for (cd_node *s = plugins->first; s; s = s->next) {
        bool full = is_full_plugin_name(s->key, s->keylen);
        const cd_node *one[1] = {s};
        char *name = cd_path_text(one, 1);
        char *prefix = cd_printf(p->arena, "plugins.%s", name);
        free(name);
        if (is_v3_cri_name(s->key, s->keylen) || short_names == full)
            cd_note_add(p->arena, &p->lints, s->origin.file, s->origin.line, s->origin.col, prefix,
                        "table-ignored",
                        "containerd %s ignores the whole table %s (see the keys not loaded)",
                        cd_family_name(p->family), prefix);
        if (is_v3_cri_name(s->key, s->keylen)) {
            lose(p, s, NULL, prefix, "unknown-plugin",
                 _("a containerd 2.x (version 3) plugin name: containerd 1.x has no such plugin "
                   "and ignores the section"));
            continue;
        }
        if (short_names == full) {
            lose(p, s, NULL, prefix, "wrong-plugin-naming",
                 short_names ? _("ignored: with config version 1 (no `version = 2`), containerd "
                                 "1.x looks plugins up by short name such as `cri`")
                             : _("ignored: with config version 2, containerd 1.x looks plugins up "
                                 "by full name such as \"io.containerd.grpc.v1.cri\""));
            continue;
        }
        if (s->keylen == strlen(cri_name) && memcmp(s->key, cri_name, s->keylen) == 0) continue;
        cd_set(out_plugins, s);
    }
    cd_node *dcri = cd_path(defaults, "plugins", CRI_V2, NULL);
    cd_node *section = cd_child(plugins, cri_name);
    cd_node *known = section && section->is_table ? known_cri_keys_v1(p, section) : NULL;
    cd_node *cri = decode_cri_v1(p, dcri, known);
    cri->key = CRI_V2;
    cri->keylen = strlen(CRI_V2);
    cd_set(out_plugins, cri);
    cd_set(m, out_plugins);
    p->cri_plugin = CRI_V2;
}

/* ---- 2.0 and 2.1 ---- */

/* A file without `version` is version 1: its short plugin names are lifted
 * to full ones before it is merged; nothing else moves. */
static void lift_v1_names(cd_prediction *p, cd_node *plugins)
{
    for (cd_node *s = plugins ? plugins->first : NULL; s; s = s->next) {
        if (memchr(s->key, '.', s->keylen)) continue;
        if (s->keylen == 3 && memcmp(s->key, "cri", 3) == 0) {
            s->key = CRI_V2;
        } else if (s->keylen > 8 && memcmp(s->key + s->keylen - 8, "-service", 8) == 0) {
            s->key = cd_printf(p->arena, "io.containerd.service.v1.%.*s", (int)s->keylen, s->key);
        } else {
            s->key = cd_printf(p->arena, "io.containerd.grpc.v1.%.*s", (int)s->keylen, s->key);
        }
        s->keylen = strlen(s->key);
    }
}

static void note_dropped(cd_prediction *p, const cd_node *src, const char *prefix,
                         const cd_node *existing)
{
    char *at = existing->origin.file
                   ? cd_printf(p->arena, "%s:%u", existing->origin.file, existing->origin.line)
                   : cd_strdup(p->arena, _("the defaults"));
    char *why = cd_printf(p->arena,
                          _("dropped by the v2 -> v3 migration: plugins.\"%s\" already has %.*s "
                            "(%s), and the migration never overwrites"),
                          CRI_RUNTIME, (int)existing->keylen, existing->key, at);
    lose(p, src, NULL, prefix, "migration-dropped", why);
}

/* The v2 -> v3 CRI migration, once over the merged plugins (merged version
 * below 3): runtime keys are copied only where the v3 table lacks them, image
 * keys overwrite the images plugin, streaming keys stay behind. */
static void migrate_v2_to_v3(cd_prediction *p, cd_node *plugins)
{
    cd_node *src = cd_child(plugins, CRI_V2);
    if (!src || !src->is_table) return;
    cd_node *rt = cd_table_at(p->arena, plugins, CRI_RUNTIME, src->origin);
    cd_node *img = cd_table_at(p->arena, plugins, CRI_IMAGES, src->origin);
    if (!rt || !img) return;
    cd_node *keep = cd_table_new(p->arena, CRI_V2, strlen(CRI_V2), src->origin);
    for (cd_node *k = src->first, *next; k; k = next) {
        next = k->next;
        char *prefix = cd_printf(p->arena, "plugins.\"" CRI_V2 "\".%.*s", (int)k->keylen, k->key);
        if (in_list(streaming_keys, k->key, k->keylen)) {
            cd_set(keep, cd_clone(p->arena, k));
        } else if (k->keylen == 13 && memcmp(k->key, "sandbox_image", 13) == 0) {
            cd_node *pinned = cd_table_at(p->arena, img, "pinned_images", k->origin);
            cd_node *c = cd_clone(p->arena, k);
            if (pinned && c) {
                c->key = "sandbox";
                c->keylen = 7;
                cd_set(pinned, c);
            }
        } else if (in_list(image_keys, k->key, k->keylen)) {
            cd_set(img, cd_clone(p->arena, k));
        } else if (k->keylen == 10 && memcmp(k->key, "containerd", 10) == 0 && k->is_table) {
            cd_node *dctr = cd_table_at(p->arena, rt, "containerd", k->origin);
            for (cd_node *c = k->first; dctr && c; c = c->next) {
                char *sub = cd_printf(p->arena, "%s.%.*s", prefix, (int)c->keylen, c->key);
                cd_node *existing = cd_childn(dctr, c->key, c->keylen);
                if (in_list(image_keys_under_containerd, c->key, c->keylen))
                    cd_set(img, cd_clone(p->arena, c));
                else if (existing)
                    note_dropped(p, c, sub, existing);
                else
                    cd_set(dctr, cd_clone(p->arena, c));
            }
        } else {
            cd_node *existing = cd_childn(rt, k->key, k->keylen);
            if (existing)
                note_dropped(p, k, prefix, existing);
            else
                cd_set(rt, cd_clone(p->arena, k));
        }
    }
    cd_set(plugins, keep);
    /* sandbox_mode was renamed sandboxer. */
    cd_node *rts = cd_path(rt, "containerd", "runtimes", NULL);
    for (cd_node *r = rts ? rts->first : NULL; r; r = r->next) {
        cd_node *mode = r->is_table ? cd_child(r, "sandbox_mode") : NULL;
        if (mode) {
            mode->key = "sandboxer";
            mode->keylen = 9;
        }
    }
    /* 2.1 reads a list of CNI binary directories. */
    cd_node *cni = cd_child(rt, "cni");
    cd_node *bin_dir = p->family == CD_V2_1 ? cd_child(cni, "bin_dir") : NULL;
    if (bin_dir && !bin_dir->is_table && bin_dir->value->type == TOML_STRING) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (f) {
            fputc('[', f);
            toml_emit_value(bin_dir->value, f);
            fputc(']', f);
            fclose(f);
            cd_node *dirs = cd_leaf_from_text(p, "bin_dirs", buf, bin_dir->origin);
            if (dirs) cd_set(cni, dirs);
            free(buf);
            cd_take(cni, "bin_dir");
        }
    }
}

/* After the split, the CRI gRPC plugin only knows the streaming keys; 2.x
 * warns "Ignoring unknown key in TOML for plugin" and drops the rest. */
static void drop_unknown_cri_keys(cd_prediction *p, cd_node *plugins)
{
    cd_node *cri = cd_child(plugins, CRI_V2);
    if (!cri || !cri->is_table) return;
    for (cd_node *k = cri->first, *next; k; k = next) {
        next = k->next;
        if (in_list(streaming_keys, k->key, k->keylen)) continue;
        char *prefix = cd_printf(p->arena, "plugins.\"" CRI_V2 "\".%.*s", (int)k->keylen, k->key);
        lose(p, k, NULL, prefix, "unknown-plugin-key",
             p->version >= 3
                 ? _("ignored (\"Ignoring unknown key in TOML for plugin\"): the merged config is "
                     "version 3, so version 2 CRI keys are not migrated")
                 : _("ignored (\"Ignoring unknown key in TOML for plugin\")"));
        cd_take(cri, gp_arena_strndup(p->arena, k->key, k->keylen));
    }
}

static void merge_v2(cd_prediction *p, cd_node *defaults, cd_node *m)
{
    cd_node *plugins = cd_table_new(p->arena, "plugins", 7, origin_of_default());
    int64_t version = 3;
    for (size_t i = 0; i < p->nfiles; i++) {
        cd_file *f = &p->files[i];
        const cd_node *t = f->tree;
        cd_node *fp = cd_child(t, "plugins");
        /* Lifting renames keys: work on a copy, the file's tree stays as written. */
        if (fp && (f->version == 0 || f->version == 1)) {
            fp = cd_clone(p->arena, fp);
            lift_v1_names(p, fp);
        }
        if (f->version >= 2) version = f->version;
        merge_top_level(p, m, t);
        if (fp && fp->is_table) cd_merge_deep(p->arena, plugins, fp);
    }
    p->version = version;
    if (version > 3 && !p->error)
        p->error = cd_printf(p->arena,
                             "expected containerd config version equal to or less than `3`, got "
                             "`%lld`",
                             (long long)version);
    if (version < 3) migrate_v2_to_v3(p, plugins);
    drop_unknown_cri_keys(p, plugins);
    /* The runtime plugin decodes strictly: what is no field of it is
     * dropped with a warning (case p: a v2 key the migration carried). */
    cd_node *runtime = cd_child(plugins, CRI_RUNTIME);
    if (runtime && runtime->is_table) {
        const char *why = _("not a setting of the CRI runtime plugin: ignored (\"Ignoring unknown "
                            "key in TOML for plugin\")");
        drop_unknown_keys(p, runtime, false, "plugins.\"" CRI_RUNTIME "\"", why);
        cd_node *ctr = cd_child(runtime, "containerd");
        if (ctr && ctr->is_table)
            drop_unknown_keys(p, ctr, true, "plugins.\"" CRI_RUNTIME "\".containerd", why);
    }

    /* Decode over the defaults: maps merge key by key, so the default runc
     * keeps its fields under what the files set; a new runtime starts empty. */
    cd_node *out = cd_clone(p->arena, cd_child(defaults, "plugins"));
    cd_merge_deep(p->arena, out, plugins);
    cd_node *rts = cd_path(out, CRI_RUNTIME, "containerd", "runtimes", NULL);
    for (cd_node *rt = rts ? rts->first : NULL; rt; rt = rt->next)
        if (rt->is_table && !cd_child(rt, "runtime_type")) {
            cd_node *empty = cd_leaf_from_text(p, "runtime_type", "\"\"", origin_of_default());
            if (empty) cd_set(rt, empty);
        }
    cd_set(m, out);
    p->cri_plugin = CRI_RUNTIME;
}

/* ---- proxy plugins ---- */

/* A proxy plugin without `type` panics containerd at start (case n). */
static void check_proxy_plugins(cd_prediction *p, const cd_node *m)
{
    const cd_node *pp = cd_child(m, "proxy_plugins");
    for (const cd_node *e = pp ? pp->first : NULL; e; e = e->next) {
        const cd_node *type = e->is_table ? cd_child(e, "type") : NULL;
        if (type && !type->is_table && !is_zero(type->value)) continue;
        if (!p->error) p->error = "panic: plugin: no type";
        cd_note_add(p->arena, &p->lints, e->origin.file, e->origin.line, e->origin.col, NULL,
                    "proxy-plugin-no-type",
                    "proxy plugin %.*s has no `type` (a later file replaced the whole entry?): "
                    "containerd panics at start with \"plugin: no type\"",
                    (int)e->keylen, e->key);
    }
}

/* ---- values a later file overrode ---- */

/* Merged, not overridden: a later file's list adds to these. */
static const char *const merged_top_level[] = {"version", "imports", "disabled_plugins",
                                               "required_plugins", NULL};

static bool noted_lost(const cd_prediction *p, const cd_node *leaf)
{
    for (size_t i = 0; i < p->lost.count; i++) {
        const cd_note *n = &p->lost.items[i];
        if (n->file == leaf->origin.file && n->line == leaf->origin.line &&
            n->col == leaf->origin.col)
            return true;
    }
    return false;
}

/* The leaf at `path` in a file's tree, as written; NULL if none. */
static const cd_node *leaf_at(const cd_node *tree, const cd_node *const *path, size_t depth)
{
    const cd_node *n = tree;
    for (size_t i = 0; i < depth && n; i++)
        n = n->is_table ? cd_childn(n, path[i]->key, path[i]->keylen) : NULL;
    return n && !n->is_table ? n : NULL;
}

typedef struct override_ctx {
    cd_prediction *p;
    size_t file; /* the file whose leaves are walked */
} override_ctx;

static void note_if_overridden(const cd_node *leaf, const cd_node *const *path, size_t depth,
                               void *ctx)
{
    override_ctx *oc = ctx;
    cd_prediction *p = oc->p;
    if (depth == 1 && in_list(merged_top_level, path[0]->key, path[0]->keylen)) return;
    if (noted_lost(p, leaf)) return;
    /* The last later file that set the same key, where that value counted. */
    const cd_node *winner = NULL;
    for (size_t j = p->nfiles; j-- > oc->file + 1 && !winner;) {
        const cd_node *w = leaf_at(p->files[j].tree, path, depth);
        if (w && !noted_lost(p, w)) winner = w;
    }
    if (!winner || toml_value_equal(leaf->value, winner->value)) return;
    char *value = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&value, &len);
    if (!f) return;
    toml_emit_value(winner->value, f);
    fclose(f);
    char *key = cd_path_text(path, depth);
    cd_note_add(p->arena, &p->lost, leaf->origin.file, leaf->origin.line, leaf->origin.col, key,
                "overridden", "overridden by %s:%u, which sets %s", winner->origin.file,
                winner->origin.line, value);
    free(key);
    free(value);
}

/* A key written in one file and set again, to another value, by a later
 * one is written but not loaded, like a key a replaced section took along
 * (issue 16, case 9: a main-file snapshotter under the drop-in's). Run
 * after the merge, so that a later value that did not count itself (a zero
 * top-level value, a section containerd ignores) overrides nothing. */
static void note_overridden(cd_prediction *p)
{
    for (size_t i = 0; i + 1 < p->nfiles; i++) {
        override_ctx oc = {p, i};
        cd_walk_leaves(p->files[i].tree, note_if_overridden, &oc);
    }
}

void cd_merge(cd_prediction *p)
{
    cd_node *defaults = cd_defaults(p);
    if (!defaults) return;
    /* Start from the default top level; a file's values win by the rules. */
    cd_node *m = cd_table_new(p->arena, "", 0, origin_of_default());
    for (cd_node *d = defaults->first; d; d = d->next)
        if (!(d->keylen == 7 && memcmp(d->key, "plugins", 7) == 0))
            cd_set(m, cd_clone(p->arena, d));
    if (cd_is_v1(p->family))
        merge_v1(p, defaults, m);
    else
        merge_v2(p, defaults, m);
    set_imports(p, m);
    check_proxy_plugins(p, m);
    note_overridden(p);
    p->config = m;
}
