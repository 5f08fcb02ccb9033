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

/* One cached object in a single allocation: the key, its resourceVersion
 * (compared without decoding) and the object's compact form (kube_cval.c:
 * binary, keys shared through the store's dictionary). */
typedef struct sentry {
    struct sentry *next;
    uint32_t hash;
    uint32_t len;  /* compact form bytes */
    uint16_t klen; /* keys are < GR_KUBE_KEY_MAX */
    uint8_t rvlen; /* 0 when the object has none (or one over 255 bytes) */
    char data[];   /* key '\0' rv '\0' compact form, then per index: a count
                    * byte and that many NUL-terminated values (so removing
                    * an entry never decodes it) */
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
    gr_kube_keydict *keys;
    /* entry_new's encode buffer, kept between calls (one growing buffer per
     * event was a chain of reallocs, each a large allocation that made
     * glibc consolidate its fast bins); a writer that finds it busy uses
     * its own. */
    pthread_mutex_t scratch_mu;
    gr_buf scratch;
};

/* Past this the scratch buffer is not kept (a rare huge object). */
#define SCRATCH_KEEP (256 * 1024)

static const char *entry_rv(const sentry *e)
{
    return e->data + e->klen + 1;
}

static const void *entry_blob(const sentry *e)
{
    return e->data + e->klen + 1 + e->rvlen + 1;
}

static json_t *entry_obj(const gr_kube_store *s, const sentry *e)
{
    return gr_kube_cval_decode(s->keys, entry_blob(e), e->len);
}

/* The entry's object sharing what equals `like` with it
 * (gr_kube_cval_decode_like). */
static json_t *entry_obj_like(const gr_kube_store *s, const sentry *e, const json_t *like)
{
    return gr_kube_cval_decode_like(s->keys, entry_blob(e), e->len, like);
}

static sentry **entry_slot(const gr_kube_store *s, const char *key, uint32_t h)
{
    if (!s->nb)
        return NULL;
    sentry **pp = &s->b[h & (s->nb - 1)];
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->hash == h && strcmp((*pp)->data, key) == 0)
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
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
            e = next;
        }
    }
    free(s->b);
    s->b = b;
    s->nb = nb;
    return GR_OK;
}

