/*
 * gr_kube_informer.h — a local cache of one resource kept in sync by
 * list+watch (client-go's reflector + indexer + shared informer, small).
 *
 * Store: objects keyed "namespace/name" (or "name" when cluster-scoped),
 * held in a compact binary form (tagged values, varint lengths, object keys
 * shared through a per-store dictionary: about half the JSON text's size),
 * written by walking the parsed object — never serialised to JSON text and
 * never re-parsed from it. A transform hook trims objects before they are
 * stored: it decides what is kept and so what the cache costs. On an update
 * the handler receives the new object as parsed and the old one decoded
 * from the compact form (built directly as jansson objects, and only when
 * an on_update handler is set). Indexes map a computed value (namespace, a
 * label value, a field such as spec.nodeName) to the keys that have it; the
 * values are recorded with each entry, so replacing or removing one never
 * decodes it. Reads return fresh objects (the caller owns them), so readers
 * never see a half-updated object. Thread-safe (rwlock).
 *
 * Informer: a thread syncs, then watches with bookmarks. Sync (sync_mode):
 * by default a streaming list — one watch with sendInitialEvents=true,
 * resourceVersionMatch=NotOlderThan and allowWatchBookmarks=true, whose
 * initial ADDED events are applied as they arrive and which is in sync at
 * the BOOKMARK annotated k8s.io/initial-events-end: "true"; the same stream
 * then carries the changes. When the server refuses it (an HTTP 4xx: the
 * WatchList feature is off or the server predates it) the informer uses a
 * paginated LIST from then on; when a streaming list fails otherwise or
 * ends before its bookmark, that one sync is done by LIST. LIST pages are
 * applied as they arrive (the whole list is never held). A closed stream
 * re-watches from the last delivered resourceVersion; a broken connection
 * re-watches after an exponential backoff (800 ms … 30 s); 410
 * Gone/Expired re-syncs, and every re-sync is applied as a diff (adds,
 * updates for changed resourceVersions, deletes for keys the re-sync did not
 * deliver), so handlers see every state change once and never a
 * duplicate. Handlers run on the informer's threads, one at a
 * time (serialised), after the store is updated; they must not block for
 * long (enqueue a key into a gr_kube_queue). Resync re-delivers every
 * cached object as an update (old == new) every resync period.
 *
 * Ownership: objects passed to handlers and index functions are borrowed for
 * the duration of the call (json_incref to keep one; do not modify them,
 * then or later: on an update from the informer's watch, old and new share
 * the values that did not change, by reference; without a transform,
 * objects decoded from protobuf share repeated managedFields[].fieldsV1
 * values with each other).
 * The transform hook receives an object it may edit in place or replace
 * (*obj, decref the old one).
 */
#ifndef GR_KUBE_INFORMER_H
#define GR_KUBE_INFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_err.h"
#include "gr_kube_rest.h"

#define GR_KUBE_INDEX_MAX_VALUES 16 /* values one object may have in one index */
#define GR_KUBE_KEY_MAX          512
/* The annotation on the BOOKMARK that ends a streaming list's initial events. */
#define GR_KUBE_INITIAL_EVENTS_END "k8s.io/initial-events-end"

/* ---- store ------------------------------------------------------------- */

typedef struct gr_kube_store gr_kube_store;

/* Fill vals[] with up to max values for obj (borrowed from obj or static);
 * return how many. */
typedef size_t (*gr_kube_index_fn)(const json_t *obj, void *ctx, const char **vals, size_t max);

/* Built-in index functions. */
size_t gr_kube_index_namespace(const json_t *obj, void *ctx, const char **vals, size_t max);
/* ctx: the label key (const char *) */
size_t gr_kube_index_label(const json_t *obj, void *ctx, const char **vals, size_t max);
/* ctx: a dotted path to a string field, e.g. "spec.nodeName" */
size_t gr_kube_index_field(const json_t *obj, void *ctx, const char **vals, size_t max);

/* "ns/name" or "name"; GR_EINVAL without metadata.name, GR_ETOOBIG. */
int gr_kube_object_key(const json_t *obj, char *out, size_t outsz, gr_err *err);

int gr_kube_store_new(gr_kube_store **out, gr_err *err);
void gr_kube_store_free(gr_kube_store *s);
/* Add an index before the store is filled (name and ctx are borrowed and
 * must outlive the store). GR_ESTATE when the store is not empty. */
int gr_kube_store_add_index(gr_kube_store *s, const char *name, gr_kube_index_fn fn, void *ctx,
                            gr_err *err);
/* Insert or replace (the store keeps obj's compact form). *old (optional)
 * receives the previous object (caller decrefs; NULL when new). *changed (optional) is false when
 * the stored resourceVersion was the same (nothing written). */
int gr_kube_store_upsert(gr_kube_store *s, const json_t *obj, json_t **old, bool *changed,
                         gr_err *err);
/* Remove by key; *old (optional) receives the removed object. GR_ENOTFOUND. */
int gr_kube_store_delete(gr_kube_store *s, const char *key, json_t **old, gr_err *err);
/* A fresh copy of one object (the caller owns it; decref). GR_ENOTFOUND. */
int gr_kube_store_get(gr_kube_store *s, const char *key, json_t **out, gr_err *err);
/* A JSON array with copies of every object (or those whose index value
 * matches when index != NULL). */
int gr_kube_store_list(gr_kube_store *s, const char *index, const char *value, json_t **out,
                       gr_err *err);
