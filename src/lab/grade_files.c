/* nftw() and realpath() are X/Open functions. */
#define _XOPEN_SOURCE 700
#include "lab/grade_files.h"

#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "containerd/containerd.h"
#include "containerd/observed.h"
#include "containerd/render.h"
#include "lab/incident_files.h"
#include "lab/outfile_internal.h"
#include "lab/workspace.h"
#include "toml/toml.h"
#include "util/buf.h"
#include "util/contain.h"
#include "util/file.h"
#include "util/i18n.h"
#include "util/msg.h"

#define CRI "io.containerd.grpc.v1.cri"

/* ---- small text helpers ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted, without duplicates, joined with ','; malloc'd. */
static char *join_sorted(const char **names, size_t n)
{
    qsort(names, n, sizeof *names, cmp_str);
    gp_buf out = {0};
    for (size_t i = 0; i < n; i++) {
        if (i && strcmp(names[i - 1], names[i]) == 0) continue;
        if (out.len) gp_buf_addc(&out, ',');
        gp_buf_add(&out, names[i]);
    }
    return gp_buf_take(&out);
}

/* A learner's list value: items trimmed, order and repeats ignored. */
static char *normalize_list(const char *value)
{
    char *copy = strdup(value);
    size_t n = 1;
    for (const char *c = value; *c; c++)
        n += *c == ',';
    const char **items = calloc(n, sizeof *items);
    char *out = NULL;
    if (copy && items) {
        size_t count = 0;
        for (char *tok = copy, *next; tok; tok = next) {
            next = strchr(tok, ',');
            if (next) *next++ = '\0';
            while (*tok == ' ' || *tok == '\t')
                tok++;
            char *end = tok + strlen(tok);
            while (end > tok && (end[-1] == ' ' || end[-1] == '\t'))
                *--end = '\0';
            if (*tok) items[count++] = tok;
        }
        out = join_sorted(items, count);
    }
    free(items);
    free(copy);
    return out;
}

static char *trimmed(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return strndup(s, n);
}

static void where_at(char *buf, size_t cap, const char *file, unsigned line, unsigned col)
{
    if (line && col)
        snprintf(buf, cap, "%s:%u:%u", file, line, col);
    else if (line)
        snprintf(buf, cap, "%s:%u", file, line);
    else
        snprintf(buf, cap, "%s", file);
}

/* Why a file cannot be read, in the reader's language for the usual
 * cases; the C library's words otherwise. */
static const char *file_problem(int e)
{
    switch (e) {
    case ENOENT:
        return _("no such file");
    case EACCES:
        return _("permission denied");
    case EISDIR:
        return _("a directory, not a file");
    default:
        return strerror(e);
    }
}

static const char *const HINT_CREATE =
    N_("Create the file at the path the step names, inside the lab's workspace.");

/* ---- steps 1 and 2: keys of a parsed file ---- */

/* One expected key: a path of table names and the value it must hold. */
typedef struct key_rule {
    const char *code;
    const char *path[8]; /* NULL-terminated */
    toml_type type;
    const char *s;
    bool b;
    int64_t i;
    const char *hint; /* for a wrong value; other mistakes have their own */
} key_rule;

static size_t path_len(const char *const *path)
{
    size_t n = 0;
    while (n < 8 && path[n])
        n++;
    return n;
}

/* A table path as a TOML key: plugins."io.containerd.grpc.v1.cri".x */
static void path_text(const char *const *path, size_t n, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used + 1 < cap; i++) {
        if (i) buf[used++] = '.';
        used += toml_format_key(path[i], strlen(path[i]), buf + used, cap - used);
    }
    if (used >= cap) buf[cap - 1] = '\0';
}

static const char *type_name(int type)
{
    switch (type) {
    case TOML_STRING:
        return _("string");
    case TOML_INTEGER:
        return _("integer");
    case TOML_FLOAT:
        return _("float");
    case TOML_BOOL:
        return _("boolean");
    case TOML_ARRAY:
        return _("array");
    case TOML_TABLE:
        return _("table");
    default:
        return _("date-time");
    }
}

/* A value as TOML writes it, with its type when that is not the wanted one
 * (`"true" (string)`: the classic mistake reads like the right answer). */
static void value_text(const toml_value *v, int want_type, char *buf, size_t cap)
{
    FILE *f = fmemopen(buf, cap, "w");
    if (!f) {
        snprintf(buf, cap, "?");
        return;
    }
    if (v->type == TOML_TABLE)
        fputs("{...}", f);
    else
        toml_emit_value(v, f);
    if (v->type != want_type) fprintf(f, " (%s)", type_name(v->type));
    fclose(f);
    buf[cap - 1] = '\0';
}

static void expected_text(const key_rule *r, char *buf, size_t cap)
{
    char key[512];
    path_text(r->path, path_len(r->path), key, sizeof key);
    if (r->type == TOML_STRING)
        snprintf(buf, cap, "%s = \"%s\"", key, r->s);
    else if (r->type == TOML_BOOL)
        snprintf(buf, cap, "%s = %s (%s)", key, r->b ? "true" : "false", type_name(TOML_BOOL));
    else
        snprintf(buf, cap, "%s = %" PRId64 " (%s)", key, r->i, type_name(TOML_INTEGER));
}

static bool value_matches(const key_rule *r, const toml_value *v)
{
    if (v->type != r->type) return false;
    if (r->type == TOML_STRING) return strlen(r->s) == v->len && memcmp(r->s, v->u.s, v->len) == 0;
    if (r->type == TOML_BOOL) return v->u.b == r->b;
    return v->u.i == r->i;
}

/* A key found somewhere else than where it belongs. */
typedef struct found_key {
    char table[512]; /* the table it is in, as a TOML key ("" for the top level) */
    toml_pos pos;
    const toml_value *value;
} found_key;

/* Depth-first through the document's tables: the first key `name` whose
 * table path is not `skip`. */
