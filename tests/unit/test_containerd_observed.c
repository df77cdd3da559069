/* What containerd reports, parsed: real `containerd config dump` outputs of
 * 1.6.20, 1.7.29, 2.0.11 and 2.1.5 (containerd-cases/, next to the
 * toml-test cases), plus the /proc readers and the program runner the
 * command line uses to ask containerd. The running daemon's answers are
 * test_containerd_cri.c's. */
/* realpath() is XSI. */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "containerd/observed.h"
#include "util/file.h"
#include "util/spawn.h"

#define CASES TOML_TEST_DIR "/../containerd-cases"

static char *read_case(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", CASES, rel);
    gp_error err = {0};
    size_t n;
    char *text = gp_read_file(path, len ? len : &n, &err);
    if (!text) fail_msg("%s", err.text);
    return text;
}

/* ---- config dumps ---- */

static void parse_case(const char *rel, cd_dump *d)
{
    size_t len;
    char *text = read_case(rel, &len);
    gp_error err = {0};
    if (cd_dump_parse(text, len, rel, d, &err) != 0) fail_msg("%s: %s", rel, err.text);
    free(text);
}

static void parse_text(const char *text, cd_dump *d)
{
    gp_error err = {0};
    if (cd_dump_parse(text, strlen(text), "t.toml", d, &err) != 0) fail_msg("%s", err.text);
}

/* handlers: comma-separated, in dump order. */
static void assert_handlers(const cd_dump *d, const char *expected)
{
    char got[512] = "";
    for (size_t i = 0; i < d->handlers.n; i++) {
        if (i) strcat(got, ",");
        strcat(got, d->handlers.items[i]);
    }
    assert_string_equal(got, expected);
}

static const char NO_RUNC[] = "no corresponding runtime configured in `containerd.runtimes` for "
                              "`containerd` `default_runtime_name = \"runc\"";

/* The incident: 1.x replaces the main file's CRI table with the drop-in's,
 * so the dump has only nvidia, and the CRI plugin refuses the config with
 * exactly the message the 1.6.20 and 1.7.29 daemons logged. */
static void test_lab_dump_1x_refused(void **state)
{
    (void)state;
    const char *cases[] = {"1.6.20/lab.toml", "1.7.29/lab.toml"};
    for (size_t i = 0; i < 2; i++) {
        cd_dump d;
        parse_case(cases[i], &d);
        assert_int_equal(d.version, 2);
        assert_string_equal(d.cri_plugin, "io.containerd.grpc.v1.cri");
        assert_handlers(&d, "nvidia");
        assert_string_equal(d.default_runtime, "runc");
        assert_int_equal(d.cri, CD_CRI_INVALID);
        assert_string_equal(d.cri_error, NO_RUNC);
        assert_false(cd_dump_handler_loaded(&d, "nvidia"));
        cd_dump_free(&d);
    }
}

/* The same daemon messages, recorded: the dump check says what they say. */
static void test_lab_dump_message_matches_daemon_log(void **state)
{
    (void)state;
    char *log = read_case("1.6.20/daemon-lab.txt", NULL);
    cd_dump d;
    parse_case("1.6.20/lab.toml", &d);
    char expected[700];
    snprintf(expected, sizeof expected, "Message:     invalid plugin config: %s\n", d.cri_error);
    assert_non_null(strstr(log, expected));
    cd_dump_free(&d);
    free(log);
}

static void test_lab_dump_2x_loaded(void **state)
{
    (void)state;
    const char *cases[] = {"2.0.11/lab.toml", "2.1.5/lab.toml"};
    for (size_t i = 0; i < 2; i++) {
        cd_dump d;
        parse_case(cases[i], &d);
        assert_int_equal(d.version, 3);
        assert_string_equal(d.cri_plugin, "io.containerd.cri.v1.runtime");
        assert_handlers(&d, "nvidia,runc");
        assert_string_equal(d.default_runtime, "runc");
        assert_int_equal(d.cri, CD_CRI_VALID);
        assert_string_equal(d.cri_error, "");
        assert_true(cd_dump_handler_loaded(&d, "nvidia"));
        assert_true(cd_dump_handler_loaded(&d, "runc"));
        assert_false(cd_dump_handler_loaded(&d, "nvidia-cdi"));
        cd_dump_free(&d);
    }
}

