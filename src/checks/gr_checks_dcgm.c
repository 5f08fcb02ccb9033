/* gr_checks_dcgm.c — pure logic of preflight-dcgm-diag (see gr_checks_dcgm.h). */
#include "gr_checks_dcgm.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "gr_dcgm_abi.h"

static int is_blank(const char *v)
{
    if (!v)
        return 1;
    for (; *v; v++)
        if (!isspace((unsigned char)*v))
            return 0;
    return 1;
}

int gr_checks_dcgm_config_parse(gr_checks_getenv env, void *ctx, gr_checks_dcgm_config *cfg,
                                gr_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->level = 2;
    cfg->retry_max = 10;
    cfg->retry_interval_s = 10.0;
    const char *v = env(ctx, "DCGM_HOSTENGINE_ADDR");
    const char *list = is_blank(v) ? GR_CHECKS_DCGM_DEFAULT_ADDR : v;
    const char *p = list;
    for (;;) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        while (n > 0 && isspace((unsigned char)*p)) {
            p++;
            n--;
        }
        while (n > 0 && isspace((unsigned char)p[n - 1]))
            n--;
        if (n > 0) {
            if (cfg->n_addrs == GR_CHECKS_DCGM_MAX_ADDRS)
                return gr_err_set(err, GR_EINVAL, "DCGM_HOSTENGINE_ADDR: at most %d endpoints",
                                  GR_CHECKS_DCGM_MAX_ADDRS);
            if (n >= sizeof cfg->addrs[0])
                return gr_err_set(err, GR_EINVAL, "DCGM_HOSTENGINE_ADDR: endpoint too long");
            memcpy(cfg->addrs[cfg->n_addrs], p, n);
            cfg->addrs[cfg->n_addrs++][n] = '\0';
        }
        if (!c)
            break;
        p = c + 1;
    }
    if (cfg->n_addrs == 0)
        return gr_err_set(err, GR_EINVAL, "DCGM_HOSTENGINE_ADDR is required");
    long l;
    v = env(ctx, "DCGM_DIAG_LEVEL");
    if (!is_blank(v)) {
        if (gr_checks_parse_long(v, 1, 4, &l) != GR_OK)
            return gr_err_set(err, GR_EINVAL, "DCGM_DIAG_LEVEL must be 1-4, got %s", v);
        cfg->level = (int)l;
    }
    v = env(ctx, "DCGM_DIAG_STATUS_RETRY_MAX_ATTEMPTS");
    if (!is_blank(v)) {
        if (gr_checks_parse_long(v, 1, 1000, &l) != GR_OK)
            return gr_err_set(err, GR_EINVAL,
                              "DCGM_DIAG_STATUS_RETRY_MAX_ATTEMPTS must be a whole number >= 1, "
                              "got %s",
                              v);
        cfg->retry_max = (int)l;
    }
    v = env(ctx, "DCGM_DIAG_STATUS_RETRY_INTERVAL_SECONDS");
    if (!is_blank(v) && (gr_checks_parse_positive(v, 0, &cfg->retry_interval_s) != GR_OK ||
                         cfg->retry_interval_s > 3600))
        return gr_err_set(err, GR_EINVAL,
                          "DCGM_DIAG_STATUS_RETRY_INTERVAL_SECONDS must be a number of seconds > "
                          "0, got %s",
                          v);
    v = env(ctx, "DCGM_ERROR_MAPPING_PATH");
    if (!is_blank(v)) {
        if (strlen(v) >= sizeof cfg->mapping_path)
            return gr_err_set(err, GR_EINVAL, "DCGM_ERROR_MAPPING_PATH is too long");
        snprintf(cfg->mapping_path, sizeof cfg->mapping_path, "%s", v);
    }
    v = env(ctx, "NODE_NAME");
    if (is_blank(v))
        return gr_err_set(err, GR_EINVAL, "NODE_NAME is required");
    if (strlen(v) >= sizeof cfg->node_name)
        return gr_err_set(err, GR_EINVAL, "NODE_NAME is too long");
    snprintf(cfg->node_name, sizeof cfg->node_name, "%s", v);
    return gr_health_strategy_parse(env(ctx, "PROCESSING_STRATEGY"), &cfg->strategy, err);
}

