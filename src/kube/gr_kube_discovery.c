/* gr_kube_discovery.c — discovery and the REST mapper. */
#include "gr_kube_discovery.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_json.h"
#include "gr_log.h"
#include "kube_internal.h"

#define AGG_ACCEPT \
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"

typedef struct mapping_set {
    gr_kube_mapping *v;
    size_t n, cap;
} mapping_set;

struct gr_kube_mapper {
    gr_kube_client *c;
    pthread_rwlock_t lk;
    mapping_set set;
    pthread_mutex_t refresh_mu;
    int64_t last_refresh_ns;
};

int gr_kube_mapper_new(gr_kube_client *c, gr_kube_mapper **out, gr_err *err)
{
    gr_kube_mapper *m = calloc(1, sizeof *m);
    if (!m)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    m->c = c;
    pthread_rwlock_init(&m->lk, NULL);
    pthread_mutex_init(&m->refresh_mu, NULL);
    *out = m;
    return GR_OK;
}

void gr_kube_mapper_free(gr_kube_mapper *m)
{
    if (!m)
        return;
    free(m->set.v);
    pthread_rwlock_destroy(&m->lk);
    pthread_mutex_destroy(&m->refresh_mu);
    free(m);
}

static int set_add(mapping_set *s, const char *group, const char *version, const char *resource,
                   const char *kind, bool namespaced, bool preferred)
{
    if (!resource || !kind || !*resource || !*kind || strchr(resource, '/'))
        return GR_OK; /* subresource or incomplete entry */
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 64;
        gr_kube_mapping *n = realloc(s->v, nc * sizeof *n);
        if (!n)
            return GR_ENOMEM;
        s->v = n;
        s->cap = nc;
    }
    gr_kube_mapping *e = &s->v[s->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->group, sizeof e->group, "%s", group ? group : "");
    snprintf(e->version, sizeof e->version, "%s", version ? version : "");
    snprintf(e->resource, sizeof e->resource, "%s", resource);
    snprintf(e->kind, sizeof e->kind, "%s", kind);
    e->namespaced = namespaced;
    e->preferred = preferred;
    return GR_OK;
}

static int add_aggregated(mapping_set *s, const json_t *list, gr_err *err)
{
    const char *kind = json_string_value(json_object_get(list, "kind"));
    if (!kind || strcmp(kind, "APIGroupDiscoveryList") != 0)
        return gr_err_set(err, GR_EUNSUPPORTED, "not an APIGroupDiscoveryList");
    size_t i, j, k;
    json_t *g, *v, *r;
    json_array_foreach(json_object_get(list, "items"), i, g)
    {
        const char *group =
            json_string_value(json_object_get(json_object_get(g, "metadata"), "name"));
        json_array_foreach(json_object_get(g, "versions"), j, v)
        {
            const char *version = json_string_value(json_object_get(v, "version"));
            json_array_foreach(json_object_get(v, "resources"), k, r)
            {
                const char *res = json_string_value(json_object_get(r, "resource"));
                const char *kd =
                    json_string_value(json_object_get(json_object_get(r, "responseKind"), "kind"));
                const char *scope = json_string_value(json_object_get(r, "scope"));
                if (set_add(s, group, version, res, kd, scope && strcmp(scope, "Namespaced") == 0,
                            j == 0) != GR_OK)
                    return gr_err_set(err, GR_ENOMEM, "out of memory");
            }
        }
    }
    return GR_OK;
}

static int add_legacy(mapping_set *s, const json_t *list, bool preferred, gr_err *err)
{
    const char *gv = json_string_value(json_object_get(list, "groupVersion"));
    if (!gv)
        return gr_err_set(err, GR_EPARSE, "APIResourceList without groupVersion");
    char group[128] = "", version[64];
    const char *slash = strchr(gv, '/');
    if (slash) {
        snprintf(group, sizeof group, "%.*s", (int)(slash - gv), gv);
        snprintf(version, sizeof version, "%s", slash + 1);
    } else {
        snprintf(version, sizeof version, "%s", gv);
    }
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(list, "resources"), i, r)
    {
        if (set_add(s, group, version, json_string_value(json_object_get(r, "name")),
                    json_string_value(json_object_get(r, "kind")),
                    json_is_true(json_object_get(r, "namespaced")), preferred) != GR_OK)
            return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    return GR_OK;
}

