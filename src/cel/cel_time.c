/*
 * cel_time.c — durations (Go syntax), RFC 3339 timestamps, civil calendar
 * arithmetic and time-zone offsets for the CEL timestamp accessors.
 *
 * Time zones: "UTC", fixed offsets "+05:30" / "-08:00", and IANA names read
 * from the system tz database (/usr/share/zoneinfo, TZif v1/v2). Instants after
 * the last transition stored in the file use the last transition's offset
 * (the POSIX footer rule is not interpreted).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_int.h"

#define NS_PER_S 1000000000LL

/* ---- civil calendar (proleptic Gregorian) ---- */

void cel_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t yy = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yy + (*m <= 2);
}

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : dm[m - 1];
}

/* ---- durations ---- */

static bool unit_of(const char *s, size_t n, uint64_t *unit)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {
        {"ns", 1},
        {"us", 1000},
        {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
        {"\xce\xbcs", 1000}, /* U+03BC Greek mu */
        {"ms", 1000000},
        {"s", (uint64_t)NS_PER_S},
        {"m", 60 * (uint64_t)NS_PER_S},
        {"h", 3600 * (uint64_t)NS_PER_S},
    };
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strlen(units[i].name) == n && memcmp(units[i].name, s, n) == 0) {
            *unit = units[i].ns;
            return true;
        }
    }
    return false;
}

int cel_duration_parse(const char *s, size_t len, int64_t *ns)
{
    size_t i = 0;
    bool neg = false;
    if (i < len && (s[i] == '-' || s[i] == '+')) {
        neg = s[i] == '-';
        i++;
    }
    if (i == len)
        return GR_EINVAL;
    if (len - i == 1 && s[i] == '0') {
        *ns = 0;
        return GR_OK;
    }
    uint64_t total = 0;
    while (i < len) {
        uint64_t v = 0, f = 0, scale = 1;
        bool digits = false, overflow = false;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            if (v > (UINT64_MAX - 9) / 10)
                overflow = true;
            else
                v = v * 10 + (uint64_t)(s[i] - '0');
            digits = true;
            i++;
        }
        if (overflow)
            return GR_EINVAL;
        if (i < len && s[i] == '.') {
            i++;
            while (i < len && s[i] >= '0' && s[i] <= '9') {
                if (scale < 1000000000000000000ULL) {
                    f = f * 10 + (uint64_t)(s[i] - '0');
                    scale *= 10;
                }
                digits = true;
                i++;
            }
        }
        if (!digits)
            return GR_EINVAL;
        size_t u0 = i;
        while (i < len && !(s[i] >= '0' && s[i] <= '9') && s[i] != '.')
            i++;
        uint64_t unit;
        if (!unit_of(s + u0, i - u0, &unit))
            return GR_EINVAL;
        if (v > (1ULL << 63) / unit)
            return GR_EINVAL;
        v *= unit;
        if (f) {
            /* f/scale * unit, computed without overflow */
            long double add = (long double)f * (long double)unit / (long double)scale;
            v += (uint64_t)add;
        }
        if (v > (1ULL << 63) || total > (1ULL << 63) - v)
            return GR_EINVAL;
        total += v;
    }
    if (total > (uint64_t)INT64_MAX + (neg ? 1 : 0))
        return GR_EINVAL;
    *ns = neg ? (int64_t)(0 - total) : (int64_t)total;
    return GR_OK;
}

void cel_duration_fmt(int64_t ns, char *out, size_t outsz)
{
    uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
    uint64_t sec = a / (uint64_t)NS_PER_S, frac = a % (uint64_t)NS_PER_S;
    if (!frac) {
        snprintf(out, outsz, "%s%llus", ns < 0 ? "-" : "", (unsigned long long)sec);
        return;
    }
    char f[16];
    snprintf(f, sizeof(f), "%09llu", (unsigned long long)frac);
    size_t fl = 9;
    while (fl > 0 && f[fl - 1] == '0')
        fl--;
    f[fl] = 0;
    snprintf(out, outsz, "%s%llu.%ss", ns < 0 ? "-" : "", (unsigned long long)sec, f);
}

/* ---- timestamps ---- */

static bool digits_at(const char *s, size_t len, size_t i, size_t n, int *out)
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

int cel_timestamp_parse(const char *s, size_t len, int64_t *sec, int32_t *nsec)
{
    int y, mo, d, h, mi, se;
    if (!digits_at(s, len, 0, 4, &y) || len < 20 || s[4] != '-' || !digits_at(s, len, 5, 2, &mo) ||
        s[7] != '-' || !digits_at(s, len, 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
        !digits_at(s, len, 11, 2, &h) || s[13] != ':' || !digits_at(s, len, 14, 2, &mi) ||
        s[16] != ':' || !digits_at(s, len, 17, 2, &se))
        return GR_EINVAL;
    if (mo < 1 || mo > 12 || d < 1 || (unsigned)d > days_in_month(y, (unsigned)mo) || h > 23 ||
        mi > 59 || se > 59)
        return GR_EINVAL;
    size_t i = 19;
    int32_t ns = 0;
    if (i < len && s[i] == '.') {
        i++;
        size_t nd = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            if (nd < 9)
                ns = ns * 10 + (s[i] - '0');
            nd++;
            i++;
        }
        if (nd == 0)
            return GR_EINVAL;
        for (; nd < 9; nd++)
            ns *= 10;
    }
    int64_t off = 0;
    if (i < len && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i < len && (s[i] == '+' || s[i] == '-')) {
        int oh, om;
        if (!digits_at(s, len, i + 1, 2, &oh) || i + 3 >= len || s[i + 3] != ':' ||
            !digits_at(s, len, i + 4, 2, &om) || oh > 23 || om > 59)
            return GR_EINVAL;
        off = (int64_t)oh * 3600 + om * 60;
        if (s[i] == '-')
            off = -off;
        i += 6;
    } else {
        return GR_EINVAL;
    }
    if (i != len)
        return GR_EINVAL;
    int64_t t =
        days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + se - off;
    if (t < CEL_TS_MIN_SEC || t > CEL_TS_MAX_SEC)
        return GR_EINVAL;
    *sec = t;
    *nsec = ns;
    return GR_OK;
}

