/*
 * cel_time.c — CEL's wrappers over gr_duration / gr_time (CEL string forms and
 * range), civil calendar arithmetic and time-zone offsets for the CEL
 * timestamp accessors.
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
#include "gr_file.h"
#include "gr_time.h"

#define NS_PER_S 1000000000LL

/* ---- civil calendar (proleptic Gregorian), for the timestamp accessors ---- */

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

/* ---- durations ----
 *
 * Parsing is gr_duration_parse_n() (Go's time.ParseDuration, which cel-go
 * uses as is). Only CEL's string form lives here: seconds with a trimmed
 * fraction ("90s", "1.5s"), not Go's "1m30s". */

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

/* ---- timestamps ----
 *
 * Parsing and formatting are gr_time's (Go's time.Parse(time.RFC3339) and
 * RFC3339Nano, as cel-go uses; so 'T' and 'Z' must be upper case, as in
 * cel-go and @bufbuild/cel). CEL adds only its range, years 0001..9999
 * (gr_time also takes year 0000). */

int cel_timestamp_parse(const char *s, size_t len, int64_t *sec, int32_t *nsec)
{
    struct timespec t;
    if (gr_time_parse_n(s, len, &t, NULL) != GR_OK || (int64_t)t.tv_sec < CEL_TS_MIN_SEC ||
        (int64_t)t.tv_sec > CEL_TS_MAX_SEC)
        return GR_EINVAL;
    *sec = (int64_t)t.tv_sec;
    *nsec = (int32_t)t.tv_nsec;
    return GR_OK;
}

void cel_timestamp_fmt(int64_t sec, int32_t nsec, char *out, size_t outsz)
{
    /* Always in range for a CEL timestamp; buf is "" otherwise. */
    char buf[GR_TIME_STR_MAX];
    struct timespec t = {.tv_sec = (time_t)sec, .tv_nsec = nsec};
    (void)gr_time_format_nano(&t, buf);
    snprintf(out, outsz, "%s", buf);
}

/* ---- time zones ---- */

/* Two decimal digits at p (which has at least 2 bytes). */
static bool two_digits(const char *p, int *out)
{
    if (p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9')
        return false;
    *out = (p[0] - '0') * 10 + (p[1] - '0');
    return true;
}

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
        if (len != i + 5 || !two_digits(tz + i, &h) || tz[i + 2] != ':' ||
            !two_digits(tz + i + 3, &m) || h > 23 || m > 59)
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
    /* The whole file or nothing: a zone file past the cap or read short is
     * no zone (it used to be parsed from whatever prefix was read). */
    char *buf = NULL;
    size_t n = 0;
    if (gr_file_read(path, TZIF_MAX_BYTES, &buf, &n, NULL) != GR_OK)
        return GR_EINVAL;
    int rc = tzif_offset((const unsigned char *)buf, n, sec, off);
    free(buf);
    return rc;
}
