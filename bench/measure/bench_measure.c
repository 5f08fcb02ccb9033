/*
 * bench_measure.c — parse throughput of gr_measure (issue 18 goal: at least
 * 50% of `grep -cP` on the same pattern and file, constant memory).
 *
 * Writes two synthetic logs of N MB (default 100) under $TMPDIR: NCCL-tests
 * output of 16 ranks (table rows between INFO lines of other ranks) and a
 * Megatron training log (step lines, checkpoints, noise).
 * Each is parsed with its built-in LogProfile (deploy/logprofiles/) through
 * the incremental reader in 4 MiB polls (the per-poll byte cap), feeding the
 * bandwidth / goodput accounting; then `grep -cP '<the same regex>'` runs on
 * the same file. Prints `name: value unit` lines; the files are removed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "gr_measure.h"
#include "gr_yaml.h"

#ifndef GR_MEASURE_SOURCE_DIR
#define GR_MEASURE_SOURCE_DIR "."
#endif

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long max_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static json_t *profile_spec(const char *name, char *regex, size_t cap, const char *pattern)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/deploy/logprofiles/%s.yaml", GR_MEASURE_SOURCE_DIR, name);
    json_t *docs = NULL;
    gr_err err;
    if (gr_yaml_load_file(path, 1 << 20, &docs, &err) != GR_OK) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        exit(1);
    }
    json_t *spec = json_incref(json_object_get(json_array_get(docs, 0), "spec"));
    json_decref(docs);
    const char *rx = json_string_value(
        json_object_get(json_object_get(json_object_get(spec, "patterns"), pattern), "regex"));
    snprintf(regex, cap, "%s", rx ? rx : "");
    return spec;
}

static void write_nccl(const char *path, size_t bytes)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    size_t n = 0;
    unsigned row = 0;
    while (n < bytes) {
        char line[512];
        int len;
        if (row % 4 == 3) {
            len = snprintf(line, sizeof line,
                           "worker-%u:%u:%u [%u] NCCL INFO Channel "
                           "%02u/0 : %u[%u] -> %u[%u] [send] via NET/IB/%u\n",
                           row % 16, 1000 + row % 16, 2000 + row % 7, row % 8, row % 32, row % 16,
                           row % 8, (row + 1) % 16, row % 8, row % 4);
        } else {
            unsigned long long size = 8ULL << (row % 28);
            double t = 30.0 + (double)(row % 997) * 7.3;
            double alg = (double)size / t / 1000.0;
            len = snprintf(line, sizeof line,
                           "%12llu  %12llu     float     sum      "
                           "-1  %7.1f  %6.2f  %6.2f      0  %7.1f  %6.2f  %6.2f      0\n",
                           size, size / 4, t, alg, alg * 1.875, t + 0.4, alg, alg * 1.875);
        }
        fwrite(line, 1, (size_t)len, f);
        n += (size_t)len;
        row++;
    }
    fclose(f);
}

static void write_training(const char *path, size_t bytes)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    size_t n = 0;
    long sec = 0, step = 0;
    unsigned k = 0;
    while (n < bytes) {
        char line[512];
        int len;
        long h = (sec / 3600) % 24, m = (sec / 60) % 60, s = sec % 60;
        if (k % 3 == 0) {
            step += 10;
            len = snprintf(
                line, sizeof line,
                " [2026-01-05 %02ld:%02ld:%02ld] "
                "iteration %8ld/ 1000000 | consumed samples: %12ld | elapsed time per "
                "iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | learning "
                "rate: 3.0E-04 | global batch size:   512 | lm loss: 2.1E+00 |\n",
                h, m, s, step, step * 512, 1200.0 + (double)(k % 50), 450.0 + (double)(k % 13));
        } else if (k % 997 == 1) {
            len = snprintf(line, sizeof line,
                           "saving checkpoint at iteration "
                           "%7ld to /checkpoints in torch_dist format\n",
                           step);
        } else {
            len = snprintf(
                line, sizeof line,
                "[Rank %u] (after %ld iterations) "
                "memory (MB) | allocated: %u.0 | max allocated: %u.0 | reserved: 61234.0\n",
                k % 64, step, 40000 + k % 977, 52000 + k % 331);
        }
        fwrite(line, 1, (size_t)len, f);
        n += (size_t)len;
        if (++k % 3 == 0) {
            sec += 12;
        }
    }
    fclose(f);
}

typedef struct run {
    gr_measure_profile *p;
    gr_measure_bw bw;
    gr_measure_goodput g;
    uint64_t matched;
} run;

static int on_line(void *ctx, const char *line, size_t len, int64_t ts)
{
    run *r = ctx;
    gr_measure_event ev;
    if (gr_measure_profile_parse_line(r->p, line, len, ts, &ev, NULL) == 1) {
        r->matched++;
        if (ev.kind == GR_MEASURE_BANDWIDTH_RESULT) {
            gr_measure_bw_add(&r->bw, &ev);
        } else {
            gr_measure_goodput_apply(&r->g, &ev);
        }
    }
    return 0;
}

/* Parse the file in 4 MiB polls through the incremental reader. */
static double parse_file(const char *path, json_t *spec, uint64_t *matched)
{
    run r;
    memset(&r, 0, sizeof r);
    gr_err err;
    if (gr_measure_profile_new(spec, &r.p, &err) != GR_OK) {
        fprintf(stderr, "profile: %s\n", err.msg);
        exit(1);
    }
    gr_measure_bw_init(&r.bw);
    gr_measure_goodput_init(&r.g, gr_measure_profile_warmup_steps(r.p), 0);
    size_t cap = (size_t)GR_MEASURE_POLL_BYTES_MAX;
    char *buf = malloc(cap);
    FILE *f = fopen(path, "rb");
    if (!buf || !f) {
        exit(1);
    }
    gr_measure_reader rd;
    gr_measure_reader_init(&rd);
    double t0 = now_s();
    size_t got;
    while ((got = fread(buf, 1, cap, f)) > 0) {
        gr_measure_reader_feed(&rd, buf, got, 0, on_line, &r);
    }
    gr_measure_reader_end_poll(&rd, 1, 0, on_line, &r);
    double t = now_s() - t0;
    fclose(f);
    free(buf);
    gr_measure_reader_free(&rd);
    gr_measure_profile_free(r.p);
    *matched = r.matched;
    return t;
}

