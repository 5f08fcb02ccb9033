/*
 * gr_nvcre_cert: the Certification controller's decision logic, one step at
 * a time (sequential create / progress / fail-continue / all-succeed,
 * unknown category, name collision, node discovery window, detection, gang
 * scheduler injection incl. Run:ai's key, intra-node, naming).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "gr_json.h"
#include "gr_kube_object.h"
#include "gr_nvcre_cert.h"
#include "gr_nvcre_types.h"
#include "gr_yaml.h"
#include "nvcre_test_fixture.h"

#define MIN (60LL * 1000000000LL)
/* naming.Truncate("c1-communication-nccl-all-reduce", 31) */
#define WF1 "c1-communication-nccl-all-16989"

static const char *CERT = "apiVersion: nvcre.nvidia.com/v1alpha1\n"
                          "kind: Certification\n"
                          "metadata: {name: c1, namespace: ns1, uid: u-1, generation: 1}\n"
                          "spec:\n"
                          "  target: {nodeSelector: {nvidia.com/gpu.present: \"true\"}}\n"
                          "  categories:\n"
                          "  - {domain: communication, variant: nccl-all-reduce}\n"
                          "  - {domain: diagnostics, variant: dcgm-level2}\n";

static json_t *nodes(const char *provider, const char *product, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "node-%02d", i);
        json_t *node = json_pack("{s:{s:s,s:{s:s,s:s}},s:{s:s}}", "metadata", "name", name,
                                 "labels", "nvidia.com/gpu.present", "true",
                                 "nvidia.com/gpu.product", product, "spec", "providerID", provider);
        json_array_append_new(a, node);
    }
    return a;
}

typedef struct {
    json_t *cert, *nodes, *wfs;
    gr_nvcre_cert_plan plan;
} world;

static void w_init(world *w, const char *cert_yaml, json_t *nodes_arr)
{
    memset(w, 0, sizeof *w);
    w->cert = yaml(cert_yaml);
    w->nodes = nodes_arr;
    w->wfs = json_array();
}

static void w_free(world *w)
{
    gr_nvcre_cert_plan_free(&w->plan);
    json_decref(w->cert);
    json_decref(w->nodes);
    json_decref(w->wfs);
}

/* One reconcile: plan, then apply it as the I/O side would (create the
 * Workflow, write the status). */
static void w_step(world *w, int64_t now)
{
    gr_nvcre_cert_plan_free(&w->plan);
    gr_nvcre_cert_input in = {w->cert, w->nodes, w->wfs, cat, now};
    gr_err err;
    if (gr_nvcre_cert_step(&in, &w->plan, &err) != GR_OK)
        fail_msg("step: %s", err.msg);
    if (w->plan.create)
        json_array_append(w->wfs, w->plan.create);
    json_object_set(w->cert, "status", w->plan.status);
}

static json_t *cond(const world *w, const char *type)
{
    return gr_kube_condition_find(json_object_get(json_object_get(w->cert, "status"), "conditions"),
                                  type);
}

static void assert_cond(const world *w, const char *type, const char *reason, const char *msg)
{
    json_t *c = cond(w, type);
    assert_non_null(c);
    assert_string_equal(json_string_value(json_object_get(c, "status")), "True");
    assert_string_equal(json_string_value(json_object_get(c, "reason")), reason);
    if (msg)
        assert_string_equal(json_string_value(json_object_get(c, "message")), msg);
}

static const char *cat_status(const world *w, size_t i)
{
    return json_string_value(json_object_get(
        json_array_get(json_object_get(json_object_get(w->cert, "status"), "categoryStatuses"), i),
        "status"));
}