/* A v3 drop-in into a v2 main: 1.x drops the unknown v3 plugin (only runc),
 * 2.x loads it; the 2.1.5 daemon reported "", "nvidia", "runc". */
static void test_version_skew_dumps(void **state)
{
    (void)state;
    cd_dump d;
    parse_case("1.6.20/h3_v2main_v3dropin.toml", &d);
    assert_handlers(&d, "runc");
    assert_int_equal(d.cri, CD_CRI_VALID);
    assert_false(cd_dump_handler_loaded(&d, "nvidia"));
    cd_dump_free(&d);
    parse_case("2.1.5/h3_v2main_v3dropin.toml", &d);
    assert_handlers(&d, "nvidia,runc");
    assert_true(cd_dump_handler_loaded(&d, "nvidia"));
    cd_dump_free(&d);
    /* 2.1.5 daemon on k_noversion_v2names: "" and "runc" only. */
    parse_case("2.1.5/k_noversion_v2names.toml", &d);
    assert_handlers(&d, "runc");
    cd_dump_free(&d);
}

/* Every recorded dump parses and has its version's CRI runtime table. */
static void test_every_dump_has_a_cri_table(void **state)
{
    (void)state;
    static const char *const versions[] = {"1.6.20", "1.7.29", "2.0.11", "2.1.5"};
    static const char *const names[] = {
        "a_v3",
        "b_sametable",
        "c_scalar",
        "d_arrays",
        "f_recursive",
        "g_order",
        "h1_v2main_v2dropin",
        "h2_v3main_v2dropin",
        "j_nomatch",
        "k3_noversion_main_v2dropin",
        "m_deep_same_runtime",
        "lab",
        "p_unknown_keys",
    };
    for (size_t v = 0; v < 4; v++) {
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            char rel[256], path[1024];
            snprintf(rel, sizeof rel, "%s/%s.toml", versions[v], names[i]);
            snprintf(path, sizeof path, "%s/%s", CASES, rel);
            if (access(path, R_OK) != 0) continue; /* 1.7.29 has no a_v3 */
            cd_dump d;
            parse_case(rel, &d);
            assert_true(d.cri == CD_CRI_VALID || d.cri == CD_CRI_INVALID);
            assert_true(d.handlers.n >= 1);
            assert_string_equal(d.cri_plugin, versions[v][0] == '1'
                                                  ? "io.containerd.grpc.v1.cri"
                                                  : "io.containerd.cri.v1.runtime");
            cd_dump_free(&d);
        }
    }
}

static void test_default_runtime_name_empty(void **state)
{
    (void)state;
    cd_dump d;
    parse_text("version = 3\n"
               "[plugins.'io.containerd.cri.v1.runtime'.containerd]\n"
               "default_runtime_name = ''\n"
               "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.nvidia]\n"
               "runtime_type = 'io.containerd.runc.v2'\n",
               &d);
    assert_int_equal(d.cri, CD_CRI_INVALID);
    assert_string_equal(d.cri_error, "`default_runtime_name` is empty");
    assert_false(cd_dump_handler_loaded(&d, "nvidia"));
    cd_dump_free(&d);
}

/* Quoted handler names, as dumps write names that are not bare keys. */
static void test_quoted_handler_names(void **state)
{
    (void)state;
    cd_dump d;
    parse_text("version = 2\n"
               "[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
               "default_runtime_name = \"nvidia.cdi\"\n"
               "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.\"nvidia.cdi\"]\n"
               "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.'kata']\n",
               &d);
    assert_handlers(&d, "nvidia.cdi,kata");
    assert_int_equal(d.cri, CD_CRI_VALID);
    cd_dump_free(&d);
}

