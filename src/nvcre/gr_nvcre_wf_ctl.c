/*
 * gr_nvcre_wf_ctl.c — the Workflow controller (gr_nvcre_wf_ctl.h). All
 * decisions come from gr_nvcre_wf.h; this file reads the caches, writes
 * objects and status, and records events.
 */
#include "gr_nvcre_wf_ctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gr_duration.h"
#include "gr_json.h"
#include "gr_kube_validate.h"
#include "gr_log.h"
#include "gr_nvcre_types.h"
#include "gr_nvcre_wf.h"
#include "gr_nvcre_wf_diag.h"
#include "gr_time.h"

#define MOD "workflow-controller"

/* The label selector of the first pass's Node list: a target's
 * nodeSelector past this size lists every Node instead. */
#define GR_NVCRE_WF_SELECTOR_MAX (16 * 1024)

static const gr_kube_gvr GVR_WORKFLOWS = {GR_NVCRE_GROUP, GR_NVCRE_VERSION,
                                          GR_NVCRE_PLURAL_WORKFLOWS};
static const gr_kube_gvr GVR_JOBS = {GR_NVCRE_GROUP, GR_NVCRE_VERSION, GR_NVCRE_PLURAL_JOBS};
static const gr_kube_gvr GVR_PVS = {"", "v1", "persistentvolumes"};
static const gr_kube_gvr GVR_PODS = {"", "v1", "pods"};
static const gr_kube_gvr GVR_BMS = {GR_NVCRE_GROUP, GR_NVCRE_VERSION,
                                    GR_NVCRE_PLURAL_BANDWIDTH_MEASUREMENTS};

struct gr_nvcre_wf_ctl {
    gr_kube_mgr *m;
    gr_kube_client *c;
    gr_kube_cache *workflows, *jobs; /* no Node cache: the first pass lists Nodes live */
    gr_kube_ctl *ctl;
    gr_kube_events *ev;
    int64_t requeue_ns;
    void (*observe)(void *ctx, int64_t wall_ns, int64_t cpu_ns);
    void *observe_ctx;
};

static const char *sget(const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : "";
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static json_t *now_str(void)
{
    char b[GR_TIME_STR_MAX];
    gr_time_format_ns(now_ns() / 1000000000LL * 1000000000LL, b);
    return json_string(b);
}

static json_t *obj_get(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_object(v)) {
        v = json_object();
        json_object_set_new(o, k, v);
    }
    return v;
}

/* ---------------------------------------------------------- conditions */

/* Exclusive InProgress/Succeeded/Failed: `type` True with reason/message,
 * the others False/NotApplicable; transition time kept when unchanged.
 * Returns 1 when the True condition changed (an event is due). */
