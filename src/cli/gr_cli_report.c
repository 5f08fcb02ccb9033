/* The certification report: model and renderers (gr_cli.h). Pure. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_cli.h"
#include "gr_json.h"
#include "gr_kube_object.h"

/* Lines of a failure log kept in the report. */
#define REPORT_LOG_TAIL 5

static const char *sget(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static const char *meta(const json_t *o, const char *k)
{
    return sget(json_object_get(o, "metadata"), k);
}

static bool owned_by_name(const json_t *o, const char *kind, const char *name)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(json_object_get(o, "metadata"), "ownerReferences"), i, r)
    {
        if (!strcmp(sget(r, "kind"), kind) && !strcmp(sget(r, "name"), name))
            return true;
    }
    return false;
}

static const json_t *find_named(const json_t *arr, const char *name)
{
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o) if (!strcmp(meta(o, "name"), name)) return o;
    return NULL;
}

/* The True exclusive condition of an object: {type, reason, message}. */
static json_t *verdict(const json_t *obj)
{
    static const char *types[] = {"Failed", "Succeeded", "InProgress"};
    json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
    for (size_t i = 0; i < 3; i++) {
        json_t *c = gr_kube_condition_find(conds, types[i]);
        if (c && !strcmp(sget(c, "status"), "True"))
            return json_pack("{s:s,s:s,s:s}", "result", types[i], "reason", sget(c, "reason"),
                             "message", sget(c, "message"));
    }
    return json_pack("{s:s,s:s,s:s}", "result", "Pending", "reason", "", "message", "");
}

/* The last lines of a failure log (a string or a list of lines). */
static json_t *log_tail(const json_t *fl)
{
    json_t *out = json_array();
    if (json_is_array(fl)) {
        size_t n = json_array_size(fl), i = n > REPORT_LOG_TAIL ? n - REPORT_LOG_TAIL : 0;
        for (; i < n; i++)
            if (json_is_string(json_array_get(fl, i)))
                json_array_append(out, json_array_get(fl, i));
        return out;
    }
    const char *s = json_string_value(fl);
    if (!json_is_object(fl) && !s)
        return out;
    if (json_is_object(fl)) { /* {lines|tail|message} */
        json_t *x = json_object_get(fl, "lines");
        if (!x)
            x = json_object_get(fl, "tail");
        if (json_is_array(x)) {
            json_decref(out);
            return log_tail(x);
        }
        s = json_string_value(x ? x : json_object_get(fl, "message"));
        if (!s)
            return out;
    }
    /* split, keep the last REPORT_LOG_TAIL non-empty lines */
    const char *starts[REPORT_LOG_TAIL];
    size_t lens[REPORT_LOG_TAIL], n = 0;
    const char *p = s;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l) {
            memmove(starts, starts + (n == REPORT_LOG_TAIL),
                    sizeof(starts[0]) * (REPORT_LOG_TAIL - 1));
            memmove(lens, lens + (n == REPORT_LOG_TAIL), sizeof(lens[0]) * (REPORT_LOG_TAIL - 1));
            if (n < REPORT_LOG_TAIL)
                n++;
            starts[n - 1] = p;
            lens[n - 1] = l;
        }
        p += l + (e ? 1 : 0);
    }
    for (size_t i = 0; i < n; i++)
        json_array_append_new(out, json_stringn(starts[i], lens[i]));
    return out;
}

static json_t *category_nodes(const json_t *wf)
{
    json_t *nodes = json_array();
    const json_t *nr = json_object_get(json_object_get(wf, "status"), "nodeResults");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)(uintptr_t)nr, k, v)
    {
        const char *st = sget(v, "status");
        if (!*st)
            st = sget(v, "result");
        const char *reason = sget(v, "reason");
        const char *msg = sget(v, "message");
        bool failed = strstr(st, "ail") != NULL || strstr(st, "Hardware") != NULL;
        json_array_append_new(nodes, json_pack("{s:s,s:s,s:s,s:s}", "node", k, "result",
                                               failed ? "Failed" : (*st ? st : "Passed"), "reason",
                                               reason, "message", msg));
    }
    return nodes;
}