static void finish_wf(world *w, size_t i, bool ok)
{
    json_t *wf = json_array_get(w->wfs, i);
    json_t *st = yaml(ok ? "conditions: [{type: Succeeded, status: \"True\", reason: "
                           "JobCompleted, message: ok, lastTransitionTime: "
                           "\"2026-01-01T00:00:00Z\"}]\nsucceededNodesRef: {kind: ConfigMap, name: "
                           "succeeded-nodes-abc}\n"
                         : "conditions: [{type: Failed, status: \"True\", reason: JobFailed, "
                           "message: bad, lastTransitionTime: \"2026-01-01T00:00:00Z\"}]\n"
                           "failedNodesRef: {kind: ConfigMap, name: failed-nodes-abc}\n");
    json_object_set_new(wf, "status", st);
}

static bool has_event(const world *w, const char *reason, const char *msg)
{
    size_t i;
    json_t *e;
    json_array_foreach(w->plan.events, i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "reason")), reason) &&
            (!msg || !strcmp(json_string_value(json_object_get(e, "message")), msg)))
            return true;
    }
    return false;
}

/* certification-sequential-create: the first category's Workflow, its name,
 * labels, annotation and owner. */
static void test_sequential_create(void **state)
{
    (void)state;
    world w;
    w_init(&w, CERT, nodes("aws:///us-east-1a/i-1", "NVIDIA-H100-80GB-HBM3", 2));
    w_step(&w, NOW);
    json_t *wf = w.plan.create;
    assert_non_null(wf);
    /* 32 characters: truncated to 31 with the FNV hash */
    assert_string_equal(json_string_value(gr_json_ptr_get(wf, "/metadata/name")), WF1);
    const json_t *labels = gr_json_ptr_get(wf, "/metadata/labels");
    assert_string_equal(json_string_value(json_object_get(labels, GR_NVCRE_LABEL_MANAGED_BY)),
                        "nvcre");
    assert_string_equal(json_string_value(json_object_get(labels, GR_NVCRE_LABEL_CERTIFICATION)),
                        "c1");
    assert_string_equal(json_string_value(json_object_get(labels, GR_NVCRE_LABEL_CATEGORY_DOMAIN)),
                        "communication");
    assert_string_equal(json_string_value(json_object_get(labels, GR_NVCRE_LABEL_CATEGORY_VARIANT)),
                        "nccl-all-reduce");
    assert_string_equal(
        json_string_value(json_object_get(gr_json_ptr_get(wf, "/metadata/annotations"),
                                          GR_NVCRE_ANN_REQUESTED_TEST_SCALE)),
        "full-scale");
    assert_string_equal(json_string_value(gr_json_ptr_get(wf, "/metadata/ownerReferences/0/uid")),
                        "u-1");
    assert_true(json_is_true(gr_json_ptr_get(wf, "/metadata/ownerReferences/0/controller")));
    /* AWS H100: EFA rendered */
    assert_int_equal(json_integer_value(gr_json_ptr_get(
                         wf, "/spec/dependencies/0/spec/template/spec/replicatedJobs/1/template/"
                             "spec/template/spec/containers/0/resources/limits/"
                             "vpc.amazonaws.com~1efa")),
                     32);
    assert_cond(&w, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_WORKFLOW_CREATED,
                "Created Workflow for category communication/nccl-all-reduce (1 of 2)");
    assert_string_equal(cat_status(&w, 0), "InProgress");
    assert_string_equal(cat_status(&w, 1), "Pending");
    assert_true(has_event(&w, GR_NVCRE_REASON_WORKFLOW_CREATED, NULL));
    assert_true(w.plan.requeue_after_ns > 0);
    w_free(&w);
}

