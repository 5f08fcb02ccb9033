/*
 * gr_casync.h — the platform-connector CA bundle sync of `publishTo:
 * deployment` (docs/webhook.md § "CA bundle sync").
 *
 * A pod cannot mount a Secret from the NVSentinel namespace, so the preflight
 * controller keeps a ConfigMap `nvsentinel-platform-connector-ca` (data key
 * `ca.crt`, labels nvsentinel.nvidia.com/managed-by=preflight and
 * nvsentinel.nvidia.com/platform-connector-ca=true) in every namespace the
 * webhook injects into (PF-171..PF-175; facts §2.12):
 *
 *   - when a pod is admitted there: gr_casync_enqueue(ns) queues the
 *     namespace (no API call on the admission path); the controller then
 *     runs gr_casync_ensure(ns) (get → create → on AlreadyExists re-get →
 *     update when data or labels differ);
 *   - for every namespace that matches the webhook's namespaceSelector, at
 *     start and whenever a namespace starts to match (a namespace informer
 *     with that label selector feeds a work queue);
 *   - every tick (default 10 s) the CA file is re-read (an empty or
 *     whitespace-only file is an error that leaves every copy as it is); the
 *     labelled copies are listed cluster-wide and every copy whose data or
 *     labels differ from the desired object is rewritten (a rotated CA, or a
 *     copy a user edited); namespaces whose ensure failed, or that match the
 *     selector but have no copy, are ensured again on the same tick.
 *
 * Two halves: the pure part (desired object, diff, CA validation, selector
 * rendering; no I/O) and the controller on the kube client.
 *
 * Ownership: json_t results are new references the caller decrefs; inputs are
 * borrowed. Strings in gr_casync_opts are copied by gr_casync_new(). The
 * client is borrowed and must outlive the sync.
 *
 * Errors: GR_EINVAL (bad CA file, bad selector; the message names the file
 * or field and the fix), GR_ETOOBIG (CA file over GR_CASYNC_CA_MAX), GR_EIO
 * (file unreadable), the kube client's codes for API failures, GR_ENOMEM.
 *
 * Thread-safety: gr_casync_ensure(), gr_casync_enqueue() and gr_casync_tick()
 * may be called from any thread at any time (the webhook's server threads
 * call enqueue).
 */
#ifndef GR_CASYNC_H
#define GR_CASYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_buf.h"
#include "gr_err.h"
#include "gr_kube_mgr.h"
#include "gr_kube_rest.h"

#define GR_CASYNC_CM_NAME         "nvsentinel-platform-connector-ca" /* PF-171 */
#define GR_CASYNC_KEY             "ca.crt"
#define GR_CASYNC_LABEL_MANAGED   "nvsentinel.nvidia.com/managed-by"
#define GR_CASYNC_LABEL_MANAGED_V "preflight"
#define GR_CASYNC_LABEL_CA        "nvsentinel.nvidia.com/platform-connector-ca"
#define GR_CASYNC_LABEL_CA_V      "true"
/* The label selector of every managed copy. */
#define GR_CASYNC_COPY_SELECTOR                                                  \
    GR_CASYNC_LABEL_MANAGED "=" GR_CASYNC_LABEL_MANAGED_V "," GR_CASYNC_LABEL_CA \
                            "=" GR_CASYNC_LABEL_CA_V
/* The chart's default namespaceSelector of the webhook. */
#define GR_CASYNC_DEFAULT_NS_SELECTOR "nvsentinel.nvidia.com/preflight=enabled"
/* Default CA source (the chart mounts the CA Secret there). */
#define GR_CASYNC_DEFAULT_CA_FILE "/etc/preflight-ca/ca.crt"
/* Re-read period of the CA file (upstream: 10 s). */
#define GR_CASYNC_DEFAULT_TICK_NS ((int64_t)10 * 1000000000)
/* A ConfigMap holds at most 1 MiB; so does the CA file we accept. */
#define GR_CASYNC_CA_MAX ((size_t)1024 * 1024)

/* ------------------------------------------------------------------ pure */

/* Validate CA file contents: not empty or whitespace only, no NUL byte,
 * valid UTF-8 (a ConfigMap `data` value is a string), at most
 * GR_CASYNC_CA_MAX bytes. `path` (borrowed, may be NULL) names the file in
 * the message. GR_EINVAL / GR_ETOOBIG. */
int gr_casync_validate_ca(const char *data, size_t len, const char *path, gr_err *err);

/* The desired ConfigMap in `ns` holding `ca` (NUL-terminated). New reference;
 * NULL on ENOMEM. */
json_t *gr_casync_desired(const char *ns, const char *ca);

/* True when `existing` (a ConfigMap as read from the API) differs from the
 * desired copy: data is not exactly {ca.crt: ca}, binaryData is present, or
 * one of the two labels is missing or has another value. */