static int set_exclusive(json_t *status, const char *type, const char *reason, const char *msg,
                         json_int_t gen)
{
    json_t *conds = json_object_get(status, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    const char *types[3] = {GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_COND_SUCCEEDED,
                            GR_NVCRE_COND_FAILED};
    int changed = 0;
    json_t *fresh = json_array();
    for (int i = 0; i < 3; i++) {
        int active = !strcmp(types[i], type);
        const char *st = active ? "True" : "False";
        const char *rs = active ? reason : GR_NVCRE_REASON_NOT_APPLICABLE;
        const char *ms = active ? msg : "";
        json_t *old = NULL;
        size_t j;
        json_t *c;
        json_array_foreach(conds, j, c) if (!strcmp(sget(c, "type"), types[i])) old = c;
        json_t *ltt = old && !strcmp(sget(old, "status"), st)
                          ? json_incref(json_object_get(old, "lastTransitionTime"))
                          : now_str();
        if (active && (!old || strcmp(sget(old, "status"), "True") ||
                       strcmp(sget(old, "reason"), rs) || strcmp(sget(old, "message"), ms)))
            changed = 1;
        json_array_append_new(fresh,
                              json_pack("{s:s,s:s,s:s,s:s,s:o,s:I}", "type", types[i], "status", st,
                                        "reason", rs, "message", ms, "lastTransitionTime",
                                        ltt ? ltt : now_str(), "observedGeneration", gen));
    }
    size_t j;
    json_t *c;
    json_array_foreach(conds, j, c)
    {
        if (!gr_nvcre_condition_is_exclusive(sget(c, "type")))
            json_array_append(fresh, c);
    }
    json_object_set_new(status, "conditions", fresh);
    return changed;
}

static void set_additive(json_t *status, const char *type, const char *reason, const char *msg,
                         json_int_t gen)
{
    json_t *conds = json_object_get(status, "conditions");
    size_t j;
    json_t *c;
    json_array_foreach(conds, j, c) if (!strcmp(sget(c, "type"), type)) return;
    json_array_append_new(conds,
                          json_pack("{s:s,s:s,s:s,s:s,s:o,s:I}", "type", type, "status", "True",
                                    "reason", reason, "message", msg, "lastTransitionTime",
                                    now_str(), "observedGeneration", gen));
}

static int cond_true(const json_t *obj, const char *type, const char **reason)
{
    size_t j;
    json_t *c;
    json_array_foreach(gr_json_ptr_get(obj, "/status/conditions"), j, c)
    {
        if (!strcmp(sget(c, "type"), type) && !strcmp(sget(c, "status"), "True")) {
            if (reason)
                *reason = sget(c, "reason");
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ status write */

/* Write the status computed from `wf` (as read from the cache) with wf's
 * resourceVersion: a Workflow changed since (a newer status written by a
 * reconcile that saw fresher state) makes the API server answer 409, and
 * the key is retried once the cache has caught up. A status recomputed from
 * a stale read therefore never overwrites a newer one. */
static int write_status(gr_nvcre_wf_ctl *c, const json_t *wf, json_t *status, gr_err *err)
{
    if (gr_json_equal(json_object_get(wf, "status"), status))
        return GR_OK;
    json_t *obj = json_deep_copy(wf);
    if (!obj)
        return gr_err_set(err, GR_ENOMEM, "workflow status: out of memory");
    json_object_set(obj, "status", status);
    gr_kube_status st;
    const char *ns = sget(json_object_get(wf, "metadata"), "namespace");
    int rc = gr_kube_update_status(c->c, &GVR_WORKFLOWS, ns, obj, NULL, NULL, &st, err);
    json_decref(obj);
    if (rc != GR_OK && st.reason == GR_KUBE_REASON_CONFLICT)
        return gr_err_set(err, GR_ECONFLICT,
                          "Workflow %s/%s changed since it was read; retrying with a fresh copy",
                          ns, sget(json_object_get(wf, "metadata"), "name"));
    return rc;
}

/* core/v1 Events. The recorder plans the body (aggregation, truncation);
 * we send it to the core group ourselves: gr_kube_event() posts core/v1
 * bodies to events.k8s.io, which the API server refuses (400). */
static const gr_kube_gvr GVR_CORE_EVENTS = {"", "v1", "events"};

static void emit(gr_nvcre_wf_ctl *c, const json_t *obj, const char *type, const char *reason,
                 const char *msg)
{
    gr_err e = {0};
    json_t *body = NULL;
    bool create = false;
    const char *ns = NULL, *name = NULL;
    int rc = gr_kube_events_plan(c->ev, obj, type, reason, msg, now_ns(), &body, &create, &ns,
                                 &name, &e);
    if (rc == GR_OK) {
        gr_kube_status st;
        if (create)
            rc = gr_kube_create(c->c, &GVR_CORE_EVENTS, ns, body, NULL, NULL, &st, &e);
        else
            rc = gr_kube_patch(c->c, &GVR_CORE_EVENTS, ns, name, GR_KUBE_PATCH_MERGE, body, NULL,
                               NULL, &st, &e);
    }
    json_decref(body);
    if (rc != GR_OK)
        gr_log(GR_LOG_WARN, MOD, "event failed", GR_KV_STR("reason", reason),
               GR_KV_STR("error", e.msg), GR_KV_END);
}

static void emit_all(gr_nvcre_wf_ctl *c, const json_t *wf, const json_t *events)
{
    size_t i;
    json_t *e;
    json_array_foreach(events, i, e)
        emit(c, wf, sget(e, "type"), sget(e, "reason"), sget(e, "message"));
}

static int fail_wf(gr_nvcre_wf_ctl *c, const json_t *wf, json_t *status, const char *reason,
                   const char *msg, gr_err *err)
{
    json_int_t gen = json_integer_value(gr_json_ptr_get(wf, "/metadata/generation"));
    int ch = set_exclusive(status, GR_NVCRE_COND_FAILED, reason, msg, gen);
    int rc = write_status(c, wf, status, err);
    if (rc == GR_OK && ch)
        emit(c, wf, "Warning", reason, msg);
    return rc;
}

/* ----------------------------------------------------------- dependencies */

static int gvr_of(const json_t *obj, char *group, size_t gsz, char *version, size_t vsz,
                  char *plural, size_t psz)
{
    const char *av = sget(obj, "apiVersion"), *kind = sget(obj, "kind");
    const char *slash = strchr(av, '/');
    if (slash) {
        snprintf(group, gsz, "%.*s", (int)(slash - av), av);
        snprintf(version, vsz, "%s", slash + 1);
    } else {
        snprintf(group, gsz, "%s", "");
        snprintf(version, vsz, "%s", av);
    }
    size_t n = strlen(kind), i;
    if (!n || n + 3 > psz)
        return GR_EINVAL;
    for (i = 0; i < n; i++)
        plural[i] = (char)(kind[i] >= 'A' && kind[i] <= 'Z' ? kind[i] - 'A' + 'a' : kind[i]);
    plural[i] = 0;
    /* English plural of the kinds a Workflow uses (Kubernetes' default). */
    if (plural[i - 1] == 's')
        strcat(plural, "es");
    else if (plural[i - 1] == 'y')
        strcpy(plural + i - 1, "ies");
    else
        strcat(plural, "s");
    return GR_OK;
}

/* Create (or adopt) dependencies in order. Workflow scope: group NULL.
 * Job scope: refs also carry groupName and iteration. Each object gets the
 * label nvcre.nvidia.com/workflow, the workflow-uid annotation and (when
 * namespaced) the Workflow as controller owner (job-scoped ones are handed
 * to their Job by own_job_deps() once it exists). An existing object is
 * adopted when it carries this Workflow's uid annotation; one that is being
 * deleted sets *not_ready (retry later); any other is a name collision. */
static int ensure_deps(gr_nvcre_wf_ctl *c, const json_t *wf, const json_t *deps, json_t *refs,
                       const char *group, int iteration, int *not_ready, const char **reason,
                       gr_err *err)
{
    const json_t *md = json_object_get(wf, "metadata");
    const char *ns = sget(md, "namespace"), *wname = sget(md, "name"), *uid = sget(md, "uid");
    size_t i;
    json_t *d;
    json_array_foreach(deps, i, d)
    {
        char g[128], v[64], p[128];
        if (gvr_of(d, g, sizeof(g), v, sizeof(v), p, sizeof(p)) != GR_OK) {
            *reason = GR_NVCRE_REASON_DEPENDENCY_CREATION_ERROR;
            return gr_err_set(err, GR_ESTATE, "dependencies[%zu]: needs apiVersion and kind", i);
        }
        gr_kube_gvr gvr = {g, v, p};
        json_t *obj = NULL;
        gr_err derr = {0};
        if (gr_nvcre_wf_dependency_object(wf, d, &obj, &derr) != GR_OK) {
            *reason = GR_NVCRE_REASON_DEPENDENCY_CREATION_ERROR;
            return gr_err_set(err, GR_ESTATE, "dependencies[%zu]: %s", i, derr.msg);
        }
        json_t *om = json_object_get(obj, "metadata");
        char dname[256];
        snprintf(dname, sizeof(dname), "%s", sget(om, "name"));
        int cluster_scoped = !strncmp(sget(d, "kind"), "Cluster", 7);
        gr_kube_status st;
        int rc = gr_kube_create(c->c, &gvr, cluster_scoped ? NULL : ns, obj, NULL, NULL, &st, err);
        if (rc != GR_OK && st.reason == GR_KUBE_REASON_ALREADY_EXISTS) {
            json_t *have = NULL;
            rc = gr_kube_get(c->c, &gvr, cluster_scoped ? NULL : ns, dname, NULL, &have, &st, err);
            const char *hu =
                sget(gr_json_ptr_get(have, "/metadata/annotations"), GR_NVCRE_ANN_WORKFLOW_UID);
            int deleting = rc == GR_OK && gr_json_ptr_get(have, "/metadata/deletionTimestamp");
            int owned = rc == GR_OK && !strcmp(hu, uid);
            json_decref(have);
            if (deleting || rc == GR_ENOTFOUND) {
                /* The previous owner's copy is going away: try again later. */
                json_decref(obj);
                *not_ready = 1;
                return GR_OK;
            }
            if (!owned) {
                json_decref(obj);
                *reason = GR_NVCRE_REASON_DEPENDENCY_NAME_COLLISION;
                return gr_err_set(err, GR_ESTATE, GR_NVCRE_WF_MSG_DEP_COLLISION_FMT,
                                  sget(d, "kind"), dname, wname);
            }
            rc = GR_OK;
        }
        if (rc != GR_OK) {
            json_decref(obj);
            if (st.reason != GR_KUBE_REASON_INVALID && st.reason != GR_KUBE_REASON_FORBIDDEN &&
                st.reason != GR_KUBE_REASON_NOT_FOUND)
                return rc; /* transient: retried with backoff */
            *reason = GR_NVCRE_REASON_DEPENDENCY_CREATION_ERROR;
            char m[GR_ERR_MSG_MAX];
            snprintf(m, sizeof(m), "%s", err ? err->msg : "");
            return gr_err_set(err, GR_ESTATE, "dependency %s \"%s\": %s", sget(d, "kind"), dname,
                              m);
        }
        json_t *ref =
            json_pack("{s:s,s:s,s:s,s:s}", "apiVersion", sget(d, "apiVersion"), "kind",
                      sget(d, "kind"), "name", dname, "scope", group ? "job" : "workflow");
        if (!cluster_scoped)
            json_object_set_new(ref, "namespace", json_string(ns));
        if (group) {
            json_object_set_new(ref, "groupName", json_string(group));
            json_object_set_new(ref, "iteration", json_integer(iteration));
        }
        /* Idempotent: one ref per object (names compared first: cheap). */
        size_t k;
        json_t *r;
        int dup = 0;
        json_array_foreach(refs, k, r)
        {
            if (!strcmp(sget(r, "name"), dname) && json_equal(r, ref)) {
                dup = 1;
                break;
            }
        }
        if (!dup)
            json_array_append(refs, ref);
        json_decref(ref);
        json_decref(obj);
    }
    return GR_OK;
}

/* Hand a group's job-scoped dependencies to its Job (controller owner), so
 * that deleting the Job lets the garbage collector take them too. */
static void own_job_deps(gr_nvcre_wf_ctl *c, const json_t *refs, const char *group, int iteration,
                         const json_t *job)
{
    const json_t *jm = json_object_get(job, "metadata");
    json_t *patch = json_pack("{s:{s:[{s:s,s:s,s:s,s:s,s:b,s:b}]}}", "metadata", "ownerReferences",
                              "apiVersion", GR_NVCRE_API_VERSION, "kind", GR_NVCRE_KIND_JOB, "name",
                              sget(jm, "name"), "uid", sget(jm, "uid"), "controller", 1,
                              "blockOwnerDeletion", 1);
    size_t i;
    json_t *r;
    json_array_foreach(refs, i, r)
    {
        if (strcmp(sget(r, "scope"), "job") || strcmp(sget(r, "groupName"), group) ||
            json_integer_value(json_object_get(r, "iteration")) != iteration ||
            !*sget(r, "namespace"))
            continue;
        char g[128], v[64], p[128];
        if (gvr_of(r, g, sizeof(g), v, sizeof(v), p, sizeof(p)) != GR_OK)
            continue;
        gr_kube_gvr gvr = {g, v, p};
        gr_kube_status st;
        gr_err e = {0};
        if (gr_kube_patch(c->c, &gvr, sget(r, "namespace"), sget(r, "name"), GR_KUBE_PATCH_MERGE,
                          patch, NULL, NULL, &st, &e) != GR_OK)
            gr_log(GR_LOG_WARN, MOD, "handing a dependency to its Job failed",
                   GR_KV_STR("name", sget(r, "name")), GR_KV_STR("error", e.msg), GR_KV_END);
    }
    json_decref(patch);
}

/* Delete one dependency named by a ref when this Workflow owns it (uid
 * annotation), with a UID precondition. A PersistentVolumeClaim's bound
 * volume is stamped first so that its reclaim policy can be fixed up once
 * it is Released (reclaim_pvs()). */
static void delete_dep_ref(gr_nvcre_wf_ctl *c, const json_t *wf, const json_t *r)
{
    char g[128], v[64], p[128];
    if (gvr_of(r, g, sizeof(g), v, sizeof(v), p, sizeof(p)) != GR_OK)
        return;
    gr_kube_gvr gvr = {g, v, p};
    json_t *have = NULL;
    gr_kube_status st;
    const char *rns = *sget(r, "namespace") ? sget(r, "namespace") : NULL;
    const char *uid = sget(json_object_get(wf, "metadata"), "uid");
    if (gr_kube_get(c->c, &gvr, rns, sget(r, "name"), NULL, &have, &st, NULL) != GR_OK)
        return;
    if (!strcmp(sget(gr_json_ptr_get(have, "/metadata/annotations"), GR_NVCRE_ANN_WORKFLOW_UID),
                uid)) {
        const char *pv = sget(gr_json_ptr_get(have, "/spec"), "volumeName");
        if (!strcmp(sget(r, "kind"), "PersistentVolumeClaim") && *pv) {
            json_t *stamp =
                json_pack("{s:{s:{s:s}}}", "metadata", "labels", GR_NVCRE_ANN_WORKFLOW_UID, uid);
            gr_kube_patch(c->c, &GVR_PVS, NULL, pv, GR_KUBE_PATCH_MERGE, stamp, NULL, NULL, &st,
                          NULL);
            json_decref(stamp);
        }
        gr_kube_opts d = {.precondition_uid = sget(json_object_get(have, "metadata"), "uid"),
                          .propagation = "Background"};
        gr_kube_delete(c->c, &gvr, rns, sget(r, "name"), &d, NULL, &st, NULL);
    }
    json_decref(have);
}

/* ADR-053: volumes of this Workflow's claims that are Released with policy
 * Retain get Delete, so deleting the claim frees the storage. Returns the
 * number of stamped volumes not yet Released (the caller checks again). */
static int reclaim_pvs(gr_nvcre_wf_ctl *c, const json_t *wf)
{
    char sel[160];
    snprintf(sel, sizeof(sel), "%s=%s", GR_NVCRE_ANN_WORKFLOW_UID,
             sget(json_object_get(wf, "metadata"), "uid"));
    gr_kube_opts lo = {.label_selector = sel};
    json_t *list = NULL;
    gr_kube_status st;
    if (gr_kube_list(c->c, &GVR_PVS, NULL, &lo, &list, &st, NULL) != GR_OK)
        return 0;
    int waiting = 0;
    size_t i;
    json_t *pv;
    json_array_foreach(json_object_get(list, "items"), i, pv)
    {
        int what = gr_nvcre_wf_pv_reclaim(pv);
        waiting += what == GR_NVCRE_WF_PV_WAIT;
        if (what != GR_NVCRE_WF_PV_SET_DELETE)
            continue;
        json_t *p = json_pack("{s:{s:s}}", "spec", "persistentVolumeReclaimPolicy", "Delete");
        gr_kube_patch(c->c, &GVR_PVS, NULL, sget(json_object_get(pv, "metadata"), "name"),
                      GR_KUBE_PATCH_MERGE, p, NULL, NULL, &st, NULL);
        json_decref(p);
    }
    json_decref(list);
    return waiting;
}

/* Delete the job-scoped dependencies of one group attempt and drop their
 * refs from status.dependencyRefs (reverse creation order). */
static void cleanup_job_deps(gr_nvcre_wf_ctl *c, const json_t *wf, json_t *status,
                             const char *group, int iteration)
{
    json_t *refs = json_object_get(status, "dependencyRefs");
    for (size_t k = json_array_size(refs); k-- > 0;) {
        const json_t *r = json_array_get(refs, k);
        if (strcmp(sget(r, "scope"), "job") || strcmp(sget(r, "groupName"), group) ||
            json_integer_value(json_object_get(r, "iteration")) != iteration)
            continue;
        delete_dep_ref(c, wf, r);
        json_array_remove(refs, k);
    }
    if (json_is_array(refs) && json_array_size(refs) == 0)
        json_object_del(status, "dependencyRefs");
}

/* --------------------------------------------------------------- deletion */

static int handle_deletion(gr_nvcre_wf_ctl *c, const json_t *wf, int64_t *requeue, gr_err *err)
{
    const json_t *md = json_object_get(wf, "metadata");
    const char *ns = sget(md, "namespace"), *name = sget(md, "name");
    char sel[320];
    snprintf(sel, sizeof(sel), "%s=%s", GR_NVCRE_LABEL_WORKFLOW, name);
    gr_kube_opts lo = {.label_selector = sel};
    json_t *list = NULL;
    gr_kube_status st;
    int rc = gr_kube_list(c->c, &GVR_JOBS, ns, &lo, &list, &st, err);
    if (rc != GR_OK)
        return rc;
    size_t i;
    json_t *j;
    size_t left = json_array_size(json_object_get(list, "items"));
    json_array_foreach(json_object_get(list, "items"), i, j)
    {
        gr_kube_opts d = {.precondition_uid = sget(json_object_get(j, "metadata"), "uid"),
                          .propagation = "Background"};
        gr_kube_delete(c->c, &GVR_JOBS, ns, sget(json_object_get(j, "metadata"), "name"), &d, NULL,
                       &st, NULL);
    }
    json_decref(list);
    if (left > 0) {
        *requeue = 1000000000LL; /* wait until the Jobs are gone */
        return GR_OK;
    }
    /* Dependencies in reverse order, owned only. */
    const json_t *refs = gr_json_ptr_get(wf, "/status/dependencyRefs");
    for (size_t k = json_array_size(refs); k-- > 0;)
        delete_dep_ref(c, wf, json_array_get(refs, k));
    if (reclaim_pvs(c, wf) > 0) {
        *requeue = 5000000000LL; /* ADR-053: until the claims' volumes are Released */
        return GR_OK;
    }
    bool changed;
    rc = gr_kube_finalizer_drop(c->c, &GVR_WORKFLOWS, ns, name, GR_NVCRE_FINALIZER_WORKFLOW,
                                &changed, err);
    return rc == GR_ENOTFOUND ? GR_OK : rc;
}

/* ------------------------------------------------------------ first pass */

/* The label selector "k=v,..." of the target's nodeSelector
 * (gr_nvcre_wf_target_labels()), or an empty buffer when every Node must
 * be read (no selector, an empty value, or a key or value the API server
 * would refuse in a selector: discovery then matches on the full list). */
static int target_selector(const json_t *wf, gr_buf *sel, gr_err *err)
{
    json_t *labels = NULL;
    int rc = gr_nvcre_wf_target_labels(wf, &labels, err);
    if (rc != GR_OK || !labels)
        return rc;
    const char *k;
    json_t *v;
    json_object_foreach(labels, k, v)
    {
        const char *val = json_string_value(v);
        if (!*val || gr_kube_is_qualified_name(k, NULL) || gr_kube_is_label_value(val, NULL) ||
            gr_buf_printf(sel, "%s%s=%s", sel->len ? "," : "", k, val) != GR_OK) {
            gr_buf_reset(sel);
            break;
        }
    }
    json_decref(labels);
    return GR_OK;
}

/* The first pass decides once, and terminally ("No target nodes found …"),
 * which nodes a Workflow runs on: it reads the Nodes from the API server
 * itself, since a cache can lag nodes that were just added. Only the Nodes
 * that carry the target's nodeSelector labels are listed when it has one
 * (discovery would drop the others). */
static int live_nodes(gr_nvcre_wf_ctl *c, const json_t *wf, json_t **out, gr_err *err)
{
    json_t *list = NULL;
    gr_buf sel = GR_BUF_INIT(GR_NVCRE_WF_SELECTOR_MAX);
    int rc = target_selector(wf, &sel, err);
    gr_kube_opts lo = {.label_selector = sel.len ? gr_buf_cstr(&sel) : NULL};
    if (rc == GR_OK)
        rc = gr_kube_list_all(c->c, &GR_KUBE_NODES, NULL, &lo, &list, NULL, err);
    gr_buf_free(&sel);
    if (rc != GR_OK)
        return rc;
    json_t *items = json_object_get(list, "items");
    *out = json_is_array(items) ? json_incref(items) : json_array();
    json_decref(list);
    return *out ? GR_OK : gr_err_set(err, GR_ENOMEM, "workflow controller: out of memory");
}

static int discover_and_partition(gr_nvcre_wf_ctl *c, const json_t *wf, json_t *status, gr_err *err)
{
    json_t *nodes = NULL;
    int rc = live_nodes(c, wf, &nodes, err);
    if (rc != GR_OK)
        return rc;
    json_t *plan = NULL;
    const char *reason = NULL;
    gr_err perr = {0};
    rc = gr_nvcre_wf_plan(wf, nodes, &plan, &reason, &perr);
    json_decref(nodes);
    json_t *orch = obj_get(status, "orchestration");
    json_object_set_new(status, "namespace",
                        json_string(sget(json_object_get(wf, "metadata"), "namespace")));
    if (plan) {
        if (json_object_get(plan, "platform"))
            json_object_set(orch, "detectedPlatform", json_object_get(plan, "platform"));
        if (json_object_get(plan, "gpuArchitecture"))
            json_object_set(orch, "detectedGPUArchitecture",
                            json_object_get(plan, "gpuArchitecture"));
        if (json_array_size(json_object_get(plan, "appliedOverrides")))
            json_object_set(orch, "appliedOverrides", json_object_get(plan, "appliedOverrides"));
        json_t *ex = json_array();
        size_t i;
        json_t *x;
        json_array_foreach(json_object_get(plan, "excludedNodes"), i, x)
            json_array_append_new(ex, json_string(sget(x, "name")));
        if (json_array_size(ex))
            json_object_set(orch, "excludedNodes", ex);
        json_decref(ex);
        if (json_object_get(plan, "exclusionReason"))
            json_object_set(orch, "exclusionReason", json_object_get(plan, "exclusionReason"));
        emit_all(c, wf, json_object_get(plan, "events"));
    }
    if (rc == GR_ESTATE) {
        rc = fail_wf(c, wf, status, reason ? reason : GR_NVCRE_REASON_PARTITION_ERROR, perr.msg,
                     err);
        json_decref(plan);
        return rc;
    }
    if (rc != GR_OK) {
        json_decref(plan);
        return gr_err_set(err, rc, "%s", perr.msg);
    }
    /* Workflow-scoped dependencies, after the gang contract passed. */
    json_t *refs = json_array();
    int not_ready = 0;
    rc = ensure_deps(c, wf, json_object_get(plan, "dependencies"), refs, NULL, 0, &not_ready,
                     &reason, &perr);
    if (rc == GR_OK && not_ready) {
        json_decref(refs);
        json_decref(plan);
        return gr_err_set(err, GR_EAGAIN,
                          "a dependency of the same name is still being deleted; retrying");
    }
    if (rc == GR_ESTATE) {
        json_decref(refs);
        rc = fail_wf(c, wf, status, reason, perr.msg, err);
        json_decref(plan);
        return rc;
    }
    if (rc != GR_OK) {
        json_decref(refs);
        json_decref(plan);
        return gr_err_set(err, rc, "%s", perr.msg);
    }
    if (json_array_size(refs))
        json_object_set(status, "dependencyRefs", refs);
    json_decref(refs);
    json_t *groups = json_array();
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(plan, "groups"), i, g)
    {
        json_t *ng = json_deep_copy(g);
        if (json_array_size(json_object_get(ng, "domains")) == 0)
            json_object_del(ng, "domains");
        json_object_set_new(ng, "phase", json_string(GR_NVCRE_PHASE_PENDING));
        json_array_append_new(groups, ng);
    }
    if (json_object_get(plan, "diagnose")) /* diagnose mode: round 1 (§2.14) */
        json_object_set(orch, "diagnose", json_object_get(plan, "diagnose"));
    if (json_array_size(json_object_get(plan, "gpuProducts")))
        json_object_set(orch, "gpuProducts", json_object_get(plan, "gpuProducts"));
    json_object_set(orch, "totalNodes", json_object_get(plan, "totalNodes"));
    json_object_set(orch, "nodesPerJob", json_object_get(plan, "nodesPerJob"));
    json_object_set_new(orch, "totalGroups", json_integer((json_int_t)json_array_size(groups)));
    json_object_set_new(orch, "groups", groups);
    json_object_set_new(orch, "currentIteration", json_integer(1));
    json_object_set_new(orch, "completedIterations", json_integer(0));
    json_int_t gen = json_integer_value(gr_json_ptr_get(wf, "/metadata/generation"));
    const char *msg = sget(plan, "message");
    int ch = set_exclusive(status, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_GROUPS_PARTITIONED,
                           msg, gen);
    rc = write_status(c, wf, status, err);
    if (rc == GR_OK && ch)
        emit(c, wf, "Normal", GR_NVCRE_REASON_GROUPS_PARTITIONED, msg);
    json_decref(plan);
    return rc;
}

/* ------------------------------------------------------------ tracking */

/* The effective spec with the persisted detection (re-run each reconcile). */
static int effective_spec(const json_t *wf, json_t **eff, const char **reason, gr_err *err)
{
    const json_t *orch = gr_json_ptr_get(wf, "/status/orchestration");
    const json_t *spec = json_object_get(wf, "spec");
    gr_nvcre_wf_ctx ctx = {
        sget(orch, "detectedPlatform"), sget(orch, "detectedGPUArchitecture"),
        GR_NVCRE_KIND_TRAIN_JOB,
        gr_json_ptr_get(spec, "/orchestration/topology/topologyKey") ? "topology" : "simple", 0};
    int rc = gr_nvcre_wf_apply_overrides(spec, &ctx, eff, NULL, NULL, reason, err);
    if (rc == GR_OK)
        rc = gr_nvcre_wf_checkpoint_check(*eff, reason, err);
    if (rc != GR_OK)
        return rc;
    return gr_nvcre_wf_gang_check(*eff, NULL, reason, err);
}

/* The node-overlap guard: `busy` holds the nodes of the running groups
 * (node name → true); a group with one of them waits. */
static void busy_add(json_t *busy, const json_t *g)
{
    size_t a;
    json_t *x;
    json_array_foreach(json_object_get(g, "nodes"), a, x)
    {
        if (json_is_string(x))
            json_object_set_new(busy, json_string_value(x), json_true());
    }
}

static int group_nodes_overlap(const json_t *busy, const json_t *g)
{
    size_t a;
    json_t *x;
    json_array_foreach(json_object_get(g, "nodes"), a, x)
    {
        if (json_is_string(x) && json_object_get(busy, json_string_value(x)))
            return 1;
    }
    return 0;
}

typedef struct job_status_ctx {
    const char *msg;
} job_status_ctx;

static int mark_timed_out(json_t *job, void *ctx, gr_err *err)
{
    (void)err;
    job_status_ctx *j = ctx;
    json_t *st = obj_get(job, "status");
    set_exclusive(st, GR_NVCRE_COND_FAILED, GR_NVCRE_REASON_JOB_TIMED_OUT, j->msg,
                  json_integer_value(gr_json_ptr_get(job, "/metadata/generation")));
    return GR_OK;
}

/* status.nodeResults: node name → {result, reason, message, hardware,
 * validation}; the node-result ConfigMaps are built from it. */
static void record_failed_nodes(json_t *status, const json_t *job, const json_t *group, int hw,
                                int val)
{
    json_t *nr = obj_get(status, "nodeResults");
    const json_t *fn = gr_json_ptr_get(job, "/status/failedNodes");
    size_t i;
    json_t *x;
    if (json_array_size(fn)) {
        json_array_foreach(fn, i, x) json_object_set_new(
            nr, sget(x, "name"),
            json_pack("{s:s,s:s,s:s,s:b,s:b}", "result", "Failed", "reason",
                      *sget(x, "reason") ? sget(x, "reason") : GR_NVCRE_NODE_REASON_WORKLOAD_FAILED,
                      "message", sget(x, "message"), "hardware", hw, "validation", val && !hw));
    } else {
        json_array_foreach(json_object_get(group, "nodes"), i, x)
            json_object_set_new(nr, json_string_value(x),
                                json_pack("{s:s,s:s,s:s,s:b,s:b}", "result", "Failed", "reason",
                                          val && !hw ? GR_NVCRE_NODE_REASON_THRESHOLD_VIOLATION
                                                     : GR_NVCRE_NODE_REASON_WORKLOAD_FAILED,
                                          "message", job ? "Job failed" : "Job was deleted",
                                          "hardware", hw, "validation", val && !hw));
    }
}

static int write_result_cms(gr_nvcre_wf_ctl *c, const json_t *wf, json_t *status, gr_err *err)
{
    const json_t *md = json_object_get(wf, "metadata");
    const char *ns = sget(md, "namespace"), *uid = sget(md, "uid");
    json_t *nr = obj_get(status, "nodeResults");
    json_t *succ = json_array(), *failed = json_array();
    const char *nk;
    json_t *nv;
    json_object_foreach(nr, nk, nv)
    {
        if (!strcmp(sget(nv, "result"), "Failed"))
            json_array_append_new(failed,
                                  json_pack("{s:s,s:s,s:s}", "name", nk, "reason",
                                            sget(nv, "reason"), "message", sget(nv, "message")));
        else
            json_array_append_new(succ, json_string(nk));
    }
    const char *prefixes[2] = {"succeeded-nodes", "failed-nodes"};
    const char *keys[2] = {"succeeded-nodes.csv.gz", "failed-nodes.json.gz"};
    const char *refs[2] = {GR_NVCRE_F_SUCCEEDED_NODES_REF, GR_NVCRE_F_FAILED_NODES_REF};
    for (int k = 0; k < 2; k++) {
        json_t *src = k ? failed : succ;
        char *b64 = NULL;
        int rc = k ? gr_nvcre_wf_failed_payload(src, &b64, err)
                   : gr_nvcre_wf_succeeded_payload(src, &b64, err);
        if (rc != GR_OK) {
            json_decref(succ);
            json_decref(failed);
            return rc;
        }
        char name[96];
        gr_nvcre_wf_result_cm_name(prefixes[k], uid, name, sizeof(name));
        json_t *cm =
            json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:s}}", "apiVersion", "v1", "kind",
                      "ConfigMap", "metadata", "name", name, "namespace", ns, "labels",
                      GR_NVCRE_LABEL_WORKFLOW, sget(md, "name"), "binaryData", keys[k], b64);
        free(b64);
        gr_kube_set_controller_ref(cm, wf, NULL);
        gr_kube_opts ao = {.field_manager = "workflow-controller", .force = true};
        gr_kube_status st;
        rc = gr_kube_apply(c->c, &GR_KUBE_CONFIGMAPS, ns, cm, &ao, NULL, &st, err);
        json_decref(cm);
        if (rc != GR_OK) {
            json_decref(succ);
            json_decref(failed);
            return rc;
        }
        json_object_set_new(status, refs[k],
                            json_pack("{s:s,s:s}", "kind", "ConfigMap", "name", name));
    }
    json_decref(succ);
    json_decref(failed);
    return GR_OK;
}

