/*
 * gr_nvcre_job_ctl.c — the Job controller's I/O (see gr_nvcre_job_ctl.h):
 * reads the world through the runtime's caches and uncached API calls,
 * lets gr_nvcre_job decide, writes the status once and records Events.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gr_kube_helpers.h"
#include "gr_kube_rt.h"
#include "gr_log.h"
#include "gr_nvcre_job.h"
#include "gr_nvcre_job_ctl.h"
#include "gr_nvcre_types.h"

#define MOD           "job-controller"
#define FIELD_MANAGER "nvcre-job-controller"
#define IDX_JOB       "nvcre-job"
#define IDX_NODE      "node"
#define IDX_JOBREF    "jobref"
#define LOG_FILE_MAX  ((size_t)64 * 1024 * 1024) /* a case's pod log file */
#define DRAIN_REQUEUE (2 * GR_NVCRE_NS_PER_S)

static const gr_kube_gvr JOBS = {GR_NVCRE_GROUP, GR_NVCRE_VERSION, GR_NVCRE_PLURAL_JOBS};
static const gr_kube_gvr SSAR = {"authorization.k8s.io", "v1", "selfsubjectaccessreviews"};
static const gr_kube_gvr MEAS[2] = {
    {GR_NVCRE_GROUP, GR_NVCRE_VERSION, GR_NVCRE_PLURAL_GOODPUT_MEASUREMENTS},
    {GR_NVCRE_GROUP, GR_NVCRE_VERSION, GR_NVCRE_PLURAL_BANDWIDTH_MEASUREMENTS},
};

struct gr_nvcre_job_ctl {
    gr_kube_mgr *m;
    gr_kube_client *c;
    gr_kube_cache *jobs, *workloads, *pods, *nodes;
    gr_kube_cache *meas[2]; /* GoodputMeasurements, BandwidthMeasurements (issue 18) */
    gr_kube_ctl *ctl;
    gr_kube_events *events;
    const gr_nvcre_workload_adapter *adapter; /* the one workload kind today */
    gr_kube_gvr wl_gvr;
    int64_t deadline_ns;
    char logs_dir[1024];
    pthread_mutex_t mu;
    json_t *failures; /* "ns/name" → consecutive failed creates */
    json_t *created;  /* "ns/name" → uid of the workload this process created */
    void (*observe)(void *ctx, double seconds);
    void *observe_ctx;
    gr_nvcre_job_counters counters;
};

static const char *sget(const json_t *o, const char *a, const char *b)
{
    const json_t *x = json_object_get(o, a);
    return json_string_value(b ? json_object_get(x, b) : x);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * GR_NVCRE_NS_PER_S + ts.tv_nsec;
}

/* ---- create-failure counters ----------------------------------------- */

static unsigned failures_bump(gr_nvcre_job_ctl *jc, const char *key, int reset)
{
    pthread_mutex_lock(&jc->mu);
    unsigned n = 0;
    if (reset) {
        json_object_del(jc->failures, key);
    } else {
        n = (unsigned)json_integer_value(json_object_get(jc->failures, key)) + 1;
        json_object_set_new(jc->failures, key, json_integer(n));
    }
    pthread_mutex_unlock(&jc->mu);
    return n;
}

/* ---- event mapping ---------------------------------------------------- */

/* Pod → its Job's key. */
static size_t map_pod(void *ctx, const json_t *obj, char (*keys)[GR_KUBE_KEY_MAX], size_t max)
{
    (void)ctx;
    const json_t *md = json_object_get(obj, "metadata");
    const char *ns = sget(md, "namespace", NULL);
    const char *job = sget(json_object_get(md, "labels"), GR_NVCRE_LABEL_JOB, NULL);
    if (!max || !ns || !job || !*job)
        return 0;
    return snprintf(keys[0], GR_KUBE_KEY_MAX, "%s/%s", ns, job) < GR_KUBE_KEY_MAX ? 1 : 0;
}

static void enqueue_node_jobs(gr_nvcre_job_ctl *jc, const char *node)
{
    if (!node || !jc->ctl)
        return;
    json_t *pods = NULL;
    if (gr_kube_cache_list(jc->pods, IDX_NODE, node, &pods, NULL) != GR_OK)
        return;
    size_t i;
    json_t *p;
    char key[1][GR_KUBE_KEY_MAX];
    json_array_foreach(pods, i, p)
    {
        if (map_pod(NULL, p, key, 1) == 1)
            gr_kube_ctl_enqueue(jc->ctl, key[0]);
    }
    json_decref(pods);
}

/* The parts of a Node the health expression is expected to look at; the
 * heartbeat times inside conditions are left out. */
static json_t *node_signal(const json_t *n)
{
    const json_t *md = json_object_get(n, "metadata");
    const json_t *sp = json_object_get(n, "spec");
    json_t *conds = json_array();
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(json_object_get(n, "status"), "conditions"), i, c)
    {
        json_array_append_new(
            conds, json_pack("{s:O?,s:O?,s:O?}", "type", json_object_get(c, "type"), "status",
                             json_object_get(c, "status"), "reason", json_object_get(c, "reason")));
    }
    return json_pack("{s:O?,s:O?,s:O?,s:O?,s:o}", "labels", json_object_get(md, "labels"),
                     "annotations", json_object_get(md, "annotations"), "taints",
                     json_object_get(sp, "taints"), "unschedulable",
                     json_object_get(sp, "unschedulable"), "conditions", conds);
}

static void node_add(void *ctx, const json_t *obj)
{
    enqueue_node_jobs(ctx, sget(json_object_get(obj, "metadata"), "name", NULL));
}

static void node_update(void *ctx, const json_t *old_obj, const json_t *new_obj)
{
    json_t *a = node_signal(old_obj), *b = node_signal(new_obj);
    int same = a && b && json_equal(a, b);
    json_decref(a);
    json_decref(b);
    if (!same)
        node_add(ctx, new_obj);
}

/* ---- pod logs --------------------------------------------------------- */

/* why = a [": " b], truncated to whysz. */
static void set_why(char *why, size_t whysz, const char *a, const char *b)
{
    gr_buf t;
    gr_buf_init(&t, 64 * 1024);
    gr_buf_puts(&t, a ? a : "");
    if (b) {
        gr_buf_puts(&t, ": ");
        gr_buf_puts(&t, b);
    }
    size_t n = t.len < whysz - 1 ? t.len : whysz - 1;
    memcpy(why, t.data ? t.data : "", n);
    why[n] = '\0';
    gr_buf_free(&t);
}

