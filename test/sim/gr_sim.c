/* gr_sim.c — see gr_sim.h. */
#include "gr_sim.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gr_duration.h"
#include "gr_yaml.h"

#define NS_PER_S INT64_C(1000000000)

/* ---------------------------------------------------------------- tables */

/* Shapes from NVIDIA GPU feature discovery labels and nvidia-smi; gpus/mlnx
 * per node from the NVCRE catalog defaults (fact sheet §1.3); busbw is a
 * typical single-node all_reduce_perf peak bus bandwidth. */
static const gr_sim_gpu GPUS[] = {
    {"h100", "NVIDIA-H100-80GB-HBM3", "hopper", "NVIDIA H100 80GB HBM3", 81559, 9, 0, 8, 8, 480.0,
     "amd64", "0x2330"},
    {"h200", "NVIDIA-H200", "hopper", "NVIDIA H200", 143771, 9, 0, 8, 8, 480.0, "amd64", "0x2335"},
    {"a100", "NVIDIA-A100-SXM4-80GB", "ampere", "NVIDIA A100-SXM4-80GB", 81920, 8, 0, 8, 8, 230.0,
     "amd64", "0x20b2"},
    {"l40s", "NVIDIA-L40S", "ada-lovelace", "NVIDIA L40S", 46068, 8, 9, 8, 8, 22.0, "amd64",
     "0x26b9"},
    {"l40", "NVIDIA-L40", "ada-lovelace", "NVIDIA L40", 46068, 8, 9, 8, 4, 22.0, "amd64", "0x26b5"},
    {"b200", "NVIDIA-B200", "blackwell", "NVIDIA B200", 183359, 10, 0, 8, 8, 780.0, "amd64",
     "0x2901"},
    {"gb200", "NVIDIA-GB200", "blackwell", "NVIDIA GB200", 189471, 10, 0, 4, 8, 820.0, "arm64",
     "0x2941"},
    {"gb300", "NVIDIA-GB300", "blackwell", "NVIDIA GB300", 284208, 10, 3, 4, 8, 850.0, "arm64",
     "0x31c2"},
};

static const char *const PLATFORMS[] = {"aws", "gcp", "azure", "oci", "onprem"};

const gr_sim_gpu *gr_sim_gpu_find(const char *key)
{
    if (key == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof GPUS / sizeof GPUS[0]; i++)
        if (strcmp(GPUS[i].key, key) == 0)
            return &GPUS[i];
    return NULL;
}

int gr_sim_platform_valid(const char *platform)
{
    if (platform == NULL)
        return 0;
    for (size_t i = 0; i < sizeof PLATFORMS / sizeof PLATFORMS[0]; i++)
        if (strcmp(PLATFORMS[i], platform) == 0)
            return 1;
    return 0;
}

const char *gr_sim_gpu_names(void)
{
    return "h100 h200 a100 l40s l40 b200 gb200 gb300";
}
const char *gr_sim_platform_names(void)
{
    return "aws gcp azure oci onprem";
}

/* ---------------------------------------------------------------- spec */

void gr_sim_spec_init(gr_sim_spec *s)
{
    memset(s, 0, sizeof *s);
    s->busbw_gbps = -1;
    s->duration_ns = 5 * NS_PER_S;
    s->nccl_duration_ns = 10 * NS_PER_S;
    s->dcgm_duration_ns = 10 * NS_PER_S;
}

void gr_sim_spec_free(gr_sim_spec *s)
{
    free(s->nodes);
    free(s->train_jobs);
    json_decref(s->unschedulable);
    gr_sim_spec_init(s);
}

const gr_sim_node_fault *gr_sim_spec_node(const gr_sim_spec *s, const char *node)
{
    if (s == NULL || node == NULL)
        return NULL;
    for (size_t i = 0; i < s->n_nodes; i++)
        if (strcmp(s->nodes[i].name, node) == 0)
            return &s->nodes[i];
    return NULL;
}

/* keys_only: every key of obj is in the NULL-terminated list. */
static int keys_only(const json_t *obj, const char *where, const char *const *allowed, gr_err *err)
{
    const char *k;
    json_t *v;
    json_t *o = json_incref((json_t *)(uintptr_t)obj); /* jansson's iteration API is not const */
    json_object_foreach(o, k, v)
    {
        int ok = 0;
        (void)v;
        for (size_t i = 0; allowed[i] != NULL; i++)
            if (strcmp(k, allowed[i]) == 0)
                ok = 1;
        if (!ok) {
            gr_buf list = GR_BUF_INIT(1024);
            for (size_t i = 0; allowed[i] != NULL; i++)
                gr_buf_printf(&list, "%s%s", i ? ", " : "", allowed[i]);
            int rc = gr_err_set(err, GR_EINVAL,
                                "%s.%s: unknown field (known: %s); fix the spelling or remove it",
                                where, k, list.data ? list.data : "");
            gr_buf_free(&list);
            json_decref(o);
            return rc;
        }
    }
    json_decref(o);
    return GR_OK;
}

static int get_string(const json_t *obj, const char *key, const char *where, char *out,
                      size_t outsz, int required, gr_err *err)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v)) {
        if (required)
            return gr_err_set(err, GR_EINVAL, "%s.%s: required; add it", where, key);
        return GR_OK;
    }
    if (!json_is_string(v))
        return gr_err_set(err, GR_EINVAL, "%s.%s: must be a string", where, key);
    if (json_string_length(v) >= outsz)
        return gr_err_set(err, GR_EINVAL, "%s.%s: longer than %zu bytes; shorten it", where, key,
                          outsz - 1);
    memcpy(out, json_string_value(v), json_string_length(v) + 1);
    return GR_OK;
}

static int get_number(const json_t *obj, const char *key, const char *where, double lo, double hi,
                      double *out, gr_err *err)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return GR_OK;
    if (!json_is_number(v))
        return gr_err_set(err, GR_EINVAL, "%s.%s: must be a number", where, key);
    double d = json_number_value(v);
    if (!(d >= lo && d <= hi))
        return gr_err_set(err, GR_EINVAL, "%s.%s: %g is out of range [%g, %g]", where, key, d, lo,
                          hi);
    *out = d;
    return GR_OK;
}

static int get_int(const json_t *obj, const char *key, const char *where, int lo, int hi, int *out,
                   gr_err *err)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return GR_OK;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return gr_err_set(err, GR_EINVAL, "%s.%s: must be an integer in [%d, %d]", where, key, lo,
                          hi);
    *out = (int)json_integer_value(v);
    return GR_OK;
}

static int get_duration(const json_t *obj, const char *key, const char *where, int64_t *out,
                        gr_err *err)
{
    json_t *v = json_object_get(obj, key);
    if (v == NULL || json_is_null(v))
        return GR_OK;
    if (!json_is_string(v))
        return gr_err_set(err, GR_EINVAL, "%s.%s: must be a duration string such as \"30s\"", where,
                          key);
    int64_t ns;
    gr_err e;
    if (gr_duration_parse(json_string_value(v), &ns, &e) != GR_OK)
        return gr_err_set(err, GR_EINVAL, "%s.%s: %s", where, key, e.msg);
    if (ns < 0 || ns > 24 * 3600 * NS_PER_S)
        return gr_err_set(err, GR_EINVAL, "%s.%s: must be between 0s and 24h", where, key);
    *out = ns;
    return GR_OK;
}

static int parse_timed(const json_t *v, const char *where, gr_sim_timed *t, gr_err *err)
{
    static const char *const keys[] = {"after", "from", NULL};
    if (!json_is_object(v))
        return gr_err_set(err, GR_EINVAL, "%s: must be a mapping like {after: 30s, from: firstPod}",
                          where);
    int rc = keys_only(v, where, keys, err);
    if (rc != GR_OK)
        return rc;
    t->enabled = 1;
    t->after_ns = 0;
    t->from = GR_SIM_FROM_FIRST_POD;
    if ((rc = get_duration(v, "after", where, &t->after_ns, err)) != GR_OK)
        return rc;
    char from[32] = "";
    if ((rc = get_string(v, "from", where, from, sizeof from, 0, err)) != GR_OK)
        return rc;
    if (from[0] == '\0' || strcmp(from, "firstPod") == 0)
        t->from = GR_SIM_FROM_FIRST_POD;
    else if (strcmp(from, "start") == 0)
        t->from = GR_SIM_FROM_START;
    else
        return gr_err_set(err, GR_EINVAL, "%s.from: \"%s\" is not one of firstPod, start", where,
                          from);
    return GR_OK;
}

