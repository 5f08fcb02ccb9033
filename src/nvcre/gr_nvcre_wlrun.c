/* The WorkloadRun controller's pure logic (gr_nvcre_wlrun.h). */
#include "gr_nvcre_wlrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_json.h"
#include "gr_kube_object.h"
#include "gr_nvcre_cert.h"
#include "gr_nvcre_types.h"

static json_t *get(const json_t *o, const char *k)
{
    return json_object_get(o, k);
}

static const char *sget(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* o[k] = a deep copy of v when v is set. */
static void put_copy(json_t *o, const char *k, const json_t *v)
{
    if (v && !json_is_null(v))
        json_object_set_new(o, k, json_deep_copy(v));
}

static json_t *concat(const json_t *a, const json_t *b)
{
    json_t *out = json_array();
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x) json_array_append_new(out, json_deep_copy(x));
    json_array_foreach(b, i, x) json_array_append_new(out, json_deep_copy(x));
    return out;
}

/* The `node` container/pod of the runtime, with the platform settings. */
static json_t *pod_spec(const json_t *s, const json_t *popts, const char *image, int gpus, int mlnx,
                        const char *nic, bool mnnvl, const char *cfg_name, const char *pvc,
                        const char *runtime, const json_t *command)
{
    json_t *limits = json_pack("{s:i}", "nvidia.com/gpu", gpus);
    if (nic && *nic && mlnx > 0)
        json_object_set_new(limits, nic, json_integer(mlnx));
    const json_t *res = get(s, "resources");
    json_t *resources = json_pack("{s:O,s:O}", "limits", limits, "requests", limits);
    json_decref(limits);
    if (json_is_object(res)) { /* the user's cpu/memory join the GPU/NIC ones */
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(res, "limits"), k, v)
            json_object_set(json_object_get(resources, "limits"), k, v);
        json_object_foreach(json_object_get(res, "requests"), k, v)
            json_object_set(json_object_get(resources, "requests"), k, v);
    }
    json_t *mounts = json_pack("[{s:s,s:s}]", "name", "dshm", "mountPath", "/dev/shm");
    json_t *vols = json_pack("[{s:s,s:{s:s}}]", "name", "dshm", "emptyDir", "medium", "Memory");
    if (cfg_name) {
        json_array_append_new(mounts,
                              json_pack("{s:s,s:s}", "name", "config", "mountPath", "/config"));
        json_array_append_new(vols, json_pack("{s:s,s:{s:s,s:i}}", "name", "config", "configMap",
                                              "name", cfg_name, "defaultMode", 0755));
    }
    if (pvc) {
        json_array_append_new(
            mounts, json_pack("{s:s,s:s}", "name", "checkpoint", "mountPath", "/checkpoint"));
        json_array_append_new(vols, json_pack("{s:s,s:{s:s}}", "name", "checkpoint",
                                              "persistentVolumeClaim", "claimName", pvc));
    }
    json_t *all_mounts = concat(mounts, get(s, "volumeMounts"));
    json_t *all_vols = concat(vols, get(s, "volumes"));
    json_decref(mounts);
    json_decref(vols);
    json_t *env = concat(get(popts, "ncclEnv"), get(s, "env"));
    json_t *c = json_pack("{s:s,s:s,s:o,s:o,s:o,s:{s:{s:[s]}}}", "name", "node", "image", image,
                          "resources", resources, "volumeMounts", all_mounts, "env", env,
                          "securityContext", "capabilities", "add", "IPC_LOCK");
    if (command)
        json_object_set_new(c, "command", json_deep_copy(command));
    if (mnnvl)
        json_object_set_new(c, "claims", json_pack("[{s:s}]", "name", "compute-domain-channel"));
    json_t *ps = json_pack("{s:[o],s:o}", "containers", c, "volumes", all_vols);
    put_copy(ps, "tolerations", get(popts, "tolerations"));
    put_copy(ps, "imagePullSecrets", get(s, "imagePullSecrets"));
    put_copy(ps, "initContainers", get(s, "initContainers"));
    if (sget(s, "priorityClassName"))
        json_object_set_new(ps, "priorityClassName", json_string(sget(s, "priorityClassName")));
    if (json_is_true(get(popts, "hostNetwork")))
        json_object_set_new(ps, "hostNetwork", json_true());
    if (mnnvl) {
        char tmpl[320];
        snprintf(tmpl, sizeof tmpl, "%s-channel", runtime);
        json_object_set_new(ps, "resourceClaims",
                            json_pack("[{s:s,s:s}]", "name", "compute-domain-channel",
                                      "resourceClaimTemplateName", tmpl));
    }
    json_t *pt = json_pack("{s:o}", "spec", ps);
    if (json_object_size(get(popts, "podAnnotations")))
        json_object_set_new(pt, "metadata",
                            json_pack("{s:O}", "annotations", get(popts, "podAnnotations")));
    return pt;
}