/* certification-sequential-progress, -fail-continue, -all-succeed */
static void test_sequential_progress_fail_continue(void **state)
{
    (void)state;
    world w;
    w_init(&w, CERT, nodes("gce://p/z/n", "NVIDIA-H100-80GB-HBM3", 2));
    w_step(&w, NOW);
    w_step(&w, NOW + MIN); /* still running: one at a time */
    assert_null(w.plan.create);
    assert_cond(&w, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_WORKFLOW_RUNNING,
                "Running category communication/nccl-all-reduce (1 of 2): Workflow " WF1);
    assert_int_equal(json_array_size(w.wfs), 1);
    finish_wf(&w, 0, false);
    w_step(&w, NOW + 2 * MIN); /* a failed category does not stop the next */
    assert_string_equal(cat_status(&w, 0), "Failed");
    assert_string_equal(json_string_value(gr_json_ptr_get(
                            w.cert, "/status/categoryStatuses/0/failedNodesRef/name")),
                        "failed-nodes-abc");
    assert_non_null(w.plan.create);
    assert_string_equal(json_string_value(gr_json_ptr_get(w.plan.create, "/metadata/name")),
                        "c1-diagnostics-dcgm-level2");
    assert_cond(&w, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_WORKFLOW_CREATED,
                "Created Workflow for category diagnostics/dcgm-level2 (2 of 2)");
    finish_wf(&w, 1, true);
    w_step(&w, NOW + 3 * MIN);
    assert_string_equal(cat_status(&w, 1), "Succeeded");
    assert_cond(&w, GR_NVCRE_COND_FAILED, GR_NVCRE_REASON_WORKFLOW_FAILED,
                "One or more certification categories failed");
    json_t *ip = cond(&w, GR_NVCRE_COND_IN_PROGRESS);
    assert_string_equal(json_string_value(json_object_get(ip, "status")), "False");
    assert_string_equal(json_string_value(json_object_get(ip, "reason")), "NotApplicable");
    /* terminal: a further step changes nothing */
    w_step(&w, NOW + 4 * MIN);
    assert_false(w.plan.status_changed);
    assert_null(w.plan.create);
    w_free(&w);
}

static void test_all_succeed(void **state)
{
    (void)state;
    world w;
    w_init(&w, CERT, nodes("", "NVIDIA-L40S", 3));
    w_step(&w, NOW);
    finish_wf(&w, 0, true);
    w_step(&w, NOW + MIN);
    finish_wf(&w, 1, true);
    w_step(&w, NOW + 2 * MIN);
    assert_cond(&w, GR_NVCRE_COND_SUCCEEDED, GR_NVCRE_REASON_ALL_WORKFLOWS_SUCCEEDED,
                "All certification categories completed successfully");
    assert_true(has_event(&w, GR_NVCRE_REASON_ALL_WORKFLOWS_SUCCEEDED, NULL));
    assert_string_equal(json_string_value(gr_json_ptr_get(
                            w.cert, "/status/categoryStatuses/1/succeededNodesRef/name")),
                        "succeeded-nodes-abc");
    w_free(&w);
}

/* certification-unknown-category: fails at once, nothing is created. */
static void test_unknown_category(void **state)
{
    (void)state;
    world w;
    w_init(&w,
           "metadata: {name: c2, namespace: ns1, uid: u-2}\n"
           "spec:\n  target: {}\n  categories:\n"
           "  - {domain: diagnostics, variant: dcgm-level1}\n"
           "  - {domain: communication, variant: nccl-bogus}\n",
           nodes("", "NVIDIA-H100-80GB-HBM3", 1));
    w_step(&w, NOW);
    assert_null(w.plan.create);
    assert_cond(&w, GR_NVCRE_COND_FAILED, GR_NVCRE_REASON_CATEGORY_NOT_FOUND,
                "Unknown certification category: communication/nccl-bogus");
    assert_string_equal(cat_status(&w, 0), "Failed");
    w_free(&w);
}

/* CategoryOptions that cannot reach a workload fail the Certification
 * before anything is created (BuildFailed): a category's own option its
 * entry does not read, or a global option none of the categories reads. A
 * global option some category reads is fine for the others. */
