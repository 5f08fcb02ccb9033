/*
 * test_health_retry.c — the publishing retry policy and budget arithmetic,
 * driven by a fake clock (no sleeps): the pure policy (gr_health_retry.h) and
 * the publisher loop with test hooks (gr_health.h).
 * Checklist: PF-179 (5m budget), PF-180 (30 s attempts), PF-181 (one 5 s
 * attempt after the budget), PF-182 (permanent refusals give up at once).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gr_health.h"
#include "gr_log.h"

#define S(x)  ((int64_t)(x)*GR_HEALTH_NS_PER_S)
#define MS(x) ((int64_t)(x)*1000000)
/* rnd % 200001 == 100000 gives a jitter factor of exactly 1.0 */
#define NOJITTER 100000u

static void test_jitter_bounds(void **state)
{
    (void)state;
    assert_int_equal(gr_health_retry_jitter(S(2), NOJITTER), S(2));
    assert_int_equal(gr_health_retry_jitter(S(2), 0), MS(1800));
    assert_int_equal(gr_health_retry_jitter(S(2), 200000), MS(2200));
    for (uint32_t r = 0; r < 2000000; r += 7919) {
        int64_t j = gr_health_retry_jitter(S(30), r * 2654435761u);
        assert_true(j >= S(27) && j <= S(33));
    }
}

/* Socket mode: 5 attempts, sleeps 2, 3, 4.5, 6.75 s; only transient codes. */
static void test_socket_policy(void **state)
{
    (void)state;
    gr_health_retry r;
    gr_health_retry_event e;
    int64_t t = 0, tmo, delay;
    gr_health_retry_init(&r, GR_HEALTH_RETRY_SOCKET, 0);
    gr_health_retry_event_begin(&r, &e, t);
    const int64_t want[] = {MS(2000), MS(3000), MS(4500), MS(6750)};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(gr_health_retry_next(&r, &e, t, &tmo), 1);
        assert_int_equal(tmo, S(30));
        assert_int_equal(gr_health_retry_after(&r, &e, GR_GRPC_UNAVAILABLE, t, NOJITTER, &delay),
                         GR_HEALTH_RETRY_AGAIN);
        assert_int_equal(delay, want[i]);
        t += delay;
    }
    assert_int_equal(gr_health_retry_next(&r, &e, t, &tmo), 1);
    assert_int_equal(gr_health_retry_after(&r, &e, GR_GRPC_DEADLINE_EXCEEDED, t, NOJITTER, &delay),
                     GR_HEALTH_RETRY_GIVE_UP);
    assert_int_equal(e.attempts, 5);
    assert_int_equal(gr_health_retry_next(&r, &e, t, &tmo), 0);

    /* Non-transient codes stop at once (UNAUTHENTICATED included). */
    const int stop[] = {GR_GRPC_UNAUTHENTICATED, GR_GRPC_INVALID_ARGUMENT,
                        GR_GRPC_PERMISSION_DENIED, GR_GRPC_INTERNAL};
    for (size_t i = 0; i < sizeof stop / sizeof stop[0]; i++) {
        gr_health_retry_event_begin(&r, &e, t);
        assert_int_equal(gr_health_retry_after(&r, &e, stop[i], t, NOJITTER, &delay),
                         GR_HEALTH_RETRY_GIVE_UP);
    }
    gr_health_retry_event_begin(&r, &e, t);
    assert_int_equal(gr_health_retry_after(&r, &e, GR_GRPC_RESOURCE_EXHAUSTED, t, 0, &delay),
                     GR_HEALTH_RETRY_AGAIN);
    assert_int_equal(delay, MS(1800)); /* -10 % */
}

