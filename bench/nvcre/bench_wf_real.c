/*
 * bench_wf_real — the Workflow controller end to end on a real
 * kube-apiserver (issue 16's benchmark): N generated Nodes (8 GPUs each,
 * P platforms mixed by spec.providerID), one Workflow per platform that
 * targets that platform's nodes (a Workflow over mixed platforms fails with
 * HeterogeneousPlatform by design), K nodes per Job. The Workflow controller
 * runs in this process on the controller runtime, as in gpuready-manager
 * (client QPS 20 / burst 30, one worker), watching only the bench
 * namespace; its caches have synced before the clock starts. The Workflow
 * controller keeps no Node cache (its first pass lists the target's Nodes
 * from the API server); BENCH_NODE_CACHE=1 adds one, as gpuready-manager's
 * Job controller has, to show what decoding Node updates costs (the
 * kube-controller-manager updates every new Node about a minute after its
 * creation, i.e. during the run).
 *
 * Measured from the creation of the Workflows until every group of every
 * Workflow is Running (all Jobs and their job-scoped TrainingRuntimes
 * created, statuses written; the bench looks every 100 ms in the
 * controller's Workflow cache):
 *   wf_real_cpu_to_all_jobs   CPU time of the process (getrusage) minus the
 *                             bench's own main thread (its creates and
 *                             polls): the controller, its informers and
 *                             client
 *   wf_real_wall_to_all_jobs  wall time (bounded by the client's QPS limit)
 *   wf_real_reconcile_p99_*   p99 / max of the per-reconcile wall and
 *                             worker-thread CPU time (every reconcile of the
 *                             run, first passes included)
 *   wf_real_reconcile_cpu_total  the reconciles' share of the CPU time (the
 *                             rest: informers decoding watch events, client)
 *   wf_real_idle_cpu_before   the process's CPU per second just before the
 *                             clock started (the bench waits, up to 60 s,
 *                             until the process is quiet: < 0.02 s/s)
 * Prints one `name: value unit` line per figure.
 *
 *   eval "$(scripts/cluster env DIR)"     # KUBECONFIG of a running cluster
 *   kubectl apply --server-side -f deploy/crds/nvcre.nvidia.com_workflows.yaml \
 *       -f deploy/crds/nvcre.nvidia.com_jobs.yaml -f test/fixtures/crds/kubeflow-trainer.yaml
 *   build/dev/bench/nvcre/bench_wf_real [NODES=1000] [PLATFORMS=4] [NODES_PER_JOB=2]
 *
 * The bench deletes what it created (namespace, Nodes) when it ends.
 *
 * Measured (docs/nvcre-workflow.md § Tests and benchmark; 1000 4 2, the
 * shared 2-core machine at load 16-22, median of three): controller CPU
 * from create to all Jobs 0.78 s (1.41 s before this bench's last change
 * set), per-reconcile p99 CPU 144 ms, wall 76 s (QPS 20 bound).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "gr_kube_config.h"
#include "gr_kube_mgr.h"
#include "gr_kube_rest.h"
#include "gr_nvcre_wf_ctl.h"

#define MAX_SAMPLES 100000

static const gr_kube_gvr GVR_NS = {"", "v1", "namespaces"};
static const gr_kube_gvr GVR_WF = {"nvcre.nvidia.com", "v1alpha1", "workflows"};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t g_wall[MAX_SAMPLES], g_cpu[MAX_SAMPLES];
static size_t g_n;

static void observe(void *ctx, int64_t wall_ns, int64_t cpu_ns)
{
    (void)ctx;
    pthread_mutex_lock(&g_mu);
    if (g_n < MAX_SAMPLES) {
        g_wall[g_n] = wall_ns;
        g_cpu[g_n] = cpu_ns;
        g_n++;
    }
    pthread_mutex_unlock(&g_mu);
}

static double ts(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double proc_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double pct(int64_t *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), cmp_i64);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return (double)v[i] / 1e6;
}

static const char *PLATFORMS[4][2] = {
    {"aws", "aws:///us-east-1a/"},
    {"gcp", "gce://proj/us-central1-a/"},
    {"azure", "azure:///subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/vm/"},
    {"oci", "ocid1.instance.oc1.iad."}};

static int die(const char *what, const gr_err *err)
{
    fprintf(stderr, "bench_wf_real: %s: %s\n", what, err ? err->msg : "");
    return 1;
}

static json_t *workflow(const char *plat, int npj)
{
    return json_pack(
        "{s:s,s:s,s:{s:s},s:{s:{s:{s:{s:s}},s:{s:{s:{s:{s:s,s:s},s:{s:s,s:i,s:{s:{s:s}}}}}}},"
        "s:{s:{s:{s:s}},s:i},s:[{s:s,s:s,s:{s:s},s:{s:{s:{s:[{s:s,s:{s:{s:{s:{s:[{s:s,s:s}]}}}}}]}}"
        "}}]}}",
        "apiVersion", "nvcre.nvidia.com/v1alpha1", "kind", "Workflow", "metadata", "name", plat,
        "spec", "jobTemplate", "metadata", "labels", "bench", "wf", "spec", "workload", "trainJob",
        "runtimeRef", "kind", "TrainingRuntime", "name", "nccl-runtime", "trainer", "image",
        "nccl:1", "numNodes", npj, "resourcesPerNode", "limits", "nvidia.com/gpu", "8",
        "orchestration", "target", "nodeSelector", "bench.gpuready/platform", plat, "iterations", 1,
        "dependencies", "apiVersion", "trainer.kubeflow.org/v1alpha1", "kind", "TrainingRuntime",
        "metadata", "name", "nccl-runtime", "spec", "template", "spec", "replicatedJobs", "name",
        "node", "template", "spec", "template", "spec", "containers", "name", "node", "image",
        "nccl:1");
}

int main(int argc, char **argv)
{
    int nnodes = argc > 1 ? atoi(argv[1]) : 1000;
    int nplat = argc > 2 ? atoi(argv[2]) : 4;
    int npj = argc > 3 ? atoi(argv[3]) : 2;
    if (nnodes < 1 || nnodes > 20000 || nplat < 1 || nplat > 4 || npj < 1 || nnodes / nplat < npj) {
        fprintf(stderr, "usage: bench_wf_real [NODES 1..20000] [PLATFORMS 1..4] "
                        "[NODES_PER_JOB <= NODES/PLATFORMS]\n");
        return 2;
    }
    if (!getenv("KUBECONFIG")) {
        fprintf(stderr, "bench_wf_real: needs a cluster: eval \"$(scripts/cluster env DIR)\" "
                        "(KUBECONFIG is not set)\n");
        return 2;
    }
    gr_err err = {0};
    gr_kube_config cfg;
    if (gr_kube_config_load(NULL, NULL, &cfg, &err) != GR_OK)
        return die("kubeconfig", &err);
    gr_kube_config cfg2;
    if (gr_kube_config_load(NULL, NULL, &cfg2, &err) != GR_OK)
        return die("kubeconfig", &err);
    cfg.qps = 20; /* gpuready-manager's defaults */
    cfg.burst = 30;
    cfg2.qps = 500; /* the bench's own client: setup and polls */
    cfg2.burst = 1000;
    gr_kube_client *bc = NULL, *mc = NULL;
    if (gr_kube_client_new(&cfg2, &bc, &err) != GR_OK || gr_kube_client_new(&cfg, &mc, &err))
        return die("client", &err);
    gr_kube_config_free(&cfg);
    gr_kube_config_free(&cfg2);
    char ns[64], prefix[64];
    snprintf(ns, sizeof(ns), "bench-wf-%d", (int)getpid());
    snprintf(prefix, sizeof(prefix), "bench-wf-%d-node", (int)getpid());
    gr_kube_status st;
    json_t *nso = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                            "metadata", "name", ns);
    if (gr_kube_create(bc, &GVR_NS, NULL, nso, NULL, NULL, &st, &err) != GR_OK)
        return die("namespace", &err);
    json_decref(nso);
    /* Nodes: 8 GPUs each, platforms round robin. */
    double s0 = ts(CLOCK_MONOTONIC);
    int rc = 0;
    for (int i = 0; i < nnodes && !rc; i++) {
        char name[96], pid[256];
        snprintf(name, sizeof(name), "%s-%05d", prefix, i);
        const char *const *p = PLATFORMS[i % nplat];
        snprintf(pid, sizeof(pid), "%s%s", p[1], name);
        json_t *n =
            json_pack("{s:s,s:s,s:{s:s,s:{s:s,s:s,s:s,s:s,s:s}},s:{s:s}}", "apiVersion", "v1",
                      "kind", "Node", "metadata", "name", name, "labels", "nvidia.com/gpu.present",
                      "true", "nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3",
                      "kubernetes.io/hostname", name, "bench.gpuready/platform", p[0],
                      "bench.gpuready/run", prefix, "spec", "providerID", pid);
        if (gr_kube_create(bc, &GR_KUBE_NODES, NULL, n, NULL, NULL, &st, &err) != GR_OK)
            rc = die("node", &err);
        json_decref(n);
        json_t *sp = json_pack("{s:{s:{s:s},s:{s:s}}}", "status", "allocatable", "nvidia.com/gpu",
                               "8", "capacity", "nvidia.com/gpu", "8");
        gr_kube_opts so = {.subresource = "status"};
        if (!rc && gr_kube_patch(bc, &GR_KUBE_NODES, NULL, name, GR_KUBE_PATCH_MERGE, sp, &so, NULL,
                                 &st, &err) != GR_OK)
            rc = die("node status", &err);
        json_decref(sp);
    }
    fprintf(stderr, "bench_wf_real: %d nodes created in %.1f s\n", nnodes,
            ts(CLOCK_MONOTONIC) - s0);
    /* The controller, in this process. */
    gr_kube_mgr *m = NULL;
    gr_kube_mgr_opts mo = {.name = "bench-wf"};
    gr_nvcre_wf_ctl *wc = NULL;
    if (!rc && gr_kube_mgr_new(mc, &mo, &m, &err) != GR_OK)
        rc = die("manager", &err);
    gr_nvcre_wf_ctl_opts wo = {.workers = 1, .ns = ns, .observe = observe};
    if (!rc && gr_nvcre_wf_ctl_register(m, &wo, &wc, &err) != GR_OK)
        rc = die("workflow controller", &err);
    /* The controller's own caches (the same options share them). */
    gr_kube_cache *wfs = NULL, *nodes = NULL;
    if (!rc &&
        gr_kube_mgr_cache(m, &(gr_kube_cache_opts){.gvr = GVR_WF, .ns = ns, .optional = true}, &wfs,
                          &err) != GR_OK)
        rc = die("workflow cache", &err);
    const char *nc = getenv("BENCH_NODE_CACHE");
    if (!rc && nc && *nc && strcmp(nc, "0") &&
        gr_kube_mgr_cache(m, &(gr_kube_cache_opts){.gvr = GR_KUBE_NODES}, &nodes, &err) != GR_OK)
        rc = die("node cache", &err);
    if (!rc && gr_kube_mgr_start(m, &err) != GR_OK)
        rc = die("start", &err);
    /* The clock starts once the caches hold what the server has. */
    for (int i = 0; !rc && (!gr_kube_cache_synced(wfs) || (nodes && !gr_kube_cache_synced(nodes)));
         i++) {
        if (i > 6000)
            rc = die("the caches never synced", NULL);
        usleep(10000);
    }
    /* ... and the process is quiet (with a Node cache: kube-controller-
     * manager updates new Nodes (taints) for a while). */
    double quiet = 0;
    for (int i = 0; !rc && i < 60; i++) {
        double q0 = proc_cpu();
        sleep(1);
        quiet = proc_cpu() - q0;
        if (quiet < 0.02)
            break;
    }
    int expected = 0;
    for (int p = 0; p < nplat; p++) {
        int mine = nnodes / nplat + (p < nnodes % nplat);
        expected += mine / npj + (mine % npj ? 1 : 0);
    }
    double c0 = proc_cpu(), m0 = ts(CLOCK_THREAD_CPUTIME_ID), w0 = ts(CLOCK_MONOTONIC);
    pthread_mutex_lock(&g_mu);
    g_n = 0;
    pthread_mutex_unlock(&g_mu);
    for (int p = 0; p < nplat && !rc; p++) {
        json_t *wf = workflow(PLATFORMS[p][0], npj);
        if (gr_kube_create(bc, &GVR_WF, ns, wf, NULL, NULL, &st, &err) != GR_OK)
            rc = die("workflow", &err);
        json_decref(wf);
    }
    int running = 0, failed = 0;
    while (!rc && running < expected && !failed) {
        usleep(100000);
        running = 0;
        for (int p = 0; p < nplat; p++) {
            /* From the controller's Workflow cache (fed by the watch it
             * has anyway), not a GET: polling 60 kB Workflows from the API
             * server ten times a second cost more CPU than the controller
             * and competed with it for the machine. */
            json_t *wf = NULL;
            char key[160];
            snprintf(key, sizeof(key), "%s/%s", ns, PLATFORMS[p][0]);
            if (gr_kube_cache_get(wfs, key, &wf, NULL) != GR_OK)
                continue;
            json_t *orch = json_object_get(json_object_get(wf, "status"), "orchestration");
            size_t i;
            json_t *g;
            json_array_foreach(json_object_get(orch, "groups"), i, g)
            {
                const char *ph = json_string_value(json_object_get(g, "phase"));
                running += ph && !strcmp(ph, "Running");
            }
            json_t *conds = json_object_get(json_object_get(wf, "status"), "conditions");
            json_array_foreach(conds, i, g)
            {
                const char *t = json_string_value(json_object_get(g, "type"));
                const char *s = json_string_value(json_object_get(g, "status"));
                if (t && s && !strcmp(t, "Failed") && !strcmp(s, "True")) {
                    fprintf(stderr, "bench_wf_real: Workflow %s failed: %s\n", PLATFORMS[p][0],
                            json_string_value(json_object_get(g, "message")));
                    failed = 1;
                }
            }
            json_decref(wf);
        }
        if (ts(CLOCK_MONOTONIC) - w0 > 1800) {
            fprintf(stderr, "bench_wf_real: gave up after 30 min (%d of %d groups running)\n",
                    running, expected);
            failed = 1;
        }
    }
    double w1 = ts(CLOCK_MONOTONIC), m1 = ts(CLOCK_THREAD_CPUTIME_ID), c1 = proc_cpu();
    pthread_mutex_lock(&g_mu);
    size_t n = g_n;
    static int64_t wall[MAX_SAMPLES], cpu[MAX_SAMPLES];
    memcpy(wall, g_wall, n * sizeof(*wall));
    memcpy(cpu, g_cpu, n * sizeof(*cpu));
    pthread_mutex_unlock(&g_mu);
    if (!rc && !failed) {
        printf("wf_real_nodes: %d count\n", nnodes);
        printf("wf_real_workflows: %d count\n", nplat);
        printf("wf_real_jobs: %d count\n", expected);
        printf("wf_real_cpu_to_all_jobs: %.3f s\n", (c1 - c0) - (m1 - m0));
        printf("wf_real_wall_to_all_jobs: %.2f s\n", w1 - w0);
        printf("wf_real_idle_cpu_before: %.3f s/s\n", quiet);
        printf("wf_real_node_cache: %d bool\n", nodes != NULL);
        printf("wf_real_reconciles: %zu count\n", n);
        int64_t tot = 0;
        for (size_t i = 0; i < n; i++) {
            tot += cpu[i];
            if (getenv("BENCH_VERBOSE"))
                fprintf(stderr, "reconcile %zu: wall %.1f ms cpu %.1f ms\n", i,
                        (double)wall[i] / 1e6, (double)cpu[i] / 1e6);
        }
        printf("wf_real_reconcile_cpu_total: %.3f s\n", (double)tot / 1e9);
        double cmax = pct(cpu, n, 1.0), wmax = pct(wall, n, 1.0);
        printf("wf_real_reconcile_p99_cpu: %.2f ms\n", pct(cpu, n, 0.99));
        printf("wf_real_reconcile_max_cpu: %.2f ms\n", cmax);
        printf("wf_real_reconcile_p99_wall: %.2f ms\n", pct(wall, n, 0.99));
        printf("wf_real_reconcile_max_wall: %.2f ms\n", wmax);
        printf("wf_real_reconcile_p50_wall: %.2f ms\n", pct(wall, n, 0.50));
    }
    /* Clean up: stop the controller, let the namespace go (the Workflows'
     * finalizers are dropped; owner references take the rest), delete the
     * Nodes. */
    gr_kube_mgr_free(m);
    for (int p = 0; p < nplat; p++) {
        json_t *fp = json_pack("{s:{s:n}}", "metadata", "finalizers");
        gr_kube_patch(bc, &GVR_WF, ns, PLATFORMS[p][0], GR_KUBE_PATCH_MERGE, fp, NULL, NULL, &st,
                      NULL);
        json_decref(fp);
    }
    gr_kube_delete(bc, &GVR_NS, NULL, ns, NULL, NULL, &st, NULL);
    for (int i = 0; i < nnodes; i++) {
        char name[96];
        snprintf(name, sizeof(name), "%s-%05d", prefix, i);
        gr_kube_delete(bc, &GR_KUBE_NODES, NULL, name, NULL, NULL, &st, NULL);
    }
    gr_kube_client_free(bc);
    return rc || failed ? 1 : 0;
}
