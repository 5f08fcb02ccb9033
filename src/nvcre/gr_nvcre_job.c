/*
 * gr_nvcre_job.c — conditions, clocks and the status machine of the Job
 * controller (pure; see gr_nvcre_job.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gr_nvcre_job.h"
#include "gr_nvcre_types.h"
#include "gr_time.h"

static const char *const exclusive_types[3] = {GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_COND_SUCCEEDED,
                                               GR_NVCRE_COND_FAILED};

static int64_t whole_seconds(int64_t ns)
{
    int64_t s = ns / GR_NVCRE_NS_PER_S;
    if (ns < 0 && s * GR_NVCRE_NS_PER_S != ns)
        s--;
    return s * GR_NVCRE_NS_PER_S;
}

static int set_time(json_t *status, const char *field, int64_t ns)
{
    char buf[GR_TIME_STR_MAX];
    if (gr_time_format_ns(ns, buf) != GR_OK)
        return GR_EINVAL;
    return json_object_set_new(status, field, json_string(buf)) == 0 ? GR_OK : GR_ENOMEM;
}

int64_t gr_nvcre_job_time(const json_t *status, const char *field)
{
    const char *s = json_string_value(json_object_get(status, field));
    int64_t ns = 0;
    if (!s || gr_time_parse_ns(s, &ns, NULL) != GR_OK)
        return 0;
    return ns;
}

/* ------------------------------------------------------- conditions */

const json_t *gr_nvcre_job_condition(const json_t *status, const char *type)
{
    const json_t *conds = json_object_get(status, GR_NVCRE_F_CONDITIONS);
    size_t i;
    const json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && strcmp(t, type) == 0)
            return c;
    }
    return NULL;
}

static int cond_is_true(const json_t *status, const char *type)
{
    const char *s =
        json_string_value(json_object_get(gr_nvcre_job_condition(status, type), "status"));
    return s && strcmp(s, "True") == 0;
}

const char *gr_nvcre_job_phase(const json_t *status)
{
    /* Terminal outranks InProgress should both ever be True. */
    if (cond_is_true(status, GR_NVCRE_COND_FAILED))
        return GR_NVCRE_COND_FAILED;
    if (cond_is_true(status, GR_NVCRE_COND_SUCCEEDED))
        return GR_NVCRE_COND_SUCCEEDED;
    if (cond_is_true(status, GR_NVCRE_COND_IN_PROGRESS))
        return GR_NVCRE_COND_IN_PROGRESS;
    return NULL;
}

int gr_nvcre_job_terminal(const json_t *status)
{
    return cond_is_true(status, GR_NVCRE_COND_FAILED) ||
           cond_is_true(status, GR_NVCRE_COND_SUCCEEDED);
}

static int exclusive_rank(const char *type)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(type, exclusive_types[i]) == 0)
            return i;
    return 3;
}

/* Build or update one condition object; keep lastTransitionTime when the
 * status does not change. */
static int put_condition(json_t *conds, const char *type, const char *st, const char *reason,
                         const char *message, int64_t generation, int64_t now_ns)
{
    json_t *c = NULL, *it;
    size_t i;
    json_array_foreach(conds, i, it)
    {
        const char *t = json_string_value(json_object_get(it, "type"));
        if (t && strcmp(t, type) == 0) {
            c = it;
            break;
        }
    }
    char ts[GR_TIME_STR_MAX];
    if (gr_time_format_ns(now_ns, ts) != GR_OK)
        return GR_EINVAL;
    if (!c) {
        c = json_object();
        if (!c || json_array_append_new(conds, c) != 0)
            return GR_ENOMEM;
        json_object_set_new(c, "type", json_string(type));
    }
    const char *old = json_string_value(json_object_get(c, "status"));
    if (!old || strcmp(old, st) != 0 || !json_object_get(c, "lastTransitionTime"))
        json_object_set_new(c, "lastTransitionTime", json_string(ts));
    json_object_set_new(c, "status", json_string(st));
    json_object_set_new(c, "reason", json_string(reason));
    json_object_set_new(c, "message", json_string(message ? message : ""));
    json_object_set_new(c, "observedGeneration", json_integer(generation));
    return GR_OK;
}

/* Stable order: exclusive set first (InProgress, Succeeded, Failed), then
 * the additive conditions in their existing order. */
