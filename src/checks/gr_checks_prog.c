/* gr_checks_prog.c — program helpers and NCCL benchmarks (see gr_checks_prog.h). */
#include "gr_checks_prog.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gr_log.h"

volatile sig_atomic_t gr_checks_stop;

static void on_signal(int sig)
{
    gr_checks_stop = sig;
}

void gr_checks_prog_init(const char *module)
{
    gr_err err;
    if (gr_log_init(GR_VERSION, &err) != GR_OK)
        gr_log(GR_LOG_WARN, module, "ignoring LOG_LEVEL", GR_KV_STR("error", err.msg), GR_KV_END);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

int gr_checks_config_error(const char *module, const gr_err *err, int code)
{
    gr_log(GR_LOG_ERROR, module, GR_CHECKS_MSG_CONFIG, GR_KV_STR("error", err->msg),
           GR_KV_INT("exit_code", code), GR_KV_END);
    return code;
}

int gr_checks_publish(gr_health_publisher *pub, const gr_checks_event *ev, const char *agent,
                      const char *component_class, const char *node, gr_health_strategy strategy)
{
    const char *code;
    gr_health_entity ent;
    gr_health_event hev;
    gr_checks_event_view(ev, agent, component_class, node, strategy, &code, &ent, &hev);
    gr_health_report rep;
    gr_err err;
    int rc = gr_health_publish(pub, &hev, &rep, &err);
    if (rc == GR_OK)
        gr_log(GR_LOG_INFO, agent, "health event sent", GR_KV_STR("check", ev->check_name),
               GR_KV_BOOL("healthy", ev->is_healthy), GR_KV_BOOL("fatal", ev->is_fatal),
               GR_KV_STR("error_code", ev->error_code), GR_KV_STR("gpu", ev->entity_uuid),
               GR_KV_STR("message", ev->message), GR_KV_END);
    else
        gr_log(GR_LOG_ERROR, agent, "health event not delivered",
               GR_KV_STR("check", ev->check_name), GR_KV_STR("error", err.msg),
               GR_KV_INT("attempts", rep.attempts), GR_KV_END);
    return rc;
}

int gr_checks_finish(const char *module, int code, gr_health_strategy strategy)
{
    int out = gr_checks_store_only_gate(code, strategy);
    if (out != code)
        gr_log(GR_LOG_WARN, module, GR_CHECKS_MSG_STORE_ONLY, GR_KV_INT("exit_code", code),
               GR_KV_END);
    return out;
}

#define CU(call, what)                                                                         \
    do {                                                                                       \
        int rc_ = (call);                                                                      \
        if (rc_ != 0) {                                                                        \
            snprintf(errbuf, errlen, "%s failed: %s (%d)", what, gpu->cuda->error_string(rc_), \
                     rc_);                                                                     \
            goto out;                                                                          \
        }                                                                                      \
    } while (0)
#define NC(call, what)                                                                         \
    do {                                                                                       \
        int rc_ = (call);                                                                      \
        if (rc_ != 0) {                                                                        \
            snprintf(errbuf, errlen, "%s failed: %s (%d)", what, gpu->nccl->error_string(rc_), \
                     rc_);                                                                     \
            goto out;                                                                          \
        }                                                                                      \
    } while (0)

int gr_checks_loopback_run(const gr_gpu *gpu, int ndev, uint64_t bytes, int warmup, int iters,
                           gr_checks_bw *out, char *errbuf, size_t errlen)
{
    int rc = GR_EIO;
    size_t count = (size_t)(bytes / 4);
    uint64_t *sendb = calloc((size_t)ndev, sizeof *sendb);
    uint64_t *recvb = calloc((size_t)ndev, sizeof *recvb);
    void **streams = calloc((size_t)ndev, sizeof *streams);
    void **comms = calloc((size_t)ndev, sizeof *comms);
    int *devs = calloc((size_t)ndev, sizeof *devs);
    snprintf(errbuf, errlen, "out of memory");
    if (!sendb || !recvb || !streams || !comms || !devs)
        goto out;
    for (int i = 0; i < ndev; i++) {
        devs[i] = i;
        CU(gpu->cuda->set_device(i), "cuDevicePrimaryCtxRetain/cuCtxSetCurrent");
        CU(gpu->cuda->mem_alloc(&sendb[i], (size_t)bytes), "cuMemAlloc");
        CU(gpu->cuda->mem_alloc(&recvb[i], (size_t)bytes), "cuMemAlloc");
        CU(gpu->cuda->memset_d32(sendb[i], 0x3f800000u, count), "cuMemsetD32"); /* 1.0f */
        CU(gpu->cuda->stream_create(&streams[i]), "cuStreamCreate");
    }
    NC(gpu->nccl->comm_init_all(comms, ndev, devs), "ncclCommInitAll");
    int64_t t0 = 0;
    for (int it = 0; it < warmup + iters; it++) {
        if (gr_checks_stop) {
            rc = GR_ECANCELED;
            snprintf(errbuf, errlen, "stopped by signal %d", (int)gr_checks_stop);
            goto out;
        }
        if (it == warmup) {
            for (int i = 0; i < ndev; i++)
                CU(gpu->cuda->stream_sync(streams[i]), "cuStreamSynchronize");
            t0 = gpu->cuda->now_ns();
        }
        NC(gpu->nccl->group_start(), "ncclGroupStart");
        for (int i = 0; i < ndev; i++)
            NC(gpu->nccl->all_reduce((const void *)(uintptr_t)sendb[i], (void *)(uintptr_t)recvb[i],
                                     count, GR_NCCL_FLOAT32, GR_NCCL_SUM, comms[i], streams[i]),
               "ncclAllReduce");
        NC(gpu->nccl->group_end(), "ncclGroupEnd");
    }
    for (int i = 0; i < ndev; i++)
        CU(gpu->cuda->stream_sync(streams[i]), "cuStreamSynchronize");
    int64_t t1 = gpu->cuda->now_ns();
    out->bytes = bytes;
    out->nranks = ndev;
    out->ns_per_iter = iters > 0 ? (t1 - t0) / iters : 0;
    out->algbw = gr_checks_algbw(bytes, out->ns_per_iter);
    out->busbw = gr_checks_busbw(out->algbw, ndev);
    errbuf[0] = '\0';
    rc = GR_OK;
out:
    for (int i = 0; comms && i < ndev; i++)
        if (comms[i])
            gpu->nccl->comm_destroy(comms[i]);
    for (int i = 0; streams && i < ndev; i++) {
        if (gpu->cuda->set_device(i) != 0)
            continue;
        if (streams[i])
            gpu->cuda->stream_destroy(streams[i]);
        if (sendb && sendb[i])
            gpu->cuda->mem_free(sendb[i]);
        if (recvb && recvb[i])
            gpu->cuda->mem_free(recvb[i]);
    }
    free(sendb);
    free(recvb);
    free(streams);
    free(comms);
    free(devs);
    return rc;
}

typedef struct worker {
    const gr_gpu *gpu;
    const gr_gpu_nccl_id *id;
    const gr_checks_allreduce_config *cfg;
    int local, rank, world;
    int64_t ns[GR_CHECKS_MAX_SIZES];
    int rc; /* GR_OK, GR_ENOTFOUND (init), GR_EIO (benchmark), GR_ECANCELED */
    char err[512];
    pthread_mutex_t *mu;
    pthread_cond_t *cv;
    int *done;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    const gr_gpu *gpu = w->gpu;
    char *errbuf = w->err;
    size_t errlen = sizeof w->err;
    uint64_t max = 0;
    for (size_t s = 0; s < w->cfg->n_sizes; s++)
        if (w->cfg->sizes[s] > max)
            max = w->cfg->sizes[s];
    uint64_t buf = 0;
    void *stream = NULL, *comm = NULL;
    w->rc = GR_ENOTFOUND;
    CU(gpu->cuda->set_device(w->local), "cuDevicePrimaryCtxRetain/cuCtxSetCurrent");
    CU(gpu->cuda->mem_alloc(&buf, (size_t)max), "cuMemAlloc");
    CU(gpu->cuda->memset_d32(buf, 0x3f800000u, (size_t)(max / 4)), "cuMemsetD32");
    CU(gpu->cuda->stream_create(&stream), "cuStreamCreate");
    NC(gpu->nccl->comm_init_rank(&comm, w->world, w->id, w->rank), "ncclCommInitRank");
    w->rc = GR_EIO;
    for (size_t s = 0; s < w->cfg->n_sizes; s++) {
        size_t count = (size_t)(w->cfg->sizes[s] / 4);
        int64_t t0 = 0;
        for (int it = 0; it < w->cfg->warmup_iters + w->cfg->iters; it++) {
            if (gr_checks_stop) {
                w->rc = GR_ECANCELED;
                snprintf(errbuf, errlen, "stopped by signal %d", (int)gr_checks_stop);
                goto out;
            }
            if (it == w->cfg->warmup_iters) {
                CU(gpu->cuda->stream_sync(stream), "cuStreamSynchronize");
                t0 = gpu->cuda->now_ns();
            }
            NC(gpu->nccl->all_reduce((const void *)(uintptr_t)buf, (void *)(uintptr_t)buf, count,
                                     GR_NCCL_FLOAT32, w->cfg->op, comm, stream),
               "ncclAllReduce");
        }
        CU(gpu->cuda->stream_sync(stream), "cuStreamSynchronize");
        w->ns[s] = (gpu->cuda->now_ns() - t0) / w->cfg->iters;
    }
    w->rc = GR_OK;
out:
    if (comm) {
        if (w->rc == GR_OK)
            gpu->nccl->comm_destroy(comm);
        else
            gpu->nccl->comm_abort(comm);
    }
    if (stream)
        gpu->cuda->stream_destroy(stream);
    if (buf)
        gpu->cuda->mem_free(buf);
    pthread_mutex_lock(w->mu);
    (*w->done)++;
    pthread_cond_broadcast(w->cv);
    pthread_mutex_unlock(w->mu);
    return NULL;
}

int gr_checks_allreduce_run(const gr_gpu *gpu, const gr_gpu_nccl_id *id, int node_rank, int nnodes,
                            int gpus_per_node, const gr_checks_allreduce_config *cfg,
                            gr_checks_bw *out, char *errbuf, size_t errlen)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    static int done;
    worker *ws = calloc((size_t)gpus_per_node, sizeof *ws);
    if (!ws) {
        snprintf(errbuf, errlen, "out of memory");
        return GR_EIO;
    }
    int world = nnodes * gpus_per_node;
    int started = 0;
    for (int l = 0; l < gpus_per_node; l++) {
        ws[l] = (worker){.gpu = gpu,
                         .id = id,
                         .cfg = cfg,
                         .local = l,
                         .rank = node_rank * gpus_per_node + l,
                         .world = world,
                         .mu = &mu,
                         .cv = &cv,
                         .done = &done};
        pthread_t t;
        if (pthread_create(&t, NULL, worker_main, &ws[l]) != 0) {
            snprintf(errbuf, errlen, "cannot start a thread for GPU %d", l);
            break;
        }
        pthread_detach(t);
        started++;
    }
    /* Wait for all; once one failed, give the others 30 s (a rank stuck in
     * NCCL init because a peer died would block forever). */
    pthread_mutex_lock(&mu);
    int64_t grace_end = 0;
    while (done < started) {
        int failed = 0;
        for (int l = 0; l < started; l++)
            failed |= ws[l].rc != GR_OK && ws[l].err[0];
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        if (failed && !grace_end)
            grace_end = (int64_t)ts.tv_sec + 30;
        if (grace_end && ts.tv_sec >= grace_end)
            break;
        ts.tv_sec += 1;
        pthread_cond_timedwait(&cv, &mu, &ts);
    }
    pthread_mutex_unlock(&mu);
    int rc = started == gpus_per_node ? GR_OK : GR_ENOTFOUND;
    for (int l = 0; l < started && rc == GR_OK; l++) {
        if (ws[l].rc != GR_OK) {
            rc = ws[l].err[0] ? ws[l].rc : GR_EIO;
            snprintf(errbuf, errlen, "GPU %d (rank %d): %s", l, ws[l].rank,
                     ws[l].err[0] ? ws[l].err : "did not finish");
        }
    }
    if (rc == GR_OK) {
        for (size_t s = 0; s < cfg->n_sizes; s++) {
            int64_t slowest = 0;
            for (int l = 0; l < gpus_per_node; l++)
                if (ws[l].ns[s] > slowest)
                    slowest = ws[l].ns[s];
            out[s].bytes = cfg->sizes[s];
            out[s].nranks = world;
            out[s].ns_per_iter = slowest;
            out[s].algbw = gr_checks_algbw(cfg->sizes[s], slowest);
            out[s].busbw = gr_checks_busbw(out[s].algbw, world);
        }
        free(ws);
    }
    /* On failure, threads may still run: leak ws deliberately; the process
     * exits right after reporting. */
    return rc;
}
