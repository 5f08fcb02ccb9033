/* The Certification controller's pure decision logic (gr_nvcre_cert.h). */
#include "gr_nvcre_cert.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_hash.h"
#include "gr_json.h"
#include "gr_kube_object.h"
#include "gr_nvcre_detect.h"
#include "gr_nvcre_types.h"
#include "gr_time.h"

#define NS_PER_S 1000000000LL

/* ------------------------------------------------------------ naming */

static const json_t *opt(const json_t *global, const json_t *category, const char *k)
{
    const json_t *v = json_object_get(category, k);
    return v ? v : json_object_get(global, k);
}

void gr_nvcre_cert_workflow_name(const char *cert, const char *domain, const char *variant,
                                 const json_t *global_opts, const json_t *category_opts,
                                 char out[GR_NVCRE_CERT_MAX_WORKFLOW_NAME + 1])
{
    char full[512];
    int n = snprintf(full, sizeof full, "%s-%s-%s", cert, domain, variant);
    const json_t *npj = opt(global_opts, category_opts, "nodesPerJob");
    if (json_is_integer(npj) && n > 0 && (size_t)n < sizeof full)
        n += snprintf(full + n, sizeof full - (size_t)n, "-n%lld",
                      (long long)json_integer_value(npj));
    const json_t *mn = opt(global_opts, category_opts, "enableMNNVL");
    if (json_is_boolean(mn) && n > 0 && (size_t)n < sizeof full)
        snprintf(full + n, sizeof full - (size_t)n, "%s", json_is_true(mn) ? "-mnnvl" : "-nomnnvl");
    gr_nvcre_truncate_name(full, GR_NVCRE_CERT_MAX_WORKFLOW_NAME, out,
                           GR_NVCRE_CERT_MAX_WORKFLOW_NAME + 1);
}

/* ------------------------------------------------------------ nodes */

static const char *label(const json_t *node, const char *k)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(node, "metadata"), "labels"), k));
}

const char *gr_nvcre_cert_node_platform(const json_t *node)
{
    const char *p = json_string_value(json_object_get(json_object_get(node, "spec"), "providerID"));
    if (!p || !*p) {
        const char *h = label(node, "kubernetes.io/hostname");
        if ((h && strstr(h, "forge")) || label(node, "nke.nvidia.com/site-name"))
            return "forge";
        return "onprem";
    }
    static const struct {
        const char *prefix, *platform;
    } map[] = {{"aws://", "aws"},       {"gce://", "gcp"},          {"azure://", "azure"},
               {"ocid1.", "oci"},       {"openstack://", "onprem"}, {"nscale://", "nscale"},
               {"metal3://", "mistral"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strncmp(p, map[i].prefix, strlen(map[i].prefix)))
            return map[i].platform;
    if (!strncmp(p, "kubevirt://", 11))
        return label(node, "node-role.together.ai/worker") ? "togetherai" : "onprem";
    return "onprem";
}

static bool expr_holds(const json_t *node, const json_t *e)
{
    const char *key = json_string_value(json_object_get(e, "key"));
    const char *op = json_string_value(json_object_get(e, "operator"));
    if (!key || !op)
        return false;
    const char *v = label(node, key);
    const json_t *vals = json_object_get(e, "values");
    bool in = false;
    size_t i;
    json_t *x;
    json_array_foreach(vals, i, x) if (v && json_is_string(x) && !strcmp(json_string_value(x), v))
        in = true;
    if (!strcmp(op, "In"))
        return in;
    if (!strcmp(op, "NotIn"))
        return !in;
    if (!strcmp(op, "Exists"))
        return v != NULL;
    if (!strcmp(op, "DoesNotExist"))
        return v == NULL;
    return false;
}

static bool node_selected(const json_t *target, const json_t *node)
{
    if (json_is_true(json_object_get(json_object_get(node, "spec"), "unschedulable")))
        return false;
    const char *name =
        json_string_value(json_object_get(json_object_get(node, "metadata"), "name"));
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)(uintptr_t)json_object_get(target, "nodeSelector"), k, v)
    {
        const char *l = label(node, k);
        if (!l || !json_is_string(v) || strcmp(l, json_string_value(v)))
            return false;
    }
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(target, "matchExpressions"), i,
                       e) if (!expr_holds(node, e)) return false;
    const json_t *names = json_object_get(target, "nodeNames");
    if (json_array_size(names) > 0) {
        bool found = false;
        json_array_foreach(names, i, e) if (name && json_is_string(e) &&
                                            !strcmp(json_string_value(e), name)) found = true;
        if (!found)
            return false;
    }
    return true;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* labels.SelectorFromSet(nodeSelector).String(): "k=v,k2=v2", sorted. */
