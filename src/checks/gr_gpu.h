/*
 * gr_gpu.h — the GPU libraries the preflight checks use, behind small
 * function tables (library gr_checks_rt).
 *
 * Four interfaces, each with our own declarations of the documented C API of
 * one vendor library, loaded at run time with dlopen (never linked):
 *
 *   gr_gpu_cuda  CUDA driver API   libcuda.so.1
 *   gr_gpu_nccl  NCCL              libnccl.so.2
 *   gr_gpu_nvml  NVML              libnvidia-ml.so.1
 *   gr_gpu_dcgm  DCGM              libdcgm.so.4
 *
 * Two backends implement every table:
 *   - "real" (default): dlopen + dlsym. A missing library or symbol is a
 *     configuration error (GR_ENOTFOUND with a message naming the library or
 *     symbol and the fix), never a crash.
 *   - "test": selected with GR_GPU_BACKEND=test; driven by the JSON scenario
 *     file GR_GPU_SCENARIO (see docs/checks.md, "Test backend"), so the whole
 *     program logic runs in CI without a GPU. It appends one JSON line per
 *     call of interest to GR_GPU_TEST_LOG (when set).
 *
 * Return values: the vendor status code as an int (0 = success for all four
 * libraries); `*_error_string` turns it into a static string. The clock
 * (`now_ns`) belongs to the CUDA table so that the test backend can supply a
 * virtual clock that advances with simulated work.
 *
 * Ownership: gr_gpu_load() returns static tables valid for the life of the
 * process; the loaded libraries are never unloaded. Thread-safety: the tables
 * may be used from several threads as the vendor libraries allow.
 */
#ifndef GR_GPU_H
#define GR_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "gr_err.h"

/* --- CUDA driver API ---------------------------------------------------- */

typedef struct gr_gpu_cuda {
    int (*init)(void);
    int (*device_count)(int *n);
    /* Make the primary context of device `ordinal` current on this thread. */
    int (*set_device)(int ordinal);
    /* Release the primary context retained by set_device. */
    int (*release_device)(int ordinal);
    int (*mem_alloc)(uint64_t *ptr, size_t bytes);
    int (*mem_free)(uint64_t ptr);
    int (*memset_d32)(uint64_t ptr, unsigned int value, size_t count);
    int (*stream_create)(void **stream);
    int (*stream_sync)(void *stream);
    int (*stream_destroy)(void *stream);
    const char *(*error_string)(int rc);
    /* Monotonic clock in ns (the test backend's is virtual, per thread). */
    int64_t (*now_ns)(void);
} gr_gpu_cuda;

/* --- NCCL ---------------------------------------------------------------- */

#define GR_GPU_NCCL_ID_BYTES 128 /* sizeof(ncclUniqueId) */

typedef struct gr_gpu_nccl_id {
    unsigned char internal[GR_GPU_NCCL_ID_BYTES];
} gr_gpu_nccl_id;

/* ncclRedOp_t values */
enum { GR_NCCL_SUM = 0, GR_NCCL_PROD = 1, GR_NCCL_MAX = 2, GR_NCCL_MIN = 3, GR_NCCL_AVG = 4 };
/* ncclDataType_t: ncclFloat32 */
enum { GR_NCCL_FLOAT32 = 7 };

typedef struct gr_gpu_nccl {
    int (*version)(int *v);
    int (*get_unique_id)(gr_gpu_nccl_id *id);
    int (*comm_init_rank)(void **comm, int nranks, const gr_gpu_nccl_id *id, int rank);
    int (*comm_init_all)(void **comms, int ndev, const int *devlist);
    int (*comm_destroy)(void *comm);
    int (*comm_abort)(void *comm);
    int (*all_reduce)(const void *send, void *recv, size_t count, int dtype, int op, void *comm,
                      void *stream);
    int (*group_start)(void);
    int (*group_end)(void);
    const char *(*error_string)(int rc);
} gr_gpu_nccl;

/* --- NVML ---------------------------------------------------------------- */

#define GR_GPU_UUID_MAX 96

typedef struct gr_gpu_nvml {
    int (*init)(void);
    int (*shutdown)(void);
    int (*device_count)(unsigned int *n);
    /* UUID ("GPU-…") of the device at container-local index `idx`. */
    int (*device_uuid)(unsigned int idx, char *buf, unsigned int len);
    const char *(*error_string)(int rc);
} gr_gpu_nvml;