/* 1.x's deprecated fields still define runtimes, as its plugin does. */
static void test_deprecated_1x_runtimes(void **state)
{
    (void)state;
    cd_dump d;
    parse_text("version = 2\n"
               "[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
               "default_runtime_name = \"runc\"\n"
               "[plugins.\"io.containerd.grpc.v1.cri\".containerd.default_runtime]\n"
               "runtime_type = \"io.containerd.runc.v2\"\n"
               "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nvidia]\n",
               &d);
    assert_handlers(&d, "nvidia,default");
    assert_int_equal(d.cri, CD_CRI_VALID);
    cd_dump_free(&d);
    parse_text("version = 2\n"
               "[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
               "default_runtime_name = \"runc\"\n"
               "[plugins.\"io.containerd.grpc.v1.cri\".containerd.untrusted_workload_runtime]\n"
               "runtime_type = \"io.containerd.kata.v2\"\n"
               "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
               "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.untrusted]\n",
               &d);
    assert_int_equal(d.cri, CD_CRI_INVALID);
    assert_string_equal(d.cri_error, "conflicting definitions: configuration includes both "
                                     "`untrusted_workload_runtime` and `runtimes[\"untrusted\"]`");
    cd_dump_free(&d);
}

/* containerd 1.6.20 with disabled_plugins = ["io.containerd.grpc.v1.cri"]
 * dumps no CRI table at all; 2.x disabling the gRPC CRI service disables
 * CRI even though the runtime table is still there. */
static void test_disabled_and_absent(void **state)
{
    (void)state;
    cd_dump d;
    parse_text("disabled_plugins = [\"io.containerd.grpc.v1.cri\"]\nversion = 2\n", &d);
    assert_int_equal(d.cri, CD_CRI_DISABLED);
    cd_dump_free(&d);
    parse_text("version = 3\ndisabled_plugins = ['io.containerd.grpc.v1.cri']\n"
               "[plugins.'io.containerd.cri.v1.runtime'.containerd]\n"
               "default_runtime_name = 'runc'\n"
               "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]\n",
               &d);
    assert_int_equal(d.cri, CD_CRI_DISABLED);
    assert_false(cd_dump_handler_loaded(&d, "runc"));
    cd_dump_free(&d);
    /* A 2.x dump's runtimes under the v2 name are not read by 2.x. */
    parse_text("version = 3\n"
               "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n",
               &d);
    assert_int_equal(d.cri, CD_CRI_ABSENT);
    cd_dump_free(&d);
}

static void test_dump_not_toml(void **state)
{
    (void)state;
    cd_dump d;
    gp_error err = {0};
    const char *text = "version = 2\n[plugins\n";
    assert_int_equal(cd_dump_parse(text, strlen(text), "dump", &d, &err), -1);
    assert_non_null(strstr(err.text, "dump:2:"));
}

static void test_runtime_names(void **state)
{
    (void)state;
    assert_true(cd_runtime_name_valid("nvidia"));
    assert_true(cd_runtime_name_valid("nvidia-cdi.experimental_1"));
    assert_false(cd_runtime_name_valid(""));
    assert_false(cd_runtime_name_valid("a b"));
    assert_false(cd_runtime_name_valid("x'y"));
    assert_false(cd_runtime_name_valid("$(id)"));
    assert_false(cd_runtime_name_valid("nvidia\"}"));
}

/* ---- /proc ---- */

