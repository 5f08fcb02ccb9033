/* How the informer syncs, against a scripted API server (libmicrohttpd on
 * loopback): a streaming list (sendInitialEvents) that ends at the
 * initial-events-end bookmark; a server that refuses it (422, paginated LIST
 * from then on, pages applied one by one); a streaming list that ends before
 * its bookmark (one LIST instead); a 410 after a streaming list, re-synced as
 * a diff (an update for the changed object, a delete for the vanished one,
 * nothing for the unchanged one). */
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

#include "gr_kube_informer.h"
#include "gr_kube_watch.h"

static struct MHD_Daemon *d;
static int port;
static atomic_int stopping;

/* requests seen, per scenario */
static atomic_int n_stream, n_list, n_plain;

#define CM(name, rv)                                                               \
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"" name \
    "\",\"namespace\":\"NS\",\"resourceVersion\":\"" rv "\"},\"data\":{\"v\":\"" rv "\"}}"
#define EV(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}\n"
#define END_BOOKMARK(rv)                                                          \
    EV("BOOKMARK", "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{" \
                   "\"resourceVersion\":\"" rv "\",\"annotations\":{\"k8s.io/"    \
                   "initial-events-end\":\"true\"}}}")

/* A body that is sent, then the stream stays open (a quiet watch) until the
 * client goes away or the test ends. */
typedef struct stream_state {
    const char *body;
    size_t off;
} stream_state;

static ssize_t stream_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
    stream_state *s = cls;
    (void)pos;
    size_t len = strlen(s->body);
    if (s->off < len) {
        size_t n = len - s->off < max ? len - s->off : max;
        memcpy(buf, s->body + s->off, n);
        s->off += n;
        return (ssize_t)n;
    }
    for (int i = 0; i < 40 && !atomic_load(&stopping); i++) {
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    return MHD_CONTENT_READER_END_OF_STREAM;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *body, bool hold)
{
    struct MHD_Response *r;
    if (hold) {
        stream_state *s = calloc(1, sizeof *s);
        s->body = body;
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_cb, s, free);
    } else {
        r = MHD_create_response_from_buffer(strlen(body), (void *)(uintptr_t)body,
                                            MHD_RESPMEM_MUST_COPY);
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static const char *arg(struct MHD_Connection *c, const char *k)
{
    return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, k);
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
    if (!*con_cls) {
        *con_cls = (void *)1;
        return MHD_YES;
    }
    bool watch = arg(c, "watch") != NULL;
    const char *sie = arg(c, "sendInitialEvents");
    bool streaming = watch && sie && strcmp(sie, "true") == 0;
    if (streaming) {
        /* what the real server requires with sendInitialEvents */
        const char *m = arg(c, "resourceVersionMatch");
        const char *b = arg(c, "allowWatchBookmarks");
        if (!m || strcmp(m, "NotOlderThan") != 0 || !b || strcmp(b, "true") != 0)
            return reply(c, 400, "{\"kind\":\"Status\",\"reason\":\"BadRequest\",\"code\":400}",
                         false);
    }
    if (strstr(url, "/namespaces/stream/")) {
        if (streaming) {
            atomic_fetch_add(&n_stream, 1);
            return reply(c, 200,
                         EV("ADDED", CM("a", "10")) EV("ADDED", CM("b", "11")) END_BOOKMARK("20")
                             EV("MODIFIED", CM("a", "21")),
                         true);
        }
        if (watch)
            atomic_fetch_add(&n_plain, 1);
        else
            atomic_fetch_add(&n_list, 1);
        return reply(c, 200, "", true);
    }
    if (strstr(url, "/namespaces/refuse/")) {
        if (streaming) {
            atomic_fetch_add(&n_stream, 1);
            return reply(c, 422,
                         "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                         "\"message\":\"sendInitialEvents is forbidden for watch unless the "
                         "WatchList feature gate is enabled\",\"reason\":\"Invalid\",\"code\":422}",
                         false);
        }
        if (watch) {
            atomic_fetch_add(&n_plain, 1);
            const char *rv = arg(c, "resourceVersion");
            if (!rv || strcmp(rv, "30") != 0) /* must start at the list's version */
                return reply(c, 400, "{\"kind\":\"Status\",\"reason\":\"BadRequest\"}", false);
            return reply(c, 200, EV("ADDED", CM("d", "31")), true);
        }
        atomic_fetch_add(&n_list, 1);
        const char *cont = arg(c, "continue");
        const char *limit = arg(c, "limit");
        if (!limit || strcmp(limit, "2") != 0)
            return reply(c, 400, "{\"kind\":\"Status\",\"reason\":\"BadRequest\"}", false);
        if (!cont)
            return reply(c, 200,
                         "{\"kind\":\"ConfigMapList\",\"metadata\":{\"resourceVersion\":\"30\","
                         "\"continue\":\"page2\"},\"items\":[" CM("a", "1") "," CM("b", "2") "]}",
                         false);
        return reply(c, 200,
                     "{\"kind\":\"ConfigMapList\",\"metadata\":{\"resourceVersion\":\"30\"},"
                     "\"items\":[" CM("c", "3") "]}",
                     false);
    }
    if (strstr(url, "/namespaces/noend/")) {
        if (streaming) { /* the stream ends before the bookmark */
            atomic_fetch_add(&n_stream, 1);
            return reply(c, 200, EV("ADDED", CM("a", "1")), false);
        }
        if (watch) {
            atomic_fetch_add(&n_plain, 1);
            return reply(c, 200, "", true);
        }
        atomic_fetch_add(&n_list, 1);
        return reply(c, 200,
                     "{\"kind\":\"ConfigMapList\",\"metadata\":{\"resourceVersion\":\"9\"},"
                     "\"items\":[" CM("a", "1") "," CM("b", "2") "]}",
                     false);
    }
    if (strstr(url, "/namespaces/gone/")) {
        if (streaming) {
            if (atomic_fetch_add(&n_stream, 1) == 0)
                return reply(c, 200,
                             EV("ADDED", CM("a", "1")) EV("ADDED", CM("b", "2"))
                                 EV("ADDED", CM("c", "3")) END_BOOKMARK("5")
                                     EV("ERROR", "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                                                 "\"status\":\"Failure\",\"message\":\"too old "
                                                 "resource version: 5 (7)\",\"reason\":"
                                                 "\"Expired\",\"code\":410}"),
                             false);
            /* meanwhile: a changed, b deleted, c the same */
            return reply(c, 200,
                         EV("ADDED", CM("a", "6")) EV("ADDED", CM("c", "3")) END_BOOKMARK("7"),
                         true);
        }
        if (watch)
            atomic_fetch_add(&n_plain, 1);
        else
            atomic_fetch_add(&n_list, 1);
        return reply(c, 200, "", true);
    }
    return reply(c, 404, "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"code\":404}", false);
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
    port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    atomic_store(&stopping, 1);
    MHD_stop_daemon(d);
    return 0;
}

