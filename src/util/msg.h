/* Printing a translated message with its values filled in.
 *
 * The format is translated by the caller (`_("...")`, so that xgettext and
 * the compiler's format check see it); these functions format it and then
 * choose the Korean particles that follow a value (util/ko_particle.h), which
 * only the formatted text can tell. Every message a learner reads with a
 * value in it goes through here or through gp_error_set. */
#ifndef GPUOP_UTIL_MSG_H
#define GPUOP_UTIL_MSG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "util/buf.h"
#include "util/error.h"

/* vsnprintf, then the particles: returns the length written (truncated to
 * cap - 1 bytes). */
int gp_msg_vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap);
int gp_msg_snprintf(char *buf, size_t cap, const char *fmt, ...) GP_PRINTF(3, 4);
/* The same into a malloc'd string (NULL when out of memory). */
char *gp_msg_vasprintf(const char *fmt, va_list ap);
char *gp_msg_asprintf(const char *fmt, ...) GP_PRINTF(1, 2);
/* gp_buf_vaddf, then the particles of what it appended. */
int gp_msg_buf_vaddf(gp_buf *b, const char *fmt, va_list ap);
/* fprintf, then the particles. */
int gp_msg_fprintf(FILE *out, const char *fmt, ...) GP_PRINTF(2, 3);
int gp_msg_vfprintf(FILE *out, const char *fmt, va_list ap);

#endif
