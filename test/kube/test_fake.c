/* The in-memory API server (gr_kube_fake) through the real client: CRUD,
 * conflicts, status subresource, finalizers, GC, patches, error injection,
 * selectors, discovery, and the unchanged informer on its watch streams. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gr_kube_fake.h"
#include "gr_kube_informer.h"
#include "gr_kube_rest.h"
#include "kube_internal.h"

static const gr_kube_gvr WIDGETS = {"example.com", "v1", "widgets"};

typedef struct env {
    gr_kube_fake *f;
    gr_kube_client *c;
} env;

static int setup(void **state)
{
    env *e = calloc(1, sizeof *e);
    gr_err err;
    assert_int_equal(gr_kube_fake_new(&e->f, &err), GR_OK);
    assert_int_equal(gr_kube_fake_client(e->f, &e->c, &err), GR_OK);
    assert_int_equal(gr_kube_fake_add_resource(e->f, &WIDGETS, "Widget", true, true, &err), GR_OK);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    env *e = *state;
    gr_kube_client_free(e->c);
    gr_kube_fake_free(e->f);
    free(e);
    return 0;
}

static json_t *cm(const char *ns, const char *name, const char *app)
{
    return json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:s}}", "apiVersion", "v1", "kind",
                     "ConfigMap", "metadata", "name", name, "namespace", ns, "labels", "app", app,
                     "data", "k", "v");
}

static void test_crud_conflict_and_status_bodies(void **state)
{
    env *e = *state;
    gr_err err;
    gr_kube_status st;
    json_t *out = NULL;
    json_t *o = cm("ns", "a", "x");
    assert_int_equal(gr_kube_create(e->c, &GR_KUBE_CONFIGMAPS, "ns", o, NULL, &out, &st, &err),
                     GR_OK);
    assert_non_null(gr_kube_obj_meta(out, "uid"));
    assert_non_null(gr_kube_obj_meta(out, "creationTimestamp"));
    assert_non_null(gr_kube_obj_meta(out, "resourceVersion"));
    json_decref(out);
    /* AlreadyExists as a real Status */
    assert_int_equal(gr_kube_create(e->c, &GR_KUBE_CONFIGMAPS, "ns", o, NULL, NULL, &st, &err),
                     GR_ECONFLICT);
    assert_int_equal(st.reason, GR_KUBE_REASON_ALREADY_EXISTS);
    assert_int_equal(st.http_code, 409);
    assert_string_equal(st.message, "configmaps \"a\" already exists");
    json_decref(o);
    /* generateName */
    json_t *g =
        json_pack("{s:{s:s},s:{s:s}}", "metadata", "generateName", "gen-", "data", "a", "b");
    assert_int_equal(gr_kube_create(e->c, &GR_KUBE_CONFIGMAPS, "ns", g, NULL, &out, &st, &err),
                     GR_OK);
    assert_int_equal(strncmp(gr_kube_obj_meta(out, "name"), "gen-", 4), 0);
    assert_int_equal(strlen(gr_kube_obj_meta(out, "name")), 9);
    json_decref(out);
    json_decref(g);
    /* NotFound */
    assert_int_equal(gr_kube_get(e->c, &GR_KUBE_CONFIGMAPS, "ns", "nope", NULL, &out, &st, &err),
                     GR_ENOTFOUND);
    assert_string_equal(st.message, "configmaps \"nope\" not found");
    /* compare-and-swap: a stale resourceVersion conflicts */
    assert_int_equal(gr_kube_get(e->c, &GR_KUBE_CONFIGMAPS, "ns", "a", NULL, &out, &st, &err),
                     GR_OK);
    json_t *stale = json_deep_copy(out);
    json_object_set_new(json_object_get(out, "data"), "k", json_string("v2"));
    json_t *upd = NULL;
    assert_int_equal(gr_kube_update(e->c, &GR_KUBE_CONFIGMAPS, "ns", out, NULL, &upd, &st, &err),
                     GR_OK);
    json_object_set_new(json_object_get(stale, "data"), "k", json_string("v3"));
    assert_int_equal(gr_kube_update(e->c, &GR_KUBE_CONFIGMAPS, "ns", stale, NULL, NULL, &st, &err),
                     GR_ECONFLICT);
    assert_int_equal(st.reason, GR_KUBE_REASON_CONFLICT);
    assert_non_null(strstr(st.message, "the object has been modified"));
    /* a no-op update keeps the resourceVersion */
    json_t *again = NULL;
    assert_int_equal(gr_kube_update(e->c, &GR_KUBE_CONFIGMAPS, "ns", upd, NULL, &again, &st, &err),
                     GR_OK);
    assert_string_equal(gr_kube_obj_meta(again, "resourceVersion"),
                        gr_kube_obj_meta(upd, "resourceVersion"));
    json_decref(again);
    json_decref(upd);
    json_decref(stale);
    json_decref(out);
    /* a CRD not installed: no such API group → the server's plain 404 page;
     * a served group without that resource → a NotFound Status */
    gr_kube_gvr missing = {"nope.example.com", "v1", "things"};
    assert_int_equal(gr_kube_list(e->c, &missing, "ns", NULL, &out, &st, &err), GR_ENOTFOUND);
    assert_string_equal(st.message, "404 page not found ");
    gr_kube_gvr sibling = {"example.com", "v1", "things"};
    assert_int_equal(gr_kube_list(e->c, &sibling, "ns", NULL, &out, &st, &err), GR_ENOTFOUND);
    assert_string_equal(st.message, "the server could not find the requested resource");
}

