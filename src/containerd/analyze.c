/* What the merged config means: runtime handlers, CRI validity, which files
 * define content in the same table (lab step 3), and lints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "containerd/containerd_internal.h"
#include "containerd/observed.h"
#include "util/i18n.h"

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted, deduplicated names of the child tables of `table`. */
static size_t table_names(gp_arena *a, const cd_node *const *tables, size_t ntables,
                          const char ***out)
{
    size_t n = 0;
    for (size_t t = 0; t < ntables; t++)
        n += cd_count_children(tables[t]);
    const char **names = gp_arena_alloc(a, (n ? n : 1) * sizeof *names);
    if (!names) return 0;
    size_t count = 0;
    for (size_t t = 0; t < ntables; t++)
        for (const cd_node *k = tables[t] ? tables[t]->first : NULL; k; k = k->next)
            if (k->is_table) names[count++] = gp_arena_strndup(a, k->key, k->keylen);
    qsort(names, count, sizeof *names, by_name);
    size_t unique = 0;
    for (size_t i = 0; i < count; i++)
        if (unique == 0 || strcmp(names[unique - 1], names[i]) != 0) names[unique++] = names[i];
    *out = names;
    return unique;
}

/* Runtimes a file defines under any of the three CRI table names. */
static void file_runtimes(cd_prediction *p, cd_file *f)
{
    const cd_node *t = f->tree;
    const cd_node *tables[3] = {
        cd_path(t, "plugins", "cri", "containerd", "runtimes", NULL),
        cd_path(t, "plugins", "io.containerd.grpc.v1.cri", "containerd", "runtimes", NULL),
        cd_path(t, "plugins", "io.containerd.cri.v1.runtime", "containerd", "runtimes", NULL),
    };
    f->nruntimes = table_names(p->arena, tables, 3, &f->runtimes);
}

static void check_cri(cd_prediction *p)
{
    const cd_node *ctr = cd_path(p->config, "plugins", p->cri_plugin, "containerd", NULL);
    const cd_node *rts = cd_child(ctr, "runtimes");
    p->nruntimes = table_names(p->arena, &rts, 1, &p->runtimes);
    p->default_runtime_name = cd_child(ctr, "default_runtime_name");
    const cd_node *drn = p->default_runtime_name;
    const char *name =
        drn && !drn->is_table && drn->value->type == TOML_STRING ? drn->value->u.s : "";
    char msg[512];
    cd_cri_check_default(name, p->runtimes, p->nruntimes, msg, sizeof msg);
    if (msg[0]) p->cri_error = cd_printf(p->arena, "invalid plugin config: %s", msg);
}

/* ---- collisions ---- */

/* The tables that hold a file's values, each with its depth and path. */
typedef struct table_set {
    const char **paths;
    size_t *depths;
    size_t count, cap;
    gp_arena *arena;
} table_set;

static void add_table(table_set *s, const char *path, size_t depth)
{
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->paths[i], path) == 0) return;
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 32;
        const char **paths =
            gp_arena_grow(s->arena, s->paths, s->cap * sizeof *paths, cap * sizeof *paths);
        size_t *depths =
            gp_arena_grow(s->arena, s->depths, s->cap * sizeof *depths, cap * sizeof *depths);
        if (!paths || !depths) return;
        s->paths = paths;
        s->depths = depths;
        s->cap = cap;
    }
    s->paths[s->count] = path;
    s->depths[s->count++] = depth;
}

static void collect_tables(const cd_node *leaf, const cd_node *const *path, size_t depth, void *ctx)
{
    (void)leaf;
    table_set *s = ctx;
    if (depth < 2) return;
    /* Every table above the leaf (not the document itself) holds content:
     * write the path once and cut it after each part. */
    char *text = cd_path_text(path, depth - 1);
    if (!text) return;
    size_t d = 1;
    bool in_quotes = false;
    for (char *c = text;; c++) {
        if (*c == '\\' && in_quotes && c[1]) {
            c++;
            continue;
        }
        if (*c == '"') in_quotes = !in_quotes;
        if (*c == '\0' || (*c == '.' && !in_quotes)) {
            add_table(s, gp_arena_strndup(s->arena, text, (size_t)(c - text)), d++);
            if (*c == '\0') break;
        }
    }
    free(text);
}

