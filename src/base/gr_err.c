#include "gr_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void gr_err_clear(gr_err *err)
{
    if (!err)
        return;
    err->code = GR_OK;
    err->msg[0] = '\0';
}

int gr_err_set(gr_err *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

int gr_err_prefix(gr_err *err, const char *fmt, ...)
{
    if (!err)
        return GR_EINVAL;
    char prefix[GR_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return err->code;
    size_t plen = strlen(prefix);
    size_t mlen = strlen(err->msg);
    if (plen >= sizeof err->msg - 1)
        plen = sizeof err->msg - 1;
    if (plen + mlen >= sizeof err->msg)
        mlen = sizeof err->msg - 1 - plen;
    memmove(err->msg + plen, err->msg, mlen);
    memcpy(err->msg, prefix, plen);
    err->msg[plen + mlen] = '\0';
    return err->code;
}

const char *gr_rc_name(int code)
{
    switch (code) {
    case GR_OK:
        return "GR_OK";
    case GR_ENOMEM:
        return "GR_ENOMEM";
    case GR_EINVAL:
        return "GR_EINVAL";
    case GR_EIO:
        return "GR_EIO";
    case GR_ETOOBIG:
        return "GR_ETOOBIG";
    case GR_ENOTFOUND:
        return "GR_ENOTFOUND";
    case GR_ETIMEDOUT:
        return "GR_ETIMEDOUT";
    case GR_EPARSE:
        return "GR_EPARSE";
    case GR_EUNSUPPORTED:
        return "GR_EUNSUPPORTED";
    case GR_ECONFLICT:
        return "GR_ECONFLICT";
    case GR_EAGAIN:
        return "GR_EAGAIN";
    case GR_EPERM:
        return "GR_EPERM";
    case GR_ECANCELED:
        return "GR_ECANCELED";
    case GR_ESTATE:
        return "GR_ESTATE";
    default:
        return "GR_E?";
    }
}
