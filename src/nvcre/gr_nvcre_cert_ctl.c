/* The Certification controller's I/O side (gr_nvcre_cert_ctl.h). */
#include "gr_nvcre_cert_ctl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gr_json.h"
#include "gr_kube_object.h"
#include "gr_kube_rest.h"
#include "gr_kube_rt.h"
#include "gr_log.h"
#include "gr_nvcre_catalog.h"
#include "gr_nvcre_cert.h"
#include "gr_nvcre_types.h"

#define MOD "certification-controller"

static const gr_kube_gvr GVR_CERTS = {GR_NVCRE_GROUP, GR_NVCRE_VERSION,
                                      GR_NVCRE_PLURAL_CERTIFICATIONS};
static const gr_kube_gvr GVR_WORKFLOWS = {GR_NVCRE_GROUP, GR_NVCRE_VERSION,
                                          GR_NVCRE_PLURAL_WORKFLOWS};

struct gr_nvcre_cert_ctl {
    gr_kube_client *c;
    gr_kube_cache *certs, *workflows, *nodes;
    gr_kube_ctl *ctl;
    gr_kube_events *ev;
    gr_nvcre_catalog *catalog;
};

static const char *meta(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), k));
}

static int put_status(json_t *obj, void *ctx, gr_err *err)
{
    (void)err;
    const json_t *status = ctx;
    if (gr_json_equal(json_object_get(obj, "status"), status))
        return GR_ECANCELED;
    json_object_set(obj, "status", (json_t *)(uintptr_t)status);
    return GR_OK;
}

/* Workflows of the namespace (copies). */
static json_t *workflows_in(gr_nvcre_cert_ctl *c, const char *ns, gr_err *err)
{
    json_t *all = NULL;
    if (gr_kube_cache_list(c->workflows, NULL, NULL, &all, err) != GR_OK)
        return NULL;
    json_t *out = json_array();
    size_t i;
    json_t *w;
    json_array_foreach(all, i, w)
    {
        const char *wns = meta(w, "namespace");
        if (out && wns && ns && !strcmp(wns, ns))
            json_array_append(out, w);
    }
    json_decref(all);
    return out;
}

/* The Workflow informer and the Certification informer are separate watches:
 * right after this controller created a Workflow and recorded its workflowRef,
 * the Certification cache can already hold the ref while the Workflow cache
 * does not yet hold the Workflow. The step would read that as "deleted" and
 * fail the category. So every referenced Workflow missing from the cache is
 * read live once; only a 404 there means it is gone. */
static int add_missing_refs(gr_nvcre_cert_ctl *c, const json_t *cert, json_t *wfs, gr_err *err)
{
    const char *ns = meta(cert, "namespace");
    const json_t *css = json_object_get(json_object_get(cert, "status"), "categoryStatuses");
    size_t i, j;
    json_t *cs, *w;
    json_array_foreach(css, i, cs)
    {
        const char *ref =
            json_string_value(json_object_get(json_object_get(cs, "workflowRef"), "name"));
        if (!ref)
            continue;
        bool seen = false;
        json_array_foreach(wfs, j, w)
        {
            const char *n = meta(w, "name");
            if (n && !strcmp(n, ref)) {
                seen = true;
                break;
            }
        }
        if (seen)
            continue;
        json_t *live = NULL;
        gr_kube_status st;
        int rc = gr_kube_get(c->c, &GVR_WORKFLOWS, ns, ref, NULL, &live, &st, err);
        if (rc == GR_ENOTFOUND)
            continue;
        if (rc != GR_OK)
            return rc;
        json_array_append_new(wfs, live);
    }
    return GR_OK;
}

