/* Tests for gr_quantity: Kubernetes resource.Quantity parity.
 * Most tables reproduce the cases of apimachinery's quantity_test.go
 * (facts: input → value, format, canonical string). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "gr_quantity.h"

#define DSI GR_QUANTITY_DECIMAL_SI
#define BSI GR_QUANTITY_BINARY_SI
#define DEX GR_QUANTITY_DECIMAL_EXPONENT

static gr_quantity P(const char *s)
{
    gr_quantity q;
    gr_err err;
    if (gr_quantity_parse(s, &q, &err) != GR_OK)
        fail_msg("parse(%s) failed: %s", s, err.msg);
    return q;
}

static gr_quantity D(int64_t v, int32_t exp, gr_quantity_format f)
{
    gr_quantity q;
    gr_quantity_from_scaled(&q, v, exp, f);
    return q;
}

/* TestQuantityParse: input → exact value (v * 10^exp) and format. */
static const struct {
    const char *in;
    int64_t v;
    int32_t exp;
    gr_quantity_format f;
} parse_table[] = {
    {"0", 0, 0, DSI},
    {"0n", 0, 0, DSI},
    {"0u", 0, 0, DSI},
    {"0m", 0, 0, DSI},
    {"0Ki", 0, 0, BSI},
    {"0k", 0, 0, DSI},
    {"0Mi", 0, 0, BSI},
    {"0M", 0, 0, DSI},
    {"0Gi", 0, 0, BSI},
    {"0G", 0, 0, DSI},
    {"0Ti", 0, 0, BSI},
    {"0T", 0, 0, DSI},
    {"1", 1, 0, DSI},
    /* binary suffixes */
    {"1Ki", 1024, 0, BSI},
    {"8Ki", 8 * 1024, 0, BSI},
    {"7Mi", 7 * 1024 * 1024, 0, BSI},
    {"6Gi", INT64_C(6) * 1024 * 1024 * 1024, 0, BSI},
    {"5Ti", INT64_C(5) * 1024 * 1024 * 1024 * 1024, 0, BSI},
    {"4Pi", INT64_C(4) * 1024 * 1024 * 1024 * 1024 * 1024, 0, BSI},
    {"3Ei", INT64_C(3) * 1024 * 1024 * 1024 * 1024 * 1024 * 1024, 0, BSI},
    {"10Ti", INT64_C(10) * 1024 * 1024 * 1024 * 1024, 0, BSI},
    {"100Ti", INT64_C(100) * 1024 * 1024 * 1024 * 1024, 0, BSI},
    /* decimal suffixes */
    {"5n", 5, -9, DSI},
    {"4u", 4, -6, DSI},
    {"3m", 3, -3, DSI},
    {"9", 9, 0, DSI},
    {"8k", 8, 3, DSI},
    {"50k", 5, 4, DSI},
    {"7M", 7, 6, DSI},
    {"6G", 6, 9, DSI},
    {"5T", 5, 12, DSI},
    {"40T", 4, 13, DSI},
    {"300T", 3, 14, DSI},
    {"2P", 2, 15, DSI},
    {"1E", 1, 18, DSI},
    /* decimal exponents */
    {"1E-3", 1, -3, DEX},
    {"1e3", 1, 3, DEX},
    {"1E6", 1, 6, DEX},
    {"1e9", 1, 9, DEX},
    {"1E12", 1, 12, DEX},
    {"1e15", 1, 15, DEX},
    {"1E18", 1, 18, DEX},
    {"1e14", 1, 14, DEX},
    {"1e13", 1, 13, DEX},
    {"100.035k", 100035, 0, DSI},
    /* things that look like floating point */
    {"0.001", 1, -3, DSI},
    {"0.0005k", 5, -1, DSI},
    {"0.005", 5, -3, DSI},
    {"0.05", 5, -2, DSI},
    {"0.5", 5, -1, DSI},
    {"0.00050k", 5, -1, DSI},
    {"0.00500", 5, -3, DSI},
    {"0.05000", 5, -2, DSI},
    {"0.50000", 5, -1, DSI},
    {"0.5e0", 5, -1, DEX},
    {"0.5e-1", 5, -2, DEX},
    {"0.5e-2", 5, -3, DEX},
    {"10.035M", 10035, 3, DSI},
    {"1.2e3", 12, 2, DEX},
    {"1.3E+6", 13, 5, DEX},
    {"1.40e9", 14, 8, DEX},
    {"1.53E12", 153, 10, DEX},
    {"1.6e15", 16, 14, DEX},
    {"1.7E18", 17, 17, DEX},
    {"9.01", 901, -2, DSI},
    {"8.1k", 81, 2, DSI},
    {"7.123456M", 7123456, 0, DSI},
    {"6.987654321G", 6987654321, 0, DSI},
    {"5.444T", 5444, 9, DSI},
    {"40.1T", 401, 11, DSI},
    {"300.2T", 3002, 11, DSI},
    {"2.5P", 25, 14, DSI},
    {"1.01E", 101, 16, DSI},
    /* things that saturate / round up to 1n */
    {"3.001n", 4, -9, DSI},
    {"1.1E-9", 2, -9, DEX},
    {"0.0000000001", 1, -9, DSI},
    {"0.0000000005", 1, -9, DSI},
    {"0.00000000050", 1, -9, DSI},
    {"0.5e-9", 1, -9, DEX},
    {"0.9n", 1, -9, DSI},
    {"0.00000012345", 124, -9, DSI},
    {"0.00000012354", 124, -9, DSI},
    {"9Ei", INT64_MAX, 0, BSI},
    {"9223372036854775807Ki", INT64_MAX, 0, BSI},
    {"12E", 12, 18, DSI},
    /* fractional binary */
    {"100.035Ki", 10243584, -2, BSI},
    {"0.5Mi", 512 * 1024, 0, BSI},
    {"0.05Gi", 536870912, -1, BSI},
    {"0.025Ti", 274877906944, -1, BSI},
    /* "things written by trolls" */
    {"0.000000000001Ki", 2, -9, DSI}, /* rounds up, changes format */
    {".001", 1, -3, DSI},
    {".0001k", 100, -3, DSI},
    {"1.", 1, 0, DSI},
    {"1.G", 1, 9, DSI},
    /* the examples */
    {"500Mi", INT64_C(500) * 1024 * 1024, 0, BSI},
    {"100m", 1, -1, DSI},
    {"4", 4, 0, DSI},
    {"1.5Gi", INT64_C(1536) * 1024 * 1024, 0, BSI},
    /* Kubernetes quirks that parse as zero */
    {"+", 0, 0, DSI},
    {"-", 0, 0, DSI},
    {".", 0, 0, DSI},
    {"-.", 0, 0, DSI},
    {"Ki", 0, 0, BSI},
    {"m", 0, 0, DSI},
    {"e3", 0, 0, DEX},
    {"-0", 0, 0, DSI},
    {"000", 0, 0, DSI},
};