typedef struct tally {
    atomic_int add, upd, del;
    char last_upd[64]; /* "name old->new" */
    char last_del[64];
} tally;

static void t_add(void *c, const json_t *o)
{
    (void)o;
    atomic_fetch_add(&((tally *)c)->add, 1);
}
static void t_upd(void *c, const json_t *a, const json_t *b)
{
    tally *t = c;
    atomic_fetch_add(&t->upd, 1);
    snprintf(t->last_upd, sizeof t->last_upd, "%s %s->%s", gr_kube_obj_meta(b, "name"),
             gr_kube_obj_meta(a, "resourceVersion"), gr_kube_obj_meta(b, "resourceVersion"));
}
static void t_del(void *c, const json_t *o)
{
    tally *t = c;
    atomic_fetch_add(&t->del, 1);
    snprintf(t->last_del, sizeof t->last_del, "%s", gr_kube_obj_meta(o, "name"));
}

static const gr_kube_gvr CMS = {"", "v1", "configmaps"};

static gr_kube_informer *start(gr_kube_client *c, const char *ns, tally *t, gr_kube_sync_mode m)
{
    atomic_store(&n_stream, 0);
    atomic_store(&n_list, 0);
    atomic_store(&n_plain, 0);
    gr_kube_informer_opts o = {0};
    o.gvr = CMS;
    o.ns = ns;
    o.page_size = 2;
    o.sync_mode = m;
    o.handlers = (gr_kube_handlers){t_add, t_upd, t_del, t};
    o.backoff_initial_ns = 10000000LL;
    gr_kube_informer *inf = NULL;
    gr_err err;
    assert_int_equal(gr_kube_informer_new(c, &o, &inf, &err), GR_OK);
    assert_int_equal(gr_kube_informer_start(inf, &err), GR_OK);
    assert_int_equal(gr_kube_informer_wait_synced(inf, 30000000000LL, &err), GR_OK);
    return inf;
}

static const char *cached_rv(gr_kube_informer *inf, const char *key)
{
    static char rv[32];
    json_t *o = NULL;
    if (gr_kube_store_get(gr_kube_informer_store(inf), key, &o, NULL) != GR_OK)
        return "";
    snprintf(rv, sizeof rv, "%s", gr_kube_obj_meta(o, "resourceVersion"));
    json_decref(o);
    return rv;
}

/* Wait (bounded) for a condition the informer thread brings about. */
#define EVENTUALLY(cond)                               \
    do {                                               \
        for (int i_ = 0; i_ < 1200 && !(cond); i_++) { \
            struct timespec ts_ = {0, 25000000};       \
            nanosleep(&ts_, NULL);                     \
        }                                              \
        assert_true(cond);                             \
    } while (0)

