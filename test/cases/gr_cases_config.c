/* gr_cases_config.c — input_config.yaml of a reconcile case (pure). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_cases.h"
#include "gr_yaml.h"

typedef struct pctx {
    const char *file;
    gr_err *err;
} pctx;

static int bad(pctx *p, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(pctx *p, const char *path, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return gr_err_set(p->err, GR_EINVAL, "%s: %s: %s", p->file, path, what);
}

/* Every key of obj must be in known (NULL-terminated). */
static int check_keys(pctx *p, const char *path, const json_t *obj, const char *const *known)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)(uintptr_t)obj, key, v)
    {
        (void)v;
        bool ok = false;
        for (size_t i = 0; known[i]; i++)
            if (strcmp(key, known[i]) == 0)
                ok = true;
        if (!ok) {
            char list[256] = "";
            for (size_t i = 0; known[i]; i++) {
                if (i)
                    strncat(list, ", ", sizeof list - strlen(list) - 1);
                strncat(list, known[i], sizeof list - strlen(list) - 1);
            }
            return gr_err_set(p->err, GR_EINVAL, "%s: %s: unknown key \"%s\" (known: %s)", p->file,
                              path, key, list);
        }
    }
    return GR_OK;
}

static int need_object(pctx *p, const char *path, const json_t *v)
{
    if (!json_is_object(v))
        return gr_err_set(p->err, GR_EINVAL, "%s: %s: expected a mapping, got %s", p->file, path,
                          json_is_array(v) ? "a sequence" : "a scalar");
    return GR_OK;
}

/* Optional string member; *out stays NULL when absent or null. */
static int get_str(pctx *p, const char *path, const json_t *obj, const char *key, const char **out)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return GR_OK;
    if (!json_is_string(v))
        return gr_err_set(p->err, GR_EINVAL, "%s: %s.%s: expected a string; quote the value",
                          p->file, path, key);
    *out = json_string_value(v);
    return GR_OK;
}

static int get_bool(pctx *p, const char *path, const json_t *obj, const char *key, bool *out)
{
    json_t *v = json_object_get(obj, key);
    *out = false;
    if (!v || json_is_null(v))
        return GR_OK;
    if (!json_is_boolean(v))
        return gr_err_set(p->err, GR_EINVAL, "%s: %s%s%s: expected true or false", p->file, path,
                          *path ? "." : "", key);
    *out = json_is_true(v);
    return GR_OK;
}

/* Optional non-negative integer in [0, max]; *out = dflt when absent. */
static int get_long(pctx *p, const char *path, const json_t *obj, const char *key, long dflt,
                    long max, long *out)
{
    json_t *v = json_object_get(obj, key);
    *out = dflt;
    if (!v || json_is_null(v))
        return GR_OK;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
        return gr_err_set(p->err, GR_EINVAL, "%s: %s%s%s: expected an integer from 0 to %ld",
                          p->file, path, *path ? "." : "", key, max);
    *out = (long)json_integer_value(v);
    return GR_OK;
}

static int need_array(pctx *p, const char *path, const json_t *v, size_t *n)
{
    if (!json_is_array(v))
        return gr_err_set(p->err, GR_EINVAL, "%s: %s: expected a sequence (a YAML list)", p->file,
                          path);
    *n = json_array_size(v);
    if (*n > GR_CASES_MAX_ITEMS)
        return gr_err_set(p->err, GR_ETOOBIG, "%s: %s: %zu entries; at most %d are allowed",
                          p->file, path, *n, GR_CASES_MAX_ITEMS);
    return GR_OK;
}

static const char *const REF_KEYS[] = {"kind", "name", "namespace", NULL};

/* A ref: a mapping {kind, name[, namespace]} (plus the caller's extra keys). */
static int parse_ref(pctx *p, const char *path, const json_t *v, const char *const *keys,
                     gr_cases_ref *out)
{
    memset(out, 0, sizeof *out);
    if (json_is_string(v))
        return bad(p, path, "\"%s\" is a string; write a mapping {kind: ..., name: ...}",
                   json_string_value(v));
    int rc = need_object(p, path, v);
    if (rc == GR_OK)
        rc = check_keys(p, path, v, keys ? keys : REF_KEYS);
    if (rc == GR_OK)
        rc = get_str(p, path, v, "kind", &out->kind);
    if (rc == GR_OK)
        rc = get_str(p, path, v, "name", &out->name);
    if (rc == GR_OK)
        rc = get_str(p, path, v, "namespace", &out->namespace_);
    if (rc != GR_OK)
        return rc;
    if (!out->kind || !*out->kind)
        return bad(p, path, "kind is required (e.g. kind: Job)");
    if (!out->name || !*out->name)
        return bad(p, path, "name is required (the object's metadata.name)");
    return GR_OK;
}

