/*
 * gr_nvcre_wf.c — the Workflow controller's pure logic (gr_nvcre_wf.h).
 */
#include "gr_nvcre_wf.h"
#include "gr_nvcre_wf_diag.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <zlib.h>

#include "gr_cel.h"
#include "gr_duration.h"
#include "gr_hash.h"
#include "gr_json.h"
#include "gr_nvcre_types.h"
#include "gr_quantity.h"
#include "gr_smp.h"
#include "gr_time.h"

#define FAIL(reason_, ...)                              \
    do {                                                \
        if (reason)                                     \
            *reason = (reason_);                        \
        return gr_err_set(err, GR_ESTATE, __VA_ARGS__); \
    } while (0)

static const char *sget(const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : "";
}

static json_t *path_get(const json_t *o, const char *p)
{
    return gr_json_ptr_get(o, p);
}

/* jansson's iterators take non-const values; we only read through them. */
static json_t *mut(const json_t *v)
{
    json_t *r;
    memcpy(&r, &v, sizeof(r));
    return r;
}

static int oom(gr_err *err)
{
    return gr_err_set(err, GR_ENOMEM, "out of memory");
}

static void add_event(json_t *events, const char *type, const char *reason, const char *msg)
{
    if (!events)
        return;
    json_array_append_new(
        events, json_pack("{s:s,s:s,s:s}", "type", type, "reason", reason, "message", msg));
}

/* ------------------------------------------------------------------ naming */

void gr_nvcre_wf_truncate(const char *name, size_t max, char *out, size_t outsz)
{
    gr_nvcre_truncate_name(name, max, out, outsz);
}

void gr_nvcre_wf_extract_hash(const char *name, char out[6])
{
    out[0] = 0;
    const char *dash = strrchr(name, '-');
    if (dash && strlen(dash + 1) == 5)
        memcpy(out, dash + 1, 6);
}

void gr_nvcre_wf_job_name(const char *wf, const char *group, int iteration, int single, char *out,
                          size_t outsz)
{
    char full[512];
    if (single)
        snprintf(full, sizeof(full), "%s-job", wf);
    else
        snprintf(full, sizeof(full), "%s-%s-iter-%d", wf, group, iteration);
    gr_nvcre_wf_truncate(full, GR_NVCRE_MAX_JOB_NAME_LEN, out, outsz);
}

/* ---------------------------------------------------------------- detection */

const char *gr_nvcre_wf_node_platform(const json_t *node)
{
    const char *pid = sget(path_get(node, "/spec"), "providerID");
    const json_t *labels = path_get(node, "/metadata/labels");
    static const struct {
        const char *prefix, *platform;
    } table[] = {{"aws://", "aws"},       {"gce://", "gcp"},          {"azure://", "azure"},
                 {"ocid1.", "oci"},       {"openstack://", "onprem"}, {"nscale://", "nscale"},
                 {"metal3://", "mistral"}};
    if (!*pid) {
        const char *host = sget(labels, GR_NVCRE_WF_LABEL_HOSTNAME);
        if (strstr(host, "forge") || json_object_get(labels, "nke.nvidia.com/site-name"))
            return "forge";
        return "onprem";
    }
    if (!strncmp(pid, "kubevirt://", 11))
        return json_object_get(labels, "node-role.together.ai/worker") ? "togetherai" : "onprem";
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (!strncmp(pid, table[i].prefix, strlen(table[i].prefix)))
            return table[i].platform;
    }
    return "onprem";
}

void gr_nvcre_wf_parse_product(const char *product, char *out, size_t outsz)
{
    if (!product || !*product) {
        snprintf(out, outsz, "unknown");
        return;
    }
    if (!strncmp(product, "NVIDIA-", 7))
        product += 7;
    if (!strncmp(product, "RTX-PRO-6000", 12)) {
        snprintf(out, outsz, "rtxpro6000");
        return;
    }
    size_t n = strcspn(product, "-");
    size_t i;
    for (i = 0; i < n && i + 1 < outsz; i++)
        out[i] = (char)tolower((unsigned char)product[i]);
    out[i] = 0;
}

/* ---------------------------------------------------------------- overrides */

static int str_match(const json_t *spec, const char *v)
{
    if (!spec)
        return 1;
    const char *eq = sget(spec, "equals");
    if (*eq && strcmp(eq, v) != 0)
        return 0;
    const json_t *in = json_object_get(spec, "in");
    if (json_array_size(in) > 0) {
        int found = 0;
        size_t i;
        json_t *x;
        json_array_foreach(in, i, x) found |= json_is_string(x) && !strcmp(json_string_value(x), v);
        if (!found)
            return 0;
    }
    const json_t *nin = json_object_get(spec, "notIn");
    size_t i;
    json_t *x;
    json_array_foreach(nin, i, x)
    {
        if (json_is_string(x) && !strcmp(json_string_value(x), v))
            return 0;
    }
    return 1;
}

int gr_nvcre_wf_when_match(const json_t *when, const gr_nvcre_wf_ctx *ctx, int *match, gr_err *err)
{
    *match = 0;
    if (!json_is_object(when)) {
        *match = 1;
        return GR_OK;
    }
    if (!str_match(json_object_get(when, "platform"), ctx->platform ? ctx->platform : ""))
        return GR_OK;
    if (!str_match(json_object_get(when, "gpuArchitecture"), ctx->gpu_arch ? ctx->gpu_arch : ""))
        return GR_OK;
    const char *wk = sget(when, "workloadKind");
    if (*wk && strcmp(wk, ctx->workload_kind ? ctx->workload_kind : "") != 0)
        return GR_OK;
    const json_t *topo = json_object_get(when, "topology");
    if (topo) {
        const char *mode = sget(topo, "mode");
        if (*mode && strcmp(mode, ctx->topology_mode ? ctx->topology_mode : "") != 0)
            return GR_OK;
        const json_t *dc = json_object_get(topo, "domainCount");
        if (dc) {
            json_t *v;
            if ((v = json_object_get(dc, "equals")) && json_integer_value(v) != ctx->domain_count)
                return GR_OK;
            if ((v = json_object_get(dc, "greaterThan")) &&
                !(ctx->domain_count > json_integer_value(v)))
                return GR_OK;
            if ((v = json_object_get(dc, "lessThan")) &&
                !(ctx->domain_count < json_integer_value(v)))
                return GR_OK;
        }
    }
    const char *expr = sget(when, "expression");
    if (*expr) {
        static const gr_cel_decl decls[] = {{"platform", GR_CEL_STRING},
                                            {"gpuArchitecture", GR_CEL_STRING},
                                            {"workloadKind", GR_CEL_STRING},
                                            {"topologyMode", GR_CEL_STRING},
                                            {"domainCount", GR_CEL_INT}};
        gr_cel_program *prog = NULL;
        int rc = gr_cel_compile(expr, strlen(expr), decls, 5, NULL, &prog, NULL, err);
        if (rc != GR_OK)
            return gr_err_prefix(err, "when.expression: ");
        json_t *vars[5] = {json_string(ctx->platform ? ctx->platform : ""),
                           json_string(ctx->gpu_arch ? ctx->gpu_arch : ""),
                           json_string(ctx->workload_kind ? ctx->workload_kind : ""),
                           json_string(ctx->topology_mode ? ctx->topology_mode : ""),
                           json_integer(ctx->domain_count)};
        int b = 0;
        rc = GR_ENOMEM;
        if (vars[0] && vars[1] && vars[2] && vars[3] && vars[4])
            rc = gr_cel_eval_bool(prog, vars, &b, NULL, err);
        else
            oom(err);
        for (int i = 0; i < 5; i++)
            json_decref(vars[i]);
        gr_cel_program_free(prog);
        if (rc != GR_OK)
            return gr_err_prefix(err, "when.expression: ");
        if (!b)
            return GR_OK;
    }
    *match = 1;
    return GR_OK;
}

static void summary_str(gr_buf *b, const char *name, const json_t *spec)
{
    if (!spec)
        return;
    const char *eq = sget(spec, "equals");
    if (*eq) {
        gr_buf_printf(b, "%s%s=%s", b->len ? ", " : "", name, eq);
    }
    const char *ops[2] = {"in", "notIn"};
    for (int o = 0; o < 2; o++) {
        const json_t *l = json_object_get(spec, ops[o]);
        if (json_array_size(l) == 0)
            continue;
        gr_buf_printf(b, "%s%s=%s [", b->len ? ", " : "", name, ops[o]);
        size_t i;
        json_t *x;
        json_array_foreach(l, i, x) gr_buf_printf(b, "%s%s", i ? "," : "",
                                                  json_string_value(x) ? json_string_value(x) : "");
        gr_buf_printf(b, "]");
    }
}

char *gr_nvcre_wf_when_summary(const json_t *when)
{
    gr_buf b;
    gr_buf_init(&b, 4096);
    /* Keys in sorted order, as Go's map-ordered summary. */
    summary_str(&b, "gpuArchitecture", json_object_get(when, "gpuArchitecture"));
    summary_str(&b, "platform", json_object_get(when, "platform"));
    const json_t *topo = json_object_get(when, "topology");
    if (*sget(topo, "mode"))
        gr_buf_printf(&b, "%stopology.mode=%s", b.len ? ", " : "", sget(topo, "mode"));
    const json_t *dc = json_object_get(topo, "domainCount");
    const char *dops[3] = {"equals", "greaterThan", "lessThan"};
    for (int i = 0; i < 3; i++) {
        json_t *v = json_object_get(dc, dops[i]);
        if (v)
            gr_buf_printf(&b, "%stopology.domainCount %s %lld", b.len ? ", " : "", dops[i],
                          (long long)json_integer_value(v));
    }
    if (*sget(when, "workloadKind"))
        gr_buf_printf(&b, "%sworkloadKind=%s", b.len ? ", " : "", sget(when, "workloadKind"));
    if (*sget(when, "expression"))
        gr_buf_printf(&b, "%sexpression=%s", b.len ? ", " : "", sget(when, "expression"));
    if (b.len == 0)
        gr_buf_printf(&b, "<always>");
    char *s = b.data ? strdup(b.data) : strdup("<always>");
    gr_buf_free(&b);
    return s;
}

static int all_named_objects(const json_t *l)
{
    if (json_array_size(l) == 0)
        return 0;
    size_t i;
    json_t *x;
    json_array_foreach(l, i, x)
    {
        if (!json_is_object(x) || !*sget(x, "name"))
            return 0;
    }
    return 1;
}

static json_t *dep_merge(const json_t *base, const json_t *patch, int depth)
{
    if (depth > 128)
        return NULL;
    if (json_is_object(base) && json_is_object(patch)) {
        json_t *out = json_deep_copy(base);
        const char *k;
        json_t *v;
        json_object_foreach(mut(patch), k, v)
        {
            if (json_is_null(v)) {
                json_object_del(out, k);
                continue;
            }
            json_t *m = dep_merge(json_object_get(out, k), v, depth + 1);
            if (!m) {
                json_decref(out);
                return NULL;
            }
            json_object_set_new(out, k, m);
        }
        return out;
    }
    if (all_named_objects(base) && all_named_objects(patch)) {
        json_t *out = json_deep_copy(base);
        size_t i;
        json_t *p;
        json_array_foreach(patch, i, p)
        {
            size_t j;
            json_t *o;
            int found = 0;
            json_array_foreach(out, j, o)
            {
                if (!strcmp(sget(o, "name"), sget(p, "name"))) {
                    json_t *m = dep_merge(o, p, depth + 1);
                    if (!m) {
                        json_decref(out);
                        return NULL;
                    }
                    json_array_set_new(out, j, m);
                    found = 1;
                    break;
                }
            }
            if (!found)
                json_array_append(out, p);
        }
        return out;
    }
    return json_deep_copy(patch);
}

int gr_nvcre_wf_merge_dependency(const json_t *base, const json_t *patch, json_t **out, gr_err *err)
{
    *out = dep_merge(base, patch, 0);
    if (!*out)
        return gr_err_set(err, GR_EINVAL, "dependency merge: nested deeper than 128 levels");
    return GR_OK;
}

static int same_dep(const json_t *a, const json_t *b)
{
    return !strcmp(sget(a, "apiVersion"), sget(b, "apiVersion")) &&
           !strcmp(sget(a, "kind"), sget(b, "kind")) &&
           !strcmp(sget(path_get(a, "/metadata"), "name"), sget(path_get(b, "/metadata"), "name"));
}

