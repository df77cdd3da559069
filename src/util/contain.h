/* Running a program someone else wrote, so that nothing it starts outlives
 * the run (the lab grader runs a learner's check script this way).
 *
 * gp_spawn_capture (util/spawn.h) kills the program's process group at the
 * time limit; a program can leave that group (setsid, a double fork) and
 * live on, and a background job that keeps the output pipe open makes the
 * caller wait for it. Here the program runs under a keeper process in a
 * session of its own. The keeper is a child subreaper
 * (prctl PR_SET_CHILD_SUBREAPER), so every orphan the program leaves
 * becomes the keeper's child; where the kernel allows it (root), the
 * program also runs in a PID namespace of its own, whose every process the
 * kernel kills when the namespace's first process ends. The run ends when
 * the program itself ends (its exit status is the result) or at the time
 * limit; then the keeper kills and reaps every descendant left, and only
 * then reports. The output collected is what was written until then. */
#ifndef GPUOP_UTIL_CONTAIN_H
#define GPUOP_UTIL_CONTAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"
#include "util/spawn.h"

typedef struct gp_contain_options {
    int timeout_ms;
    /* Subreaper only, no PID namespace even where one is allowed (tests
     * use it to check the fallback). */
    bool no_pid_namespace;
} gp_contain_options;

typedef struct gp_contain_result {
    gp_spawn_result r;
    int exit_status; /* as gp_spawn_capture's, on GP_SPAWN_OK */
    bool namespaced; /* it ran in a PID namespace of its own */
} gp_contain_result;

/* Runs argv (argv[0] through PATH) with standard input from /dev/null,
 * capturing standard output and error into malloc'd, NUL-terminated
 * buffers the caller frees (set on GP_SPAWN_OK and GP_SPAWN_TIMEOUT,
 * possibly empty). Every result but GP_SPAWN_OK fills err with a sentence
 * naming the program. When it returns, no process the program started is
 * left. */
void gp_spawn_contained(char *const argv[], const gp_contain_options *opt, char **stdout_buf,
                        size_t *stdout_len, char **stderr_buf, size_t *stderr_len,
                        gp_contain_result *res, gp_error *err);

#endif
