/* Store + indexes + informer event application (pure), work queue, rate
 * limiter, controller runner. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "gr_kube_informer.h"
#include "gr_kube_queue.h"
#include "gr_kube_watch.h"

static json_t *pod(const char *ns, const char *name, const char *rv, const char *node,
                   const char *app)
{
    return json_pack("{s:s,s:{s:s,s:s,s:s,s:{s:s}},s:{s:s}}", "kind", "Pod", "metadata", "name",
                     name, "namespace", ns, "resourceVersion", rv, "labels", "app", app, "spec",
                     "nodeName", node);
}

typedef struct counts {
    int add, upd, del;
    char last[128];
} counts;

static void on_add(void *c, const json_t *o)
{
    ((counts *)c)->add++;
    snprintf(((counts *)c)->last, 128, "add %s",
             json_string_value(json_object_get(json_object_get(o, "metadata"), "name")));
}
static void on_upd(void *c, const json_t *a, const json_t *b)
{
    (void)a;
    (void)b;
    ((counts *)c)->upd++;
}
static void on_del(void *c, const json_t *o)
{
    (void)o;
    ((counts *)c)->del++;
}

static int drop_spec(json_t **obj, void *ctx)
{
    (void)ctx;
    json_object_del(*obj, "spec");
    return GR_OK;
}

static char node_path[] = "spec.nodeName";
static char app_label[] = "app";

static void test_store_and_indexes(void **state)
{
    (void)state;
    gr_kube_store *s;
    gr_err err;
    assert_int_equal(gr_kube_store_new(&s, &err), GR_OK);
    assert_int_equal(gr_kube_store_add_index(s, "ns", gr_kube_index_namespace, NULL, &err), GR_OK);
    assert_int_equal(gr_kube_store_add_index(s, "node", gr_kube_index_field, node_path, &err),
                     GR_OK);
    assert_int_equal(gr_kube_store_add_index(s, "app", gr_kube_index_label, app_label, &err),
                     GR_OK);
    json_t *p1 = pod("a", "p1", "1", "n1", "x"), *p2 = pod("a", "p2", "2", "n2", "x"),
           *p3 = pod("b", "p3", "3", "n1", "y");
    bool changed;
    json_t *old;
    assert_int_equal(gr_kube_store_upsert(s, p1, &old, &changed, &err), GR_OK);
    assert_true(changed);
    assert_null(old);
    gr_kube_store_upsert(s, p2, NULL, NULL, &err);
    gr_kube_store_upsert(s, p3, NULL, NULL, &err);
    assert_int_equal(gr_kube_store_add_index(s, "late", gr_kube_index_namespace, NULL, &err),
                     GR_ESTATE);
    json_t *l;
    assert_int_equal(gr_kube_store_list(s, "node", "n1", &l, &err), GR_OK);
    assert_int_equal(json_array_size(l), 2);
    json_decref(l);
    gr_kube_store_list(s, "ns", "a", &l, &err);
    assert_int_equal(json_array_size(l), 2);
    json_decref(l);
    /* same resourceVersion: no change */
    assert_int_equal(gr_kube_store_upsert(s, p1, &old, &changed, &err), GR_OK);
    assert_false(changed);
    json_decref(old);
    /* move p1 to node n2: the index follows */
    json_t *p1b = pod("a", "p1", "5", "n2", "z");
    assert_int_equal(gr_kube_store_upsert(s, p1b, &old, &changed, &err), GR_OK);
    assert_true(changed);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(old, "spec"), "nodeName")), "n1");
    json_decref(old);
    gr_kube_store_list(s, "node", "n1", &l, &err);
    assert_int_equal(json_array_size(l), 1);
    json_decref(l);
    gr_kube_store_list(s, "app", "x", &l, &err);
    assert_int_equal(json_array_size(l), 1);
    json_decref(l);
    json_t *got;
    assert_int_equal(gr_kube_store_get(s, "a/p1", &got, &err), GR_OK);
    assert_true(json_equal(got, p1b));
    json_decref(got);
    assert_int_equal(gr_kube_store_delete(s, "a/p1", NULL, &err), GR_OK);
    assert_int_equal(gr_kube_store_delete(s, "a/p1", NULL, &err), GR_ENOTFOUND);
    assert_int_equal(gr_kube_store_get(s, "a/p1", &got, &err), GR_ENOTFOUND);
    gr_kube_store_list(s, "node", "n2", &l, &err);
    assert_int_equal(json_array_size(l), 1); /* only p2 */
    json_decref(l);
    assert_int_equal(gr_kube_store_list(s, "nope", "x", &l, &err), GR_ENOTFOUND);
    assert_int_equal(gr_kube_store_len(s), 2);
    json_decref(p1);
    json_decref(p1b);
    json_decref(p2);
    json_decref(p3);
    gr_kube_store_free(s);
}