int gr_kube_store_new(gr_kube_store **out, gr_err *err)
{
    gr_kube_store *s = calloc(1, sizeof *s);
    if (!s || gr_kube_keydict_new(&s->keys) != GR_OK) {
        free(s);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    pthread_rwlock_init(&s->lk, NULL);
    pthread_mutex_init(&s->scratch_mu, NULL);
    gr_buf_init(&s->scratch, GR_KUBE_MAX_RESPONSE);
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
    gr_kube_keydict_free(s->keys);
    gr_buf_free(&s->scratch);
    pthread_mutex_destroy(&s->scratch_mu);
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

/* Add (or remove) an entry's key to (from) every index, from the index
 * values recorded in the entry. */
static void index_entry(gr_kube_store *s, const sentry *e, bool add)
{
    const char *p = (const char *)entry_blob(e) + e->len;
    for (size_t i = 0; i < s->nidx; i++) {
        unsigned n = (unsigned char)*p++;
        for (unsigned j = 0; j < n; j++) {
            if (add)
                index_add(&s->idx[i], p, e->data);
            else
                index_del(&s->idx[i], p, e->data);
            p += strlen(p) + 1;
        }
    }
}

static const sentry *entry_find(const gr_kube_store *s, const char *key)
{
    sentry **pp = entry_slot(s, key, gr_kube_map_hash(key));
    return pp ? *pp : NULL;
}

/* A new entry for obj under key (its compact form). NULL on ENOMEM. */
static sentry *entry_build(gr_kube_store *s, const char *key, const json_t *obj, gr_buf *bp)
{
    gr_buf_reset(bp);
    if (gr_kube_cval_encode(s->keys, obj, bp) != GR_OK)
        return NULL;
    size_t blen = bp->len;
    for (size_t i = 0; i < s->nidx; i++) { /* the index values, recorded */
        const char *vals[GR_KUBE_INDEX_MAX_VALUES];
        size_t n = s->idx[i].fn(obj, s->idx[i].ctx, vals, GR_KUBE_INDEX_MAX_VALUES);
        if (n > GR_KUBE_INDEX_MAX_VALUES)
            n = GR_KUBE_INDEX_MAX_VALUES;
        char cnt = (char)n;
        if (gr_buf_append(bp, &cnt, 1) != GR_OK)
            return NULL;
        for (size_t j = 0; j < n; j++)
            if (gr_buf_append(bp, vals[j], strlen(vals[j]) + 1) != GR_OK)
                return NULL;
    }
    const char *rv = gr_kube_meta_str(obj, "resourceVersion");
    size_t kl = strlen(key), rl = rv ? strlen(rv) : 0;
    if (rl > 255)
        rl = 0; /* not a real resourceVersion: never "the same" */
    sentry *e = malloc(sizeof *e + kl + 1 + rl + 1 + bp->len);
    if (e) {
        e->next = NULL;
        e->hash = gr_kube_map_hash(key);
        e->len = (uint32_t)blen;
        e->klen = (uint16_t)kl;
        e->rvlen = (uint8_t)rl;
        memcpy(e->data, key, kl + 1);
        memcpy(e->data + kl + 1, rl ? rv : "", rl);
        e->data[kl + 1 + rl] = '\0';
        memcpy(e->data + kl + 1 + rl + 1, bp->data, bp->len);
    }
    return e;
}

/* A new entry for obj under key (its compact form). NULL on ENOMEM. */
static sentry *entry_new(gr_kube_store *s, const char *key, const json_t *obj)
{
    if (pthread_mutex_trylock(&s->scratch_mu) == 0) {
        sentry *e = entry_build(s, key, obj, &s->scratch);
        if (s->scratch.cap > SCRATCH_KEEP)
            gr_buf_free(&s->scratch);
        pthread_mutex_unlock(&s->scratch_mu);
        return e;
    }
    gr_buf b = GR_BUF_INIT(GR_KUBE_MAX_RESPONSE);
    sentry *e = entry_build(s, key, obj, &b);
    gr_buf_free(&b);
    return e;
}

/* Insert or replace obj (borrowed; its compact form is stored) under `key`.
 * *old (want_old) receives the replaced object, decoded (NULL when the key
 * was new or nothing changed); *existed tells whether the key was there;
 * *changed is false when the stored resourceVersion was the same (the
 * stored object is kept). */
static int store_put(gr_kube_store *s, const char *key, const json_t *obj, bool want_old,
                     bool share, json_t **old, bool *existed, bool *changed, gr_err *err)
{
    *old = NULL;
    *changed = false;
    *existed = false;
    /* First, under the read lock: an unchanged version returns before any
     * encoding, and the replaced object is decoded before the new entry is
     * allocated (the decode reuses the memory the last event freed; the
     * entry's allocation, a large one, then finds glibc's fast bins nearly
     * empty instead of consolidating them: measured, a third of the update
     * path's CPU). */
    const char *rv = gr_kube_meta_str(obj, "resourceVersion");
    size_t rl = rv ? strlen(rv) : 0;
    uint32_t h = gr_kube_map_hash(key);
    const sentry *pre_e = NULL;
    char pre_rv[256] = "";
    json_t *pre = NULL;
    pthread_rwlock_rdlock(&s->lk);
    sentry **p0 = entry_slot(s, key, h);
    const sentry *e0 = p0 ? *p0 : NULL;
    if (e0 && e0->rvlen && e0->rvlen == rl && strcmp(entry_rv(e0), rv) == 0) {
        pthread_rwlock_unlock(&s->lk);
        *existed = true;
        return GR_OK; /* same version: nothing to do */
    }
    if (e0 && want_old) {
        pre = share ? entry_obj_like(s, e0, obj) : entry_obj(s, e0);
        pre_e = e0;
        memcpy(pre_rv, entry_rv(e0), (size_t)e0->rvlen + 1);
    }
    pthread_rwlock_unlock(&s->lk);
    sentry *ne = entry_new(s, key, obj);
    if (!ne) {
        json_decref(pre);
        return gr_err_set(err, GR_ENOMEM, "%s: out of memory", key);
    }
    pthread_rwlock_wrlock(&s->lk);
    if (s->n >= s->nb * LOAD && entries_grow(s) != GR_OK) {
        pthread_rwlock_unlock(&s->lk);
        free(ne);
        json_decref(pre);
        return gr_err_set(err, GR_ENOMEM, "%s: out of memory", key);
    }
    sentry **pp = entry_slot(s, key, ne->hash);
    if (!pp) { /* cannot happen: the table was grown above */
        pthread_rwlock_unlock(&s->lk);
        free(ne);
        json_decref(pre);
        return gr_err_set(err, GR_ESTATE, "%s: cache table missing", key);
    }
    sentry *e = *pp;
    *existed = e != NULL;
    if (e) {
        if (e->rvlen && e->rvlen == ne->rvlen && strcmp(entry_rv(e), entry_rv(ne)) == 0) {
            pthread_rwlock_unlock(&s->lk);
            free(ne);
            json_decref(pre);
            return GR_OK; /* same version: nothing to do */
        }
        if (want_old) {
            /* another writer replaced it meanwhile: decode what is there now
             * (same entry and version: the same object) */
            if (pre && e == pre_e && strcmp(entry_rv(e), pre_rv) == 0) {
                *old = pre;
                pre = NULL;
            } else {
                *old = share ? entry_obj_like(s, e, obj) : entry_obj(s, e);
            }
        }
        index_entry(s, e, false);
        ne->next = e->next;
        s->payload -= e->len;
        free(e);
    } else {
        s->n++;
    }
    *pp = ne;
    s->payload += ne->len;
    index_entry(s, ne, true);
    pthread_rwlock_unlock(&s->lk);
    json_decref(pre);
    *changed = true;
    return GR_OK;
}

/* Remove `key`; false when absent. *old (want_old) gets it decoded. */
static bool store_take(gr_kube_store *s, const char *key, bool want_old, json_t **old)
{
    *old = NULL;
    pthread_rwlock_wrlock(&s->lk);
    sentry **pp = entry_slot(s, key, gr_kube_map_hash(key));
    sentry *e = pp ? *pp : NULL;
    if (e) {
        *pp = e->next;
        s->n--;
        s->payload -= e->len;
        if (want_old)
            *old = entry_obj(s, e);
        index_entry(s, e, false);
    }
    pthread_rwlock_unlock(&s->lk);
    free(e);
    return e != NULL;
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
    json_t *prev = NULL;
    bool ch = false, existed = false;
    rc = store_put(s, key, obj, old != NULL, false, &prev, &existed, &ch, err);
    if (rc != GR_OK)
        return rc;
    if (!ch && old) /* unchanged: the previous object is still stored */
        gr_kube_store_get(s, key, &prev, NULL);
    if (changed)
        *changed = ch;
    if (old)
        *old = prev;
    else
        json_decref(prev);
    return GR_OK;
}

int gr_kube_store_delete(gr_kube_store *s, const char *key, json_t **old, gr_err *err)
{
    json_t *o = NULL;
    if (old)
        *old = NULL;
    if (!store_take(s, key, old != NULL, &o))
        return gr_err_set(err, GR_ENOTFOUND, "%s: not in the cache", key);
    if (old)
        *old = o;
    return GR_OK;
}

int gr_kube_store_get(gr_kube_store *s, const char *key, json_t **out, gr_err *err)
{
    *out = NULL;
    pthread_rwlock_rdlock(&s->lk);
    const sentry *e = entry_find(s, key);
    json_t *o = e ? entry_obj(s, e) : NULL;
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
                    json_array_append_new(*out, entry_obj(s, e));
            }
        }
    } else {
        for (size_t i = 0; i < s->nb; i++)
            for (const sentry *e = s->b[i]; e; e = e->next)
                json_array_append_new(*out, entry_obj(s, e));
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
    int rc = GR_OK;
    pthread_rwlock_rdlock(&s->lk);
    for (size_t i = 0; i < s->nb; i++) {
        for (const sentry *e = s->b[i]; e; e = e->next) {
            json_t *o = entry_obj(s, e);
            if (!o) {
                rc = gr_err_set(err, GR_ENOMEM, "%s: out of memory", e->data);
                goto out;
            }
            int stop = fn(ctx, e->data, o);
            json_decref(o);
            if (stop)
                goto out;
        }
    }
out:
    pthread_rwlock_unlock(&s->lk);
    return rc;
}

