/* kube_cval.c — the store's compact form of a JSON value (see kube_internal.h).
 *
 * Layout (little endian varints, LEB128):
 *   0 null | 1 true | 2 false | 3 int (zigzag varint) | 4 real (8 bytes)
 *   5 string: varint length, bytes
 *   6 array: varint count, values
 *   7 object: varint count, then per member a key reference and a value;
 *     key reference: varint r; r even: key number r/2 in the dictionary;
 *     r odd: an inline key of r/2 bytes follows (dictionary full, or a key
 *     too long to share).
 * Object keys repeat across every object of a kind, so they are stored once
 * per store in the dictionary and referenced by a 1–2 byte number; the
 * dictionary is capped (GR_KUBE_KEYDICT_MAX keys of at most 128 bytes), so
 * hostile objects with endless distinct keys cost inline keys, never an
 * unbounded dictionary. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kube_internal.h"

#define KD_CHUNK      1024
#define KD_CHUNKS     (GR_KUBE_KEYDICT_MAX / KD_CHUNK)
#define KD_MAX_KEYLEN 128

enum { T_NULL, T_TRUE, T_FALSE, T_INT, T_REAL, T_STR, T_ARR, T_OBJ };

typedef struct kd_key {
    uint32_t len;
    char s[]; /* NUL-terminated */
} kd_key;

struct gr_kube_keydict {
    pthread_mutex_t mu;
    gr_kube_map ids;            /* key -> (void *)(id + 1) */
    kd_key **chunks[KD_CHUNKS]; /* never moved: readers need no lock */
    _Atomic size_t n;           /* keys published */
    size_t bytes;               /* memory held by keys */
};

int gr_kube_keydict_new(gr_kube_keydict **out)
{
    gr_kube_keydict *d = calloc(1, sizeof *d);
    if (!d)
        return GR_ENOMEM;
    pthread_mutex_init(&d->mu, NULL);
    *out = d;
    return GR_OK;
}

void gr_kube_keydict_free(gr_kube_keydict *d)
{
    if (!d)
        return;
    size_t n = atomic_load(&d->n);
    for (size_t i = 0; i < n; i++)
        free(d->chunks[i / KD_CHUNK][i % KD_CHUNK]);
    for (size_t c = 0; c < KD_CHUNKS; c++)
        free(d->chunks[c]);
    gr_kube_map_clear(&d->ids, NULL);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

size_t gr_kube_keydict_len(gr_kube_keydict *d)
{
    return atomic_load(&d->n);
}

static const kd_key *kd_get(const gr_kube_keydict *d, size_t id)
{
    if (id >= atomic_load(&((gr_kube_keydict *)(uintptr_t)d)->n))
        return NULL;
    return d->chunks[id / KD_CHUNK][id % KD_CHUNK];
}

/* The key's number, adding it when there is room; -1 when it must stay
 * inline. Called with d->mu held. */
static long kd_intern(gr_kube_keydict *d, const char *k, size_t len)
{
    if (len > KD_MAX_KEYLEN || memchr(k, '\0', len))
        return -1;
    char tmp[KD_MAX_KEYLEN + 1];
    memcpy(tmp, k, len);
    tmp[len] = '\0';
    void *v = gr_kube_map_get(&d->ids, tmp);
    if (v)
        return (long)((uintptr_t)v - 1);
    size_t n = atomic_load(&d->n);
    if (n >= GR_KUBE_KEYDICT_MAX)
        return -1;
    size_t c = n / KD_CHUNK;
    if (!d->chunks[c] && !(d->chunks[c] = calloc(KD_CHUNK, sizeof(kd_key *))))
        return -1;
    kd_key *e = malloc(sizeof *e + len + 1);
    if (!e)
        return -1;
    e->len = (uint32_t)len;
    memcpy(e->s, tmp, len + 1);
    if (gr_kube_map_put(&d->ids, tmp, (void *)(uintptr_t)(n + 1), NULL) != GR_OK) {
        free(e);
        return -1;
    }
    d->chunks[c][n % KD_CHUNK] = e;
    d->bytes += sizeof *e + len + 1;
    atomic_store(&d->n, n + 1); /* publish after the slot is written */
    return (long)n;
}

/* ---- encode ------------------------------------------------------------ */

static int put_varint(gr_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        tmp[n++] = (uint8_t)(byte | (v ? 0x80 : 0));
    } while (v);
    return gr_buf_append(b, tmp, n);
}

static int put_tag(gr_buf *b, int tag)
{
    uint8_t t = (uint8_t)tag;
    return gr_buf_append(b, &t, 1);
}

