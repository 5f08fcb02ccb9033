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

/* Poll (no timing assertion: a generous deadline only bounds a hang). */
static bool wait_copy(gr_kube_client *kc, const char *ns, const char *want)
{
    for (int i = 0; i < 600; i++) {
        if (copy_is(kc, ns, want))
            return true;
        usleep(100 * 1000);
    }
    return false;
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
    gr_casync_tick(s, &err);
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
    usleep(1000 * 1000); /* let the ticker run on the bad file too */
    assert_true(copy_is(kc, ns_pre, CA1));
    assert_true(copy_is(kc, ns_adm, CA1));
    gr_casync_stats_get(s, &st1);
    assert_true(st1.ca_errors >= st0.ca_errors + 2);
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
