/*
 * gr_time.c — RFC 3339 parse/format (Go time.RFC3339 rules) and clocks.
 */
#include "gr_time.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define NS_PER_SEC INT64_C(1000000000)

static const char EXPECTED[] = "use YYYY-MM-DDTHH:MM:SSZ or an offset like +02:00, "
                               "e.g. \"2006-01-02T15:04:05Z\"";

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;                                   /* [0, 399] */
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* [0, 365] */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           /* [0, 146096] */
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
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

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in_month(int64_t y, int m)
{
    static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dim[m - 1];
}

/* n decimal digits at s[i]; false when any is not a digit. */
static bool digits(const char *s, size_t len, size_t i, size_t n, int *out)
{
    if (i + n > len)
        return false;
    int v = 0;
    for (size_t k = 0; k < n; k++) {
        char c = s[i + k];
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (c - '0');
    }
    *out = v;
    return true;
}

static int fail(gr_err *err, const char *s, size_t len, const char *why)
{
    int shown = len > 64 ? 64 : (int)len;
    return gr_err_set(err, GR_EPARSE, "invalid RFC 3339 time \"%.*s%s\": %s; %s", shown, s,
                      len > 64 ? "..." : "", why, EXPECTED);
}

int gr_time_parse_n(const char *s, size_t len, struct timespec *out, gr_err *err)
{
    if (!s)
        return gr_err_set(err, GR_EINVAL, "invalid RFC 3339 time: string is NULL");
    int year, mon, day, hour, min, sec;
    if (!digits(s, len, 0, 4, &year))
        return fail(err, s, len, "year must be 4 digits");
    if (len < 5 || s[4] != '-')
        return fail(err, s, len, "expected '-' after the year");
    if (!digits(s, len, 5, 2, &mon))
        return fail(err, s, len, "month must be 2 digits");
    if (len < 8 || s[7] != '-')
        return fail(err, s, len, "expected '-' after the month");
    if (!digits(s, len, 8, 2, &day))
        return fail(err, s, len, "day must be 2 digits");
    if (len < 11 || s[10] != 'T')
        return fail(err, s, len, "expected 'T' between date and time");
    if (!digits(s, len, 11, 2, &hour))
        return fail(err, s, len, "hour must be 2 digits");
    if (len < 14 || s[13] != ':')
        return fail(err, s, len, "expected ':' after the hour");
    if (!digits(s, len, 14, 2, &min))
        return fail(err, s, len, "minute must be 2 digits");
    if (len < 17 || s[16] != ':')
        return fail(err, s, len, "expected ':' after the minute");
    if (!digits(s, len, 17, 2, &sec))
        return fail(err, s, len, "second must be 2 digits");
    size_t i = 19;
    int64_t nsec = 0;
    if (i < len && s[i] == '.') {
        i++;
        size_t start = i;
        int64_t scale = NS_PER_SEC;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
            if (scale > 1) { /* digits past the 9th are truncated */
                scale /= 10;
                nsec += (s[i] - '0') * scale;
            }
        }
        if (i == start)
            return fail(err, s, len, "fractional second needs at least one digit");
    }
    int64_t off = 0;
    if (i < len && s[i] == 'Z') {
        i++;
    } else if (i < len && (s[i] == '+' || s[i] == '-')) {
        int oh, om;
        int sign = s[i] == '-' ? -1 : 1;
        if (!digits(s, len, i + 1, 2, &oh) || i + 3 >= len || s[i + 3] != ':' ||
            !digits(s, len, i + 4, 2, &om))
            return fail(err, s, len, "time zone offset must be +hh:mm or -hh:mm");
        if (oh > 23)
            return fail(err, s, len, "time zone offset hour out of range");
        if (om > 59)
            return fail(err, s, len, "time zone offset minute out of range");
        off = sign * (int64_t)(oh * 3600 + om * 60);
        i += 6;
    } else {
        return fail(err, s, len, "missing time zone ('Z' or +hh:mm)");
    }
    if (i != len)
        return fail(err, s, len, "extra text after the time zone");
    if (mon < 1 || mon > 12)
        return fail(err, s, len, "month out of range");
    if (day < 1 || day > days_in_month(year, mon))
        return fail(err, s, len, "day out of range");
    if (hour > 23)
        return fail(err, s, len, "hour out of range");
    if (min > 59)
        return fail(err, s, len, "minute out of range");
    if (sec > 59)
        return fail(err, s, len, "second out of range");

    int64_t t = days_from_civil(year, mon, day) * 86400 + hour * 3600 + min * 60 + sec - off;
    if (out) {
        out->tv_sec = (time_t)t;
        out->tv_nsec = (long)nsec;
    }
    return GR_OK;
}

