/*
 * gpuready-manager — the NVCRE controller manager (the counterpart of
 * upstream's cluster-readiness-engine manager, cmd/manager/main.go) on the
 * gr_kube controller runtime. Flags follow upstream (fact sheet §6.1);
 * docs/manager.md describes them, the probes, metrics and leader election.
 *
 * Exit status: 0 after a clean stop (SIGTERM/SIGINT: intake stops,
 * in-flight reconciles finish, the lease is released), 1 when startup
 * fails or leader election is lost, 2 for bad flags.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gr_duration.h"
#include "gr_err.h"
#include "gr_kube_config.h"
#include "gr_measure_ctl.h"
#include "gr_kube_mgr.h"
#include "gr_kube_probe.h"
#include "gr_kube_rest.h"
#include "gr_log.h"
#include "gr_nvcre_wf_ctl.h"    /* Workflow controller (issue 16) */
#include "gr_nvcre_job_ctl.h"   /* Job controller (issue 15) */
#include "gr_nvcre_cert_ctl.h"  /* Certification controller (issue 17) */
#include "gr_nvcre_wlrun_ctl.h" /* WorkloadRun controller (issue 17) */

#define MOD            "manager"
#define LEASE_NAME     "240fe9c6.nvidia.com"
#define MAX_NAMESPACES 64
#define EXIT_USAGE     2

typedef struct flags {
    const char *metrics_addr;
    const char *probe_addr;
    bool leader_elect;
    const char *lease_ns;
    int64_t lease_duration_ns, renew_deadline_ns, retry_period_ns;
    long max_concurrent;
    long measurement_max_concurrent;
    const char *namespaces[MAX_NAMESPACES];
    size_t nnamespaces;
    const char *kubeconfig;
    const char *zap_log_level;
    bool enable_http2;
    int64_t workload_creation_deadline_ns; /* for the Job controller (nvcre-job-crd.md) */
    const char *controllers;               /* --controllers: "*" = every controller */
} flags;

/* The controllers --controllers may name (kube-controller-manager's syntax:
 * "*" = all, "name" enables, "-name" disables; comma-separated). */
static const char *const CONTROLLERS[] = {"job", "workflow", "certification", "workloadrun",
                                          "measurement"};

/* Is `name` in the comma-separated list (with an optional leading '-')? */
static bool list_has(const char *list, const char *name, bool negated)
{
    size_t nl = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        const char *w = p;
        bool neg = l > 0 && w[0] == '-';
        if (neg) {
            w++;
            l--;
        }
        if (neg == negated && l == nl && strncmp(w, name, nl) == 0)
            return true;
        p = e ? e + 1 : p + l + (neg ? 1 : 0);
    }
    return false;
}

static bool controller_enabled(const flags *f, const char *name)
{
    const char *l = f->controllers ? f->controllers : "*";
    if (list_has(l, name, true))
        return false;
    return list_has(l, name, false) || list_has(l, "*", false);
}

/* Every entry of --controllers must name a controller (or be "*"). */
static bool controllers_valid(const char *list, const char **bad_entry, size_t *bad_len)
{
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        const char *w = p;
        size_t wl = l;
        if (wl > 0 && w[0] == '-') {
            w++;
            wl--;
        }
        bool ok = wl == 1 && w[0] == '*' && w == p;
        for (size_t i = 0; !ok && i < sizeof CONTROLLERS / sizeof CONTROLLERS[0]; i++)
            ok = wl == strlen(CONTROLLERS[i]) && strncmp(w, CONTROLLERS[i], wl) == 0;
        if (!ok) {
            *bad_entry = p;
            *bad_len = l;
            return false;
        }
        if (!e)
            break;
        p = e + 1;
    }
    return true;
}

