/*
 * cel_parse.c — CEL lexer, recursive-descent parser, macro expansion and
 * name resolution.
 *
 * Grammar (cel-spec langdef.md), lowest precedence first:
 *   Expr    = Or ["?" Or ":" Expr]
 *   Or      = And {"||" And}
 *   And     = Rel {"&&" Rel}
 *   Rel     = Add {("<"|"<="|">="|">"|"=="|"!="|"in") Add}
 *   Add     = Mul {("+"|"-") Mul}
 *   Mul     = Unary {("*"|"/"|"%") Unary}
 *   Unary   = Member | "!" {"!"} Member | "-" {"-"} Member
 *   Member  = Primary {"." SELECTOR ["(" [Args] ")"] | "[" Expr "]"}
 *   Primary = ["."] IDENT ["(" [Args] ")"] | "(" Expr ")" | "[" [Args] [","] "]"
 *           | "{" [MapInits] [","] "}" | ["."] SELECTOR {"." SELECTOR} "{" ... "}"
 *           | LITERAL
 * Message construction (the last Primary form) is recognised and rejected:
 * gpuready has no protobuf message types.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel_ast.h"

/* ---- tokens ---- */

enum {
    T_EOF = 0,
    T_IDENT = 256,
    T_QIDENT, /* `quoted identifier` */
    T_RESERVED,
    T_INT,
    T_UINT,
    T_DOUBLE,
    T_STRING,
    T_BYTES,
    T_TRUE,
    T_FALSE,
    T_NULL,
    T_IN,
    T_LE,
    T_GE,
    T_EQ,
    T_NE,
    T_AND,
    T_OR,
};

typedef struct tok {
    int t;
    size_t off, len; /* source span */
    size_t voff;     /* T_QIDENT: content span */
    size_t vlen;
    gr_cel_val val; /* T_STRING, T_BYTES (decoded); moved into a node when used */
} tok;

typedef struct parser {
    gr_cel_program *prog;
    const char *src;
    size_t len;
    tok *toks;
    size_t ntok, ntokcap, pos;
    unsigned depth, max_depth;
    unsigned flags;
    const char *container;
    int rc;
    size_t err_off;
    gr_err *err;
} parser;

