/* The WorkloadRun controller's I/O side (gr_nvcre_wlrun_ctl.h). */
#include "gr_nvcre_wlrun_ctl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gr_json.h"
#include "gr_kube_object.h"
#include "gr_kube_rest.h"
#include "gr_kube_rt.h"
#include "gr_nvcre_catalog.h"
#include "gr_nvcre_cert.h"
#include "gr_nvcre_types.h"
#include "gr_nvcre_wlrun.h"

#define REQUEUE_NS (15LL * 1000000000LL)

static const gr_kube_gvr GVR_RUNS = {GR_NVCRE_GROUP, GR_NVCRE_VERSION,
                                     GR_NVCRE_PLURAL_WORKLOAD_RUNS};
static const gr_kube_gvr GVR_WORKFLOWS = {GR_NVCRE_GROUP, GR_NVCRE_VERSION,
                                          GR_NVCRE_PLURAL_WORKFLOWS};

struct gr_nvcre_wlrun_ctl {
    gr_kube_client *c;
    gr_kube_cache *runs, *workflows, *nodes;
    gr_kube_ctl *ctl;
    gr_nvcre_catalog *catalog;
};

static const char *meta(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), k));
}

/* Fields set once, when the Workflow is created; a status computed from a
 * cached copy of the run that predates that write must not drop them. */
static const char *const CREATE_ONCE[] = {"workflowRef", "detectedPlatform",
                                          "detectedGPUArchitecture", "resolvedGpusPerNode"};

static int put_status(json_t *obj, void *ctx, gr_err *err)
{
    const json_t *status = ctx;
    json_t *want = json_deep_copy(status);
    if (!want)
        return gr_err_set(err, GR_ENOMEM, "workloadrun controller: out of memory");
    const json_t *live = json_object_get(obj, "status");
    for (size_t i = 0; i < sizeof CREATE_ONCE / sizeof CREATE_ONCE[0]; i++) {
        json_t *v = json_object_get(live, CREATE_ONCE[i]);
        if (v && !json_object_get(want, CREATE_ONCE[i]))
            json_object_set(want, CREATE_ONCE[i], v);
    }
    if (gr_json_equal(live, want)) {
        json_decref(want);
        return GR_ECANCELED;
    }
    json_object_set_new(obj, "status", want);
    return GR_OK;
}

static int write_status(gr_nvcre_wlrun_ctl *c, const json_t *run, json_t *status, gr_err *err)
{
    if (gr_json_equal(json_object_get(run, "status"), status))
        return GR_OK;
    gr_kube_status st;
    int rc = gr_kube_status_update_retry(c->c, &GVR_RUNS, meta(run, "namespace"), meta(run, "name"),
                                         put_status, status, NULL, &st, err);
    return rc == GR_ENOTFOUND ? GR_OK : rc;
}

/* Set one exclusive condition on a copy of the run; returns its status. */
static json_t *condition(const json_t *run, const char *type, const char *reason, const char *msg)
{
    static const char *types[] = {GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_COND_SUCCEEDED,
                                  GR_NVCRE_COND_FAILED};
    json_t *obj = json_deep_copy(run);
    if (!obj)
        return NULL;
    int64_t gen = json_integer_value(gr_json_ptr_get(run, "/metadata/generation"));
    for (size_t i = 0; i < 3; i++) {
        bool on = !strcmp(types[i], type);
        gr_kube_condition_set(obj, types[i], on ? "True" : "False",
                              on ? reason : GR_NVCRE_REASON_SUPERSEDED, on ? msg : "", gen,
                              gr_kube_now_ns(), NULL, NULL);
    }
    json_t *st = json_incref(json_object_get(obj, "status"));
    json_decref(obj);
    return st;
}

