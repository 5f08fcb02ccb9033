/*
 * cel_k8s.c — the Kubernetes CEL libraries that carry their own value types:
 * quantity (k8s.io/apimachinery resource.Quantity), IP and CIDR (Go's
 * net/netip as k8s.io/apiserver uses it), URLs (net/url), semver
 * (blang/semver) and the format library (apimachinery's name validators,
 * kube-openapi's strfmt). Semantics follow k8s.io/apiserver v0.36
 * (Kubernetes 1.36); docs/cel.md lists them. Values are opaque objects (see
 * opaque_new); each operation costs one node, its inputs being short strings.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_lib.h"

/* ---- opaque library values (quantity, IP, CIDR, URL, semver) ----
 *
 * A GR_CEL_OBJECT with the Kubernetes type name and one field "" holding an
 * encoded form; only the library functions read it (the empty field name
 * cannot be written as a selection). Equality is cel_lib_opaque_equal(). */

static gr_cel_val opaque_new(const cel_node *n, const char *tname, const char *val, size_t len)
{
    gr_cel_val *keys, *vals;
    gr_cel_val r = cel_map_alloc(1, &keys, &vals);
    if (cel_is_err(&r))
        return cel_lib_at(n, r);
    keys[0] = cel_str_new(GR_CEL_STRING, "", 0);
    vals[0] = cel_str_new(GR_CEL_STRING, val, len);
    cel_map *m = r.u.p;
    m->tname = strdup(tname);
    if (cel_is_err(&keys[0]) || cel_is_err(&vals[0]) || !m->tname) {
        gr_cel_val_release(&r);
        return cel_lib_oom(n);
    }
    r.kind = GR_CEL_OBJECT;
    return r;
}

static const char *opaque_get(const gr_cel_val *v, const char *tname, size_t *len)
{
    if (v->kind != GR_CEL_OBJECT || strcmp(gr_cel_val_type_name(v), tname) != 0 ||
        cel_map_len(v) != 1)
        return NULL;
    const cel_map *m = v->u.p;
    return cel_sv(&m->vals[0], len);
}

#define T_QUANTITY "kubernetes.Quantity"
#define T_IP       "net.IP"
#define T_CIDR     "net.CIDR"
#define T_URL      "kubernetes.URL"
#define T_SEMVER   "kubernetes.Semver"

/* ---- quantity: k8s.io/apimachinery resource.Quantity ----
 *
 * Modelled on the Go type, including which representation a value has,
 * because that is visible: an int64Amount (value × 10^scale, what most
 * quantities parse to) or an exact decimal (inf.Dec), and isInteger() /
 * asInteger() only succeed for an int64Amount with scale >= 0 that fits
 * int64 (so quantity('1000m').isInteger() and quantity('1.5Gi').isInteger()
 * are false in Kubernetes and here). */

#define QD_MAX 640 /* decimal digits of an exact quantity */

typedef struct qdec {
    int sign;    /* -1, 0, 1 */
    int nd;      /* digits in d, most significant first, no leading zeros */
    int64_t exp; /* value = d × 10^exp */
    char d[QD_MAX];
} qdec;

typedef struct qty {
    bool is_dec;
    int64_t v; /* int64Amount */
    int32_t scale;
    qdec dec;
} qty;

static void qdec_norm(qdec *x)
{
    int lead = 0;
    while (lead < x->nd && x->d[lead] == 0)
        lead++;
    if (lead) {
        memmove(x->d, x->d + lead, (size_t)(x->nd - lead));
        x->nd -= lead;
    }
    while (x->nd > 0 && x->d[x->nd - 1] == 0) {
        x->nd--;
        x->exp++;
    }
    if (x->nd == 0) {
        x->sign = 0;
        x->exp = 0;
    }
}

static void qdec_from_i64(qdec *x, int64_t v, int64_t exp)
{
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    char tmp[24];
    int k = 0;
    do {
        tmp[k++] = (char)(u % 10);
        u /= 10;
    } while (u);
    x->nd = k;
    for (int i = 0; i < k; i++)
        x->d[i] = tmp[k - 1 - i];
    x->exp = exp;
    x->sign = v < 0 ? -1 : v > 0 ? 1 : 0;
    qdec_norm(x);
}

/* Compare magnitudes. */
static int qdec_cmp_abs(const qdec *a, const qdec *b)
{
    if (a->nd == 0 || b->nd == 0)
        return (a->nd > 0) - (b->nd > 0);
    int64_t ta = a->exp + a->nd, tb = b->exp + b->nd; /* position of the top digit */
    if (ta != tb)
        return ta > tb ? 1 : -1;
    int m = a->nd > b->nd ? a->nd : b->nd;
    for (int i = 0; i < m; i++) {
        int x = i < a->nd ? a->d[i] : 0, y = i < b->nd ? b->d[i] : 0;
        if (x != y)
            return x > y ? 1 : -1;
    }
    return 0;
}

static int qdec_cmp(const qdec *a, const qdec *b)
{
    if (a->sign != b->sign)
        return a->sign > b->sign ? 1 : -1;
    int c = qdec_cmp_abs(a, b);
    return a->sign < 0 ? -c : c;
}

/* r = a + sign_b * b; false when the result needs more than QD_MAX digits. */
static bool qdec_add(qdec *r, const qdec *a, const qdec *b, int bsign)
{
    int sb = b->sign * bsign;
    if (b->nd == 0) {
        *r = *a;
        return true;
    }
    if (a->nd == 0) {
        *r = *b;
        r->sign = sb;
        return true;
    }
    int64_t lo = a->exp < b->exp ? a->exp : b->exp;
    int64_t hi = a->exp + a->nd > b->exp + b->nd ? a->exp + a->nd : b->exp + b->nd;
    if (hi - lo + 1 > QD_MAX)
        return false;
    int w = (int)(hi - lo) + 1;
    int acc[QD_MAX + 1]; /* little-endian digits from 10^lo */
    memset(acc, 0, sizeof(acc));
    const qdec *big = a, *small = b;
    int sbig = a->sign, ssmall = sb;
    bool sub = a->sign != sb;
    if (sub && qdec_cmp_abs(a, b) < 0) {
        big = b;
        small = a;
        sbig = sb;
        ssmall = a->sign;
    }
    (void)ssmall;
    for (int i = 0; i < big->nd; i++)
        acc[big->exp - lo + (big->nd - 1 - i)] += big->d[i];
    for (int i = 0; i < small->nd; i++)
        acc[small->exp - lo + (small->nd - 1 - i)] += sub ? -small->d[i] : small->d[i];
    for (int i = 0; i < w; i++) {
        if (acc[i] < 0) {
            acc[i] += 10;
            acc[i + 1]--;
        } else if (acc[i] > 9) {
            acc[i] -= 10;
            acc[i + 1]++;
        }
    }
    r->nd = w;
    for (int i = 0; i < w; i++)
        r->d[i] = (char)acc[w - 1 - i];
    r->exp = lo;
    r->sign = sbig;
    qdec_norm(r);
    return true;
}

static bool qdec_mul_small(qdec *x, unsigned m)
{
    unsigned carry = 0;
    for (int i = x->nd - 1; i >= 0; i--) {
        unsigned p = (unsigned)x->d[i] * m + carry;
        x->d[i] = (char)(p % 10);
        carry = p / 10;
    }
    while (carry) {
        if (x->nd >= QD_MAX)
            return false;
        memmove(x->d + 1, x->d, (size_t)x->nd);
        x->d[0] = (char)(carry % 10);
        carry /= 10;
        x->nd++;
    }
    qdec_norm(x);
    return true;
}

/* inf.Dec Round(x, 9, RoundUp): drop digits below 10^-9, away from zero. */
static void qdec_round_nano_up(qdec *x)
{
    if (x->nd == 0 || x->exp >= -9)
        return;
    int64_t drop = -9 - x->exp;
    bool nonzero = true; /* normalised: the last digit is non-zero */
    if (drop >= x->nd) {
        x->nd = 1;
        x->d[0] = 1;
        x->exp = -9;
        (void)nonzero;
        return;
    }
    x->nd -= (int)drop;
    x->exp = -9;
    int i = x->nd - 1;
    while (i >= 0 && x->d[i] == 9) {
        x->d[i] = 0;
        i--;
    }
    if (i >= 0) {
        x->d[i]++;
    } else {
        memmove(x->d + 1, x->d, (size_t)x->nd);
        x->d[0] = 1;
        x->nd++;
    }
    qdec_norm(x);
}

static void qty_as_dec(const qty *q, qdec *out)
{
    if (q->is_dec)
        *out = q->dec;
    else
        qdec_from_i64(out, q->v, q->scale);
}

static bool i64_mul(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}

