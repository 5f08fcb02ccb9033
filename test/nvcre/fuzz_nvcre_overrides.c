/*
 * fuzz_nvcre_overrides.c — the override matcher and merger
 * (gr_nvcre_wf_apply_overrides(), gr_nvcre_wf_when_match()) on arbitrary
 * input: a JSON array [spec, platform, gpuArchitecture, domainCount], and
 * the dependency scoping and per-Job renaming on the effective spec
 * (gr_nvcre_wf_prepare_job(): every job-scoped name ends up ≤ 63 chars),
 * and the target's Node labels (gr_nvcre_wf_target_labels()). It
 * must never crash, leak or hang, and never modify its input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_json.h"
#include "gr_nvcre_wf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *in = NULL;
    if (gr_json_parse((const char *)data, size, 1 << 20, "fuzz", &in, NULL) != GR_OK)
        return 0;
    json_t *spec = json_array_get(in, 0);
    const char *pl = json_string_value(json_array_get(in, 1));
    const char *arch = json_string_value(json_array_get(in, 2));
    gr_nvcre_wf_ctx ctx = {pl ? pl : "", arch ? arch : "", "TrainJob", "simple",
                           json_integer_value(json_array_get(in, 3))};
    if (json_is_object(spec)) {
        json_t *copy = json_deep_copy(spec);
        json_t *eff = NULL, *trk = NULL, *events = json_array();
        const char *reason = NULL;
        int rc = gr_nvcre_wf_apply_overrides(spec, &ctx, &eff, &trk, events, &reason, NULL);
        if (!gr_json_equal(spec, copy))
            abort();
        if (rc == GR_OK && !json_is_object(eff))
            abort();
        if (rc == GR_OK)
            (void)gr_nvcre_wf_gang_check(eff, NULL, &reason, NULL);
        if (rc == GR_OK) {
            json_t *wf = json_pack("{s:{s:s}}", "metadata", "name", pl ? pl : "wf");
            json_t *js = NULL, *jd = NULL;
            if (gr_nvcre_wf_prepare_job(wf, eff, "group-0-overflow", 12, 0, &js, &jd, NULL) ==
                GR_OK) {
                size_t k;
                json_t *d;
                json_array_foreach(jd, k, d)
                {
                    const char *n = json_string_value(gr_json_ptr_get(d, "/metadata/name"));
                    if (n && strlen(n) > 63)
                        abort();
                }
            }
            json_decref(js);
            json_decref(jd);
            json_decref(wf);
        }
        /* The first pass's Node label selector: NULL, or string labels. */
        json_t *wfo = json_pack("{s:O}", "spec", spec), *labels = NULL;
        if (gr_nvcre_wf_target_labels(wfo, &labels, NULL) == GR_OK && labels) {
            const char *k;
            json_t *v;
            if (!json_object_size(labels))
                abort();
            json_object_foreach(labels, k, v)
            {
                if (!json_is_string(v))
                    abort();
            }
        }
        json_decref(labels);
        json_decref(wfo);
        if (!gr_json_equal(spec, copy))
            abort();
        json_decref(eff);
        json_decref(trk);
        json_decref(events);
        json_decref(copy);
        size_t i;
        json_t *ov;
        json_array_foreach(json_object_get(spec, "overrides"), i, ov)
        {
            int m;
            (void)gr_nvcre_wf_when_match(json_object_get(ov, "when"), &ctx, &m, NULL);
            free(gr_nvcre_wf_when_summary(json_object_get(ov, "when")));
        }
    }
    json_decref(in);
    return 0;
}
