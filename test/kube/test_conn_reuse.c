/* The client reuses its connections (issue 19: gpuready-manager's CPU went
 * into TLS handshakes): against a local HTTP server (libmicrohttpd, one
 * thread per connection) that counts the connections it accepts, and the
 * client's sockets in /proc/net/tcp.
 *
 *  - open watches do not evict idle connections: with 8 streams open,
 *    50 sequential GETs go over one connection (libcurl's default shared
 *    cache counted the watches against its limit of 5 and closed each GET's
 *    connection, 50 connections);
 *  - idle connections are bounded: after 40 concurrent requests the client
 *    keeps GR_KUBE_MAX_IDLE_CONNS of them open, closes the rest, and later
 *    requests reuse the kept ones;
 *  - gr_kube_client_connections() counts what the server saw.
 *
 * Waits only bound a hang (scaled to load, gr_test_scale.h); no timing is
 * asserted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <pthread.h>

#include <microhttpd.h>

#include "../harness/gr_test_scale.h"
#include "gr_kube_rest.h"

static struct MHD_Daemon *d;
static int port;
static atomic_int started;      /* connections accepted */
static atomic_int streams_open; /* watch streams being served */
static atomic_int release;      /* end the watch streams */
static atomic_int burst_in;     /* burst requests arrived */
static atomic_int burst_target; /* hold burst requests until this many arrived */
static int wait_s;              /* scaled bound of every wait */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void on_conn(void *cls, struct MHD_Connection *c, void **socket_context,
                    enum MHD_ConnectionNotificationCode code)
{
    (void)cls;
    (void)c;
    (void)socket_context;
    if (code == MHD_CONNECTION_NOTIFY_STARTED)
        atomic_fetch_add(&started, 1);
}

typedef struct stream_state {
    int sent;
} stream_state;

/* A watch: one event, then nothing until the test releases it. */
static ssize_t stream_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    stream_state *s = cls;
    (void)pos;
    if (!s->sent) {
        const char *ev = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
                         "\"resourceVersion\":\"7\"}}}\n";
        size_t n = strlen(ev) < max ? strlen(ev) : max;
        memcpy(buf, ev, n);
        s->sent = 1;
        atomic_fetch_add(&streams_open, 1);
        return (ssize_t)n;
    }
    for (long i = 0; i < (long)wait_s * 100 && !atomic_load(&release); i++)
        sleep_ms(10);
    atomic_fetch_sub(&streams_open, 1);
    return MHD_CONTENT_READER_END_OF_STREAM;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *body)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)(uintptr_t)body,
                                                             MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "application/json");
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
    if (strstr(url, "/namespaces/hold/")) {
        stream_state *s = calloc(1, sizeof *s);
        struct MHD_Response *r =
            MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024, stream_cb, s, free);
        enum MHD_Result ret = MHD_queue_response(c, 200, r);
        MHD_destroy_response(r);
        return ret;
    }
    if (strstr(url, "/namespaces/burst/")) {
        /* hold every burst request until all have arrived: the client must
         * have had that many connections open at once */
        atomic_fetch_add(&burst_in, 1);
        for (long i = 0;
             i < (long)wait_s * 100 && atomic_load(&burst_in) < atomic_load(&burst_target); i++)
            sleep_ms(10);
    }
    return reply(c, 200,
                 "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\"}}");
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

/* The client's open connections to the server: sockets in /proc/net/tcp
 * connected to the server's port and ESTABLISHED (state 01). A client
 * close() takes its socket out of that state at once (libmicrohttpd's
 * thread per connection notices an idle peer's close only late, so the
 * server's count cannot tell). */
static int client_open(void)
{
    FILE *f = fopen("/proc/net/tcp", "r");
    assert_non_null(f);
    char line[512];
    int n = 0;
    if (!fgets(line, sizeof line, f)) { /* header */
        fclose(f);
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        unsigned lport, rport, state;
        char laddr[16], raddr[16];
        if (sscanf(line, " %*d: %8[0-9A-Fa-f]:%x %8[0-9A-Fa-f]:%x %x", laddr, &lport, raddr, &rport,
                   &state) == 5 &&
            rport == (unsigned)port && state == 1)
            n++;
    }
    fclose(f);
    return n;
}

static int setup(void **state)
{
    (void)state;
    wait_s = gr_test_scaled_s(30);
    d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL,
                         NULL, handler, NULL, MHD_OPTION_NOTIFY_CONNECTION, on_conn, NULL,
                         MHD_OPTION_CONNECTION_LIMIT, (unsigned int)200, MHD_OPTION_END);
    if (!d)
        return -1;
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    port = i->port;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    atomic_store(&release, 1);
    MHD_stop_daemon(d);
    return 0;
}

