/* metav1.Time and metav1.MicroTime decode with Go's time.Parse and the
 * layouts RFC3339 and RFC3339Micro; a text that does not parse fails the
 * whole body with time.Parse's error. This walks the two layouts as Go's
 * Parse (src/time/format.go) walks any layout, element by element, so the
 * error names the same element and the same rest of the text. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/decode_internal.h"
#include "apiserver/strategy_internal.h"
#include "util/buf.h"

#define RFC3339       "2006-01-02T15:04:05Z07:00"
#define RFC3339_MICRO "2006-01-02T15:04:05.000000Z07:00"

typedef enum elem { YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, MICROS, ZONE, END } elem;

typedef struct chunk {
    const char *prefix; /* the literal before the element */
    const char *text;   /* the element as the layout writes it */
    elem e;
} chunk;

static const chunk rfc3339[] = {{"", "2006", YEAR},   {"-", "01", MONTH},  {"-", "02", DAY},
                                {"T", "15", HOUR},    {":", "04", MINUTE}, {":", "05", SECOND},
                                {"", "Z07:00", ZONE}, {"", "", END}};
static const chunk rfc3339_micro[] = {
    {"", "2006", YEAR},      {"-", "01", MONTH},   {"-", "02", DAY},
    {"T", "15", HOUR},       {":", "04", MINUTE},  {":", "05", SECOND},
    {"", ".000000", MICROS}, {"", "Z07:00", ZONE}, {"", "", END}};

static bool digit(const char *s, size_t i)
{
    return strlen(s) > i && s[i] >= '0' && s[i] <= '9';
}

/* Go's getnum: one or two digits (two when fixed). */
static bool getnum(const char **s, bool fixed, int *out)
{
    if (!digit(*s, 0)) return false;
    if (!digit(*s, 1)) {
        if (fixed) return false;
        *out = (*s)[0] - '0';
        *s += 1;
        return true;
    }
    *out = ((*s)[0] - '0') * 10 + ((*s)[1] - '0');
    *s += 2;
    return true;
}

static char *parse_error(const char *value, const char *layout, const char *value_elem,
                         const char *layout_elem, const char *message)
{
    gp_buf b = {0};
    gp_buf_add(&b, "parsing time ");
    as_quote(&b, value);
    if (message) {
        gp_buf_add(&b, message);
    } else {
        gp_buf_add(&b, " as ");
        as_quote(&b, layout);
        gp_buf_add(&b, ": cannot parse ");
        as_quote(&b, value_elem);
        gp_buf_add(&b, " as ");
        as_quote(&b, layout_elem);
    }
    return gp_buf_take(&b);
}

static char *range_error(const char *value, const char *what)
{
    char msg[80];
    snprintf(msg, sizeof msg, ": %s out of range", what);
    return parse_error(value, NULL, NULL, NULL, msg);
}

static int days_in(int month, int year)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month == 2 && year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) return 29;
    return days[month - 1];
}

static bool fraction(const char **s, size_t n)
{
    if (**s != '.' && **s != ',') return false;
    for (size_t i = 1; i < n; i++)
        if (!digit(*s, i)) return false;
    *s += n;
    return true;
}

/* One element; false when it does not parse (*range names a value out of
 * range instead). */
static bool parse_elem(elem e, const char **s, int *num, const char **range, elem next)
{
    switch (e) {
    case YEAR:
        if (strlen(*s) < 4) return false;
        for (int i = 0; i < 4; i++)
            if (!digit(*s, (size_t)i)) return false;
        *num = atoi(*s);
        *s += 4;
        return true;
    case MONTH:
        if (!getnum(s, true, num)) return false;
        if (*num <= 0 || *num > 12) *range = "month";
        return true;
    case DAY:
        return getnum(s, true, num);
    case HOUR:
        if (!getnum(s, false, num)) return false;
        if (*num >= 24) *range = "hour";
        return true;
    case MINUTE:
        if (!getnum(s, true, num)) return false;
        if (*num >= 60) *range = "minute";
        return true;
    case SECOND:
        if (!getnum(s, true, num)) return false;
        if (*num >= 60) {
            *range = "second";
            return true;
        }
        /* a fraction the layout does not have is read all the same */
        if (next != MICROS && (**s == '.' || **s == ',') && digit(*s, 1)) {
            size_t n = 2;
            while (digit(*s, n))
                n++;
            *s += n;
        }
        return true;
    case MICROS:
        return strlen(*s) >= 7 && fraction(s, 7);
    case ZONE: {
        if (**s == 'Z') {
            *s += 1;
            return true;
        }
        const char *z = *s;
        if (strlen(z) < 6 || z[3] != ':') return false;
        const char *h = z + 1, *m = z + 4;
        int hr, mm;
        char hh[3] = {h[0], h[1], 0}, mi[3] = {m[0], m[1], 0};
        const char *hp = hh, *mp = mi;
        bool ok = getnum(&hp, true, &hr) && getnum(&mp, true, &mm);
        *s += 6;
        if (ok && hr > 24) *range = "time zone offset hour";
        if (ok && mm > 60) *range = "time zone offset minute";
        return ok && (z[0] == '+' || z[0] == '-');
    }
    case END:
        return true;
    }
    return false;
}

char *as_decode_time_error(const char *value, bool micro)
{
    const chunk *layout = micro ? rfc3339_micro : rfc3339;
    const char *layout_text = micro ? RFC3339_MICRO : RFC3339;
    const char *s = value;
    int year = 0, month = 1, day = 1;
    for (size_t i = 0;; i++) {
        const chunk *c = &layout[i];
        /* the literal before the element, byte by byte */
        for (const char *p = c->prefix; *p; p++, s++)
            if (*s != *p) return parse_error(value, layout_text, s, c->prefix, NULL);
        if (c->e == END) {
            if (!*s) break;
            gp_buf b = {0};
            gp_buf_add(&b, ": extra text: ");
            as_quote(&b, s);
            char *msg = gp_buf_take(&b);
            char *err = parse_error(value, NULL, NULL, NULL, msg ? msg : "");
            free(msg);
            return err;
        }
        const char *hold = s, *range = NULL;
        int num = 0;
        if (!parse_elem(c->e, &s, &num, &range, layout[i + 1].e))
            return parse_error(value, layout_text, hold, c->text, NULL);
        if (range) return range_error(value, range);
        if (c->e == YEAR) year = num;
        if (c->e == MONTH) month = num;
        if (c->e == DAY) day = num;
    }
    if (day < 1 || day > days_in(month, year)) return range_error(value, "day");
    return NULL;
}
