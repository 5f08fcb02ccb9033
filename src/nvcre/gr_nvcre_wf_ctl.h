/*
 * gr_nvcre_wf_ctl.h — the NVCRE Workflow controller on the gr_kube runtime
 * (issue 16). Registered in gpuready-manager.
 *
 * Reconcile of one Workflow (fact sheet §2.1, newest order):
 *   deletion → delete the Workflow's Jobs (label nvcre.nvidia.com/workflow)
 *   and owned dependencies, then drop the finalizer; ensure the finalizer
 *   nvcre.nvidia.com/workflow-finalizer; terminal → nothing; first pass →
 *   the Nodes listed from the API server (only those with the target's
 *   nodeSelector labels, gr_nvcre_wf_target_labels(); the controller keeps
 *   no Node cache), then
 *   gr_nvcre_wf_plan() (discovery, detection, tracked overrides with their
 *   events, capacity filter, gang contract, groups) and the status
 *   (GroupsPartitioned or the documented Failed reason), then the
 *   workflow-scoped dependencies; later passes → track Jobs (terminal
 *   states, deleted Jobs, timeoutPerJob without queued time, retries),
 *   launch pending groups (maxConcurrent, no node in two running Jobs, the
 *   gang contract re-checked before every group; a group's writes sent
 *   back to back once the client's rate limit allows them all,
 *   gr_kube_client_wait_burst()), iterations with history,
 *   the final status and the succeeded/failed node ConfigMaps.
 *
 * Ownership: the controller keeps borrowed pointers to the manager's
 * caches; gr_nvcre_wf_ctl_register() allocates a context that lives as
 * long as the process (freed by gr_nvcre_wf_ctl_free()).
 * Errors: GR_E* from the runtime; reconcile errors are retried with backoff.
 */
#ifndef GR_NVCRE_WF_CTL_H
#define GR_NVCRE_WF_CTL_H

#include <stdint.h>

#include "gr_err.h"
#include "gr_kube_mgr.h"

typedef struct gr_nvcre_wf_ctl gr_nvcre_wf_ctl;

typedef struct gr_nvcre_wf_ctl_opts {
    int workers;        /* --max-concurrent-reconciles */
    int64_t requeue_ns; /* periodic requeue while running (0 = 15 s) */
    const char *ns;     /* watch one namespace (NULL = all) */
    /* Optional (benchmarks): called after every reconcile with its wall
     * time and the CPU time of the worker thread that ran it. */
    void (*observe)(void *ctx, int64_t wall_ns, int64_t cpu_ns);
    void *observe_ctx;
} gr_nvcre_wf_ctl_opts;

int gr_nvcre_wf_ctl_register(gr_kube_mgr *m, const gr_nvcre_wf_ctl_opts *o, gr_nvcre_wf_ctl **out,
                             gr_err *err);
void gr_nvcre_wf_ctl_free(gr_nvcre_wf_ctl *c);

#endif
