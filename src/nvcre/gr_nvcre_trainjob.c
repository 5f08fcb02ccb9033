/*
 * gr_nvcre_trainjob.c — naming, the workload adapter table, the Kubeflow
 * TrainJob adapter (Trainer v2.2.1) and the workload object builder.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gr_hash.h"
#include "gr_nvcre_job.h"
#include "gr_nvcre_types.h"

int gr_nvcre_job_truncate_name(const char *name, size_t max, char *out, size_t outsz)
{
    if (!name || !out || max < 7 || outsz < max + 1)
        return GR_EINVAL;
    gr_nvcre_truncate_name(name, max, out, outsz);
    return GR_OK;
}

int gr_nvcre_job_workload_name(const char *job, char out[45])
{
    char full[512];
    if (!job || snprintf(full, sizeof full, "%s-workload", job) >= (int)sizeof full)
        return GR_EINVAL;
    return gr_nvcre_job_truncate_name(full, GR_NVCRE_MAX_WORKLOAD_NAME_LEN, out, 45);
}

/* ------------------------------------------------------------ TrainJob */

static const json_t *cond_true(const json_t *obj, const char *type)
{
    const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
    size_t i;
    const json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *s = json_string_value(json_object_get(c, "status"));
        if (t && s && strcmp(t, type) == 0 && strcmp(s, "True") == 0)
            return c;
    }
    return NULL;
}

