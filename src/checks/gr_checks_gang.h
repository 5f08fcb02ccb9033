/*
 * gr_checks_gang.h — the gang stage of preflight-nccl-allreduce (library
 * gr_checks for the parser, gr_checks_rt for reading the directory).
 *
 * The gang ConfigMap is mounted at GANG_CONFIG_DIR with the keys
 * expected_count, peers, master_addr, master_port and gang_id. The kubelet
 * mounts it as an "atomic writer" directory: each key is a symlink
 * `key -> ..data/key`, `..data` is a symlink to a timestamped directory, and
 * an update swaps `..data`. gr_checks_gang_read_dir() reads all keys through
 * one resolved `..data` target and re-reads when `..data` moved meanwhile,
 * so a snapshot never mixes two versions. A plain directory (no `..data`)
 * is read as is.
 *
 * peers: one line per pod, `podName;podIP;rank` or
 * `podName;podIP;rank;check1,check2` (the check names the pod selected).
 * A bad rank reads as -1; lines with fewer than two fields are skipped.
 *
 * Ownership: gr_checks_gang_files owns its strings (gr_checks_gang_files_free);
 * gr_checks_gang owns its peer array (gr_checks_gang_free). Caps: each key
 * file at most GR_CHECKS_GANG_FILE_MAX bytes (GR_ETOOBIG), at most
 * GR_CHECKS_GANG_MAX_PEERS peers (GR_ETOOBIG).
 */
#ifndef GR_CHECKS_GANG_H
#define GR_CHECKS_GANG_H

#include <stddef.h>
#include <stdint.h>

#include "gr_err.h"

#define GR_CHECKS_GANG_FILE_MAX     ((size_t)4 << 20)
#define GR_CHECKS_GANG_MAX_PEERS    4096
#define GR_CHECKS_GANG_DEFAULT_PORT 29500

typedef struct gr_checks_gang_files {
    char *expected_count; /* NULL = key absent */
    char *peers;
    char *master_addr;
    char *master_port;
    char *gang_id;
} gr_checks_gang_files;

void gr_checks_gang_files_free(gr_checks_gang_files *f);

typedef struct gr_checks_gang_peer {
    char name[256];
    char ip[64];
    int rank;         /* -1 when absent or not a number */
    int has_checks;   /* 4-field line */
    char checks[512]; /* normalized: trimmed, sorted, comma-joined */
} gr_checks_gang_peer;

typedef struct gr_checks_gang {
    long expected_count;  /* 0 = missing or not a number yet */
    int expected_invalid; /* expected_count present but not a whole number */
    char gang_id[256];
    char master_addr[256];
    int master_port; /* default 29500 */
    gr_checks_gang_peer *peers;
    size_t n_peers;
    size_t skipped_lines; /* malformed peer lines */
} gr_checks_gang;

/* Parse a snapshot. GR_EINVAL for an invalid master_port (a configuration
 * error), GR_ETOOBIG, GR_ENOMEM. Anything merely incomplete parses fine. */
int gr_checks_gang_parse(const gr_checks_gang_files *f, gr_checks_gang *out, gr_err *err);
void gr_checks_gang_free(gr_checks_gang *g);

/* Complete: expected_count > 0 and at least that many peers. */
int gr_checks_gang_complete(const gr_checks_gang *g);

/* Index of the peer named `pod`, or -1. */
long gr_checks_gang_find(const gr_checks_gang *g, const char *pod);

/* 0 when every peer selected the same checks (peers without a 4th field
 * count as an empty selection when any peer has one); 1 on a mismatch, with
 * "p0=[a,b]; p1=[a]" (every peer, in order) in `detail`. */
int gr_checks_gang_checks_mismatch(const gr_checks_gang *g, char *detail, size_t len);

/* Read a snapshot of `dir` (see above). Absent keys are NULL. GR_EIO for an
 * unreadable directory, GR_ETOOBIG, GR_ENOMEM; GR_EAGAIN when `..data` kept
 * moving for 20 tries. */
int gr_checks_gang_read_dir(const char *dir, gr_checks_gang_files *out, gr_err *err);

#endif
