/* gr_gpu_real.c — the real GPU backend: dlopen + our own declarations of the
 * documented CUDA driver, NCCL, NVML and DCGM C APIs (see gr_gpu.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gr_checks_dcgm.h"
#include "gr_dcgm_abi.h"
#include "gr_gpu.h"

/* Resolve `name` in `lib` into *slot; records the first missing symbol. */
static int sym(void *lib, const char *libname, const char *name, void **slot, gr_err *err)
{
    dlerror();
    void *p = dlsym(lib, name);
    if (!p)
        return gr_err_set(err, GR_ENOTFOUND,
                          "%s lacks symbol %s (too old a version?): install a newer one or point "
                          "LD_LIBRARY_PATH at it",
                          libname, name);
    *slot = p;
    return GR_OK;
}

#define SYM(lib, libname, fn, name)                  \
    do {                                             \
        void *p_ = NULL;                             \
        int rc_ = sym(lib, libname, name, &p_, err); \
        if (rc_ != GR_OK)                            \
            return rc_;                              \
        memcpy(&(fn), &p_, sizeof p_);               \
    } while (0)

/* The symbols of each library are one X-macro list:
 *   X(return type, struct field, exported symbol, (parameter types))
 * expanded once into the struct of function pointers (SYM_FIELD) and once
 * into the dlsym() calls that fill it (SYM_LOAD): a symbol is named in
 * exactly one place. */
#define SYM_FIELD(ret, field, name, params) ret(*field) params;
#define SYM_LOAD(ret, field, name, params)  SYM(lib, n, SYM_TABLE.field, name);

static const char *const cuda_names[] = {"libcuda.so.1", "libcuda.so", NULL};
static const char *const nccl_names[] = {"libnccl.so.2", "libnccl.so", NULL};
static const char *const nvml_names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so", NULL};
static const char *const dcgm_names[] = {"libdcgm.so.4", "libdcgm.so.3", "libdcgm.so", NULL};

const char *const *gr_gpu_lib_names(gr_gpu_lib lib)
{
    switch (lib) {
    case GR_GPU_LIB_CUDA:
        return cuda_names;
    case GR_GPU_LIB_NCCL:
        return nccl_names;
    case GR_GPU_LIB_NVML:
        return nvml_names;
    default:
        return dcgm_names;
    }
}

/* Open the first library that loads. GR_NCCL_LIBRARY may name the NCCL file. */
static int open_lib(gr_gpu_lib which, const char *override, void **out, const char **name,
                    gr_err *err)
{
    char why[512] = "";
    if (override && *override) {
        *out = dlopen(override, RTLD_NOW | RTLD_GLOBAL);
        if (*out) {
            *name = override;
            return GR_OK;
        }
        return gr_err_set(err, GR_ENOTFOUND, "cannot load %s: %s", override, dlerror());
    }
    for (const char *const *n = gr_gpu_lib_names(which); *n; n++) {
        *out = dlopen(*n, RTLD_NOW | RTLD_GLOBAL);
        if (*out) {
            *name = *n;
            return GR_OK;
        }
        if (!why[0])
            snprintf(why, sizeof why, "%s", dlerror());
    }
    static const char *const fix[] = {
        "",
        "the NVIDIA driver must be mounted into the container (NVIDIA container toolkit)",
        ("install NCCL (libnccl2, or pip nvidia-nccl-cu12) or set LD_LIBRARY_PATH / "
         "GR_NCCL_LIBRARY"),
        "",
        "the NVIDIA driver must be mounted into the container (NVIDIA container toolkit)",
        "",
        "",
        "",
        "install DCGM 4 (datacenter-gpu-manager-4-core) in the image"};
    return gr_err_set(err, GR_ENOTFOUND, "cannot load %s: %s; %s", gr_gpu_lib_names(which)[0], why,
                      fix[which]);
}

/* --- CUDA ------------------------------------------------------------------ */