static int perr(parser *p, int code, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int perr(parser *p, int code, size_t off, const char *fmt, ...)
{
    if (p->rc != GR_OK)
        return p->rc;
    char buf[GR_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    gr_cel_pos pos;
    cel_pos_of(p->src, p->len, off, &pos);
    p->rc = code;
    p->err_off = off;
    gr_err_set(p->err, code, "%u:%u: %s", pos.line, pos.column, buf);
    return code;
}

void cel_pos_of(const char *src, size_t len, size_t off, gr_cel_pos *pos)
{
    unsigned line = 1, col = 1;
    if (off > len)
        off = len;
    for (size_t i = 0; i < off; i++) {
        unsigned char c = (unsigned char)src[i];
        if (c == '\n') {
            line++;
            col = 1;
        } else if ((c & 0xC0) != 0x80) {
            col++;
        }
    }
    pos->offset = off;
    pos->line = line;
    pos->column = col;
}

/* ---- lexer ---- */

static bool is_ident_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static bool is_hex(int c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int hexval(int c)
{
    if (is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return c - 'A' + 10;
}

static const char *const reserved_words[] = {
    "as",  "break", "const",   "continue",  "else",   "for", "function", "if",    "import",
    "let", "loop",  "package", "namespace", "return", "var", "void",     "while", NULL,
};

static bool span_is(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* Decode a string or bytes literal starting at src[i] (the opening quote).
 * Sets *end past the closing quote. */
static int lex_string(parser *p, size_t i, bool raw, bool bytes, size_t start, size_t *end,
                      gr_cel_val *out)
{
    const char *s = p->src;
    size_t n = p->len;
    char q = s[i];
    bool triple = i + 2 < n && s[i + 1] == q && s[i + 2] == q;
    i += triple ? 3 : 1;
    gr_buf b = GR_BUF_INIT(CEL_TEXT_MAX);
    int rc = GR_OK;
    for (;;) {
        if (i >= n) {
            rc = perr(p, GR_EPARSE, start, "Syntax error: unterminated string literal");
            break;
        }
        char c = s[i];
        if (c == q && (!triple || (i + 2 < n && s[i + 1] == q && s[i + 2] == q))) {
            i += triple ? 3 : 1;
            break;
        }
        if (!triple && (c == '\n' || c == '\r')) {
            rc = perr(p, GR_EPARSE, i,
                      "Syntax error: newline in string literal (use \\n or a "
                      "triple-quoted string)");
            break;
        }
        if (c != '\\' || raw) {
            rc = gr_buf_putc(&b, c);
            i++;
            if (rc != GR_OK)
                break;
            continue;
        }
        /* escape */
        size_t esc = i;
        if (i + 1 >= n) {
            rc = perr(p, GR_EPARSE, esc, "Syntax error: unterminated escape sequence");
            break;
        }
        char e = s[i + 1];
        i += 2;
        uint32_t cp = 0;
        bool is_cp = false;
        switch (e) {
        case 'a':
            rc = gr_buf_putc(&b, '\a');
            break;
        case 'b':
            rc = gr_buf_putc(&b, '\b');
            break;
        case 'f':
            rc = gr_buf_putc(&b, '\f');
            break;
        case 'n':
            rc = gr_buf_putc(&b, '\n');
            break;
        case 'r':
            rc = gr_buf_putc(&b, '\r');
            break;
        case 't':
            rc = gr_buf_putc(&b, '\t');
            break;
        case 'v':
            rc = gr_buf_putc(&b, '\v');
            break;
        case '\\':
        case '\'':
        case '"':
        case '`':
        case '?':
            rc = gr_buf_putc(&b, e);
            break;
        case 'x':
        case 'X':
            if (i + 2 > n || !is_hex(s[i]) || !is_hex(s[i + 1])) {
                rc = perr(p, GR_EPARSE, esc, "Syntax error: \\x needs two hex digits");
                break;
            }
            cp = (uint32_t)(hexval(s[i]) * 16 + hexval(s[i + 1]));
            i += 2;
            is_cp = true;
            break;
        case 'u':
        case 'U': {
            size_t nd = e == 'u' ? 4 : 8;
            if (bytes) {
                rc = perr(p, GR_EPARSE, esc,
                          "Syntax error: \\%c escapes are not allowed in bytes literals", e);
                break;
            }
            if (i + nd > n) {
                rc = perr(p, GR_EPARSE, esc, "Syntax error: \\%c needs %zu hex digits", e, nd);
                break;
            }
            for (size_t k = 0; k < nd && rc == GR_OK; k++) {
                if (!is_hex(s[i + k]))
                    rc = perr(p, GR_EPARSE, esc, "Syntax error: \\%c needs %zu hex digits", e, nd);
                else
                    cp = cp * 16 + (uint32_t)hexval(s[i + k]);
            }
            if (rc != GR_OK)
                break;
            i += nd;
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                rc = perr(p, GR_EPARSE, esc, "Syntax error: invalid code point in \\%c escape", e);
                break;
            }
            is_cp = true;
            break;
        }
        case '0':
        case '1':
        case '2':
        case '3':
            if (i + 2 > n || s[i] < '0' || s[i] > '7' || s[i + 1] < '0' || s[i + 1] > '7') {
                rc = perr(p, GR_EPARSE, esc, "Syntax error: octal escape needs three digits");
                break;
            }
            cp = (uint32_t)((e - '0') * 64 + (s[i] - '0') * 8 + (s[i + 1] - '0'));
            i += 2;
            is_cp = true;
            break;
        default:
            rc = perr(p, GR_EPARSE, esc, "Syntax error: invalid escape sequence \\%c", e);
            break;
        }
        if (rc == GR_OK && is_cp) {
            if (bytes) {
                rc = gr_buf_putc(&b, (char)cp);
            } else {
                char u[4];
                rc = gr_buf_append(&b, u, cel_utf8_encode(cp, u));
            }
        }
        if (rc != GR_OK)
            break;
    }
    if (rc == GR_OK) {
        *out = cel_str_new(bytes ? GR_CEL_BYTES : GR_CEL_STRING, b.data ? b.data : "", b.len);
        if (cel_is_err(out)) {
            gr_cel_val_release(out);
            rc = perr(p, GR_ENOMEM, start, "out of memory");
        }
    } else if (p->rc == GR_OK) {
        rc = perr(p, rc, start, "out of memory");
    }
    gr_buf_free(&b);
    *end = i;
    return rc;
}

static int push_tok(parser *p, tok *t)
{
    if (p->ntok == p->ntokcap) {
        size_t nc = p->ntokcap ? p->ntokcap * 2 : 64;
        tok *nt = realloc(p->toks, nc * sizeof(*nt));
        if (!nt) {
            gr_cel_val_release(&t->val);
            return perr(p, GR_ENOMEM, t->off, "out of memory");
        }
        p->toks = nt;
        p->ntokcap = nc;
    }
    p->toks[p->ntok++] = *t;
    return GR_OK;
}

static int lex(parser *p)
{
    const char *s = p->src;
    size_t n = p->len, i = 0;
    for (;;) {
        /* whitespace and comments */
        while (i < n) {
            char c = s[i];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
                i++;
            } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
                while (i < n && s[i] != '\n')
                    i++;
            } else {
                break;
            }
        }
        tok t;
        memset(&t, 0, sizeof(t));
        t.off = i;
        if (i >= n) {
            t.t = T_EOF;
            return push_tok(p, &t);
        }
        char c = s[i];
        int ch = (unsigned char)c;
        if (is_digit(ch) || (c == '.' && i + 1 < n && is_digit((unsigned char)s[i + 1]))) {
            size_t j = i;
            if (c == '0' && j + 1 < n && (s[j + 1] == 'x' || s[j + 1] == 'X')) {
                j += 2;
                size_t h = j;
                while (j < n && is_hex((unsigned char)s[j]))
                    j++;
                if (j == h)
                    return perr(p, GR_EPARSE, i, "Syntax error: hex literal needs digits");
                t.t = T_INT;
                if (j < n && (s[j] == 'u' || s[j] == 'U')) {
                    t.t = T_UINT;
                    j++;
                }
            } else {
                bool dbl = false;
                while (j < n && is_digit((unsigned char)s[j]))
                    j++;
                if (j + 1 < n && s[j] == '.' && is_digit((unsigned char)s[j + 1])) {
                    dbl = true;
                    j++;
                    while (j < n && is_digit((unsigned char)s[j]))
                        j++;
                }
                if (j < n && (s[j] == 'e' || s[j] == 'E')) {
                    size_t k = j + 1;
                    if (k < n && (s[k] == '+' || s[k] == '-'))
                        k++;
                    if (k < n && is_digit((unsigned char)s[k])) {
                        while (k < n && is_digit((unsigned char)s[k]))
                            k++;
                        j = k;
                        dbl = true;
                    }
                }
                t.t = dbl ? T_DOUBLE : T_INT;
                if (!dbl && j < n && (s[j] == 'u' || s[j] == 'U')) {
                    t.t = T_UINT;
                    j++;
                }
            }
            if (j < n && (is_ident_start((unsigned char)s[j]) || is_digit((unsigned char)s[j])))
                return perr(p, GR_EPARSE, j, "Syntax error: unexpected character after number");
            t.len = j - i;
            i = j;
            if (push_tok(p, &t) != GR_OK)
                return p->rc;
            continue;
        }
        if (is_ident_start(ch)) {
            /* string prefixes r, b, rb, br (any case) */
            size_t j = i;
            bool raw = false, bytes = false;
            while (j < n && j - i < 2) {
                char d = s[j];
                if ((d == 'r' || d == 'R') && !raw)
                    raw = true;
                else if ((d == 'b' || d == 'B') && !bytes)
                    bytes = true;
                else
                    break;
                j++;
            }
            if (j > i && j < n && (s[j] == '\'' || s[j] == '"')) {
                size_t end;
                if (lex_string(p, j, raw, bytes, i, &end, &t.val) != GR_OK)
                    return p->rc;
                t.t = bytes ? T_BYTES : T_STRING;
                t.len = end - i;
                i = end;
                if (push_tok(p, &t) != GR_OK)
                    return p->rc;
                continue;
            }
            j = i;
            while (j < n && (is_ident_start((unsigned char)s[j]) || is_digit((unsigned char)s[j])))
                j++;
            t.len = j - i;
            t.t = T_IDENT;
            if (span_is(s + i, t.len, "true"))
                t.t = T_TRUE;
            else if (span_is(s + i, t.len, "false"))
                t.t = T_FALSE;
            else if (span_is(s + i, t.len, "null"))
                t.t = T_NULL;
            else if (span_is(s + i, t.len, "in"))
                t.t = T_IN;
            else
                for (int k = 0; reserved_words[k]; k++)
                    if (span_is(s + i, t.len, reserved_words[k]))
                        t.t = T_RESERVED;
            i = j;
            if (push_tok(p, &t) != GR_OK)
                return p->rc;
            continue;
        }
        if (c == '\'' || c == '"') {
            size_t end;
            if (lex_string(p, i, false, false, i, &end, &t.val) != GR_OK)
                return p->rc;
            t.t = T_STRING;
            t.len = end - i;
            i = end;
            if (push_tok(p, &t) != GR_OK)
                return p->rc;
            continue;
        }
        if (c == '`') {
            size_t j = i + 1;
            while (j < n && s[j] != '`') {
                char d = s[j];
                if (!(is_ident_start((unsigned char)d) || is_digit((unsigned char)d) || d == '.' ||
                      d == '-' || d == '/' || d == ' '))
                    return perr(p, GR_EPARSE, j,
                                "Syntax error: invalid character in quoted identifier");
                j++;
            }
            if (j >= n || j == i + 1)
                return perr(p, GR_EPARSE, i, "Syntax error: bad quoted identifier");
            t.t = T_QIDENT;
            t.voff = i + 1;
            t.vlen = j - i - 1;
            t.len = j + 1 - i;
            i = j + 1;
            if (push_tok(p, &t) != GR_OK)
                return p->rc;
            continue;
        }
        char d = i + 1 < n ? s[i + 1] : 0;
        t.len = 1;
        switch (c) {
        case '<':
            if (d == '=') {
                t.t = T_LE;
                t.len = 2;
            } else {
                t.t = '<';
            }
            break;
        case '>':
            if (d == '=') {
                t.t = T_GE;
                t.len = 2;
            } else {
                t.t = '>';
            }
            break;
        case '=':
            if (d != '=')
                return perr(p, GR_EPARSE, i, "Syntax error: unexpected '=' (use '==')");
            t.t = T_EQ;
            t.len = 2;
            break;
        case '!':
            if (d == '=') {
                t.t = T_NE;
                t.len = 2;
            } else {
                t.t = '!';
            }
            break;
        case '&':
            if (d != '&')
                return perr(p, GR_EPARSE, i, "Syntax error: unexpected '&' (use '&&')");
            t.t = T_AND;
            t.len = 2;
            break;
        case '|':
            if (d != '|')
                return perr(p, GR_EPARSE, i, "Syntax error: unexpected '|' (use '||')");
            t.t = T_OR;
            t.len = 2;
            break;
        case '(':
        case ')':
        case '[':
        case ']':
        case '{':
        case '}':
        case '.':
        case ',':
        case ':':
        case '?':
        case '+':
        case '-':
        case '*':
        case '/':
        case '%':
            t.t = c;
            break;
        default:
            return perr(p, GR_EPARSE, i, "Syntax error: unexpected character '%s%c'",
                        ch < 0x20 || ch >= 0x7f ? "\\x" : "", ch < 0x20 || ch >= 0x7f ? '?' : c);
        }
        i += t.len;
        if (push_tok(p, &t) != GR_OK)
            return p->rc;
    }
}

/* ---- nodes ---- */

static cel_node *node_new(parser *p, int op, size_t off, size_t nargs)
{
    if (p->rc != GR_OK)
        return NULL;
    cel_node *nd = calloc(1, sizeof(*nd));
    cel_node **args = nargs ? calloc(nargs, sizeof(*args)) : NULL;
    if (!nd || (nargs && !args)) {
        free(nd);
        free(args);
        perr(p, GR_ENOMEM, off, "out of memory");
        return NULL;
    }
    nd->op = (uint8_t)op;
    nd->off = off;
    nd->nargs = nargs;
    nd->args = args;
    nd->depth = 1;
    nd->all_next = p->prog->all;
    p->prog->all = nd;
    return nd;
}

static int node_set_name(parser *p, cel_node *nd, const char *s, size_t n)
{
    nd->name = malloc(n + 1);
    if (!nd->name)
        return perr(p, GR_ENOMEM, nd->off, "out of memory");
    memcpy(nd->name, s, n);
    nd->name[n] = 0;
    nd->namelen = n;
    return GR_OK;
}

/* Set child i and update the depth; NULL child means an error is pending. */
static bool node_arg(parser *p, cel_node *nd, size_t i, cel_node *child)
{
    if (!nd || !child)
        return false;
    nd->args[i] = child;
    if (child->depth + 1 > nd->depth)
        nd->depth = child->depth + 1;
    if (nd->depth > p->max_depth) {
        perr(p, GR_ETOOBIG, nd->off, "expression nested too deeply (more than %u levels)",
             p->max_depth);
        return false;
    }
    return true;
}

/* Grow an args array by one (for lists/maps/calls built incrementally). */
static bool node_push(parser *p, cel_node *nd, cel_node *child)
{
    if (!nd || !child)
        return false;
    cel_node **na = realloc(nd->args, (nd->nargs + 1) * sizeof(*na));
    if (!na) {
        perr(p, GR_ENOMEM, nd->off, "out of memory");
        return false;
    }
    nd->args = na;
    nd->nargs++;
    return node_arg(p, nd, nd->nargs - 1, child);
}

void cel_ast_free_all(gr_cel_program *prog)
{
    cel_node *nd = prog->all;
    while (nd) {
        cel_node *next = nd->all_next;
        gr_cel_val_release(&nd->cval);
        if (nd->re)
            cel_re_free(nd->re);
        free(nd->args);
        free(nd->name);
        free(nd->name2);
        free(nd);
        nd = next;
    }
    prog->all = NULL;
    prog->root = NULL;
}

/* ---- parser ---- */

static tok *cur(parser *p)
{
    return &p->toks[p->pos];
}

static tok *peek_at(parser *p, size_t k)
{
    size_t i = p->pos + k;
    return &p->toks[i < p->ntok ? i : p->ntok - 1];
}

static bool accept(parser *p, int t)
{
    if (cur(p)->t == t) {
        if (t != T_EOF)
            p->pos++;
        return true;
    }
    return false;
}

static const char *tok_desc(parser *p, const tok *t, char *buf, size_t bufsz)
{
    if (t->t == T_EOF)
        return "end of input";
    size_t n = t->len > 32 ? 32 : t->len;
    snprintf(buf, bufsz, "'%.*s'", (int)n, p->src + t->off);
    return buf;
}

static bool expect(parser *p, int t, const char *what)
{
    if (accept(p, t))
        return true;
    char buf[64];
    perr(p, GR_EPARSE, cur(p)->off, "Syntax error: expected %s, found %s", what,
         tok_desc(p, cur(p), buf, sizeof(buf)));
    return false;
}

static cel_node *parse_expr(parser *p);

static cel_node *mk_call(parser *p, int fn, size_t off, cel_node *a, cel_node *b)
{
    cel_node *nd = node_new(p, N_CALL, off, b ? 2 : 1);
    if (!nd)
        return NULL;
    nd->fn = (uint16_t)fn;
    if (!node_arg(p, nd, 0, a))
        return NULL;
    if (b && !node_arg(p, nd, 1, b))
        return NULL;
    return nd;
}

/* Function table: name, id, whether global and/or receiver style allowed. */
typedef struct fn_def {
    const char *name;
    int fn;
    unsigned char global, receiver;
    unsigned char min_args, max_args; /* including the receiver */
} fn_def;

static const fn_def fn_table[] = {
    {"size", F_SIZE, 1, 1, 1, 1},
    {"contains", F_CONTAINS, 0, 1, 2, 2},
    {"startsWith", F_STARTSWITH, 0, 1, 2, 2},
    {"endsWith", F_ENDSWITH, 0, 1, 2, 2},
    {"matches", F_MATCHES, 1, 1, 2, 2},
    {"int", F_INT, 1, 0, 1, 1},
    {"uint", F_UINT, 1, 0, 1, 1},
    {"double", F_DOUBLE, 1, 0, 1, 1},
    {"string", F_STRING, 1, 0, 1, 1},
    {"bytes", F_BYTES, 1, 0, 1, 1},
    {"bool", F_BOOL, 1, 0, 1, 1},
    {"dyn", F_DYN, 1, 0, 1, 1},
    {"type", F_TYPE, 1, 0, 1, 1},
    {"duration", F_DURATION, 1, 0, 1, 1},
    {"timestamp", F_TIMESTAMP, 1, 0, 1, 1},
    {"getFullYear", F_GETFULLYEAR, 0, 1, 1, 2},
    {"getMonth", F_GETMONTH, 0, 1, 1, 2},
    {"getDayOfYear", F_GETDAYOFYEAR, 0, 1, 1, 2},
    {"getDayOfMonth", F_GETDAYOFMONTH, 0, 1, 1, 2},
    {"getDate", F_GETDATE, 0, 1, 1, 2},
    {"getDayOfWeek", F_GETDAYOFWEEK, 0, 1, 1, 2},
    {"getHours", F_GETHOURS, 0, 1, 1, 2},
    {"getMinutes", F_GETMINUTES, 0, 1, 1, 2},
    {"getSeconds", F_GETSECONDS, 0, 1, 1, 2},
    {"getMilliseconds", F_GETMILLISECONDS, 0, 1, 1, 2},
    {"charAt", F_CHARAT, 0, 1, 2, 2},
    {"indexOf", F_INDEXOF, 0, 1, 2, 3},
    {"lastIndexOf", F_LASTINDEXOF, 0, 1, 2, 3},
    {"lowerAscii", F_LOWERASCII, 0, 1, 1, 1},
    {"upperAscii", F_UPPERASCII, 0, 1, 1, 1},
    {"replace", F_REPLACE, 0, 1, 3, 4},
    {"split", F_SPLIT, 0, 1, 2, 3},
    {"substring", F_SUBSTRING, 0, 1, 2, 3},
    {"trim", F_TRIM, 0, 1, 1, 1},
    {"join", F_JOIN, 0, 1, 1, 2},
    /* extension libraries (docs/cel.md) */
    {"reverse", F_REVERSE, 0, 1, 1, 1},
    {"strings.quote", F_QUOTE, 1, 0, 1, 1},
    {"format", F_FORMAT, 0, 1, 2, 2},
    {"isSorted", F_ISSORTED, 0, 1, 1, 1},
    {"sum", F_SUM, 0, 1, 1, 1},
    {"min", F_MIN, 0, 1, 1, 1},
    {"max", F_MAX, 0, 1, 1, 1},
    {"slice", F_SLICE, 0, 1, 3, 3},
    {"flatten", F_FLATTEN, 0, 1, 1, 2},
    {"sort", F_SORT, 0, 1, 1, 1},
    {"distinct", F_DISTINCT, 0, 1, 1, 1},
    {"lists.range", F_LISTS_RANGE, 1, 0, 1, 1},
    {"find", F_FIND, 0, 1, 2, 2},
    {"findAll", F_FINDALL, 0, 1, 2, 3},
    {"sets.contains", F_SETS_CONTAINS, 1, 0, 2, 2},
    {"sets.equivalent", F_SETS_EQUIVALENT, 1, 0, 2, 2},
    {"sets.intersects", F_SETS_INTERSECTS, 1, 0, 2, 2},
    {"math.greatest", F_MATH_GREATEST, 1, 0, 1, 255},
    {"math.least", F_MATH_LEAST, 1, 0, 1, 255},
    {"math.ceil", F_MATH_CEIL, 1, 0, 1, 1},
    {"math.floor", F_MATH_FLOOR, 1, 0, 1, 1},
    {"math.round", F_MATH_ROUND, 1, 0, 1, 1},
    {"math.trunc", F_MATH_TRUNC, 1, 0, 1, 1},
    {"math.abs", F_MATH_ABS, 1, 0, 1, 1},
    {"math.sign", F_MATH_SIGN, 1, 0, 1, 1},
    {"math.isInf", F_MATH_ISINF, 1, 0, 1, 1},
    {"math.isNaN", F_MATH_ISNAN, 1, 0, 1, 1},
    {"math.isFinite", F_MATH_ISFINITE, 1, 0, 1, 1},
    {"math.sqrt", F_MATH_SQRT, 1, 0, 1, 1},
    {"math.bitAnd", F_MATH_BITAND, 1, 0, 2, 2},
    {"math.bitOr", F_MATH_BITOR, 1, 0, 2, 2},
    {"math.bitXor", F_MATH_BITXOR, 1, 0, 2, 2},
    {"math.bitNot", F_MATH_BITNOT, 1, 0, 1, 1},
    {"math.bitShiftLeft", F_MATH_BITSHL, 1, 0, 2, 2},
    {"math.bitShiftRight", F_MATH_BITSHR, 1, 0, 2, 2},
    {"quantity", F_QUANTITY, 1, 0, 1, 1},
    {"isQuantity", F_ISQUANTITY, 1, 0, 1, 1},
    {"sign", F_QSIGN, 0, 1, 1, 1},
    {"isInteger", F_QISINTEGER, 0, 1, 1, 1},
    {"asInteger", F_QASINTEGER, 0, 1, 1, 1},
    {"asApproximateFloat", F_QASFLOAT, 0, 1, 1, 1},
    {"add", F_QADD, 0, 1, 2, 2},
    {"sub", F_QSUB, 0, 1, 2, 2},
    {"compareTo", F_COMPARETO, 0, 1, 2, 2},
    {"isGreaterThan", F_ISGREATERTHAN, 0, 1, 2, 2},
    {"isLessThan", F_ISLESSTHAN, 0, 1, 2, 2},
    {"ip", F_IP, 1, 1, 1, 1},
    {"isIP", F_ISIP, 1, 0, 1, 1},
    {"ip.isCanonical", F_IP_ISCANONICAL, 1, 0, 1, 1},
    {"family", F_IP_FAMILY, 0, 1, 1, 1},
    {"isUnspecified", F_IP_ISUNSPECIFIED, 0, 1, 1, 1},
    {"isLoopback", F_IP_ISLOOPBACK, 0, 1, 1, 1},
    {"isLinkLocalMulticast", F_IP_ISLLM, 0, 1, 1, 1},
    {"isLinkLocalUnicast", F_IP_ISLLU, 0, 1, 1, 1},
    {"isGlobalUnicast", F_IP_ISGLOBAL, 0, 1, 1, 1},
    {"cidr", F_CIDR, 1, 0, 1, 1},
    {"isCIDR", F_ISCIDR, 1, 0, 1, 1},
    {"containsIP", F_CIDR_CONTAINSIP, 0, 1, 2, 2},
    {"containsCIDR", F_CIDR_CONTAINSCIDR, 0, 1, 2, 2},
    {"prefixLength", F_CIDR_PREFIXLEN, 0, 1, 1, 1},
    {"masked", F_CIDR_MASKED, 0, 1, 1, 1},
    {"semver", F_SEMVER, 1, 0, 1, 2},
    {"isSemver", F_ISSEMVER, 1, 0, 1, 2},
    {"major", F_SEMVER_MAJOR, 0, 1, 1, 1},
    {"minor", F_SEMVER_MINOR, 0, 1, 1, 1},
    {"patch", F_SEMVER_PATCH, 0, 1, 1, 1},
    {"optional.of", F_OPT_OF, 1, 0, 1, 1},
    {"optional.none", F_OPT_NONE, 1, 0, 0, 0},
    {"optional.ofNonZeroValue", F_OPT_OFNONZERO, 1, 0, 1, 1},
    {"hasValue", F_OPT_HASVALUE, 0, 1, 1, 1},
    {"value", F_OPT_VALUE, 0, 1, 1, 1},
    {"orValue", F_OPT_ORVALUE, 0, 1, 2, 2},
    {"or", F_OPT_OR, 0, 1, 2, 2},
    {"base64.encode", F_B64_ENCODE, 1, 0, 1, 1},
    {"base64.decode", F_B64_DECODE, 1, 0, 1, 1},
    {"format.named", F_FORMAT_NAMED, 1, 0, 1, 1},
    {"format.dns1123Label", F_FORMAT_CONST, 1, 0, 0, 0},
    {"format.dns1123Subdomain", F_FORMAT_CONST, 1, 0, 0, 0},
    {"format.dns1035Label", F_FORMAT_CONST, 1, 0, 0, 0},
    {"format.qualifiedName", F_FORMAT_CONST, 1, 0, 0, 0},
    {"format.dns1123LabelPrefix", F_FORMAT_CONST, 1, 0, 0, 0},
    {"format.dns1123SubdomainPrefix", F_FORMAT_CONST, 1, 0, 0, 0},
    {"format.dns1035LabelPrefix", F_FORMAT_CONST, 1, 0, 0, 0},
    {"format.labelValue", F_FORMAT_CONST, 1, 0, 0, 0},
    {"format.uri", F_FORMAT_CONST, 1, 0, 0, 0},
    {"format.uuid", F_FORMAT_CONST, 1, 0, 0, 0},
    {"format.byte", F_FORMAT_CONST, 1, 0, 0, 0},
    {"format.date", F_FORMAT_CONST, 1, 0, 0, 0},
    {"format.datetime", F_FORMAT_CONST, 1, 0, 0, 0},
    {"validate", F_FORMAT_VALIDATE, 0, 1, 2, 2},
    {"url", F_URL, 1, 0, 1, 1},
    {"isURL", F_ISURL, 1, 0, 1, 1},
    {"getScheme", F_URL_SCHEME, 0, 1, 1, 1},
    {"getHost", F_URL_HOST, 0, 1, 1, 1},
    {"getHostname", F_URL_HOSTNAME, 0, 1, 1, 1},
    {"getPort", F_URL_PORT, 0, 1, 1, 1},
    {"getEscapedPath", F_URL_PATH, 0, 1, 1, 1},
    {"getQuery", F_URL_QUERY, 0, 1, 1, 1},
    {NULL, 0, 0, 0, 0, 0},
};

static int lookup_fn(const char *name, size_t n, bool receiver, size_t nargs)
{
    for (const fn_def *f = fn_table; f->name; f++) {
        if (!span_is(name, n, f->name))
            continue;
        if ((receiver && !f->receiver) || (!receiver && !f->global))
            continue;
        if (nargs < f->min_args || nargs > f->max_args)
            continue;
        return f->fn;
    }
    return F_UNBOUND;
}

static bool is_simple_ident(const cel_node *nd)
{
    return nd && nd->op == N_IDENT && !(nd->flags & NF_ROOTDOT);
}

/* Finish a call: expand macros or resolve the function. `args` holds the
 * receiver first when receiver is set. */
static cel_node *finish_call(parser *p, const char *name, size_t nlen, size_t off, bool receiver,
                             cel_node *call)
{
    if (!call)
        return NULL;
    size_t na = call->nargs;
    /* macros */
    if (!receiver && span_is(name, nlen, "has") && na == 1) {
        cel_node *a = call->args[0];
        if (a->op != N_SELECT || (a->flags & NF_TEST_ONLY)) {
            perr(p, GR_EPARSE, a->off, "invalid argument to has() macro (use has(x.field))");
            return NULL;
        }
        a->flags |= NF_TEST_ONLY;
        return a;
    }
    if (receiver) {
        int cm = -1;
        if (na == 3 && span_is(name, nlen, "all"))
            cm = CM_ALL;
        else if (na == 3 && span_is(name, nlen, "exists"))
            cm = CM_EXISTS;
        else if (na == 3 && span_is(name, nlen, "exists_one"))
            cm = CM_EXISTS_ONE;
        else if ((na == 3 || na == 4) && span_is(name, nlen, "map"))
            cm = CM_MAP;
        else if (na == 3 && span_is(name, nlen, "filter"))
            cm = CM_FILTER;
        else if (na == 3 && span_is(name, nlen, "optMap"))
            cm = CM_OPTMAP;
        else if (na == 3 && span_is(name, nlen, "optFlatMap"))
            cm = CM_OPTFLATMAP;
        /* cel.bind(x, init, body) */
        if (cm < 0 && na == 4 && span_is(name, nlen, "bind") && is_simple_ident(call->args[0]) &&
            strcmp(call->args[0]->name, "cel") == 0)
            cm = CM_BIND;
        /* two-variable comprehensions: all(i, v, p), exists(i, v, p),
         * existsOne(i, v, p), transformList(i, v, [filter,] t),
         * transformMap(k, v, [filter,] t) */
        if (cm < 0 && na == 4 && span_is(name, nlen, "all"))
            cm = CM_ALL2;
        else if (cm < 0 && na == 4 && span_is(name, nlen, "exists"))
            cm = CM_EXISTS2;
        else if (cm < 0 && na == 4 &&
                 (span_is(name, nlen, "existsOne") || span_is(name, nlen, "exists_one")))
            cm = CM_EXISTS_ONE2;
        else if (cm < 0 && (na == 4 || na == 5) && span_is(name, nlen, "transformList"))
            cm = CM_TLIST;
        else if (cm < 0 && (na == 4 || na == 5) && span_is(name, nlen, "transformMap"))
            cm = CM_TMAP;
        else if (cm < 0 && (na == 4 || na == 5) && span_is(name, nlen, "transformMapEntry"))
            cm = CM_TMAPENTRY;
        if (cm == CM_BIND || (cm >= CM_ALL2 && cm <= CM_TMAPENTRY)) {
            bool bind = cm == CM_BIND;
            cel_node *v1 = call->args[1], *v2 = bind ? NULL : call->args[2];
            if (!is_simple_ident(v1) || strchr(v1->name, '.') ||
                (v2 && (!is_simple_ident(v2) || strchr(v2->name, '.')))) {
                bool bad1 = !is_simple_ident(v1) || strchr(v1->name, '.');
                perr(p, GR_EPARSE, bad1 || !v2 ? v1->off : v2->off,
                     "argument must be a simple name");
                return NULL;
            }
            if (v2 && strcmp(v1->name, v2->name) == 0) {
                perr(p, GR_EPARSE, v2->off, "duplicate variable name: %s", v2->name);
                return NULL;
            }
            size_t first = bind ? 2 : 3; /* first non-variable argument */
            cel_node *c = node_new(p, N_COMP, off, bind ? 2 : 1 + (na - first));
            if (!c)
                return NULL;
            c->fn = (uint16_t)cm;
            if (node_set_name(p, c, v1->name, v1->namelen) != GR_OK)
                return NULL;
            if (v2) {
                c->name2 = strdup(v2->name);
                if (!c->name2) {
                    perr(p, GR_ENOMEM, off, "out of memory");
                    return NULL;
                }
            }
            if (bind) {
                if (!node_arg(p, c, 0, call->args[2]) || !node_arg(p, c, 1, call->args[3]))
                    return NULL;
                return c;
            }
            if (!node_arg(p, c, 0, call->args[0]))
                return NULL;
            for (size_t i = first; i < na; i++)
                if (!node_arg(p, c, i - first + 1, call->args[i]))
                    return NULL;
            return c;
        }
        if (cm >= 0) {
            cel_node *v = call->args[1];
            if (!is_simple_ident(v) || strchr(v->name, '.')) {
                perr(p, GR_EPARSE, v->off, "argument must be a simple name");
                return NULL;
            }
            cel_node *c = node_new(p, N_COMP, off, na - 1);
            if (!c)
                return NULL;
            c->fn = (uint16_t)cm;
            if (node_set_name(p, c, v->name, v->namelen) != GR_OK)
                return NULL;
            if (!node_arg(p, c, 0, call->args[0]))
                return NULL;
            for (size_t i = 2; i < na; i++)
                if (!node_arg(p, c, i - 1, call->args[i]))
                    return NULL;
            return c;
        }
    }
    if (receiver && is_simple_ident(call->args[0])) {
        /* `math.greatest(1, 2)` parses as a receiver call on `math`: a
         * namespaced global function when one has that qualified name. */
        const cel_node *ns = call->args[0];
        char qn[64];
        int ql = snprintf(qn, sizeof(qn), "%s.%.*s", ns->name, (int)nlen, name);
        if (ql > 0 && (size_t)ql < sizeof(qn) && lookup_fn(qn, (size_t)ql, false, na - 1)) {
            cel_node *g = node_new(p, N_CALL, ns->off, 0);
            if (!g)
                return NULL;
            for (size_t i = 1; i < na; i++)
                if (!node_push(p, g, call->args[i]))
                    return NULL;
            return finish_call(p, qn, (size_t)ql, ns->off, false, g);
        }
    }
    call->fn = (uint16_t)lookup_fn(name, nlen, receiver, na);
    if (receiver)
        call->flags |= NF_RECEIVER;
    if (node_set_name(p, call, name, nlen) != GR_OK)
        return NULL;
    if (call->fn == F_UNBOUND && !(p->flags & GR_CEL_ALLOW_UNDECLARED)) {
        perr(p, GR_EINVAL, off,
             "undeclared reference to '%.*s' (no %s function with %zu "
             "argument%s)",
             (int)nlen, name, receiver ? "receiver-style" : "global", na - (receiver ? 1 : 0),
             na - (receiver ? 1 : 0) == 1 ? "" : "s");
        return NULL;
    }
    if ((call->fn == F_MATCHES || call->fn == F_FIND || call->fn == F_FINDALL) &&
        call->args[1]->op == N_CONST && call->args[1]->cval.kind == GR_CEL_STRING) {
        size_t plen;
        const char *pat = cel_sv(&call->args[1]->cval, &plen);
        char msg[200];
        call->re = cel_re_compile(pat, plen, msg, sizeof(msg));
        if (!call->re) {
            perr(p, GR_EINVAL, call->args[1]->off, "invalid regular expression: %s", msg);
            return NULL;
        }
    }
    return call;
}

/* Argument list after '(' up to ')'; appends to call. */
static bool parse_args(parser *p, cel_node *call, int close)
{
    if (accept(p, close))
        return true;
    for (;;) {
        if (!node_push(p, call, parse_expr(p)))
            return false;
        if (accept(p, ','))
            continue;
        return expect(p, close, close == ')' ? "',' or ')'" : "',' or ']'");
    }
}

static int64_t parse_int_text(parser *p, const tok *t, bool neg, bool *ok)
{
    const char *s = p->src + t->off;
    size_t n = t->len;
    bool hex = n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    uint64_t v = 0;
    *ok = true;
    for (size_t i = hex ? 2 : 0; i < n; i++) {
        char c = s[i];
        if (c == 'u' || c == 'U')
            break;
        unsigned d = (unsigned)hexval((unsigned char)c);
        unsigned base = hex ? 16 : 10;
        if (v > (UINT64_MAX - d) / base) {
            *ok = false;
            return 0;
        }
        v = v * base + d;
    }
    if (t->t == T_UINT)
        return (int64_t)v;
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1) {
            *ok = false;
            return 0;
        }
        return v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    }
    if (v > INT64_MAX) {
        *ok = false;
        return 0;
    }
    return (int64_t)v;
}

