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
};

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

/* Embedded bytes that are JSON (FieldsV1, RawExtension) or an envelope. */
static json_t *pb_embedded(struct pb_ctx *c, const ProtobufCBinaryData *b, const char *what)
{
    if (b->len >= 4 && memcmp(b->data, pb_magic, 4) == 0) {
        if (c->depth >= GR_KUBE_PB_MAX_DEPTH) {
            gr_err_set(c->err, GR_EPARSE, "kube protobuf: %s: envelopes nested deeper than %d",
                       what, GR_KUBE_PB_MAX_DEPTH);
            return NULL;
        }
        c->depth++;
        json_t *j = pb_decode_envelope(c, b->data, b->len, true);
        c->depth--;
        return j;
    }
    json_error_t je;
    json_t *j = json_loadb((const char *)b->data, b->len, JSON_DECODE_ANY, &je);
    if (!j)
        gr_err_set(c->err, GR_EPARSE, "kube protobuf: %s: embedded JSON: %s (at byte %d)", what,
                   je.text, je.position);
    return j;
}

static json_t *pb_message(struct pb_ctx *c, const ProtobufCMessage *m);

static json_t *pb_special(struct pb_ctx *c, const ProtobufCMessage *m, bool *handled)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    *handled = true;
    if (d == &k8s__io__apimachinery__pkg__apis__meta__v1__time__descriptor) {
        const K8s__Io__Apimachinery__Pkg__Apis__Meta__V1__Time *t = (const void *)m;
        if (!t->has_seconds && !t->has_nanos)
            return json_null();
        /* Go's Time keeps seconds only (time_proto.go). */
        return pb_time(t->seconds, 0, false);
    }
    if (d == &k8s__io__apimachinery__pkg__apis__meta__v1__micro_time__descriptor) {
        const K8s__Io__Apimachinery__Pkg__Apis__Meta__V1__MicroTime *t = (const void *)m;
        if (!t->has_seconds && !t->has_nanos)
            return json_null();
        return pb_time(t->seconds, t->nanos / 1000, true);
    }
    if (d == &k8s__io__apimachinery__pkg__api__resource__quantity__descriptor) {
        const K8s__Io__Apimachinery__Pkg__Api__Resource__Quantity *q = (const void *)m;
        return json_string(q->string ? q->string : "0");
    }
    if (d == &k8s__io__apimachinery__pkg__util__intstr__int_or_string__descriptor) {
        const K8s__Io__Apimachinery__Pkg__Util__Intstr__IntOrString *v = (const void *)m;
        if (v->type == 1)
            return json_string(v->strval ? v->strval : "");
        return json_integer(v->intval);
    }
    if (d == &k8s__io__apimachinery__pkg__apis__meta__v1__fields_v1__descriptor) {
        const K8s__Io__Apimachinery__Pkg__Apis__Meta__V1__FieldsV1 *v = (const void *)m;
        if (!v->has_raw || v->raw.len == 0)
            return json_null();
        return pb_embedded(c, &v->raw, "FieldsV1");
    }
    if (d == &k8s__io__apimachinery__pkg__runtime__raw_extension__descriptor) {
        const K8s__Io__Apimachinery__Pkg__Runtime__RawExtension *v = (const void *)m;
        if (!v->has_raw || v->raw.len == 0)
            return json_null();
        return pb_embedded(c, &v->raw, "RawExtension");
    }
    *handled = false;
    return NULL;
}

static bool pb_is_map_entry(const ProtobufCMessageDescriptor *d)
{
    size_t n = strlen(d->short_name);
    return d->n_fields == 2 && n > 5 && strcmp(d->short_name + n - 5, "Entry") == 0 &&
           strcmp(d->fields[0].name, "key") == 0 && strcmp(d->fields[1].name, "value") == 0;
}