static int handle_deletion(gr_nvcre_cert_ctl *c, const json_t *cert, int64_t *requeue, gr_err *err)
{
    const char *ns = meta(cert, "namespace"), *name = meta(cert, "name"), *uid = meta(cert, "uid");
    json_t *wfs = workflows_in(c, ns, err);
    if (!wfs)
        return err ? err->code : GR_ENOMEM;
    /* A Workflow created just before the deletion may not be in the cache
     * yet: dropping the finalizer then would orphan it (found by
     * certification-delete-removes-workflows under ASan). */
    int mrc = add_missing_refs(c, cert, wfs, err);
    if (mrc != GR_OK) {
        json_decref(wfs);
        return mrc;
    }
    size_t i, left = 0;
    json_t *w;
    json_array_foreach(wfs, i, w)
    {
        if (!gr_kube_is_owned_by(w, uid))
            continue;
        left++;
        if (json_object_get(json_object_get(w, "metadata"), "deletionTimestamp"))
            continue;
        /* Background, not Foreground: the Workflow's finalizer already holds
         * it until its Jobs are gone, and a foreground cascade would also put
         * foregroundDeletion on each TrainJob while the garbage collector
         * deletes the Job's job-scoped TrainingRuntime beside it; the
         * Trainer's webhook then refuses the TrainJob update that drops that
         * finalizer ("specified trainingRuntime must be created before the
         * TrainJob is created") and the whole chain never goes away. */
        gr_kube_opts o = {.propagation = "Background"};
        gr_kube_status st;
        int rc = gr_kube_delete(c->c, &GVR_WORKFLOWS, ns, meta(w, "name"), &o, NULL, &st, err);
        if (rc != GR_OK && rc != GR_ENOTFOUND) {
            json_decref(wfs);
            return rc;
        }
    }
    json_decref(wfs);
    if (left) { /* wait until the Workflows (and so their Jobs) are gone */
        *requeue = 2LL * 1000000000LL;
        return GR_OK;
    }
    bool changed;
    int rc = gr_kube_finalizer_drop(c->c, &GVR_CERTS, ns, name, GR_NVCRE_FINALIZER_CERTIFICATION,
                                    &changed, err);
    return rc == GR_ENOTFOUND ? GR_OK : rc;
}

static int reconcile(void *ctx, const char *key, int64_t *requeue_after_ns, gr_err *err)
{
    gr_nvcre_cert_ctl *c = ctx;
    json_t *cert = NULL;
    int rc = gr_kube_cache_get(c->certs, key, &cert, err);
    if (rc == GR_ENOTFOUND)
        return GR_OK;
    if (rc != GR_OK)
        return rc;
    const char *ns = meta(cert, "namespace"), *name = meta(cert, "name");
    if (gr_kube_is_deleting(cert)) {
        rc = handle_deletion(c, cert, requeue_after_ns, err);
        json_decref(cert);
        return rc;
    }
    if (!gr_kube_finalizer_has(cert, GR_NVCRE_FINALIZER_CERTIFICATION)) {
        bool changed;
        rc = gr_kube_finalizer_ensure(c->c, &GVR_CERTS, ns, name, GR_NVCRE_FINALIZER_CERTIFICATION,
                                      &changed, err);
        json_decref(cert);
        return rc == GR_ENOTFOUND ? GR_OK : rc; /* the update brings us back */
    }
    json_t *nodes = NULL, *wfs = workflows_in(c, ns, err);
    if (!wfs || (rc = gr_kube_cache_list(c->nodes, NULL, NULL, &nodes, err)) != GR_OK) {
        json_decref(wfs);
        json_decref(cert);
        return wfs ? rc : (err ? err->code : GR_ENOMEM);
    }
    if ((rc = add_missing_refs(c, cert, wfs, err)) != GR_OK) {
        json_decref(nodes);
        json_decref(wfs);
        json_decref(cert);
        return rc;
    }
    gr_nvcre_cert_input in = {cert, nodes, wfs, c->catalog, gr_kube_now_ns()};
    gr_nvcre_cert_plan plan;
    rc = gr_nvcre_cert_step(&in, &plan, err);
    json_decref(nodes);
    json_decref(wfs);
    if (rc != GR_OK) {
        json_decref(cert);
        return rc;
    }
    if (plan.create) {
        gr_kube_status st;
        gr_kube_opts o = {.field_manager = "certification-controller"};
        rc = gr_kube_create(c->c, &GVR_WORKFLOWS, ns, plan.create, &o, NULL, &st, err);
        if (rc == GR_ECONFLICT) { /* AlreadyExists: the next pass adopts or collides */
            gr_nvcre_cert_plan_free(&plan);
            json_decref(cert);
            *requeue_after_ns = 50LL * 1000000LL;
            return GR_OK;
        }
        if (rc != GR_OK) {
            gr_nvcre_cert_plan_free(&plan);
            json_decref(cert);
            return rc;
        }
    }
    if (plan.status_changed) {
        gr_kube_status st;
        rc = gr_kube_status_update_retry(c->c, &GVR_CERTS, ns, name, put_status, plan.status, NULL,
                                         &st, err);
        if (rc != GR_OK && rc != GR_ENOTFOUND) {
            gr_nvcre_cert_plan_free(&plan);
            json_decref(cert);
            return rc;
        }
    }
    size_t i;
    json_t *e;
    json_array_foreach(plan.events, i, e)
    {
        gr_err eerr;
        if (gr_kube_event(c->ev, cert, json_string_value(json_object_get(e, "type")),
                          json_string_value(json_object_get(e, "reason")),
                          json_string_value(json_object_get(e, "message")), &eerr) != GR_OK)
            gr_log(GR_LOG_DEBUG, MOD, "event not recorded", GR_KV_STR("error", eerr.msg),
                   GR_KV_END);
    }
    *requeue_after_ns = plan.requeue_after_ns;
    gr_nvcre_cert_plan_free(&plan);
    json_decref(cert);
    return GR_OK;
}

