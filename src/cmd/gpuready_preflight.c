/*
 * gpuready-preflight — the preflight admission webhook and, when
 * gangCoordination.enabled, the gang controllers in the same process
 * (src/gang: discoverer validation at startup, admission-time gang
 * ConfigMaps, the coordinator, the PreflightConfig controller, the trimmed
 * Pod cache; docs/webhook.md, docs/gang.md).
 *
 *   gpuready-preflight [serve] [--port 8443] [--cert-dir /certs]
 *                      [--config /etc/preflight/config.yaml]
 *                      [--max-body-bytes N] [--threads N] [--timeout S]
 *                      [--kubeconfig FILE] [--kube-api-qps 5]
 *                      [--kube-api-burst 10] [--workers 4] [--loopback]
 *   gpuready-preflight inject --config config.yaml [--namespace NS]
 *                      [--gang-id ID] [--output yaml|json|patch] pod.yaml
 *   gpuready-preflight check-config --config config.yaml
 *   gpuready-preflight check-gang --config config.yaml [--kubeconfig FILE]
 *                      validate the default gang discoverer against the
 *                      cluster, print it and exit (`check` is an alias)
 *
 * With publishTo: deployment (and not healthPublish.insecure) the same
 * process runs the CA bundle sync of src/casync: it keeps the ConfigMap
 * nvsentinel-platform-connector-ca, copied from healthPublish.caFile, in every
 * namespace the webhook injects into (PF-171..PF-175).
 *
 * The kube client (gang coordination, CA bundle sync) comes from --kubeconfig,
 * else $KUBECONFIG, else the in-cluster service account, else
 * ~/.kube/config.
 *
 * `gpuready-preflight-gang` is the same binary under its old name (a
 * symlink, src/cmd/CMakeLists.txt), kept for deployments that still call it.
 *
 * Exit status: 0 ok; 1 invalid config or fatal error (logged as
 * {"level":"ERROR","msg":"Fatal error","error":...}, e.g. the native gang API
 * missing: PF-10, PF-11); 2 usage; `inject` exits 3 when the admission would
 * be denied (the denial is printed on stderr).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gr_casync.h"
#include "gr_duration.h"
#include "gr_file.h"
#include "gr_gang_ctl.h"
#include "gr_json.h"
#include "gr_kube_config.h"
#include "gr_kube_mgr.h"
#include "gr_kube_probe.h"
#include "gr_log.h"
#include "gr_preflight.h"
#include "gr_preflight_server.h"
#include "gr_yaml.h"

#define MOD "preflight"

/* Largest `inject` output (the mutated Pod or the patch). */
#define OUTPUT_MAX ((size_t)64 * 1024 * 1024)

static const char *prog = "gpuready-preflight";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s [serve] [--port N] [--cert-dir DIR] [--config FILE]\n"
            "           [--max-body-bytes N] [--threads N] [--timeout SECONDS]\n"
            "           [--kubeconfig FILE] [--kube-api-qps N] [--kube-api-burst N]\n"
            "           [--workers N] [--loopback]\n"
            "           [--leader-elect[=true|false]] [--leader-election-namespace NS]\n"
            "           [--leader-elect-lease-duration 15s] [--leader-elect-renew-deadline 10s]\n"
            "           [--leader-elect-retry-period 2s] [--health-probe-bind-address :8081]\n"
            "           [--metrics-bind-address 0] [--field-manager gpuready-preflight]\n"
            "       %s inject --config FILE [--namespace NS] [--gang-id ID]\n"
            "           [--output yaml|json|patch] POD.yaml\n"
            "       %s check-config --config FILE\n"
            "       %s check-gang --config FILE [--kubeconfig FILE]\n",
            prog, prog, prog, prog);
}

static void warn_cb(void *ud, const char *msg)
{
    (void)ud;
    gr_log(GR_LOG_WARN, MOD, msg, GR_KV_END);
}

