/* gpuop containerd check (placeholder until it is written) */
#include "cli/cli.h"

int cmd_containerd_check(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cli_error("containerd check: not implemented yet");
    return EXIT_CANNOT_TELL;
}
