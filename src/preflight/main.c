/*
 * gpuready-preflight — the preflight admission webhook.
 *
 *   gpuready-preflight [serve] [--port 8443] [--cert-dir /certs]
 *                      [--config /etc/preflight/config.yaml]
 *                      [--max-body-bytes N] [--threads N] [--timeout S]
 *   gpuready-preflight inject --config config.yaml [--namespace NS]
 *                      [--gang-id ID] [--output yaml|json|patch] pod.yaml
 *   gpuready-preflight check-config --config config.yaml
 *
 * Exit status: 0 ok; 1 invalid config or fatal error; 2 usage;
 * `inject` exits 3 when the admission would be denied (the denial is
 * printed on stderr).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gr_json.h"
#include "gr_log.h"
#include "gr_preflight.h"
#include "gr_preflight_server.h"
#include "gr_yaml.h"

#define MOD "preflight"

static void usage(FILE *f)
{
    fputs("usage: gpuready-preflight [serve] [--port N] [--cert-dir DIR] [--config FILE]\n"
          "                          [--max-body-bytes N] [--threads N] [--timeout SECONDS]\n"
          "       gpuready-preflight inject --config FILE [--namespace NS] [--gang-id ID]\n"
          "                          [--output yaml|json|patch] POD.yaml\n"
          "       gpuready-preflight check-config --config FILE\n",
          f);
}

static void warn_cb(void *ud, const char *msg)
{
    (void)ud;
    gr_log(GR_LOG_WARN, MOD, msg, GR_KV_END);
}

static int read_all(const char *path, char **out, size_t *len, size_t max, gr_err *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return gr_err_set(err, GR_EIO, "%s: %s", path, strerror(errno));
    gr_buf b = GR_BUF_INIT(max);
    char chunk[65536];
    size_t n;
    int rc = GR_OK;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if ((rc = gr_buf_append(&b, chunk, n)) != GR_OK)
            break;
    if (f != stdin)
        fclose(f);
    if (rc != GR_OK) {
        gr_buf_free(&b);
        return gr_err_set(err, rc, "%s: larger than %zu bytes", path, max);
    }
    *out = gr_buf_steal(&b, len);
    if (!*out && (*out = strdup("")) == NULL)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    return GR_OK;
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
            gr_buf b = GR_BUF_INIT(0);
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

/*
 * The one place the server picks its gang resolver (issue 7 wiring point).
 * Today: the static resolver, which derives the gang from the admission
 * object alone (docs/webhook.md "Gang context"). When the kube-backed
 * discoverer from src/gang lands, return its gr_preflight_gang_ops here
 * (resolve + admitted, thread-safe; `cfg` outlives the server) and link
 * gpuready-preflight against it; nothing else in the server changes.
 */
static int pick_gang_resolver(const gr_preflight_config *cfg, gr_preflight_gang_ops *out,
                              gr_err *err)
{
    (void)err;
    *out = gr_preflight_gang_static_ops(cfg);
    return GR_OK;
}

static int cmd_serve(int argc, char **argv)
{
    const char *config = "/etc/preflight/config.yaml";
    gr_preflight_server_opts o = {.port = GR_PREFLIGHT_DEFAULT_PORT, .cert_dir = "/certs"};
    static const struct option opts[] = {
        {"port", required_argument, NULL, 'p'},    {"cert-dir", required_argument, NULL, 'd'},
        {"config", required_argument, NULL, 'c'},  {"max-body-bytes", required_argument, NULL, 'm'},
        {"threads", required_argument, NULL, 't'}, {"timeout", required_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "p:d:c:m:t:T:h", opts, NULL)) != -1) {
        char *end = NULL;
        unsigned long v = 0;
        if (optarg) {
            errno = 0;
            v = strtoul(optarg, &end, 10);
        }
        bool bad_num = optarg && (errno || !end || *end || end == optarg);
        switch (ch) {
        case 'p':
            if (bad_num || v > 65535) {
                fprintf(stderr, "--port: must be 0..65535\n");
                return 2;
            }
            o.port = (uint16_t)v;
            break;
        case 'd':
            o.cert_dir = optarg;
            break;
        case 'c':
            config = optarg;
            break;
        case 'm':
            if (bad_num || v < 1024) {
                fprintf(stderr, "--max-body-bytes: must be a number >= 1024\n");
                return 2;
            }
            o.max_body = v;
            break;
        case 't':
            if (bad_num || v < 1 || v > 256) {
                fprintf(stderr, "--threads: must be 1..256\n");
                return 2;
            }
            o.threads = (unsigned)v;
            break;
        case 'T':
            if (bad_num || v < 1 || v > 600) {
                fprintf(stderr, "--timeout: must be 1..600 seconds\n");
                return 2;
            }
            o.timeout_s = (unsigned)v;
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
    gr_err err;
    gr_preflight_config *cfg = NULL;
    if (load_config(config, &cfg, &err) != GR_OK) {
        gr_log(GR_LOG_ERROR, MOD, "Fatal error", GR_KV_STR("error", err.msg), GR_KV_END);
        return 1;
    }
    /* Signals: SIGPIPE ignored; SIGTERM/SIGINT handled synchronously by
     * this thread (blocked before the server threads start). */
    signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    gr_preflight_gang_ops gang;
    if (pick_gang_resolver(cfg, &gang, &err) != GR_OK) {
        gr_log(GR_LOG_ERROR, MOD, "Fatal error", GR_KV_STR("error", err.msg), GR_KV_END);
        gr_preflight_config_free(cfg);
        return 1;
    }
    gr_preflight_server *srv = NULL;
    if (gr_preflight_server_start(&o, cfg, &gang, &srv, &err) != GR_OK) {
        gr_log(GR_LOG_ERROR, MOD, "Fatal error", GR_KV_STR("error", err.msg), GR_KV_END);
        gr_preflight_config_free(cfg);
        return 1;
    }
    gr_log(GR_LOG_INFO, MOD, "serving", GR_KV_INT("port", gr_preflight_server_port(srv)),
           GR_KV_STR("certDir", o.cert_dir), GR_KV_INT("checks", (long long)cfg->n_checks),
           GR_KV_BOOL("gangCoordination", cfg->gang.enabled), GR_KV_END);
    for (;;) {
        struct timespec tick = {1, 0};
        int sig = sigtimedwait(&set, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT) {
            gr_log(GR_LOG_INFO, MOD, "shutting down", GR_KV_STR("signal", strsignal(sig)),
                   GR_KV_END);
            break;
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
    gr_preflight_config_free(cfg);
    gr_log(GR_LOG_INFO, MOD, "stopped", GR_KV_END);
    return 0;
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
    printf("config ok: %zu checks, gang coordination %s\n", cfg->n_checks,
           cfg->gang.enabled ? "on" : "off");
    gr_preflight_config_free(cfg);
    return 0;
}

int main(int argc, char **argv)
{
    gr_err err;
    if (gr_log_init(GR_VERSION, &err) != GR_OK)
        fprintf(stderr, "gpuready-preflight: %s\n", err.msg);
    if (argc > 1 && strcmp(argv[1], "inject") == 0)
        return cmd_inject(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "check-config") == 0)
        return cmd_check_config(argc - 1, argv + 1);
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "serve") == 0)
        return cmd_serve(argc - 1, argv + 1);
    return cmd_serve(argc, argv);
}