static int read_log(gr_nvcre_job_ctl *jc, const char *ns, const char *pod, const char *container,
                    gr_buf *out, char *why, size_t whysz)
{
    if (jc->logs_dir[0]) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s/%s.txt", jc->logs_dir, ns, pod);
        FILE *f = fopen(path, "rb");
        if (!f) {
            if (errno == ENOENT) {
                gr_log(GR_LOG_DEBUG, MOD, "no pod log file", GR_KV_STR("path", path), GR_KV_END);
                return GR_OK; /* a pod with no file has an empty log */
            }
            set_why(why, whysz, path, strerror(errno));
            return GR_EIO;
        }
        char buf[8192];
        size_t r;
        int rc = GR_OK;
        while (rc == GR_OK && (r = fread(buf, 1, sizeof buf, f)) > 0)
            rc = gr_buf_append(out, buf, r);
        fclose(f);
        gr_log(GR_LOG_DEBUG, MOD, "pod log read", GR_KV_STR("path", path),
               GR_KV_INT("bytes", (long long)out->len), GR_KV_END);
        if (rc != GR_OK)
            set_why(why, whysz, path, "larger than the 64 MiB cap");
        return rc;
    }
    gr_kube_log_opts lo = {.container = container,
                           .tail_lines = GR_NVCRE_FAILURE_LOG_MAX_LINES,
                           .limit_bytes = 4 * GR_NVCRE_FAILURE_LOG_MAX_BYTES};
    gr_kube_status st;
    gr_err err;
    gr_kube_status_clear(&st);
    int rc = gr_kube_pod_logs(jc->c, ns, pod, &lo, out, &st, &err);
    if (rc == GR_OK)
        return GR_OK;
    /* A terminated container may be gone; its previous instance may not. */
    lo.previous = true;
    gr_buf_reset(out);
    if (gr_kube_pod_logs(jc->c, ns, pod, &lo, out, &st, NULL) == GR_OK)
        return GR_OK;
    set_why(why, whysz, st.message[0] ? st.message : err.msg, NULL);
    return rc;
}

static int set_failure_log(gr_nvcre_job_ctl *jc, const char *ns, const char *job,
                           const json_t *pods, json_t *status)
{
    gr_nvcre_failure_pick pk;
    gr_nvcre_job_failure_pick(pods, &pk);
    gr_buf log;
    gr_buf_init(&log, LOG_FILE_MAX);
    char why[512] = "";
    int have = 0;
    if (pk.found)
        have = read_log(jc, ns, pk.pod, pk.container, &log, why, sizeof why) == GR_OK;
    json_t *fl = NULL;
    int rc = gr_nvcre_job_failure_log(&pk, job, have ? (log.data ? log.data : "") : NULL,
                                      have ? log.len : 0, why, &fl);
    gr_buf_free(&log);
    if (rc == GR_OK)
        json_object_set_new(status, GR_NVCRE_F_FAILURE_LOG, fl);
    return rc;
}

/* ---- node health ------------------------------------------------------ */

static int pod_active(const json_t *p)
{
    const char *phase = sget(json_object_get(p, "status"), "phase", NULL);
    return !phase || strcmp(phase, "Running") == 0 || strcmp(phase, "Pending") == 0;
}

/* A node is blamed for good (failedNodes is additive), so a verdict from the
 * pod cache is confirmed with a live read of the pod first: a cache that has
 * not seen the pod finish yet must not fail the node it ran on. 1 when the
 * pod is still running or pending on `node`; 0 when it is not, or when the
 * read failed (the next pass judges again). */
static int pod_still_on(gr_nvcre_job_ctl *jc, const char *ns, const json_t *cached,
                        const char *node)
{
    const char *name = sget(json_object_get(cached, "metadata"), "name", NULL);
    if (!name || !ns)
        return 0;
    /* A LIST by name, not a GET: the manager's role lists and watches
     * pods, it does not get them (deploy/helm/.../rbac.yaml). */
    char fs[320];
    snprintf(fs, sizeof fs, "metadata.name=%s", name);
    gr_kube_opts lo = {.field_selector = fs, .limit = 1};
    json_t *list = NULL;
    gr_kube_status st;
    gr_kube_status_clear(&st);
    if (gr_kube_list(jc->c, &GR_KUBE_PODS, ns, &lo, &list, &st, NULL) != GR_OK)
        return 0;
    const json_t *live = json_array_get(json_object_get(list, "items"), 0);
    const char *ln = sget(json_object_get(live, "spec"), "nodeName", NULL);
    int ok = live && pod_active(live) && ln && strcmp(ln, node) == 0;
    json_decref(list);
    return ok;
}

/* 1 when status.failedNodes already names `node` (no need to confirm). */
static int node_listed_failed(const json_t *status, const char *node)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(status, GR_NVCRE_F_FAILED_NODES), i, e)
    {
        const char *nm = json_string_value(json_object_get(e, "name"));
        if (nm && strcmp(nm, node) == 0)
            return 1;
    }
    return 0;
}

/* Evaluate the Job's expression over the Nodes of its running or pending
 * pods; mark HardwareFailed (each verdict confirmed by pod_still_on()).
 * Returns the number of newly failed nodes. */
