/* gpuop cluster serve: runs the API server helper (gpuop-apiserver). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static void cluster_usage(FILE *out)
{
    fputs(_("Usage: gpuop cluster serve [--data DIR] [--address ADDR] [--port N]\n"
            "\n"
            "  serve   run the embedded Kubernetes API server in the foreground until\n"
            "          interrupted. It listens on ADDR (default 127.0.0.1) and PORT\n"
            "          (default: a free one), and writes DIR/kubeconfig (mode 0600)\n"
            "          with the bearer token every request must carry.\n"
            "          DIR defaults to ~/.local/share/gpuop/cluster.\n"
            "\n"
            "Exit status: 0 stopped cleanly, 2 could not start.\n"),
          out);
}

/* gpuop-apiserver beside this binary (the build tree, or a bin/ install
 * that has it there), else in GPUOP_LIBEXECDIR. */
static int run_apiserver(char **argv)
{
    char self[PATH_MAX], helper[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) *slash = '\0';
        snprintf(helper, sizeof helper, "%s/gpuop-apiserver", self);
        if (access(helper, X_OK) != 0)
            snprintf(helper, sizeof helper, "%s/gpuop-apiserver", GPUOP_LIBEXECDIR);
    } else {
        snprintf(helper, sizeof helper, "%s/gpuop-apiserver", GPUOP_LIBEXECDIR);
    }
    argv[0] = helper;
    execv(helper, argv);
    cli_error(_("cannot run %s: %s"), helper, strerror(errno));
    return EXIT_CANNOT_TELL;
}

int cmd_cluster(int argc, char **argv)
{
    if (argc < 2) {
        cluster_usage(stderr);
        return EXIT_CANNOT_TELL;
    }
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i])) {
            cluster_usage(stdout);
            return EXIT_HOLDS;
        }
    if (strcmp(argv[1], "serve") == 0) return run_apiserver(argv + 1);
    return cli_usage_error("cluster", _("unknown cluster command '%s'"), argv[1]);
}
