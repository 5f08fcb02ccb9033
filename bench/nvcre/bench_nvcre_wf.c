/*
 * bench_nvcre_wf — Workflow controller figures (issue 16). Prints
 * `name: value unit` lines:
 *   smp_trainjob_patches_per_s   strategic merge patches per second of a
 *                                ~10 kB TrainJob jobTemplate (goal ≥ 20,000)
 *   smp_trainjob_template_bytes  size of that template
 *   plan_1000_nodes_cpu_ms       CPU time of gr_nvcre_wf_plan() for 1,000
 *                                generated nodes (8 GPUs, one platform),
 *                                2 nodes per Job → 500 Jobs rendered
 *   plan_4x250_mixed_cpu_ms      4 Workflows, each targeting its platform's
 *                                250 of 1,000 mixed nodes (aws/gcp/azure/oci)
 *   plan_p99_us                  p99 of the 4 per-platform plans over 25 runs
 * CPU time (CLOCK_PROCESS_CPUTIME_ID) of this process; one thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "gr_nvcre_wf.h"
#include "gr_smp.h"

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static json_t *template_10k(void)
{
    json_t *env = json_array();
    for (int i = 0; i < 120; i++) {
        char k[32], v[64];
        snprintf(k, sizeof(k), "NCCL_SETTING_%02d", i);
        snprintf(v, sizeof(v), "value-%02d-abcdefghijklmnopqrstuvwxyz", i);
        json_array_append_new(env, json_pack("{s:s,s:s}", "name", k, "value", v));
    }
    json_t *args = json_array();
    for (int i = 0; i < 40; i++) {
        char a[32];
        snprintf(a, sizeof(a), "--flag-%02d=%d", i, i * 7);
        json_array_append_new(args, json_string(a));
    }
    json_t *t = json_loads(
        "{\"metadata\":{\"labels\":{\"team\":\"infra\",\"app\":\"nccl\"},"
        "\"finalizers\":[\"a.io/x\"]},\"spec\":{\"workloadMetadata\":{\"labels\":"
        "{\"kai.scheduler/queue\":\"team-a\"}},\"nodeHealthMonitor\":{\"cel\":{\"expression\":"
        "\"node.spec.unschedulable == true\"}},\"workload\":{\"trainJob\":{\"runtimeRef\":"
        "{\"kind\":\"TrainingRuntime\",\"name\":\"nccl-runtime\"},\"trainer\":{\"image\":"
        "\"nvcr.io/nvidia/pytorch:25.01-py3\",\"numNodes\":2,\"command\":[\"all_reduce_perf_mpi\"],"
        "\"resourcesPerNode\":{\"limits\":{\"nvidia.com/gpu\":\"8\",\"cpu\":\"32\"}}},"
        "\"runtimePatches\":[{\"manager\":\"nvcre.nvidia.com/catalog\",\"trainingRuntimeSpec\":"
        "{\"template\":{\"spec\":{\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"spec\":"
        "{\"template\":{\"spec\":{\"volumes\":[{\"name\":\"dshm\",\"emptyDir\":{}}]}}}}}]}}}}]}}}}",
        0, NULL);
    json_t *trainer = json_object_get(
        json_object_get(json_object_get(json_object_get(t, "spec"), "workload"), "trainJob"),
        "trainer");
    json_object_set_new(trainer, "args", args);
    json_object_set_new(trainer, "env", env);
    return t;
}

static json_t *gen_nodes(int n, int mixed)
{
    static const char *pids[] = {"aws:///z/i-", "gce://p/z/", "azure:///s/", "ocid1.instance."};
    static const char *pools[] = {"aws", "gcp", "azure", "oci"};
    json_t *nodes = json_array();
    for (int i = 0; i < n; i++) {
        char name[32], pid[64];
        int p = mixed ? i % 4 : 0;
        snprintf(name, sizeof(name), "gen-abcdef-node-%04d", i);
        snprintf(pid, sizeof(pid), "%s%d", pids[p], i);
        char rack[16];
        snprintf(rack, sizeof(rack), "rack-%02d", i / 18);
        json_array_append_new(
            nodes, json_pack("{s:{s:s,s:{s:s,s:s,s:s,s:s,s:s}},s:{s:s},s:{s:{s:s}}}", "metadata",
                             "name", name, "labels", "kubernetes.io/hostname", name,
                             "nvidia.com/gpu.present", "true", "nvidia.com/gpu.product",
                             "NVIDIA-H100-80GB-HBM3", "pool", pools[p], "rack", rack, "spec",
                             "providerID", pid, "status", "allocatable", "nvidia.com/gpu", "8"));
    }
    return nodes;
}

static json_t *workflow(const char *pool)
{
    json_t *spec = json_loads(
        "{\"jobTemplate\":{\"spec\":{\"workload\":{\"trainJob\":{\"runtimeRef\":{\"kind\":"
        "\"TrainingRuntime\",\"name\":\"rt\"},\"trainer\":{\"numNodes\":2,\"image\":\"img\"}}}}},"
        "\"dependencies\":[{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
        "\"TrainingRuntime\",\"metadata\":{\"name\":\"rt\"},\"spec\":{\"template\":{\"spec\":"
        "{\"replicatedJobs\":[{\"name\":\"node\"}]}}}}],\"orchestration\":{\"iterations\":1}}",
        0, NULL);
    if (pool)
        json_object_set_new(json_object_get(spec, "orchestration"), "target",
                            json_pack("{s:{s:s}}", "nodeSelector", "pool", pool));
    return json_pack("{s:{s:s,s:s,s:s},s:o}", "metadata", "name", "bench", "namespace", "ns", "uid",
                     "00000000-1111", "spec", spec);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    json_t *tmpl = template_10k();
    char *s = json_dumps(tmpl, JSON_COMPACT);
    size_t bytes = strlen(s);
    free(s);
    json_t *patch =
        json_pack("{s:{s:{s:s,s:n}},s:{s:{s:{s:{s:s,s:[{s:s,s:s},{s:s,s:s}]}}}}}", "metadata",
                  "labels", "variant", "aws", "app", "spec", "workload", "trainJob", "trainer",
                  "image", "nvcr.io/nvidia/pytorch:25.02-py3", "env", "name", "FI_PROVIDER",
                  "value", "efa", "name", "NCCL_DEBUG", "value", "WARN");
    const gr_smp_schema *schema = gr_smp_schema_builtin();
    int n = 20000;
    double t0 = cpu_s();
    for (int i = 0; i < n; i++) {
        json_t *d = json_incref(tmpl);
        gr_err err;
        if (gr_smp_apply(&d, patch, schema, GR_SMP_ROOT_JOB_TEMPLATE, &err) != GR_OK) {
            fprintf(stderr, "smp: %s\n", err.msg);
            return 1;
        }
        json_decref(d);
    }
    double t1 = cpu_s();
    printf("smp_trainjob_template_bytes: %zu bytes\n", bytes);
    printf("smp_trainjob_patches_per_s: %.0f patches/s\n", n / (t1 - t0));

    json_t *nodes = gen_nodes(1000, 0);
    json_t *wf = workflow(NULL);
    json_t *plan = NULL;
    const char *reason = NULL;
    gr_err err;
    t0 = cpu_s();
    int rc = gr_nvcre_wf_plan(wf, nodes, &plan, &reason, &err);
    t1 = cpu_s();
    if (rc != GR_OK) {
        fprintf(stderr, "plan: %s\n", err.msg);
        return 1;
    }
    printf("plan_1000_nodes_jobs: %zu jobs\n", json_array_size(json_object_get(plan, "jobs")));
    printf("plan_1000_nodes_cpu_ms: %.1f ms\n", (t1 - t0) * 1e3);
    json_decref(plan);
    json_decref(wf);
    json_decref(nodes);

    nodes = gen_nodes(1000, 1);
    static const char *pools[] = {"aws", "gcp", "azure", "oci"};
    double samples[100];
    int ns = 0;
    double total = 0;
    for (int r = 0; r < 25; r++) {
        for (int p = 0; p < 4; p++) {
            wf = workflow(pools[p]);
            t0 = cpu_s();
            rc = gr_nvcre_wf_plan(wf, nodes, &plan, &reason, &err);
            t1 = cpu_s();
            if (rc != GR_OK) {
                fprintf(stderr, "plan %s: %s\n", pools[p], err.msg);
                return 1;
            }
            samples[ns++] = t1 - t0;
            if (r == 0)
                total += t1 - t0;
            json_decref(plan);
            json_decref(wf);
        }
    }
    qsort(samples, (size_t)ns, sizeof(samples[0]), cmp_d);
    printf("plan_4x250_mixed_cpu_ms: %.1f ms\n", total * 1e3);
    printf("plan_p99_us: %.0f us\n", samples[(ns * 99) / 100 - 1] * 1e6);
    json_decref(nodes);
    json_decref(patch);
    json_decref(tmpl);
    return 0;
}
