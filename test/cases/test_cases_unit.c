/* Unit tests of the reconcile-case runner's pure parts: the input_config.yaml
 * schema (every key, unknown keys), sanitization, generated node names,
 * /metrics filtering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gr_cases.h"
#include "gr_json.h"

static const char FULL[] =
    "waitFor: {kind: Job, name: j1, namespace: other, condition: Succeeded, reason: Done,\n"
    "          restartCount: 2, failedNodeCount: 1}\n"
    "steps:\n"
    "  - waitFor: {kind: Job, name: j1, condition: InProgress}\n"
    "    patches:\n"
    "      - target: {kind: TrainJob, name: t1}\n"
    "        status: true\n"
    "        patch: {status: {conditions: [{type: Complete, status: \"True\"}]}}\n"
    "      - target: {kind: Node, name: n1}\n"
    "        patch: {spec: {unschedulable: true}}\n"
    "  - patches: []\n"
    "collect: [Job, TrainJob.trainer.kubeflow.org, ConfigMap]\n"
    "collectMetrics: true\n"
    "collectBandwidthMetrics: true\n"
    "collectJobMetrics: [nvcre_job_status]\n"
    "collectTopologyMetrics: false\n"
    "events:\n"
    "  - involvedKind: Job\n"
    "    involvedName: j1\n"
    "    namespace: default\n"
    "    expect: [{type: Normal, reason: Succeeded}, {reason: Created}]\n"
    "generateNodes: {count: 3, labels: {nvidia.com/gpu.product: H100}, providerID: "
    "\"aws:///{name}\", allocatable: {nvidia.com/gpu: \"8\"}, allocatableOf: {\"2\": "
    "{nvidia.com/gpu: \"4\"}}}\n"
    "verifySpecImmutable: true\n"
    "verifyFrozenGoodput: {mode: strip}\n"
    "deleteAfterWait: [{kind: Job, name: j1, stripFinalizers: true}, {kind: Pod, name: p}]\n"
    "waitForDeletion: true\n"
    "rejectWorkflowCreates: true\n"
    "verifyNodePollEvents: true\n"
    "verifyCheckpointEvents: true\n"
    "timeoutSeconds: 90\n";

static void test_every_key(void **state)
{
    (void)state;
    gr_cases_config c;
    gr_err err;
    assert_int_equal(gr_cases_config_parse(FULL, strlen(FULL), "full.yaml", &c, &err), GR_OK);
    assert_true(c.wait.set);
    assert_string_equal(c.wait.ref.kind, "Job");
    assert_string_equal(c.wait.ref.name, "j1");
    assert_string_equal(c.wait.ref.namespace_, "other");
    assert_string_equal(c.wait.condition, "Succeeded");
    assert_string_equal(c.wait.reason, "Done");
    assert_int_equal(c.wait.restart_count, 2);
    assert_int_equal(c.wait.failed_node_count, 1);
    assert_int_equal(c.nsteps, 2);
    assert_true(c.steps[0].wait.set);
    assert_string_equal(c.steps[0].wait.condition, "InProgress");
    assert_int_equal(c.steps[0].wait.restart_count, -1);
    assert_int_equal(c.steps[0].npatches, 2);
    assert_true(c.steps[0].patches[0].status);
    assert_string_equal(c.steps[0].patches[0].target.kind, "TrainJob");
    assert_true(json_is_object(c.steps[0].patches[0].patch));
    assert_false(c.steps[0].patches[1].status);
    assert_false(c.steps[1].wait.set);
    assert_int_equal(c.steps[1].npatches, 0);
    assert_int_equal(c.ncollect, 3);
    assert_string_equal(c.collect[1], "TrainJob.trainer.kubeflow.org");
    assert_true(c.metrics.set);
    assert_string_equal(c.metrics.prefixes[0], "nvcre_goodput_");
    assert_true(c.bandwidth_metrics.set);
    assert_string_equal(c.bandwidth_metrics.prefixes[0], "nvcre_nccl_");
    assert_true(c.job_metrics.set);
    assert_int_equal(c.job_metrics.nprefixes, 1);
    assert_string_equal(c.job_metrics.prefixes[0], "nvcre_job_status");
    assert_false(c.topology_metrics.set);
    assert_int_equal(c.nevents, 1);
    assert_string_equal(c.events[0].involved_kind, "Job");
    assert_string_equal(c.events[0].namespace_, "default");
    assert_int_equal(c.events[0].nexpect, 2);
    assert_string_equal(c.events[0].expect[0].type, "Normal");
    assert_null(c.events[0].expect[1].type);
    assert_string_equal(c.events[0].expect[1].reason, "Created");
    assert_true(c.generate_nodes);
    assert_int_equal(c.node_count, 3);
    assert_string_equal(json_string_value(json_object_get(c.node_labels, "nvidia.com/gpu.product")),
                        "H100");
    assert_string_equal(c.provider_id, "aws:///{name}");
    assert_string_equal(json_string_value(json_object_get(c.node_allocatable, "nvidia.com/gpu")),
                        "8");
    assert_non_null(json_object_get(c.node_allocatable_of, "2"));
    assert_true(c.verify_spec_immutable);
    assert_int_equal(c.frozen_goodput, GR_CASES_FROZEN_STRIP);
    assert_int_equal(c.ndelete, 2);
    assert_true(c.delete_after_wait[0].strip_finalizers);
    assert_false(c.delete_after_wait[1].strip_finalizers);
    assert_string_equal(c.delete_after_wait[1].ref.kind, "Pod");
    assert_true(c.wait_for_deletion);
    assert_true(c.reject_workflow_creates);
    assert_true(c.verify_node_poll_events);
    assert_true(c.verify_checkpoint_events);
    assert_int_equal(c.timeout_s, 90);
    gr_cases_config_free(&c);
}

static void test_empty_and_defaults(void **state)
{
    (void)state;
    gr_cases_config c;
    gr_err err;
    assert_int_equal(gr_cases_config_parse("", 0, NULL, &c, &err), GR_OK);
    assert_int_equal(c.timeout_s, GR_CASES_DEFAULT_TIMEOUT_S);
    assert_false(c.wait.set);
    assert_int_equal(c.nsteps, 0);
    gr_cases_config_free(&c);
    const char *t = "verifyFrozenGoodput: {}\ncollect: []\n";
    assert_int_equal(gr_cases_config_parse(t, strlen(t), NULL, &c, &err), GR_OK);
    assert_int_equal(c.frozen_goodput, GR_CASES_FROZEN_INTACT);
    gr_cases_config_free(&c);
}

/* Each bad config must fail with a message naming file, key path and fix. */
static void expect_error(const char *text, const char *want1, const char *want2)
{
    gr_cases_config c;
    gr_err err;
    int rc = gr_cases_config_parse(text, strlen(text), "cases/x/input_config.yaml", &c, &err);
    if (rc == GR_OK) {
        gr_cases_config_free(&c);
        fail_msg("accepted: %s", text);
    }
    if (!strstr(err.msg, want1) || (want2 && !strstr(err.msg, want2)))
        fail_msg("for %s\n got: %s\n want: %s / %s", text, err.msg, want1, want2 ? want2 : "");
    assert_non_null(strstr(err.msg, "cases/x/input_config.yaml"));
}

