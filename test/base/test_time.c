/* Tests for gr_time: RFC 3339 parse/format as Go/Kubernetes use it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "gr_time.h"

static const struct {
    const char *in;
    int64_t sec;
    long nsec;
} good[] = {
    {"1970-01-01T00:00:00Z", 0, 0},
    {"2006-01-02T15:04:05Z", 1136214245, 0},
    {"2006-01-02T15:04:05+07:00", 1136214245 - 7 * 3600, 0},
    {"2006-01-02T15:04:05-07:00", 1136214245 + 7 * 3600, 0},
    {"2006-01-02T15:04:05+00:00", 1136214245, 0},
    {"2006-01-02T15:04:05-00:00", 1136214245, 0},
    {"2006-01-02T15:04:05+05:30", 1136214245 - 5 * 3600 - 30 * 60, 0},
    {"2006-01-02T15:04:05-23:59", 1136214245 + 23 * 3600 + 59 * 60, 0},
    {"2006-01-02T15:04:05.999999999Z", 1136214245, 999999999},
    {"2006-01-02T15:04:05.000000Z", 1136214245, 0},
    {"2006-01-02T15:04:05.123456Z", 1136214245, 123456000},
    {"2006-01-02T15:04:05.1Z", 1136214245, 100000000},
    {"2006-01-02T15:04:05.000000001Z", 1136214245, 1},
    {"2006-01-02T15:04:05.1234567891234Z", 1136214245, 123456789}, /* truncated */
    {"2006-01-02T15:04:05.5+01:00", 1136214245 - 3600, 500000000},
    {"1969-12-31T23:59:59Z", -1, 0},
    {"1969-12-31T23:59:59.5Z", -1, 500000000},
    {"2024-02-29T00:00:00Z", 1709164800, 0},
    {"2000-02-29T12:00:00Z", 951825600, 0},
    {"2038-01-19T03:14:08Z", INT64_C(2147483648), 0},
    {"0000-01-01T00:00:00Z", INT64_C(-62167219200), 0},
    {"9999-12-31T23:59:59Z", INT64_C(253402300799), 0},
    {"2024-12-31T23:59:59Z", 1735689599, 0},
    {"2024-01-01T00:30:00+01:00", 1704065400, 0}, /* crosses back into 2023 */
};

static void test_parse_good(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        struct timespec t = {0, 0};
        gr_err err;
        gr_err_clear(&err);
        if (gr_time_parse(good[i].in, &t, &err) != GR_OK)
            fail_msg("%s: %s", good[i].in, err.msg);
        if ((int64_t)t.tv_sec != good[i].sec || t.tv_nsec != good[i].nsec)
            fail_msg("%s: got %lld.%09ld want %lld.%09ld", good[i].in, (long long)t.tv_sec,
                     t.tv_nsec, (long long)good[i].sec, good[i].nsec);
    }
}

static const struct {
    const char *in;
    const char *why;
} bad[] = {
    {"", "year must be 4 digits"},
    {"2006-01-02", "expected 'T' between date and time"},
    {"2006-01-02T15:04:05", "missing time zone"},
    {"2006-01-02 15:04:05Z", "expected 'T'"},
    {"2006-01-02t15:04:05Z", "expected 'T'"},
    {"2006-01-02T15:04:05z", "missing time zone"},
    {"2006-1-02T15:04:05Z", "month must be 2 digits"},
    {"2006-01-2T15:04:05Z", "day must be 2 digits"},
    {"2006-01-02T5:04:05Z", "hour must be 2 digits"},
    {"2006-01-02T15:4:05Z", "minute must be 2 digits"},
    {"2006-01-02T15:04:5Z", "second must be 2 digits"},
    {"20060-01-02T15:04:05Z", "expected '-' after the year"},
    {"2006/01/02T15:04:05Z", "expected '-' after the year"},
    {"2006-13-02T15:04:05Z", "month out of range"},
    {"2006-00-02T15:04:05Z", "month out of range"},
    {"2006-01-32T15:04:05Z", "day out of range"},
    {"2006-01-00T15:04:05Z", "day out of range"},
    {"2023-02-29T00:00:00Z", "day out of range"},
    {"1900-02-29T00:00:00Z", "day out of range"},
    {"2024-04-31T00:00:00Z", "day out of range"},
    {"2024-02-30T00:00:00Z", "day out of range"},
    {"2006-01-02T24:00:00Z", "hour out of range"},
    {"2006-01-02T23:60:00Z", "minute out of range"},
    {"2006-01-02T23:59:60Z", "second out of range"},
    {"2006-01-02T15:04:05+24:00", "offset hour out of range"},
    {"2006-01-02T15:04:05+07:60", "offset minute out of range"},
    {"2006-01-02T15:04:05+0700", "offset must be +hh:mm"},
    {"2006-01-02T15:04:05+07", "offset must be +hh:mm"},
    {"2006-01-02T15:04:05+7:00", "offset must be +hh:mm"},
    {"2006-01-02T15:04:05.Z", "fractional second needs at least one digit"},
    {"2006-01-02T15:04:05,5Z", "missing time zone"},
    {"2006-01-02T15:04:05ZZ", "extra text"},
    {"2006-01-02T15:04:05Z ", "extra text"},
    {" 2006-01-02T15:04:05Z", "year must be 4 digits"},
    {"2006-01-02T15:04:05UTC", "missing time zone"},
    {"+2006-01-02T15:04:05Z", "year must be 4 digits"},
};