static cel_node *parse_literal_num(parser *p, bool neg)
{
    tok *t = cur(p);
    cel_node *nd = node_new(p, N_CONST, t->off, 0);
    if (!nd)
        return NULL;
    if (t->t == T_DOUBLE) {
        char buf[400];
        size_t n = t->len < sizeof(buf) - 2 ? t->len : sizeof(buf) - 2;
        buf[0] = '-';
        memcpy(buf + 1, p->src + t->off, n);
        buf[n + 1] = 0;
        errno = 0;
        double d = strtod(neg ? buf : buf + 1, NULL);
        nd->cval = gr_cel_val_double(d);
    } else {
        bool ok;
        int64_t v = parse_int_text(p, t, neg, &ok);
        if (!ok) {
            perr(p, GR_EPARSE, t->off, "invalid %s literal: out of range",
                 t->t == T_UINT ? "uint" : "int");
            return NULL;
        }
        nd->cval = t->t == T_UINT ? gr_cel_val_uint((uint64_t)v) : gr_cel_val_int(v);
    }
    p->pos++;
    return nd;
}

/* Field and method names: identifiers, including the reserved words (the
 * grammar lexes them as IDENTIFIER), but not the keywords `true`, `false`,
 * `null` and `in`, which are tokens of their own (cel-go rejects `x.null`). */
