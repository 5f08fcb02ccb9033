/*
 * gr_measure_profile.c — a LogProfile spec compiled for line matching.
 * See gr_measure.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_measure.h"

/* jansson's iteration takes json_t *; reading does not modify. */
static json_t *mut(const json_t *v)
{
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = v};
    return u.m;
}

enum cap {
    C_TIMESTAMP = 0,
    C_STEP,
    C_STEP_TIME,
    C_SAVE_TIME,
    C_TFLOPS,
    C_SIZE,
    C_ALGBW,
    C_BUSBW,
    C_IP_ALGBW,
    C_IP_BUSBW,
    C_COUNT,
};

static const char *const CAP_NAMES[C_COUNT] = {"timestamp", "step",   "stepTime", "saveTime",
                                               "tflops",    "size",   "algbw",    "busbw",
                                               "ipAlgbw",   "ipBusbw"};

static const char *const KIND_NAMES[GR_MEASURE_KINDS] = {
    "trainingStep",     "checkpointSave",   "checkpointDone", "checkpointRestore",
    "checkpointLoaded", "applicationStart", "warmupStep",     "bandwidthResult"};

typedef struct pat {
    gr_measure_re *re;
    int group[C_COUNT];    /* group index or -1 */
    double scale[C_COUNT]; /* unit → seconds for duration captures */
} pat;

struct gr_measure_profile {
    pat pats[GR_MEASURE_KINDS];
    char layout[129];
    gr_measure_strategy strategy;
    int64_t warmup_steps, log_interval;
    char container[64];
    gr_measure_match m;
};

const char *gr_measure_kind_name(gr_measure_kind k)
{
    return (unsigned)k < GR_MEASURE_KINDS ? KIND_NAMES[k] : "";
}

void gr_measure_profile_free(gr_measure_profile *p)
{
    if (!p) {
        return;
    }
    for (int k = 0; k < GR_MEASURE_KINDS; k++) {
        gr_measure_re_free(p->pats[k].re);
    }
    free(p);
}

static int get_str(const json_t *obj, const char *key, const char **out, const char *field,
                   size_t max, gr_err *err)
{
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v) {
        return GR_OK;
    }
    if (!json_is_string(v)) {
        return gr_err_set(err, GR_EINVAL, "%s.%s: must be a string", field, key);
    }
    if (json_string_length(v) > max) {
        return gr_err_set(err, GR_EINVAL, "%s.%s: at most %zu bytes", field, key, max);
    }
    *out = json_string_value(v);
    return GR_OK;
}

static int get_int(const json_t *obj, const char *key, int64_t *out, const char *field, gr_err *err)
{
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        return GR_OK;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        return gr_err_set(err, GR_EINVAL, "%s.%s: must be a non-negative integer", field, key);
    }
    *out = json_integer_value(v);
    return GR_OK;
}

