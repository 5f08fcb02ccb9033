/* test_checks_logic.c — pure logic of src/checks: env parsing, sizes, the
 * nccl-tests bandwidth formulas, verdicts and their events, gang parsing,
 * the bootstrap wire format and the DCGM mapping/normalizing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gr_checks.h"
#include "gr_checks_boot.h"
#include "gr_checks_dcgm.h"
#include "gr_checks_gang.h"
#include "gr_dcgm_abi.h"

/* A tiny environment: NULL-terminated name/value pairs. */
static const char *table_env(void *ctx, const char *name)
{
    const char *const *kv = ctx;
    for (; kv[0]; kv += 2)
        if (strcmp(kv[0], name) == 0)
            return kv[1];
    return NULL;
}

static void test_sizes(void **state)
{
    (void)state;
    uint64_t b, v[GR_CHECKS_MAX_SIZES];
    size_t n;
    gr_err err;
    /* PF-68: G/GB and M/MB, any case, decimals. */
    assert_int_equal(gr_checks_parse_size("4G", &b, NULL), GR_OK);
    assert_int_equal(b, (uint64_t)4 << 30);
    assert_int_equal(gr_checks_parse_size("8gb", &b, NULL), GR_OK);
    assert_int_equal(b, (uint64_t)8 << 30);
    assert_int_equal(gr_checks_parse_size("512M", &b, NULL), GR_OK);
    assert_int_equal(b, (uint64_t)512 << 20);
    assert_int_equal(gr_checks_parse_size(" 1.5MB ", &b, NULL), GR_OK);
    assert_int_equal(b, (uint64_t)3 << 19);
    const char *bad[] = {"4", "4K", "G", "4.4.4G", "-1G", "0M", "4 G", "", "2048G", "1e3M"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(gr_checks_parse_size(bad[i], &b, NULL), GR_EINVAL);
    assert_int_equal(gr_checks_parse_size("4X", &b, &err), GR_EINVAL);
    assert_string_equal(err.msg, "Invalid size format: 4X. Use G/GB or M/MB suffix.");
    /* PF-66: default 4G,8G parses; list handling. */
    assert_int_equal(gr_checks_parse_sizes("4G,8G", v, &n, NULL), GR_OK);
    assert_int_equal(n, 2);
    assert_int_equal(gr_checks_parse_sizes(" 1M ,, 2M,", v, &n, NULL), GR_OK);
    assert_int_equal(n, 2);
    assert_int_equal(gr_checks_parse_sizes(" , ", v, &n, NULL), GR_EINVAL);
    assert_int_equal(gr_checks_parse_sizes("1M,2X", v, &n, NULL), GR_EINVAL);
}

static void test_bools_numbers_ops(void **state)
{
    (void)state;
    int b;
    assert_int_equal(gr_checks_parse_go_bool("True", &b), GR_OK);
    assert_true(b);
    assert_int_equal(gr_checks_parse_go_bool("0", &b), GR_OK);
    assert_false(b);
    assert_int_equal(gr_checks_parse_go_bool("yes", &b), GR_EINVAL);
    assert_true(gr_checks_parse_loose_bool("YES"));
    assert_true(gr_checks_parse_loose_bool(" true "));
    assert_false(gr_checks_parse_loose_bool("on"));
    double d;
    assert_int_equal(gr_checks_parse_positive("15.5", 0, &d), GR_OK);
    assert_int_equal(gr_checks_parse_positive("0", 0, &d), GR_EINVAL);
    assert_int_equal(gr_checks_parse_positive("nan", 0, &d), GR_EINVAL);
    assert_int_equal(gr_checks_parse_positive("0x10", 0, &d), GR_EINVAL);
    int op;
    /* PF-71, PF-72 */
    const char *ops[] = {"sum", "prod", "min", "max", "avg"};
    const int want[] = {GR_NCCL_SUM, GR_NCCL_PROD, GR_NCCL_MIN, GR_NCCL_MAX, GR_NCCL_AVG};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(gr_checks_parse_reduce_op(ops[i], &op, NULL), GR_OK);
        assert_int_equal(op, want[i]);
        assert_string_equal(gr_checks_reduce_op_name(op), ops[i]);
    }
    assert_int_equal(gr_checks_parse_reduce_op("mean", &op, NULL), GR_EINVAL);
}

