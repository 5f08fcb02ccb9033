/* Unit tests of test/sim/gr_sim (the simulated cluster's pure logic). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gr_sim.h"

static const char SPEC[] = "apiVersion: sim.gpuready.io/v1alpha1\n"
                           "kind: FaultSpec\n"
                           "defaults: {ncclDuration: 3s, dcgmDuration: 4s, duration: 2s}\n"
                           "nodes:\n"
                           "- name: gpu-node-02\n"
                           "  busbwGBps: 41.5\n"
                           "- name: gpu-node-03\n"
                           "  dcgm: {fail: true, exitCode: 226, message: pending row remappings}\n"
                           "- name: gpu-node-04\n"
                           "  notReady: {after: 5s, from: start}\n"
                           "  cordon: {after: 1m}\n"
                           "unschedulable:\n"
                           "- podSelector: {matchLabels: {stuck: \"true\"}}\n"
                           "trainJobs:\n"
                           "- {name: train-fail, exitCode: 3}\n";

static void parse_ok(gr_sim_spec *s)
{
    gr_err err = {0};
    int rc = gr_sim_spec_parse(SPEC, sizeof SPEC - 1, "spec.yaml", s, &err);
    if (rc != GR_OK)
        fail_msg("%s", err.msg);
}

static void test_spec_parse(void **state)
{
    (void)state;
    gr_sim_spec s;
    parse_ok(&s);
    assert_int_equal(s.n_nodes, 3);
    assert_int_equal(s.nccl_duration_ns, INT64_C(3000000000));
    assert_int_equal(s.dcgm_duration_ns, INT64_C(4000000000));
    assert_int_equal(s.duration_ns, INT64_C(2000000000));
    const gr_sim_node_fault *f = gr_sim_spec_node(&s, "gpu-node-02");
    assert_non_null(f);
    assert_true(f->busbw_gbps > 41.4 && f->busbw_gbps < 41.6);
    f = gr_sim_spec_node(&s, "gpu-node-03");
    assert_true(f->dcgm_fail);
    assert_int_equal(f->dcgm_exit_code, 226);
    assert_string_equal(f->dcgm_test, "Page Retirement/Row Remap");
    f = gr_sim_spec_node(&s, "gpu-node-04");
    assert_true(f->not_ready.enabled);
    assert_int_equal(f->not_ready.from, GR_SIM_FROM_START);
    assert_int_equal(f->not_ready.after_ns, INT64_C(5000000000));
    assert_true(f->cordon.enabled);
    assert_int_equal(f->cordon.from, GR_SIM_FROM_FIRST_POD);
    assert_null(gr_sim_spec_node(&s, "gpu-node-01"));
    assert_int_equal(s.n_train_jobs, 1);
    assert_int_equal(s.train_jobs[0].exit_code, 3);
    assert_int_equal(json_array_size(s.unschedulable), 1);
    gr_sim_spec_free(&s);
}

static void expect_error(const char *yaml, const char *needle)
{
    gr_sim_spec s;
    gr_err err = {0};
    int rc = gr_sim_spec_parse(yaml, strlen(yaml), "f.yaml", &s, &err);
    assert_int_not_equal(rc, GR_OK);
    if (strstr(err.msg, needle) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", err.msg, needle);
}

static void test_spec_errors(void **state)
{
    (void)state;
    expect_error("nodes: [{name: a, busbw: 3}]", "nodes[0].busbw: unknown field");
    expect_error("nodes: [{busbwGBps: 3}]", "nodes[0].name: required");
    expect_error("nodes: [{name: a}, {name: a}]", "already listed");
    expect_error("nodes: [{name: a, busbwGBps: -1}]", "out of range");
    expect_error("nodes: [{name: a, notReady: {after: soon}}]", "nodes[0].notReady.after");
    expect_error("nodes: [{name: a, cordon: {after: 1s, from: later}}]",
                 "not one of firstPod, start");
    expect_error("nodes: [{name: a, dcgm: {exitCode: 0}}]", "nodes[0].dcgm.exitCode");
    expect_error("kind: Pod", "spec.kind: must be FaultSpec");
    expect_error("unschedulable: [{podSelector: {}}]", "unschedulable[0].podSelector: required");
    expect_error("unschedulable: [{podSelector: {matchLabels: {a: 1}}}]",
                 "matchLabels.a: must be a string");
    expect_error("trainJobs: {name: x}", "spec.trainJobs: must be a list");
    expect_error("trainJobs: [{exitCode: 3}]", "trainJobs[0]: needs a name");
    expect_error("trainJobs: [{node: a, exitCode: 0}]", "trainJobs[0].exitCode");
    expect_error("trainJobs: [{node: a, pod: b}]", "trainJobs[0].pod: unknown field");
    expect_error("nodes: [{name: a, gpus: -1}]", "nodes[0].gpus: must be an integer in [0, 64]");
    expect_error("nodes: [{name: a, gpus: two}]", "nodes[0].gpus");
    expect_error("a: 1\n---\nb: 2\n", "one YAML document expected");
    expect_error("nodes: [", "f.yaml");
}

static void test_spec_empty(void **state)
{
    (void)state;
    gr_sim_spec s;
    assert_int_equal(gr_sim_spec_parse("", 0, "e", &s, NULL), GR_OK);
    assert_int_equal(s.n_nodes, 0);
    gr_sim_spec_free(&s);
}

static const char *label(const json_t *node, const char *k)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(node, "metadata"), "labels"), k));
}

static const char *capacity(const json_t *node, const char *k)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(node, "status"), "capacity"), k));
}

static void test_nodes_aws_h100(void **state)
{
    (void)state;
    json_t *list;
    gr_err err = {0};
    assert_int_equal(gr_sim_nodes(16, "aws", "h100", &list, &err), GR_OK);
    json_t *items = json_object_get(list, "items");
    assert_int_equal(json_array_size(items), 16);
    json_t *n = json_array_get(items, 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(n, "metadata"), "name")),
                        "gpu-node-01");
    assert_string_equal(label(n, "nvidia.com/gpu.present"), "true");
    assert_string_equal(label(n, "nvidia.com/gpu.product"), "NVIDIA-H100-80GB-HBM3");
    assert_string_equal(label(n, "nvidia.com/gpu.count"), "8");
    assert_string_equal(label(n, "nvidia.com/gpu.family"), "hopper");
    assert_string_equal(label(n, "type"), "kwok");
    assert_string_equal(label(n, "node.kubernetes.io/instance-type"), "p5.48xlarge");
    assert_string_equal(label(n, "topology.kubernetes.io/zone"), "us-east-1a");
    assert_string_equal(capacity(n, "nvidia.com/gpu"), "8");
    assert_string_equal(capacity(n, "vpc.amazonaws.com/efa"), "32");
    const char *pid = json_string_value(json_object_get(json_object_get(n, "spec"), "providerID"));
    assert_non_null(pid);
    assert_memory_equal(pid, "aws:///us-east-1a/i-", 20);
    assert_int_equal(strlen(pid), 20 + 17);
    /* KWOK re-renders nodeInfo through YAML: IDs must never read as numbers */
    for (size_t i = 0; i < 16; i++) {
        json_t *info =
            json_object_get(json_object_get(json_array_get(items, i), "status"), "nodeInfo");
        const char *ids[] = {"machineID", "systemUUID", "bootID"};
        for (size_t k = 0; k < 3; k++) {
            const char *v = json_string_value(json_object_get(info, ids[k]));
            assert_non_null(v);
            assert_true(v[0] >= 'a' && v[0] <= 'f');
        }
    }
    /* distinct provider IDs */
    const char *pid2 = json_string_value(
        json_object_get(json_object_get(json_array_get(items, 1), "spec"), "providerID"));
    assert_string_not_equal(pid, pid2);
    json_decref(list);
}

