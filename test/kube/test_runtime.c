/* The controller runtime (gr_kube_mgr, gr_kube_rt, gr_kube_probe) on the
 * in-memory fake API server: a toy reconciler that keeps a ConfigMap per
 * Widget (idempotent, requeue-after, status with conflict retry, finalizer
 * flow), cache-sync gating, an optional resource installed later, shared
 * informer fan-out, leader-only vs always-on controllers, probes over HTTP,
 * metrics text, events, and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <curl/curl.h>

#include "gr_kube_fake.h"
#include "gr_kube_helpers.h"
#include "gr_kube_mgr.h"
#include "gr_kube_probe.h"
#include "gr_kube_rt.h"
#include "kube_internal.h"

#define FINALIZER "example.com/cleanup"

static const gr_kube_gvr WIDGETS = {"example.com", "v1", "widgets"};
static const gr_kube_gvr GADGETS = {"example.com", "v1", "gadgets"};

/* A generous bound for a loaded 2-core machine: only "never" fails. */
#define WAIT_TICKS 2400 /* × 50 ms = 120 s */

#define WAIT_UNTIL(cond)                                                           \
    do {                                                                           \
        bool ok_ = false;                                                          \
        for (int i_ = 0; i_ < WAIT_TICKS && !ok_; i_++) {                          \
            if ((cond))                                                            \
                ok_ = true;                                                        \
            else                                                                   \
                gr_kube_sleep_ns(50000000LL, NULL);                                \
        }                                                                          \
        if (!ok_)                                                                  \
            fail_msg("never became true within %d s: %s", WAIT_TICKS / 20, #cond); \
    } while (0)

/* ---- the toy reconciler -------------------------------------------------- */

typedef struct toy {
    gr_kube_client *c;
    gr_kube_cache *widgets;
    atomic_int runs;
    atomic_int requeues;
    atomic_int finalized;
} toy;

static int set_observed(json_t *obj, void *ctx, gr_err *err)
{
    (void)err;
    json_t *v = ctx;
    json_t *st = json_object_get(obj, "status");
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(obj, "status", st);
    }
    json_object_set(st, "observed", v);
    return GR_OK;
}

static int toy_reconcile(void *ctx, const char *key, int64_t *requeue_after_ns, gr_err *err)
{
    toy *t = ctx;
    atomic_fetch_add(&t->runs, 1);
    json_t *w = NULL;
    if (gr_kube_cache_get(t->widgets, key, &w, NULL) != GR_OK)
        return GR_OK; /* gone: nothing to do */
    const char *ns = gr_kube_meta_str(w, "namespace");
    const char *name = gr_kube_meta_str(w, "name");
    char cmname[300];
    snprintf(cmname, sizeof cmname, "%s-cm", name);
    int rc = GR_OK;
    if (gr_kube_is_deleting(w)) {
        if (gr_kube_finalizer_has(w, FINALIZER)) {
            gr_kube_status st;
            rc = gr_kube_delete(t->c, &GR_KUBE_CONFIGMAPS, ns, cmname, NULL, NULL, &st, err);
            if (rc == GR_ENOTFOUND)
                rc = GR_OK;
            if (rc == GR_OK)
                rc = gr_kube_finalizer_drop(t->c, &WIDGETS, ns, name, FINALIZER, NULL, err);
            if (rc == GR_OK)
                atomic_fetch_add(&t->finalized, 1);
        }
        json_decref(w);
        return rc;
    }
    if (!gr_kube_finalizer_has(w, FINALIZER) &&
        (rc = gr_kube_finalizer_ensure(t->c, &WIDGETS, ns, name, FINALIZER, NULL, err)) != GR_OK) {
        json_decref(w);
        return rc;
    }
    json_t *val = json_object_get(json_object_get(w, "spec"), "value");
    /* desired ConfigMap, owned by the widget */
    json_t *cur = NULL;
    gr_kube_status st;
    rc = gr_kube_get(t->c, &GR_KUBE_CONFIGMAPS, ns, cmname, NULL, &cur, &st, err);
    char vbuf[64];
    snprintf(vbuf, sizeof vbuf, "%lld", (long long)json_integer_value(val));
    if (rc == GR_ENOTFOUND) {
        json_t *cm = json_pack("{s:{s:s,s:s},s:{s:s}}", "metadata", "name", cmname, "namespace", ns,
                               "data", "value", vbuf);
        rc = gr_kube_set_controller_ref(cm, w, err);
        if (rc == GR_OK)
            rc = gr_kube_create(t->c, &GR_KUBE_CONFIGMAPS, ns, cm, NULL, NULL, &st, err);
        json_decref(cm);
    } else if (rc == GR_OK) {
        const char *have =
            json_string_value(json_object_get(json_object_get(cur, "data"), "value"));
        if (!have || strcmp(have, vbuf) != 0) {
            json_object_set_new(cur, "data", json_pack("{s:s}", "value", vbuf));
            rc = gr_kube_update(t->c, &GR_KUBE_CONFIGMAPS, ns, cur, NULL, NULL, &st, err);
        }
    }
    json_decref(cur);
    if (rc == GR_OK)
        rc = gr_kube_status_update_retry(t->c, &WIDGETS, ns, name, set_observed, val, NULL, NULL,
                                         err);
    json_int_t rq = json_integer_value(json_object_get(json_object_get(w, "spec"), "requeueMs"));
    if (rc == GR_OK && rq > 0) {
        *requeue_after_ns = rq * 1000000LL;
        atomic_fetch_add(&t->requeues, 1);
    }
    json_decref(w);
    return rc;
}

typedef struct env {
    gr_kube_fake *f;
    gr_kube_client *c; /* test's own client */
    gr_kube_mgr *m;
    toy t;
    gr_kube_ctl *ctl;
} env;

static json_t *widget(const char *name, int value, int requeue_ms)
{
    return json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:i,s:i}}", "apiVersion", "example.com/v1", "kind",
                     "Widget", "metadata", "name", name, "namespace", "ns", "spec", "value", value,
                     "requeueMs", requeue_ms);
}

