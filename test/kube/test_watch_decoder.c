/* The pure watch-stream decoder: framing, chunking, caps, malformed input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gr_kube_watch.h"

static const char *STREAM =
    "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\","
    "\"resourceVersion\":\"10\",\"annotations\":{\"x\":\"}{\\\"]\\\\\"}}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"11\"}}}"
    "\n"
    "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}\n"
    "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"13\"}}}\n"
    "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}}\n";

static const gr_kube_event_type EXPECT[] = {GR_KUBE_EV_ADDED, GR_KUBE_EV_MODIFIED,
                                            GR_KUBE_EV_BOOKMARK, GR_KUBE_EV_DELETED,
                                            GR_KUBE_EV_ERROR};

/* Feed the stream in chunks of `step` bytes; every event comes out once, in
 * order, whatever the chunking. */
static void run_chunked(size_t step)
{
    gr_kube_watch_decoder *d;
    gr_err err;
    assert_int_equal(gr_kube_watch_decoder_new(0, &d, &err), GR_OK);
    size_t len = strlen(STREAM), got = 0;
    for (size_t off = 0; off < len; off += step) {
        size_t n = len - off < step ? len - off : step;
        assert_int_equal(gr_kube_watch_decoder_feed(d, STREAM + off, n, &err), GR_OK);
        gr_kube_watch_event ev;
        int r;
        while ((r = gr_kube_watch_decoder_next(d, &ev, &err)) == 1) {
            assert_true(got < 5);
            assert_int_equal(ev.type, EXPECT[got]);
            if (got == 0) {
                json_t *ann =
                    json_object_get(json_object_get(ev.object, "metadata"), "annotations");
                assert_string_equal(json_string_value(json_object_get(ann, "x")), "}{\"]\\");
            }
            got++;
            gr_kube_watch_event_clear(&ev);
        }
        assert_int_equal(r, 0);
    }
    assert_int_equal(got, 5);
    assert_int_equal(gr_kube_watch_decoder_pending(d), 0);
    assert_int_equal(gr_kube_watch_decoder_count(d), 5);
    gr_kube_watch_decoder_free(d);
}

static void test_chunking(void **state)
{
    (void)state;
    for (size_t step = 1; step < 40; step++)
        run_chunked(step);
    run_chunked(4096);
}

static void test_no_newlines_and_truncation(void **state)
{
    (void)state;
    gr_kube_watch_decoder *d;
    gr_err err;
    assert_int_equal(gr_kube_watch_decoder_new(0, &d, &err), GR_OK);
    const char *s = "{\"type\":\"ADDED\",\"object\":{}}{\"type\":\"DELETED\",\"object\":{\"a\":[1,";
    assert_int_equal(gr_kube_watch_decoder_feed(d, s, strlen(s), &err), GR_OK);
    gr_kube_watch_event ev;
    assert_int_equal(gr_kube_watch_decoder_next(d, &ev, &err), 1);
    gr_kube_watch_event_clear(&ev);
    assert_int_equal(gr_kube_watch_decoder_next(d, &ev, &err), 0);
    assert_true(gr_kube_watch_decoder_pending(d) > 0); /* truncated tail is visible */
    gr_kube_watch_decoder_free(d);
}

static void expect_error(const char *s, size_t cap, int code, const char *needle)
{
    gr_kube_watch_decoder *d;
    gr_err err;
    assert_int_equal(gr_kube_watch_decoder_new(cap, &d, &err), GR_OK);
    int rc = gr_kube_watch_decoder_feed(d, s, strlen(s), &err);
    gr_kube_watch_event ev = {0};
    if (rc == GR_OK) {
        while ((rc = gr_kube_watch_decoder_next(d, &ev, &err)) == 1)
            gr_kube_watch_event_clear(&ev);
    }
    assert_int_equal(rc, code);
    assert_non_null(strstr(err.msg, needle));
    /* sticky: later calls keep failing */
    assert_int_equal(gr_kube_watch_decoder_next(d, &ev, &err), code);
    assert_int_equal(gr_kube_watch_decoder_feed(d, "{}", 2, &err), code);
    gr_kube_watch_decoder_free(d);
}

static void test_bad_input(void **state)
{
    (void)state;
    expect_error("[1,2]", 0, GR_EPARSE, "event 1: expected '{'");
    expect_error("{\"type\":\"ADDED\",\"object\":{}} x", 0, GR_EPARSE, "event 2: expected '{'");
    expect_error("{\"type\":\"NOPE\",\"object\":{}}", 0, GR_EPARSE, "\"type\" must be");
    expect_error("{\"type\":\"ADDED\",\"object\":5}", 0, GR_EPARSE, "\"object\" must be");
    expect_error("{\"type\":\"ADDED\",\"object\":{\"a\":tru}}", 0, GR_EPARSE, "malformed JSON");
    expect_error("{\"type\":\"ADDED\",\"type\":\"ADDED\",\"object\":{}}", 0, GR_EPARSE,
                 "malformed JSON");
    /* oversized event: fails once it passes the cap, without buffering it all */
    char big[4096];
    memset(big, ' ', sizeof big);
    const char *head = "{\"type\":\"ADDED\",\"object\":{\"x\":\"";
    memcpy(big, head, strlen(head));
    memset(big + strlen(head), 'a', sizeof big - 1 - strlen(head));
    big[sizeof big - 1] = 0;
    expect_error(big, 1024, GR_ETOOBIG, "larger than the 1024-byte limit");
}

static void test_oversize_streamed(void **state)
{
    (void)state;
    /* a never-ending event fed in chunks: memory stays bounded by the cap */
    gr_kube_watch_decoder *d;
    gr_err err;
    assert_int_equal(gr_kube_watch_decoder_new(8192, &d, &err), GR_OK);
    assert_int_equal(gr_kube_watch_decoder_feed(d, "{\"a\":\"", 6, &err), GR_OK);
    char chunk[1000];
    memset(chunk, 'z', sizeof chunk);
    int rc = GR_OK;
    for (int i = 0; i < 100 && rc == GR_OK; i++) {
        rc = gr_kube_watch_decoder_feed(d, chunk, sizeof chunk, &err);
        if (rc == GR_OK) {
            gr_kube_watch_event ev;
            rc = gr_kube_watch_decoder_next(d, &ev, &err);
            if (rc == 0)
                rc = GR_OK;
        }
    }
    assert_int_equal(rc, GR_ETOOBIG);
    gr_kube_watch_decoder_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunking),
        cmocka_unit_test(test_no_newlines_and_truncation),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_oversize_streamed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
