/* gr_kube_informer.c — store with indexes, and the list+watch informer. */
#include "gr_kube_informer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_json.h"
#include "gr_kube_watch.h"
#include "gr_log.h"
#include "kube_internal.h"

#define MAX_INDEXES 8

/* ---- index functions --------------------------------------------------- */

size_t gr_kube_index_namespace(const json_t *obj, void *ctx, const char **vals, size_t max)
{
    (void)ctx;
    const char *ns = gr_kube_meta_str(obj, "namespace");
    if (!ns || !max)
        return 0;
    vals[0] = ns;
    return 1;
}

size_t gr_kube_index_label(const json_t *obj, void *ctx, const char **vals, size_t max)
{
    json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    const char *v = json_string_value(json_object_get(labels, (const char *)ctx));
    if (!v || !max)
        return 0;
    vals[0] = v;
    return 1;
}

size_t gr_kube_index_field(const json_t *obj, void *ctx, const char **vals, size_t max)
{
    const char *path = ctx;
    const json_t *cur = obj;
    char seg[128];
    while (cur && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof seg)
            return 0;
        memcpy(seg, path, n);
        seg[n] = '\0';
        cur = json_object_get(cur, seg);
        path += n + (dot ? 1 : 0);
    }
    const char *v = json_string_value(cur);
    if (!v || !max)
        return 0;
    vals[0] = v;
    return 1;
}

int gr_kube_object_key(const json_t *obj, char *out, size_t outsz, gr_err *err)
{
    const char *name = gr_kube_meta_str(obj, "name");
    const char *ns = gr_kube_meta_str(obj, "namespace");
    if (!name || !*name)
        return gr_err_set(err, GR_EINVAL, "object has no metadata.name");
    int n = ns && *ns ? snprintf(out, outsz, "%s/%s", ns, name) : snprintf(out, outsz, "%s", name);
    if (n < 0 || (size_t)n >= outsz)
        return gr_err_set(err, GR_ETOOBIG, "object key longer than %zu bytes", outsz - 1);
    return GR_OK;
}

json_t *gr_kube_project(const json_t *obj, const char *const *paths, size_t npaths)
{
    json_t *out = json_object();
    if (!out)
        return NULL;
    for (size_t i = 0; i < npaths; i++) {
        char **tok = NULL;
        size_t n = 0;
        if (gr_json_ptr_parse(paths[i], &tok, &n, NULL) != GR_OK)
            continue;
        const json_t *src = obj;
        json_t *dst = out;
        for (size_t k = 0; k < n && src; k++) {
            src = json_object_get(src, tok[k]);
            if (!src)
                break;
            if (k + 1 == n) {
                json_object_set_new(dst, tok[k], json_deep_copy(src));
                break;
            }
            json_t *next = json_object_get(dst, tok[k]);
            if (!json_is_object(next)) {
                next = json_object();
                json_object_set_new(dst, tok[k], next);
            }
            dst = next;
        }
        gr_json_ptr_tokens_free(tok);
    }
    return out;
}

/* ---- store ------------------------------------------------------------- */

typedef struct store_index {
    const char *name;
    gr_kube_index_fn fn;
    void *ctx;
    gr_kube_map values; /* value -> gr_kube_map* (set of keys) */
} store_index;

/* One cached object in a single allocation: the key, then the compact JSON
 * text WITHOUT metadata.name/namespace (they are in the key and are put
 * back on read), which keeps a trimmed entry small. */
typedef struct sentry {
    struct sentry *next;
    uint16_t klen; /* keys are < GR_KUBE_KEY_MAX; the hash is recomputed when needed */
    char data[];   /* key '\0' text '\0' */
} sentry;

/* Buckets are grown when entries exceed LOAD x buckets (short chains, and
 * fewer bucket pointers per entry). */
#define LOAD 4