static int apply_one(json_t *spec, const json_t *ov, int idx, gr_buf *patches, gr_err *err)
{
    int rc;
    int n = 0;
    const json_t *jt = json_object_get(ov, "jobTemplate");
    if (jt && !json_is_null(jt)) {
        json_t *t = json_incref(json_object_get(spec, "jobTemplate"));
        if (!t)
            t = json_object();
        rc = gr_smp_apply(&t, jt, NULL, GR_SMP_ROOT_JOB_TEMPLATE, err);
        if (rc != GR_OK) {
            json_decref(t);
            return gr_err_prefix(err, "override[%d]: failed to merge jobTemplate: ", idx);
        }
        json_object_set_new(spec, "jobTemplate", t);
        gr_buf_printf(patches, "%sjobTemplate", n++ ? ", " : "");
    }
    const json_t *jp = json_object_get(ov, "jobTemplatePatch");
    if (jp && !json_is_null(jp)) {
        json_t *t = json_incref(json_object_get(spec, "jobTemplate"));
        if (!t)
            t = json_object();
        rc = gr_json_patch_apply(&t, jp, err);
        if (rc != GR_OK) {
            json_decref(t);
            return gr_err_prefix(err, "override[%d]: failed to apply jobTemplatePatch: ", idx);
        }
        json_object_set_new(spec, "jobTemplate", t);
        gr_buf_printf(patches, "%sjobTemplatePatch", n++ ? ", " : "");
    }
    const json_t *deps = json_object_get(ov, "dependencies");
    if (json_array_size(deps) > 0) {
        json_t *base = json_object_get(spec, "dependencies");
        if (!json_is_array(base)) {
            base = json_array();
            json_object_set_new(spec, "dependencies", base);
        }
        size_t i;
        json_t *d;
        json_array_foreach(deps, i, d)
        {
            size_t j;
            json_t *b;
            int found = 0;
            json_array_foreach(base, j, b)
            {
                if (same_dep(b, d)) {
                    json_t *m = NULL;
                    if (gr_nvcre_wf_merge_dependency(b, d, &m, err) != GR_OK)
                        return gr_err_prefix(err,
                                             "override[%d]: failed to merge dependency: ", idx);
                    json_array_set_new(base, j, m);
                    found = 1;
                    break;
                }
            }
            if (!found)
                json_array_append_new(base, json_deep_copy(d));
        }
        gr_buf_printf(patches, "%s%zu dependencies", n++ ? ", " : "", json_array_size(deps));
    }
    const json_t *orch = json_object_get(ov, "orchestration");
    if (json_is_object(orch) && json_object_size(orch) > 0) {
        json_t *base = gr_json_object_child(spec, "orchestration");
        const char *fields[] = {"target", "topology", "execution", "iterations", "placement"};
        for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
            json_t *v = json_object_get(orch, fields[i]);
            if (v && !json_is_null(v))
                json_object_set_new(base, fields[i], json_deep_copy(v));
        }
        gr_buf_printf(patches, "%sorchestration", n++ ? ", " : "");
    }
    if (n == 0)
        gr_buf_printf(patches, "none");
    return GR_OK;
}

int gr_nvcre_wf_apply_overrides(const json_t *spec, const gr_nvcre_wf_ctx *ctx, json_t **out,
                                json_t **tracking, json_t *events, const char **reason, gr_err *err)
{
    *out = NULL;
    if (tracking)
        *tracking = NULL;
    json_t *eff = json_deep_copy(spec);
    json_t *trk = json_array();
    if (!eff || !trk) {
        json_decref(eff);
        json_decref(trk);
        return oom(err);
    }
    const json_t *ovs = json_object_get(spec, "overrides");
    if (json_array_size(ovs) > GR_NVCRE_WF_MAX_OVERRIDES) {
        json_decref(eff);
        json_decref(trk);
        FAIL(GR_NVCRE_REASON_OVERRIDE_ERROR, GR_NVCRE_MSG_OVERRIDE_ERROR_FMT,
             "spec.overrides: more than 1024 entries; split the Workflow");
    }
    int matched = 0;
    size_t i;
    json_t *ov;
    json_array_foreach(ovs, i, ov)
    {
        int m = 0;
        gr_err e2 = {0};
        if (gr_nvcre_wf_when_match(json_object_get(ov, "when"), ctx, &m, &e2) != GR_OK) {
            json_decref(eff);
            json_decref(trk);
            gr_err_prefix(&e2, "override[%zu]: evaluating when: ", i);
            FAIL(GR_NVCRE_REASON_OVERRIDE_ERROR, GR_NVCRE_MSG_OVERRIDE_ERROR_FMT, e2.msg);
        }
        if (!m)
            continue;
        matched++;
        json_t *before = json_deep_copy(eff);
        gr_buf patches;
        gr_buf_init(&patches, 1024);
        if (apply_one(eff, ov, (int)i, &patches, &e2) != GR_OK) {
            json_decref(before);
            gr_buf_free(&patches);
            json_decref(eff);
            json_decref(trk);
            FAIL(GR_NVCRE_REASON_OVERRIDE_ERROR, GR_NVCRE_MSG_OVERRIDE_ERROR_FMT, e2.msg);
        }
        int noop = gr_json_equal(before, eff);
        json_decref(before);
        char *sum = gr_nvcre_wf_when_summary(json_object_get(ov, "when"));
        const char *pt = patches.data ? patches.data : "none";
        json_array_append_new(trk, json_pack("{s:i,s:s,s:s,s:b}", "index", (int)i, "when",
                                             sum ? sum : "", "patches", pt, "noOp", noop));
        char msg[1024];
        if (noop) {
            snprintf(msg, sizeof(msg), GR_NVCRE_WF_MSG_OVERRIDE_NOOP_FMT, (int)i, sum ? sum : "");
            add_event(events, "Warning", GR_NVCRE_WF_EVENT_OVERRIDE_NOOP, msg);
        } else {
            snprintf(msg, sizeof(msg), GR_NVCRE_WF_MSG_OVERRIDE_APPLIED_FMT, (int)i, sum ? sum : "",
                     pt);
            add_event(events, "Normal", GR_NVCRE_WF_EVENT_OVERRIDE_APPLIED, msg);
        }
        free(sum);
        gr_buf_free(&patches);
    }
    if (matched == 0 && json_array_size(ovs) > 0) {
        char msg[512];
        snprintf(msg, sizeof(msg), GR_NVCRE_WF_MSG_NO_OVERRIDES_MATCHED_FMT,
                 (int)json_array_size(ovs), ctx->platform ? ctx->platform : "",
                 ctx->gpu_arch ? ctx->gpu_arch : "");
        add_event(events, "Normal", GR_NVCRE_WF_EVENT_NO_OVERRIDES, msg);
    }
    *out = eff;
    if (tracking)
        *tracking = trk;
    else
        json_decref(trk);
    return GR_OK;
}

/* ---------------------------------------------------------------- discovery */

static int has_taint(const json_t *node, const json_t *sel)
{
    const char *key = sget(sel, "key"), *val = sget(sel, "value"), *eff = sget(sel, "effect");
    size_t i;
    json_t *t;
    json_array_foreach(path_get(node, "/spec/taints"), i, t)
    {
        if (strcmp(sget(t, "key"), key) != 0)
            continue;
        if (*val && strcmp(sget(t, "value"), val) != 0)
            continue;
        if (*eff && strcmp(sget(t, "effect"), eff) != 0)
            continue;
        return 1;
    }
    return 0;
}

static int expr_match(const json_t *labels, const json_t *e)
{
    const char *op = sget(e, "operator");
    const json_t *v = json_object_get(labels, sget(e, "key"));
    const char *lv = json_string_value(v);
    int in = 0;
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(e, "values"), i, x)
    {
        if (lv && json_is_string(x) && !strcmp(json_string_value(x), lv))
            in = 1;
    }
    if (!strcmp(op, "In"))
        return in;
    if (!strcmp(op, "NotIn"))
        return !in;
    if (!strcmp(op, "Exists"))
        return v != NULL;
    if (!strcmp(op, "DoesNotExist"))
        return v == NULL;
    return 0;
}

static int targets_cordoned(const json_t *target)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(target, "taintSelectors"), i, t)
    {
        if (!strcmp(sget(t, "key"), "node.kubernetes.io/unschedulable"))
            return 1;
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Nodes by name (O(1) lookups over thousands of nodes); values borrowed
 * from the array. NULL on allocation failure (lookups then find nothing). */
static json_t *node_index(const json_t *nodes)
{
    json_t *idx = json_object();
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n)
    {
        const char *name = sget(path_get(n, "/metadata"), "name");
        if (*name && idx && !json_object_get(idx, name))
            json_object_set(idx, name, n);
    }
    return idx;
}

static json_t *find_node(const json_t *idx, const char *name)
{
    return name ? json_object_get(idx, name) : NULL;
}

static void exclude(json_t *excluded, const char *name, const char *why)
{
    json_array_append_new(excluded, json_pack("{s:s,s:s}", "name", name, "reason", why));
}