/* ---- applying events (pure) -------------------------------------------- */

/* Apply one object of a watch event or list page. obj_in is borrowed; the
 * store keeps a reference to it (or to what the transform made of it). When
 * `seen` is given (a relist in progress), the key is recorded there. */
static int apply_obj(gr_kube_store *s, const gr_kube_informer_opts *o, int type, json_t *obj_in,
                     gr_kube_map *seen, bool share, gr_err *err)
{
    if (type == GR_KUBE_EV_BOOKMARK || type == GR_KUBE_EV_ERROR)
        return GR_OK;
    json_t *obj = json_incref(obj_in);
    if (o->transform && o->transform(&obj, o->transform_ctx) != GR_OK) {
        json_decref(obj);
        return GR_OK; /* dropped by the transform */
    }
    char key[GR_KUBE_KEY_MAX];
    int rc = gr_kube_object_key(obj, key, sizeof key, err);
    if (rc != GR_OK) {
        json_decref(obj);
        return rc;
    }
    if (type == GR_KUBE_EV_DELETED) {
        json_t *old = NULL;
        if (store_take(s, key, false, &old) && o->handlers.on_delete)
            o->handlers.on_delete(o->handlers.ctx, obj);
        json_decref(obj);
        return GR_OK;
    }
    if (seen && gr_kube_map_put(seen, key, NULL, NULL) != GR_OK) {
        json_decref(obj);
        return gr_err_set(err, GR_ENOMEM, "%s: out of memory", key);
    }
    json_t *old = NULL;
    bool changed = false, existed = false;
    rc =
        store_put(s, key, obj, o->handlers.on_update != NULL, share, &old, &existed, &changed, err);
    if (rc == GR_OK && changed) {
        if (existed && old && o->handlers.on_update)
            o->handlers.on_update(o->handlers.ctx, old, obj);
        else if (!existed && o->handlers.on_add)
            o->handlers.on_add(o->handlers.ctx, obj);
    }
    json_decref(old);
    json_decref(obj);
    return rc;
}

