/* gpuop containerd script (placeholder until it is written) */
#include "cli/cli.h"

int cmd_containerd_script(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cli_error("containerd script: not implemented yet");
    return EXIT_CANNOT_TELL;
}
