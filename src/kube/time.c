#include "kube/time.h"

#include <stdio.h>
#include <string.h>

int64_t kube_days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void kube_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static bool fixed_digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

static int days_in_month(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/* ".123" or ",123" after the seconds: Go's time.Parse takes any number of
 * digits there and keeps the first nine. Returns the characters read. */
static size_t parse_fraction(const char *s, int32_t *nsec)
{
    *nsec = 0;
    if ((s[0] != '.' && s[0] != ',') || s[1] < '0' || s[1] > '9') return 0;
    size_t i = 1;
    int32_t scale = 100000000;
    for (; s[i] >= '0' && s[i] <= '9'; i++) {
        *nsec += (s[i] - '0') * scale;
        scale /= 10;
    }
    return i;
}

/* "Z" or "+hh:mm" / "-hh:mm", and nothing after it. */
static bool parse_zone(const char *s, int *offset_sec)
{
    *offset_sec = 0;
    if (s[0] == 'Z') return s[1] == '\0';
    if (s[0] != '+' && s[0] != '-') return false;
    int hh, mm;
    if (!fixed_digits(s + 1, 2, &hh) || s[3] != ':' || !fixed_digits(s + 4, 2, &mm) ||
        s[6] != '\0' || hh > 23 || mm > 59)
        return false;
    *offset_sec = (hh * 3600 + mm * 60) * (s[0] == '-' ? -1 : 1);
    return true;
}

bool kube_time_parse(const char *s, kube_time *t)
{
    int y, mo, d, h, mi, se, offset;
    if (!s || strlen(s) < 20 || !fixed_digits(s, 4, &y) || s[4] != '-' ||
        !fixed_digits(s + 5, 2, &mo) || s[7] != '-' || !fixed_digits(s + 8, 2, &d) ||
        s[10] != 'T' || !fixed_digits(s + 11, 2, &h) || s[13] != ':' ||
        !fixed_digits(s + 14, 2, &mi) || s[16] != ':' || !fixed_digits(s + 17, 2, &se))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 59)
        return false;
    int32_t nsec;
    size_t frac = parse_fraction(s + 19, &nsec);
    if (!parse_zone(s + 19 + frac, &offset)) return false;
    t->sec = kube_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offset;
    t->nsec = nsec;
    t->set = true;
    return true;
}

kube_time kube_time_of(const json_t *v)
{
    kube_time t = {0};
    if (!json_is_string(v) || !kube_time_parse(json_string_value(v), &t)) return (kube_time){0};
    if (t.sec == kube_days_from_civil(1, 1, 1) * 86400 && t.nsec == 0) return (kube_time){0};
    return t;
}

bool kube_time_before(kube_time a, kube_time b)
{
    if (!b.set) return false;
    if (!a.set) return true;
    return a.sec < b.sec || (a.sec == b.sec && a.nsec < b.nsec);
}

int kube_time_parse_seconds(const char *text, time_t *out)
{
    kube_time t;
    if (!kube_time_parse(text, &t) || (int64_t)(time_t)t.sec != t.sec) return -1;
    *out = (time_t)t.sec;
    return 0;
}

void kube_time_format(int64_t sec, char buf[KUBE_TIME_TEXT_MAX])
{
    int64_t days = (sec >= 0 ? sec : sec - 86399) / 86400;
    int64_t of_day = sec - days * 86400;
    int64_t year;
    int month, day;
    kube_civil_from_days(days, &year, &month, &day);
    snprintf(buf, KUBE_TIME_TEXT_MAX, "%04lld-%02d-%02dT%02d:%02d:%02dZ", (long long)year, month,
             day, (int)(of_day / 3600), (int)(of_day / 60 % 60), (int)(of_day % 60));
}
