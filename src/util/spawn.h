/* Running another program and capturing what it prints.
 *
 * gpuop asks installed tools (containerd, ctr, crictl) rather than reading
 * their files: `containerd config dump` is the binary's own reading of its
 * configuration. The program is looked up through PATH (execvp), never by an
 * absolute path, so that a node's own binary answers, and a test can put a
 * stand-in first in PATH. */
#ifndef GPUOP_UTIL_SPAWN_H
#define GPUOP_UTIL_SPAWN_H

#include <stddef.h>

#include "util/error.h"

typedef enum gp_spawn_result {
    GP_SPAWN_OK = 0,      /* the program ran and ended; see *exit_status */
    GP_SPAWN_NOT_FOUND,   /* argv[0] is not on PATH (execvp failed with ENOENT) */
    GP_SPAWN_EXEC_FAILED, /* found but could not be run (EACCES, ENOEXEC, ...) */
    GP_SPAWN_TIMEOUT,     /* still running after timeout_ms: killed */
    GP_SPAWN_ERROR,       /* pipe, fork or read failed; output too large */
} gp_spawn_result;

/* Runs argv (NULL-terminated; argv[0] found through PATH) with standard input
 * from /dev/null, and collects its standard output and error into malloc'd,
 * NUL-terminated buffers that the caller frees (both set, possibly empty, on
 * GP_SPAWN_OK; NULL otherwise). *exit_status is the program's exit code, or
 * 128 + the signal number when a signal ended it.
 *
 * The program and anything it started in its process group are killed with
 * SIGKILL after timeout_ms milliseconds. Every result but GP_SPAWN_OK fills
 * err with a sentence naming the program. */
gp_spawn_result gp_spawn_capture(char *const argv[], int timeout_ms, char **stdout_buf,
                                 size_t *stdout_len, char **stderr_buf, size_t *stderr_len,
                                 int *exit_status, gp_error *err);

#endif