/* PF-179/PF-180/PF-181: the budget arithmetic, attempt by attempt. */
static void test_direct_budget(void **state)
{
    (void)state;
    gr_health_retry r;
    gr_health_retry_event e;
    int64_t t = S(1000), tmo, delay;
    gr_health_retry_init(&r, GR_HEALTH_RETRY_DIRECT, 0);
    assert_int_equal(r.window_ns, S(300)); /* default 5m */

    /* Event 1: every attempt fails instantly with UNAVAILABLE. Backoffs 2, 4,
     * 8, 16, then 30 s: attempts at +0, 2, 6, 14, 30, 60, …, 270; the next
     * backoff would reach +300, so it stops after 13 attempts. */
    gr_health_retry_event_begin(&r, &e, t);
    int64_t start = t;
    int attempts = 0;
    for (;;) {
        assert_int_equal(gr_health_retry_next(&r, &e, t, &tmo), 1);
        int64_t remaining = start + S(300) - t;
        assert_int_equal(tmo, remaining < S(30) ? remaining : S(30));
        attempts++;
        gr_health_retry_decision d =
            gr_health_retry_after(&r, &e, GR_GRPC_UNAVAILABLE, t, NOJITTER, &delay);
        if (d == GR_HEALTH_RETRY_GIVE_UP)
            break;
        assert_int_equal(d, GR_HEALTH_RETRY_AGAIN);
        assert_true(delay <= S(30));
        t += delay;
    }
    assert_int_equal(attempts, 13);
    assert_int_equal(t - start, S(270));
    gr_health_retry_event_end(&r, &e, t, 0);
    assert_int_equal(r.budget_left_ns, S(30));

    /* Event 2: 30 s left. First attempt gets min(30, 30); it times out at
     * the deadline; no retry fits. The budget is then spent. */
    gr_health_retry_event_begin(&r, &e, t);
    assert_false(e.last_chance);
    assert_int_equal(gr_health_retry_next(&r, &e, t, &tmo), 1);
    assert_int_equal(tmo, S(30));
    t += tmo;
    assert_int_equal(gr_health_retry_after(&r, &e, GR_GRPC_DEADLINE_EXCEEDED, t, NOJITTER, &delay),
                     GR_HEALTH_RETRY_GIVE_UP);
    gr_health_retry_event_end(&r, &e, t, 0);
    assert_int_equal(r.budget_left_ns, 0);

    /* Events 3 and 4 (PF-181): one attempt of 5 s each, whatever happens. */
    gr_health_retry_event_begin(&r, &e, t);
    assert_true(e.last_chance);
    assert_int_equal(gr_health_retry_next(&r, &e, t, &tmo), 1);
    assert_int_equal(tmo, S(5));
    t += S(5);
    assert_int_equal(gr_health_retry_after(&r, &e, GR_GRPC_UNAVAILABLE, t, NOJITTER, &delay),
                     GR_HEALTH_RETRY_GIVE_UP);
    assert_int_equal(gr_health_retry_next(&r, &e, t, &tmo), 0);
    gr_health_retry_event_end(&r, &e, t, 0);
    assert_int_equal(r.budget_left_ns, 0);

    gr_health_retry_event_begin(&r, &e, t);
    assert_int_equal(gr_health_retry_next(&r, &e, t, &tmo), 1);
    assert_int_equal(tmo, S(5));
    assert_int_equal(gr_health_retry_after(&r, &e, GR_GRPC_OK, t + S(1), NOJITTER, &delay),
                     GR_HEALTH_RETRY_DONE);
}