/* A JSON array of every key. */
int gr_kube_store_keys(gr_kube_store *s, json_t **out, gr_err *err);
size_t gr_kube_store_len(gr_kube_store *s);
/* Bytes of the stored objects' compact forms (payload only: no keys,
 * entry headers or the shared key dictionary). */
size_t gr_kube_store_payload_bytes(gr_kube_store *s);
/* Visit every object (decoded; borrowed, valid during the call) under the
 * read lock; return non-zero from fn to stop. fn must not write to the
 * store. GR_ENOMEM. */
typedef int (*gr_kube_store_visit_fn)(void *ctx, const char *key, const json_t *obj);
int gr_kube_store_foreach(gr_kube_store *s, gr_kube_store_visit_fn fn, void *ctx, gr_err *err);

/* A new object holding only the given paths of obj, written as JSON
 * Pointers ("/metadata/name", "/metadata/labels/example.com~1group",
 * "/spec/nodeName"): the building block of a trimming transform. Missing or
 * malformed paths are skipped. Returns a new reference (NULL on ENOMEM). */
json_t *gr_kube_project(const json_t *obj, const char *const *paths, size_t npaths);

/* ---- informer ---------------------------------------------------------- */

typedef struct gr_kube_handlers {
    void (*on_add)(void *ctx, const json_t *obj);
    void (*on_update)(void *ctx, const json_t *old_obj, const json_t *new_obj);
    void (*on_delete)(void *ctx, const json_t *obj);
    void *ctx;
} gr_kube_handlers;

/* Edit *obj in place, or replace it (decref the old one). Return GR_OK, or
 * an error to drop the object (it is then neither stored nor delivered). */
typedef int (*gr_kube_transform_fn)(json_t **obj, void *ctx);

typedef enum gr_kube_sync_mode {
    GR_KUBE_SYNC_AUTO = 0,  /* streaming list; paginated LIST where the server refuses it */
    GR_KUBE_SYNC_LIST,      /* paginated LIST, then watch (servers before 1.27) */
    GR_KUBE_SYNC_WATCHLIST, /* streaming list only: a failure is retried after backoff */
} gr_kube_sync_mode;

typedef struct gr_kube_informer_opts {
    gr_kube_gvr gvr; /* strings borrowed for the informer's life */
    const char *ns;  /* NULL = all namespaces */
    const char *label_selector;
    const char *field_selector;
    gr_kube_transform_fn transform;
    void *transform_ctx;
    gr_kube_handlers handlers;
    int64_t resync_ns;          /* 0 = no resync */
    long watch_timeout_s;       /* server-side watch timeout (0 = 300) */
    long idle_s;                /* stalled-stream timeout (0 = watch timeout + 30) */
    size_t max_object;          /* per-event cap (0 = GR_KUBE_WATCH_MAX_EVENT) */
    long page_size;             /* list page (0 = GR_KUBE_LIST_PAGE) */
    int64_t backoff_initial_ns; /* 0 = 800 ms */
    int64_t backoff_max_ns;     /* 0 = 30 s */
    gr_kube_sync_mode sync_mode;
} gr_kube_informer_opts;

typedef struct gr_kube_informer_stats {
    uint64_t lists;   /* successful (re)syncs, streaming or LIST */
    uint64_t watches; /* watch requests started */
    uint64_t gone;    /* 410 Gone/Expired relists */
    uint64_t errors;  /* failed lists/watches (backed off) */
    uint64_t events;  /* watch events applied (bookmarks excluded) */
    uint64_t bookmarks;
    char last_rv[64];
    uint64_t watch_lists;    /* syncs completed by a streaming list */
    uint64_t list_fallbacks; /* streaming lists that did not complete (LIST instead) */
} gr_kube_informer_stats;

typedef struct gr_kube_informer gr_kube_informer;

/* The client is borrowed and must outlive the informer. */
int gr_kube_informer_new(gr_kube_client *c, const gr_kube_informer_opts *o, gr_kube_informer **out,
                         gr_err *err);
/* Indexes must be added before start. */
int gr_kube_informer_add_index(gr_kube_informer *inf, const char *name, gr_kube_index_fn fn,
                               void *ctx, gr_err *err);
int gr_kube_informer_start(gr_kube_informer *inf, gr_err *err);
/* Wait until the first list has been applied. GR_ETIMEDOUT. */
int gr_kube_informer_wait_synced(gr_kube_informer *inf, int64_t timeout_ns, gr_err *err);
bool gr_kube_informer_synced(gr_kube_informer *inf);
/* Borrowed; valid until gr_kube_informer_free(). */
gr_kube_store *gr_kube_informer_store(gr_kube_informer *inf);
void gr_kube_informer_stats_get(gr_kube_informer *inf, gr_kube_informer_stats *out);
/* Stop the threads (aborting any request in flight) and join them. */
void gr_kube_informer_stop(gr_kube_informer *inf);
void gr_kube_informer_free(gr_kube_informer *inf);

/* Pure core of the informer, exposed for tests and benchmarks: apply one
 * watch event / a full list (as a diff: keys the list lacks are deleted) to
 * a store, calling handlers. obj / items are borrowed (the store keeps
 * their compact form). */
int gr_kube_informer_apply_event(gr_kube_store *s, const gr_kube_informer_opts *o, int type,
                                 json_t *obj, gr_err *err);
int gr_kube_informer_apply_list(gr_kube_store *s, const gr_kube_informer_opts *o,
                                const json_t *items, gr_err *err);

#endif
