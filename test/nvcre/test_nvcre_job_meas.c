/*
 * test_nvcre_job_meas.c — unit tests of the Job's side of the measurements
 * (issue 18, gr_nvcre_job_meas.c): the GoodputMeasurement /
 * BandwidthMeasurement a Job creates, stall inputs from the
 * GoodputMeasurement and the status machine's stall/restart decisions with
 * them, and the threshold verdict with an injected clock. Checklist IDs are
 * named at the assertions.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gr_nvcre_job.h"
#include "gr_nvcre_types.h"

#define S GR_NVCRE_NS_PER_S
/* 2026-01-01T00:00:00Z */
#define T0 (INT64_C(1767225600) * S)

static json_t *parse(const char *s)
{
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    if (!j)
        fail_msg("bad test JSON: %s: %s", e.text, s);
    return j;
}

static const char *str_at(const json_t *o, const char *a, const char *b)
{
    const json_t *x = json_object_get(o, a);
    return json_string_value(b ? json_object_get(x, b) : x);
}

static const json_t *cond(const json_t *status, const char *type)
{
    return gr_nvcre_job_condition(status, type);
}

/* ------------------------------------------------------------ creation */

static void test_names(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(gr_nvcre_job_measurement_name("train", GR_NVCRE_MEAS_GOODPUT, out), GR_OK);
    assert_string_equal(out, "train-goodput");
    assert_int_equal(gr_nvcre_job_measurement_name("train", GR_NVCRE_MEAS_BANDWIDTH, out), GR_OK);
    assert_string_equal(out, "train-bandwidth");
    /* 64 characters → at most 63 with the FNV rule (case jm-create-name-truncated) */
    assert_int_equal(
        gr_nvcre_job_measurement_name("a-very-long-training-job-name-that-is-fifty-five-chars-x",
                                      GR_NVCRE_MEAS_GOODPUT, out),
        GR_OK);
    assert_string_equal(out, "a-very-long-training-job-name-that-is-fifty-five-chars-x-93ba6");
    assert_true(strlen(out) <= 63); /* 62: the cut ended in a trimmed "-" */
    assert_int_equal(gr_nvcre_job_measurement_name("", GR_NVCRE_MEAS_GOODPUT, out), GR_EINVAL);
    assert_string_equal(gr_nvcre_job_measurement_field(GR_NVCRE_MEAS_BANDWIDTH),
                        "bandwidthMeasurement");
}

static void test_build_owner_job(void **state)
{
    (void)state;
    /* JOB-99 JOB-78: owner = the Job when no Workflow controls it */
    json_t *job = parse("{\"metadata\":{\"name\":\"train\",\"namespace\":\"ns\",\"uid\":\"u-job\","
                        "\"labels\":{\"team\":\"x\"}},\"spec\":{\"bandwidthMeasurement\":{"
                        "\"logProfileRef\":\"nccl-all-reduce\",\"sampleInterval\":\"5s\","
                        "\"testType\":\"all_reduce\"}}}");
    json_t *m = NULL;
    assert_int_equal(gr_nvcre_job_build_measurement(job, GR_NVCRE_MEAS_BANDWIDTH, &m, NULL), GR_OK);
    json_t *want = parse(
        "{\"apiVersion\":\"nvcre.nvidia.com/v1alpha1\",\"kind\":\"BandwidthMeasurement\","
        "\"metadata\":{\"name\":\"train-bandwidth\",\"namespace\":\"ns\",\"labels\":{"
        "\"app.kubernetes.io/managed-by\":\"nvcre\",\"nvcre.nvidia.com/job\":\"train\"},"
        "\"ownerReferences\":[{\"apiVersion\":\"nvcre.nvidia.com/v1alpha1\",\"kind\":\"Job\","
        "\"name\":\"train\",\"uid\":\"u-job\",\"controller\":true,\"blockOwnerDeletion\":true}]},"
        "\"spec\":{\"jobRef\":{\"apiGroup\":\"nvcre.nvidia.com\",\"kind\":\"Job\",\"name\":"
        "\"train\"},\"logProfileRef\":\"nccl-all-reduce\",\"sampleInterval\":\"5s\","
        "\"testType\":\"all_reduce\"}}");
    if (!json_equal(m, want)) {
        char *d = json_dumps(m, JSON_SORT_KEYS);
        fail_msg("got %s", d);
    }
    assert_true(gr_nvcre_job_measurement_for(m, "train"));
    assert_false(gr_nvcre_job_measurement_for(m, "other"));
    json_decref(want);
    json_decref(m);
    /* not asked for: nothing, no error */
    m = (json_t *)1;
    assert_int_equal(gr_nvcre_job_build_measurement(job, GR_NVCRE_MEAS_GOODPUT, &m, NULL), GR_OK);
    assert_null(m);
    json_decref(job);
}