int gr_kube_mapper_add_aggregated(gr_kube_mapper *m, const json_t *list, gr_err *err)
{
    pthread_rwlock_wrlock(&m->lk);
    int rc = add_aggregated(&m->set, list, err);
    pthread_rwlock_unlock(&m->lk);
    return rc;
}

int gr_kube_mapper_add_resource_list(gr_kube_mapper *m, const json_t *list, bool preferred,
                                     gr_err *err)
{
    pthread_rwlock_wrlock(&m->lk);
    int rc = add_legacy(&m->set, list, preferred, err);
    pthread_rwlock_unlock(&m->lk);
    return rc;
}

static int get_json(gr_kube_client *c, const char *path, const char *accept, json_t **out,
                    gr_kube_status *st, gr_err *err)
{
    gr_kube_opts o = {0};
    o.accept = accept;
    gr_buf b = GR_BUF_INIT(GR_KUBE_MAX_RESPONSE);
    int rc = gr_kube_request(c, "GET", path, NULL, NULL, 0, &o, &b, NULL, st, err);
    if (rc == GR_OK)
        rc = gr_json_parse(b.data ? b.data : "", b.len, 0, path, out, err);
    gr_buf_free(&b);
    return rc;
}

static int discover_legacy(gr_kube_client *c, mapping_set *s, gr_err *err)
{
    gr_kube_status st;
    json_t *doc = NULL;
    int rc = get_json(c, "/api/v1", NULL, &doc, &st, err);
    if (rc == GR_OK)
        rc = add_legacy(s, doc, true, err);
    json_decref(doc);
    if (rc != GR_OK)
        return rc;
    doc = NULL;
    if ((rc = get_json(c, "/apis", NULL, &doc, &st, err)) != GR_OK)
        return rc;
    size_t i, j;
    json_t *g, *v;
    json_array_foreach(json_object_get(doc, "groups"), i, g)
    {
        const char *pref = json_string_value(
            json_object_get(json_object_get(g, "preferredVersion"), "groupVersion"));
        json_array_foreach(json_object_get(g, "versions"), j, v)
        {
            const char *gv = json_string_value(json_object_get(v, "groupVersion"));
            if (!gv)
                continue;
            char path[320];
            snprintf(path, sizeof path, "/apis/%s", gv);
            json_t *rl = NULL;
            gr_err e2;
            if (get_json(c, path, NULL, &rl, &st, &e2) != GR_OK) {
                /* an unavailable aggregated API must not hide the others */
                gr_log(GR_LOG_WARN, "kube", "discovery: group version unavailable",
                       GR_KV_STR("groupVersion", gv), GR_KV_STR("error", e2.msg), GR_KV_END);
                continue;
            }
            rc = add_legacy(s, rl, pref && strcmp(pref, gv) == 0, err);
            json_decref(rl);
            if (rc != GR_OK)
                break;
        }
        if (rc != GR_OK)
            break;
    }
    json_decref(doc);
    return rc;
}

