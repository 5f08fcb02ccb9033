/*
 * gr_measure_goodput.c — goodput accounting from parsed log events, and the
 * GoodputMeasurement status it writes. See gr_measure.h and
 * docs/measurements.md ("How goodput is computed").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_duration.h"
#include "gr_measure.h"
#include "gr_time.h"

#define NS 1e9

void gr_measure_goodput_init(gr_measure_goodput *g, int64_t warmup_steps, int64_t log_interval)
{
    memset(g, 0, sizeof *g);
    g->warmup_steps = warmup_steps < 0 ? 0 : warmup_steps;
    g->log_interval = log_interval < 0 ? 0 : log_interval;
    g->current_step = -1;
    g->highest_step = -1;
    g->run_first_step = -1;
    g->warmup_base_step = -1;
    g->last_ckpt_step = -1;
    g->pending_step = -1;
    g->restored_step = -1;
    g->last_nonwarmup_step = -1;
}

void gr_measure_goodput_interrupt(gr_measure_goodput *g, int64_t now_ns)
{
    if (g->pending_ns == 0) {
        g->pending_ns = now_ns > 0 ? now_ns : 1;
        g->pending_step = g->highest_step;
    }
    g->run_first_step = -1; /* the next step starts a new run */
}

static double secs(int64_t from, int64_t to)
{
    return to > from && from > 0 ? (double)(to - from) / NS : 0.0;
}

/* The first step of a run after an interruption: account the interruption. */
static void resume_run(gr_measure_goodput *g, int64_t step, int64_t ts)
{
    if (g->pending_ns == 0) {
        /* seen only in the logs (steps went back, or a new application
         * start): the interruption happened after the last step */
        g->pending_ns = g->last_step_ns > 0 ? g->last_step_ns : ts;
        g->pending_step = g->highest_step;
    }
    g->interruptions++;
    double avg = gr_measure_goodput_avg_step(g);
    int64_t from = g->restored_step >= 0    ? g->restored_step
                   : g->last_ckpt_step >= 0 ? g->last_ckpt_step
                                            : (step > 0 ? step - 1 : 0);
    if (g->pending_step > from && isfinite(avg)) {
        g->lost_s += (double)(g->pending_step - from) * avg;
    }
    if (g->run_app_start_ns > g->pending_ns) {
        g->reschedule_s += secs(g->pending_ns, g->run_app_start_ns);
        g->resume_s += secs(g->run_app_start_ns, ts);
    } else {
        g->reschedule_s += secs(g->pending_ns, ts);
    }
    g->pending_ns = 0;
    g->pending_step = -1;
}

static void on_step(gr_measure_goodput *g, const gr_measure_event *ev, int warmup_line)
{
    int64_t s = ev->step, ts = ev->ts_ns;
    if (s < 0) {
        return;
    }
    int new_run = g->run_first_step < 0 || s < g->current_step;
    if (new_run) {
        if (g->highest_step >= 0) {
            resume_run(g, s, ts);
        }
        g->run_first_step = s;
        g->warmup_base_step = s;
        g->restored_step = -1;
        if (g->first_step_ns == 0) {
            g->first_step_ns = ts;
        }
    } else if (s > g->current_step) {
        int64_t delta = s - g->current_step;
        if (g->observed_interval == 0 || delta < g->observed_interval) {
            g->observed_interval = delta;
        }
        int warm = warmup_line || s <= g->warmup_base_step + g->warmup_steps;
        double dt = secs(g->last_step_ns, ts);
        g->training_s += dt;
        if (warm) {
            g->warmup_s += dt;
        } else {
            g->nonwarmup_s += dt;
            g->nonwarmup_steps += delta;
            g->last_nonwarmup_step = s;
            if (isfinite(ev->step_time_s) && ev->step_time_s >= 0) {
                g->step_time_sum += ev->step_time_s;
                g->step_time_n++;
            }
            if (isfinite(ev->tflops) && ev->tflops >= 0) {
                g->tflops_sum += ev->tflops;
                g->tflops_n++;
            }
        }
    } else {
        return; /* the same step again (another rank): nothing new */
    }
    g->current_step = s;
    if (s > g->highest_step) {
        g->highest_step = s;
    }
    if (ts > 0) {
        g->last_step_ns = ts;
    }
}