static const char *const WAIT_KEYS[] = {"kind",   "name",         "namespace",       "condition",
                                        "reason", "restartCount", "failedNodeCount", NULL};

static int parse_wait(pctx *p, const char *path, const json_t *v, gr_cases_wait *w)
{
    memset(w, 0, sizeof *w);
    w->restart_count = -1;
    w->failed_node_count = -1;
    if (!v || json_is_null(v))
        return GR_OK;
    int rc = parse_ref(p, path, v, WAIT_KEYS, &w->ref);
    if (rc == GR_OK)
        rc = get_str(p, path, v, "condition", &w->condition);
    if (rc == GR_OK)
        rc = get_str(p, path, v, "reason", &w->reason);
    if (rc == GR_OK)
        rc = get_long(p, path, v, "restartCount", -1, 1000000, &w->restart_count);
    if (rc == GR_OK)
        rc = get_long(p, path, v, "failedNodeCount", -1, 1000000, &w->failed_node_count);
    if (rc != GR_OK)
        return rc;
    if (w->reason && !w->condition)
        return bad(p, path, "reason needs condition (the condition type whose reason to match)");
    w->set = true;
    return GR_OK;
}

static const char *const PATCH_KEYS[] = {"target", "status", "patch", NULL};

static int parse_steps(pctx *p, const json_t *v, gr_cases_config *cfg)
{
    size_t n;
    int rc = need_array(p, "steps", v, &n);
    if (rc != GR_OK)
        return rc;
    cfg->steps = calloc(n ? n : 1, sizeof *cfg->steps);
    if (!cfg->steps)
        return gr_err_set(p->err, GR_ENOMEM, "out of memory");
    cfg->nsteps = n;
    for (size_t i = 0; i < n; i++) {
        char path[64], ppath[96];
        const json_t *s = json_array_get(v, i);
        gr_cases_step *st = &cfg->steps[i];
        snprintf(path, sizeof path, "steps[%zu]", i);
        static const char *const STEP_KEYS[] = {"waitFor", "patches", NULL};
        if ((rc = need_object(p, path, s)) != GR_OK || (rc = check_keys(p, path, s, STEP_KEYS)))
            return rc;
        snprintf(ppath, sizeof ppath, "%s.waitFor", path);
        if ((rc = parse_wait(p, ppath, json_object_get(s, "waitFor"), &st->wait)) != GR_OK)
            return rc;
        const json_t *pa = json_object_get(s, "patches");
        if (!pa || json_is_null(pa))
            continue;
        size_t np;
        snprintf(ppath, sizeof ppath, "%s.patches", path);
        if ((rc = need_array(p, ppath, pa, &np)) != GR_OK)
            return rc;
        st->patches = calloc(np ? np : 1, sizeof *st->patches);
        if (!st->patches)
            return gr_err_set(p->err, GR_ENOMEM, "out of memory");
        st->npatches = np;
        for (size_t j = 0; j < np; j++) {
            const json_t *e = json_array_get(pa, j);
            snprintf(ppath, sizeof ppath, "%s.patches[%zu]", path, j);
            if ((rc = need_object(p, ppath, e)) != GR_OK ||
                (rc = check_keys(p, ppath, e, PATCH_KEYS)) != GR_OK)
                return rc;
            const json_t *t = json_object_get(e, "target");
            char tpath[128];
            snprintf(tpath, sizeof tpath, "%s.target", ppath);
            if (!t)
                return bad(p, ppath, "target is required ({kind, name[, namespace]})");
            if ((rc = parse_ref(p, tpath, t, NULL, &st->patches[j].target)) != GR_OK ||
                (rc = get_bool(p, ppath, e, "status", &st->patches[j].status)) != GR_OK)
                return rc;
            const json_t *mp = json_object_get(e, "patch");
            if (!json_is_object(mp))
                return bad(p, ppath,
                           "patch is required and must be a mapping (a JSON merge patch)");
            st->patches[j].patch = mp;
        }
    }
    return GR_OK;
}

