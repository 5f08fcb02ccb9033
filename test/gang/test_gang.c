/*
 * test_gang.c — unit tests of the pure gang logic (src/gang/gr_gang.h):
 * gang ids (ConfigMap naming is gr_preflight's, with the fact sheet's worked
 * examples in test/preflight/test_admission.c), peer parsing (IPv6, 3- and
 * 4-field lines), rank assignment, discovery specs, anchors, minCount (native
 * and CEL), the pod-cache transform, ConfigMap building/updating and
 * PreflightConfig precedence. Checklist IDs are named at the assertions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gr_gang.h"
#include "gr_json.h"
#include "gr_kube_rest.h"
#include "gr_preflight.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    if (!v)
        fail_msg("bad test JSON: %s: %s", e.text, text);
    return v;
}

/* PF-109, PF-151: gang id = discoverer-namespace-group. */
static void test_gang_id(void **state)
{
    (void)state;
    char *id = gr_preflight_gang_id("osmo-with-kai", "team-a", "myjob", NULL);
    assert_string_equal(id, "osmo-with-kai-team-a-myjob");
    free(id);
    id = gr_preflight_gang_id("kubernetes", "ns", "wl", "workers");
    assert_string_equal(id, "kubernetes-ns-wl-workers");
    free(id);
}

/* PF-148: peers lines, IPv6, 3- and 4-field forms. */
static void test_peers_parse(void **state)
{
    (void)state;
    gr_gang_peers p;
    gr_err err;
    assert_int_equal(gr_gang_peers_parse("  pod-a;10.0.0.1;0\n\n"
                                         "pod-b;fd00::1:2;1;preflight-nccl-allreduce,x\n"
                                         "pod-c;2001:db8::7;2 \n",
                                         &p, &err),
                     GR_OK);
    assert_int_equal(p.n, 3);
    assert_string_equal(p.v[0].name, "pod-a");
    assert_string_equal(p.v[0].ip, "10.0.0.1");
    assert_int_equal(p.v[0].rank, 0);
    assert_string_equal(p.v[0].checks, "");
    assert_string_equal(p.v[1].ip, "fd00::1:2");
    assert_string_equal(p.v[1].checks, "preflight-nccl-allreduce,x");
    assert_string_equal(p.v[2].ip, "2001:db8::7");
    assert_int_equal(p.v[2].rank, 2);
    gr_gang_peers_free(&p);

    /* the 4th field keeps further semicolons */
    assert_int_equal(gr_gang_peers_parse("a;1.2.3.4;0;c1;c2", &p, &err), GR_OK);
    assert_string_equal(p.v[0].checks, "c1;c2");
    gr_gang_peers_free(&p);

    /* two fields: rank unknown */
    assert_int_equal(gr_gang_peers_parse("a;1.2.3.4", &p, &err), GR_OK);
    assert_int_equal(p.v[0].rank, -1);
    gr_gang_peers_free(&p);

    assert_int_equal(gr_gang_peers_parse("", &p, &err), GR_OK);
    assert_int_equal(p.n, 0);
    assert_int_equal(gr_gang_peers_parse("a;1.1.1.1;0\nlonely", &p, &err), GR_EPARSE);
    assert_non_null(strstr(err.msg, "peers line 2"));
    assert_int_equal(gr_gang_peers_parse("a;1.1.1.1;zero", &p, &err), GR_EPARSE);
    assert_non_null(strstr(err.msg, "rank \"zero\""));
    assert_int_equal(gr_gang_peers_parse(";1.1.1.1;0", &p, &err), GR_EPARSE);
}

