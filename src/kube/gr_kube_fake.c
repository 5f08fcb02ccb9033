/* gr_kube_fake.c — the in-memory API server (see gr_kube_fake.h). */
#include "gr_kube_fake.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gr_json.h"
#include "gr_yaml.h"
#include "kube_internal.h"

#define MAX_RES      256
#define MAX_RULES    32
#define MAX_SEGS     10
#define GC_MAX_DEPTH 32

typedef struct res {
    char *group, *version, *resource, *kind;
    bool namespaced, has_status, live;
    bool custom; /* registered by the test (a CRD): bodies must name their kind */
} res;

enum { EV_ADDED = 0, EV_MODIFIED, EV_DELETED };

typedef struct hist {
    uint64_t rv;
    res *r;
    char *ns; /* "" for cluster scope */
    int type;
    json_t *obj; /* new state (DELETED: the last state) */
    json_t *old; /* MODIFIED: the previous state */
} hist;

typedef struct rule {
    char method[8]; /* "" = any */
    char resource[128];
    char sub[32];
    bool any_sub;
    int left;
    int code;
    char reason[64];
    char message[512];
} rule;

struct gr_kube_fake {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    res res[MAX_RES];
    size_t nres;
    gr_kube_map objs; /* "group/resource|ns|name" → json_t* */
    uint64_t rv;
    hist *ring;
    size_t head, nring;
    uint64_t compacted_rv; /* watches from below this get 410 */
    rule rules[MAX_RULES];
    size_t nrules;
    gr_kube_map counts; /* "METHOD|resource" → (uintptr_t) count */
    uint64_t close_gen;
    int64_t bookmark_ns;
    size_t nwatch;
    bool closing;
    unsigned seed;
};

/* ---- small helpers ------------------------------------------------------ */

static int64_t mono_ns(void)
{
    return gr_kube_mono_ns();
}

static void hist_clear(hist *h)
{
    free(h->ns);
    json_decref(h->obj);
    json_decref(h->old);
    memset(h, 0, sizeof *h);
}

static res *find_res(gr_kube_fake *f, const char *group, const char *version, const char *resource)
{
    for (size_t i = 0; i < f->nres; i++) {
        res *r = &f->res[i];
        if (r->live && strcmp(r->group, group) == 0 && strcmp(r->resource, resource) == 0 &&
            (!version || strcmp(r->version, version) == 0))
            return r;
    }
    return NULL;
}

static res *find_kind(gr_kube_fake *f, const char *api_version, const char *kind)
{
    char group[128] = "";
    const char *version = api_version;
    const char *slash = strchr(api_version, '/');
    if (slash) {
        size_t n = (size_t)(slash - api_version);
        if (n >= sizeof group)
            return NULL;
        memcpy(group, api_version, n);
        group[n] = '\0';
        version = slash + 1;
    }
    for (size_t i = 0; i < f->nres; i++) {
        res *r = &f->res[i];
        if (r->live && strcmp(r->group, group) == 0 && strcmp(r->version, version) == 0 &&
            strcmp(r->kind, kind) == 0)
            return r;
    }
    return NULL;
}

static void api_version_of(const res *r, char *out, size_t n)
{
    if (*r->group)
        snprintf(out, n, "%s/%s", r->group, r->version);
    else
        snprintf(out, n, "%s", r->version);
}

static int obj_key(const res *r, const char *ns, const char *name, gr_buf *k)
{
    gr_buf_reset(k);
    return gr_buf_printf(k, "%s/%s|%s|%s", r->group, r->resource, ns ? ns : "", name);
}

static const char *meta(const json_t *o, const char *f)
{
    return gr_kube_meta_str(o, f);
}

static json_t *meta_obj(json_t *o)
{
    json_t *m = gr_json_object_child(o, "metadata");
    return m;
}

static void set_rv(json_t *o, uint64_t rv)
{
    char b[32];
    snprintf(b, sizeof b, "%llu", (unsigned long long)rv);
    json_object_set_new(meta_obj(o), "resourceVersion", json_string(b));
}

static void now_str(char out[32])
{
    gr_kube_fmt_time(gr_kube_real_ns(), false, out);
}

static void new_uid(gr_kube_fake *f, char out[40])
{
    unsigned a = (unsigned)rand_r(&f->seed), b = (unsigned)rand_r(&f->seed);
    unsigned c = (unsigned)rand_r(&f->seed), d = (unsigned)rand_r(&f->seed);
    snprintf(out, 40, "%08x-%04x-4%03x-%04x-%04x%08x", a, b & 0xffff, c & 0xfff,
             0x8000 | (d & 0x3fff), (d >> 16) & 0xffff, a ^ c);
}

/* Record a change in the ring (takes references to obj/old as copies). */
static void history_add(gr_kube_fake *f, res *r, const char *ns, int type, const json_t *obj,
                        const json_t *old)
{
    size_t idx;
    if (f->nring < GR_KUBE_FAKE_HISTORY) {
        idx = (f->head + f->nring) % GR_KUBE_FAKE_HISTORY;
        f->nring++;
    } else {
        idx = f->head;
        f->compacted_rv = f->ring[idx].rv;
        hist_clear(&f->ring[idx]);
        f->head = (f->head + 1) % GR_KUBE_FAKE_HISTORY;
    }
    hist *h = &f->ring[idx];
    h->rv = f->rv;
    h->r = r;
    h->ns = strdup(ns ? ns : "");
    h->type = type;
    h->obj = json_deep_copy(obj);
    h->old = old ? json_deep_copy(old) : NULL;
    pthread_cond_broadcast(&f->cv);
}

/* Store `o` (ownership taken) at its key; bumps the resourceVersion. */
static int store_put(gr_kube_fake *f, res *r, const char *ns, json_t *o)
{
    gr_buf k = GR_BUF_INIT(4096);
    if (obj_key(r, ns, meta(o, "name"), &k) != GR_OK) {
        json_decref(o);
        gr_buf_free(&k);
        return GR_ETOOBIG;
    }
    if (f->objs.n >= GR_KUBE_FAKE_MAX_OBJECTS && !gr_kube_map_has(&f->objs, gr_buf_cstr(&k))) {
        json_decref(o);
        gr_buf_free(&k);
        return GR_ETOOBIG;
    }
    f->rv++;
    set_rv(o, f->rv);
    void *old = NULL;
    if (gr_kube_map_put(&f->objs, gr_buf_cstr(&k), o, &old) != GR_OK) {
        json_decref(o);
        gr_buf_free(&k);
        return GR_ENOMEM;
    }
    history_add(f, r, ns, old ? EV_MODIFIED : EV_ADDED, o, old);
    json_decref(old);
    gr_buf_free(&k);
    return GR_OK;
}

static void gc_dependents(gr_kube_fake *f, const char *uid, int depth);

/* Remove the object at key for good (DELETED), then collect dependents. */
static void store_remove(gr_kube_fake *f, res *r, const char *ns, const char *key, bool orphan,
                         int depth)
{
    void *old = NULL;
    if (!gr_kube_map_del(&f->objs, key, &old))
        return;
    json_t *o = old;
    f->rv++;
    set_rv(o, f->rv);
    history_add(f, r, ns, EV_DELETED, o, NULL);
    char uid[128] = "";
    if (meta(o, "uid"))
        snprintf(uid, sizeof uid, "%s", meta(o, "uid"));
    json_decref(o);
    if (!orphan && *uid)
        gc_dependents(f, uid, depth + 1);
}

static bool finalizers_empty(const json_t *o)
{
    json_t *fz = json_object_get(json_object_get(o, "metadata"), "finalizers");
    return !json_is_array(fz) || json_array_size(fz) == 0;
}

/* Delete (respecting finalizers). Returns the object's state after the
 * call (new reference) via *out when asked. */
static void delete_obj(gr_kube_fake *f, res *r, const char *ns, const char *key, bool orphan,
                       int depth, json_t **out)
{
    json_t *cur = gr_kube_map_get(&f->objs, key);
    if (!cur)
        return;
    if (!finalizers_empty(cur)) {
        json_t *n = json_deep_copy(cur);
        if (!n)
            return;
        if (!meta(n, "deletionTimestamp")) {
            char ts[32];
            now_str(ts);
            json_object_set_new(meta_obj(n), "deletionTimestamp", json_string(ts));
            json_object_set_new(meta_obj(n), "deletionGracePeriodSeconds", json_integer(0));
            if (store_put(f, r, ns, n) != GR_OK)
                return;
        } else {
            json_decref(n);
        }
        if (out)
            *out = json_deep_copy(gr_kube_map_get(&f->objs, key));
        return;
    }
    if (out)
        *out = json_deep_copy(cur);
    store_remove(f, r, ns, key, orphan, depth);
}

