/*
 * gr_duration.h — Go time.Duration parsing and formatting.
 *
 * gr_duration_parse() accepts exactly what Go's time.ParseDuration accepts:
 *
 *     [-+]? ( [0-9]* (\.[0-9]*)? unit )+      or "0", "+0", "-0" alone
 *     unit: ns us µs (U+00B5) μs (U+03BC) ms s m h
 *
 * e.g. "10m", "1h30m", "500ms", "1.5h", "-2.5s", ".5s", "1.s", "1h1h". The
 * result is int64 nanoseconds; anything past the int64 range (±292 years) is
 * an error. Fractions are computed the way Go computes them (float64 scaling
 * of the fractional digits), so results agree with Go to the nanosecond.
 *
 * Error messages (GR_EINVAL) are Go's, byte for byte, so users see what
 * upstream would print:
 *     time: invalid duration "x"
 *     time: missing unit in duration "1"
 *     time: unknown unit "d" in duration "1d"
 * Bytes < 0x20 or >= 0x80 in the quoted text are written as \xNN and '"' and
 * '\' are backslash-escaped (Go's time.quote). Callers add the field name
 * with gr_err_prefix().
 *
 * gr_duration_format() writes Go's Duration.String(): "1h30m0s", "500ms",
 * "1.5µs", "0s", "-2m3.5s".
 *
 * The CRD APIs use a stricter pattern, ^([0-9]+(h|m|s|ms))+$, checked by
 * gr_duration_is_api_pattern(); some environment variables use
 * ^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$ (gr_duration_is_decimal_pattern()).
 *
 * No allocation anywhere; all functions are thread-safe.
 */
#ifndef GR_DURATION_H
#define GR_DURATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gr_err.h"

#define GR_DURATION_NANOSECOND  INT64_C(1)
#define GR_DURATION_MICROSECOND INT64_C(1000)
#define GR_DURATION_MILLISECOND INT64_C(1000000)
#define GR_DURATION_SECOND      INT64_C(1000000000)
#define GR_DURATION_MINUTE      INT64_C(60000000000)
#define GR_DURATION_HOUR        INT64_C(3600000000000)

/* Longest output of gr_duration_format() including the NUL
 * ("-2562047h47m16.854775808s" is 25 bytes). */
#define GR_DURATION_STR_MAX 32

/* Parse a NUL-terminated Go duration into *out_ns (untouched on error).
 * GR_EINVAL (message as above) when s is NULL, empty or malformed, or the
 * value overflows int64 nanoseconds. */
int gr_duration_parse(const char *s, int64_t *out_ns, gr_err *err);

/* Same for a length-delimited string (need not be NUL-terminated; an
 * embedded NUL is an invalid character). */
int gr_duration_parse_n(const char *s, size_t len, int64_t *out_ns, gr_err *err);

/* Write Go's Duration.String() of ns into buf (GR_DURATION_STR_MAX bytes)
 * and return buf. Never fails. */
char *gr_duration_format(int64_t ns, char buf[GR_DURATION_STR_MAX]);

/* true when s matches ^([0-9]+(h|m|s|ms))+$ (the CRD duration pattern,
 * e.g. timeoutPerJob). s == NULL → false. A match may still overflow in
 * gr_duration_parse(). */
bool gr_duration_is_api_pattern(const char *s);

/* true when s matches ^(?:[0-9]+(?:\.[0-9]+)?(?:ms|s|m|h))+$. */
bool gr_duration_is_decimal_pattern(const char *s);

/* gr_duration_is_api_pattern() then gr_duration_parse(). On a pattern
 * mismatch: GR_EINVAL with
 *   invalid duration "x": must match ^([0-9]+(h|m|s|ms))+$ (e.g. "90s", "1h30m")
 */
int gr_duration_parse_api(const char *s, int64_t *out_ns, gr_err *err);

#endif