struct gr_kube_store {
    pthread_rwlock_t lk;
    sentry **b;
    size_t nb, n;
    store_index idx[MAX_INDEXES];
    size_t nidx;
    size_t payload;
};

static const char *entry_text(const sentry *e)
{
    return e->data + e->klen + 1;
}

static sentry **entry_slot(const gr_kube_store *s, const char *key, uint32_t h)
{
    if (!s->nb)
        return NULL;
    sentry **pp = &s->b[h & (s->nb - 1)];
    for (; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->data, key) == 0)
            return pp;
    return pp; /* the empty tail slot of the chain */
}

static int entries_grow(gr_kube_store *s)
{
    size_t nb = s->nb ? s->nb * 2 : 64;
    sentry **b = calloc(nb, sizeof *b);
    if (!b)
        return GR_ENOMEM;
    for (size_t i = 0; i < s->nb; i++) {
        sentry *e = s->b[i];
        while (e) {
            sentry *next = e->next;
            uint32_t h = gr_kube_map_hash(e->data);
            e->next = b[h & (nb - 1)];
            b[h & (nb - 1)] = e;
            e = next;
        }
    }
    free(s->b);
    s->b = b;
    s->nb = nb;
    return GR_OK;
}

/* The stored object: parse the text, put name/namespace back from the key. */
static json_t *entry_obj(const sentry *e)
{
    json_t *o = json_loads(entry_text(e), 0, NULL);
    if (!o)
        return NULL;
    json_t *md = json_object_get(o, "metadata");
    if (!json_is_object(md)) {
        md = json_object();
        json_object_set_new(o, "metadata", md);
    }
    const char *slash = strchr(e->data, '/');
    if (slash) {
        json_object_set_new(md, "namespace", json_stringn(e->data, (size_t)(slash - e->data)));
        json_object_set_new(md, "name", json_string(slash + 1));
    } else {
        json_object_set_new(md, "name", json_string(e->data));
    }
    return o;
}

static char *dump_without_identity(const json_t *obj)
{
    json_t *copy = json_copy((json_t *)(uintptr_t)obj); /* shallow */
    json_t *md = json_copy(json_object_get(obj, "metadata"));
    char *t = NULL;
    if (copy && md) {
        json_object_del(md, "name");
        json_object_del(md, "namespace");
        json_object_set(copy, "metadata", md);
        t = json_dumps(copy, JSON_COMPACT);
    }
    json_decref(md);
    json_decref(copy);
    return t;
}

int gr_kube_store_new(gr_kube_store **out, gr_err *err)
{
    gr_kube_store *s = calloc(1, sizeof *s);
    if (!s)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    pthread_rwlock_init(&s->lk, NULL);
    *out = s;
    return GR_OK;
}

static void free_set(void *p)
{
    gr_kube_map *set = p;
    gr_kube_map_clear(set, NULL);
    free(set);
}

void gr_kube_store_free(gr_kube_store *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nb; i++) {
        sentry *e = s->b[i];
        while (e) {
            sentry *next = e->next;
            free(e);
            e = next;
        }
    }
    free(s->b);
    for (size_t i = 0; i < s->nidx; i++)
        gr_kube_map_clear(&s->idx[i].values, free_set);
    pthread_rwlock_destroy(&s->lk);
    free(s);
}

int gr_kube_store_add_index(gr_kube_store *s, const char *name, gr_kube_index_fn fn, void *ctx,
                            gr_err *err)
{
    int rc = GR_OK;
    pthread_rwlock_wrlock(&s->lk);
    if (s->n)
        rc = gr_err_set(err, GR_ESTATE, "index %s: add indexes before the store is filled", name);
    else if (s->nidx >= MAX_INDEXES)
        rc = gr_err_set(err, GR_ETOOBIG, "index %s: at most %d indexes", name, MAX_INDEXES);
    else {
        for (size_t i = 0; i < s->nidx; i++)
            if (strcmp(s->idx[i].name, name) == 0)
                rc = gr_err_set(err, GR_ECONFLICT, "index %s already exists", name);
        if (rc == GR_OK) {
            store_index *x = &s->idx[s->nidx++];
            memset(x, 0, sizeof *x);
            x->name = name;
            x->fn = fn;
            x->ctx = ctx;
        }
    }
    pthread_rwlock_unlock(&s->lk);
    return rc;
}