typedef int CUresult;
#define CUDA_SYMBOLS(X)                                                                    \
    X(CUresult, cuInit, "cuInit", (unsigned int))                                          \
    X(CUresult, cuDeviceGetCount, "cuDeviceGetCount", (int *))                             \
    X(CUresult, cuDeviceGet, "cuDeviceGet", (int *, int))                                  \
    X(CUresult, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (void **, int))      \
    X(CUresult, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (int))          \
    X(CUresult, cuCtxSetCurrent, "cuCtxSetCurrent", (void *))                              \
    X(CUresult, cuMemAlloc, "cuMemAlloc_v2", (unsigned long long *, size_t))               \
    X(CUresult, cuMemFree, "cuMemFree_v2", (unsigned long long))                           \
    X(CUresult, cuMemsetD32, "cuMemsetD32_v2", (unsigned long long, unsigned int, size_t)) \
    X(CUresult, cuStreamCreate, "cuStreamCreate", (void **, unsigned int))                 \
    X(CUresult, cuStreamSynchronize, "cuStreamSynchronize", (void *))                      \
    X(CUresult, cuStreamDestroy, "cuStreamDestroy_v2", (void *))                           \
    X(CUresult, cuGetErrorString, "cuGetErrorString", (CUresult, const char **))
static struct {
    CUDA_SYMBOLS(SYM_FIELD)
} cu;

#define MAX_DEV 64
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static void *ctxs[MAX_DEV];

static int c_init(void)
{
    return cu.cuInit(0);
}
static int c_count(int *n)
{
    return cu.cuDeviceGetCount(n);
}
static int c_set_device(int ordinal)
{
    if (ordinal < 0 || ordinal >= MAX_DEV)
        return 101; /* CUDA_ERROR_INVALID_DEVICE */
    pthread_mutex_lock(&ctx_lock);
    int rc = 0;
    if (!ctxs[ordinal]) {
        int dev;
        rc = cu.cuDeviceGet(&dev, ordinal);
        if (rc == 0)
            rc = cu.cuDevicePrimaryCtxRetain(&ctxs[ordinal], dev);
    }
    void *c = ctxs[ordinal];
    pthread_mutex_unlock(&ctx_lock);
    return rc ? rc : cu.cuCtxSetCurrent(c);
}
static int c_release_device(int ordinal)
{
    if (ordinal < 0 || ordinal >= MAX_DEV)
        return 101;
    pthread_mutex_lock(&ctx_lock);
    int rc = 0;
    if (ctxs[ordinal]) {
        int dev;
        rc = cu.cuDeviceGet(&dev, ordinal);
        if (rc == 0)
            rc = cu.cuDevicePrimaryCtxRelease(dev);
        ctxs[ordinal] = NULL;
    }
    pthread_mutex_unlock(&ctx_lock);
    return rc;
}
static int c_alloc(uint64_t *p, size_t n)
{
    unsigned long long d = 0;
    int rc = cu.cuMemAlloc(&d, n);
    *p = d;
    return rc;
}
static int c_free(uint64_t p)
{
    return cu.cuMemFree(p);
}
static int c_memset(uint64_t p, unsigned int v, size_t n)
{
    return cu.cuMemsetD32(p, v, n);
}
static int c_stream_create(void **s)
{
    return cu.cuStreamCreate(s, 1 /* CU_STREAM_NON_BLOCKING */);
}
static int c_stream_sync(void *s)
{
    return cu.cuStreamSynchronize(s);
}
static int c_stream_destroy(void *s)
{
    return cu.cuStreamDestroy(s);
}
static const char *c_error_string(int rc)
{
    const char *s = NULL;
    if (cu.cuGetErrorString && cu.cuGetErrorString(rc, &s) == 0 && s)
        return s;
    return "unknown CUDA error";
}
static int64_t c_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const gr_gpu_cuda cuda_table = {
    c_init,   c_count,         c_set_device,  c_release_device, c_alloc,        c_free,
    c_memset, c_stream_create, c_stream_sync, c_stream_destroy, c_error_string, c_now};

static int load_cuda(gr_err *err)
{
    void *lib;
    const char *n;
    int rc = open_lib(GR_GPU_LIB_CUDA, NULL, &lib, &n, err);
    if (rc != GR_OK)
        return rc;
#define SYM_TABLE cu
    CUDA_SYMBOLS(SYM_LOAD)
#undef SYM_TABLE
    return GR_OK;
}

/* --- NCCL ------------------------------------------------------------------ */