static void test_parse_bad(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct timespec t = {42, 7};
        gr_err err;
        gr_err_clear(&err);
        int rc = gr_time_parse(bad[i].in, &t, &err);
        if (rc != GR_EPARSE || strstr(err.msg, bad[i].why) == NULL)
            fail_msg("%s: rc=%d msg=%s (want ...%s...)", bad[i].in, rc, err.msg, bad[i].why);
        assert_int_equal(t.tv_sec, 42); /* untouched */
        assert_int_equal(t.tv_nsec, 7);
    }
    gr_err err;
    struct timespec t;
    assert_int_equal(gr_time_parse("2024-02-30T00:00:00Z", &t, &err), GR_EPARSE);
    assert_string_equal(err.msg, "invalid RFC 3339 time \"2024-02-30T00:00:00Z\": day out of "
                                 "range; use YYYY-MM-DDTHH:MM:SSZ or an offset like +02:00, e.g. "
                                 "\"2006-01-02T15:04:05Z\"");
    assert_int_equal(gr_time_parse(NULL, &t, &err), GR_EINVAL);
    assert_int_equal(gr_time_parse_n("2006-01-02T15:04:05Zjunk", 20, &t, &err), GR_OK);
    assert_int_equal(t.tv_sec, 1136214245);
    assert_int_equal(gr_time_parse_n("2006-01-02T15:04:05Z", 19, &t, &err), GR_EPARSE);
}

static void test_format(void **state)
{
    (void)state;
    char buf[GR_TIME_STR_MAX];
    struct timespec t = {1136214245, 123456789};
    assert_int_equal(gr_time_format(&t, buf), GR_OK);
    assert_string_equal(buf, "2006-01-02T15:04:05Z"); /* metav1.Time drops the fraction */
    assert_int_equal(gr_time_format_micro(&t, buf), GR_OK);
    assert_string_equal(buf, "2006-01-02T15:04:05.123456Z"); /* MicroTime truncates */
    assert_int_equal(gr_time_format_nano(&t, buf), GR_OK);
    assert_string_equal(buf, "2006-01-02T15:04:05.123456789Z");
    t.tv_nsec = 500000000;
    assert_int_equal(gr_time_format_nano(&t, buf), GR_OK);
    assert_string_equal(buf, "2006-01-02T15:04:05.5Z");
    t.tv_nsec = 0;
    assert_int_equal(gr_time_format_nano(&t, buf), GR_OK);
    assert_string_equal(buf, "2006-01-02T15:04:05Z");
    assert_int_equal(gr_time_format_micro(&t, buf), GR_OK);
    assert_string_equal(buf, "2006-01-02T15:04:05.000000Z");
    t.tv_sec = -1;
    t.tv_nsec = 999999999;
    assert_int_equal(gr_time_format_micro(&t, buf), GR_OK);
    assert_string_equal(buf, "1969-12-31T23:59:59.999999Z");
    t.tv_sec = INT64_C(-62167219200);
    t.tv_nsec = 0;
    assert_int_equal(gr_time_format(&t, buf), GR_OK);
    assert_string_equal(buf, "0000-01-01T00:00:00Z");
    t.tv_sec = INT64_C(253402300799);
    assert_int_equal(gr_time_format(&t, buf), GR_OK);
    assert_string_equal(buf, "9999-12-31T23:59:59Z");
    /* unrepresentable years and bad nsec */
    t.tv_sec = INT64_C(253402300800);
    assert_int_equal(gr_time_format(&t, buf), GR_EINVAL);
    assert_string_equal(buf, "");
    t.tv_sec = INT64_C(-62167219201);
    assert_int_equal(gr_time_format(&t, buf), GR_EINVAL);
    t.tv_sec = 0;
    t.tv_nsec = 1000000000;
    assert_int_equal(gr_time_format(&t, buf), GR_EINVAL);
    t.tv_nsec = -1;
    assert_int_equal(gr_time_format_micro(&t, buf), GR_EINVAL);
    assert_int_equal(gr_time_format(NULL, buf), GR_EINVAL);

    assert_int_equal(gr_time_format_ns(0, buf), GR_OK);
    assert_string_equal(buf, "1970-01-01T00:00:00Z");
    assert_int_equal(gr_time_format_ns(-1, buf), GR_OK);
    assert_string_equal(buf, "1969-12-31T23:59:59Z");
    assert_int_equal(gr_time_format_micro_ns(-1, buf), GR_OK);
    assert_string_equal(buf, "1969-12-31T23:59:59.999999Z");
    assert_int_equal(gr_time_format_ns(INT64_MAX, buf), GR_OK);
    assert_string_equal(buf, "2262-04-11T23:47:16Z");
    assert_int_equal(gr_time_format_micro_ns(INT64_MIN, buf), GR_OK);
    assert_string_equal(buf, "1677-09-21T00:12:43.145224Z");
}

