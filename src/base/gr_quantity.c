/*
 * gr_quantity.c — Kubernetes resource.Quantity with exact decimal digits.
 *
 * A value is sign * C * 10^exp where C is a decimal digit string without
 * leading or trailing zeros (see gr_quantity.h). Arithmetic works on
 * little-endian digit arrays ("dnum") a little larger than the stored cap.
 *
 * Parsing follows k8s.io/apimachinery's ParseQuantity step by step: the same
 * scanner (number, then a suffix made of [eEinumkKMGTP]*[-+]?[0-9]*), the same
 * suffix table, the same choice between its int64 fast path and its inf.Dec
 * slow path (which decides whether String() echoes the input verbatim and
 * when a digit-less number such as ".Pi" is an error), the same rounding up
 * to 10^-9 and the same 2^63-1 cap for binary SI.
 */
#include "gr_quantity.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for a binary-SI value expanded to an integer (≤ 160 + 69 digits). */
#define WORK (GR_QUANTITY_MAX_DIGITS + 80)

#define RE_TEXT                                     \
    "quantities must match the regular expression " \
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
static const char NUMERIC_TEXT[] = "unable to parse numeric part of quantity";
static const char SUFFIX_TEXT[] = "unable to parse quantity's suffix";
static const char HINT[] = "use a number with an optional suffix (Ki Mi Gi Ti Pi Ei, "
                           "n u m k M G T P E, or e<exponent>), e.g. \"500Mi\" or \"100m\"";

/* Little-endian decimal digits; n == 0 means zero; d[n-1] != 0 otherwise. */
typedef struct dnum {
    uint8_t d[WORK];
    size_t n;
} dnum;

static void dnum_trim(dnum *x)
{
    while (x->n > 0 && x->d[x->n - 1] == 0)
        x->n--;
}

/* x *= m (m < 2^32). false when the result needs more than WORK digits. */
static bool dnum_mul_small(dnum *x, uint32_t m)
{
    uint64_t carry = 0;
    for (size_t i = 0; i < x->n; i++) {
        uint64_t v = (uint64_t)x->d[i] * m + carry;
        x->d[i] = (uint8_t)(v % 10);
        carry = v / 10;
    }
    while (carry > 0) {
        if (x->n >= WORK)
            return false;
        x->d[x->n++] = (uint8_t)(carry % 10);
        carry /= 10;
    }
    dnum_trim(x);
    return true;
}

/* x /= m, returning the remainder. */
static uint32_t dnum_div_small(dnum *x, uint32_t m)
{
    uint64_t rem = 0;
    for (size_t i = x->n; i-- > 0;) {
        uint64_t v = rem * 10 + x->d[i];
        x->d[i] = (uint8_t)(v / m);
        rem = v % m;
    }
    dnum_trim(x);
    return (uint32_t)rem;
}

/* Magnitude += 1. false on overflow of WORK. */
static bool dnum_inc(dnum *x)
{
    for (size_t i = 0; i < x->n; i++) {
        if (x->d[i] < 9) {
            x->d[i]++;
            return true;
        }
        x->d[i] = 0;
    }
    if (x->n >= WORK)
        return false;
    x->d[x->n++] = 1;
    return true;
}

/* Store sign * x * 10^exp into q (normalizing trailing zeros). false when
 * more than GR_QUANTITY_MAX_DIGITS significant digits remain. */
static bool store(gr_quantity *q, int sign, dnum *x, int64_t exp)
{
    dnum_trim(x);
    size_t lo = 0;
    while (lo < x->n && x->d[lo] == 0)
        lo++;
    size_t nd = x->n - lo;
    if (nd > GR_QUANTITY_MAX_DIGITS)
        return false;
    q->verbatim_len = 0;
    q->verbatim[0] = '\0';
    if (nd == 0) {
        q->sign = 0;
        q->ndigits = 0;
        q->exp = 0;
        return true;
    }
    q->sign = (int8_t)(sign < 0 ? -1 : 1);
    q->ndigits = (uint16_t)nd;
    q->exp = exp + (int64_t)lo;
    for (size_t i = 0; i < nd; i++)
        q->digits[i] = x->d[x->n - 1 - i];
    return true;
}

