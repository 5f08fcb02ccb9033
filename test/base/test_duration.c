/* Tests for gr_duration: Go time.ParseDuration / Duration.String() parity.
 * The tables reproduce the cases of Go's own time package tests (facts:
 * input → value / error) plus our API pattern validators. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gr_duration.h"

#define NS  GR_DURATION_NANOSECOND
#define US  GR_DURATION_MICROSECOND
#define MS  GR_DURATION_MILLISECOND
#define SEC GR_DURATION_SECOND
#define MIN GR_DURATION_MINUTE
#define HR  GR_DURATION_HOUR

static const struct {
    const char *in;
    int64_t want;
} parse_ok[] = {
    /* simple */
    {"0", 0},
    {"5s", 5 * SEC},
    {"30s", 30 * SEC},
    {"1478s", 1478 * SEC},
    /* sign */
    {"-5s", -5 * SEC},
    {"+5s", 5 * SEC},
    {"-0", 0},
    {"+0", 0},
    /* decimal */
    {"5.0s", 5 * SEC},
    {"5.6s", 5 * SEC + 600 * MS},
    {"5.s", 5 * SEC},
    {".5s", 500 * MS},
    {"1.0s", 1 * SEC},
    {"1.00s", 1 * SEC},
    {"1.004s", 1 * SEC + 4 * MS},
    {"1.0040s", 1 * SEC + 4 * MS},
    {"100.00100s", 100 * SEC + 1 * MS},
    /* different units */
    {"10ns", 10 * NS},
    {"11us", 11 * US},
    {"12\xc2\xb5s", 12 * US}, /* U+00B5 micro sign */
    {"12\xce\xbcs", 12 * US}, /* U+03BC Greek mu */
    {"13ms", 13 * MS},
    {"14s", 14 * SEC},
    {"15m", 15 * MIN},
    {"16h", 16 * HR},
    /* composite durations */
    {"3h30m", 3 * HR + 30 * MIN},
    {"10.5s4m", 4 * MIN + 10 * SEC + 500 * MS},
    {"-2m3.4s", -(2 * MIN + 3 * SEC + 400 * MS)},
    {"1h2m3s4ms5us6ns", 1 * HR + 2 * MIN + 3 * SEC + 4 * MS + 5 * US + 6 * NS},
    {"39h9m14.425s", 39 * HR + 9 * MIN + 14 * SEC + 425 * MS},
    {"1h1h", 2 * HR},
    /* the examples */
    {"10m", 10 * MIN},
    {"1h30m", 90 * MIN},
    {"500ms", 500 * MS},
    {"1.5h", 90 * MIN},
    /* large value */
    {"52763797000ns", 52763797000 * NS},
    /* more than 9 digits after the decimal point (Go issue 6617) */
    {"0.3333333333333333333h", 20 * MIN},
    /* 2^53+1 cannot be stored exactly in a float64 */
    {"9007199254740993ns", (INT64_C(1) << 53) + 1},
    /* the int64 limits */
    {"9223372036854775807ns", INT64_MAX},
    {"9223372036854775.807us", INT64_MAX},
    {"9223372036s854ms775us807ns", INT64_MAX},
    {"-9223372036854775808ns", INT64_MIN},
    {"-9223372036854775.808us", INT64_MIN},
    {"-9223372036s854ms775us808ns", INT64_MIN},
    {"-2562047h47m16.854775808s", INT64_MIN},
    {"2562047h47m16.854775807s", INT64_MAX},
    /* huge fraction strings (Go issue 15011) and the first overflow check */
    {"0.100000000000000000000h", 6 * MIN},
    {"0.830103483285477580700h", 49 * MIN + 48 * SEC + 372539827 * NS},
    {"00000000000000000000000000001s", 1 * SEC},
};

static void test_parse_go_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof parse_ok / sizeof parse_ok[0]; i++) {
        int64_t got = 12345;
        gr_err err;
        gr_err_clear(&err);
        int rc = gr_duration_parse(parse_ok[i].in, &got, &err);
        if (rc != GR_OK || got != parse_ok[i].want)
            fail_msg("parse(%s): rc=%d got=%lld want=%lld (%s)", parse_ok[i].in, rc, (long long)got,
                     (long long)parse_ok[i].want, err.msg);
    }
}

