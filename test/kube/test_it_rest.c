/* Integration (real kube-apiserver): REST verbs on a CRD with a status
 * subresource, typed errors, conflicts retried, Forbidden vs allowed through
 * SelfSubjectAccessReview with the low-privilege identity, discovery/mapper
 * refresh, events aggregation, validator messages equal the server's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "gr_kube_discovery.h"
#include "gr_kube_helpers.h"
#include "gr_kube_validate.h"
#include "gr_kube_watch.h"
#include "it_common.h"

static gr_kube_client *admin;
static char ns[128];

static const gr_kube_gvr WIDGETS = {"kube-it.gpuready.dev", "v1", "widgets"};

static const char *CRD =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"widgets.kube-it.gpuready.dev\"},\"spec\":{\"group\":"
    "\"kube-it.gpuready.dev\",\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\","
    "\"singular\":\"widget\",\"kind\":\"Widget\",\"listKind\":\"WidgetList\"},\"versions\":[{"
    "\"name\":\"v1\",\"served\":true,\"storage\":true,\"subresources\":{\"status\":{}},"
    "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":"
    "\"object\",\"properties\":{\"size\":{\"type\":\"integer\"},\"tags\":{\"type\":\"array\","
    "\"items\":{\"type\":\"string\"}}}},\"status\":{\"type\":\"object\","
    "\"x-kubernetes-preserve-unknown-fields\":true}}}}}]}}";

static int setup(void **state)
{
    (void)state;
    admin = it_client("kubeconfig", -1);
    if (!admin || it_ns_create(admin, "kube-it-rest", ns, sizeof ns) != GR_OK)
        return -1;
    json_t *crd = json_loads(CRD, 0, NULL);
    gr_err err;
    gr_kube_status st;
    gr_kube_opts o = {0};
    o.field_manager = "kube-it";
    o.force = true;
    int rc = gr_kube_apply(admin, &GR_KUBE_CRDS, NULL, crd, &o, NULL, &st, &err);
    json_decref(crd);
    if (rc != GR_OK) {
        fprintf(stderr, "apply CRD: %s\n", err.msg);
        return -1;
    }
    /* wait until Established (20 s, scaled to load) */
    int tries = gr_test_scaled_tries(20, 200);
    for (int i = 0; i < tries; i++) {
        json_t *got = NULL;
        if (gr_kube_get(admin, &GR_KUBE_CRDS, NULL, "widgets.kube-it.gpuready.dev", NULL, &got, &st,
                        &err) == GR_OK &&
            gr_kube_condition_is_true(json_object_get(json_object_get(got, "status"), "conditions"),
                                      "Established")) {
            json_decref(got);
            it_sleep_ms(500);
            return 0;
        }
        json_decref(got);
        it_sleep_ms(200);
    }
    fprintf(stderr, "CRD not established\n");
    return -1;
}

static int teardown(void **state)
{
    (void)state;
    if (admin) {
        it_ns_delete(admin, ns);
        gr_kube_client_free(admin);
    }
    return 0;
}

static json_t *widget(const char *name, int size, const char *tier)
{
    return json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:i}}", "apiVersion", "kube-it.gpuready.dev/v1",
                     "kind", "Widget", "metadata", "name", name, "labels", "tier", tier, "spec",
                     "size", size);
}