static bool is_field_tok(int t)
{
    return t == T_IDENT || t == T_RESERVED;
}

/* Message construction: the current token is the first identifier `t` of a
 * qualified name spanning k more tokens, then '{'. */
static cel_node *parse_struct(parser *p, const tok *t, bool rootdot, size_t k)
{
    gr_buf nb = GR_BUF_INIT(1024);
    int rc = gr_buf_puts(&nb, rootdot ? "." : "");
    if (rc == GR_OK)
        rc = gr_buf_append(&nb, p->src + t->off, t->len);
    for (size_t i = 0; i < k && rc == GR_OK; i += 2) {
        const tok *id = peek_at(p, i + 1);
        rc = gr_buf_putc(&nb, '.');
        if (rc == GR_OK)
            rc = gr_buf_append(&nb, p->src + id->off, id->len);
    }
    p->pos += k + 1; /* the name and '{' */
    cel_node *st = node_new(p, N_STRUCT, t->off, 0);
    if (rc != GR_OK || !st || node_set_name(p, st, gr_buf_cstr(&nb), nb.len) != GR_OK) {
        gr_buf_free(&nb);
        if (rc != GR_OK)
            perr(p, rc, t->off, "type name too long");
        return NULL;
    }
    gr_buf_free(&nb);
    if (accept(p, '}'))
        return st;
    for (;;) {
        bool opt = accept(p, '?');
        tok *f = cur(p);
        char buf[64];
        if (!is_field_tok(f->t)) {
            perr(p, GR_EPARSE, f->off, "Syntax error: expected a field name, found %s",
                 tok_desc(p, f, buf, sizeof(buf)));
            return NULL;
        }
        for (size_t i = 0; i < st->nargs; i += 2) {
            size_t ln;
            const char *s = cel_sv(&st->args[i]->cval, &ln);
            if (ln == f->len && memcmp(s, p->src + f->off, ln) == 0) {
                perr(p, GR_EPARSE, f->off, "field '%.*s' is set twice", (int)ln, s);
                return NULL;
            }
        }
        cel_node *fn = node_new(p, N_CONST, f->off, 0);
        if (!fn)
            return NULL;
        fn->cval = cel_str_new(GR_CEL_STRING, p->src + f->off, f->len);
        if (opt)
            fn->flags |= NF_OPT_ENTRY;
        if (cel_is_err(&fn->cval)) {
            perr(p, GR_ENOMEM, f->off, "out of memory");
            return NULL;
        }
        p->pos++;
        if (!expect(p, ':', "':'") || !node_push(p, st, fn) || !node_push(p, st, parse_expr(p)))
            return NULL;
        if (accept(p, ',')) {
            if (accept(p, '}'))
                return st;
            continue;
        }
        return expect(p, '}', "',' or '}'") ? st : NULL;
    }
}

