/* Structural equality of parsed values, e.g. for checking that emitting and
 * parsing again gives back the same tree. */
#include "toml/toml.h"

#include <math.h>
#include <string.h>

static bool table_equal(const toml_table *a, const toml_table *b)
{
    size_t n = toml_table_size(a);
    if (n != toml_table_size(b)) return false;
    /* Keys are unique within a table, so equal sizes and every key of `a`
     * present in `b` means the same key set. */
    for (size_t i = 0; i < n; i++) {
        const toml_entry *ea = toml_table_entry(a, i);
        const toml_entry *eb = toml_table_find(b, ea->key, toml_entry_keylen(ea));
        if (!eb || !toml_value_equal(&ea->value, &eb->value)) return false;
    }
    return true;
}

static bool array_equal(const toml_array *a, const toml_array *b)
{
    size_t n = toml_array_size(a);
    if (n != toml_array_size(b)) return false;
    if (toml_array_is_table_array(a) != toml_array_is_table_array(b)) return false;
    for (size_t i = 0; i < n; i++)
        if (!toml_value_equal(toml_array_at(a, i), toml_array_at(b, i))) return false;
    return true;
}

/* NaN != NaN under ==, and 0.0 == -0.0; neither suits a round-trip check,
 * which wants "the same number came back". Every NaN counts as one value
 * because TOML has just one "nan" (the sign of "-nan" is not kept apart). */
static bool float_equal(double a, double b)
{
    if (isnan(a) && isnan(b)) return true;
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Trailing zeros add no precision: .5 and .500 are the same instant. */
static size_t fraction_digits(const toml_datetime *dt)
{
    if (!dt->fraction) return 0;
    size_t n = dt->fraction_len;
    while (n > 0 && dt->fraction[n - 1] == '0')
        n--;
    return n;
}

static bool datetime_equal(const toml_datetime *a, const toml_datetime *b)
{
    if (a->year != b->year || a->month != b->month || a->day != b->day) return false;
    if (a->hour != b->hour || a->minute != b->minute || a->second != b->second) return false;
    if (a->offset_is_z != b->offset_is_z || a->offset_minutes != b->offset_minutes) return false;
    if (a->nanosecond != b->nanosecond) return false;
    size_t na = fraction_digits(a), nb = fraction_digits(b);
    return na == nb && (na == 0 || memcmp(a->fraction, b->fraction, na) == 0);
}

bool toml_value_equal(const toml_value *a, const toml_value *b)
{
    if (a == b) return true;
    if (!a || !b || a->type != b->type) return false;
    switch (a->type) {
    case TOML_TABLE:
        return table_equal(a->u.table, b->u.table);
    case TOML_ARRAY:
        return array_equal(a->u.array, b->u.array);
    case TOML_STRING:
        return a->len == b->len && memcmp(a->u.s, b->u.s, a->len) == 0;
    case TOML_INTEGER:
        return a->u.i == b->u.i;
    case TOML_FLOAT:
        return float_equal(a->u.f, b->u.f);
    case TOML_BOOL:
        return a->u.b == b->u.b;
    case TOML_DATETIME:
    case TOML_DATETIME_LOCAL:
    case TOML_DATE_LOCAL:
    case TOML_TIME_LOCAL:
        if (a->u.dt == b->u.dt) return true;
        if (!a->u.dt || !b->u.dt) return false;
        return datetime_equal(a->u.dt, b->u.dt);
    default:
        return false;
    }
}