static void test_nodes_platforms(void **state)
{
    (void)state;
    struct {
        const char *platform, *gpu, *pid_prefix, *nic, *nics, *gpus;
    } cases[] = {
        {"gcp", "h100", "gce://", NULL, NULL, "8"},
        {"azure", "h100", "azure:///subscriptions/", "nvidia.com/mlnxnics", "8", "8"},
        {"oci", "gb200", "ocid1.instance.oc1.", NULL, NULL, "4"},
        {"oci", "l40s", "ocid1.instance.oc1.", "nvidia.com/mlnxnics", "2", "4"},
        {"onprem", "a100", NULL, "nvidia.com/mlnxnics", "8", "8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *list;
        assert_int_equal(gr_sim_nodes(2, cases[i].platform, cases[i].gpu, &list, NULL), GR_OK);
        json_t *n = json_array_get(json_object_get(list, "items"), 0);
        const char *pid =
            json_string_value(json_object_get(json_object_get(n, "spec"), "providerID"));
        if (cases[i].pid_prefix == NULL)
            assert_null(pid);
        else
            assert_memory_equal(pid, cases[i].pid_prefix, strlen(cases[i].pid_prefix));
        if (cases[i].nic != NULL)
            assert_string_equal(capacity(n, cases[i].nic), cases[i].nics);
        else {
            assert_null(capacity(n, "nvidia.com/mlnxnics"));
            assert_null(capacity(n, "vpc.amazonaws.com/efa"));
        }
        assert_string_equal(capacity(n, "nvidia.com/gpu"), cases[i].gpus);
        json_decref(list);
    }
    json_t *list;
    assert_int_equal(gr_sim_nodes(2, "oci", "gb200", &list, NULL), GR_OK);
    json_t *n = json_array_get(json_object_get(list, "items"), 0);
    assert_string_equal(label(n, "kubernetes.io/arch"), "arm64");
    assert_non_null(label(n, "nvidia.com/gpu.clique"));
    json_decref(list);
}

static void test_nodes_errors(void **state)
{
    (void)state;
    json_t *list;
    gr_err err = {0};
    assert_int_equal(gr_sim_nodes(4, "mars", "h100", &list, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "--platform"));
    assert_int_equal(gr_sim_nodes(4, "aws", "v100", &list, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "--gpu"));
    assert_int_equal(gr_sim_nodes(0, "aws", "h100", &list, &err), GR_EINVAL);
    char name[32];
    gr_sim_node_name(0, 4, name, sizeof name);
    assert_string_equal(name, "gpu-node-01");
    gr_sim_node_name(255, 256, name, sizeof name);
    assert_string_equal(name, "gpu-node-256");
}

static json_t *pod(const char *node, const char *cmd, const char *labels_json)
{
    char buf[2048];
    snprintf(buf, sizeof buf,
             "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u-1\","
             "\"labels\":%s},"
             "\"spec\":{\"nodeName\":\"%s\",\"restartPolicy\":\"Never\",\"containers\":[{\"name\":"
             "\"main\","
             "\"command\":[\"sh\",\"-c\",\"%s\"]}]},\"status\":{\"phase\":\"Running\"}}",
             labels_json, node, cmd);
    json_t *p = json_loads(buf, 0, NULL);
    assert_non_null(p);
    return p;
}

/* The pod asks for n GPUs (limits), as a rank of an NCCL job does. */
static json_t *gpus(json_t *p, int n)
{
    json_t *c = json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 0);
    json_object_set_new(c, "resources", json_pack("{s:{s:i}}", "limits", "nvidia.com/gpu", n));
    return p;
}

