/* Conditions, owner references, finalizers, event aggregation, lease
 * decisions, REST mapper parsing — all pure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gr_kube_discovery.h"
#include "gr_kube_helpers.h"
#include "gr_kube_leader.h"

#define T0  1700000000000000000LL /* 2023-11-14T22:13:20Z */
#define SEC 1000000000LL

static const char *cond_str(json_t *obj, const char *type, const char *field)
{
    json_t *c =
        gr_kube_condition_find(json_object_get(json_object_get(obj, "status"), "conditions"), type);
    return json_string_value(json_object_get(c, field));
}

static void test_conditions(void **state)
{
    (void)state;
    json_t *obj = json_pack("{s:{s:s,s:I}}", "metadata", "name", "x", "generation", (json_int_t)3);
    gr_err err;
    bool ch;
    assert_int_equal(
        gr_kube_condition_set(obj, "Ready", "False", "Waiting", "not yet", 3, T0, &ch, &err),
        GR_OK);
    assert_true(ch);
    assert_string_equal(cond_str(obj, "Ready", "lastTransitionTime"), "2023-11-14T22:13:20Z");
    /* same status, new message: lastTransitionTime stays */
    assert_int_equal(gr_kube_condition_set(obj, "Ready", "False", "StillWaiting", "soon", 4,
                                           T0 + 60 * SEC, &ch, &err),
                     GR_OK);
    assert_true(ch);
    assert_string_equal(cond_str(obj, "Ready", "lastTransitionTime"), "2023-11-14T22:13:20Z");
    assert_string_equal(cond_str(obj, "Ready", "reason"), "StillWaiting");
    json_t *c = gr_kube_condition_find(
        json_object_get(json_object_get(obj, "status"), "conditions"), "Ready");
    assert_int_equal(json_integer_value(json_object_get(c, "observedGeneration")), 4);
    /* identical: nothing changes */
    gr_kube_condition_set(obj, "Ready", "False", "StillWaiting", "soon", 4, T0 + 90 * SEC, &ch,
                          &err);
    assert_false(ch);
    /* status change: transition time moves */
    gr_kube_condition_set(obj, "Ready", "True", "Done", "", 4, T0 + 120 * SEC, &ch, &err);
    assert_string_equal(cond_str(obj, "Ready", "lastTransitionTime"), "2023-11-14T22:15:20Z");
    assert_true(gr_kube_condition_is_true(
        json_object_get(json_object_get(obj, "status"), "conditions"), "Ready"));
    assert_int_equal(gr_kube_condition_set(obj, "Ready", "Yes", "Done", "", 0, T0, &ch, &err),
                     GR_EINVAL);
    assert_int_equal(gr_kube_condition_set(obj, "Ready", "True", "not camel", "", 0, T0, &ch, &err),
                     GR_EINVAL);
    assert_true(gr_kube_condition_remove(obj, "Ready"));
    assert_false(gr_kube_condition_remove(obj, "Ready"));
    json_decref(obj);
}

static void test_owner_and_finalizers(void **state)
{
    (void)state;
    json_t *owner = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "apps/v1", "kind",
                              "Deployment", "metadata", "name", "d", "uid", "u-1");
    json_t *other = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                              "metadata", "name", "c", "uid", "u-2");
    json_t *obj = json_object();
    gr_err err;
    assert_int_equal(gr_kube_owner_ref_set(obj, owner, true, true, &err), GR_OK);
    assert_int_equal(gr_kube_owner_ref_set(obj, owner, true, false, &err), GR_OK); /* update */
    assert_int_equal(
        json_array_size(json_object_get(json_object_get(obj, "metadata"), "ownerReferences")), 1);
    assert_int_equal(gr_kube_owner_ref_set(obj, other, true, false, &err), GR_ECONFLICT);
    assert_int_equal(gr_kube_owner_ref_set(obj, other, false, false, &err), GR_OK);
    assert_true(gr_kube_is_owned_by(obj, "u-2"));
    assert_string_equal(json_string_value(json_object_get(gr_kube_controller_of(obj), "uid")),
                        "u-1");
    assert_true(gr_kube_finalizer_add(obj, "x.io/f"));
    assert_false(gr_kube_finalizer_add(obj, "x.io/f"));
    assert_true(gr_kube_finalizer_has(obj, "x.io/f"));
    assert_true(gr_kube_finalizer_remove(obj, "x.io/f"));
    assert_false(gr_kube_finalizer_has(obj, "x.io/f"));
    assert_false(gr_kube_is_deleting(obj));
    json_decref(owner);
    json_decref(other);
    json_decref(obj);
}

