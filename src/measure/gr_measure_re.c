/*
 * gr_measure_re.c — Go RE2 syntax on PCRE2: refuse what RE2 refuses, then
 * compile with JIT. See gr_measure.h.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gr_measure.h"

struct gr_measure_re {
    pcre2_code *code;
    pcre2_match_data *md;
    uint32_t ngroups;
    int jit; /* JIT compiled: pcre2_jit_match (skips the interpreter's checks) */
};

static int refuse(gr_err *err, size_t at, const char *what, const char *fix)
{
    return gr_err_set(err, GR_EINVAL, "offset %zu: %s is not supported in Go RE2 syntax; %s", at,
                      what, fix);
}

/* Parse {n}, {n,}, {n,m} at p[i] == '{'. Returns the length consumed, 0 when
 * it is not a repetition (RE2 then reads '{' as a literal), -1 past 1000. */
static long repeat_len(const char *p, size_t len, size_t i, long *max_count)
{
    size_t j = i + 1;
    long a = 0, b = -1;
    size_t d0 = j;
    while (j < len && p[j] >= '0' && p[j] <= '9') {
        a = a * 10 + (p[j] - '0');
        if (a > 100000) {
            a = 100000;
        }
        j++;
    }
    if (j == d0) {
        return 0;
    }
    if (j < len && p[j] == ',') {
        j++;
        size_t d1 = j;
        b = 0;
        while (j < len && p[j] >= '0' && p[j] <= '9') {
            b = b * 10 + (p[j] - '0');
            if (b > 100000) {
                b = 100000;
            }
            j++;
        }
        if (j == d1) {
            b = -1;
        }
    } else {
        b = a;
    }
    if (j >= len || p[j] != '}') {
        return 0;
    }
    *max_count = a > b ? a : b;
    return (long)(j - i + 1);
}

/* Escapes outside and inside classes. Returns GR_OK or an error. */
static int check_escape(const char *p, size_t len, size_t i, int in_class, gr_err *err)
{
    if (i + 1 >= len) {
        return gr_err_set(err, GR_EINVAL, "offset %zu: trailing backslash at end of expression", i);
    }
    char c = p[i + 1];
    if (c >= '1' && c <= '7' && i + 3 < len && p[i + 2] >= '0' && p[i + 2] <= '7' &&
        p[i + 3] >= '0' && p[i + 3] <= '7') {
        return GR_OK; /* \101: a three-digit octal escape (RE2 and PCRE2 agree) */
    }
    if (c >= '1' && c <= '7' && i + 2 < len && p[i + 2] >= '0' && p[i + 2] <= '7') {
        return refuse(err, i, "a two-digit octal escape (\\12)",
                      "write it as \\x{..} (PCRE2 may read it as a backreference)");
    }
    if (c >= '1' && c <= '9') {
        return refuse(err, i, "a backreference (\\1 … \\9)",
                      "RE2 has no backreferences: capture both parts and compare them elsewhere");
    }
    switch (c) {
    case 'k':
    case 'g':
        return refuse(err, i, "a backreference (\\k, \\g)", "RE2 has no backreferences");
    case 'C':
        return refuse(err, i, "\\C (single byte)", "use . or an explicit byte class");
    case 'K':
    case 'G':
    case 'R':
    case 'X':
    case 'Z':
    case 'h':
    case 'H':
    case 'V':
    case 'N':
    case 'o':
    case 'c':
    case 'e':
    case 'u':
    case 'U':
    case 'l':
    case 'L':
        return refuse(err, i, "this escape",
                      "use an RE2 escape (\\d \\s \\w \\b \\A \\z \\x{..} \\pN)");
    case 'b':
    case 'B':
    case 'A':
    case 'z':
        if (in_class) {
            return gr_err_set(err, GR_EINVAL,
                              "offset %zu: invalid escape sequence \\%c inside a character class",
                              i, c);
        }
        return GR_OK;
    default:
        break;
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        static const char ok[] = "dDsSwWpPQEtnrfvax0";
        if (!strchr(ok, c)) {
            return refuse(err, i, "this escape", "see the RE2 syntax reference");
        }
    }
    return GR_OK;
}

