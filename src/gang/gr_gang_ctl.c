/*
 * gr_gang_ctl.c — discoverer validation, the namespace resolver, admission
 * registration, the gang coordinator, the PreflightConfig controller and the
 * trimmed Pod cache (see gr_gang_ctl.h).
 */
#include "gr_gang_ctl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_kube_helpers.h"
#include "gr_kube_informer.h"
#include "gr_kube_queue.h"
#include "gr_log.h"

#define MOD         "gang"
#define IDX_GANG_CM "gangcm"
#define IDX_NS      "namespace"

static const gr_kube_gvr PFC_GVR = {GR_GANG_PFC_GROUP, GR_GANG_PFC_VERSION, GR_GANG_PFC_RESOURCE};

/* ------------------------------------------------------------ discoverers */

int gr_gang_discoverer_build(gr_kube_mapper *m, const json_t *gd, gr_gang_discoverer **out,
                             gr_err *err)
{
    *out = NULL;
    gr_gang_spec spec;
    int rc = gr_gang_spec_parse(gd, &spec, err);
    if (rc != GR_OK)
        return rc;
    gr_kube_mapping mp;
    gr_err e;
    if (spec.native) {
        if (gr_kube_mapper_kind(m, "scheduling.k8s.io", "v1alpha2", "PodGroup", &mp, &e) == GR_OK)
            rc = gr_gang_discoverer_new(&spec, GR_GANG_NATIVE_PODGROUP, mp.kind, mp.version, out,
                                        err);
        else if (gr_kube_mapper_kind(m, "scheduling.k8s.io", "v1alpha1", "Workload", &mp, &e) ==
                 GR_OK)
            rc = gr_gang_discoverer_new(&spec, GR_GANG_NATIVE_WORKLOAD, mp.kind, mp.version, out,
                                        err);
        else if (gr_kube_mapper_kind(m, "scheduling.k8s.io", "v1alpha2", "Workload", &mp, &e) ==
                 GR_OK)
            /* 1.36 serves Workload only at v1alpha2 (podgroups disabled) */
            rc = gr_gang_discoverer_new(&spec, GR_GANG_NATIVE_WORKLOAD, mp.kind, mp.version, out,
                                        err);
        else
            rc = gr_err_set(err, GR_ENOTFOUND, GR_GANG_MSG_NATIVE_UNAVAILABLE);
    } else if (gr_kube_mapper_resource(m, spec.group, spec.version, spec.resource, &mp, &e) !=
               GR_OK) {
        rc = gr_err_set(err, GR_ENOTFOUND,
                        "gangDiscovery.podGroupGVR validation failed: resource \"%s/%s, "
                        "Resource=%s\" not found (is the CRD installed?): %s",
                        spec.group, spec.version, spec.resource, e.msg);
    } else {
        rc = gr_gang_discoverer_new(&spec, spec.grove ? GR_GANG_GROVE : GR_GANG_CRD, mp.kind,
                                    mp.version, out, err);
    }
    gr_gang_spec_free(&spec);
    return rc;
}

/* --------------------------------------------------------------- service */

typedef struct ns_entry {
    char *ns;
    gr_gang_discoverer *d;
} ns_entry;

struct gr_gang_service {
    gr_kube_client *kc;
    const gr_preflight_config *cfg;
    gr_kube_mapper *mapper;
    bool own_mapper;
    int workers;
    char *field_manager;

    pthread_mutex_t mu; /* resolver */
    gr_gang_discoverer *def;
    ns_entry *ovr;
    size_t n_ovr;

    /* trim keys (from the default discoverer; static for the process) */
    const char **ann_keys;
    size_t n_ann;
    const char **lab_keys;
    size_t n_lab;
    gr_gang_trim_keys trim;

    gr_kube_informer *pods;
    gr_kube_informer *pfcs;
    gr_kube_queue *gq;
    gr_kube_queue *pq;
    gr_kube_controller *gctl;
    gr_kube_controller *pctl;

    atomic_ullong registered, cm_created, cm_writes, conflicts, reconciles, pfc_reconciles;
};