static int parse_node(const json_t *v, size_t i, gr_sim_node_fault *f, gr_err *err)
{
    static const char *const keys[] = {"name",   "busbwGBps", "dcgm", "notReady",
                                       "cordon", "gpus",      NULL};
    static const char *const dkeys[] = {"fail", "test", "message", "exitCode", NULL};
    char where[64];
    snprintf(where, sizeof where, "nodes[%zu]", i);
    if (!json_is_object(v))
        return gr_err_set(err, GR_EINVAL, "%s: must be a mapping with a name", where);
    int rc = keys_only(v, where, keys, err);
    if (rc != GR_OK)
        return rc;
    memset(f, 0, sizeof *f);
    f->busbw_gbps = -1;
    f->gpus = -1;
    f->dcgm_exit_code = 1;
    if ((rc = get_string(v, "name", where, f->name, sizeof f->name, 1, err)) != GR_OK)
        return rc;
    if (f->name[0] == '\0')
        return gr_err_set(err, GR_EINVAL, "%s.name: must not be empty", where);
    if ((rc = get_number(v, "busbwGBps", where, 0, 100000, &f->busbw_gbps, err)) != GR_OK)
        return rc;
    if ((rc = get_int(v, "gpus", where, 0, 64, &f->gpus, err)) != GR_OK)
        return rc;
    json_t *d = json_object_get(v, "dcgm");
    if (d != NULL) {
        char dw[80];
        snprintf(dw, sizeof dw, "%s.dcgm", where);
        if (!json_is_object(d))
            return gr_err_set(err, GR_EINVAL, "%s: must be a mapping like {fail: true}", dw);
        if ((rc = keys_only(d, dw, dkeys, err)) != GR_OK)
            return rc;
        json_t *fail = json_object_get(d, "fail");
        if (fail != NULL && !json_is_boolean(fail))
            return gr_err_set(err, GR_EINVAL, "%s.fail: must be true or false", dw);
        f->dcgm_fail = fail == NULL || json_is_true(fail);
        snprintf(f->dcgm_test, sizeof f->dcgm_test, "%s", "Page Retirement/Row Remap");
        if ((rc = get_string(d, "test", dw, f->dcgm_test, sizeof f->dcgm_test, 0, err)) != GR_OK)
            return rc;
        if ((rc = get_string(d, "message", dw, f->dcgm_message, sizeof f->dcgm_message, 0, err)) !=
            GR_OK)
            return rc;
        if ((rc = get_int(d, "exitCode", dw, 1, 255, &f->dcgm_exit_code, err)) != GR_OK)
            return rc;
    }
    char tw[80];
    json_t *t;
    if ((t = json_object_get(v, "notReady")) != NULL) {
        snprintf(tw, sizeof tw, "%s.notReady", where);
        if ((rc = parse_timed(t, tw, &f->not_ready, err)) != GR_OK)
            return rc;
    }
    if ((t = json_object_get(v, "cordon")) != NULL) {
        snprintf(tw, sizeof tw, "%s.cordon", where);
        if ((rc = parse_timed(t, tw, &f->cordon, err)) != GR_OK)
            return rc;
    }
    return GR_OK;
}

static int parse_job(const json_t *v, size_t i, gr_sim_job_fault *f, gr_err *err)
{
    static const char *const keys[] = {"name", "node", "namespace", "exitCode", "message", NULL};
    char where[64];
    snprintf(where, sizeof where, "trainJobs[%zu]", i);
    if (!json_is_object(v))
        return gr_err_set(err, GR_EINVAL, "%s: must be a mapping with a name or a node", where);
    int rc = keys_only(v, where, keys, err);
    if (rc != GR_OK)
        return rc;
    memset(f, 0, sizeof *f);
    f->exit_code = 1;
    if ((rc = get_string(v, "name", where, f->name, sizeof f->name, 0, err)) != GR_OK)
        return rc;
    if ((rc = get_string(v, "node", where, f->node, sizeof f->node, 0, err)) != GR_OK)
        return rc;
    if (f->name[0] == '\0' && f->node[0] == '\0')
        return gr_err_set(err, GR_EINVAL,
                          "%s: needs a name (the TrainJob's) or a node (its pods' node), or both",
                          where);
    if ((rc = get_string(v, "namespace", where, f->namespace_, sizeof f->namespace_, 0, err)) !=
        GR_OK)
        return rc;
    if ((rc = get_string(v, "message", where, f->message, sizeof f->message, 0, err)) != GR_OK)
        return rc;
    return get_int(v, "exitCode", where, 1, 255, &f->exit_code, err);
}

static int parse_selector(const json_t *v, size_t i, gr_err *err)
{
    static const char *const keys[] = {"podSelector", NULL};
    static const char *const skeys[] = {"matchLabels", "matchExpressions", NULL};
    char where[64];
    snprintf(where, sizeof where, "unschedulable[%zu]", i);
    if (!json_is_object(v))
        return gr_err_set(err, GR_EINVAL, "%s: must be a mapping with a podSelector", where);
    int rc = keys_only(v, where, keys, err);
    if (rc != GR_OK)
        return rc;
    json_t *sel = json_object_get(v, "podSelector");
    strncat(where, ".podSelector", sizeof where - strlen(where) - 1);
    if (!json_is_object(sel) || json_object_size(sel) == 0)
        return gr_err_set(err, GR_EINVAL,
                          "%s: required, a label selector like {matchLabels: {app: x}}", where);
    if ((rc = keys_only(sel, where, skeys, err)) != GR_OK)
        return rc;
    json_t *ml = json_object_get(sel, "matchLabels");
    if (ml != NULL) {
        const char *k;
        json_t *lv;
        if (!json_is_object(ml))
            return gr_err_set(err, GR_EINVAL, "%s.matchLabels: must be a mapping of strings",
                              where);
        json_object_foreach(ml, k, lv)
        {
            if (!json_is_string(lv))
                return gr_err_set(err, GR_EINVAL, "%s.matchLabels.%s: must be a string (quote it)",
                                  where, k);
        }
    }
    json_t *me = json_object_get(sel, "matchExpressions");
    if (me != NULL && !json_is_array(me))
        return gr_err_set(err, GR_EINVAL, "%s.matchExpressions: must be a list", where);
    return GR_OK;
}

