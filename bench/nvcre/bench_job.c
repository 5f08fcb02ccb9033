/* bench_job — the NVCRE Job controller on the runtime over the in-memory
 * fake API server, beside a no-op reconciler on the same runtime (the
 * ceiling).
 *
 * job:   N Jobs in one namespace; the real controller (gr_nvcre_job_ctl)
 *        adds its finalizer, creates N TrainJobs and reaches WorkloadRunning;
 *        then every TrainJob's status is patched Complete and the run ends
 *        when every Job is Succeeded.
 * noop:  the same N Jobs and N owned TrainJobs seeded, a controller watching
 *        both that only reads the Job from its cache; every TrainJob's status
 *        is patched Complete and the run ends when the queue is quiet.
 *
 * Per mode: reconciles, process CPU seconds per 1,000 reconciles, p50/p99
 * reconcile latency; the process RSS once every Job succeeded. The fake API server runs in this
 * process, so CPU and RSS include it (the same in both modes); the ratio line is the job
 * controller's reconciles per CPU second as a share of the no-op's. The Job mode's CPU leaves out
 * the bench's own polling for the Job phases (job_bench_poll_cpu_excluded, this thread's CPU
 * clock): the no-op mode does not poll, and the poller is not the controller. One
 * "name: value unit" line per figure.
 *
 *   build/dev/bench/nvcre/bench_nvcre_job [N=2000] [WORKERS=10]
 *
 * Measured (issue 15; median of three interleaved runs, nice, load 13-17, 2,000 Jobs, 10 workers):
 * Job controller 0.202 -> 0.191 s CPU per 1,000 reconciles (finalizer in one write, no GET), no-op
 * 0.097-0.104 s: 52 -> 55 % of the no-op ceiling (goal 50 %); 43-47 % when the poll was charged to
 * the controller. Process RSS 227 MB (mostly the fake), the manager's own heap 9.1 MB. Real control
 * plane (bench_job_real.sh, manager process only, one run each): 1.34 -> 1.28 s CPU per 1,000
 * reconciles, RSS 26.0 MB at the end (goal 64 MB); docs/nvcre-job.md § Benchmark.
 */
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gr_kube_fake.h"
#include "gr_kube_helpers.h"
#include "gr_kube_mgr.h"
#include "gr_nvcre_job.h"
#include "gr_nvcre_job_ctl.h"
#include "gr_nvcre_types.h"

static const gr_kube_gvr JOBS = {GR_NVCRE_GROUP, GR_NVCRE_VERSION, GR_NVCRE_PLURAL_JOBS};
static const gr_kube_gvr TRAINJOBS = {GR_NVCRE_TRAINER_GROUP, "v1alpha1", "trainjobs"};
#define NS      "bench"
#define MAX_LAT (4 * 1024 * 1024)

typedef struct lat {
    pthread_mutex_t mu;
    double *v;
    size_t n;
} lat;

static lat g_lat = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

static void observe(void *ctx, double s)
{
    (void)ctx;
    pthread_mutex_lock(&g_lat.mu);
    if (g_lat.n < MAX_LAT)
        g_lat.v[g_lat.n++] = s;
    pthread_mutex_unlock(&g_lat.mu);
}

static int64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds this thread spent in count_phase(): the bench's own polling
 * (a deep-copied LIST of every Job from the fake, 20 times a second), which
 * the no-op mode does not do. It is taken out of the Job mode's CPU. */
static double g_poll_cpu;

/* VmRSS now, in kB (0 when /proc is not there). */
static long rss_kb(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    char line[256];
    long kb = 0;
    while (fp && fgets(line, sizeof line, fp))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    if (fp)
        fclose(fp);
    return kb;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double p)
{
    if (!g_lat.n)
        return 0;
    qsort(g_lat.v, g_lat.n, sizeof *g_lat.v, cmp_d);
    size_t i = (size_t)ceil(p * (double)g_lat.n) - 1;
    return g_lat.v[i < g_lat.n ? i : g_lat.n - 1];
}

static json_t *job_obj(int i)
{
    char name[32];
    snprintf(name, sizeof name, "job-%05d", i);
    return json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:{s:{s:{s:s,s:s}}},s:i}}", "apiVersion",
                     GR_NVCRE_API_VERSION, "kind", "Job", "metadata", "name", name, "namespace", NS,
                     "spec", "workload", "trainJob", "runtimeRef", "kind", "TrainingRuntime",
                     "name", "nccl", "schedulingStallGraceSeconds", 300);
}

