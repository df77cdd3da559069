#include "util/msg.h"

#include <stdlib.h>
#include <string.h>

#include "util/ko_particle.h"

int gp_msg_vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap)
{
    if (cap == 0) return 0;
    int n = vsnprintf(buf, cap, fmt, ap);
    if (n < 0) {
        buf[0] = '\0';
        return 0;
    }
    gp_ko_particles(buf);
    return (int)strlen(buf);
}

int gp_msg_snprintf(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = gp_msg_vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}

char *gp_msg_vasprintf(const char *fmt, va_list ap)
{
    char *out = gp_vformat(fmt, ap);
    if (out) gp_ko_particles(out);
    return out;
}

int gp_msg_buf_vaddf(gp_buf *b, const char *fmt, va_list ap)
{
    size_t before = b->len;
    if (gp_buf_vaddf(b, fmt, ap) != 0) return -1;
    /* only what was appended: the particles never grow the text */
    gp_ko_particles(b->data + before);
    b->len = before + strlen(b->data + before);
    return 0;
}

char *gp_msg_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *out = gp_msg_vasprintf(fmt, ap);
    va_end(ap);
    return out;
}

int gp_msg_vfprintf(FILE *out, const char *fmt, va_list ap)
{
    char *text = gp_msg_vasprintf(fmt, ap);
    if (!text) return -1;
    int rc = fputs(text, out) < 0 ? -1 : (int)strlen(text);
    free(text);
    return rc;
}

int gp_msg_fprintf(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = gp_msg_vfprintf(out, fmt, ap);
    va_end(ap);
    return rc;
}
