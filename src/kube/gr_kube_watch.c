/* gr_kube_watch.c — watch-stream decoder (pure), one watch request, backoff. */
#include "gr_kube_watch.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_kube_pb.h"
#include "kube_internal.h"

const char *gr_kube_event_type_name(gr_kube_event_type t)
{
    switch (t) {
    case GR_KUBE_EV_ADDED:
        return "ADDED";
    case GR_KUBE_EV_MODIFIED:
        return "MODIFIED";
    case GR_KUBE_EV_DELETED:
        return "DELETED";
    case GR_KUBE_EV_BOOKMARK:
        return "BOOKMARK";
    case GR_KUBE_EV_ERROR:
        return "ERROR";
    }
    return "UNKNOWN";
}

void gr_kube_watch_event_clear(gr_kube_watch_event *ev)
{
    if (!ev)
        return;
    json_decref(ev->object);
    ev->object = NULL;
    ev->type = 0;
}

/* ---- decoder ----------------------------------------------------------- */

struct gr_kube_watch_decoder {
    gr_buf buf;
    size_t max_event;
    size_t off;   /* bytes before off are consumed */
    size_t scan;  /* next byte to scan */
    size_t start; /* start of the current object (valid when depth > 0) */
    int depth;
    bool in_str, esc;
    int mode;   /* 1 JSON, 2 protobuf frames, 0 either (decided by the first byte) */
    int failed; /* sticky error code */
    char failmsg[256];
    uint64_t count;
    gr_kube_pb_cache *pbc; /* NULL: embedded JSON not shared */
};

int gr_kube_watch_decoder_new(size_t max_event, gr_kube_watch_decoder **out, gr_err *err)
{
    gr_kube_watch_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    d->max_event = max_event ? max_event : GR_KUBE_WATCH_MAX_EVENT;
    d->mode = 1;
    /* pending (incomplete) data never exceeds max_event before next()
     * fails; one fed chunk may come on top of it */
    size_t cap = d->max_event * 2 + 4 * 1024 * 1024;
    gr_buf_init(&d->buf, cap < d->max_event ? (size_t)-1 / 2 : cap);
    *out = d;
    return GR_OK;
}

void gr_kube_watch_decoder_allow_protobuf(gr_kube_watch_decoder *d)
{
    if (d->count == 0 && d->buf.len == 0)
        d->mode = 0;
}

void gr_kube_watch_decoder_share_embedded(gr_kube_watch_decoder *d)
{
    if (!d->pbc)
        d->pbc = gr_kube_pb_cache_new(); /* NULL (out of memory): not shared */
}

void gr_kube_watch_decoder_free(gr_kube_watch_decoder *d)
{
    if (!d)
        return;
    gr_kube_pb_cache_free(d->pbc);
    gr_buf_free(&d->buf);
    free(d);
}

static int fail(gr_kube_watch_decoder *d, int code, gr_err *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(gr_kube_watch_decoder *d, int code, gr_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->failmsg, sizeof d->failmsg, fmt, ap);
    va_end(ap);
    d->failed = code;
    return gr_err_set(err, code, "watch stream: %s", d->failmsg);
}

static void compact(gr_kube_watch_decoder *d)
{
    if (d->off == 0)
        return;
    gr_buf_consume(&d->buf, d->off);
    d->scan -= d->off;
    d->start = d->start >= d->off ? d->start - d->off : 0;
    d->off = 0;
}

int gr_kube_watch_decoder_feed(gr_kube_watch_decoder *d, const char *data, size_t len, gr_err *err)
{
    if (d->failed)
        return gr_err_set(err, d->failed, "watch stream: %s", d->failmsg);
    compact(d);
    if (d->buf.len > d->max_event)
        return fail(d, GR_ETOOBIG, err, "event %llu is larger than the %zu-byte limit",
                    (unsigned long long)d->count + 1, d->max_event);
    int rc = gr_buf_append(&d->buf, data, len);
    if (rc == GR_ETOOBIG)
        return fail(d, rc, err, "more than %zu bytes buffered", d->buf.max);
    if (rc != GR_OK)
        return gr_err_set(err, rc, "watch stream: out of memory");
    return GR_OK;
}

