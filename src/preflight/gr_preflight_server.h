/*
 * gr_preflight_server.h — the HTTPS front of the preflight webhook
 * (libmicrohttpd + GnuTLS): POST /mutate, GET /healthz, /readyz, /metrics.
 * /readyz is 503 while draining or while the optional ready() hook says no
 * (the controller runtime: caches synced, PreflightConfigs evaluated, leader
 * known); /healthz is always 200 unless asked for readiness with
 * GR_PREFLIGHT_PROBE_HEADER.
 *
 * TLS: TLS 1.2 and 1.3 only; the certificate and key are read from
 * <cert_dir>/tls.crt and <cert_dir>/tls.key and served through a GnuTLS
 * certificate callback, so gr_preflight_server_reload_certs() can swap them
 * (cert-manager rotation: the kubelet swaps the Secret's `..data` symlink)
 * without restarting the listener, dropping connections or failing a
 * handshake in flight. A pair that does not load or whose key does not
 * match the certificate is ignored (the previous pair stays) and reported.
 * One process serves one certificate directory: every server started in a
 * process must use the same cert_dir (GR_EUNSUPPORTED otherwise).
 *
 * Limits: bodies larger than max_body get 413; connections idle for
 * timeout_s seconds are closed (read and write timeout). The default,
 * GR_PREFLIGHT_DEFAULT_TIMEOUT_S, outlasts the API server's own idle
 * timeout for webhook connections (client-go: 90 s), so the API server is
 * the side that closes an idle connection: a close from this side can cross
 * a request the API server just sent on it, and the API server does not
 * retry a webhook POST ("http: server closed idle connection").
 *
 * Ownership: the config and gang ops are borrowed and must outlive the
 * server. Thread-safety: start/stop/drain from one thread; reload_certs and
 * metrics may be called from any thread.
 */
#ifndef GR_PREFLIGHT_SERVER_H
#define GR_PREFLIGHT_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "gr_buf.h"
#include "gr_err.h"
#include "gr_preflight.h"

#define GR_PREFLIGHT_DEFAULT_PORT     8443
#define GR_PREFLIGHT_DEFAULT_MAX_BODY ((size_t)4 * 1024 * 1024)
/* Idle timeout, seconds: longer than the API server's 90 s (see above). */
#define GR_PREFLIGHT_DEFAULT_TIMEOUT_S 120
/* GET /healthz with this header set to "readiness" answers as /readyz
 * (the chart's readiness probe: the contract's path, PF-219, with the
 * runtime's readiness behind it). */
#define GR_PREFLIGHT_PROBE_HEADER "X-Preflight-Probe"

typedef struct gr_preflight_server_opts {
    uint16_t port;           /* 0: an ephemeral port (see gr_preflight_server_port) */
    const char *cert_dir;    /* directory holding tls.crt and tls.key */
    size_t max_body;         /* 0: GR_PREFLIGHT_DEFAULT_MAX_BODY */
    unsigned threads;        /* worker threads; 0: 2 */
    unsigned timeout_s;      /* idle/read/write timeout; 0: GR_PREFLIGHT_DEFAULT_TIMEOUT_S */
    bool loopback_only;      /* bind 127.0.0.1 (tests, benchmarks) */
    bool static_response;    /* benchmark ceiling: /mutate returns a fixed
                                "allowed" review without looking at the body */
    const char *static_body; /* with static_response: this body instead
                                (copied at start), e.g. a real injection
                                response to measure the cost of its size */
    size_t static_body_len;
    /* Optional: /readyz also asks this (e.g. the controller runtime's
     * readiness: caches synced, PreflightConfigs evaluated, leader known);
     * false answers 503 with `why`. Called from server threads. */
    bool (*ready)(void *ctx, char *why, size_t why_sz);
    void *ready_ctx;
    /* Optional: more exposition text appended to /metrics (the runtime's
     * workqueue, reconcile and leader metrics). */
    int (*metrics)(void *ctx, gr_buf *out);
    void *metrics_ctx;
} gr_preflight_server_opts;

typedef struct gr_preflight_server gr_preflight_server;

/* Load the certificate pair and start listening. GR_EIO (cannot load the
 * certificate, cannot bind: message says which), GR_EUNSUPPORTED,
 * GR_ENOMEM. */
int gr_preflight_server_start(const gr_preflight_server_opts *opts, const gr_preflight_config *cfg,
                              const gr_preflight_gang_ops *gang, gr_preflight_server **out,
                              gr_err *err);

uint16_t gr_preflight_server_port(const gr_preflight_server *s);

/* Re-read tls.crt/tls.key when either file (followed through symlinks)
 * changed since the last load. Returns 1 when a new pair was installed, 0
 * when nothing changed, or a negative GR_E* code (old pair kept). */
int gr_preflight_server_reload_certs(gr_preflight_server *s, gr_err *err);

/* Graceful shutdown, first half: /readyz turns 503, the listening socket
 * stops accepting, responses carry "Connection: close"; waits up to
 * timeout_ms for requests in flight to finish and for the clients to close
 * their kept-alive connections (each next request on one is answered, with
 * "Connection: close"), so that no connection is closed under a request the
 * client is sending. */
void gr_preflight_server_drain(gr_preflight_server *s, int64_t timeout_ms);

/* Stop and free (closes remaining connections). NULL is a no-op. */
void gr_preflight_server_stop(gr_preflight_server *s);

/* Append the Prometheus text exposition (version 0.0.4) to out:
 * preflight_injection_total{result}, preflight_webhook_latency_seconds,
 * preflight_certificate_reloads_total, process_* basics. */
int gr_preflight_server_metrics(gr_preflight_server *s, gr_buf *out);

#endif
