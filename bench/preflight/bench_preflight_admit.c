/*
 * bench_preflight_admit.c — the in-process cost of one admission
 * (gr_preflight_admit on the shared workload: parse the review, inject 3
 * checks into a gang GPU pod, serialise the patch and the response), with no
 * HTTP or TLS. Deterministic, so it is the loop to profile:
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/tmp/pf.cg \
 *       build/<dir>/bench/preflight/bench_preflight_admit 200
 *   callgrind_annotate /tmp/pf.cg | head -40
 *
 *   bench_preflight_admit [iterations=20000] [--dump]
 *
 * Prints `preflight_admit_inprocess: <µs> us` and
 * `preflight_admit_response_bytes: <n> bytes`; --dump also writes the
 * response body of one admission to stdout (to compare outputs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_preflight_workload.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    bool dump = argc > 2 && strcmp(argv[2], "--dump") == 0;
    if (iters < 1)
        return 2;
    gr_err err;
    gr_preflight_config *cfg = NULL;
    if (gr_preflight_config_parse(k_cfg, strlen(k_cfg), "bench", NULL, NULL, &cfg, &err) != GR_OK) {
        fprintf(stderr, "config: %s\n", err.msg);
        return 1;
    }
    gr_preflight_gang_ops gang = {.resolve = gang_resolve};
    gr_preflight_admission a;
    size_t bytes = 0;
    double t0 = now_s();
    for (long i = 0; i < iters; i++) {
        if (gr_preflight_admit(cfg, &gang, k_review, sizeof k_review - 1, &a) != GR_OK ||
            a.result != GR_PREFLIGHT_ADMIT_INJECTED || a.n_injected != 3) {
            fprintf(stderr, "admission did not inject 3 checks\n");
            gr_preflight_admission_clear(&a);
            gr_preflight_config_free(cfg);
            return 1;
        }
        bytes = a.body_len;
        if (dump && i == 0)
            fwrite(a.body, 1, a.body_len, stdout);
        gr_preflight_admission_clear(&a);
    }
    double us = (now_s() - t0) / (double)iters * 1e6;
    if (dump)
        putchar('\n');
    printf("preflight_admit_inprocess: %.1f us\n", us);
    printf("preflight_admit_response_bytes: %zu bytes\n", bytes);
    gr_preflight_config_free(cfg);
    return 0;
}
