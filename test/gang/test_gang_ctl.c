/*
 * test_gang_ctl.c — startup validation of gang discoverers against a REST
 * mapper filled by hand (no API server): native PodGroup first, Workload
 * fallback, the documented fatal message when neither is served (PF-10,
 * PF-11), CRD GVR resolution (PF-98, PF-132) and the resolver default.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gr_gang_ctl.h"
#include "gr_kube_discovery.h"

static void add_list(gr_kube_mapper *m, const char *gv, const char *resources)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"kind\":\"APIResourceList\",\"groupVersion\":\"%s\","
             "\"resources\":[%s]}",
             gv, resources);
    json_t *l = json_loads(text, 0, NULL);
    assert_non_null(l);
    assert_int_equal(gr_kube_mapper_add_resource_list(m, l, true, NULL), GR_OK);
    json_decref(l);
}

static const char PG[] =
    "{\"name\":\"podgroups\",\"namespaced\":true,\"kind\":\"PodGroup\",\"verbs\":[\"get\"]}";
static const char WL[] =
    "{\"name\":\"workloads\",\"namespaced\":true,\"kind\":\"Workload\",\"verbs\":[\"get\"]}";

static void test_native_selection(void **state)
{
    (void)state;
    gr_kube_mapper *m;
    gr_gang_discoverer *d;
    gr_err err;
    assert_int_equal(gr_kube_mapper_new(NULL, &m, NULL), GR_OK);
    /* nothing served: the documented error (PF-10) */
    assert_int_equal(gr_gang_discoverer_build(m, NULL, &d, &err), GR_ENOTFOUND);
    assert_string_equal(err.msg, "kubernetes native gang API not available (requires K8s 1.35 "
                                 "Workload or K8s 1.36+ PodGroup)");
    /* 1.35: Workload v1alpha1 (PF-88) */
    add_list(m, "scheduling.k8s.io/v1alpha1", WL);
    assert_int_equal(gr_gang_discoverer_build(m, NULL, &d, &err), GR_OK);
    assert_int_equal(gr_gang_discoverer_mode(d), GR_GANG_NATIVE_WORKLOAD);
    gr_gang_discoverer_unref(d);
    /* 1.36: PodGroup v1alpha2 wins (PF-87) */
    add_list(m, "scheduling.k8s.io/v1alpha2", PG);
    json_t *empty = json_object();
    assert_int_equal(gr_gang_discoverer_build(m, empty, &d, &err), GR_OK);
    assert_int_equal(gr_gang_discoverer_mode(d), GR_GANG_NATIVE_PODGROUP);
    assert_string_equal(gr_gang_discoverer_name(d), "kubernetes");
    gr_gang_discoverer_unref(d);
    json_decref(empty);
    gr_kube_mapper_free(m);
}

static void test_crd_validation(void **state)
{
    (void)state;
    gr_kube_mapper *m;
    gr_gang_discoverer *d;
    gr_err err;
    assert_int_equal(gr_kube_mapper_new(NULL, &m, NULL), GR_OK);
    json_t *gd = json_loads("{\"name\":\"volcano\",\"annotationKeys\":[\"k\"],\"podGroupGVR\":{"
                            "\"group\":\"scheduling.volcano.sh\",\"version\":\"v1beta1\","
                            "\"resource\":\"podgroups\"}}",
                            0, NULL);
    assert_int_equal(gr_gang_discoverer_build(m, gd, &d, &err), GR_ENOTFOUND);
    assert_non_null(strstr(err.msg, "gangDiscovery.podGroupGVR validation failed: resource "
                                    "\"scheduling.volcano.sh/v1beta1, Resource=podgroups\" not "
                                    "found (is the CRD installed?): "));
    add_list(m, "scheduling.volcano.sh/v1beta1", PG);
    assert_int_equal(gr_gang_discoverer_build(m, gd, &d, &err), GR_OK); /* PF-98 */
    assert_int_equal(gr_gang_discoverer_mode(d), GR_GANG_CRD);
    assert_string_equal(gr_gang_discoverer_name(d), "volcano");
    gr_gang_discoverer_unref(d);
    json_decref(gd);
    gd = json_loads("{\"name\":\"volcano\"}", 0, NULL);
    assert_int_equal(gr_gang_discoverer_build(m, gd, &d, &err), GR_EINVAL);
    json_decref(gd);
    gr_kube_mapper_free(m);
}

/* PF-11: the full fatal error text of the service (the program logs it as
 * {"msg":"Fatal error","error":<this>}). */
static void test_service_fatal_message(void **state)
{
    (void)state;
    gr_kube_config kcfg;
    memset(&kcfg, 0, sizeof kcfg);
    kcfg.server = strdup("https://127.0.0.1:1");
    gr_kube_client *kc = NULL;
    gr_err err;
    assert_int_equal(gr_kube_client_new(&kcfg, &kc, &err), GR_OK);
    gr_kube_config_free(&kcfg);
    gr_kube_mapper *m;
    assert_int_equal(gr_kube_mapper_new(NULL, &m, NULL), GR_OK);
    static const char yaml[] = "gangCoordination:\n  enabled: true\n";
    gr_preflight_config *cfg = NULL;
    assert_int_equal(gr_preflight_config_parse(yaml, sizeof yaml - 1, "t", NULL, NULL, &cfg, &err),
                     GR_OK);
    gr_gang_service_opts o = {.client = kc, .cfg = cfg, .mapper = m};
    gr_gang_service *svc = NULL;
    assert_int_not_equal(gr_gang_service_new(&o, &svc, &err), GR_OK);
    assert_string_equal(err.msg,
                        "failed to create gang discoverer resolver: failed to create default gang "
                        "discoverer: kubernetes native gang API not available (requires K8s 1.35 "
                        "Workload or K8s 1.36+ PodGroup)");
    /* with the API served the service comes up and the default applies
     * everywhere (PF-116) */
    add_list(m, "scheduling.k8s.io/v1alpha2", PG);
    assert_int_equal(gr_gang_service_new(&o, &svc, &err), GR_OK);
    gr_gang_discoverer *d = gr_gang_service_discoverer_for(svc, "any");
    assert_string_equal(gr_gang_discoverer_name(d), "kubernetes");
    gr_gang_discoverer_unref(d);
    gr_gang_service_free(svc);
    gr_preflight_config_free(cfg);
    gr_kube_mapper_free(m);
    gr_kube_client_free(kc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_native_selection),
        cmocka_unit_test(test_crd_validation),
        cmocka_unit_test(test_service_fatal_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
