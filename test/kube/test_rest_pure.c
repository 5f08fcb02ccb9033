/* Status → typed error mapping, request paths, token bucket, backoff. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gr_kube_rest.h"
#include "gr_kube_watch.h"

static void test_status_mapping(void **state)
{
    (void)state;
    static const struct {
        long http;
        const char *reason;
        gr_kube_reason r;
        int code;
    } cases[] = {
        {404, "NotFound", GR_KUBE_REASON_NOT_FOUND, GR_ENOTFOUND},
        {409, "AlreadyExists", GR_KUBE_REASON_ALREADY_EXISTS, GR_ECONFLICT},
        {409, "Conflict", GR_KUBE_REASON_CONFLICT, GR_ECONFLICT},
        {403, "Forbidden", GR_KUBE_REASON_FORBIDDEN, GR_EPERM},
        {422, "Invalid", GR_KUBE_REASON_INVALID, GR_EINVAL},
        {410, "Gone", GR_KUBE_REASON_GONE, GR_ESTATE},
        {410, "Expired", GR_KUBE_REASON_EXPIRED, GR_ESTATE},
        {429, "TooManyRequests", GR_KUBE_REASON_TOO_MANY_REQUESTS, GR_EAGAIN},
        {504, "ServerTimeout", GR_KUBE_REASON_SERVER_TIMEOUT, GR_EAGAIN},
        {401, "Unauthorized", GR_KUBE_REASON_UNAUTHORIZED, GR_EPERM},
        {500, "InternalError", GR_KUBE_REASON_INTERNAL_ERROR, GR_EIO},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char body[512];
        snprintf(body, sizeof body,
                 "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                 "\"message\":\"m%zu\",\"reason\":\"%s\",\"code\":%ld}",
                 i, cases[i].reason, cases[i].http);
        gr_kube_status st;
        assert_int_equal(gr_kube_status_from_response(cases[i].http, body, strlen(body), &st),
                         cases[i].code);
        assert_int_equal(st.reason, cases[i].r);
        assert_string_equal(st.reason_str, cases[i].reason);
        assert_int_equal(st.http_code, cases[i].http);
    }
}

static void test_status_causes_and_fallbacks(void **state)
{
    (void)state;
    const char *inv =
        "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"Widget.x \\\"A\\\" is invalid\","
        "\"reason\":\"Invalid\",\"details\":{\"name\":\"A\",\"group\":\"x\",\"kind\":\"Widget\","
        "\"causes\":[{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: \\\"A\\\"\","
        "\"field\":\"metadata.name\"},{\"reason\":\"FieldValueRequired\",\"message\":\"Required "
        "value\",\"field\":\"spec.size\"}]},\"code\":422}";
    gr_kube_status st;
    assert_int_equal(gr_kube_status_from_response(422, inv, strlen(inv), &st), GR_EINVAL);
    assert_int_equal(st.ncauses, 2);
    assert_string_equal(st.causes[0].type, "FieldValueInvalid");
    assert_string_equal(st.causes[0].field, "metadata.name");
    assert_string_equal(st.causes[1].field, "spec.size");
    assert_string_equal(st.kind, "Widget");
    assert_string_equal(st.name, "A");
    /* not a Status (a proxy's HTML page, truncated JSON): derive from code */
    assert_int_equal(gr_kube_status_from_response(503, "<html>down</html>", 17, &st), GR_EAGAIN);
    assert_int_equal(st.reason, GR_KUBE_REASON_SERVICE_UNAVAILABLE);
    assert_string_equal(st.message, "<html>down</html>");
    assert_int_equal(gr_kube_status_from_response(404, "{\"kind\":\"Sta", 12, &st), GR_ENOTFOUND);
    assert_int_equal(gr_kube_status_from_response(418, NULL, 0, &st), GR_EIO);
    assert_int_equal(st.reason, GR_KUBE_REASON_UNKNOWN);
    assert_int_equal(gr_kube_status_from_response(200, "{}", 2, &st), GR_OK);
    /* unknown reason string keeps the text, maps by code */
    const char *odd = "{\"kind\":\"Status\",\"reason\":\"Brand new\",\"code\":409}";
    assert_int_equal(gr_kube_status_from_response(409, odd, strlen(odd), &st), GR_ECONFLICT);
    assert_string_equal(st.reason_str, "Brand new");
    /* watch ERROR event: HTTP 200 stream, Status.code 410 */
    json_t *ev = json_pack("{s:s,s:s,s:s,s:i}", "kind", "Status", "reason", "Expired", "message",
                           "too old resource version: 1 (42)", "code", 410);
    assert_int_equal(gr_kube_status_from_json(0, ev, &st), GR_ESTATE);
    assert_true(gr_kube_status_is_gone(&st));
    assert_int_equal(st.http_code, 410);
    json_decref(ev);
    /* retryAfterSeconds */
    const char *tmr = "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"code\":429,"
                      "\"details\":{\"retryAfterSeconds\":3}}";
    assert_int_equal(gr_kube_status_from_response(429, tmr, strlen(tmr), &st), GR_EAGAIN);
    assert_int_equal(st.retry_after_s, 3);
}