void gr_measure_goodput_apply(gr_measure_goodput *g, const gr_measure_event *ev)
{
    int64_t ts = ev->ts_ns;
    switch (ev->kind) {
    case GR_MEASURE_APPLICATION_START:
        if (g->app_start_ns == 0) {
            g->app_start_ns = ts;
        } else if (g->run_first_step >= 0) {
            gr_measure_goodput_interrupt(g, g->last_step_ns > 0 ? g->last_step_ns : ts);
        }
        g->run_app_start_ns = ts;
        break;
    case GR_MEASURE_CHECKPOINT_SAVE:
        g->save_start_ns = ts;
        break;
    case GR_MEASURE_CHECKPOINT_DONE:
        if (isfinite(ev->save_time_s) && ev->save_time_s >= 0) {
            g->save_s += ev->save_time_s;
        } else if (g->save_start_ns > 0) {
            g->save_s += secs(g->save_start_ns, ts);
        }
        g->save_start_ns = 0;
        g->last_ckpt_step = ev->step >= 0 ? ev->step : g->current_step;
        g->last_ckpt_ns = ts;
        break;
    case GR_MEASURE_CHECKPOINT_RESTORE:
    case GR_MEASURE_CHECKPOINT_LOADED:
        if (ev->step >= 0) {
            g->restored_step = ev->step;
        }
        break;
    case GR_MEASURE_TRAINING_STEP:
        on_step(g, ev, 0);
        break;
    case GR_MEASURE_WARMUP_STEP:
        on_step(g, ev, 1);
        break;
    default:
        break;
    }
}

double gr_measure_goodput_avg_step(const gr_measure_goodput *g)
{
    if (g->step_time_n > 0) {
        return g->step_time_sum / (double)g->step_time_n;
    }
    if (g->nonwarmup_steps > 0 && g->nonwarmup_s > 0) {
        return g->nonwarmup_s / (double)g->nonwarmup_steps;
    }
    return (double)NAN;
}

double gr_measure_goodput_avg_tflops(const gr_measure_goodput *g)
{
    return g->tflops_n > 0 ? g->tflops_sum / (double)g->tflops_n : (double)NAN;
}

int64_t gr_measure_goodput_log_interval(const gr_measure_goodput *g)
{
    return g->log_interval > 0 ? g->log_interval : g->observed_interval;
}

double gr_measure_goodput_ratio(const gr_measure_goodput *g, int64_t end_ns)
{
    if (g->first_step_ns <= 0 || end_ns <= g->first_step_ns || g->highest_step < 0 ||
        g->training_s <= 0) {
        return (double)NAN;
    }
    double tw = (double)(end_ns - g->first_step_ns) / NS;
    double den = tw - g->reschedule_s;
    if (den <= 0) {
        return (double)NAN;
    }
    double r = (tw - g->lost_s - g->resume_s - g->reschedule_s - g->save_s) / den;
    return r < 0 ? 0 : r > 1 ? 1 : r;
}

void gr_measure_fmt_float(double v, char buf[48])
{
    if (!isfinite(v)) {
        snprintf(buf, 48, "0");
        return;
    }
    /* Fixed notation with up to 4 decimals; a value too large for that in
     * 48 bytes (|v| >= ~1e42, only from hostile logs) in exponent notation. */
    if (snprintf(buf, 48, "%.4f", v) >= 48) {
        snprintf(buf, 48, "%.6g", v);
        return;
    }
    size_t n = strlen(buf);
    while (n > 0 && buf[n - 1] == '0') {
        n--;
    }
    if (n > 0 && buf[n - 1] == '.') {
        n++; /* keep one decimal: "3.0" */
    }
    buf[n] = '\0';
    if (strcmp(buf, "-0.0") == 0) {
        snprintf(buf, 48, "0.0");
    }
}

static int set_float(json_t *o, const char *k, double v)
{
    char b[48];
    if (!isfinite(v)) {
        return json_object_del(o, k), 0;
    }
    gr_measure_fmt_float(v, b);
    return json_object_set_new(o, k, json_string(b));
}

static int set_int(json_t *o, const char *k, int64_t v)
{
    if (v < 0) {
        return json_object_del(o, k), 0;
    }
    return json_object_set_new(o, k, json_integer(v));
}

static int set_time(json_t *o, const char *k, int64_t ns)
{
    char b[GR_TIME_STR_MAX];
    if (ns <= 0 || gr_time_format_ns(ns, b) != GR_OK) {
        return json_object_del(o, k), 0;
    }
    return json_object_set_new(o, k, json_string(b));
}