static void usage(FILE *f)
{
    fprintf(
        f,
        "Usage: gpuready-manager [flags]\n"
        "\n"
        "The NVCRE controller manager (nvcre.nvidia.com/v1alpha1).\n"
        "\n"
        "Flags:\n"
        "  --metrics-bind-address ADDR           serve /metrics here (\"0\" = off; default "
        "\"0\")\n"
        "  --health-probe-bind-address ADDR      serve /healthz and /readyz here (default "
        "\":8081\"; \"0\" = off)\n"
        "  --leader-elect                        elect a leader (Lease " LEASE_NAME
        "); default false\n"
        "  --leader-election-namespace NS        the Lease's namespace (default: "
        "$POD_NAMESPACE, the in-cluster\n"
        "                                        namespace file, else \"default\")\n"
        "  --leader-elect-lease-duration D       default 15s\n"
        "  --leader-elect-renew-deadline D       default 10s\n"
        "  --leader-elect-retry-period D         default 2s\n"
        "  --max-concurrent-reconciles N         Job, Workflow, Certification, WorkloadRun "
        "workers (default 10)\n"
        "  --measurement-max-concurrent-reconciles N\n"
        "                                        GoodputMeasurement, BandwidthMeasurement "
        "workers (default 5)\n"
        "  --namespace NS                        watch only NS (once; none = all "
        "namespaces)\n"
        "  --controllers LIST                    which controllers run (default \"*\"): "
        "comma-separated\n"
        "                                        names (job, workflow, certification, "
        "workloadrun,\n"
        "                                        measurement), \"*\" for all, \"-name\" to "
        "disable one\n"
        "  --kubeconfig PATH                     kubeconfig file (default: $KUBECONFIG, "
        "in-cluster, ~/.kube/config)\n"
        "  --enable-http2                        use HTTP/2 to the API server (default "
        "false)\n"
        "  --workload-creation-deadline D        how long the Job controller retries a rejected "
        "workload\n"
        "                                        create before failing the Job (default 10m)\n"
        "  --zap-log-level LEVEL                 debug, info, warn, error, or a number (>= 1 "
        "= debug)\n"
        "  --zap-devel                           accepted for compatibility (logs are always "
        "JSON)\n"
        "  -h, --help                            show this help\n"
        "      --version                         print the version\n"
        "\n"
        "Durations use Go syntax (15s, 1m30s). Every flag takes --flag=value or --flag value.\n");
}

__attribute__((format(printf, 1, 2))) static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gpuready-manager: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nRun 'gpuready-manager --help' for usage.\n");
    return EXIT_USAGE;
}

static int parse_bool(const char *name, const char *v, bool *out)
{
    if (!v || strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcmp(v, "t") == 0 ||
        strcmp(v, "TRUE") == 0 || strcmp(v, "True") == 0)
        *out = true;
    else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0 || strcmp(v, "f") == 0 ||
             strcmp(v, "FALSE") == 0 || strcmp(v, "False") == 0)
        *out = false;
    else
        return bad("invalid value \"%s\" for %s: expected true or false", v, name);
    return 0;
}

static int parse_dur(const char *name, const char *v, int64_t *out)
{
    gr_err err;
    if (gr_duration_parse(v, out, &err) != GR_OK || *out <= 0)
        return bad("invalid value \"%s\" for %s: expected a positive Go duration such as 15s", v,
                   name);
    return 0;
}

static int parse_int(const char *name, const char *v, long *out)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (!*v || *end || errno || n < 1 || n > GR_KUBE_MGR_MAX_WORKERS) {
        char range[64];
        snprintf(range, sizeof range, "%s (1..%d)", name, GR_KUBE_MGR_MAX_WORKERS);
        return bad("invalid value \"%s\" for %s", v, range);
    }
    *out = n;
    return 0;
}