typedef struct {
    char internal[GR_GPU_NCCL_ID_BYTES];
} ncclUniqueId;
#define NCCL_SYMBOLS(X)                                                             \
    X(int, ncclGetVersion, "ncclGetVersion", (int *))                               \
    X(int, ncclGetUniqueId, "ncclGetUniqueId", (ncclUniqueId *))                    \
    X(int, ncclCommInitRank, "ncclCommInitRank", (void **, int, ncclUniqueId, int)) \
    X(int, ncclCommInitAll, "ncclCommInitAll", (void **, int, const int *))         \
    X(int, ncclCommDestroy, "ncclCommDestroy", (void *))                            \
    X(int, ncclCommAbort, "ncclCommAbort", (void *))                                \
    X(int, ncclAllReduce, "ncclAllReduce",                                          \
      (const void *, void *, size_t, int, int, void *, void *))                     \
    X(int, ncclGroupStart, "ncclGroupStart", (void))                                \
    X(int, ncclGroupEnd, "ncclGroupEnd", (void))                                    \
    X(const char *, ncclGetErrorString, "ncclGetErrorString", (int))
static struct {
    NCCL_SYMBOLS(SYM_FIELD)
} nc;

static int n_version(int *v)
{
    return nc.ncclGetVersion(v);
}
static int n_unique(gr_gpu_nccl_id *id)
{
    ncclUniqueId u;
    int rc = nc.ncclGetUniqueId(&u);
    memcpy(id->internal, u.internal, sizeof u.internal);
    return rc;
}
static int n_init_rank(void **comm, int nranks, const gr_gpu_nccl_id *id, int rank)
{
    ncclUniqueId u;
    memcpy(u.internal, id->internal, sizeof u.internal);
    return nc.ncclCommInitRank(comm, nranks, u, rank);
}
static int n_init_all(void **comms, int ndev, const int *devlist)
{
    return nc.ncclCommInitAll(comms, ndev, devlist);
}
static int n_destroy(void *c)
{
    return nc.ncclCommDestroy(c);
}
static int n_abort(void *c)
{
    return nc.ncclCommAbort(c);
}
static int n_allreduce(const void *s, void *r, size_t count, int dt, int op, void *comm, void *st)
{
    return nc.ncclAllReduce(s, r, count, dt, op, comm, st);
}
static int n_gstart(void)
{
    return nc.ncclGroupStart();
}
static int n_gend(void)
{
    return nc.ncclGroupEnd();
}
static const char *n_error_string(int rc)
{
    const char *s = nc.ncclGetErrorString ? nc.ncclGetErrorString(rc) : NULL;
    return s ? s : "unknown NCCL error";
}
static const gr_gpu_nccl nccl_table = {n_version, n_unique,      n_init_rank, n_init_all,
                                       n_destroy, n_abort,       n_allreduce, n_gstart,
                                       n_gend,    n_error_string};

static int load_nccl(gr_err *err)
{
    void *lib;
    const char *n;
    int rc = open_lib(GR_GPU_LIB_NCCL, getenv("GR_NCCL_LIBRARY"), &lib, &n, err);
    if (rc != GR_OK)
        return rc;
#define SYM_TABLE nc
    NCCL_SYMBOLS(SYM_LOAD)
#undef SYM_TABLE
    return GR_OK;
}

/* --- NVML ------------------------------------------------------------------ */