static int index_add(store_index *x, const char *value, const char *key)
{
    gr_kube_map *set = gr_kube_map_get(&x->values, value);
    if (!set) {
        set = calloc(1, sizeof *set);
        if (!set || gr_kube_map_put(&x->values, value, set, NULL) != GR_OK) {
            free(set);
            return GR_ENOMEM;
        }
    }
    return gr_kube_map_put(set, key, NULL, NULL);
}

static void index_del(store_index *x, const char *value, const char *key)
{
    gr_kube_map *set = gr_kube_map_get(&x->values, value);
    if (!set)
        return;
    gr_kube_map_del(set, key, NULL);
    if (set->n == 0) {
        gr_kube_map_del(&x->values, value, NULL);
        free_set(set);
    }
}

static void index_obj(gr_kube_store *s, const json_t *obj, const char *key, bool add)
{
    const char *vals[GR_KUBE_INDEX_MAX_VALUES];
    for (size_t i = 0; i < s->nidx; i++) {
        size_t n = s->idx[i].fn(obj, s->idx[i].ctx, vals, GR_KUBE_INDEX_MAX_VALUES);
        for (size_t j = 0; j < n && j < GR_KUBE_INDEX_MAX_VALUES; j++) {
            if (add)
                index_add(&s->idx[i], vals[j], key);
            else
                index_del(&s->idx[i], vals[j], key);
        }
    }
}

static const sentry *entry_find(const gr_kube_store *s, const char *key)
{
    sentry **pp = entry_slot(s, key, gr_kube_map_hash(key));
    return pp ? *pp : NULL;
}

int gr_kube_store_upsert(gr_kube_store *s, const json_t *obj, json_t **old, bool *changed,
                         gr_err *err)
{
    if (old)
        *old = NULL;
    if (changed)
        *changed = false;
    char key[GR_KUBE_KEY_MAX];
    int rc = gr_kube_object_key(obj, key, sizeof key, err);
    if (rc != GR_OK)
        return rc;
    char *text = dump_without_identity(obj);
    if (!text)
        return gr_err_set(err, GR_ENOMEM, "%s: cannot serialise", key);
    size_t kl = strlen(key), tl = strlen(text);
    sentry *ne = malloc(sizeof *ne + kl + 1 + tl + 1);
    if (!ne) {
        free(text);
        return gr_err_set(err, GR_ENOMEM, "%s: out of memory", key);
    }
    uint32_t hash = gr_kube_map_hash(key);
    ne->klen = (uint16_t)kl;
    memcpy(ne->data, key, kl + 1);
    memcpy(ne->data + kl + 1, text, tl + 1);
    free(text);
    pthread_rwlock_wrlock(&s->lk);
    if (s->n >= s->nb * LOAD && entries_grow(s) != GR_OK) {
        pthread_rwlock_unlock(&s->lk);
        free(ne);
        return gr_err_set(err, GR_ENOMEM, "%s: out of memory", key);
    }
    sentry **pp = entry_slot(s, key, hash);
    if (!pp) { /* cannot happen: the table was grown above */
        pthread_rwlock_unlock(&s->lk);
        free(ne);
        return gr_err_set(err, GR_ESTATE, "%s: cache table missing", key);
    }
    sentry *prev = *pp;
    json_t *pobj = prev ? entry_obj(prev) : NULL;
    if (prev) {
        const char *orv = gr_kube_meta_str(pobj, "resourceVersion");
        const char *nrv = gr_kube_meta_str(obj, "resourceVersion");
        if (orv && nrv && strcmp(orv, nrv) == 0) {
            pthread_rwlock_unlock(&s->lk);
            free(ne);
            if (old)
                *old = pobj;
            else
                json_decref(pobj);
            return GR_OK; /* same version: nothing to do */
        }
        ne->next = prev->next;
        s->payload -= strlen(entry_text(prev));
        if (pobj)
            index_obj(s, pobj, key, false);
        free(prev);
    } else {
        ne->next = NULL;
        s->n++;
    }
    *pp = ne;
    s->payload += tl;
    index_obj(s, obj, key, true);
    pthread_rwlock_unlock(&s->lk);
    if (changed)
        *changed = true;
    if (old)
        *old = pobj;
    else
        json_decref(pobj);
    return GR_OK;
}