static void test_proc_stat(void **state)
{
    (void)state;
    unsigned long long ticks = 0;
    /* A command name with spaces and parentheses. */
    const char *stat_text = "4242 (co (nt) ai) S 1 4242 4242 0 -1 4194560 2763 0 0 0 12 7 0 0 20 "
                            "0 14 0 987654 1530425344 9000 18446744073709551615\n";
    assert_int_equal(cd_proc_parse_starttime(stat_text, &ticks), 0);
    assert_int_equal(ticks, 987654);
    assert_int_equal(cd_proc_parse_starttime("1 (x) S 1 2", &ticks), -1);
    long long btime = 0;
    assert_int_equal(
        cd_proc_parse_btime("cpu  1 2 3\nintr 5\nbtime 1764500000\nprocesses 9\n", &btime), 0);
    assert_int_equal(btime, 1764500000);
    assert_int_equal(cd_proc_parse_btime("cpu 1\n", &btime), -1);
    double uptime = 0;
    assert_int_equal(cd_proc_parse_uptime("12345.67 98765.43\n", &uptime), 0);
    assert_true(uptime > 12345.669 && uptime < 12345.671);
    assert_int_equal(cd_proc_parse_uptime("12345 1\n", &uptime), -1);
    /* This process: a start time after boot. */
    char *mine = gp_read_file("/proc/self/stat", &(size_t){0}, NULL);
    assert_non_null(mine);
    assert_int_equal(cd_proc_parse_starttime(mine, &ticks), 0);
    free(mine);
}

