/*
 * gr_file.h — the one capped file reader: a whole file (a config, a
 * kubeconfig, a PEM bundle, a token, a mapping table) into memory, never
 * more than a cap the caller states, and never silently less than the file
 * holds.
 *
 * Short reads are detected: a regular file must yield as many bytes as
 * fstat() reported when it was opened (a file truncated while being read, or
 * a read that stops early, is GR_EIO, not a shorter file). Files without a
 * size (pipes, /proc, character devices) are read to EOF. EINTR is retried.
 *
 * Ownership: gr_file_read()/gr_file_read_fd() give the caller a
 * NUL-terminated copy (free()); gr_file_append() appends to a caller-owned
 * gr_buf, whose `max` is the cap, and leaves it as it was on error.
 * gr_file_read_fd() does not close the descriptor.
 *
 * Errors (the message names the file and the cap): GR_ENOTFOUND (no such
 * file), GR_EIO (cannot open or read, short read), GR_ETOOBIG (larger than
 * the cap), GR_EINVAL (cap 0 or NULL argument), GR_ENOMEM.
 */
#ifndef GR_FILE_H
#define GR_FILE_H

#include <stddef.h>

#include "gr_buf.h"
#include "gr_err.h"

/* Read `path` (at most `max` bytes, max > 0) into *out (NUL-terminated,
 * "" for an empty file); *len (optional) receives the length. On error
 * *out is NULL. */
int gr_file_read(const char *path, size_t max, char **out, size_t *len, gr_err *err);

/* The same from an open descriptor; `name` is used in messages. */
int gr_file_read_fd(int fd, const char *name, size_t max, char **out, size_t *len, gr_err *err);

/* Append the whole of `path` to b, capped by b->max. */
int gr_file_append(const char *path, gr_buf *b, gr_err *err);

#endif