int gr_kube_store_delete(gr_kube_store *s, const char *key, json_t **old, gr_err *err)
{
    if (old)
        *old = NULL;
    pthread_rwlock_wrlock(&s->lk);
    sentry **pp = entry_slot(s, key, gr_kube_map_hash(key));
    sentry *e = pp ? *pp : NULL;
    if (!e) {
        pthread_rwlock_unlock(&s->lk);
        return gr_err_set(err, GR_ENOTFOUND, "%s: not in the cache", key);
    }
    *pp = e->next;
    s->n--;
    json_t *pobj = entry_obj(e);
    if (pobj)
        index_obj(s, pobj, key, false);
    s->payload -= strlen(entry_text(e));
    pthread_rwlock_unlock(&s->lk);
    free(e);
    if (old)
        *old = pobj;
    else
        json_decref(pobj);
    return GR_OK;
}

int gr_kube_store_get(gr_kube_store *s, const char *key, json_t **out, gr_err *err)
{
    *out = NULL;
    pthread_rwlock_rdlock(&s->lk);
    const sentry *e = entry_find(s, key);
    json_t *o = e ? entry_obj(e) : NULL;
    pthread_rwlock_unlock(&s->lk);
    if (!e)
        return gr_err_set(err, GR_ENOTFOUND, "%s: not in the cache", key);
    if (!o)
        return gr_err_set(err, GR_ENOMEM, "%s: out of memory", key);
    *out = o;
    return GR_OK;
}

int gr_kube_store_list(gr_kube_store *s, const char *index, const char *value, json_t **out,
                       gr_err *err)
{
    *out = json_array();
    if (!*out)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    int rc = GR_OK;
    pthread_rwlock_rdlock(&s->lk);
    if (index) {
        store_index *x = NULL;
        for (size_t i = 0; i < s->nidx; i++)
            if (strcmp(s->idx[i].name, index) == 0)
                x = &s->idx[i];
        if (!x) {
            rc = gr_err_set(err, GR_ENOTFOUND, "no index named %s", index);
        } else {
            gr_kube_map *set = gr_kube_map_get(&x->values, value ? value : "");
            size_t b = 0;
            gr_kube_map_node *n = NULL;
            while (set && gr_kube_map_next(set, &b, &n)) {
                const sentry *e = entry_find(s, n->key);
                if (e)
                    json_array_append_new(*out, entry_obj(e));
            }
        }
    } else {
        for (size_t i = 0; i < s->nb; i++)
            for (const sentry *e = s->b[i]; e; e = e->next)
                json_array_append_new(*out, entry_obj(e));
    }
    pthread_rwlock_unlock(&s->lk);
    if (rc != GR_OK) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}

int gr_kube_store_keys(gr_kube_store *s, json_t **out, gr_err *err)
{
    *out = json_array();
    if (!*out)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    pthread_rwlock_rdlock(&s->lk);
    for (size_t i = 0; i < s->nb; i++)
        for (const sentry *e = s->b[i]; e; e = e->next)
            json_array_append_new(*out, json_string(e->data));
    pthread_rwlock_unlock(&s->lk);
    return GR_OK;
}

