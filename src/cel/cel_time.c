/*
 * cel_time.c — CEL's wrappers over gr_duration / gr_time (CEL string forms and
 * range), civil calendar arithmetic and time-zone offsets for the CEL
 * timestamp accessors.
 *
 * Time zones: "UTC", fixed offsets "+05:30" / "-08:00", and IANA names read
 * from the system tz database (/usr/share/zoneinfo or $TZDIR, TZif v1..v4).
 * Instants after the last transition stored in the file follow the POSIX TZ
 * rule in the v2+ footer ("EST5EDT,M3.2.0,M11.1.0"), as Go's time package
 * does, so zic's "slim" files (transitions only up to 2007) and years after
 * 2037 are right. Loaded zones are cached (at most TZ_CACHE_MAX).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
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

#define TZIF_MAX_BYTES  (256 * 1024) /* the largest zone in tzdata is under 4 KiB */
#define TZ_CACHE_MAX    64           /* zones kept in memory once loaded */
#define TZ_RULE_MAX_LEN 64           /* the POSIX TZ footer */

/* A POSIX TZ rule date: Jn (julian, no leap day), n (zero-based day of the
 * year) or Mm.w.d (day d of week w of month m); `secs` is the local time of
 * the change (default 02:00:00; v3 allows -167..167 hours). */
typedef struct tz_date {
    char kind; /* 'J', 'D' or 'M' */
    int a, b, c;
    int64_t secs;
} tz_date;

typedef struct tz_rule {
    bool valid;
    bool has_dst;
    int64_t std_off, dst_off; /* seconds east of UTC */
    tz_date start, end;
} tz_rule;

/* A loaded zone: the transitions and types of the TZif data block (64-bit
 * when the file has one) and the footer rule for instants after them. */
typedef struct tz_zone {
    char path[160];
    unsigned char *data; /* owned; times, idx, types point into it */
    const unsigned char *times, *idx, *types;
    size_t tsz, timecnt, typecnt;
    tz_rule rule;
} tz_zone;

