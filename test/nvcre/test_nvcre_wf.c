/*
 * nvcre_wf (unit): the Workflow controller's pure logic (gr_nvcre_wf.h):
 * override families of upstream's apply-overrides unit fixtures, the gang
 * contract (WF-13..49), detection and discovery, partitioning, naming,
 * timeouts, final status and the node-result payloads.
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
#include <openssl/evp.h>
#include <zlib.h>

#include "gr_json.h"
#include "gr_nvcre_types.h"
#include "gr_nvcre_wf.h"

static json_t *J(const char *s)
{
    json_error_t je;
    json_t *v = json_loads(s, JSON_DECODE_ANY, &je);
    if (!v)
        fail_msg("bad JSON literal (%s): %s", je.text, s);
    return v;
}

/* want "missing": the member must be absent. */
static void assert_json_at(const json_t *doc, const char *ptr, const char *want)
{
    json_t *got = gr_json_ptr_get(doc, ptr);
    if (!strcmp(want, "missing")) {
        if (got)
            fail_msg("%s: present, want missing", ptr);
        return;
    }
    json_t *w = J(want);
    if (!gr_json_equal(got, w)) {
        char *g = got ? json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY) : strdup("(missing)");
        fail_msg("%s: got %s, want %s", ptr, g, want);
    }
    json_decref(w);
}

static const char *BASE_SPEC =
    "{\"jobTemplate\":{\"metadata\":{\"labels\":{\"a\":\"1\"}},\"spec\":{"
    "\"workload\":{\"trainJob\":{\"runtimeRef\":{\"kind\":\"TrainingRuntime\",\"name\":\"rt\"},"
    "\"trainer\":{\"image\":\"img:1\",\"numNodes\":2,\"args\":[\"-b\",\"8\"],"
    "\"env\":[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\"2\"}]}}}}},"
    "\"dependencies\":[{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
    "\"TrainingRuntime\",\"metadata\":{\"name\":\"rt\"},\"spec\":{\"template\":{\"spec\":{"
    "\"replicatedJobs\":[{\"name\":\"node\",\"replicas\":1,\"template\":{\"spec\":{\"template\":"
    "{\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":\"x\"}]}}}}}]}}}}],"
    "\"orchestration\":{\"iterations\":1}}";

typedef struct ov_case {
    const char *name; /* upstream unit family */
    const char *overrides;
    const char *ptr; /* checked member of the effective spec */
    const char *want;
    int applied; /* appliedOverrides entries */
} ov_case;

/* WF-43, WF-64, WF-68: matching overrides apply in order; non-matching do not. */
static const ov_case ov_cases[] = {
    {"add-new-field",
     "[{\"when\":{\"platform\":{\"equals\":\"aws\"}},\"jobTemplate\":{\"spec\":{"
     "\"stallMultiplier\":3}}}]",
     "/jobTemplate/spec/stallMultiplier", "3", 1},
    {"no-match",
     "[{\"when\":{\"platform\":{\"equals\":\"gcp\"}},\"jobTemplate\":{\"spec\":{"
     "\"stallMultiplier\":3}}}]",
     "/jobTemplate/spec/stallMultiplier", "missing", 0},
    {"trainer-env-replacement",
     "[{\"when\":{},\"jobTemplate\":{\"spec\":{\"workload\":{\"trainJob\":{\"trainer\":{\"env\":"
     "[{\"name\":\"C\",\"value\":\"3\"}]}}}}}}]",
     "/jobTemplate/spec/workload/trainJob/trainer/env", "[{\"name\":\"C\",\"value\":\"3\"}]", 1},
    {"null-field-deletion",
     "[{\"when\":{},\"jobTemplate\":{\"spec\":{\"workload\":{\"trainJob\":{\"trainer\":{\"args\":"
     "null}}}}}}]",
     "/jobTemplate/spec/workload/trainJob/trainer/args", "missing", 1},
    {"named-array-merge (metadata is ObjectMeta: finalizers merge)",
     "[{\"when\":{},\"jobTemplate\":{\"metadata\":{\"labels\":{\"b\":\"2\"},\"finalizers\":[\"x\"]}"
     "}}]",
     "/jobTemplate/metadata", "{\"labels\":{\"a\":\"1\",\"b\":\"2\"},\"finalizers\":[\"x\"]}", 1},
    {"job-template-patch",
     "[{\"when\":{},\"jobTemplatePatch\":[{\"op\":\"add\",\"path\":\"/spec/workload/trainJob/"
     "trainer/args/-\",\"value\":\"-g\"}]}]",
     "/jobTemplate/spec/workload/trainJob/trainer/args", "[\"-b\",\"8\",\"-g\"]", 1},
    {"json-patch-replace",
     "[{\"when\":{},\"jobTemplatePatch\":[{\"op\":\"replace\",\"path\":\"/spec/workload/trainJob/"
     "trainer/image\",\"value\":\"img:2\"}]}]",
     "/jobTemplate/spec/workload/trainJob/trainer/image", "\"img:2\"", 1},
    {"json-patch-with-test",
     "[{\"when\":{},\"jobTemplatePatch\":[{\"op\":\"test\",\"path\":\"/spec/workload/trainJob/"
     "trainer/image\",\"value\":\"img:1\"},"
     "{\"op\":\"replace\",\"path\":\"/spec/workload/trainJob/trainer/"
     "image\",\"value\":\"img:3\"}]}]",
     "/jobTemplate/spec/workload/trainJob/trainer/image", "\"img:3\"", 1},
    {"strategic-then-json-patch",
     "[{\"when\":{},\"jobTemplate\":{\"spec\":{\"workload\":{\"trainJob\":{\"trainer\":{\"image\":"
     "\"img:4\"}}}}},"
     "\"jobTemplatePatch\":[{\"op\":\"test\",\"path\":\"/spec/workload/trainJob/trainer/"
     "image\",\"value\":\"img:4\"},"
     "{\"op\":\"add\",\"path\":\"/spec/workload/trainJob/trainer/image\",\"value\":\"img:5\"}]}]",
     "/jobTemplate/spec/workload/trainJob/trainer/image", "\"img:5\"", 1},
    {"multiple-matches",
     "[{\"when\":{\"platform\":{\"in\":[\"aws\",\"gcp\"]}},\"jobTemplate\":{\"spec\":{\"workload\":"
     "{\"trainJob\":{\"trainer\":{\"image\":\"m1\"}}}}}},"
     "{\"when\":{\"gpuArchitecture\":{\"notIn\":[\"gb200\"]}},\"jobTemplate\":{\"spec\":{"
     "\"workload\":{\"trainJob\":{\"trainer\":{\"image\":\"m2\"}}}}}}]",
     "/jobTemplate/spec/workload/trainJob/trainer/image", "\"m2\"", 2},
    {"dependency-merge",
     "[{\"when\":{},\"dependencies\":[{\"apiVersion\":\"trainer.kubeflow.org/"
     "v1alpha1\",\"kind\":\"TrainingRuntime\","
     "\"metadata\":{\"name\":\"rt\"},\"spec\":{\"template\":{\"spec\":{\"replicatedJobs\":[{"
     "\"name\":\"node\",\"replicas\":null,"
     "\"template\":{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":"
     "\"y\"}]}}}}}]}}}}]}]",
     "/dependencies/0/spec/template/spec/replicatedJobs/0",
     "{\"name\":\"node\",\"template\":{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":"
     "\"node\",\"image\":\"y\"}]}}}}}",
     1},
    {"dependency-append",
     "[{\"when\":{},\"dependencies\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
     "\"name\":\"cm\"}}]}]",
     "/dependencies/1/metadata/name", "\"cm\"", 1},
    {"orchestration-iterations-override", "[{\"when\":{},\"orchestration\":{\"iterations\":3}}]",
     "/orchestration/iterations", "3", 1},
    {"orchestration-topology-override",
     "[{\"when\":{\"topology\":{\"mode\":\"simple\"}},\"orchestration\":{\"topology\":{"
     "\"topologyKey\":\"rack\"}}}]",
     "/orchestration/topology", "{\"topologyKey\":\"rack\"}", 1},
    {"cel expression",
     "[{\"when\":{\"expression\":\"platform == 'aws' && gpuArchitecture.startsWith('h') && "
     "domainCount == 0\"},"
     "\"orchestration\":{\"iterations\":7}}]",
     "/orchestration/iterations", "7", 1},
};

static void test_override_families(void **state)
{
    (void)state;
    gr_nvcre_wf_ctx ctx = {"aws", "h100", "TrainJob", "simple", 0};
    for (size_t i = 0; i < sizeof(ov_cases) / sizeof(ov_cases[0]); i++) {
        json_t *spec = J(BASE_SPEC);
        json_object_set_new(spec, "overrides", J(ov_cases[i].overrides));
        json_t *before = json_deep_copy(spec);
        json_t *eff = NULL, *trk = NULL, *events = json_array();
        const char *reason = NULL;
        gr_err err = {0};
        int rc = gr_nvcre_wf_apply_overrides(spec, &ctx, &eff, &trk, events, &reason, &err);
        if (rc != GR_OK)
            fail_msg("%s: %s", ov_cases[i].name, err.msg);
        assert_json_at(eff, ov_cases[i].ptr, ov_cases[i].want);
        assert_int_equal(json_array_size(trk), ov_cases[i].applied);
        assert_true(gr_json_equal(spec, before)); /* input untouched */
        /* WF-64: one event per match, NoOverridesMatched otherwise. */
        assert_int_equal(json_array_size(events), ov_cases[i].applied ? ov_cases[i].applied : 1);
        json_decref(spec);
        json_decref(before);
        json_decref(eff);
        json_decref(trk);
        json_decref(events);
    }
}

