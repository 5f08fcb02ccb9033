/*
 * gr_glob.c — Go path.Match semantics (see gr_glob.h).
 *
 * The pattern is split into chunks: a run of '*' followed by the literal
 * text up to the next '*' outside brackets. Each chunk has a fixed length in
 * characters, so matching a chunk at the leftmost position after a star is
 * what Go does; we follow the same order of attempts so results agree with
 * Go on every input, including the '/' rules.
 */
#include "gr_glob.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define RUNE_ERROR 0xFFFD

typedef struct span {
    const char *p;
    size_t n;
} span;

/* Decode one UTF-8 code point like Go's utf8.DecodeRuneInString: invalid or
 * truncated sequences, overlongs, surrogates and values past U+10FFFF give
 * (U+FFFD, 1). n must be > 0. */
static int32_t decode_rune(const char *str, size_t n, size_t *width)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned char c = s[0];
    *width = 1;
    if (c < 0x80)
        return c;
    size_t need;
    int32_t r;
    int32_t min;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
        r = c & 0x1F;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        r = c & 0x0F;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        r = c & 0x07;
        min = 0x10000;
    } else {
        return RUNE_ERROR;
    }
    if (n < need)
        return RUNE_ERROR;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return RUNE_ERROR;
        r = (r << 6) | (s[i] & 0x3F);
    }
    if (r < min || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF))
        return RUNE_ERROR;
    *width = need;
    return r;
}

/* Split off the next chunk: leading stars, then text up to an unbracketed
 * '*'. A '\' skips the next byte (its validity is checked when matching). */
static void scan_chunk(span *pat, bool *star, span *chunk)
{
    *star = false;
    while (pat->n > 0 && pat->p[0] == '*') {
        pat->p++;
        pat->n--;
        *star = true;
    }
    bool inrange = false;
    size_t i;
    for (i = 0; i < pat->n; i++) {
        char c = pat->p[i];
        if (c == '\\') {
            if (i + 1 < pat->n)
                i++;
        } else if (c == '[') {
            inrange = true;
        } else if (c == ']') {
            inrange = false;
        } else if (c == '*' && !inrange) {
            break;
        }
    }
    chunk->p = pat->p;
    chunk->n = i;
    pat->p += i;
    pat->n -= i;
}

/* A class member: a possibly escaped character. Sets *what on error. */
static bool get_esc(span *chunk, int32_t *r, const char **what)
{
    if (chunk->n == 0 || chunk->p[0] == '-' || chunk->p[0] == ']') {
        *what = chunk->n == 0 ? "unterminated [" : "'-' or ']' where a character was expected";
        return false;
    }
    if (chunk->p[0] == '\\') {
        chunk->p++;
        chunk->n--;
        if (chunk->n == 0) {
            *what = "unterminated [";
            return false;
        }
    }
    size_t w;
    *r = decode_rune(chunk->p, chunk->n, &w);
    if (*r == RUNE_ERROR && w == 1) {
        *what = "invalid UTF-8 in [...]";
        return false;
    }
    chunk->p += w;
    chunk->n -= w;
    if (chunk->n == 0) {
        *what = "unterminated [";
        return false;
    }
    return true;
}

enum { CHUNK_NOMATCH = 0, CHUNK_MATCH = 1, CHUNK_BAD = -1 };

/* Match `chunk` against the start of s. On CHUNK_MATCH *rest is what is left
 * of s. After a mismatch the rest of the chunk is still scanned so that a
 * malformed chunk is always reported (CHUNK_BAD, *what says why). */
static int match_chunk(span chunk, span s, span *rest, const char **what)
{
    bool failed = false;
    while (chunk.n > 0) {
        if (!failed && s.n == 0)
            failed = true;
        char c = chunk.p[0];
        if (c == '[') {
            int32_t r = 0;
            if (!failed) {
                size_t w;
                r = decode_rune(s.p, s.n, &w);
                s.p += w;
                s.n -= w;
            }
            chunk.p++;
            chunk.n--;
            bool negated = false;
            if (chunk.n > 0 && chunk.p[0] == '^') {
                negated = true;
                chunk.p++;
                chunk.n--;
            }
            bool match = false;
            int nrange = 0;
            for (;;) {
                if (chunk.n > 0 && chunk.p[0] == ']' && nrange > 0) {
                    chunk.p++;
                    chunk.n--;
                    break;
                }
                int32_t lo, hi;
                if (!get_esc(&chunk, &lo, what))
                    return CHUNK_BAD;
                hi = lo;
                if (chunk.p[0] == '-') { /* get_esc left chunk non-empty */
                    chunk.p++;
                    chunk.n--;
                    if (!get_esc(&chunk, &hi, what))
                        return CHUNK_BAD;
                }
                if (lo <= r && r <= hi)
                    match = true;
                nrange++;
            }
            if (match == negated)
                failed = true;
        } else if (c == '?') {
            if (!failed) {
                if (s.p[0] == '/')
                    failed = true;
                size_t w;
                (void)decode_rune(s.p, s.n, &w);
                s.p += w;
                s.n -= w;
            }
            chunk.p++;
            chunk.n--;
        } else {
            if (c == '\\') {
                chunk.p++;
                chunk.n--;
                if (chunk.n == 0) {
                    *what = "trailing \\";
                    return CHUNK_BAD;
                }
            }
            if (!failed) {
                if (chunk.p[0] != s.p[0])
                    failed = true;
                s.p++;
                s.n--;
            }
            chunk.p++;
            chunk.n--;
        }
    }
    if (failed)
        return CHUNK_NOMATCH;
    *rest = s;
    return CHUNK_MATCH;
}

