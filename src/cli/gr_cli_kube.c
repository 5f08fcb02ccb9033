/* The cluster commands of `gpuready` (gr_cli.h): certify, report, status,
 * list, cleanup. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gr_buf.h"
#include "gr_cli.h"
#include "gr_duration.h"
#include "gr_kube_config.h"
#include "gr_kube_object.h"
#include "gr_kube_rest.h"
#include "gr_nvcre_catalog.h"
#include "gr_nvcre_cert.h"
#include "gr_nvcre_types.h"

#define MAX_ITEMS 64

static const gr_kube_gvr GVR_CERTS = {GR_NVCRE_GROUP, GR_NVCRE_VERSION,
                                      GR_NVCRE_PLURAL_CERTIFICATIONS};
static const gr_kube_gvr GVR_WORKFLOWS = {GR_NVCRE_GROUP, GR_NVCRE_VERSION,
                                          GR_NVCRE_PLURAL_WORKFLOWS};
static const gr_kube_gvr GVR_JOBS = {GR_NVCRE_GROUP, GR_NVCRE_VERSION, GR_NVCRE_PLURAL_JOBS};
static const gr_kube_gvr GVR_BMS = {GR_NVCRE_GROUP, GR_NVCRE_VERSION, "bandwidthmeasurements"};
static const gr_kube_gvr GVR_PODS = {"", "v1", "pods"};

typedef struct {
    const char *kubeconfig, *context, *ns, *output, *name, *timeout;
    bool all_ns, wait;
    const char *categories[MAX_ITEMS];
    size_t ncategories;
    const char *selectors[MAX_ITEMS];
    size_t nselectors;
    const char *sets[MAX_ITEMS];
    size_t nsets;
    const char *args[4];
    size_t nargs;
    int64_t poll_ns;
} opts;

static const char *sget(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static const char *meta(const json_t *o, const char *k)
{
    return sget(json_object_get(o, "metadata"), k);
}

/* Flags shared by every cluster command; -1 on bad usage (printed). */
static int parse(const char *cmd, int argc, char **argv, opts *o, FILE *errf)
{
    memset(o, 0, sizeof *o);
    o->output = "text";
    o->poll_ns = 5LL * 1000000000LL;
    const char *poll = getenv("GPUREADY_POLL_INTERVAL");
    int64_t pns;
    if (poll && gr_duration_parse(poll, &pns, NULL) == GR_OK && pns > 0)
        o->poll_ns = pns;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define VAL(flag, field)                                                 \
    if (!strcmp(a, flag)) {                                              \
        if (!v) {                                                        \
            fprintf(errf, "gpuready %s: %s needs a value\n", cmd, flag); \
            return -1;                                                   \
        }                                                                \
        o->field = v;                                                    \
        i++;                                                             \
        continue;                                                        \
    }                                                                    \
    if (!strncmp(a, flag "=", strlen(flag) + 1)) {                       \
        o->field = a + strlen(flag) + 1;                                 \
        continue;                                                        \
    }
        VAL("--kubeconfig", kubeconfig)
        VAL("--context", context)
        VAL("--namespace", ns)
        VAL("-n", ns)
        VAL("-o", output)
        VAL("--output", output)
        VAL("--name", name)
        VAL("--timeout", timeout)
#undef VAL
        if ((!strcmp(a, "--category") || !strcmp(a, "--node-selector") || !strcmp(a, "--set")) &&
            v) {
            size_t *n = !strcmp(a, "--category") ? &o->ncategories
                        : !strcmp(a, "--set")    ? &o->nsets
                                                 : &o->nselectors;
            const char **arr = !strcmp(a, "--category") ? o->categories
                               : !strcmp(a, "--set")    ? o->sets
                                                        : o->selectors;
            if (*n >= MAX_ITEMS) {
                fprintf(errf, "gpuready %s: at most %d %s\n", cmd, MAX_ITEMS, a);
                return -1;
            }
            arr[(*n)++] = v;
            i++;
        } else if (!strcmp(a, "-A") || !strcmp(a, "--all-namespaces")) {
            o->all_ns = true;
        } else if (!strcmp(a, "--wait")) {
            o->wait = true;
        } else if (a[0] == '-') {
            fprintf(errf, "gpuready %s: unknown flag %s\n", cmd, a);
            return -1;
        } else if (o->nargs < 4) {
            o->args[o->nargs++] = a;
        } else {
            fprintf(errf, "gpuready %s: too many arguments\n", cmd);
            return -1;
        }
    }
    return 0;
}

