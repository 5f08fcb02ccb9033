/*
 * cel_val.c — CEL values: construction, reference counting, JSON mapping,
 * equality and ordering.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_int.h"
#include "gr_duration.h"
#include "gr_json.h"
#include "gr_base64.h"

/* ---- reference counting ---- */

static void obj_init(cel_obj *o)
{
    atomic_init(&o->rc, 1);
}

void cel_retain(const gr_cel_val *v)
{
    if (!v->u.p)
        return;
    if (v->rep == CEL_REP_HEAP) {
        cel_obj *o = (cel_obj *)v->u.p;
        atomic_fetch_add_explicit(&o->rc, 1, memory_order_relaxed);
    } else if (v->rep == CEL_REP_JSON) {
        json_incref((json_t *)v->u.p);
    }
}

static void free_heap(gr_cel_val *v)
{
    if (v->kind == GR_CEL_LIST) {
        cel_list *l = v->u.p;
        for (size_t i = 0; i < l->n; i++)
            gr_cel_val_release(&l->items[i]);
    } else if (v->kind == GR_CEL_MAP || v->kind == GR_CEL_OBJECT) {
        cel_map *m = v->u.p;
        for (size_t i = 0; i < m->n; i++) { /* n may have shrunk (optional entries) */
            gr_cel_val_release(&m->keys[i]);
            gr_cel_val_release(&m->vals[i]);
        }
        free(m->tname);
    }
    free(v->u.p);
}

void gr_cel_val_release(gr_cel_val *v)
{
    if (!v)
        return;
    if (v->u.p && v->rep == CEL_REP_HEAP) {
        cel_obj *o = (cel_obj *)v->u.p;
        if (atomic_fetch_sub_explicit(&o->rc, 1, memory_order_acq_rel) == 1)
            free_heap(v);
    } else if (v->u.p && v->rep == CEL_REP_JSON) {
        json_decref((json_t *)v->u.p);
    }
    memset(v, 0, sizeof(*v));
}

void gr_cel_val_copy(gr_cel_val *dst, const gr_cel_val *src)
{
    cel_retain(src);
    *dst = *src;
}

/* ---- scalars ---- */

static gr_cel_val mk(int kind)
{
    gr_cel_val v;
    memset(&v, 0, sizeof(v));
    v.kind = (uint8_t)kind;
    return v;
}

gr_cel_val gr_cel_val_null(void)
{
    return mk(GR_CEL_NULL);
}

gr_cel_val gr_cel_val_bool(int b)
{
    gr_cel_val v = mk(GR_CEL_BOOL);
    v.u.b = b ? 1 : 0;
    return v;
}

gr_cel_val gr_cel_val_int(int64_t i)
{
    gr_cel_val v = mk(GR_CEL_INT);
    v.u.i = i;
    return v;
}

gr_cel_val gr_cel_val_uint(uint64_t u)
{
    gr_cel_val v = mk(GR_CEL_UINT);
    v.u.u = u;
    return v;
}

gr_cel_val gr_cel_val_double(double d)
{
    gr_cel_val v = mk(GR_CEL_DOUBLE);
    v.u.d = d;
    return v;
}

gr_cel_val gr_cel_val_duration(int64_t ns)
{
    gr_cel_val v = mk(GR_CEL_DURATION);
    v.u.dur_ns = ns;
    return v;
}

int gr_cel_val_timestamp(int64_t sec, int32_t nsec, gr_cel_val *out, gr_err *err)
{
    if (sec < CEL_TS_MIN_SEC || sec > CEL_TS_MAX_SEC || nsec < 0 || nsec > 999999999)
        return gr_err_set(err, GR_EINVAL,
                          "timestamp out of range: seconds must lie in 0001-01-01..9999-12-31 and "
                          "nanoseconds in 0..999999999");
    *out = mk(GR_CEL_TIMESTAMP);
    out->u.ts.sec = sec;
    out->u.ts.nsec = nsec;
    return GR_OK;
}

gr_cel_val cel_type_val(int kind)
{
    gr_cel_val v = mk(GR_CEL_TYPE);
    v.u.type = kind;
    return v;
}

/* ---- errors ---- */

