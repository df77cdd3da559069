/* gpuop containerd merge: what a containerd version loads from the files.
 * The forms it prints are containerd/render.c's, which the lab shares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "containerd/containerd.h"
#include "containerd/observed.h"
#include "containerd/render.h"
#include "util/json_out.h"
#include "util/spawn.h"

typedef struct merge_args {
    cd_options opt;
    const char *version_text;
    const char *version_source; /* "--containerd", "installed" or "default" */
    const char *observed;
    cd_render_format out;
} merge_args;

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
                a->out = CD_RENDER_TEXT;
            else if (strcmp(o, "json") == 0)
                a->out = CD_RENDER_JSON;
            else if (strcmp(o, "lab") == 0)
                a->out = CD_RENDER_LAB;
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

/* What went wrong, on stderr, and for -o json also on stdout as the
 * report's error object, so that a script never reads an empty stdout. */
static int cannot_tell(const merge_args *a, const char *code, const char *where,
                       const gp_error *err)
{
    /* A located error names its file first; any other is gpuop's. */
    if (strcmp(code, "unknown-version") == 0)
        cli_error("%s", err->text);
    else
        cli_report(err);
    if (a->out != CD_RENDER_JSON) return EXIT_CANNOT_TELL;
    fputs("{\"schema\":", stdout);
    gp_json_string(stdout, CD_MERGE_SCHEMA, strlen(CD_MERGE_SCHEMA));
    fputs(",\"holds\":null,\"error\":{\"code\":", stdout);
    gp_json_string(stdout, code, strlen(code));
    fputs(",\"message\":", stdout);
    gp_json_string(stdout, err->text, strlen(err->text));
    fputs(",\"where\":", stdout);
    gp_json_string(stdout, where, strlen(where));
    fputs("}}\n", stdout);
    fflush(stdout);
    return EXIT_CANNOT_TELL;
}

int cli_cmd_containerd_merge(int argc, char **argv)
{
    merge_args a = {.opt.family = CD_V2_1};
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i])) return cli_cmd_containerd(2, (char *[]){"containerd", "--help"});
    if (parse_args(argc, argv, &a) != 0) return EXIT_CANNOT_TELL;
    gp_error err = {0};
    if (a.version_text && cd_family_parse(a.version_text, &a.opt.family) != 0) {
        gp_error_set(&err, NULL, 0, 0,
                     "unknown containerd version '%s' (1.6, 1.7, 2.0, 2.1 or 2.2)", a.version_text);
        return cannot_tell(&a, "unknown-version", "--containerd", &err);
    }
    if (a.version_text)
        a.version_source = "--containerd";
    else
        pick_family(&a);
    cd_observed o = {0};
    if (a.observed && cd_observed_read(a.observed, &o, &err) != 0)
        return cannot_tell(&a, "observed-unreadable", a.observed, &err);
    /* What was loaded is observed, never computed: without a dump the lab's
     * LOADED_RUNTIMES line stays empty. */
    if (a.out == CD_RENDER_LAB && !a.observed)
        cli_error(_("LOADED_RUNTIMES is empty: give --observed DUMP, a `containerd config dump` "
                    "taken on the node"));
    cd_prediction *p = cd_predict(&a.opt, &err);
    if (!p) {
        cd_observed_free(&o);
        return cannot_tell(&a, "config-unreadable",
                           a.opt.config_path ? a.opt.config_path : CD_DEFAULT_CONFIG, &err);
    }
    int written = cd_render_merge(stdout, p, &o, a.version_source, a.out);
    int rc = cd_prediction_holds(p) ? EXIT_HOLDS : EXIT_DOES_NOT_HOLD;
    cd_prediction_free(p);
    cd_observed_free(&o);
    if (written != 0 || fflush(stdout) != 0) return EXIT_CANNOT_TELL;
    return rc;
}
