/*
 * gr_smp.h — Kubernetes strategic merge patch (SMP), driven by schema.
 *
 * Applies a strategic merge patch the way the kube-apiserver does for
 * `kubectl patch --type strategic` (apimachinery's mergeMap with
 * MergeParallelList and IgnoreUnmatchedNulls): maps merge recursively, null
 * deletes a member, lists whose field has patch strategy "merge" merge by
 * their patch merge key (lists of maps) or as a set (lists of scalars), all
 * other lists replace; the directives `$patch: replace|delete` (in maps and
 * list items), `$retainKeys`, `$setElementOrder/<field>` and
 * `$deleteFromPrimitiveList/<field>` are honoured, and list order follows
 * the apiserver's rules (patch items ordered by the patch, server-only
 * items by the original, interleaved by the original's order).
 *
 * Patch strategies and merge keys are never hand-kept: they come from
 * src/nvcre/data/smp-schema.json, which scripts/gen-smp-schema generates
 * from the OpenAPI v3 that the pinned kube-apiserver publishes (core/v1,
 * meta/v1 and the NVCRE CRDs of deploy/crds/). The file is compiled in;
 * gr_smp_schema_builtin() returns it. test/nvcre/test_smp_kubectl.sh checks
 * the result against `kubectl patch --type strategic --dry-run=server`.
 *
 * Roots name the type of the document being patched:
 *   GR_SMP_ROOT_JOB_TEMPLATE  Workflow spec.jobTemplate (NVCRE
 *                             JobTemplateSpec: metadata is ObjectMeta,
 *                             TrainJob lists replace as upstream's do)
 *   "v1/PodTemplate", "v1/ConfigMap", "v1/Service"   core types
 * An unknown root (or NULL) patches untyped: maps merge, lists replace.
 *
 * Ownership: gr_smp_apply() replaces *doc with the patched document (the old
 * reference is released) only on success; `patch` is borrowed and never
 * modified. The builtin schema is static (never free it); one from
 * gr_smp_schema_load() is freed with gr_smp_schema_free().
 *
 * Errors: GR_EINVAL with a message naming the JSON path and the rule
 * (e.g. "spec.containers[1]: map does not contain declared merge key
 * \"name\""), GR_ETOOBIG past GR_SMP_MAX_DEPTH nesting, GR_ENOMEM.
 *
 * Thread-safety: a schema is immutable after loading and may be shared;
 * gr_smp_apply() is reentrant.
 */
#ifndef GR_SMP_H
#define GR_SMP_H

#include <stddef.h>

#include <jansson.h>

#include "gr_err.h"

#define GR_SMP_ROOT_JOB_TEMPLATE "nvcre.nvidia.com/v1alpha1/Workflow.spec.jobTemplate"

/* Nesting accepted in a patch (deeper patches: GR_ETOOBIG). */
#define GR_SMP_MAX_DEPTH 128

typedef struct gr_smp_schema gr_smp_schema;

/* The compiled-in schema (parsed once on first use; thread-safe). NULL only
 * when memory ran out on first use. Borrowed, static. */
const gr_smp_schema *gr_smp_schema_builtin(void);

/* Parse a schema in the format of smp-schema.json. *out owned by the
 * caller. GR_EPARSE / GR_EINVAL / GR_ENOMEM. */
int gr_smp_schema_load(const char *json, size_t len, gr_smp_schema **out, gr_err *err);
void gr_smp_schema_free(gr_smp_schema *s);

/* Text naming the schema's source (generatedFrom); borrowed. */
const char *gr_smp_schema_source(const gr_smp_schema *s);

/* Apply strategic merge patch `patch` (a JSON object) to *doc (an object)
 * typed by `root` in `schema` (schema NULL = builtin). Atomic. */
int gr_smp_apply(json_t **doc, const json_t *patch, const gr_smp_schema *schema, const char *root,
                 gr_err *err);

#endif
