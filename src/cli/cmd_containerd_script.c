/* gpuop containerd script [HANDLER]
 *
 * Prints a POSIX sh script that checks for a runtime handler in the output
 * of `containerd config dump`, never in a config file: what a restart would
 * load, which is what a node-boot or CI gate wants, but not what a running
 * daemon loaded (`gpuop containerd check` asks that). It is the lab's step
 * 4 answer, where gpuop itself is not installed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "containerd/observed.h"
#include "containerd/script.h"

static void script_usage(FILE *out)
{
    fputs(_("Usage: gpuop containerd script [HANDLER]\n"
            "\n"
            "Print a POSIX sh script that exits 0 when `containerd config dump` (containerd\n"
            "from PATH) has the runtime table of HANDLER (default: nvidia), 1 when it has\n"
            "not, and 2 when containerd cannot run. The script never reads a config file.\n"
            "The dump shows what a restart would load, not what the running daemon loaded:\n"
            "`gpuop containerd check` asks the daemon.\n"
            "\n"
            "  gpuop containerd script nvidia > check-runtime.sh && sh check-runtime.sh\n"),
          out);
}

int cli_cmd_containerd_script(int argc, char **argv)
{
    const char *handler = NULL;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            script_usage(stdout);
            return EXIT_HOLDS;
        }
        if (argv[i][0] == '-' || handler) {
            return cli_usage_error("containerd script", "%s",
                                   argv[i][0] == '-' ? _("unknown option")
                                                     : _("containerd script takes one handler"));
        }
        handler = argv[i];
    }
    if (!handler) handler = "nvidia";
    if (!cd_runtime_name_valid(handler)) {
        cli_error(_("'%s' is not a runtime handler name (letters, digits, '.', '_', '-')"),
                  handler);
        return EXIT_CANNOT_TELL;
    }
    char *script = cd_check_script(handler, GPUOP_VERSION);
    if (!script) {
        cli_error(_("out of memory"));
        return EXIT_CANNOT_TELL;
    }
    fputs(script, stdout);
    free(script);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(_("cannot write the output"));
        return EXIT_CANNOT_TELL;
    }
    return EXIT_HOLDS;
}
