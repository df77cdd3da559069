/* The lab's file steps 1-4 (../shared/design/lab.md): parameters, the
 * workspace, the solver, and what the grader says besides its verdicts:
 * where (file:line:col), what it shows, how it treats the machine. The
 * verdicts themselves, right and wrong answers for every step, are the
 * corpus' (test_lab_corpus.c, tests/data/lab/corpus/); good answers here are the
 * incident's own files (examples/incident/). Step 4 runs scripts
 * against gpuop as the stand-in containerd: set GPUOP to the gpuop binary,
 * else those tests are skipped. */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "temp_dir.h"

#include "json_assert.h"
#include "procs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "containerd/observed.h"
#include "lab/grade_files.h"
#include "lab/lab.h"
#include "containerd/script.h"
#include "lab/solve_files.h"
#include "lab/steps.h"
#include "lab/incident_files.h"
#include "lab/workspace.h"
#include "util/file.h"
#include "util/spawn.h"

/* ---- a workspace per test ---- */

typedef struct fixture {
    char root[64];
    lab_params p;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->root, sizeof f->root, "/tmp/test-lab-files-XXXXXX");
    assert_non_null(mkdtemp(f->root));
    lab_params_for_seed(0, &f->p);
    gp_error err = {0};
    assert_int_equal(lab_workspace_init(f->root, &f->p, &err), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    temp_dir_remove(f->root);
    free(f);
    return 0;
}

static char *in_root(const fixture *f, const char *rel)
{
    char *path = lab_path(f->root, rel);
    assert_non_null(path);
    return path;
}

static void put_text(const fixture *f, const char *rel, const char *text, mode_t mode)
{
    char *path = in_root(f, rel);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs(text, out);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(chmod(path, mode), 0);
    free(path);
}

static char *data_text(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/lab/%s", TEST_DATA_DIR, name);
    size_t len;
    char *text = gp_read_file(path, &len, NULL);
    if (!text) print_error("cannot read %s\n", path);
    assert_non_null(text);
    return text;
}

/* Copies examples/incident/REL, the incident's own file (which is what
 * lab.md asks for), into the workspace at REL. */
static void put_incident(const fixture *f, const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/../../examples/incident/%s", TEST_DATA_DIR, rel);
    size_t len;
    char *text = gp_read_file(path, &len, NULL);
    if (!text) print_error("cannot read %s\n", path);
    assert_non_null(text);
    put_text(f, rel, text, 0644);
    free(text);
}

/* Copies tests/data/lab/NAME into the workspace at REL. */
static void put_data(const fixture *f, const char *rel, const char *name, mode_t mode)
{
    char *text = data_text(name);
    put_text(f, rel, text, mode);
    free(text);
}

static char *read_in(const fixture *f, const char *rel)
{
    char *path = in_root(f, rel);
    size_t len;
    char *text = gp_read_file(path, &len, NULL);
    free(path);
    return text;
}

/* ---- judging results ---- */

static json_t *grade(const fixture *f, int step)
{
    gp_error err = {0};
    json_t *r = lab_grade_file_step(step, f->root, &f->p, getenv("GPUOP"), &err);
    if (!r) print_error("grading step %d: %s\n", step, err.text);
    assert_non_null(r);
    assert_int_equal(json_integer_value(json_object_get(r, "step")), step);
    return r;
}

static const json_t *condition(const json_t *result, const char *code)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(result, "conditions"), i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "code")), code) == 0) return c;
    }
    return NULL;
}

static void assert_passes(json_t *result)
{
    if (!json_is_true(json_object_get(result, "passed"))) {
        char *text = json_dumps(result, JSON_INDENT(2));
        print_error("expected a pass:\n%s\n", text);
        free(text);
    }
    assert_true(json_is_true(json_object_get(result, "passed")));
    json_decref(result);
}

/* The step fails, and `code` is among the failed conditions. */
static const json_t *assert_fails_with(const json_t *result, const char *code)
{
    const json_t *c = condition(result, code);
    if (!c || json_is_true(json_object_get(c, "passed"))) {
        char *text = json_dumps(result, JSON_INDENT(2));
        print_error("expected %s to fail:\n%s\n", code, text);
        free(text);
    }
    assert_non_null(c);
    assert_false(json_is_true(json_object_get(c, "passed")));
    assert_false(json_is_true(json_object_get(result, "passed")));
    return c;
}