static const struct {
    const char *in;
    const char *msg; /* exact Go error text */
} parse_bad[] = {
    {"", "time: invalid duration \"\""},
    {"3", "time: missing unit in duration \"3\""},
    {"-", "time: invalid duration \"-\""},
    {"s", "time: invalid duration \"s\""},
    {".", "time: invalid duration \".\""},
    {"-.", "time: invalid duration \"-.\""},
    {".s", "time: invalid duration \".s\""},
    {"+.s", "time: invalid duration \"+.s\""},
    {"1d", "time: unknown unit \"d\" in duration \"1d\""},
    {"\x85\x85", "time: invalid duration \"\\x85\\x85\""},
    {"\xff"
     "ff",
     "time: invalid duration \"\\xffff\""},
    {"hello \xff"
     "ff world",
     "time: invalid duration \"hello \\xffff world\""},
    {"\xef\xbf\xbd", "time: invalid duration \"\\xef\\xbf\\xbd\""},
    {"\xef\xbf\xbd hello \xef\xbf\xbd world",
     "time: invalid duration \"\\xef\\xbf\\xbd hello \\xef\\xbf\\xbd world\""},
    /* overflow */
    {"9223372036854775810ns", "time: invalid duration \"9223372036854775810ns\""},
    {"9223372036854775808ns", "time: invalid duration \"9223372036854775808ns\""},
    {"9223372036854775.808us", "time: invalid duration \"9223372036854775.808us\""},
    {"9223372036854ms775us808ns", "time: invalid duration \"9223372036854ms775us808ns\""},
    {"-9223372036854775809ns", "time: invalid duration \"-9223372036854775809ns\""},
    {"2562048h", "time: invalid duration \"2562048h\""},
    {"99999999999999999999s", "time: invalid duration \"99999999999999999999s\""},
    {"1h-1m", "time: unknown unit \"h-\" in duration \"1h-1m\""},
    {"1 s", "time: unknown unit \" s\" in duration \"1 s\""},
    {"1S", "time: unknown unit \"S\" in duration \"1S\""},
    {"1sec", "time: unknown unit \"sec\" in duration \"1sec\""},
    {"1\"s", "time: unknown unit \"\\\"s\" in duration \"1\\\"s\""},
    {"1h2", "time: missing unit in duration \"1h2\""},
    {"++1s", "time: invalid duration \"++1s\""},
    {" 1s", "time: invalid duration \" 1s\""},
    {"1.2.3s", "time: missing unit in duration \"1.2.3s\""},
};

static void test_parse_errors_match_go(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof parse_bad / sizeof parse_bad[0]; i++) {
        int64_t got = 777;
        gr_err err;
        gr_err_clear(&err);
        int rc = gr_duration_parse(parse_bad[i].in, &got, &err);
        if (rc != GR_EINVAL || got != 777 || strcmp(err.msg, parse_bad[i].msg) != 0)
            fail_msg("parse(%s): rc=%d got=%lld msg=<%s> want <%s>", parse_bad[i].in, rc,
                     (long long)got, err.msg, parse_bad[i].msg);
        assert_int_equal(err.code, GR_EINVAL);
    }
}

static void test_parse_n_and_null(void **state)
{
    (void)state;
    int64_t v = 0;
    gr_err err;
    assert_int_equal(gr_duration_parse_n("10sXYZ", 3, &v, NULL), GR_OK);
    assert_int_equal(v, 10 * SEC);
    /* an embedded NUL is just an invalid character */
    assert_int_equal(gr_duration_parse_n("1\0s", 3, &v, &err), GR_EINVAL);
    assert_string_equal(err.msg, "time: unknown unit \"\\x00s\" in duration \"1\\x00s\"");
    assert_int_equal(gr_duration_parse(NULL, &v, &err), GR_EINVAL);
    assert_int_equal(gr_duration_parse("1s", NULL, NULL), GR_OK);
    /* long input is quoted in a bounded way and never overflows err */
    char big[2000];
    memset(big, '1', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(gr_duration_parse(big, &v, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "time: invalid duration \"111"));
    assert_true(strlen(err.msg) < GR_ERR_MSG_MAX);
}

static const struct {
    int64_t ns;
    const char *want;
} format_cases[] = {
    {0, "0s"},
    {1, "1ns"},
    {1100, "1.1\xc2\xb5s"},
    {2200 * US, "2.2ms"},
    {3300 * MS, "3.3s"},
    {4 * MIN + 5 * SEC, "4m5s"},
    {4 * MIN + 5001 * MS, "4m5.001s"},
    {5 * HR + 6 * MIN + 7001 * MS, "5h6m7.001s"},
    {8 * MIN + 1, "8m0.000000001s"},
    {INT64_MAX, "2562047h47m16.854775807s"},
    {INT64_MIN, "-2562047h47m16.854775808s"},
    {90 * MIN, "1h30m0s"},
    {500 * MS, "500ms"},
    {1500, "1.5\xc2\xb5s"},
    {-1, "-1ns"},
    {-90 * SEC, "-1m30s"},
    {60 * SEC, "1m0s"},
    {HR, "1h0m0s"},
    {999, "999ns"},
    {999999, "999.999\xc2\xb5s"},
    {999999999, "999.999999ms"},
    {SEC, "1s"},
    {10 * MIN, "10m0s"},
};

static void test_format_matches_go(void **state)
{
    (void)state;
    char buf[GR_DURATION_STR_MAX];
    for (size_t i = 0; i < sizeof format_cases / sizeof format_cases[0]; i++) {
        gr_duration_format(format_cases[i].ns, buf);
        if (strcmp(buf, format_cases[i].want) != 0)
            fail_msg("format(%lld) = %s, want %s", (long long)format_cases[i].ns, buf,
                     format_cases[i].want);
    }
}

static void test_format_parse_roundtrip(void **state)
{
    (void)state;
    /* Every String() output parses back to the same value. */
    uint64_t x = 0x9e3779b97f4a7c15u;
    char buf[GR_DURATION_STR_MAX];
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int64_t ns = (int64_t)x >> (i % 64);
        gr_duration_format(ns, buf);
        int64_t back = 0;
        if (gr_duration_parse(buf, &back, NULL) != GR_OK || back != ns)
            fail_msg("roundtrip %lld -> %s -> %lld", (long long)ns, buf, (long long)back);
    }
    for (size_t i = 0; i < sizeof parse_ok / sizeof parse_ok[0]; i++) {
        int64_t a, b;
        assert_int_equal(gr_duration_parse(parse_ok[i].in, &a, NULL), GR_OK);
        assert_int_equal(gr_duration_parse(gr_duration_format(a, buf), &b, NULL), GR_OK);
        assert_int_equal(a, b);
    }
}

