/*
 * gr_sim.h — the simulated GPU cluster's pure logic (issue 19; see
 * docs/simulated-cluster.md): the fault spec, the fake GPU nodes, and what a
 * workload pod on a fake node does (exit code, duration, log text shaped
 * like NCCL-tests' all_reduce_perf and DCGM's `dcgmi diag`).
 *
 * Test infrastructure, not product: it lives under test/sim/ and is driven
 * by the `gpuready-sim` program that scripts/cluster runs next to KWOK.
 * Nothing here does I/O except gr_sim_spec_load_file(); functions that
 * depend on time take `now_ns` (Unix nanoseconds).
 *
 * Errors: GR_EINVAL with a message naming the field and the fix for a bad
 * spec or option, GR_EPARSE for malformed YAML/JSON, GR_ETOOBIG past a cap,
 * GR_ENOMEM.
 *
 * Memory: a gr_sim_spec owns its arrays; release with gr_sim_spec_free().
 * Every json_t returned through an out-parameter is a new reference owned
 * by the caller. Strings filled into caller buffers are NUL-terminated and
 * truncated never overflowed; char* fields of structs returned by pointer
 * are borrowed from the owning struct.
 */
#ifndef GR_SIM_H
#define GR_SIM_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_buf.h"
#include "gr_err.h"

/* Caps on outside input. */
#define GR_SIM_SPEC_MAX_BYTES ((size_t)1024 * 1024)     /* fault spec file */
#define GR_SIM_MAX_FAULTS     4096                      /* entries per list */
#define GR_SIM_MAX_NODES      10000                     /* --gpu-nodes */
#define GR_SIM_STREAM_MAX     ((size_t)4 * 1024 * 1024) /* one JSON object in a watch stream */
#define GR_SIM_NAME_MAX       254

/* Annotations (the contract between the simulator and the KWOK stages in
 * deploy/sim/kwok.yaml). A pod that carries EXIT_CODE is completed by KWOK
 * after DURATION (a Go duration) with that exit code. */
#define GR_SIM_ANN_EXIT_CODE "sim.gpuready.io/exit-code"
#define GR_SIM_ANN_DURATION  "sim.gpuready.io/duration"
#define GR_SIM_ANN_WORKLOAD  "sim.gpuready.io/workload"
#define GR_SIM_ANN_NOT_READY "sim.gpuready.io/not-ready"
#define GR_SIM_LABEL_NODE    "sim.gpuready.io/node"

typedef enum {
    GR_SIM_FROM_FIRST_POD = 0, /* offset counts from the first simulated pod on the node */
    GR_SIM_FROM_START = 1,     /* offset counts from the simulator's start */
} gr_sim_from;

typedef struct gr_sim_timed {
    int enabled;
    int64_t after_ns;
    gr_sim_from from;
} gr_sim_timed;

typedef struct gr_sim_node_fault {
    char name[GR_SIM_NAME_MAX];
    double busbw_gbps; /* < 0: the GPU's default */
    int dcgm_fail;
    char dcgm_test[64]; /* failing diagnostic, e.g. "GPU Memory" */
    char dcgm_message[256];
    int dcgm_exit_code;
    gr_sim_timed not_ready;
    gr_sim_timed cordon;
    int gpus; /* < 0: the GPU's count; else the node's nvidia.com/gpu capacity and allocatable
               * (a GPU fell off the bus: the device plugin advertises fewer) */
} gr_sim_node_fault;

/* A failing TrainJob, matched by name and/or by node (at least one given):
 * a pod of a JobSet (label jobset.sigs.k8s.io/jobset-name, i.e. a TrainJob)
 * whose JobSet has that name, and/or that uses GPUs on that node (a pod
 * without GPUs, such as an MPI launcher, is no rank there), exits with
 * exit_code. By node targets the TrainJobs a controller names itself (the
 * NVCRE Job controller's generated names). */
typedef struct gr_sim_job_fault {
    char name[GR_SIM_NAME_MAX];       /* TrainJob (= JobSet) name; "" = any */
    char node[GR_SIM_NAME_MAX];       /* the pod's node; "" = any */
    char namespace_[GR_SIM_NAME_MAX]; /* "" = any namespace */
    int exit_code;
    char message[256]; /* the failing pod's last log line ("" = a default) */
} gr_sim_job_fault;

