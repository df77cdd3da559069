/* gpuop containerd merge: what a containerd version loads from the files. */
/* wcswidth() is an X/Open function. */
#define _XOPEN_SOURCE 700
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "cli/cli.h"
#include "containerd/containerd.h"
#include "containerd/observed.h"
#include "util/file.h"
#include "util/json_out.h"
#include "util/spawn.h"

typedef enum output { OUT_TEXT, OUT_JSON, OUT_LAB } output;

typedef struct merge_args {
    cd_options opt;
    const char *version_text;
    const char *version_source; /* "--containerd", "installed" or "default" */
    const char *observed;
    output out;
} merge_args;

/* What a `containerd config dump` taken on the node says is loaded. */
typedef struct observed {
    cd_dump dump;
    const char **names; /* the dump's runtime handlers, sorted */
    size_t count;
} observed;

static int parse_args(int argc, char **argv, merge_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = strcmp(arg, "--config") == 0 || strcmp(arg, "--root") == 0 ||
                     strcmp(arg, "--containerd") == 0 || strcmp(arg, "--observed") == 0 ||
                     strcmp(arg, "-o") == 0;
        if (takes && !next) {
            cli_usage_error("containerd", _("%s needs a value"), arg);
            return -1;
        }
        if (strcmp(arg, "--config") == 0) {
            a->opt.config_path = argv[++i];
        } else if (strcmp(arg, "--root") == 0) {
            a->opt.root = argv[++i];
        } else if (strcmp(arg, "--containerd") == 0) {
            a->version_text = argv[++i];
        } else if (strcmp(arg, "--observed") == 0) {
            a->observed = argv[++i];
        } else if (strcmp(arg, "-o") == 0) {
            const char *o = argv[++i];
            if (strcmp(o, "text") == 0)
                a->out = OUT_TEXT;
            else if (strcmp(o, "json") == 0)
                a->out = OUT_JSON;
            else if (strcmp(o, "lab") == 0)
                a->out = OUT_LAB;
            else {
                cli_error(_("unknown output format '%s' (text, json or lab)"), o);
                return -1;
            }
        } else {
            cli_usage_error("containerd", _("unexpected argument '%s'"), arg);
            return -1;
        }
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int load_observed(const char *path, observed *o)
{
    gp_error err = {0};
    size_t len;
    char *text = gp_read_file(path, &len, &err);
    if (!text || cd_dump_parse(text, len, path, &o->dump, &err) != 0) {
        free(text);
        cli_report(&err);
        return -1;
    }
    free(text);
    size_t n = o->dump.handlers.n;
    o->names = calloc(n ? n : 1, sizeof *o->names);
    if (!o->names) return -1;
    for (size_t i = 0; i < n; i++)
        o->names[o->count++] = o->dump.handlers.items[i];
    qsort(o->names, o->count, sizeof *o->names, cmp_str);
    return 0;
}

static void free_observed(observed *o)
{
    cd_dump_free(&o->dump);
    free(o->names);
}

/* ---- helpers for lists ---- */

static void print_list(FILE *out, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? "," : "", names[i]);
}

/* Main-file runtimes and the union of every drop-in's, sorted. */
static size_t dropin_runtimes(const cd_prediction *p, const char ***out)
{
    size_t total = 0;
    for (size_t i = 1; i < p->nfiles; i++)
        total += p->files[i].nruntimes;
    const char **names = calloc(total ? total : 1, sizeof *names);
    if (!names) return 0;
    size_t n = 0;
    for (size_t i = 1; i < p->nfiles; i++)
        for (size_t j = 0; j < p->files[i].nruntimes; j++)
            names[n++] = p->files[i].runtimes[j];
    qsort(names, n, sizeof *names, cmp_str);
    size_t unique = 0;
    for (size_t i = 0; i < n; i++)
        if (!unique || strcmp(names[unique - 1], names[i]) != 0) names[unique++] = names[i];
    *out = names;
    return unique;
}

/* ---- -o lab: the five lines of step 3 ---- */

