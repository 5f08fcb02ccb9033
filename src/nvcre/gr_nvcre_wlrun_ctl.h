/*
 * gr_nvcre_wlrun_ctl.h — the WorkloadRun controller on the gr_kube runtime:
 * detects platform and GPU architecture from the Nodes matching
 * spec.target, creates the one Workflow (gr_nvcre_wlrun_build()) and then
 * mirrors its status (gr_nvcre_wlrun_mirror()). The Workflow goes with the
 * run through its controller ownerReference (garbage collection).
 * Status: InProgress WaitingForNodes while no schedulable Node matches
 * (requeue 15 s); Failed WorkflowValidationFailed when the spec cannot be
 * built (the message names the field); Failed WorkflowNameCollision when a
 * Workflow of the run's name belongs to something else.
 *
 * Ownership: the controller belongs to the caller (free after the manager
 * stopped). Errors: those of the runtime's registration, GR_ENOMEM.
 */
#ifndef GR_NVCRE_WLRUN_CTL_H
#define GR_NVCRE_WLRUN_CTL_H

#include "gr_err.h"
#include "gr_kube_mgr.h"

typedef struct gr_nvcre_wlrun_ctl gr_nvcre_wlrun_ctl;

typedef struct {
    int workers;    /* 0 = 1 */
    const char *ns; /* NULL = all namespaces */
} gr_nvcre_wlrun_ctl_opts;

int gr_nvcre_wlrun_ctl_register(gr_kube_mgr *m, const gr_nvcre_wlrun_ctl_opts *o,
                                gr_nvcre_wlrun_ctl **out, gr_err *err);
void gr_nvcre_wlrun_ctl_free(gr_nvcre_wlrun_ctl *c);

#endif
