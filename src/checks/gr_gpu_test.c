/* gr_gpu_test.c — the test GPU backend (GR_GPU_BACKEND=test): simulated
 * devices driven by a JSON scenario (GR_GPU_SCENARIO), calls logged as JSON
 * lines to GR_GPU_TEST_LOG. See docs/checks.md, "Test backend". */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gr_checks.h"
#include "gr_file.h"
#include "gr_gpu.h"

static json_t *scn; /* the scenario, loaded once */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int64_t vclock; /* virtual time of this thread */
static int diag_attempt;
static volatile int diag_stopped;

static json_t *section(const char *name)
{
    return json_object_get(scn, name);
}

static long long num(const char *sec, const char *key, long long dflt)
{
    json_t *v = json_object_get(section(sec), key);
    return json_is_integer(v) ? json_integer_value(v) : dflt;
}

static double real_num(const char *sec, const char *key, double dflt)
{
    json_t *v = json_object_get(section(sec), key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

/* Append one JSON object (steals `o`) as a line to GR_GPU_TEST_LOG. */
static void logcall(json_t *o)
{
    const char *path = getenv("GR_GPU_TEST_LOG");
    if (path && *path) {
        char *s = json_dumps(o, JSON_COMPACT);
        if (s) {
            size_t n = strlen(s);
            s[n] = '\n';
            int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (fd >= 0) {
                ssize_t w = write(fd, s, n + 1);
                (void)w;
                close(fd);
            }
            free(s);
        }
    }
    json_decref(o);
}

/* --- CUDA ------------------------------------------------------------------ */

static int t_c_init(void)
{
    return (int)num("cuda", "init_error", 0);
}
static int t_c_count(int *n)
{
    *n = (int)num("cuda", "devices", 1);
    return 0;
}
static int t_c_set_device(int ordinal)
{
    int n = (int)num("cuda", "devices", 1);
    return ordinal >= 0 && ordinal < n ? 0 : 101;
}
static int t_c_release(int ordinal)
{
    (void)ordinal;
    return 0;
}
static int t_c_alloc(uint64_t *p, size_t n)
{
    int e = (int)num("cuda", "alloc_error", 0);
    if (e)
        return e;
    /* No real memory: a fake, non-zero device address. */
    static uint64_t next = 0x10000;
    pthread_mutex_lock(&lock);
    *p = next;
    next += (n + 0xffff) & ~(uint64_t)0xffff;
    pthread_mutex_unlock(&lock);
    return 0;
}
static int t_c_free(uint64_t p)
{
    (void)p;
    return 0;
}
static int t_c_memset(uint64_t p, unsigned int v, size_t n)
{
    (void)p;
    (void)v;
    (void)n;
    return 0;
}
static int t_c_stream_create(void **s)
{
    *s = malloc(1);
    return *s ? 0 : 2;
}
static int t_c_stream_sync(void *s)
{
    (void)s;
    return 0;
}
static int t_c_stream_destroy(void *s)
{
    free(s);
    return 0;
}
static const char *t_c_error_string(int rc)
{
    return rc == 2 ? "out of memory (test backend)" : "CUDA error (test backend)";
}
static int64_t t_c_now(void)
{
    return vclock;
}
static const gr_gpu_cuda t_cuda = {
    t_c_init,   t_c_count,         t_c_set_device,  t_c_release,        t_c_alloc,        t_c_free,
    t_c_memset, t_c_stream_create, t_c_stream_sync, t_c_stream_destroy, t_c_error_string, t_c_now};

/* --- NCCL ------------------------------------------------------------------ */

typedef struct tcomm {
    int rank, nranks, advance;
} tcomm;

static int t_n_version(int *v)
{
    *v = 22105;
    return 0;
}
static int t_n_unique(gr_gpu_nccl_id *id)
{
    if (getrandom(id->internal, sizeof id->internal, 0) != (ssize_t)sizeof id->internal)
        return 2; /* ncclSystemError */
    return 0;
}
static void hex(const unsigned char *p, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02x", p[i]);
}

/* Cross-process check that every rank got the same id: each rank writes its
 * id to <rendezvous>/rank-N and waits for the others (20 s). */
static int rendezvous(int rank, int nranks, const char *idhex)
{
    json_t *d = json_object_get(section("nccl"), "rendezvous_dir");
    if (!json_is_string(d))
        return 0;
    const char *dir = json_string_value(d);
    char path[4096], tmp[4096];
    snprintf(path, sizeof path, "%s/rank-%d", dir, rank);
    snprintf(tmp, sizeof tmp, "%s/.rank-%d.tmp", dir, rank);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return 2;
    fputs(idhex, f);
    fclose(f);
    rename(tmp, path);
    for (int waited = 0; waited < 2000; waited++) {
        int all = 1, same = 1;
        for (int r = 0; r < nranks; r++) {
            char p[4096], *buf = NULL;
            snprintf(p, sizeof p, "%s/rank-%d", dir, r);
            if (gr_file_read(p, 300, &buf, NULL, NULL) != GR_OK) {
                all = 0;
                break;
            }
            if (strcmp(buf, idhex) != 0)
                same = 0;
            free(buf);
        }
        if (all)
            return same ? 0 : 4; /* ncclInvalidArgument */
        usleep(10000);
    }
    return 6; /* ncclRemoteError: the other ranks never came */
}

static int t_n_init_rank(void **comm, int nranks, const gr_gpu_nccl_id *id, int rank)
{
    char idhex[2 * GR_GPU_NCCL_ID_BYTES + 1];
    hex(id->internal, sizeof id->internal, idhex);
    logcall(json_pack("{s:s, s:i, s:i, s:s}", "call", "nccl_comm_init_rank", "nranks", nranks,
                      "rank", rank, "id", idhex));
    int e = (int)num("nccl", "init_error", 0);
    if (e)
        return e;
    if (rank < 0 || rank >= nranks)
        return 4;
    e = rendezvous(rank, nranks, idhex);
    if (e)
        return e;
    tcomm *c = calloc(1, sizeof *c);
    if (!c)
        return 2;
    c->rank = rank;
    c->nranks = nranks;
    c->advance = 1;
    *comm = c;
    return 0;
}
static int t_n_init_all(void **comms, int ndev, const int *devlist)
{
    (void)devlist;
    logcall(json_pack("{s:s, s:i}", "call", "nccl_comm_init_all", "ndev", ndev));
    int e = (int)num("nccl", "init_error", 0);
    if (e)
        return e;
    for (int i = 0; i < ndev; i++) {
        tcomm *c = calloc(1, sizeof *c);
        if (!c)
            return 2;
        c->rank = i;
        c->nranks = ndev;
        c->advance = i == 0;
        comms[i] = c;
    }
    return 0;
}
static int t_n_destroy(void *c)
{
    free(c);
    return 0;
}
static int t_n_allreduce(const void *s, void *r, size_t count, int dt, int op, void *comm, void *st)
{
    (void)s;
    (void)r;
    (void)st;
    tcomm *c = comm;
    int e = (int)num("nccl", "allreduce_error", 0);
    if (e)
        return e;
    if (dt != GR_NCCL_FLOAT32)
        return 4;
    uint64_t bytes = (uint64_t)count * 4;
    if (c->advance) {
        double algbw = real_num("nccl", "algbw_gbps", 100.0);
        json_t *by = json_object_get(section("nccl"), "algbw_gbps_by_mb");
        char key[32];
        snprintf(key, sizeof key, "%llu", (unsigned long long)(bytes >> 20));
        json_t *v = json_object_get(by, key);
        if (json_is_number(v))
            algbw = json_number_value(v);
        vclock += (int64_t)((double)bytes / (algbw * 1e9) * 1e9);
        if (c->rank == 0)
            logcall(json_pack("{s:s, s:I, s:s, s:i}", "call", "nccl_all_reduce", "bytes",
                              (json_int_t)bytes, "op", gr_checks_reduce_op_name(op), "nranks",
                              c->nranks));
    }
    return 0;
}
static int t_n_noop(void)
{
    return 0;
}
static const char *t_n_error_string(int rc)
{
    switch (rc) {
    case 2:
        return "unhandled system error (test backend)";
    case 4:
        return "invalid argument (test backend: ranks disagree on the unique id)";
    case 6:
        return "remote process exited or there was a network error (test backend)";
    default:
        return "NCCL error (test backend)";
    }
}
static const gr_gpu_nccl t_nccl = {t_n_version, t_n_unique,      t_n_init_rank, t_n_init_all,
                                   t_n_destroy, t_n_destroy,     t_n_allreduce, t_n_noop,
                                   t_n_noop,    t_n_error_string};

/* --- NVML ------------------------------------------------------------------ */

static int t_v_init(void)
{
    return (int)num("nvml", "init_error", 0);
}
static int t_v_shutdown(void)
{
    return 0;
}
static int t_v_count(unsigned int *n)
{
    *n = (unsigned int)json_array_size(json_object_get(section("nvml"), "uuids"));
    return 0;
}
static int t_v_uuid(unsigned int idx, char *buf, unsigned int len)
{
    json_t *u = json_array_get(json_object_get(section("nvml"), "uuids"), idx);
    if (!json_is_string(u))
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    snprintf(buf, len, "%s", json_string_value(u));
    return 0;
}
static const char *t_v_error_string(int rc)
{
    (void)rc;
    return "NVML error (test backend)";
}
static const gr_gpu_nvml t_nvml = {t_v_init, t_v_shutdown, t_v_count, t_v_uuid, t_v_error_string};

/* --- DCGM ------------------------------------------------------------------ */

static int t_d_init(void)
{
    return 0;
}
static int t_d_connect(const char *addr, unsigned int timeout_ms, uintptr_t *h)
{
    (void)timeout_ms;
    json_t *ok = json_object_get(section("dcgm"), "reachable");
    int found = 0;
    size_t i;
    json_t *v;
    json_array_foreach(ok, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), addr) == 0)
            found = 1;
    }
    logcall(json_pack("{s:s, s:s, s:b}", "call", "dcgm_connect", "addr", addr, "ok", found));
    if (!found)
        return GR_DCGM_ST_CONNECTION_NOT_VALID;
    *h = 1;
    return 0;
}
static int t_d_disconnect(uintptr_t h)
{
    (void)h;
    logcall(json_pack("{s:s}", "call", "dcgm_disconnect"));
    return 0;
}
static int t_d_gpu_ids(uintptr_t h, unsigned int ids[GR_DCGM_MAX_GPUS], int *count)
{
    (void)h;
    json_t *gpus = json_object_get(section("dcgm"), "gpus");
    size_t i;
    json_t *g;
    *count = 0;
    json_array_foreach(gpus, i, g)
    {
        if (*count < GR_DCGM_MAX_GPUS)
            ids[(*count)++] = (unsigned int)json_integer_value(json_object_get(g, "id"));
    }
    return 0;
}
static int t_d_gpu_uuid(uintptr_t h, unsigned int id, char *buf, size_t len)
{
    (void)h;
    json_t *gpus = json_object_get(section("dcgm"), "gpus");
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g)
    {
        if ((unsigned int)json_integer_value(json_object_get(g, "id")) == id) {
            snprintf(buf, len, "%s", json_string_value(json_object_get(g, "uuid")));
            return 0;
        }
    }
    return -1;
}
static int t_d_group_create(uintptr_t h, const char *name, uintptr_t *g)
{
    (void)h;
    logcall(json_pack("{s:s, s:s}", "call", "dcgm_group_create", "name", name));
    *g = 7;
    return 0;
}
static int t_d_group_add(uintptr_t h, uintptr_t g, unsigned int id)
{
    (void)h;
    (void)g;
    logcall(json_pack("{s:s, s:i}", "call", "dcgm_group_add", "gpu", (int)id));
    return 0;
}
static int t_d_group_destroy(uintptr_t h, uintptr_t g)
{
    (void)h;
    (void)g;
    logcall(json_pack("{s:s}", "call", "dcgm_group_destroy"));
    return 0;
}
static const char *str_or(json_t *v)
{
    return json_is_string(v) ? json_string_value(v) : "";
}
static int status_of(const char *s)
{
    static const char *const names[] = {"pass", "skip", "warn", "fail", "not_run"};
    for (int i = 0; i < 5; i++)
        if (s && strcmp(s, names[i]) == 0)
            return i;
    return 99;
}
static int t_d_run_diag(uintptr_t h, uintptr_t g, int level, gr_dcgm_diag *out)
{
    (void)h;
    (void)g;
    json_t *attempts = json_object_get(section("dcgm"), "attempts");
    size_t n = json_array_size(attempts);
    pthread_mutex_lock(&lock);
    size_t idx = (size_t)diag_attempt++;
    pthread_mutex_unlock(&lock);
    logcall(json_pack("{s:s, s:i, s:i}", "call", "dcgm_run_diag", "level", level, "attempt",
                      (int)idx + 1));
    json_t *a = n ? json_array_get(attempts, idx < n ? idx : n - 1) : NULL;
    if (json_is_true(json_object_get(a, "block"))) {
        /* A long diagnostic: runs until stop_diag. */
        while (!diag_stopped)
            usleep(10000);
        return -53; /* DCGM_ST_NVVS_KILLED */
    }
    json_t *st = json_object_get(a, "status");
    if (json_is_integer(st) && json_integer_value(st) != 0)
        return (int)json_integer_value(st);
    out->n = 0;
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(a, "results"), i, r)
    {
        if (out->n == GR_DCGM_MAX_RESULTS)
            break;
        gr_dcgm_result *res = &out->results[out->n++];
        memset(res, 0, sizeof *res);
        snprintf(res->test, sizeof res->test, "%s", str_or(json_object_get(r, "test")));
        res->gpu_id = (unsigned int)json_integer_value(json_object_get(r, "gpu"));
        res->status = status_of(json_string_value(json_object_get(r, "status")));
        res->error_code = (unsigned int)json_integer_value(json_object_get(r, "code"));
        snprintf(res->msg, sizeof res->msg, "%s", str_or(json_object_get(r, "msg")));
    }
    return 0;
}
static int t_d_stop_diag(uintptr_t h)
{
    (void)h;
    diag_stopped = 1;
    logcall(json_pack("{s:s}", "call", "dcgm_stop_diag"));
    return 0;
}
static const char *t_d_error_string(int rc)
{
    (void)rc;
    return "DCGM error (test backend)";
}
static const gr_gpu_dcgm t_dcgm = {t_d_init,      t_d_connect,       t_d_disconnect,
                                   t_d_gpu_ids,   t_d_gpu_uuid,      t_d_group_create,
                                   t_d_group_add, t_d_group_destroy, t_d_run_diag,
                                   t_d_stop_diag, t_d_error_string};

