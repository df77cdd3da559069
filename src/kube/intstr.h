/* Integers as Kubernetes reads them from text, and IntOrString values.
 *
 * kube_parse_int64 is Go's strconv.ParseInt(s, 10, 64), which is also
 * strconv.Atoi on 64-bit platforms: an optional '+' or '-', then one or more
 * decimal digits and nothing else (no spaces, no "0x"), within int64. Label
 * selectors' Gt and Lt values, the DaemonSet's template generation
 * annotation and IntOrString percentages are read with it.
 *
 * kube_intstr_scaled is intstr.GetScaledValueFromIntOrPercent
 * (k8s.io/apimachinery/pkg/util/intstr/intstr.go, v0.32): an integer is
 * itself; a string must be "<Atoi>%" and is that percentage of `total`,
 * rounded up (math.Ceil) or down (math.Floor). Its errors are the Go texts,
 * which the DaemonSet controller wraps into its own ("invalid value for
 * MaxUnavailable: invalid value for IntOrString: ..."). */
#ifndef GPUOP_KUBE_INTSTR_H
#define GPUOP_KUBE_INTSTR_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

/* False (and *out untouched) when `s` is not a base-10 int64; NULL is not. */
bool kube_parse_int64(const char *s, int64_t *out);

/* `value` is the JSON of the IntOrString: an integer, or a string; NULL and
 * null are Go's nil ("nil value for IntOrString"); another type is neither
 * ("invalid value for IntOrString: invalid type: neither int nor
 * percentage"). A string without '%' is "invalid value for IntOrString:
 * invalid type: string is not a percentage"; one whose number Atoi refuses
 * is "invalid value for IntOrString: invalid value \"x%\": strconv.Atoi:
 * parsing \"x\": invalid syntax". Returns 0, or -1 with `err` set. */
int kube_intstr_scaled(const json_t *value, int64_t total, bool round_up, int64_t *out,
                       gp_error *err);

#endif
