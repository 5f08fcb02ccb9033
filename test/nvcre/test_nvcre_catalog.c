/*
 * gr_nvcre_catalog: option precedence, derived options and errors. The
 * golden renderings of every entry × platform × architecture, down to the
 * TrainJob, are nvcre_catalog_goldens (test_catalog_goldens.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

/* Every CategoryOptions field (deploy/crds: Certification
 * spec.categories[].options) either reaches the rendered workload where the
 * fact sheet (§1.1, §1.3) puts it, or is refused with a message naming the
 * field, the category and why (issue 17). One row per field and category
 * kind; test_option_rows_cover_crd checks the table against the CRD. */
#define LIM_NODE                                                                  \
    "/dependencies/0/spec/template/spec/replicatedJobs/1/template/spec/template/" \
    "spec/containers/0/resources/limits"
#define TRAINER "/jobTemplate/spec/workload/trainJob/trainer"
static const struct {
    const char *field, *variant, *options; /* category options (YAML) */
    const char *ptr, *want;                /* reaches: the value at ptr (YAML) */
    const char *refused;                   /* or: part of the refusal */
} option_rows[] = {
    {"nodesPerJob", "communication/nccl-all-reduce", "nodesPerJob: 4", TRAINER "/numNodes", "4",
     NULL},
    {"nodesPerJob", "diagnostics/dcgm-level1", "nodesPerJob: 4", NULL, NULL,
     "options.nodesPerJob: diagnostics/dcgm-level1 cannot use it: it runs one node per Job"},
    {"gpusPerNode", "communication/nccl-all-reduce", "gpusPerNode: 4",
     "/dependencies/0/spec/mlPolicy/mpi/numProcPerNode", "4", NULL},
    {"gpusPerNode", "diagnostics/dcgm-level1", "gpusPerNode: 4",
     "/dependencies/0/spec/template/spec/replicatedJobs/0/template/spec/template/spec/containers/"
     "0/resources/limits/nvidia.com~1gpu",
     "4", NULL},
    {"mlnxPerNode", "communication/nccl-all-reduce", "mlnxPerNode: 4",
     LIM_NODE "/vpc.amazonaws.com~1efa", "4", NULL},
    {"mlnxPerNode", "communication/nccl-loopback", "mlnxPerNode: 4", NULL, NULL,
     "options.mlnxPerNode: communication/nccl-loopback cannot use it: it runs on one node and "
     "requests no network NICs"},
    {"nicResourceName", "communication/nccl-all-gather", "nicResourceName: rdma/ib",
     LIM_NODE "/rdma~1ib", "32", NULL},
    {"nicResourceName", "diagnostics/dcgm-level2", "nicResourceName: rdma/ib", NULL, NULL,
     "options.nicResourceName: diagnostics/dcgm-level2 cannot use it"},
    {"resources", "communication/nccl-alltoall", "resources: {limits: {cpu: \"8\"}}",
     LIM_NODE "/cpu", "\"8\"", NULL},
    {"enableMNNVL", "communication/nccl-all-reduce", "enableMNNVL: true", "/dependencies/1/kind",
     "ComputeDomain", NULL},
    {"enableMNNVL", "communication/nccl-loopback-nvswitch", "enableMNNVL: true", NULL, NULL,
     "it runs on one node, where NVLink needs no ComputeDomain"},
    {"image", "diagnostics/dcgm-level3", "image: mirror.local/dcgm:1", TRAINER "/image",
     "mirror.local/dcgm:1", NULL},
    {"imagePullSecrets", "communication/nccl-all-reduce", "imagePullSecrets: [{name: regcred}]",
     "/dependencies/0/spec/template/spec/replicatedJobs/1/template/spec/template/spec/"
     "imagePullSecrets/0/name",
     "regcred", NULL},
    {"maxBytes", "communication/nccl-all-reduce", "maxBytes: 8G", TRAINER "/args/9", "\"8G\"",
     NULL},
    {"maxBytes", "communication/nccl-loopback", "maxBytes: 8G", NULL, NULL,
     "options.maxBytes: communication/nccl-loopback cannot use it: it does not run the "
     "nccl-tests message-size sweep"},
    {"numIterations", "communication/nccl-all-reduce", "numIterations: 20", TRAINER "/args/15",
     "\"20\"", NULL},
    {"numIterations", "communication/nccl-loopback", "numIterations: 20", TRAINER "/env/0/value",
     "\"20\"", NULL},
    {"numIterations", "diagnostics/dcgm-level1", "numIterations: 20", NULL, NULL,
     "it has no iteration count"},
    {"numCycles", "communication/nccl-all-gather", "numCycles: 3", TRAINER "/args/17", "\"3\"",
     NULL},
    {"numCycles", "diagnostics/dcgm-level1", "numCycles: 3", NULL, NULL,
     "options.numCycles: diagnostics/dcgm-level1 cannot use it"},
    {"thresholds", "communication/nccl-loopback", "thresholds: {busBandwidthGBps: \"value > 1\"}",
     "/validation/performance/thresholds/thresholds/busBandwidthGBps", "\"value > 1\"", NULL},
    {"thresholds", "diagnostics/dcgm-level4", "thresholds: {busBandwidthGBps: \"value > 1\"}", NULL,
     NULL, "it has no bandwidth measurement to judge"},
    {"measurementTimeout", "communication/nccl-all-reduce",
     "{thresholds: {busBandwidthGBps: \"value > 1\"}, measurementTimeout: 9m}",
     "/validation/performance/measurementTimeout", "9m", NULL},
    {"measurementTimeout", "communication/nccl-all-reduce", "measurementTimeout: 9m", NULL, NULL,
     "which happens only when thresholds are set"},
    {"maxConcurrent", "diagnostics/dcgm-level1", "maxConcurrent: 2",
     "/orchestration/execution/maxConcurrent", "2", NULL},
    {"repeatCount", "communication/nccl-all-reduce", "repeatCount: 3", "/orchestration/iterations",
     "3", NULL},
    {"timeoutPerJob", "diagnostics/dcgm-level1", "timeoutPerJob: 30m",
     "/orchestration/execution/timeoutPerJob", "30m", NULL},
    {"startupStallTimeoutSeconds", "communication/nccl-all-reduce",
     "startupStallTimeoutSeconds: 120", "/jobTemplate/spec/startupStallTimeoutSeconds", "120",
     NULL},
    {"workloadMetadata", "diagnostics/dcgm-level1", "workloadMetadata: {labels: {team: a}}",
     "/jobTemplate/spec/workloadMetadata/labels/team", "a", NULL},
    {"placement", "communication/nccl-all-reduce", "placement: Unpinned",
     "/orchestration/placement", "Unpinned", NULL},
    {"placement", "diagnostics/dcgm-level1", "placement: Pinned", "/orchestration/placement",
     "Pinned", NULL},
    {"testScale", "communication/nccl-all-reduce", "testScale: intra-node", TRAINER "/numNodes",
     "1", NULL},
    {"testScale", "communication/nccl-all-reduce", "testScale: diagnose",
     "/orchestration/diagnose/minGroupSize", "2", NULL},
    {"testScale", "communication/nccl-all-reduce", "testScale: diagnose",
     "/orchestration/execution/timeoutPerJob", "15m", NULL}, /* §1.1: 15m for diagnose */
    {"testScale", "communication/nccl-all-gather", "testScale: intra-rack",
     "/orchestration/topology", "{topologyKey: nvidia.com/gpu.clique, strictDomain: true}", NULL},
    {"testScale", "diagnostics/dcgm-level1", "testScale: intra-node", TRAINER "/numNodes", "1",
     NULL},
    {"testScale", "diagnostics/dcgm-level1", "testScale: diagnose", NULL, NULL,
     "options.testScale: diagnostics/dcgm-level1 cannot use it: diagnose and intra-rack split "
     "multi-node groups"},
    {"minGroupSize", "communication/nccl-alltoall", "{testScale: diagnose, minGroupSize: 4}",
     "/orchestration/diagnose/minGroupSize", "4", NULL},
    {"minGroupSize", "communication/nccl-alltoall", "minGroupSize: 4", NULL, NULL,
     "applies only with testScale: diagnose"},
    /* training-only fields: no category of this catalog trains */
    {"enableCheckpoint", "communication/nccl-all-reduce", "enableCheckpoint: true", NULL, NULL,
     "options.enableCheckpoint: communication/nccl-all-reduce cannot use it: it configures "
     "training runs"},
    {"maxSteps", "diagnostics/dcgm-level1", "maxSteps: 10", NULL, NULL, "training runs"},
    {"exitDurationMins", "communication/nccl-all-reduce", "exitDurationMins: 5", NULL, NULL,
     "training runs"},
    {"saveInterval", "communication/nccl-all-reduce", "saveInterval: 5", NULL, NULL,
     "training runs"},
    {"saveRetainInterval", "communication/nccl-all-reduce", "saveRetainInterval: 5", NULL, NULL,
     "training runs"},
    {"saveTopK", "communication/nccl-all-reduce", "saveTopK: 2", NULL, NULL, "training runs"},
    {"storageSize", "communication/nccl-all-reduce", "storageSize: 1Ti", NULL, NULL,
     "training runs"},
    {"storageClassName", "communication/nccl-all-reduce", "storageClassName: fast", NULL, NULL,
     "training runs"},
    {"maxRestarts", "communication/nccl-all-reduce", "maxRestarts: 2", NULL, NULL, "training runs"},
    {"sourceRepo", "communication/nccl-all-reduce", "sourceRepo: https://git.local/x", NULL, NULL,
     "training runs"},
};

