/*
 * test_grpc_wire.c — gRPC framing, grpc-timeout, percent-decoding, header and
 * trailer parsing, and status resolution (gr_grpc_wire.h, pure).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gr_grpc_wire.h"

static void test_frame_encode(void **state)
{
    (void)state;
    gr_buf b = GR_BUF_INIT(1024);
    assert_int_equal(gr_grpc_frame_encode(&b, "abc", 3, NULL), GR_OK);
    assert_int_equal(b.len, 8);
    assert_memory_equal(b.data, "\0\0\0\0\3abc", 8);
    assert_int_equal(gr_grpc_frame_encode(&b, NULL, 0, NULL), GR_OK);
    assert_int_equal(b.len, 13);
    assert_memory_equal(b.data + 8, "\0\0\0\0\0", 5);
    gr_buf_free(&b);

    gr_buf small = GR_BUF_INIT(6);
    gr_err err;
    assert_int_equal(gr_grpc_frame_encode(&small, "ab", 2, &err), GR_ETOOBIG);
    assert_int_equal(small.len, 0);
    gr_buf_free(&small);
}

static void test_timeout_format(void **state)
{
    (void)state;
    char out[10];
    gr_grpc_timeout_format(30LL * 1000000000, out);
    assert_string_equal(out, "30000000u");
    gr_grpc_timeout_format(5LL * 1000000000, out);
    assert_string_equal(out, "5000000u");
    gr_grpc_timeout_format(99999999, out);
    assert_string_equal(out, "99999999n");
    gr_grpc_timeout_format(100000000, out); /* 0.1 s */
    assert_string_equal(out, "100000u");
    gr_grpc_timeout_format(300LL * 1000000000, out); /* 5m */
    assert_string_equal(out, "300000m");
    gr_grpc_timeout_format(100000001LL * 1000000, out); /* rounds up, never shorter */
    assert_string_equal(out, "100001S");
    gr_grpc_timeout_format(0, out);
    assert_string_equal(out, "1n");
    gr_grpc_timeout_format(INT64_MAX, out);
    assert_true(strlen(out) <= 9);
    assert_int_equal(out[strlen(out) - 1], 'H');
}

static void test_percent_decode(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(gr_grpc_percent_decode("a%20b", 5, out, sizeof out), 3);
    assert_string_equal(out, "a b");
    gr_grpc_percent_decode("%C3%BCber%25", 12, out, sizeof out);
    assert_string_equal(out, "\xc3\xbc"
                             "ber%");
    /* Malformed escapes stay as they are. */
    gr_grpc_percent_decode("100%", 4, out, sizeof out);
    assert_string_equal(out, "100%");
    gr_grpc_percent_decode("%zz%4", 5, out, sizeof out);
    assert_string_equal(out, "%zz%4");
    /* Truncation keeps the terminator. */
    assert_int_equal(gr_grpc_percent_decode("abcdef", 6, out, 4), 3);
    assert_string_equal(out, "abc");
}

static void feed_all(gr_grpc_meta *m, const char *const *lines)
{
    for (; *lines; lines++)
        gr_grpc_meta_line(m, *lines, strlen(*lines));
}

static void test_trailers_after_body(void **state)
{
    (void)state;
    gr_grpc_meta m;
    gr_grpc_reader r;
    gr_grpc_meta_init(&m);
    gr_grpc_reader_init(&r, 0);
    const char *head[] = {"HTTP/2 200\r\n", "content-type: application/grpc+proto\r\n",
                          "grpc-accept-encoding: identity\r\n", "\r\n", NULL};
    feed_all(&m, head);
    assert_int_equal(m.http_status, 200);
    assert_false(m.have_status);
    /* Empty message, split oddly. */
    assert_int_equal(gr_grpc_reader_feed(&r, "\0\0", 2, NULL), GR_OK);
    assert_int_equal(gr_grpc_reader_feed(&r, "\0\0\0", 3, NULL), GR_OK);
    assert_int_equal(gr_grpc_reader_finish(&r, NULL), GR_OK);
    const char *trail[] = {"grpc-status: 0\r\n", "grpc-message: \r\n", "\r\n", NULL};
    feed_all(&m, trail);
    gr_grpc_status st;
    gr_grpc_resolve(&m, &r, GR_OK, NULL, 1, &st);
    assert_int_equal(st.code, GR_GRPC_OK);
    assert_int_equal(r.nmsgs, 1);
    assert_int_equal(r.first.len, 0);
    gr_grpc_reader_free(&r);
}