/* PF-145, PF-149: deterministic ranks, rank 0 = smallest name. */
static void test_ranks_and_format(void **state)
{
    (void)state;
    gr_gang_peers p = {0};
    assert_int_equal(gr_gang_peers_add(&p, "w-2", "10.0.0.3", ""), GR_OK);
    assert_int_equal(gr_gang_peers_add(&p, "w-10", "fd00::a", "c"), GR_OK);
    assert_int_equal(gr_gang_peers_add(&p, "w-1", "10.0.0.1", ""), GR_OK);
    gr_gang_peers_assign_ranks(&p);
    gr_buf b = GR_BUF_INIT((size_t)64 << 20);
    assert_int_equal(gr_gang_peers_format(&p, &b), GR_OK);
    assert_string_equal(gr_buf_cstr(&b), "w-1;10.0.0.1;0\nw-10;fd00::a;1;c\nw-2;10.0.0.3;2");
    /* round trip */
    gr_gang_peers q;
    assert_int_equal(gr_gang_peers_parse(gr_buf_cstr(&b), &q, NULL), GR_OK);
    assert_int_equal(q.n, 3);
    assert_string_equal(q.v[1].name, "w-10");
    assert_int_equal(q.v[1].rank, 1);
    gr_gang_peers_free(&q);
    gr_buf_free(&b);
    gr_gang_peers_free(&p);
}

/* PF-9, PF-95..PF-100, PF-121: spec classification and defaults. */
static void test_spec_parse(void **state)
{
    (void)state;
    gr_gang_spec s;
    gr_err err;
    json_t *j = J("{}");
    assert_int_equal(gr_gang_spec_parse(j, &s, &err), GR_OK);
    assert_true(s.native); /* PF-9 / PF-121 */
    gr_gang_spec_free(&s);
    json_decref(j);
    assert_int_equal(gr_gang_spec_parse(NULL, &s, &err), GR_OK);
    assert_true(s.native);
    gr_gang_spec_free(&s);

    j = J("{\"name\":\"volcano\",\"annotationKeys\":[\"scheduling.k8s.io/group-name\"],"
          "\"podGroupGVR\":{\"group\":\"scheduling.volcano.sh\",\"version\":\"v1beta1\","
          "\"resource\":\"podgroups\"}}");
    assert_int_equal(gr_gang_spec_parse(j, &s, &err), GR_OK);
    assert_false(s.native);
    assert_string_equal(s.min_count_expr, "podGroup.spec.minMember"); /* PF-100 */
    assert_int_equal(s.n_annotation_keys, 1);
    gr_gang_spec_free(&s);
    json_decref(j);

    j = J("{\"name\":\"volcano\"}");
    assert_int_equal(gr_gang_spec_parse(j, &s, &err), GR_EINVAL);
    assert_string_equal(err.msg, "invalid gangDiscovery config: name \"volcano\" requires "
                                 "annotationKeys/labelKeys, podGroupGVR, and minCountExpr");
    json_decref(j);
    j = J("{\"labelKeys\":\"x\"}");
    assert_int_equal(gr_gang_spec_parse(j, &s, &err), GR_EINVAL);
    assert_string_equal(err.msg, "gangDiscovery.labelKeys: must be a list of strings");
    json_decref(j);
}

static gr_gang_discoverer *crd_disc(const char *extra)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"name\":\"volcano\",\"annotationKeys\":[\"a1\",\"scheduling.k8s.io/group-name\"],"
             "\"labelKeys\":[\"osmo.group_uuid\"],\"podGroupGVR\":{\"group\":"
             "\"scheduling.volcano.sh\",\"version\":\"v1beta1\",\"resource\":\"podgroups\"}%s}",
             extra);
    json_t *j = J(text);
    gr_gang_spec s;
    gr_err err;
    assert_int_equal(gr_gang_spec_parse(j, &s, &err), GR_OK);
    gr_gang_discoverer *d = NULL;
    int rc = gr_gang_discoverer_new(&s, GR_GANG_CRD, "PodGroup", NULL, &d, &err);
    gr_gang_spec_free(&s);
    json_decref(j);
    return rc == GR_OK ? d : NULL;
}

static gr_gang_discoverer *native_disc(gr_gang_mode mode)
{
    gr_gang_spec s;
    assert_int_equal(gr_gang_spec_parse(NULL, &s, NULL), GR_OK);
    gr_gang_discoverer *d = NULL;
    assert_int_equal(gr_gang_discoverer_new(&s, mode, NULL, NULL, &d, NULL), GR_OK);
    gr_gang_spec_free(&s);
    return d;
}

