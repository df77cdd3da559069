/* A simulated node's state on disk (src/agents/node.h): the healthy node
 * made from the lab's files, node.toml read back, bad input named by
 * file:line:col, nothing overwritten, nothing written through a link. */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "temp_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/node.h"
#include "util/file.h"

typedef struct fixture {
    char dir[64];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/test-agents-node-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    temp_dir_remove(f->dir);
    free(f);
    return 0;
}

static char *path_in(const fixture *f, const char *rel)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%s/%s", f->dir, rel);
    return buf;
}

static char *slurp(const char *path)
{
    gp_error err = {0};
    size_t len;
    char *text = gp_read_file(path, &len, &err);
    assert_non_null(text);
    return text;
}

static void write_text(const char *path, const char *text)
{
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs(text, out);
    assert_int_equal(fclose(out), 0);
}

/* ---- the healthy node ---- */

static void test_create_writes_the_lab_main_config_and_the_state(void **state)
{
    fixture *f = *state;
    gp_error err = {0};
    assert_int_equal(ag_node_create(f->dir, NULL, &err), 0);
    char *main = slurp(path_in(f, AG_NODE_MAIN_CONFIG));
    /* The lab's main config: runc only, with SystemdCgroup, importing conf.d. */
    assert_non_null(strstr(main, "imports = [\"/etc/containerd/conf.d/*.toml\"]"));
    assert_non_null(strstr(main, "SystemdCgroup = true"));
    assert_null(strstr(main, "nvidia"));
    char *example = slurp(TEST_DATA_DIR "/../../examples/incident/etc/containerd/config.toml");
    assert_string_equal(main, example);
    free(example);
    free(main);
    struct stat sb;
    assert_int_equal(stat(path_in(f, AG_NODE_CONF_D), &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));

    ag_node_state st;
    assert_int_equal(ag_node_state_read(f->dir, &st, &err), 0);
    assert_string_equal(st.containerd_version, "1.6.20~ds1");
    assert_int_equal(st.family, CD_V1_6);
    assert_int_equal(st.restart, AG_RESTART_ALWAYS);
    assert_int_equal(st.restart_sec, 5);
    assert_true(st.driver_installed);
    assert_string_equal(st.driver_version, "550.54.15");
    assert_string_equal(st.kernel_version, "6.1.0-18-amd64");
}

static void test_create_keeps_files_that_exist(void **state)
{
    fixture *f = *state;
    gp_error err = {0};
    assert_int_equal(ag_node_create(f->dir, NULL, &err), 0);
    write_text(path_in(f, AG_NODE_MAIN_CONFIG), "version = 2\n# mine\n");
    write_text(path_in(f, AG_NODE_STATE_FILE), "[containerd]\nversion = \"2.1.5\"\n");
    assert_int_equal(ag_node_create(f->dir, NULL, &err), 0);
    char *main = slurp(path_in(f, AG_NODE_MAIN_CONFIG));
    assert_string_equal(main, "version = 2\n# mine\n");
    free(main);
    ag_node_state st;
    assert_int_equal(ag_node_state_read(f->dir, &st, &err), 0);
    assert_string_equal(st.containerd_version, "2.1.5");
    assert_int_equal(st.family, CD_V2_1);
}

static void test_create_never_writes_through_a_link(void **state)
{
    fixture *f = *state;
    char outside[64];
    snprintf(outside, sizeof outside, "/tmp/test-agents-outside-XXXXXX");
    assert_non_null(mkdtemp(outside));
    assert_int_equal(mkdir(path_in(f, "etc"), 0755), 0);
    assert_int_equal(symlink(outside, path_in(f, "etc/containerd")), 0);
    gp_error err = {0};
    assert_int_equal(ag_node_create(f->dir, NULL, &err), -1);
    assert_non_null(strstr(err.text, "symbolic link"));
    char probe[128];
    snprintf(probe, sizeof probe, "%s/config.toml", outside);
    assert_int_equal(access(probe, F_OK), -1);
    rmdir(outside);
}

/* ---- node.toml ---- */

static void test_state_round_trips(void **state)
{
    fixture *f = *state;
    ag_node_state st;
    ag_node_state_default(&st);
    snprintf(st.containerd_version, sizeof st.containerd_version, "2.0.11");
    st.family = CD_V2_0;
    st.restart = AG_RESTART_NO;
    st.restart_sec = 0;
    st.driver_installed = false;
    snprintf(st.driver_version, sizeof st.driver_version, "535 \"odd\\\"");
    snprintf(st.kernel_version, sizeof st.kernel_version, "6.1.0-21-amd64");
    snprintf(st.driver_kernel, sizeof st.driver_kernel, "6.1.0-18-amd64");
    st.gpus = 8;
    snprintf(st.gpu_model, sizeof st.gpu_model, "NVIDIA-H100-80GB-HBM3");
    gp_error err = {0};
    assert_int_equal(ag_node_state_write(f->dir, &st, &err), 0);
    ag_node_state back;
    assert_int_equal(ag_node_state_read(f->dir, &back, &err), 0);
    assert_memory_equal(&st, &back, sizeof st);
}