/* One scalar value at p; *zero tells whether it is Go's zero value. */
static json_t *pb_scalar(const ProtobufCFieldDescriptor *f, const void *p, unsigned flags,
                         bool *zero)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32: {
        int32_t v = *(const int32_t *)p;
        *zero = v == 0;
        return json_integer(v);
    }
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32: {
        uint32_t v = *(const uint32_t *)p;
        *zero = v == 0;
        return json_integer((json_int_t)v);
    }
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64: {
        int64_t v = *(const int64_t *)p;
        *zero = v == 0;
        return json_integer((json_int_t)v);
    }
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64: {
        uint64_t v = *(const uint64_t *)p;
        *zero = v == 0;
        return v > (uint64_t)INT64_MAX ? json_real((double)v) : json_integer((json_int_t)v);
    }
    case PROTOBUF_C_TYPE_FLOAT: {
        float v = *(const float *)p;
        *zero = v == 0;
        return json_real((double)v);
    }
    case PROTOBUF_C_TYPE_DOUBLE: {
        double v = *(const double *)p;
        *zero = v == 0;
        return json_real(v);
    }
    case PROTOBUF_C_TYPE_BOOL: {
        protobuf_c_boolean v = *(const protobuf_c_boolean *)p;
        *zero = !v;
        return json_boolean(v);
    }
    case PROTOBUF_C_TYPE_ENUM: {
        int v = *(const int *)p;
        *zero = v == 0;
        return json_integer(v);
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;
        *zero = !s || !*s;
        return json_string(s ? s : "");
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const ProtobufCBinaryData *b = p;
        *zero = b->len == 0;
        (void)flags;
        return pb_base64(b->data, b->len);
    }
    default:
        *zero = true;
        return json_null();
    }
}

static size_t pb_scalar_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_ENUM:
        return sizeof(int);
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    default:
        return 4;
    }
}

static json_t *pb_value(struct pb_ctx *c, const ProtobufCFieldDescriptor *f, const void *p,
                        unsigned flags, bool *zero)
{
    if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
        const ProtobufCMessage *sub = *(ProtobufCMessage *const *)p;
        *zero = sub == NULL;
        return sub ? pb_message(c, sub) : json_null();
    }
    return pb_scalar(f, p, flags, zero);
}

/* Writes m's fields into obj (inline members write into the same object). */
static int pb_fields(struct pb_ctx *c, const ProtobufCMessage *m, json_t *obj)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const struct pb_msg_info *info = pb_info(d);
    if (!info)
        return gr_err_set(c->err, GR_EUNSUPPORTED, "kube protobuf: no JSON facts for message %s",
                          d->name);
    const char *base = (const char *)m;
    for (unsigned k = 0; k < d->n_fields; k++) {
        const ProtobufCFieldDescriptor *f = &d->fields[k];
        unsigned flags = info->fields[k].flags;
        const char *name = info->fields[k].json;
        if (flags & KUBE_PB_SKIP)
            continue;
        json_t *v = NULL;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + f->quantifier_offset);
            const char *arr = *(char *const *)(base + f->offset);
            bool is_map = f->type == PROTOBUF_C_TYPE_MESSAGE && pb_is_map_entry(f->descriptor);
            if (n == 0) {
                if (flags & KUBE_PB_OMITEMPTY)
                    continue;
                v = json_null(); /* a nil slice or map */
            } else if (is_map) {
                v = json_object();
                const ProtobufCMessageDescriptor *ed = f->descriptor;
                for (size_t i = 0; v && i < n; i++) {
                    const char *e = ((char *const *)arr)[i];
                    const char *key = *(char *const *)(e + ed->fields[0].offset);
                    bool z;
                    json_t *ev = pb_value(c, &ed->fields[1], e + ed->fields[1].offset, 0, &z);
                    if (!ev || json_object_set_new(v, key ? key : "", ev) != 0) {
                        json_decref(v);
                        v = NULL;
                    }
                }
            } else {
                v = json_array();
                size_t sz = pb_scalar_size(f->type);
                for (size_t i = 0; v && i < n; i++) {
                    bool z;
                    json_t *ev = pb_value(c, f, arr + i * sz, 0, &z);
                    if (!ev || json_array_append_new(v, ev) != 0) {
                        json_decref(v);
                        v = NULL;
                    }
                }
            }
        } else if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            const ProtobufCMessage *sub = *(ProtobufCMessage *const *)(base + f->offset);
            if (!sub)
                continue;
            if (flags & KUBE_PB_INLINE) {
                int rc = pb_fields(c, sub, obj);
                if (rc != GR_OK)
                    return rc;
                continue;
            }
            v = pb_message(c, sub);
        } else {
            bool has = true;
            if (f->type == PROTOBUF_C_TYPE_STRING)
                has = *(char *const *)(base + f->offset) != NULL;
            else if (f->quantifier_offset)
                has = *(const protobuf_c_boolean *)(base + f->quantifier_offset) != 0;
            if (!has && (flags & (KUBE_PB_PTR | KUBE_PB_OMITEMPTY)))
                continue;
            bool zero;
            v = pb_scalar(f, base + f->offset, flags, &zero);
            if (v && zero && (flags & KUBE_PB_OMITEMPTY) && !(flags & KUBE_PB_PTR)) {
                json_decref(v);
                continue;
            }
        }
        if (!v)
            return c->err && c->err->code != GR_OK
                       ? c->err->code
                       : gr_err_set(c->err, GR_ENOMEM, "kube protobuf: out of memory");
        if (json_object_set_new(obj, name, v) != 0)
            return gr_err_set(c->err, GR_ENOMEM, "kube protobuf: out of memory");
    }
    return GR_OK;
}