#define NVML_SYMBOLS(X)                                                                          \
    X(int, nvmlInit, "nvmlInit_v2", (void))                                                      \
    X(int, nvmlShutdown, "nvmlShutdown", (void))                                                 \
    X(int, nvmlDeviceGetCount, "nvmlDeviceGetCount_v2", (unsigned int *))                        \
    X(int, nvmlDeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2", (unsigned int, void **)) \
    X(int, nvmlDeviceGetUUID, "nvmlDeviceGetUUID", (void *, char *, unsigned int))               \
    X(const char *, nvmlErrorString, "nvmlErrorString", (int))
static struct {
    NVML_SYMBOLS(SYM_FIELD)
} nv;

static int v_init(void)
{
    return nv.nvmlInit();
}
static int v_shutdown(void)
{
    return nv.nvmlShutdown();
}
static int v_count(unsigned int *n)
{
    return nv.nvmlDeviceGetCount(n);
}
static int v_uuid(unsigned int idx, char *buf, unsigned int len)
{
    void *h;
    int rc = nv.nvmlDeviceGetHandleByIndex(idx, &h);
    return rc ? rc : nv.nvmlDeviceGetUUID(h, buf, len);
}
static const char *v_error_string(int rc)
{
    const char *s = nv.nvmlErrorString ? nv.nvmlErrorString(rc) : NULL;
    return s ? s : "unknown NVML error";
}
static const gr_gpu_nvml nvml_table = {v_init, v_shutdown, v_count, v_uuid, v_error_string};

static int load_nvml(gr_err *err)
{
    void *lib;
    const char *n;
    int rc = open_lib(GR_GPU_LIB_NVML, NULL, &lib, &n, err);
    if (rc != GR_OK)
        return rc;
#define SYM_TABLE nv
    NVML_SYMBOLS(SYM_LOAD)
#undef SYM_TABLE
    return GR_OK;
}

/* --- DCGM ------------------------------------------------------------------ */

#define DCGM_SYMBOLS(X)                                                              \
    X(int, dcgmInit, "dcgmInit", (void))                                             \
    X(int, dcgmConnect_v2, "dcgmConnect_v2",                                         \
      (const char *, gr_dcgmConnectV2Params_v2 *, gr_dcgmHandle_t *))                \
    X(int, dcgmDisconnect, "dcgmDisconnect", (gr_dcgmHandle_t))                      \
    X(int, dcgmGetAllSupportedDevices, "dcgmGetAllSupportedDevices",                 \
      (gr_dcgmHandle_t, unsigned int *, int *))                                      \
    X(int, dcgmGetDeviceAttributes, "dcgmGetDeviceAttributes",                       \
      (gr_dcgmHandle_t, unsigned int, gr_dcgmDeviceAttributes_v3 *))                 \
    X(int, dcgmGroupCreate, "dcgmGroupCreate",                                       \
      (gr_dcgmHandle_t, int, const char *, gr_dcgmGpuGrp_t *))                       \
    X(int, dcgmGroupAddDevice, "dcgmGroupAddDevice",                                 \
      (gr_dcgmHandle_t, gr_dcgmGpuGrp_t, unsigned int))                              \
    X(int, dcgmGroupDestroy, "dcgmGroupDestroy", (gr_dcgmHandle_t, gr_dcgmGpuGrp_t)) \
    X(int, dcgmRunDiagnostic, "dcgmRunDiagnostic",                                   \
      (gr_dcgmHandle_t, gr_dcgmGpuGrp_t, int, gr_dcgmDiagResponse_v10 *))            \
    X(int, dcgmStopDiagnostic, "dcgmStopDiagnostic", (gr_dcgmHandle_t))              \
    X(const char *, errorString, "errorString", (int))
static struct {
    DCGM_SYMBOLS(SYM_FIELD)
} dc;

static int d_init(void)
{
    return dc.dcgmInit();
}
static int d_connect(const char *addr, unsigned int timeout_ms, uintptr_t *h)
{
    gr_dcgmConnectV2Params_v2 p;
    memset(&p, 0, sizeof p);
    p.version = GR_DCGM_CONNECT_V2_VERSION2;
    p.timeoutMs = timeout_ms;
    const char *a = addr;
    if (strncmp(a, "unix://", 7) == 0) {
        a += 7;
        p.addressIsUnixSocket = 1;
    } else if (a[0] == '/') {
        p.addressIsUnixSocket = 1;
    }
    gr_dcgmHandle_t hh = 0;
    int rc = dc.dcgmConnect_v2(a, &p, &hh);
    *h = hh;
    return rc;
}
static int d_disconnect(uintptr_t h)
{
    return dc.dcgmDisconnect(h);
}
static int d_gpu_ids(uintptr_t h, unsigned int ids[GR_DCGM_MAX_GPUS], int *count)
{
    return dc.dcgmGetAllSupportedDevices(h, ids, count);
}
static int d_gpu_uuid(uintptr_t h, unsigned int id, char *buf, size_t len)
{
    gr_dcgmDeviceAttributes_v3 *a = calloc(1, sizeof *a);
    if (!a)
        return -4; /* DCGM_ST_MEMORY */
    a->version = GR_DCGM_DEVICE_ATTRIBUTES_V3;
    int rc = dc.dcgmGetDeviceAttributes(h, id, a);
    if (rc == 0)
        snprintf(buf, len, "%.*s", (int)sizeof a->identifiers.uuid, a->identifiers.uuid);
    free(a);
    return rc;
}
static int d_group_create(uintptr_t h, const char *name, uintptr_t *g)
{
    gr_dcgmGpuGrp_t gg = 0;
    int rc = dc.dcgmGroupCreate(h, GR_DCGM_GROUP_EMPTY, name, &gg);
    *g = gg;
    return rc;
}
static int d_group_add(uintptr_t h, uintptr_t g, unsigned int id)
{
    return dc.dcgmGroupAddDevice(h, g, id);
}
static int d_group_destroy(uintptr_t h, uintptr_t g)
{
    return dc.dcgmGroupDestroy(h, g);
}
static int d_run_diag(uintptr_t h, uintptr_t g, int level, gr_dcgm_diag *out)
{
    static const int levels[] = {0, GR_DCGM_LVL_SHORT, GR_DCGM_LVL_MED, GR_DCGM_LVL_LONG,
                                 GR_DCGM_LVL_XLONG};
    if (level < 1 || level > 4)
        return -1; /* DCGM_ST_BADPARAM */
    gr_dcgmDiagResponse_v10 *r = calloc(1, sizeof *r);
    if (!r)
        return -4;
    r->version = GR_DCGM_DIAG_RESPONSE_VERSION10;
    int rc = dc.dcgmRunDiagnostic(h, g, levels[level], r);
    /* DCGM_ST_NVVS_ERROR (-30) still fills the per-test results. */
    if (rc == 0 || rc == -30) {
        if (gr_checks_dcgm_from_v10(r, sizeof *r, out, NULL) != GR_OK)
            rc = -12; /* DCGM_ST_VER_MISMATCH */
        else
            rc = 0;
    }
    free(r);
    return rc;
}
static int d_stop_diag(uintptr_t h)
{
    return dc.dcgmStopDiagnostic(h);
}
static const char *d_error_string(int rc)
{
    const char *s = dc.errorString ? dc.errorString(rc) : NULL;
    if (s)
        return s;
    s = gr_checks_dcgm_st_name(rc);
    return s ? s : "unknown DCGM error";
}
static const gr_gpu_dcgm dcgm_table = {d_init,     d_connect,      d_disconnect,  d_gpu_ids,
                                       d_gpu_uuid, d_group_create, d_group_add,   d_group_destroy,
                                       d_run_diag, d_stop_diag,    d_error_string};

static int load_dcgm(gr_err *err)
{
    void *lib;
    const char *n;
    int rc = open_lib(GR_GPU_LIB_DCGM, NULL, &lib, &n, err);
    if (rc != GR_OK)
        return rc;
#define SYM_TABLE dc
    DCGM_SYMBOLS(SYM_LOAD)
#undef SYM_TABLE
    return GR_OK;
}

int gr_gpu_load_real(unsigned int libs, gr_gpu *out, gr_err *err)
{
    memset(out, 0, sizeof *out);
    out->backend = "real";
    int rc;
    if ((libs & GR_GPU_LIB_CUDA) && (rc = load_cuda(err)) != GR_OK)
        return rc;
    if ((libs & GR_GPU_LIB_NCCL) && (rc = load_nccl(err)) != GR_OK)
        return rc;
    if ((libs & GR_GPU_LIB_NVML) && (rc = load_nvml(err)) != GR_OK)
        return rc;
    if ((libs & GR_GPU_LIB_DCGM) && (rc = load_dcgm(err)) != GR_OK)
        return rc;
    if (libs & GR_GPU_LIB_CUDA)
        out->cuda = &cuda_table;
    if (libs & GR_GPU_LIB_NCCL)
        out->nccl = &nccl_table;
    if (libs & GR_GPU_LIB_NVML)
        out->nvml = &nvml_table;
    if (libs & GR_GPU_LIB_DCGM)
        out->dcgm = &dcgm_table;
    return GR_OK;
}

int gr_gpu_load(unsigned int libs, gr_gpu *out, gr_err *err)
{
    const char *b = getenv("GR_GPU_BACKEND");
    if (!b || !*b || strcmp(b, "real") == 0)
        return gr_gpu_load_real(libs, out, err);
    if (strcmp(b, "test") == 0)
        return gr_gpu_load_test(libs, getenv("GR_GPU_SCENARIO"), out, err);
    return gr_err_set(err, GR_EINVAL, "invalid GR_GPU_BACKEND \"%s\": want real or test", b);
}
