/*
 * gr_measure_gotime.c — parse times with Go reference-time layouts
 * ("Mon Jan 2 15:04:05 MST 2006"), as Go's time.Parse reads them.
 * See gr_measure.h.
 */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "gr_measure.h"

enum tok {
    T_NONE = 0,
    T_LONG_MONTH,   /* January */
    T_MONTH,        /* Jan */
    T_NUM_MONTH,    /* 1 */
    T_ZERO_MONTH,   /* 01 */
    T_LONG_WEEKDAY, /* Monday */
    T_WEEKDAY,      /* Mon */
    T_DAY,          /* 2 */
    T_UNDER_DAY,    /* _2 */
    T_ZERO_DAY,     /* 02 */
    T_UNDER_YDAY,   /* __2 */
    T_ZERO_YDAY,    /* 002 */
    T_HOUR,         /* 15 */
    T_HOUR12,       /* 3 */
    T_ZERO_HOUR12,  /* 03 */
    T_MINUTE,       /* 4 */
    T_ZERO_MINUTE,  /* 04 */
    T_SECOND,       /* 5 */
    T_ZERO_SECOND,  /* 05 */
    T_LONG_YEAR,    /* 2006 */
    T_YEAR,         /* 06 */
    T_PM,           /* PM */
    T_PM_LOWER,     /* pm */
    T_TZ,           /* MST */
    T_ISO_TZ,       /* Z07:00 etc: flag 'Z' allowed */
    T_NUM_TZ,       /* -07:00 etc */
    T_FRAC0,        /* .000 */
    T_FRAC9,        /* .999 */
};

typedef struct chunk {
    enum tok tok;
    size_t len;   /* layout bytes of the token */
    int zone_fmt; /* for TZ: 1 = hhmm, 2 = hh:mm, 3 = hh, 4 = hhmmss, 5 = hh:mm:ss */
    int digits;   /* for FRAC0 */
} chunk;

