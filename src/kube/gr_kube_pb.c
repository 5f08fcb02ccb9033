/* gr_kube_pb — Kubernetes protobuf to JSON (see gr_kube_pb.h). */
#include "gr_kube_pb.h"

#include <string.h>

#ifdef GR_HAVE_KUBE_PB

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "k8s.io/api/coordination/v1/generated.pb-c.h"
#include "k8s.io/api/core/v1/generated.pb-c.h"
#include "k8s.io/apimachinery/pkg/api/resource/generated.pb-c.h"
#include "k8s.io/apimachinery/pkg/apis/meta/v1/generated.pb-c.h"
#include "k8s.io/apimachinery/pkg/runtime/generated.pb-c.h"
#include "k8s.io/apimachinery/pkg/util/intstr/generated.pb-c.h"
#include "kube_pb_tags.h"

static const unsigned char pb_magic[4] = {'k', '8', 's', 0};

/* --- the kinds ---------------------------------------------------------- */

struct pb_kind {
    const char *api_version;
    const char *resource; /* plural; NULL for kinds that are not resources */
    const char *kind;
    const char *list_kind;
    const ProtobufCMessageDescriptor *desc;
    const ProtobufCMessageDescriptor *list_desc;
};

static const struct pb_kind pb_kinds[] = {
    {"v1", "pods", "Pod", "PodList", &k8s__io__api__core__v1__pod__descriptor,
     &k8s__io__api__core__v1__pod_list__descriptor},
    {"v1", "nodes", "Node", "NodeList", &k8s__io__api__core__v1__node__descriptor,
     &k8s__io__api__core__v1__node_list__descriptor},
    {"v1", "configmaps", "ConfigMap", "ConfigMapList",
     &k8s__io__api__core__v1__config_map__descriptor,
     &k8s__io__api__core__v1__config_map_list__descriptor},
    {"v1", "events", "Event", "EventList", &k8s__io__api__core__v1__event__descriptor,
     &k8s__io__api__core__v1__event_list__descriptor},
    {"v1", "namespaces", "Namespace", "NamespaceList",
     &k8s__io__api__core__v1__namespace__descriptor,
     &k8s__io__api__core__v1__namespace_list__descriptor},
    {"v1", "secrets", "Secret", "SecretList", &k8s__io__api__core__v1__secret__descriptor,
     &k8s__io__api__core__v1__secret_list__descriptor},
    {"coordination.k8s.io/v1", "leases", "Lease", "LeaseList",
     &k8s__io__api__coordination__v1__lease__descriptor,
     &k8s__io__api__coordination__v1__lease_list__descriptor},
    {"v1", NULL, "Status", NULL, &k8s__io__apimachinery__pkg__apis__meta__v1__status__descriptor,
     NULL},
    {"meta.k8s.io/v1", NULL, "Status", NULL,
     &k8s__io__apimachinery__pkg__apis__meta__v1__status__descriptor, NULL},
    {"v1", NULL, "WatchEvent", NULL,
     &k8s__io__apimachinery__pkg__apis__meta__v1__watch_event__descriptor, NULL},
    {"meta.k8s.io/v1", NULL, "WatchEvent", NULL,
     &k8s__io__apimachinery__pkg__apis__meta__v1__watch_event__descriptor, NULL},
};
#define N_KINDS (sizeof pb_kinds / sizeof pb_kinds[0])

/* --- per-message JSON facts (built once) ---------------------------------- */

struct pb_field_info {
    const char *json;
    unsigned flags;
};

struct pb_msg_info {
    const ProtobufCMessageDescriptor *desc;
    struct pb_field_info *fields; /* desc->n_fields entries */
};

#define PB_HASH_SIZE 2048u
static struct pb_msg_info pb_hash[PB_HASH_SIZE];
static pthread_once_t pb_once = PTHREAD_ONCE_INIT;
static int pb_init_rc;

static size_t pb_slot(const ProtobufCMessageDescriptor *d)
{
    return (size_t)(((uintptr_t)d >> 4) * 2654435761u) & (PB_HASH_SIZE - 1);
}

