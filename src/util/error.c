#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>

#include "util/i18n.h"
#include "util/ko_particle.h"

void gp_error_set(gp_error *err, const char *file, unsigned line, unsigned col, const char *fmt,
                  ...)
{
    if (!err) return;
    err->line = line;
    err->col = col;
    int n = 0;
    if (file && line)
        n = snprintf(err->text, sizeof err->text, "%s:%u:%u: ", file, line, col);
    else if (file)
        n = snprintf(err->text, sizeof err->text, "%s: ", file);
    if (n < 0 || (size_t)n >= sizeof err->text) n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->text + n, sizeof err->text - (size_t)n, _(fmt), ap);
    va_end(ap);
    gp_ko_particles(err->text + n);
}