static void test_list_selectors(void **state)
{
    env *e = *state;
    gr_err err;
    const char *apps[] = {"x", "y", "z"};
    for (int i = 0; i < 3; i++) {
        char n[8];
        snprintf(n, sizeof n, "c%d", i);
        json_t *o = cm(i == 2 ? "other" : "ns", n, apps[i]);
        assert_int_equal(gr_kube_fake_seed(e->f, &GR_KUBE_CONFIGMAPS, o, &err), GR_OK);
        json_decref(o);
    }
    json_t *l = NULL;
    gr_kube_opts q = {.label_selector = "app in (x, z)"};
    assert_int_equal(gr_kube_list(e->c, &GR_KUBE_CONFIGMAPS, NULL, &q, &l, NULL, &err), GR_OK);
    assert_int_equal(json_array_size(json_object_get(l, "items")), 2);
    assert_string_equal(json_string_value(json_object_get(l, "kind")), "ConfigMapList");
    json_decref(l);
    q.label_selector = "app!=x";
    assert_int_equal(gr_kube_list(e->c, &GR_KUBE_CONFIGMAPS, "ns", &q, &l, NULL, &err), GR_OK);
    assert_int_equal(json_array_size(json_object_get(l, "items")), 1);
    json_decref(l);
    q.label_selector = NULL;
    q.field_selector = "metadata.name=c1";
    assert_int_equal(gr_kube_list(e->c, &GR_KUBE_CONFIGMAPS, NULL, &q, &l, NULL, &err), GR_OK);
    assert_int_equal(json_array_size(json_object_get(l, "items")), 1);
    json_decref(l);
    /* pure selector cases */
    json_t *labels = json_pack("{s:s,s:s}", "a", "1", "b", "2");
    struct {
        const char *sel;
        bool want;
    } cases[] = {{"a=1", true}, {"a==1,b=2", true}, {"a=2", false},          {"a", true},
                 {"!c", true},  {"!a", false},      {"b notin (1,3)", true}, {"b in (3)", false},
                 {"", true}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool m = !cases[i].want;
        assert_int_equal(gr_kube_fake_selector_match(cases[i].sel, labels, &m, &err), GR_OK);
        assert_true(m == cases[i].want);
    }
    bool m;
    assert_int_equal(gr_kube_fake_selector_match("a in 1", labels, &m, &err), GR_EINVAL);
    assert_int_equal(gr_kube_fake_selector_match("a>1", labels, &m, &err), GR_EINVAL);
    json_decref(labels);
    /* malformed selector on the wire: 400 BadRequest */
    gr_kube_status st;
    q.field_selector = NULL;
    q.label_selector = "a<1";
    assert_int_equal(gr_kube_list(e->c, &GR_KUBE_CONFIGMAPS, NULL, &q, &l, &st, &err), GR_EINVAL);
    assert_int_equal(st.http_code, 400);
}