static void selector_text(const json_t *target, char *out, size_t outsz)
{
    const json_t *sel = json_object_get(target, "nodeSelector");
    size_t n = json_object_size(sel), i = 0;
    const char **keys = n ? calloc(n, sizeof *keys) : NULL;
    const char *k;
    json_t *v;
    out[0] = '\0';
    if (!keys) {
        const json_t *names = json_object_get(target, "nodeNames");
        if (json_array_size(names))
            snprintf(out, outsz, "nodeNames %s", json_string_value(json_array_get(names, 0)));
        return;
    }
    json_object_foreach((json_t *)(uintptr_t)sel, k, v) keys[i++] = k;
    qsort(keys, n, sizeof *keys, cmp_str);
    size_t len = 0;
    for (i = 0; i < n && len < outsz; i++) {
        int w = snprintf(out + len, outsz - len, "%s%s=%s", i ? "," : "", keys[i],
                         json_string_value(json_object_get(sel, keys[i])));
        if (w < 0)
            break;
        len += (size_t)w;
    }
    free(keys);
}

/* Go's time.Duration.String() for whole seconds ≥ 0: "4m45s", "30s", "0s". */
static void go_duration(int64_t ns, char *out, size_t outsz)
{
    int64_t s = ns / NS_PER_S;
    if (s < 0)
        s = 0;
    if (s >= 3600)
        snprintf(out, outsz, "%lldh%lldm%llds", (long long)(s / 3600), (long long)(s % 3600 / 60),
                 (long long)(s % 60));
    else if (s >= 60)
        snprintf(out, outsz, "%lldm%llds", (long long)(s / 60), (long long)(s % 60));
    else
        snprintf(out, outsz, "%llds", (long long)s);
}

/* ------------------------------------------------------------ helpers */

typedef struct {
    const gr_nvcre_cert_input *in;
    gr_nvcre_cert_plan *p;
    json_t *cert_copy; /* working object holding the new status */
    int64_t gen;
    gr_err *err;
} step;

static json_t *status_of(json_t *obj)
{
    return gr_json_object_child(obj, "status");
}

static int set_exclusive(step *st, const char *type, const char *reason, const char *msg)
{
    static const char *types[] = {GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_COND_SUCCEEDED,
                                  GR_NVCRE_COND_FAILED};
    for (size_t i = 0; i < 3; i++) {
        bool on = !strcmp(types[i], type);
        int rc = gr_kube_condition_set(st->cert_copy, types[i], on ? "True" : "False",
                                       on ? reason : GR_NVCRE_REASON_NOT_APPLICABLE, on ? msg : "",
                                       st->gen, st->in->now_ns, NULL, st->err);
        if (rc != GR_OK)
            return rc;
    }
    return GR_OK;
}

static int event(step *st, const char *type, const char *reason, const char *msg)
{
    json_t *e = json_pack("{s:s,s:s,s:s}", "type", type, "reason", reason, "message", msg);
    if (!e || json_array_append_new(st->p->events, e))
        return gr_err_set(st->err, GR_ENOMEM, "certification: out of memory");
    return GR_OK;
}

static json_t *find_workflow(const json_t *wfs, const char *name)
{
    size_t i;
    json_t *w;
    json_array_foreach(wfs, i, w)
    {
        const char *n = json_string_value(json_object_get(json_object_get(w, "metadata"), "name"));
        if (n && !strcmp(n, name))
            return w;
    }
    return NULL;
}

static void copy_ref(json_t *cs, const json_t *wf, const char *k)
{
    json_t *r = json_object_get(json_object_get(wf, "status"), k);
    if (json_is_object(r))
        json_object_set_new(cs, k, json_deep_copy(r));
}

/* Stamp the waiting window's start: lastTransitionTime of InProgress is set
 * to now when the reason becomes WaitingForNodes. */
static int64_t waiting_since(const json_t *cert_copy, int64_t now)
{
    json_t *c =
        gr_kube_condition_find(json_object_get(json_object_get(cert_copy, "status"), "conditions"),
                               GR_NVCRE_COND_IN_PROGRESS);
    const char *r = json_string_value(json_object_get(c, "reason"));
    const char *t = json_string_value(json_object_get(c, "lastTransitionTime"));
    int64_t ns;
    if (r && !strcmp(r, GR_NVCRE_REASON_WAITING_FOR_NODES) && t &&
        gr_time_parse_ns(t, &ns, NULL) == GR_OK)
        return ns;
    return now;
}

/* ------------------------------------------------------------ gang */

static int put_label(json_t *obj, const char *path_key, const char *k, const char *v)
{
    json_t *meta = json_object_get(obj, path_key);
    if (!json_is_object(meta)) {
        meta = json_object();
        if (!meta || json_object_set_new(obj, path_key, meta))
            return GR_ENOMEM;
    }
    json_t *labels = json_object_get(meta, "labels");
    if (!json_is_object(labels)) {
        labels = json_object();
        if (!labels || json_object_set_new(meta, "labels", labels))
            return GR_ENOMEM;
    }
    return json_object_set_new(labels, k, json_string(v)) ? GR_ENOMEM : GR_OK;
}

/* ApplyResolvedWorkflowTransforms' gang step: schedulerName and the queue
 * label on every TrainingRuntime replicatedJob (Job template and pod
 * template) and on the workload object (workloadMetadata.labels). */
