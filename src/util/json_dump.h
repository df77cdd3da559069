/* Compact JSON text of a jansson value, written by yajl's generator.
 *
 * The same bytes as json_dumps(v, JSON_COMPACT): members in their order,
 * strings escaped as jansson escapes them (", \, the control characters;
 * UTF-8 and "/" passed through), integers and reals in jansson's own
 * spelling. Why not json_dumps: jansson 2.14 checks every object and array
 * for a reference loop by formatting its address into a table with
 * snprintf, which made serializing much of what the embedded API server
 * spends on a stored write (measured with bench/: the notes have the
 * figures). A value yajl cannot
 * write (nesting deeper than its limit) is handed to json_dumps. */
#ifndef GPUOP_UTIL_JSON_DUMP_H
#define GPUOP_UTIL_JSON_DUMP_H

#include <jansson.h>
#include <stddef.h>

/* A new NUL-terminated text (the caller frees it) and its length in *len
 * (may be NULL); NULL when out of memory or v cannot be written (a reference
 * loop, as json_dumps). v is an object or an array. */
char *gp_json_dump(const json_t *v, size_t *len);

#endif