/* ADR-089: an Unpinned group's nodes are the nodes its Job's pods were
 * placed on (label nvcre.nvidia.com/job), sorted. */
static void backfill_nodes(gr_nvcre_wf_ctl *c, const char *ns, const char *job, json_t *g)
{
    char sel[320];
    snprintf(sel, sizeof(sel), "%s=%s", GR_NVCRE_LABEL_JOB, job);
    gr_kube_opts lo = {.label_selector = sel};
    json_t *list = NULL;
    gr_kube_status st;
    if (gr_kube_list(c->c, &GVR_PODS, ns, &lo, &list, &st, NULL) != GR_OK)
        return;
    json_t *pods = json_object_get(list, "items");
    json_t *names = NULL;
    if (gr_nvcre_wf_placed_nodes(pods, &names, NULL) == GR_OK &&
        json_array_size(names) > json_array_size(json_object_get(g, "nodes")))
        json_object_set(g, "nodes", names);
    json_decref(names);
    json_decref(list);
}

/* Before a retry: are pods of the failed attempt (label
 * nvcre.nvidia.com/job) still running? The wait starts at the group's
 * completionTime (set here on the first look) and is bounded by
 * GR_NVCRE_WF_DRAIN_MAX_NS. A failed list does not hold the retry. */
static int drain_pending(gr_nvcre_wf_ctl *c, const char *ns, const char *job, json_t *g,
                         int64_t now)
{
    char sel[320];
    snprintf(sel, sizeof(sel), "%s=%s", GR_NVCRE_LABEL_JOB, job);
    gr_kube_opts lo = {.label_selector = sel};
    json_t *list = NULL;
    gr_kube_status st;
    if (gr_kube_list(c->c, &GVR_PODS, ns, &lo, &list, &st, NULL) != GR_OK)
        return 0;
    int64_t since = 0;
    gr_time_parse_ns(sget(g, "completionTime"), &since, NULL);
    int wait = gr_nvcre_wf_drain_wait(json_object_get(list, "items"), since, now);
    json_decref(list);
    if (wait && !since)
        json_object_set_new(g, "completionTime", now_str());
    return wait;
}

