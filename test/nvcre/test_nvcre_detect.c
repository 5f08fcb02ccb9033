/*
 * gr_nvcre_detect: node-allocatable auto-detection (GPU count, NIC
 * resource, under-capacity nodes, unknown-architecture fallback), alone and
 * through the Certification step (fixture families of fact sheet §5.3:
 * *-nccl-autodetect, *-ambiguous, rtxpro6000 *-require-explicit-count,
 * *-under-capacity, unknown-arch-fallback-event). No checklist ID covers
 * Certification (shared/spec/checklist.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "gr_kube_object.h"
#include "gr_nvcre_cert.h"
#include "gr_nvcre_detect.h"
#include "gr_nvcre_types.h"
#include "gr_yaml.h"
#include "nvcre_test_fixture.h"

#define MIN (60LL * 1000000000LL)

/* A Node; alloc is a YAML flow map for status.allocatable or NULL. */
static json_t *node(const char *name, const char *provider, const char *product, const char *alloc)
{
    json_t *n =
        json_pack("{s:{s:s,s:{s:s,s:s}},s:{}}", "metadata", "name", name, "labels",
                  "nvidia.com/gpu.present", "true", "nvidia.com/gpu.product", product, "spec");
    if (provider)
        json_object_set_new(json_object_get(n, "spec"), "providerID", json_string(provider));
    if (alloc)
        json_object_set_new(n, "status", json_pack("{s:o}", "allocatable", yaml(alloc)));
    return n;
}

static const char *event_msg(const json_t *events, const char *reason)
{
    size_t i;
    json_t *e;
    json_array_foreach(
        events, i, e) if (!strcmp(json_string_value(json_object_get(e, "reason")),
                                  reason)) return json_string_value(json_object_get(e, "message"));
    return NULL;
}

static void test_quantity(void **state)
{
    (void)state;
    json_t *v;
    assert_int_equal(gr_nvcre_detect_quantity(v = json_string("8")), 8);
    json_decref(v);
    assert_int_equal(gr_nvcre_detect_quantity(v = json_integer(4)), 4);
    json_decref(v);
    assert_int_equal(gr_nvcre_detect_quantity(v = json_string("1k")), 1000);
    json_decref(v);
    assert_int_equal(gr_nvcre_detect_quantity(v = json_string("500m")), -1);
    json_decref(v);
    assert_int_equal(gr_nvcre_detect_quantity(v = json_string("1.5")), -1);
    json_decref(v);
    assert_int_equal(gr_nvcre_detect_quantity(v = json_string("")), -1);
    json_decref(v);
    assert_int_equal(gr_nvcre_detect_quantity(v = json_string("99999999999999999999G")),
                     1000000000L);
    json_decref(v);
    assert_int_equal(gr_nvcre_detect_quantity(v = json_integer(-3)), -1);
    json_decref(v);
    assert_int_equal(gr_nvcre_detect_quantity(NULL), -1);
    assert_true(gr_nvcre_detect_is_nic_resource("nvidia.com/mlnxnics"));
    assert_true(gr_nvcre_detect_is_nic_resource("rdma/ib"));
    assert_true(gr_nvcre_detect_is_nic_resource("vpc.amazonaws.com/efa"));
    assert_true(gr_nvcre_detect_is_nic_resource("nvidia.com/sriov_rdma_vf"));
    assert_false(gr_nvcre_detect_is_nic_resource("rdma/"));
    assert_false(gr_nvcre_detect_is_nic_resource("nvidia.com/gpu"));
    assert_false(gr_nvcre_detect_is_nic_resource(NULL));
}

typedef struct {
    json_t *nodes, *global, *popts;
    gr_nvcre_detect_req req;
    gr_nvcre_detect_result res;
} dctx;

