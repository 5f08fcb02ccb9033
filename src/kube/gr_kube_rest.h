/*
 * gr_kube_rest.h — REST access to the Kubernetes API on JSON objects
 * (jansson), addressed by group/version/resource + namespace + name.
 *
 *   gr_kube_client *c;
 *   gr_kube_client_new(&cfg, &c, &err);
 *   json_t *pod = NULL;
 *   gr_kube_status st;
 *   if (gr_kube_get(c, &GR_KUBE_PODS, "ns", "p", NULL, &pod, &st, &err) != GR_OK &&
 *       st.reason == GR_KUBE_REASON_NOT_FOUND) ...
 *
 * Transport: libcurl. A pool of easy handles, each keeping the one
 * connection it last used, so requests reuse connections (at most
 * GR_KUBE_MAX_IDLE_CONNS idle); DNS and TLS sessions are shared (CURLSH).
 * HTTP/2 is negotiated when the config asks for it. Client-side
 * rate limit (token bucket, QPS/burst), per-request timeouts, a cap on every
 * response body (GR_ETOOBIG past it), 429/Retry-After honoured (up to
 * GR_KUBE_MAX_RETRIES retries).
 *
 * Errors: every call returns GR_OK or a GR_E* code. When the API server
 * answered with an error, `st` (optional) receives the metav1.Status
 * (reason, code, message, causes) and the return code is mapped:
 *   NotFound → GR_ENOTFOUND        AlreadyExists, Conflict → GR_ECONFLICT
 *   Forbidden, Unauthorized → GR_EPERM   Invalid, BadRequest → GR_EINVAL
 *   Gone, Expired → GR_ESTATE      TooManyRequests, ServerTimeout, Timeout,
 *   ServiceUnavailable → GR_EAGAIN  anything else → GR_EIO
 * Transport failures are GR_EIO / GR_ETIMEDOUT with st->reason NONE and
 * st->http_code 0. err->msg reads "GET /api/v1/namespaces/a/pods/b: 404
 * NotFound: pods \"b\" not found".
 *
 * Ownership: json_t results (`json_t **out`) are new references the caller
 * decrefs; json_t inputs are borrowed. Strings in gr_kube_opts are borrowed
 * for the duration of the call.
 *
 * Thread-safety: a gr_kube_client may be used from many threads at once.
 */
#ifndef GR_KUBE_REST_H
#define GR_KUBE_REST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_buf.h"
#include "gr_err.h"
#include "gr_kube_config.h"

#define GR_KUBE_DEFAULT_QPS        5.0
#define GR_KUBE_DEFAULT_BURST      10
#define GR_KUBE_DEFAULT_TIMEOUT_MS 30000
#define GR_KUBE_MAX_RESPONSE       ((size_t)64 * 1024 * 1024) /* default body cap */
#define GR_KUBE_MAX_RETRIES        5                          /* on 429 / Retry-After */
#define GR_KUBE_LIST_PAGE          500                        /* gr_kube_list_all page size */
/* Idle connections a client keeps for reuse (client-go's MaxIdleConnsPerHost,
 * 25). A request takes an idle connection or opens one; an open watch holds
 * its own, so watches never take connections from requests. Past this many
 * idle ones a finished request's connection is closed. */
#define GR_KUBE_MAX_IDLE_CONNS 25
/* An idle connection older than this is not reused (closed, a new one
 * opened): below the API server's 90 s idle timeout, so a request never goes
 * out on a connection the server is closing. */
#define GR_KUBE_IDLE_CONN_MAX_AGE_S 60

/* ---- addressing -------------------------------------------------------- */

typedef struct gr_kube_gvr {
    const char *group; /* "" for the core group */
    const char *version;
    const char *resource; /* plural, lower case: "pods" */
} gr_kube_gvr;

extern const gr_kube_gvr GR_KUBE_PODS;
extern const gr_kube_gvr GR_KUBE_CONFIGMAPS;
extern const gr_kube_gvr GR_KUBE_SECRETS;
extern const gr_kube_gvr GR_KUBE_NAMESPACES;
extern const gr_kube_gvr GR_KUBE_NODES;
extern const gr_kube_gvr GR_KUBE_LEASES;
extern const gr_kube_gvr GR_KUBE_EVENTS;      /* events.k8s.io/v1 */
extern const gr_kube_gvr GR_KUBE_CORE_EVENTS; /* core v1 (what the runtime's recorder writes) */
extern const gr_kube_gvr GR_KUBE_CRDS;

