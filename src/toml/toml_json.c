#include "toml/toml_json.h"

#include <inttypes.h>
#include <math.h>

#include "util/json_out.h"

static const char *tag_name(uint8_t type)
{
    switch (type) {
    case TOML_STRING:
        return "string";
    case TOML_INTEGER:
        return "integer";
    case TOML_FLOAT:
        return "float";
    case TOML_BOOL:
        return "bool";
    case TOML_DATETIME:
        return "datetime";
    case TOML_DATETIME_LOCAL:
        return "datetime-local";
    case TOML_DATE_LOCAL:
        return "date-local";
    case TOML_TIME_LOCAL:
        return "time-local";
    default:
        return "unknown";
    }
}

/* The scalar's text as the tagged format wants it. Returns its length. */
static int scalar_text(const toml_value *v, char buf[80])
{
    switch (v->type) {
    case TOML_INTEGER:
        return snprintf(buf, 80, "%" PRId64, v->u.i);
    case TOML_BOOL:
        return snprintf(buf, 80, "%s", v->u.b ? "true" : "false");
    case TOML_FLOAT:
        /* toml-test writes NaN unsigned and floats without TOML's ".0". */
        if (isnan(v->u.f)) return snprintf(buf, 80, "nan");
        return toml_format_float(v->u.f, buf);
    default:
        return toml_format_datetime(v, buf);
    }
}

static void write_value(const toml_value *v, toml_json_style style, FILE *out);

static void write_table(const toml_table *t, toml_json_style style, FILE *out)
{
    putc('{', out);
    size_t n = toml_table_size(t);
    for (size_t i = 0; i < n; i++) {
        const toml_entry *e = toml_table_entry(t, i);
        if (i) putc(',', out);
        gp_json_string(out, e->key, toml_entry_keylen(e));
        putc(':', out);
        write_value(&e->value, style, out);
    }
    putc('}', out);
}

static void write_array(const toml_array *a, toml_json_style style, FILE *out)
{
    putc('[', out);
    size_t n = toml_array_size(a);
    for (size_t i = 0; i < n; i++) {
        if (i) putc(',', out);
        write_value(toml_array_at(a, i), style, out);
    }
    putc(']', out);
}

static void write_plain_scalar(const toml_value *v, FILE *out)
{
    char buf[80];
    int n;
    switch (v->type) {
    case TOML_STRING:
        gp_json_string(out, v->u.s, v->len);
        return;
    case TOML_INTEGER:
        fprintf(out, "%" PRId64, v->u.i);
        return;
    case TOML_BOOL:
        fputs(v->u.b ? "true" : "false", out);
        return;
    case TOML_FLOAT:
        n = toml_format_float(v->u.f, buf);
        if (isfinite(v->u.f))
            fwrite(buf, 1, (size_t)n, out);
        else
            gp_json_string(out, buf, (size_t)n);
        return;
    default:
        n = toml_format_datetime(v, buf);
        gp_json_string(out, buf, (size_t)n);
        return;
    }
}

static void write_value(const toml_value *v, toml_json_style style, FILE *out)
{
    if (v->type == TOML_TABLE) {
        write_table(v->u.table, style, out);
    } else if (v->type == TOML_ARRAY) {
        write_array(v->u.array, style, out);
    } else if (style == TOML_JSON_PLAIN) {
        write_plain_scalar(v, out);
    } else {
        fputs("{\"type\":\"", out);
        fputs(tag_name(v->type), out);
        fputs("\",\"value\":", out);
        if (v->type == TOML_STRING) {
            gp_json_string(out, v->u.s, v->len);
        } else {
            char buf[80];
            int n = scalar_text(v, buf);
            gp_json_string(out, buf, (size_t)n);
        }
        putc('}', out);
    }
}

int toml_write_json(const toml_value *v, toml_json_style style, FILE *out)
{
    write_value(v, style, out);
    return ferror(out) ? -1 : 0;
}
