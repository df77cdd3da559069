/* What containerd loads, as containerd itself reports it, and the daemon
 * process's files.
 *
 * - `containerd config dump`: the installed binary's own reading of the
 *   config and its imports, i.e. what a (re)start would load;
 * - the daemon's process (/proc) and the config files it was started with,
 *   to tell whether a restart is pending.
 * What the running daemon loaded is asked over its socket: cri.h.
 *
 * The dump parser takes the tool's text and returns a struct; it does no
 * I/O, so tests feed it the real outputs recorded in containerd-cases/.
 * Only the last section (the daemon process and its config files) reads
 * /proc and the file system. */
#ifndef GPUOP_CONTAINERD_OBSERVED_H
#define GPUOP_CONTAINERD_OBSERVED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

/* A runtime handler name as Kubernetes and containerd accept it in a
 * RuntimeClass: [A-Za-z0-9._-]+. Anything else is refused before use, since
 * names end up in shell scripts and Prometheus labels. */
bool cd_runtime_name_valid(const char *name);

/* A list of malloc'd strings. */
typedef struct cd_names {
    char **items;
    size_t n;
} cd_names;

void cd_names_free(cd_names *names);
bool cd_names_contains(const cd_names *names, const char *name);
/* Appends a copy; returns -1 when memory is exhausted. */
int cd_names_add(cd_names *names, const char *name, size_t len);

/* ---- `containerd config dump` ---- */

typedef enum cd_cri_state {
    CD_CRI_VALID,    /* the CRI plugin would accept its runtime config */
    CD_CRI_INVALID,  /* it would refuse it; cri_error has containerd's message */
    CD_CRI_DISABLED, /* the CRI plugin is listed in disabled_plugins */
    CD_CRI_ABSENT,   /* no CRI runtime table in the dump, and not disabled */
} cd_cri_state;

typedef struct cd_dump {
    int64_t version;        /* top-level `version`: 2 from 1.x, 3 from 2.x, 0 absent */
    const char *cri_plugin; /* the plugin whose table holds the runtimes (static) */
    cd_names handlers;      /* runtime handlers in dump order */
    char *default_runtime;  /* default_runtime_name; NULL when absent */
    cd_cri_state cri;
    char cri_error[512]; /* containerd's validation message when cri is CD_CRI_INVALID */
} cd_dump;

/* Parses the output of `containerd config dump` (`name` is used in errors).
 * 1.x dumps (version 2) keep the handlers in
 * plugins."io.containerd.grpc.v1.cri".containerd.runtimes, 2.x dumps
 * (version 3) in plugins."io.containerd.cri.v1.runtime".containerd.runtimes.
 * The CRI check applies the same rules as containerd's plugin (including the
 * deprecated 1.x `default_runtime` and `untrusted_workload_runtime`) and
 * gives the same messages, without the "invalid plugin config: " prefix.
 * Returns 0, or -1 with err when the text is not TOML. */
int cd_dump_parse(const char *text, size_t len, const char *name, cd_dump *out, gp_error *err);
void cd_dump_free(cd_dump *d);
/* containerd's check of default_runtime_name against the runtime handlers:
 * its message (without "invalid plugin config: ") in msg, or "" when the
 * name is one of them. Shared by the dump reading and the prediction. */
void cd_cri_check_default(const char *name, const char *const *runtimes, size_t n, char *msg,
                          size_t cap);

/* The handler is in the runtimes and the CRI plugin would load them. */
bool cd_dump_handler_loaded(const cd_dump *d, const char *handler);

/* ---- the daemon process and its config files ---- */

/* Field 22 of /proc/PID/stat (start time in clock ticks after boot). The
 * command name in parentheses may itself hold spaces and parentheses. */
int cd_proc_parse_starttime(const char *stat_text, unsigned long long *ticks);
/* The "btime" line of /proc/stat (boot time, whole seconds since the epoch). */
int cd_proc_parse_btime(const char *proc_stat, long long *btime);
/* The first field of /proc/uptime: seconds since boot, to 1/100 s. It dates
 * a process start to 1/100 s, where btime only gives whole seconds. */
int cd_proc_parse_uptime(const char *uptime_text, double *uptime);
/* --address/-a and --config/-c from a NUL-separated /proc/PID/cmdline, in
 * each of the forms `--address X`, `--address=X`, `-a X`. Empty when absent. */
void cd_proc_parse_cmdline(const char *cmdline, size_t len, char *address, size_t address_cap,
                           char *config, size_t config_cap);

#define CD_DEFAULT_ADDRESS "/run/containerd/containerd.sock"
#define CD_DEFAULT_CONFIG  "/etc/containerd/config.toml"

typedef struct cd_daemon_proc {
    pid_t pid;
    double started;    /* seconds since the epoch */
    char config[4096]; /* the config file it was started with (absolute) */
} cd_daemon_proc;

/* Finds the containerd process serving `address` (a socket path, with or
 * without unix://) among /proc's processes named containerd. Returns 0, 1
 * when none serves it, -1 with err when /proc cannot be read. */
int cd_daemon_find(const char *address, cd_daemon_proc *out, gp_error *err);

/* The config file and every file its imports name, breadth-first as
 * containerd loads them (relative paths against the importing file, globs
 * expanded, each file once). Files that do not exist are left out. Returns
 * 0, or -1 with err when a file is not TOML (the caller then falls back to
 * the usual places). */
int cd_config_files(const char *main_path, cd_names *files, gp_error *err);

/* containerd's usual places, for when the imports cannot be resolved:
 * CD_DEFAULT_CONFIG and the *.toml files of /etc/containerd/conf.d. */
void cd_default_config_files(cd_names *files);

/* The newest modification time among the files, with the file; -1 when none
 * can be read. */
int cd_newest_mtime(const cd_names *files, double *mtime, const char **which);

#endif
