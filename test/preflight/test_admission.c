/*
 * test_admission.c — AdmissionReview handling and the config defaults that
 * the table-driven fixtures cannot express (HTTP 400, nil request, the gang
 * registration hook, ConfigMap naming, YAML output, unknown-key warnings).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gr_json.h"
#include "gr_preflight.h"
#include "gr_yaml.h"

static const char k_cfg[] = "connectorSocket: \"\"\n"
                            "gangCoordination: {enabled: true}\n"
                            "initContainers:\n"
                            "  - {name: preflight-dcgm-diag, image: dcgm:v1}\n";

static gr_preflight_config *load(const char *text)
{
    gr_preflight_config *cfg = NULL;
    gr_err err;
    if (gr_preflight_config_parse(text, strlen(text), "t", NULL, NULL, &cfg, &err) != GR_OK)
        fail_msg("config: %s", err.msg);
    return cfg;
}

static json_t *admit(const gr_preflight_config *cfg, const gr_preflight_gang_ops *ops,
                     const char *body, gr_preflight_admission *a)
{
    assert_int_equal(gr_preflight_admit(cfg, ops, body, strlen(body), a), GR_OK);
    if (a->http_status != 200)
        return NULL;
    json_t *doc = NULL;
    gr_err err;
    assert_int_equal(gr_json_parse(a->body, a->body_len, 0, "r", &doc, &err), GR_OK);
    return doc;
}

static void test_unreadable_review_is_400(void **state)
{
    (void)state;
    gr_preflight_config *cfg = load(k_cfg);
    static const char *const bad[] = {
        "", "{", "[]", "\"x\"", "{\"request\":5}", "{\"request\":{\"uid\":7}}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gr_preflight_admission a;
        assert_null(admit(cfg, NULL, bad[i], &a));
        assert_int_equal(a.http_status, 400);
        assert_string_equal(a.body, "failed to unmarshal admission review\n");
        assert_int_equal(a.result, GR_PREFLIGHT_ADMIT_ERROR);
        gr_preflight_admission_clear(&a);
    }
    gr_preflight_config_free(cfg);
}

static void test_nil_request_allowed(void **state)
{
    (void)state;
    gr_preflight_config *cfg = load(k_cfg);
    gr_preflight_admission a;
    json_t *doc = admit(cfg, NULL, "{\"apiVersion\":\"admission.k8s.io/v1\"}", &a);
    assert_non_null(doc);
    assert_true(json_is_true(gr_json_ptr_get(doc, "/response/allowed")));
    assert_null(gr_json_ptr_get(doc, "/response/patch"));
    json_decref(doc);
    gr_preflight_admission_clear(&a);
    gr_preflight_config_free(cfg);
}

static void test_missing_object_denied(void **state)
{
    (void)state;
    gr_preflight_config *cfg = load(k_cfg);
    gr_preflight_admission a;
    json_t *doc = admit(cfg, NULL, "{\"request\":{\"uid\":\"u1\"}}", &a);
    assert_true(json_is_false(gr_json_ptr_get(doc, "/response/allowed")));
    assert_string_equal(json_string_value(gr_json_ptr_get(doc, "/response/uid")), "u1");
    assert_string_equal(json_string_value(gr_json_ptr_get(doc, "/response/status/message")),
                        "failed to unmarshal pod: request.object is missing");
    json_decref(doc);
    gr_preflight_admission_clear(&a);
    gr_preflight_config_free(cfg);
}

/* gang hook recorder */
typedef struct rec {
    int resolved, admitted;
    char ns[64], name[64], id[128];
} rec;

static int rec_resolve(void *ud, const json_t *pod, const char *ns, gr_preflight_gang_ctx *ctx,
                       gr_err *err)
{
    (void)pod;
    (void)err;
    rec *r = ud;
    r->resolved++;
    snprintf(r->ns, sizeof r->ns, "%s", ns);
    ctx->gang_id = strdup("g-1");
    ctx->configmap_name = strdup("preflight-g-1");
    return GR_OK;
}

static void rec_admitted(void *ud, const json_t *pod, const char *ns, const char *name,
                         const gr_preflight_gang_ctx *ctx)
{
    (void)pod;
    rec *r = ud;
    r->admitted++;
    snprintf(r->ns, sizeof r->ns, "%s", ns);
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->id, sizeof r->id, "%s", ctx->gang_id);
}

#define GPU_POD_NO_NS                                                                        \
    "{\"metadata\":{\"generateName\":\"train-\"},\"spec\":{\"containers\":[{\"name\":\"m\"," \
    "\"image\":\"x\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}"

