/*
 * gr_cli_render.c — `gpuready render` (issues 16, 17), offline:
 *
 *   gpuready render (-f WORKFLOW.yaml | -f CERTIFICATION.yaml |
 *                    --category D/V [--category …] [--set K=V …])
 *                   (--nodes NODES.yaml | --platform P --gpu G
 *                    [--count N] [--gpus-per-node N]) [-o yaml|json]
 *
 * Runs the controllers' own pure code offline and prints what they would
 * create, every document with sorted keys:
 *  - from a Certification (a file, or --category/--set, which build one):
 *    the Certification controller's step (gr_nvcre_cert_step(): catalog,
 *    options, detection, naming, gang) gives each category's Workflow;
 *    generated Nodes offer the catalog's GPUs and the NIC resource it would
 *    request, so node-allocatable auto-detection keeps the defaults;
 *  - from a Workflow: the Workflow controller's planning path
 *    (gr_nvcre_wf_plan(): discovery, detection, overrides, capacity filter,
 *    gang-scheduling contract, partitioning, Job rendering) gives a summary
 *    document (detection, applied overrides, events, groups, gang verdict),
 *    the dependencies as created (gr_nvcre_wf_dependency_object()) and the
 *    NVCRE Jobs of iteration 1;
 *  - from each Job: the Job controller's workload object
 *    (gr_nvcre_job_build_workload(): the TrainJob).
 * Objects that would get a uid from the API server get fixed ones, so the
 * output is reproducible (the catalog goldens, test/nvcre/data/catalog/).
 * Exit 0 when everything would run, 1 when a controller would mark its
 * object Failed (the summary names the reason and message), 2 on bad usage
 * or input.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gr_cli.h"
#include "gr_err.h"
#include "gr_json.h"
#include "gr_nvcre_catalog.h"
#include "gr_nvcre_cert.h"
#include "gr_nvcre_job.h"
#include "gr_nvcre_types.h"
#include "gr_nvcre_wf.h"
#include "gr_time.h"
#include "gr_yaml.h"

/* ------------------------------------------------------------ YAML output */

static int plain_ok(const char *s)
{
    if (!*s)
        return 0;
    static const char *reserved[] = {"true", "false", "null", "yes",  "no",  "on", "off", "~",
                                     "True", "False", "Null", "NULL", "Yes", "No", "On",  "Off"};
    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
        if (!strcmp(s, reserved[i]))
            return 0;
    if (isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '.' || s[0] == '+')
        return 0;
    for (const char *p = s; *p; p++) {
        if (!isalnum((unsigned char)*p) && !strchr("._/-", *p))
            return 0;
    }
    return 1;
}

static void put_str(FILE *f, const char *s)
{
    if (plain_ok(s)) {
        fputs(s, f);
        return;
    }
    json_t *j = json_string(s);
    char *d = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    fputs(d ? d : "\"\"", f);
    free(d);
    json_decref(j);
}

static void put_scalar(FILE *f, const json_t *v)
{
    if (json_is_string(v)) {
        put_str(f, json_string_value(v));
        return;
    }
    char *d = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    fputs(d ? d : "null", f);
    free(d);
}

static int is_block(const json_t *v)
{
    return (json_is_object(v) && json_object_size(v) > 0) ||
           (json_is_array(v) && json_array_size(v) > 0);
}

static void put_yaml(FILE *f, const json_t *v, int ind);

static void put_entry_value(FILE *f, const json_t *x, int ind)
{
    if (is_block(x)) {
        fputc('\n', f);
        put_yaml(f, x, ind);
    } else {
        fputc(' ', f);
        put_scalar(f, x);
        fputc('\n', f);
    }
}

static void put_yaml(FILE *f, const json_t *v, int ind)
{
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_t *m;
        memcpy(&m, &v, sizeof(m));
        json_object_foreach(m, k, x)
        {
            fprintf(f, "%*s", ind, "");
            put_str(f, k);
            fputc(':', f);
            put_entry_value(f, x, ind + 2);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            fprintf(f, "%*s-", ind, "");
            if (json_is_object(x) && json_object_size(x) > 0) {
                /* first member on the dash line */
                const char *k;
                json_t *y;
                int first = 1;
                json_object_foreach(x, k, y)
                {
                    if (first)
                        fputc(' ', f);
                    else
                        fprintf(f, "%*s", ind + 2, "");
                    first = 0;
                    put_str(f, k);
                    fputc(':', f);
                    put_entry_value(f, y, ind + 4);
                }
            } else {
                put_entry_value(f, x, ind + 2);
            }
        }
    } else {
        fprintf(f, "%*s", ind, "");
        put_scalar(f, v);
        fputc('\n', f);
    }
}