static const struct kube_pb_tag *pb_tag_find(const char *msg, unsigned field)
{
    size_t lo = 0, hi = kube_pb_ntags;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(kube_pb_tags[mid].message, msg);
        if (c == 0)
            c = kube_pb_tags[mid].field < field ? -1 : kube_pb_tags[mid].field > field ? 1 : 0;
        if (c == 0)
            return &kube_pb_tags[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static const struct pb_msg_info *pb_info(const ProtobufCMessageDescriptor *d)
{
    for (size_t i = pb_slot(d), n = 0; n < PB_HASH_SIZE; i = (i + 1) & (PB_HASH_SIZE - 1), n++) {
        if (pb_hash[i].desc == d)
            return &pb_hash[i];
        if (pb_hash[i].desc == NULL)
            return NULL;
    }
    return NULL;
}

static int pb_register(const ProtobufCMessageDescriptor *d)
{
    size_t i = pb_slot(d);
    for (size_t n = 0;; i = (i + 1) & (PB_HASH_SIZE - 1), n++) {
        if (n == PB_HASH_SIZE)
            return GR_ETOOBIG;
        if (pb_hash[i].desc == d)
            return GR_OK;
        if (pb_hash[i].desc == NULL)
            break;
    }
    struct pb_field_info *fi = calloc(d->n_fields ? d->n_fields : 1, sizeof *fi);
    if (!fi)
        return GR_ENOMEM;
    for (unsigned k = 0; k < d->n_fields; k++) {
        const ProtobufCFieldDescriptor *f = &d->fields[k];
        const struct kube_pb_tag *t = pb_tag_find(d->name, f->id);
        /* No struct tag (map entries, Timestamp): the proto name is the JSON
         * name, written when set (the Go fields behind these are pointers or
         * are handled as special types). */
        fi[k].json = t ? t->json : f->name;
        fi[k].flags = t ? t->flags : (KUBE_PB_OMITEMPTY | KUBE_PB_PTR);
    }
    pb_hash[i].desc = d;
    pb_hash[i].fields = fi;
    for (unsigned k = 0; k < d->n_fields; k++) {
        const ProtobufCFieldDescriptor *f = &d->fields[k];
        if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            int rc = pb_register(f->descriptor);
            if (rc != GR_OK)
                return rc;
        }
    }
    return GR_OK;
}

static void pb_init(void)
{
    for (size_t i = 0; i < N_KINDS && pb_init_rc == GR_OK; i++) {
        pb_init_rc = pb_register(pb_kinds[i].desc);
        if (pb_init_rc == GR_OK && pb_kinds[i].list_desc)
            pb_init_rc = pb_register(pb_kinds[i].list_desc);
    }
    if (pb_init_rc == GR_OK)
        pb_init_rc = pb_register(&k8s__io__apimachinery__pkg__runtime__unknown__descriptor);
}

static int pb_ready(gr_err *err)
{
    pthread_once(&pb_once, pb_init);
    if (pb_init_rc != GR_OK)
        return gr_err_set(err, pb_init_rc, "kube protobuf: building the descriptor tables failed");
    return GR_OK;
}

/* --- values -------------------------------------------------------------- */

struct pb_ctx {
    gr_err *err;
    size_t cap;
    int depth;
    gr_kube_pb_cache *cache; /* NULL: none */
};

struct pb_cache_slot {
    uint64_t hash;
    size_t n;
    uint8_t *raw; /* NULL: empty */
    json_t *v;
};

struct gr_kube_pb_cache {
    struct pb_cache_slot slot[GR_KUBE_PB_CACHE_SLOTS];
};

gr_kube_pb_cache *gr_kube_pb_cache_new(void)
{
    return calloc(1, sizeof(gr_kube_pb_cache));
}

void gr_kube_pb_cache_free(gr_kube_pb_cache *pc)
{
    if (!pc)
        return;
    for (size_t i = 0; i < GR_KUBE_PB_CACHE_SLOTS; i++) {
        free(pc->slot[i].raw);
        json_decref(pc->slot[i].v);
    }
    free(pc);
}

static uint64_t pb_fnv(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static json_t *pb_decode_envelope(struct pb_ctx *c, const uint8_t *buf, size_t len, bool with_type);

static json_t *pb_base64(const uint8_t *p, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t olen = 4 * ((n + 2) / 3);
    char *s = malloc(olen + 1);
    if (!s)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        s[o++] = tab[(v >> 18) & 63];
        s[o++] = tab[(v >> 12) & 63];
        s[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        s[o++] = i + 2 < n ? tab[v & 63] : '=';
    }
    s[o] = 0;
    json_t *j = json_stringn(s, o);
    free(s);
    return j;
}

static json_t *pb_time(int64_t secs, int64_t usec, bool micro)
{
    time_t t = (time_t)secs;
    struct tm tm;
    if (!gmtime_r(&t, &tm))
        return NULL;
    char b[64];
    if (micro)
        snprintf(b, sizeof b, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)usec);
    else
        snprintf(b, sizeof b, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    return json_string(b);
}

/* The decoder walks the wire format directly, driven by the descriptors
 * (protobuf-c's unpack would first allocate every message as a C struct). */

#define PB_MAX_NESTING 64

struct pb_rd {
    const uint8_t *p, *end;
};

static bool rd_varint(struct pb_rd *r, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end)
            return false;
        uint8_t b = *r->p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

static bool rd_bytes(struct pb_rd *r, const uint8_t **p, size_t *n)
{
    uint64_t len;
    if (!rd_varint(r, &len) || len > (uint64_t)(r->end - r->p))
        return false;
    *p = r->p;
    *n = (size_t)len;
    r->p += len;
    return true;
}

static bool rd_skip(struct pb_rd *r, unsigned wt)
{
    uint64_t v;
    const uint8_t *p;
    size_t n;
    switch (wt) {
    case 0:
        return rd_varint(r, &v);
    case 1:
        if (r->end - r->p < 8)
            return false;
        r->p += 8;
        return true;
    case 2:
        return rd_bytes(r, &p, &n);
    case 5:
        if (r->end - r->p < 4)
            return false;
        r->p += 4;
        return true;
    default:
        return false; /* groups are not used by Kubernetes */
    }
}

static json_t *pb_fail(struct pb_ctx *c, const ProtobufCMessageDescriptor *d, const char *why)
{
    if (c->err && c->err->code == GR_OK)
        gr_err_set(c->err, GR_EPARSE, "kube protobuf: malformed %s: %s", d->name, why);
    return NULL;
}

/* The fields of a small special message (Time, Quantity, ...): up to 3. */
struct pb_small {
    uint64_t v[4];
    const uint8_t *s[4];
    size_t n[4];
    bool has[4];
};

static bool pb_small_parse(const uint8_t *p, size_t n, struct pb_small *o)
{
    memset(o, 0, sizeof *o);
    if (!p)
        return true; /* an absent message: every field zero */
    struct pb_rd r = {p, p + n};
    while (r.p < r.end) {
        uint64_t key;
        if (!rd_varint(&r, &key))
            return false;
        unsigned id = (unsigned)(key >> 3), wt = (unsigned)(key & 7);
        if (id >= 1 && id <= 3 && wt == 0) {
            if (!rd_varint(&r, &o->v[id]))
                return false;
            o->has[id] = true;
        } else if (id >= 1 && id <= 3 && wt == 2) {
            if (!rd_bytes(&r, &o->s[id], &o->n[id]))
                return false;
            o->has[id] = true;
        } else if (!rd_skip(&r, wt)) {
            return false;
        }
    }
    return true;
}

static json_t *pb_embedded(struct pb_ctx *c, const uint8_t *p, size_t n, const char *what)
{
    if (n >= 4 && memcmp(p, pb_magic, 4) == 0) {
        if (c->depth >= GR_KUBE_PB_MAX_DEPTH) {
            gr_err_set(c->err, GR_EPARSE, "kube protobuf: %s: envelopes nested deeper than %d",
                       what, GR_KUBE_PB_MAX_DEPTH);
            return NULL;
        }
        c->depth++;
        json_t *j = pb_decode_envelope(c, p, n, true);
        c->depth--;
        return j;
    }
    struct pb_cache_slot *sl = NULL;
    uint64_t h = 0;
    if (c->cache && n <= GR_KUBE_PB_CACHE_MAX_RAW) {
        h = pb_fnv(p, n);
        sl = &c->cache->slot[h % GR_KUBE_PB_CACHE_SLOTS];
        if (sl->raw && sl->hash == h && sl->n == n && memcmp(sl->raw, p, n) == 0)
            return json_incref(sl->v);
    }
    json_error_t je;
    json_t *j = json_loadb((const char *)p, n, JSON_DECODE_ANY, &je);
    if (!j) {
        gr_err_set(c->err, GR_EPARSE, "kube protobuf: %s: embedded JSON: %s (at byte %d)", what,
                   je.text, je.position);
        return NULL;
    }
    if (sl) { /* replace the slot (a failed copy leaves it empty) */
        free(sl->raw);
        json_decref(sl->v);
        sl->raw = malloc(n ? n : 1);
        sl->v = NULL;
        if (sl->raw) {
            memcpy(sl->raw, p, n);
            sl->hash = h;
            sl->n = n;
            sl->v = json_incref(j);
        }
    }
    return j;
}

/* A special type's JSON, or NULL with *handled false. */
static json_t *pb_special(struct pb_ctx *c, const ProtobufCMessageDescriptor *d, const uint8_t *p,
                          size_t n, bool *handled)
{
    *handled = true;
    bool tm = d == &k8s__io__apimachinery__pkg__apis__meta__v1__time__descriptor;
    bool mtm = d == &k8s__io__apimachinery__pkg__apis__meta__v1__micro_time__descriptor;
    bool qty = d == &k8s__io__apimachinery__pkg__api__resource__quantity__descriptor;
    bool ios = d == &k8s__io__apimachinery__pkg__util__intstr__int_or_string__descriptor;
    bool fv1 = d == &k8s__io__apimachinery__pkg__apis__meta__v1__fields_v1__descriptor;
    bool raw = d == &k8s__io__apimachinery__pkg__runtime__raw_extension__descriptor;
    if (!(tm || mtm || qty || ios || fv1 || raw)) {
        *handled = false;
        return NULL;
    }
    struct pb_small s;
    if (!pb_small_parse(p, n, &s))
        return pb_fail(c, d, "truncated or bad field");
    if (tm || mtm) {
        if (!s.has[1] && !s.has[2])
            return json_null(); /* the zero Time (Go writes an empty message) */
        /* Go's Time keeps seconds only (time_proto.go); MicroTime microseconds. */
        int64_t usec = (int64_t)(int32_t)s.v[2] / 1000;
        if (usec < 0 || usec > 999999)
            usec = 0;
        json_t *j = pb_time((int64_t)s.v[1], usec, mtm);
        return j ? j : pb_fail(c, d, "time out of range");
    }
    if (qty)
        return s.has[1] ? json_stringn((const char *)s.s[1], s.n[1]) : json_string("0");
    if (ios) {
        if (s.v[1] == 1)
            return s.has[3] ? json_stringn((const char *)s.s[3], s.n[3]) : json_string("");
        return json_integer((int32_t)s.v[2]);
    }
    if (!s.has[1] || s.n[1] == 0)
        return json_null();
    return pb_embedded(c, s.s[1], s.n[1], fv1 ? "FieldsV1" : "RawExtension");
}

static bool pb_is_map_entry(const ProtobufCMessageDescriptor *d)
{
    size_t n = strlen(d->short_name);
    return d->n_fields == 2 && n > 5 && strcmp(d->short_name + n - 5, "Entry") == 0 &&
           strcmp(d->fields[0].name, "key") == 0 && strcmp(d->fields[1].name, "value") == 0;
}

static int pb_fields(struct pb_ctx *c, const ProtobufCMessageDescriptor *d, const uint8_t *p,
                     size_t n, json_t *obj, int nest);

static json_t *pb_message(struct pb_ctx *c, const ProtobufCMessageDescriptor *d, const uint8_t *p,
                          size_t n, int nest)
{
    bool handled;
    json_t *s = pb_special(c, d, p, n, &handled);
    if (handled)
        return s;
    json_t *obj = json_object();
    if (!obj)
        return NULL;
    if (pb_fields(c, d, p, n, obj, nest) != GR_OK) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

/* One scalar of field f read with wire type wt; *zero: Go's zero value. */
static json_t *pb_scalar(struct pb_ctx *c, const ProtobufCMessageDescriptor *d,
                         const ProtobufCFieldDescriptor *f, struct pb_rd *r, unsigned wt,
                         bool *zero)
{
    uint64_t v = 0;
    const uint8_t *s;
    size_t n;
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING:
        if (wt != 2 || !rd_bytes(r, &s, &n))
            break;
        *zero = n == 0;
        {
            json_t *j = json_stringn((const char *)s, n);
            return j ? j : pb_fail(c, d, "string is not UTF-8");
        }
    case PROTOBUF_C_TYPE_BYTES:
        if (wt != 2 || !rd_bytes(r, &s, &n))
            break;
        *zero = n == 0;
        return pb_base64(s, n);
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_BOOL:
    case PROTOBUF_C_TYPE_ENUM:
        if (wt != 0 || !rd_varint(r, &v))
            break;
        *zero = v == 0;
        switch (f->type) {
        case PROTOBUF_C_TYPE_BOOL:
            return json_boolean(v != 0);
        case PROTOBUF_C_TYPE_INT32:
        case PROTOBUF_C_TYPE_ENUM:
            return json_integer((int32_t)v);
        case PROTOBUF_C_TYPE_UINT32:
            return json_integer((uint32_t)v);
        case PROTOBUF_C_TYPE_SINT32:
        case PROTOBUF_C_TYPE_SINT64: {
            int64_t z = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
            return json_integer((json_int_t)(f->type == PROTOBUF_C_TYPE_SINT32 ? (int32_t)z : z));
        }
        case PROTOBUF_C_TYPE_UINT64:
            return v > (uint64_t)INT64_MAX ? json_real((double)v) : json_integer((json_int_t)v);
        default:
            return json_integer((json_int_t)(int64_t)v);
        }
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
        if (wt != 5 || r->end - r->p < 4)
            break;
        for (int i = 3; i >= 0; i--)
            v = (v << 8) | r->p[i];
        r->p += 4;
        *zero = v == 0;
        if (f->type == PROTOBUF_C_TYPE_FLOAT) {
            float fl;
            uint32_t u = (uint32_t)v;
            memcpy(&fl, &u, 4);
            return json_real((double)fl);
        }
        return json_integer(f->type == PROTOBUF_C_TYPE_SFIXED32 ? (json_int_t)(int32_t)v
                                                                : (json_int_t)v);
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        if (wt != 1 || r->end - r->p < 8)
            break;
        for (int i = 7; i >= 0; i--)
            v = (v << 8) | r->p[i];
        r->p += 8;
        *zero = v == 0;
        if (f->type == PROTOBUF_C_TYPE_DOUBLE) {
            double db;
            memcpy(&db, &v, 8);
            return json_real(db);
        }
        return json_integer((json_int_t)v);
    default:
        break;
    }
    return pb_fail(c, d, f->name);
}

static int pb_put(struct pb_ctx *c, json_t *obj, const char *name, json_t *v)
{
    if (!v)
        return c->err && c->err->code != GR_OK
                   ? c->err->code
                   : gr_err_set(c->err, GR_ENOMEM, "kube protobuf: out of memory");
    if (json_object_set_new(obj, name, v) != 0)
        return gr_err_set(c->err, GR_ENOMEM, "kube protobuf: out of memory");
    return GR_OK;
}

/* Appends v to obj[name] (an array, created on first use). */
static int pb_append(struct pb_ctx *c, json_t *obj, const char *name, json_t *v)
{
    if (!v)
        return pb_put(c, obj, name, NULL);
    json_t *a = json_object_get(obj, name);
    if (!json_is_array(a)) {
        a = json_array();
        if (pb_put(c, obj, name, a) != GR_OK) {
            json_decref(v);
            return c->err ? c->err->code : GR_ENOMEM;
        }
    }
    if (json_array_append_new(a, v) != 0)
        return gr_err_set(c->err, GR_ENOMEM, "kube protobuf: out of memory");
    return GR_OK;
}

/* A map entry (key = 1, value = 2) into obj[name] (an object). */
static int pb_map_entry(struct pb_ctx *c, const ProtobufCFieldDescriptor *f, const uint8_t *p,
                        size_t n, json_t *obj, const char *name, int nest)
{
    const ProtobufCMessageDescriptor *ed = f->descriptor;
    const ProtobufCFieldDescriptor *vf = &ed->fields[1];
    struct pb_rd r = {p, p + n};
    const uint8_t *ks = (const uint8_t *)"";
    size_t kn = 0;
    json_t *val = NULL;
    while (r.p < r.end) {
        uint64_t key;
        if (!rd_varint(&r, &key))
            break;
        unsigned id = (unsigned)(key >> 3), wt = (unsigned)(key & 7);
        if (id == 1 && wt == 2) {
            if (!rd_bytes(&r, &ks, &kn))
                break;
        } else if (id == 2) {
            json_decref(val);
            if (vf->type == PROTOBUF_C_TYPE_MESSAGE) {
                const uint8_t *s;
                size_t sn;
                val = wt == 2 && rd_bytes(&r, &s, &sn)
                          ? pb_message(c, vf->descriptor, s, sn, nest + 1)
                          : NULL;
            } else {
                bool z;
                val = pb_scalar(c, ed, vf, &r, wt, &z);
            }
            if (!val)
                return pb_put(c, obj, name, NULL);
        } else if (!rd_skip(&r, wt)) {
            break;
        }
    }
    if (r.p != r.end) {
        json_decref(val);
        pb_fail(c, ed, "truncated map entry");
        return GR_EPARSE;
    }
    if (!val) {
        bool z;
        struct pb_rd empty = {(const uint8_t *)"", (const uint8_t *)""};
        val = vf->type == PROTOBUF_C_TYPE_STRING  ? json_string("")
              : vf->type == PROTOBUF_C_TYPE_BYTES ? json_string("")
              : vf->type == PROTOBUF_C_TYPE_MESSAGE
                  ? pb_message(c, vf->descriptor, NULL, 0, nest + 1)
                  : pb_scalar(c, ed, vf, &empty, 0, &z);
        if (!val)
            return pb_put(c, obj, name, NULL);
    }
    char kb[256];
    char *k = kn < sizeof kb ? kb : malloc(kn + 1);
    if (!k) {
        json_decref(val);
        return gr_err_set(c->err, GR_ENOMEM, "kube protobuf: out of memory");
    }
    memcpy(k, ks, kn);
    k[kn] = 0;
    json_t *m = json_object_get(obj, name);
    int rc = GR_OK;
    if (!json_is_object(m)) {
        m = json_object();
        rc = pb_put(c, obj, name, m);
    }
    if (rc == GR_OK && (strlen(k) != kn || json_object_set_new(m, k, val) != 0)) {
        rc = strlen(k) != kn ? GR_EPARSE : GR_ENOMEM;
        gr_err_set(c->err, rc, "kube protobuf: %s: %s", ed->name,
                   rc == GR_EPARSE ? "map key holds a NUL byte" : "out of memory");
        if (rc == GR_EPARSE)
            json_decref(val);
    } else if (rc != GR_OK) {
        json_decref(val);
    }
    if (k != kb)
        free(k);
    return rc;
}

/* Writes the fields encoded in p[0..n) into obj (inline members write into
 * the same object), then the Go zero values of absent fields that JSON
 * writes anyway (no omitempty). */
static int pb_fields(struct pb_ctx *c, const ProtobufCMessageDescriptor *d, const uint8_t *p,
                     size_t n, json_t *obj, int nest)
{
    if (nest > PB_MAX_NESTING) {
        pb_fail(c, d, "messages nested too deeply");
        return GR_EPARSE;
    }
    const struct pb_msg_info *info = pb_info(d);
    if (!info)
        return gr_err_set(c->err, GR_EUNSUPPORTED, "kube protobuf: no JSON facts for message %s",
                          d->name);
    struct pb_rd r = {p ? p : (const uint8_t *)"", p ? p + n : (const uint8_t *)""};
    while (r.p < r.end) {
        uint64_t key;
        if (!rd_varint(&r, &key)) {
            pb_fail(c, d, "truncated field key");
            return GR_EPARSE;
        }
        unsigned id = (unsigned)(key >> 3), wt = (unsigned)(key & 7);
        const ProtobufCFieldDescriptor *f =
            id ? protobuf_c_message_descriptor_get_field(d, id) : NULL;
        unsigned flags = f ? info->fields[f - d->fields].flags : KUBE_PB_SKIP;
        if (!f || (flags & KUBE_PB_SKIP)) {
            if (!rd_skip(&r, wt)) {
                pb_fail(c, d, "truncated or bad unknown field");
                return GR_EPARSE;
            }
            continue;
        }
        const char *name = info->fields[f - d->fields].json;
        bool repeated = f->label == PROTOBUF_C_LABEL_REPEATED;
        int rc;
        if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            const uint8_t *s;
            size_t sn;
            if (wt != 2 || !rd_bytes(&r, &s, &sn)) {
                pb_fail(c, d, f->name);
                return GR_EPARSE;
            }
            if (repeated && pb_is_map_entry(f->descriptor))
                rc = pb_map_entry(c, f, s, sn, obj, name, nest);
            else if (flags & KUBE_PB_INLINE)
                rc = pb_fields(c, f->descriptor, s, sn, obj, nest + 1);
            else if (repeated)
                rc = pb_append(c, obj, name, pb_message(c, f->descriptor, s, sn, nest + 1));
            else
                rc = pb_put(c, obj, name, pb_message(c, f->descriptor, s, sn, nest + 1));
        } else if (repeated && wt == 2 && f->type != PROTOBUF_C_TYPE_STRING &&
                   f->type != PROTOBUF_C_TYPE_BYTES) {
            /* packed scalars */
            const uint8_t *s;
            size_t sn;
            if (!rd_bytes(&r, &s, &sn)) {
                pb_fail(c, d, f->name);
                return GR_EPARSE;
            }
            struct pb_rd pr = {s, s + sn};
            unsigned ewt =
                f->type == PROTOBUF_C_TYPE_DOUBLE || f->type == PROTOBUF_C_TYPE_FIXED64 ||
                        f->type == PROTOBUF_C_TYPE_SFIXED64
                    ? 1
                : f->type == PROTOBUF_C_TYPE_FLOAT || f->type == PROTOBUF_C_TYPE_FIXED32 ||
                        f->type == PROTOBUF_C_TYPE_SFIXED32
                    ? 5
                    : 0;
            rc = GR_OK;
            while (rc == GR_OK && pr.p < pr.end) {
                bool z;
                rc = pb_append(c, obj, name, pb_scalar(c, d, f, &pr, ewt, &z));
            }
        } else {
            bool zero = false;
            json_t *v = pb_scalar(c, d, f, &r, wt, &zero);
            if (!v)
                return c->err && c->err->code != GR_OK ? c->err->code : GR_ENOMEM;
            if (repeated) {
                rc = pb_append(c, obj, name, v);
            } else if (zero && (flags & KUBE_PB_OMITEMPTY) && !(flags & KUBE_PB_PTR)) {
                json_decref(v);
                rc = GR_OK;
            } else {
                rc = pb_put(c, obj, name, v);
            }
        }
        if (rc != GR_OK)
            return rc;
    }
    /* Absent fields encoding/json writes anyway. */
    for (unsigned k = 0; k < d->n_fields; k++) {
        unsigned flags = info->fields[k].flags;
        if (flags & (KUBE_PB_OMITEMPTY | KUBE_PB_SKIP | KUBE_PB_INLINE | KUBE_PB_PTR))
            continue;
        const ProtobufCFieldDescriptor *f = &d->fields[k];
        const char *name = info->fields[k].json;
        if (json_object_get(obj, name))
            continue;
        json_t *v;
        if (f->label == PROTOBUF_C_LABEL_REPEATED)
            v = json_null(); /* a nil slice or map */
        else if (f->type == PROTOBUF_C_TYPE_MESSAGE)
            v = pb_message(c, f->descriptor, NULL, 0, nest + 1);
        else if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_BYTES)
            v = json_string("");
        else if (f->type == PROTOBUF_C_TYPE_BOOL)
            v = json_false();
        else
            v = json_integer(0);
        int rc = pb_put(c, obj, name, v);
        if (rc != GR_OK)
            return rc;
    }
    return GR_OK;
}