static void test_gang_hook_namespace_backfill_and_generate_name(void **state)
{
    (void)state;
    gr_preflight_config *cfg = load(k_cfg);
    rec r = {0};
    gr_preflight_gang_ops ops = {.resolve = rec_resolve, .admitted = rec_admitted, .ud = &r};
    gr_preflight_admission a;
    json_t *doc = admit(
        cfg, &ops,
        "{\"request\":{\"uid\":\"abc\",\"namespace\":\"team-x\",\"object\":" GPU_POD_NO_NS "}}",
        &a);
    assert_string_equal(json_string_value(gr_json_ptr_get(doc, "/response/uid")), "abc");
    assert_string_equal(json_string_value(gr_json_ptr_get(doc, "/response/patchType")),
                        "JSONPatch");
    assert_int_equal(r.resolved, 1);
    assert_int_equal(r.admitted, 1);       /* registration after a patch (facts 2.2.7) */
    assert_string_equal(r.ns, "team-x");   /* namespace from the request (facts 2.2.4) */
    assert_string_equal(r.name, "train-"); /* generateName fallback */
    assert_string_equal(r.id, "g-1");
    assert_string_equal(a.pod_name, "train-");
    assert_int_equal(a.n_injected, 1);
    json_decref(doc);
    gr_preflight_admission_clear(&a);

    /* dry run: same patch, no registration side effect */
    r.admitted = 0;
    doc = admit(
        cfg, &ops,
        "{\"request\":{\"uid\":\"d\",\"dryRun\":true,\"namespace\":\"n\",\"object\":" GPU_POD_NO_NS
        "}}",
        &a);
    assert_non_null(gr_json_ptr_get(doc, "/response/patch"));
    assert_int_equal(r.admitted, 0);
    json_decref(doc);
    gr_preflight_admission_clear(&a);

    /* empty annotation: no patch, so no registration (facts 2.2.6) */
    doc =
        admit(cfg, &ops,
              "{\"request\":{\"uid\":\"e\",\"object\":{\"metadata\":{\"name\":\"p\",\"namespace\":"
              "\"n\",\"annotations\":{\"nvsentinel.nvidia.com/preflight-checks\":\"\"}},"
              "\"spec\":{\"containers\":[{\"name\":\"m\",\"resources\":{\"limits\":{"
              "\"nvidia.com/gpu\":2}}}]}}}}",
              &a);
    assert_null(gr_json_ptr_get(doc, "/response/patch"));
    assert_true(json_is_true(gr_json_ptr_get(doc, "/response/allowed")));
    assert_int_equal(r.admitted, 0);
    assert_int_equal(a.result, GR_PREFLIGHT_ADMIT_SKIPPED);
    json_decref(doc);
    gr_preflight_admission_clear(&a);
    gr_preflight_config_free(cfg);
}

