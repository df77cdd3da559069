/* The simulated containerd (src/agents/daemon.h) against the facts it
 * follows: the config is read at start only, SIGHUP makes it exit and the
 * supervisor start it again 5 s later, the CRI plugin fails on 1.6 with
 * the bare drop-in and containerd's own message, 2.1 merges the same files
 * into nvidia and runc. The expected messages and the CRI config come from
 * the recordings of real daemons, ../shared/containerd-cases/cri-status/. */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "temp_dir.h"

#include "json_assert.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/agents_internal.h"
#include "agents/daemon.h"
#include "agents/node.h"
#include "util/file.h"

#define CRI_STATUS_DIR TOML_TEST_DIR "/../containerd-cases/cri-status"
#define T0             1700000000.0 /* a start time; the model never reads a clock */

typedef struct fixture {
    char dir[64];
    ag_daemon d;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/test-agents-daemon-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    gp_error err = {0};
    assert_int_equal(ag_node_create(f->dir, NULL, &err), 0);
    ag_daemon_init(&f->d);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    ag_daemon_free(&f->d);
    temp_dir_remove(f->dir);
    free(f);
    return 0;
}

static void write_file(const fixture *f, const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", f->dir, rel);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs(text, out);
    assert_int_equal(fclose(out), 0);
}

static void add_bare_dropin(const fixture *f)
{
    write_file(f, AG_NODE_CONF_D "/99-nvidia.toml", ag_bare_dropin);
}

static void set_version(const fixture *f, const char *version, ag_restart_policy restart)
{
    ag_node_state st;
    ag_node_state_default(&st);
    snprintf(st.containerd_version, sizeof st.containerd_version, "%s", version);
    assert_int_equal(cd_family_parse(version, &st.family), 0);
    st.restart = restart;
    gp_error err = {0};
    assert_int_equal(ag_node_state_write(f->dir, &st, &err), 0);
}

static void start(fixture *f, double now, int want)
{
    gp_error err = {0};
    int rc = ag_daemon_start(&f->d, f->dir, now, &err);
    if (rc != want) fail_msg("start returned %d (%s), want %d", rc, err.text, want);
}

static void tick(fixture *f, double now)
{
    gp_error err = {0};
    int rc = ag_daemon_tick(&f->d, f->dir, now, &err);
    if (rc < 0) fail_msg("tick: %s", err.text);
}

/* The message part of the recorded "failed to load plugin" line:
 * error="..." with Go's quoting undone. */
static char *recorded_cri_error(void)
{
    gp_error err = {0};
    size_t len;
    char *log = gp_read_file(CRI_STATUS_DIR "/daemonlog-1.6.20-bare.txt", &len, &err);
    if (!log) fail_msg("%s", err.text);
    char *line = strstr(log, "msg=\"failed to load plugin io.containerd.grpc.v1.cri\"");
    assert_non_null(line);
    char *v = strstr(line, "error=\"");
    assert_non_null(v);
    v += strlen("error=\"");
    char *out = malloc(strlen(v) + 1), *o = out;
    assert_non_null(out);
    for (; *v && *v != '"'; v++) {
        if (*v == '\\' && v[1]) v++;
        *o++ = *v;
    }
    *o = '\0';
    free(log);
    return out;
}

static json_t *recorded(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", CRI_STATUS_DIR, name);
    json_error_t jerr;
    json_t *v = json_load_file(path, 0, &jerr);
    if (!v) fail_msg("%s: %s", path, jerr.text);
    return v;
}

