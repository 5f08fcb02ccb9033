/*
 * gr_measure_ctl.c — GoodputMeasurement and BandwidthMeasurement
 * controllers (I/O around the pure gr_measure logic). See gr_measure_ctl.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_buf.h"
#include "gr_duration.h"
#include "gr_log.h"
#include "gr_measure.h"
#include "gr_measure_ctl.h"
#include "gr_time.h"

#define MOD            "measure"
#define JOB_LABEL      "nvcre.nvidia.com/job"
#define RJOB_LABEL     "jobset.sigs.k8s.io/replicatedjob-name"
#define JOBSET_LABEL   "jobset.sigs.k8s.io/jobset-name"
#define MAX_PODS       2
#define MAX_POLLS      64 /* per reconcile: 64 × 4 MiB at most */
#define MAX_EVENTS     200000
#define DEFAULT_SAMPLE ((int64_t)60 * 1000000000)
/* A measurement whose Job or LogProfile is not (yet) in the caches is
 * looked at again after at most this long, not only after its
 * sampleInterval: the caches fill independently, so a measurement can be
 * seen before the Job and LogProfile created just ahead of it, and
 * LogProfile events do not enqueue measurements. */
#define RECHECK_MISSING ((int64_t)5 * 1000000000)

static const gr_kube_gvr GVR_JOBS = {"nvcre.nvidia.com", "v1alpha1", "jobs"};
static const gr_kube_gvr GVR_GMS = {"nvcre.nvidia.com", "v1alpha1", "goodputmeasurements"};
static const gr_kube_gvr GVR_BMS = {"nvcre.nvidia.com", "v1alpha1", "bandwidthmeasurements"};
static const gr_kube_gvr GVR_LPS = {"nvcre.nvidia.com", "v1alpha1", "logprofiles"};

typedef struct mctl {
    gr_kube_client *c;
    gr_kube_cache *jobs, *meas, *lps, *pods;
    gr_kube_events *events;
    int bandwidth;
    const gr_kube_gvr *gvr;
} mctl;

/* ------------------------------------------------------------ helpers */

static const char *jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static int cond_true(const json_t *status, const char *type)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(status, "conditions"), i, c)
    {
        const char *t = jstr(c, "type"), *s = jstr(c, "status");
        if (t && s && strcmp(t, type) == 0 && strcmp(s, "True") == 0) {
            return 1;
        }
    }
    return 0;
}

/* Set condition `type` (lastTransitionTime only when the status changes). */
static void set_cond(json_t *status, const char *type, int is_true, const char *reason,
                     const char *msg, int64_t now_ns)
{
    json_t *conds = json_object_get(status, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    const char *st = is_true ? "True" : "False";
    char ts[GR_TIME_STR_MAX];
    gr_time_format_ns(now_ns - now_ns % 1000000000, ts);
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *t = jstr(c, "type");
        if (t && strcmp(t, type) == 0) {
            const char *old = jstr(c, "status");
            if (!old || strcmp(old, st) != 0) {
                json_object_set_new(c, "lastTransitionTime", json_string(ts));
            }
            json_object_set_new(c, "status", json_string(st));
            json_object_set_new(c, "reason", json_string(reason));
            json_object_set_new(c, "message", json_string(msg));
            return;
        }
    }
    json_array_append_new(conds,
                          json_pack("{s:s,s:s,s:s,s:s,s:s}", "type", type, "status", st, "reason",
                                    reason, "message", msg, "lastTransitionTime", ts));
}

static int cmp_names(const void *a, const void *b)
{
    const char *x = jstr(json_object_get(*(json_t *const *)a, "metadata"), "name");
    const char *y = jstr(json_object_get(*(json_t *const *)b, "metadata"), "name");
    return strcmp(x ? x : "", y ? y : "");
}

/* Append the pods of `ns` matching label selector `sel` to `all` (skipping
 * names already there). */
