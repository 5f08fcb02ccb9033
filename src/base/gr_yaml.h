/*
 * gr_yaml.h — YAML (one or many documents) to JSON (jansson).
 *
 * Parsing is done by libfyaml; the conversion to JSON uses gpuready's own
 * YAML 1.2 core-schema rules so the result does not depend on the libfyaml
 * version:
 *
 *   plain scalar                          JSON
 *   ~ null Null NULL (or nothing)         null
 *   true True TRUE false False FALSE      true / false
 *   [-+]?[0-9]+   0x[0-9a-fA-F]+  0o[0-7]+ integer (decimal "010" is 10)
 *   [-+]?(.[0-9]+|[0-9]+(.[0-9]*)?)([eE][-+]?[0-9]+)?   real
 *   anything else (yes/no/on/off too)     string
 *
 * Quoted ('...' "...") and block (| >) scalars are always strings. Explicit
 * tags are honoured: !!str !!int !!float !!bool !!null !!map !!seq (a value
 * that does not fit its tag is an error); the non-specific tag `!` and any
 * other tag (!!binary, !!timestamp, !Custom) keep a scalar as a string.
 *
 * Decisions where YAML and JSON disagree (all reported as GR_EPARSE with
 * "name:line:column: ..."):
 *  - .inf -.inf .nan (any case form of the core schema) are errors: JSON
 *    has no NaN/Infinity. Quote them to keep them as strings.
 *  - integers outside int64 are errors (quote them to keep them as strings);
 *    reals that overflow a double are errors.
 *  - duplicate keys in a mapping are errors (after conversion: `1:` and
 *    `"1":` are the same JSON key).
 *  - mapping keys must be scalars; a scalar key becomes a JSON string: strings
 *    as written, null → "null", booleans → "true"/"false", integers in
 *    decimal (0x10 → "16"), reals as printed by "%.17g".
 *  - merge keys (`<<: *base` or `<<: [*a, *b]`, YAML 1.1 style, as kubectl
 *    accepts them): keys written in the mapping win over merged ones; among
 *    several merged mappings the earlier one wins.
 *  - anchors/aliases are expanded into copies. Expansion is capped
 *    (GR_YAML_MAX_ALIAS_NODES nodes created through aliases per call, and
 *    GR_YAML_MAX_DEPTH nesting) so "billion laughs" inputs fail with
 *    GR_ETOOBIG instead of exhausting memory.
 *  - documents that are empty (only comments, `---` with no content) are
 *    skipped, as kubectl does.
 *  - the input must be UTF-8 made of YAML printable characters: invalid
 *    UTF-8, NUL, C0/C1 control characters other than tab/LF/CR/NEL, DEL and
 *    U+FFFE/U+FFFF are errors with their position (libfyaml 0.7.12 would
 *    silently drop or truncate at some of them). Write such characters as
 *    escapes in double-quoted strings.
 *  - single-quoted scalars are decoded by gr_yaml itself ('' and line
 *    folding per YAML 1.2): libfyaml 0.7.12 mis-decodes runs of '' and leaks.
 *  - line breaks (CR LF, CR, LF) are read as LF before parsing, as YAML 1.2
 *    §5.4 says they are: libfyaml 0.7.12 leaks when it folds CR LF breaks in
 *    double-quoted scalars.
 *
 * JSON input (first significant byte '{' or '[') is parsed as a stream of
 * JSON values by jansson first, as kubectl does; the values are the same the
 * YAML path gives. Anything jansson rejects is parsed as YAML, so errors
 * carry YAML positions.
 *
 * Memory: libfyaml 0.7.12 buffers every token of a flow collection that
 * could still be a mapping key (a top-level or sequence-item [..]/{..} up to
 * its line end, and any depth of unclosed flow nesting), about 200 bytes per
 * token. Pathological flow-style YAML can therefore use ~100x its size in
 * memory before the depth cap stops it; JSON input does not (fast path).
 * Pass a small max_bytes for untrusted YAML files.
 *
 * Differences from kubectl (sigs.k8s.io/yaml, YAML 1.1 resolution) that
 * follow from the 1.2 core schema: yes/no/on/off/y/n stay strings, 0644 is
 * the decimal 644 (write 0o644 for octal), 1_000 is a string.
 *
 * Ownership: every json_t returned through an out-parameter is a new
 * reference owned by the caller (json_decref()). On error *out is set to NULL.
 * `name` is borrowed (used only in messages; NULL means "<input>").
 *
 * Thread-safety: reentrant; no global state.
 */
#ifndef GR_YAML_H
#define GR_YAML_H

#include <stddef.h>

#include <jansson.h>

#include "gr_err.h"

/* Default cap for gr_yaml_load_file() when max_bytes == 0. */
#define GR_YAML_MAX_FILE ((size_t)16 * 1024 * 1024)
/* Nodes that may be produced by expanding aliases, per call. */
#define GR_YAML_MAX_ALIAS_NODES ((size_t)100000)
/* Maximum nesting of sequences/mappings (aliases included). */
#define GR_YAML_MAX_DEPTH 256

/* Parse every document in buf[0..len) (need not be NUL-terminated).
 * *out_docs receives a JSON array with one element per non-empty document,
 * in order (an empty array for empty input).
 * Errors: GR_EPARSE (syntax or conversion; message "name:line:col: why"),
 * GR_ETOOBIG (alias expansion / depth caps), GR_ENOMEM. */
int gr_yaml_load_all(const char *buf, size_t len, const char *name, json_t **out_docs, gr_err *err);

/* Parse exactly one document. Empty input (no non-empty document) yields
 * JSON null; more than one non-empty document is GR_EPARSE naming the line
 * where the second starts. */
int gr_yaml_load_one(const char *buf, size_t len, const char *name, json_t **out, gr_err *err);

/* Read `path` (at most max_bytes; 0 means GR_YAML_MAX_FILE) and behave like
 * gr_yaml_load_all() with name = path. GR_EIO when the file cannot be read,
 * GR_ETOOBIG when it is larger than the cap. */
int gr_yaml_load_file(const char *path, size_t max_bytes, json_t **out_docs, gr_err *err);

#endif
