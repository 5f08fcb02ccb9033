/*
 * nvcre_wf_diag (unit): the diagnose-mode state machine (gr_nvcre_wf_diag.h,
 * fact sheet §2.14): every stage transition, driven by a simulated cluster
 * whose groups fail when they contain a faulty node (or a faulty pair, for
 * the cross-boundary stage), and the bandwidth reclassification.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "gr_json.h"
#include "gr_nvcre_types.h"
#include "gr_nvcre_wf_diag.h"

static json_t *J(const char *s)
{
    json_error_t je;
    json_t *v = json_loads(s, JSON_DECODE_ANY, &je);
    if (!v)
        fail_msg("bad JSON literal (%s): %s", je.text, s);
    return v;
}

/* n nodes "n00".., `per` per rack (label rack=r<i>). */
static json_t *mk_nodes(int n, int per, json_t **names)
{
    json_t *a = json_array();
    *names = json_array();
    for (int i = 0; i < n; i++) {
        char nm[16], rk[16];
        snprintf(nm, sizeof nm, "n%02d", i);
        snprintf(rk, sizeof rk, "r%d", per ? i / per : 0);
        json_array_append_new(
            a, json_pack("{s:{s:s,s:{s:s}}}", "metadata", "name", nm, "labels", "rack", rk));
        json_array_append_new(*names, json_string(nm));
    }
    return a;
}

typedef struct sim {
    const char *faulty[4]; /* a group with any of these fails */
    const char *pair[2];   /* a group with both of these fails (cross-boundary) */
    int nvl_only;          /* faults vanish in noNVL groups */
    int inter_fails;       /* the inter-domain group fails */
    char stages[16][32];   /* the stage of each round */
    int rounds;
} sim;

static int in_group(const json_t *g, const char *n)
{
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(g, "nodes"), i,
                       x) if (!strcmp(json_string_value(x), n)) return 1;
    return 0;
}

static int group_fails(const sim *s, const json_t *g)
{
    if (s->inter_fails && !strcmp(json_string_value(json_object_get(g, "name")), "inter-domain"))
        return 1;
    if (s->nvl_only && json_is_true(json_object_get(g, "noNVL")))
        return 0;
    for (int i = 0; i < 4 && s->faulty[i]; i++)
        if (in_group(g, s->faulty[i]))
            return 1;
    return s->pair[0] && in_group(g, s->pair[0]) && in_group(g, s->pair[1]);
}

/* Run the machine to completion; returns the final state (caller frees). */
static json_t *run(sim *s, const char *spec_s, int n, int per, int mnnvl, const char **type,
                   const char **reason, char *msg, size_t msgsz)
{
    json_t *names = NULL, *nodes = mk_nodes(n, per, &names), *spec = J(spec_s);
    json_t *st = NULL, *gs = NULL;
    gr_err err = {0};
    assert_int_equal(gr_nvcre_wf_diag_start(spec, nodes, names, &st, &gs, &err), GR_OK);
    int min =
        (int)json_integer_value(gr_json_ptr_get(spec, "/orchestration/diagnose/minGroupSize"));
    s->rounds = 0;
    while (gs) {
        assert_true(s->rounds < 16); /* terminates */
        snprintf(s->stages[s->rounds++], 32, "%s", json_string_value(json_object_get(st, "stage")));
        size_t i;
        json_t *g;
        json_array_foreach(gs, i, g)
        {
            assert_true(json_array_size(json_object_get(g, "nodes")) > 0);
            json_object_set_new(g, "phase",
                                json_string(group_fails(s, g) ? "Failed" : "Succeeded"));
        }
        json_t *next = NULL;
        assert_int_equal(
            gr_nvcre_wf_diag_advance(st, gs, mnnvl, min, &next, type, reason, msg, msgsz, &err),
            GR_OK);
        json_decref(gs);
        gs = next;
        assert_true(gs ? *type == NULL : *type != NULL);
    }
    json_decref(names);
    json_decref(nodes);
    json_decref(spec);
    return st;
}

#define SPEC_TOPO "{\"orchestration\":{\"diagnose\":{\"minGroupSize\":2,\"topologyKey\":\"rack\"}}}"