int gr_nvcre_cert_apply_gang(json_t *spec, const json_t *gang)
{
    const char *sched = json_string_value(json_object_get(gang, "schedulerName"));
    const char *queue = json_string_value(json_object_get(gang, "queue"));
    const char *key = json_string_value(json_object_get(gang, "queueLabelKey"));
    if (!sched)
        return GR_OK;
    if (!queue || !*queue)
        queue = "default-queue";
    if (!key || !*key)
        key = "kai.scheduler/queue";
    if (json_object_set_new(spec, "gangScheduler", json_deep_copy(gang)))
        return GR_ENOMEM;
    size_t i, j;
    json_t *dep, *rj;
    json_array_foreach(json_object_get(spec, "dependencies"), i, dep)
    {
        const char *kind = json_string_value(json_object_get(dep, "kind"));
        if (!kind || strcmp(kind, "TrainingRuntime"))
            continue;
        json_t *rjs = json_object_get(
            json_object_get(json_object_get(json_object_get(dep, "spec"), "template"), "spec"),
            "replicatedJobs");
        json_array_foreach(rjs, j, rj)
        {
            json_t *jt = json_object_get(rj, "template");
            if (!json_is_object(jt))
                continue;
            if (put_label(jt, "metadata", key, queue) != GR_OK)
                return GR_ENOMEM;
            json_t *pt = json_object_get(json_object_get(jt, "spec"), "template");
            if (!json_is_object(pt))
                continue;
            if (put_label(pt, "metadata", key, queue) != GR_OK)
                return GR_ENOMEM;
            json_t *ps = json_object_get(pt, "spec");
            if (json_is_object(ps) && json_object_set_new(ps, "schedulerName", json_string(sched)))
                return GR_ENOMEM;
        }
    }
    json_t *js = json_object_get(json_object_get(spec, "jobTemplate"), "spec");
    if (json_is_object(js)) {
        json_t *wm = json_object_get(js, "workloadMetadata");
        if (!json_is_object(wm)) {
            wm = json_object();
            if (!wm || json_object_set_new(js, "workloadMetadata", wm))
                return GR_ENOMEM;
        }
        json_t *labels = json_object_get(wm, "labels");
        /* a user's different value stays: the Workflow's gang contract
         * refuses it with GangSchedulingConflict (§2.7) */
        if (!json_object_get(labels, key) && put_label(js, "workloadMetadata", key, queue) != GR_OK)
            return GR_ENOMEM;
    }
    return GR_OK;
}

/* ------------------------------------------------------------ step */

static int fail_category(step *st, json_t *cs)
{
    return json_object_set_new(cs, "status", json_string("Failed"))
               ? gr_err_set(st->err, GR_ENOMEM, "certification: out of memory")
               : GR_OK;
}

/* Detect platform and architecture among the selected nodes. */
void gr_nvcre_cert_detect(const json_t *nodes, const json_t *target, const char **platform,
                          char *arch, size_t archsz, size_t *count, bool *heterogeneous)
{
    size_t i;
    json_t *n;
    *platform = NULL;
    *heterogeneous = false;
    *count = 0;
    /* architecture votes: at most 16 distinct */
    char names[16][32];
    size_t votes[16] = {0}, nv = 0;
    json_array_foreach(nodes, i, n)
    {
        if (!node_selected(target, n))
            continue;
        (*count)++;
        const char *p = gr_nvcre_cert_node_platform(n);
        if (!*platform)
            *platform = p;
        else if (strcmp(*platform, p))
            *heterogeneous = true;
        const char *prod = label(n, "nvidia.com/gpu.product");
        if (!prod)
            continue;
        char a[32];
        gr_nvcre_catalog_arch_of_product(prod, a, sizeof a);
        size_t k = 0;
        while (k < nv && strcmp(names[k], a))
            k++;
        if (k == nv && nv < 16)
            snprintf(names[nv++], sizeof names[0], "%s", a);
        if (k < nv)
            votes[k]++;
    }
    /* ties: the first seen (the API lists nodes by name) */
    size_t best = 0;
    for (size_t k = 1; k < nv; k++)
        if (votes[k] > votes[best])
            best = k;
    if (nv) {
        snprintf(arch, archsz, "%s", names[best]);
        return;
    }
    const char *prod = json_string_value(
        json_object_get(json_object_get(target, "nodeSelector"), "nvidia.com/gpu.product"));
    if (prod)
        gr_nvcre_catalog_arch_of_product(prod, arch, archsz);
    else
        arch[0] = '\0';
}

