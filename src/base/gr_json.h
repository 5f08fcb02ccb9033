/*
 * gr_json.h — JSON helpers on jansson: strict parsing, equality,
 * JSON Pointer (RFC 6901), JSON Patch (RFC 6902) apply and build,
 * JSON Merge Patch (RFC 7386) apply and create.
 *
 * Ownership (jansson rules): `json_t *` parameters named `*_new`/documented
 * as "stolen" take the caller's reference even on failure; everything else is
 * borrowed. Values returned through `json_t **out` are new references owned by
 * the caller. Pointers returned by gr_json_ptr_get() are borrowed from the
 * document. Strings returned as `char *` are owned by the caller (free()).
 *
 * Errors: GR_EINVAL for malformed pointers/patches (the message names the
 * operation index and member, e.g. "patch[2] (op \"add\", path
 * \"/spec/x/3\"): array index 3 is out of range (array has 2 elements)"),
 * GR_ENOTFOUND where a path does not exist (pointer resolution, patch
 * remove/replace/move/copy/test source), GR_ECONFLICT for a failed patch
 * "test", GR_EPARSE for malformed JSON text, GR_ENOMEM, GR_ETOOBIG.
 *
 * JSON Patch application is atomic: on any error the target document is left
 * exactly as it was (the patch is applied to a deep copy that replaces the
 * original only on success).
 *
 * Thread-safety: reentrant; no global state. jansson values are not
 * thread-safe, so do not share a document between threads while patching.
 */
#ifndef GR_JSON_H
#define GR_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "gr_buf.h"
#include "gr_err.h"

/* ---------------------------------------------------------------- helpers */

/* Longest JSON Pointer text built (gr_json_ptr_build, gr_json_ptr_escape,
 * merge-patch paths). */
#define GR_JSON_POINTER_MAX ((size_t)64 * 1024 * 1024)

/* Maximum nesting accepted by gr_json_parse() and by patch values. */
#define GR_JSON_MAX_DEPTH 512

/* Parse JSON text buf[0..len) (any top-level value). Duplicate object keys
 * are rejected. `name` (borrowed, may be NULL) prefixes messages:
 * "name:line:column: why". GR_EPARSE / GR_ETOOBIG (len > max_len when
 * max_len != 0) / GR_ENOMEM. */
int gr_json_parse(const char *buf, size_t len, size_t max_len, const char *name, json_t **out,
                  gr_err *err);

/* Whether a failed jansson load (json_loadb() & co.) ran out of memory.
 * jansson 2.14 reports most allocation failures in its parser as syntax
 * errors ("invalid token near '\"key\"'", or an empty text) instead of
 * json_error_out_of_memory; this recognises those too. */
bool gr_json_load_error_is_nomem(const json_error_t *je);

/* Append the compact serialisation of `v` (jansson `flags`, e.g.
 * JSON_COMPACT | JSON_SORT_KEYS; JSON_ENCODE_ANY is always added) to `out`,
 * respecting its cap. GR_ETOOBIG / GR_ENOMEM; on error `out` keeps its
 * previous contents. */
int gr_json_dump_buf(const json_t *v, size_t flags, gr_buf *out);

/* obj[key] as an object: created (or put in place of a member of another
 * type) when it is not one. Borrowed reference, owned by `obj`. NULL when
 * `obj` is not an object or on allocation failure. */
json_t *gr_json_object_child(json_t *obj, const char *key);
/* The same for an array member: obj[key] as an array, created empty (or put
 * in place of a member of another type) when it is not one. */
json_t *gr_json_array_child(json_t *obj, const char *key);

/* Structural equality as RFC 6902 "test" defines it: same type, object
 * member order ignored, numbers compared by value (1 == 1.0), strings
 * byte for byte. NULL equals only NULL. */
bool gr_json_equal(const json_t *a, const json_t *b);

/* "object", "array", "string", "number", "boolean", "null" (or "missing"
 * for NULL). Static string. */
const char *gr_json_type_name(const json_t *v);

/* ---------------------------------------------------- JSON Pointer (6901) */

/* Escape one reference token: "~" → "~0", "/" → "~1". Caller frees.
 * NULL on ENOMEM. */
char *gr_json_ptr_escape(const char *key);

/* Append "/" + escaped `key` to `ptr` (start from an empty gr_buf for the
 * root ""). GR_ETOOBIG / GR_ENOMEM. */
int gr_json_ptr_append(gr_buf *ptr, const char *key);

/* Append "/" + decimal index, or "/-" when index == GR_JSON_PTR_END. */
#define GR_JSON_PTR_END ((size_t)-1)
int gr_json_ptr_append_index(gr_buf *ptr, size_t index);