static void test_unknown_keys(void **state)
{
    (void)state;
    expect_error("waitFr: {kind: Job, name: x}\n", "(top level): unknown key \"waitFr\"",
                 "known: waitFor");
    expect_error("waitFor: {kind: Job, name: x, conditon: A}\n",
                 "waitFor: unknown key \"conditon\"", NULL);
    expect_error("steps: [{patches: [{target: {kind: A, name: b}, patch: {}, stauts: true}]}]\n",
                 "steps[0].patches[0]: unknown key \"stauts\"", "known: target, status, patch");
    expect_error("steps: [{waitfor: {}}]\n", "steps[0]: unknown key \"waitfor\"", NULL);
    expect_error("steps: [{patches: [{target: {kind: A, name: b, ns: c}, patch: {}}]}]\n",
                 "steps[0].patches[0].target: unknown key \"ns\"", NULL);
    expect_error("events: [{involvedKind: A, involvedName: b, expect: [{reason: R, typ: W}]}]\n",
                 "events[0].expect[0]: unknown key \"typ\"", NULL);
    expect_error("events: [{involvedKind: A, involvedName: b, expect: [], ns: x}]\n",
                 "events[0]: unknown key \"ns\"", NULL);
    expect_error("generateNodes: {count: 1, label: {}}\n", "generateNodes: unknown key \"label\"",
                 NULL);
    expect_error("verifyFrozenGoodput: {mod: strip}\n", "verifyFrozenGoodput: unknown key \"mod\"",
                 NULL);
    expect_error("deleteAfterWait: [{kind: A, name: b, stripFinalizer: true}]\n",
                 "deleteAfterWait[0]: unknown key \"stripFinalizer\"", NULL);
}