static cel_node *parse_primary(parser *p, bool neg_literal)
{
    tok *t = cur(p);
    size_t off = t->off;
    char buf[64];
    switch (t->t) {
    case T_INT:
    case T_DOUBLE:
        return parse_literal_num(p, neg_literal);
    case T_UINT:
        return parse_literal_num(p, false);
    case T_STRING:
    case T_BYTES: {
        cel_node *nd = node_new(p, N_CONST, off, 0);
        if (!nd)
            return NULL;
        nd->cval = t->val;
        memset(&t->val, 0, sizeof(t->val));
        p->pos++;
        return nd;
    }
    case T_TRUE:
    case T_FALSE:
    case T_NULL: {
        cel_node *nd = node_new(p, N_CONST, off, 0);
        if (!nd)
            return NULL;
        nd->cval = t->t == T_NULL ? gr_cel_val_null() : gr_cel_val_bool(t->t == T_TRUE);
        p->pos++;
        return nd;
    }
    case '(': {
        p->pos++;
        cel_node *e = parse_expr(p);
        if (!e || !expect(p, ')', "')'"))
            return NULL;
        return e;
    }
    case '[': {
        p->pos++;
        cel_node *nd = node_new(p, N_LIST, off, 0);
        if (!nd)
            return NULL;
        if (accept(p, ']'))
            return nd;
        for (;;) {
            bool opt = accept(p, '?');
            if (!node_push(p, nd, parse_expr(p)))
                return NULL;
            if (opt)
                nd->args[nd->nargs - 1]->flags |= NF_OPT_ENTRY;
            if (accept(p, ',')) {
                if (accept(p, ']'))
                    return nd;
                continue;
            }
            return expect(p, ']', "',' or ']'") ? nd : NULL;
        }
    }
    case '{': {
        p->pos++;
        cel_node *nd = node_new(p, N_MAP, off, 0);
        if (!nd)
            return NULL;
        if (accept(p, '}'))
            return nd;
        for (;;) {
            bool opt = accept(p, '?');
            if (!node_push(p, nd, parse_expr(p)))
                return NULL;
            if (opt)
                nd->args[nd->nargs - 1]->flags |= NF_OPT_ENTRY;
            if (!expect(p, ':', "':'"))
                return NULL;
            if (!node_push(p, nd, parse_expr(p)))
                return NULL;
            if (accept(p, ',')) {
                if (accept(p, '}'))
                    return nd;
                continue;
            }
            return expect(p, '}', "',' or '}'") ? nd : NULL;
        }
    }
    case '.':
    case T_IDENT: {
        bool rootdot = false;
        if (t->t == '.') {
            rootdot = true;
            p->pos++;
            t = cur(p);
            if (t->t != T_IDENT) {
                perr(p, GR_EPARSE, t->off,
                     "Syntax error: expected an identifier after '.', "
                     "found %s",
                     tok_desc(p, t, buf, sizeof(buf)));
                return NULL;
            }
        }
        const char *name = p->src + t->off;
        size_t nlen = t->len;
        p->pos++;
        if (cur(p)->t == '(') {
            p->pos++;
            cel_node *call = node_new(p, N_CALL, t->off, 0);
            if (!call || !parse_args(p, call, ')'))
                return NULL;
            return finish_call(p, name, nlen, t->off, false, call);
        }
        /* message construction: Name{...} or a.b.Name{...} */
        size_t k = 0;
        while (peek_at(p, k)->t == '.' && peek_at(p, k + 1)->t == T_IDENT)
            k += 2;
        if (peek_at(p, k)->t == '{')
            return parse_struct(p, t, rootdot, k);
        cel_node *nd = node_new(p, N_IDENT, t->off, 0);
        if (!nd || node_set_name(p, nd, name, nlen) != GR_OK)
            return NULL;
        if (rootdot)
            nd->flags |= NF_ROOTDOT;
        return nd;
    }
    case T_RESERVED:
        perr(p, GR_EPARSE, off, "Syntax error: reserved identifier %s",
             tok_desc(p, t, buf, sizeof(buf)));
        return NULL;
    default:
        perr(p, GR_EPARSE, off, "Syntax error: unexpected %s", tok_desc(p, t, buf, sizeof(buf)));
        return NULL;
    }
}

