/* The lab grader's accuracy corpus (tests/data/lab/corpus/README.md): for
 * every step, wrong answers that must fail with the condition that names
 * the mistake, and right answers written differently that must pass. One
 * test a case; adding a case is adding a directory.
 *
 * A case is tests/data/lab/corpus/stepN/NAME/ with a file `case`:
 *   expect: pass | fail CODE [CODE...]   (each CODE fails, and so the step)
 *   hint: TEXT          the first CODE's hint contains TEXT (English)
 *   passes: CODE ...    these conditions still pass (partial progress)
 *   recorded: NAME      steps 5-8: the cluster state and workspace
 *                       recorded/NAME (default stepN)
 *   mode: PATH OCTAL    the mode of a workspace file
 *   remove: PATH        a file of the base workspace taken away
 *   needs: strace       skipped where strace cannot trace (a container
 *                       without ptrace)
 * and `ws/`, files laid over the base workspace, `patch.json` (a JSON merge
 * patch) or `jsonpatch.json` (RFC 6902) over the recorded snapshot.
 * The base workspace of steps 1-4 is the solver's; of steps 5-8 the
 * recorded one. Step 4 runs scripts against gpuop as the stand-in
 * containerd: GPUOP names the binary (CMake sets it).
 *
 * For the translations (tests/cli/lab_i18n.bats): LAB_CORPUS_LANGUAGE=ko
 * grades in that language (the hint: lines, English, are not checked then),
 * and LAB_CORPUS_RESULTS=FILE appends every case's result to FILE as a JSON
 * line {"case", "result"}. */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "temp_dir.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <libintl.h>
#include <locale.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/patch.h"
#include "lab/grade_cluster.h"
#include "lab/grade_files.h"
#include "lab/lab.h"
#include "lab/solve_files.h"
#include "lab/workspace.h"
#include "util/file.h"

#define CORPUS TEST_DATA_DIR "/lab/corpus"

typedef struct lab_case {
    char dir[PATH_MAX];
    char name[300]; /* stepN/NAME */
    int step;
    bool expect_pass;
    char fail[8][64];
    size_t nfail;
    char hint[512];
    char passes[16][64];
    size_t npasses;
    char recorded[128];
    bool needs_strace;
    char root[64];
} lab_case;

/* ---- reading a case ---- */

/* A/B into out (a test's paths are short; a longer one fails the test). */
static void join(char *out, size_t cap, const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    assert_true(na + 1 + nb < cap);
    memcpy(out, a, na);
    out[na] = '/';
    memcpy(out + na + 1, b, nb + 1);
}

static void split_words(const char *text, char (*out)[64], size_t cap, size_t *n)
{
    *n = 0;
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", text);
    char *save = NULL;
    for (char *w = strtok_r(copy, " \t", &save); w && *n < cap; w = strtok_r(NULL, " \t", &save))
        snprintf(out[(*n)++], 64, "%s", w);
}

static char *case_value(char *line, const char *key)
{
    size_t n = strlen(key);
    if (strncmp(line, key, n) != 0 || line[n] != ':') return NULL;
    char *v = line + n + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    return v;
}

static void read_case(lab_case *c)
{
    char path[PATH_MAX];
    join(path, sizeof path, c->dir, "case");
    size_t len;
    gp_error err = {0};
    char *text = gp_read_file(path, &len, &err);
    if (!text) fail_msg("%s", err.text);
    snprintf(c->recorded, sizeof c->recorded, "step%d", c->step);
    bool have_expect = false;
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        char *v;
        if ((v = case_value(line, "expect"))) {
            have_expect = true;
            if (strcmp(v, "pass") == 0)
                c->expect_pass = true;
            else if (strncmp(v, "fail ", 5) == 0)
                split_words(v + 5, c->fail, 8, &c->nfail);
            else
                fail_msg("%s: expect is pass or fail CODE...", path);
        } else if ((v = case_value(line, "hint"))) {
            snprintf(c->hint, sizeof c->hint, "%s", v);
        } else if ((v = case_value(line, "passes"))) {
            split_words(v, c->passes, 16, &c->npasses);
        } else if ((v = case_value(line, "recorded"))) {
            snprintf(c->recorded, sizeof c->recorded, "%s", v);
        } else if ((v = case_value(line, "needs"))) {
            c->needs_strace = strcmp(v, "strace") == 0;
        }
    }
    free(text);
    if (!have_expect || (!c->expect_pass && c->nfail == 0)) fail_msg("%s: no expect line", path);
}