static void test_parse_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof parse_table / sizeof parse_table[0]; i++) {
        gr_quantity want = D(parse_table[i].v, parse_table[i].exp, parse_table[i].f);
        const char *prefixes[] = {"", "+", "-"};
        for (int p = 0; p < 3; p++) {
            char in[64];
            snprintf(in, sizeof in, "%s%s", prefixes[p], parse_table[i].in);
            if (p > 0 && (in[1] == '+' || in[1] == '-'))
                continue;
            gr_quantity got = P(in);
            gr_quantity w = want;
            if (p == 2)
                gr_quantity_neg(&w, &want);
            char a[GR_QUANTITY_STR_MAX], b[GR_QUANTITY_STR_MAX];
            if (gr_quantity_cmp(&got, &w) != 0)
                fail_msg("%s: got %s want %s", in, gr_quantity_canonical(&got, a),
                         gr_quantity_canonical(&w, b));
            if (gr_quantity_get_format(&got) != parse_table[i].f)
                fail_msg("%s: format %d want %d", in, gr_quantity_get_format(&got),
                         parse_table[i].f);
            /* canonical output always parses back to the same value */
            gr_quantity back = P(gr_quantity_canonical(&got, a));
            assert_int_equal(gr_quantity_cmp(&back, &got), 0);
            back = P(gr_quantity_string(&got, a));
            assert_int_equal(gr_quantity_cmp(&back, &got), 0);
        }
    }
}

static void test_invalid(void **state)
{
    (void)state;
    const char *bad[] = {/* apimachinery's invalid list */
                         "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i",
                         "-3.01e-", "1e4294967297", " 1", "1 ",
                         /* ours */
                         "", "Pi", ".Pi", "+Ei", "1e", "1ee3", "1k3", "1Mi3", "1ki", "1K", "1KI",
                         "--1", "+-1", "1e-2147483648", "1e2147483648", "1E9223372036854775807",
                         "1E9223372036854775808", "0x10", "1,5", "1_000", "1.5.Gi", "\xd9\xa1",
                         "1\n", "\t1", "1e3.5", "1Gib", "NaN", "Inf", "1m1", "5 Gi"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gr_quantity q = P("42");
        gr_quantity before = q;
        gr_err err;
        gr_err_clear(&err);
        int rc = gr_quantity_parse(bad[i], &q, &err);
        if (rc != GR_EPARSE)
            fail_msg("%s: rc=%d (%s)", bad[i], rc, err.msg);
        assert_int_equal(gr_quantity_cmp(&q, &before), 0); /* untouched */
        assert_non_null(strstr(err.msg, "invalid quantity \""));
        assert_non_null(strstr(err.msg, "e.g. \"500Mi\""));
    }
    gr_err err;
    gr_quantity q;
    assert_int_equal(gr_quantity_parse("12x", &q, &err), GR_EPARSE);
    assert_string_equal(err.msg, "invalid quantity \"12x\": quantities must match the regular "
                                 "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'; use "
                                 "a number with an optional suffix (Ki Mi Gi Ti Pi Ei, n u m k M "
                                 "G T P E, or e<exponent>), e.g. \"500Mi\" or \"100m\"");
    assert_int_equal(gr_quantity_parse("1ki", &q, &err), GR_EPARSE);
    assert_non_null(strstr(err.msg, "unable to parse quantity's suffix \"ki\""));
    assert_int_equal(gr_quantity_parse(".Pi", &q, &err), GR_EPARSE);
    assert_non_null(strstr(err.msg, "unable to parse numeric part of quantity"));
    assert_int_equal(gr_quantity_parse("1\n", &q, &err), GR_EPARSE);
    assert_non_null(strstr(err.msg, "\"1\\x0a\""));
    assert_int_equal(gr_quantity_parse(NULL, &q, &err), GR_EINVAL);
    assert_int_equal(gr_quantity_parse("1", NULL, &err), GR_EINVAL);
    /* embedded NUL */
    assert_int_equal(gr_quantity_parse_n("1\0Ki", 4, &q, &err), GR_EPARSE);
    assert_int_equal(gr_quantity_parse_n("1KiXX", 3, &q, &err), GR_OK);
    assert_int_equal(gr_quantity_value(&q), 1024);
}

