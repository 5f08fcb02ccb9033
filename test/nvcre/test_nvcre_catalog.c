/*
 * gr_nvcre_catalog: option precedence, derived options and errors. The
 * golden renderings of every entry × platform × architecture, down to the
 * TrainJob, are nvcre_catalog_goldens (test_catalog_goldens.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "gr_err.h"
#include "gr_json.h"
#include "gr_nvcre_catalog.h"
#include "gr_yaml.h"

static gr_nvcre_catalog *cat;

static int setup(void **state)
{
    (void)state;
    gr_err err;
    if (gr_nvcre_catalog_load(&cat, &err) != GR_OK) {
        fprintf(stderr, "catalog: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gr_nvcre_catalog_free(cat);
    return 0;
}

static json_t *yaml(const char *s)
{
    json_t *v = NULL;
    gr_err err;
    assert_int_equal(gr_yaml_load_one(s, strlen(s), "test", &v, &err), GR_OK);
    return v;
}

static json_t *render(const char *d, const char *v, const char *plat, const char *arch,
                      const char *global, const char *cat_opts, json_t **opts)
{
    json_t *g = global ? yaml(global) : NULL, *c = cat_opts ? yaml(cat_opts) : NULL;
    json_t *target = yaml("nodeSelector: {nvidia.com/gpu.present: \"true\"}");
    gr_nvcre_catalog_req req = {d, v, plat, arch, target, g, c};
    json_t *spec = NULL;
    gr_err err;
    int rc = gr_nvcre_catalog_render(cat, &req, &spec, opts, &err);
    if (rc != GR_OK)
        fail_msg("%s/%s %s %s: %s", d, v, plat, arch, err.msg);
    json_decref(g);
    json_decref(c);
    json_decref(target);
    return spec;
}

static const json_t *trainer(const json_t *spec)
{
    return gr_json_ptr_get(spec, "/jobTemplate/spec/workload/trainJob/trainer");
}

static const char *env_value(const json_t *spec, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(trainer(spec), "env"), i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "name")), name))
            return json_string_value(json_object_get(e, "value"));
    }
    return NULL;
}

/* Per-category options win over the global ones; workloadMetadata merges per
 * key (certification-image-override-nccl, certification-resources-override). */
static void test_option_precedence(void **state)
{
    (void)state;
    json_t *opts = NULL;
    json_t *spec = render("communication", "nccl-all-reduce", "aws", "h100",
                          "image: mirror.local/nccl:1\nmaxBytes: 1G\nnumIterations: 5\n"
                          "workloadMetadata: {labels: {a: g, b: g}}\n",
                          "maxBytes: 2G\nworkloadMetadata: {labels: {b: c}}\n", &opts);
    assert_string_equal(json_string_value(json_object_get(trainer(spec), "image")),
                        "mirror.local/nccl:1");
    const json_t *args = json_object_get(trainer(spec), "args");
    bool saw = false;
    for (size_t i = 0; i + 1 < json_array_size(args); i++)
        if (!strcmp(json_string_value(json_array_get(args, i)), "-e")) {
            assert_string_equal(json_string_value(json_array_get(args, i + 1)), "2G");
            saw = true;
        }
    assert_true(saw);
    const json_t *labels = gr_json_ptr_get(spec, "/jobTemplate/spec/workloadMetadata/labels");
    assert_string_equal(json_string_value(json_object_get(labels, "a")), "g");
    assert_string_equal(json_string_value(json_object_get(labels, "b")), "c");
    /* the runtime uses the same image */
    assert_string_equal(
        json_string_value(gr_json_ptr_get(
            spec, "/dependencies/0/spec/template/spec/replicatedJobs/1/template/spec/template/"
                  "spec/containers/0/image")),
        "mirror.local/nccl:1");
    json_decref(opts);
    json_decref(spec);
}

/* mlnxPerNode from options reaches the NIC resource; 0 drops it
 * (certification-mlnx-override-nccl). */