static int check_nodes(gr_nvcre_job_ctl *jc, const json_t *job, const json_t *pods, json_t *status,
                       int64_t now)
{
    const json_t *nhm =
        json_object_get(json_object_get(job, "spec"), GR_NVCRE_F_NODE_HEALTH_MONITOR);
    if (!json_is_object(nhm))
        return 0;
    const char *expr = sget(json_object_get(nhm, GR_NVCRE_F_CEL), GR_NVCRE_F_EXPRESSION, NULL);
    gr_cel_program *prog = NULL;
    gr_err err;
    const char *key_ns = sget(json_object_get(job, "metadata"), "namespace", NULL);
    const char *key_name = sget(json_object_get(job, "metadata"), "name", NULL);
    if (gr_nvcre_node_health_compile(expr, &prog, &err) != GR_OK) {
        gr_log(GR_LOG_WARN, MOD, "node health expression does not compile",
               GR_KV_STR("job", key_name), GR_KV_STR("namespace", key_ns),
               GR_KV_STR("error", err.msg), GR_KV_END);
        return 0;
    }
    int64_t t0 = mono_ns();
    const char *failed[64];
    size_t nf = 0, evaluated = 0;
    json_t *seen = json_object();
    size_t i;
    const json_t *p;
    json_array_foreach(pods, i, p)
    {
        const char *node = sget(json_object_get(p, "spec"), "nodeName", NULL);
        if (!node || !*node || json_object_get(seen, node) || !pod_active(p))
            continue;
        json_t *n = NULL;
        if (gr_kube_cache_get(jc->nodes, node, &n, NULL) != GR_OK)
            continue; /* deleted nodes are ignored */
        int matched = 0;
        evaluated++;
        if (gr_nvcre_node_health_eval(prog, n, &matched, &err) != GR_OK) {
            gr_log(GR_LOG_WARN, MOD, "node health expression failed", GR_KV_STR("job", key_name),
                   GR_KV_STR("namespace", key_ns), GR_KV_STR("node", node),
                   GR_KV_STR("error", err.msg), GR_KV_END);
        } else if (matched && nf < sizeof failed / sizeof failed[0]) {
            if (!node_listed_failed(status, node) && !pod_still_on(jc, key_ns, p, node)) {
                json_decref(n); /* another pod may still hold this node */
                continue;
            }
            failed[nf++] =
                json_string_value(json_object_get(json_object_get(n, "metadata"), "name"));
            json_object_set_new(seen, node, n); /* keep the name alive */
            continue;
        }
        json_object_set_new(seen, node, json_true());
        json_decref(n);
    }
    gr_cel_program_free(prog);
    double secs = (double)(mono_ns() - t0) / 1e9;
    int added = 0;
    int was = 0;
    const char *hs = json_string_value(
        json_object_get(gr_nvcre_job_condition(status, GR_NVCRE_COND_HARDWARE_FAILED), "status"));
    was = hs && strcmp(hs, "True") == 0;
    if (nf)
        added = gr_nvcre_job_mark_hardware_failed(
            status, failed, nf,
            json_integer_value(json_object_get(json_object_get(job, "metadata"), "generation")),
            now);
    json_decref(seen);
    pthread_mutex_lock(&jc->mu);
    jc->counters.nodes_evaluated += evaluated;
    gr_nvcre_job_observe_health(&jc->counters, secs);
    if (nf && !was)
        jc->counters.hardware_failed_jobs++;
    pthread_mutex_unlock(&jc->mu);
    return added < 0 ? 0 : added;
}

/* ---- creation --------------------------------------------------------- */

/* Forbidden: may we create the workload kind in ns at all? 1 = RBAC denies. */
static int rbac_denied(gr_nvcre_job_ctl *jc, const char *ns)
{
    json_t *rev = json_pack("{ss ss s{s{ss ss ss ss ss}}}", "apiVersion", "authorization.k8s.io/v1",
                            "kind", "SelfSubjectAccessReview", "spec", "resourceAttributes",
                            "namespace", ns, "verb", "create", "group", jc->wl_gvr.group, "version",
                            jc->wl_gvr.version, "resource", jc->wl_gvr.resource);
    json_t *out = NULL;
    gr_kube_status st;
    gr_kube_status_clear(&st);
    int rc = rev ? gr_kube_create(jc->c, &SSAR, NULL, rev, NULL, &out, &st, NULL) : GR_ENOMEM;
    json_decref(rev);
    int denied = 0;
    if (rc == GR_OK)
        denied = !json_is_true(json_object_get(json_object_get(out, "status"), "allowed"));
    json_decref(out);
    return denied;
}

static void try_create(gr_nvcre_job_ctl *jc, const json_t *job, const char *key,
                       gr_nvcre_job_obs *o, char *msg, size_t msgsz)
{
    const char *ns = o->ns, *uid = sget(json_object_get(job, "metadata"), "uid", NULL);
    json_t *obj = NULL;
    gr_err err;
    gr_err_clear(&err);
    if (gr_nvcre_job_build_workload(job, NULL, &obj, &err) != GR_OK) {
        o->create =
            (err.code == GR_EUNSUPPORTED || strcmp(err.msg, GR_NVCRE_MSG_NO_WORKLOAD_TYPE) == 0)
                ? GR_NVCRE_CREATE_UNSUPPORTED
                : GR_NVCRE_CREATE_BUILD_ERROR;
        snprintf(msg, msgsz, "%s", err.msg);
        o->create_msg = msg;
        return;
    }
    gr_kube_opts ko = {.field_manager = FIELD_MANAGER};
    gr_kube_status st;
    gr_kube_status_clear(&st);
    json_t *made = NULL;
    int rc = gr_kube_create(jc->c, &jc->wl_gvr, ns, obj, &ko, &made, &st, &err);
    json_decref(obj);
    snprintf(msg, msgsz, "%s", st.message[0] ? st.message : err.msg);
    o->create_msg = msg;
    if (rc == GR_OK) {
        o->create = GR_NVCRE_CREATE_OK;
        /* Remember it: if the status write that records it loses a race,
         * the next attempt's 409 is our own create, not an adoption. */
        const char *wuid = sget(json_object_get(made, "metadata"), "uid", NULL);
        pthread_mutex_lock(&jc->mu);
        if (wuid)
            json_object_set_new(jc->created, key, json_string(wuid));
        pthread_mutex_unlock(&jc->mu);
    } else if (st.reason == GR_KUBE_REASON_ALREADY_EXISTS) {
        /* Live read: the cache may not have it yet (upstream #384/#385). */
        json_t *live = NULL;
        if (gr_kube_get(jc->c, &jc->wl_gvr, ns, o->workload_name, NULL, &live, NULL, NULL) !=
            GR_OK) {
            o->create = GR_NVCRE_CREATE_TRANSIENT;
        } else if (gr_nvcre_job_owns(live, uid) && gr_kube_is_deleting(live)) {
            /* Our previous workload, deleted by a checkpoint restart: wait
             * until it is gone, then create the new one. */
            o->create = GR_NVCRE_CREATE_FOREIGN_DELETING;
        } else if (gr_nvcre_job_owns(live, uid)) {
            const char *wuid = sget(json_object_get(live, "metadata"), "uid", NULL);
            pthread_mutex_lock(&jc->mu);
            const char *mine = json_string_value(json_object_get(jc->created, key));
            int ours = mine && wuid && strcmp(mine, wuid) == 0;
            pthread_mutex_unlock(&jc->mu);
            o->create = ours ? GR_NVCRE_CREATE_OK : GR_NVCRE_CREATE_ADOPTED;
        } else if (gr_kube_is_deleting(live)) {
            o->create = GR_NVCRE_CREATE_FOREIGN_DELETING;
        } else {
            o->create = GR_NVCRE_CREATE_FOREIGN;
        }
        json_decref(live);
    } else if (st.reason == GR_KUBE_REASON_FORBIDDEN) {
        o->create = rbac_denied(jc, ns) ? GR_NVCRE_CREATE_RBAC_DENIED : GR_NVCRE_CREATE_REJECTED;
    } else if (st.reason == GR_KUBE_REASON_INVALID || st.reason == GR_KUBE_REASON_BAD_REQUEST) {
        o->create = GR_NVCRE_CREATE_REJECTED;
    } else {
        o->create = GR_NVCRE_CREATE_TRANSIENT;
    }
    json_decref(made);
    int ok = o->create == GR_NVCRE_CREATE_OK || o->create == GR_NVCRE_CREATE_ADOPTED;
    o->create_failures = failures_bump(jc, key, ok);
}