static void test_crud_crd_with_status(void **state)
{
    (void)state;
    gr_err err;
    gr_kube_status st;
    json_t *out = NULL;
    /* create + AlreadyExists */
    json_t *w = widget("w1", 1, "gold");
    assert_int_equal(gr_kube_create(admin, &WIDGETS, ns, w, NULL, &out, &st, &err), GR_OK);
    assert_non_null(gr_kube_obj_meta(out, "resourceVersion"));
    json_decref(out);
    assert_int_equal(gr_kube_create(admin, &WIDGETS, ns, w, NULL, NULL, &st, &err), GR_ECONFLICT);
    assert_int_equal(st.reason, GR_KUBE_REASON_ALREADY_EXISTS);
    assert_int_equal(st.http_code, 409);
    json_decref(w);
    /* get + NotFound */
    assert_int_equal(gr_kube_get(admin, &WIDGETS, ns, "nope", NULL, &out, &st, &err), GR_ENOTFOUND);
    assert_int_equal(st.reason, GR_KUBE_REASON_NOT_FOUND);
    assert_non_null(strstr(err.msg, "404 NotFound"));
    assert_int_equal(gr_kube_get(admin, &WIDGETS, ns, "w1", NULL, &out, &st, &err), GR_OK);
    /* update spec; the status sent with a main-resource PUT is ignored */
    json_object_set_new(json_object_get(out, "spec"), "size", json_integer(2));
    json_object_set_new(out, "status", json_pack("{s:s}", "phase", "Ignored"));
    json_t *upd = NULL;
    assert_int_equal(gr_kube_update(admin, &WIDGETS, ns, out, NULL, &upd, &st, &err), GR_OK);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(upd, "spec"), "size")), 2);
    assert_null(json_object_get(json_object_get(upd, "status"), "phase"));
    /* stale update: Conflict */
    assert_int_equal(gr_kube_update(admin, &WIDGETS, ns, out, NULL, NULL, &st, &err), GR_ECONFLICT);
    assert_int_equal(st.reason, GR_KUBE_REASON_CONFLICT);
    json_decref(out);
    /* status subresource */
    gr_kube_condition_set(upd, "Ready", "True", "Built", "ok", 1, gr_kube_now_ns(), NULL, &err);
    json_object_set_new(json_object_get(upd, "status"), "phase", json_string("Running"));
    json_t *s2 = NULL;
    assert_int_equal(gr_kube_update_status(admin, &WIDGETS, ns, upd, NULL, &s2, &st, &err), GR_OK);
    assert_string_equal(json_string_value(json_object_get(json_object_get(s2, "status"), "phase")),
                        "Running");
    json_decref(upd);
    json_decref(s2);
    /* patches: merge, JSON Patch, server-side apply with fieldManager + force */
    json_t *mp = json_pack("{s:{s:i}}", "spec", "size", 5);
    assert_int_equal(
        gr_kube_patch(admin, &WIDGETS, ns, "w1", GR_KUBE_PATCH_MERGE, mp, NULL, &out, &st, &err),
        GR_OK);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(out, "spec"), "size")), 5);
    json_decref(out);
    json_decref(mp);
    json_t *jp = json_pack("[{s:s,s:s,s:i},{s:s,s:s,s:[s]}]", "op", "test", "path", "/spec/size",
                           "value", 5, "op", "add", "path", "/spec/tags", "value", "a");
    assert_int_equal(
        gr_kube_patch(admin, &WIDGETS, ns, "w1", GR_KUBE_PATCH_JSON, jp, NULL, &out, &st, &err),
        GR_OK);
    json_decref(out);
    json_decref(jp);
    json_t *bad = json_pack("[{s:s,s:s,s:i}]", "op", "test", "path", "/spec/size", "value", 99);
    assert_int_not_equal(
        gr_kube_patch(admin, &WIDGETS, ns, "w1", GR_KUBE_PATCH_JSON, bad, NULL, NULL, &st, &err),
        GR_OK);
    json_decref(bad);
    json_t *ap = widget("w1", 7, "gold");
    gr_kube_opts ao = {0};
    ao.field_manager = "other-manager";
    assert_int_equal(gr_kube_apply(admin, &WIDGETS, ns, ap, &ao, NULL, &st, &err), GR_ECONFLICT);
    assert_int_equal(st.reason, GR_KUBE_REASON_CONFLICT); /* field owned by another manager */
    assert_true(st.ncauses >= 1);
    ao.force = true;
    assert_int_equal(gr_kube_apply(admin, &WIDGETS, ns, ap, &ao, &out, &st, &err), GR_OK);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(out, "spec"), "size")), 7);
    json_decref(out);
    json_decref(ap);
    /* strategic merge patch on a built-in kind */
    json_t *cm = json_pack("{s:s,s:s,s:{s:s},s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                           "metadata", "name", "c1", "data", "a", "1");
    assert_int_equal(gr_kube_create(admin, &GR_KUBE_CONFIGMAPS, ns, cm, NULL, NULL, &st, &err),
                     GR_OK);
    json_t *smp = json_pack("{s:{s:s}}", "data", "b", "2");
    assert_int_equal(gr_kube_patch(admin, &GR_KUBE_CONFIGMAPS, ns, "c1", GR_KUBE_PATCH_STRATEGIC,
                                   smp, NULL, &out, &st, &err),
                     GR_OK);
    assert_int_equal(json_object_size(json_object_get(out, "data")), 2);
    json_decref(out);
    json_decref(smp);
    json_decref(cm);
    /* delete with preconditions */
    gr_kube_opts d = {0};
    d.precondition_uid = "00000000-0000-0000-0000-000000000000";
    assert_int_equal(gr_kube_delete(admin, &WIDGETS, ns, "w1", &d, NULL, &st, &err), GR_ECONFLICT);
    assert_int_equal(st.reason, GR_KUBE_REASON_CONFLICT);
    d.precondition_uid = NULL;
    d.propagation = "Foreground";
    assert_int_equal(gr_kube_delete(admin, &WIDGETS, ns, "w1", &d, NULL, &st, &err), GR_OK);
    /* Invalid: the server's causes */
    json_t *inv = widget("Bad_Name", 1, "gold");
    assert_int_equal(gr_kube_create(admin, &WIDGETS, ns, inv, NULL, NULL, &st, &err), GR_EINVAL);
    assert_int_equal(st.reason, GR_KUBE_REASON_INVALID);
    assert_true(st.ncauses >= 1);
    assert_string_equal(st.causes[0].field, "metadata.name");
    json_decref(inv);
    /* pod logs of a pod that does not exist: typed NotFound */
    gr_buf logs = GR_BUF_INIT(1 << 20);
    gr_kube_log_opts lo = {0};
    lo.tail_lines = 10;
    lo.limit_bytes = 1000;
    assert_int_equal(gr_kube_pod_logs(admin, ns, "nope", &lo, &logs, &st, &err), GR_ENOTFOUND);
    gr_buf_free(&logs);
}

