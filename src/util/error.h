/* The error every library function returns through: where and what.
 *
 * Libraries fill one of these and return a failure code; only the CLI prints.
 * The text is complete and ready to print, e.g.
 * "conf.d/99-nvidia.toml:3:7: duplicate key 'runtime_type'". */
#ifndef GPUOP_UTIL_ERROR_H
#define GPUOP_UTIL_ERROR_H

typedef struct gp_error {
    unsigned line; /* 0 when the error has no position in a file */
    unsigned col;
    char text[1024];
} gp_error;

#if defined(__GNUC__)
#define GP_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define GP_PRINTF(fmt, args)
#endif

/* "FILE:LINE:COL: message"; the position is left out when line is 0 and the
 * file when it is NULL. Accepts a NULL err (the caller does not want it).
 * The format is a message id: it is translated (gettext) before use, and
 * the Korean particles after its values are chosen (util/ko_particle.h). */
void gp_error_set(gp_error *err, const char *file, unsigned line, unsigned col, const char *fmt,
                  ...) GP_PRINTF(5, 6);

#endif