/* --- envelopes ------------------------------------------------------------ */

static const struct pb_kind *pb_kind_of(const char *api_version, const char *kind, bool *is_list)
{
    for (size_t i = 0; i < N_KINDS; i++) {
        if (strcmp(pb_kinds[i].api_version, api_version) != 0)
            continue;
        if (strcmp(pb_kinds[i].kind, kind) == 0) {
            *is_list = false;
            return &pb_kinds[i];
        }
        if (pb_kinds[i].list_kind && strcmp(pb_kinds[i].list_kind, kind) == 0) {
            *is_list = true;
            return &pb_kinds[i];
        }
    }
    return NULL;
}

static json_t *pb_decode_as(struct pb_ctx *c, const ProtobufCMessageDescriptor *d,
                            const uint8_t *buf, size_t len)
{
    json_t *j = pb_message(c, d, buf, len, 0);
    if (!j && c->err && c->err->code == GR_OK)
        gr_err_set(c->err, GR_ENOMEM, "kube protobuf: out of memory");
    return j;
}

/* runtime.Unknown, read in place (protobuf-c's unpack would copy the raw
 * bytes into a fresh allocation per object: a large malloc per watch event).
 * Same semantics as the generated unpack: the last occurrence of a field
 * wins, typeMeta occurrences merge, a known field with the wrong wire type
 * is malformed. */