/* ------------------------------------------------------------ diagnose */

/* screen-no-nvl groups run with multi-node NVLink off (NCCL_MNNVL_ENABLE=0
 * in the trainer's env, replacing any value the template sets). */
static void no_nvl_env(json_t *job)
{
    json_t *tr = gr_json_ptr_get(job, "/spec/workload/trainJob/trainer");
    if (!json_is_object(tr))
        return;
    json_t *env = json_object_get(tr, "env");
    if (!json_is_array(env)) {
        env = json_array();
        json_object_set_new(tr, "env", env);
    }
    for (size_t i = json_array_size(env); i-- > 0;)
        if (!strcmp(sget(json_array_get(env, i), "name"), GR_NVCRE_WF_DIAG_NO_NVL_ENV))
            json_array_remove(env, i);
    json_array_append_new(
        env, json_pack("{s:s,s:s}", "name", GR_NVCRE_WF_DIAG_NO_NVL_ENV, "value", "0"));
}

/* One iterationHistory entry's "groups": name, phase and the Job's name of
 * each group; with `times`, its startTime and completionTime too (a regular
 * iteration records them, a diagnose round does not). The caller owns the
 * returned array. */
static json_t *history_groups(const json_t *groups, bool times)
{
    json_t *hg = json_array();
    size_t i;
    const json_t *g;
    json_array_foreach(groups, i, g)
    {
        json_t *e = json_pack("{s:s,s:s}", "name", sget(g, "name"), "phase", sget(g, "phase"));
        if (json_object_get(g, "jobRef"))
            json_object_set_new(e, "jobName",
                                json_string(sget(json_object_get(g, "jobRef"), "name")));
        if (times && *sget(g, "startTime"))
            json_object_set(e, "startTime", json_object_get(g, "startTime"));
        if (times && *sget(g, "completionTime"))
            json_object_set(e, "completionTime", json_object_get(g, "completionTime"));
        json_array_append_new(hg, e);
    }
    return hg;
}