static void d_init(dctx *d, const char *global_yaml, const char *popts_yaml, const char *arch)
{
    memset(d, 0, sizeof *d);
    d->nodes = json_array();
    d->global = yaml(global_yaml);
    d->popts = yaml(popts_yaml);
    d->req = (gr_nvcre_detect_req){
        d->nodes, arch, "NVIDIA-H100-80GB-HBM3", d->global, NULL, d->popts, true, false, true};
}

static void d_run(dctx *d)
{
    gr_err err;
    if (gr_nvcre_detect(&d->req, &d->res, &err) != GR_OK)
        fail_msg("detect: %s", err.msg);
}

static void d_free(dctx *d)
{
    gr_nvcre_detect_result_free(&d->res);
    json_decref(d->nodes);
    json_decref(d->global);
    json_decref(d->popts);
}

#define ONPREM_H100 "{gpusPerNode: 8, mlnxPerNode: 8, nicResourceName: rdma/rdma_shared_device_a}"

/* Nodes that report no allocatable: nothing detected, every node kept. */
static void test_no_allocatable_changes_nothing(void **state)
{
    (void)state;
    dctx d;
    d_init(&d, "{}", ONPREM_H100, "h100");
    json_array_append_new(d.nodes, node("n0", NULL, "NVIDIA-H100-80GB-HBM3", NULL));
    json_array_append_new(d.nodes, node("n1", NULL, "NVIDIA-H100-80GB-HBM3", NULL));
    d_run(&d);
    assert_int_equal(json_object_size(d.res.options), 0);
    assert_int_equal(json_array_size(d.res.keep), 2);
    assert_int_equal(d.res.dropped, 0);
    assert_int_equal(json_array_size(d.res.events), 0);
    assert_int_equal(d.res.gpus_per_node, 8);
    assert_string_equal(d.res.nic, "rdma/rdma_shared_device_a");
    assert_string_equal(d.res.fail, "");
    d_free(&d);
}

/* Majority GPU count with a Warning naming the outlier; the node below it
 * is dropped (under capacity), the one above is kept. */
static void test_gpu_majority_outliers_dropped(void **state)
{
    (void)state;
    dctx d;
    d_init(&d, "{}", "{gpusPerNode: 4, mlnxPerNode: 0, nicResourceName: \"\"}", "h100");
    json_array_append_new(d.nodes, node("n1", NULL, "p", "{nvidia.com/gpu: \"8\"}"));
    json_array_append_new(d.nodes, node("n0", NULL, "p", "{nvidia.com/gpu: \"8\"}"));
    json_array_append_new(d.nodes, node("n2", NULL, "p", "{nvidia.com/gpu: \"7\"}"));
    json_array_append_new(d.nodes, node("n3", NULL, "p", "{nvidia.com/gpu: \"16\"}"));
    json_array_append_new(d.nodes, node("n4", NULL, "p", NULL)); /* tells nothing: kept */
    d_run(&d);
    assert_int_equal(d.res.gpus_per_node, 8);
    assert_int_equal(json_integer_value(json_object_get(d.res.options, "gpusPerNode")), 8);
    assert_string_equal(event_msg(d.res.events, GR_NVCRE_REASON_GPU_COUNT_MISMATCH),
                        "Target nodes disagree on allocatable nvidia.com/gpu: 8 on 2 of 4 "
                        "node(s); using 8. Others: n2 has 7, n3 has 16");
    assert_non_null(event_msg(d.res.events, GR_NVCRE_REASON_GPU_COUNT_DETECTED));
    assert_int_equal(d.res.dropped, 1);
    assert_string_equal(event_msg(d.res.events, GR_NVCRE_REASON_INSUFFICIENT_CAPACITY),
                        "Dropped 1 node(s) that cannot fit 8 nvidia.com/gpu per pod: n2 has 7 "
                        "nvidia.com/gpu");
    assert_int_equal(json_array_size(d.res.keep), 4); /* sorted */
    assert_string_equal(json_string_value(json_array_get(d.res.keep, 0)), "n0");
    assert_string_equal(json_string_value(json_array_get(d.res.keep, 2)), "n3");
    d_free(&d);
}

