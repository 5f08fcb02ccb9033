/*
 * gr_preflight_internal.h — helpers shared by the gr_preflight sources.
 * Not a public API.
 */
#ifndef GR_PREFLIGHT_INTERNAL_H
#define GR_PREFLIGHT_INTERNAL_H

#include <jansson.h>

#include "gr_preflight.h"
#include "gr_quantity.h"

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

#endif
