/* A simulated node's kubelet process (src/agents/kubelet_unit.h) against a
 * simulated containerd (daemon.h). The texts are kubernetes/kubernetes'
 * (1.32): staging/src/k8s.io/cri-client/pkg/remote_runtime.go
 * NewRemoteRuntimeService ("validate service connection: %w") and
 * validateServiceConnection ("validate CRI v1 runtime API for endpoint
 * %q: %w"), cmd/kubelet/app/server.go ("failed to run Kubelet: %w"),
 * component-base's "command failed" log line; grpc-go's answer for a
 * service the server lacks, as recorded from containerd 1.6.20 without CRI
 * (../shared/containerd-cases/cri-status/status-1.6.20-bare.json). */
#define _XOPEN_SOURCE 700
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "temp_dir.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agents/daemon.h"
#include "agents/kubelet_unit.h"
#include "agents/node.h"
#include "util/file.h"

#define T0 1796000000.0

typedef struct fixture {
    char dir[64];
    ag_daemon d;
    ag_kubelet k;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/test-agents-kubelet-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    gp_error err = {0};
    assert_int_equal(ag_node_create(f->dir, NULL, &err), 0);
    ag_daemon_init(&f->d);
    ag_kubelet_init(&f->k);
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

static void start_daemon(fixture *f, double now)
{
    gp_error err = {0};
    assert_int_equal(ag_daemon_restart(&f->d, f->dir, now, &err), 0);
}

static void bare_dropin(const fixture *f)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s/99-nvidia.toml", f->dir, AG_NODE_CONF_D);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs(ag_bare_dropin, out);
    assert_int_equal(fclose(out), 0);
}

static void set_version(const fixture *f, const char *version)
{
    ag_node_state st;
    ag_node_state_default(&st);
    snprintf(st.containerd_version, sizeof st.containerd_version, "%s", version);
    assert_int_equal(cd_family_parse(version, &st.family), 0);
    gp_error err = {0};
    assert_int_equal(ag_node_state_write(f->dir, &st, &err), 0);
}

static void test_a_kubelet_runs_against_a_cri_and_follows_it(void **state)
{
    fixture *f = *state;
    start_daemon(f, T0);
    assert_true(ag_kubelet_start(&f->k, &f->d, T0 + 1));
    assert_int_equal(f->k.phase, AG_KUBELET_RUNNING);
    assert_true(f->k.runtime_ok == T0 + 1 && f->k.relist_ok == T0 + 1);
    assert_int_equal(f->k.nhandlers, 0); /* 1.6 reports none */
    /* the daemon comes back without CRI: the kubelet's last answer stays */
    bare_dropin(f);
    start_daemon(f, T0 + 5);
    assert_false(ag_kubelet_tick(&f->k, &f->d, T0 + 40));
    assert_int_equal(f->k.phase, AG_KUBELET_RUNNING);
    assert_true(f->k.runtime_ok == T0 + 1);
}

static void test_a_start_without_cri_fails_and_systemd_tries_every_10_s(void **state)
{
    fixture *f = *state;
    bare_dropin(f);
    start_daemon(f, T0);
    assert_false(ag_kubelet_start(&f->k, &f->d, T0 + 1));
    assert_int_equal(f->k.phase, AG_KUBELET_RESTARTING);
    assert_string_equal(f->k.last_error,
                        "\"command failed\" err=\"failed to run Kubelet: validate service "
                        "connection: validate CRI v1 runtime API for endpoint "
                        "\\\"unix:///run/containerd/containerd.sock\\\": rpc error: code = "
                        "Unimplemented desc = unknown service runtime.v1.RuntimeService\"");
    assert_true(ag_kubelet_next_event(&f->k) == T0 + 1 + AG_KUBELET_RESTART_SEC);
    assert_false(ag_kubelet_tick(&f->k, &f->d, T0 + 10));
    assert_int_equal(f->k.starts, 1);
    assert_true(ag_kubelet_tick(&f->k, &f->d, T0 + 11));
    assert_int_equal(f->k.starts, 2);
    assert_int_equal(f->k.phase, AG_KUBELET_RESTARTING);
    /* the files repaired and containerd restarted: the next try runs */
    char path[128];
    snprintf(path, sizeof path, "%s/%s/99-nvidia.toml", f->dir, AG_NODE_CONF_D);
    assert_int_equal(remove(path), 0);
    start_daemon(f, T0 + 12);
    assert_true(ag_kubelet_tick(&f->k, &f->d, T0 + 21));
    assert_int_equal(f->k.phase, AG_KUBELET_RUNNING);
    assert_string_equal(f->k.last_error, "");
}

/* A daemon that is not there: its socket removed by a clean stop, or left
 * behind by a signal that killed it (grpc-go's dial error). */
static void test_a_missing_daemon_is_a_dial_error(void **state)
{
    fixture *f = *state;
    start_daemon(f, T0);
    ag_daemon_stop(&f->d, T0 + 1);
    char cri[512];
    ag_kubelet_cri_error(&f->d, cri, sizeof cri);
    assert_string_equal(cri, "rpc error: code = Unavailable desc = connection error: desc = "
                             "\"transport: Error while dialing: dial unix "
                             "/run/containerd/containerd.sock: connect: no such file or "
                             "directory\"");
    start_daemon(f, T0 + 2);
    assert_true(ag_daemon_signal(&f->d, SIGHUP, T0 + 3));
    ag_kubelet_cri_error(&f->d, cri, sizeof cri);
    assert_non_null(strstr(cri, "connect: connection refused\""));
}

/* containerd 2.x reports its handlers, the default one as "" first (the
 * recorded status-2.1.5-bare.json). */
static void test_containerd_2_reports_its_handlers(void **state)
{
    fixture *f = *state;
    set_version(f, "2.1.5");
    start_daemon(f, T0);
    assert_true(ag_kubelet_start(&f->k, &f->d, T0 + 1));
    assert_int_equal(f->k.nhandlers, 2);
    assert_string_equal(f->k.handlers[0], "");
    assert_string_equal(f->k.handlers[1], "runc");
    ag_kubelet_stop(&f->k);
    assert_int_equal(f->k.phase, AG_KUBELET_STOPPED);
    assert_int_equal(f->k.nhandlers, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_kubelet_runs_against_a_cri_and_follows_it, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_start_without_cri_fails_and_systemd_tries_every_10_s,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_missing_daemon_is_a_dial_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_containerd_2_reports_its_handlers, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
