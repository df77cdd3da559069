/* The table of gpu-node-facts.md 2.1, and names for it. */
#include "analyze/mig_internal.h"

#include "util/yaml_json.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Slices: 1g = 1/7 compute and 1/8 memory; the double-memory 1g 1/7 and
 * 2/8; 2g 2/7 and 2/8; 3g 3/7 but 4/8; 4g 4/7 and 4/8; 7g all. */
static const an_mig_profile a30[] = {
    {"1g.6gb", 4, 1, 1, 6},      {"1g.6gb+me", 1, 1, 1, 6}, {"2g.12gb", 2, 2, 2, 12},
    {"2g.12gb+me", 1, 2, 2, 12}, {"4g.24gb", 1, 4, 4, 24},
};
static const an_mig_profile a100_40[] = {
    {"1g.5gb", 7, 1, 1, 5},   {"1g.5gb+me", 1, 1, 1, 5}, {"1g.10gb", 4, 1, 2, 10},
    {"2g.10gb", 3, 2, 2, 10}, {"3g.20gb", 2, 3, 4, 20},  {"4g.20gb", 1, 4, 4, 20},
    {"7g.40gb", 1, 7, 8, 40},
};
static const an_mig_profile gb80[] = {
    {"1g.10gb", 7, 1, 1, 10}, {"1g.10gb+me", 1, 1, 1, 10}, {"1g.20gb", 4, 1, 2, 20},
    {"2g.20gb", 3, 2, 2, 20}, {"3g.40gb", 2, 3, 4, 40},    {"4g.40gb", 1, 4, 4, 40},
    {"7g.80gb", 1, 7, 8, 80},
};
static const an_mig_profile nvl94[] = {
    {"1g.12gb", 7, 1, 1, 12}, {"1g.12gb+me", 1, 1, 1, 12}, {"1g.24gb", 4, 1, 2, 24},
    {"2g.24gb", 3, 2, 2, 24}, {"3g.47gb", 2, 3, 4, 47},    {"4g.47gb", 1, 4, 4, 47},
    {"7g.94gb", 1, 7, 8, 94},
};
static const an_mig_profile gb96[] = {
    {"1g.12gb", 7, 1, 1, 12}, {"1g.24gb", 4, 1, 2, 24}, {"2g.24gb", 3, 2, 2, 24},
    {"3g.48gb", 2, 3, 4, 48}, {"4g.48gb", 1, 4, 4, 48}, {"7g.96gb", 1, 7, 8, 96},
};
static const an_mig_profile h200[] = {
    {"1g.18gb", 7, 1, 1, 18},   {"1g.18gb+me", 1, 1, 1, 18}, {"1g.35gb", 4, 1, 2, 35},
    {"2g.35gb", 3, 2, 2, 35},   {"3g.71gb", 2, 3, 4, 71},    {"4g.71gb", 1, 4, 4, 71},
    {"7g.141gb", 1, 7, 8, 141},
};
static const an_mig_profile b200[] = {
    {"1g.23gb", 7, 1, 1, 23},   {"1g.23gb+me", 1, 1, 1, 23}, {"1g.45gb", 4, 1, 2, 45},
    {"2g.45gb", 3, 2, 2, 45},   {"3g.90gb", 2, 3, 4, 90},    {"4g.90gb", 1, 4, 4, 90},
    {"7g.180gb", 1, 7, 8, 180},
};
static const an_mig_profile gb200[] = {
    {"1g.23gb", 7, 1, 1, 23}, {"1g.47gb", 4, 1, 2, 47}, {"2g.47gb", 3, 2, 2, 47},
    {"3g.93gb", 2, 3, 4, 93}, {"4g.93gb", 1, 4, 4, 93}, {"7g.186gb", 1, 7, 8, 186},
};
static const an_mig_profile b300[] = {
    {"1g.34gb", 7, 1, 1, 34},   {"1g.67gb", 4, 1, 2, 67},   {"2g.67gb", 3, 2, 2, 67},
    {"3g.135gb", 2, 3, 4, 135}, {"4g.135gb", 1, 4, 4, 135}, {"7g.269gb", 1, 7, 8, 269},
};