static json_t *replicated_job(const char *name, json_t *pod_template, bool ancestor)
{
    json_t *t = json_pack("{s:{s:o}}", "spec", "template", pod_template);
    if (ancestor)
        json_object_set_new(t, "metadata",
                            json_pack("{s:{s:s}}", "labels",
                                      "trainer.kubeflow.org/trainjob-ancestor-step", "trainer"));
    return json_pack("{s:s,s:o}", "name", name, "template", t);
}

int gr_nvcre_wlrun_build(const json_t *run, const gr_nvcre_catalog *cat, const char *platform,
                         const char *arch, json_t **workflow, gr_err *err)
{
    *workflow = NULL;
    const json_t *s = get(run, "spec"), *md = get(run, "metadata");
    const char *name = sget(md, "name"), *ns = sget(md, "namespace");
    const char *image = sget(s, "image");
    const json_t *fw = get(s, "framework");
    const json_t *torch = get(fw, "torch"), *mpi = get(fw, "mpi"), *exec = get(fw, "exec");
    if (!name)
        return gr_err_set(err, GR_EINVAL, "WorkloadRun: metadata.name is required");
    if (!image || !*image)
        return gr_err_set(err, GR_EINVAL, "WorkloadRun spec.image: set the container image");
    if ((torch != NULL) + (mpi != NULL) + (exec != NULL) != 1)
        return gr_err_set(err, GR_EINVAL,
                          "WorkloadRun spec.framework: set exactly one of torch, mpi, exec");
    json_int_t num_nodes = json_integer_value(get(s, "numNodes"));
    if (num_nodes < 1)
        return gr_err_set(err, GR_EINVAL, "WorkloadRun spec.numNodes: must be at least 1");
    json_t *popts = NULL;
    int rc = gr_nvcre_catalog_platform_options(cat, platform, arch, &popts, err);
    if (rc != GR_OK)
        return rc;
    int gpus = (int)json_integer_value(get(popts, "gpusPerNode"));
    int mlnx = (int)json_integer_value(get(popts, "mlnxPerNode"));
    if (json_is_integer(get(s, "gpusPerNode")))
        gpus = (int)json_integer_value(get(s, "gpusPerNode"));
    if (json_is_integer(get(s, "mlnxPerNode")))
        mlnx = (int)json_integer_value(get(s, "mlnxPerNode"));
    const char *nic =
        sget(s, "nicResourceName") ? sget(s, "nicResourceName") : sget(popts, "nicResourceName");
    bool mnnvl = json_is_boolean(get(s, "enableMNNVL")) ? json_is_true(get(s, "enableMNNVL"))
                                                        : json_is_true(get(popts, "enableMNNVL"));
    const json_t *orch = get(s, "orchestration");
    const char *scale = sget(orch, "testScale");
    json_int_t per_job = scale && !strcmp(scale, "intra-node") ? 1 : num_nodes;

    char runtime[300], cfg[300], pvc[300];
    snprintf(runtime, sizeof runtime, "%s-runtime", name);
    snprintf(cfg, sizeof cfg, "%s-config", name);
    snprintf(pvc, sizeof pvc, "%s-checkpoint", name);
    json_t *deps = json_array();
    const json_t *config = get(s, "config");
    const char *cfg_name = NULL;
    if (json_is_object(get(config, "inline"))) {
        cfg_name = cfg;
        json_array_append_new(deps, json_pack("{s:s,s:s,s:{s:s},s:O}", "apiVersion", "v1", "kind",
                                              "ConfigMap", "metadata", "name", cfg, "data",
                                              get(config, "inline")));
    } else if (sget(get(config, "configMapRef"), "name")) {
        cfg_name = sget(get(config, "configMapRef"), "name");
    }
    const json_t *ck = get(s, "checkpoint");
    if (json_is_object(ck)) {
        json_t *p = json_pack("{s:s,s:s,s:{s:s},s:{s:[s],s:{s:{s:s}}}}", "apiVersion", "v1", "kind",
                              "PersistentVolumeClaim", "metadata", "name", pvc, "spec",
                              "accessModes", "ReadWriteMany", "resources", "requests", "storage",
                              sget(ck, "storageSize") ? sget(ck, "storageSize") : "10Ti");
        if (sget(ck, "storageClassName"))
            json_object_set_new(get(p, "spec"), "storageClassName",
                                json_string(sget(ck, "storageClassName")));
        json_array_append_new(deps, p);
    }
    /* the TrainingRuntime */
    json_t *rjs = json_array(), *policy;
    json_t *trainer = json_pack("{s:s,s:I}", "image", image, "numNodes", per_job);
    if (torch) {
        policy = json_pack("{s:I,s:{s:i}}", "numNodes", per_job, "torch", "numProcPerNode", gpus);
        json_array_append_new(
            rjs, replicated_job("node",
                                pod_spec(s, popts, image, gpus, mlnx, nic, mnnvl, cfg_name,
                                         json_is_object(ck) ? pvc : NULL, runtime, NULL),
                                true));
        json_t *args = json_array();
        if (sget(torch, "script"))
            json_array_append_new(args, json_string(sget(torch, "script")));
        else
            json_array_extend(args, json_pack("[s,s]", "-m", sget(torch, "module")));
        json_t *more = concat(args, get(torch, "args"));
        json_decref(args);
        json_object_set_new(trainer, "command", json_pack("[s]", "torchrun"));
        json_object_set_new(trainer, "args", more);
    } else if (mpi) {
        /* mlPolicy.numNodes 1: the Trainer gives the launcher (ancestor-step
         * trainer) that many pods; the MPI plugin gives the node job the
         * TrainJob's trainer.numNodes. per_job here started per_job launchers. */
        policy =
            json_pack("{s:I,s:{s:i,s:s,s:s,s:b}}", "numNodes", (json_int_t)1, "mpi",
                      "numProcPerNode", gpus, "mpiImplementation",
                      sget(mpi, "mpiImplementation") ? sget(mpi, "mpiImplementation") : "OpenMPI",
                      "sshAuthMountPath", "/tmp/mpi-keys", "runLauncherAsNode", 0);
        json_t *launcher =
            json_pack("{s:{s:[{s:s,s:s}]}}", "spec", "containers", "name", "node", "image", image);
        put_copy(get(launcher, "spec"), "tolerations", get(popts, "tolerations"));
        put_copy(get(launcher, "spec"), "imagePullSecrets", get(s, "imagePullSecrets"));
        json_array_append_new(rjs, replicated_job("launcher", launcher, true));
        json_t *sshd = json_pack("[s,s]", "/usr/sbin/sshd", "-De");
        json_array_append_new(
            rjs, replicated_job("node",
                                pod_spec(s, popts, image, gpus, mlnx, nic, mnnvl, cfg_name,
                                         json_is_object(ck) ? pvc : NULL, runtime, sshd),
                                false));
        json_decref(sshd);
        json_t *bin = json_pack("[s]", sget(mpi, "binary"));
        json_t *a1 = concat(get(mpi, "mpiArgs"), bin);
        json_t *args = concat(a1, get(mpi, "args"));
        json_decref(bin);
        json_decref(a1);
        json_object_set_new(trainer, "command", json_pack("[s]", sget(mpi, "mpirunPath")));
        json_object_set_new(trainer, "args", args);
    } else {
        policy = json_pack("{s:I}", "numNodes", per_job);
        json_array_append_new(
            rjs, replicated_job("node",
                                pod_spec(s, popts, image, gpus, mlnx, nic, mnnvl, cfg_name,
                                         json_is_object(ck) ? pvc : NULL, runtime, NULL),
                                true));
        put_copy(trainer, "command", get(exec, "command"));
        put_copy(trainer, "args", get(exec, "args"));
    }
    json_t *rt =
        json_pack("{s:s,s:s,s:{s:s},s:{s:o,s:{s:{s:o}}}}", "apiVersion",
                  "trainer.kubeflow.org/v1alpha1", "kind", "TrainingRuntime", "metadata", "name",
                  runtime, "spec", "mlPolicy", policy, "template", "spec", "replicatedJobs", rjs);
    json_array_insert_new(deps, 0, rt);
    if (mnnvl) {
        char dom[320], ch[320];
        snprintf(dom, sizeof dom, "%s-domain", runtime);
        snprintf(ch, sizeof ch, "%s-channel", runtime);
        json_array_append_new(deps,
                              json_pack("{s:s,s:s,s:{s:s},s:{s:I,s:{s:{s:s}}}}", "apiVersion",
                                        "resource.nvidia.com/v1beta1", "kind", "ComputeDomain",
                                        "metadata", "name", dom, "spec", "numNodes", per_job,
                                        "channel", "resourceClaimTemplate", "name", ch));
    }
    /* jobTemplate */
    json_t *jspec = json_pack(
        "{s:{s:{s:{s:s,s:s,s:s},s:o}},s:{s:{s:s}}}", "workload", "trainJob", "runtimeRef",
        "apiGroup", "trainer.kubeflow.org", "kind", "TrainingRuntime", "name", runtime, "trainer",
        trainer, "nodeHealthMonitor", "cel", "expression", "node.spec.unschedulable == true");
    put_copy(jspec, "workloadMetadata", get(s, "workloadMetadata"));
    put_copy(jspec, "thresholds", get(s, "thresholds"));
    put_copy(jspec, "goodputMeasurement", get(s, "goodputMeasurement"));
    put_copy(jspec, "bandwidthMeasurement", get(s, "bandwidthMeasurement"));
    if (json_is_object(ck)) {
        json_t *cp = json_pack("{s:s}", "pvcName", pvc);
        if (json_is_integer(get(ck, "maxRestarts")))
            json_object_set(cp, "maxRestarts", get(ck, "maxRestarts"));
        json_object_set_new(jspec, "checkpoint", cp);
    }
    json_t *exe = json_pack("{s:s}", "timeoutPerJob",
                            sget(orch, "timeoutPerJob") ? sget(orch, "timeoutPerJob") : "1h");
    if (json_is_integer(get(orch, "maxConcurrent")))
        json_object_set(exe, "maxConcurrent", get(orch, "maxConcurrent"));
    json_t *o = json_pack("{s:o,s:I}", "execution", exe, "iterations",
                          json_is_integer(get(orch, "repeatCount"))
                              ? json_integer_value(get(orch, "repeatCount"))
                              : (json_int_t)1);
    put_copy(o, "target", get(s, "target"));
    json_t *wspec = json_pack("{s:o,s:{s:o},s:o}", "dependencies", deps, "jobTemplate", "spec",
                              jspec, "orchestration", o);
    if (json_array_size(get(s, "overrides")))
        put_copy(wspec, "overrides", get(s, "overrides"));
    json_decref(popts);
    if (!wspec)
        return gr_err_set(err, GR_ENOMEM, "workloadrun: out of memory");
    if (json_is_object(get(s, "gangScheduler")) &&
        gr_nvcre_cert_apply_gang(wspec, get(s, "gangScheduler")) != GR_OK) {
        json_decref(wspec);
        return gr_err_set(err, GR_ENOMEM, "workloadrun: out of memory");
    }
    json_t *wf =
        json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s}},s:o}", "apiVersion", GR_NVCRE_API_VERSION,
                  "kind", GR_NVCRE_KIND_WORKFLOW, "metadata", "name", name, "namespace",
                  ns ? ns : "", "labels", GR_NVCRE_LABEL_MANAGED_BY, GR_NVCRE_MANAGED_BY_VALUE,
                  GR_NVCRE_LABEL_WORKLOAD_RUN, name, "spec", wspec);
    if (!wf)
        return gr_err_set(err, GR_ENOMEM, "workloadrun: out of memory");
    json_t *owner = json_deep_copy(run);
    if (owner && !get(owner, "apiVersion"))
        json_object_set_new(owner, "apiVersion", json_string(GR_NVCRE_API_VERSION));
    if (owner && !get(owner, "kind"))
        json_object_set_new(owner, "kind", json_string("WorkloadRun"));
    rc = owner ? gr_kube_owner_ref_set(wf, owner, true, true, err) : GR_ENOMEM;
    json_decref(owner);
    if (rc != GR_OK) {
        json_decref(wf);
        return rc;
    }
    *workflow = wf;
    return GR_OK;
}