static void test_unused_options_refused(void **state)
{
    (void)state;
    world w;
    /* per category: maxBytes on a DCGM category */
    w_init(&w,
           "metadata: {name: c3, namespace: ns1, uid: u-3}\n"
           "spec:\n  target: {}\n  categories:\n"
           "  - {domain: communication, variant: nccl-all-reduce}\n"
           "  - {domain: diagnostics, variant: dcgm-level1, options: {maxBytes: 8G}}\n",
           nodes("", "NVIDIA-H100-80GB-HBM3", 2));
    w_step(&w, NOW);
    assert_null(w.plan.create);
    assert_cond(&w, GR_NVCRE_COND_FAILED, GR_NVCRE_REASON_BUILD_FAILED,
                "options.maxBytes: diagnostics/dcgm-level1 cannot use it: it does not run the "
                "nccl-tests message-size sweep. Remove it from this category's options");
    assert_string_equal(cat_status(&w, 0), "Failed");
    assert_string_equal(cat_status(&w, 1), "Failed");
    assert_true(has_event(&w, GR_NVCRE_REASON_BUILD_FAILED, NULL));
    w_free(&w);
    /* global: a training option no category reads */
    w_init(&w,
           "metadata: {name: c3, namespace: ns1, uid: u-3}\n"
           "spec:\n  target: {}\n  maxSteps: 10\n  categories:\n"
           "  - {domain: communication, variant: nccl-all-reduce}\n",
           nodes("", "NVIDIA-H100-80GB-HBM3", 2));
    w_step(&w, NOW);
    assert_null(w.plan.create);
    assert_cond(&w, GR_NVCRE_COND_FAILED, GR_NVCRE_REASON_BUILD_FAILED,
                "spec.maxSteps: none of this Certification's categories can use it "
                "(communication/nccl-all-reduce: it configures training runs (checkpoints, steps, "
                "the source checkout), and this is a communication or diagnostics test). Remove "
                "it, or set it in the options of a category that uses it");
    w_free(&w);
    /* global thresholds: read by the NCCL category, not by DCGM: accepted
     * (scripts/demo certifies so) */
    w_init(&w,
           "metadata: {name: c3, namespace: ns1, uid: u-3}\n"
           "spec:\n  target: {}\n  thresholds: {busBandwidthGBps: \"value >= 300\"}\n"
           "  testScale: intra-node\n  categories:\n"
           "  - {domain: diagnostics, variant: dcgm-level1}\n"
           "  - {domain: communication, variant: nccl-all-reduce}\n",
           nodes("", "NVIDIA-H100-80GB-HBM3", 2));
    w_step(&w, NOW);
    assert_non_null(w.plan.create);
    w_free(&w);
    /* testScale diagnose on a single-node category alone */
    w_init(&w,
           "metadata: {name: c3, namespace: ns1, uid: u-3}\n"
           "spec:\n  target: {}\n  testScale: diagnose\n  categories:\n"
           "  - {domain: communication, variant: nccl-loopback}\n",
           nodes("", "NVIDIA-H100-80GB-HBM3", 2));
    w_step(&w, NOW);
    assert_null(w.plan.create);
    json_t *c = cond(&w, GR_NVCRE_COND_FAILED);
    assert_non_null(strstr(json_string_value(json_object_get(c, "message")),
                           "spec.testScale: none of this Certification's categories"));
    w_free(&w);
    /* the pure check agrees */
    json_t *spec = yaml("target: {}\nminGroupSize: 3\ntestScale: diagnose\ncategories:\n"
                        "- {domain: communication, variant: nccl-all-gather}\n");
    gr_err err;
    assert_int_equal(gr_nvcre_cert_check_options(cat, spec, &err), GR_OK);
    json_decref(spec);
    spec = yaml("target: {}\nminGroupSize: 3\ncategories:\n"
                "- {domain: communication, variant: nccl-all-gather}\n");
    assert_int_equal(gr_nvcre_cert_check_options(cat, spec, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "spec.minGroupSize:"));
    assert_non_null(strstr(err.msg, "applies only with testScale: diagnose"));
    json_decref(spec);
}

