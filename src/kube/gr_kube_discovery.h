/*
 * gr_kube_discovery.h — API discovery and a REST mapper: kind ↔ resource per
 * group/version, scope (namespaced or cluster), preferred versions.
 *
 * Discovery uses the aggregated endpoint (one request each for /api and
 * /apis, apidiscovery.k8s.io/v2) and falls back to the legacy per-group
 * walk when the server does not offer it. CRDs appear at run time, so the
 * mapper is refreshable: gr_kube_mapper_refresh() rebuilds it, and a lookup
 * that misses refreshes once by itself (at most every
 * GR_KUBE_MAPPER_MIN_REFRESH_NS) before answering GR_ENOTFOUND.
 *
 * Thread-safe (rwlock). Results are copied into caller-owned structs.
 */
#ifndef GR_KUBE_DISCOVERY_H
#define GR_KUBE_DISCOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_err.h"
#include "gr_kube_rest.h"

#define GR_KUBE_MAPPER_MIN_REFRESH_NS (5LL * 1000000000LL)

typedef struct gr_kube_mapping {
    char group[128]; /* "" for core */
    char version[64];
    char resource[128]; /* plural */
    char kind[128];
    bool namespaced;
    bool preferred; /* the group's preferred version */
} gr_kube_mapping;

typedef struct gr_kube_mapper gr_kube_mapper;

/* c may be NULL for a mapper filled only by gr_kube_mapper_add_* (tests). */
int gr_kube_mapper_new(gr_kube_client *c, gr_kube_mapper **out, gr_err *err);
void gr_kube_mapper_free(gr_kube_mapper *m);
/* Rediscover everything (replaces the current contents on success). */
int gr_kube_mapper_refresh(gr_kube_mapper *m, gr_err *err);

/* Pure: add an apidiscovery.k8s.io/v2 APIGroupDiscoveryList, or a legacy
 * APIResourceList for group_version (preferred says whether that version is
 * the group's preferred one). Subresources ("pods/status") are skipped. */
int gr_kube_mapper_add_aggregated(gr_kube_mapper *m, const json_t *list, gr_err *err);
int gr_kube_mapper_add_resource_list(gr_kube_mapper *m, const json_t *list, bool preferred,
                                     gr_err *err);

/* kind → resource. version NULL/"" = the group's preferred version. */
int gr_kube_mapper_kind(gr_kube_mapper *m, const char *group, const char *version, const char *kind,
                        gr_kube_mapping *out, gr_err *err);
/* apiVersion ("apps/v1", "v1") + kind → resource. */
int gr_kube_mapper_api_version_kind(gr_kube_mapper *m, const char *api_version, const char *kind,
                                    gr_kube_mapping *out, gr_err *err);
/* resource (plural) → kind. version NULL/"" = preferred. */
int gr_kube_mapper_resource(gr_kube_mapper *m, const char *group, const char *version,
                            const char *resource, gr_kube_mapping *out, gr_err *err);
size_t gr_kube_mapper_len(gr_kube_mapper *m);

#endif
