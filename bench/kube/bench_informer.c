/* bench_informer — the gr_kube side of the informer benchmark against a live
 * kube-apiserver (bench/kube/informer-vs-client-go runs it alternately with
 * client-go's informer-bench). Prints `name: value unit` lines.
 *
 *   bench_kube_informer populate KUBECONFIG NS N   create NS and N Pending pods
 *   bench_kube_informer update   KUBECONFIG NS N TAG  change a label on each pod
 *   bench_kube_informer observe  KUBECONFIG NS N [list]
 *       a pods informer on NS (full objects, no transform, rate limits off;
 *       "list": paginated LIST instead of the streaming list): prints sync
 *       wall/CPU and peak RSS, then "ready", then waits for N updates and
 *       prints the CPU they took.
 *
 * CPU is getrusage(RUSAGE_SELF) user+system; peak RSS is ru_maxrss.
 * GR_BENCH_HTTP2=1 negotiates HTTP/2 (cfg.http2), as client-go does. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "gr_kube_informer.h"
#include "gr_kube_rest.h"

/* Writers for populate/update, each with its own client (one connection
 * each): a shared client serializes them. */
#define THREADS 24

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
}

static gr_kube_client *client(const char *kubeconfig)
{
    gr_kube_config cfg;
    gr_err err;
    if (gr_kube_config_load_file(kubeconfig, NULL, &cfg, &err) != GR_OK) {
        fprintf(stderr, "bench_kube_informer: %s\n", err.msg);
        exit(2);
    }
    cfg.qps = -1; /* rate limits off, as on the client-go side */
    const char *h2 = getenv("GR_BENCH_HTTP2");
    cfg.http2 = h2 && strcmp(h2, "1") == 0; /* client-go negotiates HTTP/2 */
    gr_kube_client *c = NULL;
    if (gr_kube_client_new(&cfg, &c, &err) != GR_OK) {
        fprintf(stderr, "bench_kube_informer: %s\n", err.msg);
        exit(2);
    }
    gr_kube_config_free(&cfg);
    return c;
}

/* ---- populate / update ------------------------------------------------- */

typedef struct work {
    const char *kubeconfig;
    const char *ns;
    int n;
    const char *tag; /* NULL: create */
    atomic_int next;
    atomic_int failed;
} work;

/* A Pod as a training job's worker is written (the server adds defaults). */
static json_t *pod(int i)
{
    char name[64];
    snprintf(name, sizeof name, "bench-%06d", i);
    return json_pack(
        "{s:s,s:s,s:{s:s,s:{s:s,s:s,s:s},s:{s:s}},s:{s:[{s:s,s:s,s:[s,s,s,s],s:[{s:s,s:s},{s:s,"
        "s:s},{s:s,s:s}],s:{s:{s:s,s:s,s:s},s:{s:s,s:s,s:s}},s:[{s:s,s:s},{s:s,s:s}]}],s:{s:s},s:["
        "{s:s,s:s,s:s,s:s}],s:[{s:s,s:{}},{s:s,s:{s:s}}]}}",
        "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "labels", "app", "train-llm",
        "team", "research", "bench-round", "0", "annotations", "example.com/job", "train-llm-0001",
        "spec", "containers", "name", "trainer", "image", "nvcr.io/nvidia/pytorch:25.01-py3",
        "command", "torchrun", "--nnodes=128", "--nproc-per-node=8", "train.py", "env", "name",
        "NCCL_DEBUG", "value", "WARN", "name", "NCCL_IB_HCA", "value", "mlx5", "name",
        "MASTER_PORT", "value", "29500", "resources", "limits", "cpu", "96", "memory", "1600Gi",
        "nvidia.com/gpu", "8", "requests", "cpu", "96", "memory", "1600Gi", "nvidia.com/gpu", "8",
        "volumeMounts", "name", "shm", "mountPath", "/dev/shm", "name", "data", "mountPath",
        "/data", "nodeSelector", "nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3", "tolerations",
        "key", "nvidia.com/gpu", "operator", "Exists", "effect", "NoSchedule", "value", "",
        "volumes", "name", "shm", "emptyDir", "name", "data", "hostPath", "path", "/data");
}

static gr_kube_client *client(const char *kubeconfig);

static void *worker(void *arg)
{
    work *w = arg;
    gr_kube_client *c = client(w->kubeconfig);
    for (int i; (i = atomic_fetch_add(&w->next, 1)) < w->n;) {
        gr_kube_status st;
        gr_err err;
        int rc;
        if (!w->tag) {
            json_t *p = pod(i);
            rc = gr_kube_create(c, &GR_KUBE_PODS, w->ns, p, NULL, NULL, &st, &err);
            json_decref(p);
            if (rc == GR_ECONFLICT) /* already there from an earlier run */
                rc = GR_OK;
        } else {
            char name[64];
            snprintf(name, sizeof name, "bench-%06d", i);
            json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "bench-round", w->tag);
            rc = gr_kube_patch(c, &GR_KUBE_PODS, w->ns, name, GR_KUBE_PATCH_MERGE, patch, NULL,
                               NULL, &st, &err);
            json_decref(patch);
        }
        if (rc != GR_OK && atomic_fetch_add(&w->failed, 1) < 5)
            fprintf(stderr, "bench_kube_informer: %s\n", err.msg);
    }
    gr_kube_client_free(c);
    return NULL;
}

static int run_workers(work *w)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, w);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    return atomic_load(&w->failed) ? 1 : 0;
}