static bool pos_scale_i64(int64_t v, int32_t scale, int64_t *out)
{
    for (int32_t i = 0; i < scale; i++)
        if (!i64_mul(v, 10, &v))
            return false;
    *out = v;
    return true;
}

/* resource.ParseQuantity. */
static bool qty_parse(const char *s, size_t len, qty *q, const char **why)
{
    memset(q, 0, sizeof(*q));
    *why = "quantities must match the regular expression "
           "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    if (len == 0)
        return false;
    if (len == 1 && s[0] == '0')
        return true;
    size_t pos = 0;
    bool positive = true;
    if (s[0] == '-' || s[0] == '+') {
        positive = s[0] == '+';
        pos++;
    }
    while (pos < len && s[pos] == '0')
        pos++;
    if (pos >= len)
        return true; /* "-", "+", "000": zero */
    size_t ns = pos;
    while (pos < len && s[pos] >= '0' && s[pos] <= '9')
        pos++;
    const char *num = s + ns;
    size_t nlen = pos - ns;
    const char *den = "";
    size_t dlen = 0;
    if (pos < len && s[pos] == '.') {
        pos++;
        den = s + pos;
        while (pos < len && s[pos] >= '0' && s[pos] <= '9')
            pos++;
        dlen = (size_t)(s + pos - den);
    }
    size_t vend = pos;
    size_t sst = pos;
    while (pos < len && strchr("eEinumkKMGTP", s[pos]))
        pos++;
    if (pos < len && (s[pos] == '-' || s[pos] == '+'))
        pos++;
    while (pos < len && s[pos] >= '0' && s[pos] <= '9')
        pos++;
    if (pos != len)
        return false;
    const char *suf = s + sst;
    size_t sl = len - sst;
    /* interpret the suffix */
    static const struct {
        const char *s;
        int base, exp;
    } sufs[] = {{"", 10, 0},   {"n", 10, -9}, {"u", 10, -6}, {"m", 10, -3},
                {"k", 10, 3},  {"M", 10, 6},  {"G", 10, 9},  {"T", 10, 12},
                {"P", 10, 15}, {"E", 10, 18}, {"Ki", 2, 10}, {"Mi", 2, 20},
                {"Gi", 2, 30}, {"Ti", 2, 40}, {"Pi", 2, 50}, {"Ei", 2, 60}};
    int base = 0;
    int64_t exponent = 0;
    for (size_t i = 0; i < sizeof(sufs) / sizeof(sufs[0]); i++)
        if (strlen(sufs[i].s) == sl && memcmp(sufs[i].s, suf, sl) == 0) {
            base = sufs[i].base;
            exponent = sufs[i].exp;
        }
    bool dec_exp = false;
    if (!base && sl > 1 && (suf[0] == 'e' || suf[0] == 'E')) {
        char tmp[32];
        if (sl - 1 >= sizeof(tmp)) {
            *why = "unable to parse quantity's suffix";
            return false;
        }
        memcpy(tmp, suf + 1, sl - 1);
        tmp[sl - 1] = 0;
        char *end;
        errno = 0;
        long long e = strtoll(tmp, &end, 10);
        if (*end || errno || end == tmp) {
            *why = "unable to parse quantity's suffix";
            return false;
        }
        base = 10;
        exponent = (int32_t)e; /* Go: int32(parsed) */
        dec_exp = true;
    }
    if (!base) {
        *why = "unable to parse quantity's suffix";
        return false;
    }
    (void)dec_exp;
    if (nlen == 0) {
        num = "0";
        nlen = 1;
    }
    int64_t precision = 0, scale = 0, mantissa = 1;
    if (base == 10) {
        scale = exponent;
        precision = 18 - (int64_t)(nlen + dlen);
    } else if (dlen == 0) {
        mantissa = (int64_t)1 << exponent;
        precision = 15 - (int64_t)nlen - (int64_t)((float)exponent * 3 / 10) - 1;
    } else {
        precision = -1;
    }
    if (precision >= 0) {
        scale -= (int64_t)dlen;
        if (scale >= -9) {
            char sh[40];
            if (nlen + dlen < sizeof(sh)) {
                memcpy(sh, num, nlen);
                memcpy(sh + nlen, den, dlen);
                sh[nlen + dlen] = 0;
                int64_t value = strtoll(sh, NULL, 10), res;
                if (i64_mul(value, mantissa, &res)) {
                    q->v = positive ? res : -res;
                    q->scale = (int32_t)scale;
                    return true;
                }
            }
        }
    }
    /* the exact decimal path */
    qdec *x = &q->dec;
    q->is_dec = true;
    if (nlen + dlen > QD_MAX) {
        *why = "quantity has too many digits";
        return false;
    }
    x->nd = 0;
    for (size_t i = 0; i < nlen; i++)
        x->d[x->nd++] = (char)(num[i] - '0');
    for (size_t i = 0; i < dlen; i++)
        x->d[x->nd++] = (char)(den[i] - '0');
    x->exp = -(int64_t)dlen;
    x->sign = 1;
    (void)vend;
    qdec_norm(x);
    if (base == 10) {
        if (x->nd)
            x->exp += exponent;
    } else {
        for (int64_t i = 0; i < exponent / 10; i++)
            if (!qdec_mul_small(x, 1024)) {
                *why = "quantity has too many digits";
                return false;
            }
    }
    qdec_round_nano_up(x);
    if (base == 2) {
        qdec cap;
        qdec_from_i64(&cap, INT64_MAX, 0);
        if (qdec_cmp_abs(x, &cap) > 0) {
            *x = cap;
        }
    }
    if (!positive && x->nd)
        x->sign = -1;
    return true;
}

static gr_cel_val qty_new(const cel_node *n, const qty *q)
{
    char buf[QD_MAX + 48];
    int l;
    if (!q->is_dec) {
        l = snprintf(buf, sizeof(buf), "i%" PRId64 ",%d", q->v, (int)q->scale);
    } else {
        char dig[QD_MAX + 1];
        for (int i = 0; i < q->dec.nd; i++)
            dig[i] = (char)('0' + q->dec.d[i]);
        dig[q->dec.nd] = 0;
        l = snprintf(buf, sizeof(buf), "d%s%s,%" PRId64, q->dec.sign < 0 ? "-" : "",
                     q->dec.nd ? dig : "0", q->dec.exp);
    }
    return opaque_new(n, T_QUANTITY, buf, (size_t)l);
}

static bool qty_get(const gr_cel_val *v, qty *q)
{
    size_t l;
    const char *s = opaque_get(v, T_QUANTITY, &l);
    if (!s || l < 2)
        return false;
    memset(q, 0, sizeof(*q));
    if (s[0] == 'i') {
        long long a;
        int b;
        if (sscanf(s + 1, "%lld,%d", &a, &b) != 2)
            return false;
        q->v = a;
        q->scale = b;
        return true;
    }
    q->is_dec = true;
    size_t i = 1;
    q->dec.sign = 1;
    if (s[i] == '-') {
        q->dec.sign = -1;
        i++;
    }
    while (i < l && s[i] != ',' && q->dec.nd < QD_MAX)
        q->dec.d[q->dec.nd++] = (char)(s[i++] - '0');
    q->dec.exp = i < l ? strtoll(s + i + 1, NULL, 10) : 0;
    qdec_norm(&q->dec);
    return true;
}

static bool qty_as_i64(const qty *q, int64_t *out)
{
    if (q->is_dec)
        return false;
    if (q->scale == 0) {
        *out = q->v;
        return true;
    }
    if (q->scale < 0)
        return false;
    return pos_scale_i64(q->v, q->scale, out);
}

/* int64Amount.Add */
static bool i64amt_add(int64_t *av, int32_t *as, int64_t bv, int32_t bs)
{
    int64_t c;
    if (bv == 0)
        return true;
    if (*av == 0) {
        *av = bv;
        *as = bs;
        return true;
    }
    if (*as == bs)
        return !__builtin_add_overflow(*av, bv, av);
    if (*as > bs) {
        if (!pos_scale_i64(*av, *as - bs, &c) || __builtin_add_overflow(c, bv, &c))
            return false;
        *as = bs;
        *av = c;
        return true;
    }
    if (!pos_scale_i64(bv, bs - *as, &c) || __builtin_add_overflow(*av, c, &c))
        return false;
    *av = c;
    return true;
}

/* Quantity.Add / Quantity.Sub (sign -1). */
static bool qty_add(qty *q, const qty *y, int sign)
{
    if (!q->is_dec && !y->is_dec) {
        int64_t av = q->v, bv = sign < 0 ? -y->v : y->v;
        int32_t as = q->scale;
        if (i64amt_add(&av, &as, bv, y->scale)) {
            q->v = av;
            q->scale = as;
            return true;
        }
    }
    qdec a, b;
    qty_as_dec(q, &a);
    qty_as_dec(y, &b);
    q->is_dec = true;
    return qdec_add(&q->dec, &a, &b, sign);
}