/* ------------------------------------------------------------------ render */

static void usage_render(FILE *f)
{
    fprintf(f, "usage: gpuready render (-f FILE.yaml | --category DOMAIN/VARIANT [--category ...] "
               "[--set OPTION=VALUE ...])\n"
               "                       (--nodes NODES.yaml | --platform P --gpu G [--count N] "
               "[--gpus-per-node N]) [-o yaml|json]\n"
               "  FILE.yaml      a Workflow or a Certification (nvcre.nvidia.com/v1alpha1)\n"
               "  --category     a catalog category (`gpuready catalog list`): renders the\n"
               "                 Certification `gpuready certify` would create\n"
               "  --set          a CategoryOptions field for every category, as for certify\n"
               "  NODES.yaml     Node objects (a List, or one per document), e.g. from\n"
               "                 kubectl get nodes -o yaml\n"
               "  --platform     aws|gcp|azure|oci|onprem|nscale|togetherai|mistral|forge\n"
               "  --gpu          GPU product, e.g. NVIDIA-H100-80GB-HBM3 or h100\n"
               "  --count        generated nodes (default: trainer.numNodes for a Workflow,\n"
               "                 2 for a Certification)\n"
               "  --gpus-per-node  allocatable GPUs of generated nodes (default: 8 for a\n"
               "                 Workflow, the catalog's gpusPerNode for a Certification)\n");
}

static const char *provider_prefix(const char *platform)
{
    static const struct {
        const char *p, *prefix;
    } t[] = {{"aws", "aws:///us-east-1a/i-"},
             {"gcp", "gce://project/zone/"},
             {"azure", "azure:///subscriptions/x/"},
             {"oci", "ocid1.instance.oc1.."},
             {"onprem", ""},
             {"nscale", "nscale://"},
             {"togetherai", "kubevirt://"},
             {"mistral", "metal3://"},
             {"forge", ""}};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (!strcmp(t[i].p, platform))
            return t[i].prefix;
    return NULL;
}

/* nic/nics: a NIC resource every generated Node offers (NULL: none). */
static json_t *gen_nodes(const char *platform, const char *gpu, int count, int gpus,
                         const char *nic, int nics)
{
    json_t *nodes = json_array();
    char product[128];
    if (strchr(gpu, '-'))
        snprintf(product, sizeof(product), "%s", gpu);
    else {
        size_t i;
        memcpy(product, "NVIDIA-", 7);
        for (i = 0; gpu[i] && i + 8 < sizeof(product); i++)
            product[7 + i] = (char)toupper((unsigned char)gpu[i]);
        product[7 + i] = 0;
    }
    const char *prefix = provider_prefix(platform);
    if (!prefix)
        prefix = "";
    for (int i = 0; i < count; i++) {
        char name[64], pid[160], ngpu[16];
        snprintf(name, sizeof(name), "%s-node-%02d", !strcmp(platform, "forge") ? "forge" : "gen",
                 i);
        snprintf(pid, sizeof(pid), "%s%s", prefix, name);
        snprintf(ngpu, sizeof(ngpu), "%d", gpus);
        json_t *labels = json_pack("{s:s,s:s,s:s}", "kubernetes.io/hostname", name,
                                   GR_NVCRE_WF_LABEL_GPU_PRESENT, "true",
                                   GR_NVCRE_WF_LABEL_GPU_PRODUCT, product);
        if (!strcmp(platform, "togetherai"))
            json_object_set_new(labels, "node-role.together.ai/worker", json_string(""));
        json_t *spec = json_object();
        if (*prefix)
            json_object_set_new(spec, "providerID", json_string(pid));
        json_t *node = json_pack("{s:s,s:s,s:{s:s,s:o},s:o,s:{s:{s:s}}}", "apiVersion", "v1",
                                 "kind", "Node", "metadata", "name", name, "labels", labels, "spec",
                                 spec, "status", "allocatable", GR_NVCRE_WF_RESOURCE_GPU, ngpu);
        if (node && nic && *nic && nics > 0) {
            char nn[16];
            snprintf(nn, sizeof(nn), "%d", nics);
            json_object_set_new(gr_json_ptr_get(node, "/status/allocatable"), nic, json_string(nn));
        }
        json_array_append_new(nodes, node);
    }
    return nodes;
}

