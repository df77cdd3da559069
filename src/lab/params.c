/* The numbers of one lab, and R/.gpuop-lab.json. */
#include "lab/lab.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab/workspace.h"
#include "util/file.h"

#define TOOLKIT_IMAGE "nvcr.io/nvidia/k8s/container-toolkit"

/* Real GPUs with the product label GPU feature discovery gives them and
 * their memory: a learner who looks the model up finds the same number. */
typedef struct gpu_model {
    const char *label;
    int memory_gib;
} gpu_model;

static const gpu_model models[] = {
    {"NVIDIA-A100-SXM4-40GB", 40},
    {"NVIDIA-A100-SXM4-80GB", 80},
    {"NVIDIA-H100-80GB-HBM3", 80},
    {"NVIDIA-A30", 24},
    {"NVIDIA-L4", 24},
    {"NVIDIA-A10", 24},
    {"NVIDIA-L40S", 48},
    {"Tesla-T4", 16},
};

static void seeds_story(lab_params *p)
{
    memset(p, 0, sizeof *p);
    p->gpus_per_node = 4;
    p->replicas = 5;
    snprintf(p->gpu_model, sizeof p->gpu_model, "%s", models[0].label);
    p->gpu_memory_gib = models[0].memory_gib;
    p->node_cpu = 16;
    p->node_memory_gib = 32;
    p->node_pods = 110;
    p->ds_request_gib = 64;
    snprintf(p->ds_old_memory, sizeof p->ds_old_memory, "128Mi");
    snprintf(p->ds_old_image, sizeof p->ds_old_image, "%s:v1.16.2", TOOLKIT_IMAGE);
    snprintf(p->ds_new_image, sizeof p->ds_new_image, "%s:v1.17.0", TOOLKIT_IMAGE);
}

/* splitmix64: a fixed, portable sequence, so a seed gives the same lab on
 * every machine and in every version. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int pick(uint64_t *state, int n)
{
    return (int)(next_random(state) % (uint64_t)n);
}

void lab_params_for_seed(uint64_t seed, lab_params *p)
{
    seeds_story(p);
    p->seed = seed;
    if (seed == 0) return;
    static const int gpus[] = {2, 4, 8};
    static const int memory[] = {16, 32, 48, 64};
    static const int cpus[] = {8, 16, 32};
    uint64_t state = seed;
    /* Another seed must tell another story: redraw the seeds' own numbers. */
    do {
        p->gpus_per_node = gpus[pick(&state, 3)];
        p->replicas = 2 + pick(&state, 9);
        const gpu_model *m = &models[pick(&state, (int)(sizeof models / sizeof *models))];
        snprintf(p->gpu_model, sizeof p->gpu_model, "%s", m->label);
        p->gpu_memory_gib = m->memory_gib;
    } while (p->gpus_per_node == 4 && p->replicas == 5 && p->gpu_memory_gib == 40);
    p->node_cpu = cpus[pick(&state, 3)];
    p->node_memory_gib = memory[pick(&state, 4)];
    /* The new request never fits a node: that is what stalls the rollout. */
    p->ds_request_gib = p->node_memory_gib * 2;
}

/* ---- R/.gpuop-lab.json ---- */

static json_t *params_json(const lab_params *p)
{
    /* JSON integers are signed 64-bit in jansson: a larger seed is kept as
     * its decimal text. */
    char seed[24];
    snprintf(seed, sizeof seed, "%" PRIu64, p->seed);
    json_t *s =
        p->seed <= (uint64_t)LLONG_MAX ? json_integer((json_int_t)p->seed) : json_string(seed);
    return json_pack("{s:o, s:i, s:i, s:s, s:i, s:i, s:i, s:i, s:i, s:s, s:s, s:s}", "seed", s,
                     "gpus_per_node", p->gpus_per_node, "replicas", p->replicas, "gpu_model",
                     p->gpu_model, "gpu_memory_gib", p->gpu_memory_gib, "node_cpu", p->node_cpu,
                     "node_memory_gib", p->node_memory_gib, "node_pods", p->node_pods,
                     "ds_request_gib", p->ds_request_gib, "ds_old_memory", p->ds_old_memory,
                     "ds_old_image", p->ds_old_image, "ds_new_image", p->ds_new_image);
}

char *lab_params_text(const lab_params *p)
{
    json_t *j = params_json(p);
    char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!text) return NULL;
    size_t n = strlen(text);
    char *with_newline = realloc(text, n + 2);
    if (!with_newline) {
        free(text);
        return NULL;
    }
    memcpy(with_newline + n, "\n", 2);
    return with_newline;
}