/* A whole file ("-": standard input), at most max bytes. */
static int read_all(const char *path, char **out, size_t *len, size_t max, gr_err *err)
{
    if (strcmp(path, "-") == 0)
        return gr_file_read_fd(0, "standard input", max, out, len, err);
    return gr_file_read(path, max, out, len, err);
}

static int load_config(const char *path, gr_preflight_config **cfg, gr_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = read_all(path, &text, &len, GR_PREFLIGHT_CONFIG_MAX, err);
    if (rc == GR_OK)
        rc = gr_preflight_config_parse(text, len, path, warn_cb, NULL, cfg, err);
    free(text);
    return rc;
}

/* ------------------------------------------------------------- inject */

static int offline_resolve(void *ud, const json_t *pod, const char *ns, gr_preflight_gang_ctx *ctx,
                           gr_err *err)
{
    (void)pod;
    (void)ns;
    const char *id = ud;
    ctx->gang_id = strdup(id);
    ctx->configmap_name = gr_preflight_gang_configmap_name(id);
    if (!ctx->gang_id || !ctx->configmap_name) {
        gr_preflight_gang_ctx_clear(ctx);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    return GR_OK;
}

static int cmd_inject(int argc, char **argv)
{
    const char *config = NULL, *ns = "default", *gang_id = NULL, *output = "yaml";
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},  {"namespace", required_argument, NULL, 'n'},
        {"gang-id", required_argument, NULL, 'g'}, {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "c:n:g:o:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'c':
            config = optarg;
            break;
        case 'n':
            ns = optarg;
            break;
        case 'g':
            gang_id = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!config || optind != argc - 1 ||
        (strcmp(output, "yaml") && strcmp(output, "json") && strcmp(output, "patch"))) {
        usage(stderr);
        return 2;
    }
    gr_err err;
    gr_preflight_config *cfg = NULL;
    if (load_config(config, &cfg, &err) != GR_OK) {
        fprintf(stderr, "gpuready-preflight: invalid config: %s\n", err.msg);
        return 1;
    }
    json_t *pod = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = read_all(argv[optind], &text, &len, GR_YAML_MAX_FILE, &err);
    if (rc == GR_OK)
        rc = gr_yaml_load_one(text, len, argv[optind], &pod, &err);
    free(text);
    if (rc != GR_OK) {
        fprintf(stderr, "gpuready-preflight: %s\n", err.msg);
        gr_preflight_config_free(cfg);
        return 1;
    }
    gr_preflight_gang_ops ops = gr_preflight_gang_static_ops(cfg);
    if (gang_id) {
        ops.resolve = offline_resolve;
        ops.ud = (void *)(uintptr_t)gang_id;
    }
    int status = 0;
    gr_preflight_result res;
    if ((rc = gr_preflight_pod_check(pod, &err)) != GR_OK) {
        fprintf(stderr, "denied: failed to unmarshal pod: %s\n", err.msg);
        status = 3;
    } else if ((rc = gr_preflight_inject(cfg, &ops, pod, ns, &res, &err)) != GR_OK) {
        fprintf(stderr, "denied: failed to inject init containers: %s\n", err.msg);
        status = 3;
    } else {
        json_t *outv = NULL;
        if (strcmp(output, "patch") == 0) {
            outv = res.patch ? json_incref(res.patch) : json_array();
        } else if (res.patch) {
            if (gr_json_patch_apply_copy(pod, res.patch, &outv, &err) != GR_OK) {
                fprintf(stderr, "gpuready-preflight: internal error: %s\n", err.msg);
                status = 1;
            }
        } else {
            outv = json_incref(pod);
        }
        if (outv) {
            gr_buf b = GR_BUF_INIT(OUTPUT_MAX);
            if (strcmp(output, "yaml") == 0) {
                rc = gr_preflight_yaml_emit(outv, &b);
            } else {
                rc = gr_json_dump_buf(outv, JSON_INDENT(2), &b);
                if (rc == GR_OK)
                    rc = gr_buf_putc(&b, '\n');
            }
            if (rc == GR_OK)
                fwrite(b.data, 1, b.len, stdout);
            else
                status = 1;
            gr_buf_free(&b);
            json_decref(outv);
        }
        if (res.outcome != GR_PREFLIGHT_INJECTED)
            fprintf(stderr, "no preflight checks injected (pod not eligible or no check "
                            "selected)\n");
        gr_preflight_result_clear(&res);
    }
    json_decref(pod);
    gr_preflight_config_free(cfg);
    return status;
}