/* What the recording normalised (the daemon ran in a temporary directory). */
static void normalise_paths(json_t *cri_config)
{
    const char *keys[] = {"containerdEndpoint", "containerdRootDir", "rootDir", "stateDir"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (json_object_get(cri_config, keys[i]))
            json_object_set_new(cri_config, keys[i], json_string("<dir>"));
}

static void assert_runtimes(const ag_daemon *d, const char *const *names, size_t n)
{
    assert_int_equal(d->phase, AG_DAEMON_RUNNING);
    assert_non_null(d->loaded);
    assert_int_equal(d->loaded->nruntimes, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(d->loaded->runtimes[i], names[i]);
}

/* ---- what a start loads ---- */

static void test_healthy_node_serves_runc(void **state)
{
    fixture *f = *state;
    start(f, T0, 0);
    const char *runc[] = {"runc"};
    assert_runtimes(&f->d, runc, 1);
    assert_int_equal(f->d.loaded->cri, AG_CRI_UP);
    assert_string_equal(f->d.loaded->default_runtime, "runc");
    assert_string_equal(f->d.loaded->version, "1.6.20~ds1");
    assert_true(f->d.loaded->started == T0);
    assert_true(ag_daemon_serves_handler(&f->d, "runc"));
    assert_false(ag_daemon_serves_handler(&f->d, "nvidia"));
}

/* info.config field by field, for the three recorded daemons. */
static void check_cri_config(fixture *f, const char *version, bool bare, const char *recording)
{
    set_version(f, version, AG_RESTART_ALWAYS);
    if (bare) add_bare_dropin(f);
    start(f, T0, 0);
    json_t *mine = json_deep_copy(f->d.loaded->cri_config);
    normalise_paths(mine);
    json_t *rec = recorded(recording);
    assert_json_equal(mine, json_object_get(rec, "config_raw"));
    json_decref(rec);
    json_decref(mine);
}

static void test_cri_config_1_6_20_as_recorded(void **state)
{
    check_cri_config(*state, "1.6.20~ds1", false, "status-1.6.20-none.json");
}

static void test_cri_config_1_7_29_as_recorded(void **state)
{
    check_cri_config(*state, "1.7.29", false, "status-1.7.29-none.json");
}

static void test_cri_config_2_1_5_bare_as_recorded(void **state)
{
    check_cri_config(*state, "2.1.5", true, "status-2.1.5-bare.json");
}

static void test_files_written_after_start_are_not_loaded(void **state)
{
    fixture *f = *state;
    start(f, T0, 0);
    add_bare_dropin(f);
    /* The daemon keeps what it loaded... */
    const char *runc[] = {"runc"};
    assert_runtimes(&f->d, runc, 1);
    assert_int_equal(f->d.loaded->cri, AG_CRI_UP);
    assert_false(ag_daemon_serves_handler(&f->d, "nvidia"));
    /* ... while `config dump`, which re-reads the files, sees the drop-in. */
    ag_node_state st;
    gp_error err = {0};
    assert_int_equal(ag_node_state_read(f->dir, &st, &err), 0);
    cd_prediction *dump = ag_node_predict(f->dir, &st, &err);
    assert_non_null(dump);
    assert_int_equal(dump->nruntimes, 1);
    assert_string_equal(dump->runtimes[0], "nvidia");
    assert_non_null(dump->cri_error);
    cd_prediction_free(dump);
    /* Starting a running daemon changes nothing either (systemctl start). */
    start(f, T0 + 60, 0);
    assert_true(f->d.loaded->started == T0);
    assert_runtimes(&f->d, runc, 1);
}

/* ---- SIGHUP and the supervisor ---- */

static void test_sighup_exits_and_systemd_restarts_after_5s_with_the_new_files(void **state)
{
    fixture *f = *state;
    start(f, T0, 0);
    unsigned first_pid = f->d.loaded->pid;
    add_bare_dropin(f);
    assert_true(ag_daemon_signal(&f->d, SIGHUP, T0 + 10));
    assert_int_equal(f->d.phase, AG_DAEMON_RESTARTING);
    assert_null(f->d.loaded);
    assert_string_equal(f->d.last_exit, "Main process exited, code=killed, status=1/HUP");
    assert_true(ag_daemon_next_event(&f->d) == T0 + 15);
    assert_false(ag_daemon_serves_handler(&f->d, "runc"));
    /* Not before RestartSec. */
    tick(f, T0 + 14.9);
    assert_int_equal(f->d.phase, AG_DAEMON_RESTARTING);
    /* Then it comes back, reading the files as they are now: on 1.6 the
     * bare drop-in replaces the CRI table and the CRI plugin fails, with
     * containerd's own message; the daemon runs on without CRI. */
    tick(f, T0 + 15);
    assert_int_equal(f->d.phase, AG_DAEMON_RUNNING);
    assert_true(f->d.loaded->started == T0 + 15);
    assert_int_not_equal(f->d.loaded->pid, first_pid);
    assert_int_equal(f->d.loaded->cri, AG_CRI_FAILED);
    char *want = recorded_cri_error();
    assert_string_equal(f->d.loaded->cri_error, want);
    free(want);
    assert_int_equal(f->d.loaded->nruntimes, 0);
    assert_false(ag_daemon_serves_handler(&f->d, "nvidia"));
    assert_false(ag_daemon_serves_handler(&f->d, "runc"));
}

static void test_2_1_restarted_with_the_bare_dropin_serves_nvidia_and_runc(void **state)
{
    fixture *f = *state;
    set_version(f, "2.1.5", AG_RESTART_ALWAYS);
    start(f, T0, 0);
    add_bare_dropin(f);
    assert_true(ag_daemon_signal(&f->d, SIGHUP, T0 + 1));
    tick(f, T0 + 6);
    const char *both[] = {"nvidia", "runc"};
    assert_runtimes(&f->d, both, 2);
    assert_int_equal(f->d.loaded->cri, AG_CRI_UP);
    assert_true(ag_daemon_serves_handler(&f->d, "nvidia"));
    /* nvidia keeps only what the drop-in says; runc keeps every default
     * option of the built-in entry (the recorded 2.1.5 daemon). */
    json_t *rec = recorded("status-2.1.5-bare.json");
    json_t *mine =
        json_object_get(json_object_get(f->d.loaded->cri_config, "containerd"), "runtimes");
    json_t *want = json_object_get(
        json_object_get(json_object_get(rec, "config_raw"), "containerd"), "runtimes");
    assert_json_equal(mine, want);
    json_decref(rec);
}

static void test_restart_no_stays_down(void **state)
{
    fixture *f = *state;
    set_version(f, "1.6.20~ds1", AG_RESTART_NO);
    start(f, T0, 0);
    assert_true(ag_daemon_signal(&f->d, SIGHUP, T0 + 1));
    assert_int_equal(f->d.phase, AG_DAEMON_DOWN);
    assert_true(ag_daemon_next_event(&f->d) == 0);
    tick(f, T0 + 3600);
    assert_int_equal(f->d.phase, AG_DAEMON_DOWN);
    /* An operator's systemctl start brings it back. */
    start(f, T0 + 3601, 0);
    assert_int_equal(f->d.phase, AG_DAEMON_RUNNING);
}

static void test_handled_signals(void **state)
{
    fixture *f = *state;
    start(f, T0, 0);
    /* SIGUSR1 dumps stacks, SIGPIPE is ignored: it runs on. */
    assert_false(ag_daemon_signal(&f->d, SIGUSR1, T0 + 1));
    assert_false(ag_daemon_signal(&f->d, SIGPIPE, T0 + 1));
    assert_int_equal(f->d.phase, AG_DAEMON_RUNNING);
    /* SIGTERM: a clean exit, which Restart=always restarts too. */
    assert_true(ag_daemon_signal(&f->d, SIGTERM, T0 + 2));
    assert_string_equal(f->d.last_exit, "Main process exited, code=exited, status=0/SUCCESS");
    assert_int_equal(f->d.phase, AG_DAEMON_RESTARTING);
    /* A signal to a process that is not there is lost. */
    assert_false(ag_daemon_signal(&f->d, SIGHUP, T0 + 3));
    assert_true(ag_daemon_next_event(&f->d) == T0 + 7);
}

static void test_refused_config_makes_a_restart_loop_until_fixed(void **state)
{
    fixture *f = *state;
    write_file(f, AG_NODE_CONF_D "/50-broken.toml", "[plugins\n");
    start(f, T0, 1);
    assert_int_equal(f->d.phase, AG_DAEMON_RESTARTING);
    assert_string_equal(f->d.last_exit, "Main process exited, code=exited, status=1/FAILURE");
    assert_non_null(strstr(f->d.last_error, "50-broken.toml"));
    tick(f, T0 + 5);
    assert_int_equal(f->d.phase, AG_DAEMON_RESTARTING);
    assert_true(ag_daemon_next_event(&f->d) == T0 + 10);
    assert_int_equal(f->d.starts, 2);
    write_file(f, AG_NODE_CONF_D "/50-broken.toml", "# fixed\n");
    tick(f, T0 + 10);
    assert_int_equal(f->d.phase, AG_DAEMON_RUNNING);
    assert_int_equal(f->d.loaded->cri, AG_CRI_UP);
}

static void test_restart_and_stop(void **state)
{
    fixture *f = *state;
    start(f, T0, 0);
    add_bare_dropin(f);
    gp_error err = {0};
    /* systemctl restart reads the files at once. */
    assert_int_equal(ag_daemon_restart(&f->d, f->dir, T0 + 1, &err), 0);
    assert_int_equal(f->d.loaded->cri, AG_CRI_FAILED);
    assert_true(f->d.loaded->started == T0 + 1);
    ag_daemon_stop(&f->d, T0 + 2);
    assert_int_equal(f->d.phase, AG_DAEMON_DOWN);
    tick(f, T0 + 100);
    assert_int_equal(f->d.phase, AG_DAEMON_DOWN);
}

static void test_disabled_cri_plugin_is_absent(void **state)
{
    fixture *f = *state;
    write_file(f, AG_NODE_MAIN_CONFIG,
               "version = 2\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n");
    start(f, T0, 0);
    assert_int_equal(f->d.loaded->cri, AG_CRI_DISABLED);
    assert_false(ag_daemon_serves_handler(&f->d, "runc"));
}

static void test_missing_main_config_is_the_defaults(void **state)
{
    fixture *f = *state;
    char path[256];
    snprintf(path, sizeof path, "%s/%s", f->dir, AG_NODE_MAIN_CONFIG);
    assert_int_equal(unlink(path), 0);
    start(f, T0, 0);
    const char *runc[] = {"runc"};
    assert_runtimes(&f->d, runc, 1);
    assert_int_equal(f->d.loaded->cri, AG_CRI_UP);
}

static void test_bad_node_state_starts_nothing(void **state)
{
    fixture *f = *state;
    write_file(f, AG_NODE_STATE_FILE, "[containerd]\nversion = \"9.9\"\n");
    gp_error err = {0};
    assert_int_equal(ag_daemon_start(&f->d, f->dir, T0, &err), -1);
    assert_non_null(strstr(err.text, "node.toml:2:1: "));
    assert_int_equal(f->d.phase, AG_DAEMON_DOWN);
    assert_int_equal(f->d.starts, 0);
}

static void test_line_data_parses(void **state)
{
    (void)state;
    const cd_family lines[] = {CD_V1_6, CD_V1_7, CD_V2_0, CD_V2_1};
    for (size_t i = 0; i < 4; i++) {
        const json_t *d = ag_line_data(lines[i]);
        assert_non_null(d);
        assert_true(json_is_object(json_object_get(d, "config")));
        assert_true(json_array_size(json_object_get(d, "plugins")) > 30);
        assert_true(json_array_size(json_object_get(d, "cri_plugins")) >= 1);
    }
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_healthy_node_serves_runc),
        T(test_cri_config_1_6_20_as_recorded),
        T(test_cri_config_1_7_29_as_recorded),
        T(test_cri_config_2_1_5_bare_as_recorded),
        T(test_files_written_after_start_are_not_loaded),
        T(test_sighup_exits_and_systemd_restarts_after_5s_with_the_new_files),
        T(test_2_1_restarted_with_the_bare_dropin_serves_nvidia_and_runc),
        T(test_restart_no_stays_down),
        T(test_handled_signals),
        T(test_refused_config_makes_a_restart_loop_until_fixed),
        T(test_restart_and_stop),
        T(test_disabled_cri_plugin_is_absent),
        T(test_missing_main_config_is_the_defaults),
        T(test_bad_node_state_starts_nothing),
        cmocka_unit_test(test_line_data_parses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
#undef T
}