static void test_override_tracking_and_events(void **state)
{
    (void)state;
    json_t *spec = J(BASE_SPEC);
    json_object_set_new(spec, "overrides",
                        J("[{\"when\":{\"platform\":{\"equals\":\"aws\"},\"gpuArchitecture\":{"
                          "\"equals\":\"h100\"}},"
                          "\"jobTemplate\":{\"spec\":{\"workload\":{\"trainJob\":{\"trainer\":{"
                          "\"image\":\"img:1\"}}}}}},"
                          "{\"when\":{\"platform\":{\"in\":[\"aws\",\"gcp\"]}},\"orchestration\":{"
                          "\"iterations\":2}}]"));
    gr_nvcre_wf_ctx ctx = {"aws", "h100", "TrainJob", "simple", 0};
    json_t *eff = NULL, *trk = NULL, *events = json_array();
    gr_err err = {0};
    assert_int_equal(gr_nvcre_wf_apply_overrides(spec, &ctx, &eff, &trk, events, NULL, &err),
                     GR_OK);
    assert_json_at(trk, "/0",
                   "{\"index\":0,\"when\":\"gpuArchitecture=h100, platform=aws\","
                   "\"patches\":\"jobTemplate\",\"noOp\":true}");
    assert_json_at(trk, "/1",
                   "{\"index\":1,\"when\":\"platform=in [aws,gcp]\","
                   "\"patches\":\"orchestration\",\"noOp\":false}");
    assert_json_at(events, "/0/reason", "\"OverrideNoOp\"");
    assert_json_at(events, "/0/message",
                   "\"Override[0] matched (gpuArchitecture=h100, "
                   "platform=aws) but produced no changes — check field paths\"");
    assert_json_at(events, "/1/message",
                   "\"Override[1] matched (platform=in [aws,gcp]), patching orchestration\"");
    json_decref(eff);
    json_decref(trk);
    json_decref(events);
    /* No match: NoOverridesMatched. */
    gr_nvcre_wf_ctx ctx2 = {"azure", "a100", "TrainJob", "simple", 0};
    events = json_array();
    assert_int_equal(gr_nvcre_wf_apply_overrides(spec, &ctx2, &eff, &trk, events, NULL, &err),
                     GR_OK);
    assert_json_at(events, "/0/message",
                   "\"0 of 2 overrides matched (platform=azure, gpuArchitecture=a100)\"");
    json_decref(eff);
    json_decref(trk);
    json_decref(events);
    /* A failing test op is OverrideError with the documented message. */
    json_object_set_new(spec, "overrides",
                        J("[{\"when\":{},\"jobTemplatePatch\":[{\"op\":\"test\",\"path\":"
                          "\"/spec/workload/trainJob/trainer/image\",\"value\":\"nope\"}]}]"));
    const char *reason = NULL;
    assert_int_equal(gr_nvcre_wf_apply_overrides(spec, &ctx, &eff, NULL, NULL, &reason, &err),
                     GR_ESTATE);
    assert_string_equal(reason, "OverrideError");
    static const char want_prefix[] =
        "Failed to apply overrides: override[0]: failed to apply jobTemplatePatch: ";
    if (strncmp(err.msg, want_prefix, strlen(want_prefix)) != 0)
        fail_msg("message: %s", err.msg);
    json_decref(spec);
}

/* ---------------------------------------------------------- gang contract */

static const char *GANG_SPEC =
    "{\"gangScheduler\":{\"schedulerName\":\"kai-scheduler\",\"queue\":\"team-a\","
    "\"queueLabelKey\":\"kai.scheduler/queue\"},"
    "\"jobTemplate\":{\"spec\":{\"workloadMetadata\":{\"labels\":{\"kai.scheduler/"
    "queue\":\"team-a\"}},"
    "\"workload\":{\"trainJob\":{\"runtimeRef\":{\"kind\":\"TrainingRuntime\",\"name\":\"nccl-"
    "runtime\"},"
    "\"trainer\":{\"numNodes\":1}}}}},"
    "\"dependencies\":[{\"apiVersion\":\"trainer.kubeflow.org/"
    "v1alpha1\",\"kind\":\"TrainingRuntime\","
    "\"metadata\":{\"name\":\"nccl-runtime\"},\"spec\":{\"template\":{\"spec\":{\"replicatedJobs\":"
    "["
    "{\"name\":\"node\",\"template\":{\"metadata\":{\"labels\":{\"kai.scheduler/"
    "queue\":\"team-a\"}},"
    "\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"kai.scheduler/queue\":\"team-a\"}},"
    "\"spec\":{\"schedulerName\":\"kai-scheduler\"}}}}}]}}}}],"
    "\"orchestration\":{}}";

static int gang_eff(const char *overrides, json_t **eff, const char **reason, gr_err *err)
{
    json_t *spec = J(GANG_SPEC);
    if (overrides)
        json_object_set_new(spec, "overrides", J(overrides));
    gr_nvcre_wf_ctx ctx = {"aws", "h100", "TrainJob", "simple", 0};
    int rc = gr_nvcre_wf_apply_overrides(spec, &ctx, eff, NULL, NULL, reason, err);
    json_decref(spec);
    if (rc != GR_OK)
        return rc;
    return gr_nvcre_wf_gang_check(*eff, NULL, reason, err);
}

static void test_gang_contract(void **state)
{
    (void)state;
    json_t *eff = NULL;
    const char *reason = NULL;
    gr_err err = {0};
    /* WF-44: unrelated override accepted. */
    assert_int_equal(gang_eff("[{\"when\":{\"platform\":{\"equals\":\"aws\"}},\"jobTemplate\":"
                              "{\"spec\":{\"stallMultiplier\":2}}}]",
                              &eff, &reason, &err),
                     GR_OK);
    json_decref(eff);
    /* WF-25, WF-45: removal accepted, label restored on the working copy (WF-39). */
    assert_int_equal(gang_eff("[{\"when\":{\"platform\":{\"equals\":\"aws\"}},\"jobTemplatePatch\":"
                              "[{\"op\":\"remove\",\"path\":\"/spec/workloadMetadata/labels/"
                              "kai.scheduler~1queue\"}]}]",
                              &eff, &reason, &err),
                     GR_OK);
    assert_json_at(eff, "/jobTemplate/spec/workloadMetadata/labels/kai.scheduler~1queue",
                   "\"team-a\"");
    json_decref(eff);
    /* WF-46, WF-47: changed label fails with the exact message. */
    assert_int_equal(
        gang_eff("[{\"when\":{\"platform\":{\"equals\":\"aws\"}},\"jobTemplate\":{\"spec\":"
                 "{\"workloadMetadata\":{\"labels\":{\"kai.scheduler/queue\":\"team-b\"}}}}}]",
                 &eff, &reason, &err),
        GR_ESTATE);
    assert_string_equal(reason, "GangSchedulingConflict"); /* WF-38 */
    assert_string_equal(err.msg,
                        "spec.jobTemplate.spec.workloadMetadata.labels[\"kai.scheduler/queue\"]: "
                        "conflicting label value \"team-b\", expected \"team-a\"");
    json_decref(eff);
    /* WF-48, WF-49, WF-26, WF-32: runtime label conflict, exact message. */
    assert_int_equal(
        gang_eff(
            "[{\"when\":{\"platform\":{\"equals\":\"aws\"}},\"dependencies\":[{\"apiVersion\":"
            "\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainingRuntime\",\"metadata\":{\"name\":"
            "\"nccl-runtime\"},\"spec\":{\"template\":{\"spec\":{\"replicatedJobs\":[{\"name\":"
            "\"node\","
            "\"template\":{\"metadata\":{\"labels\":{\"kai.scheduler/"
            "queue\":\"team-b\"}}}}]}}}}]}]",
            &eff, &reason, &err),
        GR_ESTATE);
    assert_string_equal(err.msg,
                        "gangScheduler is configured with queue \"team-a\" but TrainingRuntime "
                        "\"nccl-runtime\" replicatedJob \"node\" sets label "
                        "\"kai.scheduler/queue\" to \"team-b\" on template.metadata.labels");
    /* WF-33: never repaired: the effective runtime keeps the override's value. */
    assert_json_at(eff,
                   "/dependencies/0/spec/template/spec/replicatedJobs/0/template/metadata/labels/"
                   "kai.scheduler~1queue",
                   "\"team-b\"");
    json_decref(eff);
    /* WF-27, WF-31: missing pod-template label fails. */
    assert_int_equal(
        gang_eff(
            "[{\"when\":{},\"dependencies\":[{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\","
            "\"kind\":\"TrainingRuntime\",\"metadata\":{\"name\":\"nccl-runtime\"},\"spec\":{"
            "\"template\":"
            "{\"spec\":{\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"spec\":{"
            "\"template\":"
            "{\"metadata\":{\"labels\":{\"kai.scheduler/queue\":null}}}}}}]}}}}]}]",
            &eff, &reason, &err),
        GR_ESTATE);
    assert_string_equal(err.msg,
                        "gangScheduler is configured with queue \"team-a\" but TrainingRuntime "
                        "\"nccl-runtime\" replicatedJob \"node\" is missing label "
                        "\"kai.scheduler/queue\" on template.spec.template.metadata.labels");
    json_decref(eff);
    /* WF-28: scheduler name mismatch. */
    assert_int_equal(
        gang_eff(
            "[{\"when\":{},\"dependencies\":[{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\","
            "\"kind\":\"TrainingRuntime\",\"metadata\":{\"name\":\"nccl-runtime\"},\"spec\":{"
            "\"template\":"
            "{\"spec\":{\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"spec\":{"
            "\"template\":"
            "{\"spec\":{\"schedulerName\":\"default-scheduler\"}}}}}]}}}}]}]",
            &eff, &reason, &err),
        GR_ESTATE);
    assert_non_null(strstr(err.msg, "schedulerName \"kai-scheduler\""));
    json_decref(eff);
    /* WF-29, WF-30: runtimePatches are folded in (a patch that rewrites the label fails). */
    assert_int_equal(
        gang_eff(
            "[{\"when\":{},\"jobTemplate\":{\"spec\":{\"workload\":{\"trainJob\":{"
            "\"runtimePatches\":"
            "[{\"manager\":\"x\",\"trainingRuntimeSpec\":{\"template\":{\"spec\":{"
            "\"replicatedJobs\":"
            "[{\"name\":\"node\",\"template\":{\"spec\":{\"template\":{\"metadata\":{\"labels\":"
            "{\"kai.scheduler/queue\":\"team-c\"}}}}}}]}}}}]}}}}}]",
            &eff, &reason, &err),
        GR_ESTATE);
    assert_non_null(strstr(err.msg, "to \"team-c\" on template.spec.template.metadata.labels"));
    json_decref(eff);
    /* WF-34: runtimeRef repointed outside the dependencies fails. */
    assert_int_equal(gang_eff("[{\"when\":{},\"jobTemplate\":{\"spec\":{\"workload\":{\"trainJob\":"
                              "{\"runtimeRef\":{\"name\":\"other\"}}}}}}]",
                              &eff, &reason, &err),
                     GR_ESTATE);
    assert_string_equal(reason, "GangSchedulingConflict");
    json_decref(eff);
    /* WF-35: un-checkable runtime shape fails. */
    assert_int_equal(
        gang_eff(
            "[{\"when\":{},\"dependencies\":[{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\","
            "\"kind\":\"TrainingRuntime\",\"metadata\":{\"name\":\"nccl-runtime\"},"
            "\"spec\":{\"template\":null}}]}]",
            &eff, &reason, &err),
        GR_ESTATE);
    assert_non_null(strstr(err.msg, "cannot be checked"));
    json_decref(eff);
}

