/*
 * preflight-dcgm-diag — DCGM diagnostics on exactly the GPUs allocated to the
 * container, matched to the hostengine's GPUs by UUID. Exit codes: 0 passed or
 * only non-fatal findings, 1 fatal finding, DCGM unreachable or configuration
 * error (no event). See docs/checks.md.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gr_buf.h"
#include "gr_checks.h"
#include "gr_checks_dcgm.h"
#include "gr_checks_prog.h"
#include "gr_file.h"
#include "gr_log.h"

#define MOD GR_CHECKS_AGENT_DCGM

static const gr_gpu_dcgm *dcgm;
static volatile uintptr_t live_handle; /* connected hostengine, 0 = none */
static volatile int diag_running;

/* SIGTERM/SIGINT: stop a running diagnostic, then exit 128+signal. */
static void *signal_thread(void *arg)
{
    sigset_t *set = arg;
    int sig = 0;
    if (sigwait(set, &sig) != 0)
        return NULL;
    gr_log(GR_LOG_WARN, MOD, "signal received", GR_KV_INT("signal", sig),
           GR_KV_BOOL("diagnostic_running", diag_running), GR_KV_END);
    if (diag_running && live_handle) {
        int rc = dcgm->stop_diag(live_handle);
        gr_log(GR_LOG_INFO, MOD, "stopped the diagnostic", GR_KV_INT("rc", rc), GR_KV_END);
    }
    _exit(128 + sig);
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Largest DCGM_ERROR_MAPPING_PATH file. */
#define MAPPING_MAX ((size_t)1 << 20)

static int load_map(const gr_checks_dcgm_config *cfg, gr_checks_dcgm_map *map, gr_err *err)
{
    if (!cfg->mapping_path[0])
        return gr_checks_dcgm_map_parse(gr_checks_dcgm_builtin_map,
                                        strlen(gr_checks_dcgm_builtin_map), map, err);
    char *text = NULL;
    size_t len = 0;
    int rc = gr_file_read(cfg->mapping_path, MAPPING_MAX, &text, &len, err);
    if (rc == GR_ETOOBIG)
        return gr_err_set(err, rc, "DCGM_ERROR_MAPPING_PATH %s is larger than 1 MiB",
                          cfg->mapping_path);
    if (rc != GR_OK)
        return gr_err_set(err, GR_EINVAL, "DCGM_ERROR_MAPPING_PATH %s cannot be read",
                          cfg->mapping_path);
    rc = gr_checks_dcgm_map_parse(text, len, map, err);
    free(text);
    if (rc != GR_OK)
        gr_err_prefix(err, "DCGM_ERROR_MAPPING_PATH %s: ", cfg->mapping_path);
    return rc;
}

/* Report one event; a failed delivery is logged only (PF-191). */
static void report(gr_health_publisher *pub, const gr_checks_event *ev,
                   const gr_checks_dcgm_config *cfg)
{
    gr_checks_publish(pub, ev, GR_CHECKS_AGENT_DCGM, "GPU", cfg->node_name, cfg->strategy);
}

/* An infrastructure failure before any result: unhealthy event, exit 1. */
static int failure(gr_health_publisher *pub, const gr_checks_dcgm_config *cfg, int fatal,
                   const char *code, const char *msg)
{
    gr_log(GR_LOG_ERROR, MOD, "diagnostic failed", GR_KV_STR("error", msg), GR_KV_END);
    gr_checks_event ev;
    gr_checks_event_set(&ev, GR_CHECKS_CHECK_DCGM, 0, fatal, GR_HEALTH_ACTION_CONTACT_SUPPORT, code,
                        "%s", msg);
    report(pub, &ev, cfg);
    gr_health_publisher_free(pub);
    return gr_checks_finish(MOD, GR_CHECKS_EXIT_FAIL, cfg->strategy);
}

int main(void)
{
    gr_checks_prog_init(MOD);
    gr_err err;
    static gr_checks_dcgm_config cfg;
    if (gr_checks_dcgm_config_parse(gr_checks_process_env, NULL, &cfg, &err) != GR_OK)
        return gr_checks_config_error(MOD, &err, GR_CHECKS_EXIT_FAIL); /* PF-225, PF-242 */
    static gr_checks_dcgm_map map;
    if (load_map(&cfg, &map, &err) != GR_OK)
        return gr_checks_config_error(MOD, &err, GR_CHECKS_EXIT_FAIL);
    gr_health_publisher *pub;
    if (gr_health_publisher_from_env(&pub, &err) != GR_OK)
        return gr_checks_config_error(MOD, &err, GR_CHECKS_EXIT_FAIL); /* PF-186 */
    gr_gpu gpu;
    if (gr_gpu_load(GR_GPU_LIB_NVML | GR_GPU_LIB_DCGM, &gpu, &err) != GR_OK) {
        gr_health_publisher_free(pub);
        return gr_checks_config_error(MOD, &err, GR_CHECKS_EXIT_FAIL);
    }
    dcgm = gpu.dcgm;

    /* Signals go to a dedicated thread so it can stop the diagnostic. */
    static sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_t sig_thr;
    pthread_create(&sig_thr, NULL, signal_thread, &set);
    pthread_detach(sig_thr);

    /* 1. The container's GPUs, by UUID (NVML sees only the allocated ones). */
    static gr_checks_dcgm_gpu mine[GR_DCGM_MAX_GPUS];
    unsigned int nmine = 0;
    int rc = gpu.nvml->init();
    if (rc == 0)
        rc = gpu.nvml->device_count(&nmine);
    if (rc != 0) {
        char m[256];
        snprintf(m, sizeof m, "NVML failed: %s (%d)", gpu.nvml->error_string(rc), rc);
        return failure(pub, &cfg, 1, NULL, m);
    }
    if (nmine > GR_DCGM_MAX_GPUS)
        nmine = GR_DCGM_MAX_GPUS;
    for (unsigned int i = 0; i < nmine; i++) {
        rc = gpu.nvml->device_uuid(i, mine[i].uuid, sizeof mine[i].uuid);
        if (rc != 0) {
            char m[256];
            snprintf(m, sizeof m, "NVML cannot read the UUID of GPU %u: %s", i,
                     gpu.nvml->error_string(rc));
            return failure(pub, &cfg, 1, NULL, m);
        }
    }
    gpu.nvml->shutdown();
    if (nmine == 0)
        return failure(pub, &cfg, 1, NULL, "No GPUs allocated to this container");

    /* 2. The first hostengine that answers (PF-52). */
    gpu.dcgm->init();
    uintptr_t h = 0;
    const char *addr = NULL;
    for (size_t i = 0; i < cfg.n_addrs && !addr; i++) {
        rc = gpu.dcgm->connect(cfg.addrs[i], 5000, &h);
        gr_log(rc == 0 ? GR_LOG_INFO : GR_LOG_WARN, MOD,
               rc == 0 ? "connected to hostengine" : "hostengine not reachable",
               GR_KV_STR("addr", cfg.addrs[i]), GR_KV_INT("rc", rc), GR_KV_END);
        if (rc == 0)
            addr = cfg.addrs[i];
    }
    if (!addr) {
        char m[1024];
        snprintf(m, sizeof m, "DCGM hostengine unreachable at %s (DCGM_HOSTENGINE_ADDR)",
                 cfg.addrs[0]);
        for (size_t i = 1; i < cfg.n_addrs; i++)
            snprintf(m + strlen(m), sizeof m - strlen(m), ", %s", cfg.addrs[i]);
        /* PF-224: exit 1; infrastructure, not a hardware finding: not fatal. */
        return failure(pub, &cfg, 0, "DCGM_HOSTENGINE_UNREACHABLE", m);
    }
    live_handle = h;

    /* 3. Match by UUID (upstream passed container-local indices). */
    unsigned int ids[GR_DCGM_MAX_GPUS];
    int nids = 0;
    rc = gpu.dcgm->gpu_ids(h, ids, &nids);
    if (rc != 0)
        return failure(pub, &cfg, 0, gr_checks_dcgm_st_name(rc), "DCGM cannot list its GPUs");
    for (unsigned int i = 0; i < nmine; i++) {
        int found = 0;
        for (int k = 0; k < nids && !found; k++) {
            char u[GR_GPU_UUID_MAX] = "";
            if (gpu.dcgm->gpu_uuid(h, ids[k], u, sizeof u) == 0 && strcmp(u, mine[i].uuid) == 0) {
                mine[i].gpu_id = ids[k];
                found = 1;
            }
        }
        if (!found) {
            char m[512];
            snprintf(m, sizeof m, "GPU %s is not managed by the DCGM hostengine at %s",
                     mine[i].uuid, addr);
            return failure(pub, &cfg, 0, NULL, m);
        }
        gr_log(GR_LOG_INFO, MOD, "GPU matched", GR_KV_STR("uuid", mine[i].uuid),
               GR_KV_INT("dcgm_gpu_id", mine[i].gpu_id), GR_KV_END);
    }

    /* 4. Diagnose with DCGM_ST_* retries (PF-53, PF-54). */
    static gr_dcgm_diag diag;
    int attempts = 0, stopped_stale = 0;
    int st = 0;
    for (;;) {
        attempts++;
        uintptr_t grp = 0;
        st = gpu.dcgm->group_create(h, "nvsentinel-preflight-diag", &grp);
        for (unsigned int i = 0; st == 0 && i < nmine; i++)
            st = gpu.dcgm->group_add(h, grp, mine[i].gpu_id);
        if (st == 0) {
            diag_running = 1;
            st = gpu.dcgm->run_diag(h, grp, cfg.level, &diag);
            diag_running = 0;
        }
        if (grp)
            gpu.dcgm->group_destroy(h, grp);
        if (st == 0 || !gr_checks_dcgm_st_name(st))
            break;
        gr_log(GR_LOG_WARN, MOD, "DCGM status", GR_KV_STR("status", gr_checks_dcgm_st_name(st)),
               GR_KV_INT("attempt", attempts), GR_KV_INT("max_attempts", cfg.retry_max), GR_KV_END);
        if (attempts >= cfg.retry_max) {
            /* A stale diagnostic (e.g. left by a killed pod): stop it and
             * try once more. */
            if (st == GR_DCGM_ST_DIAG_ALREADY_RUNNING && !stopped_stale) {
                stopped_stale = 1;
                gr_log(GR_LOG_WARN, MOD, "stopping a stale diagnostic", GR_KV_END);
                gpu.dcgm->stop_diag(h);
                sleep_s(cfg.retry_interval_s);
                continue;
            }
            break;
        }
        sleep_s(cfg.retry_interval_s);
    }
    live_handle = 0;
    gpu.dcgm->disconnect(h);
    if (st != 0) {
        const char *name = gr_checks_dcgm_st_name(st);
        if (name) {
            /* PF-55..57: non-fatal, NONE, exit 0. */
            gr_checks_event ev;
            gr_checks_dcgm_status_event(name, attempts, &ev);
            gr_log(GR_LOG_WARN, MOD, "diagnostic did not complete", GR_KV_STR("status", name),
                   GR_KV_INT("attempts", attempts), GR_KV_END);
            report(pub, &ev, &cfg);
            gr_health_publisher_free(pub);
            return GR_CHECKS_EXIT_OK;
        }
        char m[256];
        snprintf(m, sizeof m, "DCGM diagnostic failed: %s (%d)", gpu.dcgm->error_string(st), st);
        return failure(pub, &cfg, 1, NULL, m);
    }

    /* 5. One event per test result (PF-250). */
    static gr_checks_event events[GR_DCGM_MAX_RESULTS];
    size_t nev = 0;
    int fatal = 0;
    gr_checks_dcgm_events(&diag, mine, nmine, &map, events, GR_DCGM_MAX_RESULTS, &nev, &fatal);
    for (size_t i = 0; i < nev; i++)
        report(pub, &events[i], &cfg);
    gr_log(fatal ? GR_LOG_ERROR : GR_LOG_INFO, MOD, "diagnostic finished",
           GR_KV_INT("events", (long long)nev), GR_KV_BOOL("fatal", fatal),
           GR_KV_INT("diag_level", cfg.level), GR_KV_END);
    gr_health_publisher_free(pub);
    return gr_checks_finish(MOD, fatal ? GR_CHECKS_EXIT_FAIL : GR_CHECKS_EXIT_OK, cfg.strategy);
}
