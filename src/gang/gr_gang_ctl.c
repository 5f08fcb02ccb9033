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
#include <time.h>

#include "gr_kube_helpers.h"
#include "gr_kube_informer.h"
#include "gr_log.h"

#define MOD         "gang"
#define IDX_GANG_CM "gangcm"
#define IDX_NS      "namespace"
/* The coordinator's ConfigMap cache: gang ConfigMaps only (the CA bundle
 * copies share the managed-by label but carry no gang-id). */
#define GANG_CM_SELECTOR \
    GR_GANG_LABEL_MANAGED_BY "=" GR_GANG_MANAGED_BY_VALUE "," GR_GANG_LABEL_GANG_ID
/* The topology controller's cache (gr_gang_topo_configmap's label). */
#define TOPO_CM_SELECTOR "app.kubernetes.io/component=nccl-topo"

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
    gr_kube_client *kc; /* borrowed: the options' client, after attach the manager's */
    const gr_preflight_config *cfg;
    gr_kube_mapper *mapper;
    bool own_mapper;
    int workers;
    int64_t batch_ns;
    char *field_manager;

    pthread_mutex_t mu; /* resolver, resolved, ready, topo_user */
    gr_gang_discoverer *def;
    ns_entry *ovr;
    size_t n_ovr;
    json_t *resolved;  /* {ns: true}: namespaces the resolver has evaluated */
    bool ready;        /* latched: every PreflightConfig synced and evaluated */
    json_t *topo_user; /* {ns: seconds}: a topology ConfigMap we did not create */
    json_t *pending;   /* {"ns/cm": anchor}: gangs this replica admitted, until created */

    /* trim keys (from the default discoverer; static for the process) */
    const char **ann_keys;
    size_t n_ann;
    const char **lab_keys;
    size_t n_lab;
    gr_gang_trim_keys trim;

    gr_kube_mgr *mgr; /* borrowed; NULL until attached */
    gr_kube_cache *pods, *cms, *topos, *pfcs;
    gr_kube_ctl *coord, *topo, *pfc_res, *pfc_status;

    atomic_ullong registered, cm_created, cm_writes, conflicts, reconciles, pfc_reconciles,
        topo_created;
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

/* Takes the reference d (NULL = remove the override); marks ns evaluated
 * with `state` (a short description). *changed: the state differs from the
 * previous evaluation (for logging only on change). */
static int resolver_set(gr_gang_service *s, const char *ns, gr_gang_discoverer *d,
                        const char *state, bool *changed)
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
    const char *prev = json_string_value(json_object_get(s->resolved, ns));
    *changed = !prev || strcmp(prev, state) != 0;
    if (rc == GR_OK && *changed && json_object_set_new(s->resolved, ns, json_string(state)) != 0)
        rc = GR_ENOMEM;
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
    s->batch_ns = o->batch_ns > 0 ? o->batch_ns : o->batch_ns < 0 ? 0 : GR_GANG_BATCH_NS;
    s->field_manager = strdup(o->field_manager ? o->field_manager : GR_GANG_FIELD_MANAGER);
    s->resolved = json_object();
    s->topo_user = json_object();
    s->pending = json_object();
    if (!s->field_manager || !s->resolved || !s->topo_user || !s->pending) {
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
    out->topo_created = atomic_load(&s->topo_created);
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

/* ------------------------------------------------------------ readiness */

bool gr_gang_service_ready(gr_gang_service *s, char *why, size_t why_sz)
{
    pthread_mutex_lock(&s->mu);
    bool r = s->ready;
    pthread_mutex_unlock(&s->mu);
    if (r)
        return true;
    /* the resolver's workers start only once the manager has seen the
     * PreflightConfig cache synced (or the CRD absent) */
    if (!s->pfc_res || !gr_kube_ctl_running(s->pfc_res) || !gr_kube_cache_synced(s->pfcs)) {
        snprintf(why, why_sz, "PreflightConfigs are not synced yet");
        return false;
    }
    json_t *items = NULL;
    gr_err e;
    if (gr_kube_cache_list(s->pfcs, NULL, NULL, &items, &e) != GR_OK) {
        snprintf(why, why_sz, "PreflightConfigs: %s", e.msg);
        return false;
    }
    const char *missing = NULL;
    pthread_mutex_lock(&s->mu);
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        const char *ns = gr_kube_obj_meta(it, "namespace");
        if (ns && !json_object_get(s->resolved, ns)) {
            missing = ns;
            break;
        }
    }
    if (!missing)
        s->ready = true;
    else
        snprintf(why, why_sz, "the PreflightConfigs of namespace %s are not evaluated yet",
                 missing);
    r = s->ready;
    pthread_mutex_unlock(&s->mu);
    json_decref(items);
    if (r)
        gr_log(GR_LOG_INFO, MOD, "PreflightConfigs synced; gang admission ready", GR_KV_END);
    return r;
}

