/*
 * fuzz_nvcre_job_meas.c — the Job's side of the measurements on arbitrary
 * input (outside data: a Job as users write it, measurement statuses as
 * another controller wrote them). The input is a JSON document
 * {"job": Job, "gm": GoodputMeasurement, "bm": BandwidthMeasurement,
 *  "status": Job status, "now": seconds}; each part may be anything.
 * Checks: no crash, no leak; a built measurement always has the Job's name
 * in spec.jobRef and exactly one controller ownerReference; the threshold
 * verdict leaves the exclusive conditions alone and, when it judged, sets
 * ValidationFailed with a reason; a pending verdict requeues within 1–15 s.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_nvcre_job.h"
#include "gr_nvcre_types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *in = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    if (!in)
        return 0;
    json_t *job = json_object_get(in, "job");
    const json_t *gm = json_object_get(in, "gm");
    const json_t *bm = json_object_get(in, "bm");
    int64_t now = json_integer_value(json_object_get(in, "now"));
    if (now < 0 || now > INT64_C(4102444800))
        now = 0;
    now *= GR_NVCRE_NS_PER_S;
    for (int k = GR_NVCRE_MEAS_GOODPUT; k <= GR_NVCRE_MEAS_BANDWIDTH; k++) {
        json_t *m = NULL;
        if (gr_nvcre_job_build_measurement(job, k, &m, NULL) == GR_OK && m) {
            const char *jn =
                json_string_value(json_object_get(json_object_get(job, "metadata"), "name"));
            if (!gr_nvcre_job_measurement_for(m, jn))
                abort();
            if (json_array_size(
                    json_object_get(json_object_get(m, "metadata"), "ownerReferences")) != 1)
                abort();
        }
        json_decref(m);
    }
    gr_measure_gm_view v;
    gr_measure_gm_view_from(gm, &v);
    gr_nvcre_job_stall_in st;
    gr_nvcre_job_stall_from(json_object_get(job, "spec"), &v, &st);
    (void)gr_nvcre_job_stall_check(&st, now / 2, 0, now);
    json_t *status = json_deep_copy(json_object_get(in, "status"));
    if (json_is_object(status)) {
        const char *before = gr_nvcre_job_phase(status);
        char phase[32] = "";
        if (before)
            strncpy(phase, before, sizeof phase - 1);
        gr_nvcre_job_verdict out;
        int rc = gr_nvcre_job_thresholds_step(json_object_get(job, "spec"), status, gm, bm, "a,b",
                                              1, now, &out, NULL);
        const char *after = gr_nvcre_job_phase(status);
        if (strcmp(phase, after ? after : "") != 0)
            abort();
        if (rc == GR_OK && out.changed) {
            const json_t *c = gr_nvcre_job_condition(status, GR_NVCRE_COND_VALIDATION_FAILED);
            if (!c || !json_string_value(json_object_get(c, "reason")))
                abort();
        }
        if (rc == GR_OK && out.pending &&
            (out.requeue_ns < GR_NVCRE_NS_PER_S || out.requeue_ns > 15 * GR_NVCRE_NS_PER_S))
            abort();
    }
    json_decref(status);
    json_decref(in);
    return 0;
}