/* The user's gpusPerNode is never replaced; it decides capacity. */
static void test_user_gpus_per_node_wins(void **state)
{
    (void)state;
    dctx d;
    d_init(&d, "{gpusPerNode: 4}", "{gpusPerNode: 8, mlnxPerNode: 0, nicResourceName: \"\"}",
           "h100");
    json_array_append_new(d.nodes, node("n0", NULL, "p", "{nvidia.com/gpu: \"2\"}"));
    json_array_append_new(d.nodes, node("n1", NULL, "p", "{nvidia.com/gpu: \"8\"}"));
    d_run(&d);
    assert_null(json_object_get(d.res.options, "gpusPerNode"));
    assert_int_equal(d.res.gpus_per_node, 4);
    assert_int_equal(d.res.dropped, 1);
    assert_string_equal(json_string_value(json_array_get(d.res.keep, 0)), "n1");
    assert_null(event_msg(d.res.events, GR_NVCRE_REASON_GPU_COUNT_DETECTED));
    d_free(&d);
}

/* certification-gcp-rtxpro6000-four-gpus-require-explicit-count and
 * -default-eight-gpus. */
static void test_rtxpro6000_explicit_count(void **state)
{
    (void)state;
    assert_true(gr_nvcre_catalog_explicit_gpu_count(cat, "rtxpro6000"));
    assert_false(gr_nvcre_catalog_explicit_gpu_count(cat, "h100"));
    dctx d;
    d_init(&d, "{}", "{gpusPerNode: 8, mlnxPerNode: 0, nicResourceName: \"\"}", "rtxpro6000");
    d.req.explicit_count = true;
    json_array_append_new(d.nodes, node("n0", NULL, "p", "{nvidia.com/gpu: \"4\"}"));
    d_run(&d);
    assert_string_equal(
        d.res.fail,
        "options.gpusPerNode: the target nodes have 4 allocatable nvidia.com/gpu but rtxpro6000 "
        "servers come in several sizes and the catalog default is 8, so the count is not "
        "guessed. Set options.gpusPerNode (in this category's options or globally) to the "
        "number of GPUs each test pod should use");
    gr_nvcre_detect_result_free(&d.res);
    /* eight: the default fits */
    json_array_clear(d.nodes);
    json_array_append_new(d.nodes, node("n0", NULL, "p", "{nvidia.com/gpu: \"8\"}"));
    d_run(&d);
    assert_string_equal(d.res.fail, "");
    assert_int_equal(d.res.gpus_per_node, 8);
    gr_nvcre_detect_result_free(&d.res);
    /* four, confirmed by the user */
    json_object_set_new(d.global, "gpusPerNode", json_integer(4));
    json_array_clear(d.nodes);
    json_array_append_new(d.nodes, node("n0", NULL, "p", "{nvidia.com/gpu: \"4\"}"));
    d_run(&d);
    assert_string_equal(d.res.fail, "");
    assert_int_equal(d.res.gpus_per_node, 4);
    assert_int_equal(d.res.dropped, 0);
    d_free(&d);
}