static void test_gang_id_configmap_names(void **state)
{
    (void)state;
    /* facts 3.6 goldens (PF-113, PF-153) */
    static const char *const cases[][2] = {
        {"volcano-ns-pg", "preflight-volcano-ns-pg"},
        {"volcano-ns/pod_group", "preflight-volcano-ns-pod-group"},
        {"osmo-with-kai-team-a-myjob", "preflight-osmo-with-kai-team-a-myjob"},
        {"volcano-very-long-namespace-name-that-exceeds-limits-podgroup-name-also-long",
         "preflight-volcano-very-long-namespace-name-that-exceed-01e3ee68"},
        {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
         "xxxxxxxxxxx",
         "preflight-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-09ecb6eb"},
        {"--A__b--", "preflight-a-b"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *n = gr_preflight_gang_configmap_name(cases[i][0]);
        assert_non_null(n);
        assert_string_equal(n, cases[i][1]);
        assert_true(strlen(n) <= 63);
        free(n);
    }
    /* sanitize alone (also the gang-id label value): <=63 kept, empty ->
     * the sha256 prefix; a name built from it still fits (PF-153) */
    char *s = gr_preflight_gang_sanitize("A/B");
    assert_string_equal(s, "a-b");
    free(s);
    s = gr_preflight_gang_sanitize("///");
    assert_int_equal(strlen(s), 63);
    assert_true(strspn(s, "0123456789abcdef") == 63);
    free(s);
    char *cm = gr_preflight_gang_configmap_name("///");
    assert_true(strlen(cm) <= 63);
    assert_memory_equal(cm, "preflight-", 10);
    free(cm);
}

static void test_config_defaults(void **state)
{
    (void)state;
    gr_preflight_config *cfg = load("{}");
    /* PF-80 */
    static const char *const env[] = {"NCCL_*", "FI_*",         "LD_LIBRARY_PATH",
                                      "UCX_*",  "TORCH_NCCL_*", "CUDA_DEVICE_ORDER"};
    assert_int_equal(cfg->nccl_env_patterns.n, 6);
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(cfg->nccl_env_patterns.v[i], env[i]);
    /* PF-81 */
    static const char *const mnt[] = {"host-opt-amazon*", "nvtcpxo-*", "nccl-*", "dev-shm"};
    assert_int_equal(cfg->volume_mount_patterns.n, 4);
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(cfg->volume_mount_patterns.v[i], mnt[i]);
    assert_int_equal(cfg->gpu_resource_names.n, 1);
    assert_string_equal(cfg->gpu_resource_names.v[0], "nvidia.com/gpu");
    assert_int_equal(cfg->placement, GR_PREFLIGHT_APPEND);                         /* PF-26 */
    assert_string_equal(cfg->processing_strategy, "EXECUTE_REMEDIATION");          /* PF-42 */
    assert_string_equal(cfg->connector_socket, "unix:///var/run/nvsentinel.sock"); /* PF-161 */
    assert_int_equal(cfg->gang.timeout_ns, INT64_C(600) * 1000000000);             /* PF-154 */
    assert_int_equal(cfg->gang.master_port, 29500);                                /* PF-155 */
    assert_string_equal(cfg->gang.configmap_mount_path, "/etc/preflight");         /* PF-146 */
    assert_string_equal(cfg->gang.nccl_topo_configmap, "");                        /* PF-156 */
    assert_string_equal(cfg->gang.nccl_topo_shape, "");                            /* PF-157 */
    assert_int_equal(cfg->gang.n_extra_host_path_mounts, 0);                       /* PF-158 */
    assert_int_equal(cfg->gang.n_extra_volume_mounts, 0);                          /* PF-159 */
    assert_true(cfg->gang.mirror_resource_claims);                                 /* PF-160 */
    assert_null(cfg->token_audience);
    assert_int_equal(cfg->publish.mode, GR_PREFLIGHT_PUBLISH_SOCKET);
    assert_int_equal(json_object_size(cfg->gang_discovery), 0); /* {} = native, PF-09 */
    gr_preflight_config_free(cfg);

    /* PF-100 / R3: minCountExpr defaults to podGroup.spec.minMember */
    cfg = load(
        "gangCoordination: {enabled: true}\n"
        "gangDiscovery: {name: volcano, annotationKeys: [scheduling.k8s.io/group-name],\n"
        "  podGroupGVR: {group: scheduling.volcano.sh, version: v1beta1, resource: podgroups}}\n");
    assert_string_equal(json_string_value(json_object_get(cfg->gang_discovery, "minCountExpr")),
                        "podGroup.spec.minMember");
    gr_preflight_config_free(cfg);

    /* ncclTopoShape without a ConfigMap name selects preflight-nccl-topo */
    cfg = load("gangCoordination: {enabled: true, ncclTopoShape: ndv5}\n");
    assert_string_equal(cfg->gang.nccl_topo_configmap, "preflight-nccl-topo");
    gr_preflight_config_free(cfg);

    /* keys match case-insensitively, like upstream */
    cfg = load("GPUResourceNames: [example.com/gpu]\ninitcontainerplacement: prepend\n");
    assert_string_equal(cfg->gpu_resource_names.v[0], "example.com/gpu");
    assert_int_equal(cfg->placement, GR_PREFLIGHT_PREPEND);
    gr_preflight_config_free(cfg);
}

static void warn_collect(void *ud, const char *msg)
{
    gr_buf *b = ud;
    gr_buf_puts(b, msg);
    gr_buf_putc(b, '\n');
}

/* Grove (docs/gang.md § Grove): the shorthand is filled in; no minCountExpr
 * default for the PodGang GVR (it has no spec.minMember); other CRDs still
 * get PF-100's default. */
static const char *gd_str(const gr_preflight_config *cfg, const char *k)
{
    return json_string_value(json_object_get(cfg->gang_discovery, k));
}

static const char *gvr_str(const gr_preflight_config *cfg, const char *k)
{
    return json_string_value(
        json_object_get(json_object_get(cfg->gang_discovery, "podGroupGVR"), k));
}

static void test_config_grove(void **state)
{
    (void)state;
    gr_preflight_config *cfg =
        load("{gangCoordination: {enabled: true}, gangDiscovery: {name: grove}}");
    const json_t *lk = json_object_get(cfg->gang_discovery, "labelKeys");
    assert_int_equal(json_array_size(lk), 1);
    assert_string_equal(json_string_value(json_array_get(lk, 0)), "grove.io/podgang");
    assert_string_equal(gvr_str(cfg, "group"), "scheduler.grove.io");
    assert_string_equal(gvr_str(cfg, "version"), "v1alpha1");
    assert_string_equal(gvr_str(cfg, "resource"), "podgangs");
    assert_string_equal(gd_str(cfg, "minCountExpr"), "");
    gr_preflight_config_free(cfg);

    /* spelled out, another name: still no minMember default */
    cfg = load("{gangCoordination: {enabled: true}, gangDiscovery: {name: dynamo, labelKeys: "
               "[grove.io/podgang], podGroupGVR: {group: scheduler.grove.io, version: v1alpha1, "
               "resource: podgangs}}}");
    assert_string_equal(gd_str(cfg, "minCountExpr"), "");
    gr_preflight_config_free(cfg);

    /* an explicit expression is kept */
    cfg = load("{gangCoordination: {enabled: true}, gangDiscovery: {name: grove, minCountExpr: "
               "'size(podGroup.spec.podgroups)'}}");
    assert_string_equal(gd_str(cfg, "minCountExpr"), "size(podGroup.spec.podgroups)");
    assert_string_equal(gvr_str(cfg, "resource"), "podgangs");
    gr_preflight_config_free(cfg);

    /* PF-100: a non-Grove CRD block still defaults */
    cfg = load("{gangCoordination: {enabled: true}, gangDiscovery: {name: volcano, labelKeys: [x], "
               "podGroupGVR: {group: scheduling.volcano.sh, version: v1beta1, resource: "
               "podgroups}}}");
    assert_string_equal(gd_str(cfg, "minCountExpr"), "podGroup.spec.minMember");
    gr_preflight_config_free(cfg);
}

static void test_unknown_keys_warned(void **state)
{
    (void)state;
    gr_buf w = GR_BUF_INIT((size_t)64 << 20);
    gr_preflight_config *cfg = NULL;
    const char *text = "gpuResourceName: [x]\nimageCache: {enabled: false}\n";
    assert_int_equal(
        gr_preflight_config_parse(text, strlen(text), "t", warn_collect, &w, &cfg, NULL), GR_OK);
    assert_string_equal(gr_buf_cstr(&w),
                        "config key \"gpuResourceName\" is not used by preflight; ignored\n"
                        "config key \"imageCache\" is not used by preflight; ignored\n");
    gr_buf_free(&w);
    gr_preflight_config_free(cfg);
}

static void test_yaml_emit_round_trips(void **state)
{
    (void)state;
    const char *j = "{\"a\":\"8\",\"b\":[{\"name\":\"x\",\"v\":true,\"n\":3},[1,[]],{}],"
                    "\"c\":\"true\",\"d\":\"hello world\",\"e\":{},\"f\":\"unix:///x\","
                    "\"g\":\"a: b\",\"h\":null,\"i\":\"\",\"j\":\"-x\",\"k\":\"null\","
                    "\"l\":\"multi\\nline\",\"nvidia.com/gpu\":\"500Mi\",\"m\":1.5}";
    json_t *v = NULL, *back = NULL;
    gr_err err;
    assert_int_equal(gr_json_parse(j, strlen(j), 0, "j", &v, &err), GR_OK);
    gr_buf y = GR_BUF_INIT((size_t)64 << 20);
    assert_int_equal(gr_preflight_yaml_emit(v, &y), GR_OK);
    if (gr_yaml_load_one(y.data, y.len, "y", &back, &err) != GR_OK)
        fail_msg("%s\n%s", err.msg, y.data);
    assert_true(gr_json_equal(v, back));
    gr_buf_free(&y);
    json_decref(v);
    json_decref(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unreadable_review_is_400),
        cmocka_unit_test(test_nil_request_allowed),
        cmocka_unit_test(test_missing_object_denied),
        cmocka_unit_test(test_gang_hook_namespace_backfill_and_generate_name),
        cmocka_unit_test(test_gang_id_configmap_names),
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_config_grove),
        cmocka_unit_test(test_unknown_keys_warned),
        cmocka_unit_test(test_yaml_emit_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
