/*
 * gr_time.h — RFC 3339 timestamps as Kubernetes writes and reads them, and
 * the clock helpers for I/O code.
 *
 * Parsing accepts what Go's time.Parse(time.RFC3339, s) accepts:
 *     YYYY-MM-DDTHH:MM:SS[.fraction](Z|+hh:mm|-hh:mm)
 * (the strict form Go uses for JSON; its lenient time.Parse also takes a ','
 * before the fraction and a 1-digit hour, which RFC 3339 forbids and we
 * reject). 'T' and 'Z' upper case, every field its exact width, day valid for the
 * month (leap years included), hour ≤ 23, minute/second ≤ 59 (no leap
 * second), offset hour ≤ 23 and minute ≤ 59; a fraction of any length (digits
 * past the 9th are truncated, as Go does). The result is UTC.
 *
 * Formatting (always UTC, 'Z'):
 *   gr_time_format()       metav1.Time       "2006-01-02T15:04:05Z"  (seconds; the
 *                                              fraction is dropped, as Kubernetes does)
 *   gr_time_format_micro() metav1.MicroTime  "2006-01-02T15:04:05.000000Z"
 *   gr_time_format_nano()  RFC3339Nano       "2006-01-02T15:04:05.5Z" (trailing
 *                                              zeros and a zero fraction omitted)
 * Years outside 0000..9999 cannot be written: the format functions return
 * GR_EINVAL and leave buf "".
 *
 * Time values: `struct timespec` (tv_sec since the Unix epoch, tv_nsec in
 * 0..999999999, also for negative times) or int64 nanoseconds since the epoch
 * (years 1678..2262). Pure functions, no allocation, thread-safe. Logic takes
 * the current time as a parameter; only I/O callers use gr_time_now*().
 */
#ifndef GR_TIME_H
#define GR_TIME_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gr_err.h"

/* Longest formatted timestamp + NUL ("2006-01-02T15:04:05.999999999Z" is 30). */
#define GR_TIME_STR_MAX 40

/* Parse a NUL-terminated RFC 3339 timestamp. GR_EPARSE with a message naming
 * the offending part, e.g.
 *   invalid RFC 3339 time "2024-02-30T00:00:00Z": day out of range; use
 *   YYYY-MM-DDTHH:MM:SSZ or an offset like +02:00, e.g. "2006-01-02T15:04:05Z"
 * *out is untouched on error. */
int gr_time_parse(const char *s, struct timespec *out, gr_err *err);
/* Same for a length-delimited string. */
int gr_time_parse_n(const char *s, size_t len, struct timespec *out, gr_err *err);
/* Parse into nanoseconds since the epoch; GR_ETOOBIG outside int64 range. */
int gr_time_parse_ns(const char *s, int64_t *out_ns, gr_err *err);

/* Writers: buf must hold GR_TIME_STR_MAX bytes. GR_OK or GR_EINVAL (year out
 * of 0..9999, or tv_nsec out of range). */
int gr_time_format(const struct timespec *t, char buf[GR_TIME_STR_MAX]);
int gr_time_format_micro(const struct timespec *t, char buf[GR_TIME_STR_MAX]);
int gr_time_format_nano(const struct timespec *t, char buf[GR_TIME_STR_MAX]);
/* The same from nanoseconds since the epoch (always in range). */
int gr_time_format_ns(int64_t ns, char buf[GR_TIME_STR_MAX]);
int gr_time_format_micro_ns(int64_t ns, char buf[GR_TIME_STR_MAX]);

/* Conversions. gr_time_to_ns(): GR_ETOOBIG when outside int64 ns. */
int gr_time_to_ns(const struct timespec *t, int64_t *out_ns);
struct timespec gr_time_from_ns(int64_t ns);

/* Saturating arithmetic on nanosecond times and durations: a deadline built
 * from a far-past or far-future time read from outside (status, spec) clamps
 * to INT64_MIN/INT64_MAX instead of overflowing. */
static inline int64_t gr_ns_add_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}
static inline int64_t gr_ns_sub_sat(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* Clocks (I/O callers only): CLOCK_REALTIME and CLOCK_MONOTONIC. */
struct timespec gr_time_now(void);
int64_t gr_time_now_ns(void);
int64_t gr_time_mono_ns(void);

#endif