static int reconcile(void *ctx, const char *key, int64_t *requeue_after_ns, gr_err *err)
{
    gr_nvcre_wlrun_ctl *c = ctx;
    json_t *run = NULL;
    int rc = gr_kube_cache_get(c->runs, key, &run, err);
    if (rc == GR_ENOTFOUND)
        return GR_OK;
    if (rc != GR_OK)
        return rc;
    if (gr_kube_is_deleting(run)) {
        json_decref(run);
        return GR_OK;
    }
    const char *ns = meta(run, "namespace"), *name = meta(run, "name"), *uid = meta(run, "uid");
    char wkey[600];
    snprintf(wkey, sizeof wkey, "%s/%s", ns, name);
    json_t *wf = NULL, *status = NULL;
    rc = gr_kube_cache_get(c->workflows, wkey, &wf, err);
    if (rc != GR_OK && rc != GR_ENOTFOUND) {
        json_decref(run);
        return rc;
    }
    bool created_before = gr_json_ptr_get(run, "/status/workflowRef") != NULL;
    if (!wf && created_before) {
        /* A cache miss is not proof of deletion: the Workflow informer may
         * not have seen the Workflow this controller just created. */
        gr_kube_status st;
        rc = gr_kube_get(c->c, &GVR_WORKFLOWS, ns, name, NULL, &wf, &st, err);
        if (rc != GR_OK && rc != GR_ENOTFOUND) {
            json_decref(run);
            return rc;
        }
    }
    if (wf && !gr_kube_is_owned_by(wf, uid)) {
        char msg[700];
        snprintf(msg, sizeof msg, "Workflow %s exists and is not controlled by WorkloadRun %s",
                 name, name);
        status = condition(run, GR_NVCRE_COND_FAILED, GR_NVCRE_REASON_WORKFLOW_NAME_COLLISION, msg);
    } else if (wf || created_before) {
        rc = gr_nvcre_wlrun_mirror(run, wf, gr_kube_now_ns(), &status, err);
        if (!wf ||
            (!gr_kube_condition_is_true(json_object_get(status, "conditions"), "Succeeded") &&
             !gr_kube_condition_is_true(json_object_get(status, "conditions"), "Failed")))
            *requeue_after_ns = REQUEUE_NS;
    } else {
        json_t *nodes = NULL;
        if ((rc = gr_kube_cache_list(c->nodes, NULL, NULL, &nodes, err)) == GR_OK) {
            const char *platform;
            char arch[32];
            size_t count;
            bool het;
            gr_nvcre_cert_detect(nodes, gr_json_ptr_get(run, "/spec/target"), &platform, arch,
                                 sizeof arch, &count, &het);
            json_decref(nodes);
            if (!count) {
                status =
                    condition(run, GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_REASON_WAITING_FOR_NODES,
                              "No schedulable nodes match the target; retrying. Nodes that "
                              "are cordoned or unschedulable do not count.");
                *requeue_after_ns = REQUEUE_NS;
            } else {
                gr_err berr;
                json_t *nwf = NULL;
                int brc = gr_nvcre_wlrun_build(run, c->catalog, platform ? platform : "onprem",
                                               arch[0] ? arch : "unknown", &nwf, &berr);
                if (brc == GR_EINVAL) {
                    status = condition(run, GR_NVCRE_COND_FAILED,
                                       GR_NVCRE_REASON_WORKFLOW_VALIDATION_FAILED, berr.msg);
                } else if (brc != GR_OK) {
                    rc = brc;
                    if (err)
                        *err = berr;
                } else {
                    gr_kube_status st;
                    gr_kube_opts o = {.field_manager = "workloadrun-controller"};
                    rc = gr_kube_create(c->c, &GVR_WORKFLOWS, ns, nwf, &o, NULL, &st, err);
                    if (rc == GR_ECONFLICT) {
                        rc = GR_OK;
                        *requeue_after_ns = 50LL * 1000000LL;
                    } else if (rc == GR_OK) {
                        char msg[700];
                        snprintf(msg, sizeof msg, "Created Workflow %s", name);
                        status = condition(run, GR_NVCRE_COND_IN_PROGRESS,
                                           GR_NVCRE_REASON_WORKFLOW_CREATED, msg);
                        if (status) {
                            json_object_set_new(
                                status, "workflowRef",
                                json_pack("{s:s,s:s}", "name", name, "namespace", ns));
                            json_object_set_new(status, "detectedPlatform",
                                                json_string(platform ? platform : "onprem"));
                            json_object_set_new(status, "detectedGPUArchitecture",
                                                json_string(arch[0] ? arch : "unknown"));
                            json_t *g = gr_json_ptr_get(
                                nwf, "/spec/dependencies/0/spec/template/spec/replicatedJobs/0/"
                                     "template/spec/template/spec/containers/0/resources/limits/"
                                     "nvidia.com~1gpu");
                            if (!g) /* mpi: the workers are the second replicatedJob */
                                g = gr_json_ptr_get(nwf, "/spec/dependencies/0/spec/template/spec/"
                                                         "replicatedJobs/1/template/spec/template/"
                                                         "spec/containers/0/resources/limits/"
                                                         "nvidia.com~1gpu");
                            if (g)
                                json_object_set(status, "resolvedGpusPerNode", g);
                        }
                        *requeue_after_ns = REQUEUE_NS;
                    }
                    json_decref(nwf);
                }
            }
        }
    }
    if (rc == GR_OK && status)
        rc = write_status(c, run, status, err);
    json_decref(status);
    json_decref(wf);
    json_decref(run);
    return rc;
}