#define PB_TYPE_MAX 256

struct pb_unknown {
    char av[PB_TYPE_MAX], kind[PB_TYPE_MAX], enc[PB_TYPE_MAX];
    const uint8_t *raw;
    size_t raw_len;
};

static void pb_cstr(char *dst, const uint8_t *p, size_t n)
{
    if (n >= PB_TYPE_MAX)
        n = PB_TYPE_MAX - 1; /* longer than any kind we know: never matches */
    memcpy(dst, p, n);
    dst[n] = '\0';
}

static bool pb_unknown_parse(const uint8_t *p, size_t n, struct pb_unknown *u)
{
    u->av[0] = u->kind[0] = u->enc[0] = '\0';
    u->raw = NULL;
    u->raw_len = 0;
    struct pb_rd r = {p, p + n};
    while (r.p < r.end) {
        uint64_t key;
        if (!rd_varint(&r, &key))
            return false;
        unsigned id = (unsigned)(key >> 3), wt = (unsigned)(key & 7);
        const uint8_t *v;
        size_t vn;
        if (id >= 1 && id <= 4) {
            if (wt != 2 || !rd_bytes(&r, &v, &vn))
                return false;
        } else if (id == 0 || !rd_skip(&r, wt)) {
            return false;
        } else {
            continue;
        }
        if (id == 1) { /* TypeMeta: apiVersion = 1, kind = 2 */
            struct pb_rd t = {v, v + vn};
            while (t.p < t.end) {
                uint64_t tk;
                const uint8_t *tv;
                size_t tn;
                if (!rd_varint(&t, &tk))
                    return false;
                unsigned tid = (unsigned)(tk >> 3), twt = (unsigned)(tk & 7);
                if (tid == 1 || tid == 2) {
                    if (twt != 2 || !rd_bytes(&t, &tv, &tn))
                        return false;
                    pb_cstr(tid == 1 ? u->av : u->kind, tv, tn);
                } else if (tid == 0 || !rd_skip(&t, twt)) {
                    return false;
                }
            }
        } else if (id == 2) {
            u->raw = v;
            u->raw_len = vn;
        } else if (id == 3) {
            pb_cstr(u->enc, v, vn);
        } /* 4: contentType, not used */
    }
    return true;
}