static int parse_spec_doc(const json_t *doc, gr_sim_spec *s, gr_err *err)
{
    static const char *const keys[] = {"apiVersion", "kind",          "defaults", "nodes",
                                       "trainJobs",  "unschedulable", NULL};
    static const char *const dkeys[] = {"busbwGBps",    "durationSeconds", "duration",
                                        "ncclDuration", "dcgmDuration",    NULL};
    if (!json_is_object(doc))
        return gr_err_set(err, GR_EINVAL,
                          "fault spec: must be a mapping (see docs/simulated-cluster.md)");
    int rc = keys_only(doc, "spec", keys, err);
    if (rc != GR_OK)
        return rc;
    json_t *v = json_object_get(doc, "kind");
    if (v != NULL && !(json_is_string(v) && strcmp(json_string_value(v), "FaultSpec") == 0))
        return gr_err_set(err, GR_EINVAL, "spec.kind: must be FaultSpec");
    v = json_object_get(doc, "apiVersion");
    if (v != NULL &&
        !(json_is_string(v) && strcmp(json_string_value(v), "sim.gpuready.io/v1alpha1") == 0))
        return gr_err_set(err, GR_EINVAL, "spec.apiVersion: must be sim.gpuready.io/v1alpha1");
    json_t *d = json_object_get(doc, "defaults");
    if (d != NULL) {
        if (!json_is_object(d))
            return gr_err_set(err, GR_EINVAL, "spec.defaults: must be a mapping");
        if ((rc = keys_only(d, "defaults", dkeys, err)) != GR_OK)
            return rc;
        if ((rc = get_number(d, "busbwGBps", "defaults", 0, 100000, &s->busbw_gbps, err)) != GR_OK)
            return rc;
        if ((rc = get_duration(d, "duration", "defaults", &s->duration_ns, err)) != GR_OK)
            return rc;
        if ((rc = get_duration(d, "ncclDuration", "defaults", &s->nccl_duration_ns, err)) != GR_OK)
            return rc;
        if ((rc = get_duration(d, "dcgmDuration", "defaults", &s->dcgm_duration_ns, err)) != GR_OK)
            return rc;
        int secs = -1;
        if ((rc = get_int(d, "durationSeconds", "defaults", 0, 86400, &secs, err)) != GR_OK)
            return rc;
        if (secs >= 0)
            s->duration_ns = s->nccl_duration_ns = s->dcgm_duration_ns = secs * NS_PER_S;
    }
    json_t *a = json_object_get(doc, "nodes");
    if (a != NULL) {
        if (!json_is_array(a))
            return gr_err_set(err, GR_EINVAL, "spec.nodes: must be a list of {name: ..., ...}");
        if (json_array_size(a) > GR_SIM_MAX_FAULTS)
            return gr_err_set(err, GR_ETOOBIG, "spec.nodes: more than %d entries",
                              GR_SIM_MAX_FAULTS);
        if (json_array_size(a) > 0) {
            s->nodes = calloc(json_array_size(a), sizeof *s->nodes);
            if (s->nodes == NULL)
                return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < json_array_size(a); i++) {
            if ((rc = parse_node(json_array_get(a, i), i, &s->nodes[i], err)) != GR_OK)
                return rc;
            for (size_t j = 0; j < i; j++)
                if (strcmp(s->nodes[j].name, s->nodes[i].name) == 0)
                    return gr_err_set(
                        err, GR_EINVAL,
                        "nodes[%zu].name: \"%s\" already listed at nodes[%zu]; merge them", i,
                        s->nodes[i].name, j);
            s->n_nodes = i + 1;
        }
    }
    a = json_object_get(doc, "trainJobs");
    if (a != NULL) {
        if (!json_is_array(a))
            return gr_err_set(err, GR_EINVAL,
                              "spec.trainJobs: must be a list of {name: ..., exitCode: ...}");
        if (json_array_size(a) > GR_SIM_MAX_FAULTS)
            return gr_err_set(err, GR_ETOOBIG, "spec.trainJobs: more than %d entries",
                              GR_SIM_MAX_FAULTS);
        if (json_array_size(a) > 0) {
            s->train_jobs = calloc(json_array_size(a), sizeof *s->train_jobs);
            if (s->train_jobs == NULL)
                return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < json_array_size(a); i++) {
            if ((rc = parse_job(json_array_get(a, i), i, &s->train_jobs[i], err)) != GR_OK)
                return rc;
            s->n_train_jobs = i + 1;
        }
    }
    a = json_object_get(doc, "unschedulable");
    if (a != NULL) {
        if (!json_is_array(a))
            return gr_err_set(err, GR_EINVAL,
                              "spec.unschedulable: must be a list of {podSelector: ...}");
        if (json_array_size(a) > GR_SIM_MAX_FAULTS)
            return gr_err_set(err, GR_ETOOBIG, "spec.unschedulable: more than %d entries",
                              GR_SIM_MAX_FAULTS);
        for (size_t i = 0; i < json_array_size(a); i++)
            if ((rc = parse_selector(json_array_get(a, i), i, err)) != GR_OK)
                return rc;
        s->unschedulable = json_incref(a);
    }
    return GR_OK;
}

int gr_sim_spec_parse(const char *buf, size_t len, const char *name, gr_sim_spec *s, gr_err *err)
{
    gr_sim_spec_init(s);
    if (len > GR_SIM_SPEC_MAX_BYTES)
        return gr_err_set(err, GR_ETOOBIG, "%s: fault spec larger than %zu bytes",
                          name ? name : "<spec>", GR_SIM_SPEC_MAX_BYTES);
    json_t *docs = NULL;
    int rc = gr_yaml_load_all(buf, len, name, &docs, err);
    if (rc != GR_OK)
        return rc;
    if (json_array_size(docs) > 1) {
        json_decref(docs);
        return gr_err_set(err, GR_EINVAL, "%s: one YAML document expected, found %zu",
                          name ? name : "<spec>", json_array_size(docs));
    }
    if (json_array_size(docs) == 1)
        rc = parse_spec_doc(json_array_get(docs, 0), s, err);
    json_decref(docs);
    if (rc != GR_OK) {
        if (err != NULL && name != NULL)
            gr_err_prefix(err, "%s: ", name);
        gr_sim_spec_free(s);
    }
    return rc;
}

int gr_sim_spec_load_file(const char *path, gr_sim_spec *s, gr_err *err)
{
    gr_sim_spec_init(s);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return gr_err_set(err, GR_EIO, "%s: cannot open the fault spec", path);
    gr_buf b = GR_BUF_INIT(GR_SIM_SPEC_MAX_BYTES);
    char chunk[8192];
    size_t n;
    int rc = GR_OK;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if ((rc = gr_buf_append(&b, chunk, n)) != GR_OK)
            break;
    int bad = ferror(f);
    fclose(f);
    if (rc != GR_OK || bad) {
        gr_buf_free(&b);
        return rc == GR_ETOOBIG
                   ? gr_err_set(err, rc, "%s: fault spec larger than %zu bytes", path,
                                GR_SIM_SPEC_MAX_BYTES)
                   : gr_err_set(err, rc != GR_OK ? rc : GR_EIO, "%s: read failed", path);
    }
    rc = gr_sim_spec_parse(b.data ? b.data : "", b.len, path, s, err);
    gr_buf_free(&b);
    return rc;
}

/* ---------------------------------------------------------------- nodes */

void gr_sim_node_name(size_t i, size_t n, char *out, size_t outsz)
{
    int width = 2;
    for (size_t m = n; m >= 100 && width < 20; m /= 10)
        width++;
    char num[32];
    snprintf(num, sizeof num, "%0*zu", width & 31, i + 1);
    snprintf(out, outsz, "gpu-node-%s", num);
}

/* Deterministic hex from a seed (splitmix64). */
static void fake_hex(uint64_t seed, char *out, size_t nhex)
{
    static const char hex[] = "0123456789abcdef";
    uint64_t x = seed;
    for (size_t i = 0; i < nhex; i++) {
        if (i % 16 == 0) {
            x += UINT64_C(0x9e3779b97f4a7c15);
            uint64_t z = x;
            z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
            z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
            x = z ^ (z >> 31);
        }
        out[i] = hex[(x >> ((i % 16) * 4)) & 15];
    }
    out[nhex] = '\0';
}

typedef struct platform_shape {
    const char *region, *zone, *instance, *nic_resource;
    int nics;
} platform_shape;