/* certification-workflow-collision-foreign: a Workflow of that name owned by
 * someone else fails the category; the next one still runs. */
static void test_name_collision(void **state)
{
    (void)state;
    world w;
    w_init(&w, CERT, nodes("", "NVIDIA-H100-80GB-HBM3", 2));
    json_array_append_new(w.wfs, yaml("metadata: {name: " WF1 ", "
                                      "ownerReferences: [{uid: other, kind: X, name: x, "
                                      "apiVersion: v1, controller: true}]}\n"));
    w_step(&w, NOW);
    assert_string_equal(cat_status(&w, 0), "Failed");
    assert_true(has_event(&w, GR_NVCRE_REASON_WORKFLOW_NAME_COLLISION,
                          "Workflow " WF1 " exists and is not controlled by Certification c1"));
    assert_non_null(w.plan.create);
    assert_string_equal(json_string_value(gr_json_ptr_get(w.plan.create, "/metadata/name")),
                        "c1-diagnostics-dcgm-level2");
    w_free(&w);
}

/* A Workflow this Certification controls already exists (status write lost
 * after the create): adopted, not created again. */
static void test_adopt_own_workflow(void **state)
{
    (void)state;
    world w;
    w_init(&w, CERT, nodes("", "NVIDIA-H100-80GB-HBM3", 2));
    json_array_append_new(w.wfs, yaml("metadata: {name: " WF1 ", "
                                      "ownerReferences: [{uid: u-1, kind: Certification, name: "
                                      "c1, apiVersion: nvcre.nvidia.com/v1alpha1, controller: "
                                      "true}]}\n"));
    w_step(&w, NOW);
    assert_null(w.plan.create);
    assert_string_equal(cat_status(&w, 0), "InProgress");
    assert_string_equal(
        json_string_value(gr_json_ptr_get(w.cert, "/status/categoryStatuses/0/workflowRef/name")),
        WF1);
    w_free(&w);
}

/* WaitingForNodes: retried for 5 minutes from the first wait, then the
 * category fails and the next gets its own window. Cordoned nodes do not
 * count. */
static void test_waiting_for_nodes(void **state)
{
    (void)state;
    world w;
    json_t *ns = nodes("", "NVIDIA-H100-80GB-HBM3", 1);
    json_object_set_new(json_object_get(json_array_get(ns, 0), "spec"), "unschedulable",
                        json_true());
    w_init(&w, CERT, ns);
    w_step(&w, NOW);
    assert_null(w.plan.create);
    assert_cond(&w, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_WAITING_FOR_NODES,
                "No schedulable nodes match nvidia.com/gpu.present=true; retrying for up to 5m0s "
                "more. Nodes that are cordoned or unschedulable do not count.");
    assert_int_equal(w.plan.requeue_after_ns, 15LL * 1000000000LL);
    w_step(&w, NOW + MIN + 15LL * 1000000000LL); /* still waiting: nothing to write */
    assert_false(w.plan.status_changed);
    assert_int_equal(w.plan.requeue_after_ns, 15LL * 1000000000LL);
    w_step(&w, NOW + 6 * MIN);
    assert_string_equal(cat_status(&w, 0), "Failed");
    assert_true(has_event(&w, GR_NVCRE_REASON_NODE_DISCOVERY_ERROR, NULL));
    /* the second category waits in a window of its own, from now */
    assert_cond(&w, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_WAITING_FOR_NODES,
                "No schedulable nodes match nvidia.com/gpu.present=true; retrying for up to 5m0s "
                "more. Nodes that are cordoned or unschedulable do not count.");
    w_step(&w, NOW + 10 * MIN); /* 4 minutes into the second window */
    assert_string_equal(cat_status(&w, 1), "Pending");
    w_step(&w, NOW + 11 * MIN + 1000000000LL); /* past it */
    assert_string_equal(cat_status(&w, 1), "Failed");
    assert_cond(&w, GR_NVCRE_COND_FAILED, GR_NVCRE_REASON_WORKFLOW_FAILED,
                "One or more certification categories failed");
    w_free(&w);
}