static void test_gang_absent_passthrough(void **state)
{
    (void)state;
    /* WF-40, WF-41, WF-05: no gangScheduler → no queue checks, labels pass through. */
    json_t *spec = J(GANG_SPEC);
    json_object_del(spec, "gangScheduler");
    json_object_set_new(gr_json_ptr_get(spec, "/jobTemplate/spec/workloadMetadata/labels"),
                        "kai.scheduler/queue", json_string("whatever"));
    const char *reason = NULL;
    gr_err err = {0};
    assert_int_equal(gr_nvcre_wf_gang_check(spec, NULL, &reason, &err), GR_OK);
    assert_json_at(spec, "/jobTemplate/spec/workloadMetadata/labels/kai.scheduler~1queue",
                   "\"whatever\"");
    /* ... but workload labels are still validated (WF-04). */
    json_object_set_new(gr_json_ptr_get(spec, "/jobTemplate/spec/workloadMetadata/labels"),
                        "nvcre.nvidia.com/x", json_string("y"));
    assert_int_equal(gr_nvcre_wf_gang_check(spec, NULL, &reason, &err), GR_ESTATE);
    json_decref(spec);
}

/* ------------------------------------------------------ detection, discovery */

static void test_platform_and_product(void **state)
{
    (void)state;
    static const struct {
        const char *node, *platform;
    } t[] = {
        {"{\"spec\":{\"providerID\":\"aws:///us-east-1a/i-1\"}}", "aws"},
        {"{\"spec\":{\"providerID\":\"gce://p/z/n\"}}", "gcp"},
        {"{\"spec\":{\"providerID\":\"azure:///s/x\"}}", "azure"},
        {"{\"spec\":{\"providerID\":\"ocid1.instance.oc1..x\"}}", "oci"},
        {"{\"spec\":{\"providerID\":\"openstack:///x\"}}", "onprem"},
        {"{\"spec\":{\"providerID\":\"nscale://x\"}}", "nscale"},
        {"{\"spec\":{\"providerID\":\"kubevirt://"
         "x\"},\"metadata\":{\"labels\":{\"node-role.together.ai/worker\":\"\"}}}",
         "togetherai"},
        {"{\"spec\":{\"providerID\":\"kubevirt://x\"}}", "onprem"},
        {"{\"spec\":{\"providerID\":\"metal3://x\"}}", "mistral"},
        {"{\"metadata\":{\"labels\":{\"kubernetes.io/hostname\":\"forge-12\"}}}", "forge"},
        {"{\"metadata\":{\"labels\":{\"nke.nvidia.com/site-name\":\"s\"}}}", "forge"},
        {"{}", "onprem"},
        {"{\"spec\":{\"providerID\":\"kind://x\"}}", "onprem"},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        json_t *n = J(t[i].node);
        assert_string_equal(gr_nvcre_wf_node_platform(n), t[i].platform); /* WF-63 */
        json_decref(n);
    }
    char out[32];
    gr_nvcre_wf_parse_product("NVIDIA-H100-80GB-HBM3", out, sizeof(out));
    assert_string_equal(out, "h100");
    gr_nvcre_wf_parse_product("NVIDIA-GB200-NVL72", out, sizeof(out)); /* WF-62 */
    assert_string_equal(out, "gb200");
    gr_nvcre_wf_parse_product("NVIDIA-RTX-PRO-6000-Blackwell", out, sizeof(out));
    assert_string_equal(out, "rtxpro6000");
    gr_nvcre_wf_parse_product("", out, sizeof(out));
    assert_string_equal(out, "unknown");
}

static json_t *node(const char *name, const char *pid, const char *product, int gpus, int cordoned,
                    const char *rack)
{
    json_t *n = json_pack("{s:{s:s,s:{s:s,s:s}},s:{},s:{s:{s:i}}}", "metadata", "name", name,
                          "labels", "nvidia.com/gpu.present", "true", "kubernetes.io/hostname",
                          name, "spec", "status", "allocatable", "nvidia.com/gpu", gpus);
    if (pid)
        json_object_set_new(json_object_get(n, "spec"), "providerID", json_string(pid));
    if (product)
        json_object_set_new(gr_json_ptr_get(n, "/metadata/labels"), "nvidia.com/gpu.product",
                            json_string(product));
    if (rack)
        json_object_set_new(gr_json_ptr_get(n, "/metadata/labels"), "rack", json_string(rack));
    if (cordoned)
        json_object_set_new(json_object_get(n, "spec"), "unschedulable", json_true());
    return n;
}