static platform_shape shape_for(const char *platform, const gr_sim_gpu *g)
{
    platform_shape p = {"", "", "", NULL, 0};
    int mlnx = g->mlnx_per_node;
    if (strcmp(platform, "aws") == 0) {
        p.region = "us-east-1";
        p.zone = "us-east-1a";
        p.nic_resource = "vpc.amazonaws.com/efa";
        if (strcmp(g->key, "h100") == 0)
            p.instance = "p5.48xlarge", p.nics = 32;
        else if (strcmp(g->key, "h200") == 0)
            p.instance = "p5e.48xlarge", p.nics = 32;
        else if (strcmp(g->key, "a100") == 0)
            p.instance = "p4d.24xlarge", p.nics = 4;
        else if (strcmp(g->key, "l40s") == 0)
            p.instance = "g6e.48xlarge", p.nics = 4;
        else if (strcmp(g->key, "b200") == 0)
            p.instance = "p6-b200.48xlarge", p.nics = 8;
        else if (strcmp(g->key, "gb200") == 0)
            p.instance = "p6e-gb200.36xlarge", p.nics = 17;
        else
            p.instance = "p5.48xlarge", p.nics = 32;
    } else if (strcmp(platform, "gcp") == 0) {
        p.region = "us-central1";
        p.zone = "us-central1-a";
        if (strcmp(g->key, "h100") == 0)
            p.instance = "a3-megagpu-8g";
        else if (strcmp(g->key, "h200") == 0)
            p.instance = "a3-ultragpu-8g";
        else if (strcmp(g->key, "a100") == 0)
            p.instance = "a2-ultragpu-8g";
        else if (strcmp(g->key, "b200") == 0)
            p.instance = "a4-highgpu-8g";
        else if (strcmp(g->key, "gb200") == 0)
            p.instance = "a4x-highgpu-4g";
        else
            p.instance = "g2-standard-96";
    } else if (strcmp(platform, "azure") == 0) {
        p.region = "eastus";
        p.zone = "eastus-1";
        p.nic_resource = "nvidia.com/mlnxnics";
        p.nics = mlnx;
        if (strcmp(g->key, "h100") == 0)
            p.instance = "Standard_ND96isr_H100_v5";
        else if (strcmp(g->key, "h200") == 0)
            p.instance = "Standard_ND96isr_H200_v5";
        else if (strcmp(g->key, "a100") == 0)
            p.instance = "Standard_ND96amsr_A100_v4";
        else if (strcmp(g->key, "gb200") == 0)
            p.instance = "Standard_ND128isr_NDR_GB200_v6";
        else
            p.instance = "Standard_ND96isr_H100_v5";
    } else if (strcmp(platform, "oci") == 0) {
        p.region = "us-ashburn-1";
        p.zone = "US-ASHBURN-AD-1";
        p.nic_resource = "nvidia.com/mlnxnics";
        /* OCI overrides of the NVCRE catalog (fact sheet §1.3). */
        if (strcmp(g->key, "l40s") == 0)
            mlnx = 2;
        else if (strcmp(g->key, "gb200") == 0)
            mlnx = 0;
        else if (strcmp(g->key, "gb300") == 0)
            mlnx = 4;
        p.nics = mlnx;
        if (strcmp(g->key, "h100") == 0)
            p.instance = "BM.GPU.H100.8";
        else if (strcmp(g->key, "h200") == 0)
            p.instance = "BM.GPU.H200.8";
        else if (strcmp(g->key, "a100") == 0)
            p.instance = "BM.GPU.A100-v2.8";
        else if (strcmp(g->key, "l40s") == 0)
            p.instance = "BM.GPU.L40S-NC.4";
        else if (strcmp(g->key, "b200") == 0)
            p.instance = "BM.GPU.B200.8";
        else if (strcmp(g->key, "gb200") == 0)
            p.instance = "BM.GPU.GB200.4";
        else
            p.instance = "BM.GPU.H100.8";
    } else { /* onprem */
        p.region = "dc1";
        p.zone = "dc1-row1";
        p.nic_resource = "nvidia.com/mlnxnics";
        p.nics = mlnx;
        p.instance = "";
    }
    return p;
}

static int set_str(json_t *o, const char *k, const char *v)
{
    return json_object_set_new(o, k, json_string(v));
}

static json_t *make_node(size_t i, size_t n, const char *platform, const gr_sim_gpu *g)
{
    char name[64], hex[40], buf[512];
    gr_sim_node_name(i, n, name, sizeof name);
    platform_shape ps = shape_for(platform, g);
    int gpus = g->gpus_per_node;
    if (strcmp(platform, "oci") == 0 && (strcmp(g->key, "l40s") == 0))
        gpus = 4;

    json_t *node = json_object(), *meta = json_object(), *labels = json_object(),
           *ann = json_object();
    json_t *spec = json_object(), *status = json_object(), *cap = json_object();
    if (!node || !meta || !labels || !ann || !spec || !status || !cap) {
        json_decref(node), json_decref(meta), json_decref(labels), json_decref(ann);
        json_decref(spec), json_decref(status), json_decref(cap);
        return NULL;
    }
    set_str(node, "apiVersion", "v1");
    set_str(node, "kind", "Node");
    set_str(meta, "name", name);
    set_str(ann, "kwok.x-k8s.io/node", "fake");
    set_str(ann, "node.alpha.kubernetes.io/ttl", "0");

    set_str(labels, "type", "kwok");
    set_str(labels, GR_SIM_LABEL_NODE, "true");
    set_str(labels, "kubernetes.io/hostname", name);
    set_str(labels, "kubernetes.io/os", "linux");
    set_str(labels, "kubernetes.io/arch", g->cpu_arch);
    set_str(labels, "node-role.kubernetes.io/gpu", "");
    /* GPU feature discovery / GPU operator labels. */
    set_str(labels, "nvidia.com/gpu.present", "true");
    set_str(labels, "nvidia.com/gpu.deploy.driver", "true");
    set_str(labels, "nvidia.com/gpu.deploy.device-plugin", "true");
    set_str(labels, "nvidia.com/gpu.deploy.dcgm-exporter", "true");
    set_str(labels, "nvidia.com/gpu.product", g->product);
    set_str(labels, "nvidia.com/gpu.family", g->family);
    snprintf(buf, sizeof buf, "%d", gpus);
    set_str(labels, "nvidia.com/gpu.count", buf);
    snprintf(buf, sizeof buf, "%d", g->memory_mib);
    set_str(labels, "nvidia.com/gpu.memory", buf);
    snprintf(buf, sizeof buf, "%d", g->cc_major);
    set_str(labels, "nvidia.com/gpu.compute.major", buf);
    snprintf(buf, sizeof buf, "%d", g->cc_minor);
    set_str(labels, "nvidia.com/gpu.compute.minor", buf);
    set_str(labels, "nvidia.com/gpu.mode", "compute");
    set_str(labels, "nvidia.com/gpu.replicas", "1");
    set_str(labels, "nvidia.com/gpu.sharing-strategy", "none");
    set_str(labels, "nvidia.com/cuda.driver.major", "570");
    set_str(labels, "nvidia.com/cuda.driver.minor", "124");
    set_str(labels, "nvidia.com/cuda.driver.rev", "06");
    set_str(labels, "nvidia.com/cuda.runtime.major", "12");
    set_str(labels, "nvidia.com/cuda.runtime.minor", "8");
    set_str(labels, "nvidia.com/mig.capable",
            g->cc_major >= 8 && strncmp(g->key, "l40", 3) != 0 ? "true" : "false");
    set_str(labels, "feature.node.kubernetes.io/pci-10de.present", "true");
    if (ps.nics > 0 && strcmp(ps.nic_resource, "nvidia.com/mlnxnics") == 0)
        set_str(labels, "feature.node.kubernetes.io/pci-15b3.present", "true");
    if (strcmp(g->key, "gb200") == 0 || strcmp(g->key, "gb300") == 0) {
        /* Multi-node NVLink: 18 trays (72 GPUs) per NVL72 domain. */
        snprintf(buf, sizeof buf, "0d6e2b1c-5f3a-4c1e-9a8b-7e6f5d4c3b2a.%zu", i / 18);
        set_str(labels, "nvidia.com/gpu.clique", buf);
    }
    /* Topology: region/zone, and topograph-style network blocks (8 nodes per
     * leaf, 32 per spine). */
    if (ps.region[0]) {
        set_str(labels, "topology.kubernetes.io/region", ps.region);
        set_str(labels, "topology.kubernetes.io/zone", ps.zone);
    }
    snprintf(buf, sizeof buf, "leaf-%02zu", i / 8);
    set_str(labels, "network.topology.nvidia.com/leaf", buf);
    snprintf(buf, sizeof buf, "spine-%02zu", i / 32);
    set_str(labels, "network.topology.nvidia.com/spine", buf);
    set_str(labels, "network.topology.nvidia.com/core", "core-00");
    if (ps.instance[0]) {
        set_str(labels, "node.kubernetes.io/instance-type", ps.instance);
        set_str(labels, "beta.kubernetes.io/instance-type", ps.instance);
    }

    fake_hex((uint64_t)i * 7919u + 17u, hex, 17);
    if (strcmp(platform, "aws") == 0) {
        snprintf(buf, sizeof buf, "aws:///%s/i-%s", ps.zone, hex);
        set_str(spec, "providerID", buf);
        set_str(labels, "k8s.io/cloud-provider-aws", "gpuready-sim");
    } else if (strcmp(platform, "gcp") == 0) {
        snprintf(buf, sizeof buf, "gce://gpuready-sim/%s/%s", ps.zone, name);
        set_str(spec, "providerID", buf);
        set_str(labels, "cloud.google.com/gke-nodepool", "gpu-pool");
        set_str(labels, "cloud.google.com/gke-accelerator",
                strcmp(g->key, "h100") == 0 ? "nvidia-h100-mega-80gb" : g->product);
    } else if (strcmp(platform, "azure") == 0) {
        snprintf(buf, sizeof buf,
                 "azure:///subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/"
                 "gpuready-sim/providers/"
                 "Microsoft.Compute/virtualMachineScaleSets/aks-gpu-vmss/virtualMachines/%zu",
                 i);
        set_str(spec, "providerID", buf);
        set_str(labels, "kubernetes.azure.com/agentpool", "gpu");
        set_str(labels, "kubernetes.azure.com/accelerator", "nvidia");
    } else if (strcmp(platform, "oci") == 0) {
        char h2[80];
        fake_hex((uint64_t)i * 104729u + 3u, h2, 60);
        snprintf(buf, sizeof buf, "ocid1.instance.oc1.iad.%s", h2);
        set_str(spec, "providerID", buf);
        set_str(labels, "oci.oraclecloud.com/fault-domain",
                i % 3 == 0   ? "FAULT-DOMAIN-1"
                : i % 3 == 1 ? "FAULT-DOMAIN-2"
                             : "FAULT-DOMAIN-3");
    }

    snprintf(buf, sizeof buf, "%d", gpus);
    set_str(cap, "nvidia.com/gpu", buf);
    if (ps.nic_resource != NULL && ps.nics > 0) {
        snprintf(buf, sizeof buf, "%d", ps.nics);
        set_str(cap, ps.nic_resource, buf);
    }
    set_str(cap, "cpu", strcmp(g->cpu_arch, "arm64") == 0 ? "144" : "192");
    set_str(cap, "memory", strcmp(g->cpu_arch, "arm64") == 0 ? "884Gi" : "2048Gi");
    set_str(cap, "ephemeral-storage", "28Ti");
    set_str(cap, "pods", "110");
    set_str(cap, "hugepages-1Gi", "0");
    set_str(cap, "hugepages-2Mi", "0");
    json_object_set_new(status, "capacity", cap);
    json_object_set_new(status, "allocatable", json_deep_copy(cap));
    json_t *info = json_object();
    if (info != NULL) {
        set_str(info, "architecture", g->cpu_arch);
        set_str(info, "operatingSystem", "linux");
        set_str(info, "osImage", "Ubuntu 24.04.2 LTS (simulated by gpuready)");
        set_str(info, "kernelVersion", "6.8.0-1024-nvidia");
        set_str(info, "containerRuntimeVersion", "containerd://2.0.5");
        set_str(info, "kubeletVersion", "v1.36.3");
        set_str(info, "kubeProxyVersion", "v1.36.3");
        /* KWOK re-renders nodeInfo through YAML: keep the IDs from ever
         * looking like numbers (UUID dashes, a letter first). */
        char id[48];
        fake_hex((uint64_t)i + 99u, hex, 32);
        hex[0] = 'a';
        set_str(info, "machineID", hex);
        snprintf(id, sizeof id, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16,
                 hex + 20);
        set_str(info, "systemUUID", id);
        fake_hex((uint64_t)i + 7777u, hex, 32);
        hex[0] = 'b';
        snprintf(id, sizeof id, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16,
                 hex + 20);
        set_str(info, "bootID", id);
        json_object_set_new(status, "nodeInfo", info);
    }
    json_object_set_new(meta, "labels", labels);
    json_object_set_new(meta, "annotations", ann);
    json_object_set_new(node, "metadata", meta);
    json_object_set_new(node, "spec", spec);
    json_object_set_new(node, "status", status);
    return node;
}

