/*
 * gr_checks_prog.h — the I/O half shared by the three check programs
 * (library gr_checks_rt): logging, signals, publishing one event, and the
 * NCCL benchmarks over gr_gpu.h.
 *
 * Ownership: nothing returned needs freeing unless stated.
 */
#ifndef GR_CHECKS_PROG_H
#define GR_CHECKS_PROG_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "gr_checks.h"
#include "gr_gpu.h"
#include "gr_health.h"

/* Set by the SIGTERM/SIGINT handler to the signal number. */
extern volatile sig_atomic_t gr_checks_stop;

/* gr_log_init (an unknown LOG_LEVEL is logged and "info" kept) and install
 * the SIGTERM/SIGINT handler that sets gr_checks_stop. */
void gr_checks_prog_init(const char *module);

/* Log a configuration error ("Configuration error", the message and the
 * exit code) at error level. Returns `code`. */
int gr_checks_config_error(const char *module, const gr_err *err, int code);

/* Publish one event; logs the outcome. GR_OK iff delivered. */
int gr_checks_publish(gr_health_publisher *pub, const gr_checks_event *ev, const char *agent,
                      const char *component_class, const char *node, gr_health_strategy strategy);

/* Apply the STORE_ONLY gate, logging GR_CHECKS_MSG_STORE_ONLY when it turns a
 * failure into 0. */
int gr_checks_finish(const char *module, int code, gr_health_strategy strategy);

/* nccl-loopback: all-reduce over `ndev` GPUs in one process (ncclCommInitAll,
 * group calls), out-of-place float32 of `bytes`, `warmup` + `iters`
 * iterations. GR_OK and *out; otherwise a message in errbuf (GR_EIO), or
 * GR_ECANCELED when gr_checks_stop was set. */
int gr_checks_loopback_run(const gr_gpu *gpu, int ndev, uint64_t bytes, int warmup, int iters,
                           gr_checks_bw *out, char *errbuf, size_t errlen);

/* nccl-allreduce: one thread per local GPU joins the communicator with rank
 * node_rank * gpus_per_node + local_rank and runs every size (in place).
 * Returns GR_OK with out[n_sizes] (slowest local GPU per size), or
 * GR_ENOTFOUND (init failed: "Failed to initialize NCCL" case) / GR_EIO
 * (benchmark failed) with a message in errbuf, GR_ECANCELED on a signal. */
int gr_checks_allreduce_run(const gr_gpu *gpu, const gr_gpu_nccl_id *id, int node_rank, int nnodes,
                            int gpus_per_node, const gr_checks_allreduce_config *cfg,
                            gr_checks_bw *out, char *errbuf, size_t errlen);

#endif
