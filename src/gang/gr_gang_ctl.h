/*
 * gr_gang_ctl.h — the I/O half of preflight gang coordination, on the kube
 * client (gr_kube): discoverer validation against the REST mapper, the
 * namespace → discoverer resolver, the admission hooks the webhook calls
 * (gr_preflight_gang_ops), the gang coordinator, the PreflightConfig
 * controller and the trimmed cluster-wide Pod cache.
 *
 * Contract: ../shared/spec/nvsentinel-preflight.md ("Gang discovery",
 * "Per-namespace gang discovery", "Gang coordination", "Gang coordination
 * Pod cache"); design notes in docs/gang.md.
 *
 *   gr_gang_service *svc;
 *   gr_gang_service_opts o = {.client = kc, .cfg = cfg};
 *   if (gr_gang_service_new(&o, &svc, &err) != GR_OK)   // startup validation
 *       log "Fatal error" with err.msg, exit 1          // PF-10, PF-11
 *   gr_gang_service_start(svc, &err);                   // informers + controllers
 *   gr_preflight_gang_ops ops = gr_gang_service_ops(svc); // hand to the webhook
 *   ...
 *   gr_gang_service_free(svc);                          // stop and free
 *
 * Admission: ops.resolve() needs no API call (the gang anchor is read from
 * the admission object; the ConfigMap name is derived from the gang ID);
 * ops.admitted() GETs the anchor object (PodGroup / Workload) for its UID and
 * minCount and creates the skeleton ConfigMap (or backfills its owner
 * reference), then wakes the coordinator.
 *
 * Coordinator: gang membership is "pods in the namespace whose
 * nvsentinel-preflight-gang-config volume names this ConfigMap" (only the
 * webhook adds that volume), so a gang keeps coordinating even when the
 * namespace's discoverer changes later. Each reconcile of "ns/cm" rebuilds
 * `peers` from the cache (deterministic ranks, stale peers dropped), sets
 * expected_count once from the anchor object, and writes with
 * optimistic-concurrency retries (resourceVersion compare-and-swap).
 *
 * Ownership: the client, mapper and config in the options are borrowed and
 * must outlive the service. Thread-safe: the ops may be called from any
 * number of webhook threads.
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
#include "gr_kube_rest.h"
#include "gr_preflight.h"

#define GR_GANG_FIELD_MANAGER "gpuready-preflight"
/* How often a gang whose anchor object is missing (expected_count still 0)
 * is looked at again, and how often an invalid PreflightConfig is
 * re-validated (its CRD may be installed later). */
#define GR_GANG_RECHECK_NS (5LL * 1000000000LL)

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
} gr_gang_service_opts;

typedef struct gr_gang_service gr_gang_service;

typedef struct gr_gang_stats {
    uint64_t registered;     /* admission-time registrations */
    uint64_t cm_created;     /* gang ConfigMaps created */
    uint64_t cm_writes;      /* ConfigMap updates that changed something */
    uint64_t conflicts;      /* extra PUTs caused by resourceVersion conflicts */
    uint64_t reconciles;     /* coordinator reconciles */
    uint64_t pfc_reconciles; /* PreflightConfig reconciles */
} gr_gang_stats;

/* Validate the default discoverer (cfg->gang_discovery) and prepare the
 * resolver. Starts nothing. */
int gr_gang_service_new(const gr_gang_service_opts *o, gr_gang_service **out, gr_err *err);

/* Start the Pod cache, the PreflightConfig informer and both controllers. */
int gr_gang_service_start(gr_gang_service *s, gr_err *err);

/* Wait until the Pod cache has listed once (GR_ETIMEDOUT). */
int gr_gang_service_wait_synced(gr_gang_service *s, int64_t timeout_ns, gr_err *err);

/* The hooks for gr_preflight_server_start() (ud = s). */
gr_preflight_gang_ops gr_gang_service_ops(gr_gang_service *s);

/* The discoverer in effect for a namespace (PF-115, PF-116): the active
 * PreflightConfig's, else the default. A new reference (unref it). */
gr_gang_discoverer *gr_gang_service_discoverer_for(gr_gang_service *s, const char *ns);

/* Register a pod at admission (what ops.admitted does), returning the error
 * instead of logging it: ensures the skeleton ConfigMap with the owner
 * reference and, when known, expected_count. `pod` borrowed. */
int gr_gang_service_register(gr_gang_service *s, const json_t *pod, const char *ns, gr_err *err);

void gr_gang_service_stats(gr_gang_service *s, gr_gang_stats *out);

/* Stop informers and controllers, free. NULL is a no-op. */
void gr_gang_service_free(gr_gang_service *s);

#endif
