/* gr_cases_snapshot.c — sanitizing collected objects, generated node
 * names, filtering /metrics text (pure). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_buf.h"
#include "gr_cases.h"
#include "gr_hash.h"
#include "gr_time.h"

int gr_cases_node_hash(const char *seed, char out[7], gr_err *err)
{
    char hex[GR_HASH_SHA256_HEX_MAX];
    int rc = gr_hash_sha256_hex_str(seed ? seed : "", hex, err);
    if (rc != GR_OK)
        return rc;
    memcpy(out, hex, 6);
    out[6] = '\0';
    return GR_OK;
}

int gr_cases_node_name(const char *seed, long index, char out[GR_CASES_NODE_NAME_MAX], gr_err *err)
{
    char h[7];
    if (index < 0 || index >= GR_CASES_MAX_NODES)
        return gr_err_set(err, GR_EINVAL, "generateNodes: node index %ld is outside 0..%d", index,
                          GR_CASES_MAX_NODES - 1);
    int rc = gr_cases_node_hash(seed, h, err);
    if (rc != GR_OK)
        return rc;
    snprintf(out, GR_CASES_NODE_NAME_MAX, "gen-%s-node-%02ld", h, index);
    return GR_OK;
}

/* ----------------------------------------------------------------- waits */

static bool cond_true(const json_t *obj, const char *type, const char *reason)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *s = json_string_value(json_object_get(c, "status"));
        const char *r = json_string_value(json_object_get(c, "reason"));
        if (t && s && !strcmp(t, type) && !strcmp(s, "True"))
            return !reason || (r && !strcmp(r, reason));
    }
    return false;
}

bool gr_cases_wait_met(const gr_cases_wait *w, const json_t *obj)
{
    const json_t *st = json_object_get(obj, "status");
    if (w->condition && !cond_true(obj, w->condition, w->reason))
        return false;
    if (w->restart_count >= 0 &&
        json_integer_value(json_object_get(st, "restartCount")) < w->restart_count)
        return false;
    if (w->failed_node_count >= 0 &&
        (long)json_array_size(json_object_get(st, "failedNodes")) < w->failed_node_count)
        return false;
    return true;
}

/* ------------------------------------------------------------ sanitizing */

static bool is_timestamp(const char *s)
{
    size_t n = strlen(s);
    /* 2006-01-02T15:04:05Z at least; the parser decides the rest. */
    if (n < 20 || n > 40 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't'))
        return false;
    struct timespec ts;
    return gr_time_parse(s, &ts, NULL) == GR_OK;
}