static void test_discovery_exclusions(void **state)
{
    (void)state;
    json_t *nodes = json_array();
    json_array_append_new(nodes, node("n3", "aws://a", "NVIDIA-H100-80GB-HBM3", 8, 0, NULL));
    json_array_append_new(nodes, node("n1", "aws://a", "NVIDIA-H100-80GB-HBM3", 8, 0, NULL));
    json_array_append_new(nodes, node("n2", "aws://a", "NVIDIA-A100-SXM4-80GB", 8, 0, NULL));
    json_array_append_new(nodes, node("n4", "aws://a", "NVIDIA-H100-80GB-HBM3", 8, 1, NULL));
    json_array_append_new(nodes, node("n5", "aws://a", "NVIDIA-H100-80GB-HBM3", 2, 0, NULL));
    json_t *spec = J("{\"orchestration\":{}}");
    json_t *disc = NULL, *events = json_array();
    const char *reason = NULL;
    gr_err err = {0};
    assert_int_equal(gr_nvcre_wf_discover(spec, nodes, &disc, events, &reason, &err), GR_OK);
    assert_json_at(disc, "/nodes", "[\"n1\",\"n3\",\"n5\"]");
    assert_json_at(disc, "/gpuArchitecture", "\"h100\"");
    assert_json_at(disc, "/platform", "\"aws\"");
    assert_json_at(events, "/0/message", "\"Excluded 1 cordoned node(s) from certification: n4\"");
    assert_json_at(events, "/1/message",
                   "\"Filtered 1/4 nodes to primary GPU architecture h100; excluded: n2 (a100)\"");
    assert_int_equal(gr_nvcre_wf_capacity_filter(disc, nodes, 8, events, &reason, &err), GR_OK);
    assert_json_at(disc, "/nodes", "[\"n1\",\"n3\"]");
    assert_json_at(events, "/2/message",
                   "\"Excluded 1 node(s) with fewer than 8 allocatable nvidia.com/gpu: n5 has 2\"");
    assert_int_equal(json_array_size(json_object_get(disc, "excluded")), 3);
    /* No node can supply 16 GPUs. */
    assert_int_equal(gr_nvcre_wf_capacity_filter(disc, nodes, 16, events, &reason, &err),
                     GR_ESTATE);
    assert_string_equal(reason, "PartitionError");
    assert_string_equal(err.msg, "No node can supply the 16 nvidia.com/gpu the workload requests "
                                 "per node; best available is 8");
    json_decref(disc);
    json_decref(events);
    /* Heterogeneous platforms fail instead of hanging (upstream #82). */
    json_array_append_new(nodes, node("n6", "gce://p", "NVIDIA-H100-80GB-HBM3", 8, 0, NULL));
    assert_int_equal(gr_nvcre_wf_discover(spec, nodes, &disc, NULL, &reason, &err), GR_ESTATE);
    assert_string_equal(reason, "HeterogeneousPlatform");
    assert_string_equal(err.msg, "heterogeneous platforms detected: map[aws:4 gcp:1]");
    json_decref(disc);
    /* Target selectors: nothing matches. */
    json_decref(spec);
    spec = J("{\"orchestration\":{\"target\":{\"nodeSelector\":{\"pool\":\"none\"}}}}");
    assert_int_equal(gr_nvcre_wf_discover(spec, nodes, &disc, NULL, &reason, &err), GR_ESTATE);
    assert_string_equal(reason, "NodeDiscoveryError");
    assert_string_equal(err.msg, "No target nodes found matching orchestration target");
    json_decref(disc);
    /* Cordoned nodes kept when a taint selector targets them (ADR-081). */
    json_decref(spec);
    spec = J("{\"orchestration\":{\"target\":{\"nodeNames\":[\"n4\"],\"taintSelectors\":[]}}}");
    assert_int_equal(gr_nvcre_wf_discover(spec, nodes, &disc, NULL, &reason, &err), GR_ESTATE);
    json_decref(disc);
    json_decref(spec);
    json_decref(nodes);
}

/* ------------------------------------------------------------ partitioning */

static void test_partition(void **state)
{
    (void)state;
    json_t *nodes = json_array();
    const char *racks[] = {"r1", "r1", "r1", "r2", "r2", "r3", "r3", "r3"};
    json_t *names = json_array();
    for (int i = 0; i < 8; i++) {
        char nm[8];
        snprintf(nm, sizeof(nm), "n%d", i);
        json_array_append_new(nodes, node(nm, NULL, NULL, 8, 0, racks[i]));
        json_array_append_new(names, json_string(nm));
    }
    json_t *spec = J("{\"orchestration\":{}}"), *g = NULL;
    gr_err err = {0};
    assert_int_equal(gr_nvcre_wf_partition(spec, nodes, names, 3, &g, &err), GR_OK);
    assert_int_equal(json_array_size(g), 3);
    assert_json_at(g, "/2",
                   "{\"name\":\"group-2-overflow\",\"nodes\":[\"n6\",\"n7\",\"n0\"],"
                   "\"domains\":[],\"overflow\":true}");
    json_decref(g);
    json_decref(spec);
    spec = J("{\"orchestration\":{\"topology\":{\"topologyKey\":\"rack\",\"strictDomain\":true}}}");
    assert_int_equal(gr_nvcre_wf_partition(spec, nodes, names, 2, &g, &err), GR_OK);
    assert_int_equal(json_array_size(g), 3); /* one group per domain */
    assert_json_at(g, "/0/domains", "[\"r1\"]");
    json_decref(g);
    json_decref(spec);
    spec = J("{\"orchestration\":{\"topology\":{\"topologyKey\":\"rack\"}}}");
    assert_int_equal(gr_nvcre_wf_partition(spec, nodes, names, 2, &g, &err), GR_OK);
    assert_json_at(g, "/0",
                   "{\"name\":\"group-0\",\"nodes\":[\"n0\",\"n1\"],\"domains\":[\"r1\"]}");
    assert_int_equal(json_array_size(g), 4);
    json_decref(g);
    json_decref(spec);
    /* nodesPerJob from trainer.numNodes; too many → PartitionError with hint. */
    spec = J("{\"jobTemplate\":{\"spec\":{\"workload\":{\"trainJob\":{\"trainer\":{\"numNodes\":9}}"
             "}}}}");
    int npj = 0;
    const char *reason = NULL;
    assert_int_equal(gr_nvcre_wf_nodes_per_job(spec, 8, &npj, &reason, &err), GR_ESTATE);
    assert_string_equal(err.msg,
                        "Not enough schedulable nodes: need 9, found 8. Set nodesPerJob to "
                        "8, or narrow the target to one architecture, or lower gpusPerNode");
    json_decref(spec);
    spec = J("{\"jobTemplate\":{\"spec\":{\"workload\":{\"trainJob\":{\"trainer\":{\"numNodes\":0}}"
             "}}}}");
    assert_int_equal(gr_nvcre_wf_nodes_per_job(spec, 8, &npj, &reason, &err), GR_OK);
    assert_int_equal(npj, 8); /* WF-61: < 1 → all nodes */
    json_decref(spec);
    json_decref(names);
    json_decref(nodes);
}

static void test_naming(void **state)
{
    (void)state;
    char out[128], h[6];
    gr_nvcre_wf_job_name("wf", "group-0", 1, 1, out, sizeof(out));
    assert_string_equal(out, "wf-job");
    gr_nvcre_wf_job_name("wf", "group-0", 2, 0, out, sizeof(out));
    assert_string_equal(out, "wf-group-0-iter-2");
    gr_nvcre_wf_job_name("cert-communication-nccl", "group-0", 1, 0, out, sizeof(out));
    assert_int_equal(strlen(out), 35);
    assert_true(strncmp(out, "cert-communication-nccl-group-", 30) == 0);
    gr_nvcre_wf_extract_hash(out, h);
    assert_int_equal(strlen(h), 5);
    /* trailing '-' trimmed before the hash */
    gr_nvcre_wf_truncate("abcdefghij-klmnop", 16, out, sizeof(out));
    assert_int_equal(out[10], '-');
    assert_int_equal(strlen(out), 16);
    gr_nvcre_wf_truncate("abcdefghi-jklmnop", 16, out, sizeof(out));
    assert_int_equal(strlen(out), 15); /* "abcdefghi-" lost its dash before the hash */
    assert_int_equal(strncmp(out, "abcdefghi-", 10), 0);
}

/* ---------------------------------------------------------------- tracking */

#define SEC 1000000000LL

/* WF-52/WF-54 depend on it: a Succeeded Job with thresholds keeps its group
 * running until the Job controller's verdict (isJobAwaitingThresholdEvaluation). */
static void test_job_awaiting_thresholds(void **state)
{
    (void)state;
    json_t *j = J("{\"spec\":{\"thresholds\":{\"busBandwidthGBps\":\"value >= 300\"}},"
                  "\"status\":{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\"}]}}");
    assert_int_equal(gr_nvcre_wf_job_awaiting_thresholds(j), 1);
    json_decref(j);
    /* the verdict is in (either way): no longer awaiting */
    j = J("{\"spec\":{\"thresholds\":{\"busBandwidthGBps\":\"value >= 300\"}},"
          "\"status\":{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\"},"
          "{\"type\":\"ValidationFailed\",\"status\":\"False\",\"reason\":\"ThresholdsMet\"}]}}");
    assert_int_equal(gr_nvcre_wf_job_awaiting_thresholds(j), 0);
    json_decref(j);
    /* no thresholds, empty thresholds, not Succeeded, no Job */
    j = J("{\"status\":{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\"}]}}");
    assert_int_equal(gr_nvcre_wf_job_awaiting_thresholds(j), 0);
    json_decref(j);
    j = J("{\"spec\":{\"thresholds\":{}},"
          "\"status\":{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\"}]}}");
    assert_int_equal(gr_nvcre_wf_job_awaiting_thresholds(j), 0);
    json_decref(j);
    j = J("{\"spec\":{\"thresholds\":{\"busBandwidthGBps\":\"value >= 300\"}},"
          "\"status\":{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"False\"}]}}");
    assert_int_equal(gr_nvcre_wf_job_awaiting_thresholds(j), 0);
    json_decref(j);
    assert_int_equal(gr_nvcre_wf_job_awaiting_thresholds(NULL), 0);
}