/* ---- the workspace ---- */

static void remove_tree(const char *dir)
{
    temp_dir_remove(dir);
}

/* Copies the tree `from` into `to`, keeping each file's mode; a script
 * under bin/ is made executable unless the case sets its mode. */
static void copy_tree(const char *from, const char *to)
{
    DIR *d = opendir(from);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        char src[PATH_MAX], dst[PATH_MAX];
        join(src, sizeof src, from, de->d_name);
        join(dst, sizeof dst, to, de->d_name);
        struct stat st;
        assert_int_equal(lstat(src, &st), 0);
        if (S_ISDIR(st.st_mode)) {
            mkdir(dst, 0755);
            copy_tree(src, dst);
            continue;
        }
        size_t len;
        char *text = gp_read_file(src, &len, NULL);
        assert_non_null(text);
        unlink(dst);
        FILE *out = fopen(dst, "w");
        assert_non_null(out);
        assert_int_equal(fwrite(text, 1, len, out), len);
        assert_int_equal(fclose(out), 0);
        assert_int_equal(chmod(dst, st.st_mode & 0777), 0);
        free(text);
    }
    closedir(d);
}

/* The case's mode: and remove: lines, applied to the workspace. */
static void apply_case_lines(const lab_case *c)
{
    char path[PATH_MAX];
    join(path, sizeof path, c->dir, "case");
    size_t len;
    char *text = gp_read_file(path, &len, NULL);
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        char *v, file[PATH_MAX];
        unsigned mode;
        char rel[256];
        if ((v = case_value(line, "mode")) && sscanf(v, "%255s %o", rel, &mode) == 2) {
            join(file, sizeof file, c->root, rel);
            assert_int_equal(chmod(file, mode), 0);
        } else if ((v = case_value(line, "remove"))) {
            join(file, sizeof file, c->root, v);
            assert_int_equal(unlink(file), 0);
        }
    }
    free(text);
}

/* Scripts laid over bin/ run as programs unless a mode: line says not. */
static void make_scripts_executable(const lab_case *c)
{
    char script[PATH_MAX];
    join(script, sizeof script, c->root, LAB_CHECK_SCRIPT);
    struct stat st;
    if (stat(script, &st) == 0) chmod(script, (st.st_mode & 0777) | 0111);
}

static void prepare(lab_case *c, lab_params *p)
{
    snprintf(c->root, sizeof c->root, "/tmp/test-lab-corpus-XXXXXX");
    assert_non_null(mkdtemp(c->root));
    lab_params_for_seed(0, p);
    gp_error err = {0};
    assert_int_equal(lab_workspace_init(c->root, p, &err), 0);
    if (c->step <= 4) {
        for (int s = 1; s <= 4; s++)
            if (lab_solve_file_step(s, c->root, p, &err) != 0)
                fail_msg("solve %d: %s", s, err.text);
    } else {
        char ws[PATH_MAX];
        snprintf(ws, sizeof ws, "%s/recorded/%s/ws", CORPUS, c->recorded);
        copy_tree(ws, c->root);
    }
    char overlay[PATH_MAX];
    join(overlay, sizeof overlay, c->dir, "ws");
    copy_tree(overlay, c->root);
    make_scripts_executable(c);
    apply_case_lines(c);
}

static json_t *load_json(const char *path, bool required)
{
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j && (required || access(path, F_OK) == 0)) fail_msg("%s: %s", path, e.text);
    return j;
}