static json_t *pb_decode_envelope(struct pb_ctx *c, const uint8_t *buf, size_t len, bool with_type)
{
    if (len < 4 || memcmp(buf, pb_magic, 4) != 0) {
        gr_err_set(c->err, GR_EPARSE, "kube protobuf: body does not start with the k8s\\0 magic");
        return NULL;
    }
    struct pb_unknown u;
    if (!pb_unknown_parse(buf + 4, len - 4, &u)) {
        gr_err_set(c->err, GR_EPARSE, "kube protobuf: malformed runtime.Unknown envelope");
        return NULL;
    }
    json_t *out = NULL;
    const char *av = u.av, *kd = u.kind;
    bool is_list = false;
    const struct pb_kind *k = pb_kind_of(av, kd, &is_list);
    if (*u.enc) {
        gr_err_set(c->err, GR_EUNSUPPORTED, "kube protobuf: content encoding '%s' is not supported",
                   u.enc);
    } else if (!k) {
        gr_err_set(c->err, GR_EUNSUPPORTED, "kube protobuf: kind '%s' in '%s' is not supported", kd,
                   av);
    } else {
        out = pb_decode_as(c, is_list ? k->list_desc : k->desc, u.raw ? u.raw : (const uint8_t *)"",
                           u.raw ? u.raw_len : 0);
        /* The API server writes an empty list's items as [] (its List
         * types are never nil), not as encoding/json's null. */
        if (out && is_list && !json_is_array(json_object_get(out, "items")) &&
            json_object_set_new(out, "items", json_array()) != 0) {
            json_decref(out);
            out = NULL;
            gr_err_set(c->err, GR_ENOMEM, "kube protobuf: out of memory");
        }
        if (out && with_type && json_is_object(out) &&
            (json_object_set_new(out, "apiVersion", json_string(av)) != 0 ||
             json_object_set_new(out, "kind", json_string(kd)) != 0)) {
            json_decref(out);
            out = NULL;
            gr_err_set(c->err, GR_ENOMEM, "kube protobuf: out of memory");
        }
    }
    return out;
}

