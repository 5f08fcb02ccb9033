/*
 * gr_nvcre_wlrun: WorkloadRun → Workflow synthesis (torch / mpi / exec,
 * config ConfigMap, checkpoint PVC, platform settings, intra-node, user
 * overrides appended, gang scheduler incl. Run:ai) and the status mirror
 * (Succeeded, Failed reasons, WorkflowDeleted, Superseded, ThresholdViolation).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "gr_json.h"
#include "gr_kube_object.h"
#include "gr_nvcre_types.h"
#include "gr_nvcre_wlrun.h"
#include "gr_yaml.h"
#include "nvcre_test_fixture.h"

static json_t *build(const char *run_yaml, const char *plat, const char *arch)
{
    json_t *run = yaml(run_yaml), *wf = NULL;
    gr_err err;
    if (gr_nvcre_wlrun_build(run, cat, plat, arch, &wf, &err) != GR_OK)
        fail_msg("build: %s", err.msg);
    json_decref(run);
    return wf;
}

static const char *str(const json_t *o, const char *ptr)
{
    return json_string_value(gr_json_ptr_get(o, ptr));
}

static json_int_t num(const json_t *o, const char *ptr)
{
    return json_integer_value(gr_json_ptr_get(o, ptr));
}

#define META "metadata: {name: r1, namespace: ns, uid: u-r1}\n"
#define RJ   "/spec/dependencies/0/spec/template/spec/replicatedJobs"

static void test_torch_config_checkpoint(void **state)
{
    (void)state;
    json_t *wf =
        build(META "spec:\n  image: img:1\n  numNodes: 2\n"
                   "  framework: {torch: {script: train.py, args: [--lr, '0.1']}}\n"
                   "  config: {inline: {train.yaml: 'steps: 10'}}\n"
                   "  checkpoint: {storageSize: 1Ti, storageClassName: fast, maxRestarts: 3}\n"
                   "  env: [{name: A, value: b}]\n",
              "aws", "h100");
    assert_string_equal(str(wf, "/metadata/name"), "r1");
    assert_string_equal(str(wf, "/metadata/labels/nvcre.nvidia.com~1workload-run"), "r1");
    assert_string_equal(str(wf, "/metadata/ownerReferences/0/uid"), "u-r1");
    assert_string_equal(str(wf, "/spec/dependencies/0/kind"), "TrainingRuntime");
    assert_int_equal(num(wf, "/spec/dependencies/0/spec/mlPolicy/torch/numProcPerNode"), 8);
    assert_string_equal(str(wf, "/spec/dependencies/1/kind"), "ConfigMap");
    assert_string_equal(str(wf, "/spec/dependencies/1/metadata/name"), "r1-config");
    assert_string_equal(str(wf, "/spec/dependencies/2/kind"), "PersistentVolumeClaim");
    assert_string_equal(str(wf, "/spec/dependencies/2/spec/storageClassName"), "fast");
    const char *pod = RJ "/0/template/spec/template/spec";
    char p[256];
    snprintf(p, sizeof p, "%s/volumes/1/configMap/defaultMode", pod);
    assert_int_equal(num(wf, p), 0755);
    snprintf(p, sizeof p, "%s/containers/0/volumeMounts/1/mountPath", pod);
    assert_string_equal(str(wf, p), "/config");
    /* AWS: EFA resource and env, then the user's env */
    snprintf(p, sizeof p, "%s/containers/0/resources/limits/vpc.amazonaws.com~1efa", pod);
    assert_int_equal(num(wf, p), 32);
    snprintf(p, sizeof p, "%s/containers/0/env/0/name", pod);
    assert_string_equal(str(wf, p), "FI_PROVIDER");
    json_t *env = gr_json_ptr_get(wf, "/spec/dependencies/0/spec/template/spec/replicatedJobs/0/"
                                      "template/spec/template/spec/containers/0/env");
    assert_string_equal(str(json_array_get(env, json_array_size(env) - 1), "/name"), "A");
    assert_string_equal(str(wf, "/spec/jobTemplate/spec/checkpoint/pvcName"), "r1-checkpoint");
    assert_int_equal(num(wf, "/spec/jobTemplate/spec/checkpoint/maxRestarts"), 3);
    assert_string_equal(str(wf, "/spec/jobTemplate/spec/workload/trainJob/trainer/command/0"),
                        "torchrun");
    assert_string_equal(str(wf, "/spec/jobTemplate/spec/workload/trainJob/trainer/args/0"),
                        "train.py");
    assert_int_equal(num(wf, "/spec/jobTemplate/spec/workload/trainJob/trainer/numNodes"), 2);
    assert_string_equal(str(wf, "/spec/orchestration/execution/timeoutPerJob"), "1h");
    json_decref(wf);
}

