/*
 * test_gang_grove_integration.c — the Grove gang discoverer (beyond
 * upstream, NVIDIA/NVSentinel#1354) and the bundled NCCL topology ConfigMap
 * (PF-157) on the real control plane (gr_cluster fixture).
 *
 * Grove's operator is not run: the test writes what it would write — the
 * fixture CRDs (test/fixtures/crds/grove.yaml), a PodCliqueSet owning a
 * standalone PodClique, a PodCliqueScalingGroup with its PodCliques and the
 * PodGangs, and pods labelled as Grove labels them (grove.io/podgang,
 * grove.io/podclique, app.kubernetes.io/part-of, ...). As Grove does, the
 * base PodGang is created after its pods, so the gang ConfigMap starts with
 * expected_count "0" and the coordinator fills it (sum of minReplicas) and
 * the ownerReference when the PodGang appears; a scaled PodGang that exists
 * at admission gets its count at once. Deleting the PodCliqueSet removes
 * the PodGangs and, through them, the gang ConfigMaps (garbage collector).
 *
 * The webhook's two hooks are driven in-process; "pods getting IPs" is a
 * status patch (there is no kubelet).
 */
#include "gang_itest.h"

/* The webhook config's Grove shorthand (`{name: grove}`, filled in by the
 * config parser to the PodGang label and GVR without a minCountExpr
 * default); the same shorthand in a PreflightConfig is checked below. */
static const char CFG_GROVE[] = "gangDiscovery: {name: grove}\n"
                                "gangCoordination:\n  enabled: true\n  masterPort: 29500\n"
                                "  ncclTopoShape: ndv4\n"
                                "initContainers:\n  - name: preflight-nccl-allreduce\n"
                                "    image: busybox\n";

static const gr_kube_gvr PCS = {"grove.io", "v1alpha1", "podcliquesets"};
static const gr_kube_gvr PCSG = {"grove.io", "v1alpha1", "podcliquescalinggroups"};
static const gr_kube_gvr PODGANG = {"scheduler.grove.io", "v1alpha1", "podgangs"};

static char *uid_of(genv *g, const gr_kube_gvr *gvr, const char *ns, const char *name)
{
    json_t *o = NULL;
    gr_kube_status st;
    gr_err err;
    if (gr_kube_get(g->kc, gvr, ns, name, NULL, &o, &st, &err) != GR_OK)
        fail_msg("get %s %s: %s", gvr->resource, name, err.msg);
    char *uid = strdup(json_string_value(json_object_get(json_object_get(o, "metadata"), "uid")));
    json_decref(o);
    return uid;
}

/* ownerReferences YAML (one entry) */
static void owner_yaml(char *buf, size_t n, const char *api, const char *kind, const char *name,
                       const char *uid)
{
    snprintf(buf, n,
             "  ownerReferences:\n  - apiVersion: %s\n    kind: %s\n    name: %s\n"
             "    uid: %s\n    controller: true\n    blockOwnerDeletion: true\n",
             api, kind, name, uid);
}

/* The labels Grove's operator puts on a pod of clique `clique`. */
static void grove_labels(char *buf, size_t n, const char *gang, const char *base,
                         const char *clique, const char *pcsg)
{
    int k = snprintf(buf, n,
                     "\"labels\":{\"app.kubernetes.io/managed-by\":\"grove-operator\","
                     "\"app.kubernetes.io/part-of\":\"disagg\",\"grove.io/podclique\":\"%s\","
                     "\"grove.io/podgang\":\"%s\"",
                     clique, gang);
    if (pcsg)
        k += snprintf(buf + k, n - (size_t)k, ",\"grove.io/podcliquescalinggroup\":\"%s\"", pcsg);
    if (base)
        k += snprintf(buf + k, n - (size_t)k, ",\"grove.io/base-podgang\":\"%s\"", base);
    snprintf(buf + k, n - (size_t)k, "}");
}

/* Admit then create one Grove pod; returns the ConfigMap name (malloc'd). */
static char *grove_pod(genv *g, const char *ns, const char *name, const char *gang,
                       const char *base, const char *clique, const char *pcsg)
{
    char labels[600];
    grove_labels(labels, sizeof labels, gang, base, clique, pcsg);
    json_t *pod = ij("{\"metadata\":{\"name\":\"%s\",%s},\"spec\":{\"containers\":[{\"name\":"
                     "\"c\",\"image\":\"busybox\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":"
                     "\"8\"}}}]}}",
                     name, labels);
    char *cm = admit(g, pod, ns);
    json_decref(pod);
    assert_non_null(cm);
    create_member(g, ns, name, cm, labels, "");
    return cm;
}