static bool owned_by(const json_t *o, const char *uid)
{
    json_t *refs = json_object_get(json_object_get(o, "metadata"), "ownerReferences");
    size_t i;
    json_t *ref;
    json_array_foreach(refs, i, ref)
    {
        const char *u = json_string_value(json_object_get(ref, "uid"));
        if (u && strcmp(u, uid) == 0)
            return true;
    }
    return false;
}

static res *res_of_key(gr_kube_fake *f, const char *key, char *ns, size_t nsz)
{
    /* "group/resource|ns|name" */
    const char *bar = strchr(key, '|');
    const char *slash = strchr(key, '/');
    if (!bar || !slash || slash > bar)
        return NULL;
    char group[128], resource[128];
    size_t gl = (size_t)(slash - key), rl = (size_t)(bar - slash - 1);
    if (gl >= sizeof group || rl >= sizeof resource)
        return NULL;
    memcpy(group, key, gl);
    group[gl] = '\0';
    memcpy(resource, slash + 1, rl);
    resource[rl] = '\0';
    const char *bar2 = strchr(bar + 1, '|');
    if (!bar2 || (size_t)(bar2 - bar - 1) >= nsz)
        return NULL;
    memcpy(ns, bar + 1, (size_t)(bar2 - bar - 1));
    ns[bar2 - bar - 1] = '\0';
    return find_res(f, group, NULL, resource);
}

static void gc_dependents(gr_kube_fake *f, const char *uid, int depth)
{
    if (depth > GC_MAX_DEPTH)
        return;
    json_t *keys = json_array();
    size_t b = 0;
    gr_kube_map_node *n = NULL;
    while ((n = gr_kube_map_next(&f->objs, &b, &n)))
        if (owned_by(n->val, uid))
            json_array_append_new(keys, json_string(n->key));
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        char ns[256];
        res *r = res_of_key(f, json_string_value(k), ns, sizeof ns);
        if (r)
            delete_obj(f, r, *ns ? ns : NULL, json_string_value(k), false, depth, NULL);
    }
    json_decref(keys);
}

/* ---- label and field selectors (pure) ----------------------------------- */

static void trim(const char **s, const char **e)
{
    while (*s < *e && (**s == ' ' || **s == '\t'))
        (*s)++;
    while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
        (*e)--;
}

static bool label_eq(const json_t *labels, const char *k, size_t kl, const char *v, size_t vl,
                     bool *has)
{
    char key[320];
    if (kl >= sizeof key) {
        *has = false;
        return false;
    }
    memcpy(key, k, kl);
    key[kl] = '\0';
    const char *val = json_string_value(json_object_get(labels, key));
    *has = val != NULL;
    return val && strlen(val) == vl && memcmp(val, v, vl) == 0;
}

static int one_req(const char *s, const char *e, const json_t *labels, bool *ok, gr_err *err)
{
    trim(&s, &e);
    if (s == e)
        return gr_err_set(err, GR_EINVAL, "labelSelector: empty requirement");
    bool has;
    if (*s == '!') {
        s++;
        trim(&s, &e);
        label_eq(labels, s, (size_t)(e - s), "", 0, &has);
        *ok = !has;
        return GR_OK;
    }
    /* set-based: key in (a,b) / key notin (a,b) */
    const char *sp = s;
    while (sp < e && *sp != ' ' && *sp != '=' && *sp != '!')
        sp++;
    const char *kend = sp;
    for (const char *k = s; k < kend; k++)
        if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') ||
              *k == '.' || *k == '-' || *k == '_' || *k == '/'))
            return gr_err_set(err, GR_EINVAL,
                              "labelSelector: invalid character '%c' in \"%.*s\" (use =, ==, "
                              "!=, in, notin, key or !key)",
                              *k, (int)(e - s), s);
    const char *rest = sp;
    while (rest < e && *rest == ' ')
        rest++;
    bool notin = (size_t)(e - rest) >= 5 && strncmp(rest, "notin", 5) == 0 &&
                 (rest[5] == ' ' || rest[5] == '(');
    bool in = !notin && (size_t)(e - rest) >= 2 && strncmp(rest, "in", 2) == 0 &&
              (rest[2] == ' ' || rest[2] == '(');
    if (in || notin) {
        const char *p = rest + (in ? 2 : 5);
        while (p < e && *p == ' ')
            p++;
        if (p >= e || *p != '(' || e[-1] != ')')
            return gr_err_set(err, GR_EINVAL,
                              "labelSelector: expected \"key %s (v1,v2)\" in \"%.*s\"",
                              in ? "in" : "notin", (int)(e - s), s);
        p++;
        const char *end = e - 1;
        bool any = false;
        label_eq(labels, s, (size_t)(kend - s), "", 0, &has);
        while (p <= end) {
            const char *c = memchr(p, ',', (size_t)(end - p));
            const char *ve = c ? c : end;
            const char *vs = p;
            trim(&vs, &ve);
            if (label_eq(labels, s, (size_t)(kend - s), vs, (size_t)(ve - vs), &has))
                any = true;
            if (!c)
                break;
            p = c + 1;
        }
        *ok = in ? any : !any;
        return GR_OK;
    }
    if (rest == e) { /* exists */
        label_eq(labels, s, (size_t)(kend - s), "", 0, &has);
        *ok = has;
        return GR_OK;
    }
    bool neg = false;
    if (rest + 1 < e && rest[0] == '!' && rest[1] == '=') {
        neg = true;
        rest += 2;
    } else if (rest + 1 < e && rest[0] == '=' && rest[1] == '=') {
        rest += 2;
    } else if (rest[0] == '=') {
        rest += 1;
    } else {
        return gr_err_set(err, GR_EINVAL,
                          "labelSelector: unknown operator in \"%.*s\" (use =, ==, !=, in, "
                          "notin, key or !key)",
                          (int)(e - s), s);
    }
    const char *vs = rest, *ve = e;
    trim(&vs, &ve);
    bool eq = label_eq(labels, s, (size_t)(kend - s), vs, (size_t)(ve - vs), &has);
    *ok = neg ? !eq : eq;
    return GR_OK;
}

int gr_kube_fake_selector_match(const char *selector, const json_t *labels, bool *match,
                                gr_err *err)
{
    *match = true;
    if (!selector)
        return GR_OK;
    const char *p = selector;
    const char *end = p + strlen(p);
    const char *s = p;
    while (s < end && (*s == ' '))
        s++;
    if (s == end)
        return GR_OK;
    int depth = 0;
    const char *start = p;
    for (const char *q = p;; q++) {
        if (q < end && *q == '(')
            depth++;
        else if (q < end && *q == ')')
            depth--;
        if (q == end || (*q == ',' && depth == 0)) {
            bool ok = true;
            int rc = one_req(start, q, labels, &ok, err);
            if (rc != GR_OK)
                return rc;
            if (!ok)
                *match = false;
            start = q + 1;
            if (q == end)
                break;
        }
    }
    return GR_OK;
}

static int field_match(const char *sel, const json_t *o, bool *match, gr_err *err)
{
    *match = true;
    if (!sel || !*sel)
        return GR_OK;
    char *dup = strdup(sel);
    if (!dup)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    int rc = GR_OK;
    char *save = NULL;
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *op = strstr(t, "!=");
        bool neg = op != NULL;
        size_t oplen = 2;
        if (!op) {
            op = strstr(t, "==");
            if (!op) {
                op = strchr(t, '=');
                oplen = 1;
            }
        }
        if (!op) {
            rc = gr_err_set(err, GR_EINVAL, "fieldSelector: \"%s\" has no operator", t);
            break;
        }
        *op = '\0';
        const char *val = op + oplen;
        const char *got;
        if (strcmp(t, "metadata.name") == 0)
            got = meta(o, "name");
        else if (strcmp(t, "metadata.namespace") == 0)
            got = meta(o, "namespace");
        else {
            rc = gr_err_set(err, GR_EINVAL,
                            "fieldSelector: field label not supported: %s (the fake knows "
                            "metadata.name and metadata.namespace)",
                            t);
            break;
        }
        bool eq = strcmp(got ? got : "", val) == 0;
        if (neg ? eq : !eq)
            *match = false;
    }
    free(dup);
    return rc;
}

/* ---- request parsing ---------------------------------------------------- */

typedef struct query {
    char *label_selector, *field_selector, *resource_version;
    bool watch, bookmarks, dry_run;
    bool send_initial; /* sendInitialEvents=true: a streaming list */
    long timeout_s;
} query;

typedef struct target {
    char *segs[MAX_SEGS];
    size_t nseg;
    bool core;
    const char *group, *version;
    const char *ns, *resource, *name, *sub;
    res *r;
} target;

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static char *unescape(const char *s, size_t n, bool plus)
{
    char *o = malloc(n + 1);
    if (!o)
        return NULL;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            o[j++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else if (plus && s[i] == '+') {
            o[j++] = ' ';
        } else {
            o[j++] = s[i];
        }
    }
    o[j] = '\0';
    return o;
}

