/*
 * bench_gang_burst.c — issue 20's benchmark: a gang burst through the real
 * kube-apiserver (the local control plane, scripts/cluster), three ways in
 * one run:
 *
 *   none    a namespace no webhook intercepts;
 *   static  a namespace served by a do-nothing webhook on the same HTTP
 *           stack (gr_preflight_server with a config whose GPU resource
 *           name matches no pod: it reads the review and answers "allowed"
 *           with the request's uid and no patch — a fixed body would be
 *           refused by the API server, which checks the uid: the ceiling);
 *   real    a namespace served by `gpuready-preflight serve` as deployed
 *           (default flags: --kube-api-qps 5 --kube-api-burst 10,
 *           --leader-elect), gang coordination on with the Volcano
 *           discoverer, a PodGroup of minMember N.
 *
 * Each burst: N GPU pods (annotation scheduling.k8s.io/group-name) created
 * by W writer threads, each with its own client and no client-side rate
 * limit. Then, for the real namespace, every pod gets an IP (status patches
 * from W threads) and the gang ConfigMap is polled until it lists N peers.
 *
 *   bench_gang_burst PATH/TO/gpuready-preflight [N=1028] [W=64]
 *   (GR_CLUSTER_DIR names the cluster; `scripts/cluster up DIR` starts one;
 *   GR_BENCH_NO_GANG=1 runs the real webhook without gang coordination —
 *   the same injection minus the gang parts, no controllers — to split the
 *   mutation's cost from the controllers'; the gang phase is skipped)
 *
 * The three bursts run GR_BENCH_ROUNDS times (default 3), in alternating
 * order (none, static, real; real, static, none; ...), each round into
 * fresh namespaces; the pods/s figures and the ratio are medians over the
 * rounds (one line per round goes to stderr).
 *
 * GR_BENCH_WEBHOOK_CPUS=1 (a CPU list) runs the webhook replicas and the
 * do-nothing webhook's server threads on those CPUs and everything else on
 * the others: each webhook's own latency without the API server on the
 * same cores, as on a node of its own (gang_burst_pinned says so).
 *
 * Prints `name: value unit` lines (no goal is asserted here):
 *   gang_burst_{none,static,real}_pods_per_second   medians
 *   gang_burst_{none,static,real}_failed            summed over the rounds
 *   gang_burst_real_vs_static_percent      median of the per-round ratios
 *   gang_burst_{none,static,real}_cpu_{apiserver,etcd,webhook,bench}_ms_per_pod
 *       CPU each process used during that kind of burst, per pod (the
 *       do-nothing webhook runs inside the bench process)
 *   gang_burst_apiserver_admission_{static,real}_{p50,p99}_seconds
 *       (bucket upper bounds of apiserver_admission_webhook_admission_duration_seconds)
 *   gang_burst_webhook_{p50,p99}_seconds, gang_burst_webhook_mean_seconds
 *       (the webhook's preflight_webhook_latency_seconds; p = bucket bound)
 *   gang_burst_noop_webhook_{p50,p99,mean}_seconds  the same histogram of
 *       the do-nothing webhook (what the machine's load alone costs)
 *   gang_burst_gang_complete_after_last_ip_seconds
 *   gang_burst_webhook_rss_bytes           after the burst (VmRSS)
 *
 * Then (unless GR_BENCH_KILL=0) the same burst into a fourth namespace with
 * one replica killed in the middle (issue 20: "0 failed admissions"): a
 * second `serve` replica (same flags, same Lease) starts beside the first;
 * the webhook's URL is a TCP front in this process that spreads
 * connections round-robin over both replicas and skips one that refuses
 * connections (a Service whose dead endpoint is dropped); when half of the
 * pods are created, the replica holding the Lease (the coordinator) gets
 * SIGKILL. Every stored pod is checked for the injection (the gang volume
 * and the init container), every pod then gets an IP and the gang
 * ConfigMap is polled until it lists N peers (the survivor takes the Lease
 * over: lease duration 15 s by default). Prints:
 *   gang_burst_kill_failed                 pods refused (goal 0)
 *   gang_burst_kill_pods_per_second
 *   gang_burst_kill_injected               stored pods with the injection
 *   gang_burst_kill_killed_leader          1 when the killed replica led
 *   gang_burst_kill_gang_complete_after_last_ip_seconds
 * GR_BENCH_KILL_SIGNAL=TERM sends SIGTERM instead: the replica stops
 * accepting (the front then skips it, as a Service drops an endpoint),
 * answers what it holds and exits — a rollout or a drain.
 * A request the killed replica was answering at the instant of SIGKILL is
 * lost with the process (the API server does not retry a webhook call whose
 * connection was reset); such a refusal shows in _failed.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "gr_base64.h"
#include "gr_buf.h"
#include "gr_harness.h"
#include "gr_kube_config.h"
#include "gr_kube_rest.h"
#include "gr_preflight.h"
#include "gr_preflight_server.h"

#define MAXW 256
#define MAXR 15

static gr_harness_cluster g_c;
static char g_work[256];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_gang_burst: %s\n", what);
    exit(1);
}

static gr_kube_client *client(void)
{
    gr_kube_config kcfg;
    memset(&kcfg, 0, sizeof kcfg);
    gr_err err;
    if (gr_kube_config_load_file(g_c.kubeconfig, NULL, &kcfg, &err) != GR_OK)
        die(err.msg);
    kcfg.qps = -1;
    gr_kube_client *kc = NULL;
    if (gr_kube_client_new(&kcfg, &kc, &err) != GR_OK)
        die(err.msg);
    gr_kube_config_free(&kcfg);
    return kc;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

/* ------------------------------------------------------------ bursts */