static int load_pattern(pat *pt, gr_measure_kind k, const json_t *spec, gr_err *err)
{
    char field[96];
    snprintf(field, sizeof field, "spec.patterns.%s", KIND_NAMES[k]);
    if (!json_is_object(spec)) {
        return gr_err_set(err, GR_EINVAL, "%s: must be an object with a regex", field);
    }
    const char *rx = NULL;
    int rc = get_str(spec, "regex", &rx, field, GR_MEASURE_REGEX_MAX, err);
    if (rc != GR_OK) {
        return rc;
    }
    if (!rx || !*rx) {
        return gr_err_set(err, GR_EINVAL,
                          "%s.regex: required; write a Go RE2 regex with named "
                          "groups, e.g. 'step (?P<step>\\d+)'",
                          field);
    }
    rc = gr_measure_re_compile(rx, strlen(rx), &pt->re, err);
    if (rc != GR_OK) {
        return gr_err_prefix(err, "%s.regex: ", field);
    }
    for (int c = 0; c < C_COUNT; c++) {
        pt->group[c] = gr_measure_re_group(pt->re, CAP_NAMES[c]);
        pt->scale[c] = 1.0;
    }
    if (k == GR_MEASURE_TRAINING_STEP && pt->group[C_STEP] < 0) {
        return gr_err_set(err, GR_EINVAL, "%s.regex: needs a named group step, e.g. (?P<step>\\d+)",
                          field);
    }
    if (k == GR_MEASURE_BANDWIDTH_RESULT &&
        (pt->group[C_SIZE] < 0 || (pt->group[C_BUSBW] < 0 && pt->group[C_IP_BUSBW] < 0))) {
        return gr_err_set(err, GR_EINVAL,
                          "%s.regex: needs named groups size and busbw (and algbw), e.g. "
                          "(?P<size>\\d+) … (?P<algbw>[0-9.]+)\\s+(?P<busbw>[0-9.]+)",
                          field);
    }
    const json_t *units = json_object_get(spec, "units");
    if (units && !json_is_object(units)) {
        return gr_err_set(err, GR_EINVAL, "%s.units: must be an object of capture → s|ms|us",
                          field);
    }
    const char *key;
    const json_t *u;
    json_object_foreach(mut(units), key, u)
    {
        const char *s = json_string_value(u);
        double scale = 0;
        if (s && strcmp(s, "s") == 0) {
            scale = 1.0;
        } else if (s && strcmp(s, "ms") == 0) {
            scale = 1e-3;
        } else if (s && strcmp(s, "us") == 0) {
            scale = 1e-6;
        } else {
            return gr_err_set(err, GR_EINVAL, "%s.units.%s: unsupported unit; use s, ms or us",
                              field, key);
        }
        int found = 0;
        for (int c = 0; c < C_COUNT; c++) {
            if (strcmp(CAP_NAMES[c], key) == 0) {
                pt->scale[c] = scale;
                found = 1;
            }
        }
        if (!found || gr_measure_re_group(pt->re, key) < 0) {
            return gr_err_set(err, GR_EINVAL,
                              "%s.units.%s: the regex has no capture %s that takes a unit "
                              "(stepTime, saveTime)",
                              field, key, key);
        }
    }
    /* the example, when given, must match (the CRD checks it with RE2 too) */
    const char *ex = NULL;
    rc = get_str(spec, "example", &ex, field, 4096, err);
    if (rc != GR_OK) {
        return rc;
    }
    if (ex && gr_measure_re_match(pt->re, ex, strlen(ex), NULL) != 1) {
        return gr_err_set(err, GR_EINVAL, "%s: example must match regex", field);
    }
    return GR_OK;
}