/* Count Jobs whose True exclusive condition is `type`. */
static int count_phase(gr_kube_fake *f, const char *type)
{
    double c0 = thread_cpu_s();
    json_t *all = gr_kube_fake_list(f, &JOBS, NS);
    int n = 0;
    size_t i;
    json_t *j;
    json_array_foreach(all, i, j)
    {
        const char *p = gr_nvcre_job_phase(json_object_get(j, "status"));
        const char *r = json_string_value(
            json_object_get(gr_nvcre_job_condition(json_object_get(j, "status"), type), "reason"));
        if (p && strcmp(p, type) == 0 &&
            (strcmp(type, GR_NVCRE_COND_IN_PROGRESS) != 0 ||
             (r && strcmp(r, GR_NVCRE_REASON_WORKLOAD_RUNNING) == 0)))
            n++;
    }
    json_decref(all);
    g_poll_cpu += thread_cpu_s() - c0;
    return n;
}

static int complete_all(gr_kube_client *c, int n)
{
    json_t *patch = json_pack("{s:{s:[{s:s,s:s,s:s,s:s,s:s}]}}", "status", "conditions", "type",
                              "Complete", "status", "True", "reason", "JobsCompleted", "message",
                              "", "lastTransitionTime", "2026-01-01T00:00:00Z");
    gr_kube_opts o = {.subresource = "status"};
    for (int i = 0; i < n; i++) {
        char name[48];
        snprintf(name, sizeof name, "job-%05d-workload", i);
        gr_err err;
        if (gr_kube_patch(c, &TRAINJOBS, NS, name, GR_KUBE_PATCH_MERGE, patch, &o, NULL, NULL,
                          &err) != GR_OK) {
            fprintf(stderr, "patch %s: %s\n", name, err.msg);
            json_decref(patch);
            return 1;
        }
    }
    json_decref(patch);
    return 0;
}

typedef struct noop {
    gr_kube_cache *jobs;
} noop;

static int noop_reconcile(void *ctx, const char *key, int64_t *after, gr_err *err)
{
    (void)after;
    (void)err;
    noop *nb = ctx;
    int64_t t0 = mono();
    json_t *j = NULL;
    gr_kube_cache_get(nb->jobs, key, &j, NULL);
    json_decref(j);
    observe(NULL, (double)(mono() - t0) / 1e9);
    return GR_OK;
}

static void wait_quiet(gr_kube_ctl *ctl)
{
    uint64_t last = (uint64_t)-1;
    for (;;) {
        uint64_t r = gr_kube_ctl_reconciles(ctl);
        sleep_ms(300);
        if (r == gr_kube_ctl_reconciles(ctl) && r == last)
            return;
        last = r;
    }
}

static int setup(gr_kube_fake **f, gr_kube_mgr **m, int n, int seed_trainjobs, gr_err *err)
{
    gr_kube_client *mc = NULL;
    if (gr_kube_fake_new(f, err) != GR_OK ||
        gr_kube_fake_add_resource(*f, &JOBS, "Job", true, true, err) != GR_OK ||
        gr_kube_fake_add_resource(*f, &TRAINJOBS, "TrainJob", true, true, err) != GR_OK ||
        gr_kube_fake_client(*f, &mc, err) != GR_OK)
        return 1;
    for (int i = 0; i < n; i++) {
        json_t *j = job_obj(i);
        int rc = gr_kube_fake_seed(*f, &JOBS, j, err);
        json_decref(j);
        if (rc != GR_OK)
            return 1;
        if (seed_trainjobs) {
            char name[32];
            snprintf(name, sizeof name, "job-%05d", i);
            json_t *got = gr_kube_fake_get(*f, &JOBS, NS, name);
            json_t *tj = NULL;
            json_t *job = got;
            if (gr_nvcre_job_build_workload(job, NULL, &tj, err) != GR_OK)
                return 1;
            rc = gr_kube_fake_seed(*f, &TRAINJOBS, tj, err);
            json_decref(tj);
            json_decref(got);
            if (rc != GR_OK)
                return 1;
        }
    }
    gr_kube_mgr_opts mo = {.name = "bench"};
    return gr_kube_mgr_new(mc, &mo, m, err) != GR_OK;
}