int gr_measure_goodput_to_status(const gr_measure_goodput *g, int64_t end_ns, json_t *st)
{
    int rc = 0;
    rc |= set_float(st, "result", gr_measure_goodput_ratio(g, end_ns));
    rc |= set_int(st, "currentStep", g->current_step);
    rc |= set_int(st, "highestStep", g->highest_step);
    rc |= set_float(st, "trainingTimeSec", g->training_s);
    rc |= set_float(st, "lostWorkTimeSec", g->lost_s);
    rc |= set_float(st, "rescheduleTimeSec", g->reschedule_s);
    rc |= set_float(st, "resumeTimeSec", g->resume_s);
    rc |= set_float(st, "checkpointSaveTimeSec", g->save_s);
    rc |= set_int(st, "interruptionCount", g->interruptions);
    rc |= set_int(st, "lastCheckpointStep", g->last_ckpt_step);
    rc |= set_time(st, "lastCheckpointTime", g->last_ckpt_ns);
    rc |= set_time(st, "lastStepTimestamp", g->last_step_ns);
    rc |= set_float(st, "avgStepTimeSec", gr_measure_goodput_avg_step(g));
    int64_t li = gr_measure_goodput_log_interval(g);
    rc |= set_int(st, "logInterval", li > 0 ? li : -1);
    rc |= set_int(st, "warmupBaseStep", g->warmup_base_step);
    rc |= set_float(st, "warmupTimeSec", g->warmup_s);
    rc |= set_float(st, "nonWarmupTimeSec", g->nonwarmup_s);
    rc |= set_int(st, "lastNonWarmupStep", g->last_nonwarmup_step);
    rc |= set_float(st, "avgTFLOPSPerGPU", gr_measure_goodput_avg_tflops(g));
    rc |= set_time(st, "applicationStartTime", g->app_start_ns);
    rc |= set_time(st, "applicationStopTime", g->app_stop_ns);
    if (g->pending_ns > 0) {
        json_t *p = json_object();
        rc |= set_time(p, "detectedTime", g->pending_ns);
        rc |= set_int(p, "lastStep", g->pending_step);
        rc |= set_int(p, "lastCheckpointStep", g->last_ckpt_step);
        rc |= json_object_set_new(st, "pendingInterruption", p);
    } else {
        json_object_del(st, "pendingInterruption");
    }
    json_t *a = json_object();
    rc |= set_time(a, "firstStepTime", g->first_step_ns);
    rc |= set_time(a, "runApplicationStartTime", g->run_app_start_ns);
    rc |= set_time(a, "checkpointSaveStartTime", g->save_start_ns);
    rc |= json_object_set_new(a, "runFirstStep", json_integer(g->run_first_step));
    rc |= json_object_set_new(a, "restoredStep", json_integer(g->restored_step));
    rc |= set_int(a, "observedInterval", g->observed_interval);
    rc |= set_int(a, "nonWarmupSteps", g->nonwarmup_steps);
    rc |= set_int(a, "stepTimeSamples", g->step_time_n);
    rc |= set_float(a, "stepTimeSumSec", g->step_time_sum);
    rc |= set_int(a, "tflopsSamples", g->tflops_n);
    rc |= set_float(a, "tflopsSum", g->tflops_sum);
    rc |= json_object_set_new(st, "accounting", a);
    return rc ? GR_ENOMEM : GR_OK;
}

static int64_t get_int(const json_t *o, const char *k, int64_t dflt)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? json_integer_value(v) : dflt;
}

static double get_float(const json_t *o, const char *k, double dflt)
{
    const char *s = json_string_value(json_object_get(o, k));
    if (!s) {
        return dflt;
    }
    char *end = NULL;
    double d = strtod(s, &end);
    return end != s && *end == '\0' && isfinite(d) ? d : dflt;
}

static int64_t get_time(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    int64_t ns = 0;
    if (!s || gr_time_parse_ns(s, &ns, NULL) != GR_OK) {
        return 0;
    }
    return ns;
}