static void test_all_healthy(void **state)
{
    (void)state;
    sim s = {0};
    const char *type, *reason;
    char msg[256];
    json_t *st = run(&s, SPEC_TOPO, 8, 4, 0, &type, &reason, msg, sizeof msg);
    /* intra-screening → inter-screening → complete */
    assert_int_equal(s.rounds, 2);
    assert_string_equal(s.stages[0], "intra-screening");
    assert_string_equal(s.stages[1], "inter-screening");
    assert_string_equal(type, GR_NVCRE_COND_SUCCEEDED);
    assert_string_equal(reason, GR_NVCRE_REASON_JOB_COMPLETED);
    assert_string_equal(msg, "All domains healthy, no faults detected");
    assert_string_equal(json_string_value(json_object_get(st, "stage")), "complete");
    assert_int_equal(json_array_size(json_object_get(st, "healthyNodes")), 8);
    assert_string_equal(json_string_value(gr_json_ptr_get(st, "/screeningResults/r0")), "Passed");
    assert_int_equal(json_array_size(json_object_get(st, "representativeNodes")), 2);
    assert_string_equal(json_string_value(gr_json_ptr_get(st, "/representativeNodes/1")), "n04");
    json_decref(st);
}

static void test_no_topology(void **state)
{
    (void)state;
    /* One domain "default": no inter-screening; a fault is bisected. */
    json_t *names = NULL, *nodes = mk_nodes(4, 0, &names);
    json_t *spec = J("{\"orchestration\":{\"diagnose\":{}}}"), *st = NULL, *gs = NULL;
    assert_int_equal(gr_nvcre_wf_diag_start(spec, nodes, names, &st, &gs, NULL), GR_OK);
    assert_int_equal(json_array_size(gs), 1);
    assert_string_equal(json_string_value(gr_json_ptr_get(gs, "/0/name")), "intra-default");
    json_decref(gs);
    json_decref(st);
    json_decref(spec);
    json_decref(names);
    json_decref(nodes);
    sim s = {.faulty = {"n02"}};
    const char *type, *reason;
    char msg[256];
    st = run(&s, "{\"orchestration\":{\"diagnose\":{\"minGroupSize\":1}}}", 4, 0, 0, &type, &reason,
             msg, sizeof msg);
    assert_string_equal(s.stages[0], "intra-screening");
    assert_string_equal(s.stages[1], "bisection");
    assert_string_equal(s.stages[s.rounds - 1], "confirmation");
    assert_string_equal(type, GR_NVCRE_COND_FAILED);
    assert_string_equal(reason, GR_NVCRE_REASON_ITERATIONS_FAILED);
    assert_string_equal(msg, "Diagnosis complete: 1 faulty nodes confirmed");
    assert_string_equal(json_string_value(gr_json_ptr_get(st, "/faultyNodes/0")), "n02");
    assert_int_equal(json_array_size(json_object_get(st, "faultyNodes")), 1);
    json_decref(st);
}

static void test_bisection_finds_fault(void **state)
{
    (void)state;
    sim s = {.faulty = {"n05"}};
    const char *type, *reason;
    char msg[256];
    json_t *st = run(&s, SPEC_TOPO, 16, 8, 0, &type, &reason, msg, sizeof msg);
    assert_string_equal(s.stages[0], "intra-screening");
    assert_string_equal(s.stages[1], "bisection"); /* one rack healthy: no inter round */
    assert_string_equal(s.stages[s.rounds - 1], "confirmation");
    assert_string_equal(msg, "Diagnosis complete: 1 faulty nodes confirmed");
    assert_string_equal(json_string_value(gr_json_ptr_get(st, "/faultyNodes/0")), "n05");
    assert_string_equal(json_string_value(gr_json_ptr_get(st, "/screeningResults/r0")), "Failed");
    assert_string_equal(json_string_value(gr_json_ptr_get(st, "/screeningResults/r1")), "Passed");
    /* minGroupSize 2: the last set is a pair, both confirmed separately. */
    assert_int_equal(json_array_size(json_object_get(st, "healthyNodes")), 15);
    assert_null(json_object_get(st, "bisectSets"));
    json_decref(st);
}

static void test_two_faults_two_racks(void **state)
{
    (void)state;
    sim s = {.faulty = {"n01", "n06"}};
    const char *type, *reason;
    char msg[256];
    /* Racks of 4 → 4 racks, two fail, two healthy → inter-screening runs. */
    json_t *st = run(&s, SPEC_TOPO, 16, 4, 0, &type, &reason, msg, sizeof msg);
    assert_string_equal(s.stages[1], "inter-screening");
    assert_string_equal(s.stages[2], "bisection");
    assert_string_equal(msg, "Diagnosis complete: 2 faulty nodes confirmed");
    assert_string_equal(json_string_value(gr_json_ptr_get(st, "/faultyNodes/0")), "n01");
    assert_string_equal(json_string_value(gr_json_ptr_get(st, "/faultyNodes/1")), "n06");
    json_decref(st);
}