static void test_status_subresource_and_generation(void **state)
{
    env *e = *state;
    gr_err err;
    gr_kube_status st;
    json_t *w = json_pack("{s:s,s:s,s:{s:s},s:{s:i},s:{s:s}}", "apiVersion", "example.com/v1",
                          "kind", "Widget", "metadata", "name", "w", "spec", "value", 1, "status",
                          "phase", "ignored-on-create");
    json_t *out = NULL;
    assert_int_equal(gr_kube_create(e->c, &WIDGETS, "ns", w, NULL, &out, &st, &err), GR_OK);
    assert_null(json_object_get(out, "status"));
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(out, "metadata"), "generation")), 1);
    /* status write touches only status */
    json_object_set_new(out, "status", json_pack("{s:s}", "phase", "Ready"));
    json_object_set_new(json_object_get(out, "spec"), "value", json_integer(99));
    json_t *s2 = NULL;
    assert_int_equal(gr_kube_update_status(e->c, &WIDGETS, "ns", out, NULL, &s2, &st, &err), GR_OK);
    assert_string_equal(json_string_value(json_object_get(json_object_get(s2, "status"), "phase")),
                        "Ready");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(s2, "spec"), "value")), 1);
    /* a main-resource write keeps the stored status and bumps generation on spec change */
    json_object_set_new(json_object_get(s2, "spec"), "value", json_integer(2));
    json_object_set_new(s2, "status", json_pack("{s:s}", "phase", "Hacked"));
    json_t *s3 = NULL;
    assert_int_equal(gr_kube_update(e->c, &WIDGETS, "ns", s2, NULL, &s3, &st, &err), GR_OK);
    assert_string_equal(json_string_value(json_object_get(json_object_get(s3, "status"), "phase")),
                        "Ready");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(s3, "metadata"), "generation")), 2);
    /* merge and JSON patch on status */
    json_t *mp = json_pack("{s:{s:s}}", "status", "phase", "Merged");
    json_t *p = NULL;
    gr_kube_opts so = {.subresource = "status"};
    assert_int_equal(
        gr_kube_patch(e->c, &WIDGETS, "ns", "w", GR_KUBE_PATCH_MERGE, mp, &so, &p, &st, &err),
        GR_OK);
    assert_string_equal(json_string_value(json_object_get(json_object_get(p, "status"), "phase")),
                        "Merged");
    json_decref(p);
    json_t *jp = json_pack("[{s:s,s:s,s:i}]", "op", "replace", "path", "/spec/value", "value", 7);
    assert_int_equal(
        gr_kube_patch(e->c, &WIDGETS, "ns", "w", GR_KUBE_PATCH_JSON, jp, NULL, &p, &st, &err),
        GR_OK);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(p, "spec"), "value")), 7);
    json_decref(p);
    /* a failing JSON patch test op is 422 Invalid */
    json_t *bad = json_pack("[{s:s,s:s,s:i}]", "op", "test", "path", "/spec/value", "value", 8);
    assert_int_equal(
        gr_kube_patch(e->c, &WIDGETS, "ns", "w", GR_KUBE_PATCH_JSON, bad, NULL, &p, &st, &err),
        GR_EINVAL);
    assert_int_equal(st.http_code, 422);
    json_decref(bad);
    json_decref(jp);
    json_decref(mp);
    json_decref(s3);
    json_decref(s2);
    json_decref(out);
    json_decref(w);
}

static void test_finalizers_and_gc(void **state)
{
    env *e = *state;
    gr_err err;
    gr_kube_status st;
    json_t *owner = json_pack("{s:{s:s,s:s,s:[s]},s:{}}", "metadata", "name", "own", "namespace",
                              "ns", "finalizers", "example.com/f", "spec");
    json_t *o = NULL;
    /* a custom resource must name its kind, as on the API server */
    assert_int_equal(gr_kube_create(e->c, &WIDGETS, "ns", owner, NULL, &o, &st, &err), GR_EINVAL);
    assert_int_equal(st.http_code, 400);
    assert_non_null(strstr(st.message, "Object 'Kind' is missing"));
    json_object_set_new(owner, "apiVersion", json_string("example.com/v1"));
    json_object_set_new(owner, "kind", json_string("Widget"));
    assert_int_equal(gr_kube_create(e->c, &WIDGETS, "ns", owner, NULL, &o, &st, &err), GR_OK);
    json_t *dep = cm("ns", "dep", "x");
    json_object_set_new(json_object_get(dep, "metadata"), "ownerReferences",
                        json_pack("[{s:s,s:s,s:s,s:s,s:b}]", "apiVersion", "example.com/v1", "kind",
                                  "Widget", "name", "own", "uid", gr_kube_obj_meta(o, "uid"),
                                  "controller", 1));
    assert_int_equal(gr_kube_create(e->c, &GR_KUBE_CONFIGMAPS, "ns", dep, NULL, NULL, &st, &err),
                     GR_OK);
    /* delete with a finalizer: only deletionTimestamp */
    json_t *d = NULL;
    assert_int_equal(gr_kube_delete(e->c, &WIDGETS, "ns", "own", NULL, &d, &st, &err), GR_OK);
    assert_non_null(gr_kube_obj_meta(d, "deletionTimestamp"));
    json_decref(d);
    json_t *still = gr_kube_fake_get(e->f, &WIDGETS, "ns", "own");
    assert_non_null(still);
    /* no new finalizers while deleting */
    json_array_append_new(json_object_get(json_object_get(still, "metadata"), "finalizers"),
                          json_string("another"));
    assert_int_equal(gr_kube_update(e->c, &WIDGETS, "ns", still, NULL, NULL, &st, &err), GR_EINVAL);
    assert_int_equal(st.reason, GR_KUBE_REASON_INVALID);
    json_decref(still);
    /* removing the last finalizer deletes it, and the GC takes the dependent */
    still = gr_kube_fake_get(e->f, &WIDGETS, "ns", "own");
    json_object_set_new(json_object_get(still, "metadata"), "finalizers", json_array());
    assert_int_equal(gr_kube_update(e->c, &WIDGETS, "ns", still, NULL, NULL, &st, &err), GR_OK);
    json_decref(still);
    assert_null(gr_kube_fake_get(e->f, &WIDGETS, "ns", "own"));
    assert_null(gr_kube_fake_get(e->f, &GR_KUBE_CONFIGMAPS, "ns", "dep"));
    /* delete preconditions */
    json_t *x = cm("ns", "pre", "x");
    assert_int_equal(gr_kube_create(e->c, &GR_KUBE_CONFIGMAPS, "ns", x, NULL, NULL, &st, &err),
                     GR_OK);
    gr_kube_opts dopt = {.precondition_uid = "not-the-uid"};
    assert_int_equal(gr_kube_delete(e->c, &GR_KUBE_CONFIGMAPS, "ns", "pre", &dopt, NULL, &st, &err),
                     GR_ECONFLICT);
    json_decref(x);
    json_decref(dep);
    json_decref(o);
    json_decref(owner);
}