/* The RE2 check: one pass over the pattern. */
static int re2_check(const char *p, size_t len, gr_err *err)
{
    int in_class = 0;
    int after_quant = 0; /* the previous token was a repetition */
    int in_quote = 0;    /* \Q … \E */
    for (size_t i = 0; i < len; i++) {
        char c = p[i];
        if (c == '\0') {
            return gr_err_set(err, GR_EINVAL, "offset %zu: NUL byte in the expression", i);
        }
        if (in_quote) {
            if (c == '\\' && i + 1 < len && p[i + 1] == 'E') {
                in_quote = 0;
                i++;
            }
            after_quant = 0;
            continue;
        }
        if (in_class) {
            if (c == '\\') {
                int rc = check_escape(p, len, i, 1, err);
                if (rc != GR_OK) {
                    return rc;
                }
                i++;
            } else if (c == '[' && i + 1 < len && p[i + 1] == ':') {
                const char *close = NULL;
                for (size_t j = i + 2; j + 1 < len; j++) {
                    if (p[j] == ':' && p[j + 1] == ']') {
                        close = p + j;
                        break;
                    }
                }
                if (close) {
                    i = (size_t)(close - p) + 1;
                }
            } else if (c == ']') {
                in_class = 0;
            }
            continue;
        }
        switch (c) {
        case '\\':
            if (i + 1 < len && p[i + 1] == 'Q') {
                in_quote = 1;
                i++;
                after_quant = 0;
                continue;
            }
            {
                int rc = check_escape(p, len, i, 0, err);
                if (rc != GR_OK) {
                    return rc;
                }
            }
            i++;
            after_quant = 0;
            continue;
        case '[':
            in_class = 1;
            if (i + 1 < len && p[i + 1] == '^') {
                i++;
            }
            if (i + 1 < len && p[i + 1] == ']') {
                i++; /* a leading ] is literal */
            }
            after_quant = 0;
            continue;
        case '*':
        case '+':
        case '?':
            if (after_quant) {
                /* a lazy marker right after a repetition is fine */
                if (c == '?' && after_quant == 1) {
                    after_quant = 2;
                    continue;
                }
                if (c == '+') {
                    return refuse(err, i, "a possessive repetition (a++, a*+, a?+)",
                                  "drop the trailing +");
                }
                return gr_err_set(err, GR_EINVAL,
                                  "offset %zu: invalid nested repetition operator: %c%c", i,
                                  p[i - 1], c);
            }
            after_quant = 1;
            continue;
        case '{': {
            long maxc = 0;
            long n = repeat_len(p, len, i, &maxc);
            if (n > 0) {
                if (maxc > GR_MEASURE_REPEAT_MAX) {
                    return gr_err_set(err, GR_EINVAL,
                                      "offset %zu: invalid repeat count: RE2 allows at most %d", i,
                                      GR_MEASURE_REPEAT_MAX);
                }
                if (after_quant) {
                    return gr_err_set(err, GR_EINVAL,
                                      "offset %zu: invalid nested repetition operator", i);
                }
                i += (size_t)n - 1;
                after_quant = 1;
                continue;
            }
            after_quant = 0;
            continue;
        }
        case '(':
            after_quant = 0;
            if (i + 1 < len && p[i + 1] == '*') {
                return refuse(err, i, "a verb (*…)", "remove it");
            }
            if (i + 1 >= len || p[i + 1] != '?') {
                continue;
            }
            if (i + 2 >= len) {
                return gr_err_set(err, GR_EINVAL, "offset %zu: missing closing )", i);
            }
            switch (p[i + 2]) {
            case ':':
                i += 2;
                continue;
            case '=':
            case '!':
                return refuse(err, i, "lookahead (?=…) / (?!…)",
                              "match the text itself, or check it with a second pattern");
            case '>':
                return refuse(err, i, "an atomic group (?>…)", "use a plain group (?:…)");
            case '|':
                return refuse(err, i, "a branch reset group (?|…)", "use (?:…)");
            case '#':
                return refuse(err, i, "a comment (?#…)", "remove it");
            case '(':
                return refuse(err, i, "a conditional (?(…)…)", "use alternation");
            case 'R':
            case '&':
            case '+':
            case '-':
            case '0':
            case '1':
            case '2':
            case '3':
            case '4':
            case '5':
            case '6':
            case '7':
            case '8':
            case '9':
                if (p[i + 2] == '-' && i + 3 < len && !(p[i + 3] >= '0' && p[i + 3] <= '9')) {
                    break; /* (?-i) flags, checked below */
                }
                return refuse(err, i, "recursion or a subroutine call", "RE2 has no recursion");
            case 'C':
                return refuse(err, i, "a callout (?C…)", "remove it");
            case '\'':
                return refuse(err, i, "a named group (?'name'…)", "write (?P<name>…)");
            case 'P':
                if (i + 3 < len && p[i + 3] == '<') {
                    i += 3;
                    continue;
                }
                return refuse(err, i, "(?P=name) / (?P>name)", "RE2 has no backreferences");
            case '<':
                if (i + 3 < len && (p[i + 3] == '=' || p[i + 3] == '!')) {
                    return refuse(err, i, "lookbehind (?<=…) / (?<!…)",
                                  "match the text itself, or check it with a second pattern");
                }
                i += 2;
                continue;
            default:
                break;
            }
            /* flags: (?flags) or (?flags:…), flags in imsU, optional '-' */
            {
                size_t j = i + 2;
                int neg = 0;
                for (; j < len && p[j] != ')' && p[j] != ':'; j++) {
                    char f = p[j];
                    if (f == '-' && !neg) {
                        neg = 1;
                        continue;
                    }
                    if (f != 'i' && f != 'm' && f != 's' && f != 'U') {
                        return gr_err_set(err, GR_EINVAL,
                                          "offset %zu: invalid or unsupported Perl syntax: (?%c; "
                                          "RE2 flags are i, m, s and U",
                                          i, f);
                    }
                }
                if (j >= len) {
                    return gr_err_set(err, GR_EINVAL, "offset %zu: missing closing )", i);
                }
                i = j; /* ')' ends the flag group; ':' opens the group body */
                continue;
            }
        default:
            after_quant = 0;
            continue;
        }
    }
    if (in_class) {
        return gr_err_set(err, GR_EINVAL, "missing closing ]");
    }
    return GR_OK;
}