static void query_free(query *q)
{
    free(q->label_selector);
    free(q->field_selector);
    free(q->resource_version);
}

static void parse_query(const char *qs, query *q)
{
    memset(q, 0, sizeof *q);
    while (qs && *qs) {
        const char *amp = strchr(qs, '&');
        size_t n = amp ? (size_t)(amp - qs) : strlen(qs);
        const char *eq = memchr(qs, '=', n);
        size_t kl = eq ? (size_t)(eq - qs) : n;
        char *v = eq ? unescape(eq + 1, n - kl - 1, true) : strdup("");
#define KEY(s) (kl == strlen(s) && strncmp(qs, s, kl) == 0)
        if (v) {
            if (KEY("labelSelector") && !q->label_selector) {
                q->label_selector = v;
                v = NULL;
            } else if (KEY("fieldSelector") && !q->field_selector) {
                q->field_selector = v;
                v = NULL;
            } else if (KEY("resourceVersion") && !q->resource_version) {
                q->resource_version = v;
                v = NULL;
            } else if (KEY("watch")) {
                q->watch = strcmp(v, "1") == 0 || strcmp(v, "true") == 0;
            } else if (KEY("allowWatchBookmarks")) {
                q->bookmarks = strcmp(v, "true") == 0 || strcmp(v, "1") == 0;
            } else if (KEY("sendInitialEvents")) {
                q->send_initial = strcmp(v, "true") == 0 || strcmp(v, "1") == 0;
            } else if (KEY("dryRun")) {
                q->dry_run = *v != '\0';
            } else if (KEY("timeoutSeconds")) {
                q->timeout_s = strtol(v, NULL, 10);
            }
        }
#undef KEY
        free(v);
        qs = amp ? amp + 1 : NULL;
    }
}

static void target_free(target *t)
{
    for (size_t i = 0; i < t->nseg; i++)
        free(t->segs[i]);
    memset(t, 0, sizeof *t);
}

/* Split the path part; GR_EINVAL for too many segments. */
static int split_path(const char *path, size_t plen, target *t)
{
    memset(t, 0, sizeof *t);
    size_t i = 0;
    while (i < plen) {
        while (i < plen && path[i] == '/')
            i++;
        if (i >= plen)
            break;
        size_t j = i;
        while (j < plen && path[j] != '/')
            j++;
        if (t->nseg >= MAX_SEGS)
            return GR_EINVAL;
        t->segs[t->nseg] = unescape(path + i, j - i, false);
        if (!t->segs[t->nseg])
            return GR_ENOMEM;
        t->nseg++;
        i = j;
    }
    return GR_OK;
}

/* Resolve segments into group/version/ns/resource/name/sub. Returns false
 * when the path is not a resource path. */
static bool resolve(gr_kube_fake *f, target *t)
{
    size_t i;
    if (t->nseg >= 2 && strcmp(t->segs[0], "api") == 0) {
        t->core = true;
        t->group = "";
        t->version = t->segs[1];
        i = 2;
    } else if (t->nseg >= 3 && strcmp(t->segs[0], "apis") == 0) {
        t->group = t->segs[1];
        t->version = t->segs[2];
        i = 3;
    } else {
        return false;
    }
    size_t rest = t->nseg - i;
    if (rest == 0)
        return false;
    if (strcmp(t->segs[i], "namespaces") == 0 && rest >= 3) {
        res *r = find_res(f, t->group, t->version, t->segs[i + 2]);
        if (r && r->namespaced) {
            t->ns = t->segs[i + 1];
            i += 2;
            rest -= 2;
        }
    }
    t->resource = t->segs[i];
    if (rest >= 2)
        t->name = t->segs[i + 1];
    if (rest >= 3)
        t->sub = t->segs[i + 2];
    if (rest > 3)
        return false;
    t->r = find_res(f, t->group, t->version, t->resource);
    return true;
}

/* ---- responses ---------------------------------------------------------- */

static int put_json(gr_buf *resp, long *http, long code, json_t *v /* stolen */)
{
    *http = code;
    gr_buf_reset(resp);
    int rc = v ? gr_json_dump_buf(v, JSON_COMPACT, resp) : GR_ENOMEM;
    json_decref(v);
    return rc;
}

__attribute__((format(printf, 7, 8))) static int status_resp(gr_buf *resp, long *http, long code,
                                                             const char *reason, const char *kind,
                                                             const char *name, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:I}", "kind", "Status", "apiVersion", "v1",
                           "metadata", "status", "Failure", "message", msg, "reason", reason,
                           "code", (json_int_t)code);
    if (st && (kind || name)) {
        json_t *d = json_object();
        if (name)
            json_object_set_new(d, "name", json_string(name));
        if (kind)
            json_object_set_new(d, "kind", json_string(kind));
        json_object_set_new(st, "details", d);
    }
    return put_json(resp, http, code, st);
}

/* The API server's plain-text answer for a path no API group serves. */
static int page_not_found(gr_buf *resp, long *http)
{
    *http = 404;
    gr_buf_reset(resp);
    return gr_buf_puts(resp, "404 page not found\n");
}

static bool group_served(gr_kube_fake *f, const char *group, const char *version)
{
    for (size_t i = 0; i < f->nres; i++)
        if (f->res[i].live && strcmp(f->res[i].group, group) == 0 &&
            strcmp(f->res[i].version, version) == 0)
            return true;
    return false;
}

static int not_found(gr_buf *resp, long *http, const target *t)
{
    if (!t->r || !t->name)
        return status_resp(resp, http, 404, "NotFound", NULL, NULL,
                           "the server could not find the requested resource");
    return status_resp(resp, http, 404, "NotFound", t->resource, t->name, "%s%s%s \"%s\" not found",
                       t->resource, *t->group ? "." : "", t->group, t->name);
}

static int conflict(gr_buf *resp, long *http, const target *t, const char *name)
{
    return status_resp(resp, http, 409, "Conflict", t->resource, name,
                       "Operation cannot be fulfilled on %s%s%s \"%s\": the object has been "
                       "modified; please apply your changes to the latest version and try again",
                       t->resource, *t->group ? "." : "", t->group, name);
}

/* ---- discovery ---------------------------------------------------------- */

static json_t *resource_list(gr_kube_fake *f, const char *group, const char *version)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < f->nres; i++) {
        res *r = &f->res[i];
        if (!r->live || strcmp(r->group, group) != 0 || strcmp(r->version, version) != 0)
            continue;
        json_array_append_new(arr, json_pack("{s:s,s:s,s:b,s:s,s:[s,s,s,s,s,s,s]}", "name",
                                             r->resource, "singularName", "", "namespaced",
                                             r->namespaced, "kind", r->kind, "verbs", "create",
                                             "delete", "get", "list", "patch", "update", "watch"));
        if (r->has_status) {
            char sub[300];
            snprintf(sub, sizeof sub, "%s/status", r->resource);
            json_array_append_new(arr,
                                  json_pack("{s:s,s:s,s:b,s:s,s:[s,s,s]}", "name", sub,
                                            "singularName", "", "namespaced", r->namespaced, "kind",
                                            r->kind, "verbs", "get", "patch", "update"));
        }
    }
    if (json_array_size(arr) == 0) {
        json_decref(arr);
        return NULL;
    }
    char gv[300];
    if (*group)
        snprintf(gv, sizeof gv, "%s/%s", group, version);
    else
        snprintf(gv, sizeof gv, "%s", version);
    return json_pack("{s:s,s:s,s:s,s:o}", "kind", "APIResourceList", "apiVersion", "v1",
                     "groupVersion", gv, "resources", arr);
}

static json_t *group_list(gr_kube_fake *f)
{
    json_t *groups = json_array();
    for (size_t i = 0; i < f->nres; i++) {
        res *r = &f->res[i];
        if (!r->live || !*r->group)
            continue;
        json_t *g = NULL;
        size_t j;
        json_t *e;
        json_array_foreach(groups, j, e) if (strcmp(json_string_value(json_object_get(e, "name")),
                                                    r->group) == 0) g = e;
        char gv[300];
        snprintf(gv, sizeof gv, "%s/%s", r->group, r->version);
        json_t *ver = json_pack("{s:s,s:s}", "groupVersion", gv, "version", r->version);
        if (!g) {
            g = json_pack("{s:s,s:[],s:O}", "name", r->group, "versions", "preferredVersion", ver);
            json_array_append_new(groups, g);
        }
        json_t *vs = json_object_get(g, "versions");
        bool have = false;
        json_array_foreach(vs, j, e) if (gr_json_equal(e, ver)) have = true;
        if (!have)
            json_array_append(vs, ver);
        json_decref(ver);
    }
    return json_pack("{s:s,s:s,s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups", groups);
}

