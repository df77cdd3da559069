#include "lab/outfile_internal.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/file.h"

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* s[0..len) without the blanks around it. */
static char *stripped(const char *s, size_t len)
{
    while (len && blank(*s)) {
        s++;
        len--;
    }
    while (len && blank(s[len - 1]))
        len--;
    return strndup(s, len);
}

static void add_line(lab_outfile *f, unsigned number, const char *start, size_t len)
{
    while (len && blank(start[len - 1]))
        len--;
    size_t lead = 0;
    while (lead < len && blank(start[lead]))
        lead++;
    /* blank lines and # comments are not part of the answer */
    if (lead == len || start[lead] == '#') return;
    lab_line *l = &f->lines[f->count++];
    l->number = number;
    l->text = strndup(start, len);
    const char *eq = memchr(start, '=', len);
    if (!eq) return;
    l->key = stripped(start, (size_t)(eq - start));
    l->value = stripped(eq + 1, len - (size_t)(eq - start) - 1);
}

int lab_outfile_read(const char *path, lab_outfile *out, gp_error *err)
{
    memset(out, 0, sizeof *out);
    /* an answer is a few lines: a device, a FIFO or a huge file is not one */
    struct stat st;
    if (stat(path, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_size > LAB_OUTFILE_MAX)) {
        gp_error_set(err, path, 0, 0, "not a small regular file (at most %d bytes)",
                     LAB_OUTFILE_MAX);
        return -1;
    }
    size_t len = 0;
    char *text = gp_read_file(path, &len, err);
    if (!text) return -1;
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    out->path = strdup(path);
    out->lines = calloc(lines, sizeof *out->lines);
    unsigned number = 1;
    const char *start = text;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && text[i] != '\n') continue;
        add_line(out, number++, start, (size_t)(text + i - start));
        start = text + i + 1;
    }
    free(text);
    return 0;
}

void lab_outfile_free(lab_outfile *f)
{
    for (size_t i = 0; i < f->count; i++) {
        free(f->lines[i].text);
        free(f->lines[i].key);
        free(f->lines[i].value);
    }
    free(f->lines);
    free(f->path);
    memset(f, 0, sizeof *f);
}

const lab_line *lab_outfile_find(const lab_outfile *f, const char *key)
{
    for (size_t i = 0; i < f->count; i++)
        if (f->lines[i].key && strcmp(f->lines[i].key, key) == 0) return &f->lines[i];
    return NULL;
}