static void test_plan_nccl_slow(void **state)
{
    (void)state;
    gr_sim_spec s;
    parse_ok(&s);
    json_t *p = pod("gpu-node-02", "all_reduce_perf_mpi -b 8 -e 1G -f 2 -g 8", "{}");
    gr_sim_plan plan;
    assert_int_equal(gr_sim_pod_plan(&s, "h100", p, &plan, NULL), GR_OK);
    assert_true(plan.act);
    assert_int_equal(plan.kind, GR_SIM_NCCL);
    assert_int_equal(plan.exit_code, 0);
    assert_int_equal(plan.duration_ns, INT64_C(3000000000));
    gr_buf log = GR_BUF_INIT(1 << 20);
    assert_int_equal(gr_sim_pod_log(&plan, &s, "h100", p, INT64_C(1767225600000000000), &log, NULL),
                     GR_OK);
    /* CRI format, the nccl-tests header and the summary line. */
    assert_memory_equal(log.data, "2026-01-01T00:00:00.000000000Z stdout F # nThread 1", 51);
    assert_non_null(strstr(log.data, "maxBytes 1073741824"));
    assert_non_null(strstr(log.data, "out-of-place"));
    assert_non_null(strstr(
        log.data, "#       size         count      type   redop    root     time   algbw   busbw"));
    assert_non_null(strstr(log.data, "  1073741824     268435456     float     sum      -1"));
    const char *avg = strstr(log.data, "# Avg bus bandwidth    : ");
    assert_non_null(avg);
    double bw = strtod(avg + strlen("# Avg bus bandwidth    : "), NULL);
    assert_true(bw > 0 && bw < 41.5); /* below the slow node's peak */
    gr_buf_free(&log);
    json_decref(p);

    /* the same on a healthy node: much faster */
    p = pod("gpu-node-01", "all_reduce_perf_mpi -b 8 -e 1G -f 2 -g 8", "{}");
    assert_int_equal(gr_sim_pod_plan(&s, "h100", p, &plan, NULL), GR_OK);
    log = (gr_buf)GR_BUF_INIT(1 << 20);
    assert_int_equal(gr_sim_pod_log(&plan, &s, "h100", p, 0, &log, NULL), GR_OK);
    avg = strstr(log.data, "# Avg bus bandwidth    : ");
    assert_true(strtod(avg + strlen("# Avg bus bandwidth    : "), NULL) > 100.0);
    gr_buf_free(&log);
    json_decref(p);
    gr_sim_spec_free(&s);
}

