/*
 * gr_kube_probe.h — the manager's HTTP surface: health/readiness probes and
 * Prometheus metrics. Two halves:
 *
 *  - pure rendering (no I/O, no clock): the Prometheus text exposition
 *    (format 0.0.4) of a metrics snapshot, the probe body of a list of
 *    check results, the reconcile-duration histogram, bind-address parsing;
 *  - a small HTTP server on libmicrohttpd (one internal thread, GET only,
 *    request bodies ignored) that asks a handler for each path.
 *
 * Metric names follow controller-runtime, so dashboards and alerts written
 * for Go operators work unchanged:
 *   workqueue_depth{name}                 gauge
 *   workqueue_adds_total{name}            counter
 *   workqueue_retries_total{name}         counter
 *   controller_runtime_reconcile_total{controller,result=success|error|requeue|requeue_after}
 *   controller_runtime_reconcile_errors_total{controller}
 *   controller_runtime_reconcile_time_seconds{controller} histogram
 *   controller_runtime_max_concurrent_reconciles{controller}, _active_workers{controller}
 *   leader_election_master_status{name}   gauge (1 = this replica leads)
 *   gpuready_informer_synced{resource,namespace} gauge, gpuready_informer_present{...},
 *   gpuready_informer_objects{...}
 *
 * Ownership: snapshots and results are borrowed; output goes into the
 * caller's gr_buf (its cap bounds it: GR_ETOOBIG). The server copies what
 * it needs; the handler's ctx is borrowed for the server's life.
 */
#ifndef GR_KUBE_PROBE_H
#define GR_KUBE_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gr_buf.h"
#include "gr_err.h"

#define GR_KUBE_HIST_BUCKETS 15

/* Upper bounds (seconds) of the reconcile-duration histogram. */
extern const double gr_kube_hist_bounds[GR_KUBE_HIST_BUCKETS];

typedef struct gr_kube_histogram {
    uint64_t buckets[GR_KUBE_HIST_BUCKETS]; /* cumulative counts are computed when rendering */
    uint64_t count;
    double sum;
} gr_kube_histogram;

void gr_kube_hist_observe(gr_kube_histogram *h, double seconds);

typedef struct gr_kube_ctl_metrics {
    const char *name;
    uint64_t depth, adds, retries;
    uint64_t success, error, requeue, requeue_after;
    gr_kube_histogram duration;
    int max_workers, active_workers;
} gr_kube_ctl_metrics;

typedef struct gr_kube_cache_metrics {
    const char *resource; /* "group/version/resource" (core: "v1/pods") */
    const char *ns;       /* "" = all namespaces */
    bool synced, present;
    uint64_t objects;
} gr_kube_cache_metrics;

typedef struct gr_kube_metrics_snapshot {
    const gr_kube_ctl_metrics *ctls;
    size_t nctl;
    const gr_kube_cache_metrics *caches;
    size_t ncache;
    bool leader_election;
    const char *lease_name;
    bool is_leader;
    bool client; /* the API client's counters below are filled */
    uint64_t client_requests, client_connections;
} gr_kube_metrics_snapshot;

/* Pure: append the exposition text. Label values are escaped (\\, \", \n). */
int gr_kube_metrics_render(const gr_kube_metrics_snapshot *s, gr_buf *out);

typedef struct gr_kube_check_result {
    const char *name;
    bool ok;
    char why[256]; /* reason when !ok */
} gr_kube_check_result;

/* Pure: the probe answer (200 "ok" when every check passed, else 500
 * listing the failing ones; verbose lists every check as [+]/[-] like the
 * Kubernetes probes). */
int gr_kube_probe_render(const gr_kube_check_result *r, size_t n, bool verbose, gr_buf *out,
                         int *http);

/* Pure: parse a bind address: "0" or "" = off (*off = true); ":8081",
 * "0.0.0.0:8081", "127.0.0.1:0" (port 0 = any free port). Hosts are IPv4
 * literals (or "localhost"); a missing host binds every interface, IPv4
 * and IPv6 (dual stack) where the kernel offers IPv6. GR_EINVAL naming the
 * value. */
int gr_kube_bind_parse(const char *addr, bool *off, uint32_t *ipv4_host_order, int *port,
                       gr_err *err);

/* ---- server ------------------------------------------------------------ */

/* Cap on one response body. /metrics is the large one: the NCCL gauges are
 * per measurement and message size (7.5 MB at 256 nodes x 2 categories,
 * which overran the former 4 MiB cap and answered 500), so this allows a
 * 2,000-node certification. Past it the handler answers 500 and logs why. */
#define GR_KUBE_HTTP_MAX_BODY ((size_t)64 * 1024 * 1024)

/* Fill body (capped at GR_KUBE_HTTP_MAX_BODY) and *http for `path` (the query string is in
 * `query`, "" when none). *ctype: a static content type. */
typedef int (*gr_kube_http_fn)(void *ctx, const char *path, const char *query, gr_buf *body,
                               int *http, const char **ctype);

typedef struct gr_kube_http gr_kube_http;

/* Start serving on addr (gr_kube_bind_parse syntax; "off" is GR_EINVAL
 * here). GR_EIO when the address cannot be bound (the message names it). */
int gr_kube_http_start(const char *addr, gr_kube_http_fn fn, void *ctx, gr_kube_http **out,
                       gr_err *err);
/* The bound port (useful with port 0). */
int gr_kube_http_port(const gr_kube_http *h);
void gr_kube_http_stop(gr_kube_http *h);

#endif