static int gr_nvcre_wf_discover_impl(const json_t *nidx, const json_t *spec, const json_t *nodes,
                                     json_t **out, json_t *events, const char **reason, gr_err *err)
{
    *out = NULL;
    if (!json_is_array(nodes))
        return gr_err_set(err, GR_EINVAL, "nodes: expected a JSON array of Node objects");
    if (json_array_size(nodes) > GR_NVCRE_WF_MAX_NODES)
        return gr_err_set(err, GR_ETOOBIG, "nodes: more than %d nodes", GR_NVCRE_WF_MAX_NODES);
    const json_t *target = path_get(spec, "/orchestration/target");
    const json_t *sel = json_object_get(target, "nodeSelector");
    const json_t *exprs = json_object_get(target, "matchExpressions");
    const json_t *names = json_object_get(target, "nodeNames");
    const json_t *taints = json_object_get(target, "taintSelectors");
    int keep_cordoned = targets_cordoned(target);
    size_t n = json_array_size(nodes);
    const char **kept = calloc(n + 1, sizeof(*kept));
    json_t *excluded = json_array();
    gr_buf cordoned;
    gr_buf_init(&cordoned, 1 << 20);
    int ncordoned = 0;
    if (!kept || !excluded) {
        free(kept);
        json_decref(excluded);
        return oom(err);
    }
    size_t nk = 0;
    size_t i;
    json_t *node;
    json_array_foreach(nodes, i, node)
    {
        const char *name = sget(path_get(node, "/metadata"), "name");
        const json_t *labels = path_get(node, "/metadata/labels");
        if (!*name)
            continue;
        int ok = 1;
        const char *k;
        json_t *v;
        if (json_array_size(names) > 0) {
            int found = 0;
            size_t j;
            json_t *x;
            json_array_foreach(names, j, x) found |=
                !strcmp(json_string_value(x) ? json_string_value(x) : "", name);
            ok = found;
        } else {
            json_object_foreach(mut(sel), k, v)
            {
                const char *lv = json_string_value(json_object_get(labels, k));
                if (!lv || strcmp(lv, json_string_value(v) ? json_string_value(v) : "") != 0)
                    ok = 0;
            }
        }
        size_t j;
        json_t *x;
        json_array_foreach(exprs, j, x) ok = ok && expr_match(labels, x);
        json_array_foreach(taints, j, x) ok = ok && has_taint(node, x);
        if (!ok)
            continue;
        int has_gpu = !strcmp(sget(labels, GR_NVCRE_WF_LABEL_GPU_PRESENT), "true");
        if (json_is_true(path_get(node, "/spec/unschedulable")) && !keep_cordoned) {
            if (has_gpu) {
                exclude(excluded, name, "cordoned");
                gr_buf_printf(&cordoned, "%s%s", ncordoned ? ", " : "", name);
                ncordoned++;
            }
            continue;
        }
        if (!has_gpu)
            continue;
        kept[nk++] = name;
    }
    qsort(kept, nk, sizeof(*kept), cmp_str);
    if (ncordoned > 0) {
        char msg[1024];
        snprintf(msg, sizeof(msg), GR_NVCRE_WF_MSG_CORDONED_EXCLUDED_FMT, ncordoned,
                 cordoned.data ? cordoned.data : "");
        add_event(events, "Warning", GR_NVCRE_WF_EVENT_CORDONED, msg);
    }
    gr_buf_free(&cordoned);
    json_t *res = json_pack("{s:o}", "excluded", excluded);
    if (nk == 0) {
        free(kept);
        *out = res;
        FAIL(GR_NVCRE_REASON_NODE_DISCOVERY_ERROR, "%s", GR_NVCRE_MSG_NO_TARGET_NODES);
    }
    /* Platform: every node must agree. */
    const char *plats[16];
    int counts[16];
    int np = 0;
    for (size_t a = 0; a < nk; a++) {
        const char *p = gr_nvcre_wf_node_platform(find_node(nidx, kept[a]));
        int f = -1;
        for (int b = 0; b < np; b++)
            if (!strcmp(plats[b], p))
                f = b;
        if (f < 0 && np < 16) {
            plats[np] = p;
            counts[np++] = 1;
        } else if (f >= 0) {
            counts[f]++;
        }
    }
    if (np > 1) {
        /* Go prints map[k:v ...] with sorted keys. */
        const char *sorted[16];
        memcpy(sorted, plats, sizeof(plats[0]) * (size_t)np);
        qsort(sorted, (size_t)np, sizeof(sorted[0]), cmp_str);
        gr_buf m;
        gr_buf_init(&m, 4096);
        gr_buf_printf(&m, "map[");
        for (int b = 0; b < np; b++) {
            int c = 0;
            for (int d = 0; d < np; d++)
                if (!strcmp(plats[d], sorted[b]))
                    c = counts[d];
            gr_buf_printf(&m, "%s%s:%d", b ? " " : "", sorted[b], c);
        }
        gr_buf_printf(&m, "]");
        free(kept);
        *out = res;
        gr_err_set(err, GR_ESTATE, GR_NVCRE_WF_MSG_HETEROGENEOUS_PLATFORMS_FMT,
                   m.data ? m.data : "");
        gr_buf_free(&m);
        if (reason)
            *reason = GR_NVCRE_REASON_HETEROGENEOUS_PLATFORM;
        return GR_ESTATE;
    }
    json_object_set_new(res, "platform", json_string(plats[0]));
    /* GPU architecture: majority of labelled nodes; ties → earliest node. */
    char(*arch)[32] = calloc(nk, sizeof(*arch));
    if (!arch) {
        free(kept);
        json_decref(res);
        return oom(err);
    }
    int best = -1, bestc = 0;
    for (size_t a = 0; a < nk; a++) {
        const char *prod = sget(path_get(find_node(nidx, kept[a]), "/metadata/labels"),
                                GR_NVCRE_WF_LABEL_GPU_PRODUCT);
        gr_nvcre_wf_parse_product(prod, arch[a], sizeof(arch[a]));
    }
    for (size_t a = 0; a < nk; a++) {
        if (!strcmp(arch[a], "unknown"))
            continue;
        int c = 0;
        for (size_t b = 0; b < nk; b++)
            c += !strcmp(arch[a], arch[b]);
        if (c > bestc) {
            bestc = c;
            best = (int)a;
        }
    }
    const char *primary = best >= 0 ? arch[best] : "unknown";
    /* Fallback: the target's nodeSelector gpu.product. */
    char fallback[32];
    if (best < 0 && *sget(sel, GR_NVCRE_WF_LABEL_GPU_PRODUCT)) {
        gr_nvcre_wf_parse_product(sget(sel, GR_NVCRE_WF_LABEL_GPU_PRODUCT), fallback,
                                  sizeof(fallback));
        primary = fallback;
    }
    json_t *list = json_array();
    gr_buf ex;
    gr_buf_init(&ex, 1 << 20);
    int nex = 0;
    for (size_t a = 0; a < nk; a++) {
        if (best >= 0 && strcmp(arch[a], primary) != 0 && strcmp(arch[a], "unknown") != 0) {
            exclude(excluded, kept[a], "gpu architecture");
            gr_buf_printf(&ex, "%s%s (%s)", nex ? ", " : "", kept[a], arch[a]);
            nex++;
            continue;
        }
        json_array_append_new(list, json_string(kept[a]));
    }
    if (nex > 0) {
        char msg[2048];
        snprintf(msg, sizeof(msg), GR_NVCRE_WF_MSG_HETEROGENEOUS_GPU_FMT, nex, (int)nk, primary,
                 ex.data ? ex.data : "");
        add_event(events, "Warning", GR_NVCRE_WF_EVENT_HETEROGENEOUS_GPU, msg);
    }
    gr_buf_free(&ex);
    json_object_set_new(res, "gpuArchitecture", json_string(primary));
    json_object_set_new(res, "nodes", list);
    /* Domains for topology. */
    const char *tkey = sget(path_get(spec, "/orchestration/topology"), "topologyKey");
    int domains = 0;
    if (*tkey) {
        json_t *seen = json_object();
        size_t j;
        json_t *x;
        json_array_foreach(list, j, x)
        {
            const char *d =
                sget(path_get(find_node(nidx, json_string_value(x)), "/metadata/labels"), tkey);
            json_object_set_new(seen, d, json_true());
        }
        domains = (int)json_object_size(seen);
        json_decref(seen);
    }
    json_object_set_new(res, "domainCount", json_integer(domains));
    free(arch);
    free(kept);
    *out = res;
    return GR_OK;
}

int gr_nvcre_wf_discover(const json_t *spec, const json_t *nodes, json_t **out, json_t *events,
                         const char **reason, gr_err *err)
{
    json_t *nidx = node_index(nodes);
    int rc = gr_nvcre_wf_discover_impl(nidx, spec, nodes, out, events, reason, err);
    json_decref(nidx);
    return rc;
}

int gr_nvcre_wf_target_labels(const json_t *workflow, json_t **out, gr_err *err)
{
    *out = NULL;
    const json_t *spec = json_object_get(workflow, "spec");
    if (!json_is_object(spec))
        return GR_OK;
    /* The pre-detection context of gr_nvcre_wf_plan(). */
    const char *tm = path_get(spec, "/orchestration/topology/topologyKey") ? "topology" : "simple";
    gr_nvcre_wf_ctx c0 = {"", "", GR_NVCRE_KIND_TRAIN_JOB, tm, 0};
    json_t *pre = NULL;
    gr_err e2 = {0};
    if (gr_nvcre_wf_apply_overrides(spec, &c0, &pre, NULL, NULL, NULL, &e2) != GR_OK)
        return e2.code == GR_ENOMEM ? gr_err_set(err, GR_ENOMEM, "%s", e2.msg) : GR_OK;
    const json_t *target = path_get(pre, "/orchestration/target");
    const json_t *sel = json_object_get(target, "nodeSelector");
    int ok = json_array_size(json_object_get(target, "nodeNames")) == 0 && json_is_object(sel) &&
             json_object_size(sel) > 0;
    const char *k;
    json_t *v;
    json_object_foreach(mut(sel), k, v) ok = ok && json_is_string(v);
    if (ok && !(*out = json_deep_copy(sel))) {
        json_decref(pre);
        return oom(err);
    }
    json_decref(pre);
    return GR_OK;
}

static void max_gpu(const json_t *v, int64_t *best, int depth)
{
    if (depth > 64)
        return;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(mut(v), k, x)
        {
            if ((!strcmp(k, "requests") || !strcmp(k, "limits")) && json_is_object(x)) {
                json_t *g = json_object_get(x, GR_NVCRE_WF_RESOURCE_GPU);
                int64_t n = -1;
                if (json_is_integer(g))
                    n = json_integer_value(g);
                else if (json_is_string(g))
                    n = strtoll(json_string_value(g), NULL, 10);
                if (n > *best)
                    *best = n;
            }
            max_gpu(x, best, depth + 1);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) max_gpu(x, best, depth + 1);
    }
}

int64_t gr_nvcre_wf_gpus_per_node(const json_t *spec)
{
    int64_t best = 0;
    max_gpu(json_object_get(spec, "jobTemplate"), &best, 0);
    max_gpu(json_object_get(spec, "dependencies"), &best, 0);
    return best;
}

static int64_t node_gpus(const json_t *node)
{
    const json_t *g = path_get(node, "/status/allocatable");
    g = json_object_get(g, GR_NVCRE_WF_RESOURCE_GPU);
    if (json_is_string(g))
        return strtoll(json_string_value(g), NULL, 10);
    if (json_is_integer(g))
        return json_integer_value(g);
    return -1;
}

static int gr_nvcre_wf_capacity_filter_impl(const json_t *nidx, json_t *disc, const json_t *nodes,
                                            int64_t gpus, json_t *events, const char **reason,
                                            gr_err *err)
{
    (void)nodes; /* looked up through nidx */
    if (gpus <= 0)
        return GR_OK;
    json_t *list = json_object_get(disc, "nodes");
    json_t *excluded = json_object_get(disc, "excluded");
    json_t *keep = json_array();
    gr_buf ex;
    gr_buf_init(&ex, 1 << 20);
    int nex = 0;
    int64_t bestavail = 0;
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x)
    {
        int64_t n = node_gpus(find_node(nidx, json_string_value(x)));
        if (n > bestavail)
            bestavail = n;
        if (n > 0 && n < gpus) {
            exclude(excluded, json_string_value(x), "insufficient gpu capacity");
            gr_buf_printf(&ex, "%s%s has %lld", nex ? ", " : "", json_string_value(x),
                          (long long)n);
            nex++;
            continue;
        }
        json_array_append(keep, x);
    }
    if (nex > 0) {
        char msg[2048];
        snprintf(msg, sizeof(msg), GR_NVCRE_WF_MSG_INSUFFICIENT_GPU_FMT, nex, (int)gpus,
                 ex.data ? ex.data : "");
        add_event(events, "Warning", GR_NVCRE_WF_EVENT_INSUFFICIENT_GPU, msg);
    }
    gr_buf_free(&ex);
    json_object_set_new(disc, "nodes", keep);
    if (json_array_size(keep) == 0)
        FAIL(GR_NVCRE_REASON_PARTITION_ERROR, GR_NVCRE_WF_MSG_NO_GPU_CAPACITY_FMT, (int)gpus,
             (int)bestavail);
    return GR_OK;
}

int gr_nvcre_wf_capacity_filter(json_t *disc, const json_t *nodes, int64_t gpus, json_t *events,
                                const char **reason, gr_err *err)
{
    json_t *nidx = node_index(nodes);
    int rc = gr_nvcre_wf_capacity_filter_impl(nidx, disc, nodes, gpus, events, reason, err);
    json_decref(nidx);
    return rc;
}

/* ------------------------------------------------------------- gang contract */

static const json_t *find_runtime(const json_t *deps, const char *name)
{
    size_t i;
    json_t *d;
    json_array_foreach(deps, i, d)
    {
        if (!strcmp(sget(d, "kind"), GR_NVCRE_KIND_TRAINING_RUNTIME) &&
            !strcmp(sget(path_get(d, "/metadata"), "name"), name) &&
            !strncmp(sget(d, "apiVersion"), GR_NVCRE_TRAINER_GROUP "/",
                     strlen(GR_NVCRE_TRAINER_GROUP) + 1))
            return d;
    }
    return NULL;
}

static int check_label(const json_t *labels, const char *key, const char *queue, const char *rt,
                       const char *rj, const char *where, gr_err *err)
{
    const char *v = json_string_value(json_object_get(labels, key));
    if (!v)
        return gr_err_set(err, GR_ESTATE, GR_NVCRE_WF_MSG_GANG_MISSING_FMT, queue, rt, rj, key,
                          where);
    if (strcmp(v, queue) != 0)
        return gr_err_set(err, GR_ESTATE, GR_NVCRE_MSG_GANG_RUNTIME_CONFLICT_FMT, queue, rt, rj,
                          key, v, where);
    return GR_OK;
}

