/* gpuop containerd merge: what a containerd version loads from the files.
 * The forms it prints are containerd/render.c's, which the lab shares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "containerd/containerd.h"
#include "containerd/render.h"
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
    cd_observed o = {0};
    gp_error err = {0};
    if (a.observed && cd_observed_read(a.observed, &o, &err) != 0) {
        cli_report(&err);
        return EXIT_CANNOT_TELL;
    }
    /* What was loaded is observed, never computed: without a dump the lab's
     * LOADED_RUNTIMES line stays empty. */
    if (a.out == CD_RENDER_LAB && !a.observed)
        cli_error(_("LOADED_RUNTIMES is empty: give --observed DUMP, a `containerd config dump` "
                    "taken on the node"));
    cd_prediction *p = cd_predict(&a.opt, &err);
    if (!p) {
        cli_report(&err);
        cd_observed_free(&o);
        return EXIT_CANNOT_TELL;
    }
    int written = cd_render_merge(stdout, p, &o, a.version_source, a.out);
    int rc = p->error || p->cri_error ? EXIT_DOES_NOT_HOLD : EXIT_HOLDS;
    cd_prediction_free(p);
    cd_observed_free(&o);
    if (written != 0 || fflush(stdout) != 0) return EXIT_CANNOT_TELL;
    return rc;
}
