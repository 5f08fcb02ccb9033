/*
 * test_gang_grove.c — unit tests of the Grove gang discoverer (beyond
 * upstream, NVIDIA/NVSentinel#1354): the `gangDiscovery` forms that select
 * it, the anchor Grove's operator puts on its pods (label grove.io/podgang),
 * the expected count of a PodGang (sum of spec.podgroups[].minReplicas, or a
 * minCountExpr), and validation against a REST mapper filled by hand.
 *
 * The checklist has no Grove IDs (the contract lists Grove as unsupported);
 * the generic IDs the Grove path satisfies are named at the assertions
 * (PF-95 discoverer name as prefix, PF-97 label keys, PF-98 GVR, PF-99
 * minCountExpr, PF-109/PF-151 gang ID, PF-132 validation, PF-147 count).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gr_gang.h"
#include "gr_gang_ctl.h"
#include "gr_kube_discovery.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    if (!v)
        fail_msg("bad test JSON: %s: %s", e.text, text);
    return v;
}

static gr_gang_discoverer *grove_disc(const char *block)
{
    json_t *j = J(block);
    gr_gang_spec s;
    gr_err err;
    if (gr_gang_spec_parse(j, &s, &err) != GR_OK)
        fail_msg("spec: %s", err.msg);
    json_decref(j);
    gr_gang_discoverer *d = NULL;
    if (gr_gang_discoverer_new(&s, GR_GANG_GROVE, GR_GANG_GROVE_KIND, NULL, &d, &err) != GR_OK)
        fail_msg("discoverer: %s", err.msg);
    gr_gang_spec_free(&s);
    return d;
}

/* The forms that select Grove, and their defaults. */
static void test_grove_spec(void **state)
{
    (void)state;
    gr_gang_spec s;
    gr_err err;
    /* shorthand: {name: grove} */
    json_t *j = J("{\"name\":\"grove\"}");
    assert_int_equal(gr_gang_spec_parse(j, &s, &err), GR_OK);
    assert_true(s.grove);
    assert_false(s.native);
    assert_string_equal(s.group, "scheduler.grove.io");
    assert_string_equal(s.version, "v1alpha1");
    assert_string_equal(s.resource, "podgangs");
    assert_int_equal(s.n_label_keys, 1);
    assert_string_equal(s.label_keys[0], "grove.io/podgang");
    assert_int_equal(s.n_annotation_keys, 0);
    assert_null(s.min_count_expr); /* built-in rule, not podGroup.spec.minMember */
    gr_gang_spec_free(&s);
    json_decref(j);

    /* explicit block naming the PodGang GVR: Grove with the default label key */
    j = J("{\"name\":\"dynamo\",\"podGroupGVR\":{\"group\":\"scheduler.grove.io\",\"version\":"
          "\"v1alpha2\",\"resource\":\"podgangs\"}}");
    assert_int_equal(gr_gang_spec_parse(j, &s, &err), GR_OK);
    assert_true(s.grove);
    assert_string_equal(s.name, "dynamo");
    assert_string_equal(s.version, "v1alpha2");
    assert_string_equal(s.label_keys[0], "grove.io/podgang");
    gr_gang_spec_free(&s);
    json_decref(j);

    /* explicit keys and expression are kept */
    j = J("{\"name\":\"grove\",\"labelKeys\":[\"my/gang\"],\"minCountExpr\":\"3\","
          "\"podGroupGVR\":{\"group\":\"scheduler.grove.io\",\"version\":\"v1alpha1\","
          "\"resource\":\"podgangs\"}}");
    assert_int_equal(gr_gang_spec_parse(j, &s, &err), GR_OK);
    assert_true(s.grove);
    assert_int_equal(s.n_label_keys, 1);
    assert_string_equal(s.label_keys[0], "my/gang");
    assert_string_equal(s.min_count_expr, "3");
    gr_gang_spec_free(&s);
    json_decref(j);

    /* the form the webhook's config file takes (Helm gangDiscovery value):
     * its parser fills in the generic default minCountExpr, which means the
     * Grove rule for a PodGang */
    j = J("{\"name\":\"grove\",\"labelKeys\":[\"grove.io/podgang\"],\"minCountExpr\":"
          "\"podGroup.spec.minMember\",\"podGroupGVR\":{\"group\":\"scheduler.grove.io\","
          "\"version\":\"v1alpha1\",\"resource\":\"podgangs\"}}");
    assert_int_equal(gr_gang_spec_parse(j, &s, &err), GR_OK);
    assert_true(s.grove);
    assert_null(s.min_count_expr);
    gr_gang_spec_free(&s);
    json_decref(j);

    /* Grove's GVR without a name is still incomplete */
    j = J("{\"podGroupGVR\":{\"group\":\"scheduler.grove.io\",\"version\":\"v1alpha1\","
          "\"resource\":\"podgangs\"}}");
    assert_int_equal(gr_gang_spec_parse(j, &s, &err), GR_EINVAL);
    assert_string_equal(err.msg, "invalid gangDiscovery config: name \"\" requires "
                                 "annotationKeys/labelKeys, podGroupGVR, and minCountExpr");
    json_decref(j);

    /* another name alone is not Grove (upstream's message) */
    j = J("{\"name\":\"grove2\"}");
    assert_int_equal(gr_gang_spec_parse(j, &s, &err), GR_EINVAL);
    json_decref(j);

    /* a volcano block is not Grove */
    j = J("{\"name\":\"volcano\",\"annotationKeys\":[\"k\"],\"podGroupGVR\":{\"group\":"
          "\"scheduling.volcano.sh\",\"version\":\"v1beta1\",\"resource\":\"podgroups\"}}");
    assert_int_equal(gr_gang_spec_parse(j, &s, &err), GR_OK);
    assert_false(s.grove);
    /* mode and spec must agree */
    gr_gang_discoverer *d = NULL;
    assert_int_equal(gr_gang_discoverer_new(&s, GR_GANG_GROVE, "PodGroup", NULL, &d, &err),
                     GR_EINVAL);
    assert_null(d);
    gr_gang_spec_free(&s);
    json_decref(j);
    j = J("{\"name\":\"grove\"}");
    assert_int_equal(gr_gang_spec_parse(j, &s, &err), GR_OK);
    assert_int_equal(gr_gang_discoverer_new(&s, GR_GANG_CRD, "PodGang", NULL, &d, &err), GR_EINVAL);
    gr_gang_spec_free(&s);
    json_decref(j);
}