/* ---- verbs -------------------------------------------------------------- */

static bool count_match(const char *key, const char *method, const char *resource)
{
    const char *bar = strchr(key, '|');
    if (!bar)
        return false;
    size_t ml = (size_t)(bar - key);
    if (method) {
        if (strcmp(method, "WRITE") == 0) {
            if (!((ml == 4 && (!strncmp(key, "POST", 4))) || (ml == 3 && !strncmp(key, "PUT", 3)) ||
                  (ml == 5 && !strncmp(key, "PATCH", 5)) ||
                  (ml == 6 && !strncmp(key, "DELETE", 6))))
                return false;
        } else if (strlen(method) != ml || strncmp(key, method, ml) != 0) {
            return false;
        }
    }
    return !resource || strcmp(bar + 1, resource) == 0;
}

static void count(gr_kube_fake *f, const char *method, const char *resource)
{
    char k[200];
    snprintf(k, sizeof k, "%s|%s", method, resource ? resource : "");
    uintptr_t n = (uintptr_t)gr_kube_map_get(&f->counts, k);
    if (n == 0 && f->counts.n >= 4096)
        return; /* bounded: paths of unknown resources are not all remembered */
    gr_kube_map_put(&f->counts, k, (void *)(n + 1), NULL);
}

static bool is_write(const char *m)
{
    return !strcmp(m, "POST") || !strcmp(m, "PUT") || !strcmp(m, "PATCH") || !strcmp(m, "DELETE");
}

static rule *injected(gr_kube_fake *f, const char *verb, const target *t)
{
    for (size_t i = 0; i < f->nrules; i++) {
        rule *r = &f->rules[i];
        if (r->left <= 0)
            continue;
        if (*r->method &&
            !(strcmp(r->method, verb) == 0 || (strcmp(r->method, "WRITE") == 0 && is_write(verb))))
            continue;
        if (*r->resource && (!t->resource || strcmp(r->resource, t->resource) != 0))
            continue;
        if (!r->any_sub && strcmp(r->sub, t->sub ? t->sub : "") != 0)
            continue;
        r->left--;
        return r;
    }
    return NULL;
}

static json_t *strip_for_status(json_t *stored, const json_t *body)
{
    json_t *n = json_deep_copy(stored);
    if (!n)
        return NULL;
    json_t *st = json_object_get(body, "status");
    if (st)
        json_object_set(n, "status", st);
    else
        json_object_del(n, "status");
    return n;
}

/* Carry server-owned fields from cur into n; bump generation on spec change. */
static void carry_meta(json_t *n, const json_t *cur, bool status_only, const res *r)
{
    json_t *nm = meta_obj(n);
    json_t *cm = json_object_get(cur, "metadata");
    static const char *keep[] = {
        "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "namespace",
        "name"};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        json_t *v = json_object_get(cm, keep[i]);
        if (v)
            json_object_set(nm, keep[i], v);
        else
            json_object_del(nm, keep[i]);
    }
    json_int_t gen = json_integer_value(json_object_get(cm, "generation"));
    if (gen <= 0)
        gen = 1;
    if (!status_only && !gr_json_equal(json_object_get(n, "spec"), json_object_get(cur, "spec")))
        gen++;
    json_object_set_new(nm, "generation", json_integer(gen));
    if (!status_only && r->has_status) {
        json_t *st = json_object_get(cur, "status");
        if (st)
            json_object_set(n, "status", st);
        else
            json_object_del(n, "status");
    }
}

static bool finalizer_added(const json_t *n, const json_t *cur)
{
    json_t *nf = json_object_get(json_object_get(n, "metadata"), "finalizers");
    json_t *cf = json_object_get(json_object_get(cur, "metadata"), "finalizers");
    size_t i;
    json_t *v;
    json_array_foreach(nf, i, v)
    {
        bool found = false;
        size_t j;
        json_t *w;
        json_array_foreach(cf, j, w) if (json_equal(v, w)) found = true;
        if (!found)
            return true;
    }
    return false;
}

/* Write n (owned) over cur after the checks PUT and PATCH share. */
static int commit_update(gr_kube_fake *f, const target *t, const char *key, json_t *cur, json_t *n,
                         bool dry_run, gr_buf *resp, long *http)
{
    const char *name = t->name;
    bool status_only = t->sub && strcmp(t->sub, "status") == 0;
    carry_meta(n, cur, status_only, t->r);
    if (meta(cur, "deletionTimestamp") && finalizer_added(n, cur)) {
        json_decref(n);
        return status_resp(resp, http, 422, "Invalid", t->r->kind, name,
                           "%s \"%s\" is invalid: metadata.finalizers: Forbidden: no new "
                           "finalizers can be added if the object is being deleted",
                           t->r->kind, name);
    }
    char av[300];
    api_version_of(t->r, av, sizeof av);
    json_object_set_new(n, "apiVersion", json_string(av));
    json_object_set_new(n, "kind", json_string(t->r->kind));
    if (dry_run)
        return put_json(resp, http, 200, n);
    /* no-op writes do not bump the resourceVersion (as the API server) */
    json_t *cmp = json_deep_copy(n);
    json_object_set(meta_obj(cmp), "resourceVersion",
                    json_object_get(json_object_get(cur, "metadata"), "resourceVersion")
                        ? json_object_get(json_object_get(cur, "metadata"), "resourceVersion")
                        : json_null());
    bool same = gr_json_equal(cmp, cur);
    json_decref(cmp);
    if (same) {
        json_decref(n);
        return put_json(resp, http, 200, json_deep_copy(cur));
    }
    const char *ns = t->ns;
    if (meta(cur, "deletionTimestamp") && finalizers_empty(n)) {
        json_t *out = json_deep_copy(n);
        json_decref(n);
        store_remove(f, t->r, ns, key, false, 0);
        return put_json(resp, http, 200, out);
    }
    int rc = store_put(f, t->r, ns, n);
    if (rc != GR_OK)
        return status_resp(resp, http, 500, "InternalError", NULL, NULL, "store: %s",
                           gr_rc_name(rc));
    return put_json(resp, http, 200, json_deep_copy(gr_kube_map_get(&f->objs, key)));
}

typedef struct list_item {
    const char *key;
    json_t *obj;
} list_item;

static int item_cmp(const void *a, const void *b)
{
    return strcmp(((const list_item *)a)->key, ((const list_item *)b)->key);
}

/* Copies of the objects of r in ns (NULL = all) matching the selectors. */
static int collect(gr_kube_fake *f, const res *r, const char *ns, const char *ls, const char *fs,
                   json_t **out, gr_err *err)
{
    char prefix[400];
    int pl = snprintf(prefix, sizeof prefix, "%s/%s|", r->group, r->resource);
    size_t cap = f->objs.n ? f->objs.n : 1;
    list_item *items = calloc(cap, sizeof *items);
    if (!items)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    size_t n = 0, b = 0;
    gr_kube_map_node *node = NULL;
    int rc = GR_OK;
    while ((node = gr_kube_map_next(&f->objs, &b, &node))) {
        if (strncmp(node->key, prefix, (size_t)pl) != 0)
            continue;
        const json_t *o = node->val;
        if (ns && strcmp(meta(o, "namespace") ? meta(o, "namespace") : "", ns) != 0)
            continue;
        bool m1 = true, m2 = true;
        rc = gr_kube_fake_selector_match(
            ls, json_object_get(json_object_get(o, "metadata"), "labels"), &m1, err);
        if (rc == GR_OK)
            rc = field_match(fs, o, &m2, err);
        if (rc != GR_OK)
            break;
        if (m1 && m2)
            items[n++] = (list_item){node->key, node->val};
    }
    if (rc != GR_OK) {
        free(items);
        return rc;
    }
    qsort(items, n, sizeof *items, item_cmp);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, json_deep_copy(items[i].obj));
    free(items);
    *out = arr;
    return GR_OK;
}