size_t gr_kube_store_len(gr_kube_store *s)
{
    pthread_rwlock_rdlock(&s->lk);
    size_t n = s->n;
    pthread_rwlock_unlock(&s->lk);
    return n;
}

size_t gr_kube_store_payload_bytes(gr_kube_store *s)
{
    pthread_rwlock_rdlock(&s->lk);
    size_t n = s->payload;
    pthread_rwlock_unlock(&s->lk);
    return n;
}

int gr_kube_store_foreach(gr_kube_store *s, gr_kube_store_visit_fn fn, void *ctx, gr_err *err)
{
    (void)err;
    pthread_rwlock_rdlock(&s->lk);
    for (size_t i = 0; i < s->nb; i++) {
        for (const sentry *e = s->b[i]; e; e = e->next) {
            json_t *o = entry_obj(e);
            int stop = fn(ctx, e->data, o);
            json_decref(o);
            if (stop) {
                pthread_rwlock_unlock(&s->lk);
                return GR_OK;
            }
        }
    }
    pthread_rwlock_unlock(&s->lk);
    return GR_OK;
}

/* ---- applying events (pure) -------------------------------------------- */

int gr_kube_informer_apply_event(gr_kube_store *s, const gr_kube_informer_opts *o, int type,
                                 json_t *obj_in, gr_err *err)
{
    if (type == GR_KUBE_EV_BOOKMARK || type == GR_KUBE_EV_ERROR)
        return GR_OK;
    json_t *obj = json_incref(obj_in);
    if (o->transform && o->transform(&obj, o->transform_ctx) != GR_OK) {
        json_decref(obj);
        return GR_OK; /* dropped by the transform */
    }
    int rc = GR_OK;
    if (type == GR_KUBE_EV_DELETED) {
        char key[GR_KUBE_KEY_MAX];
        rc = gr_kube_object_key(obj, key, sizeof key, err);
        json_t *old = NULL;
        if (rc == GR_OK && gr_kube_store_delete(s, key, &old, NULL) == GR_OK) {
            if (o->handlers.on_delete)
                o->handlers.on_delete(o->handlers.ctx, obj);
        }
        json_decref(old);
    } else {
        json_t *old = NULL;
        bool changed = false;
        rc = gr_kube_store_upsert(s, obj, &old, &changed, err);
        if (rc == GR_OK && changed) {
            if (old && o->handlers.on_update)
                o->handlers.on_update(o->handlers.ctx, old, obj);
            else if (!old && o->handlers.on_add)
                o->handlers.on_add(o->handlers.ctx, obj);
        }
        json_decref(old);
    }
    json_decref(obj);
    return rc;
}

int gr_kube_informer_apply_list(gr_kube_store *s, const gr_kube_informer_opts *o,
                                const json_t *items, gr_err *err)
{
    gr_kube_map seen = {0};
    size_t i;
    json_t *it;
    int rc = GR_OK;
    json_array_foreach(items, i, it)
    {
        json_t *obj = json_incref(it);
        if (o->transform && o->transform(&obj, o->transform_ctx) != GR_OK) {
            json_decref(obj);
            continue;
        }
        char key[GR_KUBE_KEY_MAX];
        if (gr_kube_object_key(obj, key, sizeof key, NULL) == GR_OK &&
            gr_kube_map_put(&seen, key, NULL, NULL) != GR_OK) {
            json_decref(obj);
            rc = gr_err_set(err, GR_ENOMEM, "out of memory");
            break;
        }
        json_t *old = NULL;
        bool changed = false;
        if (gr_kube_store_upsert(s, obj, &old, &changed, NULL) == GR_OK && changed) {
            if (old && o->handlers.on_update)
                o->handlers.on_update(o->handlers.ctx, old, obj);
            else if (!old && o->handlers.on_add)
                o->handlers.on_add(o->handlers.ctx, obj);
        }
        json_decref(old);
        json_decref(obj);
    }
    if (rc == GR_OK) {
        /* whatever the list no longer has was deleted while we were away */
        json_t *keys = NULL;
        rc = gr_kube_store_keys(s, &keys, err);
        json_array_foreach(keys, i, it)
        {
            const char *k = json_string_value(it);
            if (gr_kube_map_has(&seen, k))
                continue;
            json_t *old = NULL;
            if (gr_kube_store_delete(s, k, &old, NULL) == GR_OK && old && o->handlers.on_delete)
                o->handlers.on_delete(o->handlers.ctx, old);
            json_decref(old);
        }
        json_decref(keys);
    }
    gr_kube_map_clear(&seen, NULL);
    return rc;
}