/* certification-gangscheduler-nccl: KAI default queue on runtime templates,
 * pods and the workload object. */
static void test_gang_kai_default(void **state)
{
    (void)state;
    world w;
    w_init(&w,
           "metadata: {name: c3, namespace: ns1, uid: u-3}\n"
           "spec:\n  target: {}\n  gangScheduler: {schedulerName: kai-scheduler}\n"
           "  categories: [{domain: communication, variant: nccl-all-reduce}]\n",
           nodes("", "NVIDIA-H100-80GB-HBM3", 2));
    w_step(&w, NOW);
    json_t *s = json_object_get(w.plan.create, "spec");
    const char *rj = "/dependencies/0/spec/template/spec/replicatedJobs/1/template";
    char p[256];
    snprintf(p, sizeof p, "%s/metadata/labels/kai.scheduler~1queue", rj);
    assert_string_equal(json_string_value(gr_json_ptr_get(s, p)), "default-queue");
    snprintf(p, sizeof p, "%s/spec/template/metadata/labels/kai.scheduler~1queue", rj);
    assert_string_equal(json_string_value(gr_json_ptr_get(s, p)), "default-queue");
    snprintf(p, sizeof p, "%s/spec/template/spec/schedulerName", rj);
    assert_string_equal(json_string_value(gr_json_ptr_get(s, p)), "kai-scheduler");
    assert_string_equal(json_string_value(gr_json_ptr_get(
                            s, "/jobTemplate/spec/workloadMetadata/labels/kai.scheduler~1queue")),
                        "default-queue");
    assert_string_equal(json_string_value(gr_json_ptr_get(s, "/gangScheduler/schedulerName")),
                        "kai-scheduler");
    w_free(&w);
}

/* certification-workload-labels-runai: Run:ai's queue key. */
static void test_gang_runai(void **state)
{
    (void)state;
    world w;
    w_init(&w,
           "metadata: {name: c4, namespace: ns1, uid: u-4}\n"
           "spec:\n  target: {}\n"
           "  gangScheduler: {schedulerName: runai-scheduler, queue: team-a, queueLabelKey: "
           "runai/queue}\n"
           "  categories: [{domain: diagnostics, variant: dcgm-level1}]\n",
           nodes("", "NVIDIA-H100-80GB-HBM3", 2));
    w_step(&w, NOW);
    json_t *s = json_object_get(w.plan.create, "spec");
    assert_string_equal(json_string_value(gr_json_ptr_get(
                            s, "/jobTemplate/spec/workloadMetadata/labels/runai~1queue")),
                        "team-a");
    assert_string_equal(
        json_string_value(gr_json_ptr_get(s, "/dependencies/0/spec/template/spec/replicatedJobs/"
                                             "0/template/spec/template/metadata/labels/"
                                             "runai~1queue")),
        "team-a");
    assert_null(gr_json_ptr_get(s, "/jobTemplate/spec/workloadMetadata/labels/"
                                   "kai.scheduler~1queue"));
    w_free(&w);
}

/* intra-node: nodesPerJob 1, annotation records the requested scale;
 * per-category options reach the workload (certification-image-override). */
