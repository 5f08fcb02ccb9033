/*
 * gr_measure_bw.c — NCCL-tests rows → per message size running averages,
 * wrapped rows, and the BandwidthMeasurement status. See gr_measure.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gr_measure.h"

void gr_measure_bw_init(gr_measure_bw *b)
{
    memset(b, 0, sizeof *b);
}

void gr_measure_bw_add(gr_measure_bw *b, const gr_measure_event *ev)
{
    if (ev->kind != GR_MEASURE_BANDWIDTH_RESULT || ev->size_bytes < 0) {
        return;
    }
    double alg = b->in_place ? ev->ip_algbw : ev->algbw;
    double bus = b->in_place ? ev->ip_busbw : ev->busbw;
    if (!isfinite(bus)) { /* the other half when this one is absent */
        alg = b->in_place ? ev->algbw : ev->ip_algbw;
        bus = b->in_place ? ev->busbw : ev->ip_busbw;
    }
    if (!isfinite(bus) || bus < 0) {
        return;
    }
    if (!isfinite(alg) || alg < 0) {
        alg = 0;
    }
    /* sorted insert (binary search) */
    size_t lo = 0, hi = b->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->sizes[mid].size_bytes < ev->size_bytes) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == b->n || b->sizes[lo].size_bytes != ev->size_bytes) {
        if (b->n == GR_MEASURE_BW_SIZES_MAX) {
            b->dropped++;
            return;
        }
        memmove(&b->sizes[lo + 1], &b->sizes[lo], (b->n - lo) * sizeof b->sizes[0]);
        memset(&b->sizes[lo], 0, sizeof b->sizes[0]);
        b->sizes[lo].size_bytes = ev->size_bytes;
        b->n++;
    }
    b->sizes[lo].algbw_sum += alg;
    b->sizes[lo].busbw_sum += bus;
    b->sizes[lo].samples++;
}

double gr_measure_bw_avg_alg(const gr_measure_bw_size *s)
{
    return s->samples > 0 ? s->algbw_sum / (double)s->samples : (double)NAN;
}

double gr_measure_bw_avg_bus(const gr_measure_bw_size *s)
{
    return s->samples > 0 ? s->busbw_sum / (double)s->samples : (double)NAN;
}

static double max_of(const gr_measure_bw *b, int bus)
{
    double m = (double)NAN;
    for (size_t i = 0; i < b->n; i++) {
        double v = bus ? gr_measure_bw_avg_bus(&b->sizes[i]) : gr_measure_bw_avg_alg(&b->sizes[i]);
        if (isfinite(v) && (!isfinite(m) || v > m)) {
            m = v;
        }
    }
    return m;
}

double gr_measure_bw_max_bus(const gr_measure_bw *b)
{
    return max_of(b, 1);
}

double gr_measure_bw_max_alg(const gr_measure_bw *b)
{
    return max_of(b, 0);
}

int gr_measure_bw_to_status(const gr_measure_bw *b, json_t *status)
{
    json_t *arr = json_array();
    if (!arr) {
        return GR_ENOMEM;
    }
    int rc = 0;
    for (size_t i = 0; i < b->n; i++) {
        const gr_measure_bw_size *s = &b->sizes[i];
        char a[48], u[48];
        gr_measure_fmt_float(gr_measure_bw_avg_alg(s), a);
        gr_measure_fmt_float(gr_measure_bw_avg_bus(s), u);
        json_t *o = json_pack("{s:I,s:s,s:s,s:I}", "sizeBytes", (json_int_t)s->size_bytes, "algBW",
                              a, "busBW", u, "samples", (json_int_t)s->samples);
        rc |= json_array_append_new(arr, o);
    }
    rc |= json_object_set_new(status, "results", arr);
    return rc ? GR_ENOMEM : GR_OK;
}

int gr_measure_bw_from_status(gr_measure_bw *b, const json_t *status)
{
    gr_measure_bw_init(b);
    const json_t *arr = json_object_get(status, "results");
    size_t i;
    const json_t *o;
    json_array_foreach(arr, i, o)
    {
        int64_t size = json_integer_value(json_object_get(o, "sizeBytes"));
        int64_t n = json_integer_value(json_object_get(o, "samples"));
        const char *a = json_string_value(json_object_get(o, "algBW"));
        const char *u = json_string_value(json_object_get(o, "busBW"));
        if (size < 0 || n <= 0 || !a || !u) {
            continue;
        }
        gr_measure_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = GR_MEASURE_BANDWIDTH_RESULT;
        ev.size_bytes = size;
        ev.algbw = strtod(a, NULL);
        ev.busbw = strtod(u, NULL);
        ev.ip_algbw = ev.ip_busbw = (double)NAN;
        int in_place = b->in_place;
        b->in_place = 0;
        gr_measure_bw_add(b, &ev);
        b->in_place = in_place;
        /* restore the sample count: the sums are average × samples */
        for (size_t k = 0; k < b->n; k++) {
            if (b->sizes[k].size_bytes == size && b->sizes[k].samples == 1) {
                b->sizes[k].samples = n;
                b->sizes[k].algbw_sum = ev.algbw * (double)n;
                b->sizes[k].busbw_sum = ev.busbw * (double)n;
            }
        }
    }
    return GR_OK;
}

/* A candidate first half of a row: optional "[r,s]<stdout>:" tag, spaces,
 * then a digit. */
static int row_start(const char *s, size_t n)
{
    size_t i = 0;
    if (n > 0 && s[0] == '[') {
        const char *c = memchr(s, ':', n < 32 ? n : 32);
        if (c) {
            i = (size_t)(c - s) + 1;
        }
    }
    while (i < n && (s[i] == ' ' || s[i] == '\t')) {
        i++;
    }
    return i < n && s[i] >= '0' && s[i] <= '9';
}

int gr_measure_wrap_join(gr_measure_wrap *w, const char *line, size_t len, char *joined, size_t cap,
                         size_t *joined_len)
{
    if (!row_start(line, len)) {
        return 0; /* another rank's line in between: keep waiting */
    }
    int out = 0;
    if (w->prev_len > 0 && w->prev_len + 1 + len < cap) {
        memcpy(joined, w->prev, w->prev_len);
        joined[w->prev_len] = ' ';
        memcpy(joined + w->prev_len + 1, line, len);
        *joined_len = w->prev_len + 1 + len;
        joined[*joined_len] = '\0';
        out = 1;
    }
    /* this line may itself be the first half of the next row (when the
     * joined line does not match); the caller clears prev_len on a match */
    if (len < sizeof w->prev) {
        memcpy(w->prev, line, len);
        w->prev_len = len;
    } else {
        w->prev_len = 0;
    }
    return out;
}