static int parse_collect(pctx *p, const json_t *v, gr_cases_config *cfg)
{
    size_t n;
    int rc = need_array(p, "collect", v, &n);
    if (rc != GR_OK)
        return rc;
    cfg->collect = calloc(n ? n : 1, sizeof *cfg->collect);
    if (!cfg->collect)
        return gr_err_set(p->err, GR_ENOMEM, "out of memory");
    cfg->ncollect = n;
    for (size_t i = 0; i < n; i++) {
        const json_t *k = json_array_get(v, i);
        if (!json_is_string(k) || !json_string_length(k)) {
            char path[64];
            snprintf(path, sizeof path, "collect[%zu]", i);
            return bad(p, path, "expected a kind name (e.g. ConfigMap or Job.nvcre.nvidia.com)");
        }
        cfg->collect[i] = json_string_value(k);
    }
    return GR_OK;
}

static const char *const GOODPUT_PREFIXES[] = {"nvcre_goodput_"};
static const char *const BANDWIDTH_PREFIXES[] = {"nvcre_nccl_"};
static const char *const JOB_PREFIXES[] = {"nvcre_job_", "nvcre_hardware_", "nvcre_workflow_status",
                                           "nvcre_certification_status",
                                           "nvcre_workload_created_total"};
static const char *const TOPOLOGY_PREFIXES[] = {"nvcre_topology_"};

static int parse_metrics(pctx *p, const char *key, const json_t *v, const char *const *dflt,
                         size_t ndflt, gr_cases_metrics *m)
{
    memset(m, 0, sizeof *m);
    if (!v || json_is_null(v) || json_is_false(v))
        return GR_OK;
    if (json_is_true(v)) {
        m->set = true;
        m->prefixes = calloc(ndflt, sizeof *m->prefixes);
        if (!m->prefixes)
            return gr_err_set(p->err, GR_ENOMEM, "out of memory");
        for (size_t i = 0; i < ndflt; i++)
            m->prefixes[i] = dflt[i];
        m->nprefixes = ndflt;
        return GR_OK;
    }
    size_t n;
    if (!json_is_array(v))
        return bad(p, key, "expected true/false or a list of metric-name prefixes");
    int rc = need_array(p, key, v, &n);
    if (rc != GR_OK)
        return rc;
    m->prefixes = calloc(n ? n : 1, sizeof *m->prefixes);
    if (!m->prefixes)
        return gr_err_set(p->err, GR_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(v, i);
        if (!json_is_string(s) || !json_string_length(s))
            return bad(p, key, "every entry must be a metric-name prefix such as nvcre_goodput_");
        m->prefixes[i] = json_string_value(s);
    }
    m->nprefixes = n;
    m->set = true;
    return GR_OK;
}

static const char *const EVENT_KEYS[] = {"involvedKind", "involvedName", "namespace", "expect",
                                         NULL};
static const char *const EXPECT_KEYS[] = {"type", "reason", NULL};