static void test_timeouts(void **state)
{
    (void)state;
    int out, blocked;
    json_t *j = J("{\"status\":{\"workloadStartTime\":\"2026-01-01T00:00:00Z\"}}");
    int64_t t0 = 1767225600LL * SEC;
    gr_nvcre_wf_job_timed_out(j, 0, 3600 * SEC, t0 + 3599 * SEC, &out, &blocked);
    assert_int_equal(out, 0);
    gr_nvcre_wf_job_timed_out(j, 0, 3600 * SEC, t0 + 3601 * SEC, &out, &blocked);
    assert_int_equal(out, 1);
    assert_int_equal(blocked, 0);
    json_decref(j);
    /* Queued (workloadRef, no start): never times out, however old the group. */
    j = J("{\"status\":{\"workloadRef\":{\"name\":\"w\"}}}");
    gr_nvcre_wf_job_timed_out(j, t0, 60 * SEC, t0 + 86400 * SEC, &out, &blocked);
    assert_int_equal(out, 0);
    json_decref(j);
    /* Blocked episode measured from schedulingBlockedSince. */
    j = J("{\"status\":{\"workloadStartTime\":\"2026-01-01T00:00:00Z\","
          "\"schedulingBlockedSince\":\"2026-01-01T00:30:00Z\"}}");
    gr_nvcre_wf_job_timed_out(j, 0, 3600 * SEC, t0 + 5000 * SEC, &out, &blocked);
    assert_int_equal(out, 0);
    gr_nvcre_wf_job_timed_out(j, 0, 3600 * SEC, t0 + 5401 * SEC, &out, &blocked);
    assert_int_equal(out, 1);
    assert_int_equal(blocked, 1);
    json_decref(j);
    /* Fallback: group start. */
    j = J("{}");
    gr_nvcre_wf_job_timed_out(j, t0, 60 * SEC, t0 + 61 * SEC, &out, &blocked);
    assert_int_equal(out, 1);
    json_decref(j);
}

static void test_final_status(void **state)
{
    (void)state;
    char msg[256];
    /* WF-70 */
    assert_string_equal(gr_nvcre_wf_final_reason(0, 0, 0, 3, msg, sizeof(msg)), "JobCompleted");
    assert_string_equal(msg, "All 3 iterations completed successfully");
    assert_string_equal(gr_nvcre_wf_final_reason(2, 1, 0, 1, msg, sizeof(msg)),
                        "JobHardwareFailed");
    assert_string_equal(msg, "2 groups failed across 1 iterations; hardware failures occurred on "
                             "one or more nodes");
    /* WF-54: threshold miss only → JobValidationFailed; WF-53: hardware wins. */
    assert_string_equal(gr_nvcre_wf_final_reason(1, 0, 1, 1, msg, sizeof(msg)),
                        "JobValidationFailed");
    assert_string_equal(gr_nvcre_wf_final_reason(1, 1, 1, 1, msg, sizeof(msg)),
                        "JobHardwareFailed");
    assert_string_equal(gr_nvcre_wf_final_reason(1, 0, 0, 2, msg, sizeof(msg)), "IterationsFailed");
}

static size_t gunzip_b64(const char *b64, char *out, size_t cap)
{
    unsigned char bin[4096];
    int n = EVP_DecodeBlock(bin, (const unsigned char *)b64, (int)strlen(b64));
    assert_true(n > 0);
    while (n > 0 && b64[strlen(b64) - 1] == '=' && bin[n - 1] == 0 && n--)
        break;
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(inflateInit2(&z, 31), Z_OK);
    z.next_in = bin;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)cap - 1;
    int r = inflate(&z, Z_FINISH);
    assert_true(r == Z_STREAM_END || r == Z_BUF_ERROR);
    size_t len = cap - 1 - z.avail_out;
    out[len] = 0;
    inflateEnd(&z);
    return len;
}

static void test_node_results(void **state)
{
    (void)state;
    /* WF-56, WF-57: payloads are sorted, deduplicated and deterministic. */
    json_t *names = J("[\"n2\",\"n1\",\"n2\",\"n3\"]");
    char *a = NULL, *b = NULL;
    gr_err err = {0};
    assert_int_equal(gr_nvcre_wf_succeeded_payload(names, &a, &err), GR_OK);
    assert_int_equal(gr_nvcre_wf_succeeded_payload(names, &b, &err), GR_OK);
    assert_string_equal(a, b);
    char buf[2048];
    gunzip_b64(a, buf, sizeof(buf));
    assert_string_equal(buf, "n1,n2,n3");
    free(a);
    free(b);
    json_decref(names);
    json_t *failed = J("[{\"name\":\"n2\",\"reason\":\"WorkloadFailed\",\"message\":\"m\"},"
                       "{\"name\":\"n1\",\"reason\":\"HardwareFailureDetected\",\"message\":\"x\"},"
                       "{\"name\":\"n2\",\"reason\":\"WorkloadFailed\",\"message\":\"dup\"}]");
    assert_int_equal(gr_nvcre_wf_failed_payload(failed, &a, &err), GR_OK);
    gunzip_b64(a, buf, sizeof(buf));
    assert_string_equal(
        buf, "[{\"name\":\"n1\",\"reason\":\"HardwareFailureDetected\",\"message\":\"x\"},"
             "{\"name\":\"n2\",\"reason\":\"WorkloadFailed\",\"message\":\"m\"}]");
    free(a);
    json_decref(failed);
    /* gzip header: mtime 0, OS 255 */
    gr_buf gz;
    gr_buf_init(&gz, 1 << 20);
    assert_int_equal(gr_nvcre_wf_gzip("x", 1, &gz, &err), GR_OK);
    assert_int_equal((unsigned char)gz.data[4] | gz.data[5] | gz.data[6] | gz.data[7], 0);
    assert_int_equal((unsigned char)gz.data[9], 255);
    gr_buf_free(&gz);
    char cm[64];
    gr_nvcre_wf_result_cm_name("succeeded-nodes", "1f2e3d4c-0000", cm, sizeof(cm));
    assert_string_equal(cm, "succeeded-nodes-1f2e3d4c");
}

/* -------------------------------------------------------------------- plan */

static void test_plan(void **state)
{
    (void)state;
    json_t *wf = json_pack("{s:{s:s,s:s,s:s},s:o}", "metadata", "name", "wf", "namespace", "ns",
                           "uid", "0123456789", "spec", J(GANG_SPEC));
    json_t *nodes = json_array();
    for (int i = 0; i < 3; i++) {
        char nm[8];
        snprintf(nm, sizeof(nm), "n%d", i);
        json_array_append_new(nodes, node(nm, "aws://x", "NVIDIA-H100-80GB-HBM3", 8, 0, NULL));
    }
    json_t *plan = NULL;
    const char *reason = NULL;
    gr_err err = {0};
    assert_int_equal(gr_nvcre_wf_plan(wf, nodes, &plan, &reason, &err), GR_OK);
    assert_json_at(plan, "/totalNodes", "3");                              /* WF-60 */
    assert_json_at(plan, "/nodesPerJob", "1");                             /* WF-61 */
    assert_json_at(plan, "/platform", "\"aws\"");                          /* WF-63 */
    assert_json_at(plan, "/gpuArchitecture", "\"h100\"");                  /* WF-62 */
    assert_int_equal(json_array_size(json_object_get(plan, "groups")), 3); /* WF-65 */
    assert_int_equal(json_array_size(json_object_get(plan, "jobs")), 3);   /* WF-69 */
    /* WF-03, WF-10: every Job carries the same workload labels. */
    for (int i = 0; i < 3; i++) {
        char p[96];
        snprintf(p, sizeof(p), "/jobs/%d/spec/workloadMetadata/labels", i);
        assert_json_at(plan, p, "{\"kai.scheduler/queue\":\"team-a\"}");
    }
    assert_json_at(plan, "/jobs/0/metadata/name", "\"wf-group-0-iter-1\"");
    assert_json_at(plan, "/jobs/0/metadata/annotations/nvcre.nvidia.com~1group-nodes", "\"n0\"");
    assert_json_at(plan, "/jobs/0/spec/nodeHealthMonitor/cel/expression",
                   "\"node.spec.unschedulable == true\"");
    assert_json_at(plan, "/message",
                   "\"Discovered 3 nodes, partitioned into 3 groups (1 nodes/job)\"");
    json_decref(plan);
    /* WF-23, WF-24: a conflict yields no Jobs and no dependencies. */
    json_object_set_new(
        json_object_get(wf, "spec"), "overrides",
        J("[{\"when\":{},\"jobTemplate\":{\"spec\":{\"workloadMetadata\":{\"labels\":"
          "{\"kai.scheduler/queue\":\"team-b\"}}}}}]"));
    assert_int_equal(gr_nvcre_wf_plan(wf, nodes, &plan, &reason, &err), GR_ESTATE);
    assert_string_equal(reason, "GangSchedulingConflict");
    assert_null(json_object_get(plan, "jobs"));
    assert_null(json_object_get(plan, "dependencies"));
    json_decref(plan);
    json_decref(nodes);
    json_decref(wf);
}

/* ------------------------------------------------------------- dependencies */

/* §2.8: a TrainingRuntime named by the job spec, a ComputeDomain tied to it
 * by a shared resource-claim name, a ConfigMap nobody names (workflow
 * scope) and a cluster-scoped runtime (never job-scoped). */
static const char *DEPS_SPEC =
    "{\"jobTemplate\":{\"spec\":{\"workloadMetadata\":{\"labels\":{\"q\":\"shared-cm\"}},"
    "\"workload\":{\"trainJob\":{\"runtimeRef\":{\"kind\":\"TrainingRuntime\",\"name\":\"rt\"},"
    "\"runtimePatches\":[{\"manager\":\"m\",\"trainingRuntimeSpec\":{\"template\":{\"metadata\":"
    "{\"labels\":{\"team\":\"rt\"}}}}}],\"trainer\":{\"numNodes\":1}}}}},"
    "\"dependencies\":["
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"shared-cm\"},"
    "\"data\":{\"k\":\"v\"}},"
    "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainingRuntime\","
    "\"metadata\":{\"name\":\"rt\"},\"spec\":{\"claims\":[{\"resourceClaimTemplateName\":"
    "\"imex-channel\"}]}},"
    "{\"apiVersion\":\"resource.nvidia.com/v1beta1\",\"kind\":\"ComputeDomain\","
    "\"metadata\":{\"name\":\"imex\"},\"spec\":{\"channel\":{\"resourceClaimTemplate\":{\"name\":"
    "\"imex-channel\"}}}},"
    "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\","
    "\"metadata\":{\"name\":\"rt2\"},\"spec\":{\"x\":\"rt\"}}],"
    "\"orchestration\":{\"iterations\":1}}";

