/* gr_checks_gang_io.c — reading the kubelet-mounted gang directory. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gr_buf.h"
#include "gr_file.h"
#include "gr_checks_gang.h"

static const char *const keys[] = {"expected_count", "peers", "master_addr", "master_port",
                                   "gang_id"};

static char **slot(gr_checks_gang_files *f, size_t i)
{
    switch (i) {
    case 0:
        return &f->expected_count;
    case 1:
        return &f->peers;
    case 2:
        return &f->master_addr;
    case 3:
        return &f->master_port;
    default:
        return &f->gang_id;
    }
}

/* Read path into *out (capped). GR_ENOTFOUND if absent. */
static int read_capped(const char *path, char **out, gr_err *err)
{
    return gr_file_read(path, GR_CHECKS_GANG_FILE_MAX, out, NULL, err);
}

/* readlink of dir/..data into buf; 0 if absent (plain directory). */
static int data_target(const char *dir, char *buf, size_t len, gr_err *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/..data", dir);
    ssize_t n = readlink(path, buf, len - 1);
    if (n < 0) {
        if (errno == ENOENT || errno == EINVAL)
            return 0;
        return gr_err_set(err, GR_EIO, "cannot read %s: %s", path, strerror(errno));
    }
    buf[n] = '\0';
    return 1;
}

int gr_checks_gang_read_dir(const char *dir, gr_checks_gang_files *out, gr_err *err)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return gr_err_set(err, GR_EIO, "GANG_CONFIG_DIR %s is not a readable directory: %s", dir,
                          strerror(errno ? errno : ENOTDIR));
    for (int attempt = 0; attempt < 20; attempt++) {
        char t1[PATH_MAX], t2[PATH_MAX];
        int rc = data_target(dir, t1, sizeof t1, err);
        if (rc < 0)
            return rc;
        int kubelet = rc;
        char base[2 * PATH_MAX + 2];
        if (kubelet && t1[0] == '/')
            snprintf(base, sizeof base, "%s", t1);
        else if (kubelet)
            snprintf(base, sizeof base, "%s/%s", dir, t1);
        else
            snprintf(base, sizeof base, "%s", dir);
        int retry = 0;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            char path[sizeof base + 32];
            snprintf(path, sizeof path, "%s/%s", base, keys[i]);
            rc = read_capped(path, slot(out, i), err);
            if (rc == GR_ENOTFOUND) {
                /* In kubelet mode the old target may vanish mid-read. */
                struct stat bs;
                if (kubelet && stat(base, &bs) != 0)
                    retry = 1;
                continue;
            }
            if (rc != GR_OK) {
                if (kubelet) {
                    retry = 1;
                    break;
                }
                gr_checks_gang_files_free(out);
                return rc;
            }
        }
        if (kubelet && !retry) {
            rc = data_target(dir, t2, sizeof t2, err);
            if (rc < 0) {
                gr_checks_gang_files_free(out);
                return rc;
            }
            if (rc == 0 || strcmp(t1, t2) != 0)
                retry = 1;
        }
        if (!retry)
            return GR_OK;
        gr_checks_gang_files_free(out);
        usleep(20000);
    }
    return gr_err_set(err, GR_EAGAIN, "%s/..data kept changing while reading it", dir);
}