static int qty_cmp(const qty *a, const qty *b)
{
    qdec x, y;
    qty_as_dec(a, &x);
    qty_as_dec(b, &y);
    return qdec_cmp(&x, &y);
}

static double qty_float(const qty *q)
{
    if (!q->is_dec)
        return q->scale == 0 ? (double)q->v : (double)q->v * pow(10, q->scale);
    char buf[QD_MAX + 40];
    int k = 0;
    if (q->dec.sign < 0)
        buf[k++] = '-';
    for (int i = 0; i < q->dec.nd; i++)
        buf[k++] = (char)('0' + q->dec.d[i]);
    if (!q->dec.nd)
        buf[k++] = '0';
    snprintf(buf + k, sizeof(buf) - (size_t)k, "e%" PRId64, q->dec.exp);
    return strtod(buf, NULL);
}

static int cel_lib_quantity_cmp(const gr_cel_val *a, const gr_cel_val *b, int *out)
{
    qty x, y;
    if (!qty_get(a, &x) || !qty_get(b, &y))
        return -1;
    *out = qty_cmp(&x, &y);
    return 0;
}

/* ---- IP and CIDR: Go's net/netip as Kubernetes uses it ---- */

typedef struct ipaddr {
    int family; /* 4 or 6 */
    unsigned char b[16];
} ipaddr;

static bool ip_parse(const char *s, size_t len, ipaddr *ip, char *why, size_t whysz)
{
    char buf[64];
    if (len == 0 || len >= sizeof(buf) || memchr(s, 0, len)) {
        snprintf(why, whysz, "IP Address \"%.*s\" parse error during conversion from string",
                 (int)(len > 64 ? 64 : len), s);
        return false;
    }
    memcpy(buf, s, len);
    buf[len] = 0;
    if (strchr(buf, '%')) {
        snprintf(why, whysz, "IP address \"%.60s\" with zone value is not allowed", buf);
        return false;
    }
    memset(ip, 0, sizeof(*ip));
    if (strchr(buf, ':')) {
        ip->family = 6;
        if (inet_pton(AF_INET6, buf, ip->b) != 1)
            goto bad;
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(ip->b, mapped, 12) == 0) {
            snprintf(why, whysz, "IPv4-mapped IPv6 address \"%.60s\" is not allowed", buf);
            return false;
        }
        return true;
    }
    ip->family = 4;
    if (inet_pton(AF_INET, buf, ip->b) == 1)
        return true;
bad:
    snprintf(
        why, whysz,
        "IP Address \"%.60s\" parse error during conversion from string: ParseAddr(\"%.60s\"): "
        "unable to parse IP",
        buf, buf);
    return false;
}

/* netip.Addr.String(): dotted quad, or RFC 5952 IPv6. */
static void ip_fmt(const ipaddr *ip, char *out, size_t outsz)
{
    if (ip->family == 4) {
        snprintf(out, outsz, "%u.%u.%u.%u", ip->b[0], ip->b[1], ip->b[2], ip->b[3]);
        return;
    }
    unsigned w[8];
    for (int i = 0; i < 8; i++)
        w[i] = (unsigned)ip->b[2 * i] << 8 | ip->b[2 * i + 1];
    int best = -1, bestlen = 0;
    for (int i = 0; i < 8;) {
        if (w[i] != 0) {
            i++;
            continue;
        }
        int j = i;
        while (j < 8 && w[j] == 0)
            j++;
        if (j - i > bestlen && j - i >= 2) {
            best = i;
            bestlen = j - i;
        }
        i = j;
    }
    size_t l = 0;
    out[0] = 0;
    for (int i = 0; i < 8 && l < outsz; i++) {
        if (i == best) {
            l += (size_t)snprintf(out + l, outsz - l, "::");
            i += bestlen - 1;
            continue;
        }
        l += (size_t)snprintf(out + l, outsz - l, "%s%x",
                              (i == 0 || (best >= 0 && i == best + bestlen)) ? "" : ":", w[i]);
    }
}

typedef struct cidrv {
    ipaddr ip;
    int bits;
} cidrv;

static bool cidr_parse(const char *s, size_t len, cidrv *c, char *why, size_t whysz)
{
    const char *slash = memchr(s, '/', len);
    if (!slash) {
        snprintf(why, whysz,
                 "network address parse error during conversion from string: netip.ParsePrefix("
                 "\"%.*s\"): no '/'",
                 (int)(len > 64 ? 64 : len), s);
        return false;
    }
    if (!ip_parse(s, (size_t)(slash - s), &c->ip, why, whysz)) {
        if (strstr(why, "IPv4-mapped"))
            snprintf(why, whysz, "IPv4-mapped IPv6 address \"%.*s\" is not allowed",
                     (int)(len > 64 ? 64 : len), s);
        else
            snprintf(why, whysz,
                     "network address parse error during conversion from string: "
                     "netip.ParsePrefix(\"%.*s\"): ParseAddr(\"%.*s\"): unable to parse IP",
                     (int)(len > 64 ? 64 : len), s, (int)(slash - s > 64 ? 64 : slash - s), s);
        return false;
    }
    const char *b = slash + 1, *e = s + len;
    int bits = 0, max = c->ip.family == 4 ? 32 : 128;
    bool ok = b < e && e - b <= 3 && !(e - b > 1 && *b == '0');
    for (const char *p = b; ok && p < e; p++) {
        ok = *p >= '0' && *p <= '9';
        bits = bits * 10 + (*p - '0');
    }
    if (!ok || bits > max) {
        snprintf(why, whysz,
                 "network address parse error during conversion from string: "
                 "netip.ParsePrefix(\"%.*s\"): bad bits after slash: \"%.*s\"",
                 (int)(len > 64 ? 64 : len), s, (int)(e - b > 8 ? 8 : e - b), b);
        return false;
    }
    c->bits = bits;
    return true;
}

static void ip_mask(ipaddr *ip, int bits)
{
    int n = ip->family == 4 ? 4 : 16;
    for (int i = 0; i < n; i++) {
        int keep = bits - i * 8;
        if (keep >= 8)
            continue;
        ip->b[i] &= keep <= 0 ? 0 : (unsigned char)(0xff << (8 - keep));
    }
}

static bool cidr_contains_ip(const cidrv *c, const ipaddr *ip)
{
    if (c->ip.family != ip->family)
        return false;
    ipaddr a = c->ip, b = *ip;
    ip_mask(&a, c->bits);
    ip_mask(&b, c->bits);
    return memcmp(a.b, b.b, 16) == 0;
}

static gr_cel_val ip_new(const cel_node *n, const ipaddr *ip)
{
    char buf[64];
    ip_fmt(ip, buf, sizeof(buf));
    return opaque_new(n, T_IP, buf, strlen(buf));
}

static gr_cel_val cidr_new(const cel_node *n, const cidrv *c)
{
    char buf[80];
    ip_fmt(&c->ip, buf, sizeof(buf));
    size_t l = strlen(buf);
    snprintf(buf + l, sizeof(buf) - l, "/%d", c->bits);
    return opaque_new(n, T_CIDR, buf, strlen(buf));
}

static bool ip_get(const gr_cel_val *v, ipaddr *ip)
{
    size_t l;
    char why[400];
    const char *s = opaque_get(v, T_IP, &l);
    return s && ip_parse(s, l, ip, why, sizeof(why));
}

static bool cidr_get(const gr_cel_val *v, cidrv *c)
{
    size_t l;
    char why[400];
    const char *s = opaque_get(v, T_CIDR, &l);
    return s && cidr_parse(s, l, c, why, sizeof(why));
}

static bool ip_in(const ipaddr *ip, const unsigned char *pfx, int bits)
{
    ipaddr p = {ip->family, {0}};
    memcpy(p.b, pfx, ip->family == 4 ? 4 : 16);
    cidrv c = {p, bits};
    return cidr_contains_ip(&c, ip);
}