static const gr_kube_gvr CM = {"", "v1", "configmaps"};

static int drop(void *ctx, const char *data, size_t len)
{
    (void)ctx;
    (void)data;
    (void)len;
    return 0;
}

typedef struct worker {
    gr_kube_client *c;
    pthread_t t;
    int rc;
} worker;

static void *watch_thread(void *arg)
{
    worker *w = arg;
    gr_kube_status st;
    gr_err err;
    w->rc = gr_kube_request_stream(w->c, "GET", "/api/v1/namespaces/hold/configmaps?watch=1", NULL,
                                   0, drop, NULL, NULL, &st, &err);
    return NULL;
}

static void *burst_thread(void *arg)
{
    worker *w = arg;
    json_t *out = NULL;
    gr_kube_status st;
    gr_err err;
    w->rc = gr_kube_get(w->c, &CM, "burst", "x", NULL, &out, &st, &err);
    json_decref(out);
    return NULL;
}

#define WATCHES 8
#define GETS    50

static void test_watches_do_not_evict_idle_connections(void **state)
{
    (void)state;
    atomic_store(&release, 0);
    gr_kube_client *c = client();
    worker w[WATCHES];
    for (int i = 0; i < WATCHES; i++) {
        w[i] = (worker){.c = c, .rc = -1};
        assert_int_equal(pthread_create(&w[i].t, NULL, watch_thread, &w[i]), 0);
    }
    for (long i = 0; i < (long)wait_s * 100 && atomic_load(&streams_open) < WATCHES; i++)
        sleep_ms(10);
    assert_int_equal(atomic_load(&streams_open), WATCHES);
    int s0 = atomic_load(&started);
    uint64_t c0 = gr_kube_client_connections(c), r0 = gr_kube_client_requests(c);
    assert_int_equal(c0, WATCHES);
    for (int i = 0; i < GETS; i++) {
        json_t *out = NULL;
        gr_kube_status st;
        gr_err err;
        assert_int_equal(gr_kube_get(c, &CM, "a", "x", NULL, &out, &st, &err), GR_OK);
        json_decref(out);
    }
    /* one connection for all 50 GETs, counted alike by server and client */
    assert_int_equal(atomic_load(&started) - s0, 1);
    assert_int_equal(gr_kube_client_connections(c) - c0, 1);
    assert_int_equal(gr_kube_client_requests(c) - r0, GETS);
    atomic_store(&release, 1);
    for (int i = 0; i < WATCHES; i++) {
        pthread_join(w[i].t, NULL);
        assert_int_equal(w[i].rc, GR_OK);
    }
    /* the watches' connections stay for reuse too (9 ≤ the cap) */
    assert_int_equal(client_open(), WATCHES + 1);
    gr_kube_client_free(c);
    assert_int_equal(client_open(), 0);
}

#define BURST 40

static void test_idle_connections_are_bounded(void **state)
{
    (void)state;
    gr_kube_client *c = client();
    int s0 = atomic_load(&started);
    atomic_store(&burst_in, 0);
    atomic_store(&burst_target, BURST);
    worker w[BURST];
    for (int i = 0; i < BURST; i++) {
        w[i] = (worker){.c = c, .rc = -1};
        assert_int_equal(pthread_create(&w[i].t, NULL, burst_thread, &w[i]), 0);
    }
    for (int i = 0; i < BURST; i++) {
        pthread_join(w[i].t, NULL);
        assert_int_equal(w[i].rc, GR_OK);
    }
    assert_int_equal(atomic_load(&burst_in), BURST);
    assert_int_equal(atomic_load(&started) - s0, BURST); /* all were open at once */
    assert_int_equal(gr_kube_client_connections(c), BURST);
    /* the pool keeps GR_KUBE_MAX_IDLE_CONNS, the other 15 were closed */
    assert_int_equal(client_open(), GR_KUBE_MAX_IDLE_CONNS);
    /* and later requests reuse the kept connections */
    int s1 = atomic_load(&started);
    for (int i = 0; i < GETS; i++) {
        json_t *out = NULL;
        gr_kube_status st;
        gr_err err;
        assert_int_equal(gr_kube_get(c, &CM, "a", "x", NULL, &out, &st, &err), GR_OK);
        json_decref(out);
    }
    assert_int_equal(atomic_load(&started) - s1, 0);
    assert_int_equal(gr_kube_client_connections(c), BURST);
    assert_int_equal(client_open(), GR_KUBE_MAX_IDLE_CONNS);
    gr_kube_client_free(c);
    assert_int_equal(client_open(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_watches_do_not_evict_idle_connections),
        cmocka_unit_test(test_idle_connections_are_bounded),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