static void test_dependencies(void **state)
{
    (void)state;
    json_t *spec = J(DEPS_SPEC);
    json_t *scopes = NULL, *order = NULL;
    gr_err err = {0};
    assert_int_equal(gr_nvcre_wf_dep_scopes(spec, &scopes, &err), GR_OK);
    /* workloadMetadata never makes a dependency job-scoped; the runtime is
     * named by runtimeRef; the ComputeDomain shares "imex-channel" with it;
     * Cluster* kinds stay workflow-scoped. */
    assert_json_at(scopes, "", "[\"workflow\",\"job\",\"job\",\"workflow\"]");
    /* Creation order: the ClusterTrainingRuntime carries "rt", so it comes
     * after the runtime; the rest keep list order. */
    assert_int_equal(gr_nvcre_wf_dep_order(json_object_get(spec, "dependencies"), &order, &err),
                     GR_OK);
    assert_json_at(order, "", "[0,1,2,3]");
    json_decref(order);
    json_t *rev = J("[{\"kind\":\"A\",\"metadata\":{\"name\":\"aaa\"},\"x\":\"bbb\"},"
                    "{\"kind\":\"B\",\"metadata\":{\"name\":\"bbb\"}}]");
    assert_int_equal(gr_nvcre_wf_dep_order(rev, &order, &err), GR_OK);
    assert_json_at(order, "", "[1,0]"); /* bbb first: aaa names it */
    json_decref(order);
    json_decref(rev);
    json_decref(scopes);
    /* Suffix: the Workflow name's 5-character hash segment, else FNV. */
    char sfx[128];
    gr_nvcre_wf_dep_suffix("cert-comm-nccl-a1b2c", "group-0", 1, 1, sfx, sizeof(sfx));
    assert_string_equal(sfx, "-a1b2c-job");
    gr_nvcre_wf_dep_suffix("cert-comm-nccl-a1b2c", "group-1", 2, 0, sfx, sizeof(sfx));
    assert_string_equal(sfx, "-a1b2c-group-1-iter-2");
    gr_nvcre_wf_dep_suffix("wf", "group-0", 1, 1, sfx, sizeof(sfx));
    assert_int_equal(strlen(sfx), strlen("-xxxxx-job"));
    /* prepare: renamed deps, references rewritten, cross-reference renamed,
     * workloadMetadata and runtime-patch labels kept. */
    json_t *wf = J("{\"metadata\":{\"name\":\"run-a1b2c\",\"namespace\":\"ns\"}}");
    json_t *js = NULL, *jd = NULL;
    assert_int_equal(gr_nvcre_wf_prepare_job(wf, spec, "group-0", 1, 1, &js, &jd, &err), GR_OK);
    assert_json_at(js, "/jobTemplate/spec/workload/trainJob/runtimeRef/name", "\"rt-a1b2c-job\"");
    assert_json_at(js, "/jobTemplate/spec/workloadMetadata/labels/q", "\"shared-cm\"");
    assert_json_at(
        js,
        "/jobTemplate/spec/workload/trainJob/runtimePatches/0/trainingRuntimeSpec/template/"
        "metadata/labels/team",
        "\"rt\"");
    assert_int_equal(json_array_size(jd), 2);
    assert_json_at(jd, "/0/metadata/name", "\"rt-a1b2c-job\"");
    assert_json_at(jd, "/0/spec/claims/0/resourceClaimTemplateName", "\"imex-channel-a1b2c-job\"");
    assert_json_at(jd, "/1/metadata/name", "\"imex-a1b2c-job\"");
    assert_json_at(jd, "/1/spec/channel/resourceClaimTemplate/name", "\"imex-channel-a1b2c-job\"");
    /* The effective dependencies: workflow-scoped unchanged + renamed. */
    assert_int_equal(json_array_size(json_object_get(js, "dependencies")), 4);
    assert_json_at(js, "/dependencies/0/metadata/name", "\"shared-cm\"");
    assert_json_at(js, "/dependencies/3/spec/x", "\"rt\""); /* shared: never renamed */
    json_decref(js);
    json_decref(jd);
    /* Names past 63 characters are truncated with the FNV suffix. */
    assert_int_equal(gr_nvcre_wf_prepare_job(wf, spec, "group-123456789012345678901234567890", 12,
                                             0, &js, &jd, &err),
                     GR_OK);
    assert_true(strlen(json_string_value(gr_json_ptr_get(jd, "/1/spec/channel/"
                                                             "resourceClaimTemplate/name"))) <= 63);
    json_decref(js);
    json_decref(jd);
    /* Workflow-scoped dependencies alone, in creation order. */
    json_t *wd = NULL;
    assert_int_equal(gr_nvcre_wf_workflow_deps(spec, &wd, &err), GR_OK);
    assert_int_equal(json_array_size(wd), 2);
    assert_json_at(wd, "/0/metadata/name", "\"shared-cm\"");
    assert_json_at(wd, "/1/metadata/name", "\"rt2\"");
    json_decref(wd);
    json_decref(wf);
    json_decref(spec);
}

static void test_checkpoint_guard(void **state)
{
    (void)state;
    json_t *spec = J(BASE_SPEC);
    const char *reason = NULL;
    gr_err err = {0};
    assert_int_equal(gr_nvcre_wf_checkpoint_check(spec, &reason, &err), GR_OK);
    json_object_set_new(gr_json_ptr_get(spec, "/jobTemplate/spec"), "checkpoint",
                        J("{\"pvcName\":\"ckpt\"}"));
    assert_int_equal(gr_nvcre_wf_checkpoint_check(spec, &reason, &err), GR_ESTATE);
    assert_string_equal(reason, "CheckpointPVCMissing");
    assert_string_equal(err.msg, "Checkpoint requires PVC \"ckpt\" in dependencies");
    json_array_append_new(json_object_get(spec, "dependencies"),
                          J("{\"apiVersion\":\"v1\",\"kind\":\"PersistentVolumeClaim\","
                            "\"metadata\":{\"name\":\"ckpt\"}}"));
    assert_int_equal(gr_nvcre_wf_checkpoint_check(spec, &reason, &err), GR_OK);
    /* ... and the PVC is job-scoped: each Job gets its own claim. */
    json_t *wf = J("{\"metadata\":{\"name\":\"wf\"}}"), *js = NULL, *jd = NULL;
    assert_int_equal(gr_nvcre_wf_prepare_job(wf, spec, "group-0", 1, 1, &js, &jd, &err), GR_OK);
    char want[64];
    snprintf(want, sizeof(want), "%s",
             json_string_value(gr_json_ptr_get(js, "/jobTemplate/spec/checkpoint/pvcName")));
    assert_int_equal(strncmp(want, "ckpt-", 5), 0);
    assert_string_equal(json_string_value(gr_json_ptr_get(jd, "/1/metadata/name")), want);
    json_decref(js);
    json_decref(jd);
    json_decref(wf);
    json_decref(spec);
}

/* ----------------------------------------------------------------- unpinned */