static void test_list_selectors_pagination(void **state)
{
    (void)state;
    gr_err err;
    gr_kube_status st;
    char name[32];
    for (int i = 0; i < 7; i++) {
        snprintf(name, sizeof name, "p%d", i);
        json_t *w = widget(name, i, i % 2 ? "odd" : "even");
        assert_int_equal(gr_kube_create(admin, &WIDGETS, ns, w, NULL, NULL, &st, &err), GR_OK);
        json_decref(w);
    }
    gr_kube_opts o = {0};
    o.limit = 2;
    o.label_selector = "tier in (odd,even)";
    json_t *page = NULL;
    assert_int_equal(gr_kube_list(admin, &WIDGETS, ns, &o, &page, &st, &err), GR_OK);
    assert_int_equal(json_array_size(json_object_get(page, "items")), 2);
    assert_non_null(gr_kube_list_continue(page));
    json_decref(page);
    json_t *all = NULL;
    int lrc = gr_kube_list_all(admin, &WIDGETS, ns, &o, &all, &st, &err);
    if (lrc)
        fprintf(stderr, "list_all: %s\n", err.msg);
    assert_int_equal(lrc, GR_OK);
    assert_int_equal(json_array_size(json_object_get(all, "items")), 7);
    json_decref(all);
    o.label_selector = "tier=odd";
    o.limit = 0;
    assert_int_equal(gr_kube_list(admin, &WIDGETS, ns, &o, &all, &st, &err), GR_OK);
    assert_int_equal(json_array_size(json_object_get(all, "items")), 3);
    json_decref(all);
    gr_kube_opts f = {0};
    f.field_selector = "metadata.name=p3";
    assert_int_equal(gr_kube_list(admin, &WIDGETS, ns, &f, &all, &st, &err), GR_OK);
    assert_int_equal(json_array_size(json_object_get(all, "items")), 1);
    json_decref(all);
    gr_kube_opts bad = {0};
    bad.label_selector = "a in (";
    assert_int_equal(gr_kube_list(admin, &WIDGETS, ns, &bad, &all, &st, &err), GR_EINVAL);
    assert_int_equal(st.reason, GR_KUBE_REASON_BAD_REQUEST);
}

typedef struct race {
    int calls;
} race;

/* Mutate that races with another writer on its first call, so the first
 * PUT conflicts and the helper must retry. */