/* Section 5 of gpu-node-facts.md: the module is built per kernel, so a
 * kernel update without a rebuild leaves the driver unloaded. */
static void test_driver_loads_only_on_its_kernel(void **state)
{
    (void)state;
    ag_node_state st;
    ag_node_state_default(&st);
    assert_true(ag_node_driver_loads(&st));
    char next[128];
    ag_node_next_kernel(st.kernel_version, next, sizeof next);
    assert_string_equal(next, "6.1.0-19-amd64");
    snprintf(st.kernel_version, sizeof st.kernel_version, "%s", next);
    assert_false(ag_node_driver_loads(&st));
    snprintf(st.driver_kernel, sizeof st.driver_kernel, "%s", next);
    assert_true(ag_node_driver_loads(&st));
    st.driver_installed = false;
    assert_false(ag_node_driver_loads(&st));
    ag_node_next_kernel("5.15.0", next, sizeof next);
    assert_string_equal(next, "5.15.0+1");
    ag_node_next_kernel("6.8.0-45-generic", next, sizeof next);
    assert_string_equal(next, "6.8.0-46-generic");
}

static void test_missing_state_is_the_default_node(void **state)
{
    fixture *f = *state;
    ag_node_state st, def;
    gp_error err = {0};
    assert_int_equal(ag_node_state_read(f->dir, &st, &err), 0);
    ag_node_state_default(&def);
    assert_memory_equal(&st, &def, sizeof st);
}

/* Each bad node.toml and the position and words its error must give. */
static void expect_error(const fixture *f, const char *text, const char *where, const char *words)
{
    write_text(path_in(f, AG_NODE_STATE_FILE), text);
    ag_node_state st;
    memset(&st, 0x5a, sizeof st);
    ag_node_state before = st;
    gp_error err = {0};
    assert_int_equal(ag_node_state_read(f->dir, &st, &err), -1);
    char prefix[160];
    snprintf(prefix, sizeof prefix, "%s/node.toml:%s: ", f->dir, where);
    if (strncmp(err.text, prefix, strlen(prefix)) != 0 || !strstr(err.text, words))
        fail_msg("for %s: got '%s', want '%s...%s'", text, err.text, prefix, words);
    assert_memory_equal(&st, &before, sizeof st); /* untouched */
}

static void test_bad_state_is_named_by_line_and_column(void **state)
{
    fixture *f = *state;
    expect_error(f, "[containerd]\nversion = \"1.5.9\"\n", "2:1", "'1.5.9'");
    expect_error(f, "[containerd]\nversion = 16\n", "2:1", "containerd.version must be a string");
    expect_error(f, "[containerd]\n  restart = \"on-failure\"\n", "2:3", "'on-failure'");
    expect_error(f, "[containerd]\nrestart_sec = -1\n", "2:1", "0 to 3600");
    expect_error(f, "[containerd]\nrestart_sec = \"5s\"\n", "2:1", "restart_sec");
    expect_error(f, "[containerd]\nversoin = \"1.6.20\"\n", "2:1", "unknown key 'versoin'");
    expect_error(f, "[driver]\ninstalled = \"yes\"\n", "2:1", "true or false");
    expect_error(f, "[kernel]\nversion = \"\"\n", "2:1", "must not be empty");
    expect_error(f, "[kernel]\nversion = \"6.1\\n\"\n", "2:1", "control characters");
    expect_error(f, "\n\n[gpus]\ncount = 4\n", "3:2", "unknown key 'gpus'");
    expect_error(f, "[gpu]\ncount = 65\n", "2:1", "0 to 64");
    expect_error(f, "[gpu]\ncount = \"4\"\n", "2:1", "gpu.count");
    expect_error(f, "[gpu]\nmodel = \"\"\n", "2:1", "must not be empty");
    expect_error(f, "[driver]\nkernel = 6\n", "2:1", "driver.kernel must be a string");
    expect_error(f, "containerd = 1\n", "1:1", "containerd must be a table");
    expect_error(f, "[containerd\n", "1:12", "");
}

static void test_state_file_must_be_a_regular_file(void **state)
{
    fixture *f = *state;
    assert_int_equal(symlink("/etc/hostname", path_in(f, AG_NODE_STATE_FILE)), 0);
    ag_node_state st;
    gp_error err = {0};
    assert_int_equal(ag_node_state_read(f->dir, &st, &err), -1);
    assert_non_null(strstr(err.text, "not a regular file"));
    /* And writing replaces the link itself, never what it points at. */
    ag_node_state_default(&st);
    assert_int_equal(ag_node_state_write(f->dir, &st, &err), 0);
    struct stat sb;
    assert_int_equal(lstat(path_in(f, AG_NODE_STATE_FILE), &sb), 0);
    assert_true(S_ISREG(sb.st_mode));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_writes_the_lab_main_config_and_the_state, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_create_keeps_files_that_exist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_never_writes_through_a_link, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_round_trips, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_state_is_the_default_node, setup, teardown),
        cmocka_unit_test(test_driver_loads_only_on_its_kernel),
        cmocka_unit_test_setup_teardown(test_bad_state_is_named_by_line_and_column, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_state_file_must_be_a_regular_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
