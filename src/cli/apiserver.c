/* gpuop-apiserver: the embedded Kubernetes API server, a helper program of
 * gpuop (as git has git-* helpers). `gpuop cluster serve` runs it. It is a
 * program of its own because it links libmicrohttpd and GnuTLS, whose
 * loading would otherwise slow every gpuop command's start and raise its
 * memory (bench/containerd_bench.sh measures the start-up). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agents/agents.h"
#include "cli/cli.h"
#include "controllers/controllers.h"
#include "client/kubeconfig_write.h"
#include "lab/cluster_shape.h"
#include "apiserver/server.h"
#include "apiserver/store.h"
#include "apiserver/tls.h"
#include "util/file.h"
#include "util/random.h"

/* mkdir -p with mode 0700: the directory holds the token. */
static int make_private_dir(const char *dir, gp_error *err)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        gp_error_set(err, dir, 0, 0, "path too long");
        return -1;
    }
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            gp_error_set(err, path, 0, 0, "cannot create: %s", strerror(errno));
            return -1;
        }
        *p = c;
        if (!c) return 0;
    }
}

/* The token survives restarts (DIR/token, 0600), so a kubeconfig stays valid. */
static int load_token(const char *dir, char token[65], gp_error *err)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/token", dir);
    size_t len;
    gp_error ignored = {0};
    char *text = gp_read_file(path, &len, &ignored);
    if (text && len >= 32 && len <= 64 && strspn(text, "0123456789abcdef") == len) {
        memcpy(token, text, len + 1);
        free(text);
        return 0;
    }
    free(text);
    if (gp_random_hex(token, 32, err) != 0) return -1;
    FILE *f = NULL;
    mode_t old = umask(077);
    f = fopen(path, "w");
    umask(old);
    if (!f || fputs(token, f) < 0 || fclose(f) != 0) {
        gp_error_set(err, path, 0, 0, "cannot write: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    cli_setup_messages();
    const char *data = NULL, *address = "127.0.0.1";
    long port = 0, history = 0;
    lab_shape seed;
    lab_shape_defaults(&seed);
    gp_error err = {0};
    char default_data[PATH_MAX];
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--data") == 0 && next) {
            data = argv[++i];
        } else if (strcmp(argv[i], "--address") == 0 && next) {
            address = argv[++i];
        } else if (strcmp(argv[i], "--port") == 0 && next) {
            char *end;
            port = strtol(argv[++i], &end, 10);
            if (*end || port < 0 || port > 65535)
                return cli_usage_error("cluster", _("--port takes 0 to 65535"));
        } else if (strcmp(argv[i], "--watch-history") == 0 && next) {
            char *end;
            history = strtol(argv[++i], &end, 10);
            if (*end || history < 1 || history > 10000000)
                return cli_usage_error("cluster", _("--watch-history takes 1 to 10000000"));
        } else {
            int used = lab_shape_option(&seed, argc - i, argv + i, &err);
            if (used < 0) return cli_usage_error("cluster", "%s", err.text);
            if (used == 0)
                return cli_usage_error("cluster", _("unexpected argument '%s'"), argv[i]);
            i += used - 1;
        }
    }
    if (!data) {
        const char *home = getenv("HOME");
        snprintf(default_data, sizeof default_data, "%s/.local/share/gpuop/cluster",
                 home ? home : ".");
        data = default_data;
    }
    char token[65];
    as_tls tls = {0};
    if (make_private_dir(data, &err) != 0 || load_token(data, token, &err) != 0 ||
        as_tls_ensure(data, address, &tls, &err) != 0) {
        cli_report(&err);
        return EXIT_CANNOT_TELL;
    }
    /* Signals go to this thread only: the server's threads inherit the mask. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    char store_path[PATH_MAX + 16];
    snprintf(store_path, sizeof store_path, "%s/store.db", data);
    /* ServiceAccount admission needs the controller that makes the default
     * accounts; the root-CA publisher publishes the certificate kubectl
     * trusts (the server's own, self-signed). */
    as_api api = {.store = as_store_open(store_path, (size_t)history, &err),
                  .admit_service_accounts = !seed.no_controllers,
                  .root_ca_pem = tls.cert_pem,
                  .fresh_wait_ms = AS_FRESH_WAIT_MS};
    if (!api.store || as_api_bootstrap(&api, &err) != 0 ||
        lab_shape_apply(&api, &seed, &err) != 0) {
        cli_report(&err);
        as_store_close(api.store);
        as_tls_free(&tls);
        return EXIT_CANNOT_TELL;
    }
    /* The node agents run beside the fake kubelet, which drives them: none
     * without controllers. Off, nothing of them is made. */
    ag_agents *agents = NULL;
    if (seed.node_agents && !seed.no_controllers) {
        signal(SIGPIPE, SIG_IGN); /* a CRI client that hangs up mid-answer */
        char nodes[PATH_MAX + 16];
        snprintf(nodes, sizeof nodes, "%s/nodes", data);
        agents = ag_agents_new(nodes, &err);
        if (!agents || ag_agents_run(agents, &err) != 0) {
            cli_report(&err);
            ag_agents_free(agents);
            as_store_close(api.store);
            as_tls_free(&tls);
            return EXIT_CANNOT_TELL;
        }
        api.extension = ag_agents_route;
        api.extension_ctx = agents;
        api.pod_log = ag_agents_pod_log;
    }
    ctl_loop_options copt = {.runtime_check = seed.runtime_check,
                             .node_monitor_grace_ms = seed.node_monitor_grace_ms,
                             .agents = agents ? ag_agents_kubelet(agents) : NULL};
    ctl_loop *controllers = seed.no_controllers ? NULL : ctl_loop_new(&api, &copt);
    if (controllers && ctl_loop_start(controllers, &err) != 0) {
        cli_report(&err);
        ctl_loop_free(controllers);
        ag_agents_free(agents);
        as_store_close(api.store);
        as_tls_free(&tls);
        return EXIT_CANNOT_TELL;
    }
    as_server_options opt = {address, (uint16_t)port, token, tls.cert_pem, tls.key_pem, &api};
    as_server *s = as_server_start(&opt, &err);
    if (!s) {
        cli_report(&err);
        ctl_loop_free(controllers);
        ag_agents_free(agents);
        as_store_close(api.store);
        as_tls_free(&tls);
        return EXIT_CANNOT_TELL;
    }
    char url[128], kubeconfig[PATH_MAX + 16];
    snprintf(url, sizeof url, "https://%s:%u", address, (unsigned)as_server_port(s));
    snprintf(kubeconfig, sizeof kubeconfig, "%s/kubeconfig", data);
    if (kc_kubeconfig_write(kubeconfig, "gpuop", url, tls.cert_base64, token, &err) != 0) {
        cli_report(&err);
        ctl_loop_free(controllers);
        as_server_stop(s);
        ag_agents_free(agents);
        as_store_close(api.store);
        as_tls_free(&tls);
        return EXIT_CANNOT_TELL;
    }
    fprintf(stderr, _("gpuop API server on %s; kubeconfig %s\n"), url, kubeconfig);
    int sig;
    sigwait(&stop, &sig);
    ctl_loop_free(controllers);
    as_server_stop(s);
    ag_agents_free(agents);
    as_store_close(api.store);
    as_tls_free(&tls);
    return EXIT_HOLDS;
}