static void env_init(env *e, bool start)
{
    gr_err err;
    memset(e, 0, sizeof *e);
    assert_int_equal(gr_kube_fake_new(&e->f, &err), GR_OK);
    assert_int_equal(gr_kube_fake_add_resource(e->f, &WIDGETS, "Widget", true, true, &err), GR_OK);
    assert_int_equal(gr_kube_fake_client(e->f, &e->c, &err), GR_OK);
    gr_kube_client *mc = NULL;
    assert_int_equal(gr_kube_fake_client(e->f, &mc, &err), GR_OK);
    gr_kube_mgr_opts mo = {.name = "test", .recheck_ns = 50000000LL};
    assert_int_equal(gr_kube_mgr_new(mc, &mo, &e->m, &err), GR_OK);
    e->t.c = gr_kube_mgr_client(e->m);
    gr_kube_cache_opts co = {.gvr = WIDGETS};
    assert_int_equal(gr_kube_mgr_cache(e->m, &co, &e->t.widgets, &err), GR_OK);
    gr_kube_ctl_opts ko = {.name = "widgets",
                           .workers = 2,
                           .reconcile = toy_reconcile,
                           .ctx = &e->t,
                           .backoff_base_ns = 1000000LL,
                           .backoff_max_ns = 100000000LL};
    assert_int_equal(gr_kube_mgr_add_controller(e->m, &ko, &e->ctl, &err), GR_OK);
    assert_int_equal(gr_kube_ctl_watch(e->ctl, e->t.widgets, NULL, NULL, &err), GR_OK);
    if (start)
        assert_int_equal(gr_kube_mgr_start(e->m, &err), GR_OK);
}

static void env_free(env *e)
{
    gr_kube_mgr_free(e->m);
    gr_kube_client_free(e->c);
    gr_kube_fake_free(e->f);
}

static const char *cm_value(env *e, const char *name)
{
    static char buf[64];
    json_t *cm = gr_kube_fake_get(e->f, &GR_KUBE_CONFIGMAPS, "ns", name);
    const char *v = json_string_value(json_object_get(json_object_get(cm, "data"), "value"));
    snprintf(buf, sizeof buf, "%s", v ? v : "");
    json_decref(cm);
    return buf;
}

static long long observed(env *e, const char *name)
{
    json_t *w = gr_kube_fake_get(e->f, &WIDGETS, "ns", name);
    json_t *o = json_object_get(json_object_get(w, "status"), "observed");
    long long v = o ? (long long)json_integer_value(o) : -1;
    json_decref(w);
    return v;
}

/* ---- tests ---------------------------------------------------------------- */

static void test_reconcile_idempotent(void **state)
{
    (void)state;
    env e;
    gr_err err;
    env_init(&e, true);
    json_t *w = widget("w1", 5, 0);
    assert_int_equal(gr_kube_fake_seed(e.f, &WIDGETS, w, &err), GR_OK);
    json_decref(w);
    WAIT_UNTIL(strcmp(cm_value(&e, "w1-cm"), "5") == 0 && observed(&e, "w1") == 5);
    /* settle: the status write itself is an event → one more reconcile */
    int before_runs;
    uint64_t writes;
    do { /* wait for quiescence: no reconcile in flight, no writes changing */
        before_runs = atomic_load(&e.t.runs);
        writes = gr_kube_fake_count(e.f, "WRITE", NULL);
        gr_kube_sleep_ns(300000000LL, NULL);
    } while (before_runs != atomic_load(&e.t.runs) ||
             writes != gr_kube_fake_count(e.f, "WRITE", NULL));
    /* reconciling the same observed state again writes nothing */
    assert_int_equal(gr_kube_ctl_enqueue(e.ctl, "ns/w1"), GR_OK);
    WAIT_UNTIL(atomic_load(&e.t.runs) > before_runs &&
               gr_kube_ctl_reconciles(e.ctl) >= (uint64_t)before_runs + 1);
    assert_int_equal(gr_kube_fake_count(e.f, "WRITE", NULL), writes);
    /* the ConfigMap is controlled by the widget */
    json_t *cm = gr_kube_fake_get(e.f, &GR_KUBE_CONFIGMAPS, "ns", "w1-cm");
    json_t *ref = gr_kube_controller_of(cm);
    assert_non_null(ref);
    assert_string_equal(json_string_value(json_object_get(ref, "kind")), "Widget");
    json_decref(cm);
    /* a spec change converges */
    json_t *cur = gr_kube_fake_get(e.f, &WIDGETS, "ns", "w1");
    json_object_set_new(json_object_get(cur, "spec"), "value", json_integer(6));
    assert_int_equal(gr_kube_update(e.c, &WIDGETS, "ns", cur, NULL, NULL, NULL, &err), GR_OK);
    json_decref(cur);
    WAIT_UNTIL(strcmp(cm_value(&e, "w1-cm"), "6") == 0 && observed(&e, "w1") == 6);
    env_free(&e);
}

static void test_requeue_after(void **state)
{
    (void)state;
    env e;
    gr_err err;
    env_init(&e, true);
    json_t *w = widget("rq", 1, 20);
    assert_int_equal(gr_kube_fake_seed(e.f, &WIDGETS, w, &err), GR_OK);
    json_decref(w);
    /* comes back by itself, without any event, several times */
    WAIT_UNTIL(atomic_load(&e.t.requeues) >= 5);
    gr_buf b = GR_BUF_INIT(1 << 20);
    assert_int_equal(gr_kube_mgr_metrics_text(e.m, &b), GR_OK);
    assert_non_null(strstr(gr_buf_cstr(&b), "controller_runtime_reconcile_total{controller="
                                            "\"widgets\",result=\"requeue_after\"}"));
    gr_buf_free(&b);
    env_free(&e);
}