static void test_trailers_only(void **state)
{
    (void)state;
    gr_grpc_meta m;
    gr_grpc_reader r;
    gr_grpc_meta_init(&m);
    gr_grpc_reader_init(&r, 0);
    const char *lines[] = {"HTTP/2 200",
                           "Content-Type: application/grpc",
                           "Grpc-Status: 14",
                           "grpc-message: connector%20down%3A%20%E2%9C%97",
                           "",
                           NULL};
    feed_all(&m, lines);
    gr_grpc_status st;
    gr_grpc_resolve(&m, &r, GR_OK, NULL, 1, &st);
    assert_int_equal(st.code, GR_GRPC_UNAVAILABLE);
    assert_string_equal(st.message, "connector down: \xe2\x9c\x97");
    gr_grpc_reader_free(&r);
}

static void test_missing_status_is_error(void **state)
{
    (void)state;
    gr_grpc_meta m;
    gr_grpc_reader r;
    gr_grpc_meta_init(&m);
    gr_grpc_reader_init(&r, 0);
    const char *lines[] = {"HTTP/2 200", "content-type: application/grpc", "", NULL};
    feed_all(&m, lines);
    gr_grpc_reader_feed(&r, "\0\0\0\0\0", 5, NULL);
    gr_grpc_status st;
    gr_grpc_resolve(&m, &r, GR_OK, NULL, 1, &st);
    assert_int_equal(st.code, GR_GRPC_INTERNAL);
    assert_non_null(strstr(st.message, "grpc-status"));

    /* Garbage grpc-status is not OK either. */
    gr_grpc_meta_line(&m, "grpc-status: 0x0", 16);
    gr_grpc_resolve(&m, &r, GR_OK, NULL, 1, &st);
    assert_int_equal(st.code, GR_GRPC_INTERNAL);
    gr_grpc_reader_free(&r);
}

static void test_http_status_mapping(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        int code;
    } cases[] = {
        {"HTTP/2 401", GR_GRPC_UNAUTHENTICATED}, {"HTTP/2 403", GR_GRPC_PERMISSION_DENIED},
        {"HTTP/2 404", GR_GRPC_UNIMPLEMENTED},   {"HTTP/2 429", GR_GRPC_UNAVAILABLE},
        {"HTTP/2 502", GR_GRPC_UNAVAILABLE},     {"HTTP/2 503", GR_GRPC_UNAVAILABLE},
        {"HTTP/2 504", GR_GRPC_UNAVAILABLE},     {"HTTP/2 400", GR_GRPC_INTERNAL},
        {"HTTP/1.1 500 Oops", GR_GRPC_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gr_grpc_meta m;
        gr_grpc_reader r;
        gr_grpc_meta_init(&m);
        gr_grpc_reader_init(&r, 0);
        gr_grpc_meta_line(&m, cases[i].line, strlen(cases[i].line));
        gr_grpc_meta_line(&m, "content-type: text/html", 23);
        gr_grpc_status st;
        gr_grpc_resolve(&m, &r, GR_OK, NULL, 1, &st);
        assert_int_equal(st.code, cases[i].code);
        gr_grpc_reader_free(&r);
    }
    /* A non-gRPC content type on 200 is UNKNOWN. */
    gr_grpc_meta m;
    gr_grpc_reader r;
    gr_grpc_meta_init(&m);
    gr_grpc_reader_init(&r, 0);
    const char *lines[] = {"HTTP/2 200", "content-type: application/grpcx", "grpc-status: 0", NULL};
    feed_all(&m, lines);
    gr_grpc_status st;
    gr_grpc_resolve(&m, &r, GR_OK, NULL, 1, &st);
    assert_int_equal(st.code, GR_GRPC_UNKNOWN);
    /* Nothing at all. */
    gr_grpc_meta_init(&m);
    gr_grpc_resolve(&m, &r, GR_OK, NULL, 1, &st);
    assert_int_equal(st.code, GR_GRPC_INTERNAL);
    gr_grpc_reader_free(&r);
}