static void test_build_owner_workflow(void **state)
{
    (void)state;
    /* §1.2: controller owner = the Workflow; a non-controller Workflow ref
     * and foreign kinds are ignored; testType is bandwidth-only */
    json_t *job =
        parse("{\"metadata\":{\"name\":\"wf-job\",\"namespace\":\"ns\",\"uid\":\"u-job\","
              "\"ownerReferences\":[{\"apiVersion\":\"nvcre.nvidia.com/v1alpha1\",\"kind\":"
              "\"Workflow\",\"name\":\"old\",\"uid\":\"u-old\"},{\"apiVersion\":\"other.io/v1\","
              "\"kind\":\"Workflow\",\"name\":\"x\",\"uid\":\"u-x\",\"controller\":true},{"
              "\"apiVersion\":\"nvcre.nvidia.com/v1alpha1\",\"kind\":\"Workflow\",\"name\":\"wf\","
              "\"uid\":\"u-wf\",\"controller\":true}]},\"spec\":{\"goodputMeasurement\":{"
              "\"logProfileRef\":\"megatron\",\"testType\":\"ignored\"}}}");
    json_t *m = NULL;
    assert_int_equal(gr_nvcre_job_build_measurement(job, GR_NVCRE_MEAS_GOODPUT, &m, NULL), GR_OK);
    const json_t *o =
        json_array_get(json_object_get(json_object_get(m, "metadata"), "ownerReferences"), 0);
    assert_string_equal(str_at(o, "kind", NULL), "Workflow");
    assert_string_equal(str_at(o, "name", NULL), "wf");
    assert_string_equal(str_at(o, "uid", NULL), "u-wf");
    assert_true(json_is_true(json_object_get(o, "controller")));
    assert_string_equal(str_at(m, "metadata", "name"), "wf-job-goodput");
    assert_null(json_object_get(json_object_get(m, "spec"), "testType"));
    assert_null(json_object_get(json_object_get(m, "spec"), "sampleInterval"));
    json_decref(m);
    json_decref(job);
    /* missing logProfileRef: an error naming the field */
    job = parse("{\"metadata\":{\"name\":\"j\",\"namespace\":\"ns\",\"uid\":\"u\"},"
                "\"spec\":{\"goodputMeasurement\":{}}}");
    gr_err err;
    assert_int_equal(gr_nvcre_job_build_measurement(job, GR_NVCRE_MEAS_GOODPUT, &m, &err),
                     GR_EINVAL);
    assert_non_null(strstr(err.msg, "spec.goodputMeasurement.logProfileRef"));
    json_decref(job);
}

/* ------------------------------------------------------------ stalls */

static json_t *gm_obj(const char *status)
{
    char buf[2048];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"train-goodput\"},\"spec\":{\"sampleInterval\":\"1s\"},"
             "\"status\":%s}",
             status);
    return parse(buf);
}