static cel_node *parse_member(parser *p, bool neg_literal)
{
    cel_node *e = parse_primary(p, neg_literal);
    while (e) {
        tok *t = cur(p);
        if (t->t == '.') {
            p->pos++;
            bool opt = accept(p, '?');
            tok *f = cur(p);
            const char *name;
            size_t nlen;
            if (is_field_tok(f->t)) {
                name = p->src + f->off;
                nlen = f->len;
            } else if (f->t == T_QIDENT) {
                name = p->src + f->voff;
                nlen = f->vlen;
            } else {
                char buf[64];
                perr(p, GR_EPARSE, f->off,
                     "Syntax error: expected a field name after '.', "
                     "found %s",
                     tok_desc(p, f, buf, sizeof(buf)));
                return NULL;
            }
            p->pos++;
            if (!opt && f->t != T_QIDENT && cur(p)->t == '(') {
                p->pos++;
                cel_node *call = node_new(p, N_CALL, f->off, 0);
                if (!node_push(p, call, e) || !parse_args(p, call, ')'))
                    return NULL;
                e = finish_call(p, name, nlen, f->off, true, call);
                continue;
            }
            cel_node *s = node_new(p, N_SELECT, t->off, 1);
            if (!node_arg(p, s, 0, e) || node_set_name(p, s, name, nlen) != GR_OK)
                return NULL;
            if (opt)
                s->flags |= NF_OPTIONAL;
            e = s;
        } else if (t->t == '[') {
            p->pos++;
            bool opt = accept(p, '?');
            cel_node *ix = node_new(p, N_INDEX, t->off, 2);
            if (ix && opt)
                ix->flags |= NF_OPTIONAL;
            if (!node_arg(p, ix, 0, e) || !node_arg(p, ix, 1, parse_expr(p)) ||
                !expect(p, ']', "']'"))
                return NULL;
            e = ix;
        } else {
            break;
        }
    }
    return e;
}