static void test_input_cap(void **state)
{
    (void)state;
    char s[GR_QUANTITY_INPUT_MAX + 2];
    char buf[GR_QUANTITY_STR_MAX];
    gr_quantity q;
    gr_err err;
    /* 160 significant digits: exact */
    memset(s, '9', sizeof s);
    s[GR_QUANTITY_MAX_DIGITS] = '\0';
    assert_int_equal(gr_quantity_parse(s, &q, &err), GR_OK);
    assert_string_equal(gr_quantity_canonical(&q, buf), s);
    assert_int_equal(gr_quantity_value(&q), INT64_MAX); /* saturated */
    /* 161: refused, never rounded */
    s[GR_QUANTITY_MAX_DIGITS] = '9';
    s[GR_QUANTITY_MAX_DIGITS + 1] = '\0';
    assert_int_equal(gr_quantity_parse(s, &q, &err), GR_ETOOBIG);
    assert_non_null(strstr(err.msg, "more than 160 significant digits"));
    /* but trailing zeros and leading zeros do not count */
    memset(s, '0', sizeof s);
    s[0] = '1';
    s[GR_QUANTITY_INPUT_MAX] = '\0';
    assert_int_equal(gr_quantity_parse(s, &q, &err), GR_OK);
    assert_string_equal(gr_quantity_canonical(&q, buf), "10e189");
    s[0] = '0';
    s[GR_QUANTITY_INPUT_MAX - 1] = '7';
    assert_int_equal(gr_quantity_parse(s, &q, &err), GR_OK);
    assert_string_equal(gr_quantity_string(&q, buf), s); /* kept verbatim, 191 bytes */
    assert_string_equal(gr_quantity_canonical(&q, buf), "7");
    /* one byte more is refused */
    s[GR_QUANTITY_INPUT_MAX] = '0';
    s[GR_QUANTITY_INPUT_MAX + 1] = '\0';
    assert_int_equal(gr_quantity_parse(s, &q, &err), GR_ETOOBIG);
    /* 189 nines then Ei: the widest binary expansion, capped at 2^63-1 */
    memset(s, '9', sizeof s);
    memcpy(s + GR_QUANTITY_INPUT_MAX - 2, "Ei", 3);
    assert_int_equal(gr_quantity_parse(s, &q, &err), GR_OK);
    assert_int_equal(gr_quantity_cmp_int64(&q, INT64_MAX), 0);
    /* a long fraction with a binary suffix stays exact until rounding */
    assert_int_equal(gr_quantity_parse("0.99999999999999999999999999999999999999999999999999999"
                                       "99999999999999999999999999999999999999999999999999Ki",
                                       &q, &err),
                     GR_OK);
    assert_string_equal(gr_quantity_canonical(&q, buf), "1Ki");
    /* fuzz finding: a 128-byte input whose canonical form is longer
     * (…98 → …9800m) still round-trips */
    const char *f = "95555555555999999999999999999999999999999999999999999999999999999999999999"
                    "99999999999999999999999999999999999999999999999999999.8";
    assert_int_equal(gr_quantity_parse(f, &q, &err), GR_OK);
    gr_quantity back;
    assert_int_equal(gr_quantity_parse(gr_quantity_canonical(&q, buf), &back, &err), GR_OK);
    assert_int_equal(gr_quantity_cmp(&q, &back), 0);
    assert_true(strlen(buf) > strlen(f));
}

/* TestQuantityString: value → canonical; parsing the canonical string keeps
 * it verbatim; the alternate spelling is re-emitted canonically. */