static bool find_key_in(const toml_table *t, const char *name, const char **path, size_t depth,
                        const char *skip, found_key *out)
{
    for (size_t i = 0; i < toml_table_size(t); i++) {
        const toml_entry *e = toml_table_entry(t, i);
        if (strcmp(e->key, name) == 0) {
            path_text(path, depth, out->table, sizeof out->table);
            if (strcmp(out->table, skip) != 0) {
                out->pos = toml_entry_pos(t, e);
                out->value = &e->value;
                return true;
            }
        }
        if (e->value.type == TOML_TABLE && depth < 15) {
            path[depth] = e->key;
            if (find_key_in(e->value.u.table, name, path, depth + 1, skip, out)) return true;
        }
    }
    return false;
}

static bool find_key_elsewhere(const toml_doc *doc, const char *name, const char *skip,
                               found_key *out)
{
    const char *path[16];
    memset(out, 0, sizeof *out);
    return find_key_in(toml_root(doc), name, path, 0, skip, out);
}

/* The hint for a value of the wrong type: a quoted boolean or number reads
 * like the right answer, so it gets words of its own. */
static void type_hint(const key_rule *r, const toml_value *v, char *buf, size_t cap)
{
    const char *key = r->path[path_len(r->path) - 1];
    if (v->type == TOML_STRING && r->type == TOML_BOOL)
        gp_msg_snprintf(buf, cap,
                        _("%s is written in quotes, which makes it a string; containerd wants a "
                          "TOML boolean here, true or false without quotes."),
                        key);
    else if (v->type == TOML_STRING && r->type == TOML_INTEGER)
        gp_msg_snprintf(buf, cap,
                        _("%s is written in quotes, which makes it a string; containerd wants a "
                          "TOML integer here, the digits without quotes."),
                        key);
    else
        gp_msg_snprintf(buf, cap, _("%s must be a TOML %s; this file gives it a %s."), key,
                        type_name(r->type), type_name(v->type));
}

/* Evaluates one rule. `where` is the key when it exists; when it is absent
 * but written in another table, that place, and a hint that says so;
 * else the deepest table on its path that exists. */
static void check_key(json_t *conds, const toml_doc *doc, const key_rule *r)
{
    const toml_table *t = toml_root(doc);
    size_t n = path_len(r->path);
    char where[1024], expected[1024], observed[1024], hint[1024];
    snprintf(observed, sizeof observed, "%s", _("absent"));
    snprintf(hint, sizeof hint, "%s", _(r->hint));
    toml_pos pos = {toml_doc_file(doc), 0, 0};
    const toml_entry *e = NULL;
    bool blocked = false;
    for (size_t i = 0; t && i < n; i++) {
        e = toml_table_find(t, r->path[i], strlen(r->path[i]));
        if (!e) break;
        pos = toml_entry_pos(t, e);
        if (i + 1 == n) break;
        t = e->value.type == TOML_TABLE ? e->value.u.table : NULL;
        if (!t) {
            gp_msg_snprintf(observed, sizeof observed, _("%s is a %s, not a table"), r->path[i],
                            type_name(e->value.type));
            e = NULL;
            blocked = true;
        }
    }
    bool found = e && t;
    expected_text(r, expected, sizeof expected);
    if (found) {
        value_text(&e->value, r->type, observed, sizeof observed);
        if (e->value.type != r->type) type_hint(r, &e->value, hint, sizeof hint);
    } else if (!blocked) {
        char table[512];
        found_key other;
        path_text(r->path, n - 1, table, sizeof table);
        if (find_key_elsewhere(doc, r->path[n - 1], table, &other)) {
            char value[256];
            value_text(other.value, r->type, value, sizeof value);
            pos = other.pos;
            if (other.table[0])
                gp_msg_snprintf(observed, sizeof observed, _("%s = %s in the table [%s]"),
                                r->path[n - 1], value, other.table);
            else
                gp_msg_snprintf(observed, sizeof observed, _("%s = %s at the top level"),
                                r->path[n - 1], value);
            if (n == 1)
                gp_msg_snprintf(hint, sizeof hint,
                                _("%s is a top-level key: written after a [table] header it "
                                  "belongs to that table, where containerd does not look. Write "
                                  "it before the first header."),
                                r->path[0]);
            else
                gp_msg_snprintf(hint, sizeof hint,
                                _("containerd reads %s only in the table [%s]; where it is "
                                  "written now, nothing reads it."),
                                r->path[n - 1], table);
        }
    }
    where_at(where, sizeof where, pos.file, pos.line, pos.col);
    lab_condition(conds, r->code, found && value_matches(r, &e->value), where, expected, observed,
                  hint);
}

/* The file, or the one condition that says why it cannot be judged. */
static toml_doc *parse_or_report(json_t *conds, const char *path, const char *prefix)
{
    char code[64];
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(code, sizeof code, "%s.exists", prefix);
        lab_condition(conds, code, false, path, _("the file"), file_problem(errno), HINT_CREATE);
        return NULL;
    }
    gp_error err = {0};
    toml_doc *doc = toml_parse_file(path, &err);
    if (!doc) {
        char where[1024];
        where_at(where, sizeof where, path, err.line, err.col);
        snprintf(code, sizeof code, "%s.parse", prefix);
        lab_condition(conds, code, false, where, "TOML 1.0", err.text,
                      N_("containerd refuses a file that is not valid TOML: fix the first error "
                         "the parser reports, then look again."));
    }
    return doc;
}

static const char *const HINT_SYSTEMD_CGROUP =
    N_("SystemdCgroup tells the runc shim to let systemd manage the container's cgroups, as the "
       "kubelet does; it is an option of the handler.");