/* -------------------------------------------------------------- serve */

typedef struct serve_opts {
    const char *config;
    const char *kubeconfig; /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
    double qps;
    int burst;
    int workers;
    /* controller runtime (gr_kube_mgr.h), as gpuready-manager's flags */
    bool leader_elect;
    const char *lease_ns; /* NULL: $POD_NAMESPACE, the in-cluster namespace, "default" */
    int64_t lease_duration_ns, renew_deadline_ns, retry_period_ns;
    const char *probe_addr;    /* /healthz /readyz of the runtime */
    const char *metrics_addr;  /* "0": the runtime's metrics go to the webhook's /metrics */
    const char *field_manager; /* NULL: GR_GANG_FIELD_MANAGER */
    gr_preflight_server_opts srv;
} serve_opts;

/* The controllers (gang coordination, CA bundle sync) on one controller
 * runtime manager, which owns the kube client. */
typedef struct gang_rt {
    gr_kube_mgr *m;     /* NULL when nothing needs the API */
    gr_kube_client *kc; /* the manager's; or owned (check-gang) when m is NULL */
    gr_gang_service *svc;
    gr_casync *ca;               /* CA bundle sync, or NULL */
    gr_preflight_gang_ops inner; /* the gang resolver the hooks wrap */
} gang_rt;

static void gang_rt_free(gang_rt *g)
{
    if (g->m)
        gr_kube_mgr_free(g->m); /* graceful: drain, release the lease; frees kc */
    else
        gr_kube_client_free(g->kc);
    gr_casync_free(g->ca);
    gr_gang_service_free(g->svc);
    g->m = NULL;
    g->ca = NULL;
    g->svc = NULL;
    g->kc = NULL;
}

/* The kube client (flag, $KUBECONFIG, in-cluster), made once. */
static int open_client(const serve_opts *o, gang_rt *g, gr_err *err)
{
    if (g->kc)
        return GR_OK;
    gr_kube_config kcfg;
    memset(&kcfg, 0, sizeof kcfg);
    int rc = gr_kube_config_load(o->kubeconfig, NULL, &kcfg, err);
    if (rc != GR_OK) {
        gr_err_prefix(err, "failed to load the Kubernetes client configuration: ");
        return rc;
    }
    kcfg.qps = o->qps;
    kcfg.burst = o->burst;
    rc = gr_kube_client_new(&kcfg, &g->kc, err);
    gr_kube_config_free(&kcfg);
    if (rc != GR_OK) {
        gr_err_prefix(err, "failed to create the Kubernetes client: ");
        return rc;
    }
    return GR_OK;
}

/* The manager the controllers run on (takes the client). */
static int open_manager(const serve_opts *o, gang_rt *g, gr_err *err)
{
    if (g->m)
        return GR_OK;
    int rc = open_client(o, g, err);
    if (rc != GR_OK)
        return rc;
    char lns[256], id[512];
    gr_kube_mgr_lease_namespace(o->lease_ns, lns, sizeof lns);
    gr_kube_mgr_identity("gpuready-preflight", id, sizeof id);
    gr_kube_mgr_opts mo = {.name = "preflight-controllers",
                           .probe_addr = o->probe_addr,
                           .metrics_addr = o->metrics_addr,
                           .leader_elect = o->leader_elect,
                           .lease_ns = lns,
                           .lease_name = GR_GANG_LEASE_NAME,
                           .identity = id,
                           .lease_duration_ns = o->lease_duration_ns,
                           .renew_deadline_ns = o->renew_deadline_ns,
                           .retry_period_ns = o->retry_period_ns};
    gr_kube_client *kc = g->kc;
    g->kc = NULL;
    if ((rc = gr_kube_mgr_new(kc, &mo, &g->m, err)) != GR_OK) /* takes kc, also on failure */
        return rc;
    g->kc = gr_kube_mgr_client(g->m);
    gr_log(GR_LOG_INFO, MOD, "controller runtime", GR_KV_BOOL("leaderElect", o->leader_elect),
           GR_KV_STR("lease", GR_GANG_LEASE_NAME), GR_KV_STR("leaseNamespace", lns),
           GR_KV_STR("identity", id), GR_KV_STR("probeAddr", o->probe_addr), GR_KV_END);
    return GR_OK;
}

