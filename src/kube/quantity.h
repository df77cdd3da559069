/* Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource).
 *
 * A quantity is "64Gi", "500m", "16", "1.5Gi", "1e3": a decimal number with an
 * optional sign and fraction, then a suffix that is binary SI (Ki Mi Gi Ti Pi
 * Ei), decimal SI (n u m "" k M G T P E) or a decimal exponent (e3, E-6).
 *
 * What is kept, and why it is exact enough: like apimachinery, a parsed value
 * is rounded up (away from zero) to a multiple of 1n (10^-9), and Kubernetes
 * never stores more than 2^63-1 whole units. So a value is held as whole units
 * plus nanos: 64Gi, 32Gi, 500m, 0.5, 1e3, 1.5Gi and 100M all compare exactly,
 * and sums and products are exact until they leave that range.
 *
 * Deviations from apimachinery, on purpose:
 *   - a value beyond +-(2^63-1) units is an error; apimachinery silently caps
 *     DecimalSI and BinarySI values at 2^63-1 ("9Ei" becomes
 *     "9223372036854775807") and keeps DecimalExponent values of any size;
 *   - a number needs at least one digit: apimachinery reads "-", "+", "." and
 *     "-." as 0, which no client sends on purpose;
 *   - arithmetic that leaves the range fails instead of growing an inf.Dec.
 * Everything else (the grammar, the rounding, the canonical text) follows
 * quantity.go and its tests; see kube_quantity_format. */
#ifndef GPUOP_KUBE_QUANTITY_H
#define GPUOP_KUBE_QUANTITY_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

/* How the quantity was written, which decides how it is written back. */
typedef enum kube_quantity_format_class {
    KUBE_QUANTITY_DECIMAL_SI = 0,   /* "", n u m k M G T P E: also what "0" is */
    KUBE_QUANTITY_BINARY_SI,        /* Ki Mi Gi Ti Pi Ei */
    KUBE_QUANTITY_DECIMAL_EXPONENT, /* e3, E-6 */
} kube_quantity_format_class;

/* The value is units + nanos / 10^9. nanos has the sign of units (or of the
 * value, when units is 0) and |nanos| < 10^9; |value| <= 2^63-1. A
 * zero-initialised kube_quantity is the DecimalSI zero, "0". */
typedef struct kube_quantity {
    int64_t units;
    int32_t nanos;
    kube_quantity_format_class format;
} kube_quantity;

/* The largest text kube_quantity_format writes, with its NUL ("-9223372036854775806999999999n"
 * and "e-9" forms need 32). */
#define KUBE_QUANTITY_FORMAT_MAX 48

/* Parses `text` (NUL-terminated, no surrounding spaces: apimachinery rejects
 * " 1" and "1 "). On failure returns -1 and names the text in `err`. */
int kube_quantity_parse(const char *text, kube_quantity *q, gp_error *err);

/* <0, 0 or >0 as a is less than, equal to or greater than b; the format does
 * not matter ("1Gi" == "1024Mi", "1e3" == "1k"). */
int kube_quantity_cmp(const kube_quantity *a, const kube_quantity *b);

bool kube_quantity_is_zero(const kube_quantity *q);

/* out = a + b, a - b, a * n. The result keeps a's format, or b's when a is
 * zero (apimachinery's Add and Sub). -1 with `err` set when the result leaves
 * the range; `out` may be a or b. */
int kube_quantity_add(const kube_quantity *a, const kube_quantity *b, kube_quantity *out,
                      gp_error *err);
int kube_quantity_sub(const kube_quantity *a, const kube_quantity *b, kube_quantity *out,
                      gp_error *err);
int kube_quantity_mul_int(const kube_quantity *a, int64_t n, kube_quantity *out, gp_error *err);

/* The value in thousandths (MilliValue: cpu "500m" -> 500), rounded away from
 * zero like apimachinery's ScaledValue. -1 when it does not fit in int64. */
int kube_quantity_to_milli(const kube_quantity *q, int64_t *milli, gp_error *err);

/* The value in whole units (Value: memory "1Gi" -> 1073741824, "1500m" -> 2),
 * rounded away from zero. Always fits. */
int64_t kube_quantity_to_units(const kube_quantity *q);

/* Rounds q up (away from zero) to a multiple of 1m, as the API server does to
 * every ResourceList value: "0.30000000000000004" becomes "301m". */
void kube_quantity_round_up_milli(kube_quantity *q);

/* Writes the canonical text the API server returns (CanonicalizeBytes) into
 * buf (KUBE_QUANTITY_FORMAT_MAX bytes) and returns its length:
 *   - zero is "0";
 *   - BinarySI stays binary when the value is a whole number of units and
 *     |value| >= 1024, with the largest suffix that divides it exactly
 *     ("64Gi", "1536Mi" for 1.5Gi, "1025"); otherwise it is written as
 *     DecimalSI (".5Ki" -> "512", "0.9Gi" -> "966367641600m");
 *   - DecimalSI: trailing zeros become the exponent, which is then lowered to
 *     a multiple of 3 and written as n u m "" k M G T P E ("1000m" -> "1",
 *     "0.5" -> "500m", "1500" -> "1500", "100M" -> "100M");
 *   - DecimalExponent: the same mantissa, written as "e<N>" ("1e3" -> "1e3",
 *     "0.5e0" -> "500e-3", "1.5e0" -> "1500e-3", "1e0" -> "1").
 * kube_quantity_parse of the result gives an equal quantity. */
int kube_quantity_format(const kube_quantity *q, char buf[KUBE_QUANTITY_FORMAT_MAX]);

#endif