static void check_imports(json_t *conds, const toml_doc *doc)
{
    static const char *const suffix = "conf.d/*.toml";
    const toml_table *root = toml_root(doc);
    const toml_entry *e = toml_table_find(root, "imports", 7);
    char where[1024], observed[1024];
    const char *hint = _("containerd loads the files that match the items of imports: one item "
                         "must match the drop-in directory's *.toml files.");
    snprintf(observed, sizeof observed, "%s", _("absent"));
    toml_pos pos = e ? toml_entry_pos(root, e) : (toml_pos){toml_doc_file(doc), 0, 0};
    bool ok = false;
    found_key other;
    if (e) {
        value_text(&e->value, TOML_ARRAY, observed, sizeof observed);
        if (e->value.type != TOML_ARRAY)
            hint = _("imports is an array of strings, in square brackets, even with one item.");
    } else if (find_key_elsewhere(doc, "imports", "", &other)) {
        pos = other.pos;
        gp_msg_snprintf(observed, sizeof observed, _("imports in the table [%s]"), other.table);
        hint = _("imports is a top-level key: written after a [table] header it belongs to that "
                 "table, where containerd does not look. Write it before the first header.");
    }
    if (e && e->value.type == TOML_ARRAY) {
        const toml_array *a = e->value.u.array;
        for (size_t i = 0; i < toml_array_size(a); i++) {
            const toml_value *v = toml_array_at(a, i);
            size_t n = strlen(suffix);
            if (v->type == TOML_STRING && v->len >= n &&
                memcmp(v->u.s + v->len - n, suffix, n) == 0)
                ok = true;
        }
    }
    where_at(where, sizeof where, pos.file, pos.line, pos.col);
    lab_condition(conds, "main.imports", ok, where, "imports = [..., \"...conf.d/*.toml\"]",
                  observed, hint);
}

static json_t *grade_main(const char *root)
{
    json_t *conds = json_array();
    char *path = lab_path(root, LAB_MAIN_CONFIG);
    toml_doc *doc = path ? parse_or_report(conds, path, "main") : NULL;
    if (doc) {
        static const key_rule version = {
            "main.version",
            {"version"},
            TOML_INTEGER,
            NULL,
            false,
            2,
            N_("version tells containerd which schema the plugin names follow: the schema of "
               "io.containerd.grpc.v1.cri is version 2.")};
        check_key(conds, doc, &version);
        check_imports(conds, doc);
        static const key_rule rules[] = {
            {"main.default_runtime",
             {"plugins", CRI, "containerd", "default_runtime_name"},
             TOML_STRING,
             "runc",
             false,
             0,
             N_("The CRI plugin runs pods that name no RuntimeClass with the handler "
                "default_runtime_name names: on this node that is runc.")},
            {"main.runc.runtime_type",
             {"plugins", CRI, "containerd", "runtimes", "runc", "runtime_type"},
             TOML_STRING,
             "io.containerd.runc.v2",
             false,
             0,
             N_("Each runtime handler is a table under containerd.runtimes; its runtime_type "
                "names the shim containerd starts for it, the runc v2 shim here.")},
            {"main.runc.systemd_cgroup",
             {"plugins", CRI, "containerd", "runtimes", "runc", "options", "SystemdCgroup"},
             TOML_BOOL,
             NULL,
             true,
             0,
             HINT_SYSTEMD_CGROUP},
        };
        for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
            check_key(conds, doc, &rules[i]);
    }
    toml_free(doc);
    free(path);
    return lab_step_result(1, lab_step_title(1), conds);
}

static json_t *grade_dropin(const char *root)
{
    json_t *conds = json_array();
    char *path = lab_path(root, LAB_DROPIN);
    toml_doc *doc = path ? parse_or_report(conds, path, "dropin") : NULL;
    static const key_rule rules[] = {
        {"dropin.nvidia.runtime_type",
         {"plugins", CRI, "containerd", "runtimes", "nvidia", "runtime_type"},
         TOML_STRING,
         "io.containerd.runc.v2",
         false,
         0,
         N_("The toolkit's handler runs through the same runc v2 shim as runc does; only the "
            "binary the shim starts differs.")},
        {"dropin.nvidia.binary_name",
         {"plugins", CRI, "containerd", "runtimes", "nvidia", "options", "BinaryName"},
         TOML_STRING,
         "/usr/bin/nvidia-container-runtime",
         false,
         0,
         N_("BinaryName, in the handler's options, is the program the shim runs instead of "
            "runc: the toolkit puts its own runtime wrapper there, by absolute path.")},
        {"dropin.nvidia.systemd_cgroup",
         {"plugins", CRI, "containerd", "runtimes", "nvidia", "options", "SystemdCgroup"},
         TOML_BOOL,
         NULL,
         true,
         0,
         HINT_SYSTEMD_CGROUP},
    };
    for (size_t i = 0; doc && i < sizeof rules / sizeof *rules; i++)
        check_key(conds, doc, &rules[i]);
    toml_free(doc);
    free(path);
    return lab_step_result(2, lab_step_title(2), conds);
}

/* ---- step 3: the verdict ---- */

void lab_merge_facts_free(lab_merge_facts *f)
{
    free(f->main_runtimes);
    free(f->dropin_runtimes);
    free(f->conflict_table);
    memset(f, 0, sizeof *f);
}

static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Parses a file only to report its first error with a position. */
static int check_parses(const char *path, gp_error *err)
{
    toml_doc *doc = toml_parse_file(path, err);
    toml_free(doc);
    return doc ? 0 : -1;
}

/* -1 with err unless the main config's imports reach the drop-in. */
static int check_reaches(const cd_prediction *p, const char *dropin, gp_error *err)
{
    for (size_t i = 1; i < p->nfiles; i++)
        if (same_file(p->files[i].read_path, dropin)) return 0;
    gp_error_set(err, p->nfiles ? p->files[0].path : NULL, 0, 0,
                 "the imports of the main config do not reach %s", dropin);
    return -1;
}

