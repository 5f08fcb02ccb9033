/*
 * gr_measure_log.c — incremental reading of pod logs: kubelet timestamp
 * prefixes, partial lines, sinceTime and the lines to skip at it. See
 * gr_measure.h.
 */
#include <stdlib.h>
#include <string.h>

#include "gr_measure.h"
#include "gr_time.h"

void gr_measure_reader_init(gr_measure_reader *r)
{
    memset(r, 0, sizeof *r);
}

void gr_measure_reader_free(gr_measure_reader *r)
{
    free(r->part);
    r->part = NULL;
    r->part_len = r->part_cap = 0;
}

void gr_measure_reader_begin_poll(gr_measure_reader *r)
{
    r->skip_left = r->seen_at_since;
    r->part_len = 0;
    r->part_cut = 0;
}

/* Split "2026-01-05T10:00:00.123456789Z rest" into its time and the rest.
 * Returns 1 with *ts and *off set when the prefix is a valid time. */
static int kubelet_prefix(const char *line, size_t len, int64_t *ts, size_t *off)
{
    /* RFC 3339 is 20..35 bytes; look for the first space within 40 */
    if (len < 21 || line[4] != '-' || line[10] != 'T') {
        return 0;
    }
    const char *sp = memchr(line, ' ', len < 40 ? len : 40);
    if (!sp) {
        return 0;
    }
    struct timespec t;
    if (gr_time_parse_n(line, (size_t)(sp - line), &t, NULL) != GR_OK ||
        gr_time_to_ns(&t, ts) != GR_OK) {
        return 0;
    }
    *off = (size_t)(sp - line) + 1;
    return 1;
}

static int deliver(gr_measure_reader *r, const char *line, size_t len, int timestamps,
                   gr_measure_line_fn fn, void *ctx)
{
    if (len > 0 && line[len - 1] == '\r') {
        len--;
    }
    r->lines++;
    int64_t ts = 0;
    size_t off = 0;
    if (timestamps && kubelet_prefix(line, len, &ts, &off)) {
        if (ts < r->since_ns) {
            return 0;
        }
        if (ts == r->since_ns) {
            if (r->skip_left > 0) {
                r->skip_left--;
                return 0;
            }
            r->seen_at_since++;
        } else {
            r->since_ns = ts;
            r->seen_at_since = 1;
            r->skip_left = 0;
        }
    }
    return fn(ctx, line + off, len - off, ts);
}

static int part_append(gr_measure_reader *r, const char *data, size_t n)
{
    if (r->part_len + n > GR_MEASURE_LINE_MAX) {
        n = GR_MEASURE_LINE_MAX - r->part_len; /* drop the rest of the line */
        if (!r->part_cut) {
            r->lines_cut++;
            r->part_cut = 1;
        }
        if (n == 0) {
            return 0;
        }
    }
    if (r->part_len + n > r->part_cap) {
        size_t cap = r->part_cap ? r->part_cap : 256;
        while (cap < r->part_len + n) {
            cap *= 2;
        }
        if (cap > GR_MEASURE_LINE_MAX) {
            cap = GR_MEASURE_LINE_MAX;
        }
        char *p = realloc(r->part, cap);
        if (!p) {
            return GR_ENOMEM;
        }
        r->part = p;
        r->part_cap = cap;
    }
    memcpy(r->part + r->part_len, data, n);
    r->part_len += n;
    return 0;
}

int gr_measure_reader_feed(gr_measure_reader *r, const char *data, size_t len, int timestamps,
                           gr_measure_line_fn fn, void *ctx)
{
    r->bytes += len;
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(data + i, '\n', len - i);
        if (!nl) {
            return part_append(r, data + i, len - i);
        }
        size_t n = (size_t)(nl - (data + i));
        int rc;
        if (r->part_len > 0) {
            rc = part_append(r, data + i, n);
            if (rc == 0) {
                rc = deliver(r, r->part, r->part_len, timestamps, fn, ctx);
            }
            r->part_len = 0;
            r->part_cut = 0;
        } else if (n > GR_MEASURE_LINE_MAX) {
            r->lines_cut++;
            rc = deliver(r, data + i, GR_MEASURE_LINE_MAX, timestamps, fn, ctx);
        } else {
            rc = deliver(r, data + i, n, timestamps, fn, ctx);
        }
        if (rc < 0) {
            return rc;
        }
        i += n + 1;
    }
    return 0;
}

int gr_measure_reader_end_poll(gr_measure_reader *r, int final, int timestamps,
                               gr_measure_line_fn fn, void *ctx)
{
    int rc = 0;
    if (final && r->part_len > 0) {
        rc = deliver(r, r->part, r->part_len, timestamps, fn, ctx);
    }
    r->part_len = 0;
    r->part_cut = 0;
    return rc < 0 ? rc : 0;
}

void gr_measure_reader_since(const gr_measure_reader *r, int64_t now_ns, char buf[40])
{
    buf[0] = '\0';
    if (r->since_ns <= 0) {
        return;
    }
    int64_t s = r->since_ns;
    if (now_ns > GR_MEASURE_LOOKBACK_NS && s < now_ns - GR_MEASURE_LOOKBACK_NS) {
        s = now_ns - GR_MEASURE_LOOKBACK_NS;
    }
    s -= ((s % 1000000000) + 1000000000) % 1000000000; /* floor to the second */
    char tmp[GR_TIME_STR_MAX];
    if (gr_time_format_ns(s, tmp) == GR_OK) {
        memcpy(buf, tmp, strlen(tmp) + 1 < 40 ? strlen(tmp) + 1 : 40);
        buf[39] = '\0';
    }
}