/* workloadrun-mpi-aws-gb200: launcher + workers, MNNVL ComputeDomain. */
static void test_mpi_gb200(void **state)
{
    (void)state;
    json_t *wf = build(META "spec:\n  image: nccl:1\n  numNodes: 4\n"
                            "  framework: {mpi: {binary: all_reduce_perf, args: [-b, '8'], "
                            "mpiArgs: [--allow-run-as-root], mpirunPath: /usr/bin/mpirun}}\n",
                       "aws", "gb200");
    assert_string_equal(str(wf, RJ "/0/name"), "launcher");
    assert_string_equal(str(wf, RJ "/1/name"), "node");
    assert_string_equal(str(wf, RJ "/1/template/spec/template/spec/containers/0/command/0"),
                        "/usr/sbin/sshd");
    assert_int_equal(num(wf, "/spec/dependencies/0/spec/mlPolicy/mpi/numProcPerNode"), 4);
    assert_string_equal(str(wf, "/spec/dependencies/1/kind"), "ComputeDomain");
    assert_int_equal(num(wf, "/spec/dependencies/1/spec/numNodes"), 4);
    const char *tr = "/spec/jobTemplate/spec/workload/trainJob/trainer";
    char p[200];
    snprintf(p, sizeof p, "%s/command/0", tr);
    assert_string_equal(str(wf, p), "/usr/bin/mpirun");
    snprintf(p, sizeof p, "%s/args/0", tr);
    assert_string_equal(str(wf, p), "--allow-run-as-root");
    snprintf(p, sizeof p, "%s/args/1", tr);
    assert_string_equal(str(wf, p), "all_reduce_perf");
    json_decref(wf);
}

/* workloadrun-intra-node, exec, user overrides appended, gang Run:ai. */
static void test_exec_intra_node_overrides_gang(void **state)
{
    (void)state;
    json_t *wf = build(META "spec:\n  image: busybox\n  numNodes: 8\n"
                            "  framework: {exec: {command: [sh, -c], args: [nvidia-smi]}}\n"
                            "  orchestration: {testScale: intra-node, repeatCount: 3, "
                            "timeoutPerJob: 10m}\n"
                            "  gpusPerNode: 2\n  mlnxPerNode: 0\n"
                            "  overrides: [{when: {platform: {equals: gcp}}, jobTemplate: {}}]\n"
                            "  gangScheduler: {schedulerName: runai-scheduler, queueLabelKey: "
                            "runai/queue, queue: q1}\n",
                       "gcp", "h100");
    assert_int_equal(num(wf, "/spec/jobTemplate/spec/workload/trainJob/trainer/numNodes"), 1);
    assert_int_equal(num(wf, "/spec/dependencies/0/spec/mlPolicy/numNodes"), 1);
    assert_int_equal(num(wf, "/spec/orchestration/iterations"), 3);
    assert_string_equal(str(wf, "/spec/orchestration/execution/timeoutPerJob"), "10m");
    assert_int_equal(num(wf, RJ "/0/template/spec/template/spec/containers/0/resources/limits/"
                                "nvidia.com~1gpu"),
                     2);
    assert_int_equal(json_array_size(gr_json_ptr_get(wf, "/spec/overrides")), 1);
    assert_string_equal(str(wf, "/spec/jobTemplate/spec/workloadMetadata/labels/runai~1queue"),
                        "q1");
    assert_string_equal(str(wf, RJ "/0/template/spec/template/spec/schedulerName"),
                        "runai-scheduler");
    /* GCP H100: TCPXO annotations on the pods */
    assert_non_null(str(wf, RJ "/0/template/spec/template/metadata/annotations/"
                               "networking.gke.io~1interfaces"));
    json_decref(wf);
}

static void test_build_errors(void **state)
{
    (void)state;
    json_t *run = yaml(META "spec: {numNodes: 1, framework: {exec: {command: [x]}}}\n"), *wf;
    gr_err err;
    assert_int_equal(gr_nvcre_wlrun_build(run, cat, "aws", "h100", &wf, &err), GR_EINVAL);
    assert_string_equal(err.msg, "WorkloadRun spec.image: set the container image");
    json_decref(run);
    run = yaml(META "spec: {image: i, numNodes: 1, framework: {}}\n");
    assert_int_equal(gr_nvcre_wlrun_build(run, cat, "aws", "h100", &wf, &err), GR_EINVAL);
    assert_string_equal(err.msg, "WorkloadRun spec.framework: set exactly one of torch, mpi, exec");
    json_decref(run);
}