static void test_event_aggregation(void **state)
{
    (void)state;
    gr_kube_recorder *r;
    gr_err err;
    assert_int_equal(gr_kube_recorder_new(NULL, "gpuready.nvidia.com/test", "pod-1", &r, &err),
                     GR_OK);
    json_t *pod = json_pack("{s:s,s:s,s:{s:s,s:s,s:s}}", "apiVersion", "v1", "kind", "Pod",
                            "metadata", "name", "p", "namespace", "ns", "uid", "u");
    json_t *body;
    bool create;
    const char *name;
    assert_int_equal(gr_kube_recorder_plan(r, pod, "Warning", "CheckFailed", "Validate", "bad gpu",
                                           T0, &body, &create, &name, &err),
                     GR_OK);
    assert_true(create);
    assert_string_equal(json_string_value(json_object_get(body, "eventTime")),
                        "2023-11-14T22:13:20.000000Z");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(body, "regarding"), "uid")), "u");
    char first[300];
    strcpy(first, name);
    json_decref(body);
    /* the same event again: a series patch on the same Event */
    assert_int_equal(gr_kube_recorder_plan(r, pod, "Warning", "CheckFailed", "Validate", "bad gpu",
                                           T0 + 10 * SEC, &body, &create, &name, &err),
                     GR_OK);
    assert_false(create);
    assert_string_equal(name, first);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(body, "series"), "count")),
                     2);
    json_decref(body);
    /* a different note is a different event */
    gr_kube_recorder_plan(r, pod, "Warning", "CheckFailed", "Validate", "other", T0 + 11 * SEC,
                          &body, &create, &name, &err);
    assert_true(create);
    json_decref(body);
    /* after the series window: a fresh Event */
    gr_kube_recorder_plan(r, pod, "Warning", "CheckFailed", "Validate", "bad gpu", T0 + 600 * SEC,
                          &body, &create, &name, &err);
    assert_true(create);
    assert_string_not_equal(name, first);
    json_decref(body);
    assert_int_equal(
        gr_kube_recorder_plan(r, pod, "Bad", "X", "A", "", T0, &body, &create, &name, &err),
        GR_EINVAL);
    json_decref(pod);
    gr_kube_recorder_free(r);
}

static void test_lease_decisions(void **state)
{
    (void)state;
    gr_kube_lease_view v;
    memset(&v, 0, sizeof v);
    json_t *spec = gr_kube_lease_spec(NULL, "a", 15 * SEC, T0);
    assert_string_equal(json_string_value(json_object_get(spec, "holderIdentity")), "a");
    assert_int_equal(json_integer_value(json_object_get(spec, "leaseDurationSeconds")), 15);
    assert_int_equal(json_integer_value(json_object_get(spec, "leaseTransitions")), 0);
    assert_string_equal(json_string_value(json_object_get(spec, "renewTime")),
                        "2023-11-14T22:13:20.000000Z");
    int64_t m = 1000 * SEC; /* monotonic clock */
    gr_kube_lease_observe(&v, spec, m);
    assert_true(gr_kube_lease_can_acquire(&v, "a", m));
    assert_false(gr_kube_lease_can_acquire(&v, "b", m + 14 * SEC));
    /* the record stays unchanged: after the lease duration b may take over */
    gr_kube_lease_observe(&v, spec, m + 10 * SEC);
    assert_false(gr_kube_lease_can_acquire(&v, "b", m + 15 * SEC));
    assert_true(gr_kube_lease_can_acquire(&v, "b", m + 15 * SEC + 1));
    /* a renewal (record changed) restarts the clock */
    json_t *renewed = gr_kube_lease_spec(spec, "a", 15 * SEC, T0 + 2 * SEC);
    assert_string_equal(json_string_value(json_object_get(renewed, "acquireTime")),
                        "2023-11-14T22:13:20.000000Z"); /* kept */
    gr_kube_lease_observe(&v, renewed, m + 14 * SEC);
    assert_false(gr_kube_lease_can_acquire(&v, "b", m + 20 * SEC));
    json_t *taken = gr_kube_lease_spec(renewed, "b", 15 * SEC, T0 + 40 * SEC);
    assert_int_equal(json_integer_value(json_object_get(taken, "leaseTransitions")), 1);
    json_decref(spec);
    json_decref(renewed);
    json_decref(taken);
    /* a released lease (holder "") is free at once */
    json_t *rel = json_pack("{s:s,s:i}", "holderIdentity", "", "leaseDurationSeconds", 1);
    gr_kube_lease_observe(&v, rel, m + 30 * SEC);
    assert_true(gr_kube_lease_can_acquire(&v, "b", m + 30 * SEC));
    json_decref(rel);
}