static void test_option_rows(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof option_rows / sizeof option_rows[0]; i++) {
        char dv[128];
        snprintf(dv, sizeof dv, "%s", option_rows[i].variant);
        char *slash = strchr(dv, '/');
        *slash = '\0';
        json_t *co = yaml(option_rows[i].options);
        json_t *target = yaml("nodeSelector: {nvidia.com/gpu.present: \"true\"}");
        gr_nvcre_catalog_req req = {dv, slash + 1, "aws", "h100", target, NULL, co};
        json_t *spec = NULL;
        gr_err err = {0};
        int rc = gr_nvcre_catalog_render(cat, &req, &spec, NULL, &err);
        if (option_rows[i].refused) {
            if (rc != GR_EINVAL || !strstr(err.msg, option_rows[i].refused))
                fail_msg("%s on %s: want refusal \"%s\", got rc %d \"%s\"", option_rows[i].field,
                         option_rows[i].variant, option_rows[i].refused, rc, err.msg);
            assert_null(spec);
            /* a global value is not refused by the category alone */
            req.global_options = co;
            req.category_options = NULL;
            json_t *unused = NULL;
            assert_int_equal(gr_nvcre_catalog_render(cat, &req, &spec, NULL, &err), GR_OK);
            json_decref(spec);
            assert_int_equal(gr_nvcre_catalog_check_options(cat, &req, &unused, &err), GR_OK);
            assert_true(json_array_size(unused) >= 1);
            assert_string_equal(
                json_string_value(json_object_get(json_array_get(unused, 0), "scope")), "global");
            json_decref(unused);
        } else {
            if (rc != GR_OK)
                fail_msg("%s on %s: %s", option_rows[i].field, option_rows[i].variant, err.msg);
            json_t *want = yaml(option_rows[i].want);
            const json_t *got = gr_json_ptr_get(spec, option_rows[i].ptr);
            if (!got || !json_equal(got, want)) {
                char *g = got ? json_dumps(got, JSON_ENCODE_ANY) : NULL;
                fail_msg("%s on %s: %s is %s, want %s", option_rows[i].field,
                         option_rows[i].variant, option_rows[i].ptr, g ? g : "(absent)",
                         option_rows[i].want);
            }
            json_decref(want);
            json_decref(spec);
        }
        json_decref(co);
        json_decref(target);
    }
}

/* The table above names every CategoryOptions field of the CRD. */
static void test_option_rows_cover_crd(void **state)
{
    (void)state;
    const char *src = getenv("GR_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/deploy/crds/nvcre.nvidia.com_certifications.yaml",
             src ? src : GR_NVCRE_SOURCE_DIR);
    json_t *crd = NULL;
    gr_err err;
    if (gr_yaml_load_file(path, 0, &crd, &err) != GR_OK)
        fail_msg("%s", err.msg);
    const json_t *props = gr_json_ptr_get(
        json_array_get(crd, 0), "/spec/versions/0/schema/openAPIV3Schema/properties/spec/"
                                "properties/categories/items/properties/options/properties");
    assert_true(json_object_size(props) >= 30);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)(uintptr_t)props, k, v)
    {
        bool found = false;
        for (size_t i = 0; i < sizeof option_rows / sizeof option_rows[0]; i++)
            found |= !strcmp(option_rows[i].field, k);
        if (!found)
            fail_msg("CategoryOptions.%s has no row in option_rows: make it reach the workload "
                     "or refuse it, and add a row",
                     k);
    }
    json_decref(crd);
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
        cmocka_unit_test(test_option_rows),
        cmocka_unit_test(test_option_rows_cover_crd),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