/* PF-96, PF-97, PF-101, PF-102, PF-89, PF-91: anchors from the admission object. */
static void test_anchors(void **state)
{
    (void)state;
    gr_gang_discoverer *d = crd_disc("");
    assert_non_null(d);
    gr_gang_anchor a;
    gr_err err;
    /* annotation order: a1 empty → second key (PF-96) */
    json_t *pod = J("{\"metadata\":{\"annotations\":{\"a1\":\"\",\"scheduling.k8s.io/group-name\":"
                    "\"pg1\"},\"labels\":{\"osmo.group_uuid\":\"lbl\"}}}");
    assert_int_equal(gr_gang_anchor_from_pod(d, pod, "team-a", &a, &err), GR_OK);
    assert_string_equal(a.gang_id, "volcano-team-a-pg1");
    assert_string_equal(a.cm_name, "preflight-volcano-team-a-pg1");
    assert_string_equal(a.resource, "podgroups");
    assert_string_equal(a.group, "scheduling.volcano.sh");
    assert_string_equal(a.name, "pg1");
    gr_gang_anchor_clear(&a);
    json_decref(pod);
    /* label fallback (PF-97, PF-102) */
    pod = J("{\"metadata\":{\"labels\":{\"osmo.group_uuid\":\"u-1\"}}}");
    assert_int_equal(gr_gang_anchor_from_pod(d, pod, "ns", &a, &err), GR_OK);
    assert_string_equal(a.gang_id, "volcano-ns-u-1");
    gr_gang_anchor_clear(&a);
    json_decref(pod);
    pod = J("{\"metadata\":{}}");
    assert_int_equal(gr_gang_anchor_from_pod(d, pod, "ns", &a, &err), GR_ENOTFOUND);
    json_decref(pod);
    gr_gang_discoverer_unref(d);

    d = native_disc(GR_GANG_NATIVE_PODGROUP);
    assert_string_equal(gr_gang_discoverer_name(d), "kubernetes");
    pod = J("{\"spec\":{\"schedulingGroup\":{\"podGroupName\":\"training-workers\"}}}");
    assert_int_equal(gr_gang_anchor_from_pod(d, pod, "ns", &a, &err), GR_OK); /* PF-89 */
    assert_string_equal(a.gang_id, "kubernetes-ns-training-workers");
    assert_string_equal(a.version, "v1alpha2");
    assert_string_equal(a.kind, "PodGroup");
    gr_gang_anchor_clear(&a);
    json_decref(pod);
    gr_gang_discoverer_unref(d);

    d = native_disc(GR_GANG_NATIVE_WORKLOAD);
    pod = J("{\"spec\":{\"workloadRef\":{\"name\":\"training-job-workload\",\"podGroup\":"
            "\"workers\"}}}");
    assert_int_equal(gr_gang_anchor_from_pod(d, pod, "ns", &a, &err), GR_OK); /* PF-91 */
    assert_string_equal(a.gang_id, "kubernetes-ns-training-job-workload-workers");
    assert_string_equal(a.resource, "workloads");
    assert_string_equal(a.pod_group, "workers");
    /* anchor annotation round trip */
    json_t *aj = gr_gang_anchor_to_json(&a);
    gr_gang_anchor b;
    assert_int_equal(gr_gang_anchor_from_json(aj, &b, &err), GR_OK);
    assert_string_equal(b.gang_id, a.gang_id);
    assert_string_equal(b.pod_group, "workers");
    gr_gang_anchor_clear(&b);
    json_decref(aj);
    gr_gang_anchor_clear(&a);
    json_decref(pod);
    gr_gang_discoverer_unref(d);
}