static const struct {
    int rc;
    const char *name;
} st_names[] = {
    {-1, "DCGM_ST_BADPARAM"},
    {-3, "DCGM_ST_GENERIC_ERROR"},
    {-4, "DCGM_ST_MEMORY"},
    {-5, "DCGM_ST_NOT_CONFIGURED"},
    {-6, "DCGM_ST_NOT_SUPPORTED"},
    {-7, "DCGM_ST_INIT_ERROR"},
    {-8, "DCGM_ST_NVML_ERROR"},
    {-9, "DCGM_ST_PENDING"},
    {-10, "DCGM_ST_UNINITIALIZED"},
    {-11, "DCGM_ST_TIMEOUT"},
    {-12, "DCGM_ST_VER_MISMATCH"},
    {-13, "DCGM_ST_UNKNOWN_FIELD"},
    {-14, "DCGM_ST_NO_DATA"},
    {-15, "DCGM_ST_STALE_DATA"},
    {-16, "DCGM_ST_NOT_WATCHED"},
    {-17, "DCGM_ST_NO_PERMISSION"},
    {-18, "DCGM_ST_GPU_IS_LOST"},
    {-19, "DCGM_ST_RESET_REQUIRED"},
    {-20, "DCGM_ST_FUNCTION_NOT_FOUND"},
    {-21, "DCGM_ST_CONNECTION_NOT_VALID"},
    {-22, "DCGM_ST_GPU_NOT_SUPPORTED"},
    {-23, "DCGM_ST_GROUP_INCOMPATIBLE"},
    {-24, "DCGM_ST_MAX_LIMIT"},
    {-25, "DCGM_ST_LIBRARY_NOT_FOUND"},
    {-26, "DCGM_ST_DUPLICATE_KEY"},
    {-27, "DCGM_ST_GPU_IN_SYNC_BOOST_GROUP"},
    {-28, "DCGM_ST_GPU_NOT_IN_SYNC_BOOST_GROUP"},
    {-29, "DCGM_ST_REQUIRES_ROOT"},
    {-30, "DCGM_ST_NVVS_ERROR"},
    {-31, "DCGM_ST_INSUFFICIENT_SIZE"},
    {-32, "DCGM_ST_FIELD_UNSUPPORTED_BY_API"},
    {-33, "DCGM_ST_MODULE_NOT_LOADED"},
    {-34, "DCGM_ST_IN_USE"},
    {-35, "DCGM_ST_GROUP_IS_EMPTY"},
    {-36, "DCGM_ST_PROFILING_NOT_SUPPORTED"},
    {-37, "DCGM_ST_PROFILING_LIBRARY_ERROR"},
    {-38, "DCGM_ST_PROFILING_MULTI_PASS"},
    {-39, "DCGM_ST_DIAG_ALREADY_RUNNING"},
    {-40, "DCGM_ST_DIAG_BAD_JSON"},
    {-41, "DCGM_ST_DIAG_BAD_LAUNCH"},
    {-42, "DCGM_ST_DIAG_UNUSED"},
    {-43, "DCGM_ST_DIAG_THRESHOLD_EXCEEDED"},
    {-44, "DCGM_ST_INSUFFICIENT_DRIVER_VERSION"},
    {-45, "DCGM_ST_INSTANCE_NOT_FOUND"},
    {-46, "DCGM_ST_COMPUTE_INSTANCE_NOT_FOUND"},
    {-47, "DCGM_ST_CHILD_NOT_KILLED"},
    {-48, "DCGM_ST_3RD_PARTY_LIBRARY_ERROR"},
    {-49, "DCGM_ST_INSUFFICIENT_RESOURCES"},
    {-50, "DCGM_ST_PLUGIN_EXCEPTION"},
    {-51, "DCGM_ST_NVVS_ISOLATE_ERROR"},
    {-52, "DCGM_ST_NVVS_BINARY_NOT_FOUND"},
    {-53, "DCGM_ST_NVVS_KILLED"},
    {-54, "DCGM_ST_PAUSED"},
    {-55, "DCGM_ST_ALREADY_INITIALIZED"},
    {-56, "DCGM_ST_NVML_NOT_LOADED"},
    {-57, "DCGM_ST_NVML_DRIVER_TIMEOUT"},
};

const char *gr_checks_dcgm_st_name(int rc)
{
    for (size_t i = 0; i < sizeof st_names / sizeof st_names[0]; i++)
        if (st_names[i].rc == rc)
            return st_names[i].name;
    return NULL;
}