static void assert_condition_passes(const json_t *result, const char *code)
{
    const json_t *c = condition(result, code);
    if (!c) print_error("no condition %s\n", code);
    assert_non_null(c);
    assert_true(json_is_true(json_object_get(c, "passed")));
}

static const char *field(const json_t *c, const char *name)
{
    return json_string_value(json_object_get(c, name));
}

static void solve(const fixture *f, int step)
{
    gp_error err = {0};
    int rc = lab_solve_file_step(step, f->root, &f->p, &err);
    if (rc != 0) print_error("solving step %d: %s\n", step, err.text);
    assert_int_equal(rc, 0);
}

/* ---- parameters ---- */

static void params_seed_zero_is_the_seeds_story(void **state)
{
    (void)state;
    lab_params p;
    lab_params_for_seed(0, &p);
    /* lab.md: 4 GPUs x 5 replicas, four 40 GiB A100s, nodes cpu 16 /
     * memory 32Gi / pods 110, the DaemonSet's new request 64Gi, old 128Mi. */
    assert_int_equal(p.gpus_per_node, 4);
    assert_int_equal(p.replicas, 5);
    assert_string_equal(p.gpu_model, "NVIDIA-A100-SXM4-40GB");
    assert_int_equal(p.gpu_memory_gib, 40);
    assert_int_equal(p.node_cpu, 16);
    assert_int_equal(p.node_memory_gib, 32);
    assert_int_equal(p.node_pods, 110);
    assert_int_equal(p.ds_request_gib, 64);
    assert_string_equal(p.ds_old_memory, "128Mi");
    assert_string_equal(p.ds_old_image, "nvcr.io/nvidia/k8s/container-toolkit:v1.16.2");
    assert_string_equal(p.ds_new_image, "nvcr.io/nvidia/k8s/container-toolkit:v1.17.0");
}

/* Public memory sizes of the models a seed may pick. */
static int known_memory(const char *model)
{
    static const struct {
        const char *model;
        int gib;
    } known[] = {{"NVIDIA-A100-SXM4-40GB", 40},
                 {"NVIDIA-A100-SXM4-80GB", 80},
                 {"NVIDIA-H100-80GB-HBM3", 80},
                 {"NVIDIA-A30", 24},
                 {"NVIDIA-L4", 24},
                 {"NVIDIA-A10", 24},
                 {"NVIDIA-L40S", 48},
                 {"Tesla-T4", 16}};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (strcmp(known[i].model, model) == 0) return known[i].gib;
    return -1;
}

static void params_other_seeds_change_the_numbers(void **state)
{
    (void)state;
    int distinct_gpus = 0, seen[9] = {0};
    for (uint64_t seed = 1; seed <= 200; seed++) {
        lab_params p, again;
        lab_params_for_seed(seed, &p);
        lab_params_for_seed(seed, &again);
        assert_memory_equal(&p, &again, sizeof p);
        assert_true(p.seed == seed);
        assert_true(p.gpus_per_node == 2 || p.gpus_per_node == 4 || p.gpus_per_node == 8);
        assert_in_range(p.replicas, 2, 10);
        assert_int_equal(p.gpu_memory_gib, known_memory(p.gpu_model));
        assert_true(p.node_memory_gib == 16 || p.node_memory_gib == 32 || p.node_memory_gib == 48 ||
                    p.node_memory_gib == 64);
        /* The story holds: the new request never fits a node. */
        assert_true(p.ds_request_gib > p.node_memory_gib);
        /* And it is another story than seed 0's. */
        assert_false(p.gpus_per_node == 4 && p.replicas == 5 && p.gpu_memory_gib == 40);
        if (!seen[p.gpus_per_node]++) distinct_gpus++;
    }
    assert_int_equal(distinct_gpus, 3);
}

