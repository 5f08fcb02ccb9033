/*
 * bench_gang_rss.c — memory of the gang controllers' Pod cache (issue 20:
 * "RSS of gpuready-preflight serve with 100,000 pods in watched namespaces,
 * per pod; goal ≤ 300 B/pod above the empty process").
 *
 * The API server is the in-memory fake (gr_kube_fake.h) in this process,
 * seeded with P status-less pods (half of them gang members mounting one of
 * 100 gang ConfigMaps, half plain pods); the gang service runs on the
 * controller runtime exactly as in `serve` (trimmed cluster-wide Pod cache,
 * gang ConfigMap cache, PreflightConfig cache). RSS is read after seeding
 * the fake (baseline, fake included) and after the caches synced and the
 * coordinator settled; the difference divided by P is the cache's cost per
 * pod (malloc_trim first, so freed list buffers do not count; the fake's
 * event history is forgotten before both readings: it is the API server's
 * memory, and its ring of copies of gang ConfigMap writes made the figure
 * swing by 100 B/pod between runs).
 *
 *   bench_gang_rss [pods=100000]
 *
 * Prints:
 *   gang_rss_pods: P pods
 *   gang_rss_cache_bytes: B
 *   gang_rss_bytes_per_pod: B/pod
 *   gang_rss_cached_pods: the Pod cache's object count (the gang members:
 *                         pods without the gang volume are not cached)
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gr_gang_ctl.h"
#include "gr_kube_fake.h"
#include "gr_kube_mgr.h"

static long rss(void)
{
    malloc_trim(0);
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb * 1024;
}

static void die(const char *m)
{
    fprintf(stderr, "bench_gang_rss: %s\n", m);
    exit(1);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    if (n < 1 || n > GR_KUBE_FAKE_MAX_OBJECTS - 1000)
        die("pods: 1..99000 (the fake's object cap)");
    gr_err err;
    gr_kube_fake *f = NULL;
    if (gr_kube_fake_new(&f, &err) != GR_OK)
        die(err.msg);
    static const gr_kube_gvr volcano = {"scheduling.volcano.sh", "v1beta1", "podgroups"};
    if (gr_kube_fake_add_resource(f, &volcano, "PodGroup", true, true, &err) != GR_OK)
        die(err.msg);
    for (int i = 0; i < n; i++) {
        char buf[1024];
        if (i % 2 == 0)
            snprintf(buf, sizeof buf,
                     "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-%06d\","
                     "\"namespace\":\"ns-%d\",\"labels\":{\"app\":\"x\",\"pod-template-hash\":"
                     "\"7d9f8c6b5\"},\"annotations\":{\"example.com/a\":\"b\"}},\"spec\":{"
                     "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}",
                     i, i % 50);
        else
            snprintf(buf, sizeof buf,
                     "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-%06d\","
                     "\"namespace\":\"ns-%d\",\"annotations\":{\"scheduling.k8s.io/group-name\":"
                     "\"g%d\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}],"
                     "\"volumes\":[{\"name\":\"nvsentinel-preflight-gang-config\",\"configMap\":{"
                     "\"name\":\"preflight-volcano-ns-%d-g%d\",\"optional\":true}}]}}",
                     i, i % 50, i % 100, i % 50, i % 100);
        json_t *pod = json_loads(buf, 0, NULL);
        if (!pod || gr_kube_fake_seed(f, &GR_KUBE_PODS, pod, &err) != GR_OK)
            die("seed");
        json_decref(pod);
    }
    static const char yaml[] =
        "connectorSocket: \"\"\ngangCoordination: {enabled: true}\ngangDiscovery:\n"
        "  name: volcano\n  annotationKeys: [\"scheduling.k8s.io/group-name\"]\n"
        "  podGroupGVR: {group: scheduling.volcano.sh, version: v1beta1, resource: podgroups}\n"
        "initContainers:\n  - {name: preflight-nccl-allreduce, image: allreduce:v1}\n";
    gr_preflight_config *cfg = NULL;
    if (gr_preflight_config_parse(yaml, sizeof yaml - 1, "bench", NULL, NULL, &cfg, &err) != GR_OK)
        die(err.msg);
    gr_kube_client *kc = NULL;
    if (gr_kube_fake_client(f, &kc, &err) != GR_OK)
        die(err.msg);
    gr_kube_mgr_opts mo = {.name = "bench"};
    gr_kube_mgr *m = NULL;
    if (gr_kube_mgr_new(kc, &mo, &m, &err) != GR_OK)
        die(err.msg);
    gr_gang_service_opts so = {.client = gr_kube_mgr_client(m), .cfg = cfg};
    gr_gang_service *svc = NULL;
    if (gr_gang_service_new(&so, &svc, &err) != GR_OK ||
        gr_gang_service_attach(svc, m, &err) != GR_OK)
        die(err.msg);
    gr_kube_fake_compact(f); /* the seeding's event history: see below */
    long base = rss();
    if (gr_kube_mgr_start(m, &err) != GR_OK)
        die(err.msg);
    char why[256];
    for (int i = 0; i < 6000 && !gr_kube_mgr_ready(m, why, sizeof why); i++) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (!gr_kube_mgr_ready(m, why, sizeof why))
        die(why);
    struct timespec settle = {2, 0}; /* the coordinator's first batches */
    nanosleep(&settle, NULL);
    /* The fake lives in this process: its event history (a copy of every
     * gang ConfigMap write the coordinator made) is the API server's
     * memory, not the webhook's. Forget it before reading RSS. */
    gr_kube_fake_compact(f);
    long after = rss();
    gr_buf mt = GR_BUF_INIT(4 * 1024 * 1024);
    gr_kube_mgr_metrics_text(m, &mt);
    const char *objs = strstr(gr_buf_cstr(&mt), "gpuready_informer_objects{resource=\"v1/pods\"");
    printf("gang_rss_pods: %d pods\n", n);
    printf("gang_rss_cache_bytes: %ld B\n", after - base);
    printf("gang_rss_bytes_per_pod: %.0f B/pod\n", (double)(after - base) / n);
    if (objs) {
        const char *sp = strchr(objs, ' ');
        printf("gang_rss_cached_pods: %ld pods\n", sp ? strtol(sp + 1, NULL, 10) : -1L);
    }
    gr_buf_free(&mt);
    gr_kube_mgr_free(m);
    gr_gang_service_free(svc);
    gr_preflight_config_free(cfg);
    gr_kube_fake_free(f);
    return 0;
}
