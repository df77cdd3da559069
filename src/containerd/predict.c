/* cd_predict: load, merge, analyse. */
#include <stdlib.h>
#include <string.h>

#include "containerd/containerd_internal.h"

int cd_family_parse(const char *text, cd_family *out)
{
    if (text[0] == 'v') text++;
    char *end;
    long major = strtol(text, &end, 10);
    if (end == text || *end != '.') return -1;
    long minor = strtol(end + 1, &end, 10);
    if (*end != '\0' && *end != '.' && *end != '~' && *end != '-' && *end != '+') return -1;
    if (major == 1 && minor == 6)
        *out = CD_V1_6;
    else if (major == 1 && minor == 7)
        *out = CD_V1_7;
    else if (major == 2 && minor == 0)
        *out = CD_V2_0;
    else if (major == 2 && (minor == 1 || minor == 2))
        *out = CD_V2_1;
    else
        return -1;
    return 0;
}

const char *cd_family_name(cd_family f)
{
    switch (f) {
    case CD_V1_6:
        return "1.6";
    case CD_V1_7:
        return "1.7";
    case CD_V2_0:
        return "2.0";
    case CD_V2_1:
        return "2.1";
    }
    return "?";
}

cd_prediction *cd_predict(const cd_options *opt, gp_error *err)
{
    gp_arena *arena = gp_arena_new();
    cd_prediction *p = arena ? gp_arena_zalloc(arena, sizeof *p) : NULL;
    if (!p) {
        gp_arena_free(arena);
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return NULL;
    }
    p->arena = arena;
    p->family = opt->family;
    if (cd_load(p, opt, err) != 0) {
        cd_prediction_free(p);
        return NULL;
    }
    if (p->nfiles) cd_merge(p);
    cd_analyze(p);
    return p;
}

void cd_prediction_free(cd_prediction *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nfiles; i++)
        toml_free(p->files[i].doc);
    for (size_t i = 0; i < p->nowned; i++)
        toml_free(p->owned[i]);
    free(p->owned);
    gp_arena_free(p->arena);
}

bool cd_prediction_holds(const cd_prediction *p)
{
    return !p->error && !p->cri_error && !p->declared_not_loaded && !p->default_lost &&
           !p->imports_ignored;
}

int cd_prediction_write_config(const cd_prediction *p, FILE *out)
{
    if (p->config)
        cd_write_json(p->config, out);
    else
        fputs("{}", out);
    return ferror(out) ? -1 : 0;
}
