/* Fuzz target: the watch-stream splitter and the pod planner/log writer
 * (kubectl output: pods are outside input). */
#include <stddef.h>
#include <stdint.h>

#include "gr_sim.h"

static int on_value(void *ctx, json_t *v, const gr_err *e)
{
    (void)e;
    const gr_sim_spec *s = ctx;
    gr_sim_plan p;
    if (v != NULL && gr_sim_pod_plan(s, "h100", v, &p, NULL) == GR_OK && p.act) {
        gr_buf b = GR_BUF_INIT(1 << 20);
        gr_sim_pod_log(&p, s, "h100", v, 0, &b, NULL);
        gr_sim_pod_apply_yaml(&p, "/tmp/x.log", &b, NULL);
        gr_buf_free(&b);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char spec_yaml[] =
        "nodes:\n- name: gpu-node-01\n  busbwGBps: 10\n  dcgm: {fail: true}\n"
        "trainJobs:\n- name: bad\n";
    gr_sim_spec s;
    if (gr_sim_spec_parse(spec_yaml, sizeof spec_yaml - 1, "spec", &s, NULL) != GR_OK)
        return 0;
    gr_sim_stream st;
    gr_sim_stream_init(&st);
    /* Feed in two pieces to exercise state across calls. */
    size_t half = size / 2;
    gr_sim_stream_feed(&st, (const char *)data, half, on_value, &s);
    gr_sim_stream_feed(&st, (const char *)data + half, size - half, on_value, &s);
    gr_sim_stream_free(&st);
    gr_sim_spec_free(&s);
    return 0;
}
