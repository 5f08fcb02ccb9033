/* gr_kube_probe.c — metrics/probe rendering (pure) and the HTTP server. */
#include "gr_kube_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "gr_log.h"

const double gr_kube_hist_bounds[GR_KUBE_HIST_BUCKETS] = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 45, 60,
};

void gr_kube_hist_observe(gr_kube_histogram *h, double seconds)
{
    for (size_t i = 0; i < GR_KUBE_HIST_BUCKETS; i++)
        if (seconds <= gr_kube_hist_bounds[i]) {
            h->buckets[i]++;
            break;
        }
    h->count++;
    h->sum += seconds;
}

/* ---- pure rendering ----------------------------------------------------- */

static int esc(gr_buf *b, const char *s)
{
    int rc = GR_OK;
    for (; s && *s && rc == GR_OK; s++) {
        if (*s == '\\')
            rc = gr_buf_puts(b, "\\\\");
        else if (*s == '"')
            rc = gr_buf_puts(b, "\\\"");
        else if (*s == '\n')
            rc = gr_buf_puts(b, "\\n");
        else
            rc = gr_buf_putc(b, *s);
    }
    return rc;
}

static int head(gr_buf *b, const char *name, const char *type, const char *help)
{
    return gr_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{label="v"[,label2="v2"]} value */
static int line(gr_buf *b, const char *name, const char *l1, const char *v1, const char *l2,
                const char *v2, const char *value)
{
    int rc = gr_buf_printf(b, "%s{%s=\"", name, l1);
    if (rc == GR_OK)
        rc = esc(b, v1);
    if (rc == GR_OK && l2) {
        rc = gr_buf_printf(b, "\",%s=\"", l2);
        if (rc == GR_OK)
            rc = esc(b, v2);
    }
    if (rc == GR_OK)
        rc = gr_buf_printf(b, "\"} %s\n", value);
    return rc;
}

static int uline(gr_buf *b, const char *name, const char *l1, const char *v1, const char *l2,
                 const char *v2, uint64_t v)
{
    char num[32];
    snprintf(num, sizeof num, "%llu", (unsigned long long)v);
    return line(b, name, l1, v1, l2, v2, num);
}

int gr_kube_metrics_render(const gr_kube_metrics_snapshot *s, gr_buf *out)
{
    int rc = GR_OK;
#define R(x)             \
    do {                 \
        if (rc == GR_OK) \
            rc = (x);    \
    } while (0)
    const gr_kube_ctl_metrics *c;
    if (s->nctl) {
        R(head(out, "workqueue_depth", "gauge", "Current depth of the work queue."));
        for (size_t i = 0; i < s->nctl; i++)
            R(uline(out, "workqueue_depth", "name", s->ctls[i].name, NULL, NULL, s->ctls[i].depth));
        R(head(out, "workqueue_adds_total", "counter", "Total number of adds to the work queue."));
        for (size_t i = 0; i < s->nctl; i++)
            R(uline(out, "workqueue_adds_total", "name", s->ctls[i].name, NULL, NULL,
                    s->ctls[i].adds));
        R(head(out, "workqueue_retries_total", "counter",
               "Total number of rate-limited retries of the work queue."));
        for (size_t i = 0; i < s->nctl; i++)
            R(uline(out, "workqueue_retries_total", "name", s->ctls[i].name, NULL, NULL,
                    s->ctls[i].retries));
        R(head(out, "controller_runtime_reconcile_total", "counter",
               "Total number of reconciliations per controller and result."));
        for (size_t i = 0; i < s->nctl; i++) {
            c = &s->ctls[i];
            R(uline(out, "controller_runtime_reconcile_total", "controller", c->name, "result",
                    "error", c->error));
            R(uline(out, "controller_runtime_reconcile_total", "controller", c->name, "result",
                    "requeue", c->requeue));
            R(uline(out, "controller_runtime_reconcile_total", "controller", c->name, "result",
                    "requeue_after", c->requeue_after));
            R(uline(out, "controller_runtime_reconcile_total", "controller", c->name, "result",
                    "success", c->success));
        }
        R(head(out, "controller_runtime_reconcile_errors_total", "counter",
               "Total number of reconciliation errors per controller."));
        for (size_t i = 0; i < s->nctl; i++)
            R(uline(out, "controller_runtime_reconcile_errors_total", "controller", s->ctls[i].name,
                    NULL, NULL, s->ctls[i].error));
        R(head(out, "controller_runtime_reconcile_time_seconds", "histogram",
               "Length of time per reconciliation per controller."));
        for (size_t i = 0; i < s->nctl; i++) {
            c = &s->ctls[i];
            uint64_t cum = 0;
            for (size_t k = 0; k < GR_KUBE_HIST_BUCKETS; k++) {
                char le[32];
                cum += c->duration.buckets[k];
                snprintf(le, sizeof le, "%g", gr_kube_hist_bounds[k]);
                R(uline(out, "controller_runtime_reconcile_time_seconds_bucket", "controller",
                        c->name, "le", le, cum));
            }
            R(uline(out, "controller_runtime_reconcile_time_seconds_bucket", "controller", c->name,
                    "le", "+Inf", c->duration.count));
            char sum[64];
            snprintf(sum, sizeof sum, "%.9g", c->duration.sum);
            R(line(out, "controller_runtime_reconcile_time_seconds_sum", "controller", c->name,
                   NULL, NULL, sum));
            R(uline(out, "controller_runtime_reconcile_time_seconds_count", "controller", c->name,
                    NULL, NULL, c->duration.count));
        }
        R(head(out, "controller_runtime_max_concurrent_reconciles", "gauge",
               "Maximum number of concurrent reconciles per controller."));
        for (size_t i = 0; i < s->nctl; i++)
            R(uline(out, "controller_runtime_max_concurrent_reconciles", "controller",
                    s->ctls[i].name, NULL, NULL, (uint64_t)s->ctls[i].max_workers));
        R(head(out, "controller_runtime_active_workers", "gauge",
               "Number of currently used workers per controller."));
        for (size_t i = 0; i < s->nctl; i++)
            R(uline(out, "controller_runtime_active_workers", "controller", s->ctls[i].name, NULL,
                    NULL, (uint64_t)s->ctls[i].active_workers));
    }
    if (s->leader_election) {
        R(head(out, "leader_election_master_status", "gauge",
               "Gauge of whether this replica is the leader (1) or not (0)."));
        R(uline(out, "leader_election_master_status", "name", s->lease_name ? s->lease_name : "",
                NULL, NULL, s->is_leader ? 1 : 0));
    }
    if (s->client) {
        char num[32];
        R(head(out, "gpuready_kube_client_requests_total", "counter",
               "Requests sent to the API server (watches included)."));
        snprintf(num, sizeof num, "%llu", (unsigned long long)s->client_requests);
        R(gr_buf_printf(out, "gpuready_kube_client_requests_total %s\n", num));
        R(head(out, "gpuready_kube_client_connections_total", "counter",
               "Connections opened to the API server (each a TLS handshake over https); the "
               "other requests reused an open connection."));
        snprintf(num, sizeof num, "%llu", (unsigned long long)s->client_connections);
        R(gr_buf_printf(out, "gpuready_kube_client_connections_total %s\n", num));
    }
    if (s->ncache) {
        R(head(out, "gpuready_informer_synced", "gauge",
               "Whether the shared informer's cache has synced (1) or not (0)."));
        for (size_t i = 0; i < s->ncache; i++)
            R(uline(out, "gpuready_informer_synced", "resource", s->caches[i].resource, "namespace",
                    s->caches[i].ns, s->caches[i].synced ? 1 : 0));
        R(head(out, "gpuready_informer_present", "gauge",
               "Whether the informer's resource is served by the API server (an optional CRD "
               "that is not installed is 0)."));
        for (size_t i = 0; i < s->ncache; i++)
            R(uline(out, "gpuready_informer_present", "resource", s->caches[i].resource,
                    "namespace", s->caches[i].ns, s->caches[i].present ? 1 : 0));
        R(head(out, "gpuready_informer_objects", "gauge", "Objects in the informer's cache."));
        for (size_t i = 0; i < s->ncache; i++)
            R(uline(out, "gpuready_informer_objects", "resource", s->caches[i].resource,
                    "namespace", s->caches[i].ns, s->caches[i].objects));
    }
#undef R
    return rc;
}

int gr_kube_probe_render(const gr_kube_check_result *r, size_t n, bool verbose, gr_buf *out,
                         int *http)
{
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        ok = ok && r[i].ok;
    *http = ok ? 200 : 500;
    int rc = GR_OK;
    for (size_t i = 0; i < n && rc == GR_OK; i++) {
        if (r[i].ok && verbose)
            rc = gr_buf_printf(out, "[+]%s ok\n", r[i].name);
        else if (!r[i].ok)
            rc = gr_buf_printf(out, "[-]%s failed: %s\n", r[i].name,
                               *r[i].why ? r[i].why : "not ready");
    }
    if (rc == GR_OK)
        rc = ok ? gr_buf_puts(out, verbose ? "check passed\n" : "ok")
                : gr_buf_puts(out, "check failed\n");
    return rc;
}

int gr_kube_bind_parse(const char *addr, bool *off, uint32_t *ip, int *port, gr_err *err)
{
    *off = false;
    *ip = INADDR_ANY;
    *port = 0;
    if (!addr || !*addr || strcmp(addr, "0") == 0) {
        *off = true;
        return GR_OK;
    }
    const char *colon = strrchr(addr, ':');
    if (!colon)
        return gr_err_set(err, GR_EINVAL,
                          "bind address \"%s\": expected [host]:port, e.g. \":8081\" or "
                          "\"127.0.0.1:8080\" (\"0\" turns it off)",
                          addr);
    char *end = NULL;
    long p = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || p < 0 || p > 65535)
        return gr_err_set(err, GR_EINVAL, "bind address \"%s\": port must be a number 0..65535",
                          addr);
    *port = (int)p;
    size_t hl = (size_t)(colon - addr);
    if (hl == 0)
        return GR_OK;
    char host[64];
    if (hl >= sizeof host)
        return gr_err_set(err, GR_EINVAL, "bind address \"%s\": host too long", addr);
    memcpy(host, addr, hl);
    host[hl] = '\0';
    if (strcmp(host, "localhost") == 0) {
        *ip = INADDR_LOOPBACK;
        return GR_OK;
    }
    struct in_addr a;
    if (inet_pton(AF_INET, host, &a) != 1)
        return gr_err_set(err, GR_EINVAL,
                          "bind address \"%s\": host must be an IPv4 address (or empty for "
                          "every interface)",
                          addr);
    *ip = ntohl(a.s_addr);
    return GR_OK;
}

