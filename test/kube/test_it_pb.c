/* Integration test (gr_cluster fixture): protobuf for built-in types. For
 * each type the decoder supports, the same objects are read from the real
 * kube-apiserver as JSON and as application/vnd.kubernetes.protobuf; the
 * protobuf, decoded by gr_kube_pb, must equal the JSON exactly (names,
 * omitted zero values, times, quantities, int-or-string, maps, bytes,
 * inline members, managedFields). GET, LIST and a watch (protobuf frames)
 * are compared. Without the protos in the build the test cannot run: it
 * exits 77 saying so, which scripts/check-skips turns into a CI failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_kube_pb.h"
#include "it_common.h"

static int failures;
static gr_kube_client *cl;

static int fetch(const char *path, const char *accept, gr_buf *out)
{
    gr_kube_opts o = {0};
    o.accept = accept;
    gr_err err;
    gr_kube_status st;
    long http = 0;
    gr_buf_init(out, 64u << 20);
    int rc = gr_kube_request(cl, "GET", path, NULL, NULL, 0, &o, out, &http, &st, &err);
    if (rc != GR_OK)
        fprintf(stderr, "GET %s (%s): %s\n", path, accept, err.msg);
    return rc;
}

static int post(const char *path, const char *json)
{
    gr_kube_opts o = {0};
    gr_buf out;
    gr_buf_init(&out, 1u << 20);
    gr_err err;
    gr_kube_status st;
    long http = 0;
    int rc = gr_kube_request(cl, "POST", path, "application/json", json, strlen(json), &o, &out,
                             &http, &st, &err);
    if (rc != GR_OK)
        fprintf(stderr, "POST %s: %s\n", path, err.msg);
    gr_buf_free(&out);
    return rc;
}

static const char *rv_of(const json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
}

/* GR_KUBE_PB_DUMP=DIR writes each compared pair there (WHAT.pb and
 * WHAT.json): how test/kube/data_pb and corpus_pb were made. */
static void dump(const char *what, const char *ext, const void *data, size_t len)
{
    const char *dir = getenv("GR_KUBE_PB_DUMP");
    if (!dir || !*dir)
        return;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s.%s", dir, what, ext);
    FILE *f = fopen(p, "wb");
    if (f) {
        fwrite(data, 1, len, f);
        fclose(f);
    }
}

/* GET path both ways and compare. Controllers may change an object (the
 * node lifecycle controller taints new nodes) between the two reads: when
 * the resourceVersions differ, both are read again (up to 10 times). */
static void compare(const char *what, const char *path)
{
    for (int attempt = 0;; attempt++) {
        gr_buf js, pb;
        if (fetch(path, "application/json", &js) != GR_OK ||
            fetch(path, GR_KUBE_PB_CONTENT_TYPE, &pb) != GR_OK) {
            failures++;
            return;
        }
        json_error_t je;
        json_t *a = json_loadb(js.data, js.len, 0, &je);
        json_t *b = NULL;
        gr_err err;
        int rc = gr_kube_pb_decode(pb.data, pb.len, 64u << 20, &b, &err);
        bool raced =
            a && b && attempt < 10 && (!rv_of(a) || !rv_of(b) || strcmp(rv_of(a), rv_of(b)) != 0);
        bool done = true;
        if (!a || rc != GR_OK) {
            printf("FAIL %s: JSON %s, protobuf (%zu bytes) %s\n", what, a ? "ok" : je.text, pb.len,
                   rc == GR_OK ? "ok" : err.msg);
            failures++;
        } else if (json_equal(a, b)) {
            printf("ok   %s (JSON %zu bytes, protobuf %zu bytes)\n", what, js.len, pb.len);
            dump(what, "pb", pb.data, pb.len);
            dump(what, "json", js.data, js.len);
        } else if (raced) {
            done = false; /* the object changed between the reads */
        } else {
            char *sa = json_dumps(a, JSON_SORT_KEYS | JSON_INDENT(1));
            char *sb = json_dumps(b, JSON_SORT_KEYS | JSON_INDENT(1));
            printf("FAIL %s: protobuf decodes to different JSON\n--- JSON\n%s\n--- protobuf\n%s\n",
                   what, sa, sb);
            free(sa);
            free(sb);
            failures++;
        }
        json_decref(a);
        json_decref(b);
        gr_buf_free(&js);
        gr_buf_free(&pb);
        if (done)
            return;
    }
}

struct wctx {
    gr_buf buf;
    json_t *events;
    gr_err err;
    int rc;
};

