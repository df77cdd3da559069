/* Streaming JSON output.
 *
 * gpuop converts documents of tens of megabytes to JSON (`gpuop toml json`)
 * and must print floats in their shortest round-trip form and NaN/Inf as
 * strings; a DOM library would double the memory and print 0.1 as
 * 0.10000000000000001. So scalars are written straight to the stream here;
 * reading JSON is left to the JSON library. */
#ifndef GPUOP_UTIL_JSON_OUT_H
#define GPUOP_UTIL_JSON_OUT_H

#include <stddef.h>
#include <stdio.h>

/* A JSON string literal with quotes; bytes are passed through as UTF-8,
 * control characters escaped. */
void gp_json_string(FILE *out, const char *s, size_t len);

#endif
