/*
 * test_nvcre_job.c — unit tests of gr_nvcre_job, the pure half of the Job
 * controller (issue 15): naming, the workload object, the TrainJob status
 * mapping, the status machine and every clock rule with an injected clock,
 * node health, the failure log and the metrics. Checklist IDs are named at
 * the assertions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gr_hash.h"
#include "gr_nvcre_job.h"
#include "gr_nvcre_types.h"
#include "gr_time.h"

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

static const char *cstr(const json_t *o, const char *path)
{
    /* dotted path lookup */
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const json_t *cur = o;
    for (char *tok = strtok(buf, "."); tok && cur; tok = strtok(NULL, "."))
        cur = json_object_get(cur, tok);
    return json_string_value(cur);
}

static const char *cond_field(const json_t *status, const char *type, const char *field)
{
    return json_string_value(json_object_get(gr_nvcre_job_condition(status, type), field));
}

/* JOB-46: exactly one exclusive condition True, the others False/NotApplicable. */
static void assert_exclusive(const json_t *status)
{
    static const char *const t[3] = {"InProgress", "Succeeded", "Failed"};
    int trues = 0;
    for (int i = 0; i < 3; i++) {
        const char *s = cond_field(status, t[i], "status");
        assert_non_null(s);
        if (strcmp(s, "True") == 0)
            trues++;
        else
            assert_string_equal(cond_field(status, t[i], "reason"), "NotApplicable");
    }
    assert_int_equal(trues, 1);
    /* Order: the exclusive set first. */
    const json_t *conds = json_object_get(status, "conditions");
    for (int i = 0; i < 3; i++)
        assert_string_equal(
            json_string_value(json_object_get(json_array_get(conds, (size_t)i), "type")), t[i]);
}

static void assert_phase(const json_t *status, const char *type, const char *reason)
{
    assert_exclusive(status);
    assert_string_equal(gr_nvcre_job_phase(status), type);
    assert_string_equal(cond_field(status, type, "reason"), reason);
}

static gr_nvcre_job_obs obs_at(int64_t now)
{
    gr_nvcre_job_obs o;
    memset(&o, 0, sizeof o);
    o.now_ns = now;
    o.generation = 1;
    o.ns = "team-a";
    o.workload_name = "my-job-workload";
    o.api_version = GR_NVCRE_TRAINER_API_VERSION;
    o.kind = GR_NVCRE_KIND_TRAIN_JOB;
    o.grace_ns = -1;
    return o;
}

static gr_nvcre_job_out step(json_t *status, const gr_nvcre_job_obs *o)
{
    gr_nvcre_job_out out;
    gr_err err;
    if (gr_nvcre_job_step(NULL, status, o, &out, &err) != GR_OK)
        fail_msg("step: %s", err.msg);
    return out;
}

static json_t *running_status(int64_t now)
{
    json_t *st = json_object();
    gr_nvcre_job_obs o = obs_at(now);
    o.create = GR_NVCRE_CREATE_OK;
    step(st, &o);
    return st;
}

static gr_nvcre_job_obs run_obs(int64_t now)
{
    gr_nvcre_job_obs o = obs_at(now);
    o.wl.phase = GR_NVCRE_WL_RUNNING;
    return o;
}

/* ------------------------------------------------------------ naming */

static void test_naming(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(gr_nvcre_job_truncate_name("short", 35, out, sizeof out), GR_OK);
    assert_string_equal(out, "short");
    const char *longn = "a-very-long-workflow-name-for-testing-truncation";
    assert_int_equal(gr_nvcre_job_truncate_name(longn, 35, out, sizeof out), GR_OK);
    char hex[GR_HASH_FNV32_HEX_MAX];
    gr_hash_fnv1a32_hex(longn, strlen(longn), hex);
    char want[64];
    snprintf(want, sizeof want, "%.29s-%.5s", longn, hex);
    assert_string_equal(out, want);
    assert_int_equal(strlen(out), 35);
    /* A '-' at the cut is trimmed before the hash. */
    const char *dash = "abcdefghijklmnopqrstuvwxyzabc-defghijklmno";
    assert_int_equal(gr_nvcre_job_truncate_name(dash, 35, out, sizeof out), GR_OK);
    gr_hash_fnv1a32_hex(dash, strlen(dash), hex);
    snprintf(want, sizeof want, "abcdefghijklmnopqrstuvwxyzabc-%.5s", hex);
    assert_string_equal(out, want);
    /* <job>-workload, ≤ 44. */
    char wn[45];
    assert_int_equal(gr_nvcre_job_workload_name("my-job", wn), GR_OK);
    assert_string_equal(wn, "my-job-workload");
    assert_int_equal(gr_nvcre_job_workload_name("abcdefghijklmnopqrstuvwxyz-01234567890", wn),
                     GR_OK);
    assert_int_equal(strlen(wn), 44);
    /* The cut lands after a '-', which is trimmed: 43 characters. */
    assert_int_equal(gr_nvcre_job_workload_name("abcdefghijklmnopqrstuvwxyz-0123456789", wn),
                     GR_OK);
    assert_int_equal(strlen(wn), 43);
    assert_int_equal(gr_nvcre_job_truncate_name("x", 6, out, sizeof out), GR_EINVAL);
}

/* ------------------------------------------------------ workload build */

static const char *JOB =
    "{\"apiVersion\":\"nvcre.nvidia.com/v1alpha1\",\"kind\":\"Job\","
    "\"metadata\":{\"name\":\"my-job\",\"namespace\":\"team-a\",\"uid\":\"u-1\","
    "\"labels\":{\"team\":\"a\"}},"
    "\"spec\":{\"workloadMetadata\":{\"labels\":{\"kueue.x-k8s.io/queue-name\":\"gpu-team-a\","
    "\"kai.scheduler/queue\":\"burn-in\",\"environment\":\"burn-in\",\"empty\":\"\"}},"
    "\"workload\":{\"trainJob\":{\"runtimeRef\":{\"kind\":\"TrainingRuntime\","
    "\"name\":\"nccl-all-reduce-runtime\"}}}}}";