static void step_texts_carry_root_and_numbers(void **state)
{
    (void)state;
    lab_params p;
    lab_params_for_seed(7, &p);
    char want[256];
    for (int step = 1; step <= LAB_STEPS; step++) {
        char *text = lab_step_text(step, &p, "/srv/lab", false);
        assert_non_null(text);
        assert_non_null(strstr(text, "/srv/lab/"));
        free(text);
    }
    char *six = lab_step_text(6, &p, "/srv/lab", false);
    snprintf(want, sizeof want, "nvidia.com/gpu: \"%d\"", p.gpus_per_node);
    assert_non_null(strstr(six, want));
    assert_null(strstr(six, "k8s-device-plugin"));
    free(six);
    /* on simulated nodes the device plugin advertises, and no patch is asked for */
    six = lab_step_text(6, &p, "/srv/lab", true);
    assert_non_null(strstr(six, "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"));
    assert_null(strstr(six, "--subresource=status"));
    snprintf(want, sizeof want, "%d GPUs", p.gpus_per_node);
    assert_non_null(strstr(six, want));
    free(six);
    char *seven = lab_step_text(7, &p, "/srv/lab", false);
    snprintf(want, sizeof want, "replicas: %d", p.replicas);
    assert_non_null(strstr(seven, want));
    snprintf(want, sizeof want, "\"%d\"", p.gpus_per_node * p.replicas);
    assert_non_null(strstr(seven, want));
    assert_non_null(strstr(seven, p.gpu_model));
    free(seven);
    char *eight = lab_step_text(8, &p, "/srv/lab", false);
    snprintf(want, sizeof want, "%dGi", p.ds_request_gib);
    assert_non_null(strstr(eight, want));
    free(eight);
    assert_null(lab_step_text(0, &p, "/srv/lab", false));
    assert_null(lab_step_text(LAB_STEPS + 1, &p, "/srv/lab", false));
}

static void params_save_and_load(void **state)
{
    fixture *f = *state;
    gp_error err = {0};
    lab_params p, back;
    lab_params_for_seed(UINT64_MAX, &p);
    assert_int_equal(lab_params_save(f->root, &p, &err), 0);
    char *path = in_root(f, LAB_PARAMS_FILE);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    assert_int_equal(lab_params_load(f->root, &back, &err), 0);
    assert_memory_equal(&p, &back, sizeof p);

    /* A request that fits a node would tell no story: refused. */
    put_text(f, LAB_PARAMS_FILE,
             "{\"seed\": 0, \"gpus_per_node\": 4, \"replicas\": 5, \"gpu_model\": \"X\","
             " \"gpu_memory_gib\": 40, \"node_cpu\": 16, \"node_memory_gib\": 32,"
             " \"node_pods\": 110, \"ds_request_gib\": 16, \"ds_old_memory\": \"128Mi\","
             " \"ds_old_image\": \"a:1\", \"ds_new_image\": \"a:2\"}\n",
             0644);
    assert_int_equal(lab_params_load(f->root, &back, &err), -1);
    assert_non_null(strstr(err.text, "ds_request_gib"));
    free(path);
}

/* ---- the workspace ---- */

/* $HOME/gpuop for everyone: root's HOME is /root in the seeds' pod, and a
 * root session with another HOME must not take /root/gpuop, another
 * person's workspace on the same machine. */
static void default_root(void **state)
{
    (void)state;
    char *saved = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", "/srv/learner", 1);
    char *root = lab_default_root();
    assert_string_equal(root, "/srv/learner/gpuop");
    free(root);
    if (saved) setenv("HOME", saved, 1);
    free(saved);
}

