/* The lab output files (R/out/NAME.txt): KEY=VALUE lines, or a table. */
#ifndef GPUOP_LAB_OUTFILE_INTERNAL_H
#define GPUOP_LAB_OUTFILE_INTERNAL_H

#include <stddef.h>

#include "util/error.h"

/* The largest output file read: an answer is a few short lines. */
#define LAB_OUTFILE_MAX (1 << 20)

typedef struct lab_line {
    unsigned number; /* 1-based */
    char *text;      /* without the newline or a trailing '\r' */
    char *key;       /* before the first '=', NULL when the line has none */
    char *value;     /* after it (or NULL) */
} lab_line;

/* A file's non-empty lines (a final newline, or none, both fine). */
typedef struct lab_outfile {
    char *path;
    lab_line *lines;
    size_t count;
} lab_outfile;

/* -1 with err when the file cannot be read. */
int lab_outfile_read(const char *path, lab_outfile *out, gp_error *err);
void lab_outfile_free(lab_outfile *f);
/* The first line whose key is `key`, or NULL. */
const lab_line *lab_outfile_find(const lab_outfile *f, const char *key);

#endif