/* PF-90, PF-92, PF-99, PF-100: minCount from the anchor object. */
static void test_min_count(void **state)
{
    (void)state;
    gr_err err;
    int64_t n = -1;
    gr_gang_anchor a = {0};
    char xname[] = "x", workers[] = "workers", empty[] = "", nope[] = "nope";
    a.name = xname;
    a.pod_group = workers;

    gr_gang_discoverer *d = native_disc(GR_GANG_NATIVE_PODGROUP);
    json_t *o = J("{\"spec\":{\"schedulingPolicy\":{\"gang\":{\"minCount\":2}}}}");
    assert_int_equal(gr_gang_min_count(d, &a, o, &n, &err), GR_OK);
    assert_int_equal(n, 2); /* PF-90 */
    json_decref(o);
    o = J("{\"spec\":{}}");
    assert_int_equal(gr_gang_min_count(d, &a, o, &n, &err), GR_ENOTFOUND);
    json_decref(o);
    gr_gang_discoverer_unref(d);

    d = native_disc(GR_GANG_NATIVE_WORKLOAD);
    o = J("{\"spec\":{\"podGroups\":[{\"name\":\"ps\",\"policy\":{\"gang\":{\"minCount\":1}}},"
          "{\"name\":\"workers\",\"policy\":{\"gang\":{\"minCount\":4}}}]}}");
    assert_int_equal(gr_gang_min_count(d, &a, o, &n, &err), GR_OK);
    assert_int_equal(n, 4); /* PF-92: the entry named podGroup */
    a.pod_group = empty;
    assert_int_equal(gr_gang_min_count(d, &a, o, &n, &err), GR_OK);
    assert_int_equal(n, 1); /* no podGroup: the first entry */
    a.pod_group = nope;
    assert_int_equal(gr_gang_min_count(d, &a, o, &n, &err), GR_ENOTFOUND);
    json_decref(o);
    gr_gang_discoverer_unref(d);

    d = crd_disc(""); /* default podGroup.spec.minMember (PF-100) */
    o = J("{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
          "\"spec\":{\"minMember\":3}}");
    assert_int_equal(gr_gang_min_count(d, &a, o, &n, &err), GR_OK);
    assert_int_equal(n, 3);
    json_decref(o);
    o = J("{\"spec\":{\"minMember\":2.0}}");
    assert_int_equal(gr_gang_min_count(d, &a, o, &n, &err), GR_OK);
    assert_int_equal(n, 2);
    json_decref(o);
    o = J("{\"spec\":{\"minMember\":\"2\"}}");
    assert_int_equal(gr_gang_min_count(d, &a, o, &n, &err), GR_EINVAL);
    assert_string_equal(
        err.msg, "minCountExpr \"podGroup.spec.minMember\" returned non-numeric type string");
    json_decref(o);
    o = J("{\"spec\":{}}");
    assert_int_equal(gr_gang_min_count(d, &a, o, &n, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "minMember"));
    json_decref(o);
    gr_gang_discoverer_unref(d);

    /* PF-99: any CEL expression over podGroup */
    d = crd_disc(",\"minCountExpr\":\"podGroup.spec.replicas * podGroup.spec.perReplica\"");
    assert_non_null(d);
    o = J("{\"spec\":{\"replicas\":4,\"perReplica\":2}}");
    assert_int_equal(gr_gang_min_count(d, &a, o, &n, &err), GR_OK);
    assert_int_equal(n, 8);
    json_decref(o);
    gr_gang_discoverer_unref(d);

    /* a broken expression is refused when the discoverer is built */
    json_t *j = J("{\"name\":\"v\",\"labelKeys\":[\"k\"],\"podGroupGVR\":{\"group\":\"g\","
                  "\"version\":\"v1\",\"resource\":\"r\"},\"minCountExpr\":\"podGroup.(\"}");
    gr_gang_spec s;
    assert_int_equal(gr_gang_spec_parse(j, &s, &err), GR_OK);
    assert_int_equal(gr_gang_discoverer_new(&s, GR_GANG_CRD, "X", NULL, &d, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "gangDiscovery.minCountExpr: "));
    gr_gang_spec_free(&s);
    json_decref(j);
}