static void test_bandwidth(void **state)
{
    (void)state;
    /* nccl-tests: 268435456 B in 2374.1 us = 113.07 GB/s algbw, 8 GPUs ->
     * busbw 197.87 (upstream fixture). */
    double alg = gr_checks_algbw(268435456, 2374100);
    assert_true(alg > 113.06 && alg < 113.08);
    double bus = gr_checks_busbw(alg, 8);
    assert_true(bus > 197.86 && bus < 197.89);
    assert_true(gr_checks_busbw(100.0, 1) == 0.0);
    assert_true(gr_checks_busbw(100.0, 2) == 100.0);
    assert_true(gr_checks_algbw(1, 0) == 0.0);
}

static void test_loopback_config_and_verdict(void **state)
{
    (void)state;
    gr_checks_loopback_config cfg;
    gr_err err;
    const char *env0[] = {"NODE_NAME", "n", NULL};
    assert_int_equal(gr_checks_loopback_config_parse(table_env, env0, &cfg, &err), GR_OK);
    assert_true(cfg.threshold_gbps == 150.0);              /* PF-59 */
    assert_int_equal(cfg.size_bytes, (uint64_t)256 << 20); /* PF-60 */
    assert_false(cfg.skip_bw_check);                       /* PF-61 */
    assert_int_equal(cfg.strategy, GR_HEALTH_STRATEGY_EXECUTE_REMEDIATION);
    const char *env1[] = {"TEST_SIZE_MB", "0", "NODE_NAME", "n", NULL};
    assert_int_equal(gr_checks_loopback_config_parse(table_env, env1, &cfg, &err), GR_EINVAL);
    const char *env2[] = {NULL};
    assert_int_equal(gr_checks_loopback_config_parse(table_env, env2, &cfg, &err), GR_EINVAL);
    assert_string_equal(err.msg, "NODE_NAME is required");

    gr_checks_event ev;
    assert_int_equal(gr_checks_loopback_config_parse(table_env, env0, &cfg, &err), GR_OK);
    gr_checks_bw bw = {.busbw = 149.994};
    assert_int_equal(gr_checks_loopback_verdict(&cfg, &bw, NULL, &ev), 1);
    assert_string_equal(ev.error_code, "NCCL_BW_DEGRADED");
    assert_true(ev.is_fatal);
    bw.busbw = 150.0;
    assert_int_equal(gr_checks_loopback_verdict(&cfg, &bw, NULL, &ev), 0);
    assert_string_equal(ev.message,
                        "NCCL all-reduce bus bandwidth 150.00 GB/s meets threshold 150.00 GB/s");
    assert_int_equal(gr_checks_loopback_verdict(&cfg, &bw, "boom", &ev), 1);
    assert_string_equal(ev.message, "NCCL loopback test failed: boom");
    assert_string_equal(ev.error_code, "NCCL_TEST_ERROR");
    /* STORE_ONLY gate (PF-245) */
    assert_int_equal(gr_checks_store_only_gate(1, GR_HEALTH_STRATEGY_STORE_ONLY), 0);
    assert_int_equal(gr_checks_store_only_gate(1, GR_HEALTH_STRATEGY_EXECUTE_REMEDIATION), 1);
}

static void test_allreduce_config_and_verdict(void **state)
{
    (void)state;
    gr_checks_allreduce_config cfg;
    gr_err err;
    int gang;
    const char *env0[] = {"NODE_NAME", "n", "POD_NAME", "p", NULL};
    assert_int_equal(gr_checks_allreduce_config_parse(table_env, env0, &cfg, &gang, &err), GR_OK);
    assert_true(cfg.threshold_gbps == 100.0);            /* PF-65 */
    assert_int_equal(cfg.n_sizes, 2);                    /* PF-66 */
    assert_int_equal(cfg.iters, 20);                     /* PF-69 */
    assert_int_equal(cfg.warmup_iters, 5);               /* PF-70 */
    assert_int_equal(cfg.op, GR_NCCL_SUM);               /* PF-71 */
    assert_false(cfg.skip_bw_check);                     /* PF-73 */
    assert_string_equal(cfg.gang_dir, "/etc/preflight"); /* PF-146 */
    assert_int_equal(cfg.gang_timeout_s, 600);
    const char *env1[] = {"NODE_NAME", "n", NULL};
    assert_int_equal(gr_checks_allreduce_config_parse(table_env, env1, &cfg, &gang, &err),
                     GR_EINVAL);
    assert_true(gang); /* PF-19: no POD_NAME is a gang configuration error */
    const char *env2[] = {"NODE_NAME", "n", "POD_NAME", "p", "MESSAGE_SIZES", "4T", NULL};
    assert_int_equal(gr_checks_allreduce_config_parse(table_env, env2, &cfg, &gang, &err),
                     GR_EINVAL);
    assert_false(gang);

    assert_int_equal(gr_checks_allreduce_config_parse(table_env, env0, &cfg, &gang, &err), GR_OK);
    gr_checks_bw bw[2] = {{.busbw = 180}, {.busbw = 99.5}};
    gr_checks_event ev;
    assert_int_equal(gr_checks_allreduce_verdict(&cfg, bw, 2, &ev), 1);
    assert_string_equal(ev.message,
                        "NCCL all-reduce bus bandwidth 99.50 GB/s is below threshold 100.00 GB/s");
    assert_string_equal(ev.error_code, "NCCL_ALLREDUCE_BW_DEGRADED");
    bw[1].busbw = 120;
    assert_int_equal(gr_checks_allreduce_verdict(&cfg, bw, 2, &ev), 0);
    assert_string_equal(ev.message,
                        "NCCL all-reduce bus bandwidth 120.00 GB/s meets threshold 100.00 GB/s");
    assert_int_equal(gr_checks_allreduce_verdict(&cfg, bw, 0, &ev), 1);
}