static void test_status_conflict_retry(void **state)
{
    (void)state;
    env e;
    gr_err err;
    env_init(&e, false);
    json_t *w = widget("c1", 3, 0);
    assert_int_equal(gr_kube_fake_seed(e.f, &WIDGETS, w, &err), GR_OK);
    json_decref(w);
    /* two conflicts, then success: the mutation is re-applied on a fresh read */
    assert_int_equal(gr_kube_fake_fail(e.f, "PUT", "widgets", "status", 2, 409, "Conflict",
                                       "Operation cannot be fulfilled", &err),
                     GR_OK);
    json_t *v = json_integer(42);
    gr_kube_rmw_opts ro = {.subresource = "status"};
    int attempts = 0;
    bool changed = false;
    assert_int_equal(gr_kube_rmw(e.c, &WIDGETS, "ns", "c1", &ro, set_observed, v, NULL, &attempts,
                                 &changed, NULL, &err),
                     GR_OK);
    assert_int_equal(attempts, 3);
    assert_true(changed);
    assert_int_equal(observed(&e, "c1"), 42);
    /* unchanged status: no write at all */
    uint64_t puts = gr_kube_fake_count(e.f, "PUT", "widgets");
    assert_int_equal(gr_kube_rmw(e.c, &WIDGETS, "ns", "c1", &ro, set_observed, v, NULL, &attempts,
                                 &changed, NULL, &err),
                     GR_OK);
    assert_false(changed);
    assert_int_equal(gr_kube_fake_count(e.f, "PUT", "widgets"), puts);
    /* bounded: a writer that always wins exhausts the attempts */
    json_decref(v);
    v = json_integer(43);
    assert_int_equal(gr_kube_fake_fail(e.f, "PUT", "widgets", "status", 100, 409, "Conflict",
                                       "Operation cannot be fulfilled", &err),
                     GR_OK);
    ro.max_attempts = 3;
    assert_int_equal(gr_kube_rmw(e.c, &WIDGETS, "ns", "c1", &ro, set_observed, v, NULL, &attempts,
                                 &changed, NULL, &err),
                     GR_ECONFLICT);
    assert_int_equal(attempts, 3);
    assert_non_null(strstr(err.msg, "after 3 attempts"));
    gr_kube_fake_clear_failures(e.f);
    /* merge-patch variant carries the resourceVersion */
    assert_int_equal(
        gr_kube_status_patch_retry(e.c, &WIDGETS, "ns", "c1", set_observed, v, NULL, NULL, &err),
        GR_OK);
    assert_int_equal(observed(&e, "c1"), 43);
    /* a non-conflict error is not retried */
    assert_int_equal(gr_kube_fake_fail(e.f, "PUT", "widgets", "status", 1, 422, "Invalid",
                                       "status.observed: Invalid value", &err),
                     GR_OK);
    json_decref(v);
    v = json_integer(44);
    ro.max_attempts = 0;
    assert_int_equal(gr_kube_rmw(e.c, &WIDGETS, "ns", "c1", &ro, set_observed, v, NULL, &attempts,
                                 &changed, NULL, &err),
                     GR_EINVAL);
    assert_int_equal(attempts, 1);
    json_decref(v);
    env_free(&e);
}

static void test_finalizer_flow(void **state)
{
    (void)state;
    env e;
    gr_err err;
    env_init(&e, true);
    json_t *w = widget("f1", 1, 0);
    assert_int_equal(gr_kube_fake_seed(e.f, &WIDGETS, w, &err), GR_OK);
    json_decref(w);
    WAIT_UNTIL(strcmp(cm_value(&e, "f1-cm"), "1") == 0);
    json_t *cur = gr_kube_fake_get(e.f, &WIDGETS, "ns", "f1");
    assert_true(gr_kube_finalizer_has(cur, FINALIZER));
    json_decref(cur);
    gr_kube_opts orphan = {.propagation = "Orphan"}; /* the finalizer must do the cleanup */
    assert_int_equal(gr_kube_delete(e.c, &WIDGETS, "ns", "f1", &orphan, NULL, NULL, &err), GR_OK);
    WAIT_UNTIL(atomic_load(&e.t.finalized) >= 1);
    json_t *gone = NULL;
    WAIT_UNTIL((gone = gr_kube_fake_get(e.f, &WIDGETS, "ns", "f1")) == NULL);
    json_t *cm = gr_kube_fake_get(e.f, &GR_KUBE_CONFIGMAPS, "ns", "f1-cm");
    assert_null(cm);
    /* the finalizer helpers on their own */
    json_t *x = json_pack("{s:{s:s,s:s}}", "metadata", "name", "plain", "namespace", "ns");
    assert_int_equal(gr_kube_fake_seed(e.f, &GR_KUBE_CONFIGMAPS, x, &err), GR_OK);
    bool changed = false;
    assert_int_equal(
        gr_kube_finalizer_ensure(e.c, &GR_KUBE_CONFIGMAPS, "ns", "plain", "a/b", &changed, &err),
        GR_OK);
    assert_true(changed);
    assert_int_equal(
        gr_kube_finalizer_ensure(e.c, &GR_KUBE_CONFIGMAPS, "ns", "plain", "a/b", &changed, &err),
        GR_OK);
    assert_false(changed);
    assert_int_equal(
        gr_kube_delete(e.c, &GR_KUBE_CONFIGMAPS, "ns", "plain", NULL, NULL, NULL, &err), GR_OK);
    assert_int_equal(
        gr_kube_finalizer_ensure(e.c, &GR_KUBE_CONFIGMAPS, "ns", "plain", "c/d", &changed, &err),
        GR_ESTATE);
    assert_int_equal(
        gr_kube_finalizer_drop(e.c, &GR_KUBE_CONFIGMAPS, "ns", "plain", "a/b", &changed, &err),
        GR_OK);
    assert_null(gr_kube_fake_get(e.f, &GR_KUBE_CONFIGMAPS, "ns", "plain"));
    assert_int_equal(
        gr_kube_finalizer_drop(e.c, &GR_KUBE_CONFIGMAPS, "ns", "plain", "a/b", &changed, &err),
        GR_OK); /* gone: nothing left to finalize */
    json_decref(x);
    env_free(&e);
}

static void test_cache_sync_gating(void **state)
{
    (void)state;
    env e;
    gr_err err;
    env_init(&e, false);
    /* the widgets streaming list (a WATCH) and the LIST fallback fail until
     * cleared: the cache never syncs */
    assert_int_equal(gr_kube_fake_fail(e.f, "WATCH", "widgets", NULL, 1000000, 500, "InternalError",
                                       "etcd unavailable", &err),
                     GR_OK);
    assert_int_equal(gr_kube_fake_fail(e.f, "LIST", "widgets", NULL, 1000000, 500, "InternalError",
                                       "etcd unavailable", &err),
                     GR_OK);
    json_t *w = widget("g1", 1, 0);
    assert_int_equal(gr_kube_fake_seed(e.f, &WIDGETS, w, &err), GR_OK);
    json_decref(w);
    gr_kube_ctl_enqueue(e.ctl, "ns/g1");
    assert_int_equal(gr_kube_mgr_start(e.m, &err), GR_OK);
    /* the informer has tried (and failed) twice: still no workers, not ready */
    WAIT_UNTIL(gr_kube_fake_count(e.f, "WATCH", "widgets") +
                   gr_kube_fake_count(e.f, "LIST", "widgets") >=
               2);
    char why[256];
    assert_false(gr_kube_mgr_ready(e.m, why, sizeof why));
    assert_non_null(strstr(why, "has not synced"));
    assert_false(gr_kube_ctl_running(e.ctl));
    assert_int_equal(atomic_load(&e.t.runs), 0);
    /* the API server recovers: sync, workers, reconcile */
    gr_kube_fake_clear_failures(e.f);
    WAIT_UNTIL(gr_kube_ctl_running(e.ctl) && gr_kube_mgr_ready(e.m, NULL, 0));
    WAIT_UNTIL(strcmp(cm_value(&e, "g1-cm"), "1") == 0);
    env_free(&e);
}