bool gr_kube_pb_enabled(void)
{
    return true;
}

bool gr_kube_pb_supports(const char *api_version, const char *resource)
{
    if (!api_version || !resource)
        return false;
    for (size_t i = 0; i < N_KINDS; i++)
        if (pb_kinds[i].resource && strcmp(pb_kinds[i].api_version, api_version) == 0 &&
            strcmp(pb_kinds[i].resource, resource) == 0)
            return true;
    return false;
}

int gr_kube_pb_decode(const void *buf, size_t len, size_t cap, json_t **out, gr_err *err)
{
    *out = NULL;
    if (len > cap)
        return gr_err_set(err, GR_ETOOBIG,
                          "kube protobuf: body of %zu bytes exceeds the cap of %zu", len, cap);
    int rc = pb_ready(err);
    if (rc != GR_OK)
        return rc;
    gr_err_clear(err);
    struct pb_ctx c = {.err = err, .cap = cap};
    *out = pb_decode_envelope(&c, buf, len, true);
    if (!*out)
        return err && err->code != GR_OK ? err->code : GR_ENOMEM;
    return GR_OK;
}

int gr_kube_pb_decode_watch_event(const void *buf, size_t len, size_t cap, json_t **out,
                                  gr_err *err)
{
    return gr_kube_pb_decode_watch_event_cached(buf, len, cap, NULL, out, err);
}