int gr_nvcre_wf_gang_check(json_t *spec, const json_t *deps, const char **reason, gr_err *err)
{
    json_t *jts = path_get(spec, "/jobTemplate/spec");
    const json_t *wl = path_get(jts, "/workloadMetadata/labels");
    gr_err e2 = {0};
    if (wl &&
        gr_nvcre_workload_labels_check(wl, GR_NVCRE_PATH_WORKFLOW_WORKLOAD_LABELS, &e2) != GR_OK)
        FAIL(GR_NVCRE_REASON_GANG_SCHEDULING_CONFLICT, "%s", e2.msg);
    const json_t *gang = json_object_get(spec, GR_NVCRE_F_GANG_SCHEDULER);
    if (!json_is_object(gang))
        return GR_OK; /* WF-40, WF-41: passthrough, no inferred queue checks */
    const char *queue = gr_nvcre_effective_queue(sget(gang, "queue"));
    const char *key = gr_nvcre_effective_queue_label_key(sget(gang, "queueLabelKey"));
    const char *sched = sget(gang, "schedulerName");
    if (!deps)
        deps = json_object_get(spec, "dependencies");
    /* Workload object label: restore when removed, fail when changed. */
    if (!json_is_object(jts))
        FAIL(GR_NVCRE_REASON_GANG_SCHEDULING_CONFLICT,
             "spec.jobTemplate.spec: missing, so the gang-scheduling contract cannot be checked");
    json_t *wm = gr_json_object_child(jts, "workloadMetadata");
    json_t *labels = gr_json_object_child(wm, "labels");
    const char *have = json_string_value(json_object_get(labels, key));
    if (!have)
        json_object_set_new(labels, key, json_string(queue)); /* WF-25 */
    else if (strcmp(have, queue) != 0)
        FAIL(GR_NVCRE_REASON_GANG_SCHEDULING_CONFLICT, GR_NVCRE_MSG_GANG_LABEL_CONFLICT_FMT,
             GR_NVCRE_PATH_WORKFLOW_WORKLOAD_LABELS, key, have, queue);
    /* Runtime. */
    const json_t *tj = path_get(jts, "/workload/trainJob");
    const json_t *ref = json_object_get(tj, "runtimeRef");
    const char *rkind = sget(ref, "kind");
    const char *rgroup = sget(ref, "apiGroup");
    const char *rname = sget(ref, "name");
    if (!*rkind)
        rkind = GR_NVCRE_KIND_CLUSTER_TRAINING_RUNTIME;
    const json_t *rt = NULL;
    if (!strcmp(rkind, GR_NVCRE_KIND_TRAINING_RUNTIME) &&
        (!*rgroup || !strcmp(rgroup, GR_NVCRE_TRAINER_GROUP)))
        rt = find_runtime(deps, rname);
    if (!rt)
        FAIL(GR_NVCRE_REASON_GANG_SCHEDULING_CONFLICT, GR_NVCRE_WF_MSG_GANG_RUNTIME_REF_FMT, rkind,
             rname);
    /* Fold runtimePatches (trainingRuntimeSpec) into a copy of the runtime. */
    json_t *eff = json_deep_copy(json_object_get(rt, "spec"));
    if (!eff)
        return oom(err);
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(tj, "runtimePatches"), i, p)
    {
        const json_t *trs = json_object_get(p, "trainingRuntimeSpec");
        if (!json_is_object(trs))
            continue;
        json_t *m = NULL;
        if (gr_nvcre_wf_merge_dependency(eff, trs, &m, err) != GR_OK) {
            json_decref(eff);
            return err ? err->code : GR_EINVAL;
        }
        json_decref(eff);
        eff = m;
    }
    const json_t *rjs = path_get(eff, "/template/spec/replicatedJobs");
    if (json_array_size(rjs) == 0) {
        json_decref(eff);
        FAIL(GR_NVCRE_REASON_GANG_SCHEDULING_CONFLICT, GR_NVCRE_WF_MSG_GANG_SHAPE_FMT, rname);
    }
    json_t *rj;
    json_array_foreach(rjs, i, rj)
    {
        const char *rjn = sget(rj, "name");
        int rc = check_label(path_get(rj, "/template/metadata/labels"), key, queue, rname, rjn,
                             "template.metadata.labels", err);
        if (rc == GR_OK)
            rc = check_label(path_get(rj, "/template/spec/template/metadata/labels"), key, queue,
                             rname, rjn, "template.spec.template.metadata.labels", err);
        if (rc == GR_OK && *sched) {
            const char *sn = sget(path_get(rj, "/template/spec/template/spec"), "schedulerName");
            if (strcmp(sn, sched) != 0)
                rc = gr_err_set(err, GR_ESTATE, GR_NVCRE_WF_MSG_GANG_SCHEDULER_FMT, sched, rname,
                                rjn, sn);
        }
        if (rc != GR_OK) {
            json_decref(eff);
            if (reason)
                *reason = GR_NVCRE_REASON_GANG_SCHEDULING_CONFLICT;
            return rc;
        }
    }
    json_decref(eff);
    return GR_OK;
}

/* ------------------------------------------------------------- dependencies */

/* ^[a-z0-9][-a-z0-9.]*[a-z0-9]$, 3..253 characters, at least one letter. */
static int name_shaped(const char *s)
{
    size_t n = strlen(s);
    if (n < 3 || n > 253)
        return 0;
    int letter = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        int alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
        letter |= ch >= 'a' && ch <= 'z';
        if (!alnum && ((ch != '-' && ch != '.') || i == 0 || i == n - 1))
            return 0;
    }
    return letter;
}

/* A string two dependencies may share as a cross-reference: resource-name
 * shaped with a '-' (generic words such as "true" or "node" never tie two
 * dependencies together). */
static int crossref_shaped(const char *s)
{
    return name_shaped(s) && strchr(s, '-') != NULL;
}

/* Every string value under v into the set `out` (object used as a set).
 * `rp` > 0 inside runtimePatches, where labels and annotations are skipped
 * (scheduling fields are never renamed, PreserveSchedulingFields). */
static void collect_strings(const json_t *v, json_t *out, int rp, int depth)
{
    if (depth > 64)
        return;
    if (json_is_string(v)) {
        json_object_set_new(out, json_string_value(v), json_true());
    } else if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(mut(v), k, x)
        {
            if (rp && (!strcmp(k, "labels") || !strcmp(k, "annotations")))
                continue;
            collect_strings(x, out, rp || !strcmp(k, "runtimePatches"), depth + 1);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) collect_strings(x, out, rp, depth + 1);
    }
}

/* The strings of a Job spec that can reference a dependency: all but
 * workloadMetadata and runtime-patch labels/annotations. */
static json_t *job_spec_strings(const json_t *jspec)
{
    json_t *set = json_object();
    const char *k;
    json_t *x;
    json_object_foreach(mut(jspec), k, x)
    {
        if (strcmp(k, "workloadMetadata") != 0)
            collect_strings(x, set, !strcmp(k, "runtimePatches"), 1);
    }
    return set;
}

/* A dependency's strings, without its own apiVersion, kind and name. */
static json_t *dep_strings(const json_t *d)
{
    json_t *set = json_object();
    const char *k;
    json_t *x;
    json_object_foreach(mut(d), k, x)
    {
        if (strcmp(k, "apiVersion") != 0 && strcmp(k, "kind") != 0 && strcmp(k, "when") != 0)
            collect_strings(x, set, 0, 1);
    }
    json_object_del(set, sget(path_get(d, "/metadata"), "name"));
    return set;
}

static int shares_crossref(const json_t *a, const json_t *b)
{
    const char *k;
    json_t *x;
    json_object_foreach(mut(a), k, x)
    {
        if (crossref_shaped(k) && json_object_get(b, k))
            return 1;
    }
    return 0;
}

int gr_nvcre_wf_dep_scopes(const json_t *spec, json_t **out, gr_err *err)
{
    *out = NULL;
    const json_t *deps = json_object_get(spec, "dependencies");
    size_t n = json_array_size(deps);
    if (n > GR_NVCRE_WF_MAX_DEPENDENCIES)
        return gr_err_set(err, GR_EINVAL,
                          "spec.dependencies: %zu entries, at most %d; move shared objects out of "
                          "the Workflow",
                          n, GR_NVCRE_WF_MAX_DEPENDENCIES);
    json_t *jstr = job_spec_strings(path_get(spec, "/jobTemplate/spec"));
    json_t **dstr = calloc(n ? n : 1, sizeof(*dstr));
    int *job = calloc(n ? n : 1, sizeof(*job));
    size_t *queue = calloc(n ? n : 1, sizeof(*queue));
    if (!jstr || !dstr || !job || !queue) {
        json_decref(jstr);
        free(dstr);
        free(job);
        free(queue);
        return oom(err);
    }
    size_t qn = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *d = json_array_get(deps, i);
        dstr[i] = dep_strings(d);
        const char *name = sget(path_get(d, "/metadata"), "name");
        if (*name && strncmp(sget(d, "kind"), "Cluster", 7) != 0 && json_object_get(jstr, name)) {
            job[i] = 1;
            queue[qn++] = i;
        }
    }
    /* Breadth first: a dependency tied to a job-scoped one (either names
     * the other, or both carry the same cross-reference) is job-scoped. */
    for (size_t q = 0; q < qn; q++) {
        size_t j = queue[q];
        const char *jn = sget(path_get(json_array_get(deps, j), "/metadata"), "name");
        for (size_t i = 0; i < n; i++) {
            const json_t *d = json_array_get(deps, i);
            const char *name = sget(path_get(d, "/metadata"), "name");
            if (job[i] || !*name || !strncmp(sget(d, "kind"), "Cluster", 7))
                continue;
            if (json_object_get(dstr[j], name) || json_object_get(dstr[i], jn) ||
                shares_crossref(dstr[i], dstr[j])) {
                job[i] = 1;
                queue[qn++] = i;
            }
        }
    }
    json_t *res = json_array();
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(res, json_string(job[i] ? "job" : "workflow"));
        json_decref(dstr[i]);
    }
    json_decref(jstr);
    free(dstr);
    free(job);
    free(queue);
    *out = res;
    return res ? GR_OK : oom(err);
}

int gr_nvcre_wf_dep_order(const json_t *deps, json_t **out, gr_err *err)
{
    *out = NULL;
    size_t n = json_array_size(deps);
    if (n > GR_NVCRE_WF_MAX_DEPENDENCIES)
        return gr_err_set(err, GR_EINVAL, "dependencies: %zu entries, at most %d", n,
                          GR_NVCRE_WF_MAX_DEPENDENCIES);
    json_t **str = calloc(n ? n : 1, sizeof(*str));
    int *done = calloc(n ? n : 1, sizeof(*done));
    json_t *res = json_array();
    if (!str || !done || !res) {
        free(str);
        free(done);
        json_decref(res);
        return oom(err);
    }
    for (size_t i = 0; i < n; i++)
        str[i] = dep_strings(json_array_get(deps, i));
    /* Kahn's algorithm, always the lowest index that is ready; a cycle is
     * broken by taking the lowest index left. */
    for (size_t placed = 0; placed < n; placed++) {
        size_t pick = n;
        for (size_t i = 0; i < n && pick == n; i++) {
            if (done[i])
                continue;
            int ready = 1;
            for (size_t j = 0; j < n && ready; j++) {
                const char *jn = sget(path_get(json_array_get(deps, j), "/metadata"), "name");
                if (j != i && !done[j] && *jn && json_object_get(str[i], jn))
                    ready = 0;
            }
            if (ready)
                pick = i;
        }
        for (size_t i = 0; i < n && pick == n; i++)
            if (!done[i])
                pick = i;
        done[pick] = 1;
        json_array_append_new(res, json_integer((json_int_t)pick));
    }
    for (size_t i = 0; i < n; i++)
        json_decref(str[i]);
    free(str);
    free(done);
    *out = res;
    return GR_OK;
}

/* Replace every string value found in `map` (old → new); skips like
 * collect_strings (runtime-patch labels/annotations). */
static void subst(json_t *v, const json_t *map, int rp, int depth)
{
    if (depth > 64)
        return;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x)
        {
            if (rp && (!strcmp(k, "labels") || !strcmp(k, "annotations")))
                continue;
            const char *nv = json_is_string(x)
                                 ? json_string_value(json_object_get(map, json_string_value(x)))
                                 : NULL;
            if (nv)
                json_object_set_new(v, k, json_string(nv));
            else
                subst(x, map, rp || !strcmp(k, "runtimePatches"), depth + 1);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            const char *nv = json_is_string(x)
                                 ? json_string_value(json_object_get(map, json_string_value(x)))
                                 : NULL;
            if (nv)
                json_array_set_new(v, i, json_string(nv));
            else
                subst(x, map, rp, depth + 1);
        }
    }
}