static int list_pods_into(mctl *mc, const char *ns, const char *sel, json_t *all, gr_err *err)
{
    json_t *list = NULL;
    gr_kube_opts o = {.label_selector = sel};
    int rc = gr_kube_list_all(mc->c, &GR_KUBE_PODS, ns, &o, &list, NULL, err);
    if (rc != GR_OK) {
        return rc;
    }
    size_t i, j;
    json_t *p, *q;
    json_array_foreach(json_object_get(list, "items"), i, p)
    {
        const char *n = jstr(json_object_get(p, "metadata"), "name");
        int dup = !n;
        json_array_foreach(all, j, q)
        {
            const char *m = jstr(json_object_get(q, "metadata"), "name");
            if (n && m && strcmp(n, m) == 0) {
                dup = 1;
            }
        }
        if (!dup && json_array_append(all, p) != 0) {
            json_decref(list);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
    }
    json_decref(list);
    return GR_OK;
}

/* The Job's pods for strategy s (of the profile's replicated job when pods
 * carry that label), sorted by name, from the cache or (live) from the API
 * server itself. Caller decrefs *out (an array).
 * `workload`: the Job's status.workloadRef.name (NULL: none yet). The
 * Job controller labels only the worker pods `nvcre.nvidia.com/job` (as
 * upstream's InjectPodLabel); an MPI launcher, whose log the NCCL profiles
 * read (replicatedJobName: launcher), carries only JobSet's labels, so the
 * live listing also takes the pods of the workload's JobSet (Trainer names
 * the JobSet after the TrainJob). */
static int job_pods(mctl *mc, const char *ns, const char *job, const char *workload,
                    const gr_measure_strategy *s, int live, json_t **out, gr_err *err)
{
    json_t *all = NULL;
    int rc;
    if (live) {
        char sel[400];
        all = json_array();
        if (!all) {
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        snprintf(sel, sizeof sel, "%s=%s", JOB_LABEL, job);
        rc = list_pods_into(mc, ns, sel, all, err);
        if (rc == GR_OK && workload && *workload) {
            snprintf(sel, sizeof sel, "%s=%s", JOBSET_LABEL, workload);
            rc = list_pods_into(mc, ns, sel, all, err);
        }
        if (rc != GR_OK) {
            json_decref(all);
            all = NULL;
        }
    } else {
        rc = gr_kube_cache_list(mc->pods, "job", job, &all, err);
    }
    if (rc != GR_OK) {
        return rc;
    }
    json_t *sel = json_array();
    size_t i;
    json_t *p;
    int any_rjob = 0;
    json_array_foreach(all, i, p)
    {
        const json_t *md = json_object_get(p, "metadata");
        const char *pns = jstr(md, "namespace");
        if (pns && strcmp(pns, ns) == 0 && jstr(json_object_get(md, "labels"), RJOB_LABEL)) {
            any_rjob = 1;
        }
    }
    json_array_foreach(all, i, p)
    {
        const json_t *md = json_object_get(p, "metadata");
        const char *pns = jstr(md, "namespace");
        const char *rj = jstr(json_object_get(md, "labels"), RJOB_LABEL);
        if (!pns || strcmp(pns, ns) != 0) {
            continue;
        }
        if (any_rjob && (!rj || strcmp(rj, s->replicated_job) != 0)) {
            continue;
        }
        json_array_append(sel, p);
    }
    json_decref(all);
    size_t n = json_array_size(sel);
    json_t **v = calloc(n ? n : 1, sizeof *v);
    if (!v) {
        json_decref(sel);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    for (i = 0; i < n; i++) {
        v[i] = json_incref(json_array_get(sel, i));
    }
    qsort(v, n, sizeof *v, cmp_names);
    json_array_clear(sel);
    for (i = 0; i < n; i++) {
        json_array_append_new(sel, v[i]);
    }
    free(v);
    *out = sel;
    return GR_OK;
}

/* ------------------------------------------------------------ pod logs */

/* $GR_POD_LOGS_DIR/<ns>/<pod>.txt with the sinceTime filter and the cap. */
static int logs_from_dir(const char *dir, const char *ns, const char *pod, const char *since,
                         gr_buf *out, gr_err *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s.txt", dir, ns, pod);
    FILE *f = fopen(path, "rb");
    if (!f) {
        return GR_OK; /* a pod with no file has an empty log */
    }
    int64_t since_ns = 0;
    if (since && *since) {
        gr_time_parse_ns(since, &since_ns, NULL);
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = GR_OK;
    while ((n = getline(&line, &cap, f)) > 0) {
        const char *sp = memchr(line, ' ', (size_t)n < 40 ? (size_t)n : 40);
        int64_t ts = 0;
        if (since_ns > 0 && sp &&
            gr_time_parse_n(line, (size_t)(sp - line), &(struct timespec){0}, NULL) == GR_OK) {
            struct timespec t;
            gr_time_parse_n(line, (size_t)(sp - line), &t, NULL);
            gr_time_to_ns(&t, &ts);
            if (ts < since_ns) {
                continue;
            }
        }
        if (out->len + (size_t)n > (size_t)GR_MEASURE_POLL_BYTES_MAX) {
            size_t room = (size_t)GR_MEASURE_POLL_BYTES_MAX - out->len;
            gr_buf_append(out, line, room); /* limitBytes cuts mid-line, as the API does */
            break;
        }
        if (gr_buf_append(out, line, (size_t)n) != GR_OK) {
            rc = gr_err_set(err, GR_ENOMEM, "out of memory reading %s", path);
            break;
        }
    }
    free(line);
    fclose(f);
    return rc;
}

static int fetch_logs(mctl *mc, const char *ns, const char *pod, const char *container,
                      const char *since, gr_buf *out, int *complete, gr_err *err)
{
    gr_buf_reset(out);
    const char *dir = getenv("GR_POD_LOGS_DIR");
    int rc;
    if (dir && *dir) {
        rc = logs_from_dir(dir, ns, pod, since, out, err);
    } else {
        gr_kube_log_opts lo = {.container = container && *container ? container : NULL,
                               .limit_bytes = (long)GR_MEASURE_POLL_BYTES_MAX,
                               .since_time = since && *since ? since : NULL,
                               .timestamps = true};
        gr_kube_status st;
        rc = gr_kube_pod_logs(mc->c, ns, pod, &lo, out, &st, err);
        if (rc != GR_OK && (st.reason == GR_KUBE_REASON_NOT_FOUND || st.http_code == 400)) {
            gr_buf_reset(out); /* no such pod / container not started yet: empty */
            rc = GR_OK;
        }
    }
    *complete = out->len < (size_t)GR_MEASURE_POLL_BYTES_MAX;
    return rc;
}

/* ------------------------------------------------------------ events */

typedef struct evlist {
    gr_measure_event *v;
    size_t n, cap;
    gr_measure_profile *p;
    gr_measure_wrap wrap;
    int only_steps, no_steps;
    uint64_t bad;
} evlist;

static int on_line(void *ctx, const char *line, size_t len, int64_t kts)
{
    evlist *l = ctx;
    gr_measure_event ev;
    int rc = gr_measure_profile_parse_line(l->p, line, len, kts, &ev, NULL);
    if (rc == 0) {
        char joined[1024];
        size_t jl = 0;
        if (gr_measure_wrap_join(&l->wrap, line, len, joined, sizeof joined, &jl)) {
            rc = gr_measure_profile_parse_line(l->p, joined, jl, kts, &ev, NULL);
        }
    }
    if (rc < 0) {
        l->bad++;
        return 0;
    }
    if (rc == 0) {
        return 0;
    }
    l->wrap.prev_len = 0;
    int step = ev.kind == GR_MEASURE_TRAINING_STEP || ev.kind == GR_MEASURE_WARMUP_STEP;
    if ((l->only_steps && !step) || (l->no_steps && step) || l->n >= MAX_EVENTS) {
        return 0;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        gr_measure_event *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            return GR_ENOMEM;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = ev;
    return 0;
}

/* Merge the two time-ordered runs v[0, split) and v[split, n) of two pods'
 * events (stable: on equal times the first pod's event comes first). */
static int merge_events(evlist *l, size_t split, gr_err *err)
{
    if (split == 0 || split >= l->n) {
        return GR_OK;
    }
    gr_measure_event *out = malloc(l->n * sizeof *out);
    if (!out) {
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    size_t i = 0, j = split, k = 0;
    while (i < split && j < l->n) {
        out[k++] = l->v[j].ts_ns < l->v[i].ts_ns ? l->v[j++] : l->v[i++];
    }
    while (i < split) {
        out[k++] = l->v[i++];
    }
    while (j < l->n) {
        out[k++] = l->v[j++];
    }
    free(l->v);
    l->v = out;
    l->cap = l->n;
    return GR_OK;
}

/* The persisted reader state of `pod` (status.logReadState). */
static void load_reader(const json_t *status, const char *pod, gr_measure_reader *r)
{
    gr_measure_reader_init(r);
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(status, "logReadState"), i, e)
    {
        const char *p = jstr(e, "pod");
        if (p && strcmp(p, pod) == 0) {
            const char *s = jstr(e, "sinceTime");
            if (s) {
                gr_time_parse_ns(s, &r->since_ns, NULL);
            }
            r->seen_at_since = json_integer_value(json_object_get(e, "skipLines"));
        }
    }
}

static void save_reader(json_t *status, const char *pod, const gr_measure_reader *r)
{
    json_t *arr = json_object_get(status, "logReadState");
    if (!json_is_array(arr)) {
        arr = json_array();
        json_object_set_new(status, "logReadState", arr);
    }
    char ts[GR_TIME_STR_MAX] = "";
    if (r->since_ns > 0) {
        gr_time_format_nano(&(struct timespec){r->since_ns / 1000000000, r->since_ns % 1000000000},
                            ts);
    }
    size_t i;
    json_t *e = NULL, *it;
    json_array_foreach(arr, i, it)
    {
        const char *p = jstr(it, "pod");
        if (p && strcmp(p, pod) == 0) {
            e = it;
            break;
        }
    }
    if (!e) {
        if (i >= 64) {
            return;
        }
        e = json_object();
        json_array_append_new(arr, e);
        json_object_set_new(e, "pod", json_string(pod));
    }
    if (ts[0]) {
        json_object_set_new(e, "sinceTime", json_string(ts));
    }
    json_object_set_new(e, "skipLines", json_integer(r->seen_at_since));
}

/* Read `pod` from its persisted position (fresh: from the start) until the
 * log is exhausted or MAX_POLLS; events go to l. */
static int read_pod(mctl *mc, const char *ns, const char *pod, const char *container,
                    json_t *status, int fresh, int final, int64_t now_ns, evlist *l, gr_err *err)
{
    gr_measure_reader r;
    if (fresh) {
        gr_measure_reader_init(&r);
    } else {
        load_reader(status, pod, &r);
    }
    gr_buf buf = GR_BUF_INIT((size_t)GR_MEASURE_POLL_BYTES_MAX);
    int rc = GR_OK;
    for (int poll = 0; poll < MAX_POLLS; poll++) {
        char since[40];
        gr_measure_reader_since(&r, now_ns, since);
        int complete = 0;
        rc = fetch_logs(mc, ns, pod, container, since, &buf, &complete, err);
        if (rc != GR_OK) {
            break;
        }
        int64_t before = r.since_ns, seen = r.seen_at_since;
        gr_measure_reader_begin_poll(&r);
        rc = gr_measure_reader_feed(&r, buf.data ? buf.data : "", buf.len, 1, on_line, l);
        if (rc == GR_OK) {
            rc = gr_measure_reader_end_poll(&r, final && complete, 1, on_line, l);
        }
        if (rc != GR_OK || complete || (r.since_ns == before && r.seen_at_since == seen)) {
            break;
        }
    }
    if (rc == GR_OK && !fresh) {
        save_reader(status, pod, &r);
    }
    gr_buf_free(&buf);
    gr_measure_reader_free(&r);
    return rc == GR_ENOMEM ? gr_err_set(err, rc, "out of memory") : rc;
}

/* ------------------------------------------------------------ reconcile */

static int write_status(mctl *mc, json_t *obj, json_t *status, gr_err *err)
{
    json_object_set(obj, "status", status);
    gr_kube_status st;
    int rc =
        gr_kube_update_status(mc->c, mc->gvr, jstr(json_object_get(obj, "metadata"), "namespace"),
                              obj, NULL, NULL, &st, err);
    return rc;
}

static int reconcile(void *ctx, const char *key, int64_t *requeue_after_ns, gr_err *err)
{
    mctl *mc = ctx;
    json_t *obj = NULL;
    int rc = gr_kube_cache_get(mc->meas, key, &obj, err);
    if (rc == GR_ENOTFOUND) {
        return GR_OK;
    }
    if (rc != GR_OK) {
        return rc;
    }
    /* cached list items may lack apiVersion/kind (Events need them) */
    json_object_set_new(obj, "apiVersion", json_string("nvcre.nvidia.com/v1alpha1"));
    json_object_set_new(obj, "kind",
                        json_string(mc->bandwidth ? "BandwidthMeasurement" : "GoodputMeasurement"));
    const json_t *md = json_object_get(obj, "metadata");
    const json_t *spec = json_object_get(obj, "spec");
    const char *ns = jstr(md, "namespace");
    json_t *status = json_deep_copy(json_object_get(obj, "status"));
    if (!json_is_object(status)) {
        json_decref(status);
        status = json_object();
    }
    json_t *job = NULL, *lp = NULL, *pods = NULL;
    gr_measure_profile *prof = NULL;
    evlist l;
    memset(&l, 0, sizeof l);
    int64_t now = gr_time_now_ns();
    int64_t sample = DEFAULT_SAMPLE;
    const char *si = jstr(spec, "sampleInterval");
    if (si && (gr_duration_parse(si, &sample, NULL) != GR_OK || sample <= 0)) {
        sample = DEFAULT_SAMPLE;
    }
    *requeue_after_ns = sample;
    if (cond_true(status, "Complete")) {
        *requeue_after_ns = 0; /* frozen (ADR-072) */
        goto out;
    }
    const char *jobname = jstr(json_object_get(spec, "jobRef"), "name");
    const char *lpname = jstr(spec, "logProfileRef");
    char jkey[600];
    snprintf(jkey, sizeof jkey, "%s/%s", ns, jobname ? jobname : "");
    if (!jobname || gr_kube_cache_get(mc->jobs, jkey, &job, NULL) != GR_OK) {
        if (*requeue_after_ns > RECHECK_MISSING) {
            *requeue_after_ns = RECHECK_MISSING;
        }
        goto out; /* the Job is not there (yet) */
    }
    if (!lpname || gr_kube_cache_get(mc->lps, lpname, &lp, NULL) != GR_OK) {
        if (*requeue_after_ns > RECHECK_MISSING) {
            *requeue_after_ns = RECHECK_MISSING;
        }
        char msg[400];
        gr_err eerr;
        snprintf(msg, sizeof msg, "LogProfile %s not found", lpname ? lpname : "");
        if (gr_kube_event(mc->events, obj, "Warning", "LogProfileNotFound", msg, &eerr) != GR_OK) {
            gr_log(GR_LOG_WARN, MOD, "cannot record an Event", GR_KV_STR("object", key),
                   GR_KV_STR("reason", "LogProfileNotFound"), GR_KV_STR("error", eerr.msg),
                   GR_KV_END);
        }
        goto out;
    }
    gr_err perr;
    if (gr_measure_profile_new(json_object_get(lp, "spec"), &prof, &perr) != GR_OK) {
        gr_kube_eventf(mc->events, obj, "Warning", "InvalidLogProfile", "LogProfile %s: %s", lpname,
                       perr.msg);
        goto out;
    }
    const json_t *jst = json_object_get(job, "status");
    int succeeded = cond_true(jst, "Succeeded"), failed = cond_true(jst, "Failed");
    int final = succeeded || failed;
    char ts[GR_TIME_STR_MAX];
    if (!jstr(status, "startTime")) {
        gr_time_format_ns(now - now % 1000000000, ts);
        json_object_set_new(status, "startTime", json_string(ts));
    }
    /* The pods are listed from the API server itself: which pod is
     * "first"/"last" and what the final read covers must not depend on how far
     * the pod cache has caught up (the logs are read live anyway). */
    rc = job_pods(mc, ns, jobname, jstr(json_object_get(jst, "workloadRef"), "name"),
                  gr_measure_profile_strategy(prof), 1, &pods, err);
    if (rc != GR_OK) {
        goto out;
    }
    size_t npods = json_array_size(pods);
    l.p = prof;
    const char *container = gr_measure_profile_container(prof);
    if (npods > 0) {
        if (mc->bandwidth) {
            long i = gr_measure_profile_pick_pod(prof, GR_MEASURE_APPLICATION_START, npods);
            const char *pod =
                jstr(json_object_get(json_array_get(pods, (size_t)i), "metadata"), "name");
            gr_measure_bw bw;
            if (final) { /* the final read replaces the running averages */
                gr_measure_bw_init(&bw);
                rc = read_pod(mc, ns, pod, container, status, 1, 1, now, &l, err);
            } else {
                gr_measure_bw_from_status(&bw, status);
                rc = read_pod(mc, ns, pod, container, status, 0, 0, now, &l, err);
            }
            if (rc != GR_OK) {
                goto out;
            }
            for (size_t k = 0; k < l.n; k++) {
                gr_measure_bw_add(&bw, &l.v[k]);
            }
            gr_measure_bw_to_status(&bw, status);
        } else {
            long si_ = gr_measure_profile_pick_pod(prof, GR_MEASURE_TRAINING_STEP, npods);
            long li = gr_measure_profile_pick_pod(prof, GR_MEASURE_APPLICATION_START, npods);
            const char *step_pod =
                jstr(json_object_get(json_array_get(pods, (size_t)si_), "metadata"), "name");
            const char *life_pod =
                jstr(json_object_get(json_array_get(pods, (size_t)li), "metadata"), "name");
            if (si_ == li) {
                rc = read_pod(mc, ns, step_pod, container, status, 0, final, now, &l, err);
            } else {
                l.only_steps = 1;
                rc = read_pod(mc, ns, step_pod, container, status, 0, final, now, &l, err);
                l.only_steps = 0;
                l.no_steps = 1;
                size_t split = l.n;
                if (rc == GR_OK) {
                    rc = read_pod(mc, ns, life_pod, container, status, 0, final, now, &l, err);
                }
                if (rc == GR_OK) {
                    rc = merge_events(&l, split, err);
                }
            }
            if (rc != GR_OK) {
                goto out;
            }
            gr_measure_goodput g;
            gr_measure_goodput_init(&g, gr_measure_profile_warmup_steps(prof),
                                    gr_measure_profile_log_interval(prof));
            gr_measure_goodput_from_status(&g, status);
            for (size_t k = 0; k < l.n; k++) {
                gr_measure_goodput_apply(&g, &l.v[k]);
            }
            if (final && g.app_stop_ns == 0) {
                g.app_stop_ns = g.last_step_ns;
            }
            /* the wall clock ends at the newest observed step: the value
             * does not depend on when the controller happened to sample */
            gr_measure_goodput_to_status(&g, g.last_step_ns > 0 ? g.last_step_ns : now, status);
        }
    }
    if (final) {
        gr_time_format_ns(now - now % 1000000000, ts);
        json_object_set_new(status, "completionTime", json_string(ts));
        set_cond(status, "Measuring", 0, "JobFinished", "The Job finished", now);
        set_cond(status, "Complete", 1, succeeded ? "JobSucceeded" : "JobFailed",
                 succeeded ? "The Job succeeded; final values recorded"
                           : "The Job failed; final values recorded",
                 now);
        *requeue_after_ns = 0;
    } else {
        char msg[400];
        snprintf(msg, sizeof msg, "Sampling the logs of Job %s every %s", jobname, si ? si : "60s");
        set_cond(status, "Measuring", 1, "JobRunning", msg, now);
    }
    if (!json_equal(status, json_object_get(obj, "status"))) {
        rc = write_status(mc, obj, status, err);
    }
out:
    free(l.v);
    gr_measure_profile_free(prof);
    json_decref(pods);
    json_decref(lp);
    json_decref(job);
    json_decref(status);
    json_decref(obj);
    return rc;
}

/* Job → the measurements named after it (<job>-goodput / <job>-bandwidth). */
static size_t map_job(void *ctx, const json_t *obj, char (*keys)[GR_KUBE_KEY_MAX], size_t max)
{
    const char *suffix = ctx;
    const json_t *md = json_object_get(obj, "metadata");
    const char *ns = jstr(md, "namespace"), *name = jstr(md, "name");
    if (!ns || !name || max == 0) {
        return 0;
    }
    snprintf(keys[0], GR_KUBE_KEY_MAX, "%s/%s%s", ns, name, suffix);
    return 1;
}

/* ------------------------------------------------------------ metrics */

/* The workflow label of a measurement: its Job's nvcre.nvidia.com/workflow
 * label, else its controller owner when that is a Workflow, else "". */
static void workflow_of(mctl *mc, const json_t *m, const char *ns, const char *job, char *out,
                        size_t cap)
{
    out[0] = '\0';
    char key[512];
    json_t *j = NULL;
    if (job && snprintf(key, sizeof key, "%s/%s", ns, job) < (int)sizeof key &&
        gr_kube_cache_get(mc->jobs, key, &j, NULL) == GR_OK) {
        const char *w = jstr(json_object_get(json_object_get(j, "metadata"), "labels"),
                             "nvcre.nvidia.com/workflow");
        if (w) {
            snprintf(out, cap, "%s", w);
        }
        json_decref(j);
        if (out[0]) {
            return;
        }
    }
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(json_object_get(m, "metadata"), "ownerReferences"), i, r)
    {
        const char *kind = jstr(r, "kind"), *name = jstr(r, "name");
        if (json_is_true(json_object_get(r, "controller")) && kind && name &&
            strcmp(kind, "Workflow") == 0) {
            snprintf(out, cap, "%s", name);
        }
    }
}

/* §6.3 gauges of every measurement in the cache, on each /metrics scrape. */
static int metrics_cb(void *ctx, gr_buf *out)
{
    mctl *mc = ctx;
    json_t *all = NULL;
    if (gr_kube_cache_list(mc->meas, NULL, NULL, &all, NULL) != GR_OK) {
        all = json_array();
    }
    size_t n = json_array_size(all);
    gr_measure_metric_row *rows = calloc(n ? n : 1, sizeof *rows);
    char(*wf)[256] = calloc(n ? n : 1, sizeof *wf);
    if (!rows || !wf) {
        free(rows);
        free(wf);
        json_decref(all);
        return GR_ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *m = json_array_get(all, i);
        const json_t *md = json_object_get(m, "metadata");
        const json_t *spec = json_object_get(m, "spec");
        const char *ns = jstr(md, "namespace"), *name = jstr(md, "name");
        const char *job = jstr(json_object_get(spec, "jobRef"), "name");
        if (!ns || !name) {
            continue;
        }
        workflow_of(mc, m, ns, job, wf[k], sizeof wf[k]);
        const char *tt = jstr(spec, "testType");
        rows[k] = (gr_measure_metric_row){.ns = ns,
                                          .name = name,
                                          .job = job ? job : "",
                                          .workflow = wf[k],
                                          .test_type = tt ? tt : "",
                                          .status = json_object_get(m, "status")};
        k++;
    }
    int rc = mc->bandwidth ? gr_measure_bw_metrics_render(rows, k, out)
                           : gr_measure_goodput_metrics_render(rows, k, out);
    free(rows);
    free(wf);
    json_decref(all);
    return rc;
}

static void mctl_free(void *p)
{
    mctl *mc = p;
    gr_kube_events_free(mc->events);
    free(mc);
}

static int add_one(gr_kube_mgr *m, int bandwidth, int workers, gr_kube_cache *jobs,
                   gr_kube_cache *lps, gr_kube_cache *pods, gr_err *err)
{
    mctl *mc = calloc(1, sizeof *mc);
    if (!mc) {
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    /* mc lives as long as the manager: freed by gr_kube_mgr_free() */
    int frc = gr_kube_mgr_on_free(m, mctl_free, mc, err);
    if (frc != GR_OK) {
        free(mc);
        return frc;
    }
    mc->c = gr_kube_mgr_client(m);
    mc->bandwidth = bandwidth;
    mc->gvr = bandwidth ? &GVR_BMS : &GVR_GMS;
    mc->jobs = jobs;
    mc->lps = lps;
    mc->pods = pods;
    const char *name = bandwidth ? "bandwidthmeasurement" : "goodputmeasurement";
    int rc = gr_kube_mgr_cache(m, &(gr_kube_cache_opts){.gvr = *mc->gvr, .optional = true},
                               &mc->meas, err);
    if (rc == GR_OK) {
        rc = gr_kube_events_new(
            mc->c, bandwidth ? "bandwidthmeasurement-controller" : "goodputmeasurement-controller",
            NULL, &mc->events, err);
    }
    gr_kube_ctl *ctl = NULL;
    if (rc == GR_OK) {
        rc = gr_kube_mgr_add_controller(
            m,
            &(gr_kube_ctl_opts){
                .name = name, .workers = workers, .reconcile = reconcile, .ctx = mc},
            &ctl, err);
    }
    if (rc == GR_OK) {
        rc = gr_kube_ctl_watch(ctl, mc->meas, NULL, NULL, err);
    }
    if (rc == GR_OK) {
        rc = gr_kube_ctl_watch(ctl, jobs, map_job,
                               (void *)(uintptr_t)(bandwidth ? "-bandwidth" : "-goodput"), err);
    }
    if (rc == GR_OK) {
        rc = gr_kube_ctl_need(ctl, lps, err);
    }
    if (rc == GR_OK) {
        rc = gr_kube_ctl_need(ctl, pods, err);
    }
    if (rc == GR_OK) {
        rc = gr_kube_mgr_add_metrics(m, metrics_cb, mc, err);
    }
    return rc;
}

int gr_measure_ctl_register(gr_kube_mgr *m, int workers, gr_err *err)
{
    if (workers <= 0) {
        workers = 5;
    }
    gr_kube_cache *jobs = NULL, *lps = NULL, *pods = NULL;
    int rc =
        gr_kube_mgr_cache(m, &(gr_kube_cache_opts){.gvr = GVR_JOBS, .optional = true}, &jobs, err);
    if (rc == GR_OK) {
        rc = gr_kube_mgr_cache(m, &(gr_kube_cache_opts){.gvr = GVR_LPS, .optional = true}, &lps,
                               err);
    }
    if (rc == GR_OK) {
        rc = gr_kube_mgr_cache(
            m, &(gr_kube_cache_opts){.gvr = GR_KUBE_PODS, .label_selector = JOB_LABEL}, &pods, err);
    }
    if (rc == GR_OK) {
        rc = gr_kube_cache_add_index(pods, "job", gr_kube_index_label, (void *)(uintptr_t)JOB_LABEL,
                                     err);
    }
    if (rc == GR_OK) {
        rc = add_one(m, 0, workers, jobs, lps, pods, err);
    }
    if (rc == GR_OK) {
        rc = add_one(m, 1, workers, jobs, lps, pods, err);
    }
    if (rc != GR_OK) {
        gr_err_prefix(err, "measurement controllers: ");
    }
    return rc;
}
