/*
 * test_gang_integration.c — gang discovery and coordination on the real
 * control plane (gr_cluster fixture): every discoverer (native PodGroup,
 * native Workload, a Volcano PodGroup CRD, KAI with a label key),
 * PreflightConfig precedence / fallback / late CRDs, and garbage collection
 * of gang ConfigMaps through their ownerReference.
 *
 * The webhook's two hooks are driven in-process (resolve + admitted, exactly
 * as gr_preflight_admit calls them); the pods are real API objects; "pods
 * getting IPs" is a status patch (there is no kubelet).
 */
#include "gang_itest.h"
#include "gr_kube_discovery.h"

static const char CFG_NATIVE[] = "gangCoordination:\n  enabled: true\n  masterPort: 29500\n"
                                 "initContainers:\n  - name: preflight-nccl-allreduce\n"
                                 "    image: busybox\n";

/* PF-87, PF-89, PF-90, PF-143, PF-145..PF-153: native 1.36 PodGroup, and GC
 * of the gang ConfigMap when the PodGroup is deleted. */
static void test_native_podgroup(void **state)
{
    gr_harness_ctx *t = *state;
    const char *ns = t->ns;
    genv g;
    genv_start(&g, t, CFG_NATIVE, NULL);
    gr_gang_discoverer *d = gr_gang_service_discoverer_for(g.svc, ns);
    assert_int_equal(gr_gang_discoverer_mode(d), GR_GANG_NATIVE_PODGROUP); /* PF-87 */
    gr_gang_discoverer_unref(d);

    apply_yaml(t, ns,
               "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata:\n"
               "  name: training-workers\nspec:\n  schedulingPolicy:\n    gang:\n"
               "      minCount: 2\n");
    json_t *pod = ij("{\"metadata\":{\"name\":\"w-1\"},\"spec\":{\"schedulingGroup\":"
                     "{\"podGroupName\":\"training-workers\"}}}");
    char *cm = admit(&g, pod, ns); /* PF-89 */
    assert_non_null(cm);
    json_decref(pod);
    char want_id[256];
    snprintf(want_id, sizeof want_id, "kubernetes-%s-training-workers", ns);
    char *want_cm = gr_preflight_gang_configmap_name(want_id);
    assert_string_equal(cm, want_cm); /* PF-153, PF-113 (long namespace: hash suffix) */
    assert_true(strlen(cm) <= 63);
    assert_memory_equal(cm, "preflight-", 10);
    free(want_cm);

    /* the first member pod makes the coordinator create the ConfigMap,
     * expected_count read from the PodGroup (R9) */
    const char *sg = "\"schedulingGroup\":{\"podGroupName\":\"training-workers\"}";
    create_member(&g, ns, "w-1", cm, "", sg);
    create_member(&g, ns, "w-0", cm, "", sg);
    json_t *o = wait_cm(&g, ns, cm, 30);
    assert_non_null(o);                                      /* PF-143 */
    assert_string_equal(cm_data(o, "gang_id"), want_id);     /* PF-151 */
    assert_string_equal(cm_data(o, "expected_count"), "2");  /* PF-90, PF-147 */
    assert_string_equal(cm_data(o, "master_port"), "29500"); /* PF-150 */
    assert_string_equal(cm_data(o, "peers"), "");
    assert_string_equal(cm_data(o, "master_addr"), "");
    json_t *labels = json_object_get(json_object_get(o, "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(labels, GR_GANG_LABEL_MANAGED_BY)),
                        "preflight"); /* PF-152 */
    json_t *ref =
        json_array_get(json_object_get(json_object_get(o, "metadata"), "ownerReferences"), 0);
    assert_string_equal(json_string_value(json_object_get(ref, "apiVersion")),
                        "scheduling.k8s.io/v1alpha2");
    assert_string_equal(json_string_value(json_object_get(ref, "kind")), "PodGroup");
    assert_string_equal(json_string_value(json_object_get(ref, "name")), "training-workers");
    json_decref(o);

    /* no IP yet: no peer */
    set_ip(&g, ns, "w-1", "10.0.0.11");
    o = wait_cm_data(&g, ns, cm, "peers", "w-1;10.0.0.11;0;preflight-nccl-allreduce",
                     30); /* PF-145 */
    assert_string_equal(cm_data(o, "master_addr"), "10.0.0.11");
    json_decref(o);
    set_ip(&g, ns, "w-0", "fd00::10");
    /* deterministic ranks: w-0 sorts first and becomes master (PF-148, PF-149) */
    o = wait_cm_data(&g, ns, cm, "peers",
                     "w-0;fd00::10;0;preflight-nccl-allreduce\n"
                     "w-1;10.0.0.11;1;preflight-nccl-allreduce",
                     30);
    assert_string_equal(cm_data(o, "master_addr"), "fd00::10");
    assert_string_equal(cm_data(o, "expected_count"), "2");
    json_decref(o);

    /* a deleted member is pruned */
    gr_harness_result r;
    assert_int_equal(gr_harness_kubectl(&t->cluster, &r, "-n", ns, "delete", "pod", "w-0",
                                        "--grace-period=0", "--force", "--wait=false", NULL),
                     0);
    gr_harness_result_free(&r);
    o = wait_cm_data(&g, ns, cm, "peers", "w-1;10.0.0.11;0;preflight-nccl-allreduce", 30);
    assert_string_equal(cm_data(o, "master_addr"), "10.0.0.11");
    json_decref(o);

    /* GC through the ownerReference (kube-controller-manager's garbage
     * collector). Without the controller manager only the reference is
     * asserted (above). */
    if (t->cluster.controller_manager) {
        /* the PodGroup carries a protection finalizer while pods reference
         * it: remove the pods first, then the PodGroup */
        assert_int_equal(gr_harness_kubectl(&t->cluster, &r, "-n", ns, "delete", "pods", "--all",
                                            "--grace-period=0", "--force", "--wait=false", NULL),
                         0);
        gr_harness_result_free(&r);
        assert_int_equal(gr_harness_kubectl(&t->cluster, &r, "-n", ns, "delete",
                                            "podgroups.scheduling.k8s.io", "training-workers",
                                            "--wait=false", NULL),
                         0);
        gr_harness_result_free(&r);
        char res[300];
        snprintf(res, sizeof res, "configmap/%s", cm);
        assert_int_equal(gr_harness_wait(&t->cluster, ns, res, "delete", 120), 0);
    } else {
        print_message("kube-controller-manager not running: GC asserted via ownerReference only\n");
    }
    free(cm);
    genv_stop(&g);
    gr_harness_passed(t);
}

/* PF-101, PF-111, PF-112, PF-115, PF-120: a Volcano PodGroup CRD chosen by a
 * PreflightConfig; the PodGroup is created after the pods, so expected_count
 * starts at "0" and the coordinator fills it and the ownerReference later. */
static void test_volcano_late_podgroup(void **state)
{
    gr_harness_ctx *t = *state;
    const char *ns = t->ns;
    assert_int_equal(
        gr_harness_apply_file(&t->cluster, NULL, "test/fixtures/crds/volcano-podgroup.yaml"), 0);
    assert_int_equal(
        gr_harness_apply_file(&t->cluster, NULL,
                              "deploy/gang/preflight.nvsentinel.nvidia.com_preflightconfigs.yaml"),
        0);
    genv g;
    genv_start(&g, t, CFG_NATIVE, NULL);
    apply_yaml(t, ns,
               "apiVersion: preflight.nvsentinel.nvidia.com/v1alpha1\nkind: PreflightConfig\n"
               "metadata:\n  name: default\nspec:\n  gangDiscovery:\n    name: volcano\n"
               "    annotationKeys: [\"scheduling.k8s.io/group-name\"]\n    podGroupGVR:\n"
               "      group: scheduling.volcano.sh\n      version: v1beta1\n"
               "      resource: podgroups\n    minCountExpr: podGroup.spec.minMember\n");
    assert_int_equal(gr_harness_wait_jsonpath(&t->cluster, ns, "preflightconfig/default",
                                              "{.status.discoverer}", "volcano", 30),
                     0); /* PF-125 */
    assert_int_equal(gr_harness_wait_jsonpath(&t->cluster, ns, "preflightconfig/default",
                                              "{.status.conditions[?(@.type==\"Ready\")].status}",
                                              "True", 30),
                     0); /* PF-126 */
    gr_gang_discoverer *d = gr_gang_service_discoverer_for(g.svc, ns);
    assert_string_equal(gr_gang_discoverer_name(d), "volcano"); /* PF-115 */
    gr_gang_discoverer_unref(d);
    d = gr_gang_service_discoverer_for(g.svc, "some-other-namespace");
    assert_string_equal(gr_gang_discoverer_name(d), "kubernetes"); /* PF-116, PF-119 */
    gr_gang_discoverer_unref(d);

    const char *ann = "\"annotations\":{\"scheduling.k8s.io/group-name\":\"job-a\"}";
    json_t *pod = ij("{\"metadata\":{\"name\":\"a-0\",%s}}", ann);
    char *cm = admit(&g, pod, ns);
    assert_non_null(cm);
    json_decref(pod);
    create_member(&g, ns, "a-0", cm, ann, "");
    create_member(&g, ns, "a-1", cm, ann, "");
    json_t *o = wait_cm(&g, ns, cm, 30);
    assert_string_equal(cm_data(o, "expected_count"), "0"); /* PF-111 */
    assert_string_equal(cm_data(o, "peers"), "");           /* PF-112 */
    assert_string_equal(cm_data(o, "master_addr"), "");
    assert_null(json_object_get(json_object_get(o, "metadata"), "ownerReferences"));
    json_decref(o);

    set_ip(&g, ns, "a-1", "10.1.0.2");
    set_ip(&g, ns, "a-0", "10.1.0.1");
    o = wait_cm_data(&g, ns, cm, "peers",
                     "a-0;10.1.0.1;0;preflight-nccl-allreduce\n"
                     "a-1;10.1.0.2;1;preflight-nccl-allreduce",
                     30);
    assert_string_equal(cm_data(o, "expected_count"), "0");
    json_decref(o);
    /* the PodGroup appears: expected_count set once, owner backfilled (PF-101) */
    apply_yaml(t, ns,
               "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n"
               "  name: job-a\nspec:\n  minMember: 2\n");
    o = wait_cm_data(&g, ns, cm, "expected_count", "2", 60);
    json_t *ref =
        json_array_get(json_object_get(json_object_get(o, "metadata"), "ownerReferences"), 0);
    assert_string_equal(json_string_value(json_object_get(ref, "apiVersion")),
                        "scheduling.volcano.sh/v1beta1");
    assert_string_equal(json_string_value(json_object_get(ref, "kind")), "PodGroup");
    json_decref(o);
    /* set once: a later change of minMember does not move it */
    apply_yaml(t, ns,
               "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n"
               "  name: job-a\nspec:\n  minMember: 5\n");
    set_ip(&g, ns, "a-1", "10.1.0.3");
    o = wait_cm_data(&g, ns, cm, "peers",
                     "a-0;10.1.0.1;0;preflight-nccl-allreduce\n"
                     "a-1;10.1.0.3;1;preflight-nccl-allreduce",
                     30);
    assert_string_equal(cm_data(o, "expected_count"), "2");
    json_decref(o);
    free(cm);
    genv_stop(&g);
    gr_harness_passed(t);
}

/* PF-102, PF-97, PF-114, PF-116, PF-14: KAI (OSMO) as the cluster-wide
 * default with a label key. */
static void test_kai_label(void **state)
{
    gr_harness_ctx *t = *state;
    const char *ns = t->ns;
    assert_int_equal(
        gr_harness_apply_file(&t->cluster, NULL, "test/fixtures/crds/kai-podgroup.yaml"), 0);
    genv g;
    genv_start(&g, t,
               "gangCoordination:\n  enabled: true\ngangDiscovery:\n  name: osmo-with-kai\n"
               "  labelKeys: [\"osmo.group_uuid\"]\n  podGroupGVR:\n"
               "    group: scheduling.run.ai\n    version: v2alpha2\n    resource: podgroups\n"
               "initContainers:\n  - name: preflight-nccl-allreduce\n    image: busybox\n",
               NULL);
    apply_yaml(t, ns,
               "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata:\n"
               "  name: myjob\nspec:\n  minMember: 3\n");
    const char *lab = "\"labels\":{\"osmo.group_uuid\":\"myjob\"}";
    json_t *pod = ij("{\"metadata\":{\"name\":\"k-0\",%s}}", lab);
    char *cm = admit(&g, pod, ns);
    assert_non_null(cm);
    json_decref(pod);
    create_member(&g, ns, "k-0", cm, lab, "");
    json_t *o = wait_cm(&g, ns, cm, 30);
    char want[256];
    snprintf(want, sizeof want, "osmo-with-kai-%s-myjob", ns); /* PF-109 */
    assert_string_equal(cm_data(o, "gang_id"), want);
    assert_string_equal(cm_data(o, "expected_count"), "3"); /* PF-102 */
    json_decref(o);
    /* a pod without the label is not a gang member */
    pod = ij("{\"metadata\":{\"name\":\"solo\"}}");
    assert_null(admit(&g, pod, ns));
    json_decref(pod);
    for (int i = 0; i < 3; i++) {
        char name[16], ip[32];
        snprintf(name, sizeof name, "k-%d", i);
        snprintf(ip, sizeof ip, "10.2.0.%d", 10 - i);
        if (i > 0) /* k-0 exists already */
            create_member(&g, ns, name, cm, lab, "");
        set_ip(&g, ns, name, ip);
    }
    o = wait_cm_data(&g, ns, cm, "peers",
                     "k-0;10.2.0.10;0;preflight-nccl-allreduce\n"
                     "k-1;10.2.0.9;1;preflight-nccl-allreduce\n"
                     "k-2;10.2.0.8;2;preflight-nccl-allreduce",
                     30);
    assert_string_equal(cm_data(o, "master_addr"), "10.2.0.10");
    json_decref(o);
    free(cm);
    genv_stop(&g);
    gr_harness_passed(t);
}

/* PF-88, PF-91, PF-92: the Workload discoverer. Kubernetes 1.36 (our control
 * plane) serves Workload only at scheduling.k8s.io/v1alpha2 and no longer has
 * pod.spec.workloadRef, so the test hands the service a REST mapper without
 * PodGroup (discovery falls back to Workload) and the admission object
 * carries spec.workloadRef as a 1.35 API server would send it. */
static void test_workload(void **state)
{
    gr_harness_ctx *t = *state;
    const char *ns = t->ns;
    gr_kube_mapper *m = NULL;
    gr_err err;
    assert_int_equal(gr_kube_mapper_new(NULL, &m, &err), GR_OK);
    json_t *rl = ij("{\"kind\":\"APIResourceList\",\"groupVersion\":\"scheduling.k8s.io/v1alpha2\","
                    "\"resources\":[{\"name\":\"workloads\",\"namespaced\":true,\"kind\":"
                    "\"Workload\",\"verbs\":[\"get\"]}]}");
    assert_int_equal(gr_kube_mapper_add_resource_list(m, rl, true, &err), GR_OK);
    json_decref(rl);
    genv g;
    genv_start(&g, t, CFG_NATIVE, m);
    gr_gang_discoverer *d = gr_gang_service_discoverer_for(g.svc, ns);
    assert_int_equal(gr_gang_discoverer_mode(d), GR_GANG_NATIVE_WORKLOAD); /* PF-88 */
    gr_gang_discoverer_unref(d);
    apply_yaml(t, ns,
               "apiVersion: scheduling.k8s.io/v1alpha2\nkind: Workload\nmetadata:\n"
               "  name: training-job-workload\nspec:\n  podGroupTemplates:\n"
               "    - name: ps\n      schedulingPolicy:\n        gang:\n          minCount: 1\n"
               "    - name: workers\n      schedulingPolicy:\n        gang:\n"
               "          minCount: 2\n");
    json_t *pod = ij("{\"metadata\":{\"generateName\":\"w-\"},\"spec\":{\"workloadRef\":"
                     "{\"name\":\"training-job-workload\",\"podGroup\":\"workers\"}}}");
    char *cm = admit(&g, pod, ns); /* PF-91: read from the admission object */
    assert_non_null(cm);
    json_decref(pod);
    create_member(&g, ns, "w-a", cm, "", "");
    json_t *o = wait_cm(&g, ns, cm, 30);
    char want[256];
    snprintf(want, sizeof want, "kubernetes-%s-training-job-workload-workers", ns);
    assert_string_equal(cm_data(o, "gang_id"), want);
    assert_string_equal(cm_data(o, "expected_count"), "2"); /* PF-92 */
    json_t *ref =
        json_array_get(json_object_get(json_object_get(o, "metadata"), "ownerReferences"), 0);
    assert_string_equal(json_string_value(json_object_get(ref, "kind")), "Workload");
    json_decref(o);
    set_ip(&g, ns, "w-a", "10.3.0.1");
    o = wait_cm_data(&g, ns, cm, "peers", "w-a;10.3.0.1;0;preflight-nccl-allreduce", 30);
    json_decref(o);
    free(cm);
    genv_stop(&g);
    gr_harness_passed(t);
}

/* PF-117, PF-122..PF-127, PF-132..PF-135, PF-139: PreflightConfig
 * precedence, invalid fallback, and a CRD that appears later. */
static void test_pfc_precedence(void **state)
{
    gr_harness_ctx *t = *state;
    const char *ns = t->ns;
    assert_int_equal(
        gr_harness_apply_file(&t->cluster, NULL,
                              "deploy/gang/preflight.nvsentinel.nvidia.com_preflightconfigs.yaml"),
        0);
    genv g;
    genv_start(&g, t, CFG_NATIVE, NULL);
    /* an unresolvable GVR: invalid, the namespace keeps the default */
    char group[128];
    snprintf(group, sizeof group, "late%d.gpuready.test", (int)getpid());
    char yaml[2048];
    snprintf(yaml, sizeof yaml,
             "apiVersion: preflight.nvsentinel.nvidia.com/v1alpha1\nkind: PreflightConfig\n"
             "metadata:\n  name: first\nspec:\n  gangDiscovery:\n    name: late\n"
             "    labelKeys: [\"late/group\"]\n    podGroupGVR:\n      group: %s\n"
             "      version: v1\n      resource: gangs\n",
             group);
    apply_yaml(t, ns, yaml);
    assert_int_equal(gr_harness_wait_jsonpath(&t->cluster, ns, "preflightconfig/first",
                                              "{.status.conditions[?(@.type==\"Ready\")].reason}",
                                              "InvalidOrConflicting", 30),
                     0);
    char *msg = NULL;
    assert_int_equal(gr_harness_get_jsonpath(&t->cluster, ns, "preflightconfig/first",
                                             "{.status.conditions[?(@.type==\"Ready\")].message}",
                                             &msg),
                     0);
    char want[512];
    snprintf(want, sizeof want,
             "invalid configuration: gangDiscovery.podGroupGVR validation failed: resource "
             "\"%s/v1, Resource=gangs\" not found (is the CRD installed?)",
             group);
    assert_true(gr_harness_contains(msg, want)); /* PF-127, PF-132, PF-135 */
    free(msg);
    gr_gang_discoverer *d = gr_gang_service_discoverer_for(g.svc, ns);
    assert_string_equal(gr_gang_discoverer_name(d), "kubernetes"); /* PF-134 */
    gr_gang_discoverer_unref(d);

    /* a second, newer config is superseded (PF-122, PF-124, PF-139) */
    sleep_ms(1100); /* creationTimestamp has one-second resolution */
    apply_yaml(t, ns,
               "apiVersion: preflight.nvsentinel.nvidia.com/v1alpha1\nkind: PreflightConfig\n"
               "metadata:\n  name: second\nspec:\n  gangDiscovery: {}\n");
    snprintf(want, sizeof want,
             "superseded by older PreflightConfig \"first\" (not active: invalid configuration); "
             "only one is allowed per namespace");
    assert_int_equal(gr_harness_wait_jsonpath(&t->cluster, ns, "preflightconfig/second",
                                              "{.status.conditions[?(@.type==\"Ready\")].message}",
                                              want, 30),
                     0);

    /* the CRD is installed later: "first" becomes valid without an edit */
    snprintf(yaml, sizeof yaml,
             "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
             "  name: gangs.%s\nspec:\n  group: %s\n  scope: Namespaced\n  names:\n"
             "    kind: Gang\n    plural: gangs\n    singular: gang\n    listKind: GangList\n"
             "  versions:\n    - name: v1\n      served: true\n      storage: true\n"
             "      schema:\n        openAPIV3Schema:\n          type: object\n"
             "          x-kubernetes-preserve-unknown-fields: true\n",
             group, group);
    apply_yaml(t, NULL, yaml);
    assert_int_equal(gr_harness_wait_jsonpath(&t->cluster, ns, "preflightconfig/first",
                                              "{.status.conditions[?(@.type==\"Ready\")].status}",
                                              "True", 60),
                     0); /* PF-117 */
    assert_int_equal(gr_harness_wait_jsonpath(&t->cluster, ns, "preflightconfig/first",
                                              "{.status.discoverer}", "late", 10),
                     0);
    assert_int_equal(
        gr_harness_wait_jsonpath(&t->cluster, ns, "preflightconfig/second",
                                 "{.status.conditions[?(@.type==\"Ready\")].message}",
                                 "PreflightConfig \"first\" is already active in this namespace; "
                                 "only one is allowed",
                                 30),
        0);
    d = gr_gang_service_discoverer_for(g.svc, ns);
    assert_string_equal(gr_gang_discoverer_name(d), "late");
    gr_gang_discoverer_unref(d);
    /* printer columns (PF-125) */
    gr_harness_result r;
    assert_int_equal(gr_harness_kubectl(&t->cluster, &r, "-n", ns, "get", "pfc", NULL), 0);
    assert_true(gr_harness_contains(r.out, "DISCOVERER"));
    assert_true(gr_harness_contains(r.out, "READY"));
    assert_true(gr_harness_contains(r.out, "AGE"));
    gr_harness_result_free(&r);

    /* deleting the active config: the remaining one takes over (oldest left) */
    assert_int_equal(gr_harness_kubectl(&t->cluster, &r, "-n", ns, "delete", "pfc", "first", NULL),
                     0);
    gr_harness_result_free(&r);
    assert_int_equal(gr_harness_wait_jsonpath(&t->cluster, ns, "preflightconfig/second",
                                              "{.status.discoverer}", "kubernetes", 30),
                     0);
    snprintf(yaml, sizeof yaml, "gangs.%s", group);
    assert_int_equal(
        gr_harness_kubectl(&t->cluster, &r, "delete", "crd", yaml, "--wait=false", NULL), 0);
    gr_harness_result_free(&r);
    genv_stop(&g);
    gr_harness_passed(t);
}

/* deploy/gang/rbac.yaml is enough (least privilege): the coordinator runs as
 * the harness's unprivileged user bound to the shipped ClusterRoles only
 * (PF-93, PF-128, PF-130). */
static void test_rbac_least_privilege(void **state)
{
    gr_harness_ctx *t = *state;
    const char *ns = t->ns;
    assert_int_equal(gr_harness_apply_file(&t->cluster, NULL, "deploy/gang/rbac.yaml"), 0);
    assert_int_equal(
        gr_harness_apply_file(&t->cluster, NULL,
                              "deploy/gang/preflight.nvsentinel.nvidia.com_preflightconfigs.yaml"),
        0);
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n"
             "  name: %s-coordinator\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: "
             "ClusterRole, name: preflight-gang-coordinator}\nsubjects:\n"
             "  - {apiGroup: rbac.authorization.k8s.io, kind: User, name: gr-lowpriv}\n---\n"
             "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n"
             "  name: %s-discovery\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: "
             "ClusterRole, name: preflight-gang-discovery}\nsubjects:\n"
             "  - {apiGroup: rbac.authorization.k8s.io, kind: User, name: gr-lowpriv}\n",
             ns, ns);
    apply_yaml(t, NULL, yaml);
    /* aggregation and RBAC caches are eventually consistent */
    gr_harness_result r;
    int tries = gr_test_scaled_tries(10, 100);
    for (int i = 0; i < tries; i++) {
        int ok = gr_harness_kubectl_lowpriv(&t->cluster, &r, "auth", "can-i", "get",
                                            "podgroups.scheduling.k8s.io", "-n", ns, NULL);
        gr_harness_result_free(&r);
        if (ok == 0)
            break;
        sleep_ms(100);
    }
    apply_yaml(t, ns,
               "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata:\n"
               "  name: rb\nspec:\n  schedulingPolicy:\n    gang:\n      minCount: 1\n");
    g_kubeconfig = t->cluster.kubeconfig_lowpriv;
    genv g;
    genv_start(&g, t, CFG_NATIVE, NULL);
    g_kubeconfig = NULL;
    json_t *pod = ij("{\"metadata\":{\"name\":\"r-0\"},\"spec\":{\"schedulingGroup\":"
                     "{\"podGroupName\":\"rb\"}}}");
    char *cm = admit(&g, pod, ns);
    assert_non_null(cm);
    json_decref(pod);
    /* members are created by the admin (the coordinator cannot create pods) */
    gr_kube_client *lowkc = g.kc;
    g.kc = client_for(t);
    create_member(&g, ns, "r-0", cm, "", "\"schedulingGroup\":{\"podGroupName\":\"rb\"}");
    set_ip(&g, ns, "r-0", "10.4.0.1");
    json_t *o = wait_cm_data(&g, ns, cm, "peers", "r-0;10.4.0.1;0;preflight-nccl-allreduce", 30);
    assert_string_equal(cm_data(o, "expected_count"), "1");
    json_decref(o);
    gr_kube_client_free(g.kc);
    g.kc = lowkc;
    free(cm);
    genv_stop(&g);
    snprintf(yaml, sizeof yaml, "clusterrolebinding/%s-coordinator", ns);
    char yaml2[300];
    snprintf(yaml2, sizeof yaml2, "clusterrolebinding/%s-discovery", ns);
    gr_harness_kubectl(&t->cluster, &r, "delete", yaml, yaml2, NULL);
    gr_harness_result_free(&r);
    /* Leave gr-lowpriv as it was before the next lowpriv test asserts what it
     * may not do: wait until the API server's RBAC cache drops the grant. */
    bool revoked = false;
    for (int i = 0; i < tries * 3 && !revoked; i++) {
        revoked = gr_harness_kubectl_lowpriv(&t->cluster, &r, "auth", "can-i", "list", "pods", "-A",
                                             NULL) != 0;
        gr_harness_result_free(&r);
        if (!revoked)
            sleep_ms(100);
    }
    assert_true(revoked);
    gr_harness_passed(t);
}

int main(void)
{
    int skip = gr_harness_skip_if_disabled();
    if (skip)
        return skip;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_native_podgroup, gr_harness_setup,
                                        gr_harness_teardown),
        cmocka_unit_test_setup_teardown(test_volcano_late_podgroup, gr_harness_setup,
                                        gr_harness_teardown),
        cmocka_unit_test_setup_teardown(test_kai_label, gr_harness_setup, gr_harness_teardown),
        cmocka_unit_test_setup_teardown(test_workload, gr_harness_setup, gr_harness_teardown),
        cmocka_unit_test_setup_teardown(test_pfc_precedence, gr_harness_setup, gr_harness_teardown),
        cmocka_unit_test_setup_teardown(test_rbac_least_privilege, gr_harness_setup,
                                        gr_harness_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
