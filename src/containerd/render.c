/* The three forms of `gpuop containerd merge` (render.h). */
/* wcswidth() is an X/Open function. */
#define _XOPEN_SOURCE 700
#include "containerd/render.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "containerd/cfg_internal.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/i18n.h"
#include "util/json_out.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ---- the observed dump ---- */

static bool listed(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return true;
    return false;
}

int cd_observed_read(const char *path, cd_observed *o, gp_error *err)
{
    memset(o, 0, sizeof *o);
    size_t len;
    char *text = gp_read_file(path, &len, err);
    int rc = text ? cd_dump_parse(text, len, path, &o->dump, err) : -1;
    free(text);
    if (rc != 0) return -1;
    size_t n = o->dump.handlers.n;
    o->names = calloc(n ? n : 1, sizeof *o->names);
    if (!o->names) {
        cd_dump_free(&o->dump);
        gp_error_set(err, path, 0, 0, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        o->names[o->count++] = o->dump.handlers.items[i];
    qsort(o->names, o->count, sizeof *o->names, cmp_str);
    o->source = path;
    return 0;
}

void cd_observed_free(cd_observed *o)
{
    cd_dump_free(&o->dump);
    free(o->names);
    memset(o, 0, sizeof *o);
}

const char **cd_dropin_runtimes(const cd_prediction *p, size_t *n)
{
    size_t total = 0;
    for (size_t i = 1; i < p->nfiles; i++)
        total += p->files[i].nruntimes;
    const char **names = calloc(total ? total : 1, sizeof *names);
    if (!names) return NULL;
    size_t all = 0;
    for (size_t i = 1; i < p->nfiles; i++)
        for (size_t j = 0; j < p->files[i].nruntimes; j++)
            names[all++] = p->files[i].runtimes[j];
    qsort(names, all, sizeof *names, cmp_str);
    size_t unique = 0;
    for (size_t i = 0; i < all; i++)
        if (!unique || strcmp(names[unique - 1], names[i]) != 0) names[unique++] = names[i];
    *n = unique;
    return names;
}

static void print_list(FILE *out, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? "," : "", names[i]);
}

/* ---- lab: the five lines of step 3 ---- */

static int write_lab(FILE *out, const cd_prediction *p, const cd_observed *o)
{
    size_t ndropin = 0;
    const char **dropin = cd_dropin_runtimes(p, &ndropin);
    if (!dropin) return -1;
    fputs("MAIN_RUNTIMES=", out);
    if (p->nfiles) print_list(out, p->files[0].runtimes, p->files[0].nruntimes);
    fputs("\nDROPIN_RUNTIMES=", out);
    print_list(out, dropin, ndropin);
    fprintf(out, "\nCONFLICT=%s\n", p->conflict ? "yes" : "no");
    fprintf(out, "CONFLICT_TABLE=%s\n", p->conflict ? p->conflict_table : "");
    fputs("LOADED_RUNTIMES=", out);
    print_list(out, o->names, o->count);
    fputc('\n', out);
    free(dropin);
    return 0;
}

/* ---- json ---- */

static void json_str(FILE *out, const char *s)
{
    if (s)
        gp_json_string(out, s, strlen(s));
    else
        fputs("null", out);
}

static void json_list(FILE *out, const char *const *names, size_t n)
{
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        if (i) fputc(',', out);
        json_str(out, names[i]);
    }
    fputc(']', out);
}

static void json_notes(FILE *out, const cd_notes *notes)
{
    fputc('[', out);
    for (size_t i = 0; i < notes->count; i++) {
        const cd_note *n = &notes->items[i];
        fprintf(out, "%s{\"file\":", i ? "," : "");
        json_str(out, n->file);
        fprintf(out, ",\"line\":%" PRIu32 ",\"col\":%" PRIu32 ",\"key\":", n->line, n->col);
        json_str(out, n->key);
        fputs(",\"code\":", out);
        json_str(out, n->code);
        fputs(",\"message\":", out);
        json_str(out, n->text);
        fputc('}', out);
    }
    fputc(']', out);
}

/* "file:line" or "default" for every effective key, keyed by the dotted
 * key in TOML syntax. */
typedef struct origins_ctx {
    FILE *out;
    bool first;
    bool failed; /* memory ran out */
} origins_ctx;