/* certification-onprem-*-nccl-autodetect: one known NIC resource. */
static void test_nic_autodetect(void **state)
{
    (void)state;
    dctx d;
    d_init(&d, "{}", ONPREM_H100, "h100");
    json_array_append_new(
        d.nodes, node("n0", NULL, "p", "{nvidia.com/gpu: \"8\", nvidia.com/mlnxnics: \"4\"}"));
    json_array_append_new(
        d.nodes, node("n1", NULL, "p", "{nvidia.com/gpu: \"8\", nvidia.com/mlnxnics: \"4\"}"));
    d_run(&d);
    assert_string_equal(json_string_value(json_object_get(d.res.options, "nicResourceName")),
                        "nvidia.com/mlnxnics");
    assert_int_equal(json_integer_value(json_object_get(d.res.options, "mlnxPerNode")), 4);
    assert_string_equal(event_msg(d.res.events, GR_NVCRE_REASON_NIC_DETECTED),
                        "Requesting 4 nvidia.com/mlnxnics per node, detected in the target "
                        "nodes' allocatable (the platform default rdma/rdma_shared_device_a is "
                        "not offered); set options.nicResourceName to choose another");
    assert_int_equal(d.res.dropped, 0);
    gr_nvcre_detect_result_free(&d.res);
    /* the user's mlnxPerNode stays; a node short of it is dropped */
    json_object_set_new(d.global, "mlnxPerNode", json_integer(2));
    json_array_append_new(
        d.nodes, node("n2", NULL, "p", "{nvidia.com/gpu: \"8\", nvidia.com/mlnxnics: \"1\"}"));
    json_array_append_new(d.nodes, node("n3", NULL, "p", "{nvidia.com/gpu: \"8\"}"));
    d_run(&d);
    assert_null(json_object_get(d.res.options, "mlnxPerNode"));
    assert_int_equal(d.res.mlnx_per_node, 2);
    assert_int_equal(d.res.dropped, 2);
    assert_string_equal(event_msg(d.res.events, GR_NVCRE_REASON_INSUFFICIENT_CAPACITY),
                        "Dropped 2 node(s) that cannot fit 8 nvidia.com/gpu and 2 "
                        "nvidia.com/mlnxnics per pod: n2 has 1 nvidia.com/mlnxnics, n3 has 0 "
                        "nvidia.com/mlnxnics");
    d_free(&d);
}

/* certification-onprem-*-nccl-ambiguous: several candidates → Warning, no
 * NIC request; none → Warning, no NIC request; the default present or the
 * user's name → no detection. */
static void test_nic_ambiguous_none_default(void **state)
{
    (void)state;
    dctx d;
    d_init(&d, "{}", ONPREM_H100, "h100");
    json_array_append_new(
        d.nodes, node("n0", NULL, "p", "{nvidia.com/gpu: \"8\", nvidia.com/mlnxnics: \"8\"}"));
    json_array_append_new(d.nodes,
                          node("n1", NULL, "p", "{nvidia.com/gpu: \"8\", rdma/ib: \"1k\"}"));
    d_run(&d);
    assert_string_equal(json_string_value(json_object_get(d.res.options, "nicResourceName")), "");
    assert_int_equal(json_integer_value(json_object_get(d.res.options, "mlnxPerNode")), 0);
    assert_string_equal(d.res.nic, "");
    assert_string_equal(event_msg(d.res.events, GR_NVCRE_REASON_NIC_AMBIGUOUS),
                        "Target nodes offer several NIC resources (nvidia.com/mlnxnics, rdma/ib) "
                        "and none is the platform default rdma/rdma_shared_device_a; the workload "
                        "requests no NIC. Set options.nicResourceName (and options.mlnxPerNode) "
                        "to choose one");
    assert_int_equal(d.res.dropped, 0);
    gr_nvcre_detect_result_free(&d.res);
    /* none */
    json_array_clear(d.nodes);
    json_array_append_new(d.nodes, node("n0", NULL, "p", "{nvidia.com/gpu: \"8\"}"));
    d_run(&d);
    assert_non_null(event_msg(d.res.events, GR_NVCRE_REASON_NIC_NOT_DETECTED));
    assert_string_equal(d.res.nic, "");
    assert_int_equal(d.res.dropped, 0);
    gr_nvcre_detect_result_free(&d.res);
    /* the platform default is offered */
    json_array_clear(d.nodes);
    json_array_append_new(d.nodes, node("n0", NULL, "p",
                                        "{nvidia.com/gpu: \"8\", rdma/rdma_shared_device_a: "
                                        "\"63\", nvidia.com/mlnxnics: \"8\"}"));
    d_run(&d);
    assert_null(json_object_get(d.res.options, "nicResourceName"));
    assert_null(event_msg(d.res.events, GR_NVCRE_REASON_NIC_DETECTED));
    assert_string_equal(d.res.nic, "rdma/rdma_shared_device_a");
    gr_nvcre_detect_result_free(&d.res);
    /* the user named one */
    json_object_set_new(d.global, "nicResourceName", json_string("rdma/ib"));
    json_array_clear(d.nodes);
    json_array_append_new(
        d.nodes, node("n0", NULL, "p", "{nvidia.com/gpu: \"8\", nvidia.com/mlnxnics: \"8\"}"));
    d_run(&d);
    assert_null(json_object_get(d.res.options, "nicResourceName"));
    /* GPUCountDetected and the drop; no NIC event */
    assert_int_equal(json_array_size(d.res.events), 2);
    assert_non_null(event_msg(d.res.events, GR_NVCRE_REASON_INSUFFICIENT_CAPACITY));
    assert_string_equal(d.res.nic, "rdma/ib");
    assert_int_equal(d.res.dropped, 1); /* no rdma/ib on n0 */
    d_free(&d);
}

