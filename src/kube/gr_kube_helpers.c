/* gr_kube_helpers.c — access reviews and the event recorder (the pure
 * object helpers are in gr_kube_object.c, library gr_kube_core). */
#include "gr_kube_helpers.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube_internal.h"

/* ---- access review ------------------------------------------------------- */

int gr_kube_can_i(gr_kube_client *c, const gr_kube_access *a, bool *allowed, char *reason,
                  size_t reason_sz, gr_kube_status *st, gr_err *err)
{
    *allowed = false;
    if (reason && reason_sz)
        reason[0] = '\0';
    if (!a || !a->verb || !a->resource)
        return gr_err_set(err, GR_EINVAL, "access review: verb and resource are required");
    json_t *ra = json_object();
    json_object_set_new(ra, "verb", json_string(a->verb));
    json_object_set_new(ra, "group", json_string(a->group ? a->group : ""));
    json_object_set_new(ra, "resource", json_string(a->resource));
    if (a->subresource)
        json_object_set_new(ra, "subresource", json_string(a->subresource));
    if (a->ns)
        json_object_set_new(ra, "namespace", json_string(a->ns));
    if (a->name)
        json_object_set_new(ra, "name", json_string(a->name));
    json_t *body = json_pack("{s:s,s:s,s:{s:o}}", "apiVersion", "authorization.k8s.io/v1", "kind",
                             "SelfSubjectAccessReview", "spec", "resourceAttributes", ra);
    static const gr_kube_gvr ssar = {"authorization.k8s.io", "v1", "selfsubjectaccessreviews"};
    json_t *out = NULL;
    int rc = gr_kube_create(c, &ssar, NULL, body, NULL, &out, st, err);
    json_decref(body);
    if (rc != GR_OK)
        return rc;
    json_t *status = json_object_get(out, "status");
    *allowed = json_is_true(json_object_get(status, "allowed"));
    if (reason && reason_sz) {
        const char *r = json_string_value(json_object_get(status, "reason"));
        const char *e = json_string_value(json_object_get(status, "evaluationError"));
        snprintf(reason, reason_sz, "%s%s%s", r ? r : "", r && e ? "; " : "", e ? e : "");
    }
    json_decref(out);
    return GR_OK;
}

/* ---- events --------------------------------------------------------------- */

#define NOTE_MAX 1024

typedef struct series {
    char name[300];
    int64_t last_ns;
    long count;
} series;

struct gr_kube_recorder {
    gr_kube_client *c;
    char controller[256], instance[256];
    pthread_mutex_t mu;
    gr_kube_map seen; /* aggregation key -> series* */
    char last_name[300];
};

int gr_kube_recorder_new(gr_kube_client *c, const char *controller, const char *instance,
                         gr_kube_recorder **out, gr_err *err)
{
    if (!controller || !*controller || !instance || !*instance)
        return gr_err_set(err, GR_EINVAL,
                          "event recorder: reportingController and reportingInstance are required");
    gr_kube_recorder *r = calloc(1, sizeof *r);
    if (!r)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    r->c = c;
    snprintf(r->controller, sizeof r->controller, "%s", controller);
    snprintf(r->instance, sizeof r->instance, "%s", instance);
    pthread_mutex_init(&r->mu, NULL);
    *out = r;
    return GR_OK;
}

