/* gr_checks_boot_io.c — the TCP side of the bootstrap (see gr_checks_boot.h). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gr_checks_boot.h"
#include "gr_log.h"

#define MAX_FRAME (GR_CHECKS_BOOT_HEADER + GR_CHECKS_BOOT_MAX_PAYLOAD)

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int send_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pfd = {fd, POLLOUT, 0};
            poll(&pfd, 1, 1000);
            continue;
        }
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int send_msg(int fd, const gr_checks_boot_msg *m)
{
    unsigned char buf[MAX_FRAME];
    size_t len;
    if (gr_checks_boot_encode(m, buf, sizeof buf, &len, NULL) != GR_OK)
        return -1;
    return send_all(fd, buf, len);
}

static void send_error(int fd, const char *msg)
{
    gr_checks_boot_msg m;
    memset(&m, 0, sizeof m);
    m.type = GR_CHECKS_BOOT_ERROR;
    snprintf(m.error, sizeof m.error, "%s", msg);
    (void)send_msg(fd, &m);
}

static int resolve(const char *addr, int port, int passive, struct addrinfo **res, gr_err *err)
{
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int rc = getaddrinfo(addr, ps, &hints, res);
    if (rc != 0)
        return gr_err_set(err, GR_EIO, "bootstrap: cannot resolve %s: %s", addr, gai_strerror(rc));
    return GR_OK;
}

typedef struct client {
    int fd;
    unsigned char buf[MAX_FRAME];
    size_t len;
    int said_hello;
    uint32_t rank;
} client;

int gr_checks_boot_serve(const char *addr, int port, const gr_checks_boot_msg *self, int timeout_ms,
                         gr_checks_boot_make_id make_id, void *ctx, volatile int *stop,
                         gr_checks_boot_msg *out, gr_err *err)
{
    uint32_t need = self->nnodes > 0 ? self->nnodes - 1 : 0;
    struct addrinfo *res;
    int rc = resolve(addr, port, 1, &res, err);
    if (rc != GR_OK)
        return rc;
    int lfd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
    if (lfd < 0) {
        freeaddrinfo(res);
        return gr_err_set(err, GR_EIO, "bootstrap: socket: %s", strerror(errno));
    }
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(lfd, res->ai_addr, res->ai_addrlen) != 0 || listen(lfd, 128) != 0) {
        int e = errno;
        freeaddrinfo(res);
        close(lfd);
        return gr_err_set(err, GR_EIO, "bootstrap: cannot listen on %s:%d: %s", addr, port,
                          strerror(e));
    }
    freeaddrinfo(res);
    gr_log(GR_LOG_INFO, "bootstrap", "listening", GR_KV_STR("addr", addr), GR_KV_INT("port", port),
           GR_KV_INT("waiting_for", need), GR_KV_END);

    client *cl = calloc(need + 1, sizeof *cl);
    if (!cl) {
        close(lfd);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    size_t ncl = 0;
    uint32_t hellos = 0;
    int64_t deadline = mono_ms() + timeout_ms;
    char *seen = calloc(self->nnodes ? self->nnodes : 1, 1);
    rc = seen ? GR_OK : gr_err_set(err, GR_ENOMEM, "out of memory");
    while (rc == GR_OK && hellos < need) {
        if (stop && *stop) {
            rc = gr_err_set(err, GR_ECANCELED, "bootstrap: stopped by signal");
            break;
        }
        int64_t left = deadline - mono_ms();
        if (left <= 0) {
            rc = gr_err_set(err, GR_ETIMEDOUT,
                            "bootstrap: only %u of %u nodes connected to %s:%d within %d s",
                            hellos + 1, self->nnodes, addr, port, timeout_ms / 1000);
            break;
        }
        struct pollfd pfds[1 + 4096];
        size_t np = 0;
        pfds[np++] = (struct pollfd){lfd, ncl <= need ? POLLIN : 0, 0};
        for (size_t i = 0; i < ncl && np < sizeof pfds / sizeof pfds[0]; i++)
            pfds[np++] = (struct pollfd){cl[i].fd, POLLIN, 0};
        int pr = poll(pfds, np, left > 200 ? 200 : (int)left);
        if (pr < 0 && errno != EINTR) {
            rc = gr_err_set(err, GR_EIO, "bootstrap: poll: %s", strerror(errno));
            break;
        }
        if (pr <= 0)
            continue;
        if ((pfds[0].revents & POLLIN) && ncl <= need) {
            int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd >= 0) {
                if (ncl == need) {
                    send_error(fd, "bootstrap: too many connections for this gang");
                    close(fd);
                } else {
                    memset(&cl[ncl], 0, sizeof cl[ncl]);
                    cl[ncl++].fd = fd;
                }
            }
        }
        for (size_t i = 0; i < ncl && rc == GR_OK; i++) {
            if (!(pfds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) || cl[i].said_hello)
                continue;
            ssize_t n = recv(cl[i].fd, cl[i].buf + cl[i].len, sizeof cl[i].buf - cl[i].len, 0);
            if (n <= 0) {
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                    continue;
                /* A peer that went away before HELLO: forget it. */
                close(cl[i].fd);
                cl[i] = cl[--ncl];
                i--;
                continue;
            }
            cl[i].len += (size_t)n;
            gr_checks_boot_msg m;
            size_t used;
            gr_err perr;
            int d = gr_checks_boot_decode(cl[i].buf, cl[i].len, &m, &used, &perr);
            if (d == GR_EAGAIN)
                continue;
            char why[600] = "";
            if (d != GR_OK)
                snprintf(why, sizeof why, "%s", perr.msg);
            else if (m.type != GR_CHECKS_BOOT_HELLO)
                snprintf(why, sizeof why, "bootstrap: expected HELLO");
            else if (strcmp(m.gang_id, self->gang_id) != 0)
                snprintf(why, sizeof why, "bootstrap: gang_id \"%s\" is not this gang (\"%s\")",
                         m.gang_id, self->gang_id);
            else if (m.nnodes != self->nnodes)
                snprintf(why, sizeof why, "bootstrap: node %u expects %u nodes, rank 0 expects %u",
                         m.node_rank, m.nnodes, self->nnodes);
            else if (m.node_rank == 0 || m.node_rank >= self->nnodes)
                snprintf(why, sizeof why, "bootstrap: node rank %u out of range 1..%u", m.node_rank,
                         self->nnodes - 1);
            else if (seen[m.node_rank])
                snprintf(why, sizeof why, "bootstrap: two nodes claim rank %u", m.node_rank);
            else if (m.gpus_per_node != self->gpus_per_node)
                snprintf(why, sizeof why,
                         "bootstrap: node %u has %u GPUs, rank 0 has %u (all nodes need the "
                         "same count; set NPROCS_PER_NODE)",
                         m.node_rank, m.gpus_per_node, self->gpus_per_node);
            if (why[0]) {
                /* A stray connection (port scan, garbage) is dropped; a gang
                 * member that disagrees fails the bootstrap. */
                if (d == GR_OK && m.type == GR_CHECKS_BOOT_HELLO &&
                    strcmp(m.gang_id, self->gang_id) == 0) {
                    send_error(cl[i].fd, why);
                    rc = gr_err_set(err, GR_EINVAL, "%s", why);
                } else {
                    gr_log(GR_LOG_WARN, "bootstrap", "dropped connection", GR_KV_STR("why", why),
                           GR_KV_END);
                    send_error(cl[i].fd, why);
                    close(cl[i].fd);
                    cl[i] = cl[--ncl];
                    i--;
                }
                continue;
            }
            seen[m.node_rank] = 1;
            cl[i].said_hello = 1;
            cl[i].rank = m.node_rank;
            hellos++;
            gr_log(GR_LOG_DEBUG, "bootstrap", "node joined", GR_KV_INT("node_rank", m.node_rank),
                   GR_KV_END);
        }
    }
    if (rc == GR_OK) {
        memset(out, 0, sizeof *out);
        out->type = GR_CHECKS_BOOT_ID;
        out->nnodes = self->nnodes;
        out->gpus_per_node = self->gpus_per_node;
        out->world_size = self->nnodes * self->gpus_per_node;
        rc = make_id(ctx, out->id, err);
    }
    for (size_t i = 0; i < ncl; i++) {
        if (rc == GR_OK) {
            if (send_msg(cl[i].fd, out) != 0)
                rc = gr_err_set(err, GR_EIO, "bootstrap: sending the id to node %u failed",
                                cl[i].rank);
        } else {
            send_error(cl[i].fd, err && err->msg[0] ? err->msg : "bootstrap failed on rank 0");
        }
        close(cl[i].fd);
    }
    free(seen);
    free(cl);
    close(lfd);
    return rc;
}