static void test_build_workload(void **state)
{
    (void)state;
    json_t *job = parse(JOB);
    json_t *obj = NULL;
    const gr_nvcre_workload_adapter *a = NULL;
    gr_err err;
    assert_int_equal(gr_nvcre_job_build_workload(job, &a, &obj, &err), GR_OK);
    assert_string_equal(a->kind, "TrainJob"); /* JOB-01, JOB-97 */
    assert_string_equal(cstr(obj, "apiVersion"), "trainer.kubeflow.org/v1alpha1");
    assert_string_equal(cstr(obj, "metadata.name"), "my-job-workload");
    assert_string_equal(cstr(obj, "metadata.namespace"), "team-a");
    json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    /* JOB-17, JOB-21: workloadMetadata.labels on the object at creation. */
    assert_string_equal(json_string_value(json_object_get(labels, "kai.scheduler/queue")),
                        "burn-in");
    assert_string_equal(json_string_value(json_object_get(labels, "kueue.x-k8s.io/queue-name")),
                        "gpu-team-a");
    assert_string_equal(cstr(labels, "environment"), "burn-in");
    /* JOB-31: an empty value is a real label. */
    assert_non_null(json_object_get(labels, "empty"));
    assert_string_equal(cstr(labels, "empty"), "");
    /* JOB-22, JOB-23 */
    assert_string_equal(json_string_value(json_object_get(labels, "app.kubernetes.io/managed-by")),
                        "nvcre");
    assert_string_equal(json_string_value(json_object_get(labels, "nvcre.nvidia.com/job")),
                        "my-job");
    /* JOB-26: ordinary Job labels are not copied. */
    assert_null(json_object_get(labels, "team"));
    assert_int_equal(json_object_size(labels), 6);
    /* Controller owner reference. */
    json_t *ref =
        json_array_get(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), 0);
    assert_string_equal(cstr(ref, "kind"), "Job");
    assert_string_equal(cstr(ref, "uid"), "u-1");
    assert_true(json_is_true(json_object_get(ref, "controller")));
    assert_true(gr_nvcre_job_owns(obj, "u-1"));
    assert_false(gr_nvcre_job_owns(obj, "u-2"));
    /* Pods get nvcre.nvidia.com/job through the runtime patch on "node";
     * JOB-24: nothing else (no workloadMetadata labels) reaches the pods. */
    json_t *rp = json_array_get(json_object_get(json_object_get(obj, "spec"), "runtimePatches"), 0);
    assert_string_equal(cstr(rp, "manager"), "nvcre.nvidia.com/controller");
    json_t *rj = json_array_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(rp, "trainingRuntimeSpec"), "template"),
                            "spec"),
            "replicatedJobs"),
        0);
    assert_string_equal(cstr(rj, "name"), "node");
    json_t *pl = json_object_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(rj, "template"), "spec"), "template"),
            "metadata"),
        "labels");
    assert_int_equal(json_object_size(pl), 1);
    assert_string_equal(json_string_value(json_object_get(pl, "nvcre.nvidia.com/job")), "my-job");
    assert_string_equal(cstr(obj, "spec.runtimeRef.name"), "nccl-all-reduce-runtime");
    /* JOB-35: a rebuild (checkpoint restart) yields the same labels. */
    json_t *again = NULL;
    assert_int_equal(gr_nvcre_job_build_workload(job, NULL, &again, &err), GR_OK);
    assert_true(json_equal(json_object_get(json_object_get(again, "metadata"), "labels"), labels));
    json_decref(again);
    json_decref(obj);
    json_decref(job);
}

static void test_build_runtime_patch_targets(void **state)
{
    (void)state;
    /* An MPI runtime patch naming launcher and worker: the label goes on
     * the first non-launcher replicatedJob; existing patch content stays. */
    json_t *job = parse(
        "{\"metadata\":{\"name\":\"j\",\"namespace\":\"n\",\"uid\":\"u\"},\"spec\":{\"workload\":"
        "{\"trainJob\":{\"runtimeRef\":{\"name\":\"mpi\"},\"runtimePatches\":[{\"manager\":"
        "\"nvcre.nvidia.com/controller\",\"trainingRuntimeSpec\":{\"template\":{\"spec\":"
        "{\"replicatedJobs\":[{\"name\":\"launcher\"},{\"name\":\"worker\",\"template\":{\"spec\":"
        "{\"template\":{\"spec\":{\"tolerations\":[{\"operator\":\"Exists\"}]}}}}}]}}}}]}}}}");
    json_t *obj = NULL;
    gr_err err;
    assert_int_equal(gr_nvcre_job_build_workload(job, NULL, &obj, &err), GR_OK);
    char *txt = json_dumps(obj, JSON_SORT_KEYS | JSON_COMPACT);
    assert_non_null(strstr(txt, "{\"name\":\"worker\",\"template\":{\"spec\":{\"template\":{"
                                "\"metadata\":{\"labels\":{\"nvcre.nvidia.com/job\":\"j\"}},"
                                "\"spec\":{\"tolerations\":[{\"operator\":\"Exists\"}]}}}}}"));
    assert_non_null(strstr(txt, "{\"name\":\"launcher\"}"));
    free(txt);
    json_decref(obj);
    json_decref(job);

    /* JOB-97: no workload field → the documented error; unknown → named. */
    job = parse("{\"metadata\":{\"name\":\"j\",\"namespace\":\"n\",\"uid\":\"u\"},"
                "\"spec\":{\"workload\":{}}}");
    assert_int_not_equal(gr_nvcre_job_build_workload(job, NULL, &obj, &err), GR_OK);
    assert_string_equal(err.msg, "no workload type specified in WorkloadSpec");
    json_decref(job);
    job = parse("{\"metadata\":{\"name\":\"j\",\"namespace\":\"n\",\"uid\":\"u\"},"
                "\"spec\":{\"workload\":{\"kubeJob\":{}}}}");
    assert_int_equal(gr_nvcre_job_build_workload(job, NULL, &obj, &err), GR_EUNSUPPORTED);
    assert_string_equal(err.msg, "spec.workload.kubeJob");
    json_decref(job);
    /* Reserved keys conflict (CRD rejects them; the builder refuses too). */
    job = parse("{\"metadata\":{\"name\":\"j\",\"namespace\":\"n\",\"uid\":\"u\"},"
                "\"spec\":{\"workloadMetadata\":{\"labels\":{\"nvcre.nvidia.com/job\":\"x\"}},"
                "\"workload\":{\"trainJob\":{\"runtimeRef\":{\"name\":\"r\"}}}}}");
    assert_int_equal(gr_nvcre_job_build_workload(job, NULL, &obj, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "nvcre.nvidia.com/job"));
    json_decref(job);
}