int gr_measure_profile_new(const json_t *spec, gr_measure_profile **out, gr_err *err)
{
    *out = NULL;
    if (!json_is_object(spec)) {
        return gr_err_set(err, GR_EINVAL, "spec: must be an object");
    }
    gr_measure_profile *p = calloc(1, sizeof *p);
    if (!p) {
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    int rc = GR_OK;
    const json_t *ts = json_object_get(spec, "timestamp");
    const char *layout = NULL;
    if (ts) {
        rc = get_str(ts, "layout", &layout, "spec.timestamp", 128, err);
        if (rc == GR_OK && layout) {
            rc = gr_measure_gotime_check(layout, err);
            if (rc != GR_OK) {
                gr_err_prefix(err, "spec.timestamp.layout: ");
            }
        }
        if (rc != GR_OK) {
            goto fail;
        }
        snprintf(p->layout, sizeof p->layout, "%s", layout ? layout : "");
    }
    const json_t *pats = json_object_get(spec, "patterns");
    if (!json_is_object(pats) || json_object_size(pats) == 0) {
        rc = gr_err_set(err, GR_EINVAL,
                        "spec.patterns: required; give at least trainingStep or "
                        "bandwidthResult");
        goto fail;
    }
    for (int k = 0; k < GR_MEASURE_KINDS; k++) {
        const json_t *ps = json_object_get(pats, KIND_NAMES[k]);
        if (ps) {
            rc = load_pattern(&p->pats[k], (gr_measure_kind)k, ps, err);
            if (rc != GR_OK) {
                goto fail;
            }
        }
    }
    const char *key;
    const json_t *val;
    json_object_foreach(mut(pats), key, val)
    {
        int known = 0;
        for (int k = 0; k < GR_MEASURE_KINDS; k++) {
            known |= strcmp(key, KIND_NAMES[k]) == 0;
        }
        if (!known) {
            rc = gr_err_set(err, GR_EINVAL,
                            "spec.patterns.%s: unknown pattern; known: trainingStep, "
                            "checkpointSave, checkpointDone, checkpointRestore, checkpointLoaded, "
                            "applicationStart, warmupStep, bandwidthResult",
                            key);
            goto fail;
        }
    }
    snprintf(p->strategy.replicated_job, sizeof p->strategy.replicated_job, "trainer");
    const json_t *ws = json_object_get(spec, "workerStrategy");
    if (ws) {
        const char *s = NULL;
        if ((rc = get_str(ws, "type", &s, "spec.workerStrategy", 16, err)) != GR_OK) {
            goto fail;
        }
        if (s && strcmp(s, "Single") != 0 && strcmp(s, "Multi") != 0) {
            rc = gr_err_set(err, GR_EINVAL, "spec.workerStrategy.type: use Single or Multi");
            goto fail;
        }
        p->strategy.multi = s && strcmp(s, "Multi") == 0;
        static const char *const pods[2] = {"lifecyclePod", "trainingStepPod"};
        for (int i = 0; i < 2; i++) {
            if ((rc = get_str(ws, pods[i], &s, "spec.workerStrategy", 16, err)) != GR_OK) {
                goto fail;
            }
            if (s && strcmp(s, "first") != 0 && strcmp(s, "last") != 0) {
                rc = gr_err_set(err, GR_EINVAL, "spec.workerStrategy.%s: use first or last",
                                pods[i]);
                goto fail;
            }
            int last = s && strcmp(s, "last") == 0;
            if (i == 0) {
                p->strategy.lifecycle_last = last;
            } else {
                p->strategy.step_last = last;
            }
        }
        if ((rc = get_str(ws, "replicatedJobName", &s, "spec.workerStrategy", 63, err)) != GR_OK) {
            goto fail;
        }
        if (s && *s) {
            snprintf(p->strategy.replicated_job, sizeof p->strategy.replicated_job, "%s", s);
        }
    }
    const char *cn = NULL;
    if ((rc = get_str(spec, "containerName", &cn, "spec", 63, err)) != GR_OK) {
        goto fail;
    }
    snprintf(p->container, sizeof p->container, "%s", cn ? cn : "");
    if ((rc = get_int(spec, "warmupSteps", &p->warmup_steps, "spec", err)) != GR_OK ||
        (rc = get_int(spec, "logInterval", &p->log_interval, "spec", err)) != GR_OK) {
        goto fail;
    }
    *out = p;
    return GR_OK;
fail:
    gr_measure_profile_free(p);
    return rc;
}

const gr_measure_strategy *gr_measure_profile_strategy(const gr_measure_profile *p)
{
    return &p->strategy;
}

int64_t gr_measure_profile_warmup_steps(const gr_measure_profile *p)
{
    return p->warmup_steps;
}

int64_t gr_measure_profile_log_interval(const gr_measure_profile *p)
{
    return p->log_interval;
}

const char *gr_measure_profile_container(const gr_measure_profile *p)
{
    return p->container;
}

int gr_measure_profile_has(const gr_measure_profile *p, gr_measure_kind k)
{
    return (unsigned)k < GR_MEASURE_KINDS && p->pats[k].re != NULL;
}

long gr_measure_profile_pick_pod(const gr_measure_profile *p, gr_measure_kind what, size_t n)
{
    if (n == 0) {
        return -1;
    }
    if (!p->strategy.multi) {
        return 0;
    }
    int last =
        what == GR_MEASURE_TRAINING_STEP ? p->strategy.step_last : p->strategy.lifecycle_last;
    return last ? (long)(n - 1) : 0;
}

/* Parse a decimal number capture (digits, '.', exponent; commas as thousands
 * separators are dropped). */
static int cap_double(const char *s, size_t len, double *out)
{
    /* fast path: [0-9]+(.[0-9]{1,9})? (what logs print); else strtod */
    if (len > 0 && len < 19) {
        uint64_t ip = 0, fp = 0, scale = 1;
        size_t i = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            ip = ip * 10 + (uint64_t)(s[i++] - '0');
        }
        int ok = i > 0;
        if (ok && i < len && s[i] == '.') {
            i++;
            size_t f0 = i;
            while (i < len && s[i] >= '0' && s[i] <= '9' && i - f0 < 9) {
                fp = fp * 10 + (uint64_t)(s[i++] - '0');
                scale *= 10;
            }
            ok = i > f0;
        }
        if (ok && i == len) {
            *out = (double)ip + (double)fp / (double)scale;
            return 0;
        }
    }
    char buf[64];
    size_t j = 0;
    for (size_t i = 0; i < len && j + 1 < sizeof buf; i++) {
        if (s[i] != ',') {
            buf[j++] = s[i];
        }
    }
    if (j == 0 || j + 1 >= sizeof buf) {
        return -1;
    }
    buf[j] = '\0';
    char *end = NULL;
    errno = 0;
    double d = strtod(buf, &end);
    if (end == buf || *end != '\0' || errno == ERANGE || !isfinite(d)) {
        return -1;
    }
    *out = d;
    return 0;
}

