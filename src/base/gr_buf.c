#include "gr_buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gr_buf_init(gr_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

void gr_buf_free(gr_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void gr_buf_reset(gr_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

int gr_buf_reserve(gr_buf *b, size_t extra)
{
    if (b->max == 0)
        return GR_EINVAL; /* no cap given: a programming error, never a default */
    if (extra > b->max || b->len > b->max - extra)
        return GR_ETOOBIG;
    size_t need = b->len + extra + 1; /* + terminator */
    if (need <= b->cap)
        return GR_OK;
    size_t ncap = b->cap ? b->cap : 64;
    while (ncap < need)
        ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    if (ncap > b->max + 1)
        ncap = b->max + 1;
    if (ncap < need)
        ncap = need;
    char *nd = realloc(b->data, ncap);
    if (!nd)
        return GR_ENOMEM;
    nd[b->len] = '\0'; /* a fresh allocation is a string too */
    b->data = nd;
    b->cap = ncap;
    return GR_OK;
}

int gr_buf_append(gr_buf *b, const void *data, size_t n)
{
    int rc = gr_buf_reserve(b, n);
    if (rc != GR_OK)
        return rc;
    if (n)
        memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
    return GR_OK;
}

int gr_buf_puts(gr_buf *b, const char *s)
{
    return gr_buf_append(b, s, strlen(s));
}

int gr_buf_putc(gr_buf *b, char c)
{
    return gr_buf_append(b, &c, 1);
}

int gr_buf_vprintf(gr_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return GR_EINVAL;
    if ((size_t)n < sizeof small)
        return gr_buf_append(b, small, (size_t)n);
    int rc = gr_buf_reserve(b, (size_t)n);
    if (rc != GR_OK)
        return rc;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return GR_OK;
}

int gr_buf_printf(gr_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = gr_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

void gr_buf_consume(gr_buf *b, size_t n)
{
    if (n >= b->len) {
        gr_buf_reset(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

const char *gr_buf_cstr(const gr_buf *b)
{
    return b->data ? b->data : "";
}

char *gr_buf_steal(gr_buf *b, size_t *len)
{
    char *d = b->data;
    if (!d) {
        d = calloc(1, 1);
        if (!d)
            return NULL;
    }
    if (len)
        *len = b->len;
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return d;
}