static int connect(const char *cmd, opts *o, gr_kube_client **c, FILE *errf)
{
    gr_kube_config cfg;
    gr_err err;
    if (gr_kube_config_load(o->kubeconfig, o->context, &cfg, &err) != GR_OK) {
        fprintf(errf, "gpuready %s: %s\n", cmd, err.msg);
        return 1;
    }
    if (gr_kube_client_new(&cfg, c, &err) != GR_OK) {
        fprintf(errf, "gpuready %s: %s\n", cmd, err.msg);
        gr_kube_config_free(&cfg);
        return 1;
    }
    if (!o->ns) {
        const gr_kube_config *k = gr_kube_client_config(*c);
        o->ns = k->namespace_ && *k->namespace_ ? k->namespace_ : "default";
    }
    gr_kube_config_free(&cfg);
    return 0;
}

static json_t *items(gr_kube_client *c, const gr_kube_gvr *gvr, const char *ns, const char *sel,
                     bool optional, gr_err *err)
{
    gr_kube_opts o = {.label_selector = sel};
    gr_kube_status st;
    json_t *list = NULL;
    int rc = gr_kube_list_all(c, gvr, ns, &o, &list, &st, err);
    if (rc != GR_OK)
        return optional && rc == GR_ENOTFOUND ? json_array() : NULL;
    json_t *it = json_incref(json_object_get(list, "items"));
    json_decref(list);
    return it ? it : json_array();
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    nanosleep(&ts, NULL);
}

static const json_t *true_cond(const json_t *obj, const char **type)
{
    static const char *types[] = {"Failed", "Succeeded", "InProgress"};
    json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
    for (size_t i = 0; i < 3; i++) {
        json_t *c = gr_kube_condition_find(conds, types[i]);
        if (c && !strcmp(sget(c, "status"), "True")) {
            *type = types[i];
            return c;
        }
    }
    *type = "Pending";
    return NULL;
}

/* ------------------------------------------------------------ certify */

static void progress_line(const json_t *cert, const json_t *wfs, char *out, size_t n)
{
    const char *type;
    const json_t *c = true_cond(cert, &type);
    /* No condition yet: no controller has seen it (is gpuready-manager running?). */
    size_t len = (size_t)snprintf(out, n, "%s: %s", type,
                                  c ? sget(c, "message")
                                    : "not picked up by a controller yet (gpuready-manager)");
    size_t i;
    json_t *cs;
    json_array_foreach(json_object_get(json_object_get(cert, "status"), "categoryStatuses"), i, cs)
    {
        if (len >= n)
            break;
        const char *wn = sget(json_object_get(cs, "workflowRef"), "name");
        const json_t *orch = NULL;
        size_t j;
        json_t *w;
        json_array_foreach(wfs, j, w) if (*wn && !strcmp(meta(w, "name"), wn)) orch =
            json_object_get(json_object_get(w, "status"), "orchestration");
        len += (size_t)snprintf(out + len, n - len, "\n  %s/%s %s", sget(cs, "domain"),
                                sget(cs, "variant"), sget(cs, "status"));
        if (orch && len < n)
            len += (size_t)snprintf(
                out + len, n - len, " (groups %lld, nodes %lld, iteration %lld)",
                (long long)json_integer_value(json_object_get(orch, "totalGroups")),
                (long long)json_integer_value(json_object_get(orch, "totalNodes")),
                (long long)json_integer_value(json_object_get(orch, "currentIteration")));
    }
}

