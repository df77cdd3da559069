/* The process side of `gpuop cluster up | down | status`: gpuop-apiserver
 * runs in the background, found again through a pid file.
 *
 * A pid file can outlive its process, and the pid can be reused by any
 * other program, so a pid is trusted only when /proc says it is a live
 * gpuop-apiserver started for the same data directory. */
#ifndef GPUOP_UTIL_DAEMON_H
#define GPUOP_UTIL_DAEMON_H

#include <stdbool.h>
#include <sys/types.h>

#include "util/error.h"

/* Starts argv (argv[0] a path) detached: in a session of its own, standard
 * input from /dev/null, output and errors appended to log_path (created
 * 0600), no other descriptor inherited. Returns its pid, a child of the
 * caller; -1 with err filled when it could not be started (exec failures
 * included: they come back through a pipe). */
pid_t gp_daemon_spawn(char *const argv[], const char *log_path, gp_error *err);

/* Writes "PID\n" to path atomically (a temporary file renamed over it), 0600. */
int gp_pidfile_write(const char *path, pid_t pid, gp_error *err);

/* Returns 1 with *pid set, 0 when the file does not exist, -1 with err when
 * it cannot be read, -2 with err when it does not hold a pid. */
int gp_pidfile_read(const char *path, pid_t *pid, gp_error *err);

/* True when `pid` is alive (a zombie is not), its executable is named
 * `program`, and its command line has `--data data_dir`. */
bool gp_daemon_is(pid_t pid, const char *program, const char *data_dir);

/* True while `pid` exists and is not a zombie. */
bool gp_process_alive(pid_t pid);

/* SIGTERM, then up to timeout_ms for it to end, then SIGKILL and up to a
 * second more. Returns 0 when it ended on SIGTERM, 1 when it took SIGKILL,
 * -1 when it is still there. */
int gp_daemon_stop(pid_t pid, int timeout_ms);

/* True when a TCP connection to host:port opens within timeout_ms. */
bool gp_tcp_answers(const char *host, unsigned port, int timeout_ms);

/* True when address:port can be bound now, as the server binds it
 * (SO_REUSEADDR, so a port left in TIME_WAIT counts as free). */
bool gp_port_free(const char *address, unsigned port);

/* Milliseconds on a monotonic clock, for deadlines. */
long long gp_now_ms(void);

/* Sleeps `ms` milliseconds. */
void gp_sleep_ms(int ms);

#endif
