/* A growable buffer: text (or bytes) built piece by piece, in the manner of
 * git's strbuf and curl's dynbuf.
 *
 *   gp_buf b = {0};
 *   gp_buf_add(&b, "MAIN_RUNTIMES=");
 *   gp_buf_addf(&b, "%s\n", names);
 *   char *text = gp_buf_take(&b);   (NULL when anything above failed)
 *
 * An append that cannot grow the buffer (memory exhausted, or the limit in
 * `max` reached) marks it failed, and every later append does nothing: the
 * caller checks once, at the end, instead of after every piece. The failed
 * append and every later one also return -1, for a caller that must stop at
 * once (a curl write callback).
 *
 * One owner: the buffer owns `data` until gp_buf_take() hands it over or
 * gp_buf_free() releases it.
 *
 * Where the text comes from a writer that streams to a FILE * (the TOML
 * emitter, jansson's json_dumpf, the analyzers' report writers), that writer
 * is kept and open_memstream() collects its text: a second copy of each
 * writer for a buffer would be logic written twice. */
#ifndef GPUOP_UTIL_BUF_H
#define GPUOP_UTIL_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

typedef enum gp_buf_state {
    GP_BUF_OK = 0,
    GP_BUF_NO_MEMORY, /* an allocation failed */
    GP_BUF_TOO_LONG,  /* an append would have passed `max` (or printf failed) */
} gp_buf_state;

typedef struct gp_buf {
    char *data;         /* NUL-terminated once anything was added; NULL before */
    size_t len;         /* bytes in data, the NUL not counted */
    size_t cap;         /* bytes allocated */
    size_t max;         /* the most bytes it may hold; 0 for no limit */
    gp_buf_state state; /* a caller whose own allocation for the text failed
                         * may set GP_BUF_NO_MEMORY, to report it at the end */
} gp_buf;

/* Makes room for `more` bytes beyond the text, in one allocation, when the
 * size is known before the pieces come. 0, or -1 when the buffer failed. */
int gp_buf_reserve(gp_buf *b, size_t more);
/* Appends n bytes (which may hold NULs). 0, or -1 when the buffer failed. */
int gp_buf_addn(gp_buf *b, const void *bytes, size_t n);
/* Appends a NUL-terminated string. */
int gp_buf_add(gp_buf *b, const char *s);
int gp_buf_addc(gp_buf *b, char c);
/* Appends printf-formatted text. */
int gp_buf_addf(gp_buf *b, const char *fmt, ...) GP_PRINTF(2, 3);
int gp_buf_vaddf(gp_buf *b, const char *fmt, va_list ap) GP_PRINTF(2, 0);
/* Appends the strings with `sep` between them (n of them). */
int gp_buf_join(gp_buf *b, const char *const *items, size_t n, const char *sep);

/* Appends the n bytes of s quoted as Go's strconv.Quote (what %q and %#v
 * print for a string): printable UTF-8 stays, the escapes Go knows (\n, \t,
 * \", \\ ...) are used, other control bytes and invalid UTF-8 become \xNN.
 * (Go also escapes non-printable Unicode such as U+00AD as \u00ad; the
 * names, keys and labels quoted here never reach that.) */
int gp_buf_add_go_quoted(gp_buf *b, const char *s, size_t n);

/* True once an append failed. */
bool gp_buf_failed(const gp_buf *b);
/* The text so far, "" when none; valid until the next append. */
const char *gp_buf_str(const gp_buf *b);

/* Empties the text and keeps the memory, for a buffer reused piece after
 * piece (a line at a time). A failure is kept: it is the caller's to see. */
void gp_buf_clear(gp_buf *b);

/* Hands the text over: malloc'd, NUL-terminated ("" when nothing was
 * added), the caller frees it; NULL when an append failed or memory runs out
 * now. The buffer is then empty and usable again: its failure is forgotten,
 * its `max` kept. */
char *gp_buf_take(gp_buf *b);
/* Releases the text; the buffer is empty and usable again (as after take). */
void gp_buf_free(gp_buf *b);

/* A formatted string, malloc'd (asprintf is not POSIX); NULL when memory
 * runs out. */
char *gp_format(const char *fmt, ...) GP_PRINTF(1, 2);
char *gp_vformat(const char *fmt, va_list ap) GP_PRINTF(1, 0);

#endif
