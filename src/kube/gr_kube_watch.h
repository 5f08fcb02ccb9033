/*
 * gr_kube_watch.h — the Kubernetes watch stream.
 *
 * The decoder is pure (sans-I/O): feed it the bytes of a watch response as
 * they arrive, in chunks of any size, and pull complete events out. The
 * stream is a sequence of JSON objects {"type":..., "object":{...}}, one per
 * line as the API server writes them; the decoder finds object boundaries
 * itself (strings and escapes respected), so it does not depend on the
 * newlines. Each event is capped (max_event bytes): a longer one is
 * GR_ETOOBIG and the decoder stops (memory stays bounded). Anything else
 * malformed is GR_EPARSE. After an error every call returns the same error.
 *
 * gr_kube_watch() runs one watch request over a gr_kube_client and hands each
 * event to a callback. It returns when the server ends the stream
 * (timeoutSeconds), when the callback or `o->cancel` stops it, when the
 * server sends an ERROR event (410 Gone/Expired → GR_ESTATE with
 * gr_kube_status_is_gone(st)), or when the stream stalls (no byte for
 * idle_s seconds → GR_ETIMEDOUT). The caller (the informer) decides whether
 * to re-watch from the last resourceVersion or relist.
 *
 * Ownership: gr_kube_watch_event.object is owned by the event;
 * gr_kube_watch_event_clear() releases it. Events passed to a callback are
 * borrowed for the duration of the call (json_incref to keep the object).
 */
#ifndef GR_KUBE_WATCH_H
#define GR_KUBE_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_err.h"
#include "gr_kube_rest.h"

#define GR_KUBE_WATCH_MAX_EVENT ((size_t)16 * 1024 * 1024) /* default per-event cap */

typedef enum gr_kube_event_type {
    GR_KUBE_EV_ADDED = 1,
    GR_KUBE_EV_MODIFIED,
    GR_KUBE_EV_DELETED,
    GR_KUBE_EV_BOOKMARK,
    GR_KUBE_EV_ERROR, /* object is a metav1.Status */
} gr_kube_event_type;

typedef struct gr_kube_watch_event {
    gr_kube_event_type type;
    json_t *object;
} gr_kube_watch_event;

const char *gr_kube_event_type_name(gr_kube_event_type t); /* "ADDED"... */
void gr_kube_watch_event_clear(gr_kube_watch_event *ev);

/* ---- decoder (pure) ---------------------------------------------------- */

typedef struct gr_kube_watch_decoder gr_kube_watch_decoder;

/* max_event 0 = GR_KUBE_WATCH_MAX_EVENT. */
int gr_kube_watch_decoder_new(size_t max_event, gr_kube_watch_decoder **out, gr_err *err);
/* Accept a protobuf watch stream too (the request asked for
 * application/vnd.kubernetes.protobuf): the first byte decides, '{' or
 * whitespace for JSON, else 4-byte-length frames of metav1.WatchEvent
 * (gr_kube_pb.h). Call before the first feed. Default: JSON only. */
void gr_kube_watch_decoder_allow_protobuf(gr_kube_watch_decoder *d);
/* Protobuf events: embedded JSON values that repeat (managedFields'
 * fieldsV1) are decoded once and shared by reference between events
 * (gr_kube_pb_cache): the events' objects are then read-only. */
void gr_kube_watch_decoder_share_embedded(gr_kube_watch_decoder *d);
void gr_kube_watch_decoder_free(gr_kube_watch_decoder *d);
/* Append bytes (copied). GR_ETOOBIG when the pending, incomplete event
 * would exceed the cap. */
int gr_kube_watch_decoder_feed(gr_kube_watch_decoder *d, const char *data, size_t len, gr_err *err);
/* 1: *ev holds the next event (caller clears it); 0: need more bytes;
 * < 0: error (GR_EPARSE with the event's ordinal and why, GR_ETOOBIG). */
int gr_kube_watch_decoder_next(gr_kube_watch_decoder *d, gr_kube_watch_event *ev, gr_err *err);
/* Bytes buffered but not yet returned as an event (a truncated tail). */
size_t gr_kube_watch_decoder_pending(const gr_kube_watch_decoder *d);
/* Events returned so far. */
uint64_t gr_kube_watch_decoder_count(const gr_kube_watch_decoder *d);

/* ---- one watch request ------------------------------------------------- */

/* Return non-zero to stop the watch (gr_kube_watch returns GR_ECANCELED, or
 * the negative GR_E* code returned). */
typedef int (*gr_kube_watch_fn)(void *ctx, const gr_kube_watch_event *ev);

typedef struct gr_kube_watch_stats {
    uint64_t events; /* events delivered (bookmarks included) */
    uint64_t bookmarks;
    char last_rv[64]; /* resourceVersion of the last event ("" if none) */
} gr_kube_watch_stats;

/* Uses o->label_selector, field_selector, resource_version (start after
 * it), timeout_seconds, allow_bookmarks, cancel, max_response (per-event
 * cap). idle_s: stall timeout (0 = timeout_seconds + 30). stats (optional)
 * is updated as events arrive, so after an error it still names the last
 * resourceVersion seen. */
int gr_kube_watch(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const gr_kube_opts *o,
                  long idle_s, gr_kube_watch_fn fn, void *ctx, gr_kube_watch_stats *stats,
                  gr_kube_status *st, gr_err *err);

/* ---- backoff (pure) ---------------------------------------------------- */

/* Exponential backoff with jitter, reset after a quiet period (client-go's
 * reflector: 800 ms initial, 30 s cap, reset after 2 min, jitter 1.0). */
typedef struct gr_kube_backoff {
    int64_t initial_ns, max_ns, reset_ns;
    int64_t cur_ns;
    int64_t last_ns; /* time of the previous failure */
    uint32_t seed;
} gr_kube_backoff;

void gr_kube_backoff_init(gr_kube_backoff *b, int64_t initial_ns, int64_t max_ns, int64_t reset_ns,
                          uint32_t seed);
/* Delay before the next attempt after a failure at now_ns. */
int64_t gr_kube_backoff_next(gr_kube_backoff *b, int64_t now_ns);
void gr_kube_backoff_reset(gr_kube_backoff *b);

#endif