int gr_measure_goodput_from_status(gr_measure_goodput *g, const json_t *st)
{
    if (!json_is_object(st)) {
        return GR_OK;
    }
    g->current_step = get_int(st, "currentStep", g->current_step);
    g->highest_step = get_int(st, "highestStep", g->highest_step);
    g->training_s = get_float(st, "trainingTimeSec", g->training_s);
    g->lost_s = get_float(st, "lostWorkTimeSec", g->lost_s);
    g->reschedule_s = get_float(st, "rescheduleTimeSec", g->reschedule_s);
    g->resume_s = get_float(st, "resumeTimeSec", g->resume_s);
    g->save_s = get_float(st, "checkpointSaveTimeSec", g->save_s);
    g->interruptions = get_int(st, "interruptionCount", g->interruptions);
    g->last_ckpt_step = get_int(st, "lastCheckpointStep", g->last_ckpt_step);
    g->last_ckpt_ns = get_time(st, "lastCheckpointTime");
    g->last_step_ns = get_time(st, "lastStepTimestamp");
    g->warmup_base_step = get_int(st, "warmupBaseStep", g->warmup_base_step);
    g->warmup_s = get_float(st, "warmupTimeSec", g->warmup_s);
    g->nonwarmup_s = get_float(st, "nonWarmupTimeSec", g->nonwarmup_s);
    g->last_nonwarmup_step = get_int(st, "lastNonWarmupStep", g->last_nonwarmup_step);
    g->app_start_ns = get_time(st, "applicationStartTime");
    g->app_stop_ns = get_time(st, "applicationStopTime");
    const json_t *p = json_object_get(st, "pendingInterruption");
    if (json_is_object(p)) {
        g->pending_ns = get_time(p, "detectedTime");
        g->pending_step = get_int(p, "lastStep", -1);
    }
    const json_t *a = json_object_get(st, "accounting");
    if (json_is_object(a)) {
        g->first_step_ns = get_time(a, "firstStepTime");
        g->run_app_start_ns = get_time(a, "runApplicationStartTime");
        g->save_start_ns = get_time(a, "checkpointSaveStartTime");
        g->run_first_step = get_int(a, "runFirstStep", -1);
        g->restored_step = get_int(a, "restoredStep", -1);
        g->observed_interval = get_int(a, "observedInterval", 0);
        g->nonwarmup_steps = get_int(a, "nonWarmupSteps", 0);
        g->step_time_n = get_int(a, "stepTimeSamples", 0);
        g->step_time_sum = get_float(a, "stepTimeSumSec", 0);
        g->tflops_n = get_int(a, "tflopsSamples", 0);
        g->tflops_sum = get_float(a, "tflopsSum", 0);
    }
    return GR_OK;
}

static int cond_complete(const json_t *status)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(status, "conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *s = json_string_value(json_object_get(c, "status"));
        if (t && s && strcmp(t, "Complete") == 0 && strcmp(s, "True") == 0) {
            return 1;
        }
    }
    return 0;
}

void gr_measure_gm_view_from(const json_t *gm, gr_measure_gm_view *v)
{
    memset(v, 0, sizeof *v);
    v->avg_step_s = (double)NAN;
    v->sample_interval_ns = (int64_t)60 * 1000000000;
    if (!json_is_object(gm)) {
        return;
    }
    v->exists = 1;
    const char *si =
        json_string_value(json_object_get(json_object_get(gm, "spec"), "sampleInterval"));
    int64_t ns = 0;
    if (si && gr_duration_parse(si, &ns, NULL) == GR_OK && ns > 0) {
        v->sample_interval_ns = ns;
    }
    const json_t *st = json_object_get(gm, "status");
    v->complete = cond_complete(st);
    v->start_ns = get_time(st, "startTime");
    v->app_start_ns = get_time(st, "applicationStartTime");
    v->last_step_ns = get_time(st, "lastStepTimestamp");
    v->avg_step_s = get_float(st, "avgStepTimeSec", (double)NAN);
    v->log_interval = get_int(st, "logInterval", 0);
    v->last_checkpoint_step = get_int(st, "lastCheckpointStep", 0);
}

int gr_measure_gm_restart_patch(const json_t *gm, int64_t now_ns, json_t **out, gr_err *err)
{
    *out = NULL;
    const json_t *st = json_object_get(gm, "status");
    json_t *p = json_object();
    json_t *s = json_object();
    if (!p || !s) {
        json_decref(p);
        json_decref(s);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    json_object_set_new(p, "status", s);
    json_object_set_new(s, "lastStepTimestamp", json_null());
    json_object_set_new(s, "avgStepTimeSec", json_null());
    json_object_set_new(s, "applicationStartTime", json_null());
    set_time(s, "startTime", now_ns);
    if (!json_is_object(json_object_get(st, "pendingInterruption"))) {
        json_t *pi = json_object();
        set_time(pi, "detectedTime", now_ns);
        set_int(pi, "lastStep", get_int(st, "highestStep", -1));
        set_int(pi, "lastCheckpointStep", get_int(st, "lastCheckpointStep", -1));
        json_object_set_new(s, "pendingInterruption", pi);
        /* the next step starts a new run */
        json_object_set_new(s, "accounting", json_pack("{s:I}", "runFirstStep", (json_int_t)-1));
    }
    *out = p;
    return GR_OK;
}