static void test_direct_charging(void **state)
{
    (void)state;
    gr_health_retry r;
    gr_health_retry_event e;
    int64_t t = 0, tmo, delay;
    gr_health_retry_init(&r, GR_HEALTH_RETRY_DIRECT, S(60));

    /* Delivered on the first attempt: nothing charged, however slow. */
    gr_health_retry_event_begin(&r, &e, t);
    gr_health_retry_next(&r, &e, t, &tmo);
    t += S(20);
    assert_int_equal(gr_health_retry_after(&r, &e, GR_GRPC_OK, t, NOJITTER, &delay),
                     GR_HEALTH_RETRY_DONE);
    gr_health_retry_event_end(&r, &e, t, 1);
    assert_int_equal(r.budget_left_ns, S(60));

    /* Delivered on the second attempt: all of it charged (1 + 2 + 1 s). */
    gr_health_retry_event_begin(&r, &e, t);
    int64_t s0 = t;
    gr_health_retry_next(&r, &e, t, &tmo);
    t += S(1);
    assert_int_equal(gr_health_retry_after(&r, &e, GR_GRPC_UNAUTHENTICATED, t, NOJITTER, &delay),
                     GR_HEALTH_RETRY_AGAIN); /* token may rotate: retried */
    t += delay;
    gr_health_retry_next(&r, &e, t, &tmo);
    t += S(1);
    assert_int_equal(gr_health_retry_after(&r, &e, GR_GRPC_OK, t, NOJITTER, &delay),
                     GR_HEALTH_RETRY_DONE);
    gr_health_retry_event_end(&r, &e, t, 1);
    assert_int_equal(t - s0, S(4));
    assert_int_equal(r.budget_left_ns, S(56));

    /* PF-182: permanent refusals end the event at once, and are charged. */
    const int perm[] = {GR_GRPC_INVALID_ARGUMENT, GR_GRPC_PERMISSION_DENIED, GR_GRPC_UNIMPLEMENTED};
    for (size_t i = 0; i < 3; i++) {
        gr_health_retry_event_begin(&r, &e, t);
        gr_health_retry_next(&r, &e, t, &tmo);
        t += S(1);
        assert_int_equal(gr_health_retry_after(&r, &e, perm[i], t, NOJITTER, &delay),
                         GR_HEALTH_RETRY_GIVE_UP);
        assert_true(e.permanent);
        assert_true(gr_health_retry_is_permanent(perm[i]));
        gr_health_retry_event_end(&r, &e, t, 0);
    }
    assert_int_equal(r.budget_left_ns, S(53));
    assert_false(gr_health_retry_is_permanent(GR_GRPC_UNAUTHENTICATED));

    /* With little budget left the first attempt still gets 5 s, and later
     * attempts are cut to what remains. */
    r.budget_left_ns = S(1);
    gr_health_retry_event_begin(&r, &e, t);
    gr_health_retry_next(&r, &e, t, &tmo);
    assert_int_equal(tmo, S(5));
    r.budget_left_ns = S(12);
    gr_health_retry_event_begin(&r, &e, t);
    gr_health_retry_next(&r, &e, t, &tmo);
    assert_int_equal(tmo, S(12));
    assert_int_equal(gr_health_retry_after(&r, &e, GR_GRPC_UNAVAILABLE, t, NOJITTER, &delay),
                     GR_HEALTH_RETRY_AGAIN);
    t += delay;
    assert_int_equal(gr_health_retry_next(&r, &e, t, &tmo), 1);
    assert_int_equal(tmo, S(10));
}

/* --- the publisher loop with hooks -------------------------------------- */

typedef struct fake {
    int64_t now;
    int64_t slept;
    int sleeps;
    int ready_after_polls; /* ready() returns 0 this many times */
    int never_ready;
    const int *codes; /* scripted status per call */
    const int64_t *durations;
    int ncodes;
    int calls;
    char auth[8][256];
    char key[8][160];
    int64_t timeouts[32];
    const char *token_path;
    const char *rotate_to; /* written to the token file on the first sleep */
} fake;

static int64_t f_now(void *ctx)
{
    return ((fake *)ctx)->now;
}

static int64_t f_wall(void *ctx)
{
    (void)ctx;
    return S(1700000000) + 123;
}

static void f_sleep(void *ctx, int64_t ns)
{
    fake *f = ctx;
    f->now += ns;
    f->slept += ns;
    f->sleeps++;
    if (f->rotate_to && f->token_path) {
        FILE *fp = fopen(f->token_path, "w");
        assert_non_null(fp);
        fputs(f->rotate_to, fp);
        fclose(fp);
        f->rotate_to = NULL;
    }
}

static uint32_t f_random(void *ctx)
{
    (void)ctx;
    return NOJITTER;
}

static int f_ready(void *ctx, const gr_grpc_endpoint *ep)
{
    fake *f = ctx;
    (void)ep;
    if (f->never_ready)
        return 0;
    if (f->ready_after_polls > 0) {
        f->ready_after_polls--;
        return 0;
    }
    return 1;
}

