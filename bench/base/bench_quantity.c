/* Benchmark of the quantity and duration parsers: one `name: value unit`
 * line per figure (nanoseconds per operation, lower is better). */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "gr_duration.h"
#include "gr_quantity.h"

static const char *const quantities[] = {"500Mi", "100m", "4",           "1e3",       "10Ti",
                                         "1.5Gi", "250m", "0.5",         "128974848", "2Gi",
                                         "1000m", "64Mi", "123.456789k", "8",         "1Ki"};
static const char *const durations[] = {"10m", "1h30m", "500ms", "1.5h", "30s", "2h45m10.5s"};
#define NQ (sizeof quantities / sizeof quantities[0])
#define ND (sizeof durations / sizeof durations[0])

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static volatile int64_t sink;

int main(void)
{
    const int rounds = 200000;
    gr_quantity q[NQ];
    char buf[GR_QUANTITY_STR_MAX];

    double t0 = now_s();
    for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < NQ; i++) {
            if (gr_quantity_parse(quantities[i], &q[i], NULL) != GR_OK)
                return 1;
        }
    }
    double t1 = now_s();
    printf("quantity_parse: %.1f ns/op\n", (t1 - t0) * 1e9 / ((double)rounds * NQ));

    t0 = now_s();
    for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < NQ; i++)
            sink += gr_quantity_canonical(&q[i], buf)[0];
    }
    t1 = now_s();
    printf("quantity_canonical: %.1f ns/op\n", (t1 - t0) * 1e9 / ((double)rounds * NQ));

    t0 = now_s();
    for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < NQ; i++)
            sink += gr_quantity_cmp(&q[i], &q[(i + (size_t)r) % NQ]);
    }
    t1 = now_s();
    printf("quantity_cmp: %.1f ns/op\n", (t1 - t0) * 1e9 / ((double)rounds * NQ));

    t0 = now_s();
    for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < NQ; i++)
            sink += gr_quantity_milli_value(&q[i]);
    }
    t1 = now_s();
    printf("quantity_milli_value: %.1f ns/op\n", (t1 - t0) * 1e9 / ((double)rounds * NQ));

    t0 = now_s();
    for (int r = 0; r < rounds; r++) {
        for (size_t i = 0; i < ND; i++) {
            int64_t ns;
            if (gr_duration_parse(durations[i], &ns, NULL) != GR_OK)
                return 1;
            sink += ns;
        }
    }
    t1 = now_s();
    printf("duration_parse: %.1f ns/op\n", (t1 - t0) * 1e9 / ((double)rounds * ND));
    return 0;
}
