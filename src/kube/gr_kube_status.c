/* gr_kube_status.c — metav1.Status → typed errors; request paths; token
 * bucket. All pure. */
#include <stdio.h>
#include <string.h>

#include "gr_kube_pb.h"
#include "gr_kube_rest.h"
#include "kube_internal.h"

const gr_kube_gvr GR_KUBE_PODS = {"", "v1", "pods"};
const gr_kube_gvr GR_KUBE_CONFIGMAPS = {"", "v1", "configmaps"};
const gr_kube_gvr GR_KUBE_SECRETS = {"", "v1", "secrets"};
const gr_kube_gvr GR_KUBE_NAMESPACES = {"", "v1", "namespaces"};
const gr_kube_gvr GR_KUBE_NODES = {"", "v1", "nodes"};
const gr_kube_gvr GR_KUBE_LEASES = {"coordination.k8s.io", "v1", "leases"};
const gr_kube_gvr GR_KUBE_EVENTS = {"events.k8s.io", "v1", "events"};
const gr_kube_gvr GR_KUBE_CORE_EVENTS = {"", "v1", "events"};
const gr_kube_gvr GR_KUBE_CRDS = {"apiextensions.k8s.io", "v1", "customresourcedefinitions"};

static const struct {
    gr_kube_reason r;
    const char *name;
    int code;
} reasons[] = {
    {GR_KUBE_REASON_NONE, "", GR_OK},
    {GR_KUBE_REASON_UNKNOWN, "Unknown", GR_EIO},
    {GR_KUBE_REASON_NOT_FOUND, "NotFound", GR_ENOTFOUND},
    {GR_KUBE_REASON_ALREADY_EXISTS, "AlreadyExists", GR_ECONFLICT},
    {GR_KUBE_REASON_CONFLICT, "Conflict", GR_ECONFLICT},
    {GR_KUBE_REASON_FORBIDDEN, "Forbidden", GR_EPERM},
    {GR_KUBE_REASON_UNAUTHORIZED, "Unauthorized", GR_EPERM},
    {GR_KUBE_REASON_INVALID, "Invalid", GR_EINVAL},
    {GR_KUBE_REASON_BAD_REQUEST, "BadRequest", GR_EINVAL},
    {GR_KUBE_REASON_GONE, "Gone", GR_ESTATE},
    {GR_KUBE_REASON_EXPIRED, "Expired", GR_ESTATE},
    {GR_KUBE_REASON_TOO_MANY_REQUESTS, "TooManyRequests", GR_EAGAIN},
    {GR_KUBE_REASON_SERVER_TIMEOUT, "ServerTimeout", GR_EAGAIN},
    {GR_KUBE_REASON_TIMEOUT, "Timeout", GR_EAGAIN},
    {GR_KUBE_REASON_METHOD_NOT_ALLOWED, "MethodNotAllowed", GR_EUNSUPPORTED},
    {GR_KUBE_REASON_NOT_ACCEPTABLE, "NotAcceptable", GR_EUNSUPPORTED},
    {GR_KUBE_REASON_REQUEST_ENTITY_TOO_LARGE, "RequestEntityTooLarge", GR_ETOOBIG},
    {GR_KUBE_REASON_UNSUPPORTED_MEDIA_TYPE, "UnsupportedMediaType", GR_EUNSUPPORTED},
    {GR_KUBE_REASON_INTERNAL_ERROR, "InternalError", GR_EIO},
    {GR_KUBE_REASON_SERVICE_UNAVAILABLE, "ServiceUnavailable", GR_EAGAIN},
};
#define NREASONS (sizeof reasons / sizeof reasons[0])

gr_kube_reason gr_kube_reason_parse(const char *reason)
{
    if (!reason || !*reason)
        return GR_KUBE_REASON_NONE;
    for (size_t i = 1; i < NREASONS; i++)
        if (strcmp(reasons[i].name, reason) == 0)
            return reasons[i].r;
    return GR_KUBE_REASON_UNKNOWN;
}

const char *gr_kube_reason_name(gr_kube_reason r)
{
    for (size_t i = 0; i < NREASONS; i++)
        if (reasons[i].r == r)
            return reasons[i].name;
    return "Unknown";
}

int gr_kube_reason_code(gr_kube_reason r)
{
    for (size_t i = 0; i < NREASONS; i++)
        if (reasons[i].r == r)
            return reasons[i].code;
    return GR_EIO;
}