static const struct {
    int64_t v;
    int32_t exp;
    gr_quantity_format f;
    const char *expect;
    const char *alternate;
} string_table[] = {
    {INT64_C(1024) * 1024 * 1024, 0, BSI, "1Gi", "1024Mi"},
    {300 * 1024 * 1024, 0, BSI, "300Mi", "307200Ki"},
    {6 * 1024, 0, BSI, "6Ki", ""},
    {INT64_C(1001) * 1024 * 1024 * 1024, 0, BSI, "1001Gi", "1025024Mi"},
    {INT64_C(1024) * 1024 * 1024 * 1024, 0, BSI, "1Ti", "1024Gi"},
    {5, 0, BSI, "5", "5000m"},
    {500, -3, BSI, "500m", "0.5"},
    {1, 9, DSI, "1G", "1000M"},
    {1000, 6, DSI, "1G", "0.001T"},
    {1000000, 3, DSI, "1G", ""},
    {1000000000, 0, DSI, "1G", ""},
    {1, -3, DSI, "1m", "1000u"},
    {80, -3, DSI, "80m", ""},
    {1080, -3, DSI, "1080m", "1.08"},
    {108, -2, DSI, "1080m", "1080000000n"},
    {10800, -4, DSI, "1080m", ""},
    {300, 6, DSI, "300M", ""},
    {1, 12, DSI, "1T", ""},
    {1, 18, DSI, "1E", ""},
    {1, 21, DSI, "1e21", "1000E"},
    {5, 21, DSI, "5e21", "5000E"},
    {1, 24, DSI, "1e24", "1000000E"},
    {1, 70, BSI, "10e69", ""},
    {2, 70, BSI, "20e69", ""},
    {1, 72, BSI, "1e72", ""},
    {1234567, 6, DSI, "1234567M", ""},
    {1234567, -3, BSI, "1234567m", ""},
    {3, 3, DSI, "3k", ""},
    {1025, 0, BSI, "1025", ""},
    {0, 0, DSI, "0", ""},
    {0, 0, BSI, "0", ""},
    {1, 9, DEX, "1e9", ".001e12"},
    {1, -3, DEX, "1e-3", "0.001e0"},
    {1, -9, DEX, "1e-9", "1000e-12"},
    {80, -3, DEX, "80e-3", ""},
    {300, 6, DEX, "300e6", ""},
    {1, 12, DEX, "1e12", ""},
    {1, 3, DEX, "1e3", ""},
    {3, 3, DEX, "3e3", ""},
    {3, 3, DSI, "3k", ""},
    {0, 0, DEX, "0", "00"},
    {1, -9, DSI, "1n", ""},
    {80, -9, DSI, "80n", ""},
    {1080, -9, DSI, "1080n", ""},
    {108, -8, DSI, "1080n", ""},
    {10800, -10, DSI, "1080n", ""},
    {1, -6, DSI, "1u", ""},
    {80, -6, DSI, "80u", ""},
    {1080, -6, DSI, "1080u", ""},
};

static void test_string_table(void **state)
{
    (void)state;
    char buf[GR_QUANTITY_STR_MAX];
    for (size_t i = 0; i < sizeof string_table / sizeof string_table[0]; i++) {
        gr_quantity q = D(string_table[i].v, string_table[i].exp, string_table[i].f);
        if (strcmp(gr_quantity_canonical(&q, buf), string_table[i].expect) != 0)
            fail_msg("[%zu] canonical %s want %s", i, buf, string_table[i].expect);
        assert_string_equal(gr_quantity_string(&q, buf), string_table[i].expect);
        /* the canonical spelling is kept verbatim when parsed */
        gr_quantity p = P(string_table[i].expect);
        assert_string_equal(gr_quantity_string(&p, buf), string_table[i].expect);
        assert_int_equal(gr_quantity_cmp(&p, &q), 0);
        if (string_table[i].alternate[0]) {
            gr_quantity a = P(string_table[i].alternate);
            if (strcmp(gr_quantity_string(&a, buf), string_table[i].expect) != 0)
                fail_msg("[%zu] alternate %s -> %s want %s", i, string_table[i].alternate, buf,
                         string_table[i].expect);
        }
        if (!gr_quantity_is_zero(&q)) {
            char want[GR_QUANTITY_STR_MAX + 1];
            snprintf(want, sizeof want, "-%s", string_table[i].expect);
            gr_quantity n;
            gr_quantity_neg(&n, &q);
            assert_string_equal(gr_quantity_canonical(&n, buf), want);
        }
    }
}

/* TestQuantityParseEmit plus the examples and the verbatim rule
 * (what Quantity.String() / the API server echo back). */
static const struct {
    const char *in;
    const char *canonical;
    const char *string;
} emit_table[] = {
    {"1Ki", "1Ki", "1Ki"},
    {"1Mi", "1Mi", "1Mi"},
    {"1Gi", "1Gi", "1Gi"},
    {"1024Mi", "1Gi", "1Gi"},
    {"1000M", "1G", "1G"},
    {".001Ki", "1024m", "1024m"},
    {".000001Ki", "1024u", "1024u"},
    {".000000001Ki", "1024n", "1024n"},
    {".000000000001Ki", "2n", "2n"},
    {"1.5Gi", "1536Mi", "1536Mi"},
    {"1e3", "1e3", "1e3"},
    {"1000m", "1", "1"},
    {"0.5", "500m", "500m"},
    {"100m", "100m", "100m"},
    {"500Mi", "500Mi", "500Mi"},
    {"10Ti", "10Ti", "10Ti"},
    {"4", "4", "4"},
    {"1e4", "10e3", "10e3"},
    {"1.5", "1500m", "1500m"},
    {"1.1Ki", "1126400m", "1126400m"},
    {"1025Ki", "1025Ki", "1025Ki"},
    {"1.5Ki", "1536", "1536"},
    {"0.5Ki", "512", "512"},
    {"2048Ki", "2Mi", "2Mi"},
    {"1Pi", "1Pi", "1Pi"},
    {"1024Ti", "1Pi", "1Pi"},
    {"9Ei", "9223372036854775807", "9223372036854775807"},
    {"1000E", "1e21", "1e21"},
    {"1e-100", "1e-9", "1e-9"},
    {"123456789012345678901234567890", "123456789012345678901234567890",
     "123456789012345678901234567890"},
    /* kept verbatim by Kubernetes (its int64 fast path found them canonical) */
    {"+100m", "100m", "+100m"},
    {"1E3", "1e3", "1E3"},
    {"1e+3", "1e3", "1e+3"},
    {"07Ki", "7Ki", "07Ki"},
    {"+1Ki", "1Ki", "+1Ki"},
    {"1.500", "1500m", "1.500"},
    {"1.G", "1G", "1.G"},
    {"10e3", "10e3", "10e3"},
    /* not kept: end in 000, start with 0, scale not a multiple of 3 */
    {"1000", "1k", "1k"},
    {"0.100", "100m", "100m"},
    {"1.0", "1", "1"},
    {"8Ki", "8Ki", "8Ki"}, /* value&7 == 0: recomputed, same text */
    {"-0.0", "0", "0"},
    {"0", "0", "0"},
};

