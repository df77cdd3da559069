/* The growable buffer (buf.h). Every allocation goes through realloc, so a
 * test that makes realloc fail reaches every failure path. */
#include "util/buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first allocation: most texts built here are a line or a message. */
#define FIRST_CAP 64

static int fail(gp_buf *b, gp_buf_state why)
{
    b->state = why;
    return -1;
}

/* Room for `more` bytes and the NUL after them. */
static int reserve(gp_buf *b, size_t more)
{
    if (b->state != GP_BUF_OK) return -1;
    if (more > SIZE_MAX - 1 - b->len) return fail(b, GP_BUF_NO_MEMORY);
    size_t need = b->len + more + 1;
    if (b->max && need - 1 > b->max) return fail(b, GP_BUF_TOO_LONG);
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : FIRST_CAP;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *data = realloc(b->data, cap);
    if (!data) return fail(b, GP_BUF_NO_MEMORY);
    if (!b->data) data[0] = '\0';
    b->data = data;
    b->cap = cap;
    return 0;
}

int gp_buf_reserve(gp_buf *b, size_t more)
{
    return reserve(b, more);
}

int gp_buf_addn(gp_buf *b, const void *bytes, size_t n)
{
    if (reserve(b, n) != 0) return -1;
    if (n) memcpy(b->data + b->len, bytes, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int gp_buf_add(gp_buf *b, const char *s)
{
    return gp_buf_addn(b, s, strlen(s));
}

int gp_buf_addc(gp_buf *b, char c)
{
    return gp_buf_addn(b, &c, 1);
}

int gp_buf_vaddf(gp_buf *b, const char *fmt, va_list ap)
{
    if (b->state != GP_BUF_OK) return -1;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    int rc = -1;
    if (n < 0)
        fail(b, GP_BUF_TOO_LONG); /* over INT_MAX bytes, or a bad wide character */
    else if (reserve(b, (size_t)n) == 0) {
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
        b->len += (size_t)n;
        rc = 0;
    }
    va_end(again);
    return rc;
}

int gp_buf_addf(gp_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = gp_buf_vaddf(b, fmt, ap);
    va_end(ap);
    return rc;
}

int gp_buf_join(gp_buf *b, const char *const *items, size_t n, const char *sep)
{
    for (size_t i = 0; i < n; i++) {
        if (i) gp_buf_add(b, sep);
        gp_buf_add(b, items[i]);
    }
    return b->state == GP_BUF_OK ? 0 : -1;
}

bool gp_buf_failed(const gp_buf *b)
{
    return b->state != GP_BUF_OK;
}

const char *gp_buf_str(const gp_buf *b)
{
    return b->data ? b->data : "";
}

void gp_buf_clear(gp_buf *b)
{
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

char *gp_buf_take(gp_buf *b)
{
    reserve(b, 0); /* an empty buffer's text is "", allocated */
    char *text = b->state == GP_BUF_OK ? b->data : NULL;
    if (!text) free(b->data);
    size_t max = b->max;
    *b = (gp_buf){.max = max};
    return text;
}

void gp_buf_free(gp_buf *b)
{
    free(b->data);
    size_t max = b->max;
    *b = (gp_buf){.max = max};
}

char *gp_vformat(const char *fmt, va_list ap)
{
    gp_buf b = {0};
    gp_buf_vaddf(&b, fmt, ap);
    return gp_buf_take(&b);
}

char *gp_format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = gp_vformat(fmt, ap);
    va_end(ap);
    return s;
}

/* Length of the valid UTF-8 sequence at s (at most `left` bytes), 0 when
 * it is not one. */
static size_t utf8_len(const unsigned char *s, size_t left)
{
    size_t n;
    unsigned min;
    unsigned cp;
    if (s[0] < 0x80) return 1;
    if ((s[0] & 0xe0) == 0xc0) {
        n = 2, min = 0x80, cp = s[0] & 0x1f;
    } else if ((s[0] & 0xf0) == 0xe0) {
        n = 3, min = 0x800, cp = s[0] & 0x0f;
    } else if ((s[0] & 0xf8) == 0xf0) {
        n = 4, min = 0x10000, cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n > left) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

int gp_buf_add_go_quoted(gp_buf *b, const char *s, size_t n)
{
    static const char esc_from[] = "\a\b\f\n\r\t\v\\\"";
    static const char esc_to[] = "abfnrtv\\\"";
    gp_buf_addc(b, '"');
    const unsigned char *c = (const unsigned char *)s, *end = c + n;
    while (c < end) {
        const char *e = *c ? strchr(esc_from, *c) : NULL;
        if (e) {
            char out[2] = {'\\', esc_to[e - esc_from]};
            gp_buf_addn(b, out, 2);
            c++;
            continue;
        }
        size_t len = *c < 0x20 || *c == 0x7f ? 0 : utf8_len(c, (size_t)(end - c));
        if (len == 0) {
            gp_buf_addf(b, "\\x%02x", *c);
            c++;
            continue;
        }
        gp_buf_addn(b, c, len);
        c += len;
    }
    return gp_buf_addc(b, '"');
}