/* Returns 0, EXIT_USAGE, or -1 after --help/--version (exit 0). */
static int parse_flags(int argc, char **argv, flags *f)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0 || strcmp(a, "-help") == 0) {
            usage(stdout);
            return -1;
        }
        if (strcmp(a, "--version") == 0) {
            printf("gpuready-manager %s\n", GR_VERSION);
            return -1;
        }
        if (strncmp(a, "--", 2) != 0 || !a[2])
            return bad("unexpected argument \"%s\"%s", a, " (flags start with --)");
        char name[96];
        const char *eq = strchr(a, '=');
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
        if (nl >= sizeof name)
            return bad("unknown flag: %.80s%s", a, "");
        memcpy(name, a, nl);
        name[nl] = '\0';
        const char *v = eq ? eq + 1 : NULL;
        static const char *const bools[] = {"--leader-elect", "--enable-http2", "--zap-devel"};
        bool is_bool = false;
        for (size_t k = 0; k < sizeof bools / sizeof bools[0]; k++)
            is_bool = is_bool || strcmp(name, bools[k]) == 0;
        if (is_bool) {
            bool b = false;
            int rc = parse_bool(name, v, &b);
            if (rc)
                return rc;
            if (strcmp(name, "--leader-elect") == 0)
                f->leader_elect = b;
            else if (strcmp(name, "--enable-http2") == 0)
                f->enable_http2 = b;
            continue;
        }
        static const char *const valued[] = {
            "--metrics-bind-address",
            "--health-probe-bind-address",
            "--leader-election-namespace",
            "--leader-elect-lease-duration",
            "--leader-elect-renew-deadline",
            "--leader-elect-retry-period",
            "--max-concurrent-reconciles",
            "--measurement-max-concurrent-reconciles",
            "--namespace",
            "--kubeconfig",
            "--zap-log-level",
            "--workload-creation-deadline",
            "--controllers",
        };
        bool known = false;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
            known = known || strcmp(name, valued[k]) == 0;
        if (!known)
            return bad("unknown flag: %s%s", name, "");
        if (!v) {
            if (i + 1 >= argc)
                return bad("flag needs an argument: %s%s", name, "");
            v = argv[++i];
        }
        int rc = 0;
        if (strcmp(name, "--metrics-bind-address") == 0)
            f->metrics_addr = v;
        else if (strcmp(name, "--health-probe-bind-address") == 0)
            f->probe_addr = v;
        else if (strcmp(name, "--leader-election-namespace") == 0)
            f->lease_ns = v;
        else if (strcmp(name, "--leader-elect-lease-duration") == 0)
            rc = parse_dur(name, v, &f->lease_duration_ns);
        else if (strcmp(name, "--leader-elect-renew-deadline") == 0)
            rc = parse_dur(name, v, &f->renew_deadline_ns);
        else if (strcmp(name, "--leader-elect-retry-period") == 0)
            rc = parse_dur(name, v, &f->retry_period_ns);
        else if (strcmp(name, "--max-concurrent-reconciles") == 0)
            rc = parse_int(name, v, &f->max_concurrent);
        else if (strcmp(name, "--measurement-max-concurrent-reconciles") == 0)
            rc = parse_int(name, v, &f->measurement_max_concurrent);
        else if (strcmp(name, "--namespace") == 0) {
            if (!*v)
                continue; /* --namespace= : all namespaces */
            if (f->nnamespaces == 1 && strcmp(f->namespaces[0], v) != 0)
                /* The controllers' informers watch one namespace or all:
                 * refuse rather than silently watch every namespace. */
                return bad("--namespace given twice (\"%s\" and \"%s\"): a manager watches one "
                           "namespace or all of them; run one manager per namespace, or omit "
                           "--namespace to watch all",
                           f->namespaces[0], v);
            if (f->nnamespaces == 0 && f->nnamespaces < MAX_NAMESPACES)
                f->namespaces[f->nnamespaces++] = v;
        } else if (strcmp(name, "--kubeconfig") == 0)
            f->kubeconfig = v;
        else if (strcmp(name, "--zap-log-level") == 0)
            f->zap_log_level = v;
        else if (strcmp(name, "--workload-creation-deadline") == 0)
            rc = parse_dur(name, v, &f->workload_creation_deadline_ns);
        else if (strcmp(name, "--controllers") == 0) {
            const char *be = NULL;
            size_t bl = 0;
            if (!controllers_valid(v, &be, &bl)) {
                fprintf(stderr,
                        "gpuready-manager: --controllers: unknown controller \"%.*s\" (known: *, "
                        "job, workflow, certification, workloadrun, measurement; \"-name\" "
                        "disables one)\n",
                        (int)bl, be);
                return EXIT_USAGE;
            }
            f->controllers = v;
        }
        if (rc)
            return rc;
    }
    if (f->leader_elect && !(f->renew_deadline_ns < f->lease_duration_ns))
        return bad("--leader-elect-renew-deadline must be shorter than "
                   "--leader-elect-lease-duration%s%s",
                   "", "");
    if (f->leader_elect && !(f->retry_period_ns < f->renew_deadline_ns))
        return bad("--leader-elect-retry-period must be shorter than "
                   "--leader-elect-renew-deadline%s%s",
                   "", "");
    return 0;
}