static void test_plan_dcgm_fail(void **state)
{
    (void)state;
    gr_sim_spec s;
    parse_ok(&s);
    json_t *p = pod("gpu-node-03", "dcgmi diag -r 1", "{}");
    gr_sim_plan plan;
    assert_int_equal(gr_sim_pod_plan(&s, "h100", p, &plan, NULL), GR_OK);
    assert_int_equal(plan.kind, GR_SIM_DCGM);
    assert_int_equal(plan.exit_code, 226);
    assert_int_equal(plan.duration_ns, INT64_C(4000000000));
    gr_buf log = GR_BUF_INIT(1 << 20);
    assert_int_equal(gr_sim_pod_log(&plan, &s, "h100", p, 0, &log, NULL), GR_OK);
    assert_non_null(strstr(log.data, "| Page Retirement/Row Remap | Fail "));
    assert_non_null(strstr(log.data, "pending row remappings"));
    assert_null(strstr(log.data, "| PCIe")); /* level 1 only */
    gr_buf_free(&log);
    json_decref(p);

    p = pod("gpu-node-01", "dcgmi diag -r 2", "{}");
    assert_int_equal(gr_sim_pod_plan(&s, "h100", p, &plan, NULL), GR_OK);
    assert_int_equal(plan.exit_code, 0);
    log = (gr_buf)GR_BUF_INIT(1 << 20);
    assert_int_equal(gr_sim_pod_log(&plan, &s, "h100", p, 0, &log, NULL), GR_OK);
    assert_non_null(strstr(log.data, "| PCIe                      | Pass - All"));
    assert_null(strstr(log.data, "Fail"));
    gr_buf_free(&log);
    json_decref(p);
    gr_sim_spec_free(&s);
}