static void test_error_injection_and_counts(void **state)
{
    env *e = *state;
    gr_err err;
    gr_kube_status st;
    assert_int_equal(gr_kube_fake_fail(e->f, "WRITE", "configmaps", NULL, 2, 500, "InternalError",
                                       "etcd is sad", &err),
                     GR_OK);
    json_t *o = cm("ns", "inj", "x");
    for (int i = 0; i < 2; i++) {
        assert_int_equal(gr_kube_create(e->c, &GR_KUBE_CONFIGMAPS, "ns", o, NULL, NULL, &st, &err),
                         GR_EIO);
        assert_int_equal(st.reason, GR_KUBE_REASON_INTERNAL_ERROR);
        assert_string_equal(st.message, "etcd is sad");
    }
    assert_int_equal(gr_kube_create(e->c, &GR_KUBE_CONFIGMAPS, "ns", o, NULL, NULL, &st, &err),
                     GR_OK);
    assert_int_equal(gr_kube_fake_count(e->f, "POST", "configmaps"), 3);
    assert_int_equal(gr_kube_fake_count(e->f, "WRITE", NULL), 3);
    gr_kube_fake_reset_counts(e->f);
    assert_int_equal(gr_kube_fake_count(e->f, NULL, NULL), 0);
    json_decref(o);
}

static void test_discovery(void **state)
{
    env *e = *state;
    gr_err err;
    gr_buf b = GR_BUF_INIT(1 << 20);
    assert_int_equal(gr_kube_request(e->c, "GET", "/apis/example.com/v1", NULL, NULL, 0, NULL, &b,
                                     NULL, NULL, &err),
                     GR_OK);
    assert_non_null(strstr(gr_buf_cstr(&b), "\"widgets/status\""));
    gr_kube_fake_remove_resource(e->f, &WIDGETS);
    assert_int_equal(gr_kube_request(e->c, "GET", "/apis/example.com/v1", NULL, NULL, 0, NULL, &b,
                                     NULL, NULL, &err),
                     GR_ENOTFOUND);
    assert_int_equal(
        gr_kube_request(e->c, "GET", "/api/v1", NULL, NULL, 0, NULL, &b, NULL, NULL, &err), GR_OK);
    assert_non_null(strstr(gr_buf_cstr(&b), "\"configmaps\""));
    gr_buf_free(&b);
}

typedef struct seen {
    atomic_int add, upd, del;
} seen;

static void s_add(void *c, const json_t *o)
{
    (void)o;
    atomic_fetch_add(&((seen *)c)->add, 1);
}
static void s_upd(void *c, const json_t *a, const json_t *b)
{
    (void)a;
    (void)b;
    atomic_fetch_add(&((seen *)c)->upd, 1);
}
static void s_del(void *c, const json_t *o)
{
    (void)o;
    atomic_fetch_add(&((seen *)c)->del, 1);
}