/* ---- informer ---------------------------------------------------------- */

struct gr_kube_informer {
    gr_kube_client *c;
    gr_kube_informer_opts o;
    gr_kube_store *store;
    atomic_int stop;
    pthread_t thr, resync_thr;
    bool started, resync_started;
    pthread_mutex_t hmu; /* serialises handler delivery */
    pthread_mutex_t mu;  /* synced, stats */
    pthread_cond_t cv;
    bool synced;
    gr_kube_informer_stats stats;
};

int gr_kube_informer_new(gr_kube_client *c, const gr_kube_informer_opts *o, gr_kube_informer **out,
                         gr_err *err)
{
    *out = NULL;
    if (!o || !o->gvr.version || !o->gvr.resource)
        return gr_err_set(err, GR_EINVAL, "informer: gvr.version and gvr.resource are required");
    gr_kube_informer *inf = calloc(1, sizeof *inf);
    if (!inf)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    inf->c = c;
    inf->o = *o;
    if (gr_kube_store_new(&inf->store, err) != GR_OK) {
        free(inf);
        return GR_ENOMEM;
    }
    pthread_mutex_init(&inf->hmu, NULL);
    pthread_mutex_init(&inf->mu, NULL);
    pthread_cond_init(&inf->cv, NULL);
    *out = inf;
    return GR_OK;
}

int gr_kube_informer_add_index(gr_kube_informer *inf, const char *name, gr_kube_index_fn fn,
                               void *ctx, gr_err *err)
{
    if (inf->started)
        return gr_err_set(err, GR_ESTATE, "index %s: add indexes before starting the informer",
                          name);
    return gr_kube_store_add_index(inf->store, name, fn, ctx, err);
}

static void stat_err(gr_kube_informer *inf, const char *what, const gr_err *e)
{
    pthread_mutex_lock(&inf->mu);
    inf->stats.errors++;
    pthread_mutex_unlock(&inf->mu);
    gr_log(GR_LOG_WARN, "kube", what, GR_KV_STR("resource", inf->o.gvr.resource),
           GR_KV_STR("error", e->msg), GR_KV_END);
}

typedef struct watch_ctx {
    gr_kube_informer *inf;
} watch_ctx;

static int on_event(void *u, const gr_kube_watch_event *ev)
{
    gr_kube_informer *inf = ((watch_ctx *)u)->inf;
    gr_err e;
    pthread_mutex_lock(&inf->hmu);
    int rc = gr_kube_informer_apply_event(inf->store, &inf->o, (int)ev->type, ev->object, &e);
    pthread_mutex_unlock(&inf->hmu);
    if (rc != GR_OK)
        gr_log(GR_LOG_WARN, "kube", "watch event not applied",
               GR_KV_STR("resource", inf->o.gvr.resource), GR_KV_STR("error", e.msg), GR_KV_END);
    pthread_mutex_lock(&inf->mu);
    if (ev->type == GR_KUBE_EV_BOOKMARK)
        inf->stats.bookmarks++;
    else
        inf->stats.events++;
    pthread_mutex_unlock(&inf->mu);
    return 0;
}

