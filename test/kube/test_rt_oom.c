/*
 * test_rt_oom.c — allocation-failure tests for the controller runtime's pure
 * parts: metrics and probe rendering, the Event recorder's plan (test
 * `kube_rt_oom`, with the failure-injection allocator of
 * test/base/oom_inject.c). For N = 1, 2, … the Nth allocation fails (once,
 * then sticky): every call returns GR_OK with the right result or an error,
 * never crashes, and LeakSanitizer (ASan build) finds no leak.
 * Not covered: paths that parse JSON with json_loadb (the client's response
 * decoding, hence the fake's request path), because jansson 2.14 itself
 * crashes inside json_loadb when its allocator fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gr_kube_probe.h"
#include "gr_kube_rt.h"
#include "oom_inject.h"

typedef int (*op_fn)(void);

static void run(op_fn op, bool sticky)
{
    long n;
    for (n = 1; n < 100000; n++) {
        gr_oom_arm(n, sticky);
        int rc = op();
        bool injected = gr_oom_disarm();
        if (rc != GR_OK && !injected)
            fail_msg("N=%ld: %s without an injected failure", n, gr_rc_name(rc));
        if (!injected) {
            assert_int_equal(rc, GR_OK);
            break;
        }
    }
    assert_true(n > 1 && n < 100000);
}

static int op_metrics(void)
{
    gr_kube_ctl_metrics c = {.name = "job", .depth = 1, .success = 2};
    gr_kube_hist_observe(&c.duration, 0.2);
    gr_kube_cache_metrics ch = {.resource = "v1/pods", .ns = "", .synced = true};
    gr_kube_metrics_snapshot s = {.ctls = &c,
                                  .nctl = 1,
                                  .caches = &ch,
                                  .ncache = 1,
                                  .leader_election = true,
                                  .lease_name = "l"};
    gr_buf b = GR_BUF_INIT(1 << 20);
    int rc = gr_kube_metrics_render(&s, &b);
    if (rc == GR_OK && !strstr(gr_buf_cstr(&b), "workqueue_depth{name=\"job\"} 1\n"))
        rc = GR_EIO;
    gr_buf_free(&b);
    return rc;
}

static int op_probe(void)
{
    gr_kube_check_result r[2] = {{.name = "a", .ok = true}, {.name = "b", .ok = false}};
    gr_buf b = GR_BUF_INIT(4096);
    int http = 0;
    int rc = gr_kube_probe_render(r, 2, true, &b, &http);
    gr_buf_free(&b);
    return rc;
}

static int op_events(void)
{
    gr_kube_events *e = NULL;
    gr_err err;
    int rc = gr_kube_events_new(NULL, "job-controller", "pod-1", &e, &err);
    if (rc != GR_OK)
        return rc;
    json_t *obj = json_pack("{s:s,s:s,s:{s:s,s:s,s:s}}", "apiVersion", "v1", "kind", "Pod",
                            "metadata", "name", "p", "namespace", "ns", "uid", "u");
    if (!obj) {
        gr_kube_events_free(e);
        return GR_ENOMEM;
    }
    for (int i = 0; i < 2 && rc == GR_OK; i++) {
        json_t *body = NULL;
        bool create = false;
        const char *ns, *name;
        rc = gr_kube_events_plan(e, obj, "Warning", "Broken", "it broke", 1000 + i, &body, &create,
                                 &ns, &name, &err);
        if (rc == GR_OK && !body)
            rc = GR_EIO;
        json_decref(body);
    }
    json_decref(obj);
    gr_kube_events_free(e);
    return rc;
}

static void test_metrics(void **s)
{
    (void)s;
    run(op_metrics, false);
    run(op_metrics, true);
}

static void test_probe(void **s)
{
    (void)s;
    run(op_probe, false);
    run(op_probe, true);
}

static void test_events(void **s)
{
    (void)s;
    run(op_events, false);
    run(op_events, true);
}

int main(void)
{
    gr_oom_install_jansson();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_probe),
        cmocka_unit_test(test_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