static void json_origin(const cd_node *leaf, const cd_node *const *path, size_t depth, void *ctx)
{
    origins_ctx *oc = ctx;
    char *key = cd_path_text(path, depth);
    char *at =
        leaf->origin.file ? gp_format("%s:%" PRIu32, leaf->origin.file, leaf->origin.line) : NULL;
    if (!key || (leaf->origin.file && !at)) {
        oc->failed = true;
    } else {
        fputs(oc->first ? "" : ",", oc->out);
        oc->first = false;
        json_str(oc->out, key);
        fputc(':', oc->out);
        json_str(oc->out, at ? at : "default");
    }
    free(at);
    free(key);
}

/* The runtimes some file declares that do not load, sorted, each once;
 * malloc'd (the names are the prediction's). */
static const char **not_loaded(const cd_prediction *p, size_t *n)
{
    size_t cap = 0;
    for (size_t i = 0; i < p->nfiles; i++)
        cap += p->files[i].nruntimes;
    const char **out = malloc((cap ? cap : 1) * sizeof *out);
    *n = 0;
    if (!out) return NULL;
    for (size_t i = 0; i < p->nfiles; i++)
        for (size_t r = 0; r < p->files[i].nruntimes; r++) {
            const char *name = p->files[i].runtimes[r];
            if (!listed(p->runtimes, p->nruntimes, name) && !listed(out, *n, name))
                out[(*n)++] = name;
        }
    qsort(out, *n, sizeof *out, cmp_str);
    return out;
}

static int write_json(FILE *out, const cd_prediction *p, const cd_observed *o,
                      const char *version_source)
{
    size_t ndropin = 0;
    const char **dropin = cd_dropin_runtimes(p, &ndropin);
    if (!dropin) return -1;
    fputs("{\"schema\":", out);
    json_str(out, CD_MERGE_SCHEMA);
    fprintf(out, ",\"holds\":%s", cd_prediction_holds(p) ? "true" : "false");
    fputs(",\"containerd_version\":", out);
    json_str(out, cd_family_name(p->family));
    fputs(",\"containerd_version_from\":", out);
    json_str(out, version_source);
    fputs(",\"files\":[", out);
    for (size_t i = 0; i < p->nfiles; i++) {
        const cd_file *f = &p->files[i];
        fprintf(out, "%s{\"path\":", i ? "," : "");
        json_str(out, f->path);
        if (f->version)
            fprintf(out, ",\"version\":%" PRId64, f->version);
        else
            fputs(",\"version\":null", out);
        fputs(",\"imported_by\":", out);
        json_str(out, f->imported_by);
        fputs(",\"runtimes\":", out);
        json_list(out, f->runtimes, f->nruntimes);
        fputc('}', out);
    }
    fputs("],\"main_runtimes\":", out);
    if (p->nfiles)
        json_list(out, p->files[0].runtimes, p->files[0].nruntimes);
    else
        json_list(out, NULL, 0);
    fputs(",\"dropin_runtimes\":", out);
    json_list(out, dropin, ndropin);
    free(dropin);
    fprintf(out, ",\"conflict\":%s,\"conflict_table\":", p->conflict ? "true" : "false");
    json_str(out, p->conflict ? p->conflict_table : NULL);
    fputs(",\"conflict_files\":", out);
    json_list(out, p->conflict_files, p->conflict ? 2 : 0);
    fputs(",\"conflict_winner\":", out);
    json_str(out, p->conflict ? p->conflict_winner : NULL);
    fputs(",\"winner_reason\":", out);
    json_str(out, p->conflict ? p->winner_reason : NULL);
    fprintf(out, ",\"predicted\":{\"merged_version\":%" PRId64 ",\"config\":", p->version);
    if (p->config)
        cd_write_json(p->config, out);
    else
        fputs("null", out);
    fputs(",\"origins\":{", out);
    origins_ctx oc = {out, true, false};
    if (p->config) cd_walk_leaves(p->config, json_origin, &oc);
    fputs("},\"runtimes\":", out);
    json_list(out, p->runtimes, p->nruntimes);
    fputs(",\"default_runtime_name\":", out);
    const cd_node *drn = p->default_runtime_name;
    json_str(out,
             drn && !drn->is_table && drn->value->type == TOML_STRING ? drn->value->u.s : NULL);
    fprintf(out, ",\"cri_valid\":%s,\"cri_error\":", p->cri_error ? "false" : "true");
    json_str(out, p->cri_error);
    fputs(",\"declared_not_loaded\":", out);
    size_t nlost = 0;
    const char **lost = not_loaded(p, &nlost);
    json_list(out, lost, nlost);
    free(lost);
    fputs(",\"default_runtime_written\":", out);
    json_str(out, p->default_written);
    fprintf(out, ",\"default_runtime_lost\":%s,\"imports_ignored\":%s",
            p->default_lost ? "true" : "false", p->imports_ignored ? "true" : "false");
    fputs(",\"error\":", out);
    json_str(out, p->error);
    fputs("},\"lost\":", out);
    json_notes(out, &p->lost);
    fputs(",\"lints\":", out);
    json_notes(out, &p->lints);
    if (o->source) {
        fputs(",\"observed\":{\"source\":", out);
        json_str(out, o->source);
        fputs(",\"runtimes\":", out);
        json_list(out, o->names, o->count);
        fputc('}', out);
    }
    fputs("}\n", out);
    return oc.failed ? -1 : 0;
}