static void test_emit(void **state)
{
    (void)state;
    char a[GR_QUANTITY_STR_MAX], b[GR_QUANTITY_STR_MAX];
    for (size_t i = 0; i < sizeof emit_table / sizeof emit_table[0]; i++) {
        gr_quantity q = P(emit_table[i].in);
        gr_quantity_canonical(&q, a);
        gr_quantity_string(&q, b);
        if (strcmp(a, emit_table[i].canonical) != 0 || strcmp(b, emit_table[i].string) != 0)
            fail_msg("%s: canonical=%s string=%s want %s / %s", emit_table[i].in, a, b,
                     emit_table[i].canonical, emit_table[i].string);
        /* negative versions: "-" + canonical */
        if (!gr_quantity_is_zero(&q) && emit_table[i].in[0] != '+') {
            char neg[80], want[GR_QUANTITY_STR_MAX + 1];
            snprintf(neg, sizeof neg, "-%s", emit_table[i].in);
            gr_quantity n = P(neg);
            snprintf(want, sizeof want, "-%s", emit_table[i].canonical);
            assert_string_equal(gr_quantity_canonical(&n, a), want);
        }
    }
}

static void test_constructors(void **state)
{
    (void)state;
    char buf[GR_QUANTITY_STR_MAX];
    /* TestQuantityStringBelowNano: only reachable by construction (parsing
     * rounds up to 1n) */
    gr_quantity bn = D(1, -12, DSI);
    assert_string_equal(gr_quantity_canonical(&bn, buf), "1e-12");
    bn = D(1, -10, DSI);
    assert_string_equal(gr_quantity_string(&bn, buf), "100e-12");
    bn = P(buf);
    assert_string_equal(gr_quantity_canonical(&bn, buf), "1e-9");
    /* TestBinarySIZeroExponentString */
    bn = D(2000, 0, BSI);
    assert_string_equal(gr_quantity_canonical(&bn, buf), "2000");
    bn = D(-2000, 0, BSI);
    assert_string_equal(gr_quantity_canonical(&bn, buf), "-2000");
    /* TestMilliNewSet */
    const struct {
        int64_t v;
        gr_quantity_format f;
        const char *want;
    } milli[] = {{1, DSI, "1m"},       {1000, DSI, "1"},      {1234000, DSI, "1234"},
                 {1024, BSI, "1024m"}, {1000000, DEX, "1e3"}, {1024 * 1024, BSI, "1048576m"}};
    for (size_t i = 0; i < sizeof milli / sizeof milli[0]; i++) {
        gr_quantity q = D(milli[i].v, -3, milli[i].f);
        assert_string_equal(gr_quantity_canonical(&q, buf), milli[i].want);
    }
    gr_quantity q = P("1m");
    assert_int_equal(gr_quantity_milli_value(&q), 1);
    /* TestNewSet */
    const struct {
        int64_t v;
        gr_quantity_format f;
        const char *want;
    } plain[] = {{1, DSI, "1"},
                 {1000, DSI, "1k"},
                 {1234000, DSI, "1234k"},
                 {1024, BSI, "1Ki"},
                 {1000000, DEX, "1e6"},
                 {1024 * 1024, BSI, "1Mi"},
                 {INT64_MAX, DSI, "9223372036854775807"},
                 {INT64_MIN, DSI, "-9223372036854775808"}};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        gr_quantity_from_int64(&q, plain[i].v, plain[i].f);
        assert_string_equal(gr_quantity_canonical(&q, buf), plain[i].want);
        gr_quantity back = P(buf);
        assert_int_equal(gr_quantity_value(&back), plain[i].v);
    }
    /* TestNewScaledSet */
    const struct {
        int64_t v;
        int32_t scale;
        const char *want;
    } scaled[] = {{1, -9, "1n"}, {1000, -9, "1u"}, {1, -6, "1u"}, {1000, -6, "1m"},
                  {1, -3, "1m"}, {1000, -3, "1"},  {1, 0, "1"},   {0, -9, "0"},
                  {0, -6, "0"},  {0, -3, "0"},     {0, 0, "0"}};
    for (size_t i = 0; i < sizeof scaled / sizeof scaled[0]; i++) {
        gr_quantity_from_scaled(&q, scaled[i].v, scaled[i].scale, DSI);
        assert_string_equal(gr_quantity_canonical(&q, buf), scaled[i].want);
        gr_quantity back = P(buf);
        int64_t v;
        assert_int_equal(gr_quantity_scaled_value(&back, scaled[i].scale, &v), GR_OK);
        assert_int_equal(v, scaled[i].v);
    }
}