static json_t *load_nodes(const char *path, gr_err *err)
{
    json_t *docs = NULL;
    if (gr_yaml_load_file(path, 0, &docs, err) != GR_OK)
        return NULL;
    json_t *nodes = json_array();
    size_t i;
    json_t *d;
    json_array_foreach(docs, i, d)
    {
        const char *kind = json_string_value(json_object_get(d, "kind"));
        if (kind && (!strcmp(kind, "List") || !strcmp(kind, "NodeList"))) {
            json_array_extend(nodes, json_object_get(d, "items"));
        } else if (kind && !strcmp(kind, "Node")) {
            json_array_append(nodes, d);
        }
    }
    json_decref(docs);
    return nodes;
}

/* A copy of v with the keys of every object in byte order (reviewable,
 * stable output). NULL on allocation failure. */
static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static json_t *sorted(const json_t *v)
{
    json_t *m;
    memcpy(&m, &v, sizeof(m)); /* jansson's iterators take non-const */
    if (json_is_object(v)) {
        size_t n = json_object_size(v), i = 0;
        const char **keys = calloc(n ? n : 1, sizeof(*keys));
        json_t *o = json_object();
        const char *k;
        json_t *x;
        if (!keys || !o) {
            free(keys);
            json_decref(o);
            return NULL;
        }
        json_object_foreach(m, k, x) keys[i++] = k;
        qsort(keys, n, sizeof(*keys), cmp_key);
        for (i = 0; i < n; i++) {
            json_t *c = sorted(json_object_get(v, keys[i]));
            if (!c || json_object_set_new(o, keys[i], c)) {
                free(keys);
                json_decref(o);
                return NULL;
            }
        }
        free(keys);
        return o;
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        size_t i;
        json_t *x;
        json_array_foreach(m, i, x)
        {
            json_t *c = sorted(x);
            if (!a || !c || json_array_append_new(a, c)) {
                json_decref(a);
                return NULL;
            }
        }
        return a;
    }
    return json_deep_copy(v);
}

/* Fixed uids for what the API server would assign: 1 Certification, 2
 * Workflow, 3 Job. */
#define RENDER_NOW_NS (1767225600LL * 1000000000LL) /* 2026-01-01T00:00:00Z */

static void fixed_uid(json_t *obj, unsigned kind, unsigned n)
{
    json_t *md = gr_json_object_child(obj, "metadata");
    if (!md || json_string_value(json_object_get(md, "uid")))
        return;
    char uid[40];
    snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%04x%08x", kind & 0xffffu, n);
    json_object_set_new(md, "uid", json_string(uid));
}

/* Append the object `gr_nvcre_wf_dependency_object()` makes of each dep. */
static int add_deps(const json_t *wf, const json_t *deps, json_t *docs, gr_err *err)
{
    size_t i;
    json_t *d;
    json_array_foreach(deps, i, d)
    {
        json_t *obj = NULL;
        int rc = gr_nvcre_wf_dependency_object(wf, d, &obj, err);
        if (rc != GR_OK)
            return rc;
        json_array_append_new(docs, obj);
    }
    return GR_OK;
}

/* The Workflow controller's first pass over `wf` and the Job controller's
 * workload for each Job, appended to docs. `with_wf`: the Workflow itself
 * first (it was rendered, not read). Returns the exit status. */
