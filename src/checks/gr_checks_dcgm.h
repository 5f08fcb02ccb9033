/*
 * gr_checks_dcgm.h — pure logic of preflight-dcgm-diag (library gr_checks):
 * configuration, DCGM status and error-code names, the error-code →
 * RecommendedAction mapping table, and turning diagnostic results into one
 * health event per test result.
 *
 * Event rules (spec: "A check can exit 0 and still report an unhealthy GPU";
 * facts §6.1), for each result of an allocated GPU:
 *   pass → healthy, NONE;  skip / not_run / unknown → no event;
 *   warn → unhealthy, never fatal, action from the table (may be NONE);
 *   fail → unhealthy, action from the table (CONTACT_SUPPORT when the code is
 *          0, unknown or not in the table); fatal iff the action is not NONE.
 * checkName "DcgmDiagnostic" + CamelCase(test), entity GPU_UUID, errorCode
 * [DCGM_FR_*] when the code has a name, message "Test passed" or DCGM's
 * message. The check exits 1 iff some event is fatal.
 *
 * Mapping table format (one row per line, '#' comments, blank lines ok):
 *   DCGM_FR_NAME,ACTION      e.g.  DCGM_FR_XID_ERROR,NONE
 * ACTION is a RecommendedAction enum name; rows with any other action are
 * ignored (as upstream's CSV reader does). We ship src/checks/data/
 * dcgm-actions.csv, compiled into the program; DCGM_ERROR_MAPPING_PATH
 * replaces it with a file.
 *
 * Ownership: plain values; gr_checks_dcgm_map is fixed-size.
 */
#ifndef GR_CHECKS_DCGM_H
#define GR_CHECKS_DCGM_H

#include <stddef.h>

#include "gr_checks.h"
#include "gr_err.h"
#include "gr_gpu.h"

#define GR_CHECKS_DCGM_DEFAULT_ADDR \
    "nvidia-dcgm-dra.gpu-operator.svc:5555,nvidia-dcgm.gpu-operator.svc:5555"
#define GR_CHECKS_DCGM_MAX_ADDRS 8

typedef struct gr_checks_dcgm_config {
    char addrs[GR_CHECKS_DCGM_MAX_ADDRS][256]; /* DCGM_HOSTENGINE_ADDR, in order */
    size_t n_addrs;
    int level;               /* DCGM_DIAG_LEVEL 1..4, default 2 */
    int retry_max;           /* DCGM_DIAG_STATUS_RETRY_MAX_ATTEMPTS >= 1, default 10 */
    double retry_interval_s; /* DCGM_DIAG_STATUS_RETRY_INTERVAL_SECONDS > 0, default 10 */
    char mapping_path[1024]; /* DCGM_ERROR_MAPPING_PATH, "" = the built-in table */
    char node_name[256];
    gr_health_strategy strategy;
} gr_checks_dcgm_config;

/* GR_EINVAL with e.g. "DCGM_DIAG_LEVEL must be 1-4, got 7". */
int gr_checks_dcgm_config_parse(gr_checks_getenv env, void *ctx, gr_checks_dcgm_config *cfg,
                                gr_err *err);

/* "DCGM_ST_IN_USE" for -34; NULL if rc is not a DCGM_ST_* error value. */
const char *gr_checks_dcgm_st_name(int rc);
/* "DCGM_FR_XID_ERROR" for 101; NULL if unknown. */
const char *gr_checks_dcgm_fr_name(unsigned int code);
/* "sm_stress" → "SmStress"; "pcie" → "Pcie"; "-" counts as "_". */
void gr_checks_dcgm_camel(const char *test, char *out, size_t len);

#define GR_CHECKS_DCGM_MAP_MAX 512
typedef struct gr_checks_dcgm_map {
    struct {
        char name[64];
        gr_health_action action;
    } rows[GR_CHECKS_DCGM_MAP_MAX];
    size_t n;
    size_t ignored; /* rows with an unknown action */
} gr_checks_dcgm_map;

/* Parse the table text. GR_EPARSE for a malformed row (line number in the
 * message), GR_ETOOBIG past GR_CHECKS_DCGM_MAP_MAX rows. */
int gr_checks_dcgm_map_parse(const char *text, size_t len, gr_checks_dcgm_map *map, gr_err *err);
/* 1 and *action if the name is in the table. */
int gr_checks_dcgm_map_lookup(const gr_checks_dcgm_map *map, const char *name,
                              gr_health_action *action);

/* The built-in table (src/checks/data/dcgm-actions.csv). */
extern const char gr_checks_dcgm_builtin_map[];

/* One allocated GPU: hostengine id + UUID. */
typedef struct gr_checks_dcgm_gpu {
    unsigned int gpu_id;
    char uuid[GR_GPU_UUID_MAX];
} gr_checks_dcgm_gpu;

/* Build the events for `diag` restricted to `gpus`. Writes at most `cap`
 * events, sets *n_events and *any_fatal. */
void gr_checks_dcgm_events(const gr_dcgm_diag *diag, const gr_checks_dcgm_gpu *gpus, size_t n_gpus,
                           const gr_checks_dcgm_map *map, gr_checks_event *events, size_t cap,
                           size_t *n_events, int *any_fatal);

/* The event for a DCGM_ST_* status that persisted through the retries:
 * unhealthy, not fatal, action NONE, errorCode [st_name], no entity. */
void gr_checks_dcgm_status_event(const char *st_name, int attempts, gr_checks_event *ev);

/* Turn a dcgmDiagResponse_v10 (gr_dcgm_abi.h; `size` bytes) into results.
 * System-wide (level one / software) results are reported as test
 * "software" for every GPU of the response, with the worst status. GR_EINVAL
 * if the version word or the counts are out of range. */
int gr_checks_dcgm_from_v10(const void *resp, size_t size, gr_dcgm_diag *out, gr_err *err);

#endif