static bool tz_name(const char **p, const char *e)
{
    const char *s = *p;
    if (s < e && *s == '<') {
        s++;
        while (s < e && *s != '>')
            s++;
        if (s >= e || s - *p < 4) /* at least 3 characters between < > */
            return false;
        *p = s + 1;
        return true;
    }
    while (s < e && ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
        s++;
    if (s - *p < 3)
        return false;
    *p = s;
    return true;
}

static bool tz_num(const char **p, const char *e, int max, int *out)
{
    const char *s = *p;
    int v = 0;
    if (s >= e || *s < '0' || *s > '9')
        return false;
    while (s < e && *s >= '0' && *s <= '9') {
        v = v * 10 + (*s - '0');
        if (v > max)
            return false;
        s++;
    }
    *p = s;
    *out = v;
    return true;
}

/* [+-]hh[:mm[:ss]] into seconds (hours up to 167 as TZif v3 allows). */
static bool tz_hms(const char **p, const char *e, int64_t *out)
{
    int sign = 1, h, m = 0, sec = 0;
    if (*p < e && (**p == '+' || **p == '-')) {
        sign = **p == '-' ? -1 : 1;
        (*p)++;
    }
    if (!tz_num(p, e, 167, &h))
        return false;
    if (*p < e && **p == ':') {
        (*p)++;
        if (!tz_num(p, e, 59, &m))
            return false;
        if (*p < e && **p == ':') {
            (*p)++;
            if (!tz_num(p, e, 59, &sec))
                return false;
        }
    }
    *out = sign * ((int64_t)h * 3600 + m * 60 + sec);
    return true;
}

static bool tz_date_parse(const char **p, const char *e, tz_date *d)
{
    d->secs = 2 * 3600;
    if (*p < e && **p == 'J') {
        (*p)++;
        d->kind = 'J';
        if (!tz_num(p, e, 365, &d->a) || d->a < 1)
            return false;
    } else if (*p < e && **p == 'M') {
        (*p)++;
        d->kind = 'M';
        if (!tz_num(p, e, 12, &d->a) || d->a < 1 || *p >= e || **p != '.')
            return false;
        (*p)++;
        if (!tz_num(p, e, 5, &d->b) || d->b < 1 || *p >= e || **p != '.')
            return false;
        (*p)++;
        if (!tz_num(p, e, 6, &d->c))
            return false;
    } else {
        d->kind = 'D';
        if (!tz_num(p, e, 365, &d->a))
            return false;
    }
    if (*p < e && **p == '/') {
        (*p)++;
        return tz_hms(p, e, &d->secs);
    }
    return true;
}

/* Parse a POSIX TZ string such as "EST5EDT,M3.2.0,M11.1.0" or "<+0530>-5:30". */
static bool tz_rule_parse(const char *s, size_t n, tz_rule *r)
{
    const char *p = s, *e = s + n;
    memset(r, 0, sizeof(*r));
    int64_t off;
    if (!tz_name(&p, e) || !tz_hms(&p, e, &off))
        return false;
    r->std_off = -off;
    if (p == e) {
        r->valid = true;
        return true;
    }
    if (!tz_name(&p, e))
        return false;
    r->has_dst = true;
    r->dst_off = r->std_off + 3600;
    if (p < e && *p != ',') {
        if (!tz_hms(&p, e, &off))
            return false;
        r->dst_off = -off;
    }
    if (p == e) { /* no rule: the US rule, as glibc and Go assume */
        r->start = (tz_date){'M', 3, 2, 0, 7200};
        r->end = (tz_date){'M', 11, 1, 0, 7200};
        r->valid = true;
        return true;
    }
    if (*p++ != ',' || !tz_date_parse(&p, e, &r->start) || p >= e || *p++ != ',' ||
        !tz_date_parse(&p, e, &r->end) || p != e)
        return false;
    r->valid = true;
    return true;
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

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Seconds since the epoch of the local wall-clock moment of rule date d in
 * year y (before subtracting the offset in force). */
static int64_t tz_date_local(const tz_date *d, int64_t y)
{
    int64_t day0 = days_from_civil(y, 1, 1), day;
    if (d->kind == 'J') {
        day = day0 + d->a - 1;
        if (is_leap(y) && d->a >= 60)
            day++;
    } else if (d->kind == 'D') {
        day = day0 + d->a;
    } else {
        static const unsigned mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        int64_t first = days_from_civil(y, (unsigned)d->a, 1);
        int64_t wd = (first + 4) % 7; /* 1970-01-01 was a Thursday */
        if (wd < 0)
            wd += 7;
        int64_t delta = ((int64_t)d->c - wd + 7) % 7;
        day = first + delta + (int64_t)(d->b - 1) * 7;
        unsigned ml = mdays[d->a - 1] + (d->a == 2 && is_leap(y) ? 1 : 0);
        while (day >= first + (int64_t)ml) /* week 5 = the last such day */
            day -= 7;
    }
    return day * 86400 + d->secs;
}

static int64_t tz_rule_offset(const tz_rule *r, int64_t t)
{
    if (!r->has_dst)
        return r->std_off;
    /* The year in local standard time; rules in tzdata never move a
     * transition across New Year, and a southern-hemisphere rule (start after
     * end) is DST outside [end, start). */
    int64_t lt = t + r->std_off;
    int64_t days = lt >= 0 ? lt / 86400 : -((-lt + 86399) / 86400);
    int64_t y;
    unsigned m, d;
    cel_civil_from_days(days, &y, &m, &d);
    int64_t start = tz_date_local(&r->start, y) - r->std_off;
    int64_t end = tz_date_local(&r->end, y) - r->dst_off;
    if (start < end)
        return t >= start && t < end ? r->dst_off : r->std_off;
    return t >= end && t < start ? r->std_off : r->dst_off;
}

/* Parse a TZif file (v1, v2, v3, v4) into z; the data block is kept in
 * z->data (taken over on success). */
static int tzif_load(unsigned char *b, size_t n, tz_zone *z)
{
    if (n < 44 || memcmp(b, "TZif", 4) != 0)
        return GR_EINVAL;
    size_t tsz = 4, base = 0;
    uint32_t isut = be32(b + 20), isstd = be32(b + 24), leap = be32(b + 28), timecnt = be32(b + 32),
             typecnt = be32(b + 36), charcnt = be32(b + 40);
    bool v2 = b[4] >= '2';
    if (v2) {
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
    size_t p = base + 44;
    size_t body = (size_t)timecnt * (tsz + 1) + (size_t)typecnt * 6 + charcnt +
                  (size_t)leap * (tsz + 4) + isstd + isut;
    if (typecnt == 0 || p + body > n)
        return GR_EINVAL;
    z->tsz = tsz;
    z->timecnt = timecnt;
    z->typecnt = typecnt;
    z->times = b + p;
    z->idx = b + p + (size_t)timecnt * tsz;
    z->types = z->idx + timecnt;
    for (size_t k = 0; k < timecnt; k++)
        if (z->idx[k] >= typecnt)
            return GR_EINVAL;
    memset(&z->rule, 0, sizeof(z->rule));
    /* v2+: "\n<POSIX TZ>\n" after the 64-bit block governs later instants. */
    size_t f = p + body;
    if (v2 && f < n && b[f] == '\n') {
        const unsigned char *nl = memchr(b + f + 1, '\n', n - f - 1);
        size_t rl = nl ? (size_t)(nl - (b + f + 1)) : 0;
        if (nl && rl > 0 && rl <= TZ_RULE_MAX_LEN &&
            !tz_rule_parse((const char *)b + f + 1, rl, &z->rule))
            return GR_EINVAL;
    }
    z->data = b;
    return GR_OK;
}

static int64_t tz_time_at(const tz_zone *z, size_t k)
{
    return z->tsz == 8 ? be64(z->times + k * 8) : (int64_t)(int32_t)be32(z->times + k * 4);
}

static int64_t tz_zone_offset(const tz_zone *z, int64_t t)
{
    if (z->rule.valid && (z->timecnt == 0 || t >= tz_time_at(z, z->timecnt - 1)))
        return tz_rule_offset(&z->rule, t);
    size_t type = 0;
    /* before the first transition: the first non-DST type, else type 0 */
    for (size_t k = 0; k < z->typecnt; k++) {
        if (!z->types[k * 6 + 4]) {
            type = k;
            break;
        }
    }
    /* binary search for the last transition at or before t */
    size_t lo = 0, hi = z->timecnt;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tz_time_at(z, mid) <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0)
        type = z->idx[lo - 1];
    return (int32_t)be32(z->types + type * 6);
}

/* Loaded zones, keyed by file path. Entries are never evicted (so lookups
 * can use them without holding the lock); once TZ_CACHE_MAX zones are held,
 * further zones are read from disk on every call. */
static pthread_mutex_t tz_cache_mu = PTHREAD_MUTEX_INITIALIZER;
static tz_zone *tz_cache[TZ_CACHE_MAX];
static _Atomic size_t tz_cache_n;

static const tz_zone *tz_cache_find(const char *path)
{
    size_t n = atomic_load(&tz_cache_n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(tz_cache[i]->path, path) == 0)
            return tz_cache[i];
    return NULL;
}

static int tz_read(const char *path, tz_zone *z)
{
    /* The whole file or nothing: a zone file past the cap or read short is
     * no zone (gr_file_read detects both). */
    char *buf = NULL;
    size_t n = 0;
    int rc = gr_file_read(path, TZIF_MAX_BYTES, &buf, &n, NULL);
    if (rc != GR_OK)
        return rc == GR_ENOMEM ? GR_ENOMEM : GR_EINVAL;
    rc = tzif_load((unsigned char *)buf, n, z);
    if (rc != GR_OK)
        free(buf);
    return rc;
}

size_t cel_tz_cache_size(void)
{
    return atomic_load(&tz_cache_n);
}

int cel_tz_offset(const char *tz, size_t len, int64_t sec, int64_t *off)
{
    /* Go's time.LoadLocation: "" and "UTC" are UTC; anything else is a file
     * of the tz database ("Z" is not a zone name and is refused). */
    if (len == 0 || (len == 3 && memcmp(tz, "UTC", 3) == 0)) {
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
    char path[160];
    const char *dir = getenv("TZDIR");
    int pl = snprintf(path, sizeof(path), "%s/%.*s", dir && dir[0] ? dir : "/usr/share/zoneinfo",
                      (int)len, tz);
    if (pl < 0 || (size_t)pl >= sizeof(path))
        return GR_EINVAL;
    const tz_zone *hit = tz_cache_find(path);
    if (hit) {
        *off = tz_zone_offset(hit, sec);
        return GR_OK;
    }
    tz_zone z;
    memset(&z, 0, sizeof(z));
    int rc = tz_read(path, &z);
    if (rc != GR_OK)
        return rc;
    *off = tz_zone_offset(&z, sec);
    memcpy(z.path, path, (size_t)pl + 1);
    pthread_mutex_lock(&tz_cache_mu);
    size_t n = atomic_load(&tz_cache_n);
    tz_zone *cz = NULL;
    if (!tz_cache_find(path) && n < TZ_CACHE_MAX && (cz = malloc(sizeof(*cz))) != NULL) {
        *cz = z;
        tz_cache[n] = cz;
        atomic_store(&tz_cache_n, n + 1); /* publish after the entry is complete */
    }
    pthread_mutex_unlock(&tz_cache_mu);
    if (!cz)
        free(z.data);
    return GR_OK;
}