static int cap_int(const char *s, size_t len, int64_t *out)
{
    int64_t v = 0;
    size_t i = 0;
    if (len == 0) {
        return -1;
    }
    for (; i < len; i++) {
        if (s[i] == ',') {
            continue;
        }
        if (s[i] < '0' || s[i] > '9' || v > (INT64_MAX - 9) / 10) {
            return -1;
        }
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int gr_measure_profile_parse_line(gr_measure_profile *p, const char *line, size_t len,
                                  int64_t kubelet_ts_ns, gr_measure_event *ev, gr_err *err)
{
    for (int k = 0; k < GR_MEASURE_KINDS; k++) {
        pat *pt = &p->pats[k];
        if (!pt->re) {
            continue;
        }
        int rc = gr_measure_re_match(pt->re, line, len, &p->m);
        if (rc < 0) {
            return gr_err_set(err, rc, "spec.patterns.%s: matching failed", KIND_NAMES[k]);
        }
        if (rc == 0) {
            continue;
        }
        ev->kind = (gr_measure_kind)k;
        ev->ts_ns = kubelet_ts_ns;
        ev->step = -1;
        ev->size_bytes = -1;
        ev->step_time_s = ev->save_time_s = ev->tflops = (double)NAN;
        ev->algbw = ev->busbw = ev->ip_algbw = ev->ip_busbw = (double)NAN;
        for (int c = 0; c < C_COUNT; c++) {
            int g = pt->group[c];
            if (g < 0 || (size_t)g >= p->m.ngroups || p->m.start[g] == SIZE_MAX) {
                continue;
            }
            const char *s = line + p->m.start[g];
            size_t n = p->m.end[g] - p->m.start[g];
            int bad = 0;
            double d = (double)NAN;
            switch (c) {
            case C_TIMESTAMP:
                if (p->layout[0]) {
                    gr_err terr;
                    int64_t ns = 0;
                    if (gr_measure_gotime_parse(p->layout, s, n, kubelet_ts_ns, &ns, &terr) !=
                        GR_OK) {
                        return gr_err_set(err, GR_EPARSE, "spec.patterns.%s: capture timestamp: %s",
                                          KIND_NAMES[k], terr.msg);
                    }
                    ev->ts_ns = ns;
                }
                break;
            case C_STEP:
                bad = cap_int(s, n, &ev->step);
                break;
            case C_SIZE:
                bad = cap_int(s, n, &ev->size_bytes);
                break;
            default:
                bad = cap_double(s, n, &d);
                if (!bad) {
                    d *= pt->scale[c];
                    double *dst[C_COUNT] = {
                        NULL, NULL,       &ev->step_time_s, &ev->save_time_s, &ev->tflops,
                        NULL, &ev->algbw, &ev->busbw,       &ev->ip_algbw,    &ev->ip_busbw};
                    *dst[c] = d;
                }
                break;
            }
            if (bad) {
                return gr_err_set(err, GR_EPARSE,
                                  "spec.patterns.%s: capture %s: \"%.*s\" is not a number",
                                  KIND_NAMES[k], CAP_NAMES[c], (int)(n > 32 ? 32 : n), s);
            }
        }
        return 1;
    }
    return 0;
}