static void test_reader_errors(void **state)
{
    (void)state;
    gr_grpc_reader r;
    gr_err err;
    gr_grpc_reader_init(&r, 8);
    assert_int_equal(gr_grpc_reader_feed(&r, "\1\0\0\0\1x", 6, &err), GR_EPARSE);
    assert_non_null(strstr(err.msg, "compressed"));
    gr_grpc_reader_free(&r);

    gr_grpc_reader_init(&r, 8);
    assert_int_equal(gr_grpc_reader_feed(&r, "\0\0\0\0\x09", 5, &err), GR_ETOOBIG);
    gr_grpc_reader_free(&r);

    gr_grpc_reader_init(&r, 8);
    assert_int_equal(gr_grpc_reader_feed(&r, "\x80\0\0\0\0", 5, &err), GR_EPARSE);
    gr_grpc_reader_free(&r);

    /* Truncated message. */
    gr_grpc_reader_init(&r, 8);
    assert_int_equal(gr_grpc_reader_feed(&r, "\0\0\0\0\3ab", 7, &err), GR_OK);
    assert_int_equal(gr_grpc_reader_finish(&r, &err), GR_EPARSE);
    gr_grpc_meta m;
    gr_grpc_meta_init(&m);
    const char *lines[] = {"HTTP/2 200", "content-type: application/grpc", "grpc-status: 0", NULL};
    feed_all(&m, lines);
    gr_grpc_status st;
    gr_grpc_resolve(&m, &r, GR_EPARSE, err.msg, 1, &st);
    assert_int_equal(st.code, GR_GRPC_INTERNAL);
    gr_grpc_reader_free(&r);

    /* Two messages for a unary call: INTERNAL; first payload kept. */
    gr_grpc_reader_init(&r, 8);
    assert_int_equal(gr_grpc_reader_feed(&r, "\0\0\0\0\2hi\0\0\0\0\1!", 13, &err), GR_OK);
    assert_int_equal(r.nmsgs, 2);
    assert_string_equal(gr_buf_cstr(&r.first), "hi");
    gr_grpc_resolve(&m, &r, GR_OK, NULL, 1, &st);
    assert_int_equal(st.code, GR_GRPC_INTERNAL);
    /* Zero messages with OK: INTERNAL too. */
    gr_grpc_reader_free(&r);
    gr_grpc_reader_init(&r, 8);
    gr_grpc_resolve(&m, &r, GR_OK, NULL, 1, &st);
    assert_int_equal(st.code, GR_GRPC_INTERNAL);
    gr_grpc_reader_free(&r);
}

static void test_byte_at_a_time(void **state)
{
    (void)state;
    gr_grpc_reader r;
    gr_grpc_reader_init(&r, 0);
    const char msg[] = "\0\0\0\0\5hello";
    for (size_t i = 0; i < sizeof msg - 1; i++)
        assert_int_equal(gr_grpc_reader_feed(&r, msg + i, 1, NULL), GR_OK);
    assert_int_equal(r.nmsgs, 1);
    assert_string_equal(gr_buf_cstr(&r.first), "hello");
    gr_grpc_reader_free(&r);
}

static void test_code_names(void **state)
{
    (void)state;
    assert_string_equal(gr_grpc_code_name(14), "UNAVAILABLE");
    assert_string_equal(gr_grpc_code_name(16), "UNAUTHENTICATED");
    assert_string_equal(gr_grpc_code_name(17), "UNKNOWN_CODE");
    assert_string_equal(gr_grpc_code_name(-1), "UNKNOWN_CODE");
    /* Codes beyond 16 from a server become UNKNOWN. */
    gr_grpc_meta m;
    gr_grpc_reader r;
    gr_grpc_meta_init(&m);
    gr_grpc_reader_init(&r, 0);
    const char *lines[] = {"HTTP/2 200", "grpc-status: 42", NULL};
    feed_all(&m, lines);
    gr_grpc_status st;
    gr_grpc_resolve(&m, &r, GR_OK, NULL, 1, &st);
    assert_int_equal(st.code, GR_GRPC_UNKNOWN);
    gr_grpc_reader_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_encode),        cmocka_unit_test(test_timeout_format),
        cmocka_unit_test(test_percent_decode),      cmocka_unit_test(test_trailers_after_body),
        cmocka_unit_test(test_trailers_only),       cmocka_unit_test(test_missing_status_is_error),
        cmocka_unit_test(test_http_status_mapping), cmocka_unit_test(test_reader_errors),
        cmocka_unit_test(test_byte_at_a_time),      cmocka_unit_test(test_code_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