static bool is_uuid(const char *s)
{
    static const char pat[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
    if (strlen(s) != sizeof pat - 1)
        return false;
    for (size_t i = 0; pat[i]; i++) {
        if (pat[i] == '-' ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
            return false;
    }
    return true;
}

typedef struct san {
    const char *ns;
    char genpfx[16]; /* "gen-<hash>-" or "" */
    gr_err *err;
} san;

/* Replace every occurrence of `from` in s by `to`; NULL when nothing
 * changed, else a malloc'd string (or NULL + *oom on allocation failure). */
static char *replace_all(const char *s, const char *from, const char *to, bool *oom)
{
    size_t fl = strlen(from);
    if (!fl || !strstr(s, from))
        return NULL;
    gr_buf b;
    gr_buf_init(&b, (size_t)64 * 1024 * 1024); /* snapshots are API objects: well under 64 MiB */
    const char *p = s, *q;
    int rc = GR_OK;
    while (rc == GR_OK && (q = strstr(p, from))) {
        rc = gr_buf_append(&b, p, (size_t)(q - p));
        if (rc == GR_OK)
            rc = gr_buf_puts(&b, to);
        p = q + fl;
    }
    if (rc == GR_OK)
        rc = gr_buf_puts(&b, p);
    if (rc != GR_OK) {
        gr_buf_free(&b);
        *oom = true;
        return NULL;
    }
    return gr_buf_steal(&b, NULL);
}

/* The sanitized form of a string (malloc'd) or NULL when unchanged. */
static char *san_string(const san *z, const char *s, bool timestamps, bool *oom)
{
    const char *whole = timestamps && is_timestamp(s) ? GR_CASES_PH_TIME
                        : is_uuid(s)                  ? GR_CASES_PH_UID
                                                      : NULL;
    if (whole) {
        char *r = strdup(whole);
        *oom = r == NULL;
        return r;
    }
    char *a = z->ns && *z->ns ? replace_all(s, z->ns, GR_CASES_PH_NAMESPACE, oom) : NULL;
    if (*oom)
        return NULL;
    char *b = NULL;
    if (z->genpfx[0]) {
        b = replace_all(a ? a : s, z->genpfx, "gen-" GR_CASES_PH_HASH "-", oom);
        if (*oom) {
            free(a);
            return NULL;
        }
    }
    if (b) {
        free(a);
        return b;
    }
    return a;
}

static int san_value(const san *z, json_t *v, bool timestamps, int depth);

static int san_object(const san *z, json_t *o, bool timestamps, int depth)
{
    /* Keys may carry the namespace or node names too: rebuild when needed. */
    const char *key;
    json_t *val;
    void *tmp;
    json_t *renamed = NULL;
    json_object_foreach_safe(o, tmp, key, val)
    {
        bool oom = false;
        bool ts = timestamps || strcmp(key, "status") == 0;
        int rc = san_value(z, val, ts, depth + 1);
        if (rc != GR_OK) {
            json_decref(renamed);
            return rc;
        }
        char *nk = san_string(z, key, false, &oom);
        if (oom) {
            json_decref(renamed);
            return gr_err_set(z->err, GR_ENOMEM, "out of memory");
        }
        if (nk) {
            if (!renamed && !(renamed = json_object())) {
                free(nk);
                return gr_err_set(z->err, GR_ENOMEM, "out of memory");
            }
            json_object_set(renamed, nk, val);
            json_object_del(o, key);
            free(nk);
        }
    }
    if (renamed) {
        json_object_update(o, renamed);
        json_decref(renamed);
    }
    return GR_OK;
}

static int san_value(const san *z, json_t *v, bool timestamps, int depth)
{
    if (depth > 1000)
        return gr_err_set(z->err, GR_ETOOBIG, "object nested deeper than 1000 levels");
    if (json_is_object(v))
        return san_object(z, v, timestamps, depth);
    if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e)
        {
            int rc = san_value(z, e, timestamps, depth + 1);
            if (rc != GR_OK)
                return rc;
        }
        return GR_OK;
    }
    if (json_is_string(v)) {
        bool oom = false;
        char *n = san_string(z, json_string_value(v), timestamps, &oom);
        if (oom)
            return gr_err_set(z->err, GR_ENOMEM, "out of memory");
        if (n) {
            int rc = json_string_set(v, n);
            free(n);
            if (rc != 0)
                return gr_err_set(z->err, GR_ENOMEM, "out of memory");
        }
    }
    return GR_OK;
}