static void write_lab(const cd_prediction *p, const observed *o)
{
    const char **dropin = NULL;
    size_t ndropin = dropin_runtimes(p, &dropin);
    printf("MAIN_RUNTIMES=");
    if (p->nfiles) print_list(stdout, p->files[0].runtimes, p->files[0].nruntimes);
    printf("\nDROPIN_RUNTIMES=");
    print_list(stdout, dropin, ndropin);
    printf("\nCONFLICT=%s\n", p->conflict ? "yes" : "no");
    printf("CONFLICT_TABLE=%s\n", p->conflict ? p->conflict_table : "");
    printf("LOADED_RUNTIMES=");
    print_list(stdout, o->names, o->count);
    putchar('\n');
    free(dropin);
}

/* ---- -o json ---- */

static void json_str(const char *s)
{
    if (s)
        gp_json_string(stdout, s, strlen(s));
    else
        fputs("null", stdout);
}

static void json_list(const char *const *names, size_t n)
{
    putchar('[');
    for (size_t i = 0; i < n; i++) {
        if (i) putchar(',');
        json_str(names[i]);
    }
    putchar(']');
}

static void json_notes(const cd_notes *notes)
{
    putchar('[');
    for (size_t i = 0; i < notes->count; i++) {
        const cd_note *n = &notes->items[i];
        printf("%s{\"file\":", i ? "," : "");
        json_str(n->file);
        printf(",\"line\":%" PRIu32 ",\"col\":%" PRIu32 ",\"key\":", n->line, n->col);
        json_str(n->key);
        printf(",\"code\":");
        json_str(n->code);
        printf(",\"message\":");
        json_str(n->text);
        putchar('}');
    }
    putchar(']');
}

/* "file:line" or "default" for every effective key, keyed by the dotted
 * key in TOML syntax. */
typedef struct origins_ctx {
    bool first;
} origins_ctx;

static void json_origin(const cd_node *leaf, const cd_node *const *path, size_t depth, void *ctx)
{
    origins_ctx *oc = ctx;
    char *key = cd_path_text(path, depth);
    if (!key) return;
    printf("%s", oc->first ? "" : ",");
    oc->first = false;
    json_str(key);
    putchar(':');
    if (leaf->origin.file) {
        char *where_at = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&where_at, &len);
        if (f) {
            fprintf(f, "%s:%" PRIu32, leaf->origin.file, leaf->origin.line);
            fclose(f);
            json_str(where_at);
            free(where_at);
        }
    } else {
        json_str("default");
    }
    free(key);
}