static int do_create(gr_kube_fake *f, const target *t, const query *q, json_t *body, gr_buf *resp,
                     long *http)
{
    if (t->name)
        return status_resp(resp, http, 405, "MethodNotAllowed", NULL, NULL,
                           "the server does not allow this method on the requested resource");
    json_t *m = meta_obj(body);
    const char *name = meta(body, "name");
    char gen[300];
    if (!name || !*name) {
        const char *gn = meta(body, "generateName");
        if (!gn || !*gn)
            return status_resp(resp, http, 422, "Invalid", t->r->kind, NULL,
                               "%s \"\" is invalid: metadata.name: Required value: name or "
                               "generateName is required",
                               t->r->kind);
        static const char alnum[] = "bcdfghjklmnpqrstvwxz2456789";
        char sfx[6];
        for (int i = 0; i < 5; i++)
            sfx[i] = alnum[(unsigned)rand_r(&f->seed) % (sizeof alnum - 1)];
        sfx[5] = '\0';
        snprintf(gen, sizeof gen, "%.*s%s", 58, gn, sfx);
        json_object_set_new(m, "name", json_string(gen));
        name = gen;
    }
    if (t->ns)
        json_object_set_new(m, "namespace", json_string(t->ns));
    else if (!t->r->namespaced)
        json_object_del(m, "namespace");
    gr_buf k = GR_BUF_INIT(4096);
    obj_key(t->r, t->ns, name, &k);
    if (gr_kube_map_has(&f->objs, gr_buf_cstr(&k))) {
        gr_buf_free(&k);
        return status_resp(resp, http, 409, "AlreadyExists", t->resource, name,
                           "%s%s%s \"%s\" already exists", t->resource, *t->group ? "." : "",
                           t->group, name);
    }
    char uid[40], ts[32], av[300];
    new_uid(f, uid);
    now_str(ts);
    json_object_set_new(m, "uid", json_string(uid));
    json_object_set_new(m, "creationTimestamp", json_string(ts));
    json_object_set_new(m, "generation", json_integer(1));
    json_object_del(m, "deletionTimestamp");
    json_object_del(m, "resourceVersion");
    api_version_of(t->r, av, sizeof av);
    json_object_set_new(body, "apiVersion", json_string(av));
    json_object_set_new(body, "kind", json_string(t->r->kind));
    if (t->r->has_status)
        json_object_del(body, "status");
    if (q->dry_run) {
        gr_buf_free(&k);
        return put_json(resp, http, 201, json_incref(body));
    }
    int rc = store_put(f, t->r, t->ns, json_incref(body));
    int out = rc == GR_OK ? put_json(resp, http, 201,
                                     json_deep_copy(gr_kube_map_get(&f->objs, gr_buf_cstr(&k))))
                          : status_resp(resp, http, 500, "InternalError", NULL, NULL, "store: %s",
                                        gr_rc_name(rc));
    gr_buf_free(&k);
    return out;
}

static int serve(gr_kube_fake *f, const char *method, const char *path, const char *ctype,
                 const char *body, size_t blen, gr_buf *resp, long *http, gr_err *err)
{
    (void)err;
    const char *qm = strchr(path, '?');
    size_t plen = qm ? (size_t)(qm - path) : strlen(path);
    query q;
    parse_query(qm ? qm + 1 : NULL, &q);
    target t;
    int rc = split_path(path, plen, &t);
    if (rc != GR_OK) {
        target_free(&t);
        query_free(&q);
        return status_resp(resp, http, 404, "NotFound", NULL, NULL,
                           "the server could not find the requested resource");
    }
    /* discovery */
    if (strcmp(method, "GET") == 0) {
        json_t *doc = NULL;
        bool disc = true;
        if (t.nseg == 1 && strcmp(t.segs[0], "api") == 0)
            doc = json_pack("{s:s,s:[s],s:[]}", "kind", "APIVersions", "versions", "v1",
                            "serverAddressByClientCIDRs");
        else if (t.nseg == 2 && strcmp(t.segs[0], "api") == 0)
            doc = resource_list(f, "", t.segs[1]);
        else if (t.nseg == 1 && strcmp(t.segs[0], "apis") == 0)
            doc = group_list(f);
        else if (t.nseg == 3 && strcmp(t.segs[0], "apis") == 0)
            doc = resource_list(f, t.segs[1], t.segs[2]);
        else
            disc = false;
        if (disc) {
            count(f, "GET", "");
            target_free(&t);
            query_free(&q);
            if (!doc)
                return page_not_found(resp, http);
            return put_json(resp, http, 200, doc);
        }
    }
    if (!resolve(f, &t) || !t.r) {
        count(f, method, t.resource);
        if (t.group && t.version && !group_served(f, t.group, t.version))
            rc = page_not_found(resp, http); /* no such API group/version at all */
        else
            rc = not_found(resp, http, &t);
        goto out;
    }
    if (t.sub && strcmp(t.sub, "status") != 0) {
        rc = status_resp(resp, http, 404, "NotFound", NULL, NULL,
                         "the server could not find the requested resource");
        goto out;
    }
    if (t.sub && !t.r->has_status) {
        rc = not_found(resp, http, &t);
        goto out;
    }
    if (t.r->namespaced != (t.ns != NULL) && (t.name || strcmp(method, "POST") == 0)) {
        rc = not_found(resp, http, &t);
        goto out;
    }
    const char *verb = method;
    if (strcmp(method, "GET") == 0 && !t.name)
        verb = q.watch ? "WATCH" : "LIST";
    count(f, verb, t.resource);
    rule *ru = injected(f, verb, &t);
    if (ru) {
        rc = status_resp(resp, http, ru->code, ru->reason, t.resource, t.name, "%s", ru->message);
        goto out;
    }
    json_t *in = NULL;
    if (body && blen) {
        json_error_t je;
        in = json_loadb(body, blen, JSON_DECODE_ANY, &je);
        if (!in) {
            rc = status_resp(resp, http, 400, "BadRequest", NULL, NULL,
                             "the request body is not valid JSON: %s", je.text);
            goto out;
        }
    }
    if (t.r->custom && json_is_object(in) && !t.sub &&
        (strcmp(verb, "POST") == 0 || strcmp(verb, "PUT") == 0) &&
        !json_string_value(json_object_get(in, "kind"))) {
        /* the API server decodes custom resources as unstructured objects,
         * which must carry their kind (built-in types default it) */
        rc = status_resp(resp, http, 400, "BadRequest", NULL, NULL,
                         "the object provided is unrecognized (must be of type %s): Object "
                         "'Kind' is missing in '%.*s' (%.*s%s)",
                         t.r->kind, (int)(blen > 600 ? 600 : blen), body,
                         (int)(blen > 30 ? 30 : blen), body, blen > 30 ? " ..." : "");
        json_decref(in);
        goto out;
    }
    gr_buf key = GR_BUF_INIT(4096);
    if (t.name)
        obj_key(t.r, t.ns, t.name, &key);
    json_t *cur = t.name ? gr_kube_map_get(&f->objs, gr_buf_cstr(&key)) : NULL;

    if (strcmp(verb, "GET") == 0) {
        rc = cur ? put_json(resp, http, 200, json_deep_copy(cur)) : not_found(resp, http, &t);
    } else if (strcmp(verb, "LIST") == 0) {
        json_t *items = NULL;
        gr_err e;
        gr_err_clear(&e);
        if (collect(f, t.r, t.ns, q.label_selector, q.field_selector, &items, &e) != GR_OK) {
            rc = status_resp(resp, http, 400, "BadRequest", NULL, NULL, "%s", e.msg);
        } else {
            char kind[200], av[300], rvs[32];
            snprintf(kind, sizeof kind, "%sList", t.r->kind);
            api_version_of(t.r, av, sizeof av);
            snprintf(rvs, sizeof rvs, "%llu", (unsigned long long)f->rv);
            rc = put_json(resp, http, 200,
                          json_pack("{s:s,s:s,s:{s:s},s:o}", "kind", kind, "apiVersion", av,
                                    "metadata", "resourceVersion", rvs, "items", items));
        }
    } else if (strcmp(verb, "POST") == 0) {
        if (!json_is_object(in))
            rc = status_resp(resp, http, 400, "BadRequest", NULL, NULL,
                             "the request body must be a JSON object");
        else
            rc = do_create(f, &t, &q, in, resp, http);
    } else if (strcmp(verb, "PUT") == 0) {
        const char *bn = json_is_object(in) ? meta(in, "name") : NULL;
        if (!bn || strcmp(bn, t.name) != 0) {
            rc = status_resp(resp, http, 400, "BadRequest", NULL, NULL,
                             "the name of the object (%s) does not match the name on the URL "
                             "(%s)",
                             bn ? bn : "", t.name);
        } else if (!cur) {
            rc = not_found(resp, http, &t);
        } else {
            const char *brv = meta(in, "resourceVersion");
            const char *crv = meta(cur, "resourceVersion");
            if (brv && *brv && strcmp(brv, crv ? crv : "") != 0) {
                rc = conflict(resp, http, &t, t.name);
            } else {
                json_t *n = t.sub ? strip_for_status(cur, in) : json_deep_copy(in);
                json_object_set(
                    meta_obj(n), "resourceVersion",
                    json_object_get(json_object_get(cur, "metadata"), "resourceVersion"));
                rc = commit_update(f, &t, gr_buf_cstr(&key), cur, n, q.dry_run, resp, http);
            }
        }
    } else if (strcmp(verb, "PATCH") == 0) {
        if (!cur) {
            rc = not_found(resp, http, &t);
        } else {
            json_t *n = json_deep_copy(cur);
            gr_err e;
            gr_err_clear(&e);
            bool json_patch = ctype && strcmp(ctype, "application/json-patch+json") == 0;
            int prc = GR_OK;
            const char *prv = json_is_object(in) ? meta(in, "resourceVersion") : NULL;
            const char *crv = meta(cur, "resourceVersion");
            if (prv && *prv && strcmp(prv, crv ? crv : "") != 0) {
                json_decref(n);
                rc = conflict(resp, http, &t, t.name);
                goto done;
            }
            if (json_patch) {
                if (!json_is_array(in))
                    prc = gr_err_set(&e, GR_EINVAL, "a JSON patch must be an array");
                else
                    prc = gr_json_patch_apply(&n, in, &e);
            } else {
                if (!json_is_object(in))
                    prc = gr_err_set(&e, GR_EINVAL, "a merge patch must be an object");
                else
                    prc = gr_json_merge_patch_apply(&n, in, &e);
            }
            if (prc != GR_OK) {
                json_decref(n);
                rc = status_resp(resp, http, 422, "Invalid", t.r->kind, t.name, "%s", e.msg);
            } else {
                json_t *w = t.sub ? strip_for_status(cur, n) : json_incref(n);
                json_decref(n);
                rc = commit_update(f, &t, gr_buf_cstr(&key), cur, w, q.dry_run, resp, http);
            }
        }
    } else if (strcmp(verb, "DELETE") == 0) {
        if (!cur) {
            rc = not_found(resp, http, &t);
        } else {
            json_t *pre = json_object_get(in, "preconditions");
            const char *pu = json_string_value(json_object_get(pre, "uid"));
            const char *pr = json_string_value(json_object_get(pre, "resourceVersion"));
            const char *prop = json_string_value(json_object_get(in, "propagationPolicy"));
            if ((pu && strcmp(pu, meta(cur, "uid") ? meta(cur, "uid") : "") != 0) ||
                (pr && strcmp(pr, meta(cur, "resourceVersion") ? meta(cur, "resourceVersion")
                                                               : "") != 0)) {
                rc = status_resp(resp, http, 409, "Conflict", t.resource, t.name,
                                 "Precondition failed: UID or ResourceVersion in precondition "
                                 "does not match the object");
            } else if (q.dry_run || json_is_array(json_object_get(in, "dryRun"))) {
                rc = put_json(resp, http, 200, json_deep_copy(cur));
            } else {
                json_t *after = NULL;
                delete_obj(f, t.r, t.ns, gr_buf_cstr(&key), prop && !strcmp(prop, "Orphan"), 0,
                           &after);
                rc = put_json(resp, http, 200, after ? after : json_object());
            }
        }
    } else {
        rc = status_resp(resp, http, 405, "MethodNotAllowed", NULL, NULL,
                         "the server does not allow this method on the requested resource");
    }
done:
    json_decref(in);
    gr_buf_free(&key);
out:
    target_free(&t);
    query_free(&q);
    return rc;
}