cd_prediction *lab_merge_prediction(const char *root, gp_error *err)
{
    char *main_path = lab_path(root, LAB_MAIN_CONFIG);
    char *dropin = lab_path(root, LAB_DROPIN);
    /* The module reads ROOT/... as already under the root only when ROOT
     * has no trailing slash. */
    char *bare_root = strdup(root);
    cd_prediction *p = NULL;
    if (!main_path || !dropin || !bare_root)
        gp_error_set(err, root, 0, 0, "out of memory");
    else if (check_parses(main_path, err) == 0 && check_parses(dropin, err) == 0) {
        size_t n = strlen(bare_root);
        while (n > 1 && bare_root[n - 1] == '/')
            bare_root[--n] = '\0';
        cd_options opt = {.config_path = main_path, .root = bare_root, .family = CD_V1_7};
        p = cd_predict(&opt, err);
        if (p && check_reaches(p, dropin, err) != 0) {
            cd_prediction_free(p);
            p = NULL;
        }
    }
    free(bare_root);
    free(main_path);
    free(dropin);
    return p;
}

int lab_merge_predict(const char *root, lab_merge_facts *out, gp_error *err)
{
    memset(out, 0, sizeof *out);
    cd_prediction *p = lab_merge_prediction(root, err);
    if (!p) return -1;
    size_t ndropin = 0;
    const char **dropin = cd_dropin_runtimes(p, &ndropin);
    const char **main_names = calloc(p->files[0].nruntimes + 1, sizeof *main_names);
    if (main_names && p->files[0].nruntimes)
        memcpy(main_names, p->files[0].runtimes, p->files[0].nruntimes * sizeof *main_names);
    out->main_runtimes = main_names ? join_sorted(main_names, p->files[0].nruntimes) : NULL;
    out->dropin_runtimes = dropin ? join_sorted(dropin, ndropin) : NULL;
    out->conflict = p->conflict;
    out->conflict_table = strdup(p->conflict ? p->conflict_table : "");
    free(main_names);
    free(dropin);
    cd_prediction_free(p);
    if (!out->main_runtimes || !out->dropin_runtimes || !out->conflict_table) {
        lab_merge_facts_free(out);
        gp_error_set(err, root, 0, 0, "out of memory");
        return -1;
    }
    return 0;
}

char *lab_loaded_runtimes(const char *root, gp_error *err)
{
    char *path = lab_path(root, LAB_EVIDENCE_DUMP);
    cd_observed o;
    char *out = NULL;
    if (!path)
        gp_error_set(err, root, 0, 0, "out of memory");
    else if (cd_observed_read(path, &o, err) == 0) {
        out = join_sorted(o.names, o.count);
        cd_observed_free(&o);
    }
    free(path);
    return out;
}

static const char *const merge_keys[] = {"MAIN_RUNTIMES", "DROPIN_RUNTIMES", "CONFLICT",
                                         "CONFLICT_TABLE", "LOADED_RUNTIMES"};

static void check_format(json_t *conds, const lab_outfile *f)
{
    size_t nkeys = sizeof merge_keys / sizeof *merge_keys;
    char where[1024], observed[1024] = "";
    unsigned line = 0;
    for (size_t i = 0; i < f->count && !observed[0]; i++) {
        const lab_line *l = &f->lines[i];
        if (i >= nkeys)
            gp_msg_snprintf(observed, sizeof observed, _("an extra line: %s"), l->text);
        else if (!l->key || strcmp(l->key, merge_keys[i]) != 0)
            gp_msg_snprintf(observed, sizeof observed, _("%s where %s= belongs"), l->text,
                            merge_keys[i]);
        line = l->number;
    }
    if (!observed[0] && f->count < nkeys)
        gp_msg_snprintf(observed, sizeof observed, _("%zu lines"), f->count);
    where_at(where, sizeof where, f->path, observed[0] ? line : 0, 0);
    lab_condition(conds, "merge.format", !observed[0], where,
                  "MAIN_RUNTIMES= DROPIN_RUNTIMES= CONFLICT= CONFLICT_TABLE= LOADED_RUNTIMES=",
                  observed[0] ? observed : _("five KEY=VALUE lines in order"),
                  N_("Five KEY=VALUE lines, one per line, in the order the step gives them."));
}

/* A learner's line by key: where it is, and what it says (for `observed`). */
static const lab_line *merge_line(const lab_outfile *f, const char *key, char *where, size_t wcap,
                                  char *got, size_t gcap)
{
    const lab_line *l = lab_outfile_find(f, key);
    where_at(where, wcap, f->path, l ? l->number : 0, 0);
    if (l)
        snprintf(got, gcap, "%s=%s", key, l->value);
    else
        gp_msg_snprintf(got, gcap, _("no %s= line"), key);
    return l;
}

/* A list line (runtime names) against its expected value (NULL: unknown,
 * because the inputs could not be read). */
static void check_list(json_t *conds, const lab_outfile *f, const char *code, const char *key,
                       const char *expected, const char *hint)
{
    char where[1024], want[1024], got[1024];
    const lab_line *l = merge_line(f, key, where, sizeof where, got, sizeof got);
    char *seen = l ? normalize_list(l->value) : NULL;
    snprintf(want, sizeof want, "%s=%s", key, expected ? expected : "?");
    lab_condition(conds, code, seen && expected && strcmp(seen, expected) == 0, where, want, got,
                  hint);
    free(seen);
}

/* CONFLICT=: yes or no, in any case. */
static void check_conflict(json_t *conds, const lab_outfile *f, const char *expected)
{
    char where[1024], want[1024], got[1024];
    const lab_line *l = merge_line(f, "CONFLICT", where, sizeof where, got, sizeof got);
    char *seen = l ? trimmed(l->value) : NULL;
    const char *hint = N_("Two files collide when both put content inside one table, even under "
                          "different keys: containerd before 2.0 keeps only the later file's "
                          "whole plugin section.");
    if (seen && strcasecmp(seen, "yes") != 0 && strcasecmp(seen, "no") != 0)
        hint = N_("CONFLICT is yes or no.");
    snprintf(want, sizeof want, "CONFLICT=%s", expected ? expected : "yes|no");
    lab_condition(conds, "merge.conflict", seen && expected && strcasecmp(seen, expected) == 0,
                  where, want, got, hint);
    free(seen);
}