void gr_nvcre_wf_dep_suffix(const char *wf, const char *group, int iteration, int single, char *out,
                            size_t outsz)
{
    char h[6];
    gr_nvcre_wf_extract_hash(wf, h);
    if (!*h) {
        char hex[GR_HASH_FNV32_HEX_MAX];
        gr_hash_fnv1a32_hex(wf, strlen(wf), hex);
        snprintf(h, sizeof(h), "%.5s", hex);
    }
    if (single)
        snprintf(out, outsz, "-%s-job", h);
    else
        snprintf(out, outsz, "-%s-%s-iter-%d", h, group, iteration);
}

int gr_nvcre_wf_prepare_job(const json_t *workflow, const json_t *spec, const char *group,
                            int iteration, int single, json_t **job_spec, json_t **job_deps,
                            gr_err *err)
{
    *job_spec = NULL;
    *job_deps = NULL;
    const json_t *deps = json_object_get(spec, "dependencies");
    json_t *scopes = NULL, *order = NULL;
    int rc = gr_nvcre_wf_dep_scopes(spec, &scopes, err);
    if (rc == GR_OK)
        rc = gr_nvcre_wf_dep_order(deps, &order, err);
    if (rc != GR_OK) {
        json_decref(scopes);
        return rc;
    }
    char suffix[160];
    gr_nvcre_wf_dep_suffix(sget(json_object_get(workflow, "metadata"), "name"), group, iteration,
                           single, suffix, sizeof(suffix));
    json_t *map = json_object();
    json_t *count = json_object(); /* cross-reference string → job deps carrying it */
    size_t i;
    json_t *d;
    json_array_foreach(deps, i, d)
    {
        if (strcmp(json_string_value(json_array_get(scopes, i)), "job") != 0)
            continue;
        const char *name = sget(path_get(d, "/metadata"), "name");
        char full[512], nn[128];
        snprintf(full, sizeof(full), "%s%s", name, suffix);
        gr_nvcre_wf_truncate(full, GR_NVCRE_MAX_K8S_NAME_LEN, nn, sizeof(nn));
        json_object_set_new(map, name, json_string(nn));
        json_t *s = dep_strings(d);
        const char *k;
        json_t *x;
        json_object_foreach(s, k, x)
        {
            if (crossref_shaped(k))
                json_object_set_new(
                    count, k, json_integer(json_integer_value(json_object_get(count, k)) + 1));
        }
        json_decref(s);
    }
    const char *k;
    json_t *x;
    json_object_foreach(count, k, x)
    {
        if (json_integer_value(x) >= 2 && !json_object_get(map, k)) {
            char full[512], nn[128];
            snprintf(full, sizeof(full), "%s%s", k, suffix);
            gr_nvcre_wf_truncate(full, GR_NVCRE_MAX_K8S_NAME_LEN, nn, sizeof(nn));
            json_object_set_new(map, k, json_string(nn));
        }
    }
    json_decref(count);
    json_t *js = json_deep_copy(spec);
    json_t *jd = json_array(), *all = json_array();
    if (!js || !jd || !all) {
        json_decref(js);
        json_decref(jd);
        json_decref(all);
        json_decref(map);
        json_decref(scopes);
        json_decref(order);
        return oom(err);
    }
    json_t *jspec = path_get(js, "/jobTemplate/spec");
    json_object_foreach(jspec, k, x)
    {
        if (strcmp(k, "workloadMetadata") != 0) {
            const char *nv = json_is_string(x)
                                 ? json_string_value(json_object_get(map, json_string_value(x)))
                                 : NULL;
            if (nv)
                json_object_set_new(jspec, k, json_string(nv));
            else
                subst(x, map, !strcmp(k, "runtimePatches"), 1);
        }
    }
    json_array_foreach(order, i, x)
    {
        size_t idx = (size_t)json_integer_value(x);
        json_t *c = json_deep_copy(json_array_get(deps, idx));
        if (!strcmp(json_string_value(json_array_get(scopes, idx)), "job")) {
            subst(c, map, 0, 0);
            json_array_append(jd, c);
        }
        json_array_append_new(all, c);
    }
    json_object_set_new(js, "dependencies", all);
    json_decref(map);
    json_decref(scopes);
    json_decref(order);
    *job_spec = js;
    *job_deps = jd;
    return GR_OK;
}

int gr_nvcre_wf_workflow_deps(const json_t *spec, json_t **out, gr_err *err)
{
    *out = NULL;
    const json_t *deps = json_object_get(spec, "dependencies");
    json_t *scopes = NULL, *order = NULL;
    int rc = gr_nvcre_wf_dep_scopes(spec, &scopes, err);
    if (rc == GR_OK)
        rc = gr_nvcre_wf_dep_order(deps, &order, err);
    if (rc != GR_OK) {
        json_decref(scopes);
        return rc;
    }
    json_t *res = json_array();
    size_t i;
    json_t *x;
    json_array_foreach(order, i, x)
    {
        size_t idx = (size_t)json_integer_value(x);
        if (!strcmp(json_string_value(json_array_get(scopes, idx)), "workflow"))
            json_array_append_new(res, json_deep_copy(json_array_get(deps, idx)));
    }
    json_decref(scopes);
    json_decref(order);
    *out = res;
    return res ? GR_OK : oom(err);
}

/* -------------------------------------------------------------- partitioning */

int gr_nvcre_wf_checkpoint_check(const json_t *spec, const char **reason, gr_err *err)
{
    const char *pvc = sget(path_get(spec, "/jobTemplate/spec/checkpoint"), "pvcName");
    if (!path_get(spec, "/jobTemplate/spec/checkpoint"))
        return GR_OK;
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(spec, "dependencies"), i, d)
    {
        if (!strcmp(sget(d, "kind"), "PersistentVolumeClaim") &&
            !strcmp(sget(d, "apiVersion"), "v1") &&
            !strcmp(sget(path_get(d, "/metadata"), "name"), pvc))
            return GR_OK;
    }
    FAIL(GR_NVCRE_REASON_CHECKPOINT_PVC_MISSING, GR_NVCRE_MSG_CHECKPOINT_PVC_MISSING_FMT, pvc);
}

int gr_nvcre_wf_unpinned(const json_t *spec)
{
    return !strcmp(sget(path_get(spec, "/orchestration"), "placement"),
                   GR_NVCRE_WF_PLACEMENT_UNPINNED);
}

int gr_nvcre_wf_nodes_per_job(const json_t *spec, int available, int *out, const char **reason,
                              gr_err *err)
{
    const json_t *nn = path_get(spec, "/jobTemplate/spec/workload/trainJob/trainer/numNodes");
    int unpinned = gr_nvcre_wf_unpinned(spec);
    if (!json_is_integer(nn) && !unpinned)
        FAIL(GR_NVCRE_REASON_PARTITION_ERROR, "%s", GR_NVCRE_WF_MSG_NUM_NODES_NOT_SET);
    json_int_t n = json_integer_value(nn);
    if (n < 1 && unpinned)
        FAIL(GR_NVCRE_REASON_PARTITION_ERROR, "%s", GR_NVCRE_WF_MSG_UNPINNED_NO_SIZE);
    if (n < 1)
        n = available;
    if (n > available) {
        char hint[256];
        if (unpinned)
            snprintf(hint, sizeof(hint), GR_NVCRE_WF_MSG_UNPINNED_HINT_FMT, (int)n);
        else
            snprintf(hint, sizeof(hint), GR_NVCRE_WF_MSG_NOT_ENOUGH_HINT_FMT, available);
        if (reason)
            *reason = GR_NVCRE_REASON_PARTITION_ERROR;
        gr_err_set(err, GR_ESTATE, GR_NVCRE_MSG_NOT_ENOUGH_NODES_FMT, (int)n, available);
        if (err) {
            size_t l = strlen(err->msg);
            snprintf(err->msg + l, sizeof(err->msg) - l, ". %s", hint);
        }
        return GR_ESTATE;
    }
    *out = (int)n;
    return GR_OK;
}

static json_t *mk_group(const char *name, json_t *nodes, json_t *domains, int overflow)
{
    json_t *g = json_pack("{s:s,s:o,s:o}", "name", name, "nodes", nodes, "domains", domains);
    if (g && overflow)
        json_object_set_new(g, "overflow", json_true());
    return g;
}

static int gr_nvcre_wf_partition_impl(const json_t *nidx, const json_t *spec, const json_t *nodes,
                                      const json_t *names, int npj, json_t **out, gr_err *err)
{
    (void)nodes; /* looked up through nidx */
    *out = NULL;
    size_t n = json_array_size(names);
    if (npj < 1 || (size_t)npj > n)
        return gr_err_set(err, GR_EINVAL, "partition: nodesPerJob %d outside 1..%zu", npj, n);
    const json_t *topo = path_get(spec, "/orchestration/topology");
    const char *tkey = sget(topo, "topologyKey");
    int strict = json_is_true(json_object_get(topo, "strictDomain"));
    json_t *groups = json_array();
    if (!groups)
        return oom(err);
    if (gr_nvcre_wf_unpinned(spec)) {
        /* ADR-089: one job, nodes back-filled from its placed pods. */
        json_array_append_new(groups, mk_group("group-0", json_array(), json_array(), 0));
        *out = groups;
        return GR_OK;
    }
    char gname[64];
    int gi = 0;
    if (!*tkey) {
        size_t full = n / (size_t)npj;
        for (size_t g = 0; g < full; g++) {
            json_t *ns = json_array();
            for (size_t k = 0; k < (size_t)npj; k++)
                json_array_append(ns, json_array_get(names, g * (size_t)npj + k));
            snprintf(gname, sizeof(gname), "group-%d", gi++);
            json_array_append_new(groups, mk_group(gname, ns, json_array(), 0));
        }
        size_t rem = n % (size_t)npj;
        if (rem) {
            /* Overflow: the remainder plus nodes borrowed from the start. */
            json_t *ns = json_array();
            for (size_t k = n - rem; k < n; k++)
                json_array_append(ns, json_array_get(names, k));
            for (size_t k = 0; json_array_size(ns) < (size_t)npj; k++)
                json_array_append(ns, json_array_get(names, k));
            snprintf(gname, sizeof(gname), "group-%d-overflow", gi++);
            json_array_append_new(groups, mk_group(gname, ns, json_array(), 1));
        }
        *out = groups;
        return GR_OK;
    }
    /* By domain: domains sorted by size (largest first), then name. */
    json_t *dom = json_object();
    size_t i;
    json_t *x;
    json_array_foreach(names, i, x)
    {
        const char *d =
            sget(path_get(find_node(nidx, json_string_value(x)), "/metadata/labels"), tkey);
        json_t *l = json_object_get(dom, d);
        if (!l) {
            l = json_array();
            json_object_set_new(dom, d, l);
        }
        json_array_append(l, x);
    }
    size_t nd = json_object_size(dom);
    const char **dn = calloc(nd ? nd : 1, sizeof(*dn));
    size_t di = 0;
    const char *k;
    json_t *v;
    json_object_foreach(dom, k, v) dn[di++] = k;
    qsort(dn, nd, sizeof(*dn), cmp_str);
    for (size_t a = 1; a < nd; a++) { /* stable insertion by size desc */
        for (size_t b = a; b > 0 && json_array_size(json_object_get(dom, dn[b])) >
                                        json_array_size(json_object_get(dom, dn[b - 1]));
             b--) {
            const char *t = dn[b];
            dn[b] = dn[b - 1];
            dn[b - 1] = t;
        }
    }
    json_t *left = json_array(), *leftdom = json_array();
    for (size_t a = 0; a < nd; a++) {
        json_t *l = json_object_get(dom, dn[a]);
        size_t m = json_array_size(l);
        if (strict) {
            snprintf(gname, sizeof(gname), "group-%d", gi++);
            json_array_append_new(groups,
                                  mk_group(gname, json_deep_copy(l), json_pack("[s]", dn[a]), 0));
            continue;
        }
        size_t full = m / (size_t)npj;
        for (size_t g = 0; g < full; g++) {
            json_t *ns = json_array();
            for (size_t q = 0; q < (size_t)npj; q++)
                json_array_append(ns, json_array_get(l, g * (size_t)npj + q));
            snprintf(gname, sizeof(gname), "group-%d", gi++);
            json_array_append_new(groups, mk_group(gname, ns, json_pack("[s]", dn[a]), 0));
        }
        for (size_t q = full * (size_t)npj; q < m; q++) {
            json_array_append(left, json_array_get(l, q));
            json_array_append_new(leftdom, json_string(dn[a]));
        }
    }
    /* Leftovers packed across the fewest domains. */
    size_t nl = json_array_size(left), pos = 0;
    while (nl - pos >= (size_t)npj) {
        json_t *ns = json_array(), *ds = json_array();
        for (size_t q = 0; q < (size_t)npj; q++, pos++) {
            json_array_append(ns, json_array_get(left, pos));
            const char *d = json_string_value(json_array_get(leftdom, pos));
            if (!json_array_size(ds) ||
                strcmp(json_string_value(json_array_get(ds, json_array_size(ds) - 1)), d) != 0)
                json_array_append_new(ds, json_string(d));
        }
        snprintf(gname, sizeof(gname), "group-%d", gi++);
        json_array_append_new(groups, mk_group(gname, ns, ds, 0));
    }
    if (!strict && pos < nl) {
        json_t *ns = json_array(), *ds = json_array();
        for (; pos < nl; pos++)
            json_array_append(ns, json_array_get(left, pos));
        for (size_t q = 0; json_array_size(ns) < (size_t)npj && q < n; q++) {
            json_t *cand = json_array_get(names, q);
            int dup = 0;
            size_t z;
            json_t *y;
            json_array_foreach(ns, z, y) dup |= json_equal(y, cand);
            if (!dup)
                json_array_append(ns, cand);
        }
        snprintf(gname, sizeof(gname), "group-%d-overflow", gi++);
        json_array_append_new(groups, mk_group(gname, ns, ds, 1));
    }
    json_decref(left);
    json_decref(leftdom);
    free(dn);
    json_decref(dom);
    *out = groups;
    return GR_OK;
}

