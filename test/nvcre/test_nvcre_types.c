/*
 * test_nvcre_types.c — unit tests of gr_nvcre_api: reason tables, the label
 * and gang-scheduler checks (the C side of the admission rules the controllers
 * re-apply after overrides, WF-40), and the printf formats of the contract
 * messages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gr_nvcre_types.h"

static void key_ok(const char *k)
{
    gr_err err;
    if (gr_nvcre_label_key_check(k, strlen(k), &err) != GR_OK) {
        fail_msg("key %s rejected: %s", k, err.msg);
    }
}

static void key_bad(const char *k, const char *msg)
{
    gr_err err;
    if (gr_nvcre_label_key_check(k, strlen(k), &err) != GR_EINVAL) {
        fail_msg("key %s accepted", k);
    }
    assert_string_equal(err.msg, msg);
}

static void test_label_keys(void **state)
{
    (void)state;
    char name63[64], name64[65], p253[300], p254[300];
    memset(name63, 'a', 63);
    name63[63] = '\0';
    memset(name64, 'a', 64);
    name64[64] = '\0';
    /* 63+1+63+1+63+1+61 = 253 */
    snprintf(p253, sizeof p253, "%.63s.%.63s.%.63s.%.61s/q", name64, name64, name64, name64);
    snprintf(p254, sizeof p254, "%.63s.%.63s.%.63s.%.62s/q", name64, name64, name64, name64);

    key_ok("environment"); /* JOB-30 */
    key_ok("kai.scheduler/queue");
    key_ok("kueue.x-k8s.io/queue-name");
    key_ok("A.b_c-9");
    key_ok("a");
    key_ok(name63); /* JOB-27 */
    key_ok(p253);   /* JOB-28 */
    key_bad(name64, GR_NVCRE_MSG_LABEL_KEY_INVALID);
    key_bad(p254, GR_NVCRE_MSG_LABEL_KEY_PREFIX_TOO_LONG);
    key_bad("", GR_NVCRE_MSG_LABEL_KEY_INVALID);
    key_bad("bad key", GR_NVCRE_MSG_LABEL_KEY_INVALID); /* JOB-13 */
    key_bad("-x", GR_NVCRE_MSG_LABEL_KEY_INVALID);
    key_bad("x_", GR_NVCRE_MSG_LABEL_KEY_INVALID);
    key_bad("a.com/b/c", GR_NVCRE_MSG_LABEL_KEY_INVALID);
    key_bad("Example.com/x", GR_NVCRE_MSG_LABEL_KEY_INVALID); /* JOB-29 */
    key_bad("example..com/x", GR_NVCRE_MSG_LABEL_KEY_INVALID);
    key_bad("-example.com/x", GR_NVCRE_MSG_LABEL_KEY_INVALID);
    key_bad("example.com-/x", GR_NVCRE_MSG_LABEL_KEY_INVALID);
    key_bad("ex_ample.com/x", GR_NVCRE_MSG_LABEL_KEY_INVALID);
    key_bad("/x", GR_NVCRE_MSG_LABEL_KEY_INVALID);
    key_bad("example.com/", GR_NVCRE_MSG_LABEL_KEY_INVALID);
    /* Not NUL-terminated: only len bytes count. */
    assert_int_equal(gr_nvcre_label_key_check("abc def", 3, NULL), GR_OK);
    assert_int_equal(gr_nvcre_label_key_check(NULL, 0, NULL), GR_EINVAL);
}

static void test_label_values(void **state)
{
    (void)state;
    char v63[64], v64[65];
    memset(v63, 'v', 63);
    v63[63] = '\0';
    memset(v64, 'v', 64);
    v64[64] = '\0';
    gr_err err;
    assert_int_equal(gr_nvcre_label_value_check("", 0, &err), GR_OK); /* JOB-31 */
    assert_int_equal(gr_nvcre_label_value_check(NULL, 0, &err), GR_OK);
    assert_int_equal(gr_nvcre_label_value_check("burn-in", 7, &err), GR_OK);
    assert_int_equal(gr_nvcre_label_value_check("a.b_c-D", 7, &err), GR_OK);
    assert_int_equal(gr_nvcre_label_value_check(v63, 63, &err), GR_OK);
    /* JOB-14 */
    assert_int_equal(gr_nvcre_label_value_check(v64, 64, &err), GR_EINVAL);
    assert_string_equal(err.msg, GR_NVCRE_MSG_LABEL_VALUE_INVALID);
    assert_int_equal(gr_nvcre_label_value_check("burn in", 7, &err), GR_EINVAL);
    assert_int_equal(gr_nvcre_label_value_check("burn-", 5, &err), GR_EINVAL);
    assert_int_equal(gr_nvcre_label_value_check(".x", 2, &err), GR_EINVAL);
    assert_int_equal(gr_nvcre_label_value_check("a/b", 3, &err), GR_EINVAL);
}