/* The parts of a dotted TOML key, or -1 with err. A table header's
 * brackets around it are allowed: [a.b] names the table a.b. */
static int key_parts(const char *text, char ***parts, size_t **lens, gp_error *err)
{
    char *t = trimmed(text);
    if (!t) return -1;
    size_t n = strlen(t);
    if (n >= 2 && t[0] == '[' && t[n - 1] == ']' && t[1] != '[') {
        t[n - 1] = '\0';
        memmove(t, t + 1, n - 1);
    }
    int rc = toml_key_split(t, parts, lens, err);
    free(t);
    return rc;
}

static bool parts_equal(char **a, size_t *alen, int an, char **b, size_t *blen, int bn)
{
    if (an != bn) return false;
    for (int i = 0; i < an; i++)
        if (alen[i] != blen[i] || memcmp(a[i], b[i], alen[i]) != 0) return false;
    return true;
}

/* The parts joined with '.', unquoted: the same text means the same dots. */
static char *joined(char **parts, size_t *lens, int n)
{
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += lens[i] + 1;
    char *s = malloc(len);
    if (!s) return NULL;
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (i) s[at++] = '.';
        memcpy(s + at, parts[i], lens[i]);
        at += lens[i];
    }
    s[at] = '\0';
    return s;
}

/* CONFLICT_TABLE= read as a TOML key with the TOML parser's own key
 * grammar: any spelling of the same key (other quotes, whitespace around
 * the dots, a [header]'s brackets) is the same answer. The hint tells a
 * key that is too shallow, too deep or split at the plugin name's dots
 * from another. */
static void check_conflict_table(json_t *conds, const lab_outfile *f, const char *expected)
{
    char where[1024], want[1024], got[1024];
    const lab_line *l = merge_line(f, "CONFLICT_TABLE", where, sizeof where, got, sizeof got);
    snprintf(want, sizeof want, "CONFLICT_TABLE=%s", expected ? expected : "?");
    const char *hint =
        N_("Walk down from plugins: the collision is the deepest table both files put content "
           "in, written as a TOML key with the plugin name in quotes.");
    char hintbuf[1024];
    bool ok = false;
    char **wp = NULL, **gp = NULL;
    size_t *wl = NULL, *gl = NULL;
    gp_error e = {0};
    int wn = expected && *expected ? key_parts(expected, &wp, &wl, &e) : -1;
    int gn = l && wn > 0 ? key_parts(l->value, &gp, &gl, &e) : -1;
    if (l && wn > 0 && gn < 0) {
        char *v = trimmed(l->value);
        gp_msg_snprintf(hintbuf, sizeof hintbuf,
                        v && *v ? _("CONFLICT_TABLE is not a TOML key: %s")
                                : _("CONFLICT_TABLE is empty: %s"),
                        e.text);
        free(v);
        hint = hintbuf;
    } else if (gn > 0) {
        ok = parts_equal(wp, wl, wn, gp, gl, gn);
        char *wj = joined(wp, wl, wn), *gj = joined(gp, gl, gn);
        int shorter = gn < wn ? gn : wn;
        bool prefix = parts_equal(wp, wl, shorter, gp, gl, shorter);
        if (ok) {
        } else if (wj && gj && strcmp(wj, gj) == 0)
            hint = N_("The plugin's name io.containerd.grpc.v1.cri is one key: unquoted, its dots "
                      "split it into five nested tables. Quote it.");
        else if (prefix && gn < wn)
            hint = N_("Both files put content in that table, but in one below it as well: go "
                      "deeper.");
        else if (prefix && gn > wn)
            hint = N_("Only one of the files puts content in that table: the collision is where "
                      "both do, higher up.");
        free(wj);
        free(gj);
    }
    free(wp); /* toml_key_split: one block holds the parts and their lengths */
    free(gp);
    lab_condition(conds, "merge.conflict_table", ok, where, want, got, hint);
}

static json_t *grade_merge(const char *root)
{
    json_t *conds = json_array();
    char *path = lab_path(root, LAB_MERGE_OUT);
    lab_outfile f = {0};
    gp_error ferr = {0};
    if (!path || lab_outfile_read(path, &f, &ferr) != 0) {
        lab_condition(conds, "merge.exists", false, path ? path : root, _("the file"), ferr.text,
                      HINT_CREATE);
        free(path);
        return lab_step_result(3, lab_step_title(3), conds);
    }
    check_format(conds, &f);

    lab_merge_facts facts;
    gp_error perr = {0};
    bool have_facts = lab_merge_predict(root, &facts, &perr) == 0;
    char *main_path = lab_path(root, LAB_MAIN_CONFIG);
    lab_condition(conds, "merge.inputs", have_facts, main_path ? main_path : root,
                  _("steps 1 and 2 files that parse, the drop-in imported"),
                  have_facts ? _("both files read") : perr.text,
                  N_("Step 3 is judged against your own step 1 and 2 files: both must parse, and "
                     "the main config's imports must reach the drop-in."));
    free(main_path);

    gp_error eerr = {0};
    char *loaded = lab_loaded_runtimes(root, &eerr);
    char *dump_path = lab_path(root, LAB_EVIDENCE_DUMP);
    lab_condition(conds, "merge.evidence", loaded != NULL, dump_path ? dump_path : root,
                  _("the incident node's containerd config dump"), loaded ? _("read") : eerr.text,
                  N_("The incident-day dump is missing or damaged: `gpuop lab init` puts it "
                     "back in evidence/."));
    free(dump_path);

    check_list(conds, &f, "merge.main_runtimes", "MAIN_RUNTIMES",
               have_facts ? facts.main_runtimes : NULL,
               N_("List only the handler tables the main config itself defines under "
                  "containerd.runtimes."));
    check_list(conds, &f, "merge.dropin_runtimes", "DROPIN_RUNTIMES",
               have_facts ? facts.dropin_runtimes : NULL,
               N_("List only the handler tables the drop-in defines."));
    check_conflict(conds, &f, have_facts ? (facts.conflict ? "yes" : "no") : NULL);
    check_conflict_table(conds, &f, have_facts ? facts.conflict_table : NULL);
    check_list(conds, &f, "merge.loaded_runtimes", "LOADED_RUNTIMES", loaded,
               N_("What was loaded is observed, not computed: read the runtime handlers from "
                  "the incident node's dump in evidence/, not from the files you wrote."));
    free(loaded);
    if (have_facts) lab_merge_facts_free(&facts);
    lab_outfile_free(&f);
    free(path);
    return lab_step_result(3, lab_step_title(3), conds);
}

