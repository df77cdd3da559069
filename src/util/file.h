/* Reading whole inputs into memory. */
#ifndef GPUOP_UTIL_FILE_H
#define GPUOP_UTIL_FILE_H

#include <stdio.h>
#include <stddef.h>

#include "util/error.h"

/* Reads all of `path` ("-" for standard input) into a malloc'd buffer that
 * the caller frees. The buffer has a '\0' after the last byte, which is not
 * counted in *len. Returns NULL and fills err when the file cannot be read. */
char *gp_read_file(const char *path, size_t *len, gp_error *err);

/* The same for an open stream; `name` is used in error messages. */
char *gp_read_stream(FILE *f, const char *name, size_t *len, gp_error *err);

#endif