static void test_trainjob_status(void **state)
{
    (void)state;
    struct {
        const char *obj;
        gr_nvcre_wl_phase phase;
        const char *msg;
    } cases[] = {
        {"{}", GR_NVCRE_WL_RUNNING, ""},
        {"{\"status\":{\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\",\"message\":"
         "\"done\"}]}}",
         GR_NVCRE_WL_SUCCEEDED, "done"},
        {"{\"status\":{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\",\"reason\":"
         "\"BackoffLimit\","
         "\"message\":\"jobset failed\"}]}}",
         GR_NVCRE_WL_FAILED, "jobset failed"},
        {"{\"status\":{\"conditions\":[{\"type\":\"Failed\",\"status\":\"False\"}]}}",
         GR_NVCRE_WL_RUNNING, ""},
        {"{\"spec\":{\"suspend\":true}}", GR_NVCRE_WL_PENDING,
         "TrainJob is suspended (spec.suspend=true), waiting for it to be resumed"},
        {"{\"spec\":{\"suspend\":true,\"managedBy\":\"kueue.x-k8s.io/multikueue\"}}",
         GR_NVCRE_WL_PENDING,
         "TrainJob is suspended (spec.suspend=true), waiting for it to be resumed; managed by "
         "kueue.x-k8s.io/multikueue"},
        /* Terminal conditions win over suspend. */
        {"{\"spec\":{\"suspend\":true},\"status\":{\"conditions\":[{\"type\":\"Complete\","
         "\"status\":"
         "\"True\"}]}}",
         GR_NVCRE_WL_SUCCEEDED, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *o = parse(cases[i].obj);
        gr_nvcre_wl_status s;
        gr_nvcre_trainjob_status(o, &s);
        assert_int_equal(s.phase, cases[i].phase);
        assert_string_equal(s.message, cases[i].msg);
        json_decref(o);
    }
}

/* ------------------------------------------------------ creation */

static void test_create_outcomes(void **state)
{
    (void)state;
    /* Created: InProgress WorkloadCreated, workloadRef (JOB-52), an Event. */
    json_t *st = json_object();
    gr_nvcre_job_obs o = obs_at(T0);
    o.create = GR_NVCRE_CREATE_OK;
    gr_nvcre_job_out out = step(st, &o);
    assert_phase(st, "InProgress", "WorkloadCreated");
    assert_string_equal(cond_field(st, "InProgress", "message"),
                        "Workload team-a/my-job-workload created and is starting");
    assert_string_equal(cstr(st, "workloadRef.kind"), "TrainJob");
    assert_string_equal(cstr(st, "workloadRef.name"), "my-job-workload");
    assert_string_equal(cstr(st, "workloadRef.apiVersion"), "trainer.kubeflow.org/v1alpha1");
    assert_true(out.changed && out.phase_event && out.created);
    assert_string_equal(out.event_type, "Normal");
    assert_string_equal(out.event_reason, "WorkloadCreated");
    assert_int_equal(json_integer_value(json_object_get(gr_nvcre_job_condition(st, "InProgress"),
                                                        "observedGeneration")),
                     1);
    json_decref(st);

    /* Adopted after a restart. */
    st = json_object();
    o.create = GR_NVCRE_CREATE_ADOPTED;
    out = step(st, &o);
    assert_phase(st, "InProgress", "WorkloadAdopted");
    assert_string_equal(cond_field(st, "InProgress", "message"),
                        "Workload team-a/my-job-workload was already created by this Job and has "
                        "been adopted");
    assert_false(out.created);
    json_decref(st);

    /* Foreign object with our name. */
    st = json_object();
    o.create = GR_NVCRE_CREATE_FOREIGN;
    o.group_nodes = "n1,n2";
    out = step(st, &o);
    assert_phase(st, "Failed", "WorkloadCreationError");
    assert_string_equal(
        cond_field(st, "Failed", "message"),
        "Workload team-a/my-job-workload already exists and is not owned by this Job");
    assert_string_equal(out.event_type, "Warning");
    assert_null(json_object_get(st, "failedNodes"));
    assert_true(out.want_failure_log);
    json_decref(st);

    /* Build error / unsupported. */
    st = json_object();
    o.create = GR_NVCRE_CREATE_BUILD_ERROR;
    o.create_msg = "bad spec";
    step(st, &o);
    assert_phase(st, "Failed", "WorkloadCreationError");
    assert_string_equal(cond_field(st, "Failed", "message"), "Failed to build workload: bad spec");
    json_decref(st);
    st = json_object();
    o.create = GR_NVCRE_CREATE_UNSUPPORTED;
    o.create_msg = "no workload type specified in WorkloadSpec";
    step(st, &o);
    assert_string_equal(cond_field(st, "Failed", "message"),
                        "Unsupported workload type: no workload type specified in WorkloadSpec");
    json_decref(st);

    /* Foreign and terminating: wait, no status change. */
    st = json_object();
    o.create = GR_NVCRE_CREATE_FOREIGN_DELETING;
    o.create_failures = 1;
    out = step(st, &o);
    assert_false(out.changed);
    assert_true(out.requeue_ns > 0);
    json_decref(st);
}

static void test_creation_rejected(void **state)
{
    (void)state;
    json_t *st = json_object();
    gr_nvcre_job_obs o = obs_at(T0);
    o.create = GR_NVCRE_CREATE_REJECTED;
    o.create_msg = "admission webhook \"deny.example.com\" denied the request: no GPUs for you";
    o.create_failures = 1;
    o.group_nodes = "n1,n2";
    gr_nvcre_job_out out = step(st, &o);
    /* JOB-68, JOB-70, JOB-84 */
    assert_phase(st, "InProgress", "WorkloadCreationRejected");
    assert_string_equal(cond_field(st, "InProgress", "message"), o.create_msg);
    assert_string_equal(cstr(st, "workloadCreationRejectedSince"), "2026-01-01T00:00:00Z");
    /* JOB-83: retried with backoff. */
    assert_int_equal(out.requeue_ns, 1 * S);
    o.now_ns = T0 + 5 * S;
    o.create_failures = 4;
    out = step(st, &o);
    assert_int_equal(out.requeue_ns, 8 * S);
    assert_string_equal(cstr(st, "workloadCreationRejectedSince"), "2026-01-01T00:00:00Z");
    /* JOB-86: the default deadline is 10 minutes. */
    o.now_ns = T0 + 600 * S;
    step(st, &o);
    assert_phase(st, "InProgress", "WorkloadCreationRejected");
    o.now_ns = T0 + 601 * S;
    out = step(st, &o);
    /* JOB-71 */
    assert_phase(st, "Failed", "WorkloadCreationError");
    assert_string_equal(
        cond_field(st, "Failed", "message"),
        "Workload team-a/my-job-workload creation was rejected for longer than the "
        "workload creation deadline (10m0s): admission webhook \"deny.example.com\" "
        "denied the request: no GPUs for you");
    /* JOB-90: no failedNodes for a creation-deadline failure. */
    assert_null(json_object_get(st, "failedNodes"));
    assert_true(out.phase_event);
    json_decref(st);

    /* JOB-87/89: a configured deadline, independent of timeoutPerJob. */
    st = json_object();
    o.now_ns = T0;
    o.creation_deadline_ns = 3 * S;
    step(st, &o);
    o.now_ns = T0 + 3 * S;
    step(st, &o);
    assert_phase(st, "InProgress", "WorkloadCreationRejected");
    o.now_ns = T0 + 4 * S;
    step(st, &o);
    assert_phase(st, "Failed", "WorkloadCreationError");
    assert_non_null(strstr(cond_field(st, "Failed", "message"), "(3s)"));
    json_decref(st);

    /* JOB-69: a successful create clears the clock. */
    st = json_object();
    o.now_ns = T0;
    o.creation_deadline_ns = 0;
    step(st, &o);
    assert_non_null(json_object_get(st, "workloadCreationRejectedSince"));
    o.create = GR_NVCRE_CREATE_OK;
    o.now_ns = T0 + 30 * S;
    step(st, &o);
    assert_null(json_object_get(st, "workloadCreationRejectedSince"));
    assert_phase(st, "InProgress", "WorkloadCreated");
    json_decref(st);
}

static void test_creation_rbac_transient(void **state)
{
    (void)state;
    gr_nvcre_create kinds[2] = {GR_NVCRE_CREATE_RBAC_DENIED, GR_NVCRE_CREATE_TRANSIENT};
    for (int k = 0; k < 2; k++) {
        json_t *st = json_object();
        gr_nvcre_job_obs o = obs_at(T0);
        o.create = kinds[k];
        o.create_msg = "trainjobs.trainer.kubeflow.org is forbidden: User cannot create";
        for (unsigned i = 1; i <= 20; i++) {
            o.create_failures = i;
            o.now_ns = T0 + (int64_t)i * 3600 * S; /* long past any deadline */
            gr_nvcre_job_out out = step(st, &o);
            /* JOB-72, JOB-94 (RBAC) and JOB-95 (transient): no clock, no
             * deadline, never WorkloadCreationError; a Warning event. */
            assert_null(json_object_get(st, "workloadCreationRejectedSince"));
            assert_null(gr_nvcre_job_phase(st));
            assert_true(out.warn_create);
            assert_true(out.requeue_ns > 0 && out.requeue_ns <= 60 * S);
            assert_string_equal(out.warn_msg,
                                "Failed to create team-a/my-job-workload: "
                                "trainjobs.trainer.kubeflow.org is forbidden: User cannot create");
        }
        json_decref(st);
    }
    assert_int_equal(gr_nvcre_job_backoff_ns(1, 0), 1 * S);
    assert_int_equal(gr_nvcre_job_backoff_ns(2, 0), 2 * S);
    assert_int_equal(gr_nvcre_job_backoff_ns(100, 0), 60 * S);
    assert_int_equal(gr_nvcre_job_backoff_ns(100, 3 * S), 3 * S);
}

/* ------------------------------------------------------ workload phases */

static void test_pending_no_clocks(void **state)
{
    (void)state;
    json_t *st = running_status(T0);
    gr_nvcre_job_obs o = obs_at(T0 + 10 * S);
    o.wl.phase = GR_NVCRE_WL_PENDING;
    snprintf(o.wl.message, sizeof o.wl.message, "%s", GR_NVCRE_MSG_SUSPENDED);
    o.pods_blocked = 1; /* ignored while pending */
    gr_nvcre_job_out out = step(st, &o);
    assert_phase(st, "InProgress", "WorkloadPending");
    assert_string_equal(cond_field(st, "InProgress", "message"),
                        "Workload team-a/my-job-workload is pending: TrainJob is suspended "
                        "(spec.suspend=true), waiting for it to be resumed");
    /* JOB-53: no workloadStartTime while pending; no blocked marker. */
    assert_null(json_object_get(st, "workloadStartTime"));
    assert_null(json_object_get(st, "schedulingBlockedSince"));
    assert_true(out.requeue_ns > 0);
    /* JOB-54: queued time does not count against timeoutPerJob. */
    int blocked;
    assert_false(gr_nvcre_job_timed_out(st, 60 * S, T0, T0 + 7200 * S, &blocked));
    /* Runs at T0+1h: the start is that instant. */
    o = run_obs(T0 + 3600 * S);
    step(st, &o);
    assert_phase(st, "InProgress", "WorkloadRunning");
    assert_string_equal(cond_field(st, "InProgress", "message"),
                        "Workload team-a/my-job-workload is running");
    assert_string_equal(cstr(st, "workloadStartTime"), "2026-01-01T01:00:00Z");
    assert_false(gr_nvcre_job_timed_out(st, 60 * S, T0, T0 + 3660 * S, &blocked));
    assert_true(gr_nvcre_job_timed_out(st, 60 * S, T0, T0 + 3661 * S, &blocked));
    assert_false(blocked);
    /* The start never moves while it keeps running. */
    o.now_ns = T0 + 4000 * S;
    out = step(st, &o);
    assert_string_equal(cstr(st, "workloadStartTime"), "2026-01-01T01:00:00Z");
    assert_false(out.changed);
    assert_false(out.phase_event);
    json_decref(st);
}

static void test_terminal(void **state)
{
    (void)state;
    /* Succeeded (JOB-101). */
    json_t *st = running_status(T0);
    gr_nvcre_job_obs o = run_obs(T0 + S);
    o.wl.phase = GR_NVCRE_WL_SUCCEEDED;
    gr_nvcre_job_out out = step(st, &o);
    assert_phase(st, "Succeeded", "WorkloadCompleted");
    assert_string_equal(cond_field(st, "Succeeded", "message"),
                        "Workload team-a/my-job-workload completed successfully");
    assert_true(out.phase_event);
    assert_false(out.want_failure_log);
    /* Sticky: a later failure report changes nothing. */
    o.wl.phase = GR_NVCRE_WL_FAILED;
    out = step(st, &o);
    assert_false(out.changed);
    assert_phase(st, "Succeeded", "WorkloadCompleted");
    /* JOB-51: ValidationFailed alongside Succeeded. */
    assert_int_equal(gr_nvcre_job_set_additive(st, "ValidationFailed", 1, "ThresholdViolated",
                                               "Threshold \"busBandwidthGBps\" violated", 1, T0),
                     GR_OK);
    assert_phase(st, "Succeeded", "WorkloadCompleted");
    assert_string_equal(cond_field(st, "ValidationFailed", "status"), "True");
    json_decref(st);

    /* Failed with detail; group nodes attributed (JOB-67, 75, 76, 77). */
    st = running_status(T0);
    o = run_obs(T0 + S);
    o.wl.phase = GR_NVCRE_WL_FAILED;
    snprintf(o.wl.message, sizeof o.wl.message, "jobset failed");
    o.group_nodes = "node-a, node-b";
    out = step(st, &o);
    assert_phase(st, "Failed", "WorkloadFailed");
    assert_string_equal(cond_field(st, "Failed", "message"),
                        "Workload team-a/my-job-workload failed: jobset failed");
    assert_true(out.want_failure_log);
    json_t *fn = json_object_get(st, "failedNodes");
    assert_int_equal(json_array_size(fn), 2);
    assert_string_equal(cstr(json_array_get(fn, 0), "name"), "node-a");
    assert_string_equal(cstr(json_array_get(fn, 1), "name"), "node-b");
    assert_string_equal(cstr(json_array_get(fn, 0), "reason"), "WorkloadFailed");
    assert_true(gr_nvcre_failed_node_reason_known(cstr(json_array_get(fn, 0), "reason")));
    assert_string_equal(cstr(json_array_get(fn, 0), "message"),
                        "Workload team-a/my-job-workload failed: jobset failed");
    /* JOB-79: the Job status holds no references to its GoodputMeasurement
     * or BandwidthMeasurement (they point at the Job via spec.jobRef). */
    static const char *const allowed[] = {"conditions", "workloadRef", "workloadStartTime",
                                          "failedNodes", "failureLog"};
    const char *k;
    json_t *v;
    json_object_foreach(st, k, v)
    {
        int ok = 0;
        for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
            ok |= strcmp(k, allowed[i]) == 0;
        if (!ok)
            fail_msg("unexpected status field %s", k);
    }
    json_decref(st);

    /* Failed without detail; deleted workload. */
    st = running_status(T0);
    o = run_obs(T0 + S);
    o.wl.phase = GR_NVCRE_WL_FAILED;
    step(st, &o);
    assert_string_equal(cond_field(st, "Failed", "message"),
                        "Workload team-a/my-job-workload has failed");
    json_decref(st);
    st = running_status(T0);
    o.wl.phase = GR_NVCRE_WL_GONE;
    step(st, &o);
    assert_phase(st, "Failed", "WorkloadFailed");
    assert_string_equal(cond_field(st, "Failed", "message"),
                        "Workload team-a/my-job-workload was deleted");
    json_decref(st);

    /* JOB-49: the Workflow's JobTimedOut is terminal for the Job too. */
    st = running_status(T0);
    assert_int_equal(gr_nvcre_job_set_exclusive(st, "Failed", "JobTimedOut",
                                                "Job exceeded timeoutPerJob", 1, T0 + 60 * S),
                     1);
    o = run_obs(T0 + 61 * S);
    out = step(st, &o);
    assert_false(out.changed);
    assert_phase(st, "Failed", "JobTimedOut");
    json_decref(st);
}

/* ------------------------------------------------ scheduling blocked */

static void test_scheduling_blocked(void **state)
{
    (void)state;
    json_t *st = running_status(T0);
    gr_nvcre_job_obs o = run_obs(T0 + 100 * S); /* start = T0+100 */
    step(st, &o);
    o.now_ns = T0 + 200 * S;
    o.pods_blocked = 1;
    o.blocked_msg = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.";
    gr_nvcre_job_out out = step(st, &o);
    /* JOB-57 */
    assert_string_equal(cstr(st, "schedulingBlockedSince"), "2026-01-01T00:03:20Z");
    /* JOB-61, JOB-82: within the default 300 s grace it still reads Running. */
    assert_phase(st, "InProgress", "WorkloadRunning");
    assert_int_equal(out.requeue_ns, 15 * S);
    o.now_ns = T0 + 499 * S;
    out = step(st, &o);
    assert_phase(st, "InProgress", "WorkloadRunning");
    assert_int_equal(out.requeue_ns, 1 * S); /* wakes at the end of the grace */
    o.now_ns = T0 + 500 * S;
    out = step(st, &o);
    /* JOB-80: the scheduler's diagnosis is relayed. */
    assert_phase(st, "InProgress", "WorkloadSchedulingBlocked");
    assert_string_equal(cond_field(st, "InProgress", "message"),
                        "Workload pods are unschedulable: 0/4 nodes are available: 4 Insufficient "
                        "nvidia.com/gpu.");
    assert_false(out.phase_event); /* InProgress stays True: no phase transition */
    /* JOB-57: the first time of the episode is kept. */
    assert_string_equal(cstr(st, "schedulingBlockedSince"), "2026-01-01T00:03:20Z");
    /* JOB-59: the timeoutPerJob clock is paused at blockedSince. With a
     * 1000 s timeout, 100 s ran before the block. */
    int blocked;
    assert_false(gr_nvcre_job_timed_out(st, 1000 * S, 0, T0 + 1100 * S, &blocked));
    /* JOB-62: an episode longer than timeoutPerJob times the Job out. */
    assert_true(gr_nvcre_job_timed_out(st, 1000 * S, 0, T0 + 1201 * S, &blocked));
    assert_true(blocked);
    /* Recovery at T0+1000 (JOB-58, JOB-63, JOB-64). */
    o.now_ns = T0 + 1000 * S;
    o.pods_blocked = 0;
    step(st, &o);
    assert_phase(st, "InProgress", "WorkloadRunning");
    assert_null(json_object_get(st, "schedulingBlockedSince"));
    assert_string_equal(cstr(st, "schedulingResumedTime"), "2026-01-01T00:16:40Z");
    /* start += now − max(since, start) = 100 + 800 = 900 */
    assert_string_equal(cstr(st, "workloadStartTime"), "2026-01-01T00:15:00Z");
    /* 100 s consumed before the block still counts: timeout at 1000 s total. */
    assert_false(gr_nvcre_job_timed_out(st, 1000 * S, 0, T0 + 1900 * S, &blocked));
    assert_true(gr_nvcre_job_timed_out(st, 1000 * S, 0, T0 + 1901 * S, &blocked));
    assert_false(blocked);
    json_decref(st);

    /* JOB-81: spec.schedulingStallGraceSeconds sets the window. */
    st = running_status(T0);
    o = run_obs(T0);
    o.grace_ns = 10 * S;
    o.pods_blocked = 1;
    o.blocked_msg = "m";
    step(st, &o);
    o.now_ns = T0 + 9 * S;
    step(st, &o);
    assert_phase(st, "InProgress", "WorkloadRunning");
    o.now_ns = T0 + 10 * S;
    step(st, &o);
    assert_phase(st, "InProgress", "WorkloadSchedulingBlocked");
    json_decref(st);

    /* Pod classification (ADR-083). */
    struct {
        const char *pod;
        int blocked;
    } pods[] = {
        {"{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":"
         "\"Unschedulable\",\"message\":\"x\"}]}}",
         1},
        {"{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":"
         "\"SchedulingGated\"}]}}",
         0},
        {"{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}", 0},
        {"{\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"conditions\":[{\"type\":\"PodScheduled\","
         "\"status\":\"False\",\"reason\":\"Unschedulable\"}]}}",
         0},
        {"{}", 0},
    };
    for (size_t i = 0; i < sizeof pods / sizeof pods[0]; i++) {
        json_t *p = parse(pods[i].pod);
        const char *m = NULL;
        assert_int_equal(gr_nvcre_job_pod_blocked(p, &m), pods[i].blocked);
        json_decref(p);
    }
}

/* ------------------------------------------------------------ stalls */

static void test_stalls(void **state)
{
    (void)state;
    gr_nvcre_job_stall_in in = {.stall_multiplier = 3,
                                .startup_timeout_s = 100,
                                .sample_interval_ns = 10 * S,
                                .gm_start_ns = T0};
    /* Startup: limit 100 + 2×10 = 120 s from the anchor. */
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0, 0, T0 + 120 * S), GR_NVCRE_STALL_NONE);
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0, 0, T0 + 121 * S), GR_NVCRE_STALL_STARTUP);
    /* JOB-55: the anchor never precedes workloadStartTime (queued time). */
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0 + 500 * S, 0, T0 + 600 * S),
                     GR_NVCRE_STALL_NONE);
    /* JOB-65: measured from schedulingResumedTime when later. */
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0, T0 + 1000 * S, T0 + 1100 * S),
                     GR_NVCRE_STALL_NONE);
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0, T0 + 1000 * S, T0 + 1121 * S),
                     GR_NVCRE_STALL_STARTUP);
    /* Application start preferred over GM start. */
    in.app_start_ns = T0 + 50 * S;
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0, 0, T0 + 150 * S), GR_NVCRE_STALL_NONE);
    /* Training: 3 × 2 s × max(5,1) + 20 s = 50 s after the last step. */
    in.last_step_ns = T0 + 200 * S;
    in.avg_step_s = 2;
    in.log_interval = 5;
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0, 0, T0 + 250 * S), GR_NVCRE_STALL_NONE);
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0, 0, T0 + 251 * S), GR_NVCRE_STALL_TRAINING);
    /* JOB-66: from schedulingResumedTime when later than the last step. */
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0, T0 + 300 * S, T0 + 340 * S),
                     GR_NVCRE_STALL_NONE);
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0, T0 + 300 * S, T0 + 351 * S),
                     GR_NVCRE_STALL_TRAINING);
    /* Inactive without stallMultiplier. */
    in.stall_multiplier = 0;
    assert_int_equal(gr_nvcre_job_stall_check(&in, T0, 0, T0 + 99999 * S), GR_NVCRE_STALL_NONE);

    /* In the machine: a stall fails the Job ... */
    in = (gr_nvcre_job_stall_in){.stall_multiplier = 3,
                                 .startup_timeout_s = 100,
                                 .sample_interval_ns = 10 * S,
                                 .gm_start_ns = T0};
    json_t *st = running_status(T0);
    gr_nvcre_job_obs o = run_obs(T0);
    o.stall = &in;
    step(st, &o);
    o.now_ns = T0 + 121 * S;
    /* JOB-60: ... but not while blocked. */
    o.pods_blocked = 1;
    o.blocked_msg = "m";
    step(st, &o);
    assert_phase(st, "InProgress", "WorkloadRunning");
    o.pods_blocked = 0;
    o.now_ns = T0 + 122 * S; /* recovery: resumed = now, startup clock restarts */
    step(st, &o);
    assert_phase(st, "InProgress", "WorkloadRunning");
    o.now_ns = T0 + 122 * S + 121 * S;
    step(st, &o);
    assert_phase(st, "Failed", "WorkloadStalled");
    assert_string_equal(cond_field(st, "Failed", "message"),
                        "Workload stalled: no training step observed within startup timeout");
    json_decref(st);
}

