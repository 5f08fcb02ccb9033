/*
 * cel_lib.h — helpers shared by the CEL library files (cel_lib.c, cel_k8s.c);
 * internal, not installed.
 *
 * Ownership: functions returning gr_cel_val return a new reference (an error
 * value on failure, anchored at the node's offset); functions taking items
 * take over their references as stated. Errors are CEL error values
 * (GR_ENOMEM "out of memory", GR_EINVAL, GR_ETOOBIG), never crashes.
 */
#ifndef GR_CEL_LIB_H
#define GR_CEL_LIB_H

#include "cel_ast.h"

/* A constructor's error (offset 0) re-anchored at n; other values pass. */
gr_cel_val cel_lib_at(const cel_node *n, gr_cel_val v);
/* "out of memory" at n. */
gr_cel_val cel_lib_oom(const cel_node *n);
/* A string from the buffer's contents; frees the buffer. */
gr_cel_val cel_lib_str_from_buf(const cel_node *n, gr_buf *b);
/* A list taking over items[0..k) (also on failure); the array stays the caller's. */
gr_cel_val cel_lib_list_of(const cel_node *n, gr_cel_val *items, size_t k);
/* All elements of a list as new references (free with cel_lib_items_free);
 * NULL on ENOMEM. */
gr_cel_val *cel_lib_list_items(const gr_cel_val *l, size_t *n);
void cel_lib_items_free(gr_cel_val *v, size_t n);

/* A growable array of values (owned references). */
typedef struct cel_vec {
    gr_cel_val *v;
    size_t n, cap;
} cel_vec;
/* Append v (taken over; released on failure). false on ENOMEM. */
bool cel_vec_push(cel_vec *x, gr_cel_val v);

/* cel_k8s.c: quantity, IP/CIDR, URL, semver and format functions
 * (F_QUANTITY..F_URL_QUERY, F_FORMAT_*). Arguments are borrowed. */
gr_cel_val cel_k8s_call(ectx *c, const cel_node *n, gr_cel_val *a, size_t na);

#endif