/* Takes doc ({"type": ..., "object": {...}}). */
static int decode_doc(gr_kube_watch_decoder *d, json_t *doc, gr_kube_watch_event *ev, gr_err *err)
{
    unsigned long long ord = (unsigned long long)d->count + 1;
    const char *type = json_string_value(json_object_get(doc, "type"));
    json_t *obj = json_object_get(doc, "object");
    gr_kube_event_type t = 0;
    if (type) {
        if (strcmp(type, "ADDED") == 0)
            t = GR_KUBE_EV_ADDED;
        else if (strcmp(type, "MODIFIED") == 0)
            t = GR_KUBE_EV_MODIFIED;
        else if (strcmp(type, "DELETED") == 0)
            t = GR_KUBE_EV_DELETED;
        else if (strcmp(type, "BOOKMARK") == 0)
            t = GR_KUBE_EV_BOOKMARK;
        else if (strcmp(type, "ERROR") == 0)
            t = GR_KUBE_EV_ERROR;
    }
    if (!t) {
        json_decref(doc);
        return fail(d, GR_EPARSE, err,
                    "event %llu: \"type\" must be ADDED, MODIFIED, DELETED, BOOKMARK or ERROR",
                    ord);
    }
    if (!json_is_object(obj)) {
        int rc =
            fail(d, GR_EPARSE, err, "event %llu (%s): \"object\" must be a JSON object", ord, type);
        json_decref(doc);
        return rc;
    }
    ev->type = t;
    ev->object = json_incref(obj);
    json_decref(doc);
    d->count++;
    return 1;
}

static int decode_one(gr_kube_watch_decoder *d, const char *p, size_t n, gr_kube_watch_event *ev,
                      gr_err *err)
{
    json_error_t je;
    json_t *doc = json_loadb(p, n, JSON_REJECT_DUPLICATES, &je);
    if (!doc)
        return fail(d, GR_EPARSE, err, "event %llu: malformed JSON at column %d: %s",
                    (unsigned long long)d->count + 1, je.column, je.text);
    return decode_doc(d, doc, ev, err);
}

/* A protobuf watch stream (application/vnd.kubernetes.protobuf;stream=watch):
 * 4-byte big-endian length, then a metav1.WatchEvent (gr_kube_pb.h). */
static int next_pb(gr_kube_watch_decoder *d, gr_kube_watch_event *ev, gr_err *err)
{
    size_t n = 0;
    gr_err e;
    int r = gr_kube_pb_frame(d->buf.data + d->off, d->buf.len - d->off, d->max_event, &n, &e);
    if (r < 0)
        return fail(d, r, err, "event %llu: %s", (unsigned long long)d->count + 1, e.msg);
    if (r == 0)
        return 0;
    json_t *doc = NULL;
    r = gr_kube_pb_decode_watch_event_cached(d->buf.data + d->off + 4, n, d->max_event, d->pbc,
                                             &doc, &e);
    d->off += 4 + n;
    d->scan = d->off;
    if (r != GR_OK)
        return fail(d, r, err, "event %llu: %s", (unsigned long long)d->count + 1, e.msg);
    return decode_doc(d, doc, ev, err);
}

