/*
 * gr_buf.h — a growable byte/string buffer with a hard size cap.
 *
 * Anything filled from outside (network, files, child processes) goes through
 * a gr_buf whose `max` bounds it, so hostile input cannot grow memory without
 * limit. The contents are always NUL-terminated (the terminator is not counted
 * in `len` and does not count against `max`), so text can be used in place.
 *
 * Ownership: the buffer owns `data`. gr_buf_free() releases it; gr_buf_steal()
 * hands it to the caller (who frees it with free()) and leaves the buffer empty.
 *
 * The cap is explicit: every buffer states the most it may hold for its data
 * (GR_BUF_INIT(max), gr_buf_init(b, max)). A buffer with max 0 (a zeroed
 * struct, a forgotten cap) refuses every append and reserve with GR_EINVAL:
 * there is no default.
 *
 * Errors: appends return GR_ETOOBIG when the result would exceed `max` (the
 * buffer is left unchanged), GR_EINVAL when max is 0 and GR_ENOMEM when
 * allocation fails.
 */
#ifndef GR_BUF_H
#define GR_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "gr_err.h"

typedef struct gr_buf {
    char *data; /* NULL until the first append; then NUL-terminated */
    size_t len; /* bytes in use, excluding the terminator */
    size_t cap; /* bytes allocated */
    size_t max; /* hard cap on len */
} gr_buf;

#define GR_BUF_INIT(maxbytes)  \
    {                          \
        NULL, 0, 0, (maxbytes) \
    }

/* An empty buffer capped at max bytes (max > 0; see above). */
void gr_buf_init(gr_buf *b, size_t max);
void gr_buf_free(gr_buf *b);
/* Forget the contents, keep the allocation. */
void gr_buf_reset(gr_buf *b);
/* Make room for `extra` more bytes. GR_ETOOBIG / GR_EINVAL (max 0) /
 * GR_ENOMEM. */
int gr_buf_reserve(gr_buf *b, size_t extra);
int gr_buf_append(gr_buf *b, const void *data, size_t n);
int gr_buf_puts(gr_buf *b, const char *s);
int gr_buf_putc(gr_buf *b, char c);
int gr_buf_printf(gr_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int gr_buf_vprintf(gr_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Drop `n` bytes from the front (for stream consumers). */
void gr_buf_consume(gr_buf *b, size_t n);
/* Contents as a C string; "" when empty. Valid until the next change. */
const char *gr_buf_cstr(const gr_buf *b);
/* Hand the contents to the caller (free() them); NULL only on ENOMEM.
 * *len (optional) receives the length. The buffer is left empty. */
char *gr_buf_steal(gr_buf *b, size_t *len);

#endif