static void find_conflict(cd_prediction *p)
{
    table_set *sets = gp_arena_zalloc(p->arena, (p->nfiles ? p->nfiles : 1) * sizeof *sets);
    if (!sets) return;
    for (size_t i = 0; i < p->nfiles; i++) {
        sets[i].arena = p->arena;
        cd_walk_leaves(p->files[i].tree, collect_tables, &sets[i]);
    }
    size_t best = 0;
    for (size_t i = 0; i < p->nfiles; i++)
        for (size_t j = i + 1; j < p->nfiles; j++)
            for (size_t a = 0; a < sets[i].count; a++) {
                if (sets[i].depths[a] <= best) continue;
                for (size_t b = 0; b < sets[j].count; b++) {
                    if (strcmp(sets[i].paths[a], sets[j].paths[b]) != 0) continue;
                    best = sets[i].depths[a];
                    p->conflict = true;
                    p->conflict_table = sets[i].paths[a];
                    p->conflict_files[0] = p->files[i].path;
                    p->conflict_files[1] = p->conflict_winner = p->files[j].path;
                    break;
                }
            }
    if (!p->conflict) return;
    p->winner_reason = cd_is_v1(p->family)
                           ? _("containerd < 2.0 replaces a whole plugin section with the later "
                               "file's")
                           : _("containerd 2.x merges key by key; the later file wins each key "
                               "both set");
}

/* ---- lints ---- */

static bool has_v2_cri_keys(const cd_node *t)
{
    const cd_node *cri = cd_path(t, "plugins", "io.containerd.grpc.v1.cri", NULL);
    static const char *const streaming[] = {"disable_tcp_service",  "stream_server_address",
                                            "stream_server_port",   "stream_idle_timeout",
                                            "enable_tls_streaming", "x509_key_pair_streaming"};
    for (const cd_node *k = cri ? cri->first : NULL; k; k = k->next) {
        bool is_streaming = false;
        for (size_t i = 0; i < sizeof streaming / sizeof *streaming; i++)
            if (k->keylen == strlen(streaming[i]) && memcmp(k->key, streaming[i], k->keylen) == 0)
                is_streaming = true;
        if (!is_streaming) return true;
    }
    return cd_path(t, "plugins", "cri", NULL) != NULL;
}

/* The CRI tables a file may write, under any of the three names. */
static const char *const cri_names[] = {"cri", "io.containerd.grpc.v1.cri",
                                        "io.containerd.cri.v1.runtime"};

/* CDI arrived in containerd 1.7 (enable_cdi, cdi_spec_dirs): 1.6 drops
 * both, so the toolkit's CDI mode injects no device there. */
static void lint_cdi_on_1_6(cd_prediction *p, const cd_file *f)
{
    if (p->family != CD_V1_6) return;
    for (size_t n = 0; n < 2; n++) {
        const cd_node *cri = cd_path(f->tree, "plugins", cri_names[n], NULL);
        const cd_node *enable = cd_child(cri, "enable_cdi");
        const cd_node *dirs = cd_child(cri, "cdi_spec_dirs");
        const cd_node *at = enable ? enable : dirs;
        if (!at || (enable && !enable->is_table && enable->value->type == TOML_BOOL &&
                    !enable->value->u.b && !dirs))
            continue;
        cd_note_add(p->arena, &p->lints, f->path, at->origin.line, at->origin.col,
                    enable ? "enable_cdi" : "cdi_spec_dirs", "cdi-needs-1.7",
                    "CDI needs containerd 1.7 or later: 1.6 has no enable_cdi or cdi_spec_dirs "
                    "and ignores them, so no CDI device is injected (the toolkit's CDI mode, the "
                    "nvidia-cdi runtime)");
    }
}

typedef struct imports_ctx {
    cd_prediction *p;
    const cd_file *f;
} imports_ctx;

static void lint_nested_imports(const cd_node *leaf, const cd_node *const *path, size_t depth,
                                void *ctx)
{
    imports_ctx *ic = ctx;
    if (depth < 2 || leaf->keylen != 7 || memcmp(leaf->key, "imports", 7) != 0) return;
    char *table = cd_path_text(path, depth - 1);
    ic->p->imports_ignored = true;
    cd_note_add(ic->p->arena, &ic->p->lints, ic->f->path, leaf->origin.line, leaf->origin.col,
                "imports", "imports-in-table",
                "this `imports` comes after the header [%s], so it is a key of that table, not "
                "the list of drop-ins: containerd ignores it and loads none of its files; move "
                "it above the first table",
                table ? table : "?");
    free(table);
}

static bool loaded(const cd_prediction *p, const char *runtime)
{
    for (size_t i = 0; i < p->nruntimes; i++)
        if (strcmp(p->runtimes[i], runtime) == 0) return true;
    return false;
}

/* A runtime table some file writes that is not among the runtimes loaded. */
static void lint_declared_runtimes(cd_prediction *p)
{
    for (size_t i = 0; i < p->nfiles; i++) {
        const cd_file *f = &p->files[i];
        for (size_t r = 0; r < f->nruntimes; r++) {
            if (loaded(p, f->runtimes[r])) continue;
            const cd_node *table = NULL;
            for (size_t n = 0; n < 3 && !table; n++)
                table = cd_path(f->tree, "plugins", cri_names[n], "containerd", "runtimes",
                                f->runtimes[r], NULL);
            p->declared_not_loaded++;
            cd_note_add(p->arena, &p->lints, f->path, table ? table->origin.line : 0,
                        table ? table->origin.col : 0, NULL, "runtime-not-loaded",
                        "runtime %s is declared here but containerd %s does not load it (see the "
                        "keys not loaded)",
                        f->runtimes[r], cd_family_name(p->family));
        }
    }
}