int gr_kube_watch_decoder_next(gr_kube_watch_decoder *d, gr_kube_watch_event *ev, gr_err *err)
{
    ev->type = 0;
    ev->object = NULL;
    if (d->failed)
        return gr_err_set(err, d->failed, "watch stream: %s", d->failmsg);
    const char *b = d->buf.data;
    size_t len = d->buf.len;
    if (d->mode == 0 && len > d->off) {
        /* JSON events start with '{' (or whitespace); a protobuf frame with
         * its length's high byte, which is below '{' for any frame under
         * 2 GiB, far over every cap. */
        unsigned char c0 = (unsigned char)b[d->off];
        d->mode = (c0 == '{' || c0 == ' ' || c0 == '\n' || c0 == '\r' || c0 == '\t') ? 1 : 2;
    }
    if (d->mode == 2)
        return next_pb(d, ev, err);
    for (size_t i = d->scan; i < len; i++) {
        char ch = b[i];
        if (d->depth == 0) {
            if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') {
                d->off = i + 1;
                continue;
            }
            if (ch != '{')
                return fail(d, GR_EPARSE, err, "event %llu: expected '{', got byte 0x%02x",
                            (unsigned long long)d->count + 1, (unsigned char)ch);
            d->start = i;
            d->depth = 1;
            d->in_str = d->esc = false;
            continue;
        }
        if (d->in_str) {
            if (d->esc)
                d->esc = false;
            else if (ch == '\\')
                d->esc = true;
            else if (ch == '"')
                d->in_str = false;
        } else if (ch == '"') {
            d->in_str = true;
        } else if (ch == '{' || ch == '[') {
            d->depth++;
        } else if (ch == '}' || ch == ']') {
            if (--d->depth == 0) {
                size_t s = d->start, n = i + 1 - s;
                d->scan = i + 1;
                d->off = i + 1;
                if (n > d->max_event)
                    return fail(d, GR_ETOOBIG, err, "event %llu is larger than the %zu-byte limit",
                                (unsigned long long)d->count + 1, d->max_event);
                return decode_one(d, b + s, n, ev, err);
            }
        }
        if (i - d->start >= d->max_event)
            return fail(d, GR_ETOOBIG, err, "event %llu is larger than the %zu-byte limit",
                        (unsigned long long)d->count + 1, d->max_event);
    }
    d->scan = len;
    return 0;
}

size_t gr_kube_watch_decoder_pending(const gr_kube_watch_decoder *d)
{
    return d->buf.len - d->off;
}

uint64_t gr_kube_watch_decoder_count(const gr_kube_watch_decoder *d)
{
    return d->count;
}

/* ---- one watch --------------------------------------------------------- */

typedef struct wctx {
    gr_kube_watch_decoder *dec;
    gr_kube_watch_fn fn;
    void *ctx;
    gr_kube_watch_stats *stats;
    gr_kube_status *st;
    int rc;
    gr_err err;
} wctx;

static int on_chunk(void *u, const char *data, size_t len)
{
    wctx *w = u;
    if (gr_kube_watch_decoder_feed(w->dec, data, len, &w->err) != GR_OK)
        return w->rc = w->err.code;
    for (;;) {
        gr_kube_watch_event ev;
        int r = gr_kube_watch_decoder_next(w->dec, &ev, &w->err);
        if (r < 0)
            return w->rc = r;
        if (r == 0)
            return 0;
        if (ev.type == GR_KUBE_EV_ERROR) {
            int code = gr_kube_status_from_json(0, ev.object, w->st);
            if (code == GR_OK)
                code = GR_EIO;
            gr_err_set(&w->err, code, "watch: server sent an ERROR event: %ld %s: %s",
                       w->st->http_code, w->st->reason_str, w->st->message);
            gr_kube_watch_event_clear(&ev);
            return w->rc = code;
        }
        const char *rv = gr_kube_meta_str(ev.object, "resourceVersion");
        w->stats->events++;
        if (ev.type == GR_KUBE_EV_BOOKMARK)
            w->stats->bookmarks++;
        int stop = w->fn ? w->fn(w->ctx, &ev) : 0;
        /* the event has been delivered: its version is now the resume point */
        if (rv && strlen(rv) < sizeof w->stats->last_rv)
            snprintf(w->stats->last_rv, sizeof w->stats->last_rv, "%s", rv);
        gr_kube_watch_event_clear(&ev);
        if (stop) {
            w->rc = stop < 0 ? stop : GR_ECANCELED;
            gr_err_set(&w->err, w->rc, "watch: stopped by the event handler");
            return w->rc;
        }
    }
}

