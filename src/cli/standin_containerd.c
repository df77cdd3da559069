/* A stand-in containerd: gpuop run through a link named `containerd`.
 *
 * Tests and the lab's grader put it first in PATH to run check scripts and
 * `gpuop containerd check` against a chosen dump, without a containerd
 * binary or root:
 *
 *   containerd config dump   prints the file $GPUOP_STANDIN_DUMP names
 *   containerd --version     containerd github.com/containerd/containerd
 *                            $GPUOP_STANDIN_VERSION gpuop-standin
 *
 * $GPUOP_STANDIN_EXIT=N makes `config dump` fail with status N, as a broken
 * config makes the real one fail. It answers nothing else: unlike the real
 * binary, which starts the daemon when it gets no subcommand, it never
 * serves anything. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/file.h"

#define STANDIN_DEFAULT_VERSION "1.6.20"

static void cli_standin_usage(FILE *out)
{
    fputs(_("Usage: containerd config dump\n"
            "       containerd --version\n"
            "\n"
            "This is gpuop's stand-in for containerd, for tests and the lab.\n"
            "  GPUOP_STANDIN_DUMP     the file `config dump` prints\n"
            "  GPUOP_STANDIN_VERSION  the version --version shows (default 1.6.20)\n"
            "  GPUOP_STANDIN_EXIT     make `config dump` fail with this exit status\n"),
          out);
}

/* containerd's own way of refusing a command line (urfave/cli): status 1. */
static int cli_standin_usage_error(const char *arg)
{
    fprintf(stderr, "Incorrect Usage. %s\n\n", arg);
    cli_standin_usage(stderr);
    return 1;
}

/* $GPUOP_STANDIN_EXIT as a status 1..255; 0 when unset or 0; -1 when bad. */
static int forced_exit(void)
{
    const char *s = getenv("GPUOP_STANDIN_EXIT");
    if (!s || !*s) return 0;
    char *end;
    long n = strtol(s, &end, 10);
    if (*end || n < 0 || n > 255) return -1;
    return (int)n;
}

static int config_dump(void)
{
    int status = forced_exit();
    if (status < 0) {
        fprintf(stderr, _("containerd (gpuop stand-in): GPUOP_STANDIN_EXIT must be a number "
                          "from 0 to 255\n"));
        return 1;
    }
    if (status > 0) {
        fprintf(
            stderr,
            _("containerd: failed to load the config (gpuop stand-in: GPUOP_STANDIN_EXIT=%d)\n"),
            status);
        return status;
    }
    const char *path = getenv("GPUOP_STANDIN_DUMP");
    if (!path || !*path) {
        fprintf(stderr, _("containerd (gpuop stand-in): set GPUOP_STANDIN_DUMP to the file that "
                          "`containerd config dump` should print\n"));
        return 1;
    }
    gp_error err = {0};
    size_t len;
    char *text = gp_read_file(path, &len, &err);
    if (!text) {
        fprintf(stderr, "containerd (gpuop stand-in): %s\n", err.text);
        return 1;
    }
    size_t written = fwrite(text, 1, len, stdout);
    free(text);
    if (written != len || fflush(stdout) != 0) return 1;
    return 0;
}

int cli_standin_containerd_main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-v") == 0)) {
        const char *version = getenv("GPUOP_STANDIN_VERSION");
        printf("containerd github.com/containerd/containerd %s gpuop-standin\n",
               version && *version ? version : STANDIN_DEFAULT_VERSION);
        return 0;
    }
    if (argc == 2 && cli_is_help(argv[1])) {
        cli_standin_usage(stdout);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "config") == 0 && strcmp(argv[2], "dump") == 0)
        return config_dump();
    return cli_standin_usage_error(argc > 1 ? argv[1] : _("a command is needed"));
}