int gr_sim_nodes(size_t n, const char *platform, const char *gpu, json_t **out, gr_err *err)
{
    return gr_sim_nodes_spec(n, platform, gpu, NULL, out, err);
}

int gr_sim_nodes_spec(size_t n, const char *platform, const char *gpu, const gr_sim_spec *s,
                      json_t **out, gr_err *err)
{
    *out = NULL;
    if (n < 1 || n > GR_SIM_MAX_NODES)
        return gr_err_set(err, GR_EINVAL, "--gpu-nodes: %zu is out of range [1, %d]", n,
                          GR_SIM_MAX_NODES);
    if (!gr_sim_platform_valid(platform))
        return gr_err_set(err, GR_EINVAL, "--platform: \"%s\" is not one of %s",
                          platform ? platform : "", gr_sim_platform_names());
    const gr_sim_gpu *g = gr_sim_gpu_find(gpu);
    if (g == NULL)
        return gr_err_set(err, GR_EINVAL, "--gpu: \"%s\" is not one of %s", gpu ? gpu : "",
                          gr_sim_gpu_names());
    json_t *list = json_object(), *items = json_array();
    if (list == NULL || items == NULL) {
        json_decref(list), json_decref(items);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    set_str(list, "apiVersion", "v1");
    set_str(list, "kind", "List");
    json_object_set_new(list, "items", items);
    for (size_t i = 0; i < n; i++) {
        json_t *node = make_node(i, n, platform, g);
        if (node == NULL || json_array_append_new(items, node) != 0) {
            json_decref(list);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        const char *name =
            json_string_value(json_object_get(json_object_get(node, "metadata"), "name"));
        const gr_sim_node_fault *nf = gr_sim_spec_node(s, name ? name : "");
        if (nf != NULL && nf->gpus >= 0) {
            char buf[16];
            snprintf(buf, sizeof buf, "%d", nf->gpus);
            json_t *st = json_object_get(node, "status");
            set_str(json_object_get(st, "capacity"), "nvidia.com/gpu", buf);
            set_str(json_object_get(st, "allocatable"), "nvidia.com/gpu", buf);
        }
    }
    *out = list;
    return GR_OK;
}

/* ---------------------------------------------------------------- pods */

static const char *jstr(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static void copy(char *dst, size_t dsz, const char *src)
{
    snprintf(dst, dsz, "%s", src);
}

/* Does any string of the first container's command+args contain needle? */
static int cmd_has(const json_t *c, const char *needle)
{
    const char *keys[] = {"command", "args"};
    for (size_t k = 0; k < 2; k++) {
        const json_t *a = json_object_get(c, keys[k]);
        size_t i;
        json_t *v;
        json_array_foreach(a, i, v)
        {
            if (json_is_string(v) && strstr(json_string_value(v), needle) != NULL)
                return 1;
        }
    }
    return 0;
}

/* The value of a flag (e.g. "-e") in the container's command+args, split
 * on spaces so that shell lines ("sh -c 'all_reduce_perf -e 8G'") work too:
 * "-e 8G" and "-e8G". Copied into out; NULL when absent. */
static const char *cmd_flag(const json_t *c, const char *flag, char *out, size_t outsz)
{
    const char *keys[] = {"command", "args"};
    size_t fl = strlen(flag);
    int take_next = 0;
    for (size_t k = 0; k < 2; k++) {
        const json_t *a = json_object_get(c, keys[k]);
        size_t i;
        json_t *v;
        json_array_foreach(a, i, v)
        {
            const char *s = json_string_value(v);
            while (s != NULL && *s) {
                while (*s == ' ' || *s == '\'' || *s == '"')
                    s++;
                size_t n = strcspn(s, " '\"");
                if (n == 0)
                    break;
                if (take_next) {
                    snprintf(out, outsz, "%.*s", (int)n, s);
                    return out;
                }
                if (n == fl && strncmp(s, flag, fl) == 0)
                    take_next = 1;
                else if (n > fl && strncmp(s, flag, fl) == 0 && flag[1] != '-') {
                    snprintf(out, outsz, "%.*s", (int)(n - fl), s + fl);
                    return out;
                }
                s += n;
            }
        }
    }
    return NULL;
}

static const json_t *first_container(const json_t *pod)
{
    return json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
}

int gr_sim_pod_plan(const gr_sim_spec *s, const char *gpu, const json_t *pod, gr_sim_plan *out,
                    gr_err *err)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(pod))
        return gr_err_set(err, GR_EINVAL, "pod: not a JSON object");
    const json_t *meta = json_object_get(pod, "metadata"), *spec = json_object_get(pod, "spec");
    const json_t *status = json_object_get(pod, "status");
    if (strcmp(jstr(pod, "kind"), "Pod") != 0) {
        out->skip = "not a Pod";
        return GR_OK;
    }
    copy(out->namespace_, sizeof out->namespace_, jstr(meta, "namespace"));
    copy(out->name, sizeof out->name, jstr(meta, "name"));
    copy(out->uid, sizeof out->uid, jstr(meta, "uid"));
    copy(out->node, sizeof out->node, jstr(spec, "nodeName"));
    const json_t *ann = json_object_get(meta, "annotations");
    const json_t *labels = json_object_get(meta, "labels");
    if (out->name[0] == '\0' || out->namespace_[0] == '\0' || out->uid[0] == '\0') {
        out->skip = "no name/namespace/uid";
        return GR_OK;
    }
    if (json_object_get(meta, "deletionTimestamp") != NULL) {
        out->skip = "being deleted";
        return GR_OK;
    }
    if (out->node[0] == '\0') {
        out->skip = "not bound to a node";
        return GR_OK;
    }
    if (strcmp(jstr(status, "phase"), "Running") != 0) {
        out->skip = "not Running";
        return GR_OK;
    }
    if (json_object_get(ann, GR_SIM_ANN_EXIT_CODE) != NULL) {
        out->skip = "already simulated";
        return GR_OK;
    }
    const char *rp = jstr(spec, "restartPolicy");
    if (rp[0] == '\0' || strcmp(rp, "Always") == 0) {
        out->skip = "restartPolicy Always (runs forever)";
        return GR_OK;
    }
    const json_t *c = first_container(pod);
    copy(out->container, sizeof out->container, jstr(c, "name"));

    const char *w = jstr(ann, GR_SIM_ANN_WORKLOAD);
    if (strcmp(w, "nccl") == 0)
        out->kind = GR_SIM_NCCL;
    else if (strcmp(w, "dcgm") == 0)
        out->kind = GR_SIM_DCGM;
    else if (strcmp(w, "generic") == 0)
        out->kind = GR_SIM_GENERIC;
    else if (w[0] != '\0')
        return gr_err_set(err, GR_EINVAL,
                          "pod %s/%s: annotation %s: \"%s\" is not one of nccl, dcgm, generic",
                          out->namespace_, out->name, GR_SIM_ANN_WORKLOAD, w);
    else if (cmd_has(c, "_perf"))
        out->kind = GR_SIM_NCCL;
    else if (cmd_has(c, "dcgmi") || cmd_has(c, "preflight-dcgm-diag"))
        out->kind = GR_SIM_DCGM; /* dcgmi diag, or gpuready's check (the catalog's dcgm-level*) */
    else
        out->kind = GR_SIM_GENERIC;

    const gr_sim_node_fault *nf = gr_sim_spec_node(s, out->node);
    out->busbw_gbps = gr_sim_node_busbw(s, gpu, out->node);
    out->exit_code = 0;
    out->duration_ns = s ? s->duration_ns : 5 * NS_PER_S;
    if (out->kind == GR_SIM_NCCL)
        out->duration_ns = s ? s->nccl_duration_ns : 10 * NS_PER_S;
    if (out->kind == GR_SIM_DCGM) {
        out->duration_ns = s ? s->dcgm_duration_ns : 10 * NS_PER_S;
        if (nf != NULL && nf->dcgm_fail)
            out->exit_code = nf->dcgm_exit_code;
    }
    /* TrainJob failures: the TrainJob's JobSet carries its name. */
    const char *tj = jstr(labels, "jobset.sigs.k8s.io/jobset-name");
    if (tj[0] == '\0')
        tj = jstr(labels, "trainer.kubeflow.org/trainjob-name");
    /* By node: the pods that use the node's GPUs; a pod without GPUs (an
     * MPI launcher) is no rank there and does not crash with them. */
    int gpu_pod = gr_sim_pod_gpus(pod) > 0;
    for (size_t i = 0; s != NULL && tj[0] != '\0' && i < s->n_train_jobs; i++) {
        const gr_sim_job_fault *jf = &s->train_jobs[i];
        if ((jf->name[0] == '\0' || strcmp(jf->name, tj) == 0) &&
            (jf->node[0] == '\0' || (strcmp(jf->node, out->node) == 0 && gpu_pod)) &&
            (jf->namespace_[0] == '\0' || strcmp(jf->namespace_, out->namespace_) == 0)) {
            out->exit_code = jf->exit_code;
            out->job_fault = jf;
        }
    }
    out->act = 1;
    return GR_OK;
}

double gr_sim_node_busbw(const gr_sim_spec *s, const char *gpu, const char *node)
{
    const gr_sim_gpu *g = gr_sim_gpu_find(gpu);
    const gr_sim_node_fault *nf = gr_sim_spec_node(s, node);
    double bw = g ? g->busbw_gbps : 100.0;
    if (s != NULL && s->busbw_gbps >= 0)
        bw = s->busbw_gbps;
    if (nf != NULL && nf->busbw_gbps >= 0)
        bw = nf->busbw_gbps;
    return bw;
}

/* ---------------------------------------------------------------- groups */

void gr_sim_groups_init(gr_sim_groups *g)
{
    memset(g, 0, sizeof *g);
}

void gr_sim_groups_free(gr_sim_groups *g)
{
    free(g->e);
    memset(g, 0, sizeof *g);
}

void gr_sim_pod_group(const json_t *pod, char *out, size_t outsz)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const json_t *labels = json_object_get(meta, "labels");
    const char *ns = jstr(meta, "namespace");
    const char *js = jstr(labels, "jobset.sigs.k8s.io/jobset-name");
    out[0] = '\0';
    if (ns[0] == '\0')
        return;
    if (js[0] != '\0') {
        snprintf(out, outsz, "%s/jobset/%s", ns, js);
        return;
    }
    const char *job = jstr(labels, "batch.kubernetes.io/job-name");
    if (job[0] != '\0' &&
        json_object_get(labels, "batch.kubernetes.io/job-completion-index") != NULL)
        snprintf(out, outsz, "%s/job/%s", ns, job);
}

