/*
 * fuzz_nvcre_wf_diag.c — the diagnose state machine (gr_nvcre_wf_diag.h)
 * on arbitrary input: a JSON array [spec, nodes, names, state, rounds...]:
 * start from (spec, nodes, names), then advance a stored `state` (as read
 * back from a Workflow's status) with each round's groups, and the
 * bandwidth verdict on `state` as a BandwidthMeasurement. It must never
 * crash, leak or hang, and must keep its contract: either a next round of
 * non-empty groups or a final condition, never both.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_json.h"
#include "gr_nvcre_wf_diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int rc, const json_t *next, const char *type)
{
    if (rc != GR_OK)
        return;
    if ((next != NULL) == (type != NULL))
        abort();
    if (next && json_array_size(next) == 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *in = NULL;
    if (gr_json_parse((const char *)data, size, 1 << 20, "fuzz", &in, NULL) != GR_OK)
        return 0;
    json_t *spec = json_array_get(in, 0), *nodes = json_array_get(in, 1);
    json_t *names = json_array_get(in, 2), *stored = json_array_get(in, 3);
    json_t *st = NULL, *gs = NULL;
    char msg[256];
    const char *type = NULL, *reason = NULL;
    int mn = (int)(json_integer_value(json_array_get(in, 4)) % 8);
    if (gr_nvcre_wf_diag_start(spec, nodes, names, &st, &gs, NULL) == GR_OK) {
        /* Drive it with alternating verdicts until it completes. */
        for (int r = 0; gs && r < 64; r++) {
            size_t i;
            json_t *g;
            json_array_foreach(gs, i, g) json_object_set_new(
                g, "phase", json_string(((i + (size_t)r) % 3) ? "Succeeded" : "Failed"));
            json_t *next = NULL;
            int rc = gr_nvcre_wf_diag_advance(st, gs, r & 1, mn, &next, &type, &reason, msg,
                                              sizeof msg, NULL);
            check(rc, next, type);
            json_decref(gs);
            gs = rc == GR_OK ? next : NULL;
            if (rc != GR_OK)
                json_decref(next);
        }
        json_decref(gs);
        json_decref(st);
    }
    if (json_is_object(stored)) {
        json_t *s = json_deep_copy(stored);
        for (size_t k = 5; k < json_array_size(in) && k < 16; k++) {
            json_t *next = NULL;
            int rc = gr_nvcre_wf_diag_advance(s, json_array_get(in, k), 1, mn, &next, &type,
                                              &reason, msg, sizeof msg, NULL);
            check(rc, next, type);
            json_decref(next);
            if (rc != GR_OK)
                break;
        }
        json_decref(s);
    }
    double t = 0, mx = 0;
    (void)gr_nvcre_wf_diag_threshold(spec, &t, NULL);
    (void)gr_nvcre_wf_diag_bw_verdict(stored, t, 0, 1, json_integer_value(json_array_get(in, 4)),
                                      &mx);
    json_decref(in);
    return 0;
}
