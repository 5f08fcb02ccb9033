/*
 * gr_nvcre_cert_ctl.h — the Certification controller on the gr_kube
 * runtime: caches Certifications, Workflows and Nodes, runs one
 * gr_nvcre_cert_step() per reconcile and applies it (finalizer
 * nvcre.nvidia.com/certification-finalizer, Workflow create, status write,
 * core/v1 Events from "certification-controller"). Deleting a
 * Certification deletes its Workflows (background propagation; each
 * Workflow's finalizer waits for its Jobs, each Job's for its TrainJob)
 * before the finalizer goes, so their Jobs are gone when it disappears.
 *
 * Ownership: the controller belongs to the caller (gr_nvcre_cert_ctl_free()
 * after the manager stopped); the manager is borrowed.
 * Errors: those of gr_kube_mgr_cache / gr_kube_mgr_add_controller and the
 * catalog's (GR_EPARSE for a broken embedded catalog), GR_ENOMEM.
 */
#ifndef GR_NVCRE_CERT_CTL_H
#define GR_NVCRE_CERT_CTL_H

#include "gr_err.h"
#include "gr_kube_mgr.h"

typedef struct gr_nvcre_cert_ctl gr_nvcre_cert_ctl;

typedef struct {
    int workers;    /* --max-concurrent-reconciles; 0 = 1 */
    const char *ns; /* watch one namespace; NULL = all */
} gr_nvcre_cert_ctl_opts;

int gr_nvcre_cert_ctl_register(gr_kube_mgr *m, const gr_nvcre_cert_ctl_opts *o,
                               gr_nvcre_cert_ctl **out, gr_err *err);
void gr_nvcre_cert_ctl_free(gr_nvcre_cert_ctl *c);

#endif