enum { DIAG_NEXT = 0, DIAG_PENDING = 1, DIAG_DONE = 2 };

/* A diagnose round finished (every group terminal): bandwidth
 * reclassification of the succeeded groups, then the state machine
 * (gr_nvcre_wf_diag.h). DIAG_NEXT: orchestration.groups holds the next
 * round; DIAG_PENDING: a BandwidthMeasurement is not complete yet;
 * DIAG_DONE: the final status was written (or the Workflow failed). */
static int diag_round(gr_nvcre_wf_ctl *c, const json_t *wf, json_t *status, const json_t *eff,
                      int64_t now, int *outcome, gr_err *err)
{
    const json_t *md = json_object_get(wf, "metadata");
    const char *ns = sget(md, "namespace");
    json_int_t gen = json_integer_value(gr_json_ptr_get(wf, "/metadata/generation"));
    json_t *orch = obj_get(status, "orchestration");
    json_t *groups = json_object_get(orch, "groups");
    json_t *st = obj_get(orch, "diagnose");
    gr_err perr = {0};
    double thr = 0;
    size_t i;
    json_t *g;
    *outcome = DIAG_DONE;
    int rc = gr_nvcre_wf_diag_threshold(eff, &thr, &perr);
    if (rc != GR_OK)
        return fail_wf(c, wf, status, GR_NVCRE_REASON_PARTITION_ERROR, perr.msg, err);
    if (thr > 0) {
        /* §2.14: a succeeded group is reclassified by its Job's
         * BandwidthMeasurement (max busBW); pending → look again. */
        int64_t mt = 0;
        const char *mts =
            json_string_value(gr_json_ptr_get(eff, "/validation/performance/measurementTimeout"));
        if (!mts || gr_duration_parse(mts, &mt, NULL) != GR_OK || mt <= 0)
            gr_duration_parse(GR_NVCRE_DEFAULT_MEASUREMENT_TIMEOUT, &mt, NULL);
        int pending = 0;
        json_array_foreach(groups, i, g)
        {
            if (strcmp(sget(g, "phase"), GR_NVCRE_PHASE_SUCCEEDED))
                continue;
            char full[320], bmn[GR_NVCRE_MAX_K8S_NAME_LEN + 1];
            snprintf(full, sizeof full, "%s-bandwidth", sget(json_object_get(g, "jobRef"), "name"));
            gr_nvcre_truncate_name(full, GR_NVCRE_MAX_K8S_NAME_LEN, bmn, sizeof bmn);
            json_t *bm = NULL;
            gr_kube_status kst;
            if (gr_kube_get(c->c, &GVR_BMS, ns, bmn, NULL, &bm, &kst, NULL) != GR_OK)
                bm = NULL;
            int64_t done_ns = now;
            gr_time_parse_ns(sget(g, "completionTime"), &done_ns, NULL);
            int v = gr_nvcre_wf_diag_bw_verdict(bm, thr, done_ns, mt, now, NULL);
            json_decref(bm);
            if (v == GR_NVCRE_WF_DIAG_BW_PENDING) {
                pending = 1;
                continue;
            }
            if (v != GR_NVCRE_WF_DIAG_BW_PASS) /* below the threshold, or no data */
                json_object_set_new(g, "phase", json_string(GR_NVCRE_PHASE_FAILED));
        }
        if (pending) {
            *outcome = DIAG_PENDING;
            return GR_OK;
        }
    }
    /* The round into the history. */
    json_t *hist = json_object_get(orch, "iterationHistory");
    if (!json_is_array(hist)) {
        hist = json_array();
        json_object_set_new(orch, "iterationHistory", hist);
    }
    json_t *hg = history_groups(groups, false);
    json_int_t round = json_integer_value(json_object_get(st, "round"));
    json_array_append_new(hist, json_pack("{s:I,s:s,s:o}", "iteration", round, "stage",
                                          sget(st, "stage"), "groups", hg));
    json_object_set_new(orch, "completedIterations", json_integer(round));
    int mn = (int)json_integer_value(gr_json_ptr_get(eff, "/orchestration/diagnose/minGroupSize"));
    json_t *next = NULL;
    const char *ft = NULL, *fr = NULL;
    char msg[256];
    rc = gr_nvcre_wf_diag_advance(st, groups, gr_nvcre_wf_diag_mnnvl(eff), mn, &next, &ft, &fr, msg,
                                  sizeof msg, &perr);
    if (rc != GR_OK)
        return fail_wf(c, wf, status, GR_NVCRE_REASON_PARTITION_ERROR, perr.msg, err);
    if (next) {
        json_array_foreach(next, i, g)
            json_object_set_new(g, "phase", json_string(GR_NVCRE_PHASE_PENDING));
        round = json_integer_value(json_object_get(st, "round"));
        snprintf(msg, sizeof msg, GR_NVCRE_WF_DIAG_MSG_ROUND_FMT, (int)round, sget(st, "stage"),
                 (int)json_array_size(next));
        json_object_set_new(orch, "totalGroups", json_integer((json_int_t)json_array_size(next)));
        json_object_set_new(orch, "groups", next);
        json_object_set_new(orch, "currentIteration", json_integer(round));
        if (set_exclusive(status, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_ITERATION_COMPLETED,
                          msg, gen))
            emit(c, wf, "Normal", GR_NVCRE_REASON_ITERATION_COMPLETED, msg);
        *outcome = DIAG_NEXT;
        return GR_OK;
    }
    /* Complete: confirmed faulty nodes Failed, every other node Succeeded. */
    json_t *nr = json_object();
    json_t *faulty = json_object_get(st, "faultyNodes");
    const char *dk;
    json_t *dv;
    json_object_foreach(json_object_get(st, "domains"), dk, dv)
    {
        size_t k;
        json_t *n;
        json_array_foreach(dv, k, n)
        {
            size_t q;
            json_t *f;
            int bad = 0;
            json_array_foreach(faulty, q, f) bad |= json_equal(f, n);
            json_object_set_new(nr, json_string_value(n),
                                bad ? json_pack("{s:s,s:s,s:s,s:b,s:b}", "result", "Failed",
                                                "reason", GR_NVCRE_WF_DIAG_NODE_REASON, "message",
                                                GR_NVCRE_WF_DIAG_NODE_MSG, "hardware", 0,
                                                "validation", 0)
                                    : json_pack("{s:s}", "result", "Succeeded"));
        }
    }
    json_object_set_new(status, "nodeResults", nr);
    rc = write_result_cms(c, wf, status, err);
    if (rc != GR_OK)
        return rc;
    int failed = !strcmp(ft, GR_NVCRE_COND_FAILED);
    int ch = set_exclusive(status, ft, fr, msg, gen);
    rc = write_status(c, wf, status, err);
    if (rc == GR_OK && ch)
        emit(c, wf, failed ? "Warning" : "Normal", fr, msg);
    return rc;
}