static int f_call(void *ctx, const gr_grpc_call *call, gr_grpc_result *res, gr_err *err)
{
    fake *f = ctx;
    (void)err;
    int i = f->calls++;
    assert_true(i < 32);
    f->timeouts[i] = call->timeout_ns;
    assert_string_equal(call->path, "/datamodels.PlatformConnector/HealthEventOccurredV1");
    if (i < 8) {
        f->auth[i][0] = f->key[i][0] = '\0';
        for (const char *const *m = call->metadata; *m; m++) {
            if (strncmp(*m, "authorization:", 14) == 0)
                snprintf(f->auth[i], sizeof f->auth[i], "%s", *m);
            if (strncmp(*m, "idempotency-key:", 16) == 0)
                snprintf(f->key[i], sizeof f->key[i], "%s", *m);
        }
    }
    memset(res, 0, sizeof *res);
    int code = i < f->ncodes ? f->codes[i] : GR_GRPC_OK;
    /* A call lasts its scripted duration, cut at its timeout like a real one. */
    int64_t d = f->durations && i < f->ncodes ? f->durations[i] : 0;
    f->now += d < call->timeout_ns ? d : call->timeout_ns;
    res->status.code = code;
    snprintf(res->status.message, sizeof res->status.message, "scripted %d", i);
    return gr_grpc_code_to_rc(code);
}

static gr_health_hooks hooks_for(fake *f)
{
    gr_health_hooks h = {f, f_now, f_wall, f_sleep, f_random, f_ready, f_call};
    return h;
}

static void event_for_test(gr_health_event *ev)
{
    gr_health_event_init(ev);
    ev->agent = "preflight-nccl-loopback";
    ev->component_class = "Node";
    ev->check_name = "NCCLLoopbackTest";
    ev->node_name = "node-a";
    ev->is_healthy = 1;
}

static char tokfile[64];

static void write_token(const char *s)
{
    FILE *fp = fopen(tokfile, "w");
    assert_non_null(fp);
    fputs(s, fp);
    fclose(fp);
}

static int setup_token(void **state)
{
    (void)state;
    snprintf(tokfile, sizeof tokfile, "/tmp/gr-health-tok-XXXXXX");
    int fd = mkstemp(tokfile);
    assert_true(fd >= 0);
    close(fd);
    return 0;
}

static int teardown_token(void **state)
{
    (void)state;
    unlink(tokfile);
    return 0;
}

static void direct_config(gr_health_config *cfg, int64_t window)
{
    gr_health_config_init(cfg);
    assert_int_equal(gr_health_config_set_target(cfg, "pc.example:50051", NULL), GR_OK);
    snprintf(cfg->token_path, sizeof cfg->token_path, "%s", tokfile);
    cfg->insecure = 1;
    cfg->retry_window_ns = window;
}

/* Token re-read each attempt, trailing newline trimmed, key reused. */
static void test_publisher_token_and_key(void **state)
{
    (void)state;
    write_token("first-token\n");
    fake f = {0};
    const int codes[] = {GR_GRPC_UNAUTHENTICATED, GR_GRPC_OK};
    f.codes = codes;
    f.ncodes = 2;
    f.token_path = tokfile;
    f.rotate_to = "second-token\r\n";
    gr_health_hooks h = hooks_for(&f);
    gr_health_config cfg;
    direct_config(&cfg, S(300));
    gr_health_publisher *p;
    assert_int_equal(gr_health_publisher_new(&cfg, &h, &p, NULL), GR_OK);
    gr_health_event ev;
    event_for_test(&ev);
    gr_health_report rep;
    gr_err err;
    assert_int_equal(gr_health_publish(p, &ev, &rep, &err), GR_OK);
    assert_int_equal(rep.outcome, GR_HEALTH_DELIVERED);
    assert_int_equal(rep.attempts, 2);
    assert_int_equal(f.calls, 2);
    assert_string_equal(f.auth[0], "authorization: Bearer first-token");
    assert_string_equal(f.auth[1], "authorization: Bearer second-token");
    assert_string_equal(f.key[0], f.key[1]);
    assert_int_equal(strlen(rep.idempotency_key), 32);
    assert_string_equal(f.key[0] + strlen("idempotency-key: "), rep.idempotency_key);
    /* The next event gets a fresh key. */
    char first[129];
    snprintf(first, sizeof first, "%s", rep.idempotency_key);
    assert_int_equal(gr_health_publish(p, &ev, &rep, &err), GR_OK);
    assert_string_not_equal(first, rep.idempotency_key);
    /* An explicit key is used as is. */
    ev.idempotency_key = "run-42:dcgm.pcie";
    assert_int_equal(gr_health_publish(p, &ev, &rep, &err), GR_OK);
    assert_string_equal(f.key[3], "idempotency-key: run-42:dcgm.pcie");
    ev.idempotency_key = "bad key";
    assert_int_equal(gr_health_publish(p, &ev, &rep, &err), GR_EINVAL);
    assert_int_equal(f.calls, 4);
    gr_health_publisher_free(p);
}