/* PF-141, PF-142: trimmed pod cache. */
static void test_pod_trim(void **state)
{
    (void)state;
    json_t *pod = J(
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"n\","
        "\"uid\":\"u\",\"resourceVersion\":\"7\",\"managedFields\":[{}],\"annotations\":{"
        "\"scheduling.k8s.io/group-name\":\"pg\",\"big\":\"xxxxxxxx\","
        "\"nvsentinel.nvidia.com/preflight-checks\":\"a\"},\"labels\":{\"app\":\"x\"}},"
        "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\"}],\"initContainers\":[{}],"
        "\"schedulingGroup\":{\"podGroupName\":\"g\"},\"volumes\":[{\"name\":\"data\",\"emptyDir\":"
        "{}},{\"name\":\"nvsentinel-preflight-gang-config\",\"configMap\":{\"name\":\"preflight-"
        "x\","
        "\"optional\":true}}]},\"status\":{\"phase\":\"Running\",\"podIP\":\"10.1.1.1\","
        "\"conditions\":[{}]}}");
    const char *ak[] = {"scheduling.k8s.io/group-name"};
    gr_gang_trim_keys keys = {ak, 1, NULL, 0};
    assert_int_equal(gr_gang_pod_trim(&pod, &keys), GR_OK);
    json_t *want = J(
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\",\"resourceVersion\":\"7\","
        "\"annotations\":{\"scheduling.k8s.io/group-name\":\"pg\","
        "\"nvsentinel.nvidia.com/preflight-checks\":\"a\"}},"
        "\"spec\":{\"nodeName\":\"n1\",\"schedulingGroup\":{\"podGroupName\":\"g\"},"
        "\"volumes\":[{\"name\":\"nvsentinel-preflight-gang-config\",\"configMap\":{\"name\":"
        "\"preflight-x\"}}]},\"status\":{\"phase\":\"Running\",\"podIP\":\"10.1.1.1\"}}");
    assert_true(gr_json_equal(pod, want));
    assert_string_equal(gr_gang_pod_configmap(pod), "preflight-x");
    json_decref(want);
    json_decref(pod);

    /* no gang volume → identity stub */
    pod = J("{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\",\"resourceVersion\":"
            "\"1\",\"labels\":{\"a\":\"b\"}},\"spec\":{\"containers\":[]},\"status\":{}}");
    assert_int_equal(gr_gang_pod_trim(&pod, &keys), GR_OK);
    want = J("{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\",\"resourceVersion\":"
             "\"1\"}}");
    assert_true(gr_json_equal(pod, want));
    json_decref(want);
    json_decref(pod);
}

static gr_preflight_config *load_cfg(void)
{
    static const char yaml[] = "gangCoordination:\n  enabled: true\n"
                               "initContainers:\n"
                               "  - name: preflight-dcgm-diag\n    image: a\n"
                               "  - name: preflight-nccl-loopback\n    image: b\n"
                               "    defaultEnabled: false\n"
                               "  - name: preflight-nccl-allreduce\n    image: c\n";
    gr_preflight_config *cfg = NULL;
    gr_err err;
    if (gr_preflight_config_parse(yaml, sizeof yaml - 1, "t", NULL, NULL, &cfg, &err) != GR_OK)
        fail_msg("config: %s", err.msg);
    return cfg;
}

static void test_check_names(void **state)
{
    (void)state;
    gr_preflight_config *cfg = load_cfg();
    json_t *pod = J("{\"metadata\":{}}");
    char *s = gr_preflight_check_names(cfg, pod);
    assert_string_equal(s, "preflight-dcgm-diag,preflight-nccl-allreduce");
    free(s);
    json_decref(pod);
    pod = J("{\"metadata\":{\"annotations\":{\"nvsentinel.nvidia.com/preflight-checks\":"
            "\" preflight-nccl-allreduce, bogus ,preflight-nccl-loopback\"}}}");
    s = gr_preflight_check_names(cfg, pod);
    assert_string_equal(s, "preflight-nccl-allreduce,preflight-nccl-loopback");
    free(s);
    json_decref(pod);
    pod = J("{\"metadata\":{\"annotations\":{\"nvsentinel.nvidia.com/preflight-checks\":"
            "\"preflight-nccl-allreduce,preflight-nccl-allreduce\"}}}");
    s = gr_preflight_check_names(cfg, pod);
    assert_string_equal(s, "");
    free(s);
    json_decref(pod);
    gr_preflight_config_free(cfg);
}

