/* gr_file.c — the capped whole-file reader (see gr_file.h). */
#include "gr_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Append everything fd yields to b (capped by b->max). */
static int append_fd(int fd, const char *name, gr_buf *b, gr_err *err)
{
    if (b->max == 0)
        return gr_err_set(err, GR_EINVAL, "%s: reading into a buffer without a cap", name);
    struct stat st;
    if (fstat(fd, &st) != 0)
        return gr_err_set(err, GR_EIO, "%s: cannot stat: %s", name, strerror(errno));
    const size_t start = b->len;
    const bool sized = S_ISREG(st.st_mode) && st.st_size > 0;
    if (sized && (uintmax_t)st.st_size > (uintmax_t)(b->max - start))
        return gr_err_set(err, GR_ETOOBIG, "%s: larger than the %zu-byte limit (%jd bytes)", name,
                          b->max - start, (intmax_t)st.st_size);
    int rc = GR_OK;
    if (sized && (rc = gr_buf_reserve(b, (size_t)st.st_size)) != GR_OK)
        return gr_err_set(err, rc, "%s: out of memory", name);
    for (;;) {
        if (b->len == b->max || (sized && b->len - start >= (size_t)st.st_size)) {
            /* At the cap, or at the size fstat() reported: probe for one
             * more byte (EOF is the usual answer) without growing the
             * buffer. One more byte past the cap means the file is too big. */
            char extra;
            ssize_t n = read(fd, &extra, 1);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                rc = gr_err_set(err, GR_EIO, "%s: read failed: %s", name, strerror(errno));
                break;
            }
            if (n == 0)
                break;
            if (b->len == b->max) {
                rc = gr_err_set(err, GR_ETOOBIG, "%s: larger than the %zu-byte limit", name,
                                b->max - start);
                break;
            }
            if ((rc = gr_buf_append(b, &extra, 1)) != GR_OK) { /* the file grew */
                rc = gr_err_set(err, rc, "%s: out of memory", name);
                break;
            }
            continue;
        }
        size_t want = b->max - b->len;
        if (sized && want > (size_t)st.st_size - (b->len - start))
            want = (size_t)st.st_size - (b->len - start); /* the rest, as reserved */
        if (want > 65536)
            want = 65536;
        if ((rc = gr_buf_reserve(b, want)) != GR_OK) {
            rc = gr_err_set(err, rc, "%s: out of memory", name);
            break;
        }
        ssize_t n = read(fd, b->data + b->len, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = gr_err_set(err, GR_EIO, "%s: read failed: %s", name, strerror(errno));
            break;
        }
        if (n == 0)
            break;
        b->len += (size_t)n;
    }
    if (rc == GR_OK && sized && b->len - start < (size_t)st.st_size)
        rc = gr_err_set(err, GR_EIO,
                        "%s: short read: got %zu of %jd bytes (file truncated while read?)", name,
                        b->len - start, (intmax_t)st.st_size);
    if (rc != GR_OK) {
        b->len = start;
        if (b->data)
            b->data[start] = '\0';
        return rc;
    }
    if (b->data)
        b->data[b->len] = '\0';
    return GR_OK;
}

static int open_file(const char *path, int *fd, gr_err *err)
{
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd >= 0)
        return GR_OK;
    int e = errno;
    return gr_err_set(err, e == ENOENT ? GR_ENOTFOUND : GR_EIO, "%s: cannot open: %s", path,
                      strerror(e));
}

int gr_file_append(const char *path, gr_buf *b, gr_err *err)
{
    if (!path || !b)
        return gr_err_set(err, GR_EINVAL, "gr_file_append: NULL argument");
    int fd;
    int rc = open_file(path, &fd, err);
    if (rc != GR_OK)
        return rc;
    rc = append_fd(fd, path, b, err);
    close(fd);
    return rc;
}

int gr_file_read_fd(int fd, const char *name, size_t max, char **out, size_t *len, gr_err *err)
{
    if (out)
        *out = NULL;
    if (!out || !name || max == 0)
        return gr_err_set(err, GR_EINVAL, "gr_file_read: NULL argument or a cap of 0");
    gr_buf b = GR_BUF_INIT(max);
    int rc = append_fd(fd, name, &b, err);
    if (rc != GR_OK) {
        gr_buf_free(&b);
        return rc;
    }
    size_t l = b.len;
    *out = gr_buf_steal(&b, NULL);
    if (!*out)
        return gr_err_set(err, GR_ENOMEM, "%s: out of memory", name);
    if (len)
        *len = l;
    return GR_OK;
}

int gr_file_read(const char *path, size_t max, char **out, size_t *len, gr_err *err)
{
    if (out)
        *out = NULL;
    if (!path)
        return gr_err_set(err, GR_EINVAL, "gr_file_read: NULL path");
    int fd;
    int rc = open_file(path, &fd, err);
    if (rc != GR_OK)
        return rc;
    rc = gr_file_read_fd(fd, path, max, out, len, err);
    close(fd);
    return rc;
}
