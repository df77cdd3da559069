#include "kube/intstr.h"

#include <stdio.h>
#include <string.h>

__extension__ typedef __int128 i128;

/* Quoted texts are cut short: a value can be as long as a request body. */
#define SHOWN 64

bool kube_parse_int64(const char *s, int64_t *out)
{
    if (!s) return false;
    bool neg = *s == '-';
    if (*s == '-' || *s == '+') s++;
    if (!*s) return false;
    uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (limit - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* strconv.Atoi's complaint about `number`: a syntax error, or a number of
 * digits that does not fit. */
static const char *atoi_error(const char *number)
{
    const char *p = number + (*number == '+' || *number == '-');
    if (!*p) return "invalid syntax";
    for (; *p; p++)
        if (*p < '0' || *p > '9') return "invalid syntax";
    return "value out of range";
}

static int percent_of(const char *text, int64_t total, bool round_up, int64_t *out, gp_error *err)
{
    size_t len = strlen(text);
    if (len == 0 || text[len - 1] != '%') {
        gp_error_set(err, NULL, 0, 0, "invalid value for IntOrString: %s",
                     "invalid type: string is not a percentage");
        return -1;
    }
    char number[32];
    int64_t pct;
    bool fits = len - 1 < sizeof number;
    if (fits) {
        memcpy(number, text, len - 1);
        number[len - 1] = '\0';
    }
    if (!fits || !kube_parse_int64(number, &pct)) {
        char why[2 * SHOWN + 80];
        snprintf(why, sizeof why, "invalid value \"%.*s\": strconv.Atoi: parsing \"%.*s\": %s",
                 SHOWN, text, SHOWN, fits ? number : text,
                 fits ? atoi_error(number) : "value out of range");
        gp_error_set(err, NULL, 0, 0, "invalid value for IntOrString: %s", why);
        return -1;
    }
    /* math.Ceil / math.Floor of pct * total / 100, exactly: C's division
     * truncates toward zero, so the quotient is moved by one where that is
     * not the rounding asked for. */
    i128 x = (i128)pct * total, q = x / 100, r = x % 100;
    if (r != 0 && round_up && x > 0) q++;
    if (r != 0 && !round_up && x < 0) q--;
    if (q > INT64_MAX || q < INT64_MIN) {
        gp_error_set(err, NULL, 0, 0, "invalid value for IntOrString: %s",
                     "the percentage of the total is out of range");
        return -1;
    }
    *out = (int64_t)q;
    return 0;
}

int kube_intstr_scaled(const json_t *value, int64_t total, bool round_up, int64_t *out,
                       gp_error *err)
{
    if (!value || json_is_null(value)) {
        gp_error_set(err, NULL, 0, 0, "nil value for IntOrString");
        return -1;
    }
    if (json_is_integer(value)) {
        *out = (int64_t)json_integer_value(value);
        return 0;
    }
    if (!json_is_string(value)) {
        gp_error_set(err, NULL, 0, 0, "invalid value for IntOrString: %s",
                     "invalid type: neither int nor percentage");
        return -1;
    }
    return percent_of(json_string_value(value), total, round_up, out, err);
}