static void test_apply_events_and_relist(void **state)
{
    (void)state;
    gr_kube_store *s;
    gr_err err;
    gr_kube_store_new(&s, &err);
    counts c = {0};
    gr_kube_informer_opts o = {0};
    o.transform = drop_spec;
    o.handlers = (gr_kube_handlers){on_add, on_upd, on_del, &c};
    json_t *p1 = pod("a", "p1", "1", "n1", "x"), *p1b = pod("a", "p1", "2", "n1", "x"),
           *p2 = pod("a", "p2", "3", "n1", "x");
    gr_kube_informer_apply_event(s, &o, GR_KUBE_EV_ADDED, p1, &err);
    gr_kube_informer_apply_event(s, &o, GR_KUBE_EV_ADDED, p1, &err); /* replay: no dup */
    assert_int_equal(c.add, 1);
    assert_int_equal(c.upd, 0);
    assert_string_equal(c.last, "add p1");
    gr_kube_informer_apply_event(s, &o, GR_KUBE_EV_MODIFIED, p1b, &err);
    assert_int_equal(c.upd, 1);
    json_t *got;
    gr_kube_store_get(s, "a/p1", &got, &err);
    assert_null(json_object_get(got, "spec")); /* transformed before storing */
    json_decref(got);
    gr_kube_informer_apply_event(s, &o, GR_KUBE_EV_BOOKMARK, p2, &err);
    assert_int_equal(gr_kube_store_len(s), 1);
    gr_kube_informer_apply_event(s, &o, GR_KUBE_EV_ADDED, p2, &err);
    /* relist after a 410: p1 changed, p2 vanished, p3 new */
    json_t *p1c = pod("a", "p1", "7", "n1", "x"), *p3 = pod("a", "p3", "8", "n1", "x");
    json_t *items = json_pack("[O,O]", p1c, p3);
    c = (counts){0};
    assert_int_equal(gr_kube_informer_apply_list(s, &o, items, &err), GR_OK);
    assert_int_equal(c.add, 1);
    assert_int_equal(c.upd, 1);
    assert_int_equal(c.del, 1);
    assert_int_equal(gr_kube_store_len(s), 2);
    /* the same list again changes nothing */
    c = (counts){0};
    gr_kube_informer_apply_list(s, &o, items, &err);
    assert_int_equal(c.add + c.upd + c.del, 0);
    gr_kube_informer_apply_event(s, &o, GR_KUBE_EV_DELETED, p3, &err);
    gr_kube_informer_apply_event(s, &o, GR_KUBE_EV_DELETED, p3, &err);
    assert_int_equal(c.del, 1);
    json_decref(items);
    json_decref(p1);
    json_decref(p1b);
    json_decref(p1c);
    json_decref(p2);
    json_decref(p3);
    gr_kube_store_free(s);
}

static void test_queue_semantics(void **state)
{
    (void)state;
    gr_kube_queue *q;
    gr_err err;
    assert_int_equal(gr_kube_queue_new(NULL, &q, &err), GR_OK);
    gr_kube_queue_add(q, "a");
    gr_kube_queue_add(q, "b");
    gr_kube_queue_add(q, "a"); /* dedup */
    assert_int_equal(gr_kube_queue_len(q), 2);
    char *k;
    assert_int_equal(gr_kube_queue_get(q, 0, &k), GR_OK);
    assert_string_equal(k, "a");
    /* added while processing: not handed out twice, re-queued on done */
    gr_kube_queue_add(q, "a");
    assert_int_equal(gr_kube_queue_len(q), 1);
    char *k2;
    assert_int_equal(gr_kube_queue_get(q, 0, &k2), GR_OK);
    assert_string_equal(k2, "b");
    char *k3 = NULL;
    assert_int_equal(gr_kube_queue_get(q, 20000000LL, &k3), GR_ETIMEDOUT);
    assert_null(k3);
    gr_kube_queue_done(q, k);
    free(k);
    assert_int_equal(gr_kube_queue_len(q), 1);
    assert_int_equal(gr_kube_queue_get(q, 0, &k), GR_OK);
    assert_string_equal(k, "a");
    gr_kube_queue_done(q, k);
    free(k);
    gr_kube_queue_done(q, k2);
    free(k2);
    /* delayed: not ready at once, ready later; the earliest delay wins */
    gr_kube_queue_add_after(q, "d", 3600LL * 1000000000LL);
    gr_kube_queue_add_after(q, "d", 1000000LL);
    assert_int_equal(gr_kube_queue_len(q), 0);
    assert_int_equal(gr_kube_queue_get(q, 5000000000LL, &k), GR_OK);
    assert_string_equal(k, "d");
    gr_kube_queue_done(q, k);
    free(k);
    /* rate limited: failures count up, forget resets */
    gr_kube_queue_add_rate_limited(q, "r");
    gr_kube_queue_add_rate_limited(q, "r");
    assert_int_equal(gr_kube_queue_requeues(q, "r"), 2);
    gr_kube_queue_forget(q, "r");
    assert_int_equal(gr_kube_queue_requeues(q, "r"), 0);
    gr_kube_queue_shutdown(q);
    assert_int_equal(gr_kube_queue_get(q, 0, &k), GR_ECANCELED);
    gr_kube_queue_free(q);
}