/* End of a relist: whatever it did not deliver was deleted meanwhile. */
static int finish_relist(gr_kube_store *s, const gr_kube_informer_opts *o, const gr_kube_map *seen,
                         gr_err *err)
{
    json_t *keys = NULL;
    int rc = gr_kube_store_keys(s, &keys, err);
    size_t i;
    json_t *it;
    json_array_foreach(keys, i, it)
    {
        const char *k = json_string_value(it);
        if (!k || gr_kube_map_has(seen, k))
            continue;
        json_t *old = NULL;
        if (store_take(s, k, o->handlers.on_delete != NULL, &old) && old && o->handlers.on_delete)
            o->handlers.on_delete(o->handlers.ctx, old);
        json_decref(old);
    }
    json_decref(keys);
    return rc;
}

int gr_kube_informer_apply_event(gr_kube_store *s, const gr_kube_informer_opts *o, int type,
                                 json_t *obj, gr_err *err)
{
    return apply_obj(s, o, type, obj, NULL, false, err);
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
        gr_err e;
        int r = apply_obj(s, o, GR_KUBE_EV_ADDED, it, &seen, false, &e);
        if (r == GR_ENOMEM) {
            rc = gr_err_set(err, r, "%s", e.msg);
            break;
        }
    }
    if (rc == GR_OK)
        rc = finish_relist(s, o, &seen, err);
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
    bool watchlist_refused; /* the server said no to sendInitialEvents: LIST from now on */
    pthread_mutex_t hmu;    /* serialises handler delivery */
    pthread_mutex_t mu;     /* synced, stats */
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
    if (o->sync_mode < GR_KUBE_SYNC_AUTO || o->sync_mode > GR_KUBE_SYNC_WATCHLIST)
        return gr_err_set(err, GR_EINVAL,
                          "informer: sync_mode must be GR_KUBE_SYNC_AUTO, _LIST or _WATCHLIST");
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