/* Coefficient of q as a dnum. */
static void load(const gr_quantity *q, dnum *x)
{
    x->n = q->ndigits;
    for (size_t i = 0; i < q->ndigits; i++)
        x->d[i] = q->digits[q->ndigits - 1 - i];
}

/* Round the magnitude up (away from zero) to a multiple of 10^min_exp.
 * Updates *exp. */
static bool round_up_to(dnum *x, int64_t *exp, int64_t min_exp)
{
    if (x->n == 0 || *exp >= min_exp)
        return true;
    int64_t drop = min_exp - *exp;
    bool sticky = false;
    if (drop >= (int64_t)x->n) {
        sticky = true; /* x != 0, all of it is below 10^min_exp */
        x->n = 0;
    } else {
        for (int64_t i = 0; i < drop; i++)
            sticky = sticky || x->d[i] != 0;
        memmove(x->d, x->d + drop, x->n - (size_t)drop);
        x->n -= (size_t)drop;
    }
    *exp = min_exp;
    dnum_trim(x);
    if (sticky)
        return dnum_inc(x);
    return true;
}

static void set_int_u64(dnum *x, uint64_t v)
{
    x->n = 0;
    while (v > 0) {
        x->d[x->n++] = (uint8_t)(v % 10);
        v /= 10;
    }
}

/* -1/0/1 comparing magnitudes a*10^ea and b*10^eb. */
static int cmp_mag(const uint8_t *ad, size_t an, int64_t ae, const uint8_t *bd, size_t bn,
                   int64_t be)
{
    /* ad/bd most significant first, no leading zeros, n > 0. */
    int64_t atop = (int64_t)an + ae, btop = (int64_t)bn + be;
    if (atop != btop)
        return atop < btop ? -1 : 1;
    size_t n = an > bn ? an : bn;
    for (size_t i = 0; i < n; i++) {
        int a = i < an ? ad[i] : 0;
        int b = i < bn ? bd[i] : 0;
        if (a != b)
            return a < b ? -1 : 1;
    }
    return 0;
}

/* ---- parsing ------------------------------------------------------------ */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_suffix_char(char c)
{
    return c != '\0' && memchr("eEinumkKMGTP", c, 12) != NULL;
}

static int parse_fail(gr_err *err, const char *s, size_t len, const char *why)
{
    char shown[96 * 4 + 4];
    size_t o = 0;
    for (size_t i = 0; i < len && i < 96; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
            o += (size_t)snprintf(shown + o, sizeof shown - o, "\\x%02x", c);
        } else {
            shown[o++] = (char)c;
        }
    }
    if (len > 96)
        o += (size_t)snprintf(shown + o, sizeof shown - o, "...");
    shown[o] = '\0';
    return gr_err_set(err, GR_EPARSE, "invalid quantity \"%s\": %s; %s", shown, why, HINT);
}

typedef struct suffix_info {
    int base;     /* 10 or 2 */
    int64_t expo; /* power of base */
    gr_quantity_format format;
} suffix_info;

/* Kubernetes' suffix table plus the e<int64> form. 0 ok, -1 unknown,
 * -2 exponent beyond int32. */
