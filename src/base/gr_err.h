/*
 * gr_err.h — the error convention of gpuready.
 *
 * Every fallible function returns an int: GR_OK (0) on success or a negative
 * GR_E* code. Functions that can say more take a `gr_err *err` as their last
 * argument (it may be NULL) and fill it with the code and a human message that
 * names what was wrong and, where possible, how to fix it:
 *
 *     if (gr_duration_parse(s, &ns, err) != GR_OK) ... err->msg says why.
 *
 * The message lives inside the struct (no allocation, so it works when memory
 * is exhausted). gr_err_prefix() adds context ("spec.timeout: ") as an error
 * travels up. Messages are truncated, never overflowed, at GR_ERR_MSG_MAX.
 */
#ifndef GR_ERR_H
#define GR_ERR_H

#include <stddef.h>

enum {
    GR_OK = 0,
    GR_ENOMEM = -1,       /* allocation failed */
    GR_EINVAL = -2,       /* invalid argument or input (message says which) */
    GR_EIO = -3,          /* I/O or system call failed */
    GR_ETOOBIG = -4,      /* a size cap was hit */
    GR_ENOTFOUND = -5,    /* the named thing does not exist */
    GR_ETIMEDOUT = -6,    /* a deadline passed */
    GR_EPARSE = -7,       /* malformed input (message carries the position) */
    GR_EUNSUPPORTED = -8, /* valid but not supported by gpuready */
    GR_ECONFLICT = -9,    /* concurrent modification / already exists */
    GR_EAGAIN = -10,      /* transient, retry later */
    GR_EPERM = -11,       /* permission denied / forbidden */
    GR_ECANCELED = -12,   /* stopped on request (signal, shutdown) */
    GR_ESTATE = -13,      /* operation not valid in the current state */
};

#define GR_ERR_MSG_MAX 512

typedef struct gr_err {
    int code;                 /* GR_OK or a GR_E* code */
    char msg[GR_ERR_MSG_MAX]; /* NUL-terminated, empty when code == GR_OK */
} gr_err;

/* Reset to GR_OK with an empty message. err may be NULL. */
void gr_err_clear(gr_err *err);

/* Set code and printf-style message; returns `code` so callers can write
 * `return gr_err_set(err, GR_EINVAL, "...")`. err may be NULL. */
int gr_err_set(gr_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prepend printf-style context to the existing message ("a.b: " + msg).
 * Keeps the code. Returns err->code (or GR_EINVAL if err is NULL). */
int gr_err_prefix(gr_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A static name for a code ("GR_EINVAL"); never NULL. */
const char *gr_rc_name(int code);

#endif