/* A relist (LIST pages or the initial events of a streaming list) has been
 * applied in full: the cache is in sync as of resourceVersion rv. */
static void mark_synced(gr_kube_informer *inf, const char *rv, bool streaming)
{
    pthread_mutex_lock(&inf->mu);
    inf->stats.lists++;
    if (streaming)
        inf->stats.watch_lists++;
    snprintf(inf->stats.last_rv, sizeof inf->stats.last_rv, "%s", rv ? rv : "");
    inf->synced = true;
    pthread_cond_broadcast(&inf->cv);
    pthread_mutex_unlock(&inf->mu);
}

/* The bookmark that ends a streaming list's initial events. */
static bool initial_events_end(const json_t *obj)
{
    json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
    const char *v = json_string_value(json_object_get(ann, GR_KUBE_INITIAL_EVENTS_END));
    return v && strcmp(v, "true") == 0;
}

typedef struct watch_ctx {
    gr_kube_informer *inf;
    gr_kube_map *seen; /* non-NULL while a streaming list's initial events arrive */
    bool initial_done; /* the initial-events-end bookmark was applied */
    char end_rv[64];   /* its resourceVersion */
} watch_ctx;

static int on_event(void *u, const gr_kube_watch_event *ev)
{
    watch_ctx *wc = u;
    gr_kube_informer *inf = wc->inf;
    gr_err e;
    gr_err_clear(&e);
    int rc = GR_OK;
    bool ended = false;
    pthread_mutex_lock(&inf->hmu);
    if (wc->seen && ev->type == GR_KUBE_EV_BOOKMARK && initial_events_end(ev->object)) {
        rc = finish_relist(inf->store, &inf->o, wc->seen, &e);
        const char *rv = gr_kube_meta_str(ev->object, "resourceVersion");
        snprintf(wc->end_rv, sizeof wc->end_rv, "%s", rv ? rv : "");
        gr_kube_map_clear(wc->seen, NULL);
        wc->seen = NULL;
        wc->initial_done = ended = true;
    } else {
        rc = apply_obj(inf->store, &inf->o, (int)ev->type, ev->object, wc->seen, true, &e);
    }
    pthread_mutex_unlock(&inf->hmu);
    if (ended)
        mark_synced(inf, wc->end_rv, true);
    if (rc != GR_OK)
        gr_log(GR_LOG_WARN, "kube", "watch event not applied",
               GR_KV_STR("resource", inf->o.gvr.resource), GR_KV_STR("error", e.msg), GR_KV_END);
    pthread_mutex_lock(&inf->mu);
    if (ev->type == GR_KUBE_EV_BOOKMARK)
        inf->stats.bookmarks++;
    else
        inf->stats.events++;
    pthread_mutex_unlock(&inf->mu);
    return rc == GR_ENOMEM ? GR_ENOMEM : 0;
}

/* Paginated LIST, each page applied as it arrives (never the whole list in
 * memory), then the keys no page had are deleted. rv receives the list's
 * resourceVersion. */