static void test_gang_parse(void **state)
{
    (void)state;
    gr_checks_gang_files f = {
        (char[]){"3\n"}, (char[]){"pod-a;10.0.0.1;0\n\npod-b;10.0.0.2;1\nbad\npod-c;10.0.0.3;x\n"},
        (char[]){" 10.0.0.1 "}, (char[]){""}, (char[]){"g"}};
    gr_checks_gang g;
    assert_int_equal(gr_checks_gang_parse(&f, &g, NULL), GR_OK);
    assert_int_equal(g.expected_count, 3);
    assert_int_equal(g.n_peers, 3);
    assert_int_equal(g.skipped_lines, 1);
    assert_int_equal(g.peers[2].rank, -1);
    assert_string_equal(g.master_addr, "10.0.0.1");
    assert_int_equal(g.master_port, 29500); /* PF-150 default */
    assert_true(gr_checks_gang_complete(&g));
    assert_int_equal(gr_checks_gang_find(&g, "pod-b"), 1);
    assert_int_equal(gr_checks_gang_find(&g, "pod-z"), -1);
    char d[256];
    assert_int_equal(gr_checks_gang_checks_mismatch(&g, d, sizeof d), 0);
    gr_checks_gang_free(&g);
    /* 4-field lines: order-insensitive, mismatch message lists every peer. */
    gr_checks_gang_files f2 = {(char[]){"2"}, (char[]){"a;1.1.1.1;0;y, x\nb;1.1.1.2;1;x,y\n"},
                               (char[]){"1.1.1.1"}, (char[]){"29501"}, NULL};
    assert_int_equal(gr_checks_gang_parse(&f2, &g, NULL), GR_OK);
    assert_int_equal(g.master_port, 29501);
    assert_int_equal(gr_checks_gang_checks_mismatch(&g, d, sizeof d), 0);
    gr_checks_gang_free(&g);
    gr_checks_gang_files f3 = {(char[]){"2"}, (char[]){"a;1.1.1.1;0;x,y\nb;1.1.1.2;1;x\n"},
                               (char[]){"1.1.1.1"}, NULL, NULL};
    assert_int_equal(gr_checks_gang_parse(&f3, &g, NULL), GR_OK);
    assert_int_equal(gr_checks_gang_checks_mismatch(&g, d, sizeof d), 1);
    assert_string_equal(d, "a=[x,y]; b=[x]");
    gr_checks_gang_free(&g);
    /* Incomplete / invalid states. */
    gr_checks_gang_files f4 = {(char[]){"two"}, (char[]){"a;1;0"}, NULL, (char[]){"70000"}, NULL};
    gr_err err;
    assert_int_equal(gr_checks_gang_parse(&f4, &g, &err), GR_EINVAL);
    f4.master_port = NULL;
    assert_int_equal(gr_checks_gang_parse(&f4, &g, &err), GR_OK);
    assert_true(g.expected_invalid);
    assert_false(gr_checks_gang_complete(&g));
    gr_checks_gang_free(&g);
    gr_checks_gang_files f5 = {(char[]){"0"}, NULL, NULL, NULL, NULL}; /* PF-111 skeleton */
    assert_int_equal(gr_checks_gang_parse(&f5, &g, &err), GR_OK);
    assert_false(gr_checks_gang_complete(&g));
    gr_checks_gang_free(&g);
}

