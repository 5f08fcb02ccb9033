/* gr_checks_boot.c — bootstrap wire format (pure). See gr_checks_boot.h. */
#include "gr_checks_boot.h"

#include <string.h>

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

static uint16_t get16(const unsigned char *p)
{
    return (uint16_t)(((unsigned)p[0] << 8) | p[1]);
}

int gr_checks_boot_encode(const gr_checks_boot_msg *m, unsigned char *buf, size_t cap, size_t *len,
                          gr_err *err)
{
    unsigned char pl[GR_CHECKS_BOOT_MAX_PAYLOAD];
    size_t n = 0;
    switch (m->type) {
    case GR_CHECKS_BOOT_HELLO: {
        size_t gl = strnlen(m->gang_id, sizeof m->gang_id);
        if (gl >= sizeof m->gang_id)
            return gr_err_set(err, GR_EINVAL, "bootstrap: gang_id too long");
        put32(pl, m->node_rank);
        put32(pl + 4, m->nnodes);
        put32(pl + 8, m->gpus_per_node);
        put16(pl + 12, (uint16_t)gl);
        memcpy(pl + 14, m->gang_id, gl);
        n = 14 + gl;
        break;
    }
    case GR_CHECKS_BOOT_ID:
        put32(pl, m->world_size);
        put32(pl + 4, m->nnodes);
        put32(pl + 8, m->gpus_per_node);
        memcpy(pl + 12, m->id, GR_CHECKS_BOOT_ID_BYTES);
        n = 12 + GR_CHECKS_BOOT_ID_BYTES;
        break;
    case GR_CHECKS_BOOT_ERROR: {
        size_t el = strnlen(m->error, sizeof m->error);
        if (el >= sizeof m->error)
            return gr_err_set(err, GR_EINVAL, "bootstrap: error message too long");
        put16(pl, (uint16_t)el);
        memcpy(pl + 2, m->error, el);
        n = 2 + el;
        break;
    }
    default:
        return gr_err_set(err, GR_EINVAL, "bootstrap: unknown message type %d", m->type);
    }
    if (cap < GR_CHECKS_BOOT_HEADER + n)
        return gr_err_set(err, GR_ETOOBIG, "bootstrap: buffer too small");
    memcpy(buf, GR_CHECKS_BOOT_MAGIC, 4);
    buf[4] = (unsigned char)m->type;
    put32(buf + 5, (uint32_t)n);
    memcpy(buf + GR_CHECKS_BOOT_HEADER, pl, n);
    *len = GR_CHECKS_BOOT_HEADER + n;
    return GR_OK;
}

int gr_checks_boot_decode(const unsigned char *buf, size_t len, gr_checks_boot_msg *m,
                          size_t *consumed, gr_err *err)
{
    size_t have = len < 4 ? len : 4;
    if (memcmp(buf, GR_CHECKS_BOOT_MAGIC, have) != 0)
        return gr_err_set(err, GR_EPARSE, "bootstrap: bad magic (not a gpuready peer)");
    if (len < GR_CHECKS_BOOT_HEADER)
        return GR_EAGAIN;
    int type = buf[4];
    uint32_t n = get32(buf + 5);
    if (n > GR_CHECKS_BOOT_MAX_PAYLOAD)
        return gr_err_set(err, GR_EPARSE, "bootstrap: payload of %u bytes is too large", n);
    if (type < GR_CHECKS_BOOT_HELLO || type > GR_CHECKS_BOOT_ERROR)
        return gr_err_set(err, GR_EPARSE, "bootstrap: unknown message type %d", type);
    if (len - GR_CHECKS_BOOT_HEADER < n)
        return GR_EAGAIN;
    const unsigned char *p = buf + GR_CHECKS_BOOT_HEADER;
    memset(m, 0, sizeof *m);
    m->type = type;
    switch (type) {
    case GR_CHECKS_BOOT_HELLO: {
        if (n < 14)
            return gr_err_set(err, GR_EPARSE, "bootstrap: HELLO too short");
        uint16_t gl = get16(p + 12);
        if ((size_t)gl + 14 != n || gl >= sizeof m->gang_id)
            return gr_err_set(err, GR_EPARSE, "bootstrap: HELLO length mismatch");
        if (memchr(p + 14, '\0', gl))
            return gr_err_set(err, GR_EPARSE, "bootstrap: NUL in gang_id");
        m->node_rank = get32(p);
        m->nnodes = get32(p + 4);
        m->gpus_per_node = get32(p + 8);
        memcpy(m->gang_id, p + 14, gl);
        break;
    }
    case GR_CHECKS_BOOT_ID:
        if (n != 12 + GR_CHECKS_BOOT_ID_BYTES)
            return gr_err_set(err, GR_EPARSE, "bootstrap: ID length mismatch");
        m->world_size = get32(p);
        m->nnodes = get32(p + 4);
        m->gpus_per_node = get32(p + 8);
        memcpy(m->id, p + 12, GR_CHECKS_BOOT_ID_BYTES);
        break;
    default: {
        if (n < 2)
            return gr_err_set(err, GR_EPARSE, "bootstrap: ERROR too short");
        uint16_t el = get16(p);
        if ((size_t)el + 2 != n || el >= sizeof m->error)
            return gr_err_set(err, GR_EPARSE, "bootstrap: ERROR length mismatch");
        if (memchr(p + 2, '\0', el))
            return gr_err_set(err, GR_EPARSE, "bootstrap: NUL in error message");
        memcpy(m->error, p + 2, el);
        break;
    }
    }
    *consumed = GR_CHECKS_BOOT_HEADER + n;
    return GR_OK;
}
