/* gr_casync.c — the pure half of the CA bundle sync (see gr_casync.h). */
#include "gr_casync.h"

#include <string.h>

static bool utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t k;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            k = 1;
            cp = c & 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            k = 2;
            cp = c & 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            k = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (n - i <= k)
            return false;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + j] & 0x3f);
        }
        if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += k + 1;
    }
    return true;
}

int gr_casync_validate_ca(const char *data, size_t len, const char *path, gr_err *err)
{
    const char *p = path ? path : "CA file";
    if (len > GR_CASYNC_CA_MAX)
        return gr_err_set(err, GR_ETOOBIG,
                          "%s: larger than %zu bytes (a ConfigMap holds at most 1 MiB); point "
                          "healthPublish.caFile at the PEM CA bundle",
                          p, GR_CASYNC_CA_MAX);
    bool blank = true;
    for (size_t i = 0; i < len && blank; i++)
        blank = data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r' ||
                data[i] == '\v' || data[i] == '\f';
    if (blank)
        return gr_err_set(err, GR_EINVAL,
                          "%s: CA file is empty; the CA Secret of the deployment platform "
                          "connector must hold a PEM bundle under ca.crt",
                          p);
    if (memchr(data, '\0', len))
        return gr_err_set(err, GR_EINVAL, "%s: CA file contains a NUL byte; expected PEM text", p);
    if (!utf8_valid((const unsigned char *)data, len))
        return gr_err_set(err, GR_EINVAL, "%s: CA file is not UTF-8 text; expected PEM text", p);
    return GR_OK;
}

json_t *gr_casync_desired(const char *ns, const char *ca)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}}, s:{s:s}}", "apiVersion", "v1", "kind",
                     "ConfigMap", "metadata", "name", GR_CASYNC_CM_NAME, "namespace", ns, "labels",
                     GR_CASYNC_LABEL_MANAGED, GR_CASYNC_LABEL_MANAGED_V, GR_CASYNC_LABEL_CA,
                     GR_CASYNC_LABEL_CA_V, "data", GR_CASYNC_KEY, ca);
}

static bool label_is(const json_t *labels, const char *k, const char *v)
{
    const char *got = json_string_value(json_object_get(labels, k));
    return got && strcmp(got, v) == 0;
}

bool gr_casync_needs_update(const json_t *existing, const char *ca)
{
    const json_t *md = json_object_get(existing, "metadata");
    const json_t *labels = json_object_get(md, "labels");
    if (!label_is(labels, GR_CASYNC_LABEL_MANAGED, GR_CASYNC_LABEL_MANAGED_V) ||
        !label_is(labels, GR_CASYNC_LABEL_CA, GR_CASYNC_LABEL_CA_V))
        return true;
    const json_t *bd = json_object_get(existing, "binaryData");
    if (bd && !json_is_null(bd) && !(json_is_object(bd) && json_object_size(bd) == 0))
        return true;
    const json_t *data = json_object_get(existing, "data");
    if (!json_is_object(data) || json_object_size(data) != 1)
        return true;
    const json_t *v = json_object_get(data, GR_CASYNC_KEY);
    return !json_is_string(v) || json_string_length(v) != strlen(ca) ||
           memcmp(json_string_value(v), ca, json_string_length(v)) != 0;
}