/* ---- deletion --------------------------------------------------------- */

static int finalize(gr_nvcre_job_ctl *jc, const json_t *job, const char *ns, const char *name,
                    const char *wname, int64_t *requeue, gr_err *err)
{
    if (!gr_kube_finalizer_has(job, GR_NVCRE_FINALIZER_JOB))
        return GR_OK;
    const char *uid = sget(json_object_get(job, "metadata"), "uid", NULL);
    json_t *wl = NULL;
    gr_kube_status st;
    gr_kube_status_clear(&st);
    int rc = gr_kube_get(jc->c, &jc->wl_gvr, ns, wname, NULL, &wl, &st, err);
    if (rc == GR_OK && gr_nvcre_job_owns(wl, uid)) {
        if (!gr_kube_is_deleting(wl)) {
            gr_kube_opts d = {.propagation = "Background",
                              .precondition_uid =
                                  sget(json_object_get(wl, "metadata"), "uid", NULL)};
            rc = gr_kube_delete(jc->c, &jc->wl_gvr, ns, wname, &d, NULL, &st, err);
            if (rc != GR_OK && rc != GR_ENOTFOUND && st.reason != GR_KUBE_REASON_CONFLICT) {
                json_decref(wl);
                return rc;
            }
        }
        json_decref(wl);
        *requeue = DRAIN_REQUEUE;
        return GR_OK; /* come back once it is gone */
    }
    json_decref(wl);
    if (rc != GR_OK && rc != GR_ENOTFOUND && st.reason != GR_KUBE_REASON_NOT_FOUND)
        return rc;
    /* The pods must be gone too: an uncached LIST, not the cache. */
    char sel[512];
    snprintf(sel, sizeof sel, "%s=%s", GR_NVCRE_LABEL_JOB, name);
    gr_kube_opts lo = {.label_selector = sel, .limit = 1};
    json_t *list = NULL;
    rc = gr_kube_list(jc->c, &GR_KUBE_PODS, ns, &lo, &list, &st, err);
    if (rc != GR_OK)
        return rc;
    size_t left = json_array_size(json_object_get(list, "items"));
    json_decref(list);
    if (left) {
        gr_log(GR_LOG_INFO, MOD, "waiting for the workload's pods to be gone",
               GR_KV_STR("job", name), GR_KV_STR("namespace", ns), GR_KV_END);
        *requeue = DRAIN_REQUEUE;
        return GR_OK;
    }
    bool changed = false;
    rc = gr_kube_finalizer_drop(jc->c, &JOBS, ns, name, GR_NVCRE_FINALIZER_JOB, &changed, err);
    char key[GR_KUBE_KEY_MAX];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    failures_bump(jc, key, 1);
    pthread_mutex_lock(&jc->mu);
    json_object_del(jc->created, key);
    pthread_mutex_unlock(&jc->mu);
    return rc == GR_ENOTFOUND ? GR_OK : rc;
}

/* ---- measurements (issue 18) -------------------------------------------
 * The Job's side of GoodputMeasurement / BandwidthMeasurement, kept apart
 * from the workload code above: creating them (§1.2, §3.11), reading the
 * stall and checkpoint inputs (§3.5, §3.6), resetting the GoodputMeasurement
 * on a checkpoint restart, and the threshold verdict (§3.9). The decisions
 * are gr_nvcre_job_meas.c's. */

static const char *const MEAS_KIND[2] = {GR_NVCRE_KIND_GOODPUT_MEASUREMENT,
                                         GR_NVCRE_KIND_BANDWIDTH_MEASUREMENT};

/* Measurement → its Job's key (spec.jobRef.name, same namespace). */
static size_t map_measurement(void *ctx, const json_t *obj, char (*keys)[GR_KUBE_KEY_MAX],
                              size_t max)
{
    (void)ctx;
    const char *ns = sget(json_object_get(obj, "metadata"), "namespace", NULL);
    const char *job = sget(json_object_get(json_object_get(obj, "spec"), "jobRef"), "name", NULL);
    if (!max || !ns || !job || !*job)
        return 0;
    return snprintf(keys[0], GR_KUBE_KEY_MAX, "%s/%s", ns, job) < GR_KUBE_KEY_MAX ? 1 : 0;
}

/* The Job's measurement of kind k from the cache (caller decrefs) or NULL:
 * "<job>-goodput" / "<job>-bandwidth" when it references the Job, else the
 * first (by name) of the namespace whose spec.jobRef names it (§3.5:
 * "auto-created, or found by list"). */
static json_t *meas_find(gr_nvcre_job_ctl *jc, gr_nvcre_meas_kind k, const char *ns,
                         const char *job)
{
    char mname[GR_NVCRE_MAX_K8S_NAME_LEN + 1], key[GR_KUBE_KEY_MAX];
    json_t *m = NULL;
    if (gr_nvcre_job_measurement_name(job, k, mname) == GR_OK &&
        snprintf(key, sizeof key, "%s/%s", ns, mname) < (int)sizeof key &&
        gr_kube_cache_get(jc->meas[k], key, &m, NULL) == GR_OK) {
        if (gr_nvcre_job_measurement_for(m, job))
            return m;
        json_decref(m);
        m = NULL;
    }
    json_t *all = NULL;
    if (gr_kube_cache_list(jc->meas[k], IDX_JOBREF, job, &all, NULL) != GR_OK)
        return NULL;
    const char *best = NULL;
    size_t i;
    json_t *it;
    json_array_foreach(all, i, it)
    {
        const json_t *md = json_object_get(it, "metadata");
        const char *mns = sget(md, "namespace", NULL), *n = sget(md, "name", NULL);
        if (mns && n && strcmp(mns, ns) == 0 && gr_nvcre_job_measurement_for(it, job) &&
            (!best || strcmp(n, best) < 0)) {
            best = n;
            m = it;
        }
    }
    if (m)
        json_incref(m);
    json_decref(all);
    return m;
}

/* Create the measurements spec.goodputMeasurement / bandwidthMeasurement
 * ask for, unless the cache has them; AlreadyExists is success (a restart
 * of the manager, a cache behind the server). Failures are a Warning Event
 * MeasurementCreationError and never stop the Job's reconcile (§3.1). */
