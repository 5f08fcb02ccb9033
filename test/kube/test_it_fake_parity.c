/* Parity of the in-memory fake (gr_kube_fake) with the real API server: the
 * same scripted sequence of requests runs on both, and every observable the
 * controllers rely on is compared — result codes, HTTP codes, Status
 * reasons and messages, generateName, no-op writes keeping the
 * resourceVersion, the status subresource, generation, finalizers and
 * deletionTimestamp, label selectors, delete preconditions. A difference is
 * printed step by step. Real control plane: gr_cluster fixture. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gr_kube_fake.h"
#include "gr_kube_rest.h"
#include "gr_kube_watch.h"
#include "gr_yaml.h"
#include "it_common.h"
#include "kube_internal.h"

static const gr_kube_gvr PG = {"scheduling.run.ai", "v2alpha2", "podgroups"};

static void rec(json_t *log, const char *step, int rc, const gr_kube_status *st, bool with_msg,
                json_t *extra)
{
    json_t *e = json_pack("{s:s,s:s}", "step", step, "rc", gr_rc_name(rc));
    if (rc != GR_OK) {
        json_object_set_new(e, "http", json_integer(st->http_code));
        json_object_set_new(e, "reason", json_string(st->reason_str));
        if (with_msg)
            json_object_set_new(e, "message", json_string(st->message));
    }
    if (extra)
        json_object_set_new(e, "observed", extra);
    json_array_append_new(log, e);
}

static json_t *cm(const char *name, const char *app)
{
    return json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                     "metadata", "name", name, "labels", "app", app, "data", "k", "v");
}

static const char *rv_of(const json_t *o)
{
    return gr_kube_obj_meta(o, "resourceVersion");
}

static json_int_t gen_of(const json_t *o)
{
    return json_integer_value(json_object_get(json_object_get(o, "metadata"), "generation"));
}

static const char *list_rv(const json_t *list)
{
    return json_string_value(json_object_get(json_object_get(list, "metadata"), "resourceVersion"));
}

/* "TYPE name" of each event, bookmarks left out; stops after 4. */
static int collect_event(void *ctx, const gr_kube_watch_event *ev)
{
    json_t *seen = ctx;
    if (ev->type == GR_KUBE_EV_BOOKMARK)
        return 0;
    char b[300];
    snprintf(b, sizeof b, "%s %s", gr_kube_event_type_name(ev->type),
             gr_kube_obj_meta(ev->object, "name") ? gr_kube_obj_meta(ev->object, "name") : "");
    json_array_append_new(seen, json_string(b));
    return json_array_size(seen) >= 4;
}