static void test_streaming_list(void **state)
{
    (void)state;
    gr_kube_client *c = client();
    tally t = {0};
    gr_kube_informer *inf = start(c, "stream", &t, GR_KUBE_SYNC_AUTO);
    gr_kube_informer_stats s;
    gr_kube_informer_stats_get(inf, &s);
    assert_int_equal(s.watch_lists, 1);
    assert_int_equal(s.list_fallbacks, 0);
    assert_int_equal(atomic_load(&n_list), 0); /* no LIST at all */
    assert_int_equal(gr_kube_store_len(gr_kube_informer_store(inf)), 2);
    /* the same stream carries on after the bookmark */
    EVENTUALLY(strcmp(cached_rv(inf, "NS/a"), "21") == 0);
    assert_int_equal(atomic_load(&t.add), 2);
    assert_int_equal(atomic_load(&t.upd), 1);
    assert_string_equal(t.last_upd, "a 10->21"); /* old and new, as held */
    gr_kube_informer_free(inf);
    gr_kube_client_free(c);
}

static void test_refused_falls_back_to_pages(void **state)
{
    (void)state;
    gr_kube_client *c = client();
    tally t = {0};
    gr_kube_informer *inf = start(c, "refuse", &t, GR_KUBE_SYNC_AUTO);
    gr_kube_informer_stats s;
    gr_kube_informer_stats_get(inf, &s);
    assert_int_equal(s.watch_lists, 0);
    assert_int_equal(s.list_fallbacks, 1);
    assert_int_equal(atomic_load(&n_stream), 1);
    assert_int_equal(atomic_load(&n_list), 2); /* two pages of 2 */
    assert_string_equal(cached_rv(inf, "NS/c"), "3");
    assert_string_equal(s.last_rv, "30");
    /* then a plain watch from the list's version */
    EVENTUALLY(gr_kube_store_len(gr_kube_informer_store(inf)) == 4);
    assert_int_equal(atomic_load(&t.add), 4);
    gr_kube_informer_free(inf);
    /* LIST mode never tries the streaming list */
    tally t2 = {0};
    inf = start(c, "refuse", &t2, GR_KUBE_SYNC_LIST);
    assert_int_equal(atomic_load(&n_stream), 0);
    assert_string_equal(cached_rv(inf, "NS/a"), "1"); /* the watch may have added d by now */
    assert_string_equal(cached_rv(inf, "NS/b"), "2");
    assert_string_equal(cached_rv(inf, "NS/c"), "3");
    gr_kube_informer_free(inf);
    gr_kube_client_free(c);
}

static void test_stream_without_bookmark_lists(void **state)
{
    (void)state;
    gr_kube_client *c = client();
    tally t = {0};
    gr_kube_informer *inf = start(c, "noend", &t, GR_KUBE_SYNC_AUTO);
    gr_kube_informer_stats s;
    gr_kube_informer_stats_get(inf, &s);
    assert_int_equal(s.list_fallbacks, 1);
    assert_int_equal(s.watch_lists, 0);
    assert_int_equal(gr_kube_store_len(gr_kube_informer_store(inf)), 2);
    /* a was delivered by the broken stream and again by the LIST: once */
    assert_int_equal(atomic_load(&t.add), 2);
    assert_int_equal(atomic_load(&t.upd), 0);
    gr_kube_informer_free(inf);
    gr_kube_client_free(c);
}

static void test_gone_resyncs_as_diff(void **state)
{
    (void)state;
    gr_kube_client *c = client();
    tally t = {0};
    gr_kube_informer *inf = start(c, "gone", &t, GR_KUBE_SYNC_AUTO);
    EVENTUALLY(atomic_load(&t.del) == 1);
    gr_kube_informer_stats s;
    gr_kube_informer_stats_get(inf, &s);
    EVENTUALLY((gr_kube_informer_stats_get(inf, &s), s.watch_lists == 2));
    assert_int_equal(s.gone, 1);
    assert_int_equal(atomic_load(&n_list), 0);
    assert_int_equal(atomic_load(&t.add), 3);
    assert_int_equal(atomic_load(&t.upd), 1); /* a changed; c did not: no event */
    assert_string_equal(t.last_upd, "a 1->6");
    assert_string_equal(t.last_del, "b");
    assert_int_equal(gr_kube_store_len(gr_kube_informer_store(inf)), 2);
    assert_string_equal(cached_rv(inf, "NS/c"), "3");
    gr_kube_informer_free(inf);
    gr_kube_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streaming_list),
        cmocka_unit_test(test_refused_falls_back_to_pages),
        cmocka_unit_test(test_stream_without_bookmark_lists),
        cmocka_unit_test(test_gone_resyncs_as_diff),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
