/* gr_kube_queue.c — rate-limited work queue and controller runner. */
#include "gr_kube_queue.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gr_kube_rest.h"
#include "gr_log.h"
#include "kube_internal.h"

/* ---- rate limiter ------------------------------------------------------ */

struct gr_kube_rate_limiter {
    pthread_mutex_t mu;
    int64_t base_ns, max_ns;
    gr_kube_bucket bucket;
    bool use_bucket;
    gr_kube_map failures; /* key -> (void*)(intptr_t)count */
};

int gr_kube_rate_limiter_new(int64_t base_ns, int64_t max_ns, double qps, int burst,
                             gr_kube_rate_limiter **out, gr_err *err)
{
    gr_kube_rate_limiter *rl = calloc(1, sizeof *rl);
    if (!rl)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    pthread_mutex_init(&rl->mu, NULL);
    rl->base_ns = base_ns > 0 ? base_ns : 5000000LL;
    rl->max_ns = max_ns > 0 ? max_ns : 1000000000000LL;
    rl->use_bucket = qps >= 0;
    gr_kube_bucket_init(&rl->bucket, qps > 0 ? qps : 10.0, burst > 0 ? burst : 100);
    *out = rl;
    return GR_OK;
}

void gr_kube_rate_limiter_free(gr_kube_rate_limiter *rl)
{
    if (!rl)
        return;
    gr_kube_map_clear(&rl->failures, NULL);
    pthread_mutex_destroy(&rl->mu);
    free(rl);
}

int64_t gr_kube_rate_limiter_when(gr_kube_rate_limiter *rl, const char *key, int64_t now_ns)
{
    pthread_mutex_lock(&rl->mu);
    intptr_t n = (intptr_t)gr_kube_map_get(&rl->failures, key);
    gr_kube_map_put(&rl->failures, key, (void *)(n + 1), NULL);
    int64_t d = rl->base_ns;
    for (intptr_t i = 0; i < n && d < rl->max_ns; i++)
        d *= 2;
    if (d > rl->max_ns)
        d = rl->max_ns;
    if (rl->use_bucket) {
        int64_t b = gr_kube_bucket_reserve(&rl->bucket, now_ns);
        if (b > d)
            d = b;
    }
    pthread_mutex_unlock(&rl->mu);
    return d;
}

void gr_kube_rate_limiter_forget(gr_kube_rate_limiter *rl, const char *key)
{
    pthread_mutex_lock(&rl->mu);
    gr_kube_map_del(&rl->failures, key, NULL);
    pthread_mutex_unlock(&rl->mu);
}

int gr_kube_rate_limiter_failures(gr_kube_rate_limiter *rl, const char *key)
{
    pthread_mutex_lock(&rl->mu);
    intptr_t n = (intptr_t)gr_kube_map_get(&rl->failures, key);
    pthread_mutex_unlock(&rl->mu);
    return (int)n;
}

/* ---- queue ------------------------------------------------------------- */

typedef struct delayed {
    int64_t ready_ns;
    char *key;
} delayed;

struct gr_kube_queue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char **fifo; /* ring buffer */
    size_t head, count, cap;
    gr_kube_map dirty;      /* waiting to be processed */
    gr_kube_map processing; /* handed out */
    delayed *heap;          /* min-heap on ready_ns */
    size_t nheap, capheap;
    gr_kube_map waiting; /* key -> heap ready time (int64 boxed) */
    bool shutdown;
    gr_kube_rate_limiter *rl;
};

int gr_kube_queue_new(gr_kube_rate_limiter *rl, gr_kube_queue **out, gr_err *err)
{
    gr_kube_queue *q = calloc(1, sizeof *q);
    if (!q) {
        gr_kube_rate_limiter_free(rl);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    if (!rl && gr_kube_rate_limiter_new(0, 0, 0, 0, &rl, err) != GR_OK) {
        free(q);
        return GR_ENOMEM;
    }
    q->rl = rl;
    pthread_mutex_init(&q->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->cv, &ca);
    pthread_condattr_destroy(&ca);
    *out = q;
    return GR_OK;
}

void gr_kube_queue_free(gr_kube_queue *q)
{
    if (!q)
        return;
    for (size_t i = 0; i < q->count; i++)
        free(q->fifo[(q->head + i) % q->cap]);
    free(q->fifo);
    for (size_t i = 0; i < q->nheap; i++)
        free(q->heap[i].key);
    free(q->heap);
    gr_kube_map_clear(&q->dirty, NULL);
    gr_kube_map_clear(&q->processing, NULL);
    gr_kube_map_clear(&q->waiting, free);
    gr_kube_rate_limiter_free(q->rl);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    free(q);
}

static int fifo_push(gr_kube_queue *q, const char *key)
{
    if (q->count == q->cap) {
        size_t nc = q->cap ? q->cap * 2 : 16;
        char **n = malloc(nc * sizeof *n);
        if (!n)
            return GR_ENOMEM;
        for (size_t i = 0; i < q->count; i++)
            n[i] = q->fifo[(q->head + i) % q->cap];
        free(q->fifo);
        q->fifo = n;
        q->head = 0;
        q->cap = nc;
    }
    char *k = strdup(key);
    if (!k)
        return GR_ENOMEM;
    q->fifo[(q->head + q->count) % q->cap] = k;
    q->count++;
    return GR_OK;
}

/* locked */
static int add_locked(gr_kube_queue *q, const char *key)
{
    if (q->shutdown || gr_kube_map_has(&q->dirty, key))
        return GR_OK;
    int rc = gr_kube_map_put(&q->dirty, key, NULL, NULL);
    if (rc != GR_OK)
        return rc;
    if (gr_kube_map_has(&q->processing, key))
        return GR_OK; /* re-queued by done() */
    rc = fifo_push(q, key);
    if (rc != GR_OK) {
        gr_kube_map_del(&q->dirty, key, NULL);
        return rc;
    }
    pthread_cond_signal(&q->cv);
    return GR_OK;
}

int gr_kube_queue_add(gr_kube_queue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    int rc = add_locked(q, key);
    pthread_mutex_unlock(&q->mu);
    return rc;
}

static void heap_up(gr_kube_queue *q, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (q->heap[p].ready_ns <= q->heap[i].ready_ns)
            break;
        delayed t = q->heap[p];
        q->heap[p] = q->heap[i];
        q->heap[i] = t;
        i = p;
    }
}

