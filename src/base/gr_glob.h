/*
 * gr_glob.h — shell-style glob matching with Go path.Match semantics
 * (path/filepath.Match on Linux is the same).
 *
 *   *         any sequence of non-'/' bytes (possibly empty)
 *   ?         one non-'/' character (a UTF-8 code point; an invalid byte
 *             counts as one character)
 *   [abc]     one character in the set; [a-z] ranges; [^...] negation;
 *             ranges compare Unicode code points
 *   \c        the character c literally (also inside [...])
 *   c         any other byte matches itself
 *
 * The whole name must match. A malformed pattern — unclosed '[', an empty
 * class "[]", a class starting with '-' or ']' in range position ("[-a]",
 * "[a-]", "[]a]"), a trailing '\', invalid UTF-8 inside [...] — never
 * matches: gr_glob_match() returns false and gr_glob_validate() reports it
 * (Go's ErrBadPattern, "syntax error in pattern").
 *
 * About Go's subtle rule: older Go versions returned (false, nil) for some
 * malformed patterns when the name stopped matching before the bad part was
 * reached ("a[" vs "b"); Go ≥ 1.16 scans the rest of the pattern after a
 * mismatch so ErrBadPattern is always reported. We follow current Go: the
 * pattern is validated as a whole first, so a malformed pattern is an error
 * (and matches nothing) regardless of the name. gr_glob_match_go() returns
 * the (matched, error) pair the way current Go does.
 *
 * Both strings are byte strings (no NUL inside). No allocation, iterative
 * (no recursion), thread-safe. Worst-case time O(len(pattern) * len(name)).
 */
#ifndef GR_GLOB_H
#define GR_GLOB_H

#include <stdbool.h>
#include <stddef.h>

#include "gr_err.h"

/* true when `name` matches `pattern`; false when not, or the pattern is
 * malformed, or either is NULL. */
bool gr_glob_match(const char *pattern, const char *name);

/* GR_OK when the pattern is well formed; else GR_EINVAL with
 *   invalid glob pattern "x": syntax error in pattern (<what>)
 */
int gr_glob_validate(const char *pattern, gr_err *err);

/* Go's path.Match(pattern, name): GR_OK with *matched set, or GR_EINVAL
 * (malformed pattern, *matched = false, message as gr_glob_validate()). */
int gr_glob_match_go(const char *pattern, const char *name, bool *matched, gr_err *err);

/* Length-delimited variants (strings need not be NUL-terminated). */
bool gr_glob_match_n(const char *pattern, size_t plen, const char *name, size_t nlen);
int gr_glob_validate_n(const char *pattern, size_t plen, gr_err *err);

#endif
