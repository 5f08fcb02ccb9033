/* gr_kube_mgr.c — the controller runtime's manager (see gr_kube_mgr.h). */
#include "gr_kube_mgr.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gr_file.h"
#include "gr_kube_helpers.h"
#include "gr_kube_leader.h"
#include "gr_kube_probe.h"
#include "gr_log.h"
#include "kube_internal.h"

#define DEFAULT_RECHECK_NS (10LL * 1000000000LL)
#define RUNNER_TICK_NS     (50LL * 1000000LL)

typedef struct watch_ent {
    gr_kube_ctl *ctl;
    gr_kube_map_fn map;
    void *ctx;
} watch_ent;

typedef struct index_ent {
    const char *name;
    gr_kube_index_fn fn;
    void *ctx;
} index_ent;

struct gr_kube_cache {
    gr_kube_mgr *m;
    char *id;
    char *group, *version, *resource, *ns, *ls, *fs;
    char label[400]; /* "group/version/resource" for metrics */
    gr_kube_transform_fn transform;
    void *transform_ctx;
    bool optional;
    int64_t resync_ns;
    index_ent idx[GR_KUBE_MGR_MAX_INDEXES];
    size_t nidx;
    watch_ent w[GR_KUBE_MGR_MAX_WATCHES];
    size_t nw;
    gr_kube_handlers h[GR_KUBE_MGR_MAX_WATCHES];
    size_t nh;
    pthread_mutex_t mu; /* inf, empty */
    gr_kube_informer *inf;
    gr_kube_store *empty;
    atomic_bool present;
};

struct gr_kube_ctl {
    gr_kube_mgr *m;
    char *name;
    int workers;
    bool always_on;
    gr_kube_reconcile_fn fn;
    void *ctx;
    gr_kube_queue *q;
    gr_kube_cache *needs[GR_KUBE_MGR_MAX_NEEDS];
    size_t nneeds;
    pthread_t *threads;
    int nthreads;
    atomic_bool running;
    atomic_bool stopping;
    pthread_mutex_t mu; /* metrics */
    gr_kube_ctl_metrics met;
    atomic_int active;
    atomic_uint_fast64_t reconciles;
};

typedef struct runnable {
    char *name;
    bool always_on;
    void (*run)(void *ctx, const atomic_int *stop);
    void *ctx;
    pthread_t th;
    bool started;
    atomic_int stop;
} runnable;

typedef struct check_ent {
    char *name;
    gr_kube_check_fn fn;
    void *ctx;
} check_ent;

struct gr_kube_mgr {
    gr_kube_client *c;
    char *name;
    char *probe_addr, *metrics_addr;
    bool leader_elect;
    char *lease_ns, *lease_name, *identity;
    int64_t lease_ns_dur, renew_ns, retry_ns, recheck_ns;
    gr_kube_cache *caches[GR_KUBE_MGR_MAX_CACHES];
    size_t ncache;
    gr_kube_ctl *ctls[GR_KUBE_MGR_MAX_CTLS];
    size_t nctl;
    check_ent checks[GR_KUBE_MGR_MAX_CHECKS];
    size_t ncheck;
    runnable runs[GR_KUBE_MGR_MAX_RUNNABLES];
    size_t nrun;
    struct {
        void (*fn)(void *);
        void *ctx;
    } cleanups[GR_KUBE_MGR_MAX_CLEANUPS];
    size_t ncleanup;
    struct {
        gr_kube_metrics_fn fn;
        void *ctx;
    } collectors[GR_KUBE_MGR_MAX_COLLECTORS];
    size_t ncollector;
    gr_kube_http *probe, *metrics;
    gr_kube_leader *leader;
    atomic_bool started, stopping, stopped, leading, lost;
    pthread_t runner;
    bool runner_started;
    atomic_int runner_stop;
    pthread_mutex_t stop_mu;
};

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* ---- manager ------------------------------------------------------------ */