static gr_gang_discoverer *resolver_get(gr_gang_service *s, const char *ns)
{
    pthread_mutex_lock(&s->mu);
    gr_gang_discoverer *d = s->def;
    for (size_t i = 0; i < s->n_ovr; i++)
        if (strcmp(s->ovr[i].ns, ns) == 0) {
            d = s->ovr[i].d;
            break;
        }
    gr_gang_discoverer_ref(d);
    pthread_mutex_unlock(&s->mu);
    return d;
}

/* Takes the reference d (NULL = remove the override). */
static int resolver_set(gr_gang_service *s, const char *ns, gr_gang_discoverer *d)
{
    gr_gang_discoverer *old = NULL;
    int rc = GR_OK;
    pthread_mutex_lock(&s->mu);
    size_t i;
    for (i = 0; i < s->n_ovr; i++)
        if (strcmp(s->ovr[i].ns, ns) == 0)
            break;
    if (i < s->n_ovr) {
        old = s->ovr[i].d;
        if (d) {
            s->ovr[i].d = d;
        } else {
            free(s->ovr[i].ns);
            s->ovr[i] = s->ovr[--s->n_ovr];
        }
    } else if (d) {
        ns_entry *nv = realloc(s->ovr, (s->n_ovr + 1) * sizeof *nv);
        char *dup = strdup(ns);
        if (!nv || !dup) {
            if (nv)
                s->ovr = nv;
            free(dup);
            old = d;
            rc = GR_ENOMEM;
        } else {
            s->ovr = nv;
            s->ovr[s->n_ovr].ns = dup;
            s->ovr[s->n_ovr].d = d;
            s->n_ovr++;
        }
    }
    pthread_mutex_unlock(&s->mu);
    gr_gang_discoverer_unref(old);
    return rc;
}

gr_gang_discoverer *gr_gang_service_discoverer_for(gr_gang_service *s, const char *ns)
{
    return resolver_get(s, ns ? ns : "");
}

static int collect_keys(gr_gang_service *s)
{
    const gr_gang_spec *sp = gr_gang_discoverer_spec(s->def);
    s->ann_keys = calloc(sp->n_annotation_keys + 1, sizeof(char *));
    s->lab_keys = calloc(sp->n_label_keys + 1, sizeof(char *));
    if (!s->ann_keys || !s->lab_keys)
        return GR_ENOMEM;
    for (size_t i = 0; i < sp->n_annotation_keys; i++)
        s->ann_keys[s->n_ann++] = sp->annotation_keys[i];
    for (size_t i = 0; i < sp->n_label_keys; i++)
        s->lab_keys[s->n_lab++] = sp->label_keys[i];
    s->trim.annotations = s->ann_keys;
    s->trim.n_annotations = s->n_ann;
    s->trim.labels = s->lab_keys;
    s->trim.n_labels = s->n_lab;
    return GR_OK;
}