static void test_stall_from(void **state)
{
    (void)state;
    json_t *spec = parse("{\"stallMultiplier\":3,\"startupStallTimeoutSeconds\":10}");
    json_t *gm = gm_obj("{\"startTime\":\"2026-01-01T00:00:00Z\",\"lastStepTimestamp\":"
                        "\"2026-01-01T00:01:00Z\",\"avgStepTimeSec\":\"0.5\",\"logInterval\":10}");
    gr_measure_gm_view v;
    gr_measure_gm_view_from(gm, &v);
    gr_nvcre_job_stall_in in;
    gr_nvcre_job_stall_from(spec, &v, &in);
    assert_true(in.stall_multiplier == 3.0);
    assert_int_equal(in.startup_timeout_s, 10);
    assert_int_equal(in.sample_interval_ns, S);
    assert_int_equal(in.gm_start_ns, T0);
    assert_int_equal(in.last_step_ns, T0 + 60 * S);
    assert_true(in.avg_step_s == 0.5);
    assert_int_equal(in.log_interval, 10);
    /* 3 × 0.5 × 10 + 2 × 1 s = 17 s after the last step */
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0, 0, T0 + 77 * S), GR_NVCRE_STALL_NONE);
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0, 0, T0 + 78 * S), GR_NVCRE_STALL_TRAINING);
    /* §3.5: no GoodputMeasurement → inactive */
    gr_nvcre_job_stall_from(spec, NULL, &in);
    assert_true(in.stall_multiplier == 0);
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0, 0, T0 + 9999 * S), GR_NVCRE_STALL_NONE);
    json_decref(gm);
    /* no step seen (avgStepTimeSec unset): the startup clock */
    gm = gm_obj("{\"startTime\":\"2026-01-01T00:00:00Z\"}");
    gr_measure_gm_view_from(gm, &v);
    gr_nvcre_job_stall_from(spec, &v, &in);
    assert_true(in.avg_step_s == 0);
    /* JOB-55: the anchor is clamped to workloadStartTime (T0+100) */
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0 + 100 * S, 0, T0 + 112 * S),
                     GR_NVCRE_STALL_NONE);
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0 + 100 * S, 0, T0 + 113 * S),
                     GR_NVCRE_STALL_STARTUP);
    json_decref(gm);
    json_decref(spec);
}

/* One running reconcile of a Job with its GoodputMeasurement. */
static int run_step(const json_t *spec, json_t *status, const json_t *gm, int64_t now,
                    gr_nvcre_job_out *out)
{
    gr_measure_gm_view v;
    gr_measure_gm_view_from(gm, &v);
    gr_nvcre_job_stall_in in;
    gr_nvcre_job_stall_from(spec, &v, &in);
    gr_nvcre_job_obs o;
    memset(&o, 0, sizeof o);
    o.now_ns = now;
    o.generation = 1;
    o.ns = "ns";
    o.workload_name = "train-workload";
    o.grace_ns = -1;
    o.wl.phase = GR_NVCRE_WL_RUNNING;
    o.stall = &in;
    o.max_restarts = (int)json_integer_value(
        json_object_get(json_object_get(spec, GR_NVCRE_F_CHECKPOINT), GR_NVCRE_F_MAX_RESTARTS));
    o.restart_eligible = gr_nvcre_job_restart_eligible(spec, status, v.last_checkpoint_step);
    return gr_nvcre_job_step(spec, status, &o, out, NULL);
}

