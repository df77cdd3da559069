/* gpuop containerd merge | check | script */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static void containerd_usage(FILE *out)
{
    fputs(_("Usage: gpuop containerd merge [--config PATH] [--root DIR] [--containerd VERSION]\n"
            "                              [--observed DUMP] [-o text|json|lab]\n"
            "       gpuop containerd check [HANDLER] [--source auto|daemon|node|dump]\n"
            "                              [--address SOCK] [--node NAME] [-o text|json]\n"
            "                              [--prometheus]\n"
            "       gpuop containerd script [HANDLER]\n"
            "\n"
            "  merge   predict what a containerd version loads from a main config and its\n"
            "          drop-ins, key by key with the file and line each value came from,\n"
            "          and what it loses, lints and refuses\n"
            "  check   is runtime HANDLER (default: nvidia) loaded? Asks the running daemon\n"
            "          over CRI, else the node's status, else `containerd config dump`\n"
            "          (what a restart would load), and says which one answered\n"
            "  script  print a POSIX sh script that checks the dump (the lab's gate)\n"
            "\n"
            "Exit status: 0 holds (merge: every runtime the files declare loads, with a\n"
            "valid CRI plugin; check: loaded), 1 does not hold, 2 cannot tell (check:\n"
            "only the dump's prediction, or no witness at all).\n"),
          out);
}

int cli_cmd_containerd(int argc, char **argv)
{
    if (argc < 2) {
        containerd_usage(stderr);
        return EXIT_CANNOT_TELL;
    }
    const char *sub = argv[1];
    if (cli_is_help(sub)) {
        containerd_usage(stdout);
        return EXIT_HOLDS;
    }
    if (strcmp(sub, "merge") == 0) return cli_cmd_containerd_merge(argc - 1, argv + 1);
#ifdef GPUOP_CLUSTER_CLIENT
    /* In gpuop, main() has handed `check` to gpuop-kube already. */
    if (strcmp(sub, "check") == 0) return cli_cmd_containerd_check(argc - 1, argv + 1);
#endif
    if (strcmp(sub, "script") == 0) return cli_cmd_containerd_script(argc - 1, argv + 1);
    return cli_usage_error("containerd", _("unknown containerd command '%s'"), sub);
}