static void test_mlnx_override(void **state)
{
    (void)state;
    const char *lim = "/dependencies/0/spec/template/spec/replicatedJobs/1/template/spec/template/"
                      "spec/containers/0/resources/limits";
    json_t *spec = render("communication", "nccl-all-reduce", "onprem", "h100", NULL,
                          "mlnxPerNode: 4\n", NULL);
    assert_int_equal(json_integer_value(
                         json_object_get(gr_json_ptr_get(spec, lim), "rdma/rdma_shared_device_a")),
                     4);
    json_decref(spec);
    spec = render("communication", "nccl-all-reduce", "onprem", "h100", "mlnxPerNode: 0\n", NULL,
                  NULL);
    assert_null(json_object_get(gr_json_ptr_get(spec, lim), "rdma/rdma_shared_device_a"));
    assert_int_equal(
        json_integer_value(json_object_get(gr_json_ptr_get(spec, lim), "nvidia.com/gpu")), 8);
    json_decref(spec);
    /* CategoryOptions.resources join the GPU/NIC resources
     * (certification-resources-override) */
    spec = render("communication", "nccl-all-reduce", "aws", "h100",
                  "resources: {limits: {cpu: \"8\", memory: 64Gi}, requests: {cpu: \"4\"}}\n", NULL,
                  NULL);
    const json_t *l = gr_json_ptr_get(spec, lim);
    assert_string_equal(json_string_value(json_object_get(l, "cpu")), "8");
    assert_string_equal(json_string_value(json_object_get(l, "memory")), "64Gi");
    assert_int_equal(json_integer_value(json_object_get(l, "nvidia.com/gpu")), 8);
    assert_int_equal(json_integer_value(json_object_get(l, "vpc.amazonaws.com/efa")), 32);
    json_decref(spec);
    spec = render("diagnostics", "dcgm-level1", "aws", "h100", NULL,
                  "resources: {requests: {memory: 8Gi}}\n", NULL);
    assert_string_equal(
        json_string_value(gr_json_ptr_get(
            spec, "/dependencies/0/spec/template/spec/replicatedJobs/0/template/spec/template/"
                  "spec/containers/0/resources/requests/memory")),
        "8Gi");
    json_decref(spec);
}

/* testScale intra-node ⇒ nodesPerJob 1; thresholds ⇒ validation.performance. */
static void test_intra_node_and_thresholds(void **state)
{
    (void)state;
    json_t *spec = render("communication", "nccl-all-gather", "gcp", "h100",
                          "testScale: intra-node\nnodesPerJob: 4\n",
                          "thresholds: {busBandwidthGBps: \"value >= 300\"}\n", NULL);
    assert_int_equal(json_integer_value(json_object_get(trainer(spec), "numNodes")), 1);
    /* The Workflow CRD's shape, validation.performance.thresholds.thresholds:
     * a flat map there is pruned to {} by the API server (the demo's slow
     * node passed with its threshold lost). */
    assert_string_equal(
        json_string_value(gr_json_ptr_get(
            spec, "/validation/performance/thresholds/thresholds/busBandwidthGBps")),
        "value >= 300");
    assert_null(gr_json_ptr_get(spec, "/validation/performance/thresholds/busBandwidthGBps"));
    json_decref(spec);
    spec = render("communication", "nccl-all-gather", "gcp", "h100", NULL, NULL, NULL);
    assert_null(json_object_get(spec, "validation"));
    assert_int_equal(json_integer_value(json_object_get(trainer(spec), "numNodes")), 2);
    json_decref(spec);
}

/* GB200: MNNVL on by default (ComputeDomain + claim), 32G sweep; off on
 * request. */
static void test_gb200_mnnvl(void **state)
{
    (void)state;
    json_t *spec = render("communication", "nccl-alltoall", "aws", "gb200", NULL, NULL, NULL);
    assert_int_equal(json_array_size(json_object_get(spec, "dependencies")), 2);
    assert_string_equal(json_string_value(gr_json_ptr_get(spec, "/dependencies/1/kind")),
                        "ComputeDomain");
    assert_string_equal(env_value(spec, "NCCL_MNNVL_ENABLE"), "1");
    json_decref(spec);
    spec = render("communication", "nccl-alltoall", "aws", "gb200", "enableMNNVL: false\n", NULL,
                  NULL);
    assert_int_equal(json_array_size(json_object_get(spec, "dependencies")), 1);
    assert_null(gr_json_ptr_get(spec, "/dependencies/0/spec/template/spec/replicatedJobs/1/"
                                      "template/spec/template/spec/resourceClaims"));
    json_decref(spec);
}

