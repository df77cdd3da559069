/* The stand-in containerd (placeholder until it is written). */
#include "cli/cli.h"

int standin_containerd_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cli_error("stand-in containerd: not implemented yet");
    return EXIT_CANNOT_TELL;
}
