/* bench_cache — memory per cached Pod (full and trimmed) with realistic
 * pods, and watch events per second into the cache (decoder + transform +
 * store). Prints `name: value unit` lines.
 *
 *   bench_kube_cache [npods]     (default 10000)
 *
 * Memory is measured with glibc's mallinfo2() (bytes in use, allocator
 * overhead included) before and after filling a store, so it is what the
 * process really pays, not an estimate. Goals (issue 4): trimmed entry
 * ≤ 500 bytes; full cache within 2× the raw JSON size. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gr_kube_informer.h"
#include "gr_kube_watch.h"

/* CPU time of this process (not wall: the machine is shared). */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_upd(void *ctx, const json_t *old, const json_t *new_obj)
{
    (void)old;
    (void)new_obj;
    (*(long *)ctx)++;
}

static size_t heap_used(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* A Pod as a training job's worker looks on a real cluster (≈ 5 KB). */
static json_t *make_pod(int i, int rv)
{
    char name[64], ns[32], uid[40], node[32], ip[32], rvs[16], job[32];
    snprintf(name, sizeof name, "train-llm-%04d-worker-%d", i / 8, i % 8);
    snprintf(ns, sizeof ns, "team-%02d", i % 20);
    snprintf(uid, sizeof uid, "%08x-1c2d-4e5f-8a9b-%012x", i * 2654435761u, i * 40503u);
    snprintf(node, sizeof node, "gpu-node-%04d", i % 1250);
    snprintf(ip, sizeof ip, "10.%d.%d.%d", 64 + i / 65536, (i / 256) % 256, i % 256);
    snprintf(rvs, sizeof rvs, "%d", rv);
    snprintf(job, sizeof job, "train-llm-%04d", i / 8);
    const char *text =
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"N\",\"namespace\":\"NS\","
        "\"uid\":\"U\",\"resourceVersion\":\"RV\",\"generation\":1,\"creationTimestamp\":"
        "\"2026-11-30T10:00:00Z\",\"labels\":{\"app.kubernetes.io/name\":\"train-llm\","
        "\"batch.kubernetes.io/job-name\":\"J\",\"jobset.sigs.k8s.io/jobset-name\":\"J\","
        "\"scheduling.x-k8s.io/pod-group\":\"J\",\"team\":\"research\"},\"annotations\":{"
        "\"kueue.x-k8s.io/workload\":\"J\",\"scheduling.k8s.io/group-name\":\"J\","
        "\"preflight.nvsentinel.nvidia.com/gang\":\"J\"},\"ownerReferences\":[{\"apiVersion\":"
        "\"batch/v1\",\"kind\":\"Job\",\"name\":\"J\",\"uid\":\"0b1c2d3e-1111-2222-3333-"
        "444455556666\",\"controller\":true,\"blockOwnerDeletion\":true}],\"finalizers\":["
        "\"batch.kubernetes.io/job-tracking\"],\"managedFields\":[{\"manager\":\"kube-controller-"
        "manager\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-11-30T10:00:"
        "00Z\","
        "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\".\":{},"
        "\"f:team\":{}},\"f:ownerReferences\":{\".\":{}}},\"f:spec\":{\"f:containers\":{"
        "\"k:{\\\"name\\\":\\\"trainer\\\"}\":{\".\":{},\"f:image\":{},\"f:resources\":{}}}}}},"
        "{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":"
        "\"2026-11-30T10:01:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{"
        "\"f:conditions\":{},\"f:containerStatuses\":{},\"f:podIP\":{},\"f:phase\":{}}},"
        "\"subresource\":\"status\"}]},\"spec\":{\"volumes\":[{\"name\":\"preflight-gang\","
        "\"configMap\":{\"name\":\"preflight-J\",\"defaultMode\":420}},{\"name\":\"kube-api-"
        "access\","
        "\"projected\":{\"sources\":[{\"serviceAccountToken\":{\"expirationSeconds\":3607,"
        "\"path\":\"token\"}},{\"configMap\":{\"name\":\"kube-root-ca.crt\",\"items\":[{\"key\":"
        "\"ca.crt\",\"path\":\"ca.crt\"}]}}],\"defaultMode\":420}},{\"name\":\"dshm\",\"emptyDir\":"
        "{\"medium\":\"Memory\",\"sizeLimit\":\"64Gi\"}}],\"initContainers\":[{\"name\":"
        "\"preflight-dcgm-diag\",\"image\":\"nvcr.io/nvidia/nvsentinel/"
        "preflight-dcgm-diag:v1.4.0\","
        "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"8\"}},\"volumeMounts\":[{\"name\":"
        "\"preflight-gang\",\"mountPath\":\"/etc/preflight\"}]}],\"containers\":[{\"name\":"
        "\"trainer\",\"image\":\"nvcr.io/nvidia/pytorch:25.01-py3\",\"command\":[\"torchrun\","
        "\"--nnodes=16\",\"--nproc-per-node=8\",\"train.py\"],\"env\":[{\"name\":\"NCCL_DEBUG\","
        "\"value\":\"WARN\"},{\"name\":\"MASTER_PORT\",\"value\":\"29500\"},{\"name\":\"POD_NAME\","
        "\"valueFrom\":{\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":\"metadata.name\"}}}],"
        "\"ports\":[{\"containerPort\":29500,\"protocol\":\"TCP\"}],\"resources\":{\"limits\":{"
        "\"cpu\":\"96\",\"memory\":\"1800Gi\",\"nvidia.com/"
        "gpu\":\"8\"},\"requests\":{\"cpu\":\"96\","
        "\"memory\":\"1800Gi\",\"nvidia.com/gpu\":\"8\"}},\"volumeMounts\":[{\"name\":\"dshm\","
        "\"mountPath\":\"/dev/shm\"},{\"name\":\"kube-api-access\",\"readOnly\":true,\"mountPath\":"
        "\"/var/run/secrets/kubernetes.io/serviceaccount\"}],\"terminationMessagePath\":"
        "\"/dev/termination-log\",\"imagePullPolicy\":\"IfNotPresent\"}],\"restartPolicy\":"
        "\"Never\",\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\","
        "\"serviceAccountName\":\"default\",\"nodeName\":\"NODE\",\"schedulerName\":"
        "\"default-scheduler\",\"tolerations\":[{\"key\":\"nvidia.com/"
        "gpu\",\"operator\":\"Exists\","
        "\"effect\":\"NoSchedule\"},{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":"
        "\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300}],\"priority\":0,"
        "\"enableServiceLinks\":true,\"preemptionPolicy\":\"PreemptLowerPriority\"}}";
    const char *status_text =
        "{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Initialized\",\"status\":\"True\","
        "\"lastTransitionTime\":\"2026-11-30T10:00:30Z\"},{\"type\":\"Ready\",\"status\":\"True\","
        "\"lastTransitionTime\":\"2026-11-30T10:01:00Z\"},{\"type\":\"ContainersReady\",\"status\":"
        "\"True\",\"lastTransitionTime\":\"2026-11-30T10:01:00Z\"},{\"type\":\"PodScheduled\","
        "\"status\":\"True\",\"lastTransitionTime\":\"2026-11-30T10:00:00Z\"}],\"hostIP\":"
        "\"172.16.4.17\",\"podIP\":\"IP\",\"podIPs\":[{\"ip\":\"IP\"}],\"startTime\":"
        "\"2026-11-30T10:00:00Z\",\"initContainerStatuses\":[{\"name\":\"preflight-dcgm-diag\","
        "\"state\":{\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\",\"startedAt\":"
        "\"2026-11-30T10:00:05Z\",\"finishedAt\":\"2026-11-30T10:00:29Z\"}},\"ready\":true,"
        "\"restartCount\":0,\"image\":\"nvcr.io/nvidia/nvsentinel/preflight-dcgm-diag:v1.4.0\","
        "\"imageID\":\"sha256:1111\",\"containerID\":\"containerd://aaaa\"}],\"containerStatuses\":"
        "[{\"name\":\"trainer\",\"state\":{\"running\":{\"startedAt\":\"2026-11-30T10:00:59Z\"}},"
        "\"ready\":true,\"restartCount\":0,\"image\":\"nvcr.io/nvidia/pytorch:25.01-py3\","
        "\"imageID\":\"sha256:2222\",\"containerID\":\"containerd://bbbb\",\"started\":true}],"
        "\"qosClass\":\"Guaranteed\"}";
    json_t *p = json_loads(text, 0, NULL);
    json_object_set_new(p, "status", json_loads(status_text, 0, NULL));
    json_t *md = json_object_get(p, "metadata");
    json_object_set_new(md, "name", json_string(name));
    json_object_set_new(md, "namespace", json_string(ns));
    json_object_set_new(md, "uid", json_string(uid));
    json_object_set_new(md, "resourceVersion", json_string(rvs));
    json_t *labels = json_object_get(md, "labels"), *ann = json_object_get(md, "annotations");
    const char *k;
    json_t *v;
    json_object_foreach(labels, k, v) if (strcmp(json_string_value(v), "J") == 0)
        json_string_set(v, job);
    json_object_foreach(ann, k, v) json_string_set(v, job);
    json_t *ref = json_array_get(json_object_get(md, "ownerReferences"), 0);
    json_object_set_new(ref, "name", json_string(job));
    json_t *spec = json_object_get(p, "spec");
    json_object_set_new(spec, "nodeName", json_string(node));
    char cm[64];
    snprintf(cm, sizeof cm, "preflight-%s", job);
    json_object_set_new(
        json_object_get(json_array_get(json_object_get(spec, "volumes"), 0), "configMap"), "name",
        json_string(cm));
    json_t *st = json_object_get(p, "status");
    json_object_set_new(st, "podIP", json_string(ip));
    json_object_set_new(json_array_get(json_object_get(st, "podIPs"), 0), "ip", json_string(ip));
    return p;
}

/* The preflight gang cache's trim (PF-141/PF-142): identity and deletion
 * metadata, discoverer labels/annotations, the gang ConfigMap volume, node,
 * pod IP and phase. */
static int trim(json_t **obj, void *ctx)
{
    (void)ctx;
    static const char *const keep[] = {
        "/metadata/name",
        "/metadata/namespace",
        "/metadata/uid",
        "/metadata/resourceVersion",
        "/metadata/deletionTimestamp",
        /* the discoverers' keys (native, coscheduling, preflight) */
        "/metadata/labels/scheduling.x-k8s.io~1pod-group",
        "/metadata/annotations/scheduling.k8s.io~1group-name",
        "/metadata/annotations/preflight.nvsentinel.nvidia.com~1gang",
        "/spec/nodeName",
        "/status/podIP",
        "/status/phase",
    };
    json_t *t = gr_kube_project(*obj, keep, sizeof keep / sizeof keep[0]);
    size_t i;
    json_t *vol;
    json_array_foreach(json_object_get(json_object_get(*obj, "spec"), "volumes"), i, vol)
    {
        const char *n = json_string_value(json_object_get(vol, "name"));
        if (n && strcmp(n, "preflight-gang") == 0) {
            json_object_set_new(
                json_object_get(t, "spec"), "volumes",
                json_pack("[{s:s,s:{s:O}}]", "name", n, "configMap", "name",
                          json_object_get(json_object_get(vol, "configMap"), "name")));
        }
    }
    json_decref(*obj);
    *obj = t;
    return GR_OK;
}

static double fill(json_t **pods, int n, gr_kube_transform_fn tf, size_t *bytes_out,
                   gr_kube_store **keep)
{
    malloc_trim(0);
    size_t before = heap_used();
    gr_kube_store *s;
    gr_kube_store_new(&s, NULL);
    gr_kube_informer_opts o = {0};
    o.transform = tf;
    for (int i = 0; i < n; i++) {
        /* as the watch decoder hands it over: a freshly parsed object the
         * store keeps (not the shared template) */
        char *t = json_dumps(pods[i], JSON_COMPACT);
        json_t *obj = json_loads(t, 0, NULL);
        free(t);
        gr_kube_informer_apply_event(s, &o, GR_KUBE_EV_ADDED, obj, NULL);
        json_decref(obj);
    }
    size_t after = heap_used();
    *bytes_out = after - before;
    *keep = s;
    return (double)(after - before) / n;
}

/* Serialise n MODIFIED events, then time decoder → transform → store →
 * on_update(old, new) (the store already holds every pod, so each event is
 * an update whose old object the handler receives). store = false: the
 * decoder alone, the floor. */
static double events_per_sec(json_t **pods, int n, gr_kube_transform_fn tf, bool store)
{
    gr_buf stream = GR_BUF_INIT((size_t)1 << 31);
    for (int i = 0; i < n; i++) {
        json_t *ev = json_pack("{s:s,s:O}", "type", "MODIFIED", "object", pods[i]);
        char *t = json_dumps(ev, JSON_COMPACT);
        gr_buf_puts(&stream, t);
        gr_buf_putc(&stream, '\n');
        free(t);
        json_decref(ev);
    }
    gr_kube_store *s;
    gr_kube_store_new(&s, NULL);
    gr_kube_store_add_index(s, "node", gr_kube_index_field, (void *)(uintptr_t) "spec.nodeName",
                            NULL);
    gr_kube_informer_opts o = {0};
    o.transform = tf;
    long updates = 0;
    o.handlers.on_update = on_upd;
    o.handlers.ctx = &updates;
    for (int i = 0; i < n; i++) { /* the previous version of every pod */
        json_t *prev = json_deep_copy(pods[i]);
        json_object_set_new(json_object_get(prev, "metadata"), "resourceVersion", json_string("1"));
        gr_kube_informer_apply_event(s, &o, GR_KUBE_EV_ADDED, prev, NULL);
        json_decref(prev);
    }
    gr_kube_watch_decoder *d;
    gr_kube_watch_decoder_new(0, &d, NULL);
    double t0 = now_s();
    int got = 0;
    for (size_t off = 0; off < stream.len; off += 16384) {
        size_t len = stream.len - off < 16384 ? stream.len - off : 16384;
        gr_kube_watch_decoder_feed(d, stream.data + off, len, NULL);
        gr_kube_watch_event ev;
        while (gr_kube_watch_decoder_next(d, &ev, NULL) == 1) {
            if (store)
                gr_kube_informer_apply_event(s, &o, (int)ev.type, ev.object, NULL);
            gr_kube_watch_event_clear(&ev);
            got++;
        }
    }
    double dt = now_s() - t0;
    gr_kube_watch_decoder_free(d);
    gr_kube_store_free(s);
    gr_buf_free(&stream);
    return got / dt;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    if (n <= 0)
        n = 10000;
    json_t **pods = calloc((size_t)n, sizeof *pods);
    size_t raw = 0;
    for (int i = 0; i < n; i++) {
        pods[i] = make_pod(i, 1000 + i);
        char *t = json_dumps(pods[i], JSON_COMPACT);
        raw += strlen(t);
        free(t);
    }
    printf("pods: %d count\n", n);
    printf("pod_raw_json_avg: %.0f bytes\n", (double)raw / n);
    size_t full_bytes, trim_bytes;
    gr_kube_store *sf, *st;
    double full = fill(pods, n, NULL, &full_bytes, &sf);
    gr_kube_store_free(sf);
    double trimmed = fill(pods, n, trim, &trim_bytes, &st);
    printf("cache_full_per_pod: %.0f bytes\n", full);
    printf("cache_full_vs_raw_json: %.2f ratio\n", (double)full_bytes / (double)raw);
    printf("cache_trimmed_per_pod: %.0f bytes\n", trimmed);
    printf("cache_trimmed_payload_per_pod: %.0f bytes\n",
           (double)gr_kube_store_payload_bytes(st) / n);
    gr_kube_store_free(st);
    printf("watch_events_decode_only: %.0f events/cpu-s\n", events_per_sec(pods, n, NULL, false));
    printf("watch_updates_full: %.0f events/cpu-s\n", events_per_sec(pods, n, NULL, true));
    printf("watch_updates_trimmed: %.0f events/cpu-s\n", events_per_sec(pods, n, trim, true));
    for (int i = 0; i < n; i++)
        json_decref(pods[i]);
    free(pods);
    return 0;
}
