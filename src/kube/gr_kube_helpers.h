/*
 * gr_kube_helpers.h — small things every controller needs:
 *   metav1.Condition set/find, ownerReferences, finalizers,
 *   SelfSubjectAccessReview ("can I?"), and an events.k8s.io/v1 recorder
 *   that aggregates repeats into an event series.
 *
 * Pure helpers edit jansson objects in place (borrowed) and take the current
 * time as a parameter (Unix nanoseconds). Returned json_t are new references.
 */
#ifndef GR_KUBE_HELPERS_H
#define GR_KUBE_HELPERS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_err.h"
#include "gr_kube_rest.h"

/* ---- conditions (pure) -------------------------------------------------- */

/* The condition of `type` in a conditions array (borrowed) or NULL. */
json_t *gr_kube_condition_find(const json_t *conditions, const char *type);
/* "True" status of `type`? (false when absent) */
bool gr_kube_condition_is_true(const json_t *conditions, const char *type);
/* Set (add or update) a metav1.Condition in the array at obj.status.conditions
 * (created if missing), like apimachinery's meta.SetStatusCondition:
 * lastTransitionTime changes only when status changes (or the condition is
 * new); reason, message and observedGeneration are always updated.
 * status must be "True", "False" or "Unknown"; reason must be CamelCase
 * (GR_EINVAL names the field otherwise). *changed (optional) is true when
 * anything was modified. */
int gr_kube_condition_set(json_t *obj, const char *type, const char *status, const char *reason,
                          const char *message, int64_t observed_generation, int64_t now_unix_ns,
                          bool *changed, gr_err *err);
/* Remove a condition; true when it was there. */
bool gr_kube_condition_remove(json_t *obj, const char *type);

/* ---- owner references, finalizers (pure) -------------------------------- */

/* Add or update an ownerReference to `owner` (its apiVersion, kind, name,
 * uid) on obj. controller / block_owner_deletion as given. GR_EINVAL when
 * owner lacks uid/name/kind/apiVersion, GR_ECONFLICT when controller is true
 * and another controller reference exists. */
int gr_kube_owner_ref_set(json_t *obj, const json_t *owner, bool controller,
                          bool block_owner_deletion, gr_err *err);
/* The controller ownerReference (borrowed) or NULL. */
json_t *gr_kube_controller_of(const json_t *obj);
bool gr_kube_is_owned_by(const json_t *obj, const char *uid);
bool gr_kube_finalizer_has(const json_t *obj, const char *f);
/* Return true when the object changed. */
bool gr_kube_finalizer_add(json_t *obj, const char *f);
bool gr_kube_finalizer_remove(json_t *obj, const char *f);
/* metadata.deletionTimestamp is set */
bool gr_kube_is_deleting(const json_t *obj);

/* ---- access review ------------------------------------------------------ */

typedef struct gr_kube_access {
    const char *verb;        /* "create" */
    const char *group;       /* "" core */
    const char *resource;    /* "configmaps" */
    const char *subresource; /* optional */
    const char *ns;          /* optional */
    const char *name;        /* optional */
} gr_kube_access;

/* POST a SelfSubjectAccessReview. *allowed receives the answer; reason
 * (optional, reason_sz bytes) the authorizer's reason or denial text. */
int gr_kube_can_i(gr_kube_client *c, const gr_kube_access *a, bool *allowed, char *reason,
                  size_t reason_sz, gr_kube_status *st, gr_err *err);

/* ---- events ------------------------------------------------------------- */

#define GR_KUBE_EVENT_SERIES_WINDOW_NS (6LL * 60 * 1000000000LL) /* client-go: 6 min */

typedef struct gr_kube_recorder gr_kube_recorder;

/* controller: reportingController ("gpuready.nvidia.com/preflight");
 * instance: reportingInstance (pod name). Both copied. c borrowed. */
int gr_kube_recorder_new(gr_kube_client *c, const char *controller, const char *instance,
                         gr_kube_recorder **out, gr_err *err);
void gr_kube_recorder_free(gr_kube_recorder *r);

/* Pure core, exposed for tests: decide what to send for an occurrence at
 * now_unix_ns. Returns a new events.k8s.io/v1 Event to create (*create =
 * true) or a merge patch for an existing one (*create = false, *name = its
 * name, static until the next call), or GR_EINVAL for bad input. */
int gr_kube_recorder_plan(gr_kube_recorder *r, const json_t *regarding, const char *type,
                          const char *reason, const char *action, const char *note,
                          int64_t now_unix_ns, json_t **body, bool *create, const char **name,
                          gr_err *err);

/* Record an event about `regarding` (a full object: apiVersion, kind,
 * metadata.name/namespace/uid). type "Normal" or "Warning"; reason
 * CamelCase; note ≤ 1 kB (truncated). A repeat of the same (regarding,
 * type, reason, action, note) within the series window patches the existing
 * Event's series {count, lastObservedTime} instead of creating a new one. */
int gr_kube_record(gr_kube_recorder *r, const json_t *regarding, const char *type,
                   const char *reason, const char *action, const char *note, gr_err *err);

#endif