int gr_gpu_load_test(unsigned int libs, const char *scenario_path, gr_gpu *out, gr_err *err)
{
    memset(out, 0, sizeof *out);
    out->backend = "test";
    if (!scenario_path || !*scenario_path)
        return gr_err_set(err, GR_EINVAL,
                          "GR_GPU_BACKEND=test needs GR_GPU_SCENARIO (a JSON "
                          "file)");
    if (!scn) {
        json_error_t je;
        scn = json_load_file(scenario_path, 0, &je);
        if (!scn || !json_is_object(scn))
            return gr_err_set(err, GR_EINVAL, "GR_GPU_SCENARIO %s: %s (line %d)", scenario_path,
                              je.text, je.line);
    }
    static const struct {
        unsigned int bit;
        const char *name, *file;
    } libs_tab[] = {{GR_GPU_LIB_CUDA, "cuda", "libcuda.so.1"},
                    {GR_GPU_LIB_NCCL, "nccl", "libnccl.so.2"},
                    {GR_GPU_LIB_NVML, "nvml", "libnvidia-ml.so.1"},
                    {GR_GPU_LIB_DCGM, "dcgm", "libdcgm.so.4"}};
    json_t *missing = json_object_get(scn, "missing");
    for (size_t i = 0; i < 4; i++) {
        size_t k;
        json_t *m;
        if (!(libs & libs_tab[i].bit))
            continue;
        json_array_foreach(missing, k, m)
        {
            if (json_is_string(m) && strcmp(json_string_value(m), libs_tab[i].name) == 0)
                return gr_err_set(err, GR_ENOTFOUND,
                                  "cannot load %s: not present (test backend scenario)",
                                  libs_tab[i].file);
        }
    }
    if (libs & GR_GPU_LIB_CUDA)
        out->cuda = &t_cuda;
    if (libs & GR_GPU_LIB_NCCL)
        out->nccl = &t_nccl;
    if (libs & GR_GPU_LIB_NVML)
        out->nvml = &t_nvml;
    if (libs & GR_GPU_LIB_DCGM)
        out->dcgm = &t_dcgm;
    return GR_OK;
}
