/*
 * gr_health_retry.h — when to try, how long, and when to give up: the pure
 * retry policy of health-event publishing (no clock, no sleep, no I/O).
 *
 * The caller passes the current monotonic time and a random number in; the
 * policy answers with an attempt timeout or a backoff delay. Tests drive it
 * with a fake clock (test/health/test_health_retry.c).
 *
 * Socket mode (node-local platform connector, unix socket):
 *   up to GR_HEALTH_SOCKET_ATTEMPTS attempts of at most 30 s each; only
 *   UNAVAILABLE, DEADLINE_EXCEEDED and RESOURCE_EXHAUSTED are retried, after
 *   2 s, 3 s, 4.5 s, 6.75 s (x1.5, +/-10 % jitter); every other code gives up.
 *
 * Direct mode (deployment platform connector, PF-179..PF-182):
 *   a budget (HEALTH_PUBLISH_RETRY_WINDOW, default 5m) shared by all events
 *   of one publisher. An event starts with deadline = now + budget left.
 *   Attempt timeout = min(30 s, deadline - now); the first attempt gets at
 *   least 5 s. Backoff 2 s doubling to 30 s, +/-10 % jitter; a retry whose
 *   backoff would reach the deadline is not made. INVALID_ARGUMENT,
 *   PERMISSION_DENIED and UNIMPLEMENTED give the event up at once; every
 *   other code (UNAUTHENTICATED included: the token rotates) is retried.
 *   When the event ends, its elapsed time is subtracted from the budget if it
 *   needed more than one attempt or was not delivered. Once the budget is
 *   spent, each later event gets exactly one attempt of 5 s.
 *
 * No allocation; the structs are plain values owned by the caller.
 */
#ifndef GR_HEALTH_RETRY_H
#define GR_HEALTH_RETRY_H

#include <stdint.h>

#define GR_HEALTH_NS_PER_S ((int64_t)1000000000)

#define GR_HEALTH_ATTEMPT_MAX_NS       (30 * GR_HEALTH_NS_PER_S) /* PF-180 */
#define GR_HEALTH_FIRST_ATTEMPT_MIN_NS (5 * GR_HEALTH_NS_PER_S)
#define GR_HEALTH_LAST_CHANCE_NS       (5 * GR_HEALTH_NS_PER_S) /* PF-181 */
#define GR_HEALTH_BACKOFF_INITIAL_NS   (2 * GR_HEALTH_NS_PER_S)
#define GR_HEALTH_BACKOFF_MAX_NS       (30 * GR_HEALTH_NS_PER_S)
#define GR_HEALTH_DEFAULT_WINDOW_NS    (300 * GR_HEALTH_NS_PER_S) /* PF-179 */
#define GR_HEALTH_SOCKET_ATTEMPTS      5
#define GR_HEALTH_SOCKET_WAIT_NS       (20 * GR_HEALTH_NS_PER_S)

typedef enum gr_health_retry_mode {
    GR_HEALTH_RETRY_SOCKET = 0,
    GR_HEALTH_RETRY_DIRECT = 1,
} gr_health_retry_mode;

/* Per-publisher state. */
typedef struct gr_health_retry {
    gr_health_retry_mode mode;
    int64_t window_ns;      /* direct: the configured budget */
    int64_t budget_left_ns; /* direct: what is left of it (>= 0) */
    int64_t attempt_max_ns; /* 30 s unless lowered (tests, CLI) */
    int max_attempts;       /* socket mode */
} gr_health_retry;

/* Per-event state. */
typedef struct gr_health_retry_event {
    int64_t start_ns;
    int64_t deadline_ns; /* direct, budget phase */
    int64_t backoff_ns;  /* next nominal backoff */
    int attempts;        /* attempts finished */
    int last_chance;     /* direct: the budget was spent when the event began */
    int permanent;       /* gave up on a permanent code */
} gr_health_retry_event;

typedef enum gr_health_retry_decision {
    GR_HEALTH_RETRY_DONE = 0,    /* delivered */
    GR_HEALTH_RETRY_AGAIN = 1,   /* sleep *delay_ns, then ask for the next attempt */
    GR_HEALTH_RETRY_GIVE_UP = 2, /* not delivered; stop */
} gr_health_retry_decision;

/* window_ns is used in direct mode only (<= 0 selects the 5m default). */
void gr_health_retry_init(gr_health_retry *r, gr_health_retry_mode mode, int64_t window_ns);

void gr_health_retry_event_begin(const gr_health_retry *r, gr_health_retry_event *e,
                                 int64_t now_ns);

/* Timeout for the next attempt in *timeout_ns; returns 0 when no attempt may
 * be made any more (then the event is given up), 1 otherwise. */
int gr_health_retry_next(const gr_health_retry *r, const gr_health_retry_event *e, int64_t now_ns,
                         int64_t *timeout_ns);

/* Record an attempt that ended at now_ns with gRPC status `code`. `rnd` is a
 * uniform random 32-bit number for the jitter. On GR_HEALTH_RETRY_AGAIN
 * *delay_ns holds the backoff to sleep. */
gr_health_retry_decision gr_health_retry_after(const gr_health_retry *r, gr_health_retry_event *e,
                                               int code, int64_t now_ns, uint32_t rnd,
                                               int64_t *delay_ns);

/* The event is over (delivered or not): charge the budget. */
void gr_health_retry_event_end(gr_health_retry *r, const gr_health_retry_event *e, int64_t now_ns,
                               int delivered);

/* 1 for INVALID_ARGUMENT, PERMISSION_DENIED, UNIMPLEMENTED (PF-182). */
int gr_health_retry_is_permanent(int code);

/* Apply +/-10 % jitter to `ns` with random `rnd` (pure; exposed for tests). */
int64_t gr_health_retry_jitter(int64_t ns, uint32_t rnd);

#endif