static void test_mapper(void **state)
{
    (void)state;
    gr_kube_mapper *m;
    gr_err err;
    gr_kube_mapper_new(NULL, &m, &err);
    json_t *agg = json_loads(
        "{\"kind\":\"APIGroupDiscoveryList\",\"items\":[{\"metadata\":{\"name\":\"apps\"},"
        "\"versions\":[{\"version\":\"v1\",\"resources\":[{\"resource\":\"deployments\","
        "\"responseKind\":{\"group\":\"apps\",\"version\":\"v1\",\"kind\":\"Deployment\"},"
        "\"scope\":\"Namespaced\"}]},{\"version\":\"v1beta1\",\"resources\":[{\"resource\":"
        "\"deployments\",\"responseKind\":{\"kind\":\"Deployment\"},\"scope\":\"Namespaced\"}]}]}"
        ",{\"metadata\":{\"name\":\"\"},\"versions\":[{\"version\":\"v1\",\"resources\":[{"
        "\"resource\":\"nodes\",\"responseKind\":{\"kind\":\"Node\"},\"scope\":\"Cluster\"}]}]}]}",
        0, NULL);
    assert_int_equal(gr_kube_mapper_add_aggregated(m, agg, &err), GR_OK);
    json_decref(agg);
    json_t *legacy = json_loads(
        "{\"kind\":\"APIResourceList\",\"groupVersion\":\"x.io/v2\",\"resources\":[{\"name\":"
        "\"widgets\",\"kind\":\"Widget\",\"namespaced\":false},{\"name\":\"widgets/status\","
        "\"kind\":\"Widget\",\"namespaced\":false}]}",
        0, NULL);
    assert_int_equal(gr_kube_mapper_add_resource_list(m, legacy, true, &err), GR_OK);
    json_decref(legacy);
    assert_int_equal(gr_kube_mapper_len(m), 4); /* subresource skipped */
    gr_kube_mapping mp;
    assert_int_equal(gr_kube_mapper_kind(m, "apps", NULL, "Deployment", &mp, &err), GR_OK);
    assert_string_equal(mp.version, "v1"); /* preferred = first listed */
    assert_string_equal(mp.resource, "deployments");
    assert_true(mp.namespaced);
    assert_int_equal(gr_kube_mapper_api_version_kind(m, "apps/v1beta1", "Deployment", &mp, &err),
                     GR_OK);
    assert_string_equal(mp.version, "v1beta1");
    assert_int_equal(gr_kube_mapper_api_version_kind(m, "v1", "Node", &mp, &err), GR_OK);
    assert_false(mp.namespaced);
    assert_int_equal(gr_kube_mapper_resource(m, "x.io", "v2", "widgets", &mp, &err), GR_OK);
    assert_string_equal(mp.kind, "Widget");
    assert_int_equal(gr_kube_mapper_kind(m, "x.io", NULL, "Gadget", &mp, &err), GR_ENOTFOUND);
    gr_kube_mapper_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conditions),
        cmocka_unit_test(test_owner_and_finalizers),
        cmocka_unit_test(test_event_aggregation),
        cmocka_unit_test(test_lease_decisions),
        cmocka_unit_test(test_mapper),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