static gr_cel_val ip_method(const cel_node *n, const gr_cel_val *a, const ipaddr *ip)
{
    static const unsigned char zero[16] = {0};
    static const unsigned char v4loop[4] = {127, 0, 0, 0}, v4llm[4] = {224, 0, 0, 0},
                               v4llu[4] = {169, 254, 0, 0}, v4mc[4] = {224, 0, 0, 0},
                               v6llm[16] = {0xff, 0x02}, v6llu[16] = {0xfe, 0x80},
                               v6mc[16] = {0xff};
    bool v4 = ip->family == 4;
    int n_ = v4 ? 4 : 16;
    bool unspec = memcmp(ip->b, zero, (size_t)n_) == 0;
    bool loop = v4 ? ip_in(ip, v4loop, 8) : (memcmp(ip->b, zero, 15) == 0 && ip->b[15] == 1);
    bool llu = v4 ? ip_in(ip, v4llu, 16) : ip_in(ip, v6llu, 10);
    bool mc = v4 ? ip_in(ip, v4mc, 4) : ip_in(ip, v6mc, 8);
    switch (n->fn) {
    case F_IP_FAMILY:
        return gr_cel_val_int(ip->family);
    case F_IP_ISUNSPECIFIED:
        return gr_cel_val_bool(unspec);
    case F_IP_ISLOOPBACK:
        return gr_cel_val_bool(loop);
    case F_IP_ISLLM:
        /* netip: 224.0.0.0/24, and ff02::/16 (scope bits only) */
        return gr_cel_val_bool(v4 ? ip_in(ip, v4llm, 24)
                                  : (ip->b[0] == 0xff && (ip->b[1] & 0x0f) == 0x02));
    case F_IP_ISLLU:
        return gr_cel_val_bool(llu);
    case F_IP_ISGLOBAL: {
        bool bcast = v4 && ip->b[0] == 255 && ip->b[1] == 255 && ip->b[2] == 255 && ip->b[3] == 255;
        (void)v6llm;
        return gr_cel_val_bool(!unspec && !bcast && !loop && !mc && !llu);
    }
    default:
        return cel_no_overload(n, a, 1);
    }
}

gr_cel_val cel_lib_to_string(const gr_cel_val *v)
{
    size_t l;
    const char *s = opaque_get(v, T_IP, &l);
    if (!s)
        s = opaque_get(v, T_CIDR, &l);
    if (!s)
        s = opaque_get(v, T_URL, &l);
    if (!s)
        return (gr_cel_val){0};
    return cel_str_new(GR_CEL_STRING, s, l);
}

static gr_cel_val quantity_call(const cel_node *n, gr_cel_val *a, size_t na)
{
    qty q, y;
    const char *why;
    if (n->fn == F_QUANTITY || n->fn == F_ISQUANTITY) {
        if (a[0].kind != GR_CEL_STRING)
            return cel_no_overload(n, a, 1);
        size_t l;
        const char *s = cel_sv(&a[0], &l);
        bool ok = qty_parse(s, l, &q, &why);
        if (n->fn == F_ISQUANTITY)
            return gr_cel_val_bool(ok);
        if (!ok)
            return cel_err(GR_EINVAL, n->off, "%s", why);
        return qty_new(n, &q);
    }
    if (!qty_get(&a[0], &q))
        return cel_no_overload(n, a, na);
    int64_t i;
    switch (n->fn) {
    case F_QSIGN: {
        qdec d;
        qty_as_dec(&q, &d);
        return gr_cel_val_int(d.sign);
    }
    case F_QISINTEGER:
        return gr_cel_val_bool(qty_as_i64(&q, &i));
    case F_QASINTEGER:
        if (!qty_as_i64(&q, &i))
            return cel_err(GR_EINVAL, n->off, "cannot convert value to integer");
        return gr_cel_val_int(i);
    case F_QASFLOAT:
        return gr_cel_val_double(qty_float(&q));
    case F_QADD:
    case F_QSUB:
        if (a[1].kind == GR_CEL_INT) {
            memset(&y, 0, sizeof(y));
            y.v = a[1].u.i;
        } else if (!qty_get(&a[1], &y)) {
            return cel_no_overload(n, a, na);
        }
        if (!qty_add(&q, &y, n->fn == F_QSUB ? -1 : 1))
            return cel_err(GR_EINVAL, n->off, "quantity out of range");
        return qty_new(n, &q);
    default: /* compareTo, isGreaterThan, isLessThan */
        if (!qty_get(&a[1], &y))
            return cel_no_overload(n, a, na);
        int c = qty_cmp(&q, &y);
        if (n->fn == F_COMPARETO)
            return gr_cel_val_int(c);
        return gr_cel_val_bool(n->fn == F_ISGREATERTHAN ? c > 0 : c < 0);
    }
}

static gr_cel_val net_call(const cel_node *n, gr_cel_val *a, size_t na)
{
    char why[400];
    ipaddr ip;
    cidrv c;
    size_t l;
    const char *s = a[0].kind == GR_CEL_STRING ? cel_sv(&a[0], &l) : NULL;
    switch (n->fn) {
    case F_IP:
        if (cidr_get(&a[0], &c)) /* cidr.ip(): the prefix's address */
            return ip_new(n, &c.ip);
        if (!s)
            return cel_no_overload(n, a, na);
        if (!ip_parse(s, l, &ip, why, sizeof(why)))
            return cel_err(GR_EINVAL, n->off, "%s", why);
        return ip_new(n, &ip);
    case F_ISIP:
        if (!s)
            return cel_no_overload(n, a, na);
        return gr_cel_val_bool(ip_parse(s, l, &ip, why, sizeof(why)));
    case F_IP_ISCANONICAL: {
        if (!s)
            return cel_no_overload(n, a, na);
        if (!ip_parse(s, l, &ip, why, sizeof(why)))
            return cel_err(GR_EINVAL, n->off, "%s", why);
        char buf[64];
        ip_fmt(&ip, buf, sizeof(buf));
        return gr_cel_val_bool(strlen(buf) == l && memcmp(buf, s, l) == 0);
    }
    case F_CIDR:
        if (!s)
            return cel_no_overload(n, a, na);
        if (!cidr_parse(s, l, &c, why, sizeof(why)))
            return cel_err(GR_EINVAL, n->off, "%s", why);
        return cidr_new(n, &c);
    case F_ISCIDR:
        if (!s)
            return cel_no_overload(n, a, na);
        return gr_cel_val_bool(cidr_parse(s, l, &c, why, sizeof(why)));
    case F_CIDR_CONTAINSIP:
    case F_CIDR_CONTAINSCIDR:
    case F_CIDR_PREFIXLEN:
    case F_CIDR_MASKED: {
        if (!cidr_get(&a[0], &c))
            return cel_no_overload(n, a, na);
        if (n->fn == F_CIDR_PREFIXLEN)
            return gr_cel_val_int(c.bits);
        if (n->fn == F_CIDR_MASKED) {
            ip_mask(&c.ip, c.bits);
            return cidr_new(n, &c);
        }
        size_t l2;
        const char *s2 = a[1].kind == GR_CEL_STRING ? cel_sv(&a[1], &l2) : NULL;
        if (n->fn == F_CIDR_CONTAINSIP) {
            if (s2) {
                if (!ip_parse(s2, l2, &ip, why, sizeof(why)))
                    return cel_err(GR_EINVAL, n->off, "%s", why);
            } else if (!ip_get(&a[1], &ip)) {
                return cel_no_overload(n, a, na);
            }
            return gr_cel_val_bool(cidr_contains_ip(&c, &ip));
        }
        cidrv o;
        if (s2) {
            if (!cidr_parse(s2, l2, &o, why, sizeof(why)))
                return cel_err(GR_EINVAL, n->off, "%s", why);
        } else if (!cidr_get(&a[1], &o)) {
            return cel_no_overload(n, a, na);
        }
        return gr_cel_val_bool(c.bits <= o.bits && cidr_contains_ip(&c, &o.ip));
    }
    default:
        if (!ip_get(&a[0], &ip))
            return cel_no_overload(n, a, na);
        return ip_method(n, a, &ip);
    }
}

/* ---- semver: github.com/blang/semver/v4 as Kubernetes' semver library ---- */

typedef struct semv {
    uint64_t maj, min, pat;
    const char *pre; /* pre-release identifiers ("rc.1"), not NUL-terminated */
    size_t prelen;
} semv;

static bool all_of(const char *s, size_t n, const char *set)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr(set, s[i]) || s[i] == 0)
            return false;
    return true;
}

#define SV_NUM   "0123456789"
#define SV_ALNUM "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-"