static int render_workflow(json_t *wf, const json_t *nodes, int with_wf, const char *category,
                           unsigned *job_seq, json_t *docs, FILE *errf)
{
    gr_err err = {0};
    json_t *plan = NULL;
    const char *reason = NULL;
    fixed_uid(wf, 2, 1);
    int rc = gr_nvcre_wf_plan(wf, nodes, &plan, &reason, &err);
    int exit_code = 0;
    size_t i;
    json_t *d;
    json_t *summary = json_object();
    json_object_set_new(summary, "kind", json_string("RenderSummary"));
    const char *wname = json_string_value(gr_json_ptr_get(wf, "/metadata/name"));
    json_object_set_new(summary, "workflow", json_string(wname ? wname : ""));
    if (category)
        json_object_set_new(summary, "category", json_string(category));
    if (plan) {
        const char *keys[] = {"platform",      "gpuArchitecture", "totalNodes",       "nodesPerJob",
                              "excludedNodes", "exclusionReason", "appliedOverrides", "events"};
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
            json_t *v = json_object_get(plan, keys[k]);
            if (v)
                json_object_set(summary, keys[k], v);
        }
        json_t *groups = json_array();
        json_array_foreach(json_object_get(plan, "groups"), i, d) json_array_append(groups, d);
        if (json_array_size(groups))
            json_object_set(summary, "groups", groups);
        json_decref(groups);
    }
    int gang_configured = gr_json_ptr_get(wf, "/spec/gangScheduler") != NULL;
    if (rc == GR_OK) {
        json_object_set_new(summary, "result",
                            json_pack("{s:s,s:s,s:s}", "condition", GR_NVCRE_COND_IN_PROGRESS,
                                      "reason", GR_NVCRE_REASON_GROUPS_PARTITIONED, "message",
                                      json_string_value(json_object_get(plan, "message"))));
        json_object_set_new(summary, "gangScheduling",
                            json_string(gang_configured ? "consistent" : "not configured"));
    } else if (rc == GR_ESTATE) {
        exit_code = 1;
        json_object_set_new(summary, "result",
                            json_pack("{s:s,s:s,s:s}", "condition", GR_NVCRE_COND_FAILED, "reason",
                                      reason ? reason : "", "message", err.msg));
        int gang_conflict = reason && !strcmp(reason, GR_NVCRE_REASON_GANG_SCHEDULING_CONFLICT);
        json_object_set_new(
            summary, "gangScheduling",
            json_string(gang_conflict ? "conflict"
                                      : (gang_configured ? "not checked" : "not configured")));
    } else {
        fprintf(errf, "gpuready render: %s\n", err.msg);
        json_decref(summary);
        json_decref(plan);
        return 2;
    }
    json_array_append_new(docs, summary);
    if (with_wf)
        json_array_append(docs, wf);
    if (rc == GR_OK) {
        rc = add_deps(wf, json_object_get(plan, "dependencies"), docs, &err);
        json_array_foreach(json_object_get(plan, "jobs"), i, d)
        {
            /* Each Job's job-scoped dependencies (renamed) before it. */
            if (rc == GR_OK)
                rc = add_deps(wf, json_array_get(json_object_get(plan, "jobDependencies"), i), docs,
                              &err);
            json_t *job = json_deep_copy(d);
            fixed_uid(job, 3, ++*job_seq);
            json_t *tj = NULL;
            if (rc == GR_OK)
                rc = gr_nvcre_job_build_workload(job, NULL, &tj, &err);
            json_array_append_new(docs, job);
            if (rc != GR_OK)
                break;
            json_array_append_new(docs, tj);
        }
        if (rc != GR_OK) {
            fprintf(errf, "gpuready render: %s\n", err.msg);
            exit_code = 2;
        }
    }
    json_decref(plan);
    return exit_code;
}

/* A summary of what the Certification controller reported in one step
 * when it did not create a Workflow, or warned (BuildFailed, …). */
static json_t *cert_summary(const char *cert_name, const gr_nvcre_cert_plan *plan)
{
    json_t *summary = json_pack("{s:s,s:s}", "kind", "RenderSummary", "certification",
                                cert_name ? cert_name : "");
    const json_t *conds = json_object_get(plan->status, "conditions");
    size_t k;
    json_t *cd;
    json_array_foreach(conds, k, cd)
    {
        const char *st = json_string_value(json_object_get(cd, "status"));
        if (st && !strcmp(st, "True"))
            json_object_set_new(summary, "result",
                                json_pack("{s:O,s:O,s:O}", "condition", json_object_get(cd, "type"),
                                          "reason", json_object_get(cd, "reason"), "message",
                                          json_object_get(cd, "message")));
    }
    if (json_array_size(plan->events))
        json_object_set(summary, "events", plan->events);
    return summary;
}

/* The Certification controller's steps, as it runs them: each step creates
 * the next category's Workflow (rendered with render_workflow()), which is
 * then taken as Succeeded so that the next step starts the next category. */