static const char *const fr_names[] = {
    "DCGM_FR_OK",
    "DCGM_FR_UNKNOWN",
    "DCGM_FR_UNRECOGNIZED",
    "DCGM_FR_PCI_REPLAY_RATE",
    "DCGM_FR_VOLATILE_DBE_DETECTED",
    "DCGM_FR_VOLATILE_SBE_DETECTED",
    "DCGM_FR_PENDING_PAGE_RETIREMENTS",
    "DCGM_FR_RETIRED_PAGES_LIMIT",
    "DCGM_FR_RETIRED_PAGES_DBE_LIMIT",
    "DCGM_FR_CORRUPT_INFOROM",
    "DCGM_FR_CLOCK_THROTTLE_THERMAL",
    "DCGM_FR_POWER_UNREADABLE",
    "DCGM_FR_CLOCK_THROTTLE_POWER",
    "DCGM_FR_NVLINK_ERROR_THRESHOLD",
    "DCGM_FR_NVLINK_DOWN",
    "DCGM_FR_NVSWITCH_FATAL_ERROR",
    "DCGM_FR_NVSWITCH_NON_FATAL_ERROR",
    "DCGM_FR_NVSWITCH_DOWN",
    "DCGM_FR_NO_ACCESS_TO_FILE",
    "DCGM_FR_NVML_API",
    "DCGM_FR_DEVICE_COUNT_MISMATCH",
    "DCGM_FR_BAD_PARAMETER",
    "DCGM_FR_CANNOT_OPEN_LIB",
    "DCGM_FR_DENYLISTED_DRIVER",
    "DCGM_FR_NVML_LIB_BAD",
    "DCGM_FR_GRAPHICS_PROCESSES",
    "DCGM_FR_HOSTENGINE_CONN",
    "DCGM_FR_FIELD_QUERY",
    "DCGM_FR_BAD_CUDA_ENV",
    "DCGM_FR_PERSISTENCE_MODE",
    "DCGM_FR_LOW_BANDWIDTH",
    "DCGM_FR_HIGH_LATENCY",
    "DCGM_FR_CANNOT_GET_FIELD_TAG",
    "DCGM_FR_FIELD_VIOLATION",
    "DCGM_FR_FIELD_THRESHOLD",
    "DCGM_FR_FIELD_VIOLATION_DBL",
    "DCGM_FR_FIELD_THRESHOLD_DBL",
    "DCGM_FR_UNSUPPORTED_FIELD_TYPE",
    "DCGM_FR_FIELD_THRESHOLD_TS",
    "DCGM_FR_FIELD_THRESHOLD_TS_DBL",
    "DCGM_FR_THERMAL_VIOLATIONS",
    "DCGM_FR_THERMAL_VIOLATIONS_TS",
    "DCGM_FR_TEMP_VIOLATION",
    "DCGM_FR_THROTTLING_VIOLATION",
    "DCGM_FR_INTERNAL",
    "DCGM_FR_PCIE_GENERATION",
    "DCGM_FR_PCIE_WIDTH",
    "DCGM_FR_ABORTED",
    "DCGM_FR_TEST_DISABLED",
    "DCGM_FR_CANNOT_GET_STAT",
    "DCGM_FR_STRESS_LEVEL",
    "DCGM_FR_CUDA_API",
    "DCGM_FR_FAULTY_MEMORY",
    "DCGM_FR_CANNOT_SET_WATCHES",
    "DCGM_FR_CUDA_UNBOUND",
    "DCGM_FR_ECC_DISABLED",
    "DCGM_FR_MEMORY_ALLOC",
    "DCGM_FR_CUDA_DBE",
    "DCGM_FR_MEMORY_MISMATCH",
    "DCGM_FR_CUDA_DEVICE",
    "DCGM_FR_ECC_UNSUPPORTED",
    "DCGM_FR_ECC_PENDING",
    "DCGM_FR_MEMORY_BANDWIDTH",
    "DCGM_FR_TARGET_POWER",
    "DCGM_FR_API_FAIL",
    "DCGM_FR_API_FAIL_GPU",
    "DCGM_FR_CUDA_CONTEXT",
    "DCGM_FR_DCGM_API",
    "DCGM_FR_CONCURRENT_GPUS",
    "DCGM_FR_TOO_MANY_ERRORS",
    "DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD",
    "DCGM_FR_NVLINK_ERROR_CRITICAL",
    "DCGM_FR_ENFORCED_POWER_LIMIT",
    "DCGM_FR_MEMORY_ALLOC_HOST",
    "DCGM_FR_GPU_OP_MODE",
    "DCGM_FR_NO_MEMORY_CLOCKS",
    "DCGM_FR_NO_GRAPHICS_CLOCKS",
    "DCGM_FR_HAD_TO_RESTORE_STATE",
    "DCGM_FR_L1TAG_UNSUPPORTED",
    "DCGM_FR_L1TAG_MISCOMPARE",
    "DCGM_FR_ROW_REMAP_FAILURE",
    "DCGM_FR_UNCONTAINED_ERROR",
    "DCGM_FR_EMPTY_GPU_LIST",
    "DCGM_FR_DBE_PENDING_PAGE_RETIREMENTS",
    "DCGM_FR_UNCORRECTABLE_ROW_REMAP",
    "DCGM_FR_PENDING_ROW_REMAP",
    "DCGM_FR_BROKEN_P2P_MEMORY_DEVICE",
    "DCGM_FR_BROKEN_P2P_WRITER_DEVICE",
    "DCGM_FR_NVSWITCH_NVLINK_DOWN",
    "DCGM_FR_EUD_BINARY_PERMISSIONS",
    "DCGM_FR_EUD_NON_ROOT_USER",
    "DCGM_FR_EUD_SPAWN_FAILURE",
    "DCGM_FR_EUD_TIMEOUT",
    "DCGM_FR_EUD_ZOMBIE",
    "DCGM_FR_EUD_NON_ZERO_EXIT_CODE",
    "DCGM_FR_EUD_TEST_FAILED",
    "DCGM_FR_FILE_CREATE_PERMISSIONS",
    "DCGM_FR_PAUSE_RESUME_FAILED",
    "DCGM_FR_PCIE_H_REPLAY_VIOLATION",
    "DCGM_FR_GPU_EXPECTED_NVLINKS_UP",
    "DCGM_FR_NVSWITCH_EXPECTED_NVLINKS_UP",
    "DCGM_FR_XID_ERROR",
    "DCGM_FR_SBE_VIOLATION",
    "DCGM_FR_DBE_VIOLATION",
    "DCGM_FR_PCIE_REPLAY_VIOLATION",
    "DCGM_FR_SBE_THRESHOLD_VIOLATION",
    "DCGM_FR_DBE_THRESHOLD_VIOLATION",
    "DCGM_FR_PCIE_REPLAY_THRESHOLD_VIOLATION",
    "DCGM_FR_CUDA_FM_NOT_INITIALIZED",
    "DCGM_FR_SXID_ERROR",
    "DCGM_FR_GFLOPS_THRESHOLD_VIOLATION",
    "DCGM_FR_NAN_VALUE",
};

