/*
 * gr_kube_rt.h — the reconcile helpers of the controller runtime: what a
 * reconciler calls to change the world safely.
 *
 *  - requeue decision (pure): reconcile result → forget / requeue after /
 *    rate-limited retry;
 *  - read-modify-write with conflict retry on the main resource or the
 *    status subresource (re-read, re-apply the mutation, bounded attempts;
 *    an unchanged object is not written), as an update (PUT) or as a merge
 *    patch carrying the resourceVersion (optimistic lock);
 *  - finalizer add/remove on the server (same retry), controller
 *    ownerReference setting (pure, on an object about to be created);
 *  - a core/v1 Event recorder: repeats of the same (object, type, reason,
 *    message) are aggregated into one Event whose count and lastTimestamp
 *    grow (client-go's EventCorrelator, simplified); messages are capped at
 *    GR_KUBE_EVENT_MSG_MAX bytes ending "... [truncated]".
 *
 * Errors: GR_E* codes; `st` receives the API server's Status when it
 * answered with one. Conflicts left after the last attempt return
 * GR_ECONFLICT. Ownership: objects passed in are borrowed; *out results are
 * new references the caller decrefs.
 */
#ifndef GR_KUBE_RT_H
#define GR_KUBE_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_err.h"
#include "gr_kube_rest.h"

/* ---- requeue decision (pure) ------------------------------------------- */

typedef enum gr_kube_requeue {
    GR_KUBE_REQUEUE_FORGET = 0, /* done: forget the key's failures */
    GR_KUBE_REQUEUE_AFTER,      /* done for now: forget failures, come back after a delay */
    GR_KUBE_REQUEUE_BACKOFF,    /* failed: retry with the rate limiter's backoff */
} gr_kube_requeue;

/* rc: the reconcile's return; after_ns: its requeue-after (<= 0 = none). */
gr_kube_requeue gr_kube_requeue_decide(int rc, int64_t after_ns);
/* "success", "requeue_after", "error" (metrics label). */
const char *gr_kube_requeue_result(gr_kube_requeue d);

/* ---- read-modify-write with conflict retry ----------------------------- */

#define GR_KUBE_RETRY_ATTEMPTS 5

typedef struct gr_kube_rmw_opts {
    const char *subresource; /* NULL = the object, "status" = the status subresource */
    bool patch;              /* merge patch with the read resourceVersion (else PUT) */
    int max_attempts;        /* 0 = GR_KUBE_RETRY_ATTEMPTS */
    const char *field_manager;
    const atomic_int *cancel;
} gr_kube_rmw_opts;

/* GET the object, let mutate edit it in place (GR_ECANCELED from mutate:
 * leave it as is), write it when it changed; on 409 Conflict start over
 * (10 ms apart). *out (optional) gets the object as last written or read;
 * *attempts (optional) the number of writes tried; *changed (optional)
 * whether a write happened. */
int gr_kube_rmw(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const char *name,
                const gr_kube_rmw_opts *ro, gr_kube_mutate_fn mutate, void *ctx, json_t **out,
                int *attempts, bool *changed, gr_kube_status *st, gr_err *err);

/* Status subresource shortcuts: PUT (update) or merge patch. */
int gr_kube_status_update_retry(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns,
                                const char *name, gr_kube_mutate_fn mutate, void *ctx, json_t **out,
                                gr_kube_status *st, gr_err *err);
int gr_kube_status_patch_retry(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns,
                               const char *name, gr_kube_mutate_fn mutate, void *ctx, json_t **out,
                               gr_kube_status *st, gr_err *err);

/* ---- finalizers, owner references -------------------------------------- */

/* Make sure finalizer f is present (ensure) or absent (remove) on the
 * server's object; *changed tells whether a write happened. Ensuring on an
 * object being deleted is GR_ESTATE (the API server forbids new
 * finalizers then). GR_ENOTFOUND when the object is gone (remove treats
 * that as success: nothing left to finalize). */
int gr_kube_finalizer_ensure(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns,
                             const char *name, const char *f, bool *changed, gr_err *err);
int gr_kube_finalizer_drop(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns,
                           const char *name, const char *f, bool *changed, gr_err *err);
/* Pure: set `owner` as obj's controller (controller and blockOwnerDeletion
 * true). GR_ECONFLICT when another controller owns obj; GR_EINVAL when the
 * owner lacks apiVersion/kind/name/uid or lives in another namespace than
 * a namespaced obj. */
int gr_kube_set_controller_ref(json_t *obj, const json_t *owner, gr_err *err);

/* ---- core/v1 Events ---------------------------------------------------- */

#define GR_KUBE_EVENT_MSG_MAX    1024
#define GR_KUBE_EVENT_TRUNC      "... [truncated]"
#define GR_KUBE_EVENT_CACHE_MAX  4096 /* aggregation entries kept (oldest dropped) */
#define GR_KUBE_EVENT_AGG_WINDOW (10LL * 60 * 1000000000LL) /* repeats merge within 10 min */

/* Pure: copy msg into out (out_sz >= GR_KUBE_EVENT_MSG_MAX + 1), cut at a
 * UTF-8 boundary to fit GR_KUBE_EVENT_MSG_MAX bytes with the suffix
 * "... [truncated]" when longer. Returns true when truncated. */
bool gr_kube_event_message(const char *msg, char *out, size_t out_sz);

typedef struct gr_kube_events gr_kube_events;

/* component: source.component / reportingComponent ("job-controller");
 * host: source.host / reportingInstance (may be NULL). Copied; c borrowed. */
int gr_kube_events_new(gr_kube_client *c, const char *component, const char *host,
                       gr_kube_events **out, gr_err *err);
void gr_kube_events_free(gr_kube_events *e);

/* Pure core: what to send at now_unix_ns. *create: POST *body to
 * namespace *ns_out; else a merge patch *body for the Event named *name.
 * Strings *ns_out / *name are owned by the recorder, valid until the next
 * call. GR_EINVAL for an object without kind/name or a bad type. */
int gr_kube_events_plan(gr_kube_events *e, const json_t *obj, const char *type, const char *reason,
                        const char *message, int64_t now_unix_ns, json_t **body, bool *create,
                        const char **ns_out, const char **name, gr_err *err);
/* Record an Event about obj ("Normal"/"Warning", CamelCase reason). A
 * repeat PATCHes count/lastTimestamp; when that Event is gone it creates a
 * new one. Failures are returned (callers usually log and continue). */
int gr_kube_event(gr_kube_events *e, const json_t *obj, const char *type, const char *reason,
                  const char *message, gr_err *err);
__attribute__((format(printf, 5, 6))) int gr_kube_eventf(gr_kube_events *e, const json_t *obj,
                                                         const char *type, const char *reason,
                                                         const char *fmt, ...);

#endif