static void meas_ensure(gr_nvcre_job_ctl *jc, const json_t *job, const char *ns, const char *name)
{
    for (int k = GR_NVCRE_MEAS_GOODPUT; k <= GR_NVCRE_MEAS_BANDWIDTH; k++) {
        const json_t *spec = json_object_get(job, "spec");
        if (!json_is_object(json_object_get(spec, gr_nvcre_job_measurement_field(k))))
            continue;
        char mname[GR_NVCRE_MAX_K8S_NAME_LEN + 1], key[GR_KUBE_KEY_MAX];
        json_t *have = NULL;
        if (gr_nvcre_job_measurement_name(name, k, mname) == GR_OK &&
            snprintf(key, sizeof key, "%s/%s", ns, mname) < (int)sizeof key &&
            gr_kube_cache_get(jc->meas[k], key, &have, NULL) == GR_OK) {
            json_decref(have);
            continue;
        }
        json_t *obj = NULL;
        gr_err err;
        gr_err_clear(&err);
        gr_kube_status st;
        gr_kube_status_clear(&st);
        int rc = gr_nvcre_job_build_measurement(job, k, &obj, &err);
        if (rc == GR_OK && obj) {
            gr_kube_opts ko = {.field_manager = FIELD_MANAGER};
            rc = gr_kube_create(jc->c, &MEAS[k], ns, obj, &ko, NULL, &st, &err);
            if (rc != GR_OK && st.reason == GR_KUBE_REASON_ALREADY_EXISTS)
                rc = GR_OK;
            if (rc == GR_OK)
                gr_log(GR_LOG_INFO, MOD, "measurement created", GR_KV_STR("job", name),
                       GR_KV_STR("namespace", ns), GR_KV_STR("kind", MEAS_KIND[k]),
                       GR_KV_STR("name", mname), GR_KV_END);
        }
        json_decref(obj);
        if (rc != GR_OK) {
            char msg[GR_NVCRE_EVENT_NOTE_MAX + 1];
            set_why(msg, sizeof msg, MEAS_KIND[k], st.message[0] ? st.message : err.msg);
            char full[GR_NVCRE_EVENT_NOTE_MAX + 32];
            snprintf(full, sizeof full, "Failed to ensure %s", msg);
            snprintf(msg, sizeof msg, "%.*s", (int)(sizeof msg - 1), full);
            gr_log(GR_LOG_WARN, MOD, "cannot create measurement", GR_KV_STR("job", name),
                   GR_KV_STR("namespace", ns), GR_KV_STR("error", msg), GR_KV_END);
            if (gr_kube_event(jc->events, job, "Warning", "MeasurementCreationError", msg, NULL) !=
                GR_OK)
                gr_log(GR_LOG_WARN, MOD, "cannot record event",
                       GR_KV_STR("reason", "MeasurementCreationError"), GR_KV_END);
        }
    }
}

/* Stall and checkpoint-restart inputs from the Job's GoodputMeasurement:
 * fills *stall and sets o->stall / o->restart_eligible. Returns the
 * GoodputMeasurement (caller decrefs) or NULL. */
static json_t *meas_observe(gr_nvcre_job_ctl *jc, const json_t *spec, const json_t *status,
                            const char *ns, const char *name, gr_nvcre_job_stall_in *stall,
                            gr_nvcre_job_obs *o)
{
    json_t *gm = meas_find(jc, GR_NVCRE_MEAS_GOODPUT, ns, name);
    if (!gm)
        return NULL;
    gr_measure_gm_view v;
    gr_measure_gm_view_from(gm, &v);
    gr_nvcre_job_stall_from(spec, &v, stall);
    o->stall = stall;
    o->restart_eligible = gr_nvcre_job_restart_eligible(spec, status, v.last_checkpoint_step);
    return gm;
}

/* §3.6: after a checkpoint restart the GoodputMeasurement forgets the last
 * run's step clock (gr_measure_gm_restart_patch()), so the stall clocks
 * start over and the resumed run is accounted as an interruption. */
static void meas_restart_reset(gr_nvcre_job_ctl *jc, const json_t *gm, const char *ns,
                               int64_t now_ns)
{
    const char *gname = sget(json_object_get(gm, "metadata"), "name", NULL);
    json_t *patch = NULL;
    gr_err err;
    gr_err_clear(&err);
    int rc = gname ? gr_measure_gm_restart_patch(gm, now_ns, &patch, &err) : GR_EINVAL;
    if (rc == GR_OK) {
        gr_kube_opts po = {.subresource = "status", .field_manager = FIELD_MANAGER};
        rc = gr_kube_patch(jc->c, &MEAS[GR_NVCRE_MEAS_GOODPUT], ns, gname, GR_KUBE_PATCH_MERGE,
                           patch, &po, NULL, NULL, &err);
    }
    json_decref(patch);
    if (rc != GR_OK)
        gr_log(GR_LOG_WARN, MOD, "cannot reset the GoodputMeasurement after a restart",
               GR_KV_STR("namespace", ns), GR_KV_STR("name", gname ? gname : ""),
               GR_KV_STR("error", err.msg), GR_KV_END);
}

/* A finished Job: the threshold verdict once it Succeeded (§3.9). */
static int meas_thresholds(gr_nvcre_job_ctl *jc, json_t *job, json_t *status, int64_t *requeue,
                           gr_err *err)
{
    const json_t *md = json_object_get(job, "metadata");
    const json_t *spec = json_object_get(job, "spec");
    if (!gr_nvcre_job_thresholds_pending(spec, status))
        return GR_OK;
    const char *ns = sget(md, "namespace", NULL), *name = sget(md, "name", NULL);
    json_t *gm = meas_find(jc, GR_NVCRE_MEAS_GOODPUT, ns, name);
    json_t *bm = meas_find(jc, GR_NVCRE_MEAS_BANDWIDTH, ns, name);
    gr_nvcre_job_verdict v;
    int rc = gr_nvcre_job_thresholds_step(
        spec, status, gm, bm,
        sget(json_object_get(md, "annotations"), GR_NVCRE_ANN_GROUP_NODES, NULL),
        json_integer_value(json_object_get(md, "generation")), gr_kube_now_ns(), &v, err);
    json_decref(gm);
    json_decref(bm);
    if (rc != GR_OK)
        return rc;
    if (v.pending) {
        *requeue = v.requeue_ns;
        return GR_OK;
    }
    if (!v.changed)
        return GR_OK;
    gr_kube_status st;
    gr_kube_status_clear(&st);
    rc = gr_kube_update_status(jc->c, &JOBS, ns, job, NULL, NULL, &st, err);
    if (rc != GR_OK && st.reason == GR_KUBE_REASON_CONFLICT) {
        *requeue = GR_NVCRE_JOB_REQUEUE_IMMEDIATE_NS;
        return GR_OK;
    }
    if (rc != GR_OK)
        return rc;
    if (v.event &&
        gr_kube_event(jc->events, job, v.event_type, v.event_reason, v.event_msg, NULL) != GR_OK)
        gr_log(GR_LOG_WARN, MOD, "cannot record event", GR_KV_STR("reason", v.event_reason),
               GR_KV_END);
    return GR_OK;
}

