/*
 * gr_kube_helpers.h — small things every controller needs:
 *   SelfSubjectAccessReview ("can I?") and an events.k8s.io/v1 recorder
 *   that aggregates repeats into an event series (library gr_kube), plus
 *   the pure object helpers of gr_kube_object.h (conditions,
 *   ownerReferences, finalizers; library gr_kube_core), included here.
 *
 * Returned json_t are new references; `const json_t *` parameters are
 * borrowed. Errors: GR_EINVAL naming the field, the client's errors
 * (gr_kube_rest.h) for requests.
 */
#ifndef GR_KUBE_HELPERS_H
#define GR_KUBE_HELPERS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_err.h"
#include "gr_kube_object.h"
#include "gr_kube_rest.h"

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