static void test_scaled_value(void **state)
{
    (void)state;
    /* TestScaledValue: NewScaledQuantity(1, from).ScaledValue(to) */
    const struct {
        int32_t from, to;
        int64_t want;
    } t[] = {{-9, -9, 1}, {-9, -6, 1},   {-9, -3, 1},         {-9, 0, 1},        {-6, -9, 1000},
             {-6, -6, 1}, {-6, -3, 1},   {-6, 0, 1},          {-3, -9, 1000000}, {-3, -6, 1000},
             {-3, -3, 1}, {-3, 0, 1},    {0, -9, 1000000000}, {0, -6, 1000000},  {0, -3, 1000},
             {0, 0, 1},   {2, -2, 10000}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        gr_quantity q = D(1, t[i].from, DSI);
        int64_t v = 0;
        assert_int_equal(gr_quantity_scaled_value(&q, t[i].to, &v), GR_OK);
        if (v != t[i].want)
            fail_msg("scaled %d->%d = %lld want %lld", t[i].from, t[i].to, (long long)v,
                     (long long)t[i].want);
    }
}

static void test_value_rounds_away_from_zero(void **state)
{
    (void)state;
    /* TestNegativeValueRoundsAwayFromZero */
    const struct {
        const char *in;
        int64_t value, milli;
    } t[] = {
        {"-.484785E-7466", -1, -1},
        {".484785E-7466", 1, 1},
        {"-.484785E-1", -1, -49},
        {".484785E-1", 1, 49},
        {"-0.0005", -1, -1},
        {"0.0005", 1, 1},
        {"-1500m", -2, -1500},
        {"1500m", 2, 1500},
        {"-9.5000000001Gi", -10200547329, -10200547328108},
        {"9.5000000001Gi", 10200547329, 10200547328108},
        {"-1", -1, -1000},
        {"1", 1, 1000},
        {"0", 0, 0},
        {"1.1", 2, 1100},
        {"100m", 1, 100},
        {"1Ki", 1024, 1024000},
        {"1n", 1, 1},
        {"9223372036854775807", INT64_MAX, INT64_MAX},
        {"-9223372036854775808", INT64_MIN, INT64_MIN},
        {"9223372036854775808", INT64_MAX, INT64_MAX},
        {"9223372036854775806.5", INT64_MAX, INT64_MAX},
        {"-9223372036854775807.5", INT64_MIN, INT64_MIN},
        {"1e30", INT64_MAX, INT64_MAX},
        {"-1e30", INT64_MIN, INT64_MIN},
        {"9223372036854775m", 9223372036855, 9223372036854775},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        gr_quantity q = P(t[i].in);
        if (gr_quantity_value(&q) != t[i].value || gr_quantity_milli_value(&q) != t[i].milli)
            fail_msg("%s: value=%lld milli=%lld want %lld %lld", t[i].in,
                     (long long)gr_quantity_value(&q), (long long)gr_quantity_milli_value(&q),
                     (long long)t[i].value, (long long)t[i].milli);
    }
    int64_t v;
    gr_quantity q = P("1e30");
    assert_int_equal(gr_quantity_scaled_value(&q, 0, &v), GR_ETOOBIG);
    assert_int_equal(v, INT64_MAX);
    assert_int_equal(gr_quantity_scaled_value(&q, 12, &v), GR_OK);
    assert_int_equal(v, 1000000000000000000);
    q = P("9223372036854775.808k"); /* exactly 2^63: too big by one */
    assert_int_equal(gr_quantity_scaled_value(&q, 0, &v), GR_ETOOBIG);
    q = P("-9223372036854775.808k");
    assert_int_equal(gr_quantity_scaled_value(&q, 0, &v), GR_OK);
    assert_int_equal(v, INT64_MIN);
}

static void test_as_int64_and_float(void **state)
{
    (void)state;
    int64_t v = 0;
    gr_quantity q = P("1Ki");
    assert_true(gr_quantity_as_int64(&q, &v));
    assert_int_equal(v, 1024);
    q = P("100m");
    assert_false(gr_quantity_as_int64(&q, &v));
    q = P("9223372036854775808");
    assert_false(gr_quantity_as_int64(&q, &v));
    q = P("-9223372036854775808");
    assert_true(gr_quantity_as_int64(&q, &v));
    assert_int_equal(v, INT64_MIN);
    q = P("1e3");
    assert_true(gr_quantity_as_int64(&q, NULL));
    q = P("0");
    assert_true(gr_quantity_as_int64(&q, &v));
    assert_int_equal(v, 0);

    q = P("1.5Gi");
    assert_true(gr_quantity_approx_float64(&q) == 1610612736.0);
    q = P("100m");
    assert_true(gr_quantity_approx_float64(&q) == 0.1);
    q = P("-2.5");
    assert_true(gr_quantity_approx_float64(&q) == -2.5);
    q = P("1e400");
    assert_true(isinf(gr_quantity_approx_float64(&q)));
    q = P("0");
    assert_true(gr_quantity_approx_float64(&q) == 0.0);
}

