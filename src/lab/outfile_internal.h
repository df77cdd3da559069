/* The lab output files (R/out/NAME.txt): KEY=VALUE lines, or a table. */
#ifndef GPUOP_LAB_OUTFILE_INTERNAL_H
#define GPUOP_LAB_OUTFILE_INTERNAL_H

#include <stddef.h>

#include "util/error.h"

/* The largest output file read: an answer is a few short lines. */
#define LAB_OUTFILE_MAX (1 << 20)

typedef struct lab_line {
    unsigned number; /* 1-based */
    char *text;      /* without the newline and trailing blanks (' ', '\t', '\r') */
    char *key;       /* before the first '=', blanks around it cut; NULL without '=' */
    char *value;     /* after it, blanks around it cut (or NULL) */
} lab_line;

/* A file's lines that say something: blank lines and lines that start with
 * '#' are left out (a final newline, or none, both fine). */
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