/* The GPU Operator's all-balanced layouts. */
static const an_mig_count bal_a30[] = {{"1g.6gb", 2}, {"2g.12gb", 1}};
static const an_mig_count bal_a100_40[] = {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}};
static const an_mig_count bal_80[] = {{"1g.10gb", 2}, {"2g.20gb", 1}, {"3g.40gb", 1}};
static const an_mig_count bal_h200[] = {{"1g.18gb", 2}, {"2g.35gb", 1}, {"3g.71gb", 1}};
static const an_mig_count bal_b200[] = {{"1g.23gb", 2}, {"2g.45gb", 1}, {"3g.90gb", 1}};

#define MIG(p)     p, N(p)
#define BAL(b)     b, N(b)
#define NO_MIG     NULL, 0
#define NO_BALANCE NULL, 0

/* Within a family, ordered by memory: the first is the default variant.
 * Compute capabilities (for MPS's client cap, 48 from 7.5 on, else 16) are
 * the models' published ones. */
static const an_gpu_model models[] = {
    {"A30-24GB", "A30", 24, 80, MIG(a30), BAL(bal_a30)},
    {"A100-40GB", "A100", 40, 80, MIG(a100_40), BAL(bal_a100_40)},
    {"A100-80GB", "A100", 80, 80, MIG(gb80), BAL(bal_80)},
    {"A800-40GB", "A800", 40, 80, MIG(a100_40), BAL(bal_a100_40)},
    {"A800-80GB", "A800", 80, 80, MIG(gb80), BAL(bal_80)},
    {"H100-80GB", "H100", 80, 90, MIG(gb80), BAL(bal_80)},
    {"H100-NVL-94GB", "H100", 94, 90, MIG(nvl94), NO_BALANCE},
    {"H100-96GB", "H100", 96, 90, MIG(gb96), NO_BALANCE},
    {"H800-80GB", "H800", 80, 90, MIG(gb80), BAL(bal_80)},
    {"H800-NVL-94GB", "H800", 94, 90, MIG(nvl94), NO_BALANCE},
    {"GH200-96GB", "GH200", 96, 90, MIG(gb96), NO_BALANCE},
    {"H20-96GB", "H20", 96, 90, MIG(gb96), NO_BALANCE},
    {"H200-141GB", "H200", 141, 90, MIG(h200), BAL(bal_h200)},
    {"B200-180GB", "B200", 180, 100, MIG(b200), BAL(bal_b200)},
    {"GB200-186GB", "GB200", 186, 100, MIG(gb200), NO_BALANCE},
    {"B300-269GB", "B300", 269, 103, MIG(b300), NO_BALANCE},
    {"V100-16GB", "V100", 16, 70, NO_MIG, NO_BALANCE},
    {"V100-32GB", "V100", 32, 70, NO_MIG, NO_BALANCE},
    {"T4-16GB", "T4", 16, 75, NO_MIG, NO_BALANCE},
    {"A10-24GB", "A10", 24, 86, NO_MIG, NO_BALANCE},
    {"L4-24GB", "L4", 24, 89, NO_MIG, NO_BALANCE},
    {"L40-48GB", "L40", 48, 89, NO_MIG, NO_BALANCE},
    {"L40S-48GB", "L40S", 48, 89, NO_MIG, NO_BALANCE},
};

/* Upper-cased, '-'-separated tokens of `text` up to `end`. */
static size_t tokenize(const char *text, size_t len, char tokens[][32], size_t max)
{
    size_t n = 0, t = 0;
    for (size_t i = 0; i <= len && n < max; i++) {
        char ch = i < len ? text[i] : '-';
        if (ch == '-' || ch == ' ' || ch == '_') {
            if (t) {
                tokens[n][t] = '\0';
                n++;
                t = 0;
            }
            continue;
        }
        if (t < 31) tokens[n][t++] = (char)toupper((unsigned char)ch);
    }
    return n;
}

