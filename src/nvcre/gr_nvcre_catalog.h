/*
 * gr_nvcre_catalog.h — the Certification category catalog: WorkflowSpecs per
 * {domain, variant} rendered from the data files under deploy/catalog/
 * (compiled in with gr_embed_files; docs/catalog.md describes the template
 * language, the option precedence, GPU defaults and platform files).
 *
 * Pure: no I/O, no clock. A loaded catalog is immutable and may be shared
 * between threads.
 *
 * Ownership: gr_nvcre_catalog_load() returns a catalog the caller frees with
 * gr_nvcre_catalog_free(). Strings returned by the accessors are borrowed
 * from the catalog (valid until it is freed). json_t out-parameters are new
 * references owned by the caller (json_decref()); json_t inputs are borrowed.
 *
 * Errors: GR_EPARSE (a catalog file is malformed: message names the file),
 * GR_ENOTFOUND (no such category: message "Unknown certification category:
 * <domain>/<variant>", the §1.2 CategoryNotFound text), GR_EINVAL (a
 * placeholder has no option, an option has the wrong type: message names the
 * file, the placeholder and the fix), GR_ENOMEM.
 */
#ifndef GR_NVCRE_CATALOG_H
#define GR_NVCRE_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "gr_err.h"

typedef struct gr_nvcre_catalog gr_nvcre_catalog;

/* What to render. Every pointer is borrowed; NULL options mean none. */
typedef struct {
    const char *domain;             /* e.g. "communication" */
    const char *variant;            /* e.g. "nccl-all-reduce" */
    const char *platform;           /* aws gcp azure oci onprem … (detected) */
    const char *gpu_architecture;   /* h100 gb200 l40s … (detected) */
    const json_t *target;           /* TargetSpec → orchestration.target; NULL = {} */
    const json_t *global_options;   /* Certification spec (inline CategoryOptions) */
    const json_t *category_options; /* categories[i].options; wins over global */
} gr_nvcre_catalog_req;

/* Parse the embedded catalog. */
int gr_nvcre_catalog_load(gr_nvcre_catalog **out, gr_err *err);
void gr_nvcre_catalog_free(gr_nvcre_catalog *cat);

/* Entries in catalog order (sorted by domain, then variant). */
size_t gr_nvcre_catalog_count(const gr_nvcre_catalog *cat);
void gr_nvcre_catalog_entry(const gr_nvcre_catalog *cat, size_t i, const char **domain,
                            const char **variant, const char **description);
/* The entry's source file text (for `gpuready catalog show --source`); NULL
 * when there is no such entry. */
const char *gr_nvcre_catalog_source(const gr_nvcre_catalog *cat, const char *domain,
                                    const char *variant);
bool gr_nvcre_catalog_has(const gr_nvcre_catalog *cat, const char *domain, const char *variant);

/* gpusPerNode / mlnxPerNode for an architecture on a platform (unknown
 * architecture: the `unknown` row, 4/0). */
void gr_nvcre_catalog_gpu_defaults(const gr_nvcre_catalog *cat, const char *arch,
                                   const char *platform, int *gpus_per_node, int *mlnx_per_node);

/* Whether arch has its own gpuDefaults row (else the `unknown` fallback). */
bool gr_nvcre_catalog_arch_known(const gr_nvcre_catalog *cat, const char *arch);
/* Whether arch's default gpusPerNode is ambiguous (servers come in several
 * sizes: explicitGpuCountArchitectures): a detected count that differs
 * from the default must be confirmed with options.gpusPerNode. */
bool gr_nvcre_catalog_explicit_gpu_count(const gr_nvcre_catalog *cat, const char *arch);

/* The GPU architecture of an `nvidia.com/gpu.product` label value: strip
 * "NVIDIA-", RTX-PRO-6000* → rtxpro6000, else the first '-' segment
 * lowercased ("NVIDIA-H100-80GB-HBM3" → "h100"); "" or NULL → "unknown".
 * Writes at most n bytes (NUL included) into buf and returns buf. */
char *gr_nvcre_catalog_arch_of_product(const char *product, char *buf, size_t n);

/* The options a platform file gives an architecture (nicResourceName,
 * ncclEnv, tolerations, podAnnotations, hostNetwork, …) laid over the
 * catalog defaults, with gpusPerNode/mlnxPerNode from the GPU defaults and
 * enableMNNVL for MNNVL architectures: what the WorkloadRun controller's
 * generated platform settings start from. *out is owned by the caller. */
int gr_nvcre_catalog_platform_options(const gr_nvcre_catalog *cat, const char *platform,
                                      const char *arch, json_t **out, gr_err *err);

/* A category's own CategoryOptions field that its entry cannot use
 * (gr_nvcre_catalog_render()'s GR_EINVAL): field, domain, variant, why. */
#define GR_NVCRE_CATALOG_MSG_UNUSED_OPTION_FMT \
    "options.%s: %s/%s cannot use it: %s. Remove it from this category's options"

/* Which CategoryOptions fields the user set for req (req->global_options,
 * the Certification spec, and req->category_options) would not reach the
 * workload: fields no template of the entry reads (directly or through
 * derived options: resources → resourceLimits/Requests, mlnxPerNode and
 * nicResourceName → nicLimits, testScale diagnose/intra-rack → the
 * orchestration they set). A global field the category overrides counts as
 * the category's. *unused = [{"field", "scope": "category"|"global",
 * "hint": why}] (owned by the caller), [] when every field is used.
 * Errors as gr_nvcre_catalog_render() (rendering is how use is found). */
int gr_nvcre_catalog_check_options(const gr_nvcre_catalog *cat, const gr_nvcre_catalog_req *req,
                                   json_t **unused, gr_err *err);

/* Render one category: *spec gets the WorkflowSpec (dependencies,
 * jobTemplate, orchestration, validation when thresholds are set);
 * options (may be NULL) gets the resolved options the template saw.
 * A field of req->category_options the entry cannot use is refused:
 * GR_EINVAL, GR_NVCRE_CATALOG_MSG_UNUSED_OPTION_FMT. Unused global fields
 * are not refused here: they may be meant for another category of the
 * Certification (gr_nvcre_cert_check_options()). */
int gr_nvcre_catalog_render(const gr_nvcre_catalog *cat, const gr_nvcre_catalog_req *req,
                            json_t **spec, json_t **options, gr_err *err);

#endif