int gr_checks_boot_join(const char *addr, int port, const gr_checks_boot_msg *hello, int timeout_ms,
                        volatile int *stop, gr_checks_boot_msg *out, gr_err *err)
{
    int64_t deadline = mono_ms() + timeout_ms;
    int fd = -1;
    char last[GR_ERR_MSG_MAX] = "no attempt";
    while (fd < 0) {
        if (stop && *stop)
            return gr_err_set(err, GR_ECANCELED, "bootstrap: stopped by signal");
        if (mono_ms() >= deadline)
            return gr_err_set(err, GR_ETIMEDOUT,
                              "bootstrap: cannot reach rank 0 at %s:%d within %d s (%s)", addr,
                              port, timeout_ms / 1000, last);
        struct addrinfo *res;
        gr_err rerr;
        if (resolve(addr, port, 0, &res, &rerr) != GR_OK) {
            snprintf(last, sizeof last, "%s", rerr.msg);
            usleep(500000);
            continue;
        }
        int s = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
        if (s >= 0 && connect(s, res->ai_addr, res->ai_addrlen) == 0) {
            fd = s;
        } else {
            snprintf(last, sizeof last, "%s", strerror(errno));
            if (s >= 0)
                close(s);
            usleep(250000);
        }
        freeaddrinfo(res);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (send_msg(fd, hello) != 0) {
        close(fd);
        return gr_err_set(err, GR_EIO, "bootstrap: sending HELLO to %s:%d failed", addr, port);
    }
    unsigned char buf[MAX_FRAME];
    size_t len = 0;
    for (;;) {
        if (stop && *stop) {
            close(fd);
            return gr_err_set(err, GR_ECANCELED, "bootstrap: stopped by signal");
        }
        int64_t left = deadline - mono_ms();
        if (left <= 0) {
            close(fd);
            return gr_err_set(err, GR_ETIMEDOUT,
                              "bootstrap: rank 0 at %s:%d sent no id within %d s", addr, port,
                              timeout_ms / 1000);
        }
        struct pollfd pfd = {fd, POLLIN, 0};
        int pr = poll(&pfd, 1, left > 200 ? 200 : (int)left);
        if (pr <= 0)
            continue;
        ssize_t n = recv(fd, buf + len, sizeof buf - len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            close(fd);
            return gr_err_set(err, GR_EIO, "bootstrap: rank 0 closed the connection");
        }
        len += (size_t)n;
        size_t used;
        int d = gr_checks_boot_decode(buf, len, out, &used, err);
        if (d == GR_EAGAIN)
            continue;
        close(fd);
        if (d != GR_OK)
            return d;
        if (out->type == GR_CHECKS_BOOT_ERROR)
            return gr_err_set(err, GR_EINVAL, "rank 0 refused: %s", out->error);
        if (out->type != GR_CHECKS_BOOT_ID)
            return gr_err_set(err, GR_EPARSE, "bootstrap: expected ID from rank 0");
        return GR_OK;
    }
}