static int track_and_launch(gr_nvcre_wf_ctl *c, const json_t *wf, json_t *status, int64_t *requeue,
                            gr_err *err)
{
    const json_t *md = json_object_get(wf, "metadata");
    const char *ns = sget(md, "namespace"), *wname = sget(md, "name");
    json_int_t gen = json_integer_value(gr_json_ptr_get(wf, "/metadata/generation"));
    json_t *orch = obj_get(status, "orchestration");
    json_t *groups = json_object_get(orch, "groups");
    json_t *eff = NULL;
    const char *reason = NULL;
    gr_err perr = {0};
    int rc = effective_spec(wf, &eff, &reason, &perr);
    if (rc == GR_ESTATE)
        return fail_wf(c, wf, status, reason, perr.msg, err);
    if (rc != GR_OK)
        return gr_err_set(err, rc, "%s", perr.msg);
    const json_t *exec = gr_json_ptr_get(eff, "/orchestration/execution");
    int64_t timeout = 0;
    if (*sget(exec, "timeoutPerJob"))
        gr_duration_parse(sget(exec, "timeoutPerJob"), &timeout, NULL);
    int retry_limit = (int)json_integer_value(json_object_get(exec, "retryFailedGroups"));
    int max_conc = (int)json_integer_value(json_object_get(exec, "maxConcurrent"));
    int iterations = (int)json_integer_value(gr_json_ptr_get(eff, "/orchestration/iterations"));
    if (iterations < 1)
        iterations = 1;
    int cur = (int)json_integer_value(json_object_get(orch, "currentIteration"));
    if (cur < 1)
        cur = 1;
    int single = iterations <= 1 && json_array_size(groups) <= 1 &&
                 !gr_json_ptr_get(eff, "/orchestration/diagnose");
    int64_t now = now_ns();
    int unpinned = gr_nvcre_wf_unpinned(eff);
    int diag = gr_nvcre_wf_diag_enabled(eff);
    int npj = (int)json_integer_value(json_object_get(orch, "nodesPerJob"));
    size_t i;
    json_t *g;
    int running = 0;
    json_t *later = json_array(); /* Workflow events, sent once the status is written */
    int soon = 0;                 /* a group waits for an old object to go away */
    json_t *relay = NULL;         /* the first Job whose InProgress reason is relayed */
    const char *relay_group = "";
    /* 1. Track running groups. */
    json_array_foreach(groups, i, g)
    {
        if (strcmp(sget(g, "phase"), GR_NVCRE_PHASE_RUNNING))
            continue;
        const char *jn = sget(json_object_get(g, "jobRef"), "name");
        json_t *job = NULL;
        char key[320];
        snprintf(key, sizeof(key), "%s/%s", ns, jn);
        int grc = gr_kube_cache_get(c->jobs, key, &job, NULL);
        if (grc == GR_ENOTFOUND) {
            /* Confirm with an uncached read: a Job created a moment ago may
             * not be in the cache yet (upstream #384/#385). */
            gr_kube_status st;
            grc = gr_kube_get(c->c, &GVR_JOBS, ns, jn, NULL, &job, &st, NULL);
            if (grc != GR_OK && st.reason == GR_KUBE_REASON_NOT_FOUND)
                grc = GR_ENOTFOUND;
        }
        const char *phase = NULL;
        int timed_out = 0, hw = 0, val = 0;
        if (grc == GR_ENOTFOUND) {
            phase = GR_NVCRE_PHASE_FAILED; /* deleted Job */
        } else if (grc == GR_OK) {
            const char *r = NULL;
            hw = cond_true(job, GR_NVCRE_COND_HARDWARE_FAILED, NULL);
            val = cond_true(job, GR_NVCRE_COND_VALIDATION_FAILED, NULL);
            if (cond_true(job, GR_NVCRE_COND_FAILED, &r) || hw || val) {
                phase = GR_NVCRE_PHASE_FAILED;
                timed_out = !strcmp(r ? r : "", GR_NVCRE_REASON_JOB_TIMED_OUT);
            } else if (cond_true(job, GR_NVCRE_COND_SUCCEEDED, NULL)) {
                /* §2.10 isJobAwaitingThresholdEvaluation: a Succeeded Job
                 * with thresholds and no verdict yet keeps its group
                 * running; the Job controller writes ValidationFailed (or
                 * MeasurementTimeout) and its change enqueues us. Diagnose
                 * mode judges the round's bandwidth itself (§2.14). */
                if (diag || !gr_nvcre_wf_job_awaiting_thresholds(job))
                    phase = GR_NVCRE_PHASE_SUCCEEDED;
            } else if (timeout > 0) {
                int to = 0, blocked = 0;
                int64_t gs = 0;
                gr_time_parse_ns(sget(g, "startTime"), &gs, NULL);
                gr_nvcre_wf_job_timed_out(job, gs, timeout, now, &to, &blocked);
                if (to) {
                    job_status_ctx jc = {blocked ? GR_NVCRE_MSG_JOB_TIMED_OUT_BLOCKED
                                                 : GR_NVCRE_MSG_JOB_TIMED_OUT};
                    gr_kube_status st;
                    gr_kube_status_update_retry(c->c, &GVR_JOBS, ns, jn, mark_timed_out, &jc, NULL,
                                                &st, NULL);
                    emit(c, job, "Warning", GR_NVCRE_REASON_JOB_TIMED_OUT, jc.msg);
                    phase = GR_NVCRE_PHASE_FAILED;
                    timed_out = 1;
                }
            }
        } else {
            json_decref(eff);
            json_decref(later);
            json_decref(relay);
            return gr_err_set(err, grc, "reading Job %s failed", key);
        }
        if (unpinned && job && (int)json_array_size(json_object_get(g, "nodes")) < npj)
            backfill_nodes(c, ns, jn, g); /* ADR-089: the nodes the pods landed on */
        if (!phase) {
            running++;
            if (!relay && gr_nvcre_wf_job_relayed(job)) {
                relay = json_incref(job);
                relay_group = sget(g, "name");
            }
            json_decref(job);
            continue;
        }
        if (!strcmp(phase, GR_NVCRE_PHASE_FAILED)) {
            int retries = (int)json_integer_value(json_object_get(g, "retries"));
            int retry = retry_limit > 0 && retries < retry_limit && !timed_out;
            if (retry && drain_pending(c, ns, jn, g, now)) {
                /* Upstream #121: the replacement starts only once the old
                 * pods are gone (CUDA error 719 otherwise). */
                if (job) {
                    gr_kube_status st;
                    gr_kube_delete(c->c, &GVR_JOBS, ns, jn, NULL, NULL, &st, NULL);
                }
                soon = 1;
                running++;
                json_decref(job);
                continue;
            }
            if (!job) {
                /* Deleted by someone before it finished: a failure of the
                 * group, relaunched while retries are left (§2.10). */
                char m[512];
                if (retry)
                    snprintf(m, sizeof(m), GR_NVCRE_WF_MSG_JOB_DELETED_RELAUNCH_FMT, jn,
                             sget(g, "name"), retries + 1, retry_limit);
                else
                    snprintf(m, sizeof(m), GR_NVCRE_WF_MSG_JOB_DELETED_FAILED_FMT, jn,
                             sget(g, "name"));
                json_array_append_new(later,
                                      json_pack("{s:s,s:s,s:s}", "type", "Warning", "reason",
                                                GR_NVCRE_WF_EVENT_JOB_DELETED, "message", m));
            }
            if (retry) {
                gr_kube_status st;
                if (job)
                    gr_kube_delete(c->c, &GVR_JOBS, ns, jn, NULL, NULL, &st, NULL);
                cleanup_job_deps(c, wf, status, sget(g, "name"), cur);
                json_object_set_new(g, "retries", json_integer(retries + 1));
                json_object_set_new(g, "phase", json_string(GR_NVCRE_PHASE_PENDING));
                json_object_del(g, "jobRef");
                json_object_del(g, "startTime");
                json_object_del(g, "completionTime");
                if (unpinned) /* the replacement may land elsewhere: attribute afresh */
                    json_object_set_new(g, "nodes", json_array());
                json_decref(job);
                continue;
            }
            if (!diag) /* diagnose: only confirmed faulty nodes fail (§2.14) */
                record_failed_nodes(status, job, g, hw, val);
        }
        cleanup_job_deps(c, wf, status, sget(g, "name"), cur);
        json_object_set_new(g, "phase", json_string(phase));
        json_object_set_new(g, "completionTime", now_str());
        json_decref(job);
    }
    /* 2. Iteration complete? */
    int all_terminal = json_array_size(groups) > 0;
    json_array_foreach(groups, i, g)
    {
        const char *p = sget(g, "phase");
        if (strcmp(p, GR_NVCRE_PHASE_SUCCEEDED) && strcmp(p, GR_NVCRE_PHASE_FAILED))
            all_terminal = 0;
    }
    if (all_terminal && diag) {
        int outcome = DIAG_DONE;
        rc = diag_round(c, wf, status, eff, now, &outcome, err);
        if (rc != GR_OK || outcome == DIAG_DONE) {
            json_decref(eff);
            json_decref(relay);
            if (rc == GR_OK)
                emit_all(c, wf, later);
            json_decref(later);
            return rc;
        }
        soon |= outcome == DIAG_PENDING;
        groups = json_object_get(orch, "groups"); /* the next round's */
        cur = (int)json_integer_value(json_object_get(orch, "currentIteration"));
        all_terminal = 0;
    }
    if (all_terminal) {
        int completed = (int)json_integer_value(json_object_get(orch, "completedIterations")) + 1;
        json_object_set_new(orch, "completedIterations", json_integer(completed));
        json_t *hist = json_object_get(orch, "iterationHistory");
        if (!json_is_array(hist) && completed < iterations) {
            hist = json_array();
            json_object_set_new(orch, "iterationHistory", hist);
        }
        json_t *hg = history_groups(groups, true);
        if (completed < iterations) {
            json_array_append_new(hist, json_pack("{s:i,s:o}", "iteration", cur, "groups", hg));
            json_array_foreach(groups, i, g)
            {
                const char *jn = sget(json_object_get(g, "jobRef"), "name");
                if (*jn) {
                    gr_kube_status st;
                    gr_kube_delete(c->c, &GVR_JOBS, ns, jn, NULL, NULL, &st, NULL);
                }
                json_object_set_new(g, "phase", json_string(GR_NVCRE_PHASE_PENDING));
                json_object_set_new(g, "retries", json_integer(0));
                json_object_del(g, "jobRef");
                json_object_del(g, "startTime");
                json_object_del(g, "completionTime");
                if (unpinned)
                    json_object_set_new(g, "nodes", json_array());
            }
            cur = completed + 1;
            json_object_set_new(orch, "currentIteration", json_integer(cur));
            char msg[256];
            snprintf(msg, sizeof(msg), GR_NVCRE_MSG_ITERATION_COMPLETED_FMT, completed, iterations);
            if (set_exclusive(status, GR_NVCRE_COND_IN_PROGRESS,
                              GR_NVCRE_REASON_ITERATION_COMPLETED, msg, gen))
                emit(c, wf, "Normal", GR_NVCRE_REASON_ITERATION_COMPLETED, msg);
        } else {
            /* Final status over the history and the current groups. */
            int failed = 0, hwf = 0, valonly = 1, vf = 0;
            size_t k;
            json_t *h;
            json_array_foreach(hist, k, h)
            {
                size_t q;
                json_t *hgp;
                json_array_foreach(json_object_get(h, "groups"), q, hgp) failed +=
                    !strcmp(sget(hgp, "phase"), GR_NVCRE_PHASE_FAILED);
            }
            json_array_foreach(groups, k, h) failed +=
                !strcmp(sget(h, "phase"), GR_NVCRE_PHASE_FAILED);
            json_t *nr = obj_get(status, "nodeResults");
            const char *nk;
            json_t *nv;
            json_object_foreach(nr, nk, nv)
            {
                if (strcmp(sget(nv, "result"), "Failed"))
                    continue;
                hwf |= json_is_true(json_object_get(nv, "hardware"));
                vf |= json_is_true(json_object_get(nv, "validation"));
                valonly &= json_is_true(json_object_get(nv, "validation"));
            }
            json_array_foreach(groups, k, h)
            {
                if (strcmp(sget(h, "phase"), GR_NVCRE_PHASE_SUCCEEDED))
                    continue;
                size_t q;
                json_t *n;
                json_array_foreach(json_object_get(h, "nodes"), q,
                                   n) if (!json_object_get(nr, json_string_value(n)))
                    json_object_set_new(nr, json_string_value(n),
                                        json_pack("{s:s}", "result", "Succeeded"));
            }
            json_decref(hg);
            char msg[256];
            const char *fr = gr_nvcre_wf_final_reason(failed, hwf, failed && valonly, iterations,
                                                      msg, sizeof(msg));
            json_object_set_new(orch, "currentIteration", json_integer(iterations));
            rc = write_result_cms(c, wf, status, err);
            if (rc != GR_OK) {
                json_decref(eff);
                json_decref(later);
                json_decref(relay);
                return rc;
            }
            int ch = set_exclusive(status, failed ? GR_NVCRE_COND_FAILED : GR_NVCRE_COND_SUCCEEDED,
                                   fr, msg, gen);
            if (vf)
                set_additive(status, GR_NVCRE_COND_VALIDATION_FAILED,
                             GR_NVCRE_REASON_JOB_VALIDATION_FAILED,
                             GR_NVCRE_MSG_JOB_VALIDATION_FAILED, gen);
            json_decref(eff);
            json_decref(relay);
            rc = write_status(c, wf, status, err);
            if (rc == GR_OK)
                emit_all(c, wf, later);
            json_decref(later);
            if (rc == GR_OK && ch)
                emit(c, wf, failed ? "Warning" : "Normal", fr, msg);
            return rc;
        }
    }
    /* 3. Launch pending groups. No node in two running Jobs: `busy` holds
     * the nodes of the running groups, and of each group launched here. */
    json_t *busy = json_object();
    if (!busy) {
        json_decref(eff);
        json_decref(later);
        json_decref(relay);
        return gr_err_set(err, GR_ENOMEM, "workflow controller: out of memory");
    }
    json_array_foreach(groups, i, g)
    {
        if (!strcmp(sget(g, "phase"), GR_NVCRE_PHASE_RUNNING))
            busy_add(busy, g);
    }
    json_array_foreach(groups, i, g)
    {
        if (strcmp(sget(g, "phase"), GR_NVCRE_PHASE_PENDING))
            continue;
        if (max_conc > 0 && running >= max_conc)
            break;
        if (group_nodes_overlap(busy, g))
            continue; /* overflow groups wait for their lenders */
        /* WF-36, WF-37: the gang contract again before every group, on the
         * spec as this group's Job sees it (job-scoped dependencies renamed).
         * The effective spec is this reconcile's `eff`: it depends on the
         * Workflow alone, which does not change while we launch. */
        json_t *js = NULL, *jd = NULL;
        rc = gr_nvcre_wf_prepare_job(wf, eff, sget(g, "name"), cur, single, &js, &jd, &perr);
        if (rc == GR_OK)
            rc = gr_nvcre_wf_gang_check(js, NULL, &reason, &perr);
        if (rc == GR_ESTATE || rc == GR_EINVAL) {
            char m[GR_ERR_MSG_MAX + 64];
            snprintf(m, sizeof(m), "group %s: %s", sget(g, "name"), perr.msg);
            json_decref(js);
            json_decref(jd);
            json_decref(eff);
            json_decref(later);
            json_decref(relay);
            json_decref(busy);
            return fail_wf(c, wf, status,
                           rc == GR_ESTATE ? reason : GR_NVCRE_REASON_DEPENDENCY_CREATION_ERROR, m,
                           err);
        }
        if (rc != GR_OK) {
            json_decref(js);
            json_decref(jd);
            json_decref(eff);
            json_decref(later);
            json_decref(relay);
            json_decref(busy);
            return gr_err_set(err, rc, "%s", perr.msg);
        }
        json_t *job = NULL;
        rc = gr_nvcre_wf_render_job(wf, js, g, cur, single, &job, &perr);
        json_decref(js);
        if (rc != GR_OK) {
            json_decref(jd);
            json_decref(eff);
            json_decref(later);
            json_decref(relay);
            json_decref(busy);
            return fail_wf(c, wf, status, GR_NVCRE_REASON_JOB_CREATION_ERROR, perr.msg, err);
        }
        if (!strncmp(sget(g, "name"), "screen-no-nvl-", 14)) /* by name: the CRD prunes flags */
            no_nvl_env(job);
        /* Job-scoped dependencies first (owned by the Workflow until the
         * Job exists), so the Job's workload finds them. */
        json_t *refs = json_object_get(status, "dependencyRefs");
        if (!json_is_array(refs)) {
            refs = json_array();
            json_object_set_new(status, "dependencyRefs", refs);
        }
        int not_ready = 0;
        /* This group's writes (each dependency, the Job, the dependencies'
         * hand-over to the Job) go out back to back once the rate limit
         * allows them all: the same rate, one wake-up per Job. */
        gr_kube_client_wait_burst(c->c, 1 + 2 * (int)json_array_size(jd), NULL);
        rc = ensure_deps(c, wf, jd, refs, sget(g, "name"), cur, &not_ready, &reason, &perr);
        json_decref(jd);
        if (json_array_size(refs) == 0)
            json_object_del(status, "dependencyRefs");
        if (rc == GR_ESTATE) {
            json_decref(job);
            json_decref(eff);
            json_decref(later);
            json_decref(relay);
            json_decref(busy);
            return fail_wf(c, wf, status, reason, perr.msg, err);
        }
        if (rc != GR_OK || not_ready) {
            /* An old copy is still being deleted, or a transient error:
             * the group stays Pending and we look again shortly. */
            json_decref(job);
            if (rc != GR_OK)
                gr_log(GR_LOG_WARN, MOD, "creating job dependencies failed",
                       GR_KV_STR("workflow", wname), GR_KV_STR("error", perr.msg), GR_KV_END);
            soon = 1;
            continue;
        }
        const char *jn = sget(json_object_get(job, "metadata"), "name");
        char jname[128];
        snprintf(jname, sizeof(jname), "%s", jn);
        gr_kube_status st;
        json_t *created = NULL;
        rc = gr_kube_create(c->c, &GVR_JOBS, ns, job, NULL, &created, &st, &perr);
        json_decref(job);
        if (rc != GR_OK && st.reason == GR_KUBE_REASON_ALREADY_EXISTS) {
            json_t *have = NULL;
            rc = gr_kube_get(c->c, &GVR_JOBS, ns, jname, NULL, &have, &st, &perr);
            int ours = 0;
            size_t k;
            json_t *o;
            json_array_foreach(gr_json_ptr_get(have, "/metadata/ownerReferences"), k, o) ours |=
                json_is_true(json_object_get(o, "controller")) &&
                !strcmp(sget(o, "uid"), sget(md, "uid"));
            if (rc != GR_OK || gr_json_ptr_get(have, "/metadata/deletionTimestamp")) {
                /* The previous attempt's Job is still going away. */
                json_decref(have);
                soon = 1;
                continue;
            }
            if (!ours) {
                json_decref(have);
                char m[512];
                snprintf(m, sizeof(m), GR_NVCRE_WF_MSG_JOB_COLLISION_FMT, jname, ns, wname);
                json_decref(eff);
                json_decref(later);
                json_decref(relay);
                json_decref(busy);
                return fail_wf(c, wf, status, GR_NVCRE_REASON_JOB_NAME_COLLISION, m, err);
            }
            created = have;
            rc = GR_OK;
        }
        if (rc != GR_OK) {
            json_decref(eff);
            json_decref(later);
            json_decref(relay);
            json_decref(busy);
            if (st.reason == GR_KUBE_REASON_INVALID || st.reason == GR_KUBE_REASON_FORBIDDEN)
                return fail_wf(c, wf, status, GR_NVCRE_REASON_JOB_CREATION_ERROR, perr.msg, err);
            return gr_err_set(err, rc, "%s", perr.msg);
        }
        own_job_deps(c, refs, sget(g, "name"), cur, created);
        json_decref(created);
        json_object_set_new(g, "phase", json_string(GR_NVCRE_PHASE_RUNNING));
        json_object_set_new(g, "jobRef",
                            json_pack("{s:s,s:s,s:s}", "apiVersion", GR_NVCRE_API_VERSION, "kind",
                                      GR_NVCRE_KIND_JOB, "name", jname));
        json_object_set_new(g, "startTime", now_str());
        busy_add(busy, g);
        running++;
    }
    json_decref(busy);
    json_decref(eff);
    if (running > 0) {
        /* JobRunning, or the first Job's blocked/rejected state relayed
         * (ADR-083, JOB-85). */
        char msg[1024];
        const char *rr =
            gr_nvcre_wf_running_condition(cur, iterations, running, relay, msg, sizeof(msg));
        if (diag && !relay) /* "Iteration 3/1" means nothing in diagnose mode */
            snprintf(msg, sizeof(msg), GR_NVCRE_WF_DIAG_MSG_ROUND_FMT, cur,
                     sget(json_object_get(orch, "diagnose"), "stage"), running);
        if (set_exclusive(status, GR_NVCRE_COND_IN_PROGRESS, rr, msg, gen))
            json_array_append_new(
                later, json_pack("{s:s,s:s,s:s}", "type", "Normal", "reason", rr, "message", msg));
    }
    (void)relay_group;
    json_decref(relay);
    *requeue = soon ? 1000000000LL : c->requeue_ns;
    rc = write_status(c, wf, status, err);
    if (rc == GR_OK)
        emit_all(c, wf, later);
    json_decref(later);
    return rc;
}

