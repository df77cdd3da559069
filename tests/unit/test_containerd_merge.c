/* The containerd merge model: what the real dumps cannot show (where each
 * value came from, what was lost and why, lints), and the walk rules on
 * small config sets. Agreement with the real binaries on the 26 measured
 * cases is tests/containerd/cases_test.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "containerd/cfg_internal.h"
#include "containerd/containerd.h"

static char root[PATH_MAX];

static void write_file(const char *rel, const char *text)
{
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, "%s%s", root, rel);
    /* mkdir -p of the parent */
    for (char *s = path + strlen(root) + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/gpuop-cd-XXXXXX");
    if (!mkdtemp(root)) return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static const char lab_main[] =
    "version = 2\n"
    "imports = [\"/etc/containerd/conf.d/*.toml\"]\n"
    "[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
    "  default_runtime_name = \"runc\"\n"
    "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
    "  runtime_type = \"io.containerd.runc.v2\"\n"
    "  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n"
    "    SystemdCgroup = true\n";

static const char lab_dropin[] =
    "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia]\n"
    "  runtime_type = \"io.containerd.runc.v2\"\n"
    "  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia.options]\n"
    "    BinaryName = \"/usr/bin/nvidia-container-runtime\"\n"
    "    SystemdCgroup = true\n";

static cd_prediction *predict(cd_family f)
{
    cd_options opt = {"/etc/containerd/config.toml", root, f};
    gp_error err = {0};
    cd_prediction *p = cd_predict(&opt, &err);
    if (!p) fail_msg("cd_predict: %s", err.text);
    return p;
}

static const cd_note *find_note(const cd_notes *notes, const char *code, const char *key)
{
    for (size_t i = 0; i < notes->count; i++)
        if (strcmp(notes->items[i].code, code) == 0 &&
            (!key || (notes->items[i].key && strcmp(notes->items[i].key, key) == 0)))
            return &notes->items[i];
    return NULL;
}

static const cd_node *cri_runtime(const cd_prediction *p, const char *name, const char *field)
{
    return cd_path(p->config, "plugins", p->cri_plugin, "containerd", "runtimes", name, field,
                   NULL);
}

static void lab_files(void)
{
    write_file("/etc/containerd/config.toml", lab_main);
    write_file("/etc/containerd/conf.d/99-nvidia.toml", lab_dropin);
}

static void test_lab_on_1_6_loses_runc_and_fails_cri(void **state)
{
    (void)state;
    lab_files();
    cd_prediction *p = predict(CD_V1_6);
    assert_int_equal(p->nfiles, 2);
    assert_string_equal(p->files[1].path, "/etc/containerd/conf.d/99-nvidia.toml");
    assert_int_equal(p->nruntimes, 1);
    assert_string_equal(p->runtimes[0], "nvidia");
    assert_string_equal(p->cri_error,
                        "invalid plugin config: no corresponding runtime configured in "
                        "`containerd.runtimes` for `containerd` `default_runtime_name = \"runc\"");
    /* The main file's default_runtime_name is lost; the one left is containerd's default. */
    const cd_note *lost =
        find_note(&p->lost, "section-replaced",
                  "plugins.\"io.containerd.grpc.v1.cri\".containerd.default_runtime_name");
    assert_non_null(lost);
    assert_string_equal(lost->file, "/etc/containerd/config.toml");
    assert_int_equal(lost->line, 4);
    assert_non_null(strstr(lost->text, "99-nvidia.toml:1"));
    assert_null(p->default_runtime_name->origin.file);
    assert_true(p->conflict);
    assert_string_equal(p->conflict_table,
                        "plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes");
    assert_string_equal(p->conflict_winner, "/etc/containerd/conf.d/99-nvidia.toml");
    cd_prediction_free(p);
}

static void test_lab_on_2_1_keeps_both_with_provenance(void **state)
{
    (void)state;
    lab_files();
    cd_prediction *p = predict(CD_V2_1);
    assert_string_equal(p->cri_plugin, "io.containerd.cri.v1.runtime");
    assert_int_equal(p->nruntimes, 2);
    assert_null(p->cri_error);
    assert_null(p->error);
    assert_int_equal(p->version, 2);
    assert_string_equal(p->default_runtime_name->origin.file, "/etc/containerd/config.toml");
    assert_int_equal(p->default_runtime_name->origin.line, 4);
    const cd_node *sd = cd_child(cri_runtime(p, "runc", "options"), "SystemdCgroup");
    assert_non_null(sd);
    assert_true(sd->value->u.b);
    assert_int_equal(sd->origin.line, 8);
    /* runc keeps containerd's default fields under what the file set. */
    const cd_node *sandboxer = cri_runtime(p, "runc", "sandboxer");
    assert_non_null(sandboxer);
    assert_null(sandboxer->origin.file);
    const cd_node *bin = cd_child(cri_runtime(p, "nvidia", "options"), "BinaryName");
    assert_string_equal(bin->origin.file, "/etc/containerd/conf.d/99-nvidia.toml");
    assert_int_equal(bin->origin.line, 4);
    /* The v2 CRI table keeps only streaming keys after the migration. */
    assert_null(cd_path(p->config, "plugins", "io.containerd.grpc.v1.cri", "containerd", NULL));
    cd_prediction_free(p);
}

static void test_zero_values_never_override_top_level(void **state)
{
    (void)state;
    write_file("/etc/containerd/config.toml",
               "version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\noom_score = -999\n"
               "[debug]\nlevel = \"info\"\n");
    write_file("/etc/containerd/conf.d/a.toml",
               "version = 2\noom_score = 0\nroot = \"/data/containerd\"\n[debug]\nlevel = \"\"\n");
    for (cd_family f = CD_V1_6; f <= CD_V2_1; f = f == CD_V1_7 ? CD_V2_0 : f + 1) {
        cd_prediction *p = predict(f);
        const cd_node *oom = cd_child(p->config, "oom_score");
        assert_int_equal(oom->value->u.i, -999);
        assert_string_equal(oom->origin.file, "/etc/containerd/config.toml");
        assert_string_equal(cd_child(p->config, "root")->value->u.s, "/data/containerd");
        assert_string_equal(cd_path(p->config, "debug", "level", NULL)->value->u.s, "info");
        const cd_note *n = find_note(&p->lost, "zero-value-ignored", "oom_score");
        assert_non_null(n);
        assert_string_equal(n->file, "/etc/containerd/conf.d/a.toml");
        assert_int_equal(n->line, 2);
        assert_non_null(find_note(&p->lost, "zero-value-ignored", "debug.level"));
        cd_prediction_free(p);
    }
}

static void assert_disabled(const cd_prediction *p, const char *want)
{
    const cd_node *d = cd_child(p->config, "disabled_plugins");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    toml_emit_value(d->value, f);
    fclose(f);
    assert_string_equal(buf, want);
    free(buf);
}

static void test_top_level_arrays_concatenate_in_1x_and_union_in_2x(void **state)
{
    (void)state;
    write_file("/etc/containerd/config.toml",
               "version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n"
               "disabled_plugins = [\"zfs\", \"btrfs\"]\n");
    write_file("/etc/containerd/conf.d/a.toml", "disabled_plugins = [\"btrfs\", \"aufs\"]\n");
    cd_prediction *p = predict(CD_V1_7);
    assert_disabled(p, "[\"zfs\", \"btrfs\", \"btrfs\", \"aufs\"]");
    cd_prediction_free(p);
    p = predict(CD_V2_0);
    assert_disabled(p, "[\"zfs\", \"btrfs\", \"aufs\"]");
    cd_prediction_free(p);
}

static void test_walk_is_breadth_first_and_loads_each_file_once(void **state)
{
    (void)state;
    write_file("/etc/containerd/config.toml",
               "version = 2\nimports = [\"/etc/containerd/a.toml\", \"/etc/containerd/b.toml\"]\n");
    write_file("/etc/containerd/a.toml",
               "imports = [\"/etc/containerd/c.toml\", \"/etc/containerd/config.toml\"]\n");
    write_file("/etc/containerd/b.toml", "imports = [\"/etc/containerd/a.toml\"]\n");
    write_file("/etc/containerd/c.toml", "oom_score = 7\n");
    cd_prediction *p = predict(CD_V2_1);
    assert_int_equal(p->nfiles, 4);
    assert_string_equal(p->files[1].path, "/etc/containerd/a.toml");
    assert_string_equal(p->files[2].path, "/etc/containerd/b.toml");
    assert_string_equal(p->files[3].path, "/etc/containerd/c.toml");
    assert_string_equal(p->files[3].imported_by, "/etc/containerd/a.toml");
    cd_prediction_free(p);
}

static void test_relative_globs_1_6_uses_the_working_directory(void **state)
{
    (void)state;
    write_file("/etc/containerd/config.toml",
               "version = 2\nimports = [\"conf.d/*.toml\"]\noom_score = 1\n");
    write_file("/etc/containerd/conf.d/a.toml", "oom_score = 2\n");
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir("/"), 0);
    /* --root is a folder here, so give the config by its real path. */
    char config[PATH_MAX * 2];
    snprintf(config, sizeof config, "%s/etc/containerd/config.toml", root);
    gp_error err = {0};
    cd_options opt = {config, NULL, CD_V1_6};
    cd_prediction *p = cd_predict(&opt, &err);
    assert_non_null(p);
    assert_int_equal(p->nfiles, 1);
    assert_non_null(find_note(&p->lints, "glob-matches-nothing", NULL));
    cd_prediction_free(p);
    opt.family = CD_V1_7;
    p = cd_predict(&opt, &err);
    assert_non_null(p);
    assert_int_equal(p->nfiles, 2);
    assert_int_equal(cd_child(p->config, "oom_score")->value->u.i, 2);
    cd_prediction_free(p);
    assert_int_equal(chdir(cwd), 0);
}