/* Never tokenless when a token is configured. */
static void test_publisher_token_errors(void **state)
{
    (void)state;
    const char *bad[] = {"", "\n\n", "two words\n", "tok\x01"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_token(bad[i]);
        fake f = {0};
        gr_health_hooks h = hooks_for(&f);
        gr_health_config cfg;
        direct_config(&cfg, S(300));
        gr_health_publisher *p;
        assert_int_equal(gr_health_publisher_new(&cfg, &h, &p, NULL), GR_OK);
        gr_health_event ev;
        event_for_test(&ev);
        gr_health_report rep;
        gr_err err;
        assert_int_equal(gr_health_publish(p, &ev, &rep, &err), GR_EIO);
        assert_int_equal(rep.outcome, GR_HEALTH_LOCAL_ERROR);
        assert_non_null(strstr(err.msg, tokfile));
        assert_int_equal(f.calls, 0);
        gr_health_publisher_free(p);
    }
    fake f = {0};
    gr_health_hooks h = hooks_for(&f);
    gr_health_config cfg;
    direct_config(&cfg, S(300));
    snprintf(cfg.token_path, sizeof cfg.token_path, "/nonexistent/gpuready/token");
    gr_health_publisher *p;
    assert_int_equal(gr_health_publisher_new(&cfg, &h, &p, NULL), GR_OK);
    gr_health_event ev;
    event_for_test(&ev);
    gr_err err;
    assert_int_equal(gr_health_publish(p, &ev, NULL, &err), GR_EIO);
    assert_non_null(strstr(err.msg, "cannot read token file /nonexistent/gpuready/token"));
    assert_int_equal(f.calls, 0);
    gr_health_publisher_free(p);
}

/* The budget is shared by the events of one publisher (PF-179, PF-181). */
static void test_publisher_shared_budget(void **state)
{
    (void)state;
    write_token("tok");
    fake f = {0};
    /* Every call times out after its full timeout. */
    int codes[32];
    int64_t durs[32];
    for (int i = 0; i < 32; i++)
        codes[i] = GR_GRPC_DEADLINE_EXCEEDED;
    f.codes = codes;
    f.durations = durs;
    f.ncodes = 32;
    gr_health_hooks h = hooks_for(&f);
    gr_health_config cfg;
    direct_config(&cfg, S(60)); /* HEALTH_PUBLISH_RETRY_WINDOW=1m */
    gr_health_publisher *p;
    assert_int_equal(gr_health_publisher_new(&cfg, &h, &p, NULL), GR_OK);
    for (int i = 0; i < 32; i++)
        durs[i] = S(30);
    gr_health_event ev;
    event_for_test(&ev);
    gr_health_report rep;
    gr_err err;
    /* Attempt 1: 30 s (t=30), sleep 2 (t=32), attempt 2: min(30, 28)=28 s
     * (t=60), the next backoff passes the deadline. */
    assert_int_equal(gr_health_publish(p, &ev, &rep, &err), GR_ETIMEDOUT);
    assert_int_equal(rep.outcome, GR_HEALTH_UNDELIVERED);
    assert_int_equal(rep.attempts, 2);
    assert_int_equal(f.timeouts[0], S(30));
    assert_int_equal(f.timeouts[1], S(28));
    assert_int_equal(rep.elapsed_ns, S(60));
    assert_int_equal(gr_health_publisher_retry(p)->budget_left_ns, 0);
    /* Later reports: one 5 s attempt each. */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(gr_health_publish(p, &ev, &rep, &err), GR_ETIMEDOUT);
        assert_int_equal(rep.attempts, 1);
        assert_int_equal(f.timeouts[f.calls - 1], S(5));
    }
    assert_int_equal(f.sleeps, 1);
    /* And a late report that gets through is delivered. */
    codes[f.calls] = GR_GRPC_OK;
    assert_int_equal(gr_health_publish(p, &ev, &rep, &err), GR_OK);
    gr_health_publisher_free(p);
}