int gr_nvcre_cert_check_options(const gr_nvcre_catalog *cat, const json_t *cert_spec, gr_err *err)
{
    const json_t *cats = json_object_get(cert_spec, "categories");
    char arch[32] = "h100";
    const char *prod = json_string_value(
        gr_json_ptr_get(cert_spec, "/target/nodeSelector/nvidia.com~1gpu.product"));
    if (prod)
        gr_nvcre_catalog_arch_of_product(prod, arch, sizeof arch);
    /* global field → 1 once a category uses it; first refusal's category */
    json_t *global_unused = NULL;
    char first_dv[2][128] = {"", ""};
    int rc = GR_OK;
    size_t i;
    json_t *c;
    json_array_foreach(cats, i, c)
    {
        const char *d = json_string_value(json_object_get(c, "domain"));
        const char *v = json_string_value(json_object_get(c, "variant"));
        if (!gr_nvcre_catalog_has(cat, d, v))
            continue;
        gr_nvcre_catalog_req req = {d,
                                    v,
                                    "onprem",
                                    arch,
                                    json_object_get(cert_spec, "target"),
                                    cert_spec,
                                    json_object_get(c, "options")};
        json_t *unused = NULL;
        if ((rc = gr_nvcre_catalog_check_options(cat, &req, &unused, err)) != GR_OK)
            break;
        json_t *mine = json_object(); /* global fields this category leaves unused */
        size_t k;
        json_t *u;
        json_array_foreach(unused, k, u)
        {
            const char *f = json_string_value(json_object_get(u, "field"));
            const char *hint = json_string_value(json_object_get(u, "hint"));
            if (!strcmp(json_string_value(json_object_get(u, "scope")), "category")) {
                rc = gr_err_set(err, GR_EINVAL, GR_NVCRE_CATALOG_MSG_UNUSED_OPTION_FMT, f, d, v,
                                hint);
                break;
            }
            json_object_set_new(mine, f, json_string(hint));
        }
        json_decref(unused);
        if (rc != GR_OK) {
            json_decref(mine);
            break;
        }
        if (!global_unused) { /* the first category: its unused globals */
            global_unused = mine;
            snprintf(first_dv[0], sizeof first_dv[0], "%s", d);
            snprintf(first_dv[1], sizeof first_dv[1], "%s", v);
        } else { /* keep only the fields this category leaves unused too */
            const char *f;
            json_t *h, *tmp;
            json_object_foreach_safe(global_unused, tmp, f, h)
            {
                if (!json_object_get(mine, f))
                    json_object_del(global_unused, f);
            }
            json_decref(mine);
        }
    }
    if (rc == GR_OK && json_object_size(global_unused)) {
        const char *f;
        json_t *h;
        json_object_foreach(global_unused, f, h)
        {
            rc = gr_err_set(err, GR_EINVAL, GR_NVCRE_MSG_CERT_UNUSED_GLOBAL_FMT, f, first_dv[0],
                            first_dv[1], json_string_value(h));
            break;
        }
    }
    json_decref(global_unused);
    return rc;
}

static int build_workflow(step *st, const json_t *spec, const json_t *cat_item, const char *name,
                          const char *platform, const char *arch, json_t **out)
{
    const json_t *cert = st->in->cert;
    const json_t *meta = json_object_get(cert, "metadata");
    const char *d = json_string_value(json_object_get(cat_item, "domain"));
    const char *v = json_string_value(json_object_get(cat_item, "variant"));
    gr_nvcre_catalog_req req = {d,
                                v,
                                platform,
                                arch,
                                json_object_get(spec, "target"),
                                spec,
                                json_object_get(cat_item, "options")};
    json_t *wspec = NULL, *opts = NULL;
    int rc = gr_nvcre_catalog_render(st->in->catalog, &req, &wspec, &opts, st->err);
    if (rc != GR_OK)
        return rc;
    const json_t *gang = json_object_get(spec, "gangScheduler");
    if (json_is_object(gang) && gr_nvcre_cert_apply_gang(wspec, gang) != GR_OK) {
        json_decref(wspec);
        json_decref(opts);
        return gr_err_set(st->err, GR_ENOMEM, "certification: out of memory");
    }
    const char *scale = json_string_value(json_object_get(opts, "testScale"));
    const char *cname = json_string_value(json_object_get(meta, "name"));
    json_t *wf = json_pack(
        "{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s,s:s,s:s},s:{s:s}},s:o}", "apiVersion",
        GR_NVCRE_GROUP "/" GR_NVCRE_VERSION, "kind", GR_NVCRE_KIND_WORKFLOW, "metadata", "name",
        name, "namespace", json_string_value(json_object_get(meta, "namespace")), "labels",
        GR_NVCRE_LABEL_MANAGED_BY, GR_NVCRE_MANAGED_BY_VALUE, GR_NVCRE_LABEL_CERTIFICATION, cname,
        GR_NVCRE_LABEL_CATEGORY_DOMAIN, d, GR_NVCRE_LABEL_CATEGORY_VARIANT, v, "annotations",
        GR_NVCRE_ANN_REQUESTED_TEST_SCALE, scale ? scale : "full-scale", "spec", wspec);
    json_decref(opts);
    if (!wf)
        return gr_err_set(st->err, GR_ENOMEM, "certification: out of memory");
    json_t *owner = json_deep_copy(cert);
    if (owner && !json_object_get(owner, "apiVersion"))
        json_object_set_new(owner, "apiVersion", json_string(GR_NVCRE_GROUP "/" GR_NVCRE_VERSION));
    if (owner && !json_object_get(owner, "kind"))
        json_object_set_new(owner, "kind", json_string(GR_NVCRE_KIND_CERTIFICATION));
    rc = owner ? gr_kube_owner_ref_set(wf, owner, true, true, st->err) : GR_ENOMEM;
    json_decref(owner);
    if (rc != GR_OK) {
        json_decref(wf);
        return rc;
    }
    *out = wf;
    return GR_OK;
}