static void test_v2_dropin_into_v3_main_drops_runtimes_in_2x(void **state)
{
    (void)state;
    write_file("/etc/containerd/config.toml",
               "version = 3\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n"
               "[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.runc.options]\n"
               "SystemdCgroup = true\n");
    write_file("/etc/containerd/conf.d/99-nvidia.toml", "version = 2\n");
    FILE *f;
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, "%s/etc/containerd/conf.d/99-nvidia.toml", root);
    f = fopen(path, "a");
    fputs(lab_dropin, f);
    fclose(f);
    cd_prediction *p = predict(CD_V2_0);
    assert_int_equal(p->version, 2);
    assert_int_equal(p->nruntimes, 1);
    assert_string_equal(p->runtimes[0], "runc");
    const cd_note *n =
        find_note(&p->lost, "migration-dropped",
                  "plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia.runtime_type");
    assert_non_null(n);
    assert_int_equal(n->line, 3);
    assert_null(find_note(&p->lints, "dropin-version-higher", NULL));
    cd_prediction_free(p);
}

static void test_lints(void **state)
{
    (void)state;
    write_file("/etc/containerd/config.toml",
               "version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n");
    write_file("/etc/containerd/config.d/99-nvidia.toml", "version = 3\n");
    cd_prediction *p = predict(CD_V2_1);
    const cd_note *n = find_note(&p->lints, "config-d-vs-conf-d", NULL);
    assert_non_null(n);
    assert_int_equal(n->line, 2);
    cd_prediction_free(p);
    write_file("/etc/containerd/conf.d/99-nvidia.toml",
               "version = 3\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
               "default_runtime_name = \"nvidia\"\n");
    p = predict(CD_V2_1);
    assert_non_null(find_note(&p->lints, "dropin-version-higher", NULL));
    assert_non_null(find_note(&p->lints, "v2-names-in-v3-file", NULL));
    /* The merged config is version 3: the v2 key is not migrated. */
    assert_non_null(find_note(&p->lost, "unknown-plugin-key", NULL));
    assert_string_equal(p->default_runtime_name->value->u.s, "runc");
    cd_prediction_free(p);
}