/* PF-182: INVALID_ARGUMENT / PERMISSION_DENIED / UNIMPLEMENTED: no retry. */
static void test_publisher_permanent(void **state)
{
    (void)state;
    write_token("tok");
    const int perm[] = {GR_GRPC_INVALID_ARGUMENT, GR_GRPC_PERMISSION_DENIED, GR_GRPC_UNIMPLEMENTED};
    const int want_rc[] = {GR_EIO, GR_EPERM, GR_EUNSUPPORTED};
    for (size_t i = 0; i < 3; i++) {
        fake f = {0};
        f.codes = &perm[i];
        f.ncodes = 1;
        gr_health_hooks h = hooks_for(&f);
        gr_health_config cfg;
        direct_config(&cfg, S(300));
        gr_health_publisher *p;
        assert_int_equal(gr_health_publisher_new(&cfg, &h, &p, NULL), GR_OK);
        gr_health_event ev;
        event_for_test(&ev);
        gr_health_report rep;
        gr_err err;
        assert_int_equal(gr_health_publish(p, &ev, &rep, &err), want_rc[i]);
        assert_int_equal(rep.outcome, GR_HEALTH_REJECTED);
        assert_int_equal(rep.attempts, 1);
        assert_int_equal(rep.grpc_code, perm[i]);
        assert_int_equal(f.sleeps, 0);
        gr_health_publisher_free(p);
    }
}

/* Socket mode: a late socket is waited for (once), a missing one fails. */
static void test_publisher_socket_wait(void **state)
{
    (void)state;
    fake f = {0};
    f.ready_after_polls = 30; /* appears after ~3 s of 100 ms polls */
    gr_health_hooks h = hooks_for(&f);
    gr_health_config cfg;
    gr_health_config_init(&cfg);
    assert_int_equal(gr_health_config_set_socket(&cfg, "unix:///run/pc.sock", NULL), GR_OK);
    gr_health_publisher *p;
    assert_int_equal(gr_health_publisher_new(&cfg, &h, &p, NULL), GR_OK);
    gr_health_event ev;
    event_for_test(&ev);
    gr_health_report rep;
    gr_err err;
    assert_int_equal(gr_health_publish(p, &ev, &rep, &err), GR_OK);
    assert_int_equal(f.calls, 1);
    assert_true(f.slept >= S(2) && f.slept <= S(4));
    /* No token configured: no authorization header at all. */
    assert_string_equal(f.auth[0], "");
    assert_true(f.key[0][0] != '\0');
    gr_health_publisher_free(p);

    /* Never appears: wait 20 s once, then 5 failed attempts with backoff. */
    fake g = {0};
    g.never_ready = 1;
    h = hooks_for(&g);
    assert_int_equal(gr_health_publisher_new(&cfg, &h, &p, NULL), GR_OK);
    assert_int_equal(gr_health_publish(p, &ev, &rep, &err), GR_EAGAIN);
    assert_int_equal(rep.outcome, GR_HEALTH_UNDELIVERED);
    assert_int_equal(rep.attempts, 5);
    assert_int_equal(rep.grpc_code, GR_GRPC_UNAVAILABLE);
    assert_non_null(strstr(rep.grpc_message, "/run/pc.sock"));
    assert_int_equal(g.calls, 0);
    assert_int_equal(g.slept, S(20) + MS(2000 + 3000 + 4500 + 6750));
    gr_health_publisher_free(p);
}

int main(void)
{
    gr_log_set_level(GR_LOG_ERROR); /* keep the expected retry warnings out */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jitter_bounds),
        cmocka_unit_test(test_socket_policy),
        cmocka_unit_test(test_direct_budget),
        cmocka_unit_test(test_direct_charging),
        cmocka_unit_test(test_publisher_token_and_key),
        cmocka_unit_test(test_publisher_token_errors),
        cmocka_unit_test(test_publisher_shared_budget),
        cmocka_unit_test(test_publisher_permanent),
        cmocka_unit_test(test_publisher_socket_wait),
    };
    return cmocka_run_group_tests(tests, setup_token, teardown_token);
}
