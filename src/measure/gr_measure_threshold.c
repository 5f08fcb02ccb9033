/*
 * gr_measure_threshold.c — performance thresholds as CEL over `value`
 * (fact sheet §3.9). See gr_measure.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_buf.h"
#include "gr_cel.h"
#include "gr_duration.h"
#include "gr_measure.h"
#include "gr_time.h"

/* jansson's iteration takes json_t *; reading does not modify. */
static json_t *mut(const json_t *v)
{
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = v};
    return u.m;
}

#define DEFAULT_TIMEOUT_NS ((int64_t)5 * 60 * 1000000000)
#define MAX_KEYS           64

static int complete(const json_t *obj)
{
    const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
    size_t i;
    const json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *s = json_string_value(json_object_get(c, "status"));
        if (t && s && strcmp(t, "Complete") == 0 && strcmp(s, "True") == 0) {
            return 1;
        }
    }
    return 0;
}

static double num(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    if (!s) {
        return (double)NAN;
    }
    char *end = NULL;
    double d = strtod(s, &end);
    return end != s && *end == '\0' && isfinite(d) ? d : (double)NAN;
}

void gr_measure_values_from(const json_t *gm, const json_t *bm, gr_measure_values *v)
{
    v->bm_final = bm && complete(bm);
    v->gm_final = gm && complete(gm);
    v->bus_bw = v->alg_bw = v->goodput = v->avg_tflops = v->avg_step = (double)NAN;
    if (v->bm_final) {
        gr_measure_bw b;
        gr_measure_bw_from_status(&b, json_object_get(bm, "status"));
        v->bus_bw = gr_measure_bw_max_bus(&b);
        v->alg_bw = gr_measure_bw_max_alg(&b);
    }
    if (v->gm_final) {
        const json_t *st = json_object_get(gm, "status");
        v->goodput = num(st, "result");
        v->avg_tflops = num(st, "avgTFLOPSPerGPU");
        v->avg_step = num(st, "avgStepTimeSec");
    }
}

/* The value of a key: 1 available, 0 missing, -1 unknown key. */
static int lookup(const gr_measure_values *v, const char *key, double *out)
{
    struct {
        const char *key;
        int final;
        double val;
        int gm;
    } t[] = {
        {GR_MEASURE_KEY_ALG_BW, v->bm_final, v->alg_bw, 0},
        {GR_MEASURE_KEY_AVG_STEP, v->gm_final, v->avg_step, 1},
        {GR_MEASURE_KEY_AVG_TFLOPS, v->gm_final, v->avg_tflops, 1},
        {GR_MEASURE_KEY_BUS_BW, v->bm_final, v->bus_bw, 0},
        {GR_MEASURE_KEY_GOODPUT, v->gm_final, v->goodput, 1},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (strcmp(t[i].key, key) == 0) {
            if (!t[i].final || !isfinite(t[i].val) || (t[i].gm && t[i].val <= 0)) {
                return 0;
            }
            *out = t[i].val;
            return 1;
        }
    }
    return -1;
}

/* Go's %q of a string (ASCII subset: quotes, backslashes, control bytes). */
static void go_quote(const char *s, char *out, size_t cap)
{
    size_t j = 0;
    if (cap < 3) {
        out[0] = '\0';
        return;
    }
    out[j++] = '"';
    for (; *s && j + 6 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            out[j++] = '\\';
            out[j++] = (char)c;
        } else if (c == '\n') {
            out[j++] = '\\';
            out[j++] = 'n';
        } else if (c == '\t') {
            out[j++] = '\\';
            out[j++] = 't';
        } else if (c < 0x20 || c == 0x7f) {
            j += (size_t)snprintf(out + j, cap - j, "\\x%02x", c);
        } else {
            out[j++] = (char)c;
        }
    }
    out[j++] = '"';
    out[j] = '\0';
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void set_fail(gr_measure_result *r, const char *reason, const char *key)
{
    r->verdict = GR_MEASURE_FAIL;
    r->reason = reason;
    snprintf(r->key, sizeof r->key, "%s", key);
}