typedef struct gadget_seen {
    atomic_int n;
} gadget_seen;

static int gadget_reconcile(void *ctx, const char *key, int64_t *after, gr_err *err)
{
    (void)key;
    (void)after;
    (void)err;
    atomic_fetch_add(&((gadget_seen *)ctx)->n, 1);
    return GR_OK;
}

static void test_optional_missing_resource(void **state)
{
    (void)state;
    env e;
    gr_err err;
    env_init(&e, false);
    gr_kube_cache *gadgets = NULL;
    gr_kube_cache_opts co = {.gvr = GADGETS, .optional = true};
    assert_int_equal(gr_kube_mgr_cache(e.m, &co, &gadgets, &err), GR_OK);
    gadget_seen gs = {0};
    gr_kube_ctl *gc = NULL;
    gr_kube_ctl_opts ko = {.name = "gadgets", .reconcile = gadget_reconcile, .ctx = &gs};
    assert_int_equal(gr_kube_mgr_add_controller(e.m, &ko, &gc, &err), GR_OK);
    assert_int_equal(gr_kube_ctl_watch(gc, gadgets, NULL, NULL, &err), GR_OK);
    assert_int_equal(gr_kube_mgr_start(e.m, &err), GR_OK);
    /* not installed: synced and empty, ready, workers run */
    WAIT_UNTIL(gr_kube_mgr_ready(e.m, NULL, 0) && gr_kube_ctl_running(gc));
    assert_false(gr_kube_cache_present(gadgets));
    json_t *l = NULL;
    assert_int_equal(gr_kube_cache_list(gadgets, NULL, NULL, &l, &err), GR_OK);
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);
    /* the CRD is installed later: discovery finds it, the informer starts */
    assert_int_equal(gr_kube_fake_add_resource(e.f, &GADGETS, "Gadget", true, false, &err), GR_OK);
    json_t *g = json_pack("{s:{s:s,s:s}}", "metadata", "name", "g", "namespace", "ns");
    assert_int_equal(gr_kube_fake_seed(e.f, &GADGETS, g, &err), GR_OK);
    json_decref(g);
    WAIT_UNTIL(gr_kube_cache_present(gadgets) && atomic_load(&gs.n) >= 1);
    json_t *got = NULL;
    WAIT_UNTIL(gr_kube_cache_get(gadgets, "ns/g", &got, NULL) == GR_OK);
    json_decref(got);
    env_free(&e);
}

/* A cache's own transform sees the object after the runtime dropped
 * metadata.managedFields (issue 19: no controller reads them). */
static int transform_sees(json_t **obj, void *ctx)
{
    atomic_int *seen_managed = ctx;
    if (json_object_get(json_object_get(*obj, "metadata"), "managedFields"))
        atomic_fetch_add(seen_managed, 1);
    return GR_OK;
}

static void test_cache_drops_managed_fields(void **state)
{
    (void)state;
    env e;
    gr_err err;
    env_init(&e, false);
    atomic_int seen_managed = 0;
    gr_kube_cache *plain = NULL, *trimmed = NULL;
    assert_int_equal(gr_kube_mgr_cache(e.m, &(gr_kube_cache_opts){.gvr = WIDGETS}, &plain, &err),
                     GR_OK);
    assert_int_equal(gr_kube_mgr_cache(e.m,
                                       &(gr_kube_cache_opts){.gvr = WIDGETS,
                                                             .transform = transform_sees,
                                                             .transform_ctx = &seen_managed},
                                       &trimmed, &err),
                     GR_OK);
    json_t *w =
        json_pack("{s:{s:s,s:s,s:{s:s},s:[{s:s,s:s,s:{s:{}}}]},s:{s:i}}", "metadata", "name", "w",
                  "namespace", "ns", "labels", "app", "a", "managedFields", "manager", "kubectl",
                  "operation", "Apply", "fieldsV1", "f:spec", "spec", "size", 3);
    assert_int_equal(gr_kube_fake_seed(e.f, &WIDGETS, w, &err), GR_OK);
    json_decref(w);
    assert_int_equal(gr_kube_mgr_start(e.m, &err), GR_OK);
    gr_kube_cache *caches[2] = {plain, trimmed};
    for (int i = 0; i < 2; i++) {
        json_t *got = NULL;
        WAIT_UNTIL(gr_kube_cache_get(caches[i], "ns/w", &got, NULL) == GR_OK);
        json_t *md = json_object_get(got, "metadata");
        assert_null(json_object_get(md, "managedFields"));
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(md, "labels"), "app")),
            "a"); /* everything else is kept */
        assert_int_equal(json_integer_value(json_object_get(json_object_get(got, "spec"), "size")),
                         3);
        json_decref(got);
    }
    assert_int_equal(atomic_load(&seen_managed), 0);
    env_free(&e);
}

typedef struct keyrec {
    atomic_int n;
} keyrec;

static int count_reconcile(void *ctx, const char *key, int64_t *after, gr_err *err)
{
    (void)key;
    (void)after;
    (void)err;
    atomic_fetch_add(&((keyrec *)ctx)->n, 1);
    return GR_OK;
}

static size_t map_label(void *ctx, const json_t *obj, char (*keys)[GR_KUBE_KEY_MAX], size_t max)
{
    (void)ctx;
    const char *app = json_string_value(
        json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), "app"));
    if (!app || !max)
        return 0;
    snprintf(keys[0], GR_KUBE_KEY_MAX, "app/%s", app);
    return 1;
}

static size_t index_count(gr_kube_cache *c, const char *index, const char *value)
{
    json_t *l = NULL;
    if (gr_kube_cache_list(c, index, value, &l, NULL) != GR_OK)
        return 0;
    size_t n = json_array_size(l);
    json_decref(l);
    return n;
}

