/* Integration test of the control plane itself: the APIs and controllers the
 * rest of the suite relies on are really there. */
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

#include "gr_harness.h"

static void test_scheduling_v1alpha2_served(void **state)
{
    gr_harness_ctx *t = *state;
    gr_harness_result r;
    assert_int_equal(gr_harness_kubectl(&t->cluster, &r, "api-resources",
                                        "--api-group=scheduling.k8s.io", "-o", "name", NULL),
                     0);
    if (!gr_harness_contains(r.out, "podgroups.scheduling.k8s.io") ||
        !gr_harness_contains(r.out, "workloads.scheduling.k8s.io")) {
        fprintf(stderr, "scheduling.k8s.io resources:\n%s\n", r.out);
    }
    assert_true(gr_harness_contains(r.out, "podgroups.scheduling.k8s.io"));
    assert_true(gr_harness_contains(r.out, "workloads.scheduling.k8s.io"));
    gr_harness_result_free(&r);

    assert_int_equal(
        gr_harness_apply_file(&t->cluster, t->ns, "test/harness/data/scheduling-v1alpha2.yaml"), 0);
    char *v = NULL;
    assert_int_equal(gr_harness_get_jsonpath(&t->cluster, t->ns,
                                             "podgroups.scheduling.k8s.io/train-workers-0",
                                             "{.spec.schedulingPolicy.gang.minCount}", &v),
                     0);
    assert_string_equal(v, "4");
    free(v);
    gr_harness_passed(t);
}

static void test_third_party_crds(void **state)
{
    gr_harness_ctx *t = *state;
    static const char *const files[] = {
        "test/fixtures/crds/kubeflow-trainer.yaml",
        "test/fixtures/crds/volcano-podgroup.yaml",
        "test/fixtures/crds/kai-podgroup.yaml",
        "test/fixtures/crds/grove.yaml",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        assert_int_equal(gr_harness_apply_file(&t->cluster, NULL, files[i]), 0);
    }
    assert_int_equal(
        gr_harness_apply_file(&t->cluster, t->ns, "test/harness/data/third-party-instances.yaml"),
        0);
    static const char *const objs[] = {
        "trainjobs.trainer.kubeflow.org/tj",
        "trainingruntimes.trainer.kubeflow.org/torch-distributed",
        "podgroups.scheduling.volcano.sh/vpg",
        "podgroups.scheduling.run.ai/kpg",
        "podcliquesets.grove.io/pcs",
        "podcliques.grove.io/pcs-0-worker",
        "podcliquescalinggroups.grove.io/pcs-0-sg",
        "podgangs.scheduler.grove.io/pcs-0",
    };
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) {
        char *name = NULL;
        assert_int_equal(
            gr_harness_get_jsonpath(&t->cluster, t->ns, objs[i], "{.metadata.name}", &name), 0);
        assert_string_equal(name, strchr(objs[i], '/') + 1);
        free(name);
    }
    /* Defaults and unknown-field preservation work as declared. */
    char *v = NULL;
    assert_int_equal(gr_harness_get_jsonpath(&t->cluster, t->ns,
                                             "trainjobs.trainer.kubeflow.org/tj",
                                             "{.spec.runtimeRef.apiGroup}", &v),
                     0);
    assert_string_equal(v, "trainer.kubeflow.org");
    free(v);
    assert_int_equal(
        gr_harness_get_jsonpath(&t->cluster, t->ns, "podcliquesets.grove.io/pcs",
                                "{.spec.template.cliques[0].spec.podSpec.containers[0].image}", &v),
        0);
    assert_string_equal(v, "busybox");
    free(v);
    /* Scale subresource on PodClique. */
    gr_harness_result r;
    assert_int_equal(gr_harness_kubectl(&t->cluster, &r, "scale",
                                        "podcliques.grove.io/pcs-0-worker", "--replicas=3", "-n",
                                        t->ns, NULL),
                     0);
    gr_harness_result_free(&r);
    assert_int_equal(gr_harness_wait_jsonpath(&t->cluster, t->ns,
                                              "podcliques.grove.io/pcs-0-worker",
                                              "{.spec.replicas}", "3", 10),
                     0);
    gr_harness_passed(t);
}