static void test_boot_wire(void **state)
{
    (void)state;
    gr_checks_boot_msg m, d;
    memset(&m, 0, sizeof m);
    m.type = GR_CHECKS_BOOT_HELLO;
    m.node_rank = 2;
    m.nnodes = 4;
    m.gpus_per_node = 8;
    strcpy(m.gang_id, "kai-ns-pg");
    unsigned char buf[2048];
    size_t len, used;
    assert_int_equal(gr_checks_boot_encode(&m, buf, sizeof buf, &len, NULL), GR_OK);
    assert_int_equal(len, GR_CHECKS_BOOT_HEADER + 14 + 9);
    /* Every strict prefix asks for more bytes. */
    for (size_t i = 0; i < len; i++)
        assert_int_equal(gr_checks_boot_decode(buf, i, &d, &used, NULL), GR_EAGAIN);
    assert_int_equal(gr_checks_boot_decode(buf, len, &d, &used, NULL), GR_OK);
    assert_int_equal(used, len);
    assert_int_equal(d.node_rank, 2);
    assert_string_equal(d.gang_id, "kai-ns-pg");
    memset(&m, 0, sizeof m);
    m.type = GR_CHECKS_BOOT_ID;
    m.world_size = 32;
    for (int i = 0; i < GR_CHECKS_BOOT_ID_BYTES; i++)
        m.id[i] = (unsigned char)i;
    assert_int_equal(gr_checks_boot_encode(&m, buf, sizeof buf, &len, NULL), GR_OK);
    assert_int_equal(gr_checks_boot_decode(buf, len, &d, &used, NULL), GR_OK);
    assert_memory_equal(d.id, m.id, GR_CHECKS_BOOT_ID_BYTES);
    assert_int_equal(d.world_size, 32);
    /* Bad magic, type, lengths. */
    buf[0] = 'X';
    assert_int_equal(gr_checks_boot_decode(buf, len, &d, &used, NULL), GR_EPARSE);
    buf[0] = 'G';
    buf[4] = 9;
    assert_int_equal(gr_checks_boot_decode(buf, len, &d, &used, NULL), GR_EPARSE);
    buf[4] = GR_CHECKS_BOOT_ID;
    buf[8] = (unsigned char)(buf[8] + 1);
    assert_int_equal(gr_checks_boot_decode(buf, len + 1, &d, &used, NULL), GR_EPARSE);
    const unsigned char huge[] = {'G', 'R', 'B', '1', 1, 0, 1, 0, 0};
    assert_int_equal(gr_checks_boot_decode(huge, sizeof huge, &d, &used, NULL), GR_EPARSE);
}