static void test_checkpoint_restart(void **state)
{
    (void)state;
    json_t *spec = parse("{\"checkpoint\":{\"pvcName\":\"ckpt\",\"maxRestarts\":2}}");
    json_t *st = running_status(T0);
    assert_false(gr_nvcre_job_restart_eligible(spec, st, 0));
    assert_true(gr_nvcre_job_restart_eligible(spec, st, 100));
    gr_nvcre_job_obs o = run_obs(T0 + 10 * S);
    step(st, &o);
    assert_non_null(json_object_get(st, "workloadStartTime"));
    o.wl.phase = GR_NVCRE_WL_FAILED;
    o.restart_eligible = gr_nvcre_job_restart_eligible(spec, st, 100);
    o.max_restarts = 2;
    gr_nvcre_job_out out = step(st, &o);
    assert_phase(st, "InProgress", "WorkloadRestarting");
    assert_string_equal(cond_field(st, "InProgress", "message"),
                        "Restarting workload from checkpoint (restart 1/2)");
    /* JOB-73, JOB-56 */
    assert_int_equal(json_integer_value(json_object_get(st, "restartCount")), 1);
    assert_null(json_object_get(st, "workloadStartTime"));
    assert_null(json_object_get(st, "workloadRef"));
    assert_true(out.delete_workload);
    assert_true(out.requeue_ns >= 30 * S);
    /* Next reconcile recreates; restart 2; then the budget is spent. */
    o = obs_at(T0 + 60 * S);
    o.create = GR_NVCRE_CREATE_OK;
    step(st, &o);
    o = run_obs(T0 + 70 * S);
    o.wl.phase = GR_NVCRE_WL_GONE;
    o.restart_eligible = gr_nvcre_job_restart_eligible(spec, st, 100);
    o.max_restarts = 2;
    step(st, &o);
    assert_int_equal(json_integer_value(json_object_get(st, "restartCount")), 2);
    assert_false(gr_nvcre_job_restart_eligible(spec, st, 100));
    json_decref(st);
    json_decref(spec);
}