/* No usable node: InProgress WaitingForNodes for the discovery window (the
 * message written once, when the wait begins, with events then), then the
 * category fails (NodeDiscoveryError). capacity: NULL when no node matched,
 * else why the matching nodes cannot run the category. *waiting: the step
 * ends here. */
static int wait_for_nodes(step *st, json_t *cs, const json_t *target, const char *capacity,
                          const json_t *events, bool *waiting)
{
    char sel[512], left[32], msg[1536];
    int rc;
    json_t *status = status_of(st->cert_copy);
    *waiting = false;
    selector_text(target, sel, sizeof sel);
    int64_t since = waiting_since(st->cert_copy, st->in->now_ns);
    int64_t remain = since + GR_NVCRE_CERT_NODE_DISCOVERY_NS - st->in->now_ns;
    if (remain > 0) {
        *waiting = true;
        st->p->requeue_after_ns = GR_NVCRE_CERT_REQUEUE_NS;
        if (since != st->in->now_ns)
            return GR_OK; /* still waiting: the condition stays as written */
        go_duration(remain, left, sizeof left);
        if (capacity)
            snprintf(msg, sizeof msg, GR_NVCRE_MSG_CERT_WAITING_FOR_CAPACITY_FMT, sel, capacity,
                     left);
        else
            snprintf(msg, sizeof msg, GR_NVCRE_MSG_CERT_WAITING_FOR_NODES_FMT, sel, left);
        size_t i;
        json_t *e;
        json_array_foreach(events, i, e)
        {
            rc = event(st, json_string_value(json_object_get(e, "type")),
                       json_string_value(json_object_get(e, "reason")),
                       json_string_value(json_object_get(e, "message")));
            if (rc != GR_OK)
                return rc;
        }
        if ((rc = set_exclusive(st, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_WAITING_FOR_NODES,
                                msg)) != GR_OK)
            return rc;
        { /* the window starts now */
            json_t *ip = gr_kube_condition_find(json_object_get(status, "conditions"),
                                                GR_NVCRE_COND_IN_PROGRESS);
            char ts[GR_TIME_STR_MAX];
            gr_time_format_ns(st->in->now_ns, ts);
            json_object_set_new(ip, "lastTransitionTime", json_string(ts));
        }
        return GR_OK;
    }
    go_duration(GR_NVCRE_CERT_NODE_DISCOVERY_NS, left, sizeof left);
    if (capacity)
        snprintf(msg, sizeof msg, GR_NVCRE_MSG_CERT_NO_CAPACITY_FMT, sel, capacity, left);
    else
        snprintf(msg, sizeof msg, GR_NVCRE_MSG_CERT_NO_NODES_FMT, sel, left);
    if ((rc = fail_category(st, cs)) != GR_OK ||
        (rc = event(st, "Warning", GR_NVCRE_REASON_NODE_DISCOVERY_ERROR, msg)) != GR_OK)
        return rc;
    /* the next category gets its own window */
    return set_exclusive(st, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_NODE_DISCOVERY_ERROR, msg);
}

/* Auto-detection (gr_nvcre_detect.h) over the selected target nodes:
 * *spec_out is the Certification spec with the detected options laid under
 * the user's (a field the user set, globally or in the category, is never
 * replaced) and, when nodes were dropped, target.nodeNames = the rest. */