static int follow(gr_kube_client *c, const opts *o, const char *name, FILE *out, FILE *errf)
{
    int64_t deadline = 0;
    if (o->timeout) {
        int64_t d;
        if (gr_duration_parse(o->timeout, &d, NULL) != GR_OK || d <= 0) {
            fprintf(errf, "gpuready: --timeout %s: want a Go duration such as 2h\n", o->timeout);
            return 2;
        }
        deadline = gr_kube_now_ns() + d;
    }
    char last[4096] = "", cur[4096];
    for (;;) {
        gr_err err;
        gr_kube_status st;
        json_t *cert = NULL;
        if (gr_kube_get(c, &GVR_CERTS, o->ns, name, NULL, &cert, &st, &err) != GR_OK) {
            fprintf(errf, "gpuready: Certification %s/%s: %s\n", o->ns, name, err.msg);
            return 1;
        }
        json_t *wfs = items(c, &GVR_WORKFLOWS, o->ns, NULL, true, &err);
        progress_line(cert, wfs, cur, sizeof cur);
        if (strcmp(cur, last)) {
            fprintf(out, "%s\n", cur);
            fflush(out);
            snprintf(last, sizeof last, "%s", cur);
        }
        json_decref(wfs);
        const char *type;
        true_cond(cert, &type);
        json_decref(cert);
        if (!strcmp(type, "Succeeded"))
            return 0;
        if (!strcmp(type, "Failed"))
            return 1;
        if (deadline && gr_kube_now_ns() > deadline) {
            fprintf(errf, "gpuready: Certification %s/%s still running after %s\n", o->ns, name,
                    o->timeout);
            return 1;
        }
        sleep_ns(o->poll_ns);
    }
}

/* --set thresholds=...: a map of a known key to a CEL expression over
 * `value`. The keys are the Job's (docs/measurements.md § Thresholds,
 * GR_MEASURE_KEY_*); an unknown one would fail every node of the category
 * with UnknownThresholdKey after the whole run. 0 ok, else 1 (told). */
static int check_thresholds(json_t *val, FILE *errf)
{
    static const char *const known[] = {"algBandwidthGBps", "avgStepTimeSec", "avgTFLOPsPerGPU",
                                        "busBandwidthGBps", "goodputRatio"};
    static const char *const list =
        "algBandwidthGBps, avgStepTimeSec, avgTFLOPsPerGPU, busBandwidthGBps, goodputRatio";
    if (!json_is_object(val)) {
        fprintf(errf,
                "gpuready certify: --set thresholds: want a JSON object of key to CEL "
                "expression, e.g. --set 'thresholds={\"busBandwidthGBps\":\"value >= 300\"}'\n");
        return 1;
    }
    const char *key;
    json_t *expr;
    json_object_foreach(val, key, expr)
    {
        size_t i = 0;
        while (i < sizeof known / sizeof *known && strcmp(known[i], key))
            i++;
        if (i == sizeof known / sizeof *known) {
            fprintf(errf, "gpuready certify: --set thresholds: unknown key \"%s\" (known: %s)\n",
                    key, list);
            return 1;
        }
        if (!json_is_string(expr) || !*json_string_value(expr)) {
            fprintf(errf,
                    "gpuready certify: --set thresholds: \"%s\": want a CEL expression over "
                    "value as a string, e.g. \"value >= 300\"\n",
                    key);
            return 1;
        }
    }
    return 0;
}