static void report(const char *mode, uint64_t rec, double cpu, double wall)
{
    printf("%s_reconciles: %llu count\n", mode, (unsigned long long)rec);
    printf("%s_wall: %.3f s\n", mode, wall);
    printf("%s_reconciles_per_second: %.0f reconciles/s\n", mode, (double)rec / wall);
    printf("%s_cpu_per_1000_reconciles: %.3f s\n", mode, cpu / ((double)rec / 1000.0));
    printf("%s_latency_p50: %.3f ms\n", mode, pct(0.50) * 1e3);
    printf("%s_latency_p99: %.3f ms\n", mode, pct(0.99) * 1e3);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    int workers = argc > 2 ? atoi(argv[2]) : 10;
    if (n <= 0 || n > 50000 || workers <= 0 || workers > GR_KUBE_MGR_MAX_WORKERS) {
        fprintf(stderr, "usage: bench_nvcre_job [N 1..50000] [WORKERS 1..%d]\n",
                GR_KUBE_MGR_MAX_WORKERS);
        return 2;
    }
    mallopt(M_ARENA_MAX, 2); /* as gpuready-manager does (src/cmd/gpuready_manager.c) */
    g_lat.v = malloc(MAX_LAT * sizeof *g_lat.v);
    if (!g_lat.v)
        return 1;
    gr_err err;
    printf("jobs: %d count\nworkers: %d count\n", n, workers);

    /* ---- no-op ceiling ---- */
    gr_kube_fake *f = NULL;
    gr_kube_mgr *m = NULL;
    if (setup(&f, &m, n, 1, &err)) {
        fprintf(stderr, "noop setup: %s\n", err.msg);
        return 1;
    }
    noop nb = {0};
    gr_kube_cache *tjc = NULL;
    gr_kube_ctl *ctl = NULL;
    if (gr_kube_mgr_cache(m, &(gr_kube_cache_opts){.gvr = JOBS}, &nb.jobs, &err) != GR_OK ||
        gr_kube_mgr_cache(m, &(gr_kube_cache_opts){.gvr = TRAINJOBS}, &tjc, &err) != GR_OK ||
        gr_kube_mgr_add_controller(
            m,
            &(gr_kube_ctl_opts){
                .name = "noop", .workers = workers, .reconcile = noop_reconcile, .ctx = &nb},
            &ctl, &err) != GR_OK ||
        gr_kube_ctl_watch(ctl, nb.jobs, NULL, NULL, &err) != GR_OK ||
        gr_kube_ctl_watch(ctl, tjc, gr_kube_map_owner, (void *)(uintptr_t) "Job", &err) != GR_OK ||
        gr_kube_mgr_start(m, &err) != GR_OK) {
        fprintf(stderr, "noop: %s\n", err.msg);
        return 1;
    }
    wait_quiet(ctl);
    g_lat.n = 0;
    uint64_t r0 = gr_kube_ctl_reconciles(ctl);
    double c0 = cpu_s();
    int64_t t0 = mono();
    if (complete_all(gr_kube_mgr_client(m), n))
        return 1;
    wait_quiet(ctl);
    uint64_t noop_rec = gr_kube_ctl_reconciles(ctl) - r0;
    double noop_cpu = cpu_s() - c0;
    double noop_wall = (double)(mono() - t0) / 1e9 - 0.6; /* minus the quiet check */
    report("noop", noop_rec, noop_cpu, noop_wall);
    gr_kube_mgr_free(m);
    gr_kube_fake_free(f);

    /* ---- the Job controller ---- */
    f = NULL;
    m = NULL;
    if (setup(&f, &m, n, 0, &err)) {
        fprintf(stderr, "job setup: %s\n", err.msg);
        return 1;
    }
    gr_nvcre_job_ctl *jc = NULL;
    gr_nvcre_job_ctl_opts jo = {.workers = workers, .pod_logs_dir = "", .observe = observe};
    if (gr_nvcre_job_ctl_register(m, &jo, &jc, &err) != GR_OK ||
        gr_kube_mgr_start(m, &err) != GR_OK) {
        fprintf(stderr, "job: %s\n", err.msg);
        return 1;
    }
    g_lat.n = 0;
    g_poll_cpu = 0;
    c0 = cpu_s();
    t0 = mono();
    while (count_phase(f, GR_NVCRE_COND_IN_PROGRESS) < n)
        sleep_ms(50);
    double start_wall = (double)(mono() - t0) / 1e9;
    printf("job_all_running_after: %.3f s\n", start_wall);
    if (complete_all(gr_kube_mgr_client(m), n))
        return 1;
    while (count_phase(f, GR_NVCRE_COND_SUCCEEDED) < n)
        sleep_ms(50);
    double wall = (double)(mono() - t0) / 1e9;
    double cpu = cpu_s() - c0 - g_poll_cpu;
    uint64_t rec = g_lat.n;
    printf("job_bench_poll_cpu_excluded: %.3f s\n", g_poll_cpu);
    report("job", rec, cpu, wall);
    printf("job_rss_at_end: %.1f MB\n", (double)rss_kb() / 1024.0);
    printf("job_throughput_share_of_noop: %.0f %%\n",
           100.0 * ((double)rec / cpu) / ((double)noop_rec / noop_cpu));
    gr_buf mt;
    gr_buf_init(&mt, 16 * 1024 * 1024);
    gr_nvcre_job_ctl_metrics(jc, &mt);
    gr_buf_free(&mt);
    /* The process RSS above includes the in-memory fake API server (its
     * objects and its 10,000-event watch history, two copies per update).
     * The manager's own share: the heap that freeing the manager and the
     * controller gives back (caches, queues, controller state). */
    struct mallinfo2 before = mallinfo2();
    gr_kube_mgr_free(m);
    gr_nvcre_job_ctl_free(jc);
    struct mallinfo2 after = mallinfo2();
    printf("job_manager_heap_at_end: %.1f MB\n",
           (double)(before.uordblks + before.hblkhd - after.uordblks - after.hblkhd) / 1048576.0);
    gr_kube_fake_free(f);
    free(g_lat.v);
    return 0;
}