static void scenario(gr_kube_client *c, const char *ns, json_t *log)
{
    gr_kube_status st;
    gr_err err;
    json_t *out = NULL, *o = NULL;
    int rc;

    o = cm("a", "x");
    rc = gr_kube_create(c, &GR_KUBE_CONFIGMAPS, ns, o, NULL, &out, &st, &err);
    rec(log, "create", rc, &st, true,
        json_pack("{s:b}", "uid", gr_kube_obj_meta(out, "uid") != NULL));
    rc = gr_kube_create(c, &GR_KUBE_CONFIGMAPS, ns, o, NULL, NULL, &st, &err);
    rec(log, "create again", rc, &st, true, NULL);
    json_decref(o);
    rc = gr_kube_get(c, &GR_KUBE_CONFIGMAPS, ns, "nope", NULL, &o, &st, &err);
    rec(log, "get missing", rc, &st, true, NULL);

    json_t *stale = json_deep_copy(out);
    json_object_set_new(json_object_get(out, "data"), "k", json_string("v2"));
    json_t *upd = NULL;
    rc = gr_kube_update(c, &GR_KUBE_CONFIGMAPS, ns, out, NULL, &upd, &st, &err);
    rec(log, "update", rc, &st, true, NULL);
    json_object_set_new(json_object_get(stale, "data"), "k", json_string("v3"));
    rc = gr_kube_update(c, &GR_KUBE_CONFIGMAPS, ns, stale, NULL, NULL, &st, &err);
    rec(log, "update stale", rc, &st, true, NULL);
    json_t *same = NULL;
    rc = gr_kube_update(c, &GR_KUBE_CONFIGMAPS, ns, upd, NULL, &same, &st, &err);
    rec(log, "update no-op", rc, &st, true,
        json_pack("{s:b}", "rv kept",
                  rv_of(same) && rv_of(upd) && strcmp(rv_of(same), rv_of(upd)) == 0));
    json_decref(same);
    json_decref(stale);
    json_decref(upd);
    json_decref(out);
    out = NULL;

    o = json_pack("{s:{s:s}}", "metadata", "generateName", "gen-");
    rc = gr_kube_create(c, &GR_KUBE_CONFIGMAPS, ns, o, NULL, &out, &st, &err);
    const char *gn = gr_kube_obj_meta(out, "name");
    rec(log, "generateName", rc, &st, true,
        json_pack("{s:b,s:i}", "prefix", gn && strncmp(gn, "gen-", 4) == 0, "length",
                  gn ? (int)strlen(gn) : 0));
    json_decref(o);
    json_decref(out);

    json_t *b = cm("b", "y"), *d = cm("d", "z");
    gr_kube_create(c, &GR_KUBE_CONFIGMAPS, ns, b, NULL, NULL, &st, &err);
    gr_kube_create(c, &GR_KUBE_CONFIGMAPS, ns, d, NULL, NULL, &st, &err);
    json_decref(b);
    json_decref(d);
    gr_kube_opts q = {.label_selector = "app in (x,z)"};
    rc = gr_kube_list(c, &GR_KUBE_CONFIGMAPS, ns, &q, &out, &st, &err);
    rec(log, "list in", rc, &st, true,
        json_pack("{s:i}", "items", (int)json_array_size(json_object_get(out, "items"))));
    json_decref(out);
    q.label_selector = "app!=x,app";
    rc = gr_kube_list(c, &GR_KUBE_CONFIGMAPS, ns, &q, &out, &st, &err);
    rec(log, "list notequal", rc, &st, true,
        json_pack("{s:i}", "items", (int)json_array_size(json_object_get(out, "items"))));
    json_decref(out);

    gr_kube_opts fq = {.field_selector = "metadata.name=b"};
    rc = gr_kube_list(c, &GR_KUBE_CONFIGMAPS, ns, &fq, &out, &st, &err);
    rec(log, "list field selector", rc, &st, true,
        json_pack("{s:i}", "items", (int)json_array_size(json_object_get(out, "items"))));
    json_decref(out);
    gr_kube_gvr missing = {"nope.example.com", "v1", "things"};
    rc = gr_kube_list(c, &missing, ns, NULL, &out, &st, &err);
    rec(log, "list unserved resource", rc, &st, true, NULL);
    rc = gr_kube_get(c, &missing, ns, "x", NULL, &out, &st, &err);
    rec(log, "get unserved resource", rc, &st, true, NULL);

    /* a custom resource with a status subresource */
    json_t *pg = json_pack("{s:s,s:s,s:{s:s},s:{s:i,s:s},s:{s:s}}", "apiVersion",
                           "scheduling.run.ai/v2alpha2", "kind", "PodGroup", "metadata", "name",
                           "p", "spec", "minMember", 1, "queue", "q", "status", "phase", "Nope");
    rc = gr_kube_create(c, &PG, ns, pg, NULL, &out, &st, &err);
    rec(log, "cr create", rc, &st, true,
        json_pack("{s:b,s:I}", "status kept", json_object_get(out, "status") != NULL, "generation",
                  gen_of(out)));
    json_decref(pg);
    json_object_set_new(out, "status", json_pack("{s:s}", "phase", "Running"));
    json_object_set_new(json_object_get(out, "spec"), "minMember", json_integer(5));
    json_t *s2 = NULL;
    rc = gr_kube_update_status(c, &PG, ns, out, NULL, &s2, &st, &err);
    rec(log, "status update", rc, &st, true,
        json_pack("{s:I,s:O,s:I}", "minMember",
                  json_integer_value(json_object_get(json_object_get(s2, "spec"), "minMember")),
                  "status", json_object_get(s2, "status"), "generation", gen_of(s2)));
    json_object_set_new(json_object_get(s2, "spec"), "minMember", json_integer(3));
    json_object_set_new(s2, "status", json_pack("{s:s}", "phase", "Hacked"));
    json_t *s3 = NULL;
    rc = gr_kube_update(c, &PG, ns, s2, NULL, &s3, &st, &err);
    rec(log, "main update", rc, &st, true,
        json_pack("{s:O,s:I}", "status", json_object_get(s3, "status"), "generation", gen_of(s3)));
    json_t *mp = json_pack("{s:{s:s}}", "status", "phase", "Merged");
    gr_kube_opts so = {.subresource = "status"};
    json_t *p = NULL;
    rc = gr_kube_patch(c, &PG, ns, "p", GR_KUBE_PATCH_MERGE, mp, &so, &p, &st, &err);
    rec(log, "status merge patch", rc, &st, true,
        json_pack("{s:O,s:I}", "status", json_object_get(p, "status"), "generation", gen_of(p)));
    json_decref(p);
    json_decref(mp);
    json_t *jp =
        json_pack("[{s:s,s:s,s:i}]", "op", "replace", "path", "/spec/minMember", "value", 4);
    rc = gr_kube_patch(c, &PG, ns, "p", GR_KUBE_PATCH_JSON, jp, NULL, &p, &st, &err);
    rec(log, "json patch", rc, &st, true, json_pack("{s:I}", "generation", gen_of(p)));
    json_decref(p);
    json_decref(jp);
    json_t *mrv = json_pack("{s:{s:s},s:{s:s}}", "metadata", "resourceVersion", "1", "spec",
                            "queue", "other");
    rc = gr_kube_patch(c, &PG, ns, "p", GR_KUBE_PATCH_MERGE, mrv, NULL, NULL, &st, &err);
    rec(log, "merge patch stale rv", rc, &st, false, NULL);
    json_decref(mrv);
    json_decref(s3);
    json_decref(s2);
    json_decref(out);

    /* finalizers */
    json_t *f = json_pack("{s:{s:s,s:[s]},s:{s:i}}", "metadata", "name", "f", "finalizers",
                          "example.com/keep", "spec", "minMember", 1);
    rc = gr_kube_create(c, &PG, ns, f, NULL, NULL, &st, &err);
    rec(log, "cr create without kind", rc, &st, true, NULL);
    json_object_set_new(f, "apiVersion", json_string("scheduling.run.ai/v2alpha2"));
    json_object_set_new(f, "kind", json_string("PodGroup"));
    rc = gr_kube_create(c, &PG, ns, f, NULL, NULL, &st, &err);
    rec(log, "create with finalizer", rc, &st, true, NULL);
    json_decref(f);
    json_t *del = NULL;
    rc = gr_kube_delete(c, &PG, ns, "f", NULL, &del, &st, &err);
    rec(log, "delete with finalizer", rc, &st, true,
        json_pack("{s:b}", "deletionTimestamp",
                  gr_kube_obj_meta(del, "deletionTimestamp") != NULL));
    json_decref(del);
    rc = gr_kube_get(c, &PG, ns, "f", NULL, &out, &st, &err);
    rec(log, "still there", rc, &st, true,
        json_pack("{s:b}", "deleting", gr_kube_obj_meta(out, "deletionTimestamp") != NULL));
    json_array_append_new(json_object_get(json_object_get(out, "metadata"), "finalizers"),
                          json_string("example.com/another"));
    rc = gr_kube_update(c, &PG, ns, out, NULL, NULL, &st, &err);
    rec(log, "new finalizer while deleting", rc, &st, false, NULL);
    json_decref(out);
    rc = gr_kube_get(c, &PG, ns, "f", NULL, &out, &st, &err);
    json_object_set_new(json_object_get(out, "metadata"), "finalizers", json_array());
    rc = gr_kube_update(c, &PG, ns, out, NULL, NULL, &st, &err);
    rec(log, "last finalizer removed", rc, &st, true, NULL);
    json_decref(out);
    rc = gr_kube_get(c, &PG, ns, "f", NULL, &out, &st, &err);
    rec(log, "gone", rc, &st, true, NULL);

    /* a watch with a label selector, from a list's version: objects moving
     * in and out of the selector are ADDED/DELETED for this watcher */
    gr_kube_opts wq = {.label_selector = "app=w"};
    rc = gr_kube_list(c, &GR_KUBE_CONFIGMAPS, ns, &wq, &out, &st, &err);
    char rv[64] = "";
    if (rc == GR_OK && list_rv(out))
        snprintf(rv, sizeof rv, "%s", list_rv(out));
    json_decref(out);
    json_t *w = cm("w1", "w");
    gr_kube_create(c, &GR_KUBE_CONFIGMAPS, ns, w, NULL, NULL, &st, &err);
    json_decref(w);
    const char *moves[] = {"v", "w"};
    for (int i = 0; i < 2; i++) {
        gr_kube_get(c, &GR_KUBE_CONFIGMAPS, ns, "w1", NULL, &out, &st, &err);
        json_object_set_new(json_object_get(json_object_get(out, "metadata"), "labels"), "app",
                            json_string(moves[i]));
        gr_kube_update(c, &GR_KUBE_CONFIGMAPS, ns, out, NULL, NULL, &st, &err);
        json_decref(out);
    }
    w = cm("w2", "v"); /* never matches */
    gr_kube_create(c, &GR_KUBE_CONFIGMAPS, ns, w, NULL, NULL, &st, &err);
    json_decref(w);
    gr_kube_delete(c, &GR_KUBE_CONFIGMAPS, ns, "w1", NULL, NULL, &st, &err);
    json_t *seen = json_array();
    gr_kube_opts wo = {.label_selector = "app=w",
                       .resource_version = rv,
                       .timeout_seconds = 30,
                       .allow_bookmarks = true};
    /* stops after the 4 expected events; the timeout only bounds a server
     * that never sends them (generous for a loaded machine) */
    gr_kube_watch(c, &GR_KUBE_CONFIGMAPS, ns, &wo, 60, collect_event, seen, NULL, &st, &err);
    rec(log, "watch transitions", GR_OK, &st, false, seen);

    gr_kube_opts pre = {.precondition_uid = "00000000-0000-0000-0000-000000000000"};
    rc = gr_kube_delete(c, &GR_KUBE_CONFIGMAPS, ns, "a", &pre, NULL, &st, &err);
    rec(log, "delete precondition", rc, &st, false, NULL);
    rc = gr_kube_delete(c, &GR_KUBE_CONFIGMAPS, ns, "a", NULL, NULL, &st, &err);
    rec(log, "delete", rc, &st, true, NULL);
    rc = gr_kube_delete(c, &GR_KUBE_CONFIGMAPS, ns, "a", NULL, NULL, &st, &err);
    rec(log, "delete again", rc, &st, true, NULL);
}