static void test_reserved(void **state)
{
    (void)state;
    /* JOB-15, JOB-16 */
    assert_true(gr_nvcre_label_key_reserved("app.kubernetes.io/managed-by", 28));
    assert_true(gr_nvcre_label_key_reserved("nvcre.nvidia.com/job", 20));
    assert_true(gr_nvcre_label_key_reserved("nvcre.nvidia.com/", 17));
    assert_false(gr_nvcre_label_key_reserved("app.kubernetes.io/managed-by-x", 30));
    assert_false(gr_nvcre_label_key_reserved("app.kubernetes.io/name", 22));
    assert_false(gr_nvcre_label_key_reserved("sub.nvcre.nvidia.com/x", 22));
    assert_false(gr_nvcre_label_key_reserved("nvcre.nvidia.com.example/x", 26));
    assert_false(gr_nvcre_label_key_reserved("nvcre.nvidia.com", 16));
    assert_false(gr_nvcre_label_key_reserved(NULL, 0));
}

static json_t *labels_n(int n)
{
    json_t *o = json_object();
    for (int i = 0; i < n; i++) {
        char k[16];
        snprintf(k, sizeof k, "k%02d", i);
        json_object_set_new(o, k, json_string("v"));
    }
    return o;
}

static void test_workload_labels(void **state)
{
    (void)state;
    gr_err err;
    const char *path = GR_NVCRE_PATH_WORKFLOW_WORKLOAD_LABELS;
    json_t *l = labels_n(32); /* JOB-12 */
    assert_int_equal(gr_nvcre_workload_labels_check(l, path, &err), GR_OK);
    json_object_set_new(l, "k32", json_string("v"));
    assert_int_equal(gr_nvcre_workload_labels_check(l, path, &err), GR_EINVAL);
    assert_string_equal(err.msg, "spec.jobTemplate.spec.workloadMetadata.labels: Too many: 33: "
                                 "must have at most 32 items");
    json_decref(l);

    assert_int_equal(gr_nvcre_workload_labels_check(NULL, path, &err), GR_OK);
    json_t *null = json_null();
    assert_int_equal(gr_nvcre_workload_labels_check(null, path, &err), GR_OK);
    json_decref(null);

    l = json_pack("{s:s, s:s}", "environment", "", "kai.scheduler/queue", "team-a"); /* JOB-31 */
    assert_int_equal(gr_nvcre_workload_labels_check(l, path, &err), GR_OK);
    json_decref(l);

    l = json_pack("{s:s}", "nvcre.nvidia.com/job", "x"); /* JOB-16 */
    assert_int_equal(gr_nvcre_workload_labels_check(l, path, &err), GR_EINVAL);
    assert_string_equal(err.msg, "spec.jobTemplate.spec.workloadMetadata.labels[\"nvcre.nvidia.com/"
                                 "job\"]: " GR_NVCRE_MSG_LABELS_RESERVED);
    json_decref(l);

    l = json_pack("{s:s}", "bad key", "x"); /* JOB-13 */
    assert_int_equal(gr_nvcre_workload_labels_check(l, "labels", &err), GR_EINVAL);
    assert_string_equal(err.msg, "labels[\"bad key\"]: " GR_NVCRE_MSG_LABEL_KEY_INVALID);
    json_decref(l);

    l = json_pack("{s:s}", "env", "bad value"); /* JOB-14 */
    assert_int_equal(gr_nvcre_workload_labels_check(l, "labels", &err), GR_EINVAL);
    assert_string_equal(err.msg, "labels[\"env\"]: " GR_NVCRE_MSG_LABEL_VALUE_INVALID);
    json_decref(l);

    l = json_pack("{s:i}", "env", 1);
    assert_int_equal(gr_nvcre_workload_labels_check(l, "labels", &err), GR_EINVAL);
    json_decref(l);
    l = json_pack("[s]", "env");
    assert_int_equal(gr_nvcre_workload_labels_check(l, "labels", NULL), GR_EINVAL);
    json_decref(l);
}