/* certification-unknown-arch-fallback-event. */
static void test_unknown_arch_warning(void **state)
{
    (void)state;
    assert_false(gr_nvcre_catalog_arch_known(cat, "zz9"));
    assert_true(gr_nvcre_catalog_arch_known(cat, "h100"));
    dctx d;
    d_init(&d, "{}", "{gpusPerNode: 4, mlnxPerNode: 0, nicResourceName: \"\"}", "zz9");
    d.req.arch_known = false;
    d.req.product = "NVIDIA-ZZ9-PROTO";
    json_array_append_new(d.nodes, node("n0", NULL, "NVIDIA-ZZ9-PROTO", NULL));
    d_run(&d);
    assert_string_equal(event_msg(d.res.events, GR_NVCRE_REASON_UNKNOWN_ARCHITECTURE),
                        "GPU product NVIDIA-ZZ9-PROTO maps to no known architecture (zz9); using "
                        "the fallback defaults gpusPerNode=4 mlnxPerNode=0. Set "
                        "options.gpusPerNode and options.mlnxPerNode if they do not fit the nodes");
    d_free(&d);
}

/* ---- through the Certification step */

static const char *CERT1 = "apiVersion: nvcre.nvidia.com/v1alpha1\n"
                           "kind: Certification\n"
                           "metadata: {name: c1, namespace: ns1, uid: u-1, generation: 1}\n"
                           "spec:\n"
                           "  target: {nodeSelector: {nvidia.com/gpu.present: \"true\"}}\n"
                           "  categories:\n"
                           "  - {domain: communication, variant: nccl-all-reduce}\n";

static gr_nvcre_cert_plan step(json_t *cert, json_t *nodes, json_t *wfs, int64_t now)
{
    gr_nvcre_cert_plan p;
    gr_nvcre_cert_input in = {cert, nodes, wfs, cat, now};
    gr_err err;
    if (gr_nvcre_cert_step(&in, &p, &err) != GR_OK)
        fail_msg("step: %s", err.msg);
    json_object_set(cert, "status", p.status);
    return p;
}

/* The largest value of key anywhere in v (resource limits). */
static long max_key(const json_t *v, const char *key)
{
    long best = -1;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)(uintptr_t)v, k, x)
        {
            long m = !strcmp(k, key) ? gr_nvcre_detect_quantity(x) : max_key(x, key);
            if (m > best)
                best = m;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            long m = max_key(x, key);
            if (m > best)
                best = m;
        }
    }
    return best;
}

static size_t event_index(const json_t *events, const char *reason)
{
    size_t i;
    json_t *e;
    json_array_foreach(events, i, e) if (!strcmp(json_string_value(json_object_get(e, "reason")),
                                                 reason)) return i;
    return (size_t)-1;
}

/* On-prem H100 with nvidia.com/mlnxnics: the Workflow requests it, the
 * 4-GPU node is left out through target.nodeNames, events precede
 * WorkflowCreated. */
