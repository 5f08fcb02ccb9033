/*
 * gr_quantity.h — Kubernetes resource.Quantity: parse, compare, format.
 *
 * Syntax (as k8s.io/apimachinery ParseQuantity accepts it):
 *
 *     quantity ::= [+-]? number suffix
 *     number   ::= digits | digits "." digits | digits "." | "." digits
 *     suffix   ::= Ki Mi Gi Ti Pi Ei                 (binary SI, 2^10 .. 2^60)
 *                | n u m "" k M G T P E              (decimal SI, 10^-9 .. 10^18)
 *                | (e|E) [+-]? digits                 (decimal exponent)
 *
 * e.g. "500Mi", "100m", "4", "1e3", "10Ti", "1.5Gi". Kubernetes quirks are
 * kept on purpose: "+", "-" and "." parse as zero, "1.G" is allowed.
 *
 * Values are exact: a sign, a decimal coefficient of up to
 * GR_QUANTITY_MAX_DIGITS digits and a base-10 exponent (never a float). As in
 * Kubernetes, parsing rounds non-zero values up (away from zero) to a
 * multiple of 10^-9 ("0.1n" → 1n), and binary-SI values are capped at
 * 2^63-1 in magnitude.
 *
 * Two string forms:
 *  - gr_quantity_canonical(): the canonical form (Quantity.CanonicalizeBytes):
 *    "1.5Gi"→"1536Mi", "1000m"→"1", "0.5"→"500m", "1e3"→"1e3", "1e4"→"10e3",
 *    zero → "0", "+" omitted.
 *  - gr_quantity_string(): what Quantity.String() / MarshalJSON return: for
 *    some inputs Kubernetes keeps the input text verbatim (e.g. "+100m",
 *    "1E3", "1.500"); otherwise the canonical form. Use this one to predict
 *    what the API server echoes back.
 *
 * Semantics follow current Kubernetes (apimachinery master, which fixed
 * several old bugs): exponents must lie in ±(2^31-1); decimal SI values with
 * no suffix letter (≥ 1000E, < 1n) print as "1e21" / "1e-12"; binary SI
 * values past Ei print their exact decimal form; Value()/MilliValue() round
 * away from zero for negative values too.
 *
 * Our own limits (never silent, GR_ETOOBIG): input longer than
 * GR_QUANTITY_INPUT_MAX bytes; a decimal value with more than
 * GR_QUANTITY_MAX_DIGITS significant digits (after rounding to 10^-9);
 * arithmetic results needing more digits than that.
 *
 * Errors (GR_EPARSE) say what was wrong and show the expected form, e.g.
 *   invalid quantity "1x": quantities must match the regular expression
 *   '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'; use a number with an
 *   optional suffix (Ki Mi Gi Ti Pi Ei, n u m k M G T P E, or e<exponent>),
 *   e.g. "500Mi" or "100m"
 * (the reason part is Kubernetes' own error text; unknown suffixes say
 * "unable to parse quantity's suffix \"x\"").
 *
 * gr_quantity is a plain value: no allocation, copy it with '=', no free.
 * All functions are thread-safe; inputs are never modified.
 */
#ifndef GR_QUANTITY_H
#define GR_QUANTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gr_err.h"

/* Room for any gr_quantity_canonical()/gr_quantity_string() output + NUL. */
#define GR_QUANTITY_STR_MAX 192
/* Longest accepted input, bytes: everything we print parses back. */
#define GR_QUANTITY_INPUT_MAX (GR_QUANTITY_STR_MAX - 1)
/* Significant decimal digits kept (parsed binary-SI values need ≤ 28). */
#define GR_QUANTITY_MAX_DIGITS 160

typedef enum gr_quantity_format {
    GR_QUANTITY_DECIMAL_SI = 0,   /* 12M  (12 * 10^6); also the zero value */
    GR_QUANTITY_BINARY_SI,        /* 12Mi (12 * 2^20) */
    GR_QUANTITY_DECIMAL_EXPONENT, /* 12e6 */
} gr_quantity_format;

