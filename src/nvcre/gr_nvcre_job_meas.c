/*
 * gr_nvcre_job_meas.c — the Job's side of the measurements (issue 18), pure:
 * the GoodputMeasurement / BandwidthMeasurement a Job creates (§1.2, §3.11),
 * the stall-detection and checkpoint-restart inputs read from its
 * GoodputMeasurement (§3.5, §3.6), and the threshold verdict on a
 * Succeeded Job (§3.9). See gr_nvcre_job.h § measurements.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gr_duration.h"
#include "gr_nvcre_job.h"
#include "gr_nvcre_types.h"
#include "gr_time.h"

static const char *sget(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

int gr_nvcre_job_measurement_name(const char *job, gr_nvcre_meas_kind k,
                                  char out[GR_NVCRE_MAX_K8S_NAME_LEN + 1])
{
    char full[512];
    int n = snprintf(full, sizeof full, "%s%s", job ? job : "",
                     k == GR_NVCRE_MEAS_GOODPUT ? "-goodput" : "-bandwidth");
    if (!job || !*job || n < 0 || (size_t)n >= sizeof full)
        return GR_EINVAL;
    gr_nvcre_truncate_name(full, GR_NVCRE_MAX_K8S_NAME_LEN, out, GR_NVCRE_MAX_K8S_NAME_LEN + 1);
    return GR_OK;
}

const char *gr_nvcre_job_measurement_field(gr_nvcre_meas_kind k)
{
    return k == GR_NVCRE_MEAS_GOODPUT ? GR_NVCRE_F_GOODPUT_MEASUREMENT
                                      : GR_NVCRE_F_BANDWIDTH_MEASUREMENT;
}

/* The Job's controller ownerReference when it is a Workflow (borrowed). */
static const json_t *workflow_owner(const json_t *md)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(md, "ownerReferences"), i, r)
    {
        const char *kind = sget(r, "kind"), *api = sget(r, "apiVersion");
        if (json_is_true(json_object_get(r, "controller")) && kind &&
            strcmp(kind, GR_NVCRE_KIND_WORKFLOW) == 0 && api &&
            strncmp(api, GR_NVCRE_GROUP "/", strlen(GR_NVCRE_GROUP) + 1) == 0 && sget(r, "name") &&
            sget(r, "uid"))
            return r;
    }
    return NULL;
}

int gr_nvcre_job_build_measurement(const json_t *job, gr_nvcre_meas_kind k, json_t **out,
                                   gr_err *err)
{
    *out = NULL;
    const json_t *md = json_object_get(job, "metadata");
    const json_t *spec = json_object_get(job, "spec");
    const char *name = sget(md, "name"), *ns = sget(md, "namespace"), *uid = sget(md, "uid");
    const char *field = gr_nvcre_job_measurement_field(k);
    const json_t *cfg = json_object_get(spec, field);
    if (!json_is_object(cfg))
        return GR_OK; /* not asked for */
    if (!name || !ns || !uid)
        return gr_err_set(err, GR_EINVAL, "Job: metadata.name, namespace and uid are required");
    const char *lp = sget(cfg, GR_NVCRE_F_LOG_PROFILE_REF);
    if (!lp || !*lp)
        return gr_err_set(err, GR_EINVAL,
                          "spec.%s.logProfileRef: required (the name of a LogProfile)", field);
    char mname[GR_NVCRE_MAX_K8S_NAME_LEN + 1];
    if (gr_nvcre_job_measurement_name(name, k, mname) != GR_OK)
        return gr_err_set(err, GR_EINVAL, "metadata.name: too long for a measurement name");
    const json_t *wf = workflow_owner(md);
    json_t *owner =
        wf ? json_pack("{s:O,s:O,s:O,s:O,s:b,s:b}", "apiVersion", json_object_get(wf, "apiVersion"),
                       "kind", json_object_get(wf, "kind"), "name", json_object_get(wf, "name"),
                       "uid", json_object_get(wf, "uid"), "controller", 1, "blockOwnerDeletion", 1)
           : json_pack("{s:s,s:s,s:s,s:s,s:b,s:b}", "apiVersion", GR_NVCRE_API_VERSION, "kind",
                       GR_NVCRE_KIND_JOB, "name", name, "uid", uid, "controller", 1,
                       "blockOwnerDeletion", 1);
    json_t *mspec = json_pack("{s:{s:s,s:s,s:s},s:s}", "jobRef", "apiGroup", GR_NVCRE_GROUP, "kind",
                              GR_NVCRE_KIND_JOB, "name", name, GR_NVCRE_F_LOG_PROFILE_REF, lp);
    const char *si = sget(cfg, GR_NVCRE_F_SAMPLE_INTERVAL);
    const char *tt = sget(cfg, GR_NVCRE_F_TEST_TYPE);
    if (mspec && si)
        json_object_set_new(mspec, GR_NVCRE_F_SAMPLE_INTERVAL, json_string(si));
    if (mspec && tt && k == GR_NVCRE_MEAS_BANDWIDTH)
        json_object_set_new(mspec, GR_NVCRE_F_TEST_TYPE, json_string(tt));
    json_t *obj = owner && mspec
                      ? json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s},s:[o]},s:o}", "apiVersion",
                                  GR_NVCRE_API_VERSION, "kind",
                                  k == GR_NVCRE_MEAS_GOODPUT ? GR_NVCRE_KIND_GOODPUT_MEASUREMENT
                                                             : GR_NVCRE_KIND_BANDWIDTH_MEASUREMENT,
                                  "metadata", "name", mname, "namespace", ns, "labels",
                                  GR_NVCRE_LABEL_MANAGED_BY, GR_NVCRE_MANAGED_BY_VALUE,
                                  GR_NVCRE_LABEL_JOB, name, "ownerReferences", owner, "spec", mspec)
                      : NULL;
    if (!obj) {
        if (!owner || !mspec) {
            json_decref(owner);
            json_decref(mspec);
        }
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    *out = obj;
    return GR_OK;
}