static void test_refusals(void **state)
{
    (void)state;
    write_file("/etc/containerd/config.toml",
               "version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n"
               "[proxy_plugins.snap]\ntype = \"snapshot\"\naddress = \"/run/a.sock\"\n");
    write_file("/etc/containerd/conf.d/a.toml",
               "[proxy_plugins.snap]\naddress = \"/run/b.sock\"\n");
    cd_prediction *p = predict(CD_V1_6);
    assert_string_equal(p->error, "panic: plugin: no type");
    assert_non_null(find_note(&p->lost, "entry-replaced", "proxy_plugins.snap.type"));
    cd_prediction_free(p);
    write_file("/etc/containerd/conf.d/a.toml", "[plugins.\"x\"\n");
    p = predict(CD_V2_1);
    assert_non_null(p->error);
    assert_non_null(strstr(p->error, "failed to unmarshal TOML at row 1"));
    cd_prediction_free(p);
    p = predict(CD_V1_6);
    assert_non_null(strstr(p->error, "failed to load TOML: /etc/containerd/conf.d/a.toml: (1, "));
    cd_prediction_free(p);
    gp_error err = {0};
    cd_options opt = {"/etc/containerd/missing.toml", root, CD_V2_1};
    assert_null(cd_predict(&opt, &err));
    assert_non_null(strstr(err.text, "missing.toml"));
}

