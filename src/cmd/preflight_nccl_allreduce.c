/*
 * preflight-nccl-allreduce — multi-node NCCL all-reduce across the gang.
 * Gang stage (GANG_CONFIG_DIR), then our own TCP bootstrap (node rank 0
 * listens on master_addr:master_port and hands out the ncclUniqueId), then
 * one thread per local GPU with rank = node_rank * gpus_per_node +
 * local_rank. Exit codes: 0 passed, 1 test failed (bandwidth, all-reduce
 * error, NCCL init failure), 2 configuration or gang configuration error,
 * 3 gang formation timed out, 4 the health event could not be sent.
 * STORE_ONLY turns 1 and 4 into 0, never 2 or 3. See docs/checks.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gr_checks.h"
#include "gr_checks_boot.h"
#include "gr_checks_gang.h"
#include "gr_checks_prog.h"
#include "gr_log.h"

#define MOD GR_CHECKS_AGENT_ALLREDUCE

static gr_checks_allreduce_config cfg;
static gr_health_publisher *pub;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Send one event (pub may be NULL: gang errors before it existed). */
static int send_event(const gr_checks_event *ev, const char *node)
{
    if (!pub || !node || !*node)
        return GR_EINVAL;
    return gr_checks_publish(pub, ev, GR_CHECKS_AGENT_ALLREDUCE, "Node", node, cfg.strategy);
}

/* A gang-stage failure: non-fatal event, exit 2 or 3 (never gated). */
static int gang_fail(int code, const char *error_code, const char *msg, const char *node)
{
    gr_log(GR_LOG_ERROR, MOD, "gang stage failed", GR_KV_STR("error", msg),
           GR_KV_STR("error_code", error_code), GR_KV_INT("exit_code", code), GR_KV_END);
    gr_checks_event ev;
    gr_checks_event_set(&ev, GR_CHECKS_CHECK_ALLREDUCE, 0, 0, GR_HEALTH_ACTION_NONE, error_code,
                        "%s", msg);
    send_event(&ev, node);
    gr_health_publisher_free(pub);
    return code;
}

/* A test-stage failure/result: event, exit 0/1, 4 if not delivered, gated. */
static int test_result(int code, const gr_checks_event *ev)
{
    if (send_event(ev, cfg.node_name) != GR_OK)
        code = GR_CHECKS_EXIT_ALLREDUCE_SEND; /* PF-237 */
    gr_health_publisher_free(pub);
    return gr_checks_finish(MOD, code, cfg.strategy);
}

static int make_id(void *ctx, unsigned char id[GR_CHECKS_BOOT_ID_BYTES], gr_err *err)
{
    const gr_gpu *gpu = ctx;
    gr_gpu_nccl_id nid;
    int rc = gpu->nccl->get_unique_id(&nid);
    if (rc != 0)
        return gr_err_set(err, GR_EIO, "ncclGetUniqueId failed: %s", gpu->nccl->error_string(rc));
    memcpy(id, nid.internal, GR_CHECKS_BOOT_ID_BYTES);
    return GR_OK;
}