static void write_json(const cd_prediction *p, const observed *o, const char *observed_path,
                       const char *version_source)
{
    printf("{\"containerd_version\":");
    json_str(cd_family_name(p->family));
    printf(",\"containerd_version_from\":");
    json_str(version_source);
    printf(",\"files\":[");
    for (size_t i = 0; i < p->nfiles; i++) {
        const cd_file *f = &p->files[i];
        printf("%s{\"path\":", i ? "," : "");
        json_str(f->path);
        if (f->version)
            printf(",\"version\":%" PRId64, f->version);
        else
            printf(",\"version\":null");
        printf(",\"imported_by\":");
        json_str(f->imported_by);
        printf(",\"runtimes\":");
        json_list(f->runtimes, f->nruntimes);
        putchar('}');
    }
    printf("],\"main_runtimes\":");
    if (p->nfiles)
        json_list(p->files[0].runtimes, p->files[0].nruntimes);
    else
        json_list(NULL, 0);
    const char **dropin = NULL;
    size_t ndropin = dropin_runtimes(p, &dropin);
    printf(",\"dropin_runtimes\":");
    json_list(dropin, ndropin);
    free(dropin);
    printf(",\"conflict\":%s,\"conflict_table\":", p->conflict ? "true" : "false");
    json_str(p->conflict ? p->conflict_table : NULL);
    printf(",\"conflict_files\":");
    json_list(p->conflict_files, p->conflict ? 2 : 0);
    printf(",\"conflict_winner\":");
    json_str(p->conflict ? p->conflict_winner : NULL);
    printf(",\"winner_reason\":");
    json_str(p->conflict ? p->winner_reason : NULL);
    printf(",\"predicted\":{\"merged_version\":%" PRId64 ",\"config\":", p->version);
    if (p->config)
        cd_write_json(p->config, stdout);
    else
        fputs("null", stdout);
    printf(",\"origins\":{");
    origins_ctx oc = {true};
    if (p->config) cd_walk_leaves(p->config, json_origin, &oc);
    printf("},\"runtimes\":");
    json_list(p->runtimes, p->nruntimes);
    printf(",\"default_runtime_name\":");
    const cd_node *drn = p->default_runtime_name;
    json_str(drn && !drn->is_table && drn->value->type == TOML_STRING ? drn->value->u.s : NULL);
    printf(",\"cri_valid\":%s,\"cri_error\":", p->cri_error ? "false" : "true");
    json_str(p->cri_error);
    printf(",\"error\":");
    json_str(p->error);
    printf("},\"lost\":");
    json_notes(&p->lost);
    printf(",\"lints\":");
    json_notes(&p->lints);
    if (observed_path) {
        printf(",\"observed\":{\"source\":");
        json_str(observed_path);
        printf(",\"runtimes\":");
        json_list(o->names, o->count);
        putchar('}');
    }
    printf("}\n");
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
static void print_cell(const char *s, int columns)
{
    wchar_t wide[256];
    size_t n = mbstowcs(wide, s, sizeof wide / sizeof *wide - 1);
    int width = n == (size_t)-1 ? (int)strlen(s) : wcswidth(wide, n);
    if (width < 0) width = (int)strlen(s);
    fputs(s, stdout);
    for (; width < columns; width++)
        putchar(' ');
    putchar(' ');
}

static void print_row(const char *handler, const char *declared, const char *predicted,
                      const char *seen)
{
    fputs("  ", stdout);
    print_cell(handler, 16);
    print_cell(declared, 10);
    print_cell(predicted, 10);
    printf("%s\n", seen);
}

static bool listed(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return true;
    return false;
}

static void text_origin(const cd_node *leaf, const cd_node *const *path, size_t depth, void *ctx)
{
    (void)ctx;
    char *key = cd_path_text(path, depth);
    char value[256] = "";
    FILE *f = fmemopen(value, sizeof value, "w");
    if (f) {
        toml_emit_value(leaf->value, f);
        fclose(f);
    }
    value[sizeof value - 1] = '\0';
    char buf[512];
    printf("  %s = %s  (%s)\n", key ? key : "", value, where(&leaf->origin, buf, sizeof buf));
    free(key);
}

/* The keys that decide what each runtime handler is, with their origin. */
static void write_runtime_keys(const cd_prediction *p)
{
    const cd_node *rts =
        cd_path(p->config, "plugins", p->cri_plugin, "containerd", "runtimes", NULL);
    if (!rts) return;
    printf(_("\nEffective runtimes (under plugins.\"%s\".containerd.runtimes), and where each "
             "value comes from:\n"),
           p->cri_plugin);
    cd_walk_leaves(rts, text_origin, NULL);
}

static void write_text(const cd_prediction *p, const observed *o, const char *observed_path,
                       const char *version_source)
{
    printf(_("containerd %s rules (%s), merged config version %" PRId64 "\n\n"),
           cd_family_name(p->family),
           strcmp(version_source, "installed") == 0 ? _("the installed containerd")
           : strcmp(version_source, "default") == 0 ? _("no containerd on PATH: the default")
                                                    : _("as asked"),
           p->version);
    printf(_("Files, in load order:\n"));
    for (size_t i = 0; i < p->nfiles; i++) {
        const cd_file *f = &p->files[i];
        printf("  %zu. %s  ", i + 1, f->path);
        if (f->version)
            printf(_("version %" PRId64), f->version);
        else
            printf(_("no version"));
        printf(_("  runtimes: "));
        if (f->nruntimes)
            print_list(stdout, f->runtimes, f->nruntimes);
        else
            printf("-");
        putchar('\n');
    }

    /* Declared, predicted, observed, side by side. */
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
    printf(_("\nRuntime handlers:\n"));
    print_row(_("handler"), _("declared"), _("predicted"), _("observed"));
    for (size_t i = 0; i < nall; i++) {
        bool declared = false;
        for (size_t f = 0; f < p->nfiles; f++)
            declared |= listed(p->files[f].runtimes, p->files[f].nruntimes, all[i]);
        print_row(all[i], declared ? _("yes") : "-",
                  listed(p->runtimes, p->nruntimes, all[i]) ? _("loads") : _("NO"),
                  observed_path ? (listed(o->names, o->count, all[i]) ? _("loaded") : _("NO"))
                                : "-");
    }
    const cd_node *drn = p->default_runtime_name;
    char buf[512];
    if (drn && !drn->is_table)
        printf(_("  default_runtime_name = \"%s\" (%s)\n"),
               drn->value->type == TOML_STRING ? drn->value->u.s : "?",
               where(&drn->origin, buf, sizeof buf));

    write_runtime_keys(p);

    printf(_("\nVerdicts:\n"));
    if (p->error)
        printf(_("  REFUSED: containerd %s will not start on these files: %s\n"),
               cd_family_name(p->family), p->error);
    if (p->cri_error)
        printf(_("  CRI FAILS: %s\n"), p->cri_error);
    else
        printf(_("  CRI config valid\n"));
    if (p->conflict)
        printf(_("  CONFLICT: %s and %s both define content in %s;\n    %s wins: %s\n"),
               p->conflict_files[0], p->conflict_files[1], p->conflict_table, p->conflict_winner,
               p->winner_reason);
    else
        printf(_("  no two files define content in the same table\n"));
    if (p->lost.count) printf(_("\nWritten but not loaded:\n"));
    for (size_t i = 0; i < p->lost.count; i++) {
        const cd_note *n = &p->lost.items[i];
        printf("  %s:%" PRIu32 "  %s: %s\n", n->file ? n->file : "-", n->line, n->key ? n->key : "",
               n->text);
    }
    if (p->lints.count) printf(_("\nLints:\n"));
    for (size_t i = 0; i < p->lints.count; i++) {
        const cd_note *n = &p->lints.items[i];
        if (n->file)
            printf("  %s:%" PRIu32 "  [%s] %s\n", n->file, n->line, n->code, n->text);
        else
            printf("  [%s] %s\n", n->code, n->text);
    }
}

/* The rules of the containerd on PATH (`containerd --version` prints
 * "containerd github.com/containerd/containerd 1.6.20~ds1 ..."), else 2.1. */
static void pick_family(merge_args *a)
{
    char *argv[] = {"containerd", "--version", NULL};
    char *out = NULL, *errout = NULL;
    size_t out_len, err_len;
    int status = 0;
    a->opt.family = CD_V2_1;
    a->version_source = "default";
    if (gp_spawn_capture(argv, 5000, &out, &out_len, &errout, &err_len, &status, NULL) ==
            GP_SPAWN_OK &&
        status == 0) {
        char word[3][128] = {{0}};
        if (sscanf(out, "%127s %127s %127s", word[0], word[1], word[2]) == 3 &&
            cd_family_parse(word[2], &a->opt.family) == 0)
            a->version_source = "installed";
    }
    free(out);
    free(errout);
}

int cli_cmd_containerd_merge(int argc, char **argv)
{
    merge_args a = {.opt.family = CD_V2_1};
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i])) return cli_cmd_containerd(2, (char *[]){"containerd", "--help"});
    if (parse_args(argc, argv, &a) != 0) return EXIT_CANNOT_TELL;
    if (a.version_text && cd_family_parse(a.version_text, &a.opt.family) != 0) {
        cli_error(_("unknown containerd version '%s' (1.6, 1.7, 2.0, 2.1 or 2.2)"), a.version_text);
        return EXIT_CANNOT_TELL;
    }
    if (a.version_text)
        a.version_source = "--containerd";
    else
        pick_family(&a);
    observed o = {0};
    if (a.observed && load_observed(a.observed, &o) != 0) return EXIT_CANNOT_TELL;
    /* What was loaded is observed, never computed: without a dump the lab's
     * LOADED_RUNTIMES line stays empty. */
    if (a.out == OUT_LAB && !a.observed)
        cli_error(_("LOADED_RUNTIMES is empty: give --observed DUMP, a `containerd config dump` "
                    "taken on the node"));
    gp_error err = {0};
    cd_prediction *p = cd_predict(&a.opt, &err);
    if (!p) {
        cli_report(&err);
        free_observed(&o);
        return EXIT_CANNOT_TELL;
    }
    if (a.out == OUT_LAB)
        write_lab(p, &o);
    else if (a.out == OUT_JSON)
        write_json(p, &o, a.observed, a.version_source);
    else
        write_text(p, &o, a.observed, a.version_source);
    int rc = p->error || p->cri_error ? EXIT_DOES_NOT_HOLD : EXIT_HOLDS;
    cd_prediction_free(p);
    free_observed(&o);
    if (fflush(stdout) != 0) return EXIT_CANNOT_TELL;
    return rc;
}
