/*
 * cel_int.h — internals shared by the files of src/cel (not installed).
 *
 * Representation of gr_cel_val:
 *   rep CEL_REP_INLINE  scalars in the union (null, bool, int, uint, double,
 *                       duration, timestamp, type)
 *   rep CEL_REP_HEAP    u.p is a cel_str / cel_list / cel_map / cel_errv with
 *                       an atomic reference count
 *   rep CEL_REP_JSON    u.p is a json_t (string, array or object) holding one
 *                       jansson reference; elements are converted on access
 * Errors are values of kind CEL_K_ERROR during evaluation so that && / || and
 * the comprehension macros can absorb them as CEL specifies; they never
 * escape the public API.
 */
#ifndef GR_CEL_INT_H
#define GR_CEL_INT_H

#include <stdatomic.h>
#include <stdbool.h>

#include "gr_cel.h"

enum { CEL_REP_INLINE = 0, CEL_REP_HEAP = 1, CEL_REP_JSON = 2 };

/* Longest text CEL builds in one buffer (strings from replace/join, base64
 * of bytes, map keys, qualified names, literals). */
#define CEL_TEXT_MAX ((size_t)64 * 1024 * 1024)

#define CEL_K_ERROR 100

typedef struct cel_obj {
    atomic_long rc;
} cel_obj;

typedef struct cel_str {
    cel_obj h;
    size_t len;
    char data[]; /* len bytes + NUL */
} cel_str;

typedef struct cel_list {
    cel_obj h;
    size_t n;
    gr_cel_val items[];
} cel_list;

typedef struct cel_map {
    cel_obj h;
    size_t n;
    char *tname;      /* GR_CEL_OBJECT: the message type name (owned) */
    gr_cel_val *keys; /* point into ent[] */
    gr_cel_val *vals;
    gr_cel_val ent[]; /* 2n */
} cel_map;

typedef struct cel_errv {
    cel_obj h;
    int code;      /* GR_EINVAL, GR_ETOOBIG, GR_ENOMEM */
    size_t offset; /* byte offset of the failing sub-expression */
    char msg[];
} cel_errv;

/* ---- value core (cel_val.c) ---- */
void cel_retain(const gr_cel_val *v);
static inline gr_cel_val cel_ref(const gr_cel_val *v)
{
    cel_retain(v);
    return *v;
}
gr_cel_val cel_type_val(int kind);
/* An error value (kind CEL_K_ERROR); never fails (falls back to a static
 * out-of-memory error). */
gr_cel_val cel_err(int code, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline bool cel_is_err(const gr_cel_val *v)
{
    return v->kind == CEL_K_ERROR;
}
const cel_errv *cel_err_of(const gr_cel_val *v);
/* New string/bytes (copy); an error value on ENOMEM. */
gr_cel_val cel_str_new(int kind, const char *s, size_t len);
/* Allocate an uninitialised string of len bytes; *data receives the buffer. */
gr_cel_val cel_str_alloc(int kind, size_t len, char **data);
const char *cel_sv(const gr_cel_val *v, size_t *len);
/* Lists: allocate with n zeroed items (caller fills); error value on ENOMEM. */
gr_cel_val cel_list_alloc(size_t n, gr_cel_val **items);
size_t cel_list_len(const gr_cel_val *v);
/* New reference to element i (i < len). */
gr_cel_val cel_list_at(const gr_cel_val *v, size_t i);
gr_cel_val cel_map_alloc(size_t n, gr_cel_val **keys, gr_cel_val **vals);
size_t cel_map_len(const gr_cel_val *v);
/* 1 found (*out new reference), 0 absent. */
int cel_map_find(const gr_cel_val *m, const gr_cel_val *key, gr_cel_val *out);
/* Iterate a list's elements or a map's keys. */
typedef struct cel_iter {
    const gr_cel_val *coll;
    size_t i, n;
    void *jit; /* jansson object iterator */
} cel_iter;
void cel_iter_init(cel_iter *it, const gr_cel_val *coll);
/* 1 and a new reference in *out, 0 at the end. */
int cel_iter_next(cel_iter *it, gr_cel_val *out);

/* JSON → value with the DYN mapping; new reference. Error value on ENOMEM. */
gr_cel_val cel_from_json(const json_t *j);

/* Equality: 1 equal, 0 not equal. */
int cel_equal(const gr_cel_val *a, const gr_cel_val *b);
/* Ordering of two values: -1/0/1, or 2 when not ordered (NaN), or -2 when the
 * types have no ordering (no such overload). */
int cel_compare(const gr_cel_val *a, const gr_cel_val *b);
bool cel_is_num(const gr_cel_val *v);

/* UTF-8 helpers. */
bool cel_utf8_valid(const char *s, size_t len);
/* Length of the longest valid UTF-8 prefix. */
size_t cel_utf8_valid_prefix(const char *s, size_t len);
size_t cel_utf8_count(const char *s, size_t len);
/* Decode one code point at s (len > 0, valid UTF-8); returns its length. */
size_t cel_utf8_decode(const char *s, size_t len, uint32_t *cp);
size_t cel_utf8_encode(uint32_t cp, char *out);

/* Shortest round-trip decimal of a double in Go's strconv 'g' / %v style. */
void cel_fmt_double(double d, char *out, size_t outsz);

/* ---- libraries (cel_lib.c) ---- */
/* Two kubernetes.Quantity or two kubernetes.Semver objects: *out = -1/0/1,
 * returns 0; -1 if they are not. */
int cel_lib_opaque_cmp(const gr_cel_val *a, const gr_cel_val *b, int *out);
/* string() of a library value (IP, CIDR, URL, semver): a new string, or
 * kind GR_CEL_UNSET when v is not one. */
gr_cel_val cel_lib_to_string(const gr_cel_val *v);

/* ---- time (cel_time.c) ---- */
#define CEL_TS_MIN_SEC (-62135596800LL) /* 0001-01-01T00:00:00Z */
#define CEL_TS_MAX_SEC 253402300799LL   /* 9999-12-31T23:59:59Z */
/* Durations are parsed with gr_duration_parse_n() (Go syntax, as cel-go). */
/* "3600s", "1.500s" (protobuf JSON style, trailing zeros trimmed). */
void cel_duration_fmt(int64_t ns, char *out, size_t outsz);
/* RFC 3339 with a required offset (gr_time_parse_n()) limited to the CEL range
 * above; GR_EINVAL on error or out of range. */
int cel_timestamp_parse(const char *s, size_t len, int64_t *sec, int32_t *nsec);
void cel_timestamp_fmt(int64_t sec, int32_t nsec, char *out, size_t outsz);
/* Offset in seconds east of UTC of time zone `tz` ("UTC", "+05:30", "-08:00",
 * "America/Los_Angeles" via the system tz database) at instant `sec`. */
int cel_tz_offset(const char *tz, size_t len, int64_t sec, int64_t *off);
/* Number of zones held by the time-zone cache (for tests). */
size_t cel_tz_cache_size(void);
/* Civil date of days since 1970-01-01. */
void cel_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);

#endif