static int cmp_size(const void *a, const void *b)
{
    json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "sizeBytes"));
    json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "sizeBytes"));
    return x < y ? -1 : x > y;
}

static json_t *category_bandwidth(const json_t *wf, const json_t *bms)
{
    json_t *rows = json_array();
    size_t i, j;
    json_t *bm, *r;
    json_array_foreach(bms, i, bm)
    {
        if (!owned_by_name(bm, "Workflow", meta(wf, "name")))
            continue;
        json_array_foreach(json_object_get(json_object_get(bm, "status"), "results"), j, r)
        {
            json_t *size = json_object_get(r, "sizeBytes");
            json_int_t sz = json_is_integer(size) ? json_integer_value(size)
                                                  : (json_int_t)atoll(sget(r, "sizeBytes"));
            json_array_append_new(rows, json_pack("{s:I,s:s,s:s,s:s}", "sizeBytes", sz, "busBW",
                                                  sget(r, "busBW"), "algBW", sget(r, "algBW"),
                                                  "job", meta(bm, "name")));
        }
    }
    size_t n = json_array_size(rows);
    if (n > 1) {
        json_t **v = calloc(n, sizeof *v);
        if (v) {
            for (i = 0; i < n; i++)
                v[i] = json_incref(json_array_get(rows, i));
            qsort(v, n, sizeof *v, cmp_size);
            json_array_clear(rows);
            for (i = 0; i < n; i++)
                json_array_append_new(rows, v[i]);
            free(v);
        }
    }
    return rows;
}

int gr_cli_report_build(const json_t *cert, const json_t *workflows, const json_t *jobs,
                        const json_t *bandwidth, json_t **report, gr_err *err)
{
    *report = NULL;
    json_t *v = verdict(cert);
    json_t *rep = json_pack("{s:s,s:s,s:O,s:O,s:O,s:[]}", "certification", meta(cert, "name"),
                            "namespace", meta(cert, "namespace"), "result",
                            json_object_get(v, "result"), "reason", json_object_get(v, "reason"),
                            "message", json_object_get(v, "message"), "categories");
    json_decref(v);
    if (!rep)
        return gr_err_set(err, GR_ENOMEM, "report: out of memory");
    json_t *cats = json_object_get(rep, "categories");
    size_t i;
    json_t *cs;
    json_array_foreach(json_object_get(json_object_get(cert, "status"), "categoryStatuses"), i, cs)
    {
        const char *wname = sget(json_object_get(cs, "workflowRef"), "name");
        const json_t *wf = *wname ? find_named(workflows, wname) : NULL;
        json_t *wv = wf ? verdict(wf)
                        : json_pack("{s:s,s:s,s:s}", "result", "", "reason", "", "message", "");
        const json_t *orch = json_object_get(json_object_get(wf, "status"), "orchestration");
        /* validation.performance.thresholds.thresholds (the CRD's shape; a
         * flat map is read too, as the Workflow controller does) */
        const json_t *thr = gr_json_ptr_get(wf, "/spec/validation/performance/thresholds");
        if (json_is_object(json_object_get(thr, "thresholds")))
            thr = json_object_get(thr, "thresholds");
        json_t *thresholds = json_is_object(thr) ? json_deep_copy(thr) : NULL;
        json_t *c = json_pack(
            "{s:s,s:s,s:s,s:s,s:s,s:O,s:O,s:s,s:s,s:o,s:o,s:o,s:[]}", "domain", sget(cs, "domain"),
            "variant", sget(cs, "variant"), "status", sget(cs, "status"), "workflow", wname,
            "workflowResult", sget(wv, "result"), "reason", json_object_get(wv, "reason"),
            "message", json_object_get(wv, "message"), "platform", sget(orch, "detectedPlatform"),
            "gpuArchitecture", sget(orch, "detectedGPUArchitecture"), "nodes",
            wf ? category_nodes(wf) : json_array(), "bandwidth",
            wf ? category_bandwidth(wf, bandwidth) : json_array(), "thresholds",
            thresholds ? thresholds : json_object(), "failureLogs");
        json_decref(wv);
        if (!c) {
            json_decref(rep);
            return gr_err_set(err, GR_ENOMEM, "report: out of memory");
        }
        size_t j;
        json_t *job;
        json_array_foreach(jobs, j, job)
        {
            const char *wl = sget(json_object_get(json_object_get(job, "metadata"), "labels"),
                                  "nvcre.nvidia.com/workflow");
            if (!*wname || strcmp(wl, wname))
                continue;
            json_t *tail = log_tail(json_object_get(json_object_get(job, "status"), "failureLog"));
            if (json_array_size(tail))
                json_array_append_new(
                    json_object_get(c, "failureLogs"),
                    json_pack("{s:s,s:o}", "job", meta(job, "name"), "tail", tail));
            else
                json_decref(tail);
        }
        json_array_append_new(cats, c);
    }
    *report = rep;
    return GR_OK;
}