/* ---- text ---- */

static const char *where(const cd_origin *o, char *buf, size_t size)
{
    if (!o->file) return _("default");
    snprintf(buf, size, "%s:%" PRIu32, o->file, o->line);
    return buf;
}

/* Pads by terminal columns, not bytes: Korean and Japanese headers are
 * double-width characters of three bytes each. */
static void print_cell(FILE *out, const char *s, int columns)
{
    wchar_t wide[256];
    size_t n = mbstowcs(wide, s, sizeof wide / sizeof *wide - 1);
    int width = n == (size_t)-1 ? (int)strlen(s) : wcswidth(wide, n);
    if (width < 0) width = (int)strlen(s);
    fputs(s, out);
    for (; width < columns; width++)
        fputc(' ', out);
    fputc(' ', out);
}

static void print_row(FILE *out, const char *handler, const char *declared, const char *predicted,
                      const char *seen)
{
    fputs("  ", out);
    print_cell(out, handler, 16);
    print_cell(out, declared, 10);
    print_cell(out, predicted, 10);
    fprintf(out, "%s\n", seen);
}

static void text_origin(const cd_node *leaf, const cd_node *const *path, size_t depth, void *ctx)
{
    FILE *out = ctx;
    char *key = cd_path_text(path, depth);
    char buf[512];
    fprintf(out, "  %s = ", key ? key : "");
    toml_emit_value(leaf->value, out);
    fprintf(out, "  (%s)\n", where(&leaf->origin, buf, sizeof buf));
    free(key);
}

/* The keys that decide what each runtime handler is, with their origin. */
static void write_runtime_keys(FILE *out, const cd_prediction *p)
{
    const cd_node *rts =
        cd_path(p->config, "plugins", p->cri_plugin, "containerd", "runtimes", NULL);
    if (!rts) return;
    fprintf(out,
            _("\nEffective runtimes (under plugins.\"%s\".containerd.runtimes), and where each "
              "value comes from:\n"),
            p->cri_plugin);
    cd_walk_leaves(rts, text_origin, out);
}

static void write_files(FILE *out, const cd_prediction *p)
{
    fputs(_("Files, in load order:\n"), out);
    for (size_t i = 0; i < p->nfiles; i++) {
        const cd_file *f = &p->files[i];
        fprintf(out, "  %zu. %s  ", i + 1, f->path);
        if (f->version)
            fprintf(out, _("version %" PRId64), f->version);
        else
            fputs(_("no version"), out);
        fputs(_("  runtimes: "), out);
        if (f->nruntimes)
            print_list(out, f->runtimes, f->nruntimes);
        else
            fputc('-', out);
        fputc('\n', out);
    }
}

