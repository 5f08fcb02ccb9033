/* Integration test: a CRD with a status subresource and CEL transition rules
 * (x-kubernetes-validations with oldSelf), against the real kube-apiserver
 * started by scripts/cluster (fixture gr_harness_cluster). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gr_harness.h"

#define CRD "test/harness/data/cel-widget-crd.yaml"
#define OBJ "test/harness/data/cel-widget.yaml"
#define W1  "celwidgets.harness.gpuready.test/w1"

static void expect_jsonpath(gr_harness_ctx *t, const char *jsonpath, const char *want)
{
    char *got = NULL;
    assert_int_equal(gr_harness_get_jsonpath(&t->cluster, t->ns, W1, jsonpath, &got), 0);
    assert_string_equal(got, want);
    free(got);
}

/* kubectl patch that must be rejected with msg (and not by anything else). */
static void expect_rejected(gr_harness_ctx *t, const char *subresource, const char *patch,
                            const char *msg)
{
    gr_harness_result r;
    int rc;
    if (subresource) {
        rc = gr_harness_kubectl(&t->cluster, &r, "patch", W1, "-n", t->ns, "--type=merge",
                                subresource, "-p", patch, NULL);
    } else {
        rc = gr_harness_kubectl(&t->cluster, &r, "patch", W1, "-n", t->ns, "--type=merge", "-p",
                                patch, NULL);
    }
    if (rc != 1 || !gr_harness_contains(r.err, msg) ||
        !gr_harness_contains(r.err, "Invalid value")) {
        fprintf(stderr, "patch %s: rc=%d\nstdout: %s\nstderr: %s\nwanted rejection: %s\n", patch,
                rc, r.out, r.err, msg);
    }
    assert_int_equal(rc, 1);
    assert_true(gr_harness_contains(r.err, msg));
    gr_harness_result_free(&r);
}

static void expect_patched(gr_harness_ctx *t, const char *subresource, const char *patch)
{
    gr_harness_result r;
    int rc;
    if (subresource) {
        rc = gr_harness_kubectl(&t->cluster, &r, "patch", W1, "-n", t->ns, "--type=merge",
                                subresource, "-p", patch, NULL);
    } else {
        rc = gr_harness_kubectl(&t->cluster, &r, "patch", W1, "-n", t->ns, "--type=merge", "-p",
                                patch, NULL);
    }
    if (rc != 0) {
        fprintf(stderr, "patch %s failed: %s\n", patch, r.err);
    }
    assert_int_equal(rc, 0);
    gr_harness_result_free(&r);
}

static void apply_fixtures(gr_harness_ctx *t)
{
    assert_int_equal(gr_harness_apply_file(&t->cluster, NULL, CRD), 0);
    assert_int_equal(gr_harness_apply_file(&t->cluster, t->ns, OBJ), 0);
    expect_jsonpath(t, "{.spec.replicas}", "2");
}

static void test_transition_rules(void **state)
{
    gr_harness_ctx *t = *state;
    apply_fixtures(t);

    /* Allowed: replicas may grow. */
    expect_patched(t, NULL, "{\"spec\":{\"replicas\":3}}");
    expect_jsonpath(t, "{.spec.replicas}", "3");

    /* Rejected by the object-level transition rule, with its message. */
    expect_rejected(t, NULL, "{\"spec\":{\"replicas\":1}}", "spec.replicas may not decrease");
    expect_jsonpath(t, "{.spec.replicas}", "3");

    /* Rejected by the field-level immutability rule. */
    expect_rejected(t, NULL, "{\"spec\":{\"mode\":\"spread\"}}", "spec.mode is immutable");
    expect_jsonpath(t, "{.spec.mode}", "gang");

    /* A plain OpenAPI violation is still caught (schema and CEL both apply). */
    gr_harness_result r;
    assert_int_equal(gr_harness_kubectl(&t->cluster, &r, "patch", W1, "-n", t->ns, "--type=merge",
                                        "-p", "{\"spec\":{\"replicas\":5000}}", NULL),
                     1);
    assert_true(gr_harness_contains(r.err, "spec.replicas"));
    gr_harness_result_free(&r);
    gr_harness_passed(t);
}

static void test_status_subresource(void **state)
{
    gr_harness_ctx *t = *state;
    apply_fixtures(t);

    /* Status is written through the subresource ... */
    expect_patched(t, "--subresource=status",
                   "{\"status\":{\"phase\":\"Ready\",\"observedReplicas\":2}}");
    assert_int_equal(gr_harness_wait(&t->cluster, t->ns, W1, "jsonpath={.status.phase}=Ready", 30),
                     0);
    assert_int_equal(
        gr_harness_wait_jsonpath(&t->cluster, t->ns, W1, "{.status.observedReplicas}", "2", 30), 0);

    /* ... and status changes through the main resource are ignored, */
    expect_patched(t, NULL, "{\"status\":{\"phase\":\"Pending\"}}");
    expect_jsonpath(t, "{.status.phase}", "Ready");
    /* as are spec changes through the status subresource. */
    expect_patched(t, "--subresource=status", "{\"spec\":{\"replicas\":7}}");
    expect_jsonpath(t, "{.spec.replicas}", "2");

    /* Transition rule on status: Failed is terminal. */
    expect_patched(t, "--subresource=status", "{\"status\":{\"phase\":\"Failed\"}}");
    expect_rejected(t, "--subresource=status", "{\"status\":{\"phase\":\"Ready\"}}",
                    "status.phase cannot leave Failed");
    expect_jsonpath(t, "{.status.phase}", "Failed");
    gr_harness_passed(t);
}

static void test_lowpriv_is_forbidden(void **state)
{
    gr_harness_ctx *t = *state;
    apply_fixtures(t);
    gr_harness_result r;
    int rc = gr_harness_kubectl_lowpriv(&t->cluster, &r, "get", W1, "-n", t->ns, NULL);
    if (rc != 1 || !gr_harness_contains(r.err, "Forbidden")) {
        fprintf(stderr, "lowpriv get: rc=%d out=%s err=%s\n", rc, r.out, r.err);
    }
    assert_int_equal(rc, 1);
    assert_true(gr_harness_contains(r.err, "Forbidden"));
    assert_true(gr_harness_contains(r.err, "gr-lowpriv"));
    gr_harness_result_free(&r);
    gr_harness_passed(t);
}

int main(void)
{
    int skip = gr_harness_skip_if_disabled();
    if (skip) {
        return skip;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_transition_rules, gr_harness_setup,
                                        gr_harness_teardown),
        cmocka_unit_test_setup_teardown(test_status_subresource, gr_harness_setup,
                                        gr_harness_teardown),
        cmocka_unit_test_setup_teardown(test_lowpriv_is_forbidden, gr_harness_setup,
                                        gr_harness_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