long gr_sim_pod_gpus(const json_t *pod)
{
    const json_t *cs = json_object_get(json_object_get(pod, "spec"), "containers");
    const char *kinds[] = {"limits", "requests"};
    long total = 0;
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c)
    {
        long n = 0;
        for (size_t k = 0; k < 2 && n == 0; k++) {
            const json_t *v = json_object_get(
                json_object_get(json_object_get(c, "resources"), kinds[k]), "nvidia.com/gpu");
            if (json_is_integer(v))
                n = (long)json_integer_value(v);
            else if (json_is_string(v))
                n = strtol(json_string_value(v), NULL, 10);
        }
        if (n > 0 && n < 1024)
            total += n;
    }
    return total;
}

int gr_sim_groups_observe(gr_sim_groups *g, const json_t *pod)
{
    char group[2 * GR_SIM_NAME_MAX];
    const json_t *meta = json_object_get(pod, "metadata");
    const char *uid = jstr(meta, "uid");
    const char *node = jstr(json_object_get(pod, "spec"), "nodeName");
    if (uid[0] == '\0' || node[0] == '\0')
        return GR_OK;
    if (gr_sim_pod_gpus(pod) <= 0)
        return GR_OK; /* no GPU, no rank (an MPI launcher): its node is not in the ring */
    gr_sim_pod_group(pod, group, sizeof group);
    if (group[0] == '\0')
        return GR_OK;
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->e[i].uid, uid) == 0)
            return GR_OK; /* a bound pod never moves */
    gr_sim_group_pod *slot;
    if (g->n < g->cap) {
        slot = &g->e[g->n++];
    } else if (g->cap < GR_SIM_MAX_GROUP_PODS) {
        size_t nc = g->cap ? g->cap * 2 : 64;
        if (nc > GR_SIM_MAX_GROUP_PODS)
            nc = GR_SIM_MAX_GROUP_PODS;
        gr_sim_group_pod *ne = realloc(g->e, nc * sizeof *ne);
        if (ne == NULL)
            return GR_ENOMEM;
        g->e = ne;
        g->cap = nc;
        slot = &g->e[g->n++];
    } else {
        slot = &g->e[g->next];
        g->next = (g->next + 1) % g->cap;
    }
    copy(slot->group, sizeof slot->group, group);
    copy(slot->uid, sizeof slot->uid, uid);
    copy(slot->node, sizeof slot->node, node);
    return GR_OK;
}