/* ---- step 4: the check script ---- */

/* The script's lines that are not whole-line comments, with their numbers:
 * a comment that explains why the file is not read must not count. */
typedef struct script_line {
    unsigned number;
    const char *text; /* into the script's text, NUL-terminated by the split */
} script_line;

typedef struct script_text {
    char *text;
    script_line *lines;
    size_t count;
} script_text;

static int script_split(const char *path, script_text *s, gp_error *err)
{
    size_t len = 0;
    memset(s, 0, sizeof *s);
    s->text = gp_read_file(path, &len, err);
    if (!s->text) return -1;
    size_t n = 1;
    for (size_t i = 0; i < len; i++)
        n += s->text[i] == '\n';
    s->lines = calloc(n, sizeof *s->lines);
    if (!s->lines) return -1;
    unsigned number = 0;
    for (char *line = s->text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        number++;
        const char *c = line + strspn(line, " \t");
        if (*c == '#' || *c == '\0') continue;
        s->lines[s->count++] = (script_line){number, line};
    }
    return 0;
}

static void script_free(script_text *s)
{
    free(s->text);
    free(s->lines);
}

/* The first code line matching `pattern` (an extended regular expression):
 * its number and column, or false. */
static bool script_find(const script_text *s, const char *pattern, unsigned *line, unsigned *col)
{
    regex_t re;
    if (regcomp(&re, pattern, REG_EXTENDED) != 0) return false;
    bool found = false;
    for (size_t i = 0; i < s->count && !found; i++) {
        regmatch_t m;
        if (regexec(&re, s->lines[i].text, 1, &m, 0) != 0) continue;
        *line = s->lines[i].number;
        *col = (unsigned)m.rm_so + 1;
        found = true;
    }
    regfree(&re);
    return found;
}

static const char *script_line_text(const script_text *s, unsigned number)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->lines[i].number == number) return s->lines[i].text;
    return "";
}

/* A call of the program, then its arguments. */
#define RE_DUMP_CALL   "containerd[[:space:]]+config[[:space:]]+dump"
#define RE_ABSOLUTE    "/containerd([[:space:]\"');|&]|$)"
#define RE_CONFIG_FILE "(\\.toml|/etc/containerd)"

static void check_static(json_t *conds, const char *path, const script_text *s)
{
    unsigned line = 0, col = 0;
    char where[1024], observed[1024];
    bool calls = script_find(s, RE_DUMP_CALL, &line, &col);
    where_at(where, sizeof where, path, line, col);
    lab_condition(conds, "script.calls_dump", calls, where, "containerd config dump",
                  calls ? script_line_text(s, line) : _("no `containerd config dump` call"),
                  N_("Ask containerd: `containerd config dump` reads the files the way "
                     "containerd itself merges them, imports included, and so shows what a "
                     "(re)start would load."));

    bool absolute = script_find(s, RE_ABSOLUTE, &line, &col);
    where_at(where, sizeof where, path, absolute ? line : 0, absolute ? col : 0);
    snprintf(observed, sizeof observed, "%s",
             absolute ? script_line_text(s, line)
             : calls  ? _("called by bare name")
                      : _("no `containerd config dump` call"));
    lab_condition(conds, "script.bare_name", calls && !absolute, where,
                  _("containerd found through PATH"), observed,
                  N_("Call containerd by its bare name so that PATH decides which binary "
                     "answers, on every node and under the grader's stand-in."));

    bool reads = script_find(s, RE_CONFIG_FILE, &line, &col);
    where_at(where, sizeof where, path, reads ? line : 0, reads ? col : 0);
    lab_condition(conds, "script.no_config_read", !reads, where, _("no config file path"),
                  reads ? script_line_text(s, line) : _("no config file path in the script"),
                  N_("A file that defines a handler proves nothing about what containerd "
                     "loads: the dump shows what a start of containerd loads (the running "
                     "daemon's CRI status, what it loaded). Take the answer from the dump "
                     "alone."));
}

/* A private directory for the runs: bin/containerd (the stand-in), the two
 * dumps, HOME and the working directory. */