static int set_exclusive(json_t *obj, const char *type, const char *reason, const char *msg,
                         int64_t gen, int64_t now, gr_err *err)
{
    static const char *types[] = {GR_NVCRE_COND_IN_PROGRESS, GR_NVCRE_COND_SUCCEEDED,
                                  GR_NVCRE_COND_FAILED};
    for (size_t i = 0; i < 3; i++) {
        bool on = !strcmp(types[i], type);
        int rc = gr_kube_condition_set(obj, types[i], on ? "True" : "False",
                                       on ? reason : GR_NVCRE_REASON_SUPERSEDED, on ? msg : "", gen,
                                       now, NULL, err);
        if (rc != GR_OK)
            return rc;
    }
    return GR_OK;
}

int gr_nvcre_wlrun_mirror(const json_t *run, const json_t *wf, int64_t now_ns, json_t **status,
                          gr_err *err)
{
    *status = NULL;
    json_t *obj = json_deep_copy(run);
    if (!obj)
        return gr_err_set(err, GR_ENOMEM, "workloadrun: out of memory");
    if (!json_is_object(get(obj, "status")))
        json_object_set_new(obj, "status", json_object());
    json_t *st = json_object_get(obj, "status");
    int64_t gen = json_integer_value(gr_json_ptr_get(run, "/metadata/generation"));
    json_t *wconds = json_object_get(get(wf, "status"), "conditions");
    json_t *c;
    int rc;
    if (!wf) {
        if (!get(st, "workflowRef")) { /* never created: nothing to mirror */
            *status = json_incref(st);
            json_decref(obj);
            return GR_OK;
        }
        rc = set_exclusive(obj, GR_NVCRE_COND_FAILED, GR_NVCRE_REASON_WORKFLOW_DELETED,
                           GR_NVCRE_MSG_WLRUN_DELETED, gen, now_ns, err);
    } else {
        json_object_set_new(st, "workflowRef",
                            json_pack("{s:s,s:s}", "name", sget(get(wf, "metadata"), "name"),
                                      "namespace",
                                      sget(get(wf, "metadata"), "namespace")
                                          ? sget(get(wf, "metadata"), "namespace")
                                          : ""));
        const json_t *orch = json_object_get(get(wf, "status"), "orchestration");
        if (sget(orch, "detectedPlatform"))
            json_object_set(st, "detectedPlatform", get(orch, "detectedPlatform"));
        if (sget(orch, "detectedGPUArchitecture"))
            json_object_set(st, "detectedGPUArchitecture", get(orch, "detectedGPUArchitecture"));
        put_copy(st, "succeededNodesRef", json_object_get(get(wf, "status"), "succeededNodesRef"));
        put_copy(st, "failedNodesRef", json_object_get(get(wf, "status"), "failedNodesRef"));
        if (gr_kube_condition_is_true(wconds, GR_NVCRE_COND_SUCCEEDED)) {
            rc = set_exclusive(obj, GR_NVCRE_COND_SUCCEEDED, GR_NVCRE_REASON_WORKFLOW_SUCCEEDED,
                               GR_NVCRE_MSG_WLRUN_SUCCEEDED, gen, now_ns, err);
        } else if (gr_kube_condition_is_true(wconds, GR_NVCRE_COND_FAILED)) {
            c = gr_kube_condition_find(wconds, GR_NVCRE_COND_FAILED);
            const char *r = sget(c, "reason");
            rc = set_exclusive(obj, GR_NVCRE_COND_FAILED,
                               r && !strcmp(r, GR_NVCRE_REASON_JOB_VALIDATION_FAILED)
                                   ? GR_NVCRE_REASON_WORKFLOW_VALIDATION_FAILED
                                   : GR_NVCRE_REASON_WORKFLOW_FAILED,
                               sget(c, "message") ? sget(c, "message") : "", gen, now_ns, err);
        } else {
            c = gr_kube_condition_find(wconds, GR_NVCRE_COND_IN_PROGRESS);
            const char *r = sget(c, "reason");
            char msg[400];
            snprintf(msg, sizeof msg, "Created Workflow %s",
                     sget(get(wf, "metadata"), "name") ? sget(get(wf, "metadata"), "name") : "");
            rc = set_exclusive(
                obj, GR_NVCRE_COND_IN_PROGRESS, r && *r ? r : GR_NVCRE_REASON_WORKFLOW_CREATED,
                r && *r && sget(c, "message") ? sget(c, "message") : msg, gen, now_ns, err);
        }
        if (rc == GR_OK && gr_kube_condition_is_true(wconds, GR_NVCRE_COND_VALIDATION_FAILED)) {
            c = gr_kube_condition_find(wconds, GR_NVCRE_COND_VALIDATION_FAILED);
            rc = gr_kube_condition_set(
                obj, GR_NVCRE_COND_VALIDATION_FAILED, "True", GR_NVCRE_REASON_THRESHOLD_VIOLATION,
                sget(c, "message") ? sget(c, "message") : "", gen, now_ns, NULL, err);
        }
    }
    if (rc != GR_OK) {
        json_decref(obj);
        return rc;
    }
    *status = json_incref(json_object_get(obj, "status"));
    json_decref(obj);
    return GR_OK;
}