const char *gr_checks_dcgm_fr_name(unsigned int code)
{
    if (code < sizeof fr_names / sizeof fr_names[0])
        return fr_names[code];
    return NULL;
}

void gr_checks_dcgm_camel(const char *test, char *out, size_t len)
{
    size_t o = 0;
    int start = 1;
    if (len == 0)
        return;
    for (const char *p = test; *p && o + 1 < len; p++) {
        char c = *p;
        if (c == '-' || c == '_' || c == ' ') {
            start = 1;
            continue;
        }
        out[o++] = start ? (char)toupper((unsigned char)c) : (char)tolower((unsigned char)c);
        start = 0;
    }
    out[o] = '\0';
}

int gr_checks_dcgm_map_parse(const char *text, size_t len, gr_checks_dcgm_map *map, gr_err *err)
{
    memset(map, 0, sizeof *map);
    size_t i = 0, line = 0;
    while (i < len) {
        size_t s = i;
        while (i < len && text[i] != '\n')
            i++;
        size_t e = i;
        i++; /* skip '\n' */
        line++;
        while (s < e && isspace((unsigned char)text[s]))
            s++;
        while (e > s && isspace((unsigned char)text[e - 1]))
            e--;
        if (s == e || text[s] == '#')
            continue;
        const char *comma = memchr(text + s, ',', e - s);
        if (!comma)
            return gr_err_set(err, GR_EPARSE, "mapping table line %zu: want NAME,ACTION", line);
        size_t nl = (size_t)(comma - (text + s));
        while (nl > 0 && isspace((unsigned char)text[s + nl - 1]))
            nl--;
        const char *a = comma + 1;
        while (a < text + e && isspace((unsigned char)*a))
            a++;
        size_t al = (size_t)(text + e - a);
        if (nl == 0 || nl >= sizeof map->rows[0].name || al == 0 || al >= 64 || memchr(a, ',', al))
            return gr_err_set(err, GR_EPARSE, "mapping table line %zu: want NAME,ACTION", line);
        char action[64];
        memcpy(action, a, al);
        action[al] = '\0';
        gr_health_action act;
        if (gr_health_action_parse(action, &act) != GR_OK) {
            map->ignored++;
            continue;
        }
        if (map->n == GR_CHECKS_DCGM_MAP_MAX)
            return gr_err_set(err, GR_ETOOBIG, "mapping table: more than %d rows",
                              GR_CHECKS_DCGM_MAP_MAX);
        memcpy(map->rows[map->n].name, text + s, nl);
        map->rows[map->n].name[nl] = '\0';
        map->rows[map->n].action = act;
        map->n++;
    }
    return GR_OK;
}