static void heap_down(gr_kube_queue *q, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->nheap && q->heap[l].ready_ns < q->heap[m].ready_ns)
            m = l;
        if (r < q->nheap && q->heap[r].ready_ns < q->heap[m].ready_ns)
            m = r;
        if (m == i)
            return;
        delayed t = q->heap[m];
        q->heap[m] = q->heap[i];
        q->heap[i] = t;
        i = m;
    }
}

int gr_kube_queue_add_after(gr_kube_queue *q, const char *key, int64_t delay_ns)
{
    if (delay_ns <= 0)
        return gr_kube_queue_add(q, key);
    int64_t ready = gr_kube_mono_ns() + delay_ns;
    pthread_mutex_lock(&q->mu);
    int rc = GR_OK;
    if (q->shutdown)
        goto out;
    int64_t *have = gr_kube_map_get(&q->waiting, key);
    if (have && *have <= ready)
        goto out; /* an earlier wake-up is already pending */
    if (have) {
        /* move the existing entry earlier */
        for (size_t i = 0; i < q->nheap; i++) {
            if (strcmp(q->heap[i].key, key) == 0) {
                q->heap[i].ready_ns = ready;
                heap_up(q, i);
                break;
            }
        }
        *have = ready;
        pthread_cond_signal(&q->cv);
        goto out;
    }
    if (q->nheap == q->capheap) {
        size_t nc = q->capheap ? q->capheap * 2 : 16;
        delayed *n = realloc(q->heap, nc * sizeof *n);
        if (!n) {
            rc = GR_ENOMEM;
            goto out;
        }
        q->heap = n;
        q->capheap = nc;
    }
    int64_t *box = malloc(sizeof *box);
    char *k = strdup(key);
    if (!box || !k || gr_kube_map_put(&q->waiting, key, box, NULL) != GR_OK) {
        free(box);
        free(k);
        rc = GR_ENOMEM;
        goto out;
    }
    *box = ready;
    q->heap[q->nheap].ready_ns = ready;
    q->heap[q->nheap].key = k;
    heap_up(q, q->nheap++);
    pthread_cond_signal(&q->cv);
out:
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int gr_kube_queue_add_rate_limited(gr_kube_queue *q, const char *key)
{
    return gr_kube_queue_add_after(q, key,
                                   gr_kube_rate_limiter_when(q->rl, key, gr_kube_mono_ns()));
}

void gr_kube_queue_forget(gr_kube_queue *q, const char *key)
{
    gr_kube_rate_limiter_forget(q->rl, key);
}

int gr_kube_queue_requeues(gr_kube_queue *q, const char *key)
{
    return gr_kube_rate_limiter_failures(q->rl, key);
}

/* locked: move ready delayed keys into the queue; return the next wake-up */
static int64_t promote(gr_kube_queue *q, int64_t now)
{
    while (q->nheap && q->heap[0].ready_ns <= now) {
        delayed d = q->heap[0];
        q->heap[0] = q->heap[--q->nheap];
        heap_down(q, 0);
        void *box = NULL;
        gr_kube_map_del(&q->waiting, d.key, &box);
        free(box);
        add_locked(q, d.key);
        free(d.key);
    }
    return q->nheap ? q->heap[0].ready_ns : 0;
}

int gr_kube_queue_get(gr_kube_queue *q, int64_t timeout_ns, char **key)
{
    *key = NULL;
    int64_t deadline = timeout_ns > 0 ? gr_kube_mono_ns() + timeout_ns : 0;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        int64_t now = gr_kube_mono_ns();
        int64_t next = q->shutdown ? 0 : promote(q, now);
        if (q->count)
            break;
        if (q->shutdown) {
            pthread_mutex_unlock(&q->mu);
            return GR_ECANCELED;
        }
        if (deadline && now >= deadline) {
            pthread_mutex_unlock(&q->mu);
            return GR_ETIMEDOUT;
        }
        int64_t wake = next;
        if (deadline && (!wake || deadline < wake))
            wake = deadline;
        if (wake) {
            struct timespec ts = {(time_t)(wake / 1000000000LL), (long)(wake % 1000000000LL)};
            pthread_cond_timedwait(&q->cv, &q->mu, &ts);
        } else {
            pthread_cond_wait(&q->cv, &q->mu);
        }
    }
    char *k = q->fifo[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    gr_kube_map_del(&q->dirty, k, NULL);
    gr_kube_map_put(&q->processing, k, NULL, NULL);
    pthread_mutex_unlock(&q->mu);
    *key = k;
    return GR_OK;
}

void gr_kube_queue_done(gr_kube_queue *q, const char *key)
{
    pthread_mutex_lock(&q->mu);
    gr_kube_map_del(&q->processing, key, NULL);
    if (gr_kube_map_has(&q->dirty, key) && fifo_push(q, key) == GR_OK)
        pthread_cond_signal(&q->cv);
    pthread_cond_broadcast(&q->cv); /* drain waiters */
    pthread_mutex_unlock(&q->mu);
}

size_t gr_kube_queue_len(gr_kube_queue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->count;
    pthread_mutex_unlock(&q->mu);
    return n;
}

void gr_kube_queue_shutdown(gr_kube_queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->shutdown = true;
    /* queued but not started keys are dropped: workers stop taking work */
    for (size_t i = 0; i < q->count; i++)
        free(q->fifo[(q->head + i) % q->cap]);
    q->count = 0;
    q->head = 0;
    gr_kube_map_clear(&q->dirty, NULL);
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

void gr_kube_queue_shutdown_drain(gr_kube_queue *q)
{
    gr_kube_queue_shutdown(q);
    pthread_mutex_lock(&q->mu);
    while (q->processing.n)
        pthread_cond_wait(&q->cv, &q->mu);
    pthread_mutex_unlock(&q->mu);
}

bool gr_kube_queue_shutting_down(gr_kube_queue *q)
{
    pthread_mutex_lock(&q->mu);
    bool s = q->shutdown;
    pthread_mutex_unlock(&q->mu);
    return s;
}

/* ---- controller -------------------------------------------------------- */

#define MAX_WORKERS 64

struct gr_kube_controller {
    char name[64];
    gr_kube_queue *q;
    gr_kube_reconcile_fn fn;
    void *ctx;
    pthread_t thr[MAX_WORKERS];
    int n;
    atomic_uint_fast64_t reconciles;
};

static void *worker(void *arg)
{
    gr_kube_controller *c = arg;
    for (;;) {
        char *key = NULL;
        if (gr_kube_queue_get(c->q, 0, &key) != GR_OK)
            return NULL;
        int64_t after = 0;
        gr_err err;
        gr_err_clear(&err);
        int rc = c->fn(c->ctx, key, &after, &err);
        atomic_fetch_add(&c->reconciles, 1);
        if (rc == GR_OK) {
            gr_kube_queue_forget(c->q, key);
            if (after > 0)
                gr_kube_queue_add_after(c->q, key, after);
        } else {
            gr_log(GR_LOG_WARN, c->name, "reconcile failed; retrying with backoff",
                   GR_KV_STR("key", key), GR_KV_STR("error", err.msg),
                   GR_KV_INT("requeues", gr_kube_queue_requeues(c->q, key)), GR_KV_END);
            gr_kube_queue_add_rate_limited(c->q, key);
        }
        gr_kube_queue_done(c->q, key);
        free(key);
    }
}

int gr_kube_controller_start(const char *name, gr_kube_queue *q, int workers,
                             gr_kube_reconcile_fn fn, void *ctx, gr_kube_controller **out,
                             gr_err *err)
{
    *out = NULL;
    if (workers < 1 || workers > MAX_WORKERS)
        return gr_err_set(err, GR_EINVAL, "controller %s: workers must be 1..%d (got %d)", name,
                          MAX_WORKERS, workers);
    gr_kube_controller *c = calloc(1, sizeof *c);
    if (!c)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    snprintf(c->name, sizeof c->name, "%s", name ? name : "controller");
    c->q = q;
    c->fn = fn;
    c->ctx = ctx;
    for (int i = 0; i < workers; i++) {
        if (pthread_create(&c->thr[i], NULL, worker, c) != 0) {
            gr_kube_controller_stop(c);
            return gr_err_set(err, GR_EIO, "controller %s: cannot start worker %d", name, i);
        }
        c->n++;
    }
    *out = c;
    return GR_OK;
}

void gr_kube_controller_stop(gr_kube_controller *c)
{
    if (!c)
        return;
    gr_kube_queue_shutdown_drain(c->q);
    for (int i = 0; i < c->n; i++)
        pthread_join(c->thr[i], NULL);
    free(c);
}

uint64_t gr_kube_controller_reconciles(gr_kube_controller *c)
{
    return atomic_load(&c->reconciles);
}