int gr_kube_mapper_refresh(gr_kube_mapper *m, gr_err *err)
{
    if (!m->c)
        return gr_err_set(err, GR_ESTATE, "mapper has no client to discover with");
    mapping_set s = {0};
    gr_kube_status st;
    json_t *core = NULL, *apis = NULL;
    int rc = get_json(m->c, "/api", AGG_ACCEPT, &core, &st, err);
    if (rc == GR_OK)
        rc = get_json(m->c, "/apis", AGG_ACCEPT, &apis, &st, err);
    if (rc == GR_OK && add_aggregated(&s, core, NULL) == GR_OK &&
        add_aggregated(&s, apis, NULL) == GR_OK) {
        rc = GR_OK;
    } else if (rc == GR_OK) {
        s.n = 0; /* the server ignored the aggregated Accept: walk the groups */
        rc = discover_legacy(m->c, &s, err);
    }
    json_decref(core);
    json_decref(apis);
    if (rc != GR_OK) {
        free(s.v);
        return gr_err_prefix(err, "discovery: ");
    }
    pthread_rwlock_wrlock(&m->lk);
    free(m->set.v);
    m->set = s;
    pthread_rwlock_unlock(&m->lk);
    pthread_mutex_lock(&m->refresh_mu);
    m->last_refresh_ns = gr_kube_mono_ns();
    pthread_mutex_unlock(&m->refresh_mu);
    return GR_OK;
}

static bool find(gr_kube_mapper *m, const char *group, const char *version, const char *kind,
                 const char *resource, gr_kube_mapping *out)
{
    bool found = false;
    pthread_rwlock_rdlock(&m->lk);
    for (size_t i = 0; i < m->set.n && !found; i++) {
        const gr_kube_mapping *e = &m->set.v[i];
        if (strcmp(e->group, group ? group : "") != 0)
            continue;
        if (version && *version ? strcmp(e->version, version) != 0 : !e->preferred)
            continue;
        if (kind ? strcmp(e->kind, kind) != 0 : strcmp(e->resource, resource) != 0)
            continue;
        *out = *e;
        found = true;
    }
    pthread_rwlock_unlock(&m->lk);
    return found;
}

static int lookup(gr_kube_mapper *m, const char *group, const char *version, const char *kind,
                  const char *resource, gr_kube_mapping *out, gr_err *err)
{
    if (find(m, group, version, kind, resource, out))
        return GR_OK;
    /* CRDs appear at run time: rediscover once, rate-limited */
    if (m->c) {
        pthread_mutex_lock(&m->refresh_mu);
        bool due = m->last_refresh_ns == 0 ||
                   gr_kube_mono_ns() - m->last_refresh_ns >= GR_KUBE_MAPPER_MIN_REFRESH_NS;
        pthread_mutex_unlock(&m->refresh_mu);
        if (due && gr_kube_mapper_refresh(m, NULL) == GR_OK &&
            find(m, group, version, kind, resource, out))
            return GR_OK;
    }
    return gr_err_set(err, GR_ENOTFOUND,
                      "no %s \"%s\" in group \"%s\"%s%s is served by the API server",
                      kind ? "kind" : "resource", kind ? kind : resource, group ? group : "",
                      version && *version ? " version " : "", version && *version ? version : "");
}

int gr_kube_mapper_kind(gr_kube_mapper *m, const char *group, const char *version, const char *kind,
                        gr_kube_mapping *out, gr_err *err)
{
    return lookup(m, group, version, kind, NULL, out, err);
}

int gr_kube_mapper_resource(gr_kube_mapper *m, const char *group, const char *version,
                            const char *resource, gr_kube_mapping *out, gr_err *err)
{
    return lookup(m, group, version, NULL, resource, out, err);
}

int gr_kube_mapper_api_version_kind(gr_kube_mapper *m, const char *api_version, const char *kind,
                                    gr_kube_mapping *out, gr_err *err)
{
    if (!api_version || !*api_version || !kind || !*kind)
        return gr_err_set(err, GR_EINVAL, "apiVersion and kind are required");
    char group[128] = "", version[64];
    const char *slash = strchr(api_version, '/');
    if (slash) {
        snprintf(group, sizeof group, "%.*s", (int)(slash - api_version), api_version);
        snprintf(version, sizeof version, "%s", slash + 1);
    } else {
        snprintf(version, sizeof version, "%s", api_version);
    }
    return lookup(m, group, version, kind, NULL, out, err);
}

size_t gr_kube_mapper_len(gr_kube_mapper *m)
{
    pthread_rwlock_rdlock(&m->lk);
    size_t n = m->set.n;
    pthread_rwlock_unlock(&m->lk);
    return n;
}