/* Our checks are the default images for diagnostics and loopback. */
static void test_check_images(void **state)
{
    (void)state;
    json_t *spec = render("diagnostics", "dcgm-level2", "oci", "l40s", NULL, NULL, NULL);
    assert_string_equal(json_string_value(json_object_get(trainer(spec), "image")),
                        "ghcr.io/gpuready/preflight-dcgm-diag:v0.1.0");
    assert_string_equal(env_value(spec, "DCGM_DIAG_LEVEL"), "2");
    assert_string_equal(
        json_string_value(gr_json_ptr_get(spec, "/orchestration/execution/timeoutPerJob")), "15m");
    json_decref(spec);
    spec = render("diagnostics", "dcgm-level4", "oci", "l40s", NULL, NULL, NULL);
    assert_string_equal(
        json_string_value(gr_json_ptr_get(spec, "/orchestration/execution/timeoutPerJob")), "2h");
    json_decref(spec);
    spec = render("communication", "nccl-loopback", "oci", "l40s", "checksTag: v9\n", NULL, NULL);
    assert_string_equal(json_string_value(json_object_get(trainer(spec), "image")),
                        "ghcr.io/gpuready/preflight-nccl-loopback:v9");
    assert_string_equal(env_value(spec, "NPROCS_PER_NODE"), "4"); /* OCI L40S: 4 GPUs */
    json_decref(spec);
}

static void test_unknown_category(void **state)
{
    (void)state;
    gr_nvcre_catalog_req req = {"communication", "nccl-bogus", "aws", "h100", NULL, NULL, NULL};
    json_t *spec = NULL;
    gr_err err;
    assert_int_equal(gr_nvcre_catalog_render(cat, &req, &spec, NULL, &err), GR_ENOTFOUND);
    assert_string_equal(err.msg, "Unknown certification category: communication/nccl-bogus");
    assert_null(spec);
    assert_false(gr_nvcre_catalog_has(cat, "communication", "nccl-bogus"));
    assert_true(gr_nvcre_catalog_has(cat, "diagnostics", "dcgm-level3"));
    assert_non_null(gr_nvcre_catalog_source(cat, "diagnostics", "dcgm-level3"));
}

/* A string option used inside a string must be a scalar. */
static void test_bad_option_type(void **state)
{
    (void)state;
    json_t *g = yaml("maxBytes: {a: 1}\n");
    gr_nvcre_catalog_req req = {"communication", "nccl-all-reduce", "aws", "h100", NULL, g, NULL};
    json_t *spec = NULL;
    gr_err err;
    /* ${maxBytes|string}: a mapping cannot become an argument */
    assert_int_equal(gr_nvcre_catalog_render(cat, &req, &spec, NULL, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "option maxBytes must be a string, number or boolean"));
    assert_null(spec);
    json_decref(g);
    g = yaml("checksTag: [1]\n");
    req = (gr_nvcre_catalog_req){"diagnostics", "dcgm-level1", "aws", "h100", NULL, g, NULL};
    assert_int_equal(gr_nvcre_catalog_render(cat, &req, &spec, NULL, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "option checksTag is a list"));
    json_decref(g);
}

static void test_gpu_defaults(void **state)
{
    (void)state;
    int g, m;
    gr_nvcre_catalog_gpu_defaults(cat, "l40s", "oci", &g, &m);
    assert_int_equal(g, 4);
    assert_int_equal(m, 2);
    gr_nvcre_catalog_gpu_defaults(cat, "gb200", "onprem", &g, &m);
    assert_int_equal(g, 4);
    assert_int_equal(m, 8);
    gr_nvcre_catalog_gpu_defaults(cat, "mi300", "onprem", &g, &m);
    assert_int_equal(g, 4);
    assert_int_equal(m, 0);
    char b[32];
    assert_string_equal(gr_nvcre_catalog_arch_of_product("NVIDIA-H100-80GB-HBM3", b, sizeof b),
                        "h100");
    assert_string_equal(gr_nvcre_catalog_arch_of_product("NVIDIA-GB200-NVL72", b, sizeof b),
                        "gb200");
    assert_string_equal(
        gr_nvcre_catalog_arch_of_product("NVIDIA-RTX-PRO-6000-Blackwell", b, sizeof b),
        "rtxpro6000");
    assert_string_equal(gr_nvcre_catalog_arch_of_product(NULL, b, sizeof b), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_option_precedence),
        cmocka_unit_test(test_mlnx_override),
        cmocka_unit_test(test_intra_node_and_thresholds),
        cmocka_unit_test(test_gb200_mnnvl),
        cmocka_unit_test(test_check_images),
        cmocka_unit_test(test_unknown_category),
        cmocka_unit_test(test_bad_option_type),
        cmocka_unit_test(test_gpu_defaults),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