bool gr_kube_status_is_gone(const gr_kube_status *st)
{
    return st && (st->reason == GR_KUBE_REASON_GONE || st->reason == GR_KUBE_REASON_EXPIRED);
}

void gr_kube_status_clear(gr_kube_status *st)
{
    if (st)
        memset(st, 0, sizeof *st);
}

/* client-go's reason for a response that carried no Status
 * (errors.NewGenericServerResponse). */
static gr_kube_reason reason_for_code(long code)
{
    switch (code) {
    case 400:
        return GR_KUBE_REASON_BAD_REQUEST;
    case 401:
        return GR_KUBE_REASON_UNAUTHORIZED;
    case 403:
        return GR_KUBE_REASON_FORBIDDEN;
    case 404:
        return GR_KUBE_REASON_NOT_FOUND;
    case 405:
        return GR_KUBE_REASON_METHOD_NOT_ALLOWED;
    case 406:
        return GR_KUBE_REASON_NOT_ACCEPTABLE;
    case 409:
        return GR_KUBE_REASON_CONFLICT;
    case 410:
        return GR_KUBE_REASON_GONE;
    case 413:
        return GR_KUBE_REASON_REQUEST_ENTITY_TOO_LARGE;
    case 415:
        return GR_KUBE_REASON_UNSUPPORTED_MEDIA_TYPE;
    case 422:
        return GR_KUBE_REASON_INVALID;
    case 429:
        return GR_KUBE_REASON_TOO_MANY_REQUESTS;
    case 500:
        return GR_KUBE_REASON_INTERNAL_ERROR;
    case 503:
        return GR_KUBE_REASON_SERVICE_UNAVAILABLE;
    case 504:
        return GR_KUBE_REASON_SERVER_TIMEOUT;
    default:
        return code >= 200 && code < 300 ? GR_KUBE_REASON_NONE : GR_KUBE_REASON_UNKNOWN;
    }
}

/* Copy text from the server into a fixed field: control characters become
 * spaces (these strings end up in logs and terminals) and truncation never
 * splits a UTF-8 sequence. */
static void copy_text(char *dst, size_t cap, const char *s, size_t len)
{
    if (!s)
        len = 0;
    size_t n = len < cap - 1 ? len : cap - 1;
    if (n < len) /* truncated: back off to a UTF-8 lead byte */
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '\0')
            break;
        dst[j++] = ch < 0x20 || ch == 0x7F ? ' ' : (char)ch;
    }
    dst[j] = '\0';
}

static void copy_str(char *dst, size_t cap, const char *s)
{
    copy_text(dst, cap, s, s ? strlen(s) : 0);
}

int gr_kube_status_from_json(long http_code, const json_t *status, gr_kube_status *st)
{
    gr_kube_status local;
    if (!st)
        st = &local;
    gr_kube_status_clear(st);
    json_t *code = json_object_get(status, "code");
    /* the HTTP code wins; watch ERROR events pass 0 and use Status.code
     * (ignored unless it is a plausible HTTP status) */
    if (!http_code && json_is_integer(code) && json_integer_value(code) >= 100 &&
        json_integer_value(code) <= 599)
        http_code = (long)json_integer_value(code);
    st->http_code = http_code;
    const char *reason = json_string_value(json_object_get(status, "reason"));
    st->reason = gr_kube_reason_parse(reason);
    if (st->reason == GR_KUBE_REASON_NONE || st->reason == GR_KUBE_REASON_UNKNOWN) {
        gr_kube_reason byc = reason_for_code(st->http_code);
        if (st->reason == GR_KUBE_REASON_NONE || byc != GR_KUBE_REASON_UNKNOWN)
            st->reason = byc;
    }
    copy_str(st->reason_str, sizeof st->reason_str,
             reason && *reason ? reason : gr_kube_reason_name(st->reason));
    copy_str(st->message, sizeof st->message,
             json_string_value(json_object_get(status, "message")));
    json_t *details = json_object_get(status, "details");
    copy_str(st->kind, sizeof st->kind, json_string_value(json_object_get(details, "kind")));
    copy_str(st->name, sizeof st->name, json_string_value(json_object_get(details, "name")));
    json_t *ra = json_object_get(details, "retryAfterSeconds");
    if (json_is_integer(ra) && json_integer_value(ra) > 0)
        st->retry_after_s = json_integer_value(ra) > GR_KUBE_RETRY_AFTER_MAX_S
                                ? GR_KUBE_RETRY_AFTER_MAX_S
                                : (long)json_integer_value(ra);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(details, "causes"), i, c)
    {
        if (st->ncauses >= GR_KUBE_CAUSES_MAX)
            break; /* the rest are dropped: the cap bounds memory and log lines */
        if (!json_is_object(c))
            continue;
        gr_kube_cause *k = &st->causes[st->ncauses++];
        copy_str(k->type, sizeof k->type, json_string_value(json_object_get(c, "reason")));
        copy_str(k->field, sizeof k->field, json_string_value(json_object_get(c, "field")));
        copy_str(k->message, sizeof k->message, json_string_value(json_object_get(c, "message")));
    }
    if (st->http_code >= 200 && st->http_code < 300 && st->reason == GR_KUBE_REASON_NONE)
        return GR_OK;
    if (st->reason == GR_KUBE_REASON_NONE)
        st->reason = GR_KUBE_REASON_UNKNOWN;
    return gr_kube_reason_code(st->reason);
}