int gr_kube_watch(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const gr_kube_opts *o,
                  long idle_s, gr_kube_watch_fn fn, void *ctx, gr_kube_watch_stats *stats,
                  gr_kube_status *st, gr_err *err)
{
    gr_kube_watch_stats lstats;
    gr_kube_status lst;
    if (!stats) {
        memset(&lstats, 0, sizeof lstats);
        stats = &lstats;
    }
    if (!st)
        st = &lst;
    gr_kube_status_clear(st);
    gr_kube_opts q = o ? *o : (gr_kube_opts){0};
    if (q.timeout_seconds <= 0)
        q.timeout_seconds = 300;
    if (idle_s <= 0)
        idle_s = q.timeout_seconds + 30;
    q.timeout_ms = (q.timeout_seconds + 60) * 1000LL;
    gr_buf p = GR_BUF_INIT(16 * 1024);
    gr_kube_opts pq = {0};
    pq.label_selector = q.label_selector;
    pq.field_selector = q.field_selector;
    pq.resource_version = q.resource_version;
    pq.timeout_seconds = q.timeout_seconds;
    pq.allow_bookmarks = q.allow_bookmarks;
    pq.send_initial_events = q.send_initial_events;
    pq.resource_version_match = q.send_initial_events ? q.resource_version_match : NULL;
    int rc = gr_kube_build_path(&p, gvr, ns, NULL, NULL, &pq, true, err);
    if (rc != GR_OK) {
        gr_buf_free(&p);
        return rc;
    }
    if (!q.accept && gr_kube_pb_enabled()) {
        char av[256];
        snprintf(av, sizeof av, "%s%s%s", gvr->group && *gvr->group ? gvr->group : "",
                 gvr->group && *gvr->group ? "/" : "", gvr->version ? gvr->version : "");
        if (gr_kube_pb_supports(av, gvr->resource))
            q.accept = GR_KUBE_PB_ACCEPT; /* the decoder takes either form */
    }
    wctx w = {0};
    w.fn = fn;
    w.ctx = ctx;
    w.stats = stats;
    w.st = st;
    rc = gr_kube_watch_decoder_new(q.max_response, &w.dec, err);
    if (rc == GR_OK && q.accept && strcmp(q.accept, GR_KUBE_PB_ACCEPT) == 0)
        gr_kube_watch_decoder_allow_protobuf(w.dec);
    if (rc == GR_OK && q.share_embedded)
        gr_kube_watch_decoder_share_embedded(w.dec);
    if (rc == GR_OK)
        rc = gr_kube_request_stream(c, "GET", gr_buf_cstr(&p), &q, idle_s, on_chunk, &w, NULL, st,
                                    err);
    if (w.rc) {
        rc = w.rc;
        if (err) {
            *err = w.err;
        }
    } else if (rc == GR_OK && w.dec && gr_kube_watch_decoder_pending(w.dec) > 0) {
        rc = gr_err_set(err, GR_EPARSE, "watch %s: stream ended in the middle of an event",
                        gr_buf_cstr(&p));
    }
    gr_kube_watch_decoder_free(w.dec);
    gr_buf_free(&p);
    return rc;
}

/* ---- backoff ----------------------------------------------------------- */

void gr_kube_backoff_init(gr_kube_backoff *b, int64_t initial_ns, int64_t max_ns, int64_t reset_ns,
                          uint32_t seed)
{
    memset(b, 0, sizeof *b);
    b->initial_ns = initial_ns > 0 ? initial_ns : 800000000LL;
    b->max_ns = max_ns > 0 ? max_ns : 30000000000LL;
    b->reset_ns = reset_ns > 0 ? reset_ns : 120000000000LL;
    b->seed = seed ? seed : 1;
}

void gr_kube_backoff_reset(gr_kube_backoff *b)
{
    b->cur_ns = 0;
    b->last_ns = 0;
}

int64_t gr_kube_backoff_next(gr_kube_backoff *b, int64_t now_ns)
{
    if (b->cur_ns == 0 || (b->last_ns && now_ns - b->last_ns > b->reset_ns))
        b->cur_ns = b->initial_ns;
    else if (b->cur_ns < b->max_ns)
        b->cur_ns = b->cur_ns * 2 > b->max_ns ? b->max_ns : b->cur_ns * 2;
    b->last_ns = now_ns;
    /* jitter factor 1.0: uniform in [cur, 2*cur) */
    b->seed = b->seed * 1103515245u + 12345u;
    double f = (double)((b->seed >> 8) & 0xffff) / 65536.0;
    return b->cur_ns + (int64_t)((double)b->cur_ns * f);
}
