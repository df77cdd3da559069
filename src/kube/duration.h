/* Durations as Kubernetes components take them on their command lines
 * (kube-controller-manager's --node-monitor-grace-period=40s): Go's
 * time.ParseDuration. A sequence of decimal numbers, each with an optional
 * fraction and a unit ("ns", "us", "µs", "ms", "s", "m", "h"), optionally
 * signed, such as "300ms", "1.5h" or "2h45m"; "0" needs no unit. Errors are
 * Go's texts: `time: invalid duration "x"`, `time: missing unit in duration
 * "5"`, `time: unknown unit "d" in duration "5d"`. */
#ifndef GPUOP_KUBE_DURATION_H
#define GPUOP_KUBE_DURATION_H

#include <stdint.h>

#include "util/error.h"

/* 0 with *ns set, or -1 with err set (and *ns untouched). */
int kube_duration_parse(const char *text, int64_t *ns, gp_error *err);

#endif
