/*
 * gr_duration.c — Go time.ParseDuration / Duration.String() in C.
 * See gr_duration.h for the accepted syntax and the error messages.
 */
#include "gr_duration.h"

#include <stdio.h>
#include <string.h>

#define DUR_MAX_MAG (UINT64_C(1) << 63) /* |INT64_MIN| */

/* Quoted form of at most this many input bytes in error messages; the rest
 * would be cut by gr_err anyway. */
#define QUOTE_MAX 120

/* Go's time.quote(): bytes < 0x20 or >= 0x80 become \xNN, '"' and '\' are
 * escaped, the result is wrapped in double quotes. Truncated with "..." when
 * the input is long. */
static void quote(char *out, size_t outsz, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (outsz < 8) {
        if (outsz)
            out[0] = '\0';
        return;
    }
    out[o++] = '"';
    size_t n = len > QUOTE_MAX ? QUOTE_MAX : len;
    for (size_t i = 0; i < n && o + 6 < outsz; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x80) {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 0xf];
        } else {
            if (c == '"' || c == '\\')
                out[o++] = '\\';
            out[o++] = (char)c;
        }
    }
    if (n < len && o + 4 < outsz) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o++] = '"';
    out[o] = '\0';
}

static int err_invalid(gr_err *err, const char *s, size_t len)
{
    char q[QUOTE_MAX * 4 + 16];
    quote(q, sizeof q, s, len);
    return gr_err_set(err, GR_EINVAL, "time: invalid duration %s", q);
}

static int err_missing_unit(gr_err *err, const char *s, size_t len)
{
    char q[QUOTE_MAX * 4 + 16];
    quote(q, sizeof q, s, len);
    return gr_err_set(err, GR_EINVAL, "time: missing unit in duration %s", q);
}

static int err_unknown_unit(gr_err *err, const char *u, size_t ulen, const char *s, size_t len)
{
    char qu[QUOTE_MAX * 4 + 16];
    char q[QUOTE_MAX * 4 + 16];
    quote(qu, sizeof qu, u, ulen);
    quote(q, sizeof q, s, len);
    return gr_err_set(err, GR_EINVAL, "time: unknown unit %s in duration %s", qu, q);
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Unit in nanoseconds, or 0 when unknown. */
static uint64_t unit_ns(const char *u, size_t n)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {
        {"ns", 1},
        {"us", 1000},
        {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
        {"\xce\xbcs", 1000}, /* U+03BC Greek small letter mu */
        {"ms", 1000000},
        {"s", 1000000000},
        {"m", UINT64_C(60000000000)},
        {"h", UINT64_C(3600000000000)},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strlen(units[i].name) == n && memcmp(units[i].name, u, n) == 0)
            return units[i].ns;
    }
    return 0;
}

int gr_duration_parse_n(const char *s, size_t len, int64_t *out_ns, gr_err *err)
{
    if (!s)
        return gr_err_set(err, GR_EINVAL, "time: invalid duration \"\"");
    const char *orig = s;
    size_t orig_len = len;
    size_t i = 0;
    bool neg = false;
    uint64_t total = 0;

    if (i < len && (s[i] == '-' || s[i] == '+')) {
        neg = s[i] == '-';
        i++;
    }
    /* "0", "+0", "-0" alone mean zero (no unit needed). */
    if (len - i == 1 && s[i] == '0') {
        if (out_ns)
            *out_ns = 0;
        return GR_OK;
    }
    if (i == len)
        return err_invalid(err, orig, orig_len);

    while (i < len) {
        uint64_t v = 0;   /* integer part */
        uint64_t f = 0;   /* fractional digits as an integer */
        double scale = 1; /* value = v + f/scale */

        /* The next character must be [0-9.]. */
        if (!(s[i] == '.' || is_digit(s[i])))
            return err_invalid(err, orig, orig_len);

        /* [0-9]* — overflow past 2^63 is an invalid duration. */
        size_t start = i;
        for (; i < len && is_digit(s[i]); i++) {
            if (v > DUR_MAX_MAG / 10)
                return err_invalid(err, orig, orig_len);
            v = v * 10 + (uint64_t)(s[i] - '0');
            if (v > DUR_MAX_MAG)
                return err_invalid(err, orig, orig_len);
        }
        bool pre = i != start;

        /* (\.[0-9]*)? — extra digits past 2^63 only lose precision. */
        bool post = false;
        if (i < len && s[i] == '.') {
            i++;
            size_t fstart = i;
            bool overflow = false;
            for (; i < len && is_digit(s[i]); i++) {
                if (overflow)
                    continue;
                if (f > (DUR_MAX_MAG - 1) / 10) {
                    overflow = true;
                    continue;
                }
                uint64_t y = f * 10 + (uint64_t)(s[i] - '0');
                if (y > DUR_MAX_MAG) {
                    overflow = true;
                    continue;
                }
                f = y;
                scale *= 10;
            }
            post = i != fstart;
        }
        if (!pre && !post) /* no digits at all, e.g. ".s" */
            return err_invalid(err, orig, orig_len);

        /* Unit: everything up to the next [0-9.]. */
        size_t ustart = i;
        while (i < len && s[i] != '.' && !is_digit(s[i]))
            i++;
        if (i == ustart)
            return err_missing_unit(err, orig, orig_len);
        uint64_t unit = unit_ns(s + ustart, i - ustart);
        if (unit == 0)
            return err_unknown_unit(err, s + ustart, i - ustart, orig, orig_len);

        if (v > DUR_MAX_MAG / unit)
            return err_invalid(err, orig, orig_len);
        v *= unit;
        if (f > 0) {
            /* Go scales the fraction in float64; (f*unit/scale) <= 3.6e12,
             * so the conversion back is exact and in range. */
            v += (uint64_t)((double)f * ((double)unit / scale));
            if (v > DUR_MAX_MAG)
                return err_invalid(err, orig, orig_len);
        }
        total += v;
        if (total > DUR_MAX_MAG)
            return err_invalid(err, orig, orig_len);
    }
    int64_t result;
    if (neg) {
        /* total <= 2^63 here; -(2^63) is INT64_MIN. */
        result = total == DUR_MAX_MAG ? INT64_MIN : -(int64_t)total;
    } else {
        if (total > DUR_MAX_MAG - 1)
            return err_invalid(err, orig, orig_len);
        result = (int64_t)total;
    }
    if (out_ns)
        *out_ns = result;
    return GR_OK;
}

