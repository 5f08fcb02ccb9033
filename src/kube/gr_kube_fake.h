/*
 * gr_kube_fake.h — an in-memory Kubernetes API server behind the client's
 * backend table (gr_kube_backend), so controllers, informers and the
 * manager run unchanged in unit tests without a cluster.
 *
 *   gr_kube_fake *f;  gr_kube_client *c;
 *   gr_kube_fake_new(&f, &err);
 *   gr_kube_fake_client(f, &c, &err);        // every gr_kube_* call works on c
 *   gr_kube_fake_seed(f, &GR_KUBE_CONFIGMAPS, cm, &err);
 *   ... run the code under test on c ...
 *   json_t *got = gr_kube_fake_get(f, &GR_KUBE_CONFIGMAPS, "ns", "name");
 *   gr_kube_client_free(c);  gr_kube_fake_free(f);   // client first
 *
 * What it answers (the paths gr_kube_build_path() builds):
 *  - core (/api/v1/...) and group (/apis/<g>/<v>/...) resources, namespaced
 *    and cluster-scoped, subresource "status" (PUT/PATCH touch only .status;
 *    writes to the main resource keep the stored .status when the resource
 *    has a status subresource); an unregistered resource is 404 NotFound
 *    ("the server could not find the requested resource"), as a CRD that is
 *    not installed;
 *  - GET, LIST (labelSelector: =, ==, !=, in, notin, exists, !exists;
 *    fieldSelector: metadata.name / metadata.namespace with = or !=),
 *    POST (generateName, uid, creationTimestamp, generation, namespace from
 *    the path; 409 AlreadyExists), PUT (resourceVersion compare-and-swap:
 *    409 Conflict with the API server's message; generation bumps when
 *    .spec changes), PATCH (JSON patch, merge patch; strategic and apply
 *    are applied as merge patches; a resourceVersion in the patch is a
 *    precondition), DELETE (preconditions; with finalizers it only sets
 *    deletionTimestamp, and the object goes once the last finalizer is
 *    removed; dependents whose ownerReferences name the deleted uid are
 *    deleted too unless propagationPolicy is Orphan — the garbage
 *    collector, done at once);
 *  - WATCH (?watch=1) from a resourceVersion: ADDED/MODIFIED/DELETED with
 *    label-selector transitions, BOOKMARK every bookmark period when
 *    allowWatchBookmarks is set, ERROR 410 Expired when the version is older
 *    than the event history (GR_KUBE_FAKE_HISTORY events kept);
 *    timeoutSeconds ends the stream;
 *  - discovery: GET /api, /api/v1, /apis, /apis/<g>/<v> (legacy documents,
 *    built from the registered resources).
 * Errors are real metav1.Status bodies, so the client maps them as usual.
 * Built-in resources: pods, configmaps, secrets, namespaces, nodes, events,
 * services (core), leases (coordination.k8s.io/v1), events (events.k8s.io/v1),
 * customresourcedefinitions (apiextensions.k8s.io/v1).
 *
 * Limits (documented, by design): no admission, no validation beyond
 * metadata.name, no defaulting, no field managers, no pagination (LIST
 * returns every item; no continue token), no namespace existence check.
 *
 * Ownership: gr_kube_fake_get/list return new references (caller decrefs);
 * inputs are borrowed (copied). The fake must outlive its clients.
 * Thread-safe.
 */
#ifndef GR_KUBE_FAKE_H
#define GR_KUBE_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_err.h"
#include "gr_kube_rest.h"

#define GR_KUBE_FAKE_HISTORY     10000 /* watch events kept for resuming */
#define GR_KUBE_FAKE_MAX_OBJECTS 100000
#define GR_KUBE_FAKE_MAX_BODY    ((size_t)8 * 1024 * 1024) /* request body cap (413) */

typedef struct gr_kube_fake gr_kube_fake;

int gr_kube_fake_new(gr_kube_fake **out, gr_err *err);
/* Stops open watch streams (they end as if the server closed them); every
 * client of this fake must have been freed, or must no longer be used. */