void gr_sim_groups_apply(const gr_sim_groups *g, const gr_sim_spec *s, const char *gpu,
                         const json_t *pod, gr_sim_plan *p)
{
    char group[2 * GR_SIM_NAME_MAX];
    if (p->kind != GR_SIM_NCCL)
        return;
    gr_sim_pod_group(pod, group, sizeof group);
    if (group[0] == '\0')
        return;
    /* A pod without GPUs (an MPI launcher, runLauncherAsNode false) runs no
     * rank: its own node's bandwidth does not count once the group has
     * GPU pods; their slowest node decides. */
    int own = gr_sim_pod_gpus(pod) > 0, seen = 0;
    for (size_t i = 0; i < g->n; i++) {
        if (strcmp(g->e[i].group, group) != 0)
            continue;
        double bw = gr_sim_node_busbw(s, gpu, g->e[i].node);
        if ((!own && !seen) || bw < p->busbw_gbps)
            p->busbw_gbps = bw;
        seen = 1;
    }
}

/* ---------------------------------------------------------------- logs */

typedef struct logw {
    gr_buf *out;
    int64_t t_ns;
    int rc;
} logw;

static void line(logw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(logw *w, const char *fmt, ...)
{
    if (w->rc != GR_OK)
        return;
    time_t sec = (time_t)(w->t_ns / NS_PER_S);
    struct tm tm;
    gmtime_r(&sec, &tm);
    char ts[64];
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    if ((w->rc = gr_buf_printf(w->out, "%s.%09" PRId64 "Z stdout F ", ts, w->t_ns % NS_PER_S)) !=
        GR_OK)
        return;
    va_list ap;
    va_start(ap, fmt);
    w->rc = gr_buf_vprintf(w->out, fmt, ap);
    va_end(ap);
    if (w->rc == GR_OK)
        w->rc = gr_buf_putc(w->out, '\n');
    w->t_ns += 1000; /* keep lines ordered */
}

/* "8G" / "512M" / "8" → bytes (nccl-tests' -b/-e syntax); 0 when bad. */
static uint64_t parse_size(const char *s)
{
    if (s == NULL || !isdigit((unsigned char)*s))
        return 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t m = 1;
    switch (*end) {
    case 'K':
    case 'k':
        m = 1024;
        break;
    case 'M':
    case 'm':
        m = 1024 * 1024;
        break;
    case 'G':
    case 'g':
        m = 1024ull * 1024 * 1024;
        break;
    default:
        break;
    }
    if (v > (UINT64_C(1) << 40) / m)
        return 0;
    return (uint64_t)v * m;
}

/* One row of all_reduce_perf: a fixed launch latency plus the transfer at
 * the node's peak bandwidth, so busbw rises with the message size towards
 * the peak. busbw = algbw * 2(n-1)/n (nccl-tests' all_reduce factor).
 * Deterministic. */
static void nccl_row(double peak_gbps, uint64_t bytes, int ranks, double jitter, double *time_us,
                     double *algbw, double *busbw)
{
    double factor = ranks > 1 ? 2.0 * (ranks - 1) / ranks : 1.0;
    double alg_peak = peak_gbps / factor * jitter; /* GB/s */
    double t = 25.0 + (alg_peak > 0 ? (double)bytes / (alg_peak * 1e3) : 1e9);
    *time_us = t;
    *algbw = (double)bytes / (t * 1e3);
    *busbw = *algbw * factor;
}

static void nccl_log(logw *w, const gr_sim_plan *p, const gr_sim_gpu *g, const json_t *pod)
{
    const json_t *c = first_container(pod);
    char fb[32];
    uint64_t minb = parse_size(cmd_flag(c, "-b", fb, sizeof fb)),
             maxb = parse_size(cmd_flag(c, "-e", fb, sizeof fb));
    if (minb == 0)
        minb = 8;
    if (maxb == 0 || maxb < minb)
        maxb = UINT64_C(8) * 1024 * 1024 * 1024;
    int ngpus = g ? g->gpus_per_node : 8;
    const char *op = "all_reduce_perf";
    const char *ops[] = {"all_gather_perf", "alltoall_perf", "reduce_scatter_perf",
                         "broadcast_perf"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (cmd_has(c, ops[i]))
            op = ops[i];
    line(w,
         "# nThread 1 nGpus 1 minBytes %" PRIu64 " maxBytes %" PRIu64
         " step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
         minb, maxb);
    line(w, "#");
    line(w, "# Using devices");
    for (int r = 0; r < ngpus; r++)
        line(w, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x%02x] %s", r, 1000 + r, p->node,
             r, 0x18 + r * 0x10, g ? g->model_name : "NVIDIA GPU");
    line(w, "#");
    line(w, "#                                                              out-of-place           "
            "            in-place"
            "          ");
    line(w, "#       size         count      type   redop    root     time   algbw   busbw #wrong  "
            "   time   algbw   "
            "busbw #wrong");
    line(w, "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)         "
            "   (us)  (GB/s)  "
            "(GB/s)       ");
    double sum = 0;
    int rows = 0;
    int is_ar = strcmp(op, "all_reduce_perf") == 0;
    for (uint64_t b = minb; b <= maxb && rows < 64; b *= 2, rows++) {
        double t1, a1, b1, t2, a2, b2;
        nccl_row(p->busbw_gbps, b, ngpus, 1.0, &t1, &a1, &b1);
        nccl_row(p->busbw_gbps, b, ngpus, 0.996, &t2, &a2, &b2);
        line(w,
             "%12" PRIu64 "  %12" PRIu64
             "  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f  %6d  %7.2f  %6.2f  %6.2f  %6d",
             b, b / 4, "float", is_ar ? "sum" : "none", -1, t1, a1, b1, 0, t2, a2, b2, 0);
        sum += b1 + b2;
    }
    line(w, "# Out of bounds values : 0 OK");
    line(w, "# Avg bus bandwidth    : %g ",
         rows ? round(sum / (2.0 * rows) * 1000.0) / 1000.0 : 0.0);
    line(w, "#");
    line(w, "%s", "");
}

static int dcgm_level(const json_t *pod)
{
    const json_t *c = first_container(pod);
    /* gpuready's preflight-dcgm-diag takes its level from DCGM_DIAG_LEVEL. */
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(c, "env"), i, e)
    {
        const char *v = jstr(e, "value");
        if (strcmp(jstr(e, "name"), "DCGM_DIAG_LEVEL") == 0 && v[0] >= '1' && v[0] <= '4')
            return v[0] - '0';
    }
    char fb[32];
    const char *r = cmd_flag(c, "-r", fb, sizeof fb);
    if (r == NULL)
        r = cmd_flag(c, "--run", fb, sizeof fb);
    if (r != NULL && r[0] >= '1' && r[0] <= '4')
        return r[0] - '0';
    return 1;
}

static void dcgm_row(logw *w, const char *name, const char *result)
{
    line(w, "| %-25s | %-46s |", name, result);
}