static int enc(gr_kube_keydict *d, const json_t *v, gr_buf *b)
{
    int rc;
    switch (json_typeof(v)) {
    case JSON_NULL:
        return put_tag(b, T_NULL);
    case JSON_TRUE:
        return put_tag(b, T_TRUE);
    case JSON_FALSE:
        return put_tag(b, T_FALSE);
    case JSON_INTEGER: {
        int64_t i = (int64_t)json_integer_value(v);
        uint64_t z = ((uint64_t)i << 1) ^ (uint64_t)(i >> 63);
        rc = put_tag(b, T_INT);
        return rc == GR_OK ? put_varint(b, z) : rc;
    }
    case JSON_REAL: {
        double r = json_real_value(v);
        rc = put_tag(b, T_REAL);
        return rc == GR_OK ? gr_buf_append(b, &r, sizeof r) : rc;
    }
    case JSON_STRING: {
        size_t n = json_string_length(v);
        rc = put_tag(b, T_STR);
        if (rc == GR_OK)
            rc = put_varint(b, n);
        return rc == GR_OK ? gr_buf_append(b, json_string_value(v), n) : rc;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        rc = put_tag(b, T_ARR);
        if (rc == GR_OK)
            rc = put_varint(b, n);
        for (size_t i = 0; rc == GR_OK && i < n; i++)
            rc = enc(d, json_array_get(v, i), b);
        return rc;
    }
    case JSON_OBJECT: {
        rc = put_tag(b, T_OBJ);
        if (rc == GR_OK)
            rc = put_varint(b, json_object_size(v));
        for (void *it = json_object_iter((json_t *)(uintptr_t)v); rc == GR_OK && it;
             it = json_object_iter_next((json_t *)(uintptr_t)v, it)) {
            const char *k = json_object_iter_key(it);
            size_t kl = json_object_iter_key_len(it);
            long id = kd_intern(d, k, kl);
            if (id >= 0) {
                rc = put_varint(b, (uint64_t)id << 1);
            } else {
                rc = put_varint(b, ((uint64_t)kl << 1) | 1);
                if (rc == GR_OK)
                    rc = gr_buf_append(b, k, kl);
            }
            if (rc == GR_OK)
                rc = enc(d, json_object_iter_value(it), b);
        }
        return rc;
    }
    }
    return GR_EINVAL;
}

int gr_kube_cval_encode(gr_kube_keydict *d, const json_t *v, gr_buf *b)
{
    pthread_mutex_lock(&d->mu);
    int rc = enc(d, v, b);
    pthread_mutex_unlock(&d->mu);
    return rc;
}

/* ---- decode ------------------------------------------------------------ */

typedef struct rd {
    const uint8_t *p, *end;
} rd;

