/* gr_kube_object.c — pure helpers on API objects: conditions, owner
 * references, finalizers (declared in gr_kube_object.h). */
#include "gr_kube_object.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_json.h"
#include "kube_internal.h"

/* ---- conditions --------------------------------------------------------- */

json_t *gr_kube_condition_find(const json_t *conditions, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(conditions, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && strcmp(t, type) == 0)
            return c;
    }
    return NULL;
}

bool gr_kube_condition_is_true(const json_t *conditions, const char *type)
{
    json_t *c = gr_kube_condition_find(conditions, type);
    const char *s = json_string_value(json_object_get(c, "status"));
    return s && strcmp(s, "True") == 0;
}

bool gr_kube_camel_reason(const char *r)
{
    /* metav1.Condition reason: ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$ */
    size_t n = strlen(r);
    if (n == 0 || n > 1024)
        return false;
    if (!((r[0] >= 'A' && r[0] <= 'Z') || (r[0] >= 'a' && r[0] <= 'z')))
        return false;
    for (size_t i = 1; i < n; i++) {
        char c = r[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '_' || ((c == ',' || c == ':') && i != n - 1);
        if (!ok)
            return false;
    }
    return true;
}

static bool set_str(json_t *o, const char *k, const char *v)
{
    const char *cur = json_string_value(json_object_get(o, k));
    if (cur && strcmp(cur, v) == 0)
        return false;
    json_object_set_new(o, k, json_string(v));
    return true;
}

int gr_kube_condition_set(json_t *obj, const char *type, const char *status, const char *reason,
                          const char *message, int64_t observed_generation, int64_t now_unix_ns,
                          bool *changed, gr_err *err)
{
    if (changed)
        *changed = false;
    if (!type || !*type)
        return gr_err_set(err, GR_EINVAL, "condition type is required");
    if (!status || (strcmp(status, "True") && strcmp(status, "False") && strcmp(status, "Unknown")))
        return gr_err_set(err, GR_EINVAL, "condition %s: status must be True, False or Unknown",
                          type);
    if (!reason || !gr_kube_camel_reason(reason))
        return gr_err_set(err, GR_EINVAL,
                          "condition %s: reason \"%s\" must be CamelCase (letters, digits, '_', "
                          "',' or ':', starting with a letter)",
                          type, reason ? reason : "");
    if (!json_is_object(obj))
        return gr_err_set(err, GR_EINVAL, "condition %s: object must be a JSON object", type);
    json_t *stat = gr_json_object_child(obj, "status");
    json_t *conds = json_object_get(stat, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(stat, "conditions", conds);
    }
    char now[32];
    gr_kube_fmt_time(now_unix_ns, false, now);
    json_t *c = gr_kube_condition_find(conds, type);
    bool ch = false;
    if (!c) {
        c = json_object();
        json_object_set_new(c, "type", json_string(type));
        json_object_set_new(c, "status", json_string(status));
        json_object_set_new(c, "lastTransitionTime", json_string(now));
        json_array_append_new(conds, c);
        ch = true;
    } else if (set_str(c, "status", status)) {
        json_object_set_new(c, "lastTransitionTime", json_string(now));
        ch = true;
    }
    ch |= set_str(c, "reason", reason);
    ch |= set_str(c, "message", message ? message : "");
    json_t *og = json_object_get(c, "observedGeneration");
    if (observed_generation > 0 &&
        (!json_is_integer(og) || json_integer_value(og) != observed_generation)) {
        json_object_set_new(c, "observedGeneration", json_integer(observed_generation));
        ch = true;
    }
    if (changed)
        *changed = ch;
    return GR_OK;
}

bool gr_kube_condition_remove(json_t *obj, const char *type)
{
    json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && strcmp(t, type) == 0) {
            json_array_remove(conds, i);
            return true;
        }
    }
    return false;
}

/* ---- owner references, finalizers ---------------------------------------- */

static json_t *meta_of(json_t *obj)
{
    return gr_json_object_child(obj, "metadata");
}

int gr_kube_owner_ref_set(json_t *obj, const json_t *owner, bool controller,
                          bool block_owner_deletion, gr_err *err)
{
    const char *av = json_string_value(json_object_get(owner, "apiVersion"));
    const char *kind = json_string_value(json_object_get(owner, "kind"));
    const char *name = gr_kube_meta_str(owner, "name");
    const char *uid = gr_kube_meta_str(owner, "uid");
    if (!av || !kind || !name || !uid)
        return gr_err_set(err, GR_EINVAL,
                          "owner: apiVersion, kind, metadata.name and metadata.uid are required");
    json_t *md = meta_of(obj);
    json_t *refs = json_object_get(md, "ownerReferences");
    if (!json_is_array(refs)) {
        refs = json_array();
        json_object_set_new(md, "ownerReferences", refs);
    }
    size_t i;
    json_t *r, *mine = NULL;
    json_array_foreach(refs, i, r)
    {
        const char *ruid = json_string_value(json_object_get(r, "uid"));
        if (ruid && strcmp(ruid, uid) == 0)
            mine = r;
        else if (controller && json_is_true(json_object_get(r, "controller")))
            return gr_err_set(err, GR_ECONFLICT, "object is already controlled by %s %s",
                              json_string_value(json_object_get(r, "kind")),
                              json_string_value(json_object_get(r, "name")));
    }
    if (!mine) {
        mine = json_object();
        json_array_append_new(refs, mine);
    }
    json_object_set_new(mine, "apiVersion", json_string(av));
    json_object_set_new(mine, "kind", json_string(kind));
    json_object_set_new(mine, "name", json_string(name));
    json_object_set_new(mine, "uid", json_string(uid));
    json_object_set_new(mine, "controller", json_boolean(controller));
    json_object_set_new(mine, "blockOwnerDeletion", json_boolean(block_owner_deletion));
    return GR_OK;
}

json_t *gr_kube_controller_of(const json_t *obj)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, r)
    {
        if (json_is_true(json_object_get(r, "controller")))
            return r;
    }
    return NULL;
}

bool gr_kube_is_owned_by(const json_t *obj, const char *uid)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, r)
    {
        const char *u = json_string_value(json_object_get(r, "uid"));
        if (u && strcmp(u, uid) == 0)
            return true;
    }
    return false;
}

static long finalizer_index(const json_t *obj, const char *f)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "finalizers"), i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), f) == 0)
            return (long)i;
    }
    return -1;
}

bool gr_kube_finalizer_has(const json_t *obj, const char *f)
{
    return finalizer_index(obj, f) >= 0;
}

bool gr_kube_finalizer_add(json_t *obj, const char *f)
{
    if (gr_kube_finalizer_has(obj, f))
        return false;
    json_t *md = meta_of(obj);
    json_t *fl = json_object_get(md, "finalizers");
    if (!json_is_array(fl)) {
        fl = json_array();
        json_object_set_new(md, "finalizers", fl);
    }
    json_array_append_new(fl, json_string(f));
    return true;
}

bool gr_kube_finalizer_remove(json_t *obj, const char *f)
{
    bool removed = false;
    long i;
    while ((i = finalizer_index(obj, f)) >= 0) {
        json_array_remove(json_object_get(json_object_get(obj, "metadata"), "finalizers"),
                          (size_t)i);
        removed = true;
    }
    return removed;
}

bool gr_kube_is_deleting(const json_t *obj)
{
    const char *ts = gr_kube_meta_str(obj, "deletionTimestamp");
    return ts && *ts;
}