static void test_intra_node_and_overrides(void **state)
{
    (void)state;
    world w;
    w_init(&w,
           "metadata: {name: c5, namespace: ns1, uid: u-5}\n"
           "spec:\n  target: {}\n  testScale: intra-node\n  image: mirror/g:1\n"
           "  categories:\n"
           "  - {domain: communication, variant: nccl-all-gather, options: {image: mirror/n:2, "
           "maxBytes: 4G}}\n",
           nodes("azure:///s/r/vm", "NVIDIA-H100-80GB-HBM3", 4));
    w_step(&w, NOW);
    json_t *wf = w.plan.create;
    assert_string_equal(
        json_string_value(json_object_get(gr_json_ptr_get(wf, "/metadata/annotations"),
                                          GR_NVCRE_ANN_REQUESTED_TEST_SCALE)),
        "intra-node");
    json_t *tr = gr_json_ptr_get(wf, "/spec/jobTemplate/spec/workload/trainJob/trainer");
    assert_int_equal(json_integer_value(json_object_get(tr, "numNodes")), 1);
    assert_string_equal(json_string_value(json_object_get(tr, "image")), "mirror/n:2");
    /* Azure: IB env */
    assert_string_equal(json_string_value(gr_json_ptr_get(tr, "/env/1/name")),
                        "NCCL_IB_PCI_RELAXED_ORDERING");
    w_free(&w);
}

/* Architecture by majority; no product anywhere → BuildFailed. */
static void test_arch_detection(void **state)
{
    (void)state;
    world w;
    json_t *ns = nodes("ocid1.instance.oc1..x", "NVIDIA-L40S", 2);
    json_t *gb = nodes("ocid1.instance.oc1..y", "NVIDIA-GB200-NVL72", 1);
    json_array_extend(ns, gb);
    json_decref(gb);
    w_init(&w, CERT, ns);
    w_step(&w, NOW);
    /* OCI L40S: 4 GPUs, 2 NICs */
    assert_int_equal(json_integer_value(gr_json_ptr_get(
                         w.plan.create, "/spec/dependencies/0/spec/mlPolicy/mpi/numProcPerNode")),
                     4);
    w_free(&w);

    json_t *bare = json_pack("[{s:{s:s,s:{s:s}},s:{}}]", "metadata", "name", "n0", "labels",
                             "nvidia.com/gpu.present", "true", "spec");
    w_init(&w, CERT, bare);
    w_step(&w, NOW);
    assert_true(has_event(&w, GR_NVCRE_REASON_BUILD_FAILED, GR_NVCRE_MSG_CERT_NO_ARCH));
    assert_string_equal(cat_status(&w, 0), "Failed");
    w_free(&w);
}

static void test_workflow_name(void **state)
{
    (void)state;
    char n[32];
    gr_nvcre_cert_workflow_name("c1", "diagnostics", "dcgm-level1", NULL, NULL, n);
    assert_string_equal(n, "c1-diagnostics-dcgm-level1");
    gr_nvcre_cert_workflow_name("nightly", "communication", "nccl-loopback-nvswitch", NULL, NULL,
                                n);
    assert_int_equal(strlen(n), 31);
    assert_memory_equal(n, "nightly-communication-ncc-", 26);
    json_t *o = yaml("{nodesPerJob: 4, enableMNNVL: false}");
    char m[32];
    gr_nvcre_cert_workflow_name("c1", "d", "v", NULL, o, m);
    assert_string_equal(m, "c1-d-v-n4-nomnnvl");
    json_decref(o);
    /* a Workflow gone while its category ran fails the category */
    world w;
    w_init(&w, CERT, nodes("", "NVIDIA-H100-80GB-HBM3", 2));
    w_step(&w, NOW);
    json_array_clear(w.wfs);
    w_step(&w, NOW + MIN);
    assert_string_equal(cat_status(&w, 0), "Failed");
    assert_non_null(w.plan.create);
    w_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sequential_create),
        cmocka_unit_test(test_sequential_progress_fail_continue),
        cmocka_unit_test(test_all_succeed),
        cmocka_unit_test(test_unknown_category),
        cmocka_unit_test(test_unused_options_refused),
        cmocka_unit_test(test_name_collision),
        cmocka_unit_test(test_adopt_own_workflow),
        cmocka_unit_test(test_waiting_for_nodes),
        cmocka_unit_test(test_gang_kai_default),
        cmocka_unit_test(test_gang_runai),
        cmocka_unit_test(test_intra_node_and_overrides),
        cmocka_unit_test(test_arch_detection),
        cmocka_unit_test(test_workflow_name),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