static int on_watch(void *p, const char *data, size_t len)
{
    struct wctx *w = p;
    int ar = gr_buf_append(&w->buf, data, len);
    if (ar != GR_OK) {
        w->rc = gr_err_set(&w->err, ar, "watch: buffering the stream failed");
        return 1;
    }
    for (;;) {
        size_t n;
        int r = gr_kube_pb_frame(w->buf.data, w->buf.len, 16u << 20, &n, &w->err);
        if (r < 0) {
            w->rc = r;
            return 1;
        }
        if (r == 0)
            return 0;
        json_t *ev;
        r = gr_kube_pb_decode_watch_event(w->buf.data + 4, n, 16u << 20, &ev, &w->err);
        if (r != GR_OK) {
            w->rc = r;
            return 1;
        }
        if (json_array_size(w->events) == 0)
            dump("WatchEvent", "pb", w->buf.data + 4, n);
        json_array_append_new(w->events, ev);
        memmove(w->buf.data, w->buf.data + 4 + n, w->buf.len - 4 - n);
        w->buf.len -= 4 + n;
    }
}

/* A watch from resourceVersion 0 lists the namespace's pods as ADDED
 * events: the protobuf events must equal the JSON list's items. */
static void compare_watch(const char *ns)
{
    char path[512];
    snprintf(path, sizeof path,
             "/api/v1/namespaces/%s/pods?watch=1&resourceVersion=0&timeoutSeconds=2", ns);
    struct wctx w = {.events = json_array()};
    gr_buf_init(&w.buf, 32u << 20);
    gr_kube_opts o = {0};
    o.accept = GR_KUBE_PB_CONTENT_TYPE;
    gr_kube_status st;
    long http = 0;
    gr_err err;
    int rc = gr_kube_request_stream(cl, "GET", path, &o, 30, on_watch, &w, &http, &st, &err);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods", ns);
    gr_buf js;
    json_t *list = NULL;
    if (fetch(path, "application/json", &js) == GR_OK) {
        list = json_loadb(js.data, js.len, 0, NULL);
        gr_buf_free(&js);
    }
    json_t *items = json_object_get(list, "items");
    size_t matched = 0, i;
    json_t *ev;
    json_array_foreach(w.events, i, ev)
    {
        json_t *obj = json_object_get(ev, "object");
        json_t *it;
        size_t k;
        json_array_foreach(items, k, it)
        {
            json_t *cp = json_deep_copy(it);
            json_object_set_new(cp, "apiVersion", json_string("v1"));
            json_object_set_new(cp, "kind", json_string("Pod"));
            if (json_equal(cp, obj))
                matched++;
            json_decref(cp);
        }
    }
    if (w.rc != GR_OK || json_array_size(items) == 0 || matched != json_array_size(items)) {
        printf("FAIL watch: rc %d/%d (%s), %zu events, %zu of %zu JSON items matched\n", rc, w.rc,
               w.err.msg, json_array_size(w.events), matched, json_array_size(items));
        failures++;
    } else {
        printf("ok   watch: %zu protobuf events equal the JSON list's items\n", matched);
    }
    json_decref(list);
    json_decref(w.events);
    gr_buf_free(&w.buf);
}

