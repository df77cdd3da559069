/* Times as Kubernetes objects carry them: metav1.Time and MicroTime, RFC 3339
 * text in JSON (k8s.io/apimachinery/pkg/apis/meta/v1/time.go, micro_time.go).
 *
 * Reading follows Go's time.Parse(time.RFC3339, ...), which is how metav1.Time
 * decodes JSON: "2025-01-02T03:04:05Z", an optional fraction of any length
 * after '.' or ',' (nine digits kept), and "Z" or "+hh:mm" / "-hh:mm"; the
 * date must exist (no February 30th), hours 0-23, seconds 0-59. Writing is
 * metav1.Time's MarshalJSON: UTC to the second, "2025-01-02T03:04:05Z".
 *
 * Dates are proleptic Gregorian over days since 1970-01-01 (H. Hinnant's
 * days_from_civil and civil_from_days), so no time_t range, gmtime or time
 * zone is involved. */
#ifndef GPUOP_KUBE_TIME_H
#define GPUOP_KUBE_TIME_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* A point in time; `set` is false for Go's zero time (IsZero). */
typedef struct kube_time {
    bool set;
    int64_t sec; /* since the epoch, UTC */
    int32_t nsec;
} kube_time;

/* time.Parse(time.RFC3339, text). False (and *out untouched) when the text
 * is not one; a NULL text is not one. */
bool kube_time_parse(const char *text, kube_time *out);

/* A metav1.Time member as the decoder leaves it: unset for an absent, null
 * or unreadable value and for 0001-01-01T00:00:00Z, Go's zero time. */
kube_time kube_time_of(const json_t *v);

/* Time.Before, the zero time before every other. */
bool kube_time_before(kube_time a, kube_time b);

/* The whole seconds of an RFC 3339 text: 0, or -1 when it does not parse
 * (or does not fit in time_t). */
int kube_time_parse_seconds(const char *text, time_t *out);

/* "YYYY-MM-DDTHH:MM:SSZ" and its NUL; room for any year of int64 seconds. */
#define KUBE_TIME_TEXT_MAX 32

/* metav1.Time's JSON text of `sec` seconds since the epoch. */
void kube_time_format(int64_t sec, char buf[KUBE_TIME_TEXT_MAX]);

/* Days since 1970-01-01 of a date, and back. */
int64_t kube_days_from_civil(int64_t year, int month, int day);
void kube_civil_from_days(int64_t days, int64_t *year, int *month, int *day);

#endif