/* ------------------------------------------------------------ text */

/* Display columns of a UTF-8 string (one per code point). */
static size_t cols(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            n++;
    return n;
}

/* One boxed line "│ text … │", text cut to fit GR_CLI_REPORT_WIDTH. */
static void line(FILE *f, const char *text)
{
    size_t inner = GR_CLI_REPORT_WIDTH - 4, n = 0;
    fputs("│ ", f);
    const char *p = text;
    while (*p && n < inner) {
        const char *q = p + 1;
        while (((unsigned char)*q & 0xC0) == 0x80)
            q++;
        if (n == inner - 1 && cols(p) > 1) {
            fputs("…", f);
            n++;
            break;
        }
        fwrite(p, 1, (size_t)(q - p), f);
        n++;
        p = q;
    }
    for (; n < inner; n++)
        fputc(' ', f);
    fputs(" │\n", f);
}

/* `text` on up to `max_lines` boxed lines, broken at spaces where it can
 * be; continuation lines indented by `indent` columns (< the width), the
 * last one cut by line(). A failed node's message (the measured value of a
 * ThresholdViolation) is read whole, not cut at the first line's end. */
static void wrapped(FILE *f, const char *text, size_t indent, int max_lines)
{
    size_t inner = GR_CLI_REPORT_WIDTH - 4;
    char buf[5 * GR_CLI_REPORT_WIDTH + 8];
    const char *p = text;
    for (int l = 0; l < max_lines; l++) {
        size_t pad = l ? indent : 0, room = inner - pad;
        if (l == max_lines - 1 || cols(p) <= room) {
            /* line() stops at the width: 4 bytes a column at most */
            size_t len = strnlen(p, 4 * room + 4);
            memset(buf, ' ', pad);
            memcpy(buf + pad, p, len);
            buf[pad + len] = '\0';
            line(f, buf);
            return;
        }
        const char *q = p, *sp = NULL;
        size_t n = 0, sp_n = 0;
        for (; *q && n < room; n++) {
            if (*q == ' ') {
                sp = q;
                sp_n = n;
            }
            q++;
            /* at most 4 bytes a column, whatever the (outside) text holds:
             * buf takes room columns */
            for (int c = 0; c < 3 && ((unsigned char)*q & 0xC0) == 0x80; c++)
                q++;
        }
        if (*q == ' ') {
            sp = q;
            sp_n = n;
        }
        /* a space in the line's second half, else a hard break */
        const char *end = sp && sp_n > room / 2 ? sp : q;
        memset(buf, ' ', pad);
        memcpy(buf + pad, p, (size_t)(end - p));
        buf[pad + (size_t)(end - p)] = '\0';
        line(f, buf);
        p = end;
        while (*p == ' ')
            p++;
        if (!*p)
            return;
    }
}

static void rule(FILE *f, const char *left, const char *title, const char *right)
{
    size_t n = 0;
    fputs(left, f);
    n++;
    if (title && *title) {
        fprintf(f, "─ %s ", title);
        n += 3 + cols(title);
    }
    for (; n < GR_CLI_REPORT_WIDTH - 1; n++)
        fputs("─", f);
    fputs(right, f);
    fputc('\n', f);
}

