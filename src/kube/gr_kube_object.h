/*
 * gr_kube_object.h — pure helpers on Kubernetes API objects (library
 * gr_kube_core, no I/O): metav1.Condition set/find/remove,
 * ownerReferences, finalizers, deletion state.
 *
 * Ownership: the helpers edit jansson objects in place (borrowed); pointers
 * they return into an object are borrowed from it. Time is a parameter
 * (Unix nanoseconds), never read from the clock.
 *
 * Errors: GR_EINVAL naming the field and the fix, GR_ECONFLICT for a second
 * controller reference, GR_ENOMEM.
 */
#ifndef GR_KUBE_OBJECT_H
#define GR_KUBE_OBJECT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_err.h"

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

#endif