static void test_gang(void **state)
{
    (void)state;
    gr_err err;
    /* WF-14, WF-15: empty resolves to the defaults. */
    assert_string_equal(gr_nvcre_effective_queue(NULL), "default-queue");
    assert_string_equal(gr_nvcre_effective_queue(""), "default-queue");
    assert_string_equal(gr_nvcre_effective_queue("team-a"), "team-a");
    assert_string_equal(gr_nvcre_effective_queue_label_key(""), "kai.scheduler/queue");
    assert_string_equal(gr_nvcre_effective_queue_label_key("runai/queue"), "runai/queue");

    assert_int_equal(gr_nvcre_queue_check("", &err), GR_OK);
    assert_int_equal(gr_nvcre_queue_check("team-a", &err), GR_OK);
    assert_int_equal(gr_nvcre_queue_check("team a", &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "gangScheduler.queue: "));

    assert_int_equal(gr_nvcre_queue_label_key_check("", &err), GR_OK);
    assert_int_equal(gr_nvcre_queue_label_key_check("kai.scheduler/queue", &err), GR_OK);
    assert_int_equal(gr_nvcre_queue_label_key_check("nvcre.nvidia.com/q", &err), GR_EINVAL);
    assert_string_equal(err.msg,
                        "gangScheduler.queueLabelKey: " GR_NVCRE_MSG_QUEUE_LABEL_KEY_RESERVED);
    assert_int_equal(gr_nvcre_queue_label_key_check("app.kubernetes.io/managed-by", &err),
                     GR_EINVAL);
    assert_string_equal(err.msg,
                        "gangScheduler.queueLabelKey: " GR_NVCRE_MSG_QUEUE_LABEL_KEY_RESERVED);
    char long_prefix[320];
    memset(long_prefix, 'a', 254);
    strcpy(long_prefix + 254, "/q");
    assert_int_equal(gr_nvcre_queue_label_key_check(long_prefix, &err), GR_EINVAL);
    assert_string_equal(
        err.msg, "gangScheduler.queueLabelKey: " GR_NVCRE_MSG_QUEUE_LABEL_KEY_PREFIX_TOO_LONG);
    assert_int_equal(gr_nvcre_queue_label_key_check(long_prefix, NULL), GR_EINVAL);
    assert_int_equal(gr_nvcre_queue_label_key_check("Kai/queue", &err), GR_EINVAL);
}