/* ---- server ------------------------------------------------------------- */

struct gr_kube_http {
    struct MHD_Daemon *d;
    gr_kube_http_fn fn;
    void *ctx;
    int port;
};

static enum MHD_Result add_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    (void)kind;
    gr_buf *q = cls;
    if (q->len)
        gr_buf_putc(q, '&');
    gr_buf_puts(q, key);
    if (value) {
        gr_buf_putc(q, '=');
        gr_buf_puts(q, value);
    }
    return MHD_YES;
}

static enum MHD_Result on_req(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    (void)version;
    (void)upload;
    gr_kube_http *h = cls;
    if (!*con_cls) { /* first call: headers only */
        *con_cls = h;
        return MHD_YES;
    }
    if (*upload_size) { /* ignore bodies */
        *upload_size = 0;
        return MHD_YES;
    }
    gr_buf body = GR_BUF_INIT(GR_KUBE_HTTP_MAX_BODY);
    int http = 404;
    const char *ctype = "text/plain; charset=utf-8";
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        http = 405;
        gr_buf_puts(&body, "method not allowed\n");
    } else {
        gr_buf q = GR_BUF_INIT(4096);
        MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, add_query, &q);
        int rc = h->fn(h->ctx, url, gr_buf_cstr(&q), &body, &http, &ctype);
        if (rc != GR_OK) {
            gr_log(GR_LOG_ERROR, "http", "cannot answer", GR_KV_STR("path", url),
                   GR_KV_STR("error", gr_rc_name(rc)),
                   GR_KV_STR("hint", rc == GR_ETOOBIG ? "the response is over GR_KUBE_HTTP_MAX_BODY"
                                                      : "see earlier log lines"),
                   GR_KV_END);
            gr_buf_reset(&body);
            http = 500;
            gr_buf_puts(&body, "internal error\n");
        }
        gr_buf_free(&q);
    }
    size_t len = 0;
    if (!body.data)
        gr_buf_putc(&body, '\n');
    char *data = gr_buf_steal(&body, &len);
    if (!data)
        return MHD_NO;
    struct MHD_Response *r = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(data);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", ctype);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)http, r);
    MHD_destroy_response(r);
    return ret;
}