static void order_conditions(json_t *conds)
{
    size_t n = json_array_size(conds);
    for (size_t i = 1; i < n; i++) {
        for (size_t j = i; j > 0; j--) {
            const char *a =
                json_string_value(json_object_get(json_array_get(conds, j - 1), "type"));
            const char *b = json_string_value(json_object_get(json_array_get(conds, j), "type"));
            if (exclusive_rank(a ? a : "") <= exclusive_rank(b ? b : ""))
                break;
            json_t *x = json_incref(json_array_get(conds, j - 1));
            json_array_set(conds, j - 1, json_array_get(conds, j));
            json_array_set_new(conds, j, x);
        }
    }
}

static json_t *conditions_of(json_t *status)
{
    json_t *conds = json_object_get(status, GR_NVCRE_F_CONDITIONS);
    if (!json_is_array(conds)) {
        conds = json_array();
        if (!conds || json_object_set_new(status, GR_NVCRE_F_CONDITIONS, conds) != 0)
            return NULL;
    }
    return conds;
}

int gr_nvcre_job_set_exclusive(json_t *status, const char *type, const char *reason,
                               const char *message, int64_t generation, int64_t now_ns)
{
    if (!status || !type || !reason || exclusive_rank(type) == 3)
        return GR_EINVAL;
    const char *before = gr_nvcre_job_phase(status);
    int flipped = !before || strcmp(before, type) != 0;
    json_t *conds = conditions_of(status);
    if (!conds)
        return GR_ENOMEM;
    for (int i = 0; i < 3; i++) {
        int on = strcmp(exclusive_types[i], type) == 0;
        int rc = put_condition(conds, exclusive_types[i], on ? "True" : "False",
                               on ? reason : GR_NVCRE_REASON_NOT_APPLICABLE, on ? message : "",
                               generation, now_ns);
        if (rc != GR_OK)
            return rc;
    }
    order_conditions(conds);
    return flipped;
}

int gr_nvcre_job_set_additive(json_t *status, const char *type, int is_true, const char *reason,
                              const char *message, int64_t generation, int64_t now_ns)
{
    if (!status || !type || !reason || exclusive_rank(type) != 3)
        return GR_EINVAL;
    json_t *conds = conditions_of(status);
    if (!conds)
        return GR_ENOMEM;
    int rc =
        put_condition(conds, type, is_true ? "True" : "False", reason, message, generation, now_ns);
    if (rc == GR_OK)
        order_conditions(conds);
    return rc;
}

/* ------------------------------------------------------------ clocks */