static int starts(const char *s, size_t n, const char *w)
{
    size_t k = strlen(w);
    return n >= k && memcmp(s, w, k) == 0;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Find the next token in layout[i..]; literal bytes before it are i..*at. */
static chunk next_chunk(const char *l, size_t n, size_t *at)
{
    chunk c = {T_NONE, 0, 0, 0};
    for (size_t i = *at; i < n; i++) {
        const char *s = l + i;
        size_t r = n - i;
        c.tok = T_NONE;
        switch (s[0]) {
        case 'J':
            if (starts(s, r, "January")) {
                c = (chunk){T_LONG_MONTH, 7, 0, 0};
            } else if (starts(s, r, "Jan")) {
                c = (chunk){T_MONTH, 3, 0, 0};
            }
            break;
        case 'M':
            if (starts(s, r, "Monday")) {
                c = (chunk){T_LONG_WEEKDAY, 6, 0, 0};
            } else if (starts(s, r, "Mon")) {
                c = (chunk){T_WEEKDAY, 3, 0, 0};
            } else if (starts(s, r, "MST")) {
                c = (chunk){T_TZ, 3, 0, 0};
            }
            break;
        case '0':
            if (r >= 2 && s[1] >= '1' && s[1] <= '6') {
                static const enum tok t[] = {T_ZERO_MONTH,  T_ZERO_DAY,    T_ZERO_HOUR12,
                                             T_ZERO_MINUTE, T_ZERO_SECOND, T_YEAR};
                c = (chunk){t[s[1] - '1'], 2, 0, 0};
            } else if (starts(s, r, "002")) {
                c = (chunk){T_ZERO_YDAY, 3, 0, 0};
            }
            break;
        case '1':
            if (starts(s, r, "15")) {
                c = (chunk){T_HOUR, 2, 0, 0};
            } else {
                c = (chunk){T_NUM_MONTH, 1, 0, 0};
            }
            break;
        case '2':
            if (starts(s, r, "2006")) {
                c = (chunk){T_LONG_YEAR, 4, 0, 0};
            } else {
                c = (chunk){T_DAY, 1, 0, 0};
            }
            break;
        case '_':
            if (starts(s, r, "_2006")) {
                /* "_" literal then the year */
                break;
            }
            if (starts(s, r, "__2")) {
                c = (chunk){T_UNDER_YDAY, 3, 0, 0};
            } else if (starts(s, r, "_2")) {
                c = (chunk){T_UNDER_DAY, 2, 0, 0};
            }
            break;
        case '3':
            c = (chunk){T_HOUR12, 1, 0, 0};
            break;
        case '4':
            c = (chunk){T_MINUTE, 1, 0, 0};
            break;
        case '5':
            c = (chunk){T_SECOND, 1, 0, 0};
            break;
        case 'P':
            if (starts(s, r, "PM")) {
                c = (chunk){T_PM, 2, 0, 0};
            }
            break;
        case 'p':
            if (starts(s, r, "pm")) {
                c = (chunk){T_PM_LOWER, 2, 0, 0};
            }
            break;
        case '-':
        case 'Z': {
            enum tok t = s[0] == 'Z' ? T_ISO_TZ : T_NUM_TZ;
            if (starts(s + 1, r - 1, "07:00:00")) {
                c = (chunk){t, 9, 5, 0};
            } else if (starts(s + 1, r - 1, "070000")) {
                c = (chunk){t, 7, 4, 0};
            } else if (starts(s + 1, r - 1, "07:00")) {
                c = (chunk){t, 6, 2, 0};
            } else if (starts(s + 1, r - 1, "0700")) {
                c = (chunk){t, 5, 1, 0};
            } else if (starts(s + 1, r - 1, "07")) {
                c = (chunk){t, 3, 3, 0};
            }
            break;
        }
        case '.':
        case ',':
            if (r >= 2 && (s[1] == '0' || s[1] == '9') && i > 0 && is_digit(l[i - 1])) {
                char ch = s[1];
                size_t j = 1;
                while (j < r && s[j] == ch) {
                    j++;
                }
                if (j >= r || !is_digit(s[j])) {
                    c = (chunk){ch == '0' ? T_FRAC0 : T_FRAC9, j, 0, (int)(j - 1)};
                }
            }
            break;
        default:
            break;
        }
        if (c.tok != T_NONE) {
            *at = i;
            return c;
        }
    }
    *at = n;
    c.tok = T_NONE;
    return c;
}

static const char *const MONTHS[] = {"January",   "February", "March",    "April",
                                     "May",       "June",     "July",     "August",
                                     "September", "October",  "November", "December"};
static const char *const DAYS[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                   "Thursday", "Friday", "Saturday"};

/* Read 1–2 digits (fixed: exactly 2). */
static int getnum(const char *v, size_t n, size_t *k, int fixed, int *out)
{
    if (*k >= n || !is_digit(v[*k])) {
        return -1;
    }
    if (*k + 1 >= n || !is_digit(v[*k + 1])) {
        if (fixed) {
            return -1;
        }
        *out = v[*k] - '0';
        *k += 1;
        return 0;
    }
    *out = (v[*k] - '0') * 10 + (v[*k + 1] - '0');
    *k += 2;
    return 0;
}

static int getdigits(const char *v, size_t n, size_t *k, int count, int *out)
{
    int x = 0;
    for (int i = 0; i < count; i++) {
        if (*k >= n || !is_digit(v[*k])) {
            return -1;
        }
        x = x * 10 + (v[*k] - '0');
        (*k)++;
    }
    *out = x;
    return 0;
}

static int lookup_name(const char *const *names, int count, int abbrev, const char *v, size_t n,
                       size_t *k)
{
    for (int i = 0; i < count; i++) {
        size_t len = abbrev ? 3 : strlen(names[i]);
        if (n - *k >= len && strncasecmp(v + *k, names[i], len) == 0) {
            *k += len;
            return i;
        }
    }
    return -1;
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int days_in(int64_t y, int m)
{
    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : d[m - 1];
}

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int64_t year_of(int64_t ns)
{
    int64_t z = ns / 1000000000 - (ns % 1000000000 < 0); /* floor, no overflow */
    z = (z >= 0 ? z / 86400 : (z - 86399) / 86400) + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t m = mp + (mp < 10 ? 3 : -9);
    return y + (m <= 2);
}

static int bad(gr_err *err, const char *layout, const char *v, size_t n, size_t k, const char *what)
{
    return gr_err_set(
        err, GR_EPARSE, "parsing time \"%.*s\" as \"%s\": cannot parse \"%.*s\" as %s",
        (int)(n > 128 ? 128 : n), v, layout, (int)(n - k > 64 ? 64 : n - k), v + k, what);
}

int gr_measure_gotime_check(const char *layout, gr_err *err)
{
    size_t n = strlen(layout), at = 0;
    int any = 0;
    while (at < n) {
        chunk c = next_chunk(layout, n, &at);
        if (c.tok == T_NONE) {
            break;
        }
        if (c.tok != T_WEEKDAY && c.tok != T_LONG_WEEKDAY && c.tok != T_TZ) {
            any = 1;
        }
        at += c.len;
    }
    if (!any) {
        return gr_err_set(err, GR_EINVAL,
                          "layout \"%s\" has no date or time element; write it with Go's reference "
                          "time, e.g. \"2006-01-02 15:04:05\" or \"2006-01-02T15:04:05Z07:00\"",
                          layout);
    }
    return GR_OK;
}

int gr_measure_gotime_parse(const char *layout, const char *v, size_t n, int64_t ref_ns,
                            int64_t *out_ns, gr_err *err)
{
    size_t ln = strlen(layout), at = 0, k = 0;
    int64_t year = -1;
    int month = -1, day = -1, yday = -1, hour = 0, min = 0, sec = 0, pm = -1;
    int64_t nsec = 0, zoff = 0;
    while (1) {
        size_t lit = at;
        chunk c = next_chunk(layout, ln, &at);
        size_t litlen = at - lit;
        if (n - k < litlen || memcmp(v + k, layout + lit, litlen) != 0) {
            return bad(err, layout, v, n, k, "the layout's literal text");
        }
        k += litlen;
        if (c.tok == T_NONE) {
            break;
        }
        at += c.len;
        int x = 0;
        switch (c.tok) {
        case T_LONG_YEAR:
            if (getdigits(v, n, &k, 4, &x) != 0) {
                return bad(err, layout, v, n, k, "\"2006\"");
            }
            year = x;
            break;
        case T_YEAR:
            if (getdigits(v, n, &k, 2, &x) != 0) {
                return bad(err, layout, v, n, k, "\"06\"");
            }
            year = x >= 69 ? 1900 + x : 2000 + x;
            break;
        case T_LONG_MONTH:
        case T_MONTH:
            x = lookup_name(MONTHS, 12, c.tok == T_MONTH, v, n, &k);
            if (x < 0) {
                return bad(err, layout, v, n, k, "a month name");
            }
            month = x + 1;
            break;
        case T_NUM_MONTH:
        case T_ZERO_MONTH:
            if (getnum(v, n, &k, c.tok == T_ZERO_MONTH, &x) != 0 || x < 1 || x > 12) {
                return bad(err, layout, v, n, k, "a month (01-12)");
            }
            month = x;
            break;
        case T_LONG_WEEKDAY:
        case T_WEEKDAY:
            if (lookup_name(DAYS, 7, c.tok == T_WEEKDAY, v, n, &k) < 0) {
                return bad(err, layout, v, n, k, "a weekday name");
            }
            break;
        case T_UNDER_DAY:
            if (k < n && v[k] == ' ') {
                k++;
            }
            __attribute__((fallthrough));
        case T_DAY:
        case T_ZERO_DAY:
            if (getnum(v, n, &k, c.tok == T_ZERO_DAY, &x) != 0 || x < 1 || x > 31) {
                return bad(err, layout, v, n, k, "a day of the month");
            }
            day = x;
            break;
        case T_UNDER_YDAY:
        case T_ZERO_YDAY:
            if (c.tok == T_UNDER_YDAY) {
                while (k < n && v[k] == ' ') {
                    k++;
                }
            }
            x = 0;
            {
                int digits = 0;
                while (k < n && is_digit(v[k]) && digits < 3) {
                    x = x * 10 + (v[k++] - '0');
                    digits++;
                }
                if (digits == 0 || (c.tok == T_ZERO_YDAY && digits != 3) || x < 1 || x > 366) {
                    return bad(err, layout, v, n, k, "a day of the year");
                }
            }
            yday = x;
            break;
        case T_HOUR:
            if (getnum(v, n, &k, 0, &x) != 0 || x > 23) {
                return bad(err, layout, v, n, k, "an hour (00-23)");
            }
            hour = x;
            break;
        case T_HOUR12:
        case T_ZERO_HOUR12:
            if (getnum(v, n, &k, c.tok == T_ZERO_HOUR12, &x) != 0 || x > 12) {
                return bad(err, layout, v, n, k, "an hour (1-12)");
            }
            hour = x;
            break;
        case T_MINUTE:
        case T_ZERO_MINUTE:
            if (getnum(v, n, &k, c.tok == T_ZERO_MINUTE, &x) != 0 || x > 59) {
                return bad(err, layout, v, n, k, "a minute (00-59)");
            }
            min = x;
            break;
        case T_SECOND:
        case T_ZERO_SECOND:
            if (getnum(v, n, &k, c.tok == T_ZERO_SECOND, &x) != 0 || x > 60) {
                return bad(err, layout, v, n, k, "a second (00-59)");
            }
            sec = x;
            /* a fractional second may follow even when the layout lacks it */
            if (k + 1 < n && (v[k] == '.' || v[k] == ',') && is_digit(v[k + 1])) {
                size_t save = at;
                chunk nx = next_chunk(layout, ln, &save);
                if (!(save == at && (nx.tok == T_FRAC0 || nx.tok == T_FRAC9))) {
                    k++;
                    int64_t scale = 100000000;
                    while (k < n && is_digit(v[k])) {
                        nsec += (v[k] - '0') * scale;
                        scale /= 10;
                        k++;
                    }
                }
            }
            break;
        case T_FRAC0:
            if (k >= n || (v[k] != '.' && v[k] != ',')) {
                return bad(err, layout, v, n, k, "a fractional second");
            }
            k++;
            {
                int64_t scale = 100000000;
                for (int i = 0; i < c.digits; i++) {
                    if (k >= n || !is_digit(v[k])) {
                        return bad(err, layout, v, n, k, "a fractional second");
                    }
                    nsec += (v[k] - '0') * scale;
                    scale /= 10;
                    k++;
                }
            }
            break;
        case T_FRAC9:
            if (k < n && (v[k] == '.' || v[k] == ',')) {
                k++;
                int64_t scale = 100000000;
                while (k < n && is_digit(v[k])) {
                    nsec += (v[k] - '0') * scale;
                    scale /= 10;
                    k++;
                }
            }
            break;
        case T_PM:
        case T_PM_LOWER:
            if (n - k >= 2 && strncasecmp(v + k, "PM", 2) == 0) {
                pm = 1;
            } else if (n - k >= 2 && strncasecmp(v + k, "AM", 2) == 0) {
                pm = 0;
            } else {
                return bad(err, layout, v, n, k, "AM/PM");
            }
            k += 2;
            break;
        case T_TZ:
            if (n - k >= 3 && memcmp(v + k, "UTC", 3) == 0) {
                k += 3;
                break;
            }
            {
                size_t j = k;
                while (j < n && j - k < 5 && v[j] >= 'A' && v[j] <= 'Z') {
                    j++;
                }
                if (j - k < 3) {
                    return bad(err, layout, v, n, k, "a time zone abbreviation");
                }
                k = j; /* an abbreviation: offset unknown, read as UTC (as Go does) */
            }
            break;
        case T_ISO_TZ:
        case T_NUM_TZ: {
            if (c.tok == T_ISO_TZ && k < n && v[k] == 'Z') {
                k++;
                break;
            }
            if (k >= n || (v[k] != '+' && v[k] != '-')) {
                return bad(err, layout, v, n, k, "a zone offset");
            }
            int sign = v[k] == '-' ? -1 : 1;
            k++;
            int hh = 0, mm = 0, ss = 0;
            int ok = getdigits(v, n, &k, 2, &hh) == 0;
            if (ok && (c.zone_fmt == 2 || c.zone_fmt == 5)) {
                ok = k < n && v[k++] == ':';
            }
            if (ok && c.zone_fmt != 3) {
                ok = getdigits(v, n, &k, 2, &mm) == 0;
            }
            if (ok && c.zone_fmt == 5) {
                ok = k < n && v[k++] == ':';
            }
            if (ok && (c.zone_fmt == 4 || c.zone_fmt == 5)) {
                ok = getdigits(v, n, &k, 2, &ss) == 0;
            }
            if (!ok || hh > 24 || mm > 59 || ss > 59) {
                return bad(err, layout, v, n, k, "a zone offset");
            }
            zoff = sign * (hh * 3600 + mm * 60 + ss);
            break;
        }
        default:
            break;
        }
    }
    if (k != n) {
        return gr_err_set(err, GR_EPARSE, "parsing time \"%.*s\" as \"%s\": extra text \"%.*s\"",
                          (int)(n > 128 ? 128 : n), v, layout, (int)(n - k > 64 ? 64 : n - k),
                          v + k);
    }
    if (pm >= 0) {
        if (hour > 12 || hour == 0) {
            return gr_err_set(err, GR_EPARSE, "parsing time \"%.*s\": hour %d with AM/PM",
                              (int)(n > 128 ? 128 : n), v, hour);
        }
        if (pm && hour < 12) {
            hour += 12;
        } else if (!pm && hour == 12) {
            hour = 0;
        }
    }
    if (year < 0) {
        year = year_of(ref_ns);
    }
    if (yday > 0) {
        if (yday > (is_leap(year) ? 366 : 365)) {
            return gr_err_set(err, GR_EPARSE, "parsing time: day of year %d out of range", yday);
        }
        int m = 1, d = yday;
        while (d > days_in(year, m)) {
            d -= days_in(year, m);
            m++;
        }
        if ((month > 0 && month != m) || (day > 0 && day != d)) {
            return gr_err_set(err, GR_EPARSE, "parsing time: day-of-year does not match the date");
        }
        month = m;
        day = d;
    }
    if (month < 0) {
        month = 1;
    }
    if (day < 0) {
        day = 1;
    }
    if (day > days_in(year, month)) {
        return gr_err_set(err, GR_EPARSE, "parsing time \"%.*s\": day out of range",
                          (int)(n > 128 ? 128 : n), v);
    }
    int64_t secs = days_from_civil(year, month, day) * 86400 + hour * 3600 + min * 60 + sec - zoff;
    /* int64 nanoseconds since 1970 reach 2262-04-11 */
    if (secs < 0 || secs > INT64_C(9223372035)) {
        return gr_err_set(err, GR_EPARSE,
                          "parsing time \"%.*s\": out of range (years 1970 to 2261 only)",
                          (int)(n > 128 ? 128 : n), v);
    }
    *out_ns = secs * 1000000000 + nsec;
    return GR_OK;
}