static void test_unpinned(void **state)
{
    (void)state;
    json_t *wf = json_pack("{s:{s:s,s:s,s:s},s:o}", "metadata", "name", "wf", "namespace", "ns",
                           "uid", "0123456789", "spec", J(BASE_SPEC));
    json_t *spec = json_object_get(wf, "spec");
    json_object_set_new(json_object_get(spec, "orchestration"), "placement",
                        json_string("Unpinned"));
    json_object_set_new(json_object_get(spec, "orchestration"), "target",
                        J("{\"nodeSelector\":{\"pool\":\"a\"}}"));
    json_t *nodes = json_array();
    for (int i = 0; i < 5; i++) {
        char nm[8];
        snprintf(nm, sizeof(nm), "n%d", i);
        json_t *n = node(nm, "aws://x", "NVIDIA-H100-80GB-HBM3", 8, 0, NULL);
        json_object_set_new(gr_json_ptr_get(n, "/metadata/labels"), "pool", json_string("a"));
        json_array_append_new(nodes, n);
    }
    json_t *plan = NULL;
    const char *reason = NULL;
    gr_err err = {0};
    assert_int_equal(gr_nvcre_wf_plan(wf, nodes, &plan, &reason, &err), GR_OK);
    assert_json_at(plan, "/message",
                   "\"Discovered 5 nodes, running 1 unpinned job of 2 nodes (3 target nodes not "
                   "exercised)\"");
    assert_json_at(plan, "/groups", "[{\"name\":\"group-0\",\"nodes\":[],\"domains\":[]}]");
    assert_json_at(plan, "/gpuProducts", "[\"NVIDIA-H100-80GB-HBM3\"]");
    assert_json_at(plan, "/jobs/0/metadata/name", "\"wf-job\"");
    assert_json_at(plan, "/jobs/0/spec/workload/trainJob/trainer/numNodes", "2");
    /* No hostname pinning: the target and the detected products. */
    assert_json_at(
        plan,
        "/jobs/0/spec/workload/trainJob/runtimePatches/0/trainingRuntimeSpec/template/spec/"
        "replicatedJobs/0/template/spec/template/spec/affinity/nodeAffinity/"
        "requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/0/matchExpressions",
        "[{\"key\":\"pool\",\"operator\":\"In\",\"values\":[\"a\"]},"
        "{\"key\":\"nvidia.com/gpu.present\",\"operator\":\"In\",\"values\":[\"true\"]},"
        "{\"key\":\"nvidia.com/gpu.product\",\"operator\":\"In\",\"values\":"
        "[\"NVIDIA-H100-80GB-HBM3\"]}]");
    json_decref(plan);
    /* Exact size or fail, with the Unpinned hint. */
    json_object_set_new(gr_json_ptr_get(spec, "/jobTemplate/spec/workload/trainJob/trainer"),
                        "numNodes", json_integer(7));
    assert_int_equal(gr_nvcre_wf_plan(wf, nodes, &plan, &reason, &err), GR_ESTATE);
    assert_string_equal(reason, "PartitionError");
    assert_string_equal(err.msg, "Not enough schedulable nodes: need 7, found 5. Unpinned runs "
                                 "the requested job size exactly, so make 7 qualifying nodes "
                                 "available rather than lowering nodesPerJob");
    json_decref(plan);
    json_object_set_new(gr_json_ptr_get(spec, "/jobTemplate/spec/workload/trainJob/trainer"),
                        "numNodes", json_integer(0));
    assert_int_equal(gr_nvcre_wf_plan(wf, nodes, &plan, &reason, &err), GR_ESTATE);
    assert_string_equal(err.msg, GR_NVCRE_WF_MSG_UNPINNED_NO_SIZE);
    json_decref(plan);
    json_object_set_new(gr_json_ptr_get(spec, "/jobTemplate/spec/workload/trainJob/trainer"),
                        "numNodes", json_integer(2));
    json_object_set_new(json_object_get(spec, "orchestration"), "topology",
                        J("{\"topologyKey\":\"rack\",\"strictDomain\":true}"));
    assert_int_equal(gr_nvcre_wf_plan(wf, nodes, &plan, &reason, &err), GR_ESTATE);
    assert_string_equal(err.msg, GR_NVCRE_WF_MSG_UNPINNED_STRICT_DOMAIN);
    json_decref(plan);
    json_object_del(json_object_get(spec, "orchestration"), "topology");
    json_object_set_new(json_object_get(spec, "orchestration"), "diagnose", J("{}"));
    assert_int_equal(gr_nvcre_wf_plan(wf, nodes, &plan, &reason, &err), GR_ESTATE);
    assert_string_equal(err.msg, GR_NVCRE_WF_MSG_UNPINNED_DIAGNOSE);
    json_decref(plan);
    /* Back-fill: the distinct nodes of placed pods, sorted. */
    json_t *pods = J("[{\"spec\":{\"nodeName\":\"n3\"}},{\"spec\":{}},"
                     "{\"spec\":{\"nodeName\":\"n1\"}},{\"spec\":{\"nodeName\":\"n3\"}},"
                     "{\"metadata\":{\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
                     "\"spec\":{\"nodeName\":\"n0\"}}]");
    json_t *placed = NULL;
    assert_int_equal(gr_nvcre_wf_placed_nodes(pods, &placed, &err), GR_OK);
    assert_json_at(placed, "", "[\"n1\",\"n3\"]");
    json_decref(placed);
    /* Pod drain before a retry: running pods hold it for up to 5 minutes. */
    int64_t t0 = 1000LL * 1000000000LL;
    assert_int_equal(gr_nvcre_wf_drain_wait(pods, 0, t0), 1);
    assert_int_equal(gr_nvcre_wf_drain_wait(pods, t0, t0 + 299LL * 1000000000LL), 1);
    assert_int_equal(gr_nvcre_wf_drain_wait(pods, t0, t0 + 300LL * 1000000000LL), 0);
    json_t *done =
        J("[{\"status\":{\"phase\":\"Succeeded\"}},{\"status\":{\"phase\":\"Failed\"}}]");
    assert_int_equal(gr_nvcre_wf_drain_wait(done, 0, t0), 0);
    assert_int_equal(gr_nvcre_wf_drain_wait(NULL, 0, t0), 0);
    json_decref(done);
    json_decref(pods);
    /* ADR-053: a Released volume kept with Retain gets Delete; a Bound one
     * is waited for; anything else is left alone. */
    json_t *pv = J("{\"spec\":{\"persistentVolumeReclaimPolicy\":\"Retain\"},"
                   "\"status\":{\"phase\":\"Released\"}}");
    assert_int_equal(gr_nvcre_wf_pv_reclaim(pv), GR_NVCRE_WF_PV_SET_DELETE);
    json_object_set_new(json_object_get(pv, "status"), "phase", json_string("Bound"));
    assert_int_equal(gr_nvcre_wf_pv_reclaim(pv), GR_NVCRE_WF_PV_WAIT);
    json_object_set_new(json_object_get(pv, "status"), "phase", json_string("Failed"));
    assert_int_equal(gr_nvcre_wf_pv_reclaim(pv), GR_NVCRE_WF_PV_DONE);
    json_object_set_new(json_object_get(pv, "spec"), "persistentVolumeReclaimPolicy",
                        json_string("Delete"));
    json_object_set_new(json_object_get(pv, "status"), "phase", json_string("Released"));
    assert_int_equal(gr_nvcre_wf_pv_reclaim(pv), GR_NVCRE_WF_PV_DONE);
    json_decref(pv);
    json_decref(nodes);
    json_decref(wf);
}

/* ------------------------------------------------------------------- relay */

static void test_running_relay(void **state)
{
    (void)state;
    char msg[512];
    assert_string_equal(gr_nvcre_wf_running_condition(1, 2, 3, NULL, msg, sizeof(msg)),
                        "JobRunning");
    assert_string_equal(msg, "Iteration 1/2: 3 groups running");
    /* ADR-083: the blocked Job's message is relayed. */
    json_t *job = J("{\"metadata\":{\"name\":\"wf-job\"},\"status\":{\"conditions\":[{\"type\":"
                    "\"InProgress\",\"status\":\"True\",\"reason\":\"WorkloadSchedulingBlocked\","
                    "\"message\":\"Workload pods are unschedulable: 0/4 nodes are available\"}]}}");
    assert_true(gr_nvcre_wf_job_relayed(job));
    assert_string_equal(gr_nvcre_wf_running_condition(1, 1, 1, job, msg, sizeof(msg)),
                        "JobSchedulingBlocked");
    assert_string_equal(msg, "Iteration 1/1: 1 groups running; job wf-job scheduling blocked: "
                             "Workload pods are unschedulable: 0/4 nodes are available");
    /* JOB-85: a rejected workload create is relayed too. */
    json_object_set_new(gr_json_ptr_get(job, "/status/conditions/0"), "reason",
                        json_string("WorkloadCreationRejected"));
    json_object_set_new(gr_json_ptr_get(job, "/status/conditions/0"), "message",
                        json_string("exceeded quota"));
    assert_string_equal(gr_nvcre_wf_running_condition(1, 1, 1, job, msg, sizeof(msg)),
                        "JobCreationRejected");
    assert_string_equal(msg,
                        "Iteration 1/1: 1 groups running; job wf-job workload creation rejected: "
                        "exceeded quota");
    /* A running Job is not relayed. */
    json_object_set_new(gr_json_ptr_get(job, "/status/conditions/0"), "reason",
                        json_string("WorkloadRunning"));
    assert_false(gr_nvcre_wf_job_relayed(job));
    json_decref(job);
}

/* The object created for a dependency (ensure_deps and `gpuready render`
 * share it): no `when`, the workflow label and uid annotation, the
 * Workflow's namespace and a controller ref; cluster-scoped kinds get no
 * namespace or owner; another controller's ref is kept, ours not added. */