int gr_nvcre_job_timed_out(const json_t *status, int64_t timeout_ns, int64_t fallback_start_ns,
                           int64_t now_ns, int *blocked)
{
    int b = 0, out = 0;
    int64_t since = gr_nvcre_job_time(status, GR_NVCRE_F_SCHEDULING_BLOCKED_SINCE);
    int64_t start = gr_nvcre_job_time(status, GR_NVCRE_F_WORKLOAD_START_TIME);
    if (timeout_ns <= 0) {
        out = 0;
    } else if (since) {
        out = gr_ns_sub_sat(now_ns, since) > timeout_ns ||
              (start && gr_ns_sub_sat(since, start) > timeout_ns);
        b = out;
    } else if (start) {
        out = gr_ns_sub_sat(now_ns, start) > timeout_ns;
    } else if (json_object_get(status, GR_NVCRE_F_WORKLOAD_REF)) {
        out = 0;
    } else if (fallback_start_ns) {
        out = gr_ns_sub_sat(now_ns, fallback_start_ns) > timeout_ns;
    }
    if (blocked)
        *blocked = b;
    return out;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

gr_nvcre_stall gr_nvcre_job_stall_check(const gr_nvcre_job_stall_in *in, int64_t start_ns,
                                        int64_t resumed_ns, int64_t now_ns)
{
    if (!in || !(in->stall_multiplier > 0))
        return GR_NVCRE_STALL_NONE;
    int64_t sample =
        in->sample_interval_ns > 0 ? in->sample_interval_ns : GR_NVCRE_JOB_SAMPLE_INTERVAL_NS;
    if (!in->last_step_ns || !(in->avg_step_s > 0)) {
        int64_t anchor = in->app_start_ns ? in->app_start_ns : in->gm_start_ns;
        if (!anchor)
            return GR_NVCRE_STALL_NONE;
        anchor = max64(anchor, start_ns);
        anchor = max64(anchor, resumed_ns);
        int64_t timeout_s = in->startup_timeout_s > 0
                                ? in->startup_timeout_s
                                : GR_NVCRE_DEFAULT_STARTUP_STALL_TIMEOUT_SECONDS;
        int64_t limit = timeout_s * GR_NVCRE_NS_PER_S + 2 * sample;
        return gr_ns_sub_sat(now_ns, anchor) > limit ? GR_NVCRE_STALL_STARTUP : GR_NVCRE_STALL_NONE;
    }
    double li = in->log_interval > 1 ? (double)in->log_interval : 1.0;
    double thr_s = in->stall_multiplier * in->avg_step_s * li;
    if (thr_s > 1e9) /* beyond any real run: never stalls, and no overflow */
        return GR_NVCRE_STALL_NONE;
    int64_t limit = (int64_t)(thr_s * 1e9) + 2 * sample;
    int64_t anchor = max64(in->last_step_ns, resumed_ns);
    anchor = max64(anchor, start_ns);
    return gr_ns_sub_sat(now_ns, anchor) > limit ? GR_NVCRE_STALL_TRAINING : GR_NVCRE_STALL_NONE;
}

int64_t gr_nvcre_job_backoff_ns(unsigned failures, int64_t remaining_ns)
{
    int64_t b = GR_NVCRE_JOB_BACKOFF_MIN_NS;
    for (unsigned i = 1; i < failures && b < GR_NVCRE_JOB_BACKOFF_MAX_NS; i++)
        b *= 2;
    if (b > GR_NVCRE_JOB_BACKOFF_MAX_NS)
        b = GR_NVCRE_JOB_BACKOFF_MAX_NS;
    if (remaining_ns > 0 && remaining_ns < b)
        b = remaining_ns;
    return b;
}

/* ------------------------------------------------------- pods, restarts */

int gr_nvcre_job_pod_blocked(const json_t *pod, const char **msg)
{
    const char *node = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    if (node && *node)
        return 0;
    const json_t *conds = json_object_get(json_object_get(pod, "status"), "conditions");
    size_t i;
    const json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *s = json_string_value(json_object_get(c, "status"));
        const char *r = json_string_value(json_object_get(c, "reason"));
        if (t && strcmp(t, "PodScheduled") == 0 && s && strcmp(s, "False") == 0 && r &&
            strcmp(r, "Unschedulable") == 0) {
            if (msg) {
                const char *m = json_string_value(json_object_get(c, "message"));
                *msg = m ? m : "";
            }
            return 1;
        }
    }
    return 0;
}

int gr_nvcre_job_restart_eligible(const json_t *spec, const json_t *status,
                                  int64_t last_checkpoint_step)
{
    const json_t *cp = json_object_get(spec, GR_NVCRE_F_CHECKPOINT);
    if (!json_is_object(cp) || last_checkpoint_step <= 0)
        return 0;
    json_int_t max = json_integer_value(json_object_get(cp, GR_NVCRE_F_MAX_RESTARTS));
    json_int_t count = json_integer_value(json_object_get(status, GR_NVCRE_F_RESTART_COUNT));
    return count < max;
}

/* ---------------------------------------------------- the status machine */

static void fmt(char *dst, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *dst, size_t n, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int w = vsnprintf(dst, n, f, ap);
    va_end(ap);
    /* Event notes are capped with a visible suffix (ADR-080). */
    size_t sl = strlen(GR_NVCRE_EVENT_TRUNCATED_SUFFIX);
    if (w >= 0 && (size_t)w >= n && n > sl + 1)
        memcpy(dst + n - 1 - sl, GR_NVCRE_EVENT_TRUNCATED_SUFFIX, sl + 1);
}

typedef struct step_ctx {
    const json_t *spec;
    json_t *status;
    const gr_nvcre_job_obs *o;
    gr_nvcre_job_out *out;
    int64_t now; /* whole seconds */
} step_ctx;

