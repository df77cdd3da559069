/* The NVIDIA toolkit's container on a simulated node (src/agents/toolkit.h):
 * what its setup writes per image tag, what containerd then loads (gpuop's
 * own prediction, ag_node_predict), what the cleanup takes away, and what
 * the installer refuses. The facts are ../shared/design/gpu-node-facts.md
 * 3.2 to 3.5 (NVIDIA/nvidia-container-toolkit pkg/config/engine/containerd,
 * cmd/nvidia-ctk-installer). */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "temp_dir.h"

#include "json_assert.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/daemon.h"
#include "agents/node.h"
#include "agents/toolkit.h"
#include "util/file.h"

typedef struct fixture {
    char dir[64];
    ag_node_state st;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/test-agents-toolkit-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    gp_error err = {0};
    assert_int_equal(ag_node_create(f->dir, NULL, &err), 0);
    ag_node_state_default(&f->st); /* containerd 1.6.20, the lab's node */
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

static const char *path_in(const fixture *f, const char *rel)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", f->dir, rel);
    return buf;
}

static char *slurp_or_null(const char *path)
{
    gp_error err = {0};
    size_t len;
    return gp_read_file(path, &len, &err);
}

/* A toolkit pod of the GPU Operator's shape with these env entries. */
static json_t *toolkit_pod(const char *tag, const char *env_json)
{
    return sqf("{'metadata':{'name':'tk','namespace':'gpu-operator','uid':'u1'},'spec':"
               "{'containers':[{'name':'driver-validation','image':'busybox:1.36'},"
               "{'name':'nvidia-container-toolkit-ctr','image':"
               "'nvcr.io/nvidia/k8s/container-toolkit:%s','env':%s}]}}",
               tag, env_json);
}

static ag_toolkit toolkit_of(const char *tag, const char *env_json)
{
    json_t *pod = toolkit_pod(tag, env_json);
    ag_toolkit t;
    gp_error err = {0};
    if (ag_toolkit_from_pod(pod, &t, &err) != 1) fail_msg("not a toolkit: %s", err.text);
    json_decref(pod);
    return t;
}

/* The handlers containerd 1.6 would load from the node's files now. */
static void expect_loaded(const fixture *f, const char *want, bool cri_fails)
{
    gp_error err = {0};
    cd_prediction *p = ag_node_predict(f->dir, &f->st, &err);
    assert_non_null(p);
    char got[512] = "";
    for (size_t i = 0; i < p->nruntimes; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? "," : "", p->runtimes[i]);
    if (cri_fails) {
        assert_non_null(p->cri_error);
    } else {
        if (p->cri_error) fail_msg("CRI fails: %s", p->cri_error);
        assert_string_equal(got, want);
    }
    cd_prediction_free(p);
}

/* No file of conf.d but the drop-in ends in .toml: containerd's imports
 * never read a backup. */
static void expect_no_stray_toml(const fixture *f)
{
    DIR *d = opendir(path_in(f, "etc/containerd/conf.d"));
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 5 && strcmp(e->d_name + n - 5, ".toml") == 0)
            assert_string_equal(e->d_name, AG_TOOLKIT_DROPIN);
    }
    closedir(d);
}

static void test_the_container_is_read_as_the_installer_reads_it(void **state)
{
    (void)state;
    ag_toolkit t = toolkit_of("v1.18.1-ubuntu20.04", "[]");
    assert_string_equal(t.container, "nvidia-container-toolkit-ctr");
    assert_int_equal(t.version[0], 1);
    assert_int_equal(t.version[1], 18);
    assert_int_equal(t.version[2], 1);
    assert_int_equal(t.restart, AG_TOOLKIT_RESTART_SIGNAL); /* containerd's default */
    assert_string_equal(t.runtime, "nvidia");
    assert_true(t.set_as_default);
    assert_true(t.from_command);
    assert_string_equal(t.root, "/usr/local/nvidia/toolkit");
    assert_false(ag_toolkit_edits_main(&t));
    t = toolkit_of("v1.17.0", "[{'name':'RUNTIME_RESTART_MODE','value':'none'},"
                              "{'name':'CONTAINERD_RUNTIME_CLASS','value':'gpu'}]");
    assert_int_equal(t.restart, AG_TOOLKIT_RESTART_NONE);
    assert_string_equal(t.runtime, "gpu");
    assert_true(ag_toolkit_edits_main(&t));
    /* CONTAINERD_RESTART_MODE is gone from v1.17.0 on */
    t = toolkit_of("v1.16.2", "[{'name':'CONTAINERD_RESTART_MODE','value':'systemd'}]");
    assert_int_equal(t.restart, AG_TOOLKIT_RESTART_SYSTEMD);
    t = toolkit_of("v1.17.0", "[{'name':'CONTAINERD_RESTART_MODE','value':'systemd'}]");
    assert_int_equal(t.restart, AG_TOOLKIT_RESTART_SIGNAL);

    json_t *other = sq_load("{'spec':{'containers':[{'name':'c','image':"
                            "'nvcr.io/nvidia/k8s/container-toolkit-extra:v1'}]}}");
    ag_toolkit none;
    gp_error err = {0};
    assert_int_equal(ag_toolkit_from_pod(other, &none, &err), 0);
    json_decref(other);
}