int gr_time_parse(const char *s, struct timespec *out, gr_err *err)
{
    if (!s)
        return gr_err_set(err, GR_EINVAL, "invalid RFC 3339 time: string is NULL");
    return gr_time_parse_n(s, strlen(s), out, err);
}

int gr_time_to_ns(const struct timespec *t, int64_t *out_ns)
{
    int64_t sec = (int64_t)t->tv_sec;
    int64_t nsec = (int64_t)t->tv_nsec;
    int64_t ns;
    if (nsec < 0 || nsec >= NS_PER_SEC)
        return GR_EINVAL;
    if (sec < 0 && nsec > 0) { /* so that INT64_MIN itself is reachable */
        sec++;
        nsec -= NS_PER_SEC;
    }
    if (__builtin_mul_overflow(sec, NS_PER_SEC, &ns) || __builtin_add_overflow(ns, nsec, &ns))
        return GR_ETOOBIG;
    *out_ns = ns;
    return GR_OK;
}

struct timespec gr_time_from_ns(int64_t ns)
{
    struct timespec t;
    int64_t sec = ns / NS_PER_SEC;
    int64_t rem = ns % NS_PER_SEC;
    if (rem < 0) {
        rem += NS_PER_SEC;
        sec--;
    }
    t.tv_sec = (time_t)sec;
    t.tv_nsec = (long)rem;
    return t;
}

int gr_time_parse_ns(const char *s, int64_t *out_ns, gr_err *err)
{
    struct timespec t;
    int rc = gr_time_parse(s, &t, err);
    if (rc != GR_OK)
        return rc;
    int64_t ns;
    if (gr_time_to_ns(&t, &ns) != GR_OK)
        return gr_err_set(err, GR_ETOOBIG,
                          "RFC 3339 time \"%.64s\" is outside the range of int64 nanoseconds "
                          "(years 1678..2262)",
                          s);
    if (out_ns)
        *out_ns = ns;
    return GR_OK;
}

/* digits: 0 (none), 6 (micro, always) or -1 (nano, trimmed). */
static int format(const struct timespec *t, char buf[GR_TIME_STR_MAX], int frac)
{
    buf[0] = '\0';
    if (!t || t->tv_nsec < 0 || t->tv_nsec >= NS_PER_SEC)
        return GR_EINVAL;
    int64_t sec = (int64_t)t->tv_sec;
    int64_t days = sec / 86400;
    int64_t rem = sec % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    if (y < 0 || y > 9999)
        return GR_EINVAL;
    int n = snprintf(buf, GR_TIME_STR_MAX, "%04d-%02d-%02dT%02d:%02d:%02d", (int)y, m, d,
                     (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60));
    if (frac == 6) {
        n += snprintf(buf + n, (size_t)(GR_TIME_STR_MAX - n), ".%06ld", t->tv_nsec / 1000);
    } else if (frac < 0 && t->tv_nsec != 0) {
        char f[16];
        snprintf(f, sizeof f, ".%09ld", t->tv_nsec);
        size_t fl = strlen(f);
        while (f[fl - 1] == '0')
            f[--fl] = '\0';
        n += snprintf(buf + n, (size_t)(GR_TIME_STR_MAX - n), "%s", f);
    }
    snprintf(buf + n, (size_t)(GR_TIME_STR_MAX - n), "Z");
    return GR_OK;
}

int gr_time_format(const struct timespec *t, char buf[GR_TIME_STR_MAX])
{
    return format(t, buf, 0);
}

int gr_time_format_micro(const struct timespec *t, char buf[GR_TIME_STR_MAX])
{
    return format(t, buf, 6);
}

int gr_time_format_nano(const struct timespec *t, char buf[GR_TIME_STR_MAX])
{
    return format(t, buf, -1);
}

int gr_time_format_ns(int64_t ns, char buf[GR_TIME_STR_MAX])
{
    struct timespec t = gr_time_from_ns(ns);
    return format(&t, buf, 0);
}

int gr_time_format_micro_ns(int64_t ns, char buf[GR_TIME_STR_MAX])
{
    struct timespec t = gr_time_from_ns(ns);
    return format(&t, buf, 6);
}

struct timespec gr_time_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return t;
}

int64_t gr_time_now_ns(void)
{
    struct timespec t = gr_time_now();
    return (int64_t)t.tv_sec * NS_PER_SEC + t.tv_nsec;
}

int64_t gr_time_mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * NS_PER_SEC + t.tv_nsec;
}