const an_gpu_model *an_gpu_model_find(const char *text, long memory_mib, char *mig_profile,
                                      size_t size)
{
    if (mig_profile && size) mig_profile[0] = '\0';
    if (!text) return NULL;
    size_t len = strlen(text);
    /* GFD appends "-SHARED" to a shared resource's product. */
    if (len >= 7 && strcmp(text + len - 7, "-SHARED") == 0) len -= 7;
    const char *mig = strstr(text, "-MIG-");
    if (mig && (size_t)(mig - text) < len) {
        if (mig_profile && size)
            snprintf(mig_profile, size, "%.*s", (int)(len - (size_t)(mig - text) - 5), mig + 5);
        len = (size_t)(mig - text);
    }
    char tokens[16][32];
    size_t nt = tokenize(text, len, tokens, 16);
    int gb = 0;
    bool nvl = false;
    for (size_t i = 0; i < nt; i++) {
        size_t tl = strlen(tokens[i]);
        if (tl > 2 && strcmp(tokens[i] + tl - 2, "GB") == 0 && isdigit((unsigned char)tokens[i][0]))
            gb = atoi(tokens[i]);
        if (strcmp(tokens[i], "NVL") == 0) nvl = true;
    }
    const an_gpu_model *best = NULL;
    long best_diff = 0;
    for (size_t m = 0; m < N(models); m++) {
        bool family = false;
        for (size_t i = 0; i < nt && !family; i++)
            family = strcmp(tokens[i], models[m].family) == 0;
        if (!family) continue;
        if (gb && models[m].memory_gib == gb) return &models[m];
        if (nvl && strstr(models[m].name, "NVL")) return &models[m];
        long diff = memory_mib > 0 ? labs(memory_mib - (long)models[m].memory_gib * 1024) : 0;
        if (!best || diff < best_diff) {
            best = &models[m];
            best_diff = diff;
        }
    }
    return best;
}

const an_mig_profile *an_mig_profile_find(const an_gpu_model *m, const char *name)
{
    if (!m || !name) return NULL;
    for (size_t i = 0; i < m->nprofiles; i++)
        if (strcmp(m->profiles[i].name, name) == 0) return &m->profiles[i];
    return NULL;
}

void an_mig_resource_name(const char *profile, char *out, size_t size)
{
    if (snprintf(out, size, "nvidia.com/mig-%s", profile) >= (int)size) out[size - 1] = '\0';
    for (char *c = out; *c; c++)
        if (*c == '+') *c = '.';
}

json_t *an_mig_json(const an_gpu_model *m)
{
    if (!m || !m->profiles) return NULL;
    bool four_slices = strcmp(m->family, "A30") == 0;
    json_t *profiles = json_array();
    for (size_t i = 0; i < m->nprofiles; i++) {
        const an_mig_profile *p = &m->profiles[i];
        char res[96];
        an_mig_resource_name(p->name, res, sizeof res);
        json_array_append_new(profiles,
                              json_pack("{s:s, s:i, s:i, s:i, s:i, s:s}", "profile", p->name,
                                        "max_instances", p->max, "memory_gib", p->memory_gb,
                                        "compute_slices", p->compute, "memory_slices", p->memory,
                                        "resource_mixed", res));
    }
    json_t *balanced = json_null();
    if (m->balanced) {
        balanced = json_array();
        for (size_t i = 0; i < m->nbalanced; i++)
            json_array_append_new(balanced,
                                  json_pack("{s:s, s:i}", "profile", m->balanced[i].profile,
                                            "count", m->balanced[i].count));
    }
    return json_pack("{s:s, s:{s:i, s:i}, s:o, s:o, s:s}", "model", m->name, "slices", "compute",
                     four_slices ? 4 : 7, "memory", four_slices ? 4 : 8, "profiles", profiles,
                     "balanced", balanced, "resource_single", "nvidia.com/gpu");
}

/* ---- mig-parted layouts ---- */

static json_t *located(gp_error *err, const char *name, const json_t *pos, const char *ptr,
                       const char *msg, const char *arg)
{
    unsigned line = 0, col = 0;
    gp_yaml_position(pos, ptr, &line, &col);
    gp_error_set(err, name, line, col, msg, arg);
    return NULL;
}