static bool sv_num(const char *s, size_t n, uint64_t *out, const char *what, char *why,
                   size_t whysz)
{
    if (!all_of(s, n, SV_NUM) || n == 0) {
        snprintf(why, whysz, "Invalid character(s) found in %s number \"%.*s\"", what,
                 (int)(n > 32 ? 32 : n), s);
        return false;
    }
    if (n > 1 && s[0] == '0') {
        snprintf(why, whysz, "%c%s number must not contain leading zeroes \"%.*s\"", what[0] - 32,
                 what + 1, (int)(n > 32 ? 32 : n), s);
        return false;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10) {
            snprintf(why, whysz, "strconv.ParseUint: parsing \"%.*s\": value out of range",
                     (int)(n > 32 ? 32 : n), s);
            return false;
        }
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* semver.Parse (strict) of s[0..n). */
static bool sv_parse(const char *s, size_t n, semv *v, char *why, size_t whysz)
{
    memset(v, 0, sizeof(*v));
    if (n == 0) {
        snprintf(why, whysz, "Version string empty");
        return false;
    }
    const char *d1 = memchr(s, '.', n);
    const char *d2 = d1 ? memchr(d1 + 1, '.', (size_t)(s + n - d1 - 1)) : NULL;
    if (!d2) {
        snprintf(why, whysz, "No Major.Minor.Patch elements found");
        return false;
    }
    if (!sv_num(s, (size_t)(d1 - s), &v->maj, "major", why, whysz) ||
        !sv_num(d1 + 1, (size_t)(d2 - d1 - 1), &v->min, "minor", why, whysz))
        return false;
    const char *p = d2 + 1, *e = s + n;
    const char *plus = memchr(p, '+', (size_t)(e - p));
    const char *pend = plus ? plus : e;
    if (plus) { /* build metadata: dot-separated, non-empty, alphanumeric */
        const char *b = plus + 1;
        for (;;) {
            const char *dot = memchr(b, '.', (size_t)(e - b));
            const char *be = dot ? dot : e;
            if (be == b) {
                snprintf(why, whysz, "Build meta data is empty");
                return false;
            }
            if (!all_of(b, (size_t)(be - b), SV_ALNUM)) {
                snprintf(why, whysz, "Invalid character(s) found in build meta data \"%.*s\"",
                         (int)(be - b > 32 ? 32 : be - b), b);
                return false;
            }
            if (!dot)
                break;
            b = dot + 1;
        }
    }
    const char *dash = memchr(p, '-', (size_t)(pend - p));
    if (!sv_num(p, (size_t)((dash ? dash : pend) - p), &v->pat, "patch", why, whysz))
        return false;
    if (dash) {
        v->pre = dash + 1;
        v->prelen = (size_t)(pend - dash - 1);
        const char *b = v->pre;
        for (;;) {
            const char *dot = memchr(b, '.', (size_t)(pend - b));
            const char *be = dot ? dot : pend;
            size_t l = (size_t)(be - b);
            if (l == 0) {
                snprintf(why, whysz, "Prerelease is empty");
                return false;
            }
            if (all_of(b, l, SV_NUM)) {
                if (l > 1 && b[0] == '0') {
                    snprintf(why, whysz,
                             "Numeric PreRelease version must not contain leading zeroes \"%.*s\"",
                             (int)(l > 32 ? 32 : l), b);
                    return false;
                }
            } else if (!all_of(b, l, SV_ALNUM)) {
                snprintf(why, whysz, "Invalid character(s) found in prerelease \"%.*s\"",
                         (int)(l > 32 ? 32 : l), b);
                return false;
            }
            if (!dot)
                break;
            b = dot + 1;
        }
    }
    return true;
}

/* normalizeAndParse: strip "v", leading zeros, fill missing minor/patch. */
static bool sv_parse_norm(const char *s, size_t n, semv *v, char *buf, size_t bufsz, char *why,
                          size_t whysz)
{
    if (n > 0 && s[0] == 'v') {
        s++;
        n--;
    }
    const char *parts[3];
    size_t lens[3];
    int np = 0;
    const char *p = s, *e = s + n;
    while (np < 2) {
        const char *dot = memchr(p, '.', (size_t)(e - p));
        if (!dot)
            break;
        parts[np] = p;
        lens[np++] = (size_t)(dot - p);
        p = dot + 1;
    }
    parts[np] = p;
    lens[np++] = (size_t)(e - p);
    size_t bl = 0;
    for (int i = 0; i < np; i++) {
        const char *q = parts[i];
        size_t l = lens[i];
        bool zero_prefix = false;
        if (l > 1) {
            while (l > 0 && *q == '0') {
                q++;
                l--;
            }
            zero_prefix = l == 0 || !(*q >= '0' && *q <= '9');
        }
        if (bl + l + 3 >= bufsz)
            return false;
        if (i)
            buf[bl++] = '.';
        if (zero_prefix)
            buf[bl++] = '0';
        memcpy(buf + bl, q, l);
        bl += l;
    }
    if (np < 3) {
        if (memchr(parts[np - 1], '+', lens[np - 1]) || memchr(parts[np - 1], '-', lens[np - 1])) {
            snprintf(why, whysz, "short version cannot contain PreRelease/Build meta data");
            return false;
        }
        for (; np < 3; np++) {
            if (bl + 3 >= bufsz)
                return false;
            buf[bl++] = '.';
            buf[bl++] = '0';
        }
    }
    buf[bl] = 0;
    return sv_parse(buf, bl, v, why, whysz);
}

static int u64cmp(uint64_t a, uint64_t b)
{
    return a == b ? 0 : a > b ? 1 : -1;
}

static int sv_cmp(const semv *a, const semv *b)
{
    int c = u64cmp(a->maj, b->maj);
    if (!c)
        c = u64cmp(a->min, b->min);
    if (!c)
        c = u64cmp(a->pat, b->pat);
    if (c)
        return c;
    if (!a->prelen || !b->prelen)
        return (a->prelen == 0) - (b->prelen == 0);
    const char *x = a->pre, *xe = a->pre + a->prelen, *y = b->pre, *ye = b->pre + b->prelen;
    for (;;) {
        const char *xd = memchr(x, '.', (size_t)(xe - x)), *yd = memchr(y, '.', (size_t)(ye - y));
        size_t xl = (size_t)((xd ? xd : xe) - x), yl = (size_t)((yd ? yd : ye) - y);
        bool xn = all_of(x, xl, SV_NUM), yn = all_of(y, yl, SV_NUM);
        int r;
        if (xn != yn) {
            r = xn ? -1 : 1;
        } else if (xn) {
            r = xl != yl ? (xl > yl ? 1 : -1) : memcmp(x, y, xl);
        } else {
            r = memcmp(x, y, xl < yl ? xl : yl);
            if (!r)
                r = xl == yl ? 0 : xl > yl ? 1 : -1;
        }
        if (r)
            return r > 0 ? 1 : -1;
        if (!xd || !yd)
            return (xd != NULL) - (yd != NULL);
        x = xd + 1;
        y = yd + 1;
    }
}

static bool sv_get(const gr_cel_val *v, semv *out)
{
    size_t l;
    char why[200];
    const char *s = opaque_get(v, T_SEMVER, &l);
    return s && sv_parse(s, l, out, why, sizeof(why));
}

static gr_cel_val semver_call(const cel_node *n, gr_cel_val *a, size_t na)
{
    char why[200], buf[512];
    semv v, o;
    if (n->fn == F_SEMVER || n->fn == F_ISSEMVER) {
        if (a[0].kind != GR_CEL_STRING || (na == 2 && a[1].kind != GR_CEL_BOOL))
            return cel_no_overload(n, a, na);
        size_t l;
        const char *s = cel_sv(&a[0], &l);
        bool norm = na == 2 && a[1].u.b;
        bool ok = norm ? sv_parse_norm(s, l, &v, buf, sizeof(buf), why, sizeof(why))
                       : sv_parse(s, l, &v, why, sizeof(why));
        if (n->fn == F_ISSEMVER)
            return gr_cel_val_bool(ok);
        if (!ok)
            return cel_err(GR_EINVAL, n->off, "%s", why);
        return opaque_new(n, T_SEMVER, norm ? buf : s, norm ? strlen(buf) : l);
    }
    if (!sv_get(&a[0], &v))
        return cel_no_overload(n, a, na);
    switch (n->fn) {
    case F_SEMVER_MAJOR:
        return gr_cel_val_int((int64_t)v.maj);
    case F_SEMVER_MINOR:
        return gr_cel_val_int((int64_t)v.min);
    case F_SEMVER_PATCH:
        return gr_cel_val_int((int64_t)v.pat);
    default: {
        if (na != 2 || !sv_get(&a[1], &o))
            return cel_no_overload(n, a, na);
        int c = sv_cmp(&v, &o);
        if (n->fn == F_COMPARETO)
            return gr_cel_val_int(c);
        return gr_cel_val_bool(n->fn == F_ISGREATERTHAN ? c > 0 : c < 0);
    }
    }
}

int cel_lib_opaque_cmp(const gr_cel_val *a, const gr_cel_val *b, int *out)
{
    semv x, y;
    if (sv_get(a, &x) && sv_get(b, &y)) { /* Version.EQ: build metadata ignored */
        *out = sv_cmp(&x, &y);
        return 0;
    }
    return cel_lib_quantity_cmp(a, b, out);
}

/* ---- URLs: Go's net/url (ParseRequestURI to accept, Parse to read) ---- */

typedef struct urlp {
    const char *scheme, *host, *path, *query;
    size_t slen, hlen, plen, qlen;
    bool has_query;
} urlp;

static int unhex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool valid_escapes(const char *s, size_t n, char *why, size_t whysz)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '%' && (i + 2 >= n || unhex(s[i + 1]) < 0 || unhex(s[i + 2]) < 0)) {
            snprintf(why, whysz, "invalid URL escape \"%.*s\"", (int)(n - i < 3 ? n - i : 3),
                     s + i);
            return false;
        }
    return true;
}

