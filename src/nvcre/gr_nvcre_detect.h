/*
 * gr_nvcre_detect.h — node-allocatable auto-detection for one Certification
 * category (fact sheet §1.2 "GPUDefaults(arch, platform), NIC detection, drop
 * under-capacity nodes"; §5.3 fixture families *-autodetect, *-ambiguous,
 * *-require-explicit-count, *-under-capacity, unknown-arch-fallback-event).
 * Pure: reads the target Nodes' status.allocatable, no I/O, no clock.
 *
 * Rules (docs/certification.md "Auto-detection"):
 *  - Only Nodes that report status.allocatable take part; a Node without it
 *    tells nothing and is kept (so is every Node when none reports it).
 *  - GPU count, unless the user set gpusPerNode (category or global): the
 *    most common allocatable nvidia.com/gpu > 0 (ties: the larger); nodes
 *    with another count get a Warning GPUCountMismatch naming them. For an
 *    architecture whose default is ambiguous (catalog
 *    explicitGpuCountArchitectures, e.g. rtxpro6000) a count that differs
 *    from the default fails the category: fail names options.gpusPerNode.
 *  - NIC, unless the user set nicResourceName: when the platform default
 *    names a resource that no reporting Node offers, the known NIC
 *    resources the Nodes do offer (vpc.amazonaws.com/efa,
 *    nvidia.com/mlnxnics, nvidia.com/sriov..., nvidia.com/hostdev, rdma/...)
 *    are candidates: one → it, with its most common count as mlnxPerNode
 *    (unless the user set mlnxPerNode), Normal NICDetected; several →
 *    Warning NICDetectionAmbiguous and no NIC request (the category still
 *    runs, over the TCP/socket path; the message says to set
 *    options.nicResourceName); none → Warning NICNotDetected and no NIC
 *    request. A platform without a default NIC resource (GKE: NICs through
 *    multi-networking annotations), or whose mlnxPerNode for the
 *    architecture is 0 (no NIC wanted), is left alone.
 *  - Under capacity: a reporting Node whose allocatable nvidia.com/gpu is
 *    below the resolved gpusPerNode, or (with a NIC request) whose NIC
 *    resource is absent or below mlnxPerNode, is dropped (Warning
 *    InsufficientNodeCapacity listing them); keep holds the rest.
 *  - Unknown architecture: Warning UnknownGPUArchitecture with the fallback
 *    values used.
 *
 * Ownership: req is borrowed; gr_nvcre_detect_result_free() releases the
 * result's json (new references). Errors: GR_ENOMEM only.
 */
#ifndef GR_NVCRE_DETECT_H
#define GR_NVCRE_DETECT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "gr_err.h"

#define GR_NVCRE_REASON_GPU_COUNT_DETECTED    "GPUCountDetected"
#define GR_NVCRE_REASON_GPU_COUNT_MISMATCH    "GPUCountMismatch"
#define GR_NVCRE_REASON_NIC_DETECTED          "NICDetected"
#define GR_NVCRE_REASON_NIC_AMBIGUOUS         "NICDetectionAmbiguous"
#define GR_NVCRE_REASON_NIC_NOT_DETECTED      "NICNotDetected"
#define GR_NVCRE_REASON_INSUFFICIENT_CAPACITY "InsufficientNodeCapacity"
#define GR_NVCRE_REASON_UNKNOWN_ARCHITECTURE  "UnknownGPUArchitecture"

#define GR_NVCRE_DETECT_MAX_LISTED 10 /* node names listed in one message */

typedef struct {
    const json_t *nodes;            /* the selected target Nodes (array) */
    const char *arch;               /* detected architecture */
    const char *product;            /* the product label it came from (messages), may be NULL */
    const json_t *global_options;   /* the Certification spec */
    const json_t *category_options; /* categories[i].options, may be NULL */
    /* catalog defaults for arch on the platform
     * (gr_nvcre_catalog_platform_options()): gpusPerNode, mlnxPerNode,
     * nicResourceName */
    const json_t *platform_options;
    bool arch_known;     /* arch has a gpuDefaults row */
    bool explicit_count; /* arch's default count is ambiguous */
    bool uses_nic;       /* the entry requests NICs (nicResourceName reaches it):
                          * otherwise no NIC detection and no NIC capacity */
} gr_nvcre_detect_req;

typedef struct {
    json_t *options;                  /* detected fields to lay under the user's options */
    json_t *keep;                     /* names of the Nodes that remain, in input order */
    size_t dropped;                   /* Nodes dropped for capacity */
    int gpus_per_node, mlnx_per_node; /* resolved */
    char nic[128];                    /* NIC resource requested, "" none */
    json_t *events;                   /* [{type, reason, message}] */
    char fail[768];                   /* non-empty: the category fails with this message */
} gr_nvcre_detect_result;

int gr_nvcre_detect(const gr_nvcre_detect_req *req, gr_nvcre_detect_result *out, gr_err *err);
void gr_nvcre_detect_result_free(gr_nvcre_detect_result *r);

/* An allocatable quantity as a non-negative integer: decimal digits, or
 * digits with a k/M/G suffix ("1k" = 1000); anything else (absent,
 * fractional, milli) → -1. Capped at 1e9. */
long gr_nvcre_detect_quantity(const json_t *q);

/* Whether an extended resource name is a known NIC resource. */
bool gr_nvcre_detect_is_nic_resource(const char *name);

#endif