static int do_list(gr_kube_informer *inf, char *rv, size_t rvsz, gr_err *err)
{
    gr_kube_opts lo = {0};
    lo.label_selector = inf->o.label_selector;
    lo.field_selector = inf->o.field_selector;
    lo.limit = inf->o.page_size > 0 ? inf->o.page_size : GR_KUBE_LIST_PAGE;
    lo.cancel = &inf->stop;
    lo.timeout_ms = 120000;
    gr_kube_map seen = {0};
    char *cont = NULL;
    bool fell_back = false;
    int rc = GR_OK;
    for (;;) {
        json_t *page = NULL;
        gr_kube_status st;
        lo.continue_token = cont;
        rc = gr_kube_list(inf->c, &inf->o.gvr, inf->o.ns, &lo, &page, &st, err);
        if (rc == GR_ESTATE && cont && !fell_back && gr_kube_status_is_gone(&st)) {
            /* the continue token expired: one full list from the start (as
             * client-go's pager); forget the pages seen so far, the full
             * list decides what still exists */
            free(cont);
            cont = NULL;
            lo.limit = 0;
            fell_back = true;
            gr_kube_map_clear(&seen, NULL);
            continue;
        }
        if (rc != GR_OK)
            break;
        free(cont);
        cont = NULL;
        const char *lrv = gr_kube_meta_str(page, "resourceVersion");
        snprintf(rv, rvsz, "%s", lrv ? lrv : "");
        const char *next = gr_kube_list_continue(page);
        if (next && !(cont = strdup(next))) {
            json_decref(page);
            rc = gr_err_set(err, GR_ENOMEM, "out of memory");
            break;
        }
        size_t i;
        json_t *it;
        pthread_mutex_lock(&inf->hmu);
        json_array_foreach(json_object_get(page, "items"), i, it)
        {
            gr_err e;
            if (apply_obj(inf->store, &inf->o, GR_KUBE_EV_ADDED, it, &seen, true, &e) ==
                GR_ENOMEM) {
                rc = gr_err_set(err, GR_ENOMEM, "%s", e.msg);
                break;
            }
        }
        pthread_mutex_unlock(&inf->hmu);
        json_decref(page);
        if (rc != GR_OK || !cont)
            break;
    }
    free(cont);
    if (rc == GR_OK) {
        pthread_mutex_lock(&inf->hmu);
        rc = finish_relist(inf->store, &inf->o, &seen, err);
        pthread_mutex_unlock(&inf->hmu);
    }
    gr_kube_map_clear(&seen, NULL);
    if (rc == GR_OK)
        mark_synced(inf, rv, false);
    return rc;
}

static void watch_opts(gr_kube_informer *inf, gr_kube_opts *wo, const char *rv)
{
    memset(wo, 0, sizeof *wo);
    wo->label_selector = inf->o.label_selector;
    wo->field_selector = inf->o.field_selector;
    wo->resource_version = rv;
    wo->allow_bookmarks = true;
    wo->timeout_seconds = inf->o.watch_timeout_s;
    wo->max_response = inf->o.max_object;
    wo->cancel = &inf->stop;
    /* handlers get read-only objects; a transform may edit them in place */
    wo->share_embedded = inf->o.transform == NULL;
}

/* Did the server refuse the streaming list itself (an HTTP error before any
 * event: the WatchList feature off, or a server that predates it)? */
static bool refused(const gr_kube_status *st)
{
    long h = st->http_code;
    return h >= 400 && h < 500 && h != 408 && h != 410 && h != 429;
}

/* What the informer does after a watch. */
enum {
    W_STOP,           /* stopping */
    W_REWATCH,        /* the server ended a healthy stream: watch again from rv */
    W_RESYNC,         /* 410 Gone/Expired: re-sync now */
    W_LIST_NOW,       /* a streaming list did not complete: paginated LIST now */
    W_BACKOFF,        /* broken connection: watch again from rv after a backoff */
    W_RESYNC_BACKOFF, /* lost our place in the stream: re-sync after a backoff */
};

/* One watch. streaming: a streaming list (sendInitialEvents) that first
 * re-syncs the cache; otherwise a plain watch from rv. Returns what to do
 * next (W_*); rv is advanced to the last delivered resourceVersion. */