int gr_checks_dcgm_map_lookup(const gr_checks_dcgm_map *map, const char *name,
                              gr_health_action *action)
{
    /* The last row for a name wins. */
    for (size_t i = map->n; i-- > 0;)
        if (strcmp(map->rows[i].name, name) == 0) {
            *action = map->rows[i].action;
            return 1;
        }
    return 0;
}

static const gr_checks_dcgm_gpu *find_gpu(const gr_checks_dcgm_gpu *gpus, size_t n, unsigned int id)
{
    for (size_t i = 0; i < n; i++)
        if (gpus[i].gpu_id == id)
            return &gpus[i];
    return NULL;
}

void gr_checks_dcgm_events(const gr_dcgm_diag *diag, const gr_checks_dcgm_gpu *gpus, size_t n_gpus,
                           const gr_checks_dcgm_map *map, gr_checks_event *events, size_t cap,
                           size_t *n_events, int *any_fatal)
{
    *n_events = 0;
    *any_fatal = 0;
    for (size_t i = 0; i < diag->n && *n_events < cap; i++) {
        const gr_dcgm_result *r = &diag->results[i];
        const gr_checks_dcgm_gpu *g = find_gpu(gpus, n_gpus, r->gpu_id);
        if (!g)
            continue; /* not allocated to this container */
        if (r->status != GR_DCGM_PASS && r->status != GR_DCGM_WARN && r->status != GR_DCGM_FAIL)
            continue;
        char camel[GR_DCGM_TEST_NAME_MAX];
        gr_checks_dcgm_camel(r->test, camel, sizeof camel);
        char check[96];
        snprintf(check, sizeof check, "%s%s", GR_CHECKS_CHECK_DCGM, camel);
        gr_checks_event *ev = &events[(*n_events)++];
        if (r->status == GR_DCGM_PASS) {
            gr_checks_event_set(ev, check, 1, 0, GR_HEALTH_ACTION_NONE, NULL, "Test passed");
        } else {
            const char *code = r->error_code ? gr_checks_dcgm_fr_name(r->error_code) : NULL;
            gr_health_action action = GR_HEALTH_ACTION_CONTACT_SUPPORT;
            if (code && !gr_checks_dcgm_map_lookup(map, code, &action))
                action = GR_HEALTH_ACTION_CONTACT_SUPPORT;
            int fatal = r->status == GR_DCGM_FAIL && action != GR_HEALTH_ACTION_NONE;
            const char *msg = r->msg[0]                   ? r->msg
                              : r->status == GR_DCGM_WARN ? "Test passed with warnings"
                                                          : "Test failed";
            gr_checks_event_set(ev, check, 0, fatal, action, code, "%s", msg);
            *any_fatal |= fatal;
        }
        snprintf(ev->entity_uuid, sizeof ev->entity_uuid, "%s", g->uuid);
    }
}

void gr_checks_dcgm_status_event(const char *st_name, int attempts, gr_checks_event *ev)
{
    gr_checks_event_set(ev, GR_CHECKS_CHECK_DCGM, 0, 0, GR_HEALTH_ACTION_NONE, st_name,
                        "DCGM diagnostic returned %s after %d attempts; diagnostic did not "
                        "complete",
                        st_name, attempts);
}