static int do_list(gr_kube_informer *inf, char *rv, size_t rvsz, gr_err *err)
{
    gr_kube_opts lo = {0};
    lo.label_selector = inf->o.label_selector;
    lo.field_selector = inf->o.field_selector;
    lo.limit = inf->o.page_size;
    lo.cancel = &inf->stop;
    lo.timeout_ms = 120000;
    json_t *list = NULL;
    gr_kube_status st;
    int rc = gr_kube_list_all(inf->c, &inf->o.gvr, inf->o.ns, &lo, &list, &st, err);
    if (rc != GR_OK)
        return rc;
    const char *lrv =
        json_string_value(json_object_get(json_object_get(list, "metadata"), "resourceVersion"));
    snprintf(rv, rvsz, "%s", lrv ? lrv : "");
    pthread_mutex_lock(&inf->hmu);
    rc = gr_kube_informer_apply_list(inf->store, &inf->o, json_object_get(list, "items"), err);
    pthread_mutex_unlock(&inf->hmu);
    json_decref(list);
    if (rc == GR_OK) {
        pthread_mutex_lock(&inf->mu);
        inf->stats.lists++;
        snprintf(inf->stats.last_rv, sizeof inf->stats.last_rv, "%s", rv);
        inf->synced = true;
        pthread_cond_broadcast(&inf->cv);
        pthread_mutex_unlock(&inf->mu);
    }
    return rc;
}

static void *run(void *arg)
{
    gr_kube_informer *inf = arg;
    gr_kube_backoff bo;
    gr_kube_backoff_init(&bo, inf->o.backoff_initial_ns, inf->o.backoff_max_ns, 0,
                         (uint32_t)gr_kube_mono_ns());
    char rv[64] = "";
    bool need_list = true;
    while (!atomic_load(&inf->stop)) {
        gr_err e;
        gr_err_clear(&e);
        if (need_list) {
            if (do_list(inf, rv, sizeof rv, &e) != GR_OK) {
                if (atomic_load(&inf->stop))
                    break;
                stat_err(inf, "list failed; retrying", &e);
                gr_kube_sleep_ns(gr_kube_backoff_next(&bo, gr_kube_mono_ns()), &inf->stop);
                continue;
            }
            need_list = false;
        }
        gr_kube_opts wo = {0};
        wo.label_selector = inf->o.label_selector;
        wo.field_selector = inf->o.field_selector;
        wo.resource_version = rv;
        wo.allow_bookmarks = true;
        wo.timeout_seconds = inf->o.watch_timeout_s;
        wo.max_response = inf->o.max_object;
        wo.cancel = &inf->stop;
        gr_kube_watch_stats ws;
        memset(&ws, 0, sizeof ws);
        gr_kube_status st;
        watch_ctx wc = {inf};
        pthread_mutex_lock(&inf->mu);
        inf->stats.watches++;
        pthread_mutex_unlock(&inf->mu);
        int rc = gr_kube_watch(inf->c, &inf->o.gvr, inf->o.ns, &wo, inf->o.idle_s, on_event, &wc,
                               &ws, &st, &e);
        if (ws.last_rv[0]) {
            snprintf(rv, sizeof rv, "%s", ws.last_rv);
            pthread_mutex_lock(&inf->mu);
            snprintf(inf->stats.last_rv, sizeof inf->stats.last_rv, "%s", rv);
            pthread_mutex_unlock(&inf->mu);
        }
        if (atomic_load(&inf->stop))
            break;
        if (rc == GR_OK) {
            gr_kube_backoff_reset(&bo); /* the server ended a healthy stream */
            continue;
        }
        if (rc == GR_ESTATE && gr_kube_status_is_gone(&st)) {
            pthread_mutex_lock(&inf->mu);
            inf->stats.gone++;
            pthread_mutex_unlock(&inf->mu);
            gr_log(GR_LOG_INFO, "kube", "watch expired; relisting",
                   GR_KV_STR("resource", inf->o.gvr.resource), GR_KV_STR("error", e.msg),
                   GR_KV_END);
            need_list = true;
            continue;
        }
        stat_err(inf, "watch failed; re-watching after backoff", &e);
        if (rc == GR_EPARSE || rc == GR_ETOOBIG)
            need_list = true; /* we may have lost our place in the stream */
        gr_kube_sleep_ns(gr_kube_backoff_next(&bo, gr_kube_mono_ns()), &inf->stop);
    }
    return NULL;
}