typedef enum gr_kube_patch_type {
    GR_KUBE_PATCH_JSON = 0,  /* application/json-patch+json (RFC 6902) */
    GR_KUBE_PATCH_MERGE,     /* application/merge-patch+json (RFC 7386) */
    GR_KUBE_PATCH_STRATEGIC, /* application/strategic-merge-patch+json (built-in kinds) */
    GR_KUBE_PATCH_APPLY,     /* application/apply-patch+yaml (server-side apply) */
} gr_kube_patch_type;

/* Options shared by all verbs; each call documents the fields it uses.
 * Zero-initialise ({0}) for defaults; NULL means all defaults. */
typedef struct gr_kube_opts {
    const char *subresource; /* "status", "scale", ... */
    /* list / watch */
    const char *label_selector;
    const char *field_selector;
    long limit; /* 0 = no limit */
    const char *continue_token;
    const char *resource_version;
    const char *resource_version_match; /* "NotOlderThan" | "Exact" */
    long timeout_seconds;               /* watch: server-side timeout (0 = 300) */
    bool allow_bookmarks;               /* watch */
    /* writes */
    const char *field_manager;
    bool force;   /* apply: take ownership of conflicting fields */
    bool dry_run; /* dryRun=All */
    /* delete */
    const char *precondition_uid;
    const char *precondition_rv;
    const char *propagation;   /* "Foreground" | "Background" | "Orphan" */
    long grace_period_seconds; /* -1 or 0..: only sent when has_grace_period */
    bool has_grace_period;
    /* transport */
    int64_t timeout_ms;       /* 0 = client default */
    size_t max_response;      /* 0 = GR_KUBE_MAX_RESPONSE */
    const atomic_int *cancel; /* non-zero aborts the request (GR_ECANCELED) */
    const char *accept;       /* Accept header (NULL = application/json) */
    /* watch: streaming list (sendInitialEvents=true; the server first sends
     * the current state as ADDED events, then a BOOKMARK annotated
     * k8s.io/initial-events-end: "true"). Sent with resource_version_match
     * (client-go uses "NotOlderThan") and allow_bookmarks. */
    bool send_initial_events;
    /* watch, protobuf: repeated embedded JSON (managedFields' fieldsV1) is
     * decoded once and shared by reference between events' objects, which
     * must then not be modified (gr_kube_watch_decoder_share_embedded) */
    bool share_embedded;
} gr_kube_opts;

/* ---- errors ------------------------------------------------------------ */

typedef enum gr_kube_reason {
    GR_KUBE_REASON_NONE = 0, /* success, or no response */
    GR_KUBE_REASON_UNKNOWN,
    GR_KUBE_REASON_NOT_FOUND,
    GR_KUBE_REASON_ALREADY_EXISTS,
    GR_KUBE_REASON_CONFLICT,
    GR_KUBE_REASON_FORBIDDEN,
    GR_KUBE_REASON_UNAUTHORIZED,
    GR_KUBE_REASON_INVALID,
    GR_KUBE_REASON_BAD_REQUEST,
    GR_KUBE_REASON_GONE,
    GR_KUBE_REASON_EXPIRED,
    GR_KUBE_REASON_TOO_MANY_REQUESTS,
    GR_KUBE_REASON_SERVER_TIMEOUT,
    GR_KUBE_REASON_TIMEOUT,
    GR_KUBE_REASON_METHOD_NOT_ALLOWED,
    GR_KUBE_REASON_NOT_ACCEPTABLE,
    GR_KUBE_REASON_REQUEST_ENTITY_TOO_LARGE,
    GR_KUBE_REASON_UNSUPPORTED_MEDIA_TYPE,
    GR_KUBE_REASON_INTERNAL_ERROR,
    GR_KUBE_REASON_SERVICE_UNAVAILABLE,
} gr_kube_reason;

#define GR_KUBE_CAUSES_MAX 8
/* Error bodies larger than this are not decoded as a Status (the API server's
 * are a few KiB); the call still fails with the code-derived reason. */