static void test_shared_informer_fanout(void **state)
{
    (void)state;
    env e;
    gr_err err;
    env_init(&e, false);
    gr_kube_cache *a = NULL, *b = NULL;
    gr_kube_cache_opts co = {.gvr = GR_KUBE_CONFIGMAPS, .ns = "ns"};
    assert_int_equal(gr_kube_mgr_cache(e.m, &co, &a, &err), GR_OK);
    assert_int_equal(gr_kube_mgr_cache(e.m, &co, &b, &err), GR_OK);
    assert_ptr_equal(a, b); /* one informer for both */
    static char app_key[] = "app";
    assert_int_equal(gr_kube_cache_add_index(a, "app", gr_kube_index_label, app_key, &err), GR_OK);
    assert_int_equal(gr_kube_cache_add_index(b, "app", gr_kube_index_label, app_key, &err), GR_OK);
    assert_int_equal(gr_kube_cache_add_index(b, "app", gr_kube_index_namespace, NULL, &err),
                     GR_ECONFLICT);
    keyrec r1 = {0}, r2 = {0};
    gr_kube_ctl *c1 = NULL, *c2 = NULL;
    gr_kube_ctl_opts k1 = {.name = "one", .reconcile = count_reconcile, .ctx = &r1};
    gr_kube_ctl_opts k2 = {
        .name = "two", .reconcile = count_reconcile, .ctx = &r2, .always_on = true};
    assert_int_equal(gr_kube_mgr_add_controller(e.m, &k1, &c1, &err), GR_OK);
    assert_int_equal(gr_kube_mgr_add_controller(e.m, &k2, &c2, &err), GR_OK);
    assert_int_equal(gr_kube_ctl_watch(c1, a, NULL, NULL, &err), GR_OK);
    assert_int_equal(gr_kube_ctl_watch(c2, b, map_label, NULL, &err), GR_OK);
    assert_int_equal(gr_kube_mgr_start(e.m, &err), GR_OK);
    WAIT_UNTIL(gr_kube_mgr_ready(e.m, NULL, 0));
    json_t *cm = json_pack("{s:{s:s,s:s,s:{s:s}}}", "metadata", "name", "x", "namespace", "ns",
                           "labels", "app", "web");
    assert_int_equal(gr_kube_create(e.c, &GR_KUBE_CONFIGMAPS, "ns", cm, NULL, NULL, NULL, &err),
                     GR_OK);
    json_decref(cm);
    WAIT_UNTIL(atomic_load(&r1.n) >= 1 && atomic_load(&r2.n) >= 1);
    /* one streaming list (a WATCH with sendInitialEvents), no LIST */
    assert_int_equal(gr_kube_fake_count(e.f, "WATCH", "configmaps"), 1);
    assert_int_equal(gr_kube_fake_count(e.f, "LIST", "configmaps"), 0);
    WAIT_UNTIL(index_count(a, "app", "web") == 1);
    env_free(&e);
}

typedef struct run_state {
    atomic_int started, exited, adds, dels;
} run_state;

static void run_fn(void *ctx, const atomic_int *stop)
{
    run_state *r = ctx;
    atomic_fetch_add(&r->started, 1);
    while (!atomic_load(stop))
        gr_kube_sleep_ns(10000000LL, NULL);
    atomic_fetch_add(&r->exited, 1);
}

static void h_add(void *ctx, const json_t *o)
{
    (void)o;
    atomic_fetch_add(&((run_state *)ctx)->adds, 1);
}

static void h_del(void *ctx, const json_t *o)
{
    (void)o;
    atomic_fetch_add(&((run_state *)ctx)->dels, 1);
}

static void test_runnable_and_handlers(void **state)
{
    (void)state;
    env e;
    gr_err err;
    env_init(&e, false);
    run_state rs = {0};
    gr_kube_runnable_opts ro = {.name = "ticker", .run = run_fn, .ctx = &rs};
    assert_int_equal(gr_kube_mgr_add_runnable(e.m, &ro, &err), GR_OK);
    gr_kube_handlers h = {.on_add = h_add, .on_delete = h_del, .ctx = &rs};
    assert_int_equal(gr_kube_cache_add_handlers(e.t.widgets, &h, &err), GR_OK);
    assert_int_equal(gr_kube_mgr_start(e.m, &err), GR_OK);
    assert_int_equal(gr_kube_mgr_add_runnable(e.m, &ro, &err), GR_ESTATE);
    WAIT_UNTIL(atomic_load(&rs.started) == 1);
    json_t *w = widget("h1", 1, 0);
    assert_int_equal(gr_kube_create(e.c, &WIDGETS, "ns", w, NULL, NULL, NULL, &err), GR_OK);
    json_decref(w);
    WAIT_UNTIL(atomic_load(&rs.adds) == 1);
    gr_kube_mgr_stop(e.m);
    assert_int_equal(atomic_load(&rs.exited), 1); /* joined by stop */
    assert_false(gr_kube_mgr_ready(e.m, NULL, 0));
    env_free(&e);
}

typedef struct slow {
    atomic_int started, finished;
} slow;

static int slow_reconcile(void *ctx, const char *key, int64_t *after, gr_err *err)
{
    (void)key;
    (void)after;
    (void)err;
    slow *s = ctx;
    atomic_fetch_add(&s->started, 1);
    gr_kube_sleep_ns(1000000000LL, NULL);
    atomic_fetch_add(&s->finished, 1);
    return GR_OK;
}

static void test_graceful_drain(void **state)
{
    (void)state;
    gr_err err;
    gr_kube_fake *f = NULL;
    gr_kube_client *c = NULL;
    assert_int_equal(gr_kube_fake_new(&f, &err), GR_OK);
    assert_int_equal(gr_kube_fake_client(f, &c, &err), GR_OK);
    gr_kube_mgr *m = NULL;
    assert_int_equal(gr_kube_mgr_new(c, NULL, &m, &err), GR_OK);
    slow s = {0};
    gr_kube_ctl *ctl = NULL;
    gr_kube_ctl_opts ko = {.name = "slow", .workers = 1, .reconcile = slow_reconcile, .ctx = &s};
    assert_int_equal(gr_kube_mgr_add_controller(m, &ko, &ctl, &err), GR_OK);
    assert_int_equal(gr_kube_mgr_start(m, &err), GR_OK);
    for (int i = 0; i < 10; i++) {
        char k[16];
        snprintf(k, sizeof k, "ns/k%d", i);
        gr_kube_ctl_enqueue(ctl, k);
    }
    WAIT_UNTIL(atomic_load(&s.started) >= 1);
    /* SIGTERM path: the reconcile in flight finishes, queued keys are not started */
    gr_kube_mgr_stop(m);
    int started = atomic_load(&s.started);
    assert_int_equal(atomic_load(&s.finished), started);
    assert_true(started < 10);
    assert_false(gr_kube_ctl_running(ctl));
    assert_int_equal(gr_kube_ctl_enqueue(ctl, "ns/late"), GR_OK); /* ignored after stop */
    gr_kube_sleep_ns(100000000LL, NULL);
    assert_int_equal(atomic_load(&s.started), started);
    gr_kube_mgr_free(m);
    gr_kube_fake_free(f);
}