static void test_dcgm_names_map_events(void **state)
{
    (void)state;
    assert_string_equal(gr_checks_dcgm_st_name(-34), "DCGM_ST_IN_USE");
    assert_string_equal(gr_checks_dcgm_st_name(-39), "DCGM_ST_DIAG_ALREADY_RUNNING");
    assert_null(gr_checks_dcgm_st_name(0));
    assert_string_equal(gr_checks_dcgm_fr_name(101), "DCGM_FR_XID_ERROR");
    assert_string_equal(gr_checks_dcgm_fr_name(14), "DCGM_FR_NVLINK_DOWN");
    assert_null(gr_checks_dcgm_fr_name(5000));
    char c[64];
    gr_checks_dcgm_camel("sm_stress", c, sizeof c);
    assert_string_equal(c, "SmStress");
    gr_checks_dcgm_camel("memory-bandwidth", c, sizeof c);
    assert_string_equal(c, "MemoryBandwidth");
    gr_checks_dcgm_camel("PCIE", c, sizeof c);
    assert_string_equal(c, "Pcie");

    static gr_checks_dcgm_map map;
    assert_int_equal(gr_checks_dcgm_map_parse(gr_checks_dcgm_builtin_map,
                                              strlen(gr_checks_dcgm_builtin_map), &map, NULL),
                     GR_OK);
    assert_true(map.n > 100);
    assert_int_equal(map.ignored, 0);
    gr_health_action a;
    assert_true(gr_checks_dcgm_map_lookup(&map, "DCGM_FR_XID_ERROR", &a));
    assert_int_equal(a, GR_HEALTH_ACTION_NONE); /* PF-252 */
    assert_true(gr_checks_dcgm_map_lookup(&map, "DCGM_FR_VOLATILE_DBE_DETECTED", &a));
    assert_int_equal(a, GR_HEALTH_ACTION_COMPONENT_RESET);
    /* Every row names a real code. */
    for (size_t i = 0; i < map.n; i++) {
        int known = 0;
        for (unsigned int k = 0; k < 200 && !known; k++)
            known = gr_checks_dcgm_fr_name(k) &&
                    strcmp(gr_checks_dcgm_fr_name(k), map.rows[i].name) == 0;
        assert_true(known);
    }
    gr_err err;
    assert_int_equal(gr_checks_dcgm_map_parse("A,NONE\nnocomma\n", 15, &map, &err), GR_EPARSE);
    assert_int_equal(gr_checks_dcgm_map_parse("A,NONE\nB,WHATEVER\n", 18, &map, &err), GR_OK);
    assert_int_equal(map.n, 1);
    assert_int_equal(map.ignored, 1);

    /* Events: only allocated GPUs; pass/warn/fail; fatal rule. */
    assert_int_equal(gr_checks_dcgm_map_parse(gr_checks_dcgm_builtin_map,
                                              strlen(gr_checks_dcgm_builtin_map), &map, NULL),
                     GR_OK);
    static gr_dcgm_diag diag;
    memset(&diag, 0, sizeof diag);
    gr_dcgm_result rs[] = {{"pcie", 5, GR_DCGM_PASS, 0, ""},
                           {"memory", 5, GR_DCGM_FAIL, 4, "DBE"},
                           {"diagnostic", 5, GR_DCGM_FAIL, 101, "xid"},
                           {"sm_stress", 5, GR_DCGM_FAIL, 0, ""},
                           {"memtest", 5, GR_DCGM_WARN, 14, "link"},
                           {"pulse_test", 5, GR_DCGM_SKIP, 0, ""},
                           {"pcie", 6, GR_DCGM_FAIL, 4, "not ours"}};
    memcpy(diag.results, rs, sizeof rs);
    diag.n = sizeof rs / sizeof rs[0];
    gr_checks_dcgm_gpu gpus[] = {{5, "GPU-5"}};
    gr_checks_event ev[16];
    size_t n;
    int fatal;
    gr_checks_dcgm_events(&diag, gpus, 1, &map, ev, 16, &n, &fatal);
    assert_int_equal(n, 5);
    assert_true(fatal);
    assert_true(ev[0].is_healthy);
    assert_string_equal(ev[0].message, "Test passed");
    assert_string_equal(ev[0].check_name, "DcgmDiagnosticPcie");
    assert_string_equal(ev[0].entity_uuid, "GPU-5");
    assert_true(ev[1].is_fatal); /* COMPONENT_RESET */
    assert_string_equal(ev[1].error_code, "DCGM_FR_VOLATILE_DBE_DETECTED");
    assert_false(ev[2].is_fatal); /* XID: NONE, PF-252 */
    assert_true(ev[3].is_fatal);  /* code 0: CONTACT_SUPPORT */
    assert_int_equal(ev[3].action, GR_HEALTH_ACTION_CONTACT_SUPPORT);
    assert_string_equal(ev[3].error_code, "");
    assert_false(ev[4].is_fatal);                                /* warn never fatal, PF-251 */
    assert_int_equal(ev[4].action, GR_HEALTH_ACTION_RESTART_VM); /* PF-255 */

    gr_checks_dcgm_status_event("DCGM_ST_IN_USE", 10, &ev[0]);
    assert_false(ev[0].is_fatal);
    assert_false(ev[0].is_healthy);
    assert_int_equal(ev[0].action, GR_HEALTH_ACTION_NONE); /* PF-56 */
}

