/* gr_kube_rt.c — reconcile helpers: requeue decision, read-modify-write
 * with conflict retry, finalizers, controller references, core/v1 Events. */
#include "gr_kube_rt.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_json.h"
#include "gr_kube_helpers.h"
#include "kube_internal.h"

/* ---- requeue ------------------------------------------------------------ */

gr_kube_requeue gr_kube_requeue_decide(int rc, int64_t after_ns)
{
    if (rc != GR_OK)
        return GR_KUBE_REQUEUE_BACKOFF;
    return after_ns > 0 ? GR_KUBE_REQUEUE_AFTER : GR_KUBE_REQUEUE_FORGET;
}

const char *gr_kube_requeue_result(gr_kube_requeue d)
{
    switch (d) {
    case GR_KUBE_REQUEUE_FORGET:
        return "success";
    case GR_KUBE_REQUEUE_AFTER:
        return "requeue_after";
    case GR_KUBE_REQUEUE_BACKOFF:
        return "error";
    }
    return "error";
}

/* ---- read-modify-write -------------------------------------------------- */

int gr_kube_rmw(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const char *name,
                const gr_kube_rmw_opts *ro, gr_kube_mutate_fn mutate, void *ctx, json_t **out,
                int *attempts, bool *changed, gr_kube_status *st, gr_err *err)
{
    gr_kube_status lst;
    if (!st)
        st = &lst;
    if (out)
        *out = NULL;
    if (attempts)
        *attempts = 0;
    if (changed)
        *changed = false;
    int max = ro && ro->max_attempts > 0 ? ro->max_attempts : GR_KUBE_RETRY_ATTEMPTS;
    bool status = ro && ro->subresource && strcmp(ro->subresource, "status") == 0;
    gr_kube_opts wo = {0};
    wo.subresource = ro ? ro->subresource : NULL;
    wo.field_manager = ro ? ro->field_manager : NULL;
    wo.cancel = ro ? ro->cancel : NULL;
    gr_kube_opts go = {0};
    go.cancel = wo.cancel;
    int rc = GR_ECONFLICT;
    for (int i = 0; i < max; i++) {
        if (i > 0 && gr_kube_sleep_ns(10000000LL, wo.cancel) != GR_OK)
            return gr_err_set(err, GR_ECANCELED, "%s %s: canceled", gvr->resource, name);
        json_t *cur = NULL;
        rc = gr_kube_get(c, gvr, ns, name, &go, &cur, st, err);
        if (rc != GR_OK)
            return rc;
        json_t *obj = json_deep_copy(cur);
        if (!obj) {
            json_decref(cur);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        rc = mutate(obj, ctx, err);
        bool same = rc == GR_ECANCELED ||
                    (rc == GR_OK && (status ? gr_json_equal(json_object_get(obj, "status"),
                                                            json_object_get(cur, "status"))
                                            : gr_json_equal(obj, cur)));
        if (rc != GR_OK && rc != GR_ECANCELED) {
            json_decref(obj);
            json_decref(cur);
            return rc;
        }
        if (same) {
            json_decref(obj);
            if (out)
                *out = cur;
            else
                json_decref(cur);
            if (err)
                gr_err_clear(err);
            return GR_OK;
        }
        if (attempts)
            (*attempts)++;
        json_t *res = NULL;
        if (ro && ro->patch) {
            json_t *patch = NULL;
            rc = gr_json_merge_patch_create(cur, obj, &patch, err);
            if (rc == GR_OK) {
                /* the read version makes the patch a compare-and-swap */
                json_t *md = gr_json_object_child(patch, "metadata");
                const char *rv = gr_kube_meta_str(cur, "resourceVersion");
                json_object_set_new(md, "resourceVersion", json_string(rv ? rv : ""));
                rc =
                    gr_kube_patch(c, gvr, ns, name, GR_KUBE_PATCH_MERGE, patch, &wo, &res, st, err);
            }
            json_decref(patch);
        } else {
            rc = gr_kube_update(c, gvr, ns, obj, &wo, &res, st, err);
        }
        json_decref(obj);
        json_decref(cur);
        if (rc == GR_OK) {
            if (changed)
                *changed = true;
            if (out)
                *out = res;
            else
                json_decref(res);
            return GR_OK;
        }
        if (!(rc == GR_ECONFLICT && st->reason == GR_KUBE_REASON_CONFLICT))
            return rc;
    }
    return gr_err_set(err, GR_ECONFLICT,
                      "%s %s: still conflicting after %d attempts (another writer keeps "
                      "changing it)",
                      gvr->resource, name, max);
}

int gr_kube_status_update_retry(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns,
                                const char *name, gr_kube_mutate_fn mutate, void *ctx, json_t **out,
                                gr_kube_status *st, gr_err *err)
{
    gr_kube_rmw_opts ro = {.subresource = "status"};
    return gr_kube_rmw(c, gvr, ns, name, &ro, mutate, ctx, out, NULL, NULL, st, err);
}

int gr_kube_status_patch_retry(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns,
                               const char *name, gr_kube_mutate_fn mutate, void *ctx, json_t **out,
                               gr_kube_status *st, gr_err *err)
{
    gr_kube_rmw_opts ro = {.subresource = "status", .patch = true};
    return gr_kube_rmw(c, gvr, ns, name, &ro, mutate, ctx, out, NULL, NULL, st, err);
}

/* ---- finalizers, owner references --------------------------------------- */

typedef struct fin_ctx {
    const char *f;
} fin_ctx;

static int fin_add(json_t *obj, void *ctx, gr_err *err)
{
    const char *f = ((fin_ctx *)ctx)->f;
    if (gr_kube_finalizer_has(obj, f))
        return GR_ECANCELED;
    if (gr_kube_is_deleting(obj))
        return gr_err_set(err, GR_ESTATE, "cannot add finalizer %s: the object is being deleted",
                          f);
    gr_kube_finalizer_add(obj, f);
    return GR_OK;
}

static int fin_del(json_t *obj, void *ctx, gr_err *err)
{
    (void)err;
    return gr_kube_finalizer_remove(obj, ((fin_ctx *)ctx)->f) ? GR_OK : GR_ECANCELED;
}

int gr_kube_finalizer_ensure(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns,
                             const char *name, const char *f, bool *changed, gr_err *err)
{
    gr_kube_rmw_opts ro = {.patch = false};
    fin_ctx fc = {f};
    return gr_kube_rmw(c, gvr, ns, name, &ro, fin_add, &fc, NULL, NULL, changed, NULL, err);
}

int gr_kube_finalizer_drop(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns,
                           const char *name, const char *f, bool *changed, gr_err *err)
{
    gr_kube_rmw_opts ro = {.patch = false};
    fin_ctx fc = {f};
    int rc = gr_kube_rmw(c, gvr, ns, name, &ro, fin_del, &fc, NULL, NULL, changed, NULL, err);
    if (rc == GR_ENOTFOUND) {
        if (err)
            gr_err_clear(err);
        return GR_OK;
    }
    return rc;
}

int gr_kube_set_controller_ref(json_t *obj, const json_t *owner, gr_err *err)
{
    const char *ons = gr_kube_meta_str(owner, "namespace");
    const char *ns = gr_kube_meta_str(obj, "namespace");
    if (ons && *ons && ns && *ns && strcmp(ons, ns) != 0)
        return gr_err_set(err, GR_EINVAL,
                          "ownerReferences: owner %s is in namespace %s but the object is in %s "
                          "(cross-namespace owners are not allowed)",
                          gr_kube_meta_str(owner, "name"), ons, ns);
    return gr_kube_owner_ref_set(obj, owner, true, true, err);
}

/* ---- events ------------------------------------------------------------- */

bool gr_kube_event_message(const char *msg, char *out, size_t out_sz)
{
    size_t n = msg ? strlen(msg) : 0;
    size_t cap = out_sz - 1 < GR_KUBE_EVENT_MSG_MAX ? out_sz - 1 : GR_KUBE_EVENT_MSG_MAX;
    if (n <= cap) {
        memcpy(out, msg ? msg : "", n);
        out[n] = '\0';
        return false;
    }
    size_t keep = cap - (sizeof GR_KUBE_EVENT_TRUNC - 1);
    while (keep > 0 && ((unsigned char)msg[keep] & 0xC0) == 0x80)
        keep--; /* do not split a UTF-8 sequence */
    memcpy(out, msg, keep);
    memcpy(out + keep, GR_KUBE_EVENT_TRUNC, sizeof GR_KUBE_EVENT_TRUNC);
    return true;
}

typedef struct agg {
    char name[300];
    char ns[256];
    long count;
    int64_t last_ns;
    char first[32];
} agg;

struct gr_kube_events {
    gr_kube_client *c;
    char *component, *host;
    pthread_mutex_t mu;
    gr_kube_map map; /* aggregation key → agg* */
    uint64_t seq;
    char cur_ns[256], cur_name[300];
};

int gr_kube_events_new(gr_kube_client *c, const char *component, const char *host,
                       gr_kube_events **out, gr_err *err)
{
    *out = NULL;
    if (!component || !*component)
        return gr_err_set(err, GR_EINVAL, "events: component is required");
    gr_kube_events *e = calloc(1, sizeof *e);
    if (!e)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    e->c = c;
    e->component = strdup(component);
    e->host = host && *host ? strdup(host) : NULL;
    if (!e->component || (host && *host && !e->host)) {
        gr_kube_events_free(e);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&e->mu, NULL);
    *out = e;
    return GR_OK;
}

void gr_kube_events_free(gr_kube_events *e)
{
    if (!e)
        return;
    gr_kube_map_clear(&e->map, free);
    free(e->component);
    free(e->host);
    pthread_mutex_destroy(&e->mu);
    free(e);
}

static int plan_locked(gr_kube_events *e, const json_t *obj, const char *type, const char *reason,
                       const char *message, int64_t now, json_t **body, bool *create, gr_err *err)
{
    *body = NULL;
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *name = gr_kube_meta_str(obj, "name");
    const char *ns = gr_kube_meta_str(obj, "namespace");
    if (!kind || !name)
        return gr_err_set(err, GR_EINVAL, "event: the object needs kind and metadata.name");
    if (!type || (strcmp(type, "Normal") != 0 && strcmp(type, "Warning") != 0))
        return gr_err_set(err, GR_EINVAL, "event: type must be Normal or Warning, not \"%s\"",
                          type ? type : "");
    if (!reason || !*reason)
        return gr_err_set(err, GR_EINVAL, "event: reason is required");
    const char *ens = ns && *ns ? ns : "default";
    char msg[GR_KUBE_EVENT_MSG_MAX + 1];
    gr_kube_event_message(message, msg, sizeof msg);
    const char *uid = gr_kube_meta_str(obj, "uid");
    gr_buf key = GR_BUF_INIT(8192);
    gr_buf_printf(&key, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", kind, ens, name, uid ? uid : "",
                  type, reason, msg);
    char ts[32];
    gr_kube_fmt_time(now, false, ts);
    agg *a = gr_kube_map_get(&e->map, gr_buf_cstr(&key));
    if (a && now - a->last_ns <= GR_KUBE_EVENT_AGG_WINDOW) {
        a->count++;
        a->last_ns = now;
        *create = false;
        snprintf(e->cur_ns, sizeof e->cur_ns, "%s", a->ns);
        snprintf(e->cur_name, sizeof e->cur_name, "%s", a->name);
        *body = json_pack("{s:I,s:s}", "count", (json_int_t)a->count, "lastTimestamp", ts);
        gr_buf_free(&key);
        return *body ? GR_OK : gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    if (!a) {
        if (e->map.n >= GR_KUBE_EVENT_CACHE_MAX)
            gr_kube_map_clear(&e->map, free); /* bounded: start aggregating afresh */
        a = calloc(1, sizeof *a);
        if (!a || gr_kube_map_put(&e->map, gr_buf_cstr(&key), a, NULL) != GR_OK) {
            free(a);
            gr_buf_free(&key);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
    }
    gr_buf_free(&key);
    e->seq++;
    /* client-go: <object name>.<hex unix nanoseconds> */
    snprintf(a->name, sizeof a->name, "%.200s.%llx", name,
             (unsigned long long)now + (unsigned long long)e->seq);
    snprintf(a->ns, sizeof a->ns, "%s", ens);
    a->count = 1;
    a->last_ns = now;
    snprintf(a->first, sizeof a->first, "%s", ts);
    snprintf(e->cur_ns, sizeof e->cur_ns, "%s", a->ns);
    snprintf(e->cur_name, sizeof e->cur_name, "%s", a->name);
    *create = true;
    json_t *inv = json_pack("{s:s,s:s}", "kind", kind, "name", name);
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *rv = gr_kube_meta_str(obj, "resourceVersion");
    if (inv && av)
        json_object_set_new(inv, "apiVersion", json_string(av));
    if (inv && ns && *ns)
        json_object_set_new(inv, "namespace", json_string(ns));
    if (inv && uid)
        json_object_set_new(inv, "uid", json_string(uid));
    if (inv && rv)
        json_object_set_new(inv, "resourceVersion", json_string(rv));
    json_t *src = json_pack("{s:s}", "component", e->component);
    if (src && e->host)
        json_object_set_new(src, "host", json_string(e->host));
    *body =
        json_pack("{s:s,s:s,s:{s:s,s:s},s:o,s:s,s:s,s:s,s:o,s:s,s:s,s:i,s:s,s:s}", "apiVersion",
                  "v1", "kind", "Event", "metadata", "name", a->name, "namespace", ens,
                  "involvedObject", inv, "reason", reason, "message", msg, "type", type, "source",
                  src, "firstTimestamp", ts, "lastTimestamp", ts, "count", 1, "reportingComponent",
                  e->component, "reportingInstance", e->host ? e->host : "");
    return *body ? GR_OK : gr_err_set(err, GR_ENOMEM, "out of memory");
}

int gr_kube_events_plan(gr_kube_events *e, const json_t *obj, const char *type, const char *reason,
                        const char *message, int64_t now_unix_ns, json_t **body, bool *create,
                        const char **ns_out, const char **name, gr_err *err)
{
    pthread_mutex_lock(&e->mu);
    int rc = plan_locked(e, obj, type, reason, message, now_unix_ns, body, create, err);
    *ns_out = e->cur_ns;
    *name = e->cur_name;
    pthread_mutex_unlock(&e->mu);
    return rc;
}

int gr_kube_event(gr_kube_events *e, const json_t *obj, const char *type, const char *reason,
                  const char *message, gr_err *err)
{
    json_t *body = NULL;
    bool create = false;
    char ns[256], name[300];
    pthread_mutex_lock(&e->mu);
    int rc = plan_locked(e, obj, type, reason, message, gr_kube_real_ns(), &body, &create, err);
    snprintf(ns, sizeof ns, "%s", e->cur_ns);
    snprintf(name, sizeof name, "%s", e->cur_name);
    pthread_mutex_unlock(&e->mu);
    if (rc != GR_OK)
        return rc;
    gr_kube_status st;
    if (create) {
        rc = gr_kube_create(e->c, &GR_KUBE_CORE_EVENTS, ns, body, NULL, NULL, &st, err);
    } else {
        rc = gr_kube_patch(e->c, &GR_KUBE_CORE_EVENTS, ns, name, GR_KUBE_PATCH_MERGE, body, NULL,
                           NULL, &st, err);
        if (rc == GR_ENOTFOUND) {
            /* the Event expired (TTL) or was deleted: start a new series */
            json_decref(body);
            body = NULL;
            pthread_mutex_lock(&e->mu);
            size_t b = 0;
            gr_kube_map_node *n = NULL, *hit = NULL;
            while ((n = gr_kube_map_next(&e->map, &b, &n)))
                if (strcmp(((agg *)n->val)->name, name) == 0)
                    hit = n;
            if (hit) {
                void *old = NULL;
                char *k = strdup(hit->key);
                if (k && gr_kube_map_del(&e->map, k, &old))
                    free(old);
                free(k);
            }
            rc = plan_locked(e, obj, type, reason, message, gr_kube_real_ns(), &body, &create, err);
            snprintf(ns, sizeof ns, "%s", e->cur_ns);
            pthread_mutex_unlock(&e->mu);
            if (rc == GR_OK)
                rc = gr_kube_create(e->c, &GR_KUBE_CORE_EVENTS, ns, body, NULL, NULL, &st, err);
        }
    }
    json_decref(body);
    return rc;
}

int gr_kube_eventf(gr_kube_events *e, const json_t *obj, const char *type, const char *reason,
                   const char *fmt, ...)
{
    char msg[GR_KUBE_EVENT_MSG_MAX * 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gr_kube_event(e, obj, type, reason, msg, NULL);
}
