/* gr_casync_ctl.c — the CA bundle sync controller on the kube client (see
 * gr_casync.h): admission-time ensure, a namespace informer + work queue for
 * labelled namespaces, and the ticker that follows CA rotations. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gr_casync.h"
#include "gr_file.h"
#include "gr_kube_informer.h"
#include "gr_kube_mgr.h"
#include "gr_kube_queue.h"
#include "gr_log.h"

#define MOD "casync"

/* Namespaces whose copy this process verified for the current CA: bounded so
 * a cluster with very many namespaces costs at most this many names. */
#define CACHE_MAX 65536

typedef struct strset {
    char **v;
    size_t n, cap;
} strset;

struct gr_casync {
    gr_kube_client *kc;
    char *ca_file;
    char *ns_selector;
    int64_t tick_ns;
    int workers;

    pthread_mutex_t mu;
    pthread_mutex_t tick_mu; /* one tick at a time (ticker thread vs. gr_casync_tick) */
    pthread_cond_t cv;       /* CLOCK_MONOTONIC; signalled on stop */
    char *ca;                /* current CA text (owned) */
    uint64_t gen;            /* bumped on every CA change */
    strset ok;               /* namespaces verified for `gen` */
    strset failed;           /* namespaces to retry on the next tick */
    gr_casync_stats st;
    bool stopping;

    gr_kube_informer *inf;
    gr_kube_queue *q;
    /* on the controller runtime (gr_casync_attach) instead of inf/q/ticker */
    gr_kube_mgr *mgr;
    gr_kube_cache *nscache;
    gr_kube_ctl *mctl;
    gr_kube_controller *ctl;
    pthread_t ticker;
    bool ticker_started;
};

/* ------------------------------------------------------------- sets */

static bool set_has(const strset *s, const char *v)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], v) == 0)
            return true;
    return false;
}

static void set_add(strset *s, const char *v)
{
    if (set_has(s, v) || s->n >= CACHE_MAX)
        return;
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 16;
        char **nv = realloc(s->v, nc * sizeof *nv);
        if (!nv)
            return; /* a cache: losing an entry costs one more API call */
        s->v = nv;
        s->cap = nc;
    }
    char *d = strdup(v);
    if (d)
        s->v[s->n++] = d;
}

static void set_del(strset *s, const char *v)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], v) == 0) {
            free(s->v[i]);
            s->v[i] = s->v[--s->n];
            return;
        }
}

static void set_clear(strset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    s->n = 0;
}

static void set_free(strset *s)
{
    set_clear(s);
    free(s->v);
    s->v = NULL;
    s->cap = 0;
}

/* -------------------------------------------------------------- CA */

static int read_ca(const char *path, gr_buf *out, gr_err *err)
{
    int rc = gr_file_append(path, out, err);
    if (rc == GR_ETOOBIG)
        rc = gr_err_set(err, GR_ETOOBIG,
                        "healthPublish.caFile: %s: larger than %zu bytes (a ConfigMap "
                        "holds at most 1 MiB)",
                        path, GR_CASYNC_CA_MAX);
    else if (rc != GR_OK && rc != GR_ENOMEM) {
        char why[GR_ERR_MSG_MAX];
        snprintf(why, sizeof why, "%.*s", (int)sizeof why - 1, err ? err->msg : path);
        rc = gr_err_set(err, GR_EIO,
                        "healthPublish.caFile: %s; mount the CA Secret of the deployment "
                        "platform connector there",
                        why);
    }
    if (rc == GR_OK && (rc = gr_casync_validate_ca(gr_buf_cstr(out), out->len, path, err)) != GR_OK)
        gr_err_prefix(err, "healthPublish.caFile: ");
    return rc;
}