int gr_nvcre_job_measurement_for(const json_t *m, const char *job)
{
    const json_t *ref = json_object_get(json_object_get(m, "spec"), "jobRef");
    const char *n = sget(ref, "name"), *kind = sget(ref, "kind");
    return n && job && strcmp(n, job) == 0 && (!kind || strcmp(kind, GR_NVCRE_KIND_JOB) == 0);
}

/* ------------------------------------------------------- stalls, restarts */

void gr_nvcre_job_stall_from(const json_t *spec, const gr_measure_gm_view *v,
                             gr_nvcre_job_stall_in *out)
{
    memset(out, 0, sizeof *out);
    json_int_t m = json_integer_value(json_object_get(spec, GR_NVCRE_F_STALL_MULTIPLIER));
    json_int_t st =
        json_integer_value(json_object_get(spec, GR_NVCRE_F_STARTUP_STALL_TIMEOUT_SECONDS));
    out->stall_multiplier = m > 0 ? (double)m : 0;
    out->startup_timeout_s = st > 0 ? (int64_t)st : 0;
    if (!v || !v->exists) {
        out->stall_multiplier = 0; /* §3.5: active only with a GoodputMeasurement */
        return;
    }
    out->sample_interval_ns = v->sample_interval_ns;
    out->app_start_ns = v->app_start_ns;
    out->gm_start_ns = v->start_ns;
    out->last_step_ns = v->last_step_ns;
    out->avg_step_s = isfinite(v->avg_step_s) && v->avg_step_s > 0 ? v->avg_step_s : 0;
    out->log_interval = v->log_interval;
}

/* ------------------------------------------------------------ thresholds */

/* Merge the group's nodes into failedNodes with `reason` (by name, reason). */
static int add_nodes(json_t *status, const char *group_nodes, const char *reason,
                     const char *message)
{
    if (!group_nodes || !*group_nodes)
        return GR_OK;
    json_t *fn = json_object_get(status, GR_NVCRE_F_FAILED_NODES);
    if (!json_is_array(fn)) {
        fn = json_array();
        if (!fn || json_object_set_new(status, GR_NVCRE_F_FAILED_NODES, fn) != 0)
            return GR_ENOMEM;
    }
    for (const char *g = group_nodes; *g;) {
        const char *e = strchr(g, ',');
        size_t len = e ? (size_t)(e - g) : strlen(g);
        const char *s = g;
        while (len && *s == ' ') {
            s++;
            len--;
        }
        while (len && s[len - 1] == ' ')
            len--;
        int dup = !len;
        size_t i;
        const json_t *it;
        json_array_foreach(fn, i, it)
        {
            const char *n = sget(it, "name"), *r = sget(it, "reason");
            if (n && r && strlen(n) == len && strncmp(n, s, len) == 0 && strcmp(r, reason) == 0)
                dup = 1;
        }
        if (!dup) {
            json_t *x =
                json_pack("{s:s%,s:s,s:s}", "name", s, len, "reason", reason, "message", message);
            if (!x || json_array_append_new(fn, x) != 0)
                return GR_ENOMEM;
        }
        if (!e)
            break;
        g = e + 1;
    }
    return GR_OK;
}