static void test_metrics_render(void **state)
{
    (void)state;
    gr_kube_ctl_metrics c = {.name = "job\"x",
                             .depth = 3,
                             .adds = 10,
                             .retries = 2,
                             .success = 7,
                             .error = 2,
                             .requeue_after = 1,
                             .max_workers = 10};
    gr_kube_hist_observe(&c.duration, 0.003);
    gr_kube_hist_observe(&c.duration, 0.2);
    gr_kube_hist_observe(&c.duration, 100);
    gr_kube_cache_metrics ch = {
        .resource = "v1/pods", .ns = "", .synced = true, .present = true, .objects = 4};
    gr_kube_metrics_snapshot s = {.ctls = &c,
                                  .nctl = 1,
                                  .caches = &ch,
                                  .ncache = 1,
                                  .leader_election = true,
                                  .lease_name = "240fe9c6.nvidia.com",
                                  .is_leader = true};
    gr_buf b = GR_BUF_INIT(1 << 20);
    assert_int_equal(gr_kube_metrics_render(&s, &b), GR_OK);
    const char *t = gr_buf_cstr(&b);
    assert_non_null(
        strstr(t, "# TYPE workqueue_depth gauge\nworkqueue_depth{name=\"job\\\"x\"} 3\n"));
    assert_non_null(strstr(t, "workqueue_adds_total{name=\"job\\\"x\"} 10\n"));
    assert_non_null(strstr(t, "workqueue_retries_total{name=\"job\\\"x\"} 2\n"));
    assert_non_null(strstr(t, "controller_runtime_reconcile_total{controller=\"job\\\"x\","
                              "result=\"success\"} 7\n"));
    assert_non_null(strstr(t, "controller_runtime_reconcile_errors_total{controller=\"job\\\"x\"} "
                              "2\n"));
    assert_non_null(strstr(t, "controller_runtime_reconcile_time_seconds_bucket{controller="
                              "\"job\\\"x\",le=\"0.005\"} 1\n"));
    assert_non_null(strstr(t, "controller_runtime_reconcile_time_seconds_bucket{controller="
                              "\"job\\\"x\",le=\"0.25\"} 2\n"));
    assert_non_null(strstr(t, "controller_runtime_reconcile_time_seconds_bucket{controller="
                              "\"job\\\"x\",le=\"+Inf\"} 3\n"));
    assert_non_null(strstr(t, "controller_runtime_reconcile_time_seconds_count{controller="
                              "\"job\\\"x\"} 3\n"));
    assert_non_null(strstr(t, "leader_election_master_status{name=\"240fe9c6.nvidia.com\"} 1\n"));
    assert_non_null(strstr(t, "gpuready_informer_synced{resource=\"v1/pods\",namespace=\"\"} 1\n"));
    /* a too-small buffer is GR_ETOOBIG, never a partial overflow */
    gr_buf small = GR_BUF_INIT(64);
    assert_int_equal(gr_kube_metrics_render(&s, &small), GR_ETOOBIG);
    gr_buf_free(&small);
    gr_buf_free(&b);
    /* probe body */
    gr_kube_check_result r[2] = {{.name = "informers", .ok = true},
                                 {.name = "leader-election", .ok = false, .why = "no leader"}};
    gr_buf p = GR_BUF_INIT(4096);
    int http = 0;
    assert_int_equal(gr_kube_probe_render(r, 2, false, &p, &http), GR_OK);
    assert_int_equal(http, 500);
    assert_string_equal(gr_buf_cstr(&p), "[-]leader-election failed: no leader\ncheck failed\n");
    gr_buf_free(&p);
    /* requeue decision */
    assert_int_equal(gr_kube_requeue_decide(GR_OK, 0), GR_KUBE_REQUEUE_FORGET);
    assert_int_equal(gr_kube_requeue_decide(GR_OK, 5), GR_KUBE_REQUEUE_AFTER);
    assert_int_equal(gr_kube_requeue_decide(GR_EIO, 5), GR_KUBE_REQUEUE_BACKOFF);
    assert_string_equal(gr_kube_requeue_result(GR_KUBE_REQUEUE_BACKOFF), "error");
}

static size_t body_cb(char *p, size_t s, size_t n, void *u)
{
    gr_buf_append(u, p, s * n);
    return s * n;
}

static long http_get(int port, const char *path, gr_buf *body)
{
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    CURL *h = curl_easy_init();
    gr_buf_reset(body);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_cb);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    long code = 0;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    return code;
}

static void test_leader_election_and_probes(void **state)
{
    (void)state;
    gr_err err;
    gr_kube_fake *f = NULL;
    assert_int_equal(gr_kube_fake_new(&f, &err), GR_OK);
    gr_kube_mgr *m[2] = {NULL, NULL};
    keyrec lo[2] = {{0}}, on[2] = {{0}};
    gr_kube_ctl *lc[2], *oc[2];
    const char *ids[2] = {"a", "b"};
    for (int i = 0; i < 2; i++) {
        gr_kube_client *c = NULL;
        assert_int_equal(gr_kube_fake_client(f, &c, &err), GR_OK);
        gr_kube_mgr_opts mo = {.name = ids[i],
                               .probe_addr = "127.0.0.1:0",
                               .metrics_addr = "127.0.0.1:0",
                               .leader_elect = true,
                               .lease_ns = "ns",
                               .lease_name = "240fe9c6.nvidia.com",
                               .identity = ids[i],
                               /* long enough that a starved thread on a loaded
                                * machine does not lose the lease; the handover
                                * below is a release, so nothing waits for expiry */
                               .lease_duration_ns = 20000000000LL,
                               .renew_deadline_ns = 15000000000LL,
                               .retry_period_ns = 100000000LL};
        assert_int_equal(gr_kube_mgr_new(c, &mo, &m[i], &err), GR_OK);
        gr_kube_ctl_opts k1 = {.name = "leader-only", .reconcile = count_reconcile, .ctx = &lo[i]};
        gr_kube_ctl_opts k2 = {
            .name = "always-on", .reconcile = count_reconcile, .ctx = &on[i], .always_on = true};
        assert_int_equal(gr_kube_mgr_add_controller(m[i], &k1, &lc[i], &err), GR_OK);
        assert_int_equal(gr_kube_mgr_add_controller(m[i], &k2, &oc[i], &err), GR_OK);
        assert_int_equal(gr_kube_mgr_start(m[i], &err), GR_OK);
    }
    WAIT_UNTIL(gr_kube_mgr_is_leader(m[0]) || gr_kube_mgr_is_leader(m[1]));
    int L = gr_kube_mgr_is_leader(m[0]) ? 0 : 1, F = 1 - L;
    WAIT_UNTIL(gr_kube_mgr_ready(m[F], NULL, 0)); /* a follower is ready once a leader is known */
    WAIT_UNTIL(gr_kube_ctl_running(lc[L]) && gr_kube_ctl_running(oc[F]));
    assert_false(gr_kube_mgr_is_leader(m[F]));
    assert_false(gr_kube_ctl_running(lc[F])); /* leader-only work stays off */
    /* over HTTP */
    gr_buf b = GR_BUF_INIT(1 << 20);
    assert_int_equal(http_get(gr_kube_mgr_probe_port(m[L]), "/healthz", &b), 200);
    assert_string_equal(gr_buf_cstr(&b), "ok");
    assert_int_equal(http_get(gr_kube_mgr_probe_port(m[L]), "/readyz", &b), 200);
    assert_int_equal(http_get(gr_kube_mgr_probe_port(m[L]), "/readyz?verbose", &b), 200);
    assert_non_null(strstr(gr_buf_cstr(&b), "[+]leader-election ok"));
    assert_int_equal(http_get(gr_kube_mgr_metrics_port(m[L]), "/metrics", &b), 200);
    assert_non_null(
        strstr(gr_buf_cstr(&b), "leader_election_master_status{name=\"240fe9c6.nvidia.com\"} 1"));
    assert_int_equal(http_get(gr_kube_mgr_metrics_port(m[F]), "/metrics", &b), 200);
    assert_non_null(
        strstr(gr_buf_cstr(&b), "leader_election_master_status{name=\"240fe9c6.nvidia.com\"} 0"));
    assert_int_equal(http_get(gr_kube_mgr_probe_port(m[L]), "/nope", &b), 404);
    /* graceful stop of the leader releases the lease; the follower takes over */
    gr_kube_mgr_free(m[L]);
    m[L] = NULL;
    json_t *lease = gr_kube_fake_get(f, &GR_KUBE_LEASES, "ns", "240fe9c6.nvidia.com");
    const char *holder =
        json_string_value(json_object_get(json_object_get(lease, "spec"), "holderIdentity"));
    assert_true(holder == NULL || *holder == '\0' || strcmp(holder, ids[F]) == 0);
    json_decref(lease);
    WAIT_UNTIL(gr_kube_mgr_is_leader(m[F]) && gr_kube_ctl_running(lc[F]));
    gr_kube_mgr_free(m[F]);
    gr_buf_free(&b);
    gr_kube_fake_free(f);
}