typedef struct burst {
    const char *ns;
    int n, w, idx;
    int phase; /* 0 create, 1 status IP */
    atomic_int failed;
    atomic_int done; /* requests answered (either way) */
    int kill_at;     /* > 0: signal kill_pid when done reaches it */
    pid_t kill_pid;
    int kill_sig; /* SIGKILL, or SIGTERM (GR_BENCH_KILL_SIGNAL=TERM) */
    atomic_int killed;
} burst;

typedef struct wjob {
    burst *b;
    int id;
} wjob;

static void *writer(void *arg)
{
    wjob *j = arg;
    burst *b = j->b;
    gr_kube_client *kc = client();
    for (int i = j->id; i < b->n; i += b->w) {
        char body[1024];
        gr_err err;
        gr_kube_status st;
        int rc;
        if (b->phase == 0) {
            snprintf(body, sizeof body,
                     "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-%05d\","
                     "\"annotations\":{\"scheduling.k8s.io/group-name\":\"big\"}},\"spec\":{"
                     "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"t\",\"image\":"
                     "\"registry.invalid/train:1\",\"resources\":{\"limits\":{\"nvidia.com/"
                     "gpu\":\"8\"}}}]}}",
                     i);
            json_t *pod = json_loads(body, 0, NULL);
            rc = gr_kube_create(kc, &GR_KUBE_PODS, b->ns, pod, NULL, NULL, &st, &err);
            json_decref(pod);
        } else {
            snprintf(body, sizeof body,
                     "{\"status\":{\"phase\":\"Running\",\"podIP\":\"10.%d.%d.%d\",\"podIPs\":"
                     "[{\"ip\":\"10.%d.%d.%d\"}]}}",
                     100 + i / 65536, (i / 256) % 256, i % 256, 100 + i / 65536, (i / 256) % 256,
                     i % 256);
            json_t *patch = json_loads(body, 0, NULL);
            char name[32];
            snprintf(name, sizeof name, "p-%05d", i);
            gr_kube_opts o = {0};
            o.subresource = "status";
            rc = gr_kube_patch(kc, &GR_KUBE_PODS, b->ns, name, GR_KUBE_PATCH_MERGE, patch, &o, NULL,
                               &st, &err);
            json_decref(patch);
        }
        if (rc != GR_OK) {
            if (atomic_fetch_add(&b->failed, 1) < 3)
                fprintf(stderr, "bench_gang_burst: %s %s: %s\n", b->ns,
                        b->phase ? "patch" : "create", err.msg);
        }
        if (b->kill_at > 0 && atomic_fetch_add(&b->done, 1) + 1 == b->kill_at &&
            kill(b->kill_pid, b->kill_sig ? b->kill_sig : SIGKILL) == 0)
            atomic_store(&b->killed, 1);
    }
    gr_kube_client_free(kc);
    return NULL;
}

/* Run one burst; returns its wall time in seconds. */
static double run_burst(burst *b)
{
    pthread_t th[MAXW];
    wjob jobs[MAXW];
    double t0 = now_s();
    for (int i = 0; i < b->w; i++) {
        jobs[i] = (wjob){b, i};
        if (pthread_create(&th[i], NULL, writer, &jobs[i]) != 0)
            die("pthread_create");
    }
    for (int i = 0; i < b->w; i++)
        pthread_join(th[i], NULL);
    return now_s() - t0;
}

/* ------------------------------------------------------------ metrics */

typedef struct hist {
    double le[64];
    double cnt[64];
    int n;
    double sum, count;
} hist;

/* Add a cumulative bucket (le, count) to h, summing equal bounds. */
static void hist_add(hist *h, double le, double c)
{
    for (int i = 0; i < h->n; i++)
        if (h->le[i] == le) {
            h->cnt[i] += c;
            return;
        }
    if (h->n < 64) {
        h->le[h->n] = le;
        h->cnt[h->n++] = c;
    }
}

/* h -= before (same bounds): the burst's own observations. */
static void hist_sub(hist *h, const hist *before)
{
    for (int i = 0; i < h->n; i++)
        for (int j = 0; j < before->n; j++)
            if (before->le[j] == h->le[i])
                h->cnt[i] -= before->cnt[j];
    h->sum -= before->sum;
    h->count -= before->count;
}

static double hist_q(const hist *h, double q)
{
    double total = 0; /* the +Inf bucket */
    for (int i = 0; i < h->n; i++)
        if (h->le[i] > 1e300)
            total = h->cnt[i];
    if (total <= 0)
        return -1;
    double best = 1e308;
    for (int i = 0; i < h->n; i++)
        if (h->cnt[i] >= q * total && h->le[i] < best)
            best = h->le[i];
    return best;
}

/* Parse `<metric>_bucket{...le="X"} N` lines whose label set contains
 * `filter` (may be ""). */
