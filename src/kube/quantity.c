#include "kube/quantity.h"

#include <stdlib.h>
#include <string.h>

/* Values are computed in nanos. (2^63-1) * 10^9 needs 93 bits, and a product
 * of two in-range operands is checked before it is formed, so 128 bits never
 * wrap. __int128 is a GCC/Clang extension; it stays inside this file. */
__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

#define NANO      1000000000
#define MAX_NANOS ((i128)INT64_MAX * NANO)

/* The error texts name the input; a fuzzer's 4 KiB of noise is cut short. */
#define TEXT_SHOWN 80

static i128 to_nanos(const kube_quantity *q)
{
    return (i128)q->units * NANO + q->nanos;
}

static i128 abs128(i128 v)
{
    return v < 0 ? -v : v;
}

static int from_nanos(i128 n, kube_quantity_format_class format, kube_quantity *out)
{
    if (abs128(n) > MAX_NANOS) return -1;
    out->units = (int64_t)(n / NANO);
    out->nanos = (int32_t)(n % NANO); /* C truncates: same sign as units */
    out->format = format;
    return 0;
}

/* ---- parsing ---- */

/* The pieces of "<sign><digits>.<digits><suffix>". */
struct scan {
    bool negative;
    const char *whole;
    size_t whole_len;
    const char *frac;
    size_t frac_len;
    const char *suffix;
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static const char *skip_digits(const char *p)
{
    while (is_digit(*p))
        p++;
    return p;
}

/* The shape apimachinery's parseQuantityString accepts: a number, then
 * letters from "eEinumkKMGTP", an optional sign and digits, and nothing else.
 * Whether the suffix means anything is decided later. */
static int scan_text(const char *text, struct scan *s)
{
    const char *p = text;
    s->negative = *p == '-';
    if (*p == '-' || *p == '+') p++;
    s->whole = p;
    p = skip_digits(p);
    s->whole_len = (size_t)(p - s->whole);
    s->frac = p;
    s->frac_len = 0;
    if (*p == '.') {
        s->frac = ++p;
        p = skip_digits(p);
        s->frac_len = (size_t)(p - s->frac);
    }
    if (s->whole_len + s->frac_len == 0) return -1;
    s->suffix = p;
    while (*p && strchr("eEinumkKMGTP", *p))
        p++;
    if (*p == '-' || *p == '+') p++;
    p = skip_digits(p);
    return *p == '\0' ? 0 : -1;
}

/* "e-3" -> -3, as Go's strconv.ParseInt(s, 10, 32): a sign, then digits. */
static bool parse_exponent(const char *s, int32_t *out)
{
    bool negative = *s == '-';
    if (*s == '-' || *s == '+') s++;
    if (!*s) return false;
    int64_t v = 0;
    for (; *s; s++) {
        if (!is_digit(*s)) return false;
        v = v * 10 + (*s - '0');
        if (v > (int64_t)INT32_MAX + 1) return false;
    }
    if (negative) v = -v;
    if (v < INT32_MIN || v > INT32_MAX) return false;
    *out = (int32_t)v;
    return true;
}

struct suffix_meaning {
    int base; /* 10 or 2 */
    int32_t exponent;
    kube_quantity_format_class format;
};

static const char *const decimal_suffixes[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
static const char *const binary_suffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

static bool interpret_suffix(const char *s, struct suffix_meaning *m)
{
    for (int i = 0; i < 10; i++) {
        if (strcmp(s, decimal_suffixes[i]) == 0) {
            *m = (struct suffix_meaning){10, (int32_t)(3 * i - 9), KUBE_QUANTITY_DECIMAL_SI};
            return true;
        }
    }
    for (int i = 1; i < 7; i++) {
        if (strcmp(s, binary_suffixes[i]) == 0) {
            *m = (struct suffix_meaning){2, (int32_t)(10 * i), KUBE_QUANTITY_BINARY_SI};
            return true;
        }
    }
    /* A lone "E" is exa (above); a lone "e" means nothing. */
    if ((s[0] == 'e' || s[0] == 'E') && s[1] != '\0') {
        m->base = 10;
        m->format = KUBE_QUANTITY_DECIMAL_EXPONENT;
        return parse_exponent(s + 1, &m->exponent);
    }
    return false;
}

/* A decimal number as its digits (values 0-9) times 10^exp10. `digits` has
 * room below `start` so that a binary suffix can grow the number in place. */
struct decimal {
    unsigned char *digits;
    size_t start, end;
    int64_t exp10;
};

/* 2^60 < 10^19: a binary suffix adds at most 19 digits in front. */
#define HEADROOM 20

static int decimal_from_scan(const struct scan *s, struct decimal *d)
{
    size_t n = s->whole_len + s->frac_len;
    d->digits = malloc(n + HEADROOM);
    if (!d->digits) return -1;
    d->start = HEADROOM;
    d->end = HEADROOM + n;
    for (size_t i = 0; i < s->whole_len; i++)
        d->digits[HEADROOM + i] = (unsigned char)(s->whole[i] - '0');
    for (size_t i = 0; i < s->frac_len; i++)
        d->digits[HEADROOM + s->whole_len + i] = (unsigned char)(s->frac[i] - '0');
    d->exp10 = -(int64_t)s->frac_len;
    while (d->start < d->end && d->digits[d->start] == 0)
        d->start++;
    return 0;
}

/* Multiplies the digits by 2^bits (bits <= 60), from the last digit up. */
static void decimal_shift_binary(struct decimal *d, int32_t bits)
{
    uint64_t factor = (uint64_t)1 << bits;
    u128 carry = 0;
    for (size_t i = d->end; i > d->start; i--) {
        carry += (u128)d->digits[i - 1] * factor;
        d->digits[i - 1] = (unsigned char)(carry % 10);
        carry /= 10;
    }
    while (carry) {
        d->digits[--d->start] = (unsigned char)(carry % 10);
        carry /= 10;
    }
}

/* The magnitude in nanos, rounded up (away from zero) like apimachinery's
 * inf.RoundUp at scale 9; -1 when it is beyond MAX_NANOS. */
static int decimal_to_nanos(const struct decimal *d, i128 *out)
{
    size_t n = d->end - d->start;
    *out = 0;
    if (n == 0) return 0;
    /* The leading digit's power of ten: 10^19 > 2^63-1 already. */
    if (d->exp10 + (int64_t)n - 1 > 18) return -1;
    i128 acc = 0;
    bool below_nano = false;
    for (size_t i = 0; i < n; i++) {
        int64_t power = d->exp10 + (int64_t)(n - 1 - i);
        unsigned char digit = d->digits[d->start + i];
        if (power >= -9)
            acc = acc * 10 + digit;
        else if (digit != 0)
            below_nano = true;
    }
    for (int64_t p = d->exp10; p > -9; p--)
        acc *= 10;
    if (below_nano) acc += 1;
    if (acc > MAX_NANOS) return -1;
    *out = acc;
    return 0;
}

int kube_quantity_parse(const char *text, kube_quantity *q, gp_error *err)
{
    if (!text) text = "";
    struct scan s;
    if (scan_text(text, &s) < 0) {
        gp_error_set(err, NULL, 0, 0,
                     "invalid quantity '%.*s': quantities must match the regular expression "
                     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                     TEXT_SHOWN, text);
        return -1;
    }
    struct suffix_meaning m;
    if (!interpret_suffix(s.suffix, &m)) {
        gp_error_set(err, NULL, 0, 0, "invalid quantity '%.*s': unable to parse quantity's suffix",
                     TEXT_SHOWN, text);
        return -1;
    }
    struct decimal d;
    if (decimal_from_scan(&s, &d) < 0) {
        gp_error_set(err, NULL, 0, 0, "out of memory");
        return -1;
    }
    if (m.base == 2)
        decimal_shift_binary(&d, m.exponent);
    else
        d.exp10 += m.exponent;
    i128 nanos = 0;
    int rc = decimal_to_nanos(&d, &nanos);
    free(d.digits);
    if (rc < 0) {
        gp_error_set(err, NULL, 0, 0,
                     "invalid quantity '%.*s': out of range (the largest is 9223372036854775807)",
                     TEXT_SHOWN, text);
        return -1;
    }
    from_nanos(s.negative ? -nanos : nanos, m.format, q);
    return 0;
}

/* ---- comparison and arithmetic ---- */

int kube_quantity_cmp(const kube_quantity *a, const kube_quantity *b)
{
    i128 x = to_nanos(a), y = to_nanos(b);
    return (x > y) - (x < y);
}

bool kube_quantity_is_zero(const kube_quantity *q)
{
    return q->units == 0 && q->nanos == 0;
}

static int range_error(gp_error *err)
{
    gp_error_set(err, NULL, 0, 0,
                 "quantity arithmetic out of range (the largest is 9223372036854775807)");
    return -1;
}

/* b is NULL for a product: only a sum takes the other operand's format. */
static int result(i128 n, const kube_quantity *a, const kube_quantity *b, kube_quantity *out,
                  gp_error *err)
{
    kube_quantity_format_class format = kube_quantity_is_zero(a) && b ? b->format : a->format;
    if (from_nanos(n, format, out) < 0) return range_error(err);
    return 0;
}

int kube_quantity_add(const kube_quantity *a, const kube_quantity *b, kube_quantity *out,
                      gp_error *err)
{
    return result(to_nanos(a) + to_nanos(b), a, b, out, err);
}

int kube_quantity_sub(const kube_quantity *a, const kube_quantity *b, kube_quantity *out,
                      gp_error *err)
{
    return result(to_nanos(a) - to_nanos(b), a, b, out, err);
}

int kube_quantity_mul_int(const kube_quantity *a, int64_t n, kube_quantity *out, gp_error *err)
{
    i128 x = to_nanos(a);
    /* Both factors are below 2^94 and 2^64, so check before multiplying. */
    if (n != 0 && abs128(x) > MAX_NANOS / abs128((i128)n)) return range_error(err);
    return result(x * n, a, NULL, out, err);
}

/* n / unit, rounded away from zero. */
static i128 divide_up(i128 n, i128 unit)
{
    i128 q = n / unit;
    if (n % unit != 0) q += n < 0 ? -1 : 1;
    return q;
}

int kube_quantity_to_milli(const kube_quantity *q, int64_t *milli, gp_error *err)
{
    i128 m = divide_up(to_nanos(q), 1000000);
    if (m > INT64_MAX || m < INT64_MIN) {
        gp_error_set(err, NULL, 0, 0, "quantity too large for a milli value");
        return -1;
    }
    *milli = (int64_t)m;
    return 0;
}

int64_t kube_quantity_to_units(const kube_quantity *q)
{
    /* |value| <= 2^63-1 and that bound is whole, so rounding up stays in it. */
    return (int64_t)divide_up(to_nanos(q), NANO);
}

void kube_quantity_round_up_milli(kube_quantity *q)
{
    from_nanos(divide_up(to_nanos(q), 1000000) * 1000000, q->format, q);
}

/* ---- canonical text ---- */

/* Writes v in decimal at buf; returns the length. */
static int write_i128(char *buf, i128 v)
{
    char tmp[48];
    int n = 0;
    u128 u = v < 0 ? (u128)0 - (u128)v : (u128)v;
    do {
        tmp[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    int len = 0;
    if (v < 0) buf[len++] = '-';
    while (n > 0)
        buf[len++] = tmp[--n];
    buf[len] = '\0';
    return len;
}

static int append(char *buf, int len, const char *s)
{
    size_t n = strlen(s);
    memcpy(buf + len, s, n + 1);
    return len + (int)n;
}

/* BinarySI with the largest suffix that divides the whole units exactly
 * (AsCanonicalBase1024Bytes). */
static int format_binary(int64_t units, char *buf)
{
    int k = 0;
    while ((units >= 1024 || units <= -1024) && units % 1024 == 0) {
        units /= 1024;
        k++;
    }
    return append(buf, write_i128(buf, units), binary_suffixes[k]);
}

/* DecimalSI or DecimalExponent (AsCanonicalBytes): trailing zeros move into
 * the exponent, which is then lowered to a multiple of 3. */
static int format_decimal(i128 nanos, kube_quantity_format_class format, char *buf)
{
    i128 m = nanos;
    int e = -9;
    while (m % 10 == 0) {
        m /= 10;
        e++;
    }
    int r = e % 3;
    if (r == 1 || r == -2) {
        m *= 10;
        e -= 1;
    } else if (r == 2 || r == -1) {
        m *= 100;
        e -= 2;
    }
    int len = write_i128(buf, m);
    if (format != KUBE_QUANTITY_DECIMAL_EXPONENT)
        return append(buf, len, decimal_suffixes[(e + 9) / 3]);
    if (e == 0) return len;
    buf[len++] = 'e';
    return len + write_i128(buf + len, e);
}

int kube_quantity_format(const kube_quantity *q, char buf[KUBE_QUANTITY_FORMAT_MAX])
{
    i128 n = to_nanos(q);
    if (n == 0) return append(buf, 0, "0");
    /* Binary only when that loses nothing: small or fractional values would
     * need rounding, so apimachinery writes them as DecimalSI. */
    if (q->format == KUBE_QUANTITY_BINARY_SI && abs128(n) >= (i128)1024 * NANO && n % NANO == 0)
        return format_binary(q->units, buf);
    return format_decimal(n, q->format, buf);
}