static int exclusive(step_ctx *x, const char *type, const char *reason, const char *msg)
{
    int rc = gr_nvcre_job_set_exclusive(x->status, type, reason, msg, x->o->generation, x->now);
    if (rc < 0)
        return rc;
    x->out->changed = 1;
    if (rc == 1) {
        x->out->phase_event = 1;
        snprintf(x->out->event_type, sizeof x->out->event_type, "%s",
                 strcmp(type, GR_NVCRE_COND_FAILED) == 0 ? "Warning" : "Normal");
        snprintf(x->out->event_reason, sizeof x->out->event_reason, "%s", reason);
        fmt(x->out->event_msg, sizeof x->out->event_msg, "%s", msg);
    } else if (x->out->phase_event) {
        /* A later transition in the same step replaces the pending note. */
        snprintf(x->out->event_reason, sizeof x->out->event_reason, "%s", reason);
        fmt(x->out->event_msg, sizeof x->out->event_msg, "%s", msg);
    }
    return GR_OK;
}

static int add_group_nodes(step_ctx *x, const char *message)
{
    const char *g = x->o->group_nodes;
    if (!g || !*g)
        return GR_OK;
    json_t *fn = json_object_get(x->status, GR_NVCRE_F_FAILED_NODES);
    if (!json_is_array(fn)) {
        fn = json_array();
        if (!fn || json_object_set_new(x->status, GR_NVCRE_F_FAILED_NODES, fn) != 0)
            return GR_ENOMEM;
    }
    while (*g) {
        const char *e = strchr(g, ',');
        size_t len = e ? (size_t)(e - g) : strlen(g);
        while (len && g[0] == ' ') {
            g++;
            len--;
        }
        while (len && g[len - 1] == ' ')
            len--;
        if (len) {
            int dup = 0;
            size_t i;
            json_t *it;
            json_array_foreach(fn, i, it)
            {
                const char *n = json_string_value(json_object_get(it, "name"));
                const char *r = json_string_value(json_object_get(it, "reason"));
                if (n && r && strlen(n) == len && strncmp(n, g, len) == 0 &&
                    strcmp(r, GR_NVCRE_NODE_REASON_WORKLOAD_FAILED) == 0)
                    dup = 1;
            }
            if (!dup) {
                json_t *e2 = json_pack("{s:s%,s:s,s:s}", "name", g, len, "reason",
                                       GR_NVCRE_NODE_REASON_WORKLOAD_FAILED, "message", message);
                if (!e2 || json_array_append_new(fn, e2) != 0)
                    return GR_ENOMEM;
            }
        }
        if (!e)
            break;
        g = e + 1;
    }
    return GR_OK;
}

static int fail(step_ctx *x, const char *reason, const char *msg, int attribute_nodes)
{
    int rc = exclusive(x, GR_NVCRE_COND_FAILED, reason, msg);
    if (rc != GR_OK)
        return rc;
    if (attribute_nodes && (rc = add_group_nodes(x, msg)) != GR_OK)
        return rc;
    if (!json_object_get(x->status, GR_NVCRE_F_FAILURE_LOG))
        x->out->want_failure_log = 1;
    x->out->requeue_ns = 0;
    return GR_OK;
}

static void clear_markers(json_t *status)
{
    json_object_del(status, GR_NVCRE_F_WORKLOAD_START_TIME);
    json_object_del(status, GR_NVCRE_F_SCHEDULING_BLOCKED_SINCE);
    json_object_del(status, GR_NVCRE_F_SCHEDULING_RESUMED_TIME);
}

static int restart(step_ctx *x)
{
    json_int_t count = json_integer_value(json_object_get(x->status, GR_NVCRE_F_RESTART_COUNT)) + 1;
    json_object_del(x->status, GR_NVCRE_F_WORKLOAD_REF);
    clear_markers(x->status);
    json_object_set_new(x->status, GR_NVCRE_F_RESTART_COUNT, json_integer(count));
    char msg[256];
    snprintf(msg, sizeof msg, GR_NVCRE_MSG_RESTARTING_FMT, (int)count, x->o->max_restarts);
    int rc = exclusive(x, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_WORKLOAD_RESTARTING, msg);
    /* Every restart gets its Event, also when InProgress stays True (one
     * WorkloadRestarting Event per restart, as upstream's fixtures count). */
    x->out->phase_event = 1;
    snprintf(x->out->event_type, sizeof x->out->event_type, "%s", "Normal");
    snprintf(x->out->event_reason, sizeof x->out->event_reason, "%s",
             GR_NVCRE_REASON_WORKLOAD_RESTARTING);
    fmt(x->out->event_msg, sizeof x->out->event_msg, "%s", msg);
    x->out->delete_workload = 1;
    int64_t rq = GR_NVCRE_JOB_RESTART_MIN_REQUEUE_NS;
    if (x->o->stall && 2 * x->o->stall->sample_interval_ns > rq)
        rq = 2 * x->o->stall->sample_interval_ns;
    x->out->requeue_ns = rq;
    return rc;
}