static void human_size(json_int_t b, char *out, size_t n)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t i = 0;
    while (b >= 1024 && b % 1024 == 0 && i < 4) {
        b /= 1024;
        i++;
    }
    snprintf(out, n, "%lld %s", (long long)b, u[i]);
}

/* How many measurements (distinct "job") the bandwidth rows come from. */
static size_t measurements(const json_t *rows)
{
    json_t *seen = json_object();
    size_t i;
    json_t *x;
    json_array_foreach(rows, i, x) json_object_set_new(seen, sget(x, "job"), json_true());
    size_t n = json_object_size(seen);
    json_decref(seen);
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Rows from several measurements (one per Job: a 16-node intra-node run has
 * 16), sorted by size: per size the lowest, median and highest busBW, so
 * a slow node shows as a low minimum instead of 16 rows per size. */
static void bandwidth_summary(FILE *f, const json_t *rows, size_t nmeas)
{
    char buf[256];
    snprintf(buf, sizeof buf,
             "Bus bandwidth by message size, %zu measurements (busBW GB/s):", nmeas);
    line(f, buf);
    snprintf(buf, sizeof buf, "  %12s  %12s  %12s  %12s", "size", "min", "median", "max");
    line(f, buf);
    size_t n = json_array_size(rows);
    double *v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < n;) {
        json_int_t sz = json_integer_value(json_object_get(json_array_get(rows, i), "sizeBytes"));
        size_t k = 0;
        for (; i < n; i++) {
            const json_t *x = json_array_get(rows, i);
            if (json_integer_value(json_object_get(x, "sizeBytes")) != sz)
                break;
            v[k++] = atof(sget(x, "busBW"));
        }
        qsort(v, k, sizeof *v, cmp_double);
        double med = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
        char hs[32];
        human_size(sz, hs, sizeof hs);
        snprintf(buf, sizeof buf, "  %12s  %12.2f  %12.2f  %12.2f", hs, v[0], med, v[k - 1]);
        line(f, buf);
    }
    free(v);
}