/* Declared, predicted, observed, side by side. */
static void write_handlers(FILE *out, const cd_prediction *p, const cd_observed *o)
{
    const char *all[256];
    size_t nall = 0;
    for (size_t i = 0; i < p->nfiles; i++)
        for (size_t j = 0; j < p->files[i].nruntimes && nall < 256; j++)
            if (!listed(all, nall, p->files[i].runtimes[j])) all[nall++] = p->files[i].runtimes[j];
    for (size_t j = 0; j < p->nruntimes && nall < 256; j++)
        if (!listed(all, nall, p->runtimes[j])) all[nall++] = p->runtimes[j];
    for (size_t j = 0; j < o->count && nall < 256; j++)
        if (!listed(all, nall, o->names[j])) all[nall++] = o->names[j];
    qsort(all, nall, sizeof *all, cmp_str);
    fputs(_("\nRuntime handlers:\n"), out);
    print_row(out, _("handler"), _("declared"), _("predicted"), _("observed"));
    for (size_t i = 0; i < nall; i++) {
        bool declared = false;
        for (size_t f = 0; f < p->nfiles; f++)
            declared |= listed(p->files[f].runtimes, p->files[f].nruntimes, all[i]);
        print_row(out, all[i], declared ? _("yes") : "-",
                  listed(p->runtimes, p->nruntimes, all[i]) ? _("loads") : _("NO"),
                  o->source ? (listed(o->names, o->count, all[i]) ? _("loaded") : _("NO")) : "-");
    }
    const cd_node *drn = p->default_runtime_name;
    char buf[512];
    if (drn && !drn->is_table)
        fprintf(out, _("  default_runtime_name = \"%s\" (%s)\n"),
                drn->value->type == TOML_STRING ? drn->value->u.s : "?",
                where(&drn->origin, buf, sizeof buf));
}

static void write_verdicts(FILE *out, const cd_prediction *p)
{
    fputs(_("\nVerdicts:\n"), out);
    if (p->error)
        fprintf(out, _("  REFUSED: containerd %s will not start on these files: %s\n"),
                cd_family_name(p->family), p->error);
    if (p->cri_error)
        fprintf(out, _("  CRI FAILS: %s\n"), p->cri_error);
    else
        fputs(_("  CRI config valid\n"), out);
    size_t nlost = 0;
    const char **lost = not_loaded(p, &nlost);
    if (nlost) {
        fputs(_("  NOT LOADED: runtimes the files declare: "), out);
        for (size_t i = 0; i < nlost; i++)
            fprintf(out, "%s%s", i ? ", " : "", lost[i]);
        fputc('\n', out);
    }
    free(lost);
    if (p->default_lost)
        fprintf(out, _("  DEFAULT RUNTIME LOST: the files name \"%s\", containerd loads \"%s\"\n"),
                p->default_written, p->default_runtime_name->value->u.s);
    if (p->imports_ignored)
        fputs(_("  IMPORTS IGNORED: an `imports` inside a table is not the list of drop-ins\n"),
              out);
    if (p->conflict)
        fprintf(out, _("  CONFLICT: %s and %s both define content in %s;\n    %s wins: %s\n"),
                p->conflict_files[0], p->conflict_files[1], p->conflict_table, p->conflict_winner,
                p->winner_reason);
    else
        fputs(_("  no two files define content in the same table\n"), out);
    if (p->lost.count) fputs(_("\nWritten but not loaded:\n"), out);
    for (size_t i = 0; i < p->lost.count; i++) {
        const cd_note *n = &p->lost.items[i];
        fprintf(out, "  %s:%" PRIu32 "  %s: %s\n", n->file ? n->file : "-", n->line,
                n->key ? n->key : "", n->text);
    }
    if (p->lints.count) fputs(_("\nLints:\n"), out);
    for (size_t i = 0; i < p->lints.count; i++) {
        const cd_note *n = &p->lints.items[i];
        if (n->file)
            fprintf(out, "  %s:%" PRIu32 "  [%s] %s\n", n->file, n->line, n->code, n->text);
        else
            fprintf(out, "  [%s] %s\n", n->code, n->text);
    }
}

static void write_text(FILE *out, const cd_prediction *p, const cd_observed *o,
                       const char *version_source)
{
    fprintf(out, _("containerd %s rules (%s), merged config version %" PRId64 "\n\n"),
            cd_family_name(p->family),
            strcmp(version_source, "installed") == 0 ? _("the installed containerd")
            : strcmp(version_source, "default") == 0 ? _("no containerd on PATH: the default")
                                                     : _("as asked"),
            p->version);
    write_files(out, p);
    write_handlers(out, p, o);
    write_runtime_keys(out, p);
    write_verdicts(out, p);
}

int cd_render_merge(FILE *out, const cd_prediction *p, const cd_observed *o,
                    const char *version_source, cd_render_format fmt)
{
    int rc = 0;
    if (fmt == CD_RENDER_LAB)
        rc = write_lab(out, p, o);
    else if (fmt == CD_RENDER_JSON)
        rc = write_json(out, p, o, version_source);
    else
        write_text(out, p, o, version_source);
    return rc == 0 && !ferror(out) ? 0 : -1;
}