static int parse_events(pctx *p, const json_t *v, gr_cases_config *cfg)
{
    size_t n;
    int rc = need_array(p, "events", v, &n);
    if (rc != GR_OK)
        return rc;
    cfg->events = calloc(n ? n : 1, sizeof *cfg->events);
    if (!cfg->events)
        return gr_err_set(p->err, GR_ENOMEM, "out of memory");
    cfg->nevents = n;
    for (size_t i = 0; i < n; i++) {
        char path[64], epath[96];
        const json_t *e = json_array_get(v, i);
        gr_cases_event_case *ec = &cfg->events[i];
        snprintf(path, sizeof path, "events[%zu]", i);
        if ((rc = need_object(p, path, e)) != GR_OK ||
            (rc = check_keys(p, path, e, EVENT_KEYS)) != GR_OK ||
            (rc = get_str(p, path, e, "involvedKind", &ec->involved_kind)) != GR_OK ||
            (rc = get_str(p, path, e, "involvedName", &ec->involved_name)) != GR_OK ||
            (rc = get_str(p, path, e, "namespace", &ec->namespace_)) != GR_OK)
            return rc;
        if (!ec->involved_kind || !ec->involved_name)
            return bad(p, path, "involvedKind and involvedName are required");
        const json_t *ex = json_object_get(e, "expect");
        size_t ne;
        snprintf(epath, sizeof epath, "%s.expect", path);
        if (!ex)
            return bad(p, path, "expect is required (a list of {type, reason})");
        if ((rc = need_array(p, epath, ex, &ne)) != GR_OK)
            return rc;
        ec->expect = calloc(ne ? ne : 1, sizeof *ec->expect);
        if (!ec->expect)
            return gr_err_set(p->err, GR_ENOMEM, "out of memory");
        ec->nexpect = ne;
        for (size_t j = 0; j < ne; j++) {
            const json_t *x = json_array_get(ex, j);
            snprintf(epath, sizeof epath, "%s.expect[%zu]", path, j);
            if ((rc = need_object(p, epath, x)) != GR_OK ||
                (rc = check_keys(p, epath, x, EXPECT_KEYS)) != GR_OK ||
                (rc = get_str(p, epath, x, "type", &ec->expect[j].type)) != GR_OK ||
                (rc = get_str(p, epath, x, "reason", &ec->expect[j].reason)) != GR_OK)
                return rc;
            if (!ec->expect[j].reason || !*ec->expect[j].reason)
                return bad(p, epath, "reason is required");
            const char *t = ec->expect[j].type;
            if (t && strcmp(t, "Normal") != 0 && strcmp(t, "Warning") != 0)
                return bad(p, epath, "type \"%s\" is not Normal or Warning", t);
        }
    }
    return GR_OK;
}

static const char *const GEN_KEYS[] = {"count",       "labels",        "providerID",
                                       "allocatable", "allocatableOf", NULL};

/* A mapping of resource name: quantity string (status.allocatable). */
static int check_quantities(pctx *p, const char *path, const json_t *m)
{
    if (!json_is_object(m))
        return bad(p, path, "expected a mapping of resource: quantity");
    const char *k;
    json_t *q;
    json_object_foreach((json_t *)(uintptr_t)m, k, q)
    {
        if (!json_is_string(q))
            return bad(p, path, "resource \"%s\" must have a quantity string; quote it", k);
    }
    return GR_OK;
}

static int parse_generate(pctx *p, const json_t *v, gr_cases_config *cfg)
{
    int rc = need_object(p, "generateNodes", v);
    if (rc == GR_OK)
        rc = check_keys(p, "generateNodes", v, GEN_KEYS);
    if (rc == GR_OK)
        rc = get_long(p, "generateNodes", v, "count", -1, GR_CASES_MAX_NODES, &cfg->node_count);
    if (rc == GR_OK)
        rc = get_str(p, "generateNodes", v, "providerID", &cfg->provider_id);
    if (rc != GR_OK)
        return rc;
    if (cfg->node_count < 1)
        return bad(p, "generateNodes.count", "required: how many Nodes to create (1..1000)");
    const json_t *l = json_object_get(v, "labels");
    if (l && !json_is_null(l)) {
        if (!json_is_object(l))
            return bad(p, "generateNodes.labels", "expected a mapping of label: value");
        const char *k;
        json_t *lv;
        json_object_foreach((json_t *)(uintptr_t)l, k, lv)
        {
            if (!json_is_string(lv))
                return bad(p, "generateNodes.labels",
                           "label \"%s\" must have a string value; quote it", k);
        }
        cfg->node_labels = l;
    }
    const json_t *a = json_object_get(v, "allocatable");
    if (a && !json_is_null(a)) {
        if ((rc = check_quantities(p, "generateNodes.allocatable", a)) != GR_OK)
            return rc;
        cfg->node_allocatable = a;
    }
    const json_t *ao = json_object_get(v, "allocatableOf");
    if (ao && !json_is_null(ao)) {
        if (!json_is_object(ao))
            return bad(p, "generateNodes.allocatableOf",
                       "expected a mapping of node index (\"0\", \"1\", ...): resources");
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)(uintptr_t)ao, k, m)
        {
            char *end;
            long idx = strtol(k, &end, 10);
            if (!*k || *end || idx < 0 || idx >= cfg->node_count)
                return bad(p, "generateNodes.allocatableOf",
                           "key \"%s\" is not a node index 0..%ld", k, cfg->node_count - 1);
            if ((rc = check_quantities(p, "generateNodes.allocatableOf", m)) != GR_OK)
                return rc;
        }
        cfg->node_allocatable_of = ao;
    }
    cfg->generate_nodes = true;
    return GR_OK;
}

