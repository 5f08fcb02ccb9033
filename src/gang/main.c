/*
 * gpuready-preflight-gang — the preflight webhook with gang coordination:
 * the HTTPS admission server (gr_preflight_server) plus, when
 * gangCoordination.enabled, the gang controllers (gr_gang_ctl): discoverer
 * validation at startup, admission-time gang ConfigMaps, the coordinator,
 * the PreflightConfig controller and the trimmed Pod cache.
 *
 *   gpuready-preflight-gang [serve] [--port 8443] [--cert-dir /certs]
 *        [--config /etc/preflight/config.yaml] [--kubeconfig FILE]
 *        [--kube-api-qps 5] [--kube-api-burst 10] [--workers 4]
 *        [--threads N] [--loopback]
 *   gpuready-preflight-gang check --config FILE [--kubeconfig FILE]
 *        validate the gang discoverer against the cluster and exit
 *
 * Exit status: 0 ok; 1 fatal error (logged as {"msg":"Fatal error",
 * "error":...}, e.g. the native gang API missing: PF-10, PF-11); 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gr_gang_ctl.h"
#include "gr_kube_config.h"
#include "gr_log.h"
#include "gr_preflight.h"
#include "gr_preflight_server.h"

#define MOD "preflight"

static void usage(FILE *f)
{
    fputs("usage: gpuready-preflight-gang [serve] [--port N] [--cert-dir DIR] [--config FILE]\n"
          "                 [--kubeconfig FILE] [--kube-api-qps N] [--kube-api-burst N]\n"
          "                 [--workers N] [--threads N] [--loopback]\n"
          "       gpuready-preflight-gang check --config FILE [--kubeconfig FILE]\n",
          f);
}

static void warn_cb(void *ud, const char *msg)
{
    (void)ud;
    gr_log(GR_LOG_WARN, MOD, msg, GR_KV_END);
}

static int fatal(const char *msg)
{
    gr_log(GR_LOG_ERROR, MOD, "Fatal error", GR_KV_STR("error", msg), GR_KV_END);
    return 1;
}

static int load_config(const char *path, gr_preflight_config **cfg, gr_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return gr_err_set(err, GR_EIO, "%s: %s", path, strerror(errno));
    gr_buf b = GR_BUF_INIT(GR_PREFLIGHT_CONFIG_MAX);
    char chunk[65536];
    size_t n;
    int rc = GR_OK;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if ((rc = gr_buf_append(&b, chunk, n)) != GR_OK)
            break;
    fclose(f);
    if (rc != GR_OK) {
        gr_buf_free(&b);
        return gr_err_set(err, rc, "%s: larger than %zu bytes", path, GR_PREFLIGHT_CONFIG_MAX);
    }
    rc = gr_preflight_config_parse(gr_buf_cstr(&b), b.len, path, warn_cb, NULL, cfg, err);
    gr_buf_free(&b);
    return rc;
}

typedef struct opts {
    const char *config;
    const char *kubeconfig;
    double qps;
    int burst;
    int workers;
    gr_preflight_server_opts srv;
} opts;

static int start_gang(const opts *o, const gr_preflight_config *cfg, gr_kube_client **kc,
                      gr_gang_service **svc, bool start, gr_err *err)
{
    gr_kube_config kcfg;
    memset(&kcfg, 0, sizeof kcfg);
    int rc = gr_kube_config_load(o->kubeconfig, NULL, &kcfg, err);
    if (rc != GR_OK)
        return rc;
    kcfg.qps = o->qps;
    kcfg.burst = o->burst;
    rc = gr_kube_client_new(&kcfg, kc, err);
    gr_kube_config_free(&kcfg);
    if (rc != GR_OK)
        return rc;
    gr_gang_service_opts go = {.client = *kc, .cfg = cfg, .workers = o->workers};
    if ((rc = gr_gang_service_new(&go, svc, err)) != GR_OK)
        return rc;
    if (start && (rc = gr_gang_service_start(*svc, err)) != GR_OK)
        return rc;
    return GR_OK;
}

int main(int argc, char **argv)
{
    gr_err err;
    if (gr_log_init(GR_VERSION, &err) != GR_OK)
        gr_log(GR_LOG_WARN, MOD, err.msg, GR_KV_END);
    const char *cmd = "serve";
    if (argc > 1 && argv[1][0] != '-') {
        cmd = argv[1];
        argc--;
        argv++;
    }
    bool check = strcmp(cmd, "check") == 0;
    if (!check && strcmp(cmd, "serve") != 0) {
        usage(stderr);
        return 2;
    }
    opts o = {.config = "/etc/preflight/config.yaml", .qps = 5, .burst = 10};
    o.srv.port = GR_PREFLIGHT_DEFAULT_PORT;
    o.srv.cert_dir = "/certs";
    static const struct option lopts[] = {{"port", required_argument, NULL, 'p'},
                                          {"cert-dir", required_argument, NULL, 'd'},
                                          {"config", required_argument, NULL, 'c'},
                                          {"kubeconfig", required_argument, NULL, 'k'},
                                          {"kube-api-qps", required_argument, NULL, 'q'},
                                          {"kube-api-burst", required_argument, NULL, 'b'},
                                          {"workers", required_argument, NULL, 'w'},
                                          {"threads", required_argument, NULL, 't'},
                                          {"loopback", no_argument, NULL, 'l'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "p:d:c:k:q:b:w:t:lh", lopts, NULL)) != -1) {
        switch (ch) {
        case 'p':
            o.srv.port = (uint16_t)atoi(optarg);
            break;
        case 'd':
            o.srv.cert_dir = optarg;
            break;
        case 'c':
            o.config = optarg;
            break;
        case 'k':
            o.kubeconfig = optarg;
            break;
        case 'q':
            o.qps = atof(optarg);
            break;
        case 'b':
            o.burst = atoi(optarg);
            break;
        case 'w':
            o.workers = atoi(optarg);
            break;
        case 't':
            o.srv.threads = (unsigned)atoi(optarg);
            break;
        case 'l':
            o.srv.loopback_only = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    gr_preflight_config *cfg = NULL;
    if (load_config(o.config, &cfg, &err) != GR_OK)
        return fatal(err.msg);

    gr_kube_client *kc = NULL;
    gr_gang_service *svc = NULL;
    int status = 0;
    if (cfg->gang.enabled || check) {
        if (start_gang(&o, cfg, &kc, &svc, !check, &err) != GR_OK) {
            status = fatal(err.msg);
            goto out;
        }
    }
    if (check) {
        gr_gang_discoverer *d = gr_gang_service_discoverer_for(svc, "");
        printf("gang discoverer: %s\n", gr_gang_discoverer_name(d));
        gr_gang_discoverer_unref(d);
        goto out;
    }

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    gr_preflight_gang_ops ops = {0};
    if (svc)
        ops = gr_gang_service_ops(svc);
    gr_preflight_server *srv = NULL;
    if (gr_preflight_server_start(&o.srv, cfg, svc ? &ops : NULL, &srv, &err) != GR_OK) {
        status = fatal(err.msg);
        goto out;
    }
    gr_log(GR_LOG_INFO, MOD, "serving", GR_KV_INT("port", gr_preflight_server_port(srv)),
           GR_KV_BOOL("gangCoordination", cfg->gang.enabled), GR_KV_END);
    for (;;) {
        struct timespec tick = {1, 0};
        int sig = sigtimedwait(&set, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT)
            break;
        if (gr_preflight_server_reload_certs(srv, &err) < 0)
            gr_log(GR_LOG_WARN, MOD, "certificate reload failed; keeping the previous pair",
                   GR_KV_STR("error", err.msg), GR_KV_END);
    }
    gr_preflight_server_drain(srv, 5000);
    gr_preflight_server_stop(srv);
    if (svc) {
        gr_gang_stats st;
        gr_gang_service_stats(svc, &st);
        gr_log(GR_LOG_INFO, MOD, "stopped", GR_KV_INT("registered", st.registered),
               GR_KV_INT("configMapsCreated", st.cm_created),
               GR_KV_INT("configMapWrites", st.cm_writes), GR_KV_INT("conflicts", st.conflicts),
               GR_KV_END);
    }
out:
    gr_gang_service_free(svc);
    gr_kube_client_free(kc);
    gr_preflight_config_free(cfg);
    return status;
}