int gr_nvcre_cert_ctl_register(gr_kube_mgr *m, const gr_nvcre_cert_ctl_opts *o,
                               gr_nvcre_cert_ctl **out, gr_err *err)
{
    *out = NULL;
    gr_nvcre_cert_ctl *c = calloc(1, sizeof *c);
    if (!c)
        return gr_err_set(err, GR_ENOMEM, "certification controller: out of memory");
    c->c = gr_kube_mgr_client(m);
    const char *ns = o ? o->ns : NULL;
    int rc;
    if ((rc = gr_nvcre_catalog_load(&c->catalog, err)) != GR_OK)
        goto fail;
    if ((rc = gr_kube_mgr_cache(m,
                                &(gr_kube_cache_opts){.gvr = GVR_CERTS, .ns = ns, .optional = true},
                                &c->certs, err)) != GR_OK ||
        (rc = gr_kube_mgr_cache(
             m, &(gr_kube_cache_opts){.gvr = GVR_WORKFLOWS, .ns = ns, .optional = true},
             &c->workflows, err)) != GR_OK ||
        (rc = gr_kube_mgr_cache(m, &(gr_kube_cache_opts){.gvr = GR_KUBE_NODES}, &c->nodes, err)) !=
            GR_OK)
        goto fail;
    if ((rc = gr_kube_events_new(c->c, MOD, NULL, &c->ev, err)) != GR_OK)
        goto fail;
    if ((rc = gr_kube_mgr_add_controller(
             m,
             &(gr_kube_ctl_opts){.name = "certification",
                                 .workers = o && o->workers > 0 ? o->workers : 1,
                                 .reconcile = reconcile,
                                 .ctx = c},
             &c->ctl, err)) != GR_OK)
        goto fail;
    static const char kind[] = GR_NVCRE_KIND_CERTIFICATION;
    if ((rc = gr_kube_ctl_watch(c->ctl, c->certs, NULL, NULL, err)) != GR_OK ||
        (rc = gr_kube_ctl_watch(c->ctl, c->workflows, gr_kube_map_owner, (void *)(uintptr_t)kind,
                                err)) != GR_OK ||
        (rc = gr_kube_ctl_need(c->ctl, c->nodes, err)) != GR_OK)
        goto fail;
    *out = c;
    return GR_OK;
fail:
    gr_nvcre_cert_ctl_free(c);
    return rc;
}

void gr_nvcre_cert_ctl_free(gr_nvcre_cert_ctl *c)
{
    if (!c)
        return;
    gr_kube_events_free(c->ev);
    gr_nvcre_catalog_free(c->catalog);
    free(c);
}