static int interpret_suffix(const char *s, size_t n, suffix_info *out)
{
    static const struct {
        const char *name;
        int base;
        int expo;
    } table[] = {
        {"", 10, 0},   {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3}, {"k", 10, 3},  {"M", 10, 6},
        {"G", 10, 9},  {"T", 10, 12}, {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
        {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strlen(table[i].name) == n && memcmp(table[i].name, s, n) == 0) {
            out->base = table[i].base;
            out->expo = table[i].expo;
            out->format = table[i].base == 2 ? GR_QUANTITY_BINARY_SI : GR_QUANTITY_DECIMAL_SI;
            return 0;
        }
    }
    if (n > 1 && (s[0] == 'e' || s[0] == 'E')) {
        /* strconv.ParseInt(s[1:], 10, 64) */
        size_t i = 1;
        bool neg = false;
        if (s[i] == '+' || s[i] == '-') {
            neg = s[i] == '-';
            i++;
        }
        if (i == n)
            return -1;
        uint64_t v = 0;
        bool big = false;
        for (; i < n; i++) {
            if (!is_digit(s[i]))
                return -1;
            if (v > (UINT64_MAX - 9) / 10)
                big = true;
            else
                v = v * 10 + (uint64_t)(s[i] - '0');
        }
        if (big || v > (uint64_t)INT32_MAX) /* ±(2^31-1), as Kubernetes */
            return -2;
        out->base = 10;
        out->expo = neg ? -(int64_t)v : (int64_t)v;
        out->format = GR_QUANTITY_DECIMAL_EXPONENT;
        return 0;
    }
    return -1;
}

int gr_quantity_parse_n(const char *s, size_t len, gr_quantity *out, gr_err *err)
{
    if (!s || !out)
        return gr_err_set(err, GR_EINVAL, "invalid quantity: string or output is NULL");
    if (len == 0)
        return parse_fail(err, s, len, "empty string, " RE_TEXT);
    if (len > GR_QUANTITY_INPUT_MAX)
        return gr_err_set(err, GR_ETOOBIG, "invalid quantity \"%.32s...\": longer than %d bytes", s,
                          GR_QUANTITY_INPUT_MAX);

    /* Kubernetes' parseQuantityString. */
    size_t pos = 0, end = len;
    bool positive = true;
    if (s[0] == '-') {
        positive = false;
        pos++;
    } else if (s[0] == '+') {
        pos++;
    }
    size_t sign_end = pos;
    while (pos < end && s[pos] == '0')
        pos++;
    size_t num_start = pos, num_end = pos;
    size_t den_start = pos, den_end = pos;
    size_t suf_start = end, suf_end = end;
    size_t value_end = end;
    if (pos < end) {
        size_t i = pos;
        while (i < end && is_digit(s[i]))
            i++;
        num_end = i;
        den_start = den_end = i;
        if (i < end) {
            pos = i;
            if (s[pos] == '.') {
                pos++;
                i = pos;
                while (i < end && is_digit(s[i]))
                    i++;
                den_start = pos;
                den_end = i;
                pos = i;
            }
            value_end = pos;
            if (pos < end) {
                suf_start = pos;
                i = pos;
                while (i < end && is_suffix_char(s[i]))
                    i++;
                if (i < end) {
                    if (s[i] == '-' || s[i] == '+')
                        i++;
                    while (i < end && is_digit(s[i]))
                        i++;
                    if (i < end)
                        return parse_fail(err, s, len, RE_TEXT);
                }
                suf_end = end;
            }
        }
    }
    bool has_digit = false;
    for (size_t i = sign_end; i < value_end; i++)
        has_digit = has_digit || is_digit(s[i]);

    suffix_info suf;
    int src = interpret_suffix(s + suf_start, suf_end - suf_start, &suf);
    if (src == -2)
        return parse_fail(err, s, len, "the exponent is outside the range -2147483647..2147483647");
    if (src != 0) {
        char why[64 + GR_QUANTITY_INPUT_MAX];
        snprintf(why, sizeof why, "%s \"%.*s\"", SUFFIX_TEXT, (int)(suf_end - suf_start),
                 s + suf_start);
        return parse_fail(err, s, len, why);
    }

    size_t nlen = num_end - num_start; /* leading zeros stripped */
    size_t dlen = den_end - den_start;
    size_t knum = nlen == 0 ? 1 : nlen; /* Kubernetes uses "0" for an empty numerator */

    /* Which path Kubernetes takes decides the verbatim String() and whether
     * a number without digits is an error. */
    int64_t precision, scale;
    if (suf.format == GR_QUANTITY_BINARY_SI) {
        scale = 0;
        precision = dlen == 0 ? 15 - (int64_t)knum - suf.expo * 3 / 10 - 1 : -1;
    } else {
        scale = suf.expo;
        precision = 18 - (int64_t)(knum + dlen);
    }
    bool fast = precision >= 0 && scale - (int64_t)dlen >= -9;
    if (!fast && !has_digit)
        return parse_fail(err, s, len, NUMERIC_TEXT);

    bool verbatim = false;
    if (fast) {
        if (suf.format == GR_QUANTITY_BINARY_SI) {
            uint64_t v = 0;
            for (size_t i = num_start; i < num_end; i++)
                v = v * 10 + (uint64_t)(s[i] - '0');
            verbatim = (v & 7) != 0;
        } else {
            /* shifted = num + denom; canonical when scale%3 == 0, it does
             * not end in "000" and does not start with '0'. */
            char tail[3];
            size_t tn = 0;
            for (size_t i = den_end; i > den_start && tn < 3; i--)
                tail[tn++] = s[i - 1];
            for (size_t i = num_end; i > num_start && tn < 3; i--)
                tail[tn++] = s[i - 1];
            if (nlen == 0 && tn < 3)
                tail[tn++] = '0';
            bool ends000 = tn == 3 && tail[0] == '0' && tail[1] == '0' && tail[2] == '0';
            verbatim = (scale - (int64_t)dlen) % 3 == 0 && !ends000 && nlen != 0;
        }
    }

    /* The exact value: (num denom) * 10^(exp - dlen) [* 2^expo]. */
    dnum x;
    x.n = 0;
    for (size_t i = den_end; i > den_start; i--)
        x.d[x.n++] = (uint8_t)(s[i - 1] - '0');
    for (size_t i = num_end; i > num_start; i--)
        x.d[x.n++] = (uint8_t)(s[i - 1] - '0');
    dnum_trim(&x);
    int64_t exp = (suf.base == 10 ? suf.expo : 0) - (int64_t)dlen;
    gr_quantity_format format = suf.format;
    if (suf.base == 2) {
        for (int64_t k = 0; k < suf.expo / 10; k++)
            (void)dnum_mul_small(&x, 1024); /* ≤ 191+19 digits < WORK */
    }
    (void)round_up_to(&x, &exp, -9); /* cannot overflow: x.n ≤ 191+19 < WORK */
    if (format == GR_QUANTITY_BINARY_SI && x.n > 0) {
        /* cap at 2^63-1; below 1 it is shown as decimal SI */
        gr_quantity tmp;
        if ((int64_t)x.n + exp > 19 || !store(&tmp, 1, &x, exp) ||
            gr_quantity_cmp_int64(&tmp, INT64_MAX) > 0) {
            set_int_u64(&x, (uint64_t)INT64_MAX);
            exp = 0;
        } else if (gr_quantity_cmp_int64(&tmp, 1) < 0) {
            format = GR_QUANTITY_DECIMAL_SI;
        }
    }
    gr_quantity q;
    if (!store(&q, positive ? 1 : -1, &x, exp))
        return gr_err_set(err, GR_ETOOBIG,
                          "invalid quantity \"%.32s...\": more than %d significant digits", s,
                          GR_QUANTITY_MAX_DIGITS);
    q.format = (uint8_t)format;
    if (verbatim && !(len == 1 && s[0] == '0')) {
        memcpy(q.verbatim, s, len);
        q.verbatim[len] = '\0';
        q.verbatim_len = (uint8_t)len;
    }
    *out = q;
    return GR_OK;
}

int gr_quantity_parse(const char *s, gr_quantity *out, gr_err *err)
{
    if (!s || !out)
        return gr_err_set(err, GR_EINVAL, "invalid quantity: string or output is NULL");
    return gr_quantity_parse_n(s, strlen(s), out, err);
}

/* ---- formatting --------------------------------------------------------- */

/* Decimal SI suffix for a multiple-of-3 exponent, or NULL. */
static const char *dec_suffix(int64_t e)
{
    switch (e) {
    case -9:
        return "n";
    case -6:
        return "u";
    case -3:
        return "m";
    case 0:
        return "";
    case 3:
        return "k";
    case 6:
        return "M";
    case 9:
        return "G";
    case 12:
        return "T";
    case 15:
        return "P";
    case 18:
        return "E";
    default:
        return NULL;
    }
}

static char *canonical_decimal(const gr_quantity *q, char *buf, gr_quantity_format format);

/* Write sign, digits and `zeros` zeros. */
static size_t put_number(char *buf, const gr_quantity *q, int64_t zeros)
{
    size_t o = 0;
    if (q->sign < 0)
        buf[o++] = '-';
    for (size_t i = 0; i < q->ndigits; i++)
        buf[o++] = (char)('0' + q->digits[i]);
    for (int64_t i = 0; i < zeros; i++)
        buf[o++] = '0';
    return o;
}

static char *canonical(const gr_quantity *q, char *buf)
{
    if (q->sign == 0) {
        memcpy(buf, "0", 2);
        return buf;
    }
    gr_quantity_format format = (gr_quantity_format)q->format;
    if (format == GR_QUANTITY_BINARY_SI) {
        if (gr_quantity_cmp_int64(q, -1024) > 0 && gr_quantity_cmp_int64(q, 1024) < 0)
            format = GR_QUANTITY_DECIMAL_SI;
        else if (q->exp < 0) /* not an integer: keep the precision */
            format = GR_QUANTITY_DECIMAL_SI;
        else if (q->exp >= 70) /* divisible by 1024^7: no binary suffix */
            format = GR_QUANTITY_DECIMAL_EXPONENT;
    }
    if (format == GR_QUANTITY_BINARY_SI) {
        dnum x;
        load(q, &x);
        for (int64_t i = 0; i < q->exp; i++) /* fits: checked above */
            (void)dnum_mul_small(&x, 10);
        int e = 0;
        for (;;) {
            dnum t = x;
            if (dnum_div_small(&t, 1024) != 0)
                break;
            x = t;
            e++;
        }
        if (e > 6) /* past Ei: exact decimal form, as Kubernetes does */
            return canonical_decimal(q, buf, GR_QUANTITY_DECIMAL_EXPONENT);
        size_t o = 0;
        if (q->sign < 0)
            buf[o++] = '-';
        for (size_t i = x.n; i-- > 0;)
            buf[o++] = (char)('0' + x.d[i]);
        static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
        strcpy(buf + o, bin[e]);
        return buf;
    }
    return canonical_decimal(q, buf, format);
}

/* Decimal SI / exponent canonical form: the exponent lowered to a multiple
 * of 3 (toward -infinity), then a suffix letter or e<exp>. */
static char *canonical_decimal(const gr_quantity *q, char *buf, gr_quantity_format format)
{
    int64_t pad = ((q->exp % 3) + 3) % 3;
    int64_t e = q->exp - pad;
    size_t o = put_number(buf, q, pad);
    if (format == GR_QUANTITY_DECIMAL_SI) {
        const char *sfx = dec_suffix(e);
        if (sfx) {
            strcpy(buf + o, sfx);
            return buf;
        }
        /* no letter beyond E or below n: e<exp> keeps the value exact */
    }
    if (e == 0)
        buf[o] = '\0';
    else
        snprintf(buf + o, GR_QUANTITY_STR_MAX - o, "e%lld", (long long)e);
    return buf;
}

char *gr_quantity_canonical(const gr_quantity *q, char buf[GR_QUANTITY_STR_MAX])
{
    return canonical(q, buf);
}

char *gr_quantity_string(const gr_quantity *q, char buf[GR_QUANTITY_STR_MAX])
{
    if (q->verbatim_len > 0) {
        memcpy(buf, q->verbatim, q->verbatim_len);
        buf[q->verbatim_len] = '\0';
        return buf;
    }
    return canonical(q, buf);
}

/* ---- comparison and conversion ------------------------------------------ */

int gr_quantity_cmp(const gr_quantity *a, const gr_quantity *b)
{
    if (a->sign != b->sign)
        return a->sign < b->sign ? -1 : 1;
    if (a->sign == 0)
        return 0;
    int m = cmp_mag(a->digits, a->ndigits, a->exp, b->digits, b->ndigits, b->exp);
    return a->sign > 0 ? m : -m;
}

int gr_quantity_cmp_int64(const gr_quantity *q, int64_t v)
{
    gr_quantity t;
    gr_quantity_from_int64(&t, v, GR_QUANTITY_DECIMAL_SI);
    return gr_quantity_cmp(q, &t);
}

int gr_quantity_sign(const gr_quantity *q)
{
    return q->sign;
}

bool gr_quantity_is_zero(const gr_quantity *q)
{
    return q->sign == 0;
}

gr_quantity_format gr_quantity_get_format(const gr_quantity *q)
{
    return (gr_quantity_format)q->format;
}

int gr_quantity_scaled_value(const gr_quantity *q, int32_t scale, int64_t *out)
{
    if (q->sign == 0) {
        *out = 0;
        return GR_OK;
    }
    const uint64_t limit = q->sign > 0 ? (uint64_t)INT64_MAX : (uint64_t)INT64_MAX + 1;
    int64_t e = q->exp - (int64_t)scale;
    bool inexact = false;
    size_t n = q->ndigits;
    if (e < 0) {
        /* drop the fraction; it is never zero (no trailing zeros) */
        if (-e >= (int64_t)n)
            n = 0;
        else
            n -= (size_t)(-e);
        inexact = true;
        e = 0;
    }
    uint64_t v = 0;
    bool over = false;
    for (size_t i = 0; i < n && !over; i++) {
        if (v > (limit - q->digits[i]) / 10)
            over = true;
        else
            v = v * 10 + q->digits[i];
    }
    for (int64_t i = 0; i < e && !over; i++) {
        if (v > limit / 10)
            over = true;
        else
            v *= 10;
    }
    if (!over && inexact) {
        if (v == limit)
            over = true;
        else
            v++; /* away from zero */
    }
    if (over) {
        *out = q->sign > 0 ? INT64_MAX : INT64_MIN;
        return GR_ETOOBIG;
    }
    *out = q->sign > 0 ? (int64_t)v : (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v);
    return GR_OK;
}

int64_t gr_quantity_value(const gr_quantity *q)
{
    int64_t v;
    (void)gr_quantity_scaled_value(q, 0, &v);
    return v;
}

int64_t gr_quantity_milli_value(const gr_quantity *q)
{
    int64_t v;
    (void)gr_quantity_scaled_value(q, -3, &v);
    return v;
}

bool gr_quantity_as_int64(const gr_quantity *q, int64_t *out)
{
    if (q->sign != 0 && q->exp < 0)
        return false;
    int64_t v;
    if (gr_quantity_scaled_value(q, 0, &v) != GR_OK)
        return false;
    if (out)
        *out = v;
    return true;
}

double gr_quantity_approx_float64(const gr_quantity *q)
{
    if (q->sign == 0)
        return 0.0;
    char buf[GR_QUANTITY_MAX_DIGITS + 32];
    size_t o = put_number(buf, q, 0);
    snprintf(buf + o, sizeof buf - o, "e%lld", (long long)q->exp);
    return strtod(buf, NULL); /* correctly rounded; ±HUGE_VAL past the range */
}

/* ---- construction and arithmetic ----------------------------------------- */

void gr_quantity_from_scaled(gr_quantity *out, int64_t value, int32_t scale,
                             gr_quantity_format format)
{
    dnum x;
    uint64_t mag = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
    set_int_u64(&x, mag);
    (void)store(out, value < 0 ? -1 : 1, &x, scale); /* ≤ 20 digits */
    out->format = (uint8_t)format;
}

void gr_quantity_from_int64(gr_quantity *out, int64_t value, gr_quantity_format format)
{
    gr_quantity_from_scaled(out, value, 0, format);
}

void gr_quantity_neg(gr_quantity *out, const gr_quantity *a)
{
    if (out != a)
        *out = *a;
    out->sign = (int8_t)-out->sign;
    out->verbatim_len = 0;
    out->verbatim[0] = '\0';
}

/* out = a + sb*b where sb is +1 or -1. */
static int add_signed(gr_quantity *out, const gr_quantity *a, const gr_quantity *b, int sb,
                      gr_err *err)
{
    gr_quantity_format format = (gr_quantity_format)(a->sign == 0 ? b->format : a->format);
    int bs = b->sign * sb;
    if (b->sign == 0 || a->sign == 0) {
        gr_quantity r = b->sign == 0 ? *a : *b;
        if (b->sign != 0)
            r.sign = (int8_t)bs;
        r.verbatim_len = 0;
        r.verbatim[0] = '\0';
        r.format = (uint8_t)format;
        *out = r;
        return GR_OK;
    }
    int64_t lo = a->exp < b->exp ? a->exp : b->exp;
    int64_t atop = (int64_t)a->ndigits + a->exp, btop = (int64_t)b->ndigits + b->exp;
    int64_t top = atop > btop ? atop : btop;
    if (top - lo + 1 > WORK)
        return gr_err_set(err, GR_ETOOBIG,
                          "quantity arithmetic: the exact result needs more than %d digits",
                          GR_QUANTITY_MAX_DIGITS);
    size_t width = (size_t)(top - lo);
    int8_t da[WORK], db[WORK]; /* little-endian, aligned at 10^lo */
    memset(da, 0, sizeof da);
    memset(db, 0, sizeof db);
    for (size_t i = 0; i < a->ndigits; i++)
        da[(size_t)(a->exp - lo) + a->ndigits - 1 - i] = (int8_t)a->digits[i];
    for (size_t i = 0; i < b->ndigits; i++)
        db[(size_t)(b->exp - lo) + b->ndigits - 1 - i] = (int8_t)b->digits[i];
    dnum r;
    int sign;
    if (a->sign == bs) {
        int carry = 0;
        for (size_t i = 0; i < width; i++) {
            int v = da[i] + db[i] + carry;
            r.d[i] = (uint8_t)(v % 10);
            carry = v / 10;
        }
        r.n = width;
        if (carry)
            r.d[r.n++] = (uint8_t)carry;
        sign = a->sign;
    } else {
        int c = cmp_mag(a->digits, a->ndigits, a->exp, b->digits, b->ndigits, b->exp);
        const int8_t *big = c >= 0 ? da : db, *small = c >= 0 ? db : da;
        sign = c >= 0 ? a->sign : bs;
        int borrow = 0;
        for (size_t i = 0; i < width; i++) {
            int v = big[i] - small[i] - borrow;
            borrow = v < 0;
            r.d[i] = (uint8_t)(v < 0 ? v + 10 : v);
        }
        r.n = width;
    }
    gr_quantity res;
    if (!store(&res, sign, &r, lo))
        return gr_err_set(err, GR_ETOOBIG,
                          "quantity arithmetic: the exact result needs more than %d digits",
                          GR_QUANTITY_MAX_DIGITS);
    res.format = (uint8_t)format;
    *out = res;
    return GR_OK;
}

int gr_quantity_add(gr_quantity *out, const gr_quantity *a, const gr_quantity *b, gr_err *err)
{
    return add_signed(out, a, b, 1, err);
}

int gr_quantity_sub(gr_quantity *out, const gr_quantity *a, const gr_quantity *b, gr_err *err)
{
    return add_signed(out, a, b, -1, err);
}