static void test_settings_the_installer_refuses_are_errors(void **state)
{
    (void)state;
    static const struct {
        const char *tag, *env, *words;
    } bad[] = {
        {"latest", "[]", "names no toolkit version"},
        {"v1.18.1", "[{'name':'RUNTIME_RESTART_MODE','value':'reload'}]", "'reload'"},
        {"v1.18.1", "[{'name':'GPUOP_TOOLKIT_VARIANT','value':'full'}]", "bare-dropin"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *pod = toolkit_pod(bad[i].tag, bad[i].env);
        ag_toolkit t;
        gp_error err = {0};
        assert_int_equal(ag_toolkit_from_pod(pod, &t, &err), -1);
        if (!strstr(err.text, bad[i].words)) fail_msg("%s: got '%s'", bad[i].words, err.text);
        assert_non_null(strstr(err.text, "nvidia-container-toolkit-ctr"));
        json_decref(pod);
    }
}

/* v1.18: the drop-in carries the CRI table of `containerd config dump`, so
 * containerd 1.6's wholesale replacement keeps runc (3.3). */
static void test_v1_18_writes_a_drop_in_with_the_cri_table(void **state)
{
    fixture *f = *state;
    ag_toolkit t = toolkit_of("v1.18.1", "[]");
    gp_buf log = {0};
    gp_error err = {0};
    expect_loaded(f, "runc", false);
    assert_int_equal(ag_toolkit_setup(f->dir, &t, &f->st, &log, &err), 0);
    char *dropin = slurp_or_null(path_in(f, "etc/containerd/conf.d/99-nvidia.toml"));
    assert_non_null(dropin);
    assert_non_null(strstr(dropin, "version = 2"));
    assert_non_null(strstr(dropin, "SystemdCgroup = true")); /* runc's, copied */
    assert_non_null(
        strstr(dropin, "BinaryName = \"/usr/local/nvidia/toolkit/nvidia-container-runtime\""));
    assert_non_null(strstr(dropin, "default_runtime_name = \"nvidia\""));
    free(dropin);
    assert_non_null(
        strstr(log.data, "Wrote updated config to /etc/containerd/conf.d/99-nvidia.toml"));
    expect_loaded(f, "nvidia,nvidia-cdi,nvidia-legacy,runc", false);
    expect_no_stray_toml(f);

    /* the cleanup at the pod's end: the drop-in goes, runc alone again */
    gp_buf_free(&log);
    assert_int_equal(ag_toolkit_cleanup(f->dir, &t, &log, &err), 0);
    assert_null(slurp_or_null(path_in(f, "etc/containerd/conf.d/99-nvidia.toml")));
    expect_loaded(f, "runc", false);
    expect_no_stray_toml(f);
    gp_buf_free(&log);
}

/* Before v1.18 the installer edits config.toml itself; a backup is kept. */
static void test_before_v1_18_config_toml_is_edited(void **state)
{
    fixture *f = *state;
    char *before = slurp_or_null(path_in(f, "etc/containerd/config.toml"));
    ag_toolkit t = toolkit_of("v1.17.8", "[]");
    gp_buf log = {0};
    gp_error err = {0};
    assert_int_equal(ag_toolkit_setup(f->dir, &t, &f->st, &log, &err), 0);
    assert_null(slurp_or_null(path_in(f, "etc/containerd/conf.d/99-nvidia.toml")));
    expect_loaded(f, "nvidia,nvidia-cdi,nvidia-legacy,runc", false);
    /* the old bytes are beside it */
    DIR *d = opendir(path_in(f, "etc/containerd"));
    struct dirent *e;
    bool backed_up = false;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "config.toml.gpuop-backup-", 25) != 0) continue;
        char rel[300];
        snprintf(rel, sizeof rel, "etc/containerd/%s", e->d_name);
        char *kept = slurp_or_null(path_in(f, rel));
        backed_up = kept && strcmp(kept, before) == 0;
        free(kept);
    }
    closedir(d);
    assert_true(backed_up);
    gp_buf_free(&log);
    assert_int_equal(ag_toolkit_cleanup(f->dir, &t, &log, &err), 0);
    expect_loaded(f, "runc", false);
    free(before);
    gp_buf_free(&log);
}

/* The seeds' step 2: only the nvidia table, which 1.6 puts in place of the
 * whole CRI table: no runc for the default runtime, the CRI plugin fails. */
static void test_the_bare_variant_writes_the_seeds_drop_in(void **state)
{
    fixture *f = *state;
    ag_toolkit t =
        toolkit_of("v1.18.1", "[{'name':'GPUOP_TOOLKIT_VARIANT','value':'bare-dropin'}]");
    assert_true(t.bare_dropin);
    gp_buf log = {0};
    gp_error err = {0};
    assert_int_equal(ag_toolkit_setup(f->dir, &t, &f->st, &log, &err), 0);
    char *dropin = slurp_or_null(path_in(f, "etc/containerd/conf.d/99-nvidia.toml"));
    assert_non_null(dropin);
    assert_string_equal(dropin, ag_bare_dropin);
    free(dropin);
    expect_loaded(f, NULL, true);
    gp_buf_free(&log);
    assert_int_equal(ag_toolkit_cleanup(f->dir, &t, &log, &err), 0);
    expect_loaded(f, "runc", false);
    gp_buf_free(&log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_container_is_read_as_the_installer_reads_it),
        cmocka_unit_test(test_settings_the_installer_refuses_are_errors),
        cmocka_unit_test_setup_teardown(test_v1_18_writes_a_drop_in_with_the_cri_table, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_before_v1_18_config_toml_is_edited, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_bare_variant_writes_the_seeds_drop_in, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