/*
 * The one place the server picks its gang resolver. Gang coordination off:
 * the static resolver, which derives the gang from the admission object
 * alone (docs/webhook.md "Gang context"; it only matters when the config is
 * later turned on). On: the gang service of src/gang (validates the default
 * discoverer against the cluster, then runs its controllers on the
 * manager: coordinator, topology and PreflightConfig status on the leader,
 * the PreflightConfig resolver on every replica); its ops are thread-safe,
 * make no API call, and `cfg` outlives the server.
 */
static int pick_gang_resolver(const serve_opts *o, const gr_preflight_config *cfg, gang_rt *g,
                              gr_preflight_gang_ops *out, gr_err *err)
{
    if (!cfg->gang.enabled) {
        *out = gr_preflight_gang_static_ops(cfg);
        return GR_OK;
    }
    int rc = open_manager(o, g, err);
    if (rc != GR_OK)
        return rc;
    gr_gang_service_opts go = {
        .client = g->kc, .cfg = cfg, .workers = o->workers, .field_manager = o->field_manager};
    if ((rc = gr_gang_service_new(&go, &g->svc, err)) != GR_OK) /* PF-10, PF-11 */
        return rc;
    if ((rc = gr_gang_service_attach(g->svc, g->m, err)) != GR_OK)
        return rc;
    *out = gr_gang_service_ops(g->svc);
    return GR_OK;
}

/* ------------------------------------------------------ CA bundle sync */

static bool casync_wanted(const gr_preflight_config *cfg)
{
    return cfg->publish.mode == GR_PREFLIGHT_PUBLISH_DEPLOYMENT && !cfg->publish.insecure;
}

/* The hooks composed around the gang resolver: resolve and admitted go to it
 * unchanged, injected also queues the namespace's CA bundle copy. */
static int hooks_resolve(void *ud, const json_t *pod, const char *ns, gr_preflight_gang_ctx *ctx,
                         gr_err *err)
{
    gang_rt *g = ud;
    if (!g->inner.resolve)
        return GR_ENOTFOUND;
    return g->inner.resolve(g->inner.ud, pod, ns, ctx, err);
}

static void hooks_admitted(void *ud, const json_t *pod, const char *ns, const char *pod_name,
                           const gr_preflight_gang_ctx *ctx)
{
    gang_rt *g = ud;
    if (g->inner.admitted)
        g->inner.admitted(g->inner.ud, pod, ns, pod_name, ctx);
}

static void hooks_injected(void *ud, const json_t *pod, const char *ns, const char *pod_name)
{
    gang_rt *g = ud;
    if (g->inner.injected)
        g->inner.injected(g->inner.ud, pod, ns, pod_name);
    /* PF-172 off the request path (issue 20): queue, no API call */
    gr_casync_enqueue(g->ca, ns);
}

/* publishTo: deployment: read the CA file, attach the sync to the manager
 * (PF-173, PF-174) and wrap *ops so every admission with a patch queues
 * its namespace. */