int gr_kube_status_from_response(long http_code, const char *body, size_t len, gr_kube_status *st)
{
    gr_kube_status local;
    if (!st)
        st = &local;
    gr_kube_status_clear(st);
    if (http_code >= 200 && http_code < 300) {
        st->http_code = http_code;
        return GR_OK;
    }
    if (!body)
        len = 0;
    /* Only a body within the cap is decoded (jansson bounds nesting depth);
     * anything else is not a Status and is reported by its HTTP code. */
    json_t *doc = NULL;
    if (len >= 4 && memcmp(body, "k8s\0", 4) == 0) {
        /* a protobuf Status (the request accepted protobuf) */
        if (gr_kube_pb_decode(body, len, GR_KUBE_STATUS_MAX_BYTES, &doc, NULL) != GR_OK)
            doc = NULL;
    } else if (len && len <= GR_KUBE_STATUS_MAX_BYTES) {
        doc = json_loadb(body, len, 0, NULL);
    }
    const char *kind = json_string_value(json_object_get(doc, "kind"));
    if (doc && kind && strcmp(kind, "Status") == 0) {
        int rc = gr_kube_status_from_json(http_code, doc, st);
        json_decref(doc);
        return rc;
    }
    json_decref(doc);
    st->http_code = http_code;
    st->reason = reason_for_code(http_code);
    copy_str(st->reason_str, sizeof st->reason_str, gr_kube_reason_name(st->reason));
    /* client-go: "the server could not find the requested resource" etc.;
     * we keep the start of the body (control characters made spaces), which
     * is what a human needs. */
    if (len)
        copy_text(st->message, sizeof st->message, body, len);
    if (!st->message[0])
        snprintf(st->message, sizeof st->message, "the server responded with HTTP %ld", http_code);
    return gr_kube_reason_code(st->reason);
}

/* ---- paths ------------------------------------------------------------- */

static int q_str(gr_buf *b, char *sep, const char *k, const char *v)
{
    if (!v || !*v)
        return GR_OK;
    int rc = gr_buf_printf(b, "%c%s=", *sep, k);
    *sep = '&';
    return rc == GR_OK ? gr_kube_url_escape(b, v) : rc;
}

static int q_long(gr_buf *b, char *sep, const char *k, long v)
{
    int rc = gr_buf_printf(b, "%c%s=%ld", *sep, k, v);
    *sep = '&';
    return rc;
}

static bool seg_ok(const char *s)
{
    return s && *s && strcmp(s, ".") != 0 && strcmp(s, "..") != 0 && !strchr(s, '/');
}