/* Build a pointer from NULL-terminated unescaped keys:
 *   gr_json_ptr_build("metadata", "annotations",
 *                     "nvsentinel.nvidia.com/preflight-checks", NULL)
 *   → "/metadata/annotations/nvsentinel.nvidia.com~1preflight-checks"
 * Caller frees. NULL on ENOMEM. No keys gives "" (the whole document). */
char *gr_json_ptr_build(const char *first, ...) __attribute__((sentinel));

/* Split a pointer into unescaped tokens. "" gives 0 tokens; "/" gives one
 * empty token. GR_EINVAL when `ptr` is not empty and does not start with
 * "/", or has a "~" not followed by 0 or 1. On success *tokens is a
 * NULL-terminated array owned by the caller: gr_json_ptr_tokens_free(). */
int gr_json_ptr_parse(const char *ptr, char ***tokens, size_t *ntokens, gr_err *err);
void gr_json_ptr_tokens_free(char **tokens);

/* Array index rule of RFC 6901/6902: "0" or [1-9][0-9]*, fits size_t.
 * Returns true and sets *index; "-" and everything else return false. */
bool gr_json_ptr_parse_index(const char *token, size_t *index);

/* Resolve `ptr` in `doc`. *out is BORROWED from doc (valid while doc holds
 * it). GR_EINVAL (malformed pointer), GR_ENOTFOUND (no such member/index;
 * the message names the first missing token). */
int gr_json_ptr_resolve(const json_t *doc, const char *ptr, json_t **out, gr_err *err);

/* Convenience: borrowed value at `ptr` or NULL (malformed or missing). */
json_t *gr_json_ptr_get(const json_t *doc, const char *ptr);

/* ------------------------------------------------------ JSON Patch (6902) */

/* Nodes that "copy" operations may create in one application (a patch that
 * copies a subtree into itself doubles the document each time). Past it the
 * patch fails with GR_ETOOBIG. */
#define GR_JSON_PATCH_MAX_COPY_NODES ((size_t)1000000)

/* Apply `patch` (a JSON array of operation objects) to *doc. On success
 * *doc may point to a different value (e.g. a patch replacing the root "")
 * and the previous reference has been released; on failure *doc is
 * untouched. Unknown members of an operation are ignored; unknown "op"
 * values, missing "path"/"from"/"value" are GR_EINVAL. */
int gr_json_patch_apply(json_t **doc, const json_t *patch, gr_err *err);

/* Like gr_json_patch_apply() but leaves `doc` alone: *out receives a new
 * patched document (caller owns it). */
int gr_json_patch_apply_copy(const json_t *doc, const json_t *patch, json_t **out, gr_err *err);

/* Patch builder: append one operation to `patch` (a JSON array). `path`
 * and `from` are JSON Pointers (build them with gr_json_ptr_*; they are
 * validated). `value` is STOLEN (also on failure). GR_EINVAL (patch not an
 * array, malformed pointer, value NULL), GR_ENOMEM. */
int gr_json_patch_add(json_t *patch, const char *path, json_t *value, gr_err *err);
int gr_json_patch_remove(json_t *patch, const char *path, gr_err *err);
int gr_json_patch_replace(json_t *patch, const char *path, json_t *value, gr_err *err);
int gr_json_patch_move(json_t *patch, const char *from, const char *path, gr_err *err);
int gr_json_patch_copy(json_t *patch, const char *from, const char *path, gr_err *err);
int gr_json_patch_test(json_t *patch, const char *path, json_t *value, gr_err *err);

/* ------------------------------------------------ JSON Merge Patch (7386) */

/* Apply a merge patch: *target is replaced by the result (the old
 * reference is released; a non-object patch replaces the whole target).
 * `patch` is borrowed. On failure (GR_ENOMEM only) *target is untouched. */
int gr_json_merge_patch_apply(json_t **target, const json_t *patch, gr_err *err);

/* Create a merge patch that turns `orig` into `modified` (both borrowed):
 * members removed become null, changed members are replaced, nested objects
 * are diffed recursively; arrays are replaced whole. Identical objects
 * give {}; when either document is not an object the patch is `modified`
 * itself (a merge patch that is not an object replaces the target).
 * *out is owned by the caller.
 * Limitation of RFC 7386: a member of `modified` whose value is null cannot
 * be expressed (null means delete); such members yield GR_EINVAL naming the
 * pointer. GR_ENOMEM. */
int gr_json_merge_patch_create(const json_t *orig, const json_t *modified, json_t **out,
                               gr_err *err);

#endif
