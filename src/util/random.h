/* Secrets: bytes from the kernel's random source. */
#ifndef GPUOP_UTIL_RANDOM_H
#define GPUOP_UTIL_RANDOM_H

#include <stddef.h>

#include "util/error.h"

/* Writes 2 * nbytes lowercase hex digits and a NUL into out. */
int gp_random_hex(char *out, size_t nbytes, gp_error *err);

#endif
