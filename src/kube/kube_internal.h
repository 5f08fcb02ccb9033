/*
 * kube_internal.h — helpers shared by the gr_kube sources; not installed and
 * not part of the public API.
 *
 * gr_kube_map: a string-keyed hash map (chained, power-of-two buckets). The
 * map copies keys into its nodes; values are opaque pointers the caller owns.
 * Not thread-safe (callers hold their own locks).
 */
#ifndef GR_KUBE_INTERNAL_H
#define GR_KUBE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_buf.h"
#include "gr_err.h"

typedef struct gr_kube_map_node {
    struct gr_kube_map_node *next;
    void *val;
    uint32_t hash;
    char key[]; /* NUL-terminated copy */
} gr_kube_map_node;

typedef struct gr_kube_map {
    gr_kube_map_node **b;
    size_t nb; /* buckets (0 or a power of two) */
    size_t n;  /* entries */
} gr_kube_map;

uint32_t gr_kube_map_hash(const char *s);
/* Insert or replace. *old (optional) receives the replaced value (NULL when
 * the key was new). GR_ENOMEM. */
int gr_kube_map_put(gr_kube_map *m, const char *key, void *val, void **old);
/* The node (key stays valid while the node lives), or NULL. */
gr_kube_map_node *gr_kube_map_find(const gr_kube_map *m, const char *key);
void *gr_kube_map_get(const gr_kube_map *m, const char *key);
bool gr_kube_map_has(const gr_kube_map *m, const char *key);
/* Remove; returns true when it was present, *old (optional) gets the value. */
bool gr_kube_map_del(gr_kube_map *m, const char *key, void **old);
/* Free the nodes (not the values; call free_val on each first if given). */
void gr_kube_map_clear(gr_kube_map *m, void (*free_val)(void *));
/* Iterate: start with *bucket = 0, *node = NULL; returns NULL at the end.
 * The map must not change during iteration. */
gr_kube_map_node *gr_kube_map_next(const gr_kube_map *m, size_t *bucket, gr_kube_map_node **node);

/* The informer store's compact form of a JSON value (kube_cval.c): a
 * tagged binary encoding (varint lengths, no quotes or separators) whose
 * object keys are numbers into a per-store key dictionary. Encoding walks a
 * parsed object (no text); decoding builds jansson objects directly (no
 * lexing). The dictionary is thread-safe: encoders serialise on its mutex,
 * decoders read without a lock. At most GR_KUBE_KEYDICT_MAX keys of at most
 * 128 bytes are shared; others are stored inline. */
#define GR_KUBE_KEYDICT_MAX 65536
typedef struct gr_kube_keydict gr_kube_keydict;
int gr_kube_keydict_new(gr_kube_keydict **out); /* GR_ENOMEM */
void gr_kube_keydict_free(gr_kube_keydict *d);
size_t gr_kube_keydict_len(gr_kube_keydict *d);
/* Append v's compact form to b. GR_ENOMEM / GR_ETOOBIG (b's cap). */
int gr_kube_cval_encode(gr_kube_keydict *d, const json_t *v, gr_buf *b);
/* A new object from a compact form (NULL when malformed or out of memory). */
json_t *gr_kube_cval_decode(const gr_kube_keydict *d, const void *data, size_t len);
/* The same, but every value equal to its counterpart in `like` (same key,
 * same array index) is `like`'s, by reference (json_incref), not a copy: the
 * result shares the unchanged parts of `like` (an update's old object and
 * its new one), so neither may be modified while both are alive. */
json_t *gr_kube_cval_decode_like(const gr_kube_keydict *d, const void *data, size_t len,
                                 const json_t *like);

/* Clocks (the I/O layer only; pure logic takes the time as a parameter). */
int64_t gr_kube_mono_ns(void);
int64_t gr_kube_real_ns(void);
/* Sleep up to ns, waking early when *stop becomes non-zero (polls every
 * 50 ms). Returns GR_ECANCELED when stopped. stop may be NULL. */
int gr_kube_sleep_ns(int64_t ns, const atomic_int *stop);

/* metav1.Time ("2006-01-02T15:04:05Z") or MicroTime (".000000Z") from Unix
 * nanoseconds. out must hold 32 bytes. */
void gr_kube_fmt_time(int64_t unix_ns, bool micro, char out[32]);

/* Borrowed string members: obj.metadata.<field> or NULL. */
const char *gr_kube_meta_str(const json_t *obj, const char *field);

/* A valid metav1.Condition / events.k8s.io reason
 * (^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$, at most 1024 bytes)? */
bool gr_kube_camel_reason(const char *r);

/* Percent-encode for a URL query value or path segment (RFC 3986
 * unreserved kept). */
int gr_kube_url_escape(gr_buf *b, const char *s);

#endif
