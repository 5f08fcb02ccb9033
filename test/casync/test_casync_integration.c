/* Integration test of the CA bundle sync on the real control plane
 * (PF-171..PF-174): copies created on admission, for every labelled
 * namespace at start and when a namespace gets labelled later, rewritten
 * after a CA rotation, untouched on an empty CA file, restored after a user
 * edit or delete. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "gr_casync.h"
#include "gr_harness.h"
#include "gr_kube_config.h"

#define CA1 "-----BEGIN CERTIFICATE-----\nMIIBone\n-----END CERTIFICATE-----\n"
#define CA2 "-----BEGIN CERTIFICATE-----\nMIIBtwo\n-----END CERTIFICATE-----\n"

static void write_file(const char *path, const char *text)
{
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(rename(tmp, path), 0); /* atomic, like the kubelet's ..data swap */
}

/* The copy's ca.crt in ns, or NULL when there is none (caller frees). */
static char *copy_data(gr_kube_client *kc, const char *ns)
{
    json_t *cm = NULL;
    if (gr_kube_get(kc, &GR_KUBE_CONFIGMAPS, ns, GR_CASYNC_CM_NAME, NULL, &cm, NULL, NULL) != GR_OK)
        return NULL;
    const char *v = json_string_value(json_object_get(json_object_get(cm, "data"), "ca.crt"));
    char *r = v ? strdup(v) : strdup("");
    json_decref(cm);
    return r;
}

static bool copy_is(gr_kube_client *kc, const char *ns, const char *want)
{
    char *d = copy_data(kc, ns);
    bool ok = d && strcmp(d, want) == 0;
    free(d);
    return ok;
}

/* Poll (no timing assertion: a generous deadline, 60 s scaled to load by
 * gr_test_scale.h, only bounds a hang). */
static bool wait_copy(gr_kube_client *kc, const char *ns, const char *want)
{
    int tries = gr_test_scaled_tries(60, 100);
    for (int i = 0; i < tries; i++) {
        if (copy_is(kc, ns, want))
            return true;
        usleep(100 * 1000);
    }
    return false;
}

/* Overwrite the copy's data behind the sync's back (a user edit). */
static void tamper(gr_kube_client *kc, const char *ns)
{
    json_t *p = json_pack("{s:{s:s}}", "data", "ca.crt", "tampered");
    assert_int_equal(gr_kube_patch(kc, &GR_KUBE_CONFIGMAPS, ns, GR_CASYNC_CM_NAME,
                                   GR_KUBE_PATCH_MERGE, p, NULL, NULL, NULL, NULL),
                     GR_OK);
    json_decref(p);
}

typedef struct tick_job {
    gr_casync *s;
    int rc;
    gr_err err;
} tick_job;

static void *tick_thread(void *arg)
{
    tick_job *j = arg;
    j->rc = gr_casync_tick(j->s, &j->err);
    return NULL;
}

static void label_ns(gr_harness_cluster *c, const char *ns, const char *label)
{
    gr_harness_result r;
    int rc = gr_harness_kubectl(c, &r, "label", "namespace", ns, label, "--overwrite", NULL);
    if (rc != 0)
        fprintf(stderr, "kubectl label: %s\n", r.err);
    gr_harness_result_free(&r);
    assert_int_equal(rc, 0);
}

