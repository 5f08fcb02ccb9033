/*
 * gr_checks.h — pure logic shared by the three preflight check programs
 * (library gr_checks): environment parsing, message sizes, bandwidth math,
 * verdicts and the health events they produce. No I/O, no clock, no GPU.
 *
 * Contract: ../shared/spec/nvsentinel-preflight.md (exit-code table, "A check
 * can exit 0 and still report an unhealthy GPU") and
 * ../shared/notes/preflight-upstream-facts.md §6. Messages the contract
 * spells out are the GR_CHECKS_MSG_* constants below, byte for byte.
 *
 * Environment access goes through a gr_checks_getenv callback so the parsers
 * can be tested with a table instead of the process environment.
 *
 * Ownership: every struct here is a plain value (fixed-size buffers, no
 * heap); string pointers inside gr_checks_event point into the event itself
 * or at static strings.
 */
#ifndef GR_CHECKS_H
#define GR_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include "gr_err.h"
#include "gr_health_event.h"

/* --- exit codes (spec: "1. Check the exit code") -------------------------- */

enum {
    GR_CHECKS_EXIT_OK = 0,
    GR_CHECKS_EXIT_FAIL = 1,          /* test failed (all); dcgm-diag: also config/unreachable */
    GR_CHECKS_EXIT_CONFIG = 2,        /* NCCL checks: configuration / gang configuration error */
    GR_CHECKS_EXIT_LOOPBACK_SEND = 3, /* nccl-loopback: could not send the health event */
    GR_CHECKS_EXIT_GANG_TIMEOUT = 3,  /* nccl-allreduce: gang formation timed out */
    GR_CHECKS_EXIT_ALLREDUCE_SEND = 4 /* nccl-allreduce: could not send the health event */
};

/* --- contract strings ----------------------------------------------------- */

#define GR_CHECKS_MSG_STORE_ONLY "Check failed (STORE_ONLY \xe2\x80\x94 not blocking pod)"
#define GR_CHECKS_MSG_CONFIG     "Configuration error"
#define GR_CHECKS_MSG_BAD_SIZE   "Invalid size format: %s. Use G/GB or M/MB suffix."

#define GR_CHECKS_MSG_LOOPBACK_ERROR "NCCL loopback test failed: %s"
#define GR_CHECKS_MSG_LOOPBACK_SKIP                                                         \
    "NCCL all-reduce completed successfully with bus bandwidth %.2f GB/s (threshold check " \
    "skipped)"
#define GR_CHECKS_MSG_BW_BELOW \
    "NCCL all-reduce bus bandwidth %.2f GB/s is below threshold %.2f GB/s"
#define GR_CHECKS_MSG_BW_MEETS     "NCCL all-reduce bus bandwidth %.2f GB/s meets threshold %.2f GB/s"
#define GR_CHECKS_MSG_INIT_FAILED  "Failed to initialize NCCL: %s"
#define GR_CHECKS_MSG_BENCH_FAILED "NCCL all-reduce benchmark failed: %s"
#define GR_CHECKS_MSG_GANG_TIMEOUT "Gang formation timeout after %ds"
#define GR_CHECKS_MSG_NOT_IN_PEERS "Pod %s not found in peers list"
#define GR_CHECKS_MSG_NO_MASTER    "Master address not set in ConfigMap"
#define GR_CHECKS_MSG_MISMATCH     "Check name mismatch across gang: %s"

/* Agents, check names, error codes. */
#define GR_CHECKS_AGENT_DCGM      "preflight-dcgm-diag"
#define GR_CHECKS_AGENT_LOOPBACK  "preflight-nccl-loopback"
#define GR_CHECKS_AGENT_ALLREDUCE "preflight-nccl-allreduce"
#define GR_CHECKS_CHECK_LOOPBACK  "NCCLLoopbackTest"
#define GR_CHECKS_CHECK_ALLREDUCE "NCCLAllReduceTest"
#define GR_CHECKS_CHECK_DCGM      "DcgmDiagnostic"

/* --- environment ---------------------------------------------------------- */

/* Returns the value of `name` or NULL. */
typedef const char *(*gr_checks_getenv)(void *ctx, const char *name);
/* The process environment (ctx ignored). */
const char *gr_checks_process_env(void *ctx, const char *name);

/* Go strconv.ParseBool: 1 t T TRUE true True / 0 f F FALSE false False.
 * GR_EINVAL otherwise. */
int gr_checks_parse_go_bool(const char *s, int *out);
/* Python-style: true/1/yes (any case) → 1, anything else → 0. */
int gr_checks_parse_loose_bool(const char *s);
/* Whole decimal integer in [min,max] (surrounding spaces allowed). GR_EINVAL. */
int gr_checks_parse_long(const char *s, long min, long max, long *out);
/* Finite decimal number > 0 (or >= 0 when allow_zero). GR_EINVAL. */
int gr_checks_parse_positive(const char *s, int allow_zero, double *out);

/* One size: "<number><G|GB|M|MB>" (case-insensitive, decimals allowed and
 * truncated to whole bytes, e.g. "1.5G"), > 0, at most 1 TiB. GR_EINVAL with
 * GR_CHECKS_MSG_BAD_SIZE. */
int gr_checks_parse_size(const char *s, uint64_t *bytes, gr_err *err);
#define GR_CHECKS_MAX_SIZES 16
/* Comma-separated list of sizes (blank items skipped, at least one, at most
 * GR_CHECKS_MAX_SIZES). GR_EINVAL. */