static void test_api_pattern(void **state)
{
    (void)state;
    /* ^([0-9]+(h|m|s|ms))+$ — e.g. timeoutPerJob in the nvcre CRDs */
    const char *good[] = {"1h", "15m",   "30s",    "500ms", "1h30m", "1h30m10s500ms",
                          "0s", "1ms1s", "10m5ms", "007s",  "1m1m"};
    const char *bad[] = {"",     "1",   "h",    "1.5h", "-1h",  "+1h",  "1us",
                         "1ns",  "1d",  "1H",   "1h ",  " 1h",  "1hm",  "ms",
                         "1mss", "1sm", "1h30", "1µs",  "1e3s", "1_0s", "0"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        if (!gr_duration_is_api_pattern(good[i]))
            fail_msg("api pattern should accept %s", good[i]);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (gr_duration_is_api_pattern(bad[i]))
            fail_msg("api pattern should reject %s", bad[i]);
    }
    assert_false(gr_duration_is_api_pattern(NULL));
}

static void test_decimal_pattern(void **state)
{
    (void)state;
    /* ^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$ — HEALTH_PUBLISH_RETRY_WINDOW */
    const char *good[] = {"5m", "1.5h", "0.5s", "1h30m", "2.25m10.5s", "100ms", "1.0ms"};
    const char *bad[] = {"", "5", ".5s", "5.s", "1.5", "-5m", "5us", "5 m", "1..5s", "5m."};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        assert_true(gr_duration_is_decimal_pattern(good[i]));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (gr_duration_is_decimal_pattern(bad[i]))
            fail_msg("decimal pattern should reject %s", bad[i]);
    }
    assert_false(gr_duration_is_decimal_pattern(NULL));
}

static void test_parse_api(void **state)
{
    (void)state;
    int64_t v = 0;
    gr_err err;
    assert_int_equal(gr_duration_parse_api("1h30m", &v, &err), GR_OK);
    assert_int_equal(v, 90 * MIN);
    assert_int_equal(gr_duration_parse_api("1.5h", &v, &err), GR_EINVAL);
    assert_string_equal(err.msg, "invalid duration \"1.5h\": must match ^([0-9]+(h|m|s|ms))+$ "
                                 "(e.g. \"90s\", \"1h30m\")");
    /* pattern ok but overflows int64: Go's own message */
    assert_int_equal(gr_duration_parse_api("9999999999h", &v, &err), GR_EINVAL);
    assert_string_equal(err.msg, "time: invalid duration \"9999999999h\"");
    assert_int_equal(gr_duration_parse_api(NULL, &v, &err), GR_EINVAL);
    /* the caller adds the field name */
    assert_int_equal(gr_duration_parse("10x", &v, &err), GR_EINVAL);
    gr_err_prefix(&err, "invalid gangCoordination.timeout: ");
    assert_string_equal(err.msg,
                        "invalid gangCoordination.timeout: time: unknown unit \"x\" in duration "
                        "\"10x\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_go_table),         cmocka_unit_test(test_parse_errors_match_go),
        cmocka_unit_test(test_parse_n_and_null),       cmocka_unit_test(test_format_matches_go),
        cmocka_unit_test(test_format_parse_roundtrip), cmocka_unit_test(test_api_pattern),
        cmocka_unit_test(test_decimal_pattern),        cmocka_unit_test(test_parse_api),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
