/*
 * gr_gang_ctl.h — the I/O half of preflight gang coordination, on the
 * controller runtime (gr_kube_mgr.h): discoverer validation against the REST
 * mapper, the namespace → discoverer resolver, the admission hook the
 * webhook calls (gr_preflight_gang_ops), and the controllers: the gang
 * coordinator, the NCCL topology ConfigMap controller, the PreflightConfig
 * resolver and the PreflightConfig status controller.
 *
 * Contract: ../shared/spec/nvsentinel-preflight.md ("Gang discovery",
 * "Per-namespace gang discovery", "Gang coordination", "Gang coordination
 * Pod cache"); design notes in docs/gang.md.
 *
 *   gr_kube_mgr *m;  gr_kube_mgr_new(kc, &mopts, &m, &err);  // owns kc
 *   gr_gang_service *svc;
 *   gr_gang_service_opts o = {.client = gr_kube_mgr_client(m), .cfg = cfg};
 *   if (gr_gang_service_new(&o, &svc, &err) != GR_OK)   // startup validation
 *       log "Fatal error" with err.msg, exit 1          // PF-10, PF-11
 *   gr_gang_service_attach(svc, m, &err);               // caches + controllers
 *   gr_gang_service_ops(svc) → the webhook;  gr_kube_mgr_start(m, &err);
 *   ...
 *   gr_kube_mgr_free(m);  gr_gang_service_free(svc);    // manager first
 *
 * Admission computes, controllers write (issue 20): ops.resolve() needs no
 * API call (the anchor is read from the admission object, the ConfigMap
 * name derived from the gang ID, the discoverer taken from the synced
 * PreflightConfig cache); there is no admitted() hook. Until the
 * PreflightConfigs are synced and evaluated, resolve waits up to
 * GR_GANG_ADMIT_WAIT_MS and then refuses (GR_EAGAIN) rather than resolve
 * with the default discoverer; the "preflightconfigs" readiness check keeps
 * /readyz false meanwhile.
 *
 * Controllers on the manager:
 *   gang-coordinator (leader only, `workers`): key "ns/<gang ConfigMap>",
 *     fed by the trimmed cluster-wide Pod cache (membership: pods whose
 *     nvsentinel-preflight-gang-config volume names the ConfigMap; only the
 *     webhook adds it) and the gang ConfigMap cache, each event delayed by
 *     the batch window so a burst costs one write per ConfigMap per window.
 *     Creates the ConfigMap (skeleton + peers, owner reference and
 *     expected_count from the anchor object) when a member pod appears,
 *     then rewrites peers/ranks/master (PUT with the cached
 *     resourceVersion; a conflict re-reads the cache after one window).
 *   gang-topology (leader only): key "ns", creates the NCCL topology
 *     ConfigMap once per namespace that has gang members.
 *   preflightconfig-resolver (always on, every replica): key "ns", keeps
 *     the resolver; no writes.
 *   preflightconfig (leader only): key "ns", writes PreflightConfig status.
 *
 * Ownership: the client, mapper, config and manager are borrowed and must
 * outlive the service; free the manager (which stops the controllers)
 * before the service. Thread-safe: the ops may be called from any number
 * of webhook threads.
 *
 * Errors: gr_gang_service_new() fails with the contract's message
 * ("failed to create gang discoverer resolver: failed to create default gang
 * discoverer: kubernetes native gang API not available (requires K8s 1.35
 * Workload or K8s 1.36+ PodGroup)") when the default discoverer cannot be
 * validated; other calls return GR_E* codes with messages naming the object.
 */
#ifndef GR_GANG_CTL_H
#define GR_GANG_CTL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_err.h"
#include "gr_gang.h"
#include "gr_kube_discovery.h"
#include "gr_kube_mgr.h"
#include "gr_kube_rest.h"
#include "gr_preflight.h"

#define GR_GANG_FIELD_MANAGER "gpuready-preflight"
/* The Lease (coordination.k8s.io/v1, in the webhook's namespace) that
 * elects the one replica of `gpuready-preflight serve` running the
 * leader-only controllers (gang coordinator, topology, PreflightConfig
 * status, CA bundle sync). */