static int casync_open(const serve_opts *o, const gr_preflight_config *cfg, gang_rt *g,
                       gr_preflight_gang_ops *ops, gr_err *err)
{
    if (!casync_wanted(cfg))
        return GR_OK;
    gr_buf sel = GR_BUF_INIT(64 * 1024);
    int rc = GR_OK;
    if (cfg->publish.namespace_selector)
        rc = gr_casync_selector_string(cfg->publish.namespace_selector,
                                       "healthPublish.namespaceSelector", &sel, err);
    else
        rc = gr_buf_puts(&sel, GR_CASYNC_DEFAULT_NS_SELECTOR);
    if (rc == GR_OK)
        rc = open_manager(o, g, err);
    if (rc == GR_OK) {
        gr_casync_opts co = {
            .client = g->kc, .ca_file = cfg->publish.ca_file, .ns_selector = gr_buf_cstr(&sel)};
        if ((rc = gr_casync_new(&co, &g->ca, err)) == GR_OK)
            rc = gr_casync_attach(g->ca, g->m, err);
    }
    gr_buf_free(&sel);
    if (rc != GR_OK)
        return rc;
    g->inner = *ops;
    *ops = (gr_preflight_gang_ops){
        .resolve = hooks_resolve, .admitted = hooks_admitted, .injected = hooks_injected, .ud = g};
    return GR_OK;
}

/* The webhook's /readyz and /metrics include the runtime's. */
static bool rt_ready(void *ctx, char *why, size_t why_sz)
{
    return gr_kube_mgr_ready(ctx, why, why_sz);
}

static int rt_metrics(void *ctx, gr_buf *out)
{
    return gr_kube_mgr_metrics_text(ctx, out);
}

static int fatal(const char *msg)
{
    gr_log(GR_LOG_ERROR, MOD, "Fatal error", GR_KV_STR("error", msg), GR_KV_END);
    return 1;
}

static int parse_dur(const char *flag, const char *v, int64_t *out)
{
    gr_err err;
    if (gr_duration_parse(v, out, &err) != GR_OK || *out <= 0) {
        fprintf(stderr, "%s: must be a positive Go duration such as 15s\n", flag);
        return 2;
    }
    return -1;
}

/* Parse the options shared by serve and check-gang; returns -1 to go on,
 * else the exit status. */
