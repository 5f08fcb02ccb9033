/*
 * fuzz_measure.c — gr_measure on arbitrary bytes. The first byte picks:
 *   0: a regex (up to the first NUL) compiled under the RE2 rules, then
 *      matched against the rest, line by line;
 *   1: a Go layout and a value ("layout\0value");
 *   2: a pod log through a training + NCCL profile, the incremental reader
 *      (in random chunk sizes), goodput and bandwidth accounting and the
 *      status writers.
 * Nothing may crash, leak or grow without bound.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_measure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char PROFILE[] =
    "{\"timestamp\":{\"layout\":\"2006-01-02 15:04:05\"},\"patterns\":{"
    "\"trainingStep\":{\"regex\":\"\\\\[(?P<timestamp>[^\\\\]]+)\\\\] "
    "iteration\\\\s+(?P<step>\\\\d+)"
    "(?: \\\\| (?P<stepTime>[0-9.]+) ms)?(?: "
    "(?P<tflops>[0-9.]+))?\",\"units\":{\"stepTime\":\"ms\"}},"
    "\"checkpointSave\":{\"regex\":\"^save (?P<step>\\\\d+)\"},"
    "\"checkpointDone\":{\"regex\":\"^saved (?P<step>\\\\d+)(?: (?P<saveTime>[0-9.]+))?\"},"
    "\"checkpointLoaded\":{\"regex\":\"^loaded (?P<step>\\\\d+)\"},"
    "\"applicationStart\":{\"regex\":\"^start\"},"
    "\"bandwidthResult\":{\"regex\":\"^\\\\s*(?P<size>\\\\d+)\\\\s+(?P<algbw>[0-9.]+)\\\\s+"
    "(?P<busbw>[0-9.]+)(?:\\\\s+(?P<ipAlgbw>[0-9.]+)\\\\s+(?P<ipBusbw>[0-9.]+))?\"}},"
    "\"warmupSteps\":2}";

typedef struct ctx {
    gr_measure_profile *p;
    gr_measure_goodput g;
    gr_measure_bw bw;
    gr_measure_wrap wrap;
    gr_measure_re *re;
} ctx;

static int on_line(void *vc, const char *line, size_t len, int64_t ts)
{
    ctx *c = vc;
    if (c->re) {
        gr_measure_match m;
        (void)gr_measure_re_match(c->re, line, len, &m);
        return 0;
    }
    gr_measure_event ev;
    int rc = gr_measure_profile_parse_line(c->p, line, len, ts, &ev, NULL);
    if (rc == 0) {
        char joined[1024];
        size_t jl = 0;
        if (gr_measure_wrap_join(&c->wrap, line, len, joined, sizeof joined, &jl)) {
            rc = gr_measure_profile_parse_line(c->p, joined, jl, ts, &ev, NULL);
        }
    }
    if (rc == 1) {
        c->wrap.prev_len = 0;
        gr_measure_goodput_apply(&c->g, &ev);
        gr_measure_bw_add(&c->bw, &ev);
    }
    return 0;
}

static void feed(ctx *c, const char *s, size_t n, int timestamps)
{
    gr_measure_reader r;
    gr_measure_reader_init(&r);
    gr_measure_reader_begin_poll(&r);
    size_t step = n % 7 + 1;
    for (size_t i = 0; i < n; i += step) {
        gr_measure_reader_feed(&r, s + i, n - i < step ? n - i : step, timestamps, on_line, c);
    }
    gr_measure_reader_end_poll(&r, 1, timestamps, on_line, c);
    char since[40];
    gr_measure_reader_since(&r, 1767607200000000000, since);
    gr_measure_reader_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    const char *nul = memchr(s, '\0', n);
    size_t a = nul ? (size_t)(nul - s) : n;
    ctx c;
    memset(&c, 0, sizeof c);
    switch (data[0] % 3) {
    case 0:
        if (gr_measure_re_compile(s, a, &c.re, NULL) == GR_OK) {
            if (nul) {
                feed(&c, nul + 1, n - a - 1, 0);
            }
            gr_measure_re_free(c.re);
        }
        break;
    case 1: {
        char layout[129];
        if (a < sizeof layout) {
            memcpy(layout, s, a);
            layout[a] = '\0';
            int64_t ns;
            (void)gr_measure_gotime_check(layout, NULL);
            if (nul) {
                (void)gr_measure_gotime_parse(layout, nul + 1, n - a - 1, 1767607200000000000, &ns,
                                              NULL);
            }
        }
        break;
    }
    default: {
        json_t *spec = json_loads(PROFILE, 0, NULL);
        if (!spec || gr_measure_profile_new(spec, &c.p, NULL) != GR_OK) {
            abort(); /* the fixed profile must load */
        }
        json_decref(spec);
        gr_measure_goodput_init(&c.g, 2, 0);
        gr_measure_bw_init(&c.bw);
        c.bw.in_place = (int)(size & 1);
        feed(&c, s, n, (int)((size >> 1) & 1));
        gr_measure_goodput_interrupt(&c.g, 1767607300000000000);
        json_t *st = json_object();
        gr_measure_goodput_to_status(&c.g, 1767607400000000000, st);
        gr_measure_goodput g2;
        gr_measure_goodput_init(&g2, 2, 0);
        gr_measure_goodput_from_status(&g2, st);
        gr_measure_bw_to_status(&c.bw, st);
        gr_measure_bw b2;
        gr_measure_bw_from_status(&b2, st);
        json_decref(st);
        gr_measure_profile_free(c.p);
        break;
    }
    }
    return 0;
}