static void test_proc_cmdline(void **state)
{
    (void)state;
    char address[256], config[256];
    const char a[] = "containerd\0--config\0/tmp/c.toml\0--address=/tmp/s.sock\0--log-level\0debug";
    cd_proc_parse_cmdline(a, sizeof a, address, sizeof address, config, sizeof config);
    assert_string_equal(address, "/tmp/s.sock");
    assert_string_equal(config, "/tmp/c.toml");
    const char b[] = "/usr/bin/containerd\0-c\0rel.toml\0-a\0/x.sock";
    cd_proc_parse_cmdline(b, sizeof b, address, sizeof address, config, sizeof config);
    assert_string_equal(address, "/x.sock");
    assert_string_equal(config, "rel.toml");
    const char c[] = "/usr/bin/containerd";
    cd_proc_parse_cmdline(c, sizeof c, address, sizeof address, config, sizeof config);
    assert_string_equal(address, "");
    assert_string_equal(config, "");
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Imports as containerd walks them: relative to the importing file, globs
 * in order, breadth-first, each file once (the walk is cd_predict's; a
 * missing import is tested with the merge). */
static void test_config_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/gpuop-observed-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sub[1100];
    snprintf(sub, sizeof sub, "%s/conf.d", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    write_file(dir, "config.toml", "version = 2\nimports = [\"conf.d/*.toml\", \"more.toml\"]\n");
    write_file(dir, "more.toml", "imports = [\"config.toml\"]\n");
    write_file(sub, "20-b.toml", "x = 1\n");
    write_file(sub, "10-a.toml", "imports = [\"../more.toml\"]\n");
    write_file(sub, "notes.txt", "not a drop-in\n");
    char main_path[1100];
    snprintf(main_path, sizeof main_path, "%s/config.toml", dir);
    cd_names files;
    gp_error err = {0};
    if (cd_config_files(main_path, &files, &err) != 0) fail_msg("%s", err.text);
    assert_int_equal(files.n, 4);
    const char *expected[] = {"config.toml", "conf.d/10-a.toml", "conf.d/20-b.toml", "more.toml"};
    for (size_t i = 0; i < 4; i++) {
        char want[1200];
        snprintf(want, sizeof want, "%s/%s", dir, expected[i]);
        /* containerd names an import as resolved ("conf.d/../more.toml"). */
        char real[1200], got[1200];
        assert_non_null(realpath(want, real));
        assert_non_null(realpath(files.items[i], got));
        assert_string_equal(got, real);
    }
    double mtime = 0;
    const char *newest = NULL;
    assert_int_equal(cd_newest_mtime(&files, &mtime, &newest), 0);
    assert_non_null(newest);
    assert_true(mtime > 0);
    cd_names_free(&files);
    /* A drop-in that is not TOML: the caller falls back. */
    write_file(sub, "30-bad.toml", "[x\n");
    assert_int_equal(cd_config_files(main_path, &files, &err), -1);
    assert_non_null(strstr(err.text, "30-bad.toml:1:"));
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- running programs ---- */

static void test_spawn_captures_and_exit_status(void **state)
{
    (void)state;
    char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    char *out, *err_text;
    size_t out_len, err_len;
    int status = -1;
    gp_error err = {0};
    assert_int_equal(
        gp_spawn_capture(argv, 10000, &out, &out_len, &err_text, &err_len, &status, &err),
        GP_SPAWN_OK);
    assert_string_equal(out, "out\n");
    assert_int_equal(out_len, 4);
    assert_string_equal(err_text, "err\n");
    assert_int_equal(status, 3);
    free(out);
    free(err_text);
    /* Large output on both pipes at once does not deadlock. */
    char *big[] = {"sh", "-c", "head -c 300000 /dev/zero; head -c 200000 /dev/zero >&2", NULL};
    assert_int_equal(
        gp_spawn_capture(big, 10000, &out, &out_len, &err_text, &err_len, &status, &err),
        GP_SPAWN_OK);
    assert_int_equal(out_len, 300000);
    assert_int_equal(err_len, 200000);
    assert_int_equal(status, 0);
    free(out);
    free(err_text);
    /* Killed by a signal: 128 + the signal. */
    char *killed[] = {"sh", "-c", "kill -9 $$", NULL};
    assert_int_equal(
        gp_spawn_capture(killed, 10000, &out, &out_len, &err_text, &err_len, &status, &err),
        GP_SPAWN_OK);
    assert_int_equal(status, 137);
    free(out);
    free(err_text);
}

static void test_spawn_not_found_and_timeout(void **state)
{
    (void)state;
    char *out, *err_text;
    size_t out_len, err_len;
    int status = -1;
    gp_error err = {0};
    char *missing[] = {"gpuop-no-such-program", "config", "dump", NULL};
    assert_int_equal(
        gp_spawn_capture(missing, 10000, &out, &out_len, &err_text, &err_len, &status, &err),
        GP_SPAWN_NOT_FOUND);
    assert_null(out);
    assert_string_equal(err.text, "gpuop-no-such-program not found on PATH");
    /* A program that itself exits 127 is not "not found". */
    char *exits127[] = {"sh", "-c", "exit 127", NULL};
    assert_int_equal(
        gp_spawn_capture(exits127, 10000, &out, &out_len, &err_text, &err_len, &status, &err),
        GP_SPAWN_OK);
    assert_int_equal(status, 127);
    free(out);
    free(err_text);
    /* A child that keeps the pipe open after the program is killed too. */
    char *slow[] = {"sh", "-c", "sleep 30 & sleep 30", NULL};
    assert_int_equal(
        gp_spawn_capture(slow, 300, &out, &out_len, &err_text, &err_len, &status, &err),
        GP_SPAWN_TIMEOUT);
    assert_null(out);
    assert_non_null(strstr(err.text, "did not finish"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lab_dump_1x_refused),
        cmocka_unit_test(test_lab_dump_message_matches_daemon_log),
        cmocka_unit_test(test_lab_dump_2x_loaded),
        cmocka_unit_test(test_version_skew_dumps),
        cmocka_unit_test(test_every_dump_has_a_cri_table),
        cmocka_unit_test(test_default_runtime_name_empty),
        cmocka_unit_test(test_quoted_handler_names),
        cmocka_unit_test(test_deprecated_1x_runtimes),
        cmocka_unit_test(test_disabled_and_absent),
        cmocka_unit_test(test_dump_not_toml),
        cmocka_unit_test(test_runtime_names),
        cmocka_unit_test(test_proc_stat),
        cmocka_unit_test(test_proc_cmdline),
        cmocka_unit_test(test_config_files),
        cmocka_unit_test(test_spawn_captures_and_exit_status),
        cmocka_unit_test(test_spawn_not_found_and_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