static int parse_delete(pctx *p, const json_t *v, gr_cases_config *cfg)
{
    size_t n;
    static const char *const DEL_KEYS[] = {"kind", "name", "namespace", "stripFinalizers", NULL};
    int rc = need_array(p, "deleteAfterWait", v, &n);
    if (rc != GR_OK)
        return rc;
    cfg->delete_after_wait = calloc(n ? n : 1, sizeof *cfg->delete_after_wait);
    if (!cfg->delete_after_wait)
        return gr_err_set(p->err, GR_ENOMEM, "out of memory");
    cfg->ndelete = n;
    for (size_t i = 0; i < n; i++) {
        char path[64];
        const json_t *d = json_array_get(v, i);
        snprintf(path, sizeof path, "deleteAfterWait[%zu]", i);
        if ((rc = parse_ref(p, path, d, DEL_KEYS, &cfg->delete_after_wait[i].ref)) != GR_OK ||
            (rc = get_bool(p, path, d, "stripFinalizers",
                           &cfg->delete_after_wait[i].strip_finalizers)) != GR_OK)
            return rc;
    }
    return GR_OK;
}

static const char *const TOP_KEYS[] = {"waitFor",
                                       "steps",
                                       "collect",
                                       "collectMetrics",
                                       "collectBandwidthMetrics",
                                       "collectJobMetrics",
                                       "collectTopologyMetrics",
                                       "events",
                                       "generateNodes",
                                       "verifySpecImmutable",
                                       "verifyFrozenGoodput",
                                       "deleteAfterWait",
                                       "waitForDeletion",
                                       "rejectWorkflowCreates",
                                       "verifyNodePollEvents",
                                       "verifyCheckpointEvents",
                                       "timeoutSeconds",
                                       NULL};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int parse_doc(pctx *p, gr_cases_config *cfg)
{
    json_t *d = cfg->doc;
    int rc;
    if (json_is_null(d))
        return GR_OK;
    if (!json_is_object(d))
        return bad(p, "(top level)", "expected a mapping of the keys in docs/reconcile-cases.md");
    if ((rc = check_keys(p, "(top level)", d, TOP_KEYS)) != GR_OK ||
        (rc = parse_wait(p, "waitFor", json_object_get(d, "waitFor"), &cfg->wait)) != GR_OK)
        return rc;
    const json_t *v;
    if ((v = json_object_get(d, "steps")) && !json_is_null(v) && (rc = parse_steps(p, v, cfg)))
        return rc;
    if ((v = json_object_get(d, "collect")) && !json_is_null(v) && (rc = parse_collect(p, v, cfg)))
        return rc;
    if ((rc = parse_metrics(p, "collectMetrics", json_object_get(d, "collectMetrics"),
                            GOODPUT_PREFIXES, NELEM(GOODPUT_PREFIXES), &cfg->metrics)) ||
        (rc = parse_metrics(p, "collectBandwidthMetrics",
                            json_object_get(d, "collectBandwidthMetrics"), BANDWIDTH_PREFIXES,
                            NELEM(BANDWIDTH_PREFIXES), &cfg->bandwidth_metrics)) ||
        (rc = parse_metrics(p, "collectJobMetrics", json_object_get(d, "collectJobMetrics"),
                            JOB_PREFIXES, NELEM(JOB_PREFIXES), &cfg->job_metrics)) ||
        (rc = parse_metrics(p, "collectTopologyMetrics",
                            json_object_get(d, "collectTopologyMetrics"), TOPOLOGY_PREFIXES,
                            NELEM(TOPOLOGY_PREFIXES), &cfg->topology_metrics)))
        return rc;
    if ((v = json_object_get(d, "events")) && !json_is_null(v) && (rc = parse_events(p, v, cfg)))
        return rc;
    if ((v = json_object_get(d, "generateNodes")) && !json_is_null(v) &&
        (rc = parse_generate(p, v, cfg)))
        return rc;
    if ((rc = get_bool(p, "", d, "verifySpecImmutable", &cfg->verify_spec_immutable)))
        return rc;
    if ((v = json_object_get(d, "verifyFrozenGoodput")) && !json_is_null(v)) {
        static const char *const FROZEN_KEYS[] = {"mode", NULL};
        const char *mode = NULL;
        if ((rc = need_object(p, "verifyFrozenGoodput", v)) ||
            (rc = check_keys(p, "verifyFrozenGoodput", v, FROZEN_KEYS)) ||
            (rc = get_str(p, "verifyFrozenGoodput", v, "mode", &mode)))
            return rc;
        if (mode && strcmp(mode, "strip") == 0)
            cfg->frozen_goodput = GR_CASES_FROZEN_STRIP;
        else if (!mode || strcmp(mode, "intact") == 0)
            cfg->frozen_goodput = GR_CASES_FROZEN_INTACT;
        else
            return bad(p, "verifyFrozenGoodput.mode", "\"%s\" is not strip or intact", mode);
    }
    if ((v = json_object_get(d, "deleteAfterWait")) && !json_is_null(v) &&
        (rc = parse_delete(p, v, cfg)))
        return rc;
    if ((rc = get_bool(p, "", d, "waitForDeletion", &cfg->wait_for_deletion)) ||
        (rc = get_bool(p, "", d, "rejectWorkflowCreates", &cfg->reject_workflow_creates)) ||
        (rc = get_bool(p, "", d, "verifyNodePollEvents", &cfg->verify_node_poll_events)) ||
        (rc = get_bool(p, "", d, "verifyCheckpointEvents", &cfg->verify_checkpoint_events)))
        return rc;
    if ((rc = get_long(p, "", d, "timeoutSeconds", GR_CASES_DEFAULT_TIMEOUT_S,
                       GR_CASES_MAX_TIMEOUT_S, &cfg->timeout_s)))
        return rc;
    if (cfg->timeout_s == 0)
        return bad(p, "timeoutSeconds", "must be at least 1");
    if (cfg->wait_for_deletion && cfg->ndelete == 0)
        return bad(p, "waitForDeletion", "needs deleteAfterWait (the objects to wait for)");
    if (cfg->verify_spec_immutable && !cfg->wait.set)
        return bad(p, "verifySpecImmutable", "needs waitFor (the object whose spec is probed)");
    if ((cfg->verify_node_poll_events || cfg->verify_checkpoint_events) && !cfg->wait.set)
        return bad(p,
                   cfg->verify_node_poll_events ? "verifyNodePollEvents" : "verifyCheckpointEvents",
                   "needs waitFor (the object whose events are checked)");
    return GR_OK;
}