static void test_dependency_object(void **state)
{
    (void)state;
    json_t *wf = J("{\"metadata\":{\"name\":\"wf\",\"namespace\":\"ns\",\"uid\":\"u1\"}}");
    json_t *dep = J("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
                    "\"TrainingRuntime\",\"when\":{\"platform\":{\"equals\":\"aws\"}},"
                    "\"metadata\":{\"name\":\"rt\",\"labels\":{\"a\":\"b\"}}}");
    json_t *obj = NULL;
    gr_err err;
    assert_int_equal(gr_nvcre_wf_dependency_object(wf, dep, &obj, &err), GR_OK);
    json_t *want = J("{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
                     "\"TrainingRuntime\",\"metadata\":{\"name\":\"rt\",\"namespace\":\"ns\","
                     "\"labels\":{\"a\":\"b\",\"nvcre.nvidia.com/workflow\":\"wf\"},"
                     "\"annotations\":{\"nvcre.nvidia.com/workflow-uid\":\"u1\"},"
                     "\"ownerReferences\":[{\"apiVersion\":\"nvcre.nvidia.com/v1alpha1\","
                     "\"kind\":\"Workflow\",\"name\":\"wf\",\"uid\":\"u1\",\"controller\":true,"
                     "\"blockOwnerDeletion\":true}]}}");
    assert_true(json_equal(obj, want));
    assert_non_null(json_object_get(dep, "when")); /* the input is not changed */
    json_decref(obj);
    json_decref(want);
    json_decref(dep);
    dep = J("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ClusterRole\","
            "\"metadata\":{\"name\":\"cr\"}}");
    assert_int_equal(gr_nvcre_wf_dependency_object(wf, dep, &obj, &err), GR_OK);
    assert_null(gr_json_ptr_get(obj, "/metadata/namespace"));
    assert_null(gr_json_ptr_get(obj, "/metadata/ownerReferences"));
    json_decref(obj);
    json_decref(dep);
    dep = J("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\","
            "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Other\",\"name\":\"o\","
            "\"uid\":\"u9\",\"controller\":true}]}}");
    assert_int_equal(gr_nvcre_wf_dependency_object(wf, dep, &obj, &err), GR_OK);
    assert_int_equal(json_array_size(gr_json_ptr_get(obj, "/metadata/ownerReferences")), 1);
    assert_string_equal(json_string_value(gr_json_ptr_get(obj, "/metadata/ownerReferences/0/uid")),
                        "u9");
    json_decref(obj);
    json_decref(dep);
    dep = J("{\"kind\":\"ConfigMap\",\"metadata\":[]}");
    assert_int_equal(gr_nvcre_wf_dependency_object(wf, dep, &obj, &err), GR_EINVAL);
    assert_null(obj);
    json_decref(dep);
    json_decref(wf);
}

/* The first pass lists only the Nodes that carry the target's
 * nodeSelector labels (gr_nvcre_wf_target_labels()): the plan over that
 * list must equal the plan over every Node (WF-60, WF-65). */
static json_t *with_labels(const json_t *nodes, json_t *sel)
{
    json_t *out = json_array();
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n)
    {
        const json_t *labels = gr_json_ptr_get(n, "/metadata/labels");
        int ok = 1;
        const char *k;
        json_t *v;
        json_object_foreach(sel, k, v) ok = ok && json_equal(json_object_get(labels, k), v);
        if (ok)
            json_array_append(out, n);
    }
    return out;
}

static void test_target_labels(void **state)
{
    (void)state;
    json_t *wf = json_pack("{s:{s:s,s:s,s:s},s:o}", "metadata", "name", "wf", "namespace", "ns",
                           "uid", "0123456789", "spec", J(GANG_SPEC));
    json_t *spec = json_object_get(wf, "spec");
    json_t *nodes = json_array();
    for (int i = 0; i < 12; i++) {
        char nm[8];
        snprintf(nm, sizeof(nm), "n%02d", i);
        json_t *n = node(nm, i % 3 == 2 ? "gce://x" : "aws://x",
                         i % 4 == 3 ? "NVIDIA-A100-SXM4-80GB" : "NVIDIA-H100-80GB-HBM3",
                         i == 5 ? 2 : 8, i == 4, i % 2 ? "r1" : "r2");
        json_t *labels = gr_json_ptr_get(n, "/metadata/labels");
        json_object_set_new(labels, "pool", json_string(i % 3 == 2 ? "b" : "a"));
        json_array_append_new(nodes, n);
    }
    json_t *sel = NULL;
    gr_err err = {0};
    /* No target: every Node. */
    assert_int_equal(gr_nvcre_wf_target_labels(wf, &sel, &err), GR_OK);
    assert_null(sel);
    /* A nodeSelector, as an override that matches before detection leaves it. */
    json_object_set_new(spec, "orchestration",
                        J("{\"target\":{\"nodeSelector\":{\"pool\":\"b\"}}}"));
    json_object_set_new(
        spec, "overrides",
        J("[{\"when\":{},\"orchestration\":{\"target\":{\"nodeSelector\":"
          "{\"pool\":\"a\",\"rack\":\"r1\"}}}},"
          "{\"when\":{\"platform\":{\"equals\":\"gcp\"}},\"orchestration\":{\"target\":"
          "{\"nodeSelector\":{\"pool\":\"b\"}}}}]"));
    assert_int_equal(gr_nvcre_wf_target_labels(wf, &sel, &err), GR_OK);
    assert_json_at(sel, "", "{\"pool\":\"a\",\"rack\":\"r1\"}");
    /* The same plan from the narrowed list as from every Node. */
    json_t *some = with_labels(nodes, sel), *p1 = NULL, *p2 = NULL;
    const char *r1 = NULL, *r2 = NULL;
    gr_err e1 = {0}, e2 = {0};
    int rc1 = gr_nvcre_wf_plan(wf, nodes, &p1, &r1, &e1);
    int rc2 = gr_nvcre_wf_plan(wf, some, &p2, &r2, &e2);
    assert_int_equal(rc1, rc2);
    assert_true(json_equal(p1, p2));
    assert_int_equal(json_array_size(some), 4);
    assert_json_at(p1, "/totalNodes", "2"); /* n01, n09: n03 and n07 are a100 */
    assert_json_at(p1, "/excludedNodes",
                   "[{\"name\":\"n03\",\"reason\":\"gpu architecture\"},"
                   "{\"name\":\"n07\",\"reason\":\"gpu architecture\"}]");
    json_decref(p1);
    json_decref(p2);
    json_decref(some);
    json_decref(sel);
    /* Without overrides: the nodeSelector "pool: b" holds the gcp nodes, one cordoned... */
    json_object_del(spec, "overrides");
    assert_int_equal(gr_nvcre_wf_target_labels(wf, &sel, &err), GR_OK);
    some = with_labels(nodes, sel);
    rc1 = gr_nvcre_wf_plan(wf, nodes, &p1, &r1, &e1);
    rc2 = gr_nvcre_wf_plan(wf, some, &p2, &r2, &e2);
    assert_int_equal(rc1, GR_OK);
    assert_int_equal(rc2, GR_OK);
    assert_true(json_equal(p1, p2));
    json_decref(p1);
    json_decref(p2);
    json_decref(some);
    json_decref(sel);
    /* ... and one that selects nothing fails the same way on both lists. */
    json_object_set_new(spec, "orchestration",
                        J("{\"target\":{\"nodeSelector\":{\"pool\":\"none\"}}}"));
    assert_int_equal(gr_nvcre_wf_target_labels(wf, &sel, &err), GR_OK);
    some = with_labels(nodes, sel);
    assert_int_equal(json_array_size(some), 0);
    assert_int_equal(gr_nvcre_wf_plan(wf, nodes, &p1, &r1, &e1), GR_ESTATE);
    assert_int_equal(gr_nvcre_wf_plan(wf, some, &p2, &r2, &e2), GR_ESTATE);
    assert_string_equal(e1.msg, e2.msg);
    assert_string_equal(r1, r2);
    json_decref(p1);
    json_decref(p2);
    json_decref(some);
    json_decref(sel);
    /* nodeNames replace the selector; a non-string value cannot be sent. */
    json_object_set_new(
        spec, "orchestration",
        J("{\"target\":{\"nodeNames\":[\"n01\"],\"nodeSelector\":{\"pool\":\"b\"}}}"));
    assert_int_equal(gr_nvcre_wf_target_labels(wf, &sel, &err), GR_OK);
    assert_null(sel);
    json_object_set_new(spec, "orchestration",
                        J("{\"target\":{\"nodeSelector\":{\"pool\":\"a\",\"n\":1}}}"));
    assert_int_equal(gr_nvcre_wf_target_labels(wf, &sel, &err), GR_OK);
    assert_null(sel);
    json_object_set_new(spec, "orchestration", J("{\"target\":{\"nodeSelector\":{}}}"));
    assert_int_equal(gr_nvcre_wf_target_labels(wf, &sel, &err), GR_OK);
    assert_null(sel);
    /* A failing override: every Node (the plan fails the same way on any list). */
    json_object_set_new(spec, "orchestration",
                        J("{\"target\":{\"nodeSelector\":{\"pool\":\"a\"}}}"));
    json_object_set_new(spec, "overrides",
                        J("[{\"when\":{\"expression\":\"1 +\"},\"orchestration\":{}}]"));
    assert_int_equal(gr_nvcre_wf_target_labels(wf, &sel, &err), GR_OK);
    assert_null(sel);
    assert_int_equal(gr_nvcre_wf_target_labels(NULL, &sel, &err), GR_OK);
    assert_null(sel);
    json_decref(nodes);
    json_decref(wf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_override_families),
        cmocka_unit_test(test_dependency_object),
        cmocka_unit_test(test_override_tracking_and_events),
        cmocka_unit_test(test_gang_contract),
        cmocka_unit_test(test_gang_absent_passthrough),
        cmocka_unit_test(test_platform_and_product),
        cmocka_unit_test(test_discovery_exclusions),
        cmocka_unit_test(test_target_labels),
        cmocka_unit_test(test_partition),
        cmocka_unit_test(test_naming),
        cmocka_unit_test(test_job_awaiting_thresholds),
        cmocka_unit_test(test_timeouts),
        cmocka_unit_test(test_final_status),
        cmocka_unit_test(test_node_results),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_dependencies),
        cmocka_unit_test(test_checkpoint_guard),
        cmocka_unit_test(test_unpinned),
        cmocka_unit_test(test_running_relay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