int gr_nvcre_wf_partition(const json_t *spec, const json_t *nodes, const json_t *names, int npj,
                          json_t **out, gr_err *err)
{
    json_t *nidx = node_index(nodes);
    int rc = gr_nvcre_wf_partition_impl(nidx, spec, nodes, names, npj, out, err);
    json_decref(nidx);
    return rc;
}

/* ---------------------------------------------------------------- rendering */

static json_t *tolerations_for(const json_t *spec)
{
    const json_t *ts = path_get(spec, "/orchestration/target/taintSelectors");
    json_t *out = json_array();
    size_t i;
    json_t *t;
    json_array_foreach(ts, i, t)
    {
        json_t *tol = json_pack("{s:s}", "key", sget(t, "key"));
        if (*sget(t, "value")) {
            json_object_set_new(tol, "operator", json_string("Equal"));
            json_object_set_new(tol, "value", json_string(sget(t, "value")));
        } else {
            json_object_set_new(tol, "operator", json_string("Exists"));
        }
        if (*sget(t, "effect"))
            json_object_set_new(tol, "effect", json_string(sget(t, "effect")));
        json_array_append_new(out, tol);
    }
    if (json_array_size(out) == 0) {
        /* MPI workloads (a launcher target) tolerate everything (ADR-051/063). */
        const json_t *rps = path_get(spec, "/jobTemplate/spec/workload/trainJob/runtimePatches");
        int launcher = 0;
        json_t *p;
        json_array_foreach(rps, i, p)
        {
            size_t j;
            json_t *rj;
            json_array_foreach(path_get(p, "/trainingRuntimeSpec/template/spec/replicatedJobs"), j,
                               rj) launcher |= !strcmp(sget(rj, "name"), "launcher");
        }
        if (launcher)
            json_array_append_new(out, json_pack("{s:s}", "operator", "Exists"));
    }
    return out;
}

/* Unpinned placement: the target as node affinity — nodeNames (hostname
 * In), or nodeSelector (one In term per label) and matchExpressions — plus
 * GPU nodes of the detected products (gpuProducts). */
static json_t *unpinned_affinity(const json_t *spec, const json_t *products)
{
    const json_t *target = path_get(spec, "/orchestration/target");
    json_t *exprs = json_array();
    const json_t *names = json_object_get(target, "nodeNames");
    if (json_array_size(names) > 0) {
        json_array_append_new(exprs, json_pack("{s:s,s:s,s:O}", "key", GR_NVCRE_WF_LABEL_HOSTNAME,
                                               "operator", "In", "values", mut(names)));
    } else {
        const char *k;
        json_t *v;
        json_object_foreach(mut(json_object_get(target, "nodeSelector")), k, v)
        {
            if (json_is_string(v))
                json_array_append_new(
                    exprs, json_pack("{s:s,s:s,s:[O]}", "key", k, "operator", "In", "values", v));
        }
    }
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(target, "matchExpressions"), i, e)
        json_array_append_new(exprs, json_deep_copy(e));
    json_array_append_new(exprs, json_pack("{s:s,s:s,s:[s]}", "key", GR_NVCRE_WF_LABEL_GPU_PRESENT,
                                           "operator", "In", "values", "true"));
    if (json_array_size(products) > 0)
        json_array_append_new(exprs,
                              json_pack("{s:s,s:s,s:O}", "key", GR_NVCRE_WF_LABEL_GPU_PRODUCT,
                                        "operator", "In", "values", mut(products)));
    return exprs;
}

int gr_nvcre_wf_dependency_object(const json_t *workflow, const json_t *dep, json_t **out,
                                  gr_err *err)
{
    *out = NULL;
    if (!json_is_object(dep) ||
        (json_object_get(dep, "metadata") && !json_is_object(json_object_get(dep, "metadata"))))
        return gr_err_set(err, GR_EINVAL, "dependency: want an object with metadata");
    const json_t *md = json_object_get(workflow, "metadata");
    const char *wf = sget(md, "name"), *ns = sget(md, "namespace"), *uid = sget(md, "uid");
    json_t *obj = json_deep_copy(dep);
    if (!obj)
        return oom(err);
    json_object_del(obj, "when");
    json_t *om = gr_json_object_child(obj, "metadata");
    json_t *labels = om ? gr_json_object_child(om, "labels") : NULL;
    json_t *ann = om ? gr_json_object_child(om, "annotations") : NULL;
    if (!labels || !ann || json_object_set_new(labels, GR_NVCRE_LABEL_WORKFLOW, json_string(wf)) ||
        json_object_set_new(ann, GR_NVCRE_ANN_WORKFLOW_UID, json_string(uid))) {
        json_decref(obj);
        return gr_err_set(err, GR_EINVAL,
                          "dependency %s: metadata.labels and metadata.annotations must be maps",
                          sget(om, "name"));
    }
    if (strncmp(sget(dep, "kind"), "Cluster", 7) != 0) {
        json_object_set_new(om, "namespace", json_string(ns));
        /* Like gr_kube_owner_ref_set(controller): ours replaces a ref with
         * our uid; another controller's ref is left alone. */
        json_t *refs = json_object_get(om, "ownerReferences");
        if (!json_is_array(refs)) {
            refs = json_array();
            json_object_set_new(om, "ownerReferences", refs);
        }
        int other = 0;
        size_t i;
        json_t *r;
        for (i = json_array_size(refs); i-- > 0;) {
            r = json_array_get(refs, i);
            if (!strcmp(sget(r, "uid"), uid))
                json_array_remove(refs, i);
            else if (json_is_true(json_object_get(r, "controller")))
                other = 1;
        }
        json_t *ref = other
                          ? NULL
                          : json_pack("{s:s,s:s,s:s,s:s,s:b,s:b}", "apiVersion",
                                      GR_NVCRE_API_VERSION, "kind", GR_NVCRE_KIND_WORKFLOW, "name",
                                      wf, "uid", uid, "controller", 1, "blockOwnerDeletion", 1);
        if (!refs || (!other && (!ref || json_array_append_new(refs, ref)))) {
            json_decref(obj);
            return oom(err);
        }
    }
    *out = obj;
    return GR_OK;
}

int gr_nvcre_wf_render_job(const json_t *workflow, const json_t *spec, const json_t *group,
                           int iteration, int single, json_t **out, gr_err *err)
{
    *out = NULL;
    const json_t *md = json_object_get(workflow, "metadata");
    const char *wf = sget(md, "name");
    const char *ns = sget(md, "namespace");
    const char *gname = sget(group, "name");
    char name[128];
    gr_nvcre_wf_job_name(wf, gname, iteration, single, name, sizeof(name));
    json_t *jt = json_deep_copy(json_object_get(spec, "jobTemplate"));
    if (!jt)
        jt = json_object();
    json_t *jspec = json_object_get(jt, "spec");
    if (!json_is_object(jspec)) {
        json_decref(jt);
        return gr_err_set(err, GR_EINVAL, "spec.jobTemplate.spec: required; set the Job spec");
    }
    json_t *labels = json_deep_copy(path_get(jt, "/metadata/labels"));
    if (!json_is_object(labels)) {
        json_decref(labels);
        labels = json_object();
    }
    json_object_set_new(labels, GR_NVCRE_LABEL_MANAGED_BY, json_string(GR_NVCRE_MANAGED_BY_VALUE));
    json_object_set_new(labels, GR_NVCRE_LABEL_WORKFLOW, json_string(wf));
    json_object_set_new(labels, GR_NVCRE_LABEL_GROUP, json_string(gname));
    json_t *ann = json_deep_copy(path_get(jt, "/metadata/annotations"));
    if (!json_is_object(ann)) {
        json_decref(ann);
        ann = json_object();
    }
    gr_buf gn;
    gr_buf_init(&gn, 1 << 22);
    size_t i;
    json_t *x;
    const json_t *gnodes = json_object_get(group, "nodes");
    json_array_foreach(gnodes, i, x) gr_buf_printf(&gn, "%s%s", i ? "," : "", json_string_value(x));
    json_object_set_new(ann, GR_NVCRE_ANN_GROUP_NODES, json_string(gn.data ? gn.data : ""));
    gr_buf_free(&gn);
    json_t *meta = json_pack("{s:s,s:o,s:o}", "name", name, "labels", labels, "annotations", ann);
    if (*ns)
        json_object_set_new(meta, "namespace", json_string(ns));
    if (*sget(md, "uid"))
        json_object_set_new(meta, "ownerReferences",
                            json_pack("[{s:s,s:s,s:s,s:s,s:b,s:b}]", "apiVersion",
                                      GR_NVCRE_API_VERSION, "kind", GR_NVCRE_KIND_WORKFLOW, "name",
                                      wf, "uid", sget(md, "uid"), "controller", 1,
                                      "blockOwnerDeletion", 1));
    /* Thresholds from validation.performance. */
    const json_t *perf = path_get(spec, "/validation/performance");
    /* validation.performance.thresholds.thresholds (the CRD's shape; a
     * flat map is accepted too) → spec.thresholds. */
    const json_t *thr = json_object_get(perf, "thresholds");
    if (json_is_object(json_object_get(thr, "thresholds")))
        thr = json_object_get(thr, "thresholds");
    if (json_is_object(thr) && json_object_size(thr) > 0)
        json_object_set_new(jspec, "thresholds", json_deep_copy(thr));
    if (json_object_get(perf, "measurementTimeout"))
        json_object_set_new(jspec, "measurementTimeout",
                            json_deep_copy(json_object_get(perf, "measurementTimeout")));
    /* numNodes, affinity, tolerations. */
    json_t *tj = path_get(jspec, "/workload/trainJob");
    if (json_is_object(tj)) {
        json_t *tr = gr_json_object_child(tj, "trainer");
        json_t *podspec = json_object();
        json_t *exprs;
        if (gr_nvcre_wf_unpinned(spec)) {
            /* Unpinned: the Job's size stays as written; the scheduler
             * places it anywhere the target allows. */
            exprs =
                unpinned_affinity(spec, path_get(workflow, "/status/orchestration/gpuProducts"));
        } else {
            json_object_set_new(tr, "numNodes", json_integer((json_int_t)json_array_size(gnodes)));
            exprs = json_pack("[{s:s,s:s,s:O}]", "key", GR_NVCRE_WF_LABEL_HOSTNAME, "operator",
                              "In", "values", mut(gnodes));
        }
        json_object_set_new(podspec, "affinity",
                            json_pack("{s:{s:{s:[{s:o}]}}}", "nodeAffinity",
                                      "requiredDuringSchedulingIgnoredDuringExecution",
                                      "nodeSelectorTerms", "matchExpressions", exprs));
        json_t *tols = tolerations_for(spec);
        if (json_array_size(tols) > 0)
            json_object_set_new(podspec, "tolerations", tols);
        else
            json_decref(tols);
        json_t *rp = json_object_get(tj, "runtimePatches");
        if (!json_is_array(rp)) {
            rp = json_array();
            json_object_set_new(tj, "runtimePatches", rp);
        }
        json_array_append_new(rp,
                              json_pack("{s:s,s:{s:{s:{s:[{s:s,s:{s:{s:{s:o}}}}]}}}}", "manager",
                                        GR_NVCRE_WF_PATCH_MANAGER, "trainingRuntimeSpec",
                                        "template", "spec", "replicatedJobs", "name", "node",
                                        "template", "spec", "template", "spec", podspec));
    }
    /* Default node-health monitor unless set or cordoned nodes are targeted. */
    if (!json_object_get(jspec, GR_NVCRE_F_NODE_HEALTH_MONITOR) &&
        !targets_cordoned(path_get(spec, "/orchestration/target")))
        json_object_set_new(
            jspec, GR_NVCRE_F_NODE_HEALTH_MONITOR,
            json_pack("{s:{s:s}}", "cel", "expression", GR_NVCRE_DEFAULT_NODE_HEALTH_EXPRESSION));
    json_t *job = json_pack("{s:s,s:s,s:o,s:O}", "apiVersion", GR_NVCRE_API_VERSION, "kind",
                            GR_NVCRE_KIND_JOB, "metadata", meta, "spec", jspec);
    json_decref(jt);
    if (!job)
        return oom(err);
    *out = job;
    return GR_OK;
}

