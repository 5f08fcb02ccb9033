/*
 * gr_checks_boot.h — the TCP bootstrap of preflight-nccl-allreduce: node
 * rank 0 listens on master_addr:master_port, collects one HELLO per other
 * node, creates the ncclUniqueId and sends it back (ID) — or an ERROR.
 *
 * Wire format (all integers big-endian), one frame per message:
 *
 *   "GRB1" | type u8 | payload length u32 | payload
 *
 *   HELLO (1): node_rank u32, nnodes u32, gpus_per_node u32,
 *              gang_id length u16, gang_id bytes
 *   ID    (2): world_size u32, nnodes u32, gpus_per_node u32, id[128]
 *   ERROR (3): message length u16, message bytes (UTF-8, no NUL)
 *
 * The payload length must match the type exactly; anything else is
 * GR_EPARSE. gr_checks_boot_decode() is pure and fuzzed.
 *
 * Ownership: messages are plain values. Caps: gang_id < 256 bytes, error
 * message < 512 bytes, payload <= GR_CHECKS_BOOT_MAX_PAYLOAD.
 */
#ifndef GR_CHECKS_BOOT_H
#define GR_CHECKS_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "gr_err.h"

#define GR_CHECKS_BOOT_MAGIC       "GRB1"
#define GR_CHECKS_BOOT_HEADER      9
#define GR_CHECKS_BOOT_MAX_PAYLOAD 1024
#define GR_CHECKS_BOOT_ID_BYTES    128

enum { GR_CHECKS_BOOT_HELLO = 1, GR_CHECKS_BOOT_ID = 2, GR_CHECKS_BOOT_ERROR = 3 };

typedef struct gr_checks_boot_msg {
    int type;
    uint32_t node_rank;                        /* HELLO */
    uint32_t nnodes;                           /* HELLO, ID */
    uint32_t gpus_per_node;                    /* HELLO, ID */
    uint32_t world_size;                       /* ID */
    char gang_id[256];                         /* HELLO */
    unsigned char id[GR_CHECKS_BOOT_ID_BYTES]; /* ID */
    char error[512];                           /* ERROR */
} gr_checks_boot_msg;

/* Encode into buf (cap bytes); *len = frame length. GR_EINVAL for an
 * unknown type or over-long strings, GR_ETOOBIG if cap is too small. */
int gr_checks_boot_encode(const gr_checks_boot_msg *m, unsigned char *buf, size_t cap, size_t *len,
                          gr_err *err);

/* Decode the first frame of buf[0..len). GR_OK: *m filled and *consumed set.
 * GR_EAGAIN: need more bytes. GR_EPARSE: bad magic, type, length or content
 * (message says which). */
int gr_checks_boot_decode(const unsigned char *buf, size_t len, gr_checks_boot_msg *m,
                          size_t *consumed, gr_err *err);

/* --- I/O (library gr_checks_rt) ------------------------------------------ */

/* Generates the unique id on rank 0 once every node said HELLO. */
typedef int (*gr_checks_boot_make_id)(void *ctx, unsigned char id[GR_CHECKS_BOOT_ID_BYTES],
                                      gr_err *err);

/* Rank 0: listen on addr:port, accept HELLOs from nodes 1..nnodes-1 (same
 * gang_id, nnodes and gpus_per_node as `self`, distinct ranks in range),
 * then make the id and send ID to every node; `*out` is the ID message.
 * Peers that disagree get an ERROR and the call fails. GR_ETIMEDOUT past
 * timeout_ms, GR_EIO, GR_EINVAL (mismatch, message names it), GR_ECANCELED
 * when *stop becomes non-zero. */
int gr_checks_boot_serve(const char *addr, int port, const gr_checks_boot_msg *self, int timeout_ms,
                         gr_checks_boot_make_id make_id, void *ctx, volatile int *stop,
                         gr_checks_boot_msg *out, gr_err *err);

/* Other nodes: connect to addr:port (retrying until timeout_ms while rank 0
 * is not listening yet), send `hello`, wait for ID (GR_OK, *out) or ERROR
 * (GR_EINVAL with the server's message). */
int gr_checks_boot_join(const char *addr, int port, const gr_checks_boot_msg *hello, int timeout_ms,
                        volatile int *stop, gr_checks_boot_msg *out, gr_err *err);

#endif