typedef struct gr_sim_spec {
    double busbw_gbps;   /* healthy busbw; < 0: the GPU's default */
    int64_t duration_ns; /* generic pods */
    int64_t nccl_duration_ns;
    int64_t dcgm_duration_ns;
    gr_sim_node_fault *nodes;
    size_t n_nodes;
    gr_sim_job_fault *train_jobs;
    size_t n_train_jobs;
    json_t *unschedulable; /* array of label selectors ({matchLabels,...}); owned */
} gr_sim_spec;

/* An empty spec (all nodes healthy, default durations). */
void gr_sim_spec_init(gr_sim_spec *s);
void gr_sim_spec_free(gr_sim_spec *s);
/* Parse a fault spec from YAML (the format is in docs/simulated-cluster.md).
 * On error *s is left empty (no need to free). */
int gr_sim_spec_parse(const char *buf, size_t len, const char *name, gr_sim_spec *s, gr_err *err);
int gr_sim_spec_load_file(const char *path, gr_sim_spec *s, gr_err *err);
/* The fault of a node, or NULL (borrowed from s). */
const gr_sim_node_fault *gr_sim_spec_node(const gr_sim_spec *s, const char *node);

/* ---------------------------------------------------------------- nodes */

typedef struct gr_sim_gpu {
    const char *key;        /* h100 */
    const char *product;    /* nvidia.com/gpu.product */
    const char *family;     /* nvidia.com/gpu.family */
    const char *model_name; /* as nvidia-smi prints it */
    int memory_mib;
    int cc_major, cc_minor;
    int gpus_per_node, mlnx_per_node;
    double busbw_gbps;     /* healthy all_reduce bus bandwidth */
    const char *cpu_arch;  /* amd64 / arm64 */
    const char *device_id; /* PCI device id */
} gr_sim_gpu;

/* Known GPUs and platforms. Lookup returns NULL for unknown names. */
const gr_sim_gpu *gr_sim_gpu_find(const char *key);
int gr_sim_platform_valid(const char *platform);
/* Space-separated lists for messages/help (static strings). */
const char *gr_sim_gpu_names(void);
const char *gr_sim_platform_names(void);

/* The name of node i (0-based) among n: gpu-node-01 … (at least 2 digits). */
void gr_sim_node_name(size_t i, size_t n, char *out, size_t outsz);

/* A v1 List of n Node objects for KWOK to manage (label type=kwok,
 * annotation kwok.x-k8s.io/node=fake), with GPU capacity, GPU-feature-
 * discovery labels, providerID/instance type/topology/NIC resources per
 * platform. Deterministic for the same arguments. */
int gr_sim_nodes(size_t n, const char *platform, const char *gpu, json_t **out, gr_err *err);
/* As gr_sim_nodes(), with the spec's node faults that shape a node (gpus)
 * applied; s may be NULL. */
int gr_sim_nodes_spec(size_t n, const char *platform, const char *gpu, const gr_sim_spec *s,
                      json_t **out, gr_err *err);

/* ---------------------------------------------------------------- pods */

typedef enum { GR_SIM_GENERIC = 0, GR_SIM_NCCL, GR_SIM_DCGM } gr_sim_kind;

typedef struct gr_sim_plan {
    int act;          /* 0: leave the pod alone (why in skip) */
    const char *skip; /* static reason when act == 0 */
    gr_sim_kind kind;
    char namespace_[GR_SIM_NAME_MAX];
    char name[GR_SIM_NAME_MAX];
    char uid[64];
    char node[GR_SIM_NAME_MAX];
    char container[GR_SIM_NAME_MAX]; /* first container */
    int exit_code;
    int64_t duration_ns;
    double busbw_gbps;                 /* NCCL: the node's peak busbw */
    const gr_sim_job_fault *job_fault; /* the trainJobs entry that fails it (borrowed), or NULL */
} gr_sim_plan;