/* The cached workload is not the one this process created last for the
 * Job (its uid differs): after a checkpoint restart the cache can still
 * hold the deleted previous run, whose Failed status must not count for
 * the new one. The caller then reads the live object. */
static int stale_workload(gr_nvcre_job_ctl *jc, const char *key, const json_t *w)
{
    const char *wuid = sget(json_object_get(w, "metadata"), "uid", NULL);
    pthread_mutex_lock(&jc->mu);
    const char *mine = json_string_value(json_object_get(jc->created, key));
    int stale = mine && wuid && strcmp(mine, wuid) != 0;
    pthread_mutex_unlock(&jc->mu);
    return stale;
}

/* ---- the reconcile ---------------------------------------------------- */

static void record(gr_nvcre_job_ctl *jc, const json_t *job, const char *type, const char *reason,
                   const char *msg)
{
    gr_err err;
    if (gr_kube_event(jc->events, job, type, reason, msg, &err) != GR_OK)
        gr_log(GR_LOG_WARN, MOD, "cannot record event", GR_KV_STR("reason", reason),
               GR_KV_STR("error", err.msg), GR_KV_END);
}

static int reconcile_job(gr_nvcre_job_ctl *jc, const char *key, json_t *job, int64_t *requeue,
                         gr_err *err)
{
    const json_t *md = json_object_get(job, "metadata");
    const char *ns = sget(md, "namespace", NULL);
    const char *name = sget(md, "name", NULL);
    json_t *spec = json_object_get(job, "spec");
    char wname[GR_NVCRE_MAX_WORKLOAD_NAME_LEN + 1];
    if (!ns || !name || gr_nvcre_job_workload_name(name, wname) != GR_OK)
        return gr_err_set(err, GR_EINVAL, "Job %s: bad metadata", key);
    json_t *status = json_object_get(job, "status");
    const char *ref_name = sget(status, GR_NVCRE_F_WORKLOAD_REF, "name");
    /* A copy: a checkpoint restart removes status.workloadRef, and the name
     * is still needed to delete that workload afterwards. */
    char wlbuf[254]; /* a DNS subdomain name */
    snprintf(wlbuf, sizeof wlbuf, "%s", ref_name ? ref_name : wname);
    const char *wl = wlbuf;

    if (gr_kube_is_deleting(job))
        return finalize(jc, job, ns, name, wl, requeue, err);

    if (!gr_kube_finalizer_has(job, GR_NVCRE_FINALIZER_JOB)) {
        /* One update of our cached copy (a deep copy: ours to change), not
         * a GET then an update: the resourceVersion it carries makes a
         * stale copy a 409, and the newer version's watch event brings the
         * Job back. The status is not written by this update (the status
         * subresource). */
        json_t *jmd = json_object_get(job, "metadata");
        json_t *fins = json_object_get(jmd, "finalizers");
        if (!json_is_array(fins)) {
            fins = json_array();
            if (!fins || json_object_set_new(jmd, "finalizers", fins) != 0)
                return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        if (json_array_append_new(fins, json_string(GR_NVCRE_FINALIZER_JOB)) != 0)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        gr_kube_status st;
        gr_kube_status_clear(&st);
        int rc = gr_kube_update(jc->c, &JOBS, ns, job, NULL, NULL, &st, err);
        if (rc == GR_OK || rc == GR_ENOTFOUND || st.reason == GR_KUBE_REASON_NOT_FOUND)
            return GR_OK; /* the update event brings it back; a gone Job needs nothing */
        if (st.reason == GR_KUBE_REASON_CONFLICT) {
            *requeue = GR_NVCRE_JOB_REQUEUE_IMMEDIATE_NS;
            return GR_OK;
        }
        return rc;
    }
    if (!json_is_object(status)) {
        status = json_object();
        json_object_set_new(job, "status", status);
    }
    if (gr_nvcre_job_terminal(status))
        return meas_thresholds(jc, job, status, requeue, err); /* finished: only the verdict */

    gr_nvcre_job_obs o;
    memset(&o, 0, sizeof o);
    o.now_ns = gr_kube_now_ns();
    o.generation = json_integer_value(json_object_get(md, "generation"));
    o.ns = ns;
    o.workload_name = wl;
    o.api_version = jc->adapter->api_version;
    o.kind = jc->adapter->kind;
    o.creation_deadline_ns = jc->deadline_ns;
    json_t *grace = json_object_get(spec, GR_NVCRE_F_SCHEDULING_STALL_GRACE_SECONDS);
    o.grace_ns = json_is_integer(grace) ? json_integer_value(grace) * GR_NVCRE_NS_PER_S : -1;
    o.group_nodes = sget(json_object_get(md, "annotations"), GR_NVCRE_ANN_GROUP_NODES, NULL);
    o.max_restarts = (int)json_integer_value(
        json_object_get(json_object_get(spec, GR_NVCRE_F_CHECKPOINT), GR_NVCRE_F_MAX_RESTARTS));

    /* This Job's pods (same namespace, label nvcre.nvidia.com/job=<name>). */
    json_t *all = NULL, *pods = json_array();
    if (gr_kube_cache_list(jc->pods, IDX_JOB, name, &all, err) != GR_OK) {
        json_decref(pods);
        return err ? err->code : GR_EIO;
    }
    size_t i;
    json_t *p;
    json_array_foreach(all, i, p)
    {
        const char *pns = sget(json_object_get(p, "metadata"), "namespace", NULL);
        if (pns && strcmp(pns, ns) == 0)
            json_array_append(pods, p);
    }
    json_decref(all);

    char msg[GR_NVCRE_EVENT_NOTE_MAX + 1] = "";
    int rc = GR_OK;
    gr_nvcre_job_stall_in stall;
    json_t *gm = NULL;
    if (json_object_get(status, GR_NVCRE_F_WORKLOAD_REF)) {
        meas_ensure(jc, job, ns, name);
        gm = meas_observe(jc, spec, status, ns, name, &stall, &o);
    }
    int burst_waited = 0;
    if (!json_object_get(status, GR_NVCRE_F_WORKLOAD_REF)) {
        /* The creating pass writes three times in a row (the workload, the
         * status that records it, its Event): one wake-up for all three. */
        gr_kube_client_wait_burst(jc->c, 3, NULL);
        burst_waited = 1;
        try_create(jc, job, key, &o, msg, sizeof msg);
    } else {
        char wkey[GR_KUBE_KEY_MAX];
        snprintf(wkey, sizeof wkey, "%s/%s", ns, wl);
        json_t *w = NULL;
        if (gr_kube_cache_get(jc->workloads, wkey, &w, NULL) == GR_OK &&
            stale_workload(jc, key, w)) {
            json_decref(w); /* the previous run's object (a checkpoint restart) */
            w = NULL;
        }
        if (!w) {
            /* A cache miss is not proof: confirm with the API (#384/#385). */
            gr_kube_status st;
            gr_kube_status_clear(&st);
            rc = gr_kube_get(jc->c, &jc->wl_gvr, ns, wl, NULL, &w, &st, err);
            if (rc != GR_OK && st.reason != GR_KUBE_REASON_NOT_FOUND) {
                json_decref(pods);
                json_decref(gm);
                return rc;
            }
            rc = GR_OK;
        }
        if (w)
            jc->adapter->status(w, &o.wl);
        else
            o.wl.phase = GR_NVCRE_WL_GONE;
        json_decref(w);
        json_array_foreach(pods, i, p)
        {
            const char *bm = NULL;
            if (gr_nvcre_job_pod_blocked(p, &bm)) {
                o.pods_blocked = 1;
                o.blocked_msg = bm;
                break;
            }
        }
    }

    gr_nvcre_job_out out;
    rc = gr_nvcre_job_step(spec, status, &o, &out, err);
    if (rc == GR_OK && out.want_failure_log)
        rc = set_failure_log(jc, ns, name, pods, status);
    int hw_added = 0;
    if (rc == GR_OK && !gr_nvcre_job_terminal(status) &&
        json_object_get(status, GR_NVCRE_F_WORKLOAD_REF))
        hw_added = check_nodes(jc, job, pods, status, o.now_ns);
    json_decref(pods);
    if (rc != GR_OK) {
        json_decref(gm);
        return rc;
    }

    int write = out.changed || out.want_failure_log || hw_added > 0;
    if (write && !burst_waited)
        gr_kube_client_wait_burst(
            jc->c, 1 + (out.phase_event != 0) + (out.warn_create != 0) + (hw_added > 0), NULL);
    if (write) {
        gr_kube_status st;
        gr_kube_status_clear(&st);
        rc = gr_kube_update_status(jc->c, &JOBS, ns, job, NULL, NULL, &st, err);
        if (rc != GR_OK && st.reason == GR_KUBE_REASON_CONFLICT) {
            /* Our cached copy was stale: the newer version's watch event
             * re-enqueues the Job; decide again then (nothing was written,
             * so no Event either). */
            *requeue = GR_NVCRE_JOB_REQUEUE_IMMEDIATE_NS;
            json_decref(gm);
            return GR_OK;
        }
        if (rc != GR_OK) {
            json_decref(gm);
            return rc;
        }
    }
    if (!json_object_get(status, GR_NVCRE_F_WORKLOAD_REF) || gr_nvcre_job_terminal(status)) {
        pthread_mutex_lock(&jc->mu);
        json_object_del(jc->created, key);
        pthread_mutex_unlock(&jc->mu);
    }
    /* Events only after the status write succeeded (ADR-080). */
    if (out.phase_event)
        record(jc, job, out.event_type, out.event_reason, out.event_msg);
    if (out.warn_create)
        record(jc, job, "Warning", GR_NVCRE_REASON_WORKLOAD_CREATION_ERROR, out.warn_msg);
    if (hw_added > 0)
        record(jc, job, "Warning", GR_NVCRE_REASON_HARDWARE_FAILURE_DETECTED,
               json_string_value(json_object_get(
                   gr_nvcre_job_condition(status, GR_NVCRE_COND_HARDWARE_FAILED), "message")));
    if (out.created) {
        pthread_mutex_lock(&jc->mu);
        jc->counters.workload_created++;
        pthread_mutex_unlock(&jc->mu);
    }
    if (out.delete_workload) {
        gr_kube_opts d = {.propagation = "Background"};
        gr_err derr;
        gr_err_clear(&derr);
        if (gr_kube_delete(jc->c, &jc->wl_gvr, ns, wl, &d, NULL, NULL, &derr) != GR_OK)
            gr_log(GR_LOG_WARN, MOD, "cannot delete the workload for a restart",
                   GR_KV_STR("job", name), GR_KV_STR("namespace", ns), GR_KV_STR("workload", wl),
                   GR_KV_STR("error", derr.msg), GR_KV_END);
        if (gm)
            meas_restart_reset(jc, gm, ns, o.now_ns);
    }
    *requeue = out.requeue_ns;
    /* A running Job with stall detection looks again every sample interval
     * (the GoodputMeasurement's updates wake it too). */
    if (gm && o.stall && o.stall->stall_multiplier > 0 && !gr_nvcre_job_terminal(status) &&
        !out.delete_workload && *requeue > o.stall->sample_interval_ns &&
        o.stall->sample_interval_ns > 0)
        *requeue = o.stall->sample_interval_ns;
    json_decref(gm);
    return GR_OK;
}

static int reconcile(void *ctx, const char *key, int64_t *requeue_after_ns, gr_err *err)
{
    gr_nvcre_job_ctl *jc = ctx;
    int64_t t0 = mono_ns();
    *requeue_after_ns = 0;
    json_t *job = NULL;
    int rc = gr_kube_cache_get(jc->jobs, key, &job, NULL);
    if (rc == GR_ENOTFOUND) {
        failures_bump(jc, key, 1);
        pthread_mutex_lock(&jc->mu);
        json_object_del(jc->created, key);
        pthread_mutex_unlock(&jc->mu);
        return GR_OK;
    }
    if (rc == GR_OK)
        rc = reconcile_job(jc, key, job, requeue_after_ns, err);
    json_decref(job);
    double secs = (double)(mono_ns() - t0) / 1e9;
    pthread_mutex_lock(&jc->mu);
    gr_nvcre_job_observe_reconcile(&jc->counters, secs);
    if (rc != GR_OK)
        jc->counters.reconcile_error++;
    else if (*requeue_after_ns > 0)
        jc->counters.reconcile_requeue++;
    else
        jc->counters.reconcile_success++;
    pthread_mutex_unlock(&jc->mu);
    if (jc->observe)
        jc->observe(jc->observe_ctx, secs);
    return rc;
}

/* ---- registration ----------------------------------------------------- */

static int metrics_cb(void *ctx, gr_buf *out)
{
    return gr_nvcre_job_ctl_metrics(ctx, out);
}

int gr_nvcre_job_ctl_register(gr_kube_mgr *m, const gr_nvcre_job_ctl_opts *o,
                              gr_nvcre_job_ctl **out, gr_err *err)
{
    gr_nvcre_job_ctl *jc = calloc(1, sizeof *jc);
    if (!jc)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    pthread_mutex_init(&jc->mu, NULL);
    jc->failures = json_object();
    jc->created = json_object();
    jc->m = m;
    jc->c = gr_kube_mgr_client(m);
    jc->observe = o ? o->observe : NULL;
    jc->observe_ctx = o ? o->observe_ctx : NULL;
    jc->deadline_ns = o && o->creation_deadline_ns > 0 ? o->creation_deadline_ns
                                                       : GR_NVCRE_JOB_CREATION_DEADLINE_NS;
    const char *logs = o && o->pod_logs_dir ? o->pod_logs_dir : getenv("GR_POD_LOGS_DIR");
    snprintf(jc->logs_dir, sizeof jc->logs_dir, "%s", logs ? logs : "");
    json_t *probe = json_pack("{s{s{}}}", "workload", GR_NVCRE_F_TRAIN_JOB);
    jc->adapter = gr_nvcre_workload_adapter_for(probe, NULL);
    json_decref(probe);
    jc->wl_gvr = (gr_kube_gvr){jc->adapter->group, jc->adapter->version, jc->adapter->plural};
    const char *ns = o ? o->ns : NULL;
    int rc = gr_kube_events_new(jc->c, MOD, NULL, &jc->events, err);
    if (rc == GR_OK)
        rc = gr_kube_mgr_cache(m, &(gr_kube_cache_opts){.gvr = JOBS, .ns = ns, .optional = true},
                               &jc->jobs, err);
    if (rc == GR_OK)
        rc = gr_kube_mgr_cache(m,
                               &(gr_kube_cache_opts){.gvr = jc->wl_gvr, .ns = ns, .optional = true},
                               &jc->workloads, err);
    if (rc == GR_OK)
        rc = gr_kube_mgr_cache(m,
                               &(gr_kube_cache_opts){.gvr = GR_KUBE_PODS,
                                                     .ns = ns,
                                                     .label_selector = GR_NVCRE_LABEL_JOB},
                               &jc->pods, err);
    if (rc == GR_OK)
        rc = gr_kube_mgr_cache(m, &(gr_kube_cache_opts){.gvr = GR_KUBE_NODES}, &jc->nodes, err);
    for (int k = 0; k < 2 && rc == GR_OK; k++) {
        rc = gr_kube_mgr_cache(m, &(gr_kube_cache_opts){.gvr = MEAS[k], .ns = ns, .optional = true},
                               &jc->meas[k], err);
        if (rc == GR_OK)
            rc = gr_kube_cache_add_index(jc->meas[k], IDX_JOBREF, gr_kube_index_field,
                                         (void *)(uintptr_t) "spec.jobRef.name", err);
    }
    if (rc == GR_OK)
        rc = gr_kube_cache_add_index(jc->pods, IDX_JOB, gr_kube_index_label,
                                     (void *)(uintptr_t)GR_NVCRE_LABEL_JOB, err);
    if (rc == GR_OK)
        rc = gr_kube_cache_add_index(jc->pods, IDX_NODE, gr_kube_index_field,
                                     (void *)(uintptr_t) "spec.nodeName", err);
    if (rc == GR_OK)
        rc = gr_kube_mgr_add_controller(
            m,
            &(gr_kube_ctl_opts){.name = "job",
                                .workers = o && o->workers > 0 ? o->workers : 10,
                                .reconcile = reconcile,
                                .ctx = jc},
            &jc->ctl, err);
    if (rc == GR_OK)
        rc = gr_kube_ctl_watch(jc->ctl, jc->jobs, NULL, NULL, err);
    if (rc == GR_OK)
        rc = gr_kube_ctl_watch(jc->ctl, jc->workloads, gr_kube_map_owner,
                               (void *)(uintptr_t)GR_NVCRE_KIND_JOB, err);
    if (rc == GR_OK)
        rc = gr_kube_ctl_watch(jc->ctl, jc->pods, map_pod, NULL, err);
    if (rc == GR_OK)
        rc = gr_kube_ctl_need(jc->ctl, jc->nodes, err);
    for (int k = 0; k < 2 && rc == GR_OK; k++)
        rc = gr_kube_ctl_watch(jc->ctl, jc->meas[k], map_measurement, NULL, err);
    if (rc == GR_OK)
        rc = gr_kube_cache_add_handlers(
            jc->nodes, &(gr_kube_handlers){.on_add = node_add, .on_update = node_update, .ctx = jc},
            err);
    if (rc == GR_OK)
        rc = gr_kube_mgr_add_metrics(m, metrics_cb, jc, err);
    if (rc != GR_OK) {
        gr_nvcre_job_ctl_free(jc);
        return rc;
    }
    *out = jc;
    return GR_OK;
}

void gr_nvcre_job_ctl_free(gr_nvcre_job_ctl *jc)
{
    if (!jc)
        return;
    gr_kube_events_free(jc->events);
    json_decref(jc->failures);
    json_decref(jc->created);
    pthread_mutex_destroy(&jc->mu);
    free(jc);
}

int gr_nvcre_job_ctl_metrics(gr_nvcre_job_ctl *jc, gr_buf *out)
{
    json_t *jobs = NULL;
    if (gr_kube_cache_list(jc->jobs, NULL, NULL, &jobs, NULL) != GR_OK)
        jobs = json_array();
    size_t n = json_array_size(jobs);
    gr_nvcre_job_metric_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows) {
        json_decref(jobs);
        return GR_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *j = json_array_get(jobs, i);
        const json_t *md = json_object_get(j, "metadata");
        rows[i].ns = sget(md, "namespace", NULL);
        rows[i].job = sget(md, "name", NULL);
        rows[i].workflow = sget(json_object_get(md, "labels"), GR_NVCRE_LABEL_WORKFLOW, NULL);
        rows[i].status = json_object_get(j, "status");
    }
    gr_nvcre_job_counters c;
    pthread_mutex_lock(&jc->mu);
    c = jc->counters;
    pthread_mutex_unlock(&jc->mu);
    int rc = gr_nvcre_job_metrics_render(rows, n, &c, out);
    free(rows);
    json_decref(jobs);
    return rc;
}