/* Fields are private: use the functions. A zeroed struct is the quantity 0. */
typedef struct gr_quantity {
    int8_t sign;                            /* -1, 0, +1 */
    uint8_t format;                         /* gr_quantity_format */
    uint8_t verbatim_len;                   /* >0: String() echoes `verbatim` */
    uint16_t ndigits;                       /* coefficient digits; 0 iff sign == 0 */
    int64_t exp;                            /* value = sign * coefficient * 10^exp */
    uint8_t digits[GR_QUANTITY_MAX_DIGITS]; /* 0..9, most significant first,
                                               no leading/trailing zeros */
    char verbatim[GR_QUANTITY_INPUT_MAX + 1];
} gr_quantity;

/* Parse a NUL-terminated quantity into *out (untouched on error).
 * GR_EPARSE: malformed (message quotes the input and says why);
 * GR_ETOOBIG: longer than GR_QUANTITY_INPUT_MAX or more than
 * GR_QUANTITY_MAX_DIGITS significant digits; GR_EINVAL: s or out NULL.
 * No whitespace is trimmed (Kubernetes trims only when decoding JSON). */
int gr_quantity_parse(const char *s, gr_quantity *out, gr_err *err);
/* Same for a length-delimited string (an embedded NUL is malformed). */
int gr_quantity_parse_n(const char *s, size_t len, gr_quantity *out, gr_err *err);

/* Canonical form into buf (GR_QUANTITY_STR_MAX bytes); returns buf. */
char *gr_quantity_canonical(const gr_quantity *q, char buf[GR_QUANTITY_STR_MAX]);
/* Quantity.String()/MarshalJSON form into buf; returns buf. */
char *gr_quantity_string(const gr_quantity *q, char buf[GR_QUANTITY_STR_MAX]);

/* Exact comparison: -1 if a < b, 0 if equal, +1 if a > b. Formats are
 * ignored ("1Ki" == "1024" == "1.024k"). */
int gr_quantity_cmp(const gr_quantity *a, const gr_quantity *b);
/* Compare with an integer. */
int gr_quantity_cmp_int64(const gr_quantity *q, int64_t v);
int gr_quantity_sign(const gr_quantity *q); /* -1, 0, +1 */
bool gr_quantity_is_zero(const gr_quantity *q);
gr_quantity_format gr_quantity_get_format(const gr_quantity *q);

/* Value(): q rounded to an integer away from zero (1.1 → 2, -1.1 → -2),
 * saturated to INT64_MIN/INT64_MAX when it does not fit. */
int64_t gr_quantity_value(const gr_quantity *q);
/* MilliValue(): ceil-away-from-zero of q*1000, saturated likewise. */
int64_t gr_quantity_milli_value(const gr_quantity *q);
/* ScaledValue(scale): q / 10^scale rounded away from zero into *out.
 * GR_OK, or GR_ETOOBIG when it does not fit (then *out is saturated). */
int gr_quantity_scaled_value(const gr_quantity *q, int32_t scale, int64_t *out);
/* AsInt64(): true and *out set only when q is an integer within int64. */
bool gr_quantity_as_int64(const gr_quantity *q, int64_t *out);
/* AsApproximateFloat64(): may lose precision; ±HUGE_VAL when out of range.
 * For display and CEL's asApproximateFloat only, never for comparisons. */
double gr_quantity_approx_float64(const gr_quantity *q);

/* NewScaledQuantity-like constructors: value * 10^scale in `format`
 * (gr_quantity_from_int64(q, v, f) is scale 0; milli is scale -3). */
void gr_quantity_from_scaled(gr_quantity *out, int64_t value, int32_t scale,
                             gr_quantity_format format);
void gr_quantity_from_int64(gr_quantity *out, int64_t value, gr_quantity_format format);

/* out = a + b / a - b / -a. Exact. The result takes a's format unless a is
 * zero, then b's (Kubernetes Add/Sub). out may alias a or b.
 * GR_ETOOBIG when the exact result needs more than GR_QUANTITY_MAX_DIGITS. */
int gr_quantity_add(gr_quantity *out, const gr_quantity *a, const gr_quantity *b, gr_err *err);
int gr_quantity_sub(gr_quantity *out, const gr_quantity *a, const gr_quantity *b, gr_err *err);
void gr_quantity_neg(gr_quantity *out, const gr_quantity *a);

#endif