static void render_text(const json_t *rep, FILE *f)
{
    char buf[1024], title[256];
    snprintf(title, sizeof title, "Certification %s/%s", sget(rep, "namespace"),
             sget(rep, "certification"));
    rule(f, "╭", title, "╮");
    snprintf(buf, sizeof buf, "Result: %s%s%s%s%s", sget(rep, "result"),
             *sget(rep, "reason") ? " (" : "", sget(rep, "reason"), *sget(rep, "reason") ? ")" : "",
             "");
    line(f, buf);
    if (*sget(rep, "message"))
        line(f, sget(rep, "message"));
    size_t i, j;
    json_t *c, *x;
    json_array_foreach(json_object_get(rep, "categories"), i, c)
    {
        snprintf(title, sizeof title, "%s/%s: %s", sget(c, "domain"), sget(c, "variant"),
                 sget(c, "status"));
        rule(f, "├", title, "┤");
        if (*sget(c, "workflow")) {
            snprintf(buf, sizeof buf, "Workflow %s%s%s%s%s%s", sget(c, "workflow"),
                     *sget(c, "platform") ? " on " : "", sget(c, "platform"),
                     *sget(c, "gpuArchitecture") ? " " : "", sget(c, "gpuArchitecture"), "");
            line(f, buf);
        } else {
            line(f, "not started");
        }
        if (*sget(c, "reason")) {
            snprintf(buf, sizeof buf, "%s: %s", sget(c, "reason"), sget(c, "message"));
            line(f, buf);
        }
        size_t passed = 0, failed = 0;
        json_array_foreach(json_object_get(c, "nodes"), j, x)
        {
            if (!strcmp(sget(x, "result"), "Failed"))
                failed++;
            else
                passed++;
        }
        if (passed + failed) {
            snprintf(buf, sizeof buf, "Nodes: %zu passed, %zu failed", passed, failed);
            line(f, buf);
        }
        json_array_foreach(json_object_get(c, "nodes"), j, x)
        {
            bool bad = !strcmp(sget(x, "result"), "Failed");
            snprintf(buf, sizeof buf, "  %s %-24s %s%s%s", bad ? "✗" : "✓", sget(x, "node"),
                     sget(x, "reason"), *sget(x, "message") ? ": " : "", sget(x, "message"));
            wrapped(f, buf, 29, 3);
        }
        const char *tk;
        json_t *tv;
        json_object_foreach(json_object_get(c, "thresholds"), tk, tv)
        {
            snprintf(buf, sizeof buf, "Threshold %s: %s", tk, json_string_value(tv));
            line(f, buf);
        }
        size_t nmeas = measurements(json_object_get(c, "bandwidth"));
        if (nmeas == 1) {
            line(f, "Bus bandwidth by message size:");
            snprintf(buf, sizeof buf, "  %12s  %12s  %12s", "size", "busBW GB/s", "algBW GB/s");
            line(f, buf);
            json_array_foreach(json_object_get(c, "bandwidth"), j, x)
            {
                char sz[32];
                human_size(json_integer_value(json_object_get(x, "sizeBytes")), sz, sizeof sz);
                snprintf(buf, sizeof buf, "  %12s  %12s  %12s", sz, sget(x, "busBW"),
                         sget(x, "algBW"));
                line(f, buf);
            }
        } else if (nmeas > 1) {
            bandwidth_summary(f, json_object_get(c, "bandwidth"), nmeas);
        }
        json_array_foreach(json_object_get(c, "failureLogs"), j, x)
        {
            snprintf(buf, sizeof buf, "Failure log of %s (last lines):", sget(x, "job"));
            line(f, buf);
            size_t k;
            json_t *l;
            json_array_foreach(json_object_get(x, "tail"), k, l)
            {
                snprintf(buf, sizeof buf, "  %s", json_string_value(l));
                line(f, buf);
            }
        }
    }
    rule(f, "╰", NULL, "╯");
}

/* ------------------------------------------------------------ junit */

static void xml(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
                fputc('?', f); /* not allowed in XML 1.0 */
            else
                fputc(*s, f);
        }
    }
}

static void render_junit(const json_t *rep, FILE *f)
{
    size_t tests = 0, failures = 0, i, j;
    json_t *c, *x;
    json_array_foreach(json_object_get(rep, "categories"), i, c)
    {
        size_t n = json_array_size(json_object_get(c, "nodes"));
        tests += n ? n : 1;
        if (n) {
            json_array_foreach(json_object_get(c, "nodes"), j,
                               x) if (!strcmp(sget(x, "result"), "Failed")) failures++;
        } else if (strcmp(sget(c, "status"), "Succeeded")) {
            failures++;
        }
    }
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"", f);
    xml(f, sget(rep, "certification"));
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\">\n", tests, failures);
    json_array_foreach(json_object_get(rep, "categories"), i, c)
    {
        char name[256];
        snprintf(name, sizeof name, "%s/%s", sget(c, "domain"), sget(c, "variant"));
        size_t n = json_array_size(json_object_get(c, "nodes")), nf = 0;
        json_array_foreach(json_object_get(c, "nodes"), j,
                           x) if (!strcmp(sget(x, "result"), "Failed")) nf++;
        if (!n && strcmp(sget(c, "status"), "Succeeded"))
            nf = 1;
        fputs("  <testsuite name=\"", f);
        xml(f, name);
        fprintf(f, "\" tests=\"%zu\" failures=\"%zu\">\n", n ? n : 1, nf);
        if (!n) {
            fputs("    <testcase classname=\"", f);
            xml(f, name);
            fputs("\" name=\"", f);
            xml(f, *sget(c, "workflow") ? sget(c, "workflow") : "not started");
            if (!strcmp(sget(c, "status"), "Succeeded")) {
                fputs("\"/>\n", f);
            } else {
                fputs("\">\n      <failure message=\"", f);
                xml(f, *sget(c, "reason") ? sget(c, "reason") : sget(c, "status"));
                fputs("\">", f);
                xml(f, sget(c, "message"));
                fputs("</failure>\n    </testcase>\n", f);
            }
        }
        json_array_foreach(json_object_get(c, "nodes"), j, x)
        {
            fputs("    <testcase classname=\"", f);
            xml(f, name);
            fputs("\" name=\"", f);
            xml(f, sget(x, "node"));
            if (strcmp(sget(x, "result"), "Failed")) {
                fputs("\"/>\n", f);
                continue;
            }
            fputs("\">\n      <failure message=\"", f);
            xml(f, *sget(x, "reason") ? sget(x, "reason") : "Failed");
            fputs("\">", f);
            xml(f, sget(x, "message"));
            fputs("</failure>\n    </testcase>\n", f);
        }
        fputs("  </testsuite>\n", f);
    }
    fputs("</testsuites>\n", f);
}