static json_t *pb_message(struct pb_ctx *c, const ProtobufCMessage *m)
{
    bool handled;
    json_t *s = pb_special(c, m, &handled);
    if (handled)
        return s;
    json_t *obj = json_object();
    if (!obj)
        return NULL;
    if (pb_fields(c, m, obj) != GR_OK) {
        json_decref(obj);
        return NULL;
    }
    return obj;
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
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, len, buf);
    if (!m) {
        gr_err_set(c->err, GR_EPARSE, "kube protobuf: malformed %s message (%zu bytes)", d->name,
                   len);
        return NULL;
    }
    json_t *j = pb_message(c, m);
    protobuf_c_message_free_unpacked(m, NULL);
    if (!j && c->err && c->err->code == GR_OK)
        gr_err_set(c->err, GR_ENOMEM, "kube protobuf: out of memory");
    return j;
}

static json_t *pb_decode_envelope(struct pb_ctx *c, const uint8_t *buf, size_t len, bool with_type)
{
    if (len < 4 || memcmp(buf, pb_magic, 4) != 0) {
        gr_err_set(c->err, GR_EPARSE, "kube protobuf: body does not start with the k8s\\0 magic");
        return NULL;
    }
    K8s__Io__Apimachinery__Pkg__Runtime__Unknown *u =
        k8s__io__apimachinery__pkg__runtime__unknown__unpack(NULL, len - 4, buf + 4);
    if (!u) {
        gr_err_set(c->err, GR_EPARSE, "kube protobuf: malformed runtime.Unknown envelope");
        return NULL;
    }
    json_t *out = NULL;
    const char *av = u->typemeta && u->typemeta->apiversion ? u->typemeta->apiversion : "";
    const char *kd = u->typemeta && u->typemeta->kind ? u->typemeta->kind : "";
    bool is_list = false;
    const struct pb_kind *k = pb_kind_of(av, kd, &is_list);
    if (u->contentencoding && *u->contentencoding) {
        gr_err_set(c->err, GR_EUNSUPPORTED, "kube protobuf: content encoding '%s' is not supported",
                   u->contentencoding);
    } else if (!k) {
        gr_err_set(c->err, GR_EUNSUPPORTED, "kube protobuf: kind '%s' in '%s' is not supported", kd,
                   av);
    } else {
        out = pb_decode_as(c, is_list ? k->list_desc : k->desc,
                           u->has_raw ? u->raw.data : (const uint8_t *)"",
                           u->has_raw ? u->raw.len : 0);
        if (out && with_type && json_is_object(out) &&
            (json_object_set_new(out, "apiVersion", json_string(av)) != 0 ||
             json_object_set_new(out, "kind", json_string(kd)) != 0)) {
            json_decref(out);
            out = NULL;
            gr_err_set(c->err, GR_ENOMEM, "kube protobuf: out of memory");
        }
    }
    k8s__io__apimachinery__pkg__runtime__unknown__free_unpacked(u, NULL);
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
    *out = NULL;
    if (len > cap)
        return gr_err_set(err, GR_ETOOBIG,
                          "kube protobuf: watch frame of %zu bytes exceeds the cap of %zu", len,
                          cap);
    int rc = pb_ready(err);
    if (rc != GR_OK)
        return rc;
    gr_err_clear(err);
    struct pb_ctx c = {.err = err, .cap = cap};
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