static void test_leader_lost_is_fatal(void **state)
{
    (void)state;
    gr_err err;
    gr_kube_fake *f = NULL;
    gr_kube_client *c = NULL;
    assert_int_equal(gr_kube_fake_new(&f, &err), GR_OK);
    assert_int_equal(gr_kube_fake_client(f, &c, &err), GR_OK);
    gr_kube_mgr_opts mo = {.leader_elect = true,
                           .lease_ns = "ns",
                           .lease_name = "240fe9c6.nvidia.com",
                           .identity = "solo",
                           .lease_duration_ns = 1000000000LL,
                           .renew_deadline_ns = 600000000LL,
                           .retry_period_ns = 100000000LL};
    gr_kube_mgr *m = NULL;
    assert_int_equal(gr_kube_mgr_new(c, &mo, &m, &err), GR_OK);
    assert_int_equal(gr_kube_mgr_start(m, &err), GR_OK);
    WAIT_UNTIL(gr_kube_mgr_is_leader(m));
    /* the API server refuses every renewal: the leader steps down and the
     * manager reports it (the program exits 1 and restarts clean) */
    assert_int_equal(gr_kube_fake_fail(f, "PUT", "leases", NULL, 1000000, 500, "InternalError",
                                       "etcdserver: request timed out", &err),
                     GR_OK);
    atomic_int never = 0;
    assert_int_equal(gr_kube_mgr_wait(m, &never, &err), GR_ESTATE);
    assert_non_null(strstr(err.msg, "leader election lost"));
    assert_false(gr_kube_mgr_is_leader(m));
    gr_kube_fake_clear_failures(f);
    gr_kube_mgr_free(m);
    gr_kube_fake_free(f);
}

static int hello(void *ctx, const char *path, const char *query, gr_buf *body, int *http,
                 const char **ctype)
{
    (void)ctx;
    (void)query;
    (void)ctype;
    *http = strcmp(path, "/hello") == 0 ? 200 : 404;
    return gr_buf_puts(body, "hi");
}

static void test_http_server(void **state)
{
    (void)state;
    gr_err err;
    gr_kube_http *h = NULL;
    /* no host: every interface (dual stack where available); IPv4 loopback answers */
    assert_int_equal(gr_kube_http_start(":0", hello, NULL, &h, &err), GR_OK);
    assert_true(gr_kube_http_port(h) > 0);
    gr_buf b = GR_BUF_INIT(4096);
    assert_int_equal(http_get(gr_kube_http_port(h), "/hello", &b), 200);
    assert_string_equal(gr_buf_cstr(&b), "hi");
    assert_int_equal(http_get(gr_kube_http_port(h), "/other", &b), 404);
    /* the port is taken: a clear error naming the address */
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", gr_kube_http_port(h));
    gr_kube_http *h2 = NULL;
    assert_int_equal(gr_kube_http_start(addr, hello, NULL, &h2, &err), GR_EIO);
    assert_non_null(strstr(err.msg, addr));
    assert_int_equal(gr_kube_http_start("0", hello, NULL, &h2, &err), GR_EINVAL);
    gr_kube_http_stop(h);
    gr_buf_free(&b);
}