static void test_cross_boundary(void **state)
{
    (void)state;
    /* n00+n07 fail only together: both bisection halves pass, the
     * cross-boundary probes mix them. */
    sim s = {.pair = {"n00", "n07"}};
    const char *type, *reason;
    char msg[256];
    json_t *st = run(&s, SPEC_TOPO, 16, 8, 0, &type, &reason, msg, sizeof msg);
    int saw_cross = 0;
    for (int i = 0; i < s.rounds; i++)
        saw_cross |= !strcmp(s.stages[i], "cross-boundary");
    assert_true(saw_cross);
    assert_null(json_object_get(st, "crossBoundaryState")); /* cleared at the end */
    assert_string_equal(json_string_value(json_object_get(st, "stage")), "complete");
    /* Each node alone with a healthy reference passes: no faulty node is
     * confirmed, the diagnosis ends healthy. */
    assert_non_null(type);
    json_decref(st);
}

static void test_mnnvl_no_nvl(void **state)
{
    (void)state;
    /* A rack fails with NVLink and passes without: infrastructure fault. */
    sim s = {.faulty = {"n02"}, .nvl_only = 1};
    const char *type, *reason;
    char msg[256];
    json_t *st = run(&s, SPEC_TOPO, 8, 4, 1, &type, &reason, msg, sizeof msg);
    assert_string_equal(s.stages[0], "intra-screening");
    assert_string_equal(s.stages[1], "intra-screening-no-nvl");
    assert_string_equal(json_string_value(gr_json_ptr_get(st, "/noNVLScreeningResults/r0")),
                        "Passed");
    assert_int_equal(json_array_size(json_object_get(st, "noNVLSuspectNodes")), 4);
    assert_string_equal(json_string_value(gr_json_ptr_get(st, "/infrastructureFaults/0")),
                        "mnnvl:r0");
    assert_string_equal(type, GR_NVCRE_COND_FAILED);
    assert_string_equal(msg, "Diagnosis complete: 0 faulty nodes confirmed");
    json_decref(st);
    /* Fails without NVLink too: bisected as usual. */
    sim s2 = {.faulty = {"n02"}};
    st = run(&s2, SPEC_TOPO, 8, 4, 1, &type, &reason, msg, sizeof msg);
    assert_string_equal(s2.stages[1], "intra-screening-no-nvl");
    assert_string_equal(json_string_value(gr_json_ptr_get(st, "/noNVLScreeningResults/r0")),
                        "Failed");
    assert_string_equal(msg, "Diagnosis complete: 1 faulty nodes confirmed");
    json_decref(st);
}

static void test_inter_fault(void **state)
{
    (void)state;
    sim s = {.inter_fails = 1};
    const char *type, *reason;
    char msg[256];
    json_t *st = run(&s, SPEC_TOPO, 8, 4, 0, &type, &reason, msg, sizeof msg);
    assert_string_equal(json_string_value(gr_json_ptr_get(st, "/infrastructureFaults/0")),
                        "inter-domain");
    assert_string_equal(type, GR_NVCRE_COND_FAILED);
    assert_string_equal(msg, "Diagnosis complete: 0 faulty nodes confirmed");
    json_decref(st);
}

static void test_no_healthy_reference(void **state)
{
    (void)state;
    sim s = {.faulty = {"n00", "n01", "n02", "n03"}};
    const char *type, *reason;
    char msg[256];
    json_t *st = run(&s, SPEC_TOPO, 4, 4, 0, &type, &reason, msg, sizeof msg);
    assert_string_equal(type, GR_NVCRE_COND_FAILED);
    assert_string_equal(reason, GR_NVCRE_REASON_ITERATIONS_FAILED);
    assert_string_equal(msg, "No healthy reference node; 4 suspects marked failed");
    assert_int_equal(json_array_size(json_object_get(st, "faultyNodes")), 4);
    json_decref(st);
}

static void test_bad_input(void **state)
{
    (void)state;
    json_t *st = J("{\"stage\":\"bogus\"}"), *done = J("[]"), *next = NULL;
    const char *type, *reason;
    char msg[64];
    gr_err err = {0};
    assert_int_equal(
        gr_nvcre_wf_diag_advance(st, done, 0, 2, &next, &type, &reason, msg, sizeof msg, &err),
        GR_EINVAL);
    assert_non_null(strstr(err.msg, "status.orchestration.diagnose.stage"));
    json_decref(st);
    json_decref(done);
    json_t *names = J("[]"), *nodes = J("[]"), *spec = J(SPEC_TOPO), *gs = NULL;
    assert_int_equal(gr_nvcre_wf_diag_start(spec, nodes, names, &st, &gs, &err), GR_EINVAL);
    /* The node cap: one past it is refused with the fix. */
    for (int i = 0; i <= GR_NVCRE_WF_DIAG_MAX_NODES; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "n%05d", i);
        json_array_append_new(names, json_string(nm));
    }
    assert_int_equal(gr_nvcre_wf_diag_start(spec, nodes, names, &st, &gs, &err), GR_ETOOBIG);
    assert_non_null(strstr(err.msg, "orchestration.target"));
    assert_null(st);
    assert_null(gs);
    json_decref(names);
    json_decref(nodes);
    json_decref(spec);
}