static void test_cmp(void **state)
{
    (void)state;
    const struct {
        const char *a, *b;
        int want;
    } t[] = {
        {"0", "0", 0},
        {"100m", "50m", 1},
        {"50m", "100m", -1},
        {"10000T", "100Gi", 1},
        {"1Ki", "1024", 0},
        {"1.024k", "1Ki", 0},
        {"1Mi", "1M", 1},
        {"1G", "1Gi", -1},
        {"-1", "0", -1},
        {"-1", "-2", 1},
        {"-1Ki", "-1k", -1},
        {"0.5", "500m", 0},
        {"1e3", "1k", 0},
        {"1000000000n", "1", 0},
        {"1n", "0", 1},
        {"-1n", "0", -1},
        {"9.01", "9010m", 0},
        {"9", "9.01", -1},
        {"123456789012345678901234567890", "123456789012345678901234567891", -1},
        {"123456789012345678901234567890", "123456789012345678901234567.89k", 0},
        {"1e100", "1e99", 1},
        {"-1e100", "-1e99", -1},
        {"1e-5", "10u", 0},
        {"7Ei", "9Ei", -1}, /* 9Ei is capped to 2^63-1 */
        {"8Ei", "9Ei", 0},  /* 8Ei = 2^63 is capped too */
        {"100Mi", "104857600", 0},
        {"+0", "-0", 0},
        {"0Ki", "0m", 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        gr_quantity a = P(t[i].a), b = P(t[i].b);
        int c1 = gr_quantity_cmp(&a, &b), c2 = gr_quantity_cmp(&b, &a);
        if (c1 != t[i].want || c2 != -t[i].want)
            fail_msg("cmp(%s, %s) = %d/%d want %d", t[i].a, t[i].b, c1, c2, t[i].want);
    }
    gr_quantity q = P("1Ki");
    assert_int_equal(gr_quantity_cmp_int64(&q, 1024), 0);
    assert_int_equal(gr_quantity_cmp_int64(&q, 1023), 1);
    assert_int_equal(gr_quantity_cmp_int64(&q, 1025), -1);
    q = P("-9223372036854775809");
    assert_int_equal(gr_quantity_cmp_int64(&q, INT64_MIN), -1);
    assert_int_equal(gr_quantity_sign(&q), -1);
    q = P("0");
    assert_int_equal(gr_quantity_sign(&q), 0);
    assert_true(gr_quantity_is_zero(&q));
    /* TestQuantityCmpInt64AndDec, constructed values */
    const struct {
        int64_t av;
        int32_t ae;
        int64_t bv;
        int32_t be;
        int want;
    } c[] = {
        {901, -2, 901, -2, 0},
        {90, -1, 901, -2, -1},
        {901, -2, 900, -2, 1},
        {0, 1, 0, -1, 0},
        {800, -3, 1, 0, -1},
        {800, -3, 79, -2, 1},
        {INT64_MAX, 0, 1, -1, 1},
        {INT64_MAX, 1, 1, 0, 1},
        {INT64_MAX, -16, 1, 3, -1},
        {INT64_MIN, 0, 0, 0, -1},
        {INT64_MIN, -18, -1, 0, -1},
        {INT64_MIN, -19, -1, 0, 1},
        {INT64_C(1000000000000000000), -17, 1, 1, 0},
        {INT64_C(1000000000000000000), -17, -10, 0, 1},
        {-INT64_C(1000000000000000000), -17, -10, 0, 0},
        {INT64_C(1000000000000000001), -17, 1, 1, 1},
        {INT64_C(999999999999999999), -17, 1, 1, -1},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        gr_quantity a = D(c[i].av, c[i].ae, DSI), b = D(c[i].bv, c[i].be, DSI);
        assert_int_equal(gr_quantity_cmp(&a, &b), c[i].want);
        assert_int_equal(gr_quantity_cmp(&b, &a), -c[i].want);
    }
}

static void test_arithmetic(void **state)
{
    (void)state;
    char buf[GR_QUANTITY_STR_MAX];
    gr_err err;
    gr_quantity r;
    /* TestQuantityAddZeroPreservesSuffix / SubZero */
    const char *vals[] = {"100m", "1Gi"};
    for (size_t i = 0; i < 2; i++) {
        gr_quantity v = P(vals[i]), zero = P("0");
        assert_int_equal(gr_quantity_add(&r, &v, &zero, &err), GR_OK);
        assert_string_equal(gr_quantity_string(&r, buf), vals[i]);
        assert_int_equal(gr_quantity_add(&r, &zero, &v, &err), GR_OK);
        assert_string_equal(gr_quantity_string(&r, buf), vals[i]);
        assert_int_equal(gr_quantity_sub(&r, &v, &zero, &err), GR_OK);
        assert_string_equal(gr_quantity_string(&r, buf), vals[i]);
        assert_int_equal(gr_quantity_sub(&r, &zero, &v, &err), GR_OK);
        char want[16];
        snprintf(want, sizeof want, "-%s", vals[i]);
        assert_string_equal(gr_quantity_string(&r, buf), want);
    }
    /* TestSub */
    const struct {
        gr_quantity a, b, want;
        gr_quantity_format f;
    } sub[] = {
        {D(10, 0, DSI), D(1, 1, DSI), D(0, 0, DSI), DSI},
        {D(10, 0, DSI), D(1, 0, BSI), D(9, 0, DSI), DSI},
        {D(10, 0, BSI), D(1, 0, DSI), D(9, 0, BSI), BSI},
        {D(0, 0, DSI), D(50, 0, DSI), D(-50, 0, DSI), DSI},
        {D(50, 0, DSI), D(0, 0, DSI), D(50, 0, DSI), DSI},
    };
    for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
        assert_int_equal(gr_quantity_sub(&r, &sub[i].a, &sub[i].b, &err), GR_OK);
        assert_int_equal(gr_quantity_cmp(&r, &sub[i].want), 0);
        assert_int_equal(gr_quantity_get_format(&r), sub[i].f);
    }
    /* TestNegAndSubAtMostNegative */
    gr_quantity mn = D(INT64_MIN, 0, DSI), zero = D(0, 0, DSI), one = D(1, 0, DSI);
    gr_quantity_neg(&r, &mn);
    assert_string_equal(gr_quantity_string(&r, buf), "9223372036854775808");
    assert_false(gr_quantity_as_int64(&r, NULL));
    assert_int_equal(gr_quantity_sub(&r, &zero, &mn, &err), GR_OK);
    assert_string_equal(gr_quantity_string(&r, buf), "9223372036854775808");
    assert_int_equal(gr_quantity_sub(&r, &one, &mn, &err), GR_OK);
    assert_string_equal(gr_quantity_string(&r, buf), "9223372036854775809");
    gr_quantity mnm = D(INT64_MIN, -3, DSI);
    gr_quantity_neg(&r, &mnm);
    assert_string_equal(gr_quantity_string(&r, buf), "9223372036854775808m");
    gr_quantity onem = D(1, -3, DSI);
    assert_int_equal(gr_quantity_sub(&r, &onem, &mnm, &err), GR_OK);
    assert_string_equal(gr_quantity_string(&r, buf), "9223372036854775809m");
    /* TestQuantityNeg */
    gr_quantity x = D(901, -2, DSI);
    gr_quantity_neg(&r, &x);
    assert_string_equal(gr_quantity_canonical(&r, buf), "-9010m");
    assert_int_equal(gr_quantity_cmp(&x, &r), 1); /* source untouched */
    /* neg in place drops the verbatim text */
    gr_quantity p = P("+100m");
    gr_quantity_neg(&p, &p);
    assert_string_equal(gr_quantity_string(&p, buf), "-100m");
    /* mixed-scale addition, carries and borrows */
    gr_quantity a = P("999999999999999999999n"), b = P("1n");
    assert_int_equal(gr_quantity_add(&r, &a, &b, &err), GR_OK);
    assert_string_equal(gr_quantity_canonical(&r, buf), "1T");
    assert_int_equal(gr_quantity_sub(&r, &r, &b, &err), GR_OK); /* aliasing */
    assert_int_equal(gr_quantity_cmp(&r, &a), 0);
    a = P("1.5Gi");
    b = P("512Mi");
    assert_int_equal(gr_quantity_add(&r, &a, &b, &err), GR_OK);
    assert_string_equal(gr_quantity_canonical(&r, buf), "2Gi");
    a = P("100m");
    b = P("250m");
    assert_int_equal(gr_quantity_sub(&r, &a, &b, &err), GR_OK);
    assert_string_equal(gr_quantity_canonical(&r, buf), "-150m");
    a = P("-1");
    b = P("1");
    assert_int_equal(gr_quantity_add(&r, &a, &b, &err), GR_OK);
    assert_true(gr_quantity_is_zero(&r));
    assert_string_equal(gr_quantity_canonical(&r, buf), "0");
    /* growing a binary value past Ei: exact decimal form
     * (TestBinarySIPastEiArithmeticRoundTrip) */
    r = P("1Ei");
    for (int i = 0; i < 10; i++)
        assert_int_equal(gr_quantity_add(&r, &r, &r, &err), GR_OK);
    assert_string_equal(gr_quantity_canonical(&r, buf), "1180591620717411303424");
    gr_quantity back = P(buf);
    assert_int_equal(gr_quantity_cmp(&back, &r), 0);
    r = P("1Ei");
    assert_int_equal(gr_quantity_add(&r, &r, &r, &err), GR_OK);
    assert_string_equal(gr_quantity_canonical(&r, buf), "2Ei");
    /* results too wide for the digit cap are refused, not rounded */
    a = P("1e2000000000");
    b = P("1");
    assert_int_equal(gr_quantity_add(&r, &a, &b, &err), GR_ETOOBIG);
    assert_non_null(strstr(err.msg, "more than 160 digits"));
    assert_int_equal(gr_quantity_add(&r, &a, &a, &err), GR_OK);
    assert_string_equal(gr_quantity_canonical(&r, buf), "200e1999999998");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_table),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_input_cap),
        cmocka_unit_test(test_string_table),
        cmocka_unit_test(test_emit),
        cmocka_unit_test(test_constructors),
        cmocka_unit_test(test_scaled_value),
        cmocka_unit_test(test_value_rounds_away_from_zero),
        cmocka_unit_test(test_as_int64_and_float),
        cmocka_unit_test(test_cmp),
        cmocka_unit_test(test_arithmetic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