bool gr_casync_needs_update(const json_t *existing, const char *ca);

/* Edit `obj` (a ConfigMap as read, keeping its resourceVersion) in place into
 * the desired copy: data = {ca.crt: ca}, binaryData removed, both labels set
 * (other labels and annotations kept). GR_EINVAL when obj is not an object;
 * GR_ENOMEM. */
int gr_casync_make_desired(json_t *obj, const char *ca, gr_err *err);

/* Render a metav1.LabelSelector (matchLabels, matchExpressions with In,
 * NotIn, Exists, DoesNotExist) as a label-selector string
 * ("a=b,c in (x,y),!d") appended to `out`. NULL or {} selects everything
 * (appends nothing). GR_EINVAL names the field ("namespaceSelector.
 * matchExpressions[0].operator: ..."), GR_ETOOBIG, GR_ENOMEM. */
int gr_casync_selector_string(const json_t *selector, const char *field, gr_buf *out, gr_err *err);

/* Tick schedule: the deadline of the next tick after one that ran at now_ns
 * (now_ns + tick_ns; tick_ns <= 0 means GR_CASYNC_DEFAULT_TICK_NS). */
int64_t gr_casync_next_tick(int64_t now_ns, int64_t tick_ns);

/* ------------------------------------------------------------ controller */

typedef struct gr_casync_opts {
    gr_kube_client *client;  /* borrowed; required */
    const char *ca_file;     /* NULL = GR_CASYNC_DEFAULT_CA_FILE */
    const char *ns_selector; /* label selector string; NULL = default; "" = all */
    int64_t tick_ns;         /* 0 = GR_CASYNC_DEFAULT_TICK_NS */
    int workers;             /* namespace queue workers; 0 = 2 */
} gr_casync_opts;

typedef struct gr_casync_stats {
    uint64_t ticks;      /* ticks run */
    uint64_t ca_loads;   /* times a changed, valid CA was loaded */
    uint64_t ca_errors;  /* ticks whose CA file was invalid or unreadable */
    uint64_t created;    /* copies created */
    uint64_t updated;    /* copies rewritten */
    uint64_t failures;   /* ensure/update calls that failed */
    uint64_t ensures;    /* gr_casync_ensure() calls that reached the API */
    uint64_t cache_hits; /* gr_casync_ensure() calls answered from the cache */
} gr_casync_stats;

typedef struct gr_casync gr_casync;

/* Copy the options and read + validate the CA file (an invalid or missing
 * file fails here, naming healthPublish.caFile). Starts nothing. */
int gr_casync_new(const gr_casync_opts *o, gr_casync **out, gr_err *err);

/* Start the namespace informer, its workers and the ticker. Every namespace
 * matching the selector gets its copy (PF-173). */
int gr_casync_start(gr_casync *s, gr_err *err);

/* The same on the controller runtime (instead of gr_casync_start): a
 * label-selected namespace cache on `m`, a leader-only controller
 * "ca-bundle-sync" keyed by namespace (PF-173) and a leader-only runnable
 * "ca-bundle-ticker" (PF-174), so only the elected replica writes. From
 * here on the sync uses the manager's client. Before gr_kube_mgr_start;
 * the manager must be freed before the sync. GR_ESTATE when started. */
int gr_casync_attach(gr_casync *s, gr_kube_mgr *m, gr_err *err);

/* Queue `ns` for an ensure by the controller (PF-172) without any API call:
 * what the admission path calls (issue 20). A namespace whose copy this
 * process already verified is skipped. On a replica that does not lead the
 * key waits in the queue; the leader's namespace cache and tick cover the
 * namespace meanwhile. */
void gr_casync_enqueue(gr_casync *s, const char *ns);

/* Make sure `ns` holds an up-to-date copy (PF-172). Answered from a cache
 * when this process already wrote or verified the copy for the current CA;
 * a failure queues `ns` for a retry (and the next tick). */
int gr_casync_ensure(gr_casync *s, const char *ns, gr_err *err);

/* One tick now (what the ticker thread does every tick_ns): re-read the CA
 * file; on error log it, count it and return it (copies untouched);
 * otherwise rewrite every labelled copy that differs and ensure the failed
 * and missing namespaces (PF-174). A write that hits 409 Conflict is retried
 * after re-reading the copy. Ticks are serialized (a call made while the
 * ticker thread ticks waits for it). GR_OK only when every copy it saw or
 * ensured is the desired one; otherwise the first error. */
int gr_casync_tick(gr_casync *s, gr_err *err);

/* Stop the ticker, informer and workers (idempotent). */
void gr_casync_stop(gr_casync *s);
void gr_casync_free(gr_casync *s);
void gr_casync_stats_get(gr_casync *s, gr_casync_stats *out);

#endif