#define GR_KUBE_STATUS_MAX_BYTES  ((size_t)1024 * 1024)
#define GR_KUBE_RETRY_AFTER_MAX_S 2147483647L /* client-go's int32 */

typedef struct gr_kube_cause {
    char type[64];   /* "FieldValueInvalid", ... (Status.details.causes[].reason) */
    char field[256]; /* "metadata.name" */
    char message[512];
} gr_kube_cause;

typedef struct gr_kube_status {
    long http_code; /* 0 when there was no HTTP response */
    gr_kube_reason reason;
    char reason_str[64]; /* as sent ("NotFound"), or derived from the code */
    char message[1024];
    char kind[64];  /* details.kind */
    char name[256]; /* details.name */
    size_t ncauses; /* causes kept (at most GR_KUBE_CAUSES_MAX) */
    gr_kube_cause causes[GR_KUBE_CAUSES_MAX];
    long retry_after_s; /* details.retryAfterSeconds or Retry-After header */
} gr_kube_status;

void gr_kube_status_clear(gr_kube_status *st);
/* Pure: fill `st` from an HTTP status code and response body (a
 * metav1.Status when the server sent one; otherwise derived from the code as
 * client-go does, with the start of the body as the message). Returns the
 * mapped GR_E* code (GR_OK for 2xx); never fails otherwise. Hostile bodies
 * are safe: a body over GR_KUBE_STATUS_MAX_BYTES, nested too deeply for
 * jansson (2048 levels) or of another kind is not a Status (duplicate keys:
 * the last wins, as Go's encoding/json); at most
 * GR_KUBE_CAUSES_MAX causes are kept (non-object causes skipped); every
 * string is truncated at a UTF-8 boundary with control characters turned
 * into spaces; Status.code is used only when http_code is 0 and it lies in
 * 100..599. */
int gr_kube_status_from_response(long http_code, const char *body, size_t len, gr_kube_status *st);
/* Same, from an already-parsed Status object (watch ERROR events). */
int gr_kube_status_from_json(long http_code, const json_t *status, gr_kube_status *st);
gr_kube_reason gr_kube_reason_parse(const char *reason);
const char *gr_kube_reason_name(gr_kube_reason r); /* "NotFound"; never NULL */
int gr_kube_reason_code(gr_kube_reason r);         /* the GR_E* mapping above */
/* Gone or Expired (a resourceVersion too old): relist. */
bool gr_kube_status_is_gone(const gr_kube_status *st);

/* ---- small accessors ---------------------------------------------------- */

/* obj.metadata.<field> as a string (borrowed) or NULL. */
const char *gr_kube_obj_meta(const json_t *obj, const char *field);
/* A List's metadata.continue (borrowed) or NULL when it is the last page. */
const char *gr_kube_list_continue(const json_t *list);
/* Wall-clock Unix time in nanoseconds, for the pure helpers' `now`. */
int64_t gr_kube_now_ns(void);

/* ---- paths (pure) ------------------------------------------------------ */

/* Append "/api/v1/namespaces/<ns>/<resource>[/<name>[/<sub>]]" (core group)
 * or "/apis/<group>/<version>/..." plus the query string built from `o`
 * (watch adds watch=1). ns/name may be NULL. Names are percent-encoded. */
int gr_kube_build_path(gr_buf *out, const gr_kube_gvr *gvr, const char *ns, const char *name,
                       const char *subresource, const gr_kube_opts *o, bool watch, gr_err *err);
/* Pure token bucket (client-go's flowcontrol semantics): returns how long to
 * wait (ns) before a request at now_ns may go, and books the token. */
typedef struct gr_kube_bucket {
    double qps;
    double burst;
    double tokens;
    int64_t last_ns;
    bool started;
} gr_kube_bucket;
void gr_kube_bucket_init(gr_kube_bucket *b, double qps, int burst);
int64_t gr_kube_bucket_reserve(gr_kube_bucket *b, int64_t now_ns);
/* How long (ns) until the bucket holds `n` tokens at now_ns (0: it does
 * now, or the bucket is unlimited); n is capped at the burst. Books
 * nothing. */
int64_t gr_kube_bucket_wait_for(const gr_kube_bucket *b, int n, int64_t now_ns);

/* ---- client ------------------------------------------------------------ */