/* ---- watch -------------------------------------------------------------- */

/* Which event type does a watcher with these selectors see for h (or -1)? */
static int visible(const hist *h, const char *ls, const char *fs)
{
    bool now = true, before = true, f1 = true;
    gr_kube_fake_selector_match(ls, json_object_get(json_object_get(h->obj, "metadata"), "labels"),
                                &now, NULL);
    field_match(fs, h->obj, &f1, NULL);
    now = now && f1;
    if (h->type != EV_MODIFIED)
        return now ? h->type : -1;
    gr_kube_fake_selector_match(ls, json_object_get(json_object_get(h->old, "metadata"), "labels"),
                                &before, NULL);
    if (now && before)
        return EV_MODIFIED;
    if (now)
        return EV_ADDED;
    if (before)
        return EV_DELETED;
    return -1;
}

static int emit(gr_buf *b, const char *type, const json_t *obj)
{
    json_t *ev = json_pack("{s:s,s:O}", "type", type, "object", obj);
    if (!ev)
        return GR_ENOMEM;
    int rc = gr_json_dump_buf(ev, JSON_COMPACT, b);
    json_decref(ev);
    return rc == GR_OK ? gr_buf_putc(b, '\n') : rc;
}

static const char *ev_name(int t)
{
    return t == EV_ADDED ? "ADDED" : t == EV_MODIFIED ? "MODIFIED" : "DELETED";
}

static int do_watch(gr_kube_fake *f, target *t, query *q, const gr_kube_opts *o,
                    int (*on_data)(void *, const char *, size_t), void *ctx, gr_err *err)
{
    /* caller holds f->mu */
    uint64_t cursor = 0;
    uint64_t gen = f->close_gen;
    gr_buf out = GR_BUF_INIT(GR_KUBE_FAKE_MAX_BODY * 4);
    int rc = GR_OK;
    /* A streaming list (sendInitialEvents=true, as kube-apiserver 1.36
     * serves it) starts with the current state whatever resourceVersion was
     * given, and ends it with a bookmark annotated
     * k8s.io/initial-events-end: "true". */
    bool initial = q->send_initial || !q->resource_version || !*q->resource_version ||
                   strcmp(q->resource_version, "0") == 0;
    if (initial) {
        json_t *items = NULL;
        rc = collect(f, t->r, t->ns, q->label_selector, q->field_selector, &items, err);
        if (rc != GR_OK)
            return rc;
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it)
        {
            if ((rc = emit(&out, "ADDED", it)) != GR_OK)
                break;
        }
        json_decref(items);
        if (rc != GR_OK) {
            gr_buf_free(&out);
            return gr_err_set(err, rc, "watch: initial events: %s", gr_rc_name(rc));
        }
        cursor = f->rv;
        if (q->send_initial) {
            char av[300], rvs[32];
            api_version_of(t->r, av, sizeof av);
            snprintf(rvs, sizeof rvs, "%llu", (unsigned long long)cursor);
            json_t *bm = json_pack("{s:s,s:s,s:{s:s,s:{s:s}}}", "kind", t->r->kind, "apiVersion",
                                   av, "metadata", "resourceVersion", rvs, "annotations",
                                   "k8s.io/initial-events-end", "true");
            rc = bm ? emit(&out, "BOOKMARK", bm) : GR_ENOMEM;
            json_decref(bm);
            if (rc != GR_OK) {
                gr_buf_free(&out);
                return gr_err_set(err, rc, "watch: initial-events-end bookmark: %s",
                                  gr_rc_name(rc));
            }
        }
    } else {
        cursor = strtoull(q->resource_version, NULL, 10);
    }
    int64_t start = mono_ns();
    int64_t deadline = q->timeout_s > 0 ? start + q->timeout_s * 1000000000LL : 0;
    int64_t last_bm = start;
    f->nwatch++;
    for (;;) {
        if (cursor < f->compacted_rv) {
            json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion",
                                   "v1", "metadata", "status", "Failure", "message",
                                   "too old resource version (the fake's history was compacted)",
                                   "reason", "Expired", "code", 410);
            emit(&out, "ERROR", st);
            json_decref(st);
            cursor = UINT64_MAX;
        } else {
            for (size_t i = 0; i < f->nring; i++) {
                hist *h = &f->ring[(f->head + i) % GR_KUBE_FAKE_HISTORY];
                if (h->rv <= cursor || h->r != t->r)
                    continue;
                if (t->ns && strcmp(h->ns ? h->ns : "", t->ns) != 0)
                    continue;
                int ty = visible(h, q->label_selector, q->field_selector);
                if (ty >= 0 && (rc = emit(&out, ev_name(ty), h->obj)) != GR_OK)
                    break;
            }
            if (rc != GR_OK) { /* never drop an event silently: end the stream */
                gr_err_set(err, rc, "watch: %s", gr_rc_name(rc));
                break;
            }
            if (cursor < f->rv)
                cursor = f->rv;
        }
        int64_t now = mono_ns();
        if (q->bookmarks && f->bookmark_ns > 0 && now - last_bm >= f->bookmark_ns &&
            cursor != UINT64_MAX) {
            char av[300], rvs[32];
            api_version_of(t->r, av, sizeof av);
            snprintf(rvs, sizeof rvs, "%llu", (unsigned long long)cursor);
            json_t *bm = json_pack("{s:s,s:s,s:{s:s}}", "kind", t->r->kind, "apiVersion", av,
                                   "metadata", "resourceVersion", rvs);
            emit(&out, "BOOKMARK", bm);
            json_decref(bm);
            last_bm = now;
        }
        if (out.len) {
            pthread_mutex_unlock(&f->mu);
            int cb = on_data(ctx, out.data, out.len);
            gr_buf_reset(&out);
            pthread_mutex_lock(&f->mu);
            if (cb != 0) {
                rc = cb < 0 ? cb : GR_ECANCELED;
                gr_err_set(err, rc, "watch stopped by the reader");
                break;
            }
        }
        if (cursor == UINT64_MAX || f->closing || gen != f->close_gen || !t->r->live)
            break;
        if (o && o->cancel && atomic_load(o->cancel)) {
            rc = gr_err_set(err, GR_ECANCELED, "watch canceled");
            break;
        }
        now = mono_ns();
        if (deadline && now >= deadline)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 50000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&f->cv, &f->mu, &ts);
    }
    f->nwatch--;
    pthread_cond_broadcast(&f->cv);
    gr_buf_free(&out);
    return rc;
}