/* A pod as Grove's operator creates it: PodGang, PodClique, PodCliqueSet
 * (part-of) and, in a scaling group, PodCliqueScalingGroup labels. */
static const char GROVE_POD[] =
    "{\"metadata\":{\"name\":\"disagg-0-prefill-0-worker-abcde\",\"labels\":{"
    "\"app.kubernetes.io/managed-by\":\"grove-operator\","
    "\"app.kubernetes.io/part-of\":\"disagg\","
    "\"grove.io/podclique\":\"disagg-0-prefill-0-worker\","
    "\"grove.io/podcliquescalinggroup\":\"disagg-0-prefill\","
    "\"grove.io/podgang\":\"disagg-0\"}}}";

static void test_grove_anchor(void **state)
{
    (void)state;
    gr_gang_discoverer *d = grove_disc("{\"name\":\"grove\"}");
    assert_int_equal(gr_gang_discoverer_mode(d), GR_GANG_GROVE);
    assert_string_equal(gr_gang_discoverer_name(d), "grove"); /* PF-95 */
    gr_gang_anchor a;
    gr_err err;
    json_t *pod = J(GROVE_POD);
    assert_int_equal(gr_gang_anchor_from_pod(d, pod, "team-a", &a, &err), GR_OK); /* PF-97 */
    assert_string_equal(a.gang_id, "grove-team-a-disagg-0"); /* PF-109, PF-151 */
    assert_string_equal(a.cm_name, "preflight-grove-team-a-disagg-0");
    assert_string_equal(a.group, "scheduler.grove.io"); /* PF-98 */
    assert_string_equal(a.version, "v1alpha1");
    assert_string_equal(a.resource, "podgangs");
    assert_string_equal(a.kind, "PodGang");
    assert_string_equal(a.name, "disagg-0");
    assert_string_equal(a.pod_group, "");
    /* the anchor annotation round-trips (coordinator reads it back) */
    json_t *aj = gr_gang_anchor_to_json(&a);
    gr_gang_anchor b;
    assert_int_equal(gr_gang_anchor_from_json(aj, &b, &err), GR_OK);
    assert_string_equal(b.resource, "podgangs");
    assert_string_equal(b.gang_id, a.gang_id);
    gr_gang_anchor_clear(&b);
    json_decref(aj);
    gr_gang_anchor_clear(&a);
    json_decref(pod);

    /* a pod of a scaled PodGang (replica above minAvailable) is its own gang */
    pod = J("{\"metadata\":{\"labels\":{\"grove.io/podgang\":\"disagg-0-prefill-0\","
            "\"grove.io/base-podgang\":\"disagg-0\"}}}");
    assert_int_equal(gr_gang_anchor_from_pod(d, pod, "ns", &a, &err), GR_OK);
    assert_string_equal(a.gang_id, "grove-ns-disagg-0-prefill-0");
    gr_gang_anchor_clear(&a);
    json_decref(pod);

    /* no PodGang label (yet): not a gang member; an empty value neither */
    pod = J("{\"metadata\":{\"labels\":{\"app.kubernetes.io/part-of\":\"disagg\"}}}");
    assert_int_equal(gr_gang_anchor_from_pod(d, pod, "ns", &a, &err), GR_ENOTFOUND);
    json_decref(pod);
    pod = J("{\"metadata\":{\"labels\":{\"grove.io/podgang\":\"\"}}}");
    assert_int_equal(gr_gang_anchor_from_pod(d, pod, "ns", &a, &err), GR_ENOTFOUND);
    json_decref(pod);
    gr_gang_discoverer_unref(d);
}