static void test_plan_trainjob_and_skips(void **state)
{
    (void)state;
    gr_sim_spec s;
    parse_ok(&s);
    gr_sim_plan plan;
    json_t *p = pod("gpu-node-01", "python train.py",
                    "{\"jobset.sigs.k8s.io/jobset-name\":\"train-fail\"}");
    assert_int_equal(gr_sim_pod_plan(&s, "h100", p, &plan, NULL), GR_OK);
    assert_true(plan.act);
    assert_int_equal(plan.kind, GR_SIM_GENERIC);
    assert_int_equal(plan.exit_code, 3);
    gr_buf doc = GR_BUF_INIT(1 << 16);
    assert_int_equal(gr_sim_pod_apply_yaml(&plan, "/d/logs/x.log", &doc, NULL), GR_OK);
    assert_non_null(strstr(doc.data, "\"kind\":\"Logs\""));
    assert_non_null(strstr(doc.data, "\"logsFile\":\"/d/logs/x.log\""));
    assert_non_null(strstr(doc.data, "\"sim.gpuready.io/exit-code\":\"3\""));
    assert_non_null(strstr(doc.data, "\"sim.gpuready.io/duration\":\"2000ms\""));
    assert_non_null(strstr(doc.data, "\"uid\":\"u-1\""));
    gr_buf_free(&doc);
    json_decref(p);

    /* not bound, restartPolicy Always, already simulated, bad workload annotation */
    p = pod("", "x", "{}");
    assert_int_equal(gr_sim_pod_plan(&s, "h100", p, &plan, NULL), GR_OK);
    assert_false(plan.act);
    json_decref(p);
    p = pod("gpu-node-01", "x", "{}");
    json_object_set_new(json_object_get(p, "spec"), "restartPolicy", json_string("Always"));
    assert_int_equal(gr_sim_pod_plan(&s, "h100", p, &plan, NULL), GR_OK);
    assert_false(plan.act);
    json_object_set_new(json_object_get(p, "spec"), "restartPolicy", json_string("OnFailure"));
    json_object_set_new(json_object_get(p, "metadata"), "annotations",
                        json_pack("{s:s}", GR_SIM_ANN_EXIT_CODE, "0"));
    assert_int_equal(gr_sim_pod_plan(&s, "h100", p, &plan, NULL), GR_OK);
    assert_false(plan.act);
    json_object_set_new(json_object_get(p, "metadata"), "annotations",
                        json_pack("{s:s}", GR_SIM_ANN_WORKLOAD, "x"));
    gr_err err = {0};
    assert_int_equal(gr_sim_pod_plan(&s, "h100", p, &plan, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, GR_SIM_ANN_WORKLOAD));
    json_object_set_new(json_object_get(p, "metadata"), "annotations",
                        json_pack("{s:s}", GR_SIM_ANN_WORKLOAD, "nccl"));
    assert_int_equal(gr_sim_pod_plan(&s, "h100", p, &plan, &err), GR_OK);
    assert_int_equal(plan.kind, GR_SIM_NCCL);
    json_decref(p);
    gr_sim_spec_free(&s);
}

/* A node that advertises fewer GPUs than it has (a GPU fell off the bus):
 * capacity and allocatable say so, the labels still say 8, so a pod asking
 * for 8 cannot be placed there. */
static void test_nodes_gpus_fault(void **state)
{
    (void)state;
    static const char y[] = "nodes: [{name: gpu-node-02, gpus: 7}, {name: gpu-node-09, gpus: 0}]";
    gr_sim_spec s;
    assert_int_equal(gr_sim_spec_parse(y, sizeof y - 1, "f", &s, NULL), GR_OK);
    json_t *list;
    assert_int_equal(gr_sim_nodes_spec(4, "aws", "h100", &s, &list, NULL), GR_OK);
    json_t *items = json_object_get(list, "items");
    assert_string_equal(capacity(json_array_get(items, 0), "nvidia.com/gpu"), "8");
    json_t *n = json_array_get(items, 1);
    assert_string_equal(capacity(n, "nvidia.com/gpu"), "7");
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(n, "status"), "allocatable"), "nvidia.com/gpu")),
        "7");
    assert_string_equal(label(n, "nvidia.com/gpu.count"), "8");
    json_decref(list);
    gr_sim_spec_free(&s);
}

