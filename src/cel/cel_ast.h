/*
 * cel_ast.h — the parsed and resolved expression tree (internal).
 *
 * The parser (cel_parse.c) builds the tree, expands macros, resolves
 * identifiers to variable/local slots and functions to ids; the evaluator
 * (cel_eval.c) walks it. Nodes are owned by the program: every node is on
 * the program's allocation list and freed by cel_ast_free_all().
 */
#ifndef GR_CEL_AST_H
#define GR_CEL_AST_H

#include "cel_int.h"

typedef enum cel_op {
    N_CONST,  /* cval */
    N_IDENT,  /* name (only before resolution) */
    N_VAR,    /* slot = declared variable index */
    N_LOCAL,  /* slot = comprehension variable slot */
    N_UNDECL, /* name: evaluation error "undeclared reference" */
    N_SELECT, /* args[0].name; flags & NF_TEST_ONLY for has() */
    N_INDEX,  /* args[0][args[1]] */
    N_CALL,   /* fn(args...), receiver first when NF_RECEIVER */
    N_LIST,   /* [args...] */
    N_MAP,    /* {args[0]: args[1], ...} */
    N_AND,    /* args[0] && args[1] */
    N_OR,     /* args[0] || args[1] */
    N_COND,   /* args[0] ? args[1] : args[2] */
    N_COMP,   /* comprehension macro: fn = CM_*, slot = iteration variable */
    N_STRUCT, /* name{args[0]: args[1], ...}: args[2i] are string constants (field
                 names); fn = WKT_* for google.protobuf well-known types */
} cel_op;

/* google.protobuf well-known types built with message syntax. */
enum {
    WKT_NONE = 0, /* any other name: a GR_CEL_OBJECT */
    WKT_BOOL,
    WKT_BYTES,
    WKT_DOUBLE,
    WKT_FLOAT,
    WKT_INT32,
    WKT_INT64,
    WKT_STRING,
    WKT_UINT32,
    WKT_UINT64,
    WKT_VALUE,
    WKT_STRUCT,
    WKT_LIST,
    WKT_DURATION,
    WKT_TIMESTAMP,
    WKT_ANY,
};

enum {
    NF_TEST_ONLY = 1,  /* has(a.b) */
    NF_RECEIVER = 2,   /* a.f(x) */
    NF_ROOTDOT = 4,    /* .a (root-scoped identifier) */
    NF_OPTIONAL = 8,   /* a.?b, a[?b] */
    NF_OPT_ENTRY = 16, /* [?x], {?k: v}, Msg{?f: v}: on the element, key or field node */
};

/* Comprehension macros (N_COMP fn). args: [range, body] or, for the
 * three-argument map, [range, filter, transform]. The two-variable forms
 * (cel-go ext comprehensions; name/slot = index or key, name2/slot2 =
 * value) take [range, body] or [range, filter, transform]. CM_BIND is
 * cel.bind(name, init, body): args [init, body]. */
enum {
    CM_ALL,
    CM_EXISTS,
    CM_EXISTS_ONE,
    CM_MAP,
    CM_FILTER,
    CM_ALL2,
    CM_EXISTS2,
    CM_EXISTS_ONE2,
    CM_TLIST,
    CM_TMAP,
    CM_TMAPENTRY, /* transformMapEntry(k, v, [filter,] {k2: v2}) */
    CM_BIND,
    CM_OPTMAP, /* opt.optMap(x, e), opt.optFlatMap(x, e): args [opt, e] */
    CM_OPTFLATMAP
};