/* --- DCGM ---------------------------------------------------------------- */

#define GR_DCGM_MAX_GPUS      32 /* DCGM_MAX_NUM_DEVICES */
#define GR_DCGM_TEST_NAME_MAX 64
#define GR_DCGM_MSG_MAX       512
#define GR_DCGM_MAX_RESULTS   512

/* dcgmReturn_t values used by the logic. */
enum {
    GR_DCGM_ST_OK = 0,
    GR_DCGM_ST_CONNECTION_NOT_VALID = -21,
    GR_DCGM_ST_IN_USE = -34,
    GR_DCGM_ST_DIAG_ALREADY_RUNNING = -39,
};

/* dcgmDiagResult_t */
typedef enum gr_dcgm_status {
    GR_DCGM_PASS = 0,
    GR_DCGM_SKIP = 1,
    GR_DCGM_WARN = 2,
    GR_DCGM_FAIL = 3,
    GR_DCGM_NOT_RUN = 4,
} gr_dcgm_status;

/* One test result for one hostengine GPU, normalized from the response. */
typedef struct gr_dcgm_result {
    char test[GR_DCGM_TEST_NAME_MAX]; /* e.g. "pcie", "memory", "software" */
    unsigned int gpu_id;              /* hostengine GPU id */
    int status;                       /* gr_dcgm_status (other values: unknown) */
    unsigned int error_code;          /* dcgmError_t, 0 = none */
    char msg[GR_DCGM_MSG_MAX];        /* DCGM error message, "" if none */
} gr_dcgm_result;

typedef struct gr_dcgm_diag {
    size_t n;
    gr_dcgm_result results[GR_DCGM_MAX_RESULTS];
} gr_dcgm_diag;

typedef struct gr_gpu_dcgm {
    int (*init)(void);
    /* addr: "host:port" or a unix socket path; handle receives dcgmHandle_t. */
    int (*connect)(const char *addr, unsigned int timeout_ms, uintptr_t *handle);
    int (*disconnect)(uintptr_t handle);
    int (*gpu_ids)(uintptr_t handle, unsigned int ids[GR_DCGM_MAX_GPUS], int *count);
    int (*gpu_uuid)(uintptr_t handle, unsigned int gpu_id, char *buf, size_t len);
    int (*group_create)(uintptr_t handle, const char *name, uintptr_t *group);
    int (*group_add)(uintptr_t handle, uintptr_t group, unsigned int gpu_id);
    int (*group_destroy)(uintptr_t handle, uintptr_t group);
    /* level: 1..4. Fills `out` (results for every GPU of the group). */
    int (*run_diag)(uintptr_t handle, uintptr_t group, int level, gr_dcgm_diag *out);
    int (*stop_diag)(uintptr_t handle);
    const char *(*error_string)(int rc);
} gr_gpu_dcgm;

/* --- loading -------------------------------------------------------------- */

typedef enum gr_gpu_lib {
    GR_GPU_LIB_CUDA = 1,
    GR_GPU_LIB_NCCL = 2,
    GR_GPU_LIB_NVML = 4,
    GR_GPU_LIB_DCGM = 8,
} gr_gpu_lib;

typedef struct gr_gpu {
    const gr_gpu_cuda *cuda; /* NULL unless requested */
    const gr_gpu_nccl *nccl;
    const gr_gpu_nvml *nvml;
    const gr_gpu_dcgm *dcgm;
    const char *backend; /* "real" | "test" (static) */
} gr_gpu;

/* Load the libraries in `libs` (a mask of gr_gpu_lib) with the backend chosen
 * by GR_GPU_BACKEND ("" or "real" | "test"). Errors (all configuration
 * errors): GR_ENOTFOUND "cannot load libnccl.so.2: <dlerror>; install NCCL or
 * add its directory to LD_LIBRARY_PATH", "libcuda.so.1 lacks symbol cuInit…",
 * GR_EINVAL for a bad GR_GPU_BACKEND or test scenario. */
int gr_gpu_load(unsigned int libs, gr_gpu *out, gr_err *err);

/* The backends, for tests; same contract as gr_gpu_load(). */
int gr_gpu_load_real(unsigned int libs, gr_gpu *out, gr_err *err);
int gr_gpu_load_test(unsigned int libs, const char *scenario_path, gr_gpu *out, gr_err *err);

/* Library file names tried by the real backend, in order (static strings). */
const char *const *gr_gpu_lib_names(gr_gpu_lib lib);

#endif