int main(void)
{
    int s = it_skip();
    if (s)
        return s;
    if (!gr_kube_pb_enabled()) {
        printf("SKIPPED: built without the Kubernetes protos (scripts/fetch-k8s-protos; "
               "-DGR_KUBE_PROTOBUF=ON)\n");
        return 77;
    }
    cl = it_client("kubeconfig", -1);
    if (!cl)
        return 1;
    char ns[128];
    if (it_ns_create(cl, "pb", ns, sizeof ns) != GR_OK)
        return 1;
    char path[512], body[4096];

    /* A pod using the awkward corners: inline VolumeSource, IntOrString
     * ports, quantities, pointer and non-omitempty scalars, maps. */
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods", ns);
    snprintf(
        body, sizeof body,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\",\"labels\":{\"a\":"
        "\"b\","
        "\"gpu\":\"\"},\"annotations\":{\"x\":\"y\"},\"finalizers\":[\"example.com/f\"]},"
        "\"spec\":{\"terminationGracePeriodSeconds\":0,\"enableServiceLinks\":false,"
        "\"nodeSelector\":{\"n\":\"1\"},\"tolerations\":[{\"key\":\"nvidia.com/gpu\",\"operator\":"
        "\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":30}],"
        "\"volumes\":[{\"name\":\"e\",\"emptyDir\":{\"sizeLimit\":\"1Gi\"}},{\"name\":\"c\","
        "\"configMap\":{\"name\":\"cm1\",\"defaultMode\":420,\"items\":[{\"key\":\"k\",\"path\":"
        "\"p\"}]}}],"
        "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\",\"args\":[\"sleep\",\"1\"],"
        "\"ports\":[{\"containerPort\":8080,\"name\":\"http\"}],"
        "\"resources\":{\"limits\":{\"cpu\":\"1500m\",\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"8\"},"
        "\"requests\":{\"cpu\":\"0.5\",\"memory\":\"100M\"}},"
        "\"readinessProbe\":{\"httpGet\":{\"path\":\"/\",\"port\":\"http\"},\"periodSeconds\":3},"
        "\"livenessProbe\":{\"tcpSocket\":{\"port\":8080}},"
        "\"env\":[{\"name\":\"E\",\"value\":\"\"},{\"name\":\"F\",\"valueFrom\":{\"fieldRef\":"
        "{\"fieldPath\":\"metadata.name\"}}}],"
        "\"volumeMounts\":[{\"name\":\"e\",\"mountPath\":\"/e\",\"readOnly\":true}]}]}}");
    if (post(path, body) != GR_OK)
        failures++;
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p2\"},\"spec\":{"
             "\"containers\":"
             "[{\"name\":\"c\",\"image\":\"busybox\"}]}}");
    if (post(path, body) != GR_OK)
        failures++;
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/p1", ns);
    compare("Pod", path);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods", ns);
    compare("PodList", path);

    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps", ns);
    if (post(path, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm1\"},"
                   "\"data\":{\"k\":\"v\",\"empty\":\"\"},\"binaryData\":{\"b\":\"AAEC/w==\"},"
                   "\"immutable\":false}") != GR_OK)
        failures++;
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps/cm1", ns);
    compare("ConfigMap", path);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps", ns);
    compare("ConfigMapList", path);

    /* an empty list: the server writes "items": [] */
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps?labelSelector=none%%3Dnone", ns);
    compare("EmptyList", path);

    snprintf(path, sizeof path, "/api/v1/namespaces/%s/secrets", ns);
    if (post(path, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s1\"},"
                   "\"type\":\"Opaque\",\"data\":{\"k\":\"c2VjcmV0\",\"z\":\"\"},"
                   "\"stringData\":{\"t\":\"text\"}}") != GR_OK)
        failures++;
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/secrets/s1", ns);
    compare("Secret", path);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/secrets", ns);
    compare("SecretList", path);

    snprintf(path, sizeof path, "/api/v1/namespaces/%s/events", ns);
    snprintf(
        body, sizeof body,
        "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"e1\"},"
        "\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"%s\",\"name\":\"p1\"},"
        "\"reason\":\"Tested\",\"message\":\"m\",\"type\":\"Normal\",\"count\":2,"
        "\"firstTimestamp\":\"2026-01-02T03:04:05Z\",\"lastTimestamp\":\"2026-01-02T03:04:06Z\","
        "\"source\":{\"component\":\"gpuready-test\"}}",
        ns);
    if (post(path, body) != GR_OK)
        failures++;
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"e2\"},"
             "\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"%s\",\"name\":\"p1\"},"
             "\"reason\":\"Tested\",\"type\":\"Warning\",\"action\":\"Test\","
             "\"reportingComponent\":\"gr\","
             "\"reportingInstance\":\"i\",\"eventTime\":\"2026-01-02T03:04:05.123456Z\"}",
             ns);
    if (post(path, body) != GR_OK)
        failures++;
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/events/e1", ns);
    compare("Event", path);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/events", ns);
    compare("EventList", path);

    snprintf(path, sizeof path, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", ns);
    if (post(path,
             "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":"
             "\"l1\"},\"spec\":{\"holderIdentity\":\"me\",\"leaseDurationSeconds\":15,"
             "\"acquireTime\":\"2026-01-02T03:04:05.000001Z\",\"renewTime\":"
             "\"2026-01-02T03:04:06.123456Z\",\"leaseTransitions\":0}}") != GR_OK)
        failures++;
    snprintf(path, sizeof path, "/apis/coordination.k8s.io/v1/namespaces/%s/leases/l1", ns);
    compare("Lease", path);
    snprintf(path, sizeof path, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", ns);
    compare("LeaseList", path);

    snprintf(path, sizeof path, "/api/v1/namespaces/%s", ns);
    compare("Namespace", path);
    compare("NamespaceList", "/api/v1/namespaces");

    char node[160];
    snprintf(node, sizeof node, "%s-node", ns);
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":"
             "{\"nvidia.com/"
             "gpu.present\":\"true\"}},\"spec\":{\"unschedulable\":true,\"taints\":[{\"key\":"
             "\"nvidia.com/"
             "gpu\",\"value\":\"x\",\"effect\":\"NoSchedule\"}],\"podCIDR\":\"10.0.0.0/24\"}}",
             node);
    if (post("/api/v1/nodes", body) != GR_OK)
        failures++;
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    compare("Node", path);
    compare("NodeList", "/api/v1/nodes");

    compare_watch(ns);

    gr_err err;
    gr_kube_status st;
    gr_kube_delete(cl, &GR_KUBE_NODES, NULL, node, NULL, NULL, &st, &err);
    it_ns_delete(cl, ns);
    gr_kube_client_free(cl);
    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