int gr_kube_mgr_new(gr_kube_client *c, const gr_kube_mgr_opts *o, gr_kube_mgr **out, gr_err *err)
{
    *out = NULL;
    if (!c)
        return gr_err_set(err, GR_EINVAL, "manager: a client is required");
    gr_kube_mgr_opts z = {0};
    if (!o)
        o = &z;
    if (o->leader_elect && (!o->lease_ns || !*o->lease_ns || !o->lease_name || !*o->lease_name ||
                            !o->identity || !*o->identity)) {
        gr_kube_client_free(c);
        return gr_err_set(err, GR_EINVAL,
                          "manager: leader election needs lease_ns, lease_name and identity");
    }
    bool off;
    uint32_t ip;
    int port;
    if (gr_kube_bind_parse(o->probe_addr, &off, &ip, &port, err) != GR_OK) {
        gr_err_prefix(err, "--health-probe-bind-address: ");
        gr_kube_client_free(c);
        return GR_EINVAL;
    }
    if (gr_kube_bind_parse(o->metrics_addr, &off, &ip, &port, err) != GR_OK) {
        gr_err_prefix(err, "--metrics-bind-address: ");
        gr_kube_client_free(c);
        return GR_EINVAL;
    }
    gr_kube_mgr *m = calloc(1, sizeof *m);
    if (!m) {
        gr_kube_client_free(c);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    m->c = c;
    m->name = strdup(o->name && *o->name ? o->name : "manager");
    m->probe_addr = dup_or_null(o->probe_addr);
    m->metrics_addr = dup_or_null(o->metrics_addr);
    m->leader_elect = o->leader_elect;
    m->lease_ns = dup_or_null(o->lease_ns);
    m->lease_name = dup_or_null(o->lease_name);
    m->identity = dup_or_null(o->identity);
    m->lease_ns_dur = o->lease_duration_ns;
    m->renew_ns = o->renew_deadline_ns;
    m->retry_ns = o->retry_period_ns;
    m->recheck_ns = o->recheck_ns > 0 ? o->recheck_ns : DEFAULT_RECHECK_NS;
    pthread_mutex_init(&m->stop_mu, NULL);
    if (!m->name || (o->probe_addr && !m->probe_addr) || (o->metrics_addr && !m->metrics_addr) ||
        (o->lease_ns && !m->lease_ns) || (o->lease_name && !m->lease_name) ||
        (o->identity && !m->identity)) {
        gr_kube_mgr_free(m);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    *out = m;
    return GR_OK;
}

gr_kube_client *gr_kube_mgr_client(gr_kube_mgr *m)
{
    return m->c;
}

/* ---- caches --------------------------------------------------------------- */

static void cache_dispatch(gr_kube_cache *c, const json_t *obj)
{
    for (size_t i = 0; i < c->nw; i++) {
        watch_ent *w = &c->w[i];
        if (w->map) {
            char(*keys)[GR_KUBE_KEY_MAX] = calloc(GR_KUBE_MGR_MAP_KEYS_MAX, GR_KUBE_KEY_MAX);
            if (!keys) {
                gr_log(GR_LOG_ERROR, w->ctl->m->name, "out of memory mapping an event",
                       GR_KV_STR("controller", w->ctl->name), GR_KV_END);
                continue;
            }
            size_t n = w->map(w->ctx, obj, keys, GR_KUBE_MGR_MAP_KEYS_MAX);
            for (size_t k = 0; k < n && k < GR_KUBE_MGR_MAP_KEYS_MAX; k++) {
                keys[k][GR_KUBE_KEY_MAX - 1] = '\0';
                gr_kube_ctl_enqueue(w->ctl, keys[k]);
            }
            free(keys);
        } else {
            char key[GR_KUBE_KEY_MAX];
            if (gr_kube_object_key(obj, key, sizeof key, NULL) == GR_OK)
                gr_kube_ctl_enqueue(w->ctl, key);
        }
    }
}

static void on_add(void *ctx, const json_t *obj)
{
    gr_kube_cache *c = ctx;
    for (size_t i = 0; i < c->nh; i++)
        if (c->h[i].on_add)
            c->h[i].on_add(c->h[i].ctx, obj);
    cache_dispatch(c, obj);
}

static void on_update(void *ctx, const json_t *old_obj, const json_t *new_obj)
{
    gr_kube_cache *c = ctx;
    for (size_t i = 0; i < c->nh; i++)
        if (c->h[i].on_update)
            c->h[i].on_update(c->h[i].ctx, old_obj, new_obj);
    cache_dispatch(c, new_obj);
    bool mapped = false;
    for (size_t i = 0; i < c->nw; i++)
        mapped = mapped || c->w[i].map;
    if (mapped && old_obj != new_obj) {
        /* the old object may map to keys the new one no longer does (a
         * label or owner change); own-key watches dedup in the queue */
        cache_dispatch(c, old_obj);
    }
}

static void on_delete(void *ctx, const json_t *obj)
{
    gr_kube_cache *c = ctx;
    for (size_t i = 0; i < c->nh; i++)
        if (c->h[i].on_delete)
            c->h[i].on_delete(c->h[i].ctx, obj);
    cache_dispatch(c, obj);
}

int gr_kube_cache_add_handlers(gr_kube_cache *c, const gr_kube_handlers *h, gr_err *err)
{
    if (atomic_load(&c->m->started))
        return gr_err_set(err, GR_ESTATE, "cache %s: handlers must be added before start",
                          c->label);
    if (c->nh >= GR_KUBE_MGR_MAX_WATCHES)
        return gr_err_set(err, GR_ETOOBIG, "cache %s: at most %d handler sets", c->label,
                          GR_KUBE_MGR_MAX_WATCHES);
    c->h[c->nh++] = *h;
    return GR_OK;
}

static void cache_free(gr_kube_cache *c)
{
    if (!c)
        return;
    if (c->inf) {
        gr_kube_informer_stop(c->inf);
        gr_kube_informer_free(c->inf);
    }
    gr_kube_store_free(c->empty);
    free(c->id);
    free(c->group);
    free(c->version);
    free(c->resource);
    free(c->ns);
    free(c->ls);
    free(c->fs);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

int gr_kube_mgr_cache(gr_kube_mgr *m, const gr_kube_cache_opts *o, gr_kube_cache **out, gr_err *err)
{
    *out = NULL;
    if (atomic_load(&m->started))
        return gr_err_set(err, GR_ESTATE, "manager: caches must be declared before start");
    if (!o->gvr.version || !o->gvr.resource || !*o->gvr.resource)
        return gr_err_set(err, GR_EINVAL, "cache: gvr.version and gvr.resource are required");
    gr_buf id = GR_BUF_INIT(4096);
    int rc = gr_buf_printf(&id, "%s/%s/%s|%s|%s|%s", o->gvr.group ? o->gvr.group : "",
                           o->gvr.version, o->gvr.resource, o->ns ? o->ns : "",
                           o->label_selector ? o->label_selector : "",
                           o->field_selector ? o->field_selector : "");
    if (rc != GR_OK) {
        gr_buf_free(&id);
        return gr_err_set(err, rc, "cache: selectors too long");
    }
    for (size_t i = 0; i < m->ncache; i++)
        if (strcmp(m->caches[i]->id, gr_buf_cstr(&id)) == 0 &&
            m->caches[i]->transform == o->transform &&
            m->caches[i]->transform_ctx == o->transform_ctx) {
            gr_kube_cache *c = m->caches[i];
            c->optional = c->optional && o->optional; /* required by anyone = required */
            gr_buf_free(&id);
            *out = c;
            return GR_OK;
        }
    if (m->ncache >= GR_KUBE_MGR_MAX_CACHES) {
        gr_buf_free(&id);
        return gr_err_set(err, GR_ETOOBIG, "manager: at most %d caches", GR_KUBE_MGR_MAX_CACHES);
    }
    gr_kube_cache *c = calloc(1, sizeof *c);
    if (!c) {
        gr_buf_free(&id);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&c->mu, NULL);
    c->m = m;
    c->id = gr_buf_steal(&id, NULL);
    c->group = strdup(o->gvr.group ? o->gvr.group : "");
    c->version = strdup(o->gvr.version);
    c->resource = strdup(o->gvr.resource);
    c->ns = dup_or_null(o->ns);
    c->ls = dup_or_null(o->label_selector);
    c->fs = dup_or_null(o->field_selector);
    c->transform = o->transform;
    c->transform_ctx = o->transform_ctx;
    c->optional = o->optional;
    c->resync_ns = o->resync_ns;
    snprintf(c->label, sizeof c->label, "%s%s%s/%s", c->group ? c->group : "",
             c->group && *c->group ? "/" : "", c->version ? c->version : "",
             c->resource ? c->resource : "");
    if (!c->id || !c->group || !c->version || !c->resource || (o->ns && !c->ns) ||
        (o->label_selector && !c->ls) || (o->field_selector && !c->fs) ||
        gr_kube_store_new(&c->empty, err) != GR_OK) {
        cache_free(c);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    m->caches[m->ncache++] = c;
    *out = c;
    return GR_OK;
}

int gr_kube_cache_add_index(gr_kube_cache *c, const char *name, gr_kube_index_fn fn, void *ctx,
                            gr_err *err)
{
    if (atomic_load(&c->m->started))
        return gr_err_set(err, GR_ESTATE, "cache %s: indexes must be added before start", c->label);
    for (size_t i = 0; i < c->nidx; i++)
        if (strcmp(c->idx[i].name, name) == 0) {
            if (c->idx[i].fn == fn && c->idx[i].ctx == ctx)
                return GR_OK;
            return gr_err_set(err, GR_ECONFLICT,
                              "cache %s: index \"%s\" already exists with another function",
                              c->label, name);
        }
    if (c->nidx >= GR_KUBE_MGR_MAX_INDEXES)
        return gr_err_set(err, GR_ETOOBIG, "cache %s: at most %d indexes", c->label,
                          GR_KUBE_MGR_MAX_INDEXES);
    c->idx[c->nidx++] = (index_ent){name, fn, ctx};
    /* the empty store of a missing optional resource answers index queries too */
    return gr_kube_store_add_index(c->empty, name, fn, ctx, err);
}

static gr_kube_store *cache_store(gr_kube_cache *c)
{
    pthread_mutex_lock(&c->mu);
    gr_kube_store *s = c->inf ? gr_kube_informer_store(c->inf) : c->empty;
    pthread_mutex_unlock(&c->mu);
    return s;
}

int gr_kube_cache_get(gr_kube_cache *c, const char *key, json_t **out, gr_err *err)
{
    return gr_kube_store_get(cache_store(c), key, out, err);
}

int gr_kube_cache_list(gr_kube_cache *c, const char *index, const char *value, json_t **out,
                       gr_err *err)
{
    return gr_kube_store_list(cache_store(c), index, value, out, err);
}

bool gr_kube_cache_present(gr_kube_cache *c)
{
    return atomic_load(&c->present);
}

bool gr_kube_cache_synced(gr_kube_cache *c)
{
    pthread_mutex_lock(&c->mu);
    bool s = c->inf ? gr_kube_informer_synced(c->inf) : !atomic_load(&c->present);
    pthread_mutex_unlock(&c->mu);
    return s;
}

/* Does discovery list the cache's resource? GR_OK with *present, or a
 * transport error (then the caller keeps its previous view). */
static int discover(gr_kube_cache *c, bool *present, gr_err *err)
{
    char path[400];
    if (*c->group)
        snprintf(path, sizeof path, "/apis/%s/%s", c->group, c->version);
    else
        snprintf(path, sizeof path, "/api/%s", c->version);
    gr_buf body = GR_BUF_INIT(8 * 1024 * 1024);
    gr_kube_status st;
    int rc = gr_kube_request(c->m->c, "GET", path, NULL, NULL, 0, NULL, &body, NULL, &st, err);
    *present = false;
    if (rc == GR_ENOTFOUND) {
        gr_buf_free(&body);
        if (err)
            gr_err_clear(err);
        return GR_OK;
    }
    if (rc == GR_OK) {
        json_t *doc = json_loadb(body.data ? body.data : "", body.len, 0, NULL);
        size_t i;
        json_t *r;
        json_array_foreach(json_object_get(doc, "resources"), i, r)
        {
            const char *n = json_string_value(json_object_get(r, "name"));
            if (n && strcmp(n, c->resource) == 0)
                *present = true;
        }
        json_decref(doc);
    }
    gr_buf_free(&body);
    return rc;
}

/* Every cache drops metadata.managedFields before the cache's own transform
 * (controller-runtime's default transform does the same): no controller reads
 * them, and on objects written by several managers (kubelet, scheduler,
 * server-side apply) they are often the largest part of a Pod or Node. */
static int cache_transform(json_t **obj, void *ctx)
{
    const gr_kube_cache *c = ctx;
    json_t *md = json_object_get(*obj, "metadata");
    if (json_is_object(md))
        json_object_del(md, "managedFields");
    return c->transform ? c->transform(obj, c->transform_ctx) : GR_OK;
}

static int cache_start(gr_kube_cache *c, gr_err *err)
{
    gr_kube_informer_opts io = {0};
    io.gvr.group = c->group;
    io.gvr.version = c->version;
    io.gvr.resource = c->resource;
    io.ns = c->ns;
    io.label_selector = c->ls;
    io.field_selector = c->fs;
    io.transform = cache_transform;
    io.transform_ctx = c;
    io.resync_ns = c->resync_ns;
    io.handlers.on_add = on_add;
    io.handlers.on_update = on_update;
    io.handlers.on_delete = on_delete;
    io.handlers.ctx = c;
    gr_kube_informer *inf = NULL;
    int rc = gr_kube_informer_new(c->m->c, &io, &inf, err);
    for (size_t i = 0; rc == GR_OK && i < c->nidx; i++)
        rc = gr_kube_informer_add_index(inf, c->idx[i].name, c->idx[i].fn, c->idx[i].ctx, err);
    if (rc == GR_OK) {
        /* publish before start so the synced state is read from it */
        pthread_mutex_lock(&c->mu);
        c->inf = inf;
        pthread_mutex_unlock(&c->mu);
        atomic_store(&c->present, true);
        rc = gr_kube_informer_start(inf, err);
        if (rc != GR_OK) {
            pthread_mutex_lock(&c->mu);
            c->inf = NULL;
            pthread_mutex_unlock(&c->mu);
            atomic_store(&c->present, false);
        }
    }
    if (rc != GR_OK) {
        gr_kube_informer_free(inf);
        gr_err_prefix(err, "informer %s: ", c->label);
        return rc;
    }
    gr_log(GR_LOG_INFO, c->m->name, "informer started", GR_KV_STR("resource", c->label),
           GR_KV_STR("namespace", c->ns ? c->ns : ""), GR_KV_END);
    return GR_OK;
}

/* ---- controllers ------------------------------------------------------------ */

int gr_kube_mgr_add_controller(gr_kube_mgr *m, const gr_kube_ctl_opts *o, gr_kube_ctl **out,
                               gr_err *err)
{
    *out = NULL;
    if (atomic_load(&m->started))
        return gr_err_set(err, GR_ESTATE, "manager: controllers must be added before start");
    if (!o->name || !*o->name || !o->reconcile)
        return gr_err_set(err, GR_EINVAL, "controller: name and reconcile are required");
    if (o->workers < 0 || o->workers > GR_KUBE_MGR_MAX_WORKERS)
        return gr_err_set(err, GR_EINVAL,
                          "controller %s: workers must be between 1 and %d (got %d)", o->name,
                          GR_KUBE_MGR_MAX_WORKERS, o->workers);
    for (size_t i = 0; i < m->nctl; i++)
        if (strcmp(m->ctls[i]->name, o->name) == 0)
            return gr_err_set(err, GR_ECONFLICT, "controller %s: the name is already used",
                              o->name);
    if (m->nctl >= GR_KUBE_MGR_MAX_CTLS)
        return gr_err_set(err, GR_ETOOBIG, "manager: at most %d controllers", GR_KUBE_MGR_MAX_CTLS);
    gr_kube_ctl *c = calloc(1, sizeof *c);
    if (!c)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    c->m = m;
    c->name = strdup(o->name);
    c->workers = o->workers > 0 ? o->workers : 1;
    c->always_on = o->always_on;
    c->fn = o->reconcile;
    c->ctx = o->ctx;
    pthread_mutex_init(&c->mu, NULL);
    gr_kube_rate_limiter *rl = NULL;
    int rc = c->name
                 ? gr_kube_rate_limiter_new(o->backoff_base_ns, o->backoff_max_ns, 0, 0, &rl, err)
                 : gr_err_set(err, GR_ENOMEM, "out of memory");
    if (rc == GR_OK)
        rc = gr_kube_queue_new(rl, &c->q, err);
    if (rc != GR_OK) {
        pthread_mutex_destroy(&c->mu);
        free(c->name);
        free(c);
        return rc;
    }
    c->met.name = c->name;
    c->met.max_workers = c->workers;
    m->ctls[m->nctl++] = c;
    *out = c;
    return GR_OK;
}

int gr_kube_ctl_need(gr_kube_ctl *ctl, gr_kube_cache *c, gr_err *err)
{
    if (atomic_load(&ctl->m->started))
        return gr_err_set(err, GR_ESTATE, "controller %s: declare caches before start", ctl->name);
    for (size_t i = 0; i < ctl->nneeds; i++)
        if (ctl->needs[i] == c)
            return GR_OK;
    if (ctl->nneeds >= GR_KUBE_MGR_MAX_NEEDS)
        return gr_err_set(err, GR_ETOOBIG, "controller %s: at most %d caches", ctl->name,
                          GR_KUBE_MGR_MAX_NEEDS);
    ctl->needs[ctl->nneeds++] = c;
    return GR_OK;
}

int gr_kube_ctl_watch(gr_kube_ctl *ctl, gr_kube_cache *c, gr_kube_map_fn map, void *ctx,
                      gr_err *err)
{
    int rc = gr_kube_ctl_need(ctl, c, err);
    if (rc != GR_OK)
        return rc;
    if (c->nw >= GR_KUBE_MGR_MAX_WATCHES)
        return gr_err_set(err, GR_ETOOBIG, "cache %s: at most %d watches", c->label,
                          GR_KUBE_MGR_MAX_WATCHES);
    c->w[c->nw++] = (watch_ent){ctl, map, ctx};
    return GR_OK;
}

size_t gr_kube_map_owner(void *ctx, const json_t *obj, char (*keys)[GR_KUBE_KEY_MAX], size_t max)
{
    const char *kind = ctx;
    json_t *ref = gr_kube_controller_of(obj);
    if (!ref || max == 0)
        return 0;
    const char *rk = json_string_value(json_object_get(ref, "kind"));
    const char *rn = json_string_value(json_object_get(ref, "name"));
    if (!rk || !rn || (kind && strcmp(rk, kind) != 0))
        return 0;
    const char *ns = gr_kube_meta_str(obj, "namespace");
    int n = ns && *ns ? snprintf(keys[0], GR_KUBE_KEY_MAX, "%s/%s", ns, rn)
                      : snprintf(keys[0], GR_KUBE_KEY_MAX, "%s", rn);
    return n > 0 && n < GR_KUBE_KEY_MAX ? 1 : 0;
}

static void count_add(gr_kube_ctl *ctl)
{
    pthread_mutex_lock(&ctl->mu);
    ctl->met.adds++;
    pthread_mutex_unlock(&ctl->mu);
}

int gr_kube_ctl_enqueue(gr_kube_ctl *ctl, const char *key)
{
    count_add(ctl);
    return gr_kube_queue_add(ctl->q, key);
}

int gr_kube_ctl_enqueue_after(gr_kube_ctl *ctl, const char *key, int64_t delay_ns)
{
    count_add(ctl);
    return gr_kube_queue_add_after(ctl->q, key, delay_ns);
}

bool gr_kube_ctl_running(gr_kube_ctl *ctl)
{
    return atomic_load(&ctl->running);
}

uint64_t gr_kube_ctl_reconciles(gr_kube_ctl *ctl)
{
    return atomic_load(&ctl->reconciles);
}

static void *worker(void *arg)
{
    gr_kube_ctl *ctl = arg;
    for (;;) {
        char *key = NULL;
        if (gr_kube_queue_get(ctl->q, 0, &key) != GR_OK)
            break;
        if (atomic_load(&ctl->stopping)) { /* intake stopped: do not start new work */
            gr_kube_queue_done(ctl->q, key);
            free(key);
            break;
        }
        atomic_fetch_add(&ctl->active, 1);
        gr_err e;
        gr_err_clear(&e);
        int64_t after = 0;
        int64_t t0 = gr_kube_mono_ns();
        int rc = ctl->fn(ctl->ctx, key, &after, &e);
        double secs = (double)(gr_kube_mono_ns() - t0) / 1e9;
        gr_kube_requeue d = gr_kube_requeue_decide(rc, after);
        switch (d) {
        case GR_KUBE_REQUEUE_FORGET:
            gr_kube_queue_forget(ctl->q, key);
            break;
        case GR_KUBE_REQUEUE_AFTER:
            gr_kube_queue_forget(ctl->q, key);
            gr_kube_queue_add_after(ctl->q, key, after);
            break;
        case GR_KUBE_REQUEUE_BACKOFF:
            gr_log(GR_LOG_ERROR, ctl->m->name, "Reconciler error",
                   GR_KV_STR("controller", ctl->name), GR_KV_STR("key", key),
                   GR_KV_STR("error", e.msg[0] ? e.msg : gr_rc_name(rc)), GR_KV_END);
            gr_kube_queue_add_rate_limited(ctl->q, key);
            break;
        }
        pthread_mutex_lock(&ctl->mu);
        gr_kube_hist_observe(&ctl->met.duration, secs);
        if (d == GR_KUBE_REQUEUE_FORGET)
            ctl->met.success++;
        else if (d == GR_KUBE_REQUEUE_AFTER) {
            ctl->met.requeue_after++;
            ctl->met.adds++;
        } else {
            ctl->met.error++;
            ctl->met.retries++;
            ctl->met.adds++;
        }
        pthread_mutex_unlock(&ctl->mu);
        atomic_fetch_add(&ctl->reconciles, 1);
        atomic_fetch_sub(&ctl->active, 1);
        gr_kube_queue_done(ctl->q, key);
        free(key);
    }
    return NULL;
}

static bool ctl_caches_synced(gr_kube_ctl *ctl)
{
    for (size_t i = 0; i < ctl->nneeds; i++)
        if (!gr_kube_cache_synced(ctl->needs[i]))
            return false;
    return true;
}

static int ctl_start_workers(gr_kube_ctl *ctl)
{
    ctl->threads = calloc((size_t)ctl->workers, sizeof *ctl->threads);
    if (!ctl->threads)
        return GR_ENOMEM;
    for (int i = 0; i < ctl->workers; i++) {
        if (pthread_create(&ctl->threads[i], NULL, worker, ctl) != 0)
            break;
        ctl->nthreads++;
    }
    atomic_store(&ctl->running, true);
    gr_log(GR_LOG_INFO, ctl->m->name, "Starting workers", GR_KV_STR("controller", ctl->name),
           GR_KV_INT("worker count", ctl->nthreads), GR_KV_END);
    return ctl->nthreads > 0 ? GR_OK : GR_EIO;
}

/* Stop intake, let in-flight reconciles finish, join. */
static void ctl_stop(gr_kube_ctl *ctl)
{
    atomic_store(&ctl->stopping, true);
    gr_kube_queue_shutdown(ctl->q);
    for (int i = 0; i < ctl->nthreads; i++)
        pthread_join(ctl->threads[i], NULL);
    free(ctl->threads);
    ctl->threads = NULL;
    ctl->nthreads = 0;
    atomic_store(&ctl->running, false);
}

static void ctl_free(gr_kube_ctl *ctl)
{
    if (!ctl)
        return;
    ctl_stop(ctl);
    gr_kube_queue_free(ctl->q);
    pthread_mutex_destroy(&ctl->mu);
    free(ctl->name);
    free(ctl);
}

/* ---- runnables ---------------------------------------------------------------- */

int gr_kube_mgr_add_runnable(gr_kube_mgr *m, const gr_kube_runnable_opts *o, gr_err *err)
{
    if (atomic_load(&m->started))
        return gr_err_set(err, GR_ESTATE, "manager: runnables must be added before start");
    if (!o || !o->name || !*o->name || !o->run)
        return gr_err_set(err, GR_EINVAL, "runnable: name and run are required");
    if (m->nrun >= GR_KUBE_MGR_MAX_RUNNABLES)
        return gr_err_set(err, GR_ETOOBIG, "manager: at most %d runnables",
                          GR_KUBE_MGR_MAX_RUNNABLES);
    runnable *r = &m->runs[m->nrun];
    memset(r, 0, sizeof *r);
    r->name = strdup(o->name);
    if (!r->name)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    r->always_on = o->always_on;
    r->run = o->run;
    r->ctx = o->ctx;
    m->nrun++;
    return GR_OK;
}

int gr_kube_mgr_on_free(gr_kube_mgr *m, void (*fn)(void *ctx), void *ctx, gr_err *err)
{
    if (!fn)
        return gr_err_set(err, GR_EINVAL, "manager: on_free needs a function");
    if (m->ncleanup >= GR_KUBE_MGR_MAX_CLEANUPS)
        return gr_err_set(err, GR_ETOOBIG, "manager: at most %d cleanups",
                          GR_KUBE_MGR_MAX_CLEANUPS);
    m->cleanups[m->ncleanup].fn = fn;
    m->cleanups[m->ncleanup].ctx = ctx;
    m->ncleanup++;
    return GR_OK;
}

static void *runnable_main(void *arg)
{
    runnable *r = arg;
    r->run(r->ctx, &r->stop);
    return NULL;
}

static bool all_caches_synced(gr_kube_mgr *m)
{
    for (size_t i = 0; i < m->ncache; i++)
        if (!gr_kube_cache_synced(m->caches[i]))
            return false;
    return true;
}

/* ---- readiness, metrics ------------------------------------------------------ */

int gr_kube_mgr_add_ready_check(gr_kube_mgr *m, const char *name, gr_kube_check_fn fn, void *ctx,
                                gr_err *err)
{
    if (!name || !*name || !fn)
        return gr_err_set(err, GR_EINVAL, "ready check: name and function are required");
    if (m->ncheck >= GR_KUBE_MGR_MAX_CHECKS)
        return gr_err_set(err, GR_ETOOBIG, "manager: at most %d readiness checks",
                          GR_KUBE_MGR_MAX_CHECKS);
    char *n = strdup(name);
    if (!n)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    m->checks[m->ncheck++] = (check_ent){n, fn, ctx};
    return GR_OK;
}

/* Fill up to max results; returns how many. */
static size_t ready_checks(gr_kube_mgr *m, gr_kube_check_result *r, size_t max)
{
    size_t n = 0;
    if (n < max) {
        r[n] = (gr_kube_check_result){.name = "shutdown", .ok = !atomic_load(&m->stopping)};
        if (!r[n].ok)
            snprintf(r[n].why, sizeof r[n].why, "the manager is shutting down");
        n++;
    }
    if (n < max) {
        r[n] = (gr_kube_check_result){.name = "informers", .ok = true};
        for (size_t i = 0; i < m->ncache; i++)
            if (!gr_kube_cache_synced(m->caches[i])) {
                r[n].ok = false;
                snprintf(r[n].why, sizeof r[n].why, "cache %.150s%s%.60s has not synced",
                         m->caches[i]->label, m->caches[i]->ns ? " in namespace " : "",
                         m->caches[i]->ns ? m->caches[i]->ns : "");
                break;
            }
        n++;
    }
    if (m->leader_elect && n < max) {
        r[n] = (gr_kube_check_result){.name = "leader-election", .ok = true};
        char holder[256] = "";
        if (m->leader)
            gr_kube_leader_holder(m->leader, holder, sizeof holder);
        if (!*holder && !atomic_load(&m->leading)) {
            r[n].ok = false;
            snprintf(r[n].why, sizeof r[n].why, "no leader known yet for lease %s/%s", m->lease_ns,
                     m->lease_name);
        }
        n++;
    }
    for (size_t i = 0; i < m->ncheck && n < max; i++) {
        r[n] = (gr_kube_check_result){.name = m->checks[i].name};
        r[n].ok = m->checks[i].fn(m->checks[i].ctx, r[n].why, sizeof r[n].why);
        n++;
    }
    return n;
}

bool gr_kube_mgr_ready(gr_kube_mgr *m, char *why, size_t why_sz)
{
    gr_kube_check_result r[GR_KUBE_MGR_MAX_CHECKS + 3];
    size_t n = ready_checks(m, r, sizeof r / sizeof r[0]);
    for (size_t i = 0; i < n; i++)
        if (!r[i].ok) {
            if (why && why_sz)
                snprintf(why, why_sz, "%s: %s", r[i].name, r[i].why);
            return false;
        }
    if (why && why_sz)
        *why = '\0';
    return true;
}

bool gr_kube_mgr_is_leader(gr_kube_mgr *m)
{
    return atomic_load(&m->leading);
}

int gr_kube_mgr_metrics_text(gr_kube_mgr *m, gr_buf *out)
{
    gr_kube_ctl_metrics cm[GR_KUBE_MGR_MAX_CTLS];
    gr_kube_cache_metrics ch[GR_KUBE_MGR_MAX_CACHES];
    for (size_t i = 0; i < m->nctl; i++) {
        gr_kube_ctl *c = m->ctls[i];
        pthread_mutex_lock(&c->mu);
        cm[i] = c->met;
        pthread_mutex_unlock(&c->mu);
        cm[i].depth = gr_kube_queue_len(c->q);
        cm[i].active_workers = atomic_load(&c->active);
    }
    for (size_t i = 0; i < m->ncache; i++) {
        gr_kube_cache *c = m->caches[i];
        ch[i] = (gr_kube_cache_metrics){.resource = c->label,
                                        .ns = c->ns ? c->ns : "",
                                        .synced = gr_kube_cache_synced(c),
                                        .present = gr_kube_cache_present(c),
                                        .objects = gr_kube_store_len(cache_store(c))};
    }
    gr_kube_metrics_snapshot s = {.ctls = cm,
                                  .nctl = m->nctl,
                                  .caches = ch,
                                  .ncache = m->ncache,
                                  .leader_election = m->leader_elect,
                                  .lease_name = m->lease_name,
                                  .is_leader = atomic_load(&m->leading),
                                  .client = m->c != NULL,
                                  .client_requests = m->c ? gr_kube_client_requests(m->c) : 0,
                                  .client_connections =
                                      m->c ? gr_kube_client_connections(m->c) : 0};
    int rc = gr_kube_metrics_render(&s, out);
    for (size_t i = 0; i < m->ncollector && rc == GR_OK; i++)
        rc = m->collectors[i].fn(m->collectors[i].ctx, out);
    return rc;
}

int gr_kube_mgr_add_metrics(gr_kube_mgr *m, gr_kube_metrics_fn fn, void *ctx, gr_err *err)
{
    if (atomic_load(&m->started))
        return gr_err_set(err, GR_ESTATE, "manager: metrics collectors must be added before start");
    if (!fn)
        return gr_err_set(err, GR_EINVAL, "metrics collector: fn is required");
    if (m->ncollector >= GR_KUBE_MGR_MAX_COLLECTORS)
        return gr_err_set(err, GR_ETOOBIG, "manager: at most %d metrics collectors",
                          GR_KUBE_MGR_MAX_COLLECTORS);
    m->collectors[m->ncollector].fn = fn;
    m->collectors[m->ncollector].ctx = ctx;
    m->ncollector++;
    return GR_OK;
}

static int serve(gr_kube_mgr *m, bool probes, bool metrics, const char *path, const char *query,
                 gr_buf *body, int *http, const char **ctype)
{
    if (probes && (strcmp(path, "/healthz") == 0 || strcmp(path, "/livez") == 0)) {
        gr_kube_check_result r = {.name = "ping", .ok = true};
        return gr_kube_probe_render(&r, 1, strstr(query, "verbose") != NULL, body, http);
    }
    if (probes && strcmp(path, "/readyz") == 0) {
        gr_kube_check_result r[GR_KUBE_MGR_MAX_CHECKS + 3];
        size_t n = ready_checks(m, r, sizeof r / sizeof r[0]);
        return gr_kube_probe_render(r, n, strstr(query, "verbose") != NULL, body, http);
    }
    if (metrics && strcmp(path, "/metrics") == 0) {
        *ctype = "text/plain; version=0.0.4; charset=utf-8";
        *http = 200;
        return gr_kube_mgr_metrics_text(m, body);
    }
    *http = 404;
    return gr_buf_puts(body, "404 page not found\n");
}

static int serve_probe(void *ctx, const char *path, const char *query, gr_buf *body, int *http,
                       const char **ctype)
{
    gr_kube_mgr *m = ctx;
    bool shared = m->metrics_addr && m->probe_addr && strcmp(m->metrics_addr, m->probe_addr) == 0;
    return serve(m, true, shared, path, query, body, http, ctype);
}

static int serve_metrics(void *ctx, const char *path, const char *query, gr_buf *body, int *http,
                         const char **ctype)
{
    return serve(ctx, false, true, path, query, body, http, ctype);
}

int gr_kube_mgr_probe_port(gr_kube_mgr *m)
{
    return gr_kube_http_port(m->probe);
}

int gr_kube_mgr_metrics_port(gr_kube_mgr *m)
{
    bool shared = m->metrics_addr && m->probe_addr && strcmp(m->metrics_addr, m->probe_addr) == 0;
    return gr_kube_http_port(shared ? m->probe : m->metrics);
}

/* ---- leader election ----------------------------------------------------------- */

static void started_leading(void *ctx)
{
    gr_kube_mgr *m = ctx;
    atomic_store(&m->leading, true);
    gr_log(GR_LOG_INFO, m->name, "successfully acquired lease", GR_KV_STR("lease", m->lease_name),
           GR_KV_STR("namespace", m->lease_ns), GR_KV_STR("identity", m->identity), GR_KV_END);
}

static void stopped_leading(void *ctx)
{
    gr_kube_mgr *m = ctx;
    bool was = atomic_exchange(&m->leading, false);
    if (was && !atomic_load(&m->stopping)) {
        atomic_store(&m->lost, true);
        gr_log(GR_LOG_ERROR, m->name, "leader election lost", GR_KV_STR("lease", m->lease_name),
               GR_KV_STR("identity", m->identity), GR_KV_END);
    }
}

static void new_leader(void *ctx, const char *identity)
{
    gr_kube_mgr *m = ctx;
    gr_log(GR_LOG_INFO, m->name, "new leader elected", GR_KV_STR("lease", m->lease_name),
           GR_KV_STR("leader", identity), GR_KV_END);
}

/* ---- runner: starts workers when their conditions hold, re-checks optional
 * resources --------------------------------------------------------------------- */

static void *runner(void *arg)
{
    gr_kube_mgr *m = arg;
    int64_t next_recheck = gr_kube_mono_ns() + m->recheck_ns;
    while (!atomic_load(&m->runner_stop)) {
        for (size_t i = 0; i < m->nctl; i++) {
            gr_kube_ctl *c = m->ctls[i];
            if (atomic_load(&c->running) || atomic_load(&c->stopping))
                continue;
            if (!c->always_on && !atomic_load(&m->leading))
                continue;
            if (!ctl_caches_synced(c))
                continue;
            if (ctl_start_workers(c) != GR_OK)
                gr_log(GR_LOG_ERROR, m->name, "cannot start workers",
                       GR_KV_STR("controller", c->name), GR_KV_END);
        }
        for (size_t i = 0; i < m->nrun; i++) {
            runnable *r = &m->runs[i];
            if (r->started || (!r->always_on && !atomic_load(&m->leading)) || !all_caches_synced(m))
                continue;
            if (pthread_create(&r->th, NULL, runnable_main, r) == 0) {
                r->started = true;
                gr_log(GR_LOG_INFO, m->name, "Starting runnable", GR_KV_STR("runnable", r->name),
                       GR_KV_END);
            }
        }
        int64_t now = gr_kube_mono_ns();
        if (now >= next_recheck) {
            next_recheck = now + m->recheck_ns;
            for (size_t i = 0; i < m->ncache; i++) {
                gr_kube_cache *c = m->caches[i];
                if (!c->optional || atomic_load(&c->present))
                    continue;
                bool present = false;
                gr_err e;
                gr_err_clear(&e);
                if (discover(c, &present, &e) != GR_OK) {
                    gr_log(GR_LOG_DEBUG, m->name, "discovery failed", GR_KV_STR("error", e.msg),
                           GR_KV_END);
                    continue;
                }
                if (present && cache_start(c, &e) != GR_OK)
                    gr_log(GR_LOG_ERROR, m->name, "cannot start informer",
                           GR_KV_STR("error", e.msg), GR_KV_END);
            }
        }
        gr_kube_sleep_ns(RUNNER_TICK_NS, &m->runner_stop);
    }
    return NULL;
}

/* ---- lifecycle ------------------------------------------------------------------ */

int gr_kube_mgr_start(gr_kube_mgr *m, gr_err *err)
{
    if (atomic_exchange(&m->started, true))
        return gr_err_set(err, GR_ESTATE, "manager: already started");
    bool shared = m->metrics_addr && m->probe_addr && strcmp(m->metrics_addr, m->probe_addr) == 0;
    bool off;
    uint32_t ip;
    int port;
    int rc;
    gr_kube_bind_parse(m->probe_addr, &off, &ip, &port, NULL);
    if (!off && (rc = gr_kube_http_start(m->probe_addr, serve_probe, m, &m->probe, err)) != GR_OK) {
        gr_err_prefix(err, "health probes: ");
        return rc;
    }
    gr_kube_bind_parse(m->metrics_addr, &off, &ip, &port, NULL);
    if (!off && !shared &&
        (rc = gr_kube_http_start(m->metrics_addr, serve_metrics, m, &m->metrics, err)) != GR_OK) {
        gr_err_prefix(err, "metrics: ");
        return rc;
    }
    for (size_t i = 0; i < m->ncache; i++) {
        gr_kube_cache *c = m->caches[i];
        if (c->optional) {
            bool present = false;
            if ((rc = discover(c, &present, err)) != GR_OK) {
                gr_err_prefix(err, "discovery of %s: ", c->label);
                return rc;
            }
            if (!present) {
                gr_log(GR_LOG_INFO, m->name,
                       "optional resource not served; treating it as empty and re-checking",
                       GR_KV_STR("resource", c->label), GR_KV_END);
                continue;
            }
        }
        if ((rc = cache_start(c, err)) != GR_OK)
            return rc;
    }
    if (m->leader_elect) {
        gr_kube_leader_opts lo = {.ns = m->lease_ns,
                                  .name = m->lease_name,
                                  .identity = m->identity,
                                  .lease_duration_ns = m->lease_ns_dur,
                                  .renew_deadline_ns = m->renew_ns,
                                  .retry_period_ns = m->retry_ns,
                                  .on_started_leading = started_leading,
                                  .on_stopped_leading = stopped_leading,
                                  .on_new_leader = new_leader,
                                  .ctx = m};
        gr_log(GR_LOG_INFO, m->name, "attempting to acquire leader lease",
               GR_KV_STR("lease", m->lease_name), GR_KV_STR("namespace", m->lease_ns),
               GR_KV_STR("identity", m->identity), GR_KV_END);
        if ((rc = gr_kube_leader_start(m->c, &lo, &m->leader, err)) != GR_OK)
            return rc;
    } else {
        atomic_store(&m->leading, true);
    }
    if (pthread_create(&m->runner, NULL, runner, m) != 0)
        return gr_err_set(err, GR_EIO, "manager: cannot start the runner thread");
    m->runner_started = true;
    return GR_OK;
}

int gr_kube_mgr_wait(gr_kube_mgr *m, const atomic_int *stop, gr_err *err)
{
    for (;;) {
        if (atomic_load(&m->lost))
            return gr_err_set(err, GR_ESTATE, "leader election lost (lease %s/%s)", m->lease_ns,
                              m->lease_name);
        if (stop && atomic_load(stop))
            return GR_OK;
        gr_kube_sleep_ns(RUNNER_TICK_NS, NULL);
    }
}

void gr_kube_mgr_stop(gr_kube_mgr *m)
{
    pthread_mutex_lock(&m->stop_mu);
    if (atomic_load(&m->stopped)) {
        pthread_mutex_unlock(&m->stop_mu);
        return;
    }
    atomic_store(&m->stopping, true); /* /readyz turns false */
    gr_log(GR_LOG_INFO, m->name, "Stopping and waiting for non leader election runnables",
           GR_KV_END);
    if (m->runner_started) {
        atomic_store(&m->runner_stop, 1);
        pthread_join(m->runner, NULL);
        m->runner_started = false;
    }
    for (size_t i = 0; i < m->nrun; i++) {
        runnable *r = &m->runs[i];
        atomic_store(&r->stop, 1);
        if (r->started)
            pthread_join(r->th, NULL);
        r->started = false;
    }
    for (size_t i = 0; i < m->nctl; i++)
        ctl_stop(m->ctls[i]); /* intake stops; in-flight reconciles finish */
    for (size_t i = 0; i < m->ncache; i++) {
        gr_kube_cache *c = m->caches[i];
        pthread_mutex_lock(&c->mu);
        gr_kube_informer *inf = c->inf;
        pthread_mutex_unlock(&c->mu);
        if (inf)
            gr_kube_informer_stop(inf);
    }
    if (m->leader) {
        gr_kube_leader_stop(m->leader); /* releases the lease */
        m->leader = NULL;
    }
    atomic_store(&m->leading, false);
    gr_kube_http_stop(m->probe);
    gr_kube_http_stop(m->metrics);
    m->probe = m->metrics = NULL;
    atomic_store(&m->stopped, true);
    gr_log(GR_LOG_INFO, m->name, "All workers finished", GR_KV_END);
    pthread_mutex_unlock(&m->stop_mu);
}

void gr_kube_mgr_free(gr_kube_mgr *m)
{
    if (!m)
        return;
    gr_kube_mgr_stop(m);
    for (size_t i = 0; i < m->nctl; i++)
        ctl_free(m->ctls[i]);
    for (size_t i = 0; i < m->ncache; i++)
        cache_free(m->caches[i]);
    for (size_t i = 0; i < m->ncheck; i++)
        free(m->checks[i].name);
    for (size_t i = 0; i < m->nrun; i++)
        free(m->runs[i].name);
    for (size_t i = m->ncleanup; i-- > 0;)
        m->cleanups[i].fn(m->cleanups[i].ctx);
    gr_kube_client_free(m->c);
    free(m->name);
    free(m->probe_addr);
    free(m->metrics_addr);
    free(m->lease_ns);
    free(m->lease_name);
    free(m->identity);
    pthread_mutex_destroy(&m->stop_mu);
    free(m);
}

/* ---- leader-election identity ------------------------------------------- */

#define SA_NAMESPACE_FILE "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

void gr_kube_mgr_lease_namespace(const char *flag, char *out, size_t n)
{
    if (flag && *flag) {
        snprintf(out, n, "%s", flag);
        return;
    }
    const char *env = getenv("POD_NAMESPACE");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return;
    }
    char path[512];
    const char *sa = getenv("GR_KUBE_SA_DIR");
    if (sa && *sa)
        snprintf(path, sizeof path, "%s/namespace", sa);
    else
        snprintf(path, sizeof path, "%s", SA_NAMESPACE_FILE);
    char *buf = NULL;
    size_t r = 0;
    if (gr_file_read(path, 256, &buf, &r, NULL) == GR_OK) {
        while (r && (buf[r - 1] == '\n' || buf[r - 1] == ' ' || buf[r - 1] == '\r'))
            buf[--r] = '\0';
        if (r) {
            snprintf(out, n, "%s", buf);
            free(buf);
            return;
        }
        free(buf);
    }
    snprintf(out, n, "default");
}

void gr_kube_mgr_identity(const char *fallback, char *out, size_t n)
{
    char host[256] = "";
    const char *pod = getenv("POD_NAME");
    if (pod && *pod)
        snprintf(host, sizeof host, "%s", pod);
    else if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "%s", fallback ? fallback : "gpuready");
    host[sizeof host - 1] = '\0';
    unsigned char rnd[16] = {0};
    size_t got = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t k = read(fd, rnd, sizeof rnd);
        got = k > 0 ? (size_t)k : 0;
        close(fd);
    }
    if (got != sizeof rnd) {
        unsigned s = (unsigned)getpid() ^ (unsigned)gr_kube_mono_ns();
        for (size_t i = 0; i < sizeof rnd; i++)
            rnd[i] = (unsigned char)rand_r(&s);
    }
    rnd[6] = (unsigned char)((rnd[6] & 0x0f) | 0x40);
    rnd[8] = (unsigned char)((rnd[8] & 0x3f) | 0x80);
    snprintf(out, n, "%s_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             host, rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7], rnd[8], rnd[9],
             rnd[10], rnd[11], rnd[12], rnd[13], rnd[14], rnd[15]);
}