static void test_ns_conversions(void **state)
{
    (void)state;
    int64_t ns = 0;
    gr_err err;
    assert_int_equal(gr_time_parse_ns("2006-01-02T15:04:05.5Z", &ns, &err), GR_OK);
    assert_int_equal(ns, INT64_C(1136214245500000000));
    assert_int_equal(gr_time_parse_ns("1969-12-31T23:59:59.999999999Z", &ns, &err), GR_OK);
    assert_int_equal(ns, -1);
    assert_int_equal(gr_time_parse_ns("2262-04-11T23:47:16.854775807Z", &ns, &err), GR_OK);
    assert_int_equal(ns, INT64_MAX);
    assert_int_equal(gr_time_parse_ns("2262-04-11T23:47:16.854775808Z", &ns, &err), GR_ETOOBIG);
    assert_int_equal(gr_time_parse_ns("1677-09-21T00:12:43.145224192Z", &ns, &err), GR_OK);
    assert_int_equal(ns, INT64_MIN);
    assert_int_equal(gr_time_parse_ns("1677-09-21T00:12:43.145224191Z", &ns, &err), GR_ETOOBIG);
    assert_non_null(strstr(err.msg, "outside the range of int64 nanoseconds"));
    assert_int_equal(gr_time_parse_ns("nope", &ns, &err), GR_EPARSE);

    struct timespec t = gr_time_from_ns(-1500000000);
    assert_int_equal(t.tv_sec, -2);
    assert_int_equal(t.tv_nsec, 500000000);
    assert_int_equal(gr_time_to_ns(&t, &ns), GR_OK);
    assert_int_equal(ns, -1500000000);
    t.tv_sec = INT64_C(9223372037);
    t.tv_nsec = 0;
    assert_int_equal(gr_time_to_ns(&t, &ns), GR_ETOOBIG);
    t.tv_nsec = -5;
    assert_int_equal(gr_time_to_ns(&t, &ns), GR_EINVAL);
}

static void test_roundtrip_and_timegm(void **state)
{
    (void)state;
    uint64_t x = 88172645463325252u;
    char buf[GR_TIME_STR_MAX];
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        /* any second in years 0000..9999 */
        int64_t sec = (int64_t)(x % UINT64_C(315537897600)) - INT64_C(62167219200);
        long nsec = (long)((x >> 20) % 1000000000);
        struct timespec t = {(time_t)sec, nsec}, back;
        assert_int_equal(gr_time_format_nano(&t, buf), GR_OK);
        if (gr_time_parse(buf, &back, NULL) != GR_OK || back.tv_sec != t.tv_sec ||
            back.tv_nsec != t.tv_nsec)
            fail_msg("roundtrip %lld.%09ld -> %s", (long long)sec, nsec, buf);
        /* the calendar agrees with the C library's */
        struct tm tm;
        time_t tt = (time_t)sec;
        assert_non_null(gmtime_r(&tt, &tm));
        char want[64];
        snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        assert_int_equal(gr_time_format(&t, buf), GR_OK);
        assert_string_equal(buf, want);
    }
}

static void test_clocks(void **state)
{
    (void)state;
    int64_t now = gr_time_now_ns();
    assert_true(now > INT64_C(1577836800) * 1000000000); /* after 2020 */
    struct timespec t = gr_time_now();
    assert_true(t.tv_sec >= 1577836800);
    int64_t a = gr_time_mono_ns(), b = gr_time_mono_ns();
    assert_true(b >= a);
    assert_true(a > 0);
}

/* Deadlines built from times read from outside clamp instead of overflowing
 * (the fuzz-smoke finding of stop 24: "1677-09-22" + a 292-year timeout). */
static void test_ns_saturating(void **state)
{
    (void)state;
    assert_int_equal(gr_ns_add_sat(1, 2), 3);
    assert_int_equal(gr_ns_add_sat(INT64_MAX - 1, 5), INT64_MAX);
    assert_int_equal(gr_ns_add_sat(INT64_MIN + 1, -5), INT64_MIN);
    assert_int_equal(gr_ns_sub_sat(5, 7), -2);
    assert_int_equal(gr_ns_sub_sat(INT64_MAX, -1), INT64_MAX);
    assert_int_equal(gr_ns_sub_sat(INT64_C(1800000000000000000), INT64_MIN + 10), INT64_MAX);
    assert_int_equal(gr_ns_sub_sat(INT64_MIN, 1), INT64_MIN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_good),
        cmocka_unit_test(test_parse_bad),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_ns_conversions),
        cmocka_unit_test(test_roundtrip_and_timegm),
        cmocka_unit_test(test_clocks),
        cmocka_unit_test(test_ns_saturating),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
