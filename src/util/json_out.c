#include "util/json_out.h"

/* Bytes that need an escape in a JSON string: controls, '"' and '\\'. */
static int needs_escape(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\';
}

void gp_json_string(FILE *out, const char *s, size_t len)
{
    putc('"', out);
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!needs_escape(c)) continue;
        fwrite(s + run, 1, i - run, out);
        run = i + 1;
        switch (c) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\b':
            fputs("\\b", out);
            break;
        case '\f':
            fputs("\\f", out);
            break;
        default:
            fprintf(out, "\\u%04x", c);
            break;
        }
    }
    fwrite(s + run, 1, len - run, out);
    putc('"', out);
}
