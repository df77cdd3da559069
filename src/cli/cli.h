/* The command line: shared conventions of every gpuop command. */
#ifndef GPUOP_CLI_CLI_H
#define GPUOP_CLI_CLI_H

#include <stddef.h>

#include "util/error.h"
#include "util/i18n.h"

/* Exit codes of every command. */
enum {
    EXIT_HOLDS = 0,         /* ok; the checked property holds */
    EXIT_DOES_NOT_HOLD = 1, /* checked, and it does not hold (e.g. invalid TOML) */
    EXIT_CANNOT_TELL = 2,   /* usage error, unreadable input, unreachable server */
};

/* setlocale and the gettext catalogues: $GPUOP_LOCALEDIR, else locale/
 * beside an uninstalled binary, else the installed ones. Once a process:
 * a second call does nothing. */
void cli_setup_messages(void);
/* "gpuop: message" on stderr. */
void cli_error(const char *fmt, ...) GP_PRINTF(1, 2);
/* A library error, printed as it is located ("FILE:LINE:COL: message"). */
void cli_report(const gp_error *err);
/* "gpuop: WHAT; see 'gpuop CMD --help'" on stderr, WHAT formatted from an
 * already translated fmt; returns EXIT_CANNOT_TELL, the exit code of every
 * usage error. */
int cli_usage_error(const char *cmd, const char *fmt, ...) GP_PRINTF(2, 3);
/* True for -h and --help. */
int cli_is_help(const char *arg);

/* The helper program NAME (gpuop-kube, gpuop-apiserver) into out: beside
 * this binary (the build tree, or the helpers' folder), else in
 * ../libexec/gpuop from it (an install, wherever its prefix is), else in
 * GPUOP_LIBEXECDIR. */
void cli_helper_path(const char *name, char *out, size_t size);
/* Replaces this process with helper NAME run with argv (argv[0] is
 * overwritten with the helper's path): same pid, standard streams, signal
 * dispositions and environment, so its exit status and output are the
 * command's. Returns only when the exec failed, with the error printed:
 * EXIT_CANNOT_TELL. */
int cli_exec_helper(const char *name, char **argv);

int cli_cmd_toml(int argc, char **argv);
int cli_cmd_cluster(int argc, char **argv);
int cli_cmd_containerd(int argc, char **argv);
int cli_cmd_containerd_merge(int argc, char **argv);
int cli_cmd_containerd_check(int argc, char **argv);
int cli_cmd_containerd_script(int argc, char **argv);
int cli_cmd_lab(int argc, char **argv);
int cli_cmd_node(int argc, char **argv);
int cli_cmd_nodes(int argc, char **argv);
int cli_cmd_why_pending(int argc, char **argv);
int cli_cmd_slots(int argc, char **argv);
int cli_cmd_rollout(int argc, char **argv);
/* gpuop run through a link named `containerd`: a stand-in that answers
 * `containerd config dump` from $GPUOP_STANDIN_DUMP (tests, lab grader). */
int cli_standin_containerd_main(int argc, char **argv);

#endif
