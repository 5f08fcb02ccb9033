/* Node-allocatable auto-detection for a Certification category
 * (gr_nvcre_detect.h). */
#include "gr_nvcre_detect.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPU_RES "nvidia.com/gpu"
#define QTY_MAX 1000000000L

long gr_nvcre_detect_quantity(const json_t *q)
{
    if (json_is_integer(q)) {
        json_int_t v = json_integer_value(q);
        return v < 0 ? -1 : v > QTY_MAX ? QTY_MAX : (long)v;
    }
    const char *s = json_string_value(q);
    if (!s || !*s)
        return -1;
    long v = 0;
    size_t i = 0;
    for (; s[i] >= '0' && s[i] <= '9'; i++) {
        v = v * 10 + (s[i] - '0');
        if (v > QTY_MAX)
            v = QTY_MAX;
    }
    if (i == 0)
        return -1;
    long mul = 1;
    if (s[i] == 'k')
        mul = 1000L, i++;
    else if (s[i] == 'M')
        mul = 1000000L, i++;
    else if (s[i] == 'G')
        mul = 1000000000L, i++;
    if (s[i])
        return -1;
    return v > QTY_MAX / mul ? QTY_MAX : v * mul;
}

bool gr_nvcre_detect_is_nic_resource(const char *n)
{
    if (!n)
        return false;
    return !strcmp(n, "vpc.amazonaws.com/efa") || !strcmp(n, "nvidia.com/mlnxnics") ||
           !strcmp(n, "nvidia.com/hostdev") || !strncmp(n, "nvidia.com/sriov", 16) ||
           (!strncmp(n, "rdma/", 5) && n[5]);
}

static const json_t *allocatable(const json_t *node)
{
    const json_t *a = json_object_get(json_object_get(node, "status"), "allocatable");
    return json_is_object(a) ? a : NULL;
}

static const char *node_name(const json_t *node)
{
    const char *n = json_string_value(json_object_get(json_object_get(node, "metadata"), "name"));
    return n ? n : "?";
}

static long resource(const json_t *node, const char *res)
{
    return gr_nvcre_detect_quantity(json_object_get(allocatable(node), res));
}

static void appendf(char *buf, size_t sz, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void appendf(char *buf, size_t sz, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len + 1 >= sz)
        return;
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(buf + len, sz - len, fmt, ap);
    va_end(ap);
}

static int add_event(gr_nvcre_detect_result *out, const char *type, const char *reason,
                     const char *msg)
{
    json_t *e = json_pack("{s:s,s:s,s:s}", "type", type, "reason", reason, "message", msg);
    return (!e || json_array_append_new(out->events, e)) ? GR_ENOMEM : GR_OK;
}

/* The most common value > 0 (ties: the larger); 0 when there is none. */
static long mode_of(const long *v, size_t n)
{
    long best = 0;
    size_t best_n = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] <= 0)
            continue;
        size_t c = 0;
        for (size_t j = 0; j < n; j++)
            c += v[j] == v[i];
        if (c > best_n || (c == best_n && v[i] > best))
            best = v[i], best_n = c;
    }
    return best;
}

static const json_t *opt(const gr_nvcre_detect_req *r, const char *k)
{
    const json_t *v = json_object_get(r->category_options, k);
    return v ? v : json_object_get(r->global_options, k);
}

static int opt_int(const json_t *o, const char *k, int dflt)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (int)json_integer_value(v) : dflt;
}

/* GPU count from allocatable nvidia.com/gpu. */
static int detect_gpus(const gr_nvcre_detect_req *r, gr_nvcre_detect_result *out, long *v, size_t n,
                       size_t reporting)
{
    int dflt = opt_int(r->platform_options, "gpusPerNode", 4);
    const json_t *user = opt(r, "gpusPerNode");
    out->gpus_per_node = json_is_integer(user) ? (int)json_integer_value(user) : dflt;
    if (json_is_integer(user) || reporting == 0)
        return GR_OK;
    size_t i;
    json_t *node;
    for (i = 0; i < n; i++)
        v[i] = resource(json_array_get(r->nodes, i), GPU_RES);
    long m = mode_of(v, n);
    if (m <= 0)
        return GR_OK;
    char msg[768] = "";
    size_t agree = 0, listed = 0, outliers = 0;
    for (i = 0; i < n; i++)
        agree += v[i] == m;
    json_array_foreach(r->nodes, i, node)
    {
        if (v[i] <= 0 || v[i] == m)
            continue;
        if (listed < GR_NVCRE_DETECT_MAX_LISTED) {
            appendf(msg, sizeof msg, "%s%s has %ld", listed ? ", " : "", node_name(node), v[i]);
            listed++;
        }
        outliers++;
    }
    if (r->explicit_count && m != dflt) {
        snprintf(out->fail, sizeof out->fail,
                 "options.gpusPerNode: the target nodes have %ld allocatable " GPU_RES
                 " but %s servers come in several sizes and the catalog default is %d, so the "
                 "count is not guessed. Set options.gpusPerNode (in this category's options or "
                 "globally) to the number of GPUs each test pod should use",
                 m, r->arch, dflt);
        return GR_OK;
    }
    if (outliers) {
        char w[1024];
        snprintf(w, sizeof w,
                 "Target nodes disagree on allocatable " GPU_RES
                 ": %ld on %zu of %zu node(s); using %ld. Others: %s%s",
                 m, agree, reporting, m, msg, outliers > listed ? ", …" : "");
        if (add_event(out, "Warning", GR_NVCRE_REASON_GPU_COUNT_MISMATCH, w) != GR_OK)
            return GR_ENOMEM;
    }
    out->gpus_per_node = (int)m;
    if (json_object_set_new(out->options, "gpusPerNode", json_integer(m)))
        return GR_ENOMEM;
    char e[512];
    snprintf(e, sizeof e,
             "Using %ld GPUs per node from the target nodes' allocatable " GPU_RES
             " (catalog default for %s: %d); set options.gpusPerNode to override",
             m, r->arch, dflt);
    return add_event(out, "Normal", GR_NVCRE_REASON_GPU_COUNT_DETECTED, e);
}