static json_t *snapshot(const lab_case *c)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/recorded/%s/snapshot.json", CORPUS, c->recorded);
    json_t *snap = load_json(path, true);
    join(path, sizeof path, c->dir, "patch.json");
    json_t *patch = load_json(path, false);
    if (patch) {
        json_t *patched = kube_merge_patch(snap, patch);
        json_decref(snap);
        json_decref(patch);
        snap = patched;
    }
    join(path, sizeof path, c->dir, "jsonpatch.json");
    json_t *ops = load_json(path, false);
    if (ops) {
        gp_error err = {0};
        json_t *patched = kube_json_patch(snap, ops, &err);
        if (!patched) fail_msg("%s: %s", path, err.text);
        json_decref(snap);
        json_decref(ops);
        snap = patched;
    }
    return snap;
}

/* ---- every check has a wrong answer that needs it ---- */

/* The condition codes the grader gave across the cases, and the ones the
 * cases name as failing: a code given but never named is a check no wrong
 * answer depends on, which could stop working unnoticed. */
static json_t *codes_seen, *codes_named;

static void note_codes(const lab_case *c, const json_t *result)
{
    size_t i;
    const json_t *cond;
    json_array_foreach(json_object_get(result, "conditions"), i, cond) json_object_set_new(
        codes_seen, json_string_value(json_object_get(cond, "code")), json_string(c->name));
}

static void every_check_has_a_wrong_answer(void **state)
{
    (void)state;
    const char *code;
    const json_t *where;
    size_t missing = 0;
    json_object_foreach(codes_seen, code, where)
    {
        if (json_object_get(codes_named, code)) continue;
        print_error("%s (given in %s) is the failing condition of no wrong answer\n", code,
                    json_string_value(where));
        missing++;
    }
    assert_int_equal(missing, 0);
}

/* ---- judging ---- */

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

static void show(const lab_case *c, const json_t *result, const char *why)
{
    char *text = json_dumps(result, JSON_INDENT(2));
    print_error("%s: %s\n%s\n", c->name, why, text);
    free(text);
}

static void judge(const lab_case *c, const json_t *r)
{
    bool passed = json_is_true(json_object_get(r, "passed"));
    if (c->expect_pass) {
        if (!passed) show(c, r, "a right answer failed");
        assert_true(passed);
        return;
    }
    if (passed) show(c, r, "a wrong answer passed");
    assert_false(passed);
    for (size_t i = 0; i < c->nfail; i++) {
        const json_t *cond = condition(r, c->fail[i]);
        if (!cond || json_is_true(json_object_get(cond, "passed"))) {
            char why[128];
            snprintf(why, sizeof why, "%s should fail", c->fail[i]);
            show(c, r, why);
        }
        assert_non_null(cond);
        assert_false(json_is_true(json_object_get(cond, "passed")));
    }
    if (c->hint[0] && !getenv("LAB_CORPUS_LANGUAGE")) {
        const char *hint = json_string_value(json_object_get(condition(r, c->fail[0]), "hint"));
        if (!strstr(hint, c->hint)) show(c, r, "the hint does not name the mistake");
        assert_non_null(strstr(hint, c->hint));
    }
    for (size_t i = 0; i < c->npasses; i++) {
        const json_t *cond = condition(r, c->passes[i]);
        if (!cond || !json_is_true(json_object_get(cond, "passed"))) {
            char why[128];
            snprintf(why, sizeof why, "%s should still pass", c->passes[i]);
            show(c, r, why);
        }
        assert_non_null(cond);
        assert_true(json_is_true(json_object_get(cond, "passed")));
    }
}

static void record_result(const lab_case *c, const json_t *r)
{
    const char *path = getenv("LAB_CORPUS_RESULTS");
    if (!path) return;
    json_t *line = json_pack("{s:s, s:O}", "case", c->name, "result", r);
    char *text = json_dumps(line, JSON_COMPACT);
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fprintf(f, "%s\n", text);
    fclose(f);
    free(text);
    json_decref(line);
}

/* Messages in another language, as the CLI sets them up for a learner on
 * a machine with only C.UTF-8 (cli_setup_messages). */