/* Generous bound for a loaded 2-core machine; a failure means "never". */
static bool wait_for(atomic_int *v, int want)
{
    for (int i = 0; i < 1200; i++) {
        if (atomic_load(v) >= want)
            return true;
        gr_kube_sleep_ns(50000000LL, NULL);
    }
    return false;
}

static void test_informer_runs_on_fake(void **state)
{
    env *e = *state;
    gr_err err;
    gr_kube_fake_set_bookmark_period(e->f, 20000000LL);
    json_t *o = cm("ns", "i1", "x");
    assert_int_equal(gr_kube_fake_seed(e->f, &GR_KUBE_CONFIGMAPS, o, &err), GR_OK);
    seen s = {0};
    gr_kube_informer_opts io = {.gvr = GR_KUBE_CONFIGMAPS,
                                .ns = "ns",
                                .label_selector = "app=x",
                                .handlers = {s_add, s_upd, s_del, &s},
                                .backoff_initial_ns = 10000000LL,
                                .backoff_max_ns = 50000000LL};
    gr_kube_informer *inf = NULL;
    assert_int_equal(gr_kube_informer_new(e->c, &io, &inf, &err), GR_OK);
    assert_int_equal(gr_kube_informer_start(inf, &err), GR_OK);
    assert_int_equal(gr_kube_informer_wait_synced(inf, 60000000000LL, &err), GR_OK);
    assert_true(wait_for(&s.add, 1));
    /* a label change out of the selector is a delete for this watch */
    json_t *cur = gr_kube_fake_get(e->f, &GR_KUBE_CONFIGMAPS, "ns", "i1");
    json_object_set_new(json_object_get(json_object_get(cur, "metadata"), "labels"), "app",
                        json_string("y"));
    assert_int_equal(gr_kube_update(e->c, &GR_KUBE_CONFIGMAPS, "ns", cur, NULL, NULL, NULL, &err),
                     GR_OK);
    assert_true(wait_for(&s.del, 1));
    json_decref(cur);
    /* history compacted and streams closed: the informer relists (410) and
     * still sees a new object */
    gr_kube_fake_compact(e->f);
    gr_kube_fake_close_watches(e->f);
    json_t *o2 = cm("ns", "i2", "x");
    assert_int_equal(gr_kube_create(e->c, &GR_KUBE_CONFIGMAPS, "ns", o2, NULL, NULL, NULL, &err),
                     GR_OK);
    assert_true(wait_for(&s.add, 2));
    gr_kube_informer_stats stats;
    for (int i = 0; i < 1200; i++) {
        gr_kube_informer_stats_get(inf, &stats);
        if (stats.bookmarks > 0)
            break;
        gr_kube_sleep_ns(50000000LL, NULL);
    }
    assert_true(stats.bookmarks > 0);
    assert_int_equal(gr_kube_store_len(gr_kube_informer_store(inf)), 1); /* i1 left the selector */
    gr_kube_informer_stop(inf);
    gr_kube_informer_free(inf);
    json_decref(o2);
    json_decref(o);
}

static void test_seed_yaml_and_bad_input(void **state)
{
    env *e = *state;
    gr_err err;
    assert_int_equal(gr_kube_fake_seed_yaml(e->f,
                                            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "
                                            "y1\n  namespace: ns\n---\napiVersion: example.com/v1\n"
                                            "kind: Widget\nmetadata:\n  name: w1\n",
                                            &err),
                     GR_OK);
    json_t *w = gr_kube_fake_get(e->f, &WIDGETS, "default", "w1");
    assert_non_null(w);
    json_decref(w);
    assert_int_equal(
        gr_kube_fake_seed_yaml(e->f, "apiVersion: x/v1\nkind: Nope\nmetadata: {}\n", &err),
        GR_EINVAL);
    assert_non_null(strstr(err.msg, "not registered"));
    /* garbage bodies and paths never crash */
    gr_buf b = GR_BUF_INIT(1 << 16);
    long http = 0;
    assert_int_equal(gr_kube_request(e->c, "POST", "/api/v1/namespaces/ns/configmaps",
                                     "application/json", "{not json", 9, NULL, &b, &http, NULL,
                                     &err),
                     GR_EINVAL);
    assert_int_equal(http, 400);
    assert_int_equal(gr_kube_request(e->c, "GET", "/api/v1/a/b/c/d/e/f/g/h/i/j/k/l", NULL, NULL, 0,
                                     NULL, &b, &http, NULL, &err),
                     GR_ENOTFOUND);
    gr_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_crud_conflict_and_status_bodies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_selectors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_subresource_and_generation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalizers_and_gc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_injection_and_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discovery, setup, teardown),
        cmocka_unit_test_setup_teardown(test_informer_runs_on_fake, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seed_yaml_and_bad_input, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