/* Re-read the CA file; *changed when the bytes differ from the current CA. */
static int reload_ca(gr_casync *s, bool *changed, gr_err *err)
{
    gr_buf b = GR_BUF_INIT(GR_CASYNC_CA_MAX);
    int rc = read_ca(s->ca_file, &b, err);
    *changed = false;
    if (rc != GR_OK) {
        gr_buf_free(&b);
        return rc;
    }
    pthread_mutex_lock(&s->mu);
    if (!s->ca || strcmp(s->ca, gr_buf_cstr(&b)) != 0) {
        char *nc = gr_buf_steal(&b, NULL);
        if (!nc) {
            pthread_mutex_unlock(&s->mu);
            gr_buf_free(&b);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        free(s->ca);
        s->ca = nc;
        s->gen++;
        s->st.ca_loads++;
        set_clear(&s->ok);
        *changed = true;
    }
    pthread_mutex_unlock(&s->mu);
    gr_buf_free(&b);
    return GR_OK;
}

/* A private copy of the current CA and its generation. */
static char *current_ca(gr_casync *s, uint64_t *gen)
{
    pthread_mutex_lock(&s->mu);
    char *ca = s->ca ? strdup(s->ca) : NULL;
    *gen = s->gen;
    pthread_mutex_unlock(&s->mu);
    return ca;
}

/* ------------------------------------------------------------ writes */

static void count(gr_casync *s, uint64_t *field)
{
    pthread_mutex_lock(&s->mu);
    (*field)++;
    pthread_mutex_unlock(&s->mu);
}

/* gr_kube_update_retry() mutation: the freshly read copy into the desired
 * one, or GR_ECANCELED when it already is (another writer got there). */
static int mutate_desired(json_t *obj, void *ctx, gr_err *err)
{
    const char *ca = *(const char **)ctx;
    if (!gr_casync_needs_update(obj, ca))
        return GR_ECANCELED;
    return gr_casync_make_desired(obj, ca, err);
}

/* Rewrite `cm` (as read) into the desired copy and PUT it (compare-and-swap
 * on its resourceVersion). On 409 Conflict (the copy changed since it was
 * read: the ticker and an explicit tick, an admission, a user or a second
 * replica wrote it) re-read it and rewrite it only while it still differs
 * (client-go RetryOnConflict); GR_OK only when the copy is now the desired
 * one, an error when it did not converge. */
static int rewrite(gr_casync *s, json_t *cm, const char *ns, const char *ca, gr_err *err)
{
    int rc = gr_casync_make_desired(cm, ca, err);
    if (rc != GR_OK)
        return rc;
    json_object_set_new(cm, "apiVersion", json_string("v1"));
    json_object_set_new(cm, "kind", json_string("ConfigMap"));
    gr_kube_status st;
    rc = gr_kube_update(s->kc, &GR_KUBE_CONFIGMAPS, ns, cm, NULL, NULL, &st, err);
    if (rc == GR_ECONFLICT && st.reason == GR_KUBE_REASON_CONFLICT) {
        int writes = 0;
        rc = gr_kube_update_retry(s->kc, &GR_KUBE_CONFIGMAPS, ns, GR_CASYNC_CM_NAME, NULL,
                                  mutate_desired, &ca, NULL, &writes, &st, err);
        if (rc == GR_OK && writes == 0)
            return GR_OK; /* already the desired copy: converged, nothing written */
    }
    if (rc == GR_OK) {
        count(s, &s->st.updated);
        gr_log(GR_LOG_INFO, MOD, "updated CA bundle ConfigMap", GR_KV_STR("namespace", ns),
               GR_KV_STR("configMap", GR_CASYNC_CM_NAME), GR_KV_END);
    }
    return rc;
}

/* Ensure(ns): get → create → on AlreadyExists re-get → update when data or
 * labels differ. *gone is set when the namespace does not exist. */
static int ensure_api(gr_casync *s, const char *ns, const char *ca, bool *gone, gr_err *err)
{
    *gone = false;
    count(s, &s->st.ensures);
    json_t *cm = NULL;
    gr_kube_status st;
    int rc = gr_kube_get(s->kc, &GR_KUBE_CONFIGMAPS, ns, GR_CASYNC_CM_NAME, NULL, &cm, &st, err);
    if (rc == GR_ENOTFOUND) {
        json_t *want = gr_casync_desired(ns, ca);
        if (!want)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        rc = gr_kube_create(s->kc, &GR_KUBE_CONFIGMAPS, ns, want, NULL, NULL, &st, err);
        json_decref(want);
        if (rc == GR_OK) {
            count(s, &s->st.created);
            gr_log(GR_LOG_INFO, MOD, "created CA bundle ConfigMap", GR_KV_STR("namespace", ns),
                   GR_KV_STR("configMap", GR_CASYNC_CM_NAME), GR_KV_END);
            return GR_OK;
        }
        if (rc == GR_ENOTFOUND) { /* the namespace itself is gone */
            *gone = true;
            return rc;
        }
        if (!(rc == GR_ECONFLICT && st.reason == GR_KUBE_REASON_ALREADY_EXISTS))
            return rc;
        rc = gr_kube_get(s->kc, &GR_KUBE_CONFIGMAPS, ns, GR_CASYNC_CM_NAME, NULL, &cm, &st, err);
    }
    if (rc != GR_OK)
        return rc;
    if (gr_casync_needs_update(cm, ca))
        rc = rewrite(s, cm, ns, ca, err);
    json_decref(cm);
    return rc;
}

/* Ensure with the cache; on failure remember ns for the next tick. */
static int ensure_ns(gr_casync *s, const char *ns, bool use_cache, bool *gone, gr_err *err)
{
    *gone = false;
    uint64_t gen;
    pthread_mutex_lock(&s->mu);
    if (use_cache && set_has(&s->ok, ns)) {
        s->st.cache_hits++;
        pthread_mutex_unlock(&s->mu);
        return GR_OK;
    }
    pthread_mutex_unlock(&s->mu);
    char *ca = current_ca(s, &gen);
    if (!ca)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    int rc = ensure_api(s, ns, ca, gone, err);
    free(ca);
    pthread_mutex_lock(&s->mu);
    if (rc == GR_OK) {
        set_del(&s->failed, ns);
        if (gen == s->gen)
            set_add(&s->ok, ns);
    } else {
        s->st.failures++;
        set_del(&s->ok, ns);
        if (*gone)
            set_del(&s->failed, ns);
        else
            set_add(&s->failed, ns);
    }
    pthread_mutex_unlock(&s->mu);
    if (rc != GR_OK)
        gr_err_prefix(err, "namespace %s: ConfigMap %s: ", ns, GR_CASYNC_CM_NAME);
    return rc;
}

int gr_casync_ensure(gr_casync *s, const char *ns, gr_err *err)
{
    if (!ns || !*ns)
        return gr_err_set(err, GR_EINVAL, "namespace: must be set");
    bool gone;
    int rc = ensure_ns(s, ns, true, &gone, err);
    if (rc != GR_OK && !gone && s->q)
        gr_kube_queue_add_rate_limited(s->q, ns);
    else if (rc != GR_OK && !gone && s->mctl)
        gr_kube_ctl_enqueue_after(s->mctl, ns, 1000000000LL);
    return rc;
}

void gr_casync_enqueue(gr_casync *s, const char *ns)
{
    if (!s || !ns || !*ns)
        return;
    pthread_mutex_lock(&s->mu);
    bool known = set_has(&s->ok, ns);
    pthread_mutex_unlock(&s->mu);
    if (known)
        return;
    if (s->mctl)
        gr_kube_ctl_enqueue(s->mctl, ns);
    else if (s->q)
        gr_kube_queue_add(s->q, ns);
}

/* ------------------------------------------------------------- tick */

static bool namespace_listed(const json_t *nsset, const char *ns)
{
    return json_object_get(nsset, ns) != NULL;
}

static int tick_locked(gr_casync *s, gr_err *err);

/* Ticks are serialized: a tick that starts while another runs waits for it,
 * so two ticks never write copies from different CA snapshots at once. */
int gr_casync_tick(gr_casync *s, gr_err *err)
{
    pthread_mutex_lock(&s->tick_mu);
    int rc = tick_locked(s, err);
    pthread_mutex_unlock(&s->tick_mu);
    return rc;
}

static int tick_locked(gr_casync *s, gr_err *err)
{
    gr_err e;
    int first = GR_OK;
    bool changed = false;
    count(s, &s->st.ticks);
    int rc = reload_ca(s, &changed, &e);
    if (rc != GR_OK) {
        count(s, &s->st.ca_errors);
        gr_log(GR_LOG_ERROR, MOD, "CA bundle not synced; keeping every copy as it is",
               GR_KV_STR("caFile", s->ca_file), GR_KV_STR("error", e.msg), GR_KV_END);
        if (err)
            *err = e;
        return rc;
    }
    if (changed)
        gr_log(GR_LOG_INFO, MOD, "CA bundle changed; rewriting every copy",
               GR_KV_STR("caFile", s->ca_file), GR_KV_END);
    uint64_t gen;
    char *ca = current_ca(s, &gen);
    json_t *seen = json_object();
    if (!ca || !seen) {
        free(ca);
        json_decref(seen);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    /* Every labelled copy, cluster-wide (PF-174). */
    gr_kube_opts lo = {.label_selector = GR_CASYNC_COPY_SELECTOR};
    json_t *list = NULL;
    rc = gr_kube_list_all(s->kc, &GR_KUBE_CONFIGMAPS, NULL, &lo, &list, NULL, &e);
    if (rc != GR_OK) {
        gr_log(GR_LOG_WARN, MOD, "listing CA bundle copies failed", GR_KV_STR("error", e.msg),
               GR_KV_END);
        if (err)
            *err = e;
        first = rc;
    } else {
        size_t i;
        json_t *cm;
        json_array_foreach(json_object_get(list, "items"), i, cm)
        {
            const char *ns = gr_kube_obj_meta(cm, "namespace");
            const char *name = gr_kube_obj_meta(cm, "name");
            if (!ns || !name || strcmp(name, GR_CASYNC_CM_NAME) != 0)
                continue;
            json_object_set_new(seen, ns, json_true());
            if (!gr_casync_needs_update(cm, ca))
                continue;
            if ((rc = rewrite(s, cm, ns, ca, &e)) != GR_OK) {
                gr_log(GR_LOG_WARN, MOD, "updating CA bundle copy failed; retrying next tick",
                       GR_KV_STR("namespace", ns), GR_KV_STR("error", e.msg), GR_KV_END);
                pthread_mutex_lock(&s->mu);
                s->st.failures++;
                set_add(&s->failed, ns);
                set_del(&s->ok, ns);
                pthread_mutex_unlock(&s->mu);
                if (first == GR_OK && err)
                    *err = e;
                if (first == GR_OK)
                    first = rc;
            }
        }
    }
    json_decref(list);
    /* Namespaces to ensure: the failed ones, and (when the list worked)
     * every selected namespace without a labelled copy. */
    json_t *todo = json_object();
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; todo && i < s->failed.n; i++)
        json_object_set_new(todo, s->failed.v[i], json_true());
    pthread_mutex_unlock(&s->mu);
    if (todo && (s->inf || s->nscache) && first == GR_OK) {
        json_t *keys = NULL;
        int krc = GR_OK;
        if (s->inf) {
            krc = gr_kube_store_keys(gr_kube_informer_store(s->inf), &keys, NULL);
        } else {
            json_t *items = NULL;
            krc = gr_kube_cache_list(s->nscache, NULL, NULL, &items, NULL);
            keys = krc == GR_OK ? json_array() : NULL;
            size_t i;
            json_t *it;
            json_array_foreach(items, i, it)
            {
                const char *n = gr_kube_obj_meta(it, "name");
                if (n && keys)
                    json_array_append_new(keys, json_string(n));
            }
            json_decref(items);
        }
        if (krc == GR_OK && keys) {
            size_t i;
            json_t *k;
            json_array_foreach(keys, i, k)
            {
                const char *ns = json_string_value(k);
                if (ns && !namespace_listed(seen, ns)) {
                    pthread_mutex_lock(&s->mu);
                    set_del(&s->ok, ns); /* deleted or unlabelled by someone */
                    pthread_mutex_unlock(&s->mu);
                    json_object_set_new(todo, ns, json_true());
                }
            }
        }
        json_decref(keys);
    }
    const char *ns;
    json_t *v;
    json_object_foreach(todo, ns, v)
    {
        bool gone;
        if ((rc = ensure_ns(s, ns, false, &gone, &e)) != GR_OK && !gone) {
            gr_log(GR_LOG_WARN, MOD, "ensuring CA bundle failed; retrying next tick",
                   GR_KV_STR("namespace", ns), GR_KV_STR("error", e.msg), GR_KV_END);
            if (first == GR_OK && err)
                *err = e;
            if (first == GR_OK)
                first = rc;
        }
    }
    json_decref(todo);
    json_decref(seen);
    free(ca);
    return first;
}

/* ------------------------------------------------------ controller */

static int reconcile(void *ctx, const char *key, int64_t *requeue_after_ns, gr_err *err)
{
    (void)requeue_after_ns;
    gr_casync *s = ctx;
    bool gone;
    int rc = ensure_ns(s, key, true, &gone, err);
    return gone ? GR_OK : rc;
}

static void on_add(void *ctx, const json_t *obj)
{
    gr_casync *s = ctx;
    const char *name = gr_kube_obj_meta(obj, "name");
    if (name)
        gr_kube_queue_add(s->q, name);
}

static void on_update(void *ctx, const json_t *old_obj, const json_t *new_obj)
{
    (void)old_obj;
    on_add(ctx, new_obj);
}

static void on_delete(void *ctx, const json_t *obj)
{
    gr_casync *s = ctx;
    const char *name = gr_kube_obj_meta(obj, "name");
    if (!name)
        return;
    gr_kube_queue_forget(s->q, name);
    pthread_mutex_lock(&s->mu);
    set_del(&s->ok, name);
    set_del(&s->failed, name);
    pthread_mutex_unlock(&s->mu);
}

static int trim_ns(json_t **obj, void *ctx)
{
    (void)ctx;
    static const char *const keep[] = {"/metadata/name", "/metadata/resourceVersion",
                                       "/metadata/uid"};
    json_t *t = gr_kube_project(*obj, keep, 3);
    if (!t)
        return GR_ENOMEM;
    json_decref(*obj);
    *obj = t;
    return GR_OK;
}

static void *ticker_main(void *arg)
{
    gr_casync *s = arg;
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t dl =
            gr_casync_next_tick((int64_t)now.tv_sec * 1000000000 + now.tv_nsec, s->tick_ns);
        struct timespec ts = {.tv_sec = dl / 1000000000, .tv_nsec = dl % 1000000000};
        pthread_mutex_lock(&s->mu);
        while (!s->stopping) {
            if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT)
                break;
        }
        bool stop = s->stopping;
        pthread_mutex_unlock(&s->mu);
        if (stop)
            break;
        gr_casync_tick(s, NULL); /* logs its own errors */
    }
    return NULL;
}

