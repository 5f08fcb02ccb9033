/*
 * gr_cli_render.c — `gpuready render` (issue 16), offline:
 *
 *   gpuready render -f WORKFLOW.yaml (--nodes NODES.yaml | --platform P --gpu G
 *                   [--count N] [--gpus-per-node N]) [-o yaml|json]
 *
 * `render` (issue 16) runs the Workflow controller's planning path
 * (gr_nvcre_wf_plan(): discovery, detection, overrides, capacity filter,
 * gang-scheduling contract, partitioning, Job rendering) offline and prints
 * what the controller would create: a summary document (detection, applied
 * overrides, events, groups, gang verdict), the dependencies, the NVCRE
 * Jobs of iteration 1 and the TrainJob each Job creates. Exit 0 when the
 * Workflow would run, 1 when the controller would mark it Failed (the
 * summary names the reason and message), 2 on bad usage or input.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gr_cli.h"
#include "gr_err.h"
#include "gr_json.h"
#include "gr_nvcre_types.h"
#include "gr_nvcre_wf.h"
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
    fprintf(f, "usage: gpuready render -f WORKFLOW.yaml (--nodes NODES.yaml | --platform P "
               "--gpu G [--count N] [--gpus-per-node N]) [-o yaml|json]\n"
               "  WORKFLOW.yaml  a Workflow (nvcre.nvidia.com/v1alpha1)\n"
               "  NODES.yaml     Node objects (a List, or one per document), e.g. from\n"
               "                 kubectl get nodes -o yaml\n"
               "  --platform     aws|gcp|azure|oci|onprem|nscale|togetherai|mistral|forge\n"
               "  --gpu          GPU product, e.g. NVIDIA-H100-80GB-HBM3 or h100\n"
               "  --count        generated nodes (default: trainer.numNodes, at least 1)\n");
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

static json_t *gen_nodes(const char *platform, const char *gpu, int count, int gpus)
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
        json_array_append_new(
            nodes, json_pack("{s:s,s:s,s:{s:s,s:o},s:o,s:{s:{s:s}}}", "apiVersion", "v1", "kind",
                             "Node", "metadata", "name", name, "labels", labels, "spec", spec,
                             "status", "allocatable", GR_NVCRE_WF_RESOURCE_GPU, ngpu));
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

static json_t *render_trainjob(const json_t *job)
{
    const json_t *md = json_object_get(job, "metadata");
    const char *jn = json_string_value(json_object_get(md, "name"));
    char full[256], name[64];
    snprintf(full, sizeof(full), "%s-workload", jn ? jn : "");
    gr_nvcre_wf_truncate(full, GR_NVCRE_MAX_WORKLOAD_NAME_LEN, name, sizeof(name));
    json_t *labels = json_deep_copy(gr_json_ptr_get(job, "/spec/workloadMetadata/labels"));
    if (!json_is_object(labels)) {
        json_decref(labels);
        labels = json_object();
    }
    json_object_set_new(labels, GR_NVCRE_LABEL_MANAGED_BY, json_string(GR_NVCRE_MANAGED_BY_VALUE));
    json_object_set_new(labels, GR_NVCRE_LABEL_JOB, json_string(jn ? jn : ""));
    json_t *meta = json_pack("{s:s,s:o}", "name", name, "labels", labels);
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    if (ns)
        json_object_set_new(meta, "namespace", json_string(ns));
    return json_pack("{s:s,s:s,s:o,s:O}", "apiVersion", GR_NVCRE_TRAINER_API_VERSION, "kind",
                     GR_NVCRE_KIND_TRAIN_JOB, "metadata", meta, "spec",
                     gr_json_ptr_get(job, "/spec/workload/trainJob"));
}

int gr_cli_render(int argc, char **argv, FILE *out, FILE *errf)
{
    const char *file = NULL, *nodes_file = NULL, *platform = NULL, *gpu = NULL, *fmt = "yaml";
    int count = 0, gpus = 8;
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
        else {
            fprintf(errf, "gpuready render: unknown option %s\n", a);
            usage_render(errf);
            return 2;
        }
    }
    if (!file || (!nodes_file && (!platform || !gpu)) ||
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
    if (count < 0 || count > GR_NVCRE_WF_MAX_NODES || gpus < 0 || gpus > 1024) {
        fprintf(errf, "gpuready render: --count must be 0..%d and --gpus-per-node 0..1024\n",
                GR_NVCRE_WF_MAX_NODES);
        return 2;
    }
    gr_err err = {0};
    json_t *docs = NULL;
    if (gr_yaml_load_file(file, 0, &docs, &err) != GR_OK) {
        fprintf(errf, "gpuready render: %s\n", err.msg);
        return 2;
    }
    json_t *wf = NULL;
    size_t i;
    json_t *d;
    json_array_foreach(docs, i, d)
    {
        const char *kind = json_string_value(json_object_get(d, "kind"));
        if (kind && !strcmp(kind, GR_NVCRE_KIND_WORKFLOW)) {
            wf = d;
            break;
        }
    }
    if (!wf) {
        fprintf(errf, "gpuready render: %s: no document of kind Workflow\n", file);
        json_decref(docs);
        return 2;
    }
    json_t *nodes;
    if (nodes_file) {
        nodes = load_nodes(nodes_file, &err);
        if (!nodes) {
            fprintf(errf, "gpuready render: %s\n", err.msg);
            json_decref(docs);
            return 2;
        }
    } else {
        if (count == 0) {
            json_int_t nn = json_integer_value(
                gr_json_ptr_get(wf, "/spec/jobTemplate/spec/workload/trainJob/trainer/numNodes"));
            count = nn > 0 ? (int)nn : 1;
        }
        nodes = gen_nodes(platform, gpu, count, gpus);
    }
    json_t *plan = NULL;
    const char *reason = NULL;
    int rc = gr_nvcre_wf_plan(wf, nodes, &plan, &reason, &err);
    int exit_code = 0;
    json_t *summary = json_object();
    json_object_set_new(summary, "kind", json_string("RenderSummary"));
    json_object_set_new(summary, "workflow",
                        json_string(json_string_value(gr_json_ptr_get(wf, "/metadata/name"))
                                        ? json_string_value(gr_json_ptr_get(wf, "/metadata/name"))
                                        : ""));
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
        json_decref(nodes);
        json_decref(docs);
        return 2;
    }
    json_t *docs_out = json_array();
    json_array_append_new(docs_out, summary);
    if (rc == GR_OK) {
        json_array_foreach(json_object_get(plan, "dependencies"), i, d)
            json_array_append(docs_out, d);
        json_array_foreach(json_object_get(plan, "jobs"), i, d)
        {
            /* Each Job's job-scoped dependencies (renamed) before it. */
            size_t k;
            json_t *jd;
            json_array_foreach(json_array_get(json_object_get(plan, "jobDependencies"), i), k, jd)
                json_array_append(docs_out, jd);
            json_array_append(docs_out, d);
            json_array_append_new(docs_out, render_trainjob(d));
        }
    }
    if (!strcmp(fmt, "json")) {
        char *s = json_dumps(docs_out, JSON_INDENT(2));
        if (s)
            fprintf(out, "%s\n", s);
        free(s);
    } else {
        json_array_foreach(docs_out, i, d)
        {
            fputs("---\n", out);
            put_yaml(out, d, 0);
        }
    }
    json_decref(docs_out);
    json_decref(plan);
    json_decref(nodes);
    json_decref(docs);
    return exit_code;
}
