/*
 * gr_preflight_internal.h — helpers shared by the gr_preflight sources.
 * Not a public API.
 */
#ifndef GR_PREFLIGHT_INTERNAL_H
#define GR_PREFLIGHT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <jansson.h>

#include "gr_buf.h"
#include "gr_preflight.h"
#include "gr_quantity.h"

/* Longest JSON text the webhook builds in one buffer (patches, responses,
 * parts serialised at config load, decoded strings, metrics). */
#define GR_PF_TEXT_MAX ((size_t)64 * 1024 * 1024)

/* Member `key` of an object, matched exactly first, then
 * case-insensitively (upstream decodes config keys case-insensitively).
 * Borrowed; NULL when absent or obj is not an object. */
json_t *gr_pf_get(const json_t *obj, const char *key);

/* A resource quantity from JSON: a string, or a number (Go's
 * Quantity.UnmarshalJSON accepts both). GR_EINVAL/GR_EPARSE otherwise. */
int gr_pf_quantity_from_json(const json_t *v, gr_quantity *out, gr_err *err);

/* jansson's iteration macros take non-const pointers; we only read. */
static inline json_t *gr_pf_mut(const json_t *v)
{
    union {
        const json_t *c;
        json_t *m;
    } u = {.c = v};
    return u.m;
}

void gr_pf_strv_free(gr_preflight_strv *sv);

/* ------------------------------------------------------- JSON text */

/* Append n bytes: an inline memcpy when they fit the allocation (the hot
 * path of the patch writer), else gr_buf_append(). */
static inline int gr_pf_put(gr_buf *b, const void *s, size_t n)
{
    if (b->data && n < b->cap - b->len && b->len + n <= b->max) {
        memcpy(b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = 0;
        return GR_OK;
    }
    return gr_buf_append(b, s, n);
}

static inline int gr_pf_putc(gr_buf *b, char c)
{
    return gr_pf_put(b, &c, 1);
}

/* Append `s` (n bytes) as a quoted JSON string, escaped exactly as
 * jansson's json_dumps() does without flags: \" \\ \b \f \n \r \t, other
 * bytes < 0x20 as \u00XX (upper-case hex), everything else verbatim.
 * GR_ENOMEM / GR_ETOOBIG. */
int gr_pf_json_str(gr_buf *b, const char *s, size_t n);

/* Append `v` (borrowed) as compact JSON, byte for byte what
 * json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) gives (objects in
 * insertion order). GR_ENOMEM / GR_ETOOBIG. */
int gr_pf_json_value(gr_buf *b, const json_t *v);

/* Parse JSON text into a new json_t (caller decrefs): accepts exactly
 * what json_loadb(buf, len, JSON_REJECT_DUPLICATES) accepts and builds the
 * same value, several times faster (gr_preflight_json.c). GR_EPARSE /
 * GR_ENOMEM. */
int gr_pf_json_parse(const char *buf, size_t len, json_t **out);

/* ------------------------------------------- precomputed config parts */

/* A compiled glob: literal and "prefix*" patterns (the common ones) are
 * matched without the general matcher. */
typedef struct gr_pf_glob {
    const char *pat; /* borrowed from the config */
    size_t len;      /* literal: whole pattern; prefix: bytes before '*' */
    enum { GR_PF_GLOB_LITERAL, GR_PF_GLOB_PREFIX, GR_PF_GLOB_GENERAL } kind;
} gr_pf_glob;

/* One list item (env var, volume mount, volume, claim, …) serialised at
 * config load. A dynamic item is `json` + a JSON string filled per pod
 * (the gang id or the gang ConfigMap name) + `post`. */
typedef struct gr_pf_item {
    char *name;      /* env/mount/volume name, or NULL; owned */
    char *path;      /* volume mounts: mountPath; else NULL; owned */
    char *json;      /* compact JSON (or its part before the dynamic value); owned */
    size_t json_len; /* for a "key":value member: the whole member */
    size_t key_len;  /* members: length of the `"key":` prefix */
    char *post;      /* after the dynamic value, or NULL; owned */
    size_t post_len;
    unsigned flags; /* GR_PF_* below */
} gr_pf_item;

enum {
    GR_PF_GANG_ONLY = 1u << 0,   /* only for gang members */
    GR_PF_DYN_GANG_ID = 1u << 1, /* dynamic value: the gang id */
    GR_PF_DYN_GANG_CM = 1u << 2, /* dynamic value: the gang ConfigMap name */
    GR_PF_NEEDS_VOLUME = 1u << 3 /* mount only when the pod has a volume `name` */
};

typedef struct gr_pf_items {
    gr_pf_item *v;
    size_t n, cap;
} gr_pf_items;

/* Kinds of template members (top level and inside `resources`). */
enum {
    GR_PF_KEY_VERBATIM = 0,
    GR_PF_KEY_RESOURCES,
    GR_PF_KEY_ENV,
    GR_PF_KEY_MOUNTS,
    GR_PF_KEY_LIMITS,
    GR_PF_KEY_REQUESTS,
    GR_PF_KEY_CLAIMS,
};

/* State of a template member the injector may have to create. */
enum { GR_PF_ABSENT = 0, GR_PF_REPLACE, GR_PF_PRESENT };

/* An init-container template taken apart so that a pod's container is a
 * sequence of memcpy()s plus the few pod-dependent parts. */
typedef struct gr_pf_check {
    gr_pf_items keys; /* top-level members in template order; json = `"k":v`,
                         flags = GR_PF_KEY_* kind */
    bool has_resources, has_env, has_mounts;
    gr_pf_items rkeys; /* members of `resources`, same encoding */
    int limits_state;  /* GR_PF_ABSENT | REPLACE (null) | PRESENT */
    int requests_state;
    int claims_state;     /* REPLACE: present but not a list */
    gr_pf_items limits;   /* template limits members: name = key */
    gr_pf_items requests; /* template requests members */
    gr_pf_items claims;   /* template claims items (name = its "name" or NULL) */
    gr_pf_items env;      /* template env, then the common and (GR_PF_GANG_ONLY)
                             gang env the injector adds, already deduplicated */
    gr_pf_items mounts;   /* template mounts, then the token and CA mounts */
} gr_pf_check;

typedef struct gr_pf_compiled {
    gr_pf_check *checks; /* parallel to cfg->checks */
    size_t n_checks;
    gr_pf_items gang_mounts;  /* gang ConfigMap, dshm, nccl-topo, extra host path,
                                 extra volume (GR_PF_NEEDS_VOLUME) mounts */
    gr_pf_items volumes;      /* pod volumes in documented order */
    gr_pf_items pull_secrets; /* {name} items */
    gr_pf_items res_names;    /* gpu then network names, deduplicated; json = `"name":` */
    size_t n_gpu_names;       /* the first n_gpu_names of res_names are GPU names */
    gr_pf_glob *env_globs;
    size_t n_env_globs;
    gr_pf_glob *mount_globs;
    size_t n_mount_globs;
} gr_pf_compiled;

/* Build cfg->compiled from the parsed config (called once at load). */
int gr_pf_compile(gr_preflight_config *cfg, gr_err *err);
void gr_pf_compiled_free(gr_pf_compiled *c);

bool gr_pf_glob_any(const gr_pf_glob *g, size_t n, const char *name);

#endif
