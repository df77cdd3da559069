/* Translatable messages (gettext). Catalogues live in po/ (Korean, Japanese):
 * the lab was written in those languages, and its learners read what gpuop
 * prints, library errors included. */
#ifndef GPUOP_UTIL_I18N_H
#define GPUOP_UTIL_I18N_H

#include <libintl.h>

#define GPUOP_TEXTDOMAIN "gpuop"
#define _(s)             dgettext(GPUOP_TEXTDOMAIN, s)
#define N_(s)            (s) /* marks a string translated where it is used */

#endif