static int step_create(step_ctx *x)
{
    const gr_nvcre_job_obs *o = x->o;
    const char *ns = o->ns, *wn = o->workload_name ? o->workload_name : "";
    const char *emsg = o->create_msg ? o->create_msg : "";
    char msg[GR_NVCRE_EVENT_NOTE_MAX + 1];
    switch (o->create) {
    case GR_NVCRE_CREATE_NONE:
        return GR_OK;
    case GR_NVCRE_CREATE_OK:
    case GR_NVCRE_CREATE_ADOPTED: {
        json_t *ref = json_pack("{ss ss ss ss}", "apiVersion", o->api_version ? o->api_version : "",
                                "kind", o->kind ? o->kind : "", "name", wn, "namespace", ns);
        if (!ref || json_object_set_new(x->status, GR_NVCRE_F_WORKLOAD_REF, ref) != 0)
            return GR_ENOMEM;
        json_object_del(x->status, GR_NVCRE_F_WORKLOAD_CREATION_REJECTED_SINCE);
        int adopted = o->create == GR_NVCRE_CREATE_ADOPTED;
        snprintf(msg, sizeof msg,
                 adopted ? GR_NVCRE_MSG_WORKLOAD_ADOPTED_FMT : GR_NVCRE_MSG_WORKLOAD_CREATED_FMT,
                 ns, wn);
        x->out->created = !adopted;
        x->out->requeue_ns = GR_NVCRE_JOB_REQUEUE_IMMEDIATE_NS;
        return exclusive(
            x, GR_NVCRE_COND_IN_PROGRESS,
            adopted ? GR_NVCRE_REASON_WORKLOAD_ADOPTED : GR_NVCRE_REASON_WORKLOAD_CREATED, msg);
    }
    case GR_NVCRE_CREATE_FOREIGN:
        snprintf(msg, sizeof msg, GR_NVCRE_MSG_WORKLOAD_NOT_OWNED_FMT, ns, wn);
        return fail(x, GR_NVCRE_REASON_WORKLOAD_CREATION_ERROR, msg, 0);
    case GR_NVCRE_CREATE_FOREIGN_DELETING:
        x->out->requeue_ns = gr_nvcre_job_backoff_ns(o->create_failures, 0);
        return GR_OK;
    case GR_NVCRE_CREATE_BUILD_ERROR:
        fmt(msg, sizeof msg, GR_NVCRE_MSG_BUILD_WORKLOAD_FAILED_FMT, emsg);
        return fail(x, GR_NVCRE_REASON_WORKLOAD_CREATION_ERROR, msg, 0);
    case GR_NVCRE_CREATE_UNSUPPORTED:
        fmt(msg, sizeof msg, GR_NVCRE_MSG_UNSUPPORTED_WORKLOAD_FMT, emsg);
        return fail(x, GR_NVCRE_REASON_WORKLOAD_CREATION_ERROR, msg, 0);
    case GR_NVCRE_CREATE_REJECTED: {
        int64_t deadline = o->creation_deadline_ns > 0 ? o->creation_deadline_ns
                                                       : GR_NVCRE_JOB_CREATION_DEADLINE_NS;
        int64_t since = gr_nvcre_job_time(x->status, GR_NVCRE_F_WORKLOAD_CREATION_REJECTED_SINCE);
        if (!since || since > x->now) {
            since = x->now;
            if (set_time(x->status, GR_NVCRE_F_WORKLOAD_CREATION_REJECTED_SINCE, since) != GR_OK)
                return GR_ENOMEM;
            x->out->changed = 1;
        }
        if (x->now - since > deadline) {
            char d[64];
            int64_t s = deadline / GR_NVCRE_NS_PER_S;
            if (s % 60 == 0)
                snprintf(d, sizeof d, "%lldm0s", (long long)(s / 60));
            else
                snprintf(d, sizeof d, "%llds", (long long)s);
            fmt(msg, sizeof msg, GR_NVCRE_MSG_CREATION_DEADLINE_FMT, ns, wn, d, emsg);
            /* JOB-90: about the object, not the hardware: no failedNodes. */
            return fail(x, GR_NVCRE_REASON_WORKLOAD_CREATION_ERROR, msg, 0);
        }
        fmt(msg, sizeof msg, "%s", emsg);
        int rc = exclusive(x, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_WORKLOAD_CREATION_REJECTED,
                           msg);
        /* Wake up at the deadline at the latest (+1 s so it is past). */
        x->out->requeue_ns = gr_nvcre_job_backoff_ns(o->create_failures,
                                                     since + deadline + GR_NVCRE_NS_PER_S - x->now);
        return rc;
    }
    case GR_NVCRE_CREATE_RBAC_DENIED:
    case GR_NVCRE_CREATE_TRANSIENT:
        /* JOB-94/95: not a rejection; no clock, no deadline, retry. */
        x->out->warn_create = 1;
        fmt(x->out->warn_msg, sizeof x->out->warn_msg, GR_NVCRE_MSG_CREATE_FAILED_FMT, ns, wn,
            emsg);
        x->out->requeue_ns = gr_nvcre_job_backoff_ns(o->create_failures, 0);
        return GR_OK;
    }
    return GR_EINVAL;
}

