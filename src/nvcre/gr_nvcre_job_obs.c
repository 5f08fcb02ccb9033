/*
 * gr_nvcre_job_obs.c — what the Job controller derives from other objects:
 * node health (CEL over Nodes), hardware-failure bookkeeping, the failure
 * log, and the Job metrics (pure; see gr_nvcre_job.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_nvcre_job.h"
#include "gr_nvcre_types.h"

/* ------------------------------------------------------- node health */

int gr_nvcre_node_health_compile(const char *expr, gr_cel_program **out, gr_err *err)
{
    static const gr_cel_decl decls[] = {{"node", GR_CEL_DYN}};
    if (!expr || !*expr)
        expr = GR_NVCRE_DEFAULT_NODE_HEALTH_EXPRESSION;
    int rc = gr_cel_compile(expr, strlen(expr), decls, 1, NULL, out, NULL, err);
    if (rc != GR_OK)
        gr_err_prefix(err, "spec.nodeHealthMonitor.cel.expression: ");
    return rc;
}

static void ensure(json_t *obj, const char *key, json_t *dflt)
{
    if (!json_object_get(obj, key))
        json_object_set_new(obj, key, dflt);
    else
        json_decref(dflt);
}

static json_t *section(json_t *node, const char *key)
{
    json_t *s = json_object_get(node, key);
    if (!json_is_object(s)) {
        s = json_object();
        json_object_set_new(node, key, s);
    }
    return s;
}