/* ------------------------------------------------------- node health */

static void test_node_health(void **state)
{
    (void)state;
    gr_cel_program *p = NULL;
    gr_err err;
    assert_int_equal(gr_nvcre_node_health_compile(NULL, &p, &err), GR_OK);
    struct {
        const char *node;
        int matched;
    } nodes[] = {
        {"{\"metadata\":{\"name\":\"a\"}}", 0}, /* defaults filled: unschedulable=false */
        {"{\"metadata\":{\"name\":\"a\"},\"spec\":{\"unschedulable\":true}}", 1},
        {"{}", 0},
    };
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        json_t *n = parse(nodes[i].node);
        int m = -1;
        assert_int_equal(gr_nvcre_node_health_eval(p, n, &m, &err), GR_OK);
        assert_int_equal(m, nodes[i].matched);
        json_decref(n);
    }
    gr_cel_program_free(p);
    /* A taint / condition expression over a node without those fields. */
    const char *expr =
        "node.spec.taints.exists(t, t.key == 'nvidia.com/gpu-xid') || "
        "node.status.conditions.exists(c, c.type == 'GpuHealthy' && c.status == 'False')";
    assert_int_equal(gr_nvcre_node_health_compile(expr, &p, &err), GR_OK);
    json_t *n = parse("{\"metadata\":{\"name\":\"b\"}}");
    int m = -1;
    assert_int_equal(gr_nvcre_node_health_eval(p, n, &m, &err), GR_OK);
    assert_false(m);
    json_decref(n);
    n = parse(
        "{\"spec\":{\"taints\":[{\"key\":\"nvidia.com/gpu-xid\",\"effect\":\"NoSchedule\"}]}}");
    assert_int_equal(gr_nvcre_node_health_eval(p, n, &m, &err), GR_OK);
    assert_true(m);
    json_decref(n);
    gr_cel_program_free(p);
    /* Non-bool result and a syntax error name the field. */
    assert_int_equal(gr_nvcre_node_health_compile("1 + 1", &p, &err), GR_OK);
    n = parse("{}");
    assert_int_equal(gr_nvcre_node_health_eval(p, n, &m, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "spec.nodeHealthMonitor.cel.expression: "));
    json_decref(n);
    gr_cel_program_free(p);
    assert_int_not_equal(gr_nvcre_node_health_compile("node.spec.(", &p, &err), GR_OK);
    assert_non_null(strstr(err.msg, "spec.nodeHealthMonitor.cel.expression: "));

    /* JOB-50: HardwareFailed is additive, alongside InProgress; merged and
     * de-duplicated by (name, reason). */
    json_t *st = running_status(T0);
    const char *bad1[] = {"node-b", "node-a", "node-b"};
    assert_int_equal(gr_nvcre_job_mark_hardware_failed(st, bad1, 3, 1, T0), 2);
    assert_phase(st, "InProgress", "WorkloadCreated");
    assert_string_equal(cond_field(st, "HardwareFailed", "status"), "True");
    assert_string_equal(cond_field(st, "HardwareFailed", "reason"), "HardwareFailureDetected");
    assert_string_equal(cond_field(st, "HardwareFailed", "message"),
                        "Hardware failure detected on node(s): [node-a node-b]");
    const char *bad2[] = {"node-a", "node-c"};
    assert_int_equal(gr_nvcre_job_mark_hardware_failed(st, bad2, 2, 1, T0 + S), 1);
    json_t *fn = json_object_get(st, "failedNodes");
    assert_int_equal(json_array_size(fn), 3);
    assert_string_equal(cstr(json_array_get(fn, 2), "name"), "node-c");
    assert_string_equal(cstr(json_array_get(fn, 2), "message"),
                        "Hardware failure detected by node health check");
    /* A later workload failure adds WorkloadFailed entries for the same node. */
    gr_nvcre_job_obs o = run_obs(T0 + 2 * S);
    o.wl.phase = GR_NVCRE_WL_FAILED;
    o.group_nodes = "node-a";
    step(st, &o);
    assert_int_equal(json_array_size(json_object_get(st, "failedNodes")), 4);
    assert_string_equal(cond_field(st, "HardwareFailed", "status"), "True");
    assert_phase(st, "Failed", "WorkloadFailed");
    json_decref(st);
}

