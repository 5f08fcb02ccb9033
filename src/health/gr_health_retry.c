/*
 * gr_health_retry.c — the retry policy of health-event publishing (pure).
 * See gr_health_retry.h.
 */
#include "gr_health_retry.h"

#include "gr_grpc_wire.h"

void gr_health_retry_init(gr_health_retry *r, gr_health_retry_mode mode, int64_t window_ns)
{
    r->mode = mode;
    r->window_ns = window_ns > 0 ? window_ns : GR_HEALTH_DEFAULT_WINDOW_NS;
    r->budget_left_ns = r->window_ns;
    r->attempt_max_ns = GR_HEALTH_ATTEMPT_MAX_NS;
    r->max_attempts = GR_HEALTH_SOCKET_ATTEMPTS;
}

void gr_health_retry_event_begin(const gr_health_retry *r, gr_health_retry_event *e, int64_t now_ns)
{
    e->start_ns = now_ns;
    e->attempts = 0;
    e->permanent = 0;
    e->backoff_ns = GR_HEALTH_BACKOFF_INITIAL_NS;
    e->last_chance = r->mode == GR_HEALTH_RETRY_DIRECT && r->budget_left_ns <= 0;
    e->deadline_ns = now_ns + (r->budget_left_ns > 0 ? r->budget_left_ns : 0);
}

int gr_health_retry_next(const gr_health_retry *r, const gr_health_retry_event *e, int64_t now_ns,
                         int64_t *timeout_ns)
{
    int64_t max = r->attempt_max_ns;
    if (r->mode == GR_HEALTH_RETRY_SOCKET) {
        if (e->attempts >= r->max_attempts)
            return 0;
        *timeout_ns = max;
        return 1;
    }
    if (e->last_chance) {
        if (e->attempts > 0)
            return 0;
        *timeout_ns = GR_HEALTH_LAST_CHANCE_NS < max ? GR_HEALTH_LAST_CHANCE_NS : max;
        return 1;
    }
    int64_t remaining = e->deadline_ns - now_ns;
    if (e->attempts == 0) {
        int64_t t = remaining < max ? remaining : max;
        int64_t floor = GR_HEALTH_FIRST_ATTEMPT_MIN_NS < max ? GR_HEALTH_FIRST_ATTEMPT_MIN_NS : max;
        *timeout_ns = t > floor ? t : floor;
        return 1;
    }
    if (remaining <= 0)
        return 0;
    *timeout_ns = remaining < max ? remaining : max;
    return 1;
}

int gr_health_retry_is_permanent(int code)
{
    return code == GR_GRPC_INVALID_ARGUMENT || code == GR_GRPC_PERMISSION_DENIED ||
           code == GR_GRPC_UNIMPLEMENTED;
}

int64_t gr_health_retry_jitter(int64_t ns, uint32_t rnd)
{
    /* factor in [0.9, 1.1]: ns * (900000 + rnd % 200001) / 1000000 */
    int64_t f = 900000 + (int64_t)(rnd % 200001u);
    if (ns <= 0)
        return 0;
    if (ns > INT64_MAX / 1100001)
        return ns / 1000000 * f;
    return ns * f / 1000000;
}

static int socket_retryable(int code)
{
    return code == GR_GRPC_UNAVAILABLE || code == GR_GRPC_DEADLINE_EXCEEDED ||
           code == GR_GRPC_RESOURCE_EXHAUSTED;
}

gr_health_retry_decision gr_health_retry_after(const gr_health_retry *r, gr_health_retry_event *e,
                                               int code, int64_t now_ns, uint32_t rnd,
                                               int64_t *delay_ns)
{
    e->attempts++;
    *delay_ns = 0;
    if (code == GR_GRPC_OK)
        return GR_HEALTH_RETRY_DONE;
    if (r->mode == GR_HEALTH_RETRY_SOCKET) {
        if (!socket_retryable(code) || e->attempts >= r->max_attempts)
            return GR_HEALTH_RETRY_GIVE_UP;
        *delay_ns = gr_health_retry_jitter(e->backoff_ns, rnd);
        e->backoff_ns = e->backoff_ns * 3 / 2;
        return GR_HEALTH_RETRY_AGAIN;
    }
    if (gr_health_retry_is_permanent(code)) {
        e->permanent = 1;
        return GR_HEALTH_RETRY_GIVE_UP;
    }
    if (e->last_chance)
        return GR_HEALTH_RETRY_GIVE_UP;
    int64_t delay = gr_health_retry_jitter(e->backoff_ns, rnd);
    if (now_ns + delay >= e->deadline_ns)
        return GR_HEALTH_RETRY_GIVE_UP;
    e->backoff_ns =
        e->backoff_ns * 2 < GR_HEALTH_BACKOFF_MAX_NS ? e->backoff_ns * 2 : GR_HEALTH_BACKOFF_MAX_NS;
    *delay_ns = delay;
    return GR_HEALTH_RETRY_AGAIN;
}

void gr_health_retry_event_end(gr_health_retry *r, const gr_health_retry_event *e, int64_t now_ns,
                               int delivered)
{
    if (r->mode != GR_HEALTH_RETRY_DIRECT)
        return;
    if (delivered && e->attempts <= 1)
        return;
    int64_t spent = now_ns - e->start_ns;
    if (spent < 0)
        spent = 0;
    r->budget_left_ns = r->budget_left_ns > spent ? r->budget_left_ns - spent : 0;
}