int gr_cli_certify(int argc, char **argv, FILE *out, FILE *errf)
{
    opts o;
    if (parse("certify", argc, argv, &o, errf) < 0)
        return 2;
    if (!o.ncategories) {
        fputs("usage: gpuready certify --category DOMAIN/VARIANT [--category ...] "
              "[--node-selector K=V ...] [--set OPTION=VALUE ...] [--name NAME] [-n NS] "
              "[--wait [--timeout D]]\n",
              errf);
        return 2;
    }
    gr_nvcre_catalog *cat = NULL;
    gr_err err;
    if (gr_nvcre_catalog_load(&cat, &err) != GR_OK) {
        fprintf(errf, "gpuready certify: %s\n", err.msg);
        return 1;
    }
    json_t *cats = json_array(), *sel = json_object();
    for (size_t i = 0; i < o.ncategories; i++) {
        char dv[256];
        snprintf(dv, sizeof dv, "%s", o.categories[i]);
        char *slash = strchr(dv, '/');
        if (slash)
            *slash = '\0';
        if (!slash || !gr_nvcre_catalog_has(cat, dv, slash + 1)) {
            /* before anything is created: name it and list the valid ones */
            fprintf(errf,
                    "gpuready certify: --category %s: Unknown certification category %s; "
                    "valid categories (DOMAIN/VARIANT): ",
                    o.categories[i], o.categories[i]);
            for (size_t k = 0; k < gr_nvcre_catalog_count(cat); k++) {
                const char *d, *v;
                gr_nvcre_catalog_entry(cat, k, &d, &v, NULL);
                fprintf(errf, "%s%s/%s", k ? ", " : "", d, v);
            }
            fputc('\n', errf);
            json_decref(cats);
            json_decref(sel);
            gr_nvcre_catalog_free(cat);
            return 2;
        }
        json_array_append_new(cats, json_pack("{s:s,s:s}", "domain", dv, "variant", slash + 1));
    }
    for (size_t i = 0; i < o.nselectors; i++) {
        const char *eq = strchr(o.selectors[i], '=');
        if (!eq || eq == o.selectors[i]) {
            fprintf(errf, "gpuready certify: --node-selector %s: want KEY=VALUE\n", o.selectors[i]);
            json_decref(cats);
            json_decref(sel);
            gr_nvcre_catalog_free(cat);
            return 2;
        }
        char k[512];
        snprintf(k, sizeof k, "%.*s", (int)(eq - o.selectors[i]), o.selectors[i]);
        json_object_set_new(sel, k, json_string(eq + 1));
    }
    if (!json_object_size(sel))
        json_object_set_new(sel, "nvidia.com/gpu.present", json_string("true"));
    json_t *cert = json_pack("{s:s,s:s,s:{},s:{s:{s:o},s:o}}", "apiVersion", GR_NVCRE_API_VERSION,
                             "kind", GR_NVCRE_KIND_CERTIFICATION, "metadata", "spec", "target",
                             "nodeSelector", sel, "categories", cats);
    /* --set KEY=VALUE: a CategoryOptions field for every category (the value
     * as JSON when it parses, else a string: --set maxBytes=8G,
     * --set nodesPerJob=4, --set 'workloadMetadata={"labels":{"a":"b"}}') */
    for (size_t i = 0; i < o.nsets; i++) {
        const char *eq = strchr(o.sets[i], '=');
        if (!eq || eq == o.sets[i]) {
            fprintf(errf, "gpuready certify: --set %s: want KEY=VALUE\n", o.sets[i]);
            json_decref(cert);
            gr_nvcre_catalog_free(cat);
            return 2;
        }
        char k[128];
        snprintf(k, sizeof k, "%.*s", (int)(eq - o.sets[i]), o.sets[i]);
        if (!strcmp(k, "target") || !strcmp(k, "categories")) {
            fprintf(errf, "gpuready certify: --set %s: use --node-selector / --category\n", k);
            json_decref(cert);
            gr_nvcre_catalog_free(cat);
            return 2;
        }
        json_t *val = json_loads(eq + 1, JSON_DECODE_ANY, NULL);
        if (!val)
            val = json_string(eq + 1);
        if (!strcmp(k, "thresholds") && check_thresholds(val, errf)) {
            json_decref(val);
            json_decref(cert);
            gr_nvcre_catalog_free(cat);
            return 2;
        }
        json_object_set_new(json_object_get(cert, "spec"), k, val);
    }
    /* every option must reach a workload: the controller would fail the
     * Certification (BuildFailed) at once, so refuse before creating it */
    int crc = gr_nvcre_cert_check_options(cat, json_object_get(cert, "spec"), &err);
    gr_nvcre_catalog_free(cat);
    if (crc != GR_OK) {
        fprintf(errf, "gpuready certify: %s\n", err.msg);
        json_decref(cert);
        return 2;
    }
    json_t *md = json_object_get(cert, "metadata");
    if (o.name)
        json_object_set_new(md, "name", json_string(o.name));
    else
        json_object_set_new(md, "generateName", json_string("gpuready-"));
    gr_kube_client *c;
    if (connect("certify", &o, &c, errf)) {
        json_decref(cert);
        return 1;
    }
    json_object_set_new(md, "namespace", json_string(o.ns));
    json_t *created = NULL;
    gr_kube_status st;
    gr_kube_opts ko = {.field_manager = "gpuready"};
    int rc = gr_kube_create(c, &GVR_CERTS, o.ns, cert, &ko, &created, &st, &err);
    json_decref(cert);
    if (rc != GR_OK) {
        fprintf(errf, "gpuready certify: %s\n", err.msg);
        gr_kube_client_free(c);
        return 1;
    }
    char name[256];
    snprintf(name, sizeof name, "%s", meta(created, "name"));
    json_decref(created);
    fprintf(out, "certification.nvcre.nvidia.com/%s created\n", name);
    int ret = o.wait ? follow(c, &o, name, out, errf) : 0;
    gr_kube_client_free(c);
    return ret;
}

