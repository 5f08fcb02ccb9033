/* bench_runtime — the controller runtime on the in-memory fake API server:
 * N Widgets are seeded, a manager with W workers runs a reconciler that
 * creates one owned ConfigMap per Widget and writes the Widget's status
 * (the shape of an NVCRE controller's work), and the time until every
 * Widget has converged is measured. Prints one "name: value unit" line per
 * figure. This measures the runtime and the client stack (JSON encode,
 * backend dispatch, Status mapping, informer, queue), not an API server.
 *
 *   build/dev/bench/kube/bench_kube_runtime [N=2000] [W=4]
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gr_kube_fake.h"
#include "gr_kube_helpers.h"
#include "gr_kube_mgr.h"
#include "gr_kube_rt.h"

static const gr_kube_gvr WIDGETS = {"example.com", "v1", "widgets"};

typedef struct bench {
    gr_kube_client *c;
    gr_kube_cache *widgets;
    atomic_int done;
} bench;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int set_ready(json_t *obj, void *ctx, gr_err *err)
{
    (void)ctx;
    (void)err;
    json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Ready"));
    return GR_OK;
}

static int reconcile(void *ctx, const char *key, int64_t *after, gr_err *err)
{
    (void)after;
    bench *b = ctx;
    json_t *w = NULL;
    if (gr_kube_cache_get(b->widgets, key, &w, NULL) != GR_OK)
        return GR_OK;
    const char *ns = gr_kube_obj_meta(w, "namespace");
    const char *name = gr_kube_obj_meta(w, "name");
    json_t *st = json_object_get(w, "status");
    if (json_is_object(st)) { /* converged: nothing to do */
        json_decref(w);
        return GR_OK;
    }
    json_t *cm = json_pack("{s:{s:s,s:s},s:{s:s}}", "metadata", "name", name, "namespace", ns,
                           "data", "value", "1");
    int rc = gr_kube_set_controller_ref(cm, w, err);
    gr_kube_status s;
    if (rc == GR_OK)
        rc = gr_kube_create(b->c, &GR_KUBE_CONFIGMAPS, ns, cm, NULL, NULL, &s, err);
    if (rc == GR_ECONFLICT && s.reason == GR_KUBE_REASON_ALREADY_EXISTS)
        rc = GR_OK;
    json_decref(cm);
    if (rc == GR_OK)
        rc =
            gr_kube_status_update_retry(b->c, &WIDGETS, ns, name, set_ready, NULL, NULL, NULL, err);
    if (rc == GR_OK)
        atomic_fetch_add(&b->done, 1);
    json_decref(w);
    return rc;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    int workers = argc > 2 ? atoi(argv[2]) : 4;
    if (n <= 0 || workers <= 0 || workers > GR_KUBE_MGR_MAX_WORKERS) {
        fprintf(stderr, "usage: bench_kube_runtime [N>0] [WORKERS 1..%d]\n",
                GR_KUBE_MGR_MAX_WORKERS);
        return 2;
    }
    gr_err err;
    gr_kube_fake *f = NULL;
    gr_kube_client *mc = NULL;
    if (gr_kube_fake_new(&f, &err) != GR_OK ||
        gr_kube_fake_add_resource(f, &WIDGETS, "Widget", true, true, &err) != GR_OK ||
        gr_kube_fake_client(f, &mc, &err) != GR_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        char name[32], ns[16];
        snprintf(name, sizeof name, "w-%05d", i);
        snprintf(ns, sizeof ns, "team-%02d", i % 20);
        json_t *w =
            json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:i}}", "apiVersion", "example.com/v1", "kind",
                      "Widget", "metadata", "name", name, "namespace", ns, "spec", "value", i);
        if (gr_kube_fake_seed(f, &WIDGETS, w, &err) != GR_OK) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        json_decref(w);
    }
    bench b = {0};
    gr_kube_mgr *m = NULL;
    gr_kube_mgr_opts mo = {.name = "bench"};
    if (gr_kube_mgr_new(mc, &mo, &m, &err) != GR_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    b.c = gr_kube_mgr_client(m);
    gr_kube_cache_opts co = {.gvr = WIDGETS};
    gr_kube_ctl *ctl = NULL;
    gr_kube_ctl_opts ko = {
        .name = "widgets", .workers = workers, .reconcile = reconcile, .ctx = &b};
    if (gr_kube_mgr_cache(m, &co, &b.widgets, &err) != GR_OK ||
        gr_kube_mgr_add_controller(m, &ko, &ctl, &err) != GR_OK ||
        gr_kube_ctl_watch(ctl, b.widgets, NULL, NULL, &err) != GR_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    int64_t t0 = now_ns();
    if (gr_kube_mgr_start(m, &err) != GR_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    while (atomic_load(&b.done) < n) {
        struct timespec ts = {0, 5000000L};
        nanosleep(&ts, NULL);
    }
    int64_t t1 = now_ns();
    /* quiet: the status writes come back as events and are no-ops */
    uint64_t rec = 0;
    for (;;) {
        uint64_t r = gr_kube_ctl_reconciles(ctl);
        struct timespec ts = {0, 200000000L};
        nanosleep(&ts, NULL);
        if (r == gr_kube_ctl_reconciles(ctl) && r == rec)
            break;
        rec = r;
    }
    double secs = (double)(t1 - t0) / 1e9;
    uint64_t writes = gr_kube_fake_count(f, "WRITE", NULL);
    printf("widgets: %d count\n", n);
    printf("workers: %d count\n", workers);
    printf("converge_time: %.3f s\n", secs);
    printf("converged_per_second: %.0f objects/s\n", n / secs);
    printf("reconciles_total: %llu count\n", (unsigned long long)gr_kube_ctl_reconciles(ctl));
    printf("api_writes_total: %llu count\n", (unsigned long long)writes);
    printf("api_writes_per_object: %.2f count\n", (double)writes / n);
    gr_kube_mgr_free(m);
    gr_kube_fake_free(f);
    return 0;
}