int main(void)
{
    gr_checks_prog_init(MOD);
    gr_err err;
    int gang_error = 0;
    if (gr_checks_allreduce_config_parse(gr_checks_process_env, NULL, &cfg, &gang_error, &err) !=
        GR_OK) {
        if (!gang_error)
            return gr_checks_config_error(MOD, &err, GR_CHECKS_EXIT_CONFIG); /* PF-188 */
        /* No gang environment (PF-19): report it when we can. */
        gr_err perr;
        const char *node = getenv("NODE_NAME");
        if (gr_health_strategy_parse(getenv("PROCESSING_STRATEGY"), &cfg.strategy, &perr) !=
                GR_OK ||
            gr_health_publisher_from_env(&pub, &perr) != GR_OK)
            pub = NULL;
        return gang_fail(GR_CHECKS_EXIT_CONFIG, "NCCL_GANG_CONFIG_ERROR", err.msg, node);
    }
    if (gr_health_publisher_from_env(&pub, &err) != GR_OK)
        return gr_checks_config_error(MOD, &err, GR_CHECKS_EXIT_CONFIG);
    gr_gpu gpu;
    if (gr_gpu_load(GR_GPU_LIB_CUDA | GR_GPU_LIB_NCCL, &gpu, &err) != GR_OK) {
        gr_health_publisher_free(pub);
        return gr_checks_config_error(MOD, &err, GR_CHECKS_EXIT_CONFIG);
    }

    /* Gang stage (PF-247): wait for the full gang. */
    int64_t deadline = now_ms() + (int64_t)cfg.gang_timeout_s * 1000;
    int64_t master_grace = 0;
    gr_checks_gang g;
    memset(&g, 0, sizeof g);
    char last[512] = "gang ConfigMap not read yet";
    for (;;) {
        if (gr_checks_stop) {
            gr_health_publisher_free(pub);
            return 128 + gr_checks_stop;
        }
        gr_checks_gang_files f;
        int rc = gr_checks_gang_read_dir(cfg.gang_dir, &f, &err);
        if (rc == GR_OK) {
            gr_checks_gang_free(&g);
            rc = gr_checks_gang_parse(&f, &g, &err);
            gr_checks_gang_files_free(&f);
            if (rc == GR_EINVAL)
                return gang_fail(GR_CHECKS_EXIT_CONFIG, "NCCL_GANG_CONFIG_ERROR", err.msg,
                                 cfg.node_name);
            if (rc != GR_OK)
                snprintf(last, sizeof last, "%s", err.msg);
            else if (g.expected_invalid)
                snprintf(last, sizeof last, "expected_count is not a whole number yet");
            else
                snprintf(last, sizeof last, "%zu of %ld peers registered", g.n_peers,
                         g.expected_count);
            if (rc == GR_OK && gr_checks_gang_complete(&g)) {
                if (g.master_addr[0])
                    break;
                /* Peers are complete but master_addr is not (yet) set. */
                if (!master_grace)
                    master_grace = now_ms() + 10000;
                if (now_ms() >= master_grace || now_ms() >= deadline) {
                    gr_checks_gang_free(&g);
                    return gang_fail(GR_CHECKS_EXIT_CONFIG, "NCCL_GANG_CONFIG_ERROR",
                                     GR_CHECKS_MSG_NO_MASTER, cfg.node_name);
                }
            }
        } else {
            snprintf(last, sizeof last, "%s", err.msg);
        }
        if (now_ms() >= deadline) {
            char m[128];
            snprintf(m, sizeof m, GR_CHECKS_MSG_GANG_TIMEOUT, cfg.gang_timeout_s);
            gr_log(GR_LOG_WARN, MOD, "gang incomplete", GR_KV_STR("state", last), GR_KV_END);
            gr_checks_gang_free(&g);
            return gang_fail(GR_CHECKS_EXIT_GANG_TIMEOUT, "NCCL_GANG_TIMEOUT", m,
                             cfg.node_name); /* PF-236, PF-249 */
        }
        gr_log(GR_LOG_DEBUG, MOD, "waiting for the gang", GR_KV_STR("state", last), GR_KV_END);
        usleep(500000);
    }
    long me = gr_checks_gang_find(&g, cfg.pod_name);
    char m[2048];
    if (me < 0) {
        snprintf(m, sizeof m, GR_CHECKS_MSG_NOT_IN_PEERS, cfg.pod_name);
        gr_checks_gang_free(&g);
        return gang_fail(GR_CHECKS_EXIT_CONFIG, "NCCL_GANG_CONFIG_ERROR", m, cfg.node_name);
    }
    int node_rank = g.peers[me].rank;
    int nnodes = (int)g.expected_count;
    if (node_rank < 0 || node_rank >= nnodes) {
        snprintf(m, sizeof m, "Pod %s has rank %d in the peers list; want 0..%d", cfg.pod_name,
                 node_rank, nnodes - 1);
        gr_checks_gang_free(&g);
        return gang_fail(GR_CHECKS_EXIT_CONFIG, "NCCL_GANG_CONFIG_ERROR", m, cfg.node_name);
    }
    char detail[1536];
    if (gr_checks_gang_checks_mismatch(&g, detail, sizeof detail)) {
        snprintf(m, sizeof m, GR_CHECKS_MSG_MISMATCH, detail);
        gr_checks_gang_free(&g);
        return gang_fail(GR_CHECKS_EXIT_CONFIG, "NCCL_GANG_CONFIG_ERROR", m,
                         cfg.node_name); /* PF-36 */
    }
    char master[256], gang_id[256];
    snprintf(master, sizeof master, "%s", g.master_addr);
    snprintf(gang_id, sizeof gang_id, "%s", g.gang_id);
    int port = g.master_port;
    gr_checks_gang_free(&g);
    gr_log(GR_LOG_INFO, MOD, "gang formed", GR_KV_STR("gang_id", gang_id),
           GR_KV_INT("nnodes", nnodes), GR_KV_INT("node_rank", node_rank),
           GR_KV_STR("master_addr", master), GR_KV_INT("master_port", port), GR_KV_END);

    /* GPUs on this node. */
    gr_checks_event ev;
    int ndev = 0, rc = gpu.cuda->init();
    if (rc == 0)
        rc = gpu.cuda->device_count(&ndev);
    if (rc != 0 || ndev <= 0) {
        gr_checks_event_set(&ev, GR_CHECKS_CHECK_ALLREDUCE, 0, 1, GR_HEALTH_ACTION_CONTACT_SUPPORT,
                            "NCCL_ALLREDUCE_INIT_FAILED", GR_CHECKS_MSG_INIT_FAILED,
                            rc ? gpu.cuda->error_string(rc) : "no GPU visible to the container");
        return test_result(GR_CHECKS_EXIT_FAIL, &ev);
    }
    int gpn = cfg.gpus_per_node ? cfg.gpus_per_node : ndev;
    if (gpn > ndev) {
        snprintf(m, sizeof m, "NPROCS_PER_NODE=%d but only %d GPUs are visible", gpn, ndev);
        gr_checks_event_set(&ev, GR_CHECKS_CHECK_ALLREDUCE, 0, 1, GR_HEALTH_ACTION_CONTACT_SUPPORT,
                            "NCCL_ALLREDUCE_INIT_FAILED", GR_CHECKS_MSG_INIT_FAILED, m);
        return test_result(GR_CHECKS_EXIT_FAIL, &ev);
    }

    /* Bootstrap: hand the ncclUniqueId from node 0 to every node. */
    gr_checks_boot_msg hello, id;
    memset(&hello, 0, sizeof hello);
    hello.type = GR_CHECKS_BOOT_HELLO;
    hello.node_rank = (uint32_t)node_rank;
    hello.nnodes = (uint32_t)nnodes;
    hello.gpus_per_node = (uint32_t)gpn;
    snprintf(hello.gang_id, sizeof hello.gang_id, "%s", gang_id);
    int tmo = cfg.bootstrap_timeout_s * 1000;
    if (node_rank == 0)
        rc = gr_checks_boot_serve(master, port, &hello, tmo, make_id, &gpu,
                                  (volatile int *)&gr_checks_stop, &id, &err);
    else
        rc = gr_checks_boot_join(master, port, &hello, tmo, (volatile int *)&gr_checks_stop, &id,
                                 &err);
    if (rc == GR_ECANCELED) {
        gr_health_publisher_free(pub);
        return 128 + gr_checks_stop;
    }
    if (rc != GR_OK) {
        gr_checks_event_set(&ev, GR_CHECKS_CHECK_ALLREDUCE, 0, 1, GR_HEALTH_ACTION_CONTACT_SUPPORT,
                            "NCCL_ALLREDUCE_INIT_FAILED", GR_CHECKS_MSG_INIT_FAILED,
                            err.msg); /* PF-234 */
        gr_log(GR_LOG_ERROR, MOD, "bootstrap failed", GR_KV_STR("error", err.msg), GR_KV_END);
        return test_result(GR_CHECKS_EXIT_FAIL, &ev);
    }
    gr_gpu_nccl_id nid;
    memcpy(nid.internal, id.id, sizeof nid.internal);
    int ver = 0;
    gpu.nccl->version(&ver);
    gr_log(GR_LOG_INFO, MOD, "running NCCL all-reduce", GR_KV_INT("world_size", nnodes * gpn),
           GR_KV_INT("gpus_per_node", gpn), GR_KV_STR("op", gr_checks_reduce_op_name(cfg.op)),
           GR_KV_INT("nccl_version", ver), GR_KV_STR("backend", gpu.backend), GR_KV_END);

    gr_checks_bw bw[GR_CHECKS_MAX_SIZES];
    char why[768] = "";
    rc = gr_checks_allreduce_run(&gpu, &nid, node_rank, nnodes, gpn, &cfg, bw, why, sizeof why);
    if (rc == GR_ECANCELED) {
        gr_health_publisher_free(pub);
        return 128 + gr_checks_stop;
    }
    if (rc == GR_ENOTFOUND) {
        gr_checks_event_set(&ev, GR_CHECKS_CHECK_ALLREDUCE, 0, 1, GR_HEALTH_ACTION_CONTACT_SUPPORT,
                            "NCCL_ALLREDUCE_INIT_FAILED", GR_CHECKS_MSG_INIT_FAILED, why);
        return test_result(GR_CHECKS_EXIT_FAIL, &ev);
    }
    if (rc != GR_OK) {
        gr_checks_event_set(&ev, GR_CHECKS_CHECK_ALLREDUCE, 0, 1, GR_HEALTH_ACTION_CONTACT_SUPPORT,
                            "NCCL_ALLREDUCE_TIMEOUT", GR_CHECKS_MSG_BENCH_FAILED, why);
        return test_result(GR_CHECKS_EXIT_FAIL, &ev);
    }
    for (size_t s = 0; s < cfg.n_sizes; s++)
        gr_log(GR_LOG_INFO, MOD, "benchmark result", GR_KV_INT("bytes", (long long)bw[s].bytes),
               GR_KV_INT("world_size", bw[s].nranks),
               GR_KV_DOUBLE("time_us", (double)bw[s].ns_per_iter / 1e3),
               GR_KV_DOUBLE("algbw_gbps", bw[s].algbw), GR_KV_DOUBLE("busbw_gbps", bw[s].busbw),
               GR_KV_END);
    int code = gr_checks_allreduce_verdict(&cfg, bw, cfg.n_sizes, &ev);
    if (node_rank != 0) {
        /* Only global rank 0 reports the verdict. */
        gr_health_publisher_free(pub);
        return gr_checks_finish(MOD, code, cfg.strategy);
    }
    return test_result(code, &ev);
}
