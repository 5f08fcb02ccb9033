/*
 * gr_measure_metrics.c — Prometheus text of the measurement gauges (fact
 * sheet §6.3): goodput per GoodputMeasurement, NCCL algBW/busBW per
 * BandwidthMeasurement, message size and test type. See gr_measure.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_buf.h"
#include "gr_measure.h"

/* A status float string → value; 0 when absent or not a finite number. */
static int num(const json_t *o, const char *k, double *out)
{
    const char *s = json_string_value(json_object_get(o, k));
    if (!s || !*s) {
        return 0;
    }
    char *end = NULL;
    double d = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(d)) {
        return 0;
    }
    *out = d;
    return 1;
}

/* A label value as the exposition format wants it (\\, \", \n escaped). */
static int put_label(gr_buf *out, const char *name, const char *v, int first)
{
    int rc = gr_buf_printf(out, "%s%s=\"", first ? "" : ",", name);
    for (const char *p = v ? v : ""; rc == GR_OK && *p; p++) {
        if (*p == '\\') {
            rc = gr_buf_puts(out, "\\\\");
        } else if (*p == '"') {
            rc = gr_buf_puts(out, "\\\"");
        } else if (*p == '\n') {
            rc = gr_buf_puts(out, "\\n");
        } else {
            rc = gr_buf_append(out, p, 1);
        }
    }
    return rc == GR_OK ? gr_buf_puts(out, "\"") : rc;
}

static int put_common(gr_buf *out, const gr_measure_metric_row *r)
{
    int rc = gr_buf_puts(out, "{");
    if (rc == GR_OK) {
        rc = put_label(out, "namespace", r->ns, 1);
    }
    if (rc == GR_OK) {
        rc = put_label(out, "measurement", r->name, 0);
    }
    if (rc == GR_OK) {
        rc = put_label(out, "job", r->job, 0);
    }
    if (rc == GR_OK) {
        rc = put_label(out, "workflow", r->workflow, 0);
    }
    return rc;
}

static const struct {
    const char *name, *field, *help;
} GOODPUT[] = {
    {"nvcre_goodput_ratio", "result",
     "Goodput ratio of the training run: productive time over wall time (0..1)."},
    {"nvcre_goodput_avg_tflops_per_gpu", "avgTFLOPSPerGPU",
     "Average TFLOPS per GPU over non-warm-up training steps."},
    {"nvcre_goodput_training_time_seconds", "trainingTimeSec",
     "Time spent in training steps, in seconds."},
    {"nvcre_goodput_reschedule_time_seconds", "rescheduleTimeSec",
     "Time from interruptions to the restarted application's start, in seconds."},
    {"nvcre_goodput_resume_time_seconds", "resumeTimeSec",
     "Time from application start to the first training step after an interruption, in "
     "seconds."},
    {"nvcre_goodput_checkpoint_save_time_seconds", "checkpointSaveTimeSec",
     "Time spent saving checkpoints, in seconds."},
    {"nvcre_goodput_warmup_time_seconds", "warmupTimeSec",
     "Time spent in warm-up training steps, in seconds."},
    {"nvcre_goodput_non_warmup_time_seconds", "nonWarmupTimeSec",
     "Time spent in training steps after warm-up, in seconds."},
    {"nvcre_goodput_avg_step_time_seconds", "avgStepTimeSec",
     "Average non-warm-up training step time, in seconds."},
    {"nvcre_goodput_lost_work_time_seconds", "lostWorkTimeSec",
     "Training time lost to interruptions (steps redone after a checkpoint restore), in "
     "seconds."},
};

int gr_measure_goodput_metrics_render(const gr_measure_metric_row *rows, size_t n, gr_buf *out)
{
    int rc = GR_OK;
    for (size_t m = 0; rc == GR_OK && m < sizeof GOODPUT / sizeof GOODPUT[0]; m++) {
        rc = gr_buf_printf(out, "# HELP %s %s\n# TYPE %s gauge\n", GOODPUT[m].name, GOODPUT[m].help,
                           GOODPUT[m].name);
        for (size_t i = 0; rc == GR_OK && i < n; i++) {
            double v;
            if (!num(rows[i].status, GOODPUT[m].field, &v)) {
                continue;
            }
            rc = gr_buf_puts(out, GOODPUT[m].name);
            if (rc == GR_OK) {
                rc = put_common(out, &rows[i]);
            }
            if (rc == GR_OK) {
                rc = gr_buf_printf(out, "} %.15g\n", v);
            }
        }
    }
    return rc;
}

static const struct {
    const char *name, *field, *help;
} NCCL[] = {
    {"nvcre_nccl_algbw_gbs", "algBW",
     "NCCL algorithm bandwidth in GB/s, average per message size."},
    {"nvcre_nccl_busbw_gbs", "busBW", "NCCL bus bandwidth in GB/s, average per message size."},
    {"nvcre_nccl_algbw_gbps", "algBW",
     "Deprecated: use nvcre_nccl_algbw_gbs (the same value, in GB/s)."},
    {"nvcre_nccl_busbw_gbps", "busBW",
     "Deprecated: use nvcre_nccl_busbw_gbs (the same value, in GB/s)."},
};

int gr_measure_bw_metrics_render(const gr_measure_metric_row *rows, size_t n, gr_buf *out)
{
    int rc = GR_OK;
    for (size_t m = 0; rc == GR_OK && m < sizeof NCCL / sizeof NCCL[0]; m++) {
        rc = gr_buf_printf(out, "# HELP %s %s\n# TYPE %s gauge\n", NCCL[m].name, NCCL[m].help,
                           NCCL[m].name);
        for (size_t i = 0; rc == GR_OK && i < n; i++) {
            size_t j;
            const json_t *res;
            json_array_foreach(json_object_get(rows[i].status, "results"), j, res)
            {
                double v;
                const json_t *size = json_object_get(res, "sizeBytes");
                if (!json_is_integer(size) || !num(res, NCCL[m].field, &v)) {
                    continue;
                }
                char sz[32];
                snprintf(sz, sizeof sz, "%lld", (long long)json_integer_value(size));
                rc = gr_buf_puts(out, NCCL[m].name);
                if (rc == GR_OK) {
                    rc = put_common(out, &rows[i]);
                }
                if (rc == GR_OK) {
                    rc = put_label(out, "nccl_test", rows[i].test_type, 0);
                }
                if (rc == GR_OK) {
                    rc = put_label(out, "message_size_bytes", sz, 0);
                }
                if (rc == GR_OK) {
                    rc = gr_buf_printf(out, "} %.15g\n", v);
                }
                if (rc != GR_OK) {
                    break;
                }
            }
        }
    }
    return rc;
}