/* NIC resource from the allocatable; *nic gets the resource requested ("" none). */
static int detect_nic(const gr_nvcre_detect_req *r, gr_nvcre_detect_result *out, long *v, size_t n,
                      size_t reporting, const char **nic)
{
    const json_t *user_nic = opt(r, "nicResourceName");
    const json_t *user_mlnx = opt(r, "mlnxPerNode");
    const char *dflt = json_string_value(json_object_get(r->platform_options, "nicResourceName"));
    int dmlnx = opt_int(r->platform_options, "mlnxPerNode", 0);
    out->mlnx_per_node = json_is_integer(user_mlnx) ? (int)json_integer_value(user_mlnx) : dmlnx;
    *nic = json_is_string(user_nic) ? json_string_value(user_nic) : dflt ? dflt : "";
    /* the user chose, nothing to go by, no default resource, or the catalog
     * requests no NIC for this GPU on this platform (mlnxPerNode 0) */
    if (json_is_string(user_nic) || reporting == 0 || !dflt || !*dflt || out->mlnx_per_node <= 0)
        return GR_OK;
    size_t i;
    json_t *node;
    json_array_foreach(r->nodes, i, node) if (resource(node, dflt) > 0) return GR_OK;
    /* the platform default does not apply: candidates, first-seen order */
    const char *cand[16];
    size_t nc = 0;
    json_array_foreach(r->nodes, i, node)
    {
        const char *k;
        json_t *q;
        json_object_foreach((json_t *)(uintptr_t)allocatable(node), k, q)
        {
            if (!gr_nvcre_detect_is_nic_resource(k) || gr_nvcre_detect_quantity(q) <= 0)
                continue;
            size_t j = 0;
            while (j < nc && strcmp(cand[j], k))
                j++;
            if (j == nc && nc < sizeof cand / sizeof cand[0])
                cand[nc++] = k;
        }
    }
    char msg[768];
    if (nc == 0) {
        *nic = "";
        snprintf(msg, sizeof msg,
                 "Target nodes offer no %s (the platform default) and no other known NIC "
                 "resource; the workload requests no NIC. Set options.nicResourceName and "
                 "options.mlnxPerNode if the nodes have RDMA NICs under another resource name",
                 dflt);
        return add_event(out, "Warning", GR_NVCRE_REASON_NIC_NOT_DETECTED, msg);
    }
    if (nc > 1) {
        *nic = "";
        char list[512] = "";
        for (size_t j = 0; j < nc; j++)
            appendf(list, sizeof list, "%s%s", j ? ", " : "", cand[j]);
        snprintf(msg, sizeof msg,
                 "Target nodes offer several NIC resources (%s) and none is the platform default "
                 "%s; the workload requests no NIC. Set options.nicResourceName (and "
                 "options.mlnxPerNode) to choose one",
                 list, dflt);
        if (json_object_set_new(out->options, "nicResourceName", json_string("")) ||
            json_object_set_new(out->options, "mlnxPerNode", json_integer(0)))
            return GR_ENOMEM;
        out->mlnx_per_node = 0;
        return add_event(out, "Warning", GR_NVCRE_REASON_NIC_AMBIGUOUS, msg);
    }
    for (i = 0; i < n; i++)
        v[i] = resource(json_array_get(r->nodes, i), cand[0]);
    long m = mode_of(v, n);
    *nic = cand[0];
    if (json_object_set_new(out->options, "nicResourceName", json_string(cand[0])))
        return GR_ENOMEM;
    if (!json_is_integer(user_mlnx)) {
        out->mlnx_per_node = (int)m;
        if (json_object_set_new(out->options, "mlnxPerNode", json_integer(m)))
            return GR_ENOMEM;
    }
    snprintf(msg, sizeof msg,
             "Requesting %d %s per node, detected in the target nodes' allocatable (the platform "
             "default %s is not offered); set options.nicResourceName to choose another",
             out->mlnx_per_node, cand[0], dflt);
    return add_event(out, "Normal", GR_NVCRE_REASON_NIC_DETECTED, msg);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int drop_under_capacity(const gr_nvcre_detect_req *r, gr_nvcre_detect_result *out,
                               const char *nic)
{
    bool want_nic = nic && *nic && out->mlnx_per_node > 0;
    char list[768] = "";
    size_t listed = 0, i;
    json_t *node;
    json_array_foreach(r->nodes, i, node)
    {
        bool drop = false;
        if (allocatable(node)) {
            long g = resource(node, GPU_RES), c = want_nic ? resource(node, nic) : 0;
            char why[256] = "";
            if (g >= 0 && g < out->gpus_per_node) {
                drop = true;
                appendf(why, sizeof why, "%ld " GPU_RES, g);
            }
            if (want_nic && c < out->mlnx_per_node) {
                drop = true;
                appendf(why, sizeof why, "%s%ld %s", why[0] ? " and " : "", c < 0 ? 0 : c, nic);
            }
            if (drop && listed++ < GR_NVCRE_DETECT_MAX_LISTED)
                appendf(list, sizeof list, "%s%s has %s", out->dropped ? ", " : "", node_name(node),
                        why);
        }
        if (drop)
            out->dropped++;
        else if (json_array_append_new(out->keep, json_string(node_name(node))))
            return GR_ENOMEM;
    }
    if (!out->dropped)
        return GR_OK;
    /* sorted: the Workflow's target must not depend on the cache's order */
    size_t nk = json_array_size(out->keep);
    const char **names = calloc(nk ? nk : 1, sizeof *names);
    json_t *sorted = json_array();
    if (!names || !sorted) {
        free(names);
        json_decref(sorted);
        return GR_ENOMEM;
    }
    for (i = 0; i < nk; i++)
        names[i] = json_string_value(json_array_get(out->keep, i));
    qsort(names, nk, sizeof *names, cmp_str);
    int rc = GR_OK;
    for (i = 0; i < nk && rc == GR_OK; i++)
        if (json_array_append_new(sorted, json_string(names[i])))
            rc = GR_ENOMEM;
    free(names);
    json_decref(out->keep);
    out->keep = sorted;
    if (rc != GR_OK)
        return rc;
    char need[160], msg[1024];
    snprintf(need, sizeof need, "%d " GPU_RES, out->gpus_per_node);
    if (want_nic)
        appendf(need, sizeof need, " and %d %s", out->mlnx_per_node, nic);
    snprintf(msg, sizeof msg, "Dropped %zu node(s) that cannot fit %s per pod: %s%s", out->dropped,
             need, list, listed > GR_NVCRE_DETECT_MAX_LISTED ? ", …" : "");
    return add_event(out, "Warning", GR_NVCRE_REASON_INSUFFICIENT_CAPACITY, msg);
}

int gr_nvcre_detect(const gr_nvcre_detect_req *req, gr_nvcre_detect_result *out, gr_err *err)
{
    memset(out, 0, sizeof *out);
    out->options = json_object();
    out->keep = json_array();
    out->events = json_array();
    size_t n = json_array_size(req->nodes), reporting = 0, i;
    long *v = calloc(n ? n : 1, sizeof *v);
    int rc = (out->options && out->keep && out->events && v) ? GR_OK : GR_ENOMEM;
    json_t *node;
    json_array_foreach(req->nodes, i, node) reporting += allocatable(node) != NULL;
    const char *nic = "";
    if (rc == GR_OK)
        rc = detect_gpus(req, out, v, n, reporting);
    if (rc == GR_OK && !out->fail[0] && req->uses_nic)
        rc = detect_nic(req, out, v, n, reporting, &nic);
    if (rc == GR_OK && !out->fail[0]) {
        snprintf(out->nic, sizeof out->nic, "%s", nic);
        rc = drop_under_capacity(req, out, nic);
    }
    if (rc == GR_OK && !out->fail[0] && !req->arch_known) {
        char msg[768];
        snprintf(msg, sizeof msg,
                 "GPU product %s maps to no known architecture (%s); using the fallback defaults "
                 "gpusPerNode=%d mlnxPerNode=%d. Set options.gpusPerNode and options.mlnxPerNode "
                 "if they do not fit the nodes",
                 req->product && *req->product ? req->product : "(none)",
                 req->arch && *req->arch ? req->arch : "unknown", out->gpus_per_node,
                 out->mlnx_per_node);
        rc = add_event(out, "Warning", GR_NVCRE_REASON_UNKNOWN_ARCHITECTURE, msg);
    }
    free(v);
    if (rc != GR_OK) {
        gr_nvcre_detect_result_free(out);
        return gr_err_set(err, GR_ENOMEM, "certification: out of memory");
    }
    return GR_OK;
}

void gr_nvcre_detect_result_free(gr_nvcre_detect_result *r)
{
    if (!r)
        return;
    json_decref(r->options);
    json_decref(r->keep);
    json_decref(r->events);
    memset(r, 0, sizeof *r);
}