/* ---- backend ------------------------------------------------------------ */

static int be_request(void *bctx, const char *method, const char *path, const char *content_type,
                      const char *body, size_t body_len, const gr_kube_opts *o, gr_buf *resp,
                      long *http, long *retry_after_s, gr_err *err)
{
    (void)o;
    gr_kube_fake *f = bctx;
    *retry_after_s = 0;
    *http = 0;
    if (body_len > GR_KUBE_FAKE_MAX_BODY) {
        pthread_mutex_lock(&f->mu);
        int rc = status_resp(resp, http, 413, "RequestEntityTooLarge", NULL, NULL,
                             "the request body is larger than %zu bytes", GR_KUBE_FAKE_MAX_BODY);
        pthread_mutex_unlock(&f->mu);
        return rc;
    }
    pthread_mutex_lock(&f->mu);
    int rc = serve(f, method, path, content_type, body, body_len, resp, http, err);
    pthread_mutex_unlock(&f->mu);
    if (rc == GR_ETOOBIG)
        return gr_err_set(err, GR_ETOOBIG, "%s %s: response larger than the %zu-byte limit", method,
                          path, resp->max);
    if (rc != GR_OK)
        return gr_err_set(err, rc, "%s %s: fake server: %s", method, path, gr_rc_name(rc));
    return GR_OK;
}

static int be_stream(void *bctx, const char *method, const char *path, const gr_kube_opts *o,
                     long idle_s, int (*on_data)(void *, const char *, size_t), void *ctx,
                     long *http, gr_buf *errbody, gr_err *err)
{
    (void)idle_s;
    gr_kube_fake *f = bctx;
    *http = 0;
    const char *qm = strchr(path, '?');
    size_t plen = qm ? (size_t)(qm - path) : strlen(path);
    query q;
    parse_query(qm ? qm + 1 : NULL, &q);
    target t;
    pthread_mutex_lock(&f->mu);
    int rc = split_path(path, plen, &t);
    bool ok = rc == GR_OK && strcmp(method, "GET") == 0 && q.watch && resolve(f, &t) && t.r &&
              !t.name && !t.sub;
    if (!ok) {
        /* not a watch: answer as a plain request, body to on_data on 2xx */
        target_free(&t);
        query_free(&q);
        gr_buf b = GR_BUF_INIT(GR_KUBE_MAX_RESPONSE);
        rc = serve(f, method, path, NULL, NULL, 0, &b, http, err);
        pthread_mutex_unlock(&f->mu);
        if (rc == GR_OK) {
            if (*http >= 200 && *http < 300) {
                int cb = b.len ? on_data(ctx, b.data, b.len) : 0;
                if (cb)
                    rc = cb < 0 ? cb : GR_ECANCELED;
            } else {
                rc = gr_buf_append(errbody, b.data, b.len);
            }
        }
        gr_buf_free(&b);
        return rc;
    }
    count(f, "WATCH", t.resource);
    rule *ru = injected(f, "WATCH", &t);
    if (ru) {
        gr_buf b = GR_BUF_INIT(64 * 1024);
        status_resp(&b, http, ru->code, ru->reason, t.resource, NULL, "%s", ru->message);
        pthread_mutex_unlock(&f->mu);
        rc = gr_buf_append(errbody, b.data, b.len);
        gr_buf_free(&b);
        target_free(&t);
        query_free(&q);
        return rc;
    }
    *http = 200;
    rc = do_watch(f, &t, &q, o, on_data, ctx, err);
    pthread_mutex_unlock(&f->mu);
    target_free(&t);
    query_free(&q);
    return rc;
}

static const gr_kube_backend fake_backend = {
    .name = "fake",
    .request = be_request,
    .request_stream = be_stream,
    .free = NULL,
};

/* ---- public API --------------------------------------------------------- */

static int add_res(gr_kube_fake *f, const char *group, const char *version, const char *resource,
                   const char *kind, bool namespaced, bool has_status)
{
    res *r = find_res(f, group, version, resource);
    if (!r) {
        for (size_t i = 0; i < f->nres; i++)
            if (!f->res[i].live && strcmp(f->res[i].group, group) == 0 &&
                strcmp(f->res[i].version, version) == 0 &&
                strcmp(f->res[i].resource, resource) == 0)
                r = &f->res[i];
    }
    if (!r) {
        if (f->nres >= MAX_RES)
            return GR_ETOOBIG;
        r = &f->res[f->nres];
        memset(r, 0, sizeof *r);
        r->group = strdup(group);
        r->version = strdup(version);
        r->resource = strdup(resource);
        if (!r->group || !r->version || !r->resource) {
            free(r->group);
            free(r->version);
            free(r->resource);
            return GR_ENOMEM;
        }
        f->nres++;
    }
    char *k = strdup(kind);
    if (!k)
        return GR_ENOMEM;
    free(r->kind);
    r->kind = k;
    r->namespaced = namespaced;
    r->has_status = has_status;
    r->live = true;
    return GR_OK;
}

int gr_kube_fake_new(gr_kube_fake **out, gr_err *err)
{
    *out = NULL;
    gr_kube_fake *f = calloc(1, sizeof *f);
    if (!f)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    f->ring = calloc(GR_KUBE_FAKE_HISTORY, sizeof *f->ring);
    if (!f->ring) {
        free(f);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&f->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&f->cv, &ca);
    pthread_condattr_destroy(&ca);
    f->bookmark_ns = 1000000000LL;
    f->seed = (unsigned)gr_kube_mono_ns();
    static const struct {
        const char *g, *v, *r, *k;
        bool ns, st;
    } builtin[] = {
        {"", "v1", "pods", "Pod", true, true},
        {"", "v1", "configmaps", "ConfigMap", true, false},
        {"", "v1", "secrets", "Secret", true, false},
        {"", "v1", "services", "Service", true, true},
        {"", "v1", "namespaces", "Namespace", false, true},
        {"", "v1", "nodes", "Node", false, true},
        {"", "v1", "events", "Event", true, false},
        {"coordination.k8s.io", "v1", "leases", "Lease", true, false},
        {"events.k8s.io", "v1", "events", "Event", true, false},
        {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition",
         false, true},
    };
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) {
        if (add_res(f, builtin[i].g, builtin[i].v, builtin[i].r, builtin[i].k, builtin[i].ns,
                    builtin[i].st) != GR_OK) {
            gr_kube_fake_free(f);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
    }
    *out = f;
    return GR_OK;
}

static void free_json(void *v)
{
    json_decref(v);
}

void gr_kube_fake_free(gr_kube_fake *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->mu);
    f->closing = true;
    pthread_cond_broadcast(&f->cv);
    while (f->nwatch > 0)
        pthread_cond_wait(&f->cv, &f->mu);
    pthread_mutex_unlock(&f->mu);
    gr_kube_map_clear(&f->objs, free_json);
    gr_kube_map_clear(&f->counts, NULL);
    for (size_t i = 0; i < GR_KUBE_FAKE_HISTORY; i++)
        hist_clear(&f->ring[i]);
    free(f->ring);
    for (size_t i = 0; i < f->nres; i++) {
        free(f->res[i].group);
        free(f->res[i].version);
        free(f->res[i].resource);
        free(f->res[i].kind);
    }
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

int gr_kube_fake_client(gr_kube_fake *f, gr_kube_client **out, gr_err *err)
{
    return gr_kube_client_new_backend(NULL, &fake_backend, f, out, err);
}

int gr_kube_fake_add_resource(gr_kube_fake *f, const gr_kube_gvr *gvr, const char *kind,
                              bool namespaced, bool has_status, gr_err *err)
{
    pthread_mutex_lock(&f->mu);
    int rc = add_res(f, gvr->group ? gvr->group : "", gvr->version, gvr->resource, kind, namespaced,
                     has_status);
    res *r =
        rc == GR_OK ? find_res(f, gvr->group ? gvr->group : "", gvr->version, gvr->resource) : NULL;
    if (r)
        r->custom = true;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    if (rc != GR_OK)
        return gr_err_set(err, rc, "fake: cannot register %s: %s", gvr->resource, gr_rc_name(rc));
    return GR_OK;
}