/* trainJobs by node: the TrainJobs a controller names itself fail when
 * their pods run on that node; other nodes' and non-JobSet pods do not. */
static void test_plan_trainjob_by_node(void **state)
{
    (void)state;
    static const char y[] =
        "trainJobs:\n"
        "- {node: gpu-node-05, exitCode: 7, message: \"NCCL WARN Cuda failure 'unspecified launch "
        "failure'\"}\n";
    gr_sim_spec s;
    gr_err err = {0};
    assert_int_equal(gr_sim_spec_parse(y, sizeof y - 1, "f", &s, &err), GR_OK);
    gr_sim_plan plan;
    json_t *p = gpus(pod("gpu-node-05", "/usr/local/bin/preflight-dcgm-diag",
                         "{\"jobset.sigs.k8s.io/jobset-name\":\"job-x7k2p-workload\"}"),
                     8);
    assert_int_equal(gr_sim_pod_plan(&s, "h100", p, &plan, NULL), GR_OK);
    assert_true(plan.act);
    assert_int_equal(plan.kind, GR_SIM_DCGM);
    assert_int_equal(plan.exit_code, 7);
    assert_ptr_equal(plan.job_fault, &s.train_jobs[0]);
    gr_buf log = GR_BUF_INIT(1 << 20);
    assert_int_equal(gr_sim_pod_log(&plan, &s, "h100", p, 0, &log, NULL), GR_OK);
    assert_non_null(strstr(log.data, "NCCL WARN Cuda failure 'unspecified launch failure'"));
    assert_non_null(strstr(log.data, "finished with exit code 7"));
    assert_null(strstr(log.data, "Successfully ran diagnostic"));
    gr_buf_free(&log);
    json_decref(p);
    p = gpus(pod("gpu-node-06", "/usr/local/bin/preflight-dcgm-diag",
                 "{\"jobset.sigs.k8s.io/jobset-name\":\"job-x7k2p-workload\"}"),
             8);
    assert_int_equal(gr_sim_pod_plan(&s, "h100", p, &plan, NULL), GR_OK);
    assert_int_equal(plan.exit_code, 0);
    assert_null(plan.job_fault);
    json_decref(p);
    /* the same TrainJob's MPI launcher (no GPUs) on gpu-node-05 runs no rank
     * there: it does not crash */
    p = pod("gpu-node-05", "mpirun all_reduce_perf",
            "{\"jobset.sigs.k8s.io/jobset-name\":\"job-x7k2p-workload\"}");
    assert_int_equal(gr_sim_pod_plan(&s, "h100", p, &plan, NULL), GR_OK);
    assert_int_equal(plan.exit_code, 0);
    assert_null(plan.job_fault);
    json_decref(p);
    p = pod("gpu-node-05", "python x.py", "{}"); /* not a TrainJob's pod */
    assert_int_equal(gr_sim_pod_plan(&s, "h100", p, &plan, NULL), GR_OK);
    assert_int_equal(plan.exit_code, 0);
    json_decref(p);
    gr_sim_spec_free(&s);
}