/* Go's validOptionalPort: "" or ":" digits*. */
static bool valid_port(const char *s, size_t n)
{
    if (n == 0)
        return true;
    if (s[0] != ':')
        return false;
    for (size_t i = 1; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

static bool host_char_ok(unsigned char c)
{
    if (c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return strchr("-_.~!$&'()*+,;=:[]<>\"%", c) != NULL && c != 0;
}

/* Parse; request = ParseRequestURI (absolute URI or absolute path, the
 * fragment is not split off). */
static bool url_parse(const char *s, size_t n, bool request, urlp *u, char *why, size_t whysz)
{
    memset(u, 0, sizeof(*u));
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
            snprintf(why, whysz, "parse \"%.*s\": net/url: invalid control character in URL",
                     (int)(n > 64 ? 64 : n), s);
            return false;
        }
    if (!request) {
        const char *h = memchr(s, '#', n);
        if (h) {
            if (!valid_escapes(h + 1, (size_t)(s + n - h - 1), why, whysz))
                return false;
            n = (size_t)(h - s);
        }
    }
    if (n == 0 && request) {
        snprintf(why, whysz, "parse \"\": empty url");
        return false;
    }
    const char *rest = s, *e = s + n;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
            continue;
        if (((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') && i > 0)
            continue;
        if (c == ':') {
            if (i == 0) {
                snprintf(why, whysz, "parse \"%.*s\": missing protocol scheme",
                         (int)(n > 64 ? 64 : n), s);
                return false;
            }
            u->scheme = s;
            u->slen = i;
            rest = s + i + 1;
        }
        break;
    }
    const char *q = memchr(rest, '?', (size_t)(e - rest));
    if (q) {
        u->has_query = true;
        u->query = q + 1;
        u->qlen = (size_t)(e - q - 1);
        e = q;
    }
    if (rest == e || *rest != '/') {
        if (u->slen)
            return true; /* opaque: "mailto:x" */
        if (request) {
            snprintf(why, whysz, "parse \"%.*s\": invalid URI for request", (int)(n > 64 ? 64 : n),
                     s);
            return false;
        }
        const char *sl = memchr(rest, '/', (size_t)(e - rest));
        if (memchr(rest, ':', (size_t)((sl ? sl : e) - rest))) {
            snprintf(why, whysz, "parse \"%.*s\": first path segment in URL cannot contain colon",
                     (int)(n > 64 ? 64 : n), s);
            return false;
        }
    }
    if ((u->slen || (!request && !(e - rest >= 3 && memcmp(rest, "///", 3) == 0))) &&
        e - rest >= 2 && rest[0] == '/' && rest[1] == '/') {
        const char *a = rest + 2;
        const char *sl = memchr(a, '/', (size_t)(e - a));
        const char *ae = sl ? sl : e;
        const char *at_ = NULL;
        for (const char *p = a; p < ae; p++)
            if (*p == '@')
                at_ = p;
        const char *h = at_ ? at_ + 1 : a;
        size_t hl = (size_t)(ae - h);
        bool ok = true;
        if (hl > 0 && h[0] == '[') {
            const char *rb = NULL;
            for (const char *p = h; p < ae; p++)
                if (*p == ']')
                    rb = p;
            if (!rb) {
                snprintf(why, whysz, "parse \"%.*s\": missing ']' in host", (int)(n > 64 ? 64 : n),
                         s);
                return false;
            }
            ok = valid_port(rb + 1, (size_t)(ae - rb - 1));
        } else {
            const char *colon = NULL;
            for (const char *p = h; p < ae; p++)
                if (*p == ':')
                    colon = p;
            if (colon)
                ok = valid_port(colon, (size_t)(ae - colon));
        }
        if (!ok) {
            snprintf(why, whysz, "parse \"%.*s\": invalid port after host", (int)(n > 64 ? 64 : n),
                     s);
            return false;
        }
        for (size_t i = 0; i < hl; i++)
            if (!host_char_ok((unsigned char)h[i])) {
                snprintf(why, whysz, "parse \"%.*s\": invalid character \"%c\" in host name",
                         (int)(n > 64 ? 64 : n), s, h[i]);
                return false;
            }
        if (!valid_escapes(h, hl, why, whysz))
            return false;
        u->host = h;
        u->hlen = hl;
        rest = ae;
    }
    if (!valid_escapes(rest, (size_t)(e - rest), why, whysz))
        return false;
    u->path = rest;
    u->plen = (size_t)(e - rest);
    return true;
}

static gr_cel_val url_query(const cel_node *n, const urlp *u)
{
    /* url.ParseQuery: pairs split on '&'; a key with ';' or a bad escape is
     * dropped; '+' is a space. Values keep their order. */
    cel_vec keys = {0}, vals = {0};
    const char *p = u->has_query ? u->query : "", *e = p + (u->has_query ? u->qlen : 0);
    bool ok = true;
    while (ok && u->has_query && p <= e) {
        const char *amp = memchr(p, '&', (size_t)(e - p));
        const char *pe = amp ? amp : e;
        const char *eq = memchr(p, '=', (size_t)(pe - p));
        bool skip = pe == p || memchr(p, ';', (size_t)(pe - p)) != NULL;
        char *dec[2] = {NULL, NULL};
        const char *part[2] = {p, eq ? eq + 1 : pe};
        size_t plen[2] = {(size_t)((eq ? eq : pe) - p), eq ? (size_t)(pe - eq - 1) : 0};
        size_t dl[2] = {0, 0};
        for (int k = 0; k < 2 && !skip; k++) {
            dec[k] = malloc(plen[k] + 1);
            if (!dec[k]) {
                ok = false;
                break;
            }
            for (size_t i = 0; i < plen[k]; i++) {
                char c = part[k][i];
                if (c == '+') {
                    c = ' ';
                } else if (c == '%') {
                    if (i + 2 >= plen[k] || unhex(part[k][i + 1]) < 0 ||
                        unhex(part[k][i + 2]) < 0) {
                        skip = true;
                        break;
                    }
                    c = (char)(unhex(part[k][i + 1]) * 16 + unhex(part[k][i + 2]));
                    i += 2;
                }
                dec[k][dl[k]++] = c;
            }
        }
        if (ok && !skip && cel_utf8_valid(dec[0], dl[0]) && cel_utf8_valid(dec[1], dl[1])) {
            size_t j = 0;
            for (; j < keys.n; j++) {
                size_t kl;
                const char *ks = cel_sv(&keys.v[j], &kl);
                if (kl == dl[0] && memcmp(ks, dec[0], kl) == 0)
                    break;
            }
            gr_cel_val sv = cel_str_new(GR_CEL_STRING, dec[1], dl[1]);
            if (cel_is_err(&sv)) {
                gr_cel_val_release(&sv);
                ok = false;
            } else if (j == keys.n) {
                gr_cel_val kv = cel_str_new(GR_CEL_STRING, dec[0], dl[0]);
                ok = !cel_is_err(&kv);
                if (!ok)
                    gr_cel_val_release(&kv);
                ok = ok && cel_vec_push(&keys, kv) && cel_vec_push(&vals, (gr_cel_val){0});
                if (ok) {
                    vals.v[j] = cel_lib_list_of(n, &sv, 1);
                    ok = !cel_is_err(&vals.v[j]);
                } else {
                    gr_cel_val_release(&sv);
                }
            } else {
                size_t ln;
                gr_cel_val *items = cel_lib_list_items(&vals.v[j], &ln);
                gr_cel_val *grown = items ? realloc(items, (ln + 1) * sizeof(*grown)) : NULL;
                if (!grown) {
                    if (items)
                        cel_lib_items_free(items, ln);
                    gr_cel_val_release(&sv);
                    ok = false;
                } else {
                    grown[ln] = sv;
                    gr_cel_val_release(&vals.v[j]);
                    vals.v[j] = cel_lib_list_of(n, grown, ln + 1);
                    free(grown);
                    ok = !cel_is_err(&vals.v[j]);
                }
            }
        }
        free(dec[0]);
        free(dec[1]);
        if (!amp)
            break;
        p = amp + 1;
    }
    gr_cel_val *mk, *mv;
    gr_cel_val r = ok ? cel_map_alloc(keys.n, &mk, &mv) : cel_lib_oom(n);
    if (!cel_is_err(&r)) {
        for (size_t i = 0; i < keys.n; i++) {
            mk[i] = keys.v[i];
            mv[i] = vals.v[i];
        }
        keys.n = vals.n = 0;
    }
    cel_lib_items_free(keys.v, keys.n);
    cel_lib_items_free(vals.v, vals.n);
    return cel_lib_at(n, r);
}

/* Go's URL.EscapedPath for a path that parsed: the raw text, with bytes the
 * path may not hold unescaped percent-encoded. */
static gr_cel_val url_escaped_path(const cel_node *n, const urlp *u)
{
    gr_buf b = GR_BUF_INIT(CEL_TEXT_MAX);
    int rc = GR_OK;
    for (size_t i = 0; i < u->plen && rc == GR_OK; i++) {
        unsigned char c = (unsigned char)u->path[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  (c && strchr("-_.~$&+,/:;=@!'()*%", c));
        rc = ok ? gr_buf_putc(&b, (char)c) : gr_buf_printf(&b, "%%%02X", c);
    }
    if (rc != GR_OK) {
        gr_buf_free(&b);
        return cel_lib_oom(n);
    }
    return cel_lib_str_from_buf(n, &b);
}

static gr_cel_val url_call(const cel_node *n, gr_cel_val *a, size_t na)
{
    char why[300];
    urlp u;
    size_t l;
    if (n->fn == F_URL || n->fn == F_ISURL) {
        if (a[0].kind != GR_CEL_STRING)
            return cel_no_overload(n, a, na);
        const char *s = cel_sv(&a[0], &l);
        bool ok = url_parse(s, l, true, &u, why, sizeof(why)) &&
                  url_parse(s, l, false, &u, why, sizeof(why));
        if (n->fn == F_ISURL)
            return gr_cel_val_bool(url_parse(s, l, true, &u, why, sizeof(why)));
        if (!ok)
            return cel_err(GR_EINVAL, n->off, "URL parse error during conversion from string: %s",
                           why);
        return opaque_new(n, T_URL, s, l);
    }
    const char *s = opaque_get(&a[0], T_URL, &l);
    if (!s || !url_parse(s, l, false, &u, why, sizeof(why)))
        return cel_no_overload(n, a, na);
    char lower[64];
    switch (n->fn) {
    case F_URL_SCHEME: {
        size_t k = u.slen < sizeof(lower) ? u.slen : sizeof(lower) - 1;
        for (size_t i = 0; i < k; i++)
            lower[i] =
                (char)(u.scheme[i] >= 'A' && u.scheme[i] <= 'Z' ? u.scheme[i] + 32 : u.scheme[i]);
        return cel_lib_at(n, cel_str_new(GR_CEL_STRING, lower, k));
    }
    case F_URL_HOST:
        return cel_lib_at(n, cel_str_new(GR_CEL_STRING, u.host ? u.host : "", u.hlen));
    case F_URL_HOSTNAME:
    case F_URL_PORT: {
        const char *h = u.host ? u.host : "";
        size_t hl = u.hlen, pl = 0;
        const char *port = "";
        const char *colon = NULL;
        for (size_t i = 0; i < hl; i++)
            if (h[i] == ':')
                colon = h + i;
        if (colon && valid_port(colon, (size_t)(h + hl - colon))) {
            port = colon + 1;
            pl = (size_t)(h + hl - port);
            hl = (size_t)(colon - h);
        }
        if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
            h++;
            hl -= 2;
        }
        if (n->fn == F_URL_PORT)
            return cel_lib_at(n, cel_str_new(GR_CEL_STRING, port, pl));
        return cel_lib_at(n, cel_str_new(GR_CEL_STRING, h, hl));
    }
    case F_URL_PATH:
        return url_escaped_path(n, &u);
    case F_URL_QUERY:
        return url_query(n, &u);
    default:
        return cel_no_overload(n, a, na);
    }
}

/* ---- Kubernetes format library: format.named(n), format.<name>(), f.validate(s) ----
 *
 * The validators and their messages are those of k8s.io/apimachinery
 * (util/validation, api/validate/content) and kube-openapi's strfmt, as
 * k8s.io/apiserver/pkg/cel/library/format.go wires them. */

#define T_FORMAT "kubernetes.NamedFormat"

static const char *const fmt_names[] = {
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
};
#define NFMT (sizeof(fmt_names) / sizeof(fmt_names[0]))

static int fmt_index(const char *s, size_t l)
{
    for (size_t i = 0; i < NFMT; i++)
        if (strlen(fmt_names[i]) == l && memcmp(fmt_names[i], s, l) == 0)
            return (int)i;
    return -1;
}

static bool in_class(char c, const char *cls)
{
    /* cls: "a" lower, "A" upper, "0" digit, other characters literal */
    for (; *cls; cls++) {
        if ((*cls == 'a' && c >= 'a' && c <= 'z') || (*cls == 'A' && c >= 'A' && c <= 'Z') ||
            (*cls == '0' && c >= '0' && c <= '9') ||
            (*cls != 'a' && *cls != 'A' && *cls != '0' && *cls == c))
            return true;
    }
    return false;
}

/* first (mid* last)? */
static bool label_match(const char *s, size_t n, const char *first, const char *mid,
                        const char *last)
{
    if (n == 0 || !in_class(s[0], first))
        return false;
    if (n == 1)
        return true;
    for (size_t i = 1; i + 1 < n; i++)
        if (!in_class(s[i], mid))
            return false;
    return in_class(s[n - 1], last);
}

static bool subdomain_match(const char *s, size_t n)
{
    size_t st = 0;
    for (size_t i = 0; i <= n; i++)
        if (i == n || s[i] == '.') {
            if (!label_match(s + st, i - st, "a0", "-a0", "a0"))
                return false;
            st = i + 1;
        }
    return true;
}

#define DNS1123_LABEL_ERR                                                                        \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and " \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "   \
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define DNS1123_SUBDOMAIN_ERR                                                                     \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "  \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used " \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define DNS1035_LABEL_ERR                                                                        \
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an " \
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "         \
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
#define LABEL_KEY_RE "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define LABEL_KEY_ERR                                                                           \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "      \
    "validation is " LABEL_KEY_RE
#define LABEL_VALUE_ERR                                                                         \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or " \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "          \
    "'my_value',  or '12345', regex used for validation is "                                    \
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

static bool push_msg(cel_vec *out, const char *prefix, const char *msg)
{
    gr_buf b = GR_BUF_INIT(CEL_TEXT_MAX);
    if (gr_buf_puts(&b, prefix) != GR_OK || gr_buf_puts(&b, msg) != GR_OK) {
        gr_buf_free(&b);
        return false;
    }
    gr_cel_val v = cel_str_new(GR_CEL_STRING, b.data, b.len);
    gr_buf_free(&b);
    if (cel_is_err(&v)) {
        gr_cel_val_release(&v);
        return false;
    }
    return cel_vec_push(out, v);
}

static bool v_dns1123_label(const char *s, size_t n, cel_vec *out)
{
    bool ok = true;
    if (n > 63)
        ok = push_msg(out, "", "must be no more than 63 characters");
    if (ok && !label_match(s, n, "a0", "-a0", "a0"))
        ok = push_msg(out, "", subdomain_match(s, n) ? "must not contain dots" : DNS1123_LABEL_ERR);
    return ok;
}

static bool v_dns1123_subdomain(const char *s, size_t n, cel_vec *out, const char *prefix)
{
    bool ok = true;
    if (n > 253) /* util/validation says characters, api/validate/content bytes */
        ok = push_msg(out, prefix,
                      prefix[0] ? "must be no more than 253 bytes"
                                : "must be no more than 253 characters");
    if (ok && !subdomain_match(s, n))
        ok = push_msg(out, prefix, DNS1123_SUBDOMAIN_ERR);
    return ok;
}

static bool v_dns1035_label(const char *s, size_t n, cel_vec *out)
{
    bool ok = true;
    if (n > 63)
        ok = push_msg(out, "", "must be no more than 63 characters");
    if (ok && !label_match(s, n, "a", "-a0", "a0"))
        ok = push_msg(out, "", DNS1035_LABEL_ERR);
    return ok;
}

static bool v_qualified_name(const char *s, size_t n, cel_vec *out)
{
    const char *slash = memchr(s, '/', n);
    const char *name = s;
    size_t nl = n;
    bool ok = true;
    if (slash) {
        if (memchr(slash + 1, '/', (size_t)(s + n - slash - 1)))
            return push_msg(out, "a valid label key ",
                            LABEL_KEY_ERR " with an optional DNS subdomain prefix and '/' (e.g. "
                                          "'example.com/MyName')");
        size_t pl = (size_t)(slash - s);
        if (pl == 0)
            ok = push_msg(out, "prefix part ", "must be non-empty");
        else
            ok = v_dns1123_subdomain(s, pl, out, "prefix part ");
        name = slash + 1;
        nl = (size_t)(s + n - name);
    }
    if (ok && nl == 0)
        ok = push_msg(out, "name part ", "must be non-empty");
    else if (ok && nl > 63)
        ok = push_msg(out, "name part ", "must be no more than 63 bytes");
    if (ok && !label_match(name, nl, "aA0", "-aA0_.", "aA0"))
        ok = push_msg(out, "name part ", LABEL_KEY_ERR);
    return ok;
}

static bool v_label_value(const char *s, size_t n, cel_vec *out)
{
    bool ok = true;
    if (n > 63)
        ok = push_msg(out, "", "must be no more than 63 bytes");
    if (ok && n > 0 && !label_match(s, n, "aA0", "-aA0_.", "aA0"))
        ok = push_msg(out, "", LABEL_VALUE_ERR);
    return ok;
}

static bool is_uuid(const char *s, size_t n)
{
    size_t hex = 0;
    for (size_t i = 0; i < n; i++) {
        if (unhex(s[i]) >= 0) {
            hex++;
        } else if (s[i] == '-' && (hex == 8 || hex == 12 || hex == 16 || hex == 20) &&
                   (i == 0 || s[i - 1] != '-')) {
            continue;
        } else {
            return false;
        }
    }
    return hex == 32;
}

/* strfmt "byte" (govalidator's rxBase64):
 * ^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$ */
static bool is_base64(const char *s, size_t n)
{
    if (n < 4 || n % 4 != 0)
        return false;
    size_t body = n;
    if (s[n - 1] == '=')
        body = s[n - 2] == '=' ? n - 2 : n - 1;
    for (size_t i = 0; i < body; i++)
        if (!in_class(s[i], "aA0+/"))
            return false;
    return true;
}

static bool is_date(const char *s, size_t n)
{
    if (n != 10 || s[4] != '-' || s[7] != '-')
        return false;
    for (size_t i = 0; i < n; i++)
        if (i != 4 && i != 7 && !(s[i] >= '0' && s[i] <= '9'))
            return false;
    int y = atoi(s), m = (s[5] - '0') * 10 + (s[6] - '0'), d = (s[8] - '0') * 10 + (s[9] - '0');
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1)
        return false;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return d <= mdays[m - 1] + (m == 2 && leap);
}

/* strfmt.IsDateTime: lower-cased and split at 't', a valid date, then
 * HH:MM:SS, an optional fraction (any one character and digits) and 'z' or
 * an offset. */
static bool is_datetime(const char *s, size_t n)
{
    if (n < 4)
        return false;
    char low[128];
    if (n >= sizeof(low))
        return false;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
    low[n] = 0;
    char *t = strchr(low, 't');
    if (!t || !is_date(low, (size_t)(t - low)))
        return false;
    const char *p = t + 1;
    char *t2 = strchr(p, 't');
    size_t l = t2 ? (size_t)(t2 - p) : strlen(p);
    if (l < 9 || p[2] != ':' || p[5] != ':')
        return false;
    for (int i = 0; i < 8; i++)
        if (i != 2 && i != 5 && !(p[i] >= '0' && p[i] <= '9'))
            return false;
    if (memcmp(p, "23", 2) > 0 || memcmp(p + 3, "59", 2) > 0 || memcmp(p + 6, "59", 2) > 0)
        return false;
    size_t i = 8;
    if (l - i >= 2 && p[i + 1] >= '0' && p[i + 1] <= '9' &&
        !(l - i == 6 && (p[i] == '+' || p[i] == '-'))) {
        i += 2;
        while (i < l && p[i] >= '0' && p[i] <= '9')
            i++;
    }
    if (l - i == 1 && p[i] == 'z')
        return true;
    return l - i == 6 && (p[i] == '+' || p[i] == '-') && p[i + 1] >= '0' && p[i + 1] <= '9' &&
           p[i + 2] >= '0' && p[i + 2] <= '9' && p[i + 3] == ':' && p[i + 4] >= '0' &&
           p[i + 4] <= '9' && p[i + 5] >= '0' && p[i + 5] <= '9';
}

/* NameIsDNSLabel(name, prefix=true) masks a trailing dash as Kubernetes does:
 * the last two characters become "a". */
static const char *mask_trailing_dash(const char *s, size_t *n, char *buf, size_t bufsz)
{
    if (*n > 1 && s[*n - 1] == '-' && *n - 1 < bufsz) {
        memcpy(buf, s, *n - 2);
        buf[*n - 2] = 'a';
        *n -= 1;
        return buf;
    }
    return s;
}

static gr_cel_val format_call(ectx *c, const cel_node *n, gr_cel_val *a, size_t na)
{
    if (n->fn == F_FORMAT_NAMED) {
        if (a[0].kind != GR_CEL_STRING)
            return cel_no_overload(n, a, na);
        size_t l;
        const char *s = cel_sv(&a[0], &l);
        if (fmt_index(s, l) < 0)
            return cel_opt_none(n);
        gr_cel_val f = opaque_new(n, T_FORMAT, s, l);
        if (cel_is_err(&f))
            return f;
        gr_cel_val r = cel_opt_of(n, &f);
        gr_cel_val_release(&f);
        return r;
    }
    if (n->fn == F_FORMAT_CONST) { /* format.dns1123Label() ... */
        const char *dot = strchr(n->name, '.');
        const char *nm = dot ? dot + 1 : n->name;
        return opaque_new(n, T_FORMAT, nm, strlen(nm));
    }
    /* f.validate(s) */
    size_t fl, l;
    const char *f = opaque_get(&a[0], T_FORMAT, &fl);
    if (!f || na != 2 || a[1].kind != GR_CEL_STRING)
        return cel_no_overload(n, a, na);
    const char *s = cel_sv(&a[1], &l);
    if (cel_charge_bytes(c, l * 4))
        return cel_cost_err(c, n);
    char buf[1024];
    cel_vec out = {0};
    bool ok = true;
    int which = fmt_index(f, fl);
    char why[300];
    urlp u;
    switch (which) {
    case 0:
    case 4:
        if (which == 4)
            s = mask_trailing_dash(s, &l, buf, sizeof(buf));
        ok = v_dns1123_label(s, l, &out);
        break;
    case 1:
    case 5:
        if (which == 5)
            s = mask_trailing_dash(s, &l, buf, sizeof(buf));
        ok = v_dns1123_subdomain(s, l, &out, "");
        break;
    case 2:
    case 6:
        if (which == 6)
            s = mask_trailing_dash(s, &l, buf, sizeof(buf));
        ok = v_dns1035_label(s, l, &out);
        break;
    case 3:
        ok = v_qualified_name(s, l, &out);
        break;
    case 7:
        ok = v_label_value(s, l, &out);
        break;
    case 8:
        if (!url_parse(s, l, true, &u, why, sizeof(why))) {
            char full[400];
            if (strncmp(why, "parse \"", 7) == 0)
                snprintf(full, sizeof(full), "%s", why);
            else
                snprintf(full, sizeof(full), "parse \"%.*s\": %s", (int)(l > 64 ? 64 : l), s, why);
            ok = push_msg(&out, "", full);
        }
        break;
    case 9:
        if (!is_uuid(s, l))
            ok = push_msg(&out, "", "does not match the UUID format");
        break;
    case 10:
        if (!is_base64(s, l))
            ok = push_msg(&out, "", "invalid base64");
        break;
    case 11:
        if (!is_date(s, l))
            ok = push_msg(&out, "", "invalid date");
        break;
    case 12:
        if (!is_datetime(s, l))
            ok = push_msg(&out, "", "invalid datetime");
        break;
    default:
        return cel_no_overload(n, a, na);
    }
    if (!ok) {
        cel_lib_items_free(out.v, out.n);
        return cel_lib_oom(n);
    }
    if (out.n == 0) {
        free(out.v);
        return cel_opt_none(n);
    }
    gr_cel_val list = cel_lib_list_of(n, out.v, out.n);
    free(out.v);
    if (cel_is_err(&list))
        return list;
    gr_cel_val r = cel_opt_of(n, &list);
    gr_cel_val_release(&list);
    return r;
}

gr_cel_val cel_k8s_call(ectx *c, const cel_node *n, gr_cel_val *a, size_t na)
{
    if (n->fn >= F_FORMAT_NAMED && n->fn <= F_FORMAT_VALIDATE)
        return format_call(c, n, a, na);
    if (n->fn >= F_SEMVER && n->fn <= F_SEMVER_PATCH)
        return semver_call(n, a, na);
    if (n->fn >= F_URL && n->fn <= F_URL_QUERY)
        return url_call(n, a, na);
    if ((n->fn == F_COMPARETO || n->fn == F_ISGREATERTHAN || n->fn == F_ISLESSTHAN) &&
        a[0].kind == GR_CEL_OBJECT && strcmp(gr_cel_val_type_name(&a[0]), T_SEMVER) == 0)
        return semver_call(n, a, na);
    if (n->fn >= F_QUANTITY && n->fn <= F_ISLESSTHAN)
        return quantity_call(n, a, na);
    return net_call(n, a, na);
}