static bool ready_check(void *ctx, char *why, size_t why_sz)
{
    return gr_gang_service_ready(ctx, why, why_sz);
}

/* Admission before the PreflightConfigs are known would resolve gangs with
 * the default discoverer: wait a little (the API server only calls ready
 * replicas; this covers the start-up edge), then refuse. */
static bool wait_ready(gr_gang_service *s, char *why, size_t why_sz)
{
    if (!s->mgr)
        return true; /* not attached: resolver from the options only */
    for (int i = 0; i < GR_GANG_ADMIT_WAIT_MS / 50; i++) {
        if (gr_gang_service_ready(s, why, why_sz))
            return true;
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return gr_gang_service_ready(s, why, why_sz);
}

/* ----------------------------------------------------- admission hooks */

/* Remember the anchor of a gang this replica admitted (memory only), for
 * the coordinator of this replica when the stored pod no longer shows it
 * (a 1.35 `workloadRef` the API server dropped, R2). Bounded: the oldest
 * entry goes first. */
static void remember_anchor(gr_gang_service *s, const gr_gang_anchor *a)
{
    char key[GR_KUBE_KEY_MAX];
    if ((size_t)snprintf(key, sizeof key, "%s/%s", a->ns, a->cm_name) >= sizeof key)
        return;
    pthread_mutex_lock(&s->mu);
    bool known = json_object_get(s->pending, key) != NULL;
    pthread_mutex_unlock(&s->mu);
    if (known)
        return;
    json_t *j = gr_gang_anchor_to_json(a);
    if (!j)
        return;
    pthread_mutex_lock(&s->mu);
    if (json_object_size(s->pending) >= GR_GANG_PENDING_MAX) {
        void *it = json_object_iter(s->pending);
        if (it)
            json_object_del(s->pending, json_object_iter_key(it));
    }
    json_object_set_new(s->pending, key, j);
    pthread_mutex_unlock(&s->mu);
}

/* Pure with respect to the API: the anchor comes from the admission object,
 * the ConfigMap name from the gang ID, the discoverer from the synced
 * PreflightConfig cache. No API call, no write (issue 20). */
static int ops_resolve(void *ud, const json_t *pod, const char *ns, gr_preflight_gang_ctx *ctx,
                       gr_err *err)
{
    gr_gang_service *s = ud;
    char why[256] = "";
    if (!wait_ready(s, why, sizeof why))
        return gr_err_set(err, GR_EAGAIN,
                          "gang discovery is not ready (%s); retry, or wait for the webhook's "
                          "/readyz",
                          why);
    gr_gang_discoverer *d = resolver_get(s, ns);
    gr_gang_anchor a;
    int rc = gr_gang_anchor_from_pod(d, pod, ns, &a, err);
    gr_gang_discoverer_unref(d);
    if (rc != GR_OK)
        return rc;
    atomic_fetch_add(&s->registered, 1);
    remember_anchor(s, &a);
    ctx->gang_id = a.gang_id;
    ctx->configmap_name = a.cm_name;
    ctx->expected_count = 0;
    a.gang_id = a.cm_name = NULL;
    gr_gang_anchor_clear(&a);
    return GR_OK;
}

gr_preflight_gang_ops gr_gang_service_ops(gr_gang_service *s)
{
    /* no admitted(): the coordinator creates and fills the ConfigMap from
     * the Pod watch (the volume is optional, so the pod can mount it before
     * it exists) */
    gr_preflight_gang_ops ops = {.resolve = ops_resolve, .ud = s};
    return ops;
}

/* ------------------------------------------------------------ topology */

static bool topo_wanted(const gr_gang_service *s)
{
    const char *name = s->cfg->gang.nccl_topo_configmap;
    const char *data = gr_gang_topo_xml(s->cfg);
    return name && *name && data && *data;
}

#define TOPO_USER_RECHECK_S 600

/* Create-if-absent the NCCL topology ConfigMap of a namespace (facts §4.1;
 * never updated): ncclTopoData, else the bundled file of ncclTopoShape
 * (PF-157). Once per namespace: the topology cache answers "exists"; a
 * ConfigMap of that name that is not ours (PF-156) is remembered for
 * TOPO_USER_RECHECK_S. */
static int topo_reconcile(void *ctx, const char *ns, int64_t *requeue_after_ns, gr_err *err)
{
    (void)requeue_after_ns;
    gr_gang_service *s = ctx;
    if (!topo_wanted(s))
        return GR_OK;
    const char *name = s->cfg->gang.nccl_topo_configmap;
    char key[GR_KUBE_KEY_MAX];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    json_t *have = NULL;
    if (gr_kube_cache_get(s->topos, key, &have, NULL) == GR_OK) {
        json_decref(have);
        return GR_OK;
    }
    int64_t now_s = gr_kube_now_ns() / 1000000000LL;
    pthread_mutex_lock(&s->mu);
    json_int_t seen = json_integer_value(json_object_get(s->topo_user, ns));
    pthread_mutex_unlock(&s->mu);
    if (seen && now_s - seen < TOPO_USER_RECHECK_S)
        return GR_OK;
    json_t *cm =
        gr_gang_topo_configmap(name, ns, gr_gang_topo_xml(s->cfg), s->cfg->gang.nccl_topo_shape);
    if (!cm)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    gr_kube_status st;
    gr_kube_opts o = {0};
    o.field_manager = s->field_manager;
    int rc = gr_kube_create(s->kc, &GR_KUBE_CONFIGMAPS, ns, cm, &o, NULL, &st, err);
    json_decref(cm);
    if (rc == GR_OK) {
        atomic_fetch_add(&s->topo_created, 1);
        gr_log(GR_LOG_INFO, MOD, "created the NCCL topology ConfigMap", GR_KV_STR("namespace", ns),
               GR_KV_STR("name", name), GR_KV_END);
        return GR_OK;
    }
    if (rc == GR_ECONFLICT) { /* exists, not labelled as ours: the user's */
        pthread_mutex_lock(&s->mu);
        json_object_set_new(s->topo_user, ns, json_integer(now_s));
        pthread_mutex_unlock(&s->mu);
        return GR_OK;
    }
    if (rc == GR_ENOTFOUND)
        return GR_OK; /* namespace gone */
    gr_err_prefix(err, "failed to create the NCCL topology ConfigMap %s/%s: ", ns, name);
    return rc;
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

/* Only gang members are cached (issue 20: RSS per watched pod). A pod's
 * volumes are immutable and the gang volume is added only by the webhook at
 * creation, so a pod that does not mount a gang ConfigMap when first seen
 * never will: no reader needs it, not even as an identity stub (upstream
 * keeps stubs only because a controller-runtime transform cannot drop an
 * object). Dropped pods cost nothing after their event is parsed; their
 * DELETED events are dropped the same way. */
static int pod_transform(json_t **obj, void *ctx)
{
    gr_gang_service *s = ctx;
    if (!gr_gang_pod_configmap(*obj))
        return GR_ENOTFOUND; /* not stored, not delivered */
    return gr_gang_pod_trim(obj, &s->trim);
}

/* Batching: every event schedules the gang's key batch_ns later; the
 * queue keeps the earliest deadline, so the pods of a burst that arrive
 * within one window cost one reconcile and one write. */
static void wake(gr_gang_service *s, const char *ns, const char *cm)
{
    char key[GR_KUBE_KEY_MAX];
    if ((size_t)snprintf(key, sizeof key, "%s/%s", ns, cm) >= sizeof key)
        return;
    if (s->batch_ns > 0)
        gr_kube_ctl_enqueue_after(s->coord, key, s->batch_ns);
    else
        gr_kube_ctl_enqueue(s->coord, key);
}

static void pod_event(void *ctx, const json_t *obj)
{
    gr_gang_service *s = ctx;
    const char *cm = gr_gang_pod_configmap(obj);
    const char *ns = gr_kube_obj_meta(obj, "namespace");
    if (!cm || !ns)
        return;
    wake(s, ns, cm);
    if (s->topo)
        gr_kube_ctl_enqueue(s->topo, ns);
}

static void pod_update(void *ctx, const json_t *old_obj, const json_t *new_obj)
{
    (void)old_obj;
    pod_event(ctx, new_obj);
}

static void cm_event(void *ctx, const json_t *obj)
{
    gr_gang_service *s = ctx;
    const char *ns = gr_kube_obj_meta(obj, "namespace");
    const char *name = gr_kube_obj_meta(obj, "name");
    if (ns && name)
        wake(s, ns, name);
}

static void cm_update(void *ctx, const json_t *old_obj, const json_t *new_obj)
{
    (void)old_obj;
    cm_event(ctx, new_obj);
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

/* Look the anchor object up (once per reconcile) for the owner reference
 * and expected_count. */
static int coord_anchor(coord_ctx *c, const gr_gang_anchor *a, gr_err *err)
{
    if (c->anchor_done)
        return GR_OK;
    c->anchor_done = true;
    int rc = get_anchor(c->s, a, c->ns, &c->owner, err);
    if (rc != GR_OK)
        return rc; /* Forbidden etc.: retried with backoff (PF-131) */
    gr_err e;
    gr_gang_discoverer *d = c->owner ? disc_for_anchor(c->s, a, c->ns) : NULL;
    if (d && gr_gang_min_count(d, a, c->owner, &c->expected, &e) != GR_OK) {
        snprintf(c->why, sizeof c->why, "%s", e.msg);
        c->expected = 0;
    }
    if (!c->owner)
        snprintf(c->why, sizeof c->why, "%s %s/%s does not exist yet", a->kind, c->ns, a->name);
    gr_gang_discoverer_unref(d);
    return GR_OK;
}

static int coord_mutate(json_t *cm, coord_ctx *c, gr_err *err)
{
    const json_t *data = json_object_get(cm, "data");
    const char *cur = json_string_value(json_object_get(data, GR_GANG_KEY_EXPECTED));
    bool need_expected = !cur || strcmp(cur, "0") == 0;
    bool need_owner =
        json_array_size(json_object_get(json_object_get(cm, "metadata"), "ownerReferences")) == 0;
    if ((need_expected || need_owner) && !c->anchor_done) {
        const char *aj = json_string_value(json_object_get(
            json_object_get(json_object_get(cm, "metadata"), "annotations"), GR_GANG_ANNOT_ANCHOR));
        json_t *j = aj ? json_loads(aj, 0, NULL) : NULL;
        gr_gang_anchor a;
        gr_err e;
        if (j && gr_gang_anchor_from_json(j, &a, &e) == GR_OK) {
            int rc = coord_anchor(c, &a, err);
            gr_gang_anchor_clear(&a);
            if (rc != GR_OK) {
                json_decref(j);
                return rc;
            }
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

/* Does this (stored) pod resolve to cm_name? Fills *a when it does. */
static bool pod_anchor(gr_gang_service *s, const json_t *pod, const char *ns, const char *cm_name,
                       gr_gang_anchor *a)
{
    gr_gang_discoverer *d = resolver_get(s, ns);
    int rc = gr_gang_anchor_from_pod(d, pod, ns, a, NULL);
    gr_gang_discoverer_unref(d);
    if (rc != GR_OK)
        return false;
    if (strcmp(a->cm_name, cm_name) == 0)
        return true;
    gr_gang_anchor_clear(a);
    return false;
}

/* The anchor of a gang whose ConfigMap does not exist yet: from a cached
 * member (trimmed to the default discoverer's keys), else from the first
 * member as stored (one GET: a namespace's PreflightConfig may use keys
 * the trim dropped), else from this replica's admission memory. */
static bool find_anchor(coord_ctx *c, const char *cm_name, gr_gang_anchor *a)
{
    gr_gang_service *s = c->s;
    size_t i;
    const json_t *pod;
    json_array_foreach(c->members, i, pod)
    {
        if (pod_anchor(s, pod, c->ns, cm_name, a))
            return true;
    }
    const char *name = gr_kube_obj_meta(json_array_get(c->members, 0), "name");
    json_t *full = NULL;
    gr_kube_status st;
    gr_err e;
    if (name && gr_kube_get(s->kc, &GR_KUBE_PODS, c->ns, name, NULL, &full, &st, &e) == GR_OK) {
        bool ok = pod_anchor(s, full, c->ns, cm_name, a);
        json_decref(full);
        if (ok)
            return true;
    }
    char key[GR_KUBE_KEY_MAX];
    snprintf(key, sizeof key, "%s/%s", c->ns, cm_name);
    pthread_mutex_lock(&s->mu);
    json_t *j = json_incref(json_object_get(s->pending, key));
    pthread_mutex_unlock(&s->mu);
    bool ok = j && gr_gang_anchor_from_json(j, a, NULL) == GR_OK;
    json_decref(j);
    return ok;
}

/* The gang ConfigMap does not exist yet: derive the anchor from a member
 * pod, look the anchor object up and create the ConfigMap already filled
 * (facts §4.1 RegisterPeer, done by the coordinator instead of admission). */
static int coord_create(coord_ctx *c, const char *cm_name, gr_err *err)
{
    gr_gang_service *s = c->s;
    gr_gang_anchor a;
    if (!find_anchor(c, cm_name, &a)) {
        gr_log(GR_LOG_WARN, MOD, "gang ConfigMap missing and no member resolves to it",
               GR_KV_STR("namespace", c->ns), GR_KV_STR("configMap", cm_name), GR_KV_END);
        return GR_OK;
    }
    {
        int rc = coord_anchor(c, &a, err);
        json_t *cm = rc == GR_OK
                         ? gr_gang_cm_skeleton(&a, c->expected, s->cfg->gang.master_port, c->owner)
                         : NULL;
        gr_gang_anchor_clear(&a);
        if (rc != GR_OK)
            return rc;
        if (!cm)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        bool changed = false;
        rc = gr_gang_cm_update(cm, c->members, c->expected, s->cfg, &changed, err);
        gr_kube_status st;
        gr_kube_opts o = {0};
        o.field_manager = s->field_manager;
        if (rc == GR_OK)
            rc = gr_kube_create(s->kc, &GR_KUBE_CONFIGMAPS, c->ns, cm, &o, NULL, &st, err);
        json_decref(cm);
        if (rc == GR_OK) {
            atomic_fetch_add(&s->cm_created, 1);
            c->missing_anchor = c->expected <= 0;
        }
        return rc;
    }
}

/* Read the cache after our own write lags: come back after one batch
 * window (at least 20 ms) instead of an error backoff. */
static int64_t lag_delay(const gr_gang_service *s)
{
    return s->batch_ns > 20000000LL ? s->batch_ns : 20000000LL;
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
    int rc = gr_kube_cache_list(s->pods, IDX_GANG_CM, cm_name, &all, err);
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
    json_t *cm = NULL;
    rc = gr_kube_cache_get(s->cms, key, &cm, err);
    if (rc == GR_ENOTFOUND) {
        rc = json_array_size(members) ? coord_create(&c, cm_name, err) : GR_OK;
        if (rc == GR_ECONFLICT) { /* created meanwhile: our cache lags */
            atomic_fetch_add(&s->conflicts, 1);
            *requeue_after_ns = lag_delay(s);
            rc = GR_OK;
        }
    } else if (rc == GR_OK) {
        rc = coord_mutate(cm, &c, err);
        if (rc == GR_OK) {
            gr_kube_status st;
            gr_kube_opts o = {0};
            o.field_manager = s->field_manager;
            rc = gr_kube_update(s->kc, &GR_KUBE_CONFIGMAPS, ns, cm, &o, NULL, &st, err);
            if (rc == GR_OK) {
                atomic_fetch_add(&s->cm_writes, 1);
            } else if (rc == GR_ECONFLICT) { /* resourceVersion moved: re-read the cache */
                atomic_fetch_add(&s->conflicts, 1);
                *requeue_after_ns = lag_delay(s);
                rc = GR_OK;
            } else if (rc == GR_ENOTFOUND) { /* deleted meanwhile: the delete event requeues */
                rc = GR_OK;
            }
        } else if (rc == GR_ECANCELED) {
            rc = GR_OK;
        }
    }
    if (rc == GR_OK && !*requeue_after_ns && c.missing_anchor && json_array_size(members)) {
        gr_log(GR_LOG_DEBUG, MOD, "gang size not known yet", GR_KV_STR("configMap", key),
               GR_KV_STR("why", c.why), GR_KV_END);
        *requeue_after_ns = GR_GANG_RECHECK_NS;
    }
    json_decref(cm);
    json_decref(c.owner);
    json_decref(members);
    return rc;
}

/* ------------------------------------------------------ PreflightConfig */

static size_t map_ns(void *ctx, const json_t *obj, char (*keys)[GR_KUBE_KEY_MAX], size_t max)
{
    (void)ctx;
    const char *ns = gr_kube_obj_meta(obj, "namespace");
    if (!ns || !max || strlen(ns) >= GR_KUBE_KEY_MAX)
        return 0;
    snprintf(keys[0], GR_KUBE_KEY_MAX, "%s", ns);
    return 1;
}

/* The namespace's PreflightConfigs in precedence order (NULL: none) and the
 * winner's discoverer (*d; else *vrc and *verr say why it is invalid). */
static int pfc_eval(gr_gang_service *s, const char *ns, json_t **ordered, gr_gang_discoverer **d,
                    int *vrc, gr_err *verr, gr_err *err)
{
    *ordered = NULL;
    *d = NULL;
    json_t *items = NULL;
    int rc = gr_kube_cache_list(s->pfcs, IDX_NS, ns, &items, err);
    if (rc != GR_OK)
        return rc;
    if (json_array_size(items) == 0) {
        json_decref(items);
        return GR_OK;
    }
    *ordered = gr_gang_pfc_order(items);
    json_decref(items);
    if (!*ordered)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    json_t *winner = json_array_get(*ordered, 0);
    *vrc = gr_gang_discoverer_build(
        s->mapper, json_object_get(json_object_get(winner, "spec"), "gangDiscovery"), d, verr);
    return GR_OK;
}

/* Always on, every replica: the namespace → discoverer resolver admission
 * reads. No writes. */
static int pfc_resolve_reconcile(void *ctx, const char *ns, int64_t *requeue_after_ns, gr_err *err)
{
    gr_gang_service *s = ctx;
    json_t *ordered = NULL;
    gr_gang_discoverer *d = NULL;
    int vrc = GR_OK;
    gr_err verr;
    int rc = pfc_eval(s, ns, &ordered, &d, &vrc, &verr, err);
    if (rc != GR_OK)
        return rc;
    bool changed = false;
    char state[GR_ERR_MSG_MAX + 256];
    if (!ordered) {
        rc = resolver_set(s, ns, NULL, "default", &changed);
        if (changed)
            gr_log(GR_LOG_INFO, MOD, "namespace uses the default gang discoverer",
                   GR_KV_STR("namespace", ns), GR_KV_END);
        return rc == GR_OK ? GR_OK : gr_err_set(err, rc, "out of memory");
    }
    const char *wname = gr_kube_obj_meta(json_array_get(ordered, 0), "name");
    if (vrc == GR_OK) {
        const char *dname = gr_gang_discoverer_name(d);
        snprintf(state, sizeof state, "active %s %s", wname ? wname : "", dname);
        rc = resolver_set(s, ns, d, state, &changed); /* takes d */
        if (changed)
            gr_log(GR_LOG_INFO, MOD, "PreflightConfig active", GR_KV_STR("namespace", ns),
                   GR_KV_STR("name", wname), GR_KV_STR("discoverer", dname), GR_KV_END);
    } else {
        /* PF-134, PF-135: fall back to the default */
        snprintf(state, sizeof state, "invalid %s %s", wname ? wname : "", verr.msg);
        rc = resolver_set(s, ns, NULL, state, &changed);
        if (changed)
            gr_log(GR_LOG_WARN, MOD, "PreflightConfig invalid; namespace falls back to the default",
                   GR_KV_STR("namespace", ns), GR_KV_STR("name", wname),
                   GR_KV_STR("error", verr.msg), GR_KV_END);
        /* re-validate later: the CRD may be installed without touching the config */
        *requeue_after_ns = GR_GANG_RECHECK_NS;
    }
    json_decref(ordered);
    if (rc != GR_OK)
        gr_err_set(err, rc, "out of memory");
    return rc;
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

/* Leader only: the status of every PreflightConfig of a namespace. */
static int pfc_status_reconcile(void *ctx, const char *ns, int64_t *requeue_after_ns, gr_err *err)
{
    gr_gang_service *s = ctx;
    atomic_fetch_add(&s->pfc_reconciles, 1);
    json_t *ordered = NULL;
    gr_gang_discoverer *d = NULL;
    int vrc = GR_OK;
    gr_err verr;
    int rc = pfc_eval(s, ns, &ordered, &d, &vrc, &verr, err);
    if (rc != GR_OK || !ordered)
        return rc;
    json_t *winner = json_array_get(ordered, 0);
    const char *wname = gr_kube_obj_meta(winner, "name");
    char msg[GR_ERR_MSG_MAX + 64];
    int first_err = GR_OK;
    gr_err werr;
    if (vrc == GR_OK) {
        rc = write_status(s, winner, true, GR_GANG_REASON_ACTIVE, GR_GANG_MSG_ACTIVE,
                          gr_gang_discoverer_name(d), &werr);
    } else {
        snprintf(msg, sizeof msg, "invalid configuration: %s", verr.msg);
        rc = write_status(s, winner, false, GR_GANG_REASON_INVALID, msg, "", &werr);
        *requeue_after_ns = GR_GANG_RECHECK_NS;
    }
    gr_gang_discoverer_unref(d);
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
    if (first_err == GR_ECONFLICT) { /* our cache lags our own write: read it again */
        *requeue_after_ns = 100000000LL;
        return GR_OK;
    }
    return first_err;
}

/* ------------------------------------------------------------- attach */

int gr_gang_service_attach(gr_gang_service *s, gr_kube_mgr *m, gr_err *err)
{
    if (s->mgr)
        return gr_err_set(err, GR_ESTATE, "gang service: already attached to a manager");
    s->mgr = m;
    s->kc = gr_kube_mgr_client(m);
    int rc;
    gr_kube_cache_opts po = {.gvr = GR_KUBE_PODS, .transform = pod_transform, .transform_ctx = s};
    gr_kube_cache_opts co = {.gvr = GR_KUBE_CONFIGMAPS, .label_selector = GANG_CM_SELECTOR};
    gr_kube_cache_opts to = {.gvr = GR_KUBE_CONFIGMAPS, .label_selector = TOPO_CM_SELECTOR};
    gr_kube_cache_opts fo = {.gvr = PFC_GVR, .optional = true};
    if ((rc = gr_kube_mgr_cache(m, &po, &s->pods, err)) != GR_OK ||
        (rc = gr_kube_cache_add_index(s->pods, IDX_GANG_CM, index_gang_cm, NULL, err)) != GR_OK ||
        (rc = gr_kube_mgr_cache(m, &co, &s->cms, err)) != GR_OK ||
        (rc = gr_kube_mgr_cache(m, &to, &s->topos, err)) != GR_OK ||
        (rc = gr_kube_mgr_cache(m, &fo, &s->pfcs, err)) != GR_OK ||
        (rc = gr_kube_cache_add_index(s->pfcs, IDX_NS, gr_kube_index_namespace, NULL, err)) !=
            GR_OK)
        return rc;
    gr_kube_ctl_opts coord = {
        .name = "gang-coordinator", .workers = s->workers, .reconcile = coord_reconcile, .ctx = s};
    gr_kube_ctl_opts topo = {
        .name = "gang-topology", .workers = 1, .reconcile = topo_reconcile, .ctx = s};
    gr_kube_ctl_opts res = {.name = "preflightconfig-resolver",
                            .workers = 1,
                            .always_on = true,
                            .reconcile = pfc_resolve_reconcile,
                            .ctx = s};
    gr_kube_ctl_opts status = {
        .name = "preflightconfig", .workers = 1, .reconcile = pfc_status_reconcile, .ctx = s};
    gr_kube_handlers ph = {
        .on_add = pod_event, .on_update = pod_update, .on_delete = pod_event, .ctx = s};
    gr_kube_handlers ch = {
        .on_add = cm_event, .on_update = cm_update, .on_delete = cm_event, .ctx = s};
    if ((rc = gr_kube_mgr_add_controller(m, &coord, &s->coord, err)) != GR_OK ||
        (rc = gr_kube_ctl_need(s->coord, s->pods, err)) != GR_OK ||
        (rc = gr_kube_ctl_need(s->coord, s->cms, err)) != GR_OK ||
        (rc = gr_kube_mgr_add_controller(m, &topo, &s->topo, err)) != GR_OK ||
        (rc = gr_kube_ctl_need(s->topo, s->topos, err)) != GR_OK ||
        (rc = gr_kube_ctl_need(s->topo, s->pods, err)) != GR_OK ||
        (rc = gr_kube_cache_add_handlers(s->pods, &ph, err)) != GR_OK ||
        (rc = gr_kube_cache_add_handlers(s->cms, &ch, err)) != GR_OK ||
        (rc = gr_kube_mgr_add_controller(m, &res, &s->pfc_res, err)) != GR_OK ||
        (rc = gr_kube_ctl_watch(s->pfc_res, s->pfcs, map_ns, NULL, err)) != GR_OK ||
        (rc = gr_kube_mgr_add_controller(m, &status, &s->pfc_status, err)) != GR_OK ||
        (rc = gr_kube_ctl_watch(s->pfc_status, s->pfcs, map_ns, NULL, err)) != GR_OK ||
        (rc = gr_kube_mgr_add_ready_check(m, "preflightconfigs", ready_check, s, err)) != GR_OK)
        return rc;
    return GR_OK;
}

void gr_gang_service_free(gr_gang_service *s)
{
    if (!s)
        return;
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
    json_decref(s->resolved);
    json_decref(s->topo_user);
    json_decref(s->pending);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