/* The default runtime the files name last, against the one that loads:
 * they differ when a later section, a migration or a naming rule took it. */
static void lint_default_runtime(cd_prediction *p)
{
    const cd_node *written = NULL;
    for (size_t i = 0; i < p->nfiles; i++)
        for (size_t n = 0; n < 3; n++) {
            const cd_node *d = cd_path(p->files[i].tree, "plugins", cri_names[n], "containerd",
                                       "default_runtime_name", NULL);
            if (d && !d->is_table && d->value->type == TOML_STRING) written = d;
        }
    if (written) p->default_written = written->value->u.s;
    const cd_node *eff = p->default_runtime_name;
    if (!written || !eff || eff->is_table || eff->value->type != TOML_STRING) return;
    if (strcmp(written->value->u.s, eff->value->u.s) == 0) return;
    p->default_lost = true;
    cd_note_add(p->arena, &p->lints, written->origin.file, written->origin.line,
                written->origin.col, "default_runtime_name", "default-runtime-lost",
                "the files name \"%s\" the default runtime (last here), but containerd %s loads "
                "\"%s\" as the default (%s): pods without a RuntimeClass run there",
                written->value->u.s, cd_family_name(p->family), eff->value->u.s,
                eff->origin.file ? eff->origin.file : "the built-in default");
}

static void lint_files(cd_prediction *p)
{
    int64_t main_version = p->nfiles ? p->files[0].version : 0;
    for (size_t i = 0; i < p->nfiles; i++) {
        cd_file *f = &p->files[i];
        const cd_node *t = f->tree;
        const toml_entry *ve = toml_table_find(toml_root(f->doc), "version", 7);
        uint32_t vline = ve ? ve->line : 1, vcol = ve ? ve->col : 1;
        if (f->version >= 3 && has_v2_cri_keys(t))
            cd_note_add(p->arena, &p->lints, f->path, vline, vcol, NULL, "v2-names-in-v3-file",
                        "the file says version = %lld but uses version 2 (1.x) CRI table names "
                        "such as plugins.\"io.containerd.grpc.v1.cri\": containerd 2.x does not "
                        "migrate them in a version 3 config",
                        (long long)f->version);
        if (f->version == 2 && cd_path(t, "plugins", "io.containerd.cri.v1.runtime", NULL))
            cd_note_add(p->arena, &p->lints, f->path, vline, vcol, NULL, "v3-names-in-v2-file",
                        "the file says version = 2 but uses version 3 table names "
                        "(io.containerd.cri.v1.runtime): containerd 1.x ignores them");
        if (i > 0 && f->version > main_version && main_version)
            cd_note_add(p->arena, &p->lints, f->path, vline, vcol, NULL, "dropin-version-higher",
                        "drop-in version %lld is higher than the main file's %lld: containerd "
                        "2.0-2.2 then treat the whole merged config as version %lld, and 2.3+ "
                        "refuse to start (\"drop-in config version %lld higher than root config "
                        "version %lld\")",
                        (long long)f->version, (long long)main_version, (long long)f->version,
                        (long long)f->version, (long long)main_version);
        if (i == 0 && f->version == 0 && toml_table_size(toml_root(f->doc)) > 0)
            cd_note_add(p->arena, &p->lints, f->path, 1, 1, NULL, "no-version",
                        cd_is_v1(p->family)
                            ? N_("the main config has no `version`: containerd 1.x reads it as "
                                 "version 1 and ignores plugin sections with full names")
                            : N_("the main config has no `version`: containerd 2.x reads it as "
                                 "version 1 and does not migrate version 2 CRI keys in it"));
    }
    for (size_t i = 0; i < p->nfiles; i++) {
        lint_cdi_on_1_6(p, &p->files[i]);
        imports_ctx ic = {p, &p->files[i]};
        cd_walk_leaves(p->files[i].tree, lint_nested_imports, &ic);
    }
    if (!p->error && p->config) {
        lint_declared_runtimes(p);
        lint_default_runtime(p);
    }
    if (p->error)
        cd_note_add(p->arena, &p->lints, NULL, 0, 0, NULL, "refuses-to-start",
                    "containerd %s refuses this config: %s", cd_family_name(p->family), p->error);
    if (p->cri_error && !p->error)
        cd_note_add(p->arena, &p->lints, NULL, 0, 0, NULL, "cri-invalid",
                    "the CRI plugin will fail to load (%s): containerd keeps running without "
                    "CRI, so the node goes NotReady after the next restart",
                    p->cri_error);
}

void cd_analyze(cd_prediction *p)
{
    for (size_t i = 0; i < p->nfiles; i++)
        file_runtimes(p, &p->files[i]);
    if (p->config) check_cri(p);
    find_conflict(p);
    lint_files(p);
}
