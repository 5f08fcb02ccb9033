/*
 * gr_nvcre_job_ctl.h — the NVCRE Job controller on the gr_kube controller
 * runtime (the I/O half of issue 15; the decisions are gr_nvcre_job.h).
 *
 * gr_nvcre_job_ctl_register() declares, on a manager that has not started:
 *   - the caches it reads: nvcre Jobs, the workload kinds of every adapter
 *     (TrainJob; optional, so the manager starts before Kubeflow Trainer is
 *     installed), Pods labelled nvcre.nvidia.com/job (indexed by that label
 *     and by spec.nodeName) and Nodes;
 *   - the controller "job" with `workers` workers, watching Jobs, the
 *     workloads they control (controller ownerReference), their Pods, and
 *     Nodes: a Node add, or an update that changes its labels, annotations,
 *     taints, spec.unschedulable or condition statuses, enqueues exactly the
 *     Jobs with a pod on it (pod index on spec.nodeName; nothing is polled).
 *
 * Each reconcile: deletion (delete the workload, confirm with an uncached
 * LIST that its pods are gone, then drop the finalizer
 * nvcre.nvidia.com/finalizer) → ensure the finalizer → create or adopt the
 * workload (409 → uncached read; 403 → a SelfSubjectAccessReview tells an
 * RBAC denial from an admission/quota rejection) or read its state (a cache
 * miss is confirmed by an uncached GET before the workload counts as gone)
 * → gr_nvcre_job_step() → failure log when the Job just failed → node
 * health (spec.nodeHealthMonitor) → one status write (optimistic, a
 * conflict retries the key) → Events after the write (phase transitions,
 * WorkloadCreationError warnings, HardwareFailureDetected).
 *
 * Pod logs: from $GR_POD_LOGS_DIR/<namespace>/<pod>.txt when that variable
 * is set (the reconcile-case runner), else pods/<pod>/log (container of the
 * failed container, last 800 lines, at most 32 KiB kept).
 *
 * Measurements: stall detection and checkpoint restarts need the Job's
 * GoodputMeasurement, which a separate issue brings; until then both are
 * inactive here (the pure machine implements and tests them), and
 * ValidationFailed is left to that code (gr_nvcre_job_set_additive()).
 *
 * Ownership: the controller belongs to the manager's lifetime; free it
 * with gr_nvcre_job_ctl_free() after gr_kube_mgr_free(). Errors: GR_E* from
 * the runtime, named in err.
 */
#ifndef GR_NVCRE_JOB_CTL_H
#define GR_NVCRE_JOB_CTL_H

#include <stdint.h>

#include "gr_buf.h"
#include "gr_err.h"
#include "gr_kube_mgr.h"

typedef struct gr_nvcre_job_ctl gr_nvcre_job_ctl;

typedef struct gr_nvcre_job_ctl_opts {
    int workers;                  /* --max-concurrent-reconciles; 0 = 10 */
    int64_t creation_deadline_ns; /* --workload-creation-deadline; 0 = 10 min */
    const char *ns;               /* watch one namespace; NULL = all */
    const char *pod_logs_dir;     /* NULL = $GR_POD_LOGS_DIR, "" = API only */
    /* Optional: called after every reconcile with its duration (benchmarks);
     * from the worker threads, must be thread-safe. */
    void (*observe)(void *ctx, double seconds);
    void *observe_ctx;
} gr_nvcre_job_ctl_opts;

int gr_nvcre_job_ctl_register(gr_kube_mgr *m, const gr_nvcre_job_ctl_opts *o,
                              gr_nvcre_job_ctl **out, gr_err *err);
void gr_nvcre_job_ctl_free(gr_nvcre_job_ctl *c);

/* Append the Job metrics (fact sheet §6.3; gr_nvcre_job_metrics_render())
 * for the Jobs in the cache now. */
int gr_nvcre_job_ctl_metrics(gr_nvcre_job_ctl *c, gr_buf *out);

#endif