static void parse_hist(const char *text, const char *metric, const char *filter, hist *h)
{
    memset(h, 0, sizeof *h);
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s_bucket{", metric);
    const char *p = text;
    while (p && *p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char line[2048];
        if (len < sizeof line) {
            memcpy(line, p, len);
            line[len] = 0;
            if (strncmp(line, prefix, strlen(prefix)) == 0 && strstr(line, filter)) {
                const char *le = strstr(line, "le=\"");
                const char *sp = strrchr(line, ' ');
                if (le && sp) {
                    double v = strncmp(le + 4, "+Inf", 4) == 0 ? 1e308 : strtod(le + 4, NULL);
                    hist_add(h, v, strtod(sp + 1, NULL));
                }
            }
            char sumk[300], cntk[300];
            snprintf(sumk, sizeof sumk, "%s_sum", metric);
            snprintf(cntk, sizeof cntk, "%s_count", metric);
            if (strncmp(line, sumk, strlen(sumk)) == 0 && strstr(line, filter))
                h->sum += strtod(strrchr(line, ' ') + 1, NULL);
            if (strncmp(line, cntk, strlen(cntk)) == 0 && strstr(line, filter))
                h->count += strtod(strrchr(line, ' ') + 1, NULL);
        }
        p = eol ? eol + 1 : NULL;
    }
}

static char *read_cmd(const char *cmd)
{
    FILE *f = popen(cmd, "r");
    if (!f)
        return NULL;
    gr_buf b = GR_BUF_INIT(64 * 1024 * 1024);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (gr_buf_append(&b, chunk, n) != GR_OK)
            break;
    pclose(f);
    char *s = gr_buf_steal(&b, NULL);
    return s ? s : strdup("");
}

static char *apiserver_metrics(gr_kube_client *kc)
{
    gr_buf b = GR_BUF_INIT(256 * 1024 * 1024);
    gr_err err;
    gr_kube_status st;
    long http = 0;
    if (gr_kube_request(kc, "GET", "/metrics", NULL, NULL, 0, NULL, &b, &http, &st, &err) !=
        GR_OK) {
        fprintf(stderr, "bench_gang_burst: apiserver /metrics: %s\n", err.msg);
        gr_buf_free(&b);
        return strdup("");
    }
    char *s = gr_buf_steal(&b, NULL);
    return s ? s : strdup("");
}

/* ------------------------------------------------------------ setup */

static void certs(void)
{
    if (sh("cd %s && openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
           "-subj /CN=127.0.0.1 -keyout certs/tls.key -out csr 2>/dev/null && "
           "printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' > ext && "
           "openssl x509 -req -in csr -CA %s -CAkey %s -set_serial %d -days 1 -extfile ext "
           "-out certs/tls.crt 2>/dev/null",
           g_work, g_c.ca_cert, g_c.ca_key, (int)getpid()) != 0)
        die("openssl failed");
}

static char *ca_bundle(void)
{
    FILE *f = fopen(g_c.ca_cert, "rb");
    if (!f)
        die("cluster CA unreadable");
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    gr_buf b = GR_BUF_INIT(64 * 1024);
    gr_base64_encode(buf, n, &b);
    return gr_buf_steal(&b, NULL);
}

static void register_webhook(const char *name, int port, const char *label, const char *ca)
{
    char yaml[16384];
    snprintf(yaml, sizeof yaml,
             "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
             "metadata: {name: %s}\nwebhooks:\n  - name: %s.gpuready.bench\n"
             "    admissionReviewVersions: [v1]\n    sideEffects: None\n"
             "    failurePolicy: Fail\n    timeoutSeconds: 10\n"
             "    clientConfig: {url: \"https://127.0.0.1:%d/mutate\", caBundle: %s}\n"
             "    rules: [{operations: [CREATE], apiGroups: [\"\"], apiVersions: [v1], "
             "resources: [pods], scope: Namespaced}]\n"
             "    namespaceSelector: {matchLabels: {gpuready.bench/burst: %s}}\n",
             name, name, port, ca, label);
    if (gr_harness_apply_yaml(&g_c, NULL, yaml) != 0)
        die("cannot register the webhook");
}

static int free_port(void)
{
    srand((unsigned)getpid() ^ (unsigned)time(NULL));
    return 20000 + rand() % 12000;
}

static long rss_of(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

/* The median of v[0..n) (sorted in place). */
static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* CPU seconds (user + system) a process has used so far; -1 when gone. */
static double cpu_of(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* comm may hold spaces */
    unsigned long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The pid a cluster component's pid file names (GR_CLUSTER_DIR/<name>.pid). */
static pid_t cluster_pid(const char *name)
{
    const char *dir = getenv("GR_CLUSTER_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.pid", dir ? dir : "", name);
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return (pid_t)v;
}

/* CPU used during one burst by the processes that share the machine. */
typedef struct cpu_split {
    double apiserver, etcd, webhook, bench;
} cpu_split;

static void cpu_sample(cpu_split *s, pid_t webhook)
{
    s->apiserver = cpu_of(cluster_pid("kube-apiserver"));
    s->etcd = cpu_of(cluster_pid("etcd"));
    s->webhook = webhook > 0 ? cpu_of(webhook) : 0;
    s->bench = cpu_of(getpid());
}

static void cpu_print(const char *tag, const cpu_split *a, const cpu_split *b, int n)
{
    printf("gang_burst_%s_cpu_apiserver_ms_per_pod: %.3f ms\n", tag,
           1000.0 * (b->apiserver - a->apiserver) / n);
    printf("gang_burst_%s_cpu_etcd_ms_per_pod: %.3f ms\n", tag, 1000.0 * (b->etcd - a->etcd) / n);
    printf("gang_burst_%s_cpu_webhook_ms_per_pod: %.3f ms\n", tag,
           1000.0 * (b->webhook - a->webhook) / n);
    printf("gang_burst_%s_cpu_bench_ms_per_pod: %.3f ms\n", tag,
           1000.0 * (b->bench - a->bench) / n);
}

static size_t peers_in(gr_kube_client *kc, const char *ns, const char *cm)
{
    json_t *o = NULL;
    gr_err err;
    gr_kube_status st;
    if (gr_kube_get(kc, &GR_KUBE_CONFIGMAPS, ns, cm, NULL, &o, &st, &err) != GR_OK)
        return 0;
    const char *p = json_string_value(json_object_get(json_object_get(o, "data"), "peers"));
    size_t n = 0;
    for (; p && *p; p++)
        n += *p == '\n';
    if (p && json_string_value(json_object_get(json_object_get(o, "data"), "peers"))[0])
        n++;
    json_decref(o);
    return n;
}

/* ------------------------------------------------------------ TCP front */

/* Round-robin TCP front over the replicas' webhook ports (a Service): each
 * accepted connection goes to the next backend that accepts a connection
 * (one that refuses is skipped: its endpoint is gone); bytes are copied
 * both ways until either side closes. TLS passes through untouched. */
typedef struct front {
    int lfd, port;
    int backends[4];
    int nb;
    atomic_uint next;
    atomic_int stop;
    pthread_t thr;
} front;

typedef struct fconn {
    front *f;
    int cfd;
} fconn;

static int connect_port(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void *fconn_run(void *arg)
{
    fconn *c = arg;
    front *f = c->f;
    int bfd = -1;
    for (int t = 0; t < f->nb && bfd < 0; t++)
        bfd = connect_port(f->backends[atomic_fetch_add(&f->next, 1) % (unsigned)f->nb]);
    if (bfd >= 0) {
        struct pollfd p[2] = {{.fd = c->cfd, .events = POLLIN}, {.fd = bfd, .events = POLLIN}};
        char buf[16384];
        bool open = true;
        while (open && !atomic_load(&f->stop)) {
            if (poll(p, 2, 500) < 0 && errno != EINTR)
                break;
            for (int i = 0; i < 2 && open; i++) {
                if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                ssize_t r = read(p[i].fd, buf, sizeof buf);
                if (r <= 0) {
                    open = false;
                    break;
                }
                for (ssize_t off = 0; off < r;) {
                    ssize_t wr = write(p[1 - i].fd, buf + off, (size_t)(r - off));
                    if (wr <= 0) {
                        open = false;
                        break;
                    }
                    off += wr;
                }
            }
        }
        close(bfd);
    }
    close(c->cfd);
    free(c);
    return NULL;
}

static void *front_run(void *arg)
{
    front *f = arg;
    while (!atomic_load(&f->stop)) {
        struct pollfd p = {.fd = f->lfd, .events = POLLIN};
        if (poll(&p, 1, 200) <= 0)
            continue;
        int cfd = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (cfd < 0)
            continue;
        fconn *c = malloc(sizeof *c);
        pthread_t t;
        if (!c) {
            close(cfd);
            continue;
        }
        *c = (fconn){f, cfd};
        if (pthread_create(&t, NULL, fconn_run, c) != 0) {
            close(cfd);
            free(c);
            continue;
        }
        pthread_detach(t);
    }
    return NULL;
}

static void front_start(front *f)
{
    f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(f->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(f->lfd, 256) != 0 || getsockname(f->lfd, (struct sockaddr *)&a, &al) != 0)
        die("front: cannot listen");
    f->port = ntohs(a.sin_port);
    if (pthread_create(&f->thr, NULL, front_run, f) != 0)
        die("front: pthread_create");
}

static void front_stop(front *f)
{
    atomic_store(&f->stop, 1);
    pthread_join(f->thr, NULL);
    close(f->lfd);
}

/* Start `serve` as deployed (default flags, --leader-elect on Lease in
 * lease_ns); its log goes to WORK/webhook-<tag>.log. */
/* GR_BENCH_WEBHOOK_CPUS (a list such as "1" or "2-3"): the webhook
 * replicas run on those CPUs and everything else — this process with its
 * writers and the do-nothing webhook, kube-apiserver, etcd and the
 * controller manager — on the others, as on a cluster where the webhook's
 * pods have a node of their own. Unset: no pinning. */
static bool g_pin;
static cpu_set_t g_wh_cpus, g_other_cpus;

static void pin_parse(void)
{
    const char *v = getenv("GR_BENCH_WEBHOOK_CPUS");
    if (!v || !*v)
        return;
    CPU_ZERO(&g_wh_cpus);
    for (const char *s = v; *s;) {
        char *e;
        long a = strtol(s, &e, 10), b = a;
        if (e == s)
            die("GR_BENCH_WEBHOOK_CPUS: want a list such as 1 or 2-3,5");
        if (*e == '-')
            b = strtol(e + 1, &e, 10);
        for (long c = a; c <= b && c >= 0 && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, &g_wh_cpus);
        s = *e == ',' ? e + 1 : e;
        if (*e && *e != ',')
            die("GR_BENCH_WEBHOOK_CPUS: want a list such as 1 or 2-3,5");
    }
    cpu_set_t all;
    if (sched_getaffinity(0, sizeof all, &all) != 0)
        die("sched_getaffinity");
    CPU_ZERO(&g_other_cpus);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all) && !CPU_ISSET(c, &g_wh_cpus))
            CPU_SET(c, &g_other_cpus);
    if (CPU_COUNT(&g_other_cpus) == 0 || CPU_COUNT(&g_wh_cpus) == 0)
        die("GR_BENCH_WEBHOOK_CPUS must leave CPUs to the rest and name at least one");
    g_pin = true;
}

/* Every thread of `pid` onto `set`. */
static void pin_process(pid_t pid, const cpu_set_t *set)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            (void)sched_setaffinity((pid_t)atoi(e->d_name), sizeof *set, set);
    if (d)
        closedir(d);
}

static void pin_rest(void)
{
    if (!g_pin)
        return;
    pin_process(getpid(), &g_other_cpus); /* threads started later inherit it */
    static const char *const comp[] = {"kube-apiserver", "etcd", "kube-controller-manager"};
    for (size_t i = 0; i < sizeof comp / sizeof *comp; i++) {
        pid_t p = cluster_pid(comp[i]);
        if (p > 0)
            pin_process(p, &g_other_cpus);
    }
}

static pid_t start_serve(const char *bin, const char *tag, int port, int probe, const char *cfgpath,
                         const char *lease_ns)
{
    pid_t child = fork();
    if (child != 0)
        return child;
    if (g_pin)
        (void)sched_setaffinity(0, sizeof g_wh_cpus, &g_wh_cpus);
    char logp[512], portarg[32], probearg[64], certdir[512], cfgarg[600], lns[200], pod[64];
    snprintf(logp, sizeof logp, "%s/webhook-%s.log", g_work, tag);
    snprintf(portarg, sizeof portarg, "--port=%d", port);
    snprintf(probearg, sizeof probearg, "--health-probe-bind-address=127.0.0.1:%d", probe);
    snprintf(certdir, sizeof certdir, "--cert-dir=%s/certs", g_work);
    snprintf(cfgarg, sizeof cfgarg, "--config=%s", cfgpath);
    snprintf(lns, sizeof lns, "--leader-election-namespace=%s", lease_ns);
    snprintf(pod, sizeof pod, "bench-%s", tag);
    if (!freopen(logp, "w", stdout) || !freopen(logp, "a", stderr))
        _exit(127);
    setenv("KUBECONFIG", g_c.kubeconfig, 1);
    setenv("POD_NAME", pod, 1);
    execl(bin, bin, "serve", portarg, certdir, cfgarg, probearg, "--loopback", "--leader-elect",
          lns, (char *)NULL);
    _exit(127);
}

static bool webhook_ready(int port)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "curl -sk https://127.0.0.1:%d/readyz 2>/dev/null", port);
    char *o = read_cmd(cmd);
    bool ok = o && strcmp(o, "ok") == 0;
    free(o);
    return ok;
}

