/*
 * gr_kube_mgr.h — the controller runtime's manager (controller-runtime's
 * Manager, small): it owns the client, the shared informers, the
 * controllers and their work queues, leader election, the probe/metrics
 * HTTP servers, and shutdown.
 *
 *   gr_kube_mgr *m;
 *   gr_kube_mgr_opts o = {.name = "gpuready-manager", .probe_addr = ":8081",
 *                         .leader_elect = true, .lease_ns = ns,
 *                         .lease_name = "240fe9c6.nvidia.com", .identity = id};
 *   gr_kube_mgr_new(client, &o, &m, &err);           // takes the client
 *   gr_kube_cache *pods;
 *   gr_kube_mgr_cache(m, &(gr_kube_cache_opts){.gvr = GR_KUBE_PODS}, &pods, &err);
 *   gr_kube_ctl *ctl;
 *   gr_kube_mgr_add_controller(m, &(gr_kube_ctl_opts){.name = "pods",
 *                              .workers = 4, .reconcile = fn, .ctx = me}, &ctl, &err);
 *   gr_kube_ctl_watch(ctl, pods, NULL, NULL, &err);   // events → "ns/name" keys
 *   gr_kube_mgr_start(m, &err);
 *   gr_kube_mgr_wait(m, &stop_flag);                  // SIGTERM sets stop_flag
 *   gr_kube_mgr_free(m);                              // graceful stop
 *
 * Caches: shared informers keyed by (gvr, namespace, label selector, field
 * selector, transform): asking twice returns the same cache, so every
 * controller that declares it shares one list+watch. Every cache drops
 * metadata.managedFields before its transform runs (no reader sees them).
 * Each cache fans its events out to every controller watching it (map
 * functions turn an object into the keys to enqueue; NULL = the object's
 * own "ns/name"). Indexes are added before start. An optional cache whose resource the server does
 * not serve (a CRD that is not installed) counts as synced and empty; the manager re-checks
 * discovery every recheck period and starts its informer once the resource appears.
 *
 * Controllers: one rate-limited work queue each (gr_kube_queue: dedup, no
 * key on two workers at once, per-key exponential backoff), `workers`
 * threads. Workers start only after every cache the controller declared
 * (watch or need) has synced, and — for leader-only controllers (the
 * default) — once this replica leads; always-on controllers run on every
 * replica. Reconcile: gr_kube_reconcile_fn (gr_kube_queue.h): GR_OK forgets
 * the key (requeue_after > 0 brings it back after that delay), an error
 * retries it with backoff (logged).
 *
 * Leader election (gr_kube_leader, a coordination.k8s.io Lease): losing the
 * lease after having led is fatal, as in controller-runtime: gr_kube_mgr_wait
 * returns GR_ESTATE and the program should exit non-zero (a fresh process
 * starts as a clean candidate).
 *
 * Probes: /healthz (200 while the process serves), /readyz (200 only when
 * every declared cache has synced, a leader is known when leader election
 * is on, every registered readiness check passes, and no shutdown is in
 * progress; ?verbose lists each check), /metrics (gr_kube_probe.h) on the
 * metrics address (or the probe address when both are the same).
 *
 * Shutdown (gr_kube_mgr_stop / _free): /readyz turns false, intake stops
 * (queued keys are not started), in-flight reconciles finish, informers
 * stop, the lease is released, the servers stop.
 *
 * Ownership: strings in options are copied; ctx pointers are borrowed and
 * must outlive the manager. Caches and controllers belong to the manager.
 * Thread-safe after start for the read accessors and enqueue functions;
 * configuration calls (cache, index, controller, watch, checks) must happen
 * before gr_kube_mgr_start (GR_ESTATE after).
 */
#ifndef GR_KUBE_MGR_H
#define GR_KUBE_MGR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_buf.h"
#include "gr_err.h"
#include "gr_kube_informer.h"
#include "gr_kube_queue.h"
#include "gr_kube_rest.h"
#include "gr_kube_rt.h"

#define GR_KUBE_MGR_MAX_CACHES    64
#define GR_KUBE_MGR_MAX_CTLS      32
#define GR_KUBE_MGR_MAX_INDEXES   8  /* per cache */
#define GR_KUBE_MGR_MAX_WATCHES   16 /* controllers × map functions per cache */
#define GR_KUBE_MGR_MAX_NEEDS     16 /* caches per controller */
#define GR_KUBE_MGR_MAX_CHECKS    16
#define GR_KUBE_MGR_MAX_RUNNABLES 16
#define GR_KUBE_MGR_MAX_CLEANUPS  32
#define GR_KUBE_MGR_MAX_WORKERS   256
#define GR_KUBE_MGR_MAP_KEYS_MAX  64 /* keys one event may map to */