typedef struct gr_kube_client gr_kube_client;

/* Copies what it needs from cfg (cfg may be freed afterwards). */
int gr_kube_client_new(const gr_kube_config *cfg, gr_kube_client **out, gr_err *err);
void gr_kube_client_free(gr_kube_client *c);
/* Borrowed: the configuration the client was built with. */
const gr_kube_config *gr_kube_client_config(const gr_kube_client *c);
/* Requests sent so far (for tests/metrics). */
uint64_t gr_kube_client_requests(const gr_kube_client *c);
/* Wait until the client's rate limit would let `n` requests go back to
 * back (its token bucket holds n tokens; n is capped at the burst),
 * booking nothing. A caller about to send n requests in a row then sends
 * them together instead of one per token interval: the same rate, but one
 * wake-up instead of n (a request right after a sleep costs about twice
 * the CPU of one that follows another: cold caches). Other threads may
 * take the tokens meanwhile; the requests then wait as usual. GR_OK, or
 * GR_ECANCELED once *cancel (may be NULL) is non-zero. */
int gr_kube_client_wait_burst(gr_kube_client *c, int n, const atomic_int *cancel);

/* Connections opened so far (each a TCP connect, and a TLS handshake over
 * https); requests minus connections were sent on a reused connection. 0 on
 * a non-libcurl backend. For tests/metrics. */
uint64_t gr_kube_client_connections(const gr_kube_client *c);

/* ---- backend table ------------------------------------------------------
 * The two lowest calls (gr_kube_request, gr_kube_request_stream) dispatch
 * through the client's backend. The default backend is libcurl (the
 * production transport); gr_kube_client_new_backend() installs another one,
 * e.g. the in-memory API server of gr_kube_fake.h. A backend answers with
 * the raw HTTP exchange: the client keeps the retry (429/Retry-After) and
 * Status mapping, so every verb behaves the same on every backend.
 *
 * request: fill *http (status code), resp (the body, any status; capped by
 * resp->max: return GR_ETOOBIG past it) and *retry_after_s (0 when none).
 * Return GR_OK when an HTTP answer was produced, or a transport error
 * (GR_EIO, GR_ETIMEDOUT, GR_ECANCELED when o->cancel became non-zero).
 * request_stream: pass a 2xx body to on_data chunk by chunk (on_data's
 * non-zero return stops the stream: return GR_ECANCELED or its negative
 * value); a non-2xx body goes into errbody. Blocks until the stream ends,
 * o->cancel is set, or idle_s (> 0) passes without data (GR_ETIMEDOUT). */
typedef struct gr_kube_backend {
    const char *name; /* "curl", "fake" */
    int (*request)(void *bctx, const char *method, const char *path, const char *content_type,
                   const char *body, size_t body_len, const gr_kube_opts *o, gr_buf *resp,
                   long *http, long *retry_after_s, gr_err *err);
    int (*request_stream)(void *bctx, const char *method, const char *path, const gr_kube_opts *o,
                          long idle_s, int (*on_data)(void *ctx, const char *data, size_t len),
                          void *ctx, long *http, gr_buf *errbody, gr_err *err);
    void (*free)(void *bctx); /* optional: called by gr_kube_client_free() */
} gr_kube_backend;

/* A client whose transport is `be` (borrowed; static tables are typical)
 * with context bctx (owned by the client when be->free is set, else
 * borrowed). cfg may be NULL (a placeholder config, server "backend:<name>",
 * no client-side rate limit); otherwise QPS/burst from cfg apply as with
 * curl (cfg->qps < 0 disables the limit). */
int gr_kube_client_new_backend(const gr_kube_config *cfg, const gr_kube_backend *be, void *bctx,
                               gr_kube_client **out, gr_err *err);
/* The backend's name ("curl" for the default). */
const char *gr_kube_client_backend(const gr_kube_client *c);

/* Raw request. path begins with '/' and includes any query. body may be
 * NULL. The response body (any status) goes into resp (capped by
 * o->max_response). *http (optional) receives the status code. Non-2xx
 * answers return the mapped code with st filled. */
int gr_kube_request(gr_kube_client *c, const char *method, const char *path,
                    const char *content_type, const char *body, size_t body_len,
                    const gr_kube_opts *o, gr_buf *resp, long *http, gr_kube_status *st,
                    gr_err *err);