void gr_kube_fake_free(gr_kube_fake *f);
/* A new client whose transport is this fake (caller frees it). */
int gr_kube_fake_client(gr_kube_fake *f, gr_kube_client **out, gr_err *err);

/* Register (or re-register) a resource; kind is the object kind
 * ("Widget"); has_status adds the status subresource. Such a resource is
 * a custom resource: POST/PUT bodies without "kind" get 400 BadRequest as
 * from the API server ("Object 'Kind' is missing"). Registering a
 * resource is installing its CRD; removing it is uninstalling it (its
 * objects are dropped, open watches on it end). GR_ENOMEM. */
int gr_kube_fake_add_resource(gr_kube_fake *f, const gr_kube_gvr *gvr, const char *kind,
                              bool namespaced, bool has_status, gr_err *err);
void gr_kube_fake_remove_resource(gr_kube_fake *f, const gr_kube_gvr *gvr);

/* Store obj as is, filling metadata the server would (uid,
 * creationTimestamp, resourceVersion, namespace from ns when given):
 * watchers see ADDED (or MODIFIED when it replaced one). GR_EINVAL without
 * metadata.name or for an unregistered resource. */
int gr_kube_fake_seed(gr_kube_fake *f, const gr_kube_gvr *gvr, const json_t *obj, gr_err *err);
/* Seed every document of a YAML or JSON text (apiVersion/kind mapped to a
 * registered resource). */
int gr_kube_fake_seed_yaml(gr_kube_fake *f, const char *text, gr_err *err);

/* Read back (a copy; NULL when absent). ns may be NULL for cluster scope. */
json_t *gr_kube_fake_get(gr_kube_fake *f, const gr_kube_gvr *gvr, const char *ns, const char *name);
/* Every object of the resource (ns NULL = all), sorted by namespace/name. */
json_t *gr_kube_fake_list(gr_kube_fake *f, const gr_kube_gvr *gvr, const char *ns);

/* Make the next n requests that match fail with an error Status.
 * method: "GET", "LIST", "WATCH", "POST", "PUT", "PATCH", "DELETE",
 * "WRITE" (any of POST/PUT/PATCH/DELETE) or NULL (any). resource: the plural
 * ("configmaps") or NULL (any); subresource: NULL matches any, "" only the
 * main resource. reason as the API server spells it ("Conflict",
 * "InternalError", ...). Rules are checked in the order added; each rule
 * counts down independently. */
int gr_kube_fake_fail(gr_kube_fake *f, const char *method, const char *resource,
                      const char *subresource, int n, int http_code, const char *reason,
                      const char *message, gr_err *err);
void gr_kube_fake_clear_failures(gr_kube_fake *f);

/* Counters: requests served per method ("GET", "LIST", "WATCH", "POST",
 * "PUT", "PATCH", "DELETE", or "WRITE" for the four writes, NULL for all),
 * optionally only for one resource plural. */
uint64_t gr_kube_fake_count(gr_kube_fake *f, const char *method, const char *resource);
void gr_kube_fake_reset_counts(gr_kube_fake *f);

/* The current resourceVersion (the last write's). */
uint64_t gr_kube_fake_rv(gr_kube_fake *f);
/* End every open watch stream now (clients re-watch). */
void gr_kube_fake_close_watches(gr_kube_fake *f);
/* Forget the event history: a watch from an older version gets 410. */
void gr_kube_fake_compact(gr_kube_fake *f);
/* How often watches with allowWatchBookmarks get a BOOKMARK (default 1 s;
 * 0 turns bookmarks off). */
void gr_kube_fake_set_bookmark_period(gr_kube_fake *f, int64_t ns);
/* Open watch streams now. */
size_t gr_kube_fake_watchers(gr_kube_fake *f);

/* Pure: does the object's labels match a label selector?  GR_EINVAL (with
 * the position) for a malformed selector. */
int gr_kube_fake_selector_match(const char *selector, const json_t *labels, bool *match,
                                gr_err *err);

#endif