static int bump(json_t *obj, void *ctx, gr_err *err)
{
    (void)err;
    race *r = ctx;
    if (r->calls++ == 0) {
        json_t *p = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", "racer", "was here");
        gr_kube_status st;
        gr_err e;
        gr_kube_patch(admin, &WIDGETS, ns, "p0", GR_KUBE_PATCH_MERGE, p, NULL, NULL, &st, &e);
        json_decref(p);
    }
    json_t *spec = json_object_get(obj, "spec");
    json_object_set_new(spec, "size",
                        json_integer(json_integer_value(json_object_get(spec, "size")) + 100));
    return GR_OK;
}

static void test_update_conflict_retried(void **state)
{
    (void)state;
    gr_err err;
    gr_kube_status st;
    race r = {0};
    json_t *out = NULL;
    int attempts = 0;
    assert_int_equal(
        gr_kube_update_retry(admin, &WIDGETS, ns, "p0", NULL, bump, &r, &out, &attempts, &st, &err),
        GR_OK);
    assert_int_equal(attempts, 2);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(out, "spec"), "size")),
                     100);
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(out, "metadata"), "annotations"), "racer")),
        "was here"); /* the racer's write survived */
    json_decref(out);
}

static void test_forbidden_vs_allowed(void **state)
{
    (void)state;
    gr_kube_client *low = it_client("kubeconfig-lowpriv", -1);
    assert_non_null(low);
    gr_err err;
    gr_kube_status st;
    gr_kube_access a = {"create", "", "configmaps", NULL, ns, NULL};
    bool allowed = true;
    char reason[256];
    assert_int_equal(gr_kube_can_i(low, &a, &allowed, reason, sizeof reason, &st, &err), GR_OK);
    assert_false(allowed);
    json_t *cm = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap", "metadata",
                           "name", "low");
    assert_int_equal(gr_kube_create(low, &GR_KUBE_CONFIGMAPS, ns, cm, NULL, NULL, &st, &err),
                     GR_EPERM);
    assert_int_equal(st.reason, GR_KUBE_REASON_FORBIDDEN);
    assert_int_equal(st.http_code, 403);
    /* grant it, then the review and the write agree */
    static const gr_kube_gvr roles = {"rbac.authorization.k8s.io", "v1", "roles"};
    static const gr_kube_gvr bindings = {"rbac.authorization.k8s.io", "v1", "rolebindings"};
    json_t *role =
        json_pack("{s:s,s:s,s:{s:s},s:[{s:[s],s:[s],s:[s]}]}", "apiVersion",
                  "rbac.authorization.k8s.io/v1", "kind", "Role", "metadata", "name", "cm-writer",
                  "rules", "apiGroups", "", "resources", "configmaps", "verbs", "create");
    json_t *rb = json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:s,s:s},s:[{s:s,s:s,s:s}]}", "apiVersion",
                           "rbac.authorization.k8s.io/v1", "kind", "RoleBinding", "metadata",
                           "name", "cm-writer", "roleRef", "apiGroup", "rbac.authorization.k8s.io",
                           "kind", "Role", "name", "cm-writer", "subjects", "kind", "User", "name",
                           "gr-lowpriv", "apiGroup", "rbac.authorization.k8s.io");
    assert_int_equal(gr_kube_create(admin, &roles, ns, role, NULL, NULL, &st, &err), GR_OK);
    assert_int_equal(gr_kube_create(admin, &bindings, ns, rb, NULL, NULL, &st, &err), GR_OK);
    /* RBAC propagates asynchronously (PF-131); 10 s, scaled to load */
    int tries = gr_test_scaled_tries(10, 200);
    for (int i = 0; i < tries && !allowed; i++) {
        assert_int_equal(gr_kube_can_i(low, &a, &allowed, reason, sizeof reason, &st, &err), GR_OK);
        if (!allowed)
            it_sleep_ms(200);
    }
    assert_true(allowed);
    assert_int_equal(gr_kube_create(low, &GR_KUBE_CONFIGMAPS, ns, cm, NULL, NULL, &st, &err),
                     GR_OK);
    gr_kube_access del = {"delete", "", "configmaps", NULL, ns, "low"};
    assert_int_equal(gr_kube_can_i(low, &del, &allowed, NULL, 0, &st, &err), GR_OK);
    assert_false(allowed);
    json_decref(role);
    json_decref(rb);
    json_decref(cm);
    gr_kube_client_free(low);
}