/* ------------------------------------------------------------ report, status */

static int fetch_report(const char *cmd, opts *o, gr_kube_client *c, json_t **rep, FILE *errf)
{
    gr_err err;
    gr_kube_status st;
    json_t *cert = NULL;
    if (gr_kube_get(c, &GVR_CERTS, o->ns, o->args[0], NULL, &cert, &st, &err) != GR_OK) {
        fprintf(errf, "gpuready %s: Certification %s/%s: %s\n", cmd, o->ns, o->args[0], err.msg);
        return 1;
    }
    char sel[512];
    snprintf(sel, sizeof sel, "%s=%s", GR_NVCRE_LABEL_CERTIFICATION, o->args[0]);
    json_t *wfs = items(c, &GVR_WORKFLOWS, o->ns, sel, true, &err);
    json_t *jobs = items(c, &GVR_JOBS, o->ns, NULL, true, &err);
    json_t *bms = items(c, &GVR_BMS, o->ns, NULL, true, &err);
    int rc = gr_cli_report_build(cert, wfs, jobs, bms, rep, &err);
    json_decref(cert);
    json_decref(wfs);
    json_decref(jobs);
    json_decref(bms);
    if (rc != GR_OK) {
        fprintf(errf, "gpuready %s: %s\n", cmd, err.msg);
        return 1;
    }
    return 0;
}

int gr_cli_report(int argc, char **argv, FILE *out, FILE *errf)
{
    opts o;
    if (parse("report", argc, argv, &o, errf) < 0 || o.nargs != 1) {
        fputs("usage: gpuready report NAME [-n NS] [-o text|json|junit|html]\n", errf);
        return 2;
    }
    if (strcmp(o.output, "text") && strcmp(o.output, "json") && strcmp(o.output, "junit") &&
        strcmp(o.output, "html")) {
        fprintf(errf, "gpuready report: -o %s: want text, json, junit or html\n", o.output);
        return 2;
    }
    gr_kube_client *c;
    if (connect("report", &o, &c, errf))
        return 1;
    json_t *rep = NULL;
    int rc = fetch_report("report", &o, c, &rep, errf);
    gr_kube_client_free(c);
    if (rc)
        return rc;
    gr_err err;
    rc = gr_cli_report_render(rep, o.output, out, &err) == GR_OK ? 0 : 1;
    json_decref(rep);
    return rc;
}