static void test_grove_min_count(void **state)
{
    (void)state;
    gr_gang_discoverer *d = grove_disc("{\"name\":\"grove\"}");
    gr_gang_anchor a;
    gr_err err;
    json_t *pod = J(GROVE_POD);
    assert_int_equal(gr_gang_anchor_from_pod(d, pod, "ns", &a, &err), GR_OK);
    json_decref(pod);
    int64_t n = -1;
    /* a frontend clique (min 1) and two prefill cliques (min 2 each) of the
     * scaling group replica below minAvailable: 5 (PF-147) */
    json_t *pg =
        J("{\"apiVersion\":\"scheduler.grove.io/v1alpha1\",\"kind\":\"PodGang\","
          "\"metadata\":{\"name\":\"disagg-0\"},\"spec\":{\"podgroups\":["
          "{\"name\":\"disagg-0-frontend\",\"minReplicas\":1,\"podReferences\":["
          "{\"namespace\":\"ns\",\"name\":\"disagg-0-frontend-x\"}]},"
          "{\"name\":\"disagg-0-prefill-0-leader\",\"minReplicas\":2,\"podReferences\":[]},"
          "{\"name\":\"disagg-0-prefill-0-worker\",\"minReplicas\":2}]}}");
    assert_int_equal(gr_gang_min_count(d, &a, pg, &n, &err), GR_OK);
    assert_int_equal(n, 5);
    json_decref(pg);
    /* no podgroups yet: unknown */
    pg = J("{\"spec\":{}}");
    assert_int_equal(gr_gang_min_count(d, &a, pg, &n, &err), GR_ENOTFOUND);
    assert_string_equal(err.msg, "PodGang disagg-0 has no spec.podgroups");
    json_decref(pg);
    /* an empty list: 0 (stays unknown in the ConfigMap) */
    pg = J("{\"spec\":{\"podgroups\":[]}}");
    assert_int_equal(gr_gang_min_count(d, &a, pg, &n, &err), GR_OK);
    assert_int_equal(n, 0);
    json_decref(pg);
    pg = J("{\"spec\":{\"podgroups\":[{\"name\":\"a\",\"minReplicas\":1},{\"name\":\"b\"}]}}");
    assert_int_equal(gr_gang_min_count(d, &a, pg, &n, &err), GR_ENOTFOUND);
    assert_string_equal(err.msg, "PodGang disagg-0: spec.podgroups[1] has no minReplicas");
    json_decref(pg);
    pg = J("{\"spec\":{\"podgroups\":[{\"name\":\"a\",\"minReplicas\":-1}]}}");
    assert_int_equal(gr_gang_min_count(d, &a, pg, &n, &err), GR_EINVAL);
    assert_string_equal(err.msg, "PodGang disagg-0: spec.podgroups[0].minReplicas must be a "
                                 "non-negative integer");
    json_decref(pg);
    pg = J("{\"spec\":{\"podgroups\":[{\"name\":\"a\",\"minReplicas\":\"2\"}]}}");
    assert_int_equal(gr_gang_min_count(d, &a, pg, &n, &err), GR_EINVAL);
    json_decref(pg);
    pg = J("{\"spec\":{\"podgroups\":[{\"minReplicas\":2147483647},{\"minReplicas\":1}]}}");
    assert_int_equal(gr_gang_min_count(d, &a, pg, &n, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "out of range"));
    json_decref(pg);
    pg = J("{\"spec\":{\"podgroups\":[{\"minReplicas\":9223372036854775807}]}}");
    assert_int_equal(gr_gang_min_count(d, &a, pg, &n, &err), GR_EINVAL);
    json_decref(pg);
    gr_gang_anchor_clear(&a);
    gr_gang_discoverer_unref(d);

    /* minCountExpr overrides the built-in rule (PF-99): only the workers */
    d = grove_disc("{\"name\":\"grove\",\"minCountExpr\":"
                   "\"podGroup.spec.podgroups.filter(g, g.name.endsWith('-worker'))"
                   ".map(g, g.minReplicas)[0]\"}");
    pod = J(GROVE_POD);
    assert_int_equal(gr_gang_anchor_from_pod(d, pod, "ns", &a, &err), GR_OK);
    json_decref(pod);
    pg = J("{\"spec\":{\"podgroups\":[{\"name\":\"x-leader\",\"minReplicas\":1},"
           "{\"name\":\"x-worker\",\"minReplicas\":4}]}}");
    assert_int_equal(gr_gang_min_count(d, &a, pg, &n, &err), GR_OK);
    assert_int_equal(n, 4);
    json_decref(pg);
    gr_gang_anchor_clear(&a);
    gr_gang_discoverer_unref(d);

    /* a bad expression is refused when the discoverer is built */
    json_t *j = J("{\"name\":\"grove\",\"minCountExpr\":\"podGroup.spec.(\"}");
    gr_gang_spec s;
    assert_int_equal(gr_gang_spec_parse(j, &s, &err), GR_OK);
    assert_int_equal(gr_gang_discoverer_new(&s, GR_GANG_GROVE, NULL, NULL, &d, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "gangDiscovery.minCountExpr: "));
    gr_gang_spec_free(&s);
    json_decref(j);
}

