/* What util/spawn.c and util/contain.c share: collecting a program's
 * standard output and error from two pipes. Internal to util/. */
#ifndef GPUOP_UTIL_SPAWN_CAPTURE_INTERNAL_H
#define GPUOP_UTIL_SPAWN_CAPTURE_INTERNAL_H

#include <stddef.h>

/* A dump is tens of kilobytes; anything past this is not a tool's answer. */
#define GP_CAPTURE_MAX (64u << 20)

typedef struct gp_capture {
    int fd; /* -1 once the program closed it */
    char *buf;
    size_t len, cap;
} gp_capture;

/* close(*fd) when it is open; *fd becomes -1. */
void gp_close_fd(int *fd);
/* Collects both pipes until the program closes them or the deadline
 * (gp_now_ms) passes. Returns 0, 1 on timeout, -1 on a read error or too much output. */
int gp_capture_collect(gp_capture *cs, long long deadline);
/* A NUL-terminated, never-NULL copy of the bytes collected (NULL only when
 * out of memory); the capture no longer owns it. */
char *gp_capture_finish(gp_capture *c, size_t *len);

#endif