static int step_running(step_ctx *x)
{
    const gr_nvcre_job_obs *o = x->o;
    json_t *st = x->status;
    char msg[GR_NVCRE_EVENT_NOTE_MAX + 1];
    int64_t start = gr_nvcre_job_time(st, GR_NVCRE_F_WORKLOAD_START_TIME);
    if (!start || start > x->now) {
        start = x->now; /* JOB-53: first observed running */
        if (set_time(st, GR_NVCRE_F_WORKLOAD_START_TIME, start) != GR_OK)
            return GR_ENOMEM;
        x->out->changed = 1;
    }
    int64_t since = gr_nvcre_job_time(st, GR_NVCRE_F_SCHEDULING_BLOCKED_SINCE);
    int64_t grace = o->grace_ns >= 0
                        ? o->grace_ns
                        : GR_NVCRE_DEFAULT_SCHEDULING_STALL_GRACE_SECONDS * GR_NVCRE_NS_PER_S;
    if (o->pods_blocked) {
        if (!since || since > x->now) {
            since = x->now; /* JOB-57: first blocked observation of this episode */
            if (set_time(st, GR_NVCRE_F_SCHEDULING_BLOCKED_SINCE, since) != GR_OK)
                return GR_ENOMEM;
            x->out->changed = 1;
        }
        /* JOB-60: no stall detection while blocked. */
        if (x->now - since >= grace) { /* JOB-61 */
            fmt(msg, sizeof msg, GR_NVCRE_MSG_SCHEDULING_BLOCKED_FMT,
                o->blocked_msg ? o->blocked_msg : "");
            x->out->requeue_ns = GR_NVCRE_JOB_REQUEUE_NS;
            return exclusive(x, GR_NVCRE_COND_IN_PROGRESS,
                             GR_NVCRE_REASON_WORKLOAD_SCHEDULING_BLOCKED, msg);
        }
        int64_t left = since + grace - x->now;
        x->out->requeue_ns = left < GR_NVCRE_JOB_REQUEUE_NS ? left : GR_NVCRE_JOB_REQUEUE_NS;
        snprintf(msg, sizeof msg, GR_NVCRE_MSG_WORKLOAD_RUNNING_FMT, o->ns, o->workload_name);
        return exclusive(x, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_WORKLOAD_RUNNING, msg);
    }
    if (since) {
        /* JOB-63/64: recovery shifts the start by the paused interval. */
        int64_t paused = x->now - max64(since, start);
        if (paused > 0) {
            start += paused;
            if (set_time(st, GR_NVCRE_F_WORKLOAD_START_TIME, start) != GR_OK)
                return GR_ENOMEM;
        }
        if (set_time(st, GR_NVCRE_F_SCHEDULING_RESUMED_TIME, x->now) != GR_OK)
            return GR_ENOMEM;
        json_object_del(st, GR_NVCRE_F_SCHEDULING_BLOCKED_SINCE); /* JOB-58 */
        x->out->changed = 1;
    }
    int64_t resumed = gr_nvcre_job_time(st, GR_NVCRE_F_SCHEDULING_RESUMED_TIME);
    gr_nvcre_stall s = gr_nvcre_job_stall_check(o->stall, start, resumed, x->now);
    if (s != GR_NVCRE_STALL_NONE) {
        if (o->restart_eligible)
            return restart(x);
        return fail(x, GR_NVCRE_REASON_WORKLOAD_STALLED,
                    s == GR_NVCRE_STALL_STARTUP ? GR_NVCRE_MSG_STARTUP_STALL
                                                : GR_NVCRE_MSG_TRAINING_STALL,
                    1);
    }
    snprintf(msg, sizeof msg, GR_NVCRE_MSG_WORKLOAD_RUNNING_FMT, o->ns, o->workload_name);
    x->out->requeue_ns = GR_NVCRE_JOB_REQUEUE_NS;
    return exclusive(x, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_WORKLOAD_RUNNING, msg);
}