static void dcgm_log(logw *w, const gr_sim_plan *p, const gr_sim_gpu *g,
                     const gr_sim_node_fault *nf, const json_t *pod)
{
    int level = dcgm_level(pod);
    int ngpus = g ? g->gpus_per_node : 8;
    const char *fail_test = nf != NULL && nf->dcgm_fail ? nf->dcgm_test : NULL;
    char ids[256] = "";
    for (int i = 0; i < ngpus && strlen(ids) + 8 < sizeof ids; i++) {
        strcat(ids, i ? "," : "");
        strcat(ids, g ? g->device_id + 2 : "2330");
    }
    line(w, "Successfully ran diagnostic for group.");
    line(w, "+---------------------------+------------------------------------------------+");
    line(w, "| Diagnostic                | Result                                         |");
    line(w, "+===========================+================================================+");
    line(w, "|-----  Metadata  ----------+------------------------------------------------|");
    dcgm_row(w, "DCGM Version", "4.2.3");
    dcgm_row(w, "Driver Version Detected", "570.124.06");
    dcgm_row(w, "GPU Device IDs Detected", ids);
    dcgm_row(w, "Hostname", p->node);
    line(w, "|-----  Deployment  --------+------------------------------------------------|");
    const char *deploy[] = {"Denylist",
                            "NVML Library",
                            "CUDA Main Library",
                            "Permissions and OS Blocks",
                            "Persistence Mode",
                            "Environment Variables",
                            "Page Retirement/Row Remap",
                            "Graphics Processes",
                            "Inforom"};
    const char *level2[] = {"PCIe", "GPU Memory", "Memory Bandwidth", "Diagnostic"};
    const char *level3[] = {"Targeted Stress", "Targeted Power", "EUD"};
    int failed_shown = 0;
    char msg[400];
    snprintf(msg, sizeof msg, "GPU 3 %s",
             nf != NULL && nf->dcgm_message[0]
                 ? nf->dcgm_message
                 : "There are 12 pending row remappings; reset the GPU to apply them");
    for (size_t i = 0; i < sizeof deploy / sizeof deploy[0]; i++) {
        if (fail_test != NULL && strcmp(fail_test, deploy[i]) == 0) {
            dcgm_row(w, deploy[i], "Fail");
            line(w, "|   Warning                 | %-46.46s |", msg);
            failed_shown = 1;
        } else {
            dcgm_row(w, deploy[i], "Pass");
        }
    }
    if (level >= 2) {
        line(w, "+-----  Integration  -------+------------------------------------------------+");
        for (size_t i = 0; i < sizeof level2 / sizeof level2[0]; i++) {
            if (fail_test != NULL && strcmp(fail_test, level2[i]) == 0) {
                dcgm_row(w, level2[i], "Fail - GPU: 3");
                line(w, "|   Warning                 | %-46.46s |", msg);
                failed_shown = 1;
            } else {
                dcgm_row(w, level2[i], "Pass - All");
            }
        }
    }
    if (level >= 3) {
        line(w, "+-----  Stress  ------------+------------------------------------------------+");
        for (size_t i = 0; i < sizeof level3 / sizeof level3[0]; i++) {
            if (fail_test != NULL && strcmp(fail_test, level3[i]) == 0) {
                dcgm_row(w, level3[i], "Fail - GPU: 3");
                line(w, "|   Warning                 | %-46.46s |", msg);
                failed_shown = 1;
            } else {
                dcgm_row(w, level3[i], "Pass - All");
            }
        }
    }
    if (fail_test != NULL && !failed_shown) {
        /* A failing test outside the level's list still fails the run. */
        line(w, "+-----  Custom  ------------+------------------------------------------------+");
        dcgm_row(w, fail_test, "Fail - GPU: 3");
        line(w, "|   Warning                 | %-46.46s |", msg);
    }
    line(w, "+---------------------------+------------------------------------------------+");
    if (fail_test != NULL)
        line(w, "Error: diagnostic failed: %s (exit %d)", fail_test, p->exit_code);
}

int gr_sim_pod_log(const gr_sim_plan *p, const gr_sim_spec *s, const char *gpu, const json_t *pod,
                   int64_t now_ns, gr_buf *out, gr_err *err)
{
    logw w = {out, now_ns, GR_OK};
    const gr_sim_gpu *g = gr_sim_gpu_find(gpu);
    const gr_sim_node_fault *nf = gr_sim_spec_node(s, p->node);
    if (p->job_fault != NULL) { /* the TrainJob's pod crashes: say why, whatever it runs */
        line(&w, "gpuready-sim: simulated workload %s/%s on node %s (%s, %d GPUs)", p->namespace_,
             p->name, p->node, g ? g->product : "unknown GPU", g ? g->gpus_per_node : 0);
        if (p->job_fault->message[0] != '\0')
            line(&w, "%s", p->job_fault->message);
        else
            line(&w, "gpuready-sim: injected TrainJob failure (trainJobs fault) on node %s",
                 p->node);
        line(&w, "gpuready-sim: finished with exit code %d", p->exit_code);
        if (w.rc != GR_OK)
            return gr_err_set(err, w.rc, "pod %s/%s: log larger than its cap", p->namespace_,
                              p->name);
        return GR_OK;
    }
    switch (p->kind) {
    case GR_SIM_NCCL:
        nccl_log(&w, p, g, pod);
        break;
    case GR_SIM_DCGM:
        dcgm_log(&w, p, g, nf, pod);
        break;
    default:
        line(&w, "gpuready-sim: simulated workload %s/%s on node %s (%s, %d GPUs)", p->namespace_,
             p->name, p->node, g ? g->product : "unknown GPU", g ? g->gpus_per_node : 0);
        line(&w, "gpuready-sim: finished with exit code %d", p->exit_code);
        break;
    }
    if (w.rc != GR_OK)
        return gr_err_set(err, w.rc, "pod %s/%s: log larger than its cap", p->namespace_, p->name);
    return GR_OK;
}

int gr_sim_pod_apply_yaml(const gr_sim_plan *p, const char *logs_file, gr_buf *out, gr_err *err)
{
    /* JSON documents are YAML; jansson does the quoting. */
    json_t *logs = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s}]}}", "apiVersion",
                             "kwok.x-k8s.io/v1alpha1", "kind", "Logs", "metadata", "name", p->name,
                             "namespace", p->namespace_, "spec", "logs", "logsFile", logs_file);
    char code[16], dur[48];
    snprintf(code, sizeof code, "%d", p->exit_code);
    snprintf(dur, sizeof dur, "%" PRId64 "ms", p->duration_ns / 1000000);
    json_t *pod =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s, s:s}}}", "apiVersion", "v1", "kind", "Pod",
                  "metadata", "name", p->name, "namespace", p->namespace_, "uid", p->uid,
                  "annotations", GR_SIM_ANN_EXIT_CODE, code, GR_SIM_ANN_DURATION, dur);
    int rc = GR_ENOMEM;
    if (logs != NULL && pod != NULL) {
        char *a = json_dumps(logs, JSON_COMPACT), *b = json_dumps(pod, JSON_COMPACT);
        if (a != NULL && b != NULL)
            rc = gr_buf_printf(out, "---\n%s\n---\n%s\n", a, b);
        free(a);
        free(b);
    }
    json_decref(logs);
    json_decref(pod);
    if (rc != GR_OK)
        return gr_err_set(err, rc, "pod %s/%s: cannot render the apply document", p->namespace_,
                          p->name);
    return GR_OK;
}

/* ---------------------------------------------------------------- stream */

void gr_sim_stream_init(gr_sim_stream *st)
{
    memset(st, 0, sizeof *st);
    gr_buf_init(&st->cur, GR_SIM_STREAM_MAX);
}

void gr_sim_stream_free(gr_sim_stream *st)
{
    gr_buf_free(&st->cur);
}

static int emit(gr_sim_stream *st, gr_sim_stream_cb cb, void *ctx, int overflow)
{
    gr_err e = {0};
    json_t *v = NULL;
    if (overflow) {
        gr_err_set(&e, GR_ETOOBIG, "watch stream: a JSON value larger than %zu bytes was skipped",
                   GR_SIM_STREAM_MAX);
    } else {
        json_error_t je;
        v = json_loadb(st->cur.data ? st->cur.data : "", st->cur.len, JSON_DECODE_ANY, &je);
        if (v == NULL)
            gr_err_set(&e, GR_EPARSE, "watch stream: line %d column %d: %s", je.line, je.column,
                       je.text);
    }
    int rc = cb(ctx, v, v == NULL ? &e : NULL);
    json_decref(v);
    gr_buf_reset(&st->cur);
    st->depth = st->in_str = st->esc = 0;
    return rc;
}

int gr_sim_stream_feed(gr_sim_stream *st, const char *data, size_t len, gr_sim_stream_cb cb,
                       void *ctx)
{
    for (size_t i = 0; i < len; i++) {
        char c = data[i];
        if (st->depth == 0 && st->cur.len == 0 && (c == ' ' || c == '\n' || c == '\r' || c == '\t'))
            continue;
        if (st->depth == 0 && st->cur.len == 0 && c != '{' && c != '[') {
            /* Not the start of an object/array: resynchronise on the next one. */
            continue;
        }
        if (gr_buf_putc(&st->cur, c) != GR_OK) {
            /* Over the cap: drop it and skip to the end of this value. */
            int rc = emit(st, cb, ctx, 1);
            if (rc != 0)
                return rc;
            continue;
        }
        if (st->in_str) {
            if (st->esc)
                st->esc = 0;
            else if (c == '\\')
                st->esc = 1;
            else if (c == '"')
                st->in_str = 0;
            continue;
        }
        if (c == '"')
            st->in_str = 1;
        else if (c == '{' || c == '[')
            st->depth++;
        else if (c == '}' || c == ']') {
            if (--st->depth == 0) {
                int rc = emit(st, cb, ctx, 0);
                if (rc != 0)
                    return rc;
            }
        }
    }
    return 0;
}