static void test_casync_cluster(void **state)
{
    gr_harness_ctx *t = *state;
    gr_harness_cluster *c = &t->cluster;
    gr_err err;
    gr_kube_config kcfg;
    memset(&kcfg, 0, sizeof kcfg);
    assert_int_equal(gr_kube_config_load_file(c->kubeconfig, NULL, &kcfg, &err), GR_OK);
    kcfg.qps = -1;
    gr_kube_client *kc = NULL;
    assert_int_equal(gr_kube_client_new(&kcfg, &kc, &err), GR_OK);
    gr_kube_config_free(&kcfg);

    /* A selector unique to this run, so other tests' namespaces stay out. */
    char sel[128], label[160], dir[] = "/tmp/casync-it-XXXXXX", ca_file[256];
    snprintf(sel, sizeof sel, "gpuready.test/casync=r%ld", (long)getpid());
    snprintf(label, sizeof label, "%s", sel);
    assert_non_null(mkdtemp(dir));
    snprintf(ca_file, sizeof ca_file, "%s/ca.crt", dir);
    write_file(ca_file, CA1);

    char ns_pre[64], ns_late[64], ns_adm[64];
    assert_int_equal(gr_harness_ns_create(c, "casync-pre", ns_pre, sizeof ns_pre), 0);
    assert_int_equal(gr_harness_ns_create(c, "casync-late", ns_late, sizeof ns_late), 0);
    assert_int_equal(gr_harness_ns_create(c, "casync-adm", ns_adm, sizeof ns_adm), 0);
    label_ns(c, ns_pre, label);

    gr_casync_opts o = {.client = kc,
                        .ca_file = ca_file,
                        .ns_selector = sel,
                        .tick_ns = 300LL * 1000000, /* a short tick for the test */
                        .workers = 2};
    gr_casync *s = NULL;
    assert_int_equal(gr_casync_new(&o, &s, &err), GR_OK);
    assert_int_equal(gr_casync_start(s, &err), GR_OK);

    /* PF-173: a labelled namespace gets its copy at start ... */
    assert_true(wait_copy(kc, ns_pre, CA1));
    /* ... and one labelled later too. */
    assert_false(copy_is(kc, ns_late, CA1));
    label_ns(c, ns_late, label);
    assert_true(wait_copy(kc, ns_late, CA1));

    /* PF-172: a pod admitted in a namespace creates the copy there, at once. */
    assert_false(copy_is(kc, ns_adm, CA1));
    assert_int_equal(gr_casync_ensure(s, ns_adm, &err), GR_OK);
    assert_true(copy_is(kc, ns_adm, CA1));
    /* PF-171: name, key and labels */
    json_t *cm = NULL;
    assert_int_equal(
        gr_kube_get(kc, &GR_KUBE_CONFIGMAPS, ns_adm, GR_CASYNC_CM_NAME, NULL, &cm, NULL, &err),
        GR_OK);
    json_t *labels = json_object_get(json_object_get(cm, "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(labels, GR_CASYNC_LABEL_MANAGED)),
                        "preflight");
    assert_string_equal(json_string_value(json_object_get(labels, GR_CASYNC_LABEL_CA)), "true");
    json_decref(cm);
    /* a second admission is answered from the cache, no API call */
    gr_casync_stats st0, st1;
    gr_casync_stats_get(s, &st0);
    assert_int_equal(gr_casync_ensure(s, ns_adm, &err), GR_OK);
    gr_casync_stats_get(s, &st1);
    assert_int_equal(st1.cache_hits, st0.cache_hits + 1);

    /* PF-174: a rotated CA: one tick rewrites every copy (the direct tick
     * is deterministic; the ticker thread may have done it already). */
    write_file(ca_file, CA2);
    /* The ticker thread ticks too (every 300 ms): a tick that races it must
     * still converge (409 Conflict re-read and retried) and say so. */
    assert_int_equal(gr_casync_tick(s, &err), GR_OK);
    assert_true(copy_is(kc, ns_pre, CA2));
    assert_true(copy_is(kc, ns_late, CA2));
    assert_true(copy_is(kc, ns_adm, CA2));
    /* ... and the ticker thread on its own: back to CA1 */
    write_file(ca_file, CA1);
    assert_true(wait_copy(kc, ns_pre, CA1));
    assert_true(wait_copy(kc, ns_late, CA1));
    assert_true(wait_copy(kc, ns_adm, CA1));

    /* An empty or whitespace-only CA file is an error; copies stay as they are. */
    gr_casync_stats_get(s, &st0);
    write_file(ca_file, "");
    assert_int_equal(gr_casync_tick(s, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "CA file is empty"));
    write_file(ca_file, " \n\t\n");
    assert_int_equal(gr_casync_tick(s, &err), GR_EINVAL);
    /* Let the ticker run on the bad file too: wait (bounded, scaled to load)
     * for one more CA error than the two explicit ticks made. */
    int tries = gr_test_scaled_tries(60, 100);
    for (int i = 0; i < tries; i++) {
        gr_casync_stats_get(s, &st1);
        if (st1.ca_errors >= st0.ca_errors + 3)
            break;
        usleep(100 * 1000);
    }
    assert_true(copy_is(kc, ns_pre, CA1));
    assert_true(copy_is(kc, ns_adm, CA1));
    gr_casync_stats_get(s, &st1);
    assert_true(st1.ca_errors >= st0.ca_errors + 3);
    assert_int_equal(st1.updated, st0.updated);
    write_file(ca_file, CA1);

    /* A user-modified copy is restored on the next tick (PF-174). */
    gr_harness_result r;
    assert_int_equal(gr_harness_kubectl(c, &r, "-n", ns_late, "patch", "configmap",
                                        GR_CASYNC_CM_NAME, "--type=merge", "-p",
                                        "{\"data\":{\"ca.crt\":\"tampered\",\"x\":\"y\"}}", NULL),
                     0);
    gr_harness_result_free(&r);
    assert_false(copy_is(kc, ns_late, CA1));
    assert_int_equal(gr_casync_tick(s, &err), GR_OK);
    assert_true(copy_is(kc, ns_late, CA1));
    /* ... and a deleted copy in a labelled namespace comes back. */
    assert_int_equal(
        gr_harness_kubectl(c, &r, "-n", ns_pre, "delete", "configmap", GR_CASYNC_CM_NAME, NULL), 0);
    gr_harness_result_free(&r);
    assert_true(wait_copy(kc, ns_pre, CA1));

    /* Two replicas (a second sync on the same selector) and the ticker thread
     * rewrite the same tampered copies at once: their PUTs conflict (409).
     * Every tick must still converge, re-reading and retrying, and say so;
     * before issue 14 a conflicting tick returned the 409 ("retrying next
     * tick") or, racing, reported success with the copy not yet restored. */
    gr_casync *s2 = NULL;
    assert_int_equal(gr_casync_new(&o, &s2, &err), GR_OK);
    const char *all[] = {ns_pre, ns_late, ns_adm};
    for (int round = 0; round < 10; round++) {
        for (int i = 0; i < 3; i++)
            tamper(kc, all[i]);
        tick_job j1 = {.s = s}, j2 = {.s = s2};
        pthread_t t1, t2;
        assert_int_equal(pthread_create(&t1, NULL, tick_thread, &j1), 0);
        assert_int_equal(pthread_create(&t2, NULL, tick_thread, &j2), 0);
        pthread_join(t1, NULL);
        pthread_join(t2, NULL);
        if (j1.rc != GR_OK || j2.rc != GR_OK)
            fail_msg("round %d: tick returned %d (%s) and %d (%s)", round, j1.rc,
                     j1.rc ? j1.err.msg : "", j2.rc, j2.rc ? j2.err.msg : "");
        for (int i = 0; i < 3; i++)
            assert_true(copy_is(kc, all[i], CA1));
    }
    gr_casync_free(s2);

    /* Ensure in a namespace that does not exist fails and is not retried. */
    assert_int_equal(gr_casync_ensure(s, "casync-no-such-ns-xyz", &err), GR_ENOTFOUND);

    gr_casync_stop(s);
    gr_casync_free(s);
    gr_kube_client_free(kc);
    gr_harness_ns_delete(c, ns_pre);
    gr_harness_ns_delete(c, ns_late);
    gr_harness_ns_delete(c, ns_adm);
    unlink(ca_file);
    rmdir(dir);
    gr_harness_passed(t);
}

int main(void)
{
    int skip = gr_harness_skip_if_disabled();
    if (skip)
        return skip;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_casync_cluster, gr_harness_setup, gr_harness_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