static void copy_str(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

void gr_nvcre_trainjob_status(const json_t *tj, gr_nvcre_wl_status *out)
{
    memset(out, 0, sizeof *out);
    const json_t *c = cond_true(tj, "Failed");
    if (c) {
        out->phase = GR_NVCRE_WL_FAILED;
        copy_str(out->reason, sizeof out->reason, json_string_value(json_object_get(c, "reason")));
        copy_str(out->message, sizeof out->message,
                 json_string_value(json_object_get(c, "message")));
        return;
    }
    c = cond_true(tj, "Complete");
    if (c) {
        out->phase = GR_NVCRE_WL_SUCCEEDED;
        copy_str(out->reason, sizeof out->reason, json_string_value(json_object_get(c, "reason")));
        copy_str(out->message, sizeof out->message,
                 json_string_value(json_object_get(c, "message")));
        return;
    }
    const json_t *spec = json_object_get(tj, "spec");
    if (json_is_true(json_object_get(spec, "suspend"))) {
        out->phase = GR_NVCRE_WL_PENDING;
        copy_str(out->reason, sizeof out->reason, "Suspended");
        const char *mb = json_string_value(json_object_get(spec, "managedBy"));
        if (mb && *mb)
            snprintf(out->message, sizeof out->message, "%s; managed by %s", GR_NVCRE_MSG_SUSPENDED,
                     mb);
        else
            copy_str(out->message, sizeof out->message, GR_NVCRE_MSG_SUSPENDED);
        return;
    }
    out->phase = GR_NVCRE_WL_RUNNING;
}

/* The worker target: the first non-launcher replicatedJob named in our
 * runtimePatch, default "node". */
static const char *worker_target(const json_t *rjobs)
{
    size_t i;
    const json_t *rj;
    json_array_foreach(rjobs, i, rj)
    {
        const char *n = json_string_value(json_object_get(rj, "name"));
        if (n && strcmp(n, GR_NVCRE_LAUNCHER_TARGET) != 0)
            return n;
    }
    return GR_NVCRE_DEFAULT_WORKER_TARGET;
}

/* obj[key] as an object, created when absent. NULL when it is another type. */
static json_t *child_obj(json_t *obj, const char *key)
{
    json_t *c = json_object_get(obj, key);
    if (!c) {
        c = json_object();
        if (!c || json_object_set_new(obj, key, c) != 0)
            return NULL;
    }
    return json_is_object(c) ? c : NULL;
}

static json_t *child_arr(json_t *obj, const char *key)
{
    json_t *c = json_object_get(obj, key);
    if (!c) {
        c = json_array();
        if (!c || json_object_set_new(obj, key, c) != 0)
            return NULL;
    }
    return json_is_array(c) ? c : NULL;
}

/* spec.runtimePatches[manager=ours].trainingRuntimeSpec.template.spec
 * .replicatedJobs[name=<worker>].template.spec.template.metadata.labels
 * gets nvcre.nvidia.com/job=<job>. */
static int trainjob_build_spec(const json_t *field_spec, const char *job, json_t **out, gr_err *err)
{
    if (!json_is_object(field_spec))
        return gr_err_set(err, GR_EINVAL, "spec.workload.trainJob must be an object");
    json_t *spec = json_deep_copy(field_spec);
    if (!spec)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    json_t *patches = child_arr(spec, "runtimePatches");
    if (!patches) {
        json_decref(spec);
        return gr_err_set(err, GR_EINVAL, "spec.workload.trainJob.runtimePatches must be a list");
    }
    json_t *ours = NULL, *p;
    size_t i;
    json_array_foreach(patches, i, p)
    {
        const char *m = json_string_value(json_object_get(p, "manager"));
        if (m && strcmp(m, GR_NVCRE_RUNTIME_PATCH_MANAGER) == 0) {
            ours = p;
            break;
        }
    }
    if (!ours) {
        ours = json_pack("{ss}", "manager", GR_NVCRE_RUNTIME_PATCH_MANAGER);
        if (!ours || json_array_append_new(patches, ours) != 0) {
            json_decref(spec);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
    }
    json_t *t = child_obj(ours, "trainingRuntimeSpec");
    t = t ? child_obj(t, "template") : NULL;
    t = t ? child_obj(t, "spec") : NULL;
    json_t *rjobs = t ? child_arr(t, "replicatedJobs") : NULL;
    if (!rjobs) {
        json_decref(spec);
        return gr_err_set(err, GR_EINVAL,
                          "spec.workload.trainJob.runtimePatches[manager=%s]: malformed "
                          "trainingRuntimeSpec.template.spec.replicatedJobs",
                          GR_NVCRE_RUNTIME_PATCH_MANAGER);
    }
    const char *target = worker_target(rjobs);
    json_t *rj = NULL, *r;
    json_array_foreach(rjobs, i, r)
    {
        const char *n = json_string_value(json_object_get(r, "name"));
        if (n && strcmp(n, target) == 0) {
            rj = r;
            break;
        }
    }
    if (!rj) {
        rj = json_pack("{ss}", "name", target);
        if (!rj || json_array_append_new(rjobs, rj) != 0) {
            json_decref(spec);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
    }
    json_t *l = child_obj(rj, "template");
    l = l ? child_obj(l, "spec") : NULL;
    l = l ? child_obj(l, "template") : NULL;
    l = l ? child_obj(l, "metadata") : NULL;
    l = l ? child_obj(l, "labels") : NULL;
    if (!l || json_object_set_new(l, GR_NVCRE_LABEL_JOB, json_string(job)) != 0) {
        json_decref(spec);
        return gr_err_set(err, GR_EINVAL,
                          "spec.workload.trainJob.runtimePatches: replicatedJob %s: malformed "
                          "template.spec.template.metadata.labels",
                          target);
    }
    *out = spec;
    return GR_OK;
}

static const gr_nvcre_workload_adapter adapters[] = {
    {
        .field = GR_NVCRE_F_TRAIN_JOB,
        .api_version = GR_NVCRE_TRAINER_API_VERSION,
        .group = GR_NVCRE_TRAINER_GROUP,
        .version = "v1alpha1",
        .kind = GR_NVCRE_KIND_TRAIN_JOB,
        .plural = "trainjobs",
        .build_spec = trainjob_build_spec,
        .status = gr_nvcre_trainjob_status,
    },
};

const gr_nvcre_workload_adapter *gr_nvcre_workload_adapter_for(const json_t *job_spec, gr_err *err)
{
    const json_t *wl = json_object_get(job_spec, GR_NVCRE_F_WORKLOAD);
    const char *key;
    const json_t *v;
    const char *unknown = NULL;
    json_object_foreach((json_t *)(uintptr_t)wl, key, v)
    {
        if (json_is_null(v))
            continue;
        for (size_t i = 0; i < sizeof adapters / sizeof adapters[0]; i++)
            if (strcmp(key, adapters[i].field) == 0)
                return &adapters[i];
        unknown = key;
    }
    if (unknown) {
        gr_err_set(err, GR_EUNSUPPORTED, "spec.workload.%s", unknown);
        return NULL;
    }
    gr_err_set(err, GR_EINVAL, "%s", GR_NVCRE_MSG_NO_WORKLOAD_TYPE);
    return NULL;
}

int gr_nvcre_job_owns(const json_t *obj, const char *uid)
{
    const json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
    size_t i;
    const json_t *r;
    json_array_foreach(refs, i, r)
    {
        const char *u = json_string_value(json_object_get(r, "uid"));
        if (uid && u && json_is_true(json_object_get(r, "controller")) && strcmp(u, uid) == 0)
            return 1;
    }
    return 0;
}

int gr_nvcre_job_build_workload(const json_t *job, const gr_nvcre_workload_adapter **adapter,
                                json_t **out, gr_err *err)
{
    const json_t *md = json_object_get(job, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *uid = json_string_value(json_object_get(md, "uid"));
    const json_t *spec = json_object_get(job, "spec");
    if (!name || !*name || !ns || !uid)
        return gr_err_set(err, GR_EINVAL,
                          "Job metadata.name, metadata.namespace and metadata.uid are required");
    const gr_nvcre_workload_adapter *a = gr_nvcre_workload_adapter_for(spec, err);
    if (adapter)
        *adapter = a;
    if (!a)
        return err ? err->code : GR_EINVAL;
    char wname[GR_NVCRE_MAX_WORKLOAD_NAME_LEN + 1];
    if (gr_nvcre_job_workload_name(name, wname) != GR_OK)
        return gr_err_set(err, GR_EINVAL, "metadata.name: too long");

    json_t *labels = json_object();
    if (!labels)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    const json_t *wl_labels =
        json_object_get(json_object_get(spec, GR_NVCRE_F_WORKLOAD_METADATA), GR_NVCRE_F_LABELS);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)(uintptr_t)wl_labels, k, v)
    {
        if (!json_is_string(v)) {
            json_decref(labels);
            return gr_err_set(err, GR_EINVAL, "%s[\"%s\"]: value must be a string",
                              GR_NVCRE_PATH_JOB_WORKLOAD_LABELS, k);
        }
        if (gr_nvcre_label_key_reserved(k, strlen(k))) {
            json_decref(labels);
            return gr_err_set(err, GR_EINVAL,
                              "%s[\"%s\"]: conflicts with a controller-owned label; remove it",
                              GR_NVCRE_PATH_JOB_WORKLOAD_LABELS, k);
        }
        json_object_set(labels, k, (json_t *)(uintptr_t)v);
    }
    json_object_set_new(labels, GR_NVCRE_LABEL_MANAGED_BY, json_string(GR_NVCRE_MANAGED_BY_VALUE));
    json_object_set_new(labels, GR_NVCRE_LABEL_JOB, json_string(name));

    json_t *wspec = NULL;
    int rc = a->build_spec(json_object_get(json_object_get(spec, GR_NVCRE_F_WORKLOAD), a->field),
                           name, &wspec, err);
    if (rc != GR_OK) {
        json_decref(labels);
        return rc;
    }
    json_t *obj = json_pack("{ss ss s{ss ss so s[{ss ss ss ss sb sb}]} so}", "apiVersion",
                            a->api_version, "kind", a->kind, "metadata", "name", wname, "namespace",
                            ns, "labels", labels, "ownerReferences", "apiVersion",
                            GR_NVCRE_API_VERSION, "kind", GR_NVCRE_KIND_JOB, "name", name, "uid",
                            uid, "controller", 1, "blockOwnerDeletion", 1, "spec", wspec);
    if (!obj)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    *out = obj;
    return GR_OK;
}