/* zap: "debug", "info", "error", "panic", or an integer verbosity (> 0 is
 * debug in controller-runtime's mapping). */
static int apply_log_level(const char *v)
{
    if (!v)
        return 0;
    gr_log_level lvl;
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (*v && !*end) {
        lvl = n >= 1 ? GR_LOG_DEBUG : GR_LOG_INFO;
    } else if (strcmp(v, "panic") == 0 || strcmp(v, "dpanic") == 0 || strcmp(v, "fatal") == 0) {
        lvl = GR_LOG_ERROR;
    } else if (gr_log_parse_level(v, &lvl) != GR_OK) {
        return bad("invalid value \"%s\" for --zap-log-level: expected debug, info, warn, error "
                   "or an integer%s",
                   v, "");
    }
    gr_log_set_level(lvl);
    return 0;
}

/* ---- controller registration point ---------------------------------------
 * The NVCRE controllers (Job, Workflow, Certification, WorkloadRun with
 * max_concurrent workers; GoodputMeasurement, BandwidthMeasurement with
 * measurement_max_concurrent) register here: declare their caches
 * (gr_kube_mgr_cache, optional for CRDs of other projects such as Kubeflow
 * TrainJob), add controllers (gr_kube_mgr_add_controller) and their watches.
 * Each controller keeps its registration in one block below. */

/* --- Job controller (issue 15, src/nvcre/gr_nvcre_job_ctl.h) --- */
static gr_nvcre_job_ctl *g_job_ctl;

static int register_job_controller(gr_kube_mgr *m, const flags *f, gr_err *err)
{
    gr_nvcre_job_ctl_opts o = {.workers = (int)f->max_concurrent,
                               .creation_deadline_ns = f->workload_creation_deadline_ns,
                               .ns = f->nnamespaces == 1 ? f->namespaces[0] : NULL};
    return gr_nvcre_job_ctl_register(m, &o, &g_job_ctl, err);
}
/* --- end Job controller --- */

static void free_wf_ctl(void *p)
{
    gr_nvcre_wf_ctl_free(p);
}

static void free_cert_ctl(void *p)
{
    gr_nvcre_cert_ctl_free(p);
}

static void free_wlrun_ctl(void *p)
{
    gr_nvcre_wlrun_ctl_free(p);
}

static int register_controllers(gr_kube_mgr *m, const flags *f, gr_err *err)
{
    int rc = GR_OK;
    if (controller_enabled(f, "job") && (rc = register_job_controller(m, f, err)) != GR_OK)
        return rc;
    /* ---- Certification controller (issue 17) ---- */
    if (controller_enabled(f, "certification")) {
        gr_nvcre_cert_ctl *cert = NULL;
        gr_nvcre_cert_ctl_opts o = {.workers = (int)f->max_concurrent,
                                    .ns = f->nnamespaces == 1 ? f->namespaces[0] : NULL};
        rc = gr_nvcre_cert_ctl_register(m, &o, &cert, err);
        if (rc == GR_OK && (rc = gr_kube_mgr_on_free(m, free_cert_ctl, cert, err)) != GR_OK)
            gr_nvcre_cert_ctl_free(cert);
        if (rc != GR_OK)
            return rc;
    }
    /* ---- WorkloadRun controller (issue 17) ---- */
    if (controller_enabled(f, "workloadrun")) {
        gr_nvcre_wlrun_ctl *run = NULL;
        gr_nvcre_wlrun_ctl_opts o = {.workers = (int)f->max_concurrent,
                                     .ns = f->nnamespaces == 1 ? f->namespaces[0] : NULL};
        rc = gr_nvcre_wlrun_ctl_register(m, &o, &run, err);
        if (rc == GR_OK && (rc = gr_kube_mgr_on_free(m, free_wlrun_ctl, run, err)) != GR_OK)
            gr_nvcre_wlrun_ctl_free(run);
        if (rc != GR_OK)
            return rc;
    }
    /* --- measurements (issue 18): GoodputMeasurement, BandwidthMeasurement */
    if (controller_enabled(f, "measurement") &&
        gr_measure_ctl_register(m, (int)f->measurement_max_concurrent, err) != GR_OK) {
        return err ? err->code : GR_EINVAL;
    }
    /* ---- Workflow controller (issue 16) ---- */
    if (controller_enabled(f, "workflow")) {
        gr_nvcre_wf_ctl *wf = NULL;
        gr_nvcre_wf_ctl_opts o = {.workers = (int)f->max_concurrent,
                                  .ns = f->nnamespaces == 1 ? f->namespaces[0] : NULL};
        const char *rq = getenv("GR_WORKFLOW_REQUEUE");
        if (rq && parse_dur("GR_WORKFLOW_REQUEUE", rq, &o.requeue_ns) != GR_OK)
            return gr_err_set(err, GR_EINVAL, "GR_WORKFLOW_REQUEUE: not a duration");
        rc = gr_nvcre_wf_ctl_register(m, &o, &wf, err);
        if (rc == GR_OK && (rc = gr_kube_mgr_on_free(m, free_wf_ctl, wf, err)) != GR_OK)
            gr_nvcre_wf_ctl_free(wf);
        if (rc != GR_OK)
            return rc;
    }
    return GR_OK;
}

