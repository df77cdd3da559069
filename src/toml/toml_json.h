/* TOML documents as JSON: plain (for people and jq) or tagged (toml-test). */
#ifndef GPUOP_TOML_JSON_H
#define GPUOP_TOML_JSON_H

#include <stdio.h>

#include "toml/toml.h"

typedef enum toml_json_style {
    /* Integers and finite floats as JSON numbers, booleans as JSON booleans,
     * date-times, inf and nan as strings. */
    TOML_JSON_PLAIN,
    /* Every scalar as {"type": ..., "value": "..."}, the toml-test format. */
    TOML_JSON_TAGGED,
} toml_json_style;

/* Writes the value; a trailing newline is the caller's. Returns 0, or -1 if
 * the stream failed. */
int toml_write_json(const toml_value *v, toml_json_style style, FILE *out);

#endif