static void test_bad_values(void **state)
{
    (void)state;
    expect_error("timeoutSeconds: 0\n", "timeoutSeconds", "at least 1");
    expect_error("timeoutSeconds: -5\n", "timeoutSeconds", "integer from 0");
    expect_error("timeoutSeconds: \"30\"\n", "timeoutSeconds", "integer");
    expect_error("waitFor: {kind: Job}\n", "waitFor", "name is required");
    expect_error("waitFor: {name: x}\n", "waitFor", "kind is required");
    expect_error("waitFor: {kind: Job, name: x, reason: R}\n", "reason needs condition", NULL);
    expect_error("waitFor: Job/x\n", "waitFor", "write a mapping");
    expect_error("steps: {}\n", "steps: expected a sequence", NULL);
    expect_error("steps: [{patches: [{target: {kind: A, name: b}}]}]\n", "steps[0].patches[0]",
                 "patch is required");
    expect_error("steps: [{patches: [{patch: {}}]}]\n", "target is required", NULL);
    expect_error("collect: [1]\n", "collect[0]", "kind name");
    expect_error("collectMetrics: yes\n", "collectMetrics", "true/false");
    expect_error("events: [{involvedKind: A, expect: []}]\n", "events[0]", "involvedName");
    expect_error("events: [{involvedKind: A, involvedName: b, expect: [{type: Normal}]}]\n",
                 "events[0].expect[0]", "reason is required");
    expect_error(
        "events: [{involvedKind: A, involvedName: b, expect: [{type: Info, reason: R}]}]\n", "Info",
        "Normal or Warning");
    expect_error("generateNodes: {labels: {}}\n", "generateNodes.count", "required");
    expect_error("generateNodes: {count: 1001}\n", "generateNodes", "0 to 1000");
    expect_error("generateNodes: {count: 1, labels: {a: 1}}\n", "label \"a\"", "string value");
    expect_error("generateNodes: {count: 1, allocatable: {nvidia.com/gpu: 8}}\n",
                 "generateNodes.allocatable", "quote it");
    expect_error("generateNodes: {count: 2, allocatableOf: {\"2\": {}}}\n",
                 "generateNodes.allocatableOf", "node index 0..1");
    expect_error("verifySpecImmutable: 1\n", "verifySpecImmutable", "true or false");
    expect_error("verifySpecImmutable: true\n", "verifySpecImmutable", "needs waitFor");
    expect_error("verifyFrozenGoodput: {mode: gone}\n", "\"gone\"", "strip or intact");
    expect_error("waitForDeletion: true\n", "waitForDeletion", "needs deleteAfterWait");
    expect_error("verifyCheckpointEvents: true\n", "verifyCheckpointEvents", "needs waitFor");
    expect_error("- a\n- b\n", "(top level)", "expected a mapping");
    expect_error("rejectWorkflowCreates: nope\n", "rejectWorkflowCreates", "true or false");
}

static void test_node_names(void **state)
{
    (void)state;
    char a[GR_CASES_NODE_NAME_MAX], b[GR_CASES_NODE_NAME_MAX], h[7];
    gr_err err;
    assert_int_equal(gr_cases_node_name("ns-1", 0, a, &err), GR_OK);
    assert_int_equal(gr_cases_node_hash("ns-1", h, &err), GR_OK);
    /* sha256("ns-1") begins 4c1f5f... : the name is gen-<hash6>-node-NN */
    assert_int_equal(strlen(a), strlen("gen-xxxxxx-node-00"));
    assert_memory_equal(a, "gen-", 4);
    assert_memory_equal(a + 4, h, 6);
    assert_string_equal(a + 10, "-node-00");
    assert_int_equal(gr_cases_node_name("ns-1", 7, b, &err), GR_OK);
    assert_string_equal(b + 10, "-node-07");
    assert_int_equal(gr_cases_node_name("ns-1", 123, b, &err), GR_OK);
    assert_string_equal(b + 10, "-node-123");
    assert_int_equal(gr_cases_node_name("ns-2", 0, b, &err), GR_OK);
    assert_string_not_equal(a, b); /* another run, another hash */
    assert_int_equal(gr_cases_node_name("ns-1", -1, b, &err), GR_EINVAL);
    assert_int_equal(gr_cases_node_name("ns-1", GR_CASES_MAX_NODES, b, &err), GR_EINVAL);
    /* known vector: SHA-256("") = e3b0c442... */
    assert_int_equal(gr_cases_node_name("", 1, b, &err), GR_OK);
    assert_string_equal(b, "gen-e3b0c4-node-01");
}

