/*
 * gr_nvcre_wf_diag.h — the Workflow controller's diagnose mode
 * (orchestration.diagnose, fact sheet §2.14, ADR-055/056): adaptive fault
 * isolation by topology-aware group testing, as a pure state machine.
 *
 * Stages: intra-screening (one group `intra-<domain>` per topology domain)
 * → intra-screening-no-nvl (failed domains again with MNNVL off, groups
 * `screen-no-nvl-<domain>`, only when the Workflow uses MNNVL) →
 * inter-screening (one healthy representative per domain, group
 * `inter-domain`, when two or more domains have one) → bisection (suspect
 * sets halved down to minGroupSize, groups `bisect-<set>-h0/h1`) →
 * cross-boundary (both halves passed: groups `cross-<set>-mix0/mix1` mixing
 * the halves, at most GR_NVCRE_WF_DIAG_MAX_PROBES probe rounds) →
 * confirmation (each suspect with healthy reference nodes, groups
 * `confirm-<k>`) → complete. docs/nvcre-workflow.md § Diagnose mode.
 *
 * No I/O and no clock: the state is the JSON object the controller keeps
 * in status.orchestration.diagnose; the caller feeds each round's finished
 * groups (phase Succeeded/Failed, after bandwidth reclassification) and
 * launches the groups it gets back. Time is a parameter where it matters.
 *
 * Ownership: `json_t **out` results are new references owned by the
 * caller; inputs are borrowed; `state` is modified in place.
 *
 * Errors: GR_EINVAL (bad input, err->msg names the field), GR_ENOMEM,
 * GR_ETOOBIG (more than GR_NVCRE_WF_DIAG_MAX_NODES nodes).
 */
#ifndef GR_NVCRE_WF_DIAG_H
#define GR_NVCRE_WF_DIAG_H

#include <stdint.h>

#include <jansson.h>

#include "gr_err.h"

#define GR_NVCRE_WF_DIAG_STAGE_INTRA        "intra-screening"
#define GR_NVCRE_WF_DIAG_STAGE_INTRA_NO_NVL "intra-screening-no-nvl"
#define GR_NVCRE_WF_DIAG_STAGE_INTER        "inter-screening"
#define GR_NVCRE_WF_DIAG_STAGE_BISECTION    "bisection"
#define GR_NVCRE_WF_DIAG_STAGE_CROSS        "cross-boundary"
#define GR_NVCRE_WF_DIAG_STAGE_CONFIRMATION "confirmation"
#define GR_NVCRE_WF_DIAG_STAGE_COMPLETE     "complete"

#define GR_NVCRE_WF_DIAG_GROUP_INTER "inter-domain"
/* The domain of every node when no topology key is set. */
#define GR_NVCRE_WF_DIAG_DEFAULT_DOMAIN "default"
#define GR_NVCRE_WF_DIAG_MAX_PROBES     4
#define GR_NVCRE_WF_DIAG_MIN_GROUP_SIZE 2
/* Cap on the nodes one diagnosis covers (the set operations are O(n²)):
 * more → GR_ETOOBIG from start; a state or round holding more than 16× as
 * many JSON values → GR_EINVAL from advance. */
#define GR_NVCRE_WF_DIAG_MAX_NODES 10000

/* Final messages (§2.14, byte for byte). */
#define GR_NVCRE_WF_DIAG_MSG_FAULTY_FMT     "Diagnosis complete: %d faulty nodes confirmed"
#define GR_NVCRE_WF_DIAG_MSG_HEALTHY        "All domains healthy, no faults detected"
#define GR_NVCRE_WF_DIAG_MSG_NO_HEALTHY_FMT "No healthy reference node; %d suspects marked failed"
/* Ours: the InProgress message of each diagnose round. */
#define GR_NVCRE_WF_DIAG_MSG_ROUND_FMT "Diagnose round %d (%s): %d groups"
/* Ours: nodeResults reason/message of a confirmed faulty node. */
#define GR_NVCRE_WF_DIAG_NODE_REASON "DiagnosedFaulty"
#define GR_NVCRE_WF_DIAG_NODE_MSG    "confirmed faulty by diagnose mode"
/* Ours: the env that turns multi-node NVLink off in screen-no-nvl groups. */
#define GR_NVCRE_WF_DIAG_NO_NVL_ENV "NCCL_MNNVL_ENABLE"

/* orchestration.diagnose is set in the (effective) WorkflowSpec. */
int gr_nvcre_wf_diag_enabled(const json_t *spec);
/* The Workflow uses MNNVL: a ComputeDomain among its dependencies. */
int gr_nvcre_wf_diag_mnnvl(const json_t *spec);

/* Start: domains by diagnose.topologyKey (else topology.topologyKey, else
 * one domain "default") over the discovered `names` (labels from `nodes`,
 * Node objects). *state: the initial status.orchestration.diagnose
 * (stage intra-screening, round 1); *groups: [{"name","nodes"}]. */
int gr_nvcre_wf_diag_start(const json_t *spec, const json_t *nodes, const json_t *names,
                           json_t **state, json_t **groups, gr_err *err);

/* One round finished: `done` holds the round's groups with "phase"
 * Succeeded or Failed. Advances `state`. When another round follows,
 * *next is its non-empty group list ({"name","nodes"} plus "noNVL": true
 * for screen-no-nvl groups) and *final_type NULL. When the diagnosis is
 * complete, *next is NULL, *final_type is "Succeeded" or "Failed",
 * *reason JobCompleted/IterationsFailed and msg the condition message;
 * state["faultyNodes"] lists the confirmed faulty nodes. */
int gr_nvcre_wf_diag_advance(json_t *state, const json_t *done, int mnnvl, int min_group,
                             json_t **next, const char **final_type, const char **reason, char *msg,
                             size_t msgsz, gr_err *err);

/* Bandwidth reclassification of a Succeeded group (§2.14) from its Job's
 * BandwidthMeasurement `bm` (NULL: none yet): the maximum busBW over
 * status.results against `threshold_gbps`. PENDING while the BM is not
 * Complete and the group finished less than `timeout_ns` ago; NODATA when
 * it is Complete (or the wait is over) without a usable result. */
enum {
    GR_NVCRE_WF_DIAG_BW_PASS = 0,
    GR_NVCRE_WF_DIAG_BW_FAIL = 1,
    GR_NVCRE_WF_DIAG_BW_PENDING = 2,
    GR_NVCRE_WF_DIAG_BW_NODATA = 3,
};
int gr_nvcre_wf_diag_bw_verdict(const json_t *bm, double threshold_gbps, int64_t completed_ns,
                                int64_t timeout_ns, int64_t now_ns, double *max_busbw);
/* The bound of validation.performance.thresholds.busBandwidthGBps (a
 * number, "400", ">= 400" or "value >= 400") of the spec; 0 when unset. GR_EINVAL when it is not a
 * positive number. */
int gr_nvcre_wf_diag_threshold(const json_t *spec, double *out, gr_err *err);

#endif