static bool is_leader(int port)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "curl -sk https://127.0.0.1:%d/metrics 2>/dev/null", port);
    char *o = read_cmd(cmd);
    const char *l = o ? strstr(o, "\nleader_election_master_status{") : NULL;
    const char *sp = l ? strchr(l + 1, ' ') : NULL;
    bool lead = sp && strtol(sp + 1, NULL, 10) == 1;
    free(o);
    return lead;
}

/* Stored pods of ns that carry the injection: the gang volume naming cm and
 * the preflight init container. */
static int injected(gr_kube_client *kc, const char *ns, const char *cm)
{
    json_t *list = NULL;
    gr_err err;
    gr_kube_status st;
    if (gr_kube_list_all(kc, &GR_KUBE_PODS, ns, NULL, &list, &st, &err) != GR_OK)
        return -1;
    int good = 0;
    size_t i;
    json_t *pod;
    json_array_foreach(json_object_get(list, "items"), i, pod)
    {
        const json_t *spec = json_object_get(pod, "spec");
        bool vol = false, init = false;
        size_t j;
        json_t *e;
        json_array_foreach(json_object_get(spec, "volumes"), j, e)
        {
            const char *cn =
                json_string_value(json_object_get(json_object_get(e, "configMap"), "name"));
            vol = vol || (cn && strcmp(cn, cm) == 0);
        }
        json_array_foreach(json_object_get(spec, "initContainers"), j, e)
        {
            const char *nm = json_string_value(json_object_get(e, "name"));
            init = init || (nm && strcmp(nm, "preflight-nccl-allreduce") == 0);
        }
        good += vol && init;
    }
    json_decref(list);
    return good;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_gang_burst PATH/TO/gpuready-preflight [pods=1028] "
                        "[writers=64]\n");
        return 2;
    }
    const char *bin = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 1028;
    int w = argc > 3 ? atoi(argv[3]) : 64;
    if (n < 1 || w < 1 || w > MAXW)
        die("bad pods/writers");
    if (gr_harness_open(&g_c) != 0)
        die("no cluster (GR_CLUSTER_DIR; scripts/cluster up DIR)");
    pin_parse();
    pin_rest();
    signal(SIGPIPE, SIG_IGN);
    snprintf(g_work, sizeof g_work, "/tmp/gang-burst-XXXXXX");
    if (!mkdtemp(g_work))
        die("mkdtemp");
    sh("mkdir -p %s/certs", g_work);
    certs();
    char *ca = ca_bundle();
    char src[4096];
    gr_harness_source_path("test/fixtures/crds/volcano-podgroup.yaml", src, sizeof src);
    if (gr_harness_apply_file(&g_c, NULL, src) != 0)
        die("volcano CRD");
    const char *kv = getenv("GR_BENCH_KILL");
    bool killrun = !(kv && strcmp(kv, "0") == 0);
    char ns_none[128], ns_static[128], ns_real[128], ns_kill[128] = "";
    if ((killrun && gr_harness_ns_create(&g_c, "burst-kill", ns_kill, sizeof ns_kill) != 0) ||
        gr_harness_ns_create(&g_c, "burst-none", ns_none, sizeof ns_none) != 0 ||
        gr_harness_ns_create(&g_c, "burst-static", ns_static, sizeof ns_static) != 0 ||
        gr_harness_ns_create(&g_c, "burst-real", ns_real, sizeof ns_real) != 0)
        die("namespaces");
    gr_harness_result r, r_;
    gr_harness_kubectl(&g_c, &r, "label", "namespace", ns_static, "gpuready.bench/burst=static",
                       NULL);
    gr_harness_result_free(&r);
    gr_harness_kubectl(&g_c, &r, "label", "namespace", ns_real, "gpuready.bench/burst=real", NULL);
    gr_harness_result_free(&r);
    if (killrun) {
        gr_harness_kubectl(&g_c, &r, "label", "namespace", ns_kill, "gpuready.bench/burst=kill",
                           NULL);
        gr_harness_result_free(&r);
    }

    /* the real webhook, as deployed (default flags) */
    char cfgpath[512];
    snprintf(cfgpath, sizeof cfgpath, "%s/config.yaml", g_work);
    FILE *cf = fopen(cfgpath, "w");
    if (!cf)
        die("config");
    const char *ng = getenv("GR_BENCH_NO_GANG");
    bool gang = !(ng && *ng && strcmp(ng, "0") != 0);
    fputs(gang ? "connectorSocket: \"\"\ngangCoordination: {enabled: true}\n"
               : "connectorSocket: \"\"\n",
          cf);
    fputs("gangDiscovery:\n"
          "  name: volcano\n  annotationKeys: [\"scheduling.k8s.io/group-name\"]\n"
          "  podGroupGVR: {group: scheduling.volcano.sh, version: v1beta1, resource: podgroups}\n"
          "initContainers:\n  - {name: preflight-nccl-allreduce, image: allreduce:v1}\n",
          cf);
    fclose(cf);
    int port_real = free_port(), port_probe = port_real + 1;
    pid_t child = start_serve(bin, "a", port_real, port_probe, cfgpath, ns_real);
    /* the do-nothing webhook */
    gr_preflight_config *scfg = NULL;
    gr_err err;
    static const char sy[] = "connectorSocket: \"\"\ngpuResourceNames: [\"example.com/none\"]\n"
                             "initContainers:\n  - {name: preflight-dcgm-diag, image: x:1}\n";
    if (gr_preflight_config_parse(sy, sizeof sy - 1, "static", NULL, NULL, &scfg, &err) != GR_OK)
        die(err.msg);
    char certdir[512];
    snprintf(certdir, sizeof certdir, "%s/certs", g_work);
    gr_preflight_server_opts so = {
        .port = 0, .cert_dir = certdir, .threads = 2, .loopback_only = true};
    gr_preflight_server *ss = NULL;
    gr_preflight_gang_ops none = {0};
    /* The do-nothing webhook's server threads inherit this thread's CPUs:
     * with GR_BENCH_WEBHOOK_CPUS they run where the real webhook runs. */
    if (g_pin)
        (void)sched_setaffinity(0, sizeof g_wh_cpus, &g_wh_cpus);
    if (gr_preflight_server_start(&so, scfg, &none, &ss, &err) != GR_OK)
        die(err.msg);
    if (g_pin)
        (void)sched_setaffinity(0, sizeof g_other_cpus, &g_other_cpus);
    int port_static = gr_preflight_server_port(ss);

    /* wait for the real webhook to be ready */
    char cmd[1024];
    bool ready = false;
    for (int i = 0; i < 600 && !ready; i++) {
        ready = webhook_ready(port_real);
        if (!ready)
            usleep(100000);
    }
    if (!ready)
        die("the webhook did not become ready (see its log in the work dir)");
    register_webhook("static", port_static, "static", ca);
    register_webhook("preflight", port_real, "real", ca);
    char pg[512];
    snprintf(pg, sizeof pg,
             "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: big}\n"
             "spec: {minMember: %d}\n",
             n);
    if (gr_harness_apply_yaml(&g_c, ns_real, pg) != 0)
        die("PodGroup");
    sleep(3); /* the API server picks webhook configurations up asynchronously */

    gr_kube_client *kc = client();
    /* Rounds of the three bursts, in alternating order (none, static, real;
     * then real, static, none; ...), each into fresh namespaces: on a small
     * machine one burst's figure moves with whatever ran just before it, so
     * the ratio is taken per round and the median reported. */
    const char *rv = getenv("GR_BENCH_ROUNDS");
    int rounds = rv && atoi(rv) > 0 ? atoi(rv) : 3;
    if (rounds > MAXR)
        rounds = MAXR;
    double t_r[MAXR][3];
    int failed_r[3] = {0, 0, 0};
    cpu_split cpu_sum[3];
    memset(cpu_sum, 0, sizeof cpu_sum);
    char *m0 = apiserver_metrics(kc);
    for (int rd = 0; rd < rounds; rd++) {
        char nss[3][128];
        snprintf(nss[0], sizeof nss[0], "%s", ns_none);
        snprintf(nss[1], sizeof nss[1], "%s", ns_static);
        snprintf(nss[2], sizeof nss[2], "%s", ns_real);
        if (rd > 0) { /* round 0 uses the namespaces made above */
            static const char *const pre[3] = {"burst-none", "burst-static", "burst-real"};
            static const char *const lab[3] = {NULL, "gpuready.bench/burst=static",
                                               "gpuready.bench/burst=real"};
            for (int k = 0; k < 3; k++) {
                if (gr_harness_ns_create(&g_c, pre[k], nss[k], sizeof nss[k]) != 0)
                    die("namespaces");
                if (lab[k]) {
                    gr_harness_kubectl(&g_c, &r_, "label", "namespace", nss[k], lab[k], NULL);
                    gr_harness_result_free(&r_);
                }
            }
            if (gr_harness_apply_yaml(&g_c, nss[2], pg) != 0)
                die("PodGroup");
            sleep(1);
        }
        for (int s = 0; s < 3; s++) {
            int k = rd % 2 ? 2 - s : s;
            burst b = {.ns = nss[k], .n = n, .w = w};
            cpu_split a, c;
            cpu_sample(&a, child);
            t_r[rd][k] = run_burst(&b);
            cpu_sample(&c, child);
            cpu_sum[k].apiserver += c.apiserver - a.apiserver;
            cpu_sum[k].etcd += c.etcd - a.etcd;
            cpu_sum[k].webhook += c.webhook - a.webhook;
            cpu_sum[k].bench += c.bench - a.bench;
            failed_r[k] += atomic_load(&b.failed);
        }
        fprintf(stderr,
                "bench_gang_burst: round %d: none %.1f, static %.1f, real %.1f pods/s (real/static "
                "%.1f %%)\n",
                rd + 1, n / t_r[rd][0], n / t_r[rd][1], n / t_r[rd][2],
                100.0 * t_r[rd][1] / t_r[rd][2]);
    }
    char *m1 = apiserver_metrics(kc);
    long rss = rss_of(child);

    /* gang completion: every pod gets an IP */
    burst b_ip = {.ns = ns_real, .n = n, .w = w, .phase = 1};
    if (gang)
        run_burst(&b_ip);
    double t_last_ip = now_s();
    char cmname[256];
    char gid[200];
    snprintf(gid, sizeof gid, "volcano-%s-big", ns_real);
    char *cmn = gr_preflight_gang_configmap_name(gid);
    snprintf(cmname, sizeof cmname, "%s", cmn ? cmn : "");
    free(cmn);
    double complete = -1;
    for (int i = 0; gang && i < 1200; i++) {
        if (peers_in(kc, ns_real, cmname) >= (size_t)n) {
            complete = now_s() - t_last_ip;
            break;
        }
        usleep(100000);
    }

    hist a_static, a_real, a_static0, a_real0, wh;
    parse_hist(m1, "apiserver_admission_webhook_admission_duration_seconds",
               "name=\"static.gpuready.bench\"", &a_static);
    parse_hist(m1, "apiserver_admission_webhook_admission_duration_seconds",
               "name=\"preflight.gpuready.bench\"", &a_real);
    parse_hist(m0, "apiserver_admission_webhook_admission_duration_seconds",
               "name=\"static.gpuready.bench\"", &a_static0);
    parse_hist(m0, "apiserver_admission_webhook_admission_duration_seconds",
               "name=\"preflight.gpuready.bench\"", &a_real0);
    hist_sub(&a_static, &a_static0); /* this run's admissions only */
    hist_sub(&a_real, &a_real0);
    snprintf(cmd, sizeof cmd, "curl -sk https://127.0.0.1:%d/metrics 2>/dev/null", port_real);
    char *wm = read_cmd(cmd);
    parse_hist(wm ? wm : "", "preflight_webhook_latency_seconds", "", &wh);
    /* the do-nothing webhook's own histogram, same HTTP stack: what the
     * machine's load alone does to a request */
    hist whs;
    gr_buf sm = GR_BUF_INIT(4 * 1024 * 1024);
    gr_preflight_server_metrics(ss, &sm);
    parse_hist(gr_buf_cstr(&sm), "preflight_webhook_latency_seconds", "", &whs);
    gr_buf_free(&sm);

    printf("gang_burst_pods: %d pods\ngang_burst_writers: %d writers\n", n, w);
    double pps[3][MAXR], ratio[MAXR];
    for (int k = 0; k < 3; k++)
        for (int rd = 0; rd < rounds; rd++)
            pps[k][rd] = n / t_r[rd][k];
    for (int rd = 0; rd < rounds; rd++)
        ratio[rd] = 100.0 * t_r[rd][1] / t_r[rd][2];
    printf("gang_burst_rounds: %d rounds\n", rounds);
    printf("gang_burst_pinned: %d (webhook on its own CPUs: %s)\n", g_pin ? 1 : 0,
           g_pin ? getenv("GR_BENCH_WEBHOOK_CPUS") : "no");
    printf("gang_burst_none_pods_per_second: %.1f pods/s\n", median(pps[0], rounds));
    printf("gang_burst_static_pods_per_second: %.1f pods/s\n", median(pps[1], rounds));
    printf("gang_burst_real_pods_per_second: %.1f pods/s\n", median(pps[2], rounds));
    printf("gang_burst_real_vs_static_percent: %.1f %%\n", median(ratio, rounds));
    printf("gang_burst_none_failed: %d pods\n", failed_r[0]);
    printf("gang_burst_static_failed: %d pods\n", failed_r[1]);
    printf("gang_burst_real_failed: %d pods\n", failed_r[2]);
    printf("gang_burst_apiserver_admissions_static: %.0f admissions\n", a_static.count);
    printf("gang_burst_apiserver_admissions_real: %.0f admissions\n", a_real.count);
    printf("gang_burst_apiserver_admission_static_p50_seconds: %g s\n", hist_q(&a_static, 0.5));
    printf("gang_burst_apiserver_admission_static_p99_seconds: %g s\n", hist_q(&a_static, 0.99));
    printf("gang_burst_apiserver_admission_real_p50_seconds: %g s\n", hist_q(&a_real, 0.5));
    printf("gang_burst_apiserver_admission_real_p99_seconds: %g s\n", hist_q(&a_real, 0.99));
    printf("gang_burst_apiserver_admission_static_mean_seconds: %.4f s\n",
           a_static.count > 0 ? a_static.sum / a_static.count : -1);
    printf("gang_burst_apiserver_admission_real_mean_seconds: %.4f s\n",
           a_real.count > 0 ? a_real.sum / a_real.count : -1);
    printf("gang_burst_webhook_p50_seconds: %g s\n", hist_q(&wh, 0.5));
    printf("gang_burst_webhook_p99_seconds: %g s\n", hist_q(&wh, 0.99));
    printf("gang_burst_webhook_mean_seconds: %.6f s\n", wh.count > 0 ? wh.sum / wh.count : -1);
    printf("gang_burst_noop_webhook_p50_seconds: %g s\n", hist_q(&whs, 0.5));
    printf("gang_burst_noop_webhook_p99_seconds: %g s\n", hist_q(&whs, 0.99));
    printf("gang_burst_noop_webhook_mean_seconds: %.6f s\n",
           whs.count > 0 ? whs.sum / whs.count : -1);
    printf("gang_burst_gang_complete_after_last_ip_seconds: %.2f s\n", complete);
    printf("gang_burst_webhook_rss_bytes: %ld B\n", rss);
    static const cpu_split zero;
    cpu_print("none", &zero, &cpu_sum[0], n * rounds);
    cpu_print("static", &zero, &cpu_sum[1], n * rounds);
    cpu_print("real", &zero, &cpu_sum[2], n * rounds);
    fflush(stdout);

    /* the burst with one replica killed in the middle */
    pid_t child_b = -1;
    front fr = {.nb = 2};
    if (killrun && gang) {
        int port_b = free_port() + 2, probe_b = port_b + 1;
        child_b = start_serve(bin, "b", port_b, probe_b, cfgpath, ns_real);
        ready = false;
        for (int i = 0; i < 600 && !ready; i++) {
            ready = webhook_ready(port_b);
            if (!ready)
                usleep(100000);
        }
        if (!ready)
            die("the second replica did not become ready (see its log in the work dir)");
        fr.backends[0] = port_real;
        fr.backends[1] = port_b;
        front_start(&fr);
        register_webhook("preflight-kill", fr.port, "kill", ca);
        if (gr_harness_apply_yaml(&g_c, ns_kill, pg) != 0)
            die("PodGroup");
        sleep(3);
        bool a_leads = is_leader(port_real), b_leads = is_leader(port_b);
        pid_t victim = b_leads && !a_leads ? child_b : child;
        bool killed_leader = victim == child ? a_leads : b_leads;
        const char *ks = getenv("GR_BENCH_KILL_SIGNAL");
        int sig = ks && strcmp(ks, "TERM") == 0 ? SIGTERM : SIGKILL;
        burst b_kill = {
            .ns = ns_kill, .n = n, .w = w, .kill_at = n / 2, .kill_pid = victim, .kill_sig = sig};
        double t_kill = run_burst(&b_kill);
        if (victim == child)
            child = -1;
        else
            child_b = -1;
        waitpid(victim, NULL, 0);
        snprintf(gid, sizeof gid, "volcano-%s-big", ns_kill);
        cmn = gr_preflight_gang_configmap_name(gid);
        snprintf(cmname, sizeof cmname, "%s", cmn ? cmn : "");
        free(cmn);
        int inj = injected(kc, ns_kill, cmname);
        burst b_kip = {.ns = ns_kill, .n = n, .w = w, .phase = 1};
        run_burst(&b_kip);
        t_last_ip = now_s();
        complete = -1;
        for (int i = 0; i < 1200; i++) {
            if (peers_in(kc, ns_kill, cmname) >= (size_t)(n - atomic_load(&b_kill.failed))) {
                complete = now_s() - t_last_ip;
                break;
            }
            usleep(100000);
        }
        printf("gang_burst_kill_killed: %d replica (%s after %d of %d pods)\n",
               atomic_load(&b_kill.killed), sig == SIGTERM ? "SIGTERM" : "SIGKILL", n / 2, n);
        printf("gang_burst_kill_killed_leader: %d\n", killed_leader ? 1 : 0);
        printf("gang_burst_kill_pods_per_second: %.1f pods/s\n", n / t_kill);
        printf("gang_burst_kill_failed: %d pods\n", atomic_load(&b_kill.failed));
        printf("gang_burst_kill_injected: %d of %d pods\n", inj, n);
        printf("gang_burst_kill_gang_complete_after_last_ip_seconds: %.2f s\n", complete);
        fflush(stdout);
    }

    free(m0);
    free(m1);
    free(wm);
    gr_kube_client_free(kc);
    gr_harness_kubectl(&g_c, &r, "delete", "mutatingwebhookconfiguration", "static", "preflight",
                       "preflight-kill", "--ignore-not-found", NULL);
    gr_harness_result_free(&r);
    if (fr.lfd > 0)
        front_stop(&fr);
    for (int i = 0; i < 2; i++) {
        pid_t p = i ? child_b : child;
        if (p > 0) {
            kill(p, SIGTERM);
            waitpid(p, NULL, 0);
        }
    }
    gr_preflight_server_stop(ss);
    gr_preflight_config_free(scfg);
    gr_harness_ns_delete(&g_c, ns_none);
    gr_harness_ns_delete(&g_c, ns_static);
    gr_harness_ns_delete(&g_c, ns_real);
    if (*ns_kill)
        gr_harness_ns_delete(&g_c, ns_kill);
    sh("rm -rf %s", g_work);
    free(ca);
    return 0;
}