int gr_gang_service_new(const gr_gang_service_opts *o, gr_gang_service **out, gr_err *err)
{
    *out = NULL;
    if (!o || !o->client || !o->cfg)
        return gr_err_set(err, GR_EINVAL, "gang service: client and config are required");
    gr_gang_service *s = calloc(1, sizeof *s);
    if (!s)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    pthread_mutex_init(&s->mu, NULL);
    s->kc = o->client;
    s->cfg = o->cfg;
    s->workers = o->workers > 0 ? o->workers : 4;
    s->field_manager = strdup(o->field_manager ? o->field_manager : GR_GANG_FIELD_MANAGER);
    if (!s->field_manager) {
        gr_gang_service_free(s);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    int rc;
    if (o->mapper) {
        s->mapper = o->mapper;
    } else {
        if ((rc = gr_kube_mapper_new(s->kc, &s->mapper, err)) != GR_OK ||
            (s->own_mapper = true, rc = gr_kube_mapper_refresh(s->mapper, err)) != GR_OK) {
            gr_err_prefix(err, GR_GANG_MSG_RESOLVER_PREFIX "API discovery: ");
            gr_gang_service_free(s);
            return rc;
        }
    }
    if ((rc = gr_gang_discoverer_build(s->mapper, s->cfg->gang_discovery, &s->def, err)) != GR_OK) {
        gr_err_prefix(err, GR_GANG_MSG_RESOLVER_PREFIX GR_GANG_MSG_DEFAULT_PREFIX);
        gr_gang_service_free(s);
        return rc;
    }
    if (collect_keys(s) != GR_OK) {
        gr_gang_service_free(s);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    gr_log(GR_LOG_INFO, MOD, "default gang discoverer",
           GR_KV_STR("discoverer", gr_gang_discoverer_name(s->def)),
           GR_KV_INT("mode", gr_gang_discoverer_mode(s->def)), GR_KV_END);
    *out = s;
    return GR_OK;
}

void gr_gang_service_stats(gr_gang_service *s, gr_gang_stats *out)
{
    out->registered = atomic_load(&s->registered);
    out->cm_created = atomic_load(&s->cm_created);
    out->cm_writes = atomic_load(&s->cm_writes);
    out->conflicts = atomic_load(&s->conflicts);
    out->reconciles = atomic_load(&s->reconciles);
    out->pfc_reconciles = atomic_load(&s->pfc_reconciles);
}

/* ------------------------------------------------------ anchor lookups */

/* GET the anchor object; *obj NULL when it does not exist. */
static int get_anchor(gr_gang_service *s, const gr_gang_anchor *a, const char *ns, json_t **obj,
                      gr_err *err)
{
    gr_kube_gvr gvr = {a->group, a->version, a->resource};
    gr_kube_status st;
    gr_kube_opts o = {0};
    o.timeout_ms = 5000;
    *obj = NULL;
    int rc = gr_kube_get(s->kc, &gvr, ns, a->name, &o, obj, &st, err);
    if (rc == GR_ENOTFOUND) {
        *obj = NULL;
        return GR_OK;
    }
    if (rc != GR_OK)
        gr_err_prefix(err, "failed to get %s %s/%s (check RBAC): ", a->kind, ns, a->name);
    return rc;
}

/* The discoverer that computes minCount for an anchor: the namespace's if its
 * name matches the anchor's, else the default's, else NULL. */
static gr_gang_discoverer *disc_for_anchor(gr_gang_service *s, const gr_gang_anchor *a,
                                           const char *ns)
{
    gr_gang_discoverer *d = resolver_get(s, ns);
    if (strcmp(gr_gang_discoverer_name(d), a->discoverer) == 0)
        return d;
    gr_gang_discoverer_unref(d);
    pthread_mutex_lock(&s->mu);
    d = strcmp(gr_gang_discoverer_name(s->def), a->discoverer) == 0 ? gr_gang_discoverer_ref(s->def)
                                                                    : NULL;
    pthread_mutex_unlock(&s->mu);
    return d;
}

/* ----------------------------------------------------- admission hooks */

static int ops_resolve(void *ud, const json_t *pod, const char *ns, gr_preflight_gang_ctx *ctx,
                       gr_err *err)
{
    gr_gang_service *s = ud;
    gr_gang_discoverer *d = resolver_get(s, ns);
    gr_gang_anchor a;
    int rc = gr_gang_anchor_from_pod(d, pod, ns, &a, err);
    gr_gang_discoverer_unref(d);
    if (rc != GR_OK)
        return rc;
    ctx->gang_id = a.gang_id;
    ctx->configmap_name = a.cm_name;
    ctx->expected_count = 0;
    a.gang_id = a.cm_name = NULL;
    gr_gang_anchor_clear(&a);
    return GR_OK;
}

typedef struct cm_fix {
    gr_gang_service *s;
    const json_t *owner;
    int64_t expected;
    bool want_anchor_ann;
    const char *anchor_ann;
} cm_fix;

static int mutate_fix(json_t *cm, void *ctx, gr_err *err)
{
    cm_fix *f = ctx;
    (void)err;
    bool changed = false;
    if (f->owner && gr_gang_cm_set_owner(cm, f->owner))
        changed = true;
    json_t *data = json_object_get(cm, "data");
    const char *cur = json_string_value(json_object_get(data, GR_GANG_KEY_EXPECTED));
    if (f->expected > 0 && json_is_object(data) && (!cur || strcmp(cur, "0") == 0)) {
        char b[32];
        snprintf(b, sizeof b, "%lld", (long long)f->expected);
        json_object_set_new(data, GR_GANG_KEY_EXPECTED, json_string(b));
        changed = true;
    }
    return changed ? GR_OK : GR_ECANCELED;
}

/* Create-if-absent the NCCL topology ConfigMap in the gang's namespace
 * (facts §4.1; never updated): ncclTopoData, else the bundled file of
 * ncclTopoShape (PF-157). A pre-existing ncclTopoConfigMap without either is
 * the user's (PF-156): nothing to create. */
static void ensure_topo(gr_gang_service *s, const char *ns)
{
    const char *name = s->cfg->gang.nccl_topo_configmap;
    const char *data = gr_gang_topo_xml(s->cfg);
    if (!name || !*name || !data || !*data)
        return;
    json_t *cm = gr_gang_topo_configmap(name, ns, data, s->cfg->gang.nccl_topo_shape);
    gr_kube_status st;
    gr_err e;
    gr_kube_opts o = {0};
    o.field_manager = s->field_manager;
    int rc = cm ? gr_kube_create(s->kc, &GR_KUBE_CONFIGMAPS, ns, cm, &o, NULL, &st, &e) : GR_ENOMEM;
    if (rc != GR_OK && rc != GR_ECONFLICT)
        gr_log(GR_LOG_WARN, MOD, "failed to create the NCCL topology ConfigMap",
               GR_KV_STR("namespace", ns), GR_KV_STR("name", name), GR_KV_STR("error", e.msg),
               GR_KV_END);
    json_decref(cm);
}

static void wake(gr_gang_service *s, const char *ns, const char *cm)
{
    if (!s->gq)
        return;
    char key[GR_KUBE_KEY_MAX];
    snprintf(key, sizeof key, "%s/%s", ns, cm);
    gr_kube_queue_add(s->gq, key);
}

int gr_gang_service_register(gr_gang_service *s, const json_t *pod, const char *ns, gr_err *err)
{
    gr_gang_discoverer *d = resolver_get(s, ns);
    gr_gang_anchor a;
    int rc = gr_gang_anchor_from_pod(d, pod, ns, &a, err);
    if (rc != GR_OK) {
        gr_gang_discoverer_unref(d);
        return rc == GR_ENOTFOUND ? GR_OK : rc;
    }
    atomic_fetch_add(&s->registered, 1);
    json_t *owner = NULL;
    int64_t expected = 0;
    gr_err ge;
    int grc = get_anchor(s, &a, ns, &owner, &ge);
    if (grc != GR_OK) {
        gr_log(GR_LOG_WARN, MOD, "gang anchor lookup failed; the coordinator retries",
               GR_KV_STR("gangID", a.gang_id), GR_KV_STR("error", ge.msg), GR_KV_END);
    } else if (owner && gr_gang_min_count(d, &a, owner, &expected, &ge) != GR_OK) {
        gr_log(GR_LOG_WARN, MOD, "cannot read the gang's minimum count",
               GR_KV_STR("gangID", a.gang_id), GR_KV_STR("error", ge.msg), GR_KV_END);
        expected = 0;
    }
    gr_gang_discoverer_unref(d);
    json_t *cm = gr_gang_cm_skeleton(&a, expected, s->cfg->gang.master_port, owner);
    gr_kube_status st;
    gr_kube_opts o = {0};
    o.field_manager = s->field_manager;
    rc = cm ? gr_kube_create(s->kc, &GR_KUBE_CONFIGMAPS, ns, cm, &o, NULL, &st, err)
            : gr_err_set(err, GR_ENOMEM, "out of memory");
    json_decref(cm);
    if (rc == GR_OK) {
        atomic_fetch_add(&s->cm_created, 1);
    } else if (rc == GR_ECONFLICT) {
        /* exists: backfill owner / expected (facts §4.1) */
        cm_fix f = {s, owner, expected, false, NULL};
        int attempts = 0;
        rc = gr_kube_update_retry(s->kc, &GR_KUBE_CONFIGMAPS, ns, a.cm_name, &o, mutate_fix, &f,
                                  NULL, &attempts, &st, err);
        if (rc == GR_ECANCELED)
            rc = GR_OK;
    }
    if (rc == GR_OK)
        ensure_topo(s, ns);
    wake(s, ns, a.cm_name);
    json_decref(owner);
    gr_gang_anchor_clear(&a);
    return rc;
}

static void ops_admitted(void *ud, const json_t *pod, const char *ns, const char *pod_name,
                         const gr_preflight_gang_ctx *ctx)
{
    gr_gang_service *s = ud;
    gr_err err;
    if (gr_gang_service_register(s, pod, ns, &err) != GR_OK)
        gr_log(GR_LOG_WARN, MOD, "gang registration failed", GR_KV_STR("namespace", ns),
               GR_KV_STR("pod", pod_name), GR_KV_STR("gangID", ctx ? ctx->gang_id : NULL),
               GR_KV_STR("error", err.msg), GR_KV_END);
}

gr_preflight_gang_ops gr_gang_service_ops(gr_gang_service *s)
{
    gr_preflight_gang_ops ops = {.resolve = ops_resolve, .admitted = ops_admitted, .ud = s};
    return ops;
}

/* ---------------------------------------------------------- coordinator */

static size_t index_gang_cm(const json_t *obj, void *ctx, const char **vals, size_t max)
{
    (void)ctx;
    const char *cm = gr_gang_pod_configmap(obj);
    if (!cm || !max)
        return 0;
    vals[0] = cm;
    return 1;
}

static int pod_transform(json_t **obj, void *ctx)
{
    gr_gang_service *s = ctx;
    return gr_gang_pod_trim(obj, &s->trim);
}

static void pod_event(void *ctx, const json_t *obj)
{
    gr_gang_service *s = ctx;
    const char *cm = gr_gang_pod_configmap(obj);
    const char *ns = gr_kube_obj_meta(obj, "namespace");
    if (cm && ns)
        wake(s, ns, cm);
}

static void pod_update(void *ctx, const json_t *old_obj, const json_t *new_obj)
{
    (void)old_obj;
    pod_event(ctx, new_obj);
}

typedef struct coord_ctx {
    gr_gang_service *s;
    const char *ns;
    json_t *members;
    bool anchor_done;
    int64_t expected;
    json_t *owner;
    bool missing_anchor; /* expected unknown: look again later */
    char why[GR_ERR_MSG_MAX];
} coord_ctx;

static int coord_mutate(json_t *cm, void *vctx, gr_err *err)
{
    coord_ctx *c = vctx;
    const json_t *data = json_object_get(cm, "data");
    const char *cur = json_string_value(json_object_get(data, GR_GANG_KEY_EXPECTED));
    bool need_expected = !cur || strcmp(cur, "0") == 0;
    bool need_owner =
        json_array_size(json_object_get(json_object_get(cm, "metadata"), "ownerReferences")) == 0;
    if ((need_expected || need_owner) && !c->anchor_done) {
        c->anchor_done = true;
        const char *aj = json_string_value(json_object_get(
            json_object_get(json_object_get(cm, "metadata"), "annotations"), GR_GANG_ANNOT_ANCHOR));
        json_t *j = aj ? json_loads(aj, 0, NULL) : NULL;
        gr_gang_anchor a;
        gr_err e;
        if (j && gr_gang_anchor_from_json(j, &a, &e) == GR_OK) {
            int rc = get_anchor(c->s, &a, c->ns, &c->owner, err);
            if (rc != GR_OK) {
                gr_gang_anchor_clear(&a);
                json_decref(j);
                return rc; /* Forbidden etc.: retried with backoff (PF-131) */
            }
            gr_gang_discoverer *d = c->owner ? disc_for_anchor(c->s, &a, c->ns) : NULL;
            if (d && gr_gang_min_count(d, &a, c->owner, &c->expected, &e) != GR_OK) {
                snprintf(c->why, sizeof c->why, "%s", e.msg);
                c->expected = 0;
            }
            if (!c->owner)
                snprintf(c->why, sizeof c->why, "%s %s/%s does not exist yet", a.kind, c->ns,
                         a.name);
            gr_gang_discoverer_unref(d);
            gr_gang_anchor_clear(&a);
        }
        json_decref(j);
        c->missing_anchor = c->expected <= 0 && need_expected;
    }
    bool changed = false;
    if (c->owner && gr_gang_cm_set_owner(cm, c->owner))
        changed = true;
    bool ch2 = false;
    int rc = gr_gang_cm_update(cm, c->members, c->expected, c->s->cfg, &ch2, err);
    if (rc != GR_OK)
        return rc;
    return (changed || ch2) ? GR_OK : GR_ECANCELED;
}

/* Create the ConfigMap the pods mount when admission could not (facts §4.1
 * RegisterPeer fallback): derive the anchor from a member pod. */
static int coord_create(gr_gang_service *s, const char *ns, const char *cm_name,
                        const json_t *members, gr_err *err)
{
    size_t i;
    const json_t *pod;
    json_array_foreach(members, i, pod)
    {
        gr_gang_discoverer *d = resolver_get(s, ns);
        gr_gang_anchor a;
        int rc = gr_gang_anchor_from_pod(d, pod, ns, &a, NULL);
        gr_gang_discoverer_unref(d);
        if (rc != GR_OK)
            continue;
        bool match = strcmp(a.cm_name, cm_name) == 0;
        gr_gang_anchor_clear(&a);
        if (match)
            return gr_gang_service_register(s, pod, ns, err);
    }
    gr_log(GR_LOG_WARN, MOD, "gang ConfigMap missing and no member resolves to it",
           GR_KV_STR("namespace", ns), GR_KV_STR("configMap", cm_name), GR_KV_END);
    return GR_OK;
}

static int coord_reconcile(void *ctx, const char *key, int64_t *requeue_after_ns, gr_err *err)
{
    gr_gang_service *s = ctx;
    atomic_fetch_add(&s->reconciles, 1);
    char ns[GR_KUBE_KEY_MAX];
    const char *slash = strchr(key, '/');
    if (!slash || (size_t)(slash - key) >= sizeof ns)
        return GR_OK;
    memcpy(ns, key, (size_t)(slash - key));
    ns[slash - key] = 0;
    const char *cm_name = slash + 1;

    json_t *all = NULL;
    int rc = gr_kube_store_list(gr_kube_informer_store(s->pods), IDX_GANG_CM, cm_name, &all, err);
    if (rc != GR_OK)
        return rc;
    json_t *members = json_array();
    size_t i;
    json_t *p;
    json_array_foreach(all, i, p)
    {
        const char *pns = gr_kube_obj_meta(p, "namespace");
        if (pns && strcmp(pns, ns) == 0)
            json_array_append(members, p);
    }
    json_decref(all);

    coord_ctx c = {.s = s, .ns = ns, .members = members};
    gr_kube_status st;
    gr_kube_opts o = {0};
    o.field_manager = s->field_manager;
    int attempts = 0;
    rc = gr_kube_update_retry(s->kc, &GR_KUBE_CONFIGMAPS, ns, cm_name, &o, coord_mutate, &c, NULL,
                              &attempts, &st, err);
    if (attempts > 1)
        atomic_fetch_add(&s->conflicts, (unsigned long long)(attempts - 1));
    if (rc == GR_OK)
        atomic_fetch_add(&s->cm_writes, 1);
    if (rc == GR_ECANCELED)
        rc = GR_OK;
    if (rc == GR_ENOTFOUND) {
        rc = json_array_size(members) ? coord_create(s, ns, cm_name, members, err) : GR_OK;
    } else if (rc == GR_OK && c.missing_anchor && json_array_size(members)) {
        gr_log(GR_LOG_DEBUG, MOD, "gang size not known yet", GR_KV_STR("configMap", key),
               GR_KV_STR("why", c.why), GR_KV_END);
        *requeue_after_ns = GR_GANG_RECHECK_NS;
    }
    json_decref(c.owner);
    json_decref(members);
    return rc;
}

/* ------------------------------------------------------ PreflightConfig */

static void pfc_event(void *ctx, const json_t *obj)
{
    gr_gang_service *s = ctx;
    const char *ns = gr_kube_obj_meta(obj, "namespace");
    if (ns)
        gr_kube_queue_add(s->pq, ns);
}

static void pfc_update(void *ctx, const json_t *old_obj, const json_t *new_obj)
{
    (void)old_obj;
    pfc_event(ctx, new_obj);
}

static int write_status(gr_gang_service *s, json_t *obj, bool ready, const char *reason,
                        const char *msg, const char *disc, gr_err *err)
{
    bool changed = false;
    int rc = gr_gang_pfc_set_status(obj, ready, reason, msg, disc, gr_kube_now_ns(), &changed, err);
    if (rc != GR_OK || !changed)
        return rc;
    gr_kube_status st;
    gr_kube_opts o = {0};
    o.field_manager = s->field_manager;
    rc = gr_kube_update_status(s->kc, &PFC_GVR, gr_kube_obj_meta(obj, "namespace"), obj, &o, NULL,
                               &st, err);
    if (rc == GR_ENOTFOUND)
        return GR_OK; /* deleted meanwhile */
    return rc;
}

static int pfc_reconcile(void *ctx, const char *ns, int64_t *requeue_after_ns, gr_err *err)
{
    gr_gang_service *s = ctx;
    atomic_fetch_add(&s->pfc_reconciles, 1);
    json_t *items = NULL;
    int rc = gr_kube_store_list(gr_kube_informer_store(s->pfcs), IDX_NS, ns, &items, err);
    if (rc != GR_OK)
        return rc;
    if (json_array_size(items) == 0) {
        json_decref(items);
        gr_log(GR_LOG_INFO, MOD, "namespace uses the default gang discoverer",
               GR_KV_STR("namespace", ns), GR_KV_END);
        return resolver_set(s, ns, NULL);
    }
    json_t *ordered = gr_gang_pfc_order(items);
    json_decref(items);
    if (!ordered)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    json_t *winner = json_array_get(ordered, 0);
    const char *wname = gr_kube_obj_meta(winner, "name");
    gr_gang_discoverer *d = NULL;
    gr_err verr;
    int vrc = gr_gang_discoverer_build(
        s->mapper, json_object_get(json_object_get(winner, "spec"), "gangDiscovery"), &d, &verr);
    char msg[GR_ERR_MSG_MAX + 64];
    int first_err = GR_OK;
    gr_err werr;
    if (vrc == GR_OK) {
        const char *dname = gr_gang_discoverer_name(d);
        gr_log(GR_LOG_INFO, MOD, "PreflightConfig active", GR_KV_STR("namespace", ns),
               GR_KV_STR("name", wname), GR_KV_STR("discoverer", dname), GR_KV_END);
        rc = write_status(s, winner, true, GR_GANG_REASON_ACTIVE, GR_GANG_MSG_ACTIVE, dname, &werr);
        resolver_set(s, ns, d); /* takes d */
    } else {
        /* PF-134, PF-135: fall back to the default, say why */
        resolver_set(s, ns, NULL);
        snprintf(msg, sizeof msg, "invalid configuration: %s", verr.msg);
        gr_log(GR_LOG_WARN, MOD, "PreflightConfig invalid; namespace falls back to the default",
               GR_KV_STR("namespace", ns), GR_KV_STR("name", wname), GR_KV_STR("error", verr.msg),
               GR_KV_END);
        rc = write_status(s, winner, false, GR_GANG_REASON_INVALID, msg, "", &werr);
        /* re-validate later: the CRD may be installed without touching the config */
        *requeue_after_ns = GR_GANG_RECHECK_NS;
    }
    if (rc != GR_OK) {
        first_err = rc;
        *err = werr;
    }
    for (size_t i = 1; i < json_array_size(ordered); i++) {
        gr_gang_pfc_superseded_msg(wname ? wname : "", vrc == GR_OK, msg, sizeof msg);
        rc = write_status(s, json_array_get(ordered, i), false, GR_GANG_REASON_INVALID, msg, "",
                          &werr);
        if (rc != GR_OK && first_err == GR_OK) {
            first_err = rc;
            *err = werr;
        }
    }
    json_decref(ordered);
    return first_err;
}

/* --------------------------------------------------------------- start/stop */

int gr_gang_service_start(gr_gang_service *s, gr_err *err)
{
    int rc;
    if ((rc = gr_kube_queue_new(NULL, &s->gq, err)) != GR_OK ||
        (rc = gr_kube_queue_new(NULL, &s->pq, err)) != GR_OK)
        return rc;
    gr_kube_informer_opts po = {0};
    po.gvr = GR_KUBE_PODS;
    po.transform = pod_transform;
    po.transform_ctx = s;
    po.handlers.on_add = pod_event;
    po.handlers.on_update = pod_update;
    po.handlers.on_delete = pod_event;
    po.handlers.ctx = s;
    if ((rc = gr_kube_informer_new(s->kc, &po, &s->pods, err)) != GR_OK ||
        (rc = gr_kube_informer_add_index(s->pods, IDX_GANG_CM, index_gang_cm, NULL, err)) != GR_OK)
        return rc;
    gr_kube_informer_opts fo = {0};
    fo.gvr = PFC_GVR;
    fo.handlers.on_add = pfc_event;
    fo.handlers.on_update = pfc_update;
    fo.handlers.on_delete = pfc_event;
    fo.handlers.ctx = s;
    fo.backoff_max_ns = 10LL * 1000000000LL; /* the CRD may be installed later */
    if ((rc = gr_kube_informer_new(s->kc, &fo, &s->pfcs, err)) != GR_OK ||
        (rc = gr_kube_informer_add_index(s->pfcs, IDX_NS, gr_kube_index_namespace, NULL, err)) !=
            GR_OK)
        return rc;
    if ((rc = gr_kube_controller_start("gang-coordinator", s->gq, s->workers, coord_reconcile, s,
                                       &s->gctl, err)) != GR_OK ||
        (rc = gr_kube_controller_start("preflightconfig", s->pq, 1, pfc_reconcile, s, &s->pctl,
                                       err)) != GR_OK)
        return rc;
    if ((rc = gr_kube_informer_start(s->pods, err)) != GR_OK ||
        (rc = gr_kube_informer_start(s->pfcs, err)) != GR_OK)
        return rc;
    return GR_OK;
}

int gr_gang_service_wait_synced(gr_gang_service *s, int64_t timeout_ns, gr_err *err)
{
    if (!s->pods)
        return gr_err_set(err, GR_ESTATE, "gang service not started");
    return gr_kube_informer_wait_synced(s->pods, timeout_ns, err);
}

void gr_gang_service_free(gr_gang_service *s)
{
    if (!s)
        return;
    if (s->pods)
        gr_kube_informer_stop(s->pods);
    if (s->pfcs)
        gr_kube_informer_stop(s->pfcs);
    if (s->gctl)
        gr_kube_controller_stop(s->gctl);
    else if (s->gq)
        gr_kube_queue_shutdown(s->gq);
    if (s->pctl)
        gr_kube_controller_stop(s->pctl);
    else if (s->pq)
        gr_kube_queue_shutdown(s->pq);
    gr_kube_informer_free(s->pods);
    gr_kube_informer_free(s->pfcs);
    gr_kube_queue_free(s->gq);
    gr_kube_queue_free(s->pq);
    for (size_t i = 0; i < s->n_ovr; i++) {
        free(s->ovr[i].ns);
        gr_gang_discoverer_unref(s->ovr[i].d);
    }
    free(s->ovr);
    gr_gang_discoverer_unref(s->def);
    if (s->own_mapper)
        gr_kube_mapper_free(s->mapper);
    free(s->ann_keys);
    free(s->lab_keys);
    free(s->field_manager);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
