/*
 * test_casync_mgr.c — the CA bundle sync on the controller runtime
 * (gr_casync_attach), against the in-memory API server (gr_kube_fake.h):
 *
 *  - PF-173: every namespace matching the selector gets its copy, others
 *    none;
 *  - PF-172 off the request path (issue 20): gr_casync_enqueue() makes no
 *    API request; the controller then creates the copy;
 *  - PF-174: a rotated CA file reaches every copy through the ticker
 *    runnable;
 *  - leader only: a replica that does not hold the Lease writes nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "gr_casync.h"
#include "gr_kube_fake.h"
#include "gr_kube_mgr.h"

#define CA1 "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
#define CA2 "-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n"

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void seed_ns(gr_kube_fake *f, const char *name, bool labelled)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"%s}}",
             name, labelled ? ",\"labels\":{\"nvsentinel.nvidia.com/preflight\":\"enabled\"}" : "");
    json_t *ns = json_loads(buf, 0, NULL);
    gr_err err;
    assert_int_equal(gr_kube_fake_seed(f, &GR_KUBE_NAMESPACES, ns, &err), GR_OK);
    json_decref(ns);
}

static const char *copy_of(gr_kube_fake *f, const char *ns, json_t **keep)
{
    *keep = gr_kube_fake_get(f, &GR_KUBE_CONFIGMAPS, ns, GR_CASYNC_CM_NAME);
    return json_string_value(json_object_get(json_object_get(*keep, "data"), GR_CASYNC_KEY));
}

static bool wait_copy(gr_kube_fake *f, const char *ns, const char *want, int timeout_ms)
{
    for (int i = 0; i < timeout_ms / 20; i++) {
        json_t *o;
        const char *v = copy_of(f, ns, &o);
        bool ok = v && strcmp(v, want) == 0;
        json_decref(o);
        if (ok)
            return true;
        sleep_ms(20);
    }
    return false;
}

typedef struct env {
    gr_kube_fake *f;
    gr_kube_mgr *m;
    gr_casync *s;
    char dir[64];
    char ca[128];
} env;

static void env_new(env *e, bool follower)
{
    memset(e, 0, sizeof *e);
    snprintf(e->dir, sizeof e->dir, "/tmp/casync-mgr-XXXXXX");
    assert_non_null(mkdtemp(e->dir));
    snprintf(e->ca, sizeof e->ca, "%s/ca.crt", e->dir);
    write_file(e->ca, CA1);
    gr_err err;
    assert_int_equal(gr_kube_fake_new(&e->f, &err), GR_OK);
    seed_ns(e->f, "team", true);
    seed_ns(e->f, "other", false);
    if (follower) {
        char now[64];
        time_t t = time(NULL);
        strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%S.000000Z", gmtime(&t));
        char buf[1024];
        snprintf(buf, sizeof buf,
                 "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{"
                 "\"name\":\"l\",\"namespace\":\"default\"},\"spec\":{\"holderIdentity\":"
                 "\"someone-else\",\"leaseDurationSeconds\":3600,\"acquireTime\":\"%s\","
                 "\"renewTime\":\"%s\"}}",
                 now, now);
        json_t *lease = json_loads(buf, 0, NULL);
        assert_int_equal(gr_kube_fake_seed(e->f, &GR_KUBE_LEASES, lease, &err), GR_OK);
        json_decref(lease);
    }
    gr_kube_client *kc = NULL;
    assert_int_equal(gr_kube_fake_client(e->f, &kc, &err), GR_OK);
    gr_kube_mgr_opts mo = {.name = "casync-test",
                           .leader_elect = follower,
                           .lease_ns = "default",
                           .lease_name = "l",
                           .identity = "me",
                           .retry_period_ns = 100000000LL};
    assert_int_equal(gr_kube_mgr_new(kc, &mo, &e->m, &err), GR_OK);
    gr_casync_opts o = {.client = gr_kube_mgr_client(e->m),
                        .ca_file = e->ca,
                        .tick_ns = 200000000LL}; /* default selector */
    assert_int_equal(gr_casync_new(&o, &e->s, &err), GR_OK);
    assert_int_equal(gr_casync_attach(e->s, e->m, &err), GR_OK);
}

static void env_free(env *e)
{
    gr_kube_mgr_free(e->m);
    gr_casync_free(e->s);
    gr_kube_fake_free(e->f);
    unlink(e->ca);
    rmdir(e->dir);
}

static void test_on_the_runtime(void **state)
{
    (void)state;
    env e;
    env_new(&e, false);
    gr_err err;
    /* issue 20: the admission hook only queues */
    gr_kube_fake_reset_counts(e.f);
    gr_casync_enqueue(e.s, "other");
    assert_int_equal(gr_kube_fake_count(e.f, NULL, NULL), 0);
    assert_int_equal(gr_kube_mgr_start(e.m, &err), GR_OK);
    assert_true(wait_copy(e.f, "team", CA1, 30000));  /* PF-173 */
    assert_true(wait_copy(e.f, "other", CA1, 30000)); /* PF-172, via the queue */
    write_file(e.ca, CA2);                            /* rotation */
    assert_true(wait_copy(e.f, "team", CA2, 30000));  /* PF-174 */
    assert_true(wait_copy(e.f, "other", CA2, 30000));
    env_free(&e);
}

static void test_follower_writes_nothing(void **state)
{
    (void)state;
    env e;
    env_new(&e, true);
    gr_err err;
    assert_int_equal(gr_kube_mgr_start(e.m, &err), GR_OK);
    gr_casync_enqueue(e.s, "other");
    sleep_ms(1500);
    assert_false(gr_kube_mgr_is_leader(e.m));
    json_t *o;
    assert_null(copy_of(e.f, "team", &o));
    json_decref(o);
    assert_null(copy_of(e.f, "other", &o));
    json_decref(o);
    env_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_on_the_runtime),
        cmocka_unit_test(test_follower_writes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
