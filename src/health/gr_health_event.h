/*
 * gr_health_event.h — NVSentinel health events as values (library
 * gr_health_event, pure: no I/O, no curl; protobuf-c for the encoding):
 * RecommendedAction and ProcessingStrategy names, the event struct, and its
 * HealthEvents wire encoding (src/health/proto/health_event.proto).
 * Publishing them is gr_health.h (library gr_health).
 *
 * Ownership: every pointer in gr_health_event is borrowed for the duration
 * of the call that reads it; returned names are static.
 *
 * Errors: GR_ENOTFOUND (unknown action name), GR_EINVAL naming the field
 * (strategy, event fields), GR_ETOOBIG past the buffer cap, GR_ENOMEM.
 */
#ifndef GR_HEALTH_EVENT_H
#define GR_HEALTH_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "gr_buf.h"
#include "gr_err.h"

/* RecommendedAction values (wire numbers of the proto enum). */
typedef enum gr_health_action {
    GR_HEALTH_ACTION_NONE = 0,
    GR_HEALTH_ACTION_COMPONENT_RESET = 2,
    GR_HEALTH_ACTION_CONTACT_SUPPORT = 5,
    GR_HEALTH_ACTION_RUN_FIELDDIAG = 6,
    GR_HEALTH_ACTION_RESTART_VM = 15,
    GR_HEALTH_ACTION_RESTART_BM = 24,
    GR_HEALTH_ACTION_REPLACE_VM = 25,
    GR_HEALTH_ACTION_RUN_DCGMEUD = 26,
    GR_HEALTH_ACTION_CUSTOM = 27, /* needs custom_recommended_action */
    GR_HEALTH_ACTION_UNKNOWN = 99,
} gr_health_action;

/* ProcessingStrategy values (wire numbers of the proto enum). */
typedef enum gr_health_strategy {
    GR_HEALTH_STRATEGY_UNSPECIFIED = 0,
    GR_HEALTH_STRATEGY_EXECUTE_REMEDIATION = 1,
    GR_HEALTH_STRATEGY_STORE_ONLY = 2,
    GR_HEALTH_STRATEGY_STORE_AND_ANALYSE = 3,
} gr_health_strategy;

/* Exact enum name ("CONTACT_SUPPORT") → value. GR_ENOTFOUND if unknown. */
int gr_health_action_parse(const char *name, gr_health_action *out);
/* Value → static enum name; NULL for a value the proto does not define. */
const char *gr_health_action_name(gr_health_action a);
/* PROCESSING_STRATEGY value → enum. NULL or "" gives the default
 * EXECUTE_REMEDIATION. Unknown names: GR_EINVAL with the message
 * "Invalid PROCESSING_STRATEGY: <name>". */
int gr_health_strategy_parse(const char *name, gr_health_strategy *out, gr_err *err);
const char *gr_health_strategy_name(gr_health_strategy s);

/* --- events ------------------------------------------------------------- */

typedef struct gr_health_entity {
    const char *type;  /* entityType, e.g. "GPU_UUID" */
    const char *value; /* entityValue, e.g. "GPU-…" */
} gr_health_entity;

typedef struct gr_health_event {
    const char *agent;           /* required: "preflight-dcgm-diag", … */
    const char *component_class; /* required: "GPU" | "Node" */
    const char *check_name;      /* required: "NCCLLoopbackTest", … */
    int is_fatal;
    int is_healthy;
    const char *message; /* may be NULL (sent as "") */
    gr_health_action recommended_action;
    const char *custom_recommended_action; /* only with ACTION_CUSTOM; else NULL */
    const char *const *error_codes;        /* n_error_codes strings */
    size_t n_error_codes;
    const gr_health_entity *entities; /* entitiesImpacted, n_entities of them */
    size_t n_entities;
    int64_t generated_ns;  /* generatedTimestamp, ns since the Unix epoch;
                              0 = the wall clock when publishing */
    const char *node_name; /* required: NODE_NAME */
    gr_health_strategy processing_strategy;
    const char *idempotency_key; /* NULL = 32 random hex digits per publish;
                                    else [A-Za-z0-9._:-]{1,128} */
} gr_health_event;

/* Zero everything (NONE, UNSPECIFIED, no codes/entities, now, random key). */
void gr_health_event_init(gr_health_event *ev);

/* Serialize HealthEvents{version 1, events [ev]} into `out` (appended).
 * `now_wall_ns` is used when ev->generated_ns is 0. GR_EINVAL names the
 * offending field (required field empty, string not UTF-8, unknown enum
 * value, CUSTOM without custom_recommended_action, bad idempotency key);
 * GR_ETOOBIG past out->max; GR_ENOMEM. */
int gr_health_event_encode(const gr_health_event *ev, int64_t now_wall_ns, gr_buf *out,
                           gr_err *err);

#endif
