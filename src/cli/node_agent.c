/* gpuop-node-agent: simulated nodes' containerd, a helper program of gpuop
 * (as gpuop-apiserver is). It alone links libnghttp2 (the gRPC server of
 * src/agents/), which gpuop and gpuop-kube never load.
 *
 *   gpuop-node-agent [--create] DIR...
 *
 * runs the containerd of each node rooted at DIR (src/agents/node.h) and
 * serves its socket at DIR/run/containerd/containerd.sock until SIGTERM or
 * SIGINT. SIGHUP sent to this program goes to every node's containerd, as
 * the NVIDIA toolkit's restart mode `signal` sends it to a real one: each
 * dies, and comes back after RestartSec per its node.toml. The nodes'
 * journal (containerd's log lines and systemd's) goes to standard error,
 * each line behind the node's name. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/host.h"
#include "agents/node.h"
#include "cli/cli.h"

static void usage(FILE *out)
{
    fputs(_("Usage: gpuop-node-agent [--create] DIR...\n"
            "\n"
            "Runs the simulated containerd of each node rooted at DIR and serves it at\n"
            "DIR/run/containerd/containerd.sock, as a real node's daemon answers (CRI,\n"
            "`ctr plugins ls`, `ctr version`), until SIGTERM or SIGINT.\n"
            "\n"
            "  --create   make DIR a healthy node first (the lab's main config, runc\n"
            "             only; DIR/node.toml); files already there are kept\n"
            "\n"
            "SIGHUP is delivered to every node's containerd, which exits as the real\n"
            "one does, and is started again after RestartSec (node.toml).\n"),
          out);
}

static void journal(void *ctx, const char *node, const char *lines)
{
    (void)ctx;
    for (const char *p = lines; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        fprintf(stderr, "%s: %.*s\n", node, (int)n, p);
        p += n + (nl ? 1 : 0);
    }
    fflush(stderr);
}

/* The node's name: the last part of its directory. */
static const char *node_name(const char *dir, char *buf, size_t cap)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    const char *start = dir + n;
    while (start > dir && start[-1] != '/')
        start--;
    snprintf(buf, cap, "%.*s", (int)(dir + n - start), start);
    return buf;
}

int main(int argc, char **argv)
{
    cli_setup_messages();
    bool create = false;
    int first = 1;
    if (argc > 1 && cli_is_help(argv[1])) {
        usage(stdout);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--create") == 0) create = true, first = 2;
    if (first >= argc || argv[first][0] == '-') {
        usage(stderr);
        return 2;
    }
    /* The signals are taken by sigwait below, on this thread only: block
     * them before the serving thread starts, so that it inherits the mask. */
    sigset_t wanted;
    sigemptyset(&wanted);
    sigaddset(&wanted, SIGHUP);
    sigaddset(&wanted, SIGTERM);
    sigaddset(&wanted, SIGINT);
    sigaddset(&wanted, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &wanted, NULL);
    signal(SIGPIPE, SIG_IGN); /* a client that hangs up mid-answer */

    gp_error err = {0};
    ag_host *host = ag_host_new(journal, NULL, &err);
    if (!host) {
        cli_report(&err);
        return 2;
    }
    for (int i = first; i < argc; i++) {
        char name[256];
        if ((create && ag_node_create(argv[i], NULL, &err) != 0) ||
            ag_host_add(host, node_name(argv[i], name, sizeof name), argv[i], NULL, &err) != 0) {
            cli_report(&err);
            ag_host_free(host);
            return 2;
        }
    }
    if (ag_host_run(host, &err) != 0) {
        cli_report(&err);
        ag_host_free(host);
        return 2;
    }
    for (;;) {
        int sig = 0;
        if (sigwait(&wanted, &sig) != 0) continue;
        if (sig == SIGTERM || sig == SIGINT) break;
        ag_host_signal_all(host, sig);
    }
    ag_host_free(host);
    return 0;
}