static void test_restart_then_max(void **state)
{
    (void)state;
    json_t *spec = parse("{\"stallMultiplier\":2,\"checkpoint\":{\"pvcName\":\"c\","
                         "\"maxRestarts\":1}}");
    json_t *gm = gm_obj("{\"startTime\":\"2026-01-01T00:00:00Z\",\"lastStepTimestamp\":"
                        "\"2026-01-01T00:01:00Z\",\"avgStepTimeSec\":\"0.5\","
                        "\"lastCheckpointStep\":40,\"highestStep\":60}");
    json_t *status = parse("{\"workloadRef\":{\"name\":\"train-workload\"},"
                           "\"workloadStartTime\":\"2026-01-01T00:00:30Z\"}");
    gr_nvcre_job_out out;
    /* 2 × 0.5 + 2 s after 00:01:00 → 00:01:03 stalls; a checkpoint exists */
    assert_int_equal(run_step(spec, status, gm, T0 + 62 * S, &out), GR_OK);
    assert_false(out.delete_workload);
    assert_int_equal(run_step(spec, status, gm, T0 + 64 * S, &out), GR_OK);
    /* JOB-47 JOB-73 JOB-56: InProgress/WorkloadRestarting, restartCount 1,
     * workloadRef and workloadStartTime cleared, the workload deleted, an Event */
    assert_true(out.delete_workload);
    assert_true(out.phase_event);
    assert_string_equal(out.event_reason, "WorkloadRestarting");
    assert_string_equal(out.event_msg, "Restarting workload from checkpoint (restart 1/1)");
    assert_string_equal(str_at(cond(status, "InProgress"), "reason", NULL), "WorkloadRestarting");
    assert_int_equal(json_integer_value(json_object_get(status, "restartCount")), 1);
    assert_null(json_object_get(status, "workloadRef"));
    assert_null(json_object_get(status, "workloadStartTime"));
    /* requeue max(30 s, 2 × sampleInterval) */
    assert_int_equal(out.requeue_ns, 30 * S);
    /* the GoodputMeasurement reset (gr_measure_gm_restart_patch) */
    json_t *patch = NULL;
    assert_int_equal(gr_measure_gm_restart_patch(gm, T0 + 64 * S, &patch, NULL), GR_OK);
    json_t *ps = json_object_get(patch, "status");
    assert_true(json_is_null(json_object_get(ps, "lastStepTimestamp")));
    assert_true(json_is_null(json_object_get(ps, "avgStepTimeSec")));
    assert_string_equal(str_at(ps, "startTime", NULL), "2026-01-01T00:01:04Z");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(ps, "pendingInterruption"),
                                                        "lastCheckpointStep")),
                     40);
    json_decref(patch);
    /* the recreated workload runs; the reset measurement saw no step: the
     * startup clock (1200 s default + 2 s) runs from the new start */
    json_decref(gm);
    gm = gm_obj("{\"startTime\":\"2026-01-01T00:01:04Z\",\"lastCheckpointStep\":40}");
    json_object_set_new(status, "workloadRef", parse("{\"name\":\"train-workload\"}"));
    assert_int_equal(run_step(spec, status, gm, T0 + 70 * S, &out), GR_OK);
    assert_string_equal(str_at(cond(status, "InProgress"), "reason", NULL), "WorkloadRunning");
    assert_int_equal(run_step(spec, status, gm, T0 + (70 + 1202) * S, &out), GR_OK);
    assert_string_equal(str_at(cond(status, "InProgress"), "reason", NULL), "WorkloadRunning");
    assert_int_equal(run_step(spec, status, gm, T0 + (70 + 1203) * S, &out), GR_OK);
    /* JOB-48: maxRestarts reached → Failed/WorkloadStalled */
    assert_false(out.delete_workload);
    assert_string_equal(str_at(cond(status, "Failed"), "status", NULL), "True");
    assert_string_equal(str_at(cond(status, "Failed"), "reason", NULL), "WorkloadStalled");
    assert_string_equal(str_at(cond(status, "Failed"), "message", NULL),
                        "Workload stalled: no training step observed within startup timeout");
    assert_int_equal(json_integer_value(json_object_get(status, "restartCount")), 1);
    json_decref(status);
    json_decref(gm);
    json_decref(spec);
}

/* ------------------------------------------------------------ thresholds */

static json_t *succeeded_status(void)
{
    return parse("{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\",\"reason\":"
                 "\"WorkloadCompleted\",\"message\":\"m\",\"lastTransitionTime\":"
                 "\"2026-01-01T00:00:00Z\"}]}");
}