int gr_nvcre_node_health_eval(const gr_cel_program *prog, const json_t *node, int *matched,
                              gr_err *err)
{
    json_t *n = json_is_object(node) ? json_deep_copy(node) : json_object();
    if (!n)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    json_t *md = section(n, "metadata");
    json_t *sp = section(n, "spec");
    json_t *st = section(n, "status");
    if (!md || !sp || !st) {
        json_decref(n);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    ensure(md, "labels", json_object());
    ensure(md, "annotations", json_object());
    ensure(sp, "taints", json_array());
    ensure(sp, "unschedulable", json_false());
    ensure(st, "conditions", json_array());
    ensure(st, "addresses", json_array());
    ensure(st, "capacity", json_object());
    ensure(st, "allocatable", json_object());
    json_t *vars[1] = {n};
    int rc = gr_cel_eval_bool(prog, vars, matched, NULL, err);
    json_decref(n);
    if (rc != GR_OK)
        gr_err_prefix(err, "spec.nodeHealthMonitor.cel.expression: ");
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int gr_nvcre_job_mark_hardware_failed(json_t *status, const char *const *nodes, size_t n,
                                      int64_t generation, int64_t now_ns)
{
    if (!status || (n && !nodes))
        return GR_EINVAL;
    if (n == 0)
        return 0;
    const char **sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return GR_ENOMEM;
    memcpy(sorted, nodes, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_str);
    json_t *fn = json_object_get(status, GR_NVCRE_F_FAILED_NODES);
    if (!json_is_array(fn)) {
        fn = json_array();
        if (!fn || json_object_set_new(status, GR_NVCRE_F_FAILED_NODES, fn) != 0) {
            free(sorted);
            return GR_ENOMEM;
        }
    }
    gr_buf list;
    gr_buf_init(&list, 64 * 1024);
    int added = 0, rc = gr_buf_putc(&list, '[');
    for (size_t i = 0; i < n && rc == GR_OK; i++) {
        if (!sorted[i] || (i > 0 && strcmp(sorted[i], sorted[i - 1]) == 0))
            continue;
        if (list.len > 1)
            rc = gr_buf_putc(&list, ' ');
        if (rc == GR_OK)
            rc = gr_buf_puts(&list, sorted[i]);
        int dup = 0;
        size_t j;
        json_t *it;
        json_array_foreach(fn, j, it)
        {
            const char *nm = json_string_value(json_object_get(it, "name"));
            const char *r = json_string_value(json_object_get(it, "reason"));
            if (nm && r && strcmp(nm, sorted[i]) == 0 &&
                strcmp(r, GR_NVCRE_NODE_REASON_HARDWARE_FAILURE_DETECTED) == 0)
                dup = 1;
        }
        if (!dup && rc == GR_OK) {
            json_t *e = json_pack("{ss ss ss}", "name", sorted[i], "reason",
                                  GR_NVCRE_NODE_REASON_HARDWARE_FAILURE_DETECTED, "message",
                                  GR_NVCRE_MSG_HARDWARE_FAILURE_NODE);
            if (!e || json_array_append_new(fn, e) != 0)
                rc = GR_ENOMEM;
            else
                added++;
        }
    }
    free(sorted);
    if (rc == GR_OK)
        rc = gr_buf_putc(&list, ']');
    if (rc == GR_OK) {
        char *msg = malloc(list.len + 64);
        if (!msg) {
            rc = GR_ENOMEM;
        } else {
            sprintf(msg, GR_NVCRE_MSG_HARDWARE_FAILURE_FMT, gr_buf_cstr(&list));
            rc = gr_nvcre_job_set_additive(status, GR_NVCRE_COND_HARDWARE_FAILED, 1,
                                           GR_NVCRE_REASON_HARDWARE_FAILURE_DETECTED, msg,
                                           generation, now_ns);
            free(msg);
        }
    }
    gr_buf_free(&list);
    return rc == GR_OK ? added : rc;
}

/* ------------------------------------------------------- failure log */

static int cmp_pod(const void *a, const void *b)
{
    const char *x = json_string_value(
        json_object_get(json_object_get(*(json_t *const *)a, "metadata"), "name"));
    const char *y = json_string_value(
        json_object_get(json_object_get(*(json_t *const *)b, "metadata"), "name"));
    return strcmp(x ? x : "", y ? y : "");
}

/* A non-zero termination of container status `cs` (state first, then
 * lastState); NULL if none. */
static const json_t *nonzero_term(const json_t *cs)
{
    const char *which[2] = {"state", "lastState"};
    for (int k = 0; k < 2; k++) {
        const json_t *t = json_object_get(json_object_get(cs, which[k]), "terminated");
        if (json_is_object(t) && json_integer_value(json_object_get(t, "exitCode")) != 0)
            return t;
    }
    return NULL;
}

static void copy_s(char *dst, size_t n, const char *s)
{
    snprintf(dst, n, "%s", s ? s : "");
}

void gr_nvcre_job_failure_pick(const json_t *pods, gr_nvcre_failure_pick *out)
{
    memset(out, 0, sizeof *out);
    size_t n = json_array_size(pods);
    out->pods = (int)n;
    if (!n)
        return;
    json_t **v = malloc(n * sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(pods, i);
    qsort(v, n, sizeof *v, cmp_pod);
    static const char *const lists[2] = {"initContainerStatuses", "containerStatuses"};
    /* Pass 0 looks for OOMKilled only; pass 1 takes any non-zero exit. */
    for (int pass = 0; pass < 2 && !out->found; pass++) {
        for (size_t i = 0; i < n && !out->found; i++) {
            const json_t *st = json_object_get(v[i], "status");
            for (int l = 0; l < 2 && !out->found; l++) {
                size_t j;
                const json_t *cs;
                json_array_foreach(json_object_get(st, lists[l]), j, cs)
                {
                    const json_t *t = nonzero_term(cs);
                    if (!t)
                        continue;
                    const char *r = json_string_value(json_object_get(t, "reason"));
                    if (pass == 0 && !(r && strcmp(r, "OOMKilled") == 0))
                        continue;
                    out->found = 1;
                    const json_t *md = json_object_get(v[i], "metadata");
                    copy_s(out->pod, sizeof out->pod,
                           json_string_value(json_object_get(md, "name")));
                    copy_s(out->node, sizeof out->node,
                           json_string_value(
                               json_object_get(json_object_get(v[i], "spec"), "nodeName")));
                    copy_s(out->container, sizeof out->container,
                           json_string_value(json_object_get(cs, "name")));
                    out->exit_code = (int)json_integer_value(json_object_get(t, "exitCode"));
                    copy_s(out->reason, sizeof out->reason, r);
                    break;
                }
            }
        }
    }
    if (!out->found) {
        /* NoTerminatedContainer: still name the first pod and its node. */
        const json_t *md = json_object_get(v[0], "metadata");
        copy_s(out->pod, sizeof out->pod, json_string_value(json_object_get(md, "name")));
        copy_s(out->node, sizeof out->node,
               json_string_value(json_object_get(json_object_get(v[0], "spec"), "nodeName")));
    }
    free(v);
}

size_t gr_nvcre_job_log_tail(const char *log, size_t len)
{
    if (!log || !len)
        return 0;
    size_t end = len;
    if (log[end - 1] == '\n')
        end--; /* a trailing newline does not open another line */
    size_t start = 0, lines = 0;
    for (size_t i = end; i > 0; i--) {
        if (log[i - 1] == '\n') {
            if (++lines == GR_NVCRE_FAILURE_LOG_MAX_LINES) {
                start = i;
                break;
            }
        }
    }
    if (len - start > GR_NVCRE_FAILURE_LOG_MAX_BYTES) {
        size_t cut = len - GR_NVCRE_FAILURE_LOG_MAX_BYTES;
        const char *nl = memchr(log + cut, '\n', end > cut ? end - cut : 0);
        if (nl && (size_t)(nl - log) + 1 < len) {
            start = (size_t)(nl - log) + 1;
        } else {
            start = cut;
            while (start < len && ((unsigned char)log[start] & 0xC0) == 0x80)
                start++;
        }
    }
    return start;
}

/* Copy with invalid UTF-8 replaced by U+FFFD (EF BF BD). */
static char *utf8_clean(const char *s, size_t len, size_t *out_len)
{
    char *o = malloc(len * 3 + 1);
    if (!o)
        return NULL;
    size_t w = 0;
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        unsigned c = p[i];
        size_t need = 0;
        unsigned min = 0, cp = 0;
        if (c < 0x80) {
            o[w++] = (char)(c ? c : ' ');
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            need = 1, min = 0x80, cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            need = 2, min = 0x800, cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            need = 3, min = 0x10000, cp = c & 0x07;
        } else {
            need = 99;
        }
        int ok = need != 99 && i + need < len;
        for (size_t k = 1; ok && k <= need; k++) {
            if ((p[i + k] & 0xC0) != 0x80)
                ok = 0;
            else
                cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        if (ok && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)))
            ok = 0;
        if (ok) {
            memcpy(o + w, s + i, need + 1);
            w += need + 1;
            i += need + 1;
        } else {
            memcpy(o + w, "\xEF\xBF\xBD", 3);
            w += 3;
            i++;
        }
    }
    o[w] = '\0';
    *out_len = w;
    return o;
}

int gr_nvcre_job_failure_log(const gr_nvcre_failure_pick *pick, const char *job_name,
                             const char *log, size_t log_len, const char *log_err, json_t **out)
{
    char text[1024];
    const char *reason;
    const char *tail = text;
    size_t tail_len;
    char *clean = NULL;
    if (!pick || !out)
        return GR_EINVAL;
    if (pick->pods == 0) {
        reason = GR_NVCRE_FAILURE_REASON_POD_NOT_FOUND;
        snprintf(text, sizeof text, GR_NVCRE_FAILURE_TAIL_POD_NOT_FOUND_FMT,
                 job_name ? job_name : "");
        tail_len = strlen(text);
    } else if (!pick->found) {
        reason = GR_NVCRE_FAILURE_REASON_NO_TERMINATED;
        snprintf(text, sizeof text, "%s", GR_NVCRE_FAILURE_TAIL_NO_TERMINATED);
        tail_len = strlen(text);
    } else {
        reason = pick->reason[0] ? pick->reason : "Error";
        if (log) {
            size_t off = gr_nvcre_job_log_tail(log, log_len);
            clean = utf8_clean(log + off, log_len - off, &tail_len);
            if (!clean)
                return GR_ENOMEM;
            tail = clean;
        } else {
            snprintf(text, sizeof text, GR_NVCRE_FAILURE_TAIL_LOGS_GONE_FMT, pick->container,
                     log_err ? log_err : "unknown error");
            tail_len = strlen(text);
        }
    }
    json_t *t = json_stringn(tail, tail_len);
    if (!t) { /* invalid UTF-8 in a fallback text (a pod/container name) */
        size_t l2;
        char *c2 = utf8_clean(tail, tail_len, &l2);
        t = c2 ? json_stringn(c2, l2) : NULL;
        free(c2);
    }
    free(clean);
    if (!t)
        return GR_ENOMEM;
    json_t *o =
        json_pack("{s:s, s:s, s:i, s:s, s:o}", "podName",
                  pick->found || pick->pods ? pick->pod : "", "nodeName", pick->node, "exitCode",
                  pick->found ? pick->exit_code : 0, "reason", reason, "tail", t);
    if (!o)
        return GR_ENOMEM;
    *out = o;
    return GR_OK;
}

/* ----------------------------------------------------------- metrics */

static void observe(uint64_t *buckets, int nb, double base, uint64_t *count, double *sum, double s)
{
    double le = base;
    for (int i = 0; i < nb; i++, le *= 2)
        if (s <= le)
            buckets[i]++;
    (*count)++;
    *sum += s;
}

void gr_nvcre_job_observe_reconcile(gr_nvcre_job_counters *c, double seconds)
{
    observe(c->reconcile_bucket, GR_NVCRE_RECONCILE_BUCKETS, 0.01, &c->reconcile_count,
            &c->reconcile_sum_s, seconds);
}

void gr_nvcre_job_observe_health(gr_nvcre_job_counters *c, double seconds)
{
    observe(c->health_bucket, GR_NVCRE_HEALTH_BUCKETS, 0.001, &c->health_count, &c->health_sum_s,
            seconds);
}

const char *gr_nvcre_job_metric_state(const json_t *status)
{
    const char *p = gr_nvcre_job_phase(status);
    if (!p)
        return NULL;
    if (strcmp(p, GR_NVCRE_COND_FAILED) == 0)
        return "failed";
    if (strcmp(p, GR_NVCRE_COND_SUCCEEDED) == 0)
        return "succeeded";
    return "in_progress";
}

static int put_label(gr_buf *b, const char *v)
{
    int rc = GR_OK;
    for (const char *p = v ? v : ""; *p && rc == GR_OK; p++) {
        if (*p == '\\')
            rc = gr_buf_puts(b, "\\\\");
        else if (*p == '"')
            rc = gr_buf_puts(b, "\\\"");
        else if (*p == '\n')
            rc = gr_buf_puts(b, "\\n");
        else
            rc = gr_buf_putc(b, *p);
    }
    return rc;
}

static int job_labels(gr_buf *b, const gr_nvcre_job_metric_row *r)
{
    int rc = gr_buf_puts(b, "namespace=\"");
    if (rc == GR_OK)
        rc = put_label(b, r->ns);
    if (rc == GR_OK)
        rc = gr_buf_puts(b, "\",job=\"");
    if (rc == GR_OK)
        rc = put_label(b, r->job);
    if (rc == GR_OK)
        rc = gr_buf_puts(b, "\",workflow=\"");
    if (rc == GR_OK)
        rc = put_label(b, r->workflow);
    if (rc == GR_OK)
        rc = gr_buf_putc(b, '"');
    return rc;
}

static int histogram(gr_buf *b, const char *name, const char *help, const uint64_t *buckets, int nb,
                     double base, uint64_t count, double sum)
{
    int rc = gr_buf_printf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    double le = base;
    for (int i = 0; i < nb && rc == GR_OK; i++, le *= 2)
        rc = gr_buf_printf(b, "%s_bucket{controller=\"job\",le=\"%g\"} %llu\n", name, le,
                           (unsigned long long)buckets[i]);
    if (rc == GR_OK)
        rc = gr_buf_printf(b,
                           "%s_bucket{controller=\"job\",le=\"+Inf\"} %llu\n"
                           "%s_sum{controller=\"job\"} %.9g\n%s_count{controller=\"job\"} %llu\n",
                           name, (unsigned long long)count, name, sum, name,
                           (unsigned long long)count);
    return rc;
}

int gr_nvcre_job_metrics_render(const gr_nvcre_job_metric_row *rows, size_t n,
                                const gr_nvcre_job_counters *c, gr_buf *out)
{
    static const char *const states[3] = {"in_progress", "succeeded", "failed"};
    int rc = gr_buf_puts(out, "# HELP nvcre_job_status Current Job state from its conditions "
                              "(1 for the state that holds).\n# TYPE nvcre_job_status gauge\n");
    for (size_t i = 0; i < n && rc == GR_OK; i++) {
        const char *s = gr_nvcre_job_metric_state(rows[i].status);
        for (int k = 0; k < 3 && rc == GR_OK; k++) {
            rc = gr_buf_puts(out, "nvcre_job_status{");
            if (rc == GR_OK)
                rc = job_labels(out, &rows[i]);
            if (rc == GR_OK)
                rc = gr_buf_printf(out, ",status=\"%s\"} %d\n", states[k],
                                   s && strcmp(s, states[k]) == 0);
        }
    }
    if (rc == GR_OK)
        rc = gr_buf_puts(out,
                         "# HELP nvcre_job_failed_nodes Nodes in the Job's status.failedNodes.\n"
                         "# TYPE nvcre_job_failed_nodes gauge\n");
    for (size_t i = 0; i < n && rc == GR_OK; i++) {
        rc = gr_buf_puts(out, "nvcre_job_failed_nodes{");
        if (rc == GR_OK)
            rc = job_labels(out, &rows[i]);
        if (rc == GR_OK)
            rc = gr_buf_printf(
                out, "} %zu\n",
                json_array_size(json_object_get(rows[i].status, GR_NVCRE_F_FAILED_NODES)));
    }
    if (!c || rc != GR_OK)
        return rc;
    rc = gr_buf_printf(
        out,
        "# HELP nvcre_reconcile_total Reconciles by result.\n# TYPE nvcre_reconcile_total counter\n"
        "nvcre_reconcile_total{controller=\"job\",result=\"success\"} %llu\n"
        "nvcre_reconcile_total{controller=\"job\",result=\"error\"} %llu\n"
        "nvcre_reconcile_total{controller=\"job\",result=\"requeue\"} %llu\n"
        "# HELP nvcre_workload_created_total Workloads created by Jobs.\n"
        "# TYPE nvcre_workload_created_total counter\nnvcre_workload_created_total %llu\n"
        "# HELP nvcre_hardware_failed_jobs_total Jobs that turned HardwareFailed.\n"
        "# TYPE nvcre_hardware_failed_jobs_total counter\nnvcre_hardware_failed_jobs_total %llu\n"
        "# HELP nvcre_nodes_evaluated_total Node health evaluations.\n"
        "# TYPE nvcre_nodes_evaluated_total counter\nnvcre_nodes_evaluated_total %llu\n",
        (unsigned long long)c->reconcile_success, (unsigned long long)c->reconcile_error,
        (unsigned long long)c->reconcile_requeue, (unsigned long long)c->workload_created,
        (unsigned long long)c->hardware_failed_jobs, (unsigned long long)c->nodes_evaluated);
    if (rc == GR_OK)
        rc = histogram(out, "nvcre_reconcile_duration_seconds", "Reconcile duration.",
                       c->reconcile_bucket, GR_NVCRE_RECONCILE_BUCKETS, 0.01, c->reconcile_count,
                       c->reconcile_sum_s);
    if (rc == GR_OK)
        rc = histogram(out, "nvcre_node_health_check_duration_seconds",
                       "Duration of one Job's node health check.", c->health_bucket,
                       GR_NVCRE_HEALTH_BUCKETS, 0.001, c->health_count, c->health_sum_s);
    return rc;
}