/* A member, or a negative number literal: the grammar's literal carries an
 * optional sign (`!-1` is `!` applied to the literal -1). */
static cel_node *parse_member_signed(parser *p)
{
    int nt = peek_at(p, 1)->t;
    if (cur(p)->t == '-' && (nt == T_INT || nt == T_DOUBLE)) {
        p->pos++;
        return parse_member(p, true);
    }
    return parse_member(p, false);
}

static cel_node *parse_unary(parser *p)
{
    tok *t = cur(p);
    if (t->t == '!' || t->t == '-') {
        int op = t->t;
        size_t count = 0;
        size_t offs0 = t->off;
        while (cur(p)->t == op) {
            count++;
            p->pos++;
        }
        /* As cel-go, cel-cpp and cel-es do, an even run of `!` or `-` is
         * elided and an odd run applies the operator once: `!!x` is `x`,
         * `--5` is 5, `---x` is `-x`. A single remaining `-` before a number
         * folds into the literal (`-9223372036854775808` is in range). */
        if (op == '!') {
            cel_node *e = parse_member_signed(p);
            if (count % 2 == 1 && e)
                e = mk_call(p, F_NOT, offs0 + count - 1, e, NULL);
            return e;
        }
        if (count % 2 == 0)
            return parse_member(p, false);
        bool fold = cur(p)->t == T_INT || cur(p)->t == T_DOUBLE;
        cel_node *e = parse_member(p, fold);
        if (!fold && e)
            e = mk_call(p, F_NEG, offs0 + count - 1, e, NULL);
        return e;
    }
    return parse_member(p, false);
}

static cel_node *parse_mul(parser *p)
{
    cel_node *e = parse_unary(p);
    while (e) {
        int t = cur(p)->t;
        int fn = t == '*' ? F_MUL : t == '/' ? F_DIV : t == '%' ? F_MOD : -1;
        if (fn < 0)
            break;
        size_t off = cur(p)->off;
        p->pos++;
        e = mk_call(p, fn, off, e, parse_unary(p));
    }
    return e;
}

static cel_node *parse_add(parser *p)
{
    cel_node *e = parse_mul(p);
    while (e) {
        int t = cur(p)->t;
        int fn = t == '+' ? F_ADD : t == '-' ? F_SUB : -1;
        if (fn < 0)
            break;
        size_t off = cur(p)->off;
        p->pos++;
        e = mk_call(p, fn, off, e, parse_mul(p));
    }
    return e;
}

static cel_node *parse_rel(parser *p)
{
    cel_node *e = parse_add(p);
    while (e) {
        int t = cur(p)->t, fn;
        switch (t) {
        case '<':
            fn = F_LT;
            break;
        case T_LE:
            fn = F_LE;
            break;
        case '>':
            fn = F_GT;
            break;
        case T_GE:
            fn = F_GE;
            break;
        case T_EQ:
            fn = F_EQ;
            break;
        case T_NE:
            fn = F_NE;
            break;
        case T_IN:
            fn = F_IN;
            break;
        default:
            return e;
        }
        size_t off = cur(p)->off;
        p->pos++;
        e = mk_call(p, fn, off, e, parse_add(p));
    }
    return e;
}

static cel_node *mk_logic(parser *p, int op, size_t off, cel_node *a, cel_node *b)
{
    cel_node *nd = node_new(p, op, off, 2);
    if (!node_arg(p, nd, 0, a) || !node_arg(p, nd, 1, b))
        return NULL;
    return nd;
}

static cel_node *parse_and(parser *p)
{
    cel_node *e = parse_rel(p);
    while (e && cur(p)->t == T_AND) {
        size_t off = cur(p)->off;
        p->pos++;
        e = mk_logic(p, N_AND, off, e, parse_rel(p));
    }
    return e;
}

static cel_node *parse_or(parser *p)
{
    cel_node *e = parse_and(p);
    while (e && cur(p)->t == T_OR) {
        size_t off = cur(p)->off;
        p->pos++;
        e = mk_logic(p, N_OR, off, e, parse_and(p));
    }
    return e;
}

static cel_node *parse_expr(parser *p)
{
    if (++p->depth > p->max_depth) {
        perr(p, GR_ETOOBIG, cur(p)->off, "expression nested too deeply (more than %u levels)",
             p->max_depth);
        return NULL;
    }
    cel_node *e = parse_or(p);
    if (e && cur(p)->t == '?') {
        size_t off = cur(p)->off;
        p->pos++;
        cel_node *a = parse_or(p);
        if (!a || !expect(p, ':', "':'")) {
            p->depth--;
            return NULL;
        }
        cel_node *b = parse_expr(p);
        cel_node *c = node_new(p, N_COND, off, 3);
        if (!node_arg(p, c, 0, e) || !node_arg(p, c, 1, a) || !node_arg(p, c, 2, b))
            e = NULL;
        else
            e = c;
    }
    p->depth--;
    return e;
}

/* ---- resolution ---- */

typedef struct scope {
    const char *name;
    int slot;
    const struct scope *up;
} scope;

static const struct {
    const char *name;
    int kind;
} type_names[] = {
    {"bool", GR_CEL_BOOL},
    {"int", GR_CEL_INT},
    {"uint", GR_CEL_UINT},
    {"double", GR_CEL_DOUBLE},
    {"string", GR_CEL_STRING},
    {"bytes", GR_CEL_BYTES},
    {"list", GR_CEL_LIST},
    {"map", GR_CEL_MAP},
    {"null_type", GR_CEL_NULL},
    {"type", GR_CEL_TYPE},
    {"google.protobuf.Duration", GR_CEL_DURATION},
    {"google.protobuf.Timestamp", GR_CEL_TIMESTAMP},
};

static const scope *find_local(const scope *sc, const char *name)
{
    for (; sc; sc = sc->up)
        if (strcmp(sc->name, name) == 0)
            return sc;
    return NULL;
}

static int find_decl(const gr_cel_program *prog, const char *name, size_t n)
{
    for (size_t i = 0; i < prog->ndecls; i++)
        if (span_is(name, n, prog->decls[i].name))
            return (int)i;
    return -1;
}

/* Declared variable for `name` under the container: a.b.name, a.name, name. */
static int find_decl_c(parser *p, const char *name, size_t n)
{
    const char *c = p->container;
    size_t cl = c ? strlen(c) : 0;
    while (cl > 0) {
        gr_buf b = GR_BUF_INIT(CEL_TEXT_MAX);
        int d = -1;
        if (gr_buf_append(&b, c, cl) == GR_OK && gr_buf_putc(&b, '.') == GR_OK &&
            gr_buf_append(&b, name, n) == GR_OK)
            d = find_decl(p->prog, gr_buf_cstr(&b), b.len);
        gr_buf_free(&b);
        if (d >= 0)
            return d;
        while (cl > 0 && c[cl - 1] != '.')
            cl--;
        if (cl > 0)
            cl--;
    }
    return find_decl(p->prog, name, n);
}