static int render_certification(json_t *cert, const json_t *nodes, json_t *docs, FILE *errf)
{
    gr_nvcre_catalog *cat = NULL;
    gr_err err = {0};
    if (gr_nvcre_catalog_load(&cat, &err) != GR_OK) {
        fprintf(errf, "gpuready render: %s\n", err.msg);
        return 2;
    }
    json_t *md = gr_json_object_child(cert, "metadata");
    if (!json_string_value(json_object_get(md, "name")))
        json_object_set_new(md, "name", json_string("cert"));
    if (!json_string_value(json_object_get(md, "namespace")))
        json_object_set_new(md, "namespace", json_string("default"));
    fixed_uid(cert, 1, 1);
    const char *cname = json_string_value(json_object_get(md, "name"));
    size_t ncats = json_array_size(gr_json_ptr_get(cert, "/spec/categories"));
    if (ncats == 0) {
        fprintf(errf, "gpuready render: Certification spec.categories: required; give at least "
                      "one {domain, variant} (`gpuready catalog list` shows them)\n");
        gr_nvcre_catalog_free(cat);
        return 2;
    }
    int exit_code = 0;
    unsigned job_seq = 0;
    json_t *wfs = json_array();
    char ts[GR_TIME_STR_MAX];
    gr_time_format_ns(RENDER_NOW_NS, ts);
    for (size_t step = 0; step < ncats + 2; step++) {
        gr_nvcre_cert_input in = {cert, nodes, wfs, cat, RENDER_NOW_NS};
        gr_nvcre_cert_plan plan = {0};
        if (gr_nvcre_cert_step(&in, &plan, &err) != GR_OK) {
            fprintf(errf, "gpuready render: %s\n", err.msg);
            gr_nvcre_cert_plan_free(&plan);
            exit_code = 2;
            break;
        }
        int warned = 0;
        size_t k;
        json_t *ev;
        json_array_foreach(plan.events, k, ev)
        {
            const char *t = json_string_value(json_object_get(ev, "type"));
            warned |= t && !strcmp(t, "Warning");
        }
        if (warned || !plan.create) {
            const json_t *conds = json_object_get(plan.status, "conditions");
            int done_ok = 0;
            json_t *cd;
            json_array_foreach(conds, k, cd)
            {
                const char *ty = json_string_value(json_object_get(cd, "type"));
                const char *st = json_string_value(json_object_get(cd, "status"));
                done_ok |= ty && st && !strcmp(ty, GR_NVCRE_COND_SUCCEEDED) && !strcmp(st, "True");
            }
            if (warned || !done_ok) {
                json_array_append_new(docs, cert_summary(cname, &plan));
                if (exit_code < 1)
                    exit_code = 1;
            }
        }
        json_object_set(cert, "status", plan.status);
        if (!plan.create) {
            gr_nvcre_cert_plan_free(&plan);
            break;
        }
        json_t *wf = plan.create;
        plan.create = NULL;
        gr_nvcre_cert_plan_free(&plan);
        const char *d = json_string_value(gr_json_ptr_get(wf, "/metadata/labels/"
                                                              "nvcre.nvidia.com~1category-domain"));
        const char *v =
            json_string_value(gr_json_ptr_get(wf, "/metadata/labels/"
                                                  "nvcre.nvidia.com~1category-variant"));
        char dv[256];
        snprintf(dv, sizeof(dv), "%s/%s", d ? d : "", v ? v : "");
        json_t *wfcopy = json_deep_copy(wf);
        int r = render_workflow(wfcopy, nodes, 1, dv, &job_seq, docs, errf);
        json_decref(wfcopy);
        if (r > exit_code)
            exit_code = r;
        if (r == 2) {
            json_decref(wf);
            break;
        }
        /* taken as done, so that the next step starts the next category */
        json_object_set_new(wf, "status",
                            json_pack("{s:[{s:s,s:s,s:s,s:s,s:s}]}", "conditions", "type",
                                      GR_NVCRE_COND_SUCCEEDED, "status", "True", "reason",
                                      "JobCompleted", "message", "rendered", "lastTransitionTime",
                                      ts));
        json_array_append_new(wfs, wf);
    }
    json_decref(wfs);
    gr_nvcre_catalog_free(cat);
    return exit_code;
}

#define RENDER_MAX_ARGS 64