__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n')
        msg[--n] = '\0';
    gr_log(GR_LOG_DEBUG, "http", msg, GR_KV_END);
}

int gr_kube_http_start(const char *addr, gr_kube_http_fn fn, void *ctx, gr_kube_http **out,
                       gr_err *err)
{
    *out = NULL;
    bool off;
    uint32_t ip;
    int port;
    int rc = gr_kube_bind_parse(addr, &off, &ip, &port, err);
    if (rc != GR_OK)
        return rc;
    if (off)
        return gr_err_set(err, GR_EINVAL, "bind address \"%s\" turns the server off",
                          addr ? addr : "");
    gr_kube_http *h = calloc(1, sizeof *h);
    if (!h)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    h->fn = fn;
    h->ctx = ctx;
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)port);
    sin.sin_addr.s_addr = htonl(ip);
    if (addr[0] == ':') /* no host: every interface, IPv6 too where the kernel has it */
        h->d = MHD_start_daemon(
            MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_DUAL_STACK,
            (uint16_t)port, NULL, NULL, on_req, h, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
            MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024,
            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
    if (!h->d)
        h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, (uint16_t)port,
                                NULL, NULL, on_req, h, MHD_OPTION_SOCK_ADDR, &sin,
                                MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_CONNECTION_LIMIT,
                                64u, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024,
                                MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
    if (!h->d) {
        free(h);
        return gr_err_set(err, GR_EIO, "cannot listen on %s (address in use or not local?)", addr);
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = di ? di->port : port;
    *out = h;
    return GR_OK;
}

int gr_kube_http_port(const gr_kube_http *h)
{
    return h ? h->port : 0;
}

void gr_kube_http_stop(gr_kube_http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->d);
    free(h);
}