int gr_checks_parse_sizes(const char *list, uint64_t *out, size_t *n, gr_err *err);
/* "sum" "prod" "min" "max" "avg" (case-insensitive) → GR_NCCL_* op. GR_EINVAL. */
int gr_checks_parse_reduce_op(const char *s, int *op, gr_err *err);
const char *gr_checks_reduce_op_name(int op);

/* --- bandwidth (as nccl-tests defines it) ---------------------------------- */

/* algbw in GB/s (1e9 bytes/s): bytes / (ns / 1e9) / 1e9. 0 when ns <= 0. */
double gr_checks_algbw(uint64_t bytes, int64_t ns_per_iter);
/* busbw = algbw * 2(n-1)/n for all-reduce; 0 for n <= 1. */
double gr_checks_busbw(double algbw, int nranks);

/* --- events ----------------------------------------------------------------- */

typedef struct gr_checks_event {
    char check_name[96];
    int is_fatal;
    int is_healthy;
    gr_health_action action;
    char message[1024];
    char error_code[64];  /* "" = none */
    char entity_uuid[96]; /* GPU_UUID entity, "" = none */
} gr_checks_event;

void gr_checks_event_set(gr_checks_event *ev, const char *check_name, int healthy, int fatal,
                         gr_health_action action, const char *error_code, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* View `ev` as a gr_health_event (borrowing ev, agent, component_class and
 * node; codes/entity storage provided by the caller). */
void gr_checks_event_view(const gr_checks_event *ev, const char *agent, const char *component_class,
                          const char *node, gr_health_strategy strategy, const char **code_slot,
                          gr_health_entity *entity_slot, gr_health_event *out);

/* STORE_ONLY gate: a test-stage exit code becomes 0 under STORE_ONLY. */
int gr_checks_store_only_gate(int code, gr_health_strategy strategy);

/* --- nccl-loopback ----------------------------------------------------------- */

typedef struct gr_checks_loopback_config {
    double threshold_gbps; /* BW_THRESHOLD_GBPS, default 150 */
    int skip_bw_check;     /* SKIP_BANDWIDTH_CHECK (Go bool; invalid → warn, false) */
    int skip_invalid;      /* 1 when SKIP_BANDWIDTH_CHECK was set but not a bool */
    uint64_t size_bytes;   /* TEST_SIZE_MB * 2^20, default 256 MiB */
    int warmup_iters;      /* 5 (nccl-tests default) */
    int iters;             /* 20 (nccl-tests default) */
    char node_name[256];   /* NODE_NAME, required */
    gr_health_strategy strategy;
} gr_checks_loopback_config;

/* GR_EINVAL naming the variable (a configuration error: exit 2, no event). */
int gr_checks_loopback_config_parse(gr_checks_getenv env, void *ctx, gr_checks_loopback_config *cfg,
                                    gr_err *err);

typedef struct gr_checks_bw {
    uint64_t bytes;
    int nranks;
    int64_t ns_per_iter;
    double algbw; /* GB/s */
    double busbw; /* GB/s */
} gr_checks_bw;

/* The loopback verdict: fills the event, returns the exit code before the
 * STORE_ONLY gate and before delivery (0 or 1). `error` non-NULL means the
 * benchmark did not run (NCCL_TEST_ERROR). */
int gr_checks_loopback_verdict(const gr_checks_loopback_config *cfg, const gr_checks_bw *bw,
                               const char *error, gr_checks_event *ev);

/* --- nccl-allreduce ------------------------------------------------------------ */

typedef struct gr_checks_allreduce_config {
    double threshold_gbps; /* BW_THRESHOLD_GBPS, default 100 */
    int skip_bw_check;     /* SKIP_BANDWIDTH_CHECK: true/1/yes */
    uint64_t sizes[GR_CHECKS_MAX_SIZES];
    size_t n_sizes;          /* MESSAGE_SIZES, default 4G,8G */
    int iters;               /* BENCHMARK_ITERS >= 1, default 20 */
    int warmup_iters;        /* WARMUP_ITERS >= 0, default 5 */
    int op;                  /* NCCL_REDUCE_OP, default sum */
    char pod_name[256];      /* POD_NAME, required */
    char node_name[256];     /* NODE_NAME, required */
    char gang_dir[1024];     /* GANG_CONFIG_DIR, default /etc/preflight */
    int gang_timeout_s;      /* GANG_TIMEOUT_SECONDS, default 600 */
    int gpus_per_node;       /* NPROCS_PER_NODE, 0 = all visible GPUs */
    int bootstrap_timeout_s; /* BOOTSTRAP_TIMEOUT_SECONDS, default 300 */
    gr_health_strategy strategy;
} gr_checks_allreduce_config;

/* GR_EINVAL naming the variable. A missing POD_NAME is reported with
 * *gang_error = 1 (a gang configuration error, NCCL_GANG_CONFIG_ERROR). */
int gr_checks_allreduce_config_parse(gr_checks_getenv env, void *ctx,
                                     gr_checks_allreduce_config *cfg, int *gang_error, gr_err *err);

/* The verdict over the per-size results (busbw each). Reported value = the
 * minimum busbw; pass iff every size meets the threshold or the check is
 * skipped. Returns 0 or 1. */
int gr_checks_allreduce_verdict(const gr_checks_allreduce_config *cfg, const gr_checks_bw *bw,
                                size_t n, gr_checks_event *ev);

#endif
