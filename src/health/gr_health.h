/*
 * gr_health.h — publish NVSentinel health events (library gr_health).
 * The event types, enum names and the protobuf encoding are the pure library
 * gr_health_event (gr_health_event.h, included here).
 *
 * The preflight checks report each result as one HealthEvent, sent as
 * HealthEvents{version: 1, events: [event]} to the platform connector's
 * gRPC method /datamodels.PlatformConnector/HealthEventOccurredV1
 * (src/health/proto/health_event.proto). Two ways to reach it:
 *
 *  - socket mode (default, PF-161): the node-local connector on the unix
 *    socket PLATFORM_CONNECTOR_SOCKET ("unix:///var/run/nvsentinel.sock"),
 *    optional bearer token from PLATFORM_CONNECTOR_TOKEN_PATH;
 *  - direct mode (PF-162, when HEALTH_PUBLISH_TARGET is set; the socket env is
 *    then ignored, PF-170): TLS to host:port with HEALTH_PUBLISH_TLS_CA_FILE
 *    (server name HEALTH_PUBLISH_TLS_SERVER_NAME, default the target's host)
 *    or plaintext h2c with HEALTH_PUBLISH_INSECURE=true, token from
 *    HEALTH_PUBLISH_TOKEN_PATH (required), retry budget
 *    HEALTH_PUBLISH_RETRY_WINDOW (Go duration, default 5m).
 *
 * Typical use in a check program:
 *
 *     gr_err err;
 *     gr_health_publisher *pub;
 *     if (gr_health_publisher_from_env(&pub, &err) != GR_OK) {
 *         // configuration error (always GR_EINVAL): err.msg says which
 *         // variable and why; exit 1 (dcgm-diag) or 2 (NCCL checks), no event.
 *     }
 *     const char *codes[] = {"NCCL_BW_DEGRADED"};
 *     gr_health_event ev;
 *     gr_health_event_init(&ev);
 *     ev.agent = "preflight-nccl-loopback";
 *     ev.component_class = "Node";
 *     ev.check_name = "NCCLLoopbackTest";
 *     ev.is_fatal = 1;
 *     ev.message = "NCCL all-reduce bus bandwidth ...";
 *     ev.recommended_action = GR_HEALTH_ACTION_CONTACT_SUPPORT;
 *     ev.error_codes = codes;
 *     ev.n_error_codes = 1;
 *     ev.node_name = getenv("NODE_NAME");
 *     ev.processing_strategy = strategy;  // gr_health_strategy_parse()
 *     gr_health_report rep;
 *     if (gr_health_publish(pub, &ev, &rep, &err) != GR_OK) {
 *         // not delivered (rep says how it ended); exit 3 / 4 per the check
 *     }
 *     gr_health_publisher_free(pub);
 *
 * Every attempt re-reads the token file (trailing whitespace trimmed; an
 * empty, unreadable or non-printable file fails the event without sending:
 * never tokenless when a token is configured) and sends the metadata
 * `authorization: Bearer <token>` and `idempotency-key: <key>`, one key per
 * event reused across its retries. The retry policy is in gr_health_retry.h.
 * Failed attempts are logged (gr_log, module "health", level warn).
 *
 * Ownership: every pointer in gr_health_event is borrowed for the duration of
 * gr_health_publish()/gr_health_event_encode() only. gr_health_config is a
 * plain value (fixed-size strings, no heap). The publisher is owned by the
 * caller and released with gr_health_publisher_free(). Not thread-safe: use
 * one publisher per thread (the retry budget is per publisher).
 */
#ifndef GR_HEALTH_H
#define GR_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "gr_buf.h"
#include "gr_err.h"
#include "gr_grpc.h"
#include "gr_health_event.h"
#include "gr_health_retry.h"

/* --- configuration ------------------------------------------------------ */

typedef enum gr_health_mode {
    GR_HEALTH_MODE_SOCKET = 0, /* node-local connector over a unix socket */
    GR_HEALTH_MODE_DIRECT = 1, /* deployment connector over TCP */
} gr_health_mode;

#define GR_HEALTH_SOCKET_PATH_MAX 108 /* sun_path, terminator included */
#define GR_HEALTH_PATH_MAX        4096
#define GR_HEALTH_HOST_MAX        256
#define GR_HEALTH_TOKEN_MAX       (64 * 1024) /* cap on the token file */

typedef struct gr_health_config {
    gr_health_mode mode;
    char socket_path[GR_HEALTH_SOCKET_PATH_MAX]; /* socket: path, no unix:// */
    char token_path[GR_HEALTH_PATH_MAX];         /* "" = no token (socket only) */
    char host[GR_HEALTH_HOST_MAX];               /* direct: host (no brackets) */
    int port;                                    /* direct: 1..65535 */
    char ca_file[GR_HEALTH_PATH_MAX];            /* direct: "" only if insecure */
    char server_name[GR_HEALTH_HOST_MAX];        /* direct TLS: "" = host */
    int insecure;            /* direct: plaintext h2c (only used without ca_file) */
    int64_t retry_window_ns; /* direct: budget (default 5m) */
    int64_t attempt_max_ns;  /* per-attempt cap (default 30 s; lower only for tests) */
    int64_t socket_wait_ns;  /* socket: wait for the socket file (default 20 s) */
} gr_health_config;

