/* What `gpuop containerd merge` prints about a prediction, in its three
 * forms, beside what a `containerd config dump` taken on the node says was
 * loaded. The command prints them; the lab's solver writes the lab form to
 * out/merge.txt, so the two can never disagree. */
#ifndef GPUOP_CONTAINERD_RENDER_H
#define GPUOP_CONTAINERD_RENDER_H

#include <stddef.h>
#include <stdio.h>

#include "containerd/containerd.h"
#include "containerd/observed.h"
#include "util/error.h"

/* The `schema` member of the JSON form. */
#define CD_MERGE_SCHEMA "gpuop.containerd.merge/v1"

/* A `containerd config dump` as merge compares it with the prediction. */
typedef struct cd_observed {
    const char *source; /* the dump's path; NULL when no dump was given */
    cd_dump dump;
    const char **names; /* the dump's runtime handlers, sorted */
    size_t count;
} cd_observed;

/* Reads and parses the dump at `path` (which must outlive o). 0, or -1 with
 * err (o is then empty). */
int cd_observed_read(const char *path, cd_observed *o, gp_error *err);
void cd_observed_free(cd_observed *o);

/* The runtime handlers the drop-ins (every file but the main one) define,
 * sorted, each once; malloc'd (the names are the prediction's), NULL when
 * memory runs out. */
const char **cd_dropin_runtimes(const cd_prediction *p, size_t *n);

typedef enum cd_render_format {
    CD_RENDER_TEXT, /* for a reader: files, handlers side by side, origins, verdicts */
    CD_RENDER_JSON, /* everything, one object */
    CD_RENDER_LAB,  /* the five KEY=VALUE lines of the lab's step 3 */
} cd_render_format;

/* Writes the prediction and what `o` observed (an empty cd_observed when no
 * dump was given: LOADED_RUNTIMES is then empty). `version_source` says how
 * the rules were chosen, for the text and JSON forms: "--containerd",
 * "installed" or "default". Returns 0, or -1 when memory ran out or the
 * stream reports an error. */
int cd_render_merge(FILE *out, const cd_prediction *p, const cd_observed *o,
                    const char *version_source, cd_render_format fmt);

#endif