static int detect_category(step *st, const json_t *cat_item, const char *platform, const char *arch,
                           gr_nvcre_detect_result *res, json_t **spec_out)
{
    const json_t *spec = json_object_get(st->in->cert, "spec");
    const json_t *target = json_object_get(spec, "target");
    const json_t *copts = json_object_get(cat_item, "options");
    json_t *sel = json_array(), *popts = NULL;
    *spec_out = NULL;
    if (!sel)
        return gr_err_set(st->err, GR_ENOMEM, "certification: out of memory");
    const char *product = NULL;
    size_t i;
    json_t *n;
    json_array_foreach(st->in->nodes, i, n)
    {
        if (!node_selected(target, n))
            continue;
        if (json_array_append(sel, n)) {
            json_decref(sel);
            return gr_err_set(st->err, GR_ENOMEM, "certification: out of memory");
        }
        if (!product)
            product = label(n, "nvidia.com/gpu.product");
    }
    if (!product)
        product = json_string_value(
            json_object_get(json_object_get(target, "nodeSelector"), "nvidia.com/gpu.product"));
    int rc = gr_nvcre_catalog_platform_options(st->in->catalog, platform, arch, &popts, st->err);
    if (rc != GR_OK) {
        json_decref(sel);
        return rc;
    }
    gr_nvcre_detect_req req = {sel,
                               arch,
                               product,
                               spec,
                               copts,
                               popts,
                               gr_nvcre_catalog_arch_known(st->in->catalog, arch),
                               gr_nvcre_catalog_explicit_gpu_count(st->in->catalog, arch),
                               false};
    { /* does the entry request NICs? (dcgm diagnostics do not) */
        json_t *probe = json_pack("{s:s}", "nicResourceName", "probe"), *unused = NULL;
        gr_nvcre_catalog_req cr = {json_string_value(json_object_get(cat_item, "domain")),
                                   json_string_value(json_object_get(cat_item, "variant")),
                                   platform,
                                   arch,
                                   target,
                                   NULL,
                                   probe};
        gr_err perr;
        req.uses_nic =
            probe &&
            gr_nvcre_catalog_check_options(st->in->catalog, &cr, &unused, &perr) == GR_OK &&
            json_array_size(unused) == 0;
        json_decref(unused);
        json_decref(probe);
    }
    rc = gr_nvcre_detect(&req, res, st->err);
    json_decref(popts);
    json_decref(sel);
    if (rc != GR_OK)
        return rc;
    json_t *s = json_deep_copy(spec);
    if (!s)
        goto oom;
    const char *k;
    json_t *v;
    json_object_foreach(res->options, k, v)
    {
        if (json_object_get(s, k) || json_object_get(copts, k))
            continue;
        if (json_object_set(s, k, v))
            goto oom;
    }
    if (res->dropped) {
        json_t *t = json_is_object(target) ? json_deep_copy(target) : json_object();
        if (!t || json_object_set(t, "nodeNames", res->keep) || json_object_set_new(s, "target", t))
            goto oom;
    }
    *spec_out = s;
    return GR_OK;
oom:
    json_decref(s);
    gr_nvcre_detect_result_free(res);
    return gr_err_set(st->err, GR_ENOMEM, "certification: out of memory");
}