/* Decide what a pod does. Acts on pods bound to a node, phase Running (KWOK
 * started them), restartPolicy Never/OnFailure, not yet carrying
 * GR_SIM_ANN_EXIT_CODE. `gpu` is the cluster's GPU key (for defaults). */
int gr_sim_pod_plan(const gr_sim_spec *s, const char *gpu, const json_t *pod, gr_sim_plan *out,
                    gr_err *err);

/* The pod's log in CRI format ("<RFC3339Nano> stdout F <line>\n" per line),
 * what KWOK's Logs resource serves. Appends to out. */
int gr_sim_pod_log(const gr_sim_plan *p, const gr_sim_spec *s, const char *gpu, const json_t *pod,
                   int64_t now_ns, gr_buf *out, gr_err *err);

/* The YAML documents to server-side-apply for a planned pod: a KWOK Logs
 * object pointing at logs_file, and the pod's annotations. */
int gr_sim_pod_apply_yaml(const gr_sim_plan *p, const char *logs_file, gr_buf *out, gr_err *err);

/* ---------------------------------------------------------------- groups */

/* Multi-node NCCL: every rank of a multi-node all_reduce reports the same
 * bus bandwidth, bounded by the slowest node. A pod's group is its JobSet
 * (label jobset.sigs.k8s.io/jobset-name, i.e. a TrainJob) or its Indexed
 * Job (job-name, when the pod has a completion index), per namespace; an
 * NCCL pod's busbw is the lowest peak among the nodes its group's pods are
 * bound to, as seen so far in the watch stream (the scheduler binds a
 * gang's pods before KWOK starts them). Capped at GR_SIM_MAX_GROUP_PODS
 * remembered pods (the oldest are forgotten). */
#define GR_SIM_MAX_GROUP_PODS 65536

typedef struct gr_sim_group_pod {
    char group[2 * GR_SIM_NAME_MAX];
    char uid[64];
    char node[GR_SIM_NAME_MAX];
} gr_sim_group_pod;

typedef struct gr_sim_groups {
    gr_sim_group_pod *e;
    size_t n, cap, next; /* next: ring position once full */
} gr_sim_groups;

void gr_sim_groups_init(gr_sim_groups *g);
void gr_sim_groups_free(gr_sim_groups *g);
/* The pod's group key ("" when it has none). */
void gr_sim_pod_group(const json_t *pod, char *out, size_t outsz);
/* The nvidia.com/gpu the pod's containers ask for (limits, else requests;
 * 0 when none). */
long gr_sim_pod_gpus(const json_t *pod);
/* Remember a bound pod's node for its group; pods without GPUs (an MPI
 * launcher) run no rank and are not remembered. GR_ENOMEM only. */
int gr_sim_groups_observe(gr_sim_groups *g, const json_t *pod);
/* The peak busbw of one node under the spec (GPU default, spec defaults,
 * node fault). */
double gr_sim_node_busbw(const gr_sim_spec *s, const char *gpu, const char *node);
/* For an NCCL plan: lower p->busbw_gbps to the slowest node of its group. */
void gr_sim_groups_apply(const gr_sim_groups *g, const gr_sim_spec *s, const char *gpu,
                         const json_t *pod, gr_sim_plan *p);

/* ---------------------------------------------------------------- stream */

/* Splits a byte stream of concatenated JSON values (kubectl get -w -o json)
 * into single values; each is capped at GR_SIM_STREAM_MAX. */
typedef struct gr_sim_stream {
    gr_buf cur;
    int depth, in_str, esc;
} gr_sim_stream;

void gr_sim_stream_init(gr_sim_stream *st);
void gr_sim_stream_free(gr_sim_stream *st);
/* Feed bytes; cb is called with each complete value (parsed; borrowed for
 * the call). A value that does not parse or is over the cap is reported
 * through cb with v == NULL and err set, and skipped. A callback returning
 * non-zero stops the feed and that value is returned. */
typedef int (*gr_sim_stream_cb)(void *ctx, json_t *v, const gr_err *err);
int gr_sim_stream_feed(gr_sim_stream *st, const char *data, size_t len, gr_sim_stream_cb cb,
                       void *ctx);

#endif