int gr_duration_parse(const char *s, int64_t *out_ns, gr_err *err)
{
    if (!s)
        return gr_err_set(err, GR_EINVAL, "time: invalid duration \"\"");
    return gr_duration_parse_n(s, strlen(s), out_ns, err);
}

/* Write v/10^prec's fraction (".123", trailing zeros dropped, nothing when 0)
 * ending just before buf[w]; returns the new start and v/10^prec. */
static size_t fmt_frac(char *buf, size_t w, uint64_t v, int prec, uint64_t *rest)
{
    bool print = false;
    for (int i = 0; i < prec; i++) {
        unsigned digit = (unsigned)(v % 10);
        print = print || digit != 0;
        if (print)
            buf[--w] = (char)('0' + digit);
        v /= 10;
    }
    if (print)
        buf[--w] = '.';
    *rest = v;
    return w;
}

static size_t fmt_int(char *buf, size_t w, uint64_t v)
{
    if (v == 0) {
        buf[--w] = '0';
        return w;
    }
    while (v > 0) {
        buf[--w] = (char)('0' + v % 10);
        v /= 10;
    }
    return w;
}

char *gr_duration_format(int64_t ns, char buf[GR_DURATION_STR_MAX])
{
    char tmp[GR_DURATION_STR_MAX];
    size_t w = sizeof tmp;
    bool neg = ns < 0;
    uint64_t u = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

    if (u < (uint64_t)GR_DURATION_SECOND) {
        /* Below one second: a single smaller unit, e.g. "1.2ms". */
        int prec = 0;
        tmp[--w] = 's';
        if (u == 0) {
            memcpy(buf, "0s", 3);
            return buf;
        } else if (u < (uint64_t)GR_DURATION_MICROSECOND) {
            tmp[--w] = 'n';
            prec = 0;
        } else if (u < (uint64_t)GR_DURATION_MILLISECOND) {
            tmp[--w] = '\xb5'; /* U+00B5 'µ' as UTF-8 */
            tmp[--w] = '\xc2';
            prec = 3;
        } else {
            tmp[--w] = 'm';
            prec = 6;
        }
        w = fmt_frac(tmp, w, u, prec, &u);
        w = fmt_int(tmp, w, u);
    } else {
        tmp[--w] = 's';
        w = fmt_frac(tmp, w, u, 9, &u);
        /* u is whole seconds now. */
        w = fmt_int(tmp, w, u % 60);
        u /= 60;
        if (u > 0) {
            tmp[--w] = 'm';
            w = fmt_int(tmp, w, u % 60);
            u /= 60;
            if (u > 0) { /* hours; no days (they vary in length) */
                tmp[--w] = 'h';
                w = fmt_int(tmp, w, u);
            }
        }
    }
    if (neg)
        tmp[--w] = '-';
    size_t n = sizeof tmp - w;
    memcpy(buf, tmp + w, n);
    buf[n] = '\0';
    return buf;
}

/* One [0-9]+(h|m|s|ms) group at s[i]; with `frac`, [0-9]+(\.[0-9]+)? before
 * the unit. Returns the index after it, or 0 when there is none. */
static size_t pattern_group(const char *s, size_t i, bool frac)
{
    size_t start = i;
    while (is_digit(s[i]))
        i++;
    if (i == start)
        return 0;
    if (frac && s[i] == '.') {
        size_t fs = ++i;
        while (is_digit(s[i]))
            i++;
        if (i == fs)
            return 0;
    }
    if (s[i] == 'm' && s[i + 1] == 's')
        return i + 2;
    if (s[i] == 'h' || s[i] == 'm' || s[i] == 's')
        return i + 1;
    return 0;
}

/* The regex alternation (h|m|s|ms) is tried in order with backtracking;
 * "ms" vs "m" followed by "s..." can never be ambiguous here because a
 * group must start with a digit, so "m" then "s" cannot form a new group:
 * greedy "ms" is always the right choice. */
static bool match_groups(const char *s, bool frac)
{
    if (!s || !*s)
        return false;
    size_t i = 0;
    while (s[i]) {
        size_t next = pattern_group(s, i, frac);
        if (next == 0)
            return false;
        i = next;
    }
    return true;
}

bool gr_duration_is_api_pattern(const char *s)
{
    return match_groups(s, false);
}

bool gr_duration_is_decimal_pattern(const char *s)
{
    return match_groups(s, true);
}

int gr_duration_parse_api(const char *s, int64_t *out_ns, gr_err *err)
{
    if (!gr_duration_is_api_pattern(s)) {
        char q[QUOTE_MAX * 4 + 16];
        quote(q, sizeof q, s ? s : "", s ? strlen(s) : 0);
        return gr_err_set(err, GR_EINVAL,
                          "invalid duration %s: must match ^([0-9]+(h|m|s|ms))+$ (e.g. \"90s\", "
                          "\"1h30m\")",
                          q);
    }
    return gr_duration_parse(s, out_ns, err);
}