void cel_timestamp_fmt(int64_t sec, int32_t nsec, char *out, size_t outsz)
{
    int64_t days = sec >= 0 ? sec / 86400 : -((-sec + 86399) / 86400);
    int64_t rem = sec - days * 86400;
    int64_t y;
    unsigned m, d;
    cel_civil_from_days(days, &y, &m, &d);
    char frac[16] = "";
    if (nsec) {
        snprintf(frac, sizeof(frac), ".%09d", (int)nsec);
        size_t fl = strlen(frac);
        while (fl > 1 && frac[fl - 1] == '0')
            frac[--fl] = 0;
    }
    snprintf(out, outsz, "%04lld-%02u-%02uT%02d:%02d:%02d%sZ", (long long)y, m, d,
             (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60), frac);
}

/* ---- time zones ---- */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

#define TZIF_MAX_BYTES (1024 * 1024)

static int tzif_offset(const unsigned char *b, size_t n, int64_t t, int64_t *off)
{
    if (n < 44 || memcmp(b, "TZif", 4) != 0)
        return GR_EINVAL;
    size_t tsz = 4, base = 0;
    uint32_t isut = be32(b + 20), isstd = be32(b + 24), leap = be32(b + 28), timecnt = be32(b + 32),
             typecnt = be32(b + 36), charcnt = be32(b + 40);
    if (b[4] >= '2') {
        size_t v1 =
            (size_t)timecnt * 5 + (size_t)typecnt * 6 + charcnt + (size_t)leap * 8 + isstd + isut;
        base = 44 + v1;
        if (base + 44 > n || memcmp(b + base, "TZif", 4) != 0)
            return GR_EINVAL;
        isut = be32(b + base + 20);
        isstd = be32(b + base + 24);
        leap = be32(b + base + 28);
        timecnt = be32(b + base + 32);
        typecnt = be32(b + base + 36);
        charcnt = be32(b + base + 40);
        tsz = 8;
    }
    (void)isut;
    (void)isstd;
    (void)leap;
    (void)charcnt;
    size_t p = base + 44;
    if (typecnt == 0 || p + (size_t)timecnt * (tsz + 1) + (size_t)typecnt * 6 > n)
        return GR_EINVAL;
    const unsigned char *times = b + p, *idx = b + p + (size_t)timecnt * tsz;
    const unsigned char *types = idx + timecnt;
    size_t type = 0;
    /* before the first transition: the first non-DST type, else type 0 */
    for (size_t k = 0; k < typecnt; k++) {
        if (!types[k * 6 + 4]) {
            type = k;
            break;
        }
    }
    for (size_t k = 0; k < timecnt; k++) {
        int64_t tt = tsz == 8 ? be64(times + k * 8) : (int64_t)(int32_t)be32(times + k * 4);
        if (tt > t)
            break;
        type = idx[k];
    }
    if (type >= typecnt)
        return GR_EINVAL;
    *off = (int32_t)be32(types + type * 6);
    return GR_OK;
}

int cel_tz_offset(const char *tz, size_t len, int64_t sec, int64_t *off)
{
    if (len == 0)
        return GR_EINVAL;
    if ((len == 3 && memcmp(tz, "UTC", 3) == 0) || (len == 1 && tz[0] == 'Z')) {
        *off = 0;
        return GR_OK;
    }
    if (tz[0] == '+' || tz[0] == '-' || (tz[0] >= '0' && tz[0] <= '9')) {
        /* [+-]HH:MM */
        size_t i = (tz[0] == '+' || tz[0] == '-') ? 1 : 0;
        int h, m;
        if (len != i + 5 || !digits_at(tz, len, i, 2, &h) || tz[i + 2] != ':' ||
            !digits_at(tz, len, i + 3, 2, &m) || h > 23 || m > 59)
            return GR_EINVAL;
        *off = (int64_t)h * 3600 + m * 60;
        if (tz[0] == '-')
            *off = -*off;
        return GR_OK;
    }
    if (len > 64)
        return GR_EINVAL;
    for (size_t i = 0; i < len; i++) {
        char c = tz[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '+' || c == '/'))
            return GR_EINVAL;
        if (c == '/' && (i == 0 || tz[i - 1] == '/'))
            return GR_EINVAL;
    }
    char path[128];
    const char *dir = getenv("TZDIR");
    snprintf(path, sizeof(path), "%s/%.*s", dir && dir[0] ? dir : "/usr/share/zoneinfo", (int)len,
             tz);
    FILE *f = fopen(path, "rb");
    if (!f)
        return GR_EINVAL;
    unsigned char *buf = malloc(TZIF_MAX_BYTES);
    int rc = GR_EINVAL;
    if (buf) {
        size_t n = fread(buf, 1, TZIF_MAX_BYTES, f);
        rc = tzif_offset(buf, n, sec, off);
        free(buf);
    }
    fclose(f);
    return rc;
}