int gr_cases_config_parse(const char *text, size_t len, const char *name, gr_cases_config *cfg,
                          gr_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->timeout_s = GR_CASES_DEFAULT_TIMEOUT_S;
    cfg->wait.restart_count = cfg->wait.failed_node_count = -1;
    pctx p = {name ? name : "input_config.yaml", err};
    if (len > GR_CASES_MAX_CONFIG_BYTES)
        return gr_err_set(err, GR_ETOOBIG, "%s: %zu bytes; at most %zu are allowed", p.file, len,
                          GR_CASES_MAX_CONFIG_BYTES);
    int rc = gr_yaml_load_one(text, len, p.file, &cfg->doc, err);
    if (rc != GR_OK)
        return rc;
    rc = parse_doc(&p, cfg);
    if (rc != GR_OK)
        gr_cases_config_free(cfg);
    return rc;
}

void gr_cases_config_free(gr_cases_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->nsteps; i++)
        free(cfg->steps[i].patches);
    free(cfg->steps);
    free(cfg->collect);
    free((void *)cfg->metrics.prefixes);
    free((void *)cfg->bandwidth_metrics.prefixes);
    free((void *)cfg->job_metrics.prefixes);
    free((void *)cfg->topology_metrics.prefixes);
    for (size_t i = 0; i < cfg->nevents; i++)
        free(cfg->events[i].expect);
    free(cfg->events);
    free(cfg->delete_after_wait);
    json_decref(cfg->doc);
    memset(cfg, 0, sizeof *cfg);
}