static void test_discovery_mapper(void **state)
{
    (void)state;
    gr_kube_mapper *m;
    gr_err err;
    assert_int_equal(gr_kube_mapper_new(admin, &m, &err), GR_OK);
    gr_kube_mapping mp;
    /* empty mapper: the first lookup discovers by itself */
    assert_int_equal(gr_kube_mapper_api_version_kind(m, "v1", "Pod", &mp, &err), GR_OK);
    assert_string_equal(mp.resource, "pods");
    assert_true(mp.namespaced);
    assert_int_equal(gr_kube_mapper_kind(m, "apps", NULL, "Deployment", &mp, &err), GR_OK);
    assert_string_equal(mp.version, "v1");
    assert_int_equal(gr_kube_mapper_resource(m, "", "v1", "nodes", &mp, &err), GR_OK);
    assert_false(mp.namespaced);
    assert_int_equal(gr_kube_mapper_kind(m, "kube-it.gpuready.dev", NULL, "Widget", &mp, &err),
                     GR_OK);
    assert_string_equal(mp.resource, "widgets");
    assert_int_equal(gr_kube_mapper_kind(m, "nope.io", NULL, "Nope", &mp, &err), GR_ENOTFOUND);
    gr_kube_mapper_free(m);
}

static void test_events_aggregated(void **state)
{
    (void)state;
    gr_err err;
    gr_kube_status st;
    json_t *w = NULL;
    assert_int_equal(gr_kube_get(admin, &WIDGETS, ns, "p1", NULL, &w, &st, &err), GR_OK);
    gr_kube_recorder *r;
    assert_int_equal(gr_kube_recorder_new(admin, "gpuready.dev/kube-it", "it-1", &r, &err), GR_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(
            gr_kube_record(r, w, "Warning", "SizeTooSmall", "Check", "size 1 < 2", &err), GR_OK);
    json_t *evs = NULL;
    gr_kube_opts o = {0};
    o.field_selector = "regarding.name=p1";
    assert_int_equal(gr_kube_list(admin, &GR_KUBE_EVENTS, ns, &o, &evs, &st, &err), GR_OK);
    assert_int_equal(json_array_size(json_object_get(evs, "items")), 1);
    json_t *ev = json_array_get(json_object_get(evs, "items"), 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(ev, "series"), "count")),
                     3);
    json_decref(evs);
    json_decref(w);
    gr_kube_recorder_free(r);
}

/* The validators' messages equal the API server's own (labels on a
 * ConfigMap are validated by apimachinery's ValidateLabels). */
static void test_validator_messages_match_server(void **state)
{
    (void)state;
    static const char *keys[] = {"a/b/c", "-bad", "/x", "Bad_Prefix/x"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_t *cm = json_pack("{s:s,s:s,s:{s:s,s:{s:s}}}", "apiVersion", "v1", "kind", "ConfigMap",
                               "metadata", "name", "lbl", "labels", keys[i], "v");
        gr_err err, mine;
        gr_kube_status st;
        assert_int_equal(gr_kube_create(admin, &GR_KUBE_CONFIGMAPS, ns, cm, NULL, NULL, &st, &err),
                         GR_EINVAL);
        assert_int_equal(
            gr_kube_validate_labels(json_object_get(json_object_get(cm, "metadata"), "labels"),
                                    NULL, &mine),
            GR_EINVAL);
        bool found = false;
        for (size_t k = 0; k < st.ncauses; k++) {
            char full[2048];
            snprintf(full, sizeof full, "%s: %s", st.causes[k].field, st.causes[k].message);
            if (strcmp(full, mine.msg) == 0)
                found = true;
        }
        if (!found) {
            fprintf(stderr, "mine:   %s\n", mine.msg);
            for (size_t k = 0; k < st.ncauses; k++)
                fprintf(stderr, "server: %s: %s\n", st.causes[k].field, st.causes[k].message);
        }
        assert_true(found);
        json_decref(cm);
    }
}

int main(void)
{
    int skip = it_skip();
    if (skip)
        return skip;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crud_crd_with_status),
        cmocka_unit_test(test_list_selectors_pagination),
        cmocka_unit_test(test_update_conflict_retried),
        cmocka_unit_test(test_forbidden_vs_allowed),
        cmocka_unit_test(test_discovery_mapper),
        cmocka_unit_test(test_events_aggregated),
        cmocka_unit_test(test_validator_messages_match_server),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