static const char *owner_kind(const json_t *cm)
{
    const json_t *ref =
        json_array_get(json_object_get(json_object_get(cm, "metadata"), "ownerReferences"), 0);
    return json_string_value(json_object_get(ref, "kind"));
}

static void test_grove_gangs(void **state)
{
    gr_harness_ctx *t = *state;
    const char *ns = t->ns;
    assert_int_equal(gr_harness_apply_file(&t->cluster, NULL, "test/fixtures/crds/grove.yaml"), 0);
    assert_int_equal(
        gr_harness_apply_file(&t->cluster, NULL,
                              "deploy/gang/preflight.nvsentinel.nvidia.com_preflightconfigs.yaml"),
        0);
    genv g;
    genv_start(&g, t, CFG_GROVE, NULL);
    gr_gang_discoverer *d = gr_gang_service_discoverer_for(g.svc, ns);
    assert_int_equal(gr_gang_discoverer_mode(d), GR_GANG_GROVE);
    assert_string_equal(gr_gang_discoverer_name(d), "grove");
    gr_gang_discoverer_unref(d);

    /* The hierarchy: PodCliqueSet → PodClique (standalone) and
     * PodCliqueScalingGroup → PodCliques of its replicas. */
    apply_yaml(t, ns,
               "apiVersion: grove.io/v1alpha1\nkind: PodCliqueSet\nmetadata:\n  name: disagg\n"
               "spec:\n  replicas: 1\n  template:\n    cliques:\n    - name: frontend\n"
               "    - name: leader\n    - name: worker\n    podCliqueScalingGroups:\n"
               "    - name: prefill\n      cliqueNames: [leader, worker]\n      minAvailable: 1\n");
    char *pcs_uid = uid_of(&g, &PCS, ns, "disagg");
    char own[400], yaml[2400];
    owner_yaml(own, sizeof own, "grove.io/v1alpha1", "PodCliqueSet", "disagg", pcs_uid);
    snprintf(yaml, sizeof yaml,
             "apiVersion: grove.io/v1alpha1\nkind: PodClique\nmetadata:\n"
             "  name: disagg-0-frontend\n%s  labels:\n    app.kubernetes.io/part-of: disagg\n"
             "spec:\n  replicas: 2\n  minAvailable: 1\n  roleName: frontend\n---\n"
             "apiVersion: grove.io/v1alpha1\nkind: PodCliqueScalingGroup\nmetadata:\n"
             "  name: disagg-0-prefill\n%s  labels:\n    app.kubernetes.io/part-of: disagg\n"
             "spec:\n  replicas: 2\n  minAvailable: 1\n  cliqueNames: [leader, worker]\n",
             own, own);
    apply_yaml(t, ns, yaml);
    char *pcsg_uid = uid_of(&g, &PCSG, ns, "disagg-0-prefill");
    char own_pcsg[400];
    owner_yaml(own_pcsg, sizeof own_pcsg, "grove.io/v1alpha1", "PodCliqueScalingGroup",
               "disagg-0-prefill", pcsg_uid);
    yaml[0] = 0;
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 2; c++) {
            size_t k = strlen(yaml);
            snprintf(yaml + k, sizeof yaml - k,
                     "---\napiVersion: grove.io/v1alpha1\nkind: PodClique\nmetadata:\n"
                     "  name: disagg-0-prefill-%d-%s\n%s  labels:\n"
                     "    grove.io/podcliquescalinggroup: disagg-0-prefill\n"
                     "spec:\n  replicas: 1\n  minAvailable: 1\n  roleName: %s\n",
                     r, c ? "worker" : "leader", own_pcsg, c ? "worker" : "leader");
        }
    apply_yaml(t, ns, yaml);

    /* Base gang disagg-0: the pods come first (Grove creates the PodGang
     * once it knows the pods), so expected_count is "0" at admission. */
    char *cm =
        grove_pod(&g, ns, "disagg-0-frontend-b", "disagg-0", NULL, "disagg-0-frontend", NULL);
    char want_id[256];
    snprintf(want_id, sizeof want_id, "grove-%s-disagg-0", ns);
    char *want_cm = gr_preflight_gang_configmap_name(want_id);
    assert_string_equal(cm, want_cm); /* PF-113, PF-153 */
    free(want_cm);
    json_t *o = wait_cm(&g, ns, cm, 30);
    assert_non_null(o);                                     /* PF-143 */
    assert_string_equal(cm_data(o, "gang_id"), want_id);    /* PF-151 */
    assert_string_equal(cm_data(o, "expected_count"), "0"); /* PF-111 */
    assert_string_equal(cm_data(o, "peers"), "");           /* PF-112 */
    assert_null(json_object_get(json_object_get(o, "metadata"), "ownerReferences"));
    json_decref(o);
    const char *members[][3] = {
        {"disagg-0-frontend-a", "disagg-0-frontend", NULL},
        {"disagg-0-prefill-0-leader-x", "disagg-0-prefill-0-leader", "disagg-0-prefill"},
        {"disagg-0-prefill-0-worker-y", "disagg-0-prefill-0-worker", "disagg-0-prefill"}};
    for (size_t i = 0; i < 3; i++) {
        char *c2 = grove_pod(&g, ns, members[i][0], "disagg-0", NULL, members[i][1], members[i][2]);
        assert_string_equal(c2, cm); /* one gang across cliques and the scaling group */
        free(c2);
    }

    /* PF-157: the bundled ndv4 topology, created in the gang's namespace */
    json_t *topo = wait_cm(&g, ns, "preflight-nccl-topo", 30);
    assert_non_null(topo);
    assert_string_equal(cm_data(topo, "topo.xml"), gr_gang_topo_builtin("ndv4"));
    const json_t *tl = json_object_get(json_object_get(topo, "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(tl, "app.kubernetes.io/component")),
                        "nccl-topo");
    assert_string_equal(json_string_value(json_object_get(tl, GR_GANG_TOPO_LABEL_SHAPE)), "ndv4");
    json_decref(topo);

    /* The PodGang appears: frontend min 1 + leader min 1 + worker min 1. */
    snprintf(yaml, sizeof yaml,
             "apiVersion: scheduler.grove.io/v1alpha1\nkind: PodGang\nmetadata:\n"
             "  name: disagg-0\n%s  labels:\n    app.kubernetes.io/part-of: disagg\n"
             "spec:\n  podgroups:\n"
             "  - name: disagg-0-frontend\n    minReplicas: 1\n    podReferences:\n"
             "    - {namespace: %s, name: disagg-0-frontend-a}\n"
             "    - {namespace: %s, name: disagg-0-frontend-b}\n"
             "  - name: disagg-0-prefill-0-leader\n    minReplicas: 1\n    podReferences:\n"
             "    - {namespace: %s, name: disagg-0-prefill-0-leader-x}\n"
             "  - name: disagg-0-prefill-0-worker\n    minReplicas: 1\n    podReferences:\n"
             "    - {namespace: %s, name: disagg-0-prefill-0-worker-y}\n",
             own, ns, ns, ns, ns);
    apply_yaml(t, ns, yaml);
    o = wait_cm_data(&g, ns, cm, "expected_count", "3", 60); /* PF-147: sum of minReplicas */
    json_decref(o);
    char *pg_uid = uid_of(&g, &PODGANG, ns, "disagg-0");
    /* the owner is added in the same reconcile or the next (10 s, scaled) */
    int tries = gr_test_scaled_tries(10, 100);
    for (int i = 0; i < tries; i++) {
        o = get_cm(&g, ns, cm);
        if (owner_kind(o))
            break;
        json_decref(o);
        o = NULL;
        sleep_ms(100);
    }
    assert_non_null(o);
    const json_t *ref =
        json_array_get(json_object_get(json_object_get(o, "metadata"), "ownerReferences"), 0);
    assert_string_equal(json_string_value(json_object_get(ref, "apiVersion")),
                        "scheduler.grove.io/v1alpha1");
    assert_string_equal(json_string_value(json_object_get(ref, "kind")), "PodGang");
    assert_string_equal(json_string_value(json_object_get(ref, "name")), "disagg-0");
    assert_string_equal(json_string_value(json_object_get(ref, "uid")), pg_uid);
    json_decref(o);

    /* IPs: all four members (one above the frontend's minAvailable), ranked
     * by pod name (PF-145, PF-148, PF-149). */
    set_ip(&g, ns, "disagg-0-prefill-0-worker-y", "10.1.0.4");
    set_ip(&g, ns, "disagg-0-frontend-b", "10.1.0.2");
    set_ip(&g, ns, "disagg-0-prefill-0-leader-x", "10.1.0.3");
    set_ip(&g, ns, "disagg-0-frontend-a", "10.1.0.1");
    o = wait_cm_data(&g, ns, cm, "peers",
                     "disagg-0-frontend-a;10.1.0.1;0;preflight-nccl-allreduce\n"
                     "disagg-0-frontend-b;10.1.0.2;1;preflight-nccl-allreduce\n"
                     "disagg-0-prefill-0-leader-x;10.1.0.3;2;preflight-nccl-allreduce\n"
                     "disagg-0-prefill-0-worker-y;10.1.0.4;3;preflight-nccl-allreduce",
                     30);
    assert_string_equal(cm_data(o, "master_addr"), "10.1.0.1");
    assert_string_equal(cm_data(o, "expected_count"), "3"); /* set once */
    json_decref(o);

    /* A scaled PodGang (scaling-group replica 1, above minAvailable) that
     * exists at admission: its own gang, counted at once (R9). */
    snprintf(yaml, sizeof yaml,
             "apiVersion: scheduler.grove.io/v1alpha1\nkind: PodGang\nmetadata:\n"
             "  name: disagg-0-prefill-1\n%s  labels:\n    grove.io/base-podgang: disagg-0\n"
             "spec:\n  podgroups:\n"
             "  - name: disagg-0-prefill-1-leader\n    minReplicas: 1\n    podReferences: []\n"
             "  - name: disagg-0-prefill-1-worker\n    minReplicas: 1\n    podReferences: []\n",
             own);
    apply_yaml(t, ns, yaml);
    char *cm2 = grove_pod(&g, ns, "disagg-0-prefill-1-leader-z", "disagg-0-prefill-1", "disagg-0",
                          "disagg-0-prefill-1-leader", "disagg-0-prefill");
    assert_string_not_equal(cm2, cm);
    o = wait_cm(&g, ns, cm2, 30);
    assert_non_null(o);
    assert_string_equal(cm_data(o, "expected_count"), "2");
    assert_string_equal(owner_kind(o), "PodGang");
    json_decref(o);

    /* Deleting the PodCliqueSet takes its PodGangs and, through them, the
     * gang ConfigMaps (two levels of garbage collection). The garbage
     * collector learns about the Grove CRDs at its next discovery resync
     * (every 30 s) and pauses while any CRD's informer syncs (other tests
     * create CRDs), so each level can take a minute or more under load: the
     * deadlines are generous and scaled to load (gr_harness_wait). */
    gr_harness_result r;
    if (t->cluster.controller_manager) {
        assert_int_equal(gr_harness_kubectl(&t->cluster, &r, "-n", ns, "delete", "pods", "--all",
                                            "--grace-period=0", "--force", "--wait=false", NULL),
                         0);
        gr_harness_result_free(&r);
        assert_int_equal(gr_harness_kubectl(&t->cluster, &r, "-n", ns, "delete",
                                            "podcliquesets.grove.io", "disagg", "--wait=false",
                                            NULL),
                         0);
        gr_harness_result_free(&r);
        char res[300];
        /* level 1: the PodGangs (owned by the PodCliqueSet) */
        assert_int_equal(
            gr_harness_wait(&t->cluster, ns, "podgangs.scheduler.grove.io/disagg-0", "delete", 240),
            0);
        assert_int_equal(gr_harness_wait(&t->cluster, ns,
                                         "podgangs.scheduler.grove.io/disagg-0-prefill-1", "delete",
                                         240),
                         0);
        /* level 2: the gang ConfigMaps (owned by the PodGangs) */
        snprintf(res, sizeof res, "configmap/%s", cm);
        assert_int_equal(gr_harness_wait(&t->cluster, ns, res, "delete", 240), 0);
        snprintf(res, sizeof res, "configmap/%s", cm2);
        assert_int_equal(gr_harness_wait(&t->cluster, ns, res, "delete", 240), 0);
        /* the topology ConfigMap is per namespace, not per gang: it stays */
        topo = get_cm(&g, ns, "preflight-nccl-topo");
        assert_non_null(topo);
        json_decref(topo);
    } else {
        print_message("kube-controller-manager not running: GC asserted via ownerReference only\n");
    }
    /* The shorthand in a PreflightConfig (PF-115, PF-120, PF-125, PF-126):
     * accepted by the CRD schema, validated, active. */
    apply_yaml(t, ns,
               "apiVersion: preflight.nvsentinel.nvidia.com/v1alpha1\nkind: PreflightConfig\n"
               "metadata:\n  name: default\nspec:\n  gangDiscovery:\n    name: grove\n");
    assert_int_equal(gr_harness_wait_jsonpath(&t->cluster, ns, "preflightconfig/default",
                                              "{.status.discoverer}", "grove", 60),
                     0);
    assert_int_equal(gr_harness_wait_jsonpath(&t->cluster, ns, "preflightconfig/default",
                                              "{.status.conditions[?(@.type==\"Ready\")].status}",
                                              "True", 60),
                     0);
    free(cm2);
    free(cm);
    free(pg_uid);
    free(pcsg_uid);
    free(pcs_uid);
    genv_stop(&g);
    gr_harness_passed(t);
}

int main(void)
{
    int skip = gr_harness_skip_if_disabled();
    if (skip)
        return skip;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_grove_gangs, gr_harness_setup, gr_harness_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