/* ---------------------------------------------------------------------- plan */

int gr_nvcre_wf_plan(const json_t *workflow, const json_t *nodes, json_t **out, const char **reason,
                     gr_err *err)
{
    *out = NULL;
    const json_t *spec = json_object_get(workflow, "spec");
    if (!json_is_object(spec))
        return gr_err_set(err, GR_EINVAL,
                          "spec: required; a Workflow needs spec.jobTemplate and "
                          "spec.orchestration");
    json_t *plan = json_object();
    json_t *events = json_array();
    if (!plan || !events) {
        json_decref(plan);
        json_decref(events);
        return oom(err);
    }
    json_object_set_new(plan, "events", events);
    *out = plan;
    /* Pre-detection overrides (for orchestration.target). */
    const char *tm = path_get(spec, "/orchestration/topology/topologyKey") ? "topology" : "simple";
    gr_nvcre_wf_ctx c0 = {"", "", GR_NVCRE_KIND_TRAIN_JOB, tm, 0};
    json_t *pre = NULL;
    int rc = gr_nvcre_wf_apply_overrides(spec, &c0, &pre, NULL, NULL, reason, err);
    if (rc != GR_OK)
        return rc;
    rc = gr_nvcre_wf_checkpoint_check(pre, reason, err);
    if (rc != GR_OK) {
        json_decref(pre);
        return rc;
    }
    json_t *disc = NULL;
    rc = gr_nvcre_wf_discover(pre, nodes, &disc, events, reason, err);
    json_decref(pre);
    if (disc) {
        json_object_set(plan, "excludedNodes", json_object_get(disc, "excluded"));
        if (json_object_get(disc, "platform"))
            json_object_set(plan, "platform", json_object_get(disc, "platform"));
        if (json_object_get(disc, "gpuArchitecture"))
            json_object_set(plan, "gpuArchitecture", json_object_get(disc, "gpuArchitecture"));
    }
    if (rc != GR_OK) {
        json_decref(disc);
        return rc;
    }
    gr_nvcre_wf_ctx ctx = {sget(disc, "platform"), sget(disc, "gpuArchitecture"),
                           GR_NVCRE_KIND_TRAIN_JOB, tm,
                           json_integer_value(json_object_get(disc, "domainCount"))};
    json_t *eff = NULL, *trk = NULL;
    rc = gr_nvcre_wf_apply_overrides(spec, &ctx, &eff, &trk, events, reason, err);
    if (rc != GR_OK) {
        json_decref(disc);
        return rc;
    }
    json_object_set_new(plan, "appliedOverrides", trk);
    json_object_set_new(plan, "spec", eff);
    rc = gr_nvcre_wf_capacity_filter(disc, nodes, gr_nvcre_wf_gpus_per_node(eff), events, reason,
                                     err);
    json_object_set(plan, "excludedNodes", json_object_get(disc, "excluded"));
    if (rc == GR_OK)
        rc = gr_nvcre_wf_gang_check(eff, NULL, reason, err);
    if (rc == GR_OK && gr_nvcre_wf_unpinned(eff)) {
        if (path_get(eff, "/orchestration/diagnose")) {
            if (reason)
                *reason = GR_NVCRE_REASON_PARTITION_ERROR;
            rc = gr_err_set(err, GR_ESTATE, "%s", GR_NVCRE_WF_MSG_UNPINNED_DIAGNOSE);
        } else if (json_is_true(path_get(eff, "/orchestration/topology/strictDomain"))) {
            if (reason)
                *reason = GR_NVCRE_REASON_PARTITION_ERROR;
            rc = gr_err_set(err, GR_ESTATE, "%s", GR_NVCRE_WF_MSG_UNPINNED_STRICT_DOMAIN);
        }
    }
    if (rc != GR_OK) {
        json_decref(disc);
        return rc;
    }
    json_t *names = json_object_get(disc, "nodes");
    /* gpuProducts: the distinct nvidia.com/gpu.product values of the nodes
     * kept (sorted); Unpinned Jobs are placed on exactly these. */
    json_t *prodset = json_object(), *nidx = node_index(nodes);
    size_t pi;
    json_t *px;
    json_array_foreach(names, pi, px)
    {
        const char *prod =
            sget(path_get(find_node(nidx, json_string_value(px)), "/metadata/labels"),
                 GR_NVCRE_WF_LABEL_GPU_PRODUCT);
        if (*prod)
            json_object_set_new(prodset, prod, json_true());
    }
    json_t *products = json_array();
    {
        size_t np2 = json_object_size(prodset), q = 0;
        const char **pv = calloc(np2 ? np2 : 1, sizeof(*pv));
        const char *k;
        json_t *v;
        json_object_foreach(prodset, k, v) if (pv) pv[q++] = k;
        if (pv) {
            qsort(pv, q, sizeof(*pv), cmp_str);
            for (size_t z = 0; z < q; z++)
                json_array_append_new(products, json_string(pv[z]));
        }
        free(pv);
    }
    json_decref(prodset);
    json_decref(nidx);
    json_object_set_new(plan, "gpuProducts", products);
    int npj = 0;
    rc = gr_nvcre_wf_nodes_per_job(eff, (int)json_array_size(names), &npj, reason, err);
    if (rc != GR_OK) {
        json_decref(disc);
        return rc;
    }
    json_t *groups = NULL;
    rc = gr_nvcre_wf_partition(eff, nodes, names, npj, &groups, err);
    if (rc == GR_OK && gr_nvcre_wf_diag_enabled(eff)) {
        /* Diagnose mode (§2.14): the first round screens each topology
         * domain instead (gr_nvcre_wf_diag.h). */
        json_t *dst = NULL, *dgs = NULL;
        json_decref(groups);
        groups = NULL;
        rc = gr_nvcre_wf_diag_start(eff, nodes, names, &dst, &dgs, err);
        if (rc == GR_OK) {
            groups = dgs;
            json_object_set_new(plan, "diagnose", dst);
        }
    }
    if (rc != GR_OK) {
        json_decref(disc);
        if (reason)
            *reason = GR_NVCRE_REASON_PARTITION_ERROR;
        return GR_ESTATE;
    }
    json_object_set_new(plan, "totalNodes", json_integer((json_int_t)json_array_size(names)));
    json_object_set_new(plan, "nodesPerJob", json_integer(npj));
    json_object_set_new(plan, "groups", groups);
    json_t *wdeps = NULL;
    rc = gr_nvcre_wf_workflow_deps(eff, &wdeps, err);
    if (rc != GR_OK) {
        json_decref(disc);
        if (reason)
            *reason = GR_NVCRE_REASON_DEPENDENCY_CREATION_ERROR;
        return GR_ESTATE;
    }
    json_object_set_new(plan, "dependencies", wdeps);
    /* Exclusion reasons, joined by ". ". */
    gr_buf why;
    gr_buf_init(&why, 1 << 16);
    const char *seen[8];
    int ns = 0;
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(disc, "excluded"), i, x)
    {
        const char *r = sget(x, "reason");
        int dup = 0;
        for (int k = 0; k < ns; k++)
            dup |= !strcmp(seen[k], r);
        if (!dup && ns < 8) {
            seen[ns++] = r;
            gr_buf_printf(&why, "%s%s", why.len ? ". " : "", r);
        }
    }
    if (why.len)
        json_object_set_new(plan, "exclusionReason", json_string(why.data));
    gr_buf_free(&why);
    int iterations = (int)json_integer_value(path_get(eff, "/orchestration/iterations"));
    if (iterations < 1)
        iterations = 1;
    int single = iterations <= 1 && json_array_size(groups) <= 1 &&
                 !path_get(eff, "/orchestration/diagnose");
    json_t *jobs = json_array(), *jdeps = json_array();
    json_object_set_new(plan, "jobs", jobs);
    json_object_set_new(plan, "jobDependencies", jdeps);
    /* The Jobs read the detected products (Unpinned affinity). */
    json_t *wfv = json_deep_copy(workflow);
    json_t *st = gr_json_object_child(wfv, "status");
    json_t *so = gr_json_object_child(st, "orchestration");
    json_object_set(so, "gpuProducts", json_object_get(plan, "gpuProducts"));
    json_array_foreach(groups, i, x)
    {
        json_t *job = NULL, *js = NULL, *jd = NULL;
        rc = gr_nvcre_wf_prepare_job(wfv, eff, sget(x, "name"), 1, single, &js, &jd, err);
        if (rc == GR_OK) {
            /* WF-36: the contract holds on the renamed dependencies too. */
            rc = gr_nvcre_wf_gang_check(js, NULL, reason, err);
            if (rc == GR_ESTATE) {
                json_decref(js);
                json_decref(jd);
                json_decref(wfv);
                json_decref(disc);
                gr_err_prefix(err, "group %s: ", sget(x, "name"));
                return GR_ESTATE;
            }
        }
        if (rc == GR_OK)
            rc = gr_nvcre_wf_render_job(wfv, js, x, 1, single, &job, err);
        json_decref(js);
        if (rc != GR_OK) {
            json_decref(jd);
            json_decref(wfv);
            json_decref(disc);
            if (reason)
                *reason = GR_NVCRE_REASON_JOB_CREATION_ERROR;
            return GR_ESTATE;
        }
        json_array_append_new(jobs, job);
        json_array_append_new(jdeps, jd);
    }
    json_decref(wfv);
    char msg[256];
    if (gr_nvcre_wf_unpinned(eff))
        snprintf(msg, sizeof(msg), GR_NVCRE_WF_MSG_UNPINNED_PARTITIONED_FMT,
                 (int)json_array_size(names), npj, (int)json_array_size(names) - npj);
    else
        snprintf(msg, sizeof(msg), GR_NVCRE_MSG_GROUPS_PARTITIONED_FMT, (int)json_array_size(names),
                 (int)json_array_size(groups), npj);
    json_object_set_new(plan, "message", json_string(msg));
    json_decref(disc);
    return GR_OK;
}

/* ------------------------------------------------------------------ tracking */

static int64_t time_ns(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    int64_t ns = 0;
    if (!s || gr_time_parse_ns(s, &ns, NULL) != GR_OK)
        return 0;
    return ns;
}