typedef struct gr_kube_mgr gr_kube_mgr;
typedef struct gr_kube_cache gr_kube_cache;
typedef struct gr_kube_ctl gr_kube_ctl;

typedef struct gr_kube_mgr_opts {
    const char *name;         /* log module and metrics; default "manager" */
    const char *probe_addr;   /* /healthz /readyz: "" or "0" = off */
    const char *metrics_addr; /* /metrics: "" or "0" = off */
    bool leader_elect;
    const char *lease_ns;                                          /* required with leader_elect */
    const char *lease_name;                                        /* required with leader_elect */
    const char *identity;                                          /* required with leader_elect */
    int64_t lease_duration_ns, renew_deadline_ns, retry_period_ns; /* 0 = 15 s / 10 s / 2 s */
    int64_t recheck_ns; /* optional resources: discovery re-check period (0 = 10 s) */
} gr_kube_mgr_opts;

/* Takes ownership of the client (freed by gr_kube_mgr_free, also when this
 * call fails). GR_EINVAL for bad options (named). */
int gr_kube_mgr_new(gr_kube_client *c, const gr_kube_mgr_opts *o, gr_kube_mgr **out, gr_err *err);
/* Borrowed: valid until gr_kube_mgr_free. */
gr_kube_client *gr_kube_mgr_client(gr_kube_mgr *m);

/* ---- shared caches ------------------------------------------------------ */

typedef struct gr_kube_cache_opts {
    gr_kube_gvr gvr;
    const char *ns; /* NULL = all namespaces */
    const char *label_selector;
    const char *field_selector;
    gr_kube_transform_fn transform; /* part of the sharing key */
    void *transform_ctx;
    bool optional;     /* a resource that may not be installed (a CRD) */
    int64_t resync_ns; /* 0 = none; the first cache's value wins */
} gr_kube_cache_opts;

int gr_kube_mgr_cache(gr_kube_mgr *m, const gr_kube_cache_opts *o, gr_kube_cache **out,
                      gr_err *err);
/* Add an index (name borrowed: a literal). The same name with the same
 * function is accepted once more (two controllers asking for it);
 * another function under the same name is GR_ECONFLICT. */
int gr_kube_cache_add_index(gr_kube_cache *c, const char *name, gr_kube_index_fn fn, void *ctx,
                            gr_err *err);
/* Reads (copies; the caller decrefs). An optional cache whose resource is
 * missing answers GR_ENOTFOUND / an empty array. */
int gr_kube_cache_get(gr_kube_cache *c, const char *key, json_t **out, gr_err *err);
int gr_kube_cache_list(gr_kube_cache *c, const char *index, const char *value, json_t **out,
                       gr_err *err);
bool gr_kube_cache_synced(gr_kube_cache *c);
bool gr_kube_cache_present(gr_kube_cache *c);

/* Extra handlers on the cache's events, for side state a controller keeps
 * beside its queue (e.g. forgetting a deleted namespace). They run on the
 * informer's thread after the store is updated, serialised with the fan-out;
 * they must not block. Added before start; at most GR_KUBE_MGR_MAX_WATCHES. */
int gr_kube_cache_add_handlers(gr_kube_cache *c, const gr_kube_handlers *h, gr_err *err);

/* ---- controllers -------------------------------------------------------- */

typedef struct gr_kube_ctl_opts {
    const char *name; /* required, unique: queue/metrics/log name */
    int workers;      /* max concurrent reconciles; 0 = 1 */
    bool always_on;   /* run on every replica; default: only on the leader */
    gr_kube_reconcile_fn reconcile;
    void *ctx;
    int64_t backoff_base_ns, backoff_max_ns; /* 0 = 5 ms / 1000 s */
} gr_kube_ctl_opts;

int gr_kube_mgr_add_controller(gr_kube_mgr *m, const gr_kube_ctl_opts *o, gr_kube_ctl **out,
                               gr_err *err);

/* Map an object to the keys to enqueue (at most max, each < GR_KUBE_KEY_MAX
 * bytes, written into keys[i]). Return how many. */
typedef size_t (*gr_kube_map_fn)(void *ctx, const json_t *obj, char (*keys)[GR_KUBE_KEY_MAX],
                                 size_t max);
/* Built-in map: the controller owner's "ns/name" when its kind equals ctx
 * (a const char * kind, e.g. "Workflow"); nothing otherwise. */
size_t gr_kube_map_owner(void *ctx, const json_t *obj, char (*keys)[GR_KUBE_KEY_MAX], size_t max);

/* Enqueue keys for every add/update/delete of the cache's objects (both
 * the old and the new object of an update are mapped). map NULL = the
 * object's own key. Also declares the cache as needed. */
int gr_kube_ctl_watch(gr_kube_ctl *ctl, gr_kube_cache *c, gr_kube_map_fn map, void *ctx,
                      gr_err *err);