static json_t *bm_obj(const char *busbw, int complete)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"status\":{\"results\":[{\"sizeBytes\":1024,\"algBW\":\"1.0\",\"busBW\":\"2.0\","
             "\"samples\":1},{\"sizeBytes\":1048576,\"algBW\":\"190.0\",\"busBW\":\"%s\","
             "\"samples\":1}],\"conditions\":[{\"type\":\"%s\",\"status\":\"True\"}]}}",
             busbw, complete ? "Complete" : "Measuring");
    return parse(buf);
}

static void test_thresholds_verdicts(void **state)
{
    (void)state;
    gr_nvcre_job_verdict v;
    json_t *bm = bm_obj("366.5", 1);
    struct {
        const char *thresholds;
        const char *status, *reason, *message;
        int nodes;
    } t[] = {
        /* JOB-100 */
        {"{\"busBandwidthGBps\":\"value >= 350\",\"algBandwidthGBps\":\"value > 100\"}", "False",
         "ThresholdsMet", "All performance thresholds satisfied", 0},
        {"{\"busBandwidthGBps\":\"value >= 400\"}", "True", "ThresholdViolated",
         "Threshold \"busBandwidthGBps\" violated: measured 366.5000, expression: value >= 400", 2},
        {"{\"busBandwidthGBps\":\"value >= 100.0 && value <= 200.0\"}", "True", "ThresholdViolated",
         "Threshold \"busBandwidthGBps\" violated: measured 366.5000, expression: value >= 100.0 "
         "&& value <= 200.0",
         2},
        {"{\"busBandwidth\":\"value >= 1\"}", "True", "UnknownThresholdKey",
         "Unknown threshold key \"busBandwidth\"", 2},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char sb[512];
        snprintf(sb, sizeof sb, "{\"thresholds\":%s}", t[i].thresholds);
        json_t *spec = parse(sb);
        json_t *status = succeeded_status();
        assert_true(gr_nvcre_job_thresholds_pending(spec, status));
        assert_int_equal(gr_nvcre_job_thresholds_step(spec, status, NULL, bm, "n1, n2", 3,
                                                      T0 + 10 * S, &v, NULL),
                         GR_OK);
        const json_t *c = cond(status, "ValidationFailed");
        assert_non_null(c);
        assert_string_equal(str_at(c, "status", NULL), t[i].status);
        assert_string_equal(str_at(c, "reason", NULL), t[i].reason);
        assert_string_equal(str_at(c, "message", NULL), t[i].message);
        assert_true(v.changed && v.event && !v.pending);
        assert_string_equal(v.event_type, t[i].nodes ? "Warning" : "Normal");
        assert_string_equal(v.event_reason, t[i].reason);
        /* JOB-76: the group's nodes with reason ThresholdViolation */
        json_t *fn = json_object_get(status, "failedNodes");
        assert_int_equal(json_array_size(fn), (size_t)t[i].nodes);
        if (t[i].nodes) {
            assert_string_equal(str_at(json_array_get(fn, 1), "name", NULL), "n2");
            assert_string_equal(str_at(json_array_get(fn, 1), "reason", NULL),
                                "ThresholdViolation");
        }
        /* judged once: no longer pending, a second step changes nothing */
        assert_false(gr_nvcre_job_thresholds_pending(spec, status));
        assert_int_equal(
            gr_nvcre_job_thresholds_step(spec, status, NULL, bm, "n1", 3, T0 + 20 * S, &v, NULL),
            GR_OK);
        assert_false(v.changed);
        json_decref(status);
        json_decref(spec);
    }
    json_decref(bm);
}