static const char *const wkt_names[] = {
    [WKT_BOOL] = "google.protobuf.BoolValue",
    [WKT_BYTES] = "google.protobuf.BytesValue",
    [WKT_DOUBLE] = "google.protobuf.DoubleValue",
    [WKT_FLOAT] = "google.protobuf.FloatValue",
    [WKT_INT32] = "google.protobuf.Int32Value",
    [WKT_INT64] = "google.protobuf.Int64Value",
    [WKT_STRING] = "google.protobuf.StringValue",
    [WKT_UINT32] = "google.protobuf.UInt32Value",
    [WKT_UINT64] = "google.protobuf.UInt64Value",
    [WKT_VALUE] = "google.protobuf.Value",
    [WKT_STRUCT] = "google.protobuf.Struct",
    [WKT_LIST] = "google.protobuf.ListValue",
    [WKT_DURATION] = "google.protobuf.Duration",
    [WKT_TIMESTAMP] = "google.protobuf.Timestamp",
    [WKT_ANY] = "google.protobuf.Any",
};

static void resolve_struct(parser *p, cel_node *nd)
{
    const char *name = nd->name;
    bool abs = name[0] == '.';
    if (abs)
        name++;
    /* A well-known type under the container's candidates (longest first:
     * with container "a.b", `X` may name a.b.X, a.X or X). */
    const char *c = abs ? NULL : p->container;
    size_t cl = c ? strlen(c) : 0, nl = strlen(name);
    for (;;) {
        for (int w = WKT_BOOL; w <= WKT_ANY; w++) {
            const char *wn = wkt_names[w];
            size_t wl = strlen(wn);
            bool hit = cl == 0 ? strcmp(name, wn) == 0
                               : wl == cl + 1 + nl && memcmp(wn, c, cl) == 0 && wn[cl] == '.' &&
                                     memcmp(wn + cl + 1, name, nl) == 0;
            if (hit) {
                nd->fn = (uint16_t)w;
                return;
            }
        }
        if (cl == 0)
            break;
        while (cl > 0 && c[cl - 1] != '.')
            cl--;
        if (cl > 0)
            cl--;
    }
    nd->fn = WKT_NONE;
    gr_buf b = GR_BUF_INIT(CEL_TEXT_MAX);
    int rc = GR_OK;
    if (!abs && p->container && p->container[0]) {
        rc = gr_buf_puts(&b, p->container);
        if (rc == GR_OK)
            rc = gr_buf_putc(&b, '.');
    }
    if (rc == GR_OK)
        rc = gr_buf_puts(&b, name);
    if (rc != GR_OK) {
        gr_buf_free(&b);
        perr(p, rc, nd->off, "out of memory");
        return;
    }
    free(nd->name);
    nd->namelen = b.len;
    nd->name = gr_buf_steal(&b, NULL);
    if (!nd->name)
        perr(p, GR_ENOMEM, nd->off, "out of memory");
}

static int find_type(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
        if (span_is(name, n, type_names[i].name))
            return type_names[i].kind;
    return -1;
}

/* The dotted name of a select chain rooted at an identifier, into b; the
 * root identifier in *root. false if the chain is not a plain name. */
static bool chain_name(const cel_node *nd, gr_buf *b, const cel_node **root)
{
    if (nd->op == N_IDENT) {
        *root = nd;
        return gr_buf_append(b, nd->name, nd->namelen) == GR_OK;
    }
    if (nd->op != N_SELECT || (nd->flags & NF_TEST_ONLY))
        return false;
    if (!chain_name(nd->args[0], b, root))
        return false;
    return gr_buf_putc(b, '.') == GR_OK && gr_buf_append(b, nd->name, nd->namelen) == GR_OK;
}

/* Turn nd into a resolved reference to `name` (declared variable, type or
 * undeclared). Returns false when nothing matched and `must` is false. */
static bool bind_name(parser *p, cel_node *nd, const char *name, size_t n, bool must, bool abs)
{
    /* A root-scoped name (`.y`) ignores the container. */
    int d = abs ? find_decl(p->prog, name, n) : find_decl_c(p, name, n);
    if (d >= 0) {
        nd->op = N_VAR;
        nd->slot = d;
        nd->nargs = 0;
        return true;
    }
    int k = find_type(name, n);
    if (k >= 0) {
        nd->op = N_CONST;
        nd->cval = cel_type_val(k);
        nd->nargs = 0;
        return true;
    }
    if (!must)
        return false;
    if (!(p->flags & GR_CEL_ALLOW_UNDECLARED)) {
        perr(p, GR_EINVAL, nd->off, "undeclared reference to '%.*s'", (int)n, name);
        return false;
    }
    char *copy = malloc(n + 1);
    if (!copy) {
        perr(p, GR_ENOMEM, nd->off, "out of memory");
        return false;
    }
    memcpy(copy, name, n);
    copy[n] = 0;
    free(nd->name);
    nd->name = copy;
    nd->namelen = n;
    nd->op = N_UNDECL;
    nd->nargs = 0;
    return true;
}

static void resolve(parser *p, cel_node *nd, const scope *sc)
{
    if (p->rc != GR_OK)
        return;
    switch (nd->op) {
    case N_IDENT: {
        const scope *l = (nd->flags & NF_ROOTDOT) ? NULL : find_local(sc, nd->name);
        if (l) {
            nd->op = N_LOCAL;
            nd->slot = l->slot;
            return;
        }
        bind_name(p, nd, nd->name, nd->namelen, true, (nd->flags & NF_ROOTDOT) != 0);
        return;
    }
    case N_SELECT:
        if (!(nd->flags & NF_TEST_ONLY)) {
            gr_buf b = GR_BUF_INIT(CEL_TEXT_MAX);
            const cel_node *root = NULL;
            if (chain_name(nd, &b, &root) && root &&
                ((root->flags & NF_ROOTDOT) || !find_local(sc, root->name)) &&
                bind_name(p, nd, gr_buf_cstr(&b), b.len, false, (root->flags & NF_ROOTDOT) != 0)) {
                gr_buf_free(&b);
                return;
            }
            gr_buf_free(&b);
        }
        resolve(p, nd->args[0], sc);
        return;
    case N_STRUCT:
        resolve_struct(p, nd);
        for (size_t i = 1; i < nd->nargs; i += 2)
            resolve(p, nd->args[i], sc);
        return;
    case N_COMP: {
        resolve(p, nd->args[0], sc);
        scope s = {nd->name, p->prog->nlocals++, sc};
        nd->slot = s.slot;
        scope s2 = {nd->name2, 0, &s};
        if (nd->name2) {
            s2.slot = p->prog->nlocals++;
            nd->slot2 = s2.slot;
        }
        for (size_t i = 1; i < nd->nargs; i++)
            resolve(p, nd->args[i], nd->name2 ? &s2 : &s);
        return;
    }
    default:
        for (size_t i = 0; i < nd->nargs; i++)
            resolve(p, nd->args[i], sc);
        return;
    }
}

int cel_parse(gr_cel_program *prog, const gr_cel_options *opts, gr_cel_pos *pos, gr_err *err)
{
    parser p;
    memset(&p, 0, sizeof(p));
    p.prog = prog;
    p.src = prog->src;
    p.len = prog->len;
    p.err = err;
    p.max_depth = opts->max_depth;
    p.flags = opts->flags;
    p.container = opts->container;
    size_t valid = cel_utf8_valid_prefix(p.src, p.len);
    if (valid != p.len)
        perr(&p, GR_EPARSE, valid, "Syntax error: expression is not valid UTF-8");
    if (p.rc == GR_OK && lex(&p) == GR_OK) {
        cel_node *root = parse_expr(&p);
        if (root && p.rc == GR_OK && cur(&p)->t != T_EOF) {
            char buf[64];
            perr(&p, GR_EPARSE, cur(&p)->off, "Syntax error: unexpected %s",
                 tok_desc(&p, cur(&p), buf, sizeof(buf)));
        }
        if (root && p.rc == GR_OK)
            resolve(&p, root, NULL);
        if (p.rc == GR_OK)
            prog->root = root;
    }
    for (size_t i = 0; i < p.ntok; i++)
        gr_cel_val_release(&p.toks[i].val);
    free(p.toks);
    if (p.rc != GR_OK && pos)
        cel_pos_of(p.src, p.len, p.err_off, pos);
    return p.rc;
}
