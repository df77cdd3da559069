/* time.ParseDuration (Go's src/time/format.go), on int64 nanoseconds. */
#include "kube/duration.h"

#include <stdbool.h>
#include <string.h>

static const struct {
    const char *name;
    int64_t ns;
} UNITS[] = {
    {"ns", 1},
    {"us", 1000},
    {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
    {"\xce\xbcs", 1000}, /* U+03BC Greek mu */
    {"ms", 1000000},
    {"s", 1000000000},
    {"m", 60 * (int64_t)1000000000},
    {"h", 3600 * (int64_t)1000000000},
};

static int invalid(gp_error *err, const char *text)
{
    gp_error_set(err, NULL, 0, 0, "time: invalid duration \"%s\"", text);
    return -1;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int kube_duration_parse(const char *text, int64_t *ns, gp_error *err)
{
    const char *s = text ? text : "";
    bool negative = false;
    if (*s == '-' || *s == '+') negative = *s++ == '-';
    if (strcmp(s, "0") == 0) {
        *ns = 0;
        return 0;
    }
    if (!*s) return invalid(err, text ? text : "");
    /* the total as unsigned, checked against 2^63 (Go's own bound) */
    const uint64_t limit = (uint64_t)1 << 63;
    uint64_t total = 0;
    while (*s) {
        if (!is_digit(*s) && *s != '.') return invalid(err, text);
        uint64_t whole = 0;
        bool digits = false, overflow = false;
        for (; is_digit(*s); s++, digits = true) {
            if (whole > (limit - (uint64_t)(*s - '0')) / 10) overflow = true;
            whole = whole * 10 + (uint64_t)(*s - '0');
        }
        if (overflow) return invalid(err, text);
        /* the fraction: at most 18 digits are kept, as Go's leadingFraction */
        uint64_t frac = 0, scale = 1;
        if (*s == '.') {
            s++;
            for (; is_digit(*s); s++, digits = true)
                if (scale < (uint64_t)1000000000000000000ULL) {
                    frac = frac * 10 + (uint64_t)(*s - '0');
                    scale *= 10;
                }
        }
        if (!digits) return invalid(err, text);
        size_t unit_len = 0;
        while (s[unit_len] && s[unit_len] != '.' && !is_digit(s[unit_len]))
            unit_len++;
        if (unit_len == 0) {
            gp_error_set(err, NULL, 0, 0, "time: missing unit in duration \"%s\"", text);
            return -1;
        }
        int64_t unit = 0;
        for (size_t i = 0; i < sizeof UNITS / sizeof *UNITS && !unit; i++)
            if (strlen(UNITS[i].name) == unit_len && strncmp(UNITS[i].name, s, unit_len) == 0)
                unit = UNITS[i].ns;
        if (!unit) {
            gp_error_set(err, NULL, 0, 0, "time: unknown unit \"%.*s\" in duration \"%s\"",
                         (int)unit_len, s, text);
            return -1;
        }
        s += unit_len;
        if (whole > limit / (uint64_t)unit) return invalid(err, text);
        uint64_t v = whole * (uint64_t)unit;
        /* the fraction's share: frac * unit / scale, in floating point as
         * Go does (float64(f) * (float64(unit) / scale)) */
        v += (uint64_t)((double)frac * ((double)unit / (double)scale));
        if (v > limit) return invalid(err, text);
        total += v;
        if (total > limit) return invalid(err, text);
    }
    if (total == limit && !negative) return invalid(err, text);
    *ns = negative ? -(int64_t)(total - 1) - 1 : (int64_t)total;
    return 0;
}