json_t *an_mig_layout_parse(const char *text, size_t len, const char *name, const char *layout,
                            gp_error *err)
{
    json_t *docs = NULL, *positions = NULL;
    if (gp_yaml_to_json(text, len, name, &docs, &positions, err) != 0) return NULL;
    const json_t *doc = json_array_get(docs, 0), *pos = json_array_get(positions, 0);
    const json_t *configs = json_object_get(doc, "mig-configs");
    json_t *out = NULL;
    if (!json_is_object(configs)) {
        located(err, name, pos, "", "%s", "not a mig-parted config: no mig-configs");
        goto done;
    }
    const json_t *groups = json_object_get(configs, layout);
    char ptr[600];
    snprintf(ptr, sizeof ptr, "/mig-configs/%s", layout);
    if (!groups) {
        located(err, name, pos, "/mig-configs", "the mig-parted config has no layout '%s'", layout);
        goto done;
    }
    if (!json_is_array(groups)) {
        located(err, name, pos, ptr, "layout '%s' is not a list of device groups", layout);
        goto done;
    }
    out = json_array();
    size_t i;
    const json_t *g;
    json_array_foreach(groups, i, g)
    {
        const json_t *devices = json_object_get(g, "devices");
        const json_t *mig = json_object_get(g, "mig-devices");
        bool all = json_is_string(devices) && strcmp(json_string_value(devices), "all") == 0;
        if (!all && !json_is_array(devices)) {
            char gptr[640];
            snprintf(gptr, sizeof gptr, "%s/%zu", ptr, i);
            json_decref(out);
            out = located(err, name, pos, gptr, "%s",
                          "a device group needs devices: all or a list of GPU indices");
            goto done;
        }
        json_array_append_new(out,
                              json_pack("{s:O, s:b, s:o}", "devices", devices, "mig_enabled",
                                        json_is_true(json_object_get(g, "mig-enabled")),
                                        "mig_devices", mig ? json_deep_copy(mig) : json_object()));
    }
done:
    json_decref(docs);
    json_decref(positions);
    return out;
}

long an_mig_layout_instances(const json_t *layout, const char *profile, long gpus, long *per_gpu)
{
    long total = 0;
    if (per_gpu) *per_gpu = 0;
    size_t i;
    const json_t *g;
    json_array_foreach(layout, i, g)
    {
        if (!json_is_true(json_object_get(g, "mig_enabled"))) continue;
        long n =
            (long)json_integer_value(json_object_get(json_object_get(g, "mig_devices"), profile));
        if (n <= 0) continue;
        if (per_gpu && !*per_gpu) *per_gpu = n;
        const json_t *devices = json_object_get(g, "devices");
        if (json_is_string(devices)) {
            if (gpus < 0) return -1;
            total += n * gpus;
            continue;
        }
        size_t k;
        const json_t *d;
        json_array_foreach(devices, k, d)
        {
            long idx = (long)json_integer_value(d);
            if (gpus < 0 || (idx >= 0 && idx < gpus)) total += n;
        }
    }
    return total;
}

long an_mig_layout_full_gpus(const json_t *layout, long gpus)
{
    long full = 0;
    size_t i;
    const json_t *g;
    json_array_foreach(layout, i, g)
    {
        if (json_is_true(json_object_get(g, "mig_enabled"))) continue;
        const json_t *devices = json_object_get(g, "devices");
        if (json_is_string(devices)) return gpus;
        size_t k;
        const json_t *d;
        json_array_foreach(devices, k, d)
        {
            long idx = (long)json_integer_value(d);
            full += idx >= 0 && idx < gpus;
        }
    }
    return full;
}

void an_mig_layout_check(const json_t *layout, const char *layout_name, const an_gpu_model *m,
                         json_t *warnings)
{
    if (!m || !m->profiles) return;
    int slices_c = strcmp(m->family, "A30") == 0 ? 4 : 7, slices_m = slices_c == 4 ? 4 : 8;
    size_t i;
    const json_t *g;
    json_array_foreach(layout, i, g)
    {
        if (!json_is_true(json_object_get(g, "mig_enabled"))) continue;
        int compute = 0, memory = 0;
        const char *key;
        json_t *v;
        char text[512];
        json_object_foreach(json_object_get(g, "mig_devices"), key, v)
        {
            int n = (int)json_integer_value(v);
            const an_mig_profile *p = an_mig_profile_find(m, key);
            if (!p) {
                snprintf(text, sizeof text, "MIG layout %s: %s has no profile %s", layout_name,
                         m->name, key);
                json_array_append_new(warnings, json_string(text));
                continue;
            }
            if (n > p->max) {
                snprintf(text, sizeof text,
                         "MIG layout %s: %d x %s on one %s, at most %d fit (gpu-node-facts.md 2.1)",
                         layout_name, n, key, m->name, p->max);
                json_array_append_new(warnings, json_string(text));
            }
            compute += n * p->compute;
            memory += n * p->memory;
        }
        if (compute > slices_c || memory > slices_m) {
            snprintf(text, sizeof text,
                     "MIG layout %s: group %zu needs %d compute and %d memory slices, one %s has "
                     "%d and %d (gpu-node-facts.md 2.2)",
                     layout_name, i + 1, compute, memory, m->name, slices_c, slices_m);
            json_array_append_new(warnings, json_string(text));
        }
    }
}