static int step_workload(step_ctx *x)
{
    const gr_nvcre_job_obs *o = x->o;
    const char *ns = o->ns, *wn = o->workload_name;
    const char *detail = o->wl.message;
    char msg[GR_NVCRE_EVENT_NOTE_MAX + 1];
    switch (o->wl.phase) {
    case GR_NVCRE_WL_GONE:
        if (o->restart_eligible)
            return restart(x);
        snprintf(msg, sizeof msg, GR_NVCRE_MSG_WORKLOAD_DELETED_FMT, ns, wn);
        return fail(x, GR_NVCRE_REASON_WORKLOAD_FAILED, msg, 1);
    case GR_NVCRE_WL_FAILED:
        if (o->restart_eligible)
            return restart(x);
        if (*detail)
            fmt(msg, sizeof msg, GR_NVCRE_MSG_WORKLOAD_FAILED_DETAIL_FMT, ns, wn, detail);
        else
            snprintf(msg, sizeof msg, GR_NVCRE_MSG_WORKLOAD_FAILED_FMT, ns, wn);
        return fail(x, GR_NVCRE_REASON_WORKLOAD_FAILED, msg, 1);
    case GR_NVCRE_WL_SUCCEEDED:
        if (*detail)
            fmt(msg, sizeof msg, GR_NVCRE_MSG_WORKLOAD_COMPLETED_DETAIL_FMT, ns, wn, detail);
        else
            snprintf(msg, sizeof msg, GR_NVCRE_MSG_WORKLOAD_COMPLETED_FMT, ns, wn);
        x->out->requeue_ns = 0;
        return exclusive(x, GR_NVCRE_COND_SUCCEEDED, GR_NVCRE_REASON_WORKLOAD_COMPLETED, msg);
    case GR_NVCRE_WL_PENDING:
        /* JOB-53/54/55: no clocks while pending (suspended). */
        if (*detail)
            fmt(msg, sizeof msg, GR_NVCRE_MSG_WORKLOAD_PENDING_DETAIL_FMT, ns, wn, detail);
        else
            snprintf(msg, sizeof msg, GR_NVCRE_MSG_WORKLOAD_PENDING_FMT, ns, wn);
        x->out->requeue_ns = GR_NVCRE_JOB_REQUEUE_NS;
        return exclusive(x, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_WORKLOAD_PENDING, msg);
    case GR_NVCRE_WL_RUNNING:
        return step_running(x);
    }
    return GR_EINVAL;
}

int gr_nvcre_job_step(const json_t *spec, json_t *status, const gr_nvcre_job_obs *obs,
                      gr_nvcre_job_out *out, gr_err *err)
{
    if (!status || !json_is_object(status) || !obs || !out || !obs->ns || !obs->workload_name)
        return gr_err_set(err, GR_EINVAL,
                          "gr_nvcre_job_step: status object, namespace and workload name required");
    memset(out, 0, sizeof *out);
    if (gr_nvcre_job_terminal(status))
        return GR_OK;
    json_t *before = json_deep_copy(status);
    if (!before)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    step_ctx x = {spec, status, obs, out, whole_seconds(obs->now_ns)};
    int rc = json_object_get(status, GR_NVCRE_F_WORKLOAD_REF) ? step_workload(&x) : step_create(&x);
    out->changed = !json_equal(before, status);
    json_decref(before);
    if (rc != GR_OK)
        return gr_err_set(err, rc, "Job status update failed (%s)", gr_rc_name(rc));
    return GR_OK;
}