static void *resync(void *arg)
{
    gr_kube_informer *inf = arg;
    while (gr_kube_sleep_ns(inf->o.resync_ns, &inf->stop) == GR_OK) {
        if (!gr_kube_informer_synced(inf) || !inf->o.handlers.on_update)
            continue;
        json_t *all = NULL;
        if (gr_kube_store_list(inf->store, NULL, NULL, &all, NULL) != GR_OK)
            continue;
        size_t i;
        json_t *o;
        pthread_mutex_lock(&inf->hmu);
        json_array_foreach(all, i, o)
        {
            if (atomic_load(&inf->stop))
                break;
            inf->o.handlers.on_update(inf->o.handlers.ctx, o, o);
        }
        pthread_mutex_unlock(&inf->hmu);
        json_decref(all);
    }
    return NULL;
}

int gr_kube_informer_start(gr_kube_informer *inf, gr_err *err)
{
    if (inf->started)
        return gr_err_set(err, GR_ESTATE, "informer already started");
    if (pthread_create(&inf->thr, NULL, run, inf) != 0)
        return gr_err_set(err, GR_EIO, "informer: cannot start thread");
    inf->started = true;
    if (inf->o.resync_ns > 0) {
        if (pthread_create(&inf->resync_thr, NULL, resync, inf) != 0) {
            gr_kube_informer_stop(inf);
            return gr_err_set(err, GR_EIO, "informer: cannot start resync thread");
        }
        inf->resync_started = true;
    }
    return GR_OK;
}

bool gr_kube_informer_synced(gr_kube_informer *inf)
{
    pthread_mutex_lock(&inf->mu);
    bool s = inf->synced;
    pthread_mutex_unlock(&inf->mu);
    return s;
}

int gr_kube_informer_wait_synced(gr_kube_informer *inf, int64_t timeout_ns, gr_err *err)
{
    int64_t deadline = gr_kube_real_ns() + timeout_ns;
    struct timespec ts = {(time_t)(deadline / 1000000000LL), (long)(deadline % 1000000000LL)};
    pthread_mutex_lock(&inf->mu);
    int r = 0;
    while (!inf->synced && r == 0)
        r = pthread_cond_timedwait(&inf->cv, &inf->mu, &ts);
    bool s = inf->synced;
    pthread_mutex_unlock(&inf->mu);
    if (!s)
        return gr_err_set(err, GR_ETIMEDOUT, "informer for %s did not sync in time",
                          inf->o.gvr.resource);
    return GR_OK;
}

gr_kube_store *gr_kube_informer_store(gr_kube_informer *inf)
{
    return inf->store;
}

void gr_kube_informer_stats_get(gr_kube_informer *inf, gr_kube_informer_stats *out)
{
    pthread_mutex_lock(&inf->mu);
    *out = inf->stats;
    pthread_mutex_unlock(&inf->mu);
}

void gr_kube_informer_stop(gr_kube_informer *inf)
{
    atomic_store(&inf->stop, 1);
    if (inf->started) {
        pthread_join(inf->thr, NULL);
        inf->started = false;
    }
    if (inf->resync_started) {
        pthread_join(inf->resync_thr, NULL);
        inf->resync_started = false;
    }
}

void gr_kube_informer_free(gr_kube_informer *inf)
{
    if (!inf)
        return;
    gr_kube_informer_stop(inf);
    gr_kube_store_free(inf->store);
    pthread_mutex_destroy(&inf->hmu);
    pthread_mutex_destroy(&inf->mu);
    pthread_cond_destroy(&inf->cv);
    free(inf);
}
