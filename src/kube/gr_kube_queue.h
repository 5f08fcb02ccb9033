/*
 * gr_kube_queue.h — a rate-limited work queue of string keys and a
 * controller runner (client-go's workqueue + controller loop, small).
 *
 * Queue semantics (as client-go's):
 *  - dedup: a key added while it is already waiting is queued once;
 *  - a key being processed is never handed to a second worker; if it is
 *    added meanwhile, it is queued again when gr_kube_queue_done() is called;
 *  - add_after(key, d): the key becomes ready after d (the earliest of
 *    several pending delays wins);
 *  - add_rate_limited(key): add_after with the key's backoff: max(per-key
 *    exponential 5 ms·2^failures capped at 1000 s, an overall token bucket
 *    of 10 qps / burst 100) — client-go's DefaultControllerRateLimiter;
 *    forget(key) resets its failures.
 *  - shutdown: get() returns GR_ECANCELED once the queue is shut down and
 *    empty; shutdown_drain waits for keys being processed to be done.
 *
 * Ownership: keys are copied in; get() hands the caller a string it must
 * pass back to done() and then free(). Thread-safe.
 */
#ifndef GR_KUBE_QUEUE_H
#define GR_KUBE_QUEUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gr_err.h"

/* ---- per-item backoff (pure) ------------------------------------------- */

typedef struct gr_kube_rate_limiter gr_kube_rate_limiter;
/* base_ns/max_ns 0 = 5 ms / 1000 s; qps/burst 0 = 10 / 100; qps < 0 disables
 * the overall bucket. */
int gr_kube_rate_limiter_new(int64_t base_ns, int64_t max_ns, double qps, int burst,
                             gr_kube_rate_limiter **out, gr_err *err);
void gr_kube_rate_limiter_free(gr_kube_rate_limiter *rl);
/* Delay before `key` may be retried at now_ns; counts a failure. */
int64_t gr_kube_rate_limiter_when(gr_kube_rate_limiter *rl, const char *key, int64_t now_ns);
void gr_kube_rate_limiter_forget(gr_kube_rate_limiter *rl, const char *key);
int gr_kube_rate_limiter_failures(gr_kube_rate_limiter *rl, const char *key);

/* ---- queue ------------------------------------------------------------- */

typedef struct gr_kube_queue gr_kube_queue;

/* rl may be NULL for the default limiter; the queue takes ownership. */
int gr_kube_queue_new(gr_kube_rate_limiter *rl, gr_kube_queue **out, gr_err *err);
void gr_kube_queue_free(gr_kube_queue *q);
int gr_kube_queue_add(gr_kube_queue *q, const char *key);
int gr_kube_queue_add_after(gr_kube_queue *q, const char *key, int64_t delay_ns);
int gr_kube_queue_add_rate_limited(gr_kube_queue *q, const char *key);
void gr_kube_queue_forget(gr_kube_queue *q, const char *key);
int gr_kube_queue_requeues(gr_kube_queue *q, const char *key);
/* Block until a key is ready (or timeout_ns passes when > 0: GR_ETIMEDOUT;
 * or shutdown: GR_ECANCELED). *key is the caller's (free() after done). */
int gr_kube_queue_get(gr_kube_queue *q, int64_t timeout_ns, char **key);
void gr_kube_queue_done(gr_kube_queue *q, const char *key);
/* Keys ready now (not counting delayed or processing ones). */
size_t gr_kube_queue_len(gr_kube_queue *q);
void gr_kube_queue_shutdown(gr_kube_queue *q);
/* Shut down and wait until every key handed out has been done(). */
void gr_kube_queue_shutdown_drain(gr_kube_queue *q);
bool gr_kube_queue_shutting_down(gr_kube_queue *q);

/* ---- controller -------------------------------------------------------- */

/* Reconcile one key. Return GR_OK (forget the key; if *requeue_after_ns > 0
 * it comes back after that delay) or an error (the key is retried with the
 * rate limiter's backoff; the error is logged). */
typedef int (*gr_kube_reconcile_fn)(void *ctx, const char *key, int64_t *requeue_after_ns,
                                    gr_err *err);

typedef struct gr_kube_controller gr_kube_controller;

/* Start `workers` threads pulling from q (borrowed) and calling fn. name
 * labels log lines. */
int gr_kube_controller_start(const char *name, gr_kube_queue *q, int workers,
                             gr_kube_reconcile_fn fn, void *ctx, gr_kube_controller **out,
                             gr_err *err);
/* Graceful stop: shut the queue down, let in-flight reconciles finish, join
 * the workers, free the controller. */
void gr_kube_controller_stop(gr_kube_controller *c);
/* Reconciles run so far (successful + failed). */
uint64_t gr_kube_controller_reconciles(gr_kube_controller *c);

#endif
