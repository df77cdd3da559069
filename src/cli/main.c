/* gpuop: the entry point. Sets up messages, dispatches to a command.
 *
 * Compiled twice: into gpuop, and with GPUOP_CLUSTER_CLIENT into its helper
 * gpuop-kube, which alone links the cluster client (libcurl and the many
 * libraries it loads, yajl, libyaml) and the in-process API server
 * (SQLite). gpuop runs the commands that need none of them (toml, and
 * containerd but for `containerd check`) itself and execs gpuop-kube for
 * the others, so that `gpuop --version`, `gpuop toml` and `gpuop containerd
 * merge` do not pay for loading them. */
#include <locale.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

typedef struct command {
    const char *name;
    const char *summary;               /* translatable */
    int (*run)(int argc, char **argv); /* NULL: gpuop-kube runs it */
} command;

/* A command that talks to a cluster: gpuop-kube runs it, gpuop execs gpuop-kube. */
#ifdef GPUOP_CLUSTER_CLIENT
#define CLUSTER_COMMAND(run) run
#else
#define CLUSTER_COMMAND(run) NULL
#endif

static const command commands[] = {
    {"cluster", N_("run the embedded Kubernetes API server that kubectl drives"),
     CLUSTER_COMMAND(cli_cmd_cluster)},
    {"containerd", N_("predict and check what containerd loads from its config files"),
     cli_cmd_containerd},
    {"lab", N_("the GPU incident lab: workspace, cluster, steps, grader, solver"),
     CLUSTER_COMMAND(cli_cmd_lab)},
    {"node", N_("act on a simulated node of gpuop's cluster: files, restarts, signals, reboots"),
     CLUSTER_COMMAND(cli_cmd_node)},
    {"nodes", N_("what each node advertises of a GPU resource, and nodes that lost it"),
     CLUSTER_COMMAND(cli_cmd_nodes)},
    {"rollout", N_("why a DaemonSet rollout is stuck, with the evidence read"),
     CLUSTER_COMMAND(cli_cmd_rollout)},
    {"slots", N_("time-slicing and MPS: slots, guaranteed memory, isolation, MIG instead"),
     CLUSTER_COMMAND(cli_cmd_slots)},
    {"toml", N_("parse, check and convert TOML files (containerd's config format)"), cli_cmd_toml},
    {"why-pending", N_("why a GPU pod is Pending, layer by layer"),
     CLUSTER_COMMAND(cli_cmd_why_pending)},
};

/* Whether gpuop hands this command line to gpuop-kube: a cluster command,
 * or `containerd check`, which asks the daemon over CRI with libcurl (the
 * other containerd subcommands need no library of the helper's). */
static bool runs_in_helper(const command *cmd, int argc, char **argv)
{
#ifdef GPUOP_CLUSTER_CLIENT
    (void)cmd;
    (void)argc;
    (void)argv;
    return false;
#else
    if (!cmd) return false;
    if (!cmd->run) return true;
    return cmd->run == cli_cmd_containerd && argc > 2 && strcmp(argv[2], "check") == 0;
#endif
}

static void usage(FILE *out)
{
    fprintf(out, _("Usage: gpuop COMMAND [ARGS...]\n"
                   "       gpuop COMMAND --help\n"
                   "\n"
                   "Diagnose GPU nodes and clusters: what containerd loads, what the cluster\n"
                   "advertises and schedules, and why.\n"
                   "\n"
                   "Commands:\n"));
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, _(commands[i].summary));
    fprintf(out, _("\n"
                   "Options:\n"
                   "  -h, --help     show this help\n"
                   "  --version      show the version\n"
                   "\n"
                   "Exit status: 0 ok or holds, 1 checked and does not hold,\n"
                   "2 cannot tell (usage error, unreadable input, unreachable server).\n"));
}

/* The program's own name, without its directory. */
static const char *program_name(const char *argv0)
{
    const char *slash = strrchr(argv0, '/');
    return slash ? slash + 1 : argv0;
}

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0) return &commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 0 && strcmp(program_name(argv[0]), "containerd") == 0) {
        cli_setup_messages();
        return cli_standin_containerd_main(argc, argv);
    }
    /* Before the locale set-up, so that gpuop-kube starts from exactly what
     * gpuop was given: the same environment (the set-up may add LANGUAGE). */
    const command *cmd = argc > 1 ? find_command(argv[1]) : NULL;
    if (runs_in_helper(cmd, argc, argv)) return cli_exec_helper("gpuop-kube", argv);
    cli_setup_messages();
    if (argc < 2) {
        usage(stderr);
        return EXIT_CANNOT_TELL;
    }
    const char *name = argv[1];
    if (cli_is_help(name)) {
        usage(stdout);
        return EXIT_HOLDS;
    }
    if (strcmp(name, "--version") == 0) {
        printf("gpuop %s\n", GPUOP_VERSION);
        return EXIT_HOLDS;
    }
    if (cmd) return cmd->run(argc - 1, argv + 1);
    cli_error(_("unknown command '%s'; see 'gpuop --help'"), name);
    return EXIT_CANNOT_TELL;
}