int gr_kube_build_path(gr_buf *out, const gr_kube_gvr *gvr, const char *ns, const char *name,
                       const char *subresource, const gr_kube_opts *o, bool watch, gr_err *err)
{
    if (!gvr || !seg_ok(gvr->version) || !seg_ok(gvr->resource))
        return gr_err_set(err, GR_EINVAL,
                          "resource: version and resource (plural) are required, e.g. {\"\", "
                          "\"v1\", \"pods\"}");
    if (ns && *ns && !seg_ok(ns))
        return gr_err_set(err, GR_EINVAL, "namespace \"%s\" is not a valid path segment", ns);
    if (name && *name && !seg_ok(name))
        return gr_err_set(err, GR_EINVAL, "name \"%s\" is not a valid path segment", name);
    if (subresource && *subresource && !seg_ok(subresource))
        return gr_err_set(err, GR_EINVAL, "subresource \"%s\" is not valid", subresource);
    int rc;
    if (gvr->group && *gvr->group)
        rc = gr_buf_printf(out, "/apis/%s/%s", gvr->group, gvr->version);
    else
        rc = gr_buf_printf(out, "/api/%s", gvr->version);
    if (rc == GR_OK && ns && *ns) {
        rc = gr_buf_puts(out, "/namespaces/");
        if (rc == GR_OK)
            rc = gr_kube_url_escape(out, ns);
    }
    if (rc == GR_OK)
        rc = gr_buf_printf(out, "/%s", gvr->resource);
    if (rc == GR_OK && name && *name) {
        rc = gr_buf_putc(out, '/');
        if (rc == GR_OK)
            rc = gr_kube_url_escape(out, name);
        if (rc == GR_OK && subresource && *subresource)
            rc = gr_buf_printf(out, "/%s", subresource);
    }
    char sep = '?';
    if (rc == GR_OK && watch) {
        rc = q_str(out, &sep, "watch", "1");
        if (rc == GR_OK && o && o->allow_bookmarks)
            rc = q_str(out, &sep, "allowWatchBookmarks", "true");
        if (rc == GR_OK && o && o->send_initial_events)
            rc = q_str(out, &sep, "sendInitialEvents", "true");
        if (rc == GR_OK)
            rc = q_long(out, &sep, "timeoutSeconds",
                        o && o->timeout_seconds > 0 ? o->timeout_seconds : 300);
    }
    if (rc == GR_OK && o) {
        rc = q_str(out, &sep, "labelSelector", o->label_selector);
        if (rc == GR_OK)
            rc = q_str(out, &sep, "fieldSelector", o->field_selector);
        if (rc == GR_OK && o->limit > 0 && !watch)
            rc = q_long(out, &sep, "limit", o->limit);
        if (rc == GR_OK && !watch)
            rc = q_str(out, &sep, "continue", o->continue_token);
        if (rc == GR_OK)
            rc = q_str(out, &sep, "resourceVersion", o->resource_version);
        if (rc == GR_OK && (!watch || o->send_initial_events))
            rc = q_str(out, &sep, "resourceVersionMatch", o->resource_version_match);
        if (rc == GR_OK)
            rc = q_str(out, &sep, "fieldManager", o->field_manager);
        if (rc == GR_OK && o->force)
            rc = q_str(out, &sep, "force", "true");
        if (rc == GR_OK && o->dry_run)
            rc = q_str(out, &sep, "dryRun", "All");
    }
    if (rc != GR_OK)
        return gr_err_set(err, rc, "request path too long");
    return GR_OK;
}

/* ---- token bucket ------------------------------------------------------ */

void gr_kube_bucket_init(gr_kube_bucket *b, double qps, int burst)
{
    memset(b, 0, sizeof *b);
    b->qps = qps;
    b->burst = burst > 0 ? burst : 1;
    b->tokens = b->burst;
}

int64_t gr_kube_bucket_reserve(gr_kube_bucket *b, int64_t now_ns)
{
    if (b->qps <= 0)
        return 0; /* unlimited */
    if (!b->started) {
        b->started = true;
        b->last_ns = now_ns;
    }
    if (now_ns > b->last_ns) {
        b->tokens += (double)(now_ns - b->last_ns) / 1e9 * b->qps;
        if (b->tokens > b->burst)
            b->tokens = b->burst;
        b->last_ns = now_ns;
    }
    b->tokens -= 1.0;
    if (b->tokens >= 0)
        return 0;
    return (int64_t)(-b->tokens / b->qps * 1e9);
}

int64_t gr_kube_bucket_wait_for(const gr_kube_bucket *b, int n, int64_t now_ns)
{
    if (b->qps <= 0 || n <= 0)
        return 0;
    double want = (double)n < b->burst ? (double)n : b->burst;
    double tokens = b->tokens;
    if (b->started && now_ns > b->last_ns) {
        tokens += (double)(now_ns - b->last_ns) / 1e9 * b->qps;
        if (tokens > b->burst)
            tokens = b->burst;
    }
    if (tokens >= want)
        return 0;
    return (int64_t)((want - tokens) / b->qps * 1e9);
}

const char *gr_kube_obj_meta(const json_t *obj, const char *field)
{
    return gr_kube_meta_str(obj, field);
}

const char *gr_kube_list_continue(const json_t *list)
{
    const char *c = gr_kube_meta_str(list, "continue");
    return c && *c ? c : NULL;
}

int64_t gr_kube_now_ns(void)
{
    return gr_kube_real_ns();
}