int gr_measure_re_compile(const char *pattern, size_t len, gr_measure_re **out, gr_err *err)
{
    *out = NULL;
    if (len == 0) {
        return gr_err_set(err, GR_EINVAL,
                          "empty regex; write a pattern such as "
                          "'step (?P<step>\\d+)'");
    }
    if (len > GR_MEASURE_REGEX_MAX) {
        return gr_err_set(err, GR_ETOOBIG, "regex is %zu bytes; at most %u are allowed", len,
                          GR_MEASURE_REGEX_MAX);
    }
    int rc = re2_check(pattern, len, err);
    if (rc != GR_OK) {
        return rc;
    }
    int ecode = 0;
    PCRE2_SIZE eoff = 0;
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    if (!cc) {
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    pcre2_set_max_pattern_length(cc, GR_MEASURE_REGEX_MAX);
    pcre2_set_parens_nest_limit(cc, 250);
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)pattern, len,
                                     PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY,
                                     &ecode, &eoff, cc);
    pcre2_compile_context_free(cc);
    if (!code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ecode, msg, sizeof msg);
        return gr_err_set(err, GR_EINVAL, "offset %zu: %s", (size_t)eoff, (const char *)msg);
    }
    uint32_t ng = 0;
    pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &ng);
    if (ng + 1 > GR_MEASURE_RE_GROUPS_MAX) {
        pcre2_code_free(code);
        return gr_err_set(err, GR_ETOOBIG, "%u capture groups; at most %d are allowed", ng,
                          GR_MEASURE_RE_GROUPS_MAX - 1);
    }
    int jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0; /* else the interpreter */
    gr_measure_re *re = calloc(1, sizeof *re);
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(code, NULL);
    if (!re || !md) {
        free(re);
        pcre2_match_data_free(md);
        pcre2_code_free(code);
        return gr_err_set(err, GR_ENOMEM, "out of memory");
    }
    re->code = code;
    re->md = md;
    re->ngroups = ng;
    re->jit = jit;
    *out = re;
    return GR_OK;
}

void gr_measure_re_free(gr_measure_re *re)
{
    if (!re) {
        return;
    }
    pcre2_match_data_free(re->md);
    pcre2_code_free(re->code);
    free(re);
}

int gr_measure_re_group(const gr_measure_re *re, const char *name)
{
    int n = pcre2_substring_number_from_name(re->code, (PCRE2_SPTR)name);
    return n > 0 ? n : -1;
}

int gr_measure_re_match(gr_measure_re *re, const char *s, size_t len, gr_measure_match *m)
{
    int rc = re->jit ? pcre2_jit_match(re->code, (PCRE2_SPTR)s, len, 0, 0, re->md, NULL)
                     : pcre2_match(re->code, (PCRE2_SPTR)s, len, 0, 0, re->md, NULL);
    if (rc == PCRE2_ERROR_NOMATCH) {
        return 0;
    }
    if (rc < 0) {
        /* match limits: treat as no match rather than failing the poll */
        return rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ? 0 : GR_EINVAL;
    }
    if (m) {
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(re->md);
        m->ngroups = re->ngroups + 1;
        for (size_t g = 0; g < m->ngroups; g++) {
            if (g < (size_t)rc && ov[2 * g] != PCRE2_UNSET) {
                m->start[g] = ov[2 * g];
                m->end[g] = ov[2 * g + 1];
            } else {
                m->start[g] = m->end[g] = SIZE_MAX;
            }
        }
    }
    return 1;
}