/* PF-110..PF-112, PF-143, PF-150..PF-153: the admission-time skeleton. */
static void test_skeleton(void **state)
{
    (void)state;
    gr_gang_discoverer *d = crd_disc("");
    json_t *pod = J("{\"metadata\":{\"annotations\":{\"a1\":\"myjob\"}}}");
    gr_gang_anchor a;
    assert_int_equal(gr_gang_anchor_from_pod(d, pod, "team-a", &a, NULL), GR_OK);
    json_t *cm = gr_gang_cm_skeleton(&a, 0, 29500, NULL);
    assert_non_null(cm);
    json_t *data = json_object_get(cm, "data");
    assert_string_equal(json_string_value(json_object_get(data, "gang_id")),
                        "volcano-team-a-myjob");
    assert_string_equal(json_string_value(json_object_get(data, "expected_count")), "0");
    assert_string_equal(json_string_value(json_object_get(data, "peers")), "");
    assert_string_equal(json_string_value(json_object_get(data, "master_addr")), "");
    assert_string_equal(json_string_value(json_object_get(data, "master_port")), "29500");
    json_t *md = json_object_get(cm, "metadata");
    assert_string_equal(json_string_value(json_object_get(md, "name")),
                        "preflight-volcano-team-a-myjob");
    json_t *labels = json_object_get(md, "labels");
    assert_string_equal(
        json_string_value(json_object_get(labels, "nvsentinel.nvidia.com/managed-by")),
        "preflight");
    assert_string_equal(json_string_value(json_object_get(labels, "nvsentinel.nvidia.com/gang-id")),
                        "volcano-team-a-myjob");
    assert_null(json_object_get(md, "ownerReferences"));
    /* owner reference, replaced on a new uid */
    json_t *owner = J("{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
                      "\"metadata\":{\"name\":\"myjob\",\"uid\":\"u1\"}}");
    assert_true(gr_gang_cm_set_owner(cm, owner));
    assert_false(gr_gang_cm_set_owner(cm, owner));
    json_object_set_new(json_object_get(owner, "metadata"), "uid", json_string("u2"));
    assert_true(gr_gang_cm_set_owner(cm, owner));
    json_t *refs = json_object_get(md, "ownerReferences");
    assert_int_equal(json_array_size(refs), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(refs, 0), "uid")), "u2");
    json_decref(owner);
    json_decref(cm);
    cm = gr_gang_cm_skeleton(&a, 4, 1234, NULL);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(cm, "data"), "expected_count")), "4");
    json_decref(cm);
    gr_gang_anchor_clear(&a);
    json_decref(pod);
    gr_gang_discoverer_unref(d);
}

/* PF-145..PF-149: the coordinator's update: ranks, master, pruning, set-once. */
static void test_cm_update(void **state)
{
    (void)state;
    gr_preflight_config *cfg = load_cfg();
    json_t *cm = J("{\"data\":{\"expected_count\":\"0\",\"peers\":\"gone;10.9.9.9;0\","
                   "\"master_addr\":\"10.9.9.9\",\"master_port\":\"29500\",\"gang_id\":\"g\"}}");
    json_t *members =
        J("[{\"metadata\":{\"name\":\"w-1\"},\"status\":{\"phase\":\"Running\",\"podIP\":"
          "\"10.0.0.2\"}},"
          "{\"metadata\":{\"name\":\"w-0\"},\"status\":{\"phase\":\"Pending\",\"podIP\":"
          "\"fd00::1\"}},"
          "{\"metadata\":{\"name\":\"w-2\"},\"status\":{\"phase\":\"Pending\"}},"
          "{\"metadata\":{\"name\":\"w-3\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
          "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.0.0.4\"}},"
          "{\"metadata\":{\"name\":\"w-4\"},\"status\":{\"phase\":\"Failed\",\"podIP\":"
          "\"10.0.0.5\"}}]");
    bool changed = false;
    gr_err err;
    assert_int_equal(gr_gang_cm_update(cm, members, 2, cfg, &changed, &err), GR_OK);
    assert_true(changed);
    json_t *data = json_object_get(cm, "data");
    assert_string_equal(json_string_value(json_object_get(data, "expected_count")), "2");
    assert_string_equal(json_string_value(json_object_get(data, "peers")),
                        "w-0;fd00::1;0;preflight-dcgm-diag,preflight-nccl-allreduce\n"
                        "w-1;10.0.0.2;1;preflight-dcgm-diag,preflight-nccl-allreduce");
    assert_string_equal(json_string_value(json_object_get(data, "master_addr")), "fd00::1");
    /* idempotent */
    assert_int_equal(gr_gang_cm_update(cm, members, 2, cfg, &changed, &err), GR_OK);
    assert_false(changed);
    /* expected_count is set once */
    assert_int_equal(gr_gang_cm_update(cm, members, 7, cfg, &changed, &err), GR_OK);
    assert_string_equal(json_string_value(json_object_get(data, "expected_count")), "2");
    json_decref(members);
    /* everybody gone: peers and master emptied */
    members = J("[]");
    assert_int_equal(gr_gang_cm_update(cm, members, 0, cfg, &changed, &err), GR_OK);
    assert_true(changed);
    assert_string_equal(json_string_value(json_object_get(data, "peers")), "");
    assert_string_equal(json_string_value(json_object_get(data, "master_addr")), "");
    json_decref(members);
    json_decref(cm);
    gr_preflight_config_free(cfg);
}