void gr_kube_fake_remove_resource(gr_kube_fake *f, const gr_kube_gvr *gvr)
{
    pthread_mutex_lock(&f->mu);
    res *r = find_res(f, gvr->group ? gvr->group : "", gvr->version, gvr->resource);
    if (r) {
        char prefix[400];
        int pl = snprintf(prefix, sizeof prefix, "%s/%s|", r->group, r->resource);
        json_t *keys = json_array();
        size_t b = 0;
        gr_kube_map_node *n = NULL;
        while ((n = gr_kube_map_next(&f->objs, &b, &n)))
            if (strncmp(n->key, prefix, (size_t)pl) == 0)
                json_array_append_new(keys, json_string(n->key));
        size_t i;
        json_t *k;
        json_array_foreach(keys, i, k)
        {
            void *old = NULL;
            if (gr_kube_map_del(&f->objs, json_string_value(k), &old))
                json_decref(old);
        }
        json_decref(keys);
        r->live = false;
        f->rv++;
        pthread_cond_broadcast(&f->cv);
    }
    pthread_mutex_unlock(&f->mu);
}

static int seed_locked(gr_kube_fake *f, res *r, const json_t *obj, gr_err *err)
{
    const char *name = meta(obj, "name");
    if (!name || !*name)
        return gr_err_set(err, GR_EINVAL, "fake seed: metadata.name is required");
    const char *ns = r->namespaced ? meta(obj, "namespace") : NULL;
    if (r->namespaced && (!ns || !*ns))
        ns = "default";
    json_t *o = json_deep_copy(obj);
    if (!o)
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    json_t *m = meta_obj(o);
    if (ns)
        json_object_set_new(m, "namespace", json_string(ns));
    if (!meta(o, "uid")) {
        char uid[40];
        new_uid(f, uid);
        json_object_set_new(m, "uid", json_string(uid));
    }
    if (!meta(o, "creationTimestamp")) {
        char ts[32];
        now_str(ts);
        json_object_set_new(m, "creationTimestamp", json_string(ts));
    }
    if (!json_object_get(m, "generation"))
        json_object_set_new(m, "generation", json_integer(1));
    char av[300];
    api_version_of(r, av, sizeof av);
    json_object_set_new(o, "apiVersion", json_string(av));
    json_object_set_new(o, "kind", json_string(r->kind));
    int rc = store_put(f, r, ns, o);
    if (rc != GR_OK)
        return gr_err_set(err, rc, "fake seed %s/%s: %s", r->resource, name, gr_rc_name(rc));
    return GR_OK;
}

int gr_kube_fake_seed(gr_kube_fake *f, const gr_kube_gvr *gvr, const json_t *obj, gr_err *err)
{
    pthread_mutex_lock(&f->mu);
    res *r = find_res(f, gvr->group ? gvr->group : "", gvr->version, gvr->resource);
    int rc = r ? seed_locked(f, r, obj, err)
               : gr_err_set(err, GR_EINVAL, "fake seed: resource %s/%s/%s is not registered",
                            gvr->group ? gvr->group : "", gvr->version, gvr->resource);
    pthread_mutex_unlock(&f->mu);
    return rc;
}

int gr_kube_fake_seed_yaml(gr_kube_fake *f, const char *text, gr_err *err)
{
    json_t *docs = NULL;
    int rc = gr_yaml_load_all(text, strlen(text), "seed", &docs, err);
    if (rc != GR_OK)
        return rc;
    size_t i;
    json_t *d;
    pthread_mutex_lock(&f->mu);
    json_array_foreach(docs, i, d)
    {
        const char *av = json_string_value(json_object_get(d, "apiVersion"));
        const char *kind = json_string_value(json_object_get(d, "kind"));
        res *r = av && kind ? find_kind(f, av, kind) : NULL;
        if (!r) {
            rc = gr_err_set(err, GR_EINVAL,
                            "fake seed: document %zu: apiVersion %s kind %s is not registered "
                            "(gr_kube_fake_add_resource first)",
                            i + 1, av ? av : "(none)", kind ? kind : "(none)");
            break;
        }
        if ((rc = seed_locked(f, r, d, err)) != GR_OK)
            break;
    }
    pthread_mutex_unlock(&f->mu);
    json_decref(docs);
    return rc;
}

json_t *gr_kube_fake_get(gr_kube_fake *f, const gr_kube_gvr *gvr, const char *ns, const char *name)
{
    pthread_mutex_lock(&f->mu);
    json_t *out = NULL;
    res *r = find_res(f, gvr->group ? gvr->group : "", gvr->version, gvr->resource);
    if (r) {
        gr_buf k = GR_BUF_INIT(4096);
        if (obj_key(r, r->namespaced ? ns : NULL, name, &k) == GR_OK)
            out = json_deep_copy(gr_kube_map_get(&f->objs, gr_buf_cstr(&k)));
        gr_buf_free(&k);
    }
    pthread_mutex_unlock(&f->mu);
    return out;
}

json_t *gr_kube_fake_list(gr_kube_fake *f, const gr_kube_gvr *gvr, const char *ns)
{
    pthread_mutex_lock(&f->mu);
    json_t *out = NULL;
    res *r = find_res(f, gvr->group ? gvr->group : "", gvr->version, gvr->resource);
    if (!r || collect(f, r, ns, NULL, NULL, &out, NULL) != GR_OK)
        out = json_array();
    pthread_mutex_unlock(&f->mu);
    return out;
}

int gr_kube_fake_fail(gr_kube_fake *f, const char *method, const char *resource,
                      const char *subresource, int n, int http_code, const char *reason,
                      const char *message, gr_err *err)
{
    pthread_mutex_lock(&f->mu);
    if (f->nrules >= MAX_RULES) {
        pthread_mutex_unlock(&f->mu);
        return gr_err_set(err, GR_ETOOBIG, "fake: at most %d failure rules", MAX_RULES);
    }
    rule *r = &f->rules[f->nrules++];
    memset(r, 0, sizeof *r);
    snprintf(r->method, sizeof r->method, "%s", method ? method : "");
    snprintf(r->resource, sizeof r->resource, "%s", resource ? resource : "");
    r->any_sub = subresource == NULL;
    snprintf(r->sub, sizeof r->sub, "%s", subresource ? subresource : "");
    r->left = n;
    r->code = http_code;
    snprintf(r->reason, sizeof r->reason, "%s", reason ? reason : "InternalError");
    snprintf(r->message, sizeof r->message, "%s", message ? message : "injected failure");
    pthread_mutex_unlock(&f->mu);
    return GR_OK;
}

void gr_kube_fake_clear_failures(gr_kube_fake *f)
{
    pthread_mutex_lock(&f->mu);
    f->nrules = 0;
    pthread_mutex_unlock(&f->mu);
}

uint64_t gr_kube_fake_count(gr_kube_fake *f, const char *method, const char *resource)
{
    pthread_mutex_lock(&f->mu);
    uint64_t total = 0;
    size_t b = 0;
    gr_kube_map_node *n = NULL;
    while ((n = gr_kube_map_next(&f->counts, &b, &n)))
        if (count_match(n->key, method, resource))
            total += (uintptr_t)n->val;
    pthread_mutex_unlock(&f->mu);
    return total;
}

void gr_kube_fake_reset_counts(gr_kube_fake *f)
{
    pthread_mutex_lock(&f->mu);
    gr_kube_map_clear(&f->counts, NULL);
    pthread_mutex_unlock(&f->mu);
}

uint64_t gr_kube_fake_rv(gr_kube_fake *f)
{
    pthread_mutex_lock(&f->mu);
    uint64_t rv = f->rv;
    pthread_mutex_unlock(&f->mu);
    return rv;
}

void gr_kube_fake_close_watches(gr_kube_fake *f)
{
    pthread_mutex_lock(&f->mu);
    f->close_gen++;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

void gr_kube_fake_compact(gr_kube_fake *f)
{
    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < f->nring; i++)
        hist_clear(&f->ring[(f->head + i) % GR_KUBE_FAKE_HISTORY]);
    f->head = 0;
    f->nring = 0;
    f->compacted_rv = f->rv;
    pthread_mutex_unlock(&f->mu);
}

void gr_kube_fake_set_bookmark_period(gr_kube_fake *f, int64_t ns)
{
    pthread_mutex_lock(&f->mu);
    f->bookmark_ns = ns;
    pthread_mutex_unlock(&f->mu);
}

size_t gr_kube_fake_watchers(gr_kube_fake *f)
{
    pthread_mutex_lock(&f->mu);
    size_t n = f->nwatch;
    pthread_mutex_unlock(&f->mu);
    return n;
}