static void test_dcgm_config(void **state)
{
    (void)state;
    gr_checks_dcgm_config cfg;
    gr_err err;
    const char *env0[] = {"NODE_NAME", "n", NULL};
    assert_int_equal(gr_checks_dcgm_config_parse(table_env, env0, &cfg, &err), GR_OK);
    assert_int_equal(cfg.level, 2);            /* PF-49 */
    assert_int_equal(cfg.retry_max, 10);       /* PF-53 */
    assert_true(cfg.retry_interval_s == 10.0); /* PF-54 */
    assert_int_equal(cfg.n_addrs, 2);          /* PF-51 */
    assert_string_equal(cfg.addrs[0], "nvidia-dcgm-dra.gpu-operator.svc:5555");
    assert_string_equal(cfg.addrs[1], "nvidia-dcgm.gpu-operator.svc:5555");
    const char *env1[] = {"NODE_NAME", "n", "DCGM_DIAG_LEVEL", "0", NULL};
    assert_int_equal(gr_checks_dcgm_config_parse(table_env, env1, &cfg, &err), GR_EINVAL);
    assert_string_equal(err.msg, "DCGM_DIAG_LEVEL must be 1-4, got 0");
    const char *env2[] = {"NODE_NAME", "n", "DCGM_DIAG_STATUS_RETRY_INTERVAL_SECONDS", "0", NULL};
    assert_int_equal(gr_checks_dcgm_config_parse(table_env, env2, &cfg, &err), GR_EINVAL);
    const char *env3[] = {"NODE_NAME", "n", "DCGM_HOSTENGINE_ADDR", " a:1 ,,b:2", NULL};
    assert_int_equal(gr_checks_dcgm_config_parse(table_env, env3, &cfg, &err), GR_OK);
    assert_int_equal(cfg.n_addrs, 2);
    assert_string_equal(cfg.addrs[0], "a:1");
}

static void test_dcgm_v10(void **state)
{
    (void)state;
    gr_dcgmDiagResponse_v10 *r = calloc(1, sizeof *r);
    assert_non_null(r);
    static gr_dcgm_diag out;
    assert_int_equal(gr_checks_dcgm_from_v10(r, sizeof *r, &out, NULL), GR_EINVAL);
    r->version = GR_DCGM_DIAG_RESPONSE_VERSION10;
    r->gpuCount = 2;
    r->levelOneTestCount = 2;
    r->levelOneResults[0].status = GR_DCGM_PASS;
    r->levelOneResults[1].status = GR_DCGM_WARN;
    r->levelOneResults[1].error[0].gpuId = 7;
    r->levelOneResults[1].error[0].code = 29;
    strcpy(r->levelOneResults[1].error[0].msg, "persistence mode off");
    r->perGpuResponses[0].gpuId = 3;
    r->perGpuResponses[1].gpuId = 7;
    for (int g = 0; g < 2; g++)
        for (int t = 0; t < GR_DCGM_PER_GPU_TESTS; t++)
            r->perGpuResponses[g].results[t].status = GR_DCGM_NOT_RUN;
    r->perGpuResponses[1].results[2].status = GR_DCGM_FAIL; /* pcie */
    r->perGpuResponses[1].results[2].error[0].gpuId = 7;
    r->perGpuResponses[1].results[2].error[0].code = 46;
    strcpy(r->perGpuResponses[1].results[2].error[0].msg, "width x8");
    assert_int_equal(gr_checks_dcgm_from_v10(r, sizeof *r, &out, NULL), GR_OK);
    /* 2 GPUs x (software + 11 named tests) */
    assert_int_equal(out.n, 24);
    int saw_pcie = 0, saw_sw = 0;
    for (size_t i = 0; i < out.n; i++) {
        const gr_dcgm_result *x = &out.results[i];
        if (x->gpu_id == 7 && strcmp(x->test, "pcie") == 0) {
            saw_pcie = 1;
            assert_int_equal(x->status, GR_DCGM_FAIL);
            assert_int_equal(x->error_code, 46);
            assert_string_equal(x->msg, "width x8");
        }
        if (strcmp(x->test, "software") == 0) {
            saw_sw++;
            assert_int_equal(x->status, GR_DCGM_WARN);
            if (x->gpu_id == 7)
                assert_int_equal(x->error_code, 29);
            else
                assert_int_equal(x->error_code, 0); /* the error names GPU 7 */
        }
    }
    assert_true(saw_pcie);
    assert_int_equal(saw_sw, 2);
    r->gpuCount = 33;
    assert_int_equal(gr_checks_dcgm_from_v10(r, sizeof *r, &out, NULL), GR_EINVAL);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_bools_numbers_ops),
        cmocka_unit_test(test_bandwidth),
        cmocka_unit_test(test_loopback_config_and_verdict),
        cmocka_unit_test(test_allreduce_config_and_verdict),
        cmocka_unit_test(test_gang_parse),
        cmocka_unit_test(test_boot_wire),
        cmocka_unit_test(test_dcgm_names_map_events),
        cmocka_unit_test(test_dcgm_config),
        cmocka_unit_test(test_dcgm_v10),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