static int install_crd(gr_kube_client *c)
{
    const char *src = getenv("GR_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/test/fixtures/crds/kai-podgroup.yaml", src ? src : ".");
    json_t *docs = NULL;
    gr_err err;
    if (gr_yaml_load_file(path, 0, &docs, &err) != GR_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    gr_kube_status st;
    int rc = gr_kube_create(c, &GR_KUBE_CRDS, NULL, json_array_get(docs, 0), NULL, NULL, &st, &err);
    json_decref(docs);
    if (rc != GR_OK && st.reason != GR_KUBE_REASON_ALREADY_EXISTS) {
        fprintf(stderr, "install CRD: %s\n", err.msg);
        return -1;
    }
    for (int i = 0; i < 1200; i++) { /* until served (generous bound for a loaded machine) */
        json_t *l = NULL;
        if (gr_kube_list(c, &PG, "default", NULL, &l, &st, &err) == GR_OK) {
            json_decref(l);
            return 0;
        }
        gr_kube_sleep_ns(100000000LL, NULL);
    }
    return -1;
}

static void test_parity(void **state)
{
    (void)state;
    gr_kube_client *real = it_client("kubeconfig", -1);
    assert_non_null(real);
    assert_int_equal(install_crd(real), 0);
    char ns[128];
    assert_int_equal(it_ns_create(real, "parity", ns, sizeof ns), GR_OK);

    gr_kube_fake *f = NULL;
    gr_kube_client *fc = NULL;
    gr_err err;
    assert_int_equal(gr_kube_fake_new(&f, &err), GR_OK);
    assert_int_equal(gr_kube_fake_add_resource(f, &PG, "PodGroup", true, true, &err), GR_OK);
    assert_int_equal(gr_kube_fake_client(f, &fc, &err), GR_OK);

    json_t *want = json_array(), *got = json_array();
    scenario(real, ns, want);
    scenario(fc, ns, got);
    size_t n = json_array_size(want);
    int diffs = 0;
    for (size_t i = 0; i < n || i < json_array_size(got); i++) {
        json_t *a = json_array_get(want, i), *b = json_array_get(got, i);
        if (!a || !b || !json_equal(a, b)) {
            char *sa = a ? json_dumps(a, JSON_COMPACT) : NULL;
            char *sb = b ? json_dumps(b, JSON_COMPACT) : NULL;
            printf("DIFF step %zu\n  real: %s\n  fake: %s\n", i + 1, sa ? sa : "-", sb ? sb : "-");
            free(sa);
            free(sb);
            diffs++;
        }
    }
    printf("%zu steps compared, %d differ\n", n, diffs);
    char *dump = json_dumps(want, JSON_COMPACT);
    printf("real server's answers: %s\n", dump ? dump : "");
    free(dump);
    json_decref(want);
    json_decref(got);
    it_ns_delete(real, ns);
    gr_kube_client_free(fc);
    gr_kube_fake_free(f);
    gr_kube_client_free(real);
    assert_int_equal(diffs, 0);
}

int main(void)
{
    int skip = it_skip();
    if (skip)
        return skip;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_parity)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