static void choose_language(void)
{
    const char *lang = getenv("LAB_CORPUS_LANGUAGE");
    if (!lang || !*lang) return;
    setenv("LANGUAGE", lang, 1);
    setlocale(LC_ALL, "C.UTF-8");
    bindtextdomain("gpuop", GPUOP_TEST_LOCALEDIR);
    bind_textdomain_codeset("gpuop", "UTF-8");
    textdomain("gpuop");
}

static void run_case(void **state)
{
    lab_case *c = *state;
    read_case(c);
    if (c->step == 4 && !(getenv("GPUOP") && *getenv("GPUOP"))) {
        print_message("GPUOP is not set to the gpuop binary: step 4 cases are skipped\n");
        skip();
    }
    if (c->needs_strace && system("strace -f -o /dev/null true >/dev/null 2>&1") != 0) {
        print_message("strace does not work here: %s is skipped\n", c->name);
        skip();
    }
    lab_params p;
    prepare(c, &p);
    gp_error err = {0};
    json_t *r;
    if (c->step <= 4) {
        r = lab_grade_file_step(c->step, c->root, &p, getenv("GPUOP"), &err);
    } else {
        json_t *snap = snapshot(c);
        r = lab_grade_cluster_step(c->step, c->root, &p, snap);
        json_decref(snap);
    }
    if (!r) fail_msg("%s: grading: %s", c->name, err.text);
    record_result(c, r);
    note_codes(c, r);
    judge(c, r);
    json_decref(r);
}

static int cleanup(void **state)
{
    lab_case *c = *state;
    if (c->root[0]) remove_tree(c->root);
    c->root[0] = '\0';
    return 0;
}

/* ---- the cases ---- */

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct CMUnitTest *)a)->name, ((const struct CMUnitTest *)b)->name);
}

int main(void)
{
    choose_language();
    codes_seen = json_object();
    codes_named = json_object();
    size_t n = 0, cap = 512;
    struct CMUnitTest *tests = calloc(cap, sizeof *tests);
    lab_case *cases = calloc(cap, sizeof *cases);
    size_t per_step[LAB_STEPS + 1][2] = {{0}};
    for (int step = 1; step <= LAB_STEPS; step++) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/step%d", CORPUS, step);
        DIR *d = opendir(dir);
        if (!d) {
            fprintf(stderr, "%s: %s\n", dir, strerror(errno));
            return 1;
        }
        struct dirent *de;
        while ((de = readdir(d)) && n + 1 < cap) {
            if (de->d_name[0] == '.') continue;
            lab_case *c = &cases[n];
            join(c->dir, sizeof c->dir, dir, de->d_name);
            char step_dir[16];
            snprintf(step_dir, sizeof step_dir, "step%d", step);
            join(c->name, sizeof c->name, step_dir, de->d_name);
            c->step = step;
            read_case(c);
            for (size_t k = 0; k < c->nfail; k++)
                json_object_set_new(codes_named, c->fail[k], json_true());
            per_step[step][c->expect_pass]++;
            tests[n] = (struct CMUnitTest){c->name, run_case, NULL, cleanup, c};
            n++;
        }
        closedir(d);
    }
    qsort(tests, n, sizeof *tests, by_name);
    /* last, once every case has been graded */
    tests[n++] = (struct CMUnitTest){"every check has a wrong answer",
                                     every_check_has_a_wrong_answer, NULL, NULL, NULL};
    /* The corpus' own promise (issue 17): at least ten wrong answers and
     * five right ones for every step. */
    int short_of_it = 0;
    for (int step = 1; step <= LAB_STEPS; step++) {
        fprintf(stderr, "step %d: %zu wrong answers, %zu right answers\n", step, per_step[step][0],
                per_step[step][1]);
        if (per_step[step][0] < 10 || per_step[step][1] < 5) short_of_it = 1;
    }
    if (short_of_it) {
        fprintf(stderr, "the corpus needs at least 10 wrong and 5 right answers a step\n");
        return 1;
    }
    int failed = _cmocka_run_group_tests("lab_corpus", tests, n, NULL, NULL);
    free(tests);
    free(cases);
    json_decref(codes_seen);
    json_decref(codes_named);
    return failed;
}