/* ------------------------------------------------------- failure log */

static void test_failure_pick(void **state)
{
    (void)state;
    json_t *pods = parse(
        "[{\"metadata\":{\"name\":\"p-b\"},\"spec\":{\"nodeName\":\"n2\"},\"status\":{"
        "\"containerStatuses\":[{\"name\":\"node\",\"state\":{\"terminated\":{\"exitCode\":137,"
        "\"reason\":\"OOMKilled\"}}}]}},"
        "{\"metadata\":{\"name\":\"p-a\"},\"spec\":{\"nodeName\":\"n1\"},\"status\":{"
        "\"containerStatuses\":[{\"name\":\"ok\",\"state\":{\"terminated\":{\"exitCode\":0}}},"
        "{\"name\":\"node\",\"state\":{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\"}}}]}}]");
    gr_nvcre_failure_pick pk;
    gr_nvcre_job_failure_pick(pods, &pk);
    /* OOMKilled preferred over the first non-zero exit. */
    assert_true(pk.found);
    assert_string_equal(pk.pod, "p-b");
    assert_string_equal(pk.node, "n2");
    assert_int_equal(pk.exit_code, 137);
    assert_string_equal(pk.reason, "OOMKilled");
    json_array_remove(pods, 0);
    gr_nvcre_job_failure_pick(pods, &pk);
    assert_string_equal(pk.pod, "p-a");
    assert_string_equal(pk.container, "node");
    assert_int_equal(pk.exit_code, 1);
    /* JOB-74: the failure log holds pod, node, exit code and the tail. */
    const char *log = "line 1\nline 2\nNCCL error: unhandled system error\n";
    json_t *fl = NULL;
    assert_int_equal(gr_nvcre_job_failure_log(&pk, "my-job", log, strlen(log), NULL, &fl), GR_OK);
    assert_string_equal(cstr(fl, "podName"), "p-a");
    assert_string_equal(cstr(fl, "nodeName"), "n1");
    assert_int_equal(json_integer_value(json_object_get(fl, "exitCode")), 1);
    assert_string_equal(cstr(fl, "reason"), "Error");
    assert_string_equal(cstr(fl, "tail"), log);
    json_decref(fl);
    /* Logs gone. */
    assert_int_equal(
        gr_nvcre_job_failure_log(&pk, "my-job", NULL, 0, "pods \"p-a\" not found", &fl), GR_OK);
    assert_string_equal(cstr(fl, "tail"), "Logs of container node are no longer available: pods "
                                          "\"p-a\" not found");
    json_decref(fl);
    /* No terminated container. */
    json_t *running = parse("[{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n\"},"
                            "\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"state\":"
                            "{\"running\":{}}}]}}]");
    gr_nvcre_job_failure_pick(running, &pk);
    assert_false(pk.found);
    assert_int_equal(gr_nvcre_job_failure_log(&pk, "my-job", NULL, 0, NULL, &fl), GR_OK);
    assert_string_equal(cstr(fl, "reason"), "NoTerminatedContainer");
    assert_string_equal(cstr(fl, "podName"), "p");
    json_decref(fl);
    json_decref(running);
    /* No pods. */
    json_t *none = json_array();
    gr_nvcre_job_failure_pick(none, &pk);
    assert_int_equal(gr_nvcre_job_failure_log(&pk, "my-job", NULL, 0, NULL, &fl), GR_OK);
    assert_string_equal(cstr(fl, "reason"), "PodNotFound");
    assert_non_null(strstr(cstr(fl, "tail"), "nvcre.nvidia.com/job=my-job exist"));
    json_decref(fl);
    json_decref(none);
    json_decref(pods);
}