int gr_nvcre_wf_job_timed_out(const json_t *job, int64_t group_start_ns, int64_t timeout_ns,
                              int64_t now_ns, int *out, int *blocked)
{
    *out = 0;
    *blocked = 0;
    const json_t *st = json_object_get(job, "status");
    int64_t bs = time_ns(st, GR_NVCRE_F_SCHEDULING_BLOCKED_SINCE);
    int64_t ws = time_ns(st, GR_NVCRE_F_WORKLOAD_START_TIME);
    if (bs) {
        if (gr_ns_sub_sat(now_ns, bs) > timeout_ns || (ws && gr_ns_sub_sat(bs, ws) > timeout_ns)) {
            *out = 1;
            *blocked = 1;
        }
        return GR_OK;
    }
    if (ws) {
        *out = gr_ns_sub_sat(now_ns, ws) > timeout_ns;
        return GR_OK;
    }
    if (json_object_get(st, GR_NVCRE_F_WORKLOAD_REF))
        return GR_OK; /* created but pending or suspended: queued time does not count */
    if (group_start_ns)
        *out = gr_ns_sub_sat(now_ns, group_start_ns) > timeout_ns;
    return GR_OK;
}

int gr_nvcre_wf_job_awaiting_thresholds(const json_t *job)
{
    const json_t *th = path_get(job, "/spec/" GR_NVCRE_F_THRESHOLDS);
    if (!json_is_object(th) || json_object_size(th) == 0)
        return 0;
    int succeeded = 0;
    size_t i;
    json_t *c;
    json_array_foreach(path_get(job, "/status/conditions"), i, c)
    {
        const char *t = sget(c, "type");
        if (!strcmp(t, GR_NVCRE_COND_VALIDATION_FAILED))
            return 0;
        if (!strcmp(t, GR_NVCRE_COND_SUCCEEDED) && !strcmp(sget(c, "status"), "True"))
            succeeded = 1;
    }
    return succeeded;
}

/* The Job's InProgress condition when True (NULL otherwise). */
static const json_t *in_progress(const json_t *job)
{
    size_t i;
    json_t *c;
    json_array_foreach(path_get(job, "/status/conditions"), i, c)
    {
        if (!strcmp(sget(c, "type"), GR_NVCRE_COND_IN_PROGRESS) &&
            !strcmp(sget(c, "status"), "True"))
            return c;
    }
    return NULL;
}

int gr_nvcre_wf_job_relayed(const json_t *job)
{
    const char *r = sget(in_progress(job), "reason");
    return !strcmp(r, GR_NVCRE_REASON_WORKLOAD_SCHEDULING_BLOCKED) ||
           !strcmp(r, GR_NVCRE_REASON_WORKLOAD_CREATION_REJECTED);
}

const char *gr_nvcre_wf_running_condition(int iteration, int iterations, int running,
                                          const json_t *relay_job, char *msg, size_t msgsz)
{
    int n = snprintf(msg, msgsz, GR_NVCRE_MSG_JOBS_RUNNING_FMT, iteration, iterations, running);
    if (!relay_job || !gr_nvcre_wf_job_relayed(relay_job) || n < 0 || (size_t)n >= msgsz)
        return GR_NVCRE_REASON_JOB_RUNNING;
    const json_t *c = in_progress(relay_job);
    const char *name = sget(path_get(relay_job, "/metadata"), "name");
    int blocked = !strcmp(sget(c, "reason"), GR_NVCRE_REASON_WORKLOAD_SCHEDULING_BLOCKED);
    snprintf(msg + n, msgsz - (size_t)n,
             blocked ? GR_NVCRE_WF_MSG_SCHEDULING_BLOCKED_SUFFIX_FMT
                     : GR_NVCRE_WF_MSG_CREATION_REJECTED_SUFFIX_FMT,
             name, sget(c, "message"));
    return blocked ? GR_NVCRE_REASON_JOB_SCHEDULING_BLOCKED
                   : GR_NVCRE_WF_REASON_JOB_CREATION_REJECTED;
}

int gr_nvcre_wf_pv_reclaim(const json_t *pv)
{
    const char *policy = sget(path_get(pv, "/spec"), "persistentVolumeReclaimPolicy");
    const char *phase = sget(path_get(pv, "/status"), "phase");
    if (strcmp(policy, "Retain") != 0)
        return GR_NVCRE_WF_PV_DONE;
    if (!strcmp(phase, "Released"))
        return GR_NVCRE_WF_PV_SET_DELETE;
    return !strcmp(phase, "Bound") ? GR_NVCRE_WF_PV_WAIT : GR_NVCRE_WF_PV_DONE;
}

int gr_nvcre_wf_drain_wait(const json_t *pods, int64_t since_ns, int64_t now_ns)
{
    if (since_ns > 0 && gr_ns_sub_sat(now_ns, since_ns) >= GR_NVCRE_WF_DRAIN_MAX_NS)
        return 0;
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        const char *ph = sget(path_get(p, "/status"), "phase");
        if (strcmp(ph, "Succeeded") != 0 && strcmp(ph, "Failed") != 0)
            return 1;
    }
    return 0;
}

int gr_nvcre_wf_placed_nodes(const json_t *pods, json_t **out, gr_err *err)
{
    *out = NULL;
    size_t n = json_array_size(pods);
    if (n > GR_NVCRE_WF_MAX_NODES)
        return gr_err_set(err, GR_ETOOBIG, "pods: more than %d", GR_NVCRE_WF_MAX_NODES);
    const char **names = calloc(n ? n : 1, sizeof(*names));
    if (!names)
        return oom(err);
    size_t k = 0, i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        const char *nn = sget(path_get(p, "/spec"), "nodeName");
        if (*nn && !path_get(p, "/metadata/deletionTimestamp"))
            names[k++] = nn;
    }
    qsort(names, k, sizeof(*names), cmp_str);
    json_t *res = json_array();
    for (i = 0; i < k && res; i++) {
        if (i == 0 || strcmp(names[i], names[i - 1]) != 0)
            json_array_append_new(res, json_string(names[i]));
    }
    free(names);
    *out = res;
    return res ? GR_OK : oom(err);
}

const char *gr_nvcre_wf_final_reason(int failed_groups, int hardware, int validation_only,
                                     int iterations, char *msg, size_t msgsz)
{
    if (failed_groups == 0) {
        snprintf(msg, msgsz, GR_NVCRE_MSG_ALL_ITERATIONS_OK_FMT, iterations);
        return GR_NVCRE_REASON_JOB_COMPLETED;
    }
    snprintf(msg, msgsz, GR_NVCRE_MSG_GROUPS_FAILED_FMT "%s", failed_groups, iterations,
             hardware ? GR_NVCRE_MSG_HARDWARE_SUFFIX : "");
    if (hardware)
        return GR_NVCRE_REASON_JOB_HARDWARE_FAILED;
    if (validation_only)
        return GR_NVCRE_REASON_JOB_VALIDATION_FAILED;
    return GR_NVCRE_REASON_ITERATIONS_FAILED;
}

/* ------------------------------------------------------------- node results */

int gr_nvcre_wf_gzip(const void *data, size_t len, gr_buf *out, gr_err *err)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    /* windowBits 31 = gzip wrapper. */
    if (deflateInit2(&z, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return gr_err_set(err, GR_ENOMEM, "gzip: deflateInit2 failed");
    /* Header as Go's gzip.Writer with a zero Header: mtime 0, no name,
     * OS 255 ("unknown"). */
    gz_header h;
    memset(&h, 0, sizeof(h));
    h.os = 255;
    deflateSetHeader(&z, &h);
    uLong bound = deflateBound(&z, (uLong)len);
    unsigned char *buf = malloc(bound + 32);
    if (!buf) {
        deflateEnd(&z);
        return oom(err);
    }
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    z.next_out = buf;
    z.avail_out = (uInt)(bound + 32);
    int zr = deflate(&z, Z_FINISH);
    size_t n = (size_t)(bound + 32 - z.avail_out);
    deflateEnd(&z);
    if (zr != Z_STREAM_END) {
        free(buf);
        return gr_err_set(err, GR_EIO, "gzip: deflate did not finish");
    }
    int rc = gr_buf_append(out, (const char *)buf, n);
    free(buf);
    if (rc != GR_OK)
        return gr_err_set(err, rc, "gzip: output over its cap");
    return GR_OK;
}

static int b64_of(const gr_buf *gz, char **b64, gr_err *err)
{
    size_t n = 4 * ((gz->len + 2) / 3) + 1;
    char *s = malloc(n);
    if (!s)
        return oom(err);
    EVP_EncodeBlock((unsigned char *)s, (const unsigned char *)gz->data, (int)gz->len);
    *b64 = s;
    return GR_OK;
}

int gr_nvcre_wf_succeeded_payload(const json_t *names, char **b64, gr_err *err)
{
    *b64 = NULL;
    size_t n = json_array_size(names);
    const char **v = calloc(n ? n : 1, sizeof(*v));
    if (!v)
        return oom(err);
    size_t k = 0;
    size_t i;
    json_t *x;
    json_array_foreach(names, i, x)
    {
        if (json_is_string(x))
            v[k++] = json_string_value(x);
    }
    qsort(v, k, sizeof(*v), cmp_str);
    gr_buf csv, gz;
    gr_buf_init(&csv, 64u << 20);
    gr_buf_init(&gz, 64u << 20);
    int first = 1;
    for (size_t a = 0; a < k; a++) {
        if (a && !strcmp(v[a], v[a - 1]))
            continue;
        gr_buf_printf(&csv, "%s%s", first ? "" : ",", v[a]);
        first = 0;
    }
    free(v);
    int rc = gr_nvcre_wf_gzip(csv.data ? csv.data : "", csv.len, &gz, err);
    if (rc == GR_OK)
        rc = b64_of(&gz, b64, err);
    gr_buf_free(&csv);
    gr_buf_free(&gz);
    return rc;
}

static int cmp_failed(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int c = strcmp(sget(x, "name"), sget(y, "name"));
    return c ? c : strcmp(sget(x, "reason"), sget(y, "reason"));
}

int gr_nvcre_wf_failed_payload(const json_t *failed, char **b64, gr_err *err)
{
    *b64 = NULL;
    size_t n = json_array_size(failed);
    json_t **v = calloc(n ? n : 1, sizeof(*v));
    if (!v)
        return oom(err);
    size_t k = 0;
    size_t i;
    json_t *x;
    json_array_foreach(failed, i, x)
    {
        int dup = 0;
        for (size_t a = 0; a < k; a++)
            dup |= !strcmp(sget(v[a], "name"), sget(x, "name")) &&
                   !strcmp(sget(v[a], "reason"), sget(x, "reason"));
        if (!dup)
            v[k++] = x;
    }
    qsort(v, k, sizeof(*v), cmp_failed);
    json_t *arr = json_array();
    for (size_t a = 0; a < k; a++)
        json_array_append_new(arr,
                              json_pack("{s:s,s:s,s:s}", "name", sget(v[a], "name"), "reason",
                                        sget(v[a], "reason"), "message", sget(v[a], "message")));
    free(v);
    gr_buf js, gz;
    gr_buf_init(&js, 64u << 20);
    gr_buf_init(&gz, 64u << 20);
    /* Go's json.Marshal of the struct order {name, reason, message}. */
    int rc = GR_OK;
    gr_buf_printf(&js, "[");
    json_array_foreach(arr, i, x)
    {
        char *nm = json_dumps(json_object_get(x, "name"), JSON_ENCODE_ANY);
        char *re = json_dumps(json_object_get(x, "reason"), JSON_ENCODE_ANY);
        char *me = json_dumps(json_object_get(x, "message"), JSON_ENCODE_ANY);
        gr_buf_printf(&js, "%s{\"name\":%s,\"reason\":%s,\"message\":%s}", i ? "," : "",
                      nm ? nm : "\"\"", re ? re : "\"\"", me ? me : "\"\"");
        free(nm);
        free(re);
        free(me);
    }
    gr_buf_printf(&js, "]");
    json_decref(arr);
    rc = gr_nvcre_wf_gzip(js.data, js.len, &gz, err);
    if (rc == GR_OK)
        rc = b64_of(&gz, b64, err);
    gr_buf_free(&js);
    gr_buf_free(&gz);
    return rc;
}

void gr_nvcre_wf_result_cm_name(const char *prefix, const char *uid, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s-%.8s", prefix, uid ? uid : "");
}