static json_t *wf_with(const char *conds)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "metadata: {name: r1, namespace: ns}\nstatus:\n  conditions: %s\n"
             "  orchestration: {detectedPlatform: aws, detectedGPUArchitecture: h100}\n"
             "  failedNodesRef: {kind: ConfigMap, name: failed-nodes-1}\n",
             conds);
    return yaml(buf);
}

static const char *cond(const json_t *status, const char *type, const char *field)
{
    json_t *c = gr_kube_condition_find(json_object_get(status, "conditions"), type);
    return json_string_value(json_object_get(c, field));
}

static void test_mirror(void **state)
{
    (void)state;
    json_t *run = yaml(META "spec: {}\n"), *st = NULL;
    gr_err err;
    /* running */
    json_t *wf = wf_with("[{type: InProgress, status: 'True', reason: JobRunning, message: m}]");
    assert_int_equal(gr_nvcre_wlrun_mirror(run, wf, NOW, &st, &err), GR_OK);
    assert_string_equal(cond(st, "InProgress", "reason"), "JobRunning");
    assert_string_equal(cond(st, "Succeeded", "reason"), "Superseded");
    assert_string_equal(cond(st, "Failed", "reason"), "Superseded");
    assert_string_equal(json_string_value(gr_json_ptr_get(st, "/workflowRef/name")), "r1");
    assert_string_equal(json_string_value(json_object_get(st, "detectedPlatform")), "aws");
    json_object_set_new(run, "status", st);
    json_decref(wf);
    /* failed on thresholds → WorkflowValidationFailed, ValidationFailed → ThresholdViolation */
    wf = wf_with("[{type: Failed, status: 'True', reason: JobValidationFailed, message: bw low}, "
                 "{type: ValidationFailed, status: 'True', reason: ThresholdViolated, message: "
                 "busBW 3 < 300}]");
    assert_int_equal(gr_nvcre_wlrun_mirror(run, wf, NOW, &st, &err), GR_OK);
    assert_string_equal(cond(st, "Failed", "reason"), "WorkflowValidationFailed");
    assert_string_equal(cond(st, "Failed", "message"), "bw low");
    assert_string_equal(cond(st, "ValidationFailed", "reason"), "ThresholdViolation");
    assert_string_equal(cond(st, "InProgress", "reason"), "Superseded");
    assert_string_equal(json_string_value(gr_json_ptr_get(st, "/failedNodesRef/name")),
                        "failed-nodes-1");
    json_decref(st);
    json_decref(wf);
    wf = wf_with("[{type: Failed, status: 'True', reason: JobHardwareFailed, message: xid}]");
    assert_int_equal(gr_nvcre_wlrun_mirror(run, wf, NOW, &st, &err), GR_OK);
    assert_string_equal(cond(st, "Failed", "reason"), "WorkflowFailed");
    json_decref(st);
    json_decref(wf);
    wf = wf_with("[{type: Succeeded, status: 'True', reason: AllGroupsPassed, message: ok}]");
    assert_int_equal(gr_nvcre_wlrun_mirror(run, wf, NOW, &st, &err), GR_OK);
    assert_string_equal(cond(st, "Succeeded", "reason"), "WorkflowSucceeded");
    assert_string_equal(cond(st, "Succeeded", "message"), "Workflow completed successfully");
    json_decref(st);
    json_decref(wf);
    /* deleted after creation */
    assert_int_equal(gr_nvcre_wlrun_mirror(run, NULL, NOW, &st, &err), GR_OK);
    assert_string_equal(cond(st, "Failed", "reason"), "WorkflowDeleted");
    assert_string_equal(cond(st, "Failed", "message"), "Workflow was deleted");
    json_decref(st);
    json_decref(run);
    /* never created: nothing */
    run = yaml(META "spec: {}\n");
    assert_int_equal(gr_nvcre_wlrun_mirror(run, NULL, NOW, &st, &err), GR_OK);
    assert_null(json_object_get(st, "conditions"));
    json_decref(st);
    json_decref(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_torch_config_checkpoint),
        cmocka_unit_test(test_mpi_gb200),
        cmocka_unit_test(test_exec_intra_node_overrides_gang),
        cmocka_unit_test(test_build_errors),
        cmocka_unit_test(test_mirror),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