int gr_kube_pb_decode_watch_event_cached(const void *buf, size_t len, size_t cap,
                                         gr_kube_pb_cache *pc, json_t **out, gr_err *err)
{
    *out = NULL;
    if (len > cap)
        return gr_err_set(err, GR_ETOOBIG,
                          "kube protobuf: watch frame of %zu bytes exceeds the cap of %zu", len,
                          cap);
    int rc = pb_ready(err);
    if (rc != GR_OK)
        return rc;
    gr_err_clear(err);
    struct pb_ctx c = {.err = err, .cap = cap, .cache = pc};
    const uint8_t *p = buf;
    json_t *ev;
    if (len >= 4 && memcmp(p, pb_magic, 4) == 0)
        ev = pb_decode_envelope(&c, p, len, false);
    else
        ev = pb_decode_as(&c, &k8s__io__apimachinery__pkg__apis__meta__v1__watch_event__descriptor,
                          p, len);
    if (!ev)
        return err && err->code != GR_OK ? err->code : GR_ENOMEM;
    if (!json_is_string(json_object_get(ev, "type")) ||
        !json_is_object(json_object_get(ev, "object"))) {
        json_decref(ev);
        return gr_err_set(err, GR_EPARSE, "kube protobuf: watch event lacks a type or an object");
    }
    *out = ev;
    return GR_OK;
}