int gr_cli_status(int argc, char **argv, FILE *out, FILE *errf)
{
    opts o;
    if (parse("status", argc, argv, &o, errf) < 0 || o.nargs != 1) {
        fputs("usage: gpuready status NAME [-n NS]\n", errf);
        return 2;
    }
    gr_kube_client *c;
    if (connect("status", &o, &c, errf))
        return 1;
    gr_err err;
    gr_kube_status st;
    json_t *cert = NULL;
    if (gr_kube_get(c, &GVR_CERTS, o.ns, o.args[0], NULL, &cert, &st, &err) != GR_OK) {
        fprintf(errf, "gpuready status: Certification %s/%s: %s\n", o.ns, o.args[0], err.msg);
        gr_kube_client_free(c);
        return 1;
    }
    json_t *wfs = items(c, &GVR_WORKFLOWS, o.ns, NULL, true, &err);
    char buf[4096];
    progress_line(cert, wfs, buf, sizeof buf);
    fprintf(out, "%s/%s %s\n", o.ns, o.args[0], buf);
    json_decref(wfs);
    json_decref(cert);
    gr_kube_client_free(c);
    return 0;
}

int gr_cli_list(int argc, char **argv, FILE *out, FILE *errf)
{
    opts o;
    if (parse("list", argc, argv, &o, errf) < 0 || o.nargs) {
        fputs("usage: gpuready list [-n NS | -A]\n", errf);
        return 2;
    }
    gr_kube_client *c;
    if (connect("list", &o, &c, errf))
        return 1;
    gr_err err;
    json_t *certs = items(c, &GVR_CERTS, o.all_ns ? NULL : o.ns, NULL, false, &err);
    gr_kube_client_free(c);
    if (!certs) {
        fprintf(errf, "gpuready list: %s\n", err.msg);
        return 1;
    }
    if (o.all_ns)
        fprintf(out, "%-20s ", "NAMESPACE");
    fprintf(out, "%-32s %-11s %-24s %s\n", "NAME", "RESULT", "REASON", "CATEGORIES");
    size_t i;
    json_t *x;
    json_array_foreach(certs, i, x)
    {
        const char *type;
        const json_t *cnd = true_cond(x, &type);
        size_t done = 0, total;
        json_t *css = json_object_get(json_object_get(x, "status"), "categoryStatuses");
        total = json_array_size(json_object_get(json_object_get(x, "spec"), "categories"));
        size_t j;
        json_t *cs;
        json_array_foreach(css, j, cs) if (!strcmp(sget(cs, "status"), "Succeeded") ||
                                           !strcmp(sget(cs, "status"), "Failed")) done++;
        if (o.all_ns)
            fprintf(out, "%-20s ", meta(x, "namespace"));
        fprintf(out, "%-32s %-11s %-24s %zu/%zu\n", meta(x, "name"), type,
                cnd ? sget(cnd, "reason") : "", done, total);
    }
    json_decref(certs);
    return 0;
}

/* ------------------------------------------------------------ cleanup */

static void append_list(gr_buf *b, const char *s)
{
    if (b->len)
        gr_buf_append(b, ",", 1);
    gr_buf_append(b, s, strlen(s));
}