typedef enum cel_fn {
    F_UNBOUND = 0, /* name: "unbound function" at evaluation */
    F_ADD,
    F_SUB,
    F_MUL,
    F_DIV,
    F_MOD,
    F_NEG,
    F_NOT,
    F_EQ,
    F_NE,
    F_LT,
    F_LE,
    F_GT,
    F_GE,
    F_IN,
    F_SIZE,
    F_CONTAINS,
    F_STARTSWITH,
    F_ENDSWITH,
    F_MATCHES,
    F_INT,
    F_UINT,
    F_DOUBLE,
    F_STRING,
    F_BYTES,
    F_BOOL,
    F_DYN,
    F_TYPE,
    F_DURATION,
    F_TIMESTAMP,
    F_GETFULLYEAR,
    F_GETMONTH,
    F_GETDAYOFYEAR,
    F_GETDAYOFMONTH,
    F_GETDATE,
    F_GETDAYOFWEEK,
    F_GETHOURS,
    F_GETMINUTES,
    F_GETSECONDS,
    F_GETMILLISECONDS,
    F_CHARAT,
    F_INDEXOF,
    F_LASTINDEXOF,
    F_LOWERASCII,
    F_UPPERASCII,
    F_REPLACE,
    F_SPLIT,
    F_SUBSTRING,
    F_TRIM,
    F_JOIN,
    /* extension libraries (cel_lib.c) from here on */
    F_LIB_FIRST_,
    F_REVERSE = F_LIB_FIRST_, /* strings v3 / lists v2 */
    F_QUOTE,                  /* strings.quote */
    F_FORMAT,                 /* string.format(list) */
    F_ISSORTED,               /* Kubernetes lists */
    F_SUM,
    F_MIN,
    F_MAX,
    F_SLICE, /* cel-go ext lists */
    F_FLATTEN,
    F_SORT,
    F_DISTINCT,
    F_LISTS_RANGE,
    F_FIND, /* Kubernetes regex */
    F_FINDALL,
    F_SETS_CONTAINS, /* cel-go ext sets */
    F_SETS_EQUIVALENT,
    F_SETS_INTERSECTS,
    F_MATH_GREATEST, /* cel-go ext math */
    F_MATH_LEAST,
    F_MATH_CEIL,
    F_MATH_FLOOR,
    F_MATH_ROUND,
    F_MATH_TRUNC,
    F_MATH_ABS,
    F_MATH_SIGN,
    F_MATH_ISINF,
    F_MATH_ISNAN,
    F_MATH_ISFINITE,
    F_MATH_SQRT,
    F_MATH_BITAND,
    F_MATH_BITOR,
    F_MATH_BITXOR,
    F_MATH_BITNOT,
    F_MATH_BITSHL,
    F_MATH_BITSHR,
    F_QUANTITY, /* Kubernetes quantity */
    F_ISQUANTITY,
    F_QSIGN,
    F_QISINTEGER,
    F_QASINTEGER,
    F_QASFLOAT,
    F_QADD,
    F_QSUB,
    F_COMPARETO, /* quantity, semver */
    F_ISGREATERTHAN,
    F_ISLESSTHAN,
    F_IP, /* Kubernetes IP and CIDR */
    F_ISIP,
    F_IP_ISCANONICAL,
    F_IP_FAMILY,
    F_IP_ISUNSPECIFIED,
    F_IP_ISLOOPBACK,
    F_IP_ISLLM,
    F_IP_ISLLU,
    F_IP_ISGLOBAL,
    F_CIDR,
    F_ISCIDR,
    F_CIDR_CONTAINSIP,
    F_CIDR_CONTAINSCIDR,
    F_CIDR_PREFIXLEN,
    F_CIDR_MASKED,
    F_SEMVER, /* Kubernetes semver */
    F_ISSEMVER,
    F_SEMVER_MAJOR,
    F_SEMVER_MINOR,
    F_SEMVER_PATCH,
    F_URL, /* Kubernetes URLs */
    F_ISURL,
    F_URL_SCHEME,
    F_URL_HOST,
    F_URL_HOSTNAME,
    F_URL_PORT,
    F_URL_PATH,
    F_URL_QUERY,
    F_OPT_OF, /* optional types */
    F_OPT_NONE,
    F_OPT_OFNONZERO,
    F_OPT_HASVALUE,
    F_OPT_VALUE,
    F_OPT_ORVALUE,
    F_OPT_OR,
    F_FORMAT_NAMED, /* Kubernetes format library */
    F_FORMAT_CONST,
    F_FORMAT_VALIDATE,
    F_B64_ENCODE, /* cel-go encoders */
    F_B64_DECODE,
    F_COUNT_
} cel_fn;

typedef struct cel_node {
    struct cel_node *all_next; /* program allocation list */
    uint8_t op;                /* cel_op */
    uint8_t flags;             /* NF_* */
    uint16_t fn;               /* cel_fn or CM_* */
    unsigned depth;            /* 1 + deepest child */
    size_t off;                /* byte offset in the source */
    size_t nargs;
    struct cel_node **args;
    char *name; /* NUL-terminated copy; identifiers, fields, function names */
    size_t namelen;
    int slot;
    char *name2; /* two-variable comprehensions: the value variable */
    int slot2;
    gr_cel_val cval; /* N_CONST */
    void *re;        /* pcre2_code for matches() with a constant pattern */
} cel_node;

struct gr_cel_program {
    cel_node *root;
    cel_node *all; /* every node, for freeing */
    char *src;
    size_t len;
    gr_cel_decl *decls; /* names owned */
    size_t ndecls;
    int nlocals;
    uint64_t max_cost;
};

/* Evaluation context (cel_eval.c). */
typedef struct ectx {
    const gr_cel_program *prog;
    const gr_cel_val *vars;
    gr_cel_val *locals;
    uint64_t cost, max_cost;
    bool over;
} ectx;

/* cel_eval.c, for the libraries: charge cost units (true = budget exceeded),
 * the cost-exceeded and no-overload errors, and string(x). */
bool cel_charge(ectx *c, uint64_t units);
bool cel_charge_bytes(ectx *c, size_t n);
gr_cel_val cel_cost_err(ectx *c, const cel_node *n);
gr_cel_val cel_no_overload(const cel_node *n, const gr_cel_val *a, size_t na);
gr_cel_val cel_conv_string(const cel_node *n, const gr_cel_val *a);

/* cel_lib.c: optional values (an object of type "optional_type" with zero
 * or one field). cel_opt_get: 1 = optional.of(*inner: new reference),
 * 0 = optional.none(), -1 = not an optional. */
gr_cel_val cel_opt_of(const cel_node *n, const gr_cel_val *v);
gr_cel_val cel_opt_none(const cel_node *n);
int cel_opt_get(const gr_cel_val *v, gr_cel_val *inner);

/* cel_lib.c: the extension libraries (functions with ids >= F_LIB_FIRST_,
 * and indexOf/lastIndexOf on lists). Arguments are borrowed. */
gr_cel_val cel_lib_call(ectx *c, const cel_node *n, gr_cel_val *a, size_t na);

/* Position of a byte offset (1-based line, column in code points). */
void cel_pos_of(const char *src, size_t len, size_t off, gr_cel_pos *pos);

/* cel_parse.c: parse and resolve into p (root, all, nlocals). */
int cel_parse(gr_cel_program *p, const gr_cel_options *opts, gr_cel_pos *pos, gr_err *err);
void cel_ast_free_all(gr_cel_program *p);

/* cel_eval.c: compile a regular expression (RE2-like options); NULL and a
 * message on error. */
void *cel_re_compile(const char *pat, size_t len, char *msg, size_t msgsz);
void cel_re_free(void *re);

#endif