gr_cel_val cel_err(int code, size_t offset, const char *fmt, ...)
{
    gr_cel_val v = mk(CEL_K_ERROR);
    v.rep = CEL_REP_HEAP;
    char buf[GR_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    size_t len = strlen(buf);
    cel_errv *e = malloc(sizeof(*e) + len + 1);
    if (!e)
        return v; /* u.p == NULL: out of memory */
    obj_init(&e->h);
    e->code = code;
    e->offset = offset;
    memcpy(e->msg, buf, len + 1);
    v.u.p = e;
    return v;
}

const cel_errv *cel_err_of(const gr_cel_val *v)
{
    return v->kind == CEL_K_ERROR ? (const cel_errv *)v->u.p : NULL;
}

/* ---- strings ---- */

gr_cel_val cel_str_alloc(int kind, size_t len, char **data)
{
    if (len > SIZE_MAX / 2)
        return cel_err(GR_ETOOBIG, 0, "string too large");
    cel_str *s = malloc(sizeof(*s) + len + 1);
    if (!s)
        return cel_err(GR_ENOMEM, 0, "out of memory");
    obj_init(&s->h);
    s->len = len;
    s->data[len] = 0;
    *data = s->data;
    gr_cel_val v = mk(kind);
    v.rep = CEL_REP_HEAP;
    v.u.p = s;
    return v;
}

gr_cel_val cel_str_new(int kind, const char *s, size_t len)
{
    char *d;
    gr_cel_val v = cel_str_alloc(kind, len, &d);
    if (!cel_is_err(&v) && len)
        memcpy(d, s, len);
    return v;
}

const char *cel_sv(const gr_cel_val *v, size_t *len)
{
    if (v->rep == CEL_REP_JSON) {
        const json_t *j = v->u.p;
        *len = json_string_length(j);
        return json_string_value(j);
    }
    const cel_str *s = v->u.p;
    *len = s->len;
    return s->data;
}

int gr_cel_val_string(const char *s, size_t len, gr_cel_val *out, gr_err *err)
{
    if (!cel_utf8_valid(s, len))
        return gr_err_set(err, GR_EINVAL, "string value is not valid UTF-8");
    gr_cel_val v = cel_str_new(GR_CEL_STRING, s, len);
    if (cel_is_err(&v)) {
        gr_cel_val_release(&v);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    *out = v;
    return GR_OK;
}

int gr_cel_val_bytes(const void *s, size_t len, gr_cel_val *out, gr_err *err)
{
    gr_cel_val v = cel_str_new(GR_CEL_BYTES, s, len);
    if (cel_is_err(&v)) {
        gr_cel_val_release(&v);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    *out = v;
    return GR_OK;
}

const char *gr_cel_val_str(const gr_cel_val *v, size_t *len)
{
    size_t dummy;
    if (!len)
        len = &dummy;
    if (!v || (v->kind != GR_CEL_STRING && v->kind != GR_CEL_BYTES) || !v->u.p) {
        *len = 0;
        return NULL;
    }
    return cel_sv(v, len);
}

/* ---- lists ---- */

gr_cel_val cel_list_alloc(size_t n, gr_cel_val **items)
{
    if (n > (SIZE_MAX - sizeof(cel_list)) / sizeof(gr_cel_val))
        return cel_err(GR_ETOOBIG, 0, "list too large");
    cel_list *l = calloc(1, sizeof(*l) + n * sizeof(gr_cel_val));
    if (!l)
        return cel_err(GR_ENOMEM, 0, "out of memory");
    obj_init(&l->h);
    l->n = n;
    *items = l->items;
    gr_cel_val v = mk(GR_CEL_LIST);
    v.rep = CEL_REP_HEAP;
    v.u.p = l;
    return v;
}

size_t cel_list_len(const gr_cel_val *v)
{
    if (v->rep == CEL_REP_JSON)
        return json_array_size((const json_t *)v->u.p);
    return ((const cel_list *)v->u.p)->n;
}

gr_cel_val cel_list_at(const gr_cel_val *v, size_t i)
{
    if (v->rep == CEL_REP_JSON)
        return cel_from_json(json_array_get((const json_t *)v->u.p, i));
    return cel_ref(&((const cel_list *)v->u.p)->items[i]);
}

int gr_cel_val_list(gr_cel_val *items, size_t n, gr_cel_val *out, gr_err *err)
{
    gr_cel_val *dst;
    gr_cel_val v = cel_list_alloc(n, &dst);
    if (cel_is_err(&v)) {
        gr_cel_val_release(&v);
        for (size_t i = 0; i < n; i++)
            gr_cel_val_release(&items[i]);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    if (n)
        memcpy(dst, items, n * sizeof(*dst));
    *out = v;
    return GR_OK;
}

size_t gr_cel_val_list_size(const gr_cel_val *v)
{
    return v && v->kind == GR_CEL_LIST ? cel_list_len(v) : 0;
}

int gr_cel_val_list_get(const gr_cel_val *v, size_t i, gr_cel_val *out, gr_err *err)
{
    if (!v || v->kind != GR_CEL_LIST)
        return gr_err_set(err, GR_EINVAL, "value is not a list");
    if (i >= cel_list_len(v))
        return gr_err_set(err, GR_EINVAL, "list index %zu out of range", i);
    gr_cel_val r = cel_list_at(v, i);
    if (cel_is_err(&r)) {
        gr_cel_val_release(&r);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    *out = r;
    return GR_OK;
}

/* ---- maps ---- */

gr_cel_val cel_map_alloc(size_t n, gr_cel_val **keys, gr_cel_val **vals)
{
    if (n > (SIZE_MAX - sizeof(cel_map)) / (2 * sizeof(gr_cel_val)))
        return cel_err(GR_ETOOBIG, 0, "map too large");
    cel_map *m = calloc(1, sizeof(*m) + 2 * n * sizeof(gr_cel_val));
    if (!m)
        return cel_err(GR_ENOMEM, 0, "out of memory");
    obj_init(&m->h);
    m->n = n;
    m->keys = m->ent;
    m->vals = m->ent + n;
    *keys = m->keys;
    *vals = m->vals;
    gr_cel_val v = mk(GR_CEL_MAP);
    v.rep = CEL_REP_HEAP;
    v.u.p = m;
    return v;
}

size_t cel_map_len(const gr_cel_val *v)
{
    if (v->rep == CEL_REP_JSON)
        return json_object_size((const json_t *)v->u.p);
    return ((const cel_map *)v->u.p)->n;
}

int cel_map_find(const gr_cel_val *m, const gr_cel_val *key, gr_cel_val *out)
{
    if (m->rep == CEL_REP_JSON) {
        if (key->kind != GR_CEL_STRING)
            return 0;
        size_t klen;
        const char *k = cel_sv(key, &klen);
        json_t *j = json_object_getn((const json_t *)m->u.p, k, klen);
        if (!j)
            return 0;
        *out = cel_from_json(j);
        return 1;
    }
    const cel_map *mm = m->u.p;
    for (size_t i = 0; i < mm->n; i++) {
        if (cel_equal(&mm->keys[i], key)) {
            *out = cel_ref(&mm->vals[i]);
            return 1;
        }
    }
    return 0;
}

static bool valid_key_kind(int k)
{
    return k == GR_CEL_BOOL || k == GR_CEL_INT || k == GR_CEL_UINT || k == GR_CEL_STRING;
}

int gr_cel_val_map(gr_cel_val *keys, gr_cel_val *vals, size_t n, gr_cel_val *out, gr_err *err)
{
    int rc = GR_OK;
    for (size_t i = 0; i < n && rc == GR_OK; i++) {
        if (!valid_key_kind(keys[i].kind))
            rc = gr_err_set(err, GR_EINVAL,
                            "map key %zu has type %s; keys must be bool, int, uint "
                            "or string",
                            i, gr_cel_val_type_name(&keys[i]));
        for (size_t j = 0; j < i && rc == GR_OK; j++)
            if (cel_equal(&keys[i], &keys[j]))
                rc = gr_err_set(err, GR_EINVAL, "map key %zu repeats key %zu", i, j);
    }
    gr_cel_val *dk = NULL, *dv = NULL;
    gr_cel_val v = mk(GR_CEL_UNSET);
    if (rc == GR_OK) {
        v = cel_map_alloc(n, &dk, &dv);
        if (cel_is_err(&v)) {
            gr_cel_val_release(&v);
            rc = gr_err_set(err, GR_ENOMEM, "out of memory");
        }
    }
    if (rc != GR_OK) {
        for (size_t i = 0; i < n; i++) {
            gr_cel_val_release(&keys[i]);
            gr_cel_val_release(&vals[i]);
        }
        return rc;
    }
    if (n) {
        memcpy(dk, keys, n * sizeof(*dk));
        memcpy(dv, vals, n * sizeof(*dv));
    }
    *out = v;
    return GR_OK;
}

static bool is_mapish(const gr_cel_val *v)
{
    return v && (v->kind == GR_CEL_MAP || v->kind == GR_CEL_OBJECT);
}

size_t gr_cel_val_map_size(const gr_cel_val *v)
{
    return is_mapish(v) ? cel_map_len(v) : 0;
}

void cel_iter_init(cel_iter *it, const gr_cel_val *coll)
{
    memset(it, 0, sizeof(*it));
    it->coll = coll;
    if (coll->kind == GR_CEL_LIST)
        it->n = cel_list_len(coll);
    else if (coll->kind == GR_CEL_MAP || coll->kind == GR_CEL_OBJECT) {
        it->n = cel_map_len(coll);
        if (coll->rep == CEL_REP_JSON)
            it->jit = json_object_iter((json_t *)coll->u.p);
    }
}

int cel_iter_next(cel_iter *it, gr_cel_val *out)
{
    if (it->i >= it->n)
        return 0;
    const gr_cel_val *c = it->coll;
    if (c->kind == GR_CEL_LIST) {
        *out = cel_list_at(c, it->i++);
        return 1;
    }
    if (c->rep == CEL_REP_JSON) {
        if (!it->jit)
            return 0;
        const char *k = json_object_iter_key(it->jit);
        size_t klen = json_object_iter_key_len(it->jit);
        *out = cel_str_new(GR_CEL_STRING, k, klen);
        it->jit = json_object_iter_next((json_t *)c->u.p, it->jit);
        it->i++;
        return 1;
    }
    *out = cel_ref(&((const cel_map *)c->u.p)->keys[it->i++]);
    return 1;
}

int gr_cel_val_map_entry(const gr_cel_val *v, size_t i, gr_cel_val *key, gr_cel_val *val,
                         gr_err *err)
{
    if (!is_mapish(v))
        return gr_err_set(err, GR_EINVAL, "value is not a map");
    if (i >= cel_map_len(v))
        return gr_err_set(err, GR_EINVAL, "map entry %zu out of range", i);
    if (v->rep == CEL_REP_JSON) {
        void *it = json_object_iter((json_t *)v->u.p);
        for (size_t k = 0; k < i && it; k++)
            it = json_object_iter_next((json_t *)v->u.p, it);
        if (!it)
            return gr_err_set(err, GR_EINVAL, "map entry %zu out of range", i);
        gr_cel_val k =
            cel_str_new(GR_CEL_STRING, json_object_iter_key(it), json_object_iter_key_len(it));
        if (cel_is_err(&k)) {
            gr_cel_val_release(&k);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        *key = k;
        *val = cel_from_json(json_object_iter_value(it));
        return GR_OK;
    }
    const cel_map *m = v->u.p;
    *key = cel_ref(&m->keys[i]);
    *val = cel_ref(&m->vals[i]);
    return GR_OK;
}

int gr_cel_val_map_get(const gr_cel_val *map, const gr_cel_val *key, gr_cel_val *out, gr_err *err)
{
    if (!is_mapish(map))
        return gr_err_set(err, GR_EINVAL, "value is not a map");
    gr_cel_val r;
    if (!cel_map_find(map, key, &r))
        return gr_err_set(err, GR_ENOTFOUND, "no such key");
    if (cel_is_err(&r)) {
        gr_cel_val_release(&r);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    *out = r;
    return GR_OK;
}

/* ---- type names ---- */

const char *gr_cel_kind_name(gr_cel_kind k)
{
    switch (k) {
    case GR_CEL_UNSET:
        return "dyn";
    case GR_CEL_NULL:
        return "null_type";
    case GR_CEL_BOOL:
        return "bool";
    case GR_CEL_INT:
        return "int";
    case GR_CEL_UINT:
        return "uint";
    case GR_CEL_DOUBLE:
        return "double";
    case GR_CEL_STRING:
        return "string";
    case GR_CEL_BYTES:
        return "bytes";
    case GR_CEL_LIST:
        return "list";
    case GR_CEL_MAP:
        return "map";
    case GR_CEL_DURATION:
        return "google.protobuf.Duration";
    case GR_CEL_TIMESTAMP:
        return "google.protobuf.Timestamp";
    case GR_CEL_TYPE:
        return "type";
    case GR_CEL_OBJECT:
        return "object";
    }
    return "error";
}

const char *gr_cel_val_type_name(const gr_cel_val *v)
{
    if (v->kind == CEL_K_ERROR)
        return "error";
    if (v->kind == GR_CEL_OBJECT && v->u.p && ((const cel_map *)v->u.p)->tname)
        return ((const cel_map *)v->u.p)->tname;
    return gr_cel_kind_name((gr_cel_kind)v->kind);
}

/* ---- JSON ---- */

gr_cel_val cel_from_json(const json_t *j)
{
    gr_cel_val v;
    switch (json_typeof(j)) {
    case JSON_OBJECT:
    case JSON_ARRAY:
    case JSON_STRING:
        v = mk(json_is_object(j) ? GR_CEL_MAP : json_is_array(j) ? GR_CEL_LIST : GR_CEL_STRING);
        v.rep = CEL_REP_JSON;
        v.u.p = json_incref((json_t *)(uintptr_t)j);
        return v;
    case JSON_INTEGER:
        return gr_cel_val_int((int64_t)json_integer_value(j));
    case JSON_REAL:
        return gr_cel_val_double(json_real_value(j));
    case JSON_TRUE:
        return gr_cel_val_bool(1);
    case JSON_FALSE:
        return gr_cel_val_bool(0);
    case JSON_NULL:
        break;
    }
    return gr_cel_val_null();
}

/* gr_json_type_name(), but naming integers apart from other numbers. */
static const char *json_type_name(const json_t *j)
{
    return json_is_integer(j) ? "integer" : gr_json_type_name(j);
}

int gr_cel_val_from_json(const json_t *j, gr_cel_kind as, gr_cel_val *out, gr_err *err)
{
    if (!j)
        return gr_err_set(err, GR_EINVAL, "no JSON value");
    double d = json_is_real(j) ? json_real_value(j) : 0;
    switch (as) {
    case GR_CEL_UNSET:
        break;
    case GR_CEL_DOUBLE:
        if (json_is_integer(j)) {
            *out = gr_cel_val_double((double)json_integer_value(j));
            return GR_OK;
        }
        break;
    case GR_CEL_INT:
        if (json_is_real(j)) {
            if (!(d == trunc(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0))
                return gr_err_set(err, GR_EINVAL,
                                  "expected an integer, got %g (use a whole number)", d);
            *out = gr_cel_val_int((int64_t)d);
            return GR_OK;
        }
        break;
    case GR_CEL_UINT:
        if (json_is_integer(j) || json_is_real(j)) {
            if (json_is_integer(j))
                d = (double)json_integer_value(j);
            if (json_is_integer(j) && json_integer_value(j) >= 0) {
                *out = gr_cel_val_uint((uint64_t)json_integer_value(j));
                return GR_OK;
            }
            if (!(d == trunc(d) && d >= 0 && d < 18446744073709551616.0))
                return gr_err_set(err, GR_EINVAL,
                                  "expected a non-negative integer, got %g (use a whole number "
                                  ">= 0)",
                                  d);
            *out = gr_cel_val_uint((uint64_t)d);
            return GR_OK;
        }
        break;
    case GR_CEL_DURATION:
    case GR_CEL_TIMESTAMP:
        if (json_is_string(j)) {
            const char *s = json_string_value(j);
            size_t n = json_string_length(j);
            if (as == GR_CEL_DURATION) {
                int64_t ns;
                if (gr_duration_parse_n(s, n, &ns, NULL) != GR_OK)
                    return gr_err_set(err, GR_EINVAL,
                                      "invalid duration \"%.64s\" (use e.g. \"1h30m\", \"2.5s\")",
                                      s);
                *out = gr_cel_val_duration(ns);
                return GR_OK;
            }
            int64_t sec;
            int32_t nsec;
            if (cel_timestamp_parse(s, n, &sec, &nsec) != GR_OK)
                return gr_err_set(err, GR_EINVAL,
                                  "invalid timestamp \"%.64s\" (use RFC 3339, e.g. "
                                  "\"2026-01-02T15:04:05Z\")",
                                  s);
            return gr_cel_val_timestamp(sec, nsec, out, err);
        }
        return gr_err_set(err, GR_EINVAL, "expected a %s string, got a JSON %s",
                          as == GR_CEL_DURATION ? "duration" : "timestamp", json_type_name(j));
    case GR_CEL_BYTES:
    case GR_CEL_TYPE:
        return gr_err_set(err, GR_EINVAL, "a JSON value cannot be bound as %s",
                          gr_cel_kind_name(as));
    default:
        break;
    }
    gr_cel_val v = cel_from_json(j);
    if (as != GR_CEL_UNSET && v.kind != as) {
        gr_cel_val_release(&v);
        return gr_err_set(err, GR_EINVAL, "expected %s, got a JSON %s", gr_cel_kind_name(as),
                          json_type_name(j));
    }
    *out = v;
    return GR_OK;
}

static int key_string(const gr_cel_val *k, gr_buf *b)
{
    switch (k->kind) {
    case GR_CEL_STRING: {
        size_t n;
        const char *s = cel_sv(k, &n);
        return gr_buf_append(b, s, n);
    }
    case GR_CEL_BOOL:
        return gr_buf_puts(b, k->u.b ? "true" : "false");
    case GR_CEL_INT:
        return gr_buf_printf(b, "%" PRId64, k->u.i);
    case GR_CEL_UINT:
        return gr_buf_printf(b, "%" PRIu64, k->u.u);
    default:
        return GR_EINVAL;
    }
}

int gr_cel_val_to_json(const gr_cel_val *v, json_t **out, gr_err *err)
{
    json_t *j = NULL;
    char tmp[64];
    switch (v->kind) {
    case GR_CEL_NULL:
        j = json_null();
        break;
    case GR_CEL_BOOL:
        j = json_boolean(v->u.b);
        break;
    case GR_CEL_INT:
        j = json_integer((json_int_t)v->u.i);
        break;
    case GR_CEL_UINT:
        if (v->u.u > INT64_MAX)
            return gr_err_set(err, GR_EINVAL, "uint %" PRIu64 " does not fit a JSON integer",
                              v->u.u);
        j = json_integer((json_int_t)v->u.u);
        break;
    case GR_CEL_DOUBLE:
        if (!isfinite(v->u.d))
            return gr_err_set(err, GR_EINVAL, "double %g cannot be represented in JSON", v->u.d);
        j = json_real(v->u.d);
        break;
    case GR_CEL_STRING: {
        if (v->rep == CEL_REP_JSON) {
            j = json_incref((json_t *)v->u.p);
            break;
        }
        size_t n;
        const char *s = cel_sv(v, &n);
        j = json_stringn(s, n);
        break;
    }
    case GR_CEL_BYTES: {
        size_t n;
        const char *s = cel_sv(v, &n);
        gr_buf b = GR_BUF_INIT(CEL_TEXT_MAX);
        if (gr_base64_encode(s, n, &b) != GR_OK) {
            gr_buf_free(&b);
            return gr_err_set(err, GR_ENOMEM, "out of memory");
        }
        j = json_stringn(gr_buf_cstr(&b), b.len);
        gr_buf_free(&b);
        break;
    }
    case GR_CEL_DURATION:
        cel_duration_fmt(v->u.dur_ns, tmp, sizeof(tmp));
        j = json_string(tmp);
        break;
    case GR_CEL_TIMESTAMP:
        cel_timestamp_fmt(v->u.ts.sec, v->u.ts.nsec, tmp, sizeof(tmp));
        j = json_string(tmp);
        break;
    case GR_CEL_TYPE:
        j = json_string(gr_cel_kind_name((gr_cel_kind)v->u.type));
        break;
    case GR_CEL_LIST: {
        if (v->rep == CEL_REP_JSON) {
            j = json_incref((json_t *)v->u.p);
            break;
        }
        j = json_array();
        size_t n = cel_list_len(v);
        for (size_t i = 0; j && i < n; i++) {
            json_t *e;
            int rc = gr_cel_val_to_json(&((const cel_list *)v->u.p)->items[i], &e, err);
            if (rc != GR_OK) {
                json_decref(j);
                return gr_err_prefix(err, "[%zu]: ", i);
            }
            if (json_array_append_new(j, e) != 0) {
                json_decref(j);
                j = NULL;
            }
        }
        break;
    }
    case GR_CEL_MAP:
    case GR_CEL_OBJECT: {
        if (v->rep == CEL_REP_JSON) {
            j = json_incref((json_t *)v->u.p);
            break;
        }
        const cel_map *m = v->u.p;
        j = json_object();
        for (size_t i = 0; j && i < m->n; i++) {
            gr_buf kb = GR_BUF_INIT(CEL_TEXT_MAX);
            if (key_string(&m->keys[i], &kb) != GR_OK) {
                gr_buf_free(&kb);
                json_decref(j);
                return gr_err_set(err, GR_ENOMEM, "out of memory");
            }
            json_t *e;
            int rc = gr_cel_val_to_json(&m->vals[i], &e, err);
            if (rc != GR_OK) {
                gr_err_prefix(err, "[%s]: ", gr_buf_cstr(&kb));
                gr_buf_free(&kb);
                json_decref(j);
                return rc;
            }
            if (json_object_setn_new(j, gr_buf_cstr(&kb), kb.len, e) != 0) {
                json_decref(j);
                j = NULL;
            }
            gr_buf_free(&kb);
        }
        break;
    }
    default:
        return gr_err_set(err, GR_EINVAL, "no value to convert to JSON");
    }
    if (!j)
        return gr_err_set(err, GR_ENOMEM, "out of memory building JSON");
    *out = j;
    return GR_OK;
}

/* ---- formatting ---- */

void cel_fmt_double(double d, char *out, size_t outsz)
{
    if (isnan(d)) {
        snprintf(out, outsz, "NaN");
        return;
    }
    if (isinf(d)) {
        snprintf(out, outsz, d > 0 ? "+Inf" : "-Inf");
        return;
    }
    /* Shortest digits that round-trip. */
    char e[40];
    int prec;
    for (prec = 0; prec < 17; prec++) {
        snprintf(e, sizeof(e), "%.*e", prec, d);
        if (strtod(e, NULL) == d)
            break;
    }
    snprintf(e, sizeof(e), "%.*e", prec, d);
    /* e = [-]D[.DDD]e±XX */
    char digits[24];
    size_t nd = 0;
    const char *p = e;
    bool neg = false;
    if (*p == '-') {
        neg = true;
        p++;
    }
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[nd++] = *p;
    int exp = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = 0;
    char buf[64];
    size_t bl = 0;
    if (neg)
        buf[bl++] = '-';
    if (exp < -4 || exp >= 6) { /* Go strconv 'g', precision -1 */
        buf[bl++] = digits[0];
        if (nd > 1) {
            buf[bl++] = '.';
            for (size_t i = 1; i < nd; i++)
                buf[bl++] = digits[i];
        }
        snprintf(buf + bl, sizeof(buf) - bl, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    } else if (exp < 0) {
        buf[bl++] = '0';
        buf[bl++] = '.';
        for (int i = -1; i > exp; i--)
            buf[bl++] = '0';
        for (size_t i = 0; i < nd; i++)
            buf[bl++] = digits[i];
        buf[bl] = 0;
    } else {
        for (int i = 0; i <= exp || i < (int)nd; i++) {
            if (i == exp + 1)
                buf[bl++] = '.';
            buf[bl++] = i < (int)nd ? digits[i] : '0';
        }
        buf[bl] = 0;
    }
    snprintf(out, outsz, "%s", buf);
}

static int fmt_quoted(const char *s, size_t n, gr_buf *b, bool bytes)
{
    int rc = gr_buf_puts(b, bytes ? "b\"" : "\"");
    for (size_t i = 0; i < n && rc == GR_OK; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            rc = gr_buf_printf(b, "\\%c", c);
        else if (c == '\n')
            rc = gr_buf_puts(b, "\\n");
        else if (c < 0x20 || c == 0x7f || (bytes && c >= 0x80))
            rc = gr_buf_printf(b, "\\x%02x", c);
        else
            rc = gr_buf_putc(b, (char)c);
    }
    if (rc == GR_OK)
        rc = gr_buf_putc(b, '"');
    return rc;
}

int gr_cel_val_format(const gr_cel_val *v, gr_buf *b)
{
    char tmp[64];
    switch (v->kind) {
    case GR_CEL_UNSET:
        return gr_buf_puts(b, "<unset>");
    case GR_CEL_NULL:
        return gr_buf_puts(b, "null");
    case GR_CEL_BOOL:
        return gr_buf_puts(b, v->u.b ? "true" : "false");
    case GR_CEL_INT:
        return gr_buf_printf(b, "%" PRId64, v->u.i);
    case GR_CEL_UINT:
        return gr_buf_printf(b, "%" PRIu64 "u", v->u.u);
    case GR_CEL_DOUBLE:
        cel_fmt_double(v->u.d, tmp, sizeof(tmp));
        return gr_buf_puts(b, tmp);
    case GR_CEL_STRING:
    case GR_CEL_BYTES: {
        size_t n;
        const char *s = cel_sv(v, &n);
        return fmt_quoted(s, n, b, v->kind == GR_CEL_BYTES);
    }
    case GR_CEL_DURATION:
        cel_duration_fmt(v->u.dur_ns, tmp, sizeof(tmp));
        return gr_buf_printf(b, "duration(\"%s\")", tmp);
    case GR_CEL_TIMESTAMP:
        cel_timestamp_fmt(v->u.ts.sec, v->u.ts.nsec, tmp, sizeof(tmp));
        return gr_buf_printf(b, "timestamp(\"%s\")", tmp);
    case GR_CEL_TYPE:
        return gr_buf_puts(b, gr_cel_kind_name((gr_cel_kind)v->u.type));
    case GR_CEL_LIST: {
        int rc = gr_buf_putc(b, '[');
        cel_iter it;
        cel_iter_init(&it, v);
        gr_cel_val e;
        for (size_t i = 0; rc == GR_OK && cel_iter_next(&it, &e); i++) {
            if (i)
                rc = gr_buf_puts(b, ", ");
            if (rc == GR_OK)
                rc = gr_cel_val_format(&e, b);
            gr_cel_val_release(&e);
        }
        return rc == GR_OK ? gr_buf_putc(b, ']') : rc;
    }
    case GR_CEL_MAP:
    case GR_CEL_OBJECT: {
        int rc = v->kind == GR_CEL_OBJECT ? gr_buf_puts(b, gr_cel_val_type_name(v)) : GR_OK;
        if (rc == GR_OK)
            rc = gr_buf_putc(b, '{');
        size_t n = cel_map_len(v);
        for (size_t i = 0; rc == GR_OK && i < n; i++) {
            gr_cel_val k, val;
            rc = gr_cel_val_map_entry(v, i, &k, &val, NULL);
            if (rc != GR_OK)
                break;
            if (i)
                rc = gr_buf_puts(b, ", ");
            if (rc == GR_OK)
                rc = gr_cel_val_format(&k, b);
            if (rc == GR_OK)
                rc = gr_buf_puts(b, ": ");
            if (rc == GR_OK)
                rc = gr_cel_val_format(&val, b);
            gr_cel_val_release(&k);
            gr_cel_val_release(&val);
        }
        return rc == GR_OK ? gr_buf_putc(b, '}') : rc;
    }
    default: {
        const cel_errv *e = cel_err_of(v);
        return gr_buf_printf(b, "<error: %s>", e ? e->msg : "out of memory");
    }
    }
}

/* ---- equality and ordering ---- */

bool cel_is_num(const gr_cel_val *v)
{
    return v->kind == GR_CEL_INT || v->kind == GR_CEL_UINT || v->kind == GR_CEL_DOUBLE;
}

static int cmp_i64(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return a < b ? -1 : a > b;
}

static int cmp_double(double a, double b)
{
    if (isnan(a) || isnan(b))
        return 2;
    return a < b ? -1 : a > b;
}

/* int vs double as cel-go does: out-of-range doubles order outside the int
 * range, otherwise the int is converted to double (lossy above 2^53). */
static int cmp_int_double(int64_t a, double d)
{
    if (isnan(d))
        return 2;
    if (d < -9223372036854775808.0)
        return 1;
    if (d > 9223372036854775808.0)
        return -1;
    return cmp_double((double)a, d);
}

static int cmp_uint_double(uint64_t a, double d)
{
    if (isnan(d))
        return 2;
    if (d < 0)
        return 1;
    if (d > 18446744073709551616.0)
        return -1;
    return cmp_double((double)a, d);
}

static int cmp_num(const gr_cel_val *a, const gr_cel_val *b)
{
    switch (a->kind) {
    case GR_CEL_INT:
        if (b->kind == GR_CEL_INT)
            return cmp_i64(a->u.i, b->u.i);
        if (b->kind == GR_CEL_UINT)
            return a->u.i < 0 ? -1 : cmp_u64((uint64_t)a->u.i, b->u.u);
        return cmp_int_double(a->u.i, b->u.d);
    case GR_CEL_UINT:
        if (b->kind == GR_CEL_UINT)
            return cmp_u64(a->u.u, b->u.u);
        if (b->kind == GR_CEL_INT)
            return b->u.i < 0 ? 1 : cmp_u64(a->u.u, (uint64_t)b->u.i);
        return cmp_uint_double(a->u.u, b->u.d);
    default:
        if (b->kind == GR_CEL_DOUBLE) {
            if (isnan(a->u.d) || isnan(b->u.d))
                return 2;
            return a->u.d < b->u.d ? -1 : a->u.d > b->u.d;
        }
        {
            int c = b->kind == GR_CEL_INT ? cmp_int_double(b->u.i, a->u.d)
                                          : cmp_uint_double(b->u.u, a->u.d);
            return c == 2 ? 2 : -c;
        }
    }
}

static int cmp_bytes(const gr_cel_val *a, const gr_cel_val *b)
{
    size_t la, lb;
    const char *sa = cel_sv(a, &la), *sb = cel_sv(b, &lb);
    int c = memcmp(sa, sb, la < lb ? la : lb);
    if (c)
        return c < 0 ? -1 : 1;
    return la < lb ? -1 : la > lb;
}

int cel_compare(const gr_cel_val *a, const gr_cel_val *b)
{
    if (cel_is_num(a) && cel_is_num(b))
        return cmp_num(a, b);
    if (a->kind != b->kind)
        return -2;
    switch (a->kind) {
    case GR_CEL_BOOL:
        return a->u.b < b->u.b ? -1 : a->u.b > b->u.b;
    case GR_CEL_STRING:
    case GR_CEL_BYTES:
        return cmp_bytes(a, b);
    case GR_CEL_DURATION:
        return cmp_i64(a->u.dur_ns, b->u.dur_ns);
    case GR_CEL_TIMESTAMP: {
        int c = cmp_i64(a->u.ts.sec, b->u.ts.sec);
        return c ? c : cmp_i64(a->u.ts.nsec, b->u.ts.nsec);
    }
    default:
        return -2;
    }
}

int cel_equal(const gr_cel_val *a, const gr_cel_val *b)
{
    if (cel_is_num(a) && cel_is_num(b))
        return cmp_num(a, b) == 0;
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case GR_CEL_NULL:
        return 1;
    case GR_CEL_BOOL:
        return a->u.b == b->u.b;
    case GR_CEL_STRING:
    case GR_CEL_BYTES:
        return cmp_bytes(a, b) == 0;
    case GR_CEL_DURATION:
    case GR_CEL_TIMESTAMP:
        return cel_compare(a, b) == 0;
    case GR_CEL_TYPE:
        return a->u.type == b->u.type;
    case GR_CEL_LIST: {
        size_t n = cel_list_len(a);
        if (n != cel_list_len(b))
            return 0;
        int eq = 1;
        for (size_t i = 0; i < n && eq; i++) {
            gr_cel_val x = cel_list_at(a, i), y = cel_list_at(b, i);
            eq = cel_equal(&x, &y);
            gr_cel_val_release(&x);
            gr_cel_val_release(&y);
        }
        return eq;
    }
    case GR_CEL_OBJECT: {
        if (strcmp(gr_cel_val_type_name(a), gr_cel_val_type_name(b)) != 0)
            return 0;
        int qc;
        if (cel_lib_opaque_cmp(a, b, &qc) == 0) /* Quantity/Semver equality: same value */
            return qc == 0;
    }
        __attribute__((fallthrough));
    case GR_CEL_MAP: {
        if (cel_map_len(a) != cel_map_len(b))
            return 0;
        cel_iter it;
        cel_iter_init(&it, a);
        gr_cel_val k;
        int eq = 1;
        while (eq && cel_iter_next(&it, &k)) {
            gr_cel_val x, y;
            if (!cel_map_find(b, &k, &y)) {
                eq = 0;
            } else {
                if (cel_map_find(a, &k, &x)) {
                    eq = cel_equal(&x, &y);
                    gr_cel_val_release(&x);
                } else {
                    eq = 0;
                }
                gr_cel_val_release(&y);
            }
            gr_cel_val_release(&k);
        }
        return eq;
    }
    default:
        return 0;
    }
}

int gr_cel_val_equal(const gr_cel_val *a, const gr_cel_val *b)
{
    return cel_equal(a, b);
}

/* ---- UTF-8 ---- */

size_t cel_utf8_decode(const char *s, size_t len, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    if (u[0] < 0x80 || len < 2) {
        *cp = u[0];
        return 1;
    }
    if ((u[0] & 0xE0) == 0xC0) {
        *cp = ((uint32_t)(u[0] & 0x1F) << 6) | (u[1] & 0x3F);
        return 2;
    }
    if ((u[0] & 0xF0) == 0xE0 && len >= 3) {
        *cp = ((uint32_t)(u[0] & 0x0F) << 12) | ((uint32_t)(u[1] & 0x3F) << 6) | (u[2] & 0x3F);
        return 3;
    }
    if (len >= 4) {
        *cp = ((uint32_t)(u[0] & 0x07) << 18) | ((uint32_t)(u[1] & 0x3F) << 12) |
              ((uint32_t)(u[2] & 0x3F) << 6) | (u[3] & 0x3F);
        return 4;
    }
    *cp = u[0];
    return 1;
}

size_t cel_utf8_encode(uint32_t cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

bool cel_utf8_valid(const char *s, size_t len)
{
    return cel_utf8_valid_prefix(s, len) == len;
}

size_t cel_utf8_valid_prefix(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        unsigned c = u[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp, min;
        if ((c & 0xE0) == 0xC0) {
            n = 2;
            cp = c & 0x1F;
            min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            n = 3;
            cp = c & 0x0F;
            min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            n = 4;
            cp = c & 0x07;
            min = 0x10000;
        } else {
            return i;
        }
        if (i + n > len)
            return i;
        for (size_t k = 1; k < n; k++) {
            if ((u[i + k] & 0xC0) != 0x80)
                return i;
            cp = (cp << 6) | (u[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += n;
    }
    return len;
}

size_t cel_utf8_count(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            n++;
    return n;
}