int gr_casync_new(const gr_casync_opts *o, gr_casync **out, gr_err *err)
{
    *out = NULL;
    if (!o || !o->client)
        return gr_err_set(err, GR_EINVAL, "CA bundle sync: a Kubernetes client is required");
    gr_casync *s = calloc(1, sizeof *s);
    if (!s)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    s->kc = o->client;
    s->ca_file = strdup(o->ca_file && *o->ca_file ? o->ca_file : GR_CASYNC_DEFAULT_CA_FILE);
    s->ns_selector = strdup(o->ns_selector ? o->ns_selector : GR_CASYNC_DEFAULT_NS_SELECTOR);
    s->tick_ns = o->tick_ns > 0 ? o->tick_ns : GR_CASYNC_DEFAULT_TICK_NS;
    s->workers = o->workers > 0 ? o->workers : 2;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->tick_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (!s->ca_file || !s->ns_selector) {
        gr_casync_free(s);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    bool changed;
    int rc = reload_ca(s, &changed, err);
    if (rc != GR_OK) {
        gr_casync_free(s);
        return rc;
    }
    *out = s;
    return GR_OK;
}

int gr_casync_start(gr_casync *s, gr_err *err)
{
    int rc;
    if (s->q)
        return gr_err_set(err, GR_ESTATE, "CA bundle sync: already started");
    if ((rc = gr_kube_queue_new(NULL, &s->q, err)) != GR_OK ||
        (rc = gr_kube_controller_start("casync", s->q, s->workers, reconcile, s, &s->ctl, err)) !=
            GR_OK)
        return rc;
    gr_kube_informer_opts io = {0};
    io.gvr = GR_KUBE_NAMESPACES;
    io.label_selector = *s->ns_selector ? s->ns_selector : NULL;
    io.transform = trim_ns;
    io.handlers = (gr_kube_handlers){on_add, on_update, on_delete, s};
    if ((rc = gr_kube_informer_new(s->kc, &io, &s->inf, err)) != GR_OK ||
        (rc = gr_kube_informer_start(s->inf, err)) != GR_OK)
        return rc;
    if (pthread_create(&s->ticker, NULL, ticker_main, s) != 0)
        return gr_err_set(err, GR_EIO, "CA bundle sync: cannot start the ticker thread");
    s->ticker_started = true;
    gr_log(GR_LOG_INFO, MOD, "CA bundle sync started", GR_KV_STR("caFile", s->ca_file),
           GR_KV_STR("namespaceSelector", s->ns_selector),
           GR_KV_INT("tickMs", s->tick_ns / 1000000), GR_KV_END);
    return GR_OK;
}

/* ---------------------------------------------------- on the runtime */

static size_t map_name(void *ctx, const json_t *obj, char (*keys)[GR_KUBE_KEY_MAX], size_t max)
{
    (void)ctx;
    const char *name = gr_kube_obj_meta(obj, "name");
    if (!name || !max || strlen(name) >= GR_KUBE_KEY_MAX)
        return 0;
    snprintf(keys[0], GR_KUBE_KEY_MAX, "%s", name);
    return 1;
}

static void mgr_ns_delete(void *ctx, const json_t *obj)
{
    gr_casync *s = ctx;
    const char *name = gr_kube_obj_meta(obj, "name");
    if (!name)
        return;
    pthread_mutex_lock(&s->mu);
    set_del(&s->ok, name);
    set_del(&s->failed, name);
    pthread_mutex_unlock(&s->mu);
}

/* The ticker as a leader-only runnable: returns soon after *stop. */
static void tick_run(void *ctx, const atomic_int *stop)
{
    gr_casync *s = ctx;
    int64_t next = gr_casync_next_tick(gr_kube_now_ns(), s->tick_ns);
    while (!atomic_load(stop)) {
        int64_t now = gr_kube_now_ns();
        if (now >= next) {
            gr_casync_tick(s, NULL); /* logs its own errors */
            next = gr_casync_next_tick(gr_kube_now_ns(), s->tick_ns);
            continue;
        }
        int64_t wait = next - now;
        if (wait > 100000000LL)
            wait = 100000000LL; /* look at *stop every 100 ms */
        struct timespec ts = {(time_t)(wait / 1000000000LL), (long)(wait % 1000000000LL)};
        nanosleep(&ts, NULL);
    }
}

int gr_casync_attach(gr_casync *s, gr_kube_mgr *m, gr_err *err)
{
    if (s->q || s->mgr)
        return gr_err_set(err, GR_ESTATE, "CA bundle sync: already started");
    s->mgr = m;
    s->kc = gr_kube_mgr_client(m);
    gr_kube_cache_opts co = {.gvr = GR_KUBE_NAMESPACES,
                             .label_selector = *s->ns_selector ? s->ns_selector : NULL,
                             .transform = trim_ns};
    gr_kube_ctl_opts ko = {
        .name = "ca-bundle-sync", .workers = s->workers, .reconcile = reconcile, .ctx = s};
    gr_kube_handlers h = {.on_delete = mgr_ns_delete, .ctx = s};
    gr_kube_runnable_opts ro = {.name = "ca-bundle-ticker", .run = tick_run, .ctx = s};
    int rc;
    if ((rc = gr_kube_mgr_cache(m, &co, &s->nscache, err)) != GR_OK ||
        (rc = gr_kube_cache_add_handlers(s->nscache, &h, err)) != GR_OK ||
        (rc = gr_kube_mgr_add_controller(m, &ko, &s->mctl, err)) != GR_OK ||
        (rc = gr_kube_ctl_watch(s->mctl, s->nscache, map_name, NULL, err)) != GR_OK ||
        (rc = gr_kube_mgr_add_runnable(m, &ro, err)) != GR_OK)
        return rc;
    gr_log(GR_LOG_INFO, MOD, "CA bundle sync on the controller runtime",
           GR_KV_STR("caFile", s->ca_file), GR_KV_STR("namespaceSelector", s->ns_selector),
           GR_KV_INT("tickMs", s->tick_ns / 1000000), GR_KV_END);
    return GR_OK;
}

void gr_casync_stop(gr_casync *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    if (s->ticker_started) {
        pthread_join(s->ticker, NULL);
        s->ticker_started = false;
    }
    if (s->inf) {
        gr_kube_informer_stop(s->inf);
        gr_kube_informer_free(s->inf);
        s->inf = NULL;
    }
    if (s->ctl) {
        gr_kube_controller_stop(s->ctl);
        s->ctl = NULL;
    }
    if (s->q) {
        gr_kube_queue_free(s->q);
        s->q = NULL;
    }
}

void gr_casync_free(gr_casync *s)
{
    if (!s)
        return;
    gr_casync_stop(s);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->tick_mu);
    pthread_mutex_destroy(&s->mu);
    set_free(&s->ok);
    set_free(&s->failed);
    free(s->ca);
    free(s->ca_file);
    free(s->ns_selector);
    free(s);
}

void gr_casync_stats_get(gr_casync *s, gr_casync_stats *out)
{
    pthread_mutex_lock(&s->mu);
    *out = s->st;
    pthread_mutex_unlock(&s->mu);
}