static void init_makes_the_layout_and_the_evidence(void **state)
{
    fixture *f = *state;
    static const char *const dirs[] = {"etc/containerd/conf.d", "bin", "k8s", "out", "evidence"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char *dir = in_root(f, dirs[i]);
        struct stat st;
        assert_int_equal(stat(dir, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        free(dir);
    }
    lab_params back;
    gp_error err = {0};
    assert_int_equal(lab_params_load(f->root, &back, &err), 0);
    assert_memory_equal(&back, &f->p, sizeof back);

    /* lab.md: the incident node's dump, whose only runtime handler is runc. */
    char *dump = read_in(f, LAB_EVIDENCE_DUMP);
    assert_non_null(dump);
    cd_dump d = {0};
    assert_int_equal(cd_dump_parse(dump, strlen(dump), "evidence", &d, &err), 0);
    assert_int_equal(d.version, 2);
    assert_int_equal(d.handlers.n, 1);
    assert_string_equal(d.handlers.items[0], "runc");
    assert_int_equal(d.cri, CD_CRI_VALID);
    cd_dump_free(&d);
    free(dump);

    /* The step 4 dump with both files: nvidia only, and the CRI plugin
     * refuses it with containerd 1.6.20's message as measured
     * (containerd-merge.md, "1.6.20, lab config"). */
    assert_int_equal(cd_dump_parse(lab_nvidia_dump, strlen(lab_nvidia_dump), "nvidia", &d, &err),
                     0);
    assert_int_equal(d.handlers.n, 1);
    assert_string_equal(d.handlers.items[0], "nvidia");
    assert_int_equal(d.cri, CD_CRI_INVALID);
    assert_string_equal(d.cri_error, "no corresponding runtime configured in `containerd.runtimes` "
                                     "for `containerd` `default_runtime_name = \"runc\"");
    cd_dump_free(&d);

    /* The step 4 dump without the handler: runc and nvidia-cdi, valid, and
     * a text that a loose search for nvidia or runtimes.nvidia still finds. */
    assert_int_equal(
        cd_dump_parse(lab_nvidia_cdi_dump, strlen(lab_nvidia_cdi_dump), "cdi", &d, &err), 0);
    assert_int_equal(d.handlers.n, 2);
    assert_string_equal(d.handlers.items[0], "nvidia-cdi");
    assert_string_equal(d.handlers.items[1], "runc");
    assert_int_equal(d.cri, CD_CRI_VALID);
    assert_false(cd_dump_handler_loaded(&d, "nvidia"));
    assert_non_null(strstr(lab_nvidia_cdi_dump, "containerd.runtimes.nvidia"));
    cd_dump_free(&d);
}

static void init_never_overwrites(void **state)
{
    fixture *f = *state;
    put_text(f, LAB_EVIDENCE_DUMP, "# mine\n", 0600);
    put_text(f, LAB_MAIN_CONFIG, "version = 3\n", 0644);
    put_text(f, LAB_PARAMS_FILE, "{\"mine\": true}\n", 0644);
    lab_params other;
    lab_params_for_seed(99, &other);
    gp_error err = {0};
    assert_int_equal(lab_workspace_init(f->root, &other, &err), 0);
    assert_int_equal(lab_workspace_init(f->root, &other, &err), 0);
    char *dump = read_in(f, LAB_EVIDENCE_DUMP), *config = read_in(f, LAB_MAIN_CONFIG),
         *params = read_in(f, LAB_PARAMS_FILE);
    assert_string_equal(dump, "# mine\n");
    assert_string_equal(config, "version = 3\n");
    assert_string_equal(params, "{\"mine\": true}\n");
    char *path = in_root(f, LAB_EVIDENCE_DUMP);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    free(path);
    free(dump);
    free(config);
    free(params);
}

static void solve_backs_up_a_differing_file(void **state)
{
    fixture *f = *state;
    put_text(f, LAB_MAIN_CONFIG, "# the learner's try\n", 0640);
    solve(f, 1);
    solve(f, 1); /* identical now: no second backup */
    char *dir = in_root(f, "etc/containerd");
    char pattern[1100];
    snprintf(pattern, sizeof pattern, "ls %s | grep -c '^config.toml.gpuop-backup-' | grep -qx 1",
             dir);
    assert_int_equal(system(pattern), 0);
    snprintf(pattern, sizeof pattern,
             "grep -qx '# the learner.s try' %s/config.toml.gpuop-backup-*", dir);
    assert_int_equal(system(pattern), 0);
    free(dir);
    assert_passes(grade(f, 1));
}

/* ---- step 1 ---- */

static void step1_systemd_cgroup_as_string_fails(void **state)
{
    fixture *f = *state;
    put_data(f, LAB_MAIN_CONFIG, "main-systemd-string.toml", 0644);
    json_t *r = grade(f, 1);
    const json_t *c = assert_fails_with(r, "main.runc.systemd_cgroup");
    /* Where it was written: line 9, column 5 of the fixture. */
    char *path = in_root(f, LAB_MAIN_CONFIG);
    char where[1100];
    snprintf(where, sizeof where, "%s:9:5", path);
    assert_string_equal(field(c, "where"), where);
    assert_string_equal(field(c, "observed"), "\"true\" (string)");
    assert_non_null(strstr(field(c, "hint"), "boolean"));
    /* Partial progress: the other conditions are judged and pass. */
    assert_condition_passes(r, "main.version");
    assert_condition_passes(r, "main.imports");
    assert_condition_passes(r, "main.default_runtime");
    assert_condition_passes(r, "main.runc.runtime_type");
    free(path);
    json_decref(r);
}

static void step1_missing_or_broken_file_gives_one_condition(void **state)
{
    fixture *f = *state;
    json_t *r = grade(f, 1);
    assert_fails_with(r, "main.exists");
    assert_int_equal(json_array_size(json_object_get(r, "conditions")), 1);
    json_decref(r);
    put_data(f, LAB_MAIN_CONFIG, "main-syntax-error.toml", 0644);
    r = grade(f, 1);
    const json_t *c = assert_fails_with(r, "main.parse");
    assert_int_equal(json_array_size(json_object_get(r, "conditions")), 1);
    /* The parser's position: the unclosed array of line 2. */
    char *path = in_root(f, LAB_MAIN_CONFIG);
    char prefix[1100];
    snprintf(prefix, sizeof prefix, "%s:", path);
    assert_memory_equal(field(c, "where"), prefix, strlen(prefix));
    assert_true(atoi(field(c, "where") + strlen(prefix)) >= 2);
    free(path);
    json_decref(r);
}

/* ---- step 2 ---- */

static void step2_reference_and_lab_md_pass(void **state)
{
    fixture *f = *state;
    solve(f, 2);
    assert_passes(grade(f, 2));
    put_incident(f, LAB_DROPIN);
    assert_passes(grade(f, 2));
    /* The reference is the toolkit's drop-in itself. */
    char *mine = read_in(f, LAB_DROPIN);
    solve(f, 2);
    char *solved = read_in(f, LAB_DROPIN);
    assert_string_equal(mine, solved);
    free(mine);
    free(solved);
}

/* ---- step 3 ---- */

static void files_as_lab_md(const fixture *f)
{
    put_incident(f, LAB_MAIN_CONFIG);
    put_incident(f, LAB_DROPIN);
}

static void step3_solver_writes_lab_md_lines(void **state)
{
    fixture *f = *state;
    /* From the relative imports form too: the main file's own directory. */
    put_data(f, LAB_MAIN_CONFIG, "main-systemd-string.toml", 0644);
    put_incident(f, LAB_DROPIN);
    solve(f, 3);
    char *got = read_in(f, LAB_MERGE_OUT), *want = data_text("merge-lab-md.txt");
    assert_string_equal(got, want);
    free(got);
    free(want);
    assert_passes(grade(f, 3));
    /* And from the solver's own step 1 and 2 files. */
    solve(f, 1);
    solve(f, 2);
    solve(f, 3);
    got = read_in(f, LAB_MERGE_OUT);
    want = data_text("merge-lab-md.txt");
    assert_string_equal(got, want);
    free(got);
    free(want);
}

static bool have_gpuop(void);

/* The solver's lines are what `gpuop containerd merge -o lab` prints, for a
 * learner's files too (several runtimes, two drop-ins, a relative import):
 * both come from one renderer. */
static void step3_solver_writes_what_merge_prints(void **state)
{
    if (!have_gpuop()) skip();
    fixture *f = *state;
    put_data(f, LAB_MAIN_CONFIG, "main-with-kata.toml", 0644);
    put_incident(f, LAB_DROPIN);
    put_text(f, "etc/containerd/conf.d/50-gvisor.toml",
             "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runsc]\n"
             "  runtime_type = \"io.containerd.runsc.v1\"\n"
             "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia]\n"
             "  runtime_type = \"io.containerd.runc.v2\"\n",
             0644);
    solve(f, 3);
    char *solved = read_in(f, LAB_MERGE_OUT);
    char *config = in_root(f, LAB_MAIN_CONFIG), *dump = in_root(f, LAB_EVIDENCE_DUMP);
    char *argv[] = {
        (char *)getenv("GPUOP"), "containerd", "merge", "--config", config,       "--root", f->root,
        "--containerd",          "1.7",        "-o",    "lab",      "--observed", dump,     NULL};
    char *printed = NULL, *errors = NULL;
    size_t printed_len, errors_len;
    int status = -1;
    assert_int_equal(
        gp_spawn_capture(argv, 10000, &printed, &printed_len, &errors, &errors_len, &status, NULL),
        GP_SPAWN_OK);
    assert_string_equal(printed, solved);
    assert_non_null(strstr(solved, "MAIN_RUNTIMES=kata,runc\nDROPIN_RUNTIMES=nvidia,runsc\n"));
    free(printed);
    free(errors);
    free(config);
    free(dump);
    free(solved);
}

static void step3_conflict_table_of_wrong_depth_fails(void **state)
{
    fixture *f = *state;
    files_as_lab_md(f);
    put_data(f, LAB_MERGE_OUT, "merge-table-too-shallow.txt", 0644);
    json_t *r = grade(f, 3);
    const json_t *c = assert_fails_with(r, "merge.conflict_table");
    char *path = in_root(f, LAB_MERGE_OUT);
    char where[1100];
    snprintf(where, sizeof where, "%s:4", path);
    assert_string_equal(field(c, "where"), where);
    free(path);
    assert_condition_passes(r, "merge.loaded_runtimes");
    json_decref(r);
    put_data(f, LAB_MERGE_OUT, "merge-table-too-deep.txt", 0644);
    r = grade(f, 3);
    assert_fails_with(r, "merge.conflict_table");
    json_decref(r);
}

/* Expected values come from the learner's files: with a kata runtime in the
 * main config, lab.md's literal answer no longer holds. */
static void step3_expectations_follow_the_files(void **state)
{
    fixture *f = *state;
    put_data(f, LAB_MAIN_CONFIG, "main-with-kata.toml", 0644);
    put_incident(f, LAB_DROPIN);
    put_data(f, LAB_MERGE_OUT, "merge-lab-md.txt", 0644);
    json_t *r = grade(f, 3);
    const json_t *c = assert_fails_with(r, "merge.main_runtimes");
    assert_string_equal(field(c, "expected"), "MAIN_RUNTIMES=kata,runc");
    json_decref(r);
    put_text(f, LAB_MERGE_OUT,
             "MAIN_RUNTIMES=runc, kata\nDROPIN_RUNTIMES=nvidia\nCONFLICT=yes\n"
             "CONFLICT_TABLE=plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes\n"
             "LOADED_RUNTIMES=runc\n",
             0644);
    assert_passes(grade(f, 3));
}

static void step3_without_inputs_or_evidence(void **state)
{
    fixture *f = *state;
    put_data(f, LAB_MERGE_OUT, "merge-lab-md.txt", 0644);
    json_t *r = grade(f, 3);
    assert_fails_with(r, "merge.inputs");
    assert_fails_with(r, "merge.main_runtimes");
    assert_condition_passes(r, "merge.loaded_runtimes");
    json_decref(r);
    files_as_lab_md(f);
    char *dump = in_root(f, LAB_EVIDENCE_DUMP);
    assert_int_equal(unlink(dump), 0);
    free(dump);
    r = grade(f, 3);
    assert_fails_with(r, "merge.evidence");
    assert_fails_with(r, "merge.loaded_runtimes");
    assert_condition_passes(r, "merge.inputs");
    assert_condition_passes(r, "merge.conflict_table");
    json_decref(r);
    gp_error err = {0};
    assert_int_equal(lab_solve_file_step(3, f->root, &f->p, &err), -1);
}

/* ---- step 4 ---- */

static bool have_gpuop(void)
{
    const char *exe = getenv("GPUOP");
    if (exe && *exe) return true;
    print_message("GPUOP is not set to the gpuop binary: the step 4 runs are skipped\n");
    return false;
}

static void step4_reading_the_config_fails(void **state)
{
    fixture *f = *state;
    if (!have_gpuop()) skip();
    put_data(f, LAB_CHECK_SCRIPT, "check-reads-config.sh", 0755);
    json_t *r = grade(f, 4);
    const json_t *c = assert_fails_with(r, "script.no_config_read");
    char *path = in_root(f, LAB_CHECK_SCRIPT);
    char where[1100];
    snprintf(where, sizeof where, "%s:3:", path);
    assert_memory_equal(field(c, "where"), where, strlen(where));
    free(path);
    json_decref(r);
}

static void step4_never_ending_script_is_killed(void **state)
{
    fixture *f = *state;
    if (!have_gpuop()) skip();
    put_data(f, LAB_CHECK_SCRIPT, "check-never-ends.sh", 0755);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    json_t *r = grade(f, 4);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const json_t *c = assert_fails_with(r, "script.with_nvidia");
    assert_non_null(strstr(field(c, "observed"), "stopped"));
    assert_fails_with(r, "script.without_nvidia");
    /* Two runs, each killed at the limit; a grader that waited for the
     * script would never get here. */
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_true(seconds < 2 * LAB_SCRIPT_TIMEOUT_MS / 1000.0 + 5);
    json_decref(r);
}

/* Issue 17: a check script that starts jobs in a session of their own and
 * through a double fork, and answers right. Its answer stands (the grader
 * does not wait for the jobs, and no run is traced into failing), and when
 * the grading returns, none of the jobs is left. */
static void step4_nothing_outlives_the_check(void **state)
{
    fixture *f = *state;
    if (!have_gpuop()) skip();
    put_text(f, LAB_CHECK_SCRIPT,
             "#!/bin/sh\n"
             "setsid sleep 4244.1 &\n"
             "( sleep 4244.2 & )\n"
             "(setsid sh -c 'sleep 4244.3 &' &)\n"
             "containerd config dump | grep -qF 'containerd.runtimes.nvidia]'\n",
             0755);
    json_t *r = grade(f, 4);
    assert_false(test_sleep_running("4244.1"));
    assert_false(test_sleep_running("4244.2"));
    assert_false(test_sleep_running("4244.3"));
    assert_passes(r);
}

static void check_script_matches_the_cli_form(void **state)
{
    (void)state;
    /* A handler name is quoted as a regular expression; a bad one refused. */
    char *text = cd_check_script("nvidia.cdi", "0.1.0");
    assert_non_null(text);
    assert_non_null(strstr(text, "# Generated by gpuop 0.1.0 (gpuop containerd script "
                                 "nvidia.cdi).\n"));
    assert_non_null(strstr(text, "(\\\"nvidia\\.cdi\\\"|'nvidia\\.cdi')"));
    assert_non_null(strstr(text, "dump=$(containerd config dump)"));
    free(text);
    assert_null(cd_check_script("nvidia; rm -rf /", NULL));
}

/* The same text as `gpuop containerd script nvidia`, but for the version. */
static void check_script_is_the_cli_script(void **state)
{
    (void)state;
    if (!have_gpuop()) skip();
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s' containerd script nvidia", getenv("GPUOP"));
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t len;
    char *cli = gp_read_stream(p, "gpuop", &len, NULL);
    assert_int_equal(pclose(p), 0);
    assert_non_null(cli);
    /* Line 3 names the version: take the CLI's and give it to ours. */
    char *line3 = strstr(cli, "# Generated by gpuop ");
    assert_non_null(line3);
    char version[64];
    assert_int_equal(sscanf(line3, "# Generated by gpuop %63s", version), 1);
    char *ours = cd_check_script("nvidia", version);
    assert_string_equal(ours, cli);
    free(ours);
    free(cli);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

/* A learner's line in another encoding, or cut mid-character, keeps the
 * condition and the rest of its text: bad bytes read as '?'. */
static void condition_text_not_utf8(void **state)
{
    (void)state;
    json_t *conds = json_array();
    lab_condition(conds, "out.x", false, "out/x.txt:1", "K=\xc3\xa9", "K=caf\xe9 \xe2\x82", "h");
    const json_t *c = json_array_get(conds, 0);
    assert_non_null(c);
    assert_string_equal(json_string_value(json_object_get(c, "where")), "out/x.txt:1");
    assert_string_equal(json_string_value(json_object_get(c, "expected")), "K=\xc3\xa9");
    assert_string_equal(json_string_value(json_object_get(c, "observed")), "K=caf? ??");
    json_decref(conds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(condition_text_not_utf8),
        cmocka_unit_test(params_seed_zero_is_the_seeds_story),
        cmocka_unit_test(params_other_seeds_change_the_numbers),
        cmocka_unit_test(step_texts_carry_root_and_numbers),
        cmocka_unit_test(check_script_matches_the_cli_form),
        cmocka_unit_test(check_script_is_the_cli_script),
        cmocka_unit_test(default_root),
        T(params_save_and_load),
        T(init_makes_the_layout_and_the_evidence),
        T(init_never_overwrites),
        T(solve_backs_up_a_differing_file),
        T(step1_systemd_cgroup_as_string_fails),
        T(step1_missing_or_broken_file_gives_one_condition),
        T(step2_reference_and_lab_md_pass),
        T(step3_solver_writes_lab_md_lines),
        T(step3_solver_writes_what_merge_prints),
        T(step3_conflict_table_of_wrong_depth_fails),
        T(step3_expectations_follow_the_files),
        T(step3_without_inputs_or_evidence),
        T(step4_reading_the_config_fails),
        T(step4_never_ending_script_is_killed),
        T(step4_nothing_outlives_the_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