static void test_family_names(void **state)
{
    (void)state;
    cd_family f;
    assert_int_equal(cd_family_parse("1.6.20~ds1", &f), 0);
    assert_int_equal(f, CD_V1_6);
    assert_int_equal(cd_family_parse("v2.2.7", &f), 0);
    assert_int_equal(f, CD_V2_1);
    assert_int_equal(cd_family_parse("2.0", &f), 0);
    assert_int_equal(f, CD_V2_0);
    assert_int_equal(cd_family_parse("1.5", &f), -1);
    assert_int_equal(cd_family_parse("banana", &f), -1);
}

/* Found by the differential test against containerd 1.6.20: what makes
 * 1.x refuse a config beyond syntax, and how import paths compare. */
static void test_more_refusals_and_path_cleaning(void **state)
{
    (void)state;
    write_file(
        "/etc/containerd/config.toml",
        "version = 2\nimports = [\"/etc/containerd/conf.d/20-b.toml\", "
        "\"/etc/containerd/conf.d/10-a.toml\", \"/etc/containerd//conf.d/../conf.d/*.toml\"]\n");
    write_file("/etc/containerd/conf.d/10-a.toml", "oom_score = 10\n");
    write_file("/etc/containerd/conf.d/20-b.toml", "oom_score = 20\n");
    cd_prediction *p = predict(CD_V1_6);
    /* Each file once, by its cleaned path: 20-b then 10-a, so 10 wins. */
    assert_int_equal(p->nfiles, 3);
    assert_int_equal(cd_child(p->config, "oom_score")->value->u.i, 10);
    cd_prediction_free(p);

    write_file("/etc/containerd/config.toml",
               "version = 2\ndisabled_plugins = [\"cri\"]\n  oom_score = 5.0\n");
    p = predict(CD_V1_6);
    assert_string_equal(p->error,
                        "failed to unmarshal TOML: (3, 3): Can't convert 5(float64) to int");
    cd_prediction_free(p);
    write_file("/etc/containerd/config.toml", "version = 2\ndisabled_plugins = [\"cri\"]\n");
    p = predict(CD_V1_7);
    assert_string_equal(p->error, "failed to load TOML from /etc/containerd/config.toml: invalid "
                                  "disabled plugin URI \"cri\" expect io.containerd.x.vx");
    cd_prediction_free(p);
    write_file("/etc/containerd/config.toml", "version = 2\nimports = [\"\"]\n");
    p = predict(CD_V1_6);
    assert_string_equal(p->error, "failed to load TOML: /etc/containerd: read /etc/containerd: is "
                                  "a directory");
    cd_prediction_free(p);
    /* --root with the copy's own path works too. */
    char local[PATH_MAX * 2];
    snprintf(local, sizeof local, "%s/etc/containerd/config.toml", root);
    cd_options opt = {local, root, CD_V2_1};
    gp_error err = {0};
    p = cd_predict(&opt, &err);
    assert_non_null(p);
    cd_prediction_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lab_on_1_6_loses_runc_and_fails_cri, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lab_on_2_1_keeps_both_with_provenance, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_zero_values_never_override_top_level, setup, teardown),
        cmocka_unit_test_setup_teardown(test_top_level_arrays_concatenate_in_1x_and_union_in_2x,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_is_breadth_first_and_loads_each_file_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_relative_globs_1_6_uses_the_working_directory, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_v2_dropin_into_v3_main_drops_runtimes_in_2x, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_lints, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_more_refusals_and_path_cleaning, setup, teardown),
        cmocka_unit_test(test_family_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