static int run_step(step *st)
{
    const json_t *cert = st->in->cert;
    const json_t *spec = json_object_get(cert, "spec");
    const json_t *cats = json_object_get(spec, "categories");
    const json_t *target = json_object_get(spec, "target");
    const char *cname =
        json_string_value(json_object_get(json_object_get(cert, "metadata"), "name"));
    const char *ns =
        json_string_value(json_object_get(json_object_get(cert, "metadata"), "namespace"));
    const char *uid = json_string_value(json_object_get(json_object_get(cert, "metadata"), "uid"));
    size_t total = json_array_size(cats);
    json_t *status = status_of(st->cert_copy);
    char msg[1024];
    int rc;

    /* terminal: nothing more to do */
    json_t *conds = json_object_get(status, "conditions");
    if (gr_kube_condition_is_true(conds, GR_NVCRE_COND_SUCCEEDED) ||
        gr_kube_condition_is_true(conds, GR_NVCRE_COND_FAILED))
        return GR_OK;

    /* categoryStatuses, one per category, in spec order */
    json_t *css = json_object_get(status, "categoryStatuses");
    if (!json_is_array(css) || json_array_size(css) != total) {
        css = json_array();
        size_t i;
        json_t *c;
        json_array_foreach(cats, i, c)
        {
            json_array_append_new(
                css, json_pack("{s:O,s:O,s:s}", "domain", json_object_get(c, "domain"), "variant",
                               json_object_get(c, "variant"), "status", "Pending"));
        }
        json_object_set_new(status, "categoryStatuses", css);
    }

    /* every category must exist before anything runs */
    size_t i;
    json_t *c;
    json_array_foreach(cats, i, c)
    {
        const char *d = json_string_value(json_object_get(c, "domain"));
        const char *v = json_string_value(json_object_get(c, "variant"));
        if (!gr_nvcre_catalog_has(st->in->catalog, d, v)) {
            snprintf(msg, sizeof msg, GR_NVCRE_MSG_CERT_UNKNOWN_CATEGORY_FMT, d ? d : "",
                     v ? v : "");
            size_t j;
            json_t *cs;
            json_array_foreach(css, j, cs) if ((rc = fail_category(st, cs)) != GR_OK) return rc;
            if ((rc = set_exclusive(st, GR_NVCRE_COND_FAILED, GR_NVCRE_REASON_CATEGORY_NOT_FOUND,
                                    msg)) != GR_OK)
                return rc;
            return event(st, "Warning", GR_NVCRE_REASON_CATEGORY_NOT_FOUND, msg);
        }
    }
    /* every option the user set must reach a workload */
    {
        gr_err oerr = {0};
        rc = gr_nvcre_cert_check_options(st->in->catalog, spec, &oerr);
        if (rc == GR_ENOMEM)
            return gr_err_set(st->err, rc, "%s", oerr.msg);
        if (rc != GR_OK) {
            snprintf(msg, sizeof msg, "%s", oerr.msg);
            size_t j;
            json_t *cs;
            json_array_foreach(css, j, cs) if ((rc = fail_category(st, cs)) != GR_OK) return rc;
            if ((rc = set_exclusive(st, GR_NVCRE_COND_FAILED, GR_NVCRE_REASON_BUILD_FAILED, msg)) !=
                GR_OK)
                return rc;
            return event(st, "Warning", GR_NVCRE_REASON_BUILD_FAILED, msg);
        }
    }

    json_array_foreach(cats, i, c)
    {
        json_t *cs = json_array_get(css, i);
        const char *cst = json_string_value(json_object_get(cs, "status"));
        const char *d = json_string_value(json_object_get(c, "domain"));
        const char *v = json_string_value(json_object_get(c, "variant"));
        if (cst && (!strcmp(cst, "Succeeded") || !strcmp(cst, "Failed")))
            continue;
        const char *ref =
            json_string_value(json_object_get(json_object_get(cs, "workflowRef"), "name"));
        if (ref) {
            json_t *wf = find_workflow(st->in->workflows, ref);
            if (!wf || !gr_kube_is_owned_by(wf, uid)) {
                snprintf(msg, sizeof msg, GR_NVCRE_MSG_CERT_WF_GONE_FMT, ref, d, v);
                if ((rc = fail_category(st, cs)) != GR_OK ||
                    (rc = event(st, "Warning", GR_NVCRE_REASON_WORKFLOW_FAILED, msg)) != GR_OK)
                    return rc;
                continue;
            }
            json_t *wc = json_object_get(json_object_get(wf, "status"), "conditions");
            if (gr_kube_condition_is_true(wc, GR_NVCRE_COND_SUCCEEDED) ||
                gr_kube_condition_is_true(wc, GR_NVCRE_COND_FAILED)) {
                bool ok = gr_kube_condition_is_true(wc, GR_NVCRE_COND_SUCCEEDED);
                json_object_set_new(cs, "status", json_string(ok ? "Succeeded" : "Failed"));
                copy_ref(cs, wf, "succeededNodesRef");
                copy_ref(cs, wf, "failedNodesRef");
                continue;
            }
            snprintf(msg, sizeof msg, GR_NVCRE_MSG_CERT_RUNNING_FMT, d, v, (int)i + 1, (int)total,
                     ref);
            json_object_set_new(cs, "status", json_string("InProgress"));
            st->p->requeue_after_ns = GR_NVCRE_CERT_REQUEUE_NS;
            return set_exclusive(st, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_WORKFLOW_RUNNING,
                                 msg);
        }
        /* start this category */
        char arch[32];
        const char *platform;
        size_t count;
        bool het;
        gr_nvcre_cert_detect(st->in->nodes, target, &platform, arch, sizeof arch, &count, &het);
        if (count == 0) {
            bool waiting;
            if ((rc = wait_for_nodes(st, cs, target, NULL, NULL, &waiting)) != GR_OK || waiting)
                return rc;
            continue;
        }
        if (!arch[0]) {
            if ((rc = fail_category(st, cs)) != GR_OK ||
                (rc = event(st, "Warning", GR_NVCRE_REASON_BUILD_FAILED,
                            GR_NVCRE_MSG_CERT_NO_ARCH)) != GR_OK)
                return rc;
            continue;
        }
        (void)het; /* the Workflow fails HeterogeneousPlatform itself (§2.3) */
        gr_nvcre_detect_result det;
        json_t *wspec = NULL;
        if ((rc = detect_category(st, c, platform ? platform : "onprem", arch, &det, &wspec)) !=
            GR_OK)
            return rc;
        if (det.fail[0]) {
            snprintf(msg, sizeof msg, "%s", det.fail);
            json_decref(wspec);
            gr_nvcre_detect_result_free(&det);
            if ((rc = fail_category(st, cs)) != GR_OK ||
                (rc = event(st, "Warning", GR_NVCRE_REASON_BUILD_FAILED, msg)) != GR_OK)
                return rc;
            continue;
        }
        if (json_array_size(det.keep) == 0) {
            char cap[256];
            snprintf(cap, sizeof cap, "%d nvidia.com/gpu", det.gpus_per_node);
            if (det.nic[0] && det.mlnx_per_node > 0) {
                size_t cl = strlen(cap);
                snprintf(cap + cl, sizeof cap - cl, " and %d %s", det.mlnx_per_node, det.nic);
            }
            bool waiting;
            rc = wait_for_nodes(st, cs, target, cap, det.events, &waiting);
            json_decref(wspec);
            gr_nvcre_detect_result_free(&det);
            if (rc != GR_OK || waiting)
                return rc;
            continue;
        }
        char name[GR_NVCRE_CERT_MAX_WORKFLOW_NAME + 1];
        gr_nvcre_cert_workflow_name(cname, d, v, spec, json_object_get(c, "options"), name);
        json_t *wref = json_pack("{s:s,s:s}", "name", name, "namespace", ns ? ns : "");
        json_t *existing = find_workflow(st->in->workflows, name);
        if (existing && !gr_kube_is_owned_by(existing, uid)) {
            json_decref(wref);
            json_decref(wspec);
            gr_nvcre_detect_result_free(&det);
            snprintf(msg, sizeof msg, GR_NVCRE_MSG_CERT_COLLISION_FMT, name, cname);
            if ((rc = fail_category(st, cs)) != GR_OK ||
                (rc = event(st, "Warning", GR_NVCRE_REASON_WORKFLOW_NAME_COLLISION, msg)) != GR_OK)
                return rc;
            continue;
        }
        if (!existing) {
            json_t *wf = NULL;
            rc = build_workflow(st, wspec, c, name, platform ? platform : "onprem", arch, &wf);
            if (rc == GR_OK) { /* detection events precede WorkflowCreated */
                size_t ei;
                json_t *e;
                json_array_foreach(det.events, ei, e) if (json_array_append(st->p->events, e)) rc =
                    gr_err_set(st->err, GR_ENOMEM, "certification: out of memory");
            }
            json_decref(wspec);
            wspec = NULL;
            gr_nvcre_detect_result_free(&det);
            if (rc == GR_ENOMEM) {
                json_decref(wf);
                json_decref(wref);
                return rc;
            }
            if (rc != GR_OK) {
                json_decref(wref);
                char bmsg[1024];
                snprintf(bmsg, sizeof bmsg, "%s", st->err ? st->err->msg : "build failed");
                if ((rc = fail_category(st, cs)) != GR_OK ||
                    (rc = event(st, "Warning", GR_NVCRE_REASON_BUILD_FAILED, bmsg)) != GR_OK)
                    return rc;
                continue;
            }
            st->p->create = wf;
        }
        json_decref(wspec);
        gr_nvcre_detect_result_free(&det);
        json_object_set_new(cs, "workflowRef", wref);
        json_object_set_new(cs, "status", json_string("InProgress"));
        snprintf(msg, sizeof msg, GR_NVCRE_MSG_CERT_WORKFLOW_CREATED_FMT, d, v, (int)i + 1,
                 (int)total);
        if ((rc = set_exclusive(st, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_WORKFLOW_CREATED,
                                msg)) != GR_OK)
            return rc;
        st->p->requeue_after_ns = GR_NVCRE_CERT_REQUEUE_NS;
        return existing ? GR_OK : event(st, "Normal", GR_NVCRE_REASON_WORKFLOW_CREATED, msg);
    }
    /* every category is done */
    bool failed = false;
    json_t *cs;
    json_array_foreach(css, i, cs)
    {
        const char *s = json_string_value(json_object_get(cs, "status"));
        if (s && !strcmp(s, "Failed"))
            failed = true;
    }
    if (failed) {
        if ((rc = set_exclusive(st, GR_NVCRE_COND_FAILED, GR_NVCRE_REASON_WORKFLOW_FAILED,
                                GR_NVCRE_MSG_CERT_FAILED)) != GR_OK)
            return rc;
        return event(st, "Warning", GR_NVCRE_REASON_WORKFLOW_FAILED, GR_NVCRE_MSG_CERT_FAILED);
    }
    if ((rc = set_exclusive(st, GR_NVCRE_COND_SUCCEEDED, GR_NVCRE_REASON_ALL_WORKFLOWS_SUCCEEDED,
                            GR_NVCRE_MSG_CERT_SUCCEEDED)) != GR_OK)
        return rc;
    return event(st, "Normal", GR_NVCRE_REASON_ALL_WORKFLOWS_SUCCEEDED,
                 GR_NVCRE_MSG_CERT_SUCCEEDED);
}

