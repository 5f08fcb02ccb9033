/* gr_base64: RFC 4648 §10 vectors, round trips, blanks, bad input named by
 * offset, caps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gr_base64.h"

static const char *const vec[][2] = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

static void test_rfc4648_vectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        gr_buf e = GR_BUF_INIT(64), d = GR_BUF_INIT(64);
        assert_int_equal(gr_base64_encode(vec[i][0], strlen(vec[i][0]), &e), GR_OK);
        assert_string_equal(gr_buf_cstr(&e), vec[i][1]);
        assert_int_equal(e.len, gr_base64_encoded_len(strlen(vec[i][0])));
        assert_int_equal(gr_base64_decode(vec[i][1], strlen(vec[i][1]), &d, NULL), GR_OK);
        assert_string_equal(gr_buf_cstr(&d), vec[i][0]);
        gr_buf_free(&e);
        gr_buf_free(&d);
    }
}

static void test_round_trip_all_bytes(void **state)
{
    (void)state;
    unsigned char in[1027];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (unsigned char)(i * 7 + 3);
    for (size_t n = 0; n <= sizeof in; n += (n < 16 ? 1 : 97)) {
        gr_buf e = GR_BUF_INIT(4096), d = GR_BUF_INIT(4096);
        assert_int_equal(gr_base64_encode(in, n, &e), GR_OK);
        assert_int_equal(gr_base64_decode(e.data, e.len, &d, NULL), GR_OK);
        assert_int_equal(d.len, n);
        if (n)
            assert_memory_equal(d.data, in, n);
        gr_buf_free(&e);
        gr_buf_free(&d);
    }
}

/* Appends: output goes after what the buffer holds. */
static void test_appends(void **state)
{
    (void)state;
    gr_buf b = GR_BUF_INIT(64);
    assert_int_equal(gr_buf_puts(&b, "x="), GR_OK);
    assert_int_equal(gr_base64_encode("hi", 2, &b), GR_OK);
    assert_string_equal(gr_buf_cstr(&b), "x=aGk=");
    assert_int_equal(gr_base64_decode("aGk=", 4, &b, NULL), GR_OK);
    assert_string_equal(gr_buf_cstr(&b), "x=aGk=hi");
    gr_buf_free(&b);
}

/* Blanks anywhere are ignored (PEM-style line breaks in kubeconfig data). */
static void test_blanks_ignored(void **state)
{
    (void)state;
    const char *in = " Zm9v\r\nYmFy\tZg= =\n";
    gr_buf d = GR_BUF_INIT(64);
    assert_int_equal(gr_base64_decode(in, strlen(in), &d, NULL), GR_OK);
    assert_string_equal(gr_buf_cstr(&d), "foobarf");
    gr_buf_free(&d);
}

static void expect_bad(const char *in, const char *msg)
{
    gr_buf d = GR_BUF_INIT(64);
    assert_int_equal(gr_buf_puts(&d, "keep"), GR_OK);
    gr_err err;
    assert_int_equal(gr_base64_decode(in, strlen(in), &d, &err), GR_EPARSE);
    assert_int_equal(err.code, GR_EPARSE);
    assert_string_equal(err.msg, msg);
    assert_string_equal(gr_buf_cstr(&d), "keep"); /* unchanged on error */
    gr_buf_free(&d);
}

static void test_bad_input(void **state)
{
    (void)state;
    expect_bad("Zm9v!!!!", "base64: invalid character '!' at byte 4");
    expect_bad("Zm9v\x01", "base64: invalid byte 0x01 at byte 4");
    expect_bad("Zm-v", "base64: invalid character '-' at byte 2"); /* URL alphabet */
    expect_bad("Zg==Zm8=", "base64: data after padding at byte 4");
    expect_bad("Zg=a", "base64: data after padding at byte 3");
    expect_bad("Z===", "base64: misplaced '=' at byte 1");
    expect_bad("====", "base64: misplaced '=' at byte 0");
    expect_bad("Zg", "base64: 2 characters in the last group, want a multiple of 4 "
                     "(missing '=' padding?)");
    expect_bad("Zm9vY", "base64: 1 characters in the last group, want a multiple of 4 "
                        "(missing '=' padding?)");
}

/* The output cap holds: exactly at the cap is fine, one byte over is
 * GR_ETOOBIG with the buffer unchanged; no cap at all is GR_EINVAL. */
static void test_caps(void **state)
{
    (void)state;
    gr_buf d = GR_BUF_INIT(6);
    assert_int_equal(gr_base64_decode("Zm9vYmFy", 8, &d, NULL), GR_OK); /* 6 bytes */
    assert_string_equal(gr_buf_cstr(&d), "foobar");
    gr_buf_free(&d);
    gr_buf small = GR_BUF_INIT(5);
    gr_err err;
    assert_int_equal(gr_base64_decode("Zm9vYmFy", 8, &small, &err), GR_ETOOBIG);
    assert_string_equal(err.msg, "base64: decoded data larger than 5 bytes");
    assert_int_equal(small.len, 0);
    gr_buf_free(&small);
    gr_buf e = GR_BUF_INIT(7);
    assert_int_equal(gr_base64_encode("foobar", 6, &e), GR_ETOOBIG); /* needs 8 */
    assert_int_equal(e.len, 0);
    gr_buf_free(&e);
    gr_buf none = GR_BUF_INIT(0);
    assert_int_equal(gr_base64_encode("f", 1, &none), GR_EINVAL);
    assert_int_equal(gr_base64_decode("Zg==", 4, &none, &err), GR_EINVAL);
    gr_buf_free(&none);
    assert_int_equal(gr_base64_encoded_len(SIZE_MAX), SIZE_MAX);
    assert_int_equal(gr_base64_encoded_len(4), 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc4648_vectors), cmocka_unit_test(test_round_trip_all_bytes),
        cmocka_unit_test(test_appends),         cmocka_unit_test(test_blanks_ignored),
        cmocka_unit_test(test_bad_input),       cmocka_unit_test(test_caps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