#else /* !GR_HAVE_KUBE_PB */

bool gr_kube_pb_enabled(void)
{
    return false;
}

bool gr_kube_pb_supports(const char *api_version, const char *resource)
{
    (void)api_version;
    (void)resource;
    return false;
}

int gr_kube_pb_decode(const void *buf, size_t len, size_t cap, json_t **out, gr_err *err)
{
    (void)buf;
    (void)len;
    (void)cap;
    *out = NULL;
    return gr_err_set(err, GR_EUNSUPPORTED,
                      "kube protobuf: built without the Kubernetes protos "
                      "(scripts/fetch-k8s-protos, -DGR_KUBE_PROTOBUF=ON)");
}

int gr_kube_pb_decode_watch_event(const void *buf, size_t len, size_t cap, json_t **out,
                                  gr_err *err)
{
    return gr_kube_pb_decode(buf, len, cap, out, err);
}

gr_kube_pb_cache *gr_kube_pb_cache_new(void)
{
    return NULL;
}

void gr_kube_pb_cache_free(gr_kube_pb_cache *pc)
{
    (void)pc;
}

int gr_kube_pb_decode_watch_event_cached(const void *buf, size_t len, size_t cap,
                                         gr_kube_pb_cache *pc, json_t **out, gr_err *err)
{
    (void)pc;
    return gr_kube_pb_decode(buf, len, cap, out, err);
}

#endif

int gr_kube_pb_frame(const void *buf, size_t avail, size_t cap, size_t *payload_len, gr_err *err)
{
    const unsigned char *p = buf;
    if (avail < 4)
        return 0;
    size_t n = ((size_t)p[0] << 24) | ((size_t)p[1] << 16) | ((size_t)p[2] << 8) | p[3];
    if (n > cap)
        return gr_err_set(err, GR_ETOOBIG,
                          "kube protobuf: watch frame announces %zu bytes, over the cap of %zu "
                          "(raise the watch's event size cap)",
                          n, cap);
    if (avail - 4 < n)
        return 0;
    *payload_len = n;
    return 1;
}