static int parse_serve_opts(int argc, char **argv, serve_opts *o)
{
    enum {
        OPT_LE = 256,
        OPT_LE_NS,
        OPT_LE_DUR,
        OPT_LE_RENEW,
        OPT_LE_RETRY,
        OPT_PROBE,
        OPT_METRICS,
        OPT_FIELD_MANAGER,
    };
    static const struct option opts[] = {
        {"port", required_argument, NULL, 'p'},
        {"cert-dir", required_argument, NULL, 'd'},
        {"config", required_argument, NULL, 'c'},
        {"max-body-bytes", required_argument, NULL, 'm'},
        {"threads", required_argument, NULL, 't'},
        {"timeout", required_argument, NULL, 'T'},
        {"kubeconfig", required_argument, NULL, 'k'},
        {"kube-api-qps", required_argument, NULL, 'q'},
        {"kube-api-burst", required_argument, NULL, 'b'},
        {"workers", required_argument, NULL, 'w'},
        {"loopback", no_argument, NULL, 'l'},
        {"leader-elect", optional_argument, NULL, OPT_LE},
        {"leader-election-namespace", required_argument, NULL, OPT_LE_NS},
        {"leader-elect-lease-duration", required_argument, NULL, OPT_LE_DUR},
        {"leader-elect-renew-deadline", required_argument, NULL, OPT_LE_RENEW},
        {"leader-elect-retry-period", required_argument, NULL, OPT_LE_RETRY},
        {"health-probe-bind-address", required_argument, NULL, OPT_PROBE},
        {"metrics-bind-address", required_argument, NULL, OPT_METRICS},
        {"field-manager", required_argument, NULL, OPT_FIELD_MANAGER},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "p:d:c:m:t:T:k:q:b:w:lh", opts, NULL)) != -1) {
        char *end = NULL;
        unsigned long v = 0;
        if (optarg && ch < 256 && ch != 'q') {
            errno = 0;
            v = strtoul(optarg, &end, 10);
        }
        bool bad_num = optarg && ch < 256 && (errno || !end || *end || end == optarg);
        int st = -1;
        switch (ch) {
        case 'p':
            if (bad_num || v > 65535) {
                fprintf(stderr, "--port: must be 0..65535\n");
                return 2;
            }
            o->srv.port = (uint16_t)v;
            break;
        case 'd':
            o->srv.cert_dir = optarg;
            break;
        case 'c':
            o->config = optarg;
            break;
        case 'm':
            if (bad_num || v < 1024) {
                fprintf(stderr, "--max-body-bytes: must be a number >= 1024\n");
                return 2;
            }
            o->srv.max_body = v;
            break;
        case 't':
            if (bad_num || v < 1 || v > 256) {
                fprintf(stderr, "--threads: must be 1..256\n");
                return 2;
            }
            o->srv.threads = (unsigned)v;
            break;
        case 'T':
            if (bad_num || v < 1 || v > 600) {
                fprintf(stderr, "--timeout: must be 1..600 seconds\n");
                return 2;
            }
            o->srv.timeout_s = (unsigned)v;
            break;
        case 'k':
            o->kubeconfig = optarg;
            break;
        case 'q':
            errno = 0;
            o->qps = strtod(optarg, &end);
            if (errno || !end || *end || end == optarg || !(o->qps > 0 && o->qps <= 100000)) {
                fprintf(stderr, "--kube-api-qps: must be a number > 0 (e.g. 5)\n");
                return 2;
            }
            break;
        case 'b':
            if (bad_num || v < 1 || v > 100000) {
                fprintf(stderr, "--kube-api-burst: must be 1..100000\n");
                return 2;
            }
            o->burst = (int)v;
            break;
        case 'w':
            if (bad_num || v < 1 || v > 256) {
                fprintf(stderr, "--workers: must be 1..256\n");
                return 2;
            }
            o->workers = (int)v;
            break;
        case 'l':
            o->srv.loopback_only = true;
            break;
        case OPT_LE:
            if (!optarg || strcmp(optarg, "true") == 0)
                o->leader_elect = true;
            else if (strcmp(optarg, "false") == 0)
                o->leader_elect = false;
            else {
                fprintf(stderr, "--leader-elect: must be true or false\n");
                return 2;
            }
            break;
        case OPT_LE_NS:
            o->lease_ns = optarg;
            break;
        case OPT_LE_DUR:
            st = parse_dur("--leader-elect-lease-duration", optarg, &o->lease_duration_ns);
            break;
        case OPT_LE_RENEW:
            st = parse_dur("--leader-elect-renew-deadline", optarg, &o->renew_deadline_ns);
            break;
        case OPT_LE_RETRY:
            st = parse_dur("--leader-elect-retry-period", optarg, &o->retry_period_ns);
            break;
        case OPT_FIELD_MANAGER:
            if (!*optarg || strlen(optarg) > 128) {
                fprintf(stderr, "--field-manager: must be 1..128 characters\n");
                return 2;
            }
            o->field_manager = optarg;
            break;
        case OPT_PROBE:
        case OPT_METRICS: {
            bool off;
            uint32_t host;
            int port;
            gr_err e;
            if (gr_kube_bind_parse(optarg, &off, &host, &port, &e) != GR_OK) {
                fprintf(stderr, "--%s: %s\n",
                        ch == OPT_PROBE ? "health-probe-bind-address" : "metrics-bind-address",
                        e.msg);
                return 2;
            }
            if (ch == OPT_PROBE)
                o->probe_addr = optarg;
            else
                o->metrics_addr = optarg;
            break;
        }
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
        if (st >= 0)
            return st;
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    if (o->leader_elect && !(o->renew_deadline_ns < o->lease_duration_ns)) {
        fprintf(stderr, "--leader-elect-renew-deadline must be shorter than "
                        "--leader-elect-lease-duration\n");
        return 2;
    }
    return -1;
}

static void serve_opts_init(serve_opts *o)
{
    memset(o, 0, sizeof *o);
    o->config = "/etc/preflight/config.yaml";
    o->qps = 5;
    o->burst = 10;
    o->lease_duration_ns = 15LL * 1000000000LL;
    o->renew_deadline_ns = 10LL * 1000000000LL;
    o->retry_period_ns = 2LL * 1000000000LL;
    o->probe_addr = ":8081";
    o->metrics_addr = "0";
    o->srv.port = GR_PREFLIGHT_DEFAULT_PORT;
    o->srv.cert_dir = "/certs";
}

static int cmd_serve(int argc, char **argv)
{
    serve_opts o;
    serve_opts_init(&o);
    int status = parse_serve_opts(argc, argv, &o);
    if (status >= 0)
        return status;
    status = 0;
    gr_err err;
    gr_preflight_config *cfg = NULL;
    if (load_config(o.config, &cfg, &err) != GR_OK)
        return fatal(err.msg);
    /* Signals: SIGPIPE ignored; SIGTERM/SIGINT handled synchronously by
     * this thread (blocked before the server and controller threads start). */
    signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    gang_rt g = {0};
    gr_preflight_gang_ops gang;
    gr_preflight_server *srv = NULL;
    if (pick_gang_resolver(&o, cfg, &g, &gang, &err) != GR_OK ||
        casync_open(&o, cfg, &g, &gang, &err) != GR_OK ||
        (g.m && gr_kube_mgr_start(g.m, &err) != GR_OK)) {
        status = fatal(err.msg);
        goto out;
    }
    if (g.m) {
        o.srv.ready = rt_ready;
        o.srv.ready_ctx = g.m;
        if (strcmp(o.metrics_addr, "0") == 0 || !*o.metrics_addr) {
            o.srv.metrics = rt_metrics;
            o.srv.metrics_ctx = g.m;
        }
    }
    if (gr_preflight_server_start(&o.srv, cfg, &gang, &srv, &err) != GR_OK) {
        status = fatal(err.msg);
        goto out;
    }
    gr_log(GR_LOG_INFO, MOD, "serving", GR_KV_INT("port", gr_preflight_server_port(srv)),
           GR_KV_STR("certDir", o.srv.cert_dir), GR_KV_INT("checks", (long long)cfg->n_checks),
           GR_KV_BOOL("gangCoordination", cfg->gang.enabled),
           GR_KV_BOOL("caBundleSync", g.ca != NULL),
           GR_KV_INT("probePort", g.m ? gr_kube_mgr_probe_port(g.m) : 0), GR_KV_END);
    for (;;) {
        struct timespec tick = {1, 0};
        int sig = sigtimedwait(&set, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT) {
            gr_log(GR_LOG_INFO, MOD, "shutting down", GR_KV_STR("signal", strsignal(sig)),
                   GR_KV_END);
            break;
        }
        if (g.m) {
            /* losing the lease after leading is fatal (a fresh process is a
             * clean candidate), as in controller-runtime */
            static const atomic_int now = 1;
            if (gr_kube_mgr_wait(g.m, &now, &err) != GR_OK) {
                status = fatal(err.msg);
                break;
            }
        }
        int rc = gr_preflight_server_reload_certs(srv, &err);
        if (rc == 1)
            gr_log(GR_LOG_INFO, MOD, "reloaded serving certificate", GR_KV_END);
        else if (rc < 0)
            gr_log(GR_LOG_WARN, MOD, "certificate reload failed; keeping the previous pair",
                   GR_KV_STR("error", err.msg), GR_KV_END);
    }
    gr_preflight_server_drain(srv, 5000);
    gr_preflight_server_stop(srv);
    if (g.m)
        gr_kube_mgr_stop(g.m); /* in-flight reconciles finish, the lease is released */
    if (g.ca) {
        gr_casync_stats cs;
        gr_casync_stats_get(g.ca, &cs);
        gr_log(GR_LOG_INFO, MOD, "CA bundle sync stopped", GR_KV_INT("created", cs.created),
               GR_KV_INT("updated", cs.updated), GR_KV_INT("failures", cs.failures), GR_KV_END);
    }
    if (g.svc) {
        gr_gang_stats st;
        gr_gang_service_stats(g.svc, &st);
        gr_log(GR_LOG_INFO, MOD, "gang coordination stopped",
               GR_KV_INT("registered", st.registered),
               GR_KV_INT("configMapsCreated", st.cm_created),
               GR_KV_INT("configMapWrites", st.cm_writes), GR_KV_INT("conflicts", st.conflicts),
               GR_KV_END);
    }
    gr_log(GR_LOG_INFO, MOD, "stopped", GR_KV_END);
out:
    gang_rt_free(&g);
    gr_preflight_config_free(cfg);
    return status;
}

/* check-gang: validate the default discoverer against the cluster (what
 * serve does at startup, whether or not gang coordination is enabled). */
static int cmd_check_gang(int argc, char **argv)
{
    serve_opts o;
    serve_opts_init(&o);
    o.config = NULL;
    int status = parse_serve_opts(argc, argv, &o);
    if (status >= 0)
        return status;
    status = 0;
    if (!o.config) {
        usage(stderr);
        return 2;
    }
    gr_err err;
    gr_preflight_config *cfg = NULL;
    if (load_config(o.config, &cfg, &err) != GR_OK)
        return fatal(err.msg);
    gang_rt g = {0};
    gr_gang_service_opts go = {.cfg = cfg};
    if (open_client(&o, &g, &err) != GR_OK ||
        (go.client = g.kc, gr_gang_service_new(&go, &g.svc, &err)) != GR_OK) {
        status = fatal(err.msg);
    } else {
        gr_gang_discoverer *d = gr_gang_service_discoverer_for(g.svc, "");
        printf("gang discoverer: %s\n", gr_gang_discoverer_name(d));
        gr_gang_discoverer_unref(d);
    }
    gang_rt_free(&g);
    gr_preflight_config_free(cfg);
    return status;
}

static int cmd_check_config(int argc, char **argv)
{
    const char *config = NULL;
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {NULL, 0, NULL, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "c:", opts, NULL)) != -1) {
        if (ch != 'c') {
            usage(stderr);
            return 2;
        }
        config = optarg;
    }
    if (!config || optind != argc) {
        usage(stderr);
        return 2;
    }
    gr_err err;
    gr_preflight_config *cfg = NULL;
    if (load_config(config, &cfg, &err) != GR_OK) {
        fprintf(stderr, "gpuready-preflight: invalid config: %s\n", err.msg);
        return 1;
    }
    if (casync_wanted(cfg) && cfg->publish.namespace_selector) {
        gr_buf sel = GR_BUF_INIT(64 * 1024);
        int rc = gr_casync_selector_string(cfg->publish.namespace_selector,
                                           "healthPublish.namespaceSelector", &sel, &err);
        gr_buf_free(&sel);
        if (rc != GR_OK) {
            fprintf(stderr, "gpuready-preflight: invalid config: %s\n", err.msg);
            gr_preflight_config_free(cfg);
            return 1;
        }
    }
    printf("config ok: %zu checks, gang coordination %s\n", cfg->n_checks,
           cfg->gang.enabled ? "on" : "off");
    gr_preflight_config_free(cfg);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 0 && argv[0] && *argv[0]) {
        const char *slash = strrchr(argv[0], '/');
        prog = slash ? slash + 1 : argv[0];
    }
    gr_err err;
    if (gr_log_init(GR_VERSION, &err) != GR_OK)
        fprintf(stderr, "%s: %s\n", prog, err.msg);
    const char *cmd = argc > 1 ? argv[1] : "";
    if (strcmp(cmd, "inject") == 0)
        return cmd_inject(argc - 1, argv + 1);
    if (strcmp(cmd, "check-config") == 0)
        return cmd_check_config(argc - 1, argv + 1);
    if (strcmp(cmd, "check-gang") == 0 || strcmp(cmd, "check") == 0)
        return cmd_check_gang(argc - 1, argv + 1);
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "serve") == 0)
        return cmd_serve(argc - 1, argv + 1);
    if (*cmd && *cmd != '-') {
        fprintf(stderr, "%s: unknown command \"%s\"\n", prog, cmd);
        usage(stderr);
        return 2;
    }
    return cmd_serve(argc, argv);
}