static int watch_once(gr_kube_informer *inf, bool streaming, char *rv, size_t rvsz)
{
    gr_kube_opts wo;
    watch_opts(inf, &wo, streaming ? "" : rv);
    gr_kube_map seen = {0};
    watch_ctx wc = {0};
    wc.inf = inf;
    if (streaming) {
        wo.send_initial_events = true;
        wo.resource_version_match = "NotOlderThan";
        wc.seen = &seen;
    }
    gr_kube_watch_stats ws;
    memset(&ws, 0, sizeof ws);
    gr_kube_status st;
    gr_kube_status_clear(&st);
    gr_err e;
    gr_err_clear(&e);
    pthread_mutex_lock(&inf->mu);
    inf->stats.watches++;
    pthread_mutex_unlock(&inf->mu);
    int rc = gr_kube_watch(inf->c, &inf->o.gvr, inf->o.ns, &wo, inf->o.idle_s, on_event, &wc, &ws,
                           &st, &e);
    gr_kube_map_clear(&seen, NULL);
    bool in_sync = !streaming || wc.initial_done;
    if (in_sync) {
        const char *nrv = ws.last_rv[0] ? ws.last_rv : wc.end_rv;
        if (nrv[0]) {
            snprintf(rv, rvsz, "%s", nrv);
            pthread_mutex_lock(&inf->mu);
            snprintf(inf->stats.last_rv, sizeof inf->stats.last_rv, "%s", rv);
            pthread_mutex_unlock(&inf->mu);
        }
    }
    if (atomic_load(&inf->stop))
        return W_STOP;
    if (!in_sync) {
        /* the streaming list did not complete: LIST instead (client-go
         * does the same: progress is better than deadlock) */
        if (rc != GR_OK && refused(&st)) {
            inf->watchlist_refused = true;
            gr_log(GR_LOG_INFO, "kube", "streaming list refused; using paginated LIST",
                   GR_KV_STR("resource", inf->o.gvr.resource), GR_KV_STR("error", e.msg),
                   GR_KV_END);
        } else if (rc != GR_OK) {
            stat_err(inf, "streaming list failed; falling back to LIST", &e);
        } else {
            gr_log(GR_LOG_WARN, "kube", "streaming list ended before its initial-events bookmark",
                   GR_KV_STR("resource", inf->o.gvr.resource), GR_KV_END);
        }
        if (inf->o.sync_mode == GR_KUBE_SYNC_WATCHLIST)
            return W_RESYNC_BACKOFF;
        pthread_mutex_lock(&inf->mu);
        inf->stats.list_fallbacks++;
        pthread_mutex_unlock(&inf->mu);
        return W_LIST_NOW;
    }
    if (rc == GR_OK)
        return W_REWATCH;
    if (rc == GR_ESTATE && gr_kube_status_is_gone(&st)) {
        pthread_mutex_lock(&inf->mu);
        inf->stats.gone++;
        pthread_mutex_unlock(&inf->mu);
        gr_log(GR_LOG_INFO, "kube", "watch expired; relisting",
               GR_KV_STR("resource", inf->o.gvr.resource), GR_KV_STR("error", e.msg), GR_KV_END);
        return W_RESYNC;
    }
    stat_err(inf, "watch failed; re-watching after backoff", &e);
    if (rc == GR_EPARSE || rc == GR_ETOOBIG || rc == GR_ENOMEM)
        return W_RESYNC_BACKOFF; /* we may have lost our place in the stream */
    return W_BACKOFF;
}

static void *run(void *arg)
{
    gr_kube_informer *inf = arg;
    gr_kube_backoff bo;
    gr_kube_backoff_init(&bo, inf->o.backoff_initial_ns, inf->o.backoff_max_ns, 0,
                         (uint32_t)gr_kube_mono_ns());
    char rv[64] = "";
    bool need_sync = true, list_now = false;
    while (!atomic_load(&inf->stop)) {
        bool streaming = false;
        if (need_sync) {
            bool use_list = list_now || inf->o.sync_mode == GR_KUBE_SYNC_LIST ||
                            (inf->o.sync_mode == GR_KUBE_SYNC_AUTO && inf->watchlist_refused);
            list_now = false;
            if (use_list) {
                gr_err e;
                gr_err_clear(&e);
                if (do_list(inf, rv, sizeof rv, &e) != GR_OK) {
                    if (atomic_load(&inf->stop))
                        break;
                    stat_err(inf, "list failed; retrying", &e);
                    gr_kube_sleep_ns(gr_kube_backoff_next(&bo, gr_kube_mono_ns()), &inf->stop);
                    continue;
                }
            } else {
                streaming = true; /* the watch below re-syncs */
            }
        }
        int next = watch_once(inf, streaming, rv, sizeof rv);
        switch (next) {
        case W_STOP:
            return NULL;
        case W_REWATCH:
            need_sync = false;
            gr_kube_backoff_reset(&bo);
            break;
        case W_RESYNC:
            need_sync = true;
            break;
        case W_LIST_NOW:
            need_sync = list_now = true;
            break;
        case W_BACKOFF:
        case W_RESYNC_BACKOFF:
            need_sync = next == W_RESYNC_BACKOFF;
            gr_kube_sleep_ns(gr_kube_backoff_next(&bo, gr_kube_mono_ns()), &inf->stop);
            break;
        }
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