int gr_cli_render(int argc, char **argv, FILE *out, FILE *errf)
{
    const char *file = NULL, *nodes_file = NULL, *platform = NULL, *gpu = NULL, *fmt = "yaml";
    const char *cats[RENDER_MAX_ARGS], *sets[RENDER_MAX_ARGS];
    size_t ncats = 0, nsets = 0;
    int count = 0, gpus = -1;
    for (int i = 1; i < argc; i += 2) { /* options come as "name value" pairs */
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage_render(out);
            return 0;
        }
        if (!v) {
            fprintf(errf, "gpuready render: %s needs a value\n", a);
            usage_render(errf);
            return 2;
        }
        if (!strcmp(a, "-f") || !strcmp(a, "--file"))
            file = v;
        else if (!strcmp(a, "--nodes"))
            nodes_file = v;
        else if (!strcmp(a, "--platform"))
            platform = v;
        else if (!strcmp(a, "--gpu"))
            gpu = v;
        else if (!strcmp(a, "--count"))
            count = atoi(v);
        else if (!strcmp(a, "--gpus-per-node"))
            gpus = atoi(v);
        else if (!strcmp(a, "-o") || !strcmp(a, "--output"))
            fmt = v;
        else if ((!strcmp(a, "--category") || !strcmp(a, "--set")) &&
                 (a[2] == 'c' ? ncats : nsets) >= RENDER_MAX_ARGS) {
            fprintf(errf, "gpuready render: at most %d %s\n", RENDER_MAX_ARGS, a);
            return 2;
        } else if (!strcmp(a, "--category"))
            cats[ncats++] = v;
        else if (!strcmp(a, "--set"))
            sets[nsets++] = v;
        else {
            fprintf(errf, "gpuready render: unknown option %s\n", a);
            usage_render(errf);
            return 2;
        }
    }
    if ((!file == !ncats) || (!nodes_file && (!platform || !gpu)) ||
        (strcmp(fmt, "yaml") && strcmp(fmt, "json"))) {
        usage_render(errf);
        return 2;
    }
    if (platform && !provider_prefix(platform)) {
        fprintf(errf,
                "gpuready render: --platform %s: unknown; use one of aws, gcp, azure, "
                "oci, onprem, nscale, togetherai, mistral, forge\n",
                platform);
        return 2;
    }
    if (count < 0 || count > GR_NVCRE_WF_MAX_NODES || gpus < -1 || gpus > 1024) {
        fprintf(errf, "gpuready render: --count must be 0..%d and --gpus-per-node 0..1024\n",
                GR_NVCRE_WF_MAX_NODES);
        return 2;
    }
    gr_err err = {0};
    json_t *docs = NULL, *obj = NULL;
    if (file) {
        if (gr_yaml_load_file(file, 0, &docs, &err) != GR_OK) {
            fprintf(errf, "gpuready render: %s\n", err.msg);
            return 2;
        }
        size_t i;
        json_t *d;
        json_array_foreach(docs, i, d)
        {
            const char *kind = json_string_value(json_object_get(d, "kind"));
            if (kind && (!strcmp(kind, GR_NVCRE_KIND_WORKFLOW) ||
                         !strcmp(kind, GR_NVCRE_KIND_CERTIFICATION))) {
                obj = json_deep_copy(d);
                break;
            }
        }
        json_decref(docs);
        if (!obj) {
            fprintf(errf, "gpuready render: %s: no document of kind Workflow or Certification\n",
                    file);
            return 2;
        }
    } else {
        json_t *cl = json_array();
        for (size_t i = 0; i < ncats; i++) {
            char dv[256];
            snprintf(dv, sizeof(dv), "%s", cats[i]);
            char *slash = strchr(dv, '/');
            if (!slash) {
                fprintf(errf, "gpuready render: --category %s: want DOMAIN/VARIANT\n", cats[i]);
                json_decref(cl);
                return 2;
            }
            *slash = '\0';
            json_array_append_new(cl, json_pack("{s:s,s:s}", "domain", dv, "variant", slash + 1));
        }
        obj = json_pack("{s:s,s:s,s:{},s:{s:{s:{s:s}},s:o}}", "apiVersion", GR_NVCRE_API_VERSION,
                        "kind", GR_NVCRE_KIND_CERTIFICATION, "metadata", "spec", "target",
                        "nodeSelector", GR_NVCRE_WF_LABEL_GPU_PRESENT, "true", "categories", cl);
    }
    int is_cert =
        !strcmp(json_string_value(json_object_get(obj, "kind")), GR_NVCRE_KIND_CERTIFICATION);
    if (nsets && !is_cert) {
        fprintf(errf, "gpuready render: --set applies to a Certification, not a Workflow\n");
        json_decref(obj);
        return 2;
    }
    for (size_t i = 0; i < nsets; i++) {
        /* as `certify --set`: the value as JSON when it parses, else a string */
        const char *eq = strchr(sets[i], '=');
        char k[128];
        if (!eq || eq == sets[i] || (size_t)(eq - sets[i]) >= sizeof(k)) {
            fprintf(errf, "gpuready render: --set %s: want OPTION=VALUE\n", sets[i]);
            json_decref(obj);
            return 2;
        }
        snprintf(k, sizeof(k), "%.*s", (int)(eq - sets[i]), sets[i]);
        if (!strcmp(k, "target") || !strcmp(k, "categories")) {
            fprintf(errf,
                    "gpuready render: --set %s: use --category (the target is every GPU "
                    "node given)\n",
                    k);
            json_decref(obj);
            return 2;
        }
        json_t *val = json_loads(eq + 1, JSON_DECODE_ANY, NULL);
        if (!val)
            val = json_string(eq + 1);
        json_object_set_new(gr_json_object_child(obj, "spec"), k, val);
    }
    json_t *nodes;
    if (nodes_file) {
        nodes = load_nodes(nodes_file, &err);
        if (!nodes) {
            fprintf(errf, "gpuready render: %s\n", err.msg);
            json_decref(obj);
            return 2;
        }
    } else {
        if (count == 0) {
            json_int_t nn = json_integer_value(
                gr_json_ptr_get(obj, "/spec/jobTemplate/spec/workload/trainJob/trainer/numNodes"));
            count = is_cert ? 2 : (nn > 0 ? (int)nn : 1);
        }
        char nic[128] = "";
        int nics = 0;
        if (is_cert) {
            /* what the catalog expects of this GPU on this platform: GPUs
             * and the NIC resource the Certification would request (the
             * --set nicResourceName/mlnxPerNode, else the platform's), so
             * that auto-detection (docs/certification.md) finds it */
            gr_nvcre_catalog *cat = NULL;
            char arch[64], product[160];
            snprintf(product, sizeof(product), "%s%s", strchr(gpu, '-') ? "" : "NVIDIA-", gpu);
            int g = 8, m = 0;
            if (gr_nvcre_catalog_load(&cat, &err) == GR_OK) {
                gr_nvcre_catalog_arch_of_product(product, arch, sizeof(arch));
                gr_nvcre_catalog_gpu_defaults(cat, arch, platform, &g, &m);
                json_t *po = NULL;
                if (gr_nvcre_catalog_platform_options(cat, platform, arch, &po, &err) == GR_OK) {
                    const char *n = json_string_value(json_object_get(po, "nicResourceName"));
                    snprintf(nic, sizeof(nic), "%s", n ? n : "");
                    json_decref(po);
                }
                gr_nvcre_catalog_free(cat);
            }
            const char *un = json_string_value(gr_json_ptr_get(obj, "/spec/nicResourceName"));
            const json_t *um = gr_json_ptr_get(obj, "/spec/mlnxPerNode");
            if (un)
                snprintf(nic, sizeof(nic), "%s", un);
            nics = json_is_integer(um) ? (int)json_integer_value(um) : m;
            if (gpus < 0)
                gpus = g;
        }
        nodes = gen_nodes(platform, gpu, count, gpus < 0 ? 8 : gpus, nic, nics);
    }
    json_t *docs_out = json_array();
    unsigned job_seq = 0;
    int exit_code = is_cert ? render_certification(obj, nodes, docs_out, errf)
                            : render_workflow(obj, nodes, 0, NULL, &job_seq, docs_out, errf);
    if (exit_code < 2) {
        json_t *s = sorted(docs_out);
        if (!s) {
            fprintf(errf, "gpuready render: out of memory\n");
            exit_code = 2;
        } else if (!strcmp(fmt, "json")) {
            char *j = json_dumps(s, JSON_INDENT(2));
            if (j)
                fprintf(out, "%s\n", j);
            free(j);
        } else {
            size_t i;
            json_t *d;
            json_array_foreach(s, i, d)
            {
                fputs("---\n", out);
                put_yaml(out, d, 0);
            }
        }
        json_decref(s);
    }
    json_decref(docs_out);
    json_decref(nodes);
    json_decref(obj);
    return exit_code;
}