static void test_step_autodetect_and_drop(void **state)
{
    (void)state;
    json_t *cert = yaml(CERT1), *wfs = json_array(), *nodes = json_array();
    const char *a8 = "{nvidia.com/gpu: \"8\", nvidia.com/mlnxnics: \"8\"}";
    json_array_append_new(nodes, node("n0", "openstack:///n0", "NVIDIA-H100-80GB-HBM3", a8));
    json_array_append_new(nodes, node("n1", "openstack:///n1", "NVIDIA-H100-80GB-HBM3", a8));
    json_array_append_new(nodes, node("n2", "openstack:///n2", "NVIDIA-H100-80GB-HBM3",
                                      "{nvidia.com/gpu: \"4\", nvidia.com/mlnxnics: \"8\"}"));
    gr_nvcre_cert_plan p = step(cert, nodes, wfs, NOW);
    assert_non_null(p.create);
    const json_t *spec = json_object_get(p.create, "spec");
    assert_int_equal(max_key(spec, "nvidia.com/mlnxnics"), 8);
    assert_int_equal(max_key(spec, "nvidia.com/gpu"), 8);
    assert_int_equal(max_key(spec, "rdma/rdma_shared_device_a"), -1);
    const json_t *names = json_object_get(
        json_object_get(json_object_get(spec, "orchestration"), "target"), "nodeNames");
    assert_int_equal(json_array_size(names), 2);
    assert_string_equal(json_string_value(json_array_get(names, 1)), "n1");
    size_t nic = event_index(p.events, GR_NVCRE_REASON_NIC_DETECTED);
    size_t drop = event_index(p.events, GR_NVCRE_REASON_INSUFFICIENT_CAPACITY);
    size_t created = event_index(p.events, GR_NVCRE_REASON_WORKFLOW_CREATED);
    assert_true(nic < drop && drop < created && created != (size_t)-1);
    /* the user's spec is untouched */
    assert_null(json_object_get(json_object_get(cert, "spec"), "nicResourceName"));
    gr_nvcre_cert_plan_free(&p);
    json_decref(cert);
    json_decref(wfs);
    json_decref(nodes);
}

/* certification-gcp-h100-nccl-gke-networks-under-capacity: every node is
 * under capacity → WaitingForNodes (events once), then the category fails. */
static void test_step_all_under_capacity_waits(void **state)
{
    (void)state;
    json_t *cert = yaml(CERT1), *wfs = json_array(), *nodes = json_array();
    json_object_set_new(json_object_get(cert, "spec"), "gpusPerNode", json_integer(8));
    json_array_append_new(
        nodes, node("n0", "gce://p/z/n0", "NVIDIA-H100-80GB-HBM3", "{nvidia.com/gpu: \"4\"}"));
    gr_nvcre_cert_plan p = step(cert, nodes, wfs, NOW);
    assert_null(p.create);
    json_t *ip = gr_kube_condition_find(
        json_object_get(json_object_get(cert, "status"), "conditions"), "InProgress");
    assert_string_equal(json_string_value(json_object_get(ip, "reason")), "WaitingForNodes");
    assert_string_equal(json_string_value(json_object_get(ip, "message")),
                        "No schedulable node matching nvidia.com/gpu.present=true has 8 "
                        "nvidia.com/gpu allocatable; retrying for up to 5m0s more. Set "
                        "options.gpusPerNode (or options.mlnxPerNode) to what the nodes offer, "
                        "or add nodes");
    assert_true(event_index(p.events, GR_NVCRE_REASON_INSUFFICIENT_CAPACITY) != (size_t)-1);
    assert_int_equal(p.requeue_after_ns, GR_NVCRE_CERT_REQUEUE_NS);
    gr_nvcre_cert_plan_free(&p);
    /* a requeue inside the window: no new events, no status change */
    p = step(cert, nodes, wfs, NOW + MIN);
    assert_int_equal(json_array_size(p.events), 0);
    assert_false(p.status_changed);
    gr_nvcre_cert_plan_free(&p);
    /* the window is over: the category fails, then the Certification */
    p = step(cert, nodes, wfs, NOW + 6 * MIN);
    assert_non_null(event_msg(p.events, GR_NVCRE_REASON_NODE_DISCOVERY_ERROR));
    gr_nvcre_cert_plan_free(&p);
    p = step(cert, nodes, wfs, NOW + 6 * MIN);
    json_t *f = gr_kube_condition_find(
        json_object_get(json_object_get(cert, "status"), "conditions"), "Failed");
    assert_string_equal(json_string_value(json_object_get(f, "status")), "True");
    gr_nvcre_cert_plan_free(&p);
    json_decref(cert);
    json_decref(wfs);
    json_decref(nodes);
}