/* PF-122, PF-123, PF-124, PF-127: precedence and messages. */
static void test_pfc_order(void **state)
{
    (void)state;
    json_t *items = J("[{\"metadata\":{\"name\":\"b\",\"creationTimestamp\":"
                      "\"2026-01-01T00:00:05Z\"}},"
                      "{\"metadata\":{\"name\":\"z\",\"creationTimestamp\":"
                      "\"2026-01-01T00:00:01Z\"}},"
                      "{\"metadata\":{\"name\":\"a\",\"creationTimestamp\":"
                      "\"2026-01-01T00:00:05Z\"}}]");
    json_t *o = gr_gang_pfc_order(items);
    assert_string_equal(gr_kube_obj_meta(json_array_get(o, 0), "name"), "z"); /* oldest */
    assert_string_equal(gr_kube_obj_meta(json_array_get(o, 1), "name"), "a"); /* tie by name */
    assert_string_equal(gr_kube_obj_meta(json_array_get(o, 2), "name"), "b");
    json_decref(o);
    json_decref(items);
    char buf[256];
    gr_gang_pfc_superseded_msg("default", true, buf, sizeof buf);
    assert_string_equal(buf, "PreflightConfig \"default\" is already active in this namespace; "
                             "only one is allowed");
    gr_gang_pfc_superseded_msg("default", false, buf, sizeof buf);
    assert_string_equal(buf, "superseded by older PreflightConfig \"default\" (not active: "
                             "invalid configuration); only one is allowed per namespace");

    json_t *pfc = J("{\"metadata\":{\"name\":\"x\",\"generation\":3}}");
    bool changed = false;
    gr_err err;
    assert_int_equal(gr_gang_pfc_set_status(pfc, true, GR_GANG_REASON_ACTIVE, GR_GANG_MSG_ACTIVE,
                                            "volcano", 1000000000LL, &changed, &err),
                     GR_OK);
    assert_true(changed);
    json_t *st = json_object_get(pfc, "status");
    assert_int_equal(json_integer_value(json_object_get(st, "observedGeneration")), 3);
    assert_string_equal(json_string_value(json_object_get(st, "discoverer")), "volcano");
    json_t *c = json_array_get(json_object_get(st, "conditions"), 0);
    assert_string_equal(json_string_value(json_object_get(c, "type")), "Ready");
    assert_string_equal(json_string_value(json_object_get(c, "status")), "True");
    assert_string_equal(json_string_value(json_object_get(c, "reason")), "DiscovererActive");
    assert_string_equal(json_string_value(json_object_get(c, "message")), "discoverer active");
    assert_int_equal(gr_gang_pfc_set_status(pfc, true, GR_GANG_REASON_ACTIVE, GR_GANG_MSG_ACTIVE,
                                            "volcano", 2000000000LL, &changed, &err),
                     GR_OK);
    assert_false(changed); /* no write when nothing differs */
    json_decref(pfc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gang_id),          cmocka_unit_test(test_peers_parse),
        cmocka_unit_test(test_ranks_and_format), cmocka_unit_test(test_spec_parse),
        cmocka_unit_test(test_anchors),          cmocka_unit_test(test_min_count),
        cmocka_unit_test(test_pod_trim),         cmocka_unit_test(test_check_names),
        cmocka_unit_test(test_skeleton),         cmocka_unit_test(test_cm_update),
        cmocka_unit_test(test_pfc_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