/* Defaults: socket mode, nothing set, 5m window, 30 s attempts, 20 s wait. */
void gr_health_config_init(gr_health_config *cfg);

/* Read the environment (see the top of this file). Every failure is a
 * configuration error and returns GR_EINVAL with a message naming the
 * variable, e.g. "HEALTH_PUBLISH_TOKEN_PATH is required when
 * HEALTH_PUBLISH_TARGET is set" (PF-183), "HEALTH_PUBLISH_TLS_CA_FILE is
 * required when HEALTH_PUBLISH_TARGET is set unless
 * HEALTH_PUBLISH_INSECURE=true" (PF-184), "invalid HEALTH_PUBLISH_RETRY_WINDOW
 * …" (PF-185), "PLATFORM_CONNECTOR_SOCKET is required". */
int gr_health_config_from_env(gr_health_config *cfg, gr_err *err);

/* Setters used by the env loader and the CLI; GR_EINVAL with a message on bad
 * input. set_socket accepts "unix:///abs/path", "unix:path" or a plain path.
 * set_target accepts "host:port", "[v6]:port" or "host" (port 443). */
int gr_health_config_set_socket(gr_health_config *cfg, const char *value, gr_err *err);
int gr_health_config_set_target(gr_health_config *cfg, const char *value, gr_err *err);
/* Check the mode's requirements (token path, CA or insecure, window > 0). */
int gr_health_config_validate(const gr_health_config *cfg, gr_err *err);

/* Go duration restricted to ^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$, > 0, into ns.
 * GR_EINVAL otherwise (message names `what`). */
int gr_health_parse_window(const char *s, const char *what, int64_t *ns, gr_err *err);
/* Go strconv.ParseBool vocabulary 1,t,true,0,f,false (case-insensitive).
 * GR_EINVAL for anything else. */
int gr_health_parse_bool(const char *s, int *out);

/* --- publishing --------------------------------------------------------- */

typedef struct gr_health_publisher gr_health_publisher;

/* Test hooks: replace the clock, sleeping, randomness, socket check and the
 * gRPC call. Any member may be NULL (the real one is used). Borrowed: must
 * outlive the publisher. Production code passes NULL. */
typedef struct gr_health_hooks {
    void *ctx;
    int64_t (*now_ns)(void *ctx);  /* monotonic clock */
    int64_t (*wall_ns)(void *ctx); /* wall clock for generatedTimestamp */
    void (*sleep_ns)(void *ctx, int64_t ns);
    uint32_t (*random)(void *ctx);
    int (*ready)(void *ctx, const gr_grpc_endpoint *ep);
    int (*call)(void *ctx, const gr_grpc_call *call, gr_grpc_result *res, gr_err *err);
} gr_health_hooks;

/* The config is copied. hooks may be NULL. GR_EINVAL if the config does not
 * validate (a configuration error), GR_ENOMEM. */
int gr_health_publisher_new(const gr_health_config *cfg, const gr_health_hooks *hooks,
                            gr_health_publisher **out, gr_err *err);
/* gr_health_config_from_env() + gr_health_publisher_new(). GR_EINVAL means a
 * configuration error. */
int gr_health_publisher_from_env(gr_health_publisher **out, gr_err *err);
/* NULL is fine. */
void gr_health_publisher_free(gr_health_publisher *p);
/* Borrowed view of the publisher's config and retry state. */
const gr_health_config *gr_health_publisher_config(const gr_health_publisher *p);
const gr_health_retry *gr_health_publisher_retry(const gr_health_publisher *p);

typedef enum gr_health_outcome {
    GR_HEALTH_DELIVERED = 0,   /* the connector answered OK */
    GR_HEALTH_REJECTED = 1,    /* permanent gRPC code: given up at once */
    GR_HEALTH_UNDELIVERED = 2, /* retries or budget exhausted, or a retry-stopping code */
    GR_HEALTH_LOCAL_ERROR = 3, /* not sent: bad event, token file trouble, ENOMEM */
} gr_health_outcome;

typedef struct gr_health_report {
    gr_health_outcome outcome;
    int grpc_code;                      /* last gRPC status (-1 if no attempt) */
    char grpc_message[GR_GRPC_MSG_MAX]; /* its message */
    int attempts;                       /* gRPC calls made (or failed to connect) */
    int64_t elapsed_ns;                 /* monotonic time spent on this event */
    char idempotency_key[129];          /* the key sent */
} gr_health_report;

/* Send one event, retrying per the policy. Returns GR_OK iff delivered.
 * Otherwise: GR_EINVAL for an invalid event (never sent), GR_EIO for token
 * file trouble, GR_ENOMEM, or the gr_grpc_code_to_rc() of the last gRPC status
 * (GR_EAGAIN, GR_ETIMEDOUT, GR_EPERM, GR_EUNSUPPORTED, GR_EIO). Any non-OK
 * return means "not delivered". `rep` may be NULL. */
int gr_health_publish(gr_health_publisher *p, const gr_health_event *ev, gr_health_report *rep,
                      gr_err *err);

/* The gRPC method path. */
#define GR_HEALTH_METHOD_PATH "/datamodels.PlatformConnector/HealthEventOccurredV1"

#endif