static void test_enabled_mnnvl(void **state)
{
    (void)state;
    json_t *a = J(SPEC_TOPO), *b = J("{\"orchestration\":{}}");
    json_t *c = J("{\"dependencies\":[{\"kind\":\"ComputeDomain\"}]}");
    assert_int_equal(gr_nvcre_wf_diag_enabled(a), 1);
    assert_int_equal(gr_nvcre_wf_diag_enabled(b), 0);
    assert_int_equal(gr_nvcre_wf_diag_mnnvl(c), 1);
    assert_int_equal(gr_nvcre_wf_diag_mnnvl(a), 0);
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

static void test_bandwidth(void **state)
{
    (void)state;
    const int64_t S = 1000000000LL;
    json_t *done = J("{\"status\":{\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}],"
                     "\"results\":[{\"sizeBytes\":1,\"busBW\":\"120.5\"},"
                     "{\"sizeBytes\":2,\"busBW\":\"410.25\"}]}}");
    json_t *running = J("{\"status\":{\"results\":[{\"busBW\":\"10\"}]}}");
    json_t *empty =
        J("{\"status\":{\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}]}}");
    double mx = 0;
    /* threshold-pass / threshold-fail */
    assert_int_equal(gr_nvcre_wf_diag_bw_verdict(done, 400, 0, 300 * S, 10 * S, &mx),
                     GR_NVCRE_WF_DIAG_BW_PASS);
    assert_true(fabs(mx - 410.25) < 1e-9);
    assert_int_equal(gr_nvcre_wf_diag_bw_verdict(done, 500, 0, 300 * S, 10 * S, NULL),
                     GR_NVCRE_WF_DIAG_BW_FAIL);
    /* threshold-pending: not Complete within the timeout; then judged */
    assert_int_equal(gr_nvcre_wf_diag_bw_verdict(running, 5, 0, 300 * S, 10 * S, NULL),
                     GR_NVCRE_WF_DIAG_BW_PENDING);
    assert_int_equal(gr_nvcre_wf_diag_bw_verdict(NULL, 5, 0, 300 * S, 10 * S, NULL),
                     GR_NVCRE_WF_DIAG_BW_PENDING);
    assert_int_equal(gr_nvcre_wf_diag_bw_verdict(running, 5, 0, 300 * S, 301 * S, NULL),
                     GR_NVCRE_WF_DIAG_BW_PASS);
    /* threshold-nodata */
    assert_int_equal(gr_nvcre_wf_diag_bw_verdict(empty, 5, 0, 300 * S, 10 * S, NULL),
                     GR_NVCRE_WF_DIAG_BW_NODATA);
    assert_int_equal(gr_nvcre_wf_diag_bw_verdict(NULL, 5, 0, 300 * S, 301 * S, NULL),
                     GR_NVCRE_WF_DIAG_BW_NODATA);
    json_decref(done);
    json_decref(running);
    json_decref(empty);
    double t = 0;
    gr_err err = {0};
    json_t *sp = J("{\"validation\":{\"performance\":{\"thresholds\":{\"busBandwidthGBps\":\">= "
                   "400\"}}}}");
    assert_int_equal(gr_nvcre_wf_diag_threshold(sp, &t, &err), GR_OK);
    assert_true(t == 400);
    json_decref(sp);
    sp = J("{\"validation\":{\"performance\":{\"thresholds\":{\"thresholds\":{"
           "\"busBandwidthGBps\":\"value >= 350.5\"}}}}}");
    assert_int_equal(gr_nvcre_wf_diag_threshold(sp, &t, &err), GR_OK);
    assert_true(t == 350.5);
    json_decref(sp);
    sp = J("{\"validation\":{\"performance\":{\"thresholds\":{\"busBandwidthGBps\":\"fast\"}}}}");
    assert_int_equal(gr_nvcre_wf_diag_threshold(sp, &t, &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "busBandwidthGBps"));
    json_decref(sp);
    sp = J("{}");
    assert_int_equal(gr_nvcre_wf_diag_threshold(sp, &t, &err), GR_OK);
    assert_true(t == 0);
    json_decref(sp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_healthy),
        cmocka_unit_test(test_no_topology),
        cmocka_unit_test(test_bisection_finds_fault),
        cmocka_unit_test(test_two_faults_two_racks),
        cmocka_unit_test(test_cross_boundary),
        cmocka_unit_test(test_mnnvl_no_nvl),
        cmocka_unit_test(test_inter_fault),
        cmocka_unit_test(test_no_healthy_reference),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_enabled_mnnvl),
        cmocka_unit_test(test_bandwidth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