static void test_thresholds_invalid(void **state)
{
    (void)state;
    gr_nvcre_job_verdict v;
    json_t *bm = bm_obj("366.5", 1);
    const char *exprs[] = {"value >=", "value * 2.0", "nope > 1"};
    for (size_t i = 0; i < 3; i++) {
        json_t *spec = json_pack("{s:{s:s}}", "thresholds", "busBandwidthGBps", exprs[i]);
        json_t *status = succeeded_status();
        assert_int_equal(
            gr_nvcre_job_thresholds_step(spec, status, NULL, bm, NULL, 1, T0, &v, NULL), GR_OK);
        const json_t *c = cond(status, "ValidationFailed");
        assert_string_equal(str_at(c, "reason", NULL), "InvalidThresholdExpression");
        /* the key is named */
        assert_memory_equal(str_at(c, "message", NULL), "Threshold \"busBandwidthGBps\": ", 28);
        json_decref(status);
        json_decref(spec);
    }
    json_decref(bm);
}

static void test_thresholds_pending_timeout(void **state)
{
    (void)state;
    gr_nvcre_job_verdict v;
    json_t *spec = parse("{\"thresholds\":{\"busBandwidthGBps\":\"value >= 350\",\"goodputRatio\":"
                         "\"value > 0.5\"},\"measurementTimeout\":\"2m\"}");
    json_t *status = succeeded_status();
    /* #404: a running measurement (running average 90) is not judged */
    json_t *running = bm_obj("90.0", 0);
    assert_int_equal(
        gr_nvcre_job_thresholds_step(spec, status, NULL, running, NULL, 1, T0 + 30 * S, &v, NULL),
        GR_OK);
    assert_true(v.pending);
    assert_false(v.changed);
    assert_null(cond(status, "ValidationFailed"));
    assert_int_equal(v.requeue_ns, 15 * S);
    /* close to the deadline: wake just past it */
    assert_int_equal(
        gr_nvcre_job_thresholds_step(spec, status, NULL, running, NULL, 1, T0 + 115 * S, &v, NULL),
        GR_OK);
    assert_int_equal(v.requeue_ns, 6 * S);
    /* past measurementTimeout (2m after Succeeded) */
    assert_int_equal(
        gr_nvcre_job_thresholds_step(spec, status, NULL, running, "n1", 1, T0 + 121 * S, &v, NULL),
        GR_OK);
    const json_t *c = cond(status, "ValidationFailed");
    assert_string_equal(str_at(c, "status", NULL), "True");
    assert_string_equal(str_at(c, "reason", NULL), "MeasurementTimeout");
    assert_string_equal(str_at(c, "message", NULL),
                        "Measurement data not available within 2m0s for keys: [busBandwidthGBps "
                        "goodputRatio]");
    /* a timeout is no verdict on the nodes */
    assert_null(json_object_get(status, "failedNodes"));
    json_decref(status);
    json_decref(running);
    /* not Succeeded, no thresholds: nothing to judge */
    status = parse("{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\"}]}");
    assert_false(gr_nvcre_job_thresholds_pending(spec, status));
    assert_int_equal(gr_nvcre_job_thresholds_step(spec, status, NULL, NULL, NULL, 1, T0, &v, NULL),
                     GR_OK);
    assert_false(v.changed || v.pending);
    json_decref(status);
    status = succeeded_status();
    json_t *none = parse("{\"thresholds\":{}}");
    assert_false(gr_nvcre_job_thresholds_pending(none, status));
    json_decref(none);
    /* an unparsable measurementTimeout names the field */
    json_t *bad = parse("{\"thresholds\":{\"goodputRatio\":\"value > 0\"},"
                        "\"measurementTimeout\":\"5 minutes\"}");
    gr_err err;
    assert_int_equal(gr_nvcre_job_thresholds_step(bad, status, NULL, NULL, NULL, 1, T0, &v, &err),
                     GR_EINVAL);
    assert_non_null(strstr(err.msg, "spec.measurementTimeout"));
    json_decref(bad);
    json_decref(status);
    json_decref(spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_build_owner_job),
        cmocka_unit_test(test_build_owner_workflow),
        cmocka_unit_test(test_stall_from),
        cmocka_unit_test(test_restart_then_max),
        cmocka_unit_test(test_thresholds_verdicts),
        cmocka_unit_test(test_thresholds_invalid),
        cmocka_unit_test(test_thresholds_pending_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