/* Declare a cache the reconciler reads without watching it. */
int gr_kube_ctl_need(gr_kube_ctl *ctl, gr_kube_cache *c, gr_err *err);
int gr_kube_ctl_enqueue(gr_kube_ctl *ctl, const char *key);
int gr_kube_ctl_enqueue_after(gr_kube_ctl *ctl, const char *key, int64_t delay_ns);
/* Workers are running. */
bool gr_kube_ctl_running(gr_kube_ctl *ctl);
/* Reconciles finished so far (every result). */
uint64_t gr_kube_ctl_reconciles(gr_kube_ctl *ctl);

/* ---- runnables -------------------------------------------------------------
 * A long-running task beside the controllers (a periodic resync ticker, a
 * certificate watcher): run() is called on its own thread once every cache
 * has synced and — unless always_on — this replica leads; it must return
 * soon after *stop becomes non-zero (shutdown, before the controllers
 * drain). */
typedef struct gr_kube_runnable_opts {
    const char *name;
    bool always_on;
    void (*run)(void *ctx, const atomic_int *stop);
    void *ctx;
} gr_kube_runnable_opts;

int gr_kube_mgr_add_runnable(gr_kube_mgr *m, const gr_kube_runnable_opts *o, gr_err *err);

/* Hand the manager a controller's own state to free: fn(ctx) runs in
 * gr_kube_mgr_free() after every controller, runnable and cache has
 * stopped, before the client is freed (in reverse order of registration).
 * Also runs when registration later fails and the caller frees the manager.
 * GR_ETOOBIG past GR_KUBE_MGR_MAX_CLEANUPS (fn is then NOT called: the
 * caller still owns ctx). */
int gr_kube_mgr_on_free(gr_kube_mgr *m, void (*fn)(void *ctx), void *ctx, gr_err *err);

/* ---- leader-election identity (for programs) ------------------------------ */

/* The Lease namespace a program should use, copied into out (n > 0): `flag`
 * when non-empty, else $POD_NAMESPACE, else the in-cluster service-account
 * namespace file ($GR_KUBE_SA_DIR/namespace, default
 * /var/run/secrets/kubernetes.io/serviceaccount/namespace), else "default". */
void gr_kube_mgr_lease_namespace(const char *flag, char *out, size_t n);
/* controller-runtime's candidate identity: the host name ($POD_NAME when set;
 * `fallback` when gethostname fails) + "_" + a random UUID (v4), so a
 * restarted pod is a new candidate. */
void gr_kube_mgr_identity(const char *fallback, char *out, size_t n);

/* ---- readiness ------------------------------------------------------------ */

typedef bool (*gr_kube_check_fn)(void *ctx, char *why, size_t why_sz);
/* name copied; checked on every /readyz. */
int gr_kube_mgr_add_ready_check(gr_kube_mgr *m, const char *name, gr_kube_check_fn fn, void *ctx,
                                gr_err *err);
/* The /readyz answer now (why: the first failing check). */
bool gr_kube_mgr_ready(gr_kube_mgr *m, char *why, size_t why_sz);
bool gr_kube_mgr_is_leader(gr_kube_mgr *m);

/* ---- lifecycle ------------------------------------------------------------ */

/* Start servers, informers, leader election and the controller runner.
 * GR_EIO when a server cannot bind (named). */
int gr_kube_mgr_start(gr_kube_mgr *m, gr_err *err);
/* Block until *stop becomes non-zero (GR_OK) or the manager fails
 * (GR_ESTATE: leader election lost; err says so). */
int gr_kube_mgr_wait(gr_kube_mgr *m, const atomic_int *stop, gr_err *err);
/* Graceful stop (idempotent). */
void gr_kube_mgr_stop(gr_kube_mgr *m);
/* Stop (if needed) and free everything, the client included. */
void gr_kube_mgr_free(gr_kube_mgr *m);

/* Bound ports (0 when off), for tests with port 0. */
int gr_kube_mgr_probe_port(gr_kube_mgr *m);
int gr_kube_mgr_metrics_port(gr_kube_mgr *m);
/* The /metrics text now. */
int gr_kube_mgr_metrics_text(gr_kube_mgr *m, gr_buf *out);

/* Extra metric families a controller renders itself (e.g. the NVCRE Job
 * metrics): fn appends Prometheus text to out; called on every /metrics
 * request after the runtime's own families, from the server's thread. At
 * most GR_KUBE_MGR_MAX_COLLECTORS; added before start. */
#define GR_KUBE_MGR_MAX_COLLECTORS 8
typedef int (*gr_kube_metrics_fn)(void *ctx, gr_buf *out);
int gr_kube_mgr_add_metrics(gr_kube_mgr *m, gr_kube_metrics_fn fn, void *ctx, gr_err *err);

#endif