static json_t *parse(const char *s)
{
    json_t *v = NULL;
    gr_err err;
    assert_int_equal(gr_json_parse(s, strlen(s), 0, "t", &v, &err), GR_OK);
    return v;
}

static void assert_json(const json_t *got, const char *want)
{
    json_t *w = parse(want);
    if (!gr_json_equal(got, w)) {
        char *g = json_dumps(got, JSON_SORT_KEYS);
        fail_msg("got  %s\nwant %s", g, want);
    }
    json_decref(w);
}

static void test_sanitize(void **state)
{
    (void)state;
    char h[7];
    gr_err err;
    assert_int_equal(gr_cases_node_hash("rc-x-1a2b3", h, &err), GR_OK);
    char in[4096];
    snprintf(in, sizeof in,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\","
             "\"namespace\":\"rc-x-1a2b3\",\"uid\":\"0b6f3c2e-1111-2222-3333-444455556666\","
             "\"resourceVersion\":\"42\",\"creationTimestamp\":\"2026-12-01T10:00:00Z\","
             "\"generation\":3,\"managedFields\":[{}],"
             "\"labels\":{\"node\":\"gen-%s-node-01\",\"batch.kubernetes.io/controller-uid\":"
             "\"0b6f3c2e-1111-2222-3333-444455556666\"},"
             "\"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"j\",\"uid\":\"abc\"}]},"
             "\"data\":{\"when\":\"2026-12-01T10:00:00Z\",\"where\":\"svc.rc-x-1a2b3.svc\","
             "\"gen-%s-node-02\":\"x\"},"
             "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"lastTransitionTime\":"
             "\"2026-12-01T10:00:01.123456Z\",\"message\":\"not a time\"}],\"startTime\":"
             "\"2026-12-01T10:00:00+02:00\",\"n\":1}}",
             h, h);
    json_t *o = parse(in);
    assert_int_equal(gr_cases_sanitize(o, "rc-x-1a2b3", h, &err), GR_OK);
    assert_json(o,
                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\","
                "\"namespace\":\"NAMESPACE\",\"labels\":{\"node\":\"gen-xxxxxx-node-01\","
                "\"batch.kubernetes.io/controller-uid\":\"UID\"},"
                "\"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"j\",\"uid\":\"UID\"}]},"
                "\"data\":{\"when\":\"2026-12-01T10:00:00Z\",\"where\":\"svc.NAMESPACE.svc\","
                "\"gen-xxxxxx-node-02\":\"x\"},"
                "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"lastTransitionTime\":\"TIME\","
                "\"message\":\"not a time\"}],\"startTime\":\"TIME\",\"n\":1}}");
    json_decref(o);

    /* Events: random name suffix, counts and every timestamp. */
    o = parse("{\"kind\":\"Event\",\"metadata\":{\"name\":\"j1.17a2b3c4d5e6f708\","
              "\"deletionTimestamp\":\"2026-12-01T10:00:00Z\"},\"count\":3,"
              "\"firstTimestamp\":\"2026-12-01T10:00:00Z\",\"reason\":\"Created\"}");
    assert_int_equal(gr_cases_sanitize(o, "ns", NULL, &err), GR_OK);
    assert_json(o, "{\"kind\":\"Event\",\"metadata\":{\"name\":\"j1.xxxxxx\","
                   "\"deletionTimestamp\":\"TIME\"},\"firstTimestamp\":\"TIME\","
                   "\"reason\":\"Created\"}");
    json_decref(o);
    /* Nodes: the taints that only reflect the missing kubelet go. */
    o = parse("{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"annotations\":"
              "{\"node.alpha.kubernetes.io/ttl\":\"0\"}},\"spec\":{\"taints\":["
              "{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoSchedule\"},"
              "{\"key\":\"gpu\",\"effect\":\"NoSchedule\"},"
              "{\"key\":\"node.kubernetes.io/unreachable\",\"effect\":\"NoExecute\"}]}}");
    assert_int_equal(gr_cases_sanitize(o, "ns", NULL, &err), GR_OK);
    assert_json(o, "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"},\"spec\":{\"taints\":"
                   "[{\"key\":\"gpu\",\"effect\":\"NoSchedule\"}]}}");
    json_decref(o);
    o = parse("{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"},\"spec\":{\"taints\":["
              "{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoSchedule\"}]}}");
    assert_int_equal(gr_cases_sanitize(o, "ns", NULL, &err), GR_OK);
    assert_json(o, "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"},\"spec\":{}}");
    json_decref(o);
    json_t *arr = json_array();
    assert_int_equal(gr_cases_sanitize(arr, "ns", NULL, &err), GR_EINVAL);
    json_decref(arr);
}