static void test_groups_slowest_node(void **state)
{
    (void)state;
    gr_sim_spec s;
    parse_ok(&s);
    gr_sim_groups g;
    gr_sim_groups_init(&g);
    const char *js = "{\"jobset.sigs.k8s.io/jobset-name\":\"tj\"}";
    json_t *a = gpus(pod("gpu-node-01", "all_reduce_perf_mpi -b 8 -e 1G", js), 8);
    json_t *b = gpus(pod("gpu-node-02", "all_reduce_perf_mpi -b 8 -e 1G", js), 8); /* slow */
    json_object_set_new(json_object_get(b, "metadata"), "uid", json_string("u-2"));
    json_t *c = pod("gpu-node-02", "all_reduce_perf_mpi -b 8 -e 1G", "{}"); /* no group */
    json_object_set_new(json_object_get(c, "metadata"), "uid", json_string("u-3"));
    char key[600];
    gr_sim_pod_group(a, key, sizeof key);
    assert_string_equal(key, "ns/jobset/tj");
    gr_sim_pod_group(c, key, sizeof key);
    assert_string_equal(key, "");
    assert_int_equal(gr_sim_groups_observe(&g, a), GR_OK);
    assert_int_equal(gr_sim_groups_observe(&g, b), GR_OK);
    assert_int_equal(gr_sim_groups_observe(&g, b), GR_OK); /* idempotent */
    assert_int_equal(gr_sim_groups_observe(&g, c), GR_OK);
    assert_int_equal(g.n, 2);
    gr_sim_plan plan;
    assert_int_equal(gr_sim_pod_plan(&s, "h100", a, &plan, NULL), GR_OK);
    assert_true(plan.busbw_gbps > 400);
    gr_sim_groups_apply(&g, &s, "h100", a, &plan);
    assert_true(plan.busbw_gbps > 41.4 &&
                plan.busbw_gbps < 41.6); /* the healthy rank sees the slow link */
    /* an ungrouped pod on a healthy node keeps its own */
    json_t *d = pod("gpu-node-01", "all_reduce_perf", "{}");
    assert_int_equal(gr_sim_pod_plan(&s, "h100", d, &plan, NULL), GR_OK);
    gr_sim_groups_apply(&g, &s, "h100", d, &plan);
    assert_true(plan.busbw_gbps > 400);
    json_decref(a), json_decref(b), json_decref(c), json_decref(d);
    gr_sim_groups_free(&g);
    gr_sim_spec_free(&s);
}

/* An MPI launcher (no GPU, runLauncherAsNode false) runs no rank: the slow
 * node it happens to land on does not slow its group, and its log reports
 * its group's ranks (the catalog's nccl-all-reduce on a TrainJob). */
static void test_groups_launcher_without_gpus(void **state)
{
    (void)state;
    gr_sim_spec s;
    parse_ok(&s);
    gr_sim_groups g;
    gr_sim_groups_init(&g);
    const char *js = "{\"jobset.sigs.k8s.io/jobset-name\":\"tj\"}";
    const char *cmd = "mpirun all_reduce_perf -b 8 -e 1G";
    json_t *r1 = gpus(pod("gpu-node-01", "/usr/sbin/sshd -De", js), 8);
    json_t *r2 = gpus(pod("gpu-node-05", "/usr/sbin/sshd -De", js), 8);
    json_object_set_new(json_object_get(r2, "metadata"), "uid", json_string("u-2"));
    json_t *launcher = pod("gpu-node-02", cmd, js); /* lands on the slow node */
    json_object_set_new(json_object_get(launcher, "metadata"), "uid", json_string("u-3"));
    assert_int_equal(gr_sim_pod_gpus(r1), 8);
    assert_int_equal(gr_sim_pod_gpus(launcher), 0);
    assert_int_equal(gr_sim_groups_observe(&g, r1), GR_OK);
    assert_int_equal(gr_sim_groups_observe(&g, r2), GR_OK);
    assert_int_equal(gr_sim_groups_observe(&g, launcher), GR_OK);
    assert_int_equal(g.n, 2); /* the launcher is not a rank */
    gr_sim_plan plan;
    assert_int_equal(gr_sim_pod_plan(&s, "h100", launcher, &plan, NULL), GR_OK);
    assert_int_equal(plan.kind, GR_SIM_NCCL);
    gr_sim_groups_apply(&g, &s, "h100", launcher, &plan);
    assert_true(plan.busbw_gbps > 400);

    /* a rank on the slow node does slow the launcher's report */
    json_t *r3 = gpus(pod("gpu-node-02", "/usr/sbin/sshd -De", js), 8);
    json_object_set_new(json_object_get(r3, "metadata"), "uid", json_string("u-4"));
    assert_int_equal(gr_sim_groups_observe(&g, r3), GR_OK);
    assert_int_equal(gr_sim_pod_plan(&s, "h100", launcher, &plan, NULL), GR_OK);
    gr_sim_groups_apply(&g, &s, "h100", launcher, &plan);
    assert_true(plan.busbw_gbps > 41.4 && plan.busbw_gbps < 41.6);
    json_decref(r1), json_decref(r2), json_decref(r3), json_decref(launcher);
    gr_sim_groups_free(&g);
    gr_sim_spec_free(&s);
}