static atomic_int g_stop;
static sigset_t g_sigs;

/* Memory (issue 19): the controllers' worker threads build and drop many
 * short-lived JSON documents. glibc gives every thread that allocates while
 * another holds an arena an arena of its own (up to 8 per core), and free
 * memory left in one arena serves no other: with ~50 workers free memory
 * piles up in many arenas. Two arenas bound that (the workers
 * spend their time waiting on the API server, not in malloc), and the
 * signal thread hands free pages back to the kernel every TRIM_PERIOD_S
 * (malloc_trim also releases whole free pages inside the heaps, which
 * free() never does). Figures: docs/manager.md § Resource use. */
#define MALLOC_ARENAS 2
#define TRIM_PERIOD_S 10

static void *signal_thread(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec period = {.tv_sec = TRIM_PERIOD_S};
        int sig = sigtimedwait(&g_sigs, NULL, &period);
        if (sig > 0) {
            gr_log(GR_LOG_INFO, MOD, "shutting down", GR_KV_STR("signal", strsignal(sig)),
                   GR_KV_END);
            atomic_store(&g_stop, 1);
            return NULL;
        }
        if (errno == EAGAIN)
            malloc_trim(0);
    }
}

int main(int argc, char **argv)
{
    gr_err err;
    gr_err_clear(&err);
    if (gr_log_init(GR_VERSION, &err) != GR_OK)
        fprintf(stderr, "gpuready-manager: %s\n", err.msg);
    flags f = {.metrics_addr = "0",
               .probe_addr = ":8081",
               .lease_duration_ns = 15000000000LL,
               .renew_deadline_ns = 10000000000LL,
               .retry_period_ns = 2000000000LL,
               .max_concurrent = 10,
               .measurement_max_concurrent = 5,
               .workload_creation_deadline_ns = 600000000000LL};
    int prc = parse_flags(argc, argv, &f);
    if (prc < 0)
        return 0;
    if (prc > 0)
        return prc;
    if (apply_log_level(f.zap_log_level))
        return EXIT_USAGE;
    gr_err_clear(&err);
    bool off;
    uint32_t ip;
    int port;
    if (gr_kube_bind_parse(f.metrics_addr, &off, &ip, &port, &err) != GR_OK)
        return bad("--metrics-bind-address: %s%s", err.msg, "");
    if (gr_kube_bind_parse(f.probe_addr, &off, &ip, &port, &err) != GR_OK)
        return bad("--health-probe-bind-address: %s%s", err.msg, "");

    mallopt(M_ARENA_MAX, MALLOC_ARENAS); /* before any thread starts */
    /* Signals go to the signal thread only (blocked before any thread starts). */
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&g_sigs);
    sigaddset(&g_sigs, SIGTERM);
    sigaddset(&g_sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &g_sigs, NULL);

    gr_kube_config cfg;
    if (gr_kube_config_load(f.kubeconfig, NULL, &cfg, &err) != GR_OK) {
        gr_log(GR_LOG_ERROR, MOD, "unable to load the Kubernetes client configuration",
               GR_KV_STR("error", err.msg), GR_KV_END);
        return 1;
    }
    cfg.http2 = f.enable_http2;
    /* controller-runtime's client defaults (client-go's 5/10 would hold
     * 2,000 Jobs' writes to minutes; issue 15's benchmark). */
    if (cfg.qps == 0)
        cfg.qps = 20;
    if (cfg.burst == 0)
        cfg.burst = 30;
    if (!cfg.user_agent)
        cfg.user_agent = strdup("gpuready-manager/" GR_VERSION);
    gr_kube_client *c = NULL;
    int rc = gr_kube_client_new(&cfg, &c, &err);
    gr_kube_config_free(&cfg);
    if (rc != GR_OK) {
        gr_log(GR_LOG_ERROR, MOD, "unable to create the Kubernetes client",
               GR_KV_STR("error", err.msg), GR_KV_END);
        return 1;
    }
    char lns[256], id[400];
    gr_kube_mgr_lease_namespace(f.lease_ns, lns, sizeof lns);
    gr_kube_mgr_identity("gpuready-manager", id, sizeof id);
    gr_kube_mgr_opts mo = {.name = MOD,
                           .probe_addr = f.probe_addr,
                           .metrics_addr = f.metrics_addr,
                           .leader_elect = f.leader_elect,
                           .lease_ns = lns,
                           .lease_name = LEASE_NAME,
                           .identity = id,
                           .lease_duration_ns = f.lease_duration_ns,
                           .renew_deadline_ns = f.renew_deadline_ns,
                           .retry_period_ns = f.retry_period_ns};
    gr_kube_mgr *m = NULL;
    if (gr_kube_mgr_new(c, &mo, &m, &err) != GR_OK) { /* frees the client */
        gr_log(GR_LOG_ERROR, MOD, "unable to create the manager", GR_KV_STR("error", err.msg),
               GR_KV_END);
        return 1;
    }
    if (register_controllers(m, &f, &err) != GR_OK) {
        gr_log(GR_LOG_ERROR, MOD, "unable to register the controllers", GR_KV_STR("error", err.msg),
               GR_KV_END);
        gr_kube_mgr_free(m);
        return 1;
    }
    pthread_t st;
    if (pthread_create(&st, NULL, signal_thread, NULL) != 0) {
        gr_log(GR_LOG_ERROR, MOD, "cannot start the signal thread", GR_KV_END);
        gr_kube_mgr_free(m);
        return 1;
    }
    pthread_detach(st);
    gr_log(GR_LOG_INFO, MOD, "starting manager", GR_KV_STR("version", GR_VERSION),
           GR_KV_STR("metrics-bind-address", f.metrics_addr),
           GR_KV_STR("health-probe-bind-address", f.probe_addr),
           GR_KV_BOOL("leader-elect", f.leader_elect), GR_KV_STR("identity", id),
           GR_KV_STR("lease-namespace", lns), GR_KV_INT("namespaces", (long long)f.nnamespaces),
           GR_KV_INT("max-concurrent-reconciles", f.max_concurrent),
           GR_KV_INT("measurement-max-concurrent-reconciles", f.measurement_max_concurrent),
           GR_KV_INT("workload-creation-deadline-seconds",
                     f.workload_creation_deadline_ns / 1000000000LL),
           GR_KV_END);
    if (gr_kube_mgr_start(m, &err) != GR_OK) {
        gr_log(GR_LOG_ERROR, MOD, "problem running manager", GR_KV_STR("error", err.msg),
               GR_KV_END);
        gr_kube_mgr_free(m);
        return 1;
    }
    int exit_code = 0;
    if (gr_kube_mgr_wait(m, &g_stop, &err) != GR_OK) {
        gr_log(GR_LOG_ERROR, MOD, "problem running manager", GR_KV_STR("error", err.msg),
               GR_KV_END);
        exit_code = 1;
    }
    /* what the API client did over the manager's life (the client goes with m) */
    uint64_t nreq = gr_kube_client_requests(c), nconn = gr_kube_client_connections(c);
    gr_kube_mgr_free(m);              /* graceful: drain, release the lease */
    gr_nvcre_job_ctl_free(g_job_ctl); /* Job controller: after the manager stopped */
    gr_log(GR_LOG_INFO, MOD, "manager stopped", GR_KV_INT("exit", exit_code),
           GR_KV_INT("api-requests", nreq), GR_KV_INT("api-connections", nconn), GR_KV_END);
    return exit_code;
}