static void test_log_tail(void **state)
{
    (void)state;
    /* 1000 short lines → the last 800. */
    gr_buf b;
    gr_buf_init(&b, 1 << 20);
    for (int i = 1; i <= 1000; i++)
        assert_int_equal(gr_buf_printf(&b, "l%d\n", i), GR_OK);
    size_t off = gr_nvcre_job_log_tail(b.data, b.len);
    assert_true(strncmp(b.data + off, "l201\n", 5) == 0);
    /* Long lines → at most 32 KiB, from a line start. */
    gr_buf_reset(&b);
    for (int i = 0; i < 100; i++) {
        for (int k = 0; k < 999; k++)
            gr_buf_putc(&b, 'x');
        gr_buf_putc(&b, '\n');
    }
    off = gr_nvcre_job_log_tail(b.data, b.len);
    assert_true(b.len - off <= 32768);
    assert_true(b.len - off > 32768 - 1000);
    assert_int_equal(b.data[off - 1], '\n');
    /* One huge line of multi-byte characters: cut at a character start. */
    gr_buf_reset(&b);
    for (int i = 0; i < 20000; i++)
        gr_buf_puts(&b, "\xC3\xA9");
    off = gr_nvcre_job_log_tail(b.data, b.len);
    assert_true(b.len - off <= 32768);
    assert_int_not_equal((unsigned char)b.data[off] & 0xC0, 0x80);
    /* Invalid UTF-8 becomes U+FFFD in the JSON. */
    gr_nvcre_failure_pick pk = {.found = 1,
                                .pods = 1,
                                .pod = "p",
                                .node = "n",
                                .container = "c",
                                .exit_code = 2,
                                .reason = "Error"};
    json_t *fl = NULL;
    assert_int_equal(gr_nvcre_job_failure_log(&pk, "j",
                                              "a\xFF"
                                              "b",
                                              3, NULL, &fl),
                     GR_OK);
    assert_string_equal(cstr(fl, "tail"), "a\xEF\xBF\xBD"
                                          "b");
    json_decref(fl);
    gr_buf_free(&b);
}

