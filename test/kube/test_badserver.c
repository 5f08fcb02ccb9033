/* The client against a misbehaving HTTP server (libmicrohttpd on loopback):
 * a stream that stalls, a truncated event, an oversized event and body, a
 * 429 with Retry-After, a non-Status error page, a watch ERROR event. Every
 * case ends in a typed error (or a retry), never a crash or a hang. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <microhttpd.h>

#include "gr_kube_rest.h"
#include "gr_kube_watch.h"

static struct MHD_Daemon *d;
static int port;
static atomic_int stopping;
static atomic_int busy_calls;

typedef struct stall_state {
    int sent;
} stall_state;

static ssize_t stall_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    stall_state *s = cls;
    (void)pos;
    if (!s->sent) {
        const char *ev = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
                         "\"resourceVersion\":\"7\"}}}\n";
        size_t n = strlen(ev) < max ? strlen(ev) : max;
        memcpy(buf, ev, n);
        s->sent = 1;
        return (ssize_t)n;
    }
    /* then say nothing, for a long time */
    for (int i = 0; i < 200 && !atomic_load(&stopping); i++) {
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    return MHD_CONTENT_READER_END_OF_STREAM;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *body,
                             const char *retry_after)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)(uintptr_t)body,
                                                             MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "application/json");
    if (retry_after)
        MHD_add_response_header(r, "Retry-After", retry_after);
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    (void)cls;
    (void)method;
    (void)version;
    (void)upload;
    (void)upload_size;
    if (!*con_cls) { /* first call per request: headers only */
        *con_cls = (void *)1;
        return MHD_YES;
    }
    if (strstr(url, "/namespaces/stall/")) {
        stall_state *s = calloc(1, sizeof *s);
        struct MHD_Response *r =
            MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024, stall_cb, s, free);
        enum MHD_Result ret = MHD_queue_response(c, 200, r);
        MHD_destroy_response(r);
        return ret;
    }
    if (strstr(url, "/namespaces/trunc/"))
        return reply(c, 200,
                     "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
                     "\"resourceVersion\":\"5\"}}}\n{\"type\":\"MODIFIED\",\"obj",
                     NULL);
    if (strstr(url, "/namespaces/gone/"))
        return reply(c, 200,
                     "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                     "\"status\":\"Failure\",\"message\":\"too old resource version: 1 (99)\","
                     "\"reason\":\"Expired\",\"code\":410}}\n",
                     NULL);
    if (strstr(url, "/namespaces/big/")) {
        static char big[200000];
        if (!big[0]) {
            memset(big, ' ', sizeof big - 1);
            const char *h = "{\"type\":\"ADDED\",\"object\":{\"x\":\"";
            memcpy(big, h, strlen(h));
            memset(big + strlen(h), 'x', sizeof big - 100);
            memcpy(big + sizeof big - 10, "\"}}\n", 4);
            big[sizeof big - 6] = 0;
        }
        return reply(c, 200, big, NULL);
    }
    if (strstr(url, "/namespaces/busy/")) {
        if (atomic_fetch_add(&busy_calls, 1) == 0)
            return reply(c, 429,
                         "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"code\":429}", "1");
        return reply(c, 200, "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\"}}", NULL);
    }
    if (strstr(url, "/namespaces/err/"))
        return reply(c, 500, "<html>oops</html>", NULL);
    return reply(c, 404, "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"code\":404}", NULL);
}

static gr_kube_client *client(void)
{
    gr_kube_config cfg = {0};
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    cfg.server = url;
    cfg.qps = -1;
    gr_kube_client *c = NULL;
    gr_err err;
    assert_int_equal(gr_kube_client_new(&cfg, &c, &err), GR_OK);
    return c;
}

static int setup(void **state)
{
    (void)state;
    d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL,
                         NULL, handler, NULL, MHD_OPTION_END);
    if (!d)
        return -1;
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    port = i->port;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    atomic_store(&stopping, 1);
    MHD_stop_daemon(d);
    return 0;
}

static const gr_kube_gvr CM = {"", "v1", "configmaps"};

static void test_stalled_stream_times_out(void **state)
{
    (void)state;
    gr_kube_client *c = client();
    gr_kube_watch_stats ws = {0};
    gr_kube_status st;
    gr_err err;
    int rc = gr_kube_watch(c, &CM, "stall", NULL, 1 /* idle s */, NULL, NULL, &ws, &st, &err);
    assert_int_equal(rc, GR_ETIMEDOUT);
    assert_string_equal(ws.last_rv, "7"); /* the informer resumes from here */
    gr_kube_client_free(c);
}

static void test_truncated_and_gone(void **state)
{
    (void)state;
    gr_kube_client *c = client();
    gr_kube_watch_stats ws = {0};
    gr_kube_status st;
    gr_err err;
    assert_int_equal(gr_kube_watch(c, &CM, "trunc", NULL, 0, NULL, NULL, &ws, &st, &err),
                     GR_EPARSE);
    assert_int_equal(ws.events, 1);
    assert_string_equal(ws.last_rv, "5");
    assert_int_equal(gr_kube_watch(c, &CM, "gone", NULL, 0, NULL, NULL, NULL, &st, &err),
                     GR_ESTATE);
    assert_true(gr_kube_status_is_gone(&st));
    assert_int_equal(st.http_code, 410);
    gr_kube_client_free(c);
}

static void test_oversized(void **state)
{
    (void)state;
    gr_kube_client *c = client();
    gr_kube_status st;
    gr_err err;
    gr_kube_opts o = {0};
    o.max_response = 4096;
    assert_int_equal(gr_kube_watch(c, &CM, "big", &o, 0, NULL, NULL, NULL, &st, &err), GR_ETOOBIG);
    json_t *out = NULL;
    assert_int_equal(gr_kube_get(c, &CM, "big", "x", &o, &out, &st, &err), GR_ETOOBIG);
    assert_null(out);
    assert_non_null(strstr(err.msg, "4096-byte limit"));
    gr_kube_client_free(c);
}

static void test_retry_after_and_error_page(void **state)
{
    (void)state;
    gr_kube_client *c = client();
    gr_kube_status st;
    gr_err err;
    json_t *out = NULL;
    assert_int_equal(gr_kube_get(c, &CM, "busy", "x", NULL, &out, &st, &err), GR_OK);
    assert_int_equal(atomic_load(&busy_calls), 2); /* one 429, then the answer */
    json_decref(out);
    assert_int_equal(gr_kube_get(c, &CM, "err", "x", NULL, &out, &st, &err), GR_EIO);
    assert_int_equal(st.reason, GR_KUBE_REASON_INTERNAL_ERROR);
    assert_int_equal(st.http_code, 500);
    assert_string_equal(st.message, "<html>oops</html>");
    /* cancellation aborts a request promptly */
    atomic_int cancel = 1;
    gr_kube_opts o = {0};
    o.cancel = &cancel;
    assert_int_equal(gr_kube_watch(c, &CM, "stall", &o, 0, NULL, NULL, NULL, &st, &err),
                     GR_ECANCELED);
    gr_kube_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stalled_stream_times_out),
        cmocka_unit_test(test_truncated_and_gone),
        cmocka_unit_test(test_oversized),
        cmocka_unit_test(test_retry_after_and_error_page),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