/* gpuready's preflight-dcgm-diag (the catalog's diagnostics/dcgm-level*) is
 * DCGM: it fails on a node whose dcgm fails; the level comes from
 * DCGM_DIAG_LEVEL. */
static void test_plan_preflight_dcgm_diag(void **state)
{
    (void)state;
    gr_sim_spec s;
    parse_ok(&s);
    json_t *p = pod("gpu-node-03", "/usr/local/bin/preflight-dcgm-diag", "{}");
    json_t *c = json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 0);
    json_object_set_new(c, "env",
                        json_pack("[{s:s,s:s}]", "name", "DCGM_DIAG_LEVEL", "value", "2"));
    gr_sim_plan plan;
    assert_int_equal(gr_sim_pod_plan(&s, "h100", p, &plan, NULL), GR_OK);
    assert_int_equal(plan.kind, GR_SIM_DCGM);
    assert_int_equal(plan.exit_code, 226);
    gr_buf log = GR_BUF_INIT(1 << 20);
    assert_int_equal(gr_sim_pod_log(&plan, &s, "h100", p, 0, &log, NULL), GR_OK);
    assert_non_null(strstr(log.data, "| PCIe")); /* level 2 from DCGM_DIAG_LEVEL */
    gr_buf_free(&log);
    json_decref(p);
    gr_sim_spec_free(&s);
}

typedef struct seen {
    int values, errors;
    char names[8][32];
} seen;

static int on_value(void *ctx, json_t *v, const gr_err *e)
{
    seen *s = ctx;
    if (v == NULL) {
        assert_non_null(e);
        s->errors++;
        return 0;
    }
    if (s->values < 8)
        snprintf(s->names[s->values], 32, "%s", json_string_value(json_object_get(v, "n")));
    s->values++;
    return 0;
}

static void test_stream(void **state)
{
    (void)state;
    const char in[] = "{\"n\":\"a\",\"s\":\"}{\\\"\"}\n{\n \"n\": \"b\", \"x\": [1, {\"y\": "
                      "\"]\"}]\n}garbage{\"n\":\"c\"}"
                      "{\"n\":bad}";
    for (size_t split = 0; split < sizeof in - 1; split += 7) {
        gr_sim_stream st;
        gr_sim_stream_init(&st);
        seen s = {0};
        gr_sim_stream_feed(&st, in, split, on_value, &s);
        gr_sim_stream_feed(&st, in + split, sizeof in - 1 - split, on_value, &s);
        gr_sim_stream_free(&st);
        assert_int_equal(s.values, 3);
        assert_int_equal(s.errors, 1);
        assert_string_equal(s.names[0], "a");
        assert_string_equal(s.names[1], "b");
        assert_string_equal(s.names[2], "c");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_parse),
        cmocka_unit_test(test_spec_errors),
        cmocka_unit_test(test_spec_empty),
        cmocka_unit_test(test_nodes_aws_h100),
        cmocka_unit_test(test_nodes_platforms),
        cmocka_unit_test(test_nodes_errors),
        cmocka_unit_test(test_plan_nccl_slow),
        cmocka_unit_test(test_plan_dcgm_fail),
        cmocka_unit_test(test_plan_trainjob_and_skips),
        cmocka_unit_test(test_plan_trainjob_by_node),
        cmocka_unit_test(test_nodes_gpus_fault),
        cmocka_unit_test(test_stream),
        cmocka_unit_test(test_groups_slowest_node),
        cmocka_unit_test(test_groups_launcher_without_gpus),
        cmocka_unit_test(test_plan_preflight_dcgm_diag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