int gr_nvcre_job_thresholds_pending(const json_t *spec, const json_t *status)
{
    const json_t *th = json_object_get(spec, GR_NVCRE_F_THRESHOLDS);
    const json_t *s = gr_nvcre_job_condition(status, GR_NVCRE_COND_SUCCEEDED);
    const char *ss = sget(s, "status");
    return json_is_object(th) && json_object_size(th) > 0 && ss && strcmp(ss, "True") == 0 &&
           !gr_nvcre_job_condition(status, GR_NVCRE_COND_VALIDATION_FAILED);
}

int gr_nvcre_job_thresholds_step(const json_t *spec, json_t *status, const json_t *gm,
                                 const json_t *bm, const char *group_nodes, int64_t generation,
                                 int64_t now_ns, gr_nvcre_job_verdict *out, gr_err *err)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(status) || !gr_nvcre_job_thresholds_pending(spec, status))
        return GR_OK;
    const json_t *succ = gr_nvcre_job_condition(status, GR_NVCRE_COND_SUCCEEDED);
    int64_t succeeded_ns = 0;
    const char *ltt = sget(succ, "lastTransitionTime");
    if (!ltt || gr_time_parse_ns(ltt, &succeeded_ns, NULL) != GR_OK)
        succeeded_ns = now_ns; /* no usable time: the timeout starts now */
    int64_t timeout_ns = 0;
    const char *mt = sget(spec, GR_NVCRE_F_MEASUREMENT_TIMEOUT);
    gr_err derr;
    if (mt && gr_duration_parse(mt, &timeout_ns, &derr) != GR_OK)
        return gr_err_set(err, GR_EINVAL, "spec.measurementTimeout: %s (write a Go duration: 5m)",
                          derr.msg);
    if (!mt || timeout_ns <= 0) {
        int rc = gr_duration_parse(GR_NVCRE_DEFAULT_MEASUREMENT_TIMEOUT, &timeout_ns, NULL);
        if (rc != GR_OK)
            return gr_err_set(err, rc, "default measurementTimeout");
    }
    gr_measure_values v;
    gr_measure_values_from(gm, bm, &v);
    gr_measure_result r;
    int rc = gr_measure_threshold_eval(json_object_get(spec, GR_NVCRE_F_THRESHOLDS), &v,
                                       succeeded_ns, timeout_ns, now_ns, &r, err);
    if (rc != GR_OK)
        return rc;
    if (r.verdict == GR_MEASURE_PENDING) {
        /* Wake at the deadline at the latest (+1 s so it is past); the
         * measurements' own events usually come first. */
        int64_t left = gr_ns_sub_sat(
            gr_ns_add_sat(gr_ns_add_sat(succeeded_ns, timeout_ns), GR_NVCRE_NS_PER_S), now_ns);
        out->requeue_ns = left < GR_NVCRE_JOB_REQUEUE_NS ? left : GR_NVCRE_JOB_REQUEUE_NS;
        if (out->requeue_ns < GR_NVCRE_NS_PER_S)
            out->requeue_ns = GR_NVCRE_NS_PER_S;
        out->pending = 1;
        return GR_OK;
    }
    int fail = r.verdict == GR_MEASURE_FAIL;
    rc = gr_nvcre_job_set_additive(status, GR_NVCRE_COND_VALIDATION_FAILED, fail, r.reason,
                                   r.message, generation, now_ns);
    if (rc == GR_OK && fail && strcmp(r.reason, GR_MEASURE_REASON_TIMEOUT) != 0)
        rc = add_nodes(status, group_nodes, GR_NVCRE_NODE_REASON_THRESHOLD_VIOLATION, r.message);
    if (rc != GR_OK)
        return gr_err_set(err, rc, "Job status update failed (%s)", gr_rc_name(rc));
    out->changed = 1;
    out->event = 1;
    snprintf(out->event_type, sizeof out->event_type, "%s", fail ? "Warning" : "Normal");
    snprintf(out->event_reason, sizeof out->event_reason, "%s", r.reason);
    snprintf(out->event_msg, sizeof out->event_msg, "%s", r.message);
    return GR_OK;
}