static bool has_slash(span s)
{
    return memchr(s.p, '/', s.n) != NULL;
}

/* Go's path.Match. Returns CHUNK_MATCH, CHUNK_NOMATCH or CHUNK_BAD. */
static int go_match(span pat, span name, const char **what)
{
    while (pat.n > 0) {
        bool star;
        span chunk, t;
        scan_chunk(&pat, &star, &chunk);
        if (star && chunk.n == 0) /* trailing '*': rest must have no '/' */
            return has_slash(name) ? CHUNK_NOMATCH : CHUNK_MATCH;
        /* Match at the current position; the last chunk must use it all. */
        int rc = match_chunk(chunk, name, &t, what);
        if (rc == CHUNK_MATCH && (t.n == 0 || pat.n > 0)) {
            name = t;
            continue;
        }
        if (rc == CHUNK_BAD)
            return CHUNK_BAD;
        bool advanced = false;
        if (star) {
            /* Let the star eat 1, 2, ... bytes, never a '/'. */
            for (size_t i = 0; i < name.n && name.p[i] != '/'; i++) {
                span sub = {name.p + i + 1, name.n - i - 1};
                rc = match_chunk(chunk, sub, &t, what);
                if (rc == CHUNK_MATCH) {
                    if (pat.n == 0 && t.n > 0)
                        continue;
                    name = t;
                    advanced = true;
                    break;
                }
                if (rc == CHUNK_BAD)
                    return CHUNK_BAD;
            }
        }
        if (advanced)
            continue;
        /* No match: still report a malformed remainder. */
        while (pat.n > 0) {
            scan_chunk(&pat, &star, &chunk);
            span empty = {"", 0};
            if (match_chunk(chunk, empty, &t, what) == CHUNK_BAD)
                return CHUNK_BAD;
        }
        return CHUNK_NOMATCH;
    }
    return name.n == 0 ? CHUNK_MATCH : CHUNK_NOMATCH;
}

static int validate(span pat, const char **what)
{
    while (pat.n > 0) {
        bool star;
        span chunk, t;
        scan_chunk(&pat, &star, &chunk);
        span empty = {"", 0};
        if (match_chunk(chunk, empty, &t, what) == CHUNK_BAD)
            return CHUNK_BAD;
    }
    return CHUNK_MATCH;
}

static int bad_pattern(gr_err *err, const char *p, size_t n, const char *what)
{
    int shown = n > 200 ? 200 : (int)n;
    return gr_err_set(err, GR_EINVAL,
                      "invalid glob pattern \"%.*s%s\": syntax error in pattern (%s)", shown, p,
                      n > 200 ? "..." : "", what);
}

int gr_glob_validate_n(const char *pattern, size_t plen, gr_err *err)
{
    if (!pattern)
        return gr_err_set(err, GR_EINVAL, "invalid glob pattern: pattern is NULL");
    const char *what = "malformed";
    span p = {pattern, plen};
    if (validate(p, &what) == CHUNK_BAD)
        return bad_pattern(err, pattern, plen, what);
    return GR_OK;
}

int gr_glob_validate(const char *pattern, gr_err *err)
{
    if (!pattern)
        return gr_err_set(err, GR_EINVAL, "invalid glob pattern: pattern is NULL");
    return gr_glob_validate_n(pattern, strlen(pattern), err);
}

bool gr_glob_match_n(const char *pattern, size_t plen, const char *name, size_t nlen)
{
    if (!pattern || !name)
        return false;
    const char *what = "";
    span p = {pattern, plen};
    if (validate(p, &what) == CHUNK_BAD)
        return false;
    span nm = {name, nlen};
    return go_match(p, nm, &what) == CHUNK_MATCH;
}

bool gr_glob_match(const char *pattern, const char *name)
{
    if (!pattern || !name)
        return false;
    return gr_glob_match_n(pattern, strlen(pattern), name, strlen(name));
}

int gr_glob_match_go(const char *pattern, const char *name, bool *matched, gr_err *err)
{
    if (matched)
        *matched = false;
    if (!pattern || !name)
        return gr_err_set(err, GR_EINVAL, "glob: pattern or name is NULL");
    const char *what = "malformed";
    span p = {pattern, strlen(pattern)};
    span nm = {name, strlen(name)};
    int rc = go_match(p, nm, &what);
    if (rc == CHUNK_BAD)
        return bad_pattern(err, p.p, p.n, what);
    if (matched)
        *matched = rc == CHUNK_MATCH;
    return GR_OK;
}