int gr_cases_sanitize(json_t *obj, const char *ns, const char *node_hash, gr_err *err)
{
    if (!json_is_object(obj))
        return gr_err_set(err, GR_EINVAL, "sanitize: expected an object");
    san z = {ns, "", err};
    if (node_hash && *node_hash)
        snprintf(z.genpfx, sizeof z.genpfx, "gen-%.6s-", node_hash);
    json_t *md = json_object_get(obj, "metadata");
    if (json_is_object(md)) {
        static const char *const DROP[] = {"uid",           "resourceVersion", "creationTimestamp",
                                           "managedFields", "generation",      "selfLink"};
        for (size_t i = 0; i < sizeof DROP / sizeof DROP[0]; i++)
            json_object_del(md, DROP[i]);
        if (json_object_get(md, "deletionTimestamp"))
            json_object_set_new(md, "deletionTimestamp", json_string(GR_CASES_PH_TIME));
        /* Set by kube-controller-manager's TTL controller at its own pace. */
        json_t *ann = json_object_get(md, "annotations");
        json_object_del(ann, "node.alpha.kubernetes.io/ttl");
        if (json_is_object(ann) && json_object_size(ann) == 0)
            json_object_del(md, "annotations");
        json_t *owners = json_object_get(md, "ownerReferences");
        size_t i;
        json_t *o;
        json_array_foreach(owners, i, o)
        {
            if (json_object_get(o, "uid"))
                json_object_set_new(o, "uid", json_string(GR_CASES_PH_UID));
        }
    }
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    if (kind && strcmp(kind, "Node") == 0) {
        /* No kubelet runs: admission and kube-controller-manager's node
         * lifecycle controller add and remove these at their own pace. */
        json_t *spec = json_object_get(obj, "spec");
        json_t *taints = json_object_get(spec, "taints");
        for (size_t i = json_array_size(taints); i-- > 0;) {
            const char *key = json_string_value(json_object_get(json_array_get(taints, i), "key"));
            if (key && (strcmp(key, "node.kubernetes.io/not-ready") == 0 ||
                        strcmp(key, "node.kubernetes.io/unreachable") == 0))
                json_array_remove(taints, i);
        }
        if (json_is_array(taints) && json_array_size(taints) == 0)
            json_object_del(spec, "taints");
    }
    bool is_event = kind && strcmp(kind, "Event") == 0;
    if (is_event && json_is_object(md)) {
        /* Event names end in a random ".<hex>" suffix. */
        const char *name = json_string_value(json_object_get(md, "name"));
        const char *dot = name ? strrchr(name, '.') : NULL;
        if (dot) {
            char buf[512];
            snprintf(buf, sizeof buf, "%.*s.%s", (int)(dot - name), name, GR_CASES_PH_HASH);
            json_object_set_new(md, "name", json_string(buf));
        }
        json_object_del(obj, "count");
        json_object_del(obj, "series");
    }
    /* Timestamps are volatile in status and everywhere in Events. */
    return san_value(&z, obj, is_event, 0);
}

char *gr_cases_obj_key(const json_t *obj)
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *k = json_string_value(json_object_get(obj, "kind"));
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *n = json_string_value(json_object_get(md, "name"));
    gr_buf b;
    gr_buf_init(&b, 4096);
    if (gr_buf_printf(&b, "%s/%s/%s", k ? k : "", ns ? ns : "", n ? n : "") != GR_OK) {
        gr_buf_free(&b);
        return NULL;
    }
    return gr_buf_steal(&b, NULL);
}

/* --------------------------------------------------------------- metrics */

static bool name_char(int c, bool first)
{
    return isalpha(c) || c == '_' || c == ':' || (!first && isdigit(c));
}

typedef struct label {
    char *name;
    char *value;
} label;

static int label_cmp(const void *a, const void *b)
{
    return strcmp(((const label *)a)->name, ((const label *)b)->name);
}

#define MAX_LABELS 64

static void labels_free(label *l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(l[i].name);
        free(l[i].value);
    }
}