int gr_measure_threshold_eval(const json_t *thresholds, const gr_measure_values *v,
                              int64_t succeeded_ns, int64_t timeout_ns, int64_t now_ns,
                              gr_measure_result *out, gr_err *err)
{
    memset(out, 0, sizeof *out);
    out->verdict = GR_MEASURE_PASS;
    out->reason = GR_MEASURE_REASON_MET;
    snprintf(out->message, sizeof out->message, "%s", GR_MEASURE_MSG_MET);
    if (!thresholds || json_object_size(thresholds) == 0) {
        return GR_OK;
    }
    if (!json_is_object(thresholds)) {
        return gr_err_set(err, GR_EINVAL, "spec.thresholds: must be a map of key to expression");
    }
    if (timeout_ns <= 0) {
        timeout_ns = DEFAULT_TIMEOUT_NS;
    }
    const char *keys[MAX_KEYS];
    size_t nk = 0;
    const char *key;
    const json_t *val;
    json_object_foreach(mut(thresholds), key, val)
    {
        if (nk == MAX_KEYS) {
            return gr_err_set(err, GR_ETOOBIG, "spec.thresholds: at most %d keys", MAX_KEYS);
        }
        keys[nk++] = key;
    }
    qsort(keys, nk, sizeof keys[0], cmp_str);
    char missing[512] = "";
    size_t nmissing = 0;
    char q[160];
    for (size_t i = 0; i < nk; i++) {
        const char *k = keys[i];
        const char *expr = json_string_value(json_object_get(thresholds, k));
        double value = 0;
        go_quote(k, q, sizeof q);
        int have = lookup(v, k, &value);
        if (have < 0) {
            set_fail(out, GR_MEASURE_REASON_UNKNOWN, k);
            snprintf(out->message, sizeof out->message, "Unknown threshold key %s", q);
            return GR_OK;
        }
        static const gr_cel_decl decls[] = {{"value", GR_CEL_DOUBLE}};
        gr_cel_program *prog = NULL;
        gr_err cerr;
        gr_err_clear(&cerr);
        int rc = expr ? gr_cel_compile(expr, strlen(expr), decls, 1, NULL, &prog, NULL, &cerr)
                      : gr_err_set(&cerr, GR_EINVAL, "expression must be a string");
        if (rc != GR_OK) {
            if (rc == GR_ENOMEM) {
                return gr_err_set(err, rc, "out of memory");
            }
            set_fail(out, GR_MEASURE_REASON_INVALID, k);
            snprintf(out->message, sizeof out->message, "Threshold %s: %s", q, cerr.msg);
            return GR_OK;
        }
        if (have == 0) {
            gr_cel_program_free(prog);
            size_t used = strlen(missing);
            snprintf(missing + used, sizeof missing - used, "%s%s", nmissing ? " " : "", k);
            nmissing++;
            continue;
        }
        gr_cel_val var = gr_cel_val_double(value), res;
        memset(&res, 0, sizeof res);
        rc = gr_cel_eval(prog, &var, &res, NULL, &cerr);
        gr_cel_program_free(prog);
        if (rc == GR_ENOMEM) {
            return gr_err_set(err, rc, "out of memory");
        }
        if (rc == GR_OK && res.kind != GR_CEL_BOOL) {
            rc = gr_err_set(&cerr, GR_EINVAL, "expression must evaluate to bool, got %s",
                            gr_cel_val_type_name(&res));
        }
        int ok = rc == GR_OK && res.u.b;
        gr_cel_val_release(&res);
        if (rc != GR_OK) {
            set_fail(out, GR_MEASURE_REASON_INVALID, k);
            snprintf(out->message, sizeof out->message, "Threshold %s: %s", q, cerr.msg);
            return GR_OK;
        }
        if (!ok) {
            set_fail(out, GR_MEASURE_REASON_VIOLATED, k);
            snprintf(out->message, sizeof out->message,
                     "Threshold %s violated: measured %.4f, expression: %s", q, value, expr);
            return GR_OK;
        }
    }
    if (nmissing > 0) {
        if (succeeded_ns > 0 && gr_ns_sub_sat(now_ns, succeeded_ns) > timeout_ns) {
            char d[GR_DURATION_STR_MAX];
            out->verdict = GR_MEASURE_FAIL;
            out->reason = GR_MEASURE_REASON_TIMEOUT;
            snprintf(out->message, sizeof out->message,
                     "Measurement data not available within %s for keys: [%s]",
                     gr_duration_format(timeout_ns, d), missing);
        } else {
            out->verdict = GR_MEASURE_PENDING;
            out->reason = NULL;
            out->message[0] = '\0';
        }
    }
    return GR_OK;
}