static void test_obj_key(void **state)
{
    (void)state;
    json_t *o = parse("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"n\"}}");
    char *k = gr_cases_obj_key(o);
    assert_string_equal(k, "Pod/n/p");
    free(k);
    json_decref(o);
}

static void test_metrics_filter(void **state)
{
    (void)state;
    static const char *const pfx[] = {"nvcre_goodput_"};
    gr_cases_metrics m = {true, 1, (const char **)(uintptr_t)pfx};
    const char *text = "# HELP nvcre_goodput_ratio Goodput\n"
                       "# TYPE nvcre_goodput_ratio gauge\n"
                       "nvcre_goodput_ratio{workflow=\"w\",namespace=\"ns1\",job=\"j\"} 0.93\n"
                       "nvcre_goodput_ratio{namespace=\"other\",job=\"j\"} 0.5\n"
                       "nvcre_goodput_total 4 1700000000\n"
                       "nvcre_reconcile_total{result=\"success\"} 12\n"
                       "nvcre_goodput_x{a=\"q\\\"uote\"} 1\n";
    json_t *out = NULL;
    gr_err err;
    assert_int_equal(gr_cases_metrics_filter(text, strlen(text), &m, "ns1", &out, &err), GR_OK);
    assert_json(out, "{\"nvcre_goodput_ratio{job=\\\"j\\\",namespace=\\\"NAMESPACE\\\","
                     "workflow=\\\"w\\\"}\":\"0.93\",\"nvcre_goodput_total\":\"4\","
                     "\"nvcre_goodput_x{a=\\\"q\\\"uote\\\"}\":\"1\"}");
    json_decref(out);
    const char *bad = "nvcre_goodput_ratio{job=\"j\n";
    assert_int_equal(gr_cases_metrics_filter(bad, strlen(bad), &m, NULL, &out, &err), GR_EPARSE);
    assert_non_null(strstr(err.msg, "line 1"));
    assert_null(out);
    const char *novalue = "\n\nnvcre_goodput_ratio\n";
    assert_int_equal(gr_cases_metrics_filter(novalue, strlen(novalue), &m, NULL, &out, &err),
                     GR_EPARSE);
    assert_non_null(strstr(err.msg, "line 3"));
}

static void test_wait_met(void **state)
{
    (void)state;
    gr_cases_wait w = {.set = true, .restart_count = -1, .failed_node_count = -1};
    json_t *o = parse("{\"status\":{\"conditions\":[{\"type\":\"InProgress\",\"status\":"
                      "\"False\"},{\"type\":\"Succeeded\",\"status\":\"True\",\"reason\":"
                      "\"AllPassed\"}],\"restartCount\":2,\"failedNodes\":[{\"name\":\"a\"}]}}");
    assert_true(gr_cases_wait_met(&w, o)); /* existence only */
    w.condition = "Succeeded";
    assert_true(gr_cases_wait_met(&w, o));
    w.reason = "AllPassed";
    assert_true(gr_cases_wait_met(&w, o));
    w.reason = "Other";
    assert_false(gr_cases_wait_met(&w, o));
    w.reason = NULL;
    w.condition = "InProgress"; /* present but False */
    assert_false(gr_cases_wait_met(&w, o));
    w.condition = "Failed"; /* absent */
    assert_false(gr_cases_wait_met(&w, o));
    w.condition = NULL;
    w.restart_count = 2;
    assert_true(gr_cases_wait_met(&w, o));
    w.restart_count = 3;
    assert_false(gr_cases_wait_met(&w, o));
    w.restart_count = -1;
    w.failed_node_count = 1;
    assert_true(gr_cases_wait_met(&w, o));
    w.failed_node_count = 2;
    assert_false(gr_cases_wait_met(&w, o));
    json_decref(o);
    o = parse("{}");
    w.failed_node_count = 0; /* no status yet: zero failed nodes */
    assert_true(gr_cases_wait_met(&w, o));
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_key),    cmocka_unit_test(test_empty_and_defaults),
        cmocka_unit_test(test_unknown_keys), cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_node_names),   cmocka_unit_test(test_sanitize),
        cmocka_unit_test(test_obj_key),      cmocka_unit_test(test_metrics_filter),
        cmocka_unit_test(test_wait_met),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