/* Per-GPU test names by index in dcgmDiagResponsePerGpu_v5.results[]. */
static const char *const v10_tests[GR_DCGM_PER_GPU_TESTS] = {"memory",
                                                             "diagnostic",
                                                             "pcie",
                                                             "sm_stress",
                                                             "targeted_stress",
                                                             "targeted_power",
                                                             "memory_bandwidth",
                                                             "memtest",
                                                             "pulse_test",
                                                             "eud",
                                                             NULL,
                                                             "cpu_eud",
                                                             NULL};

static int worse(int a, int b)
{
    /* FAIL > WARN > PASS > SKIP/NOT_RUN */
    static const int rank[] = {2, 0, 3, 4, 0};
    int ra = a >= 0 && a <= 4 ? rank[a] : 0;
    int rb = b >= 0 && b <= 4 ? rank[b] : 0;
    return rb > ra ? b : a;
}

static void first_error(const gr_dcgmDiagTestResult_v3 *t, int gpu, unsigned int *code, char *msg,
                        size_t len)
{
    for (int k = 0; k < GR_DCGM_MAX_ERRORS; k++) {
        const gr_dcgmDiagErrorDetail_v2 *e = &t->error[k];
        if (e->code == 0 && e->msg[0] == '\0')
            continue;
        if (gpu >= 0 && e->gpuId >= 0 && e->gpuId != gpu)
            continue;
        *code = e->code;
        size_t n = strnlen(e->msg, sizeof e->msg);
        if (n >= len)
            n = len - 1;
        memcpy(msg, e->msg, n);
        msg[n] = '\0';
        return;
    }
}

int gr_checks_dcgm_from_v10(const void *resp, size_t size, gr_dcgm_diag *out, gr_err *err)
{
    const gr_dcgmDiagResponse_v10 *r = resp;
    out->n = 0;
    if (size < sizeof *r || r->version != GR_DCGM_DIAG_RESPONSE_VERSION10)
        return gr_err_set(err, GR_EINVAL, "DCGM diagnostic response has version 0x%x, want 0x%x",
                          size >= sizeof(unsigned int) ? r->version : 0u,
                          GR_DCGM_DIAG_RESPONSE_VERSION10);
    if (r->gpuCount > 32 || r->levelOneTestCount > GR_DCGM_LEVEL_ONE_MAX)
        return gr_err_set(err, GR_EINVAL, "DCGM diagnostic response counts out of range");
    for (unsigned int g = 0; g < r->gpuCount; g++) {
        const gr_dcgmDiagResponsePerGpu_v5 *pg = &r->perGpuResponses[g];
        /* software: the worst system-wide result */
        if (r->levelOneTestCount > 0 && out->n < GR_DCGM_MAX_RESULTS) {
            gr_dcgm_result *res = &out->results[out->n];
            memset(res, 0, sizeof *res);
            snprintf(res->test, sizeof res->test, "software");
            res->gpu_id = pg->gpuId;
            res->status = GR_DCGM_NOT_RUN;
            for (unsigned int t = 0; t < r->levelOneTestCount; t++) {
                int st = r->levelOneResults[t].status;
                if (worse(res->status, st) == st && st != res->status) {
                    res->status = st;
                    if (st == GR_DCGM_FAIL || st == GR_DCGM_WARN) {
                        res->error_code = 0;
                        res->msg[0] = '\0';
                        first_error(&r->levelOneResults[t], (int)pg->gpuId, &res->error_code,
                                    res->msg, sizeof res->msg);
                    }
                }
            }
            out->n++;
        }
        for (int t = 0; t < GR_DCGM_PER_GPU_TESTS && out->n < GR_DCGM_MAX_RESULTS; t++) {
            if (!v10_tests[t])
                continue;
            const gr_dcgmDiagTestResult_v3 *tr = &pg->results[t];
            gr_dcgm_result *res = &out->results[out->n++];
            memset(res, 0, sizeof *res);
            snprintf(res->test, sizeof res->test, "%s", v10_tests[t]);
            res->gpu_id = pg->gpuId;
            res->status = tr->status;
            if (tr->status == GR_DCGM_FAIL || tr->status == GR_DCGM_WARN)
                first_error(tr, -1, &res->error_code, res->msg, sizeof res->msg);
        }
    }
    return GR_OK;
}