/* ------------------------------------------------------------ html */

/* The busBandwidthGBps threshold (docs/measurements.md; a key containing
 * "busBW" too): "value >= 350" / "value > 350" → 350, the plot's line. */
static bool threshold_of(const json_t *c, double *out)
{
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(c, "thresholds"), k, v)
    {
        const char *e = json_string_value(v);
        if (!e || (!strstr(k, "busBW") && strcmp(k, "busBandwidthGBps") != 0))
            continue;
        const char *p = strchr(e, '>');
        if (!p)
            continue;
        p++;
        if (*p == '=')
            p++;
        char *end;
        double d = strtod(p, &end);
        if (end != p) {
            *out = d;
            return true;
        }
    }
    return false;
}

static void html_plot(FILE *f, const json_t *c)
{
    const json_t *bw = json_object_get(c, "bandwidth");
    size_t n = json_array_size(bw), i;
    if (!n)
        return;
    double maxy = 0, thr = 0;
    bool has_thr = threshold_of(c, &thr);
    json_t *x;
    json_array_foreach(bw, i, x)
    {
        double y = atof(sget(x, "busBW"));
        if (y > maxy)
            maxy = y;
    }
    if (has_thr && thr > maxy)
        maxy = thr;
    if (maxy <= 0)
        maxy = 1;
    maxy *= 1.1;
    const double W = 560, H = 220, L = 50, B = 30;
    fprintf(f,
            "<svg class=\"plot\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
            "role=\"img\" aria-label=\"bus bandwidth by message size\">\n",
            W + L + 40, H + B + 10, W + L + 40, H + B + 10);
    fprintf(f,
            "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" class=\"axis\"/>"
            "<line x1=\"%.0f\" y1=\"0\" x2=\"%.0f\" y2=\"%.0f\" class=\"axis\"/>\n",
            L, H, L + W, H, L, L, H);
    fprintf(f,
            "<text x=\"2\" y=\"12\" class=\"lbl\">%.0f GB/s</text>"
            "<text x=\"%.0f\" y=\"%.0f\" class=\"lbl\">message size</text>\n",
            maxy, L + W - 80, H + 25);
    fputs("<polyline class=\"bw\" points=\"", f);
    json_array_foreach(bw, i, x)
    {
        double px = L + (n > 1 ? W * (double)i / (double)(n - 1) : W / 2);
        double py = H - H * atof(sget(x, "busBW")) / maxy;
        fprintf(f, "%s%.1f,%.1f", i ? " " : "", px, py);
    }
    fputs("\"/>\n", f);
    json_array_foreach(bw, i, x)
    {
        double px = L + (n > 1 ? W * (double)i / (double)(n - 1) : W / 2);
        double py = H - H * atof(sget(x, "busBW")) / maxy;
        char sz[32];
        human_size(json_integer_value(json_object_get(x, "sizeBytes")), sz, sizeof sz);
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" class=\"pt\"><title>", px, py);
        xml(f, sz);
        fputs(": ", f);
        xml(f, sget(x, "busBW"));
        fprintf(f,
                " GB/s</title></circle><text x=\"%.1f\" y=\"%.0f\" class=\"tick\" "
                "text-anchor=\"middle\">",
                px, H + 14);
        xml(f, sz);
        fputs("</text>\n", f);
    }
    if (has_thr) {
        double py = H - H * thr / maxy;
        fprintf(f,
                "<line class=\"threshold\" x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\"/>"
                "<text x=\"%.0f\" y=\"%.1f\" class=\"lbl thr\">threshold %.6g GB/s</text>\n",
                L, py, L + W, py, L + W - 150, py - 4, thr);
    }
    fputs("</svg>\n", f);
}