static void test_paths(void **state)
{
    (void)state;
    gr_buf b = GR_BUF_INIT(4096);
    gr_err err;
    assert_int_equal(
        gr_kube_build_path(&b, &GR_KUBE_PODS, "ns1", "p 1", "status", NULL, false, &err), GR_OK);
    assert_string_equal(gr_buf_cstr(&b), "/api/v1/namespaces/ns1/pods/p%201/status");
    gr_buf_reset(&b);
    gr_kube_opts o = {0};
    o.label_selector = "app=x,tier in (a,b)";
    o.limit = 50;
    o.continue_token = "abc=";
    assert_int_equal(gr_kube_build_path(&b, &GR_KUBE_LEASES, NULL, NULL, NULL, &o, false, &err),
                     GR_OK);
    assert_string_equal(gr_buf_cstr(&b), "/apis/coordination.k8s.io/v1/leases?labelSelector=app%"
                                         "3Dx%2Ctier%20in%20%28a%2Cb%29&limit=50&continue=abc%3D");
    gr_buf_reset(&b);
    gr_kube_opts w = {0};
    w.resource_version = "12";
    w.allow_bookmarks = true;
    w.limit = 5; /* not sent on watch */
    assert_int_equal(gr_kube_build_path(&b, &GR_KUBE_PODS, "a", NULL, NULL, &w, true, &err), GR_OK);
    assert_string_equal(gr_buf_cstr(&b), "/api/v1/namespaces/a/pods?watch=1&allowWatchBookmarks="
                                         "true&timeoutSeconds=300&resourceVersion=12");
    gr_buf_reset(&b);
    gr_kube_opts a = {0};
    a.field_manager = "gpuready";
    a.force = true;
    assert_int_equal(gr_kube_build_path(&b, &GR_KUBE_CONFIGMAPS, "a", "cm", NULL, &a, false, &err),
                     GR_OK);
    assert_string_equal(gr_buf_cstr(&b),
                        "/api/v1/namespaces/a/configmaps/cm?fieldManager=gpuready&force=true");
    assert_int_equal(gr_kube_build_path(&b, &GR_KUBE_PODS, "a", "../x", NULL, NULL, false, &err),
                     GR_EINVAL);
    gr_kube_gvr bad = {"", "", "pods"};
    assert_int_equal(gr_kube_build_path(&b, &bad, NULL, NULL, NULL, NULL, false, &err), GR_EINVAL);
    gr_buf_free(&b);
}

static void test_bucket(void **state)
{
    (void)state;
    gr_kube_bucket b;
    gr_kube_bucket_init(&b, 5.0, 10);
    int64_t t = 1000000000LL;
    for (int i = 0; i < 10; i++) /* burst goes through */
        assert_int_equal(gr_kube_bucket_reserve(&b, t), 0);
    int64_t w = gr_kube_bucket_reserve(&b, t); /* 11th waits 1/qps */
    assert_true(w > 190000000LL && w <= 200000000LL);
    int64_t w2 = gr_kube_bucket_reserve(&b, t); /* and the next one twice that */
    assert_true(w2 > 390000000LL && w2 <= 400000000LL);
    gr_kube_bucket_reserve(&b, t + 10000000000LL);
    /* wait_for books nothing: after 10 s the bucket was full again (one
     * token taken just now). */
    int64_t t2 = t + 10000000000LL;
    assert_int_equal(gr_kube_bucket_wait_for(&b, 3, t2), 0);
    assert_int_equal(gr_kube_bucket_wait_for(&b, 9, t2), 0);
    assert_true(gr_kube_bucket_wait_for(&b, 50, t2) > 0); /* capped at the burst: 10 */
    assert_true(gr_kube_bucket_wait_for(&b, 50, t2) <= 200000000LL);
    for (int i = 0; i < 9; i++) /* the 10th went above */
        assert_int_equal(gr_kube_bucket_reserve(&b, t2), 0);
    /* Empty: 3 tokens take 3/qps; 2 of them are there 0.4 s later. */
    w = gr_kube_bucket_wait_for(&b, 3, t2);
    assert_true(w > 590000000LL && w <= 600000000LL);
    w = gr_kube_bucket_wait_for(&b, 3, t2 + 400000000LL);
    assert_true(w > 190000000LL && w <= 200000000LL);
    assert_int_equal(gr_kube_bucket_wait_for(&b, 3, t2 + 600000000LL), 0);
    /* A booked future token (negative balance) counts against it. */
    w = gr_kube_bucket_reserve(&b, t2);
    assert_true(w > 190000000LL && w <= 200000000LL);
    w = gr_kube_bucket_wait_for(&b, 1, t2);
    assert_true(w > 390000000LL && w <= 400000000LL);
    assert_int_equal(gr_kube_bucket_wait_for(&b, 0, t2), 0);
    gr_kube_bucket unl;
    gr_kube_bucket_init(&unl, -1, 1);
    for (int i = 0; i < 100; i++)
        assert_int_equal(gr_kube_bucket_reserve(&unl, t), 0);
    assert_int_equal(gr_kube_bucket_wait_for(&unl, 5, t), 0);
}

static void test_backoff(void **state)
{
    (void)state;
    gr_kube_backoff b;
    gr_kube_backoff_init(&b, 800000000LL, 30000000000LL, 120000000000LL, 7);
    int64_t now = 0, prev_base = 0;
    for (int i = 0; i < 10; i++) {
        int64_t d = gr_kube_backoff_next(&b, now);
        assert_true(d >= b.cur_ns && d < 2 * b.cur_ns);
        assert_true(b.cur_ns >= prev_base);
        assert_true(b.cur_ns <= 30000000000LL);
        prev_base = b.cur_ns;
        now += d;
    }
    assert_int_equal(b.cur_ns, 30000000000LL);
    /* quiet for longer than the reset period: back to the initial delay */
    gr_kube_backoff_next(&b, now + 200000000000LL);
    assert_int_equal(b.cur_ns, 800000000LL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_mapping), cmocka_unit_test(test_status_causes_and_fallbacks),
        cmocka_unit_test(test_paths),          cmocka_unit_test(test_bucket),
        cmocka_unit_test(test_backoff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