/* Streaming variant: every chunk of the body is passed to on_data as it
 * arrives (return non-zero to stop: GR_ECANCELED). Used by watch and logs.
 * idle_s > 0 aborts with GR_ETIMEDOUT when no byte arrives for that long. */
typedef int (*gr_kube_data_fn)(void *ctx, const char *data, size_t len);
int gr_kube_request_stream(gr_kube_client *c, const char *method, const char *path,
                           const gr_kube_opts *o, long idle_s, gr_kube_data_fn on_data, void *ctx,
                           long *http, gr_kube_status *st, gr_err *err);

/* ---- verbs ------------------------------------------------------------- */

/* GET one object. Uses o->subresource, o->resource_version. */
int gr_kube_get(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const char *name,
                const gr_kube_opts *o, json_t **out, gr_kube_status *st, gr_err *err);
/* One page of a list (ns NULL = all namespaces). Uses selectors, limit,
 * continue_token, resource_version(_match). The returned List carries
 * metadata.continue when more pages exist. */
int gr_kube_list(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const gr_kube_opts *o,
                 json_t **out, gr_kube_status *st, gr_err *err);
/* Every page (o->limit per page, default GR_KUBE_LIST_PAGE) merged into one
 * List whose metadata.resourceVersion is the list's snapshot version. */
int gr_kube_list_all(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns,
                     const gr_kube_opts *o, json_t **out, gr_kube_status *st, gr_err *err);
/* POST. Uses field_manager, dry_run. */
int gr_kube_create(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const json_t *obj,
                   const gr_kube_opts *o, json_t **out, gr_kube_status *st, gr_err *err);
/* PUT to metadata.name (o->subresource "status" updates status only). The
 * object's metadata.resourceVersion makes it a compare-and-swap. */
int gr_kube_update(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const json_t *obj,
                   const gr_kube_opts *o, json_t **out, gr_kube_status *st, gr_err *err);
int gr_kube_update_status(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns,
                          const json_t *obj, const gr_kube_opts *o, json_t **out,
                          gr_kube_status *st, gr_err *err);
/* PATCH with the given type. Apply requires o->field_manager; o->force. */
int gr_kube_patch(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const char *name,
                  gr_kube_patch_type type, const json_t *patch, const gr_kube_opts *o, json_t **out,
                  gr_kube_status *st, gr_err *err);
/* Server-side apply of a full object (apiVersion, kind, metadata.name). */
int gr_kube_apply(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const json_t *obj,
                  const gr_kube_opts *o, json_t **out, gr_kube_status *st, gr_err *err);
/* DELETE with DeleteOptions from precondition_uid/_rv, propagation,
 * grace period, dry_run. out (optional) gets the server's answer. */
int gr_kube_delete(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const char *name,
                   const gr_kube_opts *o, json_t **out, gr_kube_status *st, gr_err *err);

/* Read-modify-write with retry on Conflict (client-go retry.RetryOnConflict
 * with DefaultRetry: 5 attempts, 10 ms apart, 10 % jitter). mutate receives
 * the freshly read object to edit in place; returning GR_ECANCELED skips the
 * update (*out gets the unchanged object), any other error aborts.
 * *attempts (optional) receives how many PUTs were made. */
typedef int (*gr_kube_mutate_fn)(json_t *obj, void *ctx, gr_err *err);
int gr_kube_update_retry(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns,
                         const char *name, const gr_kube_opts *o, gr_kube_mutate_fn mutate,
                         void *ctx, json_t **out, int *attempts, gr_kube_status *st, gr_err *err);

typedef struct gr_kube_log_opts {
    const char *container;
    long tail_lines;        /* -1 = all (default when 0 is given: all) */
    long limit_bytes;       /* 0 = no server-side limit */
    const char *since_time; /* RFC 3339 */
    bool timestamps;
    bool previous;
} gr_kube_log_opts;
/* GET pods/<name>/log into `out` (its cap bounds the size; GR_ETOOBIG). */
int gr_kube_pod_logs(gr_kube_client *c, const char *ns, const char *name,
                     const gr_kube_log_opts *lo, gr_buf *out, gr_kube_status *st, gr_err *err);

#endif