static const char HTML_HEAD[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width\">\n<title>";
static const char HTML_STYLE[] =
    "</title>\n<style>\n"
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\n"
    ".Succeeded{color:#17803d}.Failed{color:#b91c1c}.InProgress,.Pending{color:#a16207}\n"
    ".grid{display:flex;flex-wrap:wrap;gap:4px;margin:.5em 0}\n"
    ".node{width:18px;height:18px;border-radius:3px;background:#16a34a}\n"
    ".node.failed{background:#dc2626}\n"
    "svg .axis{stroke:#444}svg .bw{fill:none;stroke:#2563eb;stroke-width:2}\n"
    "svg .pt{fill:#2563eb}svg .threshold{stroke:#dc2626;stroke-dasharray:6 4}\n"
    "svg .lbl,svg .tick{font-size:11px;fill:#444}svg .thr{fill:#dc2626}\n"
    "table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}\n"
    "th{cursor:pointer;background:#f3f4f6}pre{background:#f8f8f8;padding:.5em}\n"
    "</style></head>\n<body>\n";
/* Sorting: click a header; numbers sort as numbers. Also marks the page
 * ready for tests (data-ready, data-node-count). No network access. */
static const char HTML_SCRIPT[] =
    "<script>\n"
    "(function(){\n"
    " var t=document.getElementById('results');\n"
    " t.querySelectorAll('th').forEach(function(th,i){th.addEventListener('click',function(){\n"
    "  var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),asc=th.dataset.dir!=='asc';\n"
    "  th.dataset.dir=asc?'asc':'desc';\n"
    "  rows.sort(function(x,y){var a=x.cells[i].textContent,c=y.cells[i].textContent,\n"
    "   na=parseFloat(a),nc=parseFloat(c);var "
    "r=(!isNaN(na)&&!isNaN(nc))?na-nc:a.localeCompare(c);\n"
    "   return asc?r:-r;});\n"
    "  rows.forEach(function(r){b.appendChild(r);});});});\n"
    " document.body.dataset.nodeCount=document.querySelectorAll('.node').length;\n"
    " document.body.dataset.failedCount=document.querySelectorAll('.node.failed').length;\n"
    " document.body.dataset.ready='1';\n"
    "})();\n</script>\n";

static void render_html(const json_t *rep, FILE *f)
{
    fputs(HTML_HEAD, f);
    fputs("Certification ", f);
    xml(f, sget(rep, "certification"));
    fputs(HTML_STYLE, f);
    fputs("<h1>Certification ", f);
    xml(f, sget(rep, "namespace"));
    fputs("/", f);
    xml(f, sget(rep, "certification"));
    fprintf(f, "</h1>\n<p id=\"result\" class=\"%s\"><b>", sget(rep, "result"));
    xml(f, sget(rep, "result"));
    fputs("</b> ", f);
    xml(f, sget(rep, "reason"));
    fputs(" — ", f);
    xml(f, sget(rep, "message"));
    fputs("</p>\n<h2>Failed nodes</h2>\n<ul id=\"failed-nodes\">\n", f);
    size_t i, j;
    json_t *c, *x;
    json_array_foreach(json_object_get(rep, "categories"), i, c)
        json_array_foreach(json_object_get(c, "nodes"), j, x)
    {
        if (strcmp(sget(x, "result"), "Failed"))
            continue;
        fputs("<li><span class=\"failed-node\">", f);
        xml(f, sget(x, "node"));
        fputs("</span> (", f);
        xml(f, sget(c, "domain"));
        fputs("/", f);
        xml(f, sget(c, "variant"));
        fputs("): ", f);
        xml(f, sget(x, "reason"));
        fputs(" ", f);
        xml(f, sget(x, "message"));
        fputs("</li>\n", f);
    }
    fputs("</ul>\n", f);
    json_array_foreach(json_object_get(rep, "categories"), i, c)
    {
        fputs("<section class=\"category\"><h2>", f);
        xml(f, sget(c, "domain"));
        fputs("/", f);
        xml(f, sget(c, "variant"));
        fprintf(f, " <span class=\"%s\">", sget(c, "status"));
        xml(f, sget(c, "status"));
        fputs("</span></h2>\n<p>", f);
        if (*sget(c, "workflow")) {
            fputs("Workflow ", f);
            xml(f, sget(c, "workflow"));
            fputs(" on ", f);
            xml(f, sget(c, "platform"));
            fputs(" ", f);
            xml(f, sget(c, "gpuArchitecture"));
            fputs(". ", f);
        }
        xml(f, sget(c, "reason"));
        fputs(" ", f);
        xml(f, sget(c, "message"));
        fputs("</p>\n<div class=\"grid\">\n", f);
        json_array_foreach(json_object_get(c, "nodes"), j, x)
        {
            bool bad = !strcmp(sget(x, "result"), "Failed");
            fprintf(f, "<div class=\"node%s\" data-node=\"", bad ? " failed" : "");
            xml(f, sget(x, "node"));
            fputs("\" title=\"", f);
            xml(f, sget(x, "node"));
            fputs(": ", f);
            if (bad) {
                xml(f, sget(x, "reason"));
                fputs(" ", f);
                xml(f, sget(x, "message"));
            } else {
                fputs("passed", f);
            }
            fputs("\"></div>\n", f);
        }
        fputs("</div>\n", f);
        html_plot(f, c);
        json_array_foreach(json_object_get(c, "failureLogs"), j, x)
        {
            fputs("<p>Failure log of ", f);
            xml(f, sget(x, "job"));
            fputs(":</p><pre>", f);
            size_t k;
            json_t *l;
            json_array_foreach(json_object_get(x, "tail"), k, l)
            {
                xml(f, json_string_value(l));
                fputc('\n', f);
            }
            fputs("</pre>\n", f);
        }
        fputs("</section>\n", f);
    }
    fputs("<h2>All results</h2>\n<table id=\"results\"><thead><tr><th>category</th><th>node</th>"
          "<th>result</th><th>reason</th><th>message</th></tr></thead><tbody>\n",
          f);
    json_array_foreach(json_object_get(rep, "categories"), i, c)
        json_array_foreach(json_object_get(c, "nodes"), j, x)
    {
        fputs("<tr><td>", f);
        xml(f, sget(c, "domain"));
        fputs("/", f);
        xml(f, sget(c, "variant"));
        fputs("</td><td>", f);
        xml(f, sget(x, "node"));
        fprintf(f, "</td><td class=\"%s\">",
                !strcmp(sget(x, "result"), "Failed") ? "Failed" : "Succeeded");
        xml(f, sget(x, "result"));
        fputs("</td><td>", f);
        xml(f, sget(x, "reason"));
        fputs("</td><td>", f);
        xml(f, sget(x, "message"));
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
    fputs(HTML_SCRIPT, f);
    fputs("</body></html>\n", f);
}

int gr_cli_report_render(const json_t *report, const char *format, FILE *out, gr_err *err)
{
    if (!format || !strcmp(format, "text")) {
        render_text(report, out);
        return GR_OK;
    }
    if (!strcmp(format, "json")) {
        char *s = json_dumps(report, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (!s)
            return gr_err_set(err, GR_ENOMEM, "report: out of memory");
        fprintf(out, "%s\n", s);
        free(s);
        return GR_OK;
    }
    if (!strcmp(format, "junit")) {
        render_junit(report, out);
        return GR_OK;
    }
    if (!strcmp(format, "html")) {
        render_html(report, out);
        return GR_OK;
    }
    return gr_err_set(err, GR_EINVAL, "-o %s: want text, json, junit or html", format);
}