void gr_kube_recorder_free(gr_kube_recorder *r)
{
    if (!r)
        return;
    gr_kube_map_clear(&r->seen, free);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

int gr_kube_recorder_plan(gr_kube_recorder *r, const json_t *regarding, const char *type,
                          const char *reason, const char *action, const char *note,
                          int64_t now_unix_ns, json_t **body, bool *create, const char **name,
                          gr_err *err)
{
    *body = NULL;
    *create = false;
    *name = NULL;
    const char *av = json_string_value(json_object_get(regarding, "apiVersion"));
    const char *kind = json_string_value(json_object_get(regarding, "kind"));
    const char *oname = gr_kube_meta_str(regarding, "name");
    const char *ns = gr_kube_meta_str(regarding, "namespace");
    const char *uid = gr_kube_meta_str(regarding, "uid");
    if (!kind || !oname)
        return gr_err_set(err, GR_EINVAL, "event: regarding needs kind and metadata.name");
    if (!type || (strcmp(type, "Normal") && strcmp(type, "Warning")))
        return gr_err_set(err, GR_EINVAL, "event: type must be Normal or Warning");
    if (!reason || !gr_kube_camel_reason(reason))
        return gr_err_set(err, GR_EINVAL, "event: reason must be CamelCase");
    if (!action || !*action)
        return gr_err_set(err, GR_EINVAL, "event: action is required");
    char nt[NOTE_MAX + 1];
    snprintf(nt, sizeof nt, "%s", note ? note : "");
    char now[32];
    gr_kube_fmt_time(now_unix_ns, true, now);
    gr_buf key = GR_BUF_INIT(8192);
    gr_buf_printf(&key, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", uid ? uid : "",
                  ns ? ns : "", kind, oname, type, reason, action, nt);
    pthread_mutex_lock(&r->mu);
    series *s = gr_kube_map_get(&r->seen, gr_buf_cstr(&key));
    if (s && now_unix_ns - s->last_ns <= GR_KUBE_EVENT_SERIES_WINDOW_NS) {
        s->count++;
        s->last_ns = now_unix_ns;
        *body = json_pack("{s:{s:I,s:s}}", "series", "count", (json_int_t)s->count,
                          "lastObservedTime", now);
        snprintf(r->last_name, sizeof r->last_name, "%s", s->name);
        *name = r->last_name;
        pthread_mutex_unlock(&r->mu);
        gr_buf_free(&key);
        return *body ? GR_OK : gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s || gr_kube_map_put(&r->seen, gr_buf_cstr(&key), s, NULL) != GR_OK) {
            free(s);
            pthread_mutex_unlock(&r->mu);
            gr_buf_free(&key);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
    }
    /* name: <object>.<unique hex>, as client-go (object name + time) */
    snprintf(s->name, sizeof s->name, "%.200s.%llx", oname, (unsigned long long)now_unix_ns);
    s->count = 1;
    s->last_ns = now_unix_ns;
    json_t *reg = json_object();
    if (av)
        json_object_set_new(reg, "apiVersion", json_string(av));
    json_object_set_new(reg, "kind", json_string(kind));
    json_object_set_new(reg, "name", json_string(oname));
    if (ns)
        json_object_set_new(reg, "namespace", json_string(ns));
    if (uid)
        json_object_set_new(reg, "uid", json_string(uid));
    const char *rv = gr_kube_meta_str(regarding, "resourceVersion");
    if (rv)
        json_object_set_new(reg, "resourceVersion", json_string(rv));
    *body = json_pack("{s:s,s:s,s:{s:s,s:s},s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:o}", "apiVersion",
                      "events.k8s.io/v1", "kind", "Event", "metadata", "name", s->name, "namespace",
                      ns && *ns ? ns : "default", "eventTime", now, "reportingController",
                      r->controller, "reportingInstance", r->instance, "type", type, "reason",
                      reason, "action", action, "note", nt, "regarding", reg);
    snprintf(r->last_name, sizeof r->last_name, "%s", s->name);
    *name = r->last_name;
    *create = true;
    pthread_mutex_unlock(&r->mu);
    gr_buf_free(&key);
    return *body ? GR_OK : gr_err_set(err, GR_ENOMEM, "out of memory");
}

int gr_kube_record(gr_kube_recorder *r, const json_t *regarding, const char *type,
                   const char *reason, const char *action, const char *note, gr_err *err)
{
    json_t *body = NULL;
    bool create = false;
    const char *name = NULL;
    int rc = gr_kube_recorder_plan(r, regarding, type, reason, action, note, gr_kube_real_ns(),
                                   &body, &create, &name, err);
    if (rc != GR_OK)
        return rc;
    const char *ns = gr_kube_meta_str(regarding, "namespace");
    if (!ns || !*ns)
        ns = "default";
    gr_kube_status st;
    if (create) {
        rc = gr_kube_create(r->c, &GR_KUBE_EVENTS, ns, body, NULL, NULL, &st, err);
    } else {
        char nm[300];
        snprintf(nm, sizeof nm, "%s", name);
        rc = gr_kube_patch(r->c, &GR_KUBE_EVENTS, ns, nm, GR_KUBE_PATCH_MERGE, body, NULL, NULL,
                           &st, err);
    }
    json_decref(body);
    return rc;
}