int gr_cli_cleanup(int argc, char **argv, FILE *out, FILE *errf)
{
    opts o;
    if (parse("cleanup", argc, argv, &o, errf) < 0 || o.nargs != 1) {
        fputs("usage: gpuready cleanup NAME [-n NS] [--timeout D (default 10m)]\n", errf);
        return 2;
    }
    int64_t limit = 600LL * 1000000000LL;
    if (o.timeout && (gr_duration_parse(o.timeout, &limit, NULL) != GR_OK || limit <= 0)) {
        fprintf(errf, "gpuready cleanup: --timeout %s: want a Go duration such as 10m\n",
                o.timeout);
        return 2;
    }
    gr_kube_client *c;
    if (connect("cleanup", &o, &c, errf))
        return 1;
    gr_err err;
    char sel[512];
    snprintf(sel, sizeof sel, "%s=%s", GR_NVCRE_LABEL_CERTIFICATION, o.args[0]);
    /* what the run created: its Workflows, their Jobs (their pods carry
     * nvcre.nvidia.com/job) */
    json_t *wfs = items(c, &GVR_WORKFLOWS, o.ns, sel, true, &err);
    gr_buf wlist, jlist;
    gr_buf_init(&wlist, 16384);
    gr_buf_init(&jlist, 16384);
    size_t i;
    json_t *x;
    json_array_foreach(wfs, i, x) append_list(&wlist, meta(x, "name"));
    json_decref(wfs);
    if (wlist.len) {
        char jsel[17000];
        snprintf(jsel, sizeof jsel, "%s in (%.*s)", GR_NVCRE_LABEL_WORKFLOW, (int)wlist.len,
                 wlist.data);
        json_t *jobs = items(c, &GVR_JOBS, o.ns, jsel, true, &err);
        json_array_foreach(jobs, i, x) append_list(&jlist, meta(x, "name"));
        json_decref(jobs);
    }
    /* Background: the finalizers of the Certification, its Workflows and
     * Jobs order the teardown (see gr_nvcre_cert_ctl.h for why not
     * Foreground). */
    gr_kube_opts del = {.propagation = "Background"};
    gr_kube_status st;
    int rc = gr_kube_delete(c, &GVR_CERTS, o.ns, o.args[0], &del, NULL, &st, &err);
    if (rc != GR_OK && rc != GR_ENOTFOUND) {
        fprintf(errf, "gpuready cleanup: %s\n", err.msg);
        gr_buf_free(&wlist);
        gr_buf_free(&jlist);
        gr_kube_client_free(c);
        return 1;
    }
    fprintf(out, "certification.nvcre.nvidia.com/%s deleted\n", o.args[0]);
    int64_t deadline = gr_kube_now_ns() + limit;
    int ret = 0;
    for (;;) { /* the Certification goes once its Workflows are gone */
        json_t *obj = NULL;
        rc = gr_kube_get(c, &GVR_CERTS, o.ns, o.args[0], NULL, &obj, &st, &err);
        json_decref(obj);
        if (rc == GR_ENOTFOUND)
            break;
        if (gr_kube_now_ns() > deadline) {
            fprintf(errf, "gpuready cleanup: Certification %s/%s still present after %s\n", o.ns,
                    o.args[0], o.timeout ? o.timeout : "10m");
            ret = 1;
            break;
        }
        sleep_ns(o.poll_ns);
    }
    if (!ret && jlist.len) {
        char psel[17000];
        snprintf(psel, sizeof psel, "%s in (%.*s)", GR_NVCRE_LABEL_JOB, (int)jlist.len, jlist.data);
        for (;;) {
            json_t *pods = items(c, &GVR_PODS, o.ns, psel, false, &err);
            size_t n = json_array_size(pods);
            json_decref(pods);
            if (pods && n == 0)
                break;
            if (gr_kube_now_ns() > deadline) {
                fprintf(errf, "gpuready cleanup: %zu GPU pod(s) of %s still present\n", n,
                        o.args[0]);
                ret = 1;
                break;
            }
            sleep_ns(o.poll_ns);
        }
    }
    if (!ret)
        fprintf(out, "removed %s: Workflows [%.*s], no GPU pods left\n", o.args[0], (int)wlist.len,
                wlist.data ? wlist.data : "");
    gr_buf_free(&wlist);
    gr_buf_free(&jlist);
    gr_kube_client_free(c);
    return ret;
}