typedef struct sandbox {
    char dir[PATH_MAX];
    char bin[PATH_MAX + 8];
    char dump_nvidia[PATH_MAX + 32];
    char dump_without[PATH_MAX + 32];
    char trace[PATH_MAX + 16];
} sandbox;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void sandbox_remove(sandbox *sb)
{
    if (sb->dir[0]) nftw(sb->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int write_text(const char *path, const char *text, gp_error *err)
{
    return gp_write_atomic(path, text, strlen(text), 0644, err);
}

static int sandbox_make(sandbox *sb, const char *gpuop_exe, gp_error *err)
{
    memset(sb, 0, sizeof *sb);
    char exe[PATH_MAX];
    if (!gpuop_exe || !realpath(gpuop_exe, exe)) {
        gp_error_set(err, gpuop_exe, 0, 0, "cannot find the gpuop binary for the stand-in: %s",
                     gpuop_exe ? strerror(errno) : _("none given"));
        return -1;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(sb->dir, sizeof sb->dir, "%s/gpuop-lab-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(sb->dir)) {
        gp_error_set(err, sb->dir, 0, 0, "cannot create a temporary directory: %s",
                     strerror(errno));
        sb->dir[0] = '\0';
        return -1;
    }
    snprintf(sb->bin, sizeof sb->bin, "%s/bin", sb->dir);
    snprintf(sb->dump_nvidia, sizeof sb->dump_nvidia, "%s/dump-with-nvidia.txt", sb->dir);
    snprintf(sb->dump_without, sizeof sb->dump_without, "%s/dump-without-nvidia.txt", sb->dir);
    snprintf(sb->trace, sizeof sb->trace, "%s/trace.txt", sb->dir);
    char link_path[PATH_MAX + 32];
    snprintf(link_path, sizeof link_path, "%s/containerd", sb->bin);
    if (mkdir(sb->bin, 0755) != 0 || symlink(exe, link_path) != 0) {
        gp_error_set(err, link_path, 0, 0, "cannot create the stand-in containerd: %s",
                     strerror(errno));
        sandbox_remove(sb);
        return -1;
    }
    if (write_text(sb->dump_nvidia, lab_nvidia_dump, err) != 0 ||
        write_text(sb->dump_without, lab_nvidia_cdi_dump, err) != 0) {
        sandbox_remove(sb);
        return -1;
    }
    return 0;
}

static bool strace_present(void)
{
    /* The runs' PATH is /usr/bin:/bin after the stand-in. */
    return access("/usr/bin/strace", X_OK) == 0 || access("/bin/strace", X_OK) == 0;
}

typedef struct run_result {
    gp_contain_result c;
    char text[512]; /* what the learner reads as "observed" */
} run_result;

static bool run_ok(const run_result *r, int status)
{
    return r->c.r == GP_SPAWN_OK && r->c.exit_status == status;
}

static void first_line(const char *s, char *out, size_t cap)
{
    size_t n = s ? strcspn(s, "\n") : 0;
    if (n >= cap) n = cap - 1;
    memcpy(out, s ? s : "", n);
    out[n] = '\0';
}

/* Runs the script with only the stand-in and /usr/bin:/bin on PATH and a
 * clean environment: nothing of the grader's own PATH or HOME leaks in.
 * It runs contained (util/contain.h): a job it leaves in the background
 * neither delays the verdict nor survives it. Traced, strace runs as the
 * script's grandchild (-D), so that the script's own end ends the run
 * while strace would still follow that job. */
static void run_script(const sandbox *sb, const char *script, bool executable, const char *dump,
                       bool traced, run_result *out)
{
    char path_env[PATH_MAX + 32], home_env[PATH_MAX + 8], dump_env[PATH_MAX + 64];
    snprintf(path_env, sizeof path_env, "PATH=%s:/usr/bin:/bin", sb->bin);
    snprintf(home_env, sizeof home_env, "HOME=%s", sb->dir);
    snprintf(dump_env, sizeof dump_env, "GPUOP_STANDIN_DUMP=%s", dump);
    char *argv[24];
    size_t n = 0;
    const char *fixed[] = {
        "env",
        "-i",
        "-C",
        sb->dir,
        path_env,
        home_env,
        dump_env,
        "LC_ALL=C",
#if defined(__SANITIZE_ADDRESS__)
        /* A sanitizer build's stand-in would fail at exit in the
         * traced run: LeakSanitizer cannot work under ptrace. */
        "ASAN_OPTIONS=detect_leaks=0",
#endif
    };
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        argv[n++] = (char *)fixed[i];
    if (traced) {
        const char *st[] = {"strace", "-D",          "-f", "-qq",    "-e", "trace=open,openat",
                            "-e",     "signal=none", "-o", sb->trace};
        for (size_t i = 0; i < sizeof st / sizeof *st; i++)
            argv[n++] = (char *)st[i];
    }
    /* A script without its executable bit still runs (through sh), so that
     * one missing chmod does not hide everything else. */
    if (!executable) argv[n++] = "sh";
    argv[n++] = (char *)script;
    argv[n] = NULL;

    char *so = NULL, *se = NULL;
    size_t sol = 0, sel = 0;
    gp_error err = {0};
    gp_contain_options opt = {.timeout_ms = LAB_SCRIPT_TIMEOUT_MS};
    gp_spawn_contained(argv, &opt, &so, &sol, &se, &sel, &out->c, &err);
    char said[200];
    first_line(se && *se ? se : so, said, sizeof said);
    if (out->c.r == GP_SPAWN_TIMEOUT)
        gp_msg_snprintf(out->text, sizeof out->text,
                        _("still running after %d s: stopped, with everything it started"),
                        LAB_SCRIPT_TIMEOUT_MS / 1000);
    else if (out->c.r != GP_SPAWN_OK)
        gp_msg_snprintf(out->text, sizeof out->text, _("could not run: %.400s"), err.text);
    else if (said[0])
        gp_msg_snprintf(out->text, sizeof out->text, _("exit code %d; it printed \"%s\""),
                        out->c.exit_status, said);
    else
        gp_msg_snprintf(out->text, sizeof out->text, _("exit code %d"), out->c.exit_status);
    free(so);
    free(se);
}

/* The containerd config files the traced run opened (or tried to): any
 * *.toml, anything under /etc/containerd. Returns how many lines of the
 * trace were opens, so that an empty trace (strace refused by the kernel)
 * is told apart from a clean one. */
static size_t trace_config_opens(const char *trace, char *first, size_t cap, size_t *bad)
{
    size_t len = 0, opens = 0;
    bool named_toml = false;
    *bad = 0;
    first[0] = '\0';
    char *text = gp_read_file(trace, &len, NULL);
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (!strstr(line, "open(") && !strstr(line, "openat(")) continue;
        opens++;
        char *q = strchr(line, '"');
        char *end = q ? strchr(q + 1, '"') : NULL;
        if (!end) continue;
        *end = '\0';
        const char *file = q + 1;
        size_t n = strlen(file);
        bool toml = n >= 5 && strcmp(file + n - 5, ".toml") == 0;
        if (!toml && strncmp(file, "/etc/containerd/", 16) != 0) continue;
        /* Name a file rather than the directory a glob listed. */
        if (!(*bad)++ || (toml && !named_toml)) snprintf(first, cap, "%s", file);
        named_toml = named_toml || toml;
    }
    free(text);
    return opens;
}

/* The hint for a run whose exit status is not the answer wanted: what went
 * wrong, by what happened. `want` is 0 (the dump has the handler) or 1. */
static void run_hint(const run_result *r, int want, char *buf, size_t cap)
{
    if (r->c.r == GP_SPAWN_TIMEOUT) {
        gp_msg_snprintf(buf, cap,
                        _("The script did not end within %d seconds: a boot check must end on its "
                          "own, whatever the dump says."),
                        LAB_SCRIPT_TIMEOUT_MS / 1000);
    } else if (r->c.r != GP_SPAWN_OK) {
        snprintf(buf, cap, "%s",
                 _("The script could not be started: give it a first line such as #!/bin/sh."));
    } else if (r->c.exit_status != 0 && r->c.exit_status != 1) {
        gp_msg_snprintf(buf, cap,
                        _("The answers are exit 0 (loaded) and exit 1 (not loaded); %d is "
                          "neither, and a boot check or a CI gate reads it as a failure to "
                          "check."),
                        r->c.exit_status);
    } else if (want == 1) {
        snprintf(buf, cap, "%s",
                 _("This dump has no nvidia handler, only runc and nvidia-cdi, and the script "
                   "said loaded: a pattern that finds nvidia anywhere, or runtimes.nvidia "
                   "followed by anything, takes another handler for it. Match the handler's "
                   "table name up to where the name ends."));
    } else {
        snprintf(buf, cap, "%s",
                 _("This dump has the nvidia handler's table and the script said not loaded: "
                   "look for containerd.runtimes.nvidia in what containerd config dump prints, "
                   "as a table name."));
    }
}

static void check_runs(json_t *conds, const char *script, bool executable, const sandbox *sb)
{
    bool traced = strace_present();
    run_result with = {0}, without = {0};
    run_script(sb, script, executable, sb->dump_nvidia, traced, &with);
    char first[PATH_MAX] = "";
    size_t bad = 0;
    if (traced && trace_config_opens(sb->trace, first, sizeof first, &bad) == 0) {
        /* strace could not trace here (no ptrace in this container): run
         * again without it, and leave the traced check out. */
        traced = false;
        run_script(sb, script, executable, sb->dump_nvidia, false, &with);
    }
    run_script(sb, script, executable, sb->dump_without, false, &without);

    char hint[1024];
    run_hint(&with, 0, hint, sizeof hint);
    lab_condition(conds, "script.with_nvidia", run_ok(&with, 0), script,
                  _("exit 0 when the dump has the nvidia handler"), with.text, hint);
    run_hint(&without, 1, hint, sizeof hint);
    lab_condition(conds, "script.without_nvidia", run_ok(&without, 1), script,
                  _("exit 1 when the dump has no nvidia handler"), without.text, hint);
    if (!traced) return;
    char observed[PATH_MAX + 64];
    if (bad)
        gp_msg_snprintf(observed, sizeof observed, _("opened %s (%zu config file opens)"), first,
                        bad);
    else
        snprintf(observed, sizeof observed, "%s", _("no config file opened"));
    lab_condition(conds, "script.traced_opens", bad == 0, script,
                  _("no containerd config file opened (strace)"), observed,
                  N_("Traced, the script opened a containerd config file: whatever a file says, "
                     "only the dump tells what containerd would load."));
}

static json_t *grade_script(const char *root, const char *gpuop_exe, gp_error *err)
{
    json_t *conds = json_array();
    char *rel = lab_path(root, LAB_CHECK_SCRIPT);
    char script[PATH_MAX];
    struct stat st;
    if (!rel || stat(rel, &st) != 0 || !realpath(rel, script)) {
        lab_condition(conds, "script.exists", false, rel ? rel : root, _("the file"),
                      file_problem(errno), HINT_CREATE);
        free(rel);
        return lab_step_result(4, lab_step_title(4), conds);
    }
    free(rel);
    sandbox sb;
    if (sandbox_make(&sb, gpuop_exe, err) != 0) {
        json_decref(conds);
        return NULL;
    }
    bool executable = S_ISREG(st.st_mode) && (st.st_mode & S_IXUSR);
    char mode[32];
    gp_msg_snprintf(mode, sizeof mode, _("mode %04o"), (unsigned)(st.st_mode & 07777));
    lab_condition(conds, "script.executable", executable, script, _("executable (chmod +x)"), mode,
                  N_("A boot check or a CI gate runs the script as a program: it needs the "
                     "executable bit."));
    script_text s;
    gp_error rerr = {0};
    if (script_split(script, &s, &rerr) == 0) check_static(conds, script, &s);
    script_free(&s);
    check_runs(conds, script, executable, &sb);
    sandbox_remove(&sb);
    return lab_step_result(4, lab_step_title(4), conds);
}

json_t *lab_grade_file_step(int step, const char *root, const lab_params *p, const char *gpuop_exe,
                            gp_error *err)
{
    (void)p; /* the file steps use no number that a seed changes */
    switch (step) {
    case 1:
        return grade_main(root);
    case 2:
        return grade_dropin(root);
    case 3:
        return grade_merge(root);
    case 4:
        return grade_script(root, gpuop_exe, err);
    default:
        gp_error_set(err, NULL, 0, 0, "step %d is not a file step (1-4)", step);
        return NULL;
    }
}