static double grep_file(const char *path, const char *regex, unsigned long long *count)
{
    char cmd[8192];
    char *q = cmd;
    q += snprintf(cmd, sizeof cmd, "LC_ALL=C grep -cP '");
    for (const char *s = regex; *s && q < cmd + sizeof cmd - 64; s++) {
        if (*s == '\'') {
            q += snprintf(q, 8, "'\\''");
        } else {
            *q++ = *s;
        }
    }
    snprintf(q, (size_t)(cmd + sizeof cmd - q), "' '%s'", path);
    double t0 = now_s();
    FILE *p = popen(cmd, "r");
    *count = 0;
    if (!p || fscanf(p, "%llu", count) != 1) {
        if (p) {
            pclose(p);
        }
        return -1;
    }
    pclose(p);
    return now_s() - t0;
}

static void bench(const char *name, const char *path, json_t *spec, const char *regex, double mb)
{
    uint64_t matched = 0;
    double best = 1e30;
    for (int i = 0; i < 3; i++) {
        double t = parse_file(path, spec, &matched);
        best = t < best ? t : best;
    }
    unsigned long long gcount = 0;
    double gbest = 1e30;
    for (int i = 0; i < 3; i++) {
        double t = grep_file(path, regex, &gcount);
        if (t > 0 && t < gbest) {
            gbest = t;
        }
    }
    printf("%s_parse_throughput: %.1f MB/s\n", name, mb / best);
    printf("%s_matched_lines: %llu lines\n", name, (unsigned long long)matched);
    if (gbest < 1e30) {
        printf("%s_grep_cP_throughput: %.1f MB/s\n", name, mb / gbest);
        printf("%s_grep_cP_count: %llu lines\n", name, gcount);
        printf("%s_vs_grep: %.0f %%\n", name, 100.0 * gbest / best);
    } else {
        printf("%s_grep_cP_throughput: unavailable (grep -P failed)\n", name);
    }
}

int main(int argc, char **argv)
{
    double mb = argc > 1 ? atof(argv[1]) : 100.0;
    if (mb <= 0) {
        mb = 100.0;
    }
    const char *tmp = getenv("TMPDIR");
    char nccl[1024], train[1024];
    snprintf(nccl, sizeof nccl, "%s/gr_bench_nccl_%d.log", tmp ? tmp : "/tmp", (int)getpid());
    snprintf(train, sizeof train, "%s/gr_bench_train_%d.log", tmp ? tmp : "/tmp", (int)getpid());
    size_t bytes = (size_t)(mb * 1024 * 1024);
    write_nccl(nccl, bytes);
    write_training(train, bytes);
    long rss0 = max_rss_kib();
    char rx[4096];
    json_t *spec = profile_spec("nccl-all-reduce", rx, sizeof rx, "bandwidthResult");
    bench("nccl", nccl, spec, rx, mb);
    json_decref(spec);
    spec = profile_spec("megatron", rx, sizeof rx, "trainingStep");
    bench("training", train, spec, rx, mb);
    json_decref(spec);
    printf("max_rss_before_parse: %ld KiB\n", rss0);
    printf("max_rss_after_parse: %ld KiB\n", max_rss_kib());
    unlink(nccl);
    unlink(train);
    return 0;
}
