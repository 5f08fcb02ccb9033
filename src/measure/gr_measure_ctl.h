/*
 * gr_measure_ctl.h — the GoodputMeasurement and BandwidthMeasurement
 * controllers on the gr_kube runtime (issue 18; docs/measurements.md).
 *
 * Each measurement follows its Job (spec.jobRef): while the Job runs it is
 * Measuring and samples the pod logs every spec.sampleInterval (default 60
 * s) through its LogProfile (incremental: sinceTime + byte cap, state in
 * status.logReadState); once the Job is Succeeded or Failed it reads the
 * rest (the BandwidthMeasurement re-reads the whole log: the final read
 * replaces the running averages), turns Complete and is frozen from then
 * on. A missing LogProfile is a Warning Event LogProfileNotFound.
 *
 * Pod logs come from the API (pods/<name>/log), or — when the environment
 * variable GR_POD_LOGS_DIR is set (the reconcile-case runner) — from
 * $GR_POD_LOGS_DIR/<namespace>/<pod>.txt with the same sinceTime filter.
 *
 * Ownership: `m` is borrowed; the controllers' state belongs to the
 * manager's lifetime (freed at exit). Errors: GR_EINVAL/GR_ENOMEM from
 * registration (named in err).
 */
#ifndef GR_MEASURE_CTL_H
#define GR_MEASURE_CTL_H

#include "gr_err.h"
#include "gr_kube_mgr.h"

/* Declare the caches (Jobs, GoodputMeasurements, BandwidthMeasurements,
 * LogProfiles, Pods; all optional CRDs) and add the two controllers with
 * `workers` concurrent reconciles each (0 → 5). */
int gr_measure_ctl_register(gr_kube_mgr *m, int workers, gr_err *err);

#endif