/* ----------------------------------------------------------- metrics */

static void test_metrics(void **state)
{
    (void)state;
    json_t *a = running_status(T0);
    json_t *b = running_status(T0);
    gr_nvcre_job_obs o = run_obs(T0);
    o.wl.phase = GR_NVCRE_WL_FAILED;
    o.group_nodes = "n1";
    step(b, &o);
    /* HardwareFailed must not change the state series (upstream #401). */
    const char *hw[] = {"n9"};
    gr_nvcre_job_mark_hardware_failed(a, hw, 1, 1, T0);
    gr_nvcre_job_metric_row rows[2] = {{"ns", "a", "wf\"1", a}, {"ns", "b", "", b}};
    gr_nvcre_job_counters c;
    memset(&c, 0, sizeof c);
    c.reconcile_success = 3;
    gr_nvcre_job_observe_reconcile(&c, 0.015);
    gr_nvcre_job_observe_health(&c, 0.0005);
    gr_buf out;
    gr_buf_init(&out, 1 << 20);
    assert_int_equal(gr_nvcre_job_metrics_render(rows, 2, &c, &out), GR_OK);
    const char *t = gr_buf_cstr(&out);
    assert_non_null(strstr(t, "nvcre_job_status{namespace=\"ns\",job=\"a\",workflow=\"wf\\\"1\","
                              "status=\"in_progress\"} 1\n"));
    assert_non_null(strstr(t, "nvcre_job_status{namespace=\"ns\",job=\"a\",workflow=\"wf\\\"1\","
                              "status=\"failed\"} 0\n"));
    assert_non_null(strstr(t, "nvcre_job_status{namespace=\"ns\",job=\"b\",workflow=\"\","
                              "status=\"failed\"} 1\n"));
    assert_non_null(
        strstr(t, "nvcre_job_failed_nodes{namespace=\"ns\",job=\"b\",workflow=\"\"} 1\n"));
    assert_non_null(strstr(t, "nvcre_reconcile_total{controller=\"job\",result=\"success\"} 3\n"));
    assert_non_null(
        strstr(t, "nvcre_reconcile_duration_seconds_bucket{controller=\"job\",le=\"0.01\"} 0\n"));
    assert_non_null(
        strstr(t, "nvcre_reconcile_duration_seconds_bucket{controller=\"job\",le=\"0.02\"} 1\n"));
    assert_non_null(strstr(
        t, "nvcre_node_health_check_duration_seconds_bucket{controller=\"job\",le=\"0.001\"} 1\n"));
    assert_string_equal(gr_nvcre_job_metric_state(a), "in_progress");
    assert_string_equal(gr_nvcre_job_metric_state(b), "failed");
    gr_buf_free(&out);
    json_decref(a);
    json_decref(b);
}

static void test_set_exclusive_transition_times(void **state)
{
    (void)state;
    json_t *st = json_object();
    assert_int_equal(
        gr_nvcre_job_set_additive(st, "HardwareFailed", 1, "HardwareFailureDetected", "x", 1, T0),
        GR_OK);
    assert_int_equal(gr_nvcre_job_set_exclusive(st, "InProgress", "WorkloadCreated", "m", 1, T0),
                     1);
    assert_exclusive(st); /* additive condition moved after the exclusive set */
    assert_int_equal(
        gr_nvcre_job_set_exclusive(st, "InProgress", "WorkloadRunning", "m2", 2, T0 + 9 * S), 0);
    /* Same status: lastTransitionTime kept; observedGeneration updated. */
    assert_string_equal(cond_field(st, "InProgress", "lastTransitionTime"), "2026-01-01T00:00:00Z");
    assert_int_equal(json_integer_value(json_object_get(gr_nvcre_job_condition(st, "Succeeded"),
                                                        "observedGeneration")),
                     2);
    assert_int_equal(
        gr_nvcre_job_set_exclusive(st, "Succeeded", "WorkloadCompleted", "ok", 2, T0 + 20 * S), 1);
    assert_string_equal(cond_field(st, "InProgress", "lastTransitionTime"), "2026-01-01T00:00:20Z");
    assert_string_equal(cond_field(st, "HardwareFailed", "lastTransitionTime"),
                        "2026-01-01T00:00:00Z");
    assert_int_equal(gr_nvcre_job_set_exclusive(st, "HardwareFailed", "x", "y", 1, T0), GR_EINVAL);
    json_decref(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_naming),
        cmocka_unit_test(test_build_workload),
        cmocka_unit_test(test_build_runtime_patch_targets),
        cmocka_unit_test(test_trainjob_status),
        cmocka_unit_test(test_create_outcomes),
        cmocka_unit_test(test_creation_rejected),
        cmocka_unit_test(test_creation_rbac_transient),
        cmocka_unit_test(test_pending_no_clocks),
        cmocka_unit_test(test_terminal),
        cmocka_unit_test(test_scheduling_blocked),
        cmocka_unit_test(test_stalls),
        cmocka_unit_test(test_checkpoint_restart),
        cmocka_unit_test(test_node_health),
        cmocka_unit_test(test_failure_pick),
        cmocka_unit_test(test_log_tail),
        cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_set_exclusive_transition_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