static void test_events(void **state)
{
    (void)state;
    gr_err err;
    gr_kube_fake *f = NULL;
    gr_kube_client *c = NULL;
    assert_int_equal(gr_kube_fake_new(&f, &err), GR_OK);
    assert_int_equal(gr_kube_fake_client(f, &c, &err), GR_OK);
    gr_kube_events *ev = NULL;
    assert_int_equal(gr_kube_events_new(c, "job-controller", "pod-1", &ev, &err), GR_OK);
    json_t *obj = json_pack("{s:s,s:s,s:{s:s,s:s,s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                            "metadata", "name", "x", "namespace", "ns", "uid", "u-1");
    assert_int_equal(gr_kube_event(ev, obj, "Warning", "Broken", "it broke", &err), GR_OK);
    assert_int_equal(gr_kube_event(ev, obj, "Warning", "Broken", "it broke", &err), GR_OK);
    assert_int_equal(gr_kube_event(ev, obj, "Normal", "Fixed", "it works", &err), GR_OK);
    json_t *all = gr_kube_fake_list(f, &GR_KUBE_CORE_EVENTS, "ns");
    assert_int_equal(json_array_size(all), 2);
    json_t *e;
    size_t i;
    bool saw2 = false;
    json_array_foreach(all, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "reason")), "Broken") == 0) {
            assert_int_equal(json_integer_value(json_object_get(e, "count")), 2);
            assert_string_equal(
                json_string_value(json_object_get(json_object_get(e, "involvedObject"), "uid")),
                "u-1");
            assert_string_equal(
                json_string_value(json_object_get(json_object_get(e, "source"), "component")),
                "job-controller");
            saw2 = true;
        }
    }
    assert_true(saw2);
    json_decref(all);
    /* an expired Event: the next repeat starts a new one */
    json_t *evs = gr_kube_fake_list(f, &GR_KUBE_CORE_EVENTS, "ns");
    json_array_foreach(evs, i, e) gr_kube_delete(
        c, &GR_KUBE_CORE_EVENTS, "ns", gr_kube_obj_meta(e, "name"), NULL, NULL, NULL, NULL);
    json_decref(evs);
    assert_int_equal(gr_kube_event(ev, obj, "Warning", "Broken", "it broke", &err), GR_OK);
    all = gr_kube_fake_list(f, &GR_KUBE_CORE_EVENTS, "ns");
    assert_int_equal(json_array_size(all), 1);
    json_decref(all);
    /* messages are capped at 1024 bytes with the suffix, on a UTF-8 boundary */
    char big[3000];
    memset(big, 'a', sizeof big);
    big[sizeof big - 1] = '\0';
    big[1008] = (char)0xC3; /* "é" straddling the cut at 1024 - 15 = 1009 */
    big[1009] = (char)0xA9;
    char out[GR_KUBE_EVENT_MSG_MAX + 1];
    assert_true(gr_kube_event_message(big, out, sizeof out));
    assert_true(strlen(out) <= GR_KUBE_EVENT_MSG_MAX);
    assert_non_null(strstr(out, "... [truncated]"));
    assert_int_equal(strlen(out), 1008 + strlen("... [truncated]"));
    assert_false(gr_kube_event_message("short", out, sizeof out));
    assert_string_equal(out, "short");
    /* bad input */
    json_t *body = NULL;
    bool create;
    const char *ns, *name;
    assert_int_equal(
        gr_kube_events_plan(ev, obj, "Bad", "R", "m", 1, &body, &create, &ns, &name, &err),
        GR_EINVAL);
    json_t *nokind = json_pack("{s:{s:s}}", "metadata", "name", "x");
    assert_int_equal(
        gr_kube_events_plan(ev, nokind, "Normal", "R", "m", 1, &body, &create, &ns, &name, &err),
        GR_EINVAL);
    json_decref(nokind);
    json_decref(obj);
    gr_kube_events_free(ev);
    gr_kube_client_free(c);
    gr_kube_fake_free(f);
}

static void test_bad_input(void **state)
{
    (void)state;
    gr_err err;
    bool off;
    uint32_t ip;
    int port;
    assert_int_equal(gr_kube_bind_parse("0", &off, &ip, &port, &err), GR_OK);
    assert_true(off);
    assert_int_equal(gr_kube_bind_parse(":8081", &off, &ip, &port, &err), GR_OK);
    assert_false(off);
    assert_int_equal(port, 8081);
    assert_int_equal(gr_kube_bind_parse("8081", &off, &ip, &port, &err), GR_EINVAL);
    assert_int_equal(gr_kube_bind_parse(":99999", &off, &ip, &port, &err), GR_EINVAL);
    assert_int_equal(gr_kube_bind_parse("host.example:80", &off, &ip, &port, &err), GR_EINVAL);
    gr_kube_fake *f = NULL;
    gr_kube_client *c = NULL;
    assert_int_equal(gr_kube_fake_new(&f, &err), GR_OK);
    assert_int_equal(gr_kube_fake_client(f, &c, &err), GR_OK);
    gr_kube_mgr *m = NULL;
    gr_kube_mgr_opts mo = {.leader_elect = true, .lease_ns = "ns"};
    assert_int_equal(gr_kube_mgr_new(c, &mo, &m, &err), GR_EINVAL); /* frees c */
    assert_non_null(strstr(err.msg, "identity"));
    assert_int_equal(gr_kube_fake_client(f, &c, &err), GR_OK);
    mo = (gr_kube_mgr_opts){.probe_addr = "nonsense"};
    assert_int_equal(gr_kube_mgr_new(c, &mo, &m, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "--health-probe-bind-address"));
    assert_int_equal(gr_kube_fake_client(f, &c, &err), GR_OK);
    assert_int_equal(gr_kube_mgr_new(c, NULL, &m, &err), GR_OK);
    gr_kube_ctl *ctl = NULL;
    gr_kube_ctl_opts ko = {.name = "x", .workers = 100000, .reconcile = count_reconcile};
    assert_int_equal(gr_kube_mgr_add_controller(m, &ko, &ctl, &err), GR_EINVAL);
    ko.workers = 1;
    assert_int_equal(gr_kube_mgr_add_controller(m, &ko, &ctl, &err), GR_OK);
    assert_int_equal(gr_kube_mgr_add_controller(m, &ko, &ctl, &err), GR_ECONFLICT);
    gr_kube_cache *cache = NULL;
    gr_kube_cache_opts co = {.gvr = {"", NULL, "pods"}};
    assert_int_equal(gr_kube_mgr_cache(m, &co, &cache, &err), GR_EINVAL);
    assert_int_equal(gr_kube_mgr_start(m, &err), GR_OK);
    co.gvr = GR_KUBE_PODS;
    assert_int_equal(gr_kube_mgr_cache(m, &co, &cache, &err), GR_ESTATE);
    assert_int_equal(gr_kube_mgr_start(m, &err), GR_ESTATE);
    gr_kube_mgr_free(m);
    gr_kube_fake_free(f);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reconcile_idempotent),
        cmocka_unit_test(test_requeue_after),
        cmocka_unit_test(test_status_conflict_retry),
        cmocka_unit_test(test_finalizer_flow),
        cmocka_unit_test(test_cache_sync_gating),
        cmocka_unit_test(test_optional_missing_resource),
        cmocka_unit_test(test_cache_drops_managed_fields),
        cmocka_unit_test(test_shared_informer_fanout),
        cmocka_unit_test(test_runnable_and_handlers),
        cmocka_unit_test(test_graceful_drain),
        cmocka_unit_test(test_metrics_render),
        cmocka_unit_test(test_leader_election_and_probes),
        cmocka_unit_test(test_leader_lost_is_fatal),
        cmocka_unit_test(test_http_server),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_bad_input),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