/* Parse `{a="x",b="y"}` at *pp; *pp is left after the '}'. */
static int parse_labels(const char **pp, const char *end, label *l, size_t *n, long lineno,
                        gr_err *err)
{
    const char *p = *pp + 1;
    *n = 0;
    for (;;) {
        while (p < end && (*p == ' ' || *p == ','))
            p++;
        if (p < end && *p == '}') {
            *pp = p + 1;
            return GR_OK;
        }
        const char *ns = p;
        while (p < end && name_char((unsigned char)*p, p == ns))
            p++;
        if (p == ns || p + 1 >= end || *p != '=' || p[1] != '"')
            return gr_err_set(err, GR_EPARSE, "metrics line %ld: malformed label", lineno);
        if (*n >= MAX_LABELS)
            return gr_err_set(err, GR_ETOOBIG, "metrics line %ld: more than %d labels", lineno,
                              MAX_LABELS);
        gr_buf v;
        gr_buf_init(&v, 64 * 1024);
        int rc = GR_OK;
        const char *q = p + 2;
        for (; q < end && *q != '"' && rc == GR_OK; q++) {
            if (*q == '\\' && q + 1 < end) {
                q++;
                rc = gr_buf_putc(&v, *q == 'n' ? '\n' : *q);
            } else {
                rc = gr_buf_putc(&v, *q);
            }
        }
        if (rc == GR_OK && q >= end)
            rc = gr_err_set(err, GR_EPARSE, "metrics line %ld: unterminated label value", lineno);
        char *name = rc == GR_OK ? strndup(ns, (size_t)(p - ns)) : NULL;
        char *val = rc == GR_OK ? gr_buf_steal(&v, NULL) : NULL;
        gr_buf_free(&v);
        if (rc == GR_OK && (!name || !val)) {
            free(name);
            free(val);
            rc = gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        if (rc != GR_OK)
            return rc;
        l[*n].name = name;
        l[*n].value = val;
        (*n)++;
        p = q + 1;
    }
}

static int metrics_line(const char *p, const char *end, const gr_cases_metrics *m, const char *ns,
                        long lineno, json_t *out, gr_err *err)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p >= end || *p == '#')
        return GR_OK;
    const char *nstart = p;
    while (p < end && name_char((unsigned char)*p, p == nstart))
        p++;
    if (p == nstart)
        return gr_err_set(err, GR_EPARSE, "metrics line %ld: expected a metric name", lineno);
    size_t nlen = (size_t)(p - nstart);
    bool want = false;
    for (size_t i = 0; i < m->nprefixes && !want; i++) {
        size_t pl = strlen(m->prefixes[i]);
        want = nlen >= pl && memcmp(nstart, m->prefixes[i], pl) == 0;
    }
    label l[MAX_LABELS];
    size_t nl = 0;
    int rc = GR_OK;
    if (p < end && *p == '{')
        rc = parse_labels(&p, end, l, &nl, lineno, err);
    if (rc != GR_OK) {
        labels_free(l, nl);
        return rc;
    }
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    const char *vstart = p;
    while (p < end && *p != ' ' && *p != '\t')
        p++;
    if (p == vstart) {
        labels_free(l, nl);
        return gr_err_set(err, GR_EPARSE, "metrics line %ld: sample has no value", lineno);
    }
    bool keep = want;
    for (size_t i = 0; i < nl && keep; i++) {
        if (strcmp(l[i].name, "namespace") == 0 && ns) {
            if (strcmp(l[i].value, ns) != 0)
                keep = false;
            else {
                free(l[i].value);
                l[i].value = strdup(GR_CASES_PH_NAMESPACE);
                if (!l[i].value)
                    rc = gr_err_set(err, GR_ENOMEM, "out of memory");
            }
        }
    }
    if (keep && rc == GR_OK) {
        qsort(l, nl, sizeof l[0], label_cmp);
        gr_buf k;
        gr_buf_init(&k, 256 * 1024);
        rc = gr_buf_append(&k, nstart, nlen);
        for (size_t i = 0; i < nl && rc == GR_OK; i++)
            rc = gr_buf_printf(&k, "%s%s=\"%s\"", i ? "," : "{", l[i].name, l[i].value);
        if (rc == GR_OK && nl)
            rc = gr_buf_putc(&k, '}');
        if (rc == GR_OK) {
            json_t *val = json_stringn(vstart, (size_t)(p - vstart));
            if (!val || json_object_set_new(out, gr_buf_cstr(&k), val) != 0)
                rc = gr_err_set(err, GR_ENOMEM, "out of memory");
        } else {
            rc = gr_err_set(err, rc, "metrics line %ld: sample too large", lineno);
        }
        gr_buf_free(&k);
    }
    labels_free(l, nl);
    return rc;
}

int gr_cases_metrics_filter(const char *text, size_t len, const gr_cases_metrics *m, const char *ns,
                            json_t **out, gr_err *err)
{
    *out = json_object();
    if (!*out)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    const char *p = text, *end = text + len;
    long lineno = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        lineno++;
        int rc = metrics_line(p, le, m, ns, lineno, *out, err);
        if (rc != GR_OK) {
            json_decref(*out);
            *out = NULL;
            return rc;
        }
        p = nl ? nl + 1 : end;
    }
    return GR_OK;
}