int lab_params_save(const char *root, const lab_params *p, gp_error *err)
{
    char *text = lab_params_text(p);
    int rc = -1;
    if (!text)
        gp_error_set(err, root, 0, 0, "out of memory");
    else
        rc = lab_ws_write(root, LAB_PARAMS_FILE, text, strlen(text), 0644, err);
    free(text);
    return rc;
}

static int read_int(const char *path, json_t *j, const char *key, int min, int max, int *out,
                    gp_error *err)
{
    json_t *v = json_object_get(j, key);
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
        gp_error_set(err, path, 0, 0, "'%s' must be a whole number from %d to %d", key, min, max);
        return -1;
    }
    *out = (int)json_integer_value(v);
    return 0;
}

static int read_str(const char *path, json_t *j, const char *key, char *out, size_t cap,
                    gp_error *err)
{
    const char *s = json_string_value(json_object_get(j, key));
    if (!s || !*s || strlen(s) >= cap) {
        gp_error_set(err, path, 0, 0, "'%s' must be a text of 1 to %zu characters", key, cap - 1);
        return -1;
    }
    snprintf(out, cap, "%s", s);
    return 0;
}

static int read_seed(const char *path, json_t *j, uint64_t *out, gp_error *err)
{
    json_t *v = json_object_get(j, "seed");
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return 0;
    }
    const char *s = json_string_value(v);
    char *end = NULL;
    if (s && *s >= '0' && *s <= '9') *out = strtoull(s, &end, 10);
    if (!end || *end) {
        gp_error_set(err, path, 0, 0, "'seed' must be a whole number of at least 0");
        return -1;
    }
    return 0;
}

static int params_from_json(const char *path, json_t *j, lab_params *p, gp_error *err)
{
    memset(p, 0, sizeof *p);
    if (!json_is_object(j)) {
        gp_error_set(err, path, 0, 0, "not a JSON object");
        return -1;
    }
    if (read_seed(path, j, &p->seed, err) != 0 ||
        read_int(path, j, "gpus_per_node", 1, 64, &p->gpus_per_node, err) != 0 ||
        read_int(path, j, "replicas", 1, 1024, &p->replicas, err) != 0 ||
        read_str(path, j, "gpu_model", p->gpu_model, sizeof p->gpu_model, err) != 0 ||
        read_int(path, j, "gpu_memory_gib", 1, 4096, &p->gpu_memory_gib, err) != 0 ||
        read_int(path, j, "node_cpu", 1, 4096, &p->node_cpu, err) != 0 ||
        read_int(path, j, "node_memory_gib", 1, 65536, &p->node_memory_gib, err) != 0 ||
        read_int(path, j, "node_pods", 1, 10000, &p->node_pods, err) != 0 ||
        read_int(path, j, "ds_request_gib", 1, 1 << 20, &p->ds_request_gib, err) != 0 ||
        read_str(path, j, "ds_old_memory", p->ds_old_memory, sizeof p->ds_old_memory, err) != 0 ||
        read_str(path, j, "ds_old_image", p->ds_old_image, sizeof p->ds_old_image, err) != 0 ||
        read_str(path, j, "ds_new_image", p->ds_new_image, sizeof p->ds_new_image, err) != 0)
        return -1;
    if (p->ds_request_gib <= p->node_memory_gib) {
        gp_error_set(err, path, 0, 0,
                     "'ds_request_gib' (%d) must exceed 'node_memory_gib' (%d): the new request "
                     "must not fit a node",
                     p->ds_request_gib, p->node_memory_gib);
        return -1;
    }
    return 0;
}

int lab_params_load(const char *root, lab_params *p, gp_error *err)
{
    char *path = lab_path(root, LAB_PARAMS_FILE);
    if (!path) {
        gp_error_set(err, root, 0, 0, "out of memory");
        return -1;
    }
    size_t len = 0;
    char *text = gp_read_file(path, &len, err);
    int rc = -1;
    if (text) {
        json_error_t jerr;
        json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!j)
            gp_error_set(err, path, jerr.line > 0 ? (unsigned)jerr.line : 0,
                         jerr.column > 0 ? (unsigned)jerr.column : 0, "%s", jerr.text);
        else
            rc = params_from_json(path, j, p, err);
        json_decref(j);
    }
    free(text);
    free(path);
    return rc;
}