static int populate(gr_kube_client *c, const char *kubeconfig, const char *ns, int n)
{
    json_t *nso = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                            "metadata", "name", ns);
    gr_kube_status st;
    gr_err err;
    int rc = gr_kube_create(c, &GR_KUBE_NAMESPACES, NULL, nso, NULL, NULL, &st, &err);
    json_decref(nso);
    if (rc != GR_OK && rc != GR_ECONFLICT) {
        fprintf(stderr, "bench_kube_informer: %s\n", err.msg);
        return 1;
    }
    /* pods need the namespace's default ServiceAccount (the controller
     * manager makes it) */
    const gr_kube_gvr sa = {"", "v1", "serviceaccounts"};
    for (int i = 0; i < 600; i++) {
        json_t *o = NULL;
        if (gr_kube_get(c, &sa, ns, "default", NULL, &o, &st, &err) == GR_OK) {
            json_decref(o);
            break;
        }
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
    work w = {.kubeconfig = kubeconfig, .ns = ns, .n = n};
    double t0 = mono_s();
    rc = run_workers(&w);
    printf("populate_wall: %.1f s\n", mono_s() - t0);
    return rc;
}

/* ---- observe ----------------------------------------------------------- */

typedef struct counts {
    atomic_long adds, updates;
    long want;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} counts;

static void on_add(void *ctx, const json_t *o)
{
    (void)o;
    atomic_fetch_add(&((counts *)ctx)->adds, 1);
}

static void on_update(void *ctx, const json_t *a, const json_t *b)
{
    counts *k = ctx;
    const char *ra = gr_kube_obj_meta(a, "resourceVersion");
    const char *rb = gr_kube_obj_meta(b, "resourceVersion");
    if (ra && rb && strcmp(ra, rb) == 0)
        return; /* a resync */
    if (atomic_fetch_add(&k->updates, 1) + 1 == k->want) {
        pthread_mutex_lock(&k->mu);
        pthread_cond_broadcast(&k->cv);
        pthread_mutex_unlock(&k->mu);
    }
}

static int observe(gr_kube_client *c, const char *ns, int n, bool list)
{
    counts k = {.want = n};
    pthread_mutex_init(&k.mu, NULL);
    pthread_cond_init(&k.cv, NULL);
    double cpu0 = cpu_s(), t0 = mono_s();
    gr_kube_informer_opts o = {0};
    o.gvr = GR_KUBE_PODS;
    o.ns = ns;
    o.sync_mode = list ? GR_KUBE_SYNC_LIST : GR_KUBE_SYNC_AUTO;
    o.handlers = (gr_kube_handlers){on_add, on_update, NULL, &k};
    gr_kube_informer *inf;
    gr_err err;
    if (gr_kube_informer_new(c, &o, &inf, &err) != GR_OK ||
        gr_kube_informer_start(inf, &err) != GR_OK ||
        gr_kube_informer_wait_synced(inf, 600LL * 1000000000, &err) != GR_OK) {
        fprintf(stderr, "bench_kube_informer: %s\n", err.msg);
        return 1;
    }
    double sync_wall = mono_s() - t0, sync_cpu = cpu_s() - cpu0, rss = peak_rss_mb();
    gr_kube_informer_stats s;
    gr_kube_informer_stats_get(inf, &s);
    printf("client: gr_kube %s\n", s.watch_lists ? "streaming" : "list");
    printf("cached: %zu pods\n", gr_kube_store_len(gr_kube_informer_store(inf)));
    printf("sync_wall: %.3f s\n", sync_wall);
    printf("sync_cpu: %.3f s\n", sync_cpu);
    printf("sync_peak_rss: %.1f MB\n", rss);
    printf("store_payload_per_pod: %.0f bytes\n",
           (double)gr_kube_store_payload_bytes(gr_kube_informer_store(inf)) / (double)(n ? n : 1));
    printf("ready\n");
    fflush(stdout);
    double cpu1 = cpu_s();
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 600;
    pthread_mutex_lock(&k.mu);
    int r = 0;
    while (atomic_load(&k.updates) < k.want && r == 0)
        r = pthread_cond_timedwait(&k.cv, &k.mu, &dl);
    pthread_mutex_unlock(&k.mu);
    if (atomic_load(&k.updates) < k.want) {
        fprintf(stderr, "bench_kube_informer: saw %ld of %ld updates\n", atomic_load(&k.updates),
                k.want);
        return 1;
    }
    printf("update_cpu: %.3f s\n", cpu_s() - cpu1);
    printf("peak_rss: %.1f MB\n", peak_rss_mb());
    fflush(stdout);
    gr_kube_informer_free(inf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_kube_informer populate|update|observe KUBECONFIG NS N "
                        "[TAG | list]\n");
        return 2;
    }
    const char *cmd = argv[1], *ns = argv[3];
    int n = atoi(argv[4]);
    if (n <= 0) {
        fprintf(stderr, "bench_kube_informer: N must be a positive number of pods\n");
        return 2;
    }
    gr_kube_client *c = client(argv[2]);
    int rc = 2;
    if (strcmp(cmd, "populate") == 0) {
        rc = populate(c, argv[2], ns, n);
    } else if (strcmp(cmd, "update") == 0 && argc > 5) {
        work w = {.kubeconfig = argv[2], .ns = ns, .n = n, .tag = argv[5]};
        double t0 = mono_s();
        rc = run_workers(&w);
        fprintf(stderr, "update_wall: %.1f s\n", mono_s() - t0);
    } else if (strcmp(cmd, "observe") == 0) {
        rc = observe(c, ns, n, argc > 5 && strcmp(argv[5], "list") == 0);
    } else {
        fprintf(stderr, "bench_kube_informer: unknown command %s\n", cmd);
    }
    gr_kube_client_free(c);
    return rc;
}
