/*
 * gr_mergepatch.c — JSON Merge Patch (RFC 7386): apply and create.
 * Declared in gr_json.h.
 */
#include "gr_json.h"

#include <stdint.h>
#include <string.h>

/* RFC 7386 MergePatch on a target we own (stolen; may be NULL for
 * "absent"). Returns the new value (new reference) or NULL on ENOMEM. */
static json_t *merge_owned(json_t *target, const json_t *patch)
{
    if (!json_is_object(patch)) {
        json_decref(target);
        return json_deep_copy(patch);
    }
    if (!json_is_object(target)) {
        json_decref(target);
        target = json_object();
        if (!target)
            return NULL;
    }
    const char *k;
    size_t klen;
    json_t *v;
    json_object_keylen_foreach((json_t *)(uintptr_t)patch, k, klen, v)
    {
        if (json_is_null(v)) {
            json_object_deln(target, k, klen);
            continue;
        }
        json_t *child = json_object_getn(target, k, klen);
        json_t *merged = merge_owned(json_incref(child), v);
        if (!merged || json_object_setn_new_nocheck(target, k, klen, merged) != 0) {
            json_decref(target);
            return NULL;
        }
    }
    return target;
}

int gr_json_merge_patch_apply(json_t **target, const json_t *patch, gr_err *err)
{
    if (!target || !patch)
        return gr_err_set(err, GR_EINVAL, "JSON Merge Patch: NULL argument");
    json_t *work = *target ? json_deep_copy(*target) : NULL;
    if (*target && !work)
        return gr_err_set(err, GR_ENOMEM, "JSON Merge Patch: out of memory");
    json_t *out = merge_owned(work, patch);
    if (!out)
        return gr_err_set(err, GR_ENOMEM, "JSON Merge Patch: out of memory");
    json_decref(*target);
    *target = out;
    gr_err_clear(err);
    return GR_OK;
}

/* A value placed whole into a merge patch must not contain null members of
 * objects (they would mean "delete"). ptr is the pointer for messages. */
static int check_no_null_members(const json_t *v, gr_buf *ptr, gr_err *err)
{
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)(uintptr_t)v, k, x)
        {
            size_t old = ptr->len;
            int rc = gr_json_ptr_append(ptr, k);
            if (rc != GR_OK)
                return gr_err_set(err, rc, "JSON Merge Patch: pointer too long");
            if (json_is_null(x))
                return gr_err_set(err, GR_EINVAL,
                                  "JSON Merge Patch cannot set %s to null (null means delete in "
                                  "RFC 7386); use a JSON Patch instead",
                                  gr_buf_cstr(ptr));
            rc = check_no_null_members(x, ptr, err);
            if (rc != GR_OK)
                return rc;
            ptr->len = old;
            ptr->data[old] = 0;
        }
    } else if (json_is_array(v)) {
        /* nulls inside arrays are fine: arrays are replaced whole */
    }
    return GR_OK;
}

static int diff(const json_t *o, const json_t *m, gr_buf *ptr, json_t **out, gr_err *err)
{
    *out = NULL;
    if (!json_is_object(o) || !json_is_object(m)) {
        int rc = check_no_null_members(m, ptr, err);
        if (rc != GR_OK)
            return rc;
        *out = json_deep_copy(m);
        return *out ? GR_OK : gr_err_set(err, GR_ENOMEM, "JSON Merge Patch: out of memory");
    }
    json_t *p = json_object();
    if (!p)
        return gr_err_set(err, GR_ENOMEM, "JSON Merge Patch: out of memory");
    const char *k;
    size_t klen;
    json_t *x;
    json_object_keylen_foreach((json_t *)(uintptr_t)o, k, klen, x)
    {
        if (!json_object_getn(m, k, klen) &&
            json_object_setn_new_nocheck(p, k, klen, json_null()) != 0) {
            json_decref(p);
            return gr_err_set(err, GR_ENOMEM, "JSON Merge Patch: out of memory");
        }
    }
    json_object_keylen_foreach((json_t *)(uintptr_t)m, k, klen, x)
    {
        json_t *ov = json_object_getn(o, k, klen);
        if (ov && gr_json_equal(ov, x))
            continue;
        size_t old = ptr->len;
        int rc = gr_json_ptr_append(ptr, k);
        if (rc != GR_OK) {
            json_decref(p);
            return gr_err_set(err, rc, "JSON Merge Patch: pointer too long");
        }
        if (json_is_null(x)) {
            json_decref(p);
            return gr_err_set(err, GR_EINVAL,
                              "JSON Merge Patch cannot set %s to null (null means delete in RFC "
                              "7386); use a JSON Patch instead",
                              gr_buf_cstr(ptr));
        }
        json_t *sub;
        if (ov && json_is_object(ov) && json_is_object(x))
            rc = diff(ov, x, ptr, &sub, err);
        else
            rc = diff(NULL, x, ptr, &sub, err);
        if (rc != GR_OK) {
            json_decref(p);
            return rc;
        }
        if (json_object_setn_new_nocheck(p, k, klen, sub) != 0) {
            json_decref(p);
            return gr_err_set(err, GR_ENOMEM, "JSON Merge Patch: out of memory");
        }
        ptr->len = old;
        ptr->data[old] = 0;
    }
    *out = p;
    return GR_OK;
}

int gr_json_merge_patch_create(const json_t *orig, const json_t *modified, json_t **out,
                               gr_err *err)
{
    if (!out || !modified)
        return gr_err_set(err, GR_EINVAL, "JSON Merge Patch: NULL argument");
    *out = NULL;
    gr_buf ptr = GR_BUF_INIT(GR_JSON_POINTER_MAX);
    int rc = gr_buf_puts(&ptr, "");
    if (rc == GR_OK)
        rc = diff(orig, modified, &ptr, out, err);
    else
        rc = gr_err_set(err, rc, "JSON Merge Patch: out of memory");
    gr_buf_free(&ptr);
    if (rc == GR_OK)
        gr_err_clear(err);
    return rc;
}