int gr_nvcre_wlrun_ctl_register(gr_kube_mgr *m, const gr_nvcre_wlrun_ctl_opts *o,
                                gr_nvcre_wlrun_ctl **out, gr_err *err)
{
    *out = NULL;
    gr_nvcre_wlrun_ctl *c = calloc(1, sizeof *c);
    if (!c)
        return gr_err_set(err, GR_ENOMEM, "workloadrun controller: out of memory");
    c->c = gr_kube_mgr_client(m);
    const char *ns = o ? o->ns : NULL;
    int rc;
    if ((rc = gr_nvcre_catalog_load(&c->catalog, err)) != GR_OK)
        goto fail;
    if ((rc = gr_kube_mgr_cache(m,
                                &(gr_kube_cache_opts){.gvr = GVR_RUNS, .ns = ns, .optional = true},
                                &c->runs, err)) != GR_OK ||
        (rc = gr_kube_mgr_cache(
             m, &(gr_kube_cache_opts){.gvr = GVR_WORKFLOWS, .ns = ns, .optional = true},
             &c->workflows, err)) != GR_OK ||
        (rc = gr_kube_mgr_cache(m, &(gr_kube_cache_opts){.gvr = GR_KUBE_NODES}, &c->nodes, err)) !=
            GR_OK)
        goto fail;
    if ((rc = gr_kube_mgr_add_controller(
             m,
             &(gr_kube_ctl_opts){.name = "workloadrun",
                                 .workers = o && o->workers > 0 ? o->workers : 1,
                                 .reconcile = reconcile,
                                 .ctx = c},
             &c->ctl, err)) != GR_OK)
        goto fail;
    static const char kind[] = GR_NVCRE_KIND_WORKLOAD_RUN;
    if ((rc = gr_kube_ctl_watch(c->ctl, c->runs, NULL, NULL, err)) != GR_OK ||
        (rc = gr_kube_ctl_watch(c->ctl, c->workflows, gr_kube_map_owner, (void *)(uintptr_t)kind,
                                err)) != GR_OK ||
        (rc = gr_kube_ctl_need(c->ctl, c->nodes, err)) != GR_OK)
        goto fail;
    *out = c;
    return GR_OK;
fail:
    gr_nvcre_wlrun_ctl_free(c);
    return rc;
}

void gr_nvcre_wlrun_ctl_free(gr_nvcre_wlrun_ctl *c)
{
    if (!c)
        return;
    gr_nvcre_catalog_free(c->catalog);
    free(c);
}
