/*
 * preflight-nccl-loopback — single-node NCCL all-reduce across every GPU the
 * container sees, in one process (no all_reduce_perf). Exit codes: 0 passed,
 * 1 test failed (bandwidth below BW_THRESHOLD_GBPS or the benchmark did not
 * run), 2 configuration error (no event), 3 the health event could not be
 * sent. STORE_ONLY turns 1 and 3 into 0 after reporting. See docs/checks.md.
 */
#include <stdio.h>
#include <string.h>

#include "gr_checks.h"
#include "gr_checks_prog.h"
#include "gr_log.h"

#define MOD GR_CHECKS_AGENT_LOOPBACK

int main(void)
{
    gr_checks_prog_init(MOD);
    gr_err err;
    gr_checks_loopback_config cfg;
    if (gr_checks_loopback_config_parse(gr_checks_process_env, NULL, &cfg, &err) != GR_OK)
        return gr_checks_config_error(MOD, &err, GR_CHECKS_EXIT_CONFIG); /* PF-229, PF-243 */
    if (cfg.skip_invalid)
        gr_log(GR_LOG_WARN, MOD, "SKIP_BANDWIDTH_CHECK is not a boolean; using false", GR_KV_END);
    gr_health_publisher *pub;
    if (gr_health_publisher_from_env(&pub, &err) != GR_OK)
        return gr_checks_config_error(MOD, &err, GR_CHECKS_EXIT_CONFIG); /* PF-187 */
    gr_gpu gpu;
    if (gr_gpu_load(GR_GPU_LIB_CUDA | GR_GPU_LIB_NCCL, &gpu, &err) != GR_OK) {
        gr_health_publisher_free(pub);
        return gr_checks_config_error(MOD, &err, GR_CHECKS_EXIT_CONFIG);
    }
    int ndev = 0, rc = gpu.cuda->init();
    if (rc == 0)
        rc = gpu.cuda->device_count(&ndev);
    if (rc != 0 || ndev <= 0) {
        gr_err_set(&err, GR_EINVAL, "no GPU visible to the container (%s)",
                   rc ? gpu.cuda->error_string(rc) : "CUDA reports 0 devices");
        gr_health_publisher_free(pub);
        return gr_checks_config_error(MOD, &err, GR_CHECKS_EXIT_CONFIG);
    }
    int ver = 0;
    gpu.nccl->version(&ver);
    gr_log(GR_LOG_INFO, MOD, "running NCCL all-reduce", GR_KV_INT("gpus", ndev),
           GR_KV_INT("bytes", (long long)cfg.size_bytes), GR_KV_INT("nccl_version", ver),
           GR_KV_STR("backend", gpu.backend), GR_KV_END);
    gr_checks_bw bw;
    memset(&bw, 0, sizeof bw);
    char why[512] = "";
    rc = gr_checks_loopback_run(&gpu, ndev, cfg.size_bytes, cfg.warmup_iters, cfg.iters, &bw, why,
                                sizeof why);
    if (rc == GR_ECANCELED) {
        gr_log(GR_LOG_WARN, MOD, "stopped by signal", GR_KV_INT("signal", gr_checks_stop),
               GR_KV_END);
        gr_health_publisher_free(pub);
        return 128 + gr_checks_stop;
    }
    if (rc == GR_OK)
        gr_log(GR_LOG_INFO, MOD, "benchmark result", GR_KV_INT("bytes", (long long)bw.bytes),
               GR_KV_INT("gpus", bw.nranks), GR_KV_DOUBLE("time_us", (double)bw.ns_per_iter / 1e3),
               GR_KV_DOUBLE("algbw_gbps", bw.algbw), GR_KV_DOUBLE("busbw_gbps", bw.busbw),
               GR_KV_END);
    gr_checks_event ev;
    int code = gr_checks_loopback_verdict(&cfg, &bw, rc == GR_OK ? NULL : why, &ev);
    if (gr_checks_publish(pub, &ev, GR_CHECKS_AGENT_LOOPBACK, "Node", cfg.node_name,
                          cfg.strategy) != GR_OK)
        code = GR_CHECKS_EXIT_LOOPBACK_SEND; /* PF-230 */
    gr_health_publisher_free(pub);
    return gr_checks_finish(MOD, code, cfg.strategy);
}