static void test_rate_limiter(void **state)
{
    (void)state;
    gr_kube_rate_limiter *rl;
    gr_err err;
    assert_int_equal(gr_kube_rate_limiter_new(0, 0, -1, 0, &rl, &err), GR_OK);
    int64_t d = 5000000LL;
    for (int i = 0; i < 10; i++, d *= 2)
        assert_int_equal(gr_kube_rate_limiter_when(rl, "k", 0), d);
    for (int i = 0; i < 40; i++)
        gr_kube_rate_limiter_when(rl, "k", 0);
    assert_int_equal(gr_kube_rate_limiter_when(rl, "k", 0), 1000000000000LL); /* 1000 s cap */
    assert_int_equal(gr_kube_rate_limiter_when(rl, "other", 0), 5000000LL);
    gr_kube_rate_limiter_free(rl);
    /* with the overall bucket: the 101st immediate retry waits 1/10 s */
    assert_int_equal(gr_kube_rate_limiter_new(0, 0, 0, 0, &rl, &err), GR_OK);
    char key[16];
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof key, "k%d", i);
        assert_int_equal(gr_kube_rate_limiter_when(rl, key, 1), 5000000LL);
    }
    assert_true(gr_kube_rate_limiter_when(rl, "z", 1) >= 99000000LL);
    gr_kube_rate_limiter_free(rl);
}

typedef struct rec_ctx {
    atomic_int calls;
    atomic_int concurrent, max_concurrent;
    atomic_int fail_first;
} rec_ctx;

static int reconcile(void *ctx, const char *key, int64_t *after, gr_err *err)
{
    rec_ctx *r = ctx;
    (void)after;
    int c = atomic_fetch_add(&r->concurrent, 1) + 1;
    int m = atomic_load(&r->max_concurrent);
    while (c > m && !atomic_compare_exchange_weak(&r->max_concurrent, &m, c)) {
    }
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    atomic_fetch_sub(&r->concurrent, 1);
    atomic_fetch_add(&r->calls, 1);
    if (strcmp(key, "flaky") == 0 && atomic_fetch_sub(&r->fail_first, 1) > 0)
        return gr_err_set(err, GR_EAGAIN, "not yet");
    return GR_OK;
}

static void test_controller(void **state)
{
    (void)state;
    gr_kube_queue *q;
    gr_err err;
    gr_kube_queue_new(NULL, &q, &err);
    rec_ctx r = {0};
    atomic_store(&r.fail_first, 2);
    gr_kube_controller *c;
    assert_int_equal(gr_kube_controller_start("test", q, 4, reconcile, &r, &c, &err), GR_OK);
    char key[16];
    for (int i = 0; i < 40; i++) {
        snprintf(key, sizeof key, "k%d", i);
        gr_kube_queue_add(q, key);
    }
    gr_kube_queue_add(q, "flaky");
    for (int i = 0; i < 500 && atomic_load(&r.calls) < 43; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(atomic_load(&r.calls), 43); /* 40 + flaky three times (2 failures) */
    assert_true(atomic_load(&r.max_concurrent) <= 4);
    assert_int_equal(gr_kube_controller_reconciles(c), 43);
    gr_kube_controller_stop(c); /* graceful: returns once workers are joined */
    assert_true(gr_kube_queue_shutting_down(q));
    gr_kube_queue_free(q);
    assert_int_equal(gr_kube_controller_start("bad", q, 0, reconcile, &r, &c, &err), GR_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_and_indexes), cmocka_unit_test(test_apply_events_and_relist),
        cmocka_unit_test(test_queue_semantics),   cmocka_unit_test(test_rate_limiter),
        cmocka_unit_test(test_controller),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