static void test_conditions(void **state)
{
    (void)state;
    /* JOB-46, WF-50: the exclusive set. */
    assert_true(gr_nvcre_condition_is_exclusive("InProgress"));
    assert_true(gr_nvcre_condition_is_exclusive("Succeeded"));
    assert_true(gr_nvcre_condition_is_exclusive("Failed"));
    assert_false(gr_nvcre_condition_is_exclusive("HardwareFailed"));   /* JOB-50 */
    assert_false(gr_nvcre_condition_is_exclusive("ValidationFailed")); /* JOB-51, WF-51 */
    assert_false(gr_nvcre_condition_is_exclusive(NULL));

    /* JOB-47 */
    static const char *const inprog[] = {"WorkloadCreated",          "WorkloadPending",
                                         "WorkloadRunning",          "WorkloadSchedulingBlocked",
                                         "WorkloadCreationRejected", "WorkloadRestarting"};
    for (size_t i = 0; i < sizeof inprog / sizeof inprog[0]; i++) {
        assert_true(gr_nvcre_reason_known(GR_NVCRE_JOB, "InProgress", "True", inprog[i]));
    }
    /* JOB-48, JOB-49 */
    assert_true(gr_nvcre_reason_known(GR_NVCRE_JOB, "Failed", "True", "WorkloadFailed"));
    assert_true(gr_nvcre_reason_known(GR_NVCRE_JOB, "Failed", "True", "WorkloadStalled"));
    assert_true(gr_nvcre_reason_known(GR_NVCRE_JOB, "Failed", "True", "WorkloadCreationError"));
    assert_true(gr_nvcre_reason_known(GR_NVCRE_JOB, "Failed", "True", "JobTimedOut"));
    assert_false(gr_nvcre_reason_known(GR_NVCRE_JOB, "InProgress", "True", "WorkloadFailed"));
    assert_true(
        gr_nvcre_reason_known(GR_NVCRE_JOB, "HardwareFailed", "True", "HardwareFailureDetected"));
    assert_true(gr_nvcre_reason_known(GR_NVCRE_JOB, "ValidationFailed", "False", "ThresholdsMet"));
    assert_false(gr_nvcre_reason_known(GR_NVCRE_JOB, "ValidationFailed", "True", "ThresholdsMet"));
    assert_true(gr_nvcre_reason_known(GR_NVCRE_JOB, "Succeeded", "False", "NotApplicable"));
    assert_false(gr_nvcre_reason_known(GR_NVCRE_JOB, "Succeeded", "False", "Superseded"));
    assert_true(gr_nvcre_reason_known(GR_NVCRE_WORKLOAD_RUN, "Failed", "False", "Superseded"));

    /* WF-38, WF-54 */
    assert_true(
        gr_nvcre_reason_known(GR_NVCRE_WORKFLOW, "Failed", "True", "GangSchedulingConflict"));
    assert_true(gr_nvcre_reason_known(GR_NVCRE_WORKFLOW, "Failed", "True", "JobValidationFailed"));
    assert_true(gr_nvcre_reason_known(GR_NVCRE_WORKFLOW, "ValidationFailed", "True",
                                      "JobValidationFailed"));
    assert_false(gr_nvcre_reason_known(GR_NVCRE_WORKFLOW, "Failed", "True", "WorkloadStalled"));
    assert_false(gr_nvcre_reason_known((gr_nvcre_kind)99, "Failed", "True", "JobFailed"));
    assert_false(gr_nvcre_reason_known(GR_NVCRE_JOB, NULL, "True", "JobFailed"));

    /* JOB-76 */
    assert_true(gr_nvcre_failed_node_reason_known("HardwareFailureDetected"));
    assert_true(gr_nvcre_failed_node_reason_known("ThresholdViolation"));
    assert_true(gr_nvcre_failed_node_reason_known("WorkloadFailed"));
    assert_false(gr_nvcre_failed_node_reason_known("ThresholdViolated"));
    assert_false(gr_nvcre_failed_node_reason_known(NULL));
}

static void test_message_formats(void **state)
{
    (void)state;
    char buf[512];
    /* WF-47 */
    snprintf(buf, sizeof buf, GR_NVCRE_MSG_GANG_LABEL_CONFLICT_FMT,
             GR_NVCRE_PATH_WORKFLOW_WORKLOAD_LABELS, "kai.scheduler/queue", "team-b", "team-a");
    assert_string_equal(buf,
                        "spec.jobTemplate.spec.workloadMetadata.labels[\"kai.scheduler/queue\"]: "
                        "conflicting label value \"team-b\", expected \"team-a\"");
    /* WF-49 */
    snprintf(buf, sizeof buf, GR_NVCRE_MSG_GANG_RUNTIME_CONFLICT_FMT, "team-a", "nccl-runtime",
             "node", "kai.scheduler/queue", "team-b", "template.metadata.labels");
    assert_string_equal(buf,
                        "gangScheduler is configured with queue \"team-a\" but TrainingRuntime "
                        "\"nccl-runtime\" replicatedJob \"node\" sets label "
                        "\"kai.scheduler/queue\" to \"team-b\" on template.metadata.labels");
    snprintf(buf, sizeof buf, GR_NVCRE_MSG_SCHEDULING_BLOCKED_FMT, "0/3 nodes are available");
    assert_string_equal(buf, "Workload pods are unschedulable: 0/3 nodes are available");
    snprintf(buf, sizeof buf, GR_NVCRE_MSG_RESTARTING_FMT, 1, 3);
    assert_string_equal(buf, "Restarting workload from checkpoint (restart 1/3)");
    assert_string_equal(GR_NVCRE_API_VERSION, GR_NVCRE_GROUP "/" GR_NVCRE_VERSION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_keys),
        cmocka_unit_test(test_label_values),
        cmocka_unit_test(test_reserved),
        cmocka_unit_test(test_workload_labels),
        cmocka_unit_test(test_gang),
        cmocka_unit_test(test_conditions),
        cmocka_unit_test(test_message_formats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