#define GR_GANG_LEASE_NAME "gpuready-preflight-controllers"
/* How often a gang whose anchor object is missing (expected_count still 0)
 * is looked at again, and how often an invalid PreflightConfig is
 * re-validated (its CRD may be installed later). */
#define GR_GANG_RECHECK_NS (5LL * 1000000000LL)
/* The coordinator's batch window: events of one gang within it cost one
 * reconcile and at most one ConfigMap write. */
#define GR_GANG_BATCH_NS (200LL * 1000000LL)
/* Gangs whose anchor a replica remembers from admission (memory only), for
 * stored pods that no longer show it (R2). */
#define GR_GANG_PENDING_MAX 4096
/* How long admission waits for the PreflightConfigs at start-up. */
#define GR_GANG_ADMIT_WAIT_MS 3000

/* Build and validate a discoverer for a `gangDiscovery` block (borrowed; NULL
 * = {}) against the REST mapper (facts §3.1, PF-87, PF-88, PF-132, PF-133):
 * native ⇒ PodGroup scheduling.k8s.io/v1alpha2 when served, else Workload
 * scheduling.k8s.io/v1alpha1, else GR_ENOTFOUND with
 * GR_GANG_MSG_NATIVE_UNAVAILABLE; CRD ⇒ the podGroupGVR must resolve to a
 * kind (GR_ENOTFOUND `gangDiscovery.podGroupGVR validation failed: resource
 * "<g>/<v>, Resource=<r>" not found (is the CRD installed?): <why>`). */
int gr_gang_discoverer_build(gr_kube_mapper *m, const json_t *gang_discovery,
                             gr_gang_discoverer **out, gr_err *err);

typedef struct gr_gang_service_opts {
    gr_kube_client *client;         /* borrowed, required */
    const gr_preflight_config *cfg; /* borrowed, required */
    gr_kube_mapper *mapper;         /* borrowed; NULL = the service builds its own */
    int workers;                    /* coordinator workers; 0 = 4 */
    const char *field_manager;      /* NULL = GR_GANG_FIELD_MANAGER */
    int64_t batch_ns;               /* 0 = GR_GANG_BATCH_NS; < 0 = no batching */
} gr_gang_service_opts;

typedef struct gr_gang_service gr_gang_service;

typedef struct gr_gang_stats {
    uint64_t registered;     /* gang members resolved at admission */
    uint64_t cm_created;     /* gang ConfigMaps created (by the coordinator) */
    uint64_t cm_writes;      /* ConfigMap updates that changed something */
    uint64_t conflicts;      /* extra PUTs caused by resourceVersion conflicts */
    uint64_t reconciles;     /* coordinator reconciles */
    uint64_t pfc_reconciles; /* PreflightConfig status reconciles */
    uint64_t topo_created;   /* NCCL topology ConfigMaps created */
} gr_gang_stats;

/* Validate the default discoverer (cfg->gang_discovery) and prepare the
 * resolver. Starts nothing. */
int gr_gang_service_new(const gr_gang_service_opts *o, gr_gang_service **out, gr_err *err);

/* Declare the caches (Pods trimmed, gang ConfigMaps, topology ConfigMaps,
 * PreflightConfigs: optional), the four controllers and the
 * "preflightconfigs" readiness check on `m` (before gr_kube_mgr_start).
 * From here on the service writes through the manager's client.
 * GR_ESTATE when already attached. */
int gr_gang_service_attach(gr_gang_service *s, gr_kube_mgr *m, gr_err *err);

/* True once the PreflightConfig cache has synced and every namespace in it
 * has been evaluated (latched); else why (a sentence). */
bool gr_gang_service_ready(gr_gang_service *s, char *why, size_t why_sz);

/* The hooks for gr_preflight_server_start() (ud = s). */
gr_preflight_gang_ops gr_gang_service_ops(gr_gang_service *s);

/* The discoverer in effect for a namespace (PF-115, PF-116): the active
 * PreflightConfig's, else the default. A new reference (unref it). */
gr_gang_discoverer *gr_gang_service_discoverer_for(gr_gang_service *s, const char *ns);

void gr_gang_service_stats(gr_gang_service *s, gr_gang_stats *out);

/* Free (after the manager it is attached to). NULL is a no-op. */
void gr_gang_service_free(gr_gang_service *s);

#endif