int gr_casync_make_desired(json_t *obj, const char *ca, gr_err *err)
{
    if (!json_is_object(obj))
        return gr_err_set(err, GR_EINVAL, "ConfigMap: expected an object");
    json_t *md = json_object_get(obj, "metadata");
    if (!json_is_object(md)) {
        md = json_object();
        if (!md || json_object_set_new(obj, "metadata", md))
            return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    json_t *labels = json_object_get(md, "labels");
    if (!json_is_object(labels)) {
        labels = json_object();
        if (!labels || json_object_set_new(md, "labels", labels))
            return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    json_t *data = json_pack("{s:s}", GR_CASYNC_KEY, ca);
    if (!data ||
        json_object_set_new(labels, GR_CASYNC_LABEL_MANAGED,
                            json_string(GR_CASYNC_LABEL_MANAGED_V)) ||
        json_object_set_new(labels, GR_CASYNC_LABEL_CA, json_string(GR_CASYNC_LABEL_CA_V)) ||
        json_object_set_new(obj, "data", data)) {
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    json_object_del(obj, "binaryData");
    return GR_OK;
}

static int put_values(gr_buf *out, const json_t *vals, const char *field, size_t i, gr_err *err)
{
    if (!json_is_array(vals) || json_array_size(vals) == 0)
        return gr_err_set(err, GR_EINVAL,
                          "%s.matchExpressions[%zu].values: must be a non-empty list for In and "
                          "NotIn",
                          field, i);
    int rc = gr_buf_puts(out, " (");
    size_t j;
    const json_t *v;
    json_array_foreach(vals, j, v)
    {
        if (!json_is_string(v))
            return gr_err_set(err, GR_EINVAL,
                              "%s.matchExpressions[%zu].values[%zu]: must be a string", field, i,
                              j);
        if (rc == GR_OK && j)
            rc = gr_buf_putc(out, ',');
        if (rc == GR_OK)
            rc = gr_buf_puts(out, json_string_value(v));
    }
    if (rc == GR_OK)
        rc = gr_buf_putc(out, ')');
    return rc;
}

int gr_casync_selector_string(const json_t *selector, const char *field, gr_buf *out, gr_err *err)
{
    const char *f = field ? field : "namespaceSelector";
    if (!selector || json_is_null(selector))
        return GR_OK;
    if (!json_is_object(selector))
        return gr_err_set(err, GR_EINVAL,
                          "%s: must be a label selector {matchLabels, "
                          "matchExpressions}",
                          f);
    size_t start = out->len;
    int rc = GR_OK;
    const json_t *ml = json_object_get(selector, "matchLabels");
    if (ml && !json_is_null(ml)) {
        if (!json_is_object(ml))
            return gr_err_set(err, GR_EINVAL, "%s.matchLabels: must be a map of strings", f);
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)(uintptr_t)ml, k, v)
        {
            if (!json_is_string(v))
                return gr_err_set(err, GR_EINVAL, "%s.matchLabels.%s: must be a string", f, k);
            if (rc == GR_OK && out->len > start)
                rc = gr_buf_putc(out, ',');
            if (rc == GR_OK)
                rc = gr_buf_printf(out, "%s=%s", k, json_string_value(v));
        }
    }
    const json_t *me = json_object_get(selector, "matchExpressions");
    if (me && !json_is_null(me)) {
        if (!json_is_array(me))
            return gr_err_set(err, GR_EINVAL, "%s.matchExpressions: must be a list", f);
        size_t i;
        const json_t *e;
        json_array_foreach(me, i, e)
        {
            const char *key = json_string_value(json_object_get(e, "key"));
            const char *op = json_string_value(json_object_get(e, "operator"));
            if (!key || !*key)
                return gr_err_set(err, GR_EINVAL, "%s.matchExpressions[%zu].key: must be set", f,
                                  i);
            if (!op)
                op = "";
            if (rc == GR_OK && out->len > start)
                rc = gr_buf_putc(out, ',');
            if (rc != GR_OK)
                break;
            const json_t *vals = json_object_get(e, "values");
            if (strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0) {
                rc = gr_buf_printf(out, "%s %s", key, op[0] == 'I' ? "in" : "notin");
                if (rc == GR_OK && (rc = put_values(out, vals, f, i, err)) == GR_EINVAL)
                    return rc;
            } else if (strcmp(op, "Exists") == 0 || strcmp(op, "DoesNotExist") == 0) {
                if (json_is_array(vals) && json_array_size(vals))
                    return gr_err_set(err, GR_EINVAL,
                                      "%s.matchExpressions[%zu].values: must be empty for %s", f, i,
                                      op);
                rc = gr_buf_printf(out, "%s%s", op[0] == 'D' ? "!" : "", key);
            } else {
                return gr_err_set(err, GR_EINVAL,
                                  "%s.matchExpressions[%zu].operator: must be In, NotIn, Exists "
                                  "or DoesNotExist, got \"%s\"",
                                  f, i, op);
            }
        }
    }
    if (rc == GR_ETOOBIG)
        return gr_err_set(err, rc, "%s: selector longer than %zu bytes", f, out->max);
    if (rc != GR_OK)
        return gr_err_set(err, rc, "out of memory");
    return GR_OK;
}

int64_t gr_casync_next_tick(int64_t now_ns, int64_t tick_ns)
{
    return now_ns + (tick_ns > 0 ? tick_ns : GR_CASYNC_DEFAULT_TICK_NS);
}