int gr_nvcre_cert_step(const gr_nvcre_cert_input *in, gr_nvcre_cert_plan *out, gr_err *err)
{
    memset(out, 0, sizeof *out);
    const json_t *meta = json_object_get(in->cert, "metadata");
    if (!json_string_value(json_object_get(meta, "name")) ||
        !json_string_value(json_object_get(meta, "uid")))
        return gr_err_set(err, GR_EINVAL,
                          "Certification: metadata.name and metadata.uid are "
                          "required");
    if (json_array_size(json_object_get(json_object_get(in->cert, "spec"), "categories")) == 0)
        return gr_err_set(err, GR_EINVAL,
                          "Certification spec.categories: list at least one {domain, variant}");
    gr_err local;
    step st = {in, out, json_deep_copy(in->cert), 0, err ? err : &local};
    out->events = json_array();
    if (!st.cert_copy || !out->events) {
        json_decref(st.cert_copy);
        gr_nvcre_cert_plan_free(out);
        return gr_err_set(err, GR_ENOMEM, "certification: out of memory");
    }
    json_t *g = json_object_get(meta, "generation");
    st.gen = json_is_integer(g) ? json_integer_value(g) : 0;
    int rc = run_step(&st);
    if (rc != GR_OK) {
        json_decref(st.cert_copy);
        gr_nvcre_cert_plan_free(out);
        return rc;
    }
    out->status = json_incref(status_of(st.cert_copy));
    out->status_changed = !json_equal(out->status, json_object_get(in->cert, "status"));
    json_decref(st.cert_copy);
    return GR_OK;
}

void gr_nvcre_cert_plan_free(gr_nvcre_cert_plan *p)
{
    if (!p)
        return;
    json_decref(p->status);
    json_decref(p->create);
    json_decref(p->events);
    memset(p, 0, sizeof *p);
}