/* --------------------------------------------------------------- reconcile */

static int reconcile_one(gr_nvcre_wf_ctl *c, const char *key, int64_t *requeue_after_ns,
                         gr_err *err);

static int64_t clock_ns(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int reconcile(void *ctx, const char *key, int64_t *requeue_after_ns, gr_err *err)
{
    gr_nvcre_wf_ctl *c = ctx;
    if (!c->observe)
        return reconcile_one(c, key, requeue_after_ns, err);
    int64_t w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    int rc = reconcile_one(c, key, requeue_after_ns, err);
    c->observe(c->observe_ctx, clock_ns(CLOCK_MONOTONIC) - w0,
               clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0);
    return rc;
}

static int reconcile_one(gr_nvcre_wf_ctl *c, const char *key, int64_t *requeue_after_ns,
                         gr_err *err)
{
    json_t *wf = NULL;
    int rc = gr_kube_cache_get(c->workflows, key, &wf, err);
    if (rc == GR_ENOTFOUND)
        return GR_OK;
    if (rc != GR_OK)
        return rc;
    const json_t *md = json_object_get(wf, "metadata");
    const char *ns = sget(md, "namespace"), *name = sget(md, "name");
    if (json_object_get(md, "deletionTimestamp")) {
        rc = handle_deletion(c, wf, requeue_after_ns, err);
        json_decref(wf);
        return rc;
    }
    int has_fin = 0;
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(md, "finalizers"), i, f) has_fin |=
        !strcmp(json_string_value(f) ? json_string_value(f) : "", GR_NVCRE_FINALIZER_WORKFLOW);
    if (!has_fin) {
        bool changed;
        rc = gr_kube_finalizer_ensure(c->c, &GVR_WORKFLOWS, ns, name, GR_NVCRE_FINALIZER_WORKFLOW,
                                      &changed, err);
        json_decref(wf);
        return rc == GR_ENOTFOUND ? GR_OK : rc; /* the update event brings us back */
    }
    if (cond_true(wf, GR_NVCRE_COND_SUCCEEDED, NULL) || cond_true(wf, GR_NVCRE_COND_FAILED, NULL)) {
        json_decref(wf);
        return GR_OK;
    }
    /* Decide on a fresh copy: the cache may lag behind our own last status
     * write, and a decision taken on a stale status could relaunch a Job
     * that was just deleted or finished. */
    {
        json_t *fresh = NULL;
        gr_kube_status st;
        rc = gr_kube_get(c->c, &GVR_WORKFLOWS, ns, name, NULL, &fresh, &st, err);
        if (rc != GR_OK) {
            json_decref(wf);
            return st.reason == GR_KUBE_REASON_NOT_FOUND ? GR_OK : rc;
        }
        json_decref(wf);
        wf = fresh;
        md = json_object_get(wf, "metadata");
        ns = sget(md, "namespace"); /* the old strings went with the old copy */
        name = sget(md, "name");
        if (json_object_get(md, "deletionTimestamp") ||
            cond_true(wf, GR_NVCRE_COND_SUCCEEDED, NULL) ||
            cond_true(wf, GR_NVCRE_COND_FAILED, NULL)) {
            json_decref(wf);
            *requeue_after_ns = 100000000; /* 100 ms: the deletion/terminal path next */
            return GR_OK;
        }
    }
    json_t *status = json_deep_copy(json_object_get(wf, "status"));
    if (!json_is_object(status)) {
        json_decref(status);
        status = json_object();
    }
    if (json_integer_value(gr_json_ptr_get(status, "/orchestration/totalGroups")) == 0)
        rc = discover_and_partition(c, wf, status, err);
    else
        rc = track_and_launch(c, wf, status, requeue_after_ns, err);
    json_decref(status);
    json_decref(wf);
    return rc;
}