static void test_garbage_collection(void **state)
{
    gr_harness_ctx *t = *state;
    if (!t->cluster.controller_manager) {
        fprintf(stderr, "cluster runs without kube-controller-manager; GC not testable\n");
        skip();
    }
    assert_int_equal(
        gr_harness_apply_yaml(&t->cluster, t->ns,
                              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owner\n"
                              "data: {k: v}\n"),
        0);
    char *uid = NULL;
    assert_int_equal(
        gr_harness_get_jsonpath(&t->cluster, t->ns, "configmap/owner", "{.metadata.uid}", &uid), 0);
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: child\n  ownerReferences:\n"
             "  - apiVersion: v1\n    kind: ConfigMap\n    name: owner\n    uid: %s\n"
             "data: {k: v}\n",
             uid);
    free(uid);
    assert_int_equal(gr_harness_apply_yaml(&t->cluster, t->ns, yaml), 0);
    gr_harness_result r;
    assert_int_equal(gr_harness_kubectl(&t->cluster, &r, "delete", "configmap", "owner", "-n",
                                        t->ns, "--cascade=background", NULL),
                     0);
    gr_harness_result_free(&r);
    assert_int_equal(gr_harness_wait(&t->cluster, t->ns, "configmap/child", "delete", 60), 0);
    gr_harness_passed(t);
}

static void test_lowpriv_identity(void **state)
{
    gr_harness_ctx *t = *state;
    /* Client certificate files for code that talks HTTPS itself (libcurl). */
    assert_int_equal(access(t->cluster.admin_cert, R_OK), 0);
    assert_int_equal(access(t->cluster.admin_key, R_OK), 0);
    assert_int_equal(access(t->cluster.lowpriv_cert, R_OK), 0);
    assert_int_equal(access(t->cluster.lowpriv_key, R_OK), 0);
    assert_int_equal(access(t->cluster.ca_cert, R_OK), 0);
    gr_harness_result r;
    assert_int_equal(gr_harness_kubectl_lowpriv(&t->cluster, &r, "auth", "whoami", "-o",
                                                "jsonpath={.status.userInfo.username}", NULL),
                     0);
    assert_string_equal(r.out, "gr-lowpriv");
    gr_harness_result_free(&r);
    assert_int_equal(gr_harness_kubectl_lowpriv(&t->cluster, &r, "auth", "can-i", "list", "pods",
                                                "-n", t->ns, NULL),
                     1);
    assert_true(gr_harness_contains(r.out, "no"));
    gr_harness_result_free(&r);
    /* Granting it a Role is how RBAC tests give it exactly what they need. */
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: read-pods}\n"
             "rules:\n- apiGroups: [\"\"]\n  resources: [pods]\n  verbs: [list]\n---\n"
             "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n"
             "metadata: {name: read-pods}\nroleRef: {apiGroup: rbac.authorization.k8s.io, "
             "kind: Role, name: read-pods}\nsubjects:\n- {apiGroup: rbac.authorization.k8s.io, "
             "kind: User, name: gr-lowpriv}\n");
    assert_int_equal(gr_harness_apply_yaml(&t->cluster, t->ns, yaml), 0);
    /* The RBAC authorizer watches bindings: allow it a moment to notice. */
    int rc = 1;
    int tries = gr_test_scaled_tries(10, 200); /* 10 s, scaled to load */
    for (int i = 0; i < tries && rc != 0; i++) {
        rc = gr_harness_kubectl_lowpriv(&t->cluster, &r, "get", "pods", "-n", t->ns, NULL);
        if (rc != 0 && i == tries - 1) {
            fprintf(stderr, "lowpriv still cannot list pods: %s\n", r.err);
        }
        gr_harness_result_free(&r);
        if (rc != 0) {
            nanosleep(&(struct timespec){0, 200000000L}, NULL);
        }
    }
    assert_int_equal(rc, 0);
    gr_harness_passed(t);
}

int main(void)
{
    int skip = gr_harness_skip_if_disabled();
    if (skip) {
        return skip;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_scheduling_v1alpha2_served, gr_harness_setup,
                                        gr_harness_teardown),
        cmocka_unit_test_setup_teardown(test_third_party_crds, gr_harness_setup,
                                        gr_harness_teardown),
        cmocka_unit_test_setup_teardown(test_garbage_collection, gr_harness_setup,
                                        gr_harness_teardown),
        cmocka_unit_test_setup_teardown(test_lowpriv_identity, gr_harness_setup,
                                        gr_harness_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