/* The Grove pod's label survives the cache transform when Grove is the
 * default discoverer (its label key is kept, PF-141). */
static void test_grove_trim(void **state)
{
    (void)state;
    gr_gang_discoverer *d = grove_disc("{\"name\":\"grove\"}");
    const gr_gang_spec *sp = gr_gang_discoverer_spec(d);
    const char *const *labels = (const char *const *)sp->label_keys;
    gr_gang_trim_keys keys = {NULL, 0, labels, sp->n_label_keys};
    json_t *pod = J("{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"labels\":{"
                    "\"grove.io/podgang\":\"g\",\"grove.io/podclique\":\"c\"}},"
                    "\"spec\":{\"volumes\":[{\"name\":\"nvsentinel-preflight-gang-config\","
                    "\"configMap\":{\"name\":\"preflight-grove-ns-g\"}}]}}");
    assert_int_equal(gr_gang_pod_trim(&pod, &keys), GR_OK);
    const json_t *l = json_object_get(json_object_get(pod, "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(l, "grove.io/podgang")), "g");
    assert_null(json_object_get(l, "grove.io/podclique"));
    json_decref(pod);
    gr_gang_discoverer_unref(d);
}

static void add_list(gr_kube_mapper *m, const char *gv, const char *resources)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"kind\":\"APIResourceList\",\"groupVersion\":\"%s\",\"resources\":[%s]}", gv,
             resources);
    json_t *l = J(text);
    assert_int_equal(gr_kube_mapper_add_resource_list(m, l, true, NULL), GR_OK);
    json_decref(l);
}

/* PF-132: a Grove block is validated against the REST mapper like a CRD. */
static void test_grove_build(void **state)
{
    (void)state;
    gr_kube_mapper *m;
    gr_gang_discoverer *d = NULL;
    gr_err err;
    assert_int_equal(gr_kube_mapper_new(NULL, &m, NULL), GR_OK);
    json_t *gd = J("{\"name\":\"grove\"}");
    assert_int_equal(gr_gang_discoverer_build(m, gd, &d, &err), GR_ENOTFOUND);
    assert_non_null(strstr(err.msg, "gangDiscovery.podGroupGVR validation failed: resource "
                                    "\"scheduler.grove.io/v1alpha1, Resource=podgangs\" not "
                                    "found (is the CRD installed?): "));
    add_list(m, "scheduler.grove.io/v1alpha1",
             "{\"name\":\"podgangs\",\"namespaced\":true,\"kind\":\"PodGang\","
             "\"verbs\":[\"get\"]}");
    assert_int_equal(gr_gang_discoverer_build(m, gd, &d, &err), GR_OK);
    assert_int_equal(gr_gang_discoverer_mode(d), GR_GANG_GROVE);
    json_t *pod = J(GROVE_POD);
    gr_gang_anchor a;
    assert_int_equal(gr_gang_anchor_from_pod(d, pod, "ns", &a, &err), GR_OK);
    assert_string_equal(a.kind, "PodGang"); /* from the mapper: used in ownerReferences */
    gr_gang_anchor_clear(&a);
    json_decref(pod);
    gr_gang_discoverer_unref(d);
    json_decref(gd);
    gr_kube_mapper_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grove_spec),      cmocka_unit_test(test_grove_anchor),
        cmocka_unit_test(test_grove_min_count), cmocka_unit_test(test_grove_trim),
        cmocka_unit_test(test_grove_build),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
