/* TOML documents as JSON: plain (for people and jq) or tagged (toml-test). */
#ifndef GPUOP_TOML_JSON_H
#define GPUOP_TOML_JSON_H

#include <jansson.h>
#include <stdio.h>

#include "toml/toml.h"
#include "util/error.h"

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

/* The way back from TOML_JSON_PLAIN for what config files hold: writes the
 * JSON object `table` as a TOML document (scalars and arrays first, then
 * each object as a [dotted.header] table, in the object's order; an array
 * whose items are all objects as [[headers]]). JSON null, a mixed array of
 * objects and scalars, and a number that is neither an integer nor a real
 * have no TOML form: -1 with err naming the key. Strings are written as
 * TOML strings, so a date-time TOML_JSON_PLAIN wrote as a string comes
 * back a string. Returns 0, or -1 with err (also when the stream fails). */
int toml_emit_json(const json_t *table, FILE *out, gp_error *err);

#endif