int gr_nvcre_wf_ctl_register(gr_kube_mgr *m, const gr_nvcre_wf_ctl_opts *o, gr_nvcre_wf_ctl **out,
                             gr_err *err)
{
    *out = NULL;
    gr_nvcre_wf_ctl *c = calloc(1, sizeof(*c));
    if (!c)
        return gr_err_set(err, GR_ENOMEM, "workflow controller: out of memory");
    c->m = m;
    c->c = gr_kube_mgr_client(m);
    c->requeue_ns = o && o->requeue_ns > 0 ? o->requeue_ns : 15LL * 1000000000LL;
    c->observe = o ? o->observe : NULL;
    c->observe_ctx = o ? o->observe_ctx : NULL;
    const char *ns = o ? o->ns : NULL;
    int rc;
    if ((rc = gr_kube_mgr_cache(
             m, &(gr_kube_cache_opts){.gvr = GVR_WORKFLOWS, .ns = ns, .optional = true},
             &c->workflows, err)) != GR_OK ||
        (rc = gr_kube_mgr_cache(m,
                                &(gr_kube_cache_opts){.gvr = GVR_JOBS, .ns = ns, .optional = true},
                                &c->jobs, err)) != GR_OK)
        goto fail;
    if ((rc = gr_kube_events_new(c->c, "workflow-controller", NULL, &c->ev, err)) != GR_OK)
        goto fail;
    if ((rc = gr_kube_mgr_add_controller(
             m,
             &(gr_kube_ctl_opts){.name = "workflow",
                                 .workers = o && o->workers > 0 ? o->workers : 1,
                                 .reconcile = reconcile,
                                 .ctx = c},
             &c->ctl, err)) != GR_OK)
        goto fail;
    static const char kind[] = GR_NVCRE_KIND_WORKFLOW;
    if ((rc = gr_kube_ctl_watch(c->ctl, c->workflows, NULL, NULL, err)) != GR_OK ||
        (rc = gr_kube_ctl_watch(c->ctl, c->jobs, gr_kube_map_owner, (void *)(uintptr_t)kind,
                                err)) != GR_OK)
        goto fail;
    *out = c;
    return GR_OK;
fail:
    gr_nvcre_wf_ctl_free(c);
    return rc;
}

void gr_nvcre_wf_ctl_free(gr_nvcre_wf_ctl *c)
{
    if (!c)
        return;
    gr_kube_events_free(c->ev);
    free(c);
}