static bool get_varint(rd *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && r->p < r->end; shift += 7) {
        uint8_t byte = *r->p++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* An object key: inline (length << 1 | 1, then the bytes) or an id into
 * the key dictionary (id << 1). false on truncated input or an unknown id. */
static bool get_key(const gr_kube_keydict *d, rd *r, const char **k, size_t *kl)
{
    uint64_t kr;
    if (!get_varint(r, &kr))
        return false;
    if (kr & 1) {
        *kl = (size_t)(kr >> 1);
        if (*kl > (size_t)(r->end - r->p))
            return false;
        *k = (const char *)r->p;
        r->p += *kl;
        return true;
    }
    const kd_key *e = kd_get(d, (size_t)(kr >> 1));
    if (!e)
        return false;
    *k = e->s;
    *kl = e->len;
    return true;
}

static json_t *dec(const gr_kube_keydict *d, rd *r, int depth)
{
    if (r->p >= r->end || depth > 4096)
        return NULL;
    int tag = *r->p++;
    uint64_t n;
    switch (tag) {
    case T_NULL:
        return json_null();
    case T_TRUE:
        return json_true();
    case T_FALSE:
        return json_false();
    case T_INT: {
        if (!get_varint(r, &n))
            return NULL;
        int64_t i = (int64_t)(n >> 1) ^ -(int64_t)(n & 1);
        return json_integer((json_int_t)i);
    }
    case T_REAL: {
        double x;
        if ((size_t)(r->end - r->p) < sizeof x)
            return NULL;
        memcpy(&x, r->p, sizeof x);
        r->p += sizeof x;
        return json_real(x);
    }
    case T_STR: {
        if (!get_varint(r, &n) || n > (uint64_t)(r->end - r->p))
            return NULL;
        json_t *s = json_stringn_nocheck((const char *)r->p, (size_t)n);
        r->p += n;
        return s;
    }
    case T_ARR: {
        if (!get_varint(r, &n))
            return NULL;
        json_t *a = json_array();
        for (uint64_t i = 0; a && i < n; i++) {
            json_t *x = dec(d, r, depth + 1);
            if (!x || json_array_append_new(a, x) != 0) {
                json_decref(a);
                return NULL;
            }
        }
        return a;
    }
    case T_OBJ: {
        if (!get_varint(r, &n))
            return NULL;
        json_t *o = json_object();
        for (uint64_t i = 0; o && i < n; i++) {
            const char *k;
            size_t kl;
            if (!get_key(d, r, &k, &kl))
                goto bad;
            json_t *x = dec(d, r, depth + 1);
            if (!x || json_object_setn_new_nocheck(o, k, kl, x) != 0)
                goto bad;
        }
        return o;
    bad:
        json_decref(o);
        return NULL;
    }
    default:
        return NULL;
    }
}

/* Whether the value at r equals `like`; r is advanced past it when it does
 * (unchanged otherwise). Allocates nothing. */
static bool eq(const gr_kube_keydict *d, rd *r, const json_t *like, int depth)
{
    rd s = *r;
    if (!like || s.p >= s.end || depth > 4096)
        return false;
    int tag = *s.p++;
    uint64_t n;
    switch (tag) {
    case T_NULL:
        if (!json_is_null(like))
            return false;
        break;
    case T_TRUE:
        if (!json_is_true(like))
            return false;
        break;
    case T_FALSE:
        if (!json_is_false(like))
            return false;
        break;
    case T_INT:
        if (!json_is_integer(like) || !get_varint(&s, &n) ||
            ((int64_t)(n >> 1) ^ -(int64_t)(n & 1)) != (int64_t)json_integer_value(like))
            return false;
        break;
    case T_REAL: {
        double x;
        if (!json_is_real(like) || (size_t)(s.end - s.p) < sizeof x)
            return false;
        memcpy(&x, s.p, sizeof x);
        double y = json_real_value(like);
        if (memcmp(&x, &y, sizeof x) != 0)
            return false;
        s.p += sizeof x;
        break;
    }
    case T_STR:
        if (!json_is_string(like) || !get_varint(&s, &n) || n > (uint64_t)(s.end - s.p) ||
            n != json_string_length(like) || memcmp(s.p, json_string_value(like), (size_t)n) != 0)
            return false;
        s.p += n;
        break;
    case T_ARR:
        if (!json_is_array(like) || !get_varint(&s, &n) || n != json_array_size(like))
            return false;
        for (uint64_t i = 0; i < n; i++)
            if (!eq(d, &s, json_array_get(like, (size_t)i), depth + 1))
                return false;
        break;
    case T_OBJ:
        if (!json_is_object(like) || !get_varint(&s, &n) || n != json_object_size(like))
            return false;
        for (uint64_t i = 0; i < n; i++) {
            const char *k;
            size_t kl;
            if (!get_key(d, &s, &k, &kl))
                return false;
            if (!eq(d, &s, json_object_getn(like, k, kl), depth + 1))
                return false;
        }
        break;
    default:
        return false;
    }
    *r = s;
    return true;
}

/* dec(), taking every value that equals its counterpart in `like` (same
 * key, same array index) from `like` by reference. */
static json_t *dec_like(const gr_kube_keydict *d, rd *r, const json_t *like, int depth)
{
    if (!like || r->p >= r->end || depth > 4096)
        return dec(d, r, depth);
    if (eq(d, r, like, depth))
        return json_incref((json_t *)(uintptr_t)like);
    int tag = *r->p;
    if ((tag != T_ARR || !json_is_array(like)) && (tag != T_OBJ || !json_is_object(like)))
        return dec(d, r, depth);
    r->p++;
    uint64_t n;
    if (!get_varint(r, &n))
        return NULL;
    if (tag == T_ARR) {
        json_t *a = json_array();
        for (uint64_t i = 0; a && i < n; i++) {
            json_t *x = dec_like(d, r, json_array_get(like, (size_t)i), depth + 1);
            if (!x || json_array_append_new(a, x) != 0) {
                json_decref(a);
                return NULL;
            }
        }
        return a;
    }
    json_t *o = json_object();
    for (uint64_t i = 0; o && i < n; i++) {
        const char *k;
        size_t kl;
        if (!get_key(d, r, &k, &kl))
            goto bad;
        json_t *x = dec_like(d, r, json_object_getn(like, k, kl), depth + 1);
        if (!x || json_object_setn_new_nocheck(o, k, kl, x) != 0)
            goto bad;
    }
    return o;
bad:
    json_decref(o);
    return NULL;
}

json_t *gr_kube_cval_decode_like(const gr_kube_keydict *d, const void *data, size_t len,
                                 const json_t *like)
{
    rd r = {data, (const uint8_t *)data + len};
    json_t *v = dec_like(d, &r, like, 0);
    if (v && r.p != r.end) {
        json_decref(v);
        return NULL;
    }
    return v;
}

json_t *gr_kube_cval_decode(const gr_kube_keydict *d, const void *data, size_t len)
{
    rd r = {data, (const uint8_t *)data + len};
    json_t *v = dec(d, &r, 0);
    if (v && r.p != r.end) {
        json_decref(v);
        return NULL;
    }
    return v;
}