/* rtxpro6000 with 4 GPUs and no gpusPerNode: the category fails with
 * BuildFailed naming options.gpusPerNode; no Workflow. */
static void test_step_rtxpro6000_requires_count(void **state)
{
    (void)state;
    json_t *cert = yaml(CERT1), *wfs = json_array(), *nodes = json_array();
    json_array_append_new(nodes,
                          node("n0", "gce://p/z/n0", "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition",
                               "{nvidia.com/gpu: \"4\"}"));
    gr_nvcre_cert_plan p = step(cert, nodes, wfs, NOW);
    assert_null(p.create);
    const char *m = event_msg(p.events, GR_NVCRE_REASON_BUILD_FAILED);
    assert_non_null(m);
    assert_non_null(strstr(m, "Set options.gpusPerNode"));
    gr_nvcre_cert_plan_free(&p);
    json_decref(cert);
    json_decref(wfs);
    json_decref(nodes);
}

/* A DCGM diagnostic requests no NIC: no NIC detection, no NIC capacity. */
static void test_step_diagnostics_no_nic(void **state)
{
    (void)state;
    json_t *cert = yaml("apiVersion: nvcre.nvidia.com/v1alpha1\n"
                        "kind: Certification\n"
                        "metadata: {name: c1, namespace: ns1, uid: u-1, generation: 1}\n"
                        "spec:\n"
                        "  categories: [{domain: diagnostics, variant: dcgm-level1}]\n");
    json_t *wfs = json_array(), *nodes = json_array();
    json_array_append_new(nodes, node("n0", "openstack:///n0", "NVIDIA-H100-80GB-HBM3",
                                      "{nvidia.com/gpu: \"8\", nvidia.com/mlnxnics: \"8\"}"));
    gr_nvcre_cert_plan p = step(cert, nodes, wfs, NOW);
    assert_non_null(p.create);
    assert_null(event_msg(p.events, GR_NVCRE_REASON_NIC_DETECTED));
    assert_null(event_msg(p.events, GR_NVCRE_REASON_NIC_NOT_DETECTED));
    assert_null(event_msg(p.events, GR_NVCRE_REASON_INSUFFICIENT_CAPACITY));
    assert_int_equal(max_key(json_object_get(p.create, "spec"), "nvidia.com/mlnxnics"), -1);
    gr_nvcre_cert_plan_free(&p);
    json_decref(cert);
    json_decref(wfs);
    json_decref(nodes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantity),
        cmocka_unit_test(test_no_allocatable_changes_nothing),
        cmocka_unit_test(test_gpu_majority_outliers_dropped),
        cmocka_unit_test(test_user_gpus_per_node_wins),
        cmocka_unit_test(test_rtxpro6000_explicit_count),
        cmocka_unit_test(test_nic_autodetect),
        cmocka_unit_test(test_nic_ambiguous_none_default),
        cmocka_unit_test(test_unknown_arch_warning),
        cmocka_unit_test(test_step_autodetect_and_drop),
        cmocka_unit_test(test_step_all_under_capacity_waits),
        cmocka_unit_test(test_step_rtxpro6000_requires_count),
        cmocka_unit_test(test_step_diagnostics_no_nic),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
